#include "hlogym/ir/primitive_type.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

using T = PrimitiveType;

// Every element type the text format can name, with its spelling and its
// bit width, written out by hand (section 4.1 of the format notes).
struct TypeRow {
  PrimitiveType type;
  std::string_view name;
  int bits;
  int bytes;
};
constexpr TypeRow kTypeRows[] = {
    {T::kPred, "pred", 8, 1},
    {T::kS1, "s1", 1, 1},
    {T::kS2, "s2", 2, 1},
    {T::kS4, "s4", 4, 1},
    {T::kS8, "s8", 8, 1},
    {T::kS16, "s16", 16, 2},
    {T::kS32, "s32", 32, 4},
    {T::kS64, "s64", 64, 8},
    {T::kU1, "u1", 1, 1},
    {T::kU2, "u2", 2, 1},
    {T::kU4, "u4", 4, 1},
    {T::kU8, "u8", 8, 1},
    {T::kU16, "u16", 16, 2},
    {T::kU32, "u32", 32, 4},
    {T::kU64, "u64", 64, 8},
    {T::kF16, "f16", 16, 2},
    {T::kBF16, "bf16", 16, 2},
    {T::kF32, "f32", 32, 4},
    {T::kF64, "f64", 64, 8},
    {T::kF8E5M2, "f8e5m2", 8, 1},
    {T::kF8E4M3, "f8e4m3", 8, 1},
    {T::kF8E4M3FN, "f8e4m3fn", 8, 1},
    {T::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8, 1},
    {T::kF8E3M4, "f8e3m4", 8, 1},
    {T::kF8E5M2FNUZ, "f8e5m2fnuz", 8, 1},
    {T::kF8E4M3FNUZ, "f8e4m3fnuz", 8, 1},
    {T::kF8E8M0FNU, "f8e8m0fnu", 8, 1},
    {T::kF4E2M1FN, "f4e2m1fn", 4, 1},
    {T::kF6E3M2FN, "f6e3m2fn", 6, 1},
    {T::kF6E2M3FN, "f6e2m3fn", 6, 1},
    {T::kC64, "c64", 64, 8},
    {T::kC128, "c128", 128, 16},
    {T::kToken, "token", 0, 0},
    {T::kOpaque, "opaque", 0, 0},
    {T::kTuple, "tuple", 0, 0},
    {T::kBuffer, "buffer", 0, 0},
};

// The small floating types (<= 16 bits) that SmallFloatFormat describes.
constexpr PrimitiveType kSmallFloats[] = {
    T::kF16,        T::kBF16,          T::kF8E5M2,   T::kF8E4M3,
    T::kF8E4M3FN,   T::kF8E4M3B11FNUZ, T::kF8E3M4,   T::kF8E5M2FNUZ,
    T::kF8E4M3FNUZ, T::kF8E8M0FNU,     T::kF4E2M1FN, T::kF6E3M2FN,
    T::kF6E2M3FN,
};

FloatFormat Fmt(PrimitiveType t) {
  std::optional<FloatFormat> f = SmallFloatFormat(t);
  EXPECT_TRUE(f.has_value()) << PrimitiveTypeName(t);
  return f.value_or(FloatFormat{5, 10, 15});
}

// Encodes `v` in type `t`; *ok receives the return value.
uint32_t Enc(PrimitiveType t, double v, bool* ok = nullptr) {
  uint32_t bits = 0xDEADBEEF;
  bool r = EncodeSmallFloat(Fmt(t), v, &bits);
  if (ok != nullptr) *ok = r;
  return bits;
}
double Dec(PrimitiveType t, uint32_t bits) {
  return DecodeSmallFloat(Fmt(t), bits);
}

std::string Hex(uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s = "0x";
  bool started = false;
  for (int shift = 28; shift >= 0; shift -= 4) {
    int d = (v >> shift) & 15;
    if (d != 0 || started || shift == 0) {
      s.push_back(kDigits[d]);
      started = true;
    }
  }
  return s;
}

// ---------------------------------------------------------------------------
// Names, widths and predicates.
// ---------------------------------------------------------------------------

TEST(PrimitiveTypeTest, NamesMatchTheTextFormat) {
  for (const TypeRow& row : kTypeRows) {
    EXPECT_EQ(PrimitiveTypeName(row.type), row.name);
  }
}

