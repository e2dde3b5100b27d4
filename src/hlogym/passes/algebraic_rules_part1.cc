// AlgebraicSimplifier rules, checklist entries 1-63.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/algebraic_simplifier.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/pattern_util.h"

namespace hlogym {
namespace {

// A builder that fails means the pattern cannot be rebuilt on this input:
// the rule does not match (odd input must never fail the pass).
#define PART1_ASSIGN_OR_NO_MATCH(lhs, expr) \
  PART1_ASSIGN_OR_NO_MATCH_IMPL(HLOGYM_CONCAT(part1_or_, __LINE__), lhs, expr)
#define PART1_ASSIGN_OR_NO_MATCH_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return false;                        \
  lhs = *tmp

// ---------------------------------------------------------------------------
// Helpers.

bool IsOp(const Instruction* inst, Opcode op) {
  return inst != nullptr && inst->opcode() == op;
}

bool HasKnownLiteral(const Instruction* inst) {
  return IsOp(inst, Opcode::kConstant) && inst->has_literal() &&
         !inst->literal().is_unknown();
}

// XLA's m::ConstantScalar(): a rank-0 constant.
bool IsScalarConstant(const Instruction* inst) {
  return HasKnownLiteral(inst) && inst->shape().IsScalar();
}

// XLA's m::ConstantEffectiveScalar(): a constant with one element.
bool IsEffectiveScalarConstant(const Instruction* inst) {
  return HasKnownLiteral(inst) && inst->shape().IsArray() &&
         inst->shape().ElementsIn() == 1;
}

bool IsBroadcastOfScalarConstant(const Instruction* inst) {
  return IsOp(inst, Opcode::kBroadcast) && inst->operand_count() == 1 &&
         IsScalarConstant(inst->operand(0));
}

bool IsBroadcastOfScalar(const Instruction* inst) {
  return IsOp(inst, Opcode::kBroadcast) && inst->operand_count() == 1 &&
         inst->operand(0)->shape().IsScalar();
}

bool IsArray(const Instruction* inst) {
  return inst != nullptr && inst->shape().IsArray();
}

// Binary instructions with exactly two operands (checked before indexing).
bool IsBinary(const Instruction* inst, Opcode op) {
  return IsOp(inst, op) && inst->operand_count() == 2;
}

// A copy of the user list (replacements change the live one).
std::vector<Instruction*> UsersOf(const Instruction* inst) {
  std::vector<Instruction*> users;
  users.reserve(inst->user_count());
  for (Instruction* u : inst->users()) users.push_back(u);
  return users;
}

bool IsDead(const Instruction* inst) {
  return inst->user_count() == 0 && !inst->IsRoot();
}

bool LayoutSensitive(const AlgebraicContext& ctx) {
  return ctx.options.is_layout_sensitive;
}

// XLA's "same shape" for replacements: exact (with layout) when layout
// sensitive, compatible otherwise.
bool SameShapeForMode(const AlgebraicContext& ctx, const Shape& a,
                      const Shape& b) {
  return LayoutSensitive(ctx) ? a == b : a.Compatible(b);
}

// Both ends of a rule go through the shared ReplaceForRule.
absl::StatusOr<bool> ReplaceWithExisting(Instruction* old, Instruction* with,
                                         AlgebraicContext& ctx) {
  return ReplaceForRule(ctx, old, with);
}
absl::StatusOr<bool> ReplaceWithNew(Instruction* old, Instruction* fresh,
                                    AlgebraicContext& ctx) {
  return ReplaceForRule(ctx, old, fresh);
}

// A clone that changes rank or tuple arity cannot keep a sharding written
// for the old shape (XLA's derived instructions drop it the same way).
void DropShardingIfShapeKindChanged(Instruction* clone, const Shape& from) {
  const Shape& to = clone->shape();
  const bool same_kind =
      to.IsTuple()
          ? from.IsTuple() && to.tuple_shapes_size() == from.tuple_shapes_size()
          : !from.IsTuple() && to.rank() == from.rank();
  if (!same_kind && clone->attrs().sharding.has_value()) {
    clone->mutable_attrs()->sharding.reset();
  }
}

DimVector Dims(const Instruction* inst) { return inst->shape().dimensions(); }

std::vector<int64_t> ToVector(const DimVector& d) {
  return std::vector<int64_t>(d.begin(), d.end());
}

bool IsPermutation(const DimVector& perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

std::vector<int64_t> InversePermutation(const DimVector& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = i;
  return inv;
}

bool HasDegenerateDims(const Shape& s) {
  for (int64_t d : s.dimensions()) {
    if (d == 1) return true;
  }
  return false;
}

// Positions of `out` that are 1-sized dimensions inserted into `in` (the
// other dimensions of `out` are those of `in`, in order). nullopt if `out`
// is not `in` with 1-sized dimensions inserted.
std::optional<std::vector<int64_t>> InsertedOnes(const DimVector& in,
                                                 const DimVector& out) {
  std::vector<int64_t> inserted;
  size_t i = 0;
  for (size_t j = 0; j < out.size(); ++j) {
    if (i < in.size() && in[i] == out[j]) {
      ++i;
    } else if (out[j] == 1) {
      inserted.push_back(static_cast<int64_t>(j));
    } else {
      return std::nullopt;
    }
  }
  if (i != in.size()) return std::nullopt;
  return inserted;
}

// The scalar value of an effective-scalar constant (or a broadcast of one)
// for real types, as XLA's GetConstantValue.
std::optional<double> EffectiveScalarValue(const Instruction* inst) {
  if (IsOp(inst, Opcode::kBroadcast) && inst->operand_count() == 1) {
    inst = inst->operand(0);
  }
  if (!IsEffectiveScalarConstant(inst)) return std::nullopt;
  const Literal& lit = inst->literal();
  PrimitiveType t = lit.shape().element_type();
  if (IsFloatingPointType(t)) return lit.GetAsDouble(0);
  if (IsUnsignedIntegralType(t)) {
    return static_cast<double>(lit.GetAsUint64(0));
  }
  if (IsIntegralType(t)) return static_cast<double>(lit.GetAsInt64(0));
  return std::nullopt;
}

// XLA's IsAllFpConstantPowerOf2: a scalar-like constant equal to +-2^k.
bool IsAllFpConstantPowerOf2(const Instruction* inst) {
  std::optional<double> v = EffectiveScalarValue(inst);
  if (!v || !std::isfinite(*v)) return false;
  int exp = 0;
  double mantissa = std::frexp(*v, &exp);
  return mantissa == 0.5 || mantissa == -0.5;
}

// ---- Types: XLA's primitive_util::CastPreservesValues.

struct FloatInfo {
  int significand_width;   // mantissa bits + the implicit one
  int overflow_exponent;   // numeric_limits::max_exponent
  int underflow_exponent;  // numeric_limits::min_exponent
  bool has_inf;
  bool has_nan;
  bool has_negative_zero;
};

std::optional<FloatInfo> GetFloatInfo(PrimitiveType t) {
  if (t == PrimitiveType::kF32)
    return FloatInfo{24, 128, -125, true, true, true};
  if (t == PrimitiveType::kF64) {
    return FloatInfo{53, 1024, -1021, true, true, true};
  }
  std::optional<FloatFormat> f = SmallFloatFormat(t);
  if (!f) return std::nullopt;
  FloatInfo info;
  info.significand_width = f->mantissa_bits + 1;
  int max_biased = (1 << f->exponent_bits) - 1 - (f->has_inf ? 1 : 0);
  // Without a mantissa, the all-ones exponent is the NaN encoding.
  if (!f->has_inf && f->has_nan && f->mantissa_bits == 0) --max_biased;
  info.overflow_exponent = max_biased - f->bias + 1;
  info.underflow_exponent = 2 - f->bias;
  info.has_inf = f->has_inf;
  info.has_nan = f->has_nan;
  info.has_negative_zero = f->has_sign && !f->nan_negative_zero;
  return info;
}

bool CastPreservesValues(PrimitiveType from, PrimitiveType to) {
  if (from == to) return true;
  if (to == PrimitiveType::kF8E8M0FNU) return false;  // no zero
  if (from == PrimitiveType::kPred) return true;
  if (to == PrimitiveType::kPred) return false;
  if (IsComplexType(to)) {
    PrimitiveType from_component =
        IsComplexType(from) ? ComplexComponentType(from) : from;
    return CastPreservesValues(from_component, ComplexComponentType(to));
  }
  if (IsComplexType(from)) return false;
  if (IsFloatingPointType(from) && IsFloatingPointType(to)) {
    std::optional<FloatInfo> f = GetFloatInfo(from);
    std::optional<FloatInfo> g = GetFloatInfo(to);
    if (!f || !g) return false;
    return (!f->has_inf || g->has_inf) && (!f->has_nan || g->has_nan) &&
           (!f->has_negative_zero || g->has_negative_zero) &&
           f->underflow_exponent >= g->underflow_exponent &&
           f->significand_width <= g->significand_width &&
           f->overflow_exponent <= g->overflow_exponent;
  }
  if (!IsIntegralType(from)) return false;
  const int from_bits =
      IsSignedIntegralType(from) ? BitWidth(from) - 1 : BitWidth(from);
  if (IsFloatingPointType(to)) {
    std::optional<FloatInfo> g = GetFloatInfo(to);
    if (!g) return false;
    return from_bits <= g->significand_width &&
           BitWidth(from) - 1 < g->overflow_exponent;
  }
  if (!IsIntegralType(to)) return false;
  if (IsSignedIntegralType(from) && IsUnsignedIntegralType(to)) return false;
  const int to_bits =
      IsSignedIntegralType(to) ? BitWidth(to) - 1 : BitWidth(to);
  return from_bits <= to_bits;
}

// ===========================================================================
// Abs, Add, And, Or, Not, Negate (entries 1-14).

// 1. abs(x) -> x when x is known non-negative.
absl::StatusOr<bool> AbsNonNegative(Instruction* abs, AlgebraicContext& ctx) {
  if (abs->operand_count() != 1) return false;
  Instruction* x = abs->operand(0);
  // Complex abs changes the element type; x*x is not non-negative there.
  if (!IsArray(x) || IsComplexType(x->shape().element_type())) return false;
  if (!IsNonNegative(x)) return false;
  return ReplaceWithExisting(abs, x, ctx);
}

// 2. add(A, 0) -> A and add(0, A) -> A.
absl::StatusOr<bool> AddZero(Instruction* add, AlgebraicContext& ctx) {
  for (int i = 0; i < 2; ++i) {
    Instruction* other = add->operand(1 - i);
    if (IsAll(add->operand(i), 0) && other->shape().Compatible(add->shape())) {
      return ctx.rw.ReplaceInstruction(add, other);
    }
  }
  return false;
}

// 3. add(constant, A) -> add(A, constant).
absl::StatusOr<bool> AddCanonicalizeConstant(Instruction* add,
                                             AlgebraicContext& ctx) {
  if (!IsBinary(add, Opcode::kAdd)) return false;
  Instruction* lhs = add->operand(0);
  Instruction* rhs = add->operand(1);
  if (!IsOp(lhs, Opcode::kConstant) || IsOp(rhs, Opcode::kConstant)) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(Instruction * swapped,
                           MakeBinary(ctx.rw, Opcode::kAdd, rhs, lhs));
  return ReplaceWithNew(add, swapped, ctx);
}

// The constants of entries 4 and 5: both plain constants, or both
// broadcasts of scalar constants (then the scalars are returned).
bool MatchConstantPair(Instruction* c1, Instruction* c2, Instruction** k1,
                       Instruction** k2) {
  if (IsOp(c1, Opcode::kConstant) && IsOp(c2, Opcode::kConstant)) {
    *k1 = c1;
    *k2 = c2;
    return true;
  }
  if (IsBroadcastOfScalarConstant(c1) && IsBroadcastOfScalarConstant(c2)) {
    *k1 = c1->operand(0);
    *k2 = c2->operand(0);
    return true;
  }
  return false;
}

// C1 + C2 as an instruction (folded later), broadcast to `like` if scalar.
absl::StatusOr<Instruction*> SumOfConstants(Rewriter& rw, Instruction* k1,
                                            Instruction* k2,
                                            const Instruction* like) {
  HLOGYM_ASSIGN_OR_RETURN(Instruction * sum,
                          MakeBinary(rw, Opcode::kAdd, k1, k2));
  if (sum->shape().IsScalar() && !like->shape().IsScalar()) {
    return MakeBroadcastLike(rw, sum, like->shape(), {});
  }
  return sum;
}

// 4. add(add(A, C1), C2) -> add(A, C1 + C2).
absl::StatusOr<bool> AddReassociateConstants(Instruction* add,
                                             AlgebraicContext& ctx) {
  if (!IsBinary(add, Opcode::kAdd)) return false;
  Instruction* inner = add->operand(0);
  if (!IsBinary(inner, Opcode::kAdd)) return false;
  Instruction* a = inner->operand(0);
  if (IsOp(a, Opcode::kConstant)) return false;
  Instruction *k1, *k2;
  if (!MatchConstantPair(inner->operand(1), add->operand(1), &k1, &k2)) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(Instruction * sum,
                           SumOfConstants(ctx.rw, k1, k2, add));
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBinary(ctx.rw, Opcode::kAdd, a, sum));
  return ReplaceWithNew(add, result, ctx);
}

// 5. add(sub(C1, A), C2) -> sub(C1 + C2, A).
absl::StatusOr<bool> AddSubtractConstants(Instruction* add,
                                          AlgebraicContext& ctx) {
  if (!IsBinary(add, Opcode::kAdd)) return false;
  Instruction* sub = add->operand(0);
  if (!IsBinary(sub, Opcode::kSubtract)) return false;
  Instruction* a = sub->operand(1);
  if (IsOp(a, Opcode::kConstant)) return false;
  Instruction *k1, *k2;
  if (!MatchConstantPair(sub->operand(0), add->operand(1), &k1, &k2)) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(Instruction * sum,
                           SumOfConstants(ctx.rw, k1, k2, add));
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBinary(ctx.rw, Opcode::kSubtract, sum, a));
  return ReplaceWithNew(add, result, ctx);
}

// 6. add(A, dus(broadcast(0), U, idx)) -> dus(A, add(ds(A, idx), U), idx):
// only the updated window needs the addition.
absl::StatusOr<bool> AddDynamicUpdateSliceOfZeros(Instruction* add,
                                                  AlgebraicContext& ctx) {
  if (!IsBinary(add, Opcode::kAdd)) return false;
  for (int i = 0; i < 2; ++i) {
    Instruction* a = add->operand(i);
    Instruction* dus = add->operand(1 - i);
    if (!IsOp(dus, Opcode::kDynamicUpdateSlice) || dus->operand_count() < 2) {
      continue;
    }
    Instruction* zeros = dus->operand(0);
    if (!IsOp(zeros, Opcode::kBroadcast) || zeros->operand_count() != 1 ||
        !IsEffectiveScalarConstant(zeros->operand(0)) ||
        !IsAll(zeros->operand(0), 0)) {
      continue;
    }
    Instruction* update = dus->operand(1);
    if (!IsArray(update) || !IsArray(a)) continue;
    std::vector<Instruction*> indices(dus->operands().begin() + 2,
                                      dus->operands().end());
    std::vector<int64_t> sizes = ToVector(Dims(update));
    PART1_ASSIGN_OR_NO_MATCH(Instruction * slice,
                             MakeDynamicSlice(ctx.rw, a, indices, sizes));
    PART1_ASSIGN_OR_NO_MATCH(Instruction * partial,
                             MakeBinary(ctx.rw, Opcode::kAdd, slice, update));
    PART1_ASSIGN_OR_NO_MATCH(
        Instruction * result,
        MakeDynamicUpdateSlice(ctx.rw, a, partial, indices));
    return ReplaceWithNew(add, result, ctx);
  }
  return false;
}

// 7. add(mul(A, C), mul(B, C)) -> mul(add(A, B), C).
absl::StatusOr<bool> AddFactorCommonMultiplicand(Instruction* add,
                                                 AlgebraicContext& ctx) {
  if (!IsBinary(add, Opcode::kAdd)) return false;
  Instruction* lhs = add->operand(0);
  Instruction* rhs = add->operand(1);
  if (!IsBinary(lhs, Opcode::kMultiply) || !IsBinary(rhs, Opcode::kMultiply)) {
    return false;
  }
  // One multiply fewer only if neither product is used elsewhere.
  if (lhs->user_count() != 1 || rhs->user_count() != 1) return false;
  for (int k = 1; k >= 0; --k) {
    Instruction* a = lhs->operand(1 - k);
    Instruction* c = lhs->operand(k);
    Instruction* b = nullptr;
    if (rhs->operand(0) == c) {
      b = rhs->operand(1);
    } else if (rhs->operand(1) == c) {
      b = rhs->operand(0);
    } else {
      continue;
    }
    // Exact for integers; for floats only when scaling by a power of two
    // (or when the user declares floats to be reals).
    if (!IsIntegralType(add->shape().element_type()) &&
        !ctx.options.enable_floats_are_real && !IsAllFpConstantPowerOf2(c)) {
      return false;
    }
    PART1_ASSIGN_OR_NO_MATCH(Instruction * sum,
                             MakeBinary(ctx.rw, Opcode::kAdd, a, b));
    PART1_ASSIGN_OR_NO_MATCH(Instruction * product,
                             MakeBinary(ctx.rw, Opcode::kMultiply, sum, c));
    return ReplaceWithNew(add, product, ctx);
  }
  return false;
}

// A single-operand scatter used once whose combiner adds its parameters.
bool IsSingleUseScatterAdd(const Instruction* s) {
  if (!IsOp(s, Opcode::kScatter) || s->operand_count() != 3 ||
      s->user_count() != 1 || !s->shape().IsArray() ||
      !s->attrs().scatter_dnums.has_value() ||
      s->called_computations().size() != 1) {
    return false;
  }
  std::optional<Opcode> op = ScalarReducerOpcode(s->to_apply());
  return op.has_value() && *op == Opcode::kAdd;
}

// 8. (LI) add(scatter_add(A, I, U), B) -> scatter_add(add(A, B), I, U).
absl::StatusOr<bool> AddIntoScatterAdd(Instruction* add,
                                       AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !IsBinary(add, Opcode::kAdd)) return false;
  Instruction* lhs = add->operand(0);
  Instruction* rhs = add->operand(1);
  bool lhs_scatter = IsSingleUseScatterAdd(lhs);
  bool rhs_scatter = IsSingleUseScatterAdd(rhs);
  // Two scatters: entry 9.
  if (lhs_scatter == rhs_scatter) return false;
  Instruction* scatter = rhs_scatter ? rhs : lhs;
  Instruction* other = rhs_scatter ? lhs : rhs;
  Instruction* sum = nullptr;
  if (rhs_scatter) {
    PART1_ASSIGN_OR_NO_MATCH(
        sum, MakeBinary(ctx.rw, Opcode::kAdd, other, scatter->operand(0)));
  } else {
    PART1_ASSIGN_OR_NO_MATCH(
        sum, MakeBinary(ctx.rw, Opcode::kAdd, scatter->operand(0), other));
  }
  Instruction* ops[] = {sum, scatter->operand(1), scatter->operand(2)};
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      CloneWithNewOperands(ctx.rw, scatter, add->shape(), ops));
  return ReplaceWithNew(add, result, ctx);
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Dimensions of `s` listed in `dims`, in order (FilterDimensions).
DimVector FilterDims(const Shape& s, const std::vector<int64_t>& dims) {
  DimVector out;
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (Contains(dims, i)) out.push_back(s.dimensions(i));
  }
  return out;
}

