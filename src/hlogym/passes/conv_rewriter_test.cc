#include "hlogym/passes/conv_rewriter.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "hlogym/cost/evaluator.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/passes/pass_test_util.h"
#include "hlogym/passes/pattern_util.h"

namespace hlogym {
namespace {

using nlohmann::json;
using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::Root;

json ConvConfig(const Instruction* call) {
  json j = json::parse(call->backend_config(), nullptr, false);
  if (j.is_discarded() || !j.contains("cudnn_conv_backend_config")) {
    return nullptr;
  }
  return j["cudnn_conv_backend_config"];
}

const Instruction* CallUnder(const Instruction* gte) {
  if (gte->opcode() != Opcode::kGetTupleElement || gte->tuple_index() != 0 ||
      gte->operand(0)->opcode() != Opcode::kCustomCall) {
    ADD_FAILURE() << "not gte(custom-call, 0): " << gte->name();
    return nullptr;
  }
  return gte->operand(0);
}

// The convolution of `text` named "conv".
const Instruction* FindConv(const Module& m) {
  for (const Instruction* i : m.entry_computation()->instructions()) {
    if (i->name() == "conv") return i;
  }
  return nullptr;
}

constexpr char kPlain[] = R"(
HloModule m
ENTRY e {
  x = f32[1,5,5,2]{3,2,1,0} parameter(0)
  w = f32[3,3,2,4]{3,2,1,0} parameter(1)
  ROOT conv = f32[1,3,3,4]{3,2,1,0} convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, operand_precision={highest,highest}
}
)";

TEST(ConvRewriterTest, ForwardConvolution) {
  ConvRewriter pass;
  auto r = ExpectRewrite(pass, kPlain);
  ASSERT_NE(r.applied, nullptr);
  auto original = test::ParseAndVerify(kPlain);
  const Instruction* conv = FindConv(*original);
  ASSERT_NE(conv, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs().custom_call_target, "__cudnn$convForward");
  EXPECT_EQ(call->name().rfind("cudnn-conv", 0), 0u) << call->name();
  ASSERT_EQ(call->operand_count(), 2);
  EXPECT_EQ(call->operand(0)->name(), "x");
  EXPECT_EQ(call->operand(1)->name(), "w");
  EXPECT_EQ(call->shape().ToString(), "(f32[1,3,3,4]{3,2,1,0}, u8[0]{0})");
  // Window, dimension numbers and precisions move onto the call.
  ASSERT_TRUE(call->attrs().window.has_value());
  EXPECT_EQ(*call->attrs().window, *conv->attrs().window);
  ASSERT_TRUE(call->attrs().conv_dnums.has_value());
  EXPECT_EQ(*call->attrs().conv_dnums, *conv->attrs().conv_dnums);
  EXPECT_EQ(call->attrs().operand_precision, conv->attrs().operand_precision);
  EXPECT_EQ(call->backend_config(),
            R"({"cudnn_conv_backend_config":{"conv_result_scale":1,)"
            R"("activation_mode":"kNone","side_input_scale":0,)"
            R"("leakyrelu_alpha":0}})");
}

TEST(ConvRewriterTest, PrintedCallParsesBack) {
  ConvRewriter pass;
  auto r = ExpectRewrite(pass, kPlain);
  ASSERT_NE(r.applied, nullptr);
  const std::string text = test::Text(*r.applied);
  EXPECT_NE(text.find("window={size=3x3 stride=2x2 pad=1_1x1_1}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("dim_labels=b01f_01io->b01f"), std::string::npos);
  auto reparsed = test::ParseAndVerify(text);
  ASSERT_NE(reparsed, nullptr);
  EXPECT_EQ(DagHash(*reparsed), DagHash(*r.applied));
  EXPECT_EQ(test::Text(*reparsed), text);
}

TEST(ConvRewriterTest, KeepsGroupCountsAndReversal) {
  ConvRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[2,4,6,6] parameter(0)
  w = f32[2,6,3,3] parameter(1)
  ROOT conv = f32[2,6,4,4] convolution(x, w), window={size=3x3 rhs_reversal=1x1}, dim_labels=bf01_io01->bf01, feature_group_count=2
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs().feature_group_count, 2);
  EXPECT_EQ(call->attrs().batch_group_count, 1);
  EXPECT_TRUE(call->attrs().window->dimensions[0].window_reversal);
}

TEST(ConvRewriterTest, NoSpatialDimensions) {
  ConvRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  w = f32[3,4] parameter(1)
  ROOT conv = f32[2,4] convolution(x, w), dim_labels=bf_io->bf
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs().custom_call_target, "__cudnn$convForward");
  EXPECT_FALSE(call->attrs().window.has_value());
}

TEST(ConvRewriterTest, FusesScaleBiasRelu) {
  ConvRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  w = f32[3,3,2,4] parameter(1)
  bias = f32[4] parameter(2)
  conv = f32[1,3,3,4] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f
  s = f32[] constant(0.5)
  sb = f32[1,3,3,4] broadcast(s), dimensions={}
  scaled = f32[1,3,3,4] multiply(sb, conv)
  bb = f32[1,3,3,4] broadcast(bias), dimensions={3}
  add = f32[1,3,3,4] add(scaled, bb)
  z = f32[] constant(0)
  zb = f32[1,3,3,4] broadcast(z), dimensions={}
  ROOT relu = f32[1,3,3,4] maximum(add, zb)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs().custom_call_target,
            "__cudnn$convBiasActivationForward");
  EXPECT_EQ(call->name().rfind("cudnn-conv-bias-activation", 0), 0u);
  ASSERT_EQ(call->operand_count(), 3);
  EXPECT_EQ(call->operand(0)->name(), "x");
  EXPECT_EQ(call->operand(1)->name(), "w");
  EXPECT_EQ(call->operand(2)->name(), "bias");
  json cfg = ConvConfig(call);
  ASSERT_TRUE(cfg.is_object()) << call->backend_config();
  EXPECT_EQ(cfg["conv_result_scale"], 0.5);
  EXPECT_EQ(cfg["activation_mode"], "kRelu");
  EXPECT_EQ(cfg["side_input_scale"], 0);
  EXPECT_EQ(cfg["leakyrelu_alpha"], 0);
  // Only parameters, the call and its gte remain.
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 5);
}

