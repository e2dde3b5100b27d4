// A computation: a DAG of instructions with parameters and a root.
#ifndef HLOGYM_IR_COMPUTATION_H_
#define HLOGYM_IR_COMPUTATION_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlogym/ir/instruction.h"

namespace hlogym {

class Module;

class Computation {
 public:
  explicit Computation(std::string name);
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;
  ~Computation();

  const std::string& name() const { return name_; }
  void set_name(std::string name) {
    name_ = std::move(name);
    ++version_;
  }
  Module* parent() const { return parent_; }

  // Takes ownership. Gives the instruction a module-unique id (if the
  // computation belongs to a module) and keeps text order. Parameters are
  // registered by parameter_number.
  Instruction* AddInstruction(std::unique_ptr<Instruction> inst);
  // Dry mode: takes ownership of an instruction built off to the side. It
  // gets an id and its parent but is not part of the graph: instructions(),
  // post-orders, clones and the printer do not see it, and its operands do
  // not list it as a user (Instruction::Detach).
  Instruction* AddDetachedInstruction(std::unique_ptr<Instruction> inst);
  // Moves a detached instruction into the graph (appended in text order).
  absl::Status AttachInstruction(Instruction* inst);
  // Deletes every detached instruction still held. Returns how many.
  int64_t DiscardDetachedInstructions();
  // Visits the detached instructions.
  template <typename F>
  void ForEachDetachedInstruction(F&& f) const {
    for (const auto& d : detached_) f(d.get());
  }
  // Attaches the detached instructions `keep` accepts, in unique-id order,
  // and deletes the others (DiscardDetachedInstructions): AttachInstruction
  // for each kept one without its per-call bookkeeping (a dry run over a
  // whole graph attaches tens of thousands). The kept ones' detached
  // operands must be kept too.
  template <typename Keep>
  void AttachDetachedIf(Keep&& keep) {
    std::vector<std::unique_ptr<Instruction>> kept;
    for (auto& d : detached_) {
      if (keep(d.get())) kept.push_back(std::move(d));
    }
    std::erase(detached_, nullptr);
    DiscardDetachedInstructions();
    AttachInOrder(std::move(kept));
  }
  int64_t detached_instruction_count() const {
    return static_cast<int64_t>(detached_.size());
  }

  // Removes an instruction without users (its operand edges and control
  // edges are dropped). Not allowed on the root or on parameters.
  absl::Status RemoveInstruction(Instruction* inst);
  // Takes `inst` (not a parameter, not detached) out of this computation
  // and hands it over, edges untouched, to be added to another computation
  // (AddInstruction keeps its unique id). The caller rewires its operands
  // and users. Releasing the root leaves the computation without one.
  absl::StatusOr<std::unique_ptr<Instruction>> ReleaseInstruction(
      Instruction* inst);
  // Removes `inst` and then every operand that became unused and has no
  // side effect, recursively.
  absl::Status RemoveInstructionAndUnusedOperands(Instruction* inst);
  // Removes parameter `number` (it must be unused); later parameters are
  // renumbered down by one. For fused computations, together with the
  // fusion's operand (Instruction::RemoveOperandAt).
  absl::Status RemoveUnusedParameter(int64_t number);
  // Removes every instruction not reachable from the root (through operands
  // and control edges), keeping parameters and side-effecting ones.
  // Returns the number removed.
  int64_t RemoveDeadInstructions();

  Instruction* root_instruction() const { return root_; }
  void set_root_instruction(Instruction* root) {
    root_ = root;
    ++version_;
  }

  int64_t num_parameters() const {
    return static_cast<int64_t>(parameters_.size());
  }
  Instruction* parameter_instruction(int64_t i) const { return parameters_[i]; }
  const std::vector<Instruction*>& parameter_instructions() const {
    return parameters_;
  }

  // Live instructions in insertion (text) order.
  std::vector<Instruction*> instructions() const;
  template <typename F>
  void ForEachInstruction(F&& f) const {
    for (const auto& p : slots_) {
      if (p) f(p.get());
    }
  }
  int64_t instruction_count() const { return live_count_; }

  // Operands before users; instructions unreachable from the root come in
  // text order relative to the rest. Control predecessors come first too.
  // Kept until version() changes: passes in a row (and dry runs, which
  // build a reachability index over the same order) ask for it repeatedly.
  // Not thread-safe (it uses the instructions' scratch slots, and leaves
  // them set only when it walks the graph).
  std::vector<Instruction*> MakeInstructionPostOrder() const;
  // The same order without the copy: the kept order itself, valid until
  // the computation changes (read it before changing anything).
  const std::vector<Instruction*>& InstructionPostOrder() const;

  // Finds an instruction by name (linear scan; for tools and tests).
  Instruction* FindInstruction(std::string_view name) const;

  // Fusion computations are called by a fusion instruction; the printer and
  // hashing treat them as part of their caller.
  bool IsFusionComputation() const { return is_fusion_computation_; }
  void set_is_fusion_computation(bool v) {
    is_fusion_computation_ = v;
    ++version_;
  }
  // The computation the parser builds for `op-start` shorthand (an async
  // op wrapping one instruction); printed inline as that shorthand.
  bool IsAsyncWrapper() const { return is_async_wrapper_; }
  void set_is_async_wrapper(bool v) {
    is_async_wrapper_ = v;
    ++version_;
  }
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) {
    execution_thread_ = std::move(t);
    ++version_;
  }

  // Deep copy, not yet in any module. Called computations still point at
  // the originals; Module::Clone remaps them.
  std::unique_ptr<Computation> Clone() const;

