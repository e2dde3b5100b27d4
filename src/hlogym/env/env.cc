#include "hlogym/env/env.h"

#include <algorithm>
#include <fstream>
#include <utility>

#include "absl/hash/hash.h"
#include "hlogym/eval/compare.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/fusion_ops.h"
#include "hlogym/passes/pipelines.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

bool HasDryPass(const Pipeline& p) {
  for (const Pipeline::Entry& e : p.entries()) {
    if (e.dry && e.enabled) return true;
    if (auto* sub = dynamic_cast<const Pipeline*>(e.pass.get())) {
      if (HasDryPass(*sub)) return true;
    }
  }
  return false;
}

bool Contains(const Pipeline& p, std::string_view pass) {
  for (const Pipeline::Entry& e : p.entries()) {
    if (e.pass->name() == pass) return true;
    if (auto* sub = dynamic_cast<const Pipeline*>(e.pass.get())) {
      if (Contains(*sub, pass)) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> DecisionPipelineNames() {
  std::vector<std::string> names;
  for (const NamedPipelineInfo& p : NamedPipelines()) names.push_back(p.name);
  for (const PassRegistry::Entry& e : PassRegistry::Global().entries()) {
    // general-fusion is both a pipeline and a pass: the pipeline wins.
    if (std::find(names.begin(), names.end(), e.name) == names.end()) {
      names.push_back(e.name);
    }
  }
  return names;
}

absl::StatusOr<std::unique_ptr<Pipeline>> BuildDecisionPipeline(
    std::string_view name) {
  for (const NamedPipelineInfo& p : NamedPipelines()) {
    if (p.name == name) return BuildNamedPipeline(name);
  }
  if (!PassRegistry::Global().Contains(name)) {
    std::string known;
    for (const NamedPipelineInfo& p : NamedPipelines()) {
      StrAppend(&known, known.empty() ? "" : ", ", p.name);
    }
    return absl::NotFoundError(
        StrCat("unknown pipeline or pass '", name, "' (pipelines: ", known,
               "; or any pass of `hlogym passes`, run dry inside xla-gpu)"));
  }
  // The pass decides inside the baseline pipeline: every occurrence of it
  // in xla-gpu turns dry, so the rest of the pipeline (fusion included)
  // runs as the baseline's does. A pass that xla-gpu lacks runs as a dry
  // loop with CSE and DCE before it.
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Pipeline> base,
                          BuildNamedPipeline("xla-gpu"));
  if (Contains(*base, name)) {
    HLOGYM_RETURN_IF_ERROR(base->SetDry(name, true));
    return base;
  }
  auto root = std::make_unique<Pipeline>(std::string(name));
  Pipeline* loop = root->AddPipeline(StrCat(name, "-loop"));
  loop->set_max_iterations(kMaxDecisionRounds);
  HLOGYM_RETURN_IF_ERROR(loop->AddPass(name, /*dry=*/true).status());
  HLOGYM_RETURN_IF_ERROR(loop->AddPass("hlo-cse").status());
  HLOGYM_RETURN_IF_ERROR(loop->AddPass("hlo-dce").status());
  root->AddPass(std::move(base));
  return root;
}

Env::Env(std::unique_ptr<Module> module, EnvOptions options)
    : module_(std::move(module)), options_(std::move(options)) {}

Env::~Env() = default;

absl::StatusOr<std::unique_ptr<Env>> Env::FromModule(
    std::unique_ptr<Module> module, EnvOptions options) {
  if (module == nullptr || module->entry_computation() == nullptr) {
    return absl::InvalidArgumentError("the module has no entry computation");
  }
  HLOGYM_RETURN_IF_ERROR(VerifyModule(*module));
  auto env = std::unique_ptr<Env>(new Env(std::move(module), options));
  HLOGYM_RETURN_IF_ERROR(env->EnsureEvaluator());
  return env;
}

absl::StatusOr<std::unique_ptr<Env>> Env::FromText(std::string_view text,
                                                   EnvOptions options) {
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Module> m, ParseModule(text));
  return FromModule(std::move(m), std::move(options));
}

absl::StatusOr<std::unique_ptr<Env>> Env::FromFile(const std::string& path,
                                                   EnvOptions options) {
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Module> m, ParseModuleFile(path));
  return FromModule(std::move(m), std::move(options));
}

