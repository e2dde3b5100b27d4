// Registration of the fusion passes and the GPU pipeline's helpers.
#include <memory>

#include "hlogym/passes/fusion_merger.h"
#include "hlogym/passes/general_fusion.h"
#include "hlogym/passes/horizontal_fusion.h"
#include "hlogym/passes/instruction_fusion.h"
#include "hlogym/passes/multi_output_fusion.h"
#include "hlogym/passes/pass.h"
#include "hlogym/passes/priority_fusion.h"
#include "hlogym/passes/variadic_op_splitter.h"
#include "hlogym/passes/while_loop_trip_count_annotator.h"

namespace hlogym {

void RegisterFusionPasses(PassRegistry& registry) {
  registry.Register(
      "general-fusion",
      "offers every legal producer-consumer fusion as an alternative "
      "(multi-output where the producer has other users); no heuristics",
      [] { return std::make_unique<GeneralFusion>(); });
  registry.Register(
      "instruction-fusion",
      "legacy GPU instruction fusion: producers into consumers by XLA's "
      "rules and limits (option may_duplicate)",
      [] { return std::make_unique<GpuInstructionFusion>(); });
  registry.Register("fusion-merger",
                    "merges a loop fusion into all of its users when the "
                    "performance model says it is not slower (option device)",
                    [] { return std::make_unique<FusionMerger>(); });
  registry.Register("multi-output-fusion",
                    "sibling and producer-consumer multi-output fusion "
                    "(option device)",
                    [] { return std::make_unique<GpuMultiOutputFusion>(); });
  registry.Register("horizontal-loop-fusion",
                    "independent loop kernels feeding one consumer into one "
                    "launch (plain or sliced); entry computation only",
                    [] { return std::make_unique<HorizontalLoopFusion>(); });
  registry.Register("horizontal-input-fusion",
                    "independent reduction kernels feeding one consumer into "
                    "one multi-output input fusion",
                    [] { return std::make_unique<HorizontalInputFusion>(); });
  registry.Register("priority-fusion",
                    "XLA's current GPU fusion: producers in order of the "
                    "modelled gain of fusing them into all their users "
                    "(option device)",
                    [] { return std::make_unique<PriorityFusion>(); });
  registry.Register("variadic-op-splitter",
                    "splits concatenates of more than 128 operands into a "
                    "tree",
                    [] { return std::make_unique<VariadicOpSplitter>(); });
  registry.Register(
      "while-loop-trip-count-annotator",
      "records derivable while-loop trip counts in the backend config "
      "(known_trip_count), as XLA does before fusion",
      [] { return std::make_unique<WhileLoopTripCountAnnotator>(); });
}

}  // namespace hlogym
