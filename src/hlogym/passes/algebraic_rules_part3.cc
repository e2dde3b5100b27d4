// AlgebraicSimplifier rules, checklist entries 138-212.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
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
#define PART3_ASSIGN_OR_NO_MATCH(lhs, expr) \
  PART3_ASSIGN_OR_NO_MATCH_IMPL(HLOGYM_CONCAT(part3_or_, __LINE__), lhs, expr)
#define PART3_ASSIGN_OR_NO_MATCH_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return false;                        \
  lhs = *tmp

// ---------------------------------------------------------------------------
// Helpers.

bool IsOp(const Instruction* inst, Opcode op) {
  return inst != nullptr && inst->opcode() == op;
}

bool IsArray(const Instruction* inst) {
  return inst != nullptr && inst->shape().IsArray();
}

bool IsBinary(const Instruction* inst, Opcode op) {
  return IsOp(inst, op) && inst->operand_count() == 2 &&
         IsArray(inst->operand(0)) && IsArray(inst->operand(1));
}

bool LayoutSensitive(const AlgebraicContext& ctx) {
  return ctx.options.is_layout_sensitive;
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

std::vector<int64_t> DimsOf(const Instruction* inst) {
  const DimVector& d = inst->shape().dimensions();
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

bool Contains(const DimVector& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Valid, distinct dimension numbers below `rank`.
bool ValidDims(const DimVector& dims, int64_t rank) {
  std::vector<bool> seen(std::max<int64_t>(rank, 0), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

// A single-output reduce: (input, init) with an array result.
bool IsPlainReduce(const Instruction* r) {
  return IsOp(r, Opcode::kReduce) && r->operand_count() == 2 && IsArray(r) &&
         IsArray(r->operand(0)) && r->operand(1)->shape().IsScalar() &&
         r->to_apply() != nullptr &&
         ValidDims(r->dimensions(), r->operand(0)->shape().rank());
}

// The reshape's dimensions that map one-to-one to an operand dimension
// (a group of exactly one input and one output dimension of equal size):
// out_to_in[j] is the input dimension of output j, or -1.
std::vector<int64_t> UnmodifiedReshapeDims(const DimVector& in,
                                           const DimVector& out) {
  std::vector<int64_t> out_to_in(out.size(), -1);
  size_t i = 0, j = 0;
  while (i < in.size() && j < out.size()) {
    size_t i0 = i, j0 = j;
    int64_t pi = in[i++], po = out[j++];
    while (pi != po) {
      if (pi < po) {
        if (i >= in.size()) return out_to_in;
        pi *= in[i++];
      } else {
        if (j >= out.size()) return out_to_in;
        po *= out[j++];
      }
      if (pi == 0 || po == 0) return std::vector<int64_t>(out.size(), -1);
    }
    if (i - i0 == 1 && j - j0 == 1) out_to_in[j0] = static_cast<int64_t>(i0);
  }
  return out_to_in;
}

// Positions of `out` that are 1-sized dimensions inserted into `in`, and
// for the other positions the input dimension. nullopt if `out` is not
// `in` with 1-sized dimensions inserted.
std::optional<std::vector<int64_t>> InsertedOnesMap(const DimVector& in,
                                                    const DimVector& out) {
  std::vector<int64_t> map(out.size(), -1);
  size_t i = 0;
  for (size_t j = 0; j < out.size(); ++j) {
    if (i < in.size() && in[i] == out[j]) {
      map[j] = static_cast<int64_t>(i++);
    } else if (out[j] != 1) {
      return std::nullopt;
    }
  }
  if (i != in.size()) return std::nullopt;
  return map;
}

// The reducer of a reduce as XLA's ReductionComputationsEquivalent sees it.
bool ReducersEquivalent(const Computation* a, const Computation* b) {
  if (a == b) return true;
  std::optional<Opcode> oa = ScalarReducerOpcode(a);
  std::optional<Opcode> ob = ScalarReducerOpcode(b);
  if (!oa || !ob || *oa != *ob) return false;
  return *oa == Opcode::kAdd || *oa == Opcode::kMultiply ||
         *oa == Opcode::kAnd || *oa == Opcode::kOr;
}

// Two inits are the same: one instruction, or equal scalar constants.
bool SameInit(const Instruction* a, const Instruction* b) {
  if (a == b) return true;
  return IsOp(a, Opcode::kConstant) && IsOp(b, Opcode::kConstant) &&
         a->has_literal() && b->has_literal() && !a->literal().is_unknown() &&
         a->literal() == b->literal();
}

// A dense array layout without tiling or other physical extras, covering
// every dimension once.
bool PlainLayout(const Shape& s) {
  if (!s.IsArray() || !s.has_layout()) return false;
  const Layout& l = s.layout();
  return !l.HasTail() && IsPermutation(l.minor_to_major, s.rank());
}

// The non-degenerate dimensions in physical order, major to minor.
std::vector<int64_t> PhysicalNonDegenerateDims(const Shape& s) {
  std::vector<int64_t> dims;
  const DimVector& m2m = s.layout().minor_to_major;
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it) {
    if (s.dimensions(*it) != 1) dims.push_back(*it);
  }
  return dims;
}

// ===========================================================================
// Power (138-141).

absl::StatusOr<bool> PowerZero(Instruction* pow, AlgebraicContext& ctx) {
  if (!IsBinary(pow, Opcode::kPower) || !IsAll(pow->operand(1), 0)) {
    return false;
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * one, MakeFilledLike(ctx.rw, pow, 1));
  return ReplaceWithNew(pow, one, ctx);
}

absl::StatusOr<bool> PowerOne(Instruction* pow, AlgebraicContext& ctx) {
  if (!IsBinary(pow, Opcode::kPower) || !IsAll(pow->operand(1), 1)) {
    return false;
  }
  return ReplaceWithExisting(pow, pow->operand(0), ctx);
}

// 139. pow(exp(A), B) -> exp(A * B).
absl::StatusOr<bool> PowerOfExp(Instruction* pow, AlgebraicContext& ctx) {
  if (!IsBinary(pow, Opcode::kPower)) return false;
  Instruction* e = pow->operand(0);
  if (!IsOp(e, Opcode::kExp) || e->operand_count() != 1) return false;
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * mul,
      MakeBinary(ctx.rw, Opcode::kMultiply, e->operand(0), pow->operand(1)));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeUnary(ctx.rw, Opcode::kExp, mul));
  return ReplaceWithNew(pow, result, ctx);
}

// 140. pow(A, 2) -> A*A.
absl::StatusOr<bool> PowerTwo(Instruction* pow, AlgebraicContext& ctx) {
  if (!IsBinary(pow, Opcode::kPower) || !IsAll(pow->operand(1), 2)) {
    return false;
  }
  Instruction* a = pow->operand(0);
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBinary(ctx.rw, Opcode::kMultiply, a, a));
  return ReplaceWithNew(pow, result, ctx);
}

// 140. pow(A, 3) -> A*(A*A).
absl::StatusOr<bool> PowerThree(Instruction* pow, AlgebraicContext& ctx) {
  if (!IsBinary(pow, Opcode::kPower) || !IsAll(pow->operand(1), 3)) {
    return false;
  }
  Instruction* a = pow->operand(0);
  PART3_ASSIGN_OR_NO_MATCH(Instruction * sq,
                           MakeBinary(ctx.rw, Opcode::kMultiply, a, a));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBinary(ctx.rw, Opcode::kMultiply, a, sq));
  return ReplaceWithNew(pow, result, ctx);
}

// 140. pow(A, -1) -> 1/A. Integer pow with a negative exponent is not an
// integer division (pow(2, -1) is 0 but so is 1/2; pow(0, -1) differs), so
// only floating types.
absl::StatusOr<bool> PowerMinusOne(Instruction* pow, AlgebraicContext& ctx) {
  if (!IsBinary(pow, Opcode::kPower) || !IsAll(pow->operand(1), -1)) {
    return false;
  }
  Instruction* a = pow->operand(0);
  PrimitiveType t = a->shape().element_type();
  if (!IsFloatingPointType(t) && !IsComplexType(t)) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * one, MakeFilledLike(ctx.rw, a, 1));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBinary(ctx.rw, Opcode::kDivide, one, a));
  return ReplaceWithNew(pow, result, ctx);
}

// 141. pow(A, 0.5) -> sqrt(A): pow(-0, 0.5) is +0 and pow(-inf, 0.5) is
// +inf where sqrt gives -0 and NaN, so only for non-negative A.
absl::StatusOr<bool> PowerHalf(Instruction* pow, AlgebraicContext& ctx) {
  if (!IsBinary(pow, Opcode::kPower) || !IsAll(pow->operand(1), 0.5)) {
    return false;
  }
  Instruction* a = pow->operand(0);
  if (!IsFloatingPointType(a->shape().element_type())) return false;
  if (!IsNonNegative(a)) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeUnary(ctx.rw, Opcode::kSqrt, a));
  return ReplaceWithNew(pow, result, ctx);
}

// ===========================================================================
// Reduce (142-156).

// 142. Zero-element input or result -> broadcast(init).
absl::StatusOr<bool> ReduceZeroElement(Instruction* r, AlgebraicContext& ctx) {
  if (!IsPlainReduce(r)) return false;
  if (r->operand(0)->shape().ElementsIn() != 0 &&
      r->shape().ElementsIn() != 0) {
    return false;
  }
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBroadcast(ctx.rw, r->operand(1), DimsOf(r), std::vector<int64_t>{}));
  return ReplaceWithNew(r, result, ctx);
}

// A copy of a one-element-tuple-returning reducer that returns the element
// itself; nullptr if the reducer does not have that form.
Computation* UntupledReducer(Rewriter& rw, const Computation* reducer) {
  if (reducer == nullptr) return nullptr;
  const Instruction* root = reducer->root_instruction();
  if (!IsOp(root, Opcode::kTuple) || root->operand_count() != 1 ||
      !root->operand(0)->shape().IsScalar()) {
    return nullptr;
  }
  std::unique_ptr<Computation> copy = reducer->Clone();
  Instruction* tuple = copy->root_instruction();
  if (!IsOp(tuple, Opcode::kTuple) || tuple->operand_count() != 1) {
    return nullptr;
  }
  // Not in any module yet: the copy is this rule's to edit.
  copy->set_root_instruction(tuple->operand(0));
  if (!copy->RemoveInstruction(tuple).ok()) return nullptr;
  return rw.AddComputation(std::move(copy));
}

// A variadic form with one input: (input, init) returning a 1-tuple.
bool IsSingleInputVariadic(const Instruction* inst) {
  return inst->operand_count() == 2 && inst->shape().IsTuple() &&
         inst->shape().tuple_shapes_size() == 1 &&
         inst->shape().tuple_shapes(0).IsArray() && IsArray(inst->operand(0)) &&
         inst->operand(1)->shape().IsScalar() && inst->to_apply() != nullptr;
}

// 143. A variadic reduce with one input and a tuple-returning reducer ->
// tuple(plain reduce).
absl::StatusOr<bool> ReduceUnwrapVariadic(Instruction* r,
                                          AlgebraicContext& ctx) {
  if (!IsOp(r, Opcode::kReduce) || !IsSingleInputVariadic(r) ||
      !ValidDims(r->dimensions(), r->operand(0)->shape().rank())) {
    return false;
  }
  Computation* reducer = UntupledReducer(ctx.rw, r->to_apply());
  if (reducer == nullptr) return false;
  std::vector<int64_t> dims(r->dimensions().begin(), r->dimensions().end());
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * red,
      MakeReduce(ctx.rw, r->operand(0), r->operand(1), dims, reducer));
  std::vector<Instruction*> elements = {red};
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeTuple(ctx.rw, r->parent(), elements));
  return ReplaceWithNew(r, result, ctx);
}

// 144. Only size-1 dimensions reduced -> reshape. XLA assumes the init is
// the reducer's identity; a constant init that visibly is not (an add from
// 2) would change the values, so it is left alone: a constant init must be
// 0 for add and or, 1 for multiply and and; max and min need a non-constant
// init.
absl::StatusOr<bool> ReduceToReshape(Instruction* r, AlgebraicContext& ctx) {
  if (!IsPlainReduce(r) || LayoutSensitive(ctx)) return false;
  if (const Instruction* init = r->operand(1);
      init->opcode() == Opcode::kConstant) {
    const std::optional<Opcode> op = ScalarReducerOpcode(r->to_apply());
    const bool identity =
        op.has_value() &&
        (((*op == Opcode::kAdd || *op == Opcode::kOr) && IsAll(init, 0)) ||
         ((*op == Opcode::kMultiply || *op == Opcode::kAnd) && IsAll(init, 1)));
    if (!identity) return false;
  }
  Instruction* x = r->operand(0);
  if (x->shape().ElementsIn() != r->shape().ElementsIn()) return false;
  if (x->shape().element_type() != r->shape().element_type()) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReshape(ctx.rw, x, DimsOf(r)));
  return ReplaceWithNew(r, result, ctx);
}

