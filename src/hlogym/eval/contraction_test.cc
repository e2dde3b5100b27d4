#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

Literal Make(PrimitiveType t, DimVector dims, const std::vector<double>& v) {
  Literal l(Shape(t, std::move(dims)));
  for (size_t i = 0; i < v.size(); ++i) {
    l.SetFromDouble(static_cast<int64_t>(i), v[i]);
  }
  return l;
}

std::vector<double> Values(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

// Parses `body` (the entry computation's instructions) and keeps the module
// alive; root() is the instruction under test.
class Hlo {
 public:
  explicit Hlo(const std::string& body) {
    auto m = ParseModule("HloModule m\nENTRY e {\n" + body + "\n}\n");
    EXPECT_TRUE(m.ok()) << m.status();
    if (m.ok()) module_ = std::move(*m);
  }
  const Instruction& root() const {
    return *module_->entry_computation()->root_instruction();
  }

 private:
  std::unique_ptr<Module> module_;
};

absl::StatusOr<Literal> RunDot(const Hlo& h, const Literal& a,
                               const Literal& b) {
  const Literal* ops[] = {&a, &b};
  return EvalDot(h.root(), ops);
}

absl::StatusOr<Literal> RunConv(const Hlo& h, const Literal& a,
                                const Literal& b) {
  const Literal* ops[] = {&a, &b};
  return EvalConvolution(h.root(), ops);
}

TEST(DotTest, MatrixTimesMatrix) {
  Hlo h(R"(a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})");
  Literal a = Make(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Literal b = Make(PrimitiveType::kF32, {3, 2}, {7, 8, 9, 10, 11, 12});
  auto r = RunDot(h, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{58, 64, 139, 154}));
}

TEST(DotTest, BatchDimsAndTransposedContractingDims) {
  // lhs [b, k, m], rhs [b, n, k] -> [b, m, n].
  Hlo h(R"(a = f32[2,3,2] parameter(0)
  b = f32[2,2,3] parameter(1)
  ROOT d = f32[2,2,2] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={2})");
  std::vector<double> av;
  for (int i = 1; i <= 12; ++i) av.push_back(i);
  Literal a = Make(PrimitiveType::kF32, {2, 3, 2}, av);
  Literal b = Make(PrimitiveType::kF32, {2, 2, 3},
                   {1, -2, 6, 4, -5, 12, 7, -8, 18, 10, -11, 24});
  auto r = RunDot(h, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r),
            (std::vector<double>{25, 49, 30, 60, 175, 235, 192, 258}));
}

TEST(DotTest, VectorDotAndOuterProduct) {
  Hlo inner(R"(a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})");
  Literal a = Make(PrimitiveType::kF32, {3}, {1, 2, 3});
  Literal b = Make(PrimitiveType::kF32, {3}, {4, -5, 6});
  auto r = RunDot(inner, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{12}));
  Hlo outer(R"(a = f32[3] parameter(0)
  b = f32[2] parameter(1)
  ROOT d = f32[3,2] dot(a, b))");
  Literal c = Make(PrimitiveType::kF32, {2}, {10, 100});
  auto o = RunDot(outer, a, c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(Values(*o), (std::vector<double>{10, 100, 20, 200, 30, 300}));
}

TEST(DotTest, SeveralContractingDimsSumInListedOrder) {
  // Contracting dims listed as {2,1}: lhs dim 2 is the outer loop.
  Hlo h(R"(a = f32[2,3,4] parameter(0)
  b = f32[4,3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,1})");
  std::vector<float> l(24), r(24);
  for (int i = 0; i < 24; ++i) {
    l[i] = std::sin(1.3 * i) * 100;
    r[i] = std::cos(0.7 * i) / 3;
  }
  Literal a(Shape(PrimitiveType::kF32, {2, 3, 4}));
  Literal b(Shape(PrimitiveType::kF32, {4, 3, 2}));
  std::memcpy(a.mutable_data(), l.data(), 96);
  std::memcpy(b.mutable_data(), r.data(), 96);
  auto out = RunDot(h, a, b);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int m = 0; m < 2; ++m) {
    for (int n = 0; n < 2; ++n) {
      float acc = 0;
      for (int k1 = 0; k1 < 4; ++k1) {
        for (int k2 = 0; k2 < 3; ++k2) {
          acc += l[(m * 3 + k2) * 4 + k1] * r[(k1 * 3 + k2) * 2 + n];
        }
      }
      EXPECT_EQ(out->GetAsDouble(m * 2 + n), acc) << m << "," << n;
    }
  }
}

