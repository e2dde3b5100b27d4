#include "hlogym/passes/hlo_constant_folding.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/hlo_dce.h"

namespace hlogym {
namespace {

// Operand nesting of tuples that are still examined.
constexpr int kMaxTupleDepth = 16;

bool IsIllegalOpcode(Opcode op) {
  return op == Opcode::kRng || op == Opcode::kRngBitGenerator ||
         op == Opcode::kRngGetAndUpdateState || op == Opcode::kAfterAll;
}

// rng or after-all in the instruction or in any computation it calls.
bool IsOrContainsIllegal(const Instruction* inst) {
  if (IsIllegalOpcode(inst->opcode())) return true;
  absl::flat_hash_set<const Computation*> seen;
  std::vector<const Computation*> stack;
  for (const Computation* c : inst->called_computations()) {
    if (c != nullptr && seen.insert(c).second) stack.push_back(c);
  }
  bool found = false;
  while (!stack.empty() && !found) {
    const Computation* c = stack.back();
    stack.pop_back();
    c->ForEachInstruction([&](const Instruction* i) {
      if (IsIllegalOpcode(i->opcode())) found = true;
      for (const Computation* callee : i->called_computations()) {
        if (callee != nullptr && seen.insert(callee).second) {
          stack.push_back(callee);
        }
      }
    });
  }
  return found;
}

bool IsNeverFolded(const Instruction* inst) {
  const Opcode op = inst->opcode();
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    // Broadcasts and iotas stay: they are cheap and keep constants small.
    case Opcode::kBroadcast:
    case Opcode::kIota:
    // Evaluating an FFT may take long.
    case Opcode::kFft:
    case Opcode::kWhile:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kCustomCall:
    case Opcode::kAlternatives:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kAddDependency:
      return true;
    default:
      return IsCollective(op) || IsAsyncStartOpcode(op) ||
             IsAsyncDoneOpcode(op);
  }
}

// A constant, a broadcast of a constant, an iota, or a tuple of those.
bool IsConstantLike(const Instruction* op, int depth = 0) {
  switch (op->opcode()) {
    case Opcode::kConstant:
    case Opcode::kIota:
      return true;
    case Opcode::kBroadcast:
      return op->operand_count() == 1 &&
             op->operand(0)->opcode() == Opcode::kConstant;
    case Opcode::kTuple:
      if (depth >= kMaxTupleDepth) return false;
      return std::all_of(
          op->operands().begin(), op->operands().end(),
          [&](const Instruction* e) { return IsConstantLike(e, depth + 1); });
    default:
      return false;
  }
}

bool IsFoldable(const Instruction* inst) {
  if (IsNeverFolded(inst) || inst->operand_count() == 0 ||
      !inst->control_predecessors().empty() ||
      !inst->control_successors().empty() || inst->shape().is_dynamic()) {
    return false;
  }
  bool any_constant = false;
  for (const Instruction* op : inst->operands()) {
    if (!IsConstantLike(op)) return false;
    any_constant |= op->opcode() == Opcode::kConstant;
  }
  if (!any_constant) return false;
  // A padded broadcast is cheaper to compute than to store.
  if (inst->opcode() == Opcode::kPad &&
      inst->operand(0)->opcode() == Opcode::kBroadcast &&
      inst->operand(1)->opcode() == Opcode::kConstant) {
    return false;
  }
  if (inst->shape().IsArray()) {
    int64_t operand_elements = 0;
    for (const Instruction* op : inst->operands()) {
      if (op->shape().IsArray()) operand_elements += op->shape().ElementsIn();
    }
    if (std::max(inst->shape().ElementsIn(), operand_elements) >
        HloConstantFolding::kMaxElements) {
      return false;
    }
  } else if (!inst->shape().IsTuple()) {
    return false;  // tokens and opaque values are no constants
  }
  return !HasSideEffectDeep(*inst) && !IsOrContainsIllegal(inst);
}

// Copies `op` (a constant-like operand) into `c`.
Instruction* CloneOperandInto(const Instruction* op, Computation* c) {
  std::vector<Instruction*> operands;
  for (const Instruction* o : op->operands()) {
    operands.push_back(CloneOperandInto(o, c));
  }
  return c->AddInstruction(op->CloneWithNewOperands(operands));
}

// Copies the value of `from` into a literal of `shape` (so the constant
// keeps the instruction's layout). False if they do not match.
bool CopyLiteral(const Literal& from, const Shape& shape, Literal* to) {
  if (shape.IsTuple()) {
    if (!from.shape().IsTuple() ||
        from.tuple_elements().size() != to->tuple_elements().size()) {
      return false;
    }
    for (size_t i = 0; i < from.tuple_elements().size(); ++i) {
      if (!CopyLiteral(from.tuple_elements()[i], shape.tuple_shapes(i),
                       &(*to->mutable_tuple_elements())[i])) {
        return false;
      }
    }
    return true;
  }
  if (!shape.IsArray() || from.is_unknown() ||
      !from.shape().EqualIgnoringLayout(shape) ||
      from.size_bytes() != to->size_bytes()) {
    return false;
  }
  if (to->size_bytes() > 0) {
    std::memcpy(to->mutable_data(), from.data(), to->size_bytes());
  }
  return true;
}

// Evaluates `inst` on copies of its operands in a scratch module. Called
// computations are shared with the original module, read-only.
std::optional<Literal> Evaluate(const Instruction* inst) {
  Module scratch("constant_folding");
  auto c = std::make_unique<Computation>("fold");
  std::vector<Instruction*> operands;
  for (const Instruction* op : inst->operands()) {
    operands.push_back(CloneOperandInto(op, c.get()));
  }
  c->set_root_instruction(
      c->AddInstruction(inst->CloneWithNewOperands(operands)));
  scratch.AddComputation(std::move(c), /*is_entry=*/true);
  InterpreterOptions options;
  options.max_while_iterations = 0;
  Interpreter interpreter(options);
  absl::StatusOr<Literal> value = interpreter.Run(scratch, {});
  if (!value.ok()) return std::nullopt;
  Literal result(inst->shape());
  if (!CopyLiteral(*value, inst->shape(), &result)) return std::nullopt;
  return result;
}

}  // namespace

absl::StatusOr<bool> HloConstantFolding::RunWith(Module* module, Rewriter& rw) {
  const absl::flat_hash_set<const Computation*> async =
      AsyncComputations(*module);
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (async.contains(inst->parent()) || !IsFoldable(inst)) return false;
        // Evaluation failures (unsupported ops, loops that would iterate,
        // unknown constant values) leave the instruction alone.
        std::optional<Literal> value = Evaluate(inst);
        if (!value.has_value()) return false;
        HLOGYM_ASSIGN_OR_RETURN(
            Instruction * constant,
            MakeConstant(rw, inst->parent(), *std::move(value)));
        return rw.ReplaceInstruction(inst, constant);
      });
}

}  // namespace hlogym
