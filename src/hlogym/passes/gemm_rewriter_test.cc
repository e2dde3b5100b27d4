#include "hlogym/passes/gemm_rewriter.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "hlogym/cost/evaluator.h"
#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using nlohmann::json;
using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::Root;

// The gemm_backend_config of a call (null on malformed JSON).
json GemmConfig(const Instruction* call) {
  json j = json::parse(call->backend_config(), nullptr, false);
  if (j.is_discarded() || !j.contains("gemm_backend_config")) return nullptr;
  return j["gemm_backend_config"];
}

// gte(custom-call, 0) -> the custom call (nullptr otherwise).
const Instruction* CallUnder(const Instruction* gte) {
  if (gte->opcode() != Opcode::kGetTupleElement || gte->tuple_index() != 0 ||
      gte->operand(0)->opcode() != Opcode::kCustomCall) {
    ADD_FAILURE() << "not gte(custom-call, 0): " << gte->name();
    return nullptr;
  }
  return gte->operand(0);
}

std::unique_ptr<GemmRewriter> LtPass() {
  auto pass = std::make_unique<GemmRewriter>();
  EXPECT_TRUE(pass->SetOption("cublaslt", "true").ok());
  return pass;
}

TEST(GemmRewriterTest, PlainDot) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  ROOT d = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs().custom_call_target, "__cublas$gemm");
  EXPECT_EQ(call->name().rfind("cublas-gemm", 0), 0u) << call->name();
  ASSERT_EQ(call->operand_count(), 2);
  EXPECT_EQ(call->operand(0)->name(), "a");
  EXPECT_EQ(call->operand(1)->name(), "b");
  EXPECT_EQ(call->shape().ToString(), "(f32[2,4]{1,0}, s8[4194304]{0})");
  EXPECT_TRUE(call->attrs().output_to_operand_aliasing.empty());
  json cfg = GemmConfig(call);
  ASSERT_TRUE(cfg.is_object()) << call->backend_config();
  EXPECT_EQ(cfg["alpha_real"], 1);
  EXPECT_EQ(cfg["alpha_imag"], 0);
  EXPECT_EQ(cfg["beta"], 0);
  EXPECT_EQ(cfg["epilogue"], "DEFAULT");
  const json& d = cfg["dot_dimension_numbers"];
  EXPECT_EQ(d["lhs_contracting_dimensions"], json::array({"1"}));
  EXPECT_EQ(d["rhs_contracting_dimensions"], json::array({"0"}));
  EXPECT_EQ(d["lhs_batch_dimensions"], json::array());
  EXPECT_EQ(d["rhs_batch_dimensions"], json::array());
  EXPECT_EQ(cfg["precision_config"]["operand_precision"],
            json::array({"DEFAULT", "DEFAULT"}));
  EXPECT_EQ(cfg["precision_config"]["algorithm"], "ALG_UNSET");
  // The exact text XLA prints for the same config.
  EXPECT_EQ(
      call->backend_config(),
      R"({"gemm_backend_config":{"alpha_real":1,"alpha_imag":0,"beta":0,)"
      R"("dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],)"
      R"("rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],)"
      R"("rhs_batch_dimensions":[]},"precision_config":{"operand_precision":)"
      R"(["DEFAULT","DEFAULT"],"algorithm":"ALG_UNSET"},"epilogue":"DEFAULT",)"
      R"("damax_output":false,"grad_x":false,"grad_y":false}})");
}

TEST(GemmRewriterTest, TransposedOperandsBatchAndPrecision) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,4,3] parameter(0)
  b = f32[2,5,4] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={2}, operand_precision={highest,high}
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->name().rfind("cublas-batch-gemm", 0), 0u) << call->name();
  EXPECT_EQ(call->shape().ToString(), "(f32[2,3,5]{2,1,0}, s8[4194304]{0})");
  json cfg = GemmConfig(call);
  const json& d = cfg["dot_dimension_numbers"];
  EXPECT_EQ(d["lhs_contracting_dimensions"], json::array({"1"}));
  EXPECT_EQ(d["rhs_contracting_dimensions"], json::array({"2"}));
  EXPECT_EQ(d["lhs_batch_dimensions"], json::array({"0"}));
  EXPECT_EQ(d["rhs_batch_dimensions"], json::array({"0"}));
  EXPECT_EQ(cfg["precision_config"]["operand_precision"],
            json::array({"HIGHEST", "HIGH"}));
}

