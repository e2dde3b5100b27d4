// Elementwise kernels: unary, binary and ternary ops, conversions,
// comparisons and select.
//
// Each element type computes in one C++ type: integers, f32 and f64 in their
// own type, c64/c128 as std::complex, and the narrow floats (f16, bf16 and
// the f8/f6/f4 family) in float, rounded back to the type (to nearest even)
// after every op. Sub-byte integers and pred compute in 8 bits and are
// wrapped to their width (pred: normalised to 0/1) when stored. The opcode
// and element type are switched on once per call (per chunk of elements for
// the narrow types), never per element; the loops themselves are typed.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "hlogym/eval/kernels.h"
#include "hlogym/ir/primitive_type.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

using PT = PrimitiveType;

// Elements per chunk when operands are converted to a compute type first.
constexpr int64_t kChunk = 512;

// What one evaluation needs to know about the instruction.
struct OpInfo {
  Opcode op = Opcode::kAdd;
  PT out = PT::kInvalid;
  PT in[3] = {PT::kInvalid, PT::kInvalid, PT::kInvalid};
  int arity = 0;
  ComparisonDirection dir = ComparisonDirection::kEq;
  ComparisonType cmp = ComparisonType::kDefault;
  int64_t exponent_bits = 0;
  int64_t mantissa_bits = 0;
  std::string_view name;
};

template <typename... Args>
absl::Status Err(const OpInfo& o, const Args&... args) {
  std::string s;
  StrAppend(&s, o.name, ": ", OpcodeName(o.op), ": ", args...);
  return absl::InvalidArgumentError(s);
}

absl::Status NotDefined(const OpInfo& o, PT t) {
  return Err(o, "not defined for element type ", PrimitiveTypeName(t));
}

// ---------------------------------------------------------------------------
// Raw element access. memcpy keeps the accesses free of alignment and
// aliasing assumptions; the compiler turns it into plain (vector) loads.

template <typename T>
inline T Ld(const uint8_t* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

template <typename T>
inline void St(uint8_t* p, int64_t i, T v) {
  std::memcpy(p + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

// Strides are 1 (array) or 0 (broadcast scalar).
template <typename In, typename Out, typename F>
void Unary(const uint8_t* a, int64_t sa, uint8_t* out, int64_t n, F f) {
  if (n <= 0) return;
  if (sa == 0) {
    const Out v = f(Ld<In>(a, 0));
    for (int64_t i = 0; i < n; ++i) St<Out>(out, i, v);
    return;
  }
  for (int64_t i = 0; i < n; ++i) St<Out>(out, i, f(Ld<In>(a, i)));
}

template <typename In, typename Out, typename F>
void Binary(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb,
            uint8_t* out, int64_t n, F f) {
  if (n <= 0) return;
  if (sa != 0 && sb != 0) {
    for (int64_t i = 0; i < n; ++i) {
      St<Out>(out, i, f(Ld<In>(a, i), Ld<In>(b, i)));
    }
  } else if (sb != 0) {
    const In x = Ld<In>(a, 0);
    for (int64_t i = 0; i < n; ++i) St<Out>(out, i, f(x, Ld<In>(b, i)));
  } else if (sa != 0) {
    const In y = Ld<In>(b, 0);
    for (int64_t i = 0; i < n; ++i) St<Out>(out, i, f(Ld<In>(a, i), y));
  } else {
    const Out v = f(Ld<In>(a, 0), Ld<In>(b, 0));
    for (int64_t i = 0; i < n; ++i) St<Out>(out, i, v);
  }
}

template <typename T, typename F>
void Ternary(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb,
             const uint8_t* c, int64_t sc, uint8_t* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) {
    St<T>(out, i, f(Ld<T>(a, i * sa), Ld<T>(b, i * sb), Ld<T>(c, i * sc)));
  }
}

// ---------------------------------------------------------------------------
// Integer helpers.

inline uint64_t WidthMask(int w) {
  return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

inline int64_t SignExtend(uint64_t v, int w) {
  if (w >= 64) return static_cast<int64_t>(v);
  const uint64_t m = uint64_t{1} << (w - 1);
  v &= (m << 1) - 1;
  return static_cast<int64_t>((v ^ m) - m);
}

bool IsSubByteInt(PT t) {
  return t == PT::kS1 || t == PT::kS2 || t == PT::kS4 || t == PT::kU1 ||
         t == PT::kU2 || t == PT::kU4;
}

// ---------------------------------------------------------------------------
// Narrow floating-point formats. Encoding follows the float8/mxfloat
// conversion rules XLA uses (round to nearest even; out-of-range values and
// infinities become the type's infinity, which is NaN for the fn/fnuz types
// and the largest finite value for the types without NaN).

enum class FKind : uint8_t {
  kIeee,   // inf and NaNs in the all-ones exponent (f16, bf16, e5m2, ...)
  kFn,     // no inf; the all-ones pattern (per sign) is NaN (e4m3fn)
  kFnuz,   // no inf, no -0; the -0 pattern is the only NaN
  kE8M0,   // unsigned powers of two, 0xFF is NaN, no zero
  kNoNan,  // no inf, no NaN (f4e2m1fn, f6e2m3fn, f6e3m2fn)
};

struct SmallFmt {
  int e;
  int m;
  int bias;
  FKind kind;
  int bits() const { return e + m + (kind == FKind::kE8M0 ? 0 : 1); }
  uint32_t sign_bit() const {
    return kind == FKind::kE8M0 ? 0 : uint32_t{1} << (e + m);
  }
  uint32_t max_finite() const {
    const uint32_t all = (uint32_t{1} << (e + m)) - 1;
    switch (kind) {
      case FKind::kIeee:
        return all - (uint32_t{1} << m);
      case FKind::kFn:
        return all - 1;
      case FKind::kE8M0:
        return 0xFE;
      default:
        return all;
    }
  }
  uint32_t nan(bool neg) const {
    const uint32_t all = (uint32_t{1} << (e + m)) - 1;
    switch (kind) {
      case FKind::kIeee:
        return (all - ((uint32_t{1} << m) - 1)) | (uint32_t{1} << (m - 1)) |
               (neg ? sign_bit() : 0);
      case FKind::kFn:
        return all | (neg ? sign_bit() : 0);
      case FKind::kFnuz:
        return sign_bit();
      case FKind::kE8M0:
        return 0xFF;
      case FKind::kNoNan:
        // The type's "NaN" is -0; negating it gives +0.
        return neg ? 0 : sign_bit();
    }
    return 0;
  }
  uint32_t inf(bool neg) const {
    const uint32_t all = (uint32_t{1} << (e + m)) - 1;
    switch (kind) {
      case FKind::kIeee:
        return (all - ((uint32_t{1} << m) - 1)) | (neg ? sign_bit() : 0);
      case FKind::kFn:
        return nan(neg);
      case FKind::kFnuz:
      case FKind::kE8M0:
        return nan(false);
      case FKind::kNoNan:
        return max_finite() | (neg ? sign_bit() : 0);
    }
    return 0;
  }
};

constexpr SmallFmt kF16Fmt{5, 10, 15, FKind::kIeee};
constexpr SmallFmt kBF16Fmt{8, 7, 127, FKind::kIeee};

const SmallFmt* SmallFormat(PT t) {
  static constexpr SmallFmt kE5M2{5, 2, 15, FKind::kIeee};
  static constexpr SmallFmt kE4M3{4, 3, 7, FKind::kIeee};
  static constexpr SmallFmt kE3M4{3, 4, 3, FKind::kIeee};
  static constexpr SmallFmt kE4M3FN{4, 3, 7, FKind::kFn};
  static constexpr SmallFmt kE4M3B11{4, 3, 11, FKind::kFnuz};
  static constexpr SmallFmt kE5M2FNUZ{5, 2, 16, FKind::kFnuz};
  static constexpr SmallFmt kE4M3FNUZ{4, 3, 8, FKind::kFnuz};
  static constexpr SmallFmt kE8M0{8, 0, 127, FKind::kE8M0};
  static constexpr SmallFmt kE2M1{2, 1, 1, FKind::kNoNan};
  static constexpr SmallFmt kE3M2{3, 2, 3, FKind::kNoNan};
  static constexpr SmallFmt kE2M3{2, 3, 1, FKind::kNoNan};
  switch (t) {
    case PT::kF16:
      return &kF16Fmt;
    case PT::kBF16:
      return &kBF16Fmt;
    case PT::kF8E5M2:
      return &kE5M2;
    case PT::kF8E4M3:
      return &kE4M3;
    case PT::kF8E3M4:
      return &kE3M4;
    case PT::kF8E4M3FN:
      return &kE4M3FN;
    case PT::kF8E4M3B11FNUZ:
      return &kE4M3B11;
    case PT::kF8E5M2FNUZ:
      return &kE5M2FNUZ;
    case PT::kF8E4M3FNUZ:
      return &kE4M3FNUZ;
    case PT::kF8E8M0FNU:
      return &kE8M0;
    case PT::kF4E2M1FN:
      return &kE2M1;
    case PT::kF6E3M2FN:
      return &kE3M2;
    case PT::kF6E2M3FN:
      return &kE2M3;
    default:
      return nullptr;
  }
}

bool IsSmallFloat(PT t) { return SmallFormat(t) != nullptr; }

// Rounds `v` to format `f` (to nearest, ties to even) from its exact double
// bits, with the special-value rules of the format.
uint32_t EncodeSmall(const SmallFmt& f, double v) {
  const bool neg = std::signbit(v);
  if (std::isnan(v)) return f.nan(neg);
  if (std::isinf(v)) return f.inf(neg);
  if (v == 0) {
    if (f.kind == FKind::kE8M0) return f.nan(false);  // no zero
    if (f.kind == FKind::kFnuz) return 0;             // no -0
    return neg ? f.sign_bit() : 0;
  }
  if (neg && f.kind == FKind::kE8M0) return f.nan(false);
  const uint64_t bits = std::bit_cast<uint64_t>(v) & ~(uint64_t{1} << 63);
  int exp = static_cast<int>(bits >> 52);
  uint64_t sig = bits & ((uint64_t{1} << 52) - 1);
  if (exp == 0) {  // subnormal double: normalise so bit 52 leads
    const int shift = std::countl_zero(sig) - 11;
    sig <<= shift;
    exp = 1 - shift;
  } else {
    sig |= uint64_t{1} << 52;
  }
  // Target biased exponent; below 1 the value is subnormal in the target.
  const int te = exp - 1023 + f.bias;
  if (te > (1 << f.e) + 1) return f.inf(neg);
  int shift = 52 - f.m + (te < 1 ? 1 - te : 0);
  if (shift > 54) shift = 54;  // rounds to zero
  const uint64_t bias = ((sig >> shift) & 1) + (uint64_t{1} << (shift - 1)) - 1;
  const uint64_t mant = (sig + bias) >> shift;
  // The mantissa still holds its leading one, which adds one to the
  // exponent field; a rounding carry propagates into it the same way.
  const uint64_t mag =
      (te >= 1 ? static_cast<uint64_t>(te - 1) << f.m : uint64_t{0}) + mant;
  if (mag > f.max_finite()) return f.inf(neg);
  const auto m32 = static_cast<uint32_t>(mag);
  if (f.kind == FKind::kE8M0) return m32;
  if (f.kind == FKind::kFnuz && m32 == 0) return 0;
  return m32 | (neg ? f.sign_bit() : 0);
}

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  const uint32_t m = h & 0x3FFu;
  if (e == 0) {
    const float f = static_cast<float>(m) * 0x1p-24f;
    return sign ? -f : f;
  }
  const uint32_t bits = e == 0x1F ? (sign | 0x7F800000u | (m << 13))
                                  : (sign | ((e + 112) << 23) | (m << 13));
  return std::bit_cast<float>(bits);
}

inline uint16_t FloatToBf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7FC0u);
  }
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// Decoded values of the types of at most 8 bits, indexed by the raw byte
// (bits above the type's width are ignored).
const std::array<float, 256>& ByteTable(PT t) {
  constexpr int kFirst = static_cast<int>(PT::kF8E5M2);
  constexpr int kCount = static_cast<int>(PT::kF6E2M3FN) - kFirst + 1;
  static const auto* tables = [] {
    auto* tb = new std::array<std::array<float, 256>, kCount>();
    for (int k = 0; k < kCount; ++k) {
      const PT type = static_cast<PT>(kFirst + k);
      const FloatFormat f = *SmallFloatFormat(type);
      const uint32_t mask = (uint32_t{1} << f.total_bits()) - 1;
      for (uint32_t b = 0; b < 256; ++b) {
        (*tb)[k][b] = static_cast<float>(DecodeSmallFloat(f, b & mask));
      }
    }
    return tb;
  }();
  return (*tables)[static_cast<int>(t) - kFirst];
}

