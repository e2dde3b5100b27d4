// Tests of the AlgebraicSimplifier rules for checklist entries 1-63: each
// rule rewrites a small module (checked structurally, numerically and in
// dry mode) and leaves alone a module where its guard must stop it.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>

#include "hlogym/passes/algebraic_simplifier.h"
#include "hlogym/passes/pass_test_util.h"
#include "hlogym/passes/pattern_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::OnlyRule;

AlgebraicSimplifierOptions LayoutSensitive() {
  AlgebraicSimplifierOptions o;
  o.is_layout_sensitive = true;
  return o;
}

// The applied root, or nullptr (with a failure) if the rewrite failed.
const Instruction* RewriteRoot(const test::RewriteResult& r) {
  EXPECT_NE(r.applied, nullptr);
  return r.applied == nullptr ? nullptr : test::Root(*r.applied);
}

// Runs only `rule` and returns the root of the applied module.
const Instruction* Rewrite(std::string_view rule, std::string_view text,
                           test::RewriteResult* keep,
                           AlgebraicSimplifierOptions options = {},
                           bool check_outputs = true) {
  auto pass = OnlyRule(rule, options);
  *keep = ExpectRewrite(*pass, text, check_outputs);
  return RewriteRoot(*keep);
}

void NoRewrite(std::string_view rule, std::string_view text,
               AlgebraicSimplifierOptions options = {}) {
  auto pass = OnlyRule(rule, options);
  ExpectNoRewrite(*pass, text);
}

bool Is(const Instruction* inst, Opcode op) {
  return inst != nullptr && inst->opcode() == op;
}

bool IsParam(const Instruction* inst, int64_t number) {
  return Is(inst, Opcode::kParameter) && inst->parameter_number() == number;
}

// A scalar constant (possibly broadcast) with value v.
bool IsConstantValue(const Instruction* inst, double v) {
  return IsAll(inst, v);
}

// ---------------------------------------------------------------------------
// Abs, Add, And, Or, Not, Negate.

TEST(AlgebraicPart1Abs, NonNegativeOperand) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("abs-non-negative", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  x = f32[4] exponential(p)
  ROOT a = f32[4] abs(x)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kExp));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1Abs, SignedOperandKept) {
  NoRewrite("abs-non-negative", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT a = f32[4] abs(n)
})");
}

TEST(AlgebraicPart1Add, ZeroRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("add-zero", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  b = s32[4] broadcast(z), dimensions={}
  ROOT a = s32[4] add(b, p)
})",
                                    &r);
  EXPECT_TRUE(IsParam(root, 0));
}

TEST(AlgebraicPart1Add, NonZeroKept) {
  NoRewrite("add-zero", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(1)
  b = s32[4] broadcast(z), dimensions={}
  ROOT a = s32[4] add(b, p)
})");
}

TEST(AlgebraicPart1Add, ConstantMovedRight) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("add-canonicalize-constant", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  ROOT a = f32[4] add(c, p)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kAdd));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_TRUE(Is(root->operand(1), Opcode::kConstant));
}

TEST(AlgebraicPart1Add, BroadcastOnLeftNotAConstant) {
  NoRewrite("add-canonicalize-constant", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  ROOT a = f32[4] add(b, p)
})");
}

TEST(AlgebraicPart1Add, ReassociateBroadcastConstants) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("add-reassociate-constants", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[] constant(1)
  b1 = f32[4] broadcast(c1), dimensions={}
  c2 = f32[] constant(2)
  b2 = f32[4] broadcast(c2), dimensions={}
  a1 = f32[4] add(p, b1)
  ROOT a2 = f32[4] add(a1, b2)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kAdd));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  const Instruction* b = root->operand(1);
  ASSERT_TRUE(Is(b, Opcode::kBroadcast));
  const Instruction* sum = b->operand(0);
  ASSERT_TRUE(Is(sum, Opcode::kAdd));
  EXPECT_TRUE(sum->shape().IsScalar());
  EXPECT_TRUE(IsConstantValue(sum->operand(0), 1));
  EXPECT_TRUE(IsConstantValue(sum->operand(1), 2));
}

TEST(AlgebraicPart1Add, ReassociateNeedsSecondConstant) {
  NoRewrite("add-reassociate-constants", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  c1 = f32[] constant(1)
  b1 = f32[4] broadcast(c1), dimensions={}
  a1 = f32[4] add(p, b1)
  ROOT a2 = f32[4] add(a1, q)
})");
}

TEST(AlgebraicPart1Add, SubtractConstantsCombined) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("add-subtract-constants", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  c1 = f32[3] constant({1, 2, 3})
  c2 = f32[3] constant({4, 5, 6})
  s = f32[3] subtract(c1, p)
  ROOT a = f32[3] add(s, c2)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kSubtract));
  const Instruction* sum = root->operand(0);
  ASSERT_TRUE(Is(sum, Opcode::kAdd));
  EXPECT_TRUE(Is(sum->operand(0), Opcode::kConstant));
  EXPECT_TRUE(Is(sum->operand(1), Opcode::kConstant));
  EXPECT_TRUE(IsParam(root->operand(1), 0));
}

TEST(AlgebraicPart1Add, SubtractOfNonConstantKept) {
  NoRewrite("add-subtract-constants", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  c1 = f32[3] constant({1, 2, 3})
  c2 = f32[3] constant({4, 5, 6})
  s = f32[3] subtract(p, c1)
  ROOT a = f32[3] add(s, c2)
})");
}

constexpr char kAddDus[] = R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  u = f32[3] parameter(1)
  i = s32[] parameter(2)
  z = f32[] constant(%s)
  zb = f32[8] broadcast(z), dimensions={}
  d = f32[8] dynamic-update-slice(zb, u, i)
  ROOT a = f32[8] add(p, d)
})";

std::string WithValue(const char* pattern, const char* value) {
  std::string s(pattern);
  size_t pos = s.find("%s");
  if (pos != std::string::npos) s.replace(pos, 2, value);
  return s;
}

TEST(AlgebraicPart1Add, DynamicUpdateSliceOfZeros) {
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("add-dynamic-update-slice-of-zeros", WithValue(kAddDus, "0"), &r);
  ASSERT_TRUE(Is(root, Opcode::kDynamicUpdateSlice));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_TRUE(IsParam(root->operand(2), 2));
  const Instruction* partial = root->operand(1);
  ASSERT_TRUE(Is(partial, Opcode::kAdd));
  const Instruction* slice = partial->operand(0);
  ASSERT_TRUE(Is(slice, Opcode::kDynamicSlice));
  EXPECT_TRUE(IsParam(slice->operand(0), 0));
  EXPECT_TRUE(IsParam(slice->operand(1), 2));
  EXPECT_EQ(slice->shape().dimensions(0), 3);
  EXPECT_TRUE(IsParam(partial->operand(1), 1));
}

TEST(AlgebraicPart1Add, DynamicUpdateSliceOfOnesKept) {
  NoRewrite("add-dynamic-update-slice-of-zeros", WithValue(kAddDus, "1"));
}

TEST(AlgebraicPart1Add, FactorIntegerMultiplicand) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("add-factor-common-multiplicand", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  c = s32[4] parameter(2)
  m1 = s32[4] multiply(a, c)
  m2 = s32[4] multiply(c, b)
  ROOT s = s32[4] add(m1, m2)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kMultiply));
  const Instruction* sum = root->operand(0);
  ASSERT_TRUE(Is(sum, Opcode::kAdd));
  EXPECT_TRUE(IsParam(sum->operand(0), 0));
  EXPECT_TRUE(IsParam(sum->operand(1), 1));
  EXPECT_TRUE(IsParam(root->operand(1), 2));
}

