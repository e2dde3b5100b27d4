// Factorized Monte-Carlo tree search (HloEnv, appendix C.3).
//
// The action at a state is a joint decision: one choice per alternatives
// node (choice 0 keeps the original). The joint action space is the
// product of the nodes' choice counts, far too large for one statistic per
// joint action, so every tree node (a state) keeps factorized statistics:
// per alternatives node j and choice a, a marginal visit count N_j(a), a
// mean return Q_j(a) and a prior P_j(a).
//
// One simulation:
//  - Selection: at an expanded state, every node j picks independently
//      a_j = argmax_a Qn_j(a) + P_j(a) * sqrt(sum_b N_j(b)) / (1 + N_j(a))
//                       * (c1 + log((sum_b N_j(b) + c2 + 1) / c2))
//    (MuZero's pUCT, c1 = 1.25, c2 = 19652), ties to the lowest index. Qn
//    is Q min-max normalised over every Q value seen in the whole tree
//    (clamped to [0, 1]; 0 while the tree has seen a single value). An
//    unvisited choice has Qn = 0, as in MuZero's pseudocode (not the
//    parent's value), so an unvisited choice wins only through its prior.
//  - The joint decision leads to a child state (a fork of the parent
//    stepped with it). Children are keyed by joint decision per parent, and
//    states are deduplicated by DagHash: a state reached by two paths is
//    one node with several parents (a DAG) and shares its statistics. A
//    simulation that reaches a state already on its own path stops there
//    (the cycle saves nothing more).
//  - Reward of a transition G -> G': R = (T(G) - T(G')) / T(start), the
//    modelled seconds saved, divided by the modelled time of the state the
//    search started from so that values are O(1) for any graph size.
//  - Leaf evaluation of a newly expanded state: the mean of
//    `mcts_rollouts` uniformly random rollouts of at most
//    `mcts_rollout_length` steps, each worth its discounted sum of rewards
//    (with gamma = 1: (T(leaf) - T(rollout end)) / T(start), one
//    evaluation per rollout); with a prior (AgentOptions::prior), the
//    prior's value instead, which is in modelled seconds still to be saved
//    from the state (divided by T(start) here). Terminal states (pipeline
//    done) are worth 0.
//  - Backup along the selected path with discount gamma: G = R + gamma *
//    G_next; every node of the path adds G to Q_j(a_j) of each of its
//    alternatives nodes j and one to N_j(a_j).
//
// Committing: `budget` simulations (default 400) run from the current root;
// then the root commits, per node, its most visited choice (argmax N_j(a);
// ties: highest Q, then lowest index), steps to that child, keeps the
// child's statistics as the new root, halves the budget (never below
// `mcts_min_budget`, 50, or the first budget if that is smaller), and
// repeats until the pipeline is done. A commit that leads back to a state
// already committed through (states are merged, so A -> B -> A happens)
// keeps every original instead; if that leads back too, the search ends
// with pick-first from the current root (the merged states cannot leave
// the cycle, and once the time limit stops simulations the statistics
// would commit it forever).
//
// Every end state evaluated (terminal tree states, rollouts that reach the
// end) is tracked with its decisions; the result is the better of the
// committed trajectory's end and the best of those (ties: the committed
// one), so it is never worse than any end state the search evaluated.
//
// Cost: a simulation steps the environment about 1 + rollouts * length
// times (rollout steps dominate), and evaluates T once per new state and
// once per rollout; T of a tree state is computed once (cached in its
// node). Memory: one module copy per non-terminal state in the DAG, at
// most one new state per simulation.
//
// When `time_limit_seconds` passes (checked between environment steps,
// also inside rollouts, which it cuts short), simulations stop and the
// remaining steps commit by the statistics as they are (a state without
// statistics keeps every original); the result is marked timed_out.
//
// Deterministic for a seed: rollouts draw from a seeded generator, and no
// decision depends on the iteration order of a hashed container.
#ifndef HLOGYM_SEARCH_FMCTS_H_
#define HLOGYM_SEARCH_FMCTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlogym/env/env.h"
#include "hlogym/search/agent.h"