TEST(DotTest, Bf16OperandsF32Result) {
  Hlo h(R"(a = bf16[1,3] parameter(0)
  b = bf16[3,1] parameter(1)
  ROOT d = f32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})");
  // 1.0078125 is exact in bf16; the sum needs f32 precision.
  Literal a = Make(PrimitiveType::kBF16, {1, 3}, {1.0078125, 256, -256});
  Literal b = Make(PrimitiveType::kBF16, {3, 1}, {1, 1, 1});
  auto r = RunDot(h, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{1.0078125}));
}

TEST(DotTest, F32OperandsAreRoundedToABf16Result) {
  Hlo h(R"(a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT d = bf16[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})");
  // 1+2^-8 rounds to 1 in bf16 before the products: 3, not 3.015625.
  Literal a =
      Make(PrimitiveType::kF32, {3}, {1.00390625, 1.00390625, 1.00390625});
  Literal b = Make(PrimitiveType::kF32, {3}, {1, 1, 1});
  auto r = RunDot(h, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{3}));
}

TEST(DotTest, S8OperandsS32Result) {
  Hlo h(R"(a = s8[1,2] parameter(0)
  b = s8[2,1] parameter(1)
  ROOT d = s32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})");
  Literal a = Make(PrimitiveType::kS8, {1, 2}, {-128, -128});
  Literal b = Make(PrimitiveType::kS8, {2, 1}, {-128, 127});
  auto r = RunDot(h, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetAsInt64(0), 16384 - 16256);
}

TEST(DotTest, IntegerResultsWrap) {
  // Operands are converted to s8 first (300 -> 44), products wrap.
  Hlo h(R"(a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT d = s8[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})");
  Literal a = Make(PrimitiveType::kS32, {2}, {300, 100});
  Literal b = Make(PrimitiveType::kS32, {2}, {1, 2});
  auto r = RunDot(h, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetAsInt64(0), static_cast<int8_t>(44 + 200));
}

TEST(DotTest, PredAndComplex) {
  Hlo p(R"(a = pred[2] parameter(0)
  b = pred[2] parameter(1)
  ROOT d = pred[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})");
  Literal a = Make(PrimitiveType::kPred, {2}, {1, 0});
  Literal b = Make(PrimitiveType::kPred, {2}, {1, 1});
  auto r = RunDot(p, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetAsInt64(0), 1);
  Hlo c(R"(a = c64[2] parameter(0)
  b = c64[2] parameter(1)
  ROOT d = c64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})");
  Literal x(Shape(PrimitiveType::kC64, {2}));
  Literal y(Shape(PrimitiveType::kC64, {2}));
  x.SetComplex(0, {1, 2});
  x.SetComplex(1, {0, 1});
  y.SetComplex(0, {3, -1});
  y.SetComplex(1, {2, 0});
  auto z = RunDot(c, x, y);
  ASSERT_TRUE(z.ok()) << z.status();
  // (1+2i)(3-i) + i*2 = 5+5i + 2i.
  EXPECT_EQ(z->GetComplex(0), std::complex<double>(5, 7));
}

TEST(DotTest, BadOperandsAreErrors) {
  Hlo h(R"(a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})");
  Literal a = Make(PrimitiveType::kF32, {2, 3}, {});
  Literal wrong = Make(PrimitiveType::kF32, {4, 2}, {});
  EXPECT_FALSE(RunDot(h, a, wrong).ok());
  const Literal* one[] = {&a};
  EXPECT_FALSE(EvalDot(h.root(), one).ok());
}

TEST(DotTest, Dot256IsFast) {
  Hlo h(R"(a = f32[256,256] parameter(0)
  b = f32[256,256] parameter(1)
  ROOT d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})");
  Literal a(Shape(PrimitiveType::kF32, {256, 256}));
  Literal b(Shape(PrimitiveType::kF32, {256, 256}));
  for (int64_t i = 0; i < 256 * 256; ++i) {
    a.SetFromDouble(i, (i % 7) - 3);
    b.SetFromDouble(i, (i % 5) - 2);
  }
  auto start = std::chrono::steady_clock::now();
  auto r = RunDot(h, a, b);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  ASSERT_TRUE(r.ok()) << r.status();
  // Spot check one element against a direct sum.
  double expect = 0;
  for (int k = 0; k < 256; ++k) {
    expect += a.GetAsDouble(5 * 256 + k) * b.GetAsDouble(k * 256 + 9);
  }
  EXPECT_EQ(r->GetAsDouble(5 * 256 + 9), expect);
  EXPECT_LT(ms, 100.0);  // typically a few ms
}

// ---------------------------------------------------------------------------

