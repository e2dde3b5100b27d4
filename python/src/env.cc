// Bindings of hlogym::Env and of the registries (passes, pipelines,
// devices).
#include "hlogym/env/env.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "hlogym/cost/device.h"
#include "hlogym/cost/evaluator.h"
#include "hlogym/ir/literal.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/pass.h"
#include "hlogym/passes/pipelines.h"

namespace hlogym_python {
namespace {

using hlogym::ApplyStats;
using hlogym::Env;
using hlogym::EnvOptions;
using hlogym::EvaluationResult;
using hlogym::KernelCost;
using hlogym::Literal;
using hlogym::PrimitiveType;
using hlogym::StepResult;
using hlogym::StrCat;

// A snapshot made by Env.save(): immutable, restorable any number of times.
struct Snapshot {
  std::shared_ptr<const Env> env;
};

// Decisions from Python: a 1-D sequence (one operand per alternatives node,
// in observation order) or HloEnv's N x 2 array of (node index, operand).
struct Decisions {
  bool indexed = false;
  std::vector<int64_t> choices;   // 1-D form
  std::vector<int64_t> nodes;     // indexed form
  std::vector<int64_t> operands;  // indexed form
};

Decisions ToDecisions(const py::object& action) {
  py::module_ np = py::module_::import("numpy");
  py::array arr = np.attr("asarray")(action);
  const char kind = arr.dtype().kind();
  // Integers (and booleans, which are 0/1) only: a float would be silently
  // truncated.
  if (arr.size() > 0 && kind != 'i' && kind != 'u' && kind != 'b') {
    ThrowInvalidArgument(StrCat("decisions must be integers, got an array of ",
                                std::string(py::str(arr.dtype()))));
  }
  auto ints = py::array_t<int64_t, py::array::c_style | py::array::forcecast>(
      np.attr("asarray")(arr, "int64"));
  Decisions d;
  if (ints.ndim() == 0) ThrowInvalidArgument("decisions must be a sequence");
  if (ints.ndim() == 1) {
    d.choices.assign(ints.data(), ints.data() + ints.size());
    return d;
  }
  if (ints.ndim() == 2 && ints.shape(1) == 2) {
    d.indexed = true;
    const int64_t rows = ints.shape(0);
    d.nodes.resize(rows);
    d.operands.resize(rows);
    for (int64_t r = 0; r < rows; ++r) {
      d.nodes[r] = ints.at(r, 0);
      d.operands[r] = ints.at(r, 1);
    }
    return d;
  }
  std::string shape;
  for (py::ssize_t i = 0; i < ints.ndim(); ++i) {
    hlogym::StrAppend(&shape, i == 0 ? "" : ", ", ints.shape(i));
  }
  ThrowInvalidArgument(
      StrCat("decisions must be 1-D (one choice per "
             "alternatives node) or N x 2 (node index, "
             "operand index), got shape (",
             shape, ")"));
}

ApplyStats ApplyDecisionsTo(Env& env, const Decisions& d) {
  if (d.indexed) return ValueOrThrow(env.ApplyIndexed(d.nodes, d.operands));
  return ValueOrThrow(env.Apply(d.choices));
}

// Numpy dtype of the element types numpy has; others decode to float64 or
// int64 element by element.
py::object LiteralToNumpy(const Literal& lit) {
  const hlogym::Shape& shape = lit.shape();
  if (shape.IsTuple()) {
    py::list items;
    for (const Literal& e : lit.tuple_elements())
      items.append(LiteralToNumpy(e));
    return py::tuple(items);
  }
  if (!shape.IsArray() || lit.is_unknown()) return py::none();
  std::vector<py::ssize_t> dims(shape.dimensions().begin(),
                                shape.dimensions().end());
  const char* dtype = nullptr;
  switch (shape.element_type()) {
    case PrimitiveType::kPred:
      dtype = "bool";
      break;
    case PrimitiveType::kS8:
      dtype = "int8";
      break;
    case PrimitiveType::kS16:
      dtype = "int16";
      break;
    case PrimitiveType::kS32:
      dtype = "int32";
      break;
    case PrimitiveType::kS64:
      dtype = "int64";
      break;
    case PrimitiveType::kU8:
      dtype = "uint8";
      break;
    case PrimitiveType::kU16:
      dtype = "uint16";
      break;
    case PrimitiveType::kU32:
      dtype = "uint32";
      break;
    case PrimitiveType::kU64:
      dtype = "uint64";
      break;
    case PrimitiveType::kF16:
      dtype = "float16";
      break;
    case PrimitiveType::kF32:
      dtype = "float32";
      break;
    case PrimitiveType::kF64:
      dtype = "float64";
      break;
    case PrimitiveType::kC64:
      dtype = "complex64";
      break;
    case PrimitiveType::kC128:
      dtype = "complex128";
      break;
    default:
      break;
  }
  const int64_t n = lit.element_count();
  if (dtype != nullptr) {
    py::array out(py::dtype(dtype), dims);
    if (static_cast<size_t>(out.nbytes()) == lit.size_bytes()) {
      std::memcpy(out.mutable_data(), lit.data(), lit.size_bytes());
      return out;
    }
  }
  if (hlogym::IsIntegralType(shape.element_type())) {
    py::array_t<int64_t> out(dims);
    int64_t* p = out.mutable_data();
    for (int64_t i = 0; i < n; ++i) p[i] = lit.GetAsInt64(i);
    return out;
  }
  py::array_t<double> out(dims);
  double* p = out.mutable_data();
  for (int64_t i = 0; i < n; ++i) p[i] = lit.GetAsDouble(i);
  return out;
}

py::dict KernelToDict(const KernelCost& k) {
  py::dict d;
  d["name"] = k.name;
  d["computation"] = k.computation;
  d["opcode"] = std::string(k.opcode);
  d["kind"] = std::string(k.kind);
  d["launches"] = k.launches;
  d["seconds"] = k.seconds;
  d["flops"] = k.flops;
  d["transcendentals"] = k.transcendentals;
  d["bytes"] = k.bytes;
  d["bound"] = std::string(k.bound);
  d["compute_seconds"] = k.compute_seconds;
  d["memory_seconds"] = k.memory_seconds;
  d["launch_seconds"] = k.launch_seconds;
  return d;
}

py::dict EvaluationToDict(const EvaluationResult& r, bool per_kernel) {
  py::dict d;
  d["module"] = r.module;
  d["backend"] = r.backend;
  d["device"] = r.device;
  d["total_seconds"] = r.total_seconds;
  d["kernel_count"] = r.kernel_count;
  d["kernel_launches"] = r.kernel_launches;
  d["flops"] = r.flops;
  d["transcendentals"] = r.transcendentals;
  d["bytes"] = r.bytes_accessed;
  d["flags"] = r.flags;
  if (per_kernel) {
    py::list kernels;
    for (const KernelCost& k : r.kernels) kernels.append(KernelToDict(k));
    d["kernels"] = kernels;
  }
  if (!r.durations_ns.empty()) d["durations_ns"] = r.durations_ns;
  if (!r.outputs.empty()) {
    py::list outputs;
    for (const Literal& l : r.outputs) outputs.append(LiteralToNumpy(l));
    d["outputs"] = outputs;
  }
  return d;
}

// Evaluates `env`, or with `state` the program the state stands for
// (every alternatives node keeping its original, as Env::Seconds prices
// it). `per_kernel` and `seed` need an evaluator of their own; otherwise
// the environment's cached one is used.
EvaluationResult EvaluateEnv(Env& env, const std::string& backend,
                             bool per_kernel, uint64_t seed, bool state) {
  Env* target = &env;
  std::unique_ptr<Env> fork;
  if (state) {
    const size_t n = env.ChoiceCounts().size();
    if (n > 0) {
      fork = env.Fork();
      std::vector<int64_t> zeros(n, 0);
      ThrowIfError(fork->Apply(zeros).status());
      target = fork.get();
    }
  }
  if (!per_kernel && seed == 0) return ValueOrThrow(target->Evaluate(backend));
  const std::string spec = backend.empty() ? env.options().evaluator : backend;
  hlogym::EvaluatorOptions options;
  options.per_kernel = per_kernel;
  options.seed = seed;
  std::unique_ptr<hlogym::Evaluator> ev =
      ValueOrThrow(hlogym::CreateEvaluator(spec, options));
  return ValueOrThrow(ev->Evaluate(target->module()));
}

// A module argument: HLO text when it looks like text (a newline or a
// brace), else a path. os.PathLike objects are paths.
std::shared_ptr<Env> MakeEnv(const py::object& module,
                             const std::string& evaluator, bool verify) {
  EnvOptions options;
  options.evaluator = evaluator;
  options.verify = verify;
  bool is_path = !py::isinstance<py::str>(module);
  std::string s = py::str(py::module_::import("os").attr("fspath")(module));
  if (!is_path) {
    is_path =
        s.find('\n') == std::string::npos && s.find('{') == std::string::npos;
  }
  py::gil_scoped_release release;
  std::unique_ptr<Env> env = is_path ? ValueOrThrow(Env::FromFile(s, options))
                                     : ValueOrThrow(Env::FromText(s, options));
  return std::shared_ptr<Env>(std::move(env));
}

std::string StatsRepr(const ApplyStats& s) {
  return StrCat("ApplyStats(alternatives=", s.alternatives,
                ", non_original=", s.non_original,
                ", removed_instructions=", s.removed_instructions,
                ", removed_fusion_parameters=", s.removed_fusion_parameters,
                ", removed_computations=", s.removed_computations, ")");
}

}  // namespace

void RegisterEnv(py::module_& m) {
  py::class_<ApplyStats>(m, "ApplyStats",
                         "What applying one set of decisions did.")
      .def_readonly("alternatives", &ApplyStats::alternatives,
                    "alternatives nodes decided")
      .def_readonly("non_original", &ApplyStats::non_original,
                    "decisions other than operand 0 (the original)")
      .def_readonly("removed_instructions", &ApplyStats::removed_instructions)
      .def_readonly("removed_fusion_parameters",
                    &ApplyStats::removed_fusion_parameters)
      .def_readonly("removed_computations", &ApplyStats::removed_computations)
      .def("__repr__", &StatsRepr);

  py::class_<StepResult>(m, "StepResult", "What one Env.step() did.")
      .def_readonly("applied", &StepResult::applied)
      .def_readonly("done", &StepResult::done, "the pipeline ran to its end")
      .def_readonly("no_effect", &StepResult::no_effect,
                    "every node kept its original")
      .def("__repr__", [](const StepResult& r) {
        return StrCat("StepResult(done=", r.done ? "True" : "False",
                      ", no_effect=", r.no_effect ? "True" : "False",
                      ", applied=", StatsRepr(r.applied), ")");
      });

  py::class_<Snapshot>(m, "Snapshot",
                       "A saved environment state (Env.save); restore it "
                       "with Env.load, any number of times.")
      .def("hash", [](const Snapshot& s) { return s.env->Hash(); })
      .def("export_text",
           [](const Snapshot& s) {
             py::gil_scoped_release release;
             return s.env->ExportText();
           })
      .def_property_readonly(
          "pipeline_name",
          [](const Snapshot& s) { return s.env->pipeline_name(); })
      .def_property_readonly("paused",
                             [](const Snapshot& s) { return s.env->paused(); })
      .def_property_readonly("done",
                             [](const Snapshot& s) { return s.env->done(); });

  py::class_<Env, std::shared_ptr<Env>> env(m, "Env", R"doc(
An HLO module, the pipeline that rewrites it and the decisions taken at
each pause (HloEnv's environment).

Env(module, evaluator="model:h100", verify=False): `module` is HLO text or a
path to an HLO text file. Not thread-safe: one thread at a time per Env
(long calls release the GIL, so do not share an Env between threads).
)doc");
  env.def(py::init(&MakeEnv), py::arg("module"),
          py::arg("evaluator") = "model:h100", py::arg("verify") = false)
      .def_static(
          "from_file",
          [](const std::string& path, const std::string& evaluator,
             bool verify) {
            EnvOptions o{evaluator, verify};
            py::gil_scoped_release release;
            return std::shared_ptr<Env>(ValueOrThrow(Env::FromFile(path, o)));
          },
          py::arg("path"), py::arg("evaluator") = "model:h100",
          py::arg("verify") = false)
      .def_static(
          "from_text",
          [](const std::string& text, const std::string& evaluator,
             bool verify) {
            EnvOptions o{evaluator, verify};
            py::gil_scoped_release release;
            return std::shared_ptr<Env>(ValueOrThrow(Env::FromText(text, o)));
          },
          py::arg("text"), py::arg("evaluator") = "model:h100",
          py::arg("verify") = false)
      // ---- Module facts.
      .def_property_readonly("name",
                             [](const Env& e) { return e.module().name(); })
      .def_property_readonly(
          "instruction_count",
          [](const Env& e) { return e.module().instruction_count(); })
      .def_property_readonly(
          "computation_count",
          [](const Env& e) { return e.module().computation_count(); })
      .def_property_readonly("evaluator",
                             [](const Env& e) { return e.options().evaluator; })
      .def_property_readonly("verify",
                             [](const Env& e) { return e.options().verify; })
      // ---- Pass control.
      .def(
          "run_pass",
          [](Env& e, const std::string& pass, bool dry) {
            py::gil_scoped_release release;
            return ValueOrThrow(e.RunPass(pass, dry));
          },
          py::arg("name"), py::arg("dry") = false,
          "Runs one registered pass. Returns whether it changed the module "
          "(dry: whether it left alternatives).")
      .def(
          "start_pipeline",
          [](Env& e, const std::string& name,
             std::vector<std::string> disabled) {
            py::gil_scoped_release release;
            return ValueOrThrow(e.StartPipeline(name, std::move(disabled)));
          },
          py::arg("name"), py::arg("disabled") = std::vector<std::string>{},
          "Starts a decision pipeline and runs it to its first pause. "
          "Returns True when it paused, False when it ran to the end.")
      .def(
          "resume",
          [](Env& e) {
            py::gil_scoped_release release;
            return ValueOrThrow(e.Resume());
          },
          "Resumes after apply(); same result as start_pipeline.")
      .def_property_readonly("pipeline_name", &Env::pipeline_name)
      .def_property_readonly("paused", &Env::paused)
      .def_property_readonly("done", &Env::done)
      .def_property_readonly("passes_run", &Env::passes_run)
      .def_property_readonly("steps", &Env::steps)
      // ---- Decisions.
      .def(
          "choice_counts",
          [](const Env& e) { return VectorToNumpy(e.ChoiceCounts()); },
          "Operand count of each alternatives node, in observation order "
          "(int64 array).")
      .def(
          "alternative_names",
          [](const Env& e) {
            std::vector<std::string> names;
            for (const hlogym::Instruction* n : e.AlternativeNodes()) {
              names.push_back(n->name());
            }
            return names;
          },
          "Names of the alternatives nodes, in observation order.")
      .def(
          "apply",
          [](Env& e, const py::object& decisions) {
            Decisions d = ToDecisions(decisions);
            py::gil_scoped_release release;
            return ApplyDecisionsTo(e, d);
          },
          py::arg("decisions"),
          "Applies decisions: one operand index per alternatives node "
          "(1-D), or HloEnv's N x 2 rows (node index in the observation, "
          "operand index). On error nothing changes.")
      .def(
          "step",
          [](Env& e, const py::object& decisions) {
            Decisions d = ToDecisions(decisions);
            if (d.indexed) {
              ThrowInvalidArgument(
                  "step() takes one choice per alternatives node; use "
                  "apply() and resume() for the N x 2 form");
            }
            py::gil_scoped_release release;
            return ValueOrThrow(e.Step(d.choices));
          },
          py::arg("decisions"),
          "apply() then resume(): one MDP step. Refused when not paused.")
      // ---- Measures.
      .def(
          "evaluate",
          [](Env& e, const std::string& backend, bool per_kernel, uint64_t seed,
             bool state) {
            EvaluationResult r;
            {
              py::gil_scoped_release release;
              r = EvaluateEnv(e, backend, per_kernel, seed, state);
            }
            return EvaluationToDict(r, per_kernel);
          },
          py::arg("backend") = "", py::arg("per_kernel") = false,
          py::arg("seed") = 0, py::arg("state") = false,
          R"doc(Evaluates the module; returns a dict (module, backend, device,
total_seconds, kernel_count, kernel_launches, flops, transcendentals, bytes,
flags; `kernels` with per_kernel=True; `outputs` as numpy arrays for the
interpreter). backend: "" (the environment's evaluator, cached), "model:<device>"
or "interpreter". state=True prices the program a paused state stands for
(every alternatives node as its original), as seconds() does.)doc")
      .def(
          "seconds",
          [](Env& e) {
            py::gil_scoped_release release;
            return ValueOrThrow(e.Seconds());
          },
          "Modelled seconds of the program the state stands for.")
      .def("hash", &Env::Hash, "DagHash of the module (uint64).")
      .def(
          "has_equal_output",
          [](const Env& e, const Env& other, uint64_t seed) {
            py::gil_scoped_release release;
            return ValueOrThrow(e.HasEqualOutput(other, seed));
          },
          py::arg("other"), py::arg("seed") = 0,
          "Runs both modules in the interpreter on the same generated inputs "
          "and compares the outputs.")
      .def(
          "compare_outputs",
          [](const Env& e, const Env& other, uint64_t seed) {
            std::string report;
            bool ok;
            {
              py::gil_scoped_release release;
              ok = ValueOrThrow(e.HasEqualOutput(other, seed, &report));
            }
            return py::make_tuple(ok, report);
          },
          py::arg("other"), py::arg("seed") = 0,
          "As has_equal_output, with the comparison report: (equal, text).")
      // ---- State.
      .def(
          "fork",
          [](const Env& e) {
            py::gil_scoped_release release;
            return std::shared_ptr<Env>(e.Fork());
          },
          "A deep copy sharing the evaluator's cache (same thread only).")
      .def(
          "clone",
          [](const Env& e, bool share_evaluator) {
            py::gil_scoped_release release;
            return std::shared_ptr<Env>(e.Clone(share_evaluator));
          },
          py::arg("share_evaluator") = false,
          "A deep copy; without a shared evaluator it may go to another "
          "thread.")
      .def("__copy__",
           [](const Env& e) {
             py::gil_scoped_release release;
             return std::shared_ptr<Env>(e.Fork());
           })
      .def("__deepcopy__",
           [](const Env& e, py::dict) {
             py::gil_scoped_release release;
             return std::shared_ptr<Env>(e.Clone(false));
           })
      .def(
          "save",
          [](const Env& e) {
            py::gil_scoped_release release;
            return Snapshot{e.Save()};
          },
          "A snapshot of the module and pipeline position.")
      .def(
          "load",
          [](Env& e, const Snapshot& s) {
            py::gil_scoped_release release;
            ThrowIfError(e.Load(*s.env));
          },
          py::arg("snapshot"), "Restores a snapshot made by save().")
      .def("export_text",
           [](const Env& e) {
             py::gil_scoped_release release;
             return e.ExportText();
           })
      .def(
          "write_text",
          [](const Env& e, const std::string& path) {
            py::gil_scoped_release release;
            ThrowIfError(e.WriteText(path));
          },
          py::arg("path"))
      .def("__repr__", [](const Env& e) {
        std::string s =
            StrCat("<hlogym.Env module='", e.module().name(),
                   "' instructions=", e.module().instruction_count());
        if (!e.pipeline_name().empty()) {
          hlogym::StrAppend(&s, " pipeline='", e.pipeline_name(), "' ",
                            e.paused() ? "paused" : "done");
        }
        s += ">";
        return s;
      });

  m.def(
      "passes",
      []() {
        py::dict d;
        for (const auto& e : hlogym::PassRegistry::Global().entries()) {
          d[py::str(e.name)] = e.description;
        }
        return d;
      },
      "Registered passes: {name: description}, sorted by name.");
  m.def(
      "pipelines",
      []() {
        py::dict d;
        for (const auto& p : hlogym::NamedPipelines()) {
          d[py::str(p.name)] = p.description;
        }
        return d;
      },
      "Named pipelines: {name: description}.");
  m.def(
      "decision_pipelines",
      []() {
        // A pass may share its name with a named pipeline (general-fusion):
        // the name means the pipeline, listed once.
        std::vector<std::string> names;
        for (std::string& n : hlogym::DecisionPipelineNames()) {
          if (std::find(names.begin(), names.end(), n) == names.end()) {
            names.push_back(std::move(n));
          }
        }
        return names;
      },
      "Names Env.start_pipeline accepts, once each: the named pipelines, "
      "then one per registered pass.");
  m.def("devices", &hlogym::BuiltinDeviceNames,
        "Built-in device names of the model evaluator (model:<device>).");
}

}  // namespace hlogym_python
