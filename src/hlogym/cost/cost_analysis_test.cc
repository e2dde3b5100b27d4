#include "hlogym/cost/cost_analysis.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

const Instruction* Find(const Module& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    if (const Instruction* i = c->FindInstruction(name)) return i;
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

const OpProfile& H100Profile() {
  const OpProfile* p = FindOpProfile("sm_90");
  EXPECT_NE(p, nullptr);
  return *p;
}

CostAnalysisOptions GpuOptions(bool count_multiple) {
  CostAnalysisOptions o;
  o.op_profile = &H100Profile();
  o.count_multiple_input_accesses = count_multiple;
  o.immediate_constant_max_elements = 8;
  return o;
}

// Properties of instruction `name` of a module given as text.
CostProperties Props(const std::string& text, std::string_view name,
                     CostAnalysisOptions options = {}) {
  auto m = Parse(text);
  if (m == nullptr) return {};
  const Instruction* inst = Find(*m, name);
  if (inst == nullptr) return {};
  CostAnalysis analysis(options);
  absl::StatusOr<CostProperties> p = analysis.Analyze(*inst);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : CostProperties{};
}

constexpr char kAddRegion[] = R"(
%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";

TEST(CostAnalysisTest, ShapeSizes) {
  EXPECT_EQ(ShapeSizeBytes(Shape(PrimitiveType::kF32, {10, 20})), 800);
  EXPECT_EQ(ShapeSizeBytes(Shape(PrimitiveType::kPred, {10})), 10);
  EXPECT_EQ(ShapeSizeBytes(Shape(PrimitiveType::kS4, {10})), 10);
  Shape packed(PrimitiveType::kS4, {11});
  packed.mutable_layout()->mutable_tail().element_size_in_bits = 4;
  EXPECT_EQ(ShapeSizeBytes(packed), 6);
  EXPECT_EQ(ShapeSizeBytes(Shape::Tuple({Shape(PrimitiveType::kF32, {2}),
                                         Shape::Scalar(PrimitiveType::kS32)})),
            16);
  Shape no_layout(PrimitiveType::kF32, {4});
  no_layout.clear_layout();
  EXPECT_EQ(ShapeSizeBytes(no_layout), 0);
  Shape dynamic(PrimitiveType::kF32, {4, 8});
  dynamic.set_dynamic_dimension(1, true);
  EXPECT_EQ(ShapeSizeBytes(dynamic), 128 + 8);
  EXPECT_EQ(ShapeSizeBytes(Shape::Token()), 0);
}

TEST(CostAnalysisTest, ElementwiseGeneric) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[10,20], p1: f32[10,20]) -> f32[10,20] {
  %p0 = f32[10,20]{1,0} parameter(0)
  %p1 = f32[10,20]{1,0} parameter(1)
  ROOT %add = f32[10,20]{1,0} add(%p0, %p1)
})";
  CostProperties p = Props(text, "add");
  EXPECT_EQ(p.flops, 200);
  EXPECT_EQ(p.transcendentals, 0);
  EXPECT_EQ(p.bytes_accessed, 2400);
  EXPECT_EQ(p.output_bytes, 800);
  ASSERT_EQ(p.operand_bytes.size(), 2u);
  EXPECT_EQ(p.operand_bytes[0], 800);
  EXPECT_EQ(p.operand_bytes[1], 800);
  EXPECT_EQ(p.operand_utilization[0], 1.0);
  EXPECT_EQ(p.optimal_seconds, 0);

  CostAnalysisOptions rates;
  rates.flops_per_second = 1e9;
  rates.bytes_per_second = 1e9;
  // max(200 / 1e9, 2400 / 1e9)
  EXPECT_DOUBLE_EQ(Props(text, "add", rates).optimal_seconds, 2.4e-6);
}