namespace hlogym {

// ---- The selection rule, on plain numbers (testable by hand).

// Running minimum and maximum of the Q values seen in a tree (MuZero's
// MinMaxStats).
struct FmctsMinMax {
  double min = 0;
  double max = 0;
  bool empty = true;
  void Update(double q);
  // (q - min) / (max - min) clamped to [0, 1]; 0 while max <= min.
  double Normalize(double q) const;
};

// pUCT score of one choice: q_normalized + prior * sqrt(total_visits) /
// (1 + visits) * (c1 + log((total_visits + c2 + 1) / c2)).
double FmctsPuctScore(double q_normalized, double prior, int64_t visits,
                      int64_t total_visits, double c1, double c2);

// The choice of one alternatives node: argmax of FmctsPuctScore over its
// choices, ties to the lowest index. `visits`, `value_sums` (sum of the
// returns backed up through the choice: Q = sum / N) and `priors` have one
// entry per choice; unvisited choices have Qn = 0.
int64_t FmctsSelectChoice(std::span<const int64_t> visits,
                          std::span<const double> value_sums,
                          std::span<const double> priors,
                          const FmctsMinMax& minmax, double c1, double c2);

// The committed choice of one alternatives node: most visited, ties to the
// highest Q, then the lowest index.
int64_t FmctsCommitChoice(std::span<const int64_t> visits,
                          std::span<const double> value_sums);

// ---- The search tree (a DAG of states deduplicated by DagHash).

struct FmctsNode;

struct FmctsEdge {
  FmctsNode* child = nullptr;
  double reward = 0;  // (T(parent) - T(child)) / T(start)
};

struct FmctsNode {
  // The state (DagHash `hash`).
  std::unique_ptr<Env> env;
  uint64_t hash = 0;
  bool done = false;
  double seconds = 0;  // T(G), modelled seconds
  // False while T(G) is still to be worked out (FmctsTree::Child with
  // deferred pricing): `seconds` and the reward of the edge from `origin`
  // are not set yet.
  bool priced = true;
  // Factorized statistics, flattened: node j's choices are
  // [offsets[j], offsets[j + 1]).
  std::vector<int64_t> choice_counts;
  std::vector<int64_t> offsets;
  std::vector<int64_t> visits;
  std::vector<double> value_sums;
  std::vector<double> priors;
  int64_t simulations = 0;  // backups through this state
  bool expanded = false;
  double value = 0;  // leaf evaluation (normalised)
  std::vector<FmctsNode*> parents;
  // The edge that created the node: `env` is the start stepped with the
  // origins' decisions, so they are the trajectory to it. (DagHash ignores
  // instruction order, so a state merged from another path may number its
  // alternatives and candidates differently: decisions are only
  // meaningful along the origin chain.)
  FmctsNode* origin = nullptr;
  std::vector<int64_t> origin_decision;
  // Children by joint decision (looked up, never iterated).
  std::map<std::vector<int64_t>, FmctsEdge> children;

  int64_t num_alternatives() const {
    return static_cast<int64_t>(choice_counts.size());
  }
};

class FmctsTree {
 public:
  // `start` must be paused or done; it is forked, not changed.
  static absl::StatusOr<std::unique_ptr<FmctsTree>> Create(const Env& start);

  FmctsNode* root() const { return root_; }
  void set_root(FmctsNode* n) { root_ = n; }
  double start_seconds() const { return start_seconds_; }

  // The child of `parent` by joint decision `decision`: an existing edge,
  // else the state after stepping a fork of the parent, merged with an
  // existing node of the same DagHash (a new parent) or added.
  // With `defer_pricing`, a new paused state is added unpriced (its
  // seconds and the edge's reward wait for SetSeconds): the search prices
  // it beside the leaf's rollouts, on another thread.
  absl::StatusOr<FmctsEdge> Child(FmctsNode* parent,
                                  const std::vector<int64_t>& decision,
                                  bool defer_pricing = false);
  // Prices a node added unpriced (one evaluation) and sets the reward of
  // the edge that added it.
  void SetSeconds(FmctsNode* node, double seconds);
  // The decisions from the start to `node` along its origin chain.
  static std::vector<std::vector<int64_t>> Trajectory(const FmctsNode* node);
  // The node of a state, nullptr when it is not in the table.
  FmctsNode* Find(uint64_t hash, bool done) const;

  int64_t size() const { return static_cast<int64_t>(nodes_.size()); }
  int64_t evaluations() const { return evaluations_; }
  void add_evaluations(int64_t n) { evaluations_ += n; }
  int64_t merged_edges() const { return merged_edges_; }
  FmctsMinMax& minmax() { return minmax_; }

 private:
  FmctsTree() = default;
  absl::StatusOr<FmctsNode*> Add(std::unique_ptr<Env> env, uint64_t hash,
                                 bool price = true);
  double Scale() const { return start_seconds_ > 0 ? start_seconds_ : 1.0; }

  std::vector<std::unique_ptr<FmctsNode>> nodes_;
  absl::flat_hash_map<std::pair<uint64_t, bool>, FmctsNode*> table_;
  FmctsNode* root_ = nullptr;
  double start_seconds_ = 0;
  int64_t evaluations_ = 0;
  int64_t merged_edges_ = 0;
  FmctsMinMax minmax_;
};

// ---- The agent.

struct FmctsStats {
  // Simulations run before each committed step (400, 200, 100, 50, ...).
  std::vector<int64_t> simulations_per_step;
  int64_t rollouts = 0;
  int64_t rollout_steps = 0;
  int64_t prior_calls = 0;
  int64_t tree_states = 0;       // distinct states in the DAG
  int64_t merged_edges = 0;      // edges that reached an existing state
  double committed_seconds = 0;  // end of the committed trajectory
  // Commits whose picks led back to a committed state: they keep every
  // original instead.
  int64_t commit_returns = 0;
  // Searches whose commits led back to a committed state even when keeping
  // every original (they end with pick-first from there).
  int64_t commit_cycles = 0;
};

class FmctsAgent : public Agent {
 public:
  explicit FmctsAgent(AgentOptions options);
  std::string_view name() const override { return "fmcts"; }
  absl::StatusOr<SearchResult> Search(const Env& start) override;
  // Of the last Search().
  const FmctsStats& stats() const { return stats_; }

 private:
  AgentOptions options_;
  FmctsStats stats_;
};

std::unique_ptr<Agent> MakeFmctsAgent(AgentOptions options);

}  // namespace hlogym

#endif  // HLOGYM_SEARCH_FMCTS_H_
