#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "hlogym/cost/evaluator.h"
#include "hlogym/env/test_modules.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/pipelines.h"
#include "hlogym/search/agent.h"
#include "hlogym/search/search_util.h"
#include "hlogym/search/simple_agents.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

using test::kChain;
using test::kDiamond;
constexpr std::string_view kReduce = test::kSoftmaxRow;

// The producer-consumer decision pipeline: the hand-counted choices and
// trajectories below are those of its smaller decision space (sibling
// candidates are covered in the GeneralFusionSiblings tests and by the
// corpus agent tests).
std::unique_ptr<Env> Started(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Env>> env = Env::FromText(text);
  EXPECT_TRUE(env.ok()) << env.status();
  if (!env.ok()) return nullptr;
  absl::StatusOr<bool> paused =
      (*env)->StartPipeline("general-fusion-vertical");
  EXPECT_TRUE(paused.ok()) << paused.status();
  EXPECT_TRUE(paused.value_or(false));
  return std::move(env).value();
}

SearchResult RunAgent(const Env& start, const char* agent,
                      AgentOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Agent>> a = CreateAgent(agent, options);
  EXPECT_TRUE(a.ok()) << a.status();
  absl::StatusOr<SearchResult> r = (*a)->Search(start);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(r).value() : SearchResult{};
}

int64_t Fusions(const Env& env) {
  int64_t n = 0;
  env.module().entry_computation()->ForEachInstruction(
      [&](const Instruction* i) { n += i->opcode() == Opcode::kFusion; });
  return n;
}

// The trajectory leads from the start to the returned state.
void ExpectReplays(const Env& start, const SearchResult& r) {
  ASSERT_NE(r.best, nullptr);
  ASSERT_TRUE(r.best->done());
  std::unique_ptr<Env> env = start.Fork();
  for (const std::vector<int64_t>& d : r.trajectory) {
    ASSERT_TRUE(env->paused());
    ASSERT_TRUE(env->Step(d).ok());
  }
  EXPECT_TRUE(env->done());
  EXPECT_EQ(env->Hash(), r.best->Hash());
  EXPECT_EQ(env->Seconds().value(), r.best_seconds);
}

TEST(Agents, NamesAndCreation) {
  EXPECT_EQ(AgentNames(),
            (std::vector<std::string>{"pick-first", "random", "greedy", "beam",
                                      "fmcts"}));
  for (const std::string& name : AgentNames()) {
    absl::StatusOr<std::unique_ptr<Agent>> a = CreateAgent(name);
    ASSERT_TRUE(a.ok()) << name << ": " << a.status();
    ASSERT_NE(*a, nullptr);
    EXPECT_EQ((*a)->name(), name);
  }
  absl::StatusOr<std::unique_ptr<Agent>> bad = CreateAgent("astar");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(bad.status().message(),
            "unknown agent 'astar' (agents: pick-first, random, greedy, beam, "
            "fmcts)");
}

TEST(Agents, AnEnvironmentNotStartedIsAnError) {
  absl::StatusOr<std::unique_ptr<Env>> env = Env::FromText(kChain);
  ASSERT_TRUE(env.ok());
  for (const char* name : {"pick-first", "random", "greedy", "beam"}) {
    absl::StatusOr<std::unique_ptr<Agent>> a = CreateAgent(name);
    ASSERT_TRUE(a.ok());
    absl::StatusOr<SearchResult> r = (*a)->Search(**env);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(r.status().message(),
              StrCat(name,
                     ": the environment has no started pipeline (call "
                     "StartPipeline first)"));
  }
}

TEST(Agents, ADoneStartIsItsOwnResult) {
  std::unique_ptr<Env> env = Started(kChain);
  ASSERT_NE(env, nullptr);
  ASSERT_TRUE(env->Step(std::vector<int64_t>{1}).ok());
  ASSERT_TRUE(env->done());
  for (const char* name : {"pick-first", "random", "greedy", "beam"}) {
    SearchResult r = RunAgent(*env, name);
    ASSERT_NE(r.best, nullptr) << name;
    EXPECT_TRUE(r.trajectory.empty()) << name;
    EXPECT_EQ(r.evaluations, 1) << name;
    EXPECT_EQ(r.best->Hash(), env->Hash()) << name;
    EXPECT_EQ(r.best_seconds, env->Seconds().value()) << name;
  }
}

