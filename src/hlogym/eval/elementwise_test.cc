#include <bit>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

using PT = PrimitiveType;

constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

DimVector DimsOr(std::optional<DimVector> dims, size_t n) {
  return dims ? *dims : DimVector{static_cast<int64_t>(n)};
}

// Floating types: rounded to nearest even; integer types: truncated.
Literal Vals(PT t, const std::vector<double>& v,
             std::optional<DimVector> dims = std::nullopt) {
  Literal l(Shape(t, DimsOr(dims, v.size())));
  for (size_t i = 0; i < v.size(); ++i) {
    if (IsFloatingPointType(t) || IsComplexType(t)) {
      l.SetFromDouble(static_cast<int64_t>(i), v[i]);
    } else {
      l.SetFromInt64(static_cast<int64_t>(i), static_cast<int64_t>(v[i]));
    }
  }
  return l;
}

Literal Ints(PT t, const std::vector<int64_t>& v,
             std::optional<DimVector> dims = std::nullopt) {
  Literal l(Shape(t, DimsOr(dims, v.size())));
  for (size_t i = 0; i < v.size(); ++i) {
    l.SetFromInt64(static_cast<int64_t>(i), v[i]);
  }
  return l;
}

Literal Bits(PT t, const std::vector<uint64_t>& v,
             std::optional<DimVector> dims = std::nullopt) {
  Literal l(Shape(t, DimsOr(dims, v.size())));
  for (size_t i = 0; i < v.size(); ++i)
    l.SetBits(static_cast<int64_t>(i), v[i]);
  return l;
}

Literal Complex(PT t, const std::vector<std::complex<double>>& v) {
  Literal l(Shape(t, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) {
    l.SetComplex(static_cast<int64_t>(i), v[i]);
  }
  return l;
}

Literal Scalar(PT t, double v) { return Vals(t, {v}, DimVector{}); }

std::vector<int64_t> AsInts(const Literal& l) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsInt64(i));
  return v;
}

std::vector<uint64_t> AsBits(const Literal& l) {
  std::vector<uint64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetBits(i));
  return v;
}

std::vector<double> AsDoubles(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

uint64_t F32Bits(float f) { return std::bit_cast<uint32_t>(f); }

// Parses `ROOT r = <result> <op>(p0, ...), <attrs>` with one parameter per
// argument and evaluates it on the arguments.
class Evaluator {
 public:
  absl::StatusOr<Literal> operator()(const std::string& result,
                                     const std::string& op,
                                     const std::vector<Literal>& args,
                                     const std::string& attrs = "") {
    std::string text = "HloModule t\nENTRY e {\n";
    std::string operands;
    for (size_t i = 0; i < args.size(); ++i) {
      std::string p = "p";
      p.append(std::to_string(i));
      text.append("  ").append(p).append(" = ");
      text.append(args[i].shape().ToString(false));
      text.append(" parameter(").append(std::to_string(i)).append(")\n");
      if (i > 0) operands.append(", ");
      operands.append(p);
    }
    text.append("  ROOT r = ").append(result).append(" ").append(op);
    text.append("(").append(operands).append(")");
    if (!attrs.empty()) text.append(", ").append(attrs);
    text.append("\n}\n");
    auto m = ParseModule(text);
    if (!m.ok()) return m.status();
    module_ = std::move(*m);
    root_ = module_->entry_computation()->root_instruction();
    std::vector<const Literal*> ptrs;
    for (const Literal& a : args) ptrs.push_back(&a);
    return EvalElementwise(*root_, ptrs);
  }
  const Instruction& root() const { return *root_; }

 private:
  std::unique_ptr<Module> module_;
  const Instruction* root_ = nullptr;
};

// Evaluates and expects success.
Literal Ok(const std::string& result, const std::string& op,
           const std::vector<Literal>& args, const std::string& attrs = "") {
  Evaluator ev;
  absl::StatusOr<Literal> r = ev(result, op, args, attrs);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status();
  return r.ok() ? std::move(*r) : Literal();
}

std::string Error(const std::string& result, const std::string& op,
                  const std::vector<Literal>& args,
                  const std::string& attrs = "") {
  Evaluator ev;
  absl::StatusOr<Literal> r = ev(result, op, args, attrs);
  EXPECT_FALSE(r.ok()) << op << " unexpectedly succeeded";
  return r.ok() ? "" : std::string(r.status().message());
}

// ---------------------------------------------------------------------------
// Floating point.

TEST(ElementwiseFloat, Arithmetic) {
  Literal a = Vals(PT::kF32, {1.5, -2, 1, -1, 0});
  Literal b = Vals(PT::kF32, {2.25, 0.5, 0, 0, 0});
  EXPECT_EQ(AsDoubles(Ok("f32[5]", "add", {a, b})),
            (std::vector<double>{3.75, -1.5, 1, -1, 0}));
  EXPECT_EQ(AsDoubles(Ok("f32[5]", "subtract", {a, b})),
            (std::vector<double>{-0.75, -2.5, 1, -1, 0}));
  EXPECT_EQ(AsDoubles(Ok("f32[5]", "multiply", {a, b})),
            (std::vector<double>{3.375, -1, 0, -0.0, 0}));
  std::vector<double> d = AsDoubles(Ok("f32[5]", "divide", {a, b}));
  EXPECT_EQ(d[0], static_cast<double>(1.5f / 2.25f));
  EXPECT_EQ(d[1], -4);
  EXPECT_EQ(d[2], kInf);
  EXPECT_EQ(d[3], -kInf);
  EXPECT_TRUE(std::isnan(d[4]));
}

TEST(ElementwiseFloat, MaximumMinimumPropagateNaN) {
  for (PT t : {PT::kF32, PT::kF64, PT::kBF16, PT::kF16}) {
    Literal a = Vals(t, {kNaN, 1, -kInf, 2, kNaN});
    Literal b = Vals(t, {1, kNaN, 3, -5, kNaN});
    std::string s(PrimitiveTypeName(t));
    s.append("[5]");
    std::vector<double> mx = AsDoubles(Ok(s, "maximum", {a, b}));
    std::vector<double> mn = AsDoubles(Ok(s, "minimum", {a, b}));
    EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]) && std::isnan(mx[4]));
    EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]) && std::isnan(mn[4]));
    EXPECT_EQ(mx[2], 3);
    EXPECT_EQ(mx[3], 2);
    EXPECT_EQ(mn[2], -kInf);
    EXPECT_EQ(mn[3], -5);
  }
}

TEST(ElementwiseFloat, RemainderIsFmod) {
  Literal a = Vals(PT::kF32, {5.5, -5.5, 5.5, -5.5, 1, 3});
  Literal b = Vals(PT::kF32, {2, 2, -2, -2, 0, kInf});
  std::vector<double> r = AsDoubles(Ok("f32[6]", "remainder", {a, b}));
  EXPECT_EQ(r[0], 1.5);
  EXPECT_EQ(r[1], -1.5);
  EXPECT_EQ(r[2], 1.5);
  EXPECT_EQ(r[3], -1.5);
  EXPECT_TRUE(std::isnan(r[4]));
  EXPECT_EQ(r[5], 3);
}

TEST(ElementwiseFloat, Power) {
  Literal a = Vals(PT::kF64, {2, 1, kNaN, -8, 0, 4, -2});
  Literal b = Vals(PT::kF64, {10, kNaN, 0, 1.0 / 3, 0, 0.5, 3});
  std::vector<double> r = AsDoubles(Ok("f64[7]", "power", {a, b}));
  EXPECT_EQ(r[0], 1024);
  EXPECT_EQ(r[1], 1);
  EXPECT_EQ(r[2], 1);
  EXPECT_TRUE(std::isnan(r[3]));
  EXPECT_EQ(r[4], 1);
  EXPECT_EQ(r[5], 2);
  EXPECT_EQ(r[6], -8);
}

TEST(ElementwiseFloat, Sign) {
  Literal a = Vals(PT::kF32, {-2.5, -0.0, 0.0, 3, kNaN, -kInf});
  Literal r = Ok("f32[6]", "sign", {a});
  EXPECT_EQ(AsBits(r)[0], F32Bits(-1.0f));
  EXPECT_EQ(AsBits(r)[1], F32Bits(-0.0f));
  EXPECT_EQ(AsBits(r)[2], F32Bits(0.0f));
  EXPECT_EQ(AsBits(r)[3], F32Bits(1.0f));
  EXPECT_TRUE(std::isnan(r.GetAsDouble(4)));
  EXPECT_EQ(AsBits(r)[5], F32Bits(-1.0f));
  // bf16 goes through float and back.
  Literal h = Ok("bf16[3]", "sign", {Vals(PT::kBF16, {-0.0, -7, 0.25})});
  EXPECT_EQ(AsBits(h), (std::vector<uint64_t>{0x8000, 0xBF80, 0x3F80}));
}

TEST(ElementwiseFloat, Rounding) {
  Literal a = Vals(PT::kF32, {2.5, -2.5, 0.5, -0.5, 1.5, 2.4, -2.6});
  EXPECT_EQ(AsDoubles(Ok("f32[7]", "round-nearest-afz", {a})),
            (std::vector<double>{3, -3, 1, -1, 2, 2, -3}));
  Literal even = Ok("f32[7]", "round-nearest-even", {a});
  EXPECT_EQ(AsDoubles(even), (std::vector<double>{2, -2, 0, -0.0, 2, 2, -3}));
  EXPECT_EQ(AsBits(even)[3], F32Bits(-0.0f));
  EXPECT_EQ(AsDoubles(Ok("f32[7]", "floor", {a})),
            (std::vector<double>{2, -3, 0, -1, 1, 2, -3}));
  EXPECT_EQ(AsDoubles(Ok("f32[7]", "ceil", {a})),
            (std::vector<double>{3, -2, 1, -0.0, 2, 3, -2}));
}

