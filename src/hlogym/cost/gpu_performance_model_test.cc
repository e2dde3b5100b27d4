#include "hlogym/cost/gpu_performance_model.h"

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

GpuDevice Device(const std::string& name) {
  absl::StatusOr<GpuDevice> d = LoadDevice(name);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *d : GpuDevice{};
}

constexpr double kH100Bw = 3.35232e12;

TEST(CostPerfModelTest, ComputeTimeAtPeak) {
  GpuPerformanceModel h100(Device("h100"));
  // 50688 flop/ns with every SM and FPU busy.
  EXPECT_DOUBLE_EQ(h100.ComputeTime(50688, {132, 128}), 1e-9);
  EXPECT_DOUBLE_EQ(h100.ComputeTime(50688, {1000, 1024}), 1e-9);
  // One block of 32 threads: 3 * 1 * 32 flop/ns.
  EXPECT_DOUBLE_EQ(h100.ComputeTime(96, {1, 32}), 1e-9);
  GpuPerformanceModel a100(Device("a100-40gb"));
  EXPECT_DOUBLE_EQ(a100.ComputeTime(13824, {108, 64}), 1e-9);
}

TEST(CostPerfModelTest, BandwidthNeedsEnoughBlocks) {
  GpuPerformanceModel h100(Device("h100"));
  // Each block moves 32 bytes per clock: 1.98e9 * 32 = 63.36 GB/s.
  EXPECT_DOUBLE_EQ(h100.AdjustBandwidth(kH100Bw, 1), 63.36e9);
  EXPECT_DOUBLE_EQ(h100.AdjustBandwidth(kH100Bw, 52), 52 * 63.36e9);
  EXPECT_DOUBLE_EQ(h100.AdjustBandwidth(kH100Bw, 53), kH100Bw);
  GpuPerformanceModel a100(Device("a100-80gb"));
  // 1.41e9 * 32 = 45.12 GB/s per block; 2.03904 TB/s needs 46 blocks.
  EXPECT_DOUBLE_EQ(a100.AdjustBandwidth(2.03904e12, 45), 45 * 45.12e9);
  EXPECT_DOUBLE_EQ(a100.AdjustBandwidth(2.03904e12, 46), 2.03904e12);
}

TEST(CostPerfModelTest, ReadTimeCacheSpeedups) {
  GpuPerformanceModel h100(Device("h100"));
  // Larger than L2 (50 MiB): DRAM bandwidth.
  EXPECT_DOUBLE_EQ(h100.ReadTime(4000, 1e8, 1e8), 1e8 / kH100Bw);
  // Fits L2: 2.5x.
  EXPECT_DOUBLE_EQ(h100.ReadTime(4000, 1e6, 1e6), 1e6 / (kH100Bw * 2.5));
  // Fits the 2 KiB x 132 SMs of "L1" too: 20x.
  EXPECT_DOUBLE_EQ(h100.ReadTime(4000, 1e5, 1e5), 1e5 / (kH100Bw * 20));
  // Few blocks cap the bandwidth.
  EXPECT_DOUBLE_EQ(h100.ReadTime(1, 1e5, 1e5), 1e5 / 63.36e9);
  GpuPerformanceModel a100(Device("a100-40gb"));
  // A100 L2 is 40 MiB: 45 MB does not fit.
  EXPECT_DOUBLE_EQ(a100.ReadTime(4000, 45e6, 45e6), 45e6 / 1.5552e12);
  EXPECT_DOUBLE_EQ(a100.ReadTime(4000, 40e6, 40e6), 40e6 / (1.5552e12 * 2.5));
}