TEST(AlgebraicPart1Add, FactorFloatPowerOfTwo) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("add-factor-common-multiplicand", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  k = f32[] constant(0.25)
  c = f32[4] broadcast(k), dimensions={}
  m1 = f32[4] multiply(c, a)
  m2 = f32[4] multiply(b, c)
  ROOT s = f32[4] add(m1, m2)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kMultiply));
  ASSERT_TRUE(Is(root->operand(0), Opcode::kAdd));
  EXPECT_TRUE(IsParam(root->operand(0)->operand(0), 0));
  EXPECT_TRUE(IsParam(root->operand(0)->operand(1), 1));
  EXPECT_TRUE(IsConstantValue(root->operand(1), 0.25));
}

TEST(AlgebraicPart1Add, FactorFloatNeedsPowerOfTwo) {
  NoRewrite("add-factor-common-multiplicand", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  k = f32[] constant(0.3)
  c = f32[4] broadcast(k), dimensions={}
  m1 = f32[4] multiply(a, c)
  m2 = f32[4] multiply(b, c)
  ROOT s = f32[4] add(m1, m2)
})");
}

TEST(AlgebraicPart1Add, FactorFloatWhenFloatsAreReal) {
  AlgebraicSimplifierOptions o;
  o.enable_floats_are_real = true;
  test::RewriteResult r;
  const Instruction* root = Rewrite("add-factor-common-multiplicand", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] parameter(2)
  m1 = f32[4] multiply(a, c)
  m2 = f32[4] multiply(b, c)
  ROOT s = f32[4] add(m1, m2)
})",
                                    &r, o);
  ASSERT_TRUE(Is(root, Opcode::kMultiply));
  EXPECT_TRUE(IsParam(root->operand(1), 2));
}

constexpr char kScatterAdd[] = R"(
HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[8] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  b = f32[8] parameter(3)
  s = f32[8] scatter(a, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum
  ROOT r = f32[8] add(b, s)
})";

TEST(AlgebraicPart1Add, IntoScatterAdd) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("add-into-scatter-add", kScatterAdd, &r);
  ASSERT_TRUE(Is(root, Opcode::kScatter));
  const Instruction* sum = root->operand(0);
  ASSERT_TRUE(Is(sum, Opcode::kAdd));
  EXPECT_TRUE(IsParam(sum->operand(0), 3));
  EXPECT_TRUE(IsParam(sum->operand(1), 0));
  EXPECT_TRUE(IsParam(root->operand(1), 1));
  EXPECT_TRUE(IsParam(root->operand(2), 2));
}

TEST(AlgebraicPart1Add, IntoScatterAddLayoutSensitiveKept) {
  NoRewrite("add-into-scatter-add", kScatterAdd, LayoutSensitive());
}

constexpr char kTwoScatters[] = R"(
HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[8] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  b = f32[8] parameter(3)
  j = s32[3,1] parameter(4)
  v = f32[3] parameter(5)
  s = f32[8] scatter(a, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum
  t = f32[8] scatter(b, j, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, %s to_apply=sum
  ROOT r = f32[8] add(s, t)
})";

TEST(AlgebraicPart1Add, TwoScatterAddsConcatenated) {
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("add-of-two-scatter-adds", WithValue(kTwoScatters, ""), &r);
  ASSERT_TRUE(Is(root, Opcode::kScatter));
  const Instruction* sum = root->operand(0);
  ASSERT_TRUE(Is(sum, Opcode::kAdd));
  EXPECT_TRUE(IsParam(sum->operand(0), 0));
  EXPECT_TRUE(IsParam(sum->operand(1), 3));
  const Instruction* index = root->operand(1);
  ASSERT_TRUE(Is(index, Opcode::kConcatenate));
  EXPECT_EQ(index->shape().dimensions(), (DimVector{5, 1}));
  EXPECT_TRUE(IsParam(index->operand(0), 1));
  EXPECT_TRUE(IsParam(index->operand(1), 4));
  const Instruction* update = root->operand(2);
  ASSERT_TRUE(Is(update, Opcode::kConcatenate));
  EXPECT_EQ(update->shape().dimensions(), (DimVector{5}));
}

TEST(AlgebraicPart1Add, TwoScatterAddsChainedWhenIndicesUnique) {
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("add-of-two-scatter-adds",
              WithValue(kTwoScatters, "unique_indices=true,"), &r);
  ASSERT_TRUE(Is(root, Opcode::kScatter));
  EXPECT_TRUE(IsParam(root->operand(1), 1));
  const Instruction* inner = root->operand(0);
  ASSERT_TRUE(Is(inner, Opcode::kScatter));
  EXPECT_TRUE(IsParam(inner->operand(1), 4));
  EXPECT_TRUE(Is(inner->operand(0), Opcode::kAdd));
}

TEST(AlgebraicPart1Add, TwoScatterAddsLayoutSensitiveKept) {
  NoRewrite("add-of-two-scatter-adds", WithValue(kTwoScatters, ""),
            LayoutSensitive());
}

constexpr char kConvBias[] = R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[1,1,2,2] parameter(1)
  conv = f32[1,4,4,2] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
  c0 = f32[2] constant({1, 2})
  b0 = f32[1,4,4,2] broadcast(c0), dimensions={3}
  c1 = f32[2] constant({3, 4})
  b1 = f32[1,4,4,2] broadcast(c1), dimensions={3}
  a0 = f32[1,4,4,2] add(b0, conv)
  ROOT a1 = f32[1,4,4,2] add(a0, b1)
})";

TEST(AlgebraicPart1Add, ConvolutionBiasesSunk) {
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("add-sink-convolution-biases", kConvBias, &r);
  ASSERT_TRUE(Is(root, Opcode::kAdd));
  const Instruction* bias = root->operand(0);
  ASSERT_TRUE(Is(bias, Opcode::kBroadcast));
  EXPECT_EQ(bias->dimensions(), (DimVector{3}));
  ASSERT_TRUE(Is(bias->operand(0), Opcode::kAdd));
  EXPECT_TRUE(Is(bias->operand(0)->operand(0), Opcode::kConstant));
  EXPECT_TRUE(Is(root->operand(1), Opcode::kConvolution));
}

TEST(AlgebraicPart1Add, ConvolutionBiasesNeedSinkBroadcast) {
  AlgebraicSimplifierOptions o;
  o.enable_sink_broadcast = false;
  NoRewrite("add-sink-convolution-biases", kConvBias, o);
}

TEST(AlgebraicPart1And, TrueRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("and-true", R"(
HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  t = pred[] constant(true)
  b = pred[4] broadcast(t), dimensions={}
  ROOT a = pred[4] and(b, p)
})",
                                    &r);
  EXPECT_TRUE(IsParam(root, 0));
}

TEST(AlgebraicPart1And, AllOnesIntegerIsNotTrue) {
  NoRewrite("and-true", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  t = s32[] constant(1)
  b = s32[4] broadcast(t), dimensions={}
  ROOT a = s32[4] and(p, b)
})");
}

TEST(AlgebraicPart1And, ZeroAbsorbs) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("and-zero", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  b = s32[4] broadcast(z), dimensions={}
  ROOT a = s32[4] and(p, b)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(root, 0));
}

TEST(AlgebraicPart1And, NonZeroKept) {
  NoRewrite("and-zero", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(2)
  b = s32[4] broadcast(z), dimensions={}
  ROOT a = s32[4] and(p, b)
})");
}

