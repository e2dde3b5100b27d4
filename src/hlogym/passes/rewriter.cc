#include "hlogym/passes/rewriter.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {

bool HasSideEffectDeep(const Instruction& inst) {
  if (inst.HasSideEffect()) return true;
  if (inst.called_computations().empty()) return false;
  // Iterative over the call graph; each computation is scanned once. The
  // graph below one instruction is usually a fusion body and a region or
  // two, so computations seen are kept in a short list (no allocation),
  // and in a hash set only once there are many.
  absl::InlinedVector<const Computation*, 8> seen;
  absl::flat_hash_set<const Computation*> many;
  absl::InlinedVector<const Computation*, 8> stack;
  auto visit = [&](const Computation* c) {
    if (c == nullptr) return;
    if (many.empty()) {
      if (absl::c_linear_search(seen, c)) return;
      seen.push_back(c);
      if (seen.size() > 32) many.insert(seen.begin(), seen.end());
    } else if (!many.insert(c).second) {
      return;
    }
    stack.push_back(c);
  };
  for (const Computation* c : inst.called_computations()) visit(c);
  bool effect = false;
  while (!stack.empty() && !effect) {
    const Computation* c = stack.back();
    stack.pop_back();
    c->ForEachInstruction([&](const Instruction* i) {
      if (i->HasSideEffect()) effect = true;
      for (const Computation* callee : i->called_computations()) visit(callee);
    });
  }
  return effect;
}

namespace {

// Instructions a cleanup must not delete even when unused.
bool Pinned(const Instruction* i) {
  return HasSideEffectDeep(*i) || !i->control_predecessors().empty();
}

}  // namespace

Rewriter::Rewriter(Module* module, RewriteMode mode)
    : module_(module), mode_(mode) {
  first_new_id_ = module_->NextUniqueId();
  if (dry()) {
    for (const auto& c : module_->computations()) {
      original_computations_.insert(c.get());
    }
  }
}

Rewriter::~Rewriter() {
  if (!finished_ && dry()) DiscardDryState();
}

void Rewriter::DiscardDryState() {
  for (Computation* c : computations_with_detached_) {
    c->DiscardDetachedInstructions();
  }
  computations_with_detached_.clear();
  pending_computations_.clear();
  opportunities_.clear();
  candidate_of_.clear();
  candidates_indexed_ = 0;
}

Instruction* Rewriter::AddInstruction(Computation* computation,
                                      std::unique_ptr<Instruction> inst) {
  if (inst->name().empty()) {
    inst->set_name(module_->UniqueInstructionName(OpcodeName(inst->opcode())));
  }
  if (dry() && original_computations_.contains(computation)) {
    if (computation->detached_instruction_count() == 0) {
      computations_with_detached_.push_back(computation);
    }
    return computation->AddDetachedInstruction(std::move(inst));
  }
  if (!dry()) changed_ = true;
  return computation->AddInstruction(std::move(inst));
}

Computation* Rewriter::AddComputation(std::unique_ptr<Computation> c) {
  c->set_name(module_->UniqueComputationName(c->name()));
  if (dry()) {
    pending_computations_.push_back(std::move(c));
    return pending_computations_.back().get();
  }
  Computation* added = module_->AddComputation(std::move(c), false);
  added_computations_.insert(added);
  return added;
}

absl::Status Rewriter::CheckReplacement(const Instruction* old,
                                        const Instruction* replacement) const {
  if (!old->shape().Compatible(replacement->shape())) {
    return absl::InternalError(
        StrCat("cannot replace '", old->name(), "' (", old->shape().ToString(),
               ") with '", replacement->name(), "' (",
               replacement->shape().ToString(), "): incompatible shapes"));
  }
  if (old->parent() != replacement->parent()) {
    return absl::InternalError(StrCat("cannot replace '", old->name(),
                                      "' with '", replacement->name(),
                                      "' from another computation"));
  }
  return absl::OkStatus();
}

absl::Status Rewriter::Record(Instruction* original, Instruction* user,
                              Instruction* replacement) {
  if (replacement == original) return absl::OkStatus();
  // Repeats are dropped at Materialize.
  opportunities_.push_back(
      {UseKey{original, user}, replacement, replacement->is_detached()});
  changed_ = true;
  return absl::OkStatus();
}

