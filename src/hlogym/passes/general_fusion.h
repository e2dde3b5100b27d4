// GeneralFusion: the heuristic-free fusion pass of the alternative-graph
// approach. One dry run offers every legal producer-consumer fusion of the
// graph as an alternative at once; an agent picks among the overlapping
// candidates, and the loop (dry run, decide, CSE + DCE) repeats until no
// alternative is left.
//
// Legality only, no profitability: both sides fusible (no custom-calls,
// parameters, tuples, control flow or side effects), no cycle, in-place and
// scatter rules, and the operand / shared-memory / reduction budgets and
// the code-size limit, so the result is a graph a GPU backend can emit.
// When the producer has users besides the consumer and the two are
// multi-output compatible, the candidate is a multi-output fusion that also
// outputs the producer (no duplication); otherwise the producer is
// duplicated into the consumer. Multi-output producers are allowed (the
// relaxed form of the XLA test).
//
// In apply mode the pass fuses greedily, every pair in turn, as if each
// alternative were accepted (a convenience for tests and the CLI).
#ifndef HLOGYM_PASSES_GENERAL_FUSION_H_
#define HLOGYM_PASSES_GENERAL_FUSION_H_

#include <string>
#include <string_view>
#include <vector>

#include "hlogym/passes/gpu_fusible.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

class GeneralFusion : public Pass {
 public:
  std::string_view name() const override { return "general-fusion"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;

  // Why `producer` may not fuse into `consumer` ("" when it may); the
  // cycle check is separate (it needs reachability).
  static FusionDecision Legal(const Instruction& producer,
                              const Instruction& consumer);
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_GENERAL_FUSION_H_
