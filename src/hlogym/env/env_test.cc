#include "hlogym/env/env.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "hlogym/env/test_modules.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/passes/pass_test_util.h"
#include "hlogym/passes/pipelines.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

// e has two users (a and n); general fusion offers e into a and e into n
// as multi-output fusions: 4 alternatives nodes, 2 choices each.
constexpr std::string_view kShared = R"(
HloModule shared
ENTRY main {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  e = f32[1024] exponential(p0)
  a = f32[1024] add(e, p1)
  n = f32[1024] negate(e)
  ROOT t = (f32[1024], f32[1024]) tuple(a, n)
}
)";

std::unique_ptr<Env> MakeEnv(std::string_view text = kShared) {
  absl::StatusOr<std::unique_ptr<Env>> env = Env::FromText(text);
  EXPECT_TRUE(env.ok()) << env.status();
  return env.ok() ? std::move(env).value() : nullptr;
}

std::vector<int64_t> Firsts(const Env& env) {
  std::vector<int64_t> d;
  for (int64_t c : env.ChoiceCounts()) d.push_back(c > 1 ? 1 : 0);
  return d;
}

TEST(Env, LoadErrorsAreStatuses) {
  EXPECT_FALSE(
      Env::FromText("HloModule m\nENTRY e { ROOT x = f32[] bad }").ok());
  absl::StatusOr<std::unique_ptr<Env>> missing =
      Env::FromFile("/nonexistent/model.hlo");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/model.hlo"),
            std::string::npos)
      << missing.status();
  EnvOptions bad;
  bad.evaluator = "model:nosuch";
  EXPECT_FALSE(Env::FromText(kShared, bad).ok());
}

TEST(Env, GeneralFusionPausesWithAlternatives) {
  auto env = MakeEnv();
  absl::StatusOr<bool> paused = env->StartPipeline("general-fusion");
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_TRUE(*paused);
  EXPECT_TRUE(env->paused());
  EXPECT_FALSE(env->done());
  // The uses of e by a and by n: the original and the multi-output fusion
  // of e into the other reader. The uses of a and n by the root: the
  // original, e fused into it, and the sibling fusion of a and n.
  EXPECT_EQ(env->ChoiceCounts(), (std::vector<int64_t>{2, 2, 3, 3}));
  EXPECT_EQ(env->pipeline_name(), "general-fusion");
}

TEST(Env, PickFirstStepsMatchTheNamedPipeline) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
  int64_t steps = 0;
  while (env->paused()) {
    absl::StatusOr<StepResult> r = env->Step(Firsts(*env));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->no_effect);
    ++steps;
    ASSERT_LT(steps, 20);
  }
  EXPECT_TRUE(env->done());
  EXPECT_EQ(env->steps(), steps);
  // The oracle: the named pipeline with the same policy.
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(kShared);
  ASSERT_TRUE(m.ok());
  PipelineRunOptions o;
  o.policy = DecisionPolicy::First();
  ASSERT_TRUE(RunNamedPipeline(m->get(), "general-fusion", o).ok());
  EXPECT_EQ(env->Hash(), DagHash(**m));
  absl::StatusOr<StepResult> again = env->Step({});
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("done"), std::string::npos);
}

TEST(Env, OriginalsEverywhereHaveNoEffect) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
  absl::StatusOr<StepResult> r = env->Step(std::vector<int64_t>(4, 0));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->no_effect);
  // Nothing was fused vertically: the loop ends, and horizontal fusion
  // then puts the two independent roots (add, negate) in one kernel.
  EXPECT_TRUE(r->done);
  absl::StatusOr<EvaluationResult> ev = env->Evaluate();
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev->kernel_count, 2);  // exponential; add + negate
}

