#include "hlogym/search/beam_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/env/test_modules.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/search/agent.h"
#include "hlogym/search/search_util.h"

namespace hlogym {
namespace {

// Small graphs with a few general-fusion alternatives at each pause. The
// searches run the producer-consumer pipeline (general-fusion-vertical):
// sibling candidates multiply the joint decisions beyond what the brute
// force can enumerate in a unit test.
struct Graph {
  const char* name;
  std::string_view text;
  // The brute force enumerates ~300k end states: too slow for a unit test.
  bool brute_force = true;
};

const Graph kGraphs[] = {
    {"chain", test::kChain},
    {"shared", R"(
HloModule shared
ENTRY main {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  e = f32[1024] exponential(p0)
  a = f32[1024] add(e, p1)
  n = f32[1024] negate(e)
  ROOT t = (f32[1024], f32[1024]) tuple(a, n)
}
)"},
    {"reduce", test::kSoftmaxRow},
    {"diamond", test::kDiamond,
     /*brute_force=*/false},
    {"broadcast", R"(
HloModule broadcast
ENTRY main {
  p0 = f32[128] parameter(0)
  p1 = f32[128,512] parameter(1)
  b = f32[128,512] broadcast(p0), dimensions={0}
  m = f32[128,512] multiply(b, p1)
  n = f32[128,512] negate(m)
  ROOT t = (f32[128,512], f32[128,512]) tuple(m, n)
}
)"},
    {"two_chains", R"(
HloModule two_chains
ENTRY main {
  p0 = f32[2048] parameter(0)
  p1 = f32[512,16] parameter(1)
  e = f32[2048] exponential(p0)
  n = f32[2048] negate(e)
  s = f32[512,16] sine(p1)
  c = f32[512,16] cosine(s)
  ROOT t = (f32[2048], f32[512,16]) tuple(n, c)
}
)"},
    {"row_reduce_max", R"(
HloModule row_reduce_max
max_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
ENTRY main {
  p0 = f32[32,1024] parameter(0)
  a = f32[32,1024] abs(p0)
  z = f32[] constant(0)
  r = f32[32] reduce(a, z), dimensions={1}, to_apply=max_f32
  ROOT l = f32[32] log(r)
}
)"},
};

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

// Every joint decision at every step, recursively, without a table of
// seen states: the smallest modelled time of an end state. The state graph
// has cycles (a partly taken multi-output candidate, undone later), so a
// sequence that comes back to a state already on its own path is cut: any
// end state it reaches is reached by the sequence without the loop.
struct BruteForce {
  int64_t end_states = 0;
  int64_t paths_cut = 0;
  std::vector<uint64_t> path;

  int64_t expanded = 0;