TEST(AlgebraicPart1And, CompareBoundsMerged) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("and-compare-min-bound", R"(
HloModule m
ENTRY e {
  x = s32[] parameter(0)
  c1 = s32[] constant(3)
  c2 = s32[] constant(1)
  l1 = pred[] compare(x, c1), direction=LT
  l2 = pred[] compare(c2, x), direction=GT
  ROOT a = pred[] and(l1, l2)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kCompare));
  EXPECT_EQ(root->comparison_direction(), ComparisonDirection::kLt);
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_TRUE(IsConstantValue(root->operand(1), 1));
}

TEST(AlgebraicPart1And, CompareBoundsOfDifferentValuesKept) {
  NoRewrite("and-compare-min-bound", R"(
HloModule m
ENTRY e {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  c1 = s32[] constant(3)
  c2 = s32[] constant(1)
  l1 = pred[] compare(x, c1), direction=LT
  l2 = pred[] compare(y, c2), direction=LT
  ROOT a = pred[] and(l1, l2)
})");
}

TEST(AlgebraicPart1Or, TrueAbsorbs) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("or-true", R"(
HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  t = pred[4] constant({1, 1, 1, 1})
  ROOT o = pred[4] or(p, t)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kConstant));
  EXPECT_TRUE(IsConstantValue(root, 1));
}

TEST(AlgebraicPart1Or, TrueOfIntegersKept) {
  NoRewrite("or-true", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  t = s32[4] constant({1, 1, 1, 1})
  ROOT o = s32[4] or(p, t)
})");
}

TEST(AlgebraicPart1Or, ZeroRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("or-zero", R"(
HloModule m
ENTRY e {
  p = u8[4] parameter(0)
  z = u8[] constant(0)
  b = u8[4] broadcast(z), dimensions={}
  ROOT o = u8[4] or(b, p)
})",
                                    &r);
  EXPECT_TRUE(IsParam(root, 0));
}

TEST(AlgebraicPart1Or, NonZeroKept) {
  NoRewrite("or-zero", R"(
HloModule m
ENTRY e {
  p = u8[4] parameter(0)
  z = u8[] constant(4)
  b = u8[4] broadcast(z), dimensions={}
  ROOT o = u8[4] or(b, p)
})");
}

TEST(AlgebraicPart1Not, DoubleNotRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("not-not", R"(
HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  n = pred[4] not(p)
  ROOT m = pred[4] not(n)
})",
                                    &r);
  EXPECT_TRUE(IsParam(root, 0));
}

TEST(AlgebraicPart1Not, SingleNotKept) {
  NoRewrite("not-not", R"(
HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  ROOT n = pred[4] not(p)
})");
}

TEST(AlgebraicPart1Negate, DoubleNegateRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("negate-negate", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT m = f32[4] negate(n)
})",
                                    &r);
  EXPECT_TRUE(IsParam(root, 0));
}

TEST(AlgebraicPart1Negate, NegateOfAbsKept) {
  NoRewrite("negate-negate", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] abs(p)
  ROOT m = f32[4] negate(n)
})");
}

// ---------------------------------------------------------------------------
// Collectives.

TEST(AlgebraicPart1Collective, AllGatherOfBroadcastConstant) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("all-gather-of-broadcast-constant", R"(
HloModule m
ENTRY e {
  c = f32[] constant(2)
  b = f32[4] broadcast(c), dimensions={}
  ROOT g = f32[4] all-gather(b), replica_groups={{0}}, dimensions={0}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(root, 2));
  EXPECT_EQ(root->shape().dimensions(), (DimVector{4}));
}

TEST(AlgebraicPart1Collective, AllGatherOfParameterKept) {
  NoRewrite("all-gather-of-broadcast-constant", R"(
HloModule m
ENTRY e {
  c = f32[] parameter(0)
  b = f32[4] broadcast(c), dimensions={}
  ROOT g = f32[4] all-gather(b), replica_groups={{0}}, dimensions={0}
})");
}

TEST(AlgebraicPart1Collective, AllToAllOfBroadcastConstant) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("all-to-all-of-broadcast-constant", R"(
HloModule m
ENTRY e {
  c = f32[] constant(2)
  b = f32[4] broadcast(c), dimensions={}
  ROOT g = f32[4] all-to-all(b), replica_groups={{0}}, dimensions={0}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(root, 2));
}

TEST(AlgebraicPart1Collective, AllToAllOfParameterKept) {
  NoRewrite("all-to-all-of-broadcast-constant", R"(
HloModule m
ENTRY e {
  c = f32[] parameter(0)
  b = f32[4] broadcast(c), dimensions={}
  ROOT g = f32[4] all-to-all(b), replica_groups={{0}}, dimensions={0}
})");
}

// ---------------------------------------------------------------------------
// Bitcast, BitcastConvert, Copy.

TEST(AlgebraicPart1Bitcast, BitcastOfBitcast) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("bitcast-of-bitcast", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  b1 = f32[6] bitcast(p)
  ROOT b2 = f32[3,2] bitcast(b1)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBitcast));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->shape().dimensions(), (DimVector{3, 2}));
}

TEST(AlgebraicPart1Bitcast, BitcastOfReshapeKept) {
  NoRewrite("bitcast-of-bitcast", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  b1 = f32[6] reshape(p)
  ROOT b2 = f32[3,2] bitcast(b1)
})");
}

TEST(AlgebraicPart1Bitcast, NoOpBitcastRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("bitcast-no-op", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  b = f32[2,3] bitcast(p)
  ROOT n = f32[2,3] negate(b)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1Bitcast, LayoutChangingBitcastKept) {
  NoRewrite("bitcast-no-op", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT b = f32[2,3]{0,1} bitcast(p)
})");
}

TEST(AlgebraicPart1Bitcast, TransposeReshapeChainIdentity) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("transpose-reshape-chain-identity", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  t = f32[3,2] transpose(p), dimensions={1,0}
  r = f32[3,1,2] reshape(t)
  t2 = f32[2,1,3] transpose(r), dimensions={2,1,0}
  r2 = f32[2,3] reshape(t2)
  ROOT n = f32[2,3] negate(r2)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1Bitcast, TransposeReshapeChainThatTransposesKept) {
  NoRewrite("transpose-reshape-chain-identity", R"(
HloModule m
ENTRY e {
  p = f32[2,2] parameter(0)
  r = f32[2,1,2] reshape(p)
  t = f32[2,1,2] transpose(r), dimensions={2,1,0}
  ROOT r2 = f32[2,2] reshape(t)
})");
}

TEST(AlgebraicPart1Bitcast, BitcastOfBroadcastAsTranspose) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("bitcast-of-broadcast-as-transpose", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[2,3]{1,0} broadcast(p), dimensions={1}
  ROOT c = f32[3,2]{0,1} bitcast(b)
})",
                                    &r, LayoutSensitive());
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->dimensions(), (DimVector{0}));
  EXPECT_EQ(root->shape().ToString(), "f32[3,2]{0,1}");
}

TEST(AlgebraicPart1Bitcast, BitcastOfBroadcastChangingRankKept) {
  NoRewrite("bitcast-of-broadcast-as-transpose", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[2,3]{1,0} broadcast(p), dimensions={1}
  ROOT c = f32[6]{0} bitcast(b)
})",
            LayoutSensitive());
}

TEST(AlgebraicPart1BitcastConvert, ChainCollapsed) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("bitcast-convert-chain", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = s32[4] bitcast-convert(p)
  ROOT b = u32[4] bitcast-convert(a)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBitcastConvert));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->shape().element_type(), PrimitiveType::kU32);
}

