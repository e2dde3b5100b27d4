// HLO opcodes: the 133 of XLA's text format plus HloGym's `alternatives`.
#ifndef HLOGYM_IR_OPCODE_H_
#define HLOGYM_IR_OPCODE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace hlogym {

// X(enum, text, arity) with arity -1 for variadic.
#define HLOGYM_OPCODE_LIST(X)                                \
  X(kAbs, "abs", 1)                                          \
  X(kAcos, "acos", 1)                                        \
  X(kAcosh, "acosh", 1)                                      \
  X(kAdd, "add", 2)                                          \
  X(kAddDependency, "add-dependency", 2)                     \
  X(kAfterAll, "after-all", -1)                              \
  X(kAllGather, "all-gather", -1)                            \
  X(kAllGatherDone, "all-gather-done", 1)                    \
  X(kAllGatherStart, "all-gather-start", -1)                 \
  X(kAllReduce, "all-reduce", -1)                            \
  X(kAllReduceDone, "all-reduce-done", 1)                    \
  X(kAllReduceStart, "all-reduce-start", -1)                 \
  X(kAllToAll, "all-to-all", -1)                             \
  X(kAlternatives, "alternatives", -1)                       \
  X(kAnd, "and", 2)                                          \
  X(kAsin, "asin", 1)                                        \
  X(kAsinh, "asinh", 1)                                      \
  X(kAsyncDone, "async-done", -1)                            \
  X(kAsyncStart, "async-start", -1)                          \
  X(kAsyncUpdate, "async-update", -1)                        \
  X(kAtan2, "atan2", 2)                                      \
  X(kAtanh, "atanh", 1)                                      \
  X(kBatchNormGrad, "batch-norm-grad", 5)                    \
  X(kBatchNormInference, "batch-norm-inference", 5)          \
  X(kBatchNormTraining, "batch-norm-training", 3)            \
  X(kBitcast, "bitcast", 1)                                  \
  X(kBitcastConvert, "bitcast-convert", 1)                   \
  X(kBroadcast, "broadcast", 1)                              \
  X(kCall, "call", -1)                                       \
  X(kCbrt, "cbrt", 1)                                        \
  X(kCeil, "ceil", 1)                                        \
  X(kCholesky, "cholesky", 1)                                \
  X(kClamp, "clamp", 3)                                      \
  X(kCollectiveBroadcast, "collective-broadcast", -1)        \
  X(kCollectivePermute, "collective-permute", -1)            \
  X(kCollectivePermuteDone, "collective-permute-done", 1)    \
  X(kCollectivePermuteStart, "collective-permute-start", -1) \
  X(kCompare, "compare", 2)                                  \
  X(kComplex, "complex", 2)                                  \
  X(kConcatenate, "concatenate", -1)                         \
  X(kConditional, "conditional", -1)                         \
  X(kConstant, "constant", 0)                                \
  X(kConvert, "convert", 1)                                  \
  X(kConvolution, "convolution", 2)                          \
  X(kCopy, "copy", 1)                                        \
  X(kCopyDone, "copy-done", 1)                               \
  X(kCopyStart, "copy-start", 1)                             \
  X(kCosh, "cosh", 1)                                        \
  X(kCosine, "cosine", 1)                                    \
  X(kCountLeadingZeros, "count-leading-zeros", 1)            \
  X(kCustomCall, "custom-call", -1)                          \
  X(kDivide, "divide", 2)                                    \
  X(kDomain, "domain", 1)                                    \
  X(kDot, "dot", 2)                                          \
  X(kDynamicReshape, "dynamic-reshape", -1)                  \
  X(kDynamicSlice, "dynamic-slice", -1)                      \
  X(kDynamicUpdateSlice, "dynamic-update-slice", -1)         \
  X(kErf, "erf", 1)                                          \
  X(kExp, "exponential", 1)                                  \
  X(kExpm1, "exponential-minus-one", 1)                      \
  X(kFft, "fft", 1)                                          \
  X(kFloor, "floor", 1)                                      \
  X(kFusion, "fusion", -1)                                   \
  X(kGather, "gather", 2)                                    \
  X(kGetDimensionSize, "get-dimension-size", 1)              \
  X(kGetTupleElement, "get-tuple-element", 1)                \
  X(kImag, "imag", 1)                                        \
  X(kInfeed, "infeed", 1)                                    \
  X(kIota, "iota", 0)                                        \
  X(kIsFinite, "is-finite", 1)                               \
  X(kLog, "log", 1)                                          \
  X(kLog1p, "log-plus-one", 1)                               \
  X(kLogistic, "logistic", 1)                                \
  X(kMap, "map", -1)                                         \
  X(kMaximum, "maximum", 2)                                  \
  X(kMinimum, "minimum", 2)                                  \
  X(kMulhi, "mulhi", 2)                                      \
  X(kMultiply, "multiply", 2)                                \
  X(kNegate, "negate", 1)                                    \
  X(kNot, "not", 1)                                          \
  X(kOptimizationBarrier, "opt-barrier", 1)                  \
  X(kOr, "or", 2)                                            \
  X(kOutfeed, "outfeed", 2)                                  \
  X(kPad, "pad", 2)                                          \
  X(kParameter, "parameter", 0)                              \
  X(kPartitionId, "partition-id", 0)                         \
  X(kPopulationCount, "popcnt", 1)                           \
  X(kPower, "power", 2)                                      \
  X(kRaggedAllToAll, "ragged-all-to-all", 6)                 \
  X(kRaggedDot, "ragged-dot", 3)                             \
  X(kReal, "real", 1)                                        \
  X(kRecv, "recv", 1)                                        \
  X(kRecvDone, "recv-done", 1)                               \
  X(kReduce, "reduce", -1)                                   \
  X(kReducePrecision, "reduce-precision", 1)                 \
  X(kReduceScatter, "reduce-scatter", -1)                    \
  X(kReduceWindow, "reduce-window", -1)                      \
  X(kRemainder, "remainder", 2)                              \
  X(kReplicaId, "replica-id", 0)                             \
  X(kReshape, "reshape", 1)                                  \
  X(kReverse, "reverse", 1)                                  \
  X(kRng, "rng", -1)                                         \
  X(kRngBitGenerator, "rng-bit-generator", 1)                \
  X(kRngGetAndUpdateState, "rng-get-and-update-state", 0)    \
  X(kRoundNearestAfz, "round-nearest-afz", 1)                \
  X(kRoundNearestEven, "round-nearest-even", 1)              \
  X(kRsqrt, "rsqrt", 1)                                      \
  X(kScaledDot, "scaled-dot", 4)                             \
  X(kScan, "scan", -1)                                       \
  X(kScatter, "scatter", -1)                                 \
  X(kSelect, "select", 3)                                    \
  X(kSelectAndScatter, "select-and-scatter", 3)              \
  X(kSend, "send", 2)                                        \
  X(kSendDone, "send-done", 1)                               \
  X(kSetDimensionSize, "set-dimension-size", 2)              \
  X(kShiftLeft, "shift-left", 2)                             \
  X(kShiftRightArithmetic, "shift-right-arithmetic", 2)      \
  X(kShiftRightLogical, "shift-right-logical", 2)            \
  X(kSign, "sign", 1)                                        \
  X(kSin, "sine", 1)                                         \
  X(kSinh, "sinh", 1)                                        \
  X(kSlice, "slice", 1)                                      \
  X(kSort, "sort", -1)                                       \
  X(kSqrt, "sqrt", 1)                                        \
  X(kStochasticConvert, "stochastic-convert", 2)             \
  X(kSubtract, "subtract", 2)                                \
  X(kTan, "tan", 1)                                          \
  X(kTanh, "tanh", 1)                                        \
  X(kTopK, "topk", 1)                                        \
  X(kTranspose, "transpose", 1)                              \
  X(kTriangularSolve, "triangular-solve", 2)                 \
  X(kTuple, "tuple", -1)                                     \
  X(kWhile, "while", 1)                                      \
  X(kXor, "xor", 2)

