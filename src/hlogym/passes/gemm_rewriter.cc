#include "hlogym/passes/gemm_rewriter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <complex>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/builders.h"

namespace hlogym {
namespace {

using PT = PrimitiveType;
using ordered_json = nlohmann::ordered_json;

constexpr char kGemmTarget[] = "__cublas$gemm";
constexpr char kLtMatmulTarget[] = "__cublas$lt$matmul";

// XLA's GemmRewriter rules: legacy cuBLAS type combinations (A = B type,
// output type).
bool TypesSupported(PT a, PT b, PT out) {
  if (a != b) return false;
  switch (out) {
    case PT::kF16:
    case PT::kBF16:
    case PT::kF64:
    case PT::kC64:
    case PT::kC128:
      return a == out;
    case PT::kF32:
      return a == PT::kF32 || a == PT::kF16 || a == PT::kBF16;
    case PT::kS32:
      return a == PT::kS8;
    default:
      return false;
  }
}

// Result types cublasLt takes epilogues (bias vector, ReLU) for.
bool SupportsEpilogueFusion(PT t) {
  return t == PT::kF16 || t == PT::kBF16 || t == PT::kF32 || t == PT::kF64;
}

bool ValidDims(const std::vector<int64_t>& dims, int64_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) return false;
    for (size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i]) return false;
    }
  }
  return true;
}

bool IsRank2Transpose(const Instruction* x) {
  return x->opcode() == Opcode::kTranspose && x->shape().rank() == 2 &&
         x->dimensions().size() == 2 && x->dimensions(0) == 1 &&
         x->dimensions(1) == 0;
}

bool NoControlEdges(const Instruction* x) {
  return x->control_predecessors().empty() && x->control_successors().empty();
}

// A dot cuBLAS runs as a (batched) matrix-matrix or matrix-vector product.
bool IsGemm(const Instruction* dot) {
  if (dot->opcode() != Opcode::kDot || dot->operand_count() != 2 ||
      !dot->attrs().dot_dnums.has_value() ||
      !dot->attrs().sparsity_config.empty() || !dot->shape().IsArray() ||
      dot->shape().is_dynamic() || !NoControlEdges(dot)) {
    return false;
  }
  const Shape& ls = dot->operand(0)->shape();
  const Shape& rs = dot->operand(1)->shape();
  const Shape& out = dot->shape();
  if (!ls.IsArray() || !rs.IsArray() || ls.is_dynamic() || rs.is_dynamic() ||
      ls.ElementsIn() == 0 || rs.ElementsIn() == 0) {
    return false;
  }
  if (ls.rank() > 3 || rs.rank() > 3 || out.rank() > 3) return false;
  const DotDimensionNumbers& d = *dot->attrs().dot_dnums;
  const int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  if (d.lhs_contracting_dimensions.size() != 1 ||
      d.rhs_contracting_dimensions.size() != 1 ||
      d.rhs_batch_dimensions.size() != d.lhs_batch_dimensions.size()) {
    return false;
  }
  std::vector<int64_t> lhs_used = d.lhs_batch_dimensions;
  lhs_used.push_back(d.lhs_contracting_dimensions[0]);
  std::vector<int64_t> rhs_used = d.rhs_batch_dimensions;
  rhs_used.push_back(d.rhs_contracting_dimensions[0]);
  if (!ValidDims(lhs_used, ls.rank()) || !ValidDims(rhs_used, rs.rank())) {
    return false;
  }
  // Each operand is a (batched) matrix or vector; vector . vector is not a
  // GEMM.
  auto matrix_or_vector = [nb](int64_t r) {
    return r == nb + 1 || r == nb + 2;
  };
  if (!matrix_or_vector(ls.rank()) || !matrix_or_vector(rs.rank()) ||
      out.rank() != ls.rank() + rs.rank() - nb - 2 || out.rank() < nb + 1) {
    return false;
  }
  if (!TypesSupported(ls.element_type(), rs.element_type(),
                      out.element_type())) {
    return false;
  }
  for (Precision p : dot->attrs().operand_precision) {
    if (p == Precision::kPackedNibble) return false;
  }
  // XLA leaves these for transpose folding to absorb first.
  return !IsRank2Transpose(dot->operand(0)) &&
         !IsRank2Transpose(dot->operand(1));
}

// The result dimension a bias vector runs along: the most minor one.
int64_t MinorDimension(const Shape& s) {
  if (s.has_layout() &&
      static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank() &&
      s.rank() > 0) {
    return s.layout().minor_to_major[0];
  }
  return s.rank() - 1;
}

// The single user of x, if x has exactly one and is not the root.
Instruction* SoleUser(const Instruction* x) {
  if (x->user_count() != 1 || x->IsRoot()) return nullptr;
  Instruction* u = x->users()[0];
  return NoControlEdges(u) ? u : nullptr;
}

