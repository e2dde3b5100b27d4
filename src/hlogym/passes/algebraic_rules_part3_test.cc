// Tests of the AlgebraicSimplifier rules for checklist entries 138-212.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
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

std::unique_ptr<Module> Rewrite(std::string_view rule, std::string_view text,
                                AlgebraicSimplifierOptions options = {},
                                std::optional<double> tolerance = {},
                                bool check_outputs = true) {
  auto pass = OnlyRule(rule, options);
  test::RewriteResult r = ExpectRewrite(*pass, text, check_outputs, tolerance);
  return std::move(r.applied);
}

void NoRewrite(std::string_view rule, std::string_view text,
               AlgebraicSimplifierOptions options = {}) {
  auto pass = OnlyRule(rule, options);
  ExpectNoRewrite(*pass, text);
}

const Instruction* Op(const Instruction* inst, int64_t i) {
  return inst->operand(i);
}

AlgebraicSimplifierOptions LayoutSensitiveOptions() {
  AlgebraicSimplifierOptions o;
  o.is_layout_sensitive = true;
  return o;
}

// Scalar reducers shared by the reduce tests.
constexpr char kReducers[] = R"(
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
mul_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] multiply(a, b)
}
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
)";

std::string WithReducers(std::string_view entry) {
  return std::string(kReducers) + std::string(entry);
}

// ---------------------------------------------------------------------------
// Power.

TEST(AlgebraicPart3Power, ZeroExponentGivesOne) {
  auto m = Rewrite("power-zero", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] power(p, b)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBroadcast);
  EXPECT_TRUE(IsAll(r, 1));
}

TEST(AlgebraicPart3Power, ZeroNoRewriteForOtherExponent) {
  NoRewrite("power-zero", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[4] constant({0, 0, 0, 0.5})
  ROOT r = f32[4] power(p, z)
}
)");
}

TEST(AlgebraicPart3Power, OneExponentGivesBase) {
  auto m = Rewrite("power-one", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p, b)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicPart3Power, OneNoRewriteForTwo) {
  NoRewrite("power-one", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(2)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p, b)
}
)");
}

TEST(AlgebraicPart3Power, OfExp) {
  auto m = Rewrite("power-of-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] exponential(a)
  ROOT r = f32[4] power(x, b)
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kExp);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kMultiply);
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "a");
  EXPECT_EQ(Op(Op(r, 0), 1)->name(), "b");
}

TEST(AlgebraicPart3Power, OfExpNoRewriteWithoutExp) {
  NoRewrite("power-of-exp", R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] log(a)
  ROOT r = f32[4] power(x, b)
}
)");
}

TEST(AlgebraicPart3Power, Two) {
  auto m = Rewrite("power-two", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(2)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p, b)
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kMultiply);
  EXPECT_EQ(Op(r, 0)->name(), "p");
  EXPECT_EQ(Op(r, 1)->name(), "p");
}

TEST(AlgebraicPart3Power, TwoNoRewriteForMixedExponents) {
  NoRewrite("power-two", R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  c = f32[2] constant({2, 3})
  ROOT r = f32[2] power(p, c)
}
)");
}

TEST(AlgebraicPart3Power, Three) {
  auto m = Rewrite("power-three", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(3)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p, b)
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kMultiply);
  EXPECT_EQ(Op(r, 0)->name(), "p");
  ASSERT_EQ(Op(r, 1)->opcode(), Opcode::kMultiply);
  EXPECT_EQ(Op(Op(r, 1), 0)->name(), "p");
}

TEST(AlgebraicPart3Power, ThreeNoRewriteForFour) {
  NoRewrite("power-three", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(4)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p, b)
}
)");
}

TEST(AlgebraicPart3Power, MinusOne) {
  auto m = Rewrite("power-minus-one", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(-1)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p, b)
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kDivide);
  EXPECT_TRUE(IsAll(Op(r, 0), 1));
  EXPECT_EQ(Op(r, 1)->name(), "p");
}

TEST(AlgebraicPart3Power, MinusOneNoRewriteForIntegers) {
  NoRewrite("power-minus-one", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  c = s32[] constant(-1)
  b = s32[4] broadcast(c), dimensions={}
  ROOT r = s32[4] power(p, b)
}
)");
}

TEST(AlgebraicPart3Power, HalfToSqrtForNonNegative) {
  auto m = Rewrite("power-half-to-sqrt", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] abs(p)
  c = f32[] constant(0.5)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(a, b)
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kSqrt);
  EXPECT_EQ(Op(r, 0)->opcode(), Opcode::kAbs);
}

TEST(AlgebraicPart3Power, HalfNoRewriteForPossiblyNegative) {
  NoRewrite("power-half-to-sqrt", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(0.5)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p, b)
}
)");
}

// ---------------------------------------------------------------------------
// Reduce.

