#include "hlogym/eval/inputs.h"

#include <cmath>
#include <cstring>
#include <set>

#include "gtest/gtest.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

Shape S(const char* text) {
  auto s = ParseShape(text);
  EXPECT_TRUE(s.ok()) << text;
  return s.ok() ? *s : Shape();
}

float F32At(const Literal& l, int64_t i) {
  float f;
  std::memcpy(&f, l.data() + 4 * i, 4);
  return f;
}

// The values below were computed by an independent re-implementation of
// the documented formulas.
TEST(InputsTest, HashPinned) {
  EXPECT_EQ(SplitMix64(0), 0xe220a8397b1dcdafull);  // splitmix64's own
  EXPECT_EQ(SplitMix64(1), 0x910a2dec89025cc1ull);
  EXPECT_EQ(InputHash(0, 0, 0), 0x238275bc38fcbe91ull);
  EXPECT_EQ(InputHash(42, 1, 2), 0xf4269628263f4c12ull);
  EXPECT_EQ(InputUniform(0, 0, 0), 0.13870941014555438);
  EXPECT_EQ(InputUniform(0, 0, 1), 0.18436667429957687);
  EXPECT_EQ(InputUniform(0, 0, 2), 0.6974532717895355);
}

TEST(InputsTest, FloatValuesPinned) {
  auto l = GenerateArray(S("f32[2,2]"), 0, 0);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(F32At(*l, 0), 0.7966432571411133f);
  EXPECT_EQ(F32At(*l, 1), -0.36707019805908203f);
  EXPECT_EQ(F32At(*l, 2), -1.1917774677276611f);
  EXPECT_EQ(F32At(*l, 3), 0.7156631350517273f);

  auto d = GenerateArray(S("f64[3]"), 7, 1);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->GetAsDouble(0), 0.3204947703960338);
  EXPECT_EQ(d->GetAsDouble(1), 0.8961397520809768);
  EXPECT_EQ(d->GetAsDouble(2), 0.9550270870690662);

  auto c = GenerateArray(S("c64[2]"), 5, 0);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->GetComplex(0),
            std::complex<double>(0.8510108590126038f, 0.76531583070755f));
  EXPECT_EQ(c->GetComplex(1),
            std::complex<double>(-0.8809194564819336f, 0.7053552865982056f));
}

TEST(InputsTest, NarrowFloatsRoundFromTheSameNormal) {
  auto f = GenerateArray(S("f32[64]"), 11, 3);
  auto b = GenerateArray(S("bf16[64]"), 11, 3);
  auto h = GenerateArray(S("f16[64]"), 11, 3);
  ASSERT_TRUE(f.ok() && b.ok() && h.ok());
  for (int64_t i = 0; i < 64; ++i) {
    const double z = InputNormal(11, 3, 2 * i);
    uint64_t bits = 0;
    FloatToBits(PrimitiveType::kBF16, z, &bits);
    EXPECT_EQ(b->GetBits(i), bits) << i;
    FloatToBits(PrimitiveType::kF16, z, &bits);
    EXPECT_EQ(h->GetBits(i), bits) << i;
    EXPECT_EQ(F32At(*f, i), static_cast<float>(z));
  }
}