// 9. (LI) add(scatter_add(A, I1, U1), scatter_add(B, I2, U2)) -> one
// scatter of add(A, B) with concatenated indices and updates when that is
// safe and cheap, otherwise two chained scatters.
absl::StatusOr<bool> AddOfTwoScatterAdds(Instruction* add,
                                         AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !IsBinary(add, Opcode::kAdd)) return false;
  Instruction* lhs = add->operand(0);
  Instruction* rhs = add->operand(1);
  if (lhs == rhs || !IsSingleUseScatterAdd(lhs) ||
      !IsSingleUseScatterAdd(rhs)) {
    return false;
  }
  const ScatterDimensionNumbers& ld = *lhs->attrs().scatter_dnums;
  const ScatterDimensionNumbers& rd = *rhs->attrs().scatter_dnums;
  Instruction* lhs_index = lhs->operand(1);
  Instruction* rhs_index = rhs->operand(1);
  Instruction* lhs_update = lhs->operand(2);
  Instruction* rhs_update = rhs->operand(2);
  const int64_t index_rank = lhs_index->shape().rank();
  if (index_rank != rhs_index->shape().rank()) return false;

  // The concatenation dimension: the only one whose sizes differ, or else
  // the first (outermost) equal one.
  int64_t first_index_dim = index_rank;
  int64_t first_update_dim = lhs_update->shape().rank();
  std::optional<int64_t> index_concat_dim, update_concat_dim;
  for (int64_t d = index_rank - 1, update_dim = lhs_update->shape().rank() - 1;
       d >= 0; --d) {
    if (d == ld.index_vector_dim) continue;
    while (Contains(ld.update_window_dims, update_dim)) --update_dim;
    if (Contains(ld.scatter_indices_batching_dims, d)) {
      if (lhs_index->shape().dimensions(d) !=
          rhs_index->shape().dimensions(d)) {
        return false;
      }
      --update_dim;
      continue;
    }
    if (lhs_index->shape().dimensions(d) == rhs_index->shape().dimensions(d)) {
      first_index_dim = d;
      first_update_dim = update_dim--;
      continue;
    }
    if (index_concat_dim) return false;  // two differing dimensions
    index_concat_dim = d;
    update_concat_dim = update_dim--;
  }
  if (!index_concat_dim) {
    index_concat_dim = first_index_dim;
    update_concat_dim = first_update_dim;
  }
  // Scalar scatters would need reshapes of the index and update.
  if (*index_concat_dim == index_rank) return false;
  if (lhs_update->shape().ElementsIn() + rhs_update->shape().ElementsIn() >=
      lhs->shape().ElementsIn()) {
    return false;
  }
  const bool same_dnums =
      ld.index_vector_dim == rd.index_vector_dim &&
      ld.scatter_dims_to_operand_dims == rd.scatter_dims_to_operand_dims &&
      ld.inserted_window_dims == rd.inserted_window_dims &&
      ld.update_window_dims == rd.update_window_dims &&
      ld.scatter_indices_batching_dims == rd.scatter_indices_batching_dims &&
      ld.input_batching_dims == rd.input_batching_dims;
  // Concatenated indices are neither unique nor sorted any more.
  const bool concat_is_safe =
      !lhs->attrs().unique_indices && !rhs->attrs().unique_indices &&
      !lhs->attrs().indices_are_sorted && !rhs->attrs().indices_are_sorted;
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * sum,
      MakeBinary(ctx.rw, Opcode::kAdd, lhs->operand(0), rhs->operand(0)));
  if (concat_is_safe && same_dnums &&
      lhs_index->shape().element_type() == rhs_index->shape().element_type() &&
      FilterDims(lhs_update->shape(), ld.update_window_dims) ==
          FilterDims(rhs_update->shape(), rd.update_window_dims)) {
    Instruction* index_parts[] = {lhs_index, rhs_index};
    PART1_ASSIGN_OR_NO_MATCH(
        Instruction * index,
        MakeConcatenate(ctx.rw, index_parts, *index_concat_dim));
    Instruction* update_parts[] = {lhs_update, rhs_update};
    PART1_ASSIGN_OR_NO_MATCH(
        Instruction * update,
        MakeConcatenate(ctx.rw, update_parts, *update_concat_dim));
    Instruction* ops[] = {sum, index, update};
    PART1_ASSIGN_OR_NO_MATCH(
        Instruction * result,
        CloneWithNewOperands(ctx.rw, lhs, add->shape(), ops));
    return ReplaceWithNew(add, result, ctx);
  }
  Instruction* inner_ops[] = {sum, rhs_index, rhs_update};
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * inner,
      CloneWithNewOperands(ctx.rw, rhs, add->shape(), inner_ops));
  Instruction* outer_ops[] = {inner, lhs_index, lhs_update};
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * outer,
      CloneWithNewOperands(ctx.rw, lhs, add->shape(), outer_ops));
  return ReplaceWithNew(add, outer, ctx);
}

bool IsBroadcastOfConstant(const Instruction* inst) {
  return IsOp(inst, Opcode::kBroadcast) && inst->operand_count() == 1 &&
         IsOp(inst->operand(0), Opcode::kConstant);
}

// 10. (GPU) add(add(conv, bcast(c0)), bcast(c1)) -> add(bcast(c0+c1), conv):
// keeps a single bias next to the convolution.
absl::StatusOr<bool> AddSinkConvolutionBiases(Instruction* add,
                                              AlgebraicContext& ctx) {
  if (!ctx.options.enable_sink_broadcast || !IsBinary(add, Opcode::kAdd)) {
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    Instruction* inner = add->operand(i);
    Instruction* bcast1 = add->operand(1 - i);
    if (!IsBinary(inner, Opcode::kAdd) || !IsBroadcastOfConstant(bcast1)) {
      continue;
    }
    for (int j = 0; j < 2; ++j) {
      Instruction* conv = inner->operand(j);
      Instruction* bcast0 = inner->operand(1 - j);
      if (!IsOp(conv, Opcode::kConvolution) || !IsBroadcastOfConstant(bcast0)) {
        continue;
      }
      Instruction* c0 = bcast0->operand(0);
      Instruction* c1 = bcast1->operand(0);
      if (c0->shape() != c1->shape() ||
          bcast0->dimensions() != bcast1->dimensions()) {
        return false;
      }
      PART1_ASSIGN_OR_NO_MATCH(Instruction * sum,
                               MakeBinary(ctx.rw, Opcode::kAdd, c0, c1));
      std::vector<int64_t> bdims = ToVector(bcast0->dimensions());
      PART1_ASSIGN_OR_NO_MATCH(
          Instruction * bias,
          MakeBroadcastLike(ctx.rw, sum, bcast0->shape(), bdims));
      PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                               MakeBinary(ctx.rw, Opcode::kAdd, bias, conv));
      return ReplaceWithNew(add, result, ctx);
    }
  }
  return false;
}

bool BothPred(const Instruction* inst) {
  return inst->operand(0)->shape().element_type() == PrimitiveType::kPred &&
         inst->operand(1)->shape().element_type() == PrimitiveType::kPred;
}

// 11. and(A, true) -> A (pred, both orders).
absl::StatusOr<bool> AndTrue(Instruction* inst, AlgebraicContext& ctx) {
  if (!IsBinary(inst, Opcode::kAnd) || !BothPred(inst)) return false;
  for (int i = 1; i >= 0; --i) {
    if (IsAll(inst->operand(i), 1)) {
      HLOGYM_ASSIGN_OR_RETURN(
          bool done, ReplaceWithExisting(inst, inst->operand(1 - i), ctx));
      if (done) return true;
    }
  }
  return false;
}

