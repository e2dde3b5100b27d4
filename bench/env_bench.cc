// Speed of the environment: one step (augment = a dry pass, then the
// decisions applied with pruning) on the 10k-instruction synthetic module,
// and the graph observation of that module. docs/benchmarks.md has the
// floors (an env step on 10k instructions: at most 60 ms).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "generate.h"
#include "hlogym/env/env.h"
#include "hlogym/env/observation.h"

namespace hlogym {
namespace {

std::unique_ptr<Env> Synthetic10kEnv() {
  absl::StatusOr<std::unique_ptr<Env>> env =
      Env::FromModule(GenerateSyntheticModule(10000, 7));
  return env.ok() ? std::move(env).value() : nullptr;
}

// Augment + apply + prune with `pass`, the first candidate everywhere.
void EnvStep(benchmark::State& state, const char* pass) {
  std::unique_ptr<Env> base = Synthetic10kEnv();
  if (base == nullptr) {
    state.SkipWithError("module failed to load");
    return;
  }
  int64_t alternatives = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Env> env = base->Clone();
    state.ResumeTiming();
    absl::StatusOr<bool> dry = env->RunPass(pass, /*dry=*/true);
    if (!dry.ok()) {
      state.SkipWithError(std::string(dry.status().message()).c_str());
      break;
    }
    std::vector<int64_t> d;
    for (int64_t c : env->ChoiceCounts()) d.push_back(c > 1 ? 1 : 0);
    alternatives = static_cast<int64_t>(d.size());
    absl::StatusOr<ApplyStats> a = env->Apply(d);
    if (!a.ok()) {
      state.SkipWithError(std::string(a.status().message()).c_str());
      break;
    }
    state.PauseTiming();
    env.reset();
    state.ResumeTiming();
  }
  state.counters["alternatives"] = static_cast<double>(alternatives);
}
void BM_EnvStepAlgebraicSimplifier10k(benchmark::State& state) {
  EnvStep(state, "algebraic-simplifier");
}
BENCHMARK(BM_EnvStepAlgebraicSimplifier10k)->Unit(benchmark::kMillisecond);
void BM_EnvStepGeneralFusion10k(benchmark::State& state) {
  EnvStep(state, "general-fusion");
}
BENCHMARK(BM_EnvStepGeneralFusion10k)->Unit(benchmark::kMillisecond);

void BM_Observation10k(benchmark::State& state) {
  std::unique_ptr<Env> env = Synthetic10kEnv();
  if (env == nullptr) {
    state.SkipWithError("module failed to load");
    return;
  }
  Observation obs;
  for (auto _ : state) {
    absl::Status s = BuildObservationInto(env->module(), {}, &obs);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(obs.in_edge_indices.data());
  }
  state.counters["nodes"] = static_cast<double>(obs.num_nodes());
}
BENCHMARK(BM_Observation10k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hlogym
