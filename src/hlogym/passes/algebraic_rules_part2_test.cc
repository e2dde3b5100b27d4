// Tests of the AlgebraicSimplifier rules for checklist entries 64-137: each
// rule fires on a small module (outputs checked by ExpectRewrite, structure
// asserted here) and stays away where its guard says so.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hlogym/passes/algebraic_simplifier.h"
#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

struct Applied {
  std::unique_ptr<Module> module;
  const Instruction* root = nullptr;
};

// Runs only `rule`, expecting it to rewrite `hlo`; returns the result.
Applied Apply(std::string_view rule, std::string_view hlo,
              AlgebraicSimplifierOptions options = {},
              std::optional<double> tolerance = {}, bool check_outputs = true) {
  auto pass = test::OnlyRule(rule, options);
  test::RewriteResult r =
      test::ExpectRewrite(*pass, hlo, check_outputs, tolerance);
  Applied out;
  out.module = std::move(r.applied);
  if (out.module != nullptr) out.root = test::Root(*out.module);
  return out;
}

void NoApply(std::string_view rule, std::string_view hlo,
             AlgebraicSimplifierOptions options = {}) {
  auto pass = test::OnlyRule(rule, options);
  test::ExpectNoRewrite(*pass, hlo);
}

// The expression tree of an instruction: parameters by name, scalar
// constants by value, other constants as "constant", everything else as
// opcode(operands...).
std::string Expr(const Instruction* i) {
  if (i == nullptr) return "<null>";
  if (i->opcode() == Opcode::kParameter) return i->name();
  if (i->opcode() == Opcode::kConstant) {
    if (i->shape().IsScalar()) return "const(" + i->literal().ToString() + ")";
    return "constant";
  }
  std::string s(OpcodeName(i->opcode()));
  s += "(";
  for (int64_t k = 0; k < i->operand_count(); ++k) {
    if (k > 0) s += ", ";
    s += Expr(i->operand(k));
  }
  return s + ")";
}

std::string Dims(const Instruction* i) {
  std::string s = "{";
  for (size_t k = 0; k < i->dimensions().size(); ++k) {
    if (k > 0) s += ",";
    s += std::to_string(i->dimensions(k));
  }
  return s + "}";
}

std::string ShapeText(const Instruction* i) {
  return i->shape().ToString(/*print_layout=*/false);
}

AlgebraicSimplifierOptions LayoutSensitive() {
  AlgebraicSimplifierOptions o;
  o.is_layout_sensitive = true;
  return o;
}

// ---------------------------------------------------------------------------
// Divide.

TEST(AlgebraicPart2Divide, OneIsRemoved) {
  Applied r = Apply("divide-one", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  one = f32[] constant(1)
  b = f32[4] broadcast(one), dimensions={}
  ROOT d = f32[4] divide(p, b)
})");
  EXPECT_EQ(Expr(r.root), "p");
}

TEST(AlgebraicPart2Divide, OneNotForOtherDivisor) {
  NoApply("divide-one", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(1.5)
  b = f32[4] broadcast(c), dimensions={}
  ROOT d = f32[4] divide(b, p)
})");
}

TEST(AlgebraicPart2Divide, SignedPowerOfTwoShifts) {
  Applied r = Apply("divide-power-of-two", R"(
HloModule m
ENTRY e {
  p = s32[6] parameter(0)
  c = s32[] constant(2)
  b = s32[6] broadcast(c), dimensions={}
  ROOT d = s32[6] divide(p, b)
})");
  ASSERT_NE(r.root, nullptr);
  // select(p < 0, -(|p| >> 1), |p| >> 1) with |p| = select(p < 0, -p, p).
  EXPECT_EQ(Expr(r.root),
            "select(compare(p, broadcast(const(0))), "
            "negate(shift-right-logical(select(compare(p, "
            "broadcast(const(0))), negate(p), p), broadcast(const(1)))), "
            "shift-right-logical(select(compare(p, broadcast(const(0))), "
            "negate(p), p), broadcast(const(1))))");
  EXPECT_EQ(r.root->operand(0)->comparison_direction(),
            ComparisonDirection::kLt);
}

TEST(AlgebraicPart2Divide, UnsignedPowerOfTwoShifts) {
  Applied r = Apply("divide-power-of-two", R"(
HloModule m
ENTRY e {
  p = u32[6] parameter(0)
  c = u32[] constant(8)
  b = u32[6] broadcast(c), dimensions={}
  ROOT d = u32[6] divide(p, b)
})");
  EXPECT_EQ(Expr(r.root), "shift-right-logical(p, broadcast(const(3)))");
}

TEST(AlgebraicPart2Divide, PowerOfTwoNeedsPositivePowerOfTwo) {
  for (const char* value : {"6", "-4", "0"}) {
    NoApply("divide-power-of-two", std::string(R"(
HloModule m
ENTRY e {
  p = s32[6] parameter(0)
  c = s32[] constant()") + value + R"()
  b = s32[6] broadcast(c), dimensions={}
  ROOT d = s32[6] divide(p, b)
})");
  }
}

TEST(AlgebraicPart2Divide, ExpOverExp) {
  Applied r = Apply("divide-exp-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ea = f32[4] exponential(a)
  eb = f32[4] exponential(b)
  ROOT d = f32[4] divide(ea, eb)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "exponential(subtract(a, b))");
}

TEST(AlgebraicPart2Divide, ExpOverExpNeedsBothExps) {
  NoApply("divide-exp-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ea = f32[4] exponential(a)
  lb = f32[4] log(b)
  ROOT d = f32[4] divide(ea, lb)
})");
}

TEST(AlgebraicPart2Divide, OverExpBecomesMultiply) {
  Applied r = Apply("divide-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  eb = f32[4] exponential(b)
  ROOT d = f32[4] divide(a, eb)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "multiply(a, exponential(negate(b)))");
}

TEST(AlgebraicPart2Divide, OverExpNotForOtherDivisor) {
  NoApply("divide-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  eb = f32[4] exponential(b)
  ROOT d = f32[4] divide(eb, a)
})");
}

TEST(AlgebraicPart2Divide, OverPowerBecomesMultiply) {
  Applied r = Apply("divide-power", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] parameter(2)
  pw = f32[4] power(b, c)
  ROOT d = f32[4] divide(a, pw)
})",
                    {}, 1e-4);
  EXPECT_EQ(Expr(r.root), "multiply(a, power(b, negate(c)))");
}

TEST(AlgebraicPart2Divide, OverPowerNotForIntegers) {
  NoApply("divide-power", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  c = s32[4] parameter(2)
  pw = s32[4] power(b, c)
  ROOT d = s32[4] divide(a, pw)
})");
}

TEST(AlgebraicPart2Divide, OverSqrtBecomesRsqrt) {
  Applied r = Apply("divide-sqrt", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] sqrt(b)
  ROOT d = f32[4] divide(a, s)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "multiply(a, rsqrt(b))");
}

TEST(AlgebraicPart2Divide, OverSqrtNotWhenSqrtIsShared) {
  NoApply("divide-sqrt", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] sqrt(b)
  d = f32[4] divide(a, s)
  ROOT t = (f32[4], f32[4]) tuple(d, s)
})");
}

TEST(AlgebraicPart2Divide, OverRsqrtBecomesSqrt) {
  Applied r = Apply("divide-rsqrt", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] rsqrt(b)
  ROOT d = f32[4] divide(a, s)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "multiply(a, sqrt(b))");
}

TEST(AlgebraicPart2Divide, OverRsqrtNotWhenRsqrtIsShared) {
  NoApply("divide-rsqrt", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] rsqrt(b)
  d = f32[4] divide(a, s)
  ROOT t = (f32[4], f32[4]) tuple(d, s)
})");
}

TEST(AlgebraicPart2Divide, ByBroadcastConstantFoldsReciprocal) {
  Applied r = Apply("divide-constant", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(4)
  b = f32[4] broadcast(c), dimensions={}
  ROOT d = f32[4] divide(a, b)
})");
  EXPECT_EQ(Expr(r.root), "multiply(a, broadcast(const(0.25)))");
}

TEST(AlgebraicPart2Divide, ByArrayConstantFoldsReciprocal) {
  Applied r = Apply("divide-constant", R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  c = f32[2] constant({2, -8})
  ROOT d = f32[2] divide(a, c)
})");
  ASSERT_EQ(Expr(r.root), "multiply(a, constant)");
  EXPECT_EQ(r.root->operand(1)->literal().ToString(), "{0.5, -0.125}");
}

TEST(AlgebraicPart2Divide, ByConstantNotForIntegersOrConstantDividend) {
  NoApply("divide-constant", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  c = s32[] constant(4)
  b = s32[4] broadcast(c), dimensions={}
  ROOT d = s32[4] divide(a, b)
})");
  NoApply("divide-constant", R"(
HloModule m
ENTRY e {
  a = f32[2] constant({1, 2})
  c = f32[2] constant({2, 4})
  ROOT d = f32[2] divide(a, c)
})");
}

TEST(AlgebraicPart2Divide, QuotientOfQuotients) {
  Applied r = Apply("divide-divide-divide", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] parameter(2)
  d = f32[4] parameter(3)
  x = f32[4] divide(a, b)
  y = f32[4] divide(c, d)
  ROOT q = f32[4] divide(x, y)
})",
                    {}, 1e-4);
  EXPECT_EQ(Expr(r.root), "divide(multiply(a, d), multiply(b, c))");
}

TEST(AlgebraicPart2Divide, QuotientOfQuotientsNotForIntegers) {
  NoApply("divide-divide-divide", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  c = s32[4] parameter(2)
  d = s32[4] parameter(3)
  x = s32[4] divide(a, b)
  y = s32[4] divide(c, d)
  ROOT q = s32[4] divide(x, y)
})");
}

