#include "optimize_command.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_util.h"
#include "hlogym/ir/parallel.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/search/optimize.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

struct CommonArgs {
  std::string pipeline = "general-fusion";
  int64_t budget = 0;
  double time_limit = 0;
  uint64_t seed = 0;
  std::string device = "h100";
  int64_t threads = 0;
};

AgentOptions MakeAgentOptions(const CommonArgs& a) {
  AgentOptions o;
  o.seed = a.seed;
  o.budget = a.budget;
  o.time_limit_seconds = a.time_limit;
  o.threads = a.threads;
  return o;
}

struct OptimizeArgs {
  CommonArgs common;
  std::string file;
  std::string agent = "fmcts";
  std::string out;
  std::string json;
  bool no_check = false;
};

int RunOptimize(const OptimizeArgs& a) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModuleFile(a.file);
  if (!m.ok()) return Fail(std::string(m.status().message()));
  OptimizeOptions o;
  o.pipeline = a.common.pipeline;
  o.agent = a.agent;
  o.device = a.common.device;
  o.agent_options = MakeAgentOptions(a.common);
  o.check_output = !a.no_check;
  absl::StatusOr<BaselineResult> base = ComputeBaseline(**m, o.device);
  if (!base.ok()) {
    return Fail(StrCat(a.file, ": baseline: ", base.status().message()));
  }
  const bool tty = isatty(fileno(stderr));
  const double baseline_seconds = base->seconds;
  if (tty) {
    o.agent_options.progress = [&](const SearchProgress& p) {
      std::fprintf(
          stderr,
          "\r%s: step %lld, %lld evaluations, %.1f s, best ratio "
          "%.4f\033[K",
          a.agent.c_str(), static_cast<long long>(p.steps),
          static_cast<long long>(p.evaluations), p.elapsed_seconds,
          baseline_seconds > 0 ? p.best_seconds / baseline_seconds : 0.0);
    };
  }
  absl::StatusOr<OptimizeReport> r = Optimize(**m, o, *base);
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (!r.ok()) return Fail(StrCat(a.file, ": ", r.status().message()));
  std::cout << "file:        " << a.file << "\n" << r->ToText();
  if (!a.out.empty()) {
    std::string text = PrintModule(*r->optimized);
    if (a.out == "-") {
      std::cout << text;
    } else {
      std::ofstream f(a.out);
      f << text;
      if (!f) return Fail(StrCat("cannot write '", a.out, "'"));
    }
  }
  if (!a.json.empty()) {
    std::ofstream f(a.json);
    f << r->ToJson() << "\n";
    if (!f) return Fail(StrCat("cannot write '", a.json, "'"));
  }
  // A wrong result is a failure of the run.
  if (r->equal_output.has_value() && !*r->equal_output) return 2;
  return 0;
}

struct BenchArgs {
  CommonArgs common;
  std::string dir;
  std::string agents = "pick-first,beam,fmcts";
  int jobs = 0;
  std::string out;
  int64_t every = 1;
  int64_t limit = 0;
  bool check = false;
};

struct Row {
  std::string file;
  std::string agent;
  OptimizeReport report;
};

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string CsvRow(const Row& r) {
  const OptimizeReport& p = r.report;
  char buf[512];
  std::snprintf(
      buf, sizeof(buf),
      "%s,%s,%.9g,%.9g,%.9g,%.6f,%lld,%lld,%d,%s,%lld,%.4f,%d\n",
      r.file.c_str(), r.agent.c_str(), p.baseline.unoptimized_seconds,
      p.baseline.seconds, p.optimized_seconds, p.ratio,
      static_cast<long long>(p.baseline.kernel_count),
      static_cast<long long>(p.kernel_count_optimized),
      p.hash_equal_baseline ? 1 : 0,
      !p.equal_output.has_value() ? "" : (*p.equal_output ? "1" : "0"),
      static_cast<long long>(p.evaluations), p.search_seconds,
      p.timed_out ? 1 : 0);
  return buf;
}

