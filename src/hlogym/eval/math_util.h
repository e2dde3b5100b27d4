// Helpers of the math kernels (contraction, reduction, linalg): errors, and
// conversions between float and the 16-bit float types for inner loops (round
// to nearest even; NaN becomes the type's quiet NaN with its sign, as the
// literal encoder does).
#ifndef HLOGYM_EVAL_MATH_UTIL_H_
#define HLOGYM_EVAL_MATH_UTIL_H_

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "hlogym/ir/instruction.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace math_internal {

// "instruction 'name': ..." errors of the contraction, reduction and linalg
// kernels.
template <typename... Args>
absl::Status Error(const Instruction& inst, const Args&... args) {
  return absl::InvalidArgumentError(
      StrCat("instruction '", inst.name(), "': ", args...));
}

template <typename... Args>
absl::Status Unimplemented(const Instruction& inst, const Args&... args) {
  return absl::UnimplementedError(
      StrCat("instruction '", inst.name(), "': ", args...));
}

inline std::string ShapeText(const Shape& s) { return s.ToString(false); }

}  // namespace math_internal

inline float Bf16ToFloat(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

inline uint16_t FloatToBf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7fc0u);
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float F16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t FloatToF16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return sign | 0x7e00u;
  if (u >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to inf
  if (u < 0x38800000u) {                        // below 2^-14: subnormal
    float scaled = std::bit_cast<float>(u) * 16777216.0f;  // exact
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  u += 0xfffu + ((u >> 13) & 1u);
  u -= 112u << 23;
  return sign | static_cast<uint16_t>(u >> 13);
}

}  // namespace hlogym

#endif  // HLOGYM_EVAL_MATH_UTIL_H_
