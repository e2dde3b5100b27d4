#include "hlogym/passes/transpose_folding.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::Root;

TEST(TransposeFoldingTest, FoldsLhsTranspose) {
  TransposeFolding pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[3,4] parameter(1)
  t = f32[2,3] transpose(a), dimensions={1,0}
  ROOT d = f32[2,4] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* d = Root(*r.applied);
  ASSERT_EQ(d->opcode(), Opcode::kDot);
  EXPECT_EQ(d->operand(0)->name(), "a");
  EXPECT_EQ(d->operand(1)->name(), "b");
  const DotDimensionNumbers& dn = *d->attrs().dot_dnums;
  EXPECT_EQ(dn.lhs_contracting_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(dn.rhs_contracting_dimensions, (std::vector<int64_t>{0}));
}

TEST(TransposeFoldingTest, FoldsBothOperandsOfBatchDot) {
  TransposeFolding pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[5,3,2] parameter(0)
  b = f32[5,4,3] parameter(1)
  ta = f32[5,2,3] transpose(a), dimensions={0,2,1}
  tb = f32[5,3,4] transpose(b), dimensions={0,2,1}
  ROOT d = f32[5,2,4] dot(ta, tb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* d = Root(*r.applied);
  EXPECT_EQ(d->operand(0)->name(), "a");
  EXPECT_EQ(d->operand(1)->name(), "b");
  const DotDimensionNumbers& dn = *d->attrs().dot_dnums;
  EXPECT_EQ(dn.lhs_batch_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(dn.lhs_contracting_dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(dn.rhs_batch_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(dn.rhs_contracting_dimensions, (std::vector<int64_t>{2}));
}

TEST(TransposeFoldingTest, KeepsTransposeThatReordersNonContractingDims) {
  TransposeFolding pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[4,5] parameter(1)
  t = f32[2,3,4] transpose(a), dimensions={1,0,2}
  ROOT d = f32[2,3,5] dot(t, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
}
)");
}

TEST(TransposeFoldingTest, KeepsTransposeThatMakesBatchMostMinor) {
  TransposeFolding pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[3,4,5] parameter(0)
  b = f32[5,4,6] parameter(1)
  t = f32[5,3,4] transpose(a), dimensions={2,0,1}
  ROOT d = f32[5,3,6] dot(t, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
}

TEST(TransposeFoldingTest, KeepsDotWithVectorOperand) {
  TransposeFolding pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  v = f32[3] parameter(1)
  t = f32[2,3] transpose(a), dimensions={1,0}
  ROOT d = f32[2] dot(t, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
}

constexpr char kConv[] = R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  k = f32[3,3,2,3] parameter(1)
  t = f32[1,2,4,4] transpose(x), dimensions={0,3,1,2}
  ROOT c = f32[1,3,4,4] convolution(t, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_01io->bf01
}
)";

TEST(TransposeFoldingTest, FoldsConvolutionInput) {
  TransposeFolding pass;
  auto r = ExpectRewrite(pass, kConv);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* c = Root(*r.applied);
  ASSERT_EQ(c->opcode(), Opcode::kConvolution);
  EXPECT_EQ(c->operand(0)->name(), "x");
  const ConvolutionDimensionNumbers& dn = *c->attrs().conv_dnums;
  EXPECT_EQ(dn.input_batch_dimension, 0);
  EXPECT_EQ(dn.input_feature_dimension, 3);
  EXPECT_EQ(dn.input_spatial_dimensions, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(dn.output_feature_dimension, 1);
}

TEST(TransposeFoldingTest, ConvolutionFoldingOption) {
  TransposeFoldingOptions o;
  o.fold_convolutions = false;
  TransposeFolding pass(o);
  ExpectNoRewrite(pass, kConv);
  EXPECT_TRUE(pass.SetOption("fold_convolutions", "true").ok());
  ExpectRewrite(pass, kConv);
}

TEST(TransposeFoldingTest, IsRegistered) {
  EXPECT_TRUE(PassRegistry::Global().Contains("transpose-folding"));
}

}  // namespace
}  // namespace hlogym
