#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/eval/interpreter.h"
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

Literal Scalar(PrimitiveType t, double v) { return Make(t, {}, {v}); }

std::vector<double> Values(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

// A scalar function backed by a C++ lambda (test-only stand-in for the
// interpreter's compiled reducers).
class LambdaFunction : public ScalarFunction {
 public:
  using Fn = std::function<void(const uint8_t* const*, uint8_t* const*)>;
  LambdaFunction(Fn fn, std::optional<Opcode> op)
      : fn_(std::move(fn)), op_(op) {}
  absl::Status Call(const uint8_t* const* args,
                    uint8_t* const* results) override {
    ++calls;
    fn_(args, results);
    return absl::OkStatus();
  }
  std::optional<Opcode> binary_opcode() const override { return op_; }
  int64_t calls = 0;

 private:
  Fn fn_;
  std::optional<Opcode> op_;
};

class TestContext : public KernelContext {
 public:
  void Set(const Computation* c, LambdaFunction* f) { fns_[c] = f; }
  absl::StatusOr<ScalarFunction*> GetScalarFunction(
      const Computation* c) override {
    auto it = fns_.find(c);
    if (it == fns_.end()) return absl::NotFoundError("no function");
    return it->second;
  }

 private:
  std::map<const Computation*, LambdaFunction*> fns_;
};

template <typename T>
T Get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void Put(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Binary f32 function; `fast` exposes the opcode so kernels take the typed
// path, otherwise every element goes through Call.
LambdaFunction F32Binary(Opcode op, std::function<float(float, float)> f,
                         bool fast) {
  return LambdaFunction(
      [f](const uint8_t* const* a, uint8_t* const* r) {
        Put<float>(r[0], f(Get<float>(a[0]), Get<float>(a[1])));
      },
      fast ? std::optional<Opcode>(op) : std::nullopt);
}

constexpr char kComputations[] = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ge {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = pred[] compare(x, y), direction=GE
}
)";

class Hlo {
 public:
  // `extra` holds computations placed before the entry.
  Hlo(const std::string& body, const std::string& extra = kComputations) {
    auto m =
        ParseModule("HloModule m\n" + extra + "\nENTRY e {\n" + body + "\n}\n");
    EXPECT_TRUE(m.ok()) << m.status();
    if (m.ok()) module_ = std::move(*m);
  }
  const Instruction& root() const {
    return *module_->entry_computation()->root_instruction();
  }
  const Computation* comp(const std::string& name) const {
    return module_->FindComputation(name);
  }

 private:
  std::unique_ptr<Module> module_;
};

float Add(float a, float b) { return a + b; }

// Runs `inst` with the reducer `add` as fast and as general path and
// checks both agree; returns the fast result.
absl::StatusOr<Literal> ReduceBoth(
    const Hlo& h, std::vector<const Literal*> ops,
    std::function<absl::StatusOr<Literal>(const Instruction&, Operands,
                                          KernelContext&)>
        eval) {
  LambdaFunction fast = F32Binary(Opcode::kAdd, Add, true);
  LambdaFunction slow = F32Binary(Opcode::kAdd, Add, false);
  TestContext cf, cs;
  cf.Set(h.comp("add"), &fast);
  cs.Set(h.comp("add"), &slow);
  auto a = eval(h.root(), ops, cf);
  auto b = eval(h.root(), ops, cs);
  if (!a.ok()) return a;
  if (!b.ok()) return b;
  EXPECT_EQ(fast.calls, 0);
  EXPECT_GT(slow.calls, 0);
  EXPECT_EQ(*a, *b);
  return a;
}

TEST(ReduceTest, SumOverEachDimension) {
  Literal a = Make(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Literal zero = Scalar(PrimitiveType::kF32, 0);
  Literal ten = Scalar(PrimitiveType::kF32, 10);
  Hlo rows(R"(a = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2] reduce(a, z), dimensions={1}, to_apply=add)");
  auto r = ReduceBoth(rows, {&a, &zero}, EvalReduce);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{6, 15}));
  Hlo cols(R"(a = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[3] reduce(a, z), dimensions={0}, to_apply=add)");
  auto c = ReduceBoth(cols, {&a, &ten}, EvalReduce);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Values(*c), (std::vector<double>{15, 17, 19}));
  Hlo all(R"(a = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[] reduce(a, z), dimensions={0,1}, to_apply=add)");
  auto s = ReduceBoth(all, {&a, &ten}, EvalReduce);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(Values(*s), (std::vector<double>{31}));
  Hlo none(R"(a = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2,3] reduce(a, z), dimensions={}, to_apply=add)");
  auto n = ReduceBoth(none, {&a, &ten}, EvalReduce);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(Values(*n), (std::vector<double>{11, 12, 13, 14, 15, 16}));
}

