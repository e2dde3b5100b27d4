// AlgebraicSimplifier rules, checklist entries 64-137: divide, dot,
// dynamic-slice / dynamic-update-slice, transcendental and complex ops,
// gather / scatter, maximum / minimum / clamp, multiply and pad.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/algebraic_simplifier.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/pattern_util.h"

namespace hlogym {
namespace {

using Rule = absl::StatusOr<bool>;

// Builder failures mean "this input does not fit the rewrite": the rule
// reports no match instead of failing the pass. Anything already built is
// unused and pruned when the run finishes.
#define P2_CONCAT_INNER(a, b) a##b
#define P2_CONCAT(a, b) P2_CONCAT_INNER(a, b)
#define P2_BUILD(lhs, ...) \
  P2_BUILD_IMPL(P2_CONCAT(p2_tmp_, __LINE__), lhs, (__VA_ARGS__))
#define P2_BUILD_IMPL(tmp, lhs, expr) \
  auto tmp = expr;                    \
  if (!tmp.ok()) return false;        \
  lhs = *tmp

// ---------------------------------------------------------------------------
// Small helpers.

std::span<const int64_t> Span(const DimVector& v) {
  return std::span<const int64_t>(v.data(), v.size());
}
std::span<const int64_t> Span(const std::vector<int64_t>& v) {
  return std::span<const int64_t>(v.data(), v.size());
}

bool IsArray(const Instruction* i) { return i->shape().IsArray(); }
PrimitiveType Type(const Instruction* i) { return i->shape().element_type(); }
bool Is(const Instruction* i, Opcode op) { return i->opcode() == op; }
bool IsFloatOrComplex(PrimitiveType t) {
  return IsFloatingPointType(t) || IsComplexType(t);
}
bool HasOneUse(const Instruction* i) { return i->user_count() == 1; }
// A constant with known contents (XLA's m::Constant).
bool IsKnownConstant(const Instruction* i) {
  return i->opcode() == Opcode::kConstant && i->has_literal() &&
         !i->literal().is_unknown() && i->shape().IsArray();
}
// An array shape of `inst` with every dimension static (the rules below
// reason about sizes).
bool StaticArray(const Instruction* i) {
  if (!i->shape().IsArray()) return false;
  for (int64_t d = 0; d < i->shape().rank(); ++d) {
    if (i->shape().is_dynamic_dimension(d) || i->shape().dimensions(d) < 0) {
      return false;
    }
  }
  return true;
}

Rule Replace(AlgebraicContext& ctx, Instruction* old, Instruction* with) {
  return ReplaceForRule(ctx, old, with);
}

// Integral value of a scalar integral constant (used for indices).
std::optional<int64_t> ConstantIndexValue(const Instruction* i) {
  if (!IsKnownConstant(i) || i->shape().rank() != 0) return std::nullopt;
  PrimitiveType t = Type(i);
  if (IsUnsignedIntegralType(t)) {
    uint64_t v = i->literal().GetAsUint64(0);
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return std::numeric_limits<int64_t>::max();
    }
    return static_cast<int64_t>(v);
  }
  if (IsSignedIntegralType(t)) return i->literal().GetAsInt64(0);
  return std::nullopt;
}

// The single scalar of a constant with one element, or of a broadcast of
// one (XLA's ConstantEffectiveScalar, optionally under a broadcast).
const Instruction* EffectiveScalarConstant(const Instruction* i,
                                           bool allow_broadcast) {
  if (allow_broadcast && i->opcode() == Opcode::kBroadcast &&
      i->operand_count() == 1) {
    i = i->operand(0);
  }
  if (!IsKnownConstant(i) || i->shape().ElementsIn() != 1) return nullptr;
  return i;
}

// Scalar index operands of the same integral type.
bool IndicesOk(const Instruction* inst, int64_t first, int64_t count) {
  if (inst->operand_count() != first + count) return false;
  for (int64_t i = first; i < first + count; ++i) {
    const Instruction* idx = inst->operand(i);
    if (!idx->shape().IsScalar() || !IsIntegralType(Type(idx))) return false;
    if (Type(idx) != Type(inst->operand(first))) return false;
  }
  return true;
}

// XLA skips dynamic-slice rewrites inside async computations. Those hold
// only parameters and their root, so callers are looked up (a module scan)
// only for computations of that form.
bool InAsyncComputation(const Instruction* inst, AlgebraicContext& ctx) {
  const Computation* c = inst->parent();
  if (c == nullptr) return true;
  if (c->IsAsyncWrapper() ||
      (!c->execution_thread().empty() && c->execution_thread() != "main")) {
    return true;
  }
  if (c->root_instruction() != inst ||
      c->instruction_count() != c->num_parameters() + 1 ||
      c->parent() == nullptr) {
    return false;
  }
  return ctx.async.CalledByAsyncOp(c);
}

// dynamic-slice(operand, scalar indices...) with sizes for every dim.
bool WellFormedDynamicSlice(const Instruction* ds) {
  if (ds->operand_count() < 1 || !StaticArray(ds) ||
      !StaticArray(ds->operand(0))) {
    return false;
  }
  const int64_t rank = ds->operand(0)->shape().rank();
  const auto& sizes = ds->attrs().dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != rank ||
      ds->shape().rank() != rank) {
    return false;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || sizes[d] > ds->operand(0)->shape().dimensions(d)) {
      return false;
    }
  }
  return rank == 0 ? ds->operand_count() == 1 : IndicesOk(ds, 1, rank);
}

// dynamic-update-slice(operand, update, scalar indices...).
bool WellFormedDynamicUpdateSlice(const Instruction* dus) {
  if (dus->operand_count() < 2 || !StaticArray(dus) ||
      !StaticArray(dus->operand(0)) || !StaticArray(dus->operand(1))) {
    return false;
  }
  const int64_t rank = dus->operand(0)->shape().rank();
  if (dus->operand(1)->shape().rank() != rank) return false;
  for (int64_t d = 0; d < rank; ++d) {
    if (dus->operand(1)->shape().dimensions(d) >
        dus->operand(0)->shape().dimensions(d)) {
      return false;
    }
  }
  return rank == 0 ? dus->operand_count() == 2 : IndicesOk(dus, 2, rank);
}

std::vector<Instruction*> Indices(const Instruction* inst, int64_t first) {
  std::vector<Instruction*> out;
  for (int64_t i = first; i < inst->operand_count(); ++i) {
    out.push_back(inst->operand(i));
  }
  return out;
}

// Every element of a constant (or broadcast constant) has exactly `bits`.
bool AllElementsHaveBits(const Instruction* inst, uint64_t bits) {
  if (inst->opcode() == Opcode::kBroadcast && inst->operand_count() == 1) {
    inst = inst->operand(0);
  }
  if (!IsKnownConstant(inst)) return false;
  const Literal& lit = inst->literal();
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (lit.GetBits(i) != bits) return false;
  }
  return true;
}

// Bits of the lowest (or highest) value of an integral or floating type;
// nullopt where XLA's MinValue/MaxValue is not an infinity or an integer
// bound we model.
std::optional<uint64_t> ExtremeBits(PrimitiveType t, bool highest) {
  if (IsIntegralType(t)) {
    const int w = BitWidth(t);
    if (w < 8 || w > 64) return std::nullopt;  // sub-byte storage varies
    const uint64_t mask = w == 64 ? ~uint64_t{0} : ((uint64_t{1} << w) - 1);
    if (IsUnsignedIntegralType(t)) return highest ? mask : 0;
    const uint64_t sign = uint64_t{1} << (w - 1);
    return highest ? (sign - 1) : sign;
  }
  if (IsFloatingPointType(t)) {
    if (std::optional<FloatFormat> f = SmallFloatFormat(t)) {
      if (!f->has_inf) return std::nullopt;
    } else if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) {
      return std::nullopt;
    }
    uint64_t bits = 0;
    double v = highest ? std::numeric_limits<double>::infinity()
                       : -std::numeric_limits<double>::infinity();
    if (!FloatToBits(t, v, &bits)) return std::nullopt;
    return bits;
  }
  return std::nullopt;
}

// a < b for two one-element constants of the same real type.
std::optional<bool> ConstantLess(const Instruction* a, const Instruction* b) {
  if (Type(a) != Type(b)) return std::nullopt;
  PrimitiveType t = Type(a);
  const Literal& la = a->literal();
  const Literal& lb = b->literal();
  if (IsUnsignedIntegralType(t)) return la.GetAsUint64(0) < lb.GetAsUint64(0);
  if (IsSignedIntegralType(t)) return la.GetAsInt64(0) < lb.GetAsInt64(0);
  if (IsFloatingPointType(t)) return la.GetAsDouble(0) < lb.GetAsDouble(0);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Divide (64-74).

bool PlainBinary(const Instruction* inst) {
  return inst->operand_count() == 2 && IsArray(inst) &&
         IsArray(inst->operand(0)) && IsArray(inst->operand(1));
}

// 64. A / 1 -> A.
Rule DivideOne(Instruction* div, AlgebraicContext& ctx) {
  if (!PlainBinary(div) || !IsAll(div->operand(1), 1)) return false;
  return Replace(ctx, div, div->operand(0));
}

// 65. Integer A / 2^k -> shifts; signed keeps round-toward-zero by shifting
// |A| and restoring the sign.
Rule DividePowerOfTwo(Instruction* div, AlgebraicContext& ctx) {
  if (!PlainBinary(div)) return false;
  const PrimitiveType t = Type(div);
  const int w = BitWidth(t);
  if (!IsIntegralType(t) || (w != 8 && w != 16 && w != 32 && w != 64)) {
    return false;
  }
  Instruction* a = div->operand(0);
  if (!SameElementType(a, div) || !SameElementType(div->operand(1), div)) {
    return false;
  }
  const Instruction* c = EffectiveScalarConstant(div->operand(1), true);
  if (c == nullptr) return false;
  if (IsSignedIntegralType(t)) {
    const int64_t v = c->literal().GetAsInt64(0);
    if (v <= 0 || !std::has_single_bit(static_cast<uint64_t>(v))) return false;
    const int k = std::countr_zero(static_cast<uint64_t>(v));
    Instruction *zero, *negative, *neg_a, *abs_a, *amount, *q, *neg_q, *out;
    P2_BUILD(zero, MakeFilledLike(ctx.rw, a, 0));
    P2_BUILD(negative, MakeCompare(ctx.rw, ComparisonDirection::kLt, a, zero));
    P2_BUILD(neg_a, MakeUnary(ctx.rw, Opcode::kNegate, a));
    P2_BUILD(abs_a, MakeTernary(ctx.rw, Opcode::kSelect, negative, neg_a, a));
    P2_BUILD(amount, MakeFilledLike(ctx.rw, abs_a, k));
    P2_BUILD(q, MakeBinary(ctx.rw, Opcode::kShiftRightLogical, abs_a, amount));
    P2_BUILD(neg_q, MakeUnary(ctx.rw, Opcode::kNegate, q));
    P2_BUILD(out, MakeTernary(ctx.rw, Opcode::kSelect, negative, neg_q, q));
    return Replace(ctx, div, out);
  }
  const uint64_t v = c->literal().GetAsUint64(0);
  if (!std::has_single_bit(v)) return false;
  Instruction *amount, *out;
  P2_BUILD(amount, MakeFilledLike(ctx.rw, a, std::countr_zero(v)));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kShiftRightLogical, a, amount));
  return Replace(ctx, div, out);
}

// The rewrites 66-74 are for floating-point and complex division only.
bool FloatDivide(const Instruction* div) {
  return PlainBinary(div) && IsFloatOrComplex(Type(div));
}

// 66. exp(A) / exp(B) -> exp(A - B).
Rule DivideExpExp(Instruction* div, AlgebraicContext& ctx) {
  if (!FloatDivide(div)) return false;
  Instruction* x = div->operand(0);
  Instruction* y = div->operand(1);
  if (!Is(x, Opcode::kExp) || !Is(y, Opcode::kExp)) return false;
  Instruction *sub, *out;
  P2_BUILD(sub,
           MakeBinary(ctx.rw, Opcode::kSubtract, x->operand(0), y->operand(0)));
  P2_BUILD(out, MakeUnary(ctx.rw, Opcode::kExp, sub));
  return Replace(ctx, div, out);
}

// 67. A / exp(B) -> A * exp(-B).
Rule DivideExp(Instruction* div, AlgebraicContext& ctx) {
  if (!FloatDivide(div) || !Is(div->operand(1), Opcode::kExp)) return false;
  Instruction *neg, *e, *out;
  P2_BUILD(neg,
           MakeUnary(ctx.rw, Opcode::kNegate, div->operand(1)->operand(0)));
  P2_BUILD(e, MakeUnary(ctx.rw, Opcode::kExp, neg));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, div->operand(0), e));
  return Replace(ctx, div, out);
}

// 68. A / pow(B, C) -> A * pow(B, -C).
Rule DividePower(Instruction* div, AlgebraicContext& ctx) {
  if (!FloatDivide(div) || !Is(div->operand(1), Opcode::kPower)) return false;
  Instruction* p = div->operand(1);
  if (p->operand_count() != 2) return false;
  Instruction *neg, *pw, *out;
  P2_BUILD(neg, MakeUnary(ctx.rw, Opcode::kNegate, p->operand(1)));
  P2_BUILD(pw, MakeBinary(ctx.rw, Opcode::kPower, p->operand(0), neg));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, div->operand(0), pw));
  return Replace(ctx, div, out);
}

// 69. A / sqrt(B) -> A * rsqrt(B) and A / rsqrt(B) -> A * sqrt(B), when the
// divisor has no other use (otherwise both roots would be computed).
Rule DivideRoot(Instruction* div, AlgebraicContext& ctx, Opcode root,
                Opcode inverse) {
  if (!FloatDivide(div)) return false;
  Instruction* r = div->operand(1);
  if (!Is(r, root) || !HasOneUse(r)) return false;
  Instruction *inv, *out;
  P2_BUILD(inv, MakeUnary(ctx.rw, inverse, r->operand(0)));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, div->operand(0), inv));
  return Replace(ctx, div, out);
}
Rule DivideSqrt(Instruction* div, AlgebraicContext& ctx) {
  return DivideRoot(div, ctx, Opcode::kSqrt, Opcode::kRsqrt);
}
Rule DivideRsqrt(Instruction* div, AlgebraicContext& ctx) {
  return DivideRoot(div, ctx, Opcode::kRsqrt, Opcode::kSqrt);
}

// 70. A / C -> A * (1/C) for a constant (or broadcast constant) C, with the
// reciprocal folded into a new constant.
Rule DivideConstant(Instruction* div, AlgebraicContext& ctx) {
  if (!FloatDivide(div)) return false;
  Instruction* a = div->operand(0);
  Instruction* b = div->operand(1);
  if (Is(a, Opcode::kConstant)) return false;
  Instruction* c = b;
  if (Is(b, Opcode::kBroadcast) && b->operand_count() == 1) c = b->operand(0);
  if (!IsKnownConstant(c) || Type(c) != Type(b)) return false;
  const PrimitiveType t = Type(c);
  switch (t) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
      break;
    default:
      return false;
  }
  const Literal& lit = c->literal();
  Literal inverse(lit.shape());
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (IsComplexType(t)) {
      inverse.SetComplex(i, std::complex<double>(1.0) / lit.GetComplex(i));
    } else if (!inverse.SetFromDouble(i, 1.0 / lit.GetAsDouble(i))) {
      return false;  // the reciprocal overflows the type
    }
  }
  Instruction *inv, *out;
  P2_BUILD(inv, MakeConstant(ctx.rw, c->parent(), std::move(inverse)));
  if (b != c) {
    P2_BUILD(inv, MakeBroadcast(ctx.rw, inv, Span(b->shape().dimensions()),
                                Span(b->dimensions())));
  }
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, a, inv));
  return Replace(ctx, div, out);
}