TEST(PrimitiveTypeTest, NamesRoundTripForEveryType) {
  // Every enumerator between kInvalid and kNumTypes has a name that parses
  // back to it.
  int checked = 0;
  for (int i = static_cast<int>(T::kPred); i < static_cast<int>(T::kNumTypes);
       ++i) {
    PrimitiveType t = static_cast<PrimitiveType>(i);
    std::string_view name = PrimitiveTypeName(t);
    std::optional<PrimitiveType> back = ParsePrimitiveType(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(*back, t) << name;
    ++checked;
  }
  // The table above lists them all.
  EXPECT_EQ(checked, static_cast<int>(std::size(kTypeRows)));
}

TEST(PrimitiveTypeTest, ParseAcceptsOpaqueTypeAlias) {
  EXPECT_EQ(ParsePrimitiveType("opaque_type"), T::kOpaque);
  EXPECT_EQ(ParsePrimitiveType("opaque"), T::kOpaque);
}

TEST(PrimitiveTypeTest, ParseRejectsNonTypes) {
  for (std::string_view w :
       {"", "F32", "f33", "float", "s128", "invalid", "f8", "f8e4m3FN", "f32 ",
        " f32", "bf", "c32", "u0", "pred_"}) {
    EXPECT_FALSE(ParsePrimitiveType(w).has_value()) << "'" << w << "'";
  }
}

TEST(PrimitiveTypeTest, BitAndByteWidths) {
  for (const TypeRow& row : kTypeRows) {
    EXPECT_EQ(BitWidth(row.type), row.bits) << row.name;
    EXPECT_EQ(ByteWidth(row.type), row.bytes) << row.name;
  }
  EXPECT_EQ(BitWidth(T::kInvalid), 0);
  EXPECT_EQ(ByteWidth(T::kInvalid), 0);
}

TEST(PrimitiveTypeTest, Predicates) {
  for (const TypeRow& row : kTypeRows) {
    const std::string_view n = row.name;
    const bool is_signed = n[0] == 's';
    const bool is_unsigned = n[0] == 'u';
    const bool is_complex = n[0] == 'c';
    const bool is_float = (n[0] == 'f' || n == "bf16");
    const bool is_array =
        n != "token" && n != "opaque" && n != "tuple" && n != "buffer";
    EXPECT_EQ(IsSignedIntegralType(row.type), is_signed) << n;
    EXPECT_EQ(IsUnsignedIntegralType(row.type), is_unsigned) << n;
    EXPECT_EQ(IsIntegralType(row.type), is_signed || is_unsigned) << n;
    EXPECT_EQ(IsComplexType(row.type), is_complex) << n;
    EXPECT_EQ(IsFloatingPointType(row.type), is_float) << n;
    EXPECT_EQ(IsArrayType(row.type), is_array) << n;
  }
  EXPECT_FALSE(IsArrayType(T::kInvalid));
  EXPECT_FALSE(IsIntegralType(T::kPred));
}

TEST(PrimitiveTypeTest, ComplexComponentType) {
  EXPECT_EQ(ComplexComponentType(T::kC64), T::kF32);
  EXPECT_EQ(ComplexComponentType(T::kC128), T::kF64);
  EXPECT_EQ(ComplexComponentType(T::kF32), T::kF32);
  EXPECT_EQ(ComplexComponentType(T::kS8), T::kS8);
}

TEST(PrimitiveTypeTest, SmallFloatFormatCoversExactlyTheSmallFloats) {
  for (PrimitiveType t : kSmallFloats) {
    std::optional<FloatFormat> f = SmallFloatFormat(t);
    ASSERT_TRUE(f.has_value()) << PrimitiveTypeName(t);
    EXPECT_EQ(f->total_bits(), BitWidth(t)) << PrimitiveTypeName(t);
  }
  for (PrimitiveType t : {T::kF32, T::kF64, T::kS8, T::kU16, T::kPred, T::kC64,
                          T::kToken, T::kTuple}) {
    EXPECT_FALSE(SmallFloatFormat(t).has_value()) << PrimitiveTypeName(t);
  }
}

// ---------------------------------------------------------------------------
// Exact values. Each expected encoding is derived by hand:
//   value = 2^(field - bias) * (1 + mantissa / 2^m)   (normal)
//   value = 2^(1 - bias) * (mantissa / 2^m)           (subnormal, field 0)
// ---------------------------------------------------------------------------

struct ExactCase {
  PrimitiveType type;
  uint32_t bits;
  double value;
  const char* why;
};

constexpr ExactCase kMaxFinite[] = {
    // f16: e5m10 bias 15; field 30, mantissa all ones:
    // 2^15 * (2 - 2^-10) = 65504 -> 0 11110 1111111111 = 0x7bff.
    {T::kF16, 0x7BFF, 65504.0, "f16 max"},
    // bf16: e8m7 bias 127; field 254: 2^127 * (2 - 2^-7) -> 0x7f7f.
    {T::kBF16, 0x7F7F, std::ldexp(255.0, 120), "bf16 max"},
    // f8e5m2: bias 15, IEEE (field 31 = inf/nan); field 30, mant 11:
    // 2^15 * 1.75 = 57344 -> 0 11110 11 = 0x7b.
    {T::kF8E5M2, 0x7B, 57344.0, "f8e5m2 max"},
    // f8e4m3: bias 7, IEEE; field 14, mant 111: 2^7 * 1.875 = 240 -> 0x77.
    {T::kF8E4M3, 0x77, 240.0, "f8e4m3 max"},
    // f8e4m3fn: bias 7, only S.1111.111 is NaN; field 15, mant 110:
    // 2^8 * 1.75 = 448 -> 0 1111 110 = 0x7e.
    {T::kF8E4M3FN, 0x7E, 448.0, "f8e4m3fn max"},
    // f8e4m3b11fnuz: bias 11, no inf, -0 is NaN; field 15 mant 111:
    // 2^4 * 1.875 = 30 -> 0x7f.
    {T::kF8E4M3B11FNUZ, 0x7F, 30.0, "f8e4m3b11fnuz max"},
    // f8e3m4: bias 3, IEEE; field 6 mant 1111: 2^3 * (1 + 15/16) = 15.5
    // -> 0 110 1111 = 0x6f.
    {T::kF8E3M4, 0x6F, 15.5, "f8e3m4 max"},
    // f8e5m2fnuz: bias 16; field 31 mant 11: 2^15 * 1.75 = 57344 -> 0x7f.
    {T::kF8E5M2FNUZ, 0x7F, 57344.0, "f8e5m2fnuz max"},
    // f8e4m3fnuz: bias 8; field 15 mant 111: 2^7 * 1.875 = 240 -> 0x7f.
    {T::kF8E4M3FNUZ, 0x7F, 240.0, "f8e4m3fnuz max"},
    // f8e8m0fnu: exponent only, bias 127, 0xff is NaN: 0xfe = 2^127.
    {T::kF8E8M0FNU, 0xFE, std::ldexp(1.0, 127), "f8e8m0fnu max"},
    // f4e2m1fn: bias 1, no inf/nan; field 3 mant 1: 2^2 * 1.5 = 6 -> 0x7.
    {T::kF4E2M1FN, 0x7, 6.0, "f4e2m1fn max"},
    // f6e2m3fn: bias 1; field 3 mant 111: 2^2 * 1.875 = 7.5 -> 0x1f.
    {T::kF6E2M3FN, 0x1F, 7.5, "f6e2m3fn max"},
    // f6e3m2fn: bias 3; field 7 mant 11: 2^4 * 1.75 = 28 -> 0x1f.
    {T::kF6E3M2FN, 0x1F, 28.0, "f6e3m2fn max"},
};

constexpr ExactCase kMinSubnormal[] = {
    // 2^(1 - bias - m) for mantissa 1, field 0.
    {T::kF16, 0x0001, 0x1p-24, "f16: 2^(1-15-10)"},
    {T::kBF16, 0x0001, 0x1p-133, "bf16: 2^(1-127-7)"},
    {T::kF8E5M2, 0x01, 0x1p-16, "f8e5m2: 2^(1-15-2)"},
    {T::kF8E4M3, 0x01, 0x1p-9, "f8e4m3: 2^(1-7-3)"},
    {T::kF8E4M3FN, 0x01, 0x1p-9, "f8e4m3fn: 2^(1-7-3)"},
    {T::kF8E4M3B11FNUZ, 0x01, 0x1p-13, "b11fnuz: 2^(1-11-3)"},
    {T::kF8E3M4, 0x01, 0x1p-6, "f8e3m4: 2^(1-3-4)"},
    {T::kF8E5M2FNUZ, 0x01, 0x1p-17, "f8e5m2fnuz: 2^(1-16-2)"},
    {T::kF8E4M3FNUZ, 0x01, 0x1p-10, "f8e4m3fnuz: 2^(1-8-3)"},
    // e8m0 has no subnormals: its smallest value is field 0 = 2^-127.
    {T::kF8E8M0FNU, 0x00, 0x1p-127, "f8e8m0fnu: 2^(0-127)"},
    {T::kF4E2M1FN, 0x1, 0.5, "f4e2m1fn: 2^(1-1-1)"},
    {T::kF6E2M3FN, 0x01, 0.125, "f6e2m3fn: 2^(1-1-3)"},
    {T::kF6E3M2FN, 0x01, 0.0625, "f6e3m2fn: 2^(1-3-2)"},
};

constexpr ExactCase kOnes[] = {
    // 1.0: field = bias, mantissa 0.
    {T::kF16, 0x3C00, 1.0, "f16: 0 01111 0000000000"},
    {T::kBF16, 0x3F80, 1.0, "bf16: 0 01111111 0000000"},
    {T::kF8E5M2, 0x3C, 1.0, "0 01111 00"},
    {T::kF8E4M3, 0x38, 1.0, "0 0111 000"},
    {T::kF8E4M3FN, 0x38, 1.0, "0 0111 000"},
    {T::kF8E4M3B11FNUZ, 0x58, 1.0, "0 1011 000"},
    {T::kF8E3M4, 0x30, 1.0, "0 011 0000"},
    {T::kF8E5M2FNUZ, 0x40, 1.0, "0 10000 00"},
    {T::kF8E4M3FNUZ, 0x40, 1.0, "0 1000 000"},
    {T::kF8E8M0FNU, 0x7F, 1.0, "01111111"},
    {T::kF4E2M1FN, 0x2, 1.0, "0 01 0"},
    {T::kF6E2M3FN, 0x08, 1.0, "0 01 000"},
    {T::kF6E3M2FN, 0x0C, 1.0, "0 011 00"},
    // A few more values off the powers of two.
    {T::kF16, 0xC000, -2.0, "f16: 1 10000 0"},
    {T::kF16, 0x3555, 0.333251953125, "f16: 1/3 rounded: 2^-2*(1+341/1024)"},
    {T::kF16, 0x0400, 0x1p-14, "f16 min normal"},
    {T::kBF16, 0x4049, 3.140625, "bf16: 2^1*(1+73/128)"},
    {T::kF8E4M3FN, 0xC4, -3.0, "1 1000 100: -(2^1*1.5)"},
    {T::kF8E5M2, 0x03, 0.75 * 0x1p-14, "subnormal mant 11: 3*2^-16"},
    {T::kF4E2M1FN, 0xD, -3.0, "1 10 1: -(2^1*1.5)"},
    {T::kF6E3M2FN, 0x3F, -28.0, "1 111 11"},
    {T::kF6E2M3FN, 0x07, 0.875, "subnormal mant 111: 7/8"},
    {T::kF8E8M0FNU, 0x80, 2.0, "field 128"},
    {T::kF8E8M0FNU, 0x00, 0x1p-127, "field 0"},
};

void CheckExact(const ExactCase& c) {
  SCOPED_TRACE(StrCat(PrimitiveTypeName(c.type), " ", c.why));
  EXPECT_EQ(Dec(c.type, c.bits), c.value);
  bool ok = false;
  EXPECT_EQ(Hex(Enc(c.type, c.value, &ok)), Hex(c.bits));
  EXPECT_TRUE(ok);
}

TEST(SmallFloatTest, MaxFiniteValues) {
  for (const ExactCase& c : kMaxFinite) CheckExact(c);
}

TEST(SmallFloatTest, NegatedMaxFiniteValues) {
  for (const ExactCase& c : kMaxFinite) {
    if (c.type == T::kF8E8M0FNU) continue;  // unsigned
    const uint32_t sign = 1u << (BitWidth(c.type) - 1);
    CheckExact({c.type, c.bits | sign, -c.value, c.why});
  }
}

TEST(SmallFloatTest, SmallestSubnormals) {
  for (const ExactCase& c : kMinSubnormal) CheckExact(c);
}

TEST(SmallFloatTest, OnesAndOtherExactValues) {
  for (const ExactCase& c : kOnes) CheckExact(c);
}

TEST(SmallFloatTest, F4E2M1FNDecodesEveryPattern) {
  // The eight magnitudes of e2m1 (bias 1): field 0 is subnormal (0, 0.5),
  // then 1, 1.5, 2, 3, 4, 6.
  constexpr double kMag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t b = 0; b < 16; ++b) {
    double expected = (b & 8) ? -kMag[b & 7] : kMag[b & 7];
    EXPECT_EQ(Dec(T::kF4E2M1FN, b), expected) << b;
    EXPECT_EQ(std::signbit(Dec(T::kF4E2M1FN, b)), (b & 8) != 0) << b;
  }
}

