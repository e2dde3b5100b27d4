#include <cmath>
#include <complex>
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

Literal MakeC64(DimVector dims, const std::vector<std::complex<double>>& v) {
  Literal l(Shape(PrimitiveType::kC64, std::move(dims)));
  for (size_t i = 0; i < v.size(); ++i) {
    l.SetComplex(static_cast<int64_t>(i), v[i]);
  }
  return l;
}

std::vector<double> Values(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

std::vector<std::complex<double>> Complexes(const Literal& l) {
  std::vector<std::complex<double>> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetComplex(i));
  return v;
}

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
  absl::StatusOr<Literal> Run(std::vector<const Literal*> ops) const {
    return EvalLinalg(root(), ops);
  }

 private:
  std::unique_ptr<Module> module_;
};

TEST(LinalgTest, CholeskyLowerIgnoresTheUpperTriangle) {
  Hlo h(R"(a = f32[3,3] parameter(0)
  ROOT c = f32[3,3] cholesky(a), lower=true)");
  Literal a =
      Make(PrimitiveType::kF32, {3, 3}, {4, 99, 99, 12, 37, 99, -16, -43, 98});
  auto r = h.Run({&a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{2, 0, 0, 6, 1, 0, -8, 5, 3}));
}

TEST(LinalgTest, CholeskyUpper) {
  Hlo h(R"(a = f64[3,3] parameter(0)
  ROOT c = f64[3,3] cholesky(a), lower=false)");
  Literal a =
      Make(PrimitiveType::kF64, {3, 3}, {4, 12, -16, 99, 37, -43, 99, 99, 98});
  auto r = h.Run({&a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{2, 6, -8, 0, 1, 5, 0, 0, 3}));
}

TEST(LinalgTest, CholeskyBatchAndNotPositiveDefinite) {
  Hlo h(R"(a = f32[2,2,2] parameter(0)
  ROOT c = f32[2,2,2] cholesky(a), lower=true)");
  Literal a = Make(PrimitiveType::kF32, {2, 2, 2}, {1, 0, 2, 1, 9, 0, 3, 5});
  auto r = h.Run({&a});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<double> v = Values(*r);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(v[i])) << i;
  EXPECT_EQ(std::vector<double>(v.begin() + 4, v.end()),
            (std::vector<double>{3, 0, 1, 2}));
}

