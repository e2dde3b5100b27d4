// XLA's legacy GPU FusionMerger: merges a loop fusion into all of its users
// when every user can take it and the merged kernels are estimated to be
// no slower than the unmerged ones.
//
// Fusions are visited in post-order. A producer fusion is merged only if it
// can be merged into ALL its users (otherwise its result would still have
// to be computed and written): no user is a bitcast or a custom fusion,
// every pair is producer-consumer fusible, a producer that transposes most
// of its data is not merged into a reduction, each merged fusion fits the
// budgets (operands, shared memory, reductions), no merge makes the fused
// code too large or duplicates it too much, and the performance model says
// fused time <= unfused time. In dry mode each merge the pass would start
// from the original graph is proposed (one alternative per user).
#ifndef HLOGYM_PASSES_FUSION_MERGER_H_
#define HLOGYM_PASSES_FUSION_MERGER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hlogym/cost/gpu_performance_model.h"
#include "hlogym/passes/gpu_fusible.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

struct FusionMergerOptions {
  // Device of the performance model (a built-in name or a JSON path).
  std::string device = "h100";
};

// Sum over physically transposing fused ops of elements(op) /
// elements(fusion) reaches 0.5.
bool TransposesMostData(const Instruction& fusion);

class FusionMerger : public Pass {
 public:
  explicit FusionMerger(FusionMergerOptions options = {})
      : options_(std::move(options)) {}
  std::string_view name() const override { return "fusion-merger"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

  // Whether `producer` would be merged into all its users, with the reason
  // of a refusal. Exposed for tests.
  static FusionDecision ShouldMerge(const Instruction& producer,
                                    const GpuPerformanceModel& model);

 private:
  FusionMergerOptions options_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_FUSION_MERGER_H_
