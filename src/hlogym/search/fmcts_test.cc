#include "hlogym/search/fmcts.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hlogym/env/test_modules.h"
#include "hlogym/ir/parallel.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/pass.h"

namespace hlogym {
namespace {

// A producer with two users in an elementwise chain.
constexpr std::string_view kChain = R"(
HloModule chain
ENTRY main {
  p0 = f32[4096] parameter(0)
  p1 = f32[4096] parameter(1)
  e = f32[4096] exponential(p0)
  a = f32[4096] add(e, p1)
  n = f32[4096] negate(e)
  m = f32[4096] multiply(a, n)
  l = f32[4096] log(m)
  ROOT t = (f32[4096], f32[4096]) tuple(l, a)
}
)";

// A reduction with a producer and an epilogue.
constexpr std::string_view kReduce = R"(
HloModule reduce_epilogue
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p0 = f32[128,256] parameter(0)
  z = f32[] constant(0)
  e = f32[128,256] exponential(p0)
  r = f32[128] reduce(e, z), dimensions={1}, to_apply=add
  s = f32[128] sqrt(r)
  ROOT n = f32[128] negate(s)
}
)";

// A broadcast feeding two consumers.
constexpr std::string_view kBroadcast = R"(
HloModule broadcast_two_users
ENTRY main {
  p0 = f32[256] parameter(0)
  p1 = f32[128,256] parameter(1)
  b = f32[128,256] broadcast(p0), dimensions={1}
  a = f32[128,256] add(b, p1)
  m = f32[128,256] multiply(b, p1)
  ROOT t = (f32[128,256], f32[128,256]) tuple(a, m)
}
)";

// An elementwise chain of 8 stages, each with a second user.
std::string LongChain() {
  std::string text =
      "HloModule long_chain\nENTRY main {\n"
      "  p0 = f32[4096] parameter(0)\n  p1 = f32[4096] parameter(1)\n";
  const char* ops[] = {"exponential", "negate",      "log",    "sqrt",
                       "tanh",        "exponential", "negate", "log"};
  std::string prev = "p0", outs, types;
  for (int i = 0; i < 8; ++i) {
    StrAppend(&text, "  x", i, " = f32[4096] ", ops[i], "(", prev, ")\n");
    StrAppend(&text, "  y", i, " = f32[4096] add(x", i, ", p1)\n");
    StrAppend(&outs, i ? ", " : "", "y", i);
    StrAppend(&types, i ? ", " : "", "f32[4096]");
    prev = StrCat("x", i);
  }
  StrAppend(&text, "  ROOT t = (", types, ") tuple(", outs, ")\n}\n");
  return text;
}

// The producer-consumer decision pipeline: the hand-counted choices and
// trajectories below are those of its smaller decision space (sibling
// candidates are covered in the GeneralFusionSiblings tests and by the
// corpus agent tests).
std::unique_ptr<Env> Start(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Env>> env = Env::FromText(text);
  EXPECT_TRUE(env.ok()) << env.status();
  if (!env.ok()) return nullptr;
  absl::StatusOr<bool> paused =
      (*env)->StartPipeline("general-fusion-vertical");
  EXPECT_TRUE(paused.ok()) << paused.status();
  EXPECT_TRUE(paused.value_or(false));
  return std::move(*env);
}

// Choice 1 at every node until the end, stepping a fork by hand.
double PickFirstSeconds(const Env& start) {
  std::unique_ptr<Env> env = start.Fork();
  while (env->paused()) {
    std::vector<int64_t> d(env->ChoiceCounts().size(), 1);
    absl::StatusOr<StepResult> r = env->Step(d);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return 0;
  }
  absl::StatusOr<double> s = env->Seconds();
  EXPECT_TRUE(s.ok()) << s.status();
  return s.value_or(0);
}

// Replays a trajectory from the start; returns the end's modelled seconds.
double Replay(const Env& start,
              const std::vector<std::vector<int64_t>>& trajectory,
              uint64_t* hash) {
  std::unique_ptr<Env> env = start.Fork();
  for (const std::vector<int64_t>& d : trajectory) {
    absl::StatusOr<StepResult> r = env->Step(d);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return 0;
  }
  EXPECT_TRUE(env->done());
  *hash = env->Hash();
  return env->Seconds().value_or(0);
}