// 71. (A/B) / (C/D) -> (A*D) / (B*C).
Rule DivideOfDivides(Instruction* div, AlgebraicContext& ctx) {
  if (!FloatDivide(div)) return false;
  Instruction* x = div->operand(0);
  Instruction* y = div->operand(1);
  if (!Is(x, Opcode::kDivide) || !Is(y, Opcode::kDivide)) return false;
  Instruction *ad, *bc, *out;
  P2_BUILD(ad,
           MakeBinary(ctx.rw, Opcode::kMultiply, x->operand(0), y->operand(1)));
  P2_BUILD(bc,
           MakeBinary(ctx.rw, Opcode::kMultiply, x->operand(1), y->operand(0)));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kDivide, ad, bc));
  return Replace(ctx, div, out);
}

// 72. (A/B) / C -> A / (B*C).
Rule DivideDividend(Instruction* div, AlgebraicContext& ctx) {
  if (!FloatDivide(div) || !Is(div->operand(0), Opcode::kDivide)) {
    return false;
  }
  Instruction* x = div->operand(0);
  Instruction *bc, *out;
  P2_BUILD(bc, MakeBinary(ctx.rw, Opcode::kMultiply, x->operand(1),
                          div->operand(1)));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kDivide, x->operand(0), bc));
  return Replace(ctx, div, out);
}

// 73. A / (B/C) -> (A*C) / B.
Rule DivideDivisor(Instruction* div, AlgebraicContext& ctx) {
  if (!FloatDivide(div) || !Is(div->operand(1), Opcode::kDivide)) {
    return false;
  }
  Instruction* y = div->operand(1);
  Instruction *ac, *out;
  P2_BUILD(ac, MakeBinary(ctx.rw, Opcode::kMultiply, div->operand(0),
                          y->operand(1)));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kDivide, ac, y->operand(0)));
  return Replace(ctx, div, out);
}

// 74. convert(pred) / broadcast(scalar y) -> broadcast(1/y) * convert(pred):
// one scalar division instead of one per element.
Rule DivideConvertPred(Instruction* div, AlgebraicContext& ctx) {
  if (!FloatDivide(div)) return false;
  Instruction* a = div->operand(0);
  Instruction* b = div->operand(1);
  if (!Is(a, Opcode::kConvert) || a->operand_count() != 1 ||
      Type(a->operand(0)) != PrimitiveType::kPred) {
    return false;
  }
  if (!Is(b, Opcode::kBroadcast) || b->operand_count() != 1 ||
      !b->operand(0)->shape().IsScalar()) {
    return false;
  }
  Instruction* y = b->operand(0);
  if (Type(y) != Type(div) || Type(a) != Type(div)) return false;
  Instruction *one, *recip, *bcast, *out;
  P2_BUILD(one, MakeScalarLike(ctx.rw, y, 1));
  P2_BUILD(recip, MakeBinary(ctx.rw, Opcode::kDivide, one, y));
  P2_BUILD(bcast, MakeBroadcast(ctx.rw, recip, Span(div->shape().dimensions()),
                                std::span<const int64_t>()));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, bcast, a));
  return Replace(ctx, div, out);
}

// ---------------------------------------------------------------------------
// Dot (75-87). HandleDot runs only when the pass is layout-insensitive.

bool DimsValid(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

// A dense two-operand dot with consistent dimension numbers (a dot written
// without any has empty ones).
const DotDimensionNumbers* DotNumbers(const Instruction* dot) {
  static const DotDimensionNumbers kNone;
  if (dot->operand_count() != 2 || !dot->attrs().sparsity_config.empty() ||
      !StaticArray(dot) || !StaticArray(dot->operand(0)) ||
      !StaticArray(dot->operand(1))) {
    return nullptr;
  }
  const DotDimensionNumbers& dn =
      dot->attrs().dot_dnums.has_value() ? *dot->attrs().dot_dnums : kNone;
  const int64_t lr = dot->operand(0)->shape().rank();
  const int64_t rr = dot->operand(1)->shape().rank();
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size() ||
      dn.lhs_contracting_dimensions.size() !=
          dn.rhs_contracting_dimensions.size()) {
    return nullptr;
  }
  std::vector<int64_t> l = dn.lhs_batch_dimensions;
  l.insert(l.end(), dn.lhs_contracting_dimensions.begin(),
           dn.lhs_contracting_dimensions.end());
  std::vector<int64_t> r = dn.rhs_batch_dimensions;
  r.insert(r.end(), dn.rhs_contracting_dimensions.begin(),
           dn.rhs_contracting_dimensions.end());
  if (!DimsValid(l, lr) || !DimsValid(r, rr)) return nullptr;
  const Shape& ls = dot->operand(0)->shape();
  const Shape& rs = dot->operand(1)->shape();
  for (size_t i = 0; i < l.size(); ++i) {
    if (ls.dimensions(l[i]) != rs.dimensions(r[i])) return nullptr;
  }
  const int64_t out_rank = static_cast<int64_t>(lr + rr - l.size() - r.size() +
                                                dn.lhs_batch_dimensions.size());
  if (dot->shape().rank() != out_rank) return nullptr;
  return &dn;
}

bool AlgorithmUnset(const Instruction* dot) {
  const std::string& a = dot->attrs().algorithm;
  return a.empty() || a == "unset" || a == "alg_unset";
}

// Transposes x to [batch..., other..., contracting...] (no-op if already).
absl::StatusOr<Instruction*> BatchMajorContractingMinor(
    Rewriter& rw, Instruction* x, const std::vector<int64_t>& batch,
    const std::vector<int64_t>& contracting) {
  std::vector<int64_t> perm = batch;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) ==
            contracting.end()) {
      perm.push_back(d);
    }
  }
  perm.insert(perm.end(), contracting.begin(), contracting.end());
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    identity &= perm[i] == static_cast<int64_t>(i);
  }
  if (identity) return x;
  return MakeTranspose(rw, x, Span(perm));
}

absl::StatusOr<Instruction*> ConvertTo(Rewriter& rw, Instruction* x,
                                       PrimitiveType t) {
  if (Type(x) == t) return x;
  return MakeConvert(rw, x, t);
}

// 77 (guard). A dot whose only user is a Sharding custom call marked
// unreduced keeps its form: the later dot rules leave it alone.
bool FeedsUnreducedSharding(const Instruction* dot) {
  if (dot->user_count() != 1) return false;
  const Instruction* u = dot->users()[0];
  if (!Is(u, Opcode::kCustomCall) ||
      u->attrs().custom_call_target != "Sharding" ||
      !u->attrs().sharding.has_value()) {
    return false;
  }
  const Sharding& s = *u->attrs().sharding;
  if (s.kind == Sharding::Kind::kUnreduced) return true;
  return std::find(s.last_tile_dims.begin(), s.last_tile_dims.end(),
                   "unreduced") != s.last_tile_dims.end();
}

// 75. A dot with a zero-element result or operand -> broadcast(0).
Rule DotZeroSize(Instruction* dot, AlgebraicContext& ctx) {
  if (ctx.options.is_layout_sensitive || DotNumbers(dot) == nullptr) {
    return false;
  }
  if (dot->shape().ElementsIn() != 0 &&
      dot->operand(0)->shape().ElementsIn() != 0 &&
      dot->operand(1)->shape().ElementsIn() != 0) {
    return false;
  }
  Instruction* zero;
  P2_BUILD(zero, MakeFilledLike(ctx.rw, dot, 0));
  return Replace(ctx, dot, zero);
}

// 76. A dot without contracting dims is an outer product:
// multiply(broadcast(lhs), broadcast(rhs)) in batch-major order.
Rule DotToMultiply(Instruction* dot, AlgebraicContext& ctx) {
  if (ctx.options.is_layout_sensitive ||
      !ctx.options.enable_dot_to_multiply_rewrite) {
    return false;
  }
  const DotDimensionNumbers* dn = DotNumbers(dot);
  if (dn == nullptr || !dn->lhs_contracting_dimensions.empty()) return false;
  if (!AlgorithmUnset(dot) && dot->attrs().algorithm != "dot_f32_f32_f32") {
    return false;
  }
  const PrimitiveType t = Type(dot);
  if (t == PrimitiveType::kPred) return false;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  const int64_t lrank = lhs->shape().rank();
  const int64_t out_rank = dot->shape().rank();
  const int64_t nb = static_cast<int64_t>(dn->lhs_batch_dimensions.size());
  Instruction *new_lhs, *new_rhs, *out;
  P2_BUILD(new_lhs, BatchMajorContractingMinor(ctx.rw, lhs,
                                               dn->lhs_batch_dimensions, {}));
  P2_BUILD(new_lhs, ConvertTo(ctx.rw, new_lhs, t));
  P2_BUILD(new_rhs, BatchMajorContractingMinor(ctx.rw, rhs,
                                               dn->rhs_batch_dimensions, {}));
  P2_BUILD(new_rhs, ConvertTo(ctx.rw, new_rhs, t));
  if (out_rank != lrank) {
    std::vector<int64_t> dims(lrank);
    std::iota(dims.begin(), dims.end(), 0);
    P2_BUILD(new_lhs,
             MakeBroadcast(ctx.rw, new_lhs, Span(dot->shape().dimensions()),
                           Span(dims)));
  }
  if (out_rank != rhs->shape().rank()) {
    std::vector<int64_t> dims(nb);
    std::iota(dims.begin(), dims.end(), 0);
    for (int64_t i = lrank; i < out_rank; ++i) dims.push_back(i);
    P2_BUILD(new_rhs,
             MakeBroadcast(ctx.rw, new_rhs, Span(dot->shape().dimensions()),
                           Span(dims)));
  }
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, new_lhs, new_rhs));
  return Replace(ctx, dot, out);
}

// Shared entry checks of the dot rules after the unreduced guard (77).
const DotDimensionNumbers* GuardedDot(const Instruction* dot,
                                      const AlgebraicContext& ctx) {
  if (ctx.options.is_layout_sensitive) return nullptr;
  const DotDimensionNumbers* dn = DotNumbers(dot);
  if (dn == nullptr || FeedsUnreducedSharding(dot)) return nullptr;
  return dn;
}

int64_t ElementsOf(const Shape& s, const std::vector<int64_t>& dims,
                   bool complement) {
  int64_t n = 1;
  for (int64_t d = 0; d < s.rank(); ++d) {
    bool in = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (in != complement) n *= s.dimensions(d);
  }
  return n;
}

// A scalar add computation of `type`: one the module already calls when
// there is one (no new computation to carry; an uncalled one would be
// pruned with a rejected candidate), else a new one.
absl::StatusOr<Computation*> AddReducer(Rewriter& rw, PrimitiveType type) {
  Module* module = rw.module();
  auto callers = module->Callers();
  for (const auto& c : module->computations()) {
    if (c->IsFusionComputation() || c.get() == module->entry_computation() ||
        !callers.contains(c.get())) {
      continue;
    }
    if (ScalarReducerOpcode(c.get()) == Opcode::kAdd &&
        c->root_instruction()->shape().element_type() == type &&
        c->parameter_instruction(0)->shape().element_type() == type &&
        c->parameter_instruction(1)->shape().element_type() == type) {
      return c.get();
    }
  }
  return MakeScalarReducer(rw, Opcode::kAdd, type);
}

// 80. A dot where one operand has only batch and contracting dims becomes
// reduce(multiply(broadcast(...))). GPU decision (section 4.2): always for
// vector x vector, otherwise when (lhs_nc + rhs_nc) * contracting elements
// stay below the size limit. Accumulates in f32 (f64 for f64; integers and
// complex in their own type) and converts back.
Rule DotStrengthReduction(Instruction* dot, AlgebraicContext& ctx) {
  if (!ctx.options.enable_dot_strength_reduction) return false;
  const DotDimensionNumbers* dn = GuardedDot(dot, ctx);
  if (dn == nullptr || dn->lhs_contracting_dimensions.empty() ||
      !AlgorithmUnset(dot)) {
    return false;
  }
  const PrimitiveType t = Type(dot);
  if (t == PrimitiveType::kPred) return false;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  const int64_t nb = static_cast<int64_t>(dn->lhs_batch_dimensions.size());
  const int64_t nc =
      static_cast<int64_t>(dn->lhs_contracting_dimensions.size());
  const int64_t lhs_outer = lhs->shape().rank() - nb - nc;
  const int64_t rhs_outer = rhs->shape().rank() - nb - nc;
  if (lhs_outer != 0 && rhs_outer != 0) return false;
  if (lhs_outer != 0 || rhs_outer != 0) {
    std::vector<int64_t> lb = dn->lhs_batch_dimensions;
    lb.insert(lb.end(), dn->lhs_contracting_dimensions.begin(),
              dn->lhs_contracting_dimensions.end());
    std::vector<int64_t> rb = dn->rhs_batch_dimensions;
    rb.insert(rb.end(), dn->rhs_contracting_dimensions.begin(),
              dn->rhs_contracting_dimensions.end());
    const double lhs_nc =
        static_cast<double>(ElementsOf(lhs->shape(), lb, true));
    const double rhs_nc =
        static_cast<double>(ElementsOf(rhs->shape(), rb, true));
    const double k = static_cast<double>(
        ElementsOf(lhs->shape(), dn->lhs_contracting_dimensions, false));
    if ((lhs_nc + rhs_nc) * k >=
        static_cast<double>(ctx.options.dot_strength_reduction_size_limit)) {
      return false;
    }
  }
  PrimitiveType acc = t;
  if (IsFloatingPointType(t)) {
    acc = t == PrimitiveType::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
  }
  Instruction *new_lhs, *new_rhs, *product, *init, *sum, *out;
  P2_BUILD(new_lhs,
           BatchMajorContractingMinor(ctx.rw, lhs, dn->lhs_batch_dimensions,
                                      dn->lhs_contracting_dimensions));
  P2_BUILD(new_lhs, ConvertTo(ctx.rw, new_lhs, t));
  P2_BUILD(new_rhs,
           BatchMajorContractingMinor(ctx.rw, rhs, dn->rhs_batch_dimensions,
                                      dn->rhs_contracting_dimensions));
  P2_BUILD(new_rhs, ConvertTo(ctx.rw, new_rhs, t));
  const int64_t outer = std::max(lhs_outer, rhs_outer);
  // The vector side gets the other side's outer dims (after the batch dims).
  auto widen = [&](Instruction* vec,
                   Instruction* full) -> absl::StatusOr<Instruction*> {
    std::vector<int64_t> dims(nb);
    std::iota(dims.begin(), dims.end(), 0);
    for (int64_t i = 0; i < nc; ++i) dims.push_back(nb + outer + i);
    return MakeBroadcast(ctx.rw, vec, Span(full->shape().dimensions()),
                         Span(dims));
  };
  if (rhs_outer > 0) {
    P2_BUILD(new_lhs, widen(new_lhs, new_rhs));
  } else if (lhs_outer > 0) {
    P2_BUILD(new_rhs, widen(new_rhs, new_lhs));
  }
  P2_BUILD(product, MakeBinary(ctx.rw, Opcode::kMultiply, new_lhs, new_rhs));
  P2_BUILD(product, ConvertTo(ctx.rw, product, acc));
  std::vector<int64_t> reduce_dims(nc);
  std::iota(reduce_dims.begin(), reduce_dims.end(), nb + outer);
  Computation* reducer;
  P2_BUILD(reducer, AddReducer(ctx.rw, acc));
  P2_BUILD(init, MakeScalarConstant(ctx.rw, dot->parent(), acc, 0));
  P2_BUILD(sum, MakeReduce(ctx.rw, product, init, Span(reduce_dims), reducer));
  P2_BUILD(out, ConvertTo(ctx.rw, sum, t));
  return Replace(ctx, dot, out);
}