TEST(ElementwiseFloat, Transcendentals) {
  auto one = [](const std::string& op, double x) {
    return Ok("f64[1]", op, {Vals(PT::kF64, {x})}).GetAsDouble(0);
  };
  EXPECT_EQ(one("exponential", 0), 1);
  EXPECT_DOUBLE_EQ(one("exponential", 1), std::exp(1.0));
  EXPECT_EQ(one("exponential-minus-one", 1e-20), 1e-20);
  EXPECT_EQ(one("log", 1), 0);
  EXPECT_EQ(one("log-plus-one", 1e-20), 1e-20);
  EXPECT_EQ(one("sqrt", 6.25), 2.5);
  EXPECT_EQ(one("rsqrt", 4), 0.5);
  EXPECT_DOUBLE_EQ(one("cbrt", -27), -3);
  EXPECT_EQ(one("logistic", 0), 0.5);
  EXPECT_EQ(one("logistic", -kInf), 0);
  EXPECT_EQ(one("logistic", kInf), 1);
  EXPECT_DOUBLE_EQ(one("logistic", 2), 1 / (1 + std::exp(-2.0)));
  EXPECT_EQ(one("erf", 0), 0);
  EXPECT_DOUBLE_EQ(one("erf", 0.5), std::erf(0.5));
  EXPECT_EQ(one("tanh", 0), 0);
  EXPECT_EQ(one("sine", 0), 0);
  EXPECT_EQ(one("cosine", 0), 1);
  EXPECT_DOUBLE_EQ(one("tan", 1), std::tan(1.0));
  EXPECT_EQ(one("sinh", 0), 0);
  EXPECT_EQ(one("cosh", 0), 1);
  EXPECT_DOUBLE_EQ(one("asin", 1), std::numbers::pi / 2);
  EXPECT_EQ(one("acos", 1), 0);
  EXPECT_DOUBLE_EQ(one("atanh", 0.5), std::atanh(0.5));
  EXPECT_DOUBLE_EQ(one("asinh", 1), std::asinh(1.0));
  EXPECT_EQ(one("acosh", 1), 0);
  EXPECT_TRUE(std::isnan(one("log", -1)));
  EXPECT_EQ(one("rsqrt", 0), kInf);
  Literal y = Vals(PT::kF64, {1, -1, 0});
  Literal x = Vals(PT::kF64, {1, -1, -1});
  std::vector<double> r = AsDoubles(Ok("f64[3]", "atan2", {y, x}));
  EXPECT_DOUBLE_EQ(r[0], std::numbers::pi / 4);
  EXPECT_DOUBLE_EQ(r[1], -3 * std::numbers::pi / 4);
  EXPECT_DOUBLE_EQ(r[2], std::numbers::pi);
  // f32 computes in float.
  EXPECT_EQ(Ok("f32[1]", "exponential", {Vals(PT::kF32, {1})}).GetAsDouble(0),
            static_cast<double>(std::exp(1.0f)));
}

TEST(ElementwiseFloat, IntegerOpsAreRejected) {
  Literal a = Vals(PT::kF32, {1});
  EXPECT_NE(Error("f32[1]", "shift-left", {a, a}).find("not defined for"),
            std::string::npos);
  EXPECT_FALSE(Error("f32[1]", "popcnt", {a}).empty());
  EXPECT_FALSE(Error("f32[1]", "and", {a, a}).empty());
  EXPECT_FALSE(Error("f32[1]", "not", {a}).empty());
}

// ---------------------------------------------------------------------------
// Integers.

TEST(ElementwiseInt, DivideAndRemainderEdgeCases) {
  Literal a = Ints(PT::kS32, {7, -7, 7, kI32Min, 5, kI32Min, -7});
  Literal b = Ints(PT::kS32, {2, 2, 0, -1, -1, 1, -2});
  EXPECT_EQ(AsInts(Ok("s32[7]", "divide", {a, b})),
            (std::vector<int64_t>{3, -3, -1, kI32Min, -5, kI32Min, 3}));
  EXPECT_EQ(AsInts(Ok("s32[7]", "remainder", {a, b})),
            (std::vector<int64_t>{1, -1, 7, 0, 0, 0, -1}));
  Literal ua = Ints(PT::kU32, {7, 7, 0});
  Literal ub = Ints(PT::kU32, {0, 2, 0});
  EXPECT_EQ(AsInts(Ok("u32[3]", "divide", {ua, ub})),
            (std::vector<int64_t>{4294967295, 3, 4294967295}));
  EXPECT_EQ(AsInts(Ok("u32[3]", "remainder", {ua, ub})),
            (std::vector<int64_t>{7, 1, 0}));
  Literal s8a = Ints(PT::kS8, {-128, -128, 9});
  Literal s8b = Ints(PT::kS8, {-1, -1, 0});
  EXPECT_EQ(AsInts(Ok("s8[3]", "divide", {s8a, s8b})),
            (std::vector<int64_t>{-128, -128, -1}));
  EXPECT_EQ(AsInts(Ok("s8[3]", "remainder", {s8a, s8b})),
            (std::vector<int64_t>{0, 0, 9}));
  EXPECT_EQ(
      AsInts(Ok("u8[1]", "divide", {Ints(PT::kU8, {9}), Ints(PT::kU8, {0})})),
      (std::vector<int64_t>{255}));
  EXPECT_EQ(AsInts(Ok("s64[2]", "divide",
                      {Ints(PT::kS64, {kI64Min, 3}), Ints(PT::kS64, {-1, 0})})),
            (std::vector<int64_t>{kI64Min, -1}));
  // Sub-byte types: the same rules at their width.
  Literal s4a = Ints(PT::kS4, {-8, 5, -8, 7});
  Literal s4b = Ints(PT::kS4, {-1, 0, 3, -2});
  EXPECT_EQ(AsInts(Ok("s4[4]", "divide", {s4a, s4b})),
            (std::vector<int64_t>{-8, -1, -2, -3}));
  EXPECT_EQ(AsInts(Ok("s4[4]", "remainder", {s4a, s4b})),
            (std::vector<int64_t>{0, 5, -2, 1}));
  EXPECT_EQ(AsInts(Ok("u4[2]", "divide",
                      {Ints(PT::kU4, {5, 15}), Ints(PT::kU4, {0, 4})})),
            (std::vector<int64_t>{15, 3}));
}

TEST(ElementwiseInt, Shifts) {
  Literal a = Ints(PT::kS32, {1, 1, 1, 1, -1});
  Literal b = Ints(PT::kS32, {3, 31, 32, -1, 4});
  EXPECT_EQ(AsInts(Ok("s32[5]", "shift-left", {a, b})),
            (std::vector<int64_t>{8, kI32Min, 0, 0, -16}));
  Literal c = Ints(PT::kS32, {-16, -16, 16, -1, kI32Min, 100});
  Literal d = Ints(PT::kS32, {2, 40, 40, 31, 31, -3});
  EXPECT_EQ(AsInts(Ok("s32[6]", "shift-right-arithmetic", {c, d})),
            (std::vector<int64_t>{-4, -1, 0, -1, -1, 0}));
  EXPECT_EQ(AsInts(Ok("s32[6]", "shift-right-logical", {c, d})),
            (std::vector<int64_t>{0x3FFFFFFC, 0, 0, 1, 1, 0}));
  Literal ua = Ints(PT::kU8, {0x81, 0x80, 0x80, 0x80, 0x80});
  Literal ub = Ints(PT::kU8, {1, 1, 8, 7, 200});
  EXPECT_EQ(AsInts(Ok("u8[5]", "shift-left", {ua, ub})),
            (std::vector<int64_t>{0x02, 0x00, 0, 0, 0}));
  EXPECT_EQ(AsInts(Ok("u8[5]", "shift-right-arithmetic", {ua, ub})),
            (std::vector<int64_t>{0xC0, 0xC0, 0xFF, 0xFF, 0xFF}));
  EXPECT_EQ(AsInts(Ok("u8[5]", "shift-right-logical", {ua, ub})),
            (std::vector<int64_t>{0x40, 0x40, 0, 1, 0}));
  Literal s64 = Ints(PT::kS64, {1, kI64Min, kI64Min});
  Literal s64b = Ints(PT::kS64, {63, 63, 64});
  EXPECT_EQ(AsInts(Ok("s64[3]", "shift-left", {s64, s64b})),
            (std::vector<int64_t>{kI64Min, 0, 0}));
  EXPECT_EQ(AsInts(Ok("s64[3]", "shift-right-arithmetic", {s64, s64b})),
            (std::vector<int64_t>{0, -1, -1}));
  // s4: the amount is a 4-bit unsigned value (-1 is 15).
  Literal s4 = Ints(PT::kS4, {1, 1, -8, -1, -8, -8, -8});
  Literal s4b = Ints(PT::kS4, {3, 4, 1, 1, -1, 4, 3});
  EXPECT_EQ(AsInts(Ok("s4[7]", "shift-left", {s4, s4b})),
            (std::vector<int64_t>{-8, 0, 0, -2, 0, 0, 0}));
  EXPECT_EQ(AsInts(Ok("s4[7]", "shift-right-arithmetic", {s4, s4b})),
            (std::vector<int64_t>{0, 0, -4, -1, -1, -1, -1}));
  EXPECT_EQ(AsInts(Ok("s4[7]", "shift-right-logical", {s4, s4b})),
            (std::vector<int64_t>{0, 0, 4, 7, 0, 0, 1}));
  Literal u4 = Ints(PT::kU4, {15, 8, 8, 8});
  Literal u4b = Ints(PT::kU4, {1, 1, 4, 3});
  EXPECT_EQ(AsInts(Ok("u4[4]", "shift-left", {u4, u4b})),
            (std::vector<int64_t>{14, 0, 0, 0}));
  EXPECT_EQ(AsInts(Ok("u4[4]", "shift-right-arithmetic", {u4, u4b})),
            (std::vector<int64_t>{15, 12, 15, 15}));
  EXPECT_EQ(AsInts(Ok("u4[4]", "shift-right-logical", {u4, u4b})),
            (std::vector<int64_t>{7, 4, 0, 1}));
}

