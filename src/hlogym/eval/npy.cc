#include "hlogym/eval/npy.h"

#include <zip.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "hlogym/eval/index_util.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr bool kHostLittle = std::endian::native == std::endian::little;

absl::Status Error(std::string_view name, const std::string& message) {
  return absl::InvalidArgumentError(StrCat(name, ": ", message));
}

// A NumPy dtype we support: kind 'b' (bool), 'i', 'u', 'f' or 'c'.
struct Dtype {
  char kind = 0;
  int size = 0;  // bytes per element (complex: both parts)
  bool big_endian = false;

  // The component size that byte order applies to.
  int swap_unit() const { return kind == 'c' ? size / 2 : size; }
  std::string Name() const {
    switch (kind) {
      case 'b':
        return "bool";
      case 'i':
        return StrCat("int", size * 8);
      case 'u':
        return StrCat("uint", size * 8);
      case 'f':
        return StrCat("float", size * 8);
      case 'c':
        return StrCat("complex", size * 8);
    }
    return "?";
  }
};

// The dtype NumPy uses for a type (see npy.h for the types NumPy lacks).
Dtype NaturalDtype(PrimitiveType t) {
  Dtype d;
  d.big_endian = !kHostLittle;
  if (t == PrimitiveType::kPred) {
    d.kind = 'b';
    d.size = 1;
  } else if (IsSignedIntegralType(t)) {
    d.kind = 'i';
    d.size = std::max(1, BitWidth(t) / 8);
  } else if (IsUnsignedIntegralType(t)) {
    d.kind = 'u';
    d.size = std::max(1, BitWidth(t) / 8);
  } else if (t == PrimitiveType::kF16 || t == PrimitiveType::kF64) {
    d.kind = 'f';
    d.size = ByteWidth(t);
  } else if (IsFloatingPointType(t)) {
    d.kind = 'f';
    d.size = 4;
  } else if (IsComplexType(t)) {
    d.kind = 'c';
    d.size = ByteWidth(t);
  }
  return d;
}

bool IsNarrowFloat(PrimitiveType t) {
  return IsFloatingPointType(t) && t != PrimitiveType::kF16 &&
         t != PrimitiveType::kF32 && t != PrimitiveType::kF64;
}

// Whether a file of dtype `d` can be read as elements of type `t`.
bool Accepts(PrimitiveType t, const Dtype& d) {
  if (IsNarrowFloat(t)) {
    return d.kind == 'f' && (d.size == 2 || d.size == 4 || d.size == 8);
  }
  Dtype n = NaturalDtype(t);
  return n.kind == d.kind && n.size == d.size;
}

std::string PyShape(const DimVector& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    StrAppend(&s, dims[i]);
  }
  if (dims.size() == 1) s += ",";
  s += ")";
  return s;
}

// ---- Header parsing: a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  struct Value {
    enum Kind { kString, kBool, kTuple, kOther } kind = kOther;
    std::string str;
    bool b = false;
    DimVector ints;
  };

  bool ParseDict(std::vector<std::pair<std::string, Value>>* out,
                 std::string* error) {
    SkipWs();
    if (!Eat('{')) return Fail("expected '{'", error);
    while (true) {
      SkipWs();
      if (Eat('}')) return true;
      std::string key;
      if (!ParseString(&key)) return Fail("expected a quoted key", error);
      SkipWs();
      if (!Eat(':')) return Fail("expected ':'", error);
      SkipWs();
      Value v;
      if (!ParseValue(&v, error)) return false;
      out->emplace_back(std::move(key), std::move(v));
      SkipWs();
      if (Eat(',')) continue;
      SkipWs();
      if (Eat('}')) return true;
      return Fail("expected ',' or '}'", error);
    }
  }

 private:
  bool Fail(const char* what, std::string* error) {
    *error = StrCat(what, " at header offset ", static_cast<int64_t>(pos_));
    return false;
  }
  void SkipWs() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool EatWord(std::string_view w) {
    if (text_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  bool ParseString(std::string* out) {
    if (pos_ >= text_.size()) return false;
    char q = text_[pos_];
    if (q != '\'' && q != '"') return false;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != q) {
      out->push_back(text_[pos_++]);
    }
    return Eat(q);
  }
  bool ParseInt(int64_t* out) {
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (v > (int64_t{1} << 58)) return false;
      v = v * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) return false;
    Eat('L');  // written by Python 2
    *out = v;
    return true;
  }
  bool ParseValue(Value* v, std::string* error) {
    if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) {
      v->kind = Value::kString;
      if (!ParseString(&v->str)) return Fail("unterminated string", error);
      return true;
    }
    if (EatWord("True")) {
      v->kind = Value::kBool;
      v->b = true;
      return true;
    }
    if (EatWord("False")) {
      v->kind = Value::kBool;
      v->b = false;
      return true;
    }
    if (Eat('(')) {
      v->kind = Value::kTuple;
      while (true) {
        SkipWs();
        if (Eat(')')) return true;
        int64_t n = 0;
        if (!ParseInt(&n)) return Fail("expected a dimension size", error);
        v->ints.push_back(n);
        SkipWs();
        if (Eat(',')) continue;
        SkipWs();
        if (Eat(')')) return true;
        return Fail("expected ',' or ')' in the shape", error);
      }
    }
    if (pos_ < text_.size() && text_[pos_] == '[') {
      return Fail("structured dtypes are not supported", error);
    }
    return Fail("unsupported header value", error);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

