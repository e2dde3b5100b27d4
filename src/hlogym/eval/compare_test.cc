#include "hlogym/eval/compare.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

// The literal of `ROOT c = SHAPE constant(VALUE)`.
Literal Const(const std::string& shape, const std::string& value) {
  auto m = ParseModule("HloModule m\nENTRY e {\n  ROOT c = " + shape +
                       " constant(" + value + ")\n}\n");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return Literal();
  return (*m)->entry_computation()->root_instruction()->literal();
}

Literal F32(std::vector<double> v) {
  Literal l(Shape(PrimitiveType::kF32, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) l.SetFromDouble(i, v[i]);
  return l;
}

TEST(CompareTest, Defaults) {
  EXPECT_EQ(DefaultTolerance(PrimitiveType::kF32).rtol, 1e-5);
  EXPECT_EQ(DefaultTolerance(PrimitiveType::kF32).atol, 1e-5);
  EXPECT_EQ(DefaultTolerance(PrimitiveType::kC128).rtol, 1e-9);
  EXPECT_EQ(DefaultTolerance(PrimitiveType::kF16).rtol, 1e-2);
  EXPECT_EQ(DefaultTolerance(PrimitiveType::kBF16).atol, 5e-2);
  EXPECT_EQ(DefaultTolerance(PrimitiveType::kF8E4M3FN).rtol, 0.25);
  EXPECT_EQ(DefaultTolerance(PrimitiveType::kF8E5M2).rtol, 0.5);
  EXPECT_EQ(DefaultTolerance(PrimitiveType::kF4E2M1FN).rtol, 1.0);
  EXPECT_EQ(DefaultTolerance(PrimitiveType::kS32).rtol, 0);
}

TEST(CompareTest, EqualAndWithinTolerance) {
  Literal a = F32({1, 2, 0});
  CompareReport r = Compare(a, a);
  EXPECT_TRUE(r.ok);
  ASSERT_EQ(r.buffers.size(), 1u);
  EXPECT_EQ(r.buffers[0].name, "out0");
  EXPECT_EQ(r.buffers[0].elements, 3);
  EXPECT_EQ(r.buffers[0].max_abs_error, 0);
  EXPECT_EQ(r.ToString(),
            "out0 f32[3]: ok (3 elements); max abs error 0, max rel error 0; "
            "rtol 1e-05, atol 1e-05\nMATCH: 1 buffers, 0 mismatching\n");

  // |a-b| <= atol + rtol*|b|: 1e-3 off at |b| = 100 with rtol 1e-5 and atol
  // 1e-5 allows 1.01e-3.
  CompareReport r2 = Compare(F32({100.001}), F32({100}));
  EXPECT_TRUE(r2.ok) << r2.ToString();
  CompareReport r3 = Compare(F32({100.0011}), F32({100}));
  EXPECT_FALSE(r3.ok);
  // b is the reference: swapping the sides changes the bound.
  CompareReport r4 = Compare(F32({1e-5 + 1e-6}), F32({0}));
  EXPECT_FALSE(r4.ok);
  CompareOptions loose;
  loose.atol = 1e-4;
  EXPECT_TRUE(Compare(F32({1e-5 + 1e-6}), F32({0}), loose).ok);
  CompareOptions rel;
  rel.rtol = 0.1;
  rel.atol = 0;
  EXPECT_TRUE(Compare(F32({1.09}), F32({1}), rel).ok);
  EXPECT_FALSE(Compare(F32({1.11}), F32({1}), rel).ok);
}

// An f32 output computed through bf16 carries bf16 rounding: with
// `computed_in` its tolerance is bf16's (5e-2), never tighter than its own.
TEST(CompareTest, ComputedInLoosensToTheLeastPreciseType) {
  const Literal want = F32({2.640625});
  const Literal got = F32({2.65625});  // one bf16 ulp away
  EXPECT_FALSE(Compare(got, want).ok);
  CompareOptions o;
  o.computed_in = PrimitiveType::kBF16;
  CompareReport r = Compare(got, want, o);
  EXPECT_TRUE(r.ok) << r.ToString();
  EXPECT_EQ(r.buffers[0].tolerance.rtol, 5e-2);
  EXPECT_FALSE(Compare(F32({2.9}), want, o).ok);  // 0.26 > 0.05 + 0.13
  // A more precise type does not tighten an f32 buffer.
  o.computed_in = PrimitiveType::kF64;
  EXPECT_EQ(Compare(want, want, o).buffers[0].tolerance.rtol, 1e-5);
}

TEST(CompareTest, LeastPreciseFloatType) {
  auto parse = [](const std::string& body) {
    auto m = ParseModule("HloModule m\nENTRY e {\n" + body + "}\n");
    EXPECT_TRUE(m.ok()) << m.status();
    return std::move(m).value();
  };
  auto mixed = parse(
      "  p = bf16[4] parameter(0)\n"
      "  c = f32[4] convert(p)\n"
      "  ROOT t = (f32[4], c64[2]) tuple(c, c64[2] constant({(1,0), "
      "(0,1)}))\n");
  EXPECT_EQ(LeastPreciseFloatType(*mixed), PrimitiveType::kBF16);
  auto complex = parse(
      "  p = f64[4] parameter(0)\n"
      "  ROOT c = c64[2] constant({(1,0), (0,1)})\n");
  EXPECT_EQ(LeastPreciseFloatType(*complex), PrimitiveType::kF32);
  auto ints = parse("  ROOT p = s32[4] parameter(0)\n");
  EXPECT_EQ(LeastPreciseFloatType(*ints), std::nullopt);
}

TEST(CompareTest, MismatchDetails) {
  Literal a = Const("f32[2,3]", "{ {1, 2, 3}, {4, 5.5, 7} }");
  Literal b = Const("f32[2,3]", "{ {1, 2, 3}, {4, 5, 6} }");
  CompareReport r = Compare(a, b);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.buffers.size(), 1u);
  const BufferComparison& c = r.buffers[0];
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.elements, 6);
  EXPECT_EQ(c.first_mismatch, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(c.first_a, "5.5");
  EXPECT_EQ(c.first_b, "5");
  EXPECT_EQ(c.max_abs_error, 1);
  EXPECT_DOUBLE_EQ(c.max_rel_error, 1.0 / 6);
  EXPECT_EQ(r.ToString(),
            "out0 f32[2,3]: MISMATCH, 2 of 6 elements differ, first at [1,1]: "
            "a=5.5 b=5; max abs error 1, max rel error 0.167; rtol 1e-05, "
            "atol 1e-05\nMISMATCH: 1 buffers, 1 mismatching\n");
}