TEST(Env, BadDecisionsAreErrorsAndChangeNothing) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
  const uint64_t before = env->Hash();
  // Wrong count.
  absl::StatusOr<StepResult> r = env->Step(std::vector<int64_t>{1});
  ASSERT_FALSE(r.ok());
  // Out of range.
  r = env->Step(std::vector<int64_t>{0, 2, 0, 0});
  ASSERT_FALSE(r.ok());
  r = env->Step(std::vector<int64_t>{0, -1, 0, 0});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(env->Hash(), before);
  EXPECT_TRUE(env->paused());
  // HloEnv's indexed form: a node that is not an alternatives node.
  absl::StatusOr<ApplyStats> a =
      env->ApplyIndexed(std::vector<int64_t>{0}, std::vector<int64_t>{0});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("not an alternatives node"),
            std::string::npos)
      << a.status();
  EXPECT_EQ(env->Hash(), before);
  // Running a pass while paused is refused.
  EXPECT_FALSE(env->RunPass("hlo-dce").ok());
  EXPECT_FALSE(env->StartPipeline("general-fusion").ok());
}

TEST(Env, ApplyIndexedMatchesApply) {
  auto a = MakeEnv();
  ASSERT_TRUE(a->StartPipeline("general-fusion").ok());
  auto b = a->Fork();
  // Rows in reverse order, by observation index.
  std::vector<Instruction*> order = ObservationOrder(b->module());
  std::vector<Instruction*> nodes = b->AlternativeNodes();
  std::vector<int64_t> rows, ops;
  for (int64_t j = static_cast<int64_t>(nodes.size()) - 1; j >= 0; --j) {
    int64_t idx =
        std::find(order.begin(), order.end(), nodes[j]) - order.begin();
    rows.push_back(idx);
    ops.push_back(j == 0 ? 1 : 0);
  }
  ASSERT_TRUE(b->ApplyIndexed(rows, ops).ok());
  ASSERT_TRUE(a->Apply(std::vector<int64_t>{1, 0, 0, 0}).ok());
  EXPECT_EQ(a->Hash(), b->Hash());
}

TEST(Env, ForksAreIndependent) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
  const uint64_t h = env->Hash();
  auto fork = env->Fork();
  EXPECT_EQ(fork->Hash(), h);
  ASSERT_TRUE(fork->Step(Firsts(*fork)).ok());
  EXPECT_NE(fork->Hash(), h);
  EXPECT_EQ(env->Hash(), h);
  EXPECT_TRUE(env->paused());
  // The original continues on its own.
  while (env->paused()) ASSERT_TRUE(env->Step(Firsts(*env)).ok());
  while (fork->paused()) ASSERT_TRUE(fork->Step(Firsts(*fork)).ok());
  EXPECT_EQ(env->Hash(), fork->Hash());
}

TEST(Env, ForksWithTheirOwnPipelineContinueAlike) {
  auto env = MakeEnv(kShared);
  ASSERT_TRUE(env->StartPipeline("general-fusion", {"hlo-cse"}).ok());
  absl::StatusOr<std::unique_ptr<Env>> resources = env->ForkIndependent();
  ASSERT_TRUE(resources.ok()) << resources.status();
  ASSERT_TRUE(env->Step(Firsts(*env)).ok());  // one step further
  absl::StatusOr<std::unique_ptr<Env>> shared = env->ForkSharing(**resources);
  ASSERT_TRUE(shared.ok()) << shared.status();
  auto fork = env->Fork();
  EXPECT_EQ((*shared)->Hash(), env->Hash());
  // The same position in another pipeline instance: the three go on alike.
  for (Env* e : {env.get(), fork.get(), shared->get(), resources->get()}) {
    while (e->paused()) ASSERT_TRUE(e->Step(Firsts(*e)).ok());
  }
  EXPECT_EQ((*shared)->Hash(), env->Hash());
  EXPECT_EQ(fork->Hash(), env->Hash());
  EXPECT_EQ((*resources)->Hash(), env->Hash());
  EXPECT_EQ((*shared)->Seconds().value_or(-1), env->Seconds().value_or(-2));

  // Resources on another pipeline (or other disabled passes) are refused.
  auto other = MakeEnv(kShared);
  ASSERT_TRUE(other->StartPipeline("general-fusion").ok());
  auto again = MakeEnv(kShared);
  ASSERT_TRUE(again->StartPipeline("general-fusion", {"hlo-cse"}).ok());
  absl::StatusOr<std::unique_ptr<Env>> refused = again->ForkSharing(*other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("general-fusion"),
            std::string::npos);
}

