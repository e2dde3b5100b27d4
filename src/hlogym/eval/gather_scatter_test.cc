#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
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

std::vector<double> Values(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

std::vector<double> Iota(int64_t n) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return v;
}

using V = std::vector<double>;

// A scalar function backed by a C++ callable (test only).
class LambdaFunction : public ScalarFunction {
 public:
  using Fn =
      std::function<absl::Status(const uint8_t* const*, uint8_t* const*)>;
  LambdaFunction(Fn fn, std::optional<Opcode> op) : fn_(fn), op_(op) {}
  absl::Status Call(const uint8_t* const* args,
                    uint8_t* const* results) override {
    ++calls;
    return fn_(args, results);
  }
  std::optional<Opcode> binary_opcode() const override { return op_; }
  int64_t calls = 0;

 private:
  Fn fn_;
  std::optional<Opcode> op_;
};

// Hands out the registered function for any computation.
class TestContext : public KernelContext {
 public:
  explicit TestContext(std::unique_ptr<LambdaFunction> f) : f_(std::move(f)) {}
  absl::StatusOr<ScalarFunction*> GetScalarFunction(
      const Computation*) override {
    ++lookups;
    if (f_ == nullptr) return absl::InternalError("no function registered");
    return f_.get();
  }
  LambdaFunction* function() { return f_.get(); }
  int64_t lookups = 0;

 private:
  std::unique_ptr<LambdaFunction> f_;
};

int32_t GetS32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void SetS32(uint8_t* p, int32_t v) { std::memcpy(p, &v, 4); }
float GetF32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}
void SetF32(uint8_t* p, float v) { std::memcpy(p, &v, 4); }

// s32 addition through the general (per-element) path, or with the add
// fast path advertised.
std::unique_ptr<LambdaFunction> AddS32(std::optional<Opcode> op = {}) {
  return std::make_unique<LambdaFunction>(
      [](const uint8_t* const* a, uint8_t* const* r) {
        SetS32(r[0], GetS32(a[0]) + GetS32(a[1]));
        return absl::OkStatus();
      },
      op);
}

absl::StatusOr<Literal> Gather(const std::string& text,
                               const std::vector<Literal>& operands) {
  auto m = Parse(text);
  if (m == nullptr) return absl::InvalidArgumentError("parse failed");
  std::vector<const Literal*> ptrs;
  for (const Literal& l : operands) ptrs.push_back(&l);
  return EvalGather(*m->entry_computation()->root_instruction(), ptrs);
}

absl::StatusOr<Literal> Scatter(const std::string& text,
                                const std::vector<Literal>& operands,
                                TestContext& ctx) {
  auto m = Parse(text);
  if (m == nullptr) return absl::InvalidArgumentError("parse failed");
  std::vector<const Literal*> ptrs;
  for (const Literal& l : operands) ptrs.push_back(&l);
  return EvalScatter(*m->entry_computation()->root_instruction(), ptrs, ctx);
}

// ---------------------------------------------------------------------------

TEST(Gather, EmbeddingLookupClampsIndices) {
  // Rows of [4,3]: row r holds 10r + c.
  Literal table = Lit(PrimitiveType::kF32, {4, 3},
                      {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  const char* text = R"(ENTRY e {
    t = f32[4,3] parameter(0)
    i = s32[4,1] parameter(1)
    ROOT g = f32[4,3] gather(t, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  })";
  auto r = Gather(text, {table, S32({4, 1}, {2, 0, 7, -1})});
  ASSERT_TRUE(r.ok()) << r.status();
  // 7 clamps to row 3, -1 to row 0.
  EXPECT_EQ(Values(*r), (V{20, 21, 22, 0, 1, 2, 30, 31, 32, 0, 1, 2}));
  // index_vector_dim equal to the indices' rank: implicit size-1 vectors;
  // u8 indices.
  auto r2 = Gather(R"(ENTRY e {
    t = f32[4,3] parameter(0)
    i = u8[2] parameter(1)
    ROOT g = f32[2,3] gather(t, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  })",
                   {table, Lit(PrimitiveType::kU8, {2}, {3, 255})});
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(Values(*r2), (V{30, 31, 32, 30, 31, 32}));
  // Offset dimension first in the result: [3, batch].
  auto r3 = Gather(R"(ENTRY e {
    t = f32[4,3] parameter(0)
    i = s32[2] parameter(1)
    ROOT g = f32[3,2] gather(t, i), offset_dims={0}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  })",
                   {table, S32({2}, {1, 2})});
  ASSERT_TRUE(r3.ok()) << r3.status();
  EXPECT_EQ(Values(*r3), (V{10, 20, 11, 21, 12, 22}));
}