TEST(LinalgTest, CholeskyComplex) {
  Hlo h(R"(a = c64[2,2] parameter(0)
  ROOT c = c64[2,2] cholesky(a), lower=true)");
  // A = L L^H with L = [[2, 0], [i, 1]].
  Literal a = MakeC64({2, 2}, {{4, 0}, {0, -2}, {0, 2}, {2, 0}});
  auto r = h.Run({&a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Complexes(*r), (std::vector<std::complex<double>>{
                               {2, 0}, {0, 0}, {0, 1}, {1, 0}}));
}

absl::StatusOr<Literal> Solve(const std::string& attrs, const Literal& a,
                              const Literal& b, const std::string& bshape) {
  Hlo h("a = f32[2,2] parameter(0)\n  b = " + bshape +
        " parameter(1)\n  ROOT x = " + bshape + " triangular-solve(a, b), " +
        attrs);
  return h.Run({&a, &b});
}

TEST(LinalgTest, TriangularSolveAllSidesAndTriangles) {
  // Lower L = [[2, 0], [1, 4]] and upper U = [[2, 1], [0, 4]]; the unused
  // triangle holds 7s that must be ignored.
  Literal lower = Make(PrimitiveType::kF32, {2, 2}, {2, 7, 1, 4});
  Literal upper = Make(PrimitiveType::kF32, {2, 2}, {2, 1, 7, 4});
  {
    Literal b = Make(PrimitiveType::kF32, {2, 2}, {2, 4, 9, 6});
    auto x = Solve("left_side=true, lower=true, transpose_a=NO_TRANSPOSE",
                   lower, b, "f32[2,2]");
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(Values(*x), (std::vector<double>{1, 2, 2, 1}));
  }
  {
    Literal b = Make(PrimitiveType::kF32, {2, 2}, {4, 9, 8, 4});
    auto x = Solve("left_side=true, lower=false, transpose_a=NO_TRANSPOSE",
                   upper, b, "f32[2,2]");
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(Values(*x), (std::vector<double>{1, 4, 2, 1}));
  }
  {
    Literal b = Make(PrimitiveType::kF32, {1, 2}, {4, 8});
    auto x = Solve("left_side=false, lower=true, transpose_a=NO_TRANSPOSE",
                   lower, b, "f32[1,2]");
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(Values(*x), (std::vector<double>{1, 2}));
  }
  {
    Literal b = Make(PrimitiveType::kF32, {1, 2}, {2, 9});
    auto x = Solve("left_side=false, lower=false, transpose_a=NO_TRANSPOSE",
                   upper, b, "f32[1,2]");
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(Values(*x), (std::vector<double>{1, 2}));
  }
}

TEST(LinalgTest, TriangularSolveTransposeAndUnitDiagonal) {
  Literal lower = Make(PrimitiveType::kF32, {2, 2}, {2, 7, 1, 4});
  {
    // L^T = [[2, 1], [0, 4]].
    Literal b = Make(PrimitiveType::kF32, {2, 2}, {4, 9, 8, 4});
    auto x = Solve("left_side=true, lower=true, transpose_a=TRANSPOSE", lower,
                   b, "f32[2,2]");
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(Values(*x), (std::vector<double>{1, 4, 2, 1}));
  }
  {
    // x L^T = b with x = [1, 2]: b = [1*2 + 2*0, 1*1 + 2*4].
    Literal b = Make(PrimitiveType::kF32, {1, 2}, {2, 9});
    auto x = Solve("left_side=false, lower=true, transpose_a=TRANSPOSE", lower,
                   b, "f32[1,2]");
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(Values(*x), (std::vector<double>{1, 2}));
  }
  {
    Literal unit = Make(PrimitiveType::kF32, {2, 2}, {5, 7, 3, 7});
    Literal b = Make(PrimitiveType::kF32, {2, 1}, {1, 5});
    auto x = Solve(
        "left_side=true, lower=true, unit_diagonal=true, "
        "transpose_a=NO_TRANSPOSE",
        unit, b, "f32[2,1]");
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(Values(*x), (std::vector<double>{1, 2}));
  }
  {
    Hlo h(R"(a = c64[2,2] parameter(0)
  b = c64[2,1] parameter(1)
  ROOT x = c64[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=ADJOINT)");
    // L = [[2, 0], [i, 4]], L^H = [[2, -i], [0, 4]]; x = [1, 1].
    Literal a = MakeC64({2, 2}, {{2, 0}, {9, 9}, {0, 1}, {4, 0}});
    Literal b = MakeC64({2, 1}, {{2, -1}, {4, 0}});
    auto x = h.Run({&a, &b});
    ASSERT_TRUE(x.ok()) << x.status();
    EXPECT_EQ(Complexes(*x),
              (std::vector<std::complex<double>>{{1, 0}, {1, 0}}));
  }
}

TEST(LinalgTest, TriangularSolveBatchAndErrors) {
  Hlo h(R"(a = f32[2,1,1] parameter(0)
  b = f32[2,1,2] parameter(1)
  ROOT x = f32[2,1,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE)");
  Literal a = Make(PrimitiveType::kF32, {2, 1, 1}, {2, 4});
  Literal b = Make(PrimitiveType::kF32, {2, 1, 2}, {2, 4, 4, 8});
  auto x = h.Run({&a, &b});
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(Values(*x), (std::vector<double>{1, 2, 1, 2}));
  Literal bad = Make(PrimitiveType::kF32, {2, 2, 2}, {});
  EXPECT_FALSE(h.Run({&a, &bad}).ok());
  EXPECT_FALSE(h.Run({&a}).ok());
}

TEST(LinalgTest, FftAndIfft) {
  Hlo f(R"(a = c64[4] parameter(0)
  ROOT f = c64[4] fft(a), fft_type=FFT, fft_length={4})");
  Literal a = MakeC64({4}, {{1, 0}, {2, 0}, {3, 0}, {4, 0}});
  auto r = f.Run({&a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Complexes(*r), (std::vector<std::complex<double>>{
                               {10, 0}, {-2, 2}, {-2, 0}, {-2, -2}}));
  Hlo i(R"(a = c64[4] parameter(0)
  ROOT f = c64[4] fft(a), fft_type=IFFT, fft_length={4})");
  auto back = i.Run({&*r});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, a);
}

TEST(LinalgTest, Fft2DAndOddLength) {
  Hlo f(R"(a = c64[2,2] parameter(0)
  ROOT f = c64[2,2] fft(a), fft_type=FFT, fft_length={2,2})");
  Literal a = MakeC64({2, 2}, {{1, 0}, {2, 0}, {3, 0}, {4, 0}});
  auto r = f.Run({&a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Complexes(*r), (std::vector<std::complex<double>>{
                               {10, 0}, {-2, 0}, {-4, 0}, {0, 0}}));
  Hlo odd(R"(a = c64[3] parameter(0)
  ROOT f = c64[3] fft(a), fft_type=FFT, fft_length={3})");
  Literal b = MakeC64({3}, {{1, 0}, {2, 0}, {3, 0}});
  auto o = odd.Run({&b});
  ASSERT_TRUE(o.ok()) << o.status();
  // 6, -1.5 + i*sqrt(3)/2, -1.5 - i*sqrt(3)/2.
  std::vector<std::complex<double>> v = Complexes(*o);
  EXPECT_EQ(v[0], std::complex<double>(6, 0));
  EXPECT_NEAR(v[1].real(), -1.5, 1e-6);
  EXPECT_NEAR(v[1].imag(), std::sqrt(3.0) / 2, 1e-6);
  EXPECT_NEAR(v[2].real(), -1.5, 1e-6);
  EXPECT_NEAR(v[2].imag(), -std::sqrt(3.0) / 2, 1e-6);
}

TEST(LinalgTest, RfftAndIrfft) {
  Hlo f(R"(a = f32[4] parameter(0)
  ROOT f = c64[3] fft(a), fft_type=RFFT, fft_length={4})");
  Literal a = Make(PrimitiveType::kF32, {4}, {1, 2, 3, 4});
  auto r = f.Run({&a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Complexes(*r),
            (std::vector<std::complex<double>>{{10, 0}, {-2, 2}, {-2, 0}}));
  Hlo i(R"(a = c64[3] parameter(0)
  ROOT f = f32[4] fft(a), fft_type=IRFFT, fft_length={4})");
  auto back = i.Run({&*r});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Values(*back), (std::vector<double>{1, 2, 3, 4}));
  // Odd length 3: [1, 2, 3] -> 6, -1.5 + 0.866i; and back.
  Hlo f3(R"(a = f64[3] parameter(0)
  ROOT f = c128[2] fft(a), fft_type=RFFT, fft_length={3})");
  Literal c = Make(PrimitiveType::kF64, {3}, {1, 2, 3});
  auto r3 = f3.Run({&c});
  ASSERT_TRUE(r3.ok()) << r3.status();
  Hlo i3(R"(a = c128[2] parameter(0)
  ROOT f = f64[3] fft(a), fft_type=IRFFT, fft_length={3})");
  auto b3 = i3.Run({&*r3});
  ASSERT_TRUE(b3.ok()) << b3.status();
  std::vector<double> v = Values(*b3);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(v[k], k + 1, 1e-12);
}

TEST(LinalgTest, Rfft2D) {
  Hlo f(R"(a = f32[2,4] parameter(0)
  ROOT f = c64[2,3] fft(a), fft_type=RFFT, fft_length={2,4})");
  Literal a = Make(PrimitiveType::kF32, {2, 4}, {1, 2, 3, 4, 0, 0, 0, 0});
  auto r = f.Run({&a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Complexes(*r),
            (std::vector<std::complex<double>>{
                {10, 0}, {-2, 2}, {-2, 0}, {10, 0}, {-2, 2}, {-2, 0}}));
  Hlo i(R"(a = c64[2,3] parameter(0)
  ROOT f = f32[2,4] fft(a), fft_type=IRFFT, fft_length={2,4})");
  auto back = i.Run({&*r});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, a);
}

TEST(LinalgTest, FftWrongLengthIsAnError) {
  Hlo f(R"(a = c64[4] parameter(0)
  ROOT f = c64[4] fft(a), fft_type=FFT, fft_length={4})");
  Literal a = MakeC64({5}, {});
  EXPECT_FALSE(f.Run({&a}).ok());
}

TEST(LinalgTest, BatchNormTraining) {
  Hlo h(R"(x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  ROOT b = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1)");
  Literal x = Make(PrimitiveType::kF32, {2, 2}, {1, 2, 3, 6});
  Literal s = Make(PrimitiveType::kF32, {2}, {1, 2});
  Literal o = Make(PrimitiveType::kF32, {2}, {0, 1});
  auto r = h.Run({&x, &s, &o});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]),
            (std::vector<double>{-1, -1, 1, 3}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (std::vector<double>{2, 4}));
  EXPECT_EQ(Values(r->tuple_elements()[2]), (std::vector<double>{1, 4}));
}

TEST(LinalgTest, BatchNormInference) {
  Hlo h(R"(x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  m = f32[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT b = f32[2,2] batch-norm-inference(x, s, o, m, v), epsilon=1, feature_index=1)");
  Literal x = Make(PrimitiveType::kF32, {2, 2}, {1, 2, 3, 6});
  Literal s = Make(PrimitiveType::kF32, {2}, {1, 2});
  Literal o = Make(PrimitiveType::kF32, {2}, {0, 1});
  Literal m = Make(PrimitiveType::kF32, {2}, {2, 4});
  Literal v = Make(PrimitiveType::kF32, {2}, {0, 3});
  auto r = h.Run({&x, &s, &o, &m, &v});
  ASSERT_TRUE(r.ok()) << r.status();
  // scale' = [1, 1], shift = [-2, -3].
  EXPECT_EQ(Values(*r), (std::vector<double>{-1, -1, 1, 3}));
}

TEST(LinalgTest, BatchNormGrad) {
  Hlo h(R"(x = f32[3,1] parameter(0)
  s = f32[1] parameter(1)
  m = f32[1] parameter(2)
  v = f32[1] parameter(3)
  g = f32[3,1] parameter(4)
  ROOT b = (f32[3,1], f32[1], f32[1]) batch-norm-grad(x, s, m, v, g), epsilon=1, feature_index=1)");
  Literal x = Make(PrimitiveType::kF32, {3, 1}, {1, 2, 3});
  Literal s = Make(PrimitiveType::kF32, {1}, {2});
  Literal m = Make(PrimitiveType::kF32, {1}, {0});
  Literal v = Make(PrimitiveType::kF32, {1}, {3});
  Literal g = Make(PrimitiveType::kF32, {3, 1}, {1, 0, 0});
  auto r = h.Run({&x, &s, &m, &v, &g});
  ASSERT_TRUE(r.ok()) << r.status();
  // rsqrt(3 + 1) = 0.5; sum(g * (x - m)) = 1; sum(g) = 1; N = 3.
  const float st = 1.0f / 3.0f;  // scale * rsqrt / N
  EXPECT_EQ(Values(r->tuple_elements()[0]),
            (std::vector<double>{st * 1.75f, st * -1.5f, st * -1.75f}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (std::vector<double>{0.5}));
  EXPECT_EQ(Values(r->tuple_elements()[2]), (std::vector<double>{1}));
}

TEST(LinalgTest, BatchNormBadFeatureOperandIsAnError) {
  Hlo h(R"(x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  ROOT b = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1)");
  Literal x = Make(PrimitiveType::kF32, {2, 2}, {});
  Literal s = Make(PrimitiveType::kF32, {3}, {});
  Literal o = Make(PrimitiveType::kF32, {2}, {});
  EXPECT_FALSE(h.Run({&x, &s, &o}).ok());
  EXPECT_FALSE(h.Run({&x, &o}).ok());
}

}  // namespace
}  // namespace hlogym
