#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

// A literal of type `t` and dimensions `dims` holding `values`.
Literal Lit(PrimitiveType t, DimVector dims, const std::vector<double>& v) {
  Literal l(Shape(t, dims));
  EXPECT_EQ(l.element_count(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (IsFloatingPointType(t) || IsComplexType(t)) {
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

// Evaluates the entry root of `text` on `operands`.
absl::StatusOr<Literal> Eval(const std::string& text,
                             const std::vector<Literal>& operands) {
  auto m = Parse(text);
  if (m == nullptr) return absl::InvalidArgumentError("parse failed");
  std::vector<const Literal*> ptrs;
  for (const Literal& l : operands) ptrs.push_back(&l);
  return EvalDataMovement(*m->entry_computation()->root_instruction(), ptrs);
}

std::vector<double> EvalValues(const std::string& text,
                               const std::vector<Literal>& operands) {
  auto r = Eval(text, operands);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? Values(*r) : std::vector<double>{};
}

using V = std::vector<double>;

TEST(DataMovement, Broadcast) {
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = f32[2] parameter(0)
    ROOT b = f32[2,3] broadcast(p), dimensions={0}
  })",
                       {Lit(PrimitiveType::kF32, {2}, {1, 2})}),
            (V{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[3] parameter(0)
    ROOT b = s32[2,3] broadcast(p), dimensions={1}
  })",
                       {S32({3}, {1, 2, 3})}),
            (V{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s8[] parameter(0)
    ROOT b = s8[2,2] broadcast(p), dimensions={}
  })",
                       {Lit(PrimitiveType::kS8, {}, {-5})}),
            (V{-5, -5, -5, -5}));
  // Middle dimension of a rank-3 result.
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[2] parameter(0)
    ROOT b = s32[2,2,2] broadcast(p), dimensions={1}
  })",
                       {S32({2}, {7, 8})}),
            (V{7, 7, 8, 8, 7, 7, 8, 8}));
}

TEST(DataMovement, BroadcastComplex128) {
  Literal c(Shape(PrimitiveType::kC128, {2}));
  c.SetComplex(0, {1.5, -2});
  c.SetComplex(1, {3, 4});
  auto r = Eval(R"(ENTRY e {
    p = c128[2] parameter(0)
    ROOT b = c128[2,2] broadcast(p), dimensions={0}
  })",
                {c});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetComplex(0), std::complex<double>(1.5, -2));
  EXPECT_EQ(r->GetComplex(1), std::complex<double>(1.5, -2));
  EXPECT_EQ(r->GetComplex(2), std::complex<double>(3, 4));
  EXPECT_EQ(r->GetComplex(3), std::complex<double>(3, 4));
}

TEST(DataMovement, ReshapeCopyDynamicReshape) {
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[2,3] parameter(0)
    ROOT r = s32[3,2] reshape(p)
  })",
                       {S32({2, 3}, Iota(6))}),
            Iota(6));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[2,3]{1,0} parameter(0)
    ROOT c = s32[2,3]{0,1} copy(p)
  })",
                       {S32({2, 3}, Iota(6))}),
            Iota(6));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[6] parameter(0)
    a = s32[] parameter(1)
    b = s32[] parameter(2)
    ROOT r = s32[2,3] dynamic-reshape(p, a, b)
  })",
                       {S32({6}, Iota(6)), S32({}, {2}), S32({}, {3})}),
            Iota(6));
}

TEST(DataMovement, Transpose) {
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[2,3] parameter(0)
    ROOT t = s32[3,2] transpose(p), dimensions={1,0}
  })",
                       {S32({2, 3}, Iota(6))}),
            (V{0, 3, 1, 4, 2, 5}));
  // result dim i = operand dim perm[i]: [2,3,4] with perm {2,0,1} ->
  // [4,2,3]; result[k][i][j] = operand[i][j][k] = 12i + 4j + k.
  std::vector<double> expect;
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) expect.push_back(12 * i + 4 * j + k);
    }
  }
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = u16[2,3,4] parameter(0)
    ROOT t = u16[4,2,3] transpose(p), dimensions={2,0,1}
  })",
                       {Lit(PrimitiveType::kU16, {2, 3, 4}, Iota(24))}),
            expect);
}

