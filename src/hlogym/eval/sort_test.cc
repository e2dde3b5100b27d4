#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

Literal Lit(PrimitiveType t, DimVector dims, const std::vector<double>& v) {
  Literal l(Shape(t, dims));
  EXPECT_EQ(l.element_count(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (IsFloatingPointType(t)) {
      l.SetFromDouble(i, v[i]);
    } else {
      l.SetFromInt64(i, static_cast<int64_t>(v[i]));
    }
  }
  return l;
}

Literal S32(DimVector dims, const std::vector<double>& v) {
  return Lit(PrimitiveType::kS32, dims, v);
}
Literal F32(DimVector dims, const std::vector<double>& v) {
  return Lit(PrimitiveType::kF32, dims, v);
}

std::vector<double> Values(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

std::vector<uint64_t> Bits(const Literal& l) {
  std::vector<uint64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetBits(i));
  return v;
}

using V = std::vector<double>;

class LambdaFunction : public ScalarFunction {
 public:
  using Fn =
      std::function<absl::Status(const uint8_t* const*, uint8_t* const*)>;
  explicit LambdaFunction(Fn fn) : fn_(fn) {}
  absl::Status Call(const uint8_t* const* args,
                    uint8_t* const* results) override {
    ++calls;
    return fn_(args, results);
  }
  std::optional<Opcode> binary_opcode() const override { return std::nullopt; }
  int64_t calls = 0;

 private:
  Fn fn_;
};

// Gives out one test function for every computation; counts lookups.
class TestContext : public KernelContext {
 public:
  explicit TestContext(LambdaFunction::Fn fn = nullptr) {
    if (fn) f_ = std::make_unique<LambdaFunction>(fn);
  }
  absl::StatusOr<ScalarFunction*> GetScalarFunction(
      const Computation*) override {
    ++lookups;
    if (f_ == nullptr) return absl::InternalError("no function registered");
    return f_.get();
  }
  int64_t lookups = 0;

 private:
  std::unique_ptr<LambdaFunction> f_;
};

int32_t GetS32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

absl::StatusOr<Literal> EvalText(const std::string& text,
                                 const std::vector<Literal>& operands,
                                 TestContext& ctx) {
  auto m = Parse(text);
  if (m == nullptr) return absl::InvalidArgumentError("parse failed");
  std::vector<const Literal*> ptrs;
  for (const Literal& l : operands) ptrs.push_back(&l);
  const Instruction& root = *m->entry_computation()->root_instruction();
  if (root.opcode() == Opcode::kTopK) return EvalTopK(root, ptrs, ctx);
  return EvalSort(root, ptrs, ctx);
}

// ---------------------------------------------------------------------------

TEST(Sort, SingleOperandLessAndGreater) {
  TestContext ctx;  // the fast path needs no function
  auto r = EvalText(R"(
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[5] parameter(0)
  ROOT s = f32[5] sort(p), dimensions={0}, to_apply=lt
})",
                    {F32({5}, {3, -1, 2.5, 0, 2})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{-1, 0, 2, 2.5, 3}));
  // compare(p1, p0) LT sorts descending.
  r = EvalText(R"(
gt {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  ROOT c = pred[] compare(b, a), direction=LT
}
ENTRY e {
  p = s64[4] parameter(0)
  ROOT s = s64[4] sort(p), dimensions={0}, to_apply=gt
})",
               {Lit(PrimitiveType::kS64, {4}, {-5, 7, 0, -9})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{7, 0, -5, -9}));
  // Unsigned keys compare as unsigned.
  r = EvalText(R"(
lt {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = u8[3] parameter(0)
  ROOT s = u8[3] sort(p), dimensions={0}, to_apply=lt
})",
               {Lit(PrimitiveType::kU8, {3}, {200, 1, 128})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{1, 128, 200}));
  EXPECT_EQ(ctx.lookups, 0);
}

const char* kKeyValueSort = R"(
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = s32[4] parameter(0)
  v = f32[4] parameter(1)
  ROOT s = (s32[4], f32[4]) sort(k, v), dimensions={0}, is_stable=true,
    to_apply=lt
})";

TEST(Sort, MultiOperandStableWithEqualKeys) {
  TestContext ctx;
  auto r = EvalText(kKeyValueSort,
                    {S32({4}, {2, 1, 2, 1}), F32({4}, {0, 1, 2, 3})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->shape().IsTuple());
  EXPECT_EQ(Values(r->tuple_elements()[0]), (V{1, 1, 2, 2}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{1, 3, 0, 2}));
}

TEST(Sort, KeyOperandNeedNotBeFirst) {
  // Sorting by the second operand, descending.
  TestContext ctx;
  auto r = EvalText(R"(
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT r = pred[] compare(c, d), direction=GT
}
ENTRY e {
  k = s32[3] parameter(0)
  v = f32[3] parameter(1)
  ROOT s = (s32[3], f32[3]) sort(k, v), dimensions={0}, to_apply=cmp
})",
                    {S32({3}, {10, 20, 30}), F32({3}, {0.5, 2, 1})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]), (V{20, 30, 10}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{2, 1, 0.5}));
}

