#include "hlogym/passes/rewriter.h"

#include <algorithm>
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
bool DependsOn(Instruction* from, const Instruction* target,
               std::vector<Instruction*>& stack,
               absl::flat_hash_set<const Instruction*>& seen) {
  stack.clear();
  seen.clear();
  stack.push_back(from);
  seen.insert(from);
  while (!stack.empty()) {
    Instruction* i = stack.back();
    stack.pop_back();
    if (i == target) return true;
    for (Instruction* op : i->operands()) {
      if (seen.insert(op).second) stack.push_back(op);
    }
    for (Instruction* op : i->control_predecessors()) {
      if (seen.insert(op).second) stack.push_back(op);
    }
  }
  return false;
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
        // Held ones may share a name: make it unique now.
        c->set_name(module_->UniqueComputationName(c->name()));
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
  std::vector<Instruction*> dfs_stack;
  absl::flat_hash_set<const Instruction*> dfs_seen;
  for (Computation* c : touched) {
    std::vector<Inserted>& list = by_computation[c];
    if (IsAcyclic(*c)) {
      for (const Inserted& ins : list) {
        ++stats.alternatives;
        stats.candidates += ins.alternatives->operand_count() - 1;
      }
      continue;
    }
    // Undo every insertion of this computation.
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      Instruction* a = it->alternatives;
      if (it->key.user == nullptr) {
        c->set_root_instruction(it->key.original);
      } else {
        HLOGYM_RETURN_IF_ERROR(
            a->ReplaceUseWith(it->key.user, it->key.original));
      }
      HLOGYM_RETURN_IF_ERROR(c->RemoveInstruction(a));
    }
    for (const Inserted& ins : list) {
      std::vector<Instruction*> cands;
      std::vector<Instruction*> all = opportunities_[ins.key];
      std::sort(all.begin(), all.end(), [](Instruction* a, Instruction* b) {
        return a->unique_id() < b->unique_id();
      });
      for (Instruction* r : all) {
        if (ins.key.user != nullptr &&
            DependsOn(r, ins.key.user, dfs_stack, dfs_seen)) {
          ++stats.rejected_cyclic;
        } else {
          cands.push_back(r);
        }
      }
      if (cands.empty()) continue;
      HLOGYM_ASSIGN_OR_RETURN(Instruction * a, insert(ins.key, cands));
      (void)a;
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