TEST(ReduceTest, InterleavedDimensionsMatchGeneralPath) {
  std::vector<double> v;
  for (int i = 0; i < 4 * 5 * 6; ++i) v.push_back(std::sin(i) * 1000);
  Literal a = Make(PrimitiveType::kF32, {4, 5, 6}, v);
  Literal zero = Scalar(PrimitiveType::kF32, 0.5);
  Hlo h(R"(a = f32[4,5,6] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[5] reduce(a, z), dimensions={0,2}, to_apply=add)");
  auto r = ReduceBoth(h, {&a, &zero}, EvalReduce);
  ASSERT_TRUE(r.ok()) << r.status();
  // Row-major order of the reduced elements, starting from the init.
  for (int j = 0; j < 5; ++j) {
    float acc = 0.5f;
    for (int i = 0; i < 4; ++i) {
      for (int k = 0; k < 6; ++k) {
        acc += static_cast<float>(v[(i * 5 + j) * 6 + k]);
      }
    }
    EXPECT_EQ(r->GetAsDouble(j), acc) << j;
  }
}

TEST(ReduceTest, VariadicArgmax) {
  Hlo h(R"(a = f32[2,3] parameter(0)
  i = s32[2,3] parameter(1)
  z = f32[] parameter(2)
  zi = s32[] parameter(3)
  ROOT r = (f32[2], s32[2]) reduce(a, i, z, zi), dimensions={1}, to_apply=argmax)",
        R"(argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  v = f32[] select(gt, av, bv)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
})");
  // Keeps the accumulator unless the value is strictly larger, or equal
  // with a smaller index.
  LambdaFunction argmax(
      [](const uint8_t* const* a, uint8_t* const* r) {
        float av = Get<float>(a[0]), bv = Get<float>(a[2]);
        int32_t ai = Get<int32_t>(a[1]), bi = Get<int32_t>(a[3]);
        bool take = bv > av || (bv == av && bi < ai);
        Put<float>(r[0], take ? bv : av);
        Put<int32_t>(r[1], take ? bi : ai);
      },
      std::nullopt);
  TestContext ctx;
  ctx.Set(h.comp("argmax"), &argmax);
  Literal a = Make(PrimitiveType::kF32, {2, 3}, {1, 5, 3, 7, 7, 2});
  Literal idx = Make(PrimitiveType::kS32, {2, 3}, {0, 1, 2, 0, 1, 2});
  Literal ninf = Scalar(PrimitiveType::kF32, -INFINITY);
  Literal zi = Scalar(PrimitiveType::kS32, 0);
  const Literal* ops[] = {&a, &idx, &ninf, &zi};
  auto r = EvalReduce(h.root(), ops, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->tuple_elements().size(), 2u);
  EXPECT_EQ(Values(r->tuple_elements()[0]), (std::vector<double>{5, 7}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (std::vector<double>{1, 0}));
  EXPECT_EQ(argmax.calls, 6);
}

TEST(ReduceTest, Bf16AccumulatesInBf16) {
  Hlo h(R"(a = bf16[5] parameter(0)
  z = bf16[] parameter(1)
  ROOT r = bf16[] reduce(a, z), dimensions={0}, to_apply=addb)",
        R"(addb {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
})");
  LambdaFunction add([](const uint8_t* const*, uint8_t* const*) {},
                     Opcode::kAdd);
  TestContext ctx;
  ctx.Set(h.comp("addb"), &add);
  // 256 + 1 rounds back to 256 at every step (ties to even).
  Literal a = Make(PrimitiveType::kBF16, {5}, {256, 1, 1, 1, 1});
  Literal z = Scalar(PrimitiveType::kBF16, 0);
  const Literal* ops[] = {&a, &z};
  auto r = EvalReduce(h.root(), ops, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{256}));
}

