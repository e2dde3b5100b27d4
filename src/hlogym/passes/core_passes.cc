#include <memory>

#include "hlogym/passes/call_inliner.h"
#include "hlogym/passes/conv_rewriter.h"
#include "hlogym/passes/expanders.h"
#include "hlogym/passes/flatten_call_graph.h"
#include "hlogym/passes/gemm_rewriter.h"
#include "hlogym/passes/hlo_constant_folding.h"
#include "hlogym/passes/hlo_cse.h"
#include "hlogym/passes/hlo_dce.h"
#include "hlogym/passes/pass.h"
#include "hlogym/passes/sort_simplifier.h"
#include "hlogym/passes/tuple_simplifier.h"
#include "hlogym/passes/zero_sized_hlo_elimination.h"

namespace hlogym {

namespace {

template <typename P>
PassRegistry::Factory Factory() {
  return [] { return std::make_unique<P>(); };
}

}  // namespace

void RegisterCorePasses(PassRegistry& registry) {
  registry.Register("hlo-dce",
                    "removes dead instructions, unused multi-output fusion "
                    "outputs and computations left uncalled (apply mode only)",
                    Factory<HloDce>());
  registry.Register("hlo-cse",
                    "merges identical constants, then identical instructions "
                    "(commutative operands in any order)",
                    Factory<HloCse>());
  registry.Register("hlo-constant-folding",
                    "evaluates instructions whose operands are all constants "
                    "and replaces them by constants",
                    Factory<HloConstantFolding>());
  registry.Register("tuple-simplifier",
                    "tuple(gte(x,0..n-1)) -> x; resolves gte chains through "
                    "tuples",
                    Factory<TupleSimplifier>());
  registry.Register("call-inliner",
                    "inlines calls without backend config, callees first",
                    Factory<CallInliner>());
  registry.Register("flatten-call-graph",
                    "gives each call/while/conditional call site its own copy "
                    "of the computations it calls",
                    Factory<FlattenCallGraph>());
  registry.Register("zero-sized-hlo-elimination",
                    "replaces zero-element array instructions by empty "
                    "constants",
                    Factory<ZeroSizedHloElimination>());
  registry.Register("sort-simplifier",
                    "drops sort operands whose outputs are unused and that "
                    "the comparator ignores",
                    Factory<SortSimplifier>());
  registry.Register("logistic-expander", "logistic(x) -> 1 / (1 + exp(-x))",
                    Factory<LogisticExpander>());
  registry.Register("comparison-expander",
                    "total-order float compares -> signed integer compares "
                    "of the reordered bit patterns",
                    Factory<ComparisonExpander>());
  registry.Register("gemm-rewriter",
                    "dot (+ alpha, bias, relu) -> cuBLAS gemm custom call",
                    Factory<GemmRewriter>());
  registry.Register(
      "conv-rewriter",
      "convolution (+ scale, bias, relu) -> cuDNN conv custom call",
      Factory<ConvRewriter>());
}

}  // namespace hlogym
