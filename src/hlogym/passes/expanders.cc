#include "hlogym/passes/expanders.h"

#include <cstdint>
#include <optional>

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

// The signed integer type as wide as a float type (nullopt for widths
// without one, and for unsigned formats that have no sign bit).
std::optional<PrimitiveType> SignedTypeOfWidth(PrimitiveType float_type) {
  if (float_type == PrimitiveType::kF8E8M0FNU) return std::nullopt;
  switch (BitWidth(float_type)) {
    case 8:
      return PrimitiveType::kS8;
    case 16:
      return PrimitiveType::kS16;
    case 32:
      return PrimitiveType::kS32;
    case 64:
      return PrimitiveType::kS64;
    default:
      return std::nullopt;
  }
}

// An integer constant of `like`'s element type, broadcast to its shape.
absl::StatusOr<Instruction*> IntFilledLike(Rewriter& rw, Instruction* like,
                                           int64_t value) {
  Shape s = Shape::Scalar(like->shape().element_type());
  s.SetDefaultLayout();
  Literal lit(s);
  lit.SetFromInt64(0, value);
  HLOGYM_ASSIGN_OR_RETURN(Instruction * scalar,
                          MakeConstant(rw, like->parent(), std::move(lit)));
  if (like->shape().rank() == 0) return scalar;
  return MakeBroadcastLike(rw, scalar, like->shape(), {});
}

absl::StatusOr<bool> ExpandLogistic(Instruction* logistic, Rewriter& rw) {
  if (logistic->opcode() != Opcode::kLogistic ||
      logistic->operand_count() != 1 || HasControlEdges(logistic)) {
    return false;
  }
  Instruction* x = logistic->operand(0);
  const PrimitiveType t = x->shape().element_type();
  if (!x->shape().IsArray() || (!IsFloatingPointType(t) && !IsComplexType(t))) {
    return false;
  }
  HLOGYM_ASSIGN_OR_RETURN(Instruction * one, MakeFilledLike(rw, x, 1.0));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * neg, MakeUnary(rw, Opcode::kNegate, x));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * exp, MakeUnary(rw, Opcode::kExp, neg));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * den,
                          MakeBinary(rw, Opcode::kAdd, one, exp));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * result,
                          MakeBinary(rw, Opcode::kDivide, one, den));
  if (!result->shape().Compatible(logistic->shape())) return false;
  return rw.ReplaceInstruction(logistic, result);
}

// Float bits as signed integers whose order is the float total order:
// non-negative values keep their bits, negative ones become max - bits
// (wrapping), which reverses them below zero.
absl::StatusOr<Instruction*> ToOrderedInteger(Rewriter& rw, Instruction* bits,
                                              Instruction* zero,
                                              Instruction* max) {
  HLOGYM_ASSIGN_OR_RETURN(Instruction * flipped,
                          MakeBinary(rw, Opcode::kSubtract, max, bits));
  HLOGYM_ASSIGN_OR_RETURN(
      Instruction * negative,
      MakeCompare(rw, ComparisonDirection::kLt, bits, zero));
  return MakeTernary(rw, Opcode::kSelect, negative, flipped, bits);
}

absl::StatusOr<bool> ExpandTotalOrderCompare(Instruction* compare,
                                             Rewriter& rw) {
  if (compare->opcode() != Opcode::kCompare ||
      compare->comparison_type() != ComparisonType::kTotalOrder ||
      compare->operand_count() != 2 || HasControlEdges(compare)) {
    return false;
  }
  Instruction* lhs = compare->operand(0);
  Instruction* rhs = compare->operand(1);
  const PrimitiveType t = lhs->shape().element_type();
  if (!lhs->shape().IsArray() || !IsFloatingPointType(t) ||
      rhs->shape().element_type() != t) {
    return false;
  }
  std::optional<PrimitiveType> st = SignedTypeOfWidth(t);
  if (!st.has_value()) return false;
  const int bits = BitWidth(*st);
  const int64_t max_value =
      bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  HLOGYM_ASSIGN_OR_RETURN(Instruction * lhs_bits,
                          MakeBitcastConvert(rw, lhs, *st));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * rhs_bits,
                          MakeBitcastConvert(rw, rhs, *st));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * zero, IntFilledLike(rw, lhs_bits, 0));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * max,
                          IntFilledLike(rw, lhs_bits, max_value));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * l,
                          ToOrderedInteger(rw, lhs_bits, zero, max));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * r,
                          ToOrderedInteger(rw, rhs_bits, zero, max));
  HLOGYM_ASSIGN_OR_RETURN(
      Instruction * result,
      MakeCompare(rw, compare->comparison_direction(), l, r));
  if (!result->shape().Compatible(compare->shape())) return false;
  return rw.ReplaceInstruction(compare, result);
}

}  // namespace

absl::StatusOr<bool> LogisticExpander::RunWith(Module* module, Rewriter& rw) {
  const absl::flat_hash_set<const Computation*> async =
      AsyncComputations(*module);
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (async.contains(inst->parent())) return false;
        return ExpandLogistic(inst, rw);
      });
}

absl::StatusOr<bool> ComparisonExpander::RunWith(Module* module, Rewriter& rw) {
  const absl::flat_hash_set<const Computation*> async =
      AsyncComputations(*module);
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (async.contains(inst->parent())) return false;
        return ExpandTotalOrderCompare(inst, rw);
      });
}

}  // namespace hlogym