void PrintTable(const std::vector<std::string>& agents,
                const std::vector<Row>& rows) {
  std::printf(
      "| agent | graphs | mean ratio | geomean | min | max | faster (<0.94) "
      "| slower (>1.06) | hash = baseline | evaluations (mean) | time (mean, "
      "s) | wrong outputs |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& agent : agents) {
    int64_t n = 0, faster = 0, slower = 0, equal = 0, wrong = 0;
    double sum = 0, logsum = 0, mn = 1e300, mx = 0, evals = 0, secs = 0;
    for (const Row& r : rows) {
      if (r.agent != agent) continue;
      const double x = r.report.ratio;
      ++n;
      sum += x;
      logsum += std::log(std::max(x, 1e-12));
      mn = std::min(mn, x);
      mx = std::max(mx, x);
      faster += x < 0.94;
      slower += x > 1.06;
      equal += r.report.hash_equal_baseline;
      wrong += r.report.equal_output.has_value() && !*r.report.equal_output;
      evals += static_cast<double>(r.report.evaluations);
      secs += r.report.search_seconds;
    }
    if (n == 0) {
      std::printf("| %s | 0 | | | | | | | | | | |\n", agent.c_str());
      continue;
    }
    const double d = static_cast<double>(n);
    std::printf(
        "| %s | %lld | %.4f | %.4f | %.4f | %.4f | %.1f%% | %.1f%% | %.1f%% "
        "| %.1f | %.3f | %lld |\n",
        agent.c_str(), static_cast<long long>(n), sum / d, std::exp(logsum / d),
        mn, mx, 100.0 * faster / d, 100.0 * slower / d, 100.0 * equal / d,
        evals / d, secs / d, static_cast<long long>(wrong));
  }
}