absl::StatusOr<Dtype> ParseDescr(const std::string& descr,
                                 std::string_view name) {
  Dtype d;
  size_t i = 0;
  d.big_endian = !kHostLittle;
  if (!descr.empty() && (descr[0] == '<' || descr[0] == '>' ||
                         descr[0] == '|' || descr[0] == '=')) {
    if (descr[0] == '<') d.big_endian = false;
    if (descr[0] == '>') d.big_endian = true;
    i = 1;
  }
  std::string_view rest = std::string_view(descr).substr(i);
  if (rest == "?") {
    d.kind = 'b';
    d.size = 1;
    return d;
  }
  if (rest.size() >= 2) {
    d.kind = rest[0];
    int size = 0;
    bool digits = true;
    for (char c : rest.substr(1)) {
      if (c < '0' || c > '9' || size > 1000) {
        digits = false;
        break;
      }
      size = size * 10 + (c - '0');
    }
    d.size = size;
    bool ok = digits;
    switch (d.kind) {
      case 'b':
        ok = ok && size == 1;
        break;
      case 'i':
      case 'u':
        ok = ok && (size == 1 || size == 2 || size == 4 || size == 8);
        break;
      case 'f':
        ok = ok && (size == 2 || size == 4 || size == 8);
        break;
      case 'c':
        ok = ok && (size == 8 || size == 16);
        break;
      default:
        ok = false;
    }
    if (ok) return d;
  }
  return Error(name, StrCat("unsupported dtype '", descr,
                            "' (supported: bool, int8..int64, uint8..uint64, "
                            "float16/32/64, complex64/128)"));
}

// A decoded file: dtype, dimensions, and the elements in row-major order
// and host byte order.
struct RawArray {
  Dtype dtype;
  DimVector dims;
  std::string data;
};

void ByteSwap(char* data, int64_t units, int unit) {
  if (unit == 1) return;
  for (int64_t i = 0; i < units; ++i) {
    char* p = data + i * unit;
    for (int a = 0, b = unit - 1; a < b; ++a, --b) std::swap(p[a], p[b]);
  }
}

// Column-major `in` to row-major `out`, elements of `size` bytes.
void FortranToC(const char* in, char* out, const DimVector& dims, int size) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  DimVector fstride(rank, 1);
  for (int64_t d = 1; d < rank; ++d) fstride[d] = fstride[d - 1] * dims[d - 1];
  DimVector index(rank, 0);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) off += index[d] * fstride[d];
    std::memcpy(out + i * size, in + off * size, size);
    NextIndex(dims, &index);
  }
}