// 81. dot(reshape(transpose(A)), C) with C constant, where the reshape
// merges a consecutive run of the transpose's dims into the single
// contracting dim and the transpose only permutes inside that run ->
// dot(reshape(A), reshape(transpose(reshape(C)))): the C side folds.
Rule DotReshapeTransposeConstant(Instruction* dot, AlgebraicContext& ctx) {
  const DotDimensionNumbers* dn = GuardedDot(dot, ctx);
  if (dn == nullptr || dn->lhs_contracting_dimensions.size() != 1) {
    return false;
  }
  for (int side = 0; side < 2; ++side) {
    Instruction* reshape = dot->operand(side);
    Instruction* constant = dot->operand(1 - side);
    const int64_t cl = side == 0 ? dn->lhs_contracting_dimensions[0]
                                 : dn->rhs_contracting_dimensions[0];
    const int64_t cr = side == 0 ? dn->rhs_contracting_dimensions[0]
                                 : dn->lhs_contracting_dimensions[0];
    if (!Is(reshape, Opcode::kReshape) || !IsKnownConstant(constant) ||
        !Is(reshape->operand(0), Opcode::kTranspose)) {
      continue;
    }
    Instruction* transpose = reshape->operand(0);
    Instruction* a = transpose->operand(0);
    if (!StaticArray(a) || !StaticArray(transpose)) continue;
    const Shape& ts = transpose->shape();
    const Shape& rs = reshape->shape();
    const int64_t k = ts.rank() - rs.rank() + 1;  // dims merged into cl
    const int64_t s = cl;
    if (k < 2 || s + k > ts.rank()) continue;
    bool ok = true;
    for (int64_t i = 0; i < s; ++i) ok &= ts.dimensions(i) == rs.dimensions(i);
    for (int64_t i = s + k; i < ts.rank(); ++i) {
      ok &= ts.dimensions(i) == rs.dimensions(i - k + 1);
    }
    int64_t run = 1;
    for (int64_t i = s; i < s + k; ++i) run *= ts.dimensions(i);
    ok &= run == rs.dimensions(s);
    const DimVector& p = transpose->dimensions();
    if (!ok || static_cast<int64_t>(p.size()) != ts.rank()) continue;
    bool identity = true;
    for (int64_t i = 0; i < ts.rank(); ++i) {
      const bool in_run = i >= s && i < s + k;
      if (!in_run && p[i] != i) ok = false;
      if (in_run && (p[i] < s || p[i] >= s + k)) ok = false;
      identity &= p[i] == i;
    }
    if (!ok || identity) continue;
    // T[t] = A[a] with t_i = a_{p[i]}; the new constant R' must satisfy
    // R'[.., lin(a), ..] = R[.., lin(t), ..]: unsquish, transpose by the
    // inverse of p inside the run, squish.
    std::vector<int64_t> inv(ts.rank());
    for (int64_t i = 0; i < ts.rank(); ++i) inv[p[i]] = i;
    const Shape& cs = constant->shape();
    if (cr < 0 || cr >= cs.rank()) continue;
    std::vector<int64_t> unsquished;
    for (int64_t d = 0; d < cs.rank(); ++d) {
      if (d == cr) {
        for (int64_t i = s; i < s + k; ++i) {
          unsquished.push_back(ts.dimensions(i));
        }
      } else {
        unsquished.push_back(cs.dimensions(d));
      }
    }
    std::vector<int64_t> perm(unsquished.size());
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t j = s; j < s + k; ++j) perm[cr + (j - s)] = cr + (inv[j] - s);
    Instruction *new_a, *r1, *r2, *r3, *out;
    P2_BUILD(new_a, MakeReshape(ctx.rw, a, Span(rs.dimensions())));
    P2_BUILD(r1, MakeReshape(ctx.rw, constant, Span(unsquished)));
    P2_BUILD(r2, MakeTranspose(ctx.rw, r1, Span(perm)));
    P2_BUILD(r3, MakeReshape(ctx.rw, r2, Span(cs.dimensions())));
    Instruction* ops[2];
    ops[side] = new_a;
    ops[1 - side] = r3;
    P2_BUILD(out, CloneWithNewOperands(ctx.rw, dot, dot->shape(), ops));
    return Replace(ctx, dot, out);
  }
  return false;
}

// 82. dot(concat(L_i) along the contracting dim, constant R) ->
// sum_i dot(L_i, slice_i(R)) for 2-D dots without batch dims, one
// contracting dim, either operand order.
Rule DotConcatConstant(Instruction* dot, AlgebraicContext& ctx) {
  const DotDimensionNumbers* dn = GuardedDot(dot, ctx);
  if (dn == nullptr || dn->lhs_contracting_dimensions.size() != 1 ||
      !dn->lhs_batch_dimensions.empty() || dot->shape().rank() != 2 ||
      dot->operand(0)->shape().rank() != 2 ||
      dot->operand(1)->shape().rank() != 2) {
    return false;
  }
  for (int side = 0; side < 2; ++side) {
    Instruction* concat = dot->operand(side);
    Instruction* constant = dot->operand(1 - side);
    const int64_t concat_dim = side == 0 ? dn->lhs_contracting_dimensions[0]
                                         : dn->rhs_contracting_dimensions[0];
    const int64_t c_dim = side == 0 ? dn->rhs_contracting_dimensions[0]
                                    : dn->lhs_contracting_dimensions[0];
    if (!Is(concat, Opcode::kConcatenate) || !IsKnownConstant(constant) ||
        concat->dimensions().size() != 1 ||
        concat->dimensions(0) != concat_dim || concat->operand_count() < 2) {
      continue;
    }
    const int64_t n = constant->shape().dimensions(1 - c_dim);
    Instruction* sum = nullptr;
    int64_t offset = 0;
    for (Instruction* piece : concat->operands()) {
      if (!StaticArray(piece) || piece->shape().rank() != 2) return false;
      const int64_t sub_k = piece->shape().dimensions(concat_dim);
      int64_t starts[2], limits[2];
      const int64_t strides[2] = {1, 1};
      starts[c_dim] = offset;
      limits[c_dim] = offset + sub_k;
      starts[1 - c_dim] = 0;
      limits[1 - c_dim] = n;
      Instruction *slice, *part;
      P2_BUILD(slice, MakeSlice(ctx.rw, constant, starts, limits, strides));
      Instruction* ops[2];
      ops[side] = piece;
      ops[1 - side] = slice;
      P2_BUILD(part, CloneWithNewOperands(ctx.rw, dot, dot->shape(), ops));
      if (sum == nullptr) {
        sum = part;
      } else {
        P2_BUILD(sum, MakeBinary(ctx.rw, Opcode::kAdd, sum, part));
      }
      offset += sub_k;
    }
    return Replace(ctx, dot, sum);
  }
  return false;
}

// 83. dot(dynamic_slice(constant A), constant B) with the slice taking one
// row (one column on the rhs side) and the whole contracting dim ->
// dynamic_slice(dot(A, B)): the dot of two constants folds.
Rule DotDynamicSliceConstant(Instruction* dot, AlgebraicContext& ctx) {
  const DotDimensionNumbers* dn = GuardedDot(dot, ctx);
  if (dn == nullptr || dn->lhs_contracting_dimensions.size() != 1 ||
      !dn->lhs_batch_dimensions.empty() || dot->shape().rank() != 2 ||
      dot->operand(0)->shape().rank() != 2 ||
      dot->operand(1)->shape().rank() != 2) {
    return false;
  }
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  const bool lhs_ds = Is(lhs, Opcode::kDynamicSlice);
  const bool rhs_ds = Is(rhs, Opcode::kDynamicSlice);
  if (lhs_ds == rhs_ds) return false;
  Instruction* ds = lhs_ds ? lhs : rhs;
  if (!WellFormedDynamicSlice(ds)) return false;
  Instruction* a = lhs_ds ? lhs->operand(0) : lhs;
  Instruction* b = rhs_ds ? rhs->operand(0) : rhs;
  if (!IsKnownConstant(a) || !IsKnownConstant(b)) return false;
  const int64_t lc = dn->lhs_contracting_dimensions[0];
  const int64_t rc = dn->rhs_contracting_dimensions[0];
  const int64_t contracting = lhs_ds ? lc : rc;
  const int64_t outer = 1 - contracting;
  // One row/column, the whole contracting dim.
  if (ds->shape().dimensions(outer) != 1 ||
      ds->shape().dimensions(contracting) !=
          ds->operand(0)->shape().dimensions(contracting)) {
    return false;
  }
  const int64_t m = a->shape().dimensions(1 - lc);
  const int64_t n = b->shape().dimensions(1 - rc);
  Shape full_shape = dot->shape();
  full_shape.set_dimensions(0, m);
  full_shape.set_dimensions(1, n);
  Instruction* ops[] = {a, b};
  Instruction *full, *out;
  P2_BUILD(full, CloneWithNewOperands(ctx.rw, dot, full_shape, ops));
  Instruction* start = ds->operand(1 + outer);
  Instruction* zero = ds->operand(1 + contracting);
  std::vector<Instruction*> idx = lhs_ds
                                      ? std::vector<Instruction*>{start, zero}
                                      : std::vector<Instruction*>{zero, start};
  const int64_t sizes[2] = {lhs_ds ? 1 : m, lhs_ds ? n : 1};
  P2_BUILD(out, MakeDynamicSlice(ctx.rw, full, idx, sizes));
  return Replace(ctx, dot, out);
}

// 84. Size-1 dims are removed from dot operands by reshapes; the dimension
// numbers follow and the result is reshaped back.
Rule DotRemoveDegenerateDims(Instruction* dot, AlgebraicContext& ctx) {
  const DotDimensionNumbers* dn = GuardedDot(dot, ctx);
  if (dn == nullptr) return false;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  auto dim_map = [](const Shape& s, int64_t* degenerate) {
    std::vector<int64_t> map(s.rank(), -1);
    *degenerate = 0;
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (s.dimensions(i) == 1) {
        ++*degenerate;
      } else {
        map[i] = i - *degenerate;
      }
    }
    return map;
  };
  int64_t ld = 0, rd = 0;
  std::vector<int64_t> lmap = dim_map(lhs->shape(), &ld);
  std::vector<int64_t> rmap = dim_map(rhs->shape(), &rd);
  if (ld == 0 && rd == 0) return false;
  DotDimensionNumbers nd;
  for (size_t i = 0; i < dn->lhs_batch_dimensions.size(); ++i) {
    int64_t l = lmap[dn->lhs_batch_dimensions[i]];
    int64_t r = rmap[dn->rhs_batch_dimensions[i]];
    if (l < 0 || r < 0) continue;  // both are size 1
    nd.lhs_batch_dimensions.push_back(l);
    nd.rhs_batch_dimensions.push_back(r);
  }
  for (size_t i = 0; i < dn->lhs_contracting_dimensions.size(); ++i) {
    int64_t l = lmap[dn->lhs_contracting_dimensions[i]];
    int64_t r = rmap[dn->rhs_contracting_dimensions[i]];
    if (l < 0 || r < 0) continue;
    nd.lhs_contracting_dimensions.push_back(l);
    nd.rhs_contracting_dimensions.push_back(r);
  }
  auto squeeze = [&](Instruction* x,
                     int64_t degenerate) -> absl::StatusOr<Instruction*> {
    if (degenerate == 0) return x;
    std::vector<int64_t> dims;
    for (int64_t d : x->shape().dimensions()) {
      if (d != 1) dims.push_back(d);
    }
    return MakeReshape(ctx.rw, x, Span(dims));
  };
  Instruction *new_lhs, *new_rhs, *new_dot, *out;
  P2_BUILD(new_lhs, squeeze(lhs, ld));
  P2_BUILD(new_rhs, squeeze(rhs, rd));
  P2_BUILD(new_dot, MakeDot(ctx.rw, new_lhs, new_rhs, nd, Type(dot),
                            dot->attrs().operand_precision));
  new_dot->mutable_attrs()->algorithm = dot->attrs().algorithm;
  out = new_dot;
  if (!new_dot->shape().Compatible(dot->shape())) {
    P2_BUILD(out,
             MakeReshape(ctx.rw, new_dot, Span(dot->shape().dimensions())));
  }
  return Replace(ctx, dot, out);
}

// 85. dot(transpose(a), transpose(b)) with the same permutation, for a
// canonical dot ([batch..., m, k] x [batch..., k, n]) -> transpose(dot(a,
// b)) when the permutation keeps the last two dims, transpose(dot(b, a))
// when it swaps them.
Rule DotTransposeOperands(Instruction* dot, AlgebraicContext& ctx) {
  const DotDimensionNumbers* dn = GuardedDot(dot, ctx);
  if (dn == nullptr) return false;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  if (!Is(lhs, Opcode::kTranspose) || !Is(rhs, Opcode::kTranspose)) {
    return false;
  }
  const int64_t r = dot->shape().rank();
  if (r < 2 || lhs->shape().rank() != r || rhs->shape().rank() != r) {
    return false;
  }
  std::vector<int64_t> batch(r - 2);
  std::iota(batch.begin(), batch.end(), 0);
  if (dn->lhs_batch_dimensions != batch || dn->rhs_batch_dimensions != batch ||
      dn->lhs_contracting_dimensions != std::vector<int64_t>{r - 1} ||
      dn->rhs_contracting_dimensions != std::vector<int64_t>{r - 2}) {
    return false;
  }
  const DimVector& p = lhs->dimensions();
  if (p != rhs->dimensions() || static_cast<int64_t>(p.size()) != r) {
    return false;
  }
  for (int64_t i = 0; i < r - 2; ++i) {
    if (p[i] >= r - 2) return false;  // batch dims stay batch dims
  }
  const bool keep = p[r - 2] == r - 2 && p[r - 1] == r - 1;
  const bool swap = p[r - 2] == r - 1 && p[r - 1] == r - 2;
  if (!keep && !swap) return false;
  Instruction* a = lhs->operand(0);
  Instruction* b = rhs->operand(0);
  std::vector<Precision> precision = dot->attrs().operand_precision;
  if (swap) {
    std::swap(a, b);
    if (precision.size() == 2) std::swap(precision[0], precision[1]);
  }
  DotDimensionNumbers nd = *dn;
  Instruction *new_dot, *out;
  P2_BUILD(new_dot, MakeDot(ctx.rw, a, b, nd, Type(dot), precision));
  new_dot->mutable_attrs()->algorithm = dot->attrs().algorithm;
  P2_BUILD(out, MakeTranspose(ctx.rw, new_dot, Span(p)));
  return Replace(ctx, dot, out);
}

