#include "hlogym/passes/slice_sinker.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::Root;

TEST(SliceSinkerTest, SinksSlicesCoveringTheSources) {
  SliceSinker pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  a0 = f32[4] slice(a), slice={[0:4]}
  a1 = f32[4] slice(a), slice={[4:8]}
  b0 = f32[4] slice(b), slice={[0:4]}
  b1 = f32[4] slice(b), slice={[4:8]}
  x0 = f32[4] add(a0, b0)
  x1 = f32[4] add(a1, b1)
  ROOT t = (f32[4], f32[4]) tuple(x0, x1)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* t = Root(*r.applied);
  ASSERT_EQ(t->opcode(), Opcode::kTuple);
  const Instruction* p0 = t->operand(0);
  const Instruction* p1 = t->operand(1);
  ASSERT_EQ(p0->opcode(), Opcode::kSlice);
  ASSERT_EQ(p1->opcode(), Opcode::kSlice);
  EXPECT_EQ(p0->attrs().slice[0].start, 0);
  EXPECT_EQ(p1->attrs().slice[0].start, 4);
  const Instruction* add = p0->operand(0);
  EXPECT_EQ(add, p1->operand(0));
  ASSERT_EQ(add->opcode(), Opcode::kAdd);
  EXPECT_EQ(add->operand(0)->name(), "a");
  EXPECT_EQ(add->operand(1)->name(), "b");
  // One alternative per (op, use): the two tuple slots.
  EXPECT_EQ(r.dry.alternatives, 2);
}

TEST(SliceSinkerTest, KeepsGroupCoveringLessThanTheSource) {
  SliceSinker pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  a0 = f32[4] slice(a), slice={[0:4]}
  b0 = f32[4] slice(b), slice={[0:4]}
  a1 = f32[4] slice(a), slice={[4:8]}
  x0 = f32[4] add(a0, b0)
  n1 = f32[4] negate(a1)
  ROOT t = (f32[4], f32[4]) tuple(x0, n1)
}
)");
}

TEST(SliceSinkerTest, KeepsSlicesAtDifferentOffsets) {
  SliceSinker pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  a0 = f32[4] slice(a), slice={[0:4]}
  b1 = f32[4] slice(b), slice={[4:8]}
  a1 = f32[4] slice(a), slice={[4:8]}
  b0 = f32[4] slice(b), slice={[0:4]}
  x0 = f32[4] add(a0, b1)
  x1 = f32[4] add(a1, b0)
  ROOT t = (f32[4], f32[4]) tuple(x0, x1)
}
)");
}

TEST(SliceSinkerTest, IsRegistered) {
  EXPECT_TRUE(PassRegistry::Global().Contains("slice-sinker"));
}

}  // namespace
}  // namespace hlogym