TEST(PickFirst, FollowsTheNamedPipeline) {
  std::unique_ptr<Env> start = Started(kReduce);
  ASSERT_NE(start, nullptr);
  const uint64_t start_hash = start->Hash();
  std::vector<SearchProgress> reports;
  AgentOptions o;
  o.progress = [&](const SearchProgress& p) { reports.push_back(p); };
  SearchResult r = RunAgent(*start, "pick-first", o);
  ASSERT_NE(r.best, nullptr);
  EXPECT_EQ(r.trajectory,
            (std::vector<JointDecision>{{1, 1, 1, 1}, {1, 1}, {1}}));
  EXPECT_EQ(Fusions(*r.best), 2);
  EXPECT_EQ(r.evaluations, 1);
  EXPECT_EQ(r.states_visited, 3);
  EXPECT_FALSE(r.timed_out);
  ASSERT_EQ(reports.size(), 3u);
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].steps, static_cast<int64_t>(i) + 1);
  }
  // The oracle: the named pipeline with the same policy, priced apart.
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(kReduce);
  ASSERT_TRUE(m.ok());
  PipelineRunOptions po;
  po.policy = DecisionPolicy::First();
  absl::StatusOr<PipelineRunStats> stats =
      RunNamedPipeline(m->get(), "general-fusion", po);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->decision_rounds, 3);
  EXPECT_EQ(r.best->Hash(), DagHash(**m));
  absl::StatusOr<std::unique_ptr<Evaluator>> ev = CreateEvaluator("model:h100");
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(r.best_seconds, (*ev)->Evaluate(**m).value().total_seconds);
  // The start is not changed.
  EXPECT_TRUE(start->paused());
  EXPECT_EQ(start->Hash(), start_hash);
  ExpectReplays(*start, r);
}

TEST(PickFirst, MatchesTheNamedPipelineOnEveryGraph) {
  for (std::string_view text : {kChain, kReduce, kDiamond}) {
    std::unique_ptr<Env> start = Started(text);
    ASSERT_NE(start, nullptr);
    SearchResult r = RunAgent(*start, "pick-first");
    absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
    ASSERT_TRUE(m.ok());
    ASSERT_TRUE(RunNamedPipeline(m->get(), "general-fusion").ok());
    ASSERT_NE(r.best, nullptr);
    EXPECT_EQ(r.best->Hash(), DagHash(**m)) << text;
    EXPECT_EQ(r.evaluations, 1);
  }
}

TEST(Random, SeededAndDeterministic) {
  std::unique_ptr<Env> start = Started(kDiamond);
  ASSERT_NE(start, nullptr);
  std::set<std::vector<JointDecision>> distinct;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    AgentOptions o;
    o.seed = seed;
    SearchResult a = RunAgent(*start, "random", o);
    SearchResult b = RunAgent(*start, "random", o);
    EXPECT_EQ(a.trajectory, b.trajectory);
    EXPECT_EQ(a.best_seconds, b.best_seconds);
    EXPECT_EQ(a.evaluations, 1);
    ExpectReplays(*start, a);
    distinct.insert(a.trajectory);
  }
  // 96 joint decisions at the first step alone: eight seeds differ.
  EXPECT_GE(distinct.size(), 6u);
}

TEST(Random, TrajectoryOfSeedZero) {
  // Decisions drawn with SearchRng(0), node by node, step by step.
  std::unique_ptr<Env> start = Started(kReduce);
  ASSERT_NE(start, nullptr);
  SearchResult r = RunAgent(*start, "random");
  SearchRng rng(0);
  std::unique_ptr<Env> env = start->Fork();
  std::vector<JointDecision> expected;
  while (env->paused()) {
    expected.push_back(RandomDecision(env->ChoiceCounts(), rng));
    ASSERT_TRUE(env->Step(expected.back()).ok());
  }
  EXPECT_EQ(r.trajectory, expected);
  EXPECT_EQ(r.trajectory, (std::vector<JointDecision>{
                              {1, 1, 0, 0}, {0, 1, 1, 0}, {1, 1, 1}, {1, 1}}));
}

TEST(SearchUtil, Rng) {
  SearchRng rng(5);
  EXPECT_EQ(rng.Next(), SplitMix64(SplitMix64(5)));
  EXPECT_EQ(rng.Next(), SplitMix64(SplitMix64(5) + 1));
  SearchRng u(1);
  int64_t hist[3] = {0, 0, 0};
  for (int i = 0; i < 3000; ++i) {
    const int64_t x = u.Uniform(3);
    ASSERT_GE(x, 0);
    ASSERT_LT(x, 3);
    ++hist[x];
  }
  for (int64_t h : hist) {
    EXPECT_GT(h, 900);
    EXPECT_LT(h, 1100);
  }
  EXPECT_EQ(u.Uniform(1), 0);
}

TEST(SearchUtil, JointDecisions) {
  const std::vector<int64_t> counts = {2, 3};
  EXPECT_EQ(ChoiceProduct(counts, 100), 6);
  EXPECT_EQ(ChoiceProduct(counts, 5), 6);  // cap + 1
  EXPECT_EQ(ChoiceProduct(std::vector<int64_t>(70, 2), 1000000), 1000001);
  EXPECT_EQ(AllOriginal(counts), (JointDecision{0, 0}));
  EXPECT_EQ(AllFirst(std::vector<int64_t>{2, 1, 3}), (JointDecision{1, 0, 1}));
  absl::StatusOr<std::vector<JointDecision>> all =
      EnumerateJointDecisions(counts, 6);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<JointDecision>{
                      {0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}));
  absl::StatusOr<std::vector<JointDecision>> over =
      EnumerateJointDecisions(counts, 5);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(),
            "the state has more than 5 joint decisions (2 alternatives nodes)");
  EXPECT_EQ(
      GreedyCandidates(counts),
      (std::vector<JointDecision>{{0, 0}, {1, 1}, {1, 0}, {0, 1}, {0, 2}}));
  // All-first of a single node is its single deviation: listed once.
  EXPECT_EQ(GreedyCandidates(std::vector<int64_t>{2}),
            (std::vector<JointDecision>{{0}, {1}}));
}

