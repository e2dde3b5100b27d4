// ConditionalSimplifier, after XLA's pass of the same name.
//
// Per conditional without side effects or sharding, the first rewrite that
// applies (dry mode offers each):
//  - one branch, or a constant predicate / branch index (out of range picks
//    the last branch) -> the selected branch inlined with its operand;
//  - a pred[] predicate and two branches made only of cheap instructions
//    (elementwise, broadcast, concatenate, dynamic-slice, get-tuple-element,
//    reduce, reshape, pad, slice, tuple), neither of them trivial -> both
//    branches inlined and their results chosen by select;
//  - output tuple elements equal in every branch -> readers of the later
//    one read the first;
//  - output tuple elements nobody reads (all users get-tuple-elements) ->
//    a conditional with a smaller output;
//  - branch parameter tuple elements a branch never reads -> that branch
//    takes a smaller tuple.
#ifndef HLOGYM_PASSES_CONDITIONAL_SIMPLIFIER_H_
#define HLOGYM_PASSES_CONDITIONAL_SIMPLIFIER_H_

#include <string_view>

#include "hlogym/passes/pass.h"

namespace hlogym {

class ConditionalSimplifier : public Pass {
 public:
  std::string_view name() const override { return "conditional-simplifier"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CONDITIONAL_SIMPLIFIER_H_