TEST(Sort, NonLastDimension) {
  TestContext ctx;
  const char* text = R"(
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = s32[3,2] parameter(0)
  ROOT s = s32[3,2] sort(p), dimensions={0}, to_apply=lt
})";
  auto r = EvalText(text, {S32({3, 2}, {3, 0, 1, 5, 2, 4})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{1, 0, 2, 4, 3, 5}));
  // Middle dimension of a rank 3 array: [2,3,2].
  r = EvalText(R"(
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = s32[2,3,2] parameter(0)
  ROOT s = s32[2,3,2] sort(p), dimensions={1}, to_apply=lt
})",
               {S32({2, 3, 2}, {5, 0, 3, 2, 4, 1, 9, 6, 7, 8, 8, 7})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{3, 0, 4, 1, 5, 2, 7, 6, 8, 7, 9, 8}));
}

TEST(Sort, FloatOrders) {
  TestContext ctx;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // TOTALORDER: -NaN < -inf < -1 < -0 < 0 < 1 < inf < NaN.
  Literal in = F32({8}, {1, nan, -0.0, -inf, 0.0, inf, -1, -nan});
  auto r = EvalText(R"(
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  p = f32[8] parameter(0)
  ROOT s = f32[8] sort(p), dimensions={0}, to_apply=lt
})",
                    {in}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Bits(*r), (std::vector<uint64_t>{
                          0xffc00000u, 0xff800000u, 0xbf800000u, 0x80000000u,
                          0u, 0x3f800000u, 0x7f800000u, 0x7fc00000u}));
  // bf16 under the default (partial) order, no NaNs: -0 and 0 tie and keep
  // their input order.
  r = EvalText(R"(
lt {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = bf16[4] parameter(0)
  ROOT s = bf16[4] sort(p), dimensions={0}, is_stable=true, to_apply=lt
})",
               {Lit(PrimitiveType::kBF16, {4}, {0.0, 2, -0.0, -3})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Bits(*r), (std::vector<uint64_t>{0xc040, 0x0000, 0x8000, 0x4000}));
}

TEST(Sort, GeneralComparatorThroughContext) {
  // Two keys: by (k0 ascending, then k1 descending). The comparator is not a
  // single compare, so it is called through the context.
  TestContext ctx([](const uint8_t* const* a, uint8_t* const* r) {
    const int32_t l0 = GetS32(a[0]), r0 = GetS32(a[1]);
    const int32_t l1 = GetS32(a[2]), r1 = GetS32(a[3]);
    r[0][0] = (l0 < r0 || (l0 == r0 && l1 > r1)) ? 1 : 0;
    return absl::OkStatus();
  });
  auto r =
      EvalText(R"(
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  lt0 = pred[] compare(a, b), direction=LT
  eq0 = pred[] compare(a, b), direction=EQ
  gt1 = pred[] compare(c, d), direction=GT
  both = pred[] and(eq0, gt1)
  ROOT r = pred[] or(lt0, both)
}
ENTRY e {
  k0 = s32[5] parameter(0)
  k1 = s32[5] parameter(1)
  ROOT s = (s32[5], s32[5]) sort(k0, k1), dimensions={0}, to_apply=cmp
})",
               {S32({5}, {2, 1, 2, 1, 0}), S32({5}, {1, 5, 3, 7, 9})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]), (V{0, 1, 1, 2, 2}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{9, 7, 5, 3, 1}));
  EXPECT_EQ(ctx.lookups, 1);
}

TEST(Sort, ComparatorErrorsPropagate) {
  TestContext ctx([](const uint8_t* const*, uint8_t* const*) {
    return absl::InternalError("comparator exploded");
  });
  auto r = EvalText(R"(
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  n = s32[] negate(a)
  ROOT r = pred[] compare(n, b), direction=LT
}
ENTRY e {
  p = s32[50] parameter(0)
  ROOT s = s32[50] sort(p), dimensions={0}, to_apply=cmp
})",
                    {S32({50}, std::vector<double>(50, 1))}, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("comparator exploded"),
            std::string::npos);
  // Bad dimension.
  TestContext ctx2;
  r = EvalText(R"(
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = s32[3] parameter(0)
  ROOT my_sort = s32[3] sort(p), dimensions={0}, to_apply=lt
})",
               {S32({4}, {1, 2, 3, 4})}, ctx2);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("%my_sort"),
            std::string::npos);
}

