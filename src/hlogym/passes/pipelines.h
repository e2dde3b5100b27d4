// The named pipelines: XLA's GPU optimization pipeline with the current
// fusion stack (`xla-gpu`, the baseline results are reported against) or
// the legacy one (`xla-gpu-legacy`), and the two decision pipelines of the
// alternative-graph approach (`general-fusion`, `single-fusion`), whose dry
// fusion pass pauses a PipelineRunner for decisions. docs/fusion.md lists
// every stage and the XLA passes that are not part of HloGym yet.
#ifndef HLOGYM_PASSES_PIPELINES_H_
#define HLOGYM_PASSES_PIPELINES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/pipeline.h"

namespace hlogym {

// The general-fusion and single-fusion decision loops stop after this many
// rounds (each round changes the graph; real graphs converge long before).
inline constexpr int64_t kMaxDecisionRounds = 200;

struct NamedPipelineInfo {
  std::string name;
  std::string description;
};
const std::vector<NamedPipelineInfo>& NamedPipelines();

// Builds a named pipeline (an unknown name lists the known ones).
absl::StatusOr<std::unique_ptr<Pipeline>> BuildNamedPipeline(
    std::string_view name);

struct PipelineRunOptions {
  // Passes or sub-pipelines switched off by name (pass-analysis runs).
  std::vector<std::string> disabled;
  // Decides the alternatives the dry passes leave.
  DecisionPolicy policy = DecisionPolicy::First();
  // Verify after every pass (slower; on in tests).
  bool verify = false;
};
struct PipelineRunStats {
  int64_t passes_run = 0;
  int64_t decision_rounds = 0;  // pauses at dry passes
  int64_t alternatives = 0;     // alternatives decided in total
  int64_t non_original = 0;     // decisions other than the original
  // Loops cut short because the module outgrew their start (GrewTooMuch).
  int64_t growth_stops = 0;
};
// Runs a named pipeline on `module`, deciding every pause with the policy.
absl::StatusOr<PipelineRunStats> RunNamedPipeline(
    Module* module, std::string_view name, PipelineRunOptions options = {});

// XLA GPU passes the pipelines leave out because HloGym does not have them
// (one per line, with the stage they belong to).
const std::vector<std::string>& MissingXlaGpuPasses();

}  // namespace hlogym

#endif  // HLOGYM_PASSES_PIPELINES_H_