TEST(Gather, WindowsWithTwoDimensionalStarts) {
  // [3,3] = 0..8; 2x2 windows at (0,1) and (2,2) -> clamped to (1,1).
  auto r = Gather(R"(ENTRY e {
    t = s32[3,3] parameter(0)
    i = s32[2,2] parameter(1)
    ROOT g = s32[2,2,2] gather(t, i), offset_dims={1,2},
      collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1,
      slice_sizes={2,2}
  })",
                  {S32({3, 3}, Iota(9)), S32({2, 2}, {0, 1, 2, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{1, 2, 4, 5, 4, 5, 7, 8}));
  // start_index_map reversed: the vector's first component is dim 1, and
  // index_vector_dim=0 puts vectors in columns.
  auto r2 = Gather(R"(ENTRY e {
    t = s32[3,3] parameter(0)
    i = s32[2,2] parameter(1)
    ROOT g = s32[2] gather(t, i), offset_dims={},
      collapsed_slice_dims={0,1}, start_index_map={1,0}, index_vector_dim=0,
      slice_sizes={1,1}
  })",
                   {S32({3, 3}, Iota(9)), S32({2, 2}, {0, 2, 1, 1})});
  ASSERT_TRUE(r2.ok()) << r2.status();
  // Vectors (0,1) and (2,1) as (col,row): elements [1][0]=3 and [1][2]=5.
  EXPECT_EQ(Values(*r2), (V{3, 5}));
}

TEST(Gather, BatchingDimensions) {
  // out[b, j] = t[b, idx[b, j]] with operand/indices batching dim 0.
  auto r = Gather(R"(ENTRY e {
    t = s32[2,4] parameter(0)
    i = s32[2,3] parameter(1)
    ROOT g = s32[2,3] gather(t, i), offset_dims={},
      collapsed_slice_dims={1}, start_index_map={1},
      operand_batching_dims={0}, start_indices_batching_dims={0},
      index_vector_dim=2, slice_sizes={1,1}
  })",
                  {S32({2, 4}, {0, 1, 2, 3, 10, 11, 12, 13}),
                   S32({2, 3}, {3, 0, 9, 1, 1, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{3, 0, 3, 11, 11, 12}));
  // Batch dimension second in the indices: indices [3,2] (j, b).
  auto r2 = Gather(R"(ENTRY e {
    t = s32[2,4] parameter(0)
    i = s32[3,2] parameter(1)
    ROOT g = s32[3,2] gather(t, i), offset_dims={},
      collapsed_slice_dims={1}, start_index_map={1},
      operand_batching_dims={0}, start_indices_batching_dims={1},
      index_vector_dim=2, slice_sizes={1,1}
  })",
                   {S32({2, 4}, {0, 1, 2, 3, 10, 11, 12, 13}),
                    S32({3, 2}, {3, 1, 0, 1, 2, 2})});
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(Values(*r2), (V{3, 11, 0, 11, 2, 12}));
}

TEST(Gather, RejectsBadOperands) {
  const char* text = R"(ENTRY e {
    t = f32[4,3] parameter(0)
    i = s32[2,1] parameter(1)
    ROOT my_gather = f32[2,3] gather(t, i), offset_dims={1},
      collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1,
      slice_sizes={1,3}
  })";
  auto r = Gather(text, {Lit(PrimitiveType::kF32, {4, 3}, V(12, 0))});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("%my_gather"),
            std::string::npos);
  r = Gather(text, {Lit(PrimitiveType::kF32, {4, 3}, V(12, 0)),
                    Lit(PrimitiveType::kF32, {2, 1}, {0, 1})});
  EXPECT_FALSE(r.ok());  // float indices
  r = Gather(text, {Lit(PrimitiveType::kF32, {4, 3}, V(12, 0)),
                    S32({3, 1}, {0, 1, 2})});
  EXPECT_FALSE(r.ok());  // batch size does not match the result
}

// ---------------------------------------------------------------------------

const char* kScatterAdd1D = R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  o = s32[5] parameter(0)
  i = s32[5,1] parameter(1)
  u = s32[5] parameter(2)
  ROOT s = s32[5] scatter(o, i, u), update_window_dims={},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=add
})";

TEST(Scatter, AddRepeatedIndicesSkipsOutOfBounds) {
  TestContext ctx(AddS32());
  auto r =
      Scatter(kScatterAdd1D,
              {S32({5}, {100, 100, 100, 100, 100}),
               S32({5, 1}, {1, 1, 3, 7, -1}), S32({5}, {10, 20, 30, 40, 50})},
              ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{100, 130, 100, 130, 100}));
  EXPECT_EQ(ctx.function()->calls, 3);  // skipped indices never combine
}