TEST(ReduceTest, MaxPropagatesNanAndIntegersWrap) {
  Hlo h(R"(a = f32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add)");
  LambdaFunction mx([](const uint8_t* const*, uint8_t* const*) {},
                    Opcode::kMaximum);
  TestContext ctx;
  ctx.Set(h.comp("add"), &mx);
  Literal a = Make(PrimitiveType::kF32, {3}, {1, NAN, 3});
  Literal z = Scalar(PrimitiveType::kF32, -INFINITY);
  const Literal* ops[] = {&a, &z};
  auto r = EvalReduce(h.root(), ops, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(std::isnan(r->GetAsDouble(0)));

  Hlo hi(R"(a = s8[2] parameter(0)
  z = s8[] parameter(1)
  ROOT r = s8[] reduce(a, z), dimensions={0}, to_apply=adds)",
         R"(adds {
  x = s8[] parameter(0)
  y = s8[] parameter(1)
  ROOT s = s8[] add(x, y)
})");
  LambdaFunction add([](const uint8_t* const*, uint8_t* const*) {},
                     Opcode::kAdd);
  TestContext ci;
  ci.Set(hi.comp("adds"), &add);
  Literal b = Make(PrimitiveType::kS8, {2}, {100, 100});
  Literal zi = Scalar(PrimitiveType::kS8, 0);
  const Literal* ops2[] = {&b, &zi};
  auto s = EvalReduce(hi.root(), ops2, ci);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->GetAsInt64(0), -56);
}

TEST(ReduceTest, LargeReductionsAreFast) {
  Literal a(Shape(PrimitiveType::kF32, {1024, 1024}));
  for (int64_t i = 0; i < 1024 * 1024; ++i) a.SetFromDouble(i, i % 3);
  Literal z = Scalar(PrimitiveType::kF32, 0);
  LambdaFunction add = F32Binary(Opcode::kAdd, Add, true);
  for (const char* dim : {"0", "1"}) {
    Hlo h(std::string(R"(a = f32[1024,1024] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[1024] reduce(a, z), dimensions={)") +
          dim + "}, to_apply=add");
    TestContext ctx;
    ctx.Set(h.comp("add"), &add);
    const Literal* ops[] = {&a, &z};
    auto start = std::chrono::steady_clock::now();
    auto r = EvalReduce(h.root(), ops, ctx);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_LT(ms, 30.0) << "dimension " << dim;
    EXPECT_EQ(r->GetAsDouble(0), dim[0] == '0' ? 1023 : 1023);
  }
}

TEST(ReduceTest, BadOperandsAreErrors) {
  Hlo h(R"(a = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2] reduce(a, z), dimensions={1}, to_apply=add)");
  LambdaFunction add = F32Binary(Opcode::kAdd, Add, true);
  TestContext ctx;
  ctx.Set(h.comp("add"), &add);
  Literal a = Make(PrimitiveType::kF32, {3, 3}, {});
  Literal z = Scalar(PrimitiveType::kF32, 0);
  const Literal* ops[] = {&a, &z};
  EXPECT_FALSE(EvalReduce(h.root(), ops, ctx).ok());
  const Literal* one[] = {&a};
  EXPECT_FALSE(EvalReduce(h.root(), one, ctx).ok());
  Literal v = Make(PrimitiveType::kF32, {2}, {});
  const Literal* nonscalar[] = {&a, &v};
  EXPECT_FALSE(EvalReduce(h.root(), nonscalar, ctx).ok());
}

// ---------------------------------------------------------------------------

TEST(ReduceWindowTest, PaddingIsSkipped) {
  Hlo h(R"(a = f32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[4] reduce-window(a, z), window={size=2 pad=1_1}, to_apply=add)");
  Literal a = Make(PrimitiveType::kF32, {3}, {1, 2, 3});
  Literal ten = Scalar(PrimitiveType::kF32, 10);
  auto r = ReduceBoth(h, {&a, &ten}, EvalReduceWindow);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{11, 13, 15, 13}));
}

