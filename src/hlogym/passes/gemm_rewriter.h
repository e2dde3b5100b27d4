// GemmRewriter, after XLA's GPU pass of the same name (with the workspace
// that XLA's later GemmWorkspaceRewriter adds).
//
// A dot that cuBLAS can run becomes
//   gte(custom-call(a, b), custom_call_target="__cublas$gemm", index=0)
// whose result is the tuple (value, s8[4194304]): the value and XLA's
// default cuBLAS workspace (4 MiB, the size XLA reserves before the
// autotuner shrinks it; the cost model does not count it as output). The
// backend_config is XLA's GpuBackendConfig JSON:
//   {"gemm_backend_config":{"alpha_real":1,"alpha_imag":0,"beta":0,
//    "dot_dimension_numbers":{...},"precision_config":{...},
//    "epilogue":"DEFAULT","damax_output":false,"grad_x":false,
//    "grad_y":false}}
// with dimension numbers written as string arrays (protobuf's JSON for
// int64).
//
// Dots rewritten: matrix-matrix and matrix-vector products (each operand
// has batch + 1 or batch + 2 dimensions, one contracting dimension per
// side, a result of rank <= 3, no empty operand), not sparse, static
// shapes, of the types cuBLAS takes: f16, bf16, f32, f64, c64, c128 (same
// type in and out), f16 or bf16 -> f32, s8 x s8 -> s32. As in XLA, a dot
// with a rank-2 transposed operand is left for transpose folding.
//
// Epilogues folded into the call, in XLA's order (each step needs the
// value so far to have that one user):
//  * alpha: multiply by a broadcast scalar constant (the broadcast used
//    only there) scales alpha, while beta is 0 and the epilogue DEFAULT
//    (not for s32 results);
//  * matrix bias: add of a non-broadcast array of the result's shape and
//    type becomes operand 2 with beta=1, while beta is 0 and the epilogue
//    DEFAULT or BIAS (not for s32). The legacy call overwrites the addend,
//    so as in XLA it must have no other user and not be a parameter; the
//    result then aliases it (output_to_operand_aliasing={{0}: (2, {})}).
//  * with option `cublaslt` (XLA's xla_gpu_enable_cublaslt; s8 dots stay on
//    the legacy call) the target is "__cublas$lt$matmul", which also takes
//    a vector bias: add of broadcast(v) with v of rank 1 along the result's
//    most minor dimension -> last operand, epilogue BIAS; and ReLU:
//    maximum(x, broadcast(0)) -> epilogue RELU / BIAS_RELU (both for f16,
//    bf16, f32, f64 results, while the epilogue is DEFAULT, resp. DEFAULT
//    or BIAS). cublasLt may read a shared addend out of place: no aliasing.
//
// The whole chain is replaced by one custom call (apply and dry mode: one
// candidate per dot, the longest chain).
#ifndef HLOGYM_PASSES_GEMM_REWRITER_H_
#define HLOGYM_PASSES_GEMM_REWRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hlogym/passes/pass.h"

namespace hlogym {

struct GemmRewriterOptions {
  // Use cublasLt ("__cublas$lt$matmul") and its vector-bias and ReLU
  // epilogues.
  bool cublaslt = false;
  // Fold scalar multiplies and adds into the call.
  bool fuse_epilogues = true;
  // Bytes of the s8 workspace element of the result tuple.
  int64_t workspace_bytes = 4194304;
};

class GemmRewriter : public Pass {
 public:
  explicit GemmRewriter(GemmRewriterOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "gemm-rewriter"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

 private:
  GemmRewriterOptions options_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_GEMM_REWRITER_H_