TEST(AlgebraicPart2Divide, QuotientDividend) {
  Applied r = Apply("divide-divide-dividend", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] parameter(2)
  x = f32[4] divide(a, b)
  ROOT q = f32[4] divide(x, c)
})",
                    {}, 1e-4);
  EXPECT_EQ(Expr(r.root), "divide(a, multiply(b, c))");
}

TEST(AlgebraicPart2Divide, QuotientDividendNotForIntegers) {
  NoApply("divide-divide-dividend", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  c = s32[4] parameter(2)
  x = s32[4] divide(a, b)
  ROOT q = s32[4] divide(x, c)
})");
}

TEST(AlgebraicPart2Divide, QuotientDivisor) {
  Applied r = Apply("divide-divide-divisor", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] parameter(2)
  y = f32[4] divide(b, c)
  ROOT q = f32[4] divide(a, y)
})",
                    {}, 1e-4);
  EXPECT_EQ(Expr(r.root), "divide(multiply(a, c), b)");
}

TEST(AlgebraicPart2Divide, QuotientDivisorNotForIntegers) {
  NoApply("divide-divide-divisor", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  c = s32[4] parameter(2)
  y = s32[4] divide(b, c)
  ROOT q = s32[4] divide(a, y)
})");
}

TEST(AlgebraicPart2Divide, ConvertPredOverBroadcast) {
  Applied r = Apply("divide-convert-pred", R"(
HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  y = f32[] parameter(1)
  c = f32[4] convert(p)
  b = f32[4] broadcast(y), dimensions={}
  ROOT d = f32[4] divide(c, b)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root),
            "multiply(broadcast(divide(const(1), y)), convert(p))");
}

TEST(AlgebraicPart2Divide, ConvertPredNeedsPred) {
  NoApply("divide-convert-pred", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  y = f32[] parameter(1)
  c = f32[4] convert(p)
  b = f32[4] broadcast(y), dimensions={}
  ROOT d = f32[4] divide(c, b)
})");
}

// ---------------------------------------------------------------------------
// Dot.

constexpr char kEmptyContraction[] = R"(
HloModule m
ENTRY e {
  a = f32[2,0] parameter(0)
  b = f32[0,3] parameter(1)
  ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(AlgebraicPart2Dot, EmptyContractionIsZero) {
  Applied r = Apply("dot-zero-size", kEmptyContraction);
  EXPECT_EQ(Expr(r.root), "broadcast(const(0))");
  EXPECT_EQ(ShapeText(r.root), "f32[2,3]");
}

TEST(AlgebraicPart2Dot, ZeroSizeOnlyLayoutInsensitive) {
  NoApply("dot-zero-size", kEmptyContraction, LayoutSensitive());
  NoApply("dot-zero-size", R"(
HloModule m
ENTRY e {
  a = f32[2,1] parameter(0)
  b = f32[1,3] parameter(1)
  ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

constexpr char kOuterProduct[] = R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[2,4] parameter(1)
  ROOT d = f32[2,3,4] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={0}
})";

TEST(AlgebraicPart2Dot, NoContractionBecomesMultiply) {
  Applied r = Apply("dot-to-multiply", kOuterProduct);
  ASSERT_EQ(Expr(r.root), "multiply(broadcast(transpose(a)), broadcast(b))");
  EXPECT_EQ(Dims(r.root->operand(0)->operand(0)), "{1,0}");
  EXPECT_EQ(Dims(r.root->operand(0)), "{0,1}");
  EXPECT_EQ(Dims(r.root->operand(1)), "{0,2}");
}

TEST(AlgebraicPart2Dot, ToMultiplyConvertsMixedTypes) {
  Applied r = Apply("dot-to-multiply", R"(
HloModule m
ENTRY e {
  a = bf16[3] parameter(0)
  b = bf16[4] parameter(1)
  ROOT d = f32[3,4] dot(a, b)
})");
  EXPECT_EQ(Expr(r.root),
            "multiply(broadcast(convert(a)), broadcast(convert(b)))");
}

TEST(AlgebraicPart2Dot, ToMultiplyRespectsOptionAndAlgorithm) {
  AlgebraicSimplifierOptions off;
  off.enable_dot_to_multiply_rewrite = false;
  NoApply("dot-to-multiply", kOuterProduct, off);
  NoApply("dot-to-multiply", R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[4] parameter(1)
  ROOT d = f32[3,4] dot(a, b), algorithm=dot_bf16_bf16_f32
})");
}

// The strength-reduction modules already call an f32 add computation, which
// the new reduce reuses: a computation added during a dry run would count as
// a change of the module.
TEST(AlgebraicPart2Dot, MatrixVectorStrengthReduced) {
  Applied r = Apply("dot-strength-reduction", R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3] parameter(1)
  d = f32[4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  sum = f32[] reduce(b, z), dimensions={0}, to_apply=add
  ROOT t = (f32[4], f32[]) tuple(d, sum)
})",
                    {}, 1e-5);
  ASSERT_NE(r.root, nullptr);
  const Instruction* red = r.root->operand(0);
  ASSERT_EQ(Expr(red), "reduce(multiply(a, broadcast(b)), const(0))");
  EXPECT_EQ(Dims(red), "{1}");
  EXPECT_EQ(red->to_apply()->name(), "add");
  EXPECT_EQ(Dims(red->operand(0)->operand(1)), "{1}");
}

TEST(AlgebraicPart2Dot, StrengthReductionAccumulatesBf16InF32) {
  Applied r = Apply("dot-strength-reduction", R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = bf16[2,5] parameter(0)
  b = bf16[2,5] parameter(1)
  d = bf16[2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0},
    lhs_contracting_dims={1}, rhs_contracting_dims={1}
  z = f32[] constant(0)
  c = f32[] convert(z)
  sum = f32[] reduce(c, z), dimensions={}, to_apply=add
  ROOT t = (bf16[2], f32[]) tuple(d, sum)
})",
                    {}, 2e-2);
  ASSERT_NE(r.root, nullptr);
  const Instruction* out = r.root->operand(0);
  ASSERT_EQ(Expr(out), "convert(reduce(convert(multiply(a, b)), const(0)))");
  EXPECT_EQ(out->operand(0)->shape().element_type(), PrimitiveType::kF32);
}

