// GCC 12 reports a false -Wuninitialized inside absl::InlinedVector's move
// assignment when Shape::clear_layout() (layout_ = Layout()) is inlined at
// -O3; it must be silenced before the absl headers are read.
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "hlogym/ir/shape.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/ir/attributes.h"

namespace hlogym {
namespace {

using T = PrimitiveType;

// Built from an initializer list: moving an empty DimVector trips a GCC 12
// maybe-uninitialized false positive.
Shape S(PrimitiveType t, std::initializer_list<int64_t> dims) {
  return Shape(t, DimVector(dims.begin(), dims.end()));
}
Shape F32(std::initializer_list<int64_t> dims) { return S(T::kF32, dims); }

DimVector Dims(std::initializer_list<int64_t> d) {
  return DimVector(d.begin(), d.end());
}

constexpr int64_t kQ = Shape::kUnboundedSize;

// ---------------------------------------------------------------------------
// Construction and default layouts.
// ---------------------------------------------------------------------------

TEST(ShapeTest, DefaultConstructedIsInvalid) {
  Shape s;
  EXPECT_EQ(s.element_type(), T::kInvalid);
  EXPECT_FALSE(s.IsArray());
  EXPECT_FALSE(s.IsTuple());
  EXPECT_FALSE(s.has_layout());
  EXPECT_EQ(s.ElementsIn(), 0);
}

TEST(ShapeTest, ArrayConstructorSetsMajorToMinorLayout) {
  Shape s = F32({2, 3, 5});
  EXPECT_TRUE(s.IsArray());
  EXPECT_FALSE(s.IsScalar());
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s.dimensions(), Dims({2, 3, 5}));
  EXPECT_EQ(s.dimensions(1), 3);
  ASSERT_TRUE(s.has_layout());
  EXPECT_EQ(s.layout().minor_to_major, Dims({2, 1, 0}));
  EXPECT_FALSE(s.layout().HasTail());
  EXPECT_FALSE(s.is_dynamic());
}

TEST(ShapeTest, ScalarHasEmptyLayout) {
  Shape s = Shape::Scalar(T::kS32);
  EXPECT_TRUE(s.IsScalar());
  EXPECT_TRUE(s.IsArray());
  EXPECT_EQ(s.rank(), 0);
  EXPECT_TRUE(s.has_layout());
  EXPECT_TRUE(s.layout().minor_to_major.empty());
  EXPECT_EQ(s.ElementsIn(), 1);
}

TEST(ShapeTest, TokenOpaqueTupleBuffer) {
  Shape tok = Shape::Token();
  EXPECT_TRUE(tok.IsToken());
  EXPECT_FALSE(tok.IsArray());
  EXPECT_EQ(tok.element_type(), T::kToken);

  Shape op = Shape::Opaque();
  EXPECT_TRUE(op.IsOpaque());
  EXPECT_FALSE(op.IsArray());

  Shape t = Shape::Tuple({F32({2}), tok});
  EXPECT_TRUE(t.IsTuple());
  EXPECT_FALSE(t.IsArray());
  EXPECT_EQ(t.tuple_shapes_size(), 2);
  EXPECT_EQ(t.tuple_shapes(0), F32({2}));
  EXPECT_TRUE(t.tuple_shapes(1).IsToken());

  Shape b = Shape::Buffer(F32({4, 16}));
  EXPECT_TRUE(b.IsBuffer());
  EXPECT_FALSE(b.IsArray());
  EXPECT_EQ(b.buffer_shape(), F32({4, 16}));
}

TEST(ShapeTest, SetDefaultLayoutRestoresMajorToMinor) {
  Shape s = F32({2, 3});
  s.mutable_layout()->minor_to_major = Dims({0, 1});
  s.mutable_layout()->mutable_tail().memory_space = 1;
  s.SetDefaultLayout();
  EXPECT_EQ(s.layout().minor_to_major, Dims({1, 0}));
  EXPECT_EQ(s.layout().tail().memory_space, 0);

  // On a tuple it recurses into the elements.
  Shape e = F32({4, 5});
  e.clear_layout();
  Shape t = Shape::Tuple({e, Shape::Tuple({e})});
  t.SetDefaultLayout();
  EXPECT_EQ(t.tuple_shapes(0).layout().minor_to_major, Dims({1, 0}));
  EXPECT_EQ(t.tuple_shapes(1).tuple_shapes(0).layout().minor_to_major,
            Dims({1, 0}));
}

TEST(ShapeTest, ClearLayout) {
  Shape s = F32({2, 3});
  s.clear_layout();
  EXPECT_FALSE(s.has_layout());
  EXPECT_EQ(s.ToString(), "f32[2,3]");
  // mutable_layout() brings it back.
  s.mutable_layout()->minor_to_major = Dims({0, 1});
  EXPECT_TRUE(s.has_layout());
  EXPECT_EQ(s.ToString(), "f32[2,3]{0,1}");
}

// ---------------------------------------------------------------------------
// ToString.
// ---------------------------------------------------------------------------

TEST(ShapeToStringTest, Arrays) {
  EXPECT_EQ(F32({2, 3}).ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(F32({2, 3}).ToString(/*print_layout=*/false), "f32[2,3]");
  EXPECT_EQ(F32({7}).ToString(), "f32[7]{0}");
  EXPECT_EQ(S(T::kBF16, {1, 2, 3, 4}).ToString(), "bf16[1,2,3,4]{3,2,1,0}");
  EXPECT_EQ(S(T::kPred, {0}).ToString(), "pred[0]{0}");
  EXPECT_EQ(S(T::kF8E4M3FN, {16}).ToString(), "f8e4m3fn[16]{0}");
  EXPECT_EQ(S(T::kC128, {1}).ToString(), "c128[1]{0}");
}

TEST(ShapeToStringTest, ScalarsPrintNoLayout) {
  EXPECT_EQ(Shape::Scalar(T::kF32).ToString(), "f32[]");
  EXPECT_EQ(Shape::Scalar(T::kPred).ToString(), "pred[]");
  EXPECT_EQ(Shape::Scalar(T::kU64).ToString(false), "u64[]");
}

TEST(ShapeToStringTest, ScalarWithLayoutTail) {
  Shape s = Shape::Scalar(T::kS32);
  Tile t;
  t.dims = Dims({128});
  s.mutable_layout()->mutable_tail().tiles.push_back(t);
  EXPECT_EQ(s.ToString(), "s32[]{:T(128)}");
  EXPECT_EQ(s.ToString(false), "s32[]");
}

TEST(ShapeToStringTest, DynamicDimensions) {
  Shape s = S(T::kS32, {16, kQ});
  s.set_dynamic_dimension(0, true);
  s.set_dynamic_dimension(1, true);
  EXPECT_EQ(s.ToString(false), "s32[<=16,?]");
  EXPECT_EQ(s.ToString(), "s32[<=16,?]{1,0}");
  EXPECT_TRUE(s.is_dynamic());
  EXPECT_TRUE(s.is_unbounded_dynamic());
  EXPECT_TRUE(s.is_dynamic_dimension(0));
  EXPECT_TRUE(s.is_dynamic_dimension(1));

  Shape b = S(T::kF32, {4, 8});
  b.set_dynamic_dimension(1, true);
  EXPECT_EQ(b.ToString(), "f32[4,<=8]{1,0}");
  EXPECT_TRUE(b.is_dynamic());
  EXPECT_FALSE(b.is_unbounded_dynamic());
  EXPECT_FALSE(b.is_dynamic_dimension(0));
  b.set_dynamic_dimension(1, false);
  EXPECT_EQ(b.ToString(), "f32[4,8]{1,0}");
  EXPECT_FALSE(b.is_dynamic());
}

TEST(ShapeToStringTest, Tuples) {
  EXPECT_EQ(Shape::Tuple({}).ToString(), "()");
  EXPECT_EQ(Shape::Tuple({Shape::Scalar(T::kF32), S(T::kS32, {4})}).ToString(),
            "(f32[], s32[4]{0})");
  EXPECT_EQ(
      Shape::Tuple({Shape::Scalar(T::kF32), S(T::kS32, {4})}).ToString(false),
      "(f32[], s32[4])");
  Shape nested = Shape::Tuple(
      {Shape::Tuple({F32({2, 2})}), Shape::Tuple({}), Shape::Token()});
  EXPECT_EQ(nested.ToString(), "((f32[2,2]{1,0}), (), token[])");
  // Shape::ToString has no /*index=N*/ annotations (the printer adds them).
  std::vector<Shape> six(6, Shape::Scalar(T::kF32));
  EXPECT_EQ(Shape::Tuple(six).ToString(),
            "(f32[], f32[], f32[], f32[], f32[], f32[])");
}

TEST(ShapeToStringTest, TokenOpaqueBuffer) {
  EXPECT_EQ(Shape::Token().ToString(), "token[]");
  EXPECT_EQ(Shape::Opaque().ToString(), "opaque[]");
  EXPECT_EQ(Shape::Buffer(F32({4, 16})).ToString(), "b(f32[4,16]{1,0})");
  EXPECT_EQ(Shape::Buffer(F32({4, 16})).ToString(false), "b(f32[4,16])");
}

TEST(ShapeToStringTest, TiledLayouts) {
  Shape s = F32({128, 256});
  Layout* l = s.mutable_layout();
  Tile t1, t2;
  t1.dims = Dims({8, 128});
  t2.dims = Dims({2, 1});
  l->mutable_tail().tiles = {t1, t2};
  EXPECT_EQ(s.ToString(), "f32[128,256]{1,0:T(8,128)(2,1)}");
  EXPECT_TRUE(l->HasTail());
  EXPECT_EQ(s.ToString(false), "f32[128,256]");

  Shape c = S(T::kBF16, {1024});
  Tile comb;
  comb.dims = Dims({2, Tile::kCombineDimension});
  c.mutable_layout()->mutable_tail().tiles = {comb};
  EXPECT_EQ(c.ToString(), "bf16[1024]{0:T(2,*)}");
}

TEST(ShapeToStringTest, MemorySpaceAndElementSize) {
  Shape s = F32({2, 4});
  s.mutable_layout()->mutable_tail().memory_space = 1;
  EXPECT_EQ(s.ToString(), "f32[2,4]{1,0:S(1)}");

  Shape e = S(T::kS4, {64});
  e.mutable_layout()->mutable_tail().element_size_in_bits = 4;
  EXPECT_EQ(e.ToString(), "s4[64]{0:E(4)}");
}

TEST(ShapeToStringTest, EveryLayoutTailItemInOrder) {
  Shape s = F32({10, 20});
  Layout* l = s.mutable_layout();
  l->minor_to_major = Dims({0, 1});
  Layout::DimLevelType dense;
  Layout::DimLevelType comp;
  comp.level = Layout::DimLevel::kCompressed;
  comp.not_unique = true;
  comp.not_ordered = true;
  l->mutable_tail().dim_level_types = {dense, comp};
  Tile t;
  t.dims = Dims({4});
  l->mutable_tail().tiles = {t};
  l->mutable_tail().tail_padding_alignment_in_elements = 2;
  l->mutable_tail().index_primitive_type = T::kU32;
  l->mutable_tail().pointer_primitive_type = T::kU16;
  l->mutable_tail().element_size_in_bits = 8;
  l->mutable_tail().memory_space = 3;
  SplitConfig sc;
  sc.dimension = 0;
  sc.split_indices = {2, 4};
  l->mutable_tail().split_configs = {sc};
  l->mutable_tail().physical_shape =
      std::make_shared<const Shape>(S(T::kU8, {5}));
  l->mutable_tail().dynamic_shape_metadata_prefix_bytes = 16;
  // Order of section 4.2: D T L # * E S SC P M.
  EXPECT_EQ(s.ToString(),
            "f32[10,20]{0,1:D(D,C+~)T(4)L(2)#(u32)*(u16)E(8)S(3)SC(0:2,4)"
            "P(u8[5]{0})M(16)}");
  EXPECT_EQ(LayoutToString(*l),
            "{0,1:D(D,C+~)T(4)L(2)#(u32)*(u16)E(8)S(3)SC(0:2,4)P(u8[5]{0})"
            "M(16)}");
}

TEST(ShapeToStringTest, LayoutToStringWithoutTail) {
  Layout l;
  l.minor_to_major = Dims({1, 0});
  EXPECT_EQ(LayoutToString(l), "{1,0}");
  std::string out = "x";
  AppendLayout(l, &out);
  EXPECT_EQ(out, "x{1,0}");
}

// ---------------------------------------------------------------------------
// Equality and compatibility.
// ---------------------------------------------------------------------------

TEST(ShapeCompareTest, EqualityIncludesLayout) {
  Shape a = F32({2, 3});
  Shape b = F32({2, 3});
  EXPECT_EQ(a, b);
  b.mutable_layout()->minor_to_major = Dims({0, 1});
  EXPECT_NE(a, b);
  EXPECT_TRUE(a.EqualIgnoringLayout(b));
  EXPECT_TRUE(a.Compatible(b));

  Shape c = F32({2, 3});
  Tile t;
  t.dims = Dims({8});
  c.mutable_layout()->mutable_tail().tiles = {t};
  EXPECT_NE(a, c);
  EXPECT_TRUE(a.EqualIgnoringLayout(c));

  Shape d = F32({2, 3});
  d.mutable_layout()->mutable_tail().memory_space = 1;
  EXPECT_NE(a, d);

  Shape no_layout = F32({2, 3});
  no_layout.clear_layout();
  EXPECT_NE(a, no_layout);
  EXPECT_TRUE(a.EqualIgnoringLayout(no_layout));
}

TEST(ShapeCompareTest, ElementTypeAndDimensions) {
  EXPECT_NE(F32({2, 3}), S(T::kBF16, {2, 3}));
  EXPECT_FALSE(F32({2, 3}).EqualIgnoringLayout(S(T::kBF16, {2, 3})));
  EXPECT_FALSE(F32({2, 3}).Compatible(S(T::kBF16, {2, 3})));
  EXPECT_TRUE(F32({2, 3}).CompatibleIgnoringFpPrecision(S(T::kBF16, {2, 3})));
  EXPECT_FALSE(F32({2, 3}).CompatibleIgnoringFpPrecision(S(T::kS32, {2, 3})));
  EXPECT_TRUE(F32({2, 3}).SameDimensions(S(T::kS32, {2, 3})));
  EXPECT_FALSE(F32({2, 3}).SameDimensions(S(T::kS32, {3, 2})));

  EXPECT_NE(F32({2, 3}), F32({3, 2}));
  EXPECT_FALSE(F32({2, 3}).Compatible(F32({3, 2})));
  EXPECT_FALSE(F32({6}).Compatible(F32({2, 3})));
  EXPECT_FALSE(F32({}).Compatible(F32({1})));
}

TEST(ShapeCompareTest, DynamicDimensions) {
  Shape bounded = S(T::kS32, {16});
  bounded.set_dynamic_dimension(0, true);  // s32[<=16]
  Shape s16 = S(T::kS32, {16});
  Shape s8 = S(T::kS32, {8});
  Shape s17 = S(T::kS32, {17});

  // Equality and EqualIgnoringLayout see the dynamic flag.
  EXPECT_NE(bounded, s16);
  EXPECT_FALSE(bounded.EqualIgnoringLayout(s16));
  // Compatible: a dynamic dimension accepts a static size within its bound
  // (both directions).
  EXPECT_TRUE(bounded.Compatible(s16));
  EXPECT_TRUE(s16.Compatible(bounded));
  EXPECT_TRUE(bounded.Compatible(s8));
  EXPECT_TRUE(s8.Compatible(bounded));
  EXPECT_FALSE(bounded.Compatible(s17));
  EXPECT_FALSE(s17.Compatible(bounded));
  EXPECT_TRUE(bounded.Compatible(bounded));

  // '?' is compatible with any size.
  Shape unbounded = S(T::kS32, {kQ});
  unbounded.set_dynamic_dimension(0, true);
  EXPECT_TRUE(unbounded.Compatible(S(T::kS32, {1000})));
  EXPECT_TRUE(S(T::kS32, {0}).Compatible(unbounded));
  EXPECT_TRUE(unbounded.Compatible(bounded));
  EXPECT_FALSE(unbounded.Compatible(S(T::kS32, {2, 2})));
}

TEST(ShapeCompareTest, Tuples) {
  Shape a = Shape::Tuple({F32({2}), Shape::Scalar(T::kS32)});
  Shape b = Shape::Tuple({F32({2}), Shape::Scalar(T::kS32)});
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.Compatible(b));

  // A layout difference inside an element.
  Shape c = a;
  (*c.mutable_tuple_shapes())[0].mutable_layout()->mutable_tail().memory_space =
      2;
  EXPECT_NE(a, c);
  EXPECT_TRUE(a.EqualIgnoringLayout(c));
  EXPECT_TRUE(a.Compatible(c));

  // Different arity or element types.
  Shape d = Shape::Tuple({F32({2})});
  EXPECT_NE(a, d);
  EXPECT_FALSE(a.Compatible(d));
  EXPECT_FALSE(a.EqualIgnoringLayout(d));
  Shape e = Shape::Tuple({F32({2}), Shape::Scalar(T::kU32)});
  EXPECT_FALSE(a.Compatible(e));

  // A tuple is never compatible with an array.
  EXPECT_FALSE(a.Compatible(F32({2})));
  EXPECT_FALSE(F32({2}).Compatible(a));
  EXPECT_FALSE(Shape::Tuple({F32({2})}).EqualIgnoringLayout(F32({2})));

  // Empty tuples.
  EXPECT_EQ(Shape::Tuple({}), Shape::Tuple({}));
  EXPECT_TRUE(Shape::Tuple({}).Compatible(Shape::Tuple({})));
}

TEST(ShapeCompareTest, TokensAndBuffers) {
  EXPECT_EQ(Shape::Token(), Shape::Token());
  EXPECT_TRUE(Shape::Token().Compatible(Shape::Token()));
  EXPECT_FALSE(Shape::Token().Compatible(Shape::Opaque()));
  EXPECT_FALSE(Shape::Token().Compatible(F32({})));

  Shape b1 = Shape::Buffer(F32({4}));
  Shape b2 = Shape::Buffer(F32({4}));
  Shape b3 = Shape::Buffer(F32({5}));
  EXPECT_EQ(b1, b2);
  EXPECT_TRUE(b1.Compatible(b2));
  EXPECT_NE(b1, b3);
  EXPECT_FALSE(b1.Compatible(b3));
  EXPECT_FALSE(b1.EqualIgnoringLayout(b3));
  EXPECT_FALSE(b1.Compatible(F32({4})));
  EXPECT_FALSE(F32({4}).Compatible(b1));
}

// ---------------------------------------------------------------------------
// ElementsIn, SubShape, LeafCount.
// ---------------------------------------------------------------------------

TEST(ShapeTest, ElementsIn) {
  EXPECT_EQ(F32({2, 3}).ElementsIn(), 6);
  EXPECT_EQ(F32({2, 3, 7}).ElementsIn(), 42);
  EXPECT_EQ(F32({}).ElementsIn(), 1);
  EXPECT_EQ(F32({0, 5}).ElementsIn(), 0);
  EXPECT_EQ(F32({5, 0}).ElementsIn(), 0);
  EXPECT_EQ(Shape::Tuple({F32({2})}).ElementsIn(), 0);
  EXPECT_EQ(Shape::Token().ElementsIn(), 0);
  // Bounded dynamic dimensions count their bound.
  Shape b = S(T::kS32, {16, 4});
  b.set_dynamic_dimension(0, true);
  EXPECT_EQ(b.ElementsIn(), 64);
  // Unbounded: no static count.
  Shape u = S(T::kS32, {kQ, 4});
  u.set_dynamic_dimension(0, true);
  EXPECT_EQ(u.ElementsIn(), 0);
}

TEST(ShapeTest, SubShape) {
  // ((f32[], s32[2]), pred[])
  Shape inner = Shape::Tuple({F32({}), S(T::kS32, {2})});
  Shape t = Shape::Tuple({inner, S(T::kPred, {})});
  ASSERT_NE(t.SubShape({}), nullptr);
  EXPECT_EQ(*t.SubShape({}), t);
  ASSERT_NE(t.SubShape({0}), nullptr);
  EXPECT_EQ(*t.SubShape({0}), inner);
  ASSERT_NE(t.SubShape({0, 1}), nullptr);
  EXPECT_EQ(t.SubShape({0, 1})->ToString(), "s32[2]{0}");
  ASSERT_NE(t.SubShape({1}), nullptr);
  EXPECT_EQ(t.SubShape({1})->ToString(), "pred[]");
  EXPECT_EQ(t.SubShape({2}), nullptr);
  EXPECT_EQ(t.SubShape({-1}), nullptr);
  EXPECT_EQ(t.SubShape({1, 0}), nullptr);  // pred[] is not a tuple
  EXPECT_EQ(t.SubShape({0, 2}), nullptr);
  EXPECT_EQ(F32({3}).SubShape({0}), nullptr);
  ASSERT_NE(F32({3}).SubShape({}), nullptr);
}

TEST(ShapeTest, LeafCount) {
  EXPECT_EQ(F32({3}).LeafCount(), 1);
  EXPECT_EQ(Shape::Token().LeafCount(), 1);
  EXPECT_EQ(Shape::Tuple({}).LeafCount(), 0);
  Shape inner = Shape::Tuple({F32({}), S(T::kS32, {2})});
  EXPECT_EQ(
      Shape::Tuple({inner, S(T::kPred, {}), Shape::Tuple({})}).LeafCount(), 3);
}

TEST(ShapeTest, MutableDimensions) {
  Shape s = F32({2, 3});
  s.set_dimensions(1, 9);
  EXPECT_EQ(s.ToString(), "f32[2,9]{1,0}");
  s.set_element_type(T::kBF16);
  EXPECT_EQ(s.ToString(), "bf16[2,9]{1,0}");
}

TEST(LayoutTest, EqualityComparesEveryField) {
  Layout a;
  a.minor_to_major = Dims({1, 0});
  Layout b = a;
  EXPECT_EQ(a, b);
  b.mutable_tail().tail_padding_alignment_in_elements = 4;
  EXPECT_NE(a, b);
  b = a;
  b.mutable_tail().index_primitive_type = T::kU8;
  EXPECT_NE(a, b);
  b = a;
  b.mutable_tail().dynamic_shape_metadata_prefix_bytes = 8;
  EXPECT_NE(a, b);
  b = a;
  b.mutable_tail().physical_shape = std::make_shared<const Shape>(F32({2}));
  EXPECT_NE(a, b);
  a.mutable_tail().physical_shape = std::make_shared<const Shape>(F32({2}));
  EXPECT_EQ(a, b);  // compared by value, not by pointer
  a.mutable_tail().physical_shape = std::make_shared<const Shape>(F32({3}));
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

// The tail is shared between copies: a write to one copy must not show in
// the others, and a layout whose tail was written back to the defaults has
// no tail.
TEST(LayoutTest, CopiesShareTheTailUntilOneWrites) {
  Shape a = F32({2, 3});
  EXPECT_FALSE(a.layout().HasTail());
  EXPECT_EQ(a.layout().tail().tail_padding_alignment_in_elements, 1);
  a.mutable_layout()->mutable_tail().memory_space = 1;
  a.mutable_layout()->mutable_tail().tiles.push_back(Tile{Dims({8, 128})});
  Shape b = a;
  Shape c = b;
  EXPECT_EQ(&a.layout().tail(), &b.layout().tail());  // shared
  b.mutable_layout()->mutable_tail().memory_space = 2;
  EXPECT_EQ(a.layout().tail().memory_space, 1);
  EXPECT_EQ(b.layout().tail().memory_space, 2);
  EXPECT_EQ(c.layout().tail().memory_space, 1);
  EXPECT_EQ(b.layout().tail().tiles.size(), 1u);  // the rest was copied
  EXPECT_EQ(a.ToString(), "f32[2,3]{1,0:T(8,128)S(1)}");
  EXPECT_EQ(b.ToString(), "f32[2,3]{1,0:T(8,128)S(2)}");
  EXPECT_NE(a, b);
  EXPECT_EQ(a, c);
  c.mutable_layout()->mutable_tail().memory_space = 0;
  c.mutable_layout()->mutable_tail().tiles.clear();
  EXPECT_FALSE(c.layout().HasTail());
  EXPECT_EQ(c, F32({2, 3}));
  EXPECT_EQ(c.ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(a.layout().tail().tiles.size(), 1u);
}

TEST(ShapeTest, ArrayBytesSumsLeavesAndSaturates) {
  Shape f32(PrimitiveType::kF32, {2, 3});
  EXPECT_EQ(f32.ArrayBytes(), 24);
  Shape s4(PrimitiveType::kS4, {5});  // one byte per element, as literals
  EXPECT_EQ(s4.ArrayBytes(), 5);
  Shape tuple =
      Shape::Tuple({f32, Shape::Token(), Shape(PrimitiveType::kC64, {2})});
  EXPECT_EQ(tuple.ArrayBytes(), 24 + 0 + 16);
  Shape huge(PrimitiveType::kF64, {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(huge.ArrayBytes(), std::numeric_limits<int64_t>::max());
  Shape two_huge = Shape::Tuple({huge, huge});
  EXPECT_EQ(two_huge.ArrayBytes(), std::numeric_limits<int64_t>::max());
}

TEST(ReplicaGroupsTest, LargestGroupSizeOfEachForm) {
  ReplicaGroups explicit_groups;
  explicit_groups.groups = {{0, 1, 2}, {3}};
  EXPECT_EQ(explicit_groups.LargestGroupSize(), 3);
  ReplicaGroups empty;
  EXPECT_EQ(empty.LargestGroupSize(), 1);
  ReplicaGroups iota;
  iota.form = ReplicaGroups::Form::kIota;
  iota.num_groups = 2;
  iota.group_size = 4;
  EXPECT_EQ(iota.LargestGroupSize(), 4);
  ReplicaGroups mesh;
  mesh.form = ReplicaGroups::Form::kMesh;
  EXPECT_EQ(mesh.LargestGroupSize(), -1);
}

}  // namespace
}  // namespace hlogym
