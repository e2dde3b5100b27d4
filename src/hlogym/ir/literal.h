// Constant values of any shape and element type.
#ifndef HLOGYM_IR_LITERAL_H_
#define HLOGYM_IR_LITERAL_H_

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "hlogym/ir/shape.h"

namespace hlogym {

// A literal stores array elements in logical row-major order (whatever the
// layout of its shape), one element per ByteWidth(type) bytes, little-endian
// as the host. Sub-byte integers take a whole byte each; complex values are
// (real, imag) pairs. A literal written as `{...}` in text has unknown
// contents: its shape is known, its data is not.
class Literal {
 public:
  Literal() = default;
  // A zero-filled literal of `shape` (tuples get zero-filled elements).
  explicit Literal(const Shape& shape);
  static Literal Unknown(const Shape& shape);

  const Shape& shape() const { return shape_; }
  bool is_unknown() const { return unknown_; }
  int64_t element_count() const {
    return shape_.IsArray() ? shape_.ElementsIn() : 0;
  }

  // Tuple literals.
  const std::vector<Literal>& tuple_elements() const { return elements_; }
  std::vector<Literal>* mutable_tuple_elements() { return &elements_; }

  // Raw storage of array literals.
  const uint8_t* data() const { return data_.data(); }
  uint8_t* mutable_data() { return data_.data(); }
  size_t size_bytes() const { return data_.size(); }

  // The element bits at a linear (row-major) index, zero-extended. For
  // complex types this is the real part only; use GetComplex.
  uint64_t GetBits(int64_t i) const;
  void SetBits(int64_t i, uint64_t bits);

  // Typed views. Floating types are decoded exactly; integers are sign or
  // zero extended; pred is 0/1.
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;
  uint64_t GetAsUint64(int64_t i) const;
  std::complex<double> GetComplex(int64_t i) const;
  // Sets floats with round-to-nearest-even, integers by truncation to the
  // type's width. Returns false when a finite float overflows the type.
  bool SetFromDouble(int64_t i, double v);
  void SetFromInt64(int64_t i, int64_t v);
  void SetComplex(int64_t i, std::complex<double> v);

  // Bitwise equality of shapes (ignoring layout) and contents.
  bool operator==(const Literal& o) const;
  bool operator!=(const Literal& o) const { return !(*this == o); }

  // 64-bit hash of the shape's dimensions, element type and the bytes.
  uint64_t Hash() const;

  // Text of the literal as it appears inside `constant(...)`:
  // "3", "{1, 2}", "{ {1, 2}, {3, 4} }", "(1, {2})", "{...}".
  std::string ToString() const;
  void AppendTo(std::string* out) const;
  // Appends the text of element i (used by the printer and messages).
  void AppendElement(int64_t i, std::string* out) const;

 private:
  Shape shape_;
  bool unknown_ = false;
  std::vector<uint8_t> data_;
  std::vector<Literal> elements_;
};

// Shortest decimal text for a value of a floating type that parses back to
// the same bits: "1", "0.1", "-inf", "nan", "-nan(0x3)".
void AppendFloat(PrimitiveType type, uint64_t bits, std::string* out);

// Bits of the value `v` in a floating type (round-to-nearest-even). Returns
// false if v is finite and out of the type's range.
bool FloatToBits(PrimitiveType type, double v, uint64_t* bits);
double BitsToFloat(PrimitiveType type, uint64_t bits);

}  // namespace hlogym

#endif  // HLOGYM_IR_LITERAL_H_