// Narrow float storage <-> float, n contiguous elements.
void DecodeFloats(PT t, const uint8_t* src, int64_t n, float* dst) {
  switch (t) {
    case PT::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        dst[i] = std::bit_cast<float>(
            static_cast<uint32_t>(Ld<uint16_t>(src, i)) << 16);
      }
      return;
    case PT::kF16:
      for (int64_t i = 0; i < n; ++i)
        dst[i] = HalfToFloat(Ld<uint16_t>(src, i));
      return;
    default: {
      const std::array<float, 256>& table = ByteTable(t);
      for (int64_t i = 0; i < n; ++i) dst[i] = table[src[i]];
      return;
    }
  }
}

void EncodeFloats(PT t, const float* src, int64_t n, uint8_t* dst) {
  switch (t) {
    case PT::kBF16:
      for (int64_t i = 0; i < n; ++i) St<uint16_t>(dst, i, FloatToBf16(src[i]));
      return;
    case PT::kF16:
      for (int64_t i = 0; i < n; ++i) {
        St<uint16_t>(dst, i,
                     static_cast<uint16_t>(EncodeSmall(kF16Fmt, src[i])));
      }
      return;
    default: {
      const SmallFmt& f = *SmallFormat(t);
      for (int64_t i = 0; i < n; ++i) {
        dst[i] = static_cast<uint8_t>(EncodeSmall(f, src[i]));
      }
      return;
    }
  }
}

// A double to a narrow float type. f16 and bf16 go through float first, as
// their conversions from wider types do in XLA; the others round directly.
uint32_t EncodeFromDouble(PT t, double v) {
  if (t == PT::kBF16) return FloatToBf16(static_cast<float>(v));
  if (t == PT::kF16) return EncodeSmall(kF16Fmt, static_cast<float>(v));
  return EncodeSmall(*SmallFormat(t), v);
}

// Raw bits of narrow ints and pred <-> 8-bit compute values.
void DecodeNarrowInt(PT t, const uint8_t* src, int64_t n, uint8_t* dst) {
  if (t == PT::kPred) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] != 0;
    return;
  }
  const int w = BitWidth(t);
  if (IsSignedIntegralType(t)) {
    for (int64_t i = 0; i < n; ++i) {
      dst[i] = static_cast<uint8_t>(SignExtend(src[i], w));
    }
  } else {
    const auto mask = static_cast<uint8_t>(WidthMask(w));
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] & mask;
  }
}

void EncodeNarrowInt(PT t, const uint8_t* src, int64_t n, uint8_t* dst) {
  DecodeNarrowInt(t, src, n, dst);  // the same wrap / normalisation
}

