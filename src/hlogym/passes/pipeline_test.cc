#include "hlogym/passes/pipeline.h"

#include <gtest/gtest.h>

#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

// A pass defined by a function, for hand-built rewrites.
class LambdaPass : public Pass {
 public:
  using Fn = std::function<absl::StatusOr<bool>(Module*, Rewriter&)>;
  LambdaPass(std::string name, Fn fn)
      : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> RunWith(Module* m, Rewriter& rw) override {
    return fn_(m, rw);
  }

 private:
  std::string name_;
  Fn fn_;
};

Instruction* Find(Module* m, std::string_view name) {
  return m->entry_computation()->FindInstruction(name);
}

constexpr char kTwoChains[] = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  x = f32[4] negate(p)
  y = f32[4] exponential(p)
  use1 = f32[4] abs(x)
  use2 = f32[4] sine(y)
  ROOT t = (f32[4], f32[4]) tuple(use1, use2)
}
)";

TEST(CycleRejectionTest, CandidateDependingOnItsUseIsRejected) {
  auto m = test::ParseAndVerify(kTwoChains);
  // Candidate for x built from use1, the very user it would feed.
  LambdaPass pass(
      "self-cycle", [](Module* m, Rewriter& rw) -> absl::StatusOr<bool> {
        Instruction* x = Find(m, "x");
        HLOGYM_ASSIGN_OR_RETURN(
            Instruction * r,
            MakeBinary(rw, Opcode::kAdd, Find(m, "p"), Find(m, "use1")));
        return rw.ReplaceInstruction(x, r);
      });
  auto stats = pass.RunDry(m.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->opportunities, 1);
  EXPECT_EQ(stats->rejected_cyclic, 1);
  EXPECT_EQ(stats->alternatives, 0);
  EXPECT_TRUE(VerifyModule(*m).ok());
  EXPECT_TRUE(AlternativeNodes(*m).empty());
  // Nothing of the rejected candidate is left behind.
  EXPECT_EQ(m->entry_computation()->instruction_count(), 6);
}

TEST(CycleRejectionTest, InterferingRewritesKeepTheFirstAndRejectTheSecond) {
  auto m = test::ParseAndVerify(kTwoChains);
  const uint64_t hash = DagHash(*m);
  // Each rewrite alone is fine; together they would form the cycle
  // use1 <- alt(x) <- add(p, use2) <- use2 <- alt(y) <- add(p, use1) <- use1.
  LambdaPass pass(
      "interfering", [](Module* m, Rewriter& rw) -> absl::StatusOr<bool> {
        Instruction* p = Find(m, "p");
        HLOGYM_ASSIGN_OR_RETURN(
            Instruction * r1, MakeBinary(rw, Opcode::kAdd, p, Find(m, "use2")));
        HLOGYM_ASSIGN_OR_RETURN(
            Instruction * r2, MakeBinary(rw, Opcode::kAdd, p, Find(m, "use1")));
        HLOGYM_ASSIGN_OR_RETURN(bool a,
                                rw.ReplaceInstruction(Find(m, "x"), r1));
        HLOGYM_ASSIGN_OR_RETURN(bool b,
                                rw.ReplaceInstruction(Find(m, "y"), r2));
        return a && b;
      });
  // Each alone offers one alternative and rejects nothing.
  for (int which = 0; which < 2; ++which) {
    auto single = test::ParseAndVerify(kTwoChains);
    LambdaPass one(
        "one", [which](Module* m, Rewriter& rw) -> absl::StatusOr<bool> {
          Instruction* other = Find(m, which == 0 ? "use2" : "use1");
          HLOGYM_ASSIGN_OR_RETURN(
              Instruction * r,
              MakeBinary(rw, Opcode::kAdd, Find(m, "p"), other));
          return rw.ReplaceInstruction(Find(m, which == 0 ? "x" : "y"), r);
        });
    auto s = one.RunDry(single.get());
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->alternatives, 1);
    EXPECT_EQ(s->rejected_cyclic, 0);
  }
  auto stats = pass.RunDry(m.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->opportunities, 2);
  EXPECT_EQ(stats->alternatives, 1);
  EXPECT_EQ(stats->rejected_cyclic, 1);
  ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  std::vector<Instruction*> nodes = AlternativeNodes(*m);
  ASSERT_EQ(nodes.size(), 1u);
  // x has the lower id, so its rewrite is the one kept.
  EXPECT_EQ(nodes[0]->operand(0)->name(), "x");
  EXPECT_EQ(nodes[0]->users()[0]->name(), "use1");
  // Both decisions give valid graphs; 0 restores the original.
  std::unique_ptr<Module> keep = m->Clone();
  ASSERT_TRUE(ApplyDecisions(keep.get(), std::vector<int64_t>{0}).ok());
  EXPECT_EQ(DagHash(*keep), hash);
  ASSERT_TRUE(ApplyDecisions(m.get(), std::vector<int64_t>{1}).ok());
  EXPECT_TRUE(VerifyModule(*m).ok());
  EXPECT_EQ(Find(m.get(), "use1")->operand(0)->opcode(), Opcode::kAdd);
}

