#include "hlogym/search/simple_agents.h"

#include <functional>
#include <utility>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/search/search_util.h"

namespace hlogym {
namespace {

using DecideFn = std::function<JointDecision(const std::vector<int64_t>&)>;

// Follows `decide` from `start` to the end of the pipeline.
absl::StatusOr<SearchResult> FollowPolicy(const Env& start,
                                          std::string_view agent,
                                          const AgentOptions& options,
                                          const DecideFn& decide) {
  HLOGYM_RETURN_IF_ERROR(CheckSearchStart(start, agent));
  SearchContext ctx(options, /*budget=*/0);
  SearchResult result;
  std::unique_ptr<Env> env = start.Fork();
  while (env->paused()) {
    if (ctx.TimeUp()) {
      HLOGYM_RETURN_IF_ERROR(FinishWithOriginals(*env, &result.trajectory));
      break;
    }
    JointDecision d = decide(env->ChoiceCounts());
    HLOGYM_RETURN_IF_ERROR(env->Step(d).status());
    result.trajectory.push_back(std::move(d));
    ++result.states_visited;
    ctx.set_steps(static_cast<int64_t>(result.trajectory.size()));
    ctx.Report();
  }
  HLOGYM_ASSIGN_OR_RETURN(result.best_seconds, ctx.Evaluate(*env));
  ctx.set_best_seconds(result.best_seconds);
  result.best = std::move(env);
  ctx.Finish(result);
  return result;
}

}  // namespace

absl::StatusOr<SearchResult> PickFirstAgent::Search(const Env& start) {
  return FollowPolicy(
      start, name(), options_,
      [](const std::vector<int64_t>& counts) { return AllFirst(counts); });
}

absl::StatusOr<SearchResult> RandomAgent::Search(const Env& start) {
  SearchRng rng(options_.seed);
  return FollowPolicy(start, name(), options_,
                      [&rng](const std::vector<int64_t>& counts) {
                        return RandomDecision(counts, rng);
                      });
}

absl::StatusOr<SearchResult> GreedyAgent::Search(const Env& start) {
  HLOGYM_RETURN_IF_ERROR(CheckSearchStart(start, name()));
  SearchContext ctx(options_, options_.budget);
  SearchResult result;
  std::unique_ptr<Env> env = start.Fork();
  // The modelled time of `env` when it is done (the committed child's).
  double env_seconds = 0;
  bool env_priced = false;
  while (env->paused()) {
    if (ctx.TimeUp() || ctx.BudgetSpent()) {
      HLOGYM_RETURN_IF_ERROR(FinishWithOriginals(*env, &result.trajectory));
      env_priced = false;
      break;
    }
    const std::vector<int64_t> counts = env->ChoiceCounts();
    std::unique_ptr<Env> best;
    JointDecision best_decision;
    double best_seconds = 0;
    for (JointDecision& d : GreedyCandidates(counts)) {
      // At least one child per step; then stop when out of time or budget.
      if (best != nullptr && (ctx.TimeUp() || ctx.BudgetSpent())) break;
      HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Env> child, StepFork(*env, d));
      HLOGYM_ASSIGN_OR_RETURN(double s, ctx.Evaluate(*child));
      if (best == nullptr || s < best_seconds) {
        best = std::move(child);
        best_decision = std::move(d);
        best_seconds = s;
      }
    }
    env = std::move(best);
    env_seconds = best_seconds;
    env_priced = true;
    result.trajectory.push_back(std::move(best_decision));
    ++result.states_visited;
    ctx.set_steps(static_cast<int64_t>(result.trajectory.size()));
    if (env->done()) ctx.set_best_seconds(best_seconds);
    ctx.Report();
  }
  if (env_priced) {
    result.best_seconds = env_seconds;
  } else {
    HLOGYM_ASSIGN_OR_RETURN(result.best_seconds, ctx.Evaluate(*env));
  }
  ctx.set_best_seconds(result.best_seconds);
  result.best = std::move(env);
  ctx.Finish(result);
  return result;
}

}  // namespace hlogym