  double Min(const Env& env) {
    ++expanded;
    path.push_back(env.Hash());
    const std::vector<int64_t> counts = env.ChoiceCounts();
    std::vector<int64_t> d(counts.size(), 0);
    double best = std::numeric_limits<double>::infinity();
    bool more = !counts.empty();
    while (more) {
      std::unique_ptr<Env> child = env.Fork();
      absl::StatusOr<StepResult> r = child->Step(d);
      EXPECT_TRUE(r.ok()) << r.status();
      if (r.ok() && r->done) {
        absl::StatusOr<double> s = child->Seconds();
        EXPECT_TRUE(s.ok()) << s.status();
        ++end_states;
        best = std::min(best, s.value_or(best));
      } else if (r.ok()) {
        if (std::find(path.begin(), path.end(), child->Hash()) != path.end()) {
          ++paths_cut;
        } else {
          best = std::min(best, Min(*child));
        }
      }
      // Next joint decision, the last node fastest.
      more = false;
      for (size_t j = counts.size(); j-- > 0;) {
        if (++d[j] < counts[j]) {
          more = true;
          break;
        }
        d[j] = 0;
      }
    }
    path.pop_back();
    return best;
  }
};

SearchResult RunAgent(const Env& start, AgentOptions options,
                      const char* agent = "beam") {
  absl::StatusOr<std::unique_ptr<Agent>> a = CreateAgent(agent, options);
  EXPECT_TRUE(a.ok()) << a.status();
  absl::StatusOr<SearchResult> r = (*a)->Search(start);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(r).value() : SearchResult{};
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
  absl::StatusOr<double> s = env->Seconds();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, r.best_seconds);
}

TEST(BeamSearch, ExhaustiveFindsTheBruteForceOptimum) {
  AgentOptions exhaustive;
  exhaustive.beam_exhaustive = true;
  for (const Graph& g : kGraphs) {
    if (!g.brute_force) continue;
    SCOPED_TRACE(g.name);
    std::unique_ptr<Env> start = Started(g.text);
    ASSERT_NE(start, nullptr);
    BruteForce brute;
    const double optimum = brute.Min(*start);
    SearchResult r = RunAgent(*start, exhaustive);
    EXPECT_EQ(r.best_seconds, optimum);
    EXPECT_FALSE(r.timed_out);
    ExpectReplays(*start, r);
    // Each distinct state is evaluated once: never more evaluations than
    // the brute force's end states and the states it expands.
    EXPECT_LE(r.evaluations, brute.end_states + brute.expanded);
    std::printf(
        "%s: optimum %.9g, brute-force end states %ld (loops cut "
        "%ld), beam evaluations %ld, states expanded %ld\n",
        g.name, optimum, static_cast<long>(brute.end_states),
        static_cast<long>(brute.paths_cut), static_cast<long>(r.evaluations),
        static_cast<long>(r.states_visited));
  }
}

// Exhaustive search sees every reachable end state, so no agent ends
// faster.
TEST(BeamSearch, ExhaustiveIsNeverWorseThanAnyAgent) {
  AgentOptions exhaustive;
  exhaustive.beam_exhaustive = true;
  for (const Graph& g : kGraphs) {
    SCOPED_TRACE(g.name);
    std::unique_ptr<Env> start = Started(g.text);
    ASSERT_NE(start, nullptr);
    const double optimum = RunAgent(*start, exhaustive).best_seconds;
    for (const char* agent : {"pick-first", "random", "greedy", "beam"}) {
      for (uint64_t seed : {0, 1, 2}) {
        AgentOptions o;
        o.seed = seed;
        SearchResult r = RunAgent(*start, o, agent);
        EXPECT_LE(optimum, r.best_seconds) << agent << " seed " << seed;
        ExpectReplays(*start, r);
      }
    }
  }
}

// With nothing pruned and every decision enumerated, the bounded search is
// the exhaustive one, evaluation for evaluation.
TEST(BeamSearch, UnprunedIsExhaustive) {
  AgentOptions exhaustive;
  exhaustive.beam_exhaustive = true;
  AgentOptions wide;
  wide.beam_alpha = 1000;
  wide.beam_expand_budget = 1000;
  for (const Graph& g : kGraphs) {
    SCOPED_TRACE(g.name);
    std::unique_ptr<Env> start = Started(g.text);
    ASSERT_NE(start, nullptr);
    SearchResult a = RunAgent(*start, exhaustive);
    SearchResult b = RunAgent(*start, wide);
    EXPECT_EQ(a.best_seconds, b.best_seconds);
    EXPECT_EQ(a.trajectory, b.trajectory);
    EXPECT_EQ(a.evaluations, b.evaluations);
    EXPECT_EQ(a.states_visited, b.states_visited);
  }
}

TEST(BeamSearch, PruningKeepsAlphaChildren) {
  // diamond: 96 joint decisions at the start. alpha = 1 follows one child
  // per state, so it expands fewer states than alpha = 20.
  std::unique_ptr<Env> start = Started(kGraphs[3].text);
  ASSERT_NE(start, nullptr);
  AgentOptions one;
  one.beam_alpha = 1;
  AgentOptions twenty;
  SearchResult a = RunAgent(*start, one);
  SearchResult b = RunAgent(*start, twenty);
  EXPECT_LT(a.states_visited, b.states_visited);
  EXPECT_LE(b.best_seconds, a.best_seconds);
  ExpectReplays(*start, a);
  ExpectReplays(*start, b);
}

TEST(BeamSearch, RespectsTheEvaluationBudget) {
  std::unique_ptr<Env> start = Started(kGraphs[3].text);
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  o.budget = 10;
  SearchResult r = RunAgent(*start, o);
  // The first child (all-original) is an end state, so nothing is priced
  // after the budget but the two completions of the top open state
  // (pick-first and all-original).
  EXPECT_EQ(r.evaluations, 12);
  EXPECT_FALSE(r.timed_out);
  ExpectReplays(*start, r);
  // All-original ends the pipeline at once: the worst it returns.
  std::unique_ptr<Env> original = start->Fork();
  ASSERT_TRUE(original->Step(AllOriginal(start->ChoiceCounts())).ok());
  ASSERT_TRUE(original->done());
  EXPECT_LE(r.best_seconds, original->Seconds().value());
}

TEST(BeamSearch, SampledExpansionIsSeeded) {
  std::unique_ptr<Env> start = Started(kGraphs[3].text);
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  o.beam_expand_budget = 4;  // < 96: the start's decisions are sampled
  SearchResult a = RunAgent(*start, o);
  SearchResult b = RunAgent(*start, o);
  EXPECT_EQ(a.trajectory, b.trajectory);
  EXPECT_EQ(a.evaluations, b.evaluations);
  EXPECT_EQ(a.best_seconds, b.best_seconds);
  ExpectReplays(*start, a);
  // Four decisions per state at most: at most four evaluations each.
  EXPECT_LE(a.evaluations, 4 * a.states_visited);
}

TEST(SearchUtil, SampleJointDecisions) {
  const std::vector<int64_t> counts = {2, 3, 2};
  EXPECT_EQ(SampleJointDecisions(counts, 5, 7),
            (std::vector<JointDecision>{
                {1, 1, 1}, {0, 0, 0}, {0, 1, 1}, {1, 0, 1}, {1, 2, 1}}));
  std::vector<JointDecision> nine = SampleJointDecisions(counts, 9, 7);
  ASSERT_EQ(nine.size(), 9u);
  EXPECT_EQ(nine[5], (JointDecision{1, 1, 0}));
  absl::flat_hash_set<JointDecision> distinct(nine.begin(), nine.end());
  EXPECT_EQ(distinct.size(), 9u);
  for (const JointDecision& d : nine) {
    for (size_t j = 0; j < d.size(); ++j) {
      EXPECT_GE(d[j], 0);
      EXPECT_LT(d[j], counts[j]);
    }
  }
  EXPECT_EQ(nine, SampleJointDecisions(counts, 9, 7));
  // Never more than the space holds.
  EXPECT_EQ(SampleJointDecisions(counts, 100, 7).size(), 12u);
}

// 20 independent chains: 20 alternatives nodes of 2 choices, 2^20 joint
// decisions at the start.
std::string TwentyChains() {
  std::string text = "HloModule chains\nENTRY main {\n";
  std::string root = "  ROOT t = (";
  std::string operands;
  for (int i = 0; i < 20; ++i) {
    StrAppend(&text, "  p", i, " = f32[", 256 + i, "] parameter(", i, ")\n",
              "  e", i, " = f32[", 256 + i, "] exponential(p", i, ")\n", "  n",
              i, " = f32[", 256 + i, "] negate(e", i, ")\n");
    StrAppend(&root, i ? ", " : "", "f32[", 256 + i, "]");
    StrAppend(&operands, i ? ", " : "", "n", i);
  }
  StrAppend(&text, root, ") tuple(", operands, ")\n}\n");
  return text;
}

TEST(BeamSearch, ExhaustiveRefusesTooManyJointDecisions) {
  const std::string text = TwentyChains();
  std::unique_ptr<Env> start = Started(text.c_str());
  ASSERT_NE(start, nullptr);
  ASSERT_EQ(start->ChoiceCounts(), std::vector<int64_t>(20, 2));
  AgentOptions o;
  o.beam_exhaustive = true;
  absl::StatusOr<std::unique_ptr<Agent>> a = CreateAgent("beam", o);
  ASSERT_TRUE(a.ok());
  absl::StatusOr<SearchResult> r = (*a)->Search(*start);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("more than 1000000 joint decisions"),
            std::string::npos)
      << r.status();
}