absl::Status Env::EnsureEvaluator() {
  if (evaluator_ != nullptr) return absl::OkStatus();
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> e,
                          CreateEvaluator(options_.evaluator));
  evaluator_ = std::move(e);
  return absl::OkStatus();
}

absl::Status Env::BuildPendingBodies() const {
  if (bodies_pending_) {
    bodies_pending_ = false;
    if (absl::Status s = BuildPendingFusionBodies(module_.get()); !s.ok()) {
      pending_status_ = s;
    }
  }
  return pending_status_;
}

absl::StatusOr<bool> Env::RunPass(std::string_view pass, bool dry) {
  if (paused_) {
    return absl::FailedPreconditionError(
        StrCat("pipeline '", pipeline_name_,
               "' is paused at a decision: apply decisions first"));
  }
  if (!dry && HasAlternativeNodes(*module_)) {
    return absl::FailedPreconditionError(
        "the module has alternatives nodes: apply decisions before running "
        "a pass");
  }
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Pass> p,
                          PassRegistry::Global().Create(pass));
  HLOGYM_RETURN_IF_ERROR(BuildPendingBodies());
  Changed();
  if (dry) {
    DeferFusionBodies defer(module_.get());
    HLOGYM_ASSIGN_OR_RETURN(AugmentStats s, p->RunDry(module_.get()));
    bodies_pending_ = s.alternatives > 0;
    return bodies_pending_;
  }
  HLOGYM_ASSIGN_OR_RETURN(bool changed, p->Run(module_.get()));
  if (options_.verify) HLOGYM_RETURN_IF_ERROR(VerifyModule(*module_));
  return changed;
}

absl::StatusOr<bool> Env::StartPipeline(std::string_view name,
                                        std::vector<std::string> disabled) {
  if (paused_) {
    return absl::FailedPreconditionError(
        StrCat("pipeline '", pipeline_name_,
               "' is paused at a decision: apply decisions first"));
  }
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Pipeline> p,
                          BuildPipeline(name, disabled));
  pipeline_ = std::move(p);
  pipeline_name_ = std::string(name);
  disabled_ = std::move(disabled);
  runner_ = std::make_unique<PipelineRunner>(pipeline_.get(), module_.get());
  runner_->set_decisions_reported(true);  // Apply() reports
  Changed();
  started_ = true;
  paused_ = false;
  steps_ = 0;
  return RunToPause();
}

absl::StatusOr<std::unique_ptr<Pipeline>> Env::BuildPipeline(
    std::string_view name, const std::vector<std::string>& disabled) const {
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Pipeline> p,
                          BuildDecisionPipeline(name));
  for (const std::string& d : disabled) {
    HLOGYM_RETURN_IF_ERROR(p->SetEnabled(d, false));
  }
  p->ForEachPass([&](Pass* pass) {
    if (auto* sub = dynamic_cast<Pipeline*>(pass)) {
      sub->set_verify(options_.verify);
    }
  });
  p->set_verify(options_.verify);
  return p;
}

absl::StatusOr<bool> Env::RunToPause() {
  Changed();
  DeferFusionBodies defer(module_.get());
  HLOGYM_ASSIGN_OR_RETURN(PipelineRunner::State s, runner_->Run());
  paused_ = s == PipelineRunner::State::kPaused;
  bodies_pending_ = paused_;
  return paused_;
}

absl::StatusOr<bool> Env::Resume() {
  if (runner_ == nullptr) {
    return absl::FailedPreconditionError("no pipeline was started");
  }
  if (!paused_) return false;
  return RunToPause();
}

int64_t Env::passes_run() const {
  return runner_ == nullptr ? 0 : runner_->passes_run();
}

const std::vector<Instruction*>& Env::AlternativeNodes() const {
  if (!alternatives_known_) {
    alternatives_ = ::hlogym::AlternativeNodes(*module_);
    alternatives_known_ = true;
  }
  return alternatives_;
}

std::vector<int64_t> Env::ChoiceCounts() const {
  std::vector<int64_t> counts;
  for (const Instruction* n : AlternativeNodes()) {
    counts.push_back(n->operand_count());
  }
  return counts;
}

