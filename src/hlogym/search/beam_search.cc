#include "hlogym/search/beam_search.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/search/search_util.h"

namespace hlogym {
namespace {

// How a state was reached: its parent's record and the decision taken.
struct Record {
  int64_t parent = -1;
  JointDecision decision;
};

struct OpenState {
  std::unique_ptr<Env> env;
  int64_t record = 0;
};

struct Child {
  std::unique_ptr<Env> env;
  JointDecision decision;
  double seconds = 0;
};

std::vector<JointDecision> Trajectory(const std::vector<Record>& records,
                                      int64_t r) {
  std::vector<JointDecision> out;
  for (; r > 0; r = records[r].parent) out.push_back(records[r].decision);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

absl::StatusOr<SearchResult> BeamSearchAgent::Search(const Env& start) {
  HLOGYM_RETURN_IF_ERROR(CheckSearchStart(start, name()));
  const bool exhaustive = options_.beam_exhaustive;
  if (!exhaustive && options_.beam_alpha < 1) {
    return absl::InvalidArgumentError(StrCat(
        "beam: beam_alpha must be at least 1, got ", options_.beam_alpha));
  }
  if (!exhaustive && options_.beam_expand_budget < 1) {
    return absl::InvalidArgumentError(
        StrCat("beam: beam_expand_budget must be at least 1, got ",
               options_.beam_expand_budget));
  }
  const int64_t alpha =
      exhaustive ? std::numeric_limits<int64_t>::max() : options_.beam_alpha;
  SearchContext ctx(options_, exhaustive ? 0 : options_.budget);
  SearchResult result;

  std::vector<Record> records(1);  // records[0]: the start
  std::unique_ptr<Env> best;
  int64_t best_record = -1;
  double best_seconds = 0;

  std::unique_ptr<Env> root = start.Fork();
  if (root->done()) {
    HLOGYM_ASSIGN_OR_RETURN(result.best_seconds, ctx.Evaluate(*root));
    result.best = std::move(root);
    ctx.Finish(result);
    return result;
  }
  absl::flat_hash_set<std::pair<uint64_t, bool>> seen;
  seen.insert({root->StateKey(), false});
  std::vector<OpenState> stack;
  stack.push_back({std::move(root), 0});
  bool stopped = false;
  while (!stack.empty() && !stopped) {
    if (ctx.TimeUp() || ctx.BudgetSpent()) break;
    OpenState state = std::move(stack.back());
    stack.pop_back();
    ++result.states_visited;
    const uint64_t hash = state.env->StateKey();
    const std::vector<int64_t> counts = state.env->ChoiceCounts();
    std::vector<JointDecision> decisions;
    if (exhaustive) {
      absl::StatusOr<std::vector<JointDecision>> all =
          EnumerateJointDecisions(counts, kExhaustiveLimit);
      if (!all.ok()) {
        return absl::InvalidArgumentError(
            StrCat("beam (exhaustive): ", all.status().message()));
      }
      decisions = *std::move(all);
    } else if (ChoiceProduct(counts, options_.beam_expand_budget) <=
               options_.beam_expand_budget) {
      HLOGYM_ASSIGN_OR_RETURN(
          decisions,
          EnumerateJointDecisions(counts, options_.beam_expand_budget));
    } else {
      decisions = SampleJointDecisions(counts, options_.beam_expand_budget,
                                       SplitMix64(options_.seed ^ hash));
    }

    std::vector<Child> children;
    for (JointDecision& d : decisions) {
      if (ctx.TimeUp() || ctx.BudgetSpent()) {
        stopped = true;
        break;
      }
      HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Env> child,
                              StepFork(*state.env, d));
      if (!seen.insert({child->StateKey(), child->done()}).second) continue;
      HLOGYM_ASSIGN_OR_RETURN(double s, ctx.Evaluate(*child));
      if (child->done()) {
        if (best == nullptr || s < best_seconds) {
          best = std::move(child);
          best_seconds = s;
          records.push_back({state.record, std::move(d)});
          best_record = static_cast<int64_t>(records.size()) - 1;
          ctx.set_best_seconds(s);
        }
        continue;
      }
      children.push_back({std::move(child), std::move(d), s});
    }
    // A state cut short stays open (beneath its children): it is what an
    // unfinished search falls back on.
    if (stopped) stack.push_back(std::move(state));
    // The fastest `alpha` paused children, pushed so the fastest is on top.
    std::stable_sort(
        children.begin(), children.end(),
        [](const Child& a, const Child& b) { return a.seconds < b.seconds; });
    if (static_cast<int64_t>(children.size()) > alpha) children.resize(alpha);
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      records.push_back({state.record, std::move(it->decision)});
      stack.push_back(
          {std::move(it->env), static_cast<int64_t>(records.size()) - 1});
    }
    ctx.set_steps(result.states_visited);
    ctx.Report();
  }

  // Cut short by time or budget (a finished search empties its stack): the
  // most promising open state is also finished with pick-first and with
  // every original; the fastest end wins.
  if (!stack.empty()) {
    OpenState& top = stack.back();
    std::vector<JointDecision> base = Trajectory(records, top.record);
    auto consider = [&](std::unique_ptr<Env> env,
                        std::vector<JointDecision> tail) -> absl::Status {
      HLOGYM_ASSIGN_OR_RETURN(double s, ctx.Evaluate(*env));
      if (best != nullptr && s >= best_seconds) return absl::OkStatus();
      best = std::move(env);
      best_seconds = s;
      best_record = -1;
      result.trajectory = base;
      result.trajectory.insert(result.trajectory.end(), tail.begin(),
                               tail.end());
      return absl::OkStatus();
    };
    std::unique_ptr<Env> first = top.env->Fork();
    std::vector<JointDecision> tail;
    HLOGYM_RETURN_IF_ERROR(FinishWithPickFirst(*first, &tail));
    HLOGYM_RETURN_IF_ERROR(consider(std::move(first), std::move(tail)));
    std::unique_ptr<Env> originals = top.env->Fork();
    tail.clear();
    HLOGYM_RETURN_IF_ERROR(FinishWithOriginals(*originals, &tail));
    HLOGYM_RETURN_IF_ERROR(consider(std::move(originals), std::move(tail)));
  }
  if (best == nullptr) {
    return absl::InternalError(
        "beam: the search ended without an end state or an open state");
  }
  if (best_record >= 0) result.trajectory = Trajectory(records, best_record);
  result.best = std::move(best);
  result.best_seconds = best_seconds;
  ctx.set_best_seconds(best_seconds);
  ctx.Finish(result);
  return result;
}

}  // namespace hlogym
