#include "hlogym/passes/transpose_folding.h"

#include <algorithm>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"

namespace hlogym {
namespace {

bool IsTranspose(const Instruction* i) {
  return i->opcode() == Opcode::kTranspose && i->operand_count() == 1 &&
         static_cast<int64_t>(i->dimensions().size()) ==
             i->operand(0)->shape().rank();
}

bool IsNonIdentityTranspose(const Instruction* i) {
  if (!IsTranspose(i)) return false;
  for (size_t d = 0; d < i->dimensions().size(); ++d) {
    if (i->dimensions(d) != static_cast<int64_t>(d)) return true;
  }
  return false;
}

// Minor-to-major order of a shape (the default one when it has none).
DimVector MinorToMajor(const Shape& s) {
  if (s.has_layout() &&
      static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank()) {
    return s.layout().minor_to_major;
  }
  DimVector m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

// XLA's MatrixLayout::For(shape, batch, rows, cols) succeeds: each group is
// physically contiguous in the listed order, and the batch group is not
// the most minor of the three.
bool IsValidMatrixLayout(const Shape& shape, const std::vector<int64_t>& batch,
                         const std::vector<int64_t>& rows,
                         const std::vector<int64_t>& cols) {
  const DimVector m2m = MinorToMajor(shape);
  std::vector<int> group_order;  // minor to major: 0 batch, 1 rows, 2 cols
  size_t i = 0;
  while (i < m2m.size()) {
    const int64_t dim = m2m[i];
    const std::vector<int64_t>* group = nullptr;
    int id = -1;
    if (!rows.empty() && dim == rows.back()) {
      group = &rows;
      id = 1;
    } else if (!cols.empty() && dim == cols.back()) {
      group = &cols;
      id = 2;
    } else if (!batch.empty() && dim == batch.back()) {
      group = &batch;
      id = 0;
    } else {
      return false;
    }
    for (auto it = group->rbegin(); it != group->rend(); ++it) {
      if (i >= m2m.size() || *it != m2m[i++]) return false;
    }
    group_order.push_back(id);
  }
  if (cols.empty()) group_order.push_back(2);
  if (rows.empty()) group_order.push_back(1);
  if (batch.empty()) group_order.push_back(0);
  if (group_order.size() != 3) return false;
  // group_order[k] is the group at minor-to-major position k; the batch
  // group must not be the most minor.
  return group_order[0] != 0;
}

// The GPU rule: folding keeps the dot's shape and the operand still reads
// as a GEMM matrix.
bool CanFoldIntoDot(const Instruction* dot, int64_t operand) {
  const Instruction* t = dot->operand(operand);
  const DotDimensionNumbers& d = *dot->attrs().dot_dnums;
  const std::vector<int64_t>& batch =
      operand == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  const std::vector<int64_t>& contracting = operand == 0
                                                ? d.lhs_contracting_dimensions
                                                : d.rhs_contracting_dimensions;
  const int64_t rank = t->shape().rank();
  std::vector<int64_t> non_contracting;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), i) ==
            contracting.end()) {
      non_contracting.push_back(i);
    }
  }
  auto transposed = [&](const std::vector<int64_t>& dims) {
    std::vector<int64_t> out;
    for (int64_t x : dims) out.push_back(t->dimensions(x));
    return out;
  };
  const std::vector<int64_t> nc = transposed(non_contracting);
  if (!std::is_sorted(nc.begin(), nc.end())) return false;
  return IsValidMatrixLayout(t->operand(0)->shape(), transposed(batch),
                             transposed(contracting), nc);
}

bool DimsInRange(const std::vector<int64_t>& dims, int64_t rank) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) return false;
  }
  return true;
}