// A prior with all weight on `choice` at every node, and value `value`.
PolicyValueFn PriorOn(int64_t choice, double value) {
  return [choice, value](const Env& env) -> absl::StatusOr<PolicyValue> {
    PolicyValue pv;
    for (int64_t c : env.ChoiceCounts()) {
      std::vector<double> w(c, 0.0);
      w[choice] = 1.0;
      pv.priors.push_back(w);
    }
    pv.value = value;
    return pv;
  };
}

// ---- Selection.

TEST(FmctsSelection, PuctScoreByHand) {
  // 0.5 + 0.25 * sqrt(4) / (1 + 1) * (1.25 + log((4 + 1 + 1) / 1))
  //   = 0.5 + 0.25 * (1.25 + 1.791759469228055) = 1.2604398673070136
  EXPECT_NEAR(FmctsPuctScore(0.5, 0.25, 1, 4, 1.25, 1.0), 1.2604398673070136,
              1e-12);
  // MuZero's constants: 0.3 + 0.5 * 3 / 3 * (1.25 + log(19662 / 19652))
  //   = 0.3 + 0.5 * (1.25 + 0.0005087246383308) = 0.9252543623191654
  EXPECT_NEAR(FmctsPuctScore(0.3, 0.5, 2, 9, 1.25, 19652), 0.9252543623191654,
              1e-12);
  // No visits yet: the exploration term is 0.
  EXPECT_EQ(FmctsPuctScore(0.7, 1.0, 0, 0, 1.25, 19652), 0.7);
}

TEST(FmctsSelection, MinMaxNormalizes) {
  FmctsMinMax mm;
  EXPECT_EQ(mm.Normalize(3.0), 0.0);  // nothing seen
  mm.Update(2.0);
  EXPECT_EQ(mm.Normalize(2.0), 0.0);  // one value: no range
  mm.Update(-1.0);
  mm.Update(3.0);
  EXPECT_EQ(mm.min, -1.0);
  EXPECT_EQ(mm.max, 3.0);
  EXPECT_EQ(mm.Normalize(1.0), 0.5);
  EXPECT_EQ(mm.Normalize(-1.0), 0.0);
  EXPECT_EQ(mm.Normalize(5.0), 1.0);  // clamped
}

TEST(FmctsSelection, SelectChoiceByHand) {
  FmctsMinMax mm;
  mm.Update(0.0);
  mm.Update(1.0);
  const double c = 1.25 + std::log((4.0 + 19652 + 1) / 19652);
  // Q = 0.5, 0.9, unvisited (Qn 0); total visits 4, sqrt = 2.
  const std::vector<int64_t> n = {3, 1, 0};
  const std::vector<double> w = {1.5, 0.9, 0.0};
  // Scores: 0.5 + 0.5*2/4*c = 0.8126, 0.9 + 0.3*2/2*c = 1.2751,
  // 0 + 0.2*2/1*c = 0.5001.
  EXPECT_EQ(FmctsSelectChoice(n, w, std::vector<double>{0.5, 0.3, 0.2}, mm,
                              1.25, 19652),
            1);
  // A strong prior on the unvisited choice: 0 + 0.9*2*c = 2.2505 wins over
  // 0.9 + 0.05*c = 0.9625 and 0.5 + 0.05*0.5*c = 0.5313.
  EXPECT_EQ(FmctsSelectChoice(n, w, std::vector<double>{0.05, 0.05, 0.9}, mm,
                              1.25, 19652),
            2);
  EXPECT_NEAR(FmctsPuctScore(0, 0.9, 0, 4, 1.25, 19652), 0.9 * 2 * c, 1e-12);
  // No visits at all: every score is 0, the lowest index wins.
  const std::vector<int64_t> none = {0, 0, 0};
  const std::vector<double> zero = {0, 0, 0};
  EXPECT_EQ(FmctsSelectChoice(none, zero, std::vector<double>{0.2, 0.5, 0.3},
                              mm, 1.25, 19652),
            0);
  // Equal scores: the lowest index.
  EXPECT_EQ(FmctsSelectChoice(std::vector<int64_t>{1, 1},
                              std::vector<double>{0.5, 0.5},
                              std::vector<double>{0.5, 0.5}, mm, 1.25, 19652),
            0);
}

