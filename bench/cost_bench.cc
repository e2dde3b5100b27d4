// Speed of the analytical cost model: costing a 100k-instruction module
// cold and with a warm kernel cache after a local rewrite, and evaluations
// per second of 30-instruction graphs. docs/benchmarks.md has the floors.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <vector>

#include "generate.h"
#include "hlogym/cost/evaluator.h"
#include "hlogym/ir/computation.h"

namespace hlogym {
namespace {

GpuDevice H100() {
  absl::StatusOr<GpuDevice> d = LoadDevice("h100");
  if (!d.ok()) {
    std::cerr << d.status() << "\n";
    std::abort();
  }
  return *d;
}

const Module& Synthetic100k() {
  static const Module* m = GenerateSyntheticModule(100000, 1).release();
  return *m;
}

void Check(const absl::StatusOr<EvaluationResult>& r, benchmark::State& s) {
  if (!r.ok()) s.SkipWithError(std::string(r.status().message()).c_str());
}

// A fresh evaluator (empty cache) per iteration. Arg: per-kernel breakdown.
void BM_Cost100kCold(benchmark::State& state) {
  const Module& m = Synthetic100k();
  const GpuDevice device = H100();
  int64_t kernels = 0;
  for (auto _ : state) {
    ModelEvaluator ev(device, {.per_kernel = state.range(0) != 0});
    absl::StatusOr<EvaluationResult> r = ev.Evaluate(m);
    Check(r, state);
    if (r.ok()) kernels = r->kernel_count;
    benchmark::DoNotOptimize(r);
  }
  state.counters["kernels"] = static_cast<double>(kernels);
  state.counters["instructions"] = static_cast<double>(m.instruction_count());
}
BENCHMARK(BM_Cost100kCold)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Warm cache; each iteration rewrites one instruction of the entry (an
// elementwise binary op becomes a maximum, or back) and re-evaluates.
void BM_Cost100kWarmAfterRewrite(benchmark::State& state) {
  std::unique_ptr<Module> m = GenerateSyntheticModule(100000, 1);
  Computation* entry = m->entry_computation();
  Instruction* target = nullptr;
  entry->ForEachInstruction([&](Instruction* i) {
    if (target == nullptr && i->opcode() == Opcode::kAdd &&
        i->shape().IsArray() && i->shape().ElementsIn() > 1) {
      target = i;
    }
  });
  if (target == nullptr) {
    state.SkipWithError("no add to rewrite");
    return;
  }
  ModelEvaluator ev(H100(), {.per_kernel = state.range(0) != 0});
  Check(ev.Evaluate(*m), state);
  Instruction* current = target;
  bool rewritten = false;
  const int64_t misses_before = ev.cache_misses();
  int64_t iterations = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto repl = std::make_unique<Instruction>(
        rewritten ? Opcode::kAdd : Opcode::kMaximum, current->shape());
    repl->AppendOperand(current->operand(0));
    repl->AppendOperand(current->operand(1));
    repl->set_name(m->UniqueInstructionName("rewrite"));
    Instruction* added = entry->AddInstruction(std::move(repl));
    if (!current->ReplaceAllUsesWith(added).ok() ||
        !entry->RemoveInstruction(current).ok()) {
      state.SkipWithError("rewrite failed");
      return;
    }
    current = added;
    rewritten = !rewritten;
    state.ResumeTiming();
    absl::StatusOr<EvaluationResult> r = ev.Evaluate(*m);
    Check(r, state);
    benchmark::DoNotOptimize(r);
    ++iterations;
  }
  state.counters["misses_per_iter"] =
      iterations == 0 ? 0
                      : static_cast<double>(ev.cache_misses() - misses_before) /
                            static_cast<double>(iterations);
}
BENCHMARK(BM_Cost100kWarmAfterRewrite)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

// The cost of a cache miss: one kernel estimated from scratch (every
// non-free entry instruction of the 100k module in turn).
void BM_CostEstimateOneKernel(benchmark::State& state) {
  const Module& m = Synthetic100k();
  ModelEvaluator ev(H100());
  std::vector<const Instruction*> kernels;
  m.entry_computation()->ForEachInstruction([&](const Instruction* i) {
    switch (i->opcode()) {
      case Opcode::kParameter:
      case Opcode::kConstant:
      case Opcode::kTuple:
      case Opcode::kGetTupleElement:
        return;
      default:
        kernels.push_back(i);
    }
  });
  size_t k = 0;
  for (auto _ : state) {
    absl::StatusOr<RunTimeData> d =
        ev.model().EstimateRunTime(*kernels[k++ % kernels.size()]);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CostEstimateOneKernel);

// Evaluations per second of 30-instruction graphs: 64 different generated
// graphs, evaluated in turn. Arg 0: one evaluator whose cache stays warm
// (a search loop); arg 1: a fresh evaluator per evaluation.
void BM_Cost30Instructions(benchmark::State& state) {
  std::vector<std::unique_ptr<Module>> graphs;
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    graphs.push_back(GenerateSyntheticModule(30, seed));
  }
  const GpuDevice device = H100();
  ModelEvaluator warm(device);
  const bool cold = state.range(0) != 0;
  size_t i = 0;
  for (auto _ : state) {
    const Module& g = *graphs[i++ % graphs.size()];
    if (cold) {
      ModelEvaluator ev(device);
      absl::StatusOr<EvaluationResult> r = ev.Evaluate(g);
      Check(r, state);
      benchmark::DoNotOptimize(r);
    } else {
      absl::StatusOr<EvaluationResult> r = warm.Evaluate(g);
      Check(r, state);
      benchmark::DoNotOptimize(r);
    }
  }
  state.SetItemsProcessed(state.iterations());
  int64_t instructions = 0;
  for (const auto& g : graphs) instructions += g->instruction_count();
  state.counters["mean_instructions"] =
      static_cast<double>(instructions) / static_cast<double>(graphs.size());
}
BENCHMARK(BM_Cost30Instructions)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hlogym
