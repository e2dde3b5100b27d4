#include "passes_command.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/algebraic_simplifier.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/pipeline.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"
#include "nlohmann/json.hpp"

namespace hlogym {
namespace {

constexpr int kChecklistEntries = 212;

absl::StatusOr<std::unique_ptr<Module>> Load(const std::string& file) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModuleFile(file);
  if (!m.ok()) return m.status();
  if (absl::Status s = VerifyModule(**m, {}, file); !s.ok()) return s;
  return m;
}

// Writes the module to `out` ("-" or empty: nothing, the summary only).
int Write(const Module& m, const std::string& out) {
  if (out.empty()) return 0;
  std::string text = PrintModule(m);
  if (out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::ofstream f(out, std::ios::binary);
  f << text;
  if (!f) return Fail(StrCat("cannot write '", out, "'"));
  return 0;
}

double Ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

std::vector<std::string> SplitComma(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const std::string& s : in) {
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (!item.empty()) out.push_back(item);
    }
  }
  return out;
}

// Creates a registered pass and applies --disable-rule / --option.
absl::StatusOr<std::unique_ptr<Pass>> MakePass(
    const std::string& name, const std::vector<std::string>& disabled_rules,
    const std::vector<std::string>& options, bool* used_rules) {
  absl::StatusOr<std::unique_ptr<Pass>> pass =
      PassRegistry::Global().Create(name);
  if (!pass.ok()) return pass.status();
  for (const std::string& r : disabled_rules) {
    bool has = false;
    for (const RuleInfo& info : (*pass)->rules()) has |= info.name == r;
    if (has) {
      if (absl::Status s = (*pass)->SetRuleEnabled(r, false); !s.ok()) {
        return s;
      }
      *used_rules = true;
    }
  }
  for (const std::string& o : options) {
    size_t eq = o.find('=');
    std::string key = o.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : o.substr(eq + 1);
    if (absl::Status s = (*pass)->SetOption(key, value); !s.ok()) return s;
  }
  return pass;
}

struct PassArgs {
  std::string file;
  std::vector<std::string> passes;
  std::vector<std::string> disabled_rules;
  std::vector<std::string> options;
  std::string out;
  bool fixpoint = false;
};

int RunPasses(const std::string& rules_of) {
  const PassRegistry& reg = PassRegistry::Global();
  if (rules_of.empty()) {
    for (const PassRegistry::Entry& e : reg.entries()) {
      std::printf("%-36s %s\n", e.name.c_str(), e.description.c_str());
    }
    std::printf("%zu passes; rules of one: hlogym passes --rules NAME\n",
                reg.entries().size());
    return 0;
  }
  absl::StatusOr<std::unique_ptr<Pass>> pass = reg.Create(rules_of);
  if (!pass.ok()) return Fail(std::string(pass.status().message()));
  const std::vector<RuleInfo>& rules = (*pass)->rules();
  if (rules.empty()) {
    std::printf("%s has no named rules (it is one rewrite)\n",
                rules_of.c_str());
    return 0;
  }
  std::set<int> entries;
  for (const RuleInfo& r : rules) {
    std::printf("%4d  %-44s %s\n", r.entry, r.name.c_str(), r.summary.c_str());
    if (r.entry > 0) entries.insert(r.entry);
  }
  std::printf("%zu rules covering %zu of the %d checklist entries\n",
              rules.size(), entries.size(), kChecklistEntries);
  std::vector<std::string> options = (*pass)->OptionNames();
  if (!options.empty()) {
    std::printf("options (--option KEY=VALUE):");
    for (const std::string& o : options) std::printf(" %s", o.c_str());
    std::printf("\n");
  }
  return 0;
}

int RunRunPass(const PassArgs& a) {
  absl::StatusOr<std::unique_ptr<Module>> m = Load(a.file);
  if (!m.ok()) return Fail(std::string(m.status().message()));
  Pipeline pipeline("run-pass");
  pipeline.set_verify(true);
  if (a.fixpoint) pipeline.set_max_iterations(Pipeline::kUntilUnchanged);
  bool used_rules = false;
  for (const std::string& name : SplitComma(a.passes)) {
    auto pass = MakePass(name, a.disabled_rules, a.options, &used_rules);
    if (!pass.ok()) return Fail(std::string(pass.status().message()));
    pipeline.AddPass(std::move(*pass));
  }
  if (!a.disabled_rules.empty() && !used_rules) {
    return Fail(StrCat("--disable-rule: no pass given has a rule '",
                       a.disabled_rules[0], "'"));
  }
  const int64_t before = (*m)->instruction_count();
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<bool> changed = pipeline.Run(m->get());
  const double ms = Ms(t0);
  if (!changed.ok()) return Fail(std::string(changed.status().message()));
  std::fprintf(a.out == "-" ? stderr : stdout,
               "%s: %s, %lld -> %lld instructions, %.1f ms, hash %s\n",
               a.file.c_str(), *changed ? "changed" : "unchanged",
               static_cast<long long>(before),
               static_cast<long long>((*m)->instruction_count()), ms,
               DagHashHex(DagHash(**m)).c_str());
  return Write(**m, a.out);
}

