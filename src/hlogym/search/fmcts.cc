#include "hlogym/search/fmcts.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "hlogym/ir/parallel.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/search/search_util.h"

namespace hlogym {

// ---- Selection rule.

void FmctsMinMax::Update(double q) {
  if (empty) {
    min = max = q;
    empty = false;
    return;
  }
  min = std::min(min, q);
  max = std::max(max, q);
}

double FmctsMinMax::Normalize(double q) const {
  if (empty || !(max > min)) return 0;
  return std::clamp((q - min) / (max - min), 0.0, 1.0);
}

double FmctsPuctScore(double q_normalized, double prior, int64_t visits,
                      int64_t total_visits, double c1, double c2) {
  const double total = static_cast<double>(total_visits);
  const double explore = prior * std::sqrt(total) /
                         (1.0 + static_cast<double>(visits)) *
                         (c1 + std::log((total + c2 + 1.0) / c2));
  return q_normalized + explore;
}

int64_t FmctsSelectChoice(std::span<const int64_t> visits,
                          std::span<const double> value_sums,
                          std::span<const double> priors,
                          const FmctsMinMax& minmax, double c1, double c2) {
  int64_t total = 0;
  for (int64_t n : visits) total += n;
  int64_t best = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  for (size_t a = 0; a < visits.size(); ++a) {
    const double qn =
        visits[a] > 0 ? minmax.Normalize(value_sums[a] / visits[a]) : 0.0;
    const double s = FmctsPuctScore(qn, priors[a], visits[a], total, c1, c2);
    if (s > best_score) {  // strict: ties keep the lowest index
      best_score = s;
      best = static_cast<int64_t>(a);
    }
  }
  return best;
}

int64_t FmctsCommitChoice(std::span<const int64_t> visits,
                          std::span<const double> value_sums) {
  int64_t best = 0;
  for (size_t a = 1; a < visits.size(); ++a) {
    if (visits[a] > visits[best]) {
      best = static_cast<int64_t>(a);
    } else if (visits[a] == visits[best] && visits[a] > 0 &&
               value_sums[a] / visits[a] > value_sums[best] / visits[best]) {
      best = static_cast<int64_t>(a);
    }
  }
  return best;
}

// ---- Tree.

absl::StatusOr<std::unique_ptr<FmctsTree>> FmctsTree::Create(const Env& start) {
  if (!start.paused() && !start.done()) {
    return absl::FailedPreconditionError(
        "f-MCTS needs a started decision pipeline (Env::StartPipeline)");
  }
  auto tree = std::unique_ptr<FmctsTree>(new FmctsTree());
  HLOGYM_ASSIGN_OR_RETURN(FmctsNode * root,
                          tree->Add(start.Fork(), start.StateKey()));
  tree->root_ = root;
  tree->start_seconds_ = root->seconds;
  return tree;
}

absl::StatusOr<FmctsNode*> FmctsTree::Add(std::unique_ptr<Env> env,
                                          uint64_t hash, bool price) {
  auto node = std::make_unique<FmctsNode>();
  node->hash = hash;
  node->done = env->done();
  if (price || node->done) {
    ++evaluations_;
    // Paused states are priced by where they end if every remaining node
    // keeps its original, like the finished states they are compared with.
    HLOGYM_ASSIGN_OR_RETURN(node->seconds, env->StopSeconds());
  } else {
    node->priced = false;
    node->seconds = std::numeric_limits<double>::quiet_NaN();
  }
  if (node->done) {
    node->expanded = true;  // a terminal state never expands
  } else {
    node->choice_counts = env->ChoiceCounts();
    node->offsets.reserve(node->choice_counts.size() + 1);
    node->offsets.push_back(0);
    for (int64_t c : node->choice_counts) {
      node->offsets.push_back(node->offsets.back() + c);
    }
    const int64_t total = node->offsets.back();
    node->visits.assign(total, 0);
    node->value_sums.assign(total, 0.0);
    node->priors.resize(total);
    for (size_t j = 0; j < node->choice_counts.size(); ++j) {
      const double p = 1.0 / static_cast<double>(node->choice_counts[j]);
      std::fill(node->priors.begin() + node->offsets[j],
                node->priors.begin() + node->offsets[j + 1], p);
    }
  }
  node->env = std::move(env);
  FmctsNode* raw = node.get();
  table_[{hash, raw->done}] = raw;
  nodes_.push_back(std::move(node));
  return raw;
}

FmctsNode* FmctsTree::Find(uint64_t hash, bool done) const {
  auto it = table_.find(std::make_pair(hash, done));
  return it == table_.end() ? nullptr : it->second;
}

void FmctsTree::SetSeconds(FmctsNode* node, double seconds) {
  ++evaluations_;
  node->seconds = seconds;
  node->priced = true;
  FmctsNode* parent = node->origin;
  if (parent == nullptr) return;
  auto it = parent->children.find(node->origin_decision);
  if (it != parent->children.end() && it->second.child == node) {
    it->second.reward = (parent->seconds - seconds) / Scale();
  }
}

absl::StatusOr<FmctsEdge> FmctsTree::Child(FmctsNode* parent,
                                           const std::vector<int64_t>& decision,
                                           bool defer_pricing) {
  auto it = parent->children.find(decision);
  if (it != parent->children.end()) return it->second;
  if (parent->done) {
    return absl::FailedPreconditionError(
        "f-MCTS: a terminal state has no children");
  }
  std::unique_ptr<Env> env = parent->env->Fork();
  HLOGYM_RETURN_IF_ERROR(env->Step(decision).status());
  const uint64_t hash = env->StateKey();
  FmctsNode* child = Find(hash, env->done());
  if (child != nullptr) {
    ++merged_edges_;
  } else {
    HLOGYM_ASSIGN_OR_RETURN(child, Add(std::move(env), hash, !defer_pricing));
    child->origin = parent;
    child->origin_decision = decision;
  }
  if (!child->priced && child->origin != parent) {
    // Only the edge that added an unpriced node may wait for its price.
    return absl::InternalError("f-MCTS: an unpriced state was reached again");
  }
  if (std::find(child->parents.begin(), child->parents.end(), parent) ==
      child->parents.end()) {
    child->parents.push_back(parent);
  }
  FmctsEdge edge{child, (parent->seconds - child->seconds) / Scale()};
  parent->children.emplace(decision, edge);
  return edge;
}

std::vector<std::vector<int64_t>> FmctsTree::Trajectory(const FmctsNode* node) {
  std::vector<std::vector<int64_t>> t;
  for (const FmctsNode* n = node; n != nullptr && n->origin != nullptr;
       n = n->origin) {
    t.push_back(n->origin_decision);
  }
  std::reverse(t.begin(), t.end());
  return t;
}

// ---- Search.

namespace {

using Clock = std::chrono::steady_clock;

absl::Status ValidateOptions(const AgentOptions& o) {
  if (o.budget < 0) {
    return absl::InvalidArgumentError(
        StrCat("f-MCTS: budget must be >= 0, got ", o.budget));
  }
  if (o.mcts_min_budget < 1) {
    return absl::InvalidArgumentError(StrCat(
        "f-MCTS: mcts_min_budget must be >= 1, got ", o.mcts_min_budget));
  }
  if (o.mcts_rollouts < 0 || o.mcts_rollout_length < 0) {
    return absl::InvalidArgumentError(
        StrCat("f-MCTS: mcts_rollouts and mcts_rollout_length must be >= 0, "
               "got ",
               o.mcts_rollouts, " and ", o.mcts_rollout_length));
  }
  if (!(o.mcts_gamma >= 0 && o.mcts_gamma <= 1)) {
    return absl::InvalidArgumentError(
        StrCat("f-MCTS: mcts_gamma must be in [0, 1], got ", o.mcts_gamma));
  }
  if (!(o.mcts_c2 > 0) || !std::isfinite(o.mcts_c1)) {
    return absl::InvalidArgumentError(
        StrCat("f-MCTS: mcts_c1 must be finite and mcts_c2 > 0, got ",
               o.mcts_c1, " and ", o.mcts_c2));
  }
  if (o.threads < 0) {
    return absl::InvalidArgumentError(
        StrCat("f-MCTS: threads must be >= 0, got ", o.threads));
  }
  if (!(o.time_limit_seconds >= 0)) {
    return absl::InvalidArgumentError(StrCat(
        "f-MCTS: time_limit_seconds must be >= 0, got ", o.time_limit_seconds));
  }
  return absl::OkStatus();
}

class FmctsSearch {
 public:
  FmctsSearch(const AgentOptions& options, FmctsStats* stats)
      : o_(options), stats_(stats), rng_(options.seed) {}