absl::StatusOr<bool> Rewriter::ReplaceAllUsesWith(Instruction* old,
                                                  Instruction* replacement) {
  HLOGYM_RETURN_IF_ERROR(CheckReplacement(old, replacement));
  if (old == replacement) return false;
  if (!old->control_predecessors().empty()) return false;
  if (!dry()) {
    HLOGYM_RETURN_IF_ERROR(old->ReplaceAllUsesWith(replacement));
    changed_ = true;
    return true;
  }
  if (old->is_detached()) {
    // A rewrite of a candidate: the new one becomes a candidate for the
    // same uses (traced back to the original instruction).
    for (; candidates_indexed_ < opportunities_.size(); ++candidates_indexed_) {
      const Opportunity& o = opportunities_[candidates_indexed_];
      if (!o.detached) continue;
      std::vector<UseKey>& of = candidate_of_[o.replacement];
      if (std::find(of.begin(), of.end(), o.key) == of.end()) {
        of.push_back(o.key);
      }
    }
    auto it = candidate_of_.find(old);
    if (it == candidate_of_.end()) return false;
    std::vector<UseKey> keys = it->second;
    for (const UseKey& k : keys) {
      HLOGYM_RETURN_IF_ERROR(Record(k.original, k.user, replacement));
    }
    return !keys.empty();
  }
  bool any = false;
  Computation* c = old->parent();
  if (c->root_instruction() == old) {
    HLOGYM_RETURN_IF_ERROR(Record(old, nullptr, replacement));
    any = true;
  }
  for (Instruction* user : old->users()) {
    if (user == replacement) continue;
    HLOGYM_RETURN_IF_ERROR(Record(old, user, replacement));
    any = true;
  }
  return any;
}

absl::StatusOr<bool> Rewriter::ReplaceInstruction(Instruction* old,
                                                  Instruction* replacement) {
  HLOGYM_ASSIGN_OR_RETURN(bool replaced, ReplaceAllUsesWith(old, replacement));
  if (!replaced || dry()) return replaced;
  // The replacement takes over what `old` did, side effects included (as
  // XLA's ReplaceInstruction); only its operands are kept when pinned.
  if (old->user_count() == 0 && old->parent()->root_instruction() != old &&
      old->control_successors().empty()) {
    HLOGYM_RETURN_IF_ERROR(RemoveWithUnusedOperands(old));
  }
  return true;
}

absl::StatusOr<bool> Rewriter::ReplaceUseWith(Instruction* old,
                                              Instruction* user,
                                              Instruction* replacement) {
  HLOGYM_RETURN_IF_ERROR(CheckReplacement(old, replacement));
  if (old == replacement) return false;
  if (!dry() || old->is_detached()) {
    HLOGYM_RETURN_IF_ERROR(old->ReplaceUseWith(user, replacement));
    changed_ = true;
    return true;
  }
  if (!user->IsUserOf(old)) {
    return absl::InternalError(
        StrCat("'", user->name(), "' is not a user of '", old->name(), "'"));
  }
  HLOGYM_RETURN_IF_ERROR(Record(old, user, replacement));
  return true;
}

absl::StatusOr<bool> Rewriter::SetRoot(Computation* computation,
                                       Instruction* new_root) {
  Instruction* old = computation->root_instruction();
  HLOGYM_RETURN_IF_ERROR(CheckReplacement(old, new_root));
  if (old == new_root) return false;
  if (!dry()) {
    computation->set_root_instruction(new_root);
    changed_ = true;
    return true;
  }
  HLOGYM_RETURN_IF_ERROR(Record(old, nullptr, new_root));
  return true;
}

absl::Status Rewriter::RemoveInstruction(Instruction* inst) {
  if (dry()) return absl::OkStatus();
  return RemoveWithUnusedOperands(inst);
}

