// One optimization run, as `hlogym optimize` and `hlogym bench-agents`
// report it: the unoptimized module, the xla-gpu baseline, and an agent's
// decisions over a decision pipeline, all priced by the same model.
#ifndef HLOGYM_SEARCH_OPTIMIZE_H_
#define HLOGYM_SEARCH_OPTIMIZE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "hlogym/ir/module.h"
#include "hlogym/search/agent.h"
#include "hlogym/search/fmcts.h"

namespace hlogym {

struct OptimizeOptions {
  std::string pipeline = "general-fusion";  // a decision pipeline
  std::string agent = "fmcts";
  AgentOptions agent_options;
  std::string device = "h100";  // of the analytical model
  // Run the optimized and the unoptimized module in the interpreter on the
  // same inputs and compare every output.
  bool check_output = true;
  uint64_t check_seed = 0;
  // The interpreter gives up after this many seconds (the check is then
  // reported as not done).
  double check_time_limit_seconds = 60;
};

// f-MCTS's statistics as one JSON object: the `fmcts` object of the
// report (and Python's SearchResult.stats).
std::string FmctsStatsJson(const FmctsStats& stats);

// The baseline of a module: xla-gpu's result, priced by the model.
struct BaselineResult {
  double unoptimized_seconds = 0;
  int64_t kernel_count_unoptimized = 0;
  double seconds = 0;
  int64_t kernel_count = 0;
  uint64_t hash = 0;
};
absl::StatusOr<BaselineResult> ComputeBaseline(const Module& module,
                                               const std::string& device);

struct OptimizeReport {
  std::string module;
  std::string pipeline;
  std::string agent;
  std::string device;
  BaselineResult baseline;
  double optimized_seconds = 0;
  int64_t kernel_count_optimized = 0;
  uint64_t hash_optimized = 0;
  bool hash_equal_baseline = false;
  // optimized / baseline
  double ratio = 0;
  // Unset when the check was not run or could not run (see message).
  std::optional<bool> equal_output;
  std::string output_check_message;
  int64_t evaluations = 0;
  int64_t states_visited = 0;
  int64_t steps = 0;
  double search_seconds = 0;
  bool timed_out = false;
  int64_t threads = 1;  // threads the search ran on
  // The f-MCTS search's own statistics (agent fmcts only): where its time
  // went (simulations per commit, rollouts) and how the DAG of states grew.
  std::optional<FmctsStats> fmcts;
  std::unique_ptr<Module> optimized;

  // The report's fields as one JSON object (`indent` < 0: one line).
  std::string ToJson(int indent = 2) const;
  // The human-readable report.
  std::string ToText() const;
};

// `baseline` may be given when it is already known (bench-agents computes
// it once per module for all agents).
absl::StatusOr<OptimizeReport> Optimize(
    const Module& module, const OptimizeOptions& options,
    const std::optional<BaselineResult>& baseline = std::nullopt);

}  // namespace hlogym

#endif  // HLOGYM_SEARCH_OPTIMIZE_H_
