// Instruction builders for passes.
//
// Each builder checks its operands with the IR's shape inference, creates
// the instruction in the computation of its (first) operand and adds it
// through the Rewriter, so the same pass code works in apply and dry mode.
// Result shapes get the default layout when the reference operand has a
// layout (as XLA's inferred shapes do), and none otherwise.
#ifndef HLOGYM_PASSES_BUILDERS_H_
#define HLOGYM_PASSES_BUILDERS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/ir/module.h"
#include "hlogym/passes/rewriter.h"

namespace hlogym {

// `shape` with element type `type`, its layout kept but for the element
// size in bits, which only sub-byte types carry (E(2) of a u2 layout must
// not stay on the u8 shape it becomes).
Shape WithElementType(Shape shape, PrimitiveType type);

// Elementwise.
absl::StatusOr<Instruction*> MakeUnary(Rewriter& rw, Opcode opcode,
                                       Instruction* x);
absl::StatusOr<Instruction*> MakeBinary(Rewriter& rw, Opcode opcode,
                                        Instruction* a, Instruction* b);
// select(pred, on_true, on_false) and clamp(lo, x, hi).
absl::StatusOr<Instruction*> MakeTernary(Rewriter& rw, Opcode opcode,
                                         Instruction* a, Instruction* b,
                                         Instruction* c);
absl::StatusOr<Instruction*> MakeCompare(
    Rewriter& rw, ComparisonDirection direction, Instruction* a, Instruction* b,
    ComparisonType type = ComparisonType::kDefault);
absl::StatusOr<Instruction*> MakeConvert(Rewriter& rw, Instruction* x,
                                         PrimitiveType type);
absl::StatusOr<Instruction*> MakeBitcastConvert(Rewriter& rw, Instruction* x,
                                                PrimitiveType type);

// Constants. Scalars take a double (integers are converted exactly where
// they fit); `like` variants give x's element type and, for MakeFilledLike,
// x's dimensions (a broadcast of a scalar constant, or the scalar itself).
absl::StatusOr<Instruction*> MakeConstant(Rewriter& rw,
                                          Computation* computation,
                                          Literal literal);
absl::StatusOr<Instruction*> MakeScalarConstant(Rewriter& rw,
                                                Computation* computation,
                                                PrimitiveType type,
                                                double value);
absl::StatusOr<Instruction*> MakeScalarLike(Rewriter& rw, Instruction* like,
                                            double value);
absl::StatusOr<Instruction*> MakeFilledLike(Rewriter& rw, Instruction* like,
                                            double value);
absl::StatusOr<Instruction*> MakeIota(Rewriter& rw, Computation* computation,
                                      const Shape& shape, int64_t dimension);

// Data movement. `dims` are result dimensions.
absl::StatusOr<Instruction*> MakeBroadcast(Rewriter& rw, Instruction* x,
                                           std::span<const int64_t> out_dims,
                                           std::span<const int64_t> dimensions);
// Broadcast x (scalar or matching trailing semantics given by `dimensions`)
// to the shape of `like` (element type stays x's).
absl::StatusOr<Instruction*> MakeBroadcastLike(
    Rewriter& rw, Instruction* x, const Shape& like,
    std::span<const int64_t> dimensions);
absl::StatusOr<Instruction*> MakeReshape(Rewriter& rw, Instruction* x,
                                         std::span<const int64_t> out_dims);
absl::StatusOr<Instruction*> MakeBitcast(Rewriter& rw, Instruction* x,
                                         const Shape& shape);
absl::StatusOr<Instruction*> MakeTranspose(Rewriter& rw, Instruction* x,
                                           std::span<const int64_t> perm);
absl::StatusOr<Instruction*> MakeReverse(Rewriter& rw, Instruction* x,
                                         std::span<const int64_t> dims);
absl::StatusOr<Instruction*> MakeSlice(Rewriter& rw, Instruction* x,
                                       std::span<const int64_t> starts,
                                       std::span<const int64_t> limits,
                                       std::span<const int64_t> strides);
absl::StatusOr<Instruction*> MakeDynamicSlice(
    Rewriter& rw, Instruction* x, std::span<Instruction* const> indices,
    std::span<const int64_t> sizes);
absl::StatusOr<Instruction*> MakeDynamicUpdateSlice(
    Rewriter& rw, Instruction* x, Instruction* update,
    std::span<Instruction* const> indices);
absl::StatusOr<Instruction*> MakeConcatenate(
    Rewriter& rw, std::span<Instruction* const> operands, int64_t dimension);
absl::StatusOr<Instruction*> MakePad(Rewriter& rw, Instruction* x,
                                     Instruction* pad_value,
                                     const PaddingConfig& padding);
absl::StatusOr<Instruction*> MakeGetTupleElement(Rewriter& rw,
                                                 Instruction* tuple,
                                                 int64_t index);
absl::StatusOr<Instruction*> MakeTuple(Rewriter& rw, Computation* computation,
                                       std::span<Instruction* const> elements);

// Contractions and reductions.
absl::StatusOr<Instruction*> MakeDot(
    Rewriter& rw, Instruction* lhs, Instruction* rhs,
    const DotDimensionNumbers& dnums,
    std::optional<PrimitiveType> result_type = std::nullopt,
    std::vector<Precision> precision = {});
// A scalar computation (p0, p1) -> op(p0, p1) of `type`, added to the
// module (one per call; identical ones are shared within a Rewriter run).
absl::StatusOr<Computation*> MakeScalarReducer(Rewriter& rw, Opcode op,
                                               PrimitiveType type);
absl::StatusOr<Instruction*> MakeReduce(Rewriter& rw, Instruction* x,
                                        Instruction* init,
                                        std::span<const int64_t> dimensions,
                                        Computation* reducer);
absl::StatusOr<Instruction*> MakeMap(Rewriter& rw,
                                     std::span<Instruction* const> operands,
                                     Computation* to_apply);

// A copy of `inst` (attributes, called computations) with new operands and
// the given shape, added next to `inst`'s computation.
absl::StatusOr<Instruction*> CloneWithNewOperands(
    Rewriter& rw, const Instruction* inst, const Shape& shape,
    std::span<Instruction* const> operands);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_BUILDERS_H_
