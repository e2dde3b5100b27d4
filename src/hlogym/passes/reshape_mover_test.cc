#include "hlogym/passes/reshape_mover.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::Root;

TEST(ReshapeMoverTest, SinksEquivalentReshapes) {
  ReshapeMover pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  ROOT s = f32[6] add(ra, rb)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kReshape);
  const Instruction* add = root->operand(0);
  ASSERT_EQ(add->opcode(), Opcode::kAdd);
  EXPECT_EQ(add->shape().dimensions(), (DimVector{2, 3}));
  EXPECT_EQ(add->operand(0)->name(), "a");
  EXPECT_EQ(add->operand(1)->name(), "b");
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 4);
}

TEST(ReshapeMoverTest, SinksTransposeAndRearrangesConstant) {
  ReshapeMover pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  t = f32[3,2] transpose(a), dimensions={1,0}
  c = f32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})
  ROOT m = f32[3,2] multiply(t, c)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kTranspose);
  EXPECT_EQ(root->dimensions(), (DimVector{1, 0}));
  const Instruction* mul = root->operand(0);
  ASSERT_EQ(mul->opcode(), Opcode::kMultiply);
  EXPECT_EQ(mul->operand(0)->name(), "a");
  ASSERT_EQ(mul->operand(1)->opcode(), Opcode::kTranspose);
  EXPECT_EQ(mul->operand(1)->operand(0)->name(), "c");
}

TEST(ReshapeMoverTest, ConvertKeepsItsElementType) {
  ReshapeMover pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = s32[2,3] parameter(0)
  ra = s32[3,2] reshape(a)
  h = f32[] constant(0.5)
  b = f32[3,2] broadcast(h), dimensions={}
  c = f32[3,2] convert(ra)
  ROOT s = f32[3,2] add(c, b)
}
)");
  ASSERT_NE(r.applied, nullptr);
  // convert(reshape(a)) -> reshape(convert(a)).
  const Instruction* add = Root(*r.applied);
  ASSERT_EQ(add->opcode(), Opcode::kAdd);
  const Instruction* re = add->operand(0);
  ASSERT_EQ(re->opcode(), Opcode::kReshape);
  ASSERT_EQ(re->operand(0)->opcode(), Opcode::kConvert);
  EXPECT_EQ(re->operand(0)->shape().element_type(), PrimitiveType::kF32);
  EXPECT_EQ(re->operand(0)->shape().dimensions(), (DimVector{2, 3}));
}

// Sinking a widening convert below a sub-byte transpose: the convert takes
// the transpose operand's layout but not its element size (E(4) is for s4
// only; the verifier rejects it on s8).
TEST(ReshapeMoverTest, WideningConvertDropsTheSubByteElementSize) {
  ReshapeMover pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = s4[4,6]{1,0:E(4)} parameter(0)
  t = s4[6,4]{0,1:E(4)} transpose(a), dimensions={1,0}
  h = s8[] constant(3)
  b = s8[6,4]{1,0} broadcast(h), dimensions={}
  c = s8[6,4]{1,0} convert(t)
  ROOT s = s8[6,4]{1,0} add(c, b)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* t = Root(*r.applied)->operand(0);
  ASSERT_EQ(t->opcode(), Opcode::kTranspose);
  const Instruction* c = t->operand(0);
  ASSERT_EQ(c->opcode(), Opcode::kConvert);
  EXPECT_EQ(c->shape().element_type(), PrimitiveType::kS8);
  ASSERT_TRUE(c->shape().has_layout());
  EXPECT_EQ(c->shape().layout().tail().element_size_in_bits, 0);
  EXPECT_EQ(c->shape().layout().minor_to_major, (DimVector{1, 0}));
}

TEST(ReshapeMoverTest, KeepsReshapesOfDifferentShapes) {
  ReshapeMover pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  ROOT s = f32[6] add(ra, rb)
}
)");
}

TEST(ReshapeMoverTest, KeepsReshapeWithUserOutside) {
  ReshapeMover pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  s = f32[6] add(ra, rb)
  d = f32[6,6] dot(ra, rb), lhs_contracting_dims={}, rhs_contracting_dims={}
  ROOT t = (f32[6], f32[6,6]) tuple(s, d)
}
)");
}

constexpr char kVectorBroadcast[] = R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  v = f32[3] parameter(1)
  ra = f32[6] reshape(a)
  va = f32[2,3] broadcast(v), dimensions={1}
  rv = f32[6] reshape(va)
  ROOT s = f32[6] add(ra, rv)
}
)";

TEST(ReshapeMoverTest, OneDimensionalBroadcastOnlyWhenCheap) {
  ReshapeMover plain;
  // Both reshapes are non-trivial and equivalent: moved in any case.
  auto r = ExpectRewrite(plain, kVectorBroadcast);
  ASSERT_NE(r.applied, nullptr);
  ASSERT_EQ(Root(*r.applied)->opcode(), Opcode::kReshape);
  ExpectNoRewrite(plain, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  v = f32[3] parameter(1)
  ra = f32[3,2] reshape(a)
  b = f32[3,2] broadcast(v), dimensions={0}
  ROOT s = f32[3,2] add(ra, b)
}
)");
  ReshapeMoverOptions o;
  o.reshape_of_1d_broadcast_is_cheap = true;
  ReshapeMover cheap(o);
  auto c = ExpectRewrite(cheap, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  v = f32[3] parameter(1)
  ra = f32[3,2] reshape(a)
  b = f32[3,2] broadcast(v), dimensions={0}
  ROOT s = f32[3,2] add(ra, b)
}
)");
  ASSERT_NE(c.applied, nullptr);
  const Instruction* root = Root(*c.applied);
  ASSERT_EQ(root->opcode(), Opcode::kReshape);
  const Instruction* add = root->operand(0);
  EXPECT_EQ(add->operand(0)->name(), "a");
  ASSERT_EQ(add->operand(1)->opcode(), Opcode::kReshape);
  EXPECT_EQ(add->operand(1)->operand(0)->name(), "b");
}

TEST(ReshapeMoverTest, KeepsTransposeOfUnsortedBroadcast) {
  ReshapeMover pass;
  // The broadcast dimensions {0,1} seen through the transpose are {1,0}.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  v = f32[3,2] parameter(1)
  t = f32[3,2] transpose(a), dimensions={1,0}
  b = f32[3,2] broadcast(v), dimensions={0,1}
  ROOT s = f32[3,2] add(t, b)
}
)");
}

TEST(ReshapeMoverTest, IsRegistered) {
  EXPECT_TRUE(PassRegistry::Global().Contains("reshape-mover"));
  ReshapeMover pass;
  EXPECT_TRUE(pass.SetOption("reshape_of_1d_broadcast_is_cheap", "1").ok());
  EXPECT_FALSE(pass.SetOption("nope", "1").ok());
}

}  // namespace
}  // namespace hlogym
