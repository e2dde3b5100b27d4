#include "hlogym/search/optimize.h"

#include <chrono>
#include <cstdio>

#include "hlogym/cost/evaluator.h"
#include "hlogym/eval/compare.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/pipelines.h"
#include "nlohmann/json.hpp"

namespace hlogym {
namespace {

// Compares the outputs of `got` and `want` on the same generated inputs.
// Unset when it cannot tell (an input that cannot be made up, a time
// limit); `message` says why or what differs.
std::optional<bool> CheckOutputs(const Module& got, const Module& want,
                                 uint64_t seed, double time_limit,
                                 std::string* message) {
  absl::StatusOr<std::vector<Literal>> inputs =
      GenerateInputs(ParameterShapes(*want.entry_computation()), seed);
  if (!inputs.ok()) {
    *message = StrCat("not checked: ", inputs.status().message());
    return std::nullopt;
  }
  InterpreterOptions o;
  o.time_limit_seconds = time_limit;
  Interpreter interp(o);
  absl::StatusOr<Literal> a = interp.Run(got, *inputs);
  absl::StatusOr<Literal> b = interp.Run(want, *inputs);
  if (!b.ok()) {
    *message = StrCat("not checked: the unoptimized module does not run: ",
                      b.status().message());
    return std::nullopt;
  }
  if (!a.ok()) {
    if (absl::IsDeadlineExceeded(a.status())) {
      *message = StrCat("not checked: ", a.status().message());
      return std::nullopt;
    }
    *message =
        StrCat("the optimized module does not run: ", a.status().message());
    return false;
  }
  // Tolerances no tighter than the unoptimized module's least precise
  // floating type (see CompareOptions::computed_in).
  CompareOptions options;
  options.computed_in = LeastPreciseFloatType(want);
  CompareReport r = Compare(*a, *b, options);
  *message =
      r.ok ? StrCat("equal (", r.buffers.size(), " buffers, seed ", seed, ")")
           : r.ToString();
  return r.ok;
}

nlohmann::json FmctsStatsToJson(const FmctsStats& f) {
  nlohmann::json j;
  j["commits"] = f.simulations_per_step.size();
  j["simulations_per_commit"] = f.simulations_per_step;
  j["rollouts"] = f.rollouts;
  j["rollout_steps"] = f.rollout_steps;
  j["prior_calls"] = f.prior_calls;
  j["tree_states"] = f.tree_states;
  j["merged_edges"] = f.merged_edges;
  j["committed_seconds"] = f.committed_seconds;
  j["commit_returns"] = f.commit_returns;
  j["commit_cycles"] = f.commit_cycles;
  return j;
}

}  // namespace

std::string FmctsStatsJson(const FmctsStats& stats) {
  return FmctsStatsToJson(stats).dump();
}

absl::StatusOr<BaselineResult> ComputeBaseline(const Module& module,
                                               const std::string& device) {
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> eval,
                          CreateEvaluator(StrCat("model:", device)));
  BaselineResult b;
  HLOGYM_ASSIGN_OR_RETURN(EvaluationResult u, eval->Evaluate(module));
  b.unoptimized_seconds = u.total_seconds;
  b.kernel_count_unoptimized = u.kernel_count;
  std::unique_ptr<Module> m = module.Clone();
  HLOGYM_RETURN_IF_ERROR(RunNamedPipeline(m.get(), "xla-gpu").status());
  HLOGYM_ASSIGN_OR_RETURN(EvaluationResult r, eval->Evaluate(*m));
  b.seconds = r.total_seconds;
  b.kernel_count = r.kernel_count;
  b.hash = DagHash(*m);
  return b;
}

absl::StatusOr<OptimizeReport> Optimize(
    const Module& module, const OptimizeOptions& options,
    const std::optional<BaselineResult>& baseline) {
  OptimizeReport rep;
  rep.module = module.name();
  rep.pipeline = options.pipeline;
  rep.agent = options.agent;
  rep.device = options.device;
  if (baseline.has_value()) {
    rep.baseline = *baseline;
  } else {
    HLOGYM_ASSIGN_OR_RETURN(rep.baseline,
                            ComputeBaseline(module, options.device));
  }
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Agent> agent,
                          CreateAgent(options.agent, options.agent_options));
  EnvOptions eo;
  eo.evaluator = StrCat("model:", options.device);
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Env> env,
                          Env::FromModule(module.Clone(), eo));
  HLOGYM_RETURN_IF_ERROR(env->StartPipeline(options.pipeline).status());
  HLOGYM_ASSIGN_OR_RETURN(SearchResult sr, agent->Search(*env));
  if (sr.best == nullptr) {
    return absl::InternalError(
        StrCat("agent '", options.agent, "' returned no end state"));
  }
  HLOGYM_ASSIGN_OR_RETURN(EvaluationResult r, sr.best->Evaluate());
  rep.optimized_seconds = r.total_seconds;
  rep.kernel_count_optimized = r.kernel_count;
  rep.hash_optimized = sr.best->Hash();
  rep.hash_equal_baseline = rep.hash_optimized == rep.baseline.hash;
  rep.ratio = rep.baseline.seconds > 0
                  ? rep.optimized_seconds / rep.baseline.seconds
                  : 1.0;
  rep.evaluations = sr.evaluations;
  rep.states_visited = sr.states_visited;
  rep.steps = static_cast<int64_t>(sr.trajectory.size());
  rep.search_seconds = sr.search_seconds;
  rep.timed_out = sr.timed_out;
  rep.threads = sr.threads;
  if (const auto* f = dynamic_cast<const FmctsAgent*>(agent.get())) {
    rep.fmcts = f->stats();
  }
  rep.optimized = sr.best->module().Clone();
  if (options.check_output) {
    rep.equal_output = CheckOutputs(*rep.optimized, module, options.check_seed,
                                    options.check_time_limit_seconds,
                                    &rep.output_check_message);
  } else {
    rep.output_check_message = "not checked (disabled)";
  }
  return rep;
}