absl::StatusOr<bool> FoldIntoDot(Instruction* dot, Rewriter& rw) {
  if (dot->operand_count() != 2 || !dot->attrs().dot_dnums.has_value() ||
      !dot->attrs().sparsity_config.empty() ||
      dot->operand(0)->shape().rank() < 2 ||
      dot->operand(1)->shape().rank() < 2) {
    return false;
  }
  const DotDimensionNumbers& d = *dot->attrs().dot_dnums;
  const int64_t lr = dot->operand(0)->shape().rank();
  const int64_t rr = dot->operand(1)->shape().rank();
  if (!DimsInRange(d.lhs_batch_dimensions, lr) ||
      !DimsInRange(d.lhs_contracting_dimensions, lr) ||
      !DimsInRange(d.rhs_batch_dimensions, rr) ||
      !DimsInRange(d.rhs_contracting_dimensions, rr)) {
    return false;
  }
  DotDimensionNumbers nd = d;
  Instruction* ops[2] = {dot->operand(0), dot->operand(1)};
  bool any = false;
  for (int64_t i = 0; i < 2; ++i) {
    const Instruction* t = dot->operand(i);
    if (!IsNonIdentityTranspose(t) || !CanFoldIntoDot(dot, i)) continue;
    auto map = [&](std::vector<int64_t>& dims) {
      for (int64_t& x : dims) x = t->dimensions(x);
    };
    map(i == 0 ? nd.lhs_batch_dimensions : nd.rhs_batch_dimensions);
    map(i == 0 ? nd.lhs_contracting_dimensions : nd.rhs_contracting_dimensions);
    ops[i] = t->operand(0);
    any = true;
  }
  if (!any) return false;
  HLOGYM_ASSIGN_OR_RETURN(Instruction * folded,
                          CloneWithNewOperands(rw, dot, dot->shape(), ops));
  folded->mutable_attrs()->dot_dnums = nd;
  return rw.ReplaceInstruction(dot, folded);
}

absl::StatusOr<bool> FoldIntoConvolution(Instruction* conv, Rewriter& rw) {
  if (conv->operand_count() != 2 || !conv->attrs().conv_dnums.has_value()) {
    return false;
  }
  ConvolutionDimensionNumbers nd = *conv->attrs().conv_dnums;
  Instruction* ops[2] = {conv->operand(0), conv->operand(1)};
  auto map = [](const Instruction* t, int64_t& dim) {
    if (dim < 0 || dim >= static_cast<int64_t>(t->dimensions().size())) {
      return false;
    }
    dim = t->dimensions(dim);
    return true;
  };
  bool any = false;
  if (IsTranspose(conv->operand(0))) {
    const Instruction* t = conv->operand(0);
    bool ok =
        map(t, nd.input_batch_dimension) && map(t, nd.input_feature_dimension);
    for (int64_t& s : nd.input_spatial_dimensions) ok = ok && map(t, s);
    if (!ok) return false;
    ops[0] = t->operand(0);
    any = true;
  }
  if (IsTranspose(conv->operand(1))) {
    const Instruction* t = conv->operand(1);
    bool ok = map(t, nd.kernel_input_feature_dimension) &&
              map(t, nd.kernel_output_feature_dimension);
    for (int64_t& s : nd.kernel_spatial_dimensions) ok = ok && map(t, s);
    if (!ok) return false;
    ops[1] = t->operand(0);
    any = true;
  }
  if (!any) return false;
  HLOGYM_ASSIGN_OR_RETURN(Instruction * folded,
                          CloneWithNewOperands(rw, conv, conv->shape(), ops));
  folded->mutable_attrs()->conv_dnums = nd;
  return rw.ReplaceInstruction(conv, folded);
}

}  // namespace

absl::StatusOr<bool> TransposeFolding::RunWith(Module* module, Rewriter& rw) {
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (inst->opcode() == Opcode::kDot) return FoldIntoDot(inst, rw);
        if (inst->opcode() == Opcode::kConvolution &&
            options_.fold_convolutions) {
          return FoldIntoConvolution(inst, rw);
        }
        return false;
      });
}

absl::Status TransposeFolding::SetOption(std::string_view key,
                                         std::string_view value) {
  if (key != "fold_convolutions") return Pass::SetOption(key, value);
  HLOGYM_ASSIGN_OR_RETURN(options_.fold_convolutions,
                          ParseBoolOption(key, value));
  return absl::OkStatus();
}

std::vector<std::string> TransposeFolding::OptionNames() const {
  return {"fold_convolutions"};
}

}  // namespace hlogym