// ---------------------------------------------------------------------------
// Rounding: to nearest, ties to even.
// ---------------------------------------------------------------------------

struct RoundCase {
  PrimitiveType type;
  double input;
  uint32_t expected;
  const char* why;
};

constexpr RoundCase kRounding[] = {
    // f16 around 1: ulp is 2^-10.
    {T::kF16, 1.0 + 0x1p-11, 0x3C00, "tie 1|1+ulp -> even 0x3c00"},
    {T::kF16, 1.0 + 3 * 0x1p-11, 0x3C02, "tie 0x3c01|0x3c02 -> even 0x3c02"},
    {T::kF16, 1.0 + 0x1p-11 + 0x1p-20, 0x3C01, "just above the tie -> up"},
    {T::kF16, 1.0 + 3 * 0x1p-11 - 0x1p-20, 0x3C01, "just below the tie"},
    // f16 subnormals: ulp is 2^-24.
    {T::kF16, 0x1p-25, 0x0000, "half the min subnormal -> 0 (even)"},
    {T::kF16, 3 * 0x1p-25, 0x0002, "tie 0x0001|0x0002 -> 0x0002"},
    {T::kF16, 0x1p-25 + 0x1p-40, 0x0001, "just above half -> min subnormal"},
    {T::kF16, -3 * 0x1p-25, 0x8002, "negative tie"},
    // Rounding up into the next binade and into the normal range.
    {T::kF16, 2.0 - 0x1p-12, 0x4000, "1.11111111111|1 rounds to 2"},
    {T::kF16, 0x1p-14 - 0x1p-26, 0x0400, "rounds up to min normal"},
    // f16 near max: 65504 + 16 = 65520 is the tie with 65536 (inf).
    {T::kF16, 65519.0, 0x7BFF, "below the tie -> max"},
    // bf16: ulp at 1 is 2^-7.
    {T::kBF16, 1.0 + 0x1p-8, 0x3F80, "tie -> even"},
    {T::kBF16, 1.0 + 3 * 0x1p-8, 0x3F82, "tie -> even (up)"},
    {T::kBF16, 0.1, 0x3DCD, "0.1 = 0x3dcccccd as f32 -> 0x3dcd"},
    // f8e4m3fn: 448 is max (mant 110 even); 464 is the tie with 480,
    // which does not exist (it would be the NaN pattern).
    {T::kF8E4M3FN, 464.0, 0x7E, "tie 448|480 -> even 448"},
    {T::kF8E4M3FN, 0x1p-10, 0x00, "half the min subnormal -> 0"},
    {T::kF8E4M3FN, 3 * 0x1p-10, 0x02, "tie 1|2 -> 2"},
    // f8e5m2: around 1 ulp is 0.25.
    {T::kF8E5M2, 1.125, 0x3C, "tie 1|1.25 -> 1"},
    {T::kF8E5M2, 1.375, 0x3E, "tie 1.25|1.5 -> 1.5"},
    // f4e2m1fn: magnitudes 0 .5 1 1.5 2 3 4 6.
    {T::kF4E2M1FN, 0.25, 0x0, "tie 0|0.5 -> 0"},
    {T::kF4E2M1FN, 0.75, 0x2, "tie 0.5|1 -> 1 (0x2 even)"},
    {T::kF4E2M1FN, 1.25, 0x2, "tie 1|1.5 -> 1"},
    {T::kF4E2M1FN, 1.75, 0x4, "tie 1.5|2 -> 2"},
    {T::kF4E2M1FN, 2.5, 0x4, "tie 2|3 -> 2"},
    {T::kF4E2M1FN, 3.5, 0x6, "tie 3|4 -> 4"},
    {T::kF4E2M1FN, 5.0, 0x6, "tie 4|6 -> 4"},
    {T::kF4E2M1FN, 6.5, 0x7, "rounds down to max 6"},
    {T::kF4E2M1FN, -5.0, 0xE, "negative tie 4|6 -> -4"},
    // f6e2m3fn: ulp 0.125 in [1,2).
    {T::kF6E2M3FN, 1.0625, 0x08, "tie 1|1.125 -> 1"},
    {T::kF6E2M3FN, 1.1875, 0x0A, "tie 1.125|1.25 -> 1.25"},
    // f6e3m2fn: ulp 4 in [16,32): 26 is the tie 24|28 -> 24 (mant 10).
    {T::kF6E3M2FN, 26.0, 0x1E, "tie 24|28 -> 24"},
    // f8e3m4: ulp 1/16 in [1,2).
    {T::kF8E3M4, 1.0 + 0x1p-5, 0x30, "tie -> even"},
    // fnuz: a negative value that rounds to zero must give +0 (0x80 is
    // NaN in these formats).
    {T::kF8E4M3FNUZ, -0x1p-12, 0x00, "-tiny -> +0, not NaN"},
    {T::kF8E5M2FNUZ, -0x1p-20, 0x00, "-tiny -> +0, not NaN"},
    {T::kF8E4M3B11FNUZ, -0x1p-16, 0x00, "-tiny -> +0, not NaN"},
    // e8m0 (powers of two only). Below 2^-127 there is nothing smaller.
    {T::kF8E8M0FNU, 2.9, 0x80, "2.9 is nearer 2 than 4"},
    {T::kF8E8M0FNU, 0x1p-140, 0x00, "clamps to 2^-127"},
};