absl::Status Rewriter::RemoveWithUnusedOperands(Instruction* inst) {
  Computation* c = inst->parent();
  // Iterative: chains of 100k single-use instructions exist.
  std::vector<Instruction*> stack = {inst};
  absl::flat_hash_set<Instruction*> gone;  // checked before any dereference
  bool first = true;
  while (!stack.empty()) {
    Instruction* i = stack.back();
    stack.pop_back();
    if (gone.contains(i)) continue;
    if (!first && (i->user_count() != 0 || i == c->root_instruction() ||
                   i->opcode() == Opcode::kParameter || Pinned(i) ||
                   !i->control_successors().empty()))
      continue;
    first = false;
    gone.insert(i);
    InstructionVector operands = i->operands();
    int64_t id = i->unique_id();
    if (i->opcode() == Opcode::kFusion && i->fused_computation() != nullptr) {
      orphan_candidates_.insert(i->fused_computation());
    }
    HLOGYM_RETURN_IF_ERROR(c->RemoveInstruction(i));
    removed_.insert(id);
    changed_ = true;
    for (auto it = operands.rbegin(); it != operands.rend(); ++it) {
      if ((*it)->parent() == c) stack.push_back(*it);
    }
  }
  return absl::OkStatus();
}

bool Rewriter::HasSideEffectDeepCached(const Instruction& inst) {
  if (!dry() || finished_ || inst.is_detached() ||
      inst.called_computations().empty()) {
    return HasSideEffectDeep(inst);
  }
  auto [it, inserted] = side_effects_.try_emplace(&inst, false);
  if (inserted) it->second = HasSideEffectDeep(inst);
  return it->second;
}

absl::StatusOr<AugmentStats> Rewriter::Finish() {
  if (finished_) {
    return absl::FailedPreconditionError("Rewriter::Finish called twice");
  }
  finished_ = true;
  side_effects_.clear();
  if (dry()) return Materialize();
  // Apply mode: drop instructions this run created but left unused.
  for (const auto& comp : module_->computations()) {
    Computation* c = comp.get();
    std::vector<std::pair<int64_t, Instruction*>> dead;
    c->ForEachInstruction([&](Instruction* i) {
      if (IsNew(i) && i->user_count() == 0 && i != c->root_instruction() &&
          i->opcode() != Opcode::kParameter && !Pinned(i) &&
          i->control_successors().empty()) {
        dead.push_back({i->unique_id(), i});
      }
    });
    absl::flat_hash_set<Instruction*> gone;
    for (auto [id, d] : dead) {
      if (removed_.contains(id)) continue;
      // Only new instructions: their operands that become unused are new
      // too or were used before (and so still are).
      std::vector<Instruction*> stack = {d};
      while (!stack.empty()) {
        Instruction* i = stack.back();
        stack.pop_back();
        if (gone.contains(i)) continue;
        if (removed_.contains(i->unique_id()) || !IsNew(i) ||
            i->user_count() != 0 || i == c->root_instruction() ||
            i->opcode() == Opcode::kParameter || Pinned(i)) {
          continue;
        }
        InstructionVector operands = i->operands();
        removed_.insert(i->unique_id());
        gone.insert(i);
        HLOGYM_RETURN_IF_ERROR(c->RemoveInstruction(i));
        for (Instruction* op : operands) stack.push_back(op);
      }
    }
  }
  HLOGYM_RETURN_IF_ERROR(RemoveUncalledAddedComputations());
  module_->RemoveComputationsIfUncalled(orphan_candidates_);
  return AugmentStats{};
}

absl::Status Rewriter::RemoveUncalledAddedComputations() {
  // Only computations this run added: uncalled ones the input already had
  // are part of its value.
  module_->RemoveComputationsIfUncalled(added_computations_);
  added_computations_.clear();
  return absl::OkStatus();
}