TEST(AlgebraicPart2Dot, StrengthReductionNeedsAVectorAndSmallSize) {
  NoApply("dot-strength-reduction", R"(
HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[4,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  AlgebraicSimplifierOptions small;
  small.dot_strength_reduction_size_limit = 15;  // (4 + 1) * 3 = 15
  NoApply("dot-strength-reduction", R"(
HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3] parameter(1)
  ROOT d = f32[4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
          small);
}

TEST(AlgebraicPart2Dot, StrengthReductionLeavesUnreducedShardingAlone) {
  NoApply("dot-strength-reduction", R"(
HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3] parameter(1)
  d = f32[4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[4] custom-call(d), custom_call_target="Sharding", sharding={unreduced}
})");
}

TEST(AlgebraicPart2Dot, ReshapeTransposeConstantMovesPermutation) {
  Applied r = Apply("dot-reshape-transpose-constant", R"(
HloModule m
ENTRY e {
  t0 = f32[2,2,3] parameter(0)
  t1 = f32[2,3,2] transpose(t0), dimensions={0,2,1}
  t2 = f32[2,6] reshape(t1)
  t3 = f32[6,2] constant({{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}})
  ROOT d = f32[2,2] dot(t2, t3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                    {}, 1e-5);
  ASSERT_EQ(Expr(r.root),
            "dot(reshape(t0), reshape(transpose(reshape(constant))))");
  const Instruction* tr = r.root->operand(1)->operand(0);
  EXPECT_EQ(ShapeText(tr->operand(0)), "f32[3,2,2]");
  EXPECT_EQ(Dims(tr), "{1,0,2}");
  EXPECT_EQ(ShapeText(r.root->operand(0)), "f32[2,6]");
}

TEST(AlgebraicPart2Dot, ReshapeTransposeConstantOnTheRhs) {
  Applied r = Apply("dot-reshape-transpose-constant", R"(
HloModule m
ENTRY e {
  c = f32[2,6] constant({{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}})
  t0 = f32[3,2,5] parameter(0)
  t1 = f32[2,3,5] transpose(t0), dimensions={1,0,2}
  t2 = f32[6,5] reshape(t1)
  ROOT d = f32[2,5] dot(c, t2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root),
            "dot(reshape(transpose(reshape(constant))), reshape(t0))");
}

TEST(AlgebraicPart2Dot, ReshapeTransposeConstantNeedsPermutationInsideRun) {
  NoApply("dot-reshape-transpose-constant", R"(
HloModule m
ENTRY e {
  t0 = f32[2,2,3] parameter(0)
  t1 = f32[2,2,3] transpose(t0), dimensions={1,0,2}
  t2 = f32[2,6] reshape(t1)
  t3 = f32[6,2] constant({{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}})
  ROOT d = f32[2,2] dot(t2, t3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(AlgebraicPart2Dot, ConcatTimesConstantSplits) {
  Applied r = Apply("dot-concat-constant", R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,2] parameter(1)
  l = f32[2,5] concatenate(a, b), dimensions={1}
  c = f32[5,2] constant({{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}})
  ROOT d = f32[2,2] dot(l, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                    {}, 1e-4);
  ASSERT_EQ(Expr(r.root),
            "add(dot(a, slice(constant)), dot(b, slice(constant)))");
  const Instruction* s0 = r.root->operand(0)->operand(1);
  const Instruction* s1 = r.root->operand(1)->operand(1);
  EXPECT_EQ(s0->attrs().slice[0].start, 0);
  EXPECT_EQ(s0->attrs().slice[0].limit, 3);
  EXPECT_EQ(s1->attrs().slice[0].start, 3);
  EXPECT_EQ(s1->attrs().slice[0].limit, 5);
}

TEST(AlgebraicPart2Dot, ConcatTimesConstantNeedsContractingConcat) {
  NoApply("dot-concat-constant", R"(
HloModule m
ENTRY e {
  a = f32[1,5] parameter(0)
  b = f32[1,5] parameter(1)
  l = f32[2,5] concatenate(a, b), dimensions={0}
  c = f32[5,2] constant({{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}})
  ROOT d = f32[2,2] dot(l, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(AlgebraicPart2Dot, DynamicSliceOfConstantMovesAfterDot) {
  Applied r = Apply("dot-dynamic-slice-constant", R"(
HloModule m
ENTRY e {
  a = f32[4,3] constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}})
  i = s32[] parameter(0)
  z = s32[] constant(0)
  row = f32[1,3] dynamic-slice(a, i, z), dynamic_slice_sizes={1,3}
  b = f32[3,2] constant({{1, 0}, {0, 1}, {1, 1}})
  ROOT d = f32[1,2] dot(row, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_EQ(Expr(r.root),
            "dynamic-slice(dot(constant, constant), i, const(0))");
  EXPECT_EQ(ShapeText(r.root->operand(0)), "f32[4,2]");
}

TEST(AlgebraicPart2Dot, DynamicSliceOfConstantNeedsConstants) {
  NoApply("dot-dynamic-slice-constant", R"(
HloModule m
ENTRY e {
  a = f32[4,3] constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}})
  i = s32[] parameter(0)
  z = s32[] constant(0)
  row = f32[1,3] dynamic-slice(a, i, z), dynamic_slice_sizes={1,3}
  b = f32[3,2] parameter(1)
  ROOT d = f32[1,2] dot(row, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(AlgebraicPart2Dot, DegenerateDimsRemoved) {
  Applied r = Apply("dot-remove-degenerate-dims", R"(
HloModule m
ENTRY e {
  a = f32[1,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[1,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                    {}, 1e-5);
  ASSERT_EQ(Expr(r.root), "reshape(dot(reshape(a), b))");
  const DotDimensionNumbers& dn = *r.root->operand(0)->attrs().dot_dnums;
  EXPECT_EQ(dn.lhs_contracting_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(dn.rhs_contracting_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(ShapeText(r.root->operand(0)), "f32[4]");
}

TEST(AlgebraicPart2Dot, DegenerateDimsNoneToRemove) {
  NoApply("dot-remove-degenerate-dims", R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(AlgebraicPart2Dot, TransposedOperandsSwapped) {
  Applied r = Apply("dot-transpose-operands", R"(
HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[5,4] parameter(1)
  ta = f32[3,4] transpose(a), dimensions={1,0}
  tb = f32[4,5] transpose(b), dimensions={1,0}
  ROOT d = f32[3,5] dot(ta, tb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                    {}, 1e-5);
  ASSERT_EQ(Expr(r.root), "transpose(dot(b, a))");
  EXPECT_EQ(Dims(r.root), "{1,0}");
}

TEST(AlgebraicPart2Dot, TransposedBatchDimsKeepOperandOrder) {
  Applied r = Apply("dot-transpose-operands", R"(
HloModule m
ENTRY e {
  a = f32[3,2,4,5] parameter(0)
  b = f32[3,2,5,6] parameter(1)
  ta = f32[2,3,4,5] transpose(a), dimensions={1,0,2,3}
  tb = f32[2,3,5,6] transpose(b), dimensions={1,0,2,3}
  ROOT d = f32[2,3,4,6] dot(ta, tb), lhs_batch_dims={0,1}, rhs_batch_dims={0,1},
    lhs_contracting_dims={3}, rhs_contracting_dims={2}
})",
                    {}, 1e-5);
  ASSERT_EQ(Expr(r.root), "transpose(dot(a, b))");
  EXPECT_EQ(Dims(r.root), "{1,0,2,3}");
}

TEST(AlgebraicPart2Dot, TransposedOperandsNeedSamePermutation) {
  NoApply("dot-transpose-operands", R"(
HloModule m
ENTRY e {
  a = f32[3,2,4,5] parameter(0)
  b = f32[2,3,5,6] parameter(1)
  ta = f32[2,3,4,5] transpose(a), dimensions={1,0,2,3}
  tb = f32[2,3,5,6] transpose(b), dimensions={0,1,2,3}
  ROOT d = f32[2,3,4,6] dot(ta, tb), lhs_batch_dims={0,1}, rhs_batch_dims={0,1},
    lhs_contracting_dims={3}, rhs_contracting_dims={2}
})");
}

constexpr char kParamLhsDot[] = R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  c = f32[3,4] add(b, b)
  ROOT d = f32[2,4] dot(a, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(AlgebraicPart2Dot, ParameterMovedToRhs) {
  AlgebraicSimplifierOptions o;
  o.enable_move_dot_param_to_rhs = true;
  Applied r = Apply("dot-move-param-to-rhs", kParamLhsDot, o, 1e-5);
  ASSERT_EQ(Expr(r.root), "transpose(dot(add(b, b), a))");
  EXPECT_EQ(Dims(r.root), "{1,0}");
  const DotDimensionNumbers& dn = *r.root->operand(0)->attrs().dot_dnums;
  EXPECT_EQ(dn.lhs_contracting_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(dn.rhs_contracting_dimensions, std::vector<int64_t>{1});
}

TEST(AlgebraicPart2Dot, ParameterMoveNeedsOption) {
  NoApply("dot-move-param-to-rhs", kParamLhsDot);
}

// ---------------------------------------------------------------------------
// DynamicSlice / DynamicUpdateSlice.

TEST(AlgebraicPart2DynamicSlice, WholeOperandIsOperand) {
  Applied r = Apply("dynamic-slice-noop", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  i = s32[] parameter(1)
  ROOT d = f32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}
})");
  EXPECT_EQ(Expr(r.root), "p");
}

TEST(AlgebraicPart2DynamicSlice, PartialSliceIsNotNoop) {
  NoApply("dynamic-slice-noop", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  i = s32[] parameter(1)
  ROOT d = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}
})");
}

TEST(AlgebraicPart2DynamicSlice, FullDimGetsZeroIndex) {
  Applied r = Apply("dynamic-slice-full-dim-zero-index", R"(
HloModule m
ENTRY e {
  p = f32[4,5] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT d = f32[4,2] dynamic-slice(p, i, j), dynamic_slice_sizes={4,2}
})");
  EXPECT_EQ(Expr(r.root), "dynamic-slice(p, const(0), j)");
}

TEST(AlgebraicPart2DynamicSlice, FullDimZeroIndexNeedsFullDim) {
  NoApply("dynamic-slice-full-dim-zero-index", R"(
HloModule m
ENTRY e {
  p = f32[4,5] parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  ROOT d = f32[4,2] dynamic-slice(p, z, i), dynamic_slice_sizes={4,2}
})");
}

TEST(AlgebraicPart2DynamicSlice, OfBroadcastSlicesOperand) {
  Applied r = Apply("dynamic-slice-broadcast", R"(
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  b = f32[4,3] broadcast(x), dimensions={1}
  ROOT d = f32[2,2] dynamic-slice(b, i, j), dynamic_slice_sizes={2,2}
})");
  ASSERT_EQ(Expr(r.root), "broadcast(dynamic-slice(x, j))");
  EXPECT_EQ(Dims(r.root), "{1}");
  EXPECT_EQ(ShapeText(r.root->operand(0)), "f32[2]");
}

TEST(AlgebraicPart2DynamicSlice, OfBroadcastNeedsBroadcast) {
  NoApply("dynamic-slice-broadcast", R"(
HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  n = f32[4,3] negate(x)
  ROOT d = f32[2,2] dynamic-slice(n, i, j), dynamic_slice_sizes={2,2}
})");
}

constexpr char kDsOfDegenerateReshape[] = R"(
HloModule m
ENTRY e {
  x = f32[4,5] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  k = s32[] parameter(3)
  r = f32[4,1,5] reshape(x)
  ROOT d = f32[2,1,3] dynamic-slice(r, i, j, k), dynamic_slice_sizes={2,1,3}
})";

TEST(AlgebraicPart2DynamicSlice, OfDegenerateReshape) {
  Applied r = Apply("dynamic-slice-reshape", kDsOfDegenerateReshape);
  ASSERT_EQ(Expr(r.root), "reshape(dynamic-slice(x, i, k))");
  EXPECT_EQ(ShapeText(r.root->operand(0)), "f32[2,3]");
}

TEST(AlgebraicPart2DynamicSlice, OfReshapeNeedsDegenerateReshapeAndLi) {
  NoApply("dynamic-slice-reshape", kDsOfDegenerateReshape, LayoutSensitive());
  NoApply("dynamic-slice-reshape", R"(
HloModule m
ENTRY e {
  x = f32[4,5] parameter(0)
  i = s32[] parameter(1)
  r = f32[20] reshape(x)
  ROOT d = f32[3] dynamic-slice(r, i), dynamic_slice_sizes={3}
})");
}

constexpr char kDsOfTranspose[] = R"(
HloModule m
ENTRY e {
  x = f32[4,5] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  t = f32[5,4] transpose(x), dimensions={1,0}
  ROOT d = f32[2,3] dynamic-slice(t, i, j), dynamic_slice_sizes={2,3}
})";

TEST(AlgebraicPart2DynamicSlice, OfTransposePermutesIndices) {
  Applied r = Apply("dynamic-slice-transpose", kDsOfTranspose);
  ASSERT_EQ(Expr(r.root), "transpose(dynamic-slice(x, j, i))");
  EXPECT_EQ(r.root->operand(0)->attrs().dynamic_slice_sizes,
            (std::vector<int64_t>{3, 2}));
}

TEST(AlgebraicPart2DynamicSlice, OfTransposeOnlyLayoutInsensitive) {
  NoApply("dynamic-slice-transpose", kDsOfTranspose, LayoutSensitive());
}

TEST(AlgebraicPart2DynamicSlice, ConstantStartBecomesClampedSlice) {
  Applied r = Apply("dynamic-slice-to-slice", R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  i = s32[] constant(6)
  ROOT d = f32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}
})");
  ASSERT_EQ(Expr(r.root), "slice(p)");
  EXPECT_EQ(r.root->attrs().slice[0].start, 4);
  EXPECT_EQ(r.root->attrs().slice[0].limit, 8);
}

TEST(AlgebraicPart2DynamicSlice, ToSliceGuards) {
  // Negative start.
  NoApply("dynamic-slice-to-slice", R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  i = s32[] constant(-1)
  ROOT d = f32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}
})");
  // Option.
  AlgebraicSimplifierOptions off;
  off.disable_dynamic_slice_to_slice_conversion = true;
  NoApply("dynamic-slice-to-slice", R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  i = s32[] constant(1)
  ROOT d = f32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}
})",
          off);
}

TEST(AlgebraicPart2DynamicSlice, OfIotaIsClampedIndex) {
  Applied r = Apply("dynamic-slice-iota", R"(
HloModule m
ENTRY e {
  io = s32[8] iota(), iota_dimension=0
  i = s32[] parameter(0)
  ROOT d = s32[1] dynamic-slice(io, i), dynamic_slice_sizes={1}
})");
  EXPECT_EQ(Expr(r.root), "reshape(clamp(const(0), i, const(7)))");
}

TEST(AlgebraicPart2DynamicSlice, OfScaledIotaConverts) {
  Applied r = Apply("dynamic-slice-iota", R"(
HloModule m
ENTRY e {
  io = f32[5] iota(), iota_dimension=0
  c = f32[] constant(2)
  b = f32[5] broadcast(c), dimensions={}
  s = f32[5] multiply(io, b)
  i = s32[] parameter(0)
  ROOT d = f32[1] dynamic-slice(s, i), dynamic_slice_sizes={1}
})");
  EXPECT_EQ(Expr(r.root),
            "multiply(reshape(convert(clamp(const(0), i, const(4)))), "
            "broadcast(const(2)))");
}

TEST(AlgebraicPart2DynamicSlice, OfIotaNeedsSizeOne) {
  NoApply("dynamic-slice-iota", R"(
HloModule m
ENTRY e {
  io = s32[8] iota(), iota_dimension=0
  i = s32[] parameter(0)
  ROOT d = s32[2] dynamic-slice(io, i), dynamic_slice_sizes={2}
})");
}

TEST(AlgebraicPart2DynamicSlice, OfDynamicSliceCombinesClampedStarts) {
  Applied r = Apply("dynamic-slice-dynamic-slice", R"(
HloModule m
ENTRY e {
  x = f32[8,6] parameter(0)
  i0 = s32[] parameter(1)
  i1 = s32[] parameter(2)
  j0 = s32[] parameter(3)
  j1 = s32[] parameter(4)
  a = f32[4,4] dynamic-slice(x, i0, i1), dynamic_slice_sizes={4,4}
  ROOT d = f32[2,3] dynamic-slice(a, j0, j1), dynamic_slice_sizes={2,3}
})");
  EXPECT_EQ(
      Expr(r.root),
      "dynamic-slice(x, "
      "add(clamp(const(0), j0, const(2)), clamp(const(0), i0, const(4))), "
      "add(clamp(const(0), j1, const(1)), clamp(const(0), i1, const(2))))");
}

TEST(AlgebraicPart2DynamicSlice, OfDynamicSliceNeedsInnerSlice) {
  NoApply("dynamic-slice-dynamic-slice", R"(
HloModule m
ENTRY e {
  x = f32[8,6] parameter(0)
  j0 = s32[] parameter(1)
  j1 = s32[] parameter(2)
  s = f32[4,4] slice(x), slice={[0:4], [0:4]}
  ROOT d = f32[2,3] dynamic-slice(s, j0, j1), dynamic_slice_sizes={2,3}
})");
}

TEST(AlgebraicPart2DynamicUpdateSlice, BroadcastBecomesPad) {
  Applied r = Apply("dynamic-update-slice-broadcast-to-pad", R"(
HloModule m
ENTRY e {
  s = f32[] parameter(0)
  u = f32[2,3] parameter(1)
  b = f32[6,4] broadcast(s), dimensions={}
  i = s32[] constant(3)
  j = s32[] constant(7)
  ROOT d = f32[6,4] dynamic-update-slice(b, u, i, j)
})");
  ASSERT_EQ(Expr(r.root), "pad(u, s)");
  const PaddingConfig& p = r.root->attrs().padding;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], (PaddingDimension{3, 1, 0}));
  EXPECT_EQ(p[1], (PaddingDimension{1, 0, 0}));  // start 7 clamped to 1
}

TEST(AlgebraicPart2DynamicUpdateSlice, BroadcastToPadNeedsConstantIndices) {
  NoApply("dynamic-update-slice-broadcast-to-pad", R"(
HloModule m
ENTRY e {
  s = f32[] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  b = f32[6] broadcast(s), dimensions={}
  ROOT d = f32[6] dynamic-update-slice(b, u, i)
})");
}

TEST(AlgebraicPart2DynamicUpdateSlice, FullUpdateIsUpdate) {
  Applied r = Apply("dynamic-update-slice-full-update", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[4] dynamic-update-slice(p, u, i)
})");
  EXPECT_EQ(Expr(r.root), "u");
}

TEST(AlgebraicPart2DynamicUpdateSlice, PartialUpdateIsKept) {
  NoApply("dynamic-update-slice-full-update", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[4] dynamic-update-slice(p, u, i)
})");
}

TEST(AlgebraicPart2DynamicUpdateSlice, EmptyUpdateIsOperand) {
  Applied r = Apply("dynamic-update-slice-empty-update", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  u = f32[0] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[4] dynamic-update-slice(p, u, i)
})");
  EXPECT_EQ(Expr(r.root), "p");
}

TEST(AlgebraicPart2DynamicUpdateSlice, NonEmptyUpdateIsKept) {
  NoApply("dynamic-update-slice-empty-update", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  u = f32[1] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[4] dynamic-update-slice(p, u, i)
})");
}

TEST(AlgebraicPart2DynamicUpdateSlice, FullDimGetsZeroIndex) {
  Applied r = Apply("dynamic-update-slice-full-dim-zero-index", R"(
HloModule m
ENTRY e {
  p = f32[4,5] parameter(0)
  u = f32[4,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT d = f32[4,5] dynamic-update-slice(p, u, i, j)
})");
  EXPECT_EQ(Expr(r.root), "dynamic-update-slice(p, u, const(0), j)");
}

TEST(AlgebraicPart2DynamicUpdateSlice, FullDimZeroIndexNeedsFullDim) {
  NoApply("dynamic-update-slice-full-dim-zero-index", R"(
HloModule m
ENTRY e {
  p = f32[4,5] parameter(0)
  u = f32[2,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT d = f32[4,5] dynamic-update-slice(p, u, i, j)
})");
}

TEST(AlgebraicPart2DynamicUpdateSlice, SkippedInsideAsyncComputation) {
  NoApply("dynamic-update-slice-full-dim-zero-index", R"(
HloModule m
async_dus {
  buffer = f32[8,4] parameter(0)
  update = f32[1,4] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT updated = f32[8,4] dynamic-update-slice(buffer, update, i, j)
}
ENTRY e {
  buffer = f32[8,4] parameter(0)
  update = f32[1,4] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  start = ((f32[8,4], f32[1,4], s32[], s32[]), f32[8,4], u32[])
    async-start(buffer, update, i, j), calls=async_dus
  ROOT done = f32[8,4] async-done(start), calls=async_dus
})");
}

TEST(AlgebraicPart2DynamicUpdateSlice, UpdateThroughSliceIsOneUpdate) {
  Applied r = Apply("dynamic-update-slice-of-dynamic-slice", R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  c = f32[2] parameter(1)
  id = s32[] parameter(2)
  in = s32[] parameter(3)
  ds = f32[4] dynamic-slice(a, id), dynamic_slice_sizes={4}
  mid = f32[4] dynamic-update-slice(ds, c, in)
  ROOT d = f32[8] dynamic-update-slice(a, mid, id)
})");
  EXPECT_EQ(Expr(r.root),
            "dynamic-update-slice(a, c, add(clamp(const(0), id, const(4)), "
            "clamp(const(0), in, const(2))))");
}

TEST(AlgebraicPart2DynamicUpdateSlice, UpdateThroughSliceNeedsSameIndex) {
  NoApply("dynamic-update-slice-of-dynamic-slice", R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  c = f32[2] parameter(1)
  id = s32[] parameter(2)
  in = s32[] parameter(3)
  other = s32[] parameter(4)
  ds = f32[4] dynamic-slice(a, id), dynamic_slice_sizes={4}
  mid = f32[4] dynamic-update-slice(ds, c, in)
  ROOT d = f32[8] dynamic-update-slice(a, mid, other)
})");
}

// ---------------------------------------------------------------------------
// Elementwise transcendental / complex.

TEST(AlgebraicPart2Elementwise, ExpOfZeroIsOne) {
  Applied r = Apply("exp-zero", R"(
HloModule m
ENTRY e {
  z = f32[] constant(0)
  b = f32[3] broadcast(z), dimensions={}
  ROOT x = f32[3] exponential(b)
})");
  EXPECT_EQ(Expr(r.root), "broadcast(const(1))");
}

TEST(AlgebraicPart2Elementwise, ExpOfNonZeroKept) {
  NoApply("exp-zero", R"(
HloModule m
ENTRY e {
  z = f32[] constant(-0.5)
  b = f32[3] broadcast(z), dimensions={}
  ROOT x = f32[3] exponential(b)
})");
}

TEST(AlgebraicPart2Elementwise, LogOfExp) {
  Applied r = Apply("log-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  x = f32[4] exponential(a)
  ROOT l = f32[4] log(x)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "a");
}

TEST(AlgebraicPart2Elementwise, LogOfOtherKept) {
  NoApply("log-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  x = f32[4] exponential-minus-one(a)
  ROOT l = f32[4] log(x)
})");
}