// 145. (LI) reduce_add(negate(x), 0) -> negate(reduce_add(x, 0)).
absl::StatusOr<bool> ReduceOfNegate(Instruction* r, AlgebraicContext& ctx) {
  if (!IsPlainReduce(r) || LayoutSensitive(ctx)) return false;
  Instruction* neg = r->operand(0);
  if (!IsOp(neg, Opcode::kNegate) || neg->operand_count() != 1) return false;
  if (!IsFloatingPointType(r->shape().element_type())) return false;
  if (!IsAll(r->operand(1), 0)) return false;
  std::optional<Opcode> op = ScalarReducerOpcode(r->to_apply());
  if (!op || *op != Opcode::kAdd) return false;
  std::vector<int64_t> dims(r->dimensions().begin(), r->dimensions().end());
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * red,
      MakeReduce(ctx.rw, neg->operand(0), r->operand(1), dims, r->to_apply()));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeUnary(ctx.rw, Opcode::kNegate, red));
  return ReplaceWithNew(r, result, ctx);
}

// 146. (LI, opt) reduce_add(dot(a, b), 0) over free dimensions ->
// dot(reduce(a), reduce(b)): sums commute with the products, so the
// operands are summed first when that saves enough flops.
absl::StatusOr<bool> ReduceOfDot(Instruction* r, AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !ctx.options.raise_slice_and_reduce_through_dot ||
      !IsPlainReduce(r) || !IsAll(r->operand(1), 0)) {
    return false;
  }
  std::optional<Opcode> op = ScalarReducerOpcode(r->to_apply());
  if (!op || *op != Opcode::kAdd) return false;
  Instruction* dot = r->operand(0);
  if (!IsOp(dot, Opcode::kDot) || dot->operand_count() != 2 ||
      !dot->attrs().dot_dnums.has_value() || !SameElementType(dot, r)) {
    return false;
  }
  Instruction* a = dot->operand(0);
  Instruction* b = dot->operand(1);
  if (!SameElementType(a, dot) || !SameElementType(b, dot)) return false;
  const DotDimensionNumbers& dn = *dot->attrs().dot_dnums;
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size()) {
    return false;
  }
  auto free_dims = [](const Instruction* x, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& contracting) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < x->shape().rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) ==
              contracting.end()) {
        dims.push_back(d);
      }
    }
    return dims;
  };
  std::vector<int64_t> a_free =
      free_dims(a, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  std::vector<int64_t> b_free =
      free_dims(b, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  const int64_t na = static_cast<int64_t>(a_free.size());
  if (nb + na + static_cast<int64_t>(b_free.size()) != dot->shape().rank()) {
    return false;
  }
  std::vector<int64_t> ra, rb;
  for (int64_t d : r->dimensions()) {
    if (d < nb) return false;  // batch dimensions stay
    if (d < nb + na) {
      ra.push_back(a_free[d - nb]);
    } else {
      rb.push_back(b_free[d - nb - na]);
    }
  }
  std::sort(ra.begin(), ra.end());
  std::sort(rb.begin(), rb.end());
  int64_t k = 1;
  for (int64_t d : dn.lhs_contracting_dimensions) {
    if (d < 0 || d >= a->shape().rank()) return false;
    k *= a->shape().dimensions(d);
  }
  const double before = static_cast<double>(dot->shape().ElementsIn()) * k;
  const double after = static_cast<double>(r->shape().ElementsIn()) * k +
                       a->shape().ElementsIn() + b->shape().ElementsIn();
  if (after <= 0 ||
      before / after <=
          ctx.options.raise_slice_and_reduce_through_dot_threshold) {
    return false;
  }
  auto renumber = [](const std::vector<int64_t>& dims,
                     const std::vector<int64_t>& removed) {
    std::vector<int64_t> out;
    for (int64_t d : dims) {
      int64_t shift = 0;
      for (int64_t x : removed) shift += x < d ? 1 : 0;
      out.push_back(d - shift);
    }
    return out;
  };
  Instruction* na_op = a;
  Instruction* nb_op = b;
  if (!ra.empty()) {
    PART3_ASSIGN_OR_NO_MATCH(
        na_op, MakeReduce(ctx.rw, a, r->operand(1), ra, r->to_apply()));
  }
  if (!rb.empty()) {
    PART3_ASSIGN_OR_NO_MATCH(
        nb_op, MakeReduce(ctx.rw, b, r->operand(1), rb, r->to_apply()));
  }
  DotDimensionNumbers nd;
  nd.lhs_batch_dimensions = renumber(dn.lhs_batch_dimensions, ra);
  nd.lhs_contracting_dimensions = renumber(dn.lhs_contracting_dimensions, ra);
  nd.rhs_batch_dimensions = renumber(dn.rhs_batch_dimensions, rb);
  nd.rhs_contracting_dimensions = renumber(dn.rhs_contracting_dimensions, rb);
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeDot(ctx.rw, na_op, nb_op, nd, r->shape().element_type(),
              dot->attrs().operand_precision));
  return ReplaceWithNew(r, result, ctx);
}

// 147. reduce(transpose(x)) -> reduce(x) over the permuted dimensions, then
// a transpose putting the kept dimensions back in order.
absl::StatusOr<bool> ReduceOfTranspose(Instruction* r, AlgebraicContext& ctx) {
  if (!IsPlainReduce(r)) return false;
  Instruction* t = r->operand(0);
  if (!IsOp(t, Opcode::kTranspose) || t->operand_count() != 1) return false;
  Instruction* x = t->operand(0);
  const int64_t rank = t->shape().rank();
  if (!IsArray(x) || !IsPermutation(t->dimensions(), rank)) return false;
  bool all_users_reduce = true;
  for (const Instruction* u : t->users()) {
    all_users_reduce &= IsOp(u, Opcode::kReduce);
  }
  if (!ctx.options.unconditionally_simplify_reduce_of_transpose_or_reshape &&
      r->shape().rank() >= 2 && !HasSingleUser(t) && !all_users_reduce) {
    return false;
  }
  const DimVector& perm = t->dimensions();
  std::vector<int64_t> new_dims;
  for (int64_t d : r->dimensions()) new_dims.push_back(perm[d]);
  std::sort(new_dims.begin(), new_dims.end());
  // Kept dims in the transpose's order, as x dimensions.
  std::vector<int64_t> kept_x;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(r->dimensions(), d)) kept_x.push_back(perm[d]);
  }
  std::vector<int64_t> sorted = kept_x;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> out_perm;
  bool identity = true;
  for (size_t i = 0; i < kept_x.size(); ++i) {
    int64_t pos = std::lower_bound(sorted.begin(), sorted.end(), kept_x[i]) -
                  sorted.begin();
    out_perm.push_back(pos);
    identity &= pos == static_cast<int64_t>(i);
  }
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * red,
      MakeReduce(ctx.rw, x, r->operand(1), new_dims, r->to_apply()));
  Instruction* result = red;
  if (!identity) {
    PART3_ASSIGN_OR_NO_MATCH(result, MakeTranspose(ctx.rw, red, out_perm));
  }
  return ReplaceWithNew(r, result, ctx);
}

// 148. reduce(reduce(x)) with the same init and equivalent reducers -> one
// reduce over both sets of dimensions.
absl::StatusOr<bool> ReduceOfReduce(Instruction* r, AlgebraicContext& ctx) {
  if (!IsPlainReduce(r)) return false;
  Instruction* inner = r->operand(0);
  if (!IsPlainReduce(inner)) return false;
  if (!SameInit(r->operand(1), inner->operand(1))) return false;
  if (!ReducersEquivalent(r->to_apply(), inner->to_apply())) return false;
  Instruction* x = inner->operand(0);
  std::vector<int64_t> kept;  // x dims kept by the inner reduce
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (!Contains(inner->dimensions(), d)) kept.push_back(d);
  }
  std::vector<int64_t> dims(inner->dimensions().begin(),
                            inner->dimensions().end());
  for (int64_t d : r->dimensions()) {
    if (d >= static_cast<int64_t>(kept.size())) return false;
    dims.push_back(kept[d]);
  }
  std::sort(dims.begin(), dims.end());
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeReduce(ctx.rw, x, inner->operand(1), dims, inner->to_apply()));
  return ReplaceWithNew(r, result, ctx);
}

// 149. reduce(reshape(x)) whose kept dimensions are untouched by the
// reshape -> reduce(x) over all other dimensions.
absl::StatusOr<bool> ReduceOfReshapeKeptDims(Instruction* r,
                                             AlgebraicContext& ctx) {
  if (!ctx.options.enable_reduce_of_reshape || !IsPlainReduce(r)) {
    return false;
  }
  Instruction* reshape = r->operand(0);
  if (!IsOp(reshape, Opcode::kReshape) || reshape->operand_count() != 1 ||
      !IsArray(reshape->operand(0))) {
    return false;
  }
  Instruction* x = reshape->operand(0);
  std::vector<int64_t> map = UnmodifiedReshapeDims(
      x->shape().dimensions(), reshape->shape().dimensions());
  std::vector<bool> x_kept(x->shape().rank(), false);
  for (int64_t j = 0; j < reshape->shape().rank(); ++j) {
    if (Contains(r->dimensions(), j)) continue;
    if (map[j] < 0) return false;
    x_kept[map[j]] = true;
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (!x_kept[d]) dims.push_back(d);
  }
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeReduce(ctx.rw, x, r->operand(1), dims, r->to_apply()));
  return ReplaceWithNew(r, result, ctx);
}

// 150. reduce(reshape(x)) whose reduced dimensions are untouched ->
// reshape(reduce(x)).
absl::StatusOr<bool> ReduceOfReshapeReducedDims(Instruction* r,
                                                AlgebraicContext& ctx) {
  if (!IsPlainReduce(r)) return false;
  Instruction* reshape = r->operand(0);
  if (!IsOp(reshape, Opcode::kReshape) || reshape->operand_count() != 1 ||
      !IsArray(reshape->operand(0))) {
    return false;
  }
  if (!HasSingleUser(reshape) &&
      !ctx.options.unconditionally_simplify_reduce_of_transpose_or_reshape) {
    return false;
  }
  Instruction* x = reshape->operand(0);
  std::vector<int64_t> map = UnmodifiedReshapeDims(
      x->shape().dimensions(), reshape->shape().dimensions());
  std::vector<int64_t> dims;
  for (int64_t d : r->dimensions()) {
    if (map[d] < 0) return false;
    dims.push_back(map[d]);
  }
  std::sort(dims.begin(), dims.end());
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * red,
      MakeReduce(ctx.rw, x, r->operand(1), dims, r->to_apply()));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReshape(ctx.rw, red, DimsOf(r)));
  return ReplaceWithNew(r, result, ctx);
}

// 151. reduce(concat) over the concat dimension -> map of per-operand
// reduces (the init enters once per operand: assumed identity).
absl::StatusOr<bool> ReduceOfConcat(Instruction* r, AlgebraicContext& ctx) {
  if (!IsPlainReduce(r)) return false;
  Instruction* concat = r->operand(0);
  if (!IsOp(concat, Opcode::kConcatenate) || concat->operand_count() < 2 ||
      concat->dimensions().size() != 1) {
    return false;
  }
  if (!Contains(r->dimensions(), concat->dimensions(0))) return false;
  bool same_shapes = true;
  for (const Instruction* op : concat->operands()) {
    if (!IsArray(op)) return false;
    same_shapes &= op->shape().SameDimensions(concat->operand(0)->shape());
  }
  if (!same_shapes && !r->shape().IsScalar() &&
      !ctx.options.enable_unconditional_reduce_of_concat_replacement) {
    return false;
  }
  std::vector<int64_t> dims(r->dimensions().begin(), r->dimensions().end());
  Instruction* acc = nullptr;
  for (Instruction* op : concat->operands()) {
    PART3_ASSIGN_OR_NO_MATCH(
        Instruction * red,
        MakeReduce(ctx.rw, op, r->operand(1), dims, r->to_apply()));
    if (acc == nullptr) {
      acc = red;
      continue;
    }
    std::vector<Instruction*> pair = {acc, red};
    PART3_ASSIGN_OR_NO_MATCH(acc, MakeMap(ctx.rw, pair, r->to_apply()));
  }
  return ReplaceWithNew(r, acc, ctx);
}

