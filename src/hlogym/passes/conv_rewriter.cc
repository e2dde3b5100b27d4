#include "hlogym/passes/conv_rewriter.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/builders.h"

namespace hlogym {
namespace {

using PT = PrimitiveType;

constexpr char kConvForwardTarget[] = "__cudnn$convForward";
constexpr char kConvBiasActivationTarget[] =
    "__cudnn$convBiasActivationForward";

bool NoControlEdges(const Instruction* x) {
  return x->control_predecessors().empty() && x->control_successors().empty();
}

bool IsCudnnFloat(PT t) {
  return t == PT::kF16 || t == PT::kBF16 || t == PT::kF32 || t == PT::kF64;
}

// XLA's CanImplementAsGpuForwardConv, restricted to what lowers to
// __cudnn$convForward directly.
bool IsForwardConv(const Instruction* conv) {
  if (conv->opcode() != Opcode::kConvolution || conv->operand_count() != 2 ||
      !NoControlEdges(conv)) {
    return false;
  }
  const InstructionAttrs& a = conv->attrs();
  if (!a.conv_dnums.has_value() || !a.sparsity_config.empty() ||
      a.batch_group_count != 1 || a.feature_group_count < 1) {
    return false;
  }
  const Shape& out = conv->shape();
  const Shape& in = conv->operand(0)->shape();
  const Shape& filter = conv->operand(1)->shape();
  if (!out.IsArray() || !in.IsArray() || !filter.IsArray() ||
      out.is_dynamic() || in.is_dynamic() || filter.is_dynamic() ||
      in.ElementsIn() == 0 || filter.ElementsIn() == 0) {
    return false;
  }
  const PT t = out.element_type();
  if (!IsCudnnFloat(t) || in.element_type() != t ||
      filter.element_type() != t) {
    return false;
  }
  for (Precision p : a.operand_precision) {
    if (p == Precision::kPackedNibble) return false;
  }
  const ConvolutionDimensionNumbers& d = *a.conv_dnums;
  const size_t spatial = d.input_spatial_dimensions.size();
  // Without spatial dimensions the window may be absent.
  const std::vector<WindowDimension> no_window;
  const std::vector<WindowDimension>& window =
      a.window.has_value() ? a.window->dimensions : no_window;
  if (spatial > 3 || window.size() != spatial ||
      d.output_feature_dimension < 0 ||
      d.output_feature_dimension >= out.rank() ||
      d.input_feature_dimension < 0 || d.input_feature_dimension >= in.rank()) {
    return false;
  }
  int64_t reversed = 0;
  for (const WindowDimension& w : window) {
    if (w.base_dilation != 1 || w.padding_low < 0 || w.padding_high < 0) {
      return false;
    }
    reversed += w.window_reversal ? 1 : 0;
  }
  // cuDNN computes cross-correlation (no reversal) or, for 2-D,
  // convolution (every spatial dimension reversed).
  if (reversed != 0 &&
      !(spatial == 2 && reversed == static_cast<int64_t>(spatial))) {
    return false;
  }
  return true;
}

// Fused cuDNN convolutions are slower for depthwise ones; XLA keeps those
// unfused.
bool IsDepthwise(const Instruction* conv) {
  const int64_t groups = conv->attrs().feature_group_count;
  if (groups == 1) return false;
  const Shape& in = conv->operand(0)->shape();
  return in.dimensions(conv->attrs().conv_dnums->input_feature_dimension) ==
         groups;
}

Instruction* SoleUser(const Instruction* x) {
  if (x->user_count() != 1 || x->IsRoot()) return nullptr;
  Instruction* u = x->users()[0];
  return NoControlEdges(u) ? u : nullptr;
}

Instruction* OtherOperand(const Instruction* u, const Instruction* x) {
  if (u->operand_count() != 2) return nullptr;
  if (u->operand(0) == x && u->operand(1) != x) return u->operand(1);
  if (u->operand(1) == x && u->operand(0) != x) return u->operand(0);
  return nullptr;
}

// broadcast(scalar constant): the constant's value.
std::optional<double> BroadcastScalarConstant(const Instruction* x) {
  if (x->opcode() != Opcode::kBroadcast || x->operand_count() != 1) {
    return std::nullopt;
  }
  const Instruction* c = x->operand(0);
  if (c->opcode() != Opcode::kConstant || !c->shape().IsScalar() ||
      !c->has_literal() || c->literal().is_unknown()) {
    return std::nullopt;
  }
  return c->literal().GetAsDouble(0);
}

struct FusedConv {
  Instruction* conv = nullptr;
  Instruction* end = nullptr;  // replaced by the call
  double scale = 1;
  Instruction* bias = nullptr;  // rank 1, or a scalar to broadcast
  Instruction* side_input = nullptr;
  bool relu = false;
  bool fused() const { return end != conv; }
};

void MatchFusion(FusedConv* f) {
  const Shape& out = f->conv->shape();
  const int64_t feature = f->conv->attrs().conv_dnums->output_feature_dimension;
  while (true) {
    Instruction* u = SoleUser(f->end);
    if (u == nullptr || u->shape().element_type() != out.element_type() ||
        u->shape().dimensions() != out.dimensions()) {
      return;
    }
    Instruction* other = OtherOperand(u, f->end);
    if (other == nullptr) return;
    if (u->opcode() == Opcode::kMultiply) {
      // The scale applies to the convolution itself, before any addend.
      std::optional<double> v = BroadcastScalarConstant(other);
      if (f->end != f->conv || !v || !std::isfinite(*v)) return;
      f->scale = *v;
    } else if (u->opcode() == Opcode::kAdd) {
      // Addends go in before the activation.
      if (f->relu) return;
      const bool is_broadcast =
          other->opcode() == Opcode::kBroadcast && other->operand_count() == 1;
      const bool rank1_bias =
          is_broadcast && other->operand(0)->shape().rank() == 1 &&
          other->dimensions().size() == 1 && other->dimensions(0) == feature;
      const bool rank0_bias = is_broadcast &&
                              other->operand(0)->shape().IsScalar() &&
                              other->dimensions().empty();
      if (f->bias == nullptr && (rank1_bias || rank0_bias)) {
        f->bias = other->operand(0);
      } else if (f->side_input == nullptr) {
        f->side_input = other;
      } else {
        return;
      }
    } else if (u->opcode() == Opcode::kMaximum) {
      std::optional<double> v = BroadcastScalarConstant(other);
      if (f->relu || !v || *v != 0) return;
      f->relu = true;
    } else {
      return;
    }
    f->end = u;
  }
}

// JSON number: integral values print as integers ("1", not "1.0").
nlohmann::ordered_json Number(double v) {
  if (std::trunc(v) == v && std::abs(v) < 9.0e15) {
    return nlohmann::ordered_json(static_cast<int64_t>(v));
  }
  return nlohmann::ordered_json(v);
}

std::string BackendConfig(const FusedConv& f) {
  nlohmann::ordered_json cfg;
  cfg["conv_result_scale"] = Number(f.scale);
  cfg["activation_mode"] = f.relu ? "kRelu" : "kNone";
  cfg["side_input_scale"] = Number(f.side_input != nullptr ? 1 : 0);
  cfg["leakyrelu_alpha"] = 0;
  nlohmann::ordered_json root;
  root["cudnn_conv_backend_config"] = cfg;
  return root.dump();
}

absl::StatusOr<bool> RewriteConv(const ConvRewriterOptions& options,
                                 Instruction* conv, Rewriter& rw) {
  if (!IsForwardConv(conv)) return false;
  FusedConv f;
  f.conv = conv;
  f.end = conv;
  if (options.fuse && !IsDepthwise(conv)) MatchFusion(&f);

  const Shape& out = conv->shape();
  const int64_t feature = conv->attrs().conv_dnums->output_feature_dimension;
  const int64_t features = out.dimensions(feature);
  std::vector<Instruction*> operands = {conv->operand(0), conv->operand(1)};
  if (f.fused()) {
    Instruction* bias = f.bias;
    if (bias == nullptr) {
      HLOGYM_ASSIGN_OR_RETURN(
          bias, MakeScalarConstant(rw, conv->parent(), out.element_type(), 0));
    }
    if (bias->shape().IsScalar()) {
      const int64_t dims[] = {features};
      HLOGYM_ASSIGN_OR_RETURN(bias, MakeBroadcast(rw, bias, dims, {}));
    }
    operands.push_back(bias);
    if (f.side_input != nullptr) operands.push_back(f.side_input);
  }
  Shape scratch(PT::kU8, {0});
  if (!out.has_layout()) scratch.clear_layout();
  auto call = std::make_unique<Instruction>(Opcode::kCustomCall,
                                            Shape::Tuple({out, scratch}));
  for (Instruction* o : operands) call->AppendOperand(o);
  InstructionAttrs attrs;
  attrs.window = conv->attrs().window;
  attrs.conv_dnums = conv->attrs().conv_dnums;
  attrs.feature_group_count = conv->attrs().feature_group_count;
  attrs.batch_group_count = conv->attrs().batch_group_count;
  attrs.operand_precision = conv->attrs().operand_precision;
  attrs.custom_call_target =
      f.fused() ? kConvBiasActivationTarget : kConvForwardTarget;
  attrs.has_custom_call_target = true;
  call->set_attrs(std::move(attrs));
  call->set_backend_config(BackendConfig(f));
  if (conv->has_metadata()) call->set_metadata(conv->metadata());
  call->set_name(rw.module()->UniqueInstructionName(
      f.fused() ? "cudnn-conv-bias-activation" : "cudnn-conv"));
  Instruction* added = rw.AddInstruction(conv->parent(), std::move(call));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * result,
                          MakeGetTupleElement(rw, added, 0));
  return rw.ReplaceInstruction(f.end, result);
}

}  // namespace

absl::StatusOr<bool> ConvRewriter::RunWith(Module* module, Rewriter& rw) {
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (inst->opcode() != Opcode::kConvolution) return false;
        return RewriteConv(options_, inst, rw);
      });
}

absl::Status ConvRewriter::SetOption(std::string_view key,
                                     std::string_view value) {
  if (key != "fuse") return Pass::SetOption(key, value);
  HLOGYM_ASSIGN_OR_RETURN(options_.fuse, ParseBoolOption(key, value));
  return absl::OkStatus();
}

std::vector<std::string> ConvRewriter::OptionNames() const { return {"fuse"}; }

}  // namespace hlogym