TEST(FmctsSelection, CommitChoiceByHand) {
  // Most visited.
  EXPECT_EQ(FmctsCommitChoice(std::vector<int64_t>{2, 7, 5},
                              std::vector<double>{2, 0.7, 4}),
            1);
  // Equal visits: the highest Q (0.4 against 0.1).
  EXPECT_EQ(FmctsCommitChoice(std::vector<int64_t>{1, 5, 5},
                              std::vector<double>{9, 0.5, 2}),
            2);
  // Equal visits and Q: the lowest index.
  EXPECT_EQ(FmctsCommitChoice(std::vector<int64_t>{0, 4, 4},
                              std::vector<double>{0, 1, 1}),
            1);
  EXPECT_EQ(
      FmctsCommitChoice(std::vector<int64_t>{0, 0}, std::vector<double>{0, 0}),
      0);
}

// ---- The DAG.

TEST(FmctsTree, DeduplicatesStatesByDagHash) {
  std::unique_ptr<Env> start = Start(kBroadcast);
  ASSERT_NE(start, nullptr);
  ASSERT_EQ(start->ChoiceCounts(), (std::vector<int64_t>{2, 2, 2, 2}));
  absl::StatusOr<std::unique_ptr<FmctsTree>> tree = FmctsTree::Create(*start);
  ASSERT_TRUE(tree.ok()) << tree.status();
  FmctsTree& t = **tree;
  FmctsNode* root = t.root();
  EXPECT_EQ(t.size(), 1);
  EXPECT_EQ(root->num_alternatives(), 4);
  EXPECT_EQ(root->priors, std::vector<double>(8, 0.5));

  // Both broadcast fusions at once: two joint decisions (node 0 differs)
  // give one end state.
  absl::StatusOr<FmctsEdge> both = t.Child(root, {0, 0, 1, 1});
  ASSERT_TRUE(both.ok()) << both.status();
  FmctsNode* end = both->child;
  EXPECT_TRUE(end->done);
  absl::StatusOr<FmctsEdge> both2 = t.Child(root, {1, 0, 1, 1});
  ASSERT_TRUE(both2.ok());
  EXPECT_EQ(both2->child, end);
  EXPECT_EQ(t.size(), 2);
  EXPECT_EQ(t.merged_edges(), 1);
  EXPECT_EQ(end->parents, std::vector<FmctsNode*>{root});
  EXPECT_EQ(root->children.size(), 2u);

  // One fusion, then the other: a second parent.
  absl::StatusOr<FmctsEdge> first_m = t.Child(root, {0, 0, 0, 1});
  ASSERT_TRUE(first_m.ok());
  FmctsNode* m = first_m->child;
  ASSERT_FALSE(m->done);
  ASSERT_EQ(m->choice_counts, std::vector<int64_t>{2});
  absl::StatusOr<FmctsEdge> then_a = t.Child(m, {1});
  ASSERT_TRUE(then_a.ok());
  EXPECT_EQ(then_a->child, end);
  EXPECT_EQ(end->parents, (std::vector<FmctsNode*>{root, m}));
  EXPECT_EQ(t.size(), 3);
  EXPECT_EQ(t.merged_edges(), 2);
  EXPECT_EQ(t.Find(end->hash, true), end);
  // Rewards are the seconds saved over T(start).
  EXPECT_DOUBLE_EQ(then_a->reward,
                   (m->seconds - end->seconds) / t.start_seconds());
  EXPECT_DOUBLE_EQ(both->reward,
                   (root->seconds - end->seconds) / t.start_seconds());
  // The end state's trajectory is the path that created it.
  EXPECT_EQ(FmctsTree::Trajectory(end),
            (std::vector<std::vector<int64_t>>{{0, 0, 1, 1}}));
  // An existing edge is looked up, not stepped again.
  const int64_t evals = t.evaluations();
  ASSERT_TRUE(t.Child(root, {0, 0, 1, 1}).ok());
  EXPECT_EQ(t.evaluations(), evals);
}

