#include "hlogym/passes/dot_decomposer.h"

#include <algorithm>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"

namespace hlogym {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool IsCanonical(const Instruction* dot, const DotDimensionNumbers& d) {
  if (d.lhs_contracting_dimensions.size() != 1) return false;
  const int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  if (nb + 2 < dot->operand(0)->shape().rank() ||
      static_cast<int64_t>(d.rhs_batch_dimensions.size()) + 2 <
          dot->operand(1)->shape().rank()) {
    return false;
  }
  for (int64_t i = 0; i < nb; ++i) {
    if (d.lhs_batch_dimensions[i] != i) return false;
  }
  if (d.rhs_batch_dimensions.size() != d.lhs_batch_dimensions.size()) {
    return false;
  }
  for (int64_t i = 0; i < nb; ++i) {
    if (d.rhs_batch_dimensions[i] != i) return false;
  }
  return true;
}

bool ValidDims(const std::vector<int64_t>& dims, int64_t rank) {
  for (int64_t x : dims) {
    if (x < 0 || x >= rank) return false;
  }
  return true;
}

// `x` transposed by `perm` (skipped when the identity) and reshaped to
// `dims` (skipped when it already has them).
absl::StatusOr<Instruction*> TransposeAndReshape(
    Rewriter& rw, Instruction* x, const std::vector<int64_t>& perm,
    const std::vector<int64_t>& dims) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    identity &= perm[i] == static_cast<int64_t>(i);
  }
  Instruction* t = x;
  if (!identity) {
    HLOGYM_ASSIGN_OR_RETURN(t, MakeTranspose(rw, x, perm));
  }
  if (t->shape().dimensions() == DimVector(dims.begin(), dims.end())) return t;
  return MakeReshape(rw, t, dims);
}

absl::StatusOr<bool> Canonicalize(Instruction* dot, Rewriter& rw) {
  if (dot->operand_count() != 2 || !dot->attrs().dot_dnums.has_value() ||
      !dot->attrs().sparsity_config.empty() || !dot->shape().IsArray() ||
      dot->shape().is_dynamic() || dot->operand(0)->shape().is_dynamic() ||
      dot->operand(1)->shape().is_dynamic() ||
      dot->operand(0)->shape().ElementsIn() == 0 ||
      dot->operand(1)->shape().ElementsIn() == 0) {
    return false;
  }
  const DotDimensionNumbers& d = *dot->attrs().dot_dnums;
  const Shape& ls = dot->operand(0)->shape();
  const Shape& rs = dot->operand(1)->shape();
  if (!ValidDims(d.lhs_batch_dimensions, ls.rank()) ||
      !ValidDims(d.lhs_contracting_dimensions, ls.rank()) ||
      !ValidDims(d.rhs_batch_dimensions, rs.rank()) ||
      !ValidDims(d.rhs_contracting_dimensions, rs.rank()) ||
      d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size() ||
      d.lhs_contracting_dimensions.size() !=
          d.rhs_contracting_dimensions.size() ||
      IsCanonical(dot, d)) {
    return false;
  }
  const int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());

  std::vector<int64_t> batch_sizes;
  for (int64_t b : d.lhs_batch_dimensions)
    batch_sizes.push_back(ls.dimensions(b));

  // lhs: [batch, non-contracting, contracting].
  std::vector<int64_t> lhs_nc;
  int64_t lhs_k = 1, lhs_m = 1;
  for (int64_t i = 0; i < ls.rank(); ++i) {
    if (Contains(d.lhs_contracting_dimensions, i)) {
      lhs_k *= ls.dimensions(i);
    } else if (!Contains(d.lhs_batch_dimensions, i)) {
      lhs_nc.push_back(i);
      lhs_m *= ls.dimensions(i);
    }
  }
  std::vector<int64_t> lhs_perm = d.lhs_batch_dimensions;
  lhs_perm.insert(lhs_perm.end(), lhs_nc.begin(), lhs_nc.end());
  lhs_perm.insert(lhs_perm.end(), d.lhs_contracting_dimensions.begin(),
                  d.lhs_contracting_dimensions.end());
  std::vector<int64_t> lhs_dims = batch_sizes;
  if (lhs_m > 1) lhs_dims.push_back(lhs_m);
  lhs_dims.push_back(lhs_k);

  // rhs: [batch, contracting, non-contracting].
  std::vector<int64_t> rhs_nc;
  int64_t rhs_k = 1, rhs_n = 1;
  for (int64_t i = 0; i < rs.rank(); ++i) {
    if (Contains(d.rhs_contracting_dimensions, i)) {
      rhs_k *= rs.dimensions(i);
    } else if (!Contains(d.rhs_batch_dimensions, i)) {
      rhs_nc.push_back(i);
      rhs_n *= rs.dimensions(i);
    }
  }
  std::vector<int64_t> rhs_perm = d.rhs_batch_dimensions;
  rhs_perm.insert(rhs_perm.end(), d.rhs_contracting_dimensions.begin(),
                  d.rhs_contracting_dimensions.end());
  rhs_perm.insert(rhs_perm.end(), rhs_nc.begin(), rhs_nc.end());
  std::vector<int64_t> rhs_dims = batch_sizes;
  rhs_dims.push_back(rhs_k);
  if (rhs_n > 1) rhs_dims.push_back(rhs_n);
  if (static_cast<int64_t>(lhs_perm.size()) != ls.rank() ||
      static_cast<int64_t>(rhs_perm.size()) != rs.rank() || lhs_k != rhs_k) {
    return false;
  }

  HLOGYM_ASSIGN_OR_RETURN(
      Instruction * lhs,
      TransposeAndReshape(rw, dot->operand(0), lhs_perm, lhs_dims));
  HLOGYM_ASSIGN_OR_RETURN(
      Instruction * rhs,
      TransposeAndReshape(rw, dot->operand(1), rhs_perm, rhs_dims));

  DotDimensionNumbers nd;
  for (int64_t i = 0; i < nb; ++i) {
    nd.lhs_batch_dimensions.push_back(i);
    nd.rhs_batch_dimensions.push_back(i);
  }
  nd.lhs_contracting_dimensions.push_back(nb + (lhs_m > 1 ? 1 : 0));
  nd.rhs_contracting_dimensions.push_back(nb);
  DimVector out(batch_sizes.begin(), batch_sizes.end());
  if (lhs_m > 1) out.push_back(lhs_m);
  if (rhs_n > 1) out.push_back(rhs_n);
  Shape shape(dot->shape().element_type(), out);
  if (dot->shape().has_layout()) shape.SetDefaultLayout();
  Instruction* ops[] = {lhs, rhs};
  HLOGYM_ASSIGN_OR_RETURN(Instruction * canonical,
                          CloneWithNewOperands(rw, dot, shape, ops));
  canonical->mutable_attrs()->dot_dnums = nd;
  // A sharding of the old result's rank does not fit the new dot.
  canonical->mutable_attrs()->sharding.reset();
  const DimVector& od = dot->shape().dimensions();
  HLOGYM_ASSIGN_OR_RETURN(
      Instruction * result,
      MakeReshape(rw, canonical,
                  std::span<const int64_t>(od.data(), od.size())));
  return rw.ReplaceInstruction(dot, result);
}

}  // namespace

absl::StatusOr<bool> DotDecomposer::RunWith(Module* module, Rewriter& rw) {
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (inst->opcode() != Opcode::kDot) return false;
        return Canonicalize(inst, rw);
      });
}

}  // namespace hlogym