TEST(ConvRewriterTest, ReluAloneGetsAZeroBias) {
  ConvRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  conv = f32[1,3,3,3] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  zb = f32[1,3,3,3] broadcast(z), dimensions={}
  ROOT relu = f32[1,3,3,3] maximum(conv, zb)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->operand_count(), 3);
  const Instruction* bias = call->operand(2);
  ASSERT_EQ(bias->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(bias->shape().dimensions(), (DimVector{3}));
  EXPECT_TRUE(IsAll(bias, 0));
  EXPECT_EQ(ConvConfig(call)["activation_mode"], "kRelu");
}

TEST(ConvRewriterTest, ScalarBiasAndSideInput) {
  ConvRewriter pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  side = f32[1,3,3,3] parameter(2)
  c = f32[] parameter(3)
  conv = f32[1,3,3,3] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f
  add = f32[1,3,3,3] add(conv, side)
  cb = f32[1,3,3,3] broadcast(c), dimensions={}
  ROOT add2 = f32[1,3,3,3] add(cb, add)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = CallUnder(Root(*r.applied));
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->operand_count(), 4);
  const Instruction* bias = call->operand(2);
  ASSERT_EQ(bias->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(bias->operand(0)->name(), "c");
  EXPECT_EQ(bias->shape().dimensions(), (DimVector{3}));
  EXPECT_EQ(call->operand(3)->name(), "side");
  json cfg = ConvConfig(call);
  EXPECT_EQ(cfg["side_input_scale"], 1);
  EXPECT_EQ(cfg["activation_mode"], "kNone");
}

TEST(ConvRewriterTest, DepthwiseAndSharedConvolutionsStayUnfused) {
  ConvRewriter pass;
  // Depthwise: feature_group_count equals the input features.
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,1,2] parameter(1)
  bias = f32[2] parameter(2)
  conv = f32[1,3,3,2] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=2
  bb = f32[1,3,3,2] broadcast(bias), dimensions={3}
  ROOT add = f32[1,3,3,2] add(conv, bb)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kAdd);
  const Instruction* call = CallUnder(root->operand(0));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs().custom_call_target, "__cudnn$convForward");
  // The convolution has a second user.
  r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  bias = f32[3] parameter(2)
  conv = f32[1,3,3,3] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f
  bb = f32[1,3,3,3] broadcast(bias), dimensions={3}
  add = f32[1,3,3,3] add(conv, bb)
  ROOT t = (f32[1,3,3,3], f32[1,3,3,3]) tuple(add, conv)
}
)");
  ASSERT_NE(r.applied, nullptr);
  root = Root(*r.applied);
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kAdd);
  call = CallUnder(root->operand(1));
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs().custom_call_target, "__cudnn$convForward");
}