// A child added unpriced waits for SetSeconds: then it has the seconds
// StopSeconds() gives, its edge the reward, and the tree one evaluation
// more. Done states are priced at once.
TEST(FmctsTree, DeferredPricingSetsTheEdgeLater) {
  std::unique_ptr<Env> start = Start(kBroadcast);
  ASSERT_NE(start, nullptr);
  absl::StatusOr<std::unique_ptr<FmctsTree>> tree = FmctsTree::Create(*start);
  ASSERT_TRUE(tree.ok()) << tree.status();
  FmctsTree& t = **tree;
  FmctsNode* root = t.root();
  const int64_t evals = t.evaluations();
  absl::StatusOr<FmctsEdge> e =
      t.Child(root, {0, 0, 0, 1}, /*defer_pricing=*/true);
  ASSERT_TRUE(e.ok()) << e.status();
  FmctsNode* m = e->child;
  ASSERT_FALSE(m->done);
  EXPECT_FALSE(m->priced);
  EXPECT_TRUE(std::isnan(e->reward));
  EXPECT_EQ(t.evaluations(), evals);
  absl::StatusOr<double> seconds = m->env->StopSeconds();
  ASSERT_TRUE(seconds.ok());
  t.SetSeconds(m, *seconds);
  EXPECT_TRUE(m->priced);
  EXPECT_EQ(m->seconds, *seconds);
  EXPECT_EQ(t.evaluations(), evals + 1);
  EXPECT_DOUBLE_EQ(root->children.at({0, 0, 0, 1}).reward,
                   (root->seconds - *seconds) / t.start_seconds());
  // A done child is priced however it is asked for.
  absl::StatusOr<FmctsEdge> end =
      t.Child(root, {0, 0, 1, 1}, /*defer_pricing=*/true);
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->child->done);
  EXPECT_TRUE(end->child->priced);
  EXPECT_DOUBLE_EQ(end->reward,
                   (root->seconds - end->child->seconds) / t.start_seconds());
}

// ---- The agent.

TEST(Fmcts, NeverWorseThanPickFirst) {
  for (std::string_view text : {kChain, kReduce, kBroadcast}) {
    std::unique_ptr<Env> start = Start(text);
    ASSERT_NE(start, nullptr);
    const double pick_first = PickFirstSeconds(*start);
    const uint64_t start_hash = start->Hash();
    FmctsAgent agent(AgentOptions{});
    absl::StatusOr<SearchResult> r = agent.Search(*start);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(start->Hash(), start_hash);  // the start is not changed
    EXPECT_LE(r->best_seconds, pick_first) << start->module().name();
    ASSERT_NE(r->best, nullptr);
    EXPECT_TRUE(r->best->done());
    EXPECT_EQ(r->best->Seconds().value_or(-1), r->best_seconds);
    uint64_t hash = 0;
    EXPECT_EQ(Replay(*start, r->trajectory, &hash), r->best_seconds);
    EXPECT_EQ(hash, r->best->Hash());
    EXPECT_GT(r->evaluations, 0);
    EXPECT_GE(r->states_visited, 2);
    EXPECT_FALSE(r->timed_out);
    EXPECT_LE(r->best_seconds, agent.stats().committed_seconds);
  }
}

TEST(Fmcts, SameSeedSameResult) {
  std::unique_ptr<Env> start = Start(kChain);
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  o.seed = 7;
  o.budget = 60;
  FmctsAgent a(o), b(o);
  absl::StatusOr<SearchResult> ra = a.Search(*start);
  absl::StatusOr<SearchResult> rb = b.Search(*start);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ(ra->trajectory, rb->trajectory);
  EXPECT_EQ(ra->best_seconds, rb->best_seconds);
  EXPECT_EQ(ra->evaluations, rb->evaluations);
  EXPECT_EQ(ra->states_visited, rb->states_visited);
  EXPECT_EQ(a.stats().rollout_steps, b.stats().rollout_steps);
  EXPECT_EQ(a.stats().simulations_per_step, b.stats().simulations_per_step);
  // The agent can be reused: a second search gives the same again.
  absl::StatusOr<SearchResult> ra2 = a.Search(*start);
  ASSERT_TRUE(ra2.ok());
  EXPECT_EQ(ra2->trajectory, ra->trajectory);
  EXPECT_EQ(ra2->best_seconds, ra->best_seconds);
}