TEST(ReduceWindowTest, BaseDilationHolesAreSkipped) {
  // Base 1 _ 2 _ 3: each window holds one element and one hole.
  Hlo h(R"(a = f32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[4] reduce-window(a, z), window={size=2 lhs_dilate=2}, to_apply=add)");
  Literal a = Make(PrimitiveType::kF32, {3}, {1, 2, 3});
  Literal ten = Scalar(PrimitiveType::kF32, 10);
  auto r = ReduceBoth(h, {&a, &ten}, EvalReduceWindow);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{11, 12, 12, 13}));
}

TEST(ReduceWindowTest, WindowDilationAndStride) {
  Hlo h(R"(a = f32[6] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2] reduce-window(a, z), window={size=2 stride=2 rhs_dilate=3}, to_apply=add)");
  Literal a = Make(PrimitiveType::kF32, {6}, {1, 2, 3, 4, 5, 6});
  Literal zero = Scalar(PrimitiveType::kF32, 0);
  auto r = ReduceBoth(h, {&a, &zero}, EvalReduceWindow);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{1 + 4, 3 + 6}));
}

// Random 2-D windows (sizes, strides, padding, base and window dilation)
// against a direct evaluation of the definition: position
// o * stride + w * window_dilation - padding_low of the dilated, padded
// input, an element when it is a multiple of base_dilation inside it.
TEST(ReduceWindowTest, RandomWindowsMatchTheDefinition) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t in[2] = {pick(1, 7), pick(1, 7)};
    int64_t size[2], stride[2], lo[2], hi[2], bd[2], wd[2], out[2];
    std::string window = "size=";
    std::string parts[6];
    for (int d = 0; d < 2; ++d) {
      size[d] = pick(1, 5);
      stride[d] = pick(1, 3);
      lo[d] = pick(0, 4);
      hi[d] = pick(0, 4);
      bd[d] = pick(1, 3);
      wd[d] = pick(1, 3);
      const int64_t padded = (in[d] - 1) * bd[d] + 1 + lo[d] + hi[d];
      const int64_t span = (size[d] - 1) * wd[d] + 1;
      out[d] = padded < span ? 0 : (padded - span) / stride[d] + 1;
    }
    if (out[0] == 0 || out[1] == 0) continue;
    auto pair = [](int64_t a, int64_t b) {
      return std::to_string(a) + "x" + std::to_string(b);
    };
    window = "size=" + pair(size[0], size[1]) +
             " stride=" + pair(stride[0], stride[1]) +
             " pad=" + std::to_string(lo[0]) + "_" + std::to_string(hi[0]) +
             "x" + std::to_string(lo[1]) + "_" + std::to_string(hi[1]) +
             " lhs_dilate=" + pair(bd[0], bd[1]) +
             " rhs_dilate=" + pair(wd[0], wd[1]);
    const std::string shape_in = pair(in[0], in[1]);
    Hlo h("a = f32[" + std::to_string(in[0]) + "," + std::to_string(in[1]) +
          "] parameter(0)\n  z = f32[] parameter(1)\n  ROOT r = f32[" +
          std::to_string(out[0]) + "," + std::to_string(out[1]) +
          "] reduce-window(a, z), window={" + window + "}, to_apply=add");
    std::vector<double> values;
    for (int64_t i = 0; i < in[0] * in[1]; ++i) {
      values.push_back(static_cast<double>(1 << (i % 20)));
    }
    std::vector<double> want;
    int64_t reads = 0;
    for (int64_t o0 = 0; o0 < out[0]; ++o0) {
      for (int64_t o1 = 0; o1 < out[1]; ++o1) {
        double sum = 0;
        for (int64_t w0 = 0; w0 < size[0]; ++w0) {
          for (int64_t w1 = 0; w1 < size[1]; ++w1) {
            const int64_t p0 = o0 * stride[0] + w0 * wd[0] - lo[0];
            const int64_t p1 = o1 * stride[1] + w1 * wd[1] - lo[1];
            if (p0 < 0 || p1 < 0 || p0 % bd[0] != 0 || p1 % bd[1] != 0) {
              continue;
            }
            const int64_t i0 = p0 / bd[0], i1 = p1 / bd[1];
            if (i0 >= in[0] || i1 >= in[1]) continue;
            sum += values[i0 * in[1] + i1];
            ++reads;
          }
        }
        want.push_back(sum);
      }
    }
    if (reads == 0)
      continue;  // only padding and holes (ReduceBoth
                 // expects calls)
    Literal a = Make(PrimitiveType::kF32, {in[0], in[1]}, values);
    Literal zero = Scalar(PrimitiveType::kF32, 0);
    auto r = ReduceBoth(h, {&a, &zero}, EvalReduceWindow);
    ASSERT_TRUE(r.ok()) << window << ": " << r.status();
    EXPECT_EQ(Values(*r), want) << window << " on " << shape_in;
    ++checked;
  }
  EXPECT_GT(checked, 150);
}