TEST(CostPerfModelTest, ReadTimeWithDramHeuristic) {
  GpuPerformanceModel h100(Device("h100"));
  // 4 MB read once, then 12 MB more from L2 at 2.5x.
  EXPECT_DOUBLE_EQ(h100.ReadTimeWithDramHeuristic(4000, 4e6, 16e6, 1.0),
                   4e6 / kH100Bw + 12e6 / (kH100Bw * 2.5));
  // Uncoalesced f32 reads use 4 of every 64 bytes fetched.
  EXPECT_DOUBLE_EQ(h100.CoalescingRate(PrimitiveType::kF32, false), 1.0 / 16);
  EXPECT_DOUBLE_EQ(h100.CoalescingRate(PrimitiveType::kBF16, false), 1.0 / 32);
  EXPECT_DOUBLE_EQ(h100.CoalescingRate(PrimitiveType::kF64, false), 1.0 / 8);
  EXPECT_DOUBLE_EQ(h100.CoalescingRate(PrimitiveType::kTuple, false), 1.0 / 16);
  EXPECT_DOUBLE_EQ(h100.CoalescingRate(PrimitiveType::kF32, true), 1.0);
  // Beyond L2 the re-reads are uncoalesced too.
  EXPECT_DOUBLE_EQ(h100.ReadTimeWithDramHeuristic(4000, 1e8, 2e8, 1.0 / 16),
                   1e8 / (kH100Bw / 16) + 1e8 / (kH100Bw / 16));
  EXPECT_DOUBLE_EQ(h100.WriteTime(1e6), 1e6 / kH100Bw);
}

TEST(CostPerfModelTest, CombineRule) {
  EXPECT_DOUBLE_EQ(GpuPerformanceModel::CombineComputeAndMemory(3, 2),
                   3 + 2 - 0.95 * 2);
  EXPECT_DOUBLE_EQ(GpuPerformanceModel::CombineComputeAndMemory(1, 10),
                   10 + 0.05);
  EXPECT_DOUBLE_EQ(GpuPerformanceModel::CombineComputeAndMemory(0, 4), 4);
}

TEST(CostPerfModelTest, ElementwiseKernel) {
  auto m = Parse(R"(HloModule m
ENTRY %e (x: f32[1048576], y: f32[1048576]) -> f32[1048576] {
  %x = f32[1048576]{0} parameter(0)
  %y = f32[1048576]{0} parameter(1)
  ROOT %add = f32[1048576]{0} add(%x, %y)
})");
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(Device("h100"));
  const Instruction* add = Find(*m, "add");
  // 2^20 elements >= 2048 threads * 132 SMs: unrolled 4 times.
  KernelLaunch l = h100.EstimateLaunch(*add);
  EXPECT_EQ(l.kind, EmitterKind::kLoop);
  EXPECT_EQ(l.dims.threads_per_block, 128);
  EXPECT_EQ(l.dims.num_blocks, 2048);
  absl::StatusOr<RunTimeData> d = h100.EstimateRunTime(*add);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->flops, 7 * 1048576);
  EXPECT_EQ(d->bytes_read, 2 * 4194304);
  EXPECT_EQ(d->bytes_written, 4194304);
  EXPECT_TRUE(d->coalesced);
  const double compute = 7 * 1048576.0 / 50688 * 1e-9;
  EXPECT_DOUBLE_EQ(d->compute_time, compute);
  EXPECT_DOUBLE_EQ(d->read_time, 2 * 4194304 / kH100Bw);
  EXPECT_DOUBLE_EQ(d->write_time, 4194304 / kH100Bw);
  const double memory = 3 * 4194304 / kH100Bw;
  EXPECT_DOUBLE_EQ(d->exec_time, memory + 0.05 * compute);
  EXPECT_NEAR(d->exec_time, 3.7608e-6, 1e-10);
}

