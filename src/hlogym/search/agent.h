// Search agents over an environment's decisions. Each one drives a
// started decision pipeline (Env::StartPipeline) to its end and returns the
// best end state it found, with the decisions that lead there. All are
// seeded and deterministic: the same start, options and seed give the same
// result (time limits aside).
#ifndef HLOGYM_SEARCH_AGENT_H_
#define HLOGYM_SEARCH_AGENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/env/env.h"

namespace hlogym {

// A prior over one alternatives node's choices and a state value, for
// f-MCTS (pluggable, e.g. from Python). `priors[j]` has one weight per
// choice of node j (ChoiceCounts()); they need not be normalised.
struct PolicyValue {
  std::vector<std::vector<double>> priors;
  double value = 0;
};
using PolicyValueFn = std::function<absl::StatusOr<PolicyValue>(const Env&)>;

// Reported after every committed step or evaluation batch.
struct SearchProgress {
  int64_t evaluations = 0;
  double elapsed_seconds = 0;
  double best_seconds = 0;  // best modelled time of an end state so far
  int64_t steps = 0;        // committed steps
};

struct AgentOptions {
  uint64_t seed = 0;
  // Evaluations allowed (0: the agent's default). For f-MCTS: the
  // simulation budget of the first step (HloEnv: 400).
  int64_t budget = 0;
  // Wall-clock limit in seconds (0: none). The best state found in time
  // is returned.
  double time_limit_seconds = 0;
  // Beam search.
  int64_t beam_alpha = 20;       // pruning factor (children kept per node)
  bool beam_exhaustive = false;  // no pruning, no budget: every sequence
  // Joint decisions tried per expanded state: all of them when the product
  // of the choice counts is at most this, else a seeded set of this many.
  int64_t beam_expand_budget = 256;
  // f-MCTS.
  double mcts_c1 = 1.25;
  double mcts_c2 = 19652;
  double mcts_gamma = 1.0;
  int64_t mcts_min_budget = 50;
  int64_t mcts_rollouts = 5;
  int64_t mcts_rollout_length = 10;
  // Threads running a leaf's rollouts (0: Parallelism(), so every hardware
  // thread unless HLOGYM_THREADS caps it). Results do not depend on it:
  // each rollout has its own seeded generator.
  int64_t threads = 0;
  PolicyValueFn prior;  // empty: uniform priors, rollout values
  std::function<void(const SearchProgress&)> progress;
};

struct SearchResult {
  // The end state (pipeline done).
  std::unique_ptr<Env> best;
  double best_seconds = 0;
  // The decisions of each step from the start to `best`.
  std::vector<std::vector<int64_t>> trajectory;
  int64_t evaluations = 0;     // evaluator calls
  int64_t states_visited = 0;  // distinct states (by DagHash) expanded
  double search_seconds = 0;   // wall time
  bool timed_out = false;
  int64_t threads = 1;  // threads the search ran on
};

class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string_view name() const = 0;
  // `start` must be paused at a decision or done; it is not changed.
  virtual absl::StatusOr<SearchResult> Search(const Env& start) = 0;
};

// "pick-first", "random", "greedy", "beam", "fmcts".
absl::StatusOr<std::unique_ptr<Agent>> CreateAgent(std::string_view name,
                                                   AgentOptions options = {});
std::vector<std::string> AgentNames();

}  // namespace hlogym

#endif  // HLOGYM_SEARCH_AGENT_H_