TEST(SmallFloatTest, RoundToNearestEven) {
  for (const RoundCase& c : kRounding) {
    SCOPED_TRACE(StrCat(PrimitiveTypeName(c.type), ": ", c.why));
    bool ok = false;
    EXPECT_EQ(Hex(Enc(c.type, c.input, &ok)), Hex(c.expected));
    EXPECT_TRUE(ok);
  }
}

// BUG (see report): the header promises ties-to-even, but for f8e8m0fnu a
// value exactly between two powers of two always rounds up. With no
// mantissa bits the "even" neighbour is the one whose exponent field is
// even (as ml_dtypes rounds):
//   3 = midway 2 (field 128, even) | 4 (field 129) -> 2 = 0x80
//   0.75 = midway 0.5 (field 126, even) | 1 (field 127) -> 0.5 = 0x7e
//   1.5 = midway 1 (field 127, odd) | 2 (field 128) -> 2 = 0x80
//   6 = midway 4 (field 129, odd) | 8 (field 130) -> 8 = 0x82
TEST(SmallFloatTest, F8E8M0FNUTiesToEven) {
  EXPECT_EQ(Hex(Enc(T::kF8E8M0FNU, 3.0)), "0x80");
  EXPECT_EQ(Hex(Enc(T::kF8E8M0FNU, 0.75)), "0x7e");
  EXPECT_EQ(Hex(Enc(T::kF8E8M0FNU, 1.5)), "0x80");
  EXPECT_EQ(Hex(Enc(T::kF8E8M0FNU, 6.0)), "0x82");
}

