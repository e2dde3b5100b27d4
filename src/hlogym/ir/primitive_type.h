// Element types of HLO shapes, as XLA's text format names them.
#ifndef HLOGYM_IR_PRIMITIVE_TYPE_H_
#define HLOGYM_IR_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace hlogym {

enum class PrimitiveType : uint8_t {
  kInvalid = 0,
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E5M2,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E3M4,
  kF8E5M2FNUZ,
  kF8E4M3FNUZ,
  kF8E8M0FNU,
  kF4E2M1FN,
  kF6E3M2FN,
  kF6E2M3FN,
  kC64,
  kC128,
  kToken,
  kOpaque,
  kTuple,
  kBuffer,
  kNumTypes,
};

// Text spelling ("f32", "bf16", "pred", ...). kTuple prints "tuple".
std::string_view PrimitiveTypeName(PrimitiveType t);
// Parses a text spelling; also accepts "opaque_type". Returns nullopt for
// words that are not type names.
std::optional<PrimitiveType> ParsePrimitiveType(std::string_view s);

bool IsArrayType(PrimitiveType t);     // has elements: not token/opaque/tuple
bool IsIntegralType(PrimitiveType t);  // signed or unsigned integer (not pred)
bool IsSignedIntegralType(PrimitiveType t);
bool IsUnsignedIntegralType(PrimitiveType t);
bool IsFloatingPointType(PrimitiveType t);  // real floats, f4..f64
bool IsComplexType(PrimitiveType t);
// Bits of one element (pred = 8 as XLA stores it; s4 = 4; c64 = 64).
int BitWidth(PrimitiveType t);
// Bytes one element takes in an unpacked buffer (s4 -> 1, pred -> 1).
int ByteWidth(PrimitiveType t);
// For complex types, the component type (c64 -> f32); otherwise t.
PrimitiveType ComplexComponentType(PrimitiveType t);

// Describes a binary floating-point format so one routine can encode and
// decode every small float type (f16, bf16, the f8/f6/f4 family).
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_sign = true;
  bool has_inf = true;             // IEEE-like: all-ones exponent = inf/nan
  bool nan_all_ones = false;       // "fn": only all-ones exp+mantissa is NaN
  bool nan_negative_zero = false;  // "fnuz": the bit pattern -0 is NaN
  bool has_nan = true;
  int total_bits() const {
    return (has_sign ? 1 : 0) + exponent_bits + mantissa_bits;
  }
};
// Formats for floating types of at most 16 bits. nullopt for others.
std::optional<FloatFormat> SmallFloatFormat(PrimitiveType t);

// Decodes `bits` of format `f` to a double (exact).
double DecodeSmallFloat(const FloatFormat& f, uint32_t bits);
// Rounds `v` to the nearest representable value (ties to even). Returns
// false if `v` is finite but beyond the largest finite value (overflow), in
// which case `bits` holds the saturated/inf encoding.
bool EncodeSmallFloat(const FloatFormat& f, double v, uint32_t* bits);

}  // namespace hlogym

#endif  // HLOGYM_IR_PRIMITIVE_TYPE_H_
