// Op expanders: rewrite one opcode into simpler ones, as XLA's
// LogisticExpander and ComparisonExpander do.
#ifndef HLOGYM_PASSES_EXPANDERS_H_
#define HLOGYM_PASSES_EXPANDERS_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// logistic(x) -> 1 / (1 + exp(-x)).
class LogisticExpander : public Pass {
 public:
  std::string_view name() const override { return "logistic-expander"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

// compare(a, b), type=TOTALORDER on floats -> a signed integer compare of
// the bit patterns, with negative values reordered (s < 0 ? max - s : s).
class ComparisonExpander : public Pass {
 public:
  std::string_view name() const override { return "comparison-expander"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_H_