TEST(ReduceWindowTest, MaxPool2D) {
  Hlo h(R"(a = f32[4,4] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[2,2] reduce-window(a, z), window={size=2x2 stride=2x2}, to_apply=add)");
  std::vector<double> v = {1, 5, 2, 0, 3, 4, 8, 1, 0, 0, 1, 1, 9, 0, 1, 7};
  Literal a = Make(PrimitiveType::kF32, {4, 4}, v);
  Literal ninf = Scalar(PrimitiveType::kF32, -INFINITY);
  LambdaFunction mx = F32Binary(
      Opcode::kMaximum, [](float x, float y) { return x > y ? x : y; }, true);
  LambdaFunction mx_slow = F32Binary(
      Opcode::kMaximum, [](float x, float y) { return x > y ? x : y; }, false);
  for (LambdaFunction* f : {&mx, &mx_slow}) {
    TestContext ctx;
    ctx.Set(h.comp("add"), f);
    const Literal* ops[] = {&a, &ninf};
    auto r = EvalReduceWindow(h.root(), ops, ctx);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Values(*r), (std::vector<double>{5, 8, 9, 7}));
  }
}

TEST(ReduceWindowTest, VariadicWindows) {
  Hlo h(R"(a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  z = f32[] parameter(2)
  ROOT r = (f32[2], f32[2]) reduce-window(a, b, z, z), window={size=2}, to_apply=pair)",
        R"(pair {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  v0 = f32[] parameter(2)
  v1 = f32[] parameter(3)
  s = f32[] add(a0, v0)
  m = f32[] multiply(a1, v1)
  ROOT t = (f32[], f32[]) tuple(s, m)
})");
  // Sums of the first input and products of the second.
  LambdaFunction pair(
      [](const uint8_t* const* a, uint8_t* const* r) {
        Put<float>(r[0], Get<float>(a[0]) + Get<float>(a[2]));
        Put<float>(r[1], Get<float>(a[1]) * Get<float>(a[3]));
      },
      std::nullopt);
  TestContext ctx;
  ctx.Set(h.comp("pair"), &pair);
  Literal a = Make(PrimitiveType::kF32, {3}, {1, 2, 3});
  Literal b = Make(PrimitiveType::kF32, {3}, {2, 3, 4});
  Literal one = Scalar(PrimitiveType::kF32, 1);
  const Literal* ops[] = {&a, &b, &one, &one};
  auto r = EvalReduceWindow(h.root(), ops, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]), (std::vector<double>{4, 6}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (std::vector<double>{6, 12}));
}

TEST(ReduceWindowTest, MismatchedResultIsAnError) {
  Hlo h(R"(a = f32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[4] reduce-window(a, z), window={size=2 pad=1_1}, to_apply=add)");
  LambdaFunction add = F32Binary(Opcode::kAdd, Add, true);
  TestContext ctx;
  ctx.Set(h.comp("add"), &add);
  Literal a = Make(PrimitiveType::kF32, {5}, {});
  Literal z = Scalar(PrimitiveType::kF32, 0);
  const Literal* ops[] = {&a, &z};
  EXPECT_FALSE(EvalReduceWindow(h.root(), ops, ctx).ok());
}

// ---------------------------------------------------------------------------

class SelectAndScatterTest : public ::testing::Test {
 protected:
  absl::StatusOr<Literal> Run(const std::string& body, const Literal& operand,
                              const Literal& source) {
    Hlo h(body);
    TestContext ctx;
    ctx.Set(h.comp("ge"), &ge_);
    ctx.Set(h.comp("add"), &add_);
    Literal zero = Scalar(PrimitiveType::kF32, 0);
    const Literal* ops[] = {&operand, &source, &zero};
    return EvalSelectAndScatter(h.root(), ops, ctx);
  }
  LambdaFunction ge_{[](const uint8_t* const* a, uint8_t* const* r) {
                       r[0][0] = Get<float>(a[0]) >= Get<float>(a[1]) ? 1 : 0;
                     },
                     std::nullopt};
  LambdaFunction add_ = F32Binary(Opcode::kAdd, Add, true);
};

