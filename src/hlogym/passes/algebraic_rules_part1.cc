// AlgebraicSimplifier rules, checklist entries 1-63.
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/algebraic_simplifier.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/pattern_util.h"

namespace hlogym {
namespace {

// 2. add(A, 0) -> A and add(0, A) -> A.
absl::StatusOr<bool> AddZero(Instruction* add, AlgebraicContext& ctx) {
  for (int i = 0; i < 2; ++i) {
    Instruction* other = add->operand(1 - i);
    if (IsAll(add->operand(i), 0) && other->shape().Compatible(add->shape())) {
      return ctx.rw.ReplaceInstruction(add, other);
    }
  }
  return false;
}

}  // namespace

void AddAlgebraicRulesPart1(std::vector<AlgebraicRule>* rules) {
  rules->push_back({"add-zero",
                    2,
                    {Opcode::kAdd},
                    "add(A, 0) -> A and add(0, A) -> A",
                    &AddZero});
}

}  // namespace hlogym