// A parameter reached through single-operand ops.
bool ParameterLike(const Instruction* inst) {
  while (inst->operand_count() == 1 && !Is(inst, Opcode::kParameter)) {
    inst = inst->operand(0);
  }
  return Is(inst, Opcode::kParameter);
}

// 86. (opt: move_dot_param_to_rhs) dot(param-like, x) -> transpose(dot(x,
// param-like)).
Rule DotMoveParamToRhs(Instruction* dot, AlgebraicContext& ctx) {
  if (!ctx.options.enable_move_dot_param_to_rhs) return false;
  const DotDimensionNumbers* dn = GuardedDot(dot, ctx);
  if (dn == nullptr) return false;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  if (!ParameterLike(lhs) || ParameterLike(rhs)) return false;
  DotDimensionNumbers nd;
  nd.lhs_batch_dimensions = dn->rhs_batch_dimensions;
  nd.rhs_batch_dimensions = dn->lhs_batch_dimensions;
  nd.lhs_contracting_dimensions = dn->rhs_contracting_dimensions;
  nd.rhs_contracting_dimensions = dn->lhs_contracting_dimensions;
  std::vector<Precision> precision = dot->attrs().operand_precision;
  if (precision.size() == 2) std::swap(precision[0], precision[1]);
  const int64_t nb = static_cast<int64_t>(dn->lhs_batch_dimensions.size());
  const int64_t nc =
      static_cast<int64_t>(dn->lhs_contracting_dimensions.size());
  const int64_t lnc = lhs->shape().rank() - nb - nc;
  const int64_t rnc = rhs->shape().rank() - nb - nc;
  // Swapped result: [batch, rhs_nc, lhs_nc]; the original order is
  // [batch, lhs_nc, rhs_nc].
  std::vector<int64_t> perm(nb);
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = 0; i < lnc; ++i) perm.push_back(nb + rnc + i);
  for (int64_t i = 0; i < rnc; ++i) perm.push_back(nb + i);
  Instruction *new_dot, *out;
  P2_BUILD(new_dot, MakeDot(ctx.rw, rhs, lhs, nd, Type(dot), precision));
  new_dot->mutable_attrs()->algorithm = dot->attrs().algorithm;
  P2_BUILD(out, MakeTranspose(ctx.rw, new_dot, Span(perm)));
  return Replace(ctx, dot, out);
}

// ---------------------------------------------------------------------------
// DynamicSlice / DynamicUpdateSlice (88-99).

bool DynamicSliceCandidate(const Instruction* ds, AlgebraicContext& ctx) {
  return WellFormedDynamicSlice(ds) && !InAsyncComputation(ds, ctx);
}
bool DynamicUpdateSliceCandidate(const Instruction* dus,
                                 AlgebraicContext& ctx) {
  return WellFormedDynamicUpdateSlice(dus) && !InAsyncComputation(dus, ctx);
}

// 88. A dynamic slice that takes the whole operand is the operand.
Rule DynamicSliceNoop(Instruction* ds, AlgebraicContext& ctx) {
  if (!DynamicSliceCandidate(ds, ctx)) return false;
  if (!ds->shape().Compatible(ds->operand(0)->shape())) return false;
  return Replace(ctx, ds, ds->operand(0));
}

// 89. Dims sliced whole get a constant 0 start index.
Rule DynamicSliceFullDimZeroIndex(Instruction* ds, AlgebraicContext& ctx) {
  if (!DynamicSliceCandidate(ds, ctx)) return false;
  const Shape& os = ds->operand(0)->shape();
  std::vector<Instruction*> idx = Indices(ds, 1);
  bool changed = false;
  for (int64_t d = 0; d < os.rank(); ++d) {
    if (ds->attrs().dynamic_slice_sizes[d] == os.dimensions(d) &&
        !IsAll(idx[d], 0)) {
      P2_BUILD(idx[d], MakeScalarLike(ctx.rw, idx[d], 0));
      changed = true;
    }
  }
  if (!changed) return false;
  Instruction* out;
  P2_BUILD(out, MakeDynamicSlice(ctx.rw, ds->operand(0), idx,
                                 Span(ds->attrs().dynamic_slice_sizes)));
  return Replace(ctx, ds, out);
}

// 90. ds(broadcast(x)) -> broadcast(ds(x)), slicing x with the indices of
// its own dims only.
Rule DynamicSliceBroadcast(Instruction* ds, AlgebraicContext& ctx) {
  if (!DynamicSliceCandidate(ds, ctx)) return false;
  Instruction* b = ds->operand(0);
  if (!Is(b, Opcode::kBroadcast) || b->operand_count() != 1 ||
      !StaticArray(b->operand(0))) {
    return false;
  }
  Instruction* x = b->operand(0);
  const DimVector& bd = b->dimensions();
  if (static_cast<int64_t>(bd.size()) != x->shape().rank()) return false;
  std::vector<Instruction*> idx;
  std::vector<int64_t> sizes;
  for (int64_t d : bd) {
    if (d < 0 || d >= ds->shape().rank()) return false;
    idx.push_back(ds->operand(1 + d));
    sizes.push_back(ds->attrs().dynamic_slice_sizes[d]);
  }
  Instruction* inner = x;
  if (!sizes.empty()) {
    P2_BUILD(inner, MakeDynamicSlice(ctx.rw, x, idx, Span(sizes)));
  }
  Instruction* out;
  P2_BUILD(out, MakeBroadcast(ctx.rw, inner, Span(ds->shape().dimensions()),
                              Span(bd)));
  return Replace(ctx, ds, out);
}

// Size-1 dims deleted from `from` and inserted into `to` when the reshape
// only does that; nullopt otherwise.
struct DegenerateReshape {
  std::vector<int64_t> from_to;  // from dim -> to dim, -1 if deleted
};
std::optional<DegenerateReshape> OnlyDegenerateChanges(const Shape& from,
                                                       const Shape& to) {
  DegenerateReshape r;
  r.from_to.assign(from.rank(), -1);
  int64_t i = 0, j = 0;
  while (i < from.rank() || j < to.rank()) {
    if (i < from.rank() && j < to.rank() &&
        from.dimensions(i) == to.dimensions(j)) {
      r.from_to[i++] = j++;
    } else if (i < from.rank() && from.dimensions(i) == 1) {
      ++i;
    } else if (j < to.rank() && to.dimensions(j) == 1) {
      ++j;
    } else {
      return std::nullopt;
    }
  }
  return r;
}

// 91. (LI) ds(reshape(x)) where the reshape only inserts/deletes size-1
// dims -> reshape(ds(x)).
Rule DynamicSliceReshape(Instruction* ds, AlgebraicContext& ctx) {
  if (ctx.options.is_layout_sensitive || !DynamicSliceCandidate(ds, ctx)) {
    return false;
  }
  Instruction* r = ds->operand(0);
  if (!Is(r, Opcode::kReshape) || !StaticArray(r->operand(0))) return false;
  Instruction* x = r->operand(0);
  std::optional<DegenerateReshape> m =
      OnlyDegenerateChanges(x->shape(), r->shape());
  if (!m || ds->shape().rank() == 0) return false;
  std::vector<Instruction*> idx;
  std::vector<int64_t> sizes;
  Instruction* zero = nullptr;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    int64_t to = m->from_to[d];
    if (to < 0) {
      if (zero == nullptr) {
        P2_BUILD(zero, MakeScalarLike(ctx.rw, ds->operand(1), 0));
      }
      idx.push_back(zero);
      sizes.push_back(1);
    } else {
      idx.push_back(ds->operand(1 + to));
      sizes.push_back(ds->attrs().dynamic_slice_sizes[to]);
    }
  }
  Instruction *inner, *out;
  P2_BUILD(inner, MakeDynamicSlice(ctx.rw, x, idx, Span(sizes)));
  P2_BUILD(out, MakeReshape(ctx.rw, inner, Span(ds->shape().dimensions())));
  return Replace(ctx, ds, out);
}

// 92. (LI) ds(transpose(x)) -> transpose(ds(x)) with permuted indices.
Rule DynamicSliceTranspose(Instruction* ds, AlgebraicContext& ctx) {
  if (ctx.options.is_layout_sensitive || !DynamicSliceCandidate(ds, ctx)) {
    return false;
  }
  Instruction* t = ds->operand(0);
  if (!Is(t, Opcode::kTranspose) || !StaticArray(t->operand(0))) return false;
  const DimVector& p = t->dimensions();
  const int64_t rank = ds->shape().rank();
  if (static_cast<int64_t>(p.size()) != rank || rank == 0) return false;
  std::vector<Instruction*> idx(rank, nullptr);
  std::vector<int64_t> sizes(rank, 0);
  for (int64_t i = 0; i < rank; ++i) {
    if (p[i] < 0 || p[i] >= rank) return false;
    idx[p[i]] = ds->operand(1 + i);
    sizes[p[i]] = ds->attrs().dynamic_slice_sizes[i];
  }
  Instruction *inner, *out;
  P2_BUILD(inner, MakeDynamicSlice(ctx.rw, t->operand(0), idx, Span(sizes)));
  P2_BUILD(out, MakeTranspose(ctx.rw, inner, Span(p)));
  return Replace(ctx, ds, out);
}

// 93. Constant non-negative start indices -> a static slice, the starts
// clamped the way dynamic-slice clamps them.
Rule DynamicSliceToSlice(Instruction* ds, AlgebraicContext& ctx) {
  if (ctx.options.disable_dynamic_slice_to_slice_conversion ||
      !DynamicSliceCandidate(ds, ctx) || ds->shape().rank() == 0) {
    return false;
  }
  Instruction* x = ds->operand(0);
  if (Is(x, Opcode::kConstant)) return false;
  if (ctx.options.is_layout_sensitive && x->shape().has_layout() &&
      ds->shape().has_layout() &&
      x->shape().layout().tail().memory_space !=
          ds->shape().layout().tail().memory_space) {
    return false;
  }
  const Shape& xs = x->shape();
  std::vector<int64_t> starts, limits, strides;
  for (int64_t d = 0; d < xs.rank(); ++d) {
    std::optional<int64_t> v = ConstantIndexValue(ds->operand(1 + d));
    if (!v || *v < 0) return false;
    const int64_t size = ds->attrs().dynamic_slice_sizes[d];
    const int64_t start = std::min(*v, xs.dimensions(d) - size);
    starts.push_back(start);
    limits.push_back(start + size);
    strides.push_back(1);
  }
  Instruction* out;
  P2_BUILD(out,
           MakeSlice(ctx.rw, x, Span(starts), Span(limits), Span(strides)));
  return Replace(ctx, ds, out);
}

// 94. A size-1 slice of a rank-1 iota (or iota * broadcast(scalar)) with an
// s32/u32 index is the clamped index itself.
Rule DynamicSliceIota(Instruction* ds, AlgebraicContext& ctx) {
  if (!DynamicSliceCandidate(ds, ctx) || ds->shape().rank() != 1 ||
      ds->attrs().dynamic_slice_sizes[0] != 1) {
    return false;
  }
  Instruction* x = ds->operand(0);
  Instruction* idx = ds->operand(1);
  if (Type(idx) != PrimitiveType::kS32 && Type(idx) != PrimitiveType::kU32) {
    return false;
  }
  Instruction* iota = x;
  Instruction* scale = nullptr;  // the scalar constant multiplier
  if (Is(x, Opcode::kMultiply) && x->operand_count() == 2) {
    for (int i = 0; i < 2; ++i) {
      Instruction* b = x->operand(1 - i);
      if (Is(x->operand(i), Opcode::kIota) && Is(b, Opcode::kBroadcast) &&
          b->operand_count() == 1 && IsKnownConstant(b->operand(0)) &&
          b->operand(0)->shape().IsScalar()) {
        iota = x->operand(i);
        scale = b->operand(0);
        break;
      }
    }
    if (scale == nullptr) return false;
  }
  if (!Is(iota, Opcode::kIota) || iota->shape().rank() != 1 ||
      Type(iota) != Type(ds) || (scale != nullptr && Type(scale) != Type(ds))) {
    return false;
  }
  const int64_t n = iota->shape().dimensions(0);
  if (n < 1) return false;
  Instruction *lo, *hi, *clamped, *value, *out;
  P2_BUILD(lo, MakeScalarLike(ctx.rw, idx, 0));
  P2_BUILD(hi, MakeScalarLike(ctx.rw, idx, static_cast<double>(n - 1)));
  P2_BUILD(clamped, MakeTernary(ctx.rw, Opcode::kClamp, lo, idx, hi));
  P2_BUILD(value, ConvertTo(ctx.rw, clamped, Type(ds)));
  const int64_t one[] = {1};
  P2_BUILD(out, MakeReshape(ctx.rw, value, one));
  if (scale != nullptr) {
    Instruction* b;
    P2_BUILD(b, MakeBroadcast(ctx.rw, scale, one, std::span<const int64_t>()));
    P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, out, b));
  }
  return Replace(ctx, ds, out);
}

// clamp(0, i, max) as a new scalar of i's type.
absl::StatusOr<Instruction*> ClampIndex(Rewriter& rw, Instruction* i,
                                        int64_t max) {
  HLOGYM_ASSIGN_OR_RETURN(Instruction * lo, MakeScalarLike(rw, i, 0));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * hi,
                          MakeScalarLike(rw, i, static_cast<double>(max)));
  return MakeTernary(rw, Opcode::kClamp, lo, i, hi);
}

// 95. ds(ds(x, i), j) -> ds(x, clamp(j) + clamp(i)). Both starts are
// clamped to the ranges the two slices would have clamped them to, so the
// combined start never needs the outer clamp and out-of-range indices give
// the same result.
Rule DynamicSliceOfDynamicSlice(Instruction* ds, AlgebraicContext& ctx) {
  if (!DynamicSliceCandidate(ds, ctx) || ds->shape().rank() == 0) return false;
  Instruction* inner = ds->operand(0);
  if (!Is(inner, Opcode::kDynamicSlice) || !WellFormedDynamicSlice(inner)) {
    return false;
  }
  if (Type(ds->operand(1)) != Type(inner->operand(1))) return false;
  Instruction* x = inner->operand(0);
  const int64_t rank = ds->shape().rank();
  std::vector<Instruction*> idx;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t xd = x->shape().dimensions(d);
    const int64_t sd = inner->attrs().dynamic_slice_sizes[d];
    const int64_t od = ds->attrs().dynamic_slice_sizes[d];
    Instruction *ci, *cj, *sum;
    P2_BUILD(ci, ClampIndex(ctx.rw, inner->operand(1 + d), xd - sd));
    P2_BUILD(cj, ClampIndex(ctx.rw, ds->operand(1 + d), sd - od));
    P2_BUILD(sum, MakeBinary(ctx.rw, Opcode::kAdd, cj, ci));
    idx.push_back(sum);
  }
  Instruction* out;
  P2_BUILD(out, MakeDynamicSlice(ctx.rw, x, idx,
                                 Span(ds->attrs().dynamic_slice_sizes)));
  return Replace(ctx, ds, out);
}