// A fork made with one pipeline instance switches to another's mid-run
// (as f-MCTS workers do with forks made on their own thread): it goes on
// like the original, and the switch leaves its state as it was.
TEST(Env, SwitchedResourcesKeepTheState) {
  auto env = MakeEnv(kShared);
  ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
  absl::StatusOr<std::unique_ptr<Env>> resources = env->ForkIndependent();
  ASSERT_TRUE(resources.ok()) << resources.status();
  ASSERT_TRUE(env->Step(Firsts(*env)).ok());
  ASSERT_TRUE(env->paused());
  auto fork = env->Fork();
  const uint64_t h = fork->Hash();
  const std::vector<int64_t> counts = fork->ChoiceCounts();
  ASSERT_TRUE(fork->UseResourcesOf(**resources).ok());
  EXPECT_EQ(fork->Hash(), h);
  EXPECT_EQ(fork->ChoiceCounts(), counts);
  EXPECT_TRUE(fork->paused());
  for (Env* e : {env.get(), fork.get()}) {
    while (e->paused()) ASSERT_TRUE(e->Step(Firsts(*e)).ok());
  }
  EXPECT_EQ(fork->Hash(), env->Hash());
  EXPECT_EQ(fork->Seconds().value_or(-1), env->Seconds().value_or(-2));
  // The resources' own run is untouched by the fork's steps.
  EXPECT_TRUE((*resources)->paused());

  // Resources of another pipeline are refused, and the state stays usable.
  auto other = MakeEnv(kShared);
  ASSERT_TRUE(other->StartPipeline("single-fusion").ok());
  auto again = MakeEnv(kShared);
  ASSERT_TRUE(again->StartPipeline("general-fusion").ok());
  const absl::Status refused = again->UseResourcesOf(*other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("single-fusion"), std::string::npos);
  while (again->paused()) ASSERT_TRUE(again->Step(Firsts(*again)).ok());
  EXPECT_EQ(again->Hash(), env->Hash());
}

// DagHash remembers hashes in computations and instructions across the
// many edits of a decision loop (fusion, pruning, CSE, DCE, clones). At
// every state of random runs, the live module must hash as a fresh parse
// of its text, which has no remembered hashes.
TEST(Env, HashOfEveryStateMatchesAFreshParse) {
  for (std::string_view text : {kShared, test::kSoftmaxRow, test::kDiamond}) {
    for (uint64_t seed : {1, 2, 3}) {
      for (std::string_view pipeline : {"general-fusion", "single-fusion"}) {
        auto env = MakeEnv(text);
        ASSERT_TRUE(env->StartPipeline(pipeline).ok());
        std::mt19937_64 rng(seed);
        int states = 0;
        while (true) {
          const uint64_t live = env->Hash();
          auto fork = env->Fork();
          absl::StatusOr<std::unique_ptr<Module>> parsed =
              ParseModule(env->ExportText());
          ASSERT_TRUE(parsed.ok()) << parsed.status();
          EXPECT_EQ(live, DagHash(**parsed))
              << pipeline << " seed " << seed << " state " << states;
          EXPECT_EQ(fork->Hash(), live);
          ++states;
          if (!env->paused()) break;
          std::vector<int64_t> d = env->ChoiceCounts();
          for (int64_t& c : d) c = c > 0 ? static_cast<int64_t>(rng() % c) : 0;
          ASSERT_TRUE(env->Step(d).ok());
        }
        EXPECT_GE(states, 2) << pipeline;
      }
    }
  }
}

