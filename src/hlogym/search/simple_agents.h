// The baseline agents: each follows one trajectory from the start to the
// end of the pipeline.
//
//  - pick-first: choice 1 (the first candidate) at every node with one, 0
//    elsewhere, at every step (HloEnv's always_pick_first). One evaluation:
//    the end state.
//  - random: a uniform choice per node at every step (choice 0 included),
//    drawn from SearchRng(seed) (counter-based SplitMix64, the same on
//    every platform). One evaluation: the end state.
//  - greedy: one-step lookahead. At each step it steps a fork with every
//    candidate of GreedyCandidates (all-original, all-first, each single
//    node deviating from all-original), evaluates the child (Seconds():
//    the final time when the child is done, else the program with the
//    child's alternatives kept original) and commits the best, ties to the
//    first in that order. `budget` (0: unlimited) bounds the evaluations;
//    a step cut short by it commits the best child evaluated so far.
//
// When the time limit passes (or greedy's budget is spent) before the end,
// the current state is finished with all-original steps (which end a
// decision loop) and priced with one more evaluation; the result is marked
// timed_out for the time limit.
#ifndef HLOGYM_SEARCH_SIMPLE_AGENTS_H_
#define HLOGYM_SEARCH_SIMPLE_AGENTS_H_

#include <memory>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "hlogym/env/env.h"
#include "hlogym/search/agent.h"

namespace hlogym {

class PickFirstAgent : public Agent {
 public:
  explicit PickFirstAgent(AgentOptions options)
      : options_(std::move(options)) {}
  std::string_view name() const override { return "pick-first"; }
  absl::StatusOr<SearchResult> Search(const Env& start) override;

 private:
  AgentOptions options_;
};

class RandomAgent : public Agent {
 public:
  explicit RandomAgent(AgentOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "random"; }
  absl::StatusOr<SearchResult> Search(const Env& start) override;

 private:
  AgentOptions options_;
};

class GreedyAgent : public Agent {
 public:
  explicit GreedyAgent(AgentOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "greedy"; }
  absl::StatusOr<SearchResult> Search(const Env& start) override;

 private:
  AgentOptions options_;
};

}  // namespace hlogym

#endif  // HLOGYM_SEARCH_SIMPLE_AGENTS_H_
