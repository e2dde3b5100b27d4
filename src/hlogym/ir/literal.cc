#include "hlogym/ir/literal.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

#include "hlogym/ir/str_util.h"
#include "xxhash.h"

namespace hlogym {

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) elements_.emplace_back(s);
  } else if (shape.IsArray()) {
    data_.assign(static_cast<size_t>(shape.ElementsIn()) *
                     ByteWidth(shape.element_type()),
                 0);
  }
}

Literal Literal::Unknown(const Shape& shape) {
  Literal l;
  l.shape_ = shape;
  l.unknown_ = true;
  return l;
}

uint64_t Literal::GetBits(int64_t i) const {
  int w = ByteWidth(shape_.element_type());
  if (IsComplexType(shape_.element_type())) w /= 2;
  const uint8_t* p =
      data_.data() + static_cast<size_t>(i) * ByteWidth(shape_.element_type());
  uint64_t v = 0;
  std::memcpy(&v, p, w);
  return v;
}

void Literal::SetBits(int64_t i, uint64_t bits) {
  int w = ByteWidth(shape_.element_type());
  if (IsComplexType(shape_.element_type())) w /= 2;
  uint8_t* p =
      data_.data() + static_cast<size_t>(i) * ByteWidth(shape_.element_type());
  std::memcpy(p, &bits, w);
}

double BitsToFloat(PrimitiveType type, uint64_t bits) {
  switch (type) {
    case PrimitiveType::kF32:
      return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case PrimitiveType::kF64:
      return std::bit_cast<double>(bits);
    default: {
      auto f = SmallFloatFormat(type);
      if (!f) return 0;
      return DecodeSmallFloat(*f, static_cast<uint32_t>(bits));
    }
  }
}

bool FloatToBits(PrimitiveType type, double v, uint64_t* bits) {
  switch (type) {
    case PrimitiveType::kF32: {
      float f = static_cast<float>(v);
      *bits = std::bit_cast<uint32_t>(f);
      return !(std::isinf(f) && std::isfinite(v));
    }
    case PrimitiveType::kF64:
      *bits = std::bit_cast<uint64_t>(v);
      return true;
    default: {
      auto f = SmallFloatFormat(type);
      if (!f) return false;
      uint32_t b = 0;
      bool ok = EncodeSmallFloat(*f, v, &b);
      *bits = b;
      return ok;
    }
  }
}

double Literal::GetAsDouble(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (IsFloatingPointType(t)) return BitsToFloat(t, GetBits(i));
  if (IsComplexType(t)) return GetComplex(i).real();
  if (IsSignedIntegralType(t)) return static_cast<double>(GetAsInt64(i));
  return static_cast<double>(GetAsUint64(i));
}

int64_t Literal::GetAsInt64(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (IsFloatingPointType(t) || IsComplexType(t)) {
    return static_cast<int64_t>(GetAsDouble(i));
  }
  uint64_t b = GetBits(i);
  if (t == PrimitiveType::kPred) return b != 0;
  int bits = BitWidth(t);
  if (IsSignedIntegralType(t) && bits < 64) {
    uint64_t sign = uint64_t{1} << (bits - 1);
    b &= (sign << 1) - 1;
    return static_cast<int64_t>((b ^ sign) - sign);
  }
  return static_cast<int64_t>(b);
}

uint64_t Literal::GetAsUint64(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (IsUnsignedIntegralType(t)) {
    int bits = BitWidth(t);
    uint64_t b = GetBits(i);
    return bits < 64 ? (b & ((uint64_t{1} << bits) - 1)) : b;
  }
  return static_cast<uint64_t>(GetAsInt64(i));
}

std::complex<double> Literal::GetComplex(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (!IsComplexType(t)) return {GetAsDouble(i), 0.0};
  const uint8_t* p = data_.data() + static_cast<size_t>(i) * ByteWidth(t);
  if (t == PrimitiveType::kC64) {
    float re, im;
    std::memcpy(&re, p, 4);
    std::memcpy(&im, p + 4, 4);
    return {re, im};
  }
  double re, im;
  std::memcpy(&re, p, 8);
  std::memcpy(&im, p + 8, 8);
  return {re, im};
}

