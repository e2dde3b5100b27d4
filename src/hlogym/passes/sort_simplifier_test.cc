#include "hlogym/passes/sort_simplifier.h"

#include <gtest/gtest.h>

#include <string_view>
#include <utility>
#include <vector>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;

using test::ExpectRewrite;

constexpr char kThreeOperandSort[] = R"(
HloModule m
cmp {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  p4 = f32[] parameter(4)
  p5 = f32[] parameter(5)
  ROOT lt = pred[] compare(p0, p1), direction=LT
}
ENTRY e {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  w = f32[8] parameter(2)
  s = (f32[8], s32[8], f32[8]) sort(k, v, w), dimensions={0}, to_apply=cmp
  USERS
}
)";

std::string WithUsers(const char* users) {
  const std::string text = kThreeOperandSort;
  const size_t pos = text.find("USERS");
  return text.substr(0, pos) + users + text.substr(pos + 5);
}

TEST(SortSimplifierTest, DropsUnusedValueOperands) {
  SortSimplifier pass;
  test::RewriteResult r =
      ExpectRewrite(pass, WithUsers(R"(g0 = f32[8] get-tuple-element(s), index=0
  g2 = f32[8] get-tuple-element(s), index=2
  ROOT a = f32[8] add(g0, g2))"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  const Instruction* g0 = root->operand(0);
  const Instruction* g2 = root->operand(1);
  ASSERT_EQ(g0->opcode(), Opcode::kGetTupleElement);
  ASSERT_EQ(g2->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(g0->tuple_index(), 0);
  EXPECT_EQ(g2->tuple_index(), 1);
  const Instruction* sort = g0->operand(0);
  ASSERT_EQ(sort, g2->operand(0));
  ASSERT_EQ(sort->opcode(), Opcode::kSort);
  ASSERT_EQ(sort->operand_count(), 2);
  EXPECT_EQ(sort->operand(0)->name(), "k");
  EXPECT_EQ(sort->operand(1)->name(), "w");
  EXPECT_EQ(sort->dimensions(), DimVector({0}));
  const Computation* cmp = sort->to_apply();
  ASSERT_EQ(cmp->num_parameters(), 4);
  EXPECT_EQ(cmp->parameter_instruction(2)->shape().element_type(),
            PrimitiveType::kF32);
  EXPECT_EQ(cmp->root_instruction()->operand(0), cmp->parameter_instruction(0));
  EXPECT_EQ(cmp->root_instruction()->operand(1), cmp->parameter_instruction(1));
  // The old comparator is no longer called (removing it is DCE's job).
  const Computation* old_cmp = r.applied->FindComputation("cmp");
  ASSERT_NE(old_cmp, nullptr);
  EXPECT_FALSE(r.applied->Callers().contains(old_cmp));
}

TEST(SortSimplifierTest, SingleKeptOperandGivesAnArraySort) {
  SortSimplifier pass;
  test::RewriteResult r =
      ExpectRewrite(pass, WithUsers(R"(g0 = f32[8] get-tuple-element(s), index=0
  ROOT n = f32[8] negate(g0))"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* sort = test::Root(*r.applied)->operand(0);
  ASSERT_EQ(sort->opcode(), Opcode::kSort);
  EXPECT_TRUE(sort->shape().IsArray());
  ASSERT_EQ(sort->operand_count(), 1);
  EXPECT_EQ(sort->operand(0)->name(), "k");
  EXPECT_EQ(sort->to_apply()->num_parameters(), 2);
}

TEST(SortSimplifierTest, KeepsOperandsTheComparatorReads) {
  SortSimplifier pass;
  // The comparator breaks ties on the second operand: only the third goes.
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
cmp {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  p4 = f32[] parameter(4)
  p5 = f32[] parameter(5)
  lt = pred[] compare(p0, p1), direction=LT
  eq = pred[] compare(p0, p1), direction=EQ
  tie = pred[] compare(p2, p3), direction=LT
  both = pred[] and(eq, tie)
  ROOT r = pred[] or(lt, both)
}
ENTRY e {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  w = f32[8] parameter(2)
  s = (f32[8], s32[8], f32[8]) sort(k, v, w), dimensions={0}, to_apply=cmp
  g0 = f32[8] get-tuple-element(s), index=0
  ROOT n = f32[8] negate(g0)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* sort = test::Root(*r.applied)->operand(0)->operand(0);
  ASSERT_EQ(sort->opcode(), Opcode::kSort);
  ASSERT_EQ(sort->operand_count(), 2);
  EXPECT_EQ(sort->operand(0)->name(), "k");
  EXPECT_EQ(sort->operand(1)->name(), "v");
  EXPECT_EQ(sort->to_apply()->num_parameters(), 4);
}

TEST(SortSimplifierTest, KeepsSortsWithAllOutputsReadOrOpaqueUsers) {
  SortSimplifier pass;
  ExpectNoRewrite(pass, WithUsers(R"(g0 = f32[8] get-tuple-element(s), index=0
  g1 = s32[8] get-tuple-element(s), index=1
  g2 = f32[8] get-tuple-element(s), index=2
  ROOT t = (f32[8], s32[8], f32[8]) tuple(g0, g1, g2))"));
  // A root sort, and a sort read as a whole.
  ExpectNoRewrite(pass, WithUsers("ROOT c = (f32[8], s32[8], f32[8]) copy(s)"));
  std::string root = WithUsers("");
  const size_t pos = root.find("  s = ");
  ExpectNoRewrite(pass, root.substr(0, pos) + "  ROOT" + root.substr(pos + 1));
}

}  // namespace
}  // namespace hlogym