TEST(AlgebraicPart2Elementwise, LogOfPower) {
  Applied r = Apply("log-power", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  b = f32[4] parameter(1)
  a = f32[4] exponential(p)
  pw = f32[4] power(a, b)
  ROOT l = f32[4] log(pw)
})",
                    {}, 1e-4);
  ASSERT_EQ(Expr(r.root),
            "select(compare(b, broadcast(const(0))), broadcast(const(0)), "
            "multiply(b, log(abs(exponential(p)))))");
  EXPECT_EQ(r.root->operand(0)->comparison_direction(),
            ComparisonDirection::kEq);
}

TEST(AlgebraicPart2Elementwise, LogOfPowerNeedsPower) {
  NoApply("log-power", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  m = f32[4] multiply(a, b)
  ROOT l = f32[4] log(m)
})");
}

TEST(AlgebraicPart2Elementwise, LogOfSqrt) {
  Applied r = Apply("log-sqrt", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  s = f32[4] sqrt(a)
  ROOT l = f32[4] log(s)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "multiply(log(a), broadcast(const(0.5)))");
}

TEST(AlgebraicPart2Elementwise, LogSqrtNotForRsqrt) {
  NoApply("log-sqrt", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  s = f32[4] rsqrt(a)
  ROOT l = f32[4] log(s)
})");
}