TEST(BeamSearch, HonoursTheTimeLimit) {
  const std::string text = TwentyChains();
  std::unique_ptr<Env> start = Started(text.c_str());
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  // Wide enough that the search would take minutes: 2^20 end states.
  o.beam_alpha = 1000;
  o.time_limit_seconds = 0.2;
  SearchResult r = RunAgent(*start, o);
  EXPECT_TRUE(r.timed_out);
  // Checked before every child: at most one step of this small graph late.
  EXPECT_LT(r.search_seconds, 1.2);
  ExpectReplays(*start, r);
  // A limit that passes before the first expansion: the start finished
  // with pick-first steps and with all-original steps, the faster kept
  // (here pick-first: it fuses each of the twenty chains).
  o.time_limit_seconds = 1e-12;
  SearchResult quick = RunAgent(*start, o);
  EXPECT_TRUE(quick.timed_out);
  EXPECT_EQ(quick.evaluations, 2);
  std::unique_ptr<Env> first = start->Fork();
  std::vector<JointDecision> first_steps;
  ASSERT_TRUE(FinishWithPickFirst(*first, &first_steps).ok());
  ASSERT_FALSE(first_steps.empty());
  EXPECT_EQ(first_steps[0], AllFirst(start->ChoiceCounts()));
  EXPECT_EQ(quick.trajectory, first_steps);
  std::unique_ptr<Env> original = start->Fork();
  ASSERT_TRUE(FinishWithOriginals(*original, nullptr).ok());
  const double first_s = first->Seconds().value();
  const double original_s = original->Seconds().value();
  EXPECT_LT(first_s, original_s);
  EXPECT_EQ(quick.best_seconds, first_s);
  ExpectReplays(*start, quick);
}

TEST(BeamSearch, BadOptionsAndStatesAreErrors) {
  std::unique_ptr<Env> start = Started(kGraphs[0].text);
  ASSERT_NE(start, nullptr);
  AgentOptions o;
  o.beam_alpha = 0;
  absl::StatusOr<SearchResult> r = BeamSearchAgent(o).Search(*start);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  o = AgentOptions{};
  o.beam_expand_budget = 0;
  EXPECT_FALSE(BeamSearchAgent(o).Search(*start).ok());
  absl::StatusOr<std::unique_ptr<Env>> idle = Env::FromText(kGraphs[0].text);
  ASSERT_TRUE(idle.ok());
  r = BeamSearchAgent(AgentOptions{}).Search(**idle);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("StartPipeline"), std::string::npos);
}

}  // namespace
}  // namespace hlogym