// Runs `kern` over chunks of operands converted by `dec` (raw -> CT), then
// converts its output with `enc` (OT -> raw).
template <typename CT, typename OT, typename Dec, typename Enc, typename Kern>
absl::Status Chunked(int arity, const uint8_t* const* in, const int64_t* s,
                     int in_bw, uint8_t* out, int out_bw, int64_t n, Dec dec,
                     Enc enc, Kern kern) {
  alignas(64) CT buf[3][kChunk];
  alignas(64) OT obuf[kChunk];
  const uint8_t* ptrs[3] = {nullptr, nullptr, nullptr};
  int64_t st[3] = {0, 0, 0};
  for (int k = 0; k < arity; ++k) {
    ptrs[k] = reinterpret_cast<const uint8_t*>(buf[k]);
    st[k] = s[k];
    if (s[k] == 0) dec(in[k], 1, buf[k]);
  }
  int64_t start = 0;
  do {
    const int64_t len = std::min(kChunk, n - start);
    for (int k = 0; k < arity; ++k) {
      if (s[k] != 0) dec(in[k] + start * in_bw, len, buf[k]);
    }
    absl::Status status = kern(ptrs, st, reinterpret_cast<uint8_t*>(obuf), len);
    if (!status.ok()) return status;
    enc(obuf, len, out + start * out_bw);
    start += len;
  } while (start < n);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Floating-point ops (float for the narrow types, or double).

template <typename F, typename U>
F ReducePrecision(F x, int ebits, int mbits) {
  constexpr int kSrcM = std::numeric_limits<F>::digits - 1;
  constexpr int kSrcE = static_cast<int>(sizeof(F)) * 8 - kSrcM - 1;
  U v = std::bit_cast<U>(x);
  if (mbits < kSrcM) {
    // Round to nearest even: add 0111... plus the last kept bit, then
    // truncate; a carry into the exponent is correct.
    const U last = U{1} << (kSrcM - mbits);
    const U base_bias = (last >> 1) - 1;
    const U last_bit = (v & last) >> (kSrcM - mbits);
    v = (v + last_bit + base_bias) & ~(last - 1);
  }
  if (ebits < kSrcE) {
    const U sign_mask = U{1} << (sizeof(F) * 8 - 1);
    const U exp_mask = ((U{1} << kSrcE) - 1) << kSrcM;
    const U exp_bias = (U{1} << (kSrcE - 1)) - 1;
    const U reduced_bias = (U{1} << (ebits - 1)) - 1;
    const U max_exp = exp_bias + reduced_bias;
    const U min_exp = exp_bias - reduced_bias;
    const U x_exp = v & exp_mask;
    const U signed_zero = v & sign_mask;
    // Denormals of the reduced format flush to zero.
    if (x_exp > (max_exp << kSrcM)) {
      v = signed_zero | exp_mask;
    } else if (x_exp <= (min_exp << kSrcM)) {
      v = signed_zero;
    }
  }
  F r = std::bit_cast<F>(v);
  if (std::isnan(x)) r = mbits > 0 ? x : std::numeric_limits<F>::infinity();
  return r;
}

template <typename F>
absl::Status FloatOps(const OpInfo& o, const uint8_t* const* in,
                      const int64_t* s, uint8_t* out, int64_t n) {
  auto un = [&](auto f) { Unary<F, F>(in[0], s[0], out, n, f); };
  auto bin = [&](auto f) { Binary<F, F>(in[0], s[0], in[1], s[1], out, n, f); };
  switch (o.op) {
    case Opcode::kAbs:
      un([](F x) { return std::fabs(x); });
      break;
    case Opcode::kAcos:
      un([](F x) { return std::acos(x); });
      break;
    case Opcode::kAcosh:
      un([](F x) { return std::acosh(x); });
      break;
    case Opcode::kAsin:
      un([](F x) { return std::asin(x); });
      break;
    case Opcode::kAsinh:
      un([](F x) { return std::asinh(x); });
      break;
    case Opcode::kAtanh:
      un([](F x) { return std::atanh(x); });
      break;
    case Opcode::kCbrt:
      un([](F x) { return std::cbrt(x); });
      break;
    case Opcode::kCeil:
      un([](F x) { return std::ceil(x); });
      break;
    case Opcode::kCosh:
      un([](F x) { return std::cosh(x); });
      break;
    case Opcode::kCosine:
      un([](F x) { return std::cos(x); });
      break;
    case Opcode::kErf:
      un([](F x) { return std::erf(x); });
      break;
    case Opcode::kExp:
      un([](F x) { return std::exp(x); });
      break;
    case Opcode::kExpm1:
      un([](F x) { return std::expm1(x); });
      break;
    case Opcode::kFloor:
      un([](F x) { return std::floor(x); });
      break;
    case Opcode::kLog:
      un([](F x) { return std::log(x); });
      break;
    case Opcode::kLog1p:
      un([](F x) { return std::log1p(x); });
      break;
    case Opcode::kLogistic:
      un([](F x) { return F(1) / (F(1) + std::exp(-x)); });
      break;
    case Opcode::kNegate:
      un([](F x) { return -x; });
      break;
    case Opcode::kRoundNearestAfz:
      un([](F x) { return std::round(x); });
      break;
    case Opcode::kRoundNearestEven:
      un([](F x) { return std::nearbyint(x); });
      break;
    case Opcode::kRsqrt:
      un([](F x) { return F(1) / std::sqrt(x); });
      break;
    case Opcode::kSign:
      un([](F x) {
        return std::isnan(x) ? x : std::copysign(x != F(0) ? F(1) : F(0), x);
      });
      break;
    case Opcode::kSin:
      un([](F x) { return std::sin(x); });
      break;
    case Opcode::kSinh:
      un([](F x) { return std::sinh(x); });
      break;
    case Opcode::kSqrt:
      un([](F x) { return std::sqrt(x); });
      break;
    case Opcode::kTan:
      un([](F x) { return std::tan(x); });
      break;
    case Opcode::kTanh:
      un([](F x) { return std::tanh(x); });
      break;
    case Opcode::kReducePrecision: {
      if (o.exponent_bits < 1 || o.mantissa_bits < 0 || o.exponent_bits > 64 ||
          o.mantissa_bits > 64) {
        return Err(o, "invalid exponent_bits=", o.exponent_bits,
                   " mantissa_bits=", o.mantissa_bits);
      }
      const int eb = static_cast<int>(o.exponent_bits);
      const int mb = static_cast<int>(o.mantissa_bits);
      using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
      un([eb, mb](F x) { return ReducePrecision<F, U>(x, eb, mb); });
      break;
    }
    case Opcode::kAdd:
      bin([](F x, F y) { return x + y; });
      break;
    case Opcode::kSubtract:
      bin([](F x, F y) { return x - y; });
      break;
    case Opcode::kMultiply:
      bin([](F x, F y) { return x * y; });
      break;
    case Opcode::kDivide:
      bin([](F x, F y) { return x / y; });
      break;
    case Opcode::kRemainder:
      bin([](F x, F y) { return std::fmod(x, y); });
      break;
    case Opcode::kMaximum:
      bin([](F x, F y) {
        if (std::isnan(x)) return x;
        if (std::isnan(y)) return y;
        return std::max(x, y);
      });
      break;
    case Opcode::kMinimum:
      bin([](F x, F y) {
        if (std::isnan(x)) return x;
        if (std::isnan(y)) return y;
        return std::min(x, y);
      });
      break;
    case Opcode::kPower:
      bin([](F x, F y) {
        return (x == F(1) || y == F(0)) ? F(1) : std::pow(x, y);
      });
      break;
    case Opcode::kAtan2:
      bin([](F x, F y) { return std::atan2(x, y); });
      break;
    case Opcode::kClamp:
      Ternary<F>(in[0], s[0], in[1], s[1], in[2], s[2], out, n,
                 [](F lo, F x, F hi) {
                   if (std::isnan(lo)) return lo;
                   if (std::isnan(x)) return x;
                   if (std::isnan(hi)) return hi;
                   return std::min(hi, std::max(x, lo));
                 });
      break;
    default:
      return NotDefined(o, o.out);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Integer ops. `width` is the type's bit width (sub-byte types compute in 8
// bits and are wrapped when stored); pred computes as 0/1 in uint8.

struct IntCtx {
  int width;
  bool pred;
};

template <typename I>
absl::Status IntOps(const OpInfo& o, IntCtx c, const uint8_t* const* in,
                    const int64_t* s, uint8_t* out, int64_t n) {
  using U = std::make_unsigned_t<I>;
  // Wide enough that arithmetic never promotes to a signed type.
  using W = std::make_unsigned_t<decltype(I{} + I{})>;
  constexpr bool kSigned = std::is_signed_v<I>;
  const int w = c.width;
  const uint64_t mask = WidthMask(w);
  auto un = [&](auto f) { Unary<I, I>(in[0], s[0], out, n, f); };
  auto bin = [&](auto f) { Binary<I, I>(in[0], s[0], in[1], s[1], out, n, f); };
  switch (o.op) {
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kPopulationCount:
    case Opcode::kCountLeadingZeros:
    case Opcode::kMulhi:
      if (c.pred) return NotDefined(o, PT::kPred);
      break;
    default:
      break;
  }
  switch (o.op) {
    case Opcode::kAdd:
      bin([](I x, I y) { return static_cast<I>(W(x) + W(y)); });
      break;
    case Opcode::kSubtract:
      bin([](I x, I y) { return static_cast<I>(W(x) - W(y)); });
      break;
    case Opcode::kMultiply:
      bin([](I x, I y) { return static_cast<I>(W(x) * W(y)); });
      break;
    case Opcode::kDivide:
      bin([](I x, I y) -> I {
        if (y == 0) {
          return kSigned ? static_cast<I>(-1) : std::numeric_limits<I>::max();
        }
        if constexpr (kSigned) {
          if (y == -1 && x == std::numeric_limits<I>::min()) return x;
        }
        return static_cast<I>(x / y);
      });
      break;
    case Opcode::kRemainder:
      bin([](I x, I y) -> I {
        if (y == 0) return x;
        if constexpr (kSigned) {
          if (y == -1) return 0;
        }
        return static_cast<I>(x % y);
      });
      break;
    case Opcode::kMaximum:
      bin([](I x, I y) { return std::max(x, y); });
      break;
    case Opcode::kMinimum:
      bin([](I x, I y) { return std::min(x, y); });
      break;
    case Opcode::kPower:
      bin([](I x, I y) -> I {
        if constexpr (kSigned) {
          // XLA: a negative exponent gives 1 for base 1, else 0.
          if (y < 0) return static_cast<I>(x == 1 ? 1 : 0);
        }
        W base = W(x);
        W r = 1;
        for (uint64_t e = static_cast<uint64_t>(static_cast<U>(y)); e != 0;
             e >>= 1) {
          if (e & 1) r *= base;
          base *= base;
        }
        return static_cast<I>(r);
      });
      break;
    case Opcode::kAnd:
      bin([](I x, I y) { return static_cast<I>(x & y); });
      break;
    case Opcode::kOr:
      bin([](I x, I y) { return static_cast<I>(x | y); });
      break;
    case Opcode::kXor:
      bin([](I x, I y) { return static_cast<I>(x ^ y); });
      break;
    case Opcode::kNot:
      if (c.pred) {
        un([](I x) { return static_cast<I>(x == 0 ? 1 : 0); });
      } else {
        un([](I x) { return static_cast<I>(~W(x)); });
      }
      break;
    case Opcode::kNegate:
      un([](I x) { return static_cast<I>(W(0) - W(x)); });
      break;
    case Opcode::kAbs:
      un([](I x) -> I {
        if constexpr (kSigned) {
          if (x < 0) return static_cast<I>(W(0) - W(x));
        }
        return x;
      });
      break;
    case Opcode::kSign:
      un([](I x) -> I {
        if constexpr (kSigned) {
          return static_cast<I>((x > 0) - (x < 0));
        } else {
          return static_cast<I>(x != 0);
        }
      });
      break;
    case Opcode::kShiftLeft:
      bin([w, mask](I x, I y) -> I {
        const uint64_t a = uint64_t{U(y)} & mask;
        if (a >= static_cast<uint64_t>(w)) return 0;
        return static_cast<I>(W(x) << a);
      });
      break;
    case Opcode::kShiftRightArithmetic:
      bin([w, mask](I x, I y) -> I {
        const uint64_t a = uint64_t{U(y)} & mask;
        const int64_t v = SignExtend(uint64_t{U(x)} & mask, w);
        if (a >= static_cast<uint64_t>(w))
          return static_cast<I>(v < 0 ? -1 : 0);
        return static_cast<I>(v >> a);
      });
      break;
    case Opcode::kShiftRightLogical:
      bin([w, mask](I x, I y) -> I {
        const uint64_t a = uint64_t{U(y)} & mask;
        if (a >= static_cast<uint64_t>(w)) return 0;
        return static_cast<I>((uint64_t{U(x)} & mask) >> a);
      });
      break;
    case Opcode::kPopulationCount:
      un([mask](I x) {
        return static_cast<I>(std::popcount(uint64_t{U(x)} & mask));
      });
      break;
    case Opcode::kCountLeadingZeros:
      un([w, mask](I x) {
        return static_cast<I>(
            w - static_cast<int>(std::bit_width(uint64_t{U(x)} & mask)));
      });
      break;
    case Opcode::kMulhi:
      bin([w](I x, I y) -> I {
        if constexpr (kSigned) {
          if (w <= 32) {
            return static_cast<I>((int64_t{x} * int64_t{y}) >> w);
          }
          __extension__ using I128 = __int128;
          return static_cast<I>(
              static_cast<int64_t>((I128{x} * I128{y}) >> 64));
        } else {
          if (w <= 32) {
            return static_cast<I>((uint64_t{x} * uint64_t{y}) >> w);
          }
          __extension__ using U128 = unsigned __int128;
          return static_cast<I>(
              static_cast<uint64_t>((U128{x} * U128{y}) >> 64));
        }
      });
      break;
    case Opcode::kClamp:
      Ternary<I>(in[0], s[0], in[1], s[1], in[2], s[2], out, n,
                 [](I lo, I x, I hi) { return std::min(hi, std::max(x, lo)); });
      break;
    default:
      return NotDefined(o, o.out);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Complex ops.

template <typename F>
std::complex<F> ComplexLog1p(std::complex<F> z) {
  const F x = z.real(), y = z.imag();
  if (std::fabs(x) < F(0.5) && std::fabs(y) < F(0.5)) {
    // log|1+z| = log1p(2x + x^2 + y^2) / 2, accurate near zero.
    return {F(0.5) * std::log1p(x * (F(2) + x) + y * y),
            std::atan2(y, F(1) + x)};
  }
  return std::log(F(1) + z);
}

template <typename F>
std::complex<F> ComplexExpm1(std::complex<F> z) {
  const F x = z.real(), y = z.imag();
  if (std::fabs(x) < F(0.5) && std::fabs(y) < F(0.5)) {
    // exp(x)cos(y) - 1 = expm1(x)cos(y) - 2 sin^2(y/2).
    const F h = std::sin(y / F(2));
    return {std::expm1(x) * std::cos(y) - F(2) * h * h,
            std::exp(x) * std::sin(y)};
  }
  return std::exp(z) - F(1);
}

template <typename F>
absl::Status ComplexOps(const OpInfo& o, const uint8_t* const* in,
                        const int64_t* s, uint8_t* out, int64_t n) {
  using C = std::complex<F>;
  auto un = [&](auto f) { Unary<C, C>(in[0], s[0], out, n, f); };
  auto bin = [&](auto f) { Binary<C, C>(in[0], s[0], in[1], s[1], out, n, f); };
  switch (o.op) {
    case Opcode::kNegate:
      un([](C x) { return -x; });
      break;
    case Opcode::kSign:
      un([](C x) {
        const F a = std::abs(x);
        return a == F(0) ? C(0) : x / a;
      });
      break;
    case Opcode::kExp:
      un([](C x) { return std::exp(x); });
      break;
    case Opcode::kExpm1:
      un([](C x) { return ComplexExpm1(x); });
      break;
    case Opcode::kLog:
      un([](C x) { return std::log(x); });
      break;
    case Opcode::kLog1p:
      un([](C x) { return ComplexLog1p(x); });
      break;
    case Opcode::kLogistic:
      un([](C x) { return C(1) / (C(1) + std::exp(-x)); });
      break;
    case Opcode::kSqrt:
      un([](C x) { return std::sqrt(x); });
      break;
    case Opcode::kRsqrt:
      un([](C x) { return C(1) / std::sqrt(x); });
      break;
    case Opcode::kSin:
      un([](C x) { return std::sin(x); });
      break;
    case Opcode::kCosine:
      un([](C x) { return std::cos(x); });
      break;
    case Opcode::kTan:
      un([](C x) { return std::tan(x); });
      break;
    case Opcode::kTanh:
      un([](C x) { return std::tanh(x); });
      break;
    case Opcode::kSinh:
      un([](C x) { return std::sinh(x); });
      break;
    case Opcode::kCosh:
      un([](C x) { return std::cosh(x); });
      break;
    case Opcode::kAsin:
      un([](C x) { return std::asin(x); });
      break;
    case Opcode::kAcos:
      un([](C x) { return std::acos(x); });
      break;
    case Opcode::kAtanh:
      un([](C x) { return std::atanh(x); });
      break;
    case Opcode::kAsinh:
      un([](C x) { return std::asinh(x); });
      break;
    case Opcode::kAcosh:
      un([](C x) { return std::acosh(x); });
      break;
    case Opcode::kAdd:
      bin([](C x, C y) { return x + y; });
      break;
    case Opcode::kSubtract:
      bin([](C x, C y) { return x - y; });
      break;
    case Opcode::kMultiply:
      bin([](C x, C y) { return x * y; });
      break;
    case Opcode::kDivide:
      bin([](C x, C y) { return x / y; });
      break;
    case Opcode::kPower:
      bin([](C x, C y) -> C {
        if (x == C(1) || y == C(0)) return C(1);
        // inf^(a + 0i) is inf for a > 0 and 0 for a < 0.
        const bool x_pos_inf =
            x.imag() == 0 && x.real() > 0 && std::isinf(x.real());
        if (x_pos_inf && y.imag() == 0 && y.real() > 0) return x;
        if (x_pos_inf && y.imag() == 0 && y.real() < 0) return C(0);
        return std::pow(x, y);
      });
      break;
    case Opcode::kAtan2:
      bin([](C y, C x) {
        // atan2(y, x) = -i * log((x + iy) / sqrt(x^2 + y^2)).
        const C i(0, 1);
        return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
      });
      break;
    default:
      return NotDefined(o, o.out);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Ops whose operands and result all have the element type o.out.

absl::Status SameType(const OpInfo& o, const uint8_t* const* in,
                      const int64_t* s, uint8_t* out, int64_t n) {
  const PT t = o.out;
  switch (t) {
    case PT::kF32:
      return FloatOps<float>(o, in, s, out, n);
    case PT::kF64:
      return FloatOps<double>(o, in, s, out, n);
    case PT::kS8:
      return IntOps<int8_t>(o, {8, false}, in, s, out, n);
    case PT::kS16:
      return IntOps<int16_t>(o, {16, false}, in, s, out, n);
    case PT::kS32:
      return IntOps<int32_t>(o, {32, false}, in, s, out, n);
    case PT::kS64:
      return IntOps<int64_t>(o, {64, false}, in, s, out, n);
    case PT::kU8:
      return IntOps<uint8_t>(o, {8, false}, in, s, out, n);
    case PT::kU16:
      return IntOps<uint16_t>(o, {16, false}, in, s, out, n);
    case PT::kU32:
      return IntOps<uint32_t>(o, {32, false}, in, s, out, n);
    case PT::kU64:
      return IntOps<uint64_t>(o, {64, false}, in, s, out, n);
    case PT::kC64:
      return ComplexOps<float>(o, in, s, out, n);
    case PT::kC128:
      return ComplexOps<double>(o, in, s, out, n);
    default:
      break;
  }
  if (IsSmallFloat(t)) {
    const int bw = ByteWidth(t);
    return Chunked<float, float>(
        o.arity, in, s, bw, out, bw, n,
        [t](const uint8_t* src, int64_t k, float* dst) {
          DecodeFloats(t, src, k, dst);
        },
        [t](const float* src, int64_t k, uint8_t* dst) {
          EncodeFloats(t, src, k, dst);
        },
        [&o](const uint8_t* const* p, const int64_t* st, uint8_t* ob,
             int64_t k) { return FloatOps<float>(o, p, st, ob, k); });
  }
  if (t == PT::kPred || IsSubByteInt(t)) {
    const IntCtx c{BitWidth(t), t == PT::kPred};
    auto dec = [t](const uint8_t* src, int64_t k, uint8_t* dst) {
      DecodeNarrowInt(t, src, k, dst);
    };
    auto enc = [t](const uint8_t* src, int64_t k, uint8_t* dst) {
      EncodeNarrowInt(t, src, k, dst);
    };
    if (IsSignedIntegralType(t)) {
      return Chunked<uint8_t, uint8_t>(
          o.arity, in, s, 1, out, 1, n, dec, enc,
          [&o, c](const uint8_t* const* p, const int64_t* st, uint8_t* ob,
                  int64_t k) { return IntOps<int8_t>(o, c, p, st, ob, k); });
    }
    return Chunked<uint8_t, uint8_t>(
        o.arity, in, s, 1, out, 1, n, dec, enc,
        [&o, c](const uint8_t* const* p, const int64_t* st, uint8_t* ob,
                int64_t k) { return IntOps<uint8_t>(o, c, p, st, ob, k); });
  }
  return NotDefined(o, t);
}

// ---------------------------------------------------------------------------
// compare

template <typename T>
void CompareLoop(ComparisonDirection d, const uint8_t* a, int64_t sa,
                 const uint8_t* b, int64_t sb, uint8_t* out, int64_t n) {
  switch (d) {
    case ComparisonDirection::kEq:
      Binary<T, uint8_t>(a, sa, b, sb, out, n,
                         [](T x, T y) -> uint8_t { return x == y; });
      break;
    case ComparisonDirection::kNe:
      Binary<T, uint8_t>(a, sa, b, sb, out, n,
                         [](T x, T y) -> uint8_t { return x != y; });
      break;
    case ComparisonDirection::kLt:
      Binary<T, uint8_t>(a, sa, b, sb, out, n,
                         [](T x, T y) -> uint8_t { return x < y; });
      break;
    case ComparisonDirection::kLe:
      Binary<T, uint8_t>(a, sa, b, sb, out, n,
                         [](T x, T y) -> uint8_t { return x <= y; });
      break;
    case ComparisonDirection::kGt:
      Binary<T, uint8_t>(a, sa, b, sb, out, n,
                         [](T x, T y) -> uint8_t { return x > y; });
      break;
    case ComparisonDirection::kGe:
      Binary<T, uint8_t>(a, sa, b, sb, out, n,
                         [](T x, T y) -> uint8_t { return x >= y; });
      break;
  }
}

// Total-order keys: as a signed integer of the type's width, with the
// non-sign bits flipped for negative values, so that
// -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN.
void TotalOrderKeys(PT t, const uint8_t* src, int64_t n, int64_t* dst) {
  if (t == PT::kF64) {
    for (int64_t i = 0; i < n; ++i) {
      const auto v = Ld<int64_t>(src, i);
      dst[i] = v < 0 ? v ^ std::numeric_limits<int64_t>::max() : v;
    }
    return;
  }
  const int w = BitWidth(t);
  const int bw = ByteWidth(t);
  const bool has_sign = t != PT::kF8E8M0FNU;
  const int64_t flip = (int64_t{1} << (w - 1)) - 1;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, src + i * bw, bw);
    bits &= WidthMask(w);
    if (!has_sign) {
      dst[i] = static_cast<int64_t>(bits);
      continue;
    }
    const int64_t v = SignExtend(bits, w);
    dst[i] = v < 0 ? v ^ flip : v;
  }
}

absl::Status CompareOp(const OpInfo& o, const uint8_t* const* in,
                       const int64_t* s, uint8_t* out, int64_t n) {
  const PT t = o.in[0];
  if (o.in[1] != t) {
    return Err(o, "operand types differ: ", PrimitiveTypeName(t), " and ",
               PrimitiveTypeName(o.in[1]));
  }
  if (o.out != PT::kPred) return Err(o, "result must be pred");
  const ComparisonType ct = o.cmp;
  const ComparisonDirection d = o.dir;
  auto pred_enc = [](const uint8_t* src, int64_t k, uint8_t* dst) {
    for (int64_t i = 0; i < k; ++i) dst[i] = src[i];
  };
  if (IsFloatingPointType(t)) {
    if (ct == ComparisonType::kTotalOrder) {
      return Chunked<int64_t, uint8_t>(
          2, in, s, ByteWidth(t), out, 1, n,
          [t](const uint8_t* src, int64_t k, int64_t* dst) {
            TotalOrderKeys(t, src, k, dst);
          },
          pred_enc,
          [d](const uint8_t* const* p, const int64_t* st, uint8_t* ob,
              int64_t k) {
            CompareLoop<int64_t>(d, p[0], st[0], p[1], st[1], ob, k);
            return absl::OkStatus();
          });
    }
    if (ct != ComparisonType::kDefault && ct != ComparisonType::kFloat) {
      return Err(o, "comparison type ", ComparisonTypeName(ct),
                 " does not apply to ", PrimitiveTypeName(t));
    }
    if (t == PT::kF32) {
      CompareLoop<float>(d, in[0], s[0], in[1], s[1], out, n);
    } else if (t == PT::kF64) {
      CompareLoop<double>(d, in[0], s[0], in[1], s[1], out, n);
    } else {
      return Chunked<float, uint8_t>(
          2, in, s, ByteWidth(t), out, 1, n,
          [t](const uint8_t* src, int64_t k, float* dst) {
            DecodeFloats(t, src, k, dst);
          },
          pred_enc,
          [d](const uint8_t* const* p, const int64_t* st, uint8_t* ob,
              int64_t k) {
            CompareLoop<float>(d, p[0], st[0], p[1], st[1], ob, k);
            return absl::OkStatus();
          });
    }
    return absl::OkStatus();
  }
  if (IsComplexType(t)) {
    if (d != ComparisonDirection::kEq && d != ComparisonDirection::kNe) {
      return Err(o, "complex operands support only EQ and NE, not ",
                 ComparisonDirectionName(d));
    }
    const bool eq = d == ComparisonDirection::kEq;
    if (t == PT::kC64) {
      using C = std::complex<float>;
      Binary<C, uint8_t>(in[0], s[0], in[1], s[1], out, n,
                         [eq](C x, C y) -> uint8_t { return (x == y) == eq; });
    } else {
      using C = std::complex<double>;
      Binary<C, uint8_t>(in[0], s[0], in[1], s[1], out, n,
                         [eq](C x, C y) -> uint8_t { return (x == y) == eq; });
    }
    return absl::OkStatus();
  }
  if (ct == ComparisonType::kFloat || ct == ComparisonType::kTotalOrder) {
    return Err(o, "comparison type ", ComparisonTypeName(ct),
               " does not apply to ", PrimitiveTypeName(t));
  }
  switch (t) {
    case PT::kS8:
      CompareLoop<int8_t>(d, in[0], s[0], in[1], s[1], out, n);
      return absl::OkStatus();
    case PT::kS16:
      CompareLoop<int16_t>(d, in[0], s[0], in[1], s[1], out, n);
      return absl::OkStatus();
    case PT::kS32:
      CompareLoop<int32_t>(d, in[0], s[0], in[1], s[1], out, n);
      return absl::OkStatus();
    case PT::kS64:
      CompareLoop<int64_t>(d, in[0], s[0], in[1], s[1], out, n);
      return absl::OkStatus();
    case PT::kU8:
      CompareLoop<uint8_t>(d, in[0], s[0], in[1], s[1], out, n);
      return absl::OkStatus();
    case PT::kU16:
      CompareLoop<uint16_t>(d, in[0], s[0], in[1], s[1], out, n);
      return absl::OkStatus();
    case PT::kU32:
      CompareLoop<uint32_t>(d, in[0], s[0], in[1], s[1], out, n);
      return absl::OkStatus();
    case PT::kU64:
      CompareLoop<uint64_t>(d, in[0], s[0], in[1], s[1], out, n);
      return absl::OkStatus();
    default:
      break;
  }
  if (t == PT::kPred || IsSubByteInt(t)) {
    const bool is_signed = IsSignedIntegralType(t);
    return Chunked<uint8_t, uint8_t>(
        2, in, s, 1, out, 1, n,
        [t](const uint8_t* src, int64_t k, uint8_t* dst) {
          DecodeNarrowInt(t, src, k, dst);
        },
        pred_enc,
        [d, is_signed](const uint8_t* const* p, const int64_t* st, uint8_t* ob,
                       int64_t k) {
          if (is_signed) {
            CompareLoop<int8_t>(d, p[0], st[0], p[1], st[1], ob, k);
          } else {
            CompareLoop<uint8_t>(d, p[0], st[0], p[1], st[1], ob, k);
          }
          return absl::OkStatus();
        });
  }
  return NotDefined(o, t);
}

// ---------------------------------------------------------------------------
// select, is-finite, real/imag/abs of complex, complex.

template <typename T>
void SelectLoop(const uint8_t* p, int64_t sp, const uint8_t* a, int64_t sa,
                const uint8_t* b, int64_t sb, uint8_t* out, int64_t n) {
  if (sp == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) {
      const T x = Ld<T>(a, i), y = Ld<T>(b, i);
      St<T>(out, i, p[i] != 0 ? x : y);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const T x = Ld<T>(a, i * sa), y = Ld<T>(b, i * sb);
    St<T>(out, i, p[i * sp] != 0 ? x : y);
  }
}

struct Bytes16 {
  uint64_t lo, hi;
};

absl::Status SelectOp(const OpInfo& o, const uint8_t* const* in,
                      const int64_t* s, uint8_t* out, int64_t n) {
  if (o.in[0] != PT::kPred) {
    return Err(o, "predicate must be pred, not ", PrimitiveTypeName(o.in[0]));
  }
  if (o.in[1] != o.out || o.in[2] != o.out) {
    return Err(o, "on_true/on_false types ", PrimitiveTypeName(o.in[1]), "/",
               PrimitiveTypeName(o.in[2]), " differ from the result type ",
               PrimitiveTypeName(o.out));
  }
  switch (ByteWidth(o.out)) {
    case 1:
      SelectLoop<uint8_t>(in[0], s[0], in[1], s[1], in[2], s[2], out, n);
      break;
    case 2:
      SelectLoop<uint16_t>(in[0], s[0], in[1], s[1], in[2], s[2], out, n);
      break;
    case 4:
      SelectLoop<uint32_t>(in[0], s[0], in[1], s[1], in[2], s[2], out, n);
      break;
    case 8:
      SelectLoop<uint64_t>(in[0], s[0], in[1], s[1], in[2], s[2], out, n);
      break;
    case 16:
      SelectLoop<Bytes16>(in[0], s[0], in[1], s[1], in[2], s[2], out, n);
      break;
    default:
      return NotDefined(o, o.out);
  }
  return absl::OkStatus();
}

absl::Status IsFiniteOp(const OpInfo& o, const uint8_t* const* in,
                        const int64_t* s, uint8_t* out, int64_t n) {
  const PT t = o.in[0];
  if (o.out != PT::kPred) return Err(o, "result must be pred");
  auto fin = [](auto x) -> uint8_t { return std::isfinite(x); };
  if (t == PT::kF32) {
    Unary<float, uint8_t>(in[0], s[0], out, n, fin);
  } else if (t == PT::kF64) {
    Unary<double, uint8_t>(in[0], s[0], out, n, fin);
  } else if (IsSmallFloat(t)) {
    return Chunked<float, uint8_t>(
        1, in, s, ByteWidth(t), out, 1, n,
        [t](const uint8_t* src, int64_t k, float* dst) {
          DecodeFloats(t, src, k, dst);
        },
        [](const uint8_t* src, int64_t k, uint8_t* dst) {
          for (int64_t i = 0; i < k; ++i) dst[i] = src[i];
        },
        [&fin](const uint8_t* const* p, const int64_t* st, uint8_t* ob,
               int64_t k) {
          Unary<float, uint8_t>(p[0], st[0], ob, k, fin);
          return absl::OkStatus();
        });
  } else {
    return NotDefined(o, t);
  }
  return absl::OkStatus();
}

// real, imag and abs with a complex operand give its component type.
absl::Status ComplexToReal(const OpInfo& o, const uint8_t* const* in,
                           const int64_t* s, uint8_t* out, int64_t n) {
  const PT t = o.in[0];
  if (o.out != ComplexComponentType(t)) {
    return Err(o, "result type must be ",
               PrimitiveTypeName(ComplexComponentType(t)), " for a ",
               PrimitiveTypeName(t), " operand");
  }
  auto run = [&](auto zero) {
    (void)zero;
    using F = decltype(zero);
    using C = std::complex<F>;
    switch (o.op) {
      case Opcode::kReal:
        Unary<C, F>(in[0], s[0], out, n, [](C x) { return x.real(); });
        break;
      case Opcode::kImag:
        Unary<C, F>(in[0], s[0], out, n, [](C x) { return x.imag(); });
        break;
      default:
        Unary<C, F>(in[0], s[0], out, n, [](C x) { return std::abs(x); });
        break;
    }
  };
  if (t == PT::kC64) {
    run(0.0f);
  } else {
    run(0.0);
  }
  return absl::OkStatus();
}

absl::Status RealImagOfReal(const OpInfo& o, const uint8_t* const* in,
                            const int64_t* s, uint8_t* out, int64_t n) {
  if (o.out != o.in[0]) {
    return Err(o, "result type ", PrimitiveTypeName(o.out),
               " differs from the operand type ", PrimitiveTypeName(o.in[0]));
  }
  const int bw = ByteWidth(o.out);
  if (o.op == Opcode::kImag) {
    std::memset(out, 0, static_cast<size_t>(n * bw));
  } else if (s[0] == 0) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * bw, in[0], bw);
  } else if (out != in[0]) {
    std::memmove(out, in[0], static_cast<size_t>(n * bw));
  }
  return absl::OkStatus();
}

absl::Status ComplexOp(const OpInfo& o, const uint8_t* const* in,
                       const int64_t* s, uint8_t* out, int64_t n) {
  if (o.in[0] == PT::kF32 && o.in[1] == PT::kF32 && o.out == PT::kC64) {
    Binary<float, std::complex<float>>(
        in[0], s[0], in[1], s[1], out, n,
        [](float x, float y) { return std::complex<float>(x, y); });
  } else if (o.in[0] == PT::kF64 && o.in[1] == PT::kF64 && o.out == PT::kC128) {
    Binary<double, std::complex<double>>(
        in[0], s[0], in[1], s[1], out, n,
        [](double x, double y) { return std::complex<double>(x, y); });
  } else {
    return Err(o, "needs (f32, f32) -> c64 or (f64, f64) -> c128, not (",
               PrimitiveTypeName(o.in[0]), ", ", PrimitiveTypeName(o.in[1]),
               ") -> ", PrimitiveTypeName(o.out));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// convert

enum class VKind : uint8_t { kS, kU, kF, kC };

VKind KindOf(PT t) {
  if (t == PT::kPred || IsSignedIntegralType(t)) return VKind::kS;
  if (IsUnsignedIntegralType(t)) return VKind::kU;
  if (IsComplexType(t)) return VKind::kC;
  return VKind::kF;
}

// One chunk of values in the widest type of their kind (kept on the stack:
// scalar functions convert one element per call).
constexpr int64_t kValueChunk = 128;
struct Values {
  int64_t s[kValueChunk];
  uint64_t u[kValueChunk];
  double f[kValueChunk];
  std::complex<double> c[kValueChunk];
};

void ReadValues(PT t, const uint8_t* src, int64_t n, Values* v) {
  switch (t) {
    case PT::kPred:
      for (int64_t i = 0; i < n; ++i) v->s[i] = src[i] != 0;
      return;
    case PT::kS8:
      for (int64_t i = 0; i < n; ++i) v->s[i] = Ld<int8_t>(src, i);
      return;
    case PT::kS16:
      for (int64_t i = 0; i < n; ++i) v->s[i] = Ld<int16_t>(src, i);
      return;
    case PT::kS32:
      for (int64_t i = 0; i < n; ++i) v->s[i] = Ld<int32_t>(src, i);
      return;
    case PT::kS64:
      for (int64_t i = 0; i < n; ++i) v->s[i] = Ld<int64_t>(src, i);
      return;
    case PT::kU8:
      for (int64_t i = 0; i < n; ++i) v->u[i] = Ld<uint8_t>(src, i);
      return;
    case PT::kU16:
      for (int64_t i = 0; i < n; ++i) v->u[i] = Ld<uint16_t>(src, i);
      return;
    case PT::kU32:
      for (int64_t i = 0; i < n; ++i) v->u[i] = Ld<uint32_t>(src, i);
      return;
    case PT::kU64:
      for (int64_t i = 0; i < n; ++i) v->u[i] = Ld<uint64_t>(src, i);
      return;
    case PT::kF32:
      for (int64_t i = 0; i < n; ++i) v->f[i] = Ld<float>(src, i);
      return;
    case PT::kF64:
      for (int64_t i = 0; i < n; ++i) v->f[i] = Ld<double>(src, i);
      return;
    case PT::kC64:
      for (int64_t i = 0; i < n; ++i) {
        v->c[i] = std::complex<double>(Ld<std::complex<float>>(src, i));
      }
      return;
    case PT::kC128:
      for (int64_t i = 0; i < n; ++i)
        v->c[i] = Ld<std::complex<double>>(src, i);
      return;
    default:
      break;
  }
  if (IsSubByteInt(t)) {
    const int w = BitWidth(t);
    if (IsSignedIntegralType(t)) {
      for (int64_t i = 0; i < n; ++i) v->s[i] = SignExtend(src[i], w);
    } else {
      for (int64_t i = 0; i < n; ++i) v->u[i] = src[i] & WidthMask(w);
    }
    return;
  }
  // Narrow floats, via float (exact).
  float tmp[kValueChunk];
  DecodeFloats(t, src, n, tmp);
  for (int64_t i = 0; i < n; ++i) v->f[i] = tmp[i];
}

template <typename T>
void StoreIntBits(uint8_t* dst, int64_t i, uint64_t bits) {
  St<T>(dst, i, static_cast<T>(bits));
}

// Stores integer `bits` (two's complement) truncated to type t.
void StoreInt(PT t, uint8_t* dst, int64_t i, uint64_t bits) {
  switch (ByteWidth(t)) {
    case 1:
      if (IsSubByteInt(t)) {
        const int w = BitWidth(t);
        dst[i] = IsSignedIntegralType(t)
                     ? static_cast<uint8_t>(SignExtend(bits, w))
                     : static_cast<uint8_t>(bits & WidthMask(w));
      } else {
        dst[i] = static_cast<uint8_t>(bits);
      }
      return;
    case 2:
      StoreIntBits<uint16_t>(dst, i, bits);
      return;
    case 4:
      StoreIntBits<uint32_t>(dst, i, bits);
      return;
    default:
      StoreIntBits<uint64_t>(dst, i, bits);
      return;
  }
}

// Float to integer: truncation toward zero, NaN to 0, saturating at the
// type's bounds.
uint64_t FloatToIntBits(PT t, double x) {
  const int w = BitWidth(t);
  if (std::isnan(x)) return 0;
  if (IsSignedIntegralType(t)) {
    const int64_t hi = w >= 64 ? std::numeric_limits<int64_t>::max()
                               : (int64_t{1} << (w - 1)) - 1;
    const int64_t lo = -hi - 1;
    if (x >= static_cast<double>(hi)) return static_cast<uint64_t>(hi);
    if (x <= static_cast<double>(lo)) return static_cast<uint64_t>(lo);
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  }
  const uint64_t hi = WidthMask(w);
  if (x >= static_cast<double>(hi)) return hi;
  if (x <= 0) return 0;
  return static_cast<uint64_t>(x);
}

template <typename F>
F ToFloat(VKind k, const Values& v, int64_t i) {
  switch (k) {
    case VKind::kS:
      return static_cast<F>(v.s[i]);
    case VKind::kU:
      return static_cast<F>(v.u[i]);
    default:
      return static_cast<F>(v.f[i]);
  }
}

void WriteValues(PT to, VKind k, const Values& v, int64_t n, uint8_t* dst) {
  if (to == PT::kPred) {
    for (int64_t i = 0; i < n; ++i) {
      dst[i] = k == VKind::kS   ? v.s[i] != 0
               : k == VKind::kU ? v.u[i] != 0
                                : v.f[i] != 0;
    }
    return;
  }
  if (IsIntegralType(to)) {
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t bits = k == VKind::kS   ? static_cast<uint64_t>(v.s[i])
                            : k == VKind::kU ? v.u[i]
                                             : FloatToIntBits(to, v.f[i]);
      StoreInt(to, dst, i, bits);
    }
    return;
  }
  switch (to) {
    case PT::kF32:
      for (int64_t i = 0; i < n; ++i)
        St<float>(dst, i, ToFloat<float>(k, v, i));
      return;
    case PT::kF64:
      for (int64_t i = 0; i < n; ++i)
        St<double>(dst, i, ToFloat<double>(k, v, i));
      return;
    case PT::kC64:
      for (int64_t i = 0; i < n; ++i) {
        const std::complex<float> c =
            k == VKind::kC ? std::complex<float>(v.c[i])
                           : std::complex<float>(ToFloat<float>(k, v, i), 0.0f);
        St<std::complex<float>>(dst, i, c);
      }
      return;
    case PT::kC128:
      for (int64_t i = 0; i < n; ++i) {
        const std::complex<double> c =
            k == VKind::kC
                ? v.c[i]
                : std::complex<double>(ToFloat<double>(k, v, i), 0.0);
        St<std::complex<double>>(dst, i, c);
      }
      return;
    default:
      break;
  }
  // Narrow floats. Integers go through float first (as XLA converts them);
  // floating sources round once from their exact value.
  const int bw = ByteWidth(to);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t bits = k == VKind::kF
                              ? EncodeFromDouble(to, v.f[i])
                              : EncodeFromDouble(to, ToFloat<float>(k, v, i));
    if (bw == 2) {
      St<uint16_t>(dst, i, static_cast<uint16_t>(bits));
    } else {
      dst[i] = static_cast<uint8_t>(bits);
    }
  }
}

absl::Status ConvertOp(const OpInfo& o, const uint8_t* const* in,
                       const int64_t* s, uint8_t* out, int64_t n) {
  const PT from = o.in[0], to = o.out;
  const int ibw = ByteWidth(from), obw = ByteWidth(to);
  if (from == to) {
    if (s[0] == 0) {
      for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * obw, in[0], obw);
    } else if (out != in[0]) {
      std::memmove(out, in[0], static_cast<size_t>(n * obw));
    }
    return absl::OkStatus();
  }
  if (IsComplexType(from) && !IsComplexType(to)) {
    return Err(o, "conversion from complex ", PrimitiveTypeName(from),
               " to real ", PrimitiveTypeName(to), " is not defined");
  }
  // Fast paths for the common float conversions.
  if (s[0] == 1 && from == PT::kF32 && to == PT::kBF16) {
    for (int64_t i = 0; i < n; ++i) {
      St<uint16_t>(out, i, FloatToBf16(Ld<float>(in[0], i)));
    }
    return absl::OkStatus();
  }
  if (s[0] == 1 && to == PT::kF32 && IsSmallFloat(from)) {
    for (int64_t start = 0; start < n; start += kChunk) {
      const int64_t len = std::min(kChunk, n - start);
      float tmp[kChunk];
      DecodeFloats(from, in[0] + start * ibw, len, tmp);
      std::memcpy(out + start * 4, tmp, static_cast<size_t>(len) * 4);
    }
    return absl::OkStatus();
  }
  const VKind k = KindOf(from);
  Values values;
  if (s[0] == 0) {
    ReadValues(from, in[0], 1, &values);
    WriteValues(to, k, values, 1, out);
    for (int64_t i = 1; i < n; ++i) std::memcpy(out + i * obw, out, obw);
    return absl::OkStatus();
  }
  for (int64_t start = 0; start < n; start += kValueChunk) {
    const int64_t len = std::min(kValueChunk, n - start);
    ReadValues(from, in[0] + start * ibw, len, &values);
    WriteValues(to, k, values, len, out + start * obw);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// stochastic-convert(operand, random): XLA's definition. The magnitude is
// truncated and rounded up when random < fraction * 2^bits(random); the sign
// is applied afterwards; NaN gives 0 and out-of-range values saturate.

absl::Status StochasticConvertOp(const OpInfo& o, const uint8_t* const* in,
                                 const int64_t* s, uint8_t* out, int64_t n) {
  const PT ft = o.in[0], rt = o.in[1], to = o.out;
  if (!IsFloatingPointType(ft)) {
    return Err(o, "operand must be floating point, not ",
               PrimitiveTypeName(ft));
  }
  if (!IsUnsignedIntegralType(rt) || BitWidth(rt) != BitWidth(ft)) {
    return Err(o, "random bits must be an unsigned integer as wide as ",
               PrimitiveTypeName(ft), ", not ", PrimitiveTypeName(rt));
  }
  if (!IsSignedIntegralType(to)) {
    return Err(o, "result must be a signed integer, not ",
               PrimitiveTypeName(to));
  }
  const int w = BitWidth(to);
  const int rw = BitWidth(rt);
  const int64_t hi = w >= 64 ? std::numeric_limits<int64_t>::max()
                             : (int64_t{1} << (w - 1)) - 1;
  const int64_t lo = -hi - 1;
  Values values;
  Values randoms;
  const int fbw = ByteWidth(ft), rbw = ByteWidth(rt);
  for (int64_t start = 0; start < n; start += kValueChunk) {
    const int64_t len = std::min(kValueChunk, n - start);
    ReadValues(ft, s[0] ? in[0] + start * fbw : in[0], s[0] ? len : 1, &values);
    ReadValues(rt, s[1] ? in[1] + start * rbw : in[1], s[1] ? len : 1,
               &randoms);
    for (int64_t i = 0; i < len; ++i) {
      const double x = values.f[i * s[0]];
      const uint64_t r = randoms.u[i * s[1]];
      const bool neg = std::signbit(x);
      int64_t result;
      if (std::isinf(x)) {
        result = neg ? lo : hi;
      } else if (std::isnan(x)) {
        result = 0;
      } else if (x >= static_cast<double>(hi)) {
        result = hi;
      } else if (x <= static_cast<double>(lo)) {
        result = lo;
      } else {
        const double a = std::fabs(x);
        auto t = static_cast<int64_t>(a);
        const double frac = a - static_cast<double>(t);
        if (frac != 0) {
          const auto fixed = static_cast<uint64_t>(std::ldexp(frac, rw));
          if (r < fixed) {
            // Mirrors XLA: a round-up past the maximum wraps to the minimum.
            if (t == hi) {
              StoreInt(to, out, start + i, static_cast<uint64_t>(lo));
              continue;
            }
            ++t;
          }
        }
        result = neg ? -t : t;
      }
      StoreInt(to, out, start + i, static_cast<uint64_t>(result));
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// bitcast-convert: the bits of each element reinterpreted. With different
// widths, the wider elements are split into (or joined from) a minor-most
// dimension of narrower ones, lowest bits first.

absl::Status BitcastConvertOp(const OpInfo& o, const uint8_t* in, int64_t s,
                              uint8_t* out, int64_t n_out) {
  const PT from = o.in[0], to = o.out;
  const int wi = BitWidth(from), wo = BitWidth(to);
  const int ibw = ByteWidth(from), obw = ByteWidth(to);
  if (wi == 0 || wo == 0) return NotDefined(o, wi == 0 ? from : to);
  if (s == 0 && wi != wo) {
    return Err(o, "a broadcast operand cannot change the element width");
  }
  const bool aligned = wi % 8 == 0 && wo % 8 == 0;
  if (wi != wo && (n_out * wo) % wi != 0) {
    return Err(o, n_out, " elements of ", wo, " bits do not fill whole ", wi,
               "-bit elements");
  }
  if (s == 0) {
    uint64_t bits[2] = {0, 0};
    std::memcpy(bits, in, ibw);
    for (int64_t i = 0; i < n_out; ++i) std::memcpy(out + i * obw, bits, obw);
  } else if (aligned) {
    if (out != in) std::memmove(out, in, static_cast<size_t>(n_out * obw));
  } else {
    // Bit by bit through the little-endian bit stream of the operand.
    auto in_bit = [&](int64_t k) -> uint64_t {
      const int64_t e = k / wi;
      const int64_t b = k % wi;
      if (wi % 8 == 0) return (in[e * ibw + b / 8] >> (b % 8)) & 1u;
      return (in[e] >> b) & 1u;
    };
    for (int64_t j = 0; j < n_out; ++j) {
      if (wo % 8 == 0) {
        for (int b = 0; b < obw; ++b) {
          uint8_t byte = 0;
          for (int q = 0; q < 8; ++q) {
            byte |= static_cast<uint8_t>(in_bit(j * wo + b * 8 + q) << q);
          }
          out[j * obw + b] = byte;
        }
      } else {
        uint64_t v = 0;
        for (int b = 0; b < wo; ++b) v |= in_bit(j * wo + b) << b;
        out[j] = static_cast<uint8_t>(v);
      }
    }
  }
  // Canonical storage for the destination type.
  if (to == PT::kPred || IsSubByteInt(to)) {
    DecodeNarrowInt(to, out, n_out, out);
  } else if (wo < 8) {
    for (int64_t i = 0; i < n_out; ++i) {
      out[i] = static_cast<uint8_t>(out[i] & WidthMask(wo));
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------

absl::Status Run(const OpInfo& o, const uint8_t* const* in, const int64_t* s,
                 uint8_t* out, int64_t n) {
  const int expected = OpcodeArity(o.op);
  if (!IsElementwise(o.op)) return Err(o, "not an elementwise opcode");
  if (expected != o.arity) {
    return Err(o, "expects ", expected, " operands, got ", o.arity);
  }
  if (!IsArrayType(o.out)) {
    return Err(o, "result must be an array, not ", PrimitiveTypeName(o.out));
  }
  for (int k = 0; k < o.arity; ++k) {
    if (!IsArrayType(o.in[k])) {
      return Err(o, "operand ", k, " must be an array, not ",
                 PrimitiveTypeName(o.in[k]));
    }
    if (s[k] != 0 && s[k] != 1) {
      return Err(o, "operand ", k, " has stride ", s[k], " (must be 0 or 1)");
    }
  }
  if (n < 0) return Err(o, "negative element count ", n);
  // All operands broadcast: compute one element and replicate it.
  bool all_scalar = o.arity > 0 && n > 1 && o.op != Opcode::kBitcastConvert;
  for (int k = 0; k < o.arity; ++k) all_scalar = all_scalar && s[k] == 0;
  if (all_scalar) {
    absl::Status st = Run(o, in, s, out, 1);
    if (!st.ok()) return st;
    const int bw = ByteWidth(o.out);
    for (int64_t i = 1; i < n; ++i) std::memcpy(out + i * bw, out, bw);
    return absl::OkStatus();
  }
  switch (o.op) {
    case Opcode::kSelect:
      return SelectOp(o, in, s, out, n);
    case Opcode::kCompare:
      return CompareOp(o, in, s, out, n);
    case Opcode::kIsFinite:
      return IsFiniteOp(o, in, s, out, n);
    case Opcode::kComplex:
      return ComplexOp(o, in, s, out, n);
    case Opcode::kConvert:
      return ConvertOp(o, in, s, out, n);
    case Opcode::kBitcastConvert:
      return BitcastConvertOp(o, in[0], s[0], out, n);
    case Opcode::kStochasticConvert:
      return StochasticConvertOp(o, in, s, out, n);
    case Opcode::kReal:
    case Opcode::kImag:
      if (IsComplexType(o.in[0])) return ComplexToReal(o, in, s, out, n);
      return RealImagOfReal(o, in, s, out, n);
    case Opcode::kAbs:
      if (IsComplexType(o.in[0])) return ComplexToReal(o, in, s, out, n);
      break;
    default:
      break;
  }
  for (int k = 0; k < o.arity; ++k) {
    if (o.in[k] != o.out) {
      return Err(o, "operand ", k, " has type ", PrimitiveTypeName(o.in[k]),
                 ", the result ", PrimitiveTypeName(o.out));
    }
  }
  return SameType(o, in, s, out, n);
}

OpInfo InfoFor(const Instruction& inst) {
  OpInfo o;
  o.op = inst.opcode();
  o.out = inst.shape().element_type();
  o.dir = inst.comparison_direction();
  o.cmp = inst.comparison_type();
  if (o.op == Opcode::kReducePrecision) {
    o.exponent_bits = inst.attrs().exponent_bits;
    o.mantissa_bits = inst.attrs().mantissa_bits;
  }
  o.name = inst.name();
  return o;
}

}  // namespace

bool IsElementwiseOpcode(Opcode op) { return IsElementwise(op); }

absl::StatusOr<Literal> EvalElementwise(const Instruction& inst,
                                        Operands operands) {
  OpInfo o = InfoFor(inst);
  const Shape& shape = inst.shape();
  if (!shape.IsArray()) {
    return Err(o, "result shape ", shape.ToString(false), " is not an array");
  }
  if (operands.size() > 3) {
    return Err(o, "expects ", OpcodeArity(o.op), " operands, got ",
               static_cast<int64_t>(operands.size()));
  }
  o.arity = static_cast<int>(operands.size());
  const uint8_t* in[3] = {nullptr, nullptr, nullptr};
  int64_t strides[3] = {1, 1, 1};
  const bool scalars_broadcast =
      o.op == Opcode::kSelect || o.op == Opcode::kClamp;
  for (int k = 0; k < o.arity; ++k) {
    const Literal* l = operands[k];
    if (l == nullptr || !l->shape().IsArray()) {
      return Err(o, "operand ", k, " is not an array");
    }
    if (l->is_unknown()) return Err(o, "operand ", k, " has unknown contents");
    o.in[k] = l->shape().element_type();
    in[k] = l->data();
    const DimVector& d = l->shape().dimensions();
    if (o.op == Opcode::kBitcastConvert) {
      const int wi = BitWidth(o.in[k]), wo = BitWidth(o.out);
      DimVector expect = shape.dimensions();
      if (wi > wo && wo > 0 && wi % wo == 0) {
        expect = d;
        expect.push_back(wi / wo);
        if (shape.dimensions() != expect) {
          return Err(o, "result ", shape.ToString(false), " must be ",
                     PrimitiveTypeName(o.out), "[operand dims, ", wi / wo,
                     "] for operand ", l->shape().ToString(false));
        }
        continue;
      }
      if (wi < wo && wi > 0 && wo % wi == 0) {
        expect.push_back(wo / wi);
        if (d != expect) {
          return Err(o, "operand ", l->shape().ToString(false), " must be ",
                     PrimitiveTypeName(o.in[k]), "[result dims, ", wo / wi,
                     "] for result ", shape.ToString(false));
        }
        continue;
      }
      if (wi != wo) {
        return Err(o, "cannot reinterpret ", wi, "-bit elements as ", wo,
                   "-bit elements");
      }
    }
    if (d == shape.dimensions()) continue;
    if (scalars_broadcast && d.empty()) {
      strides[k] = 0;
      continue;
    }
    return Err(o, "operand ", k, " shape ", l->shape().ToString(false),
               " does not match the result shape ", shape.ToString(false));
  }
  Literal result(shape);
  absl::Status st =
      Run(o, in, strides, result.mutable_data(), result.element_count());
  if (!st.ok()) return st;
  return result;
}

absl::Status ElementwiseKernel(const Instruction& inst,
                               absl::Span<const uint8_t* const> in,
                               absl::Span<const int64_t> stride, uint8_t* out,
                               int64_t n) {
  OpInfo o = InfoFor(inst);
  if (in.size() != stride.size() || in.size() > 3 ||
      static_cast<int64_t>(in.size()) != inst.operand_count()) {
    return Err(o, "got ", static_cast<int64_t>(in.size()),
               " operand buffers and ", static_cast<int64_t>(stride.size()),
               " strides for ", inst.operand_count(), " operands");
  }
  o.arity = static_cast<int>(in.size());
  for (int k = 0; k < o.arity; ++k) {
    o.in[k] = inst.operand(k)->shape().element_type();
  }
  return Run(o, in.data(), stride.data(), out, n);
}

absl::Status BinaryOpKernel(Opcode op, PrimitiveType type, const uint8_t* a,
                            const uint8_t* b, uint8_t* out, int64_t n) {
  OpInfo o;
  o.op = op;
  o.out = type;
  o.in[0] = o.in[1] = type;
  o.arity = 2;
  o.name = "binary op";
  if (!IsBinaryElementwise(op) || op == Opcode::kCompare ||
      op == Opcode::kComplex) {
    return Err(o, "not a binary op on one element type");
  }
  const uint8_t* in[2] = {a, b};
  const int64_t s[2] = {1, 1};
  return Run(o, in, s, out, n);
}

}  // namespace hlogym
