// Subgraph extraction over the shared corpus, as `hlogym extract --min 10
// --max 20` runs it: one extractor over the modules in path order. Every
// subgraph must verify, have a size in [10, 20], run in the interpreter on
// generated inputs, read back from its text as the same graph, and have a
// hash no other subgraph has; no subgraph may fail the verifier inside
// the extractor either (that would be an extraction bug, not a property of
// the source).
//
// `make test` runs every 9th module (sorted by path); HLOGYM_FULL_CORPUS=1
// runs all of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "hlogym/data/extract.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"
#include "tests/corpus_util.h"

namespace hlogym {
namespace {

bool FullCorpus() {
  const char* e = std::getenv("HLOGYM_FULL_CORPUS");
  return e != nullptr && std::string(e) == "1";
}

// Every *.hlo under corpus/ (all folders), sorted, sampled.
std::vector<std::string> SampleModules(const std::string& shared) {
  namespace fs = std::filesystem;
  std::vector<std::string> all;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(shared + "/corpus", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".hlo") {
      all.push_back(it->path().string());
    }
  }
  std::sort(all.begin(), all.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (FullCorpus() || i % 9 == 0) out.push_back(all[i]);
  }
  return out;
}

TEST(ExtractCorpus, SubgraphsVerifyRunAndAreUnique) {
  const std::string shared = SharedDir();
  if (shared.empty()) {
    GTEST_SKIP() << "../shared not found: extract corpus test skipped";
  }
  const std::vector<std::string> files = SampleModules(shared);
  ASSERT_FALSE(files.empty());
  ExtractOptions options;
  options.min_instructions = 10;
  options.max_instructions = 20;
  absl::StatusOr<SubgraphExtractor> extractor =
      SubgraphExtractor::Create(options);
  ASSERT_TRUE(extractor.ok()) << extractor.status();

  auto t0 = std::chrono::steady_clock::now();
  int64_t modules = 0, subgraphs = 0, with_calls = 0, multi_output = 0;
  std::set<uint64_t> hashes;
  std::vector<std::string> failures;
  for (const std::string& f : files) {
    absl::StatusOr<std::unique_ptr<Module>> m = ParseModuleFile(f);
    if (!m.ok()) continue;
    ++modules;
    for (const ExtractedSubgraph& sub : extractor->Extract(**m)) {
      ++subgraphs;
      const Module& s = *sub.module;
      const std::string where =
          StrCat(f, " (", sub.source_computation, ") ", sub.hash);
      if (s.computation_count() > 1) ++with_calls;
      if (sub.output_count > 1) ++multi_output;
      if (!hashes.insert(sub.hash).second) {
        failures.push_back(StrCat(where, ": duplicate hash"));
      }
      if (sub.hash != DagHash(s)) {
        failures.push_back(StrCat(where, ": stale hash"));
      }
      const int64_t n = SubgraphInstructionCount(s);
      if (n != sub.instruction_count || n < 10 || n > 20) {
        failures.push_back(StrCat(where, ": ", n, " instructions"));
      }
      if (absl::Status v = VerifyModule(s); !v.ok()) {
        failures.push_back(StrCat(where, ": ", v.ToString()));
        continue;
      }
      std::string text = PrintModule(s);
      absl::StatusOr<std::unique_ptr<Module>> back = ParseModule(text);
      if (!back.ok() || DagHash(**back) != sub.hash) {
        failures.push_back(StrCat(where, ": text does not read back"));
      }
      auto inputs = GenerateInputs(ParameterShapes(*s.entry_computation()), 0);
      InterpreterOptions io;
      io.time_limit_seconds = 5;
      io.max_while_iterations = options.max_while_iterations;
      Interpreter interpreter(io);
      absl::StatusOr<Literal> out =
          inputs.ok() ? interpreter.Run(s, *inputs)
                      : absl::StatusOr<Literal>(inputs.status());
      if (!out.ok()) {
        failures.push_back(StrCat(where, ": ", out.status().ToString()));
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  const ExtractStats& st = extractor->stats();
  std::printf(
      "extract corpus: %lld modules, %lld subgraphs (%lld calling "
      "computations, %lld with several outputs), %lld duplicates, rejected: "
      "verifier %lld, interpreter %lld, cost %lld; %.1f s\n",
      static_cast<long long>(modules), static_cast<long long>(subgraphs),
      static_cast<long long>(with_calls), static_cast<long long>(multi_output),
      static_cast<long long>(st.duplicates),
      static_cast<long long>(st.rejected_verifier),
      static_cast<long long>(st.rejected_interpreter),
      static_cast<long long>(st.rejected_cost), seconds);
  for (size_t i = 0; i < failures.size() && i < 20; ++i) {
    ADD_FAILURE() << failures[i];
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures";
  EXPECT_EQ(st.rejected_verifier, 0);
  EXPECT_EQ(st.extracted, subgraphs);
  // The corpus has large real models: a sample must give plenty.
  EXPECT_GE(subgraphs, FullCorpus() ? 8000 : 800);
  EXPECT_GT(with_calls, 0);
  EXPECT_GT(multi_output, 0);
}

}  // namespace
}  // namespace hlogym