// Also with discounted returns, which add up every rollout step's price
// once the leaf, priced beside the rollouts on any thread, is known.
TEST(Fmcts, ThreadCountDoesNotChangeTheResult) {
  for (std::string_view text : {kChain, kReduce, kBroadcast})
    for (double gamma : {1.0, 0.9}) {
      std::unique_ptr<Env> start = Start(text);
      ASSERT_NE(start, nullptr);
      std::vector<SearchResult> results;
      std::vector<FmctsStats> stats;
      for (int64_t threads : {1, 2, 3}) {
        AgentOptions o;
        o.seed = 11;
        o.budget = 40;
        o.threads = threads;
        o.mcts_gamma = gamma;
        FmctsAgent agent(o);
        absl::StatusOr<SearchResult> r = agent.Search(*start);
        ASSERT_TRUE(r.ok()) << r.status();
        results.push_back(std::move(r).value());
        stats.push_back(agent.stats());
      }
      for (size_t i = 1; i < results.size(); ++i) {
        EXPECT_EQ(results[i].trajectory, results[0].trajectory);
        EXPECT_EQ(results[i].best_seconds, results[0].best_seconds);
        EXPECT_EQ(results[i].evaluations, results[0].evaluations);
        EXPECT_EQ(results[i].states_visited, results[0].states_visited);
        EXPECT_EQ(results[i].best->Hash(), results[0].best->Hash());
        EXPECT_EQ(stats[i].rollouts, stats[0].rollouts);
        EXPECT_EQ(stats[i].rollout_steps, stats[0].rollout_steps);
      }
      EXPECT_GT(stats[0].rollout_steps, 0);
    }
  AgentOptions bad;
  bad.threads = -1;
  std::unique_ptr<Env> start = Start(kChain);
  EXPECT_FALSE(FmctsAgent(bad).Search(*start).ok());
}

// Threads 0 takes the process's Parallelism(), which HLOGYM_THREADS and
// SetParallelism cap; a given count is kept; a prior runs on one thread.
TEST(Fmcts, DefaultThreadCountFollowsParallelism) {
  std::unique_ptr<Env> start = Start(kChain);
  ASSERT_NE(start, nullptr);
  auto threads_of = [&](int64_t threads, bool prior) -> int64_t {
    AgentOptions o;
    o.seed = 3;
    o.budget = 8;
    o.threads = threads;
    if (prior) {
      o.prior = [](const Env& env) -> absl::StatusOr<PolicyValue> {
        PolicyValue pv;
        for (int64_t c : env.ChoiceCounts()) {
          pv.priors.push_back(std::vector<double>(c, 1.0 / c));
        }
        return pv;
      };
    }
    absl::StatusOr<SearchResult> r = FmctsAgent(o).Search(*start);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->threads : -1;
  };
  SetParallelism(3);
  EXPECT_EQ(threads_of(0, false), 3);
  EXPECT_EQ(threads_of(2, false), 2);
  EXPECT_EQ(threads_of(0, true), 1);
  SetParallelism(1);
  EXPECT_EQ(threads_of(0, false), 1);
  EXPECT_EQ(threads_of(4, false), 4);
  SetParallelism(0);
  EXPECT_EQ(threads_of(0, false), Parallelism());
}

// In a pipeline that pauses at several runs of one pass, a state can keep
// its module from one pause to the next: the tree must not take it for its
// parent (it used to fail with "keeping every original did not leave the
// state").
TEST(Fmcts, PausesOfOneModuleAreDistinctStates) {
  absl::StatusOr<std::unique_ptr<Env>> env = Env::FromText(test::kAddZero);
  ASSERT_TRUE(env.ok());
  ASSERT_TRUE((*env)->StartPipeline("algebraic-simplifier").ok());
  AgentOptions o;
  o.budget = 20;
  FmctsAgent agent(o);
  absl::StatusOr<SearchResult> r = agent.Search(**env);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->best->done());
  EXPECT_EQ(r->best->Seconds().value_or(-1), r->best_seconds);
  // Out of time at once: every commit keeps the originals, pause after
  // pause over the same module, to the end.
  o.time_limit_seconds = 1e-9;
  FmctsAgent hurried(o);
  absl::StatusOr<SearchResult> h = hurried.Search(**env);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(h->best->done());
  EXPECT_GT(hurried.stats().simulations_per_step.size(), 1u);
}

