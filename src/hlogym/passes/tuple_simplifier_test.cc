#include "hlogym/passes/tuple_simplifier.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;

TEST(TupleSimplifierTest, RemovesRepackagingTuple) {
  TupleSimplifier pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = (f32[4], s32[2]) parameter(0)
  g0 = f32[4] get-tuple-element(p), index=0
  g1 = s32[2] get-tuple-element(p), index=1
  ROOT t = (f32[4], s32[2]) tuple(g0, g1)
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(test::Root(*r.applied)->opcode(), Opcode::kParameter);
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 1);
}

TEST(TupleSimplifierTest, KeepsReorderedPartialOrMixedTuples) {
  TupleSimplifier pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  p = (f32[4], f32[4], f32[4]) parameter(0)
  q = (f32[4], f32[4]) parameter(1)
  g0 = f32[4] get-tuple-element(p), index=0
  g1 = f32[4] get-tuple-element(p), index=1
  h1 = f32[4] get-tuple-element(q), index=1
  swapped = (f32[4], f32[4]) tuple(g1, g0)
  partial = (f32[4], f32[4]) tuple(g0, g1)
  mixed = (f32[4], f32[4]) tuple(g0, h1)
  ROOT t = ((f32[4], f32[4]), (f32[4], f32[4]), (f32[4], f32[4])) tuple(swapped, partial, mixed)
}
)");
}

TEST(TupleSimplifierTest, ResolvesGetTupleElementChains) {
  TupleSimplifier pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = s32[] parameter(2)
  inner = (f32[4], f32[4]) tuple(a, b)
  outer = ((f32[4], f32[4]), s32[]) tuple(inner, c)
  g = (f32[4], f32[4]) get-tuple-element(outer), index=0
  gg = f32[4] get-tuple-element(g), index=1
  ROOT n = f32[4] negate(gg)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kNegate);
  EXPECT_EQ(root->operand(0)->name(), "b");
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 4);
}

TEST(TupleSimplifierTest, ShortensChainsEndingAtNonTuples) {
  TupleSimplifier pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = (f32[4], f32[2]) parameter(0)
  c = s32[] parameter(1)
  outer = ((f32[4], f32[2]), s32[]) tuple(p, c)
  g = (f32[4], f32[2]) get-tuple-element(outer), index=0
  gg = f32[2] get-tuple-element(g), index=1
  ROOT n = f32[2] negate(gg)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* gte = test::Root(*r.applied)->operand(0);
  ASSERT_EQ(gte->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(gte->tuple_index(), 1);
  EXPECT_EQ(gte->operand(0)->name(), "p");
  // In a dry run both gtes are offered a shorter path.
  EXPECT_EQ(r.dry.alternatives, 2);
}

TEST(TupleSimplifierTest, KeepsGetTupleElementOfNonTuplesAndControlEdges) {
  TupleSimplifier pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  p = (f32[4], f32[4]) parameter(0)
  a = f32[4] parameter(1)
  g = f32[4] get-tuple-element(p), index=0
  t = (f32[4], f32[4]) tuple(a, g)
  h = f32[4] get-tuple-element(t), index=0, control-predecessors={g}
  ROOT n = (f32[4], f32[4]) tuple(h, g)
}
)");
}

TEST(TupleSimplifierTest, DryRunLeavesValuesOnTheirWayToAsyncDone) {
  constexpr char kText[] = R"(
HloModule m
wrapped {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
ENTRY e {
  p = f32[4] parameter(0)
  start = ((f32[4]), f32[4], s32[]) async-start(p), calls=wrapped
  t = (((f32[4]), f32[4], s32[])) tuple(start)
  g = ((f32[4]), f32[4], s32[]) get-tuple-element(t), index=0
  ROOT done = f32[4] async-done(g)
}
)";
  TupleSimplifier pass;
  // Apply mode may bypass the tuple: the done then reads the start.
  auto m = test::ParseAndVerify(kText);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<bool> changed = pass.Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(VerifyModule(*m).ok());
  EXPECT_EQ(test::Root(*m)->operand(0)->opcode(), Opcode::kAsyncStart);
  // An alternatives node between them would not verify.
  auto dry = test::ParseAndVerify(kText);
  ASSERT_NE(dry, nullptr);
  absl::StatusOr<AugmentStats> stats = pass.RunDry(dry.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->alternatives, 0);
  EXPECT_TRUE(VerifyModule(*dry).ok());
}

}  // namespace
}  // namespace hlogym