absl::StatusOr<ApplyStats> Env::Apply(std::span<const int64_t> decisions) {
  HLOGYM_RETURN_IF_ERROR(pending_status_);
  // ApplyDecisions builds the bodies of the candidates that survive.
  HLOGYM_ASSIGN_OR_RETURN(ApplyStats s, ApplyDecisions(module_.get(), decisions,
                                                       AlternativeNodes()));
  bodies_pending_ = false;
  Changed();
  if (runner_ != nullptr) runner_->ReportApplied(s);
  if (options_.verify) HLOGYM_RETURN_IF_ERROR(VerifyModule(*module_));
  return s;
}

absl::StatusOr<ApplyStats> Env::ApplyIndexed(
    std::span<const int64_t> node_indices,
    std::span<const int64_t> operand_indices) {
  if (node_indices.size() != operand_indices.size()) {
    return absl::InvalidArgumentError(
        StrCat("decisions: ", node_indices.size(), " node indices but ",
               operand_indices.size(), " operand indices"));
  }
  // Node indices are positions in the observation, which shows the bodies.
  HLOGYM_RETURN_IF_ERROR(BuildPendingBodies());
  std::vector<Instruction*> order = ObservationOrder(*module_);
  const std::vector<Instruction*>& nodes = AlternativeNodes();
  absl::flat_hash_map<const Instruction*, int64_t> slot;
  for (size_t j = 0; j < nodes.size(); ++j) slot[nodes[j]] = j;
  std::vector<int64_t> decisions(nodes.size(), -1);
  for (size_t r = 0; r < node_indices.size(); ++r) {
    const int64_t idx = node_indices[r];
    if (idx < 0 || idx >= static_cast<int64_t>(order.size())) {
      return absl::InvalidArgumentError(
          StrCat("decision row ", r, ": node index ", idx,
                 " is out of range (the graph has ", order.size(), " nodes)"));
    }
    auto it = slot.find(order[idx]);
    if (it == slot.end()) {
      return absl::InvalidArgumentError(StrCat(
          "decision row ", r, ": node ", idx, " ('", order[idx]->name(), "', ",
          OpcodeName(order[idx]->opcode()), ") is not an alternatives node"));
    }
    if (decisions[it->second] != -1) {
      return absl::InvalidArgumentError(
          StrCat("decision row ", r, ": node ", idx, " is decided twice"));
    }
    decisions[it->second] = operand_indices[r];
  }
  for (size_t j = 0; j < nodes.size(); ++j) {
    if (decisions[j] == -1) {
      return absl::InvalidArgumentError(
          StrCat("no decision for alternatives node '", nodes[j]->name(), "' (",
                 node_indices.size(), " rows for ", nodes.size(), " nodes)"));
    }
  }
  return Apply(decisions);
}

absl::Status Env::CheckPaused() const {
  if (paused_) return absl::OkStatus();
  return absl::FailedPreconditionError(
      runner_ == nullptr ? "no pipeline was started: nothing to decide"
                         : "the pipeline is done: nothing to decide");
}

absl::StatusOr<StepResult> Env::Step(std::span<const int64_t> decisions) {
  HLOGYM_RETURN_IF_ERROR(CheckPaused());
  StepResult r;
  HLOGYM_ASSIGN_OR_RETURN(r.applied, Apply(decisions));
  r.no_effect = r.applied.non_original == 0;
  HLOGYM_ASSIGN_OR_RETURN(bool paused, RunToPause());
  r.done = !paused;
  ++steps_;
  return r;
}

absl::StatusOr<double> Env::StepThenStop(std::span<const int64_t> decisions,
                                         bool* reached_decision) {
  HLOGYM_RETURN_IF_ERROR(CheckPaused());
  HLOGYM_RETURN_IF_ERROR(Apply(decisions).status());
  const int64_t kept = runner_->dry_passes_kept();
  runner_->set_keep_originals(true);
  absl::StatusOr<bool> paused = RunToPause();
  runner_->set_keep_originals(false);
  HLOGYM_RETURN_IF_ERROR(paused.status());
  ++steps_;
  if (*paused) {
    return absl::InternalError(
        StrCat("pipeline '", pipeline_name_,
               "' paused while every original was kept"));
  }
  if (reached_decision != nullptr) {
    *reached_decision = runner_->dry_passes_kept() > kept;
  }
  return Seconds();
}