bool MovedToHost(const Instruction* inst) {
  return Is(inst, Opcode::kCustomCall) &&
         inst->attrs().custom_call_target == "MoveToHost";
}

// 96. dus(broadcast(scalar), U, constant indices) -> pad(U, scalar) with
// the starts clamped as dus clamps them.
Rule DynamicUpdateSliceBroadcastToPad(Instruction* dus, AlgebraicContext& ctx) {
  if (!DynamicUpdateSliceCandidate(dus, ctx) || dus->shape().rank() == 0) {
    return false;
  }
  Instruction* b = dus->operand(0);
  Instruction* u = dus->operand(1);
  if (!Is(b, Opcode::kBroadcast) || b->operand_count() != 1 ||
      !b->operand(0)->shape().IsScalar() || MovedToHost(u) ||
      Type(b->operand(0)) != Type(u)) {
    return false;
  }
  PaddingConfig padding;
  for (int64_t d = 0; d < dus->shape().rank(); ++d) {
    std::optional<int64_t> v = ConstantIndexValue(dus->operand(2 + d));
    if (!v) return false;
    const int64_t room = dus->shape().dimensions(d) - u->shape().dimensions(d);
    const int64_t low = std::clamp<int64_t>(*v, 0, room);
    padding.push_back({low, room - low, 0});
  }
  Instruction* out;
  P2_BUILD(out, MakePad(ctx.rw, u, b->operand(0), padding));
  return Replace(ctx, dus, out);
}

// 97. An update covering the whole operand is the result; an empty update
// leaves the operand.
Rule DynamicUpdateSliceFullUpdate(Instruction* dus, AlgebraicContext& ctx) {
  if (!DynamicUpdateSliceCandidate(dus, ctx)) return false;
  if (!dus->operand(1)->shape().Compatible(dus->shape())) return false;
  return Replace(ctx, dus, dus->operand(1));
}
Rule DynamicUpdateSliceEmptyUpdate(Instruction* dus, AlgebraicContext& ctx) {
  if (!DynamicUpdateSliceCandidate(dus, ctx)) return false;
  if (dus->operand(1)->shape().ElementsIn() != 0) return false;
  return Replace(ctx, dus, dus->operand(0));
}

// 98. Dims the update covers whole get a constant 0 index.
Rule DynamicUpdateSliceFullDimZeroIndex(Instruction* dus,
                                        AlgebraicContext& ctx) {
  if (!DynamicUpdateSliceCandidate(dus, ctx)) return false;
  std::vector<Instruction*> idx = Indices(dus, 2);
  bool changed = false;
  for (int64_t d = 0; d < dus->shape().rank(); ++d) {
    if (dus->operand(1)->shape().dimensions(d) ==
            dus->operand(0)->shape().dimensions(d) &&
        !IsAll(idx[d], 0)) {
      P2_BUILD(idx[d], MakeScalarLike(ctx.rw, idx[d], 0));
      changed = true;
    }
  }
  if (!changed) return false;
  Instruction* out;
  P2_BUILD(out, MakeDynamicUpdateSlice(ctx.rw, dus->operand(0), dus->operand(1),
                                       idx));
  return Replace(ctx, dus, out);
}

// 99. dus(a, dus(ds(a, id), c, inner), id) -> dus(a, c, clamp(id) +
// clamp(inner)): writing c back through the slice is one update of a.
Rule DynamicUpdateSliceOfDynamicSlice(Instruction* dus, AlgebraicContext& ctx) {
  if (!DynamicUpdateSliceCandidate(dus, ctx) || dus->shape().rank() == 0) {
    return false;
  }
  Instruction* a = dus->operand(0);
  Instruction* mid = dus->operand(1);
  if (!Is(mid, Opcode::kDynamicUpdateSlice) ||
      !WellFormedDynamicUpdateSlice(mid)) {
    return false;
  }
  Instruction* ds = mid->operand(0);
  if (!Is(ds, Opcode::kDynamicSlice) || !WellFormedDynamicSlice(ds) ||
      ds->operand(0) != a) {
    return false;
  }
  const int64_t rank = dus->shape().rank();
  for (int64_t d = 0; d < rank; ++d) {
    if (ds->operand(1 + d) != dus->operand(2 + d)) return false;
  }
  if (Type(mid->operand(2)) != Type(dus->operand(2))) return false;
  Instruction* c = mid->operand(1);
  std::vector<Instruction*> idx;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t ad = a->shape().dimensions(d);
    const int64_t sd = ds->shape().dimensions(d);
    const int64_t cd = c->shape().dimensions(d);
    Instruction *co, *ci, *sum;
    P2_BUILD(co, ClampIndex(ctx.rw, dus->operand(2 + d), ad - sd));
    P2_BUILD(ci, ClampIndex(ctx.rw, mid->operand(2 + d), sd - cd));
    P2_BUILD(sum, MakeBinary(ctx.rw, Opcode::kAdd, co, ci));
    idx.push_back(sum);
  }
  Instruction* out;
  P2_BUILD(out, MakeDynamicUpdateSlice(ctx.rw, a, c, idx));
  return Replace(ctx, dus, out);
}

// ---------------------------------------------------------------------------
// Elementwise transcendental / complex (100-108).

bool PlainUnary(const Instruction* inst) {
  return inst->operand_count() == 1 && IsArray(inst) &&
         IsArray(inst->operand(0));
}

// 100. exp(0) -> 1.
Rule ExpZero(Instruction* e, AlgebraicContext& ctx) {
  if (!PlainUnary(e) || !IsAll(e->operand(0), 0)) return false;
  Instruction* one;
  P2_BUILD(one, MakeFilledLike(ctx.rw, e, 1));
  return Replace(ctx, e, one);
}

// 101. log(exp(a)) -> a.
Rule LogExp(Instruction* log, AlgebraicContext& ctx) {
  if (!PlainUnary(log) || !Is(log->operand(0), Opcode::kExp)) return false;
  return Replace(ctx, log, log->operand(0)->operand(0));
}

// 102. log(pow(a, b)) -> select(b == 0, 0, b * log(|a|)) (no abs for
// complex a).
Rule LogPower(Instruction* log, AlgebraicContext& ctx) {
  if (!PlainUnary(log) || !Is(log->operand(0), Opcode::kPower)) return false;
  Instruction* p = log->operand(0);
  if (p->operand_count() != 2 || !SameElementType(p->operand(1), log)) {
    return false;
  }
  Instruction* a = p->operand(0);
  Instruction* b = p->operand(1);
  Instruction *abs_a = a, *l, *prod, *zero_b, *is_zero, *zero, *out;
  if (!IsComplexType(Type(a))) {
    P2_BUILD(abs_a, MakeUnary(ctx.rw, Opcode::kAbs, a));
  }
  P2_BUILD(l, MakeUnary(ctx.rw, Opcode::kLog, abs_a));
  P2_BUILD(prod, MakeBinary(ctx.rw, Opcode::kMultiply, b, l));
  P2_BUILD(zero_b, MakeFilledLike(ctx.rw, b, 0));
  P2_BUILD(is_zero, MakeCompare(ctx.rw, ComparisonDirection::kEq, b, zero_b));
  P2_BUILD(zero, MakeFilledLike(ctx.rw, log, 0));
  P2_BUILD(out, MakeTernary(ctx.rw, Opcode::kSelect, is_zero, zero, prod));
  return Replace(ctx, log, out);
}

// 103. log(sqrt(a)) -> 0.5 * log(a); log(rsqrt(a)) -> -0.5 * log(a).
Rule LogRoot(Instruction* log, AlgebraicContext& ctx, Opcode root,
             double factor) {
  if (!PlainUnary(log) || !Is(log->operand(0), root)) return false;
  Instruction *l, *f, *out;
  P2_BUILD(l, MakeUnary(ctx.rw, Opcode::kLog, log->operand(0)->operand(0)));
  P2_BUILD(f, MakeFilledLike(ctx.rw, l, factor));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, l, f));
  return Replace(ctx, log, out);
}
Rule LogSqrt(Instruction* log, AlgebraicContext& ctx) {
  return LogRoot(log, ctx, Opcode::kSqrt, 0.5);
}
Rule LogRsqrt(Instruction* log, AlgebraicContext& ctx) {
  return LogRoot(log, ctx, Opcode::kRsqrt, -0.5);
}

// 104. rsqrt(pow(A, -2)) -> A for non-negative A.
Rule RsqrtPowerMinusTwo(Instruction* r, AlgebraicContext& ctx) {
  if (!PlainUnary(r) || !Is(r->operand(0), Opcode::kPower)) return false;
  Instruction* p = r->operand(0);
  if (p->operand_count() != 2 || !IsAll(p->operand(1), -2) ||
      !IsNonNegative(p->operand(0))) {
    return false;
  }
  return Replace(ctx, r, p->operand(0));
}

// 104. rsqrt(1 / A) -> sqrt(A) for non-negative A.
Rule RsqrtReciprocal(Instruction* r, AlgebraicContext& ctx) {
  if (!PlainUnary(r) || !Is(r->operand(0), Opcode::kDivide)) return false;
  Instruction* d = r->operand(0);
  if (d->operand_count() != 2 || !IsAll(d->operand(0), 1) ||
      !IsNonNegative(d->operand(1))) {
    return false;
  }
  Instruction* out;
  P2_BUILD(out, MakeUnary(ctx.rw, Opcode::kSqrt, d->operand(1)));
  return Replace(ctx, r, out);
}

// 105. sqrt(A * A) -> abs(A); for complex A, XLA converts the (real) abs
// back to the complex type.
Rule SqrtSquare(Instruction* s, AlgebraicContext& ctx) {
  if (!PlainUnary(s) || !Is(s->operand(0), Opcode::kMultiply)) return false;
  Instruction* m = s->operand(0);
  if (m->operand_count() != 2 || m->operand(0) != m->operand(1)) return false;
  Instruction* out;
  P2_BUILD(out, MakeUnary(ctx.rw, Opcode::kAbs, m->operand(0)));
  if (IsComplexType(Type(m))) {
    P2_BUILD(out, MakeConvert(ctx.rw, out, Type(m)));
  }
  return Replace(ctx, s, out);
}

// 106. complex(real(c), imag(c)) -> c.
Rule ComplexRealImag(Instruction* c, AlgebraicContext& ctx) {
  if (!PlainBinary(c)) return false;
  Instruction* re = c->operand(0);
  Instruction* im = c->operand(1);
  if (!Is(re, Opcode::kReal) || !Is(im, Opcode::kImag) ||
      re->operand(0) != im->operand(0)) {
    return false;
  }
  return Replace(ctx, c, re->operand(0));
}

// 107. real(complex(r, i)) -> r; 108. imag(complex(r, i)) -> i.
Rule PartOfComplex(Instruction* part, AlgebraicContext& ctx, int which) {
  if (!PlainUnary(part) || !Is(part->operand(0), Opcode::kComplex) ||
      part->operand(0)->operand_count() != 2) {
    return false;
  }
  return Replace(ctx, part, part->operand(0)->operand(which));
}
Rule RealOfComplex(Instruction* part, AlgebraicContext& ctx) {
  return PartOfComplex(part, ctx, 0);
}
Rule ImagOfComplex(Instruction* part, AlgebraicContext& ctx) {
  return PartOfComplex(part, ctx, 1);
}

// 107. real(x) of a real x -> x.
Rule RealOfReal(Instruction* part, AlgebraicContext& ctx) {
  if (!PlainUnary(part) || IsComplexType(Type(part->operand(0)))) {
    return false;
  }
  return Replace(ctx, part, part->operand(0));
}

// 108. imag(x) of a real x -> 0.
Rule ImagOfReal(Instruction* part, AlgebraicContext& ctx) {
  if (!PlainUnary(part) || IsComplexType(Type(part->operand(0)))) {
    return false;
  }
  Instruction* zero;
  P2_BUILD(zero, MakeFilledLike(ctx.rw, part, 0));
  return Replace(ctx, part, zero);
}

// ---------------------------------------------------------------------------
// Gather / Scatter (109-113).

bool GatherCandidate(const Instruction* g) {
  return g->operand_count() == 2 && g->attrs().gather_dnums.has_value() &&
         StaticArray(g) && StaticArray(g->operand(0)) &&
         StaticArray(g->operand(1));
}

// 109. Gathering from an empty operand gives zeros.
Rule GatherZeroElementOperand(Instruction* g, AlgebraicContext& ctx) {
  if (!GatherCandidate(g) || g->operand(0)->shape().ElementsIn() != 0) {
    return false;
  }
  Instruction* zero;
  P2_BUILD(zero, MakeFilledLike(ctx.rw, g, 0));
  return Replace(ctx, g, zero);
}

// 109. Gathering from a one-element operand broadcasts that element.
Rule GatherOneElementOperand(Instruction* g, AlgebraicContext& ctx) {
  if (!GatherCandidate(g) || g->operand(0)->shape().ElementsIn() != 1) {
    return false;
  }
  Instruction* x = g->operand(0);
  if (x->shape().rank() != 0) {
    P2_BUILD(x, MakeReshape(ctx.rw, x, std::span<const int64_t>()));
  }
  Instruction* out;
  P2_BUILD(out, MakeBroadcast(ctx.rw, x, Span(g->shape().dimensions()),
                              std::span<const int64_t>()));
  return Replace(ctx, g, out);
}

// 110. A gather of single elements from a very small rank-1 operand with
// scalar indices -> a chain of selects (fuses better).
Rule GatherSmallVector(Instruction* g, AlgebraicContext& ctx) {
  if (!GatherCandidate(g)) return false;
  const GatherDimensionNumbers& dn = *g->attrs().gather_dnums;
  Instruction* x = g->operand(0);
  Instruction* idx = g->operand(1);
  if (x->shape().rank() != 1 || !IsIntegralType(Type(idx))) return false;
  const int64_t n = x->shape().dimensions(0);
  if (n < 1 || n > ctx.options.very_small_gather_size ||
      dn.index_vector_dim != idx->shape().rank() ||
      dn.collapsed_slice_dims != std::vector<int64_t>{0} ||
      dn.start_index_map != std::vector<int64_t>{0} ||
      !dn.offset_dims.empty() || !dn.operand_batching_dims.empty() ||
      g->attrs().gather_slice_sizes != std::vector<int64_t>{1} ||
      !g->shape().SameDimensions(idx->shape()) || Type(g) != Type(x)) {
    return false;
  }
  auto value = [&](int64_t i) -> absl::StatusOr<Instruction*> {
    const int64_t start[] = {i}, limit[] = {i + 1}, stride[] = {1};
    HLOGYM_ASSIGN_OR_RETURN(Instruction * s,
                            MakeSlice(ctx.rw, x, start, limit, stride));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * scalar,
                            MakeReshape(ctx.rw, s, std::span<const int64_t>()));
    return MakeBroadcast(ctx.rw, scalar, Span(g->shape().dimensions()),
                         std::span<const int64_t>());
  };
  Instruction* result;
  P2_BUILD(result, value(0));
  for (int64_t i = 0; i < n; ++i) {
    Instruction *bound, *mask, *v;
    P2_BUILD(bound, MakeFilledLike(ctx.rw, idx, static_cast<double>(i)));
    P2_BUILD(mask, MakeCompare(ctx.rw, ComparisonDirection::kGe, idx, bound));
    P2_BUILD(v, value(i));
    P2_BUILD(result, MakeTernary(ctx.rw, Opcode::kSelect, mask, v, result));
  }
  return Replace(ctx, g, result);
}

