#include "hlogym/ir/primitive_type.h"

#include <array>
#include <cmath>

namespace hlogym {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
};

constexpr std::array<TypeInfo, static_cast<int>(PrimitiveType::kNumTypes)>
    kTypes = {{
        {PrimitiveType::kInvalid, "invalid", 0},
        {PrimitiveType::kPred, "pred", 8},
        {PrimitiveType::kS1, "s1", 1},
        {PrimitiveType::kS2, "s2", 2},
        {PrimitiveType::kS4, "s4", 4},
        {PrimitiveType::kS8, "s8", 8},
        {PrimitiveType::kS16, "s16", 16},
        {PrimitiveType::kS32, "s32", 32},
        {PrimitiveType::kS64, "s64", 64},
        {PrimitiveType::kU1, "u1", 1},
        {PrimitiveType::kU2, "u2", 2},
        {PrimitiveType::kU4, "u4", 4},
        {PrimitiveType::kU8, "u8", 8},
        {PrimitiveType::kU16, "u16", 16},
        {PrimitiveType::kU32, "u32", 32},
        {PrimitiveType::kU64, "u64", 64},
        {PrimitiveType::kF16, "f16", 16},
        {PrimitiveType::kBF16, "bf16", 16},
        {PrimitiveType::kF32, "f32", 32},
        {PrimitiveType::kF64, "f64", 64},
        {PrimitiveType::kF8E5M2, "f8e5m2", 8},
        {PrimitiveType::kF8E4M3, "f8e4m3", 8},
        {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8},
        {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
        {PrimitiveType::kF8E3M4, "f8e3m4", 8},
        {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
        {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
        {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8},
        {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 4},
        {PrimitiveType::kF6E3M2FN, "f6e3m2fn", 6},
        {PrimitiveType::kF6E2M3FN, "f6e2m3fn", 6},
        {PrimitiveType::kC64, "c64", 64},
        {PrimitiveType::kC128, "c128", 128},
        {PrimitiveType::kToken, "token", 0},
        {PrimitiveType::kOpaque, "opaque", 0},
        {PrimitiveType::kTuple, "tuple", 0},
        {PrimitiveType::kBuffer, "buffer", 0},
    }};

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType t) {
  auto i = static_cast<size_t>(t);
  return i < kTypes.size() ? kTypes[i].name : "invalid";
}

std::optional<PrimitiveType> ParsePrimitiveType(std::string_view s) {
  // Quick rejection: the lexer asks this for every identifier.
  if (s.size() < 2 || s.size() > 13) return std::nullopt;
  switch (s[0]) {
    case 'p':
    case 's':
    case 'u':
    case 'f':
    case 'b':
    case 'c':
    case 't':
    case 'o':
      break;
    default:
      return std::nullopt;
  }
  if (s == "opaque_type") return PrimitiveType::kOpaque;
  for (size_t i = 1; i < kTypes.size(); ++i) {
    if (kTypes[i].name == s) return kTypes[i].type;
  }
  return std::nullopt;
}

bool IsArrayType(PrimitiveType t) {
  return t != PrimitiveType::kInvalid && t != PrimitiveType::kToken &&
         t != PrimitiveType::kOpaque && t != PrimitiveType::kTuple &&
         t != PrimitiveType::kBuffer && t != PrimitiveType::kNumTypes;
}

bool IsSignedIntegralType(PrimitiveType t) {
  return t >= PrimitiveType::kS1 && t <= PrimitiveType::kS64;
}
bool IsUnsignedIntegralType(PrimitiveType t) {
  return t >= PrimitiveType::kU1 && t <= PrimitiveType::kU64;
}
bool IsIntegralType(PrimitiveType t) {
  return IsSignedIntegralType(t) || IsUnsignedIntegralType(t);
}
bool IsFloatingPointType(PrimitiveType t) {
  return t >= PrimitiveType::kF16 && t <= PrimitiveType::kF6E2M3FN;
}
bool IsComplexType(PrimitiveType t) {
  return t == PrimitiveType::kC64 || t == PrimitiveType::kC128;
}

int BitWidth(PrimitiveType t) {
  auto i = static_cast<size_t>(t);
  return i < kTypes.size() ? kTypes[i].bits : 0;
}

int ByteWidth(PrimitiveType t) {
  int b = BitWidth(t);
  return b == 0 ? 0 : (b + 7) / 8;
}

PrimitiveType ComplexComponentType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

std::optional<FloatFormat> SmallFloatFormat(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16:
      return FloatFormat{5, 10, 15};
    case PrimitiveType::kBF16:
      return FloatFormat{8, 7, 127};
    case PrimitiveType::kF8E5M2:
      return FloatFormat{5, 2, 15};
    case PrimitiveType::kF8E4M3:
      return FloatFormat{4, 3, 7};
    case PrimitiveType::kF8E3M4:
      return FloatFormat{3, 4, 3};
    case PrimitiveType::kF8E4M3FN:
      return FloatFormat{4, 3, 7, true, false, true, false, true};
    case PrimitiveType::kF8E4M3B11FNUZ:
      return FloatFormat{4, 3, 11, true, false, false, true, true};
    case PrimitiveType::kF8E5M2FNUZ:
      return FloatFormat{5, 2, 16, true, false, false, true, true};
    case PrimitiveType::kF8E4M3FNUZ:
      return FloatFormat{4, 3, 8, true, false, false, true, true};
    case PrimitiveType::kF8E8M0FNU:
      return FloatFormat{8, 0, 127, false, false, true, false, true};
    case PrimitiveType::kF4E2M1FN:
      return FloatFormat{2, 1, 1, true, false, false, false, false};
    case PrimitiveType::kF6E3M2FN:
      return FloatFormat{3, 2, 3, true, false, false, false, false};
    case PrimitiveType::kF6E2M3FN:
      return FloatFormat{2, 3, 1, true, false, false, false, false};
    default:
      return std::nullopt;
  }
}

namespace {

uint32_t MaxExponentField(const FloatFormat& f) {
  uint32_t all_ones = (1u << f.exponent_bits) - 1;
  return f.has_inf ? all_ones - 1 : all_ones;
}

// Largest finite magnitude encoding (exponent and mantissa bits only).
uint32_t MaxFiniteMagnitude(const FloatFormat& f) {
  uint32_t mant_all = (1u << f.mantissa_bits) - 1;
  uint32_t field = MaxExponentField(f);
  uint32_t mant = mant_all;
  if (f.nan_all_ones) {
    if (f.mantissa_bits == 0) {
      field -= 1;  // e8m0: 0xFF is NaN
    } else {
      mant -= 1;
    }
  }
  return (field << f.mantissa_bits) | mant;
}

uint32_t NanBits(const FloatFormat& f) {
  int sign_shift = f.exponent_bits + f.mantissa_bits;
  if (f.nan_negative_zero) return 1u << sign_shift;
  uint32_t exp_all = (1u << f.exponent_bits) - 1;
  if (f.nan_all_ones) {
    return (exp_all << f.mantissa_bits) | ((1u << f.mantissa_bits) - 1);
  }
  return (exp_all << f.mantissa_bits) |
         (f.mantissa_bits > 0 ? 1u << (f.mantissa_bits - 1) : 0);
}

}  // namespace

double DecodeSmallFloat(const FloatFormat& f, uint32_t bits) {
  const int mb = f.mantissa_bits;
  const int eb = f.exponent_bits;
  const uint32_t mant = bits & ((1u << mb) - 1);
  const uint32_t field = (bits >> mb) & ((1u << eb) - 1);
  const bool neg = f.has_sign && ((bits >> (mb + eb)) & 1u);
  const uint32_t exp_all = (1u << eb) - 1;
  if (f.nan_negative_zero && neg && field == 0 && mant == 0) return NAN;
  if (f.has_inf && field == exp_all) {
    if (mant == 0) return neg ? -INFINITY : INFINITY;
    return neg ? -NAN : NAN;
  }
  if (f.nan_all_ones && field == exp_all && mant == ((1u << mb) - 1)) {
    return neg ? -NAN : NAN;
  }
  double v;
  if (mb == 0) {
    v = std::ldexp(1.0, static_cast<int>(field) - f.bias);
  } else if (field == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - f.bias - mb);
  } else {
    v = std::ldexp(static_cast<double>(mant | (1u << mb)),
                   static_cast<int>(field) - f.bias - mb);
  }
  return neg ? -v : v;
}

