#include "hlogym/passes/while_loop_simplifier.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::Root;

using test::ExpectRewrite;

int64_t CountOpcode(const Computation* c, Opcode op) {
  int64_t n = 0;
  c->ForEachInstruction([&](Instruction* i) { n += i->opcode() == op; });
  return n;
}

const Instruction* FindWhile(const Module& m) {
  const Instruction* found = nullptr;
  m.entry_computation()->ForEachInstruction([&](Instruction* i) {
    if (i->opcode() == Opcode::kWhile) found = i;
  });
  return found;
}

TEST(WhileLoopSimplifierTest, TripCountZeroBecomesInit) {
  WhileLoopSimplifier pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(3)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[4] negate(x)
  ROOT t = (s32[], f32[4]) tuple(i1, x1)
}
ENTRY e {
  x = f32[4] parameter(0)
  five = s32[] constant(5)
  init = (s32[], f32[4]) tuple(five, x)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  EXPECT_EQ(root->opcode(), Opcode::kTuple);
  EXPECT_EQ(root->name(), "init");
  EXPECT_EQ(FindWhile(*r.applied), nullptr);
}

TEST(WhileLoopSimplifierTest, ConstantFalseConditionBecomesInit) {
  WhileLoopSimplifier pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
cond {
  p = f32[4] parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
ENTRY e {
  x = f32[4] parameter(0)
  w = f32[4] while(x), condition=cond, body=body
  ROOT a = f32[4] abs(w)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kAbs);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kParameter);
}

constexpr char kTripOne[] = R"(
HloModule m
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(1)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[4] multiply(x, x)
  ROOT t = (s32[], f32[4]) tuple(i1, x1)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT g = f32[4] get-tuple-element(w), index=1
}
)";

TEST(WhileLoopSimplifierTest, TripCountOneInlinesBody) {
  WhileLoopSimplifier pass;
  auto r = ExpectRewrite(pass, kTripOne);
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(FindWhile(*r.applied), nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kGetTupleElement);
  const Instruction* t = root->operand(0);
  ASSERT_EQ(t->opcode(), Opcode::kTuple);
  ASSERT_EQ(t->operand_count(), 2);
  EXPECT_EQ(t->operand(0)->opcode(), Opcode::kAdd);
  const Instruction* mul = t->operand(1);
  ASSERT_EQ(mul->opcode(), Opcode::kMultiply);
  // The body's parameter became the init: x = get-tuple-element(init, 1).
  ASSERT_EQ(mul->operand(0)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(mul->operand(0)->operand(0)->name(), "init");
  EXPECT_EQ(r.dry.alternatives, 1);
}

TEST(WhileLoopSimplifierTest, ScalarStateDecrementingTripOne) {
  WhileLoopSimplifier pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
cond {
  p = s32[] parameter(0)
  c = s32[] constant(2)
  ROOT gt = pred[] compare(p, c), direction=GT
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT s = s32[] subtract(p, one)
}
ENTRY e {
  three = s32[] constant(3)
  w = s32[] while(three), condition=cond, body=body
  ROOT n = s32[] negate(w)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kSubtract);
  EXPECT_EQ(root->operand(0)->operand(0)->opcode(), Opcode::kConstant);
}

TEST(WhileLoopSimplifierTest, KeepsLoopWithTwoTrips) {
  WhileLoopSimplifier pass;
  std::string text = kTripOne;
  text.replace(text.find("constant(1)\n  ROOT lt"), 11, "constant(2)");
  ExpectNoRewrite(pass, text);
}

TEST(WhileLoopSimplifierTest, KeepsLoopWithUnknownTripCount) {
  WhileLoopSimplifier pass;
  ExpectNoRewrite(pass, R"(
HloModule m
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(1)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[4] multiply(x, x)
  ROOT t = (s32[], f32[4]) tuple(i1, x1)
}
ENTRY e {
  x = f32[4] parameter(0)
  n = s32[] parameter(1)
  init = (s32[], f32[4]) tuple(n, x)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)");
}

TEST(WhileLoopSimplifierTest, KeepsTripOneLoopWithSideEffectInBody) {
  WhileLoopSimplifier pass;
  ExpectNoRewrite(pass, R"(
HloModule m
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(1)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[] rng(lo, hi), distribution=rng_uniform
  ROOT t = (s32[], f32[]) tuple(i1, r)
}
ENTRY e {
  x = f32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[]) tuple(zero, x)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
}
)");
}