TEST(GemmRewriterTest, MatrixVectorAndHalfTypes) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = bf16[3,4] parameter(0)
  b = bf16[4] parameter(1)
  ROOT d = f32[3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs().custom_call_target, "__cublas$gemm");
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f16[3,4] parameter(0)
  b = f16[4,2] parameter(1)
  ROOT d = f16[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
}

TEST(GemmRewriterTest, Int8GemmKeepsItsMultiply) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = s8[2,3] parameter(0)
  b = s8[3,4] parameter(1)
  d = s32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  two = s32[] constant(2)
  t = s32[2,4] broadcast(two), dimensions={}
  ROOT m = s32[2,4] multiply(d, t)
}
)");
  ASSERT_NE(r.applied, nullptr);
  // s32 GEMMs take fixed alpha/beta: the multiply stays.
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kMultiply);
  const Instruction* call = CallUnder(root->operand(0));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(GemmConfig(call)["alpha_real"], 1);
}

TEST(GemmRewriterTest, FoldsAlpha) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[] constant(0.5)
  k = f32[2,4] broadcast(c), dimensions={}
  m = f32[2,4] multiply(k, d)
  c3 = f32[] constant(3)
  k3 = f32[2,4] broadcast(c3), dimensions={}
  ROOT m3 = f32[2,4] multiply(m, k3)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->operand_count(), 2);
  json cfg = GemmConfig(call);
  EXPECT_EQ(cfg["alpha_real"], 1.5);
  EXPECT_EQ(cfg["beta"], 0);
  // Nothing of the epilogue is left in the graph.
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 4);
}

TEST(GemmRewriterTest, ComplexAlpha) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = c64[2,3] parameter(0)
  b = c64[3,2] parameter(1)
  d = c64[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = c64[] constant((0, 2))
  k = c64[2,2] broadcast(c), dimensions={}
  ROOT m = c64[2,2] multiply(d, k)
}
)");
  ASSERT_NE(r.applied, nullptr);
  json cfg = GemmConfig(CallUnder(Root(*r.applied)));
  EXPECT_EQ(cfg["alpha_real"], 0);
  EXPECT_EQ(cfg["alpha_imag"], 2);
}

TEST(GemmRewriterTest, AlphaNeedsItsBroadcastUnshared) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[] constant(2)
  k = f32[2,4] broadcast(c), dimensions={}
  m = f32[2,4] multiply(d, k)
  ROOT t = (f32[2,4], f32[2,4]) tuple(m, k)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* m = Root(*r.applied)->operand(0);
  ASSERT_EQ(m->opcode(), Opcode::kMultiply);
  EXPECT_EQ(GemmConfig(CallUnder(m->operand(0)))["alpha_real"], 1);
}

TEST(GemmRewriterTest, FoldsMatrixBiasWithAliasing) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  p = f32[2,4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[] constant(2)
  k = f32[2,4] broadcast(c), dimensions={}
  m = f32[2,4] multiply(d, k)
  bias = f32[2,4] exponential(p)
  ROOT add = f32[2,4] add(bias, m)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->operand_count(), 3);
  EXPECT_EQ(call->operand(0)->name(), "a");
  EXPECT_EQ(call->operand(1)->name(), "b");
  EXPECT_EQ(call->operand(2)->name(), "bias");
  json cfg = GemmConfig(call);
  EXPECT_EQ(cfg["alpha_real"], 2);
  EXPECT_EQ(cfg["beta"], 1);
  EXPECT_EQ(cfg["epilogue"], "DEFAULT");
  // The legacy call writes its result over the addend.
  ASSERT_EQ(call->attrs().output_to_operand_aliasing.size(), 1u);
  const OutputOperandAlias& alias = call->attrs().output_to_operand_aliasing[0];
  EXPECT_EQ(alias.output_index, (ShapeIndex{0}));
  EXPECT_EQ(alias.operand, 2);
  EXPECT_TRUE(alias.operand_index.empty());
}

TEST(GemmRewriterTest, LegacyBiasMustBeOverwritable) {
  GemmRewriter pass;
  // A parameter addend cannot be overwritten: the add stays.
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  p = f32[2,4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT add = f32[2,4] add(d, p)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kAdd);
  const Instruction* call = CallUnder(root->operand(0));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->operand_count(), 2);
  EXPECT_EQ(GemmConfig(call)["beta"], 0);
  // Neither can an addend with another user.
  r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  p = f32[2,4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bias = f32[2,4] exponential(p)
  add = f32[2,4] add(d, bias)
  ROOT t = (f32[2,4], f32[2,4]) tuple(add, bias)
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(Root(*r.applied)->operand(0)->opcode(), Opcode::kAdd);
}

