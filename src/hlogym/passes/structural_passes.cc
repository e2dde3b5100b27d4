// Registration of the structural passes (control flow, data movement,
// expanders).
#include <memory>

#include "hlogym/passes/pass.h"
#include "hlogym/passes/while_loop_simplifier.h"

namespace hlogym {

void RegisterStructuralPasses(PassRegistry& registry) {
  registry.Register(
      "while-loop-simplifier",
      "removes loops with trip count 0, inlines trip count 1, flattens "
      "nested loop state and drops dead loop-state elements",
      [] { return std::make_unique<WhileLoopSimplifier>(); });
}

}  // namespace hlogym
