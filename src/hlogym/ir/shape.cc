#include "hlogym/ir/shape.h"

#include "hlogym/ir/str_util.h"

namespace hlogym {

bool Layout::Tail::IsDefault() const {
  return dim_level_types.empty() && tiles.empty() &&
         tail_padding_alignment_in_elements == 1 &&
         index_primitive_type == PrimitiveType::kInvalid &&
         pointer_primitive_type == PrimitiveType::kInvalid &&
         element_size_in_bits == 0 && memory_space == 0 &&
         split_configs.empty() && physical_shape == nullptr &&
         dynamic_shape_metadata_prefix_bytes == 0;
}

bool Layout::Tail::operator==(const Tail& o) const {
  if (dim_level_types != o.dim_level_types || tiles != o.tiles ||
      tail_padding_alignment_in_elements !=
          o.tail_padding_alignment_in_elements ||
      index_primitive_type != o.index_primitive_type ||
      pointer_primitive_type != o.pointer_primitive_type ||
      element_size_in_bits != o.element_size_in_bits ||
      memory_space != o.memory_space || split_configs != o.split_configs ||
      dynamic_shape_metadata_prefix_bytes !=
          o.dynamic_shape_metadata_prefix_bytes) {
    return false;
  }
  if ((physical_shape == nullptr) != (o.physical_shape == nullptr)) {
    return false;
  }
  return physical_shape == nullptr || *physical_shape == *o.physical_shape;
}

const Layout::Tail& Layout::DefaultTail() {
  static const Tail* const kDefault = new Tail();
  return *kDefault;
}

Layout::Tail& Layout::mutable_tail() {
  if (tail_ == nullptr) {
    tail_ = std::make_shared<Tail>();
  } else if (tail_.use_count() > 1) {
    tail_ = std::make_shared<Tail>(*tail_);
  }
  return *tail_;
}

bool Layout::operator==(const Layout& o) const {
  if (minor_to_major != o.minor_to_major) return false;
  if (tail_ == o.tail_) return true;
  return tail() == o.tail();
}

Shape::Shape(PrimitiveType type, DimVector dims)
    : element_type_(type), dims_(std::move(dims)) {
  SetDefaultLayout();
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type_ = PrimitiveType::kTuple;
  s.tuple_shapes_ = std::move(elements);
  return s;
}

Shape Shape::Token() {
  Shape s;
  s.element_type_ = PrimitiveType::kToken;
  return s;
}

Shape Shape::Opaque() {
  Shape s;
  s.element_type_ = PrimitiveType::kOpaque;
  return s;
}

Shape Shape::Buffer(Shape array) {
  Shape s;
  s.element_type_ = PrimitiveType::kBuffer;
  s.tuple_shapes_.push_back(std::move(array));
  return s;
}

void Shape::set_dynamic_dimension(int64_t i, bool dynamic) {
  if (i >= 64) return;
  if (dynamic) {
    dynamic_mask_ |= (uint64_t{1} << i);
  } else {
    dynamic_mask_ &= ~(uint64_t{1} << i);
  }
}

bool Shape::is_dynamic() const {
  if (dynamic_mask_ != 0) return true;
  for (const Shape& s : tuple_shapes_) {
    if (s.is_dynamic()) return true;
  }
  return false;
}

bool Shape::is_unbounded_dynamic() const {
  for (int64_t d : dims_) {
    if (d == kUnboundedSize) return true;
  }
  for (const Shape& s : tuple_shapes_) {
    if (s.is_unbounded_dynamic()) return true;
  }
  return false;
}

int64_t Shape::ElementsIn() const {
  if (!IsArray()) return 0;
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d == kUnboundedSize) return 0;
    // Saturate instead of overflowing on absurd (fuzzed) dimensions.
    if (__builtin_mul_overflow(n, d, &n))
      return std::numeric_limits<int64_t>::max();
  }
  return n;
}