enum class Opcode : uint8_t {
#define HLOGYM_DECLARE_OPCODE(e, s, a) e,
  HLOGYM_OPCODE_LIST(HLOGYM_DECLARE_OPCODE)
#undef HLOGYM_DECLARE_OPCODE
      kNumOpcodes,
};

constexpr int kNumOpcodes = static_cast<int>(Opcode::kNumOpcodes);

std::string_view OpcodeName(Opcode op);
std::optional<Opcode> ParseOpcode(std::string_view name);
// Fixed operand count, or -1 when variadic.
int OpcodeArity(Opcode op);

bool IsUnaryElementwise(Opcode op);
bool IsBinaryElementwise(Opcode op);
bool IsTernaryElementwise(Opcode op);  // select, clamp
bool IsElementwise(Opcode op);         // any of the above, plus convert and co.
// Opcodes whose result shape the text parser may infer when omitted.
bool OpcodeShapeInferable(Opcode op);
// Opcodes that take a `result_accuracy` attribute.
bool IsTranscendental(Opcode op);
// Collective operations (incl. their async start forms).
bool IsCollective(Opcode op);
// Async "-start"/"-done" opcode pairs (all-reduce-start, copy-start, ...).
bool IsAsyncStartOpcode(Opcode op);
bool IsAsyncDoneOpcode(Opcode op);

}  // namespace hlogym

#endif  // HLOGYM_IR_OPCODE_H_