TEST(AlgebraicPart1BitcastConvert, RoundTripRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("bitcast-convert-chain", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = s32[4] bitcast-convert(p)
  b = f32[4] bitcast-convert(a)
  ROOT n = f32[4] negate(b)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1BitcastConvert, ChainThroughConvertKept) {
  NoRewrite("bitcast-convert-chain", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = s32[4] convert(p)
  ROOT b = u32[4] bitcast-convert(a)
})");
}

TEST(AlgebraicPart1BitcastConvert, SameTypeRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("bitcast-convert-no-op", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  b = f32[4] bitcast-convert(p)
  ROOT n = f32[4] negate(b)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1BitcastConvert, OtherTypeKept) {
  NoRewrite("bitcast-convert-no-op", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT b = s32[4] bitcast-convert(p)
})");
}

constexpr char kSameWidthBitcastConvert[] = R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT b = s32[2,3]{1,0} bitcast-convert(p)
})";

TEST(AlgebraicPart1BitcastConvert, ToBitcastWhenLayoutSensitive) {
  AlgebraicSimplifierOptions o = LayoutSensitive();
  o.rewrite_no_op_bitcast_convert_to_bitcast = true;
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("bitcast-convert-to-bitcast", kSameWidthBitcastConvert, &r, o);
  ASSERT_TRUE(Is(root, Opcode::kBitcast));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->shape().ToString(), "s32[2,3]{1,0}");
}

TEST(AlgebraicPart1BitcastConvert, ToBitcastNeedsOption) {
  NoRewrite("bitcast-convert-to-bitcast", kSameWidthBitcastConvert,
            LayoutSensitive());
}

TEST(AlgebraicPart1BitcastConvert, OfConcatOfBitcastConverts) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("bitcast-convert-of-concat", R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  y = f32[3] parameter(1)
  bx = s32[2] bitcast-convert(x)
  by = s32[3] bitcast-convert(y)
  c = s32[5] concatenate(bx, by), dimensions={0}
  ROOT r = f32[5] bitcast-convert(c)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kConcatenate));
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_TRUE(IsParam(root->operand(1), 1));
}

TEST(AlgebraicPart1BitcastConvert, OfConcatWithPlainOperandKept) {
  NoRewrite("bitcast-convert-of-concat", R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  y = s32[3] parameter(1)
  bx = s32[2] bitcast-convert(x)
  c = s32[5] concatenate(bx, y), dimensions={0}
  ROOT r = f32[5] bitcast-convert(c)
})");
}

TEST(AlgebraicPart1Copy, CopyOfCopyRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("copy-of-copy", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{0,1} copy(p)
  c2 = f32[2,3]{1,0} copy(c1)
  ROOT n = f32[2,3]{1,0} negate(c2)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1Copy, CopyOfCopyBecomesOneCopy) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("copy-of-copy", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{1,0} copy(p)
  ROOT c2 = f32[2,3]{0,1} copy(c1)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kCopy));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->shape().ToString(), "f32[2,3]{0,1}");
}

TEST(AlgebraicPart1Copy, CopyOfNegateKept) {
  NoRewrite("copy-of-copy", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  n = f32[2,3]{0,1} negate(p)
  ROOT c = f32[2,3]{1,0} copy(n)
})");
}

constexpr char kLayoutCopy[] = R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c = f32[2,3]{0,1} copy(p)
  ROOT n = f32[2,3]{0,1} negate(c)
})";

TEST(AlgebraicPart1Copy, NoOpCopyRemovedLayoutInsensitive) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("copy-no-op", kLayoutCopy, &r);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1Copy, LayoutChangingCopyKeptLayoutSensitive) {
  NoRewrite("copy-no-op", kLayoutCopy, LayoutSensitive());
}

constexpr char kCopyChain[] = R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{0,1} copy(p)
  c2 = f32[2,3]{1,0} copy(c1)
  ROOT r = f32[6]{0} reshape(c2)
})";

TEST(AlgebraicPart1Copy, CopyReshapeChainToBitcast) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("copy-reshape-chain-to-bitcast", kCopyChain,
                                    &r, LayoutSensitive());
  // The reshape is a bitcast of the second copy, and that copy a bitcast of
  // the parameter.
  ASSERT_TRUE(Is(root, Opcode::kBitcast));
  EXPECT_EQ(root->shape().ToString(), "f32[6]{0}");
  const Instruction* inner = root->operand(0);
  ASSERT_TRUE(Is(inner, Opcode::kBitcast));
  EXPECT_TRUE(IsParam(inner->operand(0), 0));
}

TEST(AlgebraicPart1Copy, CopyReshapeChainLayoutInsensitiveKept) {
  NoRewrite("copy-reshape-chain-to-bitcast", kCopyChain);
}

TEST(AlgebraicPart1Copy, CopyOfBitcastReshape) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("copy-of-bitcast-reshape", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  r = f32[3,1,2]{2,1,0} reshape(p)
  ROOT c = f32[3,1,2]{2,0,1} copy(r)
})",
                                    &r, LayoutSensitive());
  ASSERT_TRUE(Is(root, Opcode::kReshape));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->shape().ToString(), "f32[3,1,2]{2,0,1}");
}

TEST(AlgebraicPart1Copy, CopyOfSharedReshapeKept) {
  NoRewrite("copy-of-bitcast-reshape", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  r = f32[3,1,2]{2,1,0} reshape(p)
  c = f32[3,1,2]{2,0,1} copy(r)
  ROOT t = (f32[3,1,2]{2,0,1}, f32[3,1,2]{2,1,0}) tuple(c, r)
})",
            LayoutSensitive());
}

// ---------------------------------------------------------------------------
// Broadcast.

TEST(AlgebraicPart1Broadcast, ToReshape) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("broadcast-to-reshape", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  ROOT b = f32[1,3] broadcast(p), dimensions={1}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kReshape));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->shape().dimensions(), (DimVector{1, 3}));
}

TEST(AlgebraicPart1Broadcast, ToReshapeNeedsSameElementCount) {
  NoRewrite("broadcast-to-reshape", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  ROOT b = f32[2,3] broadcast(p), dimensions={1}
})");
}

TEST(AlgebraicPart1Broadcast, ToTranspose) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("broadcast-to-transpose", R"(
HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  ROOT b = f32[4,2,3] broadcast(p), dimensions={1,2,0}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kTranspose));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->dimensions(), (DimVector{2, 0, 1}));
}

TEST(AlgebraicPart1Broadcast, ToTransposeNeedsSameRank) {
  NoRewrite("broadcast-to-transpose", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  ROOT b = f32[3,1] broadcast(p), dimensions={0}
})");
}

TEST(AlgebraicPart1Broadcast, OfDegenerateReshape) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("broadcast-of-degenerate-reshape", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  r = f32[1,3] reshape(p)
  ROOT b = f32[2,1,3] broadcast(r), dimensions={1,2}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->dimensions(), (DimVector{2}));
}

TEST(AlgebraicPart1Broadcast, OfDeletingReshapeKept) {
  NoRewrite("broadcast-of-degenerate-reshape", R"(
HloModule m
ENTRY e {
  p = f32[1,3] parameter(0)
  r = f32[3] reshape(p)
  ROOT b = f32[2,3] broadcast(r), dimensions={1}
})");
}

TEST(AlgebraicPart1Broadcast, OfBroadcast) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("broadcast-of-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  b1 = f32[2,3] broadcast(p), dimensions={1}
  ROOT b2 = f32[4,2,3] broadcast(b1), dimensions={1,2}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->dimensions(), (DimVector{2}));
}

