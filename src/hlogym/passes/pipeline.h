// Pipelines: ordered, nestable lists of passes with fixpoint loops, and a
// resumable runner that pauses at dry passes for decisions.
#ifndef HLOGYM_PASSES_PIPELINE_H_
#define HLOGYM_PASSES_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

class Pipeline : public Pass {
 public:
  // "Until unchanged" loops stop after this many iterations (as HloEnv).
  static constexpr int64_t kUntilUnchanged = 25;
  // Loops also stop repeating once the module outgrew its size at their
  // start (see GrewTooMuch in alternative_graph.h).

  explicit Pipeline(std::string name);
  std::string_view name() const override { return name_; }
  // Runs every enabled entry in apply mode (dry flags are ignored; use a
  // PipelineRunner to stop at dry passes). `rw` must be in apply mode.
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;

  // Adds a pass; `dry` passes make a PipelineRunner pause for decisions.
  Pass* AddPass(std::unique_ptr<Pass> pass, bool dry = false);
  // Adds a registered pass by name.
  absl::StatusOr<Pass*> AddPass(std::string_view registered_name,
                                bool dry = false);
  Pipeline* AddPipeline(std::string name);

  // 1: run once; n: repeat while anything changed, at most n times.
  void set_max_iterations(int64_t n) { max_iterations_ = n < 1 ? 1 : n; }
  int64_t max_iterations() const { return max_iterations_; }
  // Runs the verifier after every pass (on by default in debug builds and
  // in tests); a failure names the pass that broke the module.
  void set_verify(bool v) { verify_ = v; }
  bool verify() const { return verify_; }

  // Control by name, for pass-analysis experiments. A name matches every
  // entry (at any depth) whose pass or pipeline has that name; an unknown
  // name is an error that lists the known ones.
  absl::Status SetEnabled(std::string_view name, bool enabled);
  absl::Status SetDry(std::string_view name, bool dry);
  // Moves the first entry called `name` right before the entry called
  // `before` (both in the same pipeline).
  absl::Status MoveBefore(std::string_view name, std::string_view before);
  // Applies `f` to every pass at any depth (rules, options).
  void ForEachPass(const std::function<void(Pass*)>& f);

  // One line per entry, indented by depth: "name [dry] [disabled] (xN)".
  std::string Describe() const;

  struct Entry {
    std::unique_ptr<Pass> pass;
    bool dry = false;
    bool enabled = true;
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  friend class PipelineRunner;
  bool Visit(const std::function<bool(Entry&)>& f);
  void DescribeTo(int depth, std::string* out) const;

  std::string name_;
  std::vector<Entry> entries_;
  int64_t max_iterations_ = 1;
  bool verify_;
};

// Runs a pipeline step by step: Run() proceeds until a dry pass has left
// alternatives in the module (kPaused) or the pipeline ends (kDone). The
// caller applies decisions (ApplyDecisions) and calls Run() again, which
// resumes after the dry pass. Loops count a dry pass as a change when the
// decisions changed the module's DagHash (or, with reported decisions,
// when ApplyStats::changed says so).
class PipelineRunner {
 public:
  enum class State { kPaused, kDone };
  PipelineRunner(Pipeline* pipeline, Module* module);
  // The same position in the same pipeline, over another module (a copy of
  // this runner's module: forks of an environment).
  PipelineRunner(const PipelineRunner& other, Module* module);
  // The same position over another module and another instance of the
  // same pipeline (built the same way): forks that must not share pass
  // objects, e.g. across threads. Fails if the structures differ.
  static absl::StatusOr<std::unique_ptr<PipelineRunner>> Remap(
      const PipelineRunner& other, Module* module, Pipeline* pipeline);

  absl::StatusOr<State> Run();
  // Owners that apply decisions through ApplyDecisions and hand the stats
  // to ReportApplied() before resuming spare the runner hashing the module
  // around each dry pass (it learns from ApplyStats::changed whether the
  // decisions changed the graph). Without a report a resumed dry pass
  // counts as a change.
  void set_decisions_reported(bool on) { decisions_reported_ = on; }
  void ReportApplied(const ApplyStats& stats) {
    reported_change_ = stats.changed;
  }
  // While on, the run never pauses: every decision keeps its originals,
  // and the run ends where a caller deciding so would end it. A dry pass
  // is mostly skipped, as if it had offered nothing: it changes the module
  // only through its candidates, which keeping every original prunes (up
  // to names and unique ids). Where fusions have unused parameters, which
  // that pruning would drop, the pass runs and is decided here. Saves the
  // dry runs of a state that is only priced.
  void set_keep_originals(bool on) { keep_originals_ = on; }
  // Dry passes decided that way so far (skipped, or run and decided).
  int64_t dry_passes_kept() const { return dry_passes_kept_; }
  bool done() const { return frames_.empty() && started_; }
  // The dry pass that paused the run, and what it offered.
  std::string_view paused_at() const { return paused_at_; }
  const AugmentStats& last_augment() const { return last_augment_; }
  bool paused() const { return paused_; }
  // Passes run so far (dry runs included).
  int64_t passes_run() const { return passes_run_; }
  // Loops that stopped repeating because the module grew too much (see
  // GrewTooMuch).
  int64_t growth_stops() const { return growth_stops_; }
  // A hash of where the run stands: the entry each nested pipeline is at
  // and its change flags (not the iteration counts). Two runs over equal
  // modules with equal positions go on alike (up to the iteration caps).
  uint64_t PositionHash() const;
  // While paused: the DagHash of the module just before the dry pass that
  // paused the run, when the run knew it without hashing (decision loops
  // hash at each iteration's start); nullopt otherwise. The paused module
  // is that module plus the pass's candidates, so together with
  // PositionHash() it identifies the paused state without hashing the
  // candidates (or building their pending bodies).
  std::optional<uint64_t> hash_before_pause() const {
    return paused_ ? hash_before_pause_ : std::nullopt;
  }

 private:
  struct Frame {
    Pipeline* pipeline;
    size_t next = 0;
    int64_t iteration = 0;
    bool changed_this_iteration = false;
    bool changed = false;
    int64_t start_size = 0;  // module instructions when the loop started
    // Decision loops (a dry pass among the entries): the DagHash when the
    // current iteration started. A round of decisions, CSE and DCE can end
    // where it began (one use takes one overlapping fusion, another use the
    // other, and pruning undoes both); the loop then stops, as nothing
    // changed.
    std::optional<uint64_t> start_hash;
    bool decision_loop = false;
  };
  Pipeline* pipeline_;
  Module* module_;
  std::vector<Frame> frames_;
  bool started_ = false;
  bool paused_ = false;
  uint64_t hash_before_dry_ = 0;
  std::optional<uint64_t> hash_before_pause_;
  bool decisions_reported_ = false;
  std::optional<bool> reported_change_;
  std::string paused_at_;
  AugmentStats last_augment_;
  int64_t passes_run_ = 0;
  int64_t growth_stops_ = 0;
  bool keep_originals_ = false;
  int64_t dry_passes_kept_ = 0;

  void PushFrame(Pipeline* p) {
    frames_.push_back({p});
    frames_.back().start_size = module_->instruction_count();
    for (const Pipeline::Entry& e : p->entries_) {
      frames_.back().decision_loop |= e.dry && e.enabled;
    }
    frames_.back().decision_loop &= p->max_iterations_ > 1;
  }
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_PIPELINE_H_
