// hlogym: the command-line interface.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli_util.h"
#include "cost_command.h"
#include "extract_command.h"
#include "hlogym/cost/evaluator.h"
#include "hlogym/eval/compare.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/eval/npy.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"
#include "optimize_command.h"
#include "passes_command.h"
#include "pipeline_command.h"

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
    std::cout << DagHashHex(DagHash(**m)) << "  " << f << "\n";
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
  std::printf("DagHash: %s\n", DagHashHex(DagHash(**m)).c_str());
  std::printf("round trip (parse -> print -> parse -> print): %s\n",
              rt.empty() ? "identical" : rt.c_str());
  // The interpreter on seeded inputs, and the modelled H100 time.
  int rc = rt.empty() ? 0 : 1;
  auto args = GenerateInputs(ParameterShapes(*(*m)->entry_computation()), 0);
  Interpreter interpreter;
  auto t3 = std::chrono::steady_clock::now();
  auto out = args.ok() ? interpreter.Run(**m, *args)
                       : absl::StatusOr<Literal>(args.status());
  auto t4 = std::chrono::steady_clock::now();
  if (out.ok()) {
    std::printf("interpreter (seed 0): %.2f ms, %lld instructions evaluated\n",
                ms(t3, t4),
                static_cast<long long>(interpreter.instructions_evaluated()));
  } else {
    std::printf("interpreter: %s\n",
                std::string(out.status().message()).c_str());
    rc = 1;
  }
  auto evaluator = CreateEvaluator("model:h100");
  auto cost = evaluator.ok()
                  ? (*evaluator)->Evaluate(**m)
                  : absl::StatusOr<EvaluationResult>(evaluator.status());
  if (cost.ok()) {
    std::printf("modelled H100 time: %.3f us in %lld kernels\n",
                cost->total_seconds * 1e6,
                static_cast<long long>(cost->kernel_count));
  } else {
    std::printf("cost model: %s\n",
                std::string(cost.status().message()).c_str());
    rc = 1;
  }
  Stats s;
  CollectStats(**m, &s);
  PrintStats(StrCat("module ", (*m)->name()), s);
  return rc;
}

// ---- run and compare: evaluation with the reference interpreter.

std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// "shape: min .. max .. mean ..; first values" for one output array.
std::string SummarizeArray(const Literal& l) {
  const Shape& s = l.shape();
  std::string out = s.ToString(false);
  const int64_t n = l.element_count();
  if (l.is_unknown()) return out + ": contents unknown";
  if (n == 0) return out + ": empty";
  const PrimitiveType t = s.element_type();
  if (t == PrimitiveType::kPred) {
    int64_t trues = 0;
    for (int64_t i = 0; i < n; ++i) trues += l.data()[i] != 0;
    StrAppend(&out, ": ", trues, " of ", n, " true");
  } else if (IsComplexType(t)) {
    std::complex<double> sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += l.GetComplex(i);
    sum /= static_cast<double>(n);
    StrAppend(&out, ": mean (", FormatDouble(sum.real()), ", ",
              FormatDouble(sum.imag()), ")");
  } else {
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    int64_t nans = 0, infs = 0, finite = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = l.GetAsDouble(i);
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      if (std::isinf(v)) ++infs;
      mn = std::min(mn, v);
      mx = std::max(mx, v);
      if (std::isfinite(v)) {
        sum += v;
        ++finite;
      }
    }
    if (nans < n) {
      StrAppend(&out, ": min ", FormatDouble(mn), " max ", FormatDouble(mx));
    } else {
      out += ":";
    }
    if (finite > 0) {
      StrAppend(&out, " mean ", FormatDouble(sum / finite));
    }
    if (nans > 0) StrAppend(&out, " nan ", nans);
    if (infs > 0) StrAppend(&out, " inf ", infs);
  }
  out += "; first: ";
  const int64_t shown = std::min<int64_t>(n, 6);
  for (int64_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    l.AppendElement(i, &out);
  }
  if (shown < n) out += ", ...";
  return out;
}

std::string FormatBytes(int64_t bytes) {
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(bytes));
  } else if (bytes < (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  }
  return buf;
}

// Limits set by the --time-limit, --max-while-iterations and
// --zero-unknown-constants flags of `run` and `compare`.
InterpreterOptions g_interpreter_limits;