// 154. reduce_{max,min,and,or}(broadcast(scalar x), a) to a scalar ->
// op(x, a): these ops are idempotent, so repetition does not matter.
absl::StatusOr<bool> ReduceOfBroadcastScalar(Instruction* r,
                                             AlgebraicContext& ctx) {
  if (!IsPlainReduce(r) || !r->shape().IsScalar()) return false;
  Instruction* b = r->operand(0);
  if (!IsOp(b, Opcode::kBroadcast) || b->operand_count() != 1 ||
      !b->operand(0)->shape().IsScalar()) {
    return false;
  }
  std::optional<Opcode> op = ScalarReducerOpcode(r->to_apply());
  if (!op || (*op != Opcode::kMaximum && *op != Opcode::kMinimum &&
              *op != Opcode::kAnd && *op != Opcode::kOr)) {
    return false;
  }
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBinary(ctx.rw, *op, b->operand(0), r->operand(1)));
  return ReplaceWithNew(r, result, ctx);
}

// 155. reduce_add(broadcast(x), init) over dimensions the broadcast added
// -> broadcast(init + x * count).
absl::StatusOr<bool> ReduceAddOfBroadcast(Instruction* r,
                                          AlgebraicContext& ctx) {
  if (!IsPlainReduce(r)) return false;
  Instruction* b = r->operand(0);
  if (!IsOp(b, Opcode::kBroadcast) || b->operand_count() != 1 ||
      !IsArray(b->operand(0))) {
    return false;
  }
  PrimitiveType t = r->shape().element_type();
  if (t == PrimitiveType::kPred || IsComplexType(t)) return false;
  std::optional<Opcode> op = ScalarReducerOpcode(r->to_apply());
  if (!op || *op != Opcode::kAdd) return false;
  Instruction* x = b->operand(0);
  const DimVector& bdims = b->dimensions();
  if (static_cast<int64_t>(bdims.size()) != x->shape().rank()) return false;
  int64_t count = 1;
  for (int64_t d : r->dimensions()) {
    if (Contains(bdims, d)) return false;
    count *= b->shape().dimensions(d);
  }
  // Output position of each broadcast dimension after the reduction.
  std::vector<int64_t> out_dims;
  for (int64_t od : bdims) {
    int64_t pos = od;
    for (int64_t d : r->dimensions()) pos -= d < od ? 1 : 0;
    out_dims.push_back(pos);
  }
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * n,
      MakeScalarConstant(ctx.rw, x->parent(), t, static_cast<double>(count)));
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * nb,
      MakeBroadcast(ctx.rw, n, DimsOf(x), std::vector<int64_t>{}));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * mul,
                           MakeBinary(ctx.rw, Opcode::kMultiply, x, nb));
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * ib,
      MakeBroadcast(ctx.rw, r->operand(1), DimsOf(x), std::vector<int64_t>{}));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * sum,
                           MakeBinary(ctx.rw, Opcode::kAdd, ib, mul));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBroadcast(ctx.rw, sum, DimsOf(r), out_dims));
  return ReplaceWithNew(r, result, ctx);
}

// 156. reduce-precision to the type's own widths -> operand.
absl::StatusOr<bool> ReducePrecisionNoOp(Instruction* rp,
                                         AlgebraicContext& ctx) {
  if (!ctx.options.enable_remove_no_op_reduce_precision) return false;
  if (!IsOp(rp, Opcode::kReducePrecision) || rp->operand_count() != 1 ||
      !IsArray(rp)) {
    return false;
  }
  int e = 0, m = 0;
  switch (rp->shape().element_type()) {
    case PrimitiveType::kF32:
      e = 8, m = 23;
      break;
    case PrimitiveType::kF64:
      e = 11, m = 52;
      break;
    default: {
      std::optional<FloatFormat> f =
          SmallFloatFormat(rp->shape().element_type());
      if (!f) return false;
      e = f->exponent_bits;
      m = f->mantissa_bits;
    }
  }
  if (rp->attrs().exponent_bits != e || rp->attrs().mantissa_bits != m) {
    return false;
  }
  return ReplaceWithExisting(rp, rp->operand(0), ctx);
}

// ===========================================================================
// ReduceWindow (157-161).

// A single-output reduce-window whose window (absent for scalars) matches
// the input rank.
bool IsPlainReduceWindow(const Instruction* rw) {
  if (!IsOp(rw, Opcode::kReduceWindow) || rw->operand_count() != 2 ||
      !IsArray(rw) || !IsArray(rw->operand(0)) ||
      !rw->operand(1)->shape().IsScalar() || rw->to_apply() == nullptr) {
    return false;
  }
  const int64_t rank = rw->operand(0)->shape().rank();
  if (!rw->attrs().window.has_value()) return rank == 0;
  return static_cast<int64_t>(rw->attrs().window->dimensions.size()) == rank;
}

// The window of a plain reduce-window (empty for scalars without one).
std::vector<WindowDimension> WindowOf(const Instruction* w) {
  if (!w->attrs().window.has_value()) return {};
  return w->attrs().window->dimensions;
}

// 157. Zero-element input or output -> broadcast(init).
absl::StatusOr<bool> ReduceWindowZeroElement(Instruction* w,
                                             AlgebraicContext& ctx) {
  if (!IsPlainReduceWindow(w)) return false;
  if (w->operand(0)->shape().ElementsIn() != 0 &&
      w->shape().ElementsIn() != 0) {
    return false;
  }
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBroadcast(ctx.rw, w->operand(1), DimsOf(w), std::vector<int64_t>{}));
  return ReplaceWithNew(w, result, ctx);
}

// 158. Scalar input -> input (init assumed identity).
absl::StatusOr<bool> ReduceWindowScalar(Instruction* w, AlgebraicContext& ctx) {
  if (!IsPlainReduceWindow(w) || !w->operand(0)->shape().IsScalar()) {
    return false;
  }
  return ReplaceWithExisting(w, w->operand(0), ctx);
}

// 159. A variadic reduce-window with one input and a tuple-returning
// reducer -> tuple(plain reduce-window).
absl::StatusOr<bool> ReduceWindowUnwrapVariadic(Instruction* w,
                                                AlgebraicContext& ctx) {
  if (!IsOp(w, Opcode::kReduceWindow) || !IsSingleInputVariadic(w)) {
    return false;
  }
  Computation* reducer = UntupledReducer(ctx.rw, w->to_apply());
  if (reducer == nullptr) return false;
  std::vector<Instruction*> ops = {w->operand(0), w->operand(1)};
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * plain,
      CloneWithNewOperands(ctx.rw, w, w->shape().tuple_shapes(0), ops));
  plain->set_called_computations({reducer});  // a new instruction of this rule
  std::vector<Instruction*> elements = {plain};
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeTuple(ctx.rw, w->parent(), elements));
  return ReplaceWithNew(w, result, ctx);
}

// 160. Windows of one element -> op(x, broadcast(init)), padded with init
// where the window was padded.
absl::StatusOr<bool> ReduceWindowTrivial(Instruction* w,
                                         AlgebraicContext& ctx) {
  if (!IsPlainReduceWindow(w)) return false;
  std::optional<Opcode> op = ScalarReducerOpcode(w->to_apply());
  if (!op || (*op != Opcode::kAdd && *op != Opcode::kMinimum &&
              *op != Opcode::kMaximum)) {
    return false;
  }
  PaddingConfig padding;
  bool padded = false;
  for (const WindowDimension& d : WindowOf(w)) {
    if (d.size != 1 || d.stride != 1 || d.window_dilation != 1 ||
        d.base_dilation != 1 || d.window_reversal || d.padding_low < 0 ||
        d.padding_high < 0) {
      return false;
    }
    padding.push_back({d.padding_low, d.padding_high, 0});
    padded |= d.padding_low != 0 || d.padding_high != 0;
  }
  Instruction* x = w->operand(0);
  Instruction* init = w->operand(1);
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * ib,
      MakeBroadcast(ctx.rw, init, DimsOf(x), std::vector<int64_t>{}));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBinary(ctx.rw, *op, x, ib));
  if (padded) {
    PART3_ASSIGN_OR_NO_MATCH(result, MakePad(ctx.rw, result, init, padding));
  }
  return ReplaceWithNew(w, result, ctx);
}

// 161. Unstrided, unpadded windows that are 1 or the whole dimension ->
// reshape(reduce).
absl::StatusOr<bool> ReduceWindowToReduce(Instruction* w,
                                          AlgebraicContext& ctx) {
  if (!ctx.options.enable_window_reduce_to_reduce_replacement ||
      !IsPlainReduceWindow(w)) {
    return false;
  }
  Instruction* x = w->operand(0);
  std::vector<int64_t> dims;
  const std::vector<WindowDimension> wd = WindowOf(w);
  for (size_t i = 0; i < wd.size(); ++i) {
    const WindowDimension& d = wd[i];
    if (d.stride != 1 || d.window_dilation != 1 || d.base_dilation != 1 ||
        d.padding_low != 0 || d.padding_high != 0 || d.window_reversal) {
      return false;
    }
    if (d.size == x->shape().dimensions(i) && d.size > 1) {
      dims.push_back(static_cast<int64_t>(i));
    } else if (d.size != 1) {
      return false;
    }
  }
  if (dims.empty()) return false;
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * red,
      MakeReduce(ctx.rw, x, w->operand(1), dims, w->to_apply()));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReshape(ctx.rw, red, DimsOf(w)));
  return ReplaceWithNew(w, result, ctx);
}

// Merges a pad of the operand into one window dimension (reduce-window,
// convolution): edge padding adds to the window padding, interior padding
// becomes base dilation. False where they cannot combine.
bool FoldPadIntoWindow(const PaddingDimension& p, WindowDimension* d) {
  if (p.low < 0 || p.high < 0 || p.interior < 0) return false;
  // Padding applied before a base dilation is not window padding.
  if (d->base_dilation != 1) return false;
  if (p.interior != 0) {
    if (d->padding_low != 0 || d->padding_high != 0) return false;
    d->base_dilation = p.interior + 1;
  }
  d->padding_low += p.low;
  d->padding_high += p.high;
  return true;
}

// 162. reduce-window(pad(x, v), init) with v equal to init -> the padding
// moves into the window (interior padding as base dilation).
absl::StatusOr<bool> ReduceWindowFoldPad(Instruction* w,
                                         AlgebraicContext& ctx) {
  if (!IsPlainReduceWindow(w) || !w->attrs().window.has_value()) return false;
  Instruction* pad = w->operand(0);
  if (!IsOp(pad, Opcode::kPad) || pad->operand_count() != 2 ||
      !IsArray(pad->operand(0)) || !pad->attrs().has_padding ||
      static_cast<int64_t>(pad->attrs().padding.size()) !=
          pad->operand(0)->shape().rank()) {
    return false;
  }
  if (!SameInit(pad->operand(1), w->operand(1))) return false;
  const PaddingConfig& pc = pad->attrs().padding;
  Window window = *w->attrs().window;
  for (size_t i = 0; i < pc.size(); ++i) {
    if (!FoldPadIntoWindow(pc[i], &window.dimensions[i])) return false;
  }
  std::vector<Instruction*> ops = {pad->operand(0), w->operand(1)};
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           CloneWithNewOperands(ctx.rw, w, w->shape(), ops));
  result->mutable_attrs()->window = window;  // a new instruction of this rule
  return ReplaceWithNew(w, result, ctx);
}

// ===========================================================================
// Remainder (164-166).

absl::StatusOr<bool> RemainderOfRemainder(Instruction* rem,
                                          AlgebraicContext& ctx) {
  if (!IsBinary(rem, Opcode::kRemainder)) return false;
  Instruction* inner = rem->operand(0);
  if (!IsBinary(inner, Opcode::kRemainder) ||
      inner->operand(1) != rem->operand(1)) {
    return false;
  }
  return ReplaceWithExisting(rem, inner, ctx);
}

// 165. Integer A % 2^k -> masks (signed: sign of A kept, as remainder).
absl::StatusOr<bool> RemainderPowerOfTwo(Instruction* rem,
                                         AlgebraicContext& ctx) {
  if (!IsBinary(rem, Opcode::kRemainder)) return false;
  Instruction* a = rem->operand(0);
  Instruction* c = rem->operand(1);
  PrimitiveType t = rem->shape().element_type();
  if (!IsIntegralType(t)) return false;
  const Instruction* k = ScalarConstantOf(c);
  if (k == nullptr || !k->has_literal() || k->literal().is_unknown() ||
      k->literal().element_count() != 1) {
    return false;
  }
  uint64_t v = IsSignedIntegralType(t)
                   ? static_cast<uint64_t>(k->literal().GetAsInt64(0))
                   : k->literal().GetAsUint64(0);
  if (IsSignedIntegralType(t) && k->literal().GetAsInt64(0) <= 0) return false;
  if (v == 0 || (v & (v - 1)) != 0) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * one, MakeFilledLike(ctx.rw, c, 1));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * mask,
                           MakeBinary(ctx.rw, Opcode::kSubtract, c, one));
  if (IsUnsignedIntegralType(t)) {
    PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                             MakeBinary(ctx.rw, Opcode::kAnd, a, mask));
    return ReplaceWithNew(rem, result, ctx);
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * zero, MakeFilledLike(ctx.rw, a, 0));
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * neg,
      MakeCompare(ctx.rw, ComparisonDirection::kLt, a, zero));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * abs,
                           MakeUnary(ctx.rw, Opcode::kAbs, a));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * masked,
                           MakeBinary(ctx.rw, Opcode::kAnd, abs, mask));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * negated,
                           MakeUnary(ctx.rw, Opcode::kNegate, masked));
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeTernary(ctx.rw, Opcode::kSelect, neg, negated, masked));
  return ReplaceWithNew(rem, result, ctx);
}