// StopSeconds prices a paused state where it ends if every remaining node
// keeps its original (the rest of the pipeline runs), so it can be
// compared with finished states; the state itself is not changed.
TEST(Env, StopSecondsIsTheEndWithOriginalsKept) {
  auto env = MakeEnv(kShared);
  ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
  ASSERT_TRUE(env->paused());
  const uint64_t h = env->Hash();
  absl::StatusOr<double> stop = env->StopSeconds();
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_EQ(env->Hash(), h);
  EXPECT_TRUE(env->paused());
  auto end = env->Fork();
  while (end->paused()) {
    ASSERT_TRUE(
        end->Step(std::vector<int64_t>(end->ChoiceCounts().size(), 0)).ok());
  }
  EXPECT_EQ(*stop, end->Seconds().value_or(-1));
  // Pick-first's end fuses, so it is faster than stopping at the start.
  auto pick_first = env->Fork();
  while (pick_first->paused()) {
    ASSERT_TRUE(pick_first->Step(Firsts(*pick_first)).ok());
  }
  EXPECT_LT(pick_first->StopSeconds().value_or(1), *stop);
  EXPECT_EQ(end->StopSeconds().value_or(-1), end->Seconds().value_or(-2));
}

// StepThenStop skips the dry runs that StopSeconds prunes again: over
// random walks in every decision pipeline, it must price and end exactly
// as Step followed by keeping every original does.
TEST(Env, StepThenStopIsStepThenKeepingOriginals) {
  const std::vector<std::pair<std::string, std::string>> modules = {
      {"shared", std::string(kShared)},
      {"softmax", std::string(test::kSoftmaxRow)},
      {"diamond", std::string(test::kDiamond)},
      {"cartpole", test::ReadExample("cartpole_step.hlo")},
  };
  // Larger models for the main decision pipelines.
  const std::vector<std::pair<std::string, std::string>> models = {
      {"transformer", test::ReadExample("transformer_encoder.hlo")},
      {"scan", test::ReadExample("cartpole_scan.hlo")},
  };
  const std::vector<std::string> main_pipelines = {
      "general-fusion", "general-fusion-vertical", "single-fusion",
      "algebraic-simplifier"};
  std::mt19937_64 rng(7);
  int64_t compared = 0, reached = 0;
  for (const std::string& pipeline : DecisionPipelineNames()) {
    auto inputs = modules;
    if (absl::c_linear_search(main_pipelines, pipeline)) {
      inputs.insert(inputs.end(), models.begin(), models.end());
    }
    for (const auto& [module_name, text] : inputs) {
      ASSERT_FALSE(text.empty()) << module_name;
      auto env = MakeEnv(text);
      ASSERT_NE(env, nullptr);
      ASSERT_TRUE(env->StartPipeline(pipeline).ok()) << pipeline;
      for (int step = 0; step < 5 && env->paused(); ++step) {
        std::vector<int64_t> d = env->ChoiceCounts();
        for (int64_t& c : d) c = static_cast<int64_t>(rng() % c);
        const std::string where =
            pipeline + " on " + module_name + ", step " + std::to_string(step);
        auto a = env->Fork();
        absl::StatusOr<StepResult> sa = a->Step(d);
        ASSERT_TRUE(sa.ok()) << where << ": " << sa.status();
        absl::StatusOr<double> stop = a->StopSeconds();
        ASSERT_TRUE(stop.ok()) << where << ": " << stop.status();
        auto end = a->Fork();
        while (end->paused()) {
          ASSERT_TRUE(
              end->Step(std::vector<int64_t>(end->ChoiceCounts().size(), 0))
                  .ok())
              << where;
        }
        auto b = env->Fork();
        bool reached_decision = true;
        absl::StatusOr<double> fast = b->StepThenStop(d, &reached_decision);
        ASSERT_TRUE(fast.ok()) << where << ": " << fast.status();
        EXPECT_TRUE(b->done()) << where;
        EXPECT_EQ(*fast, *stop) << where;
        EXPECT_EQ(b->Hash(), end->Hash()) << where;
        EXPECT_EQ(b->module().instruction_count(),
                  end->module().instruction_count())
            << where;
        // Without a dry pass ahead, Step itself ends the pipeline.
        if (!reached_decision) {
          EXPECT_TRUE(a->done()) << where;
        }
        reached += reached_decision;
        ++compared;
        env = std::move(a);
      }
    }
  }
  std::printf("compared %lld steps, %lld reaching a dry pass\n",
              static_cast<long long>(compared),
              static_cast<long long>(reached));
  EXPECT_GE(compared, 100);
  EXPECT_GE(reached, 80);
  EXPECT_GE(compared - reached, 5);
}

