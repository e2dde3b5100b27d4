// GpuMultiOutputFusion: XLA's GPU multi-output fusion, which runs after
// the producer-consumer fusion passes (docs: heuristics section 3.6).
//
// Per fusible computation, instructions are visited from uses to defs. For
// each instruction P:
//  1. sibling fusion: fusions among P's users absorb later users that are
//     not connected to them, have compatible loop shapes, read overlapping
//     parts of P and fit the budgets (no cost model);
//  2. producer-consumer multi-output fusion: a producer with several users
//     becomes an extra output of one of its consumers when the analytical
//     performance model says the fused kernel is no slower.
//
// Apply mode iterates as XLA does (a fusion keeps absorbing siblings).
// Dry mode proposes each fusion among original instructions as a
// single-step candidate.
#ifndef HLOGYM_PASSES_MULTI_OUTPUT_FUSION_H_
#define HLOGYM_PASSES_MULTI_OUTPUT_FUSION_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

class GpuMultiOutputFusion : public Pass {
 public:
  GpuMultiOutputFusion();
  std::string_view name() const override { return "multi-output-fusion"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;

  // "device": the GPU the run-time estimates are made for (default h100;
  // a built-in name or a device JSON file).
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override { return {"device"}; }

  // Rule names (rules() indices).
  static constexpr std::string_view kSiblingRule = "sibling";
  static constexpr std::string_view kProducerConsumerRule = "producer-consumer";

 private:
  std::string device_ = "h100";
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_MULTI_OUTPUT_FUSION_H_