// ---------------------------------------------------------------------------
// Overflow.
// ---------------------------------------------------------------------------

struct OverflowCase {
  PrimitiveType type;
  double input;
  uint32_t bits;  // the inf / NaN / saturated encoding left in *bits
  const char* why;
};

constexpr OverflowCase kOverflow[] = {
    {T::kF16, 70000.0, 0x7C00, "f16 -> +inf"},
    {T::kF16, -70000.0, 0xFC00, "f16 -> -inf"},
    // 65520 is exactly the tie between 65504 (odd mantissa 0x3ff) and
    // 65536; ties-to-even goes up, out of range.
    {T::kF16, 65520.0, 0x7C00, "f16 tie at the top -> inf"},
    {T::kBF16, 1e39, 0x7F80, "bf16 -> +inf"},
    {T::kF8E5M2, 61440.0, 0x7C, "f8e5m2 tie 57344|65536 -> inf"},
    {T::kF8E5M2, -1e6, 0xFC, "f8e5m2 -> -inf"},
    {T::kF8E4M3, 248.0, 0x78, "f8e4m3: tie 240|256 -> inf (0 1111 000)"},
    {T::kF8E3M4, 16.0, 0x70, "f8e3m4 -> inf (0 111 0000)"},
    {T::kF8E4M3FN, 465.0, 0x7F, "f8e4m3fn: above the tie -> NaN"},
    {T::kF8E4M3FN, 1e9, 0x7F, "f8e4m3fn -> NaN"},
    {T::kF8E8M0FNU, 0x1p128, 0xFF, "e8m0 -> NaN"},
};

