#include "hlogym/passes/expanders.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"
#include "hlogym/passes/pattern_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;

TEST(LogisticExpanderTest, ExpandsToReciprocalOfOnePlusExp) {
  LogisticExpander pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[4,2] parameter(0)
  ROOT l = f32[4,2] logistic(p)
}
)",
                                        true, 1e-6);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* div = test::Root(*r.applied);
  ASSERT_EQ(div->opcode(), Opcode::kDivide);
  const Instruction* one = div->operand(0);
  ASSERT_EQ(one->opcode(), Opcode::kBroadcast);
  EXPECT_TRUE(IsAll(one, 1.0));
  const Instruction* add = div->operand(1);
  ASSERT_EQ(add->opcode(), Opcode::kAdd);
  EXPECT_EQ(add->operand(0), one);
  const Instruction* exp = add->operand(1);
  ASSERT_EQ(exp->opcode(), Opcode::kExp);
  ASSERT_EQ(exp->operand(0)->opcode(), Opcode::kNegate);
  EXPECT_EQ(exp->operand(0)->operand(0)->name(), "p");
}

TEST(LogisticExpanderTest, ScalarUsesScalarOne) {
  LogisticExpander pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = bf16[] parameter(0)
  ROOT l = bf16[] logistic(p)
}
)",
                                        true, 1e-2);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* one = test::Root(*r.applied)->operand(0);
  ASSERT_EQ(one->opcode(), Opcode::kConstant);
  EXPECT_EQ(one->shape().element_type(), PrimitiveType::kBF16);
}

TEST(LogisticExpanderTest, KeepsLogisticWithControlEdges) {
  LogisticExpander pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  l = f32[4] logistic(p), control-predecessors={n}
  ROOT t = (f32[4], f32[4]) tuple(l, n)
}
)");
}

TEST(ComparisonExpanderTest, ExpandsTotalOrderCompare) {
  ComparisonExpander pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  ROOT c = pred[8] compare(p, q), direction=LT, type=TOTALORDER
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* c = test::Root(*r.applied);
  ASSERT_EQ(c->opcode(), Opcode::kCompare);
  EXPECT_EQ(c->comparison_direction(), ComparisonDirection::kLt);
  EXPECT_NE(c->comparison_type(), ComparisonType::kTotalOrder);
  for (int i = 0; i < 2; ++i) {
    const Instruction* sel = c->operand(i);
    ASSERT_EQ(sel->opcode(), Opcode::kSelect);
    EXPECT_EQ(sel->shape().element_type(), PrimitiveType::kS32);
    const Instruction* bits = sel->operand(2);
    ASSERT_EQ(bits->opcode(), Opcode::kBitcastConvert);
    EXPECT_EQ(bits->operand(0)->name(), i == 0 ? "p" : "q");
    const Instruction* neg = sel->operand(0);
    ASSERT_EQ(neg->opcode(), Opcode::kCompare);
    EXPECT_EQ(neg->comparison_direction(), ComparisonDirection::kLt);
    EXPECT_EQ(neg->operand(0), bits);
    EXPECT_TRUE(IsAll(neg->operand(1), 0));
    const Instruction* flipped = sel->operand(1);
    ASSERT_EQ(flipped->opcode(), Opcode::kSubtract);
    EXPECT_TRUE(IsAllInt(flipped->operand(0), 0x7fffffff));
    EXPECT_EQ(flipped->operand(1), bits);
  }
}

// Signed zeros, infinities and NaNs of both signs, against each other.
TEST(ComparisonExpanderTest, MatchesTotalOrderOnSpecialValues) {
  const char* kTemplate = R"(
HloModule m
ENTRY e {
  a = T[10] constant({-nan, -inf, -2, -0, 0, 1e-30, 3, inf, nan, -1e-30})
  b = T[10] constant({nan, -nan, -inf, 0, -0, -1e-30, 3, -inf, -nan, -0})
  lt = pred[10] compare(a, b), direction=LT, type=TOTALORDER
  le = pred[10] compare(a, b), direction=LE, type=TOTALORDER
  eq = pred[10] compare(a, b), direction=EQ, type=TOTALORDER
  ge = pred[10] compare(b, a), direction=GE, type=TOTALORDER
  ROOT t = (pred[10], pred[10], pred[10], pred[10]) tuple(lt, le, eq, ge)
}
)";
  for (const char* type : {"f32", "f64", "bf16", "f16"}) {
    SCOPED_TRACE(type);
    std::string text;
    for (const char* c = kTemplate; *c != '\0'; ++c) {
      if (c[0] == 'T' && c[1] == '[') {
        text += type;
      } else {
        text += *c;
      }
    }
    ComparisonExpander pass;
    test::RewriteResult r = ExpectRewrite(pass, text);
    ASSERT_NE(r.applied, nullptr);
  }
}

TEST(ComparisonExpanderTest, KeepsPartialOrderAndIntegerCompares) {
  ComparisonExpander pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  i = s32[8] parameter(2)
  c1 = pred[8] compare(p, q), direction=LT
  c2 = pred[8] compare(p, q), direction=LT, type=FLOAT
  c3 = pred[8] compare(i, i), direction=LT, type=SIGNED
  ROOT t = (pred[8], pred[8], pred[8]) tuple(c1, c2, c3)
}
)");
}

}  // namespace
}  // namespace hlogym
