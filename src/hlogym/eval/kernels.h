// The interpreter's kernels: one function per opcode family, computing an
// instruction's result from its operand literals. The Interpreter
// (interpreter.h) walks the graph and dispatches here.
//
// Conventions shared by every kernel:
// - Literals are logical row-major (see literal.h); a kernel ignores layouts
//   except where the opcode is defined on the physical buffer (bitcast).
// - The result has exactly inst.shape() (tuple results are tuple literals
//   whose elements are arrays).
// - Bad input never crashes: a kernel returns an error naming the
//   instruction when operands do not match what it expects.
#ifndef HLOGYM_EVAL_KERNELS_H_
#define HLOGYM_EVAL_KERNELS_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/instruction.h"
#include "hlogym/ir/literal.h"

namespace hlogym {

// A called computation applied to single elements: reducers, comparators,
// scatter combiners, select-and-scatter's select/scatter, map.
class ScalarFunction {
 public:
  virtual ~ScalarFunction() = default;
  // args[i] points to one element of parameter i's type (ByteWidth bytes,
  // the literal encoding); results[j] receives one element of result j (the
  // root, or element j of a tuple root).
  virtual absl::Status Call(const uint8_t* const* args,
                            uint8_t* const* results) = 0;
  // When the computation is exactly `ROOT r = op(p0, p1)` (or op(p1, p0))
  // for a binary elementwise op on scalars of one type, that op; kernels
  // use it for vectorised fast paths. nullopt otherwise.
  virtual std::optional<Opcode> binary_opcode() const = 0;
};

// What kernels may ask of the interpreter running them.
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  // A ScalarFunction for `c` (owned by the context, valid while the
  // instruction is evaluated). Fails if `c` is not scalar.
  virtual absl::StatusOr<ScalarFunction*> GetScalarFunction(
      const Computation* c) = 0;
  // Kernels whose one instruction can run for minutes (a reduce-window
  // whose window spans the whole input) call this now and then: an error
  // (the run's time limit passed) stops them.
  virtual absl::Status Poll() { return absl::OkStatus(); }
};

using Operands = absl::Span<const Literal* const>;

// ---- elementwise.cc
// True for opcodes EvalElementwise handles.
bool IsElementwiseOpcode(Opcode op);
// Unary, binary and ternary elementwise ops, convert, bitcast-convert (same
// and different widths), compare, select, clamp, reduce-precision,
// is-finite, real/imag/complex, rounding, popcnt/clz, mulhi,
// stochastic-convert. select and clamp accept scalar operands broadcast
// against the array ones as XLA allows.
absl::StatusOr<Literal> EvalElementwise(const Instruction& inst,
                                        Operands operands);
// The same computation on raw element buffers: in[i] points at operand i's
// elements, stride[i] is 1 (array) or 0 (scalar broadcast), n elements are
// written to out. Used by scalar functions and fused loops.
absl::Status ElementwiseKernel(const Instruction& inst,
                               absl::Span<const uint8_t* const> in,
                               absl::Span<const int64_t> stride, uint8_t* out,
                               int64_t n);
// Applies binary elementwise `op` to arrays of `type`: out[i] = a[i] op b[i]
// (out may alias a). For reducers whose binary_opcode() is known.
absl::Status BinaryOpKernel(Opcode op, PrimitiveType type, const uint8_t* a,
                            const uint8_t* b, uint8_t* out, int64_t n);

// ---- data_movement.cc
// broadcast, reshape, bitcast, transpose, copy, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse, iota, get-dimension-size,
// set-dimension-size, dynamic-reshape.
absl::StatusOr<Literal> EvalDataMovement(const Instruction& inst,
                                         Operands operands);
// gather and scatter (variadic; the combiner through ctx).
absl::StatusOr<Literal> EvalGather(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalScatter(const Instruction& inst, Operands operands,
                                    KernelContext& ctx);
// sort (stable or not, several operands, comparator through ctx) and topk.
absl::StatusOr<Literal> EvalSort(const Instruction& inst, Operands operands,
                                 KernelContext& ctx);
absl::StatusOr<Literal> EvalTopK(const Instruction& inst, Operands operands,
                                 KernelContext& ctx);

// ---- contraction.cc
// dot (general dimension numbers), convolution, ragged-dot.
absl::StatusOr<Literal> EvalDot(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalConvolution(const Instruction& inst,
                                        Operands operands);
absl::StatusOr<Literal> EvalRaggedDot(const Instruction& inst,
                                      Operands operands);

// ---- reduction.cc
// reduce and reduce-window (variadic), select-and-scatter.
absl::StatusOr<Literal> EvalReduce(const Instruction& inst, Operands operands,
                                   KernelContext& ctx);
absl::StatusOr<Literal> EvalReduceWindow(const Instruction& inst,
                                         Operands operands, KernelContext& ctx);
absl::StatusOr<Literal> EvalSelectAndScatter(const Instruction& inst,
                                             Operands operands,
                                             KernelContext& ctx);

// ---- linalg.cc
// cholesky, triangular-solve, fft, batch-norm-training/inference/grad.
absl::StatusOr<Literal> EvalLinalg(const Instruction& inst, Operands operands);

}  // namespace hlogym

#endif  // HLOGYM_EVAL_KERNELS_H_