// The operand of binary `u` that is not `x` (nullptr if both are x).
Instruction* OtherOperand(const Instruction* u, const Instruction* x) {
  if (u->operand_count() != 2) return nullptr;
  if (u->operand(0) == x && u->operand(1) != x) return u->operand(1);
  if (u->operand(1) == x && u->operand(0) != x) return u->operand(0);
  return nullptr;
}

// broadcast(scalar constant): the constant, else nullptr.
const Instruction* BroadcastOfScalarConstant(const Instruction* x) {
  if (x->opcode() != Opcode::kBroadcast || x->operand_count() != 1) {
    return nullptr;
  }
  const Instruction* c = x->operand(0);
  if (c->opcode() != Opcode::kConstant || !c->shape().IsScalar() ||
      !c->has_literal() || c->literal().is_unknown()) {
    return nullptr;
  }
  return c;
}

// What the call computes: the dot and the epilogue folded into it.
struct Gemm {
  Instruction* dot = nullptr;
  Instruction* end = nullptr;  // replaced by the call
  std::complex<double> alpha = 1;
  Instruction* matrix_bias = nullptr;
  bool alias_bias = false;
  Instruction* vector_bias = nullptr;
  bool relu = false;
};

// Extends the chain from the dot through the users XLA folds, in its order.
void MatchEpilogue(bool lt, Gemm* g) {
  const PT type = g->dot->shape().element_type();
  const Shape& out = g->dot->shape();
  while (true) {
    Instruction* u = SoleUser(g->end);
    if (u == nullptr || u->shape().element_type() != type ||
        u->shape().dimensions() != out.dimensions()) {
      return;
    }
    Instruction* other = OtherOperand(u, g->end);
    if (other == nullptr) return;
    const bool epilogue_default = g->vector_bias == nullptr && !g->relu;
    if (u->opcode() == Opcode::kMultiply) {
      // alpha: only while nothing else is folded in.
      const Instruction* c = BroadcastOfScalarConstant(other);
      if (c == nullptr || other->user_count() != 1 || type == PT::kS32 ||
          g->matrix_bias != nullptr || !epilogue_default) {
        return;
      }
      std::complex<double> v = IsComplexType(c->shape().element_type())
                                   ? c->literal().GetComplex(0)
                                   : c->literal().GetAsDouble(0);
      if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) return;
      g->alpha *= v;
    } else if (u->opcode() == Opcode::kAdd &&
               other->opcode() == Opcode::kBroadcast) {
      // Vector bias (cublasLt): broadcast along the most minor dimension.
      const int64_t num_col_dims =
          g->dot->operand(1)->shape().rank() -
          static_cast<int64_t>(
              g->dot->attrs().dot_dnums->rhs_batch_dimensions.size()) -
          1;
      if (!lt || !SupportsEpilogueFusion(type) || !epilogue_default ||
          num_col_dims != 1 || other->operand_count() != 1 ||
          other->operand(0)->shape().rank() != 1 ||
          other->dimensions().size() != 1 ||
          other->dimensions(0) != MinorDimension(out)) {
        return;
      }
      g->vector_bias = other->operand(0);
    } else if (u->opcode() == Opcode::kAdd) {
      // Matrix bias: the legacy call overwrites it in place.
      const bool can_overwrite =
          other->user_count() == 1 && other->opcode() != Opcode::kParameter;
      if (type == PT::kS32 || g->matrix_bias != nullptr || g->relu ||
          !other->shape().IsArray() || other->shape().element_type() != type ||
          (!lt && !can_overwrite)) {
        return;
      }
      g->matrix_bias = other;
      g->alias_bias = can_overwrite;
    } else if (u->opcode() == Opcode::kMaximum) {
      // ReLU (cublasLt).
      const Instruction* c = BroadcastOfScalarConstant(other);
      if (!lt || c == nullptr || !SupportsEpilogueFusion(type) || g->relu ||
          c->literal().GetAsDouble(0) != 0) {
        return;
      }
      g->relu = true;
    } else {
      return;
    }
    g->end = u;
  }
}

// JSON number: integral values print as integers ("1", not "1.0").
ordered_json Number(double v) {
  if (std::trunc(v) == v && std::abs(v) < 9.0e15) {
    return ordered_json(static_cast<int64_t>(v));
  }
  return ordered_json(v);
}

ordered_json DimList(const std::vector<int64_t>& dims) {
  ordered_json a = ordered_json::array();
  for (int64_t d : dims) a.push_back(StrCat(d));
  return a;
}