TEST_F(SelectAndScatterTest, MaxPoolGradient) {
  std::vector<double> v = {1, 5, 2, 0, 3, 4, 8, 1, 0, 0, 1, 1, 9, 0, 1, 7};
  auto r = Run(R"(a = f32[4,4] parameter(0)
  s = f32[2,2] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[4,4] select-and-scatter(a, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add)",
               Make(PrimitiveType::kF32, {4, 4}, v),
               Make(PrimitiveType::kF32, {2, 2}, {10, 20, 30, 40}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{0, 10, 0, 0, 0, 0, 20, 0, 0, 0, 0,
                                             0, 30, 0, 0, 40}));
}

TEST_F(SelectAndScatterTest, OverlappingWindowsAccumulate) {
  auto r = Run(R"(a = f32[3] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[3] select-and-scatter(a, s, z), window={size=2}, select=ge, scatter=add)",
               Make(PrimitiveType::kF32, {3}, {1, 3, 2}),
               Make(PrimitiveType::kF32, {2}, {10, 20}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{0, 30, 0}));
}

TEST_F(SelectAndScatterTest, PaddingIsNeverSelectedAndTiesKeepTheFirst) {
  // Negative values: a zero padding value would win if it were considered.
  auto r = Run(R"(a = f32[2] parameter(0)
  s = f32[3] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[2] select-and-scatter(a, s, z), window={size=2 pad=1_1}, select=ge, scatter=add)",
               Make(PrimitiveType::kF32, {2}, {-5, -1}),
               Make(PrimitiveType::kF32, {3}, {1, 2, 4}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{1, 6}));
  auto t = Run(R"(a = f32[2] parameter(0)
  s = f32[1] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[2] select-and-scatter(a, s, z), window={size=2}, select=ge, scatter=add)",
               Make(PrimitiveType::kF32, {2}, {2, 2}),
               Make(PrimitiveType::kF32, {1}, {7}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Values(*t), (std::vector<double>{7, 0}));
}

TEST_F(SelectAndScatterTest, MismatchedSourceIsAnError) {
  auto r = Run(R"(a = f32[3] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[3] select-and-scatter(a, s, z), window={size=2}, select=ge, scatter=add)",
               Make(PrimitiveType::kF32, {3}, {1, 3, 2}),
               Make(PrimitiveType::kF32, {3}, {10, 20, 30}));
  EXPECT_FALSE(r.ok());
}

// End to end through the interpreter: reducers are real computations.
absl::StatusOr<Literal> RunModule(const std::string& text,
                                  std::vector<Literal> args) {
  auto m = ParseModule(text);
  if (!m.ok()) return m.status();
  Interpreter interp;
  return interp.Run(**m, args);
}

TEST(ReduceTest, EndToEndThroughTheInterpreter) {
  auto r = RunModule(std::string("HloModule m\n") + kComputations + R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(a, z), dimensions={1}, to_apply=add
})",
                     {});
  ASSERT_FALSE(r.ok());  // missing argument
  std::vector<Literal> args;
  args.push_back(Make(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  r = RunModule(std::string("HloModule m\n") + kComputations + R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(a, z), dimensions={1}, to_apply=add
})",
                std::move(args));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{6, 15}));
}

TEST_F(SelectAndScatterTest, EndToEndThroughTheInterpreter) {
  std::vector<Literal> args;
  args.push_back(Make(PrimitiveType::kF32, {4}, {1, 5, 7, 2}));
  args.push_back(Make(PrimitiveType::kF32, {2}, {10, 20}));
  auto r = RunModule(std::string("HloModule m\n") + kComputations + R"(
ENTRY e {
  a = f32[4] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(a, s, z), window={size=2 stride=2}, select=ge, scatter=add
})",
                     std::move(args));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{0, 10, 20, 0}));
}

}  // namespace
}  // namespace hlogym
