// Passes over the shared corpus.
//
// 1. Differential semantics: for corpus modules the interpreter can run,
//    every single alternative offered by each registered pass, applied on
//    its own (all other nodes keep operand 0), must give the same outputs
//    as the original on the same seeded inputs. Tolerance: the per-type
//    defaults of hlogym::Compare (f32 1e-5, f16 1e-2, bf16 5e-2, ...),
//    widened to 1e-3 for f32/f64 buffers, since rewrites reorder
//    floating-point arithmetic.
// 2. Pick-first fidelity: the dry AlgebraicSimplifier loop with policy
//    `first` must end DagHash-identical to the greedy (apply-mode) pass on
//    at least 90% of the modules.
// `make test` runs a fixed sample (every 9th module); HLOGYM_FULL_CORPUS=1
// (used by `make check-full`) runs all of them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "hlogym/eval/compare.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/algebraic_simplifier.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"
#include "tests/corpus_util.h"

namespace hlogym {
namespace {

bool FullCorpus() {
  const char* e = std::getenv("HLOGYM_FULL_CORPUS");
  return e != nullptr && std::string(e) == "1";
}

// Valid corpus modules of the hloenv and xla folders (the model dumps are
// too large to interpret alternative by alternative), sampled.
std::vector<CorpusEntry> Sample(const std::string& shared, int64_t max_bytes,
                                bool with_models = false) {
  std::vector<CorpusEntry> out;
  int64_t k = 0;
  std::vector<const char*> folders = {"hloenv", "xla"};
  if (with_models) folders.push_back("models");
  for (const char* folder : folders) {
    for (const CorpusEntry& e : LoadManifest(shared, folder)) {
      if (e.expect_error) continue;
      std::error_code ec;
      auto size = std::filesystem::file_size(e.path, ec);
      if (ec || static_cast<int64_t>(size) > max_bytes) continue;
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
      if (i->shape().IsArray())
        bytes = std::max(bytes, i->shape().ArrayBytes());
    });
  }
  return bytes <= (int64_t{1} << 22) && m.instruction_count() <= 2000;
}

absl::StatusOr<Literal> RunModule(const Module& m,
                                  const std::vector<Literal>& inputs) {
  InterpreterOptions o;
  o.time_limit_seconds = 2;
  o.max_while_iterations = 20000;
  o.max_live_bytes = int64_t{1} << 28;
  Interpreter interp(o);
  return interp.Run(m, inputs);
}

bool OutputsMatch(const Literal& got, const Literal& want) {
  if (Compare(got, want).ok) return true;
  CompareReport loose = Compare(got, want, {.rtol = 1e-3, .atol = 1e-3});
  if (!loose.ok) return false;
  for (const BufferComparison& b : loose.buffers) {
    PrimitiveType t = b.b_shape.element_type();
    if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64 &&
        t != PrimitiveType::kC64 && t != PrimitiveType::kC128) {
      // Only f32/f64 are widened; others must meet their defaults.
      CompareReport strict = Compare(got, want);
      for (const BufferComparison& s : strict.buffers) {
        if (s.name == b.name && !s.ok()) return false;
      }
    }
  }
  return true;
}

