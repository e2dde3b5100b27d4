// The library calls XLA's GPU backend rewrites dots and convolutions into,
// run on the reference interpreter:
//
//   __cublas$gemm, __cublas$lt$matmul    (a, b[, c][, bias]) ->
//       (epilogue(alpha * dot(a, b) + beta * c + bias), workspace)
//   __cudnn$convForward                  (input, filter) ->
//       (conv_result_scale * conv(input, filter), scratch)
//   __cudnn$convBiasActivationForward    (input, filter, bias[, side]) ->
//       (act(conv_result_scale * conv + side_input_scale * side + bias),
//        scratch)
//
// Dimension numbers, windows and precisions come from the custom call (its
// backend_config for GEMMs, its window= / dim_labels= for convolutions) and
// the products reuse the interpreter's dot and convolution kernels. The
// result is a tuple whose element 0 is the value and whose other elements
// (workspace, scratch) are zeros; a non-tuple result shape is the value
// itself. Malformed configurations are errors naming the instruction.
//
// The interpreter runs these targets without registration: it falls back to
// LibraryCallRegistry() for targets the caller's registry does not know.
#ifndef HLOGYM_EVAL_LIBRARY_CALLS_H_
#define HLOGYM_EVAL_LIBRARY_CALLS_H_

#include "absl/status/statusor.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/ir/instruction.h"
#include "hlogym/ir/literal.h"

namespace hlogym {

inline constexpr char kCublasGemmTarget[] = "__cublas$gemm";
inline constexpr char kCublasLtMatmulTarget[] = "__cublas$lt$matmul";
inline constexpr char kCudnnConvForwardTarget[] = "__cudnn$convForward";
inline constexpr char kCudnnConvBiasActivationForwardTarget[] =
    "__cudnn$convBiasActivationForward";

// __cublas$gemm and __cublas$lt$matmul. backend_config holds
// {"gemm_backend_config": {alpha_real, alpha_imag, beta,
// dot_dimension_numbers, precision_config, epilogue}} (XLA's GpuBackendConfig
// JSON; an object without the wrapper is accepted too). Missing scalars take
// the values of a plain product (alpha 1, beta 0, epilogue DEFAULT); the dot
// dimension numbers are required. Epilogues: DEFAULT, BIAS, RELU,
// BIAS_RELU, GELU, BIAS_GELU (tanh approximation), SILU, BIAS_SILU; the
// bias vector is broadcast along the result's most minor dimension.
absl::StatusOr<Literal> EvalCublasGemm(const Instruction& inst,
                                       Operands operands);

// __cudnn$convForward and __cudnn$convBiasActivationForward. backend_config
// holds {"cudnn_conv_backend_config": {conv_result_scale, activation_mode,
// side_input_scale, leakyrelu_alpha}} (or is empty: scale 1, no
// activation). Activations: kNone, kSigmoid, kRelu, kRelu6, kTanh, kElu,
// kLeakyRelu (names or their enum numbers).
absl::StatusOr<Literal> EvalCudnnConvolution(const Instruction& inst,
                                             Operands operands);

// Registers the four targets above.
void RegisterLibraryCalls(CustomCallRegistry* registry);

// A process-wide registry holding them.
const CustomCallRegistry& LibraryCallRegistry();

}  // namespace hlogym

#endif  // HLOGYM_EVAL_LIBRARY_CALLS_H_