TEST(ConvolutionTest, StrideAndPadding1D) {
  Hlo h(R"(a = f32[1,5,1] parameter(0)
  k = f32[3,1,1] parameter(1)
  ROOT c = f32[1,3,1] convolution(a, k), window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f)");
  Literal a = Make(PrimitiveType::kF32, {1, 5, 1}, {1, 2, 3, 4, 5});
  Literal k = Make(PrimitiveType::kF32, {3, 1, 1}, {1, 2, 3});
  auto r = RunConv(h, a, k);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{8, 20, 14}));
}

TEST(ConvolutionTest, NegativePadding) {
  Hlo h(R"(a = f32[1,5,1] parameter(0)
  k = f32[1,1,1] parameter(1)
  ROOT c = f32[1,3,1] convolution(a, k), window={size=1 pad=-1_-1}, dim_labels=b0f_0io->b0f)");
  Literal a = Make(PrimitiveType::kF32, {1, 5, 1}, {1, 2, 3, 4, 5});
  Literal k = Make(PrimitiveType::kF32, {1, 1, 1}, {2});
  auto r = RunConv(h, a, k);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{4, 6, 8}));
}

TEST(ConvolutionTest, LhsAndRhsDilation) {
  // Base 1 _ 2 _ 3; the window reads offsets 0 and 2.
  Hlo h(R"(a = f32[1,3,1] parameter(0)
  k = f32[2,1,1] parameter(1)
  ROOT c = f32[1,3,1] convolution(a, k), window={size=2 lhs_dilate=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f)");
  Literal a = Make(PrimitiveType::kF32, {1, 3, 1}, {1, 2, 3});
  Literal k = Make(PrimitiveType::kF32, {2, 1, 1}, {1, 10});
  auto r = RunConv(h, a, k);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{21, 0, 32}));
}

TEST(ConvolutionTest, WindowReversal) {
  Hlo h(R"(a = f32[1,4,1] parameter(0)
  k = f32[3,1,1] parameter(1)
  ROOT c = f32[1,2,1] convolution(a, k), window={size=3 rhs_reversal=1}, dim_labels=b0f_0io->b0f)");
  Literal a = Make(PrimitiveType::kF32, {1, 4, 1}, {1, 2, 3, 4});
  Literal k = Make(PrimitiveType::kF32, {3, 1, 1}, {1, 2, 3});
  auto r = RunConv(h, a, k);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{10, 16}));
}

TEST(ConvolutionTest, FeatureGroupCount) {
  Hlo h(R"(a = f32[1,1,4] parameter(0)
  k = f32[1,2,2] parameter(1)
  ROOT c = f32[1,1,2] convolution(a, k), window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2)");
  Literal a = Make(PrimitiveType::kF32, {1, 1, 4}, {1, 2, 3, 4});
  // k[0][i][o]: i=0 -> {1, 10}, i=1 -> {100, 1000}.
  Literal k = Make(PrimitiveType::kF32, {1, 2, 2}, {1, 10, 100, 1000});
  auto r = RunConv(h, a, k);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{201, 4030}));
}

TEST(ConvolutionTest, BatchGroupCount) {
  Hlo h(R"(a = f32[4,1,1] parameter(0)
  k = f32[1,1,2] parameter(1)
  ROOT c = f32[2,1,2] convolution(a, k), window={size=1}, dim_labels=b0f_0io->b0f, batch_group_count=2)");
  Literal a = Make(PrimitiveType::kF32, {4, 1, 1}, {1, 2, 3, 4});
  Literal k = Make(PrimitiveType::kF32, {1, 1, 2}, {1, 10});
  auto r = RunConv(h, a, k);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{1, 30, 2, 40}));
}

TEST(ConvolutionTest, NhwcAndNchwLayouts) {
  Literal k4 = Make(PrimitiveType::kF32, {2, 2, 1, 1}, {1, 2, 3, 4});
  std::vector<double> nine;
  for (int i = 1; i <= 9; ++i) nine.push_back(i);
  Hlo nhwc(R"(a = f32[1,3,3,1] parameter(0)
  k = f32[2,2,1,1] parameter(1)
  ROOT c = f32[1,2,2,1] convolution(a, k), window={size=2x2}, dim_labels=b01f_01io->b01f)");
  Literal a = Make(PrimitiveType::kF32, {1, 3, 3, 1}, nine);
  auto r = RunConv(nhwc, a, k4);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{37, 47, 67, 77}));

  Hlo nchw(R"(a = f32[1,1,3,3] parameter(0)
  k = f32[1,1,2,2] parameter(1)
  ROOT c = f32[1,1,2,2] convolution(a, k), window={size=2x2}, dim_labels=bf01_oi01->bf01)");
  Literal a2 = Make(PrimitiveType::kF32, {1, 1, 3, 3}, nine);
  Literal k2 = Make(PrimitiveType::kF32, {1, 1, 2, 2}, {1, 2, 3, 4});
  auto r2 = RunConv(nchw, a2, k2);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(Values(*r2), (std::vector<double>{37, 47, 67, 77}));

  // Output with features first and the spatial dimensions swapped.
  Hlo odd(R"(a = f32[1,3,3,1] parameter(0)
  k = f32[2,2,1,1] parameter(1)
  ROOT c = f32[1,2,2,1] convolution(a, k), window={size=2x2}, dim_labels=b01f_01io->f10b)");
  auto r3 = RunConv(odd, a, k4);
  ASSERT_TRUE(r3.ok()) << r3.status();
  EXPECT_EQ(Values(*r3), (std::vector<double>{37, 67, 47, 77}));
}