// 11. and(A, 0) -> 0 (both orders; false for pred).
absl::StatusOr<bool> AndZero(Instruction* inst, AlgebraicContext& ctx) {
  if (!IsBinary(inst, Opcode::kAnd)) return false;
  for (int i = 1; i >= 0; --i) {
    if (IsAll(inst->operand(i), 0)) {
      HLOGYM_ASSIGN_OR_RETURN(bool done,
                              ReplaceWithExisting(inst, inst->operand(i), ctx));
      if (done) return true;
    }
  }
  return false;
}

// x < c for an s32 effective-scalar constant c (also written c > x).
struct LessThanConstant {
  Instruction* var;
  int64_t bound;
};

bool IsS32EffectiveScalarConstant(const Instruction* inst) {
  return IsEffectiveScalarConstant(inst) &&
         inst->shape().element_type() == PrimitiveType::kS32;
}

std::optional<LessThanConstant> MatchLessThanConstant(Instruction* cmp) {
  if (!IsBinary(cmp, Opcode::kCompare)) return std::nullopt;
  ComparisonType type = cmp->comparison_type();
  if (type != ComparisonType::kDefault && type != ComparisonType::kSigned) {
    return std::nullopt;
  }
  Instruction* lhs = cmp->operand(0);
  Instruction* rhs = cmp->operand(1);
  if (cmp->comparison_direction() == ComparisonDirection::kLt &&
      IsS32EffectiveScalarConstant(rhs)) {
    return LessThanConstant{lhs, rhs->literal().GetAsInt64(0)};
  }
  if (cmp->comparison_direction() == ComparisonDirection::kGt &&
      IsS32EffectiveScalarConstant(lhs)) {
    return LessThanConstant{rhs, lhs->literal().GetAsInt64(0)};
  }
  return std::nullopt;
}

// 12. and(x < c1, x < c2) -> x < min(c1, c2).
absl::StatusOr<bool> AndCompareMinBound(Instruction* inst,
                                        AlgebraicContext& ctx) {
  if (!IsBinary(inst, Opcode::kAnd)) return false;
  std::optional<LessThanConstant> a = MatchLessThanConstant(inst->operand(0));
  std::optional<LessThanConstant> b = MatchLessThanConstant(inst->operand(1));
  if (!a || !b || a->var != b->var) return false;
  int64_t bound = std::min(a->bound, b->bound);
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * limit,
      MakeFilledLike(ctx.rw, a->var, static_cast<double>(bound)));
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeCompare(ctx.rw, ComparisonDirection::kLt, a->var, limit));
  return ReplaceWithNew(inst, result, ctx);
}

// 13. or(A, true) -> true (pred, both orders).
absl::StatusOr<bool> OrTrue(Instruction* inst, AlgebraicContext& ctx) {
  if (!IsBinary(inst, Opcode::kOr) || !BothPred(inst)) return false;
  for (int i = 1; i >= 0; --i) {
    if (IsAll(inst->operand(i), 1)) {
      HLOGYM_ASSIGN_OR_RETURN(bool done,
                              ReplaceWithExisting(inst, inst->operand(i), ctx));
      if (done) return true;
    }
  }
  return false;
}

// 13. or(A, 0) -> A (both orders).
absl::StatusOr<bool> OrZero(Instruction* inst, AlgebraicContext& ctx) {
  if (!IsBinary(inst, Opcode::kOr)) return false;
  for (int i = 1; i >= 0; --i) {
    if (IsAll(inst->operand(i), 0)) {
      HLOGYM_ASSIGN_OR_RETURN(
          bool done, ReplaceWithExisting(inst, inst->operand(1 - i), ctx));
      if (done) return true;
    }
  }
  return false;
}

// 14. not(not(x)) -> x and negate(negate(x)) -> x.
absl::StatusOr<bool> UnaryInvolution(Instruction* inst, AlgebraicContext& ctx) {
  if (inst->operand_count() != 1) return false;
  Instruction* inner = inst->operand(0);
  if (!IsOp(inner, inst->opcode()) || inner->operand_count() != 1) {
    return false;
  }
  return ReplaceWithExisting(inst, inner->operand(0), ctx);
}

// ===========================================================================
// Collectives (15-16).

// 15. all-gather(broadcast(scalar constant)) -> broadcast to its shape: every
// participant contributes the same values.
absl::StatusOr<bool> AllGatherOfBroadcastConstant(Instruction* ag,
                                                  AlgebraicContext& ctx) {
  if (!ag->shape().IsArray() || ag->operand_count() != 1 ||
      !IsBroadcastOfScalarConstant(ag->operand(0))) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBroadcastLike(ctx.rw, ag->operand(0)->operand(0), ag->shape(), {}));
  return ReplaceWithNew(ag, result, ctx);
}

// 16. all-to-all(broadcast(scalar constant)) -> its operand.
absl::StatusOr<bool> AllToAllOfBroadcastConstant(Instruction* a2a,
                                                 AlgebraicContext& ctx) {
  if (!a2a->shape().IsArray() || a2a->operand_count() != 1 ||
      !IsBroadcastOfScalarConstant(a2a->operand(0))) {
    return false;
  }
  return ReplaceWithExisting(a2a, a2a->operand(0), ctx);
}

// ===========================================================================
// Bitcast, BitcastConvert, Copy (17-29).

// 17. bitcast(bitcast(x)) -> bitcast(x).
absl::StatusOr<bool> BitcastOfBitcast(Instruction* bitcast,
                                      AlgebraicContext& ctx) {
  if (bitcast->operand_count() != 1) return false;
  Instruction* inner = bitcast->operand(0);
  if (!IsOp(inner, Opcode::kBitcast) || inner->operand_count() != 1) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBitcast(ctx.rw, inner->operand(0), bitcast->shape()));
  return ReplaceWithNew(bitcast, result, ctx);
}

// 17. A bitcast to the same element type and shape -> its operand. The
// layouts must match in both modes: a bitcast between different layouts of
// the same dimensions moves data.
absl::StatusOr<bool> BitcastNoOp(Instruction* bitcast, AlgebraicContext& ctx) {
  if (bitcast->operand_count() != 1) return false;
  Instruction* x = bitcast->operand(0);
  if (!IsArray(x) || !SameElementType(x, bitcast) ||
      x->shape() != bitcast->shape()) {
    return false;
  }
  return ReplaceWithExisting(bitcast, x, ctx);
}

bool HasDefaultLayout(const Shape& s) {
  if (!s.has_layout()) return true;
  const DimVector& m2m = s.layout().minor_to_major;
  if (static_cast<int64_t>(m2m.size()) != s.rank()) return false;
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (m2m[i] != s.rank() - 1 - i) return false;
  }
  return s.layout().tail().tiles.empty();
}

// `out` is `in` with exactly one 1-sized dimension inserted or removed.
bool AddsOrRemovesOneDegenerateDim(const DimVector& in, const DimVector& out) {
  if (out.size() == in.size() + 1) {
    std::optional<std::vector<int64_t>> ins = InsertedOnes(in, out);
    return ins.has_value() && ins->size() == 1;
  }
  if (in.size() == out.size() + 1) {
    std::optional<std::vector<int64_t>> del = InsertedOnes(out, in);
    return del.has_value() && del->size() == 1;
  }
  return false;
}

// A link of entry 18's chains: a transpose, or a reshape (or a bitcast that
// is a plain reshape: default layouts, same type) adding or removing one
// 1-sized dimension.
bool IsChainLink(const Instruction* inst) {
  if (inst->operand_count() != 1 || !IsArray(inst) ||
      !IsArray(inst->operand(0))) {
    return false;
  }
  const Instruction* x = inst->operand(0);
  switch (inst->opcode()) {
    case Opcode::kTranspose:
      return IsPermutation(inst->dimensions(), x->shape().rank()) &&
             inst->shape().rank() == x->shape().rank();
    case Opcode::kBitcast:
      if (!SameElementType(inst, x) || !HasDefaultLayout(inst->shape()) ||
          !HasDefaultLayout(x->shape())) {
        return false;
      }
      [[fallthrough]];
    case Opcode::kReshape:
      return AddsOrRemovesOneDegenerateDim(Dims(x), Dims(inst));
    default:
      return false;
  }
}

// 18. Chains of transposes and single-degenerate-dimension reshapes that
// keep the non-degenerate dimensions in their order and end at the
// starting shape -> the chain's input.
absl::StatusOr<bool> TransposeReshapeChainIdentity(Instruction* inst,
                                                   AlgebraicContext& ctx) {
  constexpr int kMaxChain = 64;
  std::vector<Instruction*> nodes = {inst};  // nodes[k+1] = nodes[k]->operand
  while (static_cast<int>(nodes.size()) <= kMaxChain &&
         IsChainLink(nodes.back())) {
    nodes.push_back(nodes.back()->operand(0));
  }
  // nodes[0..n-2] are links; try the deepest start with two links or more.
  for (int start = static_cast<int>(nodes.size()) - 1; start >= 2; --start) {
    Instruction* x = nodes[start];
    if (!SameShapeForMode(ctx, x->shape(), inst->shape())) continue;
    // labels[d]: the dimension of x that dimension d carries, -1 if 1-sized.
    std::vector<int64_t> labels;
    for (int64_t d = 0; d < x->shape().rank(); ++d) {
      labels.push_back(x->shape().dimensions(d) == 1 ? -1 : d);
    }
    for (int k = start - 1; k >= 0; --k) {
      const Instruction* link = nodes[k];
      std::vector<int64_t> next;
      if (link->opcode() == Opcode::kTranspose) {
        for (int64_t p : link->dimensions()) next.push_back(labels[p]);
      } else {
        std::vector<int64_t> kept;
        for (int64_t l : labels) {
          if (l >= 0) kept.push_back(l);
        }
        size_t pos = 0;
        for (int64_t size : link->shape().dimensions()) {
          next.push_back(size == 1 || pos >= kept.size() ? -1 : kept[pos++]);
        }
      }
      labels = std::move(next);
    }
    int64_t last = -1;
    bool ordered = true;
    for (int64_t l : labels) {
      if (l < 0) continue;
      if (l <= last) ordered = false;
      last = l;
    }
    if (ordered) return ReplaceWithExisting(inst, x, ctx);
  }
  return false;
}

// 19. bitcast(broadcast(x)) that only transposes (same rank, physically the
// same order) -> a broadcast with permuted dimensions.
absl::StatusOr<bool> BitcastOfBroadcastAsTranspose(Instruction* bitcast,
                                                   AlgebraicContext& ctx) {
  if (bitcast->operand_count() != 1) return false;
  Instruction* bcast = bitcast->operand(0);
  if (!IsOp(bcast, Opcode::kBroadcast) || bcast->operand_count() != 1) {
    return false;
  }
  const Shape& in = bcast->shape();
  const Shape& out = bitcast->shape();
  if (!in.IsArray() || !out.IsArray() ||
      in.element_type() != out.element_type() || in.rank() != out.rank() ||
      !in.has_layout() || !out.has_layout()) {
    return false;
  }
  const int64_t rank = in.rank();
  if (!IsPermutation(in.layout().minor_to_major, rank) ||
      !IsPermutation(out.layout().minor_to_major, rank) ||
      !(in.layout().tail().tiles == out.layout().tail().tiles)) {
    return false;
  }
  // Major-to-minor orders; the bitcast maps out dim major[k] to in dim
  // major[k], so perm[i] = in_major[inverse(out_major)[i]].
  DimVector in_major(in.layout().minor_to_major.rbegin(),
                     in.layout().minor_to_major.rend());
  DimVector out_major(out.layout().minor_to_major.rbegin(),
                      out.layout().minor_to_major.rend());
  std::vector<int64_t> out_pos = InversePermutation(out_major);
  DimVector perm(rank);
  for (int64_t i = 0; i < rank; ++i) {
    perm[i] = in_major[out_pos[i]];
    if (out.dimensions(i) != in.dimensions(perm[i])) return false;
  }
  const DimVector& bdims = bcast->dimensions();
  if (!std::is_sorted(bdims.begin(), bdims.end())) return false;
  std::vector<int64_t> inv = InversePermutation(perm);
  std::vector<int64_t> new_dims;
  for (int64_t d : bdims) {
    if (d < 0 || d >= rank) return false;
    new_dims.push_back(inv[d]);
  }
  if (!std::is_sorted(new_dims.begin(), new_dims.end())) return false;
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBroadcastLike(ctx.rw, bcast->operand(0), out, new_dims));
  return ReplaceWithNew(bitcast, result, ctx);
}

// 21. bitcast_convert(bitcast_convert(x)) -> bitcast_convert(x), or x when
// the types round-trip.
absl::StatusOr<bool> BitcastConvertChain(Instruction* bc,
                                         AlgebraicContext& ctx) {
  if (bc->operand_count() != 1) return false;
  Instruction* inner = bc->operand(0);
  if (!IsOp(inner, Opcode::kBitcastConvert) || inner->operand_count() != 1) {
    return false;
  }
  Instruction* x = inner->operand(0);
  if (!IsArray(x) || !IsArray(bc)) return false;
  if (SameElementType(x, bc) &&
      SameShapeForMode(ctx, x->shape(), bc->shape())) {
    return ReplaceWithExisting(bc, x, ctx);
  }
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBitcastConvert(ctx.rw, x, bc->shape().element_type()));
  return ReplaceWithNew(bc, result, ctx);
}

// 22. bitcast_convert to the operand's type -> the operand.
absl::StatusOr<bool> BitcastConvertNoOp(Instruction* bc,
                                        AlgebraicContext& ctx) {
  if (bc->operand_count() != 1) return false;
  Instruction* x = bc->operand(0);
  if (!IsArray(x) || !SameElementType(x, bc)) return false;
  return ReplaceWithExisting(bc, x, ctx);
}

