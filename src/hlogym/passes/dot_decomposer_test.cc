#include "hlogym/passes/dot_decomposer.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::Root;

TEST(DotDecomposerTest, MergesContractingDimensions) {
  DotDecomposer pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[3,4,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kReshape);
  const Instruction* d = root->operand(0);
  ASSERT_EQ(d->opcode(), Opcode::kDot);
  EXPECT_EQ(d->shape().dimensions(), (DimVector{2, 5}));
  // No transposes needed: the groups are already in order.
  ASSERT_EQ(d->operand(0)->opcode(), Opcode::kReshape);
  EXPECT_EQ(d->operand(0)->shape().dimensions(), (DimVector{2, 12}));
  EXPECT_EQ(d->operand(0)->operand(0)->name(), "a");
  ASSERT_EQ(d->operand(1)->opcode(), Opcode::kReshape);
  EXPECT_EQ(d->operand(1)->shape().dimensions(), (DimVector{12, 5}));
  const DotDimensionNumbers& dn = *d->attrs().dot_dnums;
  EXPECT_EQ(dn.lhs_contracting_dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(dn.rhs_contracting_dimensions, (std::vector<int64_t>{0}));
}

TEST(DotDecomposerTest, MovesBatchDimensionsFirst) {
  DotDecomposer pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[4,5,2] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={2}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* d = Root(*r.applied)->operand(0);
  ASSERT_EQ(d->opcode(), Opcode::kDot);
  EXPECT_EQ(d->shape().dimensions(), (DimVector{2, 3, 5}));
  const Instruction* lhs = d->operand(0);
  ASSERT_EQ(lhs->opcode(), Opcode::kTranspose);
  EXPECT_EQ(lhs->dimensions(), (DimVector{1, 0, 2}));
  const Instruction* rhs = d->operand(1);
  ASSERT_EQ(rhs->opcode(), Opcode::kTranspose);
  EXPECT_EQ(rhs->dimensions(), (DimVector{2, 0, 1}));
  const DotDimensionNumbers& dn = *d->attrs().dot_dnums;
  EXPECT_EQ(dn.lhs_batch_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(dn.rhs_batch_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(dn.lhs_contracting_dimensions, (std::vector<int64_t>{2}));
  EXPECT_EQ(dn.rhs_contracting_dimensions, (std::vector<int64_t>{1}));
}

TEST(DotDecomposerTest, OuterProductGetsUnitContraction) {
  DotDecomposer pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[4] parameter(1)
  ROOT d = f32[3,4] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* d = Root(*r.applied)->operand(0);
  ASSERT_EQ(d->opcode(), Opcode::kDot);
  EXPECT_EQ(d->operand(0)->shape().dimensions(), (DimVector{3, 1}));
  EXPECT_EQ(d->operand(1)->shape().dimensions(), (DimVector{1, 4}));
}

TEST(DotDecomposerTest, KeepsCanonicalDots) {
  DotDecomposer pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
  // Contracting dimension 0 of a matrix is still canonical for XLA.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)");
}

TEST(DotDecomposerTest, IsRegistered) {
  EXPECT_TRUE(PassRegistry::Global().Contains("dot-decomposer"));
}

}  // namespace
}  // namespace hlogym