// ---------------------------------------------------------------------------

TEST(TopK, LargestAndSmallestWithTies) {
  TestContext ctx;
  auto r = EvalText(R"(ENTRY e {
    p = f32[6] parameter(0)
    ROOT t = (f32[3], s32[3]) topk(p), k=3, largest=true
  })",
                    {F32({6}, {1, 3, 3, 2, 3, 0})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]), (V{3, 3, 3}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{1, 2, 4}));
  r = EvalText(R"(ENTRY e {
    p = s32[2,4] parameter(0)
    ROOT t = (s32[2,2], s32[2,2]) topk(p), k=2, largest=false
  })",
               {S32({2, 4}, {5, 1, 1, 7, -2, 8, -3, -3})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]), (V{1, 1, -3, -3}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{1, 2, 2, 3}));
}

TEST(TopK, NaNIsLargest) {
  TestContext ctx;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto r = EvalText(R"(ENTRY e {
    p = f32[4] parameter(0)
    ROOT t = (f32[2], s32[2]) topk(p), k=2, largest=true
  })",
                    {F32({4}, {inf, -1, nan, 2})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(std::isnan(r->tuple_elements()[0].GetAsDouble(0)));
  EXPECT_EQ(r->tuple_elements()[0].GetAsDouble(1), inf);
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{2, 0}));
  r = EvalText(R"(ENTRY e {
    p = f32[4] parameter(0)
    ROOT t = (f32[1], s32[1]) topk(p), k=1, largest=false
  })",
               {F32({4}, {0.0, -0.0, 1, 2})}, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{1}));  // -0 < 0
  // k larger than the dimension is an error.
  r = EvalText(R"(ENTRY e {
    p = f32[4] parameter(0)
    ROOT t = (f32[5], s32[5]) topk(p), k=5, largest=true
  })",
               {F32({4}, {1, 2, 3, 4})}, ctx);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

absl::StatusOr<Literal> RunModule(const std::string& text,
                                  const std::vector<Literal>& args) {
  auto m = Parse(text);
  if (m == nullptr) return absl::InvalidArgumentError("parse failed");
  Interpreter interp;
  return interp.Run(*m, args);
}

TEST(SortInterpreter, GeneralComparatorEndToEnd) {
  // Descending by key, ties broken by ascending value: a comparator the
  // fast path does not recognise, evaluated by the interpreter.
  auto r =
      RunModule(R"(
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(c, d), direction=LT
  tie = pred[] and(eq, lt)
  ROOT r = pred[] or(gt, tie)
}
ENTRY e {
  k = s32[6] parameter(0)
  v = f32[6] parameter(1)
  ROOT s = (s32[6], f32[6]) sort(k, v), dimensions={0}, to_apply=cmp
})",
                {S32({6}, {1, 3, 1, 3, 2, 1}), F32({6}, {5, 4, 3, 2, 1, 0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]), (V{3, 3, 2, 1, 1, 1}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{2, 4, 1, 0, 3, 5}));
}

TEST(SortInterpreter, LargeSortsAreFast) {
  const int64_t n = 1 << 20;
  Literal keys(Shape(PrimitiveType::kF32, {n}));
  uint32_t x = 12345;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    keys.SetFromDouble(i, static_cast<double>(x >> 8));
  }
  const char* fast = R"(
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[1048576] parameter(0)
  ROOT s = f32[1048576] sort(p), dimensions={0}, to_apply=lt
})";
  auto start = std::chrono::steady_clock::now();
  auto r = RunModule(fast, {keys});
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  ASSERT_TRUE(r.ok()) << r.status();
  for (int64_t i = 1; i < n; i += 997) {
    ASSERT_LE(r->GetAsDouble(i - 1), r->GetAsDouble(i));
  }
  EXPECT_LT(ms, 1500.0);
  // The same order through a general comparator (negated keys, GT).
  start = std::chrono::steady_clock::now();
  auto g = RunModule(R"(
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  na = f32[] negate(a)
  nb = f32[] negate(b)
  ROOT c = pred[] compare(na, nb), direction=GT
}
ENTRY e {
  p = f32[1048576] parameter(0)
  ROOT s = f32[1048576] sort(p), dimensions={0}, to_apply=cmp
})",
                     {keys});
  double gms = std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - start)
                   .count();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(*g == *r);
  EXPECT_LT(gms, 10000.0);
  std::printf("sort 2^20 f32: fast path %.1f ms, general path %.1f ms\n", ms,
              gms);
}

}  // namespace
}  // namespace hlogym