// 23. (LS, opt) bitcast_convert between types of the same width whose
// shape equals the operand's apart from the element type -> bitcast.
absl::StatusOr<bool> BitcastConvertToBitcast(Instruction* bc,
                                             AlgebraicContext& ctx) {
  if (!LayoutSensitive(ctx) ||
      !ctx.options.rewrite_no_op_bitcast_convert_to_bitcast ||
      bc->operand_count() != 1) {
    return false;
  }
  Instruction* x = bc->operand(0);
  if (!IsArray(x) || !IsArray(bc) || SameElementType(x, bc) ||
      BitWidth(x->shape().element_type()) !=
          BitWidth(bc->shape().element_type())) {
    return false;
  }
  Shape retyped = WithElementType(x->shape(), bc->shape().element_type());
  if (retyped != bc->shape()) return false;
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBitcast(ctx.rw, x, bc->shape()));
  return ReplaceWithNew(bc, result, ctx);
}

// 24. bitcast_convert(concat(bitcast_convert(x_i))) with every x_i of the
// result type -> concat(x_i).
absl::StatusOr<bool> BitcastConvertOfConcat(Instruction* bc,
                                            AlgebraicContext& ctx) {
  if (bc->operand_count() != 1 || !IsArray(bc)) return false;
  Instruction* concat = bc->operand(0);
  if (!IsOp(concat, Opcode::kConcatenate) || concat->operand_count() < 1 ||
      concat->dimensions().size() != 1) {
    return false;
  }
  std::vector<Instruction*> inputs;
  for (Instruction* in : concat->operands()) {
    if (!IsOp(in, Opcode::kBitcastConvert) || in->operand_count() != 1 ||
        !SameElementType(in->operand(0), bc)) {
      return false;
    }
    inputs.push_back(in->operand(0));
  }
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeConcatenate(ctx.rw, inputs, concat->dimensions(0)));
  return ReplaceWithNew(bc, result, ctx);
}

// 25. copy(copy(x)) -> x when the shapes (with layout) are equal, else one
// copy.
absl::StatusOr<bool> CopyOfCopy(Instruction* copy, AlgebraicContext& ctx) {
  if (copy->operand_count() != 1) return false;
  Instruction* inner = copy->operand(0);
  if (!IsOp(inner, Opcode::kCopy) || inner->operand_count() != 1) {
    return false;
  }
  Instruction* x = inner->operand(0);
  if (x->shape() == copy->shape()) return ReplaceWithExisting(copy, x, ctx);
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeUnary(ctx.rw, Opcode::kCopy, x));
  return ReplaceWithNew(copy, result, ctx);
}

bool IsShardedEntryRoot(const Instruction* inst) {
  if (!inst->attrs().sharding.has_value()) return false;
  const Computation* c = inst->parent();
  const Module* m = c == nullptr ? nullptr : c->parent();
  return m != nullptr && m->entry_computation() != nullptr &&
         m->entry_computation()->root_instruction() == inst;
}

// 26. A copy that does not change the shape (for the mode) -> its operand.
absl::StatusOr<bool> CopyNoOp(Instruction* copy, AlgebraicContext& ctx) {
  if (copy->operand_count() != 1 || IsShardedEntryRoot(copy)) return false;
  return ReplaceWithExisting(copy, copy->operand(0), ctx);
}

// True if the physical order of `s` is its logical row-major order once
// 1-sized dimensions are ignored (then any reshape between two such shapes
// is a bitcast).
bool IsRowMajorIgnoringDegenerate(const Shape& s) {
  if (!s.IsArray() || !s.has_layout() ||
      !IsPermutation(s.layout().minor_to_major, s.rank()) ||
      !s.layout().tail().tiles.empty()) {
    return false;
  }
  int64_t previous = -1;
  for (auto it = s.layout().minor_to_major.rbegin();
       it != s.layout().minor_to_major.rend(); ++it) {
    if (s.dimensions(*it) == 1) continue;
    if (*it < previous) return false;
    previous = *it;
  }
  return true;
}

// A sufficient (not necessary) test of XLA's ReshapeIsBitcast: both
// shapes keep the elements in row-major order in memory.
bool ReshapeIsBitcast(const Shape& from, const Shape& to) {
  return from.IsArray() && to.IsArray() &&
         from.element_type() == to.element_type() &&
         from.ElementsIn() == to.ElementsIn() &&
         IsRowMajorIgnoringDegenerate(from) &&
         IsRowMajorIgnoringDegenerate(to) &&
         from.layout().tail().memory_space == to.layout().tail().memory_space &&
         from.layout().tail().element_size_in_bits ==
             to.layout().tail().element_size_in_bits;
}

// 27. (LS) A copy or reshape at the end of a chain of copies and reshapes
// whose input is a bitcast of it -> bitcast (not across memory spaces).
absl::StatusOr<bool> CopyReshapeChainToBitcast(Instruction* inst,
                                               AlgebraicContext& ctx) {
  if (!LayoutSensitive(ctx) || inst->operand_count() != 1 || !IsArray(inst)) {
    return false;
  }
  Instruction* operand = inst->operand(0);
  for (int depth = 0; depth < 64 && IsArray(operand); ++depth) {
    if (ReshapeIsBitcast(operand->shape(), inst->shape())) {
      PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                               MakeBitcast(ctx.rw, operand, inst->shape()));
      return ReplaceWithNew(inst, result, ctx);
    }
    if ((!IsOp(operand, Opcode::kReshape) && !IsOp(operand, Opcode::kCopy)) ||
        operand->operand_count() != 1) {
      return false;
    }
    operand = operand->operand(0);
  }
  return false;
}

// 28. (LS) copy(reshape(x)) with a single-use reshape that is a bitcast of
// the copy -> reshape(x) with the copy's layout.
absl::StatusOr<bool> CopyOfBitcastReshape(Instruction* copy,
                                          AlgebraicContext& ctx) {
  if (!LayoutSensitive(ctx) || copy->operand_count() != 1) return false;
  Instruction* reshape = copy->operand(0);
  if (!IsOp(reshape, Opcode::kReshape) || reshape->operand_count() != 1 ||
      reshape->user_count() != 1 ||
      !ReshapeIsBitcast(reshape->shape(), copy->shape())) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeReshape(ctx.rw, reshape->operand(0), ToVector(Dims(copy))));
  return ReplaceWithNew(copy, result, ctx);
}

// ===========================================================================
// Broadcast (30-37).

bool IsSimpleBroadcast(const Instruction* b) {
  if (b->operand_count() != 1 || !IsArray(b) || !IsArray(b->operand(0))) {
    return false;
  }
  const DimVector& dims = b->dimensions();
  if (static_cast<int64_t>(dims.size()) != b->operand(0)->shape().rank()) {
    return false;
  }
  for (int64_t d : dims) {
    if (d < 0 || d >= b->shape().rank()) return false;
  }
  return true;
}

// 30. A broadcast with sorted dimensions that adds no elements -> reshape.
absl::StatusOr<bool> BroadcastToReshape(Instruction* b, AlgebraicContext& ctx) {
  if (!IsSimpleBroadcast(b)) return false;
  Instruction* x = b->operand(0);
  const DimVector& dims = b->dimensions();
  if (!std::is_sorted(dims.begin(), dims.end()) ||
      b->shape().ElementsIn() != x->shape().ElementsIn()) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReshape(ctx.rw, x, ToVector(Dims(b))));
  return ReplaceWithNew(b, result, ctx);
}

// 31. A same-rank broadcast that adds no elements permutes -> transpose.
absl::StatusOr<bool> BroadcastToTranspose(Instruction* b,
                                          AlgebraicContext& ctx) {
  if (!IsSimpleBroadcast(b)) return false;
  Instruction* x = b->operand(0);
  if (b->shape().rank() != x->shape().rank() ||
      b->shape().ElementsIn() != x->shape().ElementsIn() ||
      !IsPermutation(b->dimensions(), x->shape().rank())) {
    return false;
  }
  // Operand dim k lands on result dim dims[k]: the permutation's inverse.
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeTranspose(ctx.rw, x, InversePermutation(b->dimensions())));
  return ReplaceWithNew(b, result, ctx);
}

// 32. broadcast(reshape(x)) where the reshape only inserts 1-sized
// dimensions -> broadcast(x).
absl::StatusOr<bool> BroadcastOfDegenerateReshape(Instruction* b,
                                                  AlgebraicContext& ctx) {
  if (!IsSimpleBroadcast(b)) return false;
  Instruction* reshape = b->operand(0);
  if (!IsOp(reshape, Opcode::kReshape) || reshape->operand_count() != 1 ||
      !IsArray(reshape->operand(0))) {
    return false;
  }
  Instruction* x = reshape->operand(0);
  std::optional<std::vector<int64_t>> inserted =
      InsertedOnes(Dims(x), Dims(reshape));
  if (!inserted || inserted->empty()) return false;
  std::vector<int64_t> new_dims;
  for (int64_t j = 0; j < reshape->shape().rank(); ++j) {
    if (!Contains(*inserted, j)) new_dims.push_back(b->dimensions(j));
  }
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBroadcastLike(ctx.rw, x, b->shape(), new_dims));
  return ReplaceWithNew(b, result, ctx);
}

// 33. broadcast(broadcast(x)) -> one broadcast.
absl::StatusOr<bool> BroadcastOfBroadcast(Instruction* b,
                                          AlgebraicContext& ctx) {
  if (!IsSimpleBroadcast(b)) return false;
  Instruction* inner = b->operand(0);
  if (!IsOp(inner, Opcode::kBroadcast) || !IsSimpleBroadcast(inner)) {
    return false;
  }
  std::vector<int64_t> new_dims;
  for (int64_t d : inner->dimensions()) new_dims.push_back(b->dimensions(d));
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBroadcastLike(ctx.rw, inner->operand(0), b->shape(), new_dims));
  return ReplaceWithNew(b, result, ctx);
}

// 34. broadcast(iota) -> iota along the mapped dimension.
absl::StatusOr<bool> BroadcastOfIota(Instruction* b, AlgebraicContext& ctx) {
  if (!IsSimpleBroadcast(b)) return false;
  Instruction* iota = b->operand(0);
  if (!IsOp(iota, Opcode::kIota)) return false;
  int64_t d = iota->iota_dimension();
  if (d < 0 || d >= iota->shape().rank()) return false;
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeIota(ctx.rw, b->parent(), b->shape(), b->dimensions(d)));
  return ReplaceWithNew(b, result, ctx);
}

// The user only permutes or selects a subset of the broadcast's elements.
bool PermutesOrSelects(const Instruction* user, const Instruction* b) {
  switch (user->opcode()) {
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kTranspose:
      return user->operand_count() == 1;
    case Opcode::kSort:
      return user->operand_count() == 1 && !user->shape().IsTuple();
    case Opcode::kSlice:
      return user->operand_count() == 1;
    case Opcode::kDynamicSlice:
      // Only as the sliced operand (not as an index).
      for (int64_t i = 1; i < user->operand_count(); ++i) {
        if (user->operand(i) == b) return false;
      }
      return user->operand_count() >= 1 && user->operand(0) == b;
    default:
      return false;
  }
}

// 35. A scalar broadcast feeding a permutation or subset user -> that user
// becomes a broadcast of the scalar.
absl::StatusOr<bool> BroadcastScalarIntoUser(Instruction* b,
                                             AlgebraicContext& ctx) {
  if (!IsSimpleBroadcast(b) || !b->operand(0)->shape().IsScalar()) {
    return false;
  }
  Instruction* scalar = b->operand(0);
  std::vector<Instruction*> users = UsersOf(b);
  for (Instruction* user : users) {
    if (IsDead(user) || !IsArray(user) || !PermutesOrSelects(user, b) ||
        user->shape().element_type() != scalar->shape().element_type()) {
      continue;
    }
    PART1_ASSIGN_OR_NO_MATCH(
        Instruction * result,
        MakeBroadcastLike(ctx.rw, scalar, user->shape(), {}));
    return ReplaceWithNew(user, result, ctx);
  }
  return false;
}

// 36. (opt: sink_broadcast) Elementwise users whose operands are all scalar
// broadcasts or broadcasts identical to this one -> compute on the small
// operands and broadcast afterwards.
absl::StatusOr<bool> BroadcastSinkElementwise(Instruction* b,
                                              AlgebraicContext& ctx) {
  if (!ctx.options.enable_sink_broadcast || !IsSimpleBroadcast(b) ||
      b->shape().IsScalar()) {
    return false;
  }
  Instruction* operand = b->operand(0);
  auto is_scalar_broadcast = [](const Instruction* i) {
    return IsOp(i, Opcode::kBroadcast) && i->operand_count() == 1 &&
           i->operand(0)->shape().IsScalar();
  };
  auto is_equal_broadcast = [&](const Instruction* i) {
    return IsOp(i, Opcode::kBroadcast) && i->operand_count() == 1 &&
           i->operand(0)->shape() == operand->shape() &&
           i->dimensions() == b->dimensions();
  };
  auto is_compatible = [&](const Instruction* i) {
    return is_scalar_broadcast(i) || is_equal_broadcast(i);
  };
  // Build every replacement first: replacing one user may remove others.
  std::vector<std::pair<Instruction*, Instruction*>> replacements;
  std::vector<Instruction*> users = UsersOf(b);
  for (Instruction* user : users) {
    if (IsDead(user) || !IsArray(user) || user->HasSideEffect()) continue;
    // Copies keep their shape; fusions may hold several shapes.
    Opcode op = user->opcode();
    if (op == Opcode::kCopy || op == Opcode::kFusion || !IsElementwise(op)) {
      continue;
    }
    if (op == Opcode::kBitcastConvert &&
        (user->operand_count() != 1 ||
         BitWidth(user->shape().element_type()) !=
             BitWidth(user->operand(0)->shape().element_type()))) {
      continue;
    }
    bool all_compatible = true;
    for (const Instruction* o : user->operands()) {
      if (o != b && !is_compatible(o)) all_compatible = false;
    }
    if (!all_compatible) continue;
    std::vector<Instruction*> new_operands;
    bool ok = true;
    for (Instruction* o : user->operands()) {
      if (o == b) {
        new_operands.push_back(operand);
      } else if (is_scalar_broadcast(o)) {
        auto small =
            MakeBroadcastLike(ctx.rw, o->operand(0), operand->shape(), {});
        if (!small.ok()) {
          ok = false;
          break;
        }
        new_operands.push_back(*small);
      } else {
        new_operands.push_back(o->operand(0));
      }
    }
    if (!ok) continue;
    Shape small_shape =
        WithElementType(operand->shape(), user->shape().element_type());
    auto small_user =
        CloneWithNewOperands(ctx.rw, user, small_shape, new_operands);
    if (!small_user.ok()) continue;
    DropShardingIfShapeKindChanged(*small_user, user->shape());
    auto result = MakeBroadcastLike(ctx.rw, *small_user, user->shape(),
                                    ToVector(b->dimensions()));
    if (!result.ok()) continue;
    replacements.push_back({user, *result});
  }
  bool changed = false;
  for (auto [user, result] : replacements) {
    if (ctx.rw.IsRemoved(user->unique_id())) continue;
    HLOGYM_ASSIGN_OR_RETURN(bool done, ReplaceWithNew(user, result, ctx));
    changed |= done;
  }
  return changed;
}