// 166. iota % broadcast(N) with N >= the iota extent -> iota.
absl::StatusOr<bool> RemainderOfIota(Instruction* rem, AlgebraicContext& ctx) {
  if (!IsBinary(rem, Opcode::kRemainder)) return false;
  Instruction* iota = rem->operand(0);
  if (!IsOp(iota, Opcode::kIota) ||
      !IsIntegralType(rem->shape().element_type())) {
    return false;
  }
  const int64_t dim = iota->iota_dimension();
  if (dim < 0 || dim >= iota->shape().rank()) return false;
  std::optional<double> n = ScalarConstantValue(rem->operand(1));
  if (!n || *n < static_cast<double>(iota->shape().dimensions(dim))) {
    return false;
  }
  return ReplaceWithExisting(rem, iota, ctx);
}

// ===========================================================================
// Reshape (167-173).

absl::StatusOr<bool> ReshapeZeroElement(Instruction* r, AlgebraicContext& ctx) {
  if (!IsOp(r, Opcode::kReshape) || !IsArray(r) ||
      r->shape().ElementsIn() != 0) {
    return false;
  }
  Shape shape = r->shape();
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeConstant(ctx.rw, r->parent(), Literal(shape)));
  return ReplaceWithNew(r, result, ctx);
}

absl::StatusOr<bool> ReshapeNoOp(Instruction* r, AlgebraicContext& ctx) {
  if (!IsOp(r, Opcode::kReshape) || r->operand_count() != 1 || !IsArray(r)) {
    return false;
  }
  return ReplaceWithExisting(r, r->operand(0), ctx);
}

absl::StatusOr<bool> ReshapeOfReshape(Instruction* r, AlgebraicContext& ctx) {
  if (!IsOp(r, Opcode::kReshape) || r->operand_count() != 1 || !IsArray(r)) {
    return false;
  }
  Instruction* inner = r->operand(0);
  if (!IsOp(inner, Opcode::kReshape) || inner->operand_count() != 1 ||
      !IsArray(inner->operand(0))) {
    return false;
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReshape(ctx.rw, inner->operand(0), DimsOf(r)));
  return ReplaceWithNew(r, result, ctx);
}

// 169. reshape/transpose of a single-use rng -> rng of the new shape (the
// values are random either way).
absl::StatusOr<bool> ReshapeOrTransposeOfRng(Instruction* r,
                                             AlgebraicContext& ctx) {
  if ((!IsOp(r, Opcode::kReshape) && !IsOp(r, Opcode::kTranspose)) ||
      r->operand_count() != 1 || !IsArray(r)) {
    return false;
  }
  // rng has side effects: an alternative left unchosen would stay in the
  // graph as a dead rng, so the rewrite is offered in apply mode only.
  if (ctx.rw.dry()) return false;
  Instruction* rng = r->operand(0);
  if (!IsOp(rng, Opcode::kRng) || !HasSingleUser(rng) || !IsArray(rng)) {
    return false;
  }
  for (const Instruction* op : rng->operands()) {
    if (!op->shape().IsScalar()) return false;
  }
  std::vector<Instruction*> ops(rng->operands().begin(), rng->operands().end());
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           CloneWithNewOperands(ctx.rw, rng, r->shape(), ops));
  HLOGYM_ASSIGN_OR_RETURN(bool replaced, ReplaceWithNew(r, result, ctx));
  if (!replaced) return false;
  // The old rng is dead now but has side effects, so it is not removed with
  // the reshape: one rng replaces the other.
  if (rng->user_count() == 0 && !rng->IsRoot()) {
    HLOGYM_RETURN_IF_ERROR(ctx.rw.RemoveInstruction(rng));
  }
  return true;
}

// 170. A chain of reshapes back to the original dimensions -> operand.
absl::StatusOr<bool> ReshapeChainIdentity(Instruction* r,
                                          AlgebraicContext& ctx) {
  if (!IsOp(r, Opcode::kReshape) || r->operand_count() != 1 || !IsArray(r)) {
    return false;
  }
  Instruction* x = r->operand(0);
  while (IsOp(x, Opcode::kReshape) && x->operand_count() == 1 &&
         IsArray(x->operand(0))) {
    x = x->operand(0);
    if (x->shape().Compatible(r->shape())) {
      return ReplaceWithExisting(r, x, ctx);
    }
  }
  return false;
}

// 172. reshape(broadcast(x)) -> broadcast(x) when x's dimensions are
// untouched by the reshape.
absl::StatusOr<bool> ReshapeOfBroadcast(Instruction* r, AlgebraicContext& ctx) {
  if (!IsOp(r, Opcode::kReshape) || r->operand_count() != 1 || !IsArray(r)) {
    return false;
  }
  Instruction* b = r->operand(0);
  if (!IsOp(b, Opcode::kBroadcast) || b->operand_count() != 1 ||
      !IsArray(b->operand(0))) {
    return false;
  }
  Instruction* x = b->operand(0);
  if (static_cast<int64_t>(b->dimensions().size()) != x->shape().rank()) {
    return false;
  }
  std::vector<int64_t> map =
      UnmodifiedReshapeDims(b->shape().dimensions(), r->shape().dimensions());
  std::vector<int64_t> new_dims;
  for (int64_t bd : b->dimensions()) {
    auto it = std::find(map.begin(), map.end(), bd);
    if (it == map.end()) return false;
    new_dims.push_back(it - map.begin());
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBroadcast(ctx.rw, x, DimsOf(r), new_dims));
  return ReplaceWithNew(r, result, ctx);
}

// 173. reshape(iota) whose iota dimension is untouched -> iota.
absl::StatusOr<bool> ReshapeOfIota(Instruction* r, AlgebraicContext& ctx) {
  if (!IsOp(r, Opcode::kReshape) || r->operand_count() != 1 || !IsArray(r)) {
    return false;
  }
  Instruction* iota = r->operand(0);
  if (!IsOp(iota, Opcode::kIota) || !IsArray(iota)) return false;
  std::vector<int64_t> map = UnmodifiedReshapeDims(iota->shape().dimensions(),
                                                   r->shape().dimensions());
  auto it = std::find(map.begin(), map.end(), iota->iota_dimension());
  if (it == map.end()) return false;
  Shape shape = r->shape();
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeIota(ctx.rw, r->parent(), shape, it - map.begin()));
  return ReplaceWithNew(r, result, ctx);
}

// 174. (LI) reshape(dus) that only inserts or deletes 1-sized dimensions ->
// dus(reshape(operand), reshape(update), indices with zeros for new dims).
// Size-1 dimensions take index 0 whatever the given index (clamping).
absl::StatusOr<bool> ReshapeOfDynamicUpdateSlice(Instruction* r,
                                                 AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !IsOp(r, Opcode::kReshape) ||
      r->operand_count() != 1 || !IsArray(r)) {
    return false;
  }
  Instruction* dus = r->operand(0);
  if (!IsOp(dus, Opcode::kDynamicUpdateSlice) || !HasSingleUser(dus) ||
      !IsArray(dus) || dus->operand_count() != dus->shape().rank() + 2) {
    return false;
  }
  Instruction* operand = dus->operand(0);
  Instruction* update = dus->operand(1);
  if (!IsArray(operand) || !IsArray(update) ||
      update->shape().rank() != operand->shape().rank()) {
    return false;
  }
  const DimVector& in = operand->shape().dimensions();
  const DimVector& out = r->shape().dimensions();
  std::vector<int64_t> non_one_in;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != 1) non_one_in.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> out_to_in(out.size(), -1);
  size_t next = 0;
  for (size_t j = 0; j < out.size(); ++j) {
    if (out[j] == 1) continue;
    if (next >= non_one_in.size() || in[non_one_in[next]] != out[j]) {
      return false;
    }
    out_to_in[j] = non_one_in[next++];
  }
  if (next != non_one_in.size()) return false;
  // The index type, and a zero of it for the new dimensions.
  PrimitiveType index_type = PrimitiveType::kS32;
  if (dus->operand_count() > 2) {
    index_type = dus->operand(2)->shape().element_type();
  }
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * zero,
      MakeScalarConstant(ctx.rw, r->parent(), index_type, 0));
  std::vector<int64_t> update_dims;
  std::vector<Instruction*> indices;
  for (size_t j = 0; j < out.size(); ++j) {
    if (out_to_in[j] < 0) {
      update_dims.push_back(1);
      indices.push_back(zero);
    } else {
      update_dims.push_back(update->shape().dimensions(out_to_in[j]));
      indices.push_back(dus->operand(2 + out_to_in[j]));
    }
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * new_operand,
                           MakeReshape(ctx.rw, operand, DimsOf(r)));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * new_update,
                           MakeReshape(ctx.rw, update, update_dims));
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeDynamicUpdateSlice(ctx.rw, new_operand, new_update, indices));
  return ReplaceWithNew(r, result, ctx);
}

// 175. (LS) a reshape whose operand and result are both laid out in
// logical order (size-1 dimensions aside) moves no data -> bitcast.
absl::StatusOr<bool> ReshapeToBitcast(Instruction* r, AlgebraicContext& ctx) {
  if (!LayoutSensitive(ctx) || !IsOp(r, Opcode::kReshape) ||
      r->operand_count() != 1 || !IsArray(r->operand(0))) {
    return false;
  }
  const Shape& in = r->operand(0)->shape();
  const Shape& out = r->shape();
  if (!PlainLayout(in) || !PlainLayout(out) ||
      in.element_type() != out.element_type()) {
    return false;
  }
  for (const Shape* sh : {&in, &out}) {
    std::vector<int64_t> phys = PhysicalNonDegenerateDims(*sh);
    if (!std::is_sorted(phys.begin(), phys.end())) return false;
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBitcast(ctx.rw, r->operand(0), out));
  return ReplaceWithNew(r, result, ctx);
}

// ===========================================================================
// Reverse (176-179).

bool IsPlainReverse(const Instruction* r) {
  return IsOp(r, Opcode::kReverse) && r->operand_count() == 1 && IsArray(r) &&
         ValidDims(r->dimensions(), r->shape().rank());
}

absl::StatusOr<bool> ReverseDegenerate(Instruction* r, AlgebraicContext& ctx) {
  if (!IsPlainReverse(r)) return false;
  for (int64_t d : r->dimensions()) {
    if (r->shape().dimensions(d) != 1) return false;
  }
  return ReplaceWithExisting(r, r->operand(0), ctx);
}

absl::StatusOr<bool> ReverseOfReverse(Instruction* r, AlgebraicContext& ctx) {
  if (!IsPlainReverse(r) || LayoutSensitive(ctx)) return false;
  Instruction* inner = r->operand(0);
  if (!IsPlainReverse(inner)) return false;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < r->shape().rank(); ++d) {
    if (Contains(r->dimensions(), d) != Contains(inner->dimensions(), d)) {
      dims.push_back(d);
    }
  }
  if (dims.empty()) return ReplaceWithExisting(r, inner->operand(0), ctx);
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReverse(ctx.rw, inner->operand(0), dims));
  return ReplaceWithNew(r, result, ctx);
}

// 178. reverse(binop(broadcast(scalar), x)) -> binop(broadcast, reverse(x)).
absl::StatusOr<bool> ReverseOfBinaryWithBroadcast(Instruction* r,
                                                  AlgebraicContext& ctx) {
  if (!IsPlainReverse(r)) return false;
  Instruction* op = r->operand(0);
  if (op->operand_count() != 2 || !IsBinaryElementwise(op->opcode()) ||
      IsOp(op, Opcode::kCompare) || IsOp(op, Opcode::kRng)) {
    return false;
  }
  std::vector<int64_t> dims(r->dimensions().begin(), r->dimensions().end());
  for (int i = 0; i < 2; ++i) {
    Instruction* b = op->operand(i);
    Instruction* x = op->operand(1 - i);
    if (!IsOp(b, Opcode::kBroadcast) || b->operand_count() != 1 ||
        !b->operand(0)->shape().IsScalar() || !IsArray(x)) {
      continue;
    }
    PART3_ASSIGN_OR_NO_MATCH(Instruction * rx, MakeReverse(ctx.rw, x, dims));
    PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                             i == 0 ? MakeBinary(ctx.rw, op->opcode(), b, rx)
                                    : MakeBinary(ctx.rw, op->opcode(), rx, b));
    return ReplaceWithNew(r, result, ctx);
  }
  return false;
}