TEST(AlgebraicPart2Elementwise, LogOfRsqrt) {
  Applied r = Apply("log-rsqrt", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  s = f32[4] rsqrt(a)
  ROOT l = f32[4] log(s)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "multiply(log(a), broadcast(const(-0.5)))");
}

TEST(AlgebraicPart2Elementwise, LogRsqrtNotForSqrt) {
  NoApply("log-rsqrt", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  s = f32[4] sqrt(a)
  ROOT l = f32[4] log(s)
})");
}

TEST(AlgebraicPart2Elementwise, RsqrtOfInverseSquare) {
  Applied r = Apply("rsqrt-power-minus-two", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] abs(p)
  c = f32[] constant(-2)
  b = f32[4] broadcast(c), dimensions={}
  pw = f32[4] power(a, b)
  ROOT r = f32[4] rsqrt(pw)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "abs(p)");
}

TEST(AlgebraicPart2Elementwise, RsqrtOfInverseSquareNeedsNonNegative) {
  NoApply("rsqrt-power-minus-two", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(-2)
  b = f32[4] broadcast(c), dimensions={}
  pw = f32[4] power(p, b)
  ROOT r = f32[4] rsqrt(pw)
})");
}

TEST(AlgebraicPart2Elementwise, RsqrtOfReciprocal) {
  Applied r = Apply("rsqrt-reciprocal", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] abs(p)
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  d = f32[4] divide(b, a)
  ROOT r = f32[4] rsqrt(d)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "sqrt(abs(p))");
}

TEST(AlgebraicPart2Elementwise, RsqrtOfReciprocalNeedsNonNegative) {
  NoApply("rsqrt-reciprocal", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  d = f32[4] divide(b, p)
  ROOT r = f32[4] rsqrt(d)
})");
}

TEST(AlgebraicPart2Elementwise, SqrtOfSquareIsAbs) {
  Applied r = Apply("sqrt-square", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  m = f32[4] multiply(a, a)
  ROOT s = f32[4] sqrt(m)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "abs(a)");
}

TEST(AlgebraicPart2Elementwise, SqrtOfComplexSquareConvertsAbs) {
  // XLA's form; sqrt(z*z) is +-z for complex z, so outputs differ.
  Applied r = Apply("sqrt-square", R"(
HloModule m
ENTRY e {
  a = c64[4] parameter(0)
  m = c64[4] multiply(a, a)
  ROOT s = c64[4] sqrt(m)
})",
                    {}, {}, /*check_outputs=*/false);
  EXPECT_EQ(Expr(r.root), "convert(abs(a))");
}

TEST(AlgebraicPart2Elementwise, SqrtOfProductKept) {
  NoApply("sqrt-square", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  m = f32[4] multiply(a, b)
  ROOT s = f32[4] sqrt(m)
})");
}

TEST(AlgebraicPart2Complex, ComplexOfParts) {
  Applied r = Apply("complex-real-imag", R"(
HloModule m
ENTRY e {
  c = c64[3] parameter(0)
  re = f32[3] real(c)
  im = f32[3] imag(c)
  ROOT z = c64[3] complex(re, im)
})");
  EXPECT_EQ(Expr(r.root), "c");
}

TEST(AlgebraicPart2Complex, ComplexOfPartsOfDifferentValues) {
  NoApply("complex-real-imag", R"(
HloModule m
ENTRY e {
  c = c64[3] parameter(0)
  d = c64[3] parameter(1)
  re = f32[3] real(c)
  im = f32[3] imag(d)
  ROOT z = c64[3] complex(re, im)
})");
}

TEST(AlgebraicPart2Complex, RealOfComplex) {
  Applied r = Apply("real-complex", R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  z = c64[3] complex(a, b)
  ROOT re = f32[3] real(z)
})");
  EXPECT_EQ(Expr(r.root), "a");
}

TEST(AlgebraicPart2Complex, RealOfComplexParameterKept) {
  NoApply("real-complex", R"(
HloModule m
ENTRY e {
  z = c64[3] parameter(0)
  ROOT re = f32[3] real(z)
})");
}

TEST(AlgebraicPart2Complex, RealOfReal) {
  Applied r = Apply("real-of-real", R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  ROOT re = f32[3] real(a)
})");
  EXPECT_EQ(Expr(r.root), "a");
}

TEST(AlgebraicPart2Complex, RealOfRealNotForComplex) {
  NoApply("real-of-real", R"(
HloModule m
ENTRY e {
  z = c64[3] parameter(0)
  ROOT re = f32[3] real(z)
})");
}

TEST(AlgebraicPart2Complex, ImagOfComplex) {
  Applied r = Apply("imag-complex", R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  z = c64[3] complex(a, b)
  ROOT im = f32[3] imag(z)
})");
  EXPECT_EQ(Expr(r.root), "b");
}

TEST(AlgebraicPart2Complex, ImagOfComplexParameterKept) {
  NoApply("imag-complex", R"(
HloModule m
ENTRY e {
  z = c64[3] parameter(0)
  ROOT im = f32[3] imag(z)
})");
}

TEST(AlgebraicPart2Complex, ImagOfRealIsZero) {
  Applied r = Apply("imag-of-real", R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  ROOT im = f32[3] imag(a)
})");
  EXPECT_EQ(Expr(r.root), "broadcast(const(0))");
}

TEST(AlgebraicPart2Complex, ImagOfRealNotForComplex) {
  NoApply("imag-of-real", R"(
HloModule m
ENTRY e {
  z = c64[3] parameter(0)
  ROOT im = f32[3] imag(z)
})");
}

// ---------------------------------------------------------------------------
// Gather / Scatter.

TEST(AlgebraicPart2Gather, EmptyOperandGivesZeros) {
  Applied r = Apply("gather-zero-element-operand", R"(
HloModule m
ENTRY e {
  t = f32[0,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = f32[2,0,3] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={},
    start_index_map={0}, index_vector_dim=1, slice_sizes={0,3}
})");
  EXPECT_EQ(Expr(r.root), "broadcast(const(0))");
}

TEST(AlgebraicPart2Gather, NonEmptyOperandIsNotZero) {
  NoApply("gather-zero-element-operand", R"(
HloModule m
ENTRY e {
  t = f32[2,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = f32[2,1,3] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})");
}

TEST(AlgebraicPart2Gather, OneElementOperandBroadcasts) {
  Applied r = Apply("gather-one-element-operand", R"(
HloModule m
ENTRY e {
  t = f32[1,1] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,1] gather(t, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,1}
})");
  EXPECT_EQ(Expr(r.root), "broadcast(reshape(t))");
}

TEST(AlgebraicPart2Gather, TwoElementOperandDoesNotBroadcast) {
  NoApply("gather-one-element-operand", R"(
HloModule m
ENTRY e {
  t = f32[2] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3] gather(t, i), offset_dims={}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1}
})");
}

TEST(AlgebraicPart2Gather, SmallVectorBecomesSelects) {
  Applied r = Apply("gather-small-vector", R"(
HloModule m
ENTRY e {
  t = f32[3] parameter(0)
  i = s32[5] parameter(1)
  ROOT g = f32[5] gather(t, i), offset_dims={}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1}
})");
  ASSERT_NE(r.root, nullptr);
  // select(i >= 2, t[2], select(i >= 1, t[1], select(i >= 0, t[0], t[0]))).
  const Instruction* s = r.root;
  for (int k = 2; k >= 0; --k) {
    ASSERT_EQ(s->opcode(), Opcode::kSelect) << Expr(r.root);
    EXPECT_EQ(Expr(s->operand(0)),
              "compare(i, broadcast(const(" + std::to_string(k) + ")))");
    EXPECT_EQ(s->operand(0)->comparison_direction(), ComparisonDirection::kGe);
    EXPECT_EQ(Expr(s->operand(1)), "broadcast(reshape(slice(t)))");
    EXPECT_EQ(s->operand(1)->operand(0)->operand(0)->attrs().slice[0].start, k);
    s = s->operand(2);
  }
  EXPECT_EQ(Expr(s), "broadcast(reshape(slice(t)))");
}

TEST(AlgebraicPart2Gather, SmallVectorLimitedBySize) {
  NoApply("gather-small-vector", R"(
HloModule m
ENTRY e {
  t = f32[5] parameter(0)
  i = s32[5] parameter(1)
  ROOT g = f32[5] gather(t, i), offset_dims={}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1}
})");
}