// ApplyStats::changed tells whether the decisions changed the graph, as a
// DagHash comparison would: a candidate unlike its original changes it; a
// structural copy of the original does not; a look-alike with other
// operands does.
TEST(AlternativeGraphTest, ApplyReportsWhetherTheGraphChanged) {
  // kind 0: negate(p) for x = negate(p), a copy; kind 1: negate(y), a
  // look-alike reading another value; kind 2: abs(p), unlike x.
  for (int kind = 0; kind < 3; ++kind) {
    auto m = test::ParseAndVerify(kTwoChains);
    const uint64_t before = DagHash(*m);
    LambdaPass pass(
        "one", [kind](Module* m, Rewriter& rw) -> absl::StatusOr<bool> {
          Instruction* x = Find(m, "x");
          Instruction* from = Find(m, kind == 1 ? "y" : "p");
          HLOGYM_ASSIGN_OR_RETURN(
              Instruction * r,
              MakeUnary(rw, kind == 2 ? Opcode::kAbs : Opcode::kNegate, from));
          return rw.ReplaceInstruction(x, r);
        });
    auto aug = pass.RunDry(m.get());
    ASSERT_TRUE(aug.ok()) << aug.status();
    ASSERT_EQ(aug->alternatives, 1);
    std::unique_ptr<Module> keep = m->Clone();
    auto kept = ApplyDecisions(keep.get(), std::vector<int64_t>{0});
    ASSERT_TRUE(kept.ok()) << kept.status();
    EXPECT_FALSE(kept->changed) << kind;
    auto taken = ApplyDecisions(m.get(), std::vector<int64_t>{1});
    ASSERT_TRUE(taken.ok()) << taken.status();
    EXPECT_EQ(taken->changed, kind != 0) << kind;
    EXPECT_EQ(taken->changed, DagHash(*m) != before) << kind;
  }
}

TEST(AlternativeGraphTest, AugmentedModuleRoundTripsThroughText) {
  auto m = test::ParseAndVerify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  a = f32[4] add(p, b)
  ROOT n = f32[4] negate(a)
}
)");
  auto pass = test::OnlyRule("add-zero");
  ASSERT_TRUE(pass->RunDry(m.get()).ok());
  std::string text = test::Text(*m);
  EXPECT_NE(text.find("alternatives("), std::string::npos) << text;
  auto reparsed = test::ParseAndVerify(text);
  ASSERT_NE(reparsed, nullptr);
  EXPECT_EQ(DagHash(*reparsed), DagHash(*m));
  // The interpreter evaluates alternatives (operand 0 by default).
  test::ExpectSameOutputs(*m, *reparsed);
}

TEST(PipelineTest, RunnerPausesAtDryPassesAndResumes) {
  auto m = test::ParseAndVerify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[4] constant({0, 0, 0, 0})
  a = f32[4] add(p, z)
  b = f32[4] add(a, z)
  ROOT n = f32[4] negate(b)
}
)");
  Pipeline pipeline("test");
  pipeline.set_verify(true);
  int counted = 0;
  pipeline.AddPass(std::make_unique<LambdaPass>(
      "count", [&](Module*, Rewriter&) -> absl::StatusOr<bool> {
        ++counted;
        return false;
      }));
  Pipeline* loop = pipeline.AddPipeline("loop");
  loop->set_max_iterations(Pipeline::kUntilUnchanged);
  loop->AddPass(test::OnlyRule("add-zero"), /*dry=*/true);
  PipelineRunner runner(&pipeline, m.get());
  auto state = runner.Run();
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, PipelineRunner::State::kPaused);
  EXPECT_EQ(runner.paused_at(), "algebraic-simplifier");
  EXPECT_EQ(counted, 1);
  // Resuming before deciding is an error.
  EXPECT_FALSE(runner.Run().ok());
  int rounds = 0;
  while (*state == PipelineRunner::State::kPaused) {
    ++rounds;
    std::vector<Instruction*> nodes = AlternativeNodes(*m);
    std::vector<int64_t> first(nodes.size(), 1);
    ASSERT_TRUE(ApplyDecisions(m.get(), first).ok());
    state = runner.Run();
    ASSERT_TRUE(state.ok()) << state.status();
  }
  // Round 1 offers both adds against the original graph: b's candidate is
  // the original a, so a second round removes a.
  EXPECT_EQ(rounds, 2);
  EXPECT_EQ(counted, 1);
  EXPECT_EQ(test::Root(*m)->operand(0)->name(), "p");
}