namespace {

// A topological order of one computation kept valid while edges are added,
// for the cycle check of the alternatives. Every edge the check adds runs
// from a candidate to an original user. Adding an edge that already points
// forward costs nothing. For a backward edge from -> to, two searches
// bounded by the two positions run in lockstep: back from `from` and on
// from `to`. Either reaching the other end means a cycle (the edge is
// refused). Otherwise the first to finish has found a set closed within
// the window: `from`'s ancestors move, in their order, to just before
// `to`, or `to`'s descendants to just after `from`. That keeps the order
// valid, and a step costs at most twice the smaller set. The order is a
// linked list with sparse labels (an order-maintenance list), so a move
// relabels only the moved nodes. Alternatives nodes inserted during the
// check have no place of their own: each sits right before its single
// user and moves with it (the searches pass through them).
class DynamicTopologicalOrder {
 public:
  // Instruction::scratch holds each instruction's index for the checker's
  // lifetime. The initial order puts instructions this run created
  // (`is_new`) as early as their operands allow and the originals as late
  // as their users allow: then most added edges already point forward.
  // The searches run on index arrays only (the graph's edges, read once,
  // and the edges added since): reading instructions scattered over the
  // heap is what a check would otherwise spend its time on.
  template <typename IsNew>
  DynamicTopologicalOrder(const Computation& c, IsNew is_new) {
    std::vector<Instruction*> all;
    all.reserve(c.instruction_count());
    c.ForEachInstruction([&](Instruction* i) {
      i->scratch = static_cast<int64_t>(all.size());
      all.push_back(i);
    });
    const int64_t n = static_cast<int64_t>(all.size());
    // The edges as index arrays, read from the instructions once: distinct
    // same-computation operands and control predecessors of each index
    // (control edges are distinct already), and the same edges reversed
    // (users and control successors).
    std::vector<uint8_t> fresh_index(n);
    op_start_.resize(n + 1);
    ops_.reserve(2 * n);
    user_start_.assign(n + 2, 0);
    for (int64_t k = 0; k < n; ++k) {
      op_start_[k] = static_cast<int32_t>(ops_.size());
      const Instruction* i = all[k];
      fresh_index[k] = is_new(i) ? 1 : 0;
      const InstructionVector& operands = i->operands();
      for (size_t x = 0; x < operands.size(); ++x) {
        if (operands[x]->parent() == i->parent() &&
            std::find(operands.begin(), operands.begin() + x, operands[x]) ==
                operands.begin() + x) {
          ops_.push_back(static_cast<int32_t>(operands[x]->scratch));
        }
      }
      for (const Instruction* o : i->control_predecessors()) {
        ops_.push_back(static_cast<int32_t>(o->scratch));
      }
    }
    op_start_[n] = static_cast<int32_t>(ops_.size());
    for (int32_t j : ops_) ++user_start_[j + 2];
    for (int64_t k = 2; k < n + 2; ++k) user_start_[k] += user_start_[k - 1];
    users_.resize(ops_.size());
    for (int64_t k = 0; k < n; ++k) {
      for (int32_t e = op_start_[k]; e < op_start_[k + 1]; ++e) {
        users_[user_start_[ops_[e] + 1]++] = static_cast<int32_t>(k);
      }
    }
    user_start_.pop_back();
    // Now users of j are users_[user_start_[j] .. user_start_[j + 1]).
    // Height (longest path to a sink), sinks first (Kahn's algorithm
    // backwards).
    std::vector<int64_t> pending(n, 0), height(n, 0), queue;
    queue.reserve(n);
    for (int64_t k = 0; k < n; ++k) {
      pending[k] = user_start_[k + 1] - user_start_[k];
      if (pending[k] == 0) queue.push_back(k);
    }
    for (size_t q = 0; q < queue.size(); ++q) {
      const int64_t k = queue[q];
      for (int32_t e = op_start_[k]; e < op_start_[k + 1]; ++e) {
        const int64_t j = ops_[e];
        height[j] = std::max(height[j], height[k] + 1);
        if (--pending[j] == 0) queue.push_back(j);
      }
    }
    // Forwards: a new instruction is placed as soon as it is ready; of
    // the ready originals the highest goes first (a bucket queue by
    // height, each bucket a stack threaded through `link`).
    int64_t max_height = 0;
    for (int64_t h : height) max_height = std::max(max_height, h);
    std::vector<int64_t> bucket(max_height + 1, -1), link(n, -1), fresh;
    int64_t top = -1;
    auto make_ready = [&](int64_t k) {
      if (fresh_index[k]) {
        fresh.push_back(k);
        return;
      }
      link[k] = bucket[height[k]];
      bucket[height[k]] = k;
      top = std::max(top, height[k]);
    };
    for (int64_t k = 0; k < n; ++k) {
      pending[k] = op_start_[k + 1] - op_start_[k];
      if (pending[k] == 0) make_ready(k);
    }
    // The order as a list over the indices (they stay the instructions'
    // indices: nothing is renumbered).
    prev_.assign(n, -1);
    next_.assign(n, -1);
    head_ = -1;
    int64_t last = -1;
    while (true) {
      int64_t k;
      if (!fresh.empty()) {
        k = fresh.back();
        fresh.pop_back();
      } else {
        while (top >= 0 && bucket[top] < 0) --top;
        if (top < 0) break;
        k = bucket[top];
        bucket[top] = link[k];
      }
      if (last >= 0) {
        next_[last] = k;
      } else {
        head_ = k;
      }
      prev_[k] = last;
      last = k;
      for (int32_t e = user_start_[k]; e < user_start_[k + 1]; ++e) {
        if (--pending[users_[e]] == 0) make_ready(users_[e]);
      }
    }
    // The graph is acyclic here (alternatives nodes, the only source of
    // cycles, are added through the check), so every instruction was
    // placed.
    label_.resize(n);
    Relabel();
    added_forward_.assign(n, -1);
    added_back_.assign(n, -1);
    back_.visited.assign(n, 0);
    on_.visited.assign(n, 0);
  }

