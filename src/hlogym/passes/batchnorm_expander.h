// BatchNormExpander, after XLA's pass of the same name with the training,
// inference and grad rewrites all on.
//
// batch-norm-training -> (scale * (x - E[x]) * rsqrt(Var[x] + eps) + offset,
//                         E[x], Var[x]) with Var[x] = E[x^2] - E[x]^2;
// batch-norm-inference -> x * s + (offset - mean * s), s = scale *
//                         rsqrt(var + eps);
// batch-norm-grad -> XLA's formulas for the activation, scale and offset
//                    gradients.
// Means divide sums (reduce over every dimension but the feature one) by
// the element count per feature. Static shapes of floating types only.
#ifndef HLOGYM_PASSES_BATCHNORM_EXPANDER_H_
#define HLOGYM_PASSES_BATCHNORM_EXPANDER_H_

#include <string_view>

#include "hlogym/passes/pass.h"

namespace hlogym {

class BatchNormExpander : public Pass {
 public:
  std::string_view name() const override { return "batchnorm-expander"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_BATCHNORM_EXPANDER_H_
