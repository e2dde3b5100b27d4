// The hero analysis of the performance model stays inside one kernel: an
// unfused instruction's operands are other kernels' results, so neither
// the emitter nor the coalescing of an unfused instruction depends on
// which instructions produce its operands.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlogym/cost/gpu_performance_model.h"
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

GpuDevice H100() {
  absl::StatusOr<GpuDevice> d = LoadDevice("h100");
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *d : GpuDevice{};
}

constexpr double kBw = 3.35232e12;
// Bandwidth of one block: 1.98e9 clocks * 32 bytes.
constexpr double kBlockBw = 63.36e9;

// A row reduction whose only user is an unfused negate; the same negate
// shape reads a parameter in `e2`.
constexpr char kReduceThenNegate[] = R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%neg_body (q: f32[1024]) -> f32[1024] {
  %q = f32[1024]{0} parameter(0)
  ROOT %nq = f32[1024]{0} negate(%q)
}
ENTRY %e (x: f32[1024,4096], y: f32[1024]) -> (f32[1024], f32[1024], f32[1024]) {
  %x = f32[1024,4096]{1,0} parameter(0)
  %y = f32[1024]{0} parameter(1)
  %zero = f32[] constant(0)
  %r = f32[1024]{0} reduce(%x, %zero), dimensions={1}, to_apply=%add
  %n = f32[1024]{0} negate(%r)
  %r2 = f32[1024]{0} reduce(%x, %zero), dimensions={1}, to_apply=%add
  %f = f32[1024]{0} fusion(%r2), kind=kLoop, calls=%neg_body
  %ny = f32[1024]{0} negate(%y)
  ROOT %t = (f32[1024]{0}, f32[1024]{0}, f32[1024]{0}) tuple(%n, %f, %ny)
})";

TEST(CostPerfModelHeroTest, UnfusedUnaryAfterReductionIsALoopKernel) {
  auto m = Parse(kReduceThenNegate);
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(H100());
  // The reduction itself: 1024 rows of 4096, 256 threads (x2 vectorised).
  const KernelLaunch r = h100.EstimateLaunch(*Find(*m, "r"));
  EXPECT_EQ(r.kind, EmitterKind::kReduction);
  EXPECT_EQ(r.dims.num_blocks, 1024);
  EXPECT_EQ(r.dims.threads_per_block, 256);
  // The negate reading it is a loop over 1024 elements: 8 blocks of 128.
  for (std::string_view name : {"n", "f", "ny"}) {
    const KernelLaunch l = h100.EstimateLaunch(*Find(*m, name));
    EXPECT_EQ(l.kind, EmitterKind::kLoop) << name;
    EXPECT_EQ(l.dims.num_blocks, 8) << name;
    EXPECT_EQ(l.dims.threads_per_block, 128) << name;
  }
  absl::StatusOr<RunTimeData> d = h100.EstimateRunTime(*Find(*m, "n"));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->launch.kind, EmitterKind::kLoop);
  EXPECT_TRUE(d->coalesced);
  // negate f32 has no sm_90 profile entry: 3 flops per element.
  EXPECT_EQ(d->flops, 3 * 1024);
  // 3072 flops at 3 flop/ns * 8 SMs * 128 FPUs = 1 ns.
  EXPECT_DOUBLE_EQ(d->compute_time, 1e-9);
  // 4 KiB read once by 8 blocks; written at DRAM bandwidth.
  EXPECT_DOUBLE_EQ(d->read_time, 4096 / (8 * kBlockBw));
  EXPECT_DOUBLE_EQ(d->write_time, 4096 / kBw);
  const double memory = 4096 / (8 * kBlockBw) + 4096 / kBw;
  EXPECT_DOUBLE_EQ(d->exec_time, memory + 0.05e-9);
  // The same kernel reading a parameter costs the same.
  absl::StatusOr<RunTimeData> dy = h100.EstimateRunTime(*Find(*m, "ny"));
  ASSERT_TRUE(dy.ok()) << dy.status();
  EXPECT_DOUBLE_EQ(dy->exec_time, d->exec_time);
}

