#include "hlogym/passes/rewriter.h"

#include <gtest/gtest.h>

#include "hlogym/ir/str_util.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::OnlyRule;
using test::ParseAndVerify;

constexpr char kAddZero[] = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  a = f32[4] add(p, b)
  ROOT n = f32[4] negate(a)
}
)";

TEST(RewriterTest, ApplyModeReplacesAndRemovesDeadOperands) {
  auto pass = OnlyRule("add-zero");
  test::RewriteResult r = ExpectRewrite(*pass, kAddZero);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  EXPECT_EQ(root->opcode(), Opcode::kNegate);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kParameter);
  // add, broadcast and the zero are gone.
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 2);
  EXPECT_EQ(r.dry.alternatives, 1);
  EXPECT_EQ(r.dry.candidates, 1);
}

TEST(RewriterTest, DryRunMakesOneAlternativePerUse) {
  auto m = ParseAndVerify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[4] constant({0, 0, 0, 0})
  a = f32[4] add(p, z)
  n = f32[4] negate(a)
  x = f32[4] exponential(a)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(n, x, a)
}
)");
  auto pass = OnlyRule("add-zero");
  auto stats = pass->RunDry(m.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  // Three users (negate, exponential, tuple): three alternatives.
  EXPECT_EQ(stats->alternatives, 3);
  std::vector<Instruction*> nodes = AlternativeNodes(*m);
  ASSERT_EQ(nodes.size(), 3u);
  for (Instruction* n : nodes) {
    ASSERT_EQ(n->operand_count(), 2);
    EXPECT_EQ(n->operand(0)->name(), "a");
    EXPECT_EQ(n->operand(1)->name(), "p");
    EXPECT_EQ(n->user_count(), 1);
  }
  // Mixed decisions: the add stays for one user only.
  auto applied = ApplyDecisions(m.get(), std::vector<int64_t>{1, 0, 1});
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_TRUE(VerifyModule(*m).ok());
  EXPECT_TRUE(AlternativeNodes(*m).empty());
  EXPECT_NE(m->entry_computation()->FindInstruction("a"), nullptr);
  EXPECT_EQ(m->entry_computation()->FindInstruction("a")->user_count(), 1);
}

TEST(RewriterTest, ApplyRejectsBadDecisions) {
  auto m = ParseAndVerify(kAddZero);
  auto pass = OnlyRule("add-zero");
  ASSERT_TRUE(pass->RunDry(m.get()).ok());
  uint64_t h = DagHash(*m);
  auto wrong_count = ApplyDecisions(m.get(), std::vector<int64_t>{});
  EXPECT_FALSE(wrong_count.ok());
  EXPECT_NE(wrong_count.status().message().find("expected 1 decision"),
            std::string::npos);
  auto out_of_range = ApplyDecisions(m.get(), std::vector<int64_t>{2});
  EXPECT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("valid: 0..1"),
            std::string::npos);
  EXPECT_EQ(DagHash(*m), h);  // unchanged on error
}

TEST(RewriterTest, NoRewriteWhenGuardFails) {
  auto pass = OnlyRule("add-zero");
  ExpectNoRewrite(*pass, R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(-0.5)
  b = f32[4] broadcast(z), dimensions={}
  ROOT a = f32[4] add(p, b)
}
)");
}

// A side effect counts however deep below an instruction it is called, and
// a computation called many times is scanned once. The chain builds 40
// distinct computations below one call (past the short list of computations
// seen), with an rng in the innermost one only.
std::string CallChain(int depth, bool rng_at_bottom) {
  std::string text = "HloModule chain\n";
  for (int k = depth - 1; k >= 0; --k) {
    text += StrCat("c", k, " {\n  p = f32[4] parameter(0)\n");
    if (k == depth - 1) {
      text += rng_at_bottom
                  ? "  lo = f32[] constant(0)\n  hi = f32[] constant(1)\n"
                    "  ROOT r = f32[4] rng(lo, hi), distribution=rng_uniform\n"
                  : "  ROOT r = f32[4] negate(p)\n";
    } else {
      // Two calls of the next computation: it is still scanned once.
      text += StrCat("  a = f32[4] call(p), to_apply=c", k + 1,
                     "\n  ROOT b = f32[4] call(a), to_apply=c", k + 1, "\n");
    }
    text += "}\n";
  }
  text +=
      "ENTRY main {\n  x = f32[4] parameter(0)\n"
      "  ROOT y = f32[4] call(x), to_apply=c0\n}\n";
  return text;
}

TEST(HasSideEffectDeepTest, SeesEffectsAtAnyDepth) {
  for (int depth : {1, 3, 40}) {
    for (bool rng : {false, true}) {
      std::unique_ptr<Module> m = ParseAndVerify(CallChain(depth, rng));
      ASSERT_NE(m, nullptr);
      const Instruction* y = m->entry_computation()->root_instruction();
      EXPECT_EQ(HasSideEffectDeep(*y), rng) << depth;
      EXPECT_FALSE(y->HasSideEffect());
    }
  }
}

}  // namespace
}  // namespace hlogym