// 111. gather(pad(x)) padded only on pass-through dims (not indexed, not
// collapsed, sliced whole) -> pad(gather(x)) with the padding moved to the
// matching offset dims of the result. (The batching-dim and bitcast forms
// are not handled.)
Rule GatherOfPad(Instruction* g, AlgebraicContext& ctx) {
  if (!GatherCandidate(g)) return false;
  Instruction* pad = g->operand(0);
  if (!Is(pad, Opcode::kPad) || pad->operand_count() != 2 ||
      !StaticArray(pad->operand(0)) || !pad->operand(1)->shape().IsScalar()) {
    return false;
  }
  const GatherDimensionNumbers& dn = *g->attrs().gather_dnums;
  const PaddingConfig& config = pad->attrs().padding;
  const int64_t rank = pad->shape().rank();
  const std::vector<int64_t>& sizes = g->attrs().gather_slice_sizes;
  if (static_cast<int64_t>(config.size()) != rank ||
      static_cast<int64_t>(sizes.size()) != rank ||
      !dn.operand_batching_dims.empty() ||
      !std::is_sorted(dn.offset_dims.begin(), dn.offset_dims.end())) {
    return false;
  }
  auto contains = [](const std::vector<int64_t>& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  // Operand dim -> result dim for offset (not collapsed) dims.
  std::vector<int64_t> out_dim(rank, -1);
  size_t k = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (contains(dn.collapsed_slice_dims, d)) continue;
    if (k >= dn.offset_dims.size()) return false;
    out_dim[d] = dn.offset_dims[k++];
  }
  if (k != dn.offset_dims.size()) return false;
  Instruction* x = pad->operand(0);
  std::vector<int64_t> new_sizes = sizes;
  Shape new_shape = g->shape();
  PaddingConfig out_config(g->shape().rank());
  bool any = false;
  for (int64_t d = 0; d < rank; ++d) {
    const PaddingDimension& p = config[d];
    if (p.low == 0 && p.high == 0 && p.interior == 0) continue;
    if (out_dim[d] < 0 || out_dim[d] >= g->shape().rank() ||
        contains(dn.start_index_map, d) ||
        sizes[d] != pad->shape().dimensions(d)) {
      return false;
    }
    new_sizes[d] = x->shape().dimensions(d);
    new_shape.set_dimensions(out_dim[d], x->shape().dimensions(d));
    out_config[out_dim[d]] = p;
    any = true;
  }
  if (!any) return false;
  Instruction* ops[] = {x, g->operand(1)};
  Instruction *inner, *out;
  P2_BUILD(inner, CloneWithNewOperands(ctx.rw, g, new_shape, ops));
  inner->mutable_attrs()->gather_slice_sizes = new_sizes;
  P2_BUILD(out, MakePad(ctx.rw, inner, pad->operand(1), out_config));
  return Replace(ctx, g, out);
}

// Scatter operands: n inputs, the indices, n updates.
int64_t ScatterInputCount(const Instruction* s) {
  if (!s->attrs().scatter_dnums.has_value() || s->operand_count() < 3 ||
      s->operand_count() % 2 != 1) {
    return 0;
  }
  return (s->operand_count() - 1) / 2;
}

// 112. A scatter whose updates are all empty returns its inputs.
Rule ScatterEmptyUpdates(Instruction* s, AlgebraicContext& ctx) {
  const int64_t n = ScatterInputCount(s);
  if (n == 0) return false;
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* u = s->operand(n + 1 + i);
    if (!u->shape().IsArray() || u->shape().ElementsIn() != 0) return false;
  }
  if (n == 1) return Replace(ctx, s, s->operand(0));
  std::vector<Instruction*> inputs(s->operands().begin(),
                                   s->operands().begin() + n);
  Instruction* t;
  P2_BUILD(t, MakeTuple(ctx.rw, s->parent(), inputs));
  return Replace(ctx, s, t);
}

// 113. A single-input scatter with empty indices and an update of the
// operand's shape combines the two elementwise: map(operand, update).
Rule ScatterEmptyIndicesToMap(Instruction* s, AlgebraicContext& ctx) {
  if (ScatterInputCount(s) != 1 || s->to_apply() == nullptr) return false;
  Instruction* x = s->operand(0);
  Instruction* idx = s->operand(1);
  Instruction* u = s->operand(2);
  if (!StaticArray(x) || !StaticArray(idx) || !StaticArray(u) ||
      idx->shape().ElementsIn() != 0 || !s->shape().Compatible(x->shape()) ||
      !s->shape().Compatible(u->shape())) {
    return false;
  }
  Instruction* ops[] = {x, u};
  Instruction* out;
  P2_BUILD(out, MakeMap(ctx.rw, ops, s->to_apply()));
  return Replace(ctx, s, out);
}

// ---------------------------------------------------------------------------
// Maximum / Minimum / Clamp (114-122).

// 114. max(x, x) -> x; min(x, x) -> x.
Rule MinMaxSameOperand(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m) || m->operand(0) != m->operand(1)) return false;
  return Replace(ctx, m, m->operand(0));
}

// 115. max(x, lowest) -> x; min(x, highest) -> x. Floats only when NaNs
// propagate (otherwise max(NaN, -inf) may be -inf).
Rule MinMaxIdentity(Instruction* m, AlgebraicContext& ctx, bool highest) {
  if (!PlainBinary(m)) return false;
  const PrimitiveType t = Type(m);
  if (!IsIntegralType(t) &&
      !(IsFloatingPointType(t) && ctx.options.minmax_propagate_nan)) {
    return false;
  }
  std::optional<uint64_t> bits = ExtremeBits(t, highest);
  if (!bits) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction* bound = m->operand(i);
    if (Type(bound) == t && AllElementsHaveBits(bound, *bits)) {
      return Replace(ctx, m, m->operand(1 - i));
    }
  }
  return false;
}
Rule MaximumLowest(Instruction* m, AlgebraicContext& ctx) {
  return MinMaxIdentity(m, ctx, /*highest=*/false);
}
Rule MinimumHighest(Instruction* m, AlgebraicContext& ctx) {
  return MinMaxIdentity(m, ctx, /*highest=*/true);
}

// 116. max(max(x, y), x or y) -> max(x, y); max(x, max(x, y)) -> max(x, y).
// Same for min.
Rule MinMaxOfSame(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  Instruction* l = m->operand(0);
  Instruction* r = m->operand(1);
  if (Is(l, m->opcode()) && l->operand_count() == 2 &&
      (r == l->operand(0) || r == l->operand(1))) {
    return Replace(ctx, m, l);
  }
  if (Is(r, m->opcode()) && r->operand_count() == 2 && l == r->operand(0)) {
    return Replace(ctx, m, r);
  }
  return false;
}

// 117. max(y, max(x, y)) -> max(y, x): only the operands swap, so the
// choice between two NaNs stays as it was. Same for min.
Rule MinMaxOfSameSwap(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  Instruction* l = m->operand(0);
  Instruction* r = m->operand(1);
  if (!Is(r, m->opcode()) || r->operand_count() != 2 || l != r->operand(1) ||
      l == r->operand(0)) {
    return false;
  }
  Instruction* out;
  P2_BUILD(out, MakeBinary(ctx.rw, m->opcode(), l, r->operand(0)));
  return Replace(ctx, m, out);
}

// The broadcast of a one-element constant (its scalar in *value).
bool BroadcastOfScalarConstant(const Instruction* b,
                               const Instruction** value) {
  if (!Is(b, Opcode::kBroadcast) || b->operand_count() != 1) return false;
  *value = EffectiveScalarConstant(b->operand(0), false);
  return *value != nullptr && Type(*value) == Type(b);
}

// 118. max(bcast(lo), min(x, bcast(hi))) -> clamp(lo, x, hi) and
// min(bcast(hi), max(x, bcast(lo))) -> clamp(lo, x, hi), if lo < hi.
Rule MinMaxToClamp(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  const bool is_max = Is(m, Opcode::kMaximum);
  const Opcode inner_op = is_max ? Opcode::kMinimum : Opcode::kMaximum;
  for (int i = 0; i < 2; ++i) {
    Instruction* outer_b = m->operand(i);
    Instruction* inner = m->operand(1 - i);
    const Instruction* outer_c = nullptr;
    if (!BroadcastOfScalarConstant(outer_b, &outer_c) || !Is(inner, inner_op) ||
        inner->operand_count() != 2) {
      continue;
    }
    for (int j = 0; j < 2; ++j) {
      Instruction* inner_b = inner->operand(j);
      Instruction* x = inner->operand(1 - j);
      const Instruction* inner_c = nullptr;
      if (!BroadcastOfScalarConstant(inner_b, &inner_c)) continue;
      Instruction* lo_b = is_max ? outer_b : inner_b;
      Instruction* hi_b = is_max ? inner_b : outer_b;
      const Instruction* lo = is_max ? outer_c : inner_c;
      const Instruction* hi = is_max ? inner_c : outer_c;
      std::optional<bool> less = ConstantLess(lo, hi);
      if (!less || !*less || !SameElementType(x, m)) continue;
      Instruction* out;
      P2_BUILD(out, MakeTernary(ctx.rw, Opcode::kClamp, lo_b, x, hi_b));
      return Replace(ctx, m, out);
    }
  }
  return false;
}

// 119. max(lo, clamp(lo, x, hi)) -> clamp(lo, x, hi) (either order).
Rule MaximumOfClamp(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction* c = m->operand(1 - i);
    if (Is(c, Opcode::kClamp) && c->operand_count() == 3 &&
        c->operand(0) == m->operand(i)) {
      return Replace(ctx, m, c);
    }
  }
  return false;
}

// 120. max(f(x), f(y)) -> f(max(x, y)) for non-decreasing f.
Rule MaximumMonotonic(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  Instruction* l = m->operand(0);
  Instruction* r = m->operand(1);
  const Opcode op = l->opcode();
  if (op != r->opcode() || (op != Opcode::kCbrt && op != Opcode::kErf &&
                            op != Opcode::kLogistic && op != Opcode::kTanh)) {
    return false;
  }
  if (l->operand_count() != 1 || r->operand_count() != 1 ||
      !SameElementType(l->operand(0), r->operand(0))) {
    return false;
  }
  Instruction *mx, *out;
  P2_BUILD(mx,
           MakeBinary(ctx.rw, Opcode::kMaximum, l->operand(0), r->operand(0)));
  P2_BUILD(out, MakeUnary(ctx.rw, op, mx));
  return Replace(ctx, m, out);
}

// 121. clamp(a, clamp(a, x, b), b) -> clamp(a, x, b).
Rule ClampOfClamp(Instruction* c, AlgebraicContext& ctx) {
  if (c->operand_count() != 3) return false;
  Instruction* inner = c->operand(1);
  if (!Is(inner, Opcode::kClamp) || inner->operand_count() != 3 ||
      inner->operand(0) != c->operand(0) ||
      inner->operand(2) != c->operand(2)) {
    return false;
  }
  return Replace(ctx, c, inner);
}

// 122. clamp(0, partition-id|replica-id, c) -> the id when the id's range
// [0, count) already lies in [0, c].
Rule ClampDeviceId(Instruction* c, AlgebraicContext& ctx) {
  if (c->operand_count() != 3) return false;
  Instruction* id = c->operand(1);
  const Module* module = c->parent() ? c->parent()->parent() : nullptr;
  if (module == nullptr) return false;
  std::optional<int64_t> count;
  if (Is(id, Opcode::kPartitionId)) {
    count = module->config().num_partitions;
  } else if (Is(id, Opcode::kReplicaId)) {
    count = module->config().replica_count;
  } else {
    return false;
  }
  std::optional<int64_t> lo = ConstantIndexValue(c->operand(0));
  std::optional<int64_t> hi = ConstantIndexValue(c->operand(2));
  if (!count || *count <= 1 || !lo || *lo != 0 || !hi || *count > *hi + 1) {
    return false;
  }
  return Replace(ctx, c, id);
}

// ---------------------------------------------------------------------------
// Multiply (123-132).

// 123. A * 1 -> A (both orders).
Rule MultiplyOne(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction* other = m->operand(1 - i);
    if (IsAll(m->operand(i), 1) && other->shape().Compatible(m->shape())) {
      return Replace(ctx, m, other);
    }
  }
  return false;
}

// 124. A * 0 -> 0 (both orders): integers, or floats under fast math
// (NaN * 0 and inf * 0 are NaN).
Rule MultiplyZero(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  if (!IsIntegralType(Type(m)) && !ctx.options.enable_fast_math) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction* zero = m->operand(i);
    if (IsAll(zero, 0) && zero->shape().Compatible(m->shape())) {
      return Replace(ctx, m, zero);
    }
  }
  return false;
}

// 125. (-a) * (-b) -> a * b.
Rule MultiplyNegateNegate(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m) || !Is(m->operand(0), Opcode::kNegate) ||
      !Is(m->operand(1), Opcode::kNegate)) {
    return false;
  }
  Instruction* out;
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, m->operand(0)->operand(0),
                           m->operand(1)->operand(0)));
  return Replace(ctx, m, out);
}

// 126. abs(x) * abs(x) -> x * x (not for complex x).
Rule MultiplyAbsAbs(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m) || !Is(m->operand(0), Opcode::kAbs) ||
      !Is(m->operand(1), Opcode::kAbs)) {
    return false;
  }
  Instruction* x = m->operand(0)->operand(0);
  if (x != m->operand(1)->operand(0) || IsComplexType(Type(x))) return false;
  Instruction* out;
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, x, x));
  return Replace(ctx, m, out);
}

// 127. x * convert(pred p) -> select(p, x, 0) (either order).
Rule MultiplyConvertPred(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction* x = m->operand(i);
    Instruction* cv = m->operand(1 - i);
    if (!Is(cv, Opcode::kConvert) || cv->operand_count() != 1 ||
        Type(cv->operand(0)) != PrimitiveType::kPred ||
        !x->shape().Compatible(m->shape())) {
      continue;
    }
    Instruction *zero, *out;
    P2_BUILD(zero, MakeFilledLike(ctx.rw, m, 0));
    P2_BUILD(out,
             MakeTernary(ctx.rw, Opcode::kSelect, cv->operand(0), x, zero));
    return Replace(ctx, m, out);
  }
  return false;
}

// mul(non-constant, constant) in either order.
bool SplitConstantProduct(Instruction* m, Instruction** a, Instruction** c) {
  if (!Is(m, Opcode::kMultiply) || m->operand_count() != 2) return false;
  for (int i = 0; i < 2; ++i) {
    if (!Is(m->operand(i), Opcode::kConstant) &&
        IsKnownConstant(m->operand(1 - i))) {
      *a = m->operand(i);
      *c = m->operand(1 - i);
      return true;
    }
  }
  return false;
}

