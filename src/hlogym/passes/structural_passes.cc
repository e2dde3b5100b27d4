// Registration of the structural passes (control flow, data movement,
// expanders).
#include <memory>

#include "hlogym/passes/batchnorm_expander.h"
#include "hlogym/passes/conditional_simplifier.h"
#include "hlogym/passes/dot_decomposer.h"
#include "hlogym/passes/pass.h"
#include "hlogym/passes/reshape_mover.h"
#include "hlogym/passes/slice_sinker.h"
#include "hlogym/passes/transpose_folding.h"
#include "hlogym/passes/while_loop_constant_sinking.h"
#include "hlogym/passes/while_loop_invariant_code_motion.h"
#include "hlogym/passes/while_loop_simplifier.h"

namespace hlogym {

void RegisterStructuralPasses(PassRegistry& registry) {
  registry.Register(
      "while-loop-simplifier",
      "removes loops with trip count 0, inlines trip count 1, flattens "
      "nested loop state and drops dead loop-state elements",
      [] { return std::make_unique<WhileLoopSimplifier>(); });
  registry.Register(
      "while-loop-invariant-code-motion",
      "hoists loop-invariant instructions out of while bodies into the loop "
      "state",
      [] { return std::make_unique<WhileLoopInvariantCodeMotion>(); });
  registry.Register(
      "while-loop-constant-sinking",
      "replaces uses of constant loop-state elements passed through the body "
      "by copies of the constant in the body and condition",
      [] { return std::make_unique<WhileLoopConstantSinking>(); });
  registry.Register(
      "conditional-simplifier",
      "inlines conditionals with a constant predicate, turns cheap ones into "
      "selects and trims unused outputs and operands",
      [] { return std::make_unique<ConditionalSimplifier>(); });
  registry.Register(
      "reshape-mover",
      "sinks equivalent reshapes and transposes through elementwise ops",
      [] { return std::make_unique<ReshapeMover>(); });
  registry.Register(
      "transpose-folding",
      "absorbs transposes into dot (GPU GEMM rule) and convolution dimension "
      "numbers",
      [] { return std::make_unique<TransposeFolding>(); });
  registry.Register(
      "dot-decomposer",
      "rewrites non-canonical dots to [batch, m, k] x [batch, k, n] with "
      "transposes and reshapes",
      [] { return std::make_unique<DotDecomposer>(); });
  registry.Register(
      "batchnorm-expander",
      "expands batch-norm training, inference and grad into arithmetic",
      [] { return std::make_unique<BatchNormExpander>(); });
  registry.Register(
      "slice-sinker",
      "turns elementwise ops on matching slices of the same sources into "
      "one op on the sources followed by slices",
      [] { return std::make_unique<SliceSinker>(); });
}

}  // namespace hlogym