TEST(Fmcts, PriorSteersTheSearch) {
  std::unique_ptr<Env> start = Start(kChain);
  ASSERT_NE(start, nullptr);
  const std::vector<int64_t> counts = start->ChoiceCounts();
  ASSERT_EQ(counts.size(), 7u);
  // Every node keeping its original ends the pipeline at once.
  std::unique_ptr<Env> original = start->Fork();
  ASSERT_TRUE(original->Step(std::vector<int64_t>(counts.size(), 0)).ok());
  ASSERT_TRUE(original->done());
  const double original_seconds = original->Seconds().value_or(0);

  int calls = 0;
  AgentOptions o;
  o.budget = 8;
  o.prior = [&calls](const Env& env) -> absl::StatusOr<PolicyValue> {
    ++calls;
    PolicyValue pv;
    for (int64_t c : env.ChoiceCounts()) {
      std::vector<double> w(c, 0.0);
      w[0] = 3.0;  // not normalised on purpose
      pv.priors.push_back(w);
    }
    pv.value = 0;
    return pv;
  };
  FmctsAgent agent(o);
  absl::StatusOr<SearchResult> r = agent.Search(*start);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(calls, 1);  // the root only: every simulation keeps originals
  EXPECT_EQ(agent.stats().prior_calls, 1);
  EXPECT_EQ(agent.stats().rollouts, 0);
  // The tree followed the prior: it committed "keep every original". The
  // result is pick-first's end, priced before the search, which is faster.
  EXPECT_EQ(agent.stats().committed_seconds, original_seconds);
  EXPECT_EQ(r->best_seconds, PickFirstSeconds(*start));
  EXPECT_LT(r->best_seconds, original_seconds);
  EXPECT_EQ(agent.stats().simulations_per_step, std::vector<int64_t>{8});

  // Without the prior, the search finds something faster.
  AgentOptions plain;
  plain.budget = 8;
  FmctsAgent plain_agent(plain);
  absl::StatusOr<SearchResult> rp = plain_agent.Search(*start);
  ASSERT_TRUE(rp.ok());
  EXPECT_LT(rp->best_seconds, original_seconds);
  EXPECT_GT(rp->trajectory.size(), 1u);
}

TEST(Fmcts, RejectsMalformedPriors) {
  std::unique_ptr<Env> start = Start(kBroadcast);
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  o.budget = 2;
  o.prior = [](const Env&) -> absl::StatusOr<PolicyValue> {
    PolicyValue pv;
    pv.priors = {{1, 1}};  // one vector for four nodes
    return pv;
  };
  absl::StatusOr<SearchResult> r = FmctsAgent(o).Search(*start);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "f-MCTS prior: 1 prior vectors for 4 alternatives nodes");

  o.prior = [](const Env&) -> absl::StatusOr<PolicyValue> {
    return absl::UnavailableError("no model");
  };
  r = FmctsAgent(o).Search(*start);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);

  AgentOptions bad;
  bad.mcts_gamma = 1.5;
  r = FmctsAgent(bad).Search(*start);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);

  absl::StatusOr<std::unique_ptr<Env>> unstarted = Env::FromText(kBroadcast);
  ASSERT_TRUE(unstarted.ok());
  r = FmctsAgent(AgentOptions{}).Search(**unstarted);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(Fmcts, BudgetHalvesPerCommittedStep) {
  std::unique_ptr<Env> start = Start(kChain);
  ASSERT_NE(start, nullptr);
  FmctsAgent agent(AgentOptions{});
  absl::StatusOr<SearchResult> r = agent.Search(*start);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(agent.stats().simulations_per_step,
            (std::vector<int64_t>{400, 200, 100, 50}));

  // The floor: 12, 6, 3, 3, ... with mcts_min_budget 3. A prior on choice
  // 1 whose value promises more savings than any step makes keeps the
  // search fusing: it commits pick-first's five steps.
  std::unique_ptr<Env> long_start = Start(LongChain());
  ASSERT_NE(long_start, nullptr);
  AgentOptions o;
  o.budget = 12;
  o.mcts_min_budget = 3;
  o.prior = PriorOn(1, 1e-3);  // seconds, far more than the graph takes
  FmctsAgent small(o);
  r = small.Search(*long_start);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(small.stats().simulations_per_step,
            (std::vector<int64_t>{12, 6, 3, 3, 3}));
  ASSERT_EQ(r->trajectory.size(), 5u);
  for (const std::vector<int64_t>& d : r->trajectory) {
    EXPECT_EQ(d, std::vector<int64_t>(d.size(), 1));
  }
  EXPECT_EQ(r->best_seconds, PickFirstSeconds(*long_start));
}

