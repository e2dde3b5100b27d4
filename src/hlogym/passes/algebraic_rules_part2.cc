#include "hlogym/passes/algebraic_simplifier.h"

namespace hlogym {

void AddAlgebraicRulesPart2(std::vector<AlgebraicRule>* rules) { (void)rules; }

}  // namespace hlogym
