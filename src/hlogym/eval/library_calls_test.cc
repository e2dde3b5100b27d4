#include "hlogym/eval/library_calls.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hlogym/eval/compare.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

// Runs the module with no custom-call registry: library targets must run
// by default.
absl::StatusOr<Literal> RunModule(const Module& m, uint64_t seed = 1) {
  absl::StatusOr<std::vector<Literal>> inputs =
      GenerateInputs(ParameterShapes(*m.entry_computation()), seed);
  if (!inputs.ok()) return inputs.status();
  Interpreter interp;
  return interp.Run(m, *inputs);
}

std::vector<double> Values(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

constexpr char kDnums[] =
    R"("dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],)"
    R"("rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],)"
    R"("rhs_batch_dimensions":[]})";

std::string GemmModule(const std::string& config,
                       const std::string& operands = "a, b, c",
                       const std::string& target = "__cublas$gemm") {
  return R"(HloModule m
ENTRY e {
  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  b = f32[3,2] constant({{1, 0}, {0, 1}, {1, 1}})
  c = f32[2,2] constant({{10, 20}, {30, 40}})
  v = f32[2] constant({-100, 1})
  g = (f32[2,2], s8[4194304]) custom-call()" +
         operands + R"(), custom_call_target=")" + target +
         R"(", backend_config=)" + config + R"(
  ROOT r = f32[2,2] get-tuple-element(g), index=0
})";
}

TEST(LibraryCallsTest, GemmAlphaBetaExact) {
  // a.b = {{4, 5}, {10, 11}}; 2 * a.b + c.
  auto m = GemmModule(
      std::string(R"({"gemm_backend_config":{"alpha_real":2,"alpha_imag":0,)"
                  R"("beta":1,)") +
      kDnums + R"(,"epilogue":"DEFAULT"}})");
  auto module = Parse(m);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> r = RunModule(*module);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{18, 30, 50, 62}));
}

TEST(LibraryCallsTest, GemmWithoutAddendAndDefaults) {
  // alpha defaults to 1 and beta to 0 when the config omits them.
  auto module = Parse(GemmModule(
      std::string(R"({"gemm_backend_config":{)") + kDnums + "}}", "a, b"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> r = RunModule(*module);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{4, 5, 10, 11}));
}

TEST(LibraryCallsTest, GemmBetaZeroIgnoresAddend) {
  auto module = Parse(GemmModule(
      std::string(R"({"gemm_backend_config":{"alpha_real":1,"beta":0,)") +
      kDnums + "}}"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> r = RunModule(*module);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{4, 5, 10, 11}));
}

TEST(LibraryCallsTest, LtMatmulBiasRelu) {
  // a.b + v along the minor dimension, then ReLU:
  // {{4-100, 5+1}, {10-100, 11+1}} -> {{0, 6}, {0, 12}}.
  auto module = Parse(GemmModule(
      std::string(R"({"gemm_backend_config":{"alpha_real":1,"beta":0,)") +
          kDnums + R"(,"epilogue":"BIAS_RELU"}})",
      "a, b, v", "__cublas$lt$matmul"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> r = RunModule(*module);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{0, 6, 0, 12}));
}

TEST(LibraryCallsTest, LtMatmulMatrixAndVectorBias) {
  // Operands (a, b, c, bias): a.b + c + v = {{4+10-100, 5+20+1}, ...}.
  auto module = Parse(GemmModule(
      std::string(R"({"gemm_backend_config":{"alpha_real":1,"beta":1,)") +
          kDnums + R"(,"epilogue":"BIAS"}})",
      "a, b, c, v", "__cublas$lt$matmul"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> r = RunModule(*module);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{-86, 26, -60, 52}));
}

TEST(LibraryCallsTest, BatchedGemmMatchesDot) {
  const char* kDot = R"(HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})";
  const char* kGemm = R"(HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  g = (f32[2,3,5], s8[0]) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"alpha_imag":0,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["2"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"]},"precision_config":{"operand_precision":["DEFAULT","DEFAULT"],"algorithm":"ALG_UNSET"},"epilogue":"DEFAULT"}}
  ROOT r = f32[2,3,5] get-tuple-element(g), index=0
})";
  auto dot = Parse(kDot);
  auto gemm = Parse(kGemm);
  ASSERT_NE(dot, nullptr);
  ASSERT_NE(gemm, nullptr);
  absl::StatusOr<Literal> want = RunModule(*dot);
  absl::StatusOr<Literal> got = RunModule(*gemm);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  // The same kernel computes both: bitwise equal.
  EXPECT_TRUE(*got == *want);
}

TEST(LibraryCallsTest, ComplexAlpha) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  a = c64[1,1] constant({{(1, 1)}})
  b = c64[1,1] constant({{(2, 0)}})
  g = (c64[1,1], s8[0]) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":0,"alpha_imag":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
  ROOT r = c64[1,1] get-tuple-element(g), index=0
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> r = RunModule(*module);
  ASSERT_TRUE(r.ok()) << r.status();
  // i * (1 + i) * 2 = -2 + 2i.
  EXPECT_EQ(r->GetComplex(0), std::complex<double>(-2, 2));
}

