#include "hlogym/passes/flatten_call_graph.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/hlo_dce.h"

namespace hlogym {

std::unique_ptr<Computation> CloneForModule(const Computation& computation,
                                            Module* module) {
  std::unique_ptr<Computation> clone = computation.Clone();
  clone->ForEachInstruction([&](Instruction* i) {
    i->set_unique_id(-1);
    i->set_name(module->UniqueInstructionName(i->name()));
  });
  return clone;
}

bool IsSequentialCallOpcode(Opcode opcode) {
  return opcode == Opcode::kCall || opcode == Opcode::kWhile ||
         opcode == Opcode::kConditional;
}

namespace {

bool IsAsyncOpcode(Opcode opcode) {
  return opcode == Opcode::kAsyncStart || opcode == Opcode::kAsyncUpdate ||
         opcode == Opcode::kAsyncDone;
}

// Adds a copy of `c` whose sequential callees are (recursively) fresh
// copies too, so that the copy shares no control-flow computation.
absl::StatusOr<Computation*> DeepClone(
    const Computation* c, Module* module, Rewriter& rw,
    absl::flat_hash_set<const Computation*>& active) {
  if (!active.insert(c).second) {
    return absl::InvalidArgumentError(
        StrCat("computation '", c->name(), "' calls itself"));
  }
  std::unique_ptr<Computation> clone = CloneForModule(*c, module);
  std::vector<Instruction*> callers;
  clone->ForEachInstruction([&](Instruction* i) {
    if (IsSequentialCallOpcode(i->opcode())) callers.push_back(i);
  });
  for (Instruction* i : callers) {
    std::vector<Computation*> called = i->called_computations();
    for (Computation*& callee : called) {
      HLOGYM_ASSIGN_OR_RETURN(callee, DeepClone(callee, module, rw, active));
    }
    // The copy is not in the module yet: updating it is not a graph edit.
    i->set_called_computations(std::move(called));
  }
  active.erase(c);
  return rw.AddComputation(std::move(clone));
}

struct CallSite {
  int64_t id;  // unique id of the calling instruction when recorded
  Instruction* inst;
  int64_t slot;  // index in called_computations()
};

}  // namespace

absl::StatusOr<bool> FlattenCallGraph::RunWith(Module* module, Rewriter& rw) {
  // Call sites of every computation, in text order.
  absl::flat_hash_map<const Computation*, std::vector<CallSite>> sites;
  absl::flat_hash_set<const Computation*> embedded;
  // Async computations hold one instruction: call sites there stay.
  const absl::flat_hash_set<const Computation*> async =
      AsyncComputations(*module);
  for (const auto& comp : module->computations()) {
    for (Instruction* i : comp->instructions()) {
      const auto& called = i->called_computations();
      for (size_t k = 0; k < called.size(); ++k) {
        if (IsSequentialCallOpcode(i->opcode())) {
          sites[called[k]].push_back(
              {i->unique_id(), i, static_cast<int64_t>(k)});
        } else if (!IsAsyncOpcode(i->opcode())) {
          embedded.insert(called[k]);
        }
      }
    }
  }
  // Apply mode: calling instructions replaced by copies (old id -> new).
  absl::flat_hash_map<int64_t, Instruction*> replaced;
  auto resolve = [&](const CallSite& s) -> Instruction* {
    int64_t id = s.id;
    Instruction* inst = s.inst;
    for (auto it = replaced.find(id); it != replaced.end();
         it = replaced.find(id)) {
      inst = it->second;
      id = inst->unique_id();
    }
    return inst;
  };

  bool changed = false;
  // Callees first: a computation is flat before its callers are copied.
  for (Computation* c : module->MakeComputationPostOrder()) {
    auto it = sites.find(c);
    if (it == sites.end() || c->IsFusionComputation() || async.contains(c)) {
      continue;
    }
    const std::vector<CallSite>& list = it->second;
    // Called from an embedded context too: every sequential site gets a
    // copy; otherwise the first site keeps the original.
    const size_t first = embedded.contains(c) ? 0 : 1;
    if (list.size() <= first) continue;
    // Slots to redirect, grouped by calling instruction (a conditional
    // may call the same branch twice).
    std::vector<std::pair<Instruction*, std::vector<int64_t>>> groups;
    for (size_t s = first; s < list.size(); ++s) {
      Instruction* inst = resolve(list[s]);
      if (!groups.empty() && groups.back().first == inst) {
        groups.back().second.push_back(list[s].slot);
      } else {
        groups.push_back({inst, {list[s].slot}});
      }
    }
    for (auto& [inst, slots] : groups) {
      // Replacing drops control edges; an unused call has no use to
      // redirect; in a dry run a mixed choice would run the side effects
      // of both copies.
      if ((inst->user_count() == 0 && !inst->IsRoot()) ||
          async.contains(inst->parent()) ||
          !inst->control_predecessors().empty() ||
          !inst->control_successors().empty() ||
          (rw.dry() && HasSideEffectDeep(*inst))) {
        continue;
      }
      std::vector<Computation*> called = inst->called_computations();
      for (int64_t slot : slots) {
        if (slot >= static_cast<int64_t>(called.size()) || called[slot] != c) {
          return absl::InternalError(
              StrCat("stale call site of '", c->name(), "'"));
        }
        absl::flat_hash_set<const Computation*> active;
        HLOGYM_ASSIGN_OR_RETURN(called[slot], DeepClone(c, module, rw, active));
      }
      std::vector<Instruction*> operands(inst->operands().begin(),
                                         inst->operands().end());
      std::unique_ptr<Instruction> copy = inst->CloneWithNewOperands(operands);
      copy->set_called_computations(std::move(called));
      copy->set_name(module->UniqueInstructionName(inst->name()));
      copy->set_unique_id(-1);
      Instruction* added = rw.AddInstruction(inst->parent(), std::move(copy));
      const int64_t old_id = inst->unique_id();
      HLOGYM_ASSIGN_OR_RETURN(bool done, rw.ReplaceInstruction(inst, added));
      if (done) {
        changed = true;
        if (!rw.dry()) replaced[old_id] = added;
      }
    }
  }
  return changed;
}

}  // namespace hlogym