int RunAugment(const PassArgs& a) {
  absl::StatusOr<std::unique_ptr<Module>> m = Load(a.file);
  if (!m.ok()) return Fail(std::string(m.status().message()));
  std::vector<std::string> names = SplitComma(a.passes);
  if (names.size() != 1) return Fail("augment: give exactly one --pass");
  bool used_rules = false;
  auto pass = MakePass(names[0], a.disabled_rules, a.options, &used_rules);
  if (!pass.ok()) return Fail(std::string(pass.status().message()));
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<AugmentStats> stats = (*pass)->RunDry(m->get());
  const double ms = Ms(t0);
  if (!stats.ok()) return Fail(std::string(stats.status().message()));
  if (absl::Status s = VerifyModule(**m); !s.ok()) {
    return Fail(StrCat("internal error: the augmented module does not verify: ",
                       s.message()));
  }
  std::fprintf(a.out == "-" ? stderr : stdout,
               "%s: %lld alternatives (%lld candidates from %lld "
               "opportunities), %lld rejected (cyclic), %.1f ms\n",
               a.file.c_str(), static_cast<long long>(stats->alternatives),
               static_cast<long long>(stats->candidates),
               static_cast<long long>(stats->opportunities),
               static_cast<long long>(stats->rejected_cyclic), ms);
  return Write(**m, a.out);
}

absl::StatusOr<std::vector<int64_t>> ReadDecisions(const std::string& file,
                                                   size_t expected) {
  std::ifstream f(file);
  if (!f) return absl::NotFoundError(StrCat("cannot open '", file, "'"));
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(StrCat(file, ": not valid JSON"));
  }
  if (j.is_object() && j.contains("decisions")) j = j["decisions"];
  if (!j.is_array()) {
    return absl::InvalidArgumentError(
        StrCat(file,
               ": expected a JSON array of operand indices (or "
               "{\"decisions\": [...]})"));
  }
  std::vector<int64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_integer()) {
      return absl::InvalidArgumentError(
          StrCat(file, ": decision ", out.size(), " is not an integer"));
    }
    out.push_back(v.get<int64_t>());
  }
  (void)expected;
  return out;
}

int RunApply(const std::string& file, const std::string& decisions,
             const std::string& out) {
  absl::StatusOr<std::unique_ptr<Module>> m = Load(file);
  if (!m.ok()) return Fail(std::string(m.status().message()));
  std::vector<Instruction*> nodes = AlternativeNodes(**m);
  std::vector<int64_t> d;
  if (decisions.size() > 5 &&
      decisions.substr(decisions.size() - 5) == ".json") {
    auto read = ReadDecisions(decisions, nodes.size());
    if (!read.ok()) return Fail(std::string(read.status().message()));
    d = *read;
  } else {
    absl::StatusOr<DecisionPolicy> policy = DecisionPolicy::Parse(decisions);
    if (!policy.ok()) return Fail(std::string(policy.status().message()));
    d = policy->Decide(nodes);
  }
  const int64_t before = (*m)->instruction_count();
  absl::StatusOr<ApplyStats> stats = ApplyDecisions(m->get(), d);
  if (!stats.ok()) return Fail(std::string(stats.status().message()));
  if (absl::Status s = VerifyModule(**m); !s.ok()) {
    return Fail(
        StrCat("internal error: the result does not verify: ", s.message()));
  }
  std::fprintf(out == "-" ? stderr : stdout,
               "%s: %lld decisions (%lld not the original), %lld -> %lld "
               "instructions, hash %s\n",
               file.c_str(), static_cast<long long>(stats->alternatives),
               static_cast<long long>(stats->non_original),
               static_cast<long long>(before),
               static_cast<long long>((*m)->instruction_count()),
               DagHashHex(DagHash(**m)).c_str());
  return Write(**m, out);
}

