// The analytical GPU performance model: the run time of one kernel from its
// launch overhead, compute time and memory time (DRAM with L2/L1 reuse and
// coalescing), and the run time of a producer fused into its consumers,
// which priority fusion compares with the unfused run time.
// docs/cost-model.md ("GPU performance model") has the formulas.
#ifndef HLOGYM_COST_GPU_PERFORMANCE_MODEL_H_
#define HLOGYM_COST_GPU_PERFORMANCE_MODEL_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlogym/cost/cost_analysis.h"
#include "hlogym/cost/device.h"
#include "hlogym/ir/instruction.h"

namespace hlogym {

// Model constants.
inline constexpr double kL2CacheSpeedup = 2.5;
inline constexpr double kL1CacheSpeedup = 8;
// Fraction of the shorter of compute and memory time hidden by the other.
inline constexpr double kMemoryComputeParallelism = 0.95;

// The code emitter a kernel would use; it decides the launch dimensions.
enum class EmitterKind : uint8_t {
  kLoop,         // one thread per output element (possibly unrolled)
  kReduction,    // a row or column reduction hero
  kTranspose,    // a tiled transpose hero (32x32 tiles in shared memory)
  kScatter,      // one thread per update element
  kConcatenate,  // one thread per element of the largest operand
  kLibrary,      // a dot or convolution: a library call (matrix units)
};
std::string_view EmitterKindName(EmitterKind kind);

struct LaunchDimensions {
  int64_t num_blocks = 1;
  int64_t threads_per_block = 1;
};

struct KernelLaunch {
  EmitterKind kind = EmitterKind::kLoop;
  LaunchDimensions dims;
};

// Reduction described as three logical dimensions after merging adjacent
// dimensions of the same kind: row {major reduced, kept, minor reduced} or
// column {major kept, reduced, minor kept}.
struct ReductionDimensions {
  bool is_row_reduction = true;
  int64_t dims[3] = {1, 1, 1};
};
// nullopt when the reduced dimensions are not contiguous in the layout (or
// nothing is reduced).
std::optional<ReductionDimensions> GetReductionDimensions(
    const Instruction& reduce);
// A reduction the reduction emitter handles (contiguous, and faster than
// the elementwise emitter for its sizes).
bool IsRealReduction(const Instruction& reduce);
// A transpose (or copy) that moves the minor-most non-trivial dimension.
bool TransposesMinorDimension(const Instruction& inst);

// One kernel's estimate. Times are in seconds.
struct RunTimeData {
  double flops = 0;
  double transcendentals = 0;
  double bytes_read = 0;
  double bytes_written = 0;
  double read_time = 0;
  double write_time = 0;
  double compute_time = 0;
  // Combined compute and memory time, without the launch overhead.
  double exec_time = 0;
  KernelLaunch launch;
  // Every operand is read coalesced.
  bool coalesced = true;
  // An unknown custom call is (or is inside) the kernel: its flops are not
  // counted and a custom call reads its operands and writes its result.
  bool unknown_cost = false;
  double memory_time() const { return read_time + write_time; }
};

// What the estimates need about one instruction as a kernel of its own. It
// depends only on the instruction (with its fused computation) and on its
// operands' shapes, never on which instructions the operands are, so a
// caller may keep it for as long as the instruction is not changed.
struct KernelAnalysis {
  // The cost analysis' status; the other fields are unset when not ok.
  absl::Status status;
  CostProperties props;
  // Filled only when requested (the producer-consumer estimate needs it).
  FusionInfo fusion_info;
  bool library = false;
  KernelLaunch launch;
  bool may_degrade_when_unrolled = false;
  // Smallest bit width among the kernel's inputs and outputs.
  int smallest_bits = 64;
  // The kernel transposes the minor-most dimension of a value that is not
  // a broadcast or iota computed inside it.
  bool bad_transpose = false;
  // Per operand: the kernel reads it through such a transpose, so its
  // reads are uncoalesced unless the transpose emitter handles them.
  absl::InlinedVector<bool, 4> transposed_operands;
  // Some root's hero is a reduction the reduction emitter handles.
  bool input_fusible_reduction = false;
  // Per operand: its size in bytes (ShapeSizeBytes of its shape), which the
  // producer-consumer estimate needs for every operand of every pair.
  absl::InlinedVector<double, 4> operand_sizes;
};

class GpuPerformanceModel {
 public:
  explicit GpuPerformanceModel(GpuDevice device);
  // The analysis points into the device: not copyable.
  GpuPerformanceModel(const GpuPerformanceModel&) = delete;
  GpuPerformanceModel& operator=(const GpuPerformanceModel&) = delete;

  const GpuDevice& device() const { return device_; }
  // The analysis used for kernels: GPU rules, repeated reads counted.
  const CostAnalysis& cost_analysis() const { return analysis_; }