// Drops every memo a computation keeps (renaming an instruction to its own
// name counts as a change).
void DropMemos(Module* m) {
  for (const auto& comp : m->computations()) {
    comp->ForEachInstruction(
        [](Instruction* i) { i->set_name(std::string(i->name())); });
  }
}

// DagHash of a copy of `m` with every memo dropped.
uint64_t HashWithoutMemos(const Module& m) {
  auto c = m.Clone();
  DropMemos(c.get());
  return DagHash(*c);
}

// The modules and decision pipelines the memo tests walk.
std::vector<std::pair<std::string, std::string>> MemoWalkModules() {
  return {
      {"shared", std::string(kShared)},
      {"softmax", std::string(test::kSoftmaxRow)},
      {"cartpole", test::ReadExample("cartpole_step.hlo")},
      {"transformer", test::ReadExample("transformer_encoder.hlo")},
  };
}
constexpr const char* kMemoWalkPipelines[] = {"general-fusion", "single-fusion",
                                              "algebraic-simplifier"};

// Env states are hashed after each step (the decision loop's fixed point,
// the search's state keys) with memos carried over from earlier steps and
// through forks: every hash must be the one a module never hashed gets.
TEST(Env, HashMemosFollowRandomWalks) {
  const auto modules = MemoWalkModules();
  std::mt19937_64 rng(11);
  int64_t compared = 0;
  for (const std::string pipeline : kMemoWalkPipelines) {
    for (const auto& [module_name, text] : modules) {
      ASSERT_FALSE(text.empty()) << module_name;
      auto env = MakeEnv(text);
      ASSERT_NE(env, nullptr);
      ASSERT_TRUE(env->StartPipeline(pipeline).ok()) << pipeline;
      for (int step = 0; step < 8 && env->paused(); ++step) {
        const std::string where =
            pipeline + " on " + module_name + ", step " + std::to_string(step);
        EXPECT_EQ(env->Hash(), HashWithoutMemos(env->module())) << where;
        std::vector<int64_t> d = env->ChoiceCounts();
        for (int64_t& c : d) c = static_cast<int64_t>(rng() % c);
        auto next = env->Fork();
        ASSERT_TRUE(next->Step(d).ok()) << where;
        EXPECT_EQ(next->Hash(), HashWithoutMemos(next->module())) << where;
        // The state left behind is unchanged by its fork's step.
        EXPECT_EQ(env->Hash(), HashWithoutMemos(env->module())) << where;
        env = std::move(next);
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 40);
}

// The decision loop's cleanup (CSE, DCE) leaves no fusion parameter
// unused, as the reference DCE's pruning does: keeping every original at
// the next pause then has nothing to prune. Before DCE pruned them, the
// apply of that round removed them, so declining everything still changed
// the graph and the loop went on (random walks ran up to twice as long).
TEST(Env, DecisionLoopLeavesNoUnusedFusionParameters) {
  const auto modules = MemoWalkModules();
  std::mt19937_64 rng(5);
  int64_t checked = 0;
  for (const auto& [module_name, text] : modules) {
    for (int walk = 0; walk < 4; ++walk) {
      auto env = MakeEnv(text);
      ASSERT_NE(env, nullptr);
      ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
      for (int step = 0; step < 12 && env->paused(); ++step) {
        const std::string where = module_name + ", walk " +
                                  std::to_string(walk) + ", step " +
                                  std::to_string(step);
        auto keep = env->Fork();
        absl::StatusOr<ApplyStats> kept =
            keep->Apply(std::vector<int64_t>(env->ChoiceCounts().size(), 0));
        ASSERT_TRUE(kept.ok()) << kept.status() << " at " << where;
        EXPECT_EQ(kept->removed_fusion_parameters, 0) << where;
        EXPECT_FALSE(HasUnusedFusionParameters(keep->module())) << where;
        ++checked;
        std::vector<int64_t> d = env->ChoiceCounts();
        for (int64_t& c : d) c = static_cast<int64_t>(rng() % c);
        ASSERT_TRUE(env->Step(d).ok()) << where;
      }
    }
  }
  EXPECT_GE(checked, 60);
}

// CSE passes by computations it found nothing in while they (and what they
// call) are unchanged, with memos carried through forks. The same walks
// with every memo dropped before each step must reach the same states.
TEST(Env, PassMemosGiveTheSameWalks) {
  const auto modules = MemoWalkModules();
  std::mt19937_64 rng(12);
  int64_t compared = 0;
  for (const std::string pipeline : kMemoWalkPipelines) {
    for (const auto& [module_name, text] : modules) {
      ASSERT_FALSE(text.empty()) << module_name;
      auto env = MakeEnv(text);
      auto oracle = MakeEnv(text);
      ASSERT_NE(env, nullptr);
      ASSERT_NE(oracle, nullptr);
      ASSERT_TRUE(env->StartPipeline(pipeline).ok()) << pipeline;
      ASSERT_TRUE(oracle->StartPipeline(pipeline).ok()) << pipeline;
      for (int step = 0; step < 10 && env->paused(); ++step) {
        const std::string where =
            pipeline + " on " + module_name + ", step " + std::to_string(step);
        ASSERT_TRUE(oracle->paused()) << where;
        std::vector<int64_t> d = env->ChoiceCounts();
        ASSERT_EQ(oracle->ChoiceCounts(), d) << where;
        for (int64_t& c : d) c = static_cast<int64_t>(rng() % c);
        auto next = env->Fork();
        ASSERT_TRUE(next->Step(d).ok()) << where;
        DropMemos(oracle->mutable_module());
        ASSERT_TRUE(oracle->Step(d).ok()) << where;
        EXPECT_EQ(next->Hash(), oracle->Hash()) << where;
        EXPECT_EQ(next->paused(), oracle->paused()) << where;
        env = std::move(next);
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 40);
}

// The program a paused state stands for: every original kept.
uint64_t HashOfOriginals(const Env& env) {
  std::unique_ptr<Env> f = env.Fork();
  EXPECT_TRUE(f->Apply(std::vector<int64_t>(f->ChoiceCounts().size(), 0)).ok());
  return HashWithoutMemos(f->module());
}

// Paused states in a decision loop are keyed by the module their dry pass
// started from, not by the candidates. Along random walks: a key never
// stands for two programs (states with one key keep the same originals),
// reading the module (which builds pending bodies) or forking leaves the
// key alone, and a step to another program changes it. A key that leaves
// the module out fails the first check.
TEST(Env, StateKeysFollowTheProgramBeforeTheDryRun) {
  const auto modules = MemoWalkModules();
  std::mt19937_64 rng(13);
  absl::flat_hash_map<uint64_t, uint64_t> program_of_key;
  int64_t states = 0, repeats = 0;
  for (const std::string pipeline : {"general-fusion", "single-fusion"}) {
    for (const auto& [module_name, text] : modules) {
      for (int walk = 0; walk < 3; ++walk) {
        auto env = MakeEnv(text);
        ASSERT_NE(env, nullptr);
        ASSERT_TRUE(env->StartPipeline(pipeline).ok()) << pipeline;
        for (int step = 0; step < 8 && env->paused(); ++step) {
          const std::string where = pipeline + " on " + module_name +
                                    ", walk " + std::to_string(walk) +
                                    ", step " + std::to_string(step);
          const uint64_t key = env->StateKey();
          EXPECT_EQ(env->Fork()->StateKey(), key) << where;
          const uint64_t program = HashOfOriginals(*env);
          (void)env->module();  // builds every pending body
          EXPECT_EQ(env->StateKey(), key) << where;
          auto [it, inserted] = program_of_key.try_emplace(key, program);
          if (!inserted) {
            ++repeats;
            EXPECT_EQ(it->second, program) << where;
          }
          ++states;
          std::vector<int64_t> d = env->ChoiceCounts();
          for (int64_t& c : d) c = static_cast<int64_t>(rng() % c);
          auto next = env->Fork();
          ASSERT_TRUE(next->Step(d).ok()) << where;
          if (next->paused() && HashOfOriginals(*next) != program) {
            EXPECT_NE(next->StateKey(), key) << where;
          }
          env = std::move(next);
        }
      }
    }
  }
  EXPECT_GE(states, 60);
  EXPECT_GT(repeats, 0);  // walks met again: the first check ran
}

// A pass made dry inside xla-gpu pauses at each of its runs: keeping every
// original, the module can come back unchanged at the next pause. The two
// states share a DagHash but not a StateKey (their futures differ).
TEST(Env, StateKeyTellsPausesOfOneModuleApart) {
  auto env = MakeEnv(test::kAddZero);
  ASSERT_TRUE(env->StartPipeline("algebraic-simplifier").ok());
  ASSERT_TRUE(env->paused());
  int same_module = 0;
  while (env->paused()) {
    const uint64_t hash = env->Hash(), key = env->StateKey();
    ASSERT_TRUE(
        env->Step(std::vector<int64_t>(env->ChoiceCounts().size(), 0)).ok());
    if (env->paused() && env->Hash() == hash) {
      ++same_module;
      EXPECT_NE(env->StateKey(), key);
    }
  }
  EXPECT_GT(same_module, 0);  // the case this test is about happened
}

TEST(Env, SaveAndLoadRestoreTheState) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
  std::shared_ptr<const Env> snap = env->Save();
  const uint64_t h = env->Hash();
  while (env->paused()) ASSERT_TRUE(env->Step(Firsts(*env)).ok());
  ASSERT_NE(env->Hash(), h);
  ASSERT_TRUE(env->Load(*snap).ok());
  EXPECT_EQ(env->Hash(), h);
  EXPECT_TRUE(env->paused());
  // Loading twice gives the same state again (the snapshot is not used up).
  while (env->paused()) ASSERT_TRUE(env->Step(Firsts(*env)).ok());
  ASSERT_TRUE(env->Load(*snap).ok());
  EXPECT_EQ(env->Hash(), h);
}

TEST(Env, SecondsWhilePausedPricesTheOriginals) {
  auto env = MakeEnv();
  absl::StatusOr<double> unopt = env->Seconds();
  ASSERT_TRUE(unopt.ok());
  ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
  // The pre-fusion passes have nothing to do on this graph: the paused
  // state stands for the same program.
  absl::StatusOr<double> paused = env->Seconds();
  ASSERT_TRUE(paused.ok());
  EXPECT_DOUBLE_EQ(*paused, *unopt);
  while (env->paused()) ASSERT_TRUE(env->Step(Firsts(*env)).ok());
  absl::StatusOr<double> fused = env->Seconds();
  ASSERT_TRUE(fused.ok());
  EXPECT_LT(*fused, *unopt);
}

TEST(Env, EqualOutputsAndExportRoundTrip) {
  auto env = MakeEnv();
  auto unopt = env->Clone();
  ASSERT_TRUE(env->StartPipeline("general-fusion").ok());
  while (env->paused()) ASSERT_TRUE(env->Step(Firsts(*env)).ok());
  std::string report;
  absl::StatusOr<bool> eq = env->HasEqualOutput(*unopt, 7, &report);
  ASSERT_TRUE(eq.ok()) << eq.status();
  EXPECT_TRUE(*eq) << report;
  absl::StatusOr<std::unique_ptr<Env>> back = Env::FromText(env->ExportText());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->Hash(), env->Hash());
  // A different program is not equal.
  auto other = MakeEnv(R"(
HloModule other
ENTRY main {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  e = f32[1024] exponential(p0)
  a = f32[1024] subtract(e, p1)
  n = f32[1024] negate(e)
  ROOT t = (f32[1024], f32[1024]) tuple(a, n)
}
)");
  eq = env->HasEqualOutput(*other, 7, &report);
  ASSERT_TRUE(eq.ok());
  EXPECT_FALSE(*eq);
  EXPECT_NE(report.find("out0"), std::string::npos) << report;
}

TEST(Env, RunPassAndUnknownNames) {
  auto env = MakeEnv();
  absl::StatusOr<bool> dry = env->RunPass("general-fusion", /*dry=*/true);
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_TRUE(*dry);
  EXPECT_EQ(env->AlternativeNodes().size(), 4u);
  // Apply-mode passes refuse to run over alternatives.
  EXPECT_FALSE(env->RunPass("hlo-cse").ok());
  ASSERT_TRUE(env->Apply(std::vector<int64_t>(4, 0)).ok());
  absl::StatusOr<bool> cse = env->RunPass("hlo-cse");
  ASSERT_TRUE(cse.ok());
  EXPECT_FALSE(*cse);
  absl::StatusOr<bool> unknown = env->RunPass("no-such-pass");
  ASSERT_FALSE(unknown.ok());
  absl::StatusOr<bool> p = env->StartPipeline("no-such-pipeline");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("general-fusion"), std::string::npos)
      << p.status();
  EXPECT_FALSE(env->StartPipeline("general-fusion", {"no-such-pass"}).ok());
}

TEST(Env, PassDecisionPipelineRunsInsideTheBaseline) {
  // x * 1 and x + 0: the algebraic simplifier offers both; declining every
  // rewrite keeps the multiply, taking them removes it.
  constexpr std::string_view kAlg = R"(
HloModule alg
ENTRY main {
  p0 = f32[256] parameter(0)
  one = f32[] constant(1)
  b = f32[256] broadcast(one), dimensions={}
  m = f32[256] multiply(p0, b)
  ROOT e = f32[256] exponential(m)
}
)";
  auto take = MakeEnv(kAlg);
  absl::StatusOr<bool> paused = take->StartPipeline("algebraic-simplifier");
  ASSERT_TRUE(paused.ok()) << paused.status();
  ASSERT_TRUE(*paused);
  while (take->paused()) ASSERT_TRUE(take->Step(Firsts(*take)).ok());
  absl::StatusOr<std::unique_ptr<Module>> base = ParseModule(kAlg);
  ASSERT_TRUE(base.ok());
  ASSERT_TRUE(RunNamedPipeline(base->get(), "xla-gpu").ok());
  EXPECT_EQ(take->Hash(), DagHash(**base));
}

TEST(Env, DecisionPipelineNames) {
  std::vector<std::string> names = DecisionPipelineNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "general-fusion"),
            names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "algebraic-simplifier"),
            names.end());
  // A pass that xla-gpu lacks runs as its own loop before the baseline.
  absl::StatusOr<std::unique_ptr<Pipeline>> p =
      BuildDecisionPipeline("general-fusion");
  ASSERT_TRUE(p.ok());
}

}  // namespace
}  // namespace hlogym
