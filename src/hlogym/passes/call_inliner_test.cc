#include "hlogym/passes/call_inliner.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;

int64_t CountOpcode(const Module& m, Opcode op) {
  int64_t n = 0;
  for (const auto& c : m.computations()) {
    c->ForEachInstruction(
        [&](const Instruction* i) { n += i->opcode() == op; });
  }
  return n;
}

TEST(CallInlinerTest, InlinesCall) {
  CallInliner pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
f {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  s = f32[4] add(x, y)
  ROOT m = f32[4] multiply(s, x)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  c = f32[4] call(p, q), to_apply=f
  ROOT n = f32[4] negate(c)
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.applied->computation_count(), 1);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kNegate);
  const Instruction* mul = root->operand(0);
  ASSERT_EQ(mul->opcode(), Opcode::kMultiply);
  const Instruction* add = mul->operand(0);
  ASSERT_EQ(add->opcode(), Opcode::kAdd);
  EXPECT_EQ(add->operand(0)->name(), "p");
  EXPECT_EQ(add->operand(1)->name(), "q");
  EXPECT_EQ(mul->operand(1)->name(), "p");
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 5);
}

TEST(CallInlinerTest, InlinesNestedCallsCalleesFirst) {
  CallInliner pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
inner {
  a = f32[4] parameter(0)
  ROOT b = f32[4] exponential(a)
}
middle {
  x = f32[4] parameter(0)
  k = f32[4] call(x), to_apply=inner
  ROOT y = f32[4] negate(k)
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=middle
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.applied->computation_count(), 1);
  EXPECT_EQ(CountOpcode(*r.applied, Opcode::kCall), 0);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kNegate);
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kExp);
  EXPECT_EQ(root->operand(0)->operand(0)->name(), "p");
  // Dry mode: one alternative per call use (the inner call and the root).
  EXPECT_EQ(r.dry.alternatives, 2);
}

TEST(CallInlinerTest, InlinesCalleeReturningItsParameter) {
  CallInliner pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
id {
  x = f32[4] parameter(0)
  ROOT t = (f32[4]) tuple(x)
}
ENTRY e {
  p = f32[4] parameter(0)
  c = (f32[4]) call(p), to_apply=id
  ROOT g = f32[4] get-tuple-element(c), index=0
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* g = test::Root(*r.applied);
  ASSERT_EQ(g->operand(0)->opcode(), Opcode::kTuple);
  EXPECT_EQ(g->operand(0)->operand(0)->name(), "p");
}

TEST(CallInlinerTest, KeepsCallsThatMustStay) {
  CallInliner pass;
  // Backend config, opted out, control edges.
  ExpectNoRewrite(pass, R"(
HloModule m
f {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=f, backend_config="{}"
  c2 = f32[4] call(p), to_apply=f, frontend_attributes={inlineable="false"}
  n = f32[4] exponential(p)
  c3 = f32[4] call(p), to_apply=f, control-predecessors={n}
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(c1, c2, c3, n)
}
)");
}

TEST(CallInlinerTest, DryRunSkipsSideEffectingCallees) {
  const char* text = R"(
HloModule m
f {
  x = f32[] parameter(0)
  o = f32[] constant(1)
  ROOT r = f32[] rng(x, o), distribution=rng_uniform
}
ENTRY e {
  z = f32[] constant(0)
  c = f32[] call(z), to_apply=f
  ROOT a = f32[] add(c, c)
}
)";
  CallInliner pass;
  auto dry = test::ParseAndVerify(text);
  ASSERT_NE(dry, nullptr);
  absl::StatusOr<AugmentStats> stats = pass.RunDry(dry.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->alternatives, 0);
  // Apply mode inlines it: the rng runs once either way.
  auto m = test::ParseAndVerify(text);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<bool> changed = pass.Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOpcode(*m, Opcode::kCall), 0);
  EXPECT_EQ(CountOpcode(*m, Opcode::kRng), 1);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

}  // namespace
}  // namespace hlogym