TEST(CostPerfModelTest, SmallKernelIsBlockLimited) {
  auto m = Parse(R"(HloModule m
ENTRY %e (x: f32[1000]) -> f32[1000] {
  %x = f32[1000]{0} parameter(0)
  ROOT %e = f32[1000]{0} exponential(%x)
})");
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel a100(Device("a100-40gb"));
  const Instruction* e = Find(*m, "e");
  absl::StatusOr<RunTimeData> d = a100.EstimateRunTime(*e);
  ASSERT_TRUE(d.ok()) << d.status();
  // 1000 elements: 8 blocks of 128 threads, no unrolling; sm_80 has no f32
  // exp entry (3 cycles).
  EXPECT_EQ(d->launch.dims.num_blocks, 8);
  EXPECT_EQ(d->launch.dims.threads_per_block, 128);
  EXPECT_EQ(d->flops, 3000);
  // 2 flop/ns * 8 SMs * 64 FPUs.
  EXPECT_DOUBLE_EQ(d->compute_time, 3000.0 / 1024 * 1e-9);
  // 8 blocks * 1.41e9 * 32 bytes.
  EXPECT_DOUBLE_EQ(d->read_time, 4000 / (8 * 45.12e9));
  EXPECT_DOUBLE_EQ(d->write_time, 4000 / 1.5552e12);
}

TEST(CostPerfModelTest, ReductionLaunchDimensions) {
  auto m = Parse(R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[1024,4096], y: f32[4,8,16], z: f32[4,8,16,2]) -> f32[4096] {
  %x = f32[1024,4096]{1,0} parameter(0)
  %zero = f32[] constant(0)
  %row = f32[1024]{0} reduce(%x, %zero), dimensions={1}, to_apply=%add
  %y = f32[4,8,16]{2,1,0} parameter(1)
  %batched = f32[8]{0} reduce(%y, %zero), dimensions={0,2}, to_apply=%add
  %z = f32[4,8,16,2]{3,2,1,0} parameter(2)
  %scattered = f32[4,16]{1,0} reduce(%z, %zero), dimensions={1,3}, to_apply=%add
  %small = f32[1024]{0} reduce(%x, %zero), dimensions={0}, to_apply=%add
  ROOT %col = f32[4096]{0} reduce(%x, %zero), dimensions={0}, to_apply=%add
})");
  ASSERT_NE(m, nullptr);
  std::optional<ReductionDimensions> row =
      GetReductionDimensions(*Find(*m, "row"));
  ASSERT_TRUE(row.has_value());
  EXPECT_TRUE(row->is_row_reduction);
  EXPECT_EQ(row->dims[0], 1);
  EXPECT_EQ(row->dims[1], 1024);
  EXPECT_EQ(row->dims[2], 4096);
  std::optional<ReductionDimensions> batched =
      GetReductionDimensions(*Find(*m, "batched"));
  ASSERT_TRUE(batched.has_value());
  EXPECT_TRUE(batched->is_row_reduction);
  EXPECT_EQ(batched->dims[0], 4);
  EXPECT_EQ(batched->dims[1], 8);
  EXPECT_EQ(batched->dims[2], 16);
  EXPECT_TRUE(IsRealReduction(*Find(*m, "batched")));  // 32 % 16 == 0
  EXPECT_FALSE(GetReductionDimensions(*Find(*m, "scattered")).has_value());
  std::optional<ReductionDimensions> col =
      GetReductionDimensions(*Find(*m, "col"));
  ASSERT_TRUE(col.has_value());
  EXPECT_FALSE(col->is_row_reduction);
  EXPECT_EQ(col->dims[1], 1024);
  EXPECT_EQ(col->dims[2], 4096);

  GpuPerformanceModel h100(Device("h100"));
  // Row: 256 threads along the row (4096 / 16 per thread), vectorized by 2;
  // one block per row.
  KernelLaunch r = h100.EstimateLaunch(*Find(*m, "row"));
  EXPECT_EQ(r.kind, EmitterKind::kReduction);
  EXPECT_EQ(r.dims.threads_per_block, 256);
  EXPECT_EQ(r.dims.num_blocks, 1024);
  // Column: 32 x 32 threads, 4096 reduced rows per block, 32 columns.
  KernelLaunch c = h100.EstimateLaunch(*Find(*m, "col"));
  EXPECT_EQ(c.kind, EmitterKind::kReduction);
  EXPECT_EQ(c.dims.threads_per_block, 1024);
  EXPECT_EQ(c.dims.num_blocks, 128);
  // Batched row reduction: 16-element rows, 2 rows per warp; 8 kept rows
  // (x 16 threads) fill 128 threads.
  KernelLaunch b = h100.EstimateLaunch(*Find(*m, "batched"));
  EXPECT_EQ(b.kind, EmitterKind::kReduction);
  EXPECT_EQ(b.dims.threads_per_block, 128);
  EXPECT_EQ(b.dims.num_blocks, 1);
  // A scattered reduction falls back to the loop emitter (4 * 16 outputs).
  KernelLaunch s = h100.EstimateLaunch(*Find(*m, "scattered"));
  EXPECT_EQ(s.kind, EmitterKind::kLoop);
  EXPECT_EQ(s.dims.num_blocks, 1);
  EXPECT_EQ(s.dims.threads_per_block, 64);
}

