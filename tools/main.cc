// hlogym: the command-line interface.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

// Expands directories into their *.hlo and *.txt files (sorted, recursive).
std::vector<std::string> ExpandInputs(const std::vector<std::string>& inputs,
                                      bool* ok) {
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(in, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        if (!it->is_regular_file()) continue;
        std::string ext = it->path().extension().string();
        if (ext == ".hlo" || ext == ".txt")
          found.push_back(it->path().string());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(in, ec)) {
      files.push_back(in);
    } else {
      std::cerr << in << ": no such file or directory\n";
      *ok = false;
    }
  }
  return files;
}

VerifierOptions g_verifier_options;  // set from the command line

absl::StatusOr<std::unique_ptr<Module>> LoadAndVerify(const std::string& path) {
  auto m = ParseModuleFile(path);
  if (!m.ok()) return m.status();
  if (absl::Status s = VerifyModule(**m, g_verifier_options, path); !s.ok()) {
    return s;
  }
  return m;
}

// A module embedded in the binary so `hlogym demo` works anywhere.
constexpr char kEmbeddedExample[] =
    R"(HloModule jit_mlp_block, entry_computation_layout={(f32[8,32]{1,0}, f32[32,64]{1,0}, f32[64]{0})->f32[8,64]{1,0}}

%region_0.4 (Arg_0.5: f32[], Arg_1.6: f32[]) -> f32[] {
  %Arg_0.5 = f32[] parameter(0)
  %Arg_1.6 = f32[] parameter(1)
  ROOT %add.7 = f32[] add(%Arg_0.5, %Arg_1.6)
}

ENTRY %main.20 (Arg_0.1: f32[8,32], Arg_1.2: f32[32,64], Arg_2.3: f32[64]) -> f32[8,64] {
  %Arg_0.1 = f32[8,32]{1,0} parameter(0)
  %Arg_1.2 = f32[32,64]{1,0} parameter(1)
  %dot.8 = f32[8,64]{1,0} dot(%Arg_0.1, %Arg_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(mlp_block)/dot_general"}
  %Arg_2.3 = f32[64]{0} parameter(2)
  %broadcast.9 = f32[8,64]{1,0} broadcast(%Arg_2.3), dimensions={1}
  %add.10 = f32[8,64]{1,0} add(%dot.8, %broadcast.9)
  %constant.11 = f32[] constant(0)
  %broadcast.12 = f32[8,64]{1,0} broadcast(%constant.11), dimensions={}
  %maximum.13 = f32[8,64]{1,0} maximum(%add.10, %broadcast.12), metadata={op_name="jit(mlp_block)/relu"}
  %reduce.14 = f32[8]{0} reduce(%maximum.13, %constant.11), dimensions={1}, to_apply=%region_0.4
  %broadcast.15 = f32[8,64]{1,0} broadcast(%reduce.14), dimensions={0}
  ROOT %divide.16 = f32[8,64]{1,0} divide(%maximum.13, %broadcast.15)
}
)";

struct Stats {
  int64_t instructions = 0;
  int64_t computations = 0;
  int64_t fusion_computations = 0;
  std::map<std::string, int64_t> opcodes;
  std::map<std::string, int64_t> unknown_attributes;
  std::map<std::string, int64_t> text_attributes;  // kept as text
};

void CollectStats(const Module& m, Stats* s) {
  s->computations += m.computation_count();
  for (const auto& c : m.computations()) {
    if (c->IsFusionComputation()) ++s->fusion_computations;
    c->ForEachInstruction([&](Instruction* i) {
      ++s->instructions;
      ++s->opcodes[std::string(OpcodeName(i->opcode()))];
      const InstructionAttrs& a = i->attrs();
      for (const auto& [k, v] : a.unknown) ++s->unknown_attributes[k];
      if (!a.statistics_text.empty()) ++s->text_attributes["statistics"];
      if (!a.origin_text.empty()) ++s->text_attributes["origin"];
      if (!a.sparsity_config.empty()) ++s->text_attributes["sparsity_config"];
      if (!a.result_accuracy_text.empty())
        ++s->text_attributes["result_accuracy"];
      if (!a.domain_text.empty()) ++s->text_attributes["domain"];
      if (a.sharding && a.sharding->kind == Sharding::Kind::kNamed) {
        ++s->text_attributes["sharding (named mesh form)"];
      }
      if (a.replica_groups &&
          a.replica_groups->form == ReplicaGroups::Form::kMesh) {
        ++s->text_attributes["replica_groups (mesh form)"];
      }
    });
  }
  const ModuleConfig& cfg = m.config();
  if (!cfg.origin_recovery_table.empty())
    ++s->text_attributes["origin_recovery_table"];
  if (!cfg.debug_attributes.empty()) ++s->text_attributes["debug_attributes"];
  if (!cfg.stack_frames.empty()) ++s->text_attributes["stack frames"];
}