TEST(InputsTest, IntegerValuesPinned) {
  auto s = GenerateArray(S("s32[8]"), 0, 1);
  ASSERT_TRUE(s.ok());
  const int64_t want_s[] = {4, -3, -2, -3, -2, 1, -4, -4};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(s->GetAsInt64(i), want_s[i]) << i;

  auto u = GenerateArray(S("u8[8]"), 3, 0);
  ASSERT_TRUE(u.ok());
  const int64_t want_u[] = {1, 2, 0, 5, 2, 7, 0, 5};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(u->GetAsInt64(i), want_u[i]) << i;

  auto p = GenerateArray(S("pred[8]"), 0, 2);
  ASSERT_TRUE(p.ok());
  const int64_t want_p[] = {1, 0, 0, 1, 0, 0, 1, 1};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(p->GetBits(i), want_p[i]) << i;

  // Sub-byte types: the range is clipped to the type, the encoding is the
  // literal's (sign-extended bytes).
  auto s4 = GenerateArray(S("s4[6]"), 0, 0);
  auto s2 = GenerateArray(S("s2[6]"), 0, 0);
  auto u2 = GenerateArray(S("u2[6]"), 0, 0);
  ASSERT_TRUE(s4.ok() && s2.ok() && u2.ok());
  const int64_t want_s4[] = {-1, 0, -3, 1, 0, -3};
  const int64_t want_s2[] = {-1, -2, 0, 1, -1, -2};
  const int64_t want_u2[] = {1, 0, 2, 3, 1, 0};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(s4->GetAsInt64(i), want_s4[i]) << i;
    EXPECT_EQ(static_cast<int8_t>(s4->data()[i]), want_s4[i]) << i;
    EXPECT_EQ(s2->GetAsInt64(i), want_s2[i]) << i;
    EXPECT_EQ(u2->GetAsInt64(i), want_u2[i]) << i;
  }
}

TEST(InputsTest, NormalMoments) {
  const int64_t n = 100000;
  auto l = GenerateArray(Shape(PrimitiveType::kF64, {n}), 1, 0);
  ASSERT_TRUE(l.ok());
  double sum = 0, sum2 = 0, sum4 = 0, mx = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = l->GetAsDouble(i);
    sum += v;
    sum2 += v * v;
    sum4 += v * v * v * v;
    mx = std::max(mx, std::fabs(v));
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.015);
  EXPECT_NEAR(var, 1.0, 0.025);
  EXPECT_NEAR(sum4 / n, 3.0, 0.15);  // the kurtosis of a normal
  EXPECT_GT(mx, 3.5);
  EXPECT_LT(mx, 6.5);
  // Complex parts: both N(0,1) and uncorrelated.
  auto c = GenerateArray(Shape(PrimitiveType::kC128, {n}), 2, 0);
  ASSERT_TRUE(c.ok());
  double re = 0, im = 0, re2 = 0, im2 = 0, cross = 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::complex<double> v = c->GetComplex(i);
    re += v.real();
    im += v.imag();
    re2 += v.real() * v.real();
    im2 += v.imag() * v.imag();
    cross += v.real() * v.imag();
  }
  EXPECT_NEAR(re / n, 0, 0.015);
  EXPECT_NEAR(im / n, 0, 0.015);
  EXPECT_NEAR(re2 / n, 1, 0.025);
  EXPECT_NEAR(im2 / n, 1, 0.025);
  EXPECT_NEAR(cross / n, 0, 0.015);
}

TEST(InputsTest, IntegerAndPredDistributions) {
  const int64_t n = 100000;
  auto s = GenerateArray(Shape(PrimitiveType::kS64, {n}), 9, 4);
  auto u = GenerateArray(Shape(PrimitiveType::kU16, {n}), 9, 5);
  auto p = GenerateArray(Shape(PrimitiveType::kPred, {n}), 9, 6);
  ASSERT_TRUE(s.ok() && u.ok() && p.ok());
  int64_t count_s[9] = {}, count_u[9] = {}, trues = 0;
  double sum_s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t a = s->GetAsInt64(i), b = u->GetAsInt64(i);
    ASSERT_GE(a, -4);
    ASSERT_LE(a, 4);
    ASSERT_GE(b, 0);
    ASSERT_LE(b, 8);
    ++count_s[a + 4];
    ++count_u[b];
    sum_s += a;
    ASSERT_LE(p->GetBits(i), 1u);
    trues += p->GetBits(i);
  }
  for (int k = 0; k < 9; ++k) {
    EXPECT_NEAR(count_s[k], n / 9.0, 600) << k;
    EXPECT_NEAR(count_u[k], n / 9.0, 600) << k;
  }
  EXPECT_NEAR(sum_s / n, 0, 0.05);
  EXPECT_NEAR(static_cast<double>(trues) / n, 0.5, 0.01);
}

