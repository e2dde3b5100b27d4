// The environment: one module, the pipeline that rewrites it, and the
// decisions an agent makes at each pause (HloEnv's MDP).
//
// A decision pipeline (`general-fusion`, `single-fusion`,
// `algebraic-simplifier`, ...) runs its passes until a dry pass leaves
// `alternatives` nodes; the agent then picks one operand per node (operand
// 0 keeps the original), Step() applies the picks, prunes, and runs on to
// the next pause or the end. Every misuse is a Status, never an abort.
#ifndef HLOGYM_ENV_ENV_H_
#define HLOGYM_ENV_ENV_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/cost/evaluator.h"
#include "hlogym/ir/module.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/pipeline.h"

namespace hlogym {

struct EnvOptions {
  // The backend of Evaluate() and of the agents' rewards.
  std::string evaluator = "model:h100";
  // Run the verifier after every pass (slower).
  bool verify = false;
};

// Decision pipelines: the named pipelines whose dry passes pause (see
// pipelines.h), plus one per registered pass: `<pass>` runs the pass dry,
// then CSE and DCE, until it offers nothing (HloEnv's AltPipeline around
// one pass). `xla-gpu` and the other pipelines without dry passes run to
// the end at once.
std::vector<std::string> DecisionPipelineNames();
absl::StatusOr<std::unique_ptr<Pipeline>> BuildDecisionPipeline(
    std::string_view name);

// What one Step() did.
struct StepResult {
  ApplyStats applied;
  bool done = false;  // the pipeline ran to its end
  // The graph did not change (every node kept its original, or the picks
  // were undone by the passes that followed).
  bool no_effect = false;
};

class Env {
 public:
  static absl::StatusOr<std::unique_ptr<Env>> FromFile(const std::string& path,
                                                       EnvOptions options = {});
  static absl::StatusOr<std::unique_ptr<Env>> FromText(std::string_view text,
                                                       EnvOptions options = {});
  static absl::StatusOr<std::unique_ptr<Env>> FromModule(
      std::unique_ptr<Module> module, EnvOptions options = {});
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // The module, with every fusion candidate's body built (a paused dry
  // pass may have left them pending; see passes/fusion_ops.h).
  const Module& module() const {
    BuildPendingBodies().IgnoreError();  // kept for the next status
    return *module_;
  }
  // Direct access for passes run by hand; decisions made through it are
  // the caller's to keep consistent. Edits through a pointer kept from an
  // earlier call must be followed by another call (it drops the cached
  // list of alternatives nodes).
  Module* mutable_module() {
    BuildPendingBodies().IgnoreError();  // kept for the next status
    Changed();
    return module_.get();
  }
  const EnvOptions& options() const { return options_; }

  // ---- Pass control.
  // Runs one registered pass. Apply mode returns whether it changed the
  // module; `dry` leaves its alternatives and returns whether there are
  // any. Refused while a pipeline is paused at a decision.
  absl::StatusOr<bool> RunPass(std::string_view pass, bool dry = false);
  // Starts a decision pipeline (see DecisionPipelineNames) and runs it to
  // its first pause. Returns true when it paused with alternatives, false
  // when it ran to the end. `disabled` switches passes off by name.
  absl::StatusOr<bool> StartPipeline(std::string_view name,
                                     std::vector<std::string> disabled = {});
  // Resumes after decisions were applied with Apply() (HloEnv's second
  // run() call). Same result as StartPipeline.
  absl::StatusOr<bool> Resume();
  // The pipeline started last, "" when none.
  const std::string& pipeline_name() const { return pipeline_name_; }
  bool paused() const { return paused_; }
  // A pipeline was started and ran to its end.
  bool done() const { return started_ && !paused_; }
  // Passes run and pauses so far in this pipeline.
  int64_t passes_run() const;
  int64_t steps() const { return steps_; }

  // ---- Decisions.
  // The alternatives nodes, in observation order (HloEnv's
  // alternative_indices order). Cached until the module changes.
  const std::vector<Instruction*>& AlternativeNodes() const;
  // Operand count of each alternatives node (the choices per node).
  std::vector<int64_t> ChoiceCounts() const;
  // decisions[j] picks an operand of node j. On error nothing changes.
  absl::StatusOr<ApplyStats> Apply(std::span<const int64_t> decisions);
  // HloEnv's form: rows (node index in the observation, operand index),
  // one row per alternatives node, in any order.
  absl::StatusOr<ApplyStats> ApplyIndexed(
      std::span<const int64_t> node_indices,
      std::span<const int64_t> operand_indices);
  // Apply() then Resume(): one MDP step. Refused when not paused.
  absl::StatusOr<StepResult> Step(std::span<const int64_t> decisions);
  // Step(decisions), then every later decision keeps its originals, and
  // the modelled seconds of where the state ends: StopSeconds() of the
  // state Step() leads to, without the dry runs that pricing a paused
  // state repeats and prunes (a rollout's last step). The environment is
  // then done. `reached_decision`, when given, tells whether the rest of
  // the pipeline reached a dry pass; if not, Step() would have ended the
  // pipeline too.
  absl::StatusOr<double> StepThenStop(std::span<const int64_t> decisions,
                                      bool* reached_decision = nullptr);