TEST(DataMovement, TransposeLargeIsFast) {
  const int64_t n = 1024;
  Literal in(Shape(PrimitiveType::kF32, {n, n}));
  float* p = reinterpret_cast<float*>(in.mutable_data());
  for (int64_t i = 0; i < n * n; ++i) p[i] = static_cast<float>(i);
  auto m = Parse(R"(ENTRY e {
    p = f32[1024,1024] parameter(0)
    ROOT t = f32[1024,1024] transpose(p), dimensions={1,0}
  })");
  ASSERT_NE(m, nullptr);
  const Literal* ops[] = {&in};
  const Instruction& t = *m->entry_computation()->root_instruction();
  auto start = std::chrono::steady_clock::now();
  auto r = EvalDataMovement(t, ops);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  ASSERT_TRUE(r.ok()) << r.status();
  const float* q = reinterpret_cast<const float*>(r->data());
  for (int64_t i = 0; i < n; i += 37) {
    for (int64_t j = 0; j < n; j += 41) {
      ASSERT_EQ(q[i * n + j], static_cast<float>(j * n + i));
    }
  }
  // Generous bound for a shared machine; typical runs take a few ms.
  EXPECT_LT(ms, 100.0);
}

TEST(DataMovement, Slice) {
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[10] parameter(0)
    ROOT s = s32[3] slice(p), slice={[1:8:3]}
  })",
                       {S32({10}, Iota(10))}),
            (V{1, 4, 7}));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[3,4] parameter(0)
    ROOT s = s32[2,2] slice(p), slice={[1:3], [1:4:2]}
  })",
                       {S32({3, 4}, Iota(12))}),
            (V{5, 7, 9, 11}));
  auto bad = Eval(R"(ENTRY e {
    p = s32[10] parameter(0)
    ROOT s = s32[3] slice(p), slice={[1:8:3]}
  })",
                  {S32({4}, Iota(4))});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("%s"), std::string::npos)
      << bad.status();
}

TEST(DataMovement, DynamicSliceClampsStarts) {
  const char* text = R"(ENTRY e {
    p = s32[5] parameter(0)
    i = s32[] parameter(1)
    ROOT d = s32[3] dynamic-slice(p, i), dynamic_slice_sizes={3}
  })";
  EXPECT_EQ(EvalValues(text, {S32({5}, Iota(5)), S32({}, {1})}), (V{1, 2, 3}));
  EXPECT_EQ(EvalValues(text, {S32({5}, Iota(5)), S32({}, {3})}),
            (V{2, 3, 4}));  // 3 clamps to 5 - 3 = 2
  EXPECT_EQ(EvalValues(text, {S32({5}, Iota(5)), S32({}, {-2})}), (V{0, 1, 2}));
  // Unsigned and 64-bit start indices in a rank-2 slice.
  EXPECT_EQ(
      EvalValues(R"(ENTRY e {
    p = s32[3,4] parameter(0)
    i = u8[] parameter(1)
    j = s64[] parameter(2)
    ROOT d = s32[2,2] dynamic-slice(p, i, j), dynamic_slice_sizes={2,2}
  })",
                 {S32({3, 4}, Iota(12)), Lit(PrimitiveType::kU8, {}, {200}),
                  Lit(PrimitiveType::kS64, {}, {1})}),
      (V{5, 6, 9, 10}));
}

TEST(DataMovement, DynamicUpdateSliceClampsStarts) {
  const char* text = R"(ENTRY e {
    p = s32[5] parameter(0)
    u = s32[2] parameter(1)
    i = s32[] parameter(2)
    ROOT d = s32[5] dynamic-update-slice(p, u, i)
  })";
  EXPECT_EQ(
      EvalValues(text, {S32({5}, Iota(5)), S32({2}, {7, 8}), S32({}, {4})}),
      (V{0, 1, 2, 7, 8}));
  EXPECT_EQ(
      EvalValues(text, {S32({5}, Iota(5)), S32({2}, {7, 8}), S32({}, {-9})}),
      (V{7, 8, 2, 3, 4}));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[3,3] parameter(0)
    u = s32[2,2] parameter(1)
    i = s32[] parameter(2)
    j = s32[] parameter(3)
    ROOT d = s32[3,3] dynamic-update-slice(p, u, i, j)
  })",
                       {S32({3, 3}, V(9, 0)), S32({2, 2}, {1, 2, 3, 4}),
                        S32({}, {1}), S32({}, {5})}),
            (V{0, 0, 0, 0, 1, 2, 0, 3, 4}));
}

