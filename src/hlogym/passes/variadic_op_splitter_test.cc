#include "hlogym/passes/variadic_op_splitter.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

// A concatenate of `n` f32[2] parameters.
std::string Concat(int n) {
  std::ostringstream text;
  text << "HloModule concat\nENTRY main {\n";
  for (int i = 0; i < n; ++i) {
    text << "  p" << i << " = f32[2] parameter(" << i << ")\n";
  }
  text << "  ROOT c = f32[" << 2 * n << "] concatenate(";
  for (int i = 0; i < n; ++i) text << (i > 0 ? ", " : "") << "p" << i;
  text << "), dimensions={0}\n}\n";
  return text.str();
}

void ExpectParameters(const Instruction& concat, int first, int count) {
  ASSERT_EQ(concat.opcode(), Opcode::kConcatenate);
  ASSERT_EQ(concat.operand_count(), count);
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(concat.operand(i)->opcode(), Opcode::kParameter);
    EXPECT_EQ(concat.operand(i)->parameter_number(), first + i);
  }
}

TEST(VariadicOpSplitter, SplitsIntoGroupsOf128) {
  VariadicOpSplitter pass;
  test::RewriteResult r = test::ExpectRewrite(pass, Concat(300));
  // Two full groups; the 44 left over join the top level directly.
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kConcatenate);
  ASSERT_EQ(root->operand_count(), 2 + 44);
  EXPECT_EQ(root->shape().dimensions(0), 600);
  EXPECT_EQ(root->dimensions(0), 0);
  ExpectParameters(*root->operand(0), 0, 128);
  ExpectParameters(*root->operand(1), 128, 128);
  EXPECT_EQ(root->operand(0)->shape().dimensions(0), 256);
  for (int i = 0; i < 44; ++i) {
    EXPECT_EQ(root->operand(2 + i)->parameter_number(), 256 + i);
  }
  EXPECT_EQ(r.dry.alternatives, 1);
}

TEST(VariadicOpSplitter, OneOperandOver) {
  VariadicOpSplitter pass;
  test::RewriteResult r = test::ExpectRewrite(pass, Concat(129));
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kConcatenate);
  ASSERT_EQ(root->operand_count(), 2);
  ExpectParameters(*root->operand(0), 0, 128);
  EXPECT_EQ(root->operand(1)->parameter_number(), 128);
}

TEST(VariadicOpSplitter, TwoLevels) {
  // 128 * 129 operands: 129 groups of 128, then one group of 128 groups
  // and the last group passing through, then one concatenate of two.
  VariadicOpSplitter pass;
  auto m = test::ParseAndVerify(Concat(128 * 129));
  ASSERT_TRUE(pass.Run(m.get()).ok());
  ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  const Instruction* root = test::Root(*m);
  ASSERT_EQ(root->operand_count(), 2);
  const Instruction* left = root->operand(0);
  ASSERT_EQ(left->operand_count(), 128);
  EXPECT_EQ(left->operand(0)->opcode(), Opcode::kConcatenate);
  ExpectParameters(*left->operand(0), 0, 128);
  const Instruction* right = root->operand(1);
  ASSERT_EQ(right->opcode(), Opcode::kConcatenate);
  ASSERT_EQ(right->operand_count(), 128);
  ExpectParameters(*right, 128 * 128, 128);
  EXPECT_EQ(root->shape().dimensions(0), 2 * 128 * 129);
}

TEST(VariadicOpSplitter, At128NothingHappens) {
  VariadicOpSplitter pass;
  test::ExpectNoRewrite(pass, Concat(128));
}

}  // namespace
}  // namespace hlogym
