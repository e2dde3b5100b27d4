#include "hlogym/passes/algebraic_simplifier.h"

namespace hlogym {

void AddAlgebraicRulesPart3(std::vector<AlgebraicRule>* rules) { (void)rules; }

}  // namespace hlogym