  absl::StatusOr<SearchResult> Run(const Env& start);

 private:
  struct PathStep {
    FmctsNode* node;
    std::vector<int64_t> decision;
    double reward;
  };

  bool TimeUp();
  double Elapsed() const {
    return std::chrono::duration<double>(Clock::now() - t0_).count();
  }
  double Scale() const {
    return tree_->start_seconds() > 0 ? tree_->start_seconds() : 1.0;
  }
  absl::Status Simulate();
  std::vector<int64_t> Select(const FmctsNode& n) const;
  std::vector<int64_t> CommitDecision(const FmctsNode& n) const;
  absl::StatusOr<double> Expand(FmctsNode* n);
  absl::Status ApplyPrior(FmctsNode* n, double* value);
  // One uniform rollout from a fork of a leaf; runs on worker threads, so
  // it touches nothing shared but the time limit.
  struct RolloutResult {
    absl::Status status;
    double end_seconds = 0;
    // With a discount, every step's seconds: the return is worked out
    // from them once the leaf is priced (see RolloutReturn).
    std::vector<double> seconds;
    int64_t steps = 0;
    int64_t evaluations = 0;
    std::vector<std::vector<int64_t>> decisions;
    std::unique_ptr<Env> env;
    // The last step was priced with Env::StepThenStop and its rest of the
    // pipeline reached a dry pass: Step() might have paused there, so
    // whether the decisions end the pipeline is not known (env is done
    // either way).
    bool end_unsure = false;
  };
  RolloutResult Rollout(std::unique_ptr<Env> env, uint64_t seed);
  // A rollout's discounted sum of rewards from a leaf of `leaf_seconds`.
  double RolloutReturn(const RolloutResult& r, double leaf_seconds) const;
  // The mean of the leaf's rollouts; prices the leaf beside them when it
  // is unpriced.
  absl::StatusOr<double> RolloutValue(FmctsNode& leaf);
  // Prices an unpriced node here (one StopSeconds()).
  absl::Status Price(FmctsNode* n);
  void Backup(double leaf_value);
  void RecordNode(const FmctsNode* n);
  absl::Status CompleteWithPickFirst(const FmctsNode& from);
  void RecordEnd(double seconds, const FmctsNode* from,
                 const std::vector<std::vector<int64_t>>* tail, const Env& env);
  void Progress(int64_t steps);

