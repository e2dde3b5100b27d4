#include "hlogym/passes/variadic_op_splitter.h"

#include <algorithm>
#include <span>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"

namespace hlogym {
namespace {

absl::StatusOr<bool> SplitConcatenate(Rewriter& rw, Instruction* concat) {
  if (concat->opcode() != Opcode::kConcatenate ||
      concat->operand_count() <= kMaxKernelParameters ||
      concat->dimensions().size() != 1 || !concat->shape().IsArray()) {
    return false;
  }
  const int64_t dimension = concat->dimensions(0);
  std::vector<Instruction*> level(concat->operands().begin(),
                                  concat->operands().end());
  while (level.size() > 1) {
    std::vector<Instruction*> next;
    const int64_t n = static_cast<int64_t>(level.size());
    for (int64_t offset = 0; offset < n; offset += kMaxKernelParameters) {
      if (offset > 0 && offset + kMaxKernelParameters > n) {
        // A partial trailing group joins the next level as it is.
        next.insert(next.end(), level.begin() + offset, level.end());
        break;
      }
      const int64_t count = std::min(kMaxKernelParameters, n - offset);
      HLOGYM_ASSIGN_OR_RETURN(Instruction * part,
                              MakeConcatenate(rw,
                                              std::span<Instruction* const>(
                                                  level.data() + offset,
                                                  static_cast<size_t>(count)),
                                              dimension));
      next.push_back(part);
    }
    level = std::move(next);
  }
  return rw.ReplaceInstruction(concat, level[0]);
}

}  // namespace

absl::StatusOr<bool> VariadicOpSplitter::RunWith(Module* module, Rewriter& rw) {
  return VisitInstructionsPostOrder(module, rw, [&](Instruction* inst) {
    return SplitConcatenate(rw, inst);
  });
}

}  // namespace hlogym