absl::StatusOr<EvaluationResult> Env::Evaluate(std::string_view backend) {
  HLOGYM_RETURN_IF_ERROR(BuildPendingBodies());
  if (backend.empty() || backend == options_.evaluator) {
    HLOGYM_RETURN_IF_ERROR(EnsureEvaluator());
    return evaluator_->Evaluate(*module_);
  }
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> e,
                          CreateEvaluator(backend));
  return e->Evaluate(*module_);
}

absl::StatusOr<double> Env::Seconds() {
  HLOGYM_RETURN_IF_ERROR(EnsureEvaluator());
  std::vector<int64_t> zeros(AlternativeNodes().size(), 0);
  if (zeros.empty()) {
    HLOGYM_ASSIGN_OR_RETURN(EvaluationResult r, evaluator_->Evaluate(*module_));
    return r.total_seconds;
  }
  // The candidates are not part of the program yet: price the graph the
  // state stands for, every node keeping its original.
  std::unique_ptr<Module> m = module_->Clone();
  HLOGYM_RETURN_IF_ERROR(ApplyDecisions(m.get(), zeros).status());
  HLOGYM_ASSIGN_OR_RETURN(EvaluationResult r, evaluator_->Evaluate(*m));
  return r.total_seconds;
}

absl::StatusOr<double> Env::StopSeconds() {
  if (!paused_) return Seconds();
  // Keep every original from here on: each later pause is decided the same
  // way, and the pipeline runs its remaining passes (horizontal fusion,
  // clean-ups), so paused and finished states are priced alike.
  return Clone(/*share_evaluator=*/true)->StopInPlace();
}

absl::StatusOr<double> Env::StopInPlace() {
  for (int64_t guard = 0; paused_; ++guard) {
    if (guard >= 1000) {
      return absl::InternalError(
          StrCat("pipeline '", pipeline_name_,
                 "' keeps pausing when every original is kept"));
    }
    std::vector<int64_t> zeros(ChoiceCounts().size(), 0);
    HLOGYM_RETURN_IF_ERROR(Step(zeros).status());
  }
  return Seconds();
}

uint64_t Env::Hash() const { return DagHash(module()); }

uint64_t Env::StateKey() const {
  if (runner_ == nullptr) return Hash();
  // A paused state is the module its dry pass started from plus that
  // pass's candidates: the start's hash, when the runner has it, stands
  // for the state without hashing the candidates, whose pending bodies
  // would have to be built for it (and then copied by every fork).
  if (std::optional<uint64_t> before = runner_->hash_before_pause()) {
    return absl::HashOf(*before, runner_->PositionHash(), paused_,
                        std::string_view("before-dry"));
  }
  return absl::HashOf(Hash(), runner_->PositionHash(), paused_);
}

absl::StatusOr<bool> Env::HasEqualOutput(const Module& a, const Module& b,
                                         uint64_t seed, std::string* report) {
  const Computation* ea = a.entry_computation();
  const Computation* eb = b.entry_computation();
  std::vector<Shape> pa = ParameterShapes(*ea);
  std::vector<Shape> pb = ParameterShapes(*eb);
  if (pa.size() != pb.size()) {
    return absl::InvalidArgumentError(
        StrCat("the modules take different parameters (", pa.size(), " vs ",
               pb.size(), ")"));
  }
  for (size_t i = 0; i < pa.size(); ++i) {
    if (!pa[i].Compatible(pb[i])) {
      return absl::InvalidArgumentError(StrCat("parameter ", i,
                                               " differs: ", pa[i].ToString(),
                                               " vs ", pb[i].ToString()));
    }
  }
  HLOGYM_ASSIGN_OR_RETURN(std::vector<Literal> inputs,
                          GenerateInputs(pa, seed));
  Interpreter interp;
  HLOGYM_ASSIGN_OR_RETURN(Literal ra, interp.Run(a, inputs));
  HLOGYM_ASSIGN_OR_RETURN(Literal rb, interp.Run(b, inputs));
  // The reference module's least precise floating type sets the floor of
  // the tolerances (see CompareOptions::computed_in).
  CompareOptions options;
  options.computed_in = LeastPreciseFloatType(b);
  CompareReport c = Compare(ra, rb, options);
  if (report != nullptr) *report = c.ToString();
  return c.ok;
}

