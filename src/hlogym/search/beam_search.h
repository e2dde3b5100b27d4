// Beam search over joint decisions (HloEnv, appendix C.2): a depth-first
// search that keeps, at each expanded state, the `beam_alpha` most
// promising children.
//
// Expanding a paused state: when the product of its choice counts is at
// most `beam_expand_budget`, every joint decision in lexicographic order;
// otherwise SampleJointDecisions (all-first, all-original, each single-node
// deviation from all-first, then uniform random ones), seeded with the
// options' seed and the state's DagHash so the set does not depend on the
// search order. Each decision steps a fork of the state; a child whose
// (DagHash, done) was seen before in this search is dropped before it is
// evaluated; the others are evaluated with Seconds() (for a done child its
// final time). Done children update the best end state and are not
// expanded; of the paused children the `beam_alpha` fastest (ties: the
// first in decision order) are pushed onto the stack, the fastest on top,
// so it is expanded next.
//
// The search ends when the stack is empty, the evaluation budget
// (`budget`, 0: unlimited) is spent or the time limit passes; the result is
// the best end state with its trajectory (rebuilt from parent links). If
// it stops early (time or budget), the most promising open state (the top
// of the stack) is also finished twice, with pick-first steps and with
// all-original steps; each end is priced and the fastest end overall wins.
//
// `beam_exhaustive`: no pruning, every joint decision of every state (an
// InvalidArgument error for a state with more than 1e6), no evaluation
// budget: every reachable end state is evaluated (once per DagHash) and the
// optimum returned.
#ifndef HLOGYM_SEARCH_BEAM_SEARCH_H_
#define HLOGYM_SEARCH_BEAM_SEARCH_H_

#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "hlogym/env/env.h"
#include "hlogym/search/agent.h"

namespace hlogym {

class BeamSearchAgent : public Agent {
 public:
  // Joint decisions of one state allowed in exhaustive mode.
  static constexpr int64_t kExhaustiveLimit = 1000000;

  explicit BeamSearchAgent(AgentOptions options)
      : options_(std::move(options)) {}
  std::string_view name() const override { return "beam"; }
  absl::StatusOr<SearchResult> Search(const Env& start) override;

 private:
  AgentOptions options_;
};

}  // namespace hlogym

#endif  // HLOGYM_SEARCH_BEAM_SEARCH_H_