// 179. reverse(reshape inserting 1-dims) -> reshape(reverse(x)).
absl::StatusOr<bool> ReverseOfReshape(Instruction* r, AlgebraicContext& ctx) {
  if (!IsPlainReverse(r)) return false;
  Instruction* reshape = r->operand(0);
  if (!IsOp(reshape, Opcode::kReshape) || reshape->operand_count() != 1 ||
      !IsArray(reshape->operand(0))) {
    return false;
  }
  Instruction* x = reshape->operand(0);
  std::optional<std::vector<int64_t>> map =
      InsertedOnesMap(x->shape().dimensions(), reshape->shape().dimensions());
  if (!map) return false;
  std::vector<int64_t> dims;
  for (int64_t d : r->dimensions()) {
    if ((*map)[d] >= 0) dims.push_back((*map)[d]);
  }
  std::sort(dims.begin(), dims.end());
  Instruction* rev = x;
  if (!dims.empty()) {
    PART3_ASSIGN_OR_NO_MATCH(rev, MakeReverse(ctx.rw, x, dims));
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReshape(ctx.rw, rev, DimsOf(r)));
  return ReplaceWithNew(r, result, ctx);
}

// ===========================================================================
// Select (180-183).

bool IsPlainSelect(const Instruction* s) {
  return IsOp(s, Opcode::kSelect) && s->operand_count() == 3 && IsArray(s) &&
         IsArray(s->operand(0)) && IsArray(s->operand(1)) &&
         IsArray(s->operand(2));
}

absl::StatusOr<bool> SelectSameBranches(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSelect(s) || s->operand(1) != s->operand(2)) return false;
  return ReplaceWithExisting(s, s->operand(1), ctx);
}

absl::StatusOr<bool> SelectTrue(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSelect(s) || !IsAll(s->operand(0), 1)) return false;
  return ReplaceWithExisting(s, s->operand(1), ctx);
}

absl::StatusOr<bool> SelectFalse(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSelect(s) || !IsAll(s->operand(0), 0)) return false;
  return ReplaceWithExisting(s, s->operand(2), ctx);
}

absl::StatusOr<bool> SelectNotPredicate(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSelect(s)) return false;
  Instruction* n = s->operand(0);
  if (!IsOp(n, Opcode::kNot) || n->operand_count() != 1) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeTernary(ctx.rw, Opcode::kSelect, n->operand(0),
                                       s->operand(2), s->operand(1)));
  return ReplaceWithNew(s, result, ctx);
}

bool IsPredSelect(const Instruction* s) {
  return IsPlainSelect(s) &&
         s->shape().element_type() == PrimitiveType::kPred &&
         s->operand(0)->shape().SameDimensions(s->shape());
}

absl::StatusOr<bool> SelectPredTrueFalse(Instruction* s,
                                         AlgebraicContext& ctx) {
  if (!IsPredSelect(s) || !IsAll(s->operand(1), 1) ||
      !IsAll(s->operand(2), 0)) {
    return false;
  }
  return ReplaceWithExisting(s, s->operand(0), ctx);
}

absl::StatusOr<bool> SelectPredFalseTrue(Instruction* s,
                                         AlgebraicContext& ctx) {
  if (!IsPredSelect(s) || !IsAll(s->operand(1), 0) ||
      !IsAll(s->operand(2), 1)) {
    return false;
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeUnary(ctx.rw, Opcode::kNot, s->operand(0)));
  return ReplaceWithNew(s, result, ctx);
}

// 183. pred select(cmp(a, b), a, b) -> or/and/b/a.
absl::StatusOr<bool> SelectPredCompare(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPredSelect(s)) return false;
  Instruction* cmp = s->operand(0);
  Instruction* a = s->operand(1);
  Instruction* b = s->operand(2);
  if (!IsOp(cmp, Opcode::kCompare) || cmp->operand_count() != 2 ||
      cmp->operand(0) != a || cmp->operand(1) != b) {
    return false;
  }
  Opcode op;
  switch (cmp->comparison_direction()) {
    case ComparisonDirection::kGt:
    case ComparisonDirection::kGe:
      op = Opcode::kOr;
      break;
    case ComparisonDirection::kLt:
    case ComparisonDirection::kLe:
      op = Opcode::kAnd;
      break;
    case ComparisonDirection::kEq:
      return ReplaceWithExisting(s, b, ctx);
    case ComparisonDirection::kNe:
      return ReplaceWithExisting(s, a, ctx);
    default:
      return false;
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result, MakeBinary(ctx.rw, op, a, b));
  return ReplaceWithNew(s, result, ctx);
}

// ===========================================================================
// Slice (185-194).

bool IsPlainSlice(const Instruction* s) {
  if (!IsOp(s, Opcode::kSlice) || s->operand_count() != 1 || !IsArray(s) ||
      !IsArray(s->operand(0))) {
    return false;
  }
  const auto& sl = s->attrs().slice;
  const Shape& in = s->operand(0)->shape();
  if (static_cast<int64_t>(sl.size()) != in.rank()) return false;
  for (size_t i = 0; i < sl.size(); ++i) {
    if (sl[i].start < 0 || sl[i].limit < sl[i].start ||
        sl[i].limit > in.dimensions(i) || sl[i].stride < 1) {
      return false;
    }
  }
  return true;
}

bool Unstrided(const Instruction* s) {
  for (const SliceDimension& d : s->attrs().slice) {
    if (d.stride != 1) return false;
  }
  return true;
}

struct SliceParams {
  std::vector<int64_t> starts, limits, strides;
};

SliceParams ParamsOf(const Instruction* s) {
  SliceParams p;
  for (const SliceDimension& d : s->attrs().slice) {
    p.starts.push_back(d.start);
    p.limits.push_back(d.limit);
    p.strides.push_back(d.stride);
  }
  return p;
}

absl::StatusOr<bool> SliceFull(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSlice(s) || !Unstrided(s)) return false;
  const auto& sl = s->attrs().slice;
  for (size_t i = 0; i < sl.size(); ++i) {
    if (sl[i].start != 0 ||
        sl[i].limit != s->operand(0)->shape().dimensions(i)) {
      return false;
    }
  }
  return ReplaceWithExisting(s, s->operand(0), ctx);
}

// 186. slice(pad): within the padding -> broadcast(pad value); exactly the
// operand -> operand; within the operand (no interior padding) -> slice.
absl::StatusOr<bool> SliceOfPad(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSlice(s)) return false;
  Instruction* pad = s->operand(0);
  if (!IsOp(pad, Opcode::kPad) || pad->operand_count() != 2 ||
      !IsArray(pad->operand(0)) || !pad->attrs().has_padding) {
    return false;
  }
  Instruction* x = pad->operand(0);
  const PaddingConfig& pc = pad->attrs().padding;
  const auto& sl = s->attrs().slice;
  if (static_cast<int64_t>(pc.size()) != x->shape().rank()) return false;
  bool in_padding = false, inside = true, exact = true;
  for (size_t i = 0; i < pc.size(); ++i) {
    if (pc[i].low < 0 || pc[i].high < 0 || pc[i].interior < 0) return false;
    const int64_t n = x->shape().dimensions(i);
    const int64_t extent = n == 0 ? 0 : (n - 1) * (pc[i].interior + 1) + 1;
    const int64_t lo = pc[i].low, hi = pc[i].low + extent;
    if (sl[i].limit <= lo || sl[i].start >= hi) in_padding = true;
    if (sl[i].start < lo || sl[i].limit > hi || pc[i].interior != 0) {
      inside = false;
    }
    if (sl[i].start != lo || sl[i].limit != hi || sl[i].stride != 1 ||
        pc[i].interior != 0) {
      exact = false;
    }
  }
  if (in_padding) {
    PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                             MakeBroadcast(ctx.rw, pad->operand(1), DimsOf(s),
                                           std::vector<int64_t>{}));
    return ReplaceWithNew(s, result, ctx);
  }
  if (exact) return ReplaceWithExisting(s, x, ctx);
  if (!inside) return false;
  SliceParams p = ParamsOf(s);
  for (size_t i = 0; i < pc.size(); ++i) {
    p.starts[i] -= pc[i].low;
    p.limits[i] -= pc[i].low;
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeSlice(ctx.rw, x, p.starts, p.limits, p.strides));
  return ReplaceWithNew(s, result, ctx);
}

absl::StatusOr<bool> SliceOfSlice(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSlice(s) || !Unstrided(s)) return false;
  Instruction* inner = s->operand(0);
  if (!IsPlainSlice(inner) || !Unstrided(inner)) return false;
  SliceParams p = ParamsOf(s);
  const auto& isl = inner->attrs().slice;
  for (size_t i = 0; i < isl.size(); ++i) {
    p.starts[i] += isl[i].start;
    p.limits[i] += isl[i].start;
  }
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeSlice(ctx.rw, inner->operand(0), p.starts, p.limits, p.strides));
  return ReplaceWithNew(s, result, ctx);
}

// 188. slice(broadcast(x)) -> broadcast(slice(x)).
absl::StatusOr<bool> SliceOfBroadcast(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSlice(s)) return false;
  Instruction* b = s->operand(0);
  if (!IsOp(b, Opcode::kBroadcast) || b->operand_count() != 1 ||
      !IsArray(b->operand(0))) {
    return false;
  }
  Instruction* x = b->operand(0);
  const DimVector& bd = b->dimensions();
  if (static_cast<int64_t>(bd.size()) != x->shape().rank() ||
      !ValidDims(bd, b->shape().rank())) {
    return false;
  }
  const auto& sl = s->attrs().slice;
  SliceParams p;
  bool sliced = false;
  for (size_t k = 0; k < bd.size(); ++k) {
    const SliceDimension& d = sl[bd[k]];
    if (b->shape().dimensions(bd[k]) != x->shape().dimensions(k)) return false;
    p.starts.push_back(d.start);
    p.limits.push_back(d.limit);
    p.strides.push_back(d.stride);
    sliced |=
        d.start != 0 || d.limit != x->shape().dimensions(k) || d.stride != 1;
  }
  Instruction* src = x;
  if (sliced) {
    PART3_ASSIGN_OR_NO_MATCH(
        src, MakeSlice(ctx.rw, x, p.starts, p.limits, p.strides));
  }
  std::vector<int64_t> dims(bd.begin(), bd.end());
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBroadcast(ctx.rw, src, DimsOf(s), dims));
  return ReplaceWithNew(s, result, ctx);
}

// 189. Unstrided slice(concat) -> slice of the covered operands only.
absl::StatusOr<bool> SliceOfConcat(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSlice(s) || !Unstrided(s)) return false;
  Instruction* concat = s->operand(0);
  if (!IsOp(concat, Opcode::kConcatenate) || concat->operand_count() < 1 ||
      concat->dimensions().size() != 1) {
    return false;
  }
  const int64_t cd = concat->dimensions(0);
  if (cd < 0 || cd >= concat->shape().rank()) return false;
  const auto& sl = s->attrs().slice;
  const int64_t start = sl[cd].start, limit = sl[cd].limit;
  if (limit <= start) return false;
  int64_t offset = 0;
  int first = -1, last = -1;
  int64_t first_offset = 0;
  for (int64_t i = 0; i < concat->operand_count(); ++i) {
    if (!IsArray(concat->operand(i))) return false;
    const int64_t size = concat->operand(i)->shape().dimensions(cd);
    if (first < 0 && start < offset + size) {
      first = static_cast<int>(i);
      first_offset = offset;
    }
    if (limit > offset) last = static_cast<int>(i);
    offset += size;
  }
  if (first < 0 || last < first) return false;
  if (first == 0 && last == concat->operand_count() - 1) return false;
  SliceParams p = ParamsOf(s);
  p.starts[cd] -= first_offset;
  p.limits[cd] -= first_offset;
  Instruction* src;
  if (first == last) {
    src = concat->operand(first);
  } else {
    std::vector<Instruction*> ops(concat->operands().begin() + first,
                                  concat->operands().begin() + last + 1);
    PART3_ASSIGN_OR_NO_MATCH(src, MakeConcatenate(ctx.rw, ops, cd));
  }
  bool full = true;
  for (int64_t i = 0; i < src->shape().rank(); ++i) {
    full &= p.starts[i] == 0 && p.limits[i] == src->shape().dimensions(i);
  }
  if (full) return ReplaceWithNew(s, src, ctx);
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeSlice(ctx.rw, src, p.starts, p.limits, p.strides));
  return ReplaceWithNew(s, result, ctx);
}

