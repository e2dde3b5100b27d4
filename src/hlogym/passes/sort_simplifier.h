// SortSimplifier: drops the operands of a variadic sort whose outputs
// nobody reads and that the comparator ignores.
#ifndef HLOGYM_PASSES_SORT_SIMPLIFIER_H_
#define HLOGYM_PASSES_SORT_SIMPLIFIER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// A tuple-shaped sort (not a root) read only through get-tuple-elements is
// rebuilt with the operands that are read or that the comparator uses; the
// comparator is copied without the parameters of the dropped operands.
class SortSimplifier : public Pass {
 public:
  std::string_view name() const override { return "sort-simplifier"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SORT_SIMPLIFIER_H_
