// HloCSE: merges identical constants and identical instructions.
#ifndef HLOGYM_PASSES_HLO_CSE_H_
#define HLOGYM_PASSES_HLO_CSE_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// Per computation (fusion bodies included): identical constants first, then
// a post-order walk that replaces each instruction equal to an earlier one
// (same opcode, shape, operands — in either order for commutative ops —,
// attributes and structurally equal called computations) by that one.
// Parameters, side-effecting instructions, instructions with control
// edges and zero-operand instructions other than iota, replica-id and
// partition-id are left alone. Get-tuple-elements of a multi-output
// fusion's repeated output (one value listed at several positions of its
// root tuple) read the first position instead, so that their users merge.
//
// A computation where a run found nothing is marked (kPassMemoCse); later
// runs pass it by while it and everything it calls are unchanged, since
// the pass reads nothing else there. A decision loop runs CSE after every
// round, and most fused computations come through a round unchanged.
class HloCse : public Pass {
 public:
  std::string_view name() const override { return "hlo-cse"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  // Computations passed by because of a memo, over this object's runs.
  int64_t computations_skipped() const { return computations_skipped_; }

 private:
  int64_t computations_skipped_ = 0;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_HLO_CSE_H_