// 128. (a*c1) * (b*c2) -> (a*b) * (c1*c2).
Rule MultiplyTwoConstantProducts(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  Instruction *a, *c1, *b, *c2;
  if (!SplitConstantProduct(m->operand(0), &a, &c1) ||
      !SplitConstantProduct(m->operand(1), &b, &c2)) {
    return false;
  }
  Instruction *ab, *cc, *out;
  P2_BUILD(ab, MakeBinary(ctx.rw, Opcode::kMultiply, a, b));
  P2_BUILD(cc, MakeBinary(ctx.rw, Opcode::kMultiply, c1, c2));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, ab, cc));
  return Replace(ctx, m, out);
}

// 128. (a*c1) * c2 -> a * (c1*c2) (any operand order).
Rule MultiplyConstantProduct(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction *a, *c1;
    Instruction* c2 = m->operand(1 - i);
    if (!IsKnownConstant(c2) || !SplitConstantProduct(m->operand(i), &a, &c1)) {
      continue;
    }
    Instruction *cc, *out;
    P2_BUILD(cc, MakeBinary(ctx.rw, Opcode::kMultiply, c1, c2));
    P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, a, cc));
    return Replace(ctx, m, out);
  }
  return false;
}

// mul(non-constant a, C) with C a constant or a broadcast of a constant;
// *c is the constant itself.
bool SplitConstantOrBroadcastProduct(Instruction* m, Instruction** a,
                                     Instruction** c) {
  if (!Is(m, Opcode::kMultiply) || m->operand_count() != 2) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction* k = m->operand(1 - i);
    if (Is(k, Opcode::kBroadcast) && k->operand_count() == 1) k = k->operand(0);
    if (!Is(m->operand(i), Opcode::kConstant) && IsKnownConstant(k)) {
      *a = m->operand(i);
      *c = k;
      return true;
    }
  }
  return false;
}

// 129. (a * c) * broadcast(b) with a scalar constant c and non-constant b
// -> a * broadcast(b * c): the constant is applied to the small operand.
Rule MultiplyBroadcastScalarConstant(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction *a, *c;
    Instruction* op = m->operand(1 - i);
    if (!SplitConstantOrBroadcastProduct(m->operand(i), &a, &c) ||
        !c->shape().IsScalar() || !Is(op, Opcode::kBroadcast) ||
        op->operand_count() != 1 || Is(op->operand(0), Opcode::kConstant)) {
      continue;
    }
    Instruction* b = op->operand(0);
    if (!SameElementType(b, c)) continue;
    Instruction *k = c, *prod, *bcast, *out;
    if (!b->shape().IsScalar()) {
      P2_BUILD(k, MakeBroadcast(ctx.rw, c, Span(b->shape().dimensions()),
                                std::span<const int64_t>()));
    }
    P2_BUILD(prod, MakeBinary(ctx.rw, Opcode::kMultiply, b, k));
    P2_BUILD(bcast, MakeBroadcast(ctx.rw, prod, Span(m->shape().dimensions()),
                                  Span(op->dimensions())));
    P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, a, bcast));
    return Replace(ctx, m, out);
  }
  return false;
}

// 129. (a * bcast(c1)) * bcast(c2) -> a * bcast(c1 * c2) for scalar
// constants.
Rule MultiplyBroadcastConstants(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m)) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction* inner = m->operand(i);
    Instruction* b2 = m->operand(1 - i);
    if (!Is(inner, Opcode::kMultiply) || inner->operand_count() != 2 ||
        !Is(b2, Opcode::kBroadcast) || b2->operand_count() != 1) {
      continue;
    }
    Instruction* c2 = b2->operand(0);
    if (!IsKnownConstant(c2) || !c2->shape().IsScalar()) continue;
    for (int j = 0; j < 2; ++j) {
      Instruction* a = inner->operand(j);
      Instruction* b1 = inner->operand(1 - j);
      if (Is(a, Opcode::kConstant) || !Is(b1, Opcode::kBroadcast) ||
          b1->operand_count() != 1) {
        continue;
      }
      Instruction* c1 = b1->operand(0);
      if (!IsKnownConstant(c1) || !c1->shape().IsScalar()) continue;
      Instruction *cc, *bcast, *out;
      P2_BUILD(cc, MakeBinary(ctx.rw, Opcode::kMultiply, c1, c2));
      P2_BUILD(bcast, MakeBroadcast(ctx.rw, cc, Span(m->shape().dimensions()),
                                    std::span<const int64_t>()));
      P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kMultiply, a, bcast));
      return Replace(ctx, m, out);
    }
  }
  return false;
}

// 130. exp(a) * exp(b) -> exp(a + b).
Rule MultiplyExpExp(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m) || !Is(m->operand(0), Opcode::kExp) ||
      !Is(m->operand(1), Opcode::kExp)) {
    return false;
  }
  Instruction *sum, *out;
  P2_BUILD(sum, MakeBinary(ctx.rw, Opcode::kAdd, m->operand(0)->operand(0),
                           m->operand(1)->operand(0)));
  P2_BUILD(out, MakeUnary(ctx.rw, Opcode::kExp, sum));
  return Replace(ctx, m, out);
}

// 131. sqrt(x) * sqrt(x) -> x for non-negative x.
Rule MultiplySqrtSqrt(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m) || !Is(m->operand(0), Opcode::kSqrt) ||
      !Is(m->operand(1), Opcode::kSqrt)) {
    return false;
  }
  Instruction* x = m->operand(0)->operand(0);
  if (x != m->operand(1)->operand(0) || !IsNonNegative(x)) return false;
  return Replace(ctx, m, x);
}

// 131. rsqrt(x) * rsqrt(x) -> 1/x for non-negative x.
Rule MultiplyRsqrtRsqrt(Instruction* m, AlgebraicContext& ctx) {
  if (!PlainBinary(m) || !Is(m->operand(0), Opcode::kRsqrt) ||
      !Is(m->operand(1), Opcode::kRsqrt)) {
    return false;
  }
  Instruction* x = m->operand(0)->operand(0);
  if (x != m->operand(1)->operand(0) || !IsNonNegative(x)) return false;
  Instruction *one, *out;
  P2_BUILD(one, MakeFilledLike(ctx.rw, x, 1));
  P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kDivide, one, x));
  return Replace(ctx, m, out);
}