int64_t Shape::ArrayBytes() const {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& e : tuple_shapes_) {
      if (__builtin_add_overflow(total, e.ArrayBytes(), &total)) return kMax;
    }
    return total;
  }
  int64_t bytes;
  if (__builtin_mul_overflow(
          ElementsIn(), IsArray() ? ByteWidth(element_type_) : 0, &bytes)) {
    return kMax;
  }
  return bytes;
}

void Shape::SetDefaultLayout() {
  if (IsArray()) {
    has_layout_ = true;
    layout_ = Layout();
    layout_.minor_to_major.resize(dims_.size());
    for (size_t i = 0; i < dims_.size(); ++i) {
      layout_.minor_to_major[i] = static_cast<int64_t>(dims_.size() - 1 - i);
    }
  } else {
    for (Shape& s : tuple_shapes_) s.SetDefaultLayout();
  }
}

const Shape* Shape::SubShape(const std::vector<int64_t>& index) const {
  const Shape* s = this;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_shapes_size()) return nullptr;
    s = &s->tuple_shapes_[i];
  }
  return s;
}

int64_t Shape::LeafCount() const {
  if (!IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& s : tuple_shapes_) n += s.LeafCount();
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (element_type_ != o.element_type_ || dims_ != o.dims_ ||
      dynamic_mask_ != o.dynamic_mask_ || tuple_shapes_ != o.tuple_shapes_) {
    return false;
  }
  if (!IsArray()) return true;
  if (has_layout_ != o.has_layout_) return false;
  return !has_layout_ || layout_ == o.layout_;
}

bool Shape::EqualIgnoringLayout(const Shape& o) const {
  if (element_type_ != o.element_type_) return false;
  return SameDimensions(o);
}

bool Shape::SameDimensions(const Shape& o) const {
  if (IsTuple() != o.IsTuple()) return false;
  if (IsTuple() || IsBuffer()) {
    if (tuple_shapes_.size() != o.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (!tuple_shapes_[i].EqualIgnoringLayout(o.tuple_shapes_[i])) {
        return false;
      }
    }
    return true;
  }
  return dims_ == o.dims_ && dynamic_mask_ == o.dynamic_mask_;
}

namespace {

bool DimsCompatible(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    int64_t x = a.dimensions(i), y = b.dimensions(i);
    if (x == Shape::kUnboundedSize || y == Shape::kUnboundedSize) continue;
    bool dx = a.is_dynamic_dimension(i), dy = b.is_dynamic_dimension(i);
    if (x == y) continue;
    if (dx && !dy && y <= x) continue;
    if (dy && !dx && x <= y) continue;
    return false;
  }
  return true;
}

bool CompatibleImpl(const Shape& a, const Shape& b, bool ignore_fp) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple()) return false;
    if (a.tuple_shapes_size() != b.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!CompatibleImpl(a.tuple_shapes(i), b.tuple_shapes(i), ignore_fp)) {
        return false;
      }
    }
    return true;
  }
  if (a.IsBuffer() || b.IsBuffer()) {
    if (!a.IsBuffer() || !b.IsBuffer()) return false;
    return CompatibleImpl(a.buffer_shape(), b.buffer_shape(), ignore_fp);
  }
  if (a.element_type() != b.element_type()) {
    if (!ignore_fp || !IsFloatingPointType(a.element_type()) ||
        !IsFloatingPointType(b.element_type())) {
      return false;
    }
  }
  if (!a.IsArray()) return true;
  return DimsCompatible(a, b);
}

}  // namespace

bool Shape::Compatible(const Shape& o) const {
  return CompatibleImpl(*this, o, false);
}

bool Shape::CompatibleIgnoringFpPrecision(const Shape& o) const {
  return CompatibleImpl(*this, o, true);
}

namespace {

void AppendIntList(const DimVector& v, std::string* out) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->push_back(',');
    StrAppend(out, v[i]);
  }
}

}  // namespace