TEST(AlgebraicPart3Reduce, ZeroElementInput) {
  auto m = Rewrite("reduce-zero-element", WithReducers(R"(
ENTRY e {
  p = f32[0,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add_f32
}
)"));
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(Op(r, 0)->name(), "z");
}

TEST(AlgebraicPart3Reduce, ZeroElementNoRewriteForNonEmpty) {
  NoRewrite("reduce-zero-element", WithReducers(R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3Reduce, ToReshape) {
  auto m = Rewrite("reduce-to-reshape", WithReducers(R"(
ENTRY e {
  p = f32[1,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add_f32
}
)"));
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReshape);
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

// A constant init that is not the reducer's identity is added in once per
// output element: the reduce is not a reshape then.
TEST(AlgebraicPart3Reduce, ToReshapeOnlyFromTheIdentity) {
  for (const char* reduce :
       {"ROOT r = f32[3] reduce(p, c), dimensions={0}, to_apply=add_f32",
        "ROOT r = f32[3] reduce(p, c), dimensions={0}, to_apply=max_f32"}) {
    NoRewrite("reduce-to-reshape",
              WithReducers(std::string("ENTRY e {\n  p = f32[1,3] "
                                       "parameter(0)\n  c = f32[] "
                                       "constant(2)\n  ") +
                           reduce + "\n}\n"));
  }
  auto m = Rewrite("reduce-to-reshape", WithReducers(R"(
ENTRY e {
  p = f32[1,3] parameter(0)
  one = f32[] constant(1)
  ROOT r = f32[3] reduce(p, one), dimensions={0}, to_apply=mul_f32
}
)"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kReshape);
  // A non-constant init is assumed to be the identity, as XLA does.
  auto q = Rewrite("reduce-to-reshape", WithReducers(R"(
ENTRY e {
  p = f32[1,3] parameter(0)
  i = f32[] parameter(1)
  ROOT r = f32[3] reduce(p, i), dimensions={0}, to_apply=max_f32
}
)"));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(test::Root(*q)->opcode(), Opcode::kReshape);
}

TEST(AlgebraicPart3Reduce, ToReshapeNoRewriteWhenLayoutSensitive) {
  NoRewrite("reduce-to-reshape", WithReducers(R"(
ENTRY e {
  p = f32[1,3]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3]{0} reduce(p, z), dimensions={0}, to_apply=add_f32
}
)"),
            LayoutSensitiveOptions());
}

TEST(AlgebraicPart3Reduce, OfNegate) {
  auto m = Rewrite("reduce-of-negate", WithReducers(R"(
ENTRY e {
  p = f32[4,3] parameter(0)
  n = f32[4,3] negate(p)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(n, z), dimensions={0}, to_apply=add_f32
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kNegate);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kReduce);
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "p");
}

TEST(AlgebraicPart3Reduce, OfNegateNoRewriteForNonZeroInit) {
  NoRewrite("reduce-of-negate", WithReducers(R"(
ENTRY e {
  p = f32[4,3] parameter(0)
  n = f32[4,3] negate(p)
  z = f32[] constant(1)
  ROOT r = f32[3] reduce(n, z), dimensions={0}, to_apply=add_f32
}
)"));
}

constexpr char kReduceOfDot[] = R"(
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  a = f32[16,3] parameter(0)
  b = f32[3,16] parameter(1)
  d = f32[16,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(d, z), dimensions={0}, to_apply=add_f32
}
)";

TEST(AlgebraicPart3Reduce, OfDotWithOption) {
  AlgebraicSimplifierOptions o;
  o.raise_slice_and_reduce_through_dot = true;
  auto m = Rewrite("reduce-of-dot", kReduceOfDot, o, 1e-3);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kDot);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kReduce);
  EXPECT_EQ(Op(r, 0)->dimensions(), (DimVector{0}));
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "a");
  EXPECT_EQ(Op(r, 1)->name(), "b");
  EXPECT_EQ(r->attrs().dot_dnums->lhs_contracting_dimensions,
            (std::vector<int64_t>{0}));
}

TEST(AlgebraicPart3Reduce, OfDotNoRewriteWhenOptionOff) {
  NoRewrite("reduce-of-dot", kReduceOfDot);
}

TEST(AlgebraicPart3Reduce, OfTranspose) {
  auto m = Rewrite("reduce-of-transpose", WithReducers(R"(
ENTRY e {
  p = f32[2,3,4] parameter(0)
  t = f32[4,3,2] transpose(p), dimensions={2,1,0}
  z = f32[] constant(0)
  ROOT r = f32[4,2] reduce(t, z), dimensions={1}, to_apply=add_f32
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kTranspose);
  EXPECT_EQ(r->dimensions(), (DimVector{1, 0}));
  const Instruction* red = Op(r, 0);
  ASSERT_EQ(red->opcode(), Opcode::kReduce);
  EXPECT_EQ(red->dimensions(), (DimVector{1}));
  EXPECT_EQ(Op(red, 0)->name(), "p");
}

TEST(AlgebraicPart3Reduce, OfTransposeNoRewriteWhenSharedAndConditional) {
  AlgebraicSimplifierOptions o;
  o.unconditionally_simplify_reduce_of_transpose_or_reshape = false;
  NoRewrite("reduce-of-transpose", WithReducers(R"(
ENTRY e {
  p = f32[2,3,4] parameter(0)
  t = f32[4,3,2] transpose(p), dimensions={2,1,0}
  z = f32[] constant(0)
  r = f32[4,2] reduce(t, z), dimensions={1}, to_apply=add_f32
  ROOT tu = (f32[4,2], f32[4,3,2]) tuple(r, t)
}
)"),
            o);
}

TEST(AlgebraicPart3Reduce, OfReduce) {
  auto m = Rewrite("reduce-of-reduce", WithReducers(R"(
ENTRY e {
  p = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  a = f32[2,4] reduce(p, z), dimensions={1}, to_apply=add_f32
  ROOT r = f32[4] reduce(a, z), dimensions={0}, to_apply=add_f32
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReduce);
  EXPECT_EQ(r->dimensions(), (DimVector{0, 1}));
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Reduce, OfReduceNoRewriteForDifferentReducers) {
  NoRewrite("reduce-of-reduce", WithReducers(R"(
ENTRY e {
  p = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  a = f32[2,4] reduce(p, z), dimensions={1}, to_apply=add_f32
  ROOT r = f32[4] reduce(a, z), dimensions={0}, to_apply=max_f32
}
)"));
}

TEST(AlgebraicPart3Reduce, OfReshapeKeptDims) {
  auto m = Rewrite("reduce-of-reshape-kept-dims", WithReducers(R"(
ENTRY e {
  p = f32[2,3,5] parameter(0)
  s = f32[6,5] reshape(p)
  z = f32[] constant(0)
  ROOT r = f32[5] reduce(s, z), dimensions={0}, to_apply=add_f32
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReduce);
  EXPECT_EQ(r->dimensions(), (DimVector{0, 1}));
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Reduce, OfReshapeKeptDimsNoRewriteWhenKeptDimMerged) {
  NoRewrite("reduce-of-reshape-kept-dims", WithReducers(R"(
ENTRY e {
  p = f32[5,2,3] parameter(0)
  s = f32[5,6] reshape(p)
  z = f32[] constant(0)
  ROOT r = f32[6] reduce(s, z), dimensions={0}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3Reduce, OfReshapeReducedDims) {
  auto m = Rewrite("reduce-of-reshape-reduced-dims", WithReducers(R"(
ENTRY e {
  p = f32[5,2,3] parameter(0)
  s = f32[5,6] reshape(p)
  z = f32[] constant(0)
  ROOT r = f32[6] reduce(s, z), dimensions={0}, to_apply=add_f32
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReshape);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kReduce);
  EXPECT_EQ(Op(r, 0)->dimensions(), (DimVector{0}));
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "p");
}

TEST(AlgebraicPart3Reduce, OfReshapeReducedDimsNoRewriteWhenReducedMerged) {
  NoRewrite("reduce-of-reshape-reduced-dims", WithReducers(R"(
ENTRY e {
  p = f32[2,3,5] parameter(0)
  s = f32[6,5] reshape(p)
  z = f32[] constant(0)
  ROOT r = f32[5] reduce(s, z), dimensions={0}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3Reduce, OfConcat) {
  auto m = Rewrite("reduce-of-concat", WithReducers(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  c = f32[4,3] concatenate(a, b), dimensions={0}
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(c, z), dimensions={0}, to_apply=add_f32
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kMap);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kReduce);
  ASSERT_EQ(Op(r, 1)->opcode(), Opcode::kReduce);
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "a");
  EXPECT_EQ(Op(Op(r, 1), 0)->name(), "b");
}

TEST(AlgebraicPart3Reduce, OfConcatNoRewriteForUnequalShapes) {
  NoRewrite("reduce-of-concat", WithReducers(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[1,3] parameter(1)
  c = f32[3,3] concatenate(a, b), dimensions={0}
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(c, z), dimensions={0}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3Reduce, OfBroadcastScalar) {
  auto m = Rewrite("reduce-of-broadcast-scalar", WithReducers(R"(
ENTRY e {
  x = f32[] parameter(0)
  i = f32[] parameter(1)
  b = f32[3,4] broadcast(x), dimensions={}
  ROOT r = f32[] reduce(b, i), dimensions={0,1}, to_apply=max_f32
}
)"));
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kMaximum);
  EXPECT_EQ(Op(r, 0)->name(), "x");
  EXPECT_EQ(Op(r, 1)->name(), "i");
}

TEST(AlgebraicPart3Reduce, OfBroadcastScalarNoRewriteForAdd) {
  NoRewrite("reduce-of-broadcast-scalar", WithReducers(R"(
ENTRY e {
  x = f32[] parameter(0)
  i = f32[] parameter(1)
  b = f32[3,4] broadcast(x), dimensions={}
  ROOT r = f32[] reduce(b, i), dimensions={0,1}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3Reduce, AddOfBroadcast) {
  auto m = Rewrite("reduce-add-of-broadcast", WithReducers(R"(
ENTRY e {
  x = f32[3] parameter(0)
  i = f32[] parameter(1)
  b = f32[4,3,5] broadcast(x), dimensions={1}
  ROOT r = f32[3,5] reduce(b, i), dimensions={0}, to_apply=add_f32
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(r->dimensions(), (DimVector{0}));
  const Instruction* sum = Op(r, 0);
  ASSERT_EQ(sum->opcode(), Opcode::kAdd);
  ASSERT_EQ(Op(sum, 1)->opcode(), Opcode::kMultiply);
  EXPECT_EQ(Op(Op(sum, 1), 0)->name(), "x");
  EXPECT_TRUE(IsAll(Op(Op(sum, 1), 1), 4));
}

TEST(AlgebraicPart3Reduce, AddOfBroadcastNoRewriteWhenOperandDimReduced) {
  NoRewrite("reduce-add-of-broadcast", WithReducers(R"(
ENTRY e {
  x = f32[3] parameter(0)
  i = f32[] parameter(1)
  b = f32[4,3] broadcast(x), dimensions={1}
  ROOT r = f32[4] reduce(b, i), dimensions={1}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3Reduce, PrecisionNoOp) {
  AlgebraicSimplifierOptions o;
  o.enable_remove_no_op_reduce_precision = true;
  auto m = Rewrite("reduce-precision-no-op", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(p), exponent_bits=8, mantissa_bits=23
}
)",
                   o);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicPart3Reduce, PrecisionNoOpNoRewriteWhenOptionOff) {
  NoRewrite("reduce-precision-no-op", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(p), exponent_bits=8, mantissa_bits=23
}
)");
}

TEST(AlgebraicPart3Reduce, PrecisionNoOpNoRewriteWhenNarrowing) {
  AlgebraicSimplifierOptions o;
  o.enable_remove_no_op_reduce_precision = true;
  NoRewrite("reduce-precision-no-op", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(p), exponent_bits=8, mantissa_bits=7
}
)",
            o);
}

// ---------------------------------------------------------------------------
// ReduceWindow.

TEST(AlgebraicPart3ReduceWindow, ZeroElement) {
  auto m = Rewrite("reduce-window-zero-element", WithReducers(R"(
ENTRY e {
  p = f32[0,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[0,3] reduce-window(p, z), window={size=1x2}, to_apply=add_f32
}
)"));
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(Op(r, 0)->name(), "z");
}

TEST(AlgebraicPart3ReduceWindow, ZeroElementNoRewriteForNonEmpty) {
  NoRewrite("reduce-window-zero-element", WithReducers(R"(
ENTRY e {
  p = f32[2,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,3] reduce-window(p, z), window={size=1x2}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3ReduceWindow, Scalar) {
  auto m = Rewrite("reduce-window-scalar", WithReducers(R"(
ENTRY e {
  p = f32[] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce-window(p, z), to_apply=add_f32
}
)"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicPart3ReduceWindow, ScalarNoRewriteForArray) {
  NoRewrite("reduce-window-scalar", WithReducers(R"(
ENTRY e {
  p = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(p, z), window={size=1}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3ReduceWindow, TrivialWithPadding) {
  auto m = Rewrite("reduce-window-trivial", WithReducers(R"(
ENTRY e {
  p = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5] reduce-window(p, z), window={size=1 pad=1_1}, to_apply=add_f32
}
)"));
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kPad);
  EXPECT_EQ(Op(r, 1)->name(), "z");
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kAdd);
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "p");
  EXPECT_EQ(Op(Op(r, 0), 1)->opcode(), Opcode::kBroadcast);
}

TEST(AlgebraicPart3ReduceWindow, TrivialNoRewriteForWindowOfTwo) {
  NoRewrite("reduce-window-trivial", WithReducers(R"(
ENTRY e {
  p = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce-window(p, z), window={size=2}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3ReduceWindow, ToReduce) {
  auto m = Rewrite("reduce-window-to-reduce", WithReducers(R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,1] reduce-window(p, z), window={size=1x3}, to_apply=add_f32
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReshape);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kReduce);
  EXPECT_EQ(Op(r, 0)->dimensions(), (DimVector{1}));
}

TEST(AlgebraicPart3ReduceWindow, ToReduceNoRewriteForPartialWindow) {
  NoRewrite("reduce-window-to-reduce", WithReducers(R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,2] reduce-window(p, z), window={size=1x2}, to_apply=add_f32
}
)"));
}

// ---------------------------------------------------------------------------
// Remainder.

TEST(AlgebraicPart3Remainder, OfRemainder) {
  auto m = Rewrite("remainder-of-remainder", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  c = s32[] constant(3)
  b = s32[4] broadcast(c), dimensions={}
  r1 = s32[4] remainder(a, b)
  ROOT r = s32[4] remainder(r1, b)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kRemainder);
  EXPECT_EQ(Op(r, 0)->name(), "a");
}

TEST(AlgebraicPart3Remainder, OfRemainderNoRewriteForOtherDivisor) {
  NoRewrite("remainder-of-remainder", R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  c = s32[4] parameter(2)
  r1 = s32[4] remainder(a, b)
  ROOT r = s32[4] remainder(r1, c)
}
)");
}

TEST(AlgebraicPart3Remainder, PowerOfTwoUnsigned) {
  auto m = Rewrite("remainder-power-of-two", R"(
HloModule m
ENTRY e {
  a = u32[4] parameter(0)
  c = u32[] constant(4)
  b = u32[4] broadcast(c), dimensions={}
  ROOT r = u32[4] remainder(a, b)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kAnd);
  EXPECT_EQ(Op(r, 0)->name(), "a");
  EXPECT_EQ(Op(r, 1)->opcode(), Opcode::kSubtract);
}

TEST(AlgebraicPart3Remainder, PowerOfTwoSigned) {
  auto m = Rewrite("remainder-power-of-two", R"(
HloModule m
ENTRY e {
  a = s32[16] parameter(0)
  c = s32[] constant(2)
  b = s32[16] broadcast(c), dimensions={}
  ROOT r = s32[16] remainder(a, b)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kSelect);
  EXPECT_EQ(Op(r, 0)->opcode(), Opcode::kCompare);
  EXPECT_EQ(Op(r, 1)->opcode(), Opcode::kNegate);
  EXPECT_EQ(Op(r, 2)->opcode(), Opcode::kAnd);
}

TEST(AlgebraicPart3Remainder, PowerOfTwoNoRewriteForThree) {
  NoRewrite("remainder-power-of-two", R"(
HloModule m
ENTRY e {
  a = u32[4] parameter(0)
  c = u32[] constant(3)
  b = u32[4] broadcast(c), dimensions={}
  ROOT r = u32[4] remainder(a, b)
}
)");
}

TEST(AlgebraicPart3Remainder, OfIota) {
  auto m = Rewrite("remainder-of-iota", R"(
HloModule m
ENTRY e {
  i = s32[4,5] iota(), iota_dimension=1
  c = s32[] constant(5)
  b = s32[4,5] broadcast(c), dimensions={}
  ROOT r = s32[4,5] remainder(i, b)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kIota);
}

TEST(AlgebraicPart3Remainder, OfIotaNoRewriteForSmallModulus) {
  NoRewrite("remainder-of-iota", R"(
HloModule m
ENTRY e {
  i = s32[4,5] iota(), iota_dimension=1
  c = s32[] constant(4)
  b = s32[4,5] broadcast(c), dimensions={}
  ROOT r = s32[4,5] remainder(i, b)
}
)");
}

// ---------------------------------------------------------------------------
// Reshape.

TEST(AlgebraicPart3Reshape, ZeroElement) {
  auto m = Rewrite("reshape-zero-element", R"(
HloModule m
ENTRY e {
  p = f32[0,4] parameter(0)
  ROOT r = f32[4,0] reshape(p)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kConstant);
  EXPECT_EQ(r->shape().dimensions(), (DimVector{4, 0}));
}

TEST(AlgebraicPart3Reshape, ZeroElementNoRewriteForNonEmpty) {
  NoRewrite("reshape-zero-element", R"(
HloModule m
ENTRY e {
  p = f32[2,4] parameter(0)
  ROOT r = f32[4,2] reshape(p)
}
)");
}

TEST(AlgebraicPart3Reshape, NoOp) {
  auto m = Rewrite("reshape-no-op", R"(
HloModule m
ENTRY e {
  p = f32[2,4] parameter(0)
  ROOT r = f32[2,4] reshape(p)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicPart3Reshape, NoOpNoRewriteForRealReshape) {
  NoRewrite("reshape-no-op", R"(
HloModule m
ENTRY e {
  p = f32[2,4] parameter(0)
  ROOT r = f32[8] reshape(p)
}
)");
}

TEST(AlgebraicPart3Reshape, OfReshape) {
  auto m = Rewrite("reshape-of-reshape", R"(
HloModule m
ENTRY e {
  p = f32[2,6] parameter(0)
  a = f32[3,4] reshape(p)
  ROOT r = f32[12] reshape(a)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReshape);
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Reshape, OfReshapeNoRewriteForOtherOperand) {
  NoRewrite("reshape-of-reshape", R"(
HloModule m
ENTRY e {
  p = f32[2,6] parameter(0)
  a = f32[2,6] negate(p)
  ROOT r = f32[12] reshape(a)
}
)");
}

constexpr char kReshapeOfRng[] = R"(
HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  u = f32[6] rng(lo, hi), distribution=rng_uniform
  ROOT r = f32[2,3] reshape(u)
}
)";

// Random values cannot be compared, and a dry-mode alternative would leave
// a side-effecting rng behind: apply mode only.
TEST(AlgebraicPart3Reshape, OfRng) {
  auto m = test::ParseAndVerify(kReshapeOfRng);
  ASSERT_NE(m, nullptr);
  auto pass = OnlyRule("reshape-of-rng");
  absl::StatusOr<bool> changed = pass->Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(VerifyModule(*m).ok());
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kRng);
  EXPECT_EQ(r->shape().dimensions(), (DimVector{2, 3}));
  EXPECT_EQ(m->entry_computation()->instruction_count(), 3);
}

TEST(AlgebraicPart3Reshape, OfRngNotOfferedInDryMode) {
  auto m = test::ParseAndVerify(kReshapeOfRng);
  ASSERT_NE(m, nullptr);
  auto pass = OnlyRule("reshape-of-rng");
  absl::StatusOr<AugmentStats> stats = pass->RunDry(m.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->alternatives, 0);
}

TEST(AlgebraicPart3Reshape, OfRngNoRewriteWhenShared) {
  NoRewrite("reshape-of-rng", R"(
HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  u = f32[6] rng(lo, hi), distribution=rng_uniform
  r = f32[2,3] reshape(u)
  ROOT t = (f32[2,3], f32[6]) tuple(r, u)
}
)");
}

TEST(AlgebraicPart3Reshape, ChainIdentity) {
  auto m = Rewrite("reshape-chain-identity", R"(
HloModule m
ENTRY e {
  p = f32[2,6] parameter(0)
  a = f32[12] reshape(p)
  b = f32[3,4] reshape(a)
  ROOT r = f32[2,6] reshape(b)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicPart3Reshape, ChainIdentityNoRewriteForNewShape) {
  NoRewrite("reshape-chain-identity", R"(
HloModule m
ENTRY e {
  p = f32[2,6] parameter(0)
  a = f32[12] reshape(p)
  ROOT r = f32[6,2] reshape(a)
}
)");
}

TEST(AlgebraicPart3Reshape, OfBroadcast) {
  auto m = Rewrite("reshape-of-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[5] parameter(0)
  b = f32[2,3,5] broadcast(p), dimensions={2}
  ROOT r = f32[6,5] reshape(b)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(r->dimensions(), (DimVector{1}));
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Reshape, OfBroadcastNoRewriteWhenOperandDimSplit) {
  NoRewrite("reshape-of-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[6] parameter(0)
  b = f32[5,6] broadcast(p), dimensions={1}
  ROOT r = f32[5,2,3] reshape(b)
}
)");
}

TEST(AlgebraicPart3Reshape, OfIota) {
  auto m = Rewrite("reshape-of-iota", R"(
HloModule m
ENTRY e {
  i = s32[2,3,5] iota(), iota_dimension=2
  ROOT r = s32[6,5] reshape(i)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kIota);
  EXPECT_EQ(r->iota_dimension(), 1);
  EXPECT_EQ(r->shape().dimensions(), (DimVector{6, 5}));
}

TEST(AlgebraicPart3Reshape, OfIotaNoRewriteWhenIotaDimMerged) {
  NoRewrite("reshape-of-iota", R"(
HloModule m
ENTRY e {
  i = s32[2,3,5] iota(), iota_dimension=1
  ROOT r = s32[6,5] reshape(i)
}
)");
}

TEST(AlgebraicPart3Reshape, OfDynamicUpdateSlice) {
  auto m = Rewrite("reshape-of-dynamic-update-slice", R"(
HloModule m
ENTRY e {
  xs = f32[1,6] parameter(0)
  x = f32[1,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  d = f32[1,6] dynamic-update-slice(xs, x, i, j)
  ROOT r = f32[6,1] reshape(d)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kDynamicUpdateSlice);
  ASSERT_EQ(r->operand_count(), 4);
  EXPECT_EQ(Op(r, 0)->opcode(), Opcode::kReshape);
  EXPECT_EQ(Op(r, 1)->opcode(), Opcode::kReshape);
  EXPECT_EQ(Op(r, 1)->shape().dimensions(), (DimVector{2, 1}));
  EXPECT_EQ(Op(r, 2)->name(), "j");
  EXPECT_TRUE(IsAll(Op(r, 3), 0));
}

TEST(AlgebraicPart3Reshape, OfDynamicUpdateSliceNoRewriteForRealReshape) {
  NoRewrite("reshape-of-dynamic-update-slice", R"(
HloModule m
ENTRY e {
  xs = f32[2,6] parameter(0)
  x = f32[1,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  d = f32[2,6] dynamic-update-slice(xs, x, i, j)
  ROOT r = f32[12] reshape(d)
}
)");
}

// ---------------------------------------------------------------------------
// Reverse.

TEST(AlgebraicPart3Reverse, Degenerate) {
  auto m = Rewrite("reverse-degenerate", R"(
HloModule m
ENTRY e {
  p = f32[1,4] parameter(0)
  ROOT r = f32[1,4] reverse(p), dimensions={0}
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicPart3Reverse, DegenerateNoRewriteForRealDim) {
  NoRewrite("reverse-degenerate", R"(
HloModule m
ENTRY e {
  p = f32[1,4] parameter(0)
  ROOT r = f32[1,4] reverse(p), dimensions={0,1}
}
)");
}

TEST(AlgebraicPart3Reverse, OfReverse) {
  auto m = Rewrite("reverse-of-reverse", R"(
HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  a = f32[2,3,4] reverse(p), dimensions={0,1}
  ROOT r = f32[2,3,4] reverse(a), dimensions={1,2}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReverse);
  EXPECT_EQ(r->dimensions(), (DimVector{0, 2}));
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Reverse, OfReverseCancels) {
  auto m = Rewrite("reverse-of-reverse", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  a = f32[2,3] reverse(p), dimensions={1}
  ROOT r = f32[2,3] reverse(a), dimensions={1}
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicPart3Reverse, OfReverseNoRewriteWhenLayoutSensitive) {
  NoRewrite("reverse-of-reverse", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  a = f32[2,3]{1,0} reverse(p), dimensions={1}
  ROOT r = f32[2,3]{1,0} reverse(a), dimensions={1}
}
)",
            LayoutSensitiveOptions());
}

TEST(AlgebraicPart3Reverse, OfBinaryWithBroadcast) {
  auto m = Rewrite("reverse-of-binary-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  s = f32[] parameter(1)
  b = f32[4] broadcast(s), dimensions={}
  a = f32[4] subtract(b, p)
  ROOT r = f32[4] reverse(a), dimensions={0}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kSubtract);
  EXPECT_EQ(Op(r, 0)->opcode(), Opcode::kBroadcast);
  ASSERT_EQ(Op(r, 1)->opcode(), Opcode::kReverse);
  EXPECT_EQ(Op(Op(r, 1), 0)->name(), "p");
}

TEST(AlgebraicPart3Reverse, OfBinaryNoRewriteForCompare) {
  NoRewrite("reverse-of-binary-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  s = f32[] parameter(1)
  b = f32[4] broadcast(s), dimensions={}
  a = pred[4] compare(b, p), direction=LT
  ROOT r = pred[4] reverse(a), dimensions={0}
}
)");
}

TEST(AlgebraicPart3Reverse, OfReshape) {
  auto m = Rewrite("reverse-of-reshape", R"(
HloModule m
ENTRY e {
  p = f32[3,4] parameter(0)
  a = f32[3,1,4] reshape(p)
  ROOT r = f32[3,1,4] reverse(a), dimensions={1,2}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReshape);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kReverse);
  EXPECT_EQ(Op(r, 0)->dimensions(), (DimVector{1}));
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "p");
}

TEST(AlgebraicPart3Reverse, OfReshapeNoRewriteForRealReshape) {
  NoRewrite("reverse-of-reshape", R"(
HloModule m
ENTRY e {
  p = f32[3,4] parameter(0)
  a = f32[2,6] reshape(p)
  ROOT r = f32[2,6] reverse(a), dimensions={1}
}
)");
}

// ---------------------------------------------------------------------------
// Select.

TEST(AlgebraicPart3Select, SameBranches) {
  auto m = Rewrite("select-same-branches", R"(
HloModule m
ENTRY e {
  c = pred[4] parameter(0)
  p = f32[4] parameter(1)
  ROOT r = f32[4] select(c, p, p)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->name(), "p");
}

TEST(AlgebraicPart3Select, SameBranchesNoRewriteForDifferentBranches) {
  NoRewrite("select-same-branches", R"(
HloModule m
ENTRY e {
  c = pred[4] parameter(0)
  p = f32[4] parameter(1)
  q = f32[4] parameter(2)
  ROOT r = f32[4] select(c, p, q)
}
)");
}

TEST(AlgebraicPart3Select, True) {
  auto m = Rewrite("select-true", R"(
HloModule m
ENTRY e {
  t = pred[] constant(true)
  c = pred[4] broadcast(t), dimensions={}
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] select(c, p, q)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->name(), "p");
}

TEST(AlgebraicPart3Select, TrueNoRewriteForMixedPredicate) {
  NoRewrite("select-true", R"(
HloModule m
ENTRY e {
  c = pred[2] constant({true, false})
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  ROOT r = f32[2] select(c, p, q)
}
)");
}

TEST(AlgebraicPart3Select, False) {
  auto m = Rewrite("select-false", R"(
HloModule m
ENTRY e {
  c = pred[2] constant({false, false})
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  ROOT r = f32[2] select(c, p, q)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->name(), "q");
}

TEST(AlgebraicPart3Select, FalseNoRewriteForParameterPredicate) {
  NoRewrite("select-false", R"(
HloModule m
ENTRY e {
  c = pred[2] parameter(2)
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  ROOT r = f32[2] select(c, p, q)
}
)");
}

TEST(AlgebraicPart3Select, NotPredicate) {
  auto m = Rewrite("select-not-predicate", R"(
HloModule m
ENTRY e {
  c = pred[2] parameter(0)
  n = pred[2] not(c)
  p = f32[2] parameter(1)
  q = f32[2] parameter(2)
  ROOT r = f32[2] select(n, p, q)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kSelect);
  EXPECT_EQ(Op(r, 0)->name(), "c");
  EXPECT_EQ(Op(r, 1)->name(), "q");
  EXPECT_EQ(Op(r, 2)->name(), "p");
}

TEST(AlgebraicPart3Select, NotPredicateNoRewriteWithoutNot) {
  NoRewrite("select-not-predicate", R"(
HloModule m
ENTRY e {
  c = pred[2] parameter(0)
  p = f32[2] parameter(1)
  q = f32[2] parameter(2)
  ROOT r = f32[2] select(c, p, q)
}
)");
}

TEST(AlgebraicPart3Select, PredTrueFalse) {
  auto m = Rewrite("select-pred-true-false", R"(
HloModule m
ENTRY e {
  c = pred[2] parameter(0)
  t = pred[2] constant({true, true})
  f = pred[2] constant({false, false})
  ROOT r = pred[2] select(c, t, f)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->name(), "c");
}

TEST(AlgebraicPart3Select, PredTrueFalseNoRewriteForMixedBranch) {
  NoRewrite("select-pred-true-false", R"(
HloModule m
ENTRY e {
  c = pred[2] parameter(0)
  t = pred[2] constant({true, false})
  f = pred[2] constant({false, false})
  ROOT r = pred[2] select(c, t, f)
}
)");
}

TEST(AlgebraicPart3Select, PredFalseTrue) {
  auto m = Rewrite("select-pred-false-true", R"(
HloModule m
ENTRY e {
  c = pred[2] parameter(0)
  t = pred[2] constant({true, true})
  f = pred[2] constant({false, false})
  ROOT r = pred[2] select(c, f, t)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kNot);
  EXPECT_EQ(Op(r, 0)->name(), "c");
}

TEST(AlgebraicPart3Select, PredFalseTrueNoRewriteForNonPred) {
  NoRewrite("select-pred-false-true", R"(
HloModule m
ENTRY e {
  c = pred[2] parameter(0)
  t = s32[2] constant({1, 1})
  f = s32[2] constant({0, 0})
  ROOT r = s32[2] select(c, f, t)
}
)");
}

TEST(AlgebraicPart3Select, PredCompareGreaterIsOr) {
  auto m = Rewrite("select-pred-compare", R"(
HloModule m
ENTRY e {
  a = pred[8] parameter(0)
  b = pred[8] parameter(1)
  c = pred[8] compare(a, b), direction=GT
  ROOT r = pred[8] select(c, a, b)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kOr);
  EXPECT_EQ(Op(r, 0)->name(), "a");
  EXPECT_EQ(Op(r, 1)->name(), "b");
}

TEST(AlgebraicPart3Select, PredCompareEqualIsSecond) {
  auto m = Rewrite("select-pred-compare", R"(
HloModule m
ENTRY e {
  a = pred[8] parameter(0)
  b = pred[8] parameter(1)
  c = pred[8] compare(a, b), direction=EQ
  ROOT r = pred[8] select(c, a, b)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->name(), "b");
}

TEST(AlgebraicPart3Select, PredCompareNoRewriteForSwappedOperands) {
  NoRewrite("select-pred-compare", R"(
HloModule m
ENTRY e {
  a = pred[8] parameter(0)
  b = pred[8] parameter(1)
  c = pred[8] compare(a, b), direction=GT
  ROOT r = pred[8] select(c, b, a)
}
)");
}

// ---------------------------------------------------------------------------
// Slice.

TEST(AlgebraicPart3Slice, Full) {
  auto m = Rewrite("slice-full", R"(
HloModule m
ENTRY e {
  p = f32[3,4] parameter(0)
  ROOT r = f32[3,4] slice(p), slice={[0:3], [0:4]}
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicPart3Slice, FullNoRewriteForPartial) {
  NoRewrite("slice-full", R"(
HloModule m
ENTRY e {
  p = f32[3,4] parameter(0)
  ROOT r = f32[3,3] slice(p), slice={[0:3], [1:4]}
}
)");
}

constexpr char kSliceOfPad[] = R"(
HloModule m
ENTRY e {
  p = f32[3,4] parameter(0)
  v = f32[] parameter(1)
  d = f32[5,8] pad(p, v), padding=1_1x2_2
  ROOT r = f32[%s] slice(d), slice={%s}
}
)";

std::string SliceOfPad(std::string_view dims, std::string_view slice) {
  std::string text = kSliceOfPad;
  text.replace(text.find("%s"), 2, dims);
  text.replace(text.find("%s"), 2, slice);
  return text;
}

TEST(AlgebraicPart3Slice, OfPadInPadding) {
  auto m = Rewrite("slice-of-pad", SliceOfPad("5,2", "[0:5], [6:8]"));
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(Op(r, 0)->name(), "v");
}

TEST(AlgebraicPart3Slice, OfPadExact) {
  auto m = Rewrite("slice-of-pad", SliceOfPad("3,4", "[1:4], [2:6]"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->name(), "p");
}

TEST(AlgebraicPart3Slice, OfPadInside) {
  auto m = Rewrite("slice-of-pad", SliceOfPad("2,2", "[2:4], [3:5]"));
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kSlice);
  EXPECT_EQ(Op(r, 0)->name(), "p");
  EXPECT_EQ(r->attrs().slice[0].start, 1);
  EXPECT_EQ(r->attrs().slice[1].start, 1);
  EXPECT_EQ(r->attrs().slice[1].limit, 3);
}

TEST(AlgebraicPart3Slice, OfPadNoRewriteAcrossEdge) {
  NoRewrite("slice-of-pad", SliceOfPad("2,2", "[0:2], [3:5]"));
}

TEST(AlgebraicPart3Slice, OfSlice) {
  auto m = Rewrite("slice-of-slice", R"(
HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  a = f32[6] slice(p), slice={[2:8]}
  ROOT r = f32[3] slice(a), slice={[1:4]}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kSlice);
  EXPECT_EQ(Op(r, 0)->name(), "p");
  EXPECT_EQ(r->attrs().slice[0].start, 3);
  EXPECT_EQ(r->attrs().slice[0].limit, 6);
}

TEST(AlgebraicPart3Slice, OfSliceNoRewriteWhenStrided) {
  NoRewrite("slice-of-slice", R"(
HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  a = f32[3] slice(p), slice={[2:8:2]}
  ROOT r = f32[2] slice(a), slice={[1:3]}
}
)");
}

TEST(AlgebraicPart3Slice, OfBroadcast) {
  auto m = Rewrite("slice-of-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[6] parameter(0)
  b = f32[4,6] broadcast(p), dimensions={1}
  ROOT r = f32[2,3] slice(b), slice={[1:3], [2:5]}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(r->dimensions(), (DimVector{1}));
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kSlice);
  EXPECT_EQ(Op(r, 0)->attrs().slice[0].start, 2);
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "p");
}

TEST(AlgebraicPart3Slice, OfBroadcastNoRewriteForOtherOperand) {
  NoRewrite("slice-of-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[4,6] parameter(0)
  b = f32[4,6] negate(p)
  ROOT r = f32[2,3] slice(b), slice={[1:3], [2:5]}
}
)");
}

TEST(AlgebraicPart3Slice, OfConcatWithinOneOperand) {
  auto m = Rewrite("slice-of-concat", R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[4,2] parameter(1)
  c = f32[7,2] concatenate(a, b), dimensions={0}
  ROOT r = f32[2,2] slice(c), slice={[4:6], [0:2]}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kSlice);
  EXPECT_EQ(Op(r, 0)->name(), "b");
  EXPECT_EQ(r->attrs().slice[0].start, 1);
  EXPECT_EQ(r->attrs().slice[0].limit, 3);
}

TEST(AlgebraicPart3Slice, OfConcatExactOperand) {
  auto m = Rewrite("slice-of-concat", R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[4,2] parameter(1)
  c = f32[7,2] concatenate(a, b), dimensions={0}
  ROOT r = f32[3,2] slice(c), slice={[0:3], [0:2]}
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->name(), "a");
}

TEST(AlgebraicPart3Slice, OfConcatSubset) {
  auto m = Rewrite("slice-of-concat", R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[4] parameter(1)
  d = f32[2] parameter(2)
  c = f32[9] concatenate(a, b, d), dimensions={0}
  ROOT r = f32[5] slice(c), slice={[1:6]}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kSlice);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kConcatenate);
  EXPECT_EQ(Op(r, 0)->operand_count(), 2);
  EXPECT_EQ(r->attrs().slice[0].start, 1);
}

TEST(AlgebraicPart3Slice, OfConcatNoRewriteWhenAllOperandsCovered) {
  NoRewrite("slice-of-concat", R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[4] parameter(1)
  c = f32[7] concatenate(a, b), dimensions={0}
  ROOT r = f32[5] slice(c), slice={[1:6]}
}
)");
}

TEST(AlgebraicPart3Slice, OfReshapePrefix) {
  auto m = Rewrite("slice-of-reshape", R"(
HloModule m
ENTRY e {
  p = f32[6,4] parameter(0)
  s = f32[8,3] reshape(p)
  ROOT r = f32[4,3] slice(s), slice={[0:4], [0:3]}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReshape);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kSlice);
  EXPECT_EQ(Op(r, 0)->attrs().slice[0].limit, 3);
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "p");
}

TEST(AlgebraicPart3Slice, OfReshapeNoRewriteWhenPrefixDoesNotFactor) {
  NoRewrite("slice-of-reshape", R"(
HloModule m
ENTRY e {
  p = f32[6,4] parameter(0)
  s = f32[8,3] reshape(p)
  ROOT r = f32[3,3] slice(s), slice={[0:3], [0:3]}
}
)");
}

constexpr char kSliceOfDot[] = R"(
HloModule m
ENTRY e {
  a = f32[2,8,3] parameter(0)
  b = f32[2,3,6] parameter(1)
  d = f32[2,8,6] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT r = f32[1,2,3] slice(d), slice={[1:2], [2:4], [0:6:2]}
}
)";

TEST(AlgebraicPart3Slice, OfDotWithOption) {
  AlgebraicSimplifierOptions o;
  o.raise_slice_and_reduce_through_dot = true;
  auto m = Rewrite("slice-of-dot", kSliceOfDot, o, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kDot);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kSlice);
  ASSERT_EQ(Op(r, 1)->opcode(), Opcode::kSlice);
  EXPECT_EQ(Op(r, 0)->shape().dimensions(), (DimVector{1, 2, 3}));
  EXPECT_EQ(Op(r, 1)->shape().dimensions(), (DimVector{1, 3, 3}));
  EXPECT_EQ(Op(Op(r, 1), 0)->name(), "b");
  EXPECT_EQ(Op(r, 1)->attrs().slice[2].stride, 2);
}

TEST(AlgebraicPart3Slice, OfDotNoRewriteWhenOptionOff) {
  NoRewrite("slice-of-dot", kSliceOfDot);
}

TEST(AlgebraicPart3Slice, OfReverse) {
  auto m = Rewrite("slice-of-reverse", R"(
HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  v = f32[10] reverse(p), dimensions={0}
  ROOT r = f32[3] slice(v), slice={[1:8:3]}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReverse);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kSlice);
  EXPECT_EQ(Op(r, 0)->attrs().slice[0].start, 2);
  EXPECT_EQ(Op(r, 0)->attrs().slice[0].limit, 9);
  EXPECT_EQ(Op(r, 0)->attrs().slice[0].stride, 3);
}

TEST(AlgebraicPart3Slice, OfReverseNoRewriteWithoutReverse) {
  NoRewrite("slice-of-reverse", R"(
HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  ROOT r = f32[3] slice(p), slice={[1:8:3]}
}
)");
}

TEST(AlgebraicPart3Slice, SingleElementStride) {
  auto m = Rewrite("slice-single-element-stride", R"(
HloModule m
ENTRY e {
  p = f32[10,4] parameter(0)
  ROOT r = f32[1,2] slice(p), slice={[3:10:8], [0:4:2]}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kSlice);
  EXPECT_EQ(r->attrs().slice[0].start, 3);
  EXPECT_EQ(r->attrs().slice[0].limit, 4);
  EXPECT_EQ(r->attrs().slice[0].stride, 1);
  EXPECT_EQ(r->attrs().slice[1].stride, 2);
}

TEST(AlgebraicPart3Slice, SingleElementStrideNoRewriteForTwoElements) {
  NoRewrite("slice-single-element-stride", R"(
HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  ROOT r = f32[2] slice(p), slice={[3:10:4]}
}
)");
}

// ---------------------------------------------------------------------------
// Sort, Subtract.

constexpr char kLess[] = R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
)";

TEST(AlgebraicPart3Sort, TrivialDimension) {
  auto m = Rewrite("sort-trivial", std::string(kLess) + R"(
ENTRY e {
  p = f32[4,1] parameter(0)
  ROOT s = f32[4,1] sort(p), dimensions={1}, to_apply=lt
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kParameter);
}

TEST(AlgebraicPart3Sort, TrivialNoRewriteForRealSort) {
  NoRewrite("sort-trivial", std::string(kLess) + R"(
ENTRY e {
  p = f32[4,2] parameter(0)
  ROOT s = f32[4,2] sort(p), dimensions={1}, to_apply=lt
}
)");
}

TEST(AlgebraicPart3Subtract, Zero) {
  auto m = Rewrite("subtract-zero", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] subtract(p, b)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->name(), "p");
}

TEST(AlgebraicPart3Subtract, ZeroNoRewriteForZeroMinusA) {
  NoRewrite("subtract-zero", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] subtract(b, p)
}
)");
}

TEST(AlgebraicPart3Subtract, SameIntegral) {
  auto m = Rewrite("subtract-same", R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  ROOT r = s32[4] subtract(p, p)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(IsAll(test::Root(*m), 0));
}

TEST(AlgebraicPart3Subtract, SameNoRewriteForFloatWithoutFastMath) {
  NoRewrite("subtract-same", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] subtract(p, p)
}
)");
}

TEST(AlgebraicPart3Subtract, ConstantToAdd) {
  auto m = Rewrite("subtract-constant-to-add", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(1.5)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] subtract(p, b)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kAdd);
  EXPECT_EQ(Op(r, 0)->name(), "p");
  ASSERT_EQ(Op(r, 1)->opcode(), Opcode::kNegate);
  EXPECT_EQ(Op(Op(r, 1), 0)->name(), "b");
}

TEST(AlgebraicPart3Subtract, ConstantToAddNoRewriteForParameter) {
  NoRewrite("subtract-constant-to-add", R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] subtract(p, q)
}
)");
}

// ---------------------------------------------------------------------------
// Transpose.

TEST(AlgebraicPart3Transpose, Identity) {
  auto m = Rewrite("transpose-identity", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] transpose(p), dimensions={0,1}
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::Root(*m)->name(), "p");
}

TEST(AlgebraicPart3Transpose, IdentityNoRewriteForSwap) {
  NoRewrite("transpose-identity", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT r = f32[3,2] transpose(p), dimensions={1,0}
}
)");
}

TEST(AlgebraicPart3Transpose, OfTranspose) {
  auto m = Rewrite("transpose-of-transpose", R"(
HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  a = f32[3,4,2] transpose(p), dimensions={1,2,0}
  ROOT r = f32[4,3,2] transpose(a), dimensions={1,0,2}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kTranspose);
  EXPECT_EQ(r->dimensions(), (DimVector{2, 1, 0}));
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Transpose, OfTransposeNoRewriteForSingle) {
  NoRewrite("transpose-of-transpose", R"(
HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  ROOT r = f32[3,4,2] transpose(p), dimensions={1,2,0}
}
)");
}

TEST(AlgebraicPart3Transpose, OfDot) {
  auto m = Rewrite("transpose-of-dot", R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[4,2] transpose(d), dimensions={1,0}
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kDot);
  EXPECT_EQ(Op(r, 0)->name(), "b");
  EXPECT_EQ(Op(r, 1)->name(), "a");
  EXPECT_EQ(r->attrs().dot_dnums->lhs_contracting_dimensions,
            (std::vector<int64_t>{0}));
  EXPECT_EQ(r->attrs().dot_dnums->rhs_contracting_dimensions,
            (std::vector<int64_t>{1}));
}

TEST(AlgebraicPart3Transpose, OfDotNoRewriteWhenDotShared) {
  NoRewrite("transpose-of-dot", R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[4,2] transpose(d), dimensions={1,0}
  ROOT t = (f32[4,2], f32[2,4]) tuple(r, d)
}
)");
}

TEST(AlgebraicPart3Transpose, DegenerateToReshape) {
  auto m = Rewrite("transpose-degenerate-to-reshape", R"(
HloModule m
ENTRY e {
  p = f32[1,3,4] parameter(0)
  ROOT r = f32[3,1,4] transpose(p), dimensions={1,0,2}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReshape);
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Transpose, DegenerateNoRewriteForRealTranspose) {
  NoRewrite("transpose-degenerate-to-reshape", R"(
HloModule m
ENTRY e {
  p = f32[1,3,4] parameter(0)
  ROOT r = f32[4,1,3] transpose(p), dimensions={2,0,1}
}
)");
}

TEST(AlgebraicPart3Transpose, OfBroadcast) {
  auto m = Rewrite("transpose-of-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={1}
  ROOT r = f32[3,2] transpose(b), dimensions={1,0}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(r->dimensions(), (DimVector{0}));
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Transpose, OfBroadcastNoRewriteWhenOperandTransposed) {
  NoRewrite("transpose-of-broadcast", R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  b = f32[2,3,5] broadcast(p), dimensions={0,1}
  ROOT r = f32[3,2,5] transpose(b), dimensions={1,0,2}
}
)");
}

// ---------------------------------------------------------------------------
// Convolution.

TEST(AlgebraicPart3Convolution, ZeroElementKernel) {
  auto m = Rewrite("convolution-zero-element", R"(
HloModule m
ENTRY e {
  a = f32[1,4,0] parameter(0)
  k = f32[2,0,3] parameter(1)
  ROOT c = f32[1,3,3] convolution(a, k), window={size=2}, dim_labels=b0f_0io->b0f
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(IsAll(test::Root(*m), 0));
}

TEST(AlgebraicPart3Convolution, ZeroElementNoRewriteForNonEmpty) {
  NoRewrite("convolution-zero-element", R"(
HloModule m
ENTRY e {
  a = f32[1,4,2] parameter(0)
  k = f32[2,2,3] parameter(1)
  ROOT c = f32[1,3,3] convolution(a, k), window={size=2}, dim_labels=b0f_0io->b0f
}
)");
}

TEST(AlgebraicPart3Convolution, FoldInputEdgePad) {
  auto m = Rewrite("convolution-fold-input-pad", R"(
HloModule m
ENTRY e {
  a = f32[1,4,2] parameter(0)
  k = f32[3,2,3] parameter(1)
  z = f32[] constant(0)
  p = f32[1,6,2] pad(a, z), padding=0_0x1_1x0_0
  ROOT c = f32[1,4,3] convolution(p, k), window={size=3}, dim_labels=b0f_0io->b0f
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kConvolution);
  EXPECT_EQ(Op(r, 0)->name(), "a");
  const WindowDimension& w = r->attrs().window->dimensions[0];
  EXPECT_EQ(w.padding_low, 1);
  EXPECT_EQ(w.padding_high, 1);
  EXPECT_EQ(w.base_dilation, 1);
}

TEST(AlgebraicPart3Convolution, FoldInputInteriorPad) {
  auto m = Rewrite("convolution-fold-input-pad", R"(
HloModule m
ENTRY e {
  a = f32[1,4,2] parameter(0)
  k = f32[3,2,3] parameter(1)
  z = f32[] constant(0)
  p = f32[1,7,2] pad(a, z), padding=0_0x0_0_1x0_0
  ROOT c = f32[1,5,3] convolution(p, k), window={size=3}, dim_labels=b0f_0io->b0f
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kConvolution);
  EXPECT_EQ(Op(r, 0)->name(), "a");
  EXPECT_EQ(r->attrs().window->dimensions[0].base_dilation, 2);
}

TEST(AlgebraicPart3Convolution, FoldInputPadNoRewriteForBatchPadding) {
  NoRewrite("convolution-fold-input-pad", R"(
HloModule m
ENTRY e {
  a = f32[1,4,2] parameter(0)
  k = f32[3,2,3] parameter(1)
  z = f32[] constant(0)
  p = f32[2,4,2] pad(a, z), padding=1_0x0_0x0_0
  ROOT c = f32[2,2,3] convolution(p, k), window={size=3}, dim_labels=b0f_0io->b0f
}
)");
}

TEST(AlgebraicPart3Convolution, FoldInputPadNoRewriteForNonZeroPadValue) {
  NoRewrite("convolution-fold-input-pad", R"(
HloModule m
ENTRY e {
  a = f32[1,4,2] parameter(0)
  k = f32[3,2,3] parameter(1)
  z = f32[] constant(1)
  p = f32[1,6,2] pad(a, z), padding=0_0x1_1x0_0
  ROOT c = f32[1,4,3] convolution(p, k), window={size=3}, dim_labels=b0f_0io->b0f
}
)");
}

TEST(AlgebraicPart3Convolution, FoldKernelInteriorPad) {
  auto m = Rewrite("convolution-fold-kernel-pad", R"(
HloModule m
ENTRY e {
  a = f32[1,5,2] parameter(0)
  k = f32[2,2,3] parameter(1)
  z = f32[] constant(0)
  p = f32[3,2,3] pad(k, z), padding=0_0_1x0_0x0_0
  ROOT c = f32[1,3,3] convolution(a, p), window={size=3}, dim_labels=b0f_0io->b0f
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kConvolution);
  EXPECT_EQ(Op(r, 1)->name(), "k");
  const WindowDimension& w = r->attrs().window->dimensions[0];
  EXPECT_EQ(w.size, 2);
  EXPECT_EQ(w.window_dilation, 2);
}

TEST(AlgebraicPart3Convolution, FoldKernelPadNoRewriteForEdgePadding) {
  NoRewrite("convolution-fold-kernel-pad", R"(
HloModule m
ENTRY e {
  a = f32[1,5,2] parameter(0)
  k = f32[2,2,3] parameter(1)
  z = f32[] constant(0)
  p = f32[3,2,3] pad(k, z), padding=0_1x0_0x0_0
  ROOT c = f32[1,3,3] convolution(a, p), window={size=3}, dim_labels=b0f_0io->b0f
}
)");
}

TEST(AlgebraicPart3Select, OfDynamicUpdateSlice) {
  auto m = Rewrite("select-of-dynamic-update-slice", R"(
HloModule m
ENTRY e {
  p = pred[6] parameter(0)
  xs = f32[6] parameter(1)
  x = f32[2] parameter(2)
  i = s32[] parameter(3)
  d = f32[6] dynamic-update-slice(xs, x, i)
  ROOT r = f32[6] select(p, xs, d)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kDynamicUpdateSlice);
  EXPECT_EQ(Op(r, 0)->name(), "xs");
  const Instruction* sel = Op(r, 1);
  ASSERT_EQ(sel->opcode(), Opcode::kSelect);
  EXPECT_EQ(Op(sel, 0)->opcode(), Opcode::kDynamicSlice);
  EXPECT_EQ(Op(sel, 1)->opcode(), Opcode::kDynamicSlice);
  EXPECT_EQ(Op(sel, 2)->name(), "x");
}

TEST(AlgebraicPart3Select, OfDynamicUpdateSliceMirrored) {
  auto m = Rewrite("select-of-dynamic-update-slice", R"(
HloModule m
ENTRY e {
  p = pred[6] parameter(0)
  xs = f32[6] parameter(1)
  x = f32[2] parameter(2)
  i = s32[] parameter(3)
  d = f32[6] dynamic-update-slice(xs, x, i)
  ROOT r = f32[6] select(p, d, xs)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kDynamicUpdateSlice);
  const Instruction* sel = Op(r, 1);
  ASSERT_EQ(sel->opcode(), Opcode::kSelect);
  EXPECT_EQ(Op(sel, 1)->name(), "x");
  EXPECT_EQ(Op(sel, 2)->opcode(), Opcode::kDynamicSlice);
}

TEST(AlgebraicPart3Select, OfDynamicUpdateSliceNoRewriteWhenShared) {
  NoRewrite("select-of-dynamic-update-slice", R"(
HloModule m
ENTRY e {
  p = pred[6] parameter(0)
  xs = f32[6] parameter(1)
  x = f32[2] parameter(2)
  i = s32[] parameter(3)
  d = f32[6] dynamic-update-slice(xs, x, i)
  r = f32[6] select(p, xs, d)
  ROOT t = (f32[6], f32[6]) tuple(r, d)
}
)");
}

TEST(AlgebraicPart3Reshape, ToBitcastWhenLayoutSensitive) {
  auto m = Rewrite("reshape-to-bitcast", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT r = f32[3,1,2]{2,1,0} reshape(p)
}
)",
                   LayoutSensitiveOptions());
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBitcast);
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Reshape, ToBitcastNoRewriteForColumnMajorOperand) {
  NoRewrite("reshape-to-bitcast", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT r = f32[6]{0} reshape(p)
}
)",
            LayoutSensitiveOptions());
}

TEST(AlgebraicPart3Reshape, ToBitcastNoRewriteWhenLayoutInsensitive) {
  NoRewrite("reshape-to-bitcast", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT r = f32[6]{0} reshape(p)
}
)");
}

TEST(AlgebraicPart3Transpose, ToBitcastWhenLayoutSensitive) {
  auto m = Rewrite("transpose-to-bitcast", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT r = f32[3,2]{0,1} transpose(p), dimensions={1,0}
}
)",
                   LayoutSensitiveOptions());
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kBitcast);
  EXPECT_EQ(Op(r, 0)->name(), "p");
}

TEST(AlgebraicPart3Transpose, ToBitcastNoRewriteWhenDataMoves) {
  NoRewrite("transpose-to-bitcast", R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT r = f32[3,2]{1,0} transpose(p), dimensions={1,0}
}
)",
            LayoutSensitiveOptions());
}

TEST(AlgebraicPart3ReduceWindow, FoldPad) {
  auto m = Rewrite("reduce-window-fold-pad", WithReducers(R"(
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  p = f32[6] pad(x, z), padding=1_1
  ROOT r = f32[4] reduce-window(p, z), window={size=3}, to_apply=add_f32
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReduceWindow);
  EXPECT_EQ(Op(r, 0)->name(), "x");
  const WindowDimension& w = r->attrs().window->dimensions[0];
  EXPECT_EQ(w.size, 3);
  EXPECT_EQ(w.padding_low, 1);
  EXPECT_EQ(w.padding_high, 1);
}

TEST(AlgebraicPart3ReduceWindow, FoldPadNoRewriteForOtherPadValue) {
  NoRewrite("reduce-window-fold-pad", WithReducers(R"(
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  o = f32[] constant(1)
  p = f32[6] pad(x, o), padding=1_1
  ROOT r = f32[4] reduce-window(p, z), window={size=3}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3Slice, OfRunningReduceWindowToReduce) {
  auto m = Rewrite("slice-of-reduce-window-to-reduce", WithReducers(R"(
ENTRY e {
  x = f32[2,4] parameter(0)
  z = f32[] constant(0)
  w = f32[2,4] reduce-window(x, z), window={size=1x4 pad=0_0x3_0}, to_apply=add_f32
  ROOT r = f32[2,1] slice(w), slice={[0:2], [3:4]}
}
)"),
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kReshape);
  ASSERT_EQ(Op(r, 0)->opcode(), Opcode::kReduce);
  EXPECT_EQ(Op(r, 0)->dimensions(), (DimVector{1}));
  EXPECT_EQ(Op(Op(r, 0), 0)->name(), "x");
}

TEST(AlgebraicPart3Slice, OfRunningReduceWindowNoRewriteForInnerElement) {
  NoRewrite("slice-of-reduce-window-to-reduce", WithReducers(R"(
ENTRY e {
  x = f32[2,4] parameter(0)
  z = f32[] constant(0)
  w = f32[2,4] reduce-window(x, z), window={size=1x4 pad=0_0x3_0}, to_apply=add_f32
  ROOT r = f32[2,1] slice(w), slice={[0:2], [2:3]}
}
)"));
}

constexpr char kTupleAdd[] = R"(
HloModule m
tadd {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT t = (f32[]) tuple(s)
}
)";

TEST(AlgebraicPart3Reduce, UnwrapVariadic) {
  auto m = Rewrite("reduce-unwrap-variadic", std::string(kTupleAdd) + R"(
ENTRY e {
  x = f32[3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = (f32[3]) reduce(x, z), dimensions={1}, to_apply=tadd
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kTuple);
  const Instruction* red = Op(r, 0);
  ASSERT_EQ(red->opcode(), Opcode::kReduce);
  EXPECT_TRUE(red->shape().IsArray());
  EXPECT_EQ(red->to_apply()->root_instruction()->opcode(), Opcode::kAdd);
}

TEST(AlgebraicPart3Reduce, UnwrapVariadicNoRewriteForPlainReduce) {
  NoRewrite("reduce-unwrap-variadic", WithReducers(R"(
ENTRY e {
  x = f32[3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=add_f32
}
)"));
}

TEST(AlgebraicPart3ReduceWindow, UnwrapVariadic) {
  auto m = Rewrite("reduce-window-unwrap-variadic", std::string(kTupleAdd) + R"(
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = (f32[3]) reduce-window(x, z), window={size=2}, to_apply=tadd
}
)",
                   {}, 1e-4);
  ASSERT_NE(m, nullptr);
  const Instruction* r = test::Root(*m);
  ASSERT_EQ(r->opcode(), Opcode::kTuple);
  const Instruction* w = Op(r, 0);
  ASSERT_EQ(w->opcode(), Opcode::kReduceWindow);
  EXPECT_TRUE(w->shape().IsArray());
  EXPECT_EQ(w->attrs().window->dimensions[0].size, 2);
  EXPECT_EQ(w->to_apply()->root_instruction()->opcode(), Opcode::kAdd);
}

TEST(AlgebraicPart3ReduceWindow, UnwrapVariadicNoRewriteForPlain) {
  NoRewrite("reduce-window-unwrap-variadic", WithReducers(R"(
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(x, z), window={size=2}, to_apply=add_f32
}
)"));
}

}  // namespace
}  // namespace hlogym