  // Records that `from` now precedes `to`, unless `from` depends on `to`
  // (the edge would close a cycle): then returns false and changes
  // nothing. Both are instructions of the computation the order was built
  // on; an accepted edge joins the graph the later checks search.
  bool AddEdgeUnlessCycle(const Instruction* from_inst,
                          const Instruction* to_inst) {
    if (from_inst == to_inst) return false;
    const int32_t from = static_cast<int32_t>(from_inst->scratch);
    const int32_t to = static_cast<int32_t>(to_inst->scratch);
    if (!WouldKeepOrder(from, to)) return false;
    AddEdge(from, to);
    return true;
  }

 private:
  // Past every label (Relabel uses labels below 2^62).
  static constexpr uint64_t kEnd = uint64_t{1} << 63;

  bool WouldKeepOrder(int32_t from, int32_t to) {
    const uint64_t lo = label_[to], hi = label_[from];
    if (hi < lo) return true;
    // A path to -> from lies entirely in the window [lo, hi]. Two searches
    // run in lockstep: back from `from` (its ancestors in the window) and
    // on from `to` (its descendants there). Either reaching the other end
    // is a cycle. The first to finish has found a set closed within the
    // window; it moves (ancestors to just before `to`, descendants to just
    // after `from`), so a step costs twice the smaller set at most.
    ++epoch_;
    lo_ = lo;
    hi_ = hi;
    for (Search* s : {&back_, &on_}) {
      s->stack.clear();
      s->found.clear();
    }
    Push(back_, from);
    Push(on_, to);
    while (true) {
      if (back_.stack.empty()) {
        MoveBefore(back_.found, to);
        return true;
      }
      if (Step(back_, to, /*forward=*/false)) return false;
      if (on_.stack.empty()) {
        MoveAfter(on_.found, from);
        return true;
      }
      if (Step(on_, from, /*forward=*/true)) return false;
    }
  }

  // The edges added after construction, as linked lists per node through
  // one pool (a few thousand in a whole-graph dry run).
  void AddEdge(int32_t from, int32_t to) {
    added_.push_back({to, added_forward_[from]});
    added_forward_[from] = static_cast<int32_t>(added_.size() - 1);
    added_.push_back({from, added_back_[to]});
    added_back_[to] = static_cast<int32_t>(added_.size() - 1);
  }

  // Even labels over the whole list (rare: a gap runs out only after
  // dozens of moves into one place).
  void Relabel() {
    const uint64_t m = label_.size();
    const uint64_t step = (uint64_t{1} << 62) / (m + 1);
    uint64_t l = 0;
    int64_t k = m == 0 ? -1 : head_;
    while (k >= 0) {
      label_[k] = l += step;
      k = next_[k];
    }
  }

  void Unlink(int64_t k) {
    if (prev_[k] >= 0) {
      next_[prev_[k]] = next_[k];
    } else {
      head_ = next_[k];
    }
    if (next_[k] >= 0) prev_[next_[k]] = prev_[k];
  }
  // Links `k` after `before` (-1: at the head).
  void LinkAfter(int64_t before, int64_t k) {
    const int64_t after = before >= 0 ? next_[before] : head_;
    prev_[k] = before;
    next_[k] = after;
    if (before >= 0) {
      next_[before] = k;
    } else {
      head_ = k;
    }
    if (after >= 0) prev_[after] = k;
  }

