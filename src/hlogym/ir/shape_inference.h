// Result-shape rules of HLO operations, after XLA's ShapeInference.
//
// Each function checks the operand shapes and attributes of one operation
// and returns the shape the operation produces, or an InvalidArgument error
// whose message names the broken rule (without any instruction prefix). As
// in XLA, operands may differ in floating-point precision wherever XLA's
// inference allows it; the verifier decides whether that is acceptable.
#ifndef HLOGYM_IR_SHAPE_INFERENCE_H_
#define HLOGYM_IR_SHAPE_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/ir/attributes.h"
#include "hlogym/ir/opcode.h"
#include "hlogym/ir/shape.h"

namespace hlogym {

class Computation;

// Parameter shapes and root shape of a computation.
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
};
// Parameters are taken by parameter number; missing numbers stay invalid.
ProgramShape ComputeProgramShape(const Computation& computation);

// ---- Shape predicates shared with the verifier.

// Same element type, where any two floating-point types count as the same.
bool SameElementTypeIgnoringFpPrecision(const Shape& a, const Shape& b);
// The more precise of two element types (XLA's HigherPrecisionElementType).
PrimitiveType HigherPrecisionElementType(PrimitiveType a, PrimitiveType b);
// Both arrays of the same rank with compatible dimension sizes.
bool CompatibleIgnoringElementType(const Shape& a, const Shape& b);
// Shape::Compatible, or CompatibleIgnoringFpPrecision when `ignore_fp`.
bool CompatibleShapes(const Shape& a, const Shape& b, bool ignore_fp);
// Shape text for messages: with layouts only when some are not the default.
std::string ShapeText(const Shape& s);

// ---- Elementwise operations.
absl::StatusOr<Shape> InferUnaryOpShape(Opcode opcode, const Shape& operand);
absl::StatusOr<Shape> InferBinaryOpShape(Opcode opcode, const Shape& lhs,
                                         const Shape& rhs);
// select(pred, on_true, on_false) and clamp(min, operand, max).
absl::StatusOr<Shape> InferTernaryOpShape(Opcode opcode, const Shape& a,
                                          const Shape& b, const Shape& c);
absl::StatusOr<Shape> InferConvertShape(const Shape& operand,
                                        PrimitiveType new_type);
absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand,
                                               PrimitiveType new_type);
absl::StatusOr<Shape> InferStochasticConvertShape(const Shape& operand,
                                                  const Shape& random,
                                                  PrimitiveType new_type);
absl::StatusOr<Shape> InferReducePrecisionShape(const Shape& operand,
                                                int64_t exponent_bits,
                                                int64_t mantissa_bits);

// ---- Data movement.
// HLO broadcast: checks `dimensions` against operand and output shapes and
// returns the output shape.
absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand,
                                          const Shape& output,
                                          std::span<const int64_t> dimensions);
// Reshape to `output` (element type and count must agree).
absl::StatusOr<Shape> InferReshapeShape(const Shape& operand,
                                        const Shape& output);
absl::StatusOr<Shape> InferTransposeShape(const Shape& operand,
                                          std::span<const int64_t> dims);
absl::StatusOr<Shape> InferReverseShape(const Shape& operand,
                                        std::span<const int64_t> dims);
absl::StatusOr<Shape> InferSliceShape(const Shape& operand,
                                      const std::vector<SliceDimension>& slice);
absl::StatusOr<Shape> InferDynamicSliceShape(
    const Shape& operand, std::span<const Shape* const> index_shapes,
    std::span<const int64_t> slice_sizes);
absl::StatusOr<Shape> InferDynamicUpdateSliceShape(
    const Shape& operand, const Shape& update,
    std::span<const Shape* const> index_shapes);
absl::StatusOr<Shape> InferConcatenateShape(
    std::span<const Shape* const> operands, int64_t dimension);
absl::StatusOr<Shape> InferPadShape(const Shape& operand,
                                    const Shape& padding_value,
                                    const PaddingConfig& padding);
absl::StatusOr<Shape> InferGatherShape(const Shape& operand,
                                       const Shape& start_indices,
                                       const GatherDimensionNumbers& dnums,
                                       std::span<const int64_t> slice_sizes);
// operands = N inputs, the indices, N updates.
absl::StatusOr<Shape> InferScatterShape(std::span<const Shape* const> operands,
                                        const ProgramShape& to_apply,
                                        const ScatterDimensionNumbers& dnums);
absl::StatusOr<Shape> InferGetTupleElementShape(const Shape& tuple,
                                                int64_t index);
absl::StatusOr<Shape> InferTupleShape(std::span<const Shape* const> operands);