  const AgentOptions& o_;
  FmctsStats* stats_;
  std::mt19937_64 rng_;
  std::unique_ptr<FmctsTree> tree_;
  Clock::time_point t0_;
  std::atomic<bool> timed_out_ = false;
  int64_t threads_ = 1;
  // Per rollout thread (index 0 unused): an environment whose pipeline and
  // evaluator that thread's forks use.
  std::vector<std::unique_ptr<Env>> worker_resources_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<PathStep> path_;
  // Best end state evaluated: its time and trajectory.
  double best_seconds_ = std::numeric_limits<double>::infinity();
  std::vector<std::vector<int64_t>> best_trajectory_;
  std::unique_ptr<Env> best_env_;
};

bool FmctsSearch::TimeUp() {
  if (!timed_out_ && o_.time_limit_seconds > 0 &&
      Elapsed() >= o_.time_limit_seconds) {
    timed_out_ = true;
  }
  return timed_out_;
}

std::vector<int64_t> FmctsSearch::Select(const FmctsNode& n) const {
  std::vector<int64_t> d(n.choice_counts.size());
  for (size_t j = 0; j < d.size(); ++j) {
    const int64_t b = n.offsets[j];
    const size_t k = static_cast<size_t>(n.choice_counts[j]);
    d[j] = FmctsSelectChoice(std::span(n.visits).subspan(b, k),
                             std::span(n.value_sums).subspan(b, k),
                             std::span(n.priors).subspan(b, k), tree_->minmax(),
                             o_.mcts_c1, o_.mcts_c2);
  }
  return d;
}

std::vector<int64_t> FmctsSearch::CommitDecision(const FmctsNode& n) const {
  std::vector<int64_t> d(n.choice_counts.size());
  for (size_t j = 0; j < d.size(); ++j) {
    const int64_t b = n.offsets[j];
    const size_t k = static_cast<size_t>(n.choice_counts[j]);
    d[j] = FmctsCommitChoice(std::span(n.visits).subspan(b, k),
                             std::span(n.value_sums).subspan(b, k));
  }
  return d;
}

void FmctsSearch::RecordEnd(double seconds, const FmctsNode* from,
                            const std::vector<std::vector<int64_t>>* tail,
                            const Env& env) {
  if (!(seconds < best_seconds_)) return;
  best_seconds_ = seconds;
  // Improvements are rare: a copy each is cheaper than replaying the
  // trajectory at the end.
  best_env_ = env.Fork();
  best_trajectory_ = FmctsTree::Trajectory(from);
  if (tail != nullptr) {
    best_trajectory_.insert(best_trajectory_.end(), tail->begin(), tail->end());
  }
}

absl::Status FmctsSearch::CompleteWithPickFirst(const FmctsNode& from) {
  std::unique_ptr<Env> env = from.env->Fork();
  std::vector<JointDecision> tail;
  HLOGYM_RETURN_IF_ERROR(FinishWithPickFirst(*env, &tail));
  tree_->add_evaluations(1);
  HLOGYM_ASSIGN_OR_RETURN(double seconds, env->Seconds());
  RecordEnd(seconds, &from, &tail, *env);
  return absl::OkStatus();
}

void FmctsSearch::RecordNode(const FmctsNode* n) {
  if (n->done) RecordEnd(n->seconds, n, nullptr, *n->env);
}

absl::Status FmctsSearch::ApplyPrior(FmctsNode* n, double* value) {
  ++stats_->prior_calls;
  HLOGYM_ASSIGN_OR_RETURN(PolicyValue pv, o_.prior(*n->env));
  if (pv.priors.size() != n->choice_counts.size()) {
    return absl::InvalidArgumentError(
        StrCat("f-MCTS prior: ", pv.priors.size(), " prior vectors for ",
               n->choice_counts.size(), " alternatives nodes"));
  }
  for (size_t j = 0; j < pv.priors.size(); ++j) {
    const std::vector<double>& w = pv.priors[j];
    if (static_cast<int64_t>(w.size()) != n->choice_counts[j]) {
      return absl::InvalidArgumentError(
          StrCat("f-MCTS prior: node ", j, " has ", n->choice_counts[j],
                 " choices but ", w.size(), " prior weights"));
    }
    double sum = 0;
    for (double x : w) {
      if (!(x >= 0) || !std::isfinite(x)) {
        return absl::InvalidArgumentError(
            StrCat("f-MCTS prior: node ", j,
                   " has a negative or non-finite weight ", x));
      }
      sum += x;
    }
    double* p = n->priors.data() + n->offsets[j];
    for (size_t a = 0; a < w.size(); ++a) {
      // All-zero weights: no preference.
      p[a] = sum > 0 ? w[a] / sum : 1.0 / static_cast<double>(w.size());
    }
  }
  if (!std::isfinite(pv.value)) {
    return absl::InvalidArgumentError(
        StrCat("f-MCTS prior: non-finite value ", pv.value));
  }
  *value = pv.value / Scale();
  return absl::OkStatus();
}

FmctsSearch::RolloutResult FmctsSearch::Rollout(std::unique_ptr<Env> env,
                                                uint64_t seed) {
  RolloutResult r;
  std::mt19937_64 rng(seed);
  const bool discounted = o_.mcts_gamma != 1.0;
  auto fail = [&](absl::Status st) {
    r.status = std::move(st);
    return std::move(r);
  };
  // The time limit cuts a rollout short (it then ends at a paused state).
  bool stopped = false;
  for (int64_t k = 0; k < o_.mcts_rollout_length && env->paused() && !TimeUp();
       ++k) {
    std::vector<int64_t> d = env->ChoiceCounts();
    for (int64_t& c : d) {
      c = c > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(c)) : 0;
    }
    absl::StatusOr<double> s = 0.0;
    if (k + 1 == o_.mcts_rollout_length) {
      // The last step is only priced: the same end and price as Step()
      // then StopSeconds(), without the dry run that pricing prunes.
      stopped = true;
      s = env->StepThenStop(d, &r.end_unsure);
    } else if (absl::Status st = env->Step(d).status(); !st.ok()) {
      return fail(st);
    } else if (discounted) {
      s = env->StopSeconds();
    }
    if (!s.ok()) return fail(s.status());
    r.decisions.push_back(std::move(d));
    ++r.steps;
    if (discounted) {
      ++r.evaluations;
      r.seconds.push_back(*s);
    }
    if (discounted || stopped) r.end_seconds = *s;
  }
  if (r.decisions.empty()) return r;
  if (!discounted) {
    // The rewards telescope: one evaluation at the end.
    ++r.evaluations;
    if (!stopped) {
      absl::StatusOr<double> s = env->StopSeconds();
      if (!s.ok()) return fail(s.status());
      r.end_seconds = *s;
    }
  }
  r.env = std::move(env);
  return r;
}

double FmctsSearch::RolloutReturn(const RolloutResult& r,
                                  double leaf_seconds) const {
  if (r.decisions.empty()) return 0;  // no step taken
  // Without a discount the rewards telescope.
  if (o_.mcts_gamma == 1.0) return (leaf_seconds - r.end_seconds) / Scale();
  double value = 0, discount = 1, prev = leaf_seconds;
  for (double s : r.seconds) {
    value += discount * (prev - s) / Scale();
    discount *= o_.mcts_gamma;
    prev = s;
  }
  return value;
}

absl::Status FmctsSearch::Price(FmctsNode* n) {
  if (n->priced) return absl::OkStatus();
  HLOGYM_ASSIGN_OR_RETURN(double seconds, n->env->StopSeconds());
  tree_->SetSeconds(n, seconds);
  return absl::OkStatus();
}

absl::StatusOr<double> FmctsSearch::RolloutValue(FmctsNode& leaf) {
  // Seeds are drawn here, in order, so the result does not depend on the
  // number of threads. The threads take rollouts in turn as they finish,
  // which balances rollouts of different lengths, and each forks the leaf
  // for its own rollout: a worker's fork uses that worker's pipeline
  // instance and evaluator (thread 0 is this one, sharing the tree's).
  // Forking only reads the leaf, so the threads fork it at once. An
  // unpriced leaf is priced by one more job, taken last: it fills the time
  // a thread would otherwise wait for the other's last rollout. Rewards
  // are worked out once it is known.
  const int64_t count = TimeUp() ? 1 : o_.mcts_rollouts;
  const int64_t jobs = count + (leaf.priced ? 0 : 1);
  const int64_t threads = std::min<int64_t>(threads_, jobs);
  std::vector<uint64_t> seeds(count);
  for (int64_t i = 0; i < count; ++i) seeds[i] = rng_();
  std::vector<RolloutResult> results(count);
  absl::StatusOr<double> leaf_seconds = leaf.seconds;
  std::atomic<int64_t> next = 0;
  auto work = [&](int64_t t) {
    for (int64_t i = next++; i < jobs; i = next++) {
      std::unique_ptr<Env> env;
      absl::Status forked;
      if (t == 0) {
        env = leaf.env->Fork();
      } else if (absl::StatusOr<std::unique_ptr<Env>> e =
                     leaf.env->ForkSharing(*worker_resources_[t]);
                 e.ok()) {
        env = *std::move(e);
      } else {
        forked = e.status();
      }
      if (i == count) {
        leaf_seconds = forked.ok() ? env->StopInPlace() : forked;
      } else if (!forked.ok()) {
        results[i].status = forked;
      } else {
        results[i] = Rollout(std::move(env), seeds[i]);
      }
    }
  };
  pool_->Run(threads, work);
  HLOGYM_RETURN_IF_ERROR(leaf_seconds.status());
  if (!leaf.priced) tree_->SetSeconds(&leaf, *leaf_seconds);
  double sum = 0;
  for (RolloutResult& r : results) {
    HLOGYM_RETURN_IF_ERROR(r.status);
    ++stats_->rollouts;
    stats_->rollout_steps += r.steps;
    tree_->add_evaluations(r.evaluations);
    sum += RolloutReturn(r, leaf.seconds);
    if (r.env == nullptr || !r.env->done()) continue;
    if (!r.end_unsure) {
      RecordEnd(r.end_seconds, &leaf, &r.decisions, *r.env);
    } else if (r.end_seconds < best_seconds_) {
      // A better end, if the decisions end the pipeline (rare): replay
      // them to learn whether they do.
      std::unique_ptr<Env> replay = leaf.env->Fork();
      for (const std::vector<int64_t>& d : r.decisions) {
        HLOGYM_RETURN_IF_ERROR(replay->Step(d).status());
      }
      if (replay->done()) {
        RecordEnd(r.end_seconds, &leaf, &r.decisions, *replay);
      }
    }
  }
  return sum / static_cast<double>(count);
}

absl::StatusOr<double> FmctsSearch::Expand(FmctsNode* n) {
  n->expanded = true;
  if (n->done) return 0.0;
  double value = 0;
  if (o_.prior) {
    HLOGYM_RETURN_IF_ERROR(Price(n));
    HLOGYM_RETURN_IF_ERROR(ApplyPrior(n, &value));
  } else if (o_.mcts_rollouts > 0) {
    HLOGYM_ASSIGN_OR_RETURN(value, RolloutValue(*n));
  } else {
    HLOGYM_RETURN_IF_ERROR(Price(n));
  }
  n->value = value;
  return value;
}

void FmctsSearch::Backup(double leaf_value) {
  double g = leaf_value;
  for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
    g = it->reward + o_.mcts_gamma * g;
    FmctsNode* n = it->node;
    ++n->simulations;
    for (size_t j = 0; j < it->decision.size(); ++j) {
      const int64_t i = n->offsets[j] + it->decision[j];
      ++n->visits[i];
      n->value_sums[i] += g;
      tree_->minmax().Update(n->value_sums[i] / n->visits[i]);
    }
  }
}

