// ConvRewriter: XLA's GPU ConvRewriter for forward convolutions followed by
// the simple fusions of its CudnnFusedConvRewriter.
//
// A forward convolution cuDNN can run becomes
//   gte(custom-call(input, filter), custom_call_target="__cudnn$convForward",
//       window=..., dim_labels=..., index=0)
// whose result is the tuple (value, u8[0]) (cuDNN scratch, sized later by
// the autotuner in XLA), keeping window, dim_labels, feature_group_count
// and operand precisions on the call, with backend_config
//   {"cudnn_conv_backend_config":{"conv_result_scale":1,
//    "activation_mode":"kNone","side_input_scale":0,"leakyrelu_alpha":0}}.
//
// Convolutions rewritten: f16, bf16, f32, f64 (operands of the result's
// type), at most 3 spatial dimensions, no empty operand, static shapes,
// batch_group_count 1, no lhs (base) dilation and no negative padding (XLA
// treats those as backward convolutions or pads them separately), window
// reversal in every spatial dimension or none (2-D) or none at all.
//
// Fused form (non-depthwise convolutions, each value in the chain used only
// by the next): "__cudnn$convBiasActivationForward" with operands (input,
// filter, bias[, side_input]) computing
//   act(conv_result_scale * conv + side_input_scale * side_input + bias)
// from, in order:
//  * multiply(conv, broadcast(scalar constant)) -> conv_result_scale;
//  * add(x, broadcast(v)) with v of rank 1 on the output feature
//    dimension -> bias v; a broadcast scalar -> a bias of that value;
//  * add(x, y) for any other y, once -> side input, side_input_scale 1;
//  * maximum(x, broadcast(0)) -> activation_mode kRelu.
// Without a bias addend the bias is a broadcast zero vector, as XLA makes.
#ifndef HLOGYM_PASSES_CONV_REWRITER_H_
#define HLOGYM_PASSES_CONV_REWRITER_H_

#include <string>
#include <string_view>
#include <vector>

#include "hlogym/passes/pass.h"

namespace hlogym {

struct ConvRewriterOptions {
  // Fold scale, bias, side input and ReLU into the call.
  bool fuse = true;
};

class ConvRewriter : public Pass {
 public:
  explicit ConvRewriter(ConvRewriterOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "conv-rewriter"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

 private:
  ConvRewriterOptions options_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CONV_REWRITER_H_
