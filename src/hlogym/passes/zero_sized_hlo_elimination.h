// ZeroSizedHloElimination: array instructions with no elements become
// empty constants.
#ifndef HLOGYM_PASSES_ZERO_SIZED_HLO_ELIMINATION_H_
#define HLOGYM_PASSES_ZERO_SIZED_HLO_ELIMINATION_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// Replaces every side-effect-free, static, zero-element array instruction
// other than constants and parameters (and without control edges) by an
// empty constant of its shape.
class ZeroSizedHloElimination : public Pass {
 public:
  std::string_view name() const override {
    return "zero-sized-hlo-elimination";
  }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_ZERO_SIZED_HLO_ELIMINATION_H_