TEST(ConvolutionTest, TwoFeaturesAndBatches) {
  // 2 batches, 2 input features, 3 output features, 1x1 window: a matmul
  // over features per position.
  Hlo h(R"(a = f32[2,1,2] parameter(0)
  k = f32[1,2,3] parameter(1)
  ROOT c = f32[2,1,3] convolution(a, k), window={size=1}, dim_labels=b0f_0io->b0f)");
  Literal a = Make(PrimitiveType::kF32, {2, 1, 2}, {1, 2, 3, 4});
  Literal k = Make(PrimitiveType::kF32, {1, 2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = RunConv(h, a, k);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{9, 12, 15, 19, 26, 33}));
}

TEST(ConvolutionTest, IntegerResultsSaturate) {
  Hlo h(R"(a = s8[1,2,1] parameter(0)
  k = s8[2,1,1] parameter(1)
  ROOT c = s8[1,1,1] convolution(a, k), window={size=2}, dim_labels=b0f_0io->b0f)");
  Literal a = Make(PrimitiveType::kS8, {1, 2, 1}, {100, 100});
  Literal k = Make(PrimitiveType::kS8, {2, 1, 1}, {100, -1});
  auto r = RunConv(h, a, k);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetAsInt64(0), 127);
  Hlo w(R"(a = s8[1,2,1] parameter(0)
  k = s8[2,1,1] parameter(1)
  ROOT c = s32[1,1,1] convolution(a, k), window={size=2}, dim_labels=b0f_0io->b0f)");
  auto r2 = RunConv(w, a, k);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(r2->GetAsInt64(0), 9900);
}

// Direct transcription of the operation's definition (NHWC input, HWIO
// kernel, NHWC output): sums over window positions in row-major order,
// then input features of the group, in f32.
std::vector<float> ReferenceConv(const std::vector<float>& x, int n, int h,
                                 int w, int c, const std::vector<float>& k,
                                 int kh, int kw, int ko, int stride, int pad,
                                 int fgc, int bgc, int oh, int ow) {
  const int ci = c / fgc;
  const int on = n / bgc;
  std::vector<float> out(on * oh * ow * ko);
  for (int b = 0; b < on; ++b) {
    for (int y = 0; y < oh; ++y) {
      for (int xx = 0; xx < ow; ++xx) {
        for (int z = 0; z < ko; ++z) {
          const int fg = z / (ko / fgc);
          const int bg = z / (ko / bgc);
          float acc = 0;
          for (int i = 0; i < kh; ++i) {
            for (int j = 0; j < kw; ++j) {
              const int iy = y * stride - pad + i;
              const int ix = xx * stride - pad + j;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              for (int f = 0; f < ci; ++f) {
                const int bb = b + bg * on;
                acc += x[((bb * h + iy) * w + ix) * c + fg * ci + f] *
                       k[((i * kw + j) * ci + f) * ko + z];
              }
            }
          }
          out[((b * oh + y) * ow + xx) * ko + z] = acc;
        }
      }
    }
  }
  return out;
}