TEST(SmallFloatTest, OverflowReturnsFalse) {
  for (const OverflowCase& c : kOverflow) {
    SCOPED_TRACE(StrCat(PrimitiveTypeName(c.type), ": ", c.why));
    bool ok = true;
    EXPECT_EQ(Hex(Enc(c.type, c.input, &ok)), Hex(c.bits));
    EXPECT_FALSE(ok);
  }
}

// BUG (see report): formats whose largest exponent field holds finite
// values and whose all-ones mantissa is not NaN (the fnuz family, f4e2m1fn,
// f6*) never report overflow: the exponent field is clamped to its maximum
// and the value silently saturates to max with a `true` return (and fnuz
// gives the max pattern 0x7f/0xff instead of its NaN 0x80).
constexpr OverflowCase kOverflowNoInf[] = {
    // 248 is the tie 240 (mant 111, odd) | 256: goes up, out of range.
    {T::kF8E4M3FNUZ, 248.0, 0x80, "fnuz: tie 240|256 -> NaN 0x80"},
    {T::kF8E4M3FNUZ, 1000.0, 0x80, "fnuz -> NaN 0x80"},
    {T::kF8E5M2FNUZ, 1e6, 0x80, "fnuz -> NaN 0x80"},
    // 31 is the tie 30|32 -> 32, out of range; the sign does not matter.
    {T::kF8E4M3B11FNUZ, -31.0, 0x80, "fnuz: sign does not matter"},
    // No NaN at all: the bits saturate, but the result is still overflow.
    {T::kF4E2M1FN, 7.0, 0x7, "f4: tie 6|8 -> 8, beyond max 6"},
    {T::kF4E2M1FN, -100.0, 0xF, "f4: saturates to -6"},
    {T::kF6E2M3FN, 8.0, 0x1F, "f6e2m3fn saturates to 7.5"},
    {T::kF6E3M2FN, -32.0, 0x3F, "f6e3m2fn saturates to -28"},
};

TEST(SmallFloatTest, OverflowReturnsFalseWithoutInfinity) {
  for (const OverflowCase& c : kOverflowNoInf) {
    SCOPED_TRACE(StrCat(PrimitiveTypeName(c.type), ": ", c.why));
    bool ok = true;
    EXPECT_EQ(Hex(Enc(c.type, c.input, &ok)), Hex(c.bits));
    EXPECT_FALSE(ok);
  }
}

TEST(SmallFloatTest, NegativeValuesDoNotFitE8M0) {
  bool ok = true;
  Enc(T::kF8E8M0FNU, -1.0, &ok);
  EXPECT_FALSE(ok);
}

// ---------------------------------------------------------------------------
// Infinities and NaNs.
// ---------------------------------------------------------------------------

TEST(SmallFloatTest, InfinityEncodings) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Row {
    PrimitiveType type;
    uint32_t pos, neg;
  };
  // IEEE-like formats: exponent all ones, mantissa 0.
  for (Row r : {Row{T::kF16, 0x7C00, 0xFC00}, Row{T::kBF16, 0x7F80, 0xFF80},
                Row{T::kF8E5M2, 0x7C, 0xFC}, Row{T::kF8E4M3, 0x78, 0xF8},
                Row{T::kF8E3M4, 0x70, 0xF0}}) {
    SCOPED_TRACE(PrimitiveTypeName(r.type));
    bool ok = false;
    EXPECT_EQ(Hex(Enc(r.type, inf, &ok)), Hex(r.pos));
    EXPECT_TRUE(ok);
    EXPECT_EQ(Hex(Enc(r.type, -inf, &ok)), Hex(r.neg));
    EXPECT_TRUE(ok);
    EXPECT_EQ(Dec(r.type, r.pos), inf);
    EXPECT_EQ(Dec(r.type, r.neg), -inf);
  }
  // Formats without infinity: inf does not fit.
  for (PrimitiveType t :
       {T::kF8E4M3FN, T::kF8E4M3FNUZ, T::kF8E5M2FNUZ, T::kF8E4M3B11FNUZ,
        T::kF8E8M0FNU, T::kF4E2M1FN, T::kF6E2M3FN, T::kF6E3M2FN}) {
    SCOPED_TRACE(PrimitiveTypeName(t));
    bool ok = true;
    Enc(t, inf, &ok);
    EXPECT_FALSE(ok);
    for (uint32_t b = 0; b < (1u << BitWidth(t)); ++b) {
      EXPECT_FALSE(std::isinf(Dec(t, b))) << b;
    }
  }
  // Without NaN either, inf saturates.
  bool ok = true;
  EXPECT_EQ(Hex(Enc(T::kF4E2M1FN, inf, &ok)), "0x7");
  EXPECT_EQ(Hex(Enc(T::kF4E2M1FN, -inf, &ok)), "0xf");
}