TEST(CostAnalysisTest, ElementwiseGpuUsesTheOpProfile) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[10,20], p1: f32[10,20]) -> pred[10,20] {
  %p0 = f32[10,20]{1,0} parameter(0)
  %p1 = f32[10,20]{1,0} parameter(1)
  %add = f32[10,20]{1,0} add(%p0, %p1)
  %mul = f32[10,20]{1,0} multiply(%p0, %p1)
  %div = f32[10,20]{1,0} divide(%p0, %p1)
  ROOT %cmp = pred[10,20]{1,0} compare(%add, %mul), direction=LT
})";
  // sm_90: f32 add 7, multiply 3, divide 19 cycles; pred compare is not
  // in the table (3).
  EXPECT_EQ(Props(text, "add", GpuOptions(false)).flops, 1400);
  EXPECT_EQ(Props(text, "mul", GpuOptions(false)).flops, 600);
  EXPECT_EQ(Props(text, "div", GpuOptions(false)).flops, 3800);
  CostProperties cmp = Props(text, "cmp", GpuOptions(false));
  EXPECT_EQ(cmp.flops, 600);
  EXPECT_EQ(cmp.bytes_accessed, 200 + 800 + 800);
}

TEST(CostAnalysisTest, Transcendentals) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[100], p1: f16[8]) -> f16[8] {
  %p0 = f32[100]{0} parameter(0)
  %exp = f32[100]{0} exponential(%p0)
  %p1 = f16[8]{0} parameter(1)
  %acos = f16[8]{0} acos(%p1)
  ROOT %tanh = f16[8]{0} tanh(%p1)
})";
  CostProperties exp = Props(text, "exp");
  EXPECT_EQ(exp.flops, 0);
  EXPECT_EQ(exp.transcendentals, 100);
  EXPECT_EQ(exp.bytes_accessed, 800);
  // Not in the generic transcendental list: one flop per element.
  EXPECT_EQ(Props(text, "acos").flops, 8);
  EXPECT_EQ(Props(text, "acos").transcendentals, 0);
  // GPU rules fold transcendentals into flops (sm_90: f32 exp 79, f16
  // tanh 502).
  CostProperties gpu_exp = Props(text, "exp", GpuOptions(false));
  EXPECT_EQ(gpu_exp.flops, 7900);
  EXPECT_EQ(gpu_exp.transcendentals, 0);
  EXPECT_EQ(Props(text, "tanh", GpuOptions(false)).flops, 4016);
}

TEST(CostAnalysisTest, FreeInstructions) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[1,8]) -> f32[8,1] {
  %p0 = f32[1,8]{1,0} parameter(0)
  %c = f32[4]{0} constant({1, 2, 3, 4})
  %t = f32[8,1]{1,0} transpose(%p0), dimensions={1,0}
  %b = f32[8]{0} bitcast(%p0)
  %tuple = (f32[8,1]{1,0}, f32[8,1]{1,0}, f32[8]{0}) tuple(%t, %t, %b)
  ROOT %gte = f32[8,1]{1,0} get-tuple-element(%tuple), index=0
})";
  for (const char* name : {"p0", "c", "t", "b", "gte"}) {
    CostProperties p = Props(text, name);
    EXPECT_EQ(p.bytes_accessed, 0) << name;
    EXPECT_EQ(p.output_bytes, 0) << name;
    EXPECT_EQ(p.flops, 0) << name;
  }
  // A tuple writes its table of pointers.
  CostProperties t = Props(text, "tuple");
  EXPECT_EQ(t.bytes_accessed, 24);
  EXPECT_EQ(t.output_bytes, 24);
  EXPECT_EQ(t.operand_bytes[0], 0);
}

TEST(CostAnalysisTest, TransposeThatMovesData) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[4,8]) -> f32[8,4] {
  %p0 = f32[4,8]{1,0} parameter(0)
  ROOT %t = f32[8,4]{1,0} transpose(%p0), dimensions={1,0}
})";
  CostProperties p = Props(text, "t");
  EXPECT_EQ(p.bytes_accessed, 256);
  EXPECT_EQ(p.flops, 0);
}

TEST(CostAnalysisTest, Dot) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[2,3,4], p1: f32[2,4,5]) -> f32[2,3,5] {
  %p0 = f32[2,3,4]{2,1,0} parameter(0)
  %p1 = f32[2,4,5]{2,1,0} parameter(1)
  ROOT %d = f32[2,3,5]{2,1,0} dot(%p0, %p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})";
  CostProperties p = Props(text, "d");
  // 2 * 30 output elements * 4 contracted.
  EXPECT_EQ(p.flops, 240);
  EXPECT_EQ(p.bytes_accessed, 96 + 160 + 120);
  EXPECT_EQ(Props(text, "d", GpuOptions(true)).flops, 240);
}

