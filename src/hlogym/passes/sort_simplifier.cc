#include "hlogym/passes/sort_simplifier.h"

#include <memory>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/flatten_call_graph.h"
#include "hlogym/passes/hlo_dce.h"

namespace hlogym {
namespace {

bool HasControlEdges(const Instruction* inst) {
  return !inst->control_predecessors().empty() ||
         !inst->control_successors().empty();
}

absl::StatusOr<bool> RemoveUnusedSortOperands(Instruction* sort, Rewriter& rw) {
  const int64_t n = sort->operand_count();
  // The users of a root cannot be analysed; other users than
  // get-tuple-element neither.
  if (sort->opcode() != Opcode::kSort || !sort->shape().IsTuple() ||
      sort->shape().tuple_shapes_size() != n || sort->IsRoot() ||
      HasControlEdges(sort) || sort->called_computations().size() != 1 ||
      sort->user_count() == 0) {
    return false;
  }
  const Computation* comparator = sort->to_apply();
  if (comparator == nullptr || comparator->num_parameters() != 2 * n) {
    return false;
  }
  std::vector<bool> used(n, false);
  for (const Instruction* u : sort->users()) {
    if (u->opcode() != Opcode::kGetTupleElement || HasControlEdges(u) ||
        u->tuple_index() < 0 || u->tuple_index() >= n) {
      return false;
    }
    used[u->tuple_index()] = true;
  }
  // Operand i is compared through parameters 2i and 2i+1.
  for (int64_t p = 0; p < 2 * n; ++p) {
    const Instruction* param = comparator->parameter_instruction(p);
    if (param == nullptr) return false;
    if (param->user_count() > 0 || param->IsRoot()) used[p / 2] = true;
  }
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  std::vector<int64_t> new_index(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    if (!used[i]) continue;
    new_index[i] = static_cast<int64_t>(operands.size());
    operands.push_back(sort->operand(i));
    shapes.push_back(sort->shape().tuple_shapes(i));
  }
  if (static_cast<int64_t>(operands.size()) == n || operands.empty()) {
    return false;
  }

  // The comparator without the dropped operands' parameters (highest
  // first: removing one renumbers those after it).
  Module* module = sort->parent()->parent();
  std::unique_ptr<Computation> cmp = CloneForModule(*comparator, module);
  for (int64_t p = 2 * n - 1; p >= 0; --p) {
    if (!used[p / 2]) HLOGYM_RETURN_IF_ERROR(cmp->RemoveUnusedParameter(p));
  }
  Computation* new_cmp = rw.AddComputation(std::move(cmp));

  const Shape shape = shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
  HLOGYM_ASSIGN_OR_RETURN(Instruction * new_sort,
                          CloneWithNewOperands(rw, sort, shape, operands));
  // The clone is new: pointing it at the new comparator edits no graph
  // instruction.
  new_sort->set_called_computations({new_cmp});

  std::vector<Instruction*> users(sort->users().begin(), sort->users().end());
  bool changed = false;
  for (Instruction* gte : users) {
    Instruction* replacement = new_sort;
    if (shapes.size() > 1) {
      HLOGYM_ASSIGN_OR_RETURN(
          replacement,
          MakeGetTupleElement(rw, new_sort, new_index[gte->tuple_index()]));
    }
    if (!replacement->shape().Compatible(gte->shape())) continue;
    HLOGYM_ASSIGN_OR_RETURN(bool replaced,
                            rw.ReplaceInstruction(gte, replacement));
    changed |= replaced;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> SortSimplifier::RunWith(Module* module, Rewriter& rw) {
  const absl::flat_hash_set<const Computation*> async =
      AsyncComputations(*module);
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (async.contains(inst->parent())) return false;
        return RemoveUnusedSortOperands(inst, rw);
      });
}

}  // namespace hlogym