  // Scratch slot for algorithms (not part of the value; not thread-safe).
  mutable int64_t scratch = 0;

  // Changes with every change of the computation or of one of its
  // instructions (membership, root, edges, shapes, attributes, callees,
  // names): what an analysis derives from the content stays valid while the
  // version it read is unchanged. Each computation counts on its own, so a
  // version means nothing outside its computation.
  uint64_t version() const { return version_; }

  // DagHash's memo of this computation's hash: valid while version() equals
  // `version` and each recorded callee (every computation an instruction
  // calls, in call order) still hashes to the value recorded with it.
  // Written by DagHash (not thread-safe, like scratch); copied by Clone,
  // with Module::Clone pointing the callees at the clones.
  struct HashMemo {
    static constexpr uint64_t kInvalid = ~uint64_t{0};
    uint64_t version = kInvalid;
    uint64_t hash = 0;
    std::vector<std::pair<const Computation*, uint64_t>> callees;
  };
  HashMemo& hash_memo() const { return hash_memo_; }

  // Passes' memo that they found nothing to do here. Valid while version()
  // equals the version it was recorded at and so does every computation
  // called from here, directly or not (each recorded after a computation
  // that calls it: checking them in order only reads computations that are
  // still called, hence alive). Each pass owns one bit (`kPassMemo...` in
  // passes/pass.h). Not thread-safe, like scratch; copied by Clone while
  // valid, with Module::Clone pointing the callees at the clones.
  bool PassMemoHolds(uint32_t pass_bit) const {
    return (pass_memo_.passes & pass_bit) != 0 && PassMemoValid();
  }
  // Records that the pass owning `pass_bit` found nothing to do in the
  // current content (other passes' bits stay if the memo was valid).
  void RecordPassMemo(uint32_t pass_bit) const;

 private:
  friend class Module;
  friend class Instruction;

  void CompactIfSparse();
  // Attaches `kept` (detached instructions) in unique-id order.
  void AttachInOrder(std::vector<std::unique_ptr<Instruction>> kept);

  std::string name_;
  std::string execution_thread_;
  Module* parent_ = nullptr;
  Instruction* root_ = nullptr;
  bool is_fusion_computation_ = false;
  bool is_async_wrapper_ = false;
  std::vector<std::unique_ptr<Instruction>> slots_;  // nullptr = removed
  std::vector<std::unique_ptr<Instruction>> detached_;
  int64_t live_count_ = 0;
  std::vector<Instruction*> parameters_;
  uint64_t version_ = 0;
  mutable HashMemo hash_memo_;
  struct PassMemo {
    uint64_t version = HashMemo::kInvalid;
    uint32_t passes = 0;
    std::vector<std::pair<const Computation*, uint64_t>> callees;
  };
  bool PassMemoValid() const;
  mutable PassMemo pass_memo_;
  struct PostOrderMemo {
    uint64_t version = HashMemo::kInvalid;
    std::vector<Instruction*> order;
  };
  mutable PostOrderMemo post_order_memo_;
};

// Answers "is `to` reachable from `from` through operand/control edges?"
// for one computation. Built once in O(n); each query is a DFS pruned by
// post-order position, so queries between distant nodes stay cheap on
// 100k-instruction graphs. Invalidated by any mutation of the computation.
class ReachabilityIndex {
 public:
  explicit ReachabilityIndex(const Computation& computation);
  // True if `to` depends (transitively) on `from`, or from == to.
  bool IsReachable(const Instruction* from, const Instruction* to) const;
  // True if any of `to` depends (transitively) on `from`, or is `from`:
  // one search for all of them, so the region between is walked once.
  bool ReachesAny(const Instruction* from,
                  std::span<const Instruction* const> to) const;
  // Position in a topological post-order.
  int64_t Position(const Instruction* inst) const;

  // Dependencies among a set of instructions, for many queries within one
  // set (the readers of a widely shared value): one sweep over the
  // positions between them, carrying a bit per member, answers every pair
  // at once. Reaches(i, j) is IsReachable(nodes[i], nodes[j]).
  class Matrix {
   public:
    bool Reaches(size_t from, size_t to) const {
      return (rows_[to * words_ + from / 64] >> (from % 64)) & 1;
    }

   private:
    friend class ReachabilityIndex;
    size_t words_ = 0;
    std::vector<uint64_t> rows_;  // row j: the members nodes[j] depends on
  };
  Matrix Among(std::span<const Instruction* const> nodes) const;
  // Words of scratch Among(nodes) would use (positions between the nodes
  // times words per member): callers fall back to single queries when the
  // set is small or this is too large.
  int64_t AmongCost(std::span<const Instruction* const> nodes) const;
  // Instructions the searches of IsReachable and ReachesAny have visited so
  // far: callers compare it with AmongCost to pick the cheaper way.
  int64_t SearchWork() const { return work_; }

 private:
  // Positions are 32-bit: the searches read these arrays at random, so
  // their size is what the cache holds.
  std::vector<int32_t> position_by_slot_;
  std::vector<int32_t> low_;  // by position; see the constructor
  // Positions of the dependencies of the instruction at position p:
  // edges_[edge_start_[p] .. edge_start_[p + 1]).
  std::vector<int32_t> edge_start_;
  std::vector<int32_t> edges_;
  mutable std::vector<uint32_t> visited_;
  mutable uint32_t generation_ = 0;
  mutable std::vector<int32_t> stack_;
  mutable int64_t work_ = 0;
  const Computation* computation_;
};

}  // namespace hlogym

#endif  // HLOGYM_IR_COMPUTATION_H_