TEST(CompareTest, NanAndInfinity) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // NaN == NaN at the same position; infinities equal only to themselves.
  EXPECT_TRUE(Compare(F32({nan, inf, -inf}), F32({nan, inf, -inf})).ok);
  CompareReport r =
      Compare(F32({nan, 1, inf, -inf, 2}), F32({1, nan, -inf, 5, 2}));
  ASSERT_EQ(r.buffers.size(), 1u);
  const BufferComparison& c = r.buffers[0];
  EXPECT_EQ(c.mismatches, 4);
  EXPECT_EQ(c.nan_mismatches, 2);
  EXPECT_EQ(c.inf_mismatches, 2);
  EXPECT_EQ(c.first_mismatch, (std::vector<int64_t>{0}));
  EXPECT_EQ(c.first_a, "nan");
  EXPECT_EQ(c.first_b, "1");
  // Non-finite pairs do not enter the error statistics.
  EXPECT_EQ(c.max_abs_error, 0);
  EXPECT_NE(r.ToString().find("4 of 5 elements differ (2 NaN vs number) "
                              "(2 infinity mismatches)"),
            std::string::npos)
      << r.ToString();
}

TEST(CompareTest, IntegersAndPredAreExact) {
  Literal a = Const("s32[4]", "{1, 2, 3, -4}");
  Literal b = Const("s32[4]", "{1, 2, 4, -4}");
  CompareOptions loose;
  loose.atol = 10;  // ignored for integers
  CompareReport r = Compare(a, b, loose);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.buffers[0].exact);
  EXPECT_EQ(r.buffers[0].mismatches, 1);
  EXPECT_EQ(r.buffers[0].first_mismatch, (std::vector<int64_t>{2}));
  EXPECT_EQ(r.buffers[0].max_abs_error, 1);
  EXPECT_EQ(r.ToString(),
            "out0 s32[4]: MISMATCH, 1 of 4 elements differ, first at [2]: a=3 "
            "b=4; max abs error 1; exact\nMISMATCH: 1 buffers, 1 "
            "mismatching\n");
  EXPECT_TRUE(Compare(a, a).ok);
  Literal u1 = Const("u64[2]", "{0, 18446744073709551615}");
  Literal u2 = Const("u64[2]", "{0, 18446744073709551614}");
  CompareReport ru = Compare(u1, u2);
  EXPECT_EQ(ru.buffers[0].mismatches, 1);
  EXPECT_EQ(ru.buffers[0].max_abs_error, 1);
  Literal p1 = Const("pred[3]", "{true, false, true}");
  Literal p2 = Const("pred[3]", "{true, true, true}");
  CompareReport rp = Compare(p1, p2);
  EXPECT_EQ(rp.buffers[0].mismatches, 1);
  EXPECT_EQ(rp.buffers[0].first_a, "false");
  EXPECT_EQ(rp.buffers[0].first_b, "true");
  Literal s4a = Const("s4[2]", "{-8, 7}");
  Literal s4b = Const("s4[2]", "{-8, 6}");
  EXPECT_EQ(Compare(s4a, s4b).buffers[0].mismatches, 1);
  EXPECT_TRUE(Compare(s4a, s4a).ok);
}