TEST(GemmRewriterTest, DotWithTwoUsersKeepsItsAdd) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  p = f32[2,4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bias = f32[2,4] exponential(p)
  add = f32[2,4] add(d, bias)
  ROOT t = (f32[2,4], f32[2,4]) tuple(add, d)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  const Instruction* add = root->operand(0);
  ASSERT_EQ(add->opcode(), Opcode::kAdd);
  const Instruction* call = CallUnder(root->operand(1));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->operand_count(), 2);
  EXPECT_EQ(add->operand(0), root->operand(1));
}

TEST(GemmRewriterTest, LegacyDoesNotFoldVectorBiasOrRelu) {
  GemmRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  v = f32[4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  vb = f32[2,4] broadcast(v), dimensions={1}
  add = f32[2,4] add(d, vb)
  z = f32[] constant(0)
  zb = f32[2,4] broadcast(z), dimensions={}
  ROOT relu = f32[2,4] maximum(add, zb)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kMaximum);
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kAdd);
  EXPECT_NE(CallUnder(root->operand(0)->operand(0)), nullptr);
}

TEST(GemmRewriterTest, LtVectorBiasRelu) {
  auto pass = LtPass();
  auto r = ExpectRewrite(*pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  v = f32[4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  vb = f32[2,4] broadcast(v), dimensions={1}
  add = f32[2,4] add(vb, d)
  z = f32[] constant(0)
  zb = f32[2,4] broadcast(z), dimensions={}
  ROOT relu = f32[2,4] maximum(zb, add)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs().custom_call_target, "__cublas$lt$matmul");
  EXPECT_EQ(call->name().rfind("cublas-lt-matmul", 0), 0u) << call->name();
  ASSERT_EQ(call->operand_count(), 3);
  EXPECT_EQ(call->operand(2)->name(), "v");
  json cfg = GemmConfig(call);
  EXPECT_EQ(cfg["epilogue"], "BIAS_RELU");
  EXPECT_EQ(cfg["beta"], 0);
}

TEST(GemmRewriterTest, LtMatrixBiasThenVectorBias) {
  auto pass = LtPass();
  // cublasLt reads the addend out of place: a parameter is fine, and no
  // aliasing is set.
  auto r = ExpectRewrite(*pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  p = f32[2,4] parameter(2)
  v = f32[4] parameter(3)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  add = f32[2,4] add(d, p)
  vb = f32[2,4] broadcast(v), dimensions={1}
  ROOT add2 = f32[2,4] add(add, vb)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->operand_count(), 4);
  EXPECT_EQ(call->operand(2)->name(), "p");
  EXPECT_EQ(call->operand(3)->name(), "v");
  json cfg = GemmConfig(call);
  EXPECT_EQ(cfg["beta"], 1);
  EXPECT_EQ(cfg["epilogue"], "BIAS");
  EXPECT_TRUE(call->attrs().output_to_operand_aliasing.empty());
}

TEST(GemmRewriterTest, LtReluOnly) {
  auto pass = LtPass();
  auto r = ExpectRewrite(*pass, R"(
HloModule m
ENTRY e {
  a = f16[2,3] parameter(0)
  b = f16[3,4] parameter(1)
  d = f16[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f16[] constant(0)
  zb = f16[2,4] broadcast(z), dimensions={}
  ROOT relu = f16[2,4] maximum(d, zb)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(GemmConfig(call)["epilogue"], "RELU");
}

TEST(GemmRewriterTest, LtBiasOnTheWrongDimensionStays) {
  auto pass = LtPass();
  auto r = ExpectRewrite(*pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  v = f32[2] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  vb = f32[2,4] broadcast(v), dimensions={0}
  ROOT add = f32[2,4] add(d, vb)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kAdd);
  const Instruction* call = CallUnder(root->operand(0));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->operand_count(), 2);
  EXPECT_EQ(GemmConfig(call)["epilogue"], "DEFAULT");
}

TEST(GemmRewriterTest, LtKeepsInt8OnLegacyGemm) {
  auto pass = LtPass();
  auto r = ExpectRewrite(*pass, R"(
HloModule m
ENTRY e {
  a = s8[2,3] parameter(0)
  b = s8[3,4] parameter(1)
  ROOT d = s32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(CallUnder(Root(*r.applied))->attrs().custom_call_target,
            "__cublas$gemm");
}

TEST(GemmRewriterTest, EpiloguesOff) {
  GemmRewriter pass;
  ASSERT_TRUE(pass.SetOption("fuse_epilogues", "false").ok());
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[] constant(2)
  k = f32[2,4] broadcast(c), dimensions={}
  ROOT m = f32[2,4] multiply(d, k)
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(Root(*r.applied)->opcode(), Opcode::kMultiply);
}

TEST(GemmRewriterTest, Options) {
  GemmRewriter pass;
  EXPECT_TRUE(pass.SetOption("workspace_bytes", "0").ok());
  EXPECT_FALSE(pass.SetOption("workspace_bytes", "-1").ok());
  EXPECT_FALSE(pass.SetOption("cublaslt", "maybe").ok());
  EXPECT_FALSE(pass.SetOption("nosuch", "").ok());
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(CallUnder(Root(*r.applied))->shape().ToString(),
            "(f32[2,4]{1,0}, s8[0]{0})");
  EXPECT_TRUE(PassRegistry::Global().Contains("gemm-rewriter"));
}

TEST(GemmRewriterTest, LeavesUnsupportedDots) {
  GemmRewriter pass;
  // Mixed operand types.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = s8[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  // Rank 4.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,2,3,4] parameter(0)
  b = f32[2,2,4,5] parameter(1)
  ROOT d = f32[2,2,3,5] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
}
)");
  // Vector . vector.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)");
  // Two contracting dimensions (left for the dot decomposer).
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[3,4,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
}
)");
  // Integer types other than s8 -> s32.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = s32[2,3] parameter(0)
  b = s32[3,4] parameter(1)
  ROOT d = s32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  // A rank-2 transpose operand is left for transpose folding.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  t = f32[2,3] transpose(a), dimensions={1,0}
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
}

TEST(GemmRewriterTest, CostModelPricesTheCalls) {
  const char* kText = R"(
HloModule m
ENTRY e {
  a = f32[64,32]{1,0} parameter(0)
  b = f32[32,16]{1,0} parameter(1)
  ROOT d = f32[64,16]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  const char* kFused = R"(
HloModule m
ENTRY e {
  a = f32[64,32]{1,0} parameter(0)
  b = f32[32,16]{1,0} parameter(1)
  p = f32[64,16]{1,0} parameter(2)
  v = f32[16]{0} parameter(3)
  d = f32[64,16]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  add = f32[64,16]{1,0} add(d, p)
  vb = f32[64,16]{1,0} broadcast(v), dimensions={1}
  add2 = f32[64,16]{1,0} add(add, vb)
  z = f32[] constant(0)
  zb = f32[64,16]{1,0} broadcast(z), dimensions={}
  ROOT relu = f32[64,16]{1,0} maximum(add2, zb)
}
)";
  GemmRewriter legacy;
  auto lt = LtPass();
  for (auto [pass, text] : {std::pair<Pass*, const char*>{&legacy, kText},
                            std::pair<Pass*, const char*>{lt.get(), kFused}}) {
    auto r = ExpectRewrite(*pass, text);
    ASSERT_NE(r.applied, nullptr);
    auto original = test::ParseAndVerify(text);
    absl::StatusOr<std::unique_ptr<Evaluator>> ev =
        CreateEvaluator("model:h100");
    ASSERT_TRUE(ev.ok()) << ev.status();
    absl::StatusOr<EvaluationResult> before = (*ev)->Evaluate(*original);
    absl::StatusOr<EvaluationResult> after = (*ev)->Evaluate(*r.applied);
    ASSERT_TRUE(before.ok()) << before.status();
    ASSERT_TRUE(after.ok()) << after.status();
    for (const std::string& f : after->flags) {
      EXPECT_EQ(f.find("unknown"), std::string::npos) << f;
    }
    // The call does the dot's multiply-adds.
    EXPECT_GE(after->flops, 2.0 * 64 * 16 * 32);
    if (pass == &legacy) {
      EXPECT_EQ(after->flops, before->flops);
    }
    EXPECT_EQ(after->kernel_count, 1);
  }
}

}  // namespace
}  // namespace hlogym