double Millis(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// Arguments for `m`'s entry: from files when `inputs` is set, else
// generated from `seed`.
absl::StatusOr<std::vector<Literal>> MakeArguments(const Module& m,
                                                   const std::string& inputs,
                                                   uint64_t seed) {
  if (!m.entry_computation()) {
    return absl::InvalidArgumentError("the module has no entry computation");
  }
  std::vector<Shape> shapes = ParameterShapes(*m.entry_computation());
  if (!inputs.empty()) return ReadArguments(inputs, shapes);
  // Refuse before allocating: generated inputs count against the same
  // memory limit as the run.
  int64_t total = 0;
  for (const Shape& s : shapes) {
    total = std::min(total + std::min(s.ArrayBytes(), int64_t{1} << 62),
                     int64_t{1} << 62);
  }
  if (total > g_interpreter_limits.max_live_bytes) {
    return absl::ResourceExhaustedError(StrCat(
        "the entry parameters take ", total, " bytes, over the limit of ",
        g_interpreter_limits.max_live_bytes, " bytes"));
  }
  return GenerateInputs(shapes, seed);
}

struct Evaluation {
  Literal result;
  double millis = 0;
  int64_t instructions = 0;
  int64_t peak_bytes = 0;
};

absl::StatusOr<Evaluation> Evaluate(const Module& m,
                                    const std::vector<Literal>& args,
                                    uint64_t seed) {
  InterpreterOptions options = g_interpreter_limits;
  options.rng_seed = seed;
  Interpreter interpreter(options);
  auto t0 = std::chrono::steady_clock::now();
  auto r = interpreter.Run(m, args);
  auto t1 = std::chrono::steady_clock::now();
  if (!r.ok()) return r.status();
  Evaluation e;
  e.result = std::move(*r);
  e.millis = Millis(t1 - t0);
  e.instructions = interpreter.instructions_evaluated();
  e.peak_bytes = interpreter.peak_live_bytes();
  return e;
}

std::string InputsText(const std::string& inputs, uint64_t seed,
                       const std::vector<Literal>& args) {
  int64_t arrays = 0;
  for (const Literal& a : args) {
    arrays += static_cast<int64_t>(ArrayLeaves(a).size());
  }
  if (!inputs.empty()) return StrCat(arrays, " arrays from ", inputs);
  return StrCat(arrays, " arrays generated with seed ", seed);
}

int RunRun(const std::string& file, const std::string& inputs, uint64_t seed,
           const std::string& outputs, bool print) {
  auto m = LoadAndVerify(file);
  if (!m.ok()) {
    std::cerr << m.status().message() << "\n";
    return 1;
  }
  auto args = MakeArguments(**m, inputs, seed);
  if (!args.ok()) {
    std::cerr << file << ": inputs: " << args.status().message() << "\n";
    return 1;
  }
  auto e = Evaluate(**m, *args, seed);
  if (!e.ok()) {
    std::cerr << file << ": evaluation failed: " << e.status().message()
              << "\n";
    return 1;
  }
  std::cout << file << ": inputs: " << InputsText(inputs, seed, *args) << "\n";
  std::printf("run: %.3f ms, %lld instructions evaluated, peak live %s\n",
              e->millis, static_cast<long long>(e->instructions),
              FormatBytes(e->peak_bytes).c_str());
  std::vector<const Literal*> leaves = ArrayLeaves(e->result);
  for (size_t j = 0; j < leaves.size(); ++j) {
    std::cout << "out" << j << " " << SummarizeArray(*leaves[j]) << "\n";
    if (print) {
      std::cout << "out" << j << " = " << leaves[j]->ToString() << "\n";
    }
  }
  if (leaves.empty()) {
    std::cout << "result " << e->result.shape().ToString(false)
              << ": no arrays\n";
  }
  if (!outputs.empty()) {
    if (absl::Status s = WriteOutputs(e->result, outputs); !s.ok()) {
      std::cerr << s.message() << "\n";
      return 1;
    }
    std::cout << "wrote " << leaves.size() << " arrays to " << outputs << "\n";
  }
  return 0;
}

// Exit status: 0 all outputs match, 1 some differ, 2 errors.
int RunCompare(const std::string& file_a, const std::string& file_b,
               const std::string& inputs, uint64_t seed,
               const CompareOptions& options) {
  auto a = LoadAndVerify(file_a);
  if (!a.ok()) {
    std::cerr << a.status().message() << "\n";
    return 2;
  }
  auto b = LoadAndVerify(file_b);
  if (!b.ok()) {
    std::cerr << b.status().message() << "\n";
    return 2;
  }
  if (!(*a)->entry_computation() || !(*b)->entry_computation()) {
    std::cerr << "a module has no entry computation\n";
    return 2;
  }
  std::vector<Shape> pa = ParameterShapes(*(*a)->entry_computation());
  std::vector<Shape> pb = ParameterShapes(*(*b)->entry_computation());
  if (pa.size() != pb.size()) {
    std::cerr << file_b << ": the entry has " << pb.size() << " parameters, "
              << file_a << " has " << pa.size() << "\n";
    return 2;
  }
  for (size_t i = 0; i < pa.size(); ++i) {
    if (!pa[i].EqualIgnoringLayout(pb[i])) {
      std::cerr << file_b << ": entry parameter " << i << " is "
                << pb[i].ToString(false) << ", in " << file_a << " it is "
                << pa[i].ToString(false) << "\n";
      return 2;
    }
  }
  auto args = MakeArguments(**a, inputs, seed);
  if (!args.ok()) {
    std::cerr << file_a << ": inputs: " << args.status().message() << "\n";
    return 2;
  }
  std::cout << "inputs: " << InputsText(inputs, seed, *args) << "\n";
  Evaluation results[2];
  const std::string* files[2] = {&file_a, &file_b};
  const Module* modules[2] = {a->get(), b->get()};
  for (int k = 0; k < 2; ++k) {
    auto e = Evaluate(*modules[k], *args, seed);
    if (!e.ok()) {
      std::cerr << *files[k] << ": evaluation failed: " << e.status().message()
                << "\n";
      return 2;
    }
    results[k] = std::move(*e);
    std::printf("%s %s: %.3f ms, %lld instructions evaluated\n",
                k == 0 ? "a" : "b", files[k]->c_str(), results[k].millis,
                static_cast<long long>(results[k].instructions));
  }
  CompareReport report = Compare(results[0].result, results[1].result, options);
  std::cout << report.ToString();
  return report.ok ? 0 : 1;
}

}  // namespace
}  // namespace hlogym