TEST(PipelineTest, EnableDisableAndReorderByName) {
  Pipeline pipeline("p");
  ASSERT_TRUE(pipeline.AddPass("algebraic-simplifier").ok());
  Pipeline* inner = pipeline.AddPipeline("inner");
  ASSERT_TRUE(inner->AddPass("algebraic-simplifier-ls").ok());
  EXPECT_TRUE(pipeline.SetEnabled("algebraic-simplifier-ls", false).ok());
  EXPECT_TRUE(pipeline.MoveBefore("inner", "algebraic-simplifier").ok());
  EXPECT_EQ(pipeline.Describe(),
            "p\n  inner\n    algebraic-simplifier-ls [disabled]\n"
            "  algebraic-simplifier\n");
  absl::Status unknown = pipeline.SetEnabled("no-such-pass", false);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(
      unknown.message().find(
          "it has: inner, algebraic-simplifier-ls, algebraic-simplifier)"),
      std::string::npos)
      << unknown;
  EXPECT_FALSE(pipeline.AddPass("no-such-pass").ok());
}

TEST(PipelineTest, FixpointStopsWhenUnchangedAndAtTheCap) {
  auto m = test::ParseAndVerify(R"(
HloModule m
ENTRY e {
  ROOT p = f32[4] parameter(0)
}
)");
  Pipeline pipeline("fix");
  pipeline.set_max_iterations(Pipeline::kUntilUnchanged);
  int runs = 0;
  pipeline.AddPass(std::make_unique<LambdaPass>(
      "always", [&](Module*, Rewriter&) -> absl::StatusOr<bool> {
        ++runs;
        return true;  // claims a change every time
      }));
  ASSERT_TRUE(pipeline.Run(m.get()).ok());
  EXPECT_EQ(runs, 25);
  runs = 0;
  Pipeline once("once");
  once.set_max_iterations(Pipeline::kUntilUnchanged);
  once.AddPass(std::make_unique<LambdaPass>(
      "never", [&](Module*, Rewriter&) -> absl::StatusOr<bool> {
        ++runs;
        return false;
      }));
  ASSERT_TRUE(once.Run(m.get()).ok());
  EXPECT_EQ(runs, 1);
}

// A pass that triples the entry computation each run (a chain of negates
// twice as long as the computation is put on top of the root), as a
// duplicating rewrite sequence would.
absl::StatusOr<bool> TripleTheModule(Module* m, Rewriter&) {
  Computation* c = m->entry_computation();
  Instruction* top = c->root_instruction();
  const int64_t add = 2 * c->instruction_count();
  for (int64_t i = 0; i < add; ++i) {
    auto neg = std::make_unique<Instruction>(Opcode::kNegate, top->shape());
    neg->set_name(m->UniqueInstructionName("negate"));
    neg->AppendOperand(top);
    top = c->AddInstruction(std::move(neg));
  }
  c->set_root_instruction(top);
  return true;
}

TEST(PipelineTest, LoopsStopWhenTheModuleOutgrowsItsStart) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)";
  // Sizes 2, 6, 18, ... (x3 per run). The limit is 64 * 2 + 100000: the
  // run that first passes it (2 * 3^10 = 118098) is the last one.
  const int64_t limit = kMaxLoopGrowth * 2 + kLoopGrowthSlack;
  ASSERT_EQ(limit, 100128);
  {
    auto m = test::ParseAndVerify(kText);
    Pipeline pipeline("grow");
    pipeline.set_max_iterations(Pipeline::kUntilUnchanged);
    int runs = 0;
    pipeline.AddPass(std::make_unique<LambdaPass>(
        "triple", [&](Module* mm, Rewriter& rw) -> absl::StatusOr<bool> {
          ++runs;
          return TripleTheModule(mm, rw);
        }));
    ASSERT_TRUE(pipeline.Run(m.get()).ok());
    EXPECT_EQ(runs, 10);
    EXPECT_EQ(m->instruction_count(), 118098);
  }
  {
    // The resumable runner stops the same way and counts the stop.
    auto m = test::ParseAndVerify(kText);
    Pipeline root("root");
    Pipeline* loop = root.AddPipeline("grow");
    loop->set_max_iterations(Pipeline::kUntilUnchanged);
    int runs = 0;
    loop->AddPass(std::make_unique<LambdaPass>(
        "triple", [&](Module* mm, Rewriter& rw) -> absl::StatusOr<bool> {
          ++runs;
          return TripleTheModule(mm, rw);
        }));
    PipelineRunner runner(&root, m.get());
    absl::StatusOr<PipelineRunner::State> st = runner.Run();
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(*st, PipelineRunner::State::kDone);
    EXPECT_EQ(runs, 10);
    EXPECT_EQ(runner.growth_stops(), 1);
    EXPECT_EQ(m->instruction_count(), 118098);
  }
  // Below the limit nothing changes: the cap of 25 runs applies.
  EXPECT_FALSE(GrewTooMuch(2, limit));
  EXPECT_TRUE(GrewTooMuch(2, limit + 1));
}

}  // namespace
}  // namespace hlogym
