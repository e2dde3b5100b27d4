#include "hlogym/passes/rewriter.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {

bool HasSideEffectDeep(const Instruction& inst) {
  if (inst.HasSideEffect()) return true;
  if (inst.called_computations().empty()) return false;
  // Iterative over the call graph; each computation is scanned once.
  absl::flat_hash_set<const Computation*> seen;
  std::vector<const Computation*> stack;
  for (const Computation* c : inst.called_computations()) {
    if (c != nullptr && seen.insert(c).second) stack.push_back(c);
  }
  bool effect = false;
  while (!stack.empty() && !effect) {
    const Computation* c = stack.back();
    stack.pop_back();
    c->ForEachInstruction([&](const Instruction* i) {
      if (i->HasSideEffect()) effect = true;
      for (const Computation* callee : i->called_computations()) {
        if (callee != nullptr && seen.insert(callee).second) {
          stack.push_back(callee);
        }
      }
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
  added_computations_.push_back(added);
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
  UseKey key{original, user};
  std::vector<Instruction*>& cands = opportunities_[key];
  if (std::find(cands.begin(), cands.end(), replacement) == cands.end()) {
    cands.push_back(replacement);
    ++opportunity_count_;
    if (replacement->is_detached()) candidate_of_[replacement].push_back(key);
  }
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

absl::StatusOr<AugmentStats> Rewriter::Finish() {
  if (finished_) {
    return absl::FailedPreconditionError("Rewriter::Finish called twice");
  }
  finished_ = true;
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
  while (module_->RemoveComputationsIfUncalled(orphan_candidates_) > 0) {
  }
  return AugmentStats{};
}

absl::Status Rewriter::RemoveUncalledAddedComputations() {
  // Only computations this run added: uncalled ones the input already had
  // are part of its value. Repeated for computations only removed ones
  // called; each round is one scan of the module.
  absl::flat_hash_set<const Computation*> candidates(
      added_computations_.begin(), added_computations_.end());
  while (module_->RemoveComputationsIfUncalled(candidates) > 0) {
  }
  added_computations_.clear();
  return absl::OkStatus();
}

namespace {

// Is `target` reachable from `from` through operand edges? (`from` depends
// on `target`.) Exact DFS over the current graph.
// A topological order of one computation kept valid while edges are added
// (Pearce and Kelly's dynamic algorithm): adding an edge that already goes
// forward costs nothing; a backward edge costs a search bounded by the two
// positions, then the nodes found swap places. Instructions have even
// positions; an alternatives node inserted during the check has none of
// its own: it sits right before its single user (position - 1) and so
// moves with it.
class DynamicTopologicalOrder {
 public:
  // Positions live in Instruction::scratch for the checker's lifetime.
  explicit DynamicTopologicalOrder(const Computation& c) {
    // By longest path from the sources (ties in post-order): a candidate
    // then sits no later than the instruction it replaces, so most new
    // edges already point forward.
    std::vector<Instruction*> order = c.MakeInstructionPostOrder();
    for (Instruction* i : order) {
      int64_t level = 0;
      for (Instruction* o : i->operands()) {
        if (o->parent() == i->parent()) level = std::max(level, o->scratch + 1);
      }
      for (Instruction* o : i->control_predecessors()) {
        level = std::max(level, o->scratch + 1);
      }
      i->scratch = level;
    }
    std::stable_sort(
        order.begin(), order.end(),
        [](Instruction* a, Instruction* b) { return a->scratch < b->scratch; });
    int64_t p = 0;
    for (Instruction* i : order) {
      i->scratch = p;
      p += 2;
    }
  }
  // An alternatives node added after construction: placed right before its
  // user, moving with it.
  static void MarkVirtual(Instruction* alternatives) {
    alternatives->scratch = kVirtual;
  }

  // True if `from` depends on `to` (a path to -> ... -> from): feeding
  // `from` into `to` would close a cycle.
  bool WouldCycle(Instruction* from, Instruction* to) {
    if (from == to) return true;
    const int64_t lo = Pos(to), hi = Pos(from);
    if (hi < lo) return false;
    forward_.clear();
    return Search(to, lo, hi, /*forward=*/true, &forward_, from);
  }

  // Records that `from` now precedes `to` (after WouldCycle said no).
  void AddEdge(Instruction* from, Instruction* to) {
    const int64_t lo = Pos(to), hi = Pos(from);
    if (hi < lo) return;
    forward_.clear();
    Search(to, lo, hi, true, &forward_, nullptr);
    backward_.clear();
    Search(from, lo, hi, false, &backward_, nullptr);
    // The backward set first, then the forward set, into their positions.
    auto by_pos = [&](Instruction* a, Instruction* b) {
      return Pos(a) < Pos(b);
    };
    std::sort(backward_.begin(), backward_.end(), by_pos);
    std::sort(forward_.begin(), forward_.end(), by_pos);
    slots_.clear();
    for (Instruction* i : backward_) slots_.push_back(Pos(i));
    for (Instruction* i : forward_) slots_.push_back(Pos(i));
    std::sort(slots_.begin(), slots_.end());
    size_t k = 0;
    for (Instruction* i : backward_) i->scratch = slots_[k++];
    for (Instruction* i : forward_) i->scratch = slots_[k++];
  }

 private:
  static constexpr int64_t kVirtual = std::numeric_limits<int64_t>::min();

  static int64_t Pos(const Instruction* i) {
    if (i->scratch != kVirtual) return i->scratch;
    if (i->user_count() == 1) return Pos(i->users()[0]) - 1;
    return std::numeric_limits<int64_t>::max();  // the root
  }

  // Visits the nodes reachable from `start` (through users when `forward`,
  // else operands) whose positions lie in [lo, hi]. Alternatives nodes are
  // passed through but not collected (they move with their user). Returns
  // true as soon as `target` is reached.
  bool Search(Instruction* start, int64_t lo, int64_t hi, bool forward,
              std::vector<Instruction*>* out, const Instruction* target) {
    seen_.clear();
    stack_.clear();
    stack_.push_back(start);
    seen_.insert(start);
    while (!stack_.empty()) {
      Instruction* i = stack_.back();
      stack_.pop_back();
      if (i == target) return true;
      if (i->scratch != kVirtual) out->push_back(i);
      auto visit = [&](Instruction* n) {
        const int64_t p = Pos(n);
        if (p < lo || p > hi || !seen_.insert(n).second) return;
        stack_.push_back(n);
      };
      if (forward) {
        for (Instruction* u : i->users()) visit(u);
        for (Instruction* u : i->control_successors()) visit(u);
      } else {
        for (Instruction* o : i->operands()) visit(o);
        for (Instruction* o : i->control_predecessors()) visit(o);
      }
    }
    return false;
  }

  std::vector<Instruction*> stack_, forward_, backward_;
  std::vector<int64_t> slots_;
  absl::flat_hash_set<Instruction*> seen_;
};

// The instructions that lie on a cycle (members of a strongly connected
// component of more than one node, over operand and control edges):
// iterative Tarjan, linear in the graph.
absl::flat_hash_set<const Instruction*> CyclicNodes(const Computation& c) {
  absl::flat_hash_map<const Instruction*, std::pair<int64_t, int64_t>> info;
  std::vector<const Instruction*> scc_stack;
  absl::flat_hash_set<const Instruction*> on_stack;
  absl::flat_hash_set<const Instruction*> cyclic;
  int64_t counter = 0;
  auto deps = [](const Instruction* i, size_t k) -> const Instruction* {
    const size_t n = i->operands().size();
    return k < n ? i->operands()[k] : i->control_predecessors()[k - n];
  };
  struct Frame {
    const Instruction* inst;
    size_t next;
  };
  std::vector<Frame> frames;
  c.ForEachInstruction([&](const Instruction* start) {
    if (info.contains(start)) return;
    frames.push_back({start, 0});
    info[start] = {counter, counter};
    ++counter;
    scc_stack.push_back(start);
    on_stack.insert(start);
    while (!frames.empty()) {
      Frame& f = frames.back();
      const Instruction* i = f.inst;
      const size_t total =
          i->operands().size() + i->control_predecessors().size();
      if (f.next < total) {
        const Instruction* d = deps(i, f.next++);
        if (d->parent() != i->parent()) continue;
        auto it = info.find(d);
        if (it == info.end()) {
          info[d] = {counter, counter};
          ++counter;
          scc_stack.push_back(d);
          on_stack.insert(d);
          frames.push_back({d, 0});
        } else if (on_stack.contains(d)) {
          auto& low = info[i].second;
          low = std::min(low, it->second.first);
        }
        continue;
      }
      const auto [index, low] = info[i];
      frames.pop_back();
      if (!frames.empty()) {
        auto& parent_low = info[frames.back().inst].second;
        parent_low = std::min(parent_low, low);
      }
      if (low == index) {
        std::vector<const Instruction*> component;
        while (true) {
          const Instruction* x = scc_stack.back();
          scc_stack.pop_back();
          on_stack.erase(x);
          component.push_back(x);
          if (x == i) break;
        }
        if (component.size() > 1)
          cyclic.insert(component.begin(), component.end());
      }
    }
  });
  return cyclic;
}

// Kahn's algorithm over operand and control edges: true if acyclic.
bool IsAcyclic(const Computation& c) {
  absl::flat_hash_map<const Instruction*, int64_t> pending;
  std::vector<const Instruction*> ready;
  int64_t total = 0;
  c.ForEachInstruction([&](const Instruction* i) {
    ++total;
    // One release per user edge (users are distinct) and per control edge,
    // so count distinct operands plus control predecessors.
    const InstructionVector& ops = i->operands();
    int64_t deps = static_cast<int64_t>(i->control_predecessors().size());
    for (size_t k = 0; k < ops.size(); ++k) {
      if (std::find(ops.begin(), ops.begin() + k, ops[k]) == ops.begin() + k) {
        ++deps;
      }
    }
    pending[i] = deps;
    if (deps == 0) ready.push_back(i);
  });
  int64_t done = 0;
  while (!ready.empty()) {
    const Instruction* i = ready.back();
    ready.pop_back();
    ++done;
    auto release = [&](const Instruction* u) {
      auto it = pending.find(u);
      if (it != pending.end() && --it->second == 0) ready.push_back(u);
    };
    for (const Instruction* u : i->users()) release(u);
    for (const Instruction* u : i->control_successors()) release(u);
  }
  return done == total;
}

}  // namespace

absl::StatusOr<AugmentStats> Rewriter::Materialize() {
  AugmentStats stats;
  stats.opportunities = opportunity_count_;

  // 1. Detached instructions that some candidate uses join the graph, in
  //    creation order (operands before users); the rest are discarded.
  absl::flat_hash_set<Instruction*> keep;
  {
    std::vector<Instruction*> stack;
    for (const auto& [key, cands] : opportunities_) {
      for (Instruction* r : cands) {
        if (r->is_detached() && keep.insert(r).second) stack.push_back(r);
      }
    }
    while (!stack.empty()) {
      Instruction* i = stack.back();
      stack.pop_back();
      for (Instruction* op : i->operands()) {
        if (op->is_detached() && keep.insert(op).second) stack.push_back(op);
      }
    }
  }
  std::vector<Instruction*> kept(keep.begin(), keep.end());
  std::sort(kept.begin(), kept.end(), [](Instruction* a, Instruction* b) {
    return a->unique_id() < b->unique_id();
  });
  for (Instruction* i : kept) {
    HLOGYM_RETURN_IF_ERROR(i->parent()->AttachInstruction(i));
  }
  for (Computation* c : computations_with_detached_) {
    c->DiscardDetachedInstructions();
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
        added_computations_.push_back(
            module_->AddComputation(std::move(c), false));
      }
    }
    pending_computations_.clear();
  }

  // 2. Deterministic order: originals by unique id, the root use first,
  //    then users by unique id; candidates by unique id.
  std::vector<UseKey> keys;
  keys.reserve(opportunities_.size());
  for (const auto& [key, cands] : opportunities_) keys.push_back(key);
  std::sort(keys.begin(), keys.end(), [](const UseKey& a, const UseKey& b) {
    if (a.original != b.original) {
      return a.original->unique_id() < b.original->unique_id();
    }
    if ((a.user == nullptr) != (b.user == nullptr)) return a.user == nullptr;
    if (a.user == nullptr) return false;
    return a.user->unique_id() < b.user->unique_id();
  });

  struct Inserted {
    UseKey key;
    Instruction* alternatives;
  };
  absl::flat_hash_map<Computation*, std::vector<Inserted>> by_computation;
  std::vector<Computation*> touched;

  auto insert = [&](const UseKey& key, const std::vector<Instruction*>& cands)
      -> absl::StatusOr<Instruction*> {
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
    } else {
      HLOGYM_RETURN_IF_ERROR(orig->ReplaceUseWith(key.user, a));
    }
    return a;
  };

  for (const UseKey& key : keys) {
    std::vector<Instruction*> cands = opportunities_[key];
    std::sort(cands.begin(), cands.end(), [](Instruction* a, Instruction* b) {
      return a->unique_id() < b->unique_id();
    });
    // A use may have been recorded for a user that is gone or no longer
    // uses the original (not possible in a dry run, but be safe).
    if (key.user != nullptr && !key.user->IsUserOf(key.original)) continue;
    HLOGYM_ASSIGN_OR_RETURN(Instruction * a, insert(key, cands));
    Computation* c = key.original->parent();
    auto [it, fresh] = by_computation.try_emplace(c);
    if (fresh) touched.push_back(c);
    it->second.push_back({key, a});
  }

  // 3. Cycles: one topological check per computation; where it fails, redo
  //    that computation's insertions one by one, rejecting each candidate
  //    that depends on the use it would feed.
  for (Computation* c : touched) {
    std::vector<Inserted>& list = by_computation[c];
    if (IsAcyclic(*c)) {
      for (const Inserted& ins : list) {
        ++stats.alternatives;
        stats.candidates += ins.alternatives->operand_count() - 1;
      }
      continue;
    }
    // Only alternatives inside a strongly connected component can lie on
    // a cycle (the graph without them is acyclic): undo those, then insert
    // them again one by one, in key order, rejecting each candidate that
    // depends on the use it would feed.
    absl::flat_hash_set<const Instruction*> cyclic = CyclicNodes(*c);
    std::vector<const Inserted*> redo;
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      Instruction* a = it->alternatives;
      if (!cyclic.contains(a)) continue;
      redo.push_back(&*it);
      if (it->key.user == nullptr) {
        c->set_root_instruction(it->key.original);
      } else {
        HLOGYM_RETURN_IF_ERROR(
            a->ReplaceUseWith(it->key.user, it->key.original));
      }
      HLOGYM_RETURN_IF_ERROR(c->RemoveInstruction(a));
    }
    std::reverse(redo.begin(), redo.end());
    for (const Inserted& ins : list) {
      if (!cyclic.contains(ins.alternatives)) {
        ++stats.alternatives;
        stats.candidates += ins.alternatives->operand_count() - 1;
      }
    }
    DynamicTopologicalOrder order(*c);
    for (const Inserted* ins : redo) {
      std::vector<Instruction*> cands;
      std::vector<Instruction*> all = opportunities_[ins->key];
      std::sort(all.begin(), all.end(), [](Instruction* a, Instruction* b) {
        return a->unique_id() < b->unique_id();
      });
      for (Instruction* r : all) {
        if (ins->key.user != nullptr && order.WouldCycle(r, ins->key.user)) {
          ++stats.rejected_cyclic;
        } else {
          if (ins->key.user != nullptr) order.AddEdge(r, ins->key.user);
          cands.push_back(r);
        }
      }
      if (cands.empty()) continue;
      HLOGYM_ASSIGN_OR_RETURN(Instruction * a, insert(ins->key, cands));
      DynamicTopologicalOrder::MarkVirtual(a);
      ++stats.alternatives;
      stats.candidates += static_cast<int64_t>(cands.size());
    }
  }

  // 4. Candidates that were rejected may have left instructions unused.
  for (Computation* c : touched) {
    std::vector<std::pair<int64_t, Instruction*>> dead;
    c->ForEachInstruction([&](Instruction* i) {
      if (IsNew(i) && i->user_count() == 0 && i != c->root_instruction() &&
          i->opcode() != Opcode::kAlternatives && !Pinned(i)) {
        dead.push_back({i->unique_id(), i});
      }
    });
    for (auto [id, d] : dead) {
      if (!removed_.contains(id) && d->user_count() == 0) {
        HLOGYM_RETURN_IF_ERROR(RemoveWithUnusedOperands(d));
      }
    }
  }
  HLOGYM_RETURN_IF_ERROR(RemoveUncalledAddedComputations());
  opportunities_.clear();
  candidate_of_.clear();
  return stats;
}

}  // namespace hlogym