absl::StatusOr<RawArray> DecodeRaw(std::string_view bytes,
                                   std::string_view name) {
  if (bytes.size() < kMagicLen + 4 ||
      bytes.substr(0, kMagicLen) != std::string_view(kMagic, kMagicLen)) {
    return Error(name, "not a NumPy .npy file (bad magic)");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  const int minor = static_cast<uint8_t>(bytes[7]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) |
                 (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Error(name, "truncated .npy header");
    for (int k = 3; k >= 0; --k) {
      header_len = (header_len << 8) | static_cast<uint8_t>(bytes[8 + k]);
    }
    header_start = 12;
  } else {
    return Error(name, StrCat("unsupported .npy format version ", major, ".",
                              minor, " (supported: 1.0, 2.0, 3.0)"));
  }
  if (minor != 0) {
    return Error(name, StrCat("unsupported .npy format version ", major, ".",
                              minor, " (supported: 1.0, 2.0, 3.0)"));
  }
  if (bytes.size() - header_start < header_len) {
    return Error(name, "truncated .npy header");
  }
  std::string_view header = bytes.substr(header_start, header_len);
  std::vector<std::pair<std::string, HeaderParser::Value>> dict;
  std::string perr;
  if (!HeaderParser(header).ParseDict(&dict, &perr)) {
    return Error(name, StrCat("malformed .npy header: ", perr));
  }
  const HeaderParser::Value *descr = nullptr, *fortran = nullptr,
                            *shape = nullptr;
  for (const auto& [k, v] : dict) {
    if (k == "descr") descr = &v;
    if (k == "fortran_order") fortran = &v;
    if (k == "shape") shape = &v;
  }
  if (!descr || descr->kind != HeaderParser::Value::kString) {
    return Error(name, "malformed .npy header: no string 'descr'");
  }
  if (!fortran || fortran->kind != HeaderParser::Value::kBool) {
    return Error(name, "malformed .npy header: no boolean 'fortran_order'");
  }
  if (!shape || shape->kind != HeaderParser::Value::kTuple) {
    return Error(name, "malformed .npy header: no tuple 'shape'");
  }
  RawArray raw;
  auto dtype = ParseDescr(descr->str, name);
  if (!dtype.ok()) return dtype.status();
  raw.dtype = *dtype;
  raw.dims = shape->ints;
  // Element counts beyond 2^62 bytes cannot be real files; reject before
  // multiplying further.
  int64_t n = 1;
  for (int64_t d : raw.dims) {
    if (d != 0 && n > (int64_t{1} << 56) / d) {
      return Error(name, StrCat("shape ", PyShape(raw.dims), " is too large"));
    }
    n *= d;
  }
  const size_t need = static_cast<size_t>(n) * raw.dtype.size;
  std::string_view data = bytes.substr(header_start + header_len);
  if (data.size() < need) {
    return Error(name,
                 StrCat("data holds ", static_cast<int64_t>(data.size()),
                        " bytes, ", raw.dtype.Name(), " ", PyShape(raw.dims),
                        " needs ", static_cast<int64_t>(need)));
  }
  data = data.substr(0, need);
  if (fortran->b && raw.dims.size() > 1) {
    raw.data.resize(need);
    FortranToC(data.data(), raw.data.data(), raw.dims, raw.dtype.size);
  } else {
    raw.data.assign(data.data(), data.size());
  }
  if (raw.dtype.big_endian != !kHostLittle) {
    const int unit = raw.dtype.swap_unit();
    ByteSwap(raw.data.data(), static_cast<int64_t>(need / unit), unit);
    raw.dtype.big_endian = !kHostLittle;
  }
  return raw;
}

double ReadFloat(const char* p, int size) {
  if (size == 2) {
    uint16_t b;
    std::memcpy(&b, p, 2);
    return BitsToFloat(PrimitiveType::kF16, b);
  }
  if (size == 4) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

// Fills `out` (an array literal of the expected shape) from `raw`, whose
// dtype Accepts() the element type and whose dims match.
absl::Status ConvertInto(const RawArray& raw, Literal* out,
                         std::string_view name) {
  const PrimitiveType t = out->shape().element_type();
  const int64_t n = out->element_count();
  uint8_t* dst = out->mutable_data();
  const char* src = raw.data.data();
  if (t == PrimitiveType::kPred) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] != 0 ? 1 : 0;
    return absl::OkStatus();
  }
  if (IsNarrowFloat(t)) {
    const int size = raw.dtype.size;
    for (int64_t i = 0; i < n; ++i)
      out->SetFromDouble(i, ReadFloat(src + i * size, size));
    return absl::OkStatus();
  }
  if (IsIntegralType(t) && BitWidth(t) < 8) {
    const bool is_signed = IsSignedIntegralType(t);
    const int bits = BitWidth(t);
    const int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
    const int64_t hi =
        is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = is_signed
                      ? static_cast<int64_t>(static_cast<int8_t>(src[i]))
                      : static_cast<int64_t>(static_cast<uint8_t>(src[i]));
      if (v < lo || v > hi) {
        return Error(name,
                     StrCat("value ", v, " at flat index ", i, " does not fit ",
                            PrimitiveTypeName(t), " [", lo, ", ", hi, "]"));
      }
      out->SetFromInt64(i, v);
    }
    return absl::OkStatus();
  }
  if (out->size_bytes() > 0) std::memcpy(dst, src, out->size_bytes());
  return absl::OkStatus();
}