TEST(Fmcts, TimeLimitFinishesWithTheBetterOfStoppingAndPickFirst) {
  std::unique_ptr<Env> start = Start(kChain);
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  o.time_limit_seconds = 1e-9;
  FmctsAgent agent(o);
  absl::StatusOr<SearchResult> r = agent.Search(*start);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->timed_out);
  // No simulation ran. The commits keep every original (one step to the
  // end), and the search also finishes with pick-first from the start:
  // here pick-first's end is the faster one.
  EXPECT_EQ(agent.stats().simulations_per_step, std::vector<int64_t>{0});
  EXPECT_EQ(agent.stats().committed_seconds, start->StopSeconds().value());
  EXPECT_EQ(r->best_seconds, PickFirstSeconds(*start));
  EXPECT_LT(r->best_seconds, agent.stats().committed_seconds);
  for (const std::vector<int64_t>& d : r->trajectory) {
    EXPECT_EQ(d, std::vector<int64_t>(d.size(), 1));
  }
  EXPECT_TRUE(r->best->done());
}

// Pick-first's end is priced before the search and returned when the
// search ends slower. Here a prior sends every simulation to "keep the
// original", so the committed end is the all-original one.
TEST(Fmcts, ReturnsPickFirstsEndWhenTheSearchEndsSlower) {
  std::unique_ptr<Env> start = Start(kChain);
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  o.budget = 1;
  o.mcts_min_budget = 1;
  o.prior = PriorOn(0, 0);
  FmctsAgent agent(o);
  absl::StatusOr<SearchResult> r = agent.Search(*start);
  ASSERT_TRUE(r.ok()) << r.status();
  const double pick_first = PickFirstSeconds(*start);
  EXPECT_EQ(agent.stats().committed_seconds, start->StopSeconds().value());
  EXPECT_LT(pick_first, agent.stats().committed_seconds);
  EXPECT_EQ(r->best_seconds, pick_first);
  ASSERT_FALSE(r->trajectory.empty());
  for (const std::vector<int64_t>& d : r->trajectory) {
    EXPECT_EQ(d, std::vector<int64_t>(d.size(), 1));
  }
  uint64_t hash = 0;
  EXPECT_EQ(Replay(*start, r->trajectory, &hash), pick_first);
  EXPECT_EQ(hash, r->best->Hash());
}

TEST(Fmcts, DoneStartReturnsItself) {
  absl::StatusOr<std::unique_ptr<Env>> env = Env::FromText(kBroadcast);
  ASSERT_TRUE(env.ok());
  ASSERT_TRUE((*env)->StartPipeline("xla-gpu").ok());
  ASSERT_TRUE((*env)->done());
  absl::StatusOr<SearchResult> r = FmctsAgent(AgentOptions{}).Search(**env);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->trajectory.empty());
  EXPECT_EQ(r->best_seconds, (*env)->Seconds().value_or(-1));
  EXPECT_EQ(r->best->Hash(), (*env)->Hash());
}

