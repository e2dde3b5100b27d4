#include "hlogym/passes/while_loop_constant_sinking.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;

// State (i, x, c, n): c and n are passed through; x1 = add(x, c) and the
// condition is i < n. INIT_C and INIT_N are the init values of c and n.
std::string Loop(std::string_view init_c, std::string_view init_n) {
  std::string text = R"(
HloModule m
cond {
  p = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=3
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  c = f32[4] get-tuple-element(p), index=2
  n = s32[] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[4] add(x, c)
  ROOT t = (s32[], f32[4], f32[4], s32[]) tuple(i1, x1, c, n)
}
ENTRY e {
  x = f32[4] parameter(0)
  s = s32[] parameter(1)
  f = f32[4] parameter(2)
)";
  text += "  c = f32[4] " + std::string(init_c) + "\n";
  text += "  n = s32[] " + std::string(init_n) + "\n";
  text += R"(  init = (s32[], f32[4], f32[4], s32[]) tuple(s, x, c, n)
  ROOT w = (s32[], f32[4], f32[4], s32[]) while(init), condition=cond, body=body
}
)";
  return text;
}

TEST(WhileLoopConstantSinkingTest, SinksIntoBodyAndCondition) {
  WhileLoopConstantSinking pass;
  auto r = ExpectRewrite(pass, Loop("constant({1, 2, 3, 4})", "constant(3)"));
  ASSERT_NE(r.applied, nullptr);
  const Computation* body = r.applied->FindComputation("body");
  const Computation* cond = r.applied->FindComputation("cond");
  ASSERT_NE(body, nullptr);
  ASSERT_NE(cond, nullptr);
  const Instruction* x1 = body->FindInstruction("x1");
  ASSERT_NE(x1, nullptr);
  ASSERT_EQ(x1->operand(1)->opcode(), Opcode::kConstant);
  EXPECT_EQ(x1->operand(1)->literal().GetAsDouble(3), 4.0);
  // The root still passes the element through.
  const Instruction* broot = body->root_instruction();
  EXPECT_EQ(broot->operand(2)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(broot->operand(3)->opcode(), Opcode::kGetTupleElement);
  const Instruction* lt = cond->root_instruction();
  ASSERT_EQ(lt->opcode(), Opcode::kCompare);
  ASSERT_EQ(lt->operand(1)->opcode(), Opcode::kConstant);
  EXPECT_EQ(lt->operand(1)->literal().GetAsInt64(0), 3);
  // One alternative per use: x1's operand and the compare's operand.
  EXPECT_EQ(r.dry.alternatives, 2);
}

TEST(WhileLoopConstantSinkingTest, OnlyScalarsOption) {
  WhileLoopConstantSinkingOptions o;
  o.sink_only_scalar_constants = true;
  WhileLoopConstantSinking pass(o);
  auto r = ExpectRewrite(pass, Loop("constant({1, 2, 3, 4})", "constant(3)"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* x1 =
      r.applied->FindComputation("body")->FindInstruction("x1");
  EXPECT_EQ(x1->operand(1)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(r.dry.alternatives, 1);
}

TEST(WhileLoopConstantSinkingTest, BroadcastOfConstantOnlyWithOption) {
  std::string text = Loop("broadcast(h), dimensions={}", "parameter(3)");
  text.replace(text.find("  c = f32[4] broadcast"), 0,
               "  h = f32[] constant(2)\n");
  WhileLoopConstantSinking plain;
  ExpectNoRewrite(plain, text);
  WhileLoopConstantSinkingOptions o;
  o.sink_broadcast_of_constants = true;
  WhileLoopConstantSinking pass(o);
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* x1 =
      r.applied->FindComputation("body")->FindInstruction("x1");
  ASSERT_EQ(x1->operand(1)->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(x1->operand(1)->operand(0)->opcode(), Opcode::kConstant);
}

TEST(WhileLoopConstantSinkingTest, KeepsNonConstantInit) {
  WhileLoopConstantSinking pass;
  ExpectNoRewrite(pass, Loop("negate(f)", "parameter(3)"));
}

TEST(WhileLoopConstantSinkingTest, KeepsElementTheBodyChanges) {
  WhileLoopConstantSinking pass;
  std::string text = Loop("constant({1, 2, 3, 4})", "parameter(3)");
  text.replace(text.find("tuple(i1, x1, c, n)"), 19, "tuple(i1, x1, x1, n)");
  ExpectNoRewrite(pass, text);
}

TEST(WhileLoopConstantSinkingTest, KeepsSharedBody) {
  WhileLoopConstantSinking pass;
  std::string text = Loop("constant({1, 2, 3, 4})", "parameter(3)");
  // A second loop with another init uses the same body and condition.
  text.replace(text.find("  ROOT w ="), 10,
               "  w2 = (s32[], f32[4], f32[4], s32[]) while(init), "
               "condition=cond, body=body\n  ROOT w =");
  ExpectNoRewrite(pass, text);
}

TEST(WhileLoopConstantSinkingTest, IsRegistered) {
  EXPECT_TRUE(PassRegistry::Global().Contains("while-loop-constant-sinking"));
}

}  // namespace
}  // namespace hlogym
