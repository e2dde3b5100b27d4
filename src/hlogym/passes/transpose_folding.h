// TransposeFolding, after XLA's pass of the same name with the GPU dot rule
// (checklist section 6).
//
// dot(transpose(a), b) -> dot(a, b) with the lhs batch and contracting
// dimension numbers mapped through the permutation (likewise for the rhs),
// when both dot operands have rank >= 2, the transpose is not the identity
// and, as on GPU, the non-contracting dimensions keep their order and the
// batch, contracting and non-contracting dimensions of `a` still form a
// valid GEMM matrix layout (each group physically contiguous and in order,
// the batch group not the most minor). Sparse dots are left alone.
// Convolutions absorb transposed inputs and kernels into their dimension
// numbers (as in the pre-layout run; `fold_convolutions` turns it off).
#ifndef HLOGYM_PASSES_TRANSPOSE_FOLDING_H_
#define HLOGYM_PASSES_TRANSPOSE_FOLDING_H_

#include <string>
#include <string_view>
#include <vector>

#include "hlogym/passes/pass.h"

namespace hlogym {

struct TransposeFoldingOptions {
  bool fold_convolutions = true;
};

class TransposeFolding : public Pass {
 public:
  explicit TransposeFolding(TransposeFoldingOptions options = {})
      : options_(options) {}
  std::string_view name() const override { return "transpose-folding"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

 private:
  TransposeFoldingOptions options_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_TRANSPOSE_FOLDING_H_
