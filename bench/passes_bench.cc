// Speed of the pass framework: a dry AlgebraicSimplifier run (augment) on a
// 10k-instruction module, applying decisions with pruning, and the
// simplifier to fixpoint on the largest corpus module (when ../shared is
// there). docs/benchmarks.md has the floors.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>

#include "generate.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/passes/algebraic_simplifier.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/general_fusion.h"
#include "hlogym/passes/pipelines.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

const Module& Synthetic10k() {
  static const Module* m = GenerateSyntheticModule(10000, 7).release();
  return *m;
}

// The corpus model with the most instructions, if the corpus is present.
const Module* LargestCorpusModule() {
  static const Module* m = [] {
    std::string path = std::string(HLOGYM_SOURCE_DIR) +
                       "/../shared/corpus/models/"
                       "xla-bench.mixtral_8x7b_bf16_2x8.train_step.hlo";
    if (const char* p = std::getenv("HLOGYM_LARGEST_MODULE")) path = p;
    if (!std::filesystem::exists(path)) return static_cast<Module*>(nullptr);
    auto parsed = ParseModuleFile(path);
    return parsed.ok() ? parsed->release() : nullptr;
  }();
  return m;
}

void BM_AlgebraicAugment10k(benchmark::State& state) {
  const Module& base = Synthetic10k();
  AlgebraicSimplifier pass;
  int64_t alternatives = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Module> m = base.Clone();
    m->set_defer_fusion_bodies(state.range(1) != 0);
    state.ResumeTiming();
    absl::StatusOr<AugmentStats> s = pass.RunDry(m.get());
    if (!s.ok()) {
      state.SkipWithError(std::string(s.status().message()).c_str());
      break;
    }
    alternatives = s->alternatives;
    state.PauseTiming();
    m.reset();
    state.ResumeTiming();
  }
  state.counters["instructions"] =
      static_cast<double>(base.instruction_count());
  state.counters["alternatives"] = static_cast<double>(alternatives);
}
BENCHMARK(BM_AlgebraicAugment10k)->Unit(benchmark::kMillisecond);

// Apply + prune with the first candidate everywhere, on the augmented
// 10k-instruction module.
void BM_ApplyAndPrune10k(benchmark::State& state) {
  std::unique_ptr<Module> augmented = Synthetic10k().Clone();
  AlgebraicSimplifier pass;
  if (!pass.RunDry(augmented.get()).ok()) {
    state.SkipWithError("augment failed");
    return;
  }
  const int64_t nodes =
      static_cast<int64_t>(AlternativeNodes(*augmented).size());
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Module> m = augmented->Clone();
    state.ResumeTiming();
    DecisionPolicy first = DecisionPolicy::First();
    std::vector<int64_t> d = first.Decide(AlternativeNodes(*m));
    absl::StatusOr<ApplyStats> s = ApplyDecisions(m.get(), d);
    if (!s.ok()) state.SkipWithError(std::string(s.status().message()).c_str());
    state.PauseTiming();
    m.reset();
    state.ResumeTiming();
  }
  state.counters["alternatives"] = static_cast<double>(nodes);
}
BENCHMARK(BM_ApplyAndPrune10k)->Unit(benchmark::kMillisecond);

void BM_AlgebraicFixpointLargestCorpusModule(benchmark::State& state) {
  const Module* base = LargestCorpusModule();
  if (base == nullptr) {
    state.SkipWithError("corpus not found (set HLOGYM_LARGEST_MODULE)");
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Module> m = base->Clone();
    state.ResumeTiming();
    AlgebraicSimplifier pass;
    // Greedy, until a whole run changes nothing (capped at 25 runs).
    for (int i = 0; i < 25; ++i) {
      absl::StatusOr<bool> changed = pass.Run(m.get());
      if (!changed.ok()) {
        state.SkipWithError(std::string(changed.status().message()).c_str());
        break;
      }
      if (!*changed) break;
    }
    state.PauseTiming();
    m.reset();
    state.ResumeTiming();
  }
  state.counters["instructions"] =
      static_cast<double>(base->instruction_count());
}
BENCHMARK(BM_AlgebraicFixpointLargestCorpusModule)
    ->Unit(benchmark::kMillisecond);

// One dry GeneralFusion run (every legal producer-consumer fusion offered
// as an alternative, and sibling fusions) on the 10k-instruction module.
// Arguments: sibling partners per reader (the option; 0 = every pair), -1
// for producer-consumer candidates only; then 1 to defer candidate bodies
// as decision loops and the environment do (Module::defer_fusion_bodies),
// 0 to build every one.
void BM_GeneralFusionAugment10k(benchmark::State& state) {
  const Module& base = Synthetic10k();
  GeneralFusion pass;
  const absl::Status set =
      state.range(0) < 0
          ? pass.SetOption("siblings", "false")
          : pass.SetOption("sibling_partners", std::to_string(state.range(0)));
  if (!set.ok()) {
    state.SkipWithError(std::string(set.message()).c_str());
    return;
  }
  int64_t candidates = 0;
  int64_t alternatives = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Module> m = base.Clone();
    m->set_defer_fusion_bodies(state.range(1) != 0);
    state.ResumeTiming();
    absl::StatusOr<AugmentStats> s = pass.RunDry(m.get());
    if (!s.ok()) {
      state.SkipWithError(std::string(s.status().message()).c_str());
      break;
    }
    alternatives = s->alternatives;
    candidates = s->candidates;
    state.PauseTiming();
    m.reset();
    state.ResumeTiming();
  }
  state.counters["instructions"] =
      static_cast<double>(base.instruction_count());
  state.counters["alternatives"] = static_cast<double>(alternatives);
  state.counters["candidates"] = static_cast<double>(candidates);
}
BENCHMARK(BM_GeneralFusionAugment10k)
    ->ArgNames({"partners", "deferred"})
    ->Args({1, 1})
    ->Args({1, 0})
    ->Args({-1, 1})
    ->Args({-1, 0})
    ->Args({2, 1})
    ->Args({0, 1})
    ->Unit(benchmark::kMillisecond);

// A whole named pipeline on the largest corpus module.
void RunPipelineOnLargest(benchmark::State& state, const char* name) {
  const Module* base = LargestCorpusModule();
  if (base == nullptr) {
    state.SkipWithError("corpus not found (set HLOGYM_LARGEST_MODULE)");
    return;
  }
  int64_t after = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Module> m = base->Clone();
    state.ResumeTiming();
    absl::StatusOr<PipelineRunStats> s = RunNamedPipeline(m.get(), name);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.status().message()).c_str());
      break;
    }
    state.PauseTiming();
    after = m->instruction_count();
    m.reset();
    state.ResumeTiming();
  }
  state.counters["instructions"] =
      static_cast<double>(base->instruction_count());
  state.counters["instructions_after"] = static_cast<double>(after);
}
void BM_XlaGpuPipelineLargestCorpusModule(benchmark::State& state) {
  RunPipelineOnLargest(state, "xla-gpu");
}
BENCHMARK(BM_XlaGpuPipelineLargestCorpusModule)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
void BM_XlaGpuLegacyPipelineLargestCorpusModule(benchmark::State& state) {
  RunPipelineOnLargest(state, "xla-gpu-legacy");
}
BENCHMARK(BM_XlaGpuLegacyPipelineLargestCorpusModule)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace hlogym
