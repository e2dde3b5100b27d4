#include "hlogym/passes/pattern_util.h"

#include <cmath>

namespace hlogym {

const Instruction* ScalarConstantOf(const Instruction* inst) {
  if (inst == nullptr) return nullptr;
  if (inst->opcode() == Opcode::kBroadcast) inst = inst->operand(0);
  if (inst->opcode() == Opcode::kConstant && inst->shape().IsArray() &&
      inst->shape().rank() == 0 && inst->has_literal() &&
      !inst->literal().is_unknown()) {
    return inst;
  }
  return nullptr;
}

namespace {

// Calls pred(literal, i) for every element; all must hold.
template <typename Pred>
bool AllElements(const Instruction* inst, Pred pred) {
  if (inst == nullptr || !inst->shape().IsArray()) return false;
  if (inst->opcode() == Opcode::kBroadcast) {
    inst = inst->operand(0);
    if (inst->opcode() != Opcode::kConstant) return false;
  }
  if (inst->opcode() != Opcode::kConstant || !inst->has_literal()) {
    return false;
  }
  const Literal& lit = inst->literal();
  if (lit.is_unknown() || !lit.shape().IsArray()) return false;
  int64_t n = lit.element_count();
  for (int64_t i = 0; i < n; ++i) {
    if (!pred(lit, i)) return false;
  }
  return true;
}

}  // namespace

bool IsAll(const Instruction* inst, double value) {
  if (std::isnan(value)) return false;
  return AllElements(inst, [&](const Literal& lit, int64_t i) {
    PrimitiveType t = lit.shape().element_type();
    if (IsComplexType(t)) {
      std::complex<double> c = lit.GetComplex(i);
      return c.real() == value && c.imag() == 0;
    }
    if (IsFloatingPointType(t)) return lit.GetAsDouble(i) == value;
    if (IsUnsignedIntegralType(t)) {
      return value >= 0 && static_cast<double>(lit.GetAsUint64(i)) == value;
    }
    return static_cast<double>(lit.GetAsInt64(i)) == value;
  });
}

bool IsAllInt(const Instruction* inst, int64_t value) {
  return AllElements(inst, [&](const Literal& lit, int64_t i) {
    PrimitiveType t = lit.shape().element_type();
    if (IsFloatingPointType(t) || IsComplexType(t)) {
      return lit.GetAsDouble(i) == static_cast<double>(value);
    }
    return lit.GetAsInt64(i) == value;
  });
}

std::optional<double> ScalarConstantValue(const Instruction* inst) {
  const Instruction* c = ScalarConstantOf(inst);
  if (c == nullptr) return std::nullopt;
  const Literal& lit = c->literal();
  PrimitiveType t = lit.shape().element_type();
  if (IsComplexType(t)) {
    if (lit.GetComplex(0).imag() != 0) return std::nullopt;
    return lit.GetComplex(0).real();
  }
  if (IsFloatingPointType(t)) return lit.GetAsDouble(0);
  if (IsUnsignedIntegralType(t)) {
    return static_cast<double>(lit.GetAsUint64(0));
  }
  return static_cast<double>(lit.GetAsInt64(0));
}

bool IsConstantOrBroadcastConstant(const Instruction* inst) {
  if (inst == nullptr) return false;
  if (inst->opcode() == Opcode::kBroadcast) inst = inst->operand(0);
  return inst->opcode() == Opcode::kConstant && inst->has_literal() &&
         !inst->literal().is_unknown();
}

bool IsNonNegative(const Instruction* inst) {
  // Complex values have no order (x*x may be negative or complex).
  if (!inst->shape().IsArray() || IsComplexType(inst->shape().element_type())) {
    return false;
  }
  switch (inst->opcode()) {
    case Opcode::kMultiply:
      return inst->operand(0) == inst->operand(1);
    case Opcode::kAbs:
    case Opcode::kExp:
    case Opcode::kIota:
      return true;
    case Opcode::kBroadcast:
      return IsNonNegative(inst->operand(0));
    case Opcode::kConstant: {
      if (!inst->has_literal() || inst->literal().is_unknown() ||
          !inst->shape().IsArray()) {
        return false;
      }
      const Literal& lit = inst->literal();
      PrimitiveType t = lit.shape().element_type();
      if (IsComplexType(t)) return false;
      if (IsUnsignedIntegralType(t) || t == PrimitiveType::kPred) return true;
      for (int64_t i = 0; i < lit.element_count(); ++i) {
        if (IsFloatingPointType(t)) {
          double v = lit.GetAsDouble(i);
          if (std::isnan(v) || v < 0 || std::signbit(v)) return false;
        } else if (lit.GetAsInt64(i) < 0) {
          return false;
        }
      }
      return true;
    }
    case Opcode::kMinimum:
      return IsNonNegative(inst->operand(0)) && IsNonNegative(inst->operand(1));
    case Opcode::kMaximum:
      return IsNonNegative(inst->operand(0)) || IsNonNegative(inst->operand(1));
    case Opcode::kPower:
      return IsNonNegative(inst->operand(0));
    case Opcode::kSelect:
      return IsNonNegative(inst->operand(1)) && IsNonNegative(inst->operand(2));
    default:
      return false;
  }
}

std::optional<Opcode> ScalarReducerOpcode(const Computation* computation) {
  if (computation == nullptr || computation->num_parameters() != 2) {
    return std::nullopt;
  }
  const Instruction* root = computation->root_instruction();
  if (root == nullptr || root->operand_count() != 2 ||
      !IsBinaryElementwise(root->opcode()) ||
      root->opcode() == Opcode::kCompare) {
    return std::nullopt;
  }
  const Instruction* p0 = computation->parameter_instruction(0);
  const Instruction* p1 = computation->parameter_instruction(1);
  if (p0 == nullptr || p1 == nullptr || !p0->shape().IsScalar() ||
      !p1->shape().IsScalar()) {
    return std::nullopt;
  }
  bool direct = root->operand(0) == p0 && root->operand(1) == p1;
  bool swapped = root->operand(0) == p1 && root->operand(1) == p0;
  Opcode op = root->opcode();
  bool commutative = op == Opcode::kAdd || op == Opcode::kMultiply ||
                     op == Opcode::kMaximum || op == Opcode::kMinimum ||
                     op == Opcode::kAnd || op == Opcode::kOr ||
                     op == Opcode::kXor;
  if (direct || (swapped && commutative)) return op;
  return std::nullopt;
}

bool HasSingleUser(const Instruction* inst) { return inst->user_count() == 1; }

bool SameElementType(const Instruction* a, const Instruction* b) {
  return a->shape().IsArray() && b->shape().IsArray() &&
         a->shape().element_type() == b->shape().element_type();
}

}  // namespace hlogym
