#include "pipeline_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "hlogym/cost/device.h"
#include "hlogym/cost/evaluator.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/pipelines.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"
#include "nlohmann/json.hpp"

namespace hlogym {
namespace {

struct PipelineArgs {
  std::string file;
  std::string pipeline = "xla-gpu";
  std::vector<std::string> disabled;
  std::string policy = "first";
  std::string device = "h100";
  std::string out;
  bool json = false;
  bool list = false;
  bool verify = false;
};

int ListPipelines() {
  for (const NamedPipelineInfo& p : NamedPipelines()) {
    std::printf("%-16s %s\n", p.name.c_str(), p.description.c_str());
  }
  std::printf(
      "\nXLA GPU passes not in HloGym yet (left out of the "
      "pipelines):\n");
  for (const std::string& m : MissingXlaGpuPasses()) {
    std::printf("  %s\n", m.c_str());
  }
  return 0;
}

int RunOnFile(const PipelineArgs& a, const std::string& file, bool one_line);

// A folder: every *.hlo under it (sorted), one JSON line or one table row
// per module; modules that fail are reported and counted, not fatal.
int RunOnDirectory(const PipelineArgs& a) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(a.file, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".hlo") {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) return Fail(StrCat("no .hlo files under '", a.file, "'"));
  int64_t failed = 0;
  const bool tty = isatty(fileno(stderr));
  for (size_t i = 0; i < files.size(); ++i) {
    if (tty) {
      std::fprintf(stderr, "\r[%zu/%zu] %s\033[K", i + 1, files.size(),
                   std::filesystem::path(files[i]).filename().c_str());
    }
    if (RunOnFile(a, files[i], /*one_line=*/true) != 0) ++failed;
  }
  if (tty) std::fprintf(stderr, "\n");
  std::fprintf(stderr, "%zu modules, %lld failed\n", files.size(),
               static_cast<long long>(failed));
  return failed == 0 ? 0 : 1;
}

int RunPipelineCommand(const PipelineArgs& a) {
  if (a.list) return ListPipelines();
  if (a.file.empty()) return Fail("pipeline: FILE is required");
  if (std::filesystem::is_directory(a.file)) {
    if (!a.out.empty()) return Fail("pipeline: -o needs a single FILE");
    return RunOnDirectory(a);
  }
  return RunOnFile(a, a.file, /*one_line=*/false);
}

int RunOnFile(const PipelineArgs& a, const std::string& file, bool one_line) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModuleFile(file);
  if (!m.ok()) return Fail(std::string(m.status().message()));
  if (absl::Status s = VerifyModule(**m, {}, file); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  absl::StatusOr<DecisionPolicy> policy = DecisionPolicy::Parse(a.policy);
  if (!policy.ok()) return Fail(std::string(policy.status().message()));
  absl::StatusOr<GpuDevice> device = LoadDevice(a.device);
  if (!device.ok()) return Fail(std::string(device.status().message()));
  ModelEvaluator evaluator(*device);

  absl::StatusOr<EvaluationResult> before = evaluator.Evaluate(**m);
  if (!before.ok()) return Fail(std::string(before.status().message()));
  const int64_t instructions_before = (*m)->instruction_count();

  PipelineRunOptions options;
  for (const std::string& d : a.disabled) {
    std::stringstream ss(d);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (!item.empty()) options.disabled.push_back(item);
    }
  }
  options.policy = *policy;
  options.verify = a.verify;
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<PipelineRunStats> stats =
      RunNamedPipeline(m->get(), a.pipeline, options);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (!stats.ok()) {
    return Fail(StrCat(file, ": ", stats.status().message()));
  }
  if (absl::Status s = VerifyModule(**m); !s.ok()) {
    return Fail(StrCat(
        file, ": the pipeline produced an invalid module: ", s.message()));
  }
  absl::StatusOr<EvaluationResult> after = evaluator.Evaluate(**m);
  if (!after.ok()) return Fail(std::string(after.status().message()));
  const std::string hash = DagHashHex(DagHash(**m));

