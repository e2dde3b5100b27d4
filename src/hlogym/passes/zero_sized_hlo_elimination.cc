#include "hlogym/passes/zero_sized_hlo_elimination.h"

#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/hlo_dce.h"

namespace hlogym {

absl::StatusOr<bool> ZeroSizedHloElimination::RunWith(Module* module,
                                                      Rewriter& rw) {
  const absl::flat_hash_set<const Computation*> async =
      AsyncComputations(*module);
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        const Shape& shape = inst->shape();
        if (!shape.IsArray() || async.contains(inst->parent()) ||
            shape.is_dynamic() || shape.ElementsIn() != 0 ||
            inst->opcode() == Opcode::kConstant ||
            inst->opcode() == Opcode::kParameter ||
            inst->opcode() == Opcode::kAlternatives ||
            // An x-start must keep feeding its x-done.
            IsAsyncStartOpcode(inst->opcode()) ||
            inst->opcode() == Opcode::kAsyncUpdate ||
            !inst->control_predecessors().empty() ||
            !inst->control_successors().empty() || HasSideEffectDeep(*inst)) {
          return false;
        }
        // The constant keeps the instruction's shape, layout included.
        HLOGYM_ASSIGN_OR_RETURN(
            Instruction * empty,
            MakeConstant(rw, inst->parent(), Literal(shape)));
        return rw.ReplaceInstruction(inst, empty);
      });
}

}  // namespace hlogym
