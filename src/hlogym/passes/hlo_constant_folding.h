// HloConstantFolding: evaluates instructions whose operands are constants.
#ifndef HLOGYM_PASSES_HLO_CONSTANT_FOLDING_H_
#define HLOGYM_PASSES_HLO_CONSTANT_FOLDING_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// Post-order over non-fusion computations: an instruction with at least
// one constant operand, whose operands are all constants, broadcasts of
// constants, iotas or tuples of those, is evaluated by the reference
// interpreter (while loops inside may not iterate) and replaced by a
// constant. Never folded: parameters, constants, tuples, broadcasts, iotas,
// fft, while loops, async and collective ops, custom calls, anything
// containing rng or after-all, side-effecting instructions, instructions
// with control edges, pad(broadcast, constant), and arrays where the result
// or the operands together exceed kMaxElements elements.
class HloConstantFolding : public Pass {
 public:
  static constexpr int64_t kMaxElements = 45'000'000;

  std::string_view name() const override { return "hlo-constant-folding"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_HLO_CONSTANT_FOLDING_H_
