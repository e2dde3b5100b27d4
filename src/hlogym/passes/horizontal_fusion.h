// XLA's GPU horizontal fusion passes (docs: heuristics sections 3.7, 3.8).
// Both fuse independent kernels that feed the same consumer, to save
// kernel launches; the members cannot depend on each other because the
// consumer (or the computation's root) is their only user.
#ifndef HLOGYM_PASSES_HORIZONTAL_FUSION_H_
#define HLOGYM_PASSES_HORIZONTAL_FUSION_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// HorizontalLoopFusion, on the entry computation. Candidates are small
// elementwise ops, loop fusions and concatenate input fusions whose only
// user besides the root is the consumer. Consumers are visited from uses
// to defs; for each, a plain attempt (members of equal output shape: one
// loop fusion outputting every member's results) then a sliced attempt
// (outputs flattened, concatenated and sliced back: an input fusion).
// Apply mode pushes the new fusions back as consumers; dry mode proposes
// single-step fusions of original instructions.
class HorizontalLoopFusion : public Pass {
 public:
  HorizontalLoopFusion();
  std::string_view name() const override { return "horizontal-loop-fusion"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;

  static constexpr std::string_view kLoopRule = "loop-mode";
  static constexpr std::string_view kSlicedRule = "sliced-mode";
};

// HorizontalInputFusion: the input-fusible reductions feeding one consumer
// (and nothing else but the root) are sorted by input shape and merged
// greedily into multi-output input fusions when their shapes are
// multi-output compatible and the budgets allow.
class HorizontalInputFusion : public Pass {
 public:
  std::string_view name() const override { return "horizontal-input-fusion"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_HORIZONTAL_FUSION_H_