void Literal::SetComplex(int64_t i, std::complex<double> v) {
  PrimitiveType t = shape_.element_type();
  uint8_t* p = data_.data() + static_cast<size_t>(i) * ByteWidth(t);
  if (t == PrimitiveType::kC64) {
    float re = static_cast<float>(v.real()), im = static_cast<float>(v.imag());
    std::memcpy(p, &re, 4);
    std::memcpy(p + 4, &im, 4);
  } else {
    double re = v.real(), im = v.imag();
    std::memcpy(p, &re, 8);
    std::memcpy(p + 8, &im, 8);
  }
}

bool Literal::SetFromDouble(int64_t i, double v) {
  PrimitiveType t = shape_.element_type();
  if (IsComplexType(t)) {
    SetComplex(i, {v, 0});
    return true;
  }
  if (IsFloatingPointType(t)) {
    uint64_t bits = 0;
    bool ok = FloatToBits(t, v, &bits);
    SetBits(i, bits);
    return ok;
  }
  SetFromInt64(i, static_cast<int64_t>(v));
  return true;
}

void Literal::SetFromInt64(int64_t i, int64_t v) {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::kPred) {
    SetBits(i, v != 0 ? 1 : 0);
    return;
  }
  if (IsFloatingPointType(t) || IsComplexType(t)) {
    SetFromDouble(i, static_cast<double>(v));
    return;
  }
  int bits = BitWidth(t);
  uint64_t u = static_cast<uint64_t>(v);
  if (bits < 64) u &= (uint64_t{1} << bits) - 1;
  // Sub-byte signed values are stored sign-extended within their byte.
  if (IsSignedIntegralType(t) && bits < 8 && (u >> (bits - 1)) & 1u) {
    u |= ~((uint64_t{1} << bits) - 1);
    u &= 0xFF;
  }
  SetBits(i, u);
}

bool Literal::operator==(const Literal& o) const {
  if (unknown_ != o.unknown_) return false;
  if (!shape_.EqualIgnoringLayout(o.shape_)) return false;
  return data_ == o.data_ && elements_ == o.elements_;
}

uint64_t Literal::Hash() const {
  uint64_t h =
      XXH3_64bits_withSeed(data_.data(), data_.size(),
                           static_cast<uint64_t>(shape_.element_type()) + 1);
  if (unknown_) h ^= 0x9e3779b97f4a7c15ull;
  for (int64_t d : shape_.dimensions()) {
    h = XXH3_64bits_withSeed(&d, sizeof(d), h);
  }
  for (const Literal& e : elements_) {
    uint64_t eh = e.Hash();
    h = XXH3_64bits_withSeed(&eh, sizeof(eh), h);
  }
  return h;
}

namespace {

int Digits10(int mantissa_bits) {
  return std::max(1, static_cast<int>(std::floor(mantissa_bits * 0.30103)));
}
int MaxDigits10(int mantissa_bits) {
  return static_cast<int>(std::ceil(1 + (mantissa_bits + 1) * 0.30103));
}

void AppendG(double v, int precision, std::string* out) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general,
                         precision);
  out->append(buf, r.ptr);
}

}  // namespace

void AppendFloat(PrimitiveType type, uint64_t bits, std::string* out) {
  double v = BitsToFloat(type, bits);
  if (std::isnan(v)) {
    int mb;
    uint64_t mant, quiet;
    bool neg;
    if (type == PrimitiveType::kF32) {
      mb = 23;
      neg = (bits >> 31) & 1;
    } else if (type == PrimitiveType::kF64) {
      mb = 52;
      neg = (bits >> 63) & 1;
    } else {
      auto f = *SmallFloatFormat(type);
      if (!f.has_inf) {  // fn / fnuz: one NaN pattern (per sign)
        bool s = f.has_sign && !f.nan_negative_zero &&
                 ((bits >> (f.exponent_bits + f.mantissa_bits)) & 1);
        out->append(s ? "-nan" : "nan");
        return;
      }
      mb = f.mantissa_bits;
      neg = (bits >> (f.exponent_bits + f.mantissa_bits)) & 1;
    }
    mant = bits & ((uint64_t{1} << mb) - 1);
    quiet = uint64_t{1} << (mb - 1);
    out->append(neg ? "-nan" : "nan");
    if (mant != quiet) {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof(buf), mant, 16);
      out->append("(0x");
      for (char* c = buf; c < r.ptr; ++c) {
        out->push_back(static_cast<char>(std::toupper(*c)));
      }
      out->push_back(')');
    }
    return;
  }
  if (std::isinf(v)) {
    out->append(v < 0 ? "-inf" : "inf");
    return;
  }
  int mb = type == PrimitiveType::kF32 ? 23
           : type == PrimitiveType::kF64
               ? 52
               : SmallFloatFormat(type)->mantissa_bits;
  const size_t start = out->size();
  // XLA prints f32/f64 with digits10 digits, or max_digits10 when that does
  // not round-trip; half and smaller types with 4 significant digits.
  const bool small = mb < 23;
  const int first = small ? 4 : Digits10(mb);
  const int second = small ? 5 : MaxDigits10(mb);
  for (int p : {first, second}) {
    out->resize(start);
    AppendG(v, p, out);
    double back = 0;
    std::from_chars(out->data() + start, out->data() + out->size(), back);
    uint64_t b2 = 0;
    FloatToBits(type, back, &b2);
    if (b2 == bits) return;
  }
  // Formats whose digit counts above are not enough (ties in tiny types).
  for (int p = 1; p <= 17; ++p) {
    out->resize(start);
    AppendG(v, p, out);
    double back = 0;
    std::from_chars(out->data() + start, out->data() + out->size(), back);
    uint64_t b2 = 0;
    FloatToBits(type, back, &b2);
    if (b2 == bits) return;
  }
}