TEST(AlgebraicPart1Broadcast, OfNegatedBroadcastKept) {
  NoRewrite("broadcast-of-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  b1 = f32[2,3] broadcast(p), dimensions={1}
  n = f32[2,3] negate(b1)
  ROOT b2 = f32[4,2,3] broadcast(n), dimensions={1,2}
})");
}

TEST(AlgebraicPart1Broadcast, OfIota) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("broadcast-of-iota", R"(
HloModule m
ENTRY e {
  i = s32[3] iota(), iota_dimension=0
  ROOT b = s32[2,3] broadcast(i), dimensions={1}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kIota));
  EXPECT_EQ(root->iota_dimension(), 1);
  EXPECT_EQ(root->shape().dimensions(), (DimVector{2, 3}));
}

TEST(AlgebraicPart1Broadcast, OfParameterKept) {
  NoRewrite("broadcast-of-iota", R"(
HloModule m
ENTRY e {
  i = s32[3] parameter(0)
  ROOT b = s32[2,3] broadcast(i), dimensions={1}
})");
}

TEST(AlgebraicPart1Broadcast, ScalarIntoTransposeUser) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("broadcast-scalar-into-user", R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={}
  ROOT t = f32[3,2] transpose(b), dimensions={1,0}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->shape().dimensions(), (DimVector{3, 2}));
}

TEST(AlgebraicPart1Broadcast, NonScalarIntoTransposeKept) {
  NoRewrite("broadcast-scalar-into-user", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={1}
  ROOT t = f32[3,2] transpose(b), dimensions={1,0}
})");
}

TEST(AlgebraicPart1Broadcast, SinkAfterElementwise) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("broadcast-sink-elementwise", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={1}
  c = f32[] constant(2)
  cb = f32[2,3] broadcast(c), dimensions={}
  ROOT m = f32[2,3] multiply(b, cb)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_EQ(root->dimensions(), (DimVector{1}));
  const Instruction* m = root->operand(0);
  ASSERT_TRUE(Is(m, Opcode::kMultiply));
  EXPECT_EQ(m->shape().dimensions(), (DimVector{3}));
  EXPECT_TRUE(IsParam(m->operand(0), 0));
  ASSERT_TRUE(Is(m->operand(1), Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(m->operand(1), 2));
}

TEST(AlgebraicPart1Broadcast, SinkNeedsBroadcastOperands) {
  NoRewrite("broadcast-sink-elementwise", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  q = f32[2,3] parameter(1)
  b = f32[2,3] broadcast(p), dimensions={1}
  ROOT m = f32[2,3] multiply(b, q)
})");
}

constexpr char kDegenerateBroadcast[] = R"(
HloModule m
ENTRY e {
  p = f32[1,3] parameter(0)
  ROOT b = f32[2,1,3] broadcast(p), dimensions={1,2}
})";

TEST(AlgebraicPart1Broadcast, DropDegenerateDims) {
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("broadcast-drop-degenerate-dims", kDegenerateBroadcast, &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_EQ(root->dimensions(), (DimVector{2}));
  const Instruction* reshape = root->operand(0);
  ASSERT_TRUE(Is(reshape, Opcode::kReshape));
  EXPECT_EQ(reshape->shape().dimensions(), (DimVector{3}));
  EXPECT_TRUE(IsParam(reshape->operand(0), 0));
}

TEST(AlgebraicPart1Broadcast, DropDegenerateDimsLayoutSensitiveKept) {
  NoRewrite("broadcast-drop-degenerate-dims", kDegenerateBroadcast,
            LayoutSensitive());
}

// ---------------------------------------------------------------------------
// Compare.

TEST(AlgebraicPart1Compare, UnsignedLessThanZero) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("compare-unsigned-with-zero", R"(
HloModule m
ENTRY e {
  p = u32[4] parameter(0)
  z = u32[] constant(0)
  zb = u32[4] broadcast(z), dimensions={}
  ROOT c = pred[4] compare(p, zb), direction=LT
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(root, 0));
  EXPECT_EQ(root->shape().element_type(), PrimitiveType::kPred);
}

TEST(AlgebraicPart1Compare, SignedLessThanZeroKept) {
  NoRewrite("compare-unsigned-with-zero", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  zb = s32[4] broadcast(z), dimensions={}
  ROOT c = pred[4] compare(p, zb), direction=LT
})");
}

TEST(AlgebraicPart1Compare, NonNegativeAtLeastZero) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("compare-non-negative-with-zero", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] abs(p)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT c = pred[4] compare(zb, a), direction=LE
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(root, 1));
}

TEST(AlgebraicPart1Compare, MaybeNegativeKept) {
  NoRewrite("compare-non-negative-with-zero", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT c = pred[4] compare(p, zb), direction=GE
})");
}

TEST(AlgebraicPart1Compare, SameIntegralOperand) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("compare-same-integral-operand", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  ROOT c = pred[4] compare(p, p), direction=NE
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(root, 0));
}

TEST(AlgebraicPart1Compare, SameFloatOperandKept) {
  NoRewrite("compare-same-integral-operand", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = pred[4] compare(p, p), direction=EQ
})");
}

TEST(AlgebraicPart1Compare, PredNotEqualFalse) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("compare-pred-identity", R"(
HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  f = pred[] constant(false)
  fb = pred[4] broadcast(f), dimensions={}
  ROOT c = pred[4] compare(fb, p), direction=NE
})",
                                    &r);
  EXPECT_TRUE(IsParam(root, 0));
}

TEST(AlgebraicPart1Compare, PredEqualFalseKept) {
  NoRewrite("compare-pred-identity", R"(
HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  f = pred[] constant(false)
  fb = pred[4] broadcast(f), dimensions={}
  ROOT c = pred[4] compare(p, fb), direction=EQ
})");
}

constexpr char kSelectMask[] = R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  ge = pred[4] compare(a, b), direction=GE
  o = f32[] constant(1)
  ob = f32[4] broadcast(o), dimensions={}
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  s = f32[4] select(ge, %s)
  ROOT c = pred[4] compare(s, zb), direction=NE
})";

TEST(AlgebraicPart1Compare, SelectMask) {
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("compare-select-mask", WithValue(kSelectMask, "ob, zb"), &r);
  ASSERT_TRUE(Is(root, Opcode::kCompare));
  EXPECT_EQ(root->comparison_direction(), ComparisonDirection::kGe);
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_TRUE(IsParam(root->operand(1), 1));
}

TEST(AlgebraicPart1Compare, InvertedSelectMaskKept) {
  NoRewrite("compare-select-mask", WithValue(kSelectMask, "zb, ob"));
}

TEST(AlgebraicPart1Compare, GreaterThanMax) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("compare-gt-max-min", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  m = f32[4] maximum(a, b)
  ROOT c = pred[4] compare(m, a), direction=GT
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kCompare));
  EXPECT_EQ(root->comparison_direction(), ComparisonDirection::kGt);
  EXPECT_TRUE(IsParam(root->operand(0), 1));
  EXPECT_TRUE(IsParam(root->operand(1), 0));
}

TEST(AlgebraicPart1Compare, GreaterThanMin) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("compare-gt-max-min", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  m = s32[4] minimum(a, b)
  ROOT c = pred[4] compare(b, m), direction=GT
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kCompare));
  EXPECT_TRUE(IsParam(root->operand(0), 1));
  EXPECT_TRUE(IsParam(root->operand(1), 0));
}

TEST(AlgebraicPart1Compare, GreaterOrEqualMaxKept) {
  NoRewrite("compare-gt-max-min", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  m = f32[4] maximum(a, b)
  ROOT c = pred[4] compare(m, a), direction=GE
})");
}