// 37. (LI, opt) Remove the 1-sized dimensions of a broadcast's operand.
absl::StatusOr<bool> BroadcastDropDegenerateDims(Instruction* b,
                                                 AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) ||
      !ctx.options.enable_broadcast_degenerate_dimension ||
      !IsSimpleBroadcast(b)) {
    return false;
  }
  Instruction* x = b->operand(0);
  if (!HasDegenerateDims(x->shape())) return false;
  std::vector<int64_t> small_dims, new_dims;
  for (int64_t i = 0; i < x->shape().rank(); ++i) {
    if (x->shape().dimensions(i) != 1) {
      small_dims.push_back(x->shape().dimensions(i));
      new_dims.push_back(b->dimensions(i));
    }
  }
  PART1_ASSIGN_OR_NO_MATCH(Instruction * reshaped,
                           MakeReshape(ctx.rw, x, small_dims));
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBroadcastLike(ctx.rw, reshaped, b->shape(), new_dims));
  return ReplaceWithNew(b, result, ctx);
}

// ===========================================================================
// Compare (38-43).

absl::StatusOr<bool> ReplaceWithPredConstant(Instruction* cmp, bool value,
                                             AlgebraicContext& ctx) {
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeFilledLike(ctx.rw, cmp, value ? 1.0 : 0.0));
  return ReplaceWithNew(cmp, result, ctx);
}

// The four rules x < 0 -> false, x >= 0 -> true, 0 > x -> false,
// 0 <= x -> true, for an x that `holds` for.
template <typename Pred>
absl::StatusOr<bool> CompareWithZero(Instruction* cmp, AlgebraicContext& ctx,
                                     Pred holds) {
  Instruction* lhs = cmp->operand(0);
  Instruction* rhs = cmp->operand(1);
  switch (cmp->comparison_direction()) {
    case ComparisonDirection::kLt:
      if (holds(lhs) && IsAll(rhs, 0)) {
        return ReplaceWithPredConstant(cmp, false, ctx);
      }
      return false;
    case ComparisonDirection::kGe:
      if (holds(lhs) && IsAll(rhs, 0)) {
        return ReplaceWithPredConstant(cmp, true, ctx);
      }
      return false;
    case ComparisonDirection::kGt:
      if (IsAll(lhs, 0) && holds(rhs)) {
        return ReplaceWithPredConstant(cmp, false, ctx);
      }
      return false;
    case ComparisonDirection::kLe:
      if (IsAll(lhs, 0) && holds(rhs)) {
        return ReplaceWithPredConstant(cmp, true, ctx);
      }
      return false;
    default:
      return false;
  }
}

// 38. Unsigned comparisons with zero.
absl::StatusOr<bool> CompareUnsignedWithZero(Instruction* cmp,
                                             AlgebraicContext& ctx) {
  if (!IsBinary(cmp, Opcode::kCompare) || !IsArray(cmp->operand(0))) {
    return false;
  }
  bool is_unsigned =
      cmp->comparison_type() == ComparisonType::kUnsigned ||
      (cmp->comparison_type() == ComparisonType::kDefault &&
       IsUnsignedIntegralType(cmp->operand(0)->shape().element_type()));
  if (!is_unsigned) return false;
  return CompareWithZero(cmp, ctx, [](const Instruction*) { return true; });
}

// 39. The same four rules for a known non-negative x.
absl::StatusOr<bool> CompareNonNegativeWithZero(Instruction* cmp,
                                                AlgebraicContext& ctx) {
  if (!IsBinary(cmp, Opcode::kCompare) || !IsArray(cmp->operand(0)) ||
      IsComplexType(cmp->operand(0)->shape().element_type())) {
    return false;
  }
  return CompareWithZero(cmp, ctx,
                         [](const Instruction* x) { return IsNonNegative(x); });
}

// 40. integral x cmp x (NaN makes this wrong for floats).
absl::StatusOr<bool> CompareSameIntegralOperand(Instruction* cmp,
                                                AlgebraicContext& ctx) {
  if (!IsBinary(cmp, Opcode::kCompare) || cmp->operand(0) != cmp->operand(1) ||
      !IsArray(cmp->operand(0)) ||
      !IsIntegralType(cmp->operand(0)->shape().element_type())) {
    return false;
  }
  switch (cmp->comparison_direction()) {
    case ComparisonDirection::kGt:
    case ComparisonDirection::kLt:
    case ComparisonDirection::kNe:
      return ReplaceWithPredConstant(cmp, false, ctx);
    case ComparisonDirection::kEq:
    case ComparisonDirection::kGe:
    case ComparisonDirection::kLe:
      return ReplaceWithPredConstant(cmp, true, ctx);
  }
  return false;
}

// 41. pred: A != false -> A, A == true -> A (both operand orders).
absl::StatusOr<bool> ComparePredIdentity(Instruction* cmp,
                                         AlgebraicContext& ctx) {
  if (!IsBinary(cmp, Opcode::kCompare) ||
      cmp->operand(0)->shape().element_type() != PrimitiveType::kPred) {
    return false;
  }
  double neutral;
  if (cmp->comparison_direction() == ComparisonDirection::kNe) {
    neutral = 0;
  } else if (cmp->comparison_direction() == ComparisonDirection::kEq) {
    neutral = 1;
  } else {
    return false;
  }
  for (int i = 1; i >= 0; --i) {
    if (IsAll(cmp->operand(i), neutral)) {
      HLOGYM_ASSIGN_OR_RETURN(
          bool done, ReplaceWithExisting(cmp, cmp->operand(1 - i), ctx));
      if (done) return true;
    }
  }
  return false;
}

// 42. ne(select(ge(a, b), 1, 0), 0) -> ge(a, b).
absl::StatusOr<bool> CompareSelectMask(Instruction* cmp,
                                       AlgebraicContext& ctx) {
  if (!IsBinary(cmp, Opcode::kCompare) ||
      cmp->comparison_direction() != ComparisonDirection::kNe ||
      !IsAll(cmp->operand(1), 0)) {
    return false;
  }
  Instruction* select = cmp->operand(0);
  if (!IsOp(select, Opcode::kSelect) || select->operand_count() != 3) {
    return false;
  }
  Instruction* ge = select->operand(0);
  if (!IsBinary(ge, Opcode::kCompare) ||
      ge->comparison_direction() != ComparisonDirection::kGe ||
      !IsAll(select->operand(1), 1) || !IsAll(select->operand(2), 0)) {
    return false;
  }
  return ReplaceWithExisting(cmp, ge, ctx);
}

// 43. gt(max(a,b), a) -> gt(b,a); gt(max(a,b), b) -> gt(a,b);
// gt(a, min(a,b)) -> gt(a,b); gt(b, min(a,b)) -> gt(b,a).
absl::StatusOr<bool> CompareGtMaxMin(Instruction* cmp, AlgebraicContext& ctx) {
  if (!IsBinary(cmp, Opcode::kCompare) ||
      cmp->comparison_direction() != ComparisonDirection::kGt) {
    return false;
  }
  Instruction* lhs = cmp->operand(0);
  Instruction* rhs = cmp->operand(1);
  Instruction* new_lhs = nullptr;
  Instruction* new_rhs = nullptr;
  if (IsBinary(lhs, Opcode::kMaximum)) {
    Instruction* a = lhs->operand(0);
    Instruction* b = lhs->operand(1);
    if (rhs == a) {
      new_lhs = b;
      new_rhs = a;
    } else if (rhs == b) {
      new_lhs = a;
      new_rhs = b;
    }
  } else if (IsBinary(rhs, Opcode::kMinimum)) {
    Instruction* a = rhs->operand(0);
    Instruction* b = rhs->operand(1);
    if (lhs == a) {
      new_lhs = a;
      new_rhs = b;
    } else if (lhs == b) {
      new_lhs = b;
      new_rhs = a;
    }
  }
  if (new_lhs == nullptr) return false;
  Instruction* ops[] = {new_lhs, new_rhs};
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      CloneWithNewOperands(ctx.rw, cmp, cmp->shape(), ops));
  return ReplaceWithNew(cmp, result, ctx);
}

// ===========================================================================
// Concatenate (44-49).

bool IsSimpleConcat(const Instruction* c) {
  if (c->operand_count() < 1 || c->dimensions().size() != 1 || !IsArray(c)) {
    return false;
  }
  int64_t d = c->dimensions(0);
  for (const Instruction* o : c->operands()) {
    if (!IsArray(o) || d < 0 || d >= o->shape().rank()) return false;
  }
  return true;
}

// 44. A single-operand concatenate -> its operand.
absl::StatusOr<bool> ConcatSingleOperand(Instruction* c,
                                         AlgebraicContext& ctx) {
  if (c->operand_count() != 1) return false;
  return ReplaceWithExisting(c, c->operand(0), ctx);
}

// 45. Zero-element operands are dropped (all empty -> the first operand).
absl::StatusOr<bool> ConcatDropEmptyOperands(Instruction* c,
                                             AlgebraicContext& ctx) {
  if (!IsSimpleConcat(c) || c->operand_count() < 2) return false;
  std::vector<Instruction*> nonempty;
  for (Instruction* o : c->operands()) {
    if (o->shape().ElementsIn() != 0) nonempty.push_back(o);
  }
  if (nonempty.size() == static_cast<size_t>(c->operand_count())) {
    return false;
  }
  if (nonempty.empty()) return ReplaceWithExisting(c, c->operand(0), ctx);
  if (nonempty.size() == 1) return ReplaceWithExisting(c, nonempty[0], ctx);
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      CloneWithNewOperands(ctx.rw, c, c->shape(), nonempty));
  return ReplaceWithNew(c, result, ctx);
}

// 46. (LI) Nested concatenates along the same dimension are flattened.
absl::StatusOr<bool> ConcatFlatten(Instruction* c, AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !IsSimpleConcat(c)) return false;
  std::vector<Instruction*> flat;
  bool nested = false;
  for (Instruction* o : c->operands()) {
    if (IsOp(o, Opcode::kConcatenate) && IsSimpleConcat(o) &&
        o->dimensions(0) == c->dimensions(0)) {
      flat.insert(flat.end(), o->operands().begin(), o->operands().end());
      nested = true;
    } else {
      flat.push_back(o);
    }
  }
  if (!nested) return false;
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeConcatenate(ctx.rw, flat, c->dimensions(0)));
  return ReplaceWithNew(c, result, ctx);
}

bool IsUnstridedSlice(const Instruction* s) {
  if (!IsOp(s, Opcode::kSlice) || s->operand_count() != 1) return false;
  const std::vector<SliceDimension>& dims = s->attrs().slice;
  if (static_cast<int64_t>(dims.size()) != s->shape().rank()) return false;
  for (const SliceDimension& d : dims) {
    if (d.stride != 1) return false;
  }
  return true;
}

// 47. (LI) Adjacent unstrided slices of one operand, contiguous along the
// concat dimension and equal elsewhere -> one slice.
absl::StatusOr<bool> ConcatMergeSlices(Instruction* c, AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !IsSimpleConcat(c)) return false;
  const int64_t dim = c->dimensions(0);
  const auto& operands = c->operands();
  const int64_t n = c->operand_count();
  std::vector<Instruction*> new_operands;
  int64_t i = 0;
  while (i < n) {
    Instruction* first = operands[i];
    if (!IsUnstridedSlice(first)) {
      new_operands.push_back(first);
      ++i;
      continue;
    }
    const std::vector<SliceDimension>& fs = first->attrs().slice;
    int64_t end = fs[dim].limit;
    int64_t j = i + 1;
    while (j < n) {
      Instruction* next = operands[j];
      if (!IsUnstridedSlice(next) || next->operand(0) != first->operand(0)) {
        break;
      }
      const std::vector<SliceDimension>& ns = next->attrs().slice;
      if (ns.size() != fs.size() || ns[dim].start != end) break;
      bool same_elsewhere = true;
      for (size_t k = 0; k < fs.size(); ++k) {
        if (static_cast<int64_t>(k) != dim &&
            (ns[k].start != fs[k].start || ns[k].limit != fs[k].limit)) {
          same_elsewhere = false;
        }
      }
      if (!same_elsewhere) break;
      end = ns[dim].limit;
      ++j;
    }
    if (j - i > 1) {
      std::vector<int64_t> starts, limits, strides;
      for (size_t k = 0; k < fs.size(); ++k) {
        starts.push_back(fs[k].start);
        limits.push_back(static_cast<int64_t>(k) == dim ? end : fs[k].limit);
        strides.push_back(1);
      }
      PART1_ASSIGN_OR_NO_MATCH(
          Instruction * merged,
          MakeSlice(ctx.rw, first->operand(0), starts, limits, strides));
      new_operands.push_back(merged);
    } else {
      new_operands.push_back(first);
    }
    i = j;
  }
  if (static_cast<int64_t>(new_operands.size()) == n) return false;
  Instruction* result = nullptr;
  if (new_operands.size() == 1) {
    result = new_operands[0];
  } else {
    PART1_ASSIGN_OR_NO_MATCH(
        result, CloneWithNewOperands(ctx.rw, c, c->shape(), new_operands));
  }
  return ReplaceWithNew(c, result, ctx);
}