bool EncodeSmallFloat(const FloatFormat& f, double v, uint32_t* bits) {
  const int mb = f.mantissa_bits;
  const int sign_shift = f.exponent_bits + mb;
  const bool neg = std::signbit(v);
  const uint32_t sign = (neg && f.has_sign) ? (1u << sign_shift) : 0;
  if (std::isnan(v)) {
    *bits = f.has_nan ? (NanBits(f) | (f.nan_negative_zero ? 0 : sign)) : 0;
    return f.has_nan;
  }
  if (neg && !f.has_sign) {
    if (v == 0.0) {  // -0 maps to the smallest value, like +0
      *bits = 0;
      return true;
    }
    *bits = NanBits(f);  // negatives do not fit an unsigned format
    return false;
  }
  double a = std::fabs(v);
  if (std::isinf(v)) {
    if (f.has_inf) {
      *bits = sign | (((1u << f.exponent_bits) - 1) << mb);
      return true;
    }
    *bits = f.has_nan ? NanBits(f) : (sign | MaxFiniteMagnitude(f));
    return false;
  }
  if (a == 0.0) {
    if (mb == 0) {  // e8m0 has no zero; XLA rounds to the smallest value
      *bits = 0;
      return true;
    }
    *bits = f.nan_negative_zero ? 0 : sign;
    return true;
  }
  int ex;
  std::frexp(a, &ex);
  int e = ex - 1;  // a = m * 2^e with m in [1, 2)
  uint32_t mag;
  if (mb == 0) {
    // Between 2^e and 2^(e+1); a tie (1.5 * 2^e) goes to the even field.
    const double q = a / std::ldexp(1.0, e);
    int64_t field = e + f.bias;
    if (q > 1.5 || (q == 1.5 && (field & 1) != 0)) ++field;
    if (field < 0) field = 0;
    if (field > 0xFF) field = 0xFF;
    mag = static_cast<uint32_t>(field);
  } else if (e < 1 - f.bias) {
    double q = std::nearbyint(a / std::ldexp(1.0, 1 - f.bias - mb));
    mag = static_cast<uint32_t>(q);
  } else {
    double q = std::nearbyint(a / std::ldexp(1.0, e - mb));
    auto n = static_cast<uint64_t>(q);
    if (n == (uint64_t{1} << (mb + 1))) {
      ++e;
      n >>= 1;
    }
    int64_t field = e + f.bias;
    if (field > static_cast<int64_t>((1u << f.exponent_bits) - 1)) {
      // Beyond every encodable exponent: certainly above the largest finite.
      mag = MaxFiniteMagnitude(f) + 1;
    } else {
      mag = static_cast<uint32_t>((field << mb) | (n - (uint64_t{1} << mb)));
    }
  }
  if (mag > MaxFiniteMagnitude(f)) {
    if (f.has_inf) {
      *bits = sign | (((1u << f.exponent_bits) - 1) << mb);
    } else {
      *bits = f.has_nan ? NanBits(f) : (sign | MaxFiniteMagnitude(f));
    }
    return false;
  }
  if (mag == 0 && f.nan_negative_zero) {
    *bits = 0;  // -0 does not exist in fnuz formats
    return true;
  }
  *bits = sign | mag;
  return true;
}

}  // namespace hlogym