// 192. (LI) unstrided slice of a reshape keeping a prefix of dimension 0
// -> reshape(slice(x)) when that prefix is a prefix of x's dimension 0.
absl::StatusOr<bool> SliceOfReshape(Instruction* s, AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !IsPlainSlice(s) || !Unstrided(s)) return false;
  Instruction* reshape = s->operand(0);
  if (!IsOp(reshape, Opcode::kReshape) || reshape->operand_count() != 1 ||
      !IsArray(reshape->operand(0))) {
    return false;
  }
  Instruction* x = reshape->operand(0);
  const Shape& rs = reshape->shape();
  const auto& sl = s->attrs().slice;
  if (rs.rank() < 1 || x->shape().rank() < 1) return false;
  for (int64_t i = 0; i < rs.rank(); ++i) {
    if (sl[i].start != 0) return false;
    if (i > 0 && sl[i].limit != rs.dimensions(i)) return false;
  }
  if (sl[0].limit == rs.dimensions(0)) return false;
  const int64_t elements = s->shape().ElementsIn();
  int64_t x_row = 1;
  for (int64_t i = 1; i < x->shape().rank(); ++i) {
    x_row *= x->shape().dimensions(i);
  }
  if (x_row == 0 || elements % x_row != 0) return false;
  std::vector<int64_t> starts(x->shape().rank(), 0);
  std::vector<int64_t> limits = DimsOf(x);
  std::vector<int64_t> strides(x->shape().rank(), 1);
  limits[0] = elements / x_row;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * sliced,
                           MakeSlice(ctx.rw, x, starts, limits, strides));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReshape(ctx.rw, sliced, DimsOf(s)));
  return ReplaceWithNew(s, result, ctx);
}

// 190. (LI, opt) slice(dot(a, b)) -> dot(slice(a), slice(b)): slicing the
// operands first saves the products of the dropped outputs; only when the
// output shrinks by more than the threshold and both operands have free
// dimensions.
absl::StatusOr<bool> SliceOfDot(Instruction* s, AlgebraicContext& ctx) {
  if (LayoutSensitive(ctx) || !ctx.options.raise_slice_and_reduce_through_dot ||
      !IsPlainSlice(s)) {
    return false;
  }
  Instruction* dot = s->operand(0);
  if (!IsOp(dot, Opcode::kDot) || dot->operand_count() != 2 ||
      !dot->attrs().dot_dnums.has_value() || !IsArray(dot->operand(0)) ||
      !IsArray(dot->operand(1))) {
    return false;
  }
  const DotDimensionNumbers& dn = *dot->attrs().dot_dnums;
  Instruction* a = dot->operand(0);
  Instruction* b = dot->operand(1);
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size()) {
    return false;
  }
  auto free_dims = [](const Instruction* x, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& contracting) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < x->shape().rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) ==
              contracting.end()) {
        dims.push_back(d);
      }
    }
    return dims;
  };
  std::vector<int64_t> a_free =
      free_dims(a, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  std::vector<int64_t> b_free =
      free_dims(b, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  if (a_free.empty() || b_free.empty()) return false;
  const size_t nb = dn.lhs_batch_dimensions.size();
  if (static_cast<int64_t>(nb + a_free.size() + b_free.size()) !=
      dot->shape().rank()) {
    return false;
  }
  const double ratio = static_cast<double>(dot->shape().ElementsIn()) /
                       std::max<int64_t>(s->shape().ElementsIn(), 1);
  if (ratio <= ctx.options.raise_slice_and_reduce_through_dot_threshold) {
    return false;
  }
  SliceParams pa{std::vector<int64_t>(a->shape().rank(), 0), DimsOf(a),
                 std::vector<int64_t>(a->shape().rank(), 1)};
  SliceParams pb{std::vector<int64_t>(b->shape().rank(), 0), DimsOf(b),
                 std::vector<int64_t>(b->shape().rank(), 1)};
  const auto& sl = s->attrs().slice;
  auto set = [&](SliceParams& p, int64_t d, const SliceDimension& x) {
    p.starts[d] = x.start;
    p.limits[d] = x.limit;
    p.strides[d] = x.stride;
  };
  int64_t out = 0;
  for (size_t i = 0; i < nb; ++i, ++out) {
    set(pa, dn.lhs_batch_dimensions[i], sl[out]);
    set(pb, dn.rhs_batch_dimensions[i], sl[out]);
  }
  for (int64_t d : a_free) set(pa, d, sl[out++]);
  for (int64_t d : b_free) set(pb, d, sl[out++]);
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * sa, MakeSlice(ctx.rw, a, pa.starts, pa.limits, pa.strides));
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * sb, MakeSlice(ctx.rw, b, pb.starts, pb.limits, pb.strides));
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeDot(ctx.rw, sa, sb, dn, s->shape().element_type(),
              dot->attrs().operand_precision));
  return ReplaceWithNew(s, result, ctx);
}

// 191. The last element of a reduce-window whose windows are 1 or the
// whole dimension, low-padded by size - 1 (a running reduction), is the
// reduction of the whole dimension -> reshape(reduce(x)).
absl::StatusOr<bool> SliceOfReduceWindowToReduce(Instruction* s,
                                                 AlgebraicContext& ctx) {
  if (!ctx.options.enable_window_reduce_to_reduce_replacement ||
      !IsPlainSlice(s)) {
    return false;
  }
  Instruction* w = s->operand(0);
  if (!IsPlainReduceWindow(w) || !w->attrs().window.has_value()) return false;
  Instruction* x = w->operand(0);
  const auto& sl = s->attrs().slice;
  std::vector<int64_t> dims;
  const auto& wd = w->attrs().window->dimensions;
  for (size_t i = 0; i < wd.size(); ++i) {
    const WindowDimension& d = wd[i];
    const int64_t n = x->shape().dimensions(i);
    if (d.stride != 1 || d.window_dilation != 1 || d.base_dilation != 1 ||
        d.window_reversal || d.padding_high != 0) {
      return false;
    }
    const int64_t out = w->shape().dimensions(i);
    if (d.size == 1 && d.padding_low == 0) {
      if (sl[i].start != 0 || sl[i].limit != out || sl[i].stride != 1) {
        return false;
      }
    } else if (d.size == n && n > 1 && d.padding_low == n - 1) {
      if (sl[i].start != out - 1 || sl[i].limit != out) return false;
      dims.push_back(static_cast<int64_t>(i));
    } else {
      return false;
    }
  }
  if (dims.empty()) return false;
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * red,
      MakeReduce(ctx.rw, x, w->operand(1), dims, w->to_apply()));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReshape(ctx.rw, red, DimsOf(s)));
  return ReplaceWithNew(s, result, ctx);
}

// 193. slice(reverse(x)) -> reverse(slice(x)).
absl::StatusOr<bool> SliceOfReverse(Instruction* s, AlgebraicContext& ctx) {
  if (!IsPlainSlice(s)) return false;
  Instruction* rev = s->operand(0);
  if (!IsPlainReverse(rev) || !IsArray(rev->operand(0))) return false;
  Instruction* x = rev->operand(0);
  SliceParams p = ParamsOf(s);
  for (int64_t d : rev->dimensions()) {
    const int64_t n = x->shape().dimensions(d);
    const int64_t count = s->shape().dimensions(d);
    if (count == 0) return false;
    const int64_t last = p.starts[d] + p.strides[d] * (count - 1);
    const int64_t new_start = n - 1 - last;
    const int64_t new_limit = n - p.starts[d];
    p.starts[d] = new_start;
    p.limits[d] = new_limit;
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * sliced,
                           MakeSlice(ctx.rw, x, p.starts, p.limits, p.strides));
  std::vector<int64_t> dims(rev->dimensions().begin(), rev->dimensions().end());
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReverse(ctx.rw, sliced, dims));
  return ReplaceWithNew(s, result, ctx);
}

// 194. A stride that yields one element -> stride 1, limit = start + 1.
absl::StatusOr<bool> SliceSingleElementStride(Instruction* s,
                                              AlgebraicContext& ctx) {
  if (!IsPlainSlice(s)) return false;
  SliceParams p = ParamsOf(s);
  bool changed = false;
  for (size_t i = 0; i < p.strides.size(); ++i) {
    if (p.strides[i] != 1 && s->shape().dimensions(i) == 1) {
      p.strides[i] = 1;
      p.limits[i] = p.starts[i] + 1;
      changed = true;
    }
  }
  if (!changed) return false;
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeSlice(ctx.rw, s->operand(0), p.starts, p.limits, p.strides));
  return ReplaceWithNew(s, result, ctx);
}

// ===========================================================================
// Sort, Subtract (195-198).

absl::StatusOr<bool> SortTrivial(Instruction* s, AlgebraicContext& ctx) {
  if (!IsOp(s, Opcode::kSort) || s->operand_count() < 1 ||
      s->dimensions().size() != 1) {
    return false;
  }
  Instruction* first = s->operand(0);
  if (!IsArray(first)) return false;
  const int64_t d = s->dimensions(0);
  if (d < 0 || d >= first->shape().rank()) return false;
  if (first->shape().ElementsIn() != 0 && first->shape().dimensions(d) > 1) {
    return false;
  }
  if (s->operand_count() == 1) {
    return ReplaceWithExisting(s, first, ctx);
  }
  std::vector<Instruction*> ops(s->operands().begin(), s->operands().end());
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeTuple(ctx.rw, s->parent(), ops));
  return ReplaceWithNew(s, result, ctx);
}

absl::StatusOr<bool> SubtractZero(Instruction* sub, AlgebraicContext& ctx) {
  if (!IsBinary(sub, Opcode::kSubtract) || !IsAll(sub->operand(1), 0)) {
    return false;
  }
  return ReplaceWithExisting(sub, sub->operand(0), ctx);
}

// 197. A - A -> 0: NaN and inf minus themselves are NaN, so only integers
// or fast math.
absl::StatusOr<bool> SubtractSame(Instruction* sub, AlgebraicContext& ctx) {
  if (!IsBinary(sub, Opcode::kSubtract) || sub->operand(0) != sub->operand(1)) {
    return false;
  }
  if (!IsIntegralType(sub->shape().element_type()) &&
      !ctx.options.enable_fast_math) {
    return false;
  }
  PART3_ASSIGN_OR_NO_MATCH(Instruction * zero, MakeFilledLike(ctx.rw, sub, 0));
  return ReplaceWithNew(sub, zero, ctx);
}

// 198. A - C -> A + (-C).
absl::StatusOr<bool> SubtractConstantToAdd(Instruction* sub,
                                           AlgebraicContext& ctx) {
  if (!IsBinary(sub, Opcode::kSubtract)) return false;
  Instruction* c = sub->operand(1);
  if (!IsConstantOrBroadcastConstant(c) ||
      IsOp(sub->operand(0), Opcode::kConstant)) {
    return false;
  }
  PrimitiveType t = sub->shape().element_type();
  if (t == PrimitiveType::kPred) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * neg,
                           MakeUnary(ctx.rw, Opcode::kNegate, c));
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeBinary(ctx.rw, Opcode::kAdd, sub->operand(0), neg));
  return ReplaceWithNew(sub, result, ctx);
}

// ===========================================================================
// Transpose (199-205).

bool IsPlainTranspose(const Instruction* t) {
  return IsOp(t, Opcode::kTranspose) && t->operand_count() == 1 && IsArray(t) &&
         IsArray(t->operand(0)) &&
         IsPermutation(t->dimensions(), t->shape().rank());
}

absl::StatusOr<bool> TransposeIdentity(Instruction* t, AlgebraicContext& ctx) {
  if (!IsPlainTranspose(t)) return false;
  for (int64_t i = 0; i < t->shape().rank(); ++i) {
    if (t->dimensions(i) != i) return false;
  }
  return ReplaceWithExisting(t, t->operand(0), ctx);
}

absl::StatusOr<bool> TransposeOfTranspose(Instruction* t,
                                          AlgebraicContext& ctx) {
  if (!IsPlainTranspose(t)) return false;
  Instruction* inner = t->operand(0);
  if (!IsPlainTranspose(inner)) return false;
  std::vector<int64_t> perm;
  for (int64_t p : t->dimensions()) perm.push_back(inner->dimensions(p));
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeTranspose(ctx.rw, inner->operand(0), perm));
  return ReplaceWithNew(t, result, ctx);
}