TEST(CostPerfModelHeroTest, ReductionEpilogueFusionStaysCoalesced) {
  auto m = Parse(kReduceThenNegate);
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(H100());
  const Instruction* r = Find(*m, "r");
  const Instruction* n = Find(*m, "n");
  absl::StatusOr<RunTimeData> d = h100.EstimateFusedRunTime(*r, *n);
  ASSERT_TRUE(d.ok()) << d.status();
  // The fused kernel is the reduction's; only one side is a reduction, so
  // its reads are coalesced.
  EXPECT_EQ(d->launch.kind, EmitterKind::kReduction);
  EXPECT_EQ(d->launch.dims.num_blocks, 1024);
  EXPECT_TRUE(d->coalesced);
  // x (16 MiB, fits L2, read once at DRAM bandwidth) and the init value
  // (4 bytes, charged once per output element: 4 from DRAM, the other
  // 4092 from L1 at 20x, capped by 1024 blocks).
  const double x_time = 16777216 / kBw;
  const double init_time = 4 / kBw + 4092 / std::min(20 * kBw, 1024 * kBlockBw);
  EXPECT_DOUBLE_EQ(d->read_time, x_time + init_time);
  EXPECT_DOUBLE_EQ(d->bytes_read, 16777216 + 4096);
  EXPECT_DOUBLE_EQ(d->write_time, 4096 / kBw);
}

// A transpose of the minor dimension too small for the tiled emitter.
constexpr char kBroadcastThenTranspose[] = R"(HloModule m
ENTRY %e (s: f32[4], w: f32[4,1000]) -> (f32[1000,4], f32[1000,4]) {
  %s = f32[4]{0} parameter(0)
  %w = f32[4,1000]{1,0} parameter(1)
  %b = f32[4,1000]{1,0} broadcast(%s), dimensions={0}
  %t = f32[1000,4]{1,0} transpose(%b), dimensions={1,0}
  %tw = f32[1000,4]{1,0} transpose(%w), dimensions={1,0}
  ROOT %out = (f32[1000,4]{1,0}, f32[1000,4]{1,0}) tuple(%t, %tw)
})";

TEST(CostPerfModelHeroTest, UnfusedTransposeOfABroadcastReadsUncoalesced) {
  auto m = Parse(kBroadcastThenTranspose);
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(H100());
  // On its own the transpose reads the broadcast's 16000-byte result from
  // memory: 4 useful bytes per 64-byte transaction.
  for (std::string_view name : {"t", "tw"}) {
    absl::StatusOr<RunTimeData> d = h100.EstimateRunTime(*Find(*m, name));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->launch.kind, EmitterKind::kLoop) << name;
    EXPECT_EQ(d->launch.dims.num_blocks, 32) << name;
    EXPECT_FALSE(d->coalesced) << name;
    EXPECT_DOUBLE_EQ(d->read_time, 16000 / (kBw / 16)) << name;
  }
  // With the broadcast fused into it, the kernel transposes a broadcast it
  // computes: coalesced.
  absl::StatusOr<RunTimeData> f =
      h100.EstimateFusedRunTime(*Find(*m, "b"), *Find(*m, "t"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->coalesced);
}

