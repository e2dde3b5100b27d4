#include "hlogym/passes/conditional_simplifier.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::Root;

using test::ExpectRewrite;

const Instruction* FindOpcode(const Computation* c, Opcode op) {
  const Instruction* found = nullptr;
  c->ForEachInstruction([&](Instruction* i) {
    if (i->opcode() == op) found = i;
  });
  return found;
}

// Branches: on_true computes exp(x), on_false log(y); both take (x, y).
std::string TwoBranches(std::string_view pred_def) {
  std::string text = R"(
HloModule m
on_true {
  p = (f32[4], f32[4]) parameter(0)
  x = f32[4] get-tuple-element(p), index=0
  ROOT e = f32[4] exponential(x)
}
on_false {
  p = (f32[4], f32[4]) parameter(0)
  y = f32[4] get-tuple-element(p), index=1
  ROOT l = f32[4] sine(y)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  q = pred[] parameter(2)
  t = (f32[4], f32[4]) tuple(x, y)
)";
  text += "  " + std::string(pred_def) + "\n";
  text +=
      R"(  c = f32[4] conditional(b, t, t), true_computation=on_true, false_computation=on_false
  ROOT n = f32[4] negate(c)
}
)";
  return text;
}

TEST(ConditionalSimplifierTest, ConstantTrueInlinesFirstBranch) {
  ConditionalSimplifier pass;
  auto r = ExpectRewrite(pass, TwoBranches("b = pred[] constant(true)"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  const Instruction* e = root->operand(0);
  ASSERT_EQ(e->opcode(), Opcode::kExp);
  ASSERT_EQ(e->operand(0)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(e->operand(0)->operand(0)->name(), "t");
  EXPECT_EQ(FindOpcode(r.applied->entry_computation(), Opcode::kConditional),
            nullptr);
}

TEST(ConditionalSimplifierTest, ConstantFalseInlinesSecondBranch) {
  ConditionalSimplifier pass;
  auto r = ExpectRewrite(pass, TwoBranches("b = pred[] constant(false)"));
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(Root(*r.applied)->operand(0)->opcode(), Opcode::kSin);
}

TEST(ConditionalSimplifierTest, OutOfRangeIndexPicksLastBranch) {
  ConditionalSimplifier pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
b0 {
  p = f32[4] parameter(0)
  ROOT a = f32[4] abs(p)
}
b1 {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
b2 {
  p = f32[4] parameter(0)
  ROOT f = f32[4] floor(p)
}
ENTRY e {
  x = f32[4] parameter(0)
  i = s32[] constant(7)
  ROOT c = f32[4] conditional(i, x, x, x), branch_computations={b0, b1, b2}
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kFloor);
  EXPECT_EQ(root->operand(0)->name(), "x");
}

TEST(ConditionalSimplifierTest, CheapBranchesBecomeSelect) {
  ConditionalSimplifier pass;
  auto r = ExpectRewrite(pass, TwoBranches("b = pred[] and(q, q)"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* s = Root(*r.applied)->operand(0);
  ASSERT_EQ(s->opcode(), Opcode::kSelect);
  ASSERT_EQ(s->operand(0)->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(s->operand(0)->operand(0)->name(), "b");
  EXPECT_EQ(s->operand(1)->opcode(), Opcode::kExp);
  EXPECT_EQ(s->operand(2)->opcode(), Opcode::kSin);
}

TEST(ConditionalSimplifierTest, KeepsExpensiveBranches) {
  ConditionalSimplifier pass;
  ExpectNoRewrite(pass, R"(
HloModule m
on_true {
  p = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
on_false {
  p = f32[4,4] parameter(0)
  ROOT n = f32[4,4] negate(p)
}
ENTRY e {
  x = f32[4,4] parameter(0)
  q = pred[] parameter(1)
  ROOT c = f32[4,4] conditional(q, x, x), true_computation=on_true, false_computation=on_false
}
)");
}

TEST(ConditionalSimplifierTest, KeepsSideEffectingBranches) {
  ConditionalSimplifier pass;
  ExpectNoRewrite(pass, R"(
HloModule m
on_true {
  p = f32[] parameter(0)
  ROOT r = f32[] rng(p, p), distribution=rng_uniform
}
on_false {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
ENTRY e {
  x = f32[] parameter(0)
  q = pred[] constant(true)
  ROOT c = f32[] conditional(q, x, x), true_computation=on_true, false_computation=on_false
}
)");
}

// Two outputs; the caller reads only FIRST (and maybe SECOND).
constexpr char kTupleOut[] = R"(
HloModule m
on_true {
  p = f32[4] parameter(0)
  e = f32[4] exponential(p)
  s = f32[4] sine(p)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(e, s, e)
}
on_false {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  d = f32[4] dot(p, p), lhs_batch_dims={0}, rhs_batch_dims={0}
  ROOT t = (f32[4], f32[4], f32[4]) tuple(n, p, n)
}
ENTRY e {
  x = f32[4] parameter(0)
  q = pred[] parameter(1)
  c = (f32[4], f32[4], f32[4]) conditional(q, x, x), true_computation=on_true, false_computation=on_false
  g0 = f32[4] get-tuple-element(c), index=0
  g2 = f32[4] get-tuple-element(c), index=2
  ROOT a = f32[4] add(g0, g2)
}
)";

TEST(ConditionalSimplifierTest, MergesDuplicateOutputsAndDropsUnused) {
  ConditionalSimplifier pass;
  // Apply mode: the first rewrite merges index 2 into index 0.
  auto r = ExpectRewrite(pass, kTupleOut);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* a = Root(*r.applied);
  ASSERT_EQ(a->opcode(), Opcode::kAdd);
  EXPECT_EQ(a->operand(0)->tuple_index(), 0);
  EXPECT_EQ(a->operand(1)->tuple_index(), 0);
  // The next run drops the unread elements 1 and 2.
  auto second = ExpectRewrite(pass, test::Text(*r.applied));
  ASSERT_NE(second.applied, nullptr);
  const Instruction* c =
      FindOpcode(second.applied->entry_computation(), Opcode::kConditional);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->shape().tuple_shapes_size(), 1);
  const Computation* on_false = c->called_computations()[1];
  EXPECT_EQ(on_false->root_instruction()->operand(0)->opcode(),
            Opcode::kNegate);
  EXPECT_EQ(FindOpcode(c->called_computations()[0], Opcode::kSin), nullptr);
}

TEST(ConditionalSimplifierTest, DropsUnreadOperandElements) {
  ConditionalSimplifier pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
on_true {
  p = (f32[4], f32[4]) parameter(0)
  x = f32[4] get-tuple-element(p), index=0
  ROOT d = f32[4] dot(x, x), lhs_batch_dims={0}, rhs_batch_dims={0}
}
on_false {
  p = (f32[4], f32[4]) parameter(0)
  y = f32[4] get-tuple-element(p), index=1
  ROOT d = f32[4] dot(y, y), lhs_batch_dims={0}, rhs_batch_dims={0}
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  q = pred[] parameter(2)
  t = (f32[4], f32[4]) tuple(x, y)
  ROOT c = f32[4] conditional(q, t, t), true_computation=on_true, false_computation=on_false
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* c = Root(*r.applied);
  ASSERT_EQ(c->opcode(), Opcode::kConditional);
  ASSERT_EQ(c->operand(1)->opcode(), Opcode::kTuple);
  ASSERT_EQ(c->operand(1)->operand_count(), 1);
  EXPECT_EQ(c->operand(1)->operand(0)->name(), "x");
  ASSERT_EQ(c->operand(2)->operand_count(), 1);
  EXPECT_EQ(c->operand(2)->operand(0)->name(), "y");
}

TEST(ConditionalSimplifierTest, KeepsOutputsReadByNonGte) {
  ConditionalSimplifier pass;
  ExpectNoRewrite(pass, R"(
HloModule m
on_true {
  p = f32[4] parameter(0)
  d = f32[4] dot(p, p), lhs_batch_dims={0}, rhs_batch_dims={0}
  ROOT t = (f32[4], f32[4]) tuple(d, p)
}
on_false {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT t = (f32[4], f32[4]) tuple(n, p)
}
ENTRY e {
  x = f32[4] parameter(0)
  q = pred[] parameter(1)
  ROOT c = (f32[4], f32[4]) conditional(q, x, x), true_computation=on_true, false_computation=on_false
}
)");
}

TEST(ConditionalSimplifierTest, IsRegistered) {
  EXPECT_TRUE(PassRegistry::Global().Contains("conditional-simplifier"));
}

}  // namespace
}  // namespace hlogym