int RunRewriteLoop(const PassArgs& a, const std::string& policy_text,
                   int64_t max_iterations) {
  absl::StatusOr<std::unique_ptr<Module>> m = Load(a.file);
  if (!m.ok()) return Fail(std::string(m.status().message()));
  std::vector<std::string> names = SplitComma(a.passes);
  if (names.size() != 1) return Fail("rewrite-loop: give exactly one --pass");
  bool used_rules = false;
  auto pass = MakePass(names[0], a.disabled_rules, a.options, &used_rules);
  if (!pass.ok()) return Fail(std::string(pass.status().message()));
  absl::StatusOr<DecisionPolicy> policy = DecisionPolicy::Parse(policy_text);
  if (!policy.ok()) return Fail(std::string(policy.status().message()));
  const int64_t before = (*m)->instruction_count();
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<RewriteLoopStats> stats =
      RewriteLoop(m->get(), **pass, *policy, max_iterations);
  const double ms = Ms(t0);
  if (!stats.ok()) return Fail(std::string(stats.status().message()));
  std::fprintf(a.out == "-" ? stderr : stdout,
               "%s: %s after %lld iterations (%lld alternatives, %lld "
               "decided away from the original, %lld rejected as cyclic), "
               "%lld -> %lld instructions, %.1f ms, hash %s\n",
               a.file.c_str(),
               stats->converged ? "converged"
               : stats->growth_stopped
                   ? "stopped (the module grew past 64x its size)"
                   : "NOT converged",
               static_cast<long long>(stats->iterations),
               static_cast<long long>(stats->alternatives),
               static_cast<long long>(stats->non_original_decisions),
               static_cast<long long>(stats->rejected_cyclic),
               static_cast<long long>(before),
               static_cast<long long>((*m)->instruction_count()), ms,
               DagHashHex(DagHash(**m)).c_str());
  int rc = Write(**m, a.out);
  return rc != 0 ? rc : (stats->converged ? 0 : 3);
}

void AddPassOptions(CLI::App* cmd, PassArgs* a, bool many) {
  cmd->add_option("FILE", a->file, "HLO file")->required();
  cmd->add_option("--pass", a->passes,
                  many ? "Pass name(s), comma separated, run in order"
                       : "Pass name (see `hlogym passes`)")
      ->required();
  cmd->add_option("--disable-rule", a->disabled_rules,
                  "Switch off a named rule (repeatable; see `hlogym passes "
                  "--rules PASS`)");
  cmd->add_option("--option", a->options, "Pass option KEY=VALUE (repeatable)");
  cmd->add_option("-o,--output", a->out,
                  "Write the resulting module here ('-' for stdout)");
}

}  // namespace

void AddPassesCommands(CLI::App& app) {
  auto* passes = app.add_subcommand(
      "passes", "List the passes, or the named rules of one pass");
  auto rules_of = std::make_shared<std::string>();
  passes->add_option("--rules", *rules_of, "Pass whose rules to list");
  passes->callback([rules_of] {
    int rc = RunPasses(*rules_of);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });

  auto run_args = std::make_shared<PassArgs>();
  auto* run_pass = app.add_subcommand(
      "run-pass", "Run passes on a module (apply mode) and print a summary");
  AddPassOptions(run_pass, run_args.get(), true);
  run_pass->add_flag("--fixpoint", run_args->fixpoint,
                     "Repeat the passes until nothing changes (at most 25 "
                     "times)");
  run_pass->callback([run_args] {
    int rc = RunRunPass(*run_args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });

  auto aug_args = std::make_shared<PassArgs>();
  auto* augment = app.add_subcommand(
      "augment",
      "Dry-run a pass: its rewrites become `alternatives` instructions");
  AddPassOptions(augment, aug_args.get(), false);
  augment->callback([aug_args] {
    int rc = RunAugment(*aug_args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });

  struct ApplyArgs {
    std::string file, decisions, out;
  };
  auto apply_args = std::make_shared<ApplyArgs>();
  auto* apply = app.add_subcommand(
      "apply", "Decide every alternatives node of an augmented module");
  apply->add_option("FILE", apply_args->file, "Augmented HLO file")->required();
  apply
      ->add_option("--decisions", apply_args->decisions,
                   "original | first | random[:SEED] | FILE.json (an array "
                   "with one operand index per alternatives node, in "
                   "observation order)")
      ->required();
  apply->add_option("-o,--output", apply_args->out,
                    "Write the resulting module here ('-' for stdout)");
  apply->callback([apply_args] {
    int rc = RunApply(apply_args->file, apply_args->decisions, apply_args->out);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });

  auto loop_args = std::make_shared<PassArgs>();
  auto policy = std::make_shared<std::string>("first");
  auto max_iterations = std::make_shared<int64_t>(1000);
  auto* loop = app.add_subcommand(
      "rewrite-loop",
      "Augment, decide, apply, repeat until no alternatives remain (exit 3 "
      "if not converged)");
  AddPassOptions(loop, loop_args.get(), false);
  loop->add_option("--policy", *policy,
                   "first | random[:SEED] | original (default first)");
  loop->add_option("--max-iterations", *max_iterations,
                   "Stop after this many rounds (default 1000)");
  loop->callback([loop_args, policy, max_iterations] {
    int rc = RunRewriteLoop(*loop_args, *policy, *max_iterations);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace hlogym