// 201. transpose(dot(a, b)) swapping the two non-batch dims of a canonical
// single-user dot -> dot(b, a).
absl::StatusOr<bool> TransposeOfDot(Instruction* t, AlgebraicContext& ctx) {
  if (ctx.options.supports_non_canonical_dots || !IsPlainTranspose(t)) {
    return false;
  }
  Instruction* dot = t->operand(0);
  if (!IsOp(dot, Opcode::kDot) || dot->operand_count() != 2 ||
      !HasSingleUser(dot) || !dot->attrs().dot_dnums.has_value() ||
      !IsArray(dot->operand(0)) || !IsArray(dot->operand(1))) {
    return false;
  }
  Instruction* a = dot->operand(0);
  Instruction* b = dot->operand(1);
  const DotDimensionNumbers& dn = *dot->attrs().dot_dnums;
  const int64_t rank = t->shape().rank();
  if (rank < 2) return false;
  const int64_t nb = rank - 2;
  if (a->shape().rank() != rank || b->shape().rank() != rank) return false;
  if (static_cast<int64_t>(dn.lhs_batch_dimensions.size()) != nb ||
      static_cast<int64_t>(dn.rhs_batch_dimensions.size()) != nb) {
    return false;
  }
  for (int64_t i = 0; i < nb; ++i) {
    if (dn.lhs_batch_dimensions[i] != i || dn.rhs_batch_dimensions[i] != i ||
        t->dimensions(i) != i) {
      return false;
    }
  }
  if (dn.lhs_contracting_dimensions != std::vector<int64_t>{rank - 1} ||
      dn.rhs_contracting_dimensions != std::vector<int64_t>{rank - 2}) {
    return false;
  }
  if (t->dimensions(rank - 2) != rank - 1 ||
      t->dimensions(rank - 1) != rank - 2) {
    return false;
  }
  if (ctx.options.enable_move_dot_param_to_rhs &&
      (IsOp(b, Opcode::kParameter) ||
       (IsOp(b, Opcode::kBroadcast) && b->operand_count() == 1 &&
        IsOp(b->operand(0), Opcode::kParameter)))) {
    return false;
  }
  DotDimensionNumbers nd = dn;
  nd.lhs_contracting_dimensions = {rank - 2};
  nd.rhs_contracting_dimensions = {rank - 1};
  std::vector<Precision> precision = dot->attrs().operand_precision;
  if (precision.size() == 2) std::swap(precision[0], precision[1]);
  PART3_ASSIGN_OR_NO_MATCH(
      Instruction * result,
      MakeDot(ctx.rw, b, a, nd, t->shape().element_type(), precision));
  return ReplaceWithNew(t, result, ctx);
}

// 202. A transpose moving only size-1 dimensions -> reshape.
absl::StatusOr<bool> TransposeDegenerateToReshape(Instruction* t,
                                                  AlgebraicContext& ctx) {
  if (!IsPlainTranspose(t)) return false;
  const Shape& in = t->operand(0)->shape();
  int64_t prev = -1;
  bool identity = true;
  for (int64_t i = 0; i < t->shape().rank(); ++i) {
    const int64_t p = t->dimensions(i);
    identity &= p == i;
    if (in.dimensions(p) == 1) continue;
    if (p < prev) return false;
    prev = p;
  }
  if (identity) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeReshape(ctx.rw, t->operand(0), DimsOf(t)));
  return ReplaceWithNew(t, result, ctx);
}

// 203. (LS) a transpose whose result layout is its operand's layout
// permuted (size-1 dimensions aside) moves no data -> bitcast.
absl::StatusOr<bool> TransposeToBitcast(Instruction* t, AlgebraicContext& ctx) {
  if (!LayoutSensitive(ctx) || !IsPlainTranspose(t)) return false;
  const Shape& in = t->operand(0)->shape();
  const Shape& out = t->shape();
  if (!PlainLayout(in) || !PlainLayout(out) ||
      in.element_type() != out.element_type()) {
    return false;
  }
  std::vector<int64_t> phys_out = PhysicalNonDegenerateDims(out);
  for (int64_t& d : phys_out) d = t->dimensions(d);
  if (phys_out != PhysicalNonDegenerateDims(in)) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBitcast(ctx.rw, t->operand(0), out));
  return ReplaceWithNew(t, result, ctx);
}

// 205. transpose(broadcast(x)) -> broadcast(x) when the broadcast dims stay
// sorted (x is not transposed).
absl::StatusOr<bool> TransposeOfBroadcast(Instruction* t,
                                          AlgebraicContext& ctx) {
  if (!IsPlainTranspose(t) || LayoutSensitive(ctx)) return false;
  Instruction* b = t->operand(0);
  if (!IsOp(b, Opcode::kBroadcast) || b->operand_count() != 1 ||
      !IsArray(b->operand(0))) {
    return false;
  }
  const DimVector& bd = b->dimensions();
  if (!ValidDims(bd, b->shape().rank()) ||
      !std::is_sorted(bd.begin(), bd.end())) {
    return false;
  }
  std::vector<int64_t> inv(t->shape().rank());
  for (int64_t i = 0; i < t->shape().rank(); ++i) inv[t->dimensions(i)] = i;
  std::vector<int64_t> nd;
  for (int64_t d : bd) nd.push_back(inv[d]);
  if (!std::is_sorted(nd.begin(), nd.end())) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                           MakeBroadcast(ctx.rw, b->operand(0), DimsOf(t), nd));
  return ReplaceWithNew(t, result, ctx);
}

// ===========================================================================
// Convolution (206).

absl::StatusOr<bool> ConvolutionZeroElement(Instruction* c,
                                            AlgebraicContext& ctx) {
  if (!IsOp(c, Opcode::kConvolution) || c->operand_count() != 2 ||
      !IsArray(c) || !IsArray(c->operand(0)) || !IsArray(c->operand(1))) {
    return false;
  }
  if (c->operand(0)->shape().ElementsIn() != 0 &&
      c->operand(1)->shape().ElementsIn() != 0) {
    return false;
  }
  if (c->shape().ElementsIn() == 0) return false;
  PART3_ASSIGN_OR_NO_MATCH(Instruction * zero, MakeFilledLike(ctx.rw, c, 0));
  return ReplaceWithNew(c, zero, ctx);
}

// The window and dimension numbers of a two-operand convolution whose
// window matches its spatial dimensions; nullptr if anything is off.
bool PlainConvolution(const Instruction* c) {
  if (!IsOp(c, Opcode::kConvolution) || c->operand_count() != 2 ||
      !IsArray(c) || !IsArray(c->operand(0)) || !IsArray(c->operand(1)) ||
      !c->attrs().window.has_value() || !c->attrs().conv_dnums.has_value()) {
    return false;
  }
  const ConvolutionDimensionNumbers& dn = *c->attrs().conv_dnums;
  const size_t n = c->attrs().window->dimensions.size();
  return dn.input_spatial_dimensions.size() == n &&
         dn.kernel_spatial_dimensions.size() == n &&
         c->operand(0)->shape().rank() == static_cast<int64_t>(n) + 2 &&
         c->operand(1)->shape().rank() == static_cast<int64_t>(n) + 2;
}

// A zero-padding pad with a config matching its operand's rank.
bool IsZeroPad(const Instruction* pad) {
  return IsOp(pad, Opcode::kPad) && pad->operand_count() == 2 &&
         IsArray(pad->operand(0)) && IsAll(pad->operand(1), 0) &&
         pad->attrs().has_padding &&
         static_cast<int64_t>(pad->attrs().padding.size()) ==
             pad->operand(0)->shape().rank();
}

// 207. conv(pad(a, 0), b) -> conv(a, b) with the padding in the window
// (interior padding as base dilation).
absl::StatusOr<bool> ConvolutionFoldInputPad(Instruction* c,
                                             AlgebraicContext& ctx) {
  if (!PlainConvolution(c)) return false;
  Instruction* pad = c->operand(0);
  if (!IsZeroPad(pad)) return false;
  const ConvolutionDimensionNumbers& dn = *c->attrs().conv_dnums;
  const PaddingConfig& pc = pad->attrs().padding;
  for (int64_t d : {dn.input_batch_dimension, dn.input_feature_dimension}) {
    if (d < 0 || d >= static_cast<int64_t>(pc.size())) return false;
    if (pc[d].low != 0 || pc[d].high != 0 || pc[d].interior != 0) {
      return false;
    }
  }
  Window window = *c->attrs().window;
  for (size_t k = 0; k < window.dimensions.size(); ++k) {
    const int64_t d = dn.input_spatial_dimensions[k];
    if (d < 0 || d >= static_cast<int64_t>(pc.size())) return false;
    if (!FoldPadIntoWindow(pc[d], &window.dimensions[k])) return false;
  }
  std::vector<Instruction*> ops = {pad->operand(0), c->operand(1)};
  PART3_ASSIGN_OR_NO_MATCH(Instruction * conv,
                           CloneWithNewOperands(ctx.rw, c, c->shape(), ops));
  conv->mutable_attrs()->window = window;  // a new instruction of this rule
  return ReplaceWithNew(c, conv, ctx);
}

// 208. conv(a, pad(b, 0)) with only interior padding on kernel spatial
// dims -> window dilation.
absl::StatusOr<bool> ConvolutionFoldKernelPad(Instruction* c,
                                              AlgebraicContext& ctx) {
  if (!PlainConvolution(c)) return false;
  Instruction* pad = c->operand(1);
  if (!IsZeroPad(pad)) return false;
  const ConvolutionDimensionNumbers& dn = *c->attrs().conv_dnums;
  const PaddingConfig& pc = pad->attrs().padding;
  std::vector<bool> spatial(pc.size(), false);
  Window window = *c->attrs().window;
  bool any = false;
  for (size_t k = 0; k < window.dimensions.size(); ++k) {
    const int64_t d = dn.kernel_spatial_dimensions[k];
    if (d < 0 || d >= static_cast<int64_t>(pc.size())) return false;
    spatial[d] = true;
    const PaddingDimension& p = pc[d];
    WindowDimension& w = window.dimensions[k];
    if (p.low != 0 || p.high != 0 || p.interior < 0) return false;
    if (w.window_dilation != 1) return false;
    w.window_dilation = p.interior + 1;
    w.size = pad->operand(0)->shape().dimensions(d);
    any |= p.interior != 0;
  }
  for (size_t d = 0; d < pc.size(); ++d) {
    if (spatial[d]) continue;
    if (pc[d].low != 0 || pc[d].high != 0 || pc[d].interior != 0) {
      return false;
    }
  }
  if (!any) return false;
  std::vector<Instruction*> ops = {c->operand(0), pad->operand(0)};
  PART3_ASSIGN_OR_NO_MATCH(Instruction * conv,
                           CloneWithNewOperands(ctx.rw, c, c->shape(), ops));
  conv->mutable_attrs()->window = window;  // a new instruction of this rule
  return ReplaceWithNew(c, conv, ctx);
}

// 184. select(p, xs, dus(xs, x, i)) with a single-use dus ->
// dus(xs, select(ds(p, i), ds(xs, i), x), i); the mirrored form keeps the
// update where p holds.
absl::StatusOr<bool> SelectOfDynamicUpdateSlice(Instruction* s,
                                                AlgebraicContext& ctx) {
  if (!IsPlainSelect(s)) return false;
  Instruction* p = s->operand(0);
  if (!p->shape().SameDimensions(s->shape())) return false;
  for (int i = 1; i <= 2; ++i) {
    Instruction* xs = s->operand(i);
    Instruction* dus = s->operand(3 - i);
    if (!IsOp(dus, Opcode::kDynamicUpdateSlice) || dus->operand_count() < 2 ||
        dus->operand(0) != xs || !HasSingleUser(dus) ||
        !IsArray(dus->operand(1))) {
      continue;
    }
    Instruction* x = dus->operand(1);
    std::vector<Instruction*> indices(dus->operands().begin() + 2,
                                      dus->operands().end());
    if (static_cast<int64_t>(indices.size()) != xs->shape().rank()) continue;
    std::vector<int64_t> sizes = DimsOf(x);
    PART3_ASSIGN_OR_NO_MATCH(Instruction * ps,
                             MakeDynamicSlice(ctx.rw, p, indices, sizes));
    PART3_ASSIGN_OR_NO_MATCH(Instruction * xss,
                             MakeDynamicSlice(ctx.rw, xs, indices, sizes));
    // i == 1: xs where p holds, the update elsewhere; i == 2: mirrored.
    PART3_ASSIGN_OR_NO_MATCH(
        Instruction * sel,
        i == 1 ? MakeTernary(ctx.rw, Opcode::kSelect, ps, xss, x)
               : MakeTernary(ctx.rw, Opcode::kSelect, ps, x, xss));
    PART3_ASSIGN_OR_NO_MATCH(Instruction * result,
                             MakeDynamicUpdateSlice(ctx.rw, xs, sel, indices));
    return ReplaceWithNew(s, result, ctx);
  }
  return false;
}

}  // namespace

