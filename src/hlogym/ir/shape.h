// Shapes and layouts of HLO values.
#ifndef HLOGYM_IR_SHAPE_H_
#define HLOGYM_IR_SHAPE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "hlogym/ir/primitive_type.h"

namespace hlogym {

class Shape;

// Dimension sizes are kept inline for ranks up to 6, which covers nearly
// every tensor in practice and keeps shape copies allocation-free.
using DimVector = absl::InlinedVector<int64_t, 6>;

// One tile of a tiled layout: T(8,128). kCombineDimension marks '*'.
struct Tile {
  static constexpr int64_t kCombineDimension =
      std::numeric_limits<int64_t>::min();
  DimVector dims;
  bool operator==(const Tile& o) const { return dims == o.dims; }
};

// SC(dim:split,split,...)
struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  bool operator==(const SplitConfig& o) const {
    return dimension == o.dimension && split_indices == o.split_indices;
  }
};

// A dense or sparse layout. The fields follow the order of the text format
// (section 4.2 of the text format notes).
struct Layout {
  enum class DimLevel : uint8_t {
    kDense,
    kCompressed,
    kSingleton,
    kLooseCompressed
  };
  struct DimLevelType {
    DimLevel level = DimLevel::kDense;
    bool not_unique = false;   // printed '+'
    bool not_ordered = false;  // printed '~'
    bool operator==(const DimLevelType& o) const {
      return level == o.level && not_unique == o.not_unique &&
             not_ordered == o.not_ordered;
    }
  };
  // Everything after ':' in the text. Rare (sparse formats, tiles, sub-byte
  // elements, memory spaces), so it lives out of line: an instruction's
  // shape stays small, and copying it copies only a pointer.
  struct Tail {
    std::vector<DimLevelType> dim_level_types;
    std::vector<Tile> tiles;
    int64_t tail_padding_alignment_in_elements = 1;                  // L(n)
    PrimitiveType index_primitive_type = PrimitiveType::kInvalid;    // #(t)
    PrimitiveType pointer_primitive_type = PrimitiveType::kInvalid;  // *(t)
    int64_t element_size_in_bits = 0;                                // E(n)
    int64_t memory_space = 0;                                        // S(n)
    std::vector<SplitConfig> split_configs;                          // SC(..)
    std::shared_ptr<const Shape> physical_shape;                     // P(shape)
    int64_t dynamic_shape_metadata_prefix_bytes = 0;                 // M(n)

    bool IsDefault() const;
    bool operator==(const Tail& o) const;
  };

  DimVector minor_to_major;

  // The tail's fields (all defaults unless set).
  const Tail& tail() const { return tail_ != nullptr ? *tail_ : DefaultTail(); }
  // For writing: copies of a layout share the tail until one writes.
  Tail& mutable_tail();
  bool HasTail() const { return tail_ != nullptr && !tail_->IsDefault(); }
  bool operator==(const Layout& o) const;
  bool operator!=(const Layout& o) const { return !(*this == o); }

 private:
  static const Tail& DefaultTail();
  std::shared_ptr<Tail> tail_;
};

// An array shape (element type + dimensions + optional layout), a tuple of
// shapes, a token, an opaque value, or a buffer b(array).
class Shape {
 public:
  // Size value of an unbounded dynamic dimension '?'.
  static constexpr int64_t kUnboundedSize = std::numeric_limits<int64_t>::min();

  Shape() = default;
  // Array shape with the default (major-to-minor) layout.
  Shape(PrimitiveType type, DimVector dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Opaque();
  static Shape Scalar(PrimitiveType type) { return Shape(type, {}); }

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType t) { element_type_ = t; }

  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }
  bool IsOpaque() const { return element_type_ == PrimitiveType::kOpaque; }
  bool IsBuffer() const { return element_type_ == PrimitiveType::kBuffer; }

  // Array shapes.
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const DimVector& dimensions() const { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[i]; }
  void set_dimensions(int64_t i, int64_t size) { dims_[i] = size; }
  DimVector* mutable_dimensions() { return &dims_; }
  bool is_dynamic_dimension(int64_t i) const {
    return i < 64 && ((dynamic_mask_ >> i) & 1u);
  }
  void set_dynamic_dimension(int64_t i, bool dynamic);
  bool is_dynamic() const;  // any dynamic dimension (recursively)
  bool is_unbounded_dynamic() const;
  // Number of elements (static bounds for bounded dims). Tuples: 0.
  int64_t ElementsIn() const;
  // Bytes of every array leaf (tuples summed), ByteWidth per element as
  // literals store them; saturates instead of overflowing.
  int64_t ArrayBytes() const;
  bool IsScalar() const { return IsArray() && dims_.empty(); }

  bool has_layout() const { return has_layout_; }
  const Layout& layout() const { return layout_; }
  Layout* mutable_layout() {
    has_layout_ = true;
    return &layout_;
  }
  void clear_layout() {
    has_layout_ = false;
    layout_ = Layout();
  }
  // Sets minor_to_major to {rank-1, ..., 0} (and on tuple elements).
  void SetDefaultLayout();

  // Tuples and buffers.
  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  std::vector<Shape>* mutable_tuple_shapes() { return &tuple_shapes_; }
  int64_t tuple_shapes_size() const {
    return static_cast<int64_t>(tuple_shapes_.size());
  }
  const Shape& tuple_shapes(int64_t i) const { return tuple_shapes_[i]; }
  // For a buffer shape b(X), X.
  const Shape& buffer_shape() const { return tuple_shapes_[0]; }
  static Shape Buffer(Shape array);

  // Sub-shape at a tuple index path; nullptr if the path is invalid.
  const Shape* SubShape(const std::vector<int64_t>& index) const;
  // Number of leaf (non-tuple) sub-shapes.
  int64_t LeafCount() const;

  // Structural equality including layouts and dynamic dimensions.
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  // Same element types and dimensions (and dynamic-ness); layouts ignored.
  bool EqualIgnoringLayout(const Shape& o) const;
  // As EqualIgnoringLayout but also ignores the element type of arrays.
  bool SameDimensions(const Shape& o) const;
  // XLA's "compatible": equal ignoring layout, where a dynamic dimension is
  // compatible with a static one of size <= its bound.
  bool Compatible(const Shape& o) const;
  // Same, also ignoring floating-point precision (f32 vs bf16).
  bool CompatibleIgnoringFpPrecision(const Shape& o) const;

  // Text form: "f32[2,3]{1,0}", "(f32[], s32[4]{0})", "token[]".
  std::string ToString(bool print_layout = true) const;
  void AppendTo(std::string* out, bool print_layout = true) const;

 private:
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  bool has_layout_ = false;
  uint64_t dynamic_mask_ = 0;
  DimVector dims_;
  Layout layout_;
  std::vector<Shape> tuple_shapes_;
};

std::string LayoutToString(const Layout& layout);
void AppendLayout(const Layout& layout, std::string* out);

}  // namespace hlogym

#endif  // HLOGYM_IR_SHAPE_H_
