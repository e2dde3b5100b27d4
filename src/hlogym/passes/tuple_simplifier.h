// TupleSimplifier: removes tuples that only repackage another tuple and
// resolves get-tuple-element chains through tuples.
#ifndef HLOGYM_PASSES_TUPLE_SIMPLIFIER_H_
#define HLOGYM_PASSES_TUPLE_SIMPLIFIER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// tuple(gte(x,0), ..., gte(x,n-1)) -> x, and gte(...gte(tuple(...))...) ->
// the element it reads (or a shorter chain from the innermost tuple
// operand reached).
class TupleSimplifier : public Pass {
 public:
  std::string_view name() const override { return "tuple-simplifier"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_TUPLE_SIMPLIFIER_H_
