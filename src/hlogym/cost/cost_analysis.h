// Cost analysis of HLO instructions: flops, transcendentals and bytes
// accessed, per instruction and per fusion (docs/cost-model.md, "Cost
// analysis"). Two rule sets:
//   generic  every elementwise op costs one flop per output element and
//            transcendental ops count as transcendentals;
//   GPU      (an op profile is given) elementwise ops cost the profile's
//            cycles per element, reductions charge their init values per
//            output element, concatenate costs 6 (or 400) flops per element,
//            library calls get dot / convolution flops, and fusions
//            propagate operand utilization from the root to the parameters.
#ifndef HLOGYM_COST_COST_ANALYSIS_H_
#define HLOGYM_COST_COST_ANALYSIS_H_

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlogym/cost/device.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/instruction.h"

namespace hlogym {

// A fused multiply-add counts as two flops.
inline constexpr int64_t kFmaFlops = 2;

struct CostProperties {
  double flops = 0;
  double transcendentals = 0;
  // Output bytes plus the bytes read from every operand.
  double bytes_accessed = 0;
  // Bytes written ("bytes accessed out").
  double output_bytes = 0;
  // max over (flops, transcendentals, bytes accessed) of value / rate, for
  // the rates in CostAnalysisOptions (0 when no rate is set).
  double optimal_seconds = 0;
  // Bytes written per top-level output: one entry for an array result, one
  // per tuple element for a tuple result.
  absl::InlinedVector<double, 1> output_bytes_by_index;
  // Bytes read from operand i, and the fraction of its elements read (1 =
  // each element once; above 1 when elements are read repeatedly).
  absl::InlinedVector<double, 3> operand_bytes;
  absl::InlinedVector<double, 3> operand_utilization;
  // GPU rules only: how many times the instruction's code is emitted in its
  // kernel, and how many of those emissions split basic blocks (used to
  // bound the size of fusions).
  double ir_size = 1;
  double basic_block_splits = 0;
  // A custom call with an unknown target (or a library call whose config
  // cannot be read): flops, bytes and seconds are -1.
  bool unknown = false;
  // A fusion containing such custom calls (they count 0 flops).
  bool contains_unknown = false;
};

// What a fusion analysis keeps about its fused computation, for the
// producer-consumer estimate of the performance model.
struct FusionInfo {
  // Elementwise-use roots of each fused parameter (node ids, sorted): the
  // nodes whose every element reads the parameter's element in lockstep.
  std::vector<absl::InlinedVector<int32_t, 2>> parameter_roots;
  // Utilization of each node when it is an elementwise-use root.
  std::vector<double> root_utilization;
  int32_t root_id = 0;
  // Sum of root utilizations over the roots two parameters share.
  double CommonElementwiseUtilization(int64_t param_a, int64_t param_b) const;
  // Same between a parameter and the fused root (1 when the root reads the
  // parameter elementwise).
  double CommonUtilizationWithRoot(int64_t param) const;
};

struct CostAnalysisOptions {
  // GPU rules when set (the profile of the target device).
  const OpProfile* op_profile = nullptr;
  // Count elements that are read more than once (broadcasts, windows) once
  // per read instead of once.
  bool count_multiple_input_accesses = false;
  // Constants inside fusions with more elements than this are read from
  // memory (smaller ones are immediates).
  int64_t immediate_constant_max_elements = 1;
  // Rates for optimal_seconds (per second; 0 = not set).
  double flops_per_second = 0;
  double transcendentals_per_second = 0;
  double bytes_per_second = 0;

  // The GPU rule set for `device` (immediate constants up to 8 elements).
  static CostAnalysisOptions Gpu(const GpuDevice& device,
                                 bool count_multiple_input_accesses);
};

// Bytes of a shape as the cost analysis counts them: arrays without a
// layout are 0; tuples are their table of 8-byte pointers; dynamic arrays
// add 4 bytes of size metadata per dimension; packed sub-byte layouts
// (E(n)) count n bits per element.
int64_t ShapeSizeBytes(const Shape& shape);

// The minor-most dimension of size > 1 in the physical layout; -1 if none.
int64_t MinorMostNonTrivialDimension(const Shape& shape);
// Dimensions of an array shape from minor to major (its layout, or the
// default major-to-minor layout when it has none).
DimVector PhysicalMinorToMajor(const Shape& shape);

// Elements of all array leaves of a shape.
int64_t ElementsInRecursive(const Shape& shape);

class CostAnalysis {
 public:
  explicit CostAnalysis(CostAnalysisOptions options = {});

  const CostAnalysisOptions& options() const { return options_; }

  // Properties of one instruction (a fusion is analysed through its fused
  // computation; `fusion_info`, when given, receives what the performance
  // model needs about it). Called computations (while, call, conditional)
  // count as the properties of one execution.
  absl::Status Analyze(const Instruction& inst, CostProperties* props,
                       FusionInfo* fusion_info = nullptr) const;
  absl::StatusOr<CostProperties> Analyze(const Instruction& inst) const;

  // Sum of the properties of every instruction of a computation.
  absl::StatusOr<CostProperties> AnalyzeComputation(
      const Computation& computation) const;

  // Flops of dots and convolutions (public for library-call models).
  static int64_t DotFlops(const Shape& lhs, const Shape& result,
                          const std::vector<int64_t>& lhs_contracting);
  static absl::StatusOr<int64_t> ConvolutionFlops(const Instruction& conv,
                                                  const Shape& lhs,
                                                  const Shape& rhs,
                                                  const Shape& result);

 private:
  absl::Status AnalyzeFusion(const Instruction& fusion, CostProperties* props,
                             FusionInfo* fusion_info) const;
  absl::Status HandleCustomCall(const Instruction& inst,
                                CostProperties* p) const;
  double ElementwiseFlops(Opcode op, const Shape& shape) const;
  void Finish(CostProperties* p) const;

  CostAnalysisOptions options_;
};

// True for opcodes that are elementwise for utilization propagation
// (elementwise ops, copy, and bitcast-convert that keeps the bit width).
bool IsElementwiseForCost(const Instruction& inst);

// True for a transpose (or copy) whose physical layout equals its
// operand's, i.e. one that moves no data.
bool IsBitcastTranspose(const Instruction& inst);

}  // namespace hlogym

#endif  // HLOGYM_COST_COST_ANALYSIS_H_