std::string ReadWholeFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::error_code ec;
  if (!in || fs::is_directory(path, ec)) {
    *ok = false;
    return "";
  }
  const std::streamoff size = in.tellg();
  std::string data(size > 0 ? static_cast<size_t>(size) : 0, '\0');
  in.seekg(0);
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  *ok = static_cast<bool>(in);
  return data;
}

absl::Status WriteWholeFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InvalidArgumentError(StrCat(path, ": cannot write"));
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return absl::InvalidArgumentError(StrCat(path, ": write failed"));
  return absl::OkStatus();
}

std::string ZipErrorText(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

// The expected leaves of a shape, depth-first; tokens skipped.
absl::Status CollectLeafShapes(const Shape& s, int64_t param,
                               std::vector<const Shape*>* out) {
  if (s.IsToken()) return absl::OkStatus();
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (absl::Status st = CollectLeafShapes(e, param, out); !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }
  if (!s.IsArray()) {
    return absl::InvalidArgumentError(
        StrCat("parameter ", param, " has a ", s.ToString(false),
               " value, which cannot be read from an array file"));
  }
  if (s.is_unbounded_dynamic()) {
    return absl::InvalidArgumentError(
        StrCat("parameter ", param, " has unbounded dynamic shape ",
               s.ToString(false), "; its size is unknown"));
  }
  out->push_back(&s);
  return absl::OkStatus();
}

// Rebuilds a parameter value from its leaves (consumed from *next).
Literal Assemble(const Shape& s, std::vector<Literal>* leaves, size_t* next) {
  if (s.IsArray()) return std::move((*leaves)[(*next)++]);
  if (!s.IsTuple()) return Literal(s);  // token
  // Literal(s) allocates zeroed elements; they are replaced right away.
  Literal t(s);
  for (size_t i = 0; i < s.tuple_shapes().size(); ++i) {
    (*t.mutable_tuple_elements())[i] =
        Assemble(s.tuple_shapes()[i], leaves, next);
  }
  return t;
}

void CollectLeaves(const Literal& l, std::vector<const Literal*>* out) {
  const Shape& s = l.shape();
  if (s.IsTuple()) {
    for (const Literal& e : l.tuple_elements()) CollectLeaves(e, out);
  } else if (s.IsArray()) {
    out->push_back(&l);
  }
}

}  // namespace

std::string NpyDescrFor(PrimitiveType type) {
  if (!IsArrayType(type)) return "";
  Dtype d = NaturalDtype(type);
  if (d.kind == 0) return "";
  std::string s(1, d.size == 1 ? '|' : (d.big_endian ? '>' : '<'));
  s.push_back(d.kind);
  StrAppend(&s, d.size);
  return s;
}