TEST(CostAnalysisTest, ConvolutionSamePadding) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[1,5,5,2], p1: f32[3,3,2,4]) -> f32[1,5,5,4] {
  %p0 = f32[1,5,5,2]{3,2,1,0} parameter(0)
  %p1 = f32[3,3,2,4]{3,2,1,0} parameter(1)
  ROOT %conv = f32[1,5,5,4]{3,2,1,0} convolution(%p0, %p1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})";
  // Valid (output, tap) pairs per spatial dim: 4 + 5 + 4 = 13; 13 * 13 =
  // 169 positions; 2 * 2 in-features * 4 out-features * 1 batch * 169.
  EXPECT_EQ(Props(text, "conv").flops, 2704);
}

TEST(CostAnalysisTest, ConvolutionStridedGrouped) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[1,7,4], p1: f32[3,2,6]) -> f32[1,3,6] {
  %p0 = f32[1,7,4]{2,1,0} parameter(0)
  %p1 = f32[3,2,6]{2,1,0} parameter(1)
  ROOT %conv = f32[1,3,6]{2,1,0} convolution(%p0, %p1), window={size=3 stride=2}, dim_labels=b0f_0io->b0f, feature_group_count=2
})";
  // 3 taps * 3 outputs all in bounds = 9; 2 * (4 / 2) * 6 * 1 * 9.
  EXPECT_EQ(Props(text, "conv").flops, 216);
}

TEST(CostAnalysisTest, ConvolutionBaseDilation) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[1,3,1], p1: f32[3,1,1]) -> f32[1,3,1] {
  %p0 = f32[1,3,1]{2,1,0} parameter(0)
  %p1 = f32[3,1,1]{2,1,0} parameter(1)
  ROOT %conv = f32[1,3,1]{2,1,0} convolution(%p0, %p1), window={size=3 lhs_dilate=2}, dim_labels=b0f_0io->b0f
})";
  // Input positions o + k must be even and below 6: (0,0) (0,2) (1,1)
  // (2,0) (2,2).
  EXPECT_EQ(Props(text, "conv").flops, 10);
}

TEST(CostAnalysisTest, Reduce) {
  const std::string text = std::string("HloModule m\n") + kAddRegion + R"(
ENTRY %e (p0: f32[8,16]) -> f32[8] {
  %p0 = f32[8,16]{1,0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[8]{0} reduce(%p0, %zero), dimensions={1}, to_apply=%add_f32
})";
  CostProperties g = Props(text, "r");
  EXPECT_EQ(g.flops, 120);  // 128 inputs - 8 outputs additions
  EXPECT_EQ(g.bytes_accessed, 32 + 512 + 4);
  // GPU: sm_90 f32 add = 7 cycles; each output element reads the init.
  CostProperties p = Props(text, "r", GpuOptions(false));
  EXPECT_EQ(p.flops, 840);
  EXPECT_EQ(p.output_bytes, 32);
  EXPECT_EQ(p.operand_bytes[0], 512);
  EXPECT_EQ(p.operand_bytes[1], 32);
  EXPECT_EQ(p.operand_utilization[1], 8);
  EXPECT_EQ(p.bytes_accessed, 32 + 512 + 32);
}

TEST(CostAnalysisTest, ReduceWindow) {
  const std::string text = std::string("HloModule m\n") + kAddRegion + R"(
ENTRY %e (p0: f32[10], p1: f32[5]) -> f32[5] {
  %p0 = f32[10]{0} parameter(0)
  %zero = f32[] constant(0)
  %rw = f32[8]{0} reduce-window(%p0, %zero), window={size=3}, to_apply=%add_f32
  %p1 = f32[5]{0} parameter(1)
  ROOT %cumsum = f32[5]{0} reduce-window(%p1, %zero), window={size=9 pad=4_4}, to_apply=%add_f32
})";
  CostProperties g = Props(text, "rw");
  EXPECT_EQ(g.flops, 16);  // (3 - 1) * 8
  EXPECT_EQ(g.operand_utilization[0], 1);
  CostAnalysisOptions multi;
  multi.count_multiple_input_accesses = true;
  CostProperties m = Props(text, "rw", multi);
  EXPECT_DOUBLE_EQ(m.operand_utilization[0], 2.4);  // 8 * 3 / 10
  EXPECT_EQ(m.operand_bytes[0], 96);                // 8 * 3 * 4 bytes
  // Reduction along the one dimension, then broadcast: 5 / 5 + (5 - 1).
  EXPECT_EQ(Props(text, "cumsum").flops, 5);
}