int main(int argc, char** argv) {
  using namespace hlogym;
  CLI::App app{
      "hlogym: HLO graphs for compiler-optimization research.\n"
      "Parse, verify, print, hash, inspect and evaluate XLA HLO text "
      "modules."};
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

  std::string run_file, run_inputs, run_outputs;
  uint64_t run_seed = 0;
  bool run_print = false;
  auto* run = app.add_subcommand(
      "run", "Evaluate a module with the reference interpreter");
  run->add_option("FILE", run_file, "HLO file")->required();
  run->add_option("--inputs", run_inputs,
                  "Directory of param<i>.npy files or an .npz archive "
                  "(default: generated inputs)");
  run->add_option("--seed", run_seed,
                  "Seed of the generated inputs and of rng ops (default 0)");
  run->add_option("--outputs", run_outputs,
                  "Write the result arrays out<j> to this directory, or "
                  "archive when it ends in .npz");
  run->add_flag("--print", run_print, "Print every output array in full");
  auto add_limits = [](CLI::App* cmd) {
    cmd->add_option("--time-limit", g_interpreter_limits.time_limit_seconds,
                    "Stop a run after this many seconds (default: none)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--max-while-iterations",
                    g_interpreter_limits.max_while_iterations,
                    "Fail a while loop that runs longer (default 16777216)")
        ->check(CLI::PositiveNumber);
    cmd->add_flag("--zero-unknown-constants",
                  g_interpreter_limits.unknown_constants_as_zero,
                  "Evaluate constants printed as {...} as zeros");
  };
  add_limits(run);

  std::string cmp_a, cmp_b, cmp_inputs;
  uint64_t cmp_seed = 0;
  double cmp_rtol = 0, cmp_atol = 0;
  auto* cmp = app.add_subcommand(
      "compare",
      "Run two modules on the same inputs and compare their outputs (exit 0: "
      "equal within tolerance, 1: different, 2: error)");
  cmp->add_option("A", cmp_a, "HLO file")->required();
  cmp->add_option("B", cmp_b, "HLO file, the reference for --rtol")->required();
  cmp->add_option("--inputs", cmp_inputs,
                  "Directory of param<i>.npy files or an .npz archive "
                  "(default: generated inputs)");
  cmp->add_option("--seed", cmp_seed,
                  "Seed of the generated inputs and of rng ops (default 0)");
  auto* rtol_opt = cmp->add_option(
      "--rtol", cmp_rtol,
      "Relative tolerance for floats: |a-b| <= atol + rtol*|b| (default per "
      "type, e.g. 1e-5 for f32)");
  auto* atol_opt = cmp->add_option(
      "--atol", cmp_atol, "Absolute tolerance for floats (default per type)");
  rtol_opt->check(CLI::NonNegativeNumber);
  atol_opt->check(CLI::NonNegativeNumber);
  add_limits(cmp);

  AddCostCommand(app);
  AddPassesCommands(app);
  AddPipelineCommand(app);
  AddExtractCommand(app);
  AddOptimizeCommands(app);

  CLI11_PARSE(app, argc, argv);

  if (*parse) return RunParse(parse_files, quiet);
  if (*print)
    return RunPrint(print_file, no_metadata, short_form, operand_shapes);
  if (*hash) return RunHash(hash_files);
  if (*stats) return RunStats(stats_files);
  if (*run)
    return RunRun(run_file, run_inputs, run_seed, run_outputs, run_print);
  if (*cmp) {
    CompareOptions options;
    if (rtol_opt->count() > 0) options.rtol = cmp_rtol;
    if (atol_opt->count() > 0) options.atol = cmp_atol;
    return RunCompare(cmp_a, cmp_b, cmp_inputs, cmp_seed, options);
  }
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