TEST(WhileLoopSimplifierTest, KeepsTripZeroLoopWithSideEffectInCondition) {
  WhileLoopSimplifier pass;
  ExpectNoRewrite(pass, R"(
HloModule m
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[] rng(lo, hi), distribution=rng_uniform
  c = s32[] constant(0)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[] negate(x)
  ROOT t = (s32[], f32[]) tuple(i1, x1)
}
ENTRY e {
  x = f32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[]) tuple(zero, x)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
}
)");
}

TEST(WhileLoopSimplifierTest, FlattensNestedState) {
  WhileLoopSimplifier pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
cond {
  p = (s32[], (f32[4], f32[4])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(3)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], (f32[4], f32[4])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  xy = (f32[4], f32[4]) get-tuple-element(p), index=1
  x = f32[4] get-tuple-element(xy), index=0
  y = f32[4] get-tuple-element(xy), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  s = f32[4] add(x, y)
  xy1 = (f32[4], f32[4]) tuple(s, y)
  ROOT t = (s32[], (f32[4], f32[4])) tuple(i1, xy1)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  n = s32[] parameter(2)
  xy = (f32[4], f32[4]) tuple(x, y)
  init = (s32[], (f32[4], f32[4])) tuple(n, xy)
  ROOT w = (s32[], (f32[4], f32[4])) while(init), condition=cond, body=body
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* w = FindWhile(*r.applied);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->shape().tuple_shapes_size(), 3);
  for (const Shape& s : w->shape().tuple_shapes()) EXPECT_FALSE(s.IsTuple());
  const Instruction* init = w->operand(0);
  ASSERT_EQ(init->opcode(), Opcode::kTuple);
  EXPECT_EQ(init->operand(0)->name(), "n");
  EXPECT_EQ(init->operand(1)->name(), "x");
  EXPECT_EQ(init->operand(2)->name(), "y");
  // The body root is flat: (i1, s, y).
  const Instruction* broot = w->while_body()->root_instruction();
  ASSERT_EQ(broot->opcode(), Opcode::kTuple);
  ASSERT_EQ(broot->operand_count(), 3);
  EXPECT_EQ(broot->operand(1)->opcode(), Opcode::kAdd);
  // The result is rebuilt nested from get-tuple-elements of the loop.
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kTuple);
  ASSERT_EQ(root->operand(1)->opcode(), Opcode::kTuple);
  EXPECT_EQ(root->operand(1)->operand(0)->operand(0), w);
}

TEST(WhileLoopSimplifierTest, RemovesElementUnusedAfterLoop) {
  WhileLoopSimplifier pass;
  auto r = ExpectRewrite(pass, R"(
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
  y = f32[4] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[4] negate(x)
  y1 = f32[4] multiply(y, y)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i1, x1, y1)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  n = s32[] parameter(2)
  init = (s32[], f32[4], f32[4]) tuple(n, x, y)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT g = f32[4] get-tuple-element(w), index=1
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* w = FindWhile(*r.applied);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->shape().tuple_shapes_size(), 2);
  EXPECT_EQ(w->operand(0)->operand(1)->name(), "x");
  EXPECT_EQ(CountOpcode(w->while_body(), Opcode::kMultiply), 0);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kGetTupleElement);
  const Instruction* t = root->operand(0);
  ASSERT_EQ(t->opcode(), Opcode::kTuple);
  EXPECT_EQ(t->operand(1)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(t->operand(1)->operand(0), w);
  // The removed element reads the init.
  EXPECT_EQ(t->operand(2)->name(), "y");
  // The new body and condition print and parse back.
  EXPECT_NE(test::ParseAndVerify(test::Text(*r.applied)), nullptr);
}