// 48. (LI) A binary concat with a broadcast(scalar) operand -> pad of the
// other operand with that scalar.
absl::StatusOr<bool> ConcatBroadcastToPad(Instruction* c,
                                          AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !IsSimpleConcat(c) || c->operand_count() != 2) {
    return false;
  }
  const bool low = IsBroadcastOfScalar(c->operand(0));
  const bool high = IsBroadcastOfScalar(c->operand(1));
  if (!low && !high) return false;
  const int64_t dim = c->dimensions(0);
  Instruction* padded = c->operand(low ? 1 : 0);
  Instruction* filler = c->operand(low ? 0 : 1);
  PaddingConfig padding(padded->shape().rank());
  if (low) {
    padding[dim].low = filler->shape().dimensions(dim);
  } else {
    padding[dim].high = filler->shape().dimensions(dim);
  }
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakePad(ctx.rw, padded, filler->operand(0), padding));
  return ReplaceWithNew(c, result, ctx);
}

// 49. (LI) concat(x, x, ..., x) with concat-dim size 1 -> broadcast of x
// without that dimension. Binary concats stop at entry 48 in XLA.
absl::StatusOr<bool> ConcatSameOperandToBroadcast(Instruction* c,
                                                  AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !IsSimpleConcat(c) || c->operand_count() < 3) {
    return false;
  }
  Instruction* x = c->operand(0);
  for (const Instruction* o : c->operands()) {
    if (o != x) return false;
  }
  const int64_t dim = c->dimensions(0);
  if (x->shape().dimensions(dim) != 1) return false;
  std::vector<int64_t> small_dims, bdims;
  for (int64_t i = 0; i < x->shape().rank(); ++i) {
    if (i == dim) continue;
    small_dims.push_back(x->shape().dimensions(i));
    bdims.push_back(i);
  }
  PART1_ASSIGN_OR_NO_MATCH(Instruction * reshaped,
                           MakeReshape(ctx.rw, x, small_dims));
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBroadcastLike(ctx.rw, reshaped, c->shape(), bdims));
  return ReplaceWithNew(c, result, ctx);
}

// ===========================================================================
// Constant, Iota (50-53).

absl::StatusOr<Instruction*> BuildTupleOfConstants(Rewriter& rw,
                                                   Computation* computation,
                                                   const Literal& literal) {
  if (!literal.shape().IsTuple()) return MakeConstant(rw, computation, literal);
  std::vector<Instruction*> elements;
  for (const Literal& e : literal.tuple_elements()) {
    HLOGYM_ASSIGN_OR_RETURN(Instruction * built,
                            BuildTupleOfConstants(rw, computation, e));
    elements.push_back(built);
  }
  return MakeTuple(rw, computation, elements);
}

bool HasUnknownLeaf(const Literal& literal) {
  if (literal.is_unknown()) return true;
  for (const Literal& e : literal.tuple_elements()) {
    if (HasUnknownLeaf(e)) return true;
  }
  return false;
}

// 50. A tuple-shaped constant -> a tuple of constants.
absl::StatusOr<bool> ConstantTupleToTuple(Instruction* c,
                                          AlgebraicContext& ctx) {
  if (!c->shape().IsTuple() || !c->has_literal() ||
      !c->literal().shape().IsTuple() ||
      c->literal().tuple_elements().size() !=
          static_cast<size_t>(c->shape().tuple_shapes_size()) ||
      HasUnknownLeaf(c->literal())) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      BuildTupleOfConstants(ctx.rw, c->parent(), c->literal()));
  return ReplaceWithExisting(c, result, ctx);
}

// 51. A constant with more than one element, all equal -> broadcast of a
// scalar constant.
absl::StatusOr<bool> ConstantAllEqualToBroadcast(Instruction* c,
                                                 AlgebraicContext& ctx) {
  if (!HasKnownLiteral(c) || !c->shape().IsArray()) return false;
  const Literal& lit = c->literal();
  const int64_t n = lit.element_count();
  if (n <= 1) return false;
  const size_t width = ByteWidth(lit.shape().element_type());
  if (width == 0 || lit.size_bytes() < width * n) return false;
  for (int64_t i = 1; i < n; ++i) {
    if (std::memcmp(lit.data(), lit.data() + i * width, width) != 0) {
      return false;
    }
  }
  Shape scalar_shape = Shape::Scalar(lit.shape().element_type());
  scalar_shape.SetDefaultLayout();
  Literal scalar(scalar_shape);
  if (scalar.size_bytes() != width) return false;
  std::memcpy(scalar.mutable_data(), lit.data(), width);
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * value,
      MakeConstant(ctx.rw, c->parent(), std::move(scalar)));
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBroadcastLike(ctx.rw, value, c->shape(), {}));
  return ReplaceWithNew(c, result, ctx);
}

bool IsRank1Iota(const Literal& lit) {
  const PrimitiveType t = lit.shape().element_type();
  if (lit.shape().rank() != 1 || lit.element_count() <= 1) return false;
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (IsComplexType(t)) {
      if (lit.GetComplex(i) != std::complex<double>(i, 0)) return false;
    } else if (IsFloatingPointType(t)) {
      if (lit.GetAsDouble(i) != static_cast<double>(i)) return false;
    } else if (IsUnsignedIntegralType(t)) {
      if (lit.GetAsUint64(i) != static_cast<uint64_t>(i)) return false;
    } else if (IsIntegralType(t)) {
      if (lit.GetAsInt64(i) != i) return false;
    } else {
      return false;
    }
  }
  return true;
}

// The stride s of an integer rank-1 constant 0, s, 2s, ... (s != 0).
std::optional<int64_t> Rank1StridedIota(const Literal& lit) {
  const PrimitiveType t = lit.shape().element_type();
  const int64_t n = lit.element_count();
  if (lit.shape().rank() != 1 || n <= 1 || !IsIntegralType(t)) {
    return std::nullopt;
  }
  const int64_t stride = lit.GetAsInt64(1);
  if (stride == 0 || lit.GetAsInt64(0) != 0) return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    int64_t expected;
    if (__builtin_mul_overflow(i, stride, &expected) ||
        lit.GetAsInt64(i) != expected) {
      return std::nullopt;
    }
  }
  return stride;
}

// 52. A rank-1 constant 0..n-1 -> iota.
absl::StatusOr<bool> ConstantToIota(Instruction* c, AlgebraicContext& ctx) {
  if (!HasKnownLiteral(c) || !c->shape().IsArray() ||
      !IsRank1Iota(c->literal())) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeIota(ctx.rw, c->parent(), c->shape(), 0));
  return ReplaceWithNew(c, result, ctx);
}

// 52. A rank-1 integer constant 0, s, 2s, ... -> iota * broadcast(s).
absl::StatusOr<bool> ConstantToStridedIota(Instruction* c,
                                           AlgebraicContext& ctx) {
  if (!HasKnownLiteral(c) || !c->shape().IsArray()) return false;
  std::optional<int64_t> stride = Rank1StridedIota(c->literal());
  if (!stride || *stride == 1) return false;
  PART1_ASSIGN_OR_NO_MATCH(Instruction * iota,
                           MakeIota(ctx.rw, c->parent(), c->shape(), 0));
  Shape scalar_shape = Shape::Scalar(c->shape().element_type());
  scalar_shape.SetDefaultLayout();
  Literal s(scalar_shape);
  s.SetFromInt64(0, *stride);
  PART1_ASSIGN_OR_NO_MATCH(Instruction * scalar,
                           MakeConstant(ctx.rw, c->parent(), std::move(s)));
  PART1_ASSIGN_OR_NO_MATCH(Instruction * step,
                           MakeBroadcastLike(ctx.rw, scalar, c->shape(), {}));
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBinary(ctx.rw, Opcode::kMultiply, iota, step));
  return ReplaceWithNew(c, result, ctx);
}

// 53. An iota whose iota dimension has at most one element -> zeros.
absl::StatusOr<bool> IotaDegenerate(Instruction* iota, AlgebraicContext& ctx) {
  const int64_t d = iota->iota_dimension();
  if (!IsArray(iota) || d < 0 || d >= iota->shape().rank() ||
      iota->shape().dimensions(d) > 1) {
    return false;
  }
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeFilledLike(ctx.rw, iota, 0));
  return ReplaceWithNew(iota, result, ctx);
}

// ===========================================================================
// Convert (54-57).

// 54. A convert to the operand's type -> the operand.
absl::StatusOr<bool> ConvertNoOp(Instruction* convert, AlgebraicContext& ctx) {
  if (convert->operand_count() != 1 ||
      !SameElementType(convert, convert->operand(0))) {
    return false;
  }
  return ReplaceWithExisting(convert, convert->operand(0), ctx);
}

// 55. convert(convert(A)) back to A's type through a type that holds every
// value of A -> A.
absl::StatusOr<bool> ConvertPairNoOp(Instruction* convert,
                                     AlgebraicContext& ctx) {
  if (convert->operand_count() != 1) return false;
  Instruction* inner = convert->operand(0);
  if (!IsOp(inner, Opcode::kConvert) || inner->operand_count() != 1) {
    return false;
  }
  Instruction* a = inner->operand(0);
  if (!IsArray(a) || !IsArray(inner) || !SameElementType(a, convert) ||
      !CastPreservesValues(a->shape().element_type(),
                           inner->shape().element_type())) {
    return false;
  }
  return ReplaceWithExisting(convert, a, ctx);
}

// The interpreter's float -> integer conversion: truncation toward zero,
// NaN to 0, saturation at the bounds.
int64_t FloatToIntegerBits(PrimitiveType t, double x) {
  const int w = BitWidth(t);
  if (std::isnan(x)) return 0;
  if (IsSignedIntegralType(t)) {
    const int64_t hi = w >= 64 ? std::numeric_limits<int64_t>::max()
                               : (int64_t{1} << (w - 1)) - 1;
    const int64_t lo = -hi - 1;
    if (x >= static_cast<double>(hi)) return hi;
    if (x <= static_cast<double>(lo)) return lo;
    return static_cast<int64_t>(x);
  }
  const uint64_t hi =
      w >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << w) - 1;
  if (x >= static_cast<double>(hi)) return static_cast<int64_t>(hi);
  if (x <= 0) return 0;
  return static_cast<int64_t>(static_cast<uint64_t>(x));
}

// The literal converted element by element, as convert computes it.
std::optional<Literal> ConvertLiteral(const Literal& in, const Shape& shape) {
  const PrimitiveType from = in.shape().element_type();
  const PrimitiveType to = shape.element_type();
  if (IsComplexType(from) || IsComplexType(to) || !IsArrayType(from) ||
      !IsArrayType(to) || in.is_unknown()) {
    return std::nullopt;
  }
  Literal out(shape);
  const bool from_float = IsFloatingPointType(from);
  const bool from_unsigned =
      IsUnsignedIntegralType(from) || from == PrimitiveType::kPred;
  for (int64_t i = 0; i < in.element_count(); ++i) {
    if (from_float) {
      const double v = in.GetAsDouble(i);
      if (to == PrimitiveType::kPred) {
        out.SetFromInt64(i, v != 0 ? 1 : 0);
      } else if (IsIntegralType(to)) {
        out.SetFromInt64(i, FloatToIntegerBits(to, v));
      } else if (!out.SetFromDouble(i, v)) {
        return std::nullopt;
      }
      continue;
    }
    const uint64_t u = in.GetAsUint64(i);
    const int64_t s = in.GetAsInt64(i);
    if (to == PrimitiveType::kPred) {
      out.SetFromInt64(i, (from_unsigned ? u != 0 : s != 0) ? 1 : 0);
    } else if (IsIntegralType(to)) {
      out.SetFromInt64(i, from_unsigned ? static_cast<int64_t>(u) : s);
    } else if (to == PrimitiveType::kF64) {
      if (!out.SetFromDouble(i, from_unsigned ? static_cast<double>(u)
                                              : static_cast<double>(s))) {
        return std::nullopt;
      }
    } else {
      // Integers reach the narrower float types through f32.
      const float f =
          from_unsigned ? static_cast<float>(u) : static_cast<float>(s);
      if (!out.SetFromDouble(i, static_cast<double>(f))) return std::nullopt;
    }
  }
  return out;
}

// 56. (opt: use_convert_constant_folding) convert of a single-use constant
// to a type no wider and at least 8 bits wide -> a new constant.
absl::StatusOr<bool> ConvertConstantFold(Instruction* convert,
                                         AlgebraicContext& ctx) {
  if (!ctx.options.use_convert_constant_folding ||
      convert->operand_count() != 1 || !IsArray(convert)) {
    return false;
  }
  Instruction* constant = convert->operand(0);
  if (!HasKnownLiteral(constant) || !constant->shape().IsArray() ||
      constant->user_count() != 1) {
    return false;
  }
  const PrimitiveType src = constant->shape().element_type();
  const PrimitiveType dst = convert->shape().element_type();
  if (BitWidth(dst) > BitWidth(src) || BitWidth(dst) < 8) return false;
  std::optional<Literal> converted =
      ConvertLiteral(constant->literal(), convert->shape());
  if (!converted) return false;
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeConstant(ctx.rw, convert->parent(), std::move(*converted)));
  return ReplaceWithNew(convert, result, ctx);
}

