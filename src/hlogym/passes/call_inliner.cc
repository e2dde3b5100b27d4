#include "hlogym/passes/call_inliner.h"

#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/hlo_dce.h"

namespace hlogym {
namespace {

bool HasControlEdges(const Instruction* inst) {
  return !inst->control_predecessors().empty() ||
         !inst->control_successors().empty();
}

const FrontendAttribute* FindAttr(const Instruction* inst,
                                  std::string_view key) {
  for (const FrontendAttribute& a : inst->frontend_attributes()) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

// An instruction the root does not reach whose side effects hide in a
// callee (a while loop with an outfeed in its body): the Rewriter drops
// unused new instructions without their own side effect, so such callees
// are not inlined.
bool HasUnreachableHiddenEffect(const Computation& callee) {
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> stack;
  if (callee.root_instruction() != nullptr) {
    stack.push_back(callee.root_instruction());
    live.insert(callee.root_instruction());
  }
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    for (const Instruction* op : i->operands()) {
      if (live.insert(op).second) stack.push_back(op);
    }
    for (const Instruction* op : i->control_predecessors()) {
      if (live.insert(op).second) stack.push_back(op);
    }
  }
  bool found = false;
  callee.ForEachInstruction([&](const Instruction* i) {
    if (!live.contains(i) && !i->HasSideEffect() && HasSideEffectDeep(*i)) {
      found = true;
    }
  });
  return found;
}

bool HasAnyControlEdge(const Computation& c) {
  bool found = false;
  c.ForEachInstruction([&](const Instruction* i) {
    if (HasControlEdges(i)) found = true;
  });
  return found;
}

bool IsInlinable(const Instruction* call, const Rewriter& rw) {
  // An unused call is left to DCE (its copy would be unused too).
  if (call->opcode() != Opcode::kCall || !call->backend_config().empty() ||
      (call->user_count() == 0 && !call->IsRoot()) ||
      call->called_computations().size() != 1 || HasControlEdges(call) ||
      call->attrs().is_composite) {
    return false;
  }
  const Computation* callee = call->to_apply();
  if (callee == nullptr || callee->IsFusionComputation() ||
      callee == call->parent() ||
      callee->num_parameters() != call->operand_count() ||
      callee->root_instruction() == nullptr ||
      !callee->root_instruction()->shape().Compatible(call->shape())) {
    return false;
  }
  for (int64_t i = 0; i < callee->num_parameters(); ++i) {
    const Instruction* p = callee->parameter_instruction(i);
    if (p == nullptr || HasControlEdges(p)) return false;
  }
  // Calls that ask to stay: opted out, stream-annotated, Shardy manual
  // computation bodies.
  if (const FrontendAttribute* a = FindAttr(call, "inlineable");
      a != nullptr && a->value == "false") {
    return false;
  }
  if (FindAttr(call, "_xla_stream_annotation") != nullptr) return false;
  const std::string& name = callee->name();
  if (name.find("manual_computation_body") != std::string::npos ||
      name.rfind("shmap_body", 0) == 0) {
    return false;
  }
  if (HasUnreachableHiddenEffect(*callee)) return false;
  // A dry run offers the inlined body per use of the call: a mixed choice
  // would run the callee's side effects twice, and control edges between
  // candidates are not kept.
  if (rw.dry() && (HasSideEffectDeep(*call) || HasAnyControlEdge(*callee))) {
    return false;
  }
  return true;
}

absl::StatusOr<bool> Inline(Instruction* call, Rewriter& rw) {
  Computation* caller = call->parent();
  Module* module = caller->parent();
  const Computation* callee = call->to_apply();
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (int64_t i = 0; i < callee->num_parameters(); ++i) {
    map[callee->parameter_instruction(i)] = call->operand(i);
  }
  std::vector<Instruction*> order = callee->MakeInstructionPostOrder();
  for (const Instruction* i : order) {
    if (i->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    operands.reserve(i->operand_count());
    for (const Instruction* op : i->operands()) operands.push_back(map.at(op));
    std::unique_ptr<Instruction> copy = i->CloneWithNewOperands(operands);
    copy->set_unique_id(-1);
    copy->set_name(module->UniqueInstructionName(i->name()));
    map[i] = rw.AddInstruction(caller, std::move(copy));
  }
  // Control edges between the (new) copies keep the callee's order.
  for (const Instruction* i : order) {
    for (const Instruction* succ : i->control_successors()) {
      HLOGYM_RETURN_IF_ERROR(map.at(i)->AddControlDependencyTo(map.at(succ)));
    }
  }
  return rw.ReplaceInstruction(call, map.at(callee->root_instruction()));
}

}  // namespace

absl::StatusOr<bool> CallInliner::RunWith(Module* module, Rewriter& rw) {
  const absl::flat_hash_set<const Computation*> called_before =
      CalledComputations(*module);
  // Calls inside async computations stay.
  const absl::flat_hash_set<const Computation*> async =
      AsyncComputations(*module);
  bool changed = false;
  // Callees first, so that an inlined body is already flat.
  for (Computation* c : module->MakeComputationPostOrder()) {
    if (c->IsFusionComputation() || async.contains(c)) continue;
    std::vector<std::pair<int64_t, Instruction*>> calls;
    for (Instruction* i : c->MakeInstructionPostOrder()) {
      if (i->opcode() == Opcode::kCall) calls.push_back({i->unique_id(), i});
    }
    for (auto [id, call] : calls) {
      if (rw.IsRemoved(id) || !IsInlinable(call, rw)) continue;
      HLOGYM_ASSIGN_OR_RETURN(bool inlined, Inline(call, rw));
      changed |= inlined;
    }
  }
  if (changed && !rw.dry()) {
    HLOGYM_ASSIGN_OR_RETURN(
        bool removed, RemoveNewlyUncalledComputations(module, called_before));
    changed |= removed;
  }
  return changed;
}

}  // namespace hlogym
