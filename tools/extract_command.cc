#include "extract_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli_util.h"
#include "hlogym/data/extract.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

struct ExtractArgs {
  std::string input;
  std::string out;
  ExtractOptions options;
};

std::string FirstLine(std::string_view s) {
  return std::string(s.substr(0, s.find('\n')));
}

// (path, name shown in the manifest) of every input module: the file
// itself, or the *.hlo files under a folder (recursive, sorted), named
// relative to it.
bool ListInputs(const std::string& input,
                std::vector<std::pair<std::string, std::string>>* files) {
  std::error_code ec;
  if (fs::is_directory(input, ec)) {
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(
             input, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec) && it->path().extension() == ".hlo") {
        found.push_back(it->path());
      }
    }
    std::sort(found.begin(), found.end());
    for (const fs::path& p : found) {
      files->emplace_back(p.string(),
                          p.lexically_relative(input).generic_string());
    }
    return true;
  }
  if (fs::exists(input, ec)) {
    files->emplace_back(input, input);
    return true;
  }
  std::cerr << input << ": no such file or directory\n";
  return false;
}

int RunExtract(const ExtractArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<SubgraphExtractor> extractor =
      SubgraphExtractor::Create(a.options);
  if (!extractor.ok()) {
    std::cerr << "extract: " << extractor.status().message() << "\n";
    return 1;
  }
  std::vector<std::pair<std::string, std::string>> files;
  if (!ListInputs(a.input, &files)) return 1;
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec || !fs::is_directory(a.out)) {
    std::cerr << "extract: cannot create '" << a.out << "'\n";
    return 1;
  }
  std::ofstream manifest(fs::path(a.out) / "MANIFEST.tsv", std::ios::binary);
  manifest << "file\tsource_module_file\tsource_computation\tinstruction_"
              "count\tparameter_count\toutput_count\n";
  if (!manifest) {
    std::cerr << "extract: cannot write the manifest in '" << a.out << "'\n";
    return 1;
  }

  const bool progress = files.size() > 1 && isatty(STDERR_FILENO) == 1;
  int64_t read = 0, unparsable = 0, written = 0, round_trip_failures = 0;
  for (size_t i = 0; i < files.size() && !extractor->LimitReached(); ++i) {
    const auto& [path, shown] = files[i];
    if (progress) {
      std::fprintf(stderr, "\r[%zu/%zu] %s\x1b[K", i + 1, files.size(),
                   shown.c_str());
      std::fflush(stderr);
    }
    absl::StatusOr<std::unique_ptr<Module>> m = ParseModuleFile(path);
    if (!m.ok()) {
      ++unparsable;
      if (progress) std::fprintf(stderr, "\n");
      std::cerr << "warning: skipping " << path << ": "
                << FirstLine(std::string(m.status().message())) << "\n";
      continue;
    }
    ++read;
    for (ExtractedSubgraph& sub : extractor->Extract(**m)) {
      std::string text = PrintModule(*sub.module);
      // The files are the dataset: each must read back as the same graph.
      absl::StatusOr<std::unique_ptr<Module>> back = ParseModule(text);
      if (!back.ok() || DagHash(**back) != sub.hash) {
        ++round_trip_failures;
        continue;
      }
      const std::string name = DagHashHex(sub.hash) + ".hlo";
      std::ofstream f(fs::path(a.out) / name, std::ios::binary);
      f << text;
      if (!f) {
        std::cerr << "extract: cannot write '" << name << "'\n";
        return 1;
      }
      manifest << name << "\t" << shown << "\t" << sub.source_computation
               << "\t" << sub.instruction_count << "\t" << sub.parameter_count
               << "\t" << sub.output_count << "\n";
      ++written;
    }
  }
  if (progress) std::fprintf(stderr, "\r\x1b[K");
  manifest.flush();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  const ExtractStats& s = extractor->stats();
  std::printf("modules read:       %lld (%lld skipped: parse errors)\n",
              static_cast<long long>(read), static_cast<long long>(unparsable));
  std::printf("subgraphs written:  %lld to %s\n",
              static_cast<long long>(written), a.out.c_str());
  std::printf(
      "seeds tried:        %lld (%lld did not grow to a size in "
      "[%lld, %lld])\n",
      static_cast<long long>(s.attempts), static_cast<long long>(s.too_small),
      static_cast<long long>(a.options.min_instructions),
      static_cast<long long>(a.options.max_instructions));
  std::printf("duplicates skipped: %lld\n",
              static_cast<long long>(s.duplicates));
  std::printf(
      "rejected:           %lld (verifier %lld, interpreter %lld, "
      "too costly to interpret %lld, printer round trip %lld)\n",
      static_cast<long long>(s.rejected() + round_trip_failures),
      static_cast<long long>(s.rejected_verifier),
      static_cast<long long>(s.rejected_interpreter),
      static_cast<long long>(s.rejected_cost),
      static_cast<long long>(round_trip_failures));
  std::printf("time:               %.1f s\n", seconds);
  if (!manifest) {
    std::cerr << "extract: writing the manifest failed\n";
    return 1;
  }
  return 0;
}

}  // namespace

void AddExtractCommand(CLI::App& app) {
  auto args = std::make_shared<ExtractArgs>();
  auto* cmd = app.add_subcommand(
      "extract",
      "Cut connected subgraphs out of modules into standalone .hlo files "
      "(<hash>.hlo plus MANIFEST.tsv)");
  cmd->add_option("INPUT", args->input,
                  "An .hlo file, or a folder searched recursively for *.hlo")
      ->required();
  cmd->add_option("--min", args->options.min_instructions,
                  "Fewest instructions per subgraph (non-parameter "
                  "instructions of the entry; default 10)");
  cmd->add_option("--max", args->options.max_instructions,
                  "Most instructions per subgraph (default 20)");
  cmd->add_option("--out", args->out, "Output folder (created if missing)")
      ->required();
  cmd->add_option("--limit", args->options.limit,
                  "Most subgraphs in total (default 0 = no limit)");
  cmd->add_option("--per-module", args->options.per_module_limit,
                  "Most subgraphs from one module (default 50; 0 = no limit)");
  cmd->add_option("--seed", args->options.seed, "Random seed (default 0)");
  cmd->callback([args] {
    int rc = RunExtract(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace hlogym