void AppendLayout(const Layout& layout, std::string* out) {
  out->push_back('{');
  AppendIntList(layout.minor_to_major, out);
  if (layout.HasTail()) {
    const Layout::Tail& tail = layout.tail();
    out->push_back(':');
    if (!tail.dim_level_types.empty()) {
      out->append("D(");
      for (size_t i = 0; i < tail.dim_level_types.size(); ++i) {
        if (i) out->push_back(',');
        const auto& d = tail.dim_level_types[i];
        static constexpr char kLevels[] = {'D', 'C', 'S', 'H'};
        out->push_back(kLevels[static_cast<int>(d.level)]);
        if (d.not_unique) out->push_back('+');
        if (d.not_ordered) out->push_back('~');
      }
      out->push_back(')');
    }
    if (!tail.tiles.empty()) {
      out->push_back('T');
      for (const Tile& t : tail.tiles) {
        out->push_back('(');
        for (size_t i = 0; i < t.dims.size(); ++i) {
          if (i) out->push_back(',');
          if (t.dims[i] == Tile::kCombineDimension) {
            out->push_back('*');
          } else {
            StrAppend(out, t.dims[i]);
          }
        }
        out->push_back(')');
      }
    }
    if (tail.tail_padding_alignment_in_elements != 1) {
      StrAppend(out, "L(", tail.tail_padding_alignment_in_elements, ")");
    }
    if (tail.index_primitive_type != PrimitiveType::kInvalid) {
      StrAppend(out, "#(", PrimitiveTypeName(tail.index_primitive_type), ")");
    }
    if (tail.pointer_primitive_type != PrimitiveType::kInvalid) {
      StrAppend(out, "*(", PrimitiveTypeName(tail.pointer_primitive_type), ")");
    }
    if (tail.element_size_in_bits != 0) {
      StrAppend(out, "E(", tail.element_size_in_bits, ")");
    }
    if (tail.memory_space != 0) {
      StrAppend(out, "S(", tail.memory_space, ")");
    }
    if (!tail.split_configs.empty()) {
      out->append("SC");
      for (const SplitConfig& sc : tail.split_configs) {
        StrAppend(out, "(", sc.dimension, ":");
        for (size_t i = 0; i < sc.split_indices.size(); ++i) {
          if (i) out->push_back(',');
          StrAppend(out, sc.split_indices[i]);
        }
        out->push_back(')');
      }
    }
    if (tail.physical_shape) {
      out->append("P(");
      tail.physical_shape->AppendTo(out, true);
      out->push_back(')');
    }
    if (tail.dynamic_shape_metadata_prefix_bytes != 0) {
      StrAppend(out, "M(", tail.dynamic_shape_metadata_prefix_bytes, ")");
    }
  }
  out->push_back('}');
}

std::string LayoutToString(const Layout& layout) {
  std::string s;
  AppendLayout(layout, &s);
  return s;
}

void Shape::AppendTo(std::string* out, bool print_layout) const {
  if (IsTuple()) {
    out->push_back('(');
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (i) out->append(", ");
      tuple_shapes_[i].AppendTo(out, print_layout);
    }
    out->push_back(')');
    return;
  }
  if (IsBuffer()) {
    out->append("b(");
    if (!tuple_shapes_.empty()) tuple_shapes_[0].AppendTo(out, print_layout);
    out->push_back(')');
    return;
  }
  out->append(PrimitiveTypeName(element_type_));
  out->push_back('[');
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out->push_back(',');
    if (dims_[i] == kUnboundedSize) {
      out->push_back('?');
    } else {
      if (is_dynamic_dimension(static_cast<int64_t>(i))) out->append("<=");
      StrAppend(out, dims_[i]);
    }
  }
  out->push_back(']');
  if (print_layout && IsArray() && has_layout_) {
    if (dims_.empty() && !layout_.HasTail()) return;
    AppendLayout(layout_, out);
  }
}

std::string Shape::ToString(bool print_layout) const {
  std::string s;
  AppendTo(&s, print_layout);
  return s;
}

}  // namespace hlogym