TEST(CostPerfModelHeroTest, AnalysisGivesTheSameEstimates) {
  auto m = Parse(kReduceThenNegate);
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(H100());
  const Instruction* r = Find(*m, "r");
  const Instruction* n = Find(*m, "n");
  const KernelAnalysis ra = h100.AnalyzeKernel(*r);
  const KernelAnalysis na = h100.AnalyzeKernel(*n);
  ASSERT_TRUE(ra.status.ok() && na.status.ok());
  EXPECT_TRUE(ra.input_fusible_reduction);
  EXPECT_FALSE(na.input_fusible_reduction);
  EXPECT_EQ(na.launch.kind, EmitterKind::kLoop);
  absl::StatusOr<RunTimeData> a = h100.EstimateFusedRunTime(*r, *n, ra, na);
  absl::StatusOr<RunTimeData> b = h100.EstimateFusedRunTime(*r, *n);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(a->exec_time, b->exec_time);
  absl::StatusOr<GpuPerformanceModel::RunTimes> t = h100.EstimateRunTimes(*r);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<RunTimeData> re = h100.EstimateRunTime(*r, ra);
  absl::StatusOr<RunTimeData> ne = h100.EstimateRunTime(*n, na);
  ASSERT_TRUE(re.ok() && ne.ok());
  const double launch = h100.device().kernel_launch_overhead_seconds;
  EXPECT_DOUBLE_EQ(t->time_unfused, 2 * launch + re->exec_time + ne->exec_time);
  EXPECT_DOUBLE_EQ(t->time_fused, launch + a->exec_time);
}

// Only the operand read through the transpose is read uncoalesced; the
// other operand follows the loop's order.
constexpr char kTransposeOneOperand[] = R"(HloModule m
%fc (a: f32[4,65536], b: f32[65536,4]) -> f32[65536,4] {
  %a = f32[4,65536]{1,0} parameter(0)
  %b = f32[65536,4]{1,0} parameter(1)
  %ta = f32[65536,4]{1,0} transpose(%a), dimensions={1,0}
  ROOT %s = f32[65536,4]{1,0} add(%ta, %b)
}
ENTRY %e (x: f32[4,65536], y: f32[65536,4]) -> (f32[65536,4], f32[65536,4]) {
  %x = f32[4,65536]{1,0} parameter(0)
  %y = f32[65536,4]{1,0} parameter(1)
  %f = f32[65536,4]{1,0} fusion(%x, %y), kind=kLoop, calls=%fc
  %t = f32[65536,4]{1,0} transpose(%x), dimensions={1,0}
  %add = f32[65536,4]{1,0} add(%t, %y)
  ROOT %out = (f32[65536,4]{1,0}, f32[65536,4]{1,0}) tuple(%f, %add)
})";

TEST(CostPerfModelHeroTest, CoalescingIsDecidedPerOperand) {
  auto m = Parse(kTransposeOneOperand);
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(H100());
  const Instruction* f = Find(*m, "f");
  const KernelAnalysis fa = h100.AnalyzeKernel(*f);
  EXPECT_TRUE(fa.bad_transpose);
  ASSERT_EQ(fa.transposed_operands.size(), 2u);
  EXPECT_TRUE(fa.transposed_operands[0]);
  EXPECT_FALSE(fa.transposed_operands[1]);
  // 262144 elements (fewer than 2048 threads * 132 SMs: not unrolled) in
  // 2048 blocks of 128: bandwidth is not block-limited. x (1 MiB) at 4 of
  // every 64 bytes, y (1 MiB) at full DRAM bandwidth.
  absl::StatusOr<RunTimeData> d = h100.EstimateRunTime(*f);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->launch.kind, EmitterKind::kLoop);
  EXPECT_EQ(d->launch.dims.num_blocks, 2048);
  EXPECT_FALSE(d->coalesced);
  const double read = 1048576 / (kBw / 16) + 1048576 / kBw;
  EXPECT_DOUBLE_EQ(d->read_time, read);
  // The same kernel from fusing the unfused transpose into the add.
  absl::StatusOr<RunTimeData> fused =
      h100.EstimateFusedRunTime(*Find(*m, "t"), *Find(*m, "add"));
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_FALSE(fused->coalesced);
  EXPECT_DOUBLE_EQ(fused->read_time, read);
  EXPECT_DOUBLE_EQ(fused->exec_time, d->exec_time);
}

}  // namespace
}  // namespace hlogym