TEST(WhileLoopSimplifierTest, RemovesPassedThroughElementUsedAfterLoop) {
  WhileLoopSimplifier pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
cond {
  p = (s32[], f32[4], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(3)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], f32[4], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  k = f32[2] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[4] negate(x)
  ROOT t = (s32[], f32[4], f32[2]) tuple(i1, x1, k)
}
ENTRY e {
  x = f32[4] parameter(0)
  k = f32[2] parameter(1)
  n = s32[] parameter(2)
  init = (s32[], f32[4], f32[2]) tuple(n, x, k)
  ROOT w = (s32[], f32[4], f32[2]) while(init), condition=cond, body=body
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* w = FindWhile(*r.applied);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape().tuple_shapes_size(), 2);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kTuple);
  EXPECT_EQ(root->operand(2)->name(), "k");
}

TEST(WhileLoopSimplifierTest, KeepsElementFeedingAnotherOrTheCondition) {
  WhileLoopSimplifier pass;
  // y feeds x; z feeds the condition; both are unused after the loop.
  ExpectNoRewrite(pass, R"(
HloModule m
cond {
  p = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  z = s32[] get-tuple-element(p), index=3
  ROOT lt = pred[] compare(i, z), direction=LT
}
body {
  p = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  y = f32[4] get-tuple-element(p), index=2
  z = s32[] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[4] add(x, y)
  y1 = f32[4] multiply(y, y)
  z1 = s32[] add(z, one)
  ROOT t = (s32[], f32[4], f32[4], s32[]) tuple(i1, x1, y1, z1)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  n = s32[] parameter(2)
  init = (s32[], f32[4], f32[4], s32[]) tuple(n, x, y, n)
  w = (s32[], f32[4], f32[4], s32[]) while(init), condition=cond, body=body
  a = s32[] get-tuple-element(w), index=0
  b = f32[4] get-tuple-element(w), index=1
  ROOT r = (s32[], f32[4]) tuple(a, b)
}
)");
}

TEST(WhileLoopSimplifierTest, KeepsElementReachingSideEffect) {
  WhileLoopSimplifier pass;
  ExpectNoRewrite(pass, R"(
HloModule m
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(3)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  y = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  r = f32[] rng(y, y), distribution=rng_uniform
  ROOT t = (s32[], f32[]) tuple(i1, r)
}
ENTRY e {
  y = f32[] parameter(0)
  n = s32[] parameter(1)
  init = (s32[], f32[]) tuple(n, y)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT a = s32[] get-tuple-element(w), index=0
}
)");
}

TEST(WhileLoopSimplifierTest, KeepsLoopCarryingAsyncState) {
  WhileLoopSimplifier pass;
  // The nested state would be flattened, but async-update and async-done
  // must see their async-start through the loop state.
  ExpectNoRewrite(pass, R"(
HloModule m
wrapped {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
cond {
  p = (s32[], ((f32[4]), f32[4], s32[])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(3)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], ((f32[4]), f32[4], s32[])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  a = ((f32[4]), f32[4], s32[]) get-tuple-element(p), index=1
  u = ((f32[4]), f32[4], s32[]) async-update(a), calls=wrapped
  ROOT t = (s32[], ((f32[4]), f32[4], s32[])) tuple(i1, u)
}
ENTRY e {
  x = f32[4] parameter(0)
  n = s32[] parameter(1)
  start = ((f32[4]), f32[4], s32[]) async-start(x), calls=wrapped
  init = (s32[], ((f32[4]), f32[4], s32[])) tuple(n, start)
  w = (s32[], ((f32[4]), f32[4], s32[])) while(init), condition=cond, body=body
  a = ((f32[4]), f32[4], s32[]) get-tuple-element(w), index=1
  ROOT d = f32[4] async-done(a), calls=wrapped
}
)");
}

TEST(WhileLoopSimplifierTest, IsRegistered) {
  EXPECT_TRUE(PassRegistry::Global().Contains("while-loop-simplifier"));
}

}  // namespace
}  // namespace hlogym