  // One search direction: the nodes to expand and those found.
  struct Search {
    std::vector<int32_t> stack;
    std::vector<int64_t> found;
    std::vector<uint32_t> visited;  // by index: the epoch that saw it
  };

  // Expands one node; true if it is `target` (a cycle).
  bool Step(Search& s, int32_t target, bool forward) {
    const int32_t k = s.stack.back();
    s.stack.pop_back();
    if (k == target) return true;
    s.found.push_back(k);
    if (forward) {
      for (int32_t e = user_start_[k]; e < user_start_[k + 1]; ++e) {
        Push(s, users_[e]);
      }
      for (int32_t e = added_forward_[k]; e >= 0; e = added_[e].next) {
        Push(s, added_[e].node);
      }
    } else {
      for (int32_t e = op_start_[k]; e < op_start_[k + 1]; ++e) {
        Push(s, ops_[e]);
      }
      for (int32_t e = added_back_[k]; e >= 0; e = added_[e].next) {
        Push(s, added_[e].node);
      }
    }
    return false;
  }
  // Queues `k` if it lies in the window and is not yet visited.
  void Push(Search& s, int32_t k) {
    const uint64_t l = label_[k];
    if (l < lo_ || l > hi_) return;
    uint32_t& mark = s.visited[k];
    if (mark == epoch_) return;
    mark = epoch_;
    s.stack.push_back(k);
  }

  // Moves `run` (indices), in label order, to just before `anchor`.
  void MoveBefore(std::vector<int64_t>& run, int64_t anchor) {
    SortByLabel(run);
    for (int64_t k : run) Unlink(k);
    int64_t before = prev_[anchor];
    for (int64_t k : run) {
      LinkAfter(before, k);
      before = k;
    }
    LabelRun(run, prev_[run.front()], anchor);
  }
  // Moves `run` (indices), in label order, to just after `anchor`.
  void MoveAfter(std::vector<int64_t>& run, int64_t anchor) {
    SortByLabel(run);
    for (int64_t k : run) Unlink(k);
    int64_t before = anchor;
    for (int64_t k : run) {
      LinkAfter(before, k);
      before = k;
    }
    LabelRun(run, anchor, next_[run.back()]);
  }
  void SortByLabel(std::vector<int64_t>& run) const {
    std::sort(run.begin(), run.end(),
              [&](int64_t x, int64_t y) { return label_[x] < label_[y]; });
  }
  // Labels for a moved run between its neighbours (-1: the list's end).
  void LabelRun(const std::vector<int64_t>& run, int64_t left, int64_t right) {
    const uint64_t low = left < 0 ? 0 : label_[left];
    const uint64_t high = right < 0 ? kEnd : label_[right];
    const uint64_t count = run.size();
    if (high - low <= count) {
      Relabel();
      return;
    }
    const uint64_t step = (high - low) / (count + 1);
    uint64_t l = low;
    for (int64_t k : run) label_[k] = l += step;
  }

  // The graph: operands (with control predecessors) and users (with
  // control successors) of each index, and the edges added since.
  std::vector<int32_t> op_start_, ops_, user_start_, users_;
  struct AddedEdge {
    int32_t node;
    int32_t next;  // -1: the list's end
  };
  std::vector<AddedEdge> added_;
  std::vector<int32_t> added_forward_, added_back_;  // list heads by index
  std::vector<uint64_t> label_;                      // by index: order labels
  std::vector<int64_t> prev_, next_;  // by index: the order as a list
  int64_t head_ = -1;
  Search back_, on_;  // from `from` backwards, from `to` onwards
  uint32_t epoch_ = 0;
  uint64_t lo_ = 0, hi_ = 0;
};

}  // namespace

