#include "hlogym/passes/while_loop_trip_count_annotator.h"

#include <vector>

#include "hlogym/cost/trip_count.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/builders.h"

namespace hlogym {

absl::StatusOr<bool> WhileLoopTripCountAnnotator::RunWith(Module* module,
                                                          Rewriter& rw) {
  std::vector<Instruction*> loops;
  for (const auto& c : module->computations()) {
    c->ForEachInstruction([&](Instruction* i) {
      if (i->opcode() == Opcode::kWhile &&
          i->backend_config().find("known_trip_count") == std::string::npos &&
          i->backend_config().empty() && i->control_predecessors().empty()) {
        loops.push_back(i);
      }
    });
  }
  bool changed = false;
  for (Instruction* w : loops) {
    std::optional<int64_t> n = ComputeWhileTripCount(*w);
    if (!n.has_value()) continue;
    std::vector<Instruction*> ops(w->operands().begin(), w->operands().end());
    HLOGYM_ASSIGN_OR_RETURN(Instruction * annotated,
                            CloneWithNewOperands(rw, w, w->shape(), ops));
    annotated->set_backend_config(
        StrCat("{\"known_trip_count\":{\"n\":\"", *n, "\"}}"));
    HLOGYM_ASSIGN_OR_RETURN(bool replaced, rw.ReplaceInstruction(w, annotated));
    changed |= replaced;
  }
  return changed;
}

}  // namespace hlogym
