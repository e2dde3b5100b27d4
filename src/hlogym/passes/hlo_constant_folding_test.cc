#include "hlogym/passes/hlo_constant_folding.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;

TEST(HloConstantFoldingTest, FoldsBinaryOfConstants) {
  HloConstantFolding fold;
  test::RewriteResult r = ExpectRewrite(fold, R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  c1 = f32[3] constant({1, 2, 3})
  c2 = f32[3] constant({10, 20, 30})
  a = f32[3] add(c1, c2)
  ROOT m = f32[3] multiply(p, a)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kMultiply);
  const Instruction* c = root->operand(1);
  ASSERT_EQ(c->opcode(), Opcode::kConstant);
  EXPECT_EQ(c->literal().ToString(), "{11, 22, 33}");
  // The folded operands are gone.
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 3);
}

TEST(HloConstantFoldingTest, FoldsChainsAndBroadcastAndIotaOperands) {
  HloConstantFolding fold;
  test::RewriteResult r = ExpectRewrite(fold, R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  c = s32[] constant(2)
  b = s32[4] broadcast(c), dimensions={}
  k = s32[4] constant({1, 1, 1, 1})
  i = s32[4] iota(), iota_dimension=0
  m = s32[4] multiply(b, k)
  a = s32[4] add(i, k)
  n = s32[4] negate(m)
  s = s32[4] subtract(n, a)
  ROOT r = s32[4] add(p, s)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  const Instruction* c = root->operand(1);
  ASSERT_EQ(c->opcode(), Opcode::kConstant);
  // -(2*1) - (iota + 1)
  EXPECT_EQ(c->literal().ToString(), "{-3, -4, -5, -6}");
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 3);
}

TEST(HloConstantFoldingTest, FoldsGetTupleElementOfConstantTuple) {
  HloConstantFolding fold;
  test::RewriteResult r = ExpectRewrite(fold, R"(
HloModule m
ENTRY e {
  p = s32[] parameter(0)
  t = (f32[], s32[]) constant((1.5, 7))
  g = s32[] get-tuple-element(t), index=1
  ROOT a = s32[] add(p, g)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* c = test::Root(*r.applied)->operand(1);
  ASSERT_EQ(c->opcode(), Opcode::kConstant);
  EXPECT_EQ(c->literal().ToString(), "7");
}

TEST(HloConstantFoldingTest, FoldsCallOfConstants) {
  HloConstantFolding fold;
  test::RewriteResult r = ExpectRewrite(fold, R"(
HloModule m
f {
  x = f32[2] parameter(0)
  ROOT y = f32[2] negate(x)
}
ENTRY e {
  p = f32[2] parameter(0)
  c = f32[2] constant({1, -2})
  k = f32[2] call(c), to_apply=f
  ROOT a = f32[2] add(p, k)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* c = test::Root(*r.applied)->operand(1);
  ASSERT_EQ(c->opcode(), Opcode::kConstant);
  EXPECT_EQ(c->literal().ToString(), "{-1, 2}");
}

TEST(HloConstantFoldingTest, KeepsNonConstantOperandsAndCheapProducers) {
  HloConstantFolding fold;
  // A parameter operand; broadcasts and iotas alone; an op of a broadcast
  // and an iota without any constant operand.
  ExpectNoRewrite(fold, R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(1)
  k = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, k)
  b = f32[4] broadcast(c), dimensions={}
  i = f32[4] iota(), iota_dimension=0
  s = f32[4] add(b, i)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(a, b, i, s)
}
)");
}

TEST(HloConstantFoldingTest, KeepsRngSideEffectsAndControlEdges) {
  HloConstantFolding fold;
  ExpectNoRewrite(fold, R"(
HloModule m
g {
  x = f32[] parameter(0)
  o = f32[] constant(1)
  ROOT r = f32[] rng(x, o), distribution=rng_uniform
}
ENTRY e {
  z = f32[] constant(0)
  o = f32[] constant(1)
  r = f32[4] rng(z, o), distribution=rng_uniform
  k = f32[] call(z), to_apply=g
  c = f32[] custom-call(z), custom_call_target="f", custom_call_has_side_effect=true
  n = f32[] negate(o), control-predecessors={z}
  ROOT t = (f32[4], f32[], f32[], f32[]) tuple(r, k, c, n)
}
)");
}

TEST(HloConstantFoldingTest, KeepsPadOfBroadcastAndWhile) {
  HloConstantFolding fold;
  ExpectNoRewrite(fold, R"(
HloModule m
cond {
  cp = s32[] parameter(0)
  lim = s32[] constant(3)
  ROOT lt = pred[] compare(cp, lim), direction=LT
}
body {
  bp = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT ni = s32[] add(bp, one)
}
ENTRY e {
  c = f32[] constant(1)
  z = f32[] constant(0)
  b = f32[4] broadcast(c), dimensions={}
  pd = f32[8] pad(b, z), padding=2_2
  i = s32[] constant(0)
  w = s32[] while(i), condition=cond, body=body
  ROOT t = (f32[8], s32[]) tuple(pd, w)
}
)");
}

TEST(HloConstantFoldingTest, FoldsPadOfConstant) {
  HloConstantFolding fold;
  test::RewriteResult r = ExpectRewrite(fold, R"(
HloModule m
ENTRY e {
  c = f32[2] constant({1, 2})
  z = f32[] constant(0)
  ROOT pd = f32[4] pad(c, z), padding=1_1
}
)");
  ASSERT_NE(r.applied, nullptr);
  ASSERT_EQ(test::Root(*r.applied)->opcode(), Opcode::kConstant);
  EXPECT_EQ(test::Root(*r.applied)->literal().ToString(), "{0, 1, 2, 0}");
}

TEST(HloConstantFoldingTest, KeepsResultsOverTheSizeCap) {
  HloConstantFolding fold;
  // 45,000,001 result elements: one over the cap.
  ExpectNoRewrite(fold, R"(
HloModule m
ENTRY e {
  c = f32[1] constant({1})
  z = f32[] constant(0)
  ROOT pd = f32[45000001] pad(c, z), padding=0_45000000
}
)");
}

TEST(HloConstantFoldingTest, IgnoresEvaluationFailures) {
  HloConstantFolding fold;
  // The constant's values are not in the text: evaluation fails.
  ExpectNoRewrite(fold, R"(
HloModule m
ENTRY e {
  c = f32[4] constant({...})
  ROOT n = f32[4] negate(c)
}
)");
}

}  // namespace
}  // namespace hlogym
