// GeneralFusion: the heuristic-free fusion pass of the alternative-graph
// approach. One dry run offers every legal producer-consumer fusion of the
// graph, and sibling fusions of readers of a shared value, as alternatives
// at once; an agent picks among the overlapping candidates, and the loop
// (dry run, decide, CSE + DCE) repeats until no alternative is left.
//
// Legality only, no profitability: both sides fusible (no custom-calls,
// parameters, tuples, control flow or side effects), no cycle, in-place and
// scatter rules, and the operand / shared-memory / reduction budgets and
// the code-size limit, so the result is a graph a GPU backend can emit.
// When the producer has users besides the consumer and the two are
// multi-output compatible, the candidate is a multi-output fusion that also
// outputs the producer (no duplication), offered only where XLA's
// producer-consumer multi-output test passes (a multi-output root consumer;
// a loop-fusible producer that updates nothing in place and does not
// transpose physically); otherwise the producer is duplicated into the
// consumer. Multi-output producers are allowed (the
// relaxed form of the XLA test). Producers are visited in unique-id order.
//
// Sibling candidates (the reference pass's second step): two readers of one
// value that may be multi-output roots, have multi-output compatible
// shapes, are not a reduction and a loop fusion (nor fusions of different
// kinds), fit the budgets and do not reach each other become one
// multi-output fusion. They are proposed after the producer-consumer ones,
// so at a use those come first.
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
  // Why siblings `a` and `b` may not become one multi-output fusion (""
  // when they may); whether they reach each other is checked separately.
  static FusionDecision LegalSiblings(const Instruction& a,
                                      const Instruction& b);

  // Options: "siblings" (default true) also offers sibling fusions;
  // "sibling_partners" (default 1) pairs each reader of a value with at
  // most that many later readers it may fuse with, 0 with all of them (the
  // reference pass's full set, quadratic in the readers of a value).
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

 private:
  bool siblings_ = true;
  int64_t sibling_partners_ = 1;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_GENERAL_FUSION_H_