TEST(Scatter, AddFastPathMatches) {
  // The advertised add runs through BinaryOpKernel when it is available.
  int32_t a = 1, b = 2, c = 0;
  if (!BinaryOpKernel(Opcode::kAdd, PrimitiveType::kS32,
                      reinterpret_cast<const uint8_t*>(&a),
                      reinterpret_cast<const uint8_t*>(&b),
                      reinterpret_cast<uint8_t*>(&c), 1)
           .ok()) {
    GTEST_SKIP() << "BinaryOpKernel not available in this build";
  }
  TestContext ctx(AddS32(Opcode::kAdd));
  auto r =
      Scatter(kScatterAdd1D,
              {S32({5}, {100, 100, 100, 100, 100}),
               S32({5, 1}, {1, 1, 3, 7, -1}), S32({5}, {10, 20, 30, 40, 50})},
              ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{100, 130, 100, 130, 100}));
  EXPECT_EQ(ctx.function()->calls, 0);
}

TEST(Scatter, WindowsPartlyOutOfBoundsAreSkipped) {
  // Windows of 3 at starts 3 (would cover 3..5: skipped entirely, not
  // clamped) and 1 (covers 1..3). Assign combiner: no function call.
  TestContext ctx(nullptr);
  auto r = Scatter(
      R"(
assign {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
ENTRY e {
  o = s32[5] parameter(0)
  i = s32[2,1] parameter(1)
  u = s32[2,3] parameter(2)
  ROOT s = s32[5] scatter(o, i, u), update_window_dims={1},
    inserted_window_dims={}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=assign
})",
      {S32({5}, V(5, 0)), S32({2, 1}, {3, 1}), S32({2, 3}, {1, 2, 3, 4, 5, 6})},
      ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{0, 4, 5, 6, 0}));
  EXPECT_EQ(ctx.lookups, 0);
}

TEST(Scatter, AssignLastUpdateWins) {
  TestContext ctx(nullptr);
  auto r =
      Scatter(R"(
assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  o = f32[3,2] parameter(0)
  i = s32[3] parameter(1)
  u = f32[3,2] parameter(2)
  ROOT s = f32[3,2] scatter(o, i, u), update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=assign
})",
              {Lit(PrimitiveType::kF32, {3, 2}, V(6, -1)), S32({3}, {2, 0, 2}),
               Lit(PrimitiveType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6})},
              ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{3, 4, -1, -1, 5, 6}));
}

TEST(Scatter, VariadicCombinerSeesOperandsThenUpdates) {
  // (o0, o1, u0, u1) -> (o0 + u0, o1 * u1): s32 and f32 together.
  TestContext ctx(std::make_unique<LambdaFunction>(
      [](const uint8_t* const* a, uint8_t* const* r) {
        SetS32(r[0], GetS32(a[0]) + GetS32(a[2]));
        SetF32(r[1], GetF32(a[1]) * GetF32(a[3]));
        return absl::OkStatus();
      },
      std::nullopt));
  auto r =
      Scatter(R"(
comb {
  a0 = s32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = s32[] parameter(2)
  b1 = f32[] parameter(3)
  s = s32[] add(a0, b0)
  m = f32[] multiply(a1, b1)
  ROOT t = (s32[], f32[]) tuple(s, m)
}
ENTRY e {
  o0 = s32[4] parameter(0)
  o1 = f32[4] parameter(1)
  i = s32[3] parameter(2)
  w0 = s32[3] parameter(3)
  w1 = f32[3] parameter(4)
  ROOT s = (s32[4], f32[4]) scatter(o0, o1, i, w0, w1), update_window_dims={},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=comb
})",
              {S32({4}, {1, 1, 1, 1}),
               Lit(PrimitiveType::kF32, {4}, {1, 1, 1, 1}), S32({3}, {0, 2, 0}),
               S32({3}, {5, 6, 7}), Lit(PrimitiveType::kF32, {3}, {2, 3, 4})},
              ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->shape().IsTuple());
  ASSERT_EQ(r->tuple_elements().size(), 2u);
  EXPECT_EQ(Values(r->tuple_elements()[0]), (V{13, 1, 7, 1}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{8, 1, 3, 1}));
}

TEST(Scatter, BatchingDimensions) {
  // o[b, idx[b, j]] += u[b, j].
  TestContext ctx(AddS32());
  auto r = Scatter(R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  o = s32[2,3] parameter(0)
  i = s32[2,2] parameter(1)
  u = s32[2,2] parameter(2)
  ROOT s = s32[2,3] scatter(o, i, u), update_window_dims={},
    inserted_window_dims={1}, scatter_dims_to_operand_dims={1},
    input_batching_dims={0}, scatter_indices_batching_dims={0},
    index_vector_dim=2, to_apply=add
})",
                   {S32({2, 3}, V(6, 0)), S32({2, 2}, {2, 2, 0, 5}),
                    S32({2, 2}, {1, 2, 3, 4})},
                   ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (V{0, 0, 3, 3, 0, 0}));
}