// A dry pass that offers add(b, a) for every add(a, b) with two different
// operands: taking it twice rebuilds the graph it started from, so
// decisions lead back to earlier states.
class SwapAddOperands : public Pass {
 public:
  std::string_view name() const override { return "test-swap-add-operands"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override {
    bool any = false;
    for (const auto& comp : module->computations()) {
      Computation* c = comp.get();
      if (c->IsFusionComputation()) continue;
      for (Instruction* i : c->MakeInstructionPostOrder()) {
        if (i->opcode() != Opcode::kAdd || i->operand(0) == i->operand(1)) {
          continue;
        }
        HLOGYM_ASSIGN_OR_RETURN(
            Instruction * swapped,
            MakeBinary(rw, Opcode::kAdd, i->operand(1), i->operand(0)));
        HLOGYM_ASSIGN_OR_RETURN(bool replaced,
                                rw.ReplaceInstruction(i, swapped));
        any |= replaced;
      }
    }
    return any;
  }
};

// Aborts the test process if it is still alive after `limit`: a search
// that never ends then fails the test instead of hanging it.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "watchdog: still running after %lld s\n",
                         static_cast<long long>(limit.count()));
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the others exist
};

// States merge by DagHash, so with the swap pass committing the swap twice
// leads back to a committed state: A -> B -> A' -> B. (A' is A in a later
// round of the decision loop, a state of its own.) A prior on the swap
// makes every simulation and commit take it. The search must neither walk
// the cycle inside a simulation nor commit it forever: the third commit
// keeps the original, which ends the decision loop.
TEST(Fmcts, CommitsThatLeadBackToACommittedStateKeepTheOriginals) {
  if (!PassRegistry::Global().Contains("test-swap-add-operands")) {
    PassRegistry::Global().Register(
        "test-swap-add-operands", "test: offers add(b, a) for add(a, b)",
        [] { return std::make_unique<SwapAddOperands>(); });
  }
  absl::StatusOr<std::unique_ptr<Env>> start = Env::FromText(R"(
HloModule swap
ENTRY main {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  ROOT a = f32[1024] add(p0, p1)
}
)");
  ASSERT_TRUE(start.ok()) << start.status();
  const uint64_t hash_a = (*start)->Hash();
  absl::StatusOr<bool> paused =
      (*start)->StartPipeline("test-swap-add-operands");
  ASSERT_TRUE(paused.ok()) << paused.status();
  ASSERT_TRUE(*paused);
  ASSERT_EQ((*start)->ChoiceCounts(), std::vector<int64_t>{2});

  AgentOptions o;
  o.budget = 8;
  o.mcts_min_budget = 4;
  o.threads = 1;
  o.prior = PriorOn(1, 0);
  FmctsAgent agent(o);
  absl::StatusOr<SearchResult> r;
  {
    Watchdog watchdog(std::chrono::seconds(60));  // the search takes ms
    r = agent.Search(**start);
  }
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(agent.stats().simulations_per_step,
            (std::vector<int64_t>{8, 4, 4}));
  EXPECT_EQ(agent.stats().commit_returns, 1);
  EXPECT_EQ(agent.stats().commit_cycles, 0);
  // Two swaps, then the originals kept: the graph it started from, run
  // through the rest of the pipeline. That end state was first reached by
  // keeping the original at the start (states merge), so the trajectory
  // returned is that one-step path to it.
  std::unique_ptr<Env> kept = (*start)->Fork();
  ASSERT_TRUE(kept->Step(std::vector<int64_t>{0}).ok());
  ASSERT_TRUE(kept->done());
  ASSERT_TRUE(r->best->done());
  EXPECT_EQ(r->best->Hash(), kept->Hash());
  EXPECT_EQ(r->trajectory, (std::vector<std::vector<int64_t>>{{0}}));
  EXPECT_EQ(r->best_seconds, agent.stats().committed_seconds);
  uint64_t end_hash = 0;
  EXPECT_EQ(Replay(**start, r->trajectory, &end_hash), r->best_seconds);
  EXPECT_EQ(end_hash, r->best->Hash());
  // The swap really changes the graph (DagHash tells add(p0, p1) from
  // add(p1, p0)); only taking it twice comes back.
  std::unique_ptr<Env> swapped = (*start)->Fork();
  ASSERT_TRUE(swapped->Apply(std::vector<int64_t>{1}).ok());
  EXPECT_NE(swapped->Hash(), hash_a);
}

TEST(Fmcts, MakeFmctsAgentNamesItself) {
  std::unique_ptr<Agent> a = MakeFmctsAgent(AgentOptions{});
  EXPECT_EQ(a->name(), "fmcts");
}

}  // namespace
}  // namespace hlogym