TEST(ConvRewriterTest, FuseOptionOff) {
  ConvRewriter pass;
  ASSERT_TRUE(pass.SetOption("fuse", "false").ok());
  EXPECT_FALSE(pass.SetOption("nosuch", "1").ok());
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  conv = f32[1,3,3,3] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  zb = f32[1,3,3,3] broadcast(z), dimensions={}
  ROOT relu = f32[1,3,3,3] maximum(conv, zb)
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(Root(*r.applied)->opcode(), Opcode::kMaximum);
  EXPECT_TRUE(PassRegistry::Global().Contains("conv-rewriter"));
}

TEST(ConvRewriterTest, LeavesUnsupportedConvolutions) {
  ConvRewriter pass;
  // Integer convolution.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  x = s32[1,4,4,2] parameter(0)
  w = s32[2,2,2,3] parameter(1)
  ROOT conv = s32[1,3,3,3] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f
}
)");
  // lhs dilation (a backward-input convolution to XLA).
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  ROOT conv = f32[1,6,6,3] convolution(x, w), window={size=2x2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
}
)");
  // batch_group_count > 1 (a backward-filter convolution to XLA).
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[2,4,4,2] parameter(0)
  w = f32[2,2,2,4] parameter(1)
  ROOT conv = f32[1,3,3,4] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, batch_group_count=2
}
)");
  // Negative padding.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[1,6,6,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  ROOT conv = f32[1,3,3,3] convolution(x, w), window={size=2x2 pad=-1_-1x-1_-1}, dim_labels=b01f_01io->b01f
}
)");
  // Reversal in only some dimensions.
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  ROOT conv = f32[1,3,3,3] convolution(x, w), window={size=2x2 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f
}
)");
}

TEST(ConvRewriterTest, CostModelPricesTheCalls) {
  const char* kFused = R"(
HloModule m
ENTRY e {
  x = f32[8,32,32,16]{3,2,1,0} parameter(0)
  w = f32[3,3,16,32]{3,2,1,0} parameter(1)
  bias = f32[32]{0} parameter(2)
  conv = f32[8,32,32,32]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[8,32,32,32]{3,2,1,0} broadcast(bias), dimensions={3}
  add = f32[8,32,32,32]{3,2,1,0} add(conv, bb)
  z = f32[] constant(0)
  zb = f32[8,32,32,32]{3,2,1,0} broadcast(z), dimensions={}
  ROOT relu = f32[8,32,32,32]{3,2,1,0} maximum(add, zb)
}
)";
  ConvRewriter pass;
  absl::StatusOr<std::unique_ptr<Evaluator>> ev = CreateEvaluator("model:h100");
  ASSERT_TRUE(ev.ok()) << ev.status();
  for (const char* text : {kPlain, kFused}) {
    // The large one is too slow for the interpreter's output check.
    auto r = ExpectRewrite(pass, text, /*check_outputs=*/text == kPlain);
    ASSERT_NE(r.applied, nullptr);
    auto original = test::ParseAndVerify(text);
    absl::StatusOr<EvaluationResult> before = (*ev)->Evaluate(*original);
    absl::StatusOr<EvaluationResult> after = (*ev)->Evaluate(*r.applied);
    ASSERT_TRUE(before.ok()) << before.status();
    ASSERT_TRUE(after.ok()) << after.status();
    for (const std::string& f : after->flags) {
      EXPECT_EQ(f.find("unknown"), std::string::npos) << f;
    }
    EXPECT_EQ(after->kernel_count, 1);
    EXPECT_GT(after->flops, 0);
    // The plain call does exactly the convolution's work.
    if (text == kPlain) {
      EXPECT_EQ(after->flops, before->flops);
    }
  }
}

}  // namespace
}  // namespace hlogym