absl::StatusOr<AugmentStats> Rewriter::Materialize() {
  AugmentStats stats;
  // Deterministic order: originals by unique id, the root use first, then
  // users by unique id; a use's candidates by unique id. Repeats go. The
  // ids are read once into plain keys. Originals are bucketed by id when
  // their ids are dense (a dry run over a whole graph: a comparison sort
  // of tens of thousands of records costs more than all of the recording),
  // then each original's few records are sorted in place.
  {
    struct SortKey {
      int64_t original, user, replacement;  // user -1: the root use
    };
    const size_t n = opportunities_.size();
    std::vector<SortKey> keys;
    keys.reserve(n);
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
    for (const Opportunity& o : opportunities_) {
      const int64_t id = o.key.original->unique_id();
      keys.push_back({id, o.key.user == nullptr ? -1 : o.key.user->unique_id(),
                      o.replacement->unique_id()});
      lo = std::min(lo, id);
      hi = std::max(hi, id);
    }
    auto less = [&](size_t i, size_t j) {
      const SortKey& a = keys[i];
      const SortKey& b = keys[j];
      if (a.original != b.original) return a.original < b.original;
      if (a.user != b.user) return a.user < b.user;
      if (a.replacement != b.replacement) return a.replacement < b.replacement;
      return i < j;
    };
    std::vector<size_t> order(n);
    if (n > 0 && static_cast<uint64_t>(hi - lo) < 4 * n + 1024) {
      std::vector<uint32_t> start(static_cast<size_t>(hi - lo) + 2, 0);
      for (const SortKey& x : keys) ++start[x.original - lo + 1];
      for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
      std::vector<uint32_t> fill(start.begin(), start.end() - 1);
      for (size_t k = 0; k < n; ++k) order[fill[keys[k].original - lo]++] = k;
      for (size_t b = 0; b + 1 < start.size(); ++b) {
        // Insertion sort: an original usually has a few records. One with
        // many (a producer whose duplicated bodies feed thousands of
        // candidates) is sorted in O(n log n).
        if (start[b + 1] - start[b] > 32) {
          std::sort(order.begin() + start[b], order.begin() + start[b + 1],
                    less);
          continue;
        }
        for (size_t k = start[b] + 1; k < start[b + 1]; ++k) {
          const size_t v = order[k];
          size_t j = k;
          while (j > start[b] && less(v, order[j - 1])) {
            order[j] = order[j - 1];
            --j;
          }
          order[j] = v;
        }
      }
    } else {
      for (size_t k = 0; k < n; ++k) order[k] = k;
      std::sort(order.begin(), order.end(), less);
    }
    std::vector<Opportunity> sorted;
    sorted.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      const SortKey& x = keys[order[k]];
      if (k > 0) {
        const SortKey& prev = keys[order[k - 1]];
        if (x.original == prev.original && x.user == prev.user &&
            x.replacement == prev.replacement) {
          continue;  // a repeat
        }
      }
      sorted.push_back(opportunities_[order[k]]);
    }
    opportunities_ = std::move(sorted);
  }
  stats.opportunities = static_cast<int64_t>(opportunities_.size());

  // 1. Detached instructions that some candidate uses join the graph, in
  //    creation order (operands before users); the rest are discarded.
  //    Marked in their scratch slots (1: kept): a dry run over a whole
  //    graph keeps tens of thousands.
  for (Computation* c : computations_with_detached_) {
    c->ForEachDetachedInstruction([](Instruction* i) { i->scratch = 0; });
  }
  {
    std::vector<Instruction*> stack;
    auto keep = [&](Instruction* i) {
      if (i->is_detached() && i->scratch == 0) {
        i->scratch = 1;
        stack.push_back(i);
      }
    };
    for (const Opportunity& o : opportunities_) keep(o.replacement);
    while (!stack.empty()) {
      Instruction* i = stack.back();
      stack.pop_back();
      for (Instruction* op : i->operands()) keep(op);
    }
  }
  std::vector<Instruction*> kept;
  for (Computation* c : computations_with_detached_) {
    c->AttachDetachedIf([&](Instruction* i) {
      if (i->scratch != 1) return false;
      kept.push_back(i);
      return true;
    });
  }
  computations_with_detached_.clear();
  // Held computations that kept instructions call (directly or through
  // other held ones) join the module, callees first (creation order).
  {
    absl::flat_hash_set<const Computation*> needed;
    std::vector<const Computation*> stack;
    auto need = [&](const Instruction* i) {
      for (const Computation* callee : i->called_computations()) {
        if (needed.insert(callee).second) stack.push_back(callee);
      }
    };
    for (Instruction* i : kept) need(i);
    while (!stack.empty()) {
      const Computation* c = stack.back();
      stack.pop_back();
      c->ForEachInstruction(need);
    }
    for (auto& c : pending_computations_) {
      if (needed.contains(c.get())) {
        // Names were reserved when the computation was held back.
        added_computations_.insert(
            module_->AddComputation(std::move(c), false));
      }
    }
    pending_computations_.clear();
  }

  std::vector<Computation*> touched;
  auto insert = [&](const UseKey& key,
                    const std::vector<Instruction*>& cands) -> absl::Status {
    Instruction* orig = key.original;
    Computation* c = orig->parent();
    auto alt =
        std::make_unique<Instruction>(Opcode::kAlternatives, orig->shape());
    alt->set_name(module_->UniqueInstructionName("alternatives"));
    alt->AppendOperand(orig);
    for (Instruction* r : cands) alt->AppendOperand(r);
    Instruction* a = c->AddInstruction(std::move(alt));
    if (key.user == nullptr) {
      c->set_root_instruction(a);
      return absl::OkStatus();
    }
    return orig->ReplaceUseWith(key.user, a);
  };

  // 2. Insertion in key order, each candidate checked against the graph
  //    as it stands: one that depends on the use it would feed would
  //    close a cycle and is rejected. Earlier nodes win over later ones.
  absl::flat_hash_map<Computation*, std::unique_ptr<DynamicTopologicalOrder>>
      orders;
  std::vector<Instruction*> cands;
  bool dropped_some = false;  // a candidate rejected or a use skipped
  for (size_t first = 0, end; first < opportunities_.size(); first = end) {
    const UseKey key = opportunities_[first].key;
    end = first + 1;
    while (end < opportunities_.size() && opportunities_[end].key == key) {
      ++end;
    }
    // A use may have been recorded for a user that is gone or no longer
    // uses the original (not possible in a dry run, but be safe).
    if (key.user != nullptr && !key.user->IsUserOf(key.original)) {
      dropped_some = true;
      continue;
    }
    Computation* c = key.original->parent();
    std::unique_ptr<DynamicTopologicalOrder>& order = orders[c];
    if (order == nullptr) {
      order = std::make_unique<DynamicTopologicalOrder>(
          *c, [this](const Instruction* i) { return IsNew(i); });
      touched.push_back(c);
    }
    cands.clear();
    for (size_t k = first; k < end; ++k) {
      Instruction* r = opportunities_[k].replacement;
      if (key.user != nullptr && !order->AddEdgeUnlessCycle(r, key.user)) {
        ++stats.rejected_cyclic;
        dropped_some = true;
      } else {
        cands.push_back(r);
      }
    }
    if (cands.empty()) continue;
    HLOGYM_RETURN_IF_ERROR(insert(key, cands));
    ++stats.alternatives;
    stats.candidates += static_cast<int64_t>(cands.size());
  }

  // 3. Candidates that were rejected may have left instructions unused.
  //    Otherwise every kept instruction feeds an alternatives node. Only
  //    kept instructions can be unused: every other instruction this run
  //    made was discarded in step 1 (so the graph itself is not swept).
  //    One walk over the kept ones: removing in one computation changes no
  //    user count in another, so the order across computations is free.
  if (dropped_some) {
    const absl::flat_hash_set<const Computation*> swept(touched.begin(),
                                                        touched.end());
    std::vector<std::pair<int64_t, Instruction*>> dead;
    for (Instruction* i : kept) {
      const Computation* c = i->parent();
      if (i->user_count() == 0 && i != c->root_instruction() && !Pinned(i) &&
          swept.contains(c)) {
        dead.push_back({i->unique_id(), i});
      }
    }
    for (auto [id, d] : dead) {
      if (!removed_.contains(id) && d->user_count() == 0) {
        HLOGYM_RETURN_IF_ERROR(RemoveWithUnusedOperands(d));
      }
    }
  }
  HLOGYM_RETURN_IF_ERROR(RemoveUncalledAddedComputations());
  opportunities_.clear();
  candidate_of_.clear();
  candidates_indexed_ = 0;
  return stats;
}

}  // namespace hlogym
