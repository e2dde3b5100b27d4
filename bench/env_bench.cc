// Speed of the environment: one step (augment = a dry pass, then the
// decisions applied with pruning) on the 10k-instruction synthetic module,
// and the graph observation of that module. docs/benchmarks.md has the
// floors (an env step on 10k instructions: at most 60 ms).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
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

// A corpus model of about 10k instructions as the general-fusion pipeline
// hands it to its first dry run (after the pre-fusion passes), or null
// when ../shared is absent.
std::unique_ptr<Env> CorpusPreFusionEnv(const char* file) {
  const std::filesystem::path path = std::filesystem::path(HLOGYM_SOURCE_DIR) /
                                     ".." / "shared" / "corpus" / "models" /
                                     file;
  if (!std::filesystem::exists(path)) return nullptr;
  absl::StatusOr<std::unique_ptr<Env>> env = Env::FromFile(path.string());
  if (!env.ok()) return nullptr;
  absl::StatusOr<bool> paused = (*env)->StartPipeline("general-fusion");
  if (!paused.ok() || !*paused) return nullptr;
  // Every original kept: the module the dry run saw.
  const std::vector<int64_t> keep((*env)->ChoiceCounts().size(), 0);
  if (!(*env)->Apply(keep).ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Env>> pre =
      Env::FromModule((*env)->module().Clone());
  return pre.ok() ? std::move(pre).value() : nullptr;
}

// Augment + apply + prune with `pass`, the first candidate everywhere.
void EnvStepOn(benchmark::State& state, const Env* base, const char* pass) {
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
  state.counters["instructions"] =
      static_cast<double>(base->module().instruction_count());
}

void EnvStep(benchmark::State& state, const char* pass) {
  std::unique_ptr<Env> base = Synthetic10kEnv();
  if (base == nullptr) {
    state.SkipWithError("module failed to load");
    return;
  }
  EnvStepOn(state, base.get(), pass);
}

void BM_EnvStepAlgebraicSimplifier10k(benchmark::State& state) {
  EnvStep(state, "algebraic-simplifier");
}
BENCHMARK(BM_EnvStepAlgebraicSimplifier10k)->Unit(benchmark::kMillisecond);
void BM_EnvStepGeneralFusion10k(benchmark::State& state) {
  EnvStep(state, "general-fusion");
}
BENCHMARK(BM_EnvStepGeneralFusion10k)->Unit(benchmark::kMillisecond);

// The same step on real models of about 10k instructions.
const char* const kCorpusTenK[] = {
    "xla-cpubench.gemma3_1b_flax.call.hlo",
    "torchxla-neuron.wenboqia.baseline_bert_1.hlo",
    "xla-bench.nv_maxtext_deepseek_1n4g.train_step.before_optimizations.hlo",
};
void BM_EnvStepGeneralFusionCorpus(benchmark::State& state) {
  const char* file = kCorpusTenK[state.range(0)];
  std::unique_ptr<Env> base = CorpusPreFusionEnv(file);
  if (base == nullptr) {
    state.SkipWithError(
        "../shared/corpus/models absent or the module "
        "does not reach a dry run");
    return;
  }
  state.SetLabel(file);
  EnvStepOn(state, base.get(), "general-fusion");
}
BENCHMARK(BM_EnvStepGeneralFusionCorpus)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond);

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