absl::StatusOr<std::string> EncodeNpy(const Literal& array) {
  const Shape& shape = array.shape();
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        StrCat("cannot write a ", shape.ToString(false), " value as .npy"));
  }
  if (array.is_unknown()) {
    return absl::InvalidArgumentError(
        StrCat("cannot write ", shape.ToString(false),
               " as .npy: its contents are unknown ({...})"));
  }
  const PrimitiveType t = shape.element_type();
  const Dtype d = NaturalDtype(t);
  std::string header = StrCat("{'descr': '", NpyDescrFor(t),
                              "', 'fortran_order': False, 'shape': ",
                              PyShape(shape.dimensions()), ", }");
  // Data starts at a multiple of 64 bytes; the header ends in '\n'.
  // Version 1.0 stores the padded header length in 16 bits.
  auto padded = [&](size_t prefix) {
    return (prefix + header.size() + 1 + 63) / 64 * 64 - prefix;
  };
  const size_t prefix = padded(10) <= 65535 ? 10 : 12;
  header.append(padded(prefix) - header.size() - 1, ' ');
  header.push_back('\n');
  const int64_t n = array.element_count();
  std::string out;
  out.reserve(prefix + header.size() + static_cast<size_t>(n) * d.size);
  out.append(kMagic, kMagicLen);
  out.push_back(prefix == 10 ? 1 : 2);
  out.push_back(0);
  const uint32_t hl = static_cast<uint32_t>(header.size());
  for (size_t k = 0; k < prefix - 8; ++k) {
    out.push_back(static_cast<char>((hl >> (8 * k)) & 0xFF));
  }
  out += header;
  const size_t start = out.size();
  out.resize(start + static_cast<size_t>(n) * d.size);
  char* dst = out.data() + start;
  if (t == PrimitiveType::kPred) {
    for (int64_t i = 0; i < n; ++i) dst[i] = array.data()[i] != 0 ? 1 : 0;
  } else if (IsNarrowFloat(t)) {
    for (int64_t i = 0; i < n; ++i) {
      float f = static_cast<float>(array.GetAsDouble(i));
      std::memcpy(dst + i * 4, &f, 4);
    }
  } else if (IsIntegralType(t) && BitWidth(t) < 8) {
    for (int64_t i = 0; i < n; ++i) {
      dst[i] = IsSignedIntegralType(t)
                   ? static_cast<char>(static_cast<int8_t>(array.GetAsInt64(i)))
                   : static_cast<char>(array.GetAsUint64(i));
    }
  } else if (array.size_bytes() > 0) {  // an empty array has no buffer
    std::memcpy(dst, array.data(), array.size_bytes());
  }
  return out;
}

absl::StatusOr<Literal> DecodeNpyAnyType(std::string_view bytes,
                                         std::string_view name) {
  auto raw = DecodeRaw(bytes, name);
  if (!raw.ok()) return raw.status();
  PrimitiveType t = PrimitiveType::kInvalid;
  const int size = raw->dtype.size;
  switch (raw->dtype.kind) {
    case 'b':
      t = PrimitiveType::kPred;
      break;
    case 'i':
      t = size == 1   ? PrimitiveType::kS8
          : size == 2 ? PrimitiveType::kS16
          : size == 4 ? PrimitiveType::kS32
                      : PrimitiveType::kS64;
      break;
    case 'u':
      t = size == 1   ? PrimitiveType::kU8
          : size == 2 ? PrimitiveType::kU16
          : size == 4 ? PrimitiveType::kU32
                      : PrimitiveType::kU64;
      break;
    case 'f':
      t = size == 2   ? PrimitiveType::kF16
          : size == 4 ? PrimitiveType::kF32
                      : PrimitiveType::kF64;
      break;
    case 'c':
      t = size == 8 ? PrimitiveType::kC64 : PrimitiveType::kC128;
      break;
  }
  Literal lit(Shape(t, raw->dims));
  if (absl::Status s = ConvertInto(*raw, &lit, name); !s.ok()) return s;
  return lit;
}

absl::StatusOr<Literal> DecodeNpy(std::string_view bytes, const Shape& expected,
                                  std::string_view name) {
  if (!expected.IsArray()) {
    return Error(name, StrCat("cannot read a ", expected.ToString(false),
                              " value from .npy"));
  }
  auto raw = DecodeRaw(bytes, name);
  if (!raw.ok()) return raw.status();
  const PrimitiveType t = expected.element_type();
  if (!Accepts(t, raw->dtype) || raw->dims != expected.dimensions()) {
    std::string accepted = IsNarrowFloat(t)
                               ? " (as float16, float32 or float64)"
                               : StrCat(" (as ", NaturalDtype(t).Name(), ")");
    return Error(
        name, StrCat("expected ", expected.ToString(false), accepted, ", got ",
                     raw->dtype.Name(), " ", PyShape(raw->dims)));
  }
  Literal lit(expected);
  if (absl::Status s = ConvertInto(*raw, &lit, name); !s.ok()) return s;
  return lit;
}

absl::Status WriteNpy(const Literal& array, const std::string& path) {
  auto bytes = EncodeNpy(array);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        StrCat(path, ": ", bytes.status().message()));
  }
  return WriteWholeFile(path, *bytes);
}