  if (a.json) {
    nlohmann::json j;
    j["file"] = file;
    j["pipeline"] = a.pipeline;
    j["device"] = device->name;
    j["policy"] = policy->ToString();
    j["kernel_count"] = after->kernel_count;
    j["kernel_launches"] = after->kernel_launches;
    j["seconds"] = after->total_seconds;
    j["unoptimized_kernel_count"] = before->kernel_count;
    j["unoptimized_seconds"] = before->total_seconds;
    j["hash"] = hash;
    j["instructions"] = (*m)->instruction_count();
    j["unoptimized_instructions"] = instructions_before;
    j["passes_run"] = stats->passes_run;
    j["decision_rounds"] = stats->decision_rounds;
    j["alternatives_decided"] = stats->alternatives;
    j["growth_stops"] = stats->growth_stops;
    j["pipeline_wall_seconds"] = wall;
    j["flags"] = after->flags;
    std::printf("%s\n", j.dump(one_line ? -1 : 2).c_str());
  } else if (one_line) {
    std::printf("%s\t%lld -> %lld kernels\t%.3f -> %.3f us\t%s\n", file.c_str(),
                static_cast<long long>(before->kernel_count),
                static_cast<long long>(after->kernel_count),
                before->total_seconds * 1e6, after->total_seconds * 1e6,
                hash.c_str());
  } else {
    FILE* o = a.out == "-" ? stderr : stdout;
    std::fprintf(o, "%s: pipeline %s (device %s, policy %s)\n", file.c_str(),
                 a.pipeline.c_str(), device->name.c_str(),
                 policy->ToString().c_str());
    std::fprintf(o, "  kernels:      %lld -> %lld\n",
                 static_cast<long long>(before->kernel_count),
                 static_cast<long long>(after->kernel_count));
    std::fprintf(o, "  modelled:     %.3f us -> %.3f us (%.2fx)\n",
                 before->total_seconds * 1e6, after->total_seconds * 1e6,
                 after->total_seconds > 0
                     ? before->total_seconds / after->total_seconds
                     : 0.0);
    std::fprintf(o, "  instructions: %lld -> %lld\n",
                 static_cast<long long>(instructions_before),
                 static_cast<long long>((*m)->instruction_count()));
    std::fprintf(o,
                 "  passes run:   %lld, decision rounds %lld (%lld "
                 "alternatives, %lld away from the original)\n",
                 static_cast<long long>(stats->passes_run),
                 static_cast<long long>(stats->decision_rounds),
                 static_cast<long long>(stats->alternatives),
                 static_cast<long long>(stats->non_original));
    if (stats->growth_stops > 0) {
      std::fprintf(o,
                   "  note:         %lld loop(s) stopped early: the module "
                   "grew past %lldx its size\n",
                   static_cast<long long>(stats->growth_stops),
                   static_cast<long long>(kMaxLoopGrowth));
    }
    std::fprintf(o, "  wall time:    %.3f s\n", wall);
    std::fprintf(o, "  hash:         %s\n", hash.c_str());
  }
  if (!a.out.empty()) {
    std::string text = PrintModule(**m);
    if (a.out == "-") {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      std::ofstream f(a.out, std::ios::binary);
      f << text;
      if (!f) return Fail(StrCat("cannot write '", a.out, "'"));
    }
  }
  return 0;
}

}  // namespace

void AddPipelineCommand(CLI::App& app) {
  auto args = std::make_shared<PipelineArgs>();
  auto* cmd = app.add_subcommand(
      "pipeline",
      "Run a named pipeline (xla-gpu, xla-gpu-legacy, general-fusion, "
      "single-fusion); dry passes are decided by --policy");
  cmd->add_option("FILE", args->file,
                  "HLO file, or a folder (every *.hlo in it, one line each)");
  cmd->add_option("--pipeline", args->pipeline,
                  "Pipeline name (default xla-gpu; --list shows them)");
  cmd->add_option("--disable", args->disabled,
                  "Switch off passes or stages by name (comma separated, "
                  "repeatable)");
  cmd->add_option("--policy", args->policy,
                  "Decisions for dry passes: first | random[:SEED] | "
                  "original (default first)");
  cmd->add_option("--device", args->device,
                  "Device of the performance model (default h100)");
  cmd->add_option("-o,--output", args->out,
                  "Write the optimized module here ('-' for stdout)");
  cmd->add_flag("--json", args->json, "Print the report as JSON");
  cmd->add_flag("--verify", args->verify, "Verify after every pass");
  cmd->add_flag("--list", args->list,
                "List the pipelines and the XLA passes they leave out");
  cmd->callback([args] {
    int rc = RunPipelineCommand(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace hlogym