TEST(DataMovement, Concatenate) {
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    a = s32[2,1] parameter(0)
    b = s32[2,2] parameter(1)
    ROOT c = s32[2,3] concatenate(a, b), dimensions={1}
  })",
                       {S32({2, 1}, {1, 2}), S32({2, 2}, {3, 4, 5, 6})}),
            (V{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    a = s32[1,2] parameter(0)
    b = s32[0,2] parameter(1)
    c = s32[2,2] parameter(2)
    ROOT r = s32[3,2] concatenate(a, b, c), dimensions={0}
  })",
                       {S32({1, 2}, {1, 2}), S32({0, 2}, {}),
                        S32({2, 2}, {3, 4, 5, 6})}),
            (V{1, 2, 3, 4, 5, 6}));
}

TEST(DataMovement, PadInteriorAndNegative) {
  const std::vector<Literal> in = [] {
    std::vector<Literal> v;
    v.push_back(S32({3}, {1, 2, 3}));
    v.push_back(S32({}, {0}));
    return v;
  }();
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[3] parameter(0)
    z = s32[] parameter(1)
    ROOT r = s32[7] pad(p, z), padding=1_1_1
  })",
                       in),
            (V{0, 1, 0, 2, 0, 3, 0}));
  // [1,0,2,0,3] cropped by one on each side.
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[3] parameter(0)
    z = s32[] parameter(1)
    ROOT r = s32[3] pad(p, z), padding=-1_-1_1
  })",
                       in),
            (V{0, 2, 0}));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[3] parameter(0)
    z = s32[] parameter(1)
    ROOT r = s32[1] pad(p, z), padding=-2_0
  })",
                       in),
            (V{3}));
  // Rank 2: low 1 on dim 0; interior 1 and high -1 on dim 1.
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[2,2] parameter(0)
    z = s32[] parameter(1)
    ROOT r = s32[3,2] pad(p, z), padding=1_0x0_-1_1
  })",
                       {S32({2, 2}, {1, 2, 3, 4}), S32({}, {9})}),
            (V{9, 9, 1, 9, 3, 9}));
}

TEST(DataMovement, Reverse) {
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[2,3] parameter(0)
    ROOT r = s32[2,3] reverse(p), dimensions={1}
  })",
                       {S32({2, 3}, Iota(6))}),
            (V{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[2,3] parameter(0)
    ROOT r = s32[2,3] reverse(p), dimensions={0,1}
  })",
                       {S32({2, 3}, Iota(6))}),
            (V{5, 4, 3, 2, 1, 0}));
}

TEST(DataMovement, IotaAllTypes) {
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    ROOT i = f32[2,3] iota(), iota_dimension=1
  })",
                       {}),
            (V{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    ROOT i = s64[3,2] iota(), iota_dimension=0
  })",
                       {}),
            (V{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    ROOT i = bf16[4] iota(), iota_dimension=0
  })",
                       {}),
            (V{0, 1, 2, 3}));
  auto c = Eval(R"(ENTRY e {
    ROOT i = c64[3] iota(), iota_dimension=0
  })",
                {});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->GetComplex(2), std::complex<double>(2, 0));
}

TEST(DataMovement, DimensionSizes) {
  auto g = Eval(R"(ENTRY e {
    p = f32[3,7] parameter(0)
    ROOT g = s32[] get-dimension-size(p), dimensions={1}
  })",
                {Lit(PrimitiveType::kF32, {3, 7}, V(21, 0))});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->shape().element_type(), PrimitiveType::kS32);
  EXPECT_EQ(g->GetAsInt64(0), 7);
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[4] parameter(0)
    n = s32[] parameter(1)
    ROOT s = s32[<=4] set-dimension-size(p, n), dimensions={0}
  })",
                       {S32({4}, {4, 3, 2, 1}), S32({}, {2})}),
            (V{4, 3, 2, 1}));
}