TEST(CostAnalysisTest, GatherAndScatter) {
  const std::string text = std::string("HloModule m\n") + kAddRegion + R"(
ENTRY %e (p0: f32[100,8], p1: s32[5,1], p2: f32[5,8]) -> f32[100,8] {
  %p0 = f32[100,8]{1,0} parameter(0)
  %p1 = s32[5,1]{1,0} parameter(1)
  %p2 = f32[5,8]{1,0} parameter(2)
  %g = f32[5,8]{1,0} gather(%p0, %p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  ROOT %sc = f32[100,8]{1,0} scatter(%p0, %p1, %p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add_f32
})";
  CostProperties g = Props(text, "g");
  EXPECT_EQ(g.bytes_accessed, 2 * 160 + 20);
  EXPECT_EQ(g.operand_bytes[0], 160);
  EXPECT_DOUBLE_EQ(g.operand_utilization[0], 0.05);  // 40 / 800
  EXPECT_EQ(g.flops, 0);
  CostProperties s = Props(text, "sc");
  EXPECT_EQ(s.bytes_accessed, 3 * 160 + 20);
  EXPECT_EQ(s.output_bytes, 160);
  EXPECT_EQ(s.flops, 40);  // one add per update element
  EXPECT_EQ(Props(text, "sc", GpuOptions(false)).flops, 280);  // 7 * 40
}

TEST(CostAnalysisTest, Slices) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[10,10], p1: f32[100], p2: f32[10], i: s32[]) -> f32[100] {
  %p0 = f32[10,10]{1,0} parameter(0)
  %p1 = f32[100]{0} parameter(1)
  %p2 = f32[10]{0} parameter(2)
  %i = s32[] parameter(3)
  %sl = f32[4,10]{1,0} slice(%p0), slice={[2:6], [0:10]}
  %ds = f32[20]{0} dynamic-slice(%p1, %i), dynamic_slice_sizes={20}
  ROOT %dus = f32[100]{0} dynamic-update-slice(%p1, %p2, %i)
})";
  CostProperties sl = Props(text, "sl");
  EXPECT_EQ(sl.bytes_accessed, 320);
  EXPECT_EQ(sl.operand_bytes[0], 160);
  EXPECT_DOUBLE_EQ(sl.operand_utilization[0], 0.4);
  CostProperties ds = Props(text, "ds");
  EXPECT_EQ(ds.bytes_accessed, 2 * 80 + 4);
  EXPECT_EQ(ds.operand_bytes[0], 80);
  EXPECT_DOUBLE_EQ(ds.operand_utilization[0], 0.2);
  CostProperties dus = Props(text, "dus");
  EXPECT_EQ(dus.bytes_accessed, 2 * 40 + 4);
  EXPECT_EQ(dus.output_bytes, 40);
  EXPECT_EQ(dus.operand_bytes[0], 0);
  EXPECT_EQ(dus.operand_bytes[1], 40);
  EXPECT_DOUBLE_EQ(dus.operand_utilization[0], 0.9);
}

TEST(CostAnalysisTest, ConcatenateGpu) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[10,33], p1: f32[10,7], p2: f32[10,32]) -> f32[30,32] {
  %p0 = f32[10,33]{1,0} parameter(0)
  %p1 = f32[10,7]{1,0} parameter(1)
  %p2 = f32[10,32]{1,0} parameter(2)
  %odd = f32[10,40]{1,0} concatenate(%p0, %p1), dimensions={1}
  %aligned = f32[10,64]{1,0} concatenate(%p2, %p2), dimensions={1}
  ROOT %rows = f32[30,32]{1,0} concatenate(%p2, %p2, %p2), dimensions={0}
})";
  EXPECT_EQ(Props(text, "odd", GpuOptions(false)).flops, 400 * 400);
  EXPECT_EQ(Props(text, "aligned", GpuOptions(false)).flops, 6 * 640);
  EXPECT_EQ(Props(text, "rows", GpuOptions(false)).flops, 6 * 960);
  EXPECT_EQ(Props(text, "rows").flops, 0);
}