TEST(PassesCorpus, EverySingleAlternativeKeepsOutputs) {
  const std::string shared = SharedDir();
  if (shared.empty()) {
    GTEST_SKIP() << "../shared not found: passes corpus test skipped";
  }
  const std::vector<CorpusEntry> entries = Sample(shared, 200000);
  const int64_t per_pass_cap = FullCorpus() ? 1000000 : 6;
  std::vector<std::string> pass_names;
  for (const auto& e : PassRegistry::Global().entries()) {
    pass_names.push_back(e.name);
  }
  std::mutex mu;
  std::map<std::string, int64_t> tested, offered, failures_by_pass, unchecked;
  int64_t modules_run = 0;
  std::vector<std::string> failures;
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < entries.size(); i = next++) {
      const CorpusEntry& e = entries[i];
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
      {
        std::lock_guard<std::mutex> lock(mu);
        ++modules_run;
      }
      for (const std::string& name : pass_names) {
        auto pass = PassRegistry::Global().Create(name);
        if (!pass.ok()) continue;
        std::unique_ptr<Module> augmented = original.Clone();
        absl::StatusOr<AugmentStats> stats = (*pass)->RunDry(augmented.get());
        if (!stats.ok() || !VerifyModule(*augmented).ok()) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(StrCat(e.file, ": ", name, " dry run: ",
                                    stats.ok()
                                        ? VerifyModule(*augmented).ToString()
                                        : stats.status().ToString()));
          ++failures_by_pass[name];
          continue;
        }
        std::vector<Instruction*> nodes = AlternativeNodes(*augmented);
        int64_t done = 0;
        {
          std::lock_guard<std::mutex> lock(mu);
          for (Instruction* n : nodes) offered[name] += n->operand_count() - 1;
        }
        for (size_t j = 0; j < nodes.size() && done < per_pass_cap; ++j) {
          for (int64_t k = 1;
               k < nodes[j]->operand_count() && done < per_pass_cap;
               ++k, ++done) {
            std::unique_ptr<Module> one = augmented->Clone();
            std::vector<int64_t> d(nodes.size(), 0);
            d[j] = k;
            std::string problem;
            absl::StatusOr<ApplyStats> applied = ApplyDecisions(one.get(), d);
            if (!applied.ok()) {
              problem = applied.status().ToString();
            } else if (absl::Status v = VerifyModule(*one); !v.ok()) {
              problem = v.ToString();
            } else {
              absl::StatusOr<Literal> got = RunModule(*one, *inputs);
              if (!got.ok() &&
                  (got.status().code() == absl::StatusCode::kDeadlineExceeded ||
                   got.status().code() == absl::StatusCode::kUnimplemented)) {
                // The interpreter cannot tell (too slow after the rewrite, or
                // an op it runs only on one device): not a mismatch.
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
            std::lock_guard<std::mutex> lock(mu);
            ++tested[name];
            if (!problem.empty()) {
              ++failures_by_pass[name];
              failures.push_back(StrCat(e.file, ": ", name, " node ", j,
                                        " candidate ", k, ": ",
                                        problem.substr(0, 600)));
            }
          }
        }
      }
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  int64_t total_tested = 0, total_offered = 0;
  for (const auto& [name, n] : tested) total_tested += n;
  for (const auto& [name, n] : offered) total_offered += n;
  std::printf(
      "passes corpus: %zu modules sampled, %lld run; %lld candidates "
      "offered, %lld applied alone and checked, %zu failures\n",
      entries.size(), static_cast<long long>(modules_run),
      static_cast<long long>(total_offered),
      static_cast<long long>(total_tested), failures.size());
  for (const auto& [name, n] : offered) {
    std::printf(
        "  %-36s offered %6lld checked %6lld failed %lld uncheckable %lld\n",
        name.c_str(), static_cast<long long>(n),
        static_cast<long long>(tested[name]),
        static_cast<long long>(failures_by_pass[name]),
        static_cast<long long>(unchecked[name]));
  }
  for (size_t i = 0; i < failures.size() && i < 40; ++i) {
    ADD_FAILURE() << failures[i];
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures";
  EXPECT_GT(modules_run, 0);
}

// The greedy pass, repeated until a run changes nothing (at most 25).
absl::Status Greedy(Module* m) {
  AlgebraicSimplifier pass;
  for (int i = 0; i < 25; ++i) {
    absl::StatusOr<bool> changed = pass.Run(m);
    if (!changed.ok()) return changed.status();
    if (!*changed) break;
  }
  return absl::OkStatus();
}

TEST(PassesCorpus, PickFirstLoopMatchesGreedySimplifier) {
  const std::string shared = SharedDir();
  if (shared.empty()) {
    GTEST_SKIP() << "../shared not found: passes corpus test skipped";
  }
  // The whole corpus with HLOGYM_FULL_CORPUS=1, model dumps included.
  std::vector<CorpusEntry> entries =
      FullCorpus() ? Sample(shared, int64_t{1} << 40, /*with_models=*/true)
                   : Sample(shared, 2000000);
  std::mutex mu;
  int64_t compared = 0, identical = 0;
  std::map<std::string, int64_t> reasons;
  std::vector<std::string> different;
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < entries.size(); i = next++) {
      const CorpusEntry& e = entries[i];
      auto parsed = ParseModuleFile(e.path);
      if (!parsed.ok() || !VerifyModule(**parsed).ok()) continue;
      std::unique_ptr<Module> greedy = (*parsed)->Clone();
      std::unique_ptr<Module> dry = (*parsed)->Clone();
      std::string reason;
      if (absl::Status s = Greedy(greedy.get()); !s.ok()) {
        reason = StrCat("greedy error: ", s.message());
      } else {
        AlgebraicSimplifier pass;
        DecisionPolicy first = DecisionPolicy::First();
        absl::StatusOr<RewriteLoopStats> loop =
            RewriteLoop(dry.get(), pass, first, 200);
        if (!loop.ok()) {
          reason = StrCat("dry loop error: ", loop.status().message());
        } else if (!loop->converged) {
          reason = "dry loop did not converge in 200 rounds";
        } else if (DagHash(*greedy) != DagHash(*dry)) {
          reason = "different result";
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      ++compared;
      if (reason.empty()) {
        ++identical;
      } else {
        ++reasons[reason.substr(0, 80)];
        different.push_back(StrCat(e.file, ": ", reason));
      }
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  const double share = compared ? 100.0 * identical / compared : 0;
  std::printf("pick-first fidelity: %lld of %lld modules identical (%.2f%%)\n",
              static_cast<long long>(identical),
              static_cast<long long>(compared), share);
  for (const auto& [r, n] : reasons) {
    std::printf("  %5lld  %s\n", static_cast<long long>(n), r.c_str());
  }
  if (std::getenv("HLOGYM_VERBOSE") != nullptr) {
    for (const std::string& d : different) std::printf("  %s\n", d.c_str());
  }
  EXPECT_GE(share, 90.0);
  for (const auto& [r, n] : reasons) {
    EXPECT_EQ(r.find("error"), std::string::npos) << n << " x " << r;
  }
}

}  // namespace
}  // namespace hlogym