TEST(SmallFloatTest, FiniteAllOnesExponentInFnFormats) {
  // Without infinities the all-ones exponent holds finite values:
  // f8e4m3fn 0 1111 000 = 2^(15-7) = 256; f8e4m3fnuz 0x78 = 2^(15-8) = 128.
  EXPECT_EQ(Dec(T::kF8E4M3FN, 0x78), 256.0);
  EXPECT_EQ(Dec(T::kF8E4M3FNUZ, 0x78), 128.0);
  EXPECT_EQ(Dec(T::kF8E5M2FNUZ, 0x7C), 32768.0);
  // f4e2m1fn 0 11 0 = 2^2 = 4; f6e2m3fn 0 11 000 = 4; f6e3m2fn 0 111 00 = 16.
  EXPECT_EQ(Dec(T::kF4E2M1FN, 0x6), 4.0);
  EXPECT_EQ(Dec(T::kF6E2M3FN, 0x18), 4.0);
  EXPECT_EQ(Dec(T::kF6E3M2FN, 0x1C), 16.0);
}

TEST(SmallFloatTest, NanEncodings) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Row {
    PrimitiveType type;
    uint32_t pos, neg;
  };
  // IEEE-like: all-ones exponent, top mantissa bit (quiet), sign kept.
  // fn: the single all-ones pattern per sign. fnuz: 0x80 for both signs.
  // e8m0: 0xff.
  for (Row r :
       {Row{T::kF16, 0x7E00, 0xFE00}, Row{T::kBF16, 0x7FC0, 0xFFC0},
        Row{T::kF8E5M2, 0x7E, 0xFE}, Row{T::kF8E4M3, 0x7C, 0xFC},
        Row{T::kF8E3M4, 0x78, 0xF8}, Row{T::kF8E4M3FN, 0x7F, 0xFF},
        Row{T::kF8E4M3FNUZ, 0x80, 0x80}, Row{T::kF8E5M2FNUZ, 0x80, 0x80},
        Row{T::kF8E4M3B11FNUZ, 0x80, 0x80}, Row{T::kF8E8M0FNU, 0xFF, 0xFF}}) {
    SCOPED_TRACE(PrimitiveTypeName(r.type));
    bool ok = false;
    EXPECT_EQ(Hex(Enc(r.type, nan, &ok)), Hex(r.pos));
    EXPECT_TRUE(ok);
    EXPECT_EQ(Hex(Enc(r.type, -nan, &ok)), Hex(r.neg));
    EXPECT_TRUE(ok);
    EXPECT_TRUE(std::isnan(Dec(r.type, r.pos)));
    EXPECT_TRUE(std::isnan(Dec(r.type, r.neg)));
  }
  // Formats without NaN reject it.
  for (PrimitiveType t : {T::kF4E2M1FN, T::kF6E2M3FN, T::kF6E3M2FN}) {
    bool ok = true;
    Enc(t, nan, &ok);
    EXPECT_FALSE(ok) << PrimitiveTypeName(t);
    for (uint32_t b = 0; b < (1u << BitWidth(t)); ++b) {
      EXPECT_FALSE(std::isnan(Dec(t, b))) << PrimitiveTypeName(t) << " " << b;
    }
  }
}

// Number of bit patterns that decode to NaN, counted by hand.
TEST(SmallFloatTest, NanPatternCounts) {
  auto count = [](PrimitiveType t) {
    int n = 0;
    for (uint32_t b = 0; b < (1u << BitWidth(t)); ++b) {
      n += std::isnan(Dec(t, b)) ? 1 : 0;
    }
    return n;
  };
  // IEEE: 2 signs * (2^m - 1) non-zero mantissas.
  EXPECT_EQ(count(T::kF16), 2 * 1023);
  EXPECT_EQ(count(T::kBF16), 2 * 127);
  EXPECT_EQ(count(T::kF8E5M2), 2 * 3);
  EXPECT_EQ(count(T::kF8E4M3), 2 * 7);
  EXPECT_EQ(count(T::kF8E3M4), 2 * 15);
  // fn: one per sign; fnuz: only 0x80; e8m0: only 0xff.
  EXPECT_EQ(count(T::kF8E4M3FN), 2);
  EXPECT_EQ(count(T::kF8E4M3FNUZ), 1);
  EXPECT_EQ(count(T::kF8E5M2FNUZ), 1);
  EXPECT_EQ(count(T::kF8E4M3B11FNUZ), 1);
  EXPECT_EQ(count(T::kF8E8M0FNU), 1);
  EXPECT_EQ(count(T::kF4E2M1FN), 0);
}

// ---------------------------------------------------------------------------
// Signed zero.
// ---------------------------------------------------------------------------