std::string BackendConfig(const Gemm& g) {
  const InstructionAttrs& a = g.dot->attrs();
  const DotDimensionNumbers& d = *a.dot_dnums;
  ordered_json dnums;
  dnums["lhs_contracting_dimensions"] = DimList(d.lhs_contracting_dimensions);
  dnums["rhs_contracting_dimensions"] = DimList(d.rhs_contracting_dimensions);
  dnums["lhs_batch_dimensions"] = DimList(d.lhs_batch_dimensions);
  dnums["rhs_batch_dimensions"] = DimList(d.rhs_batch_dimensions);
  ordered_json precision;
  ordered_json ops = ordered_json::array();
  for (int i = 0; i < 2; ++i) {
    Precision p = i < static_cast<int>(a.operand_precision.size())
                      ? a.operand_precision[i]
                      : Precision::kDefault;
    std::string name(PrecisionName(p));
    for (char& ch : name) {
      ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    ops.push_back(name);
  }
  precision["operand_precision"] = ops;
  std::string algorithm = "ALG_UNSET";
  if (!a.algorithm.empty()) {
    algorithm = "ALG_";
    for (char ch : a.algorithm) {
      algorithm.push_back(
          static_cast<char>(std::toupper(static_cast<unsigned char>(ch))));
    }
  }
  precision["algorithm"] = algorithm;
  const char* epilogue = g.vector_bias != nullptr
                             ? (g.relu ? "BIAS_RELU" : "BIAS")
                         : g.relu ? "RELU"
                                  : "DEFAULT";
  ordered_json cfg;
  cfg["alpha_real"] = Number(g.alpha.real());
  cfg["alpha_imag"] = Number(g.alpha.imag());
  cfg["beta"] = Number(g.matrix_bias != nullptr ? 1 : 0);
  cfg["dot_dimension_numbers"] = dnums;
  cfg["precision_config"] = precision;
  cfg["epilogue"] = epilogue;
  cfg["damax_output"] = false;
  cfg["grad_x"] = false;
  cfg["grad_y"] = false;
  ordered_json root;
  root["gemm_backend_config"] = cfg;
  return root.dump();
}

absl::StatusOr<bool> RewriteDot(const GemmRewriterOptions& options,
                                Instruction* dot, Rewriter& rw) {
  if (!IsGemm(dot)) return false;
  // As XLA, s8 GEMMs stay on the legacy call.
  const bool lt =
      options.cublaslt && dot->operand(0)->shape().element_type() != PT::kS8;
  Gemm g;
  g.dot = dot;
  g.end = dot;
  if (options.fuse_epilogues) MatchEpilogue(lt, &g);

  std::vector<Instruction*> operands = {dot->operand(0), dot->operand(1)};
  if (g.matrix_bias != nullptr) operands.push_back(g.matrix_bias);
  if (g.vector_bias != nullptr) operands.push_back(g.vector_bias);
  Shape value = dot->shape();
  Shape workspace(PT::kS8, {options.workspace_bytes});
  if (!value.has_layout()) workspace.clear_layout();
  auto call = std::make_unique<Instruction>(Opcode::kCustomCall,
                                            Shape::Tuple({value, workspace}));
  for (Instruction* o : operands) call->AppendOperand(o);
  InstructionAttrs* attrs = call->mutable_attrs();
  attrs->custom_call_target = lt ? kLtMatmulTarget : kGemmTarget;
  attrs->has_custom_call_target = true;
  if (g.matrix_bias != nullptr && g.alias_bias) {
    attrs->output_to_operand_aliasing.push_back(OutputOperandAlias{{0}, 2, {}});
    attrs->has_output_to_operand_aliasing = true;
  }
  call->set_backend_config(BackendConfig(g));
  if (dot->has_metadata()) call->set_metadata(dot->metadata());
  const bool batched = !dot->attrs().dot_dnums->lhs_batch_dimensions.empty();
  call->set_name(rw.module()->UniqueInstructionName(lt ? "cublas-lt-matmul"
                                                    : batched
                                                        ? "cublas-batch-gemm"
                                                        : "cublas-gemm"));
  Instruction* added = rw.AddInstruction(dot->parent(), std::move(call));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * result,
                          MakeGetTupleElement(rw, added, 0));
  return rw.ReplaceInstruction(g.end, result);
}

}  // namespace

absl::StatusOr<bool> GemmRewriter::RunWith(Module* module, Rewriter& rw) {
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (inst->opcode() != Opcode::kDot) return false;
        return RewriteDot(options_, inst, rw);
      });
}

absl::Status GemmRewriter::SetOption(std::string_view key,
                                     std::string_view value) {
  if (key == "cublaslt") {
    HLOGYM_ASSIGN_OR_RETURN(options_.cublaslt, ParseBoolOption(key, value));
    return absl::OkStatus();
  }
  if (key == "fuse_epilogues") {
    HLOGYM_ASSIGN_OR_RETURN(options_.fuse_epilogues,
                            ParseBoolOption(key, value));
    return absl::OkStatus();
  }
  if (key == "workspace_bytes") {
    int64_t v = 0;
    auto [ptr, ec] =
        std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size() || v < 0) {
      return absl::InvalidArgumentError(StrCat(
          "option 'workspace_bytes' takes a byte count, not '", value, "'"));
    }
    options_.workspace_bytes = v;
    return absl::OkStatus();
  }
  return Pass::SetOption(key, value);
}

std::vector<std::string> GemmRewriter::OptionNames() const {
  return {"cublaslt", "fuse_epilogues", "workspace_bytes"};
}

}  // namespace hlogym