absl::StatusOr<Literal> ReadNpy(const std::string& path,
                                const Shape& expected) {
  bool ok = true;
  std::string bytes = ReadWholeFile(path, &ok);
  if (!ok) return absl::NotFoundError(StrCat(path, ": cannot open file"));
  return DecodeNpy(bytes, expected, path);
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadNpz(
    const std::string& path) {
  int err = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (!za) {
    return absl::InvalidArgumentError(
        StrCat(path, ": cannot open as .npz: ", ZipErrorText(err)));
  }
  std::unique_ptr<zip_t, void (*)(zip_t*)> closer(za, zip_discard);
  std::vector<std::pair<std::string, std::string>> members;
  const zip_int64_t count = zip_get_num_entries(za, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za, i, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
        !(st.valid & ZIP_STAT_SIZE)) {
      return absl::InvalidArgumentError(StrCat(path, ": cannot read member ",
                                               static_cast<int64_t>(i), ": ",
                                               zip_strerror(za)));
    }
    std::string name = st.name;
    if (EndsWith(name, "/")) continue;  // directory entries
    zip_file_t* zf = zip_fopen_index(za, i, 0);
    if (!zf) {
      return absl::InvalidArgumentError(
          StrCat(path, ": cannot open member ", name, ": ", zip_strerror(za)));
    }
    std::string data(st.size, '\0');
    zip_uint64_t got = 0;
    while (got < st.size) {
      zip_int64_t r = zip_fread(zf, data.data() + got, st.size - got);
      if (r <= 0) break;
      got += static_cast<zip_uint64_t>(r);
    }
    std::string ferr = zip_file_strerror(zf);
    zip_fclose(zf);
    if (got != st.size) {
      return absl::InvalidArgumentError(
          StrCat(path, ": cannot read member ", name, ": ", ferr));
    }
    if (EndsWith(name, ".npy")) name.resize(name.size() - 4);
    members.emplace_back(std::move(name), std::move(data));
  }
  return members;
}

absl::Status WriteNpz(
    absl::Span<const std::pair<std::string, const Literal*>> arrays,
    const std::string& path) {
  std::vector<std::string> buffers;
  buffers.reserve(arrays.size());
  for (const auto& [name, lit] : arrays) {
    auto bytes = EncodeNpy(*lit);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(
          StrCat(path, ": ", name, ": ", bytes.status().message()));
    }
    buffers.push_back(std::move(*bytes));
  }
  if (arrays.empty()) {
    // libzip deletes empty archives; an empty zip is just the end record.
    return WriteWholeFile(path,
                          std::string("PK\x05\x06", 4) + std::string(18, '\0'));
  }
  int err = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!za) {
    return absl::InvalidArgumentError(
        StrCat(path, ": cannot create: ", ZipErrorText(err)));
  }
  for (size_t i = 0; i < arrays.size(); ++i) {
    zip_source_t* src =
        zip_source_buffer(za, buffers[i].data(), buffers[i].size(), 0);
    std::string member = StrCat(arrays[i].first, ".npy");
    zip_int64_t idx = src ? zip_file_add(za, member.c_str(), src,
                                         ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8)
                          : -1;
    if (idx < 0) {
      if (src) zip_source_free(src);
      std::string msg = zip_strerror(za);
      zip_discard(za);
      return absl::InvalidArgumentError(
          StrCat(path, ": cannot add ", member, ": ", msg));
    }
    zip_set_file_compression(za, static_cast<zip_uint64_t>(idx), ZIP_CM_STORE,
                             0);
  }
  if (zip_close(za) != 0) {
    std::string msg = zip_strerror(za);
    zip_discard(za);
    return absl::InvalidArgumentError(StrCat(path, ": write failed: ", msg));
  }
  return absl::OkStatus();
}

std::vector<const Literal*> ArrayLeaves(const Literal& literal) {
  std::vector<const Literal*> out;
  CollectLeaves(literal, &out);
  return out;
}

