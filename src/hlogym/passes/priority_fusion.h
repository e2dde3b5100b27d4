// PriorityFusion: XLA's default GPU fusion pass. Producers are fused into
// all of their consumers in the order of a priority queue whose priority is
// the run time the GPU performance model expects to save.
//
// Per fusible computation (GetFusibleComputations):
//  * candidates: fusible instructions with users, except parameters,
//    tuples and get-tuple-elements;
//  * Priority(producer): +inf for a bitcast (always first), -inf for a
//    constant (small ones are handled at the end), -inf when some
//    non-bitcast user cannot take it (CanFuse) or every user is a bitcast,
//    else time_unfused - time_fused of the model over its non-bitcast users
//    (as GpuPerformanceModel::EstimateRunTimes: launch + exec(P) + the sum
//    over consumers of exec(C) - exec(P fused into C)). Negative priorities
//    are not queued; ties go to the higher unique id (a max-heap on
//    (priority, id) with lazy deletion).
//  * main loop: pop the best producer, fuse it into every non-bitcast
//    consumer (a bitcast producer only into those it can fuse into) with
//    FuseProducerIntoConsumer(..., ExternalUses::kDuplicate); the new
//    fusion's kind is the emitter of its fused computation
//    (FusionKindForComputation of the result). A producer left without
//    users disappears. Then the priorities of the new fusions and of their
//    fusible operands (not the producer, constants or get-tuple-elements)
//    are recomputed: each is the sum of per-(producer, consumer) terms, and
//    only the terms of new pairs are estimated (XLA adds the new
//    consumers' terms to the old priority and subtracts the removed ones';
//    the result is the same up to rounding). Estimates, cost analyses and
//    CanFuse results are cached by unique id; fusing replaces the consumer
//    (and the producer's fused copy) with new instructions, new ids, so
//    nothing stale is looked up.
//  * CanFuse, in order: the producer is not the computation's root; both
//    fusible; both array-shaped; the consumer is not a bitcast (unless a
//    broadcast feeds a bitcast whose users are all transposes); scatter
//    legality; not a significant reduce (>= 16 inputs per output) on both
//    sides, and not a transpose into a significant reduce; a reduction
//    producer must not turn into a loop fusion; FusionFitsInBudget;
//    ProducerConsumerMergedTooLarge; ShouldFuseInPlaceOp. (XLA's Triton
//    path is not modelled.) Pairs with control dependencies or side
//    effects, and dead consumers, are refused too: the fusion operations
//    reject them.
//  * after the queue drains, every constant with at most one element is
//    fused into each fusible user (scatter legality respected); a user's
//    small constants are fused in one step.
// XLA also renames instructions with a ".0" suffix; this pass does not.
//
// Dry mode (an agent overrides XLA's choices): the pass proposes, on the
// original graph only, the fusion of every producer that the queue would
// hold at the start (priority >= 0, which includes bitcasts) into each
// consumer it can fuse into, and of each user's small constants into it.
// Each proposal is one step (no chaining: a fusion created in the run is
// never fused again), so each use of a consumer gets one alternatives node
// listing the original and one candidate per proposal for that consumer.
#ifndef HLOGYM_PASSES_PRIORITY_FUSION_H_
#define HLOGYM_PASSES_PRIORITY_FUSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlogym/cost/gpu_performance_model.h"
#include "hlogym/passes/gpu_fusible.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

struct PriorityFusionOptions {
  // Device of the performance model (a built-in name or a JSON path).
  std::string device = "h100";
};

// What the last run did (for tests and logs).
struct PriorityFusionStats {
  int64_t producers_fused = 0;  // producers dequeued and fused
  int64_t fusions = 0;          // producer-consumer fusions made
  int64_t constant_fusions = 0;
  // Names of the fused producers, in the order they were dequeued.
  std::vector<std::string> order;
};

class PriorityFusion : public Pass {
 public:
  explicit PriorityFusion(PriorityFusionOptions options = {});
  ~PriorityFusion() override;

  std::string_view name() const override { return "priority-fusion"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

  const PriorityFusionStats& stats() const { return stats_; }

  // The priority `producer` has on the current graph (seconds; +/-inf as
  // described above), without caches.
  absl::StatusOr<double> Priority(const Instruction& producer);
  // Run time of the kernel fusing `producer` into `consumer`, as the pass
  // computes it (GpuPerformanceModel::EstimateFusedRunTime's exec_time,
  // from the model's kernel analyses, which the pass caches per
  // instruction).
  absl::StatusOr<double> FusedExecTime(const Instruction& producer,
                                       const Instruction& consumer);
  // CanFuse of the pass, in the order listed above.
  static FusionDecision CanFuse(const Instruction& producer,
                                const Instruction& consumer);
  // The fusion kind a fusion of `producer` into `consumer` gets: the
  // emitter of the fused computation (reduction, transpose, scatter,
  // concatenate, input slices: kInput; else kLoop).
  static FusionKind FusedKind(const Instruction& producer,
                              const Instruction& consumer);
  // FusedKind(producer, consumer) == kLoop, as CanFuse asks it: worked out
  // from the two instructions where it can be, without building the fused
  // computation.
  static bool FusedIsLoop(const Instruction& producer,
                          const Instruction& consumer);

  // The model for the configured device (created on first use).
  absl::StatusOr<const GpuPerformanceModel*> Model();

 private:
  PriorityFusionOptions options_;
  std::unique_ptr<GpuPerformanceModel> model_;
  std::string model_device_;
  PriorityFusionStats stats_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_PRIORITY_FUSION_H_