void AddAlgebraicRulesPart3(std::vector<AlgebraicRule>* rules) {
  auto add = [&](const char* name, int entry, std::vector<Opcode> visits,
                 const char* summary, AlgebraicRuleFn fn) {
    rules->push_back({name, entry, std::move(visits), summary, fn});
  };
  // Power.
  add("power-zero", 138, {Opcode::kPower}, "pow(A, 0) -> 1", &PowerZero);
  add("power-one", 138, {Opcode::kPower}, "pow(A, 1) -> A", &PowerOne);
  add("power-of-exp", 139, {Opcode::kPower}, "pow(exp(A), B) -> exp(A * B)",
      &PowerOfExp);
  add("power-two", 140, {Opcode::kPower}, "pow(A, 2) -> A * A", &PowerTwo);
  add("power-three", 140, {Opcode::kPower}, "pow(A, 3) -> A * (A * A)",
      &PowerThree);
  add("power-minus-one", 140, {Opcode::kPower}, "pow(A, -1) -> 1 / A (float)",
      &PowerMinusOne);
  add("power-half-to-sqrt", 141, {Opcode::kPower},
      "pow(A, 0.5) -> sqrt(A) for non-negative A", &PowerHalf);
  // Reduce.
  add("reduce-zero-element", 142, {Opcode::kReduce},
      "zero-element reduce -> broadcast(init)", &ReduceZeroElement);
  add("reduce-unwrap-variadic", 143, {Opcode::kReduce},
      "variadic reduce of one input -> tuple(reduce)", &ReduceUnwrapVariadic);
  add("reduce-to-reshape", 144, {Opcode::kReduce},
      "(LI) reduce of size-1 dims only -> reshape", &ReduceToReshape);
  add("reduce-of-negate", 145, {Opcode::kReduce},
      "(LI) reduce_add(negate(x), 0) -> negate(reduce_add(x, 0))",
      &ReduceOfNegate);
  add("reduce-of-dot", 146, {Opcode::kReduce},
      "(LI, opt) reduce_add(dot(a, b)) -> dot(reduce(a), reduce(b))",
      &ReduceOfDot);
  add("reduce-of-transpose", 147, {Opcode::kReduce},
      "reduce(transpose(x)) -> [transpose](reduce(x))", &ReduceOfTranspose);
  add("reduce-of-reduce", 148, {Opcode::kReduce},
      "reduce(reduce(x)) -> reduce(x) over both dimension sets",
      &ReduceOfReduce);
  add("reduce-of-reshape-kept-dims", 149, {Opcode::kReduce},
      "reduce(reshape(x)) with kept dims untouched -> reduce(x)",
      &ReduceOfReshapeKeptDims);
  add("reduce-of-reshape-reduced-dims", 150, {Opcode::kReduce},
      "reduce(reshape(x)) with reduced dims untouched -> reshape(reduce(x))",
      &ReduceOfReshapeReducedDims);
  add("reduce-of-concat", 151, {Opcode::kReduce},
      "reduce(concat) over the concat dim -> map of per-operand reduces",
      &ReduceOfConcat);
  add("reduce-of-broadcast-scalar", 154, {Opcode::kReduce},
      "reduce_{max,min,and,or}(broadcast(x), a) to scalar -> op(x, a)",
      &ReduceOfBroadcastScalar);
  add("reduce-add-of-broadcast", 155, {Opcode::kReduce},
      "reduce_add(broadcast(x), init) -> broadcast(init + x * n)",
      &ReduceAddOfBroadcast);
  add("reduce-precision-no-op", 156, {Opcode::kReducePrecision},
      "reduce-precision to the type's own widths -> operand",
      &ReducePrecisionNoOp);
  // ReduceWindow.
  add("reduce-window-zero-element", 157, {Opcode::kReduceWindow},
      "zero-element reduce-window -> broadcast(init)",
      &ReduceWindowZeroElement);
  add("reduce-window-scalar", 158, {Opcode::kReduceWindow},
      "reduce-window of a scalar -> the scalar", &ReduceWindowScalar);
  add("reduce-window-unwrap-variadic", 159, {Opcode::kReduceWindow},
      "variadic reduce-window of one input -> tuple(reduce-window)",
      &ReduceWindowUnwrapVariadic);
  add("reduce-window-trivial", 160, {Opcode::kReduceWindow},
      "size-1 windows -> op(x, broadcast(init)) [padded with init]",
      &ReduceWindowTrivial);
  add("reduce-window-to-reduce", 161, {Opcode::kReduceWindow},
      "full-dim or size-1 windows -> reshape(reduce)", &ReduceWindowToReduce);
  add("reduce-window-fold-pad", 162, {Opcode::kReduceWindow},
      "reduce-window(pad(x, init)) -> reduce-window with window padding",
      &ReduceWindowFoldPad);
  // Remainder.
  add("remainder-of-remainder", 164, {Opcode::kRemainder},
      "(A % B) % B -> A % B", &RemainderOfRemainder);
  add("remainder-power-of-two", 165, {Opcode::kRemainder},
      "integer A % 2^k -> bit masks", &RemainderPowerOfTwo);
  add("remainder-of-iota", 166, {Opcode::kRemainder},
      "iota % N with N >= iota extent -> iota", &RemainderOfIota);
  // Reshape.
  add("reshape-zero-element", 167, {Opcode::kReshape},
      "zero-element reshape -> empty constant", &ReshapeZeroElement);
  add("reshape-no-op", 167, {Opcode::kReshape},
      "reshape to the operand's shape -> operand", &ReshapeNoOp);
  add("reshape-of-reshape", 168, {Opcode::kReshape},
      "reshape(reshape(x)) -> reshape(x)", &ReshapeOfReshape);
  add("reshape-of-rng", 169, {Opcode::kReshape, Opcode::kTranspose},
      "reshape/transpose of a single-use rng -> rng of the new shape",
      &ReshapeOrTransposeOfRng);
  add("reshape-chain-identity", 170, {Opcode::kReshape},
      "reshape chain back to the original shape -> operand",
      &ReshapeChainIdentity);
  add("reshape-of-broadcast", 172, {Opcode::kReshape},
      "reshape(broadcast(x)) -> broadcast(x) when x's dims are untouched",
      &ReshapeOfBroadcast);
  add("reshape-of-iota", 173, {Opcode::kReshape},
      "reshape(iota) with an untouched iota dim -> iota", &ReshapeOfIota);
  add("reshape-of-dynamic-update-slice", 174, {Opcode::kReshape},
      "(LI) reshape(dus) changing only 1-dims -> dus of reshapes",
      &ReshapeOfDynamicUpdateSlice);
  add("reshape-to-bitcast", 175, {Opcode::kReshape},
      "(LS) reshape that moves no data -> bitcast", &ReshapeToBitcast);
  // Reverse.
  add("reverse-degenerate", 176, {Opcode::kReverse},
      "reverse of size-1 dims only -> operand", &ReverseDegenerate);
  add("reverse-of-reverse", 177, {Opcode::kReverse},
      "(LI) reverse(reverse(x)) -> x or one reverse", &ReverseOfReverse);
  add("reverse-of-binary-broadcast", 178, {Opcode::kReverse},
      "reverse(binop(broadcast(s), x)) -> binop(broadcast(s), reverse(x))",
      &ReverseOfBinaryWithBroadcast);
  add("reverse-of-reshape", 179, {Opcode::kReverse},
      "reverse(reshape inserting 1-dims) -> reshape(reverse(x))",
      &ReverseOfReshape);
  // Select.
  add("select-same-branches", 180, {Opcode::kSelect}, "select(p, y, y) -> y",
      &SelectSameBranches);
  add("select-true", 180, {Opcode::kSelect}, "select(true, x, y) -> x",
      &SelectTrue);
  add("select-false", 180, {Opcode::kSelect}, "select(false, x, y) -> y",
      &SelectFalse);
  add("select-not-predicate", 181, {Opcode::kSelect},
      "select(not(p), a, b) -> select(p, b, a)", &SelectNotPredicate);
  add("select-pred-true-false", 182, {Opcode::kSelect},
      "pred select(a, true, false) -> a", &SelectPredTrueFalse);
  add("select-pred-false-true", 182, {Opcode::kSelect},
      "pred select(a, false, true) -> not(a)", &SelectPredFalseTrue);
  add("select-pred-compare", 183, {Opcode::kSelect},
      "pred select(cmp(a, b), a, b) -> or/and/a/b", &SelectPredCompare);
  add("select-of-dynamic-update-slice", 184, {Opcode::kSelect},
      "select(p, xs, dus(xs, x, i)) -> dus(xs, select(ds(p), ds(xs), x), i)",
      &SelectOfDynamicUpdateSlice);
  // Slice.
  add("slice-full", 185, {Opcode::kSlice}, "full unstrided slice -> operand",
      &SliceFull);
  add("slice-of-pad", 186, {Opcode::kSlice},
      "slice(pad) -> broadcast(pad value), operand or slice of operand",
      &SliceOfPad);
  add("slice-of-slice", 187, {Opcode::kSlice},
      "slice(slice(x)) unstrided -> one slice", &SliceOfSlice);
  add("slice-of-broadcast", 188, {Opcode::kSlice},
      "slice(broadcast(x)) -> broadcast(slice(x))", &SliceOfBroadcast);
  add("slice-of-concat", 189, {Opcode::kSlice},
      "unstrided slice(concat) -> slice of the covered operands",
      &SliceOfConcat);
  add("slice-of-reshape", 192, {Opcode::kSlice},
      "(LI) prefix slice of reshape(x) -> reshape(slice(x))", &SliceOfReshape);
  add("slice-of-dot", 190, {Opcode::kSlice},
      "(LI, opt) slice(dot(a, b)) -> dot(slice(a), slice(b))", &SliceOfDot);
  add("slice-of-reduce-window-to-reduce", 191, {Opcode::kSlice},
      "last element of a running reduce-window -> reshape(reduce)",
      &SliceOfReduceWindowToReduce);
  add("slice-of-reverse", 193, {Opcode::kSlice},
      "slice(reverse(x)) -> reverse(slice(x))", &SliceOfReverse);
  add("slice-single-element-stride", 194, {Opcode::kSlice},
      "stride giving one element -> stride 1", &SliceSingleElementStride);
  // Sort, Subtract.
  add("sort-trivial", 195, {Opcode::kSort},
      "sort of zero elements or sort dim <= 1 -> operands", &SortTrivial);
  add("subtract-zero", 196, {Opcode::kSubtract}, "A - 0 -> A", &SubtractZero);
  add("subtract-same", 197, {Opcode::kSubtract},
      "A - A -> 0 (integral or fast math)", &SubtractSame);
  add("subtract-constant-to-add", 198, {Opcode::kSubtract}, "A - C -> A + (-C)",
      &SubtractConstantToAdd);
  // Transpose.
  add("transpose-identity", 199, {Opcode::kTranspose},
      "identity transpose -> operand", &TransposeIdentity);
  add("transpose-of-transpose", 200, {Opcode::kTranspose},
      "transpose(transpose(x)) -> one transpose", &TransposeOfTranspose);
  add("transpose-of-dot", 201, {Opcode::kTranspose},
      "transpose(canonical dot(a, b)) -> dot(b, a)", &TransposeOfDot);
  add("transpose-degenerate-to-reshape", 202, {Opcode::kTranspose},
      "transpose moving only size-1 dims -> reshape",
      &TransposeDegenerateToReshape);
  add("transpose-to-bitcast", 203, {Opcode::kTranspose},
      "(LS) transpose that moves no data -> bitcast", &TransposeToBitcast);
  add("transpose-of-broadcast", 205, {Opcode::kTranspose},
      "(LI) transpose(broadcast(x)) -> broadcast(x)", &TransposeOfBroadcast);
  // Convolution.
  add("convolution-zero-element", 206, {Opcode::kConvolution},
      "zero-element input or kernel -> broadcast(0)", &ConvolutionZeroElement);
  add("convolution-fold-input-pad", 207, {Opcode::kConvolution},
      "conv(pad(a, 0), b) -> conv(a, b) with window padding/base dilation",
      &ConvolutionFoldInputPad);
  add("convolution-fold-kernel-pad", 208, {Opcode::kConvolution},
      "conv(a, pad(b, 0)) with kernel interior padding -> window dilation",
      &ConvolutionFoldKernelPad);
}

}  // namespace hlogym