TEST(ElementwiseInt, PopcntAndClz) {
  Literal a = Ints(PT::kS32, {0, 1, -1, kI32Min, 0xF0});
  EXPECT_EQ(AsInts(Ok("s32[5]", "popcnt", {a})),
            (std::vector<int64_t>{0, 1, 32, 1, 4}));
  EXPECT_EQ(AsInts(Ok("s32[5]", "count-leading-zeros", {a})),
            (std::vector<int64_t>{32, 31, 0, 0, 24}));
  Literal u = Ints(PT::kU8, {0, 1, 255, 0x10});
  EXPECT_EQ(AsInts(Ok("u8[4]", "popcnt", {u})),
            (std::vector<int64_t>{0, 1, 8, 1}));
  EXPECT_EQ(AsInts(Ok("u8[4]", "count-leading-zeros", {u})),
            (std::vector<int64_t>{8, 7, 0, 3}));
  Literal s4 = Ints(PT::kS4, {0, 1, -1, -8, 3});
  EXPECT_EQ(AsInts(Ok("s4[5]", "popcnt", {s4})),
            (std::vector<int64_t>{0, 1, 4, 1, 2}));
  EXPECT_EQ(AsInts(Ok("s4[5]", "count-leading-zeros", {s4})),
            (std::vector<int64_t>{4, 3, 0, 0, 2}));
  Literal u4 = Ints(PT::kU4, {0, 15, 4});
  EXPECT_EQ(AsInts(Ok("u4[3]", "popcnt", {u4})),
            (std::vector<int64_t>{0, 4, 1}));
  EXPECT_EQ(AsInts(Ok("u4[3]", "count-leading-zeros", {u4})),
            (std::vector<int64_t>{4, 0, 1}));
  Literal s64 = Ints(PT::kS64, {-1, 1});
  EXPECT_EQ(AsInts(Ok("s64[2]", "popcnt", {s64})),
            (std::vector<int64_t>{64, 1}));
  EXPECT_EQ(AsInts(Ok("s64[2]", "count-leading-zeros", {s64})),
            (std::vector<int64_t>{0, 63}));
}

TEST(ElementwiseInt, Mulhi) {
  Literal a = Ints(PT::kS32, {kI32Max, -1, 0x40000000, kI32Min, -3});
  Literal b = Ints(PT::kS32, {2, 1, 4, kI32Min, 5});
  EXPECT_EQ(AsInts(Ok("s32[5]", "mulhi", {a, b})),
            (std::vector<int64_t>{0, -1, 1, 1 << 30, -1}));
  Literal ua = Ints(PT::kU32, {0xFFFFFFFF, 0x80000000});
  Literal ub = Ints(PT::kU32, {0xFFFFFFFF, 2});
  EXPECT_EQ(AsInts(Ok("u32[2]", "mulhi", {ua, ub})),
            (std::vector<int64_t>{0xFFFFFFFE, 1}));
  Literal sa = Ints(PT::kS64, {kI64Min, -1, kI64Max, -2});
  Literal sb = Ints(PT::kS64, {kI64Min, -1, 2, kI64Max});
  EXPECT_EQ(AsInts(Ok("s64[4]", "mulhi", {sa, sb})),
            (std::vector<int64_t>{int64_t{1} << 62, 0, 0, -1}));
  Literal u64 = Bits(PT::kU64, {~uint64_t{0}, uint64_t{1} << 63});
  Literal u64b = Bits(PT::kU64, {~uint64_t{0}, 4});
  Literal r = Ok("u64[2]", "mulhi", {u64, u64b});
  EXPECT_EQ(r.GetAsUint64(0), ~uint64_t{0} - 1);
  EXPECT_EQ(r.GetAsUint64(1), 2u);
  Literal s4 = Ints(PT::kS4, {-8, -8, 7});
  Literal s4b = Ints(PT::kS4, {-8, 7, 7});
  EXPECT_EQ(AsInts(Ok("s4[3]", "mulhi", {s4, s4b})),
            (std::vector<int64_t>{4, -4, 3}));
  EXPECT_EQ(
      AsInts(Ok("u4[1]", "mulhi", {Ints(PT::kU4, {15}), Ints(PT::kU4, {15})})),
      (std::vector<int64_t>{14}));
}

TEST(ElementwiseInt, PowerFollowsXla) {
  Literal a = Ints(PT::kS32, {2, 3, -2, 2, 1, -1, -1, 0, 5, 3, 0});
  Literal b = Ints(PT::kS32, {10, 3, 3, -1, -5, -1, -2, 0, 0, 40, 3});
  // 3^40 mod 2^32 = 0x291FE821 = 689956897. A negative exponent
  // gives 0 except for base 1, as XLA defines it (also for base -1).
  EXPECT_EQ(
      AsInts(Ok("s32[11]", "power", {a, b})),
      (std::vector<int64_t>{1024, 27, -8, 0, 1, 0, 0, 1, 1, 689956897, 0}));
  EXPECT_EQ(AsInts(Ok("s8[2]", "power",
                      {Ints(PT::kS8, {2, 2}), Ints(PT::kS8, {7, 8})})),
            (std::vector<int64_t>{-128, 0}));
  EXPECT_EQ(AsInts(Ok("u8[2]", "power",
                      {Ints(PT::kU8, {3, 3}), Ints(PT::kU8, {5, 6})})),
            (std::vector<int64_t>{243, 217}));
  EXPECT_EQ(AsInts(Ok("s4[3]", "power",
                      {Ints(PT::kS4, {2, -2, 3}), Ints(PT::kS4, {3, 3, -1})})),
            (std::vector<int64_t>{-8, -8, 0}));
}

