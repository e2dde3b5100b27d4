// Throughput of parsing, verifying, printing, hashing and cloning, on the
// largest corpus models and on a generated 100k-instruction module.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "generate.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

struct Input {
  std::string name;
  std::string text;
  std::unique_ptr<Module> module;
};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The three largest .hlo files of the models corpus (none if absent).
std::vector<fs::path> LargestModels() {
  const fs::path dir =
      fs::path(HLOGYM_SOURCE_DIR) / ".." / "shared" / "corpus" / "models";
  std::vector<std::pair<uintmax_t, fs::path>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".hlo") {
      files.push_back({e.file_size(), e.path()});
    }
  }
  std::sort(files.rbegin(), files.rend());
  std::vector<fs::path> out;
  for (size_t i = 0; i < files.size() && i < 3; ++i) {
    out.push_back(files[i].second);
  }
  return out;
}

void BM_Parse(benchmark::State& state, const Input* in) {
  for (auto _ : state) {
    auto m = ParseModule(in->text);
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(m->get());
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(in->text.size()));
}

void BM_ParseVerify(benchmark::State& state, const Input* in) {
  for (auto _ : state) {
    auto m = ParseModule(in->text);
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    absl::Status s = VerifyModule(**m);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(in->text.size()));
}

void BM_Print(benchmark::State& state, const Input* in) {
  int64_t bytes = 0;
  for (auto _ : state) {
    std::string text = PrintModule(*in->module);
    bytes += static_cast<int64_t>(text.size());
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(bytes);
}

void BM_DagHash(benchmark::State& state, const Input* in) {
  for (auto _ : state) benchmark::DoNotOptimize(DagHash(*in->module));
  state.SetItemsProcessed(state.iterations() * in->module->instruction_count());
}

// Deep clone alone: the copies are destroyed outside the timed region.
void BM_Clone(benchmark::State& state, const Input* in) {
  for (auto _ : state) {
    std::unique_ptr<Module> c = in->module->Clone();
    benchmark::DoNotOptimize(c.get());
    state.PauseTiming();
    c.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * in->module->instruction_count());
}

// Clone and destroy, as a search loop that forks and drops states pays.
void BM_CloneAndDestroy(benchmark::State& state, const Input* in) {
  for (auto _ : state) {
    std::unique_ptr<Module> c = in->module->Clone();
    benchmark::DoNotOptimize(c.get());
  }
  state.SetItemsProcessed(state.iterations() * in->module->instruction_count());
}

void Register(const Input* in) {
  const auto ms = benchmark::kMillisecond;
  benchmark::RegisterBenchmark(("Parse/" + in->name).c_str(), BM_Parse, in)
      ->Unit(ms);
  benchmark::RegisterBenchmark(("ParseVerify/" + in->name).c_str(),
                               BM_ParseVerify, in)
      ->Unit(ms);
  benchmark::RegisterBenchmark(("Print/" + in->name).c_str(), BM_Print, in)
      ->Unit(ms);
  benchmark::RegisterBenchmark(("DagHash/" + in->name).c_str(), BM_DagHash, in)
      ->Unit(ms);
  benchmark::RegisterBenchmark(("Clone/" + in->name).c_str(), BM_Clone, in)
      ->Unit(ms);
  benchmark::RegisterBenchmark(("CloneAndDestroy/" + in->name).c_str(),
                               BM_CloneAndDestroy, in)
      ->Unit(ms);
}

}  // namespace
}  // namespace hlogym

int main(int argc, char** argv) {
  using namespace hlogym;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  // Inputs live until the end of main; benchmarks refer to them.
  std::vector<std::unique_ptr<Input>> inputs;
  {
    auto in = std::make_unique<Input>();
    in->name = "synthetic_100k";
    in->module = GenerateSyntheticModule(100000, /*seed=*/1);
    in->text = PrintModule(*in->module);
    inputs.push_back(std::move(in));
  }
  const std::vector<fs::path> models = LargestModels();
  if (models.empty()) {
    std::cerr << "../shared/corpus/models not found: corpus benchmarks "
                 "skipped\n";
  }
  for (const fs::path& p : models) {
    auto in = std::make_unique<Input>();
    in->name = p.stem().string();
    in->text = ReadFile(p);
    auto m = ParseModule(in->text);
    if (!m.ok()) {
      std::cerr << p << ": " << m.status() << " (skipped)\n";
      continue;
    }
    in->module = std::move(*m);
    inputs.push_back(std::move(in));
  }
  for (const auto& in : inputs) Register(in.get());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