  // ---- Measures.
  // With the environment's evaluator (cached across calls and forks), or
  // with another backend spec ("model:a100-40gb", "interpreter").
  absl::StatusOr<EvaluationResult> Evaluate(std::string_view backend = "");
  // Modelled seconds with the environment's evaluator, of the program the
  // state stands for: while paused, every alternatives node counts as its
  // original (Evaluate() would price the candidates too).
  absl::StatusOr<double> Seconds();
  // Modelled seconds of the program this state ends in if every remaining
  // decision keeps its originals: the rest of the pipeline runs (fusion
  // stages after the decision loop, clean-ups). The value search agents
  // compare, since a finished state has had those passes too. Equals
  // Seconds() when not paused.
  absl::StatusOr<double> StopSeconds();
  // StopSeconds() worked out on this environment itself, which is left
  // where that state ends (done): for a fork made only to be priced.
  absl::StatusOr<double> StopInPlace();
  // The DagHash of the module.
  uint64_t Hash() const;
  // The DagHash combined with the pipeline position: equal keys mean equal
  // futures. Search agents deduplicate states by it (a module can come
  // back unchanged at a later pause of the same pipeline). A state paused
  // in a decision loop is keyed by the DagHash of the module its dry pass
  // started from (the loop knows it): the candidates follow from that
  // module, so they are neither hashed nor built for the key, and modules
  // equal up to instruction order key alike even where the candidates'
  // parameter order differs.
  uint64_t StateKey() const;
  // Runs both modules in the interpreter on the same generated inputs
  // (`seed`) and compares every output buffer with the default
  // tolerances. `report`, when given, receives the comparison text.
  absl::StatusOr<bool> HasEqualOutput(const Env& other, uint64_t seed = 0,
                                      std::string* report = nullptr) const;
  static absl::StatusOr<bool> HasEqualOutput(const Module& a, const Module& b,
                                             uint64_t seed = 0,
                                             std::string* report = nullptr);

  // ---- State.
  // A deep copy: the module and the pipeline position. The two share the
  // pipeline description and the evaluator's cache (not thread-safe: use
  // Clone() with `share_evaluator` false across threads).
  std::unique_ptr<Env> Fork() const;
  std::unique_ptr<Env> Clone(bool share_evaluator = false) const;
  // A deep copy that shares nothing with this environment: its own
  // pipeline instance (passes keep state while they run) and evaluator.
  // For work on another thread.
  absl::StatusOr<std::unique_ptr<Env>> ForkIndependent() const;
  // A deep copy of this state that uses the pipeline instance and the
  // evaluator of `resources`, an environment started on the same pipeline
  // (typically a ForkIndependent() of this one's start). Lets each worker
  // thread reuse its own passes and evaluator cache for many forks.
  absl::StatusOr<std::unique_ptr<Env>> ForkSharing(const Env& resources) const;
  // Switches this environment to the pipeline instance and evaluator of
  // `resources` (as ForkSharing gives them); its state stays. Lets a fork
  // made on one thread run on another.
  absl::Status UseResourcesOf(const Env& resources);
  // HloEnv's clone_hlo / load_hlo: a snapshot of the module (and pipeline
  // position) that Load() restores, any number of times.
  std::shared_ptr<const Env> Save() const;
  absl::Status Load(const Env& snapshot);
  std::string ExportText() const;
  absl::Status WriteText(const std::string& path) const;

 private:
  Env(std::unique_ptr<Module> module, EnvOptions options);
  absl::Status EnsureEvaluator();
  absl::StatusOr<std::unique_ptr<Pipeline>> BuildPipeline(
      std::string_view name, const std::vector<std::string>& disabled) const;
  absl::StatusOr<bool> RunToPause();
  // The error of deciding when not paused (Step, StepThenStop).
  absl::Status CheckPaused() const;
  void CopyStateFrom(const Env& other, bool share_evaluator);
  // Every change of the module goes through here.
  void Changed() { alternatives_known_ = false; }
  // Builds the bodies still pending. Logically const: the module stands
  // for the same graph before and after. A failure (an internal error: the
  // plans are checked against the built bodies) is kept for the next call
  // that returns a status.
  absl::Status BuildPendingBodies() const;

  std::unique_ptr<Module> module_;
  EnvOptions options_;
  std::string pipeline_name_;
  std::vector<std::string> disabled_;  // passes disabled at StartPipeline
  std::shared_ptr<Pipeline> pipeline_;
  std::unique_ptr<PipelineRunner> runner_;
  bool started_ = false;
  bool paused_ = false;
  int64_t steps_ = 0;
  std::shared_ptr<Evaluator> evaluator_;
  // AlternativeNodes(), valid while alternatives_known_ (ordering them
  // walks the whole graph; agents ask for them several times per step).
  mutable std::vector<Instruction*> alternatives_;
  mutable bool alternatives_known_ = false;
  // Dry runs started here let fusion candidates' bodies wait until they
  // are chosen (Apply builds those) or read: set while such a run's
  // alternatives are undecided.
  mutable bool bodies_pending_ = false;
  mutable absl::Status pending_status_;
};

}  // namespace hlogym

#endif  // HLOGYM_ENV_ENV_H_