// 57. convert(binop(convert(a), convert(b))) computed in a wider integer
// type of the same signedness -> binop in the narrow type.
absl::StatusOr<bool> ConvertNarrowBinaryOp(Instruction* convert,
                                           AlgebraicContext& ctx) {
  if (convert->operand_count() != 1 || !IsArray(convert)) return false;
  Instruction* op = convert->operand(0);
  if (op->operand_count() != 2 || op->user_count() != 1 || !IsArray(op)) {
    return false;
  }
  const PrimitiveType final_type = convert->shape().element_type();
  const PrimitiveType op_type = op->shape().element_type();
  switch (op->opcode()) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
      break;
    case Opcode::kDivide:
    case Opcode::kRemainder:
      // Signed division can overflow (s8: -128 / -1).
      if (!IsUnsignedIntegralType(op_type)) return false;
      break;
    default:
      return false;
  }
  Instruction* args[2];
  for (int i = 0; i < 2; ++i) {
    Instruction* c = op->operand(i);
    if (!IsOp(c, Opcode::kConvert) || c->operand_count() != 1 ||
        c->user_count() != 1 || !IsArray(c->operand(0)) ||
        c->operand(0)->shape().element_type() != final_type) {
      return false;
    }
    args[i] = c->operand(0);
  }
  if (!IsIntegralType(final_type) || !IsIntegralType(op_type) ||
      BitWidth(final_type) < 8 || BitWidth(op_type) < 8 ||
      IsSignedIntegralType(final_type) != IsSignedIntegralType(op_type) ||
      !CastPreservesValues(final_type, op_type)) {
    return false;
  }
  Shape narrow = WithElementType(op->shape(), final_type);
  PART1_ASSIGN_OR_NO_MATCH(Instruction * result,
                           CloneWithNewOperands(ctx.rw, op, narrow, args));
  return ReplaceWithNew(convert, result, ctx);
}

// ===========================================================================
// CustomCall, Conditional, OptimizationBarrier, GTE, Map (58-63).

bool IsCustomCall(const Instruction* inst, std::string_view target) {
  return IsOp(inst, Opcode::kCustomCall) &&
         inst->attrs().custom_call_target == target;
}

// 58. SliceToDynamic(gte0(PadToStatic(x)), gte1(...), ...) -> x.
absl::StatusOr<bool> SliceToDynamicOfPadToStatic(Instruction* cc,
                                                 AlgebraicContext& ctx) {
  if (!IsCustomCall(cc, "SliceToDynamic") || cc->operand_count() < 1) {
    return false;
  }
  Instruction* pad_to_static = nullptr;
  for (int64_t i = 0; i < cc->operand_count(); ++i) {
    Instruction* gte = cc->operand(i);
    if (!IsOp(gte, Opcode::kGetTupleElement) || gte->operand_count() != 1 ||
        gte->tuple_index() != i) {
      return false;
    }
    if (i == 0) pad_to_static = gte->operand(0);
    if (gte->operand(0) != pad_to_static) return false;
  }
  if (!IsCustomCall(pad_to_static, "PadToStatic") ||
      pad_to_static->operand_count() != 1 ||
      !pad_to_static->shape().IsTuple() ||
      pad_to_static->shape().tuple_shapes_size() != cc->operand_count()) {
    return false;
  }
  return ReplaceWithExisting(cc, pad_to_static->operand(0), ctx);
}

// 59. (LS) A LayoutConstraint custom call -> its operand if the shapes are
// equal, else a copy to the constrained layout.
absl::StatusOr<bool> LayoutConstraintToCopy(Instruction* cc,
                                            AlgebraicContext& ctx) {
  if (!LayoutSensitive(ctx) || !IsCustomCall(cc, "LayoutConstraint") ||
      cc->operand_count() != 1 || !IsArray(cc) || !IsArray(cc->operand(0))) {
    return false;
  }
  Instruction* x = cc->operand(0);
  if (x->shape() == cc->shape()) return ReplaceWithExisting(cc, x, ctx);
  PART1_ASSIGN_OR_NO_MATCH(Instruction * copy,
                           MakeUnary(ctx.rw, Opcode::kCopy, x));
  return ReplaceWithNew(cc, copy, ctx);
}

// 60. (opt: conditional_simplification) A two-branch conditional indexed by
// convert(pred) -> a predicated conditional (index 1 is the true branch).
absl::StatusOr<bool> ConditionalConvertedPredicate(Instruction* cond,
                                                   AlgebraicContext& ctx) {
  if (!ctx.options.enable_conditional_simplification ||
      cond->operand_count() != 3 || cond->called_computations().size() != 2) {
    return false;
  }
  Instruction* index = cond->operand(0);
  if (!IsOp(index, Opcode::kConvert) || index->operand_count() != 1 ||
      !index->shape().IsScalar() ||
      !IsIntegralType(index->shape().element_type()) ||
      !index->operand(0)->shape().IsScalar() ||
      index->operand(0)->shape().element_type() != PrimitiveType::kPred) {
    return false;
  }
  Instruction* ops[] = {index->operand(0), cond->operand(2), cond->operand(1)};
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      CloneWithNewOperands(ctx.rw, cond, cond->shape(), ops));
  result->set_called_computations(
      {cond->called_computations()[1], cond->called_computations()[0]});
  return ReplaceWithExisting(cond, result, ctx);
}

// 61. Tuple elements of an optimization barrier that no get-tuple-element
// reads are dropped: the tuple is rebuilt and the indices renumbered.
absl::StatusOr<bool> OptimizationBarrierDropUnused(Instruction* barrier,
                                                   AlgebraicContext& ctx) {
  if (barrier->operand_count() != 1 || !barrier->shape().IsTuple() ||
      barrier->IsRoot() || barrier->user_count() == 0) {
    return false;
  }
  Instruction* tuple = barrier->operand(0);
  const int64_t n = barrier->shape().tuple_shapes_size();
  if (!IsOp(tuple, Opcode::kTuple) || tuple->user_count() != 1 ||
      tuple->operand_count() != n) {
    return false;
  }
  std::vector<bool> used(n, false);
  for (const Instruction* user : barrier->users()) {
    if (!IsOp(user, Opcode::kGetTupleElement) || user->tuple_index() < 0 ||
        user->tuple_index() >= n) {
      return false;
    }
    used[user->tuple_index()] = true;
  }
  std::vector<Instruction*> kept;
  std::vector<int64_t> new_index(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    if (used[i]) {
      new_index[i] = static_cast<int64_t>(kept.size());
      kept.push_back(tuple->operand(i));
    } else if (tuple->operand(i)->HasSideEffect()) {
      return false;
    }
  }
  if (static_cast<int64_t>(kept.size()) == n) return false;
  PART1_ASSIGN_OR_NO_MATCH(Instruction * new_tuple,
                           MakeTuple(ctx.rw, barrier->parent(), kept));
  Instruction* ops[] = {new_tuple};
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * new_barrier,
      CloneWithNewOperands(ctx.rw, barrier, new_tuple->shape(), ops));
  DropShardingIfShapeKindChanged(new_barrier, barrier->shape());
  // Build every replacement first; then swap the readers over.
  std::vector<std::pair<Instruction*, Instruction*>> replacements;
  std::vector<Instruction*> users = UsersOf(barrier);
  for (Instruction* gte : users) {
    PART1_ASSIGN_OR_NO_MATCH(
        Instruction * new_gte,
        MakeGetTupleElement(ctx.rw, new_barrier,
                            new_index[gte->tuple_index()]));
    replacements.push_back({gte, new_gte});
  }
  bool changed = false;
  for (auto [gte, new_gte] : replacements) {
    if (ctx.rw.IsRemoved(gte->unique_id())) continue;
    HLOGYM_ASSIGN_OR_RETURN(bool done, ReplaceWithExisting(gte, new_gte, ctx));
    changed |= done;
  }
  return changed;
}

// 62. get-tuple-element(tuple(...), i) -> the i-th operand.
absl::StatusOr<bool> GetTupleElementOfTuple(Instruction* gte,
                                            AlgebraicContext& ctx) {
  if (gte->operand_count() != 1) return false;
  Instruction* tuple = gte->operand(0);
  const int64_t i = gte->tuple_index();
  if (!IsOp(tuple, Opcode::kTuple) || i < 0 || i >= tuple->operand_count()) {
    return false;
  }
  return ReplaceWithExisting(gte, tuple->operand(i), ctx);
}

Instruction* MapRoot(const Instruction* map) {
  if (map->operand_count() < 1 || map->called_computations().size() != 1 ||
      map->to_apply() == nullptr || !IsArray(map)) {
    return nullptr;
  }
  return map->to_apply()->root_instruction();
}

// 63. A map whose body returns parameter i -> operand i.
absl::StatusOr<bool> MapParameterRoot(Instruction* map, AlgebraicContext& ctx) {
  Instruction* root = MapRoot(map);
  if (!IsOp(root, Opcode::kParameter)) return false;
  const int64_t i = root->parameter_number();
  if (i < 0 || i >= map->operand_count()) return false;
  return ReplaceWithExisting(map, map->operand(i), ctx);
}

// 63. A map whose body returns a scalar constant -> broadcast(constant).
absl::StatusOr<bool> MapConstantRoot(Instruction* map, AlgebraicContext& ctx) {
  Instruction* root = MapRoot(map);
  if (!IsScalarConstant(root)) return false;
  PART1_ASSIGN_OR_NO_MATCH(
      Instruction * value,
      MakeConstant(ctx.rw, map->parent(), root->literal()));
  Instruction* result = value;
  if (!map->shape().IsScalar()) {
    PART1_ASSIGN_OR_NO_MATCH(
        result, MakeBroadcastLike(ctx.rw, value, map->shape(), {}));
  }
  return ReplaceWithNew(map, result, ctx);
}

// 63. A map whose body is one elementwise op over its parameters -> that
// op applied to the map's operands.
absl::StatusOr<bool> MapElementwiseRoot(Instruction* map,
                                        AlgebraicContext& ctx) {
  Instruction* root = MapRoot(map);
  if (root == nullptr || !IsElementwise(root->opcode()) ||
      root->operand_count() == 0 || !root->called_computations().empty() ||
      root->HasSideEffect() || !root->shape().IsScalar()) {
    return false;
  }
  std::vector<Instruction*> operands;
  for (const Instruction* p : root->operands()) {
    if (!IsOp(p, Opcode::kParameter) || p->parent() != root->parent() ||
        p->parameter_number() < 0 ||
        p->parameter_number() >= map->operand_count()) {
      return false;
    }
    operands.push_back(map->operand(p->parameter_number()));
  }
  // The body's instruction is cloned into the map's computation.
  std::unique_ptr<Instruction> clone = root->CloneWithNewOperands(operands);
  Shape shape = WithElementType(map->shape(), root->shape().element_type());
  *clone->mutable_shape() = shape;
  clone->set_name("");
  clone->set_unique_id(-1);
  DropShardingIfShapeKindChanged(clone.get(), root->shape());
  Instruction* result = ctx.rw.AddInstruction(map->parent(), std::move(clone));
  return ReplaceWithNew(map, result, ctx);
}

// Async computations hold one wrapped instruction and its parameters; a
// rewrite there would break that form, so rules skip them. Besides the
// computations marked as wrappers, that is a computation of the root and
// parameters only, called by an async op. The caller scan is only needed
// where some rule here can fire on such a root: not for the binary
// elementwise roots of reducers (compare excepted) nor select/clamp.
bool InAsyncComputation(const Instruction* inst, AlgebraicContext& ctx) {
  const Computation* c = inst->parent();
  if (c == nullptr) return false;
  if (c->IsAsyncWrapper()) return true;
  if (c->root_instruction() != inst ||
      c->instruction_count() != c->num_parameters() + 1 ||
      c->parent() == nullptr) {
    return false;
  }
  const Opcode op = inst->opcode();
  if ((IsBinaryElementwise(op) && op != Opcode::kCompare) ||
      IsTernaryElementwise(op)) {
    return false;
  }
  return ctx.async.CalledByAnyAsyncOp(c);
}

// The value between an async start and its done may pass through copies,
// tuples, get-tuple-elements, barriers, annotating custom calls and loops,
// but not through an alternatives node: rules leave that path alone.
bool FeedsAsyncOp(const Instruction* inst) {
  std::vector<const Instruction*> stack = {inst};
  int visited = 0;
  while (!stack.empty() && visited++ < 64) {
    const Instruction* cur = stack.back();
    stack.pop_back();
    for (const Instruction* user : cur->users()) {
      const Opcode k = user->opcode();
      if (k == Opcode::kAsyncUpdate || k == Opcode::kAsyncDone ||
          IsAsyncDoneOpcode(k)) {
        return true;
      }
      if (k == Opcode::kCopy || k == Opcode::kGetTupleElement ||
          k == Opcode::kTuple || k == Opcode::kOptimizationBarrier ||
          (k == Opcode::kCustomCall && user->operand_count() == 1)) {
        stack.push_back(user);
      } else if (k == Opcode::kWhile) {
        stack.push_back(user);
        const Computation* body = user->while_body();
        if (body != nullptr && body->num_parameters() == 1) {
          stack.push_back(body->parameter_instruction(0));
        }
      }
    }
  }
  return false;
}