// ---------------------------------------------------------------------------
// Concatenate.

TEST(AlgebraicPart1Concat, SingleOperand) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("concat-single-operand", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] concatenate(p), dimensions={0}
})",
                                    &r);
  EXPECT_TRUE(IsParam(root, 0));
}

TEST(AlgebraicPart1Concat, TwoOperandsKept) {
  NoRewrite("concat-single-operand", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[8] concatenate(p, p), dimensions={0}
})");
}

TEST(AlgebraicPart1Concat, DropEmptyOperands) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("concat-drop-empty-operands", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[0] parameter(1)
  q = f32[2] parameter(2)
  ROOT c = f32[6] concatenate(p, z, q), dimensions={0}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kConcatenate));
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_TRUE(IsParam(root->operand(1), 2));
}

TEST(AlgebraicPart1Concat, NoEmptyOperandKept) {
  NoRewrite("concat-drop-empty-operands", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[2] parameter(1)
  ROOT c = f32[6] concatenate(p, q), dimensions={0}
})");
}

TEST(AlgebraicPart1Concat, Flatten) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("concat-flatten", R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  q = f32[3] parameter(1)
  s = f32[4] parameter(2)
  c1 = f32[5] concatenate(p, q), dimensions={0}
  ROOT c2 = f32[9] concatenate(c1, s), dimensions={0}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kConcatenate));
  ASSERT_EQ(root->operand_count(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(IsParam(root->operand(i), i));
}

TEST(AlgebraicPart1Concat, FlattenNeedsSameDimension) {
  NoRewrite("concat-flatten", R"(
HloModule m
ENTRY e {
  p = f32[2,2] parameter(0)
  q = f32[2,3] parameter(1)
  s = f32[2,5] parameter(2)
  c1 = f32[2,5] concatenate(p, q), dimensions={1}
  ROOT c2 = f32[4,5] concatenate(c1, s), dimensions={0}
})");
}

TEST(AlgebraicPart1Concat, MergeAdjacentSlices) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("concat-merge-slices", R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[1] parameter(1)
  sa = f32[2] slice(p), slice={[0:2]}
  sb = f32[3] slice(p), slice={[2:5]}
  ROOT c = f32[6] concatenate(sa, sb, q), dimensions={0}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kConcatenate));
  ASSERT_EQ(root->operand_count(), 2);
  const Instruction* slice = root->operand(0);
  ASSERT_TRUE(Is(slice, Opcode::kSlice));
  EXPECT_TRUE(IsParam(slice->operand(0), 0));
  EXPECT_EQ(slice->attrs().slice[0].start, 0);
  EXPECT_EQ(slice->attrs().slice[0].limit, 5);
  EXPECT_TRUE(IsParam(root->operand(1), 1));
}

TEST(AlgebraicPart1Concat, GapBetweenSlicesKept) {
  NoRewrite("concat-merge-slices", R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  sa = f32[2] slice(p), slice={[0:2]}
  sb = f32[3] slice(p), slice={[3:6]}
  ROOT c = f32[5] concatenate(sa, sb), dimensions={0}
})");
}

constexpr char kConcatPad[] = R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  s = f32[] parameter(1)
  b = f32[2,2] broadcast(s), dimensions={}
  ROOT c = f32[2,5] concatenate(p, b), dimensions={1}
})";

TEST(AlgebraicPart1Concat, BroadcastToPad) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("concat-broadcast-to-pad", kConcatPad, &r);
  ASSERT_TRUE(Is(root, Opcode::kPad));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_TRUE(IsParam(root->operand(1), 1));
  const PaddingConfig& padding = root->attrs().padding;
  ASSERT_EQ(padding.size(), 2u);
  EXPECT_EQ(padding[0], (PaddingDimension{0, 0, 0}));
  EXPECT_EQ(padding[1], (PaddingDimension{0, 2, 0}));
}

TEST(AlgebraicPart1Concat, BroadcastToPadLayoutSensitiveKept) {
  NoRewrite("concat-broadcast-to-pad", kConcatPad, LayoutSensitive());
}

TEST(AlgebraicPart1Concat, SameOperandToBroadcast) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("concat-same-operand-to-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[1,3] parameter(0)
  ROOT c = f32[3,3] concatenate(p, p, p), dimensions={0}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_EQ(root->dimensions(), (DimVector{1}));
  const Instruction* reshape = root->operand(0);
  ASSERT_TRUE(Is(reshape, Opcode::kReshape));
  EXPECT_EQ(reshape->shape().dimensions(), (DimVector{3}));
  EXPECT_TRUE(IsParam(reshape->operand(0), 0));
}

TEST(AlgebraicPart1Concat, SameOperandOfSizeTwoKept) {
  NoRewrite("concat-same-operand-to-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT c = f32[6,3] concatenate(p, p, p), dimensions={0}
})");
}

// ---------------------------------------------------------------------------
// Constant, Iota.

TEST(AlgebraicPart1Constant, TupleToTuple) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("constant-tuple-to-tuple", R"(
HloModule m
ENTRY e {
  ROOT c = (f32[], s32[2]) constant((1, {2, 3}))
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kTuple));
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_TRUE(IsConstantValue(root->operand(0), 1));
  ASSERT_TRUE(Is(root->operand(1), Opcode::kConstant));
  EXPECT_EQ(root->operand(1)->literal().GetAsInt64(1), 3);
}

TEST(AlgebraicPart1Constant, ArrayConstantIsNotATuple) {
  NoRewrite("constant-tuple-to-tuple", R"(
HloModule m
ENTRY e {
  ROOT c = s32[2] constant({2, 3})
})");
}

TEST(AlgebraicPart1Constant, AllEqualToBroadcast) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("constant-all-equal-to-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  c = f32[3] constant({2.5, 2.5, 2.5})
  ROOT a = f32[3] add(p, c)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kAdd));
  const Instruction* b = root->operand(1);
  ASSERT_TRUE(Is(b, Opcode::kBroadcast));
  ASSERT_TRUE(Is(b->operand(0), Opcode::kConstant));
  EXPECT_TRUE(b->operand(0)->shape().IsScalar());
  EXPECT_TRUE(IsConstantValue(b->operand(0), 2.5));
}

TEST(AlgebraicPart1Constant, DifferentElementsKept) {
  NoRewrite("constant-all-equal-to-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  c = f32[3] constant({2.5, 2.5, 2})
  ROOT a = f32[3] add(p, c)
})");
}

TEST(AlgebraicPart1Constant, ToIota) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("constant-to-iota", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  c = s32[4] constant({0, 1, 2, 3})
  ROOT a = s32[4] add(p, c)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kAdd));
  ASSERT_TRUE(Is(root->operand(1), Opcode::kIota));
  EXPECT_EQ(root->operand(1)->iota_dimension(), 0);
}

TEST(AlgebraicPart1Constant, NotAnIotaKept) {
  NoRewrite("constant-to-iota", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  c = s32[4] constant({0, 1, 2, 4})
  ROOT a = s32[4] add(p, c)
})");
}

TEST(AlgebraicPart1Constant, ToStridedIota) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("constant-to-strided-iota", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  c = s32[4] constant({0, 3, 6, 9})
  ROOT a = s32[4] add(p, c)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kAdd));
  const Instruction* m = root->operand(1);
  ASSERT_TRUE(Is(m, Opcode::kMultiply));
  EXPECT_TRUE(Is(m->operand(0), Opcode::kIota));
  ASSERT_TRUE(Is(m->operand(1), Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(m->operand(1), 3));
}