TEST(AlgebraicPart2Gather, OfPadOnPassThroughDim) {
  Applied r = Apply("gather-pad", R"(
HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  v = f32[] parameter(1)
  p = f32[4,6] pad(x, v), padding=0_0x1_2
  i = s32[5,1] parameter(2)
  ROOT g = f32[5,6] gather(p, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}
})");
  ASSERT_EQ(Expr(r.root), "pad(gather(x, i), v)");
  EXPECT_EQ(ShapeText(r.root->operand(0)), "f32[5,3]");
  EXPECT_EQ(r.root->operand(0)->attrs().gather_slice_sizes,
            (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(r.root->attrs().padding[0], (PaddingDimension{0, 0, 0}));
  EXPECT_EQ(r.root->attrs().padding[1], (PaddingDimension{1, 2, 0}));
}

TEST(AlgebraicPart2Gather, OfPadOnIndexedDimKept) {
  NoApply("gather-pad", R"(
HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  v = f32[] parameter(1)
  p = f32[6,3] pad(x, v), padding=1_1x0_0
  i = s32[5,1] parameter(2)
  ROOT g = f32[5,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})");
  // Not sliced whole.
  NoApply("gather-pad", R"(
HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  v = f32[] parameter(1)
  p = f32[4,6] pad(x, v), padding=0_0x1_2
  i = s32[5,1] parameter(2)
  ROOT g = f32[5,5] gather(p, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
})");
}

constexpr char kAddF32[] = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

TEST(AlgebraicPart2Scatter, EmptyUpdatesGiveOperand) {
  Applied r = Apply("scatter-empty-updates",
                    std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  o = f32[4] parameter(0)
  i = s32[0,1] parameter(1)
  u = f32[0] parameter(2)
  ROOT s = f32[4] scatter(o, i, u), update_window_dims={},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=add
})");
  EXPECT_EQ(Expr(r.root), "o");
}

TEST(AlgebraicPart2Scatter, NonEmptyUpdatesKept) {
  NoApply("scatter-empty-updates", std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  o = f32[4] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  ROOT s = f32[4] scatter(o, i, u), update_window_dims={},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=add
})");
}

TEST(AlgebraicPart2Scatter, EmptyIndicesBecomeMap) {
  Applied r = Apply("scatter-empty-indices-to-map",
                    std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  o = f32[2,3] parameter(0)
  i = s32[0] parameter(1)
  u = f32[2,3] parameter(2)
  ROOT s = f32[2,3] scatter(o, i, u), update_window_dims={0,1},
    inserted_window_dims={}, scatter_dims_to_operand_dims={},
    index_vector_dim=0, to_apply=add
})");
  ASSERT_EQ(Expr(r.root), "map(o, u)");
  EXPECT_EQ(r.root->to_apply()->name(), "add");
}

TEST(AlgebraicPart2Scatter, EmptyIndicesNeedFullUpdate) {
  NoApply("scatter-empty-indices-to-map",
          std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  o = f32[2,3] parameter(0)
  i = s32[0] parameter(1)
  u = f32[1,3] parameter(2)
  ROOT s = f32[2,3] scatter(o, i, u), update_window_dims={0,1},
    inserted_window_dims={}, scatter_dims_to_operand_dims={},
    index_vector_dim=0, to_apply=add
})");
}

// ---------------------------------------------------------------------------
// Maximum / Minimum / Clamp.

TEST(AlgebraicPart2MinMax, SameOperand) {
  Applied r = Apply("maximum-same-operand", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT x = f32[4] maximum(a, a)
})");
  EXPECT_EQ(Expr(r.root), "a");
  r = Apply("minimum-same-operand", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  ROOT x = s32[4] minimum(a, a)
})");
  EXPECT_EQ(Expr(r.root), "a");
}

TEST(AlgebraicPart2MinMax, DifferentOperandsKept) {
  NoApply("maximum-same-operand", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT x = f32[4] maximum(a, b)
})");
  NoApply("minimum-same-operand", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT x = f32[4] minimum(a, b)
})");
}

TEST(AlgebraicPart2MinMax, MaximumWithLowest) {
  Applied r = Apply("maximum-lowest", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(-inf)
  b = f32[4] broadcast(c), dimensions={}
  ROOT x = f32[4] maximum(b, a)
})");
  EXPECT_EQ(Expr(r.root), "a");
  r = Apply("maximum-lowest", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  c = s32[] constant(-2147483648)
  b = s32[4] broadcast(c), dimensions={}
  ROOT x = s32[4] maximum(a, b)
})");
  EXPECT_EQ(Expr(r.root), "a");
}

TEST(AlgebraicPart2MinMax, MaximumLowestGuards) {
  constexpr char kF32[] = R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(-inf)
  b = f32[4] broadcast(c), dimensions={}
  ROOT x = f32[4] maximum(a, b)
})";
  AlgebraicSimplifierOptions fast;
  fast.minmax_propagate_nan = false;
  NoApply("maximum-lowest", kF32, fast);
  NoApply("maximum-lowest", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  c = s32[] constant(-2147483647)
  b = s32[4] broadcast(c), dimensions={}
  ROOT x = s32[4] maximum(a, b)
})");
}

TEST(AlgebraicPart2MinMax, MinimumWithHighest) {
  Applied r = Apply("minimum-highest", R"(
HloModule m
ENTRY e {
  a = u8[4] parameter(0)
  c = u8[] constant(255)
  b = u8[4] broadcast(c), dimensions={}
  ROOT x = u8[4] minimum(b, a)
})");
  EXPECT_EQ(Expr(r.root), "a");
}

TEST(AlgebraicPart2MinMax, MinimumHighestNeedsHighest) {
  NoApply("minimum-highest", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(1e+30)
  b = f32[4] broadcast(c), dimensions={}
  ROOT x = f32[4] minimum(a, b)
})");
}

TEST(AlgebraicPart2MinMax, MaxOfMaxWithRepeatedOperand) {
  Applied r = Apply("maximum-of-maximum", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] maximum(a, b)
  ROOT y = f32[4] maximum(x, a)
})");
  EXPECT_EQ(Expr(r.root), "maximum(a, b)");
  r = Apply("maximum-of-maximum", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] maximum(a, b)
  ROOT y = f32[4] maximum(a, x)
})");
  EXPECT_EQ(Expr(r.root), "maximum(a, b)");
}

TEST(AlgebraicPart2MinMax, MinOfMinWithRepeatedOperand) {
  Applied r = Apply("minimum-of-minimum", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] minimum(a, b)
  ROOT y = f32[4] minimum(x, b)
})");
  EXPECT_EQ(Expr(r.root), "minimum(a, b)");
}

TEST(AlgebraicPart2MinMax, MaxOfMaxNeedsRepeatedOperand) {
  NoApply("maximum-of-maximum", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] parameter(2)
  x = f32[4] maximum(a, b)
  ROOT y = f32[4] maximum(x, c)
})");
  NoApply("minimum-of-minimum", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] maximum(a, b)
  ROOT y = f32[4] minimum(x, b)
})");
}

TEST(AlgebraicPart2MinMax, MaxOfMaxSecondOperandSwaps) {
  Applied r = Apply("maximum-of-maximum-swap", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] maximum(a, b)
  ROOT y = f32[4] maximum(b, x)
})");
  EXPECT_EQ(Expr(r.root), "maximum(b, a)");
  r = Apply("minimum-of-minimum-swap", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] minimum(a, b)
  ROOT y = f32[4] minimum(b, x)
})");
  EXPECT_EQ(Expr(r.root), "minimum(b, a)");
}

TEST(AlgebraicPart2MinMax, SwapNeedsRepeatedOperand) {
  NoApply("maximum-of-maximum-swap", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] parameter(2)
  x = f32[4] maximum(a, b)
  ROOT y = f32[4] maximum(c, x)
})");
  NoApply("minimum-of-minimum-swap", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] minimum(a, b)
  ROOT y = f32[4] minimum(a, x)
})");
}

TEST(AlgebraicPart2MinMax, MaxOfMinBecomesClamp) {
  Applied r = Apply("maximum-minimum-to-clamp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  bl = f32[4] broadcast(lo), dimensions={}
  bh = f32[4] broadcast(hi), dimensions={}
  mn = f32[4] minimum(a, bh)
  ROOT mx = f32[4] maximum(bl, mn)
})");
  EXPECT_EQ(Expr(r.root),
            "clamp(broadcast(const(-1)), a, broadcast(const(1)))");
}

TEST(AlgebraicPart2MinMax, MinOfMaxBecomesClamp) {
  Applied r = Apply("minimum-maximum-to-clamp", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  lo = s32[] constant(-1)
  hi = s32[] constant(2)
  bl = s32[4] broadcast(lo), dimensions={}
  bh = s32[4] broadcast(hi), dimensions={}
  mx = s32[4] maximum(bl, a)
  ROOT mn = s32[4] minimum(mx, bh)
})");
  EXPECT_EQ(Expr(r.root),
            "clamp(broadcast(const(-1)), a, broadcast(const(2)))");
}

TEST(AlgebraicPart2MinMax, ClampNeedsLowBelowHigh) {
  NoApply("maximum-minimum-to-clamp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  lo = f32[] constant(2)
  hi = f32[] constant(1)
  bl = f32[4] broadcast(lo), dimensions={}
  bh = f32[4] broadcast(hi), dimensions={}
  mn = f32[4] minimum(a, bh)
  ROOT mx = f32[4] maximum(bl, mn)
})");
  NoApply("minimum-maximum-to-clamp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  lo = f32[] constant(1)
  hi = f32[] constant(1)
  bl = f32[4] broadcast(lo), dimensions={}
  bh = f32[4] broadcast(hi), dimensions={}
  mx = f32[4] maximum(a, bl)
  ROOT mn = f32[4] minimum(bh, mx)
})");
}

