#include "hlogym/passes/while_loop_constant_sinking.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/while_loop_simplifier.h"

namespace hlogym {
namespace {

// A copy of the constant (or broadcast of a constant) `value` in `c`.
Instruction* CopyInto(Rewriter& rw, Computation* c, const Instruction* value) {
  auto copy = [&](const Instruction* i, std::vector<Instruction*> ops) {
    std::unique_ptr<Instruction> n = i->CloneWithNewOperands(ops);
    n->set_unique_id(-1);
    n->set_name("");
    return rw.AddInstruction(c, std::move(n));
  };
  if (value->opcode() == Opcode::kBroadcast) {
    return copy(value, {copy(value->operand(0), {})});
  }
  return copy(value, {});
}

}  // namespace

absl::StatusOr<bool> WhileLoopConstantSinking::RunWith(Module* module,
                                                       Rewriter& rw) {
  const auto callers = module->Callers();
  auto called_once = [&](const Computation* c) {
    auto it = callers.find(c);
    return it != callers.end() && it->second.size() == 1;
  };
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* w) -> absl::StatusOr<bool> {
        if (w->opcode() != Opcode::kWhile || w->operand_count() != 1 ||
            w->called_computations().size() != 2) {
          return false;
        }
        Computation* cond = w->while_condition();
        Computation* body = w->while_body();
        const Instruction* init = w->operand(0);
        if (cond == nullptr || body == nullptr || cond == body ||
            init->opcode() != Opcode::kTuple || !called_once(cond) ||
            !called_once(body) || cond->num_parameters() != 1 ||
            body->num_parameters() != 1 ||
            cond->parameter_instruction(0) == nullptr ||
            body->parameter_instruction(0) == nullptr) {
          return false;
        }
        const Instruction* root = body->root_instruction();
        bool changed = false;
        for (int64_t i : control_flow::PassedThroughIndices(*body)) {
          if (i >= init->operand_count()) continue;
          const Instruction* value = init->operand(i);
          const bool constant = value->opcode() == Opcode::kConstant;
          const bool broadcast =
              options_.sink_broadcast_of_constants &&
              value->opcode() == Opcode::kBroadcast &&
              value->operand(0)->opcode() == Opcode::kConstant;
          if (!(constant || broadcast) || !value->shape().IsArray() ||
              (options_.sink_only_scalar_constants &&
               !value->shape().IsScalar())) {
            continue;
          }
          // The body: every use but the pass-through by the root.
          Instruction* in_body = nullptr;
          for (Instruction* g : body->parameter_instruction(0)->users()) {
            if (g->opcode() != Opcode::kGetTupleElement ||
                g->tuple_index() != i) {
              continue;
            }
            std::vector<Instruction*> users(g->users().begin(),
                                            g->users().end());
            for (Instruction* u : users) {
              if (u == root) continue;
              if (in_body == nullptr) in_body = CopyInto(rw, body, value);
              HLOGYM_ASSIGN_OR_RETURN(bool done,
                                      rw.ReplaceUseWith(g, u, in_body));
              changed |= done;
            }
          }
          // The condition: every use.
          Instruction* in_cond = nullptr;
          std::vector<Instruction*> gtes(
              cond->parameter_instruction(0)->users().begin(),
              cond->parameter_instruction(0)->users().end());
          for (Instruction* g : gtes) {
            if (g->opcode() != Opcode::kGetTupleElement ||
                g->tuple_index() != i ||
                (g->user_count() == 0 && g != cond->root_instruction())) {
              continue;
            }
            if (in_cond == nullptr) in_cond = CopyInto(rw, cond, value);
            HLOGYM_ASSIGN_OR_RETURN(bool done,
                                    rw.ReplaceInstruction(g, in_cond));
            changed |= done;
          }
        }
        return changed;
      });
}

absl::Status WhileLoopConstantSinking::SetOption(std::string_view key,
                                                 std::string_view value) {
  bool* target = nullptr;
  if (key == "sink_broadcast_of_constants") {
    target = &options_.sink_broadcast_of_constants;
  }
  if (key == "sink_only_scalar_constants") {
    target = &options_.sink_only_scalar_constants;
  }
  if (target == nullptr) return Pass::SetOption(key, value);
  HLOGYM_ASSIGN_OR_RETURN(*target, ParseBoolOption(key, value));
  return absl::OkStatus();
}

std::vector<std::string> WhileLoopConstantSinking::OptionNames() const {
  return {"sink_broadcast_of_constants", "sink_only_scalar_constants"};
}

}  // namespace hlogym