absl::Status FmctsSearch::Simulate() {
  path_.clear();
  FmctsNode* node = tree_->root();
  double leaf = 0;
  while (true) {
    if (node->done) break;  // worth 0
    if (!node->expanded) {
      HLOGYM_ASSIGN_OR_RETURN(leaf, Expand(node));
      // A leaf added by this simulation was priced by Expand, which set
      // the reward of the step into it.
      if (!path_.empty()) {
        const PathStep& s = path_.back();
        path_.back().reward = s.node->children.at(s.decision).reward;
      }
      break;
    }
    std::vector<int64_t> d = Select(*node);
    HLOGYM_ASSIGN_OR_RETURN(FmctsEdge e,
                            tree_->Child(node, d, /*defer_pricing=*/true));
    path_.push_back({node, std::move(d), e.reward});
    RecordNode(e.child);
    // A state already on this path closes a cycle: stop there.
    bool cycle = false;
    for (const PathStep& s : path_) cycle |= s.node == e.child;
    if (cycle) break;
    node = e.child;
  }
  Backup(leaf);
  return absl::OkStatus();
}

void FmctsSearch::Progress(int64_t steps) {
  if (!o_.progress) return;
  SearchProgress p;
  p.evaluations = tree_->evaluations();
  p.elapsed_seconds = Elapsed();
  p.best_seconds = best_seconds_;
  p.steps = steps;
  o_.progress(p);
}