TEST(LibraryCallsTest, GemmErrors) {
  struct Case {
    std::string config;
    std::string operands;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"({"gemm_backend_config":})", "a, b", "not a JSON object"},
      {R"({"gemm_backend_config":{"alpha_real":1}})", "a, b",
       "no dot_dimension_numbers"},
      {R"({"operation_queue_id":"0"})", "a, b", "no gemm_backend_config"},
      {std::string(R"({"gemm_backend_config":{"alpha_real":"x",)") + kDnums +
           "}}",
       "a, b", "'alpha_real' is not a number"},
      {std::string(R"({"gemm_backend_config":{"epilogue":"GELU_AUX",)") +
           kDnums + "}}",
       "a, b", "epilogue GELU_AUX"},
      {std::string(R"({"gemm_backend_config":{"epilogue":"BIAS",)") + kDnums +
           "}}",
       "a, b", "operands"},
      {R"({"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":[true]}}})",
       "a, b", "non-integer"},
  };
  for (const Case& c : cases) {
    auto module = Parse(GemmModule(c.config, c.operands));
    ASSERT_NE(module, nullptr);
    absl::StatusOr<Literal> r = RunModule(*module);
    ASSERT_FALSE(r.ok()) << c.config;
    EXPECT_NE(std::string(r.status().message()).find(c.message),
              std::string::npos)
        << r.status();
  }
}

// Input [1, 2, 4] (b0f), filter of width 2 with output features
// {1, -1} and {-1, 1}: conv = {{-1, 1}, {-2, 2}}.
std::string ConvModule(const std::string& target, const std::string& operands,
                       const std::string& config) {
  return R"(HloModule m
ENTRY e {
  x = f32[1,3,1] constant({{{1}, {2}, {4}}})
  w = f32[2,1,2] constant({{{1, -1}}, {{-1, 1}}})
  bias = f32[2] constant({3, 0.5})
  side = f32[1,2,2] constant({{{10, 20}, {30, 40}}})
  c = (f32[1,2,2], u8[0]) custom-call()" +
         operands +
         R"(), window={size=2}, dim_labels=b0f_0io->b0f, custom_call_target=")" +
         target + R"(", backend_config=)" + config + R"(
  ROOT r = f32[1,2,2] get-tuple-element(c), index=0
})";
}

TEST(LibraryCallsTest, ConvForwardExact) {
  auto module = Parse(ConvModule(
      "__cudnn$convForward", "x, w",
      R"({"cudnn_conv_backend_config":{"conv_result_scale":1,"activation_mode":"kNone","side_input_scale":0,"leakyrelu_alpha":0}})"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> r = RunModule(*module);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{-1, 1, -2, 2}));
}

TEST(LibraryCallsTest, ConvBiasReluExact) {
  // relu(2 * conv + bias): {{1, 2.5}, {-1 -> 0, 4.5}}.
  auto module = Parse(ConvModule(
      "__cudnn$convBiasActivationForward", "x, w, bias",
      R"({"cudnn_conv_backend_config":{"conv_result_scale":2,"activation_mode":"kRelu","side_input_scale":0,"leakyrelu_alpha":0}})"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> r = RunModule(*module);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{1, 2.5, 0, 4.5}));
}

TEST(LibraryCallsTest, ConvSideInputExact) {
  // 2 * conv + 0.5 * side + bias, no activation.
  auto module = Parse(ConvModule(
      "__cudnn$convBiasActivationForward", "x, w, bias, side",
      R"({"cudnn_conv_backend_config":{"conv_result_scale":2,"activation_mode":"kNone","side_input_scale":0.5,"leakyrelu_alpha":0}})"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Literal> r = RunModule(*module);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{6, 12.5, 14, 24.5}));
}

TEST(LibraryCallsTest, ConvErrors) {
  struct Case {
    std::string target, operands, config, message;
  };
  const std::vector<Case> cases = {
      {"__cudnn$convForward", "x, w, bias", "{}", "expects 2 operands"},
      {"__cudnn$convBiasActivationForward", "x, w", "{}", "expects 3 or 4"},
      {"__cudnn$convBiasActivationForward", "x, w, bias",
       R"({"cudnn_conv_backend_config":{"activation_mode":"kSwish"}})",
       "unknown activation_mode"},
      {"__cudnn$convBiasActivationForward", "x, w, side",
       R"({"cudnn_conv_backend_config":{}})", "bias"},
      {"__cudnn$convForward", "x, w", "{conv_result_scale:1}",
       "not a JSON object"},
  };
  for (const Case& c : cases) {
    auto module = Parse(ConvModule(c.target, c.operands, c.config));
    ASSERT_NE(module, nullptr);
    absl::StatusOr<Literal> r = RunModule(*module);
    ASSERT_FALSE(r.ok()) << c.config;
    EXPECT_NE(std::string(r.status().message()).find(c.message),
              std::string::npos)
        << r.status();
  }
}

TEST(LibraryCallsTest, UserRegistryTakesPrecedence) {
  auto module = Parse(GemmModule("{}", "a, b"));
  ASSERT_NE(module, nullptr);
  CustomCallRegistry registry;
  registry.Register(
      "__cublas$gemm",
      [](const Instruction& inst, Operands) -> absl::StatusOr<Literal> {
        Literal out(inst.shape());
        (*out.mutable_tuple_elements())[0].SetFromDouble(0, 7);
        return out;
      });
  InterpreterOptions o;
  o.custom_calls = &registry;
  Interpreter interp(o);
  absl::StatusOr<Literal> r = interp.Run(*module, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<double>{7, 0, 0, 0}));
}

}  // namespace
}  // namespace hlogym