TEST(CostPerfModelTest, TransposeAndCoalescing) {
  auto m = Parse(R"(HloModule m
ENTRY %e (x: f32[64,128], y: f32[4,65536]) -> f32[128,64] {
  %y = f32[4,65536]{1,0} parameter(1)
  %small = f32[65536,4]{1,0} transpose(%y), dimensions={1,0}
  %x = f32[64,128]{1,0} parameter(0)
  ROOT %t = f32[128,64]{1,0} transpose(%x), dimensions={1,0}
})");
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(Device("h100"));
  EXPECT_TRUE(TransposesMinorDimension(*Find(*m, "t")));
  KernelLaunch t = h100.EstimateLaunch(*Find(*m, "t"));
  EXPECT_EQ(t.kind, EmitterKind::kTranspose);
  EXPECT_EQ(t.dims.num_blocks, 2 * 4);  // 32x32 tiles
  EXPECT_EQ(t.dims.threads_per_block, 128);
  absl::StatusOr<RunTimeData> td = h100.EstimateRunTime(*Find(*m, "t"));
  ASSERT_TRUE(td.ok());
  EXPECT_TRUE(td->coalesced);
  // Rows of 4 are too short for tiles: a loop kernel (2048 blocks) whose
  // reads are uncoalesced.
  absl::StatusOr<RunTimeData> sd = h100.EstimateRunTime(*Find(*m, "small"));
  ASSERT_TRUE(sd.ok());
  EXPECT_EQ(sd->launch.kind, EmitterKind::kLoop);
  EXPECT_FALSE(sd->coalesced);
  EXPECT_EQ(sd->launch.dims.num_blocks, 2048);
  EXPECT_DOUBLE_EQ(sd->read_time, 1048576 / (kH100Bw / 16));
}