TEST(AlgebraicPart2MinMax, MaxOfClampWithItsLowerBound) {
  Applied r = Apply("maximum-of-clamp", R"(
HloModule m
ENTRY e {
  lo = f32[4] parameter(0)
  x = f32[4] parameter(1)
  hi = f32[] constant(10)
  c = f32[4] clamp(lo, x, hi)
  ROOT m = f32[4] maximum(lo, c)
})");
  EXPECT_EQ(Expr(r.root), "clamp(lo, x, const(10))");
}

TEST(AlgebraicPart2MinMax, MaxOfClampNeedsSameBound) {
  NoApply("maximum-of-clamp", R"(
HloModule m
ENTRY e {
  lo = f32[4] parameter(0)
  x = f32[4] parameter(1)
  o = f32[4] parameter(2)
  hi = f32[] constant(10)
  c = f32[4] clamp(lo, x, hi)
  ROOT m = f32[4] maximum(o, c)
})");
}

TEST(AlgebraicPart2MinMax, MaxOfMonotonicFunctions) {
  Applied r = Apply("maximum-monotonic", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ta = f32[4] tanh(a)
  tb = f32[4] tanh(b)
  ROOT m = f32[4] maximum(ta, tb)
})");
  EXPECT_EQ(Expr(r.root), "tanh(maximum(a, b))");
}

TEST(AlgebraicPart2MinMax, MaxOfNonMonotonicFunctionsKept) {
  NoApply("maximum-monotonic", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  sa = f32[4] sine(a)
  sb = f32[4] sine(b)
  ROOT m = f32[4] maximum(sa, sb)
})");
}

TEST(AlgebraicPart2Clamp, ClampOfClamp) {
  Applied r = Apply("clamp-of-clamp", R"(
HloModule m
ENTRY e {
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  x = f32[4] parameter(0)
  c = f32[4] clamp(lo, x, hi)
  ROOT d = f32[4] clamp(lo, c, hi)
})");
  EXPECT_EQ(Expr(r.root), "clamp(const(-1), x, const(1))");
}

TEST(AlgebraicPart2Clamp, ClampOfClampNeedsSameBounds) {
  NoApply("clamp-of-clamp", R"(
HloModule m
ENTRY e {
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  hi2 = f32[] constant(2)
  x = f32[4] parameter(0)
  c = f32[4] clamp(lo, x, hi)
  ROOT d = f32[4] clamp(lo, c, hi2)
})");
}

TEST(AlgebraicPart2Clamp, PartitionIdInRange) {
  Applied r = Apply("clamp-device-id", R"(
HloModule m, num_partitions=4
ENTRY e {
  id = u32[] partition-id()
  lo = u32[] constant(0)
  hi = u32[] constant(3)
  ROOT c = u32[] clamp(lo, id, hi)
})");
  EXPECT_EQ(Expr(r.root), "partition-id()");
}

TEST(AlgebraicPart2Clamp, ReplicaIdOutOfRangeKept) {
  NoApply("clamp-device-id", R"(
HloModule m, replica_count=4
ENTRY e {
  id = u32[] replica-id()
  lo = u32[] constant(0)
  hi = u32[] constant(2)
  ROOT c = u32[] clamp(lo, id, hi)
})");
  // Count unknown (1): nothing to gain.
  NoApply("clamp-device-id", R"(
HloModule m
ENTRY e {
  id = u32[] replica-id()
  lo = u32[] constant(0)
  hi = u32[] constant(2)
  ROOT c = u32[] clamp(lo, id, hi)
})");
}

// ---------------------------------------------------------------------------
// Multiply.

TEST(AlgebraicPart2Multiply, ByOne) {
  Applied r = Apply("multiply-one", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  ROOT x = f32[4] multiply(b, a)
})");
  EXPECT_EQ(Expr(r.root), "a");
}

TEST(AlgebraicPart2Multiply, ByOtherConstantKept) {
  NoApply("multiply-one", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(-1)
  b = f32[4] broadcast(c), dimensions={}
  ROOT x = f32[4] multiply(a, b)
})");
}

constexpr char kF32TimesZero[] = R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(0)
  b = f32[4] broadcast(c), dimensions={}
  ROOT x = f32[4] multiply(a, b)
})";

TEST(AlgebraicPart2Multiply, IntegerByZero) {
  Applied r = Apply("multiply-zero", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  c = s32[] constant(0)
  b = s32[4] broadcast(c), dimensions={}
  ROOT x = s32[4] multiply(a, b)
})");
  EXPECT_EQ(Expr(r.root), "broadcast(const(0))");
  AlgebraicSimplifierOptions fast;
  fast.enable_fast_math = true;
  r = Apply("multiply-zero", kF32TimesZero, fast);
  EXPECT_EQ(Expr(r.root), "broadcast(const(0))");
}

TEST(AlgebraicPart2Multiply, FloatByZeroNeedsFastMath) {
  NoApply("multiply-zero", kF32TimesZero);
}

TEST(AlgebraicPart2Multiply, NegatesCancel) {
  Applied r = Apply("multiply-negate-negate", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  na = f32[4] negate(a)
  nb = f32[4] negate(b)
  ROOT x = f32[4] multiply(na, nb)
})");
  EXPECT_EQ(Expr(r.root), "multiply(a, b)");
}

TEST(AlgebraicPart2Multiply, OneNegateKept) {
  NoApply("multiply-negate-negate", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  na = f32[4] negate(a)
  ROOT x = f32[4] multiply(na, b)
})");
}

TEST(AlgebraicPart2Multiply, AbsSquared) {
  Applied r = Apply("multiply-abs-abs", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  x = f32[4] abs(a)
  ROOT m = f32[4] multiply(x, x)
})");
  EXPECT_EQ(Expr(r.root), "multiply(a, a)");
}

TEST(AlgebraicPart2Multiply, AbsSquaredNotForComplexOrDifferentValues) {
  NoApply("multiply-abs-abs", R"(
HloModule m
ENTRY e {
  a = c64[4] parameter(0)
  x = f32[4] abs(a)
  ROOT m = f32[4] multiply(x, x)
})");
  NoApply("multiply-abs-abs", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] abs(a)
  y = f32[4] abs(b)
  ROOT m = f32[4] multiply(x, y)
})");
}

TEST(AlgebraicPart2Multiply, ByConvertedPredBecomesSelect) {
  Applied r = Apply("multiply-convert-pred", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  p = pred[4] parameter(1)
  c = f32[4] convert(p)
  ROOT m = f32[4] multiply(c, a)
})");
  EXPECT_EQ(Expr(r.root), "select(p, a, broadcast(const(0)))");
}

TEST(AlgebraicPart2Multiply, ByConvertedIntegerKept) {
  NoApply("multiply-convert-pred", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  p = s32[4] parameter(1)
  c = f32[4] convert(p)
  ROOT m = f32[4] multiply(a, c)
})");
}

TEST(AlgebraicPart2Multiply, TwoConstantProducts) {
  Applied r = Apply("multiply-two-constant-products", R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c1 = f32[2] constant({2, 3})
  c2 = f32[2] constant({5, 7})
  x = f32[2] multiply(a, c1)
  y = f32[2] multiply(c2, b)
  ROOT m = f32[2] multiply(x, y)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root),
            "multiply(multiply(a, b), multiply(constant, constant))");
}

TEST(AlgebraicPart2Multiply, TwoConstantProductsNeedConstants) {
  NoApply("multiply-two-constant-products", R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  p = f32[2] parameter(2)
  c1 = f32[2] constant({2, 3})
  x = f32[2] multiply(a, c1)
  y = f32[2] multiply(p, b)
  ROOT m = f32[2] multiply(x, y)
})");
}

TEST(AlgebraicPart2Multiply, ConstantProductTimesConstant) {
  Applied r = Apply("multiply-constant-product", R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  c1 = f32[2] constant({2, 3})
  c2 = f32[2] constant({5, 7})
  x = f32[2] multiply(c1, a)
  ROOT m = f32[2] multiply(c2, x)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "multiply(a, multiply(constant, constant))");
}

TEST(AlgebraicPart2Multiply, ConstantProductNeedsPlainConstants) {
  NoApply("multiply-constant-product", R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  c1 = f32[2] constant({2, 3})
  s = f32[] constant(5)
  c2 = f32[2] broadcast(s), dimensions={}
  x = f32[2] multiply(a, c1)
  ROOT m = f32[2] multiply(x, c2)
})");
}

TEST(AlgebraicPart2Multiply, ScalarConstantMovesIntoBroadcast) {
  Applied r = Apply("multiply-broadcast-scalar-constant", R"(
HloModule m
ENTRY e {
  a = f32[3,4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[] constant(3)
  bc = f32[3,4] broadcast(c), dimensions={}
  x = f32[3,4] multiply(a, bc)
  bb = f32[3,4] broadcast(b), dimensions={1}
  ROOT m = f32[3,4] multiply(x, bb)
})",
                    {}, 1e-5);
  ASSERT_EQ(Expr(r.root),
            "multiply(a, broadcast(multiply(b, broadcast(const(3)))))");
  EXPECT_EQ(Dims(r.root->operand(1)), "{1}");
}

TEST(AlgebraicPart2Multiply, ScalarConstantNeedsNonConstantBroadcast) {
  NoApply("multiply-broadcast-scalar-constant", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(3)
  d = f32[] constant(2)
  bc = f32[4] broadcast(c), dimensions={}
  x = f32[4] multiply(a, bc)
  bd = f32[4] broadcast(d), dimensions={}
  ROOT m = f32[4] multiply(x, bd)
})");
}

TEST(AlgebraicPart2Multiply, BroadcastConstantsCombine) {
  Applied r = Apply("multiply-broadcast-constants", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(3)
  d = f32[] constant(2)
  bc = f32[4] broadcast(c), dimensions={}
  x = f32[4] multiply(bc, a)
  bd = f32[4] broadcast(d), dimensions={}
  ROOT m = f32[4] multiply(bd, x)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root),
            "multiply(a, broadcast(multiply(const(3), const(2))))");
}

