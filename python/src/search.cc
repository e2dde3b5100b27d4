// Bindings of the search agents, with Python priors (f-MCTS) and progress
// callbacks.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "hlogym/env/env.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/search/agent.h"
#include "hlogym/search/fmcts.h"
#include "hlogym/search/optimize.h"

namespace hlogym_python {
namespace {

using hlogym::AgentOptions;
using hlogym::Env;
using hlogym::PolicyValue;
using hlogym::StrCat;

// A read-only view of a state the agent passes to a prior. It is valid only
// during the call (the agent owns the state); fork() keeps a copy.
struct EnvView {
  const Env* env = nullptr;
  std::shared_ptr<bool> valid;

  const Env& get() const {
    if (!*valid) {
      throw StatusError(absl::FailedPreconditionError(
          "this EnvView was passed to a prior and is only valid during that "
          "call; use fork() to keep the state"));
    }
    return *env;
  }
};

struct PySearchResult {
  std::shared_ptr<Env> best;
  double best_seconds = 0;
  std::vector<std::vector<int64_t>> trajectory;
  int64_t evaluations = 0;
  int64_t states_visited = 0;
  double search_seconds = 0;
  bool timed_out = false;
  int64_t threads = 1;
  py::object stats = py::none();  // f-MCTS: its statistics as a dict
};

// FmctsStats as a dict: the `fmcts` object of `hlogym optimize --json`.
py::object FmctsStatsDict(const hlogym::FmctsStats& f) {
  return py::module_::import("json").attr("loads")(hlogym::FmctsStatsJson(f));
}

// Python objects held by callbacks that agents may copy on any thread: the
// copies share this holder, whose last release takes the GIL.
std::shared_ptr<py::object> Hold(py::object o) {
  return std::shared_ptr<py::object>(new py::object(std::move(o)),
                                     [](py::object* p) {
                                       py::gil_scoped_acquire gil;
                                       delete p;
                                     });
}

// The first Python exception a callback raised; re-raised after the search.
struct CallbackErrors {
  std::optional<py::error_already_set> error;
};

absl::StatusOr<PolicyValue> ParsePrior(const py::object& out,
                                       const std::vector<int64_t>& counts) {
  if (!py::isinstance<py::sequence>(out) || py::len(out) != 2) {
    return absl::InvalidArgumentError(
        "the prior must return (priors, value): a sequence of per-node "
        "weights and a float");
  }
  py::sequence pair = out.cast<py::sequence>();
  py::object priors = pair[0];
  PolicyValue pv;
  try {
    pv.value = pair[1].cast<double>();
  } catch (const py::cast_error&) {
    return absl::InvalidArgumentError(
        StrCat("the prior's value must be a float, got ",
               std::string(py::str(py::type::of(pair[1])))));
  }
  if (!py::isinstance<py::sequence>(priors) &&
      !py::isinstance<py::array>(priors)) {
    return absl::InvalidArgumentError(
        "the prior's priors must be a sequence with one array per "
        "alternatives node");
  }
  const size_t n = py::len(priors);
  if (n != counts.size()) {
    return absl::InvalidArgumentError(StrCat(
        "the prior returned weights for ", n, " nodes but the state has ",
        counts.size(), " alternatives nodes"));
  }
  py::module_ np = py::module_::import("numpy");
  pv.priors.resize(n);
  for (size_t j = 0; j < n; ++j) {
    auto w = py::array_t<double, py::array::c_style | py::array::forcecast>(
        np.attr("asarray")(priors[py::int_(j)], "float64"));
    if (w.ndim() != 1 || w.size() != counts[j]) {
      return absl::InvalidArgumentError(
          StrCat("the prior's weights for node ", j, " have ", w.size(),
                 " entries but the node has ", counts[j], " choices"));
    }
    pv.priors[j].assign(w.data(), w.data() + w.size());
  }
  return pv;
}

hlogym::PolicyValueFn WrapPrior(py::object fn,
                                std::shared_ptr<CallbackErrors> errors) {
  std::shared_ptr<py::object> held = Hold(std::move(fn));
  return [held, errors](const Env& env) -> absl::StatusOr<PolicyValue> {
    py::gil_scoped_acquire gil;
    if (errors->error.has_value()) {
      return absl::CancelledError("an earlier prior call raised");
    }
    auto valid = std::make_shared<bool>(true);
    try {
      py::object out = (*held)(EnvView{&env, valid});
      *valid = false;
      return ParsePrior(out, env.ChoiceCounts());
    } catch (py::error_already_set& e) {
      *valid = false;
      errors->error = e;
      return absl::InternalError(StrCat("the prior raised ", e.what()));
    } catch (const std::exception& e) {
      // Nothing may unwind through the agent.
      *valid = false;
      return absl::InternalError(StrCat("the prior failed: ", e.what()));
    }
  };
}

std::function<void(const hlogym::SearchProgress&)> WrapProgress(
    py::object fn, std::shared_ptr<CallbackErrors> errors) {
  std::shared_ptr<py::object> held = Hold(std::move(fn));
  return [held, errors](const hlogym::SearchProgress& p) {
    py::gil_scoped_acquire gil;
    if (errors->error.has_value()) return;
    try {
      py::dict d;
      d["evaluations"] = p.evaluations;
      d["elapsed_seconds"] = p.elapsed_seconds;
      d["best_seconds"] = p.best_seconds;
      d["steps"] = p.steps;
      (*held)(d);
    } catch (py::error_already_set& e) {
      errors->error = e;
    } catch (const std::exception&) {
      // Progress reports are best effort; nothing may unwind through the
      // agent.
    }
  };
}

PySearchResult Search(const Env& env, const std::string& agent_name,
                      AgentOptions options, const py::object& prior,
                      const py::object& progress) {
  auto errors = std::make_shared<CallbackErrors>();
  if (!prior.is_none()) {
    if (!PyCallable_Check(prior.ptr())) {
      throw py::type_error(
          "prior must be callable: prior(state) -> "
          "(priors, value)");
    }
    options.prior = WrapPrior(prior, errors);
  }
  if (!progress.is_none()) {
    if (!PyCallable_Check(progress.ptr())) {
      throw py::type_error("progress must be callable: progress(dict)");
    }
    options.progress = WrapProgress(progress, errors);
  }
  std::unique_ptr<hlogym::Agent> agent =
      ValueOrThrow(hlogym::CreateAgent(agent_name, std::move(options)));
  std::optional<absl::StatusOr<hlogym::SearchResult>> result;
  {
    py::gil_scoped_release release;
    result.emplace(agent->Search(env));
  }
  py::object stats = py::none();
  if (const auto* f = dynamic_cast<const hlogym::FmctsAgent*>(agent.get())) {
    stats = FmctsStatsDict(f->stats());
  }
  agent.reset();
  if (errors->error.has_value()) throw *errors->error;
  hlogym::SearchResult r = ValueOrThrow(std::move(*result));
  PySearchResult out;
  out.best = std::shared_ptr<Env>(std::move(r.best));
  out.best_seconds = r.best_seconds;
  out.trajectory = std::move(r.trajectory);
  out.evaluations = r.evaluations;
  out.states_visited = r.states_visited;
  out.search_seconds = r.search_seconds;
  out.timed_out = r.timed_out;
  out.threads = r.threads;
  out.stats = std::move(stats);
  return out;
}

}  // namespace

void RegisterSearch(py::module_& m) {
  py::class_<EnvView>(m, "EnvView", R"doc(
A read-only view of a search state, passed to priors. Valid only during the
call; fork() returns an independent Env.)doc")
      .def(
          "observation",
          [](const EnvView& v, const std::string& numbering,
             bool hloenv_out_tensor_sizes) {
            return BuildObservationOf(v.get().module(), numbering,
                                      hloenv_out_tensor_sizes);
          },
          py::arg("numbering") = "hlogym",
          py::arg("hloenv_out_tensor_sizes") = false)
      .def(
          "summary",
          [](const EnvView& v, const std::string& numbering) {
            return SummaryOf(v.get().module(), numbering);
          },
          py::arg("numbering") = "hlogym")
      .def("choice_counts",
           [](const EnvView& v) {
             return VectorToNumpy(v.get().ChoiceCounts());
           })
      .def("alternative_names",
           [](const EnvView& v) {
             std::vector<std::string> names;
             for (const hlogym::Instruction* n : v.get().AlternativeNodes()) {
               names.push_back(n->name());
             }
             return names;
           })
      .def("hash", [](const EnvView& v) { return v.get().Hash(); })
      .def("export_text", [](const EnvView& v) { return v.get().ExportText(); })
      .def("fork",
           [](const EnvView& v) {
             // Not sharing the evaluator: the agent may use it meanwhile.
             return std::shared_ptr<Env>(v.get().Clone(false));
           })
      .def_property_readonly(
          "name", [](const EnvView& v) { return v.get().module().name(); })
      .def_property_readonly(
          "instruction_count",
          [](const EnvView& v) { return v.get().module().instruction_count(); })
      .def_property_readonly(
          "pipeline_name",
          [](const EnvView& v) { return v.get().pipeline_name(); })
      .def_property_readonly("paused",
                             [](const EnvView& v) { return v.get().paused(); })
      .def_property_readonly("done",
                             [](const EnvView& v) { return v.get().done(); })
      .def_property_readonly("steps",
                             [](const EnvView& v) { return v.get().steps(); })
      .def_property_readonly("valid",
                             [](const EnvView& v) { return *v.valid; });

  py::class_<PySearchResult>(m, "SearchResult")
      .def_readonly("best", &PySearchResult::best,
                    "the best end state (an Env, pipeline done)")
      .def_readonly("best_seconds", &PySearchResult::best_seconds)
      .def_readonly("trajectory", &PySearchResult::trajectory,
                    "the decisions of each step from the start to best")
      .def_readonly("evaluations", &PySearchResult::evaluations)
      .def_readonly("states_visited", &PySearchResult::states_visited)
      .def_readonly("search_seconds", &PySearchResult::search_seconds)
      .def_readonly("timed_out", &PySearchResult::timed_out)
      .def_readonly("threads", &PySearchResult::threads,
                    "threads the search ran on")
      .def_readonly("stats", &PySearchResult::stats,
                    "f-MCTS: its own statistics (commits, "
                    "simulations_per_commit, rollouts, rollout_steps, "
                    "prior_calls, tree_states, merged_edges, "
                    "committed_seconds, commit_returns, commit_cycles); "
                    "None for the other agents")
      .def("__repr__", [](const PySearchResult& r) {
        return StrCat("SearchResult(best_seconds=", r.best_seconds,
                      ", steps=", r.trajectory.size(),
                      ", evaluations=", r.evaluations,
                      ", states_visited=", r.states_visited,
                      ", search_seconds=", r.search_seconds,
                      ", timed_out=", r.timed_out ? "True" : "False", ")");
      });

  const AgentOptions d;
  m.def(
      "search",
      [](const Env& env, const std::string& agent, int64_t budget,
         uint64_t seed, double time_limit, const py::object& prior,
         const py::object& progress, int64_t beam_alpha, bool beam_exhaustive,
         double mcts_c1, double mcts_c2, double mcts_gamma,
         int64_t mcts_min_budget, int64_t mcts_rollouts,
         int64_t mcts_rollout_length, int64_t threads) {
        AgentOptions o;
        o.seed = seed;
        o.budget = budget;
        o.time_limit_seconds = time_limit;
        o.beam_alpha = beam_alpha;
        o.beam_exhaustive = beam_exhaustive;
        o.mcts_c1 = mcts_c1;
        o.mcts_c2 = mcts_c2;
        o.mcts_gamma = mcts_gamma;
        o.mcts_min_budget = mcts_min_budget;
        o.mcts_rollouts = mcts_rollouts;
        o.mcts_rollout_length = mcts_rollout_length;
        o.threads = threads;
        return Search(env, agent, std::move(o), prior, progress);
      },
      py::arg("env"), py::arg("agent") = "fmcts", py::arg("budget") = d.budget,
      py::arg("seed") = d.seed, py::arg("time_limit") = d.time_limit_seconds,
      py::arg("prior") = py::none(), py::arg("progress") = py::none(),
      py::arg("beam_alpha") = d.beam_alpha,
      py::arg("beam_exhaustive") = d.beam_exhaustive,
      py::arg("mcts_c1") = d.mcts_c1, py::arg("mcts_c2") = d.mcts_c2,
      py::arg("mcts_gamma") = d.mcts_gamma,
      py::arg("mcts_min_budget") = d.mcts_min_budget,
      py::arg("mcts_rollouts") = d.mcts_rollouts,
      py::arg("mcts_rollout_length") = d.mcts_rollout_length,
      py::arg("threads") = d.threads,
      R"doc(Runs a search agent from `env` (paused at a decision or done; it is
not changed) and returns a SearchResult.

agent: one of agents(). budget: evaluations (0: the agent's default).
time_limit: seconds (0: none). prior (f-MCTS): a callable taking an EnvView
and returning (priors, value): priors has one array of non-negative weights per
alternatives node (choice_counts(); normalised by the agent), value is the
expected modelled seconds still to gain from that state (scaled like the
rewards, by the start state's time). progress: a callable taking a dict
(evaluations, elapsed_seconds, best_seconds, steps). An exception raised by
either callback stops the search and is re-raised here. threads (f-MCTS):
threads running rollouts (0: every core; 1 with a prior); results do not
depend on it. The GIL is released while searching.)doc");
  m.def("agents", &hlogym::AgentNames, "Names search() accepts.");
}

}  // namespace hlogym_python