TEST(AlgebraicPart1Constant, UnevenStrideKept) {
  NoRewrite("constant-to-strided-iota", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  c = s32[4] constant({0, 3, 6, 8})
  ROOT a = s32[4] add(p, c)
})");
}

TEST(AlgebraicPart1Iota, DegenerateIotaIsZero) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("iota-degenerate", R"(
HloModule m
ENTRY e {
  ROOT i = s32[3,1] iota(), iota_dimension=1
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(root, 0));
  EXPECT_EQ(root->shape().dimensions(), (DimVector{3, 1}));
}

TEST(AlgebraicPart1Iota, CountingIotaKept) {
  NoRewrite("iota-degenerate", R"(
HloModule m
ENTRY e {
  ROOT i = s32[3,1] iota(), iota_dimension=0
})");
}

// ---------------------------------------------------------------------------
// Convert.

TEST(AlgebraicPart1Convert, SameTypeRemoved) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("convert-no-op", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] convert(p)
  ROOT n = f32[4] negate(c)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1Convert, OtherTypeKept) {
  NoRewrite("convert-no-op", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = s32[4] convert(p)
})");
}

TEST(AlgebraicPart1Convert, LosslessRoundTrip) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("convert-pair-no-op", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  w = f64[4] convert(p)
  c = f32[4] convert(w)
  ROOT n = f32[4] negate(c)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1Convert, LossyRoundTripKept) {
  NoRewrite("convert-pair-no-op", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  w = bf16[4] convert(p)
  ROOT c = f32[4] convert(w)
})");
}

TEST(AlgebraicPart1Convert, UnsignedIntoSignedRoundTrip) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("convert-pair-no-op", R"(
HloModule m
ENTRY e {
  p = u8[4] parameter(0)
  w = s16[4] convert(p)
  ROOT c = u8[4] convert(w)
})",
                                    &r);
  EXPECT_TRUE(IsParam(root, 0));
}

constexpr char kConvertConstant[] = R"(
HloModule m
ENTRY e {
  c = f32[3] constant({1.5, -2.25, 3})
  ROOT v = bf16[3] convert(c)
})";

TEST(AlgebraicPart1Convert, ConstantFolded) {
  AlgebraicSimplifierOptions o;
  o.use_convert_constant_folding = true;
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("convert-constant-fold", kConvertConstant, &r, o);
  ASSERT_TRUE(Is(root, Opcode::kConstant));
  EXPECT_EQ(root->shape().element_type(), PrimitiveType::kBF16);
  EXPECT_EQ(root->literal().GetAsDouble(0), 1.5);
  EXPECT_EQ(root->literal().GetAsDouble(1), -2.25);
  EXPECT_EQ(root->literal().GetAsDouble(2), 3);
}

TEST(AlgebraicPart1Convert, ConstantFoldingNeedsOption) {
  NoRewrite("convert-constant-fold", kConvertConstant);
}

TEST(AlgebraicPart1Convert, ConstantFoldingOnlyNarrows) {
  AlgebraicSimplifierOptions o;
  o.use_convert_constant_folding = true;
  NoRewrite("convert-constant-fold", R"(
HloModule m
ENTRY e {
  c = s8[3] constant({1, -2, 3})
  ROOT v = s32[3] convert(c)
})",
            o);
}

TEST(AlgebraicPart1Convert, NarrowBinaryOp) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("convert-narrow-binary-op", R"(
HloModule m
ENTRY e {
  a = s8[4] parameter(0)
  b = s8[4] parameter(1)
  ca = s32[4] convert(a)
  cb = s32[4] convert(b)
  m = s32[4] multiply(ca, cb)
  ROOT r = s8[4] convert(m)
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kMultiply));
  EXPECT_EQ(root->shape().element_type(), PrimitiveType::kS8);
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_TRUE(IsParam(root->operand(1), 1));
}

TEST(AlgebraicPart1Convert, NarrowSignedDivideKept) {
  NoRewrite("convert-narrow-binary-op", R"(
HloModule m
ENTRY e {
  a = s8[4] parameter(0)
  b = s8[4] parameter(1)
  ca = s32[4] convert(a)
  cb = s32[4] convert(b)
  d = s32[4] divide(ca, cb)
  ROOT r = s8[4] convert(d)
})");
}

// ---------------------------------------------------------------------------
// CustomCall, Conditional, OptimizationBarrier, GTE, Map.

TEST(AlgebraicPart1CustomCall, SliceToDynamicOfPadToStatic) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("slice-to-dynamic-of-pad-to-static", R"(
HloModule m
ENTRY e {
  p = f32[<=4] parameter(0)
  s = (f32[4], s32[]) custom-call(p), custom_call_target="PadToStatic"
  g0 = f32[4] get-tuple-element(s), index=0
  g1 = s32[] get-tuple-element(s), index=1
  d = f32[<=4] custom-call(g0, g1), custom_call_target="SliceToDynamic"
  ROOT n = f32[<=4] negate(d)
})",
                                    &r, {}, /*check_outputs=*/false);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
}

TEST(AlgebraicPart1CustomCall, SliceToDynamicOfOtherSizeKept) {
  NoRewrite("slice-to-dynamic-of-pad-to-static", R"(
HloModule m
ENTRY e {
  p = f32[<=4] parameter(0)
  k = s32[] parameter(1)
  s = (f32[4], s32[]) custom-call(p), custom_call_target="PadToStatic"
  g0 = f32[4] get-tuple-element(s), index=0
  ROOT d = f32[<=4] custom-call(g0, k), custom_call_target="SliceToDynamic"
})");
}

constexpr char kLayoutConstraint[] = R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT c = f32[2,3]{0,1} custom-call(p), custom_call_target="LayoutConstraint"
})";

TEST(AlgebraicPart1CustomCall, LayoutConstraintToCopy) {
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("layout-constraint-to-copy", kLayoutConstraint, &r,
              LayoutSensitive(), /*check_outputs=*/false);
  ASSERT_TRUE(Is(root, Opcode::kCopy));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_EQ(root->shape().ToString(), "f32[2,3]{0,1}");
}

TEST(AlgebraicPart1CustomCall, LayoutConstraintLayoutInsensitiveKept) {
  NoRewrite("layout-constraint-to-copy", kLayoutConstraint);
}

constexpr char kConditional[] = R"(
HloModule m
b0 {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
b1 {
  y = f32[] parameter(0)
  ROOT e = f32[] exponential(y)
}
ENTRY e {
  pr = pred[] parameter(0)
  x = f32[] parameter(1)
  y = f32[] parameter(2)
  i = s32[] convert(pr)
  ROOT c = f32[] conditional(i, x, y), branch_computations={b0, b1}
})";

TEST(AlgebraicPart1Conditional, ConvertedPredicate) {
  AlgebraicSimplifierOptions o;
  o.enable_conditional_simplification = true;
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("conditional-converted-predicate", kConditional, &r, o);
  ASSERT_TRUE(Is(root, Opcode::kConditional));
  EXPECT_TRUE(IsParam(root->operand(0), 0));
  EXPECT_TRUE(IsParam(root->operand(1), 2));
  EXPECT_TRUE(IsParam(root->operand(2), 1));
  ASSERT_EQ(root->called_computations().size(), 2u);
  EXPECT_EQ(root->called_computations()[0]->name(), "b1");
  EXPECT_EQ(root->called_computations()[1]->name(), "b0");
}

TEST(AlgebraicPart1Conditional, ConvertedPredicateNeedsOption) {
  NoRewrite("conditional-converted-predicate", kConditional);
}