TEST(CostAnalysisTest, OtherOpcodes) {
  const std::string text = std::string("HloModule m\n") + kAddRegion + R"(
%exp_region (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %y = f32[] exponential(%x)
}
%ge_region (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE
}
ENTRY %e (p0: f32[1000], p1: c64[8,16], a: f32[4,4], b: f32[4,6], p4: f32[4], p5: f32[2]) -> f32[1000] {
  %p0 = f32[1000]{0} parameter(0)
  %sort = f32[1000]{0} sort(%p0), dimensions={0}, to_apply=%ge_region
  %map = f32[1000]{0} map(%p0), dimensions={0}, to_apply=%exp_region
  %p1 = c64[8,16]{1,0} parameter(1)
  %fft = c64[8,16]{1,0} fft(%p1), fft_type=FFT, fft_length={16}
  %a = f32[4,4]{1,0} parameter(2)
  %b = f32[4,6]{1,0} parameter(3)
  %ts = f32[4,6]{1,0} triangular-solve(%a, %b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  %zero = f32[] constant(0)
  %one = f32[] constant(1)
  %rng = f32[1000]{0} rng(%zero, %one), distribution=rng_uniform
  %ar = f32[1000]{0} all-reduce(%p0), replica_groups={}, to_apply=%add_f32
  %p4 = f32[4]{0} parameter(4)
  %p5 = f32[2]{0} parameter(5)
  %sas = f32[4]{0} select-and-scatter(%p4, %p5, %zero), window={size=2 stride=2}, select=%ge_region, scatter=%add_f32
  ROOT %out = f32[1000]{0} add(%sort, %map)
})";
  EXPECT_EQ(Props(text, "sort").flops, 10000);  // 1000 * ceil(log2 1000)
  CostProperties map = Props(text, "map");
  EXPECT_EQ(map.transcendentals, 1000);
  EXPECT_EQ(map.flops, 0);
  EXPECT_EQ(Props(text, "fft").flops, 2 * 4 * 4 * 128);
  CostProperties ts = Props(text, "ts");
  EXPECT_EQ(ts.flops, 2 * 4 * 24);
  EXPECT_EQ(ts.bytes_accessed, 96 + 32 + 96);
  EXPECT_EQ(ts.operand_bytes[0], 32);
  EXPECT_EQ(Props(text, "rng").transcendentals, 1000);
  CostProperties ar = Props(text, "ar");
  EXPECT_EQ(ar.flops, 1000);
  EXPECT_EQ(ar.bytes_accessed, 8000);
  EXPECT_EQ(Props(text, "ar", GpuOptions(false)).flops, 7000);
  // select: 2 sources * (2 - 1) compares; scatter: 2 adds.
  EXPECT_EQ(Props(text, "sas").flops, 4);
}

TEST(CostAnalysisTest, CustomCalls) {
  const std::string text = R"(HloModule m
ENTRY %e (p0: f32[16,32], p1: f32[32,8]) -> f32[16,8] {
  %p0 = f32[16,32]{1,0} parameter(0)
  %p1 = f32[32,8]{1,0} parameter(1)
  %mystery = f32[16,8]{1,0} custom-call(%p0, %p1), custom_call_target="my_kernel"
  %lt = (f32[16,8]{1,0}, s8[4096]{0}) custom-call(%p0, %p1), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
  %noconfig = f32[16,8]{1,0} custom-call(%p0, %p1), custom_call_target="__cublas$gemm"
  ROOT %gemm = f32[16,8]{1,0} custom-call(%p0, %p1), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
})";
  CostProperties u = Props(text, "mystery");
  EXPECT_TRUE(u.unknown);
  EXPECT_EQ(u.flops, -1);
  EXPECT_EQ(u.bytes_accessed, -1);
  EXPECT_EQ(u.operand_bytes[0], -1);
  CostProperties g = Props(text, "gemm", GpuOptions(false));
  EXPECT_FALSE(g.unknown);
  EXPECT_EQ(g.flops, 2 * 128 * 32);
  EXPECT_EQ(g.bytes_accessed, 2048 + 1024 + 512);
  // A workspace result is not output.
  CostProperties w = Props(text, "lt", GpuOptions(false));
  EXPECT_EQ(w.flops, 2 * 128 * 32);
  EXPECT_EQ(w.output_bytes, 512);
  EXPECT_EQ(w.bytes_accessed, 2048 + 1024 + 512);
  // Without dot dimension numbers in the backend config: unknown.
  EXPECT_TRUE(Props(text, "noconfig", GpuOptions(false)).unknown);
  // Generic rules know no library targets.
  EXPECT_TRUE(Props(text, "gemm").unknown);
}

