#include "hlogym/passes/while_loop_invariant_code_motion.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::Root;

using test::ExpectRewrite;

const Instruction* FindWhile(const Module& m) {
  const Instruction* found = nullptr;
  m.entry_computation()->ForEachInstruction([&](Instruction* i) {
    if (i->opcode() == Opcode::kWhile) found = i;
  });
  return found;
}

// A loop with state (i, x, k): k is passed through unchanged. BODY_OPS
// computes `v` from k (and maybe x); x1 = add(x, v).
std::string Loop(std::string_view body_ops) {
  std::string text = R"(
HloModule m
cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(3)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  k = f32[4] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
)";
  text += body_ops;
  text += R"(
  x1 = f32[4] add(x, v)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i1, x1, k)
}
ENTRY e {
  x = f32[4] parameter(0)
  k = f32[4] parameter(1)
  n = s32[] parameter(2)
  init = (s32[], f32[4], f32[4]) tuple(n, x, k)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
}
)";
  return text;
}

TEST(WhileLoopInvariantCodeMotionTest, HoistsInvariantComputation) {
  WhileLoopInvariantCodeMotion pass;
  auto r = ExpectRewrite(pass, Loop("  v = f32[4] exponential(k)"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* w = FindWhile(*r.applied);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->shape().tuple_shapes_size(), 4);
  const Instruction* init = w->operand(0);
  ASSERT_EQ(init->opcode(), Opcode::kTuple);
  const Instruction* hoisted = init->operand(3);
  ASSERT_EQ(hoisted->opcode(), Opcode::kExp);
  EXPECT_EQ(hoisted->operand(0)->name(), "k");
  // The body reads it from the state and passes it through.
  const Instruction* broot = w->while_body()->root_instruction();
  ASSERT_EQ(broot->operand_count(), 4);
  const Instruction* x1 = broot->operand(1);
  ASSERT_EQ(x1->opcode(), Opcode::kAdd);
  ASSERT_EQ(x1->operand(1)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(x1->operand(1)->tuple_index(), 3);
  EXPECT_EQ(broot->operand(3), x1->operand(1));
  int64_t exps = 0;
  w->while_body()->ForEachInstruction(
      [&](Instruction* i) { exps += i->opcode() == Opcode::kExp; });
  EXPECT_EQ(exps, 0);
  // The loop's old shape is rebuilt for its users.
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kTuple);
  EXPECT_EQ(root->operand_count(), 3);
  EXPECT_EQ(root->operand(2)->operand(0), w);
}

TEST(WhileLoopInvariantCodeMotionTest, PullsCheapOperandsAlong) {
  WhileLoopInvariantCodeMotion pass;
  auto r = ExpectRewrite(pass, Loop(R"(  h = f32[] constant(0.5)
  b = f32[4] broadcast(h), dimensions={}
  v = f32[4] multiply(k, b))"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* w = FindWhile(*r.applied);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->shape().tuple_shapes_size(), 4);
  const Instruction* hoisted = w->operand(0)->operand(3);
  ASSERT_EQ(hoisted->opcode(), Opcode::kMultiply);
  EXPECT_EQ(hoisted->operand(0)->name(), "k");
  ASSERT_EQ(hoisted->operand(1)->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(hoisted->operand(1)->operand(0)->opcode(), Opcode::kConstant);
}

TEST(WhileLoopInvariantCodeMotionTest, LeavesCheapInstructionsAlone) {
  WhileLoopInvariantCodeMotion pass;
  // A transpose or broadcast alone is not worth a loop-state element.
  ExpectNoRewrite(pass, Loop(R"(  v = f32[4] reverse(k), dimensions={0})"));
  ExpectNoRewrite(pass, Loop(R"(  h = f32[] constant(0.5)
  v = f32[4] broadcast(h), dimensions={})"));
}

TEST(WhileLoopInvariantCodeMotionTest, LeavesVariantAndSideEffectingAlone) {
  WhileLoopInvariantCodeMotion pass;
  // Depends on x, which changes every iteration.
  ExpectNoRewrite(pass, Loop("  v = f32[4] multiply(k, x)"));
  // rng is side-effecting.
  ExpectNoRewrite(pass, Loop(R"(  lo = f32[] constant(0)
  hi = f32[] constant(1)
  v = f32[4] rng(lo, hi), distribution=rng_uniform)"));
}

TEST(WhileLoopInvariantCodeMotionTest, SkipsLoopsOfOneTrip) {
  WhileLoopInvariantCodeMotion pass;
  std::string text = Loop("  v = f32[4] exponential(k)");
  text.replace(text.find("tuple(n, x, k)"), 14, "tuple(z, x, k)");
  text.replace(text.find("n = s32[] parameter(2)"), 22,
               "z = s32[] constant(2)");
  ExpectNoRewrite(pass, text);
}

TEST(WhileLoopInvariantCodeMotionTest, HoistConstantsOption) {
  WhileLoopInvariantCodeMotionOptions o;
  o.hoist_constants = true;
  WhileLoopInvariantCodeMotion pass(o);
  auto r = ExpectRewrite(pass, Loop(R"(  v = f32[4] constant({1, 2, 3, 4}))"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* w = FindWhile(*r.applied);
  ASSERT_NE(w, nullptr);
  // Both constants (the step `one` and v) become loop state.
  ASSERT_EQ(w->shape().tuple_shapes_size(), 5);
  EXPECT_EQ(w->operand(0)->operand(3)->opcode(), Opcode::kConstant);
  EXPECT_EQ(w->operand(0)->operand(4)->opcode(), Opcode::kConstant);
  WhileLoopInvariantCodeMotion by_default;
  ExpectNoRewrite(by_default, Loop(R"(  v = f32[4] constant({1, 2, 3, 4}))"));
  EXPECT_TRUE(by_default.SetOption("hoist_constants", "true").ok());
  EXPECT_FALSE(by_default.SetOption("no_such_option", "true").ok());
}

TEST(WhileLoopInvariantCodeMotionTest, IsRegistered) {
  EXPECT_TRUE(
      PassRegistry::Global().Contains("while-loop-invariant-code-motion"));
}

}  // namespace
}  // namespace hlogym
