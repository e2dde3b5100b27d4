#include "hlogym/eval/inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

constexpr double kTwoPi = 6.283185307179586;  // the double nearest 2 pi

// Element e of a real float array uses counters 2e, 2e+1; of a complex
// array 4e..4e+3; of an integer or pred array e.
template <typename T>
void FillNative(Literal* lit, uint64_t seed, uint64_t leaf) {
  T* out = reinterpret_cast<T*>(lit->mutable_data());
  const int64_t n = lit->element_count();
  for (int64_t e = 0; e < n; ++e) {
    out[e] = static_cast<T>(InputNormal(seed, leaf, 2 * uint64_t(e)));
  }
}

template <typename T>
void FillComplex(Literal* lit, uint64_t seed, uint64_t leaf) {
  T* out = reinterpret_cast<T*>(lit->mutable_data());
  const int64_t n = lit->element_count();
  for (int64_t e = 0; e < n; ++e) {
    out[2 * e] = static_cast<T>(InputNormal(seed, leaf, 4 * uint64_t(e)));
    out[2 * e + 1] =
        static_cast<T>(InputNormal(seed, leaf, 4 * uint64_t(e) + 2));
  }
}

template <typename T>
void FillInt(Literal* lit, uint64_t seed, uint64_t leaf, int64_t lo,
             int64_t hi) {
  T* out = reinterpret_cast<T*>(lit->mutable_data());
  const int64_t n = lit->element_count();
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  for (int64_t e = 0; e < n; ++e) {
    out[e] = static_cast<T>(
        lo + static_cast<int64_t>(InputHash(seed, leaf, uint64_t(e)) % span));
  }
}

// Small float formats: round to the type, clamping overflow to the largest
// finite magnitude (found once by scanning the encodings).
void FillSmallFloat(Literal* lit, uint64_t seed, uint64_t leaf) {
  const PrimitiveType t = lit->shape().element_type();
  const FloatFormat f = *SmallFloatFormat(t);
  double max_finite = 0;
  if (f.total_bits() <= 8) {
    for (uint32_t b = 0; b < (1u << f.total_bits()); ++b) {
      double v = DecodeSmallFloat(f, b);
      if (std::isfinite(v) && v > max_finite) max_finite = v;
    }
  }
  const int64_t n = lit->element_count();
  for (int64_t e = 0; e < n; ++e) {
    double z = InputNormal(seed, leaf, 2 * uint64_t(e));
    if (!f.has_sign) z = std::fabs(z);
    uint64_t bits = 0;
    if (!FloatToBits(t, z, &bits) && max_finite > 0) {
      FloatToBits(t, std::copysign(max_finite, z), &bits);
    }
    lit->SetBits(e, bits);
  }
}