// ---- Reductions and windows.
// operands = N inputs followed by N init values.
absl::StatusOr<Shape> InferReduceShape(std::span<const Shape* const> operands,
                                       std::span<const int64_t> dimensions,
                                       const ProgramShape& to_apply);
absl::StatusOr<Shape> InferReduceWindowShape(
    std::span<const Shape* const> operands, const Window& window,
    const ProgramShape& to_apply);
absl::StatusOr<Shape> InferSelectAndScatterShape(
    const Shape& operand, const ProgramShape& select, const Window& window,
    const Shape& source, const Shape& init_value, const ProgramShape& scatter);
// Output shape of a window over `base` (reduce-window, convolution).
absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base,
                                             const Window& window,
                                             PrimitiveType element_type);
absl::StatusOr<Shape> InferMapShape(std::span<const Shape* const> operands,
                                    const ProgramShape& to_apply);
absl::StatusOr<Shape> InferSortShape(std::span<const Shape* const> operands,
                                     int64_t dimension,
                                     const ProgramShape& compare);
absl::StatusOr<Shape> InferTopKShape(const Shape& operand, int64_t k);

// ---- Contractions.
// `preferred` is the element type the instruction declares, if any.
absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const DotDimensionNumbers& dnums,
                                    std::optional<PrimitiveType> preferred);
absl::StatusOr<Shape> InferRaggedDotShape(
    const Shape& lhs, const Shape& rhs, const Shape& group_sizes,
    const DotDimensionNumbers& dnums, const RaggedDotDimensionNumbers& ragged,
    std::optional<PrimitiveType> preferred);
absl::StatusOr<Shape> InferScaledDotShape(
    const Shape& lhs, const Shape& rhs, const Shape& lhs_scale,
    const Shape& rhs_scale, const DotDimensionNumbers& dnums,
    std::optional<PrimitiveType> preferred);
absl::StatusOr<Shape> InferConvolutionShape(
    const Shape& lhs, const Shape& rhs, int64_t feature_group_count,
    int64_t batch_group_count, const Window& window,
    const ConvolutionDimensionNumbers& dnums,
    std::optional<PrimitiveType> preferred);

// ---- Control flow.
absl::StatusOr<Shape> InferCallShape(std::span<const Shape* const> operands,
                                     const ProgramShape& to_apply);
absl::StatusOr<Shape> InferWhileShape(const ProgramShape& condition,
                                      const ProgramShape& body,
                                      const Shape& init);
// branch_operands[j] is the operand passed to branch j.
absl::StatusOr<Shape> InferConditionalShape(
    const Shape& branch_index, std::span<const ProgramShape> branches,
    std::span<const Shape* const> branch_operands);

// ---- Collectives.
absl::StatusOr<Shape> InferAllGatherShape(
    std::span<const Shape* const> operands, int64_t dimension,
    int64_t shard_count);
absl::StatusOr<Shape> InferAllReduceShape(
    std::span<const Shape* const> operands);
absl::StatusOr<Shape> InferReduceScatterShape(
    std::span<const Shape* const> operands, int64_t dimension,
    int64_t shard_count);
absl::StatusOr<Shape> InferAllToAllShape(const Shape& operand,
                                         int64_t split_dimension,
                                         int64_t concat_dimension,
                                         int64_t split_count);
absl::StatusOr<Shape> InferAllToAllTupleShape(
    std::span<const Shape* const> operands);
absl::StatusOr<Shape> InferCollectivePermuteShape(
    std::span<const Shape* const> operands, bool in_place);

// ---- Linear algebra and misc.
absl::StatusOr<Shape> InferBatchNormTrainingShape(const Shape& operand,
                                                  const Shape& scale,
                                                  const Shape& offset,
                                                  int64_t feature_index);
absl::StatusOr<Shape> InferBatchNormInferenceShape(
    const Shape& operand, const Shape& scale, const Shape& offset,
    const Shape& mean, const Shape& variance, int64_t feature_index);
absl::StatusOr<Shape> InferBatchNormGradShape(
    const Shape& operand, const Shape& scale, const Shape& mean,
    const Shape& variance, const Shape& output_grad, int64_t feature_index);
absl::StatusOr<Shape> InferFftShape(const Shape& operand, FftType type,
                                    std::span<const int64_t> fft_length);
absl::StatusOr<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b,
                                                bool left_side);
absl::StatusOr<Shape> InferCholeskyShape(const Shape& a);
absl::StatusOr<Shape> InferGetDimensionSizeShape(const Shape& operand,
                                                 int64_t dimension);
absl::StatusOr<Shape> InferSetDimensionSizeShape(const Shape& operand,
                                                 const Shape& value,
                                                 int64_t dimension);

}  // namespace hlogym

#endif  // HLOGYM_IR_SHAPE_INFERENCE_H_