constexpr char kBarrier[] = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  t = (f32[4], f32[4]) tuple(p, q)
  b = (f32[4], f32[4]) opt-barrier(t)
  g = f32[4] get-tuple-element(b), index=1
  %s
})";

TEST(AlgebraicPart1Barrier, UnreadElementDropped) {
  test::RewriteResult r;
  const Instruction* root =
      Rewrite("optimization-barrier-drop-unused",
              WithValue(kBarrier, "ROOT n = f32[4] negate(g)"), &r);
  ASSERT_TRUE(Is(root, Opcode::kNegate));
  const Instruction* gte = root->operand(0);
  ASSERT_TRUE(Is(gte, Opcode::kGetTupleElement));
  EXPECT_EQ(gte->tuple_index(), 0);
  const Instruction* barrier = gte->operand(0);
  ASSERT_TRUE(Is(barrier, Opcode::kOptimizationBarrier));
  const Instruction* tuple = barrier->operand(0);
  ASSERT_TRUE(Is(tuple, Opcode::kTuple));
  ASSERT_EQ(tuple->operand_count(), 1);
  EXPECT_TRUE(IsParam(tuple->operand(0), 1));
}

TEST(AlgebraicPart1Barrier, AllElementsReadKept) {
  NoRewrite("optimization-barrier-drop-unused",
            WithValue(kBarrier,
                      "h = f32[4] get-tuple-element(b), index=0\n"
                      "  ROOT a = f32[4] add(g, h)"));
}

TEST(AlgebraicPart1Gte, OfTuple) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("get-tuple-element-of-tuple", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = s32[2] parameter(1)
  t = (f32[4], s32[2]) tuple(p, q)
  ROOT g = s32[2] get-tuple-element(t), index=1
})",
                                    &r);
  EXPECT_TRUE(IsParam(root, 1));
}

TEST(AlgebraicPart1Gte, OfParameterKept) {
  NoRewrite("get-tuple-element-of-tuple", R"(
HloModule m
ENTRY e {
  t = (f32[4], s32[2]) parameter(0)
  ROOT g = s32[2] get-tuple-element(t), index=1
})");
}

constexpr char kMap[] = R"(
HloModule m
body {
  x = f32[] parameter(0)
  %s
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT m = f32[4] map(a, b), dimensions={0}, to_apply=body
})";

TEST(AlgebraicPart1Map, ParameterRoot) {
  test::RewriteResult r;
  const Instruction* root = Rewrite(
      "map-parameter-root", WithValue(kMap, "ROOT y = f32[] parameter(1)"), &r);
  EXPECT_TRUE(IsParam(root, 1));
}

TEST(AlgebraicPart1Map, ComputedRootIsNotAParameter) {
  NoRewrite(
      "map-parameter-root",
      WithValue(kMap, "y = f32[] parameter(1)\n  ROOT r = f32[] add(x, y)"));
}

TEST(AlgebraicPart1Map, ConstantRoot) {
  test::RewriteResult r;
  const Instruction* root = Rewrite(
      "map-constant-root",
      WithValue(kMap, "y = f32[] parameter(1)\n  ROOT r = f32[] constant(3)"),
      &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  EXPECT_TRUE(IsConstantValue(root, 3));
  EXPECT_EQ(root->shape().dimensions(), (DimVector{4}));
}

TEST(AlgebraicPart1Map, ComputedRootIsNotAConstant) {
  NoRewrite(
      "map-constant-root",
      WithValue(kMap, "y = f32[] parameter(1)\n  ROOT r = f32[] add(x, y)"));
}

TEST(AlgebraicPart1Map, ElementwiseRoot) {
  test::RewriteResult r;
  const Instruction* root = Rewrite(
      "map-elementwise-root",
      WithValue(kMap,
                "y = f32[] parameter(1)\n  ROOT r = f32[] subtract(y, x)"),
      &r);
  ASSERT_TRUE(Is(root, Opcode::kSubtract));
  EXPECT_TRUE(IsParam(root->operand(0), 1));
  EXPECT_TRUE(IsParam(root->operand(1), 0));
  EXPECT_EQ(root->shape().dimensions(), (DimVector{4}));
}

TEST(AlgebraicPart1Map, TwoOpBodyKept) {
  NoRewrite("map-elementwise-root", WithValue(kMap,
                                              "y = f32[] parameter(1)\n"
                                              "  s = f32[] add(x, y)\n"
                                              "  ROOT r = f32[] negate(s)"));
}

// Rules leave async wrapper computations (one wrapped op) alone.
TEST(AlgebraicPart1Guard, AsyncWrappedCopyKept) {
  NoRewrite("copy-no-op", R"(
HloModule m
async_comp {
  p = f32[8] parameter(0)
  ROOT c = f32[8] copy(p)
}
ENTRY e {
  x = f32[8] parameter(0)
  s = ((f32[8]), f32[8], s32[]) async-start(x), calls=async_comp
  ROOT d = f32[8] async-done(s)
})");
}

// Nor the values passed from an async start to its done.
TEST(AlgebraicPart1Guard, CopyBeforeAsyncDoneKept) {
  NoRewrite("copy-no-op", R"(
HloModule m
async_comp {
  p = f32[2,3] parameter(0)
  ROOT c = f32[3,2] custom-call(p), custom_call_target="foo"
}
ENTRY e {
  x = f32[2,3] parameter(0)
  s = ((f32[2,3]), f32[3,2], s32[]) async-start(x), calls=async_comp
  c = ((f32[2,3]), f32[3,2], s32[]) copy(s)
  ROOT d = f32[3,2] async-done(c)
})");
}

TEST(AlgebraicPart1Guard, TupleOnAsyncPathKept) {
  NoRewrite("get-tuple-element-of-tuple", R"(
HloModule m
async_comp {
  p = f32[2,3] parameter(0)
  ROOT c = f32[3,2] custom-call(p), custom_call_target="foo"
}
ENTRY e {
  x = f32[2,3] parameter(0)
  s = ((f32[2,3]), f32[3,2], s32[]) async-start(x), calls=async_comp
  t = (((f32[2,3]), f32[3,2], s32[])) tuple(s)
  g = ((f32[2,3]), f32[3,2], s32[]) get-tuple-element(t), index=0
  c = ((f32[2,3]), f32[3,2], s32[]) copy(g)
  ROOT d = f32[3,2] async-done(c)
})");
}

// A clone whose rank changes drops the sharding written for the old rank.
TEST(AlgebraicPart1Broadcast, SinkDropsRankedSharding) {
  test::RewriteResult r;
  const Instruction* root = Rewrite("broadcast-sink-elementwise", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={1}
  ROOT n = f32[2,3] negate(b), sharding={devices=[2,1]0,1}
})",
                                    &r);
  ASSERT_TRUE(Is(root, Opcode::kBroadcast));
  const Instruction* n = root->operand(0);
  ASSERT_TRUE(Is(n, Opcode::kNegate));
  EXPECT_EQ(n->shape().rank(), 1);
  EXPECT_FALSE(n->attrs().sharding.has_value());
}

// Every entry of this part's range that has a rule.
TEST(AlgebraicPart1Table, EntriesAndNames) {
  std::vector<AlgebraicRule> rules;
  AddAlgebraicRulesPart1(&rules);
  std::set<int> entries;
  std::set<std::string> names;
  for (const AlgebraicRule& r : rules) {
    EXPECT_GE(r.entry, 1);
    EXPECT_LE(r.entry, 63);
    entries.insert(r.entry);
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
  }
  EXPECT_GE(entries.size(), 52u);
}

}  // namespace
}  // namespace hlogym
