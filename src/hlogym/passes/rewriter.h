// The one rewrite API every pass mutates graphs through.
//
// In apply mode each operation changes the module at once. In dry mode the
// same calls leave the graph untouched: new instructions are built off to
// the side (detached), and each replacement is recorded as an opportunity.
// Finish() then turns the opportunities into `alternatives` instructions,
// one per (original instruction, use) pair, with the original as operand 0
// and the candidates after it (ordered by unique id). Candidates that would
// create a cycle are rejected and counted.
#ifndef HLOGYM_PASSES_REWRITER_H_
#define HLOGYM_PASSES_REWRITER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlogym/ir/module.h"

namespace hlogym {

enum class RewriteMode : uint8_t { kApply, kDry };

// XLA's HasSideEffect: the instruction's own effect, or that of an
// instruction in a computation it calls (transitively). An unused while
// whose body sends data must stay.
bool HasSideEffectDeep(const Instruction& inst);

// What one dry run produced.
struct AugmentStats {
  int64_t opportunities = 0;  // recorded (original, use, candidate) triples
  int64_t alternatives = 0;   // alternatives instructions created
  int64_t candidates = 0;  // candidate operands kept (not counting originals)
  int64_t rejected_cyclic = 0;  // candidates dropped: they would close a cycle
  AugmentStats& operator+=(const AugmentStats& o) {
    opportunities += o.opportunities;
    alternatives += o.alternatives;
    candidates += o.candidates;
    rejected_cyclic += o.rejected_cyclic;
    return *this;
  }
};

class Rewriter {
 public:
  Rewriter(Module* module, RewriteMode mode);
  ~Rewriter();
  Rewriter(const Rewriter&) = delete;
  Rewriter& operator=(const Rewriter&) = delete;

  Module* module() const { return module_; }
  RewriteMode mode() const { return mode_; }
  bool dry() const { return mode_ == RewriteMode::kDry; }
  // Dry mode, and the pass and the module both allow it: fusion operations
  // attach a pending body to each candidate instead of building its fused
  // computation (see FuseInstructions). The pass sets it when it never
  // reads its own candidates' bodies; the module's owner when it builds the
  // chosen ones before anything reads them (Module::defer_fusion_bodies).
  bool defer_fusion_bodies() const {
    return defer_fusion_bodies_ && dry() && module_->defer_fusion_bodies();
  }
  void set_defer_fusion_bodies(bool on) { defer_fusion_bodies_ = on; }
  // Apply mode: the module changed. Dry mode: an opportunity was recorded.
  bool changed() const { return changed_; }

  // ---- The core operations.

  // Adds a new instruction to `computation`. Dry mode: detached, invisible
  // to the graph until Finish() makes it part of a candidate.
  Instruction* AddInstruction(Computation* computation,
                              std::unique_ptr<Instruction> inst);
  // Adds a helper computation (a reducer, a comparator, a new body). Dry
  // mode: it is held off to the side like new instructions and joins the
  // module at Finish() only if a kept candidate calls it.
  Computation* AddComputation(std::unique_ptr<Computation> computation);

  // Replaces every use of `old` (and its root role) by `replacement`, then
  // removes `old` and the operands that became unused. Returns false, and
  // does nothing, where XLA refuses: `old` has control predecessors.
  // Shapes must be compatible (layouts may differ).
  absl::StatusOr<bool> ReplaceInstruction(Instruction* old,
                                          Instruction* replacement);
  // As ReplaceInstruction but keeps `old` in the graph.
  absl::StatusOr<bool> ReplaceAllUsesWith(Instruction* old,
                                          Instruction* replacement);
  // Replaces the use of `old` by `user` (every operand slot of `user`).
  absl::StatusOr<bool> ReplaceUseWith(Instruction* old, Instruction* user,
                                      Instruction* replacement);
  // Makes `new_root` the root of `computation` (shapes compatible).
  absl::StatusOr<bool> SetRoot(Computation* computation, Instruction* new_root);
  // Removes an instruction without users, then its operands that became
  // unused. Dry mode: nothing happens (the original graph stays intact).
  absl::Status RemoveInstruction(Instruction* inst);

  // Apply mode: true if the instruction with this unique id was removed
  // during this run (visitors skip it; its pointer is dangling).
  bool IsRemoved(int64_t unique_id) const {
    return removed_.contains(unique_id);
  }
  // True for instructions created by this run (detached or not).
  bool IsNew(const Instruction* inst) const {
    return inst->unique_id() >= first_new_id_;
  }
  // Apply mode: true for a computation this run added to the module (a new
  // fusion's body: nothing else calls it).
  bool IsAddedComputation(const Computation* computation) const {
    return added_computations_.contains(computation);
  }
  // HasSideEffectDeep(inst), remembered for the instructions of the graph
  // during a dry run (which leaves them unchanged until Finish): a dry
  // fusion pass tests the same producers and consumers again and again.
  bool HasSideEffectDeepCached(const Instruction& inst);

  // Ends the run. Apply mode: removes unused instructions created by this
  // run. Dry mode: builds the alternatives (see the file comment). Must be
  // called once; the destructor discards an unfinished dry run.
  absl::StatusOr<AugmentStats> Finish();

 private:
  struct UseKey {
    Instruction* original;
    Instruction* user;  // nullptr: the root use
    bool operator==(const UseKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const UseKey& k) {
      return H::combine(std::move(h), k.original, k.user);
    }
  };

  absl::Status Record(Instruction* original, Instruction* user,
                      Instruction* replacement);
  absl::Status CheckReplacement(const Instruction* old,
                                const Instruction* replacement) const;
  absl::Status RemoveWithUnusedOperands(Instruction* inst);
  absl::StatusOr<AugmentStats> Materialize();
  void DiscardDryState();
  absl::Status RemoveUncalledAddedComputations();

  Module* module_;
  RewriteMode mode_;
  bool changed_ = false;
  bool finished_ = false;
  bool defer_fusion_bodies_ = false;
  int64_t first_new_id_;
  absl::flat_hash_set<int64_t> removed_;
  // Apply mode: fused computations of removed fusions (dropped at Finish
  // when nothing calls them any more).
  absl::flat_hash_set<const Computation*> orphan_candidates_;
  // Dry mode.
  absl::flat_hash_set<const Computation*> original_computations_;
  // Computations this run added to the module (apply mode, or kept at a dry
  // run's Finish); a set, so membership is cheap to ask.
  absl::flat_hash_set<const Computation*> added_computations_;
  absl::flat_hash_map<const Instruction*, bool> side_effects_;
  std::vector<std::unique_ptr<Computation>> pending_computations_;
  std::vector<Computation*> computations_with_detached_;
  // Each recorded rewrite of a use, in recording order, repeats included:
  // a dry fusion pass records tens of thousands, and one vector sorted at
  // Materialize costs less than a map of small vectors.
  struct Opportunity {
    UseKey key;
    Instruction* replacement;
    bool detached;  // the replacement was a detached candidate
  };
  std::vector<Opportunity> opportunities_;
  // Detached instruction -> the (original, use) entries it is a candidate
  // of, indexed from `opportunities_` only when a candidate is rewritten
  // (rare): the first `candidates_indexed_` records are in it.
  absl::flat_hash_map<Instruction*, std::vector<UseKey>> candidate_of_;
  size_t candidates_indexed_ = 0;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_REWRITER_H_