TEST(SmallFloatTest, NegativeZero) {
  // Formats with a sign keep -0 as the sign bit alone.
  struct Row {
    PrimitiveType type;
    uint32_t neg_zero;
  };
  for (Row r :
       {Row{T::kF16, 0x8000}, Row{T::kBF16, 0x8000}, Row{T::kF8E5M2, 0x80},
        Row{T::kF8E4M3, 0x80}, Row{T::kF8E4M3FN, 0x80}, Row{T::kF8E3M4, 0x80},
        Row{T::kF4E2M1FN, 0x8}, Row{T::kF6E2M3FN, 0x20},
        Row{T::kF6E3M2FN, 0x20}}) {
    SCOPED_TRACE(PrimitiveTypeName(r.type));
    bool ok = false;
    EXPECT_EQ(Hex(Enc(r.type, -0.0, &ok)), Hex(r.neg_zero));
    EXPECT_TRUE(ok);
    double d = Dec(r.type, r.neg_zero);
    EXPECT_EQ(d, 0.0);
    EXPECT_TRUE(std::signbit(d));
    // A tiny negative value rounds to -0 too.
    EXPECT_EQ(Hex(Enc(r.type, -0x1p-200, &ok)), Hex(r.neg_zero));
    EXPECT_TRUE(ok);
  }
  // fnuz has no -0: it encodes as +0 and the -0 pattern is NaN.
  for (PrimitiveType t : {T::kF8E4M3FNUZ, T::kF8E5M2FNUZ, T::kF8E4M3B11FNUZ}) {
    SCOPED_TRACE(PrimitiveTypeName(t));
    bool ok = false;
    EXPECT_EQ(Hex(Enc(t, -0.0, &ok)), "0x0");
    EXPECT_TRUE(ok);
    EXPECT_FALSE(std::signbit(Dec(t, 0x00)));
    EXPECT_TRUE(std::isnan(Dec(t, 0x80)));
  }
}

TEST(SmallFloatTest, PositiveZeroE8M0) {
  // e8m0 has no zero; +0 goes to the smallest value 2^-127 (0x00), as the
  // implementation documents.
  bool ok = false;
  EXPECT_EQ(Hex(Enc(T::kF8E8M0FNU, 0.0, &ok)), "0x0");
  EXPECT_TRUE(ok);
}

// BUG (see report): EncodeSmallFloat's own comment says "-0 maps to the
// smallest value" for the unsigned e8m0 format, like +0, but -0 is encoded
// as the NaN pattern 0xff while still returning true.
TEST(SmallFloatTest, NegativeZeroE8M0MapsToSmallestValue) {
  bool ok = false;
  EXPECT_EQ(Hex(Enc(T::kF8E8M0FNU, -0.0, &ok)), "0x0");
  EXPECT_TRUE(ok);
}

// ---------------------------------------------------------------------------
// Exhaustive decode -> encode.
// ---------------------------------------------------------------------------

bool IsNanPattern(PrimitiveType t, uint32_t bits) {
  return std::isnan(Dec(t, bits));
}

TEST(SmallFloatTest, ExhaustiveDecodeEncodeRoundTrip) {
  for (PrimitiveType t : kSmallFloats) {
    SCOPED_TRACE(PrimitiveTypeName(t));
    const uint32_t n = 1u << BitWidth(t);
    int failures = 0;
    for (uint32_t b = 0; b < n && failures < 10; ++b) {
      const double v = Dec(t, b);
      bool ok = false;
      const uint32_t back = Enc(t, v, &ok);
      if (std::isnan(v)) {
        // Any NaN pattern is fine, as long as it is one.
        if (!ok || back >= n || !IsNanPattern(t, back)) {
          ADD_FAILURE() << "NaN pattern " << Hex(b) << " re-encodes to "
                        << Hex(back) << " ok=" << ok;
          ++failures;
        }
        continue;
      }
      if (!ok || back != b) {
        ADD_FAILURE() << Hex(b) << " = " << v << " re-encodes to " << Hex(back)
                      << " ok=" << ok;
        ++failures;
      }
    }
  }
}

TEST(SmallFloatTest, ExhaustiveDecodeIsMonotonic) {
  // Positive patterns in increasing order decode to increasing values
  // (skipping NaNs and the pattern after +max).
  for (PrimitiveType t : kSmallFloats) {
    SCOPED_TRACE(PrimitiveTypeName(t));
    const FloatFormat f = Fmt(t);
    const uint32_t positive = 1u << (f.exponent_bits + f.mantissa_bits);
    double prev = -1;
    for (uint32_t b = 0; b < positive; ++b) {
      double v = Dec(t, b);
      if (std::isnan(v)) continue;
      EXPECT_GT(v, prev) << Hex(b);
      prev = v;
    }
  }
}

TEST(SmallFloatTest, EncodeMatchesF32ForBF16) {
  // bf16 is the top half of an f32; an exactly representable value's f32
  // bits >> 16 give its bf16 bits.
  for (float v : {1.0f, -2.5f, 0.15625f, 3.0e38f, 1.0e-38f, 65536.0f}) {
    uint32_t f32;
    static_assert(sizeof(f32) == sizeof(v));
    std::memcpy(&f32, &v, 4);
    if ((f32 & 0xFFFF) != 0) continue;  // not exact in bf16
    EXPECT_EQ(Hex(Enc(T::kBF16, v)), Hex(f32 >> 16)) << v;
  }
}

}  // namespace
}  // namespace hlogym