TEST(ConvolutionTest, MatchesTheDefinitionBitForBit) {
  struct Case {
    int n, c, ko, fgc, bgc;
  };
  for (const Case& t :
       {Case{2, 4, 6, 2, 1}, Case{4, 3, 4, 1, 2}, Case{1, 5, 3, 1, 1}}) {
    const int h = 5, w = 5, kh = 3, kw = 3, oh = 3, ow = 3;
    std::vector<float> x(t.n * h * w * t.c), k(kh * kw * (t.c / t.fgc) * t.ko);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * i) * 3.1f;
    for (size_t i = 0; i < k.size(); ++i) k[i] = std::cos(0.91 * i) / 7.0f;
    const std::string body =
        "a = f32[" + std::to_string(t.n) + ",5,5," + std::to_string(t.c) +
        "] parameter(0)\n  k = f32[3,3," + std::to_string(t.c / t.fgc) + "," +
        std::to_string(t.ko) + "] parameter(1)\n  ROOT c = f32[" +
        std::to_string(t.n / t.bgc) + ",3,3," + std::to_string(t.ko) +
        "] convolution(a, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, "
        "dim_labels=b01f_01io->b01f, feature_group_count=" +
        std::to_string(t.fgc) + ", batch_group_count=" + std::to_string(t.bgc);
    Hlo hlo(body);
    Literal a(Shape(PrimitiveType::kF32, {t.n, h, w, t.c}));
    Literal kl(Shape(PrimitiveType::kF32, {kh, kw, t.c / t.fgc, t.ko}));
    std::memcpy(a.mutable_data(), x.data(), x.size() * 4);
    std::memcpy(kl.mutable_data(), k.data(), k.size() * 4);
    auto r = RunConv(hlo, a, kl);
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<float> expect = ReferenceConv(x, t.n, h, w, t.c, k, kh, kw,
                                              t.ko, 2, 1, t.fgc, t.bgc, oh, ow);
    ASSERT_EQ(r->element_count(), static_cast<int64_t>(expect.size()));
    for (size_t i = 0; i < expect.size(); ++i) {
      ASSERT_EQ(r->GetAsDouble(i), expect[i]) << i;
    }
  }
}

TEST(ConvolutionTest, MismatchedShapesAreErrors) {
  Hlo h(R"(a = f32[1,5,1] parameter(0)
  k = f32[3,1,1] parameter(1)
  ROOT c = f32[1,3,1] convolution(a, k), window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f)");
  Literal a = Make(PrimitiveType::kF32, {1, 8, 1}, {});
  Literal k = Make(PrimitiveType::kF32, {3, 1, 1}, {});
  EXPECT_FALSE(RunConv(h, a, k).ok());
  Literal k2 = Make(PrimitiveType::kF32, {3, 2, 1}, {});
  Literal a2 = Make(PrimitiveType::kF32, {1, 5, 1}, {});
  EXPECT_FALSE(RunConv(h, a2, k2).ok());
}

// ---------------------------------------------------------------------------

absl::StatusOr<Literal> RunRagged(const Hlo& h, const Literal& a,
                                  const Literal& b, const Literal& g) {
  const Literal* ops[] = {&a, &b, &g};
  return EvalRaggedDot(h.root(), ops);
}

TEST(DotTest, RaggedNonContracting) {
  Hlo h(R"(a = f32[4,2] parameter(0)
  b = f32[2,2,1] parameter(1)
  g = s32[2] parameter(2)
  ROOT d = f32[4,1] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0})");
  Literal a = Make(PrimitiveType::kF32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Literal b = Make(PrimitiveType::kF32, {2, 2, 1}, {1, 10, 100, 1000});
  Literal g = Make(PrimitiveType::kS32, {2}, {1, 2});
  auto r = RunRagged(h, a, b, g);
  ASSERT_TRUE(r.ok()) << r.status();
  // Row 0 in group 0, rows 1-2 in group 1, row 3 in none.
  EXPECT_EQ(Values(*r), (std::vector<double>{21, 4300, 6500, 0}));
}

TEST(DotTest, RaggedContracting) {
  Hlo h(R"(a = f32[2,4] parameter(0)
  b = f32[4,1] parameter(1)
  g = s32[2] parameter(2)
  ROOT d = f32[2,2,1] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1})");
  Literal a = Make(PrimitiveType::kF32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Literal b = Make(PrimitiveType::kF32, {4, 1}, {1, 1, 1, 1});
  Literal g = Make(PrimitiveType::kS32, {2}, {3, 1});
  auto r = RunRagged(h, a, b, g);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{6, 18, 4, 8}));
}

TEST(DotTest, RaggedBatch) {
  Hlo h(R"(a = f32[2,1,2] parameter(0)
  b = f32[2,2,1] parameter(1)
  g = s32[2] parameter(2)
  ROOT d = f32[2,1,1] ragged-dot(a, b, g), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, lhs_ragged_dims={0})");
  Literal a = Make(PrimitiveType::kF32, {2, 1, 2}, {1, 2, 3, 4});
  Literal b = Make(PrimitiveType::kF32, {2, 2, 1}, {1, 1, 2, 2});
  Literal g = Make(PrimitiveType::kS32, {2}, {1, 1});
  auto r = RunRagged(h, a, b, g);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{3, 14}));
}

}  // namespace
}  // namespace hlogym
