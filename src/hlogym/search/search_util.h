// Helpers shared by the search agents: checking the start state, stepping
// forks, counting evaluations against a budget and a time limit, reporting
// progress, a seeded generator, and the joint decisions to try at a state.
#ifndef HLOGYM_SEARCH_SEARCH_UTIL_H_
#define HLOGYM_SEARCH_SEARCH_UTIL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlogym/env/env.h"
#include "hlogym/search/agent.h"

namespace hlogym {

using JointDecision = std::vector<int64_t>;

// OK when `start` is paused at a decision or done; a FailedPrecondition
// naming `agent` otherwise (no pipeline started).
absl::Status CheckSearchStart(const Env& start, std::string_view agent);

// A fork of `env` stepped with `decision` (`env` is not changed).
absl::StatusOr<std::unique_ptr<Env>> StepFork(
    const Env& env, std::span<const int64_t> decision);

// The wall clock, evaluations, budget and progress reports of one search.
class SearchContext {
 public:
  // `budget` <= 0: unlimited evaluations.
  SearchContext(const AgentOptions& options, int64_t budget);

  // env.StopSeconds() (a paused state is priced where it ends if every
  // remaining node keeps its original), counted; reports progress every
  // kReportEvery calls.
  absl::StatusOr<double> Evaluate(Env& env);

  int64_t evaluations() const { return evaluations_; }
  double Elapsed() const;
  // The time limit has passed (sets timed_out()).
  bool TimeUp();
  // No evaluation is left in the budget.
  bool BudgetSpent() const { return budget_ > 0 && evaluations_ >= budget_; }
  bool timed_out() const { return timed_out_; }

  // Reported to options.progress, when set.
  void set_best_seconds(double s) {
    best_seconds_ = s;
    has_best_ = true;
  }
  bool has_best() const { return has_best_; }
  double best_seconds() const { return best_seconds_; }
  void set_steps(int64_t steps) { steps_ = steps; }
  void Report() const;

  // Fills the counters of `result` (evaluations, wall time, timed_out).
  void Finish(SearchResult& result) const;

  static constexpr int64_t kReportEvery = 100;

 private:
  const AgentOptions& options_;
  int64_t budget_;
  std::chrono::steady_clock::time_point start_;
  int64_t evaluations_ = 0;
  bool timed_out_ = false;
  double best_seconds_ = 0;
  bool has_best_ = false;
  int64_t steps_ = 0;
};

// Steps `env` with all-original decisions until its pipeline is done (the
// cheapest way to an end state: keeping every original stops a decision
// loop), appending the decisions to `trajectory`. No evaluation.
absl::Status FinishWithOriginals(Env& env,
                                 std::vector<JointDecision>* trajectory);
// The same with the first candidate at every node (pick-first): what a
// search cut short by time or budget completes its best open state with.
absl::Status FinishWithPickFirst(Env& env,
                                 std::vector<JointDecision>* trajectory);

// A seeded generator: value k is SplitMix64(SplitMix64(seed) + k), the
// same on every platform.
class SearchRng {
 public:
  explicit SearchRng(uint64_t seed);
  uint64_t Next();
  // Uniform in [0, n), n > 0, unbiased (rejection of the low remainder).
  int64_t Uniform(int64_t n);

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

// Product of the choice counts, saturated at `cap` (returns cap + 1 when
// the product exceeds cap).
int64_t ChoiceProduct(std::span<const int64_t> counts, int64_t cap);

// All zeros (every node keeps its original).
JointDecision AllOriginal(std::span<const int64_t> counts);
// Choice 1 at every node with a candidate, 0 at nodes without one
// (HloEnv's always_pick_first).
JointDecision AllFirst(std::span<const int64_t> counts);
// A uniform choice per node.
JointDecision RandomDecision(std::span<const int64_t> counts, SearchRng& rng);

// Every joint decision in lexicographic order (the last node varies
// fastest). InvalidArgument when there are more than `limit`.
absl::StatusOr<std::vector<JointDecision>> EnumerateJointDecisions(
    std::span<const int64_t> counts, int64_t limit);

// Greedy's candidates, deduplicated, in this order: all-original,
// all-first, then for each node j and choice c > 0 the all-original
// decision with node j set to c.
std::vector<JointDecision> GreedyCandidates(std::span<const int64_t> counts);

// At most `n` distinct joint decisions, deterministic for `seed`: all-first,
// all-original, each single-node deviation from all-first (node j set to
// every other choice), then uniform random ones.
std::vector<JointDecision> SampleJointDecisions(std::span<const int64_t> counts,
                                                int64_t n, uint64_t seed);

}  // namespace hlogym

#endif  // HLOGYM_SEARCH_SEARCH_UTIL_H_
