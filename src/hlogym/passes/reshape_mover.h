// ReshapeMover, after XLA's pass of the same name (checklist section 6).
//
// "Rearrange" = reshape or transpose. An elementwise instruction whose
// operands are equivalent non-trivial rearranges (same opcode, dimensions
// and operand dimensions) or operands that are trivially rearranged
// (constants, single-use rng, broadcasts of scalars with sorted dimensions
// and, with reshape_of_1d_broadcast_is_cheap, broadcasts of rank <= 1 or
// whose dimensions survive the reshape; for transposes, broadcasts whose
// dimensions stay sorted) is computed before the rearrange instead:
//   op(reshape(a), reshape(b)) -> reshape(op(a, b)).
// Candidates whose rearrange operands also feed non-candidates are dropped
// (iteratively), so that the rearranges disappear.
#ifndef HLOGYM_PASSES_RESHAPE_MOVER_H_
#define HLOGYM_PASSES_RESHAPE_MOVER_H_

#include <string>
#include <string_view>
#include <vector>

#include "hlogym/passes/pass.h"

namespace hlogym {

struct ReshapeMoverOptions {
  bool reshape_of_1d_broadcast_is_cheap = false;
};

class ReshapeMover : public Pass {
 public:
  explicit ReshapeMover(ReshapeMoverOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "reshape-mover"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

 private:
  ReshapeMoverOptions options_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_RESHAPE_MOVER_H_