template <AlgebraicRuleFn kRule>
absl::StatusOr<bool> Guarded(Instruction* inst, AlgebraicContext& ctx) {
  if (InAsyncComputation(inst, ctx) || FeedsAsyncOp(inst)) return false;
  return kRule(inst, ctx);
}

}  // namespace

void AddAlgebraicRulesPart1(std::vector<AlgebraicRule>* rules) {
  auto add = [&](const char* name, int entry, std::vector<Opcode> visits,
                 const char* summary, AlgebraicRuleFn fn) {
    rules->push_back({name, entry, std::move(visits), summary, fn});
  };
  // Abs, Add, And, Or, Not, Negate.
  add("abs-non-negative", 1, {Opcode::kAbs},
      "abs(x) -> x when x is known non-negative", &Guarded<&AbsNonNegative>);
  add("add-zero", 2, {Opcode::kAdd}, "add(A, 0) -> A and add(0, A) -> A",
      &Guarded<&AddZero>);
  add("add-canonicalize-constant", 3, {Opcode::kAdd},
      "add(constant, A) -> add(A, constant)",
      &Guarded<&AddCanonicalizeConstant>);
  add("add-reassociate-constants", 4, {Opcode::kAdd},
      "add(add(A, C1), C2) -> add(A, C1 + C2)",
      &Guarded<&AddReassociateConstants>);
  add("add-subtract-constants", 5, {Opcode::kAdd},
      "add(sub(C1, A), C2) -> sub(C1 + C2, A)",
      &Guarded<&AddSubtractConstants>);
  add("add-dynamic-update-slice-of-zeros", 6, {Opcode::kAdd},
      "add(A, dus(broadcast(0), U, i)) -> dus(A, add(ds(A, i), U), i)",
      &Guarded<&AddDynamicUpdateSliceOfZeros>);
  add("add-factor-common-multiplicand", 7, {Opcode::kAdd},
      "add(mul(A, C), mul(B, C)) -> mul(add(A, B), C)",
      &Guarded<&AddFactorCommonMultiplicand>);
  add("add-into-scatter-add", 8, {Opcode::kAdd},
      "(LI) add(scatter_add(A, I, U), B) -> scatter_add(add(A, B), I, U)",
      &Guarded<&AddIntoScatterAdd>);
  add("add-of-two-scatter-adds", 9, {Opcode::kAdd},
      "(LI) add of two scatter_adds -> one scatter (or a chain)",
      &Guarded<&AddOfTwoScatterAdds>);
  add("add-sink-convolution-biases", 10, {Opcode::kAdd},
      "add(add(conv, bcast(c0)), bcast(c1)) -> add(bcast(c0 + c1), conv)",
      &Guarded<&AddSinkConvolutionBiases>);
  add("and-true", 11, {Opcode::kAnd}, "and(A, true) -> A (pred)",
      &Guarded<&AndTrue>);
  add("and-zero", 11, {Opcode::kAnd}, "and(A, 0) -> 0", &Guarded<&AndZero>);
  add("and-compare-min-bound", 12, {Opcode::kAnd},
      "and(x < c1, x < c2) -> x < min(c1, c2) (s32)",
      &Guarded<&AndCompareMinBound>);
  add("or-true", 13, {Opcode::kOr}, "or(A, true) -> true (pred)",
      &Guarded<&OrTrue>);
  add("or-zero", 13, {Opcode::kOr}, "or(A, 0) -> A", &Guarded<&OrZero>);
  add("not-not", 14, {Opcode::kNot}, "not(not(x)) -> x",
      &Guarded<&UnaryInvolution>);
  add("negate-negate", 14, {Opcode::kNegate}, "negate(negate(x)) -> x",
      &Guarded<&UnaryInvolution>);
  // Collectives.
  add("all-gather-of-broadcast-constant", 15, {Opcode::kAllGather},
      "all-gather(broadcast(scalar constant)) -> broadcast",
      &Guarded<&AllGatherOfBroadcastConstant>);
  add("all-to-all-of-broadcast-constant", 16, {Opcode::kAllToAll},
      "all-to-all(broadcast(scalar constant)) -> its operand",
      &Guarded<&AllToAllOfBroadcastConstant>);
  // Bitcast, BitcastConvert, Copy.
  add("bitcast-of-bitcast", 17, {Opcode::kBitcast},
      "bitcast(bitcast(x)) -> bitcast(x)", &Guarded<&BitcastOfBitcast>);
  add("bitcast-no-op", 17, {Opcode::kBitcast},
      "bitcast to the operand's shape -> operand", &Guarded<&BitcastNoOp>);
  add("transpose-reshape-chain-identity", 18,
      {Opcode::kTranspose, Opcode::kReshape, Opcode::kBitcast},
      "transposes and degenerate reshapes composing to identity -> input",
      &Guarded<&TransposeReshapeChainIdentity>);
  add("bitcast-of-broadcast-as-transpose", 19, {Opcode::kBitcast},
      "transposing bitcast(broadcast(x)) -> broadcast(x)",
      &Guarded<&BitcastOfBroadcastAsTranspose>);
  add("bitcast-convert-chain", 21, {Opcode::kBitcastConvert},
      "bitcast_convert(bitcast_convert(x)) -> bitcast_convert(x) or x",
      &Guarded<&BitcastConvertChain>);
  add("bitcast-convert-no-op", 22, {Opcode::kBitcastConvert},
      "bitcast_convert to the same type -> operand",
      &Guarded<&BitcastConvertNoOp>);
  add("bitcast-convert-to-bitcast", 23, {Opcode::kBitcastConvert},
      "(LS, opt) same-width bitcast_convert -> bitcast",
      &Guarded<&BitcastConvertToBitcast>);
  add("bitcast-convert-of-concat", 24, {Opcode::kBitcastConvert},
      "bitcast_convert(concat(bitcast_convert(x_i))) -> concat(x_i)",
      &Guarded<&BitcastConvertOfConcat>);
  add("copy-of-copy", 25, {Opcode::kCopy},
      "copy(copy(x)) -> x or a single copy", &Guarded<&CopyOfCopy>);
  add("copy-no-op", 26, {Opcode::kCopy}, "shape-preserving copy -> operand",
      &Guarded<&CopyNoOp>);
  add("copy-reshape-chain-to-bitcast", 27, {Opcode::kCopy, Opcode::kReshape},
      "(LS) copy/reshape chain that is a bitcast -> bitcast",
      &Guarded<&CopyReshapeChainToBitcast>);
  add("copy-of-bitcast-reshape", 28, {Opcode::kCopy},
      "(LS) copy(reshape(x)) -> reshape(x) with the copy's layout",
      &Guarded<&CopyOfBitcastReshape>);
  // Broadcast.
  add("broadcast-to-reshape", 30, {Opcode::kBroadcast},
      "element-preserving broadcast with sorted dims -> reshape",
      &Guarded<&BroadcastToReshape>);
  add("broadcast-to-transpose", 31, {Opcode::kBroadcast},
      "element-preserving same-rank broadcast -> transpose",
      &Guarded<&BroadcastToTranspose>);
  add("broadcast-of-degenerate-reshape", 32, {Opcode::kBroadcast},
      "broadcast(reshape inserting 1-dims(x)) -> broadcast(x)",
      &Guarded<&BroadcastOfDegenerateReshape>);
  add("broadcast-of-broadcast", 33, {Opcode::kBroadcast},
      "broadcast(broadcast(x)) -> broadcast(x)",
      &Guarded<&BroadcastOfBroadcast>);
  add("broadcast-of-iota", 34, {Opcode::kBroadcast}, "broadcast(iota) -> iota",
      &Guarded<&BroadcastOfIota>);
  add("broadcast-scalar-into-user", 35, {Opcode::kBroadcast},
      "permuting/subset user of a scalar broadcast -> broadcast",
      &Guarded<&BroadcastScalarIntoUser>);
  add("broadcast-sink-elementwise", 36, {Opcode::kBroadcast},
      "(opt) elementwise op of broadcasts -> broadcast of the op",
      &Guarded<&BroadcastSinkElementwise>);
  add("broadcast-drop-degenerate-dims", 37, {Opcode::kBroadcast},
      "(LI, opt) drop 1-sized dims of the broadcast operand",
      &Guarded<&BroadcastDropDegenerateDims>);
  // Compare.
  add("compare-unsigned-with-zero", 38, {Opcode::kCompare},
      "unsigned x < 0 -> false, x >= 0 -> true, ...",
      &Guarded<&CompareUnsignedWithZero>);
  add("compare-non-negative-with-zero", 39, {Opcode::kCompare},
      "non-negative x < 0 -> false, x >= 0 -> true, ...",
      &Guarded<&CompareNonNegativeWithZero>);
  add("compare-same-integral-operand", 40, {Opcode::kCompare},
      "integral x cmp x -> constant", &Guarded<&CompareSameIntegralOperand>);
  add("compare-pred-identity", 41, {Opcode::kCompare},
      "pred A != false -> A, A == true -> A", &Guarded<&ComparePredIdentity>);
  add("compare-select-mask", 42, {Opcode::kCompare},
      "ne(select(ge(a, b), 1, 0), 0) -> ge(a, b)",
      &Guarded<&CompareSelectMask>);
  add("compare-gt-max-min", 43, {Opcode::kCompare},
      "gt(max(a, b), a) -> gt(b, a) and the min forms",
      &Guarded<&CompareGtMaxMin>);
  // Concatenate.
  add("concat-single-operand", 44, {Opcode::kConcatenate},
      "single-operand concatenate -> operand", &Guarded<&ConcatSingleOperand>);
  add("concat-drop-empty-operands", 45, {Opcode::kConcatenate},
      "zero-element concatenate operands dropped",
      &Guarded<&ConcatDropEmptyOperands>);
  add("concat-flatten", 46, {Opcode::kConcatenate},
      "(LI) nested concatenates on the same dim flattened",
      &Guarded<&ConcatFlatten>);
  add("concat-merge-slices", 47, {Opcode::kConcatenate},
      "(LI) adjacent slices of one operand -> one slice",
      &Guarded<&ConcatMergeSlices>);
  add("concat-broadcast-to-pad", 48, {Opcode::kConcatenate},
      "(LI) concat(x, broadcast(scalar)) -> pad",
      &Guarded<&ConcatBroadcastToPad>);
  add("concat-same-operand-to-broadcast", 49, {Opcode::kConcatenate},
      "(LI) concat(x, ..., x) on a size-1 dim -> broadcast(reshape(x))",
      &Guarded<&ConcatSameOperandToBroadcast>);
  // Constant, Iota.
  add("constant-tuple-to-tuple", 50, {Opcode::kConstant},
      "tuple constant -> tuple of constants", &Guarded<&ConstantTupleToTuple>);
  add("constant-all-equal-to-broadcast", 51, {Opcode::kConstant},
      "constant of equal elements -> broadcast(scalar)",
      &Guarded<&ConstantAllEqualToBroadcast>);
  add("constant-to-iota", 52, {Opcode::kConstant},
      "rank-1 constant 0..n-1 -> iota", &Guarded<&ConstantToIota>);
  add("constant-to-strided-iota", 52, {Opcode::kConstant},
      "rank-1 constant 0, s, 2s, ... -> iota * broadcast(s)",
      &Guarded<&ConstantToStridedIota>);
  add("iota-degenerate", 53, {Opcode::kIota},
      "iota over a dimension of size <= 1 -> zeros", &Guarded<&IotaDegenerate>);
  // Convert.
  add("convert-no-op", 54, {Opcode::kConvert},
      "convert to the same type -> operand", &Guarded<&ConvertNoOp>);
  add("convert-pair-no-op", 55, {Opcode::kConvert},
      "value-preserving convert round trip -> operand",
      &Guarded<&ConvertPairNoOp>);
  add("convert-constant-fold", 56, {Opcode::kConvert},
      "(opt) narrowing convert of a single-use constant -> constant",
      &Guarded<&ConvertConstantFold>);
  add("convert-narrow-binary-op", 57, {Opcode::kConvert},
      "convert(op(convert(a), convert(b))) -> op(a, b) in the narrow type",
      &Guarded<&ConvertNarrowBinaryOp>);
  // CustomCall, Conditional, OptimizationBarrier, GTE, Map.
  add("slice-to-dynamic-of-pad-to-static", 58, {Opcode::kCustomCall},
      "SliceToDynamic(PadToStatic(x) parts) -> x",
      &Guarded<&SliceToDynamicOfPadToStatic>);
  add("layout-constraint-to-copy", 59, {Opcode::kCustomCall},
      "(LS) LayoutConstraint custom call -> operand or copy",
      &Guarded<&LayoutConstraintToCopy>);
  add("conditional-converted-predicate", 60, {Opcode::kConditional},
      "(opt) conditional on convert(pred) -> predicated conditional",
      &Guarded<&ConditionalConvertedPredicate>);
  add("optimization-barrier-drop-unused", 61, {Opcode::kOptimizationBarrier},
      "unread optimization barrier tuple elements dropped",
      &Guarded<&OptimizationBarrierDropUnused>);
  add("get-tuple-element-of-tuple", 62, {Opcode::kGetTupleElement},
      "get-tuple-element(tuple(...), i) -> operand i",
      &Guarded<&GetTupleElementOfTuple>);
  add("map-parameter-root", 63, {Opcode::kMap},
      "map returning parameter i -> operand i", &Guarded<&MapParameterRoot>);
  add("map-constant-root", 63, {Opcode::kMap},
      "map returning a scalar constant -> broadcast(constant)",
      &Guarded<&MapConstantRoot>);
  add("map-elementwise-root", 63, {Opcode::kMap},
      "map of one elementwise op over parameters -> that op",
      &Guarded<&MapElementwiseRoot>);
}

}  // namespace hlogym