TEST(ElementwiseInt, AbsNegateSignNot) {
  Literal a = Ints(PT::kS32, {kI32Min, -5, 5, 0});
  EXPECT_EQ(AsInts(Ok("s32[4]", "abs", {a})),
            (std::vector<int64_t>{kI32Min, 5, 5, 0}));
  EXPECT_EQ(AsInts(Ok("s32[4]", "negate", {a})),
            (std::vector<int64_t>{kI32Min, 5, -5, 0}));
  EXPECT_EQ(AsInts(Ok("s32[4]", "sign", {a})),
            (std::vector<int64_t>{-1, -1, 1, 0}));
  EXPECT_EQ(AsInts(Ok("s32[4]", "not", {a})),
            (std::vector<int64_t>{kI32Max, 4, -6, -1}));
  Literal s4 = Ints(PT::kS4, {-8, 7, 0});
  EXPECT_EQ(AsInts(Ok("s4[3]", "abs", {s4})), (std::vector<int64_t>{-8, 7, 0}));
  EXPECT_EQ(AsInts(Ok("s4[3]", "negate", {s4})),
            (std::vector<int64_t>{-8, -7, 0}));
  EXPECT_EQ(AsInts(Ok("s4[3]", "not", {s4})),
            (std::vector<int64_t>{7, -8, -1}));
  Literal u8 = Ints(PT::kU8, {0, 1, 200});
  EXPECT_EQ(AsInts(Ok("u8[3]", "negate", {u8})),
            (std::vector<int64_t>{0, 255, 56}));
  EXPECT_EQ(AsInts(Ok("u8[3]", "abs", {u8})),
            (std::vector<int64_t>{0, 1, 200}));
  EXPECT_EQ(AsInts(Ok("u8[3]", "sign", {u8})), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(AsInts(Ok("u8[3]", "not", {u8})),
            (std::vector<int64_t>{255, 254, 55}));
  EXPECT_EQ(AsInts(Ok("u4[2]", "not", {Ints(PT::kU4, {0, 5})})),
            (std::vector<int64_t>{15, 10}));
}

TEST(ElementwiseInt, WrapAround) {
  EXPECT_EQ(AsInts(Ok("s8[2]", "add",
                      {Ints(PT::kS8, {127, -128}), Ints(PT::kS8, {1, -1})})),
            (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(
      AsInts(Ok("s32[2]", "multiply",
                {Ints(PT::kS32, {kI32Max, kI32Min}), Ints(PT::kS32, {2, -1})})),
      (std::vector<int64_t>{-2, kI32Min}));
  // 65535 * 65535 would overflow int if promoted naively.
  EXPECT_EQ(AsInts(Ok("u16[1]", "multiply",
                      {Ints(PT::kU16, {65535}), Ints(PT::kU16, {65535})})),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(AsInts(Ok("s4[3]", "add",
                      {Ints(PT::kS4, {7, -8, 3}), Ints(PT::kS4, {1, -1, 3})})),
            (std::vector<int64_t>{-8, 7, 6}));
  EXPECT_EQ(AsInts(Ok("s4[2]", "multiply",
                      {Ints(PT::kS4, {3, -3}), Ints(PT::kS4, {3, 3})})),
            (std::vector<int64_t>{-7, 7}));
  EXPECT_EQ(AsInts(Ok("u4[2]", "subtract",
                      {Ints(PT::kU4, {0, 15}), Ints(PT::kU4, {1, 15})})),
            (std::vector<int64_t>{15, 0}));
  EXPECT_EQ(AsInts(Ok("u2[2]", "add",
                      {Ints(PT::kU2, {3, 2}), Ints(PT::kU2, {1, 1})})),
            (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(AsInts(Ok("s2[2]", "add",
                      {Ints(PT::kS2, {1, -2}), Ints(PT::kS2, {1, -1})})),
            (std::vector<int64_t>{-2, 1}));
}

TEST(ElementwiseInt, MaxMinAndBitwise) {
  Literal a = Ints(PT::kS32, {12, -3});
  Literal b = Ints(PT::kS32, {10, 2});
  EXPECT_EQ(AsInts(Ok("s32[2]", "and", {a, b})), (std::vector<int64_t>{8, 0}));
  EXPECT_EQ(AsInts(Ok("s32[2]", "or", {a, b})), (std::vector<int64_t>{14, -1}));
  EXPECT_EQ(AsInts(Ok("s32[2]", "xor", {a, b})), (std::vector<int64_t>{6, -1}));
  EXPECT_EQ(AsInts(Ok("s32[2]", "maximum", {a, b})),
            (std::vector<int64_t>{12, 2}));
  EXPECT_EQ(AsInts(Ok("s32[2]", "minimum", {a, b})),
            (std::vector<int64_t>{10, -3}));
  EXPECT_EQ(AsInts(Ok("u32[1]", "maximum",
                      {Ints(PT::kU32, {0xFFFFFFFF}), Ints(PT::kU32, {1})})),
            (std::vector<int64_t>{0xFFFFFFFF}));
  EXPECT_EQ(
      AsInts(Ok("s4[1]", "minimum", {Ints(PT::kS4, {-8}), Ints(PT::kS4, {7})})),
      (std::vector<int64_t>{-8}));
}

TEST(ElementwisePred, Logical) {
  Literal a = Ints(PT::kPred, {0, 0, 1, 1});
  Literal b = Ints(PT::kPred, {0, 1, 0, 1});
  EXPECT_EQ(AsInts(Ok("pred[4]", "and", {a, b})),
            (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(AsInts(Ok("pred[4]", "or", {a, b})),
            (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(AsInts(Ok("pred[4]", "xor", {a, b})),
            (std::vector<int64_t>{0, 1, 1, 0}));
  Literal n = Ok("pred[4]", "not", {a});
  EXPECT_EQ(AsBits(n), (std::vector<uint64_t>{1, 1, 0, 0}));
  // Non-canonical true bytes read as true.
  Literal odd = Bits(PT::kPred, {2, 0});
  EXPECT_EQ(AsBits(Ok("pred[2]", "not", {odd})), (std::vector<uint64_t>{0, 1}));
  EXPECT_FALSE(Error("pred[1]", "shift-left",
                     {Ints(PT::kPred, {1}), Ints(PT::kPred, {1})})
                   .empty());
}

// ---------------------------------------------------------------------------
// Narrow floats compute in float and round after every op.

TEST(ElementwiseSmallFloat, Bf16AndF16Rounding) {
  Literal one = Vals(PT::kBF16, {1, 1, 0x1p100});
  Literal b = Vals(PT::kBF16, {0x1p-8, 3 * 0x1p-8, 0x1p100});
  EXPECT_EQ(AsBits(Ok("bf16[3]", "add", {one, b})),
            (std::vector<uint64_t>{0x3F80, 0x3F82, 0x7200}));
  EXPECT_EQ(AsBits(Ok("bf16[3]", "multiply", {one, b}))[2], 0x7F80u);  // inf
  Literal h = Vals(PT::kF16, {65504, 65504, 1});
  Literal hb = Vals(PT::kF16, {32, 15, 0x1p-11});
  EXPECT_EQ(AsBits(Ok("f16[3]", "add", {h, hb})),
            (std::vector<uint64_t>{0x7C00, 0x7BFF, 0x3C00}));
  EXPECT_EQ(AsBits(Ok("bf16[1]", "exponential", {Vals(PT::kBF16, {1})})),
            (std::vector<uint64_t>{0x402E}));
  EXPECT_EQ(Ok("f16[1]", "divide", {Vals(PT::kF16, {1}), Vals(PT::kF16, {3})})
                .GetBits(0),
            0x3555u);
}

TEST(ElementwiseSmallFloat, F8AndF4) {
  // e4m3fn: 448 is the largest value; beyond it values round to NaN (0x7F).
  Literal a = Vals(PT::kF8E4M3FN, {448, 448, 2});
  Literal b = Vals(PT::kF8E4M3FN, {32, 8, 3});
  EXPECT_EQ(AsBits(Ok("f8e4m3fn[3]", "add", {a, b})),
            (std::vector<uint64_t>{0x7F, 0x7E, 0x4A}));
  EXPECT_EQ(AsBits(Ok("f8e4m3fn[2]", "maximum",
                      {Bits(PT::kF8E4M3FN, {0x7F, 0xFF}),
                       Vals(PT::kF8E4M3FN, {1, 1})})),
            (std::vector<uint64_t>{0x7F, 0xFF}));
  EXPECT_EQ(AsBits(Ok("f8e4m3fn[1]", "negate", {Vals(PT::kF8E4M3FN, {448})})),
            (std::vector<uint64_t>{0xFE}));
  // e5m2 has infinities.
  EXPECT_EQ(
      AsBits(Ok("f8e5m2[2]", "multiply",
                {Vals(PT::kF8E5M2, {2, 57344}), Vals(PT::kF8E5M2, {3, 2})})),
      (std::vector<uint64_t>{0x46, 0x7C}));
  // fnuz: no negative zero; NaN is 0x80.
  EXPECT_EQ(AsBits(Ok("f8e4m3fnuz[3]", "negate",
                      {Vals(PT::kF8E4M3FNUZ, {0, 1, kNaN})})),
            (std::vector<uint64_t>{0x00, 0xC0, 0x80}));
  // f4e2m1fn: no inf/NaN; overflow saturates at 6.
  Literal f4 = Vals(PT::kF4E2M1FN, {4, 4, 1.5, -4});
  Literal f4b = Vals(PT::kF4E2M1FN, {2, 4, 1.5, -4});
  EXPECT_EQ(AsBits(Ok("f4e2m1fn[4]", "add", {f4, f4b})),
            (std::vector<uint64_t>{0x7, 0x7, 0x5, 0xF}));
  EXPECT_EQ(AsBits(Ok("f4e2m1fn[4]", "multiply", {f4, f4b})),
            (std::vector<uint64_t>{0x7, 0x7, 0x4, 0x7}));
  // e3m4 and e8m0.
  EXPECT_EQ(AsBits(Ok("f8e3m4[1]", "add",
                      {Vals(PT::kF8E3M4, {1}), Vals(PT::kF8E3M4, {0.0625})})),
            (std::vector<uint64_t>{0x31}));
  EXPECT_EQ(AsBits(Ok("f8e8m0fnu[2]", "multiply",
                      {Bits(PT::kF8E8M0FNU, {0x7F, 0x80}),
                       Bits(PT::kF8E8M0FNU, {0x80, 0x80})})),
            (std::vector<uint64_t>{0x80, 0x81}));
}

TEST(ElementwiseSmallFloat, IsFinite) {
  Literal f = Vals(PT::kF32, {1, kInf, -kInf, kNaN});
  EXPECT_EQ(AsInts(Ok("pred[4]", "is-finite", {f})),
            (std::vector<int64_t>{1, 0, 0, 0}));
  Literal b = Vals(PT::kBF16, {1, kInf, -kInf, kNaN});
  EXPECT_EQ(AsInts(Ok("pred[4]", "is-finite", {b})),
            (std::vector<int64_t>{1, 0, 0, 0}));
  Literal e = Bits(PT::kF8E4M3FN, {0x7F, 0x7E, 0xFF});
  EXPECT_EQ(AsInts(Ok("pred[3]", "is-finite", {e})),
            (std::vector<int64_t>{0, 1, 0}));
  Literal f4 = Bits(PT::kF4E2M1FN, {0x7, 0xF});
  EXPECT_EQ(AsInts(Ok("pred[2]", "is-finite", {f4})),
            (std::vector<int64_t>{1, 1}));
  EXPECT_FALSE(Error("pred[1]", "is-finite", {Ints(PT::kS32, {1})}).empty());
}

TEST(ElementwiseSmallFloat, LongArraysUseChunks) {
  // More elements than one chunk, with a broadcast scalar.
  const int n = 1500;
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = i % 7;
  Literal a = Vals(PT::kBF16, v);
  Literal lo = Scalar(PT::kBF16, 1);
  Literal hi = Scalar(PT::kBF16, 5);
  Literal r = Ok("bf16[1500]", "clamp", {lo, a, hi});
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(r.GetAsDouble(i), std::min(5.0, std::max(1.0, v[i]))) << i;
  }
}

// ---------------------------------------------------------------------------
// reduce-precision

TEST(ElementwiseReducePrecision, F32ToHalfRange) {
  Literal a = Vals(PT::kF32, {1 + 0x1p-11, 1 + 3 * 0x1p-11, 65520, 65504,
                              0x1p-14, 0x1p-15, -0x1p-20, kNaN, -1e10});
  Literal r = Ok("f32[9]", "reduce-precision", {a},
                 "exponent_bits=5, mantissa_bits=10");
  std::vector<double> d = AsDoubles(r);
  EXPECT_EQ(d[0], 1);
  EXPECT_EQ(d[1], 1 + 0x1p-9);
  EXPECT_EQ(d[2], kInf);
  EXPECT_EQ(d[3], 65504);
  EXPECT_EQ(d[4], 0x1p-14);
  EXPECT_EQ(d[5], 0);  // the reduced format's denormals flush to zero
  EXPECT_EQ(AsBits(r)[6], F32Bits(-0.0f));
  EXPECT_TRUE(std::isnan(d[7]));
  EXPECT_EQ(d[8], -kInf);
}

TEST(ElementwiseReducePrecision, ZeroMantissaAndOtherTypes) {
  Literal a = Vals(PT::kF32, {1.5, 3, kNaN, -kNaN});
  std::vector<double> d = AsDoubles(Ok("f32[4]", "reduce-precision", {a},
                                       "exponent_bits=8, mantissa_bits=0"));
  EXPECT_EQ(d, (std::vector<double>{2, 2, kInf, kInf}));
  Literal b = Vals(PT::kF64, {1 + 0x1p-24, 1 + 0x1p-23, 1e39, 0x1p-127});
  std::vector<double> e = AsDoubles(Ok("f64[4]", "reduce-precision", {b},
                                       "exponent_bits=8, mantissa_bits=23"));
  EXPECT_EQ(e, (std::vector<double>{1, 1 + 0x1p-23, kInf, 0}));
  Literal c = Vals(PT::kBF16, {1.25, 1.125, 1.375});
  EXPECT_EQ(AsDoubles(Ok("bf16[3]", "reduce-precision", {c},
                         "exponent_bits=5, mantissa_bits=2")),
            (std::vector<double>{1.25, 1, 1.5}));
}

// ---------------------------------------------------------------------------
// convert

TEST(ElementwiseConvert, FloatToIntTruncatesAndSaturates) {
  Literal a = Vals(PT::kF32, {1.9, -1.9, kNaN, kInf, -kInf, 3e9, -3e9,
                              2147483520, -2147483648.0});
  EXPECT_EQ(AsInts(Ok("s32[9]", "convert", {a})),
            (std::vector<int64_t>{1, -1, 0, kI32Max, kI32Min, kI32Max, kI32Min,
                                  2147483520, kI32Min}));
  Literal u = Vals(PT::kF32, {-1.5, 255.9, 256, 3.7, kNaN, -0.5});
  EXPECT_EQ(AsInts(Ok("u8[6]", "convert", {u})),
            (std::vector<int64_t>{0, 255, 255, 3, 0, 0}));
  Literal s4 = Vals(PT::kF32, {7.9, 8, -9, -8.5, 2.5, -2.5});
  EXPECT_EQ(AsInts(Ok("s4[6]", "convert", {s4})),
            (std::vector<int64_t>{7, 7, -8, -8, 2, -2}));
  Literal u64 = Vals(PT::kF32, {0x1p64, -5, 0x1p63});
  Literal r = Ok("u64[3]", "convert", {u64});
  EXPECT_EQ(r.GetAsUint64(0), ~uint64_t{0});
  EXPECT_EQ(r.GetAsUint64(1), 0u);
  EXPECT_EQ(r.GetAsUint64(2), uint64_t{1} << 63);
  Literal s64 = Vals(PT::kF64, {0x1p63, -0x1p63, -0x1p64, 1e300});
  EXPECT_EQ(AsInts(Ok("s64[4]", "convert", {s64})),
            (std::vector<int64_t>{kI64Max, kI64Min, kI64Min, kI64Max}));
  Literal bf = Vals(PT::kBF16, {-3.5, 1e30});
  EXPECT_EQ(AsInts(Ok("s16[2]", "convert", {bf})),
            (std::vector<int64_t>{-3, 32767}));
}

TEST(ElementwiseConvert, IntToFloatRoundsOnce) {
  // 2^60 + 2^36 + 1: just above the f32 midpoint, so it rounds up; going
  // through double first would land on the midpoint and round to even.
  Literal a = Ints(PT::kS64, {(int64_t{1} << 60) + (int64_t{1} << 36) + 1,
                              (int64_t{1} << 24) + 1, -7});
  EXPECT_EQ(AsDoubles(Ok("f32[3]", "convert", {a})),
            (std::vector<double>{0x1p60 + 0x1p37, 0x1p24, -7}));
  Literal u = Bits(
      PT::kU64, {~uint64_t{0}, (uint64_t{1} << 63) + (uint64_t{1} << 39) + 1});
  EXPECT_EQ(AsDoubles(Ok("f32[2]", "convert", {u})),
            (std::vector<double>{0x1p64, 0x1p63 + 0x1p40}));
  Literal d = Ints(PT::kS64, {(int64_t{1} << 53) + 1, (int64_t{1} << 53) + 3});
  EXPECT_EQ(AsDoubles(Ok("f64[2]", "convert", {d})),
            (std::vector<double>{0x1p53, 0x1p53 + 4}));
  EXPECT_EQ(AsBits(Ok("bf16[2]", "convert", {Ints(PT::kS32, {257, -259})})),
            (std::vector<uint64_t>{0x4380, 0xC382}));
}

TEST(ElementwiseConvert, FloatToNarrowFloat) {
  // bf16: ties to even, overflow to inf, NaN to the quiet NaN with its sign.
  Literal a = Vals(PT::kF32, {1 + 0x1p-8, 1 + 3 * 0x1p-8, 3.4028234663852886e38,
                              kNaN, -kNaN, -0.0});
  EXPECT_EQ(
      AsBits(Ok("bf16[6]", "convert", {a})),
      (std::vector<uint64_t>{0x3F80, 0x3F82, 0x7F80, 0x7FC0, 0xFFC0, 0x8000}));
  Literal h = Vals(PT::kF32, {65520, 65519, 0x1p-25, 3 * 0x1p-26, -0.0, kInf});
  EXPECT_EQ(
      AsBits(Ok("f16[6]", "convert", {h})),
      (std::vector<uint64_t>{0x7C00, 0x7BFF, 0x0000, 0x0001, 0x8000, 0x7C00}));
  Literal e = Vals(PT::kF32,
                   {448, 464, 470, -500, kInf, -kInf, kNaN, 1e-4, -1e-4, 0.5});
  EXPECT_EQ(AsBits(Ok("f8e4m3fn[10]", "convert", {e})),
            (std::vector<uint64_t>{0x7E, 0x7E, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F,
                                   0x00, 0x80, 0x30}));
  Literal e5 = Vals(PT::kF32, {57344, 61440, 1e6, kNaN, -kInf});
  EXPECT_EQ(AsBits(Ok("f8e5m2[5]", "convert", {e5})),
            (std::vector<uint64_t>{0x7B, 0x7C, 0x7C, 0x7E, 0xFC}));
  Literal z = Vals(PT::kF32, {-0.0, kNaN, kInf, 1, 240, 256, -1});
  EXPECT_EQ(AsBits(Ok("f8e4m3fnuz[7]", "convert", {z})),
            (std::vector<uint64_t>{0x00, 0x80, 0x80, 0x40, 0x7F, 0x80, 0xC0}));
  Literal f4 = Vals(PT::kF32, {0.25, 0.75, 5, 7, 100, -100, kNaN, -0.0, 2.5});
  EXPECT_EQ(
      AsBits(Ok("f4e2m1fn[9]", "convert", {f4})),
      (std::vector<uint64_t>{0x0, 0x2, 0x6, 0x7, 0x7, 0xF, 0x8, 0x8, 0x4}));
  Literal m = Vals(PT::kF32, {1, 0, -1, 3, 2.9, 0x1p-127});
  EXPECT_EQ(AsBits(Ok("f8e8m0fnu[6]", "convert", {m})),
            (std::vector<uint64_t>{0x7F, 0xFF, 0xFF, 0x81, 0x80, 0x00}));
  // f64 to bf16 rounds through float, as XLA does: 1 + 2^-8 + 2^-40 first
  // becomes the tie 1 + 2^-8, which rounds to even.
  EXPECT_EQ(Ok("bf16[1]", "convert", {Vals(PT::kF64, {1 + 0x1p-8 + 0x1p-40})})
                .GetBits(0),
            0x3F80u);
  // f64 to f8 rounds directly.
  EXPECT_EQ(Ok("f8e4m3fn[1]", "convert", {Vals(PT::kF64, {1.0625 + 0x1p-40})})
                .GetBits(0),
            0x39u);
  std::vector<double> back =
      AsDoubles(Ok("f64[2]", "convert", {Vals(PT::kF64, {1e300, 1})}));
  EXPECT_EQ(AsDoubles(Ok("f32[2]", "convert", {Vals(PT::kF64, {1e300, 1})})),
            (std::vector<double>{kInf, 1}));
  EXPECT_EQ(back, (std::vector<double>{1e300, 1}));
}

TEST(ElementwiseConvert, NarrowFloatToWide) {
  Literal e = Bits(PT::kF8E4M3FN, {0x7E, 0x01, 0xFF, 0x80});
  std::vector<double> d = AsDoubles(Ok("f32[4]", "convert", {e}));
  EXPECT_EQ(d[0], 448);
  EXPECT_EQ(d[1], 0x1p-9);
  EXPECT_TRUE(std::isnan(d[2]));
  EXPECT_EQ(AsBits(Ok("f32[4]", "convert", {e}))[3], F32Bits(-0.0f));
  Literal h = Bits(PT::kF16, {0x0001, 0x7BFF, 0xFC00});
  EXPECT_EQ(AsDoubles(Ok("f64[3]", "convert", {h})),
            (std::vector<double>{0x1p-24, 65504, -kInf}));
  Literal b = Bits(PT::kBF16, {0x3F82});
  EXPECT_EQ(Ok("f8e5m2[1]", "convert", {b}).GetBits(0), 0x3Cu);
}

TEST(ElementwiseConvert, PredIntComplex) {
  EXPECT_EQ(AsDoubles(Ok("f32[2]", "convert", {Ints(PT::kPred, {1, 0})})),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(
      AsInts(Ok("pred[4]", "convert", {Vals(PT::kF32, {0, -0.0, 0.5, kNaN})})),
      (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(AsInts(Ok("pred[3]", "convert", {Ints(PT::kS32, {0, 7, -1})})),
            (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(AsInts(Ok("s8[2]", "convert", {Ints(PT::kS32, {300, -129})})),
            (std::vector<int64_t>{44, 127}));
  EXPECT_EQ(AsInts(Ok("s4[2]", "convert", {Ints(PT::kS32, {9, -9})})),
            (std::vector<int64_t>{-7, 7}));
  EXPECT_EQ(AsInts(Ok("u4[1]", "convert", {Ints(PT::kS32, {-1})})),
            (std::vector<int64_t>{15}));
  EXPECT_EQ(AsInts(Ok("s32[2]", "convert", {Ints(PT::kS4, {-8, 7})})),
            (std::vector<int64_t>{-8, 7}));
  EXPECT_EQ(AsInts(Ok("s8[1]", "convert", {Ints(PT::kU4, {15})})),
            (std::vector<int64_t>{15}));
  EXPECT_EQ(AsInts(Ok("s32[1]", "convert", {Ints(PT::kU32, {0xFFFFFFFF})})),
            (std::vector<int64_t>{-1}));
  EXPECT_EQ(Ok("u64[1]", "convert", {Ints(PT::kS8, {-1})}).GetAsUint64(0),
            ~uint64_t{0});
  Literal c = Ok("c64[2]", "convert", {Ints(PT::kS32, {3, -4})});
  EXPECT_EQ(c.GetComplex(0), std::complex<double>(3, 0));
  EXPECT_EQ(c.GetComplex(1), std::complex<double>(-4, 0));
  Literal c2 = Ok("c128[1]", "convert", {Complex(PT::kC64, {{1.5, -2}})});
  EXPECT_EQ(c2.GetComplex(0), std::complex<double>(1.5, -2));
  Literal c3 = Ok("c64[1]", "convert", {Vals(PT::kF64, {0.1})});
  EXPECT_EQ(c3.GetComplex(0), std::complex<double>(0.1f, 0));
  EXPECT_NE(
      Error("f32[1]", "convert", {Complex(PT::kC64, {{1, 2}})}).find("complex"),
      std::string::npos);
}

// ---------------------------------------------------------------------------
// bitcast-convert

TEST(ElementwiseBitcastConvert, SameWidth) {
  EXPECT_EQ(
      AsInts(Ok("s32[2]", "bitcast-convert", {Vals(PT::kF32, {1.0, -0.0})})),
      (std::vector<int64_t>{0x3F800000, kI32Min}));
  EXPECT_EQ(
      AsInts(Ok("s16[2]", "bitcast-convert", {Vals(PT::kBF16, {1.0, -2.0})})),
      (std::vector<int64_t>{0x3F80, -16384}));
  EXPECT_EQ(
      AsInts(Ok("u4[3]", "bitcast-convert", {Ints(PT::kS4, {-1, -8, 7})})),
      (std::vector<int64_t>{15, 8, 7}));
  Literal s4 = Ok("s4[2]", "bitcast-convert", {Ints(PT::kU4, {15, 8})});
  EXPECT_EQ(AsInts(s4), (std::vector<int64_t>{-1, -8}));
  EXPECT_EQ(AsBits(s4), (std::vector<uint64_t>{0xFF, 0xF8}));  // canonical
  EXPECT_EQ(AsBits(Ok("f4e2m1fn[1]", "bitcast-convert", {Ints(PT::kS4, {-1})})),
            (std::vector<uint64_t>{0xF}));
}

TEST(ElementwiseBitcastConvert, ChangesWidthLittleEndian) {
  Literal a = Vals(PT::kF32, {1.0, -2.0});
  EXPECT_EQ(AsInts(Ok("u8[2,4]", "bitcast-convert", {a})),
            (std::vector<int64_t>{0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0}));
  Literal b = Ints(PT::kU8, {0, 0, 0x80, 0x3F}, DimVector{1, 4});
  EXPECT_EQ(AsDoubles(Ok("f32[1]", "bitcast-convert", {b})),
            (std::vector<double>{1.0}));
  EXPECT_EQ(AsInts(Ok("s32[1,2]", "bitcast-convert", {Vals(PT::kF64, {1.0})})),
            (std::vector<int64_t>{0, 0x3FF00000}));
  EXPECT_EQ(
      AsInts(Ok("s4[2,2]", "bitcast-convert", {Ints(PT::kU8, {0xF1, 0x7E})})),
      (std::vector<int64_t>{1, -1, -2, 7}));
  EXPECT_EQ(AsInts(Ok("u8[1]", "bitcast-convert",
                      {Ints(PT::kS4, {1, -1}, DimVector{1, 2})})),
            (std::vector<int64_t>{0xF1}));
  Literal c = Ok("f32[1,2]", "bitcast-convert", {Complex(PT::kC64, {{3, 4}})});
  EXPECT_EQ(AsDoubles(c), (std::vector<double>{3, 4}));
  EXPECT_FALSE(Error("f16[2]", "bitcast-convert", {a}).empty());
}

// ---------------------------------------------------------------------------
// compare

std::string Attrs(const std::string& dir, const std::string& type) {
  std::string s = "direction=";
  s.append(dir);
  if (!type.empty()) s.append(", type=").append(type);
  return s;
}

TEST(ElementwiseCompare, FloatIsIeee) {
  Literal a = Vals(PT::kF32, {1, kNaN, kNaN, 2, -0.0});
  Literal b = Vals(PT::kF32, {1, 1, kNaN, 3, 0});
  auto cmp = [&](const std::string& dir, const std::string& type) {
    return AsInts(Ok("pred[5]", "compare", {a, b}, Attrs(dir, type)));
  };
  for (const std::string type : {"", "FLOAT"}) {
    EXPECT_EQ(cmp("EQ", type), (std::vector<int64_t>{1, 0, 0, 0, 1}));
    EXPECT_EQ(cmp("NE", type), (std::vector<int64_t>{0, 1, 1, 1, 0}));
    EXPECT_EQ(cmp("LT", type), (std::vector<int64_t>{0, 0, 0, 1, 0}));
    EXPECT_EQ(cmp("LE", type), (std::vector<int64_t>{1, 0, 0, 1, 1}));
    EXPECT_EQ(cmp("GT", type), (std::vector<int64_t>{0, 0, 0, 0, 0}));
    EXPECT_EQ(cmp("GE", type), (std::vector<int64_t>{1, 0, 0, 0, 1}));
  }
  Literal h = Vals(PT::kF16, {1, kNaN});
  Literal h2 = Vals(PT::kF16, {2, kNaN});
  EXPECT_EQ(AsInts(Ok("pred[2]", "compare", {h, h2}, "direction=LT")),
            (std::vector<int64_t>{1, 0}));
}

TEST(ElementwiseCompare, TotalOrder) {
  // Ascending: -NaN < -inf < -1 < -0 < +0 < 1 < inf < +NaN.
  const std::vector<double> asc = {-kNaN, -kInf, -1, -0.0, 0.0, 1, kInf, kNaN};
  for (PT t : {PT::kF32, PT::kF64, PT::kBF16, PT::kF16}) {
    std::vector<double> lo(asc.begin(), asc.end() - 1);
    std::vector<double> hi(asc.begin() + 1, asc.end());
    Literal a = Vals(t, lo), b = Vals(t, hi);
    const std::string r = "pred[7]";
    EXPECT_EQ(AsInts(Ok(r, "compare", {a, b}, "direction=LT, type=TOTALORDER")),
              std::vector<int64_t>(7, 1))
        << PrimitiveTypeName(t);
    EXPECT_EQ(AsInts(Ok(r, "compare", {a, b}, "direction=GE, type=TOTALORDER")),
              std::vector<int64_t>(7, 0));
    EXPECT_EQ(AsInts(Ok(r, "compare", {a, b}, "direction=EQ, type=TOTALORDER")),
              std::vector<int64_t>(7, 0));
    Literal nan = Vals(t, {kNaN, -0.0});
    Literal nan2 = Vals(t, {kNaN, -0.0});
    EXPECT_EQ(AsInts(Ok("pred[2]", "compare", {nan, nan2},
                        "direction=EQ, type=TOTALORDER")),
              (std::vector<int64_t>{1, 1}));
  }
  // e4m3fn: -NaN (0xFF) < -448 (0xFE) < -0 (0x80) < 0 < 448 (0x7E) < NaN.
  Literal e = Bits(PT::kF8E4M3FN, {0xFF, 0xFE, 0x80, 0x00, 0x7E});
  Literal e2 = Bits(PT::kF8E4M3FN, {0xFE, 0x80, 0x00, 0x7E, 0x7F});
  EXPECT_EQ(AsInts(Ok("pred[5]", "compare", {e, e2},
                      "direction=LT, type=TOTALORDER")),
            std::vector<int64_t>(5, 1));
  // f4e2m1fn has its sign at bit 3: -6 < -0 < 0 < 6.
  Literal f4 = Bits(PT::kF4E2M1FN, {0xF, 0x8, 0x0});
  Literal f42 = Bits(PT::kF4E2M1FN, {0x8, 0x0, 0x7});
  EXPECT_EQ(AsInts(Ok("pred[3]", "compare", {f4, f42},
                      "direction=LT, type=TOTALORDER")),
            std::vector<int64_t>(3, 1));
}

TEST(ElementwiseCompare, IntegersPredAndComplex) {
  EXPECT_EQ(AsInts(Ok("pred[2]", "compare",
                      {Ints(PT::kS32, {-1, 5}), Ints(PT::kS32, {1, 5})},
                      "direction=LT")),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(AsInts(Ok("pred[2]", "compare",
                      {Ints(PT::kS32, {-1, 5}), Ints(PT::kS32, {1, 5})},
                      "direction=LT, type=SIGNED")),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(AsInts(Ok("pred[2]", "compare",
                      {Ints(PT::kU32, {0xFFFFFFFF, 1}), Ints(PT::kU32, {1, 1})},
                      "direction=GT, type=UNSIGNED")),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(AsInts(Ok("pred[2]", "compare",
                      {Ints(PT::kS4, {-8, 7}), Ints(PT::kS4, {7, -8})},
                      "direction=LT")),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(AsInts(Ok("pred[2]", "compare",
                      {Ints(PT::kU4, {15, 0}), Ints(PT::kU4, {7, 7})},
                      "direction=GT")),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(AsInts(Ok("pred[2]", "compare",
                      {Ints(PT::kPred, {1, 0}), Ints(PT::kPred, {0, 0})},
                      "direction=GT")),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(
      AsInts(Ok("pred[2]", "compare",
                {Ints(PT::kS64, {kI64Min, 0}), Ints(PT::kS64, {kI64Max, 0})},
                "direction=LE")),
      (std::vector<int64_t>{1, 1}));
  Literal c = Complex(PT::kC64, {{1, 2}, {1, 2}, {kNaN, 0}});
  Literal c2 = Complex(PT::kC64, {{1, 2}, {1, 3}, {kNaN, 0}});
  EXPECT_EQ(AsInts(Ok("pred[3]", "compare", {c, c2}, "direction=EQ")),
            (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(AsInts(Ok("pred[3]", "compare", {c, c2}, "direction=NE")),
            (std::vector<int64_t>{0, 1, 1}));
  EXPECT_FALSE(Error("pred[3]", "compare", {c, c2}, "direction=LT").empty());
  EXPECT_FALSE(Error("pred[2]", "compare",
                     {Ints(PT::kS32, {1, 2}), Ints(PT::kS32, {1, 2})},
                     "direction=LT, type=TOTALORDER")
                   .empty());
}

// ---------------------------------------------------------------------------
// select, clamp

TEST(ElementwiseSelectClamp, Select) {
  Literal p = Ints(PT::kPred, {1, 0, 1, 0});
  Literal a = Vals(PT::kF32, {1, 2, 3, 4});
  Literal b = Vals(PT::kF32, {-1, -2, -3, -4});
  EXPECT_EQ(AsDoubles(Ok("f32[4]", "select", {p, a, b})),
            (std::vector<double>{1, -2, 3, -4}));
  Literal ia = Ints(PT::kS32, {1, 2, 3});
  Literal ib = Ints(PT::kS32, {7, 8, 9});
  EXPECT_EQ(AsInts(Ok("s32[3]", "select",
                      {Ints(PT::kPred, {1}, DimVector{}), ia, ib})),
            (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(AsInts(Ok("s32[3]", "select",
                      {Ints(PT::kPred, {0}, DimVector{}), ia, ib})),
            (std::vector<int64_t>{7, 8, 9}));
  Literal ca = Complex(PT::kC128, {{1, 2}, {3, 4}});
  Literal cb = Complex(PT::kC128, {{5, 6}, {7, 8}});
  Literal c = Ok("c128[2]", "select", {Ints(PT::kPred, {0, 1}), ca, cb});
  EXPECT_EQ(c.GetComplex(0), std::complex<double>(5, 6));
  EXPECT_EQ(c.GetComplex(1), std::complex<double>(3, 4));
  EXPECT_EQ(AsInts(Ok("s4[2]", "select",
                      {Ints(PT::kPred, {1, 0}), Ints(PT::kS4, {-8, -8}),
                       Ints(PT::kS4, {7, 7})})),
            (std::vector<int64_t>{-8, 7}));
  EXPECT_FALSE(
      Error("s32[3]", "select", {Ints(PT::kS32, {1, 0, 1}), ia, ib}).empty());
}

TEST(ElementwiseSelectClamp, Clamp) {
  Literal x = Vals(PT::kF32, {-1, 0.5, 2, kNaN});
  std::vector<double> r = AsDoubles(
      Ok("f32[4]", "clamp", {Scalar(PT::kF32, 0), x, Scalar(PT::kF32, 1)}));
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[1], 0.5);
  EXPECT_EQ(r[2], 1);
  EXPECT_TRUE(std::isnan(r[3]));
  // A NaN bound gives NaN everywhere.
  for (double v :
       AsDoubles(Ok("f32[4]", "clamp",
                    {Scalar(PT::kF32, kNaN), x, Scalar(PT::kF32, 1)}))) {
    EXPECT_TRUE(std::isnan(v));
  }
  for (double v :
       AsDoubles(Ok("f32[4]", "clamp",
                    {Scalar(PT::kF32, 0), x, Scalar(PT::kF32, kNaN)}))) {
    EXPECT_TRUE(std::isnan(v));
  }
  Literal lo = Ints(PT::kS32, {0, 0, 5, 5});
  Literal xi = Ints(PT::kS32, {-3, 3, 4, 3});
  Literal hi = Ints(PT::kS32, {2, 2, 10, 1});
  EXPECT_EQ(AsInts(Ok("s32[4]", "clamp", {lo, xi, hi})),
            (std::vector<int64_t>{0, 2, 5, 1}));
  EXPECT_EQ(
      AsInts(Ok("s4[3]", "clamp",
                {Ints(PT::kS4, {-2}, DimVector{}), Ints(PT::kS4, {-8, 0, 7}),
                 Ints(PT::kS4, {3}, DimVector{})})),
      (std::vector<int64_t>{-2, 0, 3}));
  EXPECT_EQ(AsBits(Ok("f8e4m3fn[2]", "clamp",
                      {Vals(PT::kF8E4M3FN, {0}, DimVector{}),
                       Vals(PT::kF8E4M3FN, {-3, 500}),
                       Vals(PT::kF8E4M3FN, {2}, DimVector{})})),
            (std::vector<uint64_t>{0x00, 0x7F}));  // 500 was already NaN
}

// ---------------------------------------------------------------------------
// stochastic-convert

TEST(ElementwiseStochasticConvert, F32ToS32) {
  Literal x = Vals(PT::kF32, {1.25, 1.25, -1.25, -1.25, 3.0, kNaN, kInf, -kInf,
                              3e9, -3e9, 0.5, 0.5});
  Literal r = Bits(PT::kU32, {0, 0xFFFFFFFF, 0, 0xFFFFFFFF, 0, 0, 0, 0, 0, 0,
                              0x80000000, 0x7FFFFFFF});
  EXPECT_EQ(AsInts(Ok("s32[12]", "stochastic-convert", {x, r})),
            (std::vector<int64_t>{2, 1, -2, -1, 3, 0, kI32Max, kI32Min, kI32Max,
                                  kI32Min, 0, 1}));
}

TEST(ElementwiseStochasticConvert, F16ToS8AndErrors) {
  Literal x = Vals(PT::kF16, {2.5, 2.5, 200, -200, -127.5, -127.5});
  Literal r = Bits(PT::kU16, {0x7FFF, 0x8000, 0, 0, 0, 0xFFFF});
  EXPECT_EQ(AsInts(Ok("s8[6]", "stochastic-convert", {x, r})),
            (std::vector<int64_t>{3, 2, 127, -128, -128, -127}));
  Literal f = Vals(PT::kF32, {1.5});
  EXPECT_FALSE(
      Error("s32[1]", "stochastic-convert", {f, Ints(PT::kS32, {1})}).empty());
  EXPECT_FALSE(
      Error("s32[1]", "stochastic-convert", {f, Ints(PT::kU16, {1})}).empty());
  EXPECT_FALSE(
      Error("u32[1]", "stochastic-convert", {f, Ints(PT::kU32, {1})}).empty());
}

// ---------------------------------------------------------------------------
// complex

TEST(ElementwiseComplex, Arithmetic) {
  Literal a = Complex(PT::kC64, {{1, 2}, {-5, 10}});
  Literal b = Complex(PT::kC64, {{3, 4}, {3, 4}});
  Literal add = Ok("c64[2]", "add", {a, b});
  EXPECT_EQ(add.GetComplex(0), std::complex<double>(4, 6));
  Literal mul = Ok("c64[2]", "multiply", {a, b});
  EXPECT_EQ(mul.GetComplex(0), std::complex<double>(-5, 10));
  Literal div = Ok("c64[2]", "divide", {a, b});
  EXPECT_EQ(div.GetComplex(1), std::complex<double>(1, 2));
  Literal sub = Ok("c64[2]", "subtract", {a, b});
  EXPECT_EQ(sub.GetComplex(1), std::complex<double>(-8, 6));
  Literal neg = Ok("c64[2]", "negate", {a});
  EXPECT_EQ(neg.GetComplex(0), std::complex<double>(-1, -2));
  EXPECT_FALSE(Error("c64[2]", "maximum", {a, b}).empty());
  EXPECT_FALSE(Error("c64[2]", "remainder", {a, b}).empty());
}

TEST(ElementwiseComplex, RealImagAbsAndComplex) {
  Literal a = Complex(PT::kC64, {{3, 4}, {-1, 0}});
  EXPECT_EQ(AsDoubles(Ok("f32[2]", "abs", {a})), (std::vector<double>{5, 1}));
  EXPECT_EQ(AsDoubles(Ok("f32[2]", "real", {a})), (std::vector<double>{3, -1}));
  EXPECT_EQ(AsDoubles(Ok("f32[2]", "imag", {a})), (std::vector<double>{4, 0}));
  Literal d = Complex(PT::kC128, {{0.1, -0.2}});
  EXPECT_EQ(AsDoubles(Ok("f64[1]", "imag", {d})), (std::vector<double>{-0.2}));
  EXPECT_FALSE(Error("c64[2]", "abs", {a}).empty());  // result must be f32
  Literal f = Vals(PT::kF32, {1.5, -2});
  EXPECT_EQ(AsDoubles(Ok("f32[2]", "real", {f})),
            (std::vector<double>{1.5, -2}));
  EXPECT_EQ(AsDoubles(Ok("f32[2]", "imag", {f})), (std::vector<double>{0, 0}));
  EXPECT_EQ(AsInts(Ok("s32[2]", "real", {Ints(PT::kS32, {4, -9})})),
            (std::vector<int64_t>{4, -9}));
  Literal c = Ok("c64[2]", "complex", {f, Vals(PT::kF32, {3, 4})});
  EXPECT_EQ(c.GetComplex(0), std::complex<double>(1.5, 3));
  EXPECT_EQ(c.GetComplex(1), std::complex<double>(-2, 4));
  Literal c128 =
      Ok("c128[1]", "complex", {Vals(PT::kF64, {0.1}), Vals(PT::kF64, {0.3})});
  EXPECT_EQ(c128.GetComplex(0), std::complex<double>(0.1, 0.3));
}

TEST(ElementwiseComplex, Functions) {
  Literal s = Ok("c64[2]", "sign", {Complex(PT::kC64, {{3, 4}, {0, 0}})});
  EXPECT_FLOAT_EQ(static_cast<float>(s.GetComplex(0).real()), 0.6f);
  EXPECT_FLOAT_EQ(static_cast<float>(s.GetComplex(0).imag()), 0.8f);
  EXPECT_EQ(s.GetComplex(1), std::complex<double>(0, 0));
  Literal e = Ok("c128[1]", "exponential",
                 {Complex(PT::kC128, {{0, std::numbers::pi}})});
  EXPECT_DOUBLE_EQ(e.GetComplex(0).real(), -1);
  EXPECT_NEAR(e.GetComplex(0).imag(), 0, 1e-15);
  Literal q = Ok("c128[1]", "sqrt", {Complex(PT::kC128, {{-4, 0}})});
  EXPECT_EQ(q.GetComplex(0), std::complex<double>(0, 2));
  Literal rs = Ok("c128[1]", "rsqrt", {Complex(PT::kC128, {{-4, 0}})});
  EXPECT_EQ(rs.GetComplex(0), std::complex<double>(0, -0.5));
  Literal l = Ok("c128[1]", "log", {Complex(PT::kC128, {{-1, 0}})});
  EXPECT_DOUBLE_EQ(l.GetComplex(0).imag(), std::numbers::pi);
  Literal l1 = Ok("c128[2]", "log-plus-one",
                  {Complex(PT::kC128, {{1e-10, 1e-10}, {-2, 0}})});
  EXPECT_DOUBLE_EQ(l1.GetComplex(0).real(), 1e-10);
  EXPECT_DOUBLE_EQ(l1.GetComplex(0).imag(), 1e-10 / (1 + 1e-10));
  EXPECT_DOUBLE_EQ(l1.GetComplex(1).imag(), std::numbers::pi);
  Literal em = Ok("c128[1]", "exponential-minus-one",
                  {Complex(PT::kC128, {{1e-10, 0}})});
  EXPECT_DOUBLE_EQ(em.GetComplex(0).real(), std::expm1(1e-10));
  Literal p = Ok("c128[3]", "power",
                 {Complex(PT::kC128, {{1, 0}, {kInf, 0}, {kInf, 0}}),
                  Complex(PT::kC128, {{kNaN, 0}, {2, 0}, {-1, 0}})});
  EXPECT_EQ(p.GetComplex(0), std::complex<double>(1, 0));
  EXPECT_EQ(p.GetComplex(1), std::complex<double>(kInf, 0));
  EXPECT_EQ(p.GetComplex(2), std::complex<double>(0, 0));
  Literal t = Ok("c128[1]", "tanh", {Complex(PT::kC128, {{0, 0}})});
  EXPECT_EQ(t.GetComplex(0), std::complex<double>(0, 0));
  EXPECT_FALSE(Error("c64[1]", "floor", {Complex(PT::kC64, {{1, 1}})}).empty());
}

// ---------------------------------------------------------------------------
// Kernel entry points and errors.

TEST(ElementwiseKernelApi, StridesAndBroadcast) {
  Evaluator ev;
  ASSERT_TRUE(ev("f32[4]", "add",
                 {Vals(PT::kF32, {0, 0, 0, 0}), Vals(PT::kF32, {0, 0, 0, 0})})
                  .ok());
  const float a[4] = {1, 2, 3, 4};
  const float b = 10;
  float out[4] = {};
  const uint8_t* in[2] = {reinterpret_cast<const uint8_t*>(a),
                          reinterpret_cast<const uint8_t*>(&b)};
  const int64_t strides[2] = {1, 0};
  ASSERT_TRUE(ElementwiseKernel(ev.root(), in, strides,
                                reinterpret_cast<uint8_t*>(out), 4)
                  .ok());
  EXPECT_EQ(std::vector<float>(out, out + 4),
            (std::vector<float>{11, 12, 13, 14}));
  const int64_t both[2] = {0, 0};
  ASSERT_TRUE(
      ElementwiseKernel(ev.root(), in, both, reinterpret_cast<uint8_t*>(out), 4)
          .ok());
  EXPECT_EQ(std::vector<float>(out, out + 4),
            (std::vector<float>{11, 11, 11, 11}));
  const int64_t bad[2] = {1, 2};
  EXPECT_FALSE(
      ElementwiseKernel(ev.root(), in, bad, reinterpret_cast<uint8_t*>(out), 4)
          .ok());
  EXPECT_FALSE(ElementwiseKernel(ev.root(), absl::MakeConstSpan(in, 1),
                                 absl::MakeConstSpan(strides, 1),
                                 reinterpret_cast<uint8_t*>(out), 4)
                   .ok());
}

TEST(ElementwiseKernelApi, BinaryOpKernel) {
  float a[3] = {1, kNaN, -2};
  const float b[3] = {5, 0, -3};
  ASSERT_TRUE(BinaryOpKernel(Opcode::kMaximum, PT::kF32,
                             reinterpret_cast<const uint8_t*>(a),
                             reinterpret_cast<const uint8_t*>(b),
                             reinterpret_cast<uint8_t*>(a), 3)
                  .ok());
  EXPECT_EQ(a[0], 5);
  EXPECT_TRUE(std::isnan(a[1]));
  EXPECT_EQ(a[2], -2);
  uint8_t s4a[2] = {7, 0xF8};  // 7, -8
  const uint8_t s4b[2] = {1, 0xFF};
  ASSERT_TRUE(BinaryOpKernel(Opcode::kAdd, PT::kS4, s4a, s4b, s4a, 2).ok());
  EXPECT_EQ(s4a[0], 0xF8);  // -8, stored sign-extended
  EXPECT_EQ(s4a[1], 0x07);
  uint16_t bf[2] = {0x3F80, 0x4000};         // 1, 2
  const uint16_t bf2[2] = {0x4040, 0x4040};  // 3, 3
  ASSERT_TRUE(BinaryOpKernel(Opcode::kMultiply, PT::kBF16,
                             reinterpret_cast<const uint8_t*>(bf),
                             reinterpret_cast<const uint8_t*>(bf2),
                             reinterpret_cast<uint8_t*>(bf), 2)
                  .ok());
  EXPECT_EQ(bf[0], 0x4040);
  EXPECT_EQ(bf[1], 0x40C0);
  uint8_t p[2] = {1, 0};
  const uint8_t q[2] = {1, 1};
  ASSERT_TRUE(BinaryOpKernel(Opcode::kXor, PT::kPred, p, q, p, 2).ok());
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], 1);
  EXPECT_FALSE(BinaryOpKernel(Opcode::kCompare, PT::kF32, p, q, p, 1).ok());
  EXPECT_FALSE(BinaryOpKernel(Opcode::kNegate, PT::kF32, p, q, p, 1).ok());
  EXPECT_FALSE(BinaryOpKernel(Opcode::kAnd, PT::kF32, p, q, p, 1).ok());
}

TEST(ElementwiseKernelApi, Errors) {
  Literal a = Ints(PT::kS32, {1, 2});
  Literal b = Ints(PT::kS32, {1, 2, 3});
  std::string e = Error("s32[2]", "add", {a, b});
  EXPECT_NE(e.find("r:"), std::string::npos) << e;  // names the instruction
  EXPECT_NE(e.find("does not match"), std::string::npos) << e;
  Evaluator ev;
  ASSERT_TRUE(ev("s32[2]", "add", {a, a}).ok());
  const Literal* one[1] = {&a};
  EXPECT_FALSE(EvalElementwise(ev.root(), one).ok());
  Literal unknown = Literal::Unknown(a.shape());
  const Literal* two[2] = {&a, &unknown};
  EXPECT_FALSE(EvalElementwise(ev.root(), two).ok());
  Literal f = Vals(PT::kF32, {1, 2});
  const Literal* mixed[2] = {&a, &f};
  EXPECT_FALSE(EvalElementwise(ev.root(), mixed).ok());
  // Broadcasting a scalar is only for select and clamp.
  Literal s = Ints(PT::kS32, {1}, DimVector{});
  const Literal* scalar[2] = {&a, &s};
  EXPECT_FALSE(EvalElementwise(ev.root(), scalar).ok());
  EXPECT_TRUE(IsElementwiseOpcode(Opcode::kAdd));
  EXPECT_TRUE(IsElementwiseOpcode(Opcode::kStochasticConvert));
  EXPECT_TRUE(IsElementwiseOpcode(Opcode::kReducePrecision));
  EXPECT_FALSE(IsElementwiseOpcode(Opcode::kDot));
}

TEST(ElementwiseKernelApi, ScalarCallsAsInScalarFunctions) {
  // One element at a time, as the interpreter's scalar functions call it.
  Evaluator ev;
  ASSERT_TRUE(
      ev("bf16[]", "add", {Scalar(PT::kBF16, 0), Scalar(PT::kBF16, 0)}).ok());
  const uint16_t x = 0x3F80, y = 0x3B80;  // 1 and 2^-8
  uint16_t out = 0;
  const uint8_t* in[2] = {reinterpret_cast<const uint8_t*>(&x),
                          reinterpret_cast<const uint8_t*>(&y)};
  const int64_t strides[2] = {1, 1};
  ASSERT_TRUE(ElementwiseKernel(ev.root(), in, strides,
                                reinterpret_cast<uint8_t*>(&out), 1)
                  .ok());
  EXPECT_EQ(out, 0x3F80);  // the tie rounds to even
  Evaluator cv;
  ASSERT_TRUE(cv("s4[]", "convert", {Scalar(PT::kF32, 0)}).ok());
  const float f = -9.5f;
  uint8_t s4[3] = {};
  const uint8_t* cin[1] = {reinterpret_cast<const uint8_t*>(&f)};
  const int64_t bcast[1] = {0};
  ASSERT_TRUE(ElementwiseKernel(cv.root(), cin, bcast, s4, 3).ok());
  EXPECT_EQ(std::vector<int>(s4, s4 + 3), (std::vector<int>{0xF8, 0xF8, 0xF8}));
}

TEST(ElementwiseInt, OneBitTypes) {
  EXPECT_EQ(AsInts(Ok("s1[3]", "add",
                      {Ints(PT::kS1, {-1, -1, 0}), Ints(PT::kS1, {-1, 0, 0})})),
            (std::vector<int64_t>{0, -1, 0}));
  EXPECT_EQ(AsInts(Ok("u1[3]", "add",
                      {Ints(PT::kU1, {1, 1, 0}), Ints(PT::kU1, {1, 0, 0})})),
            (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(AsInts(Ok("u1[2]", "not", {Ints(PT::kU1, {1, 0})})),
            (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(AsInts(Ok("s1[2]", "negate", {Ints(PT::kS1, {-1, 0})})),
            (std::vector<int64_t>{-1, 0}));
}

TEST(ElementwiseKernelApi, EmptyArrays) {
  Literal a = Vals(PT::kBF16, {}, DimVector{0});
  Literal r = Ok("bf16[0]", "add", {a, a});
  EXPECT_EQ(r.element_count(), 0);
  EXPECT_FALSE(
      Error("f32[0]", "popcnt", {Vals(PT::kF32, {}, DimVector{0})}).empty());
}

TEST(ElementwisePerformance, F32AddOfOneMillion) {
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
  GTEST_SKIP() << "timing is meaningful only in optimised builds";
#endif
  const int64_t n = 1 << 20;
  Literal a(Shape(PT::kF32, {n}));
  Literal b(Shape(PT::kF32, {n}));
  for (int64_t i = 0; i < n; ++i) {
    a.SetFromDouble(i, static_cast<double>(i));
    b.SetFromDouble(i, 0.5);
  }
  Evaluator ev;
  ASSERT_TRUE(ev("f32[1048576]", "add", {a, b}).ok());
  const Literal* args[2] = {&a, &b};
  double best = 1e9;
  for (int rep = 0; rep < 10; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<Literal> r = EvalElementwise(ev.root(), args);
    auto t1 = std::chrono::steady_clock::now();
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->GetAsDouble(n - 1), static_cast<double>(n - 1) + 0.5);
    best = std::min(best,
                    std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  EXPECT_LT(best, 5.0) << "best of 10: " << best << " ms";
  std::printf("f32[1048576] add: best of 10 %.3f ms\n", best);
}

}  // namespace
}  // namespace hlogym