TEST(Greedy, ExactTrajectory) {
  std::unique_ptr<Env> start = Started(kDiamond);
  ASSERT_NE(start, nullptr);
  ASSERT_EQ(start->ChoiceCounts(), (std::vector<int64_t>{2, 2, 2, 2, 3, 2}));
  SearchResult r = RunAgent(*start, "greedy");
  // Paused children are priced where they end if every remaining node keeps
  // its original, like the finished ones: all-first wins each step.
  EXPECT_EQ(r.trajectory, (std::vector<JointDecision>{
                              {1, 1, 1, 1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1}}));
  // Candidates per step (choice counts {2,2,2,2,3,2}, {2,2,3}, {2,2,2},
  // {2}): 2 + 7, 2 + 4, 2 + 3, 2 (all-first = the single deviation).
  EXPECT_EQ(r.evaluations, 22);
  EXPECT_EQ(r.states_visited, 4);
  EXPECT_EQ(Fusions(*r.best), 1);
  ExpectReplays(*start, r);
  SearchResult again = RunAgent(*start, "greedy");
  EXPECT_EQ(again.trajectory, r.trajectory);
  EXPECT_EQ(again.best_seconds, r.best_seconds);
}

// Greedy's first step is the best of its candidates, which include
// pick-first's first step and the all-original end.
TEST(Greedy, FirstStepIsTheBestCandidate) {
  for (std::string_view text : {kChain, kReduce, kDiamond}) {
    std::unique_ptr<Env> start = Started(text);
    ASSERT_NE(start, nullptr);
    SearchResult r = RunAgent(*start, "greedy");
    ASSERT_FALSE(r.trajectory.empty());
    auto first_step = StepFork(*start, r.trajectory[0]);
    ASSERT_TRUE(first_step.ok());
    const double chosen = (*first_step)->StopSeconds().value();
    for (const JointDecision& d : GreedyCandidates(start->ChoiceCounts())) {
      auto child = StepFork(*start, d);
      ASSERT_TRUE(child.ok());
      EXPECT_LE(chosen, (*child)->StopSeconds().value());
    }
  }
  // One step, one fusion: greedy and pick-first agree.
  std::unique_ptr<Env> chain = Started(kChain);
  EXPECT_EQ(RunAgent(*chain, "greedy").best_seconds,
            RunAgent(*chain, "pick-first").best_seconds);
}

TEST(Greedy, RespectsTheBudget) {
  std::unique_ptr<Env> start = Started(kDiamond);
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  // The first five candidates: all-first is the best and leaves a paused
  // state; out of budget, every later node keeps its original (each pause
  // until the end), and one evaluation prices the end.
  o.budget = 5;
  SearchResult five = RunAgent(*start, "greedy", o);
  EXPECT_EQ(five.evaluations, 6);
  EXPECT_FALSE(five.timed_out);
  ASSERT_EQ(five.trajectory.size(), 3u);
  EXPECT_EQ(five.trajectory[0], (JointDecision{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(five.trajectory[1], AllOriginal(five.trajectory[1]));
  EXPECT_EQ(five.trajectory[2], AllOriginal(five.trajectory[2]));
  ExpectReplays(*start, five);
  // Stopping is priced as it ends: the end after the first step is what
  // that step's child was priced at.
  auto first = StepFork(*start, five.trajectory[0]);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(five.best_seconds, (*first)->StopSeconds().value());
}

TEST(Agents, TinyTimeLimitEndsWithOriginals) {
  std::unique_ptr<Env> start = Started(kDiamond);
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  o.time_limit_seconds = 1e-12;
  for (const char* name : {"pick-first", "random", "greedy"}) {
    SearchResult r = RunAgent(*start, name, o);
    EXPECT_TRUE(r.timed_out) << name;
    EXPECT_EQ(r.evaluations, 1) << name;
    ASSERT_EQ(r.trajectory.size(), 1u) << name;
    EXPECT_EQ(r.trajectory[0], AllOriginal(start->ChoiceCounts())) << name;
    EXPECT_LT(r.search_seconds, 1.0) << name;
    ExpectReplays(*start, r);
  }
  // Beam search also finishes its start with pick-first and keeps the
  // faster end.
  SearchResult beam = RunAgent(*start, "beam", o);
  EXPECT_TRUE(beam.timed_out);
  EXPECT_EQ(beam.evaluations, 2);
  std::unique_ptr<Env> first = start->Fork();
  ASSERT_TRUE(FinishWithPickFirst(*first, nullptr).ok());
  std::unique_ptr<Env> original = start->Fork();
  ASSERT_TRUE(FinishWithOriginals(*original, nullptr).ok());
  EXPECT_EQ(beam.best_seconds,
            std::min(first->Seconds().value(), original->Seconds().value()));
  ExpectReplays(*start, beam);
}

}  // namespace
}  // namespace hlogym