absl::Status Fill(Literal* lit, uint64_t seed, uint64_t leaf) {
  const PrimitiveType t = lit->shape().element_type();
  switch (t) {
    case PrimitiveType::kF32:
      FillNative<float>(lit, seed, leaf);
      return absl::OkStatus();
    case PrimitiveType::kF64:
      FillNative<double>(lit, seed, leaf);
      return absl::OkStatus();
    case PrimitiveType::kC64:
      FillComplex<float>(lit, seed, leaf);
      return absl::OkStatus();
    case PrimitiveType::kC128:
      FillComplex<double>(lit, seed, leaf);
      return absl::OkStatus();
    case PrimitiveType::kPred: {
      uint8_t* out = lit->mutable_data();
      const int64_t n = lit->element_count();
      for (int64_t e = 0; e < n; ++e) {
        out[e] = static_cast<uint8_t>(InputHash(seed, leaf, uint64_t(e)) >> 63);
      }
      return absl::OkStatus();
    }
    default:
      break;
  }
  if (IsFloatingPointType(t)) {
    FillSmallFloat(lit, seed, leaf);
    return absl::OkStatus();
  }
  if (IsIntegralType(t)) {
    const int bits = BitWidth(t);
    // [-4, 4] and [0, 8] fit every type of at least 4 bits; s2/s1 and
    // u2/u1 use their whole range.
    int64_t lo, hi;
    if (IsSignedIntegralType(t)) {
      lo = bits >= 4 ? -4 : -(int64_t{1} << (bits - 1));
      hi = bits >= 4 ? 4 : (int64_t{1} << (bits - 1)) - 1;
    } else {
      lo = 0;
      hi = bits >= 4 ? 8 : (int64_t{1} << bits) - 1;
    }
    // Sub-byte signed values are stored sign-extended in their byte, so
    // the int8/uint8 loops give the literal encoding.
    switch (ByteWidth(t)) {
      case 1:
        if (IsSignedIntegralType(t)) {
          FillInt<int8_t>(lit, seed, leaf, lo, hi);
        } else {
          FillInt<uint8_t>(lit, seed, leaf, lo, hi);
        }
        return absl::OkStatus();
      case 2:
        FillInt<uint16_t>(lit, seed, leaf, lo, hi);
        return absl::OkStatus();
      case 4:
        FillInt<uint32_t>(lit, seed, leaf, lo, hi);
        return absl::OkStatus();
      case 8:
        FillInt<uint64_t>(lit, seed, leaf, lo, hi);
        return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(
      StrCat("cannot generate values of type ", PrimitiveTypeName(t)));
}

absl::StatusOr<Literal> Generate(const Shape& s, uint64_t seed, uint64_t* leaf,
                                 int64_t param) {
  if (s.IsToken()) return Literal(s);
  if (s.IsTuple()) {
    Literal t(s);  // zero-filled elements, overwritten below
    for (size_t i = 0; i < s.tuple_shapes().size(); ++i) {
      auto e = Generate(s.tuple_shapes()[i], seed, leaf, param);
      if (!e.ok()) return e.status();
      (*t.mutable_tuple_elements())[i] = std::move(*e);
    }
    return t;
  }
  if (!s.IsArray()) {
    return absl::InvalidArgumentError(
        StrCat("parameter ", param, ": cannot generate a value of shape ",
               s.ToString(false)));
  }
  if (s.is_unbounded_dynamic()) {
    return absl::InvalidArgumentError(
        StrCat("parameter ", param, ": cannot generate a value of shape ",
               s.ToString(false), " (unbounded dynamic dimension)"));
  }
  auto lit = GenerateArray(s, seed, (*leaf)++);
  if (!lit.ok()) {
    return absl::InvalidArgumentError(
        StrCat("parameter ", param, ": ", lit.status().message()));
  }
  return lit;
}

}  // namespace

uint64_t SplitMix64(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t InputHash(uint64_t seed, uint64_t leaf, uint64_t counter) {
  return SplitMix64(SplitMix64(SplitMix64(seed) ^ leaf) ^ counter);
}

double InputUniform(uint64_t seed, uint64_t leaf, uint64_t counter) {
  // 53 random bits, shifted so that 0 is excluded and 1 included: log(u)
  // stays finite.
  return static_cast<double>((InputHash(seed, leaf, counter) >> 11) + 1) *
         0x1p-53;
}

double InputNormal(uint64_t seed, uint64_t leaf, uint64_t counter) {
  const double u1 = InputUniform(seed, leaf, counter);
  const double u2 = InputUniform(seed, leaf, counter + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

absl::StatusOr<Literal> GenerateArray(const Shape& shape, uint64_t seed,
                                      uint64_t leaf) {
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        StrCat("cannot generate an array of shape ", shape.ToString(false)));
  }
  Literal lit(shape);
  if (absl::Status s = Fill(&lit, seed, leaf); !s.ok()) return s;
  return lit;
}

absl::StatusOr<std::vector<Literal>> GenerateInputs(
    absl::Span<const Shape> parameter_shapes, uint64_t seed) {
  std::vector<Literal> out;
  out.reserve(parameter_shapes.size());
  uint64_t leaf = 0;
  for (size_t p = 0; p < parameter_shapes.size(); ++p) {
    auto lit =
        Generate(parameter_shapes[p], seed, &leaf, static_cast<int64_t>(p));
    if (!lit.ok()) return lit.status();
    out.push_back(std::move(*lit));
  }
  return out;
}

std::vector<Shape> ParameterShapes(const Computation& computation) {
  std::vector<Shape> shapes;
  shapes.reserve(computation.num_parameters());
  for (const Instruction* p : computation.parameter_instructions()) {
    shapes.push_back(p ? p->shape() : Shape());
  }
  return shapes;
}

}  // namespace hlogym