// 132. (opt: conv_add_multiply_reorder) (conv(x, constant filter) + bias) *
// broadcast(1-D constant along the output features) -> conv(x, filter *
// broadcast) + bias * broadcast: the scale folds into the filter.
Rule MultiplyConvBiasReorder(Instruction* m, AlgebraicContext& ctx) {
  if (!ctx.options.enable_conv_add_multiply_reorder || !PlainBinary(m)) {
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    Instruction* add = m->operand(i);
    Instruction* bcast = m->operand(1 - i);
    if (!Is(add, Opcode::kAdd) || add->operand_count() != 2 ||
        !HasOneUse(add) || !Is(bcast, Opcode::kBroadcast) ||
        bcast->operand_count() != 1 || !HasOneUse(bcast) ||
        !IsKnownConstant(bcast->operand(0)) ||
        bcast->operand(0)->shape().rank() != 1 ||
        bcast->dimensions().size() != 1) {
      continue;
    }
    for (int j = 0; j < 2; ++j) {
      Instruction* conv = add->operand(j);
      Instruction* bias = add->operand(1 - j);
      if (!Is(conv, Opcode::kConvolution) || conv->operand_count() != 2 ||
          !HasOneUse(conv) || !HasOneUse(bias) ||
          !conv->attrs().conv_dnums.has_value() ||
          conv->attrs().feature_group_count != 1 ||
          conv->attrs().batch_group_count != 1 ||
          !IsKnownConstant(conv->operand(1)) ||
          !SameElementType(conv, conv->operand(1)) ||
          !SameElementType(conv, bcast)) {
        continue;
      }
      const ConvolutionDimensionNumbers& cd = *conv->attrs().conv_dnums;
      Instruction* filter = conv->operand(1);
      const int64_t kof = cd.kernel_output_feature_dimension;
      if (bcast->dimensions(0) != cd.output_feature_dimension || kof < 0 ||
          kof >= filter->shape().rank() ||
          filter->shape().dimensions(kof) !=
              bcast->operand(0)->shape().dimensions(0)) {
        continue;
      }
      const int64_t kdims[] = {kof};
      Instruction *scale, *new_filter, *new_conv, *new_bias, *out;
      P2_BUILD(scale, MakeBroadcast(ctx.rw, bcast->operand(0),
                                    Span(filter->shape().dimensions()), kdims));
      P2_BUILD(new_filter,
               MakeBinary(ctx.rw, Opcode::kMultiply, filter, scale));
      Instruction* ops[] = {conv->operand(0), new_filter};
      P2_BUILD(new_conv,
               CloneWithNewOperands(ctx.rw, conv, conv->shape(), ops));
      P2_BUILD(new_bias, MakeBinary(ctx.rw, Opcode::kMultiply, bias, bcast));
      P2_BUILD(out, MakeBinary(ctx.rw, Opcode::kAdd, new_conv, new_bias));
      return Replace(ctx, m, out);
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// Pad (133-137).

bool PadCandidate(const Instruction* pad) {
  return pad->operand_count() == 2 && StaticArray(pad) &&
         StaticArray(pad->operand(0)) && pad->operand(1)->shape().IsScalar() &&
         static_cast<int64_t>(pad->attrs().padding.size()) ==
             pad->operand(0)->shape().rank();
}

// 133. Padding an empty operand gives a broadcast of the padding value.
Rule PadZeroElement(Instruction* pad, AlgebraicContext& ctx) {
  if (!PadCandidate(pad) || pad->operand(0)->shape().ElementsIn() != 0) {
    return false;
  }
  Instruction* out;
  P2_BUILD(out, MakeBroadcast(ctx.rw, pad->operand(1),
                              Span(pad->shape().dimensions()),
                              std::span<const int64_t>()));
  return Replace(ctx, pad, out);
}

// 134. Interior padding on size-1 dims has no effect: it is dropped.
Rule PadDegenerateInterior(Instruction* pad, AlgebraicContext& ctx) {
  if (!PadCandidate(pad)) return false;
  PaddingConfig config = pad->attrs().padding;
  bool changed = false;
  for (size_t d = 0; d < config.size(); ++d) {
    if (config[d].interior > 0 && pad->operand(0)->shape().dimensions(d) == 1) {
      config[d].interior = 0;
      changed = true;
    }
  }
  if (!changed) return false;
  Instruction* out;
  P2_BUILD(out, MakePad(ctx.rw, pad->operand(0), pad->operand(1), config));
  return Replace(ctx, pad, out);
}

// 135. A pad without any padding is its operand.
Rule PadNoop(Instruction* pad, AlgebraicContext& ctx) {
  if (!PadCandidate(pad)) return false;
  for (const PaddingDimension& p : pad->attrs().padding) {
    if (p.low != 0 || p.high != 0 || p.interior != 0) return false;
  }
  return Replace(ctx, pad, pad->operand(0));
}

// 136. pad(broadcast(x)) whose padded dims are a strict subset of the dims
// the broadcast adds -> broadcast(pad(broadcast(x) over x's dims and the
// padded dims only)): the pad works on a smaller array.
Rule PadBroadcast(Instruction* pad, AlgebraicContext& ctx) {
  if (!PadCandidate(pad)) return false;
  Instruction* b = pad->operand(0);
  if (!Is(b, Opcode::kBroadcast) || b->operand_count() != 1 || !HasOneUse(b) ||
      !StaticArray(b->operand(0))) {
    return false;
  }
  const PaddingConfig& config = pad->attrs().padding;
  const DimVector& bd = b->dimensions();
  if (!std::is_sorted(bd.begin(), bd.end())) return false;
  const int64_t rank = pad->shape().rank();
  std::vector<int64_t> padded;
  for (int64_t d = 0; d < rank; ++d) {
    const PaddingDimension& p = config[d];
    if (p.low == 0 && p.high == 0 && p.interior == 0) continue;
    if (std::find(bd.begin(), bd.end(), d) != bd.end()) return false;
    padded.push_back(d);
  }
  if (padded.empty() ||
      static_cast<int64_t>(padded.size() + bd.size()) >= rank) {
    return false;
  }
  // The kept dims: x's dims and the padded ones, in order.
  std::vector<int64_t> kept(bd.begin(), bd.end());
  kept.insert(kept.end(), padded.begin(), padded.end());
  std::sort(kept.begin(), kept.end());
  std::vector<int64_t> inner_dims, x_pos;
  PaddingConfig inner_config;
  for (size_t k = 0; k < kept.size(); ++k) {
    inner_dims.push_back(b->shape().dimensions(kept[k]));
    inner_config.push_back(config[kept[k]]);
  }
  for (int64_t d : bd) {
    x_pos.push_back(std::find(kept.begin(), kept.end(), d) - kept.begin());
  }
  Instruction *inner, *inner_pad, *out;
  P2_BUILD(inner,
           MakeBroadcast(ctx.rw, b->operand(0), Span(inner_dims), Span(x_pos)));
  P2_BUILD(inner_pad, MakePad(ctx.rw, inner, pad->operand(1), inner_config));
  P2_BUILD(out, MakeBroadcast(ctx.rw, inner_pad,
                              Span(pad->shape().dimensions()), Span(kept)));
  return Replace(ctx, pad, out);
}

// 137. (opt: negative_padding_replacement) negative edge padding -> pad
// with the negative amounts set to 0, then a slice that removes them.
Rule PadNegative(Instruction* pad, AlgebraicContext& ctx) {
  if (!ctx.options.enable_negative_padding_replacement || !PadCandidate(pad)) {
    return false;
  }
  PaddingConfig config = pad->attrs().padding;
  bool negative = false;
  for (PaddingDimension& p : config) {
    if (p.low < 0 || p.high < 0) negative = true;
    p.low = std::max<int64_t>(p.low, 0);
    p.high = std::max<int64_t>(p.high, 0);
  }
  if (!negative) return false;
  Instruction *wide, *out;
  P2_BUILD(wide, MakePad(ctx.rw, pad->operand(0), pad->operand(1), config));
  std::vector<int64_t> starts, limits, strides;
  const PaddingConfig& orig = pad->attrs().padding;
  for (size_t d = 0; d < orig.size(); ++d) {
    const int64_t start = orig[d].low < 0 ? -orig[d].low : 0;
    const int64_t cut = orig[d].high < 0 ? -orig[d].high : 0;
    starts.push_back(start);
    limits.push_back(wide->shape().dimensions(d) - cut);
    strides.push_back(1);
  }
  P2_BUILD(out,
           MakeSlice(ctx.rw, wide, Span(starts), Span(limits), Span(strides)));
  return Replace(ctx, pad, out);
}

}  // namespace

void AddAlgebraicRulesPart2(std::vector<AlgebraicRule>* rules) {
  const std::vector<AlgebraicRule> part2 = {
      // Divide.
      {"divide-one", 64, {Opcode::kDivide}, "A / 1 -> A", &DivideOne},
      {"divide-power-of-two",
       65,
       {Opcode::kDivide},
       "integer A / 2^k -> shifts (signed: on |A|, sign restored)",
       &DividePowerOfTwo},
      {"divide-exp-exp",
       66,
       {Opcode::kDivide},
       "exp(A) / exp(B) -> exp(A - B)",
       &DivideExpExp},
      {"divide-exp",
       67,
       {Opcode::kDivide},
       "A / exp(B) -> A * exp(-B)",
       &DivideExp},
      {"divide-power",
       68,
       {Opcode::kDivide},
       "A / pow(B, C) -> A * pow(B, -C)",
       &DividePower},
      {"divide-sqrt",
       69,
       {Opcode::kDivide},
       "A / sqrt(B) -> A * rsqrt(B) (divisor single-use)",
       &DivideSqrt},
      {"divide-rsqrt",
       69,
       {Opcode::kDivide},
       "A / rsqrt(B) -> A * sqrt(B) (divisor single-use)",
       &DivideRsqrt},
      {"divide-constant",
       70,
       {Opcode::kDivide},
       "float A / C -> A * (1/C), the reciprocal folded",
       &DivideConstant},
      {"divide-divide-divide",
       71,
       {Opcode::kDivide},
       "(A/B) / (C/D) -> (A*D) / (B*C)",
       &DivideOfDivides},
      {"divide-divide-dividend",
       72,
       {Opcode::kDivide},
       "(A/B) / C -> A / (B*C)",
       &DivideDividend},
      {"divide-divide-divisor",
       73,
       {Opcode::kDivide},
       "A / (B/C) -> (A*C) / B",
       &DivideDivisor},
      {"divide-convert-pred",
       74,
       {Opcode::kDivide},
       "convert(pred) / broadcast(y) -> broadcast(1/y) * convert(pred)",
       &DivideConvertPred},
      // Dot.
      {"dot-zero-size",
       75,
       {Opcode::kDot},
       "(LI) zero-element dot or operand -> broadcast(0)",
       &DotZeroSize},
      {"dot-to-multiply",
       76,
       {Opcode::kDot},
       "(LI) dot without contracting dims -> multiply of broadcasts",
       &DotToMultiply},
      {"dot-strength-reduction",
       80,
       {Opcode::kDot},
       "(LI) dot with a vector operand -> reduce(multiply(broadcast))",
       &DotStrengthReduction},
      {"dot-reshape-transpose-constant",
       81,
       {Opcode::kDot},
       "(LI) dot(reshape(transpose(A)), C) -> dot(reshape(A), C')",
       &DotReshapeTransposeConstant},
      {"dot-concat-constant",
       82,
       {Opcode::kDot},
       "(LI) dot(concat(L_i), constant R) -> sum_i dot(L_i, slice_i(R))",
       &DotConcatConstant},
      {"dot-dynamic-slice-constant",
       83,
       {Opcode::kDot},
       "(LI) dot(ds(constant), constant) -> ds(dot(constant, constant))",
       &DotDynamicSliceConstant},
      {"dot-remove-degenerate-dims",
       84,
       {Opcode::kDot},
       "(LI) size-1 dims removed from dot operands by reshapes",
       &DotRemoveDegenerateDims},
      {"dot-transpose-operands",
       85,
       {Opcode::kDot},
       "(LI) dot(transpose(a), transpose(b)) -> transpose(dot(a or b, b or a))",
       &DotTransposeOperands},
      {"dot-move-param-to-rhs",
       86,
       {Opcode::kDot},
       "(LI, opt) dot(param-like, x) -> transpose(dot(x, param-like))",
       &DotMoveParamToRhs},
      // DynamicSlice / DynamicUpdateSlice.
      {"dynamic-slice-noop",
       88,
       {Opcode::kDynamicSlice},
       "dynamic slice of the whole operand -> operand",
       &DynamicSliceNoop},
      {"dynamic-slice-full-dim-zero-index",
       89,
       {Opcode::kDynamicSlice},
       "dims sliced whole get start index 0",
       &DynamicSliceFullDimZeroIndex},
      {"dynamic-slice-broadcast",
       90,
       {Opcode::kDynamicSlice},
       "ds(broadcast(x)) -> broadcast(ds(x))",
       &DynamicSliceBroadcast},
      {"dynamic-slice-reshape",
       91,
       {Opcode::kDynamicSlice},
       "(LI) ds(degenerate reshape(x)) -> reshape(ds(x))",
       &DynamicSliceReshape},
      {"dynamic-slice-transpose",
       92,
       {Opcode::kDynamicSlice},
       "(LI) ds(transpose(x)) -> transpose(ds(x))",
       &DynamicSliceTranspose},
      {"dynamic-slice-to-slice",
       93,
       {Opcode::kDynamicSlice},
       "constant non-negative starts -> slice (starts clamped)",
       &DynamicSliceToSlice},
      {"dynamic-slice-iota",
       94,
       {Opcode::kDynamicSlice},
       "size-1 ds of iota -> reshape(clamp(0, i, n-1))",
       &DynamicSliceIota},
      {"dynamic-slice-dynamic-slice",
       95,
       {Opcode::kDynamicSlice},
       "ds(ds(x, i), j) -> ds(x, clamp(j) + clamp(i))",
       &DynamicSliceOfDynamicSlice},
      {"dynamic-update-slice-broadcast-to-pad",
       96,
       {Opcode::kDynamicUpdateSlice},
       "dus(broadcast(s), U, constant idx) -> pad(U, s)",
       &DynamicUpdateSliceBroadcastToPad},
      {"dynamic-update-slice-full-update",
       97,
       {Opcode::kDynamicUpdateSlice},
       "update of the result's shape -> update",
       &DynamicUpdateSliceFullUpdate},
      {"dynamic-update-slice-empty-update",
       97,
       {Opcode::kDynamicUpdateSlice},
       "zero-element update -> operand",
       &DynamicUpdateSliceEmptyUpdate},
      {"dynamic-update-slice-full-dim-zero-index",
       98,
       {Opcode::kDynamicUpdateSlice},
       "dims updated whole get index 0",
       &DynamicUpdateSliceFullDimZeroIndex},
      {"dynamic-update-slice-of-dynamic-slice",
       99,
       {Opcode::kDynamicUpdateSlice},
       "dus(a, dus(ds(a, id), c, in), id) -> dus(a, c, id + in) (clamped)",
       &DynamicUpdateSliceOfDynamicSlice},
      // Elementwise transcendental / complex.
      {"exp-zero", 100, {Opcode::kExp}, "exp(0) -> 1", &ExpZero},
      {"log-exp", 101, {Opcode::kLog}, "log(exp(a)) -> a", &LogExp},
      {"log-power",
       102,
       {Opcode::kLog},
       "log(pow(a, b)) -> select(b == 0, 0, b * log(|a|))",
       &LogPower},
      {"log-sqrt",
       103,
       {Opcode::kLog},
       "log(sqrt(a)) -> 0.5 * log(a)",
       &LogSqrt},
      {"log-rsqrt",
       103,
       {Opcode::kLog},
       "log(rsqrt(a)) -> -0.5 * log(a)",
       &LogRsqrt},
      {"rsqrt-power-minus-two",
       104,
       {Opcode::kRsqrt},
       "rsqrt(pow(A, -2)) -> A for non-negative A",
       &RsqrtPowerMinusTwo},
      {"rsqrt-reciprocal",
       104,
       {Opcode::kRsqrt},
       "rsqrt(1/A) -> sqrt(A) for non-negative A",
       &RsqrtReciprocal},
      {"sqrt-square",
       105,
       {Opcode::kSqrt},
       "sqrt(A * A) -> abs(A)",
       &SqrtSquare},
      {"complex-real-imag",
       106,
       {Opcode::kComplex},
       "complex(real(c), imag(c)) -> c",
       &ComplexRealImag},
      {"real-complex",
       107,
       {Opcode::kReal},
       "real(complex(r, i)) -> r",
       &RealOfComplex},
      {"real-of-real",
       107,
       {Opcode::kReal},
       "real(x) of real x -> x",
       &RealOfReal},
      {"imag-complex",
       108,
       {Opcode::kImag},
       "imag(complex(r, i)) -> i",
       &ImagOfComplex},
      {"imag-of-real",
       108,
       {Opcode::kImag},
       "imag(x) of real x -> 0",
       &ImagOfReal},
      // Gather / Scatter.
      {"gather-zero-element-operand",
       109,
       {Opcode::kGather},
       "gather from an empty operand -> broadcast(0)",
       &GatherZeroElementOperand},
      {"gather-one-element-operand",
       109,
       {Opcode::kGather},
       "gather from a one-element operand -> broadcast(reshape(x))",
       &GatherOneElementOperand},
      {"gather-small-vector",
       110,
       {Opcode::kGather},
       "gather from a very small vector -> chain of selects",
       &GatherSmallVector},
      {"gather-pad",
       111,
       {Opcode::kGather},
       "gather(pad(x)) padded on pass-through dims -> pad(gather(x))",
       &GatherOfPad},
      {"scatter-empty-updates",
       112,
       {Opcode::kScatter},
       "scatter with empty updates -> its inputs",
       &ScatterEmptyUpdates},
      {"scatter-empty-indices-to-map",
       113,
       {Opcode::kScatter},
       "scatter with empty indices, full update -> map(operand, update)",
       &ScatterEmptyIndicesToMap},
      // Maximum / Minimum / Clamp.
      {"maximum-same-operand",
       114,
       {Opcode::kMaximum},
       "max(x, x) -> x",
       &MinMaxSameOperand},
      {"minimum-same-operand",
       114,
       {Opcode::kMinimum},
       "min(x, x) -> x",
       &MinMaxSameOperand},
      {"maximum-lowest",
       115,
       {Opcode::kMaximum},
       "max(x, lowest) -> x (floats: only with NaN propagation)",
       &MaximumLowest},
      {"minimum-highest",
       115,
       {Opcode::kMinimum},
       "min(x, highest) -> x (floats: only with NaN propagation)",
       &MinimumHighest},
      {"maximum-of-maximum",
       116,
       {Opcode::kMaximum},
       "max(max(x, y), x|y) and max(x, max(x, y)) -> max(x, y)",
       &MinMaxOfSame},
      {"minimum-of-minimum",
       116,
       {Opcode::kMinimum},
       "min(min(x, y), x|y) and min(x, min(x, y)) -> min(x, y)",
       &MinMaxOfSame},
      {"maximum-of-maximum-swap",
       117,
       {Opcode::kMaximum},
       "max(y, max(x, y)) -> max(y, x)",
       &MinMaxOfSameSwap},
      {"minimum-of-minimum-swap",
       117,
       {Opcode::kMinimum},
       "min(y, min(x, y)) -> min(y, x)",
       &MinMaxOfSameSwap},
      {"maximum-minimum-to-clamp",
       118,
       {Opcode::kMaximum},
       "max(bcast(lo), min(x, bcast(hi))) -> clamp(lo, x, hi) if lo < hi",
       &MinMaxToClamp},
      {"minimum-maximum-to-clamp",
       118,
       {Opcode::kMinimum},
       "min(bcast(hi), max(x, bcast(lo))) -> clamp(lo, x, hi) if lo < hi",
       &MinMaxToClamp},
      {"maximum-of-clamp",
       119,
       {Opcode::kMaximum},
       "max(lo, clamp(lo, x, hi)) -> clamp(lo, x, hi)",
       &MaximumOfClamp},
      {"maximum-monotonic",
       120,
       {Opcode::kMaximum},
       "max(f(x), f(y)) -> f(max(x, y)) for f in cbrt, erf, logistic, tanh",
       &MaximumMonotonic},
      {"clamp-of-clamp",
       121,
       {Opcode::kClamp},
       "clamp(a, clamp(a, x, b), b) -> clamp(a, x, b)",
       &ClampOfClamp},
      {"clamp-device-id",
       122,
       {Opcode::kClamp},
       "clamp(0, partition-id|replica-id, c) -> id if count <= c + 1",
       &ClampDeviceId},
      // Multiply.
      {"multiply-one", 123, {Opcode::kMultiply}, "A * 1 -> A", &MultiplyOne},
      {"multiply-zero",
       124,
       {Opcode::kMultiply},
       "A * 0 -> 0 (integers, or fast math)",
       &MultiplyZero},
      {"multiply-negate-negate",
       125,
       {Opcode::kMultiply},
       "(-a) * (-b) -> a * b",
       &MultiplyNegateNegate},
      {"multiply-abs-abs",
       126,
       {Opcode::kMultiply},
       "abs(x) * abs(x) -> x * x (not complex)",
       &MultiplyAbsAbs},
      {"multiply-convert-pred",
       127,
       {Opcode::kMultiply},
       "x * convert(pred p) -> select(p, x, 0)",
       &MultiplyConvertPred},
      {"multiply-two-constant-products",
       128,
       {Opcode::kMultiply},
       "(a*c1) * (b*c2) -> (a*b) * (c1*c2)",
       &MultiplyTwoConstantProducts},
      {"multiply-constant-product",
       128,
       {Opcode::kMultiply},
       "(a*c1) * c2 -> a * (c1*c2)",
       &MultiplyConstantProduct},
      {"multiply-broadcast-scalar-constant",
       129,
       {Opcode::kMultiply},
       "(a*c) * broadcast(b) -> a * broadcast(b*c)",
       &MultiplyBroadcastScalarConstant},
      {"multiply-broadcast-constants",
       129,
       {Opcode::kMultiply},
       "(a * bcast(c1)) * bcast(c2) -> a * bcast(c1*c2)",
       &MultiplyBroadcastConstants},
      {"multiply-exp-exp",
       130,
       {Opcode::kMultiply},
       "exp(a) * exp(b) -> exp(a + b)",
       &MultiplyExpExp},
      {"multiply-sqrt-sqrt",
       131,
       {Opcode::kMultiply},
       "sqrt(x) * sqrt(x) -> x for non-negative x",
       &MultiplySqrtSqrt},
      {"multiply-rsqrt-rsqrt",
       131,
       {Opcode::kMultiply},
       "rsqrt(x) * rsqrt(x) -> 1/x for non-negative x",
       &MultiplyRsqrtRsqrt},
      {"multiply-conv-bias-reorder",
       132,
       {Opcode::kMultiply},
       "(opt) (conv(x, F) + bias) * bcast(s) -> conv(x, F*s) + bias*s",
       &MultiplyConvBiasReorder},
      // Pad.
      {"pad-zero-element",
       133,
       {Opcode::kPad},
       "pad of an empty operand -> broadcast(padding value)",
       &PadZeroElement},
      {"pad-degenerate-interior",
       134,
       {Opcode::kPad},
       "interior padding on size-1 dims removed",
       &PadDegenerateInterior},
      {"pad-noop",
       135,
       {Opcode::kPad},
       "pad without padding -> operand",
       &PadNoop},
      {"pad-broadcast",
       136,
       {Opcode::kPad},
       "pad(broadcast(x)) -> broadcast(pad(smaller broadcast(x)))",
       &PadBroadcast},
      {"pad-negative",
       137,
       {Opcode::kPad},
       "(opt) negative edge padding -> non-negative pad + slice",
       &PadNegative},
  };
  rules->insert(rules->end(), part2.begin(), part2.end());
}

}  // namespace hlogym