TEST(Scatter, CombinerErrorsPropagate) {
  TestContext ctx(std::make_unique<LambdaFunction>(
      [](const uint8_t* const*, uint8_t* const*) {
        return absl::InternalError("combiner failed");
      },
      std::nullopt));
  auto r = Scatter(
      kScatterAdd1D,
      {S32({5}, V(5, 0)), S32({5, 1}, {1, 1, 3, 7, -1}), S32({5}, V(5, 1))},
      ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("combiner failed"),
            std::string::npos);
  // Wrong operand count.
  r = Scatter(kScatterAdd1D, {S32({5}, V(5, 0)), S32({5, 1}, V(5, 0))}, ctx);
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

TEST(ScatterInterpreter, AddAndAssignEndToEnd) {
  // Through the interpreter's own scalar functions (add fast path, the
  // assign shortcut and a general combiner).
  const std::string common = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(b, a)
}
assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
sub_twice {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  t = f32[] add(b, b)
  ROOT s = f32[] subtract(a, t)
}
ENTRY e {
  o = f32[4,2] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,2] parameter(2)
  a = f32[4,2] scatter(o, i, u), update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=add
  b = f32[4,2] scatter(o, i, u), update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=assign
  c = f32[4,2] scatter(o, i, u), update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=sub_twice
  ROOT t = (f32[4,2], f32[4,2], f32[4,2]) tuple(a, b, c)
})";
  auto r =
      RunModule(common, {Lit(PrimitiveType::kF32, {4, 2}, V(8, 1)),
                         S32({3, 1}, {3, 3, 4}),
                         Lit(PrimitiveType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->tuple_elements().size(), 3u);
  EXPECT_EQ(Values(r->tuple_elements()[0]), (V{1, 1, 1, 1, 1, 1, 5, 7}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (V{1, 1, 1, 1, 1, 1, 3, 4}));
  EXPECT_EQ(Values(r->tuple_elements()[2]), (V{1, 1, 1, 1, 1, 1, -7, -11}));
}

TEST(GatherInterpreter, LargeEmbeddingLookupIsFast) {
  const int64_t rows = 1000, width = 64, lookups = 100000;
  Literal table(Shape(PrimitiveType::kF32, {rows, width}));
  float* t = reinterpret_cast<float*>(table.mutable_data());
  for (int64_t i = 0; i < rows * width; ++i) t[i] = static_cast<float>(i);
  Literal idx(Shape(PrimitiveType::kS32, {lookups}));
  for (int64_t i = 0; i < lookups; ++i) idx.SetFromInt64(i, (i * 7919) % rows);
  auto start = std::chrono::steady_clock::now();
  auto r = RunModule(R"(ENTRY e {
    t = f32[1000,64] parameter(0)
    i = s32[100000] parameter(1)
    ROOT g = f32[100000,64] gather(t, i), offset_dims={1},
      collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1,
      slice_sizes={1,64}
  })",
                     {table, idx});
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  ASSERT_TRUE(r.ok()) << r.status();
  const float* g = reinterpret_cast<const float*>(r->data());
  EXPECT_EQ(g[12345 * width + 5], t[((12345 * 7919) % rows) * width + 5]);
  EXPECT_LT(ms, 500.0);
}

TEST(ScatterInterpreter, LargeScatterAddIsFast) {
  const int64_t buckets = 1000, n = 1000000;
  Literal idx(Shape(PrimitiveType::kS32, {n, 1}));
  Literal upd(Shape(PrimitiveType::kS32, {n}));
  for (int64_t i = 0; i < n; ++i) {
    idx.SetFromInt64(i, i % buckets);
    upd.SetFromInt64(i, 1);
  }
  auto start = std::chrono::steady_clock::now();
  auto r = RunModule(R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  o = s32[1000] parameter(0)
  i = s32[1000000,1] parameter(1)
  u = s32[1000000] parameter(2)
  ROOT s = s32[1000] scatter(o, i, u), update_window_dims={},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=add
})",
                     {S32({buckets}, V(buckets, 0)), idx, upd});
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetAsInt64(0), n / buckets);
  EXPECT_EQ(r->GetAsInt64(buckets - 1), n / buckets);
  EXPECT_LT(ms, 1000.0);
}

}  // namespace
}  // namespace hlogym