TEST(CompareTest, ComplexPerComponent) {
  Literal a = Const("c64[2]", "{(1, 2), (3, 4)}");
  Literal b = Const("c64[2]", "{(1, 2.5), (3, 4)}");
  CompareOptions o;
  o.rtol = 0;
  o.atol = 0.4;
  CompareReport r = Compare(a, b, o);
  EXPECT_EQ(r.buffers[0].mismatches, 1);
  EXPECT_EQ(r.buffers[0].first_a, "(1, 2)");
  EXPECT_EQ(r.buffers[0].max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(r.buffers[0].max_rel_error, 0.2);
  o.atol = 0.5;
  EXPECT_TRUE(Compare(a, b, o).ok);
}

TEST(CompareTest, NarrowFloatDefaults) {
  // bf16 1 vs 1.0078125 (one ulp): within the bf16 default.
  Literal a = Const("bf16[1]", "{1}");
  Literal b = Const("bf16[1]", "{1.0078125}");
  EXPECT_TRUE(Compare(a, b).ok);
  CompareOptions tight;
  tight.rtol = 1e-3;
  tight.atol = 1e-3;
  EXPECT_FALSE(Compare(a, b, tight).ok);
  Literal c = Const("f8e4m3fn[2]", "{1, nan}");
  Literal d = Const("f8e4m3fn[2]", "{1.125, nan}");
  CompareReport r = Compare(c, d);
  EXPECT_TRUE(r.ok) << r.ToString();
  EXPECT_EQ(r.buffers[0].tolerance.rtol, 0.25);
}

TEST(CompareTest, TuplesAndStructure) {
  Literal t1 = Const("(f32[2], s32[], (pred[1]))", "({1, 2}, 3, ({true}))");
  Literal t2 = Const("(f32[2], s32[], (pred[1]))", "({1, 2}, 4, ({true}))");
  CompareReport r = Compare(t1, t2);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.buffers.size(), 3u);
  EXPECT_EQ(r.buffers[0].name, "out0");
  EXPECT_EQ(r.buffers[1].name, "out1");
  EXPECT_EQ(r.buffers[1].index, (std::vector<int64_t>{1}));
  EXPECT_FALSE(r.buffers[1].ok());
  EXPECT_EQ(r.buffers[2].index, (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE(r.buffers[2].ok());
  EXPECT_NE(r.ToString().find("out1 {1} s32[]: MISMATCH, 1 of 1 elements "
                              "differ, first at []: a=3 b=4"),
            std::string::npos)
      << r.ToString();

  CompareReport shape = Compare(F32({1, 2}), F32({1, 2, 3}));
  EXPECT_FALSE(shape.ok);
  EXPECT_EQ(shape.buffers[0].structure_error,
            "dimensions differ: a is f32[2], b is f32[3]");
  CompareReport type = Compare(Const("s32[2]", "{1, 2}"), F32({1, 2}));
  EXPECT_FALSE(type.ok);
  EXPECT_EQ(type.buffers[0].structure_error,
            "element types differ: a is s32[2], b is f32[2]");
  EXPECT_EQ(type.ToString(),
            "out0: MISMATCH, element types differ: a is s32[2], b is f32[2]\n"
            "MISMATCH: 1 buffers, 1 mismatching\n");
  CompareReport arity = Compare(Const("(f32[1])", "({1})"), t1);
  EXPECT_FALSE(arity.ok);
  EXPECT_EQ(arity.buffers[0].structure_error,
            "structure differs: a is (f32[1]), b is (f32[2], s32[], "
            "(pred[1]))");
  // Tokens equal tokens.
  EXPECT_TRUE(Compare(Literal(Shape::Token()), Literal(Shape::Token())).ok);
}

TEST(CompareTest, LayoutsAreIgnored) {
  Literal a = Const("f32[2,2]{0,1}", "{ {1, 2}, {3, 4} }");
  Literal b = Const("f32[2,2]{1,0}", "{ {1, 2}, {3, 4} }");
  EXPECT_TRUE(Compare(a, b).ok);
}

}  // namespace
}  // namespace hlogym