void Literal::AppendElement(int64_t i, std::string* out) const {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::kPred) {
    out->append(GetBits(i) ? "true" : "false");
  } else if (IsSignedIntegralType(t)) {
    StrAppend(out, GetAsInt64(i));
  } else if (IsUnsignedIntegralType(t)) {
    StrAppend(out, GetAsUint64(i));
  } else if (IsFloatingPointType(t)) {
    AppendFloat(t, GetBits(i), out);
  } else if (IsComplexType(t)) {
    PrimitiveType ct = ComplexComponentType(t);
    const uint8_t* p = data_.data() + static_cast<size_t>(i) * ByteWidth(t);
    uint64_t re = 0, im = 0;
    int w = ByteWidth(ct);
    std::memcpy(&re, p, w);
    std::memcpy(&im, p + w, w);
    out->push_back('(');
    AppendFloat(ct, re, out);
    out->append(", ");
    AppendFloat(ct, im, out);
    out->push_back(')');
  }
}

namespace {

// Arrays with a zero dimension: "{}", "{ {}, {} }".
void AppendEmpty(const Shape& s, int64_t d, std::string* out) {
  if (d == s.rank()) return;
  if (s.dimensions(d) == 0) {
    out->append("{}");
    return;
  }
  out->append("{ ");
  for (int64_t i = 0; i < s.dimensions(d); ++i) {
    if (i) out->append(", ");
    AppendEmpty(s, d + 1, out);
  }
  out->append(" }");
}

// Row-major, one brace level per dimension. Like XLA, ranks of four and
// more annotate each sub-array with its index: { { /*i0=0*/ {1, 2} } }.
void AppendLevel(const Literal& lit, int64_t d, int64_t index_in_parent,
                 int64_t* next_element, std::string* out) {
  const Shape& s = lit.shape();
  const int64_t rank = s.rank();
  out->push_back('{');
  if (rank >= 4 && d > 0 && d <= rank - 2) {
    StrAppend(out, " /*i", d - 1, "=", index_in_parent, "*/");
  }
  if (d == rank - 1) {
    for (int64_t i = 0; i < s.dimensions(d); ++i) {
      if (i) out->append(", ");
      lit.AppendElement((*next_element)++, out);
    }
    out->push_back('}');
    return;
  }
  out->push_back(' ');
  for (int64_t i = 0; i < s.dimensions(d); ++i) {
    if (i) out->append(", ");
    AppendLevel(lit, d + 1, i, next_element, out);
  }
  out->append(" }");
}

void AppendArray(const Literal& lit, std::string* out) {
  const Shape& s = lit.shape();
  if (s.rank() == 0) {
    lit.AppendElement(0, out);
    return;
  }
  if (s.ElementsIn() == 0) {
    AppendEmpty(s, 0, out);
    return;
  }
  int64_t next = 0;
  AppendLevel(lit, 0, 0, &next, out);
}

}  // namespace

void Literal::AppendTo(std::string* out) const {
  if (shape_.IsTuple()) {
    out->push_back('(');
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) out->append(", ");
      elements_[i].AppendTo(out);
    }
    out->push_back(')');
    return;
  }
  if (unknown_) {
    out->append("{...}");
    return;
  }
  if (!shape_.IsArray()) return;
  AppendArray(*this, out);
}

std::string Literal::ToString() const {
  std::string s;
  AppendTo(&s);
  return s;
}

}  // namespace hlogym
