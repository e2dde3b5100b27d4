#include "hlogym/ir/literal.h"

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/ir/module.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

using T = PrimitiveType;

Shape S(PrimitiveType t, std::initializer_list<int64_t> dims) {
  return Shape(t, DimVector(dims.begin(), dims.end()));
}

Literal Iota(PrimitiveType t, std::initializer_list<int64_t> dims,
             int64_t start = 1) {
  Literal l(S(t, dims));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetFromInt64(i, start + i);
  return l;
}

std::string Hex(uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[v & 15]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

std::string FloatText(PrimitiveType t, uint64_t bits) {
  std::string s;
  AppendFloat(t, bits, &s);
  return s;
}

// Parses `ROOT c = TYPE[] constant(TEXT)` and returns the constant's bits,
// or the error text in *error.
bool ParseScalarConstant(PrimitiveType t, const std::string& text,
                         uint64_t* bits, std::string* error) {
  const std::string module =
      StrCat("HloModule m\nENTRY e {\n ROOT c = ", PrimitiveTypeName(t),
             "[] constant(", text, ")\n}");
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(module);
  if (!m.ok()) {
    *error = std::string(m.status().message());
    return false;
  }
  const Instruction* root = (*m)->entry_computation()->root_instruction();
  if (root == nullptr || !root->has_literal()) {
    *error = "no constant root";
    return false;
  }
  *bits = root->literal().GetBits(0);
  return true;
}

// ---------------------------------------------------------------------------
// Construction, set/get.
// ---------------------------------------------------------------------------

TEST(LiteralTest, ZeroFilledConstruction) {
  Literal l(S(T::kF32, {2, 3}));
  EXPECT_EQ(l.element_count(), 6);
  EXPECT_EQ(l.size_bytes(), 24u);
  EXPECT_FALSE(l.is_unknown());
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(l.GetBits(i), 0u);
  EXPECT_EQ(l.ToString(), "{ {0, 0, 0}, {0, 0, 0} }");
}

TEST(LiteralTest, SubByteTypesTakeOneByteEach) {
  EXPECT_EQ(Literal(S(T::kS4, {5})).size_bytes(), 5u);
  EXPECT_EQ(Literal(S(T::kPred, {3})).size_bytes(), 3u);
  EXPECT_EQ(Literal(S(T::kF4E2M1FN, {2})).size_bytes(), 2u);
  EXPECT_EQ(Literal(S(T::kC64, {2})).size_bytes(), 16u);
  EXPECT_EQ(Literal(S(T::kC128, {2})).size_bytes(), 32u);
}

TEST(LiteralTest, SignedIntegers) {
  struct Row {
    PrimitiveType t;
    int64_t lo, hi;
  };
  for (Row r : {Row{T::kS1, -1, 0}, Row{T::kS2, -2, 1}, Row{T::kS4, -8, 7},
                Row{T::kS8, -128, 127}, Row{T::kS16, -32768, 32767},
                Row{T::kS32, INT32_MIN, INT32_MAX},
                Row{T::kS64, INT64_MIN, INT64_MAX}}) {
    SCOPED_TRACE(PrimitiveTypeName(r.t));
    Literal l(S(r.t, {3}));
    l.SetFromInt64(0, r.lo);
    l.SetFromInt64(1, r.hi);
    l.SetFromInt64(2, -1);
    EXPECT_EQ(l.GetAsInt64(0), r.lo);
    EXPECT_EQ(l.GetAsInt64(1), r.hi);
    EXPECT_EQ(l.GetAsInt64(2), -1);
    EXPECT_EQ(l.GetAsDouble(0), static_cast<double>(r.lo));
    EXPECT_EQ(l.ToString(), StrCat("{", r.lo, ", ", r.hi, ", -1}"));
  }
}

TEST(LiteralTest, SignedIntegersTruncate) {
  // s8: 200 -> 200 - 256 = -56; s4: 9 -> 9 - 16 = -7.
  Literal a(S(T::kS8, {}));
  a.SetFromInt64(0, 200);
  EXPECT_EQ(a.GetAsInt64(0), -56);
  Literal b(S(T::kS4, {}));
  b.SetFromInt64(0, 9);
  EXPECT_EQ(b.GetAsInt64(0), -7);
  EXPECT_EQ(b.ToString(), "-7");
}

TEST(LiteralTest, UnsignedIntegers) {
  struct Row {
    PrimitiveType t;
    uint64_t hi;
  };
  for (Row r :
       {Row{T::kU1, 1}, Row{T::kU2, 3}, Row{T::kU4, 15}, Row{T::kU8, 255},
        Row{T::kU16, 65535}, Row{T::kU32, 4294967295u},
        Row{T::kU64, 18446744073709551615u}}) {
    SCOPED_TRACE(PrimitiveTypeName(r.t));
    Literal l(S(r.t, {2}));
    l.SetBits(1, r.hi);
    EXPECT_EQ(l.GetAsUint64(0), 0u);
    EXPECT_EQ(l.GetAsUint64(1), r.hi);
    EXPECT_EQ(l.ToString(), StrCat("{0, ", r.hi, "}"));
  }
  Literal u(S(T::kU64, {}));
  u.SetBits(0, ~uint64_t{0});
  EXPECT_EQ(u.ToString(), "18446744073709551615");
  Literal u8(S(T::kU8, {}));
  u8.SetFromInt64(0, 300);  // truncated to 8 bits: 300 - 256
  EXPECT_EQ(u8.GetAsUint64(0), 44u);
}

TEST(LiteralTest, Pred) {
  Literal l(S(T::kPred, {3}));
  l.SetFromInt64(0, 1);
  l.SetFromInt64(1, 0);
  l.SetFromInt64(2, 42);  // any non-zero is true
  EXPECT_EQ(l.GetAsInt64(0), 1);
  EXPECT_EQ(l.GetAsInt64(1), 0);
  EXPECT_EQ(l.GetAsInt64(2), 1);
  EXPECT_EQ(l.GetBits(2), 1u);
  EXPECT_EQ(l.ToString(), "{true, false, true}");
}

TEST(LiteralTest, Floats) {
  Literal f(S(T::kF32, {2}));
  EXPECT_TRUE(f.SetFromDouble(0, 1.5));
  EXPECT_TRUE(f.SetFromDouble(1, -0.1));
  EXPECT_EQ(f.GetBits(0), 0x3FC00000u);
  EXPECT_EQ(f.GetAsDouble(0), 1.5);
  // -0.1 as f32 is 0xbdcccccd.
  EXPECT_EQ(Hex(f.GetBits(1)), "0xbdcccccd");
  EXPECT_EQ(f.GetAsDouble(1), static_cast<double>(-0.1f));
}

TEST(LiteralTest, F32OverflowIsReported) {
  // 1e300 is finite but beyond f32's max: SetFromDouble reports it.
  Literal f(S(T::kF32, {}));
  EXPECT_FALSE(f.SetFromDouble(0, 1e300));
  EXPECT_TRUE(f.SetFromDouble(0, std::numeric_limits<double>::infinity()));
  EXPECT_EQ(Hex(f.GetBits(0)), "0x7f800000");
}

TEST(LiteralTest, SmallFloats) {
  Literal h(S(T::kF16, {2}));
  // 0.1: 1.6 * 2^-4; 0.6 * 1024 = 614.4 -> 614 = 0x266; field 11 = 01011.
  // 0 01011 1001100110 = 0x2e66.
  EXPECT_TRUE(h.SetFromDouble(0, 0.1));
  EXPECT_EQ(Hex(h.GetBits(0)), "0x2e66");
  EXPECT_FALSE(h.SetFromDouble(1, 70000));  // beyond 65504
  EXPECT_EQ(Hex(h.GetBits(1)), "0x7c00");

  Literal b(S(T::kBF16, {}));
  EXPECT_TRUE(b.SetFromDouble(0, 0.1));
  EXPECT_EQ(Hex(b.GetBits(0)), "0x3dcd");

  Literal e(S(T::kF8E4M3FN, {}));
  EXPECT_TRUE(e.SetFromDouble(0, 448));
  EXPECT_EQ(Hex(e.GetBits(0)), "0x7e");
  EXPECT_EQ(e.GetAsDouble(0), 448.0);

  Literal f4(S(T::kF4E2M1FN, {}));
  EXPECT_TRUE(f4.SetFromDouble(0, -6));
  EXPECT_EQ(Hex(f4.GetBits(0)), "0xf");
}

TEST(LiteralTest, F64) {
  Literal d(S(T::kF64, {}));
  EXPECT_TRUE(d.SetFromDouble(0, 0.1));
  EXPECT_EQ(Hex(d.GetBits(0)), "0x3fb999999999999a");
  EXPECT_EQ(d.ToString(), "0.1");
}

TEST(LiteralTest, Complex) {
  Literal c(S(T::kC64, {2}));
  c.SetComplex(0, {1.5, -2});
  c.SetComplex(1, {0, 0.25});
  EXPECT_EQ(c.GetComplex(0), std::complex<double>(1.5, -2));
  EXPECT_EQ(c.GetComplex(1), std::complex<double>(0, 0.25));
  EXPECT_EQ(c.GetAsDouble(0), 1.5);            // the real part
  EXPECT_EQ(Hex(c.GetBits(0)), "0x3fc00000");  // real part bits only
  EXPECT_EQ(c.ToString(), "{(1.5, -2), (0, 0.25)}");

  Literal z(S(T::kC128, {}));
  z.SetComplex(0, {0.1, -1e300});
  EXPECT_EQ(z.GetComplex(0), std::complex<double>(0.1, -1e300));
  EXPECT_EQ(z.ToString(), "(0.1, -1e+300)");
}

TEST(LiteralTest, IntegerConversionsFromFloats) {
  Literal f(S(T::kF32, {}));
  f.SetFromDouble(0, -3.75);
  EXPECT_EQ(f.GetAsInt64(0), -3);  // truncation toward zero
  Literal i(S(T::kS32, {}));
  i.SetFromDouble(0, 7.9);
  EXPECT_EQ(i.GetAsInt64(0), 7);
  Literal g(S(T::kF16, {}));
  g.SetFromInt64(0, 3);
  EXPECT_EQ(Hex(g.GetBits(0)), "0x4200");  // 0 10000 1000000000
}

// ---------------------------------------------------------------------------
// ToString.
// ---------------------------------------------------------------------------

TEST(LiteralToStringTest, Scalars) {
  Literal s(S(T::kS32, {}));
  s.SetFromInt64(0, 3);
  EXPECT_EQ(s.ToString(), "3");
  Literal p(S(T::kPred, {}));
  EXPECT_EQ(p.ToString(), "false");
  Literal f(S(T::kF32, {}));
  f.SetFromDouble(0, -2.5e-3);
  EXPECT_EQ(f.ToString(), "-0.0025");
}

TEST(LiteralToStringTest, NestedArrays) {
  EXPECT_EQ(Iota(T::kS32, {2}).ToString(), "{1, 2}");
  EXPECT_EQ(Iota(T::kS32, {2, 2}).ToString(), "{ {1, 2}, {3, 4} }");
  EXPECT_EQ(Iota(T::kS32, {2, 3}).ToString(), "{ {1, 2, 3}, {4, 5, 6} }");
  EXPECT_EQ(Iota(T::kS32, {3, 1}).ToString(), "{ {1}, {2}, {3} }");
  EXPECT_EQ(Iota(T::kS32, {2, 2, 2}).ToString(),
            "{ { {1, 2}, {3, 4} }, { {5, 6}, {7, 8} } }");
  EXPECT_EQ(Iota(T::kS32, {1, 1, 1}).ToString(), "{ { {1} } }");
  EXPECT_EQ(Iota(T::kF32, {1, 2}).ToString(), "{ {1, 2} }");
}

TEST(LiteralToStringTest, EmptyArrays) {
  EXPECT_EQ(Literal(S(T::kF32, {0})).ToString(), "{}");
  EXPECT_EQ(Literal(S(T::kF32, {0, 3})).ToString(), "{}");
  EXPECT_EQ(Literal(S(T::kF32, {2, 0})).ToString(), "{ {}, {} }");
  EXPECT_EQ(Literal(S(T::kF32, {1, 2, 0})).ToString(), "{ { {}, {} } }");
}

TEST(LiteralToStringTest, Tuples) {
  Literal t(Shape::Tuple({S(T::kS32, {}), S(T::kF32, {2})}));
  auto& el = *t.mutable_tuple_elements();
  ASSERT_EQ(el.size(), 2u);
  el[0].SetFromInt64(0, 7);
  el[1].SetFromDouble(0, 1);
  el[1].SetFromDouble(1, 2);
  EXPECT_EQ(t.ToString(), "(7, {1, 2})");
  EXPECT_EQ(Literal(Shape::Tuple({})).ToString(), "()");
  Literal nested(Shape::Tuple({Shape::Tuple({S(T::kPred, {})})}));
  EXPECT_EQ(nested.ToString(), "((false))");
}

TEST(LiteralToStringTest, Unknown) {
  Literal u = Literal::Unknown(S(T::kF32, {1024, 1024}));
  EXPECT_TRUE(u.is_unknown());
  EXPECT_EQ(u.ToString(), "{...}");
  EXPECT_EQ(u.size_bytes(), 0u);
  EXPECT_NE(u, Literal(S(T::kF32, {1024, 1024})));
}

TEST(LiteralToStringTest, AppendElement) {
  Literal l = Iota(T::kS8, {3}, -1);
  std::string out = "[";
  l.AppendElement(0, &out);
  l.AppendElement(2, &out);
  EXPECT_EQ(out, "[-11");
}

// ---------------------------------------------------------------------------
// AppendFloat: special values and exact text.
// ---------------------------------------------------------------------------

TEST(AppendFloatTest, SpecialValues) {
  EXPECT_EQ(FloatText(T::kF32, 0x7F800000), "inf");
  EXPECT_EQ(FloatText(T::kF32, 0xFF800000), "-inf");
  EXPECT_EQ(FloatText(T::kF32, 0x7FC00000), "nan");
  EXPECT_EQ(FloatText(T::kF32, 0xFFC00000), "-nan");
  // Signalling / payload NaNs print their mantissa bits.
  EXPECT_EQ(FloatText(T::kF32, 0x7F800003), "nan(0x3)");
  EXPECT_EQ(FloatText(T::kF32, 0xFF800003), "-nan(0x3)");
  EXPECT_EQ(FloatText(T::kF32, 0x7FC00001), "nan(0x400001)");
  EXPECT_EQ(FloatText(T::kF64, 0x7FF8000000000000), "nan");
  EXPECT_EQ(FloatText(T::kF64, 0x7FF0000000000001), "nan(0x1)");
  EXPECT_EQ(FloatText(T::kF64, 0xFFF0000000000000), "-inf");
  EXPECT_EQ(FloatText(T::kF32, 0x00000000), "0");
  EXPECT_EQ(FloatText(T::kF32, 0x80000000), "-0");
  // f16 0x7e00 is the quiet NaN; 0x7c01 has payload 1; 0xfd00 payload 0x100.
  EXPECT_EQ(FloatText(T::kF16, 0x7E00), "nan");
  EXPECT_EQ(FloatText(T::kF16, 0x7C01), "nan(0x1)");
  EXPECT_EQ(FloatText(T::kF16, 0xFD00), "-nan(0x100)");
  EXPECT_EQ(FloatText(T::kF16, 0x7C00), "inf");
  // fn / fnuz formats have a single NaN (per sign for fn).
  EXPECT_EQ(FloatText(T::kF8E4M3FN, 0x7F), "nan");
  EXPECT_EQ(FloatText(T::kF8E4M3FN, 0xFF), "-nan");
  EXPECT_EQ(FloatText(T::kF8E4M3FNUZ, 0x80), "nan");
  EXPECT_EQ(FloatText(T::kF8E8M0FNU, 0xFF), "nan");
}

TEST(AppendFloatTest, ExactText) {
  // f32 prints digits10 (6) significant digits when that round-trips,
  // else max_digits10 (9), as XLA does.
  EXPECT_EQ(FloatText(T::kF32, std::bit_cast<uint32_t>(1.0f)), "1");
  EXPECT_EQ(FloatText(T::kF32, std::bit_cast<uint32_t>(0.1f)), "0.1");
  EXPECT_EQ(FloatText(T::kF32, std::bit_cast<uint32_t>(-2.5f)), "-2.5");
  EXPECT_EQ(FloatText(T::kF32, std::bit_cast<uint32_t>(100.0f)), "100");
  EXPECT_EQ(FloatText(T::kF32, std::bit_cast<uint32_t>(1e10f)), "1e+10");
  EXPECT_EQ(FloatText(T::kF32, std::bit_cast<uint32_t>(1.0f / 3)),
            "0.333333343");
  EXPECT_EQ(FloatText(T::kF32, std::bit_cast<uint32_t>(16777216.0f)),
            "16777216");
  EXPECT_EQ(FloatText(T::kF64, std::bit_cast<uint64_t>(0.1)), "0.1");
  EXPECT_EQ(FloatText(T::kF64, std::bit_cast<uint64_t>(1.0 / 3)),
            "0.33333333333333331");
  // Small types: values with few digits print exactly.
  EXPECT_EQ(FloatText(T::kF16, 0x3C00), "1");
  EXPECT_EQ(FloatText(T::kBF16, 0xC020), "-2.5");
  EXPECT_EQ(FloatText(T::kF8E4M3FN, 0x7E), "448");
  EXPECT_EQ(FloatText(T::kF4E2M1FN, 0x1), "0.5");
  EXPECT_EQ(FloatText(T::kF6E3M2FN, 0x1F), "28");
}

// ---------------------------------------------------------------------------
// AppendFloat -> ParseModule round trips.
// ---------------------------------------------------------------------------

// Checks that the printed text of `bits` parses back to `bits`.
void ExpectRoundTrip(PrimitiveType t, uint64_t bits, int* failures) {
  const std::string text = FloatText(t, bits);
  uint64_t back = 0;
  std::string error;
  if (!ParseScalarConstant(t, text, &back, &error)) {
    ADD_FAILURE() << PrimitiveTypeName(t) << " " << Hex(bits) << " printed as '"
                  << text << "' does not parse: " << error;
    ++*failures;
    return;
  }
  if (back != bits) {
    ADD_FAILURE() << PrimitiveTypeName(t) << " " << Hex(bits) << " printed as '"
                  << text << "' parses back as " << Hex(back);
    ++*failures;
  }
}

bool IsNegativeZero(PrimitiveType t, uint64_t bits) {
  double v = BitsToFloat(t, bits);
  return v == 0 && std::signbit(v);
}

// Negative zero has its own test below; it is skipped here so that one
// defect does not hide others.
TEST(AppendFloatRoundTripTest, RandomF32) {
  std::mt19937_64 rng(12345);
  int failures = 0;
  for (int i = 0; i < 4000 && failures < 10; ++i) {
    const uint64_t bits = rng() & 0xFFFFFFFFu;
    if (IsNegativeZero(T::kF32, bits)) continue;
    ExpectRoundTrip(T::kF32, bits, &failures);
  }
  // Edge patterns: min/max subnormal, min normal, max, 1, NaN payloads.
  for (uint64_t bits : {0x00000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu,
                        0x3F800000u, 0x7F800001u, 0x7FFFFFFFu, 0xFFC00000u,
                        0x7F800000u, 0xFF800000u, 0x00000000u, 0x80000001u}) {
    ExpectRoundTrip(T::kF32, bits, &failures);
  }
}

TEST(AppendFloatRoundTripTest, RandomF64) {
  std::mt19937_64 rng(678);
  int failures = 0;
  for (int i = 0; i < 4000 && failures < 10; ++i) {
    const uint64_t bits = rng();
    if (IsNegativeZero(T::kF64, bits)) continue;
    ExpectRoundTrip(T::kF64, bits, &failures);
  }
  for (uint64_t bits :
       {uint64_t{1}, uint64_t{0x000FFFFFFFFFFFFF}, uint64_t{0x0010000000000000},
        uint64_t{0x7FEFFFFFFFFFFFFF}, uint64_t{0x3FF0000000000000},
        uint64_t{0x7FF0000000000001}, uint64_t{0xFFFFFFFFFFFFFFFF},
        uint64_t{0x7FF0000000000000}, uint64_t{0}}) {
    ExpectRoundTrip(T::kF64, bits, &failures);
  }
}

TEST(AppendFloatRoundTripTest, EveryPatternOfEverySmallFloatType) {
  for (PrimitiveType t :
       {T::kF16, T::kBF16, T::kF8E5M2, T::kF8E4M3, T::kF8E4M3FN,
        T::kF8E4M3B11FNUZ, T::kF8E3M4, T::kF8E5M2FNUZ, T::kF8E4M3FNUZ,
        T::kF8E8M0FNU, T::kF4E2M1FN, T::kF6E3M2FN, T::kF6E2M3FN}) {
    SCOPED_TRACE(PrimitiveTypeName(t));
    int failures = 0;
    const uint64_t n = uint64_t{1} << BitWidth(t);
    for (uint64_t bits = 0; bits < n && failures < 10; ++bits) {
      if (IsNegativeZero(t, bits)) continue;
      ExpectRoundTrip(t, bits, &failures);
    }
  }
}

// BUG (see report): "-0" is printed for negative zero, but the parser reads
// "-0" as the integer 0 and stores +0, so the sign is lost.
TEST(AppendFloatRoundTripTest, NegativeZero) {
  int failures = 0;
  ExpectRoundTrip(T::kF32, 0x80000000u, &failures);
  ExpectRoundTrip(T::kF64, uint64_t{1} << 63, &failures);
  ExpectRoundTrip(T::kF16, 0x8000, &failures);
  ExpectRoundTrip(T::kBF16, 0x8000, &failures);
  ExpectRoundTrip(T::kF8E4M3FN, 0x80, &failures);
  ExpectRoundTrip(T::kF4E2M1FN, 0x8, &failures);
}

TEST(AppendFloatRoundTripTest, ExplicitTexts) {
  struct Row {
    PrimitiveType t;
    const char* text;
    uint64_t bits;
  };
  for (Row r :
       {Row{T::kF32, "nan", 0x7FC00000}, Row{T::kF32, "-nan", 0xFFC00000},
        Row{T::kF32, "nan(0x3)", 0x7F800003},
        Row{T::kF32, "-nan(0x3)", 0xFF800003}, Row{T::kF32, "inf", 0x7F800000},
        Row{T::kF32, "-inf", 0xFF800000}, Row{T::kF32, "-0.0", 0x80000000},
        Row{T::kF32, "1e-45", 0x00000001},
        Row{T::kF32, "3.40282347e+38", 0x7F7FFFFF},
        Row{T::kF16, "nan(0x1)", 0x7C01}, Row{T::kF16, "-nan", 0xFE00},
        Row{T::kF16, "65504", 0x7BFF}, Row{T::kF16, "65519", 0x7BFF},
        Row{T::kBF16, "-inf", 0xFF80}, Row{T::kF8E4M3FN, "-nan", 0xFF},
        Row{T::kF8E4M3FNUZ, "-nan", 0x80}, Row{T::kF8E5M2, "nan(0x1)", 0x7D},
        Row{T::kF64, "nan(0xFFFFFFFFFFFFF)", 0x7FFFFFFFFFFFFFFF},
        Row{T::kF64, "2.5E+3", 0x40A3880000000000}}) {
    SCOPED_TRACE(StrCat(PrimitiveTypeName(r.t), " ", r.text));
    uint64_t bits = 0;
    std::string error;
    ASSERT_TRUE(ParseScalarConstant(r.t, r.text, &bits, &error)) << error;
    EXPECT_EQ(Hex(bits), Hex(r.bits));
  }
}

TEST(AppendFloatRoundTripTest, RejectedTexts) {
  struct Row {
    PrimitiveType t;
    const char* text;
  };
  // NaN payloads must fit the mantissa and be non-zero; fn/fnuz formats
  // take no payload; formats without NaN reject it; overflow is an error.
  for (Row r :
       {Row{T::kF16, "nan(0x400)"}, Row{T::kF16, "nan(0x0)"},
        Row{T::kF8E4M3FN, "nan(0x1)"}, Row{T::kF4E2M1FN, "nan"},
        Row{T::kF16, "70000"}, Row{T::kF16, "65520"}, Row{T::kF8E4M3FN, "480"},
        Row{T::kBF16, "1e39"}, Row{T::kF32, "1e39"}, Row{T::kF32, "true"}}) {
    SCOPED_TRACE(StrCat(PrimitiveTypeName(r.t), " ", r.text));
    uint64_t bits = 0;
    std::string error;
    EXPECT_FALSE(ParseScalarConstant(r.t, r.text, &bits, &error));
    EXPECT_EQ(error.rfind("<text>:3:", 0), 0u) << error;
  }
}

// BUG (see report): EncodeSmallFloat misses overflow in formats whose
// largest exponent field holds finite values and whose all-ones mantissa is
// not NaN (the fnuz family, f4e2m1fn, f6*): the exponent is clamped to the
// maximum and the value silently saturates, so these out-of-range
// constants are accepted.
TEST(AppendFloatRoundTripTest, OutOfRangeSmallFloatsAreRejected) {
  struct Row {
    PrimitiveType t;
    const char* text;
  };
  for (Row r : {Row{T::kF8E4M3FNUZ, "1000"}, Row{T::kF8E5M2FNUZ, "1e6"},
                Row{T::kF8E4M3B11FNUZ, "31"}, Row{T::kF4E2M1FN, "100"},
                Row{T::kF6E2M3FN, "8"}, Row{T::kF6E3M2FN, "-32"}}) {
    SCOPED_TRACE(StrCat(PrimitiveTypeName(r.t), " ", r.text));
    uint64_t bits = 0;
    std::string error;
    EXPECT_FALSE(ParseScalarConstant(r.t, r.text, &bits, &error))
        << "accepted as " << Hex(bits);
  }
}

// ---------------------------------------------------------------------------
// Equality and hashing.
// ---------------------------------------------------------------------------

TEST(LiteralTest, EqualityAndHash) {
  Literal a = Iota(T::kS32, {2, 2});
  Literal b = Iota(T::kS32, {2, 2});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Hash(), b.Hash());
  b.SetFromInt64(3, 5);
  EXPECT_NE(a, b);
  EXPECT_NE(a.Hash(), b.Hash());
  // Same bytes, different shape.
  Literal c = Iota(T::kS32, {4});
  EXPECT_NE(a, c);
  EXPECT_NE(a.Hash(), c.Hash());
  // Layout is ignored.
  Shape s = S(T::kS32, {2, 2});
  s.mutable_layout()->minor_to_major = DimVector({0, 1});
  Literal d(s);
  for (int64_t i = 0; i < 4; ++i) d.SetFromInt64(i, i + 1);
  EXPECT_EQ(a, d);
  // Same bits, different element type.
  Literal e(S(T::kU32, {2, 2}));
  for (int64_t i = 0; i < 4; ++i) e.SetFromInt64(i, i + 1);
  EXPECT_NE(a, e);
  // Unknown literals differ from known zeros.
  EXPECT_NE(Literal::Unknown(S(T::kS32, {2})), Literal(S(T::kS32, {2})));
}

TEST(LiteralTest, FloatToBitsAndBack) {
  uint64_t bits = 0;
  EXPECT_TRUE(FloatToBits(T::kF32, 0.5, &bits));
  EXPECT_EQ(Hex(bits), "0x3f000000");
  EXPECT_EQ(BitsToFloat(T::kF32, bits), 0.5);
  EXPECT_TRUE(FloatToBits(T::kF8E5M2, -57344, &bits));
  EXPECT_EQ(Hex(bits), "0xfb");
  EXPECT_FALSE(FloatToBits(T::kF8E5M2, 1e9, &bits));
  EXPECT_FALSE(FloatToBits(T::kF32, 1e39, &bits));
  EXPECT_TRUE(FloatToBits(T::kF64, 1e300, &bits));
  EXPECT_EQ(BitsToFloat(T::kF64, bits), 1e300);
}

}  // namespace
}  // namespace hlogym