int RunBench(const BenchArgs& a) {
  std::vector<std::string> agents = SplitComma(a.agents);
  if (agents.empty()) return Fail("--agents: no agent given");
  for (const std::string& name : agents) {
    absl::StatusOr<std::unique_ptr<Agent>> probe = CreateAgent(name);
    if (!probe.ok()) return Fail(std::string(probe.status().message()));
  }
  if (a.every < 1) {
    return Fail(StrCat("--every must be at least 1 (got ", a.every, ")"));
  }
  std::vector<std::string> files;
  std::error_code ec;
  if (std::filesystem::is_regular_file(a.dir, ec)) {
    files.push_back(a.dir);
  } else {
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(a.dir, ec)) {
      if (e.is_regular_file() && e.path().extension() == ".hlo") {
        files.push_back(e.path().string());
      }
    }
  }
  if (ec) return Fail(StrCat("cannot read '", a.dir, "': ", ec.message()));
  std::sort(files.begin(), files.end());
  if (a.every > 1) {
    // A sample of a large dataset: files 1, 1 + K, 1 + 2K, ...
    std::vector<std::string> sampled;
    for (size_t i = 0; i < files.size(); i += static_cast<size_t>(a.every)) {
      sampled.push_back(std::move(files[i]));
    }
    files = std::move(sampled);
  }
  if (a.limit > 0 && static_cast<int64_t>(files.size()) > a.limit) {
    files.resize(a.limit);
  }
  if (files.empty()) return Fail(StrCat("no .hlo files under '", a.dir, "'"));

  std::ofstream csv;
  if (!a.out.empty()) {
    csv.open(a.out);
    if (!csv) return Fail(StrCat("cannot write '", a.out, "'"));
    csv << "file,agent,unoptimized_seconds,baseline_seconds,optimized_"
           "seconds,ratio,kernel_count_baseline,kernel_count_optimized,hash_"
           "equal_baseline,equal_output,evaluations,search_seconds,timed_"
           "out\n";
    csv.flush();
  }
  const int jobs = a.jobs > 0 ? a.jobs : static_cast<int>(Parallelism());
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<Row> rows;
  std::vector<std::string> failures;
  size_t done = 0;
  const bool tty = isatty(fileno(stderr));
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    while (true) {
      const size_t i = next.fetch_add(1);
      if (i >= files.size()) return;
      const std::string& file = files[i];
      std::vector<Row> mine;
      std::string failure;
      absl::StatusOr<std::unique_ptr<Module>> m = ParseModuleFile(file);
      std::optional<BaselineResult> base;
      if (!m.ok()) {
        failure = std::string(m.status().message());
      } else {
        absl::StatusOr<BaselineResult> b =
            ComputeBaseline(**m, a.common.device);
        if (!b.ok()) {
          failure = StrCat(file, ": baseline: ", b.status().message());
        } else {
          base = *b;
        }
      }
      if (base.has_value()) {
        for (const std::string& agent : agents) {
          OptimizeOptions o;
          o.pipeline = a.common.pipeline;
          o.agent = agent;
          o.device = a.common.device;
          o.agent_options = MakeAgentOptions(a.common);
          // Graphs already run in parallel: one thread per search unless
          // asked otherwise.
          if (a.common.threads == 0 && jobs > 1) o.agent_options.threads = 1;
          o.check_output = a.check;
          absl::StatusOr<OptimizeReport> r = Optimize(**m, o, base);
          if (!r.ok()) {
            failure = StrCat(file, " (", agent, "): ", r.status().message());
            continue;
          }
          r->optimized.reset();
          mine.push_back({file, agent, std::move(*r)});
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      for (Row& r : mine) {
        if (csv.is_open()) csv << CsvRow(r);
        rows.push_back(std::move(r));
      }
      if (csv.is_open()) csv.flush();
      if (!failure.empty()) failures.push_back(failure);
      ++done;
      if (tty) {
        const double el = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count();
        std::fprintf(stderr, "\r[%zu/%zu] %.0f s, %zu failed\033[K", done,
                     files.size(), el, failures.size());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (tty) std::fprintf(stderr, "\n");
  for (const std::string& f : failures) std::cerr << "failed: " << f << "\n";
  std::printf("%zu graphs, pipeline %s, model %s, %d jobs, %zu failures\n",
              files.size(), a.common.pipeline.c_str(), a.common.device.c_str(),
              jobs, failures.size());
  PrintTable(agents, rows);
  return failures.empty() ? 0 : 1;
}

void AddCommon(CLI::App* cmd, CommonArgs* c) {
  cmd->add_option("--pipeline", c->pipeline,
                  "Decision pipeline: general-fusion, single-fusion, or a "
                  "pass name such as algebraic-simplifier (default "
                  "general-fusion)");
  cmd->add_option("--budget", c->budget,
                  "Evaluations per search (f-MCTS: simulations of the first "
                  "step; 0 = the agent's default)");
  cmd->add_option("--time-limit", c->time_limit,
                  "Seconds per search (0 = none)");
  cmd->add_option("--seed", c->seed, "Seed of the agents (default 0)");
  cmd->add_option("--device", c->device,
                  "Device of the performance model (default h100)");
  cmd->add_option("--threads", c->threads,
                  "Threads per search for f-MCTS rollouts (0 = every core, or "
                  "HLOGYM_THREADS; "
                  "bench-agents uses 1 per job when --jobs > 1). Results do "
                  "not depend on it")
      ->check(CLI::NonNegativeNumber);
}

}  // namespace

void AddOptimizeCommands(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  auto* cmd = app.add_subcommand(
      "optimize",
      "Search a decision pipeline's choices with an agent and report the "
      "result against the xla-gpu baseline");
  cmd->add_option("FILE", args->file, "HLO file")->required();
  AddCommon(cmd, &args->common);
  cmd->add_option("--agent", args->agent,
                  "pick-first | random | greedy | beam | fmcts (default "
                  "fmcts)");
  cmd->add_option("-o,--output", args->out,
                  "Write the optimized module here ('-' for stdout)");
  cmd->add_option("--json", args->json, "Write the report as JSON here");
  cmd->add_flag("--no-check", args->no_check,
                "Skip the output-equality check in the interpreter");
  cmd->callback([args] {
    int rc = RunOptimize(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });

  auto bargs = std::make_shared<BenchArgs>();
  auto* bench = app.add_subcommand(
      "bench-agents",
      "Run agents over a dataset (a folder of .hlo files) and print the "
      "results table per agent");
  bench->add_option("DIR", bargs->dir, "Folder of .hlo files")->required();
  AddCommon(bench, &bargs->common);
  bench->add_option("--agents", bargs->agents,
                    "Comma-separated agents (default pick-first,beam,fmcts)");
  bench->add_option("--jobs", bargs->jobs,
                    "Parallel workers (default: all cores, or HLOGYM_THREADS)");
  bench->add_option("--out", bargs->out,
                    "CSV of every (graph, agent) result, flushed as they "
                    "finish");
  bench->add_option("--every", bargs->every,
                    "Only every K-th file (sorted by path), from the first: a "
                    "sample of a large dataset (applied before --limit)");
  bench->add_option("--limit", bargs->limit,
                    "Only the first N files (sorted by path)");
  bench->add_flag("--check", bargs->check,
                  "Also compare outputs with the unoptimized module");
  bench->callback([bargs] {
    int rc = RunBench(*bargs);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace hlogym