void PrintStats(const std::string& title, const Stats& s) {
  std::cout << title << "\n";
  std::cout << "  instructions:  " << s.instructions << "\n";
  std::cout << "  computations:  " << s.computations << " ("
            << s.fusion_computations << " fused)\n";
  std::vector<std::pair<int64_t, std::string>> hist;
  for (const auto& [k, v] : s.opcodes) hist.emplace_back(-v, k);
  std::sort(hist.begin(), hist.end());
  std::cout << "  opcodes (" << hist.size() << "):\n";
  for (const auto& [neg, name] : hist) {
    std::printf("    %-28s %lld\n", name.c_str(), static_cast<long long>(-neg));
  }
  std::cout << "  unknown attributes (kept verbatim): "
            << (s.unknown_attributes.empty() ? "none" : "") << "\n";
  for (const auto& [k, v] : s.unknown_attributes) {
    std::printf("    %-28s %lld\n", k.c_str(), static_cast<long long>(v));
  }
  if (!s.text_attributes.empty()) {
    std::cout << "  attributes kept as normalized text:\n";
    for (const auto& [k, v] : s.text_attributes) {
      std::printf("    %-28s %lld\n", k.c_str(), static_cast<long long>(v));
    }
  }
}

std::string Hex16(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(h));
  return buf;
}

// Parse, verify, print, re-parse and re-print; returns "" on success or a
// description of the first difference.
std::string RoundTrip(const Module& m) {
  std::string p1 = PrintModule(m);
  auto m2 = ParseModule(p1);
  if (!m2.ok())
    return StrCat("printed text does not parse: ", m2.status().message());
  std::string p2 = PrintModule(**m2);
  if (p1 != p2) {
    size_t i = 0;
    while (i < p1.size() && i < p2.size() && p1[i] == p2[i]) ++i;
    return StrCat("printed text differs after re-parsing at byte ",
                  static_cast<int64_t>(i));
  }
  if (DagHash(m) != DagHash(**m2)) return "DagHash changed after re-parsing";
  return "";
}

int RunParse(const std::vector<std::string>& inputs, bool quiet) {
  bool ok = true;
  std::vector<std::string> files = ExpandInputs(inputs, &ok);
  int64_t valid = 0, invalid = 0;
  for (const std::string& f : files) {
    auto m = LoadAndVerify(f);
    if (m.ok()) {
      ++valid;
      if (!quiet)
        std::cout << f << ": OK (" << (*m)->instruction_count()
                  << " instructions)\n";
    } else {
      ++invalid;
      std::cerr << m.status().message() << "\n";
    }
  }
  if (files.size() > 1) {
    std::cout << valid << " valid, " << invalid << " invalid\n";
  }
  return (ok && invalid == 0) ? 0 : 1;
}

int RunPrint(const std::string& file, bool no_metadata, bool short_form,
             bool operand_shapes) {
  auto m = LoadAndVerify(file);
  if (!m.ok()) {
    std::cerr << m.status().message() << "\n";
    return 1;
  }
  PrintOptions o = short_form ? PrintOptions::Short() : PrintOptions::Default();
  if (no_metadata) o.print_metadata = false;
  if (operand_shapes) o.print_operand_shapes = true;
  std::cout << PrintModule(**m, o);
  return 0;
}

int RunHash(const std::vector<std::string>& inputs) {
  bool ok = true;
  std::vector<std::string> files = ExpandInputs(inputs, &ok);
  for (const std::string& f : files) {
    auto m = ParseModuleFile(f);
    if (!m.ok()) {
      std::cerr << m.status().message() << "\n";
      ok = false;
      continue;
    }
    std::cout << Hex16(DagHash(**m)) << "  " << f << "\n";
  }
  return ok ? 0 : 1;
}

int RunStats(const std::vector<std::string>& inputs) {
  bool ok = true;
  std::vector<std::string> files = ExpandInputs(inputs, &ok);
  Stats total;
  int64_t n = 0;
  for (const std::string& f : files) {
    auto m = ParseModuleFile(f);
    if (!m.ok()) {
      std::cerr << m.status().message() << "\n";
      ok = false;
      continue;
    }
    Stats s;
    CollectStats(**m, &s);
    CollectStats(**m, &total);
    ++n;
    if (files.size() == 1)
      PrintStats(StrCat(f, " (module ", (*m)->name(), ")"), s);
  }
  if (files.size() > 1) PrintStats(StrCat(n, " modules"), total);
  return ok ? 0 : 1;
}

