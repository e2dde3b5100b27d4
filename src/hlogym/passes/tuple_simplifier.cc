#include "hlogym/passes/tuple_simplifier.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/hlo_dce.h"

namespace hlogym {
namespace {

// Replacing drops the control edges of the replaced instruction, so
// instructions that have any are left alone.
bool HasControlEdges(const Instruction* inst) {
  return !inst->control_predecessors().empty() ||
         !inst->control_successors().empty();
}

// tuple(gte(x,0), ..., gte(x,n-1)) -> x.
absl::StatusOr<bool> RemoveWholeTuple(Instruction* tuple, Rewriter& rw) {
  const int64_t n = tuple->operand_count();
  if (n == 0) return false;
  Instruction* source = nullptr;
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* gte = tuple->operand(i);
    if (gte->opcode() != Opcode::kGetTupleElement || gte->tuple_index() != i) {
      return false;
    }
    if (source == nullptr) source = gte->operand(0);
    if (gte->operand(0) != source) return false;
  }
  if (!source->shape().IsTuple() || source->shape().tuple_shapes_size() != n ||
      !source->shape().Compatible(tuple->shape())) {
    return false;
  }
  return rw.ReplaceInstruction(tuple, source);
}

// gte chains: walks up to the first non-gte ancestor, then down through
// tuple operands as far as the index path allows.
absl::StatusOr<bool> ResolveGetTupleElement(Instruction* gte, Rewriter& rw) {
  std::vector<int64_t> path;  // outermost index last
  Instruction* ancestor = gte;
  while (ancestor->opcode() == Opcode::kGetTupleElement &&
         ancestor->operand_count() == 1) {
    path.push_back(ancestor->tuple_index());
    ancestor = ancestor->operand(0);
  }
  // Indices from the ancestor outwards.
  std::vector<int64_t> indices(path.rbegin(), path.rend());
  Instruction* element = ancestor;
  size_t used = 0;
  while (used < indices.size() && element->opcode() == Opcode::kTuple) {
    const int64_t k = indices[used];
    if (k < 0 || k >= element->operand_count()) return false;
    element = element->operand(k);
    ++used;
  }
  if (used == 0) return false;
  // Rebuild what is left of the chain on the element reached.
  for (size_t j = used; j < indices.size(); ++j) {
    if (!element->shape().IsTuple() ||
        indices[j] >= element->shape().tuple_shapes_size()) {
      return false;
    }
    HLOGYM_ASSIGN_OR_RETURN(element,
                            MakeGetTupleElement(rw, element, indices[j]));
  }
  if (element == gte || !element->shape().Compatible(gte->shape())) {
    return false;
  }
  return rw.ReplaceInstruction(gte, element);
}

}  // namespace

absl::StatusOr<bool> TupleSimplifier::RunWith(Module* module, Rewriter& rw) {
  const absl::flat_hash_set<const Computation*> async =
      AsyncComputations(*module);
  absl::flat_hash_set<const Instruction*> carriers;
  if (rw.dry()) carriers = AsyncCarriers(*module);
  return VisitInstructionsPostOrder(
      module, rw,
      [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (HasControlEdges(inst) || async.contains(inst->parent())) {
          return false;
        }
        if (rw.dry() && carriers.contains(inst)) return false;
        if (inst->opcode() == Opcode::kTuple) {
          return RemoveWholeTuple(inst, rw);
        }
        if (inst->opcode() == Opcode::kGetTupleElement) {
          return ResolveGetTupleElement(inst, rw);
        }
        return false;
      },
      /*include_fusion_computations=*/true);
}

}  // namespace hlogym