TEST(InputsTest, NarrowTypesStayFinite) {
  for (const char* t :
       {"f8e4m3fn[20000]", "f4e2m1fn[20000]", "f6e2m3fn[20000]",
        "f8e5m2fnuz[20000]", "f8e4m3b11fnuz[20000]", "f8e8m0fnu[20000]"}) {
    auto l = GenerateArray(S(t), 0, 0);
    ASSERT_TRUE(l.ok()) << t;
    int64_t zeros = 0;
    for (int64_t i = 0; i < l->element_count(); ++i) {
      const double v = l->GetAsDouble(i);
      ASSERT_TRUE(std::isfinite(v)) << t << " element " << i;
      if (v == 0) ++zeros;
    }
    if (std::string(t).starts_with("f8e8m0fnu")) {
      for (int64_t i = 0; i < l->element_count(); ++i) {
        ASSERT_GT(l->GetAsDouble(i), 0) << i;
      }
    } else {
      EXPECT_LT(zeros, l->element_count() / 2) << t;
    }
  }
  // f4e2m1fn holds 0, 0.5, 1, 1.5, 2, 3, 4, 6: values beyond 5 (rare)
  // round or clamp to 6, never beyond.
  auto f4 = GenerateArray(S("f4e2m1fn[100000]"), 0, 0);
  ASSERT_TRUE(f4.ok());
  std::set<double> seen;
  for (int64_t i = 0; i < f4->element_count(); ++i) {
    seen.insert(std::fabs(f4->GetAsDouble(i)));
  }
  EXPECT_TRUE(seen.count(4.0));
  EXPECT_LE(*seen.rbegin(), 6.0);
}

TEST(InputsTest, TuplesTokensAndLeafNumbering) {
  std::vector<Shape> params = {S("f32[2]"), S("(s32[3], token[], f32[])"),
                               S("token[]"), S("u8[2]")};
  auto in = GenerateInputs(params, 77);
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_EQ(in->size(), 4u);
  EXPECT_EQ((*in)[0], *GenerateArray(params[0], 77, 0));
  const Literal& t = (*in)[1];
  ASSERT_TRUE(t.shape().IsTuple());
  ASSERT_EQ(t.tuple_elements().size(), 3u);
  EXPECT_EQ(t.tuple_elements()[0], *GenerateArray(S("s32[3]"), 77, 1));
  EXPECT_TRUE(t.tuple_elements()[1].shape().IsToken());
  EXPECT_EQ(t.tuple_elements()[2], *GenerateArray(S("f32[]"), 77, 2));
  EXPECT_TRUE((*in)[2].shape().IsToken());
  EXPECT_EQ((*in)[3], *GenerateArray(params[3], 77, 3));
  // Another seed, other values; the same seed, the same values.
  auto again = GenerateInputs(params, 77);
  auto other = GenerateInputs(params, 78);
  ASSERT_TRUE(again.ok() && other.ok());
  EXPECT_EQ((*in)[0], (*again)[0]);
  EXPECT_NE((*in)[0], (*other)[0]);
}

TEST(InputsTest, RejectsShapesWithoutContents) {
  auto a = GenerateInputs({S("f32[2]"), Shape::Opaque()}, 0);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(),
            "parameter 1: cannot generate a value of shape opaque[]");
  auto b = GenerateInputs({S("f32[?,2]")}, 0);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(),
            "parameter 0: cannot generate a value of shape f32[?,2] "
            "(unbounded dynamic dimension)");
}

TEST(InputsTest, ParameterShapes) {
  auto m = ParseModule(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = (s32[], pred[4]) parameter(1)
  ROOT r = f32[2,3] negate(a)
})");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Shape> shapes = ParameterShapes(*(*m)->entry_computation());
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].ToString(false), "f32[2,3]");
  EXPECT_EQ(shapes[1].ToString(false), "(s32[], pred[4])");
}

}  // namespace
}  // namespace hlogym