TEST(CostPerfModelTest, LibraryCallUsesTheMatrixRate) {
  auto m = Parse(R"(HloModule m
ENTRY %e (x: bf16[1024,1024], y: bf16[1024,1024]) -> bf16[1024,1024] {
  %x = bf16[1024,1024]{1,0} parameter(0)
  %y = bf16[1024,1024]{1,0} parameter(1)
  ROOT %d = bf16[1024,1024]{1,0} dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(Device("h100"));
  absl::StatusOr<RunTimeData> d = h100.EstimateRunTime(*Find(*m, "d"));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->launch.kind, EmitterKind::kLibrary);
  EXPECT_EQ(d->flops, 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(d->compute_time, 2.0 * 1024 * 1024 * 1024 / 989.4e12);
  EXPECT_DOUBLE_EQ(d->read_time, 4194304 / kH100Bw);
  EXPECT_DOUBLE_EQ(d->write_time, 2097152 / kH100Bw);
  const double memory = 6291456 / kH100Bw;
  EXPECT_DOUBLE_EQ(d->exec_time, d->compute_time + memory - 0.95 * memory);
}

constexpr char kChain[] = R"(HloModule m
ENTRY %e (x: f32[1024], y: f32[1024]) -> f32[1024] {
  %x = f32[1024]{0} parameter(0)
  %y = f32[1024]{0} parameter(1)
  %p = f32[1024]{0} exponential(%x)
  %c = f32[1024]{0} add(%p, %y)
  %q = f32[1024]{0} add(%x, %y)
  ROOT %r = f32[1024]{0} multiply(%q, %x)
})";

TEST(CostPerfModelTest, ProducerConsumerFusion) {
  auto m = Parse(kChain);
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(Device("h100"));
  const Instruction* p = Find(*m, "p");
  const Instruction* c = Find(*m, "c");
  // Every kernel here is 8 blocks of 128 threads: 3 * 8 * 128 = 3072
  // flop/ns, and 8 * 63.36 GB/s = 506.88 GB/s of DRAM bandwidth.
  const double bw8 = 506.88e9;
  absl::StatusOr<RunTimeData> pd = h100.EstimateRunTime(*p);
  ASSERT_TRUE(pd.ok());
  const double p_compute = 79 * 1024.0 / 3072 * 1e-9;
  const double p_memory = 4096 / bw8 + 4096 / kH100Bw;
  EXPECT_DOUBLE_EQ(pd->exec_time, p_compute + p_memory - 0.95 * p_memory);
  absl::StatusOr<RunTimeData> cd = h100.EstimateRunTime(*c);
  ASSERT_TRUE(cd.ok());
  const double c_compute = 7 * 1024.0 / 3072 * 1e-9;
  const double c_memory = 2 * 4096 / bw8 + 4096 / kH100Bw;
  EXPECT_DOUBLE_EQ(cd->exec_time, c_memory + c_compute - 0.95 * c_compute);

  // Fused: exp and add in one kernel reading x and y, writing c.
  absl::StatusOr<RunTimeData> fd = h100.EstimateFusedRunTime(*p, *c);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(fd->flops, 79 * 1024 + 7 * 1024);
  EXPECT_EQ(fd->bytes_read, 8192);
  EXPECT_EQ(fd->bytes_written, 4096);
  const double f_compute = (79 + 7) * 1024.0 / 3072 * 1e-9;
  const double f_memory = 2 * 4096 / bw8 + 4096 / kH100Bw;
  EXPECT_DOUBLE_EQ(fd->exec_time, f_compute + f_memory - 0.95 * f_memory);

  absl::StatusOr<GpuPerformanceModel::RunTimes> t = h100.EstimateRunTimes(*p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_DOUBLE_EQ(t->time_unfused, 2e-6 + pd->exec_time + cd->exec_time);
  EXPECT_DOUBLE_EQ(t->time_fused, 1e-6 + fd->exec_time);
  EXPECT_LT(t->time_fused, t->time_unfused);

  // As a multi-output fusion the exp result is written as well.
  absl::StatusOr<GpuPerformanceModel::RunTimes> mo =
      h100.EstimateMultiOutputRunTimes(*p, *c);
  ASSERT_TRUE(mo.ok());
  const double mo_memory = 2 * 4096 / bw8 + 8192 / kH100Bw;
  EXPECT_DOUBLE_EQ(mo->time_fused,
                   1e-6 + f_compute + mo_memory - 0.95 * mo_memory);
}

TEST(CostPerfModelTest, SharedOperandIsReadOnce) {
  auto m = Parse(kChain);
  ASSERT_NE(m, nullptr);
  GpuPerformanceModel h100(Device("h100"));
  // q = add(x, y) fused into r = multiply(q, x): both read x elementwise,
  // so the fused kernel reads x and y once each.
  absl::StatusOr<RunTimeData> fd =
      h100.EstimateFusedRunTime(*Find(*m, "q"), *Find(*m, "r"));
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(fd->bytes_read, 8192);
  EXPECT_FALSE(h100.EstimateFusedRunTime(*Find(*m, "r"), *Find(*m, "q")).ok());
}

}  // namespace
}  // namespace hlogym