constexpr char kFusionReuse[] = R"(HloModule m
%fused_reuse (p0: f32[1024], p1: f32[1024]) -> f32[1024] {
  %p0 = f32[1024]{0} parameter(0)
  %p1 = f32[1024]{0} parameter(1)
  %a = f32[1024]{0} add(%p0, %p1)
  ROOT %m = f32[1024]{0} multiply(%a, %p0)
}
%fused_broadcast (q0: f32[16]) -> f32[16,64] {
  %q0 = f32[16]{0} parameter(0)
  %b = f32[16,64]{1,0} broadcast(%q0), dimensions={0}
  ROOT %x = f32[16,64]{1,0} exponential(%b)
}
%fused_slices (r0: f32[100]) -> f32[10] {
  %r0 = f32[100]{0} parameter(0)
  %sa = f32[10]{0} slice(%r0), slice={[0:10]}
  %sb = f32[10]{0} slice(%r0), slice={[50:60]}
  ROOT %sum = f32[10]{0} add(%sa, %sb)
}
%fused_dus (d0: f32[100], d1: f32[10], d2: s32[]) -> f32[100] {
  %d0 = f32[100]{0} parameter(0)
  %d1 = f32[10]{0} parameter(1)
  %d2 = s32[] parameter(2)
  ROOT %upd = f32[100]{0} dynamic-update-slice(%d0, %d1, %d2)
}
%fused_constants (c0: f32[16]) -> f32[16] {
  %c0 = f32[16]{0} parameter(0)
  %big = f32[16]{0} constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
  %small = f32[4]{0} constant({1, 2, 3, 4})
  %bs = f32[16]{0} slice(%big), slice={[0:16]}
  ROOT %r = f32[16]{0} add(%c0, %bs)
}
ENTRY %e (x: f32[1024], y: f32[1024], z: f32[16], w: f32[100], v: f32[10], i: s32[]) -> f32[1024] {
  %x = f32[1024]{0} parameter(0)
  %y = f32[1024]{0} parameter(1)
  %z = f32[16]{0} parameter(2)
  %w = f32[100]{0} parameter(3)
  %v = f32[10]{0} parameter(4)
  %i = s32[] parameter(5)
  %f_bcast = f32[16,64]{1,0} fusion(%z), kind=kLoop, calls=%fused_broadcast
  %f_slices = f32[10]{0} fusion(%w), kind=kLoop, calls=%fused_slices
  %f_dus = f32[100]{0} fusion(%w, %v, %i), kind=kLoop, calls=%fused_dus
  %f_const = f32[16]{0} fusion(%z), kind=kLoop, calls=%fused_constants
  ROOT %f_reuse = f32[1024]{0} fusion(%x, %y), kind=kLoop, calls=%fused_reuse
})";

TEST(CostAnalysisTest, FusionReadsAParameterUsedTwiceOnce) {
  CostProperties g = Props(kFusionReuse, "f_reuse");
  EXPECT_EQ(g.flops, 2048);
  EXPECT_EQ(g.bytes_accessed, 3 * 4096);
  CostProperties p = Props(kFusionReuse, "f_reuse", GpuOptions(true));
  EXPECT_EQ(p.flops, 7 * 1024 + 3 * 1024);
  EXPECT_EQ(p.operand_bytes[0], 4096);
  EXPECT_EQ(p.operand_bytes[1], 4096);
  EXPECT_EQ(p.operand_utilization[0], 1);
  EXPECT_EQ(p.output_bytes, 4096);
  EXPECT_EQ(p.bytes_accessed, 3 * 4096);
  EXPECT_EQ(p.ir_size, 4);  // each fused instruction emitted once
}