std::string OptimizeReport::ToJson(int indent) const {
  nlohmann::json j;
  j["module"] = module;
  j["pipeline"] = pipeline;
  j["agent"] = agent;
  j["device"] = device;
  j["unoptimized_seconds"] = baseline.unoptimized_seconds;
  j["baseline_seconds"] = baseline.seconds;
  j["optimized_seconds"] = optimized_seconds;
  j["ratio"] = ratio;
  j["kernel_count_unoptimized"] = baseline.kernel_count_unoptimized;
  j["kernel_count_baseline"] = baseline.kernel_count;
  j["kernel_count_optimized"] = kernel_count_optimized;
  j["hash_baseline"] = DagHashHex(baseline.hash);
  j["hash_optimized"] = DagHashHex(hash_optimized);
  j["hash_equal_baseline"] = hash_equal_baseline;
  if (equal_output.has_value()) {
    j["equal_output"] = *equal_output;
  } else {
    j["equal_output"] = nullptr;
  }
  j["output_check"] = output_check_message;
  j["evaluations"] = evaluations;
  j["states_visited"] = states_visited;
  j["steps"] = steps;
  j["search_seconds"] = search_seconds;
  j["timed_out"] = timed_out;
  j["threads"] = threads;
  if (fmcts.has_value()) j["fmcts"] = FmctsStatsToJson(*fmcts);
  return j.dump(indent);
}

std::string OptimizeReport::ToText() const {
  auto us = [](double s) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3f us", s * 1e6);
    return std::string(buf);
  };
  char ratio_text[64];
  std::snprintf(ratio_text, sizeof(ratio_text), "%.4f", ratio);
  std::string out;
  StrAppend(&out, "module:      ", module, "\n");
  StrAppend(&out, "pipeline:    ", pipeline, " (agent ", agent, ", model ",
            device, ")\n");
  StrAppend(&out, "unoptimized: ", us(baseline.unoptimized_seconds), " in ",
            baseline.kernel_count_unoptimized, " kernels\n");
  StrAppend(&out, "xla-gpu:     ", us(baseline.seconds), " in ",
            baseline.kernel_count, " kernels (baseline)\n");
  StrAppend(&out, "optimized:   ", us(optimized_seconds), " in ",
            kernel_count_optimized, " kernels\n");
  StrAppend(&out, "ratio:       ", ratio_text, " (optimized / baseline; ",
            ratio < 0.94   ? "faster"
            : ratio > 1.06 ? "slower"
                           : "on par",
            ")\n");
  StrAppend(&out, "hash:        ", DagHashHex(hash_optimized),
            hash_equal_baseline ? " (equal to the baseline's)"
                                : " (differs from the baseline's)",
            "\n");
  StrAppend(&out, "outputs:     ",
            !equal_output.has_value() ? ""
            : *equal_output           ? "EQUAL to the unoptimized module: "
                            : "DIFFERENT from the unoptimized module: ",
            output_check_message, "\n");
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.2f s", search_seconds);
  StrAppend(&out, "search:      ", evaluations, " evaluations, ",
            states_visited, " states, ", steps, " steps, ", secs,
            timed_out ? " (time limit reached)" : "", "\n");
  if (fmcts.has_value()) {
    int64_t simulations = 0;
    for (int64_t n : fmcts->simulations_per_step) simulations += n;
    StrAppend(&out, "f-MCTS:      ", fmcts->simulations_per_step.size(),
              " commits, ", simulations, " simulations, ", fmcts->rollouts,
              " rollouts (", fmcts->rollout_steps, " steps), ",
              fmcts->merged_edges, " edges to known states");
    if (fmcts->commit_returns > 0) {
      StrAppend(&out, ", ", fmcts->commit_returns,
                " commits back to a committed state");
    }
    if (fmcts->commit_cycles > 0) {
      StrAppend(&out, ", ended by a commit cycle");
    }
    StrAppend(&out, "; committed end ", us(fmcts->committed_seconds), "\n");
  }
  return out;
}

}  // namespace hlogym