int Demo(const std::string& file) {
  std::string text, name;
  if (file.empty()) {
    text = kEmbeddedExample;
    name = "<embedded jit_mlp_block>";
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << file << ": cannot open file\n";
      return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    name = file;
  }
  ParseOptions po;
  po.filename = name;
  auto t0 = std::chrono::steady_clock::now();
  auto m = ParseModule(text, po);
  if (!m.ok()) {
    std::cerr << m.status().message() << "\n";
    return 1;
  }
  auto t1 = std::chrono::steady_clock::now();
  if (absl::Status s = VerifyModule(**m, {}, name); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  auto t2 = std::chrono::steady_clock::now();
  std::string rt = RoundTrip(**m);
  auto ms = [](auto a, auto b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  std::printf("== %s\n", name.c_str());
  std::printf("parse: %.2f ms (%zu bytes), verify: %.2f ms\n", ms(t0, t1),
              text.size(), ms(t1, t2));
  std::printf("DagHash: %s\n", Hex16(DagHash(**m)).c_str());
  std::printf("round trip (parse -> print -> parse -> print): %s\n",
              rt.empty() ? "identical" : rt.c_str());
  Stats s;
  CollectStats(**m, &s);
  PrintStats(StrCat("module ", (*m)->name()), s);
  return rt.empty() ? 0 : 1;
}

}  // namespace
}  // namespace hlogym

int main(int argc, char** argv) {
  using namespace hlogym;
  CLI::App app{
      "hlogym: HLO graphs for compiler-optimization research.\n"
      "Parse, verify, print, hash and inspect XLA HLO text modules."};
  app.require_subcommand(1);

  std::vector<std::string> parse_files;
  bool quiet = false;
  auto* parse = app.add_subcommand(
      "parse", "Parse and verify HLO files (exit 0 when all are valid)");
  parse
      ->add_option("FILE", parse_files,
                   "HLO files or directories (*.hlo, *.txt)")
      ->required();
  parse->add_flag("-q,--quiet", quiet, "Only report errors and the summary");
  parse->add_flag(
      "--layout-sensitive", g_verifier_options.layout_sensitive,
      "Also check layouts, as XLA's verifier does after layout assignment");
  parse->add_flag(
      "!--no-mixed-precision", g_verifier_options.allow_mixed_precision,
      "Reject mixed floating-point precision in elementwise operations");
  parse->add_flag("!--no-unbounded-dynamism",
                  g_verifier_options.allow_unbounded_dynamism,
                  "Reject unbounded dynamic dimensions ('?'), as XLA's default "
                  "verifier does");

  std::string print_file;
  bool no_metadata = false, short_form = false, operand_shapes = false;
  auto* print =
      app.add_subcommand("print", "Print a module as canonical HLO text");
  print->add_option("FILE", print_file, "HLO file")->required();
  print->add_flag("--no-metadata", no_metadata, "Omit metadata={...}");
  print->add_flag("--short", short_form,
                  "No metadata, operand shapes, '%' or index comments");
  print->add_flag("--operand-shapes", operand_shapes,
                  "Write each operand's shape");

  std::vector<std::string> hash_files;
  auto* hash = app.add_subcommand(
      "hash", "Print the DagHash of each module: <16 hex digits>  <file>");
  hash->add_option("FILE", hash_files, "HLO files or directories")->required();

  std::vector<std::string> stats_files;
  auto* stats = app.add_subcommand("stats",
                                   "Instruction and computation counts, opcode "
                                   "histogram, unknown attributes");
  stats->add_option("FILE", stats_files, "HLO files or directories")
      ->required();

  std::vector<std::string> demo_files;
  auto* demo = app.add_subcommand("demo",
                                  "Parse, verify and summarize example modules "
                                  "(default: the shipped examples)");
  demo->add_option(
      "FILE", demo_files,
      "HLO files (default: examples/*.hlo, else an embedded module)");

  CLI11_PARSE(app, argc, argv);

  if (*parse) return RunParse(parse_files, quiet);
  if (*print)
    return RunPrint(print_file, no_metadata, short_form, operand_shapes);
  if (*hash) return RunHash(hash_files);
  if (*stats) return RunStats(stats_files);
  if (*demo) {
    if (demo_files.empty()) {
      for (const char* f :
           {"examples/transformer_encoder.hlo", "examples/cartpole_step.hlo"}) {
        if (std::filesystem::exists(f)) demo_files.push_back(f);
      }
    }
    if (demo_files.empty()) return Demo("");
    int rc = 0;
    for (const std::string& f : demo_files) {
      rc |= Demo(f);
      std::cout << "\n";
    }
    return rc;
  }
  return 0;
}