TEST(AlgebraicPart2Multiply, BroadcastConstantsNeedConstants) {
  NoApply("multiply-broadcast-constants", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[] constant(3)
  d = f32[] parameter(1)
  bc = f32[4] broadcast(c), dimensions={}
  x = f32[4] multiply(a, bc)
  bd = f32[4] broadcast(d), dimensions={}
  ROOT m = f32[4] multiply(x, bd)
})");
}

TEST(AlgebraicPart2Multiply, ExpTimesExp) {
  Applied r = Apply("multiply-exp-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ea = f32[4] exponential(a)
  eb = f32[4] exponential(b)
  ROOT m = f32[4] multiply(ea, eb)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "exponential(add(a, b))");
}

TEST(AlgebraicPart2Multiply, ExpTimesOtherKept) {
  NoApply("multiply-exp-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ea = f32[4] exponential(a)
  ROOT m = f32[4] multiply(ea, b)
})");
}

TEST(AlgebraicPart2Multiply, SqrtSquared) {
  Applied r = Apply("multiply-sqrt-sqrt", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] abs(p)
  s = f32[4] sqrt(a)
  ROOT m = f32[4] multiply(s, s)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "abs(p)");
}

TEST(AlgebraicPart2Multiply, SqrtSquaredNeedsNonNegative) {
  NoApply("multiply-sqrt-sqrt", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  s = f32[4] sqrt(p)
  ROOT m = f32[4] multiply(s, s)
})");
}

TEST(AlgebraicPart2Multiply, RsqrtSquared) {
  Applied r = Apply("multiply-rsqrt-rsqrt", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  r1 = f32[4] rsqrt(a)
  r2 = f32[4] rsqrt(a)
  ROOT m = f32[4] multiply(r1, r2)
})",
                    {}, 1e-5);
  EXPECT_EQ(Expr(r.root), "divide(broadcast(const(1)), exponential(p))");
}

TEST(AlgebraicPart2Multiply, RsqrtSquaredNeedsNonNegative) {
  NoApply("multiply-rsqrt-rsqrt", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  s = f32[4] rsqrt(p)
  ROOT m = f32[4] multiply(s, s)
})");
}

constexpr char kConvBiasScale[] = R"(
HloModule m
ENTRY e {
  x = f32[1,4,2] parameter(0)
  f = f32[3,2,3] constant({{{1, 2, 3}, {4, 5, 6}}, {{1, 0, 1}, {0, 1, 0}}, {{2, 1, 2}, {1, 2, 1}}})
  conv = f32[1,2,3] convolution(x, f), window={size=3}, dim_labels=b0f_0io->b0f
  bias = f32[1,2,3] parameter(1)
  add = f32[1,2,3] add(conv, bias)
  s = f32[3] constant({1, 2, 3})
  b = f32[1,2,3] broadcast(s), dimensions={2}
  ROOT m = f32[1,2,3] multiply(add, b)
})";

TEST(AlgebraicPart2Multiply, ConvBiasScaleFoldsIntoFilter) {
  Applied r = Apply("multiply-conv-bias-reorder", kConvBiasScale, {}, 1e-4);
  ASSERT_EQ(Expr(r.root),
            "add(convolution(x, multiply(constant, broadcast(constant))), "
            "multiply(bias, broadcast(constant)))");
  EXPECT_EQ(Dims(r.root->operand(0)->operand(1)->operand(1)), "{2}");
}

TEST(AlgebraicPart2Multiply, ConvBiasScaleNeedsOption) {
  AlgebraicSimplifierOptions off;
  off.enable_conv_add_multiply_reorder = false;
  NoApply("multiply-conv-bias-reorder", kConvBiasScale, off);
}

// ---------------------------------------------------------------------------
// Pad.

TEST(AlgebraicPart2Pad, EmptyOperandIsBroadcastOfValue) {
  Applied r = Apply("pad-zero-element", R"(
HloModule m
ENTRY e {
  p = f32[0] parameter(0)
  v = f32[] parameter(1)
  ROOT d = f32[5] pad(p, v), padding=2_3
})");
  EXPECT_EQ(Expr(r.root), "broadcast(v)");
}

TEST(AlgebraicPart2Pad, NonEmptyOperandKept) {
  NoApply("pad-zero-element", R"(
HloModule m
ENTRY e {
  p = f32[1] parameter(0)
  v = f32[] parameter(1)
  ROOT d = f32[6] pad(p, v), padding=2_3
})");
}

TEST(AlgebraicPart2Pad, InteriorOnSizeOneDropped) {
  Applied r = Apply("pad-degenerate-interior", R"(
HloModule m
ENTRY e {
  p = f32[1,3] parameter(0)
  v = f32[] parameter(1)
  ROOT d = f32[2,7] pad(p, v), padding=1_0_2x0_0_2
})");
  ASSERT_EQ(Expr(r.root), "pad(p, v)");
  const PaddingConfig& c = r.root->attrs().padding;
  EXPECT_EQ(c[0], (PaddingDimension{1, 0, 0}));
  EXPECT_EQ(c[1], (PaddingDimension{0, 0, 2}));
}

TEST(AlgebraicPart2Pad, InteriorOnLargerDimKept) {
  NoApply("pad-degenerate-interior", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  v = f32[] parameter(1)
  ROOT d = f32[2,7] pad(p, v), padding=0_0x0_0_2
})");
}

TEST(AlgebraicPart2Pad, NoPaddingIsOperand) {
  Applied r = Apply("pad-noop", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  v = f32[] parameter(1)
  ROOT d = f32[2,3] pad(p, v), padding=0_0x0_0
})");
  EXPECT_EQ(Expr(r.root), "p");
}

TEST(AlgebraicPart2Pad, SomePaddingKept) {
  NoApply("pad-noop", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  v = f32[] parameter(1)
  ROOT d = f32[2,4] pad(p, v), padding=0_0x0_1
})");
}

TEST(AlgebraicPart2Pad, OfBroadcastPadsSmallerBroadcast) {
  Applied r = Apply("pad-broadcast", R"(
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  v = f32[] parameter(1)
  b = f32[4,3,5] broadcast(x), dimensions={1}
  ROOT d = f32[4,3,8] pad(b, v), padding=0_0x0_0x1_2
})");
  ASSERT_EQ(Expr(r.root), "broadcast(pad(broadcast(x), v))");
  EXPECT_EQ(Dims(r.root), "{1,2}");
  const Instruction* inner_pad = r.root->operand(0);
  EXPECT_EQ(ShapeText(inner_pad), "f32[3,8]");
  EXPECT_EQ(inner_pad->attrs().padding[1], (PaddingDimension{1, 2, 0}));
  EXPECT_EQ(Dims(inner_pad->operand(0)), "{0}");
}

TEST(AlgebraicPart2Pad, OfBroadcastNotWhenOperandDimPadded) {
  NoApply("pad-broadcast", R"(
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  v = f32[] parameter(1)
  b = f32[4,3,5] broadcast(x), dimensions={1}
  ROOT d = f32[4,4,8] pad(b, v), padding=0_0x0_1x1_2
})");
  // The broadcast has another user.
  NoApply("pad-broadcast", R"(
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  v = f32[] parameter(1)
  b = f32[4,3,5] broadcast(x), dimensions={1}
  d = f32[4,3,8] pad(b, v), padding=0_0x0_0x1_2
  ROOT t = (f32[4,3,8], f32[4,3,5]) tuple(d, b)
})");
}

constexpr char kNegativePad[] = R"(
HloModule m
ENTRY e {
  p = f32[5] parameter(0)
  v = f32[] parameter(1)
  ROOT d = f32[6] pad(p, v), padding=-1_2
})";

TEST(AlgebraicPart2Pad, NegativePaddingBecomesSlice) {
  Applied r = Apply("pad-negative", kNegativePad);
  ASSERT_EQ(Expr(r.root), "slice(pad(p, v))");
  EXPECT_EQ(r.root->operand(0)->attrs().padding[0],
            (PaddingDimension{0, 2, 0}));
  EXPECT_EQ(r.root->attrs().slice[0].start, 1);
  EXPECT_EQ(r.root->attrs().slice[0].limit, 7);
}

TEST(AlgebraicPart2Pad, NegativePaddingNeedsOption) {
  AlgebraicSimplifierOptions off;
  off.enable_negative_padding_replacement = false;
  NoApply("pad-negative", kNegativePad, off);
}

// ---------------------------------------------------------------------------
// Layout-sensitive replacement keeps the replaced instruction's layout.

TEST(AlgebraicPart2Layout, NewInstructionTakesOldLayout) {
  Applied r = Apply("multiply-negate-negate", R"(
HloModule m
ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  b = f32[2,3]{0,1} parameter(1)
  na = f32[2,3]{0,1} negate(a)
  nb = f32[2,3]{0,1} negate(b)
  ROOT x = f32[2,3]{0,1} multiply(na, nb)
})",
                    LayoutSensitive());
  ASSERT_EQ(Expr(r.root), "multiply(a, b)");
  EXPECT_EQ(r.root->shape().ToString(), "f32[2,3]{0,1}");
}

TEST(AlgebraicPart2Layout, ExistingOperandWithOtherLayoutRefused) {
  NoApply("divide-one", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  one = f32[] constant(1)
  b = f32[2,3]{1,0} broadcast(one), dimensions={}
  ROOT d = f32[2,3]{1,0} divide(p, b)
})",
          LayoutSensitive());
}

TEST(AlgebraicPart2Rules, EveryRuleHasAnEntryInRange) {
  std::vector<AlgebraicRule> rules;
  AddAlgebraicRulesPart2(&rules);
  EXPECT_GE(rules.size(), 80u);
  for (const AlgebraicRule& r : rules) {
    EXPECT_GE(r.entry, 64) << r.name;
    EXPECT_LE(r.entry, 137) << r.name;
  }
}

}  // namespace
}  // namespace hlogym