absl::StatusOr<SearchResult> FmctsSearch::Run(const Env& start) {
  t0_ = Clock::now();
  HLOGYM_RETURN_IF_ERROR(ValidateOptions(o_));
  HLOGYM_ASSIGN_OR_RETURN(tree_, FmctsTree::Create(start));
  RecordNode(tree_->root());
  // Pick-first's end is priced too (one evaluation) and returned when it
  // is faster. Uniform rollouts can see nothing but blow-ups: on graphs
  // where random decisions duplicate without end, the committed end was
  // 6 to 10 times slower than pick-first's (28 of the 1,000 table graphs).
  if (!tree_->root()->done) {
    HLOGYM_RETURN_IF_ERROR(CompleteWithPickFirst(*tree_->root()));
  }
  threads_ = o_.threads > 0 ? o_.threads : Parallelism();
  if (o_.prior || o_.mcts_rollouts <= 1) threads_ = 1;
  worker_resources_.resize(threads_);
  pool_ = std::make_unique<ThreadPool>(threads_);
  for (int64_t t = 1; t < threads_; ++t) {
    HLOGYM_ASSIGN_OR_RETURN(worker_resources_[t],
                            tree_->root()->env->ForkIndependent());
  }

  int64_t budget = o_.budget > 0 ? o_.budget : 400;
  const int64_t floor = std::min(budget, o_.mcts_min_budget);
  int64_t steps = 0;
  bool completed = false;
  // The states committed so far. States are merged by DagHash, so a commit
  // can lead back to one of them (A -> B -> A); once simulations stop (the
  // time limit) the statistics no longer change and such a cycle would be
  // committed forever.
  absl::flat_hash_set<const FmctsNode*> committed = {tree_->root()};
  bool cycle_end = false;
  while (!tree_->root()->done) {
    int64_t sims = 0;
    for (; sims < budget && !TimeUp(); ++sims) {
      HLOGYM_RETURN_IF_ERROR(Simulate());
    }
    if (TimeUp() && !completed) {
      // Out of time: the remaining commits (no simulations) keep every
      // original, so also finish with pick-first from here; the faster
      // end is returned.
      completed = true;
      HLOGYM_RETURN_IF_ERROR(CompleteWithPickFirst(*tree_->root()));
    }
    stats_->simulations_per_step.push_back(sims);
    FmctsNode* root = tree_->root();
    std::vector<int64_t> d = CommitDecision(*root);
    HLOGYM_ASSIGN_OR_RETURN(FmctsEdge e, tree_->Child(root, d));
    if (committed.contains(e.child)) {
      // The picks led back to this state or an earlier committed one: keep
      // every original, which ends the decision loop.
      ++stats_->commit_returns;
      std::fill(d.begin(), d.end(), 0);
      HLOGYM_ASSIGN_OR_RETURN(e, tree_->Child(root, d));
      if (committed.contains(e.child)) {
        // Keeping every original leads back too (a merged state's pipeline
        // is at an earlier round): committing cannot leave the cycle. End
        // with pick-first from here; the best end seen is returned.
        HLOGYM_RETURN_IF_ERROR(CompleteWithPickFirst(*root));
        ++stats_->commit_cycles;
        cycle_end = true;
        break;
      }
    }
    committed.insert(e.child);
    RecordNode(e.child);
    tree_->set_root(e.child);
    ++steps;
    Progress(steps);
    budget = std::max(budget / 2, floor);
  }

  // The committed end, unless an end state seen on the way is strictly
  // faster.
  const FmctsNode* end = tree_->root();
  stats_->committed_seconds = end->seconds;
  SearchResult result;
  std::vector<std::vector<int64_t>> trajectory;
  // After a commit cycle the root is still paused: the best end seen
  // (pick-first's from there at least) is the result.
  if (cycle_end || best_seconds_ < end->seconds) {
    result.best = std::move(best_env_);
    result.best_seconds = best_seconds_;
    trajectory = std::move(best_trajectory_);
  } else {
    result.best = end->env->Fork();
    result.best_seconds = end->seconds;
    trajectory = FmctsTree::Trajectory(end);
  }
  result.trajectory = std::move(trajectory);
  result.evaluations = tree_->evaluations();
  result.states_visited = tree_->size();
  result.timed_out = timed_out_;
  stats_->tree_states = tree_->size();
  stats_->merged_edges = tree_->merged_edges();
  result.search_seconds = Elapsed();
  result.threads = threads_;
  return result;
}

}  // namespace

FmctsAgent::FmctsAgent(AgentOptions options) : options_(std::move(options)) {}

absl::StatusOr<SearchResult> FmctsAgent::Search(const Env& start) {
  stats_ = FmctsStats{};
  FmctsSearch search(options_, &stats_);
  return search.Run(start);
}

std::unique_ptr<Agent> MakeFmctsAgent(AgentOptions options) {
  return std::make_unique<FmctsAgent>(std::move(options));
}

}  // namespace hlogym
