#include "hlogym/passes/batchnorm_expander.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::Root;

using test::ExpectRewrite;

int64_t Count(const Computation* c, Opcode op) {
  int64_t n = 0;
  c->ForEachInstruction([&](Instruction* i) { n += i->opcode() == op; });
  return n;
}

TEST(BatchNormExpanderTest, ExpandsTraining) {
  BatchNormExpander pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[2,3,4] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT bn = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Computation* entry = r.applied->entry_computation();
  EXPECT_EQ(Count(entry, Opcode::kBatchNormTraining), 0);
  EXPECT_EQ(Count(entry, Opcode::kReduce), 2);
  EXPECT_EQ(Count(entry, Opcode::kRsqrt), 1);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kTuple);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kAdd);
  // mean = sum / 8 and var = E[x^2] - E[x]^2.
  ASSERT_EQ(root->operand(1)->opcode(), Opcode::kDivide);
  EXPECT_EQ(root->operand(1)->operand(0)->opcode(), Opcode::kReduce);
  EXPECT_EQ(root->operand(1)->operand(0)->dimensions(), (DimVector{0, 2}));
  const Instruction* count = root->operand(1)->operand(1)->operand(0);
  ASSERT_EQ(count->opcode(), Opcode::kConstant);
  EXPECT_EQ(count->literal().GetAsDouble(0), 8.0);
  EXPECT_EQ(root->operand(2)->opcode(), Opcode::kSubtract);
}

TEST(BatchNormExpanderTest, ExpandsInference) {
  BatchNormExpander pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  mu = f32[3] parameter(3)
  v = f32[3] parameter(4)
  av = f32[3] abs(v)
  ROOT bn = f32[2,3] batch-norm-inference(x, s, o, mu, av), epsilon=0.5, feature_index=1
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  // x * broadcast(scale') + broadcast(offset - mean * scale').
  ASSERT_EQ(root->opcode(), Opcode::kAdd);
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kMultiply);
  EXPECT_EQ(root->operand(0)->operand(0)->name(), "x");
  ASSERT_EQ(root->operand(1)->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(root->operand(1)->dimensions(), (DimVector{1}));
  EXPECT_EQ(root->operand(1)->operand(0)->opcode(), Opcode::kSubtract);
}

TEST(BatchNormExpanderTest, ExpandsGrad) {
  BatchNormExpander pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[4,2] parameter(0)
  s = f32[2] parameter(1)
  mu = f32[2] parameter(2)
  v = f32[2] parameter(3)
  dy = f32[4,2] parameter(4)
  av = f32[2] abs(v)
  ROOT bn = (f32[4,2], f32[2], f32[2]) batch-norm-grad(x, s, mu, av, dy), epsilon=0.5, feature_index=1
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kTuple);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kMultiply);
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kMultiply);
  ASSERT_EQ(root->operand(2)->opcode(), Opcode::kReduce);
  EXPECT_EQ(root->operand(2)->operand(0)->name(), "dy");
  EXPECT_EQ(Count(r.applied->entry_computation(), Opcode::kBatchNormGrad), 0);
}

TEST(BatchNormExpanderTest, KeepsIntegerAndDynamicShapes) {
  BatchNormExpander pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[<=4,3] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT bn = (f32[<=4,3], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
}
)");
}

TEST(BatchNormExpanderTest, IsRegistered) {
  EXPECT_TRUE(PassRegistry::Global().Contains("batchnorm-expander"));
}

}  // namespace
}  // namespace hlogym