TEST(CostAnalysisTest, FusionBroadcastUtilization) {
  // The broadcast reads each input element 64 times.
  CostProperties multi = Props(kFusionReuse, "f_bcast", GpuOptions(true));
  EXPECT_EQ(multi.operand_utilization[0], 64);
  EXPECT_EQ(multi.operand_bytes[0], 4096);
  EXPECT_EQ(multi.bytes_accessed, 8192);
  EXPECT_EQ(multi.flops, 79 * 1024);
  CostProperties once = Props(kFusionReuse, "f_bcast", GpuOptions(false));
  EXPECT_EQ(once.operand_bytes[0], 64);
  EXPECT_EQ(once.bytes_accessed, 4096 + 64);
  CostProperties generic = Props(kFusionReuse, "f_bcast");
  EXPECT_EQ(generic.operand_bytes[0], 64);
  EXPECT_EQ(generic.transcendentals, 1024);
}

TEST(CostAnalysisTest, FusionSlicesReadOnlyTheirPart) {
  CostProperties p = Props(kFusionReuse, "f_slices", GpuOptions(true));
  EXPECT_DOUBLE_EQ(p.operand_utilization[0], 0.2);
  EXPECT_EQ(p.operand_bytes[0], 80);
  EXPECT_EQ(p.bytes_accessed, 40 + 80);
  EXPECT_EQ(Props(kFusionReuse, "f_slices").operand_bytes[0], 80);
}

TEST(CostAnalysisTest, FusionDynamicUpdateSliceRoot) {
  // In place: only the update is written, and the buffer is not read (as
  // for an unfused dynamic-update-slice).
  CostProperties p = Props(kFusionReuse, "f_dus", GpuOptions(true));
  EXPECT_EQ(p.output_bytes, 40);
  EXPECT_EQ(p.operand_bytes[0], 0);
  EXPECT_DOUBLE_EQ(p.operand_utilization[0], 0.9);  // (100 - 10) / 100
  EXPECT_EQ(p.operand_bytes[1], 40);
  EXPECT_EQ(p.operand_bytes[2], 4);
  EXPECT_EQ(p.bytes_accessed, 40 + 0 + 40 + 4);
  EXPECT_EQ(p.basic_block_splits, 1);
  // Generic: the in-place buffer is not read.
  CostProperties g = Props(kFusionReuse, "f_dus");
  EXPECT_EQ(g.operand_bytes[0], 0);
  EXPECT_EQ(g.bytes_accessed, 40 + 0 + 40 + 4);
}

TEST(CostAnalysisTest, FusionConstants) {
  // The 16-element constant is read from memory; the 4-element one is an
  // immediate.
  CostProperties p = Props(kFusionReuse, "f_const", GpuOptions(true));
  EXPECT_EQ(p.bytes_accessed, 64 + 64 + 64);
  // Generic rules keep only single elements immediate.
  EXPECT_EQ(Props(kFusionReuse, "f_const").bytes_accessed, 64 + 64 + 64 + 16);
}

TEST(CostAnalysisTest, FusionInfoCommonUtilization) {
  auto m = Parse(kFusionReuse);
  ASSERT_NE(m, nullptr);
  CostAnalysis analysis(GpuOptions(true));
  CostProperties p;
  FusionInfo info;
  ASSERT_TRUE(analysis.Analyze(*Find(*m, "f_reuse"), &p, &info).ok());
  // Both parameters are read elementwise by the root.
  EXPECT_EQ(info.CommonElementwiseUtilization(0, 1), 1);
  EXPECT_EQ(info.CommonUtilizationWithRoot(0), 1);
  ASSERT_TRUE(analysis.Analyze(*Find(*m, "f_bcast"), &p, &info).ok());
  EXPECT_EQ(info.CommonUtilizationWithRoot(0), 0);
}

TEST(CostAnalysisTest, CalledComputations) {
  const std::string text = std::string("HloModule m\n") + kAddRegion + R"(
%cond (s: (s32[], f32[8])) -> pred[] {
  %s = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[8])) -> (s32[], f32[8]) {
  %s = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %x = f32[8]{0} get-tuple-element(%s), index=1
  %y = f32[8]{0} multiply(%x, %x)
  ROOT %t = (s32[], f32[8]{0}) tuple(%next, %y)
}
ENTRY %e (p: f32[8]) -> (s32[], f32[8]) {
  %p = f32[8]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]{0}) tuple(%zero, %p)
  ROOT %w = (s32[], f32[8]{0}) while(%init), condition=%cond, body=%body
})";
  // One iteration: compare (1) + add (1) + multiply (8).
  EXPECT_EQ(Props(text, "w").flops, 10);
}

}  // namespace
}  // namespace hlogym