  // Time for `flops` on the CUDA cores with these launch dimensions:
  // flops / (trunc(2 * clock) * min(blocks, cores) * min(threads, fpus)) ns.
  double ComputeTime(double flops, const LaunchDimensions& dims) const;
  // min(bandwidth, blocks * clock * transactions-per-clock bytes).
  double AdjustBandwidth(double bandwidth, int64_t num_blocks) const;
  // `total` bytes read of which `net` are distinct: DRAM bandwidth, times
  // 2.5 if `net` fits in L2 and times 8 more if it fits in L1.
  double ReadTime(int64_t num_blocks, double net, double total) const;
  // The first `net` bytes at DRAM bandwidth (scaled by the coalescing
  // rate), the re-reads at cache bandwidth.
  double ReadTimeWithDramHeuristic(int64_t num_blocks, double net, double total,
                                   double coalescing_rate) const;
  double WriteTime(double bytes) const;
  // 1 when coalesced, else element bytes / DRAM-to-L2 transaction bytes.
  double CoalescingRate(PrimitiveType type, bool coalesced) const;
  // compute + memory - 0.95 * min(compute, memory).
  static double CombineComputeAndMemory(double compute, double memory);

  // Emitter and launch dimensions of an instruction (a fusion, or any
  // other instruction as a kernel of its own).
  KernelLaunch EstimateLaunch(const Instruction& inst) const;
  // The same for `producer` fused into `consumer`.
  KernelLaunch EstimateFusedLaunch(const Instruction& producer,
                                   const Instruction& consumer) const;

  // True for kernels modelled as library calls at the matrix rate: dot,
  // convolution, their library custom calls, and fusions containing them.
  static bool IsLibraryCall(const Instruction& inst);

  // The analysis of `inst` as a kernel (with the fusion info that the
  // producer-consumer estimate needs when `fusion_info`).
  KernelAnalysis AnalyzeKernel(const Instruction& inst,
                               bool fusion_info = true) const;

  // The kernel estimate of one instruction.
  absl::StatusOr<RunTimeData> EstimateRunTime(const Instruction& inst) const;
  // The same from its analysis (AnalyzeKernel(inst)).
  absl::StatusOr<RunTimeData> EstimateRunTime(
      const Instruction& inst, const KernelAnalysis& analysis) const;
  // The kernel that fuses `producer` into `consumer` (one of its users).
  // With `producer_output_kept` the producer's result is also written (a
  // multi-output fusion).
  absl::StatusOr<RunTimeData> EstimateFusedRunTime(
      const Instruction& producer, const Instruction& consumer,
      bool producer_output_kept = false) const;
  // The same from the analyses of both sides (AnalyzeKernel with fusion
  // info), which callers comparing many pairs keep per instruction.
  absl::StatusOr<RunTimeData> EstimateFusedRunTime(
      const Instruction& producer, const Instruction& consumer,
      const KernelAnalysis& producer_analysis,
      const KernelAnalysis& consumer_analysis,
      bool producer_output_kept = false) const;

  struct RunTimes {
    double time_unfused = 0;
    double time_fused = 0;
  };
  // Priority fusion's comparison for `producer` and its consumers (its
  // users when `consumers` is empty): unfused = launch * (n + 1) + exec(P)
  // + sum exec(C_i); fused = launch * n + sum exec(P fused into C_i).
  absl::StatusOr<RunTimes> EstimateRunTimes(
      const Instruction& producer,
      absl::Span<const Instruction* const> consumers = {}) const;
  // Multi-output producer-consumer fusion: unfused = 2 launches + exec(P) +
  // exec(C); fused = 1 launch + exec of the fusion that also writes P.
  absl::StatusOr<RunTimes> EstimateMultiOutputRunTimes(
      const Instruction& producer, const Instruction& consumer) const;

 private:
  double LaunchOverhead() const {
    return device_.kernel_launch_overhead_seconds;
  }
  LaunchDimensions LoopLaunch(int64_t elements, bool may_degrade,
                              int min_output_bits) const;
  KernelLaunch Launch(const Instruction& inst, bool may_degrade,
                      int min_bits) const;
  KernelLaunch FusedLaunch(const Instruction& producer,
                           const Instruction& consumer,
                           const KernelAnalysis& producer_analysis,
                           const KernelAnalysis& consumer_analysis) const;
  LaunchDimensions ReductionLaunch(const ReductionDimensions& r) const;
  absl::StatusOr<RunTimeData> LibraryRunTime(const Instruction& inst,
                                             const CostProperties& props) const;

  GpuDevice device_;
  CostAnalysis analysis_;
};

}  // namespace hlogym

#endif  // HLOGYM_COST_GPU_PERFORMANCE_MODEL_H_