absl::StatusOr<bool> Env::HasEqualOutput(const Env& other, uint64_t seed,
                                         std::string* report) const {
  HLOGYM_RETURN_IF_ERROR(BuildPendingBodies());
  HLOGYM_RETURN_IF_ERROR(other.BuildPendingBodies());
  return HasEqualOutput(*module_, *other.module_, seed, report);
}

void Env::CopyStateFrom(const Env& other, bool share_evaluator) {
  Changed();
  module_ = other.module_->Clone();
  options_ = other.options_;
  pipeline_name_ = other.pipeline_name_;
  disabled_ = other.disabled_;
  pipeline_ = other.pipeline_;
  runner_ = other.runner_ == nullptr ? nullptr
                                     : std::make_unique<PipelineRunner>(
                                           *other.runner_, module_.get());
  started_ = other.started_;
  paused_ = other.paused_;
  steps_ = other.steps_;
  bodies_pending_ = other.bodies_pending_;
  pending_status_ = other.pending_status_;
  evaluator_ = share_evaluator ? other.evaluator_ : nullptr;
}

std::unique_ptr<Env> Env::Clone(bool share_evaluator) const {
  auto env = std::unique_ptr<Env>(new Env(nullptr, options_));
  env->CopyStateFrom(*this, share_evaluator);
  if (env->evaluator_ == nullptr) {
    // The spec was valid when this environment was made.
    (void)env->EnsureEvaluator();
  }
  return env;
}

std::unique_ptr<Env> Env::Fork() const { return Clone(true); }

absl::StatusOr<std::unique_ptr<Env>> Env::ForkIndependent() const {
  std::unique_ptr<Env> env = Clone(false);
  if (runner_ != nullptr) {
    HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Pipeline> p,
                            BuildPipeline(pipeline_name_, disabled_));
    env->pipeline_ = std::move(p);
    HLOGYM_ASSIGN_OR_RETURN(env->runner_,
                            PipelineRunner::Remap(*runner_, env->module_.get(),
                                                  env->pipeline_.get()));
  }
  HLOGYM_RETURN_IF_ERROR(env->EnsureEvaluator());
  return env;
}

absl::StatusOr<std::unique_ptr<Env>> Env::ForkSharing(
    const Env& resources) const {
  std::unique_ptr<Env> env = Clone(true);
  HLOGYM_RETURN_IF_ERROR(env->UseResourcesOf(resources));
  return env;
}

absl::Status Env::UseResourcesOf(const Env& resources) {
  if (resources.pipeline_name_ != pipeline_name_ ||
      resources.disabled_ != disabled_ ||
      (runner_ != nullptr && resources.pipeline_ == nullptr)) {
    return absl::InvalidArgumentError(
        StrCat("UseResourcesOf: the resources run pipeline '",
               resources.pipeline_name_, "', this environment '",
               pipeline_name_, "' (with the same disabled passes needed)"));
  }
  if (runner_ != nullptr) {
    HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<PipelineRunner> runner,
                            PipelineRunner::Remap(*runner_, module_.get(),
                                                  resources.pipeline_.get()));
    runner_ = std::move(runner);
    pipeline_ = resources.pipeline_;
  }
  evaluator_ = resources.evaluator_;
  return absl::OkStatus();
}

std::shared_ptr<const Env> Env::Save() const {
  return std::shared_ptr<const Env>(Clone(true).release());
}

absl::Status Env::Load(const Env& snapshot) {
  if (&snapshot == this) return absl::OkStatus();
  CopyStateFrom(snapshot, true);
  return absl::OkStatus();
}

std::string Env::ExportText() const { return PrintModule(module()); }

absl::Status Env::WriteText(const std::string& path) const {
  std::ofstream out(path);
  if (!out) return absl::NotFoundError(StrCat("cannot write '", path, "'"));
  out << ExportText();
  out.close();
  if (!out) return absl::DataLossError(StrCat("writing '", path, "' failed"));
  return absl::OkStatus();
}

}  // namespace hlogym
