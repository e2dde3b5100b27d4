// Fusion pipelines over the shared corpus.
//
// For corpus modules the interpreter can run, `xla-gpu`, `xla-gpu-legacy`
// and `general-fusion` (policies first and random) must give the outputs of
// the unoptimized module (tolerances as in passes_corpus_test.cc), and every
// result must be legal: it verifies (no cycles), fusions hold only fusible
// instructions, and no fusion exceeds the operand, shared-memory,
// reduction or code-size limits. `xla-gpu` must not add kernels.
// `make test` runs every 9th module; HLOGYM_FULL_CORPUS=1 runs all.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "hlogym/cost/evaluator.h"
#include "hlogym/eval/compare.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/gpu_fusible.h"
#include "hlogym/passes/pipelines.h"
#include "hlogym/text/parser.h"
#include "tests/corpus_util.h"

namespace hlogym {
namespace {

bool FullCorpus() {
  const char* e = std::getenv("HLOGYM_FULL_CORPUS");
  return e != nullptr && std::string(e) == "1";
}

std::vector<CorpusEntry> Sample(const std::string& shared) {
  std::vector<CorpusEntry> out;
  int64_t k = 0;
  for (const char* folder : {"hloenv", "xla"}) {
    for (const CorpusEntry& e : LoadManifest(shared, folder)) {
      if (e.expect_error) continue;
      std::error_code ec;
      auto size = std::filesystem::file_size(e.path, ec);
      if (ec || size > 200000) continue;
      if (!FullCorpus() && k++ % 9 != 0) continue;
      out.push_back(e);
    }
  }
  return out;
}

bool SmallEnough(const Module& m) {
  int64_t bytes = 0;
  for (const auto& c : m.computations()) {
    c->ForEachInstruction([&](const Instruction* i) {
      if (i->shape().IsArray()) {
        bytes = std::max(bytes, i->shape().ArrayBytes());
      }
    });
  }
  return bytes <= (int64_t{1} << 22) && m.instruction_count() <= 2000;
}

absl::StatusOr<Literal> RunModule(const Module& m,
                                  const std::vector<Literal>& inputs) {
  InterpreterOptions o;
  o.time_limit_seconds = 4;
  o.max_while_iterations = 20000;
  o.max_live_bytes = int64_t{1} << 28;
  Interpreter interp(o);
  return interp.Run(m, inputs);
}

bool OutputsMatch(const Literal& got, const Literal& want) {
  if (Compare(got, want).ok) return true;
  CompareReport loose = Compare(got, want, {.rtol = 1e-3, .atol = 1e-3});
  if (!loose.ok) return false;
  CompareReport strict = Compare(got, want);
  for (const BufferComparison& b : loose.buffers) {
    PrimitiveType t = b.b_shape.element_type();
    if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64 ||
        t == PrimitiveType::kC64 || t == PrimitiveType::kC128) {
      continue;
    }
    for (const BufferComparison& s : strict.buffers) {
      if (s.name == b.name && !s.ok()) return false;
    }
  }
  return true;
}

// "" if every fusion the pipeline made is legal, else the first problem.
// Fusions of the input (their fused computations keep their names; the
// fusion operations always make new ones) and custom fusions are not
// judged.
std::string CheckLegality(const Module& m, const Module& input) {
  absl::flat_hash_set<std::string> input_computations;
  for (const auto& c : input.computations()) {
    input_computations.insert(c->name());
  }
  std::string problem;
  for (const auto& c : m.computations()) {
    if (!problem.empty()) break;
    c->ForEachInstruction([&](const Instruction* f) {
      if (!problem.empty() || f->opcode() != Opcode::kFusion) return;
      const Computation* body = f->fused_computation();
      if (body == nullptr || f->fusion_kind() == FusionKind::kCustom ||
          input_computations.contains(body->name())) {
        return;
      }
      int64_t fused = 0;
      body->ForEachInstruction([&](const Instruction* i) {
        if (i->opcode() == Opcode::kParameter) return;
        ++fused;
        switch (i->opcode()) {
          case Opcode::kCustomCall:
          case Opcode::kWhile:
          case Opcode::kConditional:
          case Opcode::kCall:
          case Opcode::kAlternatives:
            problem = StrCat("fusion '", f->name(), "' holds ",
                             OpcodeName(i->opcode()), " '", i->name(), "'");
            return;
          default:
            break;
        }
        if (HasSideEffectDeep(*i) && problem.empty()) {
          problem = StrCat("fusion '", f->name(), "' holds side-effecting '",
                           i->name(), "'");
        }
      });
      if (!problem.empty()) return;
      const int64_t outputs =
          f->shape().IsTuple() ? f->shape().tuple_shapes_size() : 1;
      // Horizontal fusions have their own parameter-size limit (4000 bytes
      // of kernel parameters, 8 bytes each).
      const bool horizontal = f->name().rfind("horizontal", 0) == 0;
      const int64_t operand_limit =
          horizontal ? 500 : kMaxOperandsAndOutputsPerFusion;
      if (f->operand_count() + outputs > operand_limit) {
        problem = StrCat("fusion '", f->name(), "' has ", f->operand_count(),
                         " operands and ", outputs, " outputs");
      } else if (SharedMemoryUsage(*f) > kSharedMemoryPerBlockBytes) {
        problem = StrCat("fusion '", f->name(), "' needs ",
                         SharedMemoryUsage(*f), " bytes of shared memory");
      } else if (CountUnnestedReductions(*f) >
                 kMaxUnnestedReductionsPerFusion) {
        problem = StrCat("fusion '", f->name(), "' has ",
                         CountUnnestedReductions(*f), " unnested reductions");
      } else if (fused > kMaxFusedInstructions) {
        problem =
            StrCat("fusion '", f->name(), "' has ", fused, " instructions");
      }
    });
  }
  return problem;
}

struct Variant {
  const char* pipeline;
  const char* policy;
};

TEST(FusionCorpus, PipelinesKeepOutputsAndAreLegal) {
  const std::string shared = SharedDir();
  if (shared.empty()) {
    GTEST_SKIP() << "../shared not found: fusion corpus test skipped";
  }
  const std::vector<CorpusEntry> entries = Sample(shared);
  const Variant variants[] = {{"xla-gpu", "first"},
                              {"xla-gpu-legacy", "first"},
                              {"general-fusion", "first"},
                              {"general-fusion", "random:1"}};
  std::mutex mu;
  std::map<std::string, int64_t> checked, unchecked;
  std::vector<std::string> failures;
  int64_t modules_run = 0, more_kernels = 0;
  int64_t kernels_before = 0, kernels_after = 0;
  double time_ratio_sum = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> finished{0};
  const auto start = std::chrono::steady_clock::now();
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
        .count();
  };
  auto worker = [&]() {
    auto evaluator = CreateEvaluator("model:h100");
    if (!evaluator.ok()) return;
    for (size_t i = next++; i < entries.size(); i = next++) {
      const CorpusEntry& e = entries[i];
      // Progress on stderr (the full corpus runs for a long time), and the
      // modules that take long, so a slow pass shows by name.
      const auto module_start = std::chrono::steady_clock::now();
      if (std::getenv("HLOGYM_CORPUS_VERBOSE") != nullptr) {
        std::fprintf(stderr, "  start: %s\n", e.file.c_str());
      }
      struct Report {
        std::function<void()> f;
        ~Report() { f(); }
      } report{[&, module_start] {
        const double s = seconds_since(module_start);
        const size_t done = ++finished;
        if (s > 20)
          std::fprintf(stderr, "  slow: %s %.1f s\n", e.file.c_str(), s);
        if (done % 250 == 0 || done == entries.size()) {
          std::fprintf(stderr, "  [%zu/%zu modules, %.0f s]\n", done,
                       entries.size(), seconds_since(start));
        }
      }};
      auto parsed = ParseModuleFile(e.path);
      if (!parsed.ok() || !VerifyModule(**parsed).ok() ||
          !SmallEnough(**parsed)) {
        continue;
      }
      const Module& original = **parsed;
      auto inputs =
          GenerateInputs(ParameterShapes(*original.entry_computation()), 1);
      if (!inputs.ok()) continue;
      absl::StatusOr<Literal> want = RunModule(original, *inputs);
      if (!want.ok()) continue;
      auto before = (*evaluator)->Evaluate(original);
      {
        std::lock_guard<std::mutex> lock(mu);
        ++modules_run;
      }
      for (const Variant& v : variants) {
        const std::string name = StrCat(v.pipeline, "/", v.policy);
        std::unique_ptr<Module> m = original.Clone();
        PipelineRunOptions options;
        options.policy = *DecisionPolicy::Parse(v.policy);
        absl::StatusOr<PipelineRunStats> stats =
            RunNamedPipeline(m.get(), v.pipeline, options);
        std::string problem;
        if (!stats.ok()) {
          problem = stats.status().ToString();
        } else if (absl::Status s = VerifyModule(*m); !s.ok()) {
          problem = s.ToString();
        } else if (std::string l = CheckLegality(*m, original); !l.empty()) {
          problem = l;
        } else {
          absl::StatusOr<Literal> got = RunModule(*m, *inputs);
          if (!got.ok() &&
              (got.status().code() == absl::StatusCode::kDeadlineExceeded ||
               got.status().code() == absl::StatusCode::kUnimplemented)) {
            std::lock_guard<std::mutex> lock(mu);
            ++unchecked[name];
            continue;
          }
          if (!got.ok()) {
            problem = got.status().ToString();
          } else if (!OutputsMatch(*got, *want)) {
            problem = Compare(*got, *want).ToString();
          }
        }
        if (problem.empty() && std::string(v.pipeline) == "xla-gpu" &&
            before.ok()) {
          auto after = (*evaluator)->Evaluate(*m);
          if (after.ok()) {
            std::lock_guard<std::mutex> lock(mu);
            kernels_before += before->kernel_count;
            kernels_after += after->kernel_count;
            if (after->kernel_count > before->kernel_count) {
              ++more_kernels;
              std::printf("  more kernels: %s (%lld -> %lld)\n", e.file.c_str(),
                          static_cast<long long>(before->kernel_count),
                          static_cast<long long>(after->kernel_count));
            }
            time_ratio_sum += before->total_seconds > 0
                                  ? after->total_seconds / before->total_seconds
                                  : 1.0;
          }
        }
        std::lock_guard<std::mutex> lock(mu);
        ++checked[name];
        if (!problem.empty()) {
          failures.push_back(
              StrCat(e.file, ": ", name, ": ", problem.substr(0, 500)));
        }
      }
    }
  };
  const unsigned n =
      std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  std::printf("fusion pipelines over %lld corpus modules%s\n",
              static_cast<long long>(modules_run),
              FullCorpus() ? " (full corpus)" : " (every 9th module)");
  for (const auto& [name, n_checked] : checked) {
    std::printf("  %-26s %4lld checked, %lld not checkable\n", name.c_str(),
                static_cast<long long>(n_checked),
                static_cast<long long>(unchecked[name]));
  }
  std::printf(
      "  xla-gpu: kernels %lld -> %lld in total, %lld modules with more "
      "kernels, mean time ratio %.3f\n",
      static_cast<long long>(kernels_before),
      static_cast<long long>(kernels_after),
      static_cast<long long>(more_kernels),
      modules_run > 0 ? time_ratio_sum / modules_run : 0.0);
  for (const std::string& f : failures) std::printf("FAIL %s\n", f.c_str());
  EXPECT_GT(modules_run, FullCorpus() ? 300 : 40);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures";
  // A few modules gain kernels where XLA's expanders turn one opaque op
  // (batch-norm-training, a batched dot) into several kernels.
  EXPECT_LE(more_kernels * 20, modules_run) << "more than 5% of modules";
  EXPECT_LT(kernels_after, kernels_before);
  EXPECT_LT(time_ratio_sum / std::max<int64_t>(modules_run, 1), 1.0);
}

}  // namespace
}  // namespace hlogym
