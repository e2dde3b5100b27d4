#include "hlogym/passes/hlo_cse.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/hlo_dce.h"

namespace hlogym {
namespace {

bool HasControlEdges(const Instruction* inst) {
  return !inst->control_predecessors().empty() ||
         !inst->control_successors().empty();
}

bool IsCommutative(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool MustFuse(const Instruction* inst) {
  for (const FrontendAttribute& a : inst->frontend_attributes()) {
    if (a.key == "MUST_FUSE" || a.key == "MAXIMAL_FUSE") return true;
  }
  return false;
}

// Equality of instructions' own values (not their operands), with called
// computations compared structurally. Hashes are cached per instruction;
// they stand for callees by size and root only (hashing every fused body on
// each run was most of this pass's time), so equal hashes still need
// SameLocalValue.
class Equivalence {
 public:
  uint64_t LocalHash(const Instruction* inst) {
    auto [it, inserted] = local_hashes_.try_emplace(inst->unique_id(), 0);
    if (inserted) it->second = ShallowInstructionHash(*inst);
    return it->second;
  }

  bool SameLocalValue(const Instruction* a, const Instruction* b) {
    if (a->opcode() != b->opcode() || a->shape() != b->shape() ||
        a->operand_count() != b->operand_count() ||
        a->int_attr() != b->int_attr() ||
        a->has_dimensions() != b->has_dimensions() ||
        a->dimensions() != b->dimensions() ||
        a->comparison_direction() != b->comparison_direction() ||
        a->comparison_type() != b->comparison_type() ||
        a->fusion_kind() != b->fusion_kind() ||
        a->has_literal() != b->has_literal() ||
        a->backend_config() != b->backend_config() ||
        a->frontend_attributes() != b->frontend_attributes()) {
      return false;
    }
    if (a->has_literal() &&
        (a->literal().is_unknown() || b->literal().is_unknown() ||
         a->literal() != b->literal())) {
      return false;
    }
    const auto& ca = a->called_computations();
    const auto& cb = b->called_computations();
    if (ca.size() != cb.size()) return false;
    for (size_t i = 0; i < ca.size(); ++i) {
      if (!SameComputation(ca[i], cb[i])) return false;
    }
    // The rare attributes (slices, windows, dimension numbers, sharding,
    // ...) have no equality operator; their hash is part of the local hash
    // (the callees, part of it too, were compared above).
    return LocalHash(a) == LocalHash(b);
  }

  // Same graph: instructions paired from the roots through their operands,
  // as XLA compares computations, so the order a body lists its
  // instructions in does not matter (two fusions of the same producer and
  // consumer built in different rounds list them differently).
  bool SameComputation(const Computation* a, const Computation* b) {
    if (a == b) return true;
    if (a == nullptr || b == nullptr) return false;
    auto key = std::make_pair(a, b);
    if (auto it = computations_.find(key); it != computations_.end()) {
      return it->second;
    }
    computations_[key] = false;  // a call cycle (invalid IR) compares unequal
    bool same = SameComputationUncached(*a, *b);
    computations_[key] = same;
    return same;
  }

 private:
  bool SameComputationUncached(const Computation& a, const Computation& b) {
    if (a.num_parameters() != b.num_parameters() ||
        a.instruction_count() != b.instruction_count() ||
        a.execution_thread() != b.execution_thread() ||
        a.IsFusionComputation() != b.IsFusionComputation()) {
      return false;
    }
    const Instruction* ra = a.root_instruction();
    const Instruction* rb = b.root_instruction();
    if (ra == nullptr || rb == nullptr) return ra == rb;
    using Pair = std::pair<const Instruction*, const Instruction*>;
    absl::flat_hash_set<Pair> visited;
    absl::InlinedVector<Pair, 16> work = {{ra, rb}};
    while (!work.empty()) {
      const auto [x, y] = work.back();
      work.pop_back();
      if (!visited.insert({x, y}).second) continue;
      // SameLocalValue compares operand counts (and parameter numbers).
      if (!SameLocalValue(x, y) || x->control_predecessors().size() !=
                                       y->control_predecessors().size()) {
        return false;
      }
      for (int64_t k = 0; k < x->operand_count(); ++k) {
        work.push_back({x->operand(k), y->operand(k)});
      }
      for (size_t k = 0; k < x->control_predecessors().size(); ++k) {
        work.push_back(
            {x->control_predecessors()[k], y->control_predecessors()[k]});
      }
    }
    return true;
  }

  // By unique id: this pass removes instructions and adds get-tuple-elements,
  // which may reuse a removed instruction's address.
  absl::flat_hash_map<int64_t, uint64_t> local_hashes_;
  absl::flat_hash_map<std::pair<const Computation*, const Computation*>, bool>
      computations_;
};

// Operands in the order used for hashing and comparing: sorted by id for
// commutative binary ops.
using OperandList = absl::InlinedVector<const Instruction*, 4>;
OperandList KeyOperands(const Instruction* inst) {
  OperandList ops(inst->operands().begin(), inst->operands().end());
  if (IsCommutative(inst->opcode()) && ops.size() == 2 &&
      ops[1]->unique_id() < ops[0]->unique_id()) {
    std::swap(ops[0], ops[1]);
  }
  return ops;
}

// The bucket key: opcode, a few cheap attributes and the operands. The
// full local hash (shape, attributes, callees) costs several hundred
// instructions and most instructions meet no candidate, so it is left to
// SameLocalValue, which only runs on a candidate. A coarser key gives the
// same merges: every rep equal to `inst` shares its key, and buckets keep
// insertion order, so the first equal rep found is the same.
uint64_t KeyHash(const OperandList& ops, const Instruction* inst) {
  uint64_t h = absl::HashOf(static_cast<int>(inst->opcode()), inst->int_attr(),
                            static_cast<int>(inst->shape().element_type()),
                            inst->shape().rank());
  for (const Instruction* op : ops) h = absl::HashOf(h, op->unique_id());
  return h;
}

// Instructions seen so far, by hash (buckets rarely hold more than one).
using Buckets = absl::flat_hash_map<
    uint64_t, absl::InlinedVector<std::pair<int64_t, Instruction*>, 1>>;

// Dead instructions are left to DCE: they are neither merged nor kept as
// the instruction others merge into (a dry run would make them live, and
// choosing the originals would then prune them).
bool HasUse(const Instruction* inst) {
  return inst->user_count() > 0 || inst->IsRoot();
}

// Step 1: identical constants (same shape, layout included, and value).
absl::StatusOr<bool> CombineConstants(
    const std::vector<std::pair<int64_t, Instruction*>>& order, Rewriter& rw,
    Equivalence& eq, Buckets& seen) {
  bool changed = false;
  seen.clear();
  std::vector<std::pair<int64_t, Instruction*>> constants;
  for (auto [id, i] : order) {
    if (i->opcode() == Opcode::kConstant && i->has_literal() &&
        !i->literal().is_unknown() && !HasControlEdges(i) && HasUse(i)) {
      constants.push_back({id, i});
    }
  }
  for (auto [id, inst] : constants) {
    if (rw.IsRemoved(id)) continue;
    auto& bucket = seen[eq.LocalHash(inst)];
    Instruction* match = nullptr;
    for (auto [rid, rep] : bucket) {
      if (!rw.IsRemoved(rid) && eq.SameLocalValue(rep, inst)) {
        match = rep;
        break;
      }
    }
    if (match == nullptr) {
      bucket.push_back({id, inst});
      continue;
    }
    HLOGYM_ASSIGN_OR_RETURN(bool replaced, rw.ReplaceInstruction(inst, match));
    changed |= replaced;
  }
  return changed;
}

// Async pairs (x-start feeding x-done, send/recv and their dones) must
// stay one to one.
bool IsAsyncPart(Opcode op) {
  return IsAsyncStartOpcode(op) || IsAsyncDoneOpcode(op) ||
         op == Opcode::kAsyncUpdate || op == Opcode::kSend ||
         op == Opcode::kSendDone || op == Opcode::kRecv ||
         op == Opcode::kRecvDone;
}

bool Skip(const Instruction* inst) {
  if (IsAsyncPart(inst->opcode())) return true;
  switch (inst->opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kAlternatives:
      return true;
    case Opcode::kIota:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      break;
    default:
      if (inst->operand_count() == 0) return true;
  }
  return HasControlEdges(inst) || MustFuse(inst);
}

// Skip()'s last test, walking called bodies: asked only of instructions
// that have a match, and of the reps they match, since most have none.
bool HasSideEffectsCached(
    const Instruction* inst,
    absl::flat_hash_map<const Instruction*, bool>& side_effects) {
  auto [it, fresh] = side_effects.try_emplace(inst, false);
  if (fresh) it->second = HasSideEffectDeep(*inst);
  return it->second;
}

// Step 2: post-order, each instruction against the earlier ones.
// `order` is the post-order from before step 1: merging constants (leaves)
// leaves the order of the other instructions as it was, and a constant
// removed since is skipped by id before it is read.
absl::StatusOr<bool> CombineInstructions(
    const std::vector<std::pair<int64_t, Instruction*>>& order, Rewriter& rw,
    Equivalence& eq, const absl::flat_hash_set<const Instruction*>& carriers,
    Buckets& seen) {
  bool changed = false;
  seen.clear();
  // Instructions with side effects are neither merged nor merged into.
  // Buckets may hold them (they are passed over as reps), so that only
  // instructions that meet an equal one are tested.
  absl::flat_hash_map<const Instruction*, bool> side_effects;
  for (auto [id, inst] : order) {
    if (rw.IsRemoved(id) || !HasUse(inst) || Skip(inst) ||
        carriers.contains(inst)) {
      continue;
    }
    const OperandList ops = KeyOperands(inst);
    auto& bucket = seen[KeyHash(ops, inst)];
    Instruction* match = nullptr;
    for (auto [rid, rep] : bucket) {
      if (rw.IsRemoved(rid) || KeyOperands(rep) != ops ||
          !eq.SameLocalValue(rep, inst) ||
          HasSideEffectsCached(rep, side_effects)) {
        continue;
      }
      match = rep;
      break;
    }
    if (match == nullptr) {
      bucket.push_back({id, inst});
      continue;
    }
    if (HasSideEffectsCached(inst, side_effects)) continue;
    HLOGYM_ASSIGN_OR_RETURN(bool replaced, rw.ReplaceInstruction(inst, match));
    changed |= replaced;
  }
  return changed;
}

// A multi-output fusion whose root tuple lists one value several times
// (fusion rounds make such roots) gives its users different
// get-tuple-elements of one value, which step 2 cannot merge. Each
// get-tuple-element of a repeat is pointed at the value's first position;
// DCE then drops the outputs left unread (HloEnv's CSE merges them too). A
// fusion that is its computation's root keeps its outputs.
absl::StatusOr<bool> ReadFirstOfRepeatedOutputs(Computation* c, Rewriter& rw) {
  bool changed = false;
  std::vector<Instruction*> fusions;
  c->ForEachInstruction([&](Instruction* i) {
    if (i->opcode() == Opcode::kFusion && i->shape().IsTuple() &&
        !i->IsRoot() && !i->has_pending_body() &&
        i->fused_computation() != nullptr &&
        i->fused_computation()->root_instruction()->opcode() ==
            Opcode::kTuple) {
      fusions.push_back(i);
    }
  });
  std::vector<int64_t> first;
  std::vector<Instruction*> reader;
  for (Instruction* fusion : fusions) {
    const Instruction* root = fusion->fused_computation()->root_instruction();
    const int64_t n = root->operand_count();
    first.assign(n, -1);
    bool repeats = false;
    {
      absl::flat_hash_map<const Instruction*, int64_t> position;
      for (int64_t k = 0; k < n; ++k) {
        auto [it, fresh] = position.try_emplace(root->operand(k), k);
        first[k] = it->second;
        repeats |= !fresh;
      }
    }
    if (!repeats) continue;
    reader.assign(n, nullptr);
    std::vector<Instruction*> gtes;
    for (Instruction* user : fusion->users()) {
      if (user->opcode() != Opcode::kGetTupleElement) continue;
      gtes.push_back(user);
      const int64_t k = user->tuple_index();
      if (first[k] == k && reader[k] == nullptr) reader[k] = user;
    }
    // Users in id order, so the result does not depend on use-list order.
    std::sort(gtes.begin(), gtes.end(),
              [](const Instruction* a, const Instruction* b) {
                return a->unique_id() < b->unique_id();
              });
    for (Instruction* gte : gtes) {
      const int64_t k = gte->tuple_index();
      if (first[k] == k) continue;
      Instruction*& to = reader[first[k]];
      if (to == nullptr) {
        HLOGYM_ASSIGN_OR_RETURN(to, MakeGetTupleElement(rw, fusion, first[k]));
      }
      HLOGYM_ASSIGN_OR_RETURN(bool replaced, rw.ReplaceInstruction(gte, to));
      changed |= replaced;
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> HloCse::RunWith(Module* module, Rewriter& rw) {
  bool changed = false;
  Equivalence eq;
  const absl::flat_hash_set<const Computation*> async =
      AsyncComputations(*module);
  absl::flat_hash_set<const Instruction*> carriers;
  if (rw.dry()) carriers = AsyncCarriers(*module);
  std::vector<std::pair<int64_t, Instruction*>> order;
  // Reused: cleared, a small table keeps its storage.
  Buckets seen;
  for (Computation* c : module->MakeComputationPostOrder()) {
    if (async.contains(c)) continue;
    if (c->PassMemoHolds(kPassMemoCse)) {
      ++computations_skipped_;
      continue;
    }
    HLOGYM_ASSIGN_OR_RETURN(bool repeats, ReadFirstOfRepeatedOutputs(c, rw));
    order.clear();
    for (Instruction* i : c->InstructionPostOrder()) {
      order.push_back({i->unique_id(), i});
    }
    HLOGYM_ASSIGN_OR_RETURN(bool constants,
                            CombineConstants(order, rw, eq, seen));
    HLOGYM_ASSIGN_OR_RETURN(bool instructions,
                            CombineInstructions(order, rw, eq, carriers, seen));
    changed |= repeats || constants || instructions;
    // A dry run finds a subset of what a run in apply mode finds (it also
    // leaves async carriers alone), so only the latter may mark.
    if (!repeats && !constants && !instructions && !rw.dry()) {
      c->RecordPassMemo(kPassMemoCse);
    }
  }
  return changed;
}

}  // namespace hlogym