TEST(DataMovement, BitcastFollowsPhysicalLayouts) {
  // Column-major [2,3]: physical order is a00 a10 a01 a11 a02 a12.
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = f32[2,3]{0,1} parameter(0)
    ROOT b = f32[6]{0} bitcast(p)
  })",
                       {Lit(PrimitiveType::kF32, {2, 3}, {0, 1, 2, 3, 4, 5})}),
            (V{0, 3, 1, 4, 2, 5}));
  // Row-major physical 0..5 read as a column-major [3,2].
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = f32[2,3]{1,0} parameter(0)
    ROOT b = f32[3,2]{0,1} bitcast(p)
  })",
                       {Lit(PrimitiveType::kF32, {2, 3}, {0, 1, 2, 3, 4, 5})}),
            (V{0, 3, 1, 4, 2, 5}));
  // A transpose expressed as a bitcast: [2,3]{1,0} -> [3,2]{0,1} has the
  // same buffer as the logical transpose.
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[2,3]{0,1} parameter(0)
    ROOT b = s32[3,2]{1,0} bitcast(p)
  })",
                       {S32({2, 3}, Iota(6))}),
            (V{0, 3, 1, 4, 2, 5}));
  // No layouts: a reshape.
  EXPECT_EQ(EvalValues(R"(ENTRY e {
    p = s32[2,3] parameter(0)
    ROOT b = s32[3,2] bitcast(p)
  })",
                       {S32({2, 3}, Iota(6))}),
            Iota(6));
  // Rank 3 with a permuted layout on both sides.
  {
    // Operand [2,2,2]{0,2,1}: major-to-minor dims 1,2,0. Physical element
    // k = (j, k2, i) -> value 4i + 2j + k2 with i fastest.
    std::vector<double> expect;
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 2; ++i) expect.push_back(4 * i + 2 * j + k);
      }
    }
    EXPECT_EQ(EvalValues(R"(ENTRY e {
      p = s32[2,2,2]{0,2,1} parameter(0)
      ROOT b = s32[8]{0} bitcast(p)
    })",
                         {S32({2, 2, 2}, Iota(8))}),
              expect);
  }
}

TEST(DataMovement, BitcastReinterpretsTypes) {
  auto r = Eval(R"(ENTRY e {
    p = f32[2] parameter(0)
    ROOT b = s32[2] bitcast(p)
  })",
                {Lit(PrimitiveType::kF32, {2}, {1.0, -2.0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetAsInt64(0), 0x3f800000);
  EXPECT_EQ(r->GetAsInt64(1), static_cast<int32_t>(0xc0000000u));
  // Sub-byte: s4 -1 is u4 15, stored canonically.
  auto s = Eval(R"(ENTRY e {
    p = s4[2] parameter(0)
    ROOT b = u4[2] bitcast(p)
  })",
                {Lit(PrimitiveType::kS4, {2}, {-1, 3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->data()[0], 15);
  EXPECT_EQ(s->data()[1], 3);
  // Different widths, same bytes: f32[2] as u8[8] (little-endian).
  auto w = Eval(R"(ENTRY e {
    p = f32[2] parameter(0)
    ROOT b = u8[2,4] bitcast(p)
  })",
                {Lit(PrimitiveType::kF32, {2}, {1.0, 0})});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(Values(*w), (V{0, 0, 0x80, 0x3f, 0, 0, 0, 0}));
}

TEST(DataMovement, ErrorsNameTheInstruction) {
  auto r = Eval(R"(ENTRY e {
    p = s32[2,3] parameter(0)
    ROOT my_transpose = s32[3,2] transpose(p), dimensions={1,0}
  })",
                {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("%my_transpose"),
            std::string::npos);
  // Operand of the wrong size.
  r = Eval(R"(ENTRY e {
    p = s32[2,3] parameter(0)
    ROOT t = s32[3,2] transpose(p), dimensions={1,0}
  })",
           {S32({3, 3}, V(9, 0))});
  EXPECT_FALSE(r.ok());
  // Unknown contents.
  r = Eval(R"(ENTRY e {
    p = s32[2] parameter(0)
    ROOT c = s32[2] copy(p)
  })",
           {Literal::Unknown(Shape(PrimitiveType::kS32, {2}))});
  EXPECT_FALSE(r.ok());
  // A dynamic-slice start that is not an integer.
  r = Eval(R"(ENTRY e {
    p = s32[5] parameter(0)
    i = s32[] parameter(1)
    ROOT d = s32[3] dynamic-slice(p, i), dynamic_slice_sizes={3}
  })",
           {S32({5}, Iota(5)), Lit(PrimitiveType::kF32, {}, {1})});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace hlogym