absl::StatusOr<std::vector<Literal>> ReadArguments(
    const std::string& path, absl::Span<const Shape> parameter_shapes) {
  std::vector<const Shape*> leaf_shapes;
  for (size_t p = 0; p < parameter_shapes.size(); ++p) {
    if (absl::Status s = CollectLeafShapes(
            parameter_shapes[p], static_cast<int64_t>(p), &leaf_shapes);
        !s.ok()) {
      return s;
    }
  }
  std::vector<Literal> leaves;
  leaves.reserve(leaf_shapes.size());
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (size_t k = 0; k < leaf_shapes.size(); ++k) {
      std::string file = (fs::path(path) / StrCat("param", k, ".npy")).string();
      if (!fs::exists(file, ec)) {
        return absl::NotFoundError(
            StrCat(file, ": missing (the entry has ",
                   static_cast<int64_t>(leaf_shapes.size()),
                   " parameter arrays, param0..param",
                   static_cast<int64_t>(leaf_shapes.size()) - 1, ")"));
      }
      auto lit = ReadNpy(file, *leaf_shapes[k]);
      if (!lit.ok()) return lit.status();
      leaves.push_back(std::move(*lit));
    }
    std::string extra =
        (fs::path(path) / StrCat("param", leaf_shapes.size(), ".npy")).string();
    if (fs::exists(extra, ec)) {
      return absl::InvalidArgumentError(StrCat(
          extra, ": unexpected (the entry has ",
          static_cast<int64_t>(leaf_shapes.size()), " parameter arrays)"));
    }
  } else if (fs::exists(path, ec)) {
    auto members = ReadNpz(path);
    if (!members.ok()) return members.status();
    std::vector<const std::string*> by_index(leaf_shapes.size(), nullptr);
    for (const auto& [name, bytes] : *members) {
      int64_t k = -1;
      if (name.size() > 5 && name.compare(0, 5, "param") == 0) {
        k = 0;
        for (size_t c = 5; c < name.size(); ++c) {
          if (name[c] < '0' || name[c] > '9' || k > (int64_t{1} << 40)) {
            k = -1;
            break;
          }
          k = k * 10 + (name[c] - '0');
        }
        if (name.size() > 6 && name[5] == '0') k = -1;  // no leading zeros
      }
      if (k < 0 || k >= static_cast<int64_t>(leaf_shapes.size())) {
        return absl::InvalidArgumentError(
            StrCat(path, ": unexpected member '", name, "' (the entry has ",
                   static_cast<int64_t>(leaf_shapes.size()),
                   " parameter arrays, named param0, param1, ...)"));
      }
      by_index[k] = &bytes;
    }
    for (size_t k = 0; k < leaf_shapes.size(); ++k) {
      std::string member = StrCat(path, ":param", k);
      if (!by_index[k]) {
        return absl::NotFoundError(StrCat(
            member, ": missing (the entry has ",
            static_cast<int64_t>(leaf_shapes.size()), " parameter arrays)"));
      }
      auto lit = DecodeNpy(*by_index[k], *leaf_shapes[k], member);
      if (!lit.ok()) return lit.status();
      leaves.push_back(std::move(*lit));
    }
  } else {
    return absl::NotFoundError(StrCat(path, ": no such file or directory"));
  }
  std::vector<Literal> args;
  size_t next = 0;
  for (const Shape& s : parameter_shapes) {
    args.push_back(Assemble(s, &leaves, &next));
  }
  return args;
}

namespace {

absl::Status WriteNamed(const std::vector<const Literal*>& leaves,
                        std::string_view prefix, const std::string& path) {
  std::vector<std::pair<std::string, const Literal*>> named;
  for (size_t j = 0; j < leaves.size(); ++j) {
    named.emplace_back(StrCat(prefix, j), leaves[j]);
  }
  if (EndsWith(path, ".npz")) return WriteNpz(named, path);
  std::error_code ec;
  fs::create_directories(path, ec);
  if (!fs::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        StrCat(path, ": cannot create directory"));
  }
  for (const auto& [name, lit] : named) {
    std::string file = (fs::path(path) / StrCat(name, ".npy")).string();
    if (absl::Status s = WriteNpy(*lit, file); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteArguments(absl::Span<const Literal> args,
                            const std::string& path) {
  std::vector<const Literal*> leaves;
  for (const Literal& a : args) CollectLeaves(a, &leaves);
  return WriteNamed(leaves, "param", path);
}

absl::Status WriteOutputs(const Literal& result, const std::string& path) {
  return WriteNamed(ArrayLeaves(result), "out", path);
}

}  // namespace hlogym
