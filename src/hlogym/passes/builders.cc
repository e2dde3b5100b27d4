#include "hlogym/passes/builders.h"

#include "hlogym/ir/shape_inference.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {

Shape WithElementType(Shape shape, PrimitiveType type) {
  shape.set_element_type(type);
  if (shape.has_layout() && shape.layout().tail().element_size_in_bits != 0) {
    const int bits = BitWidth(type);
    shape.mutable_layout()->mutable_tail().element_size_in_bits =
        bits < 8 ? bits : 0;
  }
  return shape;
}

namespace {

// Default layout on arrays when the reference has a layout.
Shape WithLayoutOf(Shape s, const Shape& reference) {
  if (reference.has_layout() && s.IsArray()) {
    s.SetDefaultLayout();
  } else if (!reference.has_layout()) {
    s.clear_layout();
  }
  return s;
}

Instruction* Add(Rewriter& rw, Computation* c,
                 std::unique_ptr<Instruction> inst) {
  return rw.AddInstruction(c, std::move(inst));
}

std::unique_ptr<Instruction> New(Opcode op, Shape shape,
                                 std::span<Instruction* const> operands) {
  auto inst = std::make_unique<Instruction>(op, std::move(shape));
  inst->mutable_operands_reserve(operands.size());
  for (Instruction* o : operands) inst->AppendOperand(o);
  return inst;
}

absl::Status NotNull(const Instruction* x, const char* what) {
  if (x == nullptr) {
    return absl::InvalidArgumentError(StrCat(what, ": null operand"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Instruction*> MakeUnary(Rewriter& rw, Opcode opcode,
                                       Instruction* x) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeUnary"));
  HLOGYM_ASSIGN_OR_RETURN(Shape s, InferUnaryOpShape(opcode, x->shape()));
  Instruction* ops[] = {x};
  return Add(rw, x->parent(), New(opcode, WithLayoutOf(s, x->shape()), ops));
}

absl::StatusOr<Instruction*> MakeBinary(Rewriter& rw, Opcode opcode,
                                        Instruction* a, Instruction* b) {
  HLOGYM_RETURN_IF_ERROR(NotNull(a, "MakeBinary"));
  HLOGYM_RETURN_IF_ERROR(NotNull(b, "MakeBinary"));
  if (opcode == Opcode::kCompare) {
    return absl::InvalidArgumentError("use MakeCompare for compare");
  }
  HLOGYM_ASSIGN_OR_RETURN(Shape s,
                          InferBinaryOpShape(opcode, a->shape(), b->shape()));
  Instruction* ops[] = {a, b};
  return Add(rw, a->parent(), New(opcode, WithLayoutOf(s, a->shape()), ops));
}

absl::StatusOr<Instruction*> MakeTernary(Rewriter& rw, Opcode opcode,
                                         Instruction* a, Instruction* b,
                                         Instruction* c) {
  HLOGYM_RETURN_IF_ERROR(NotNull(a, "MakeTernary"));
  HLOGYM_RETURN_IF_ERROR(NotNull(b, "MakeTernary"));
  HLOGYM_RETURN_IF_ERROR(NotNull(c, "MakeTernary"));
  HLOGYM_ASSIGN_OR_RETURN(
      Shape s, InferTernaryOpShape(opcode, a->shape(), b->shape(), c->shape()));
  Instruction* ops[] = {a, b, c};
  return Add(rw, b->parent(), New(opcode, WithLayoutOf(s, b->shape()), ops));
}

absl::StatusOr<Instruction*> MakeCompare(Rewriter& rw,
                                         ComparisonDirection direction,
                                         Instruction* a, Instruction* b,
                                         ComparisonType type) {
  HLOGYM_RETURN_IF_ERROR(NotNull(a, "MakeCompare"));
  HLOGYM_RETURN_IF_ERROR(NotNull(b, "MakeCompare"));
  HLOGYM_ASSIGN_OR_RETURN(
      Shape s, InferBinaryOpShape(Opcode::kCompare, a->shape(), b->shape()));
  Instruction* ops[] = {a, b};
  auto inst = New(Opcode::kCompare, WithLayoutOf(s, a->shape()), ops);
  inst->set_comparison_direction(direction);
  inst->set_comparison_type(type);
  return Add(rw, a->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakeConvert(Rewriter& rw, Instruction* x,
                                         PrimitiveType type) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeConvert"));
  HLOGYM_ASSIGN_OR_RETURN(Shape s, InferConvertShape(x->shape(), type));
  Instruction* ops[] = {x};
  return Add(rw, x->parent(),
             New(Opcode::kConvert, WithLayoutOf(s, x->shape()), ops));
}

absl::StatusOr<Instruction*> MakeBitcastConvert(Rewriter& rw, Instruction* x,
                                                PrimitiveType type) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeBitcastConvert"));
  HLOGYM_ASSIGN_OR_RETURN(Shape s, InferBitcastConvertShape(x->shape(), type));
  Instruction* ops[] = {x};
  return Add(rw, x->parent(),
             New(Opcode::kBitcastConvert, WithLayoutOf(s, x->shape()), ops));
}

absl::StatusOr<Instruction*> MakeConstant(Rewriter& rw,
                                          Computation* computation,
                                          Literal literal) {
  Shape s = literal.shape();
  auto inst = std::make_unique<Instruction>(Opcode::kConstant, s);
  inst->set_literal(std::move(literal));
  return Add(rw, computation, std::move(inst));
}

absl::StatusOr<Instruction*> MakeScalarConstant(Rewriter& rw,
                                                Computation* computation,
                                                PrimitiveType type,
                                                double value) {
  if (!IsArrayType(type)) {
    return absl::InvalidArgumentError("scalar constant of a non-array type");
  }
  Shape s = Shape::Scalar(type);
  s.SetDefaultLayout();
  Literal lit(s);
  if (IsIntegralType(type) || type == PrimitiveType::kPred) {
    lit.SetFromInt64(0, static_cast<int64_t>(value));
  } else if (IsComplexType(type)) {
    lit.SetComplex(0, {value, 0.0});
  } else {
    lit.SetFromDouble(0, value);
  }
  return MakeConstant(rw, computation, std::move(lit));
}

absl::StatusOr<Instruction*> MakeScalarLike(Rewriter& rw, Instruction* like,
                                            double value) {
  HLOGYM_RETURN_IF_ERROR(NotNull(like, "MakeScalarLike"));
  return MakeScalarConstant(rw, like->parent(), like->shape().element_type(),
                            value);
}

absl::StatusOr<Instruction*> MakeFilledLike(Rewriter& rw, Instruction* like,
                                            double value) {
  HLOGYM_ASSIGN_OR_RETURN(Instruction * scalar,
                          MakeScalarLike(rw, like, value));
  if (like->shape().rank() == 0) return scalar;
  return MakeBroadcastLike(rw, scalar, like->shape(), {});
}

absl::StatusOr<Instruction*> MakeIota(Rewriter& rw, Computation* computation,
                                      const Shape& shape, int64_t dimension) {
  if (!shape.IsArray() || dimension < 0 || dimension >= shape.rank()) {
    return absl::InvalidArgumentError("MakeIota: bad dimension");
  }
  auto inst = std::make_unique<Instruction>(Opcode::kIota, shape);
  inst->set_int_attr(dimension);
  return Add(rw, computation, std::move(inst));
}

absl::StatusOr<Instruction*> MakeBroadcast(
    Rewriter& rw, Instruction* x, std::span<const int64_t> out_dims,
    std::span<const int64_t> dimensions) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeBroadcast"));
  Shape out(x->shape().element_type(),
            DimVector(out_dims.begin(), out_dims.end()));
  HLOGYM_ASSIGN_OR_RETURN(Shape s,
                          InferBroadcastShape(x->shape(), out, dimensions));
  Instruction* ops[] = {x};
  auto inst = New(Opcode::kBroadcast, WithLayoutOf(s, x->shape()), ops);
  inst->set_dimensions(DimVector(dimensions.begin(), dimensions.end()));
  return Add(rw, x->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakeBroadcastLike(
    Rewriter& rw, Instruction* x, const Shape& like,
    std::span<const int64_t> dimensions) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeBroadcastLike"));
  HLOGYM_ASSIGN_OR_RETURN(
      Instruction * b,
      MakeBroadcast(rw, x,
                    std::span<const int64_t>(like.dimensions().data(),
                                             like.dimensions().size()),
                    dimensions));
  if (like.has_layout()) *b->mutable_shape()->mutable_layout() = like.layout();
  return b;
}

absl::StatusOr<Instruction*> MakeReshape(Rewriter& rw, Instruction* x,
                                         std::span<const int64_t> out_dims) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeReshape"));
  Shape out(x->shape().element_type(),
            DimVector(out_dims.begin(), out_dims.end()));
  HLOGYM_ASSIGN_OR_RETURN(Shape s, InferReshapeShape(x->shape(), out));
  Instruction* ops[] = {x};
  return Add(rw, x->parent(),
             New(Opcode::kReshape, WithLayoutOf(s, x->shape()), ops));
}

absl::StatusOr<Instruction*> MakeBitcast(Rewriter& rw, Instruction* x,
                                         const Shape& shape) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeBitcast"));
  Instruction* ops[] = {x};
  return Add(rw, x->parent(), New(Opcode::kBitcast, shape, ops));
}

absl::StatusOr<Instruction*> MakeTranspose(Rewriter& rw, Instruction* x,
                                           std::span<const int64_t> perm) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeTranspose"));
  HLOGYM_ASSIGN_OR_RETURN(Shape s, InferTransposeShape(x->shape(), perm));
  Instruction* ops[] = {x};
  auto inst = New(Opcode::kTranspose, WithLayoutOf(s, x->shape()), ops);
  inst->set_dimensions(DimVector(perm.begin(), perm.end()));
  return Add(rw, x->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakeReverse(Rewriter& rw, Instruction* x,
                                         std::span<const int64_t> dims) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeReverse"));
  HLOGYM_ASSIGN_OR_RETURN(Shape s, InferReverseShape(x->shape(), dims));
  Instruction* ops[] = {x};
  auto inst = New(Opcode::kReverse, WithLayoutOf(s, x->shape()), ops);
  inst->set_dimensions(DimVector(dims.begin(), dims.end()));
  return Add(rw, x->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakeSlice(Rewriter& rw, Instruction* x,
                                       std::span<const int64_t> starts,
                                       std::span<const int64_t> limits,
                                       std::span<const int64_t> strides) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeSlice"));
  if (starts.size() != limits.size() || starts.size() != strides.size()) {
    return absl::InvalidArgumentError("MakeSlice: ranks differ");
  }
  std::vector<SliceDimension> slice(starts.size());
  for (size_t i = 0; i < starts.size(); ++i) {
    slice[i] = {starts[i], limits[i], strides[i]};
  }
  HLOGYM_ASSIGN_OR_RETURN(Shape s, InferSliceShape(x->shape(), slice));
  Instruction* ops[] = {x};
  auto inst = New(Opcode::kSlice, WithLayoutOf(s, x->shape()), ops);
  inst->mutable_attrs()->slice = std::move(slice);
  return Add(rw, x->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakeDynamicSlice(
    Rewriter& rw, Instruction* x, std::span<Instruction* const> indices,
    std::span<const int64_t> sizes) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeDynamicSlice"));
  std::vector<const Shape*> index_shapes;
  for (Instruction* i : indices) index_shapes.push_back(&i->shape());
  HLOGYM_ASSIGN_OR_RETURN(
      Shape s, InferDynamicSliceShape(x->shape(), index_shapes, sizes));
  std::vector<Instruction*> ops = {x};
  ops.insert(ops.end(), indices.begin(), indices.end());
  auto inst = New(Opcode::kDynamicSlice, WithLayoutOf(s, x->shape()), ops);
  inst->mutable_attrs()->dynamic_slice_sizes.assign(sizes.begin(), sizes.end());
  return Add(rw, x->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakeDynamicUpdateSlice(
    Rewriter& rw, Instruction* x, Instruction* update,
    std::span<Instruction* const> indices) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeDynamicUpdateSlice"));
  HLOGYM_RETURN_IF_ERROR(NotNull(update, "MakeDynamicUpdateSlice"));
  std::vector<const Shape*> index_shapes;
  for (Instruction* i : indices) index_shapes.push_back(&i->shape());
  HLOGYM_ASSIGN_OR_RETURN(
      Shape s,
      InferDynamicUpdateSliceShape(x->shape(), update->shape(), index_shapes));
  std::vector<Instruction*> ops = {x, update};
  ops.insert(ops.end(), indices.begin(), indices.end());
  return Add(
      rw, x->parent(),
      New(Opcode::kDynamicUpdateSlice, WithLayoutOf(s, x->shape()), ops));
}

absl::StatusOr<Instruction*> MakeConcatenate(
    Rewriter& rw, std::span<Instruction* const> operands, int64_t dimension) {
  if (operands.empty()) {
    return absl::InvalidArgumentError("MakeConcatenate: no operands");
  }
  std::vector<const Shape*> shapes;
  for (Instruction* o : operands) shapes.push_back(&o->shape());
  HLOGYM_ASSIGN_OR_RETURN(Shape s, InferConcatenateShape(shapes, dimension));
  auto inst = New(Opcode::kConcatenate, WithLayoutOf(s, operands[0]->shape()),
                  operands);
  inst->set_dimensions({dimension});
  return Add(rw, operands[0]->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakePad(Rewriter& rw, Instruction* x,
                                     Instruction* pad_value,
                                     const PaddingConfig& padding) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakePad"));
  HLOGYM_RETURN_IF_ERROR(NotNull(pad_value, "MakePad"));
  HLOGYM_ASSIGN_OR_RETURN(
      Shape s, InferPadShape(x->shape(), pad_value->shape(), padding));
  Instruction* ops[] = {x, pad_value};
  auto inst = New(Opcode::kPad, WithLayoutOf(s, x->shape()), ops);
  inst->mutable_attrs()->padding = padding;
  inst->mutable_attrs()->has_padding = true;
  return Add(rw, x->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakeGetTupleElement(Rewriter& rw,
                                                 Instruction* tuple,
                                                 int64_t index) {
  HLOGYM_RETURN_IF_ERROR(NotNull(tuple, "MakeGetTupleElement"));
  HLOGYM_ASSIGN_OR_RETURN(Shape s,
                          InferGetTupleElementShape(tuple->shape(), index));
  Instruction* ops[] = {tuple};
  auto inst = New(Opcode::kGetTupleElement, std::move(s), ops);
  inst->set_int_attr(index);
  return Add(rw, tuple->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakeTuple(Rewriter& rw, Computation* computation,
                                       std::span<Instruction* const> elements) {
  std::vector<const Shape*> shapes;
  for (Instruction* e : elements) shapes.push_back(&e->shape());
  HLOGYM_ASSIGN_OR_RETURN(Shape s, InferTupleShape(shapes));
  return Add(rw, computation, New(Opcode::kTuple, std::move(s), elements));
}

absl::StatusOr<Instruction*> MakeDot(Rewriter& rw, Instruction* lhs,
                                     Instruction* rhs,
                                     const DotDimensionNumbers& dnums,
                                     std::optional<PrimitiveType> result_type,
                                     std::vector<Precision> precision) {
  HLOGYM_RETURN_IF_ERROR(NotNull(lhs, "MakeDot"));
  HLOGYM_RETURN_IF_ERROR(NotNull(rhs, "MakeDot"));
  HLOGYM_ASSIGN_OR_RETURN(
      Shape s, InferDotShape(lhs->shape(), rhs->shape(), dnums, result_type));
  if (result_type) s.set_element_type(*result_type);
  Instruction* ops[] = {lhs, rhs};
  auto inst = New(Opcode::kDot, WithLayoutOf(s, lhs->shape()), ops);
  InstructionAttrs* a = inst->mutable_attrs();
  a->dot_dnums = dnums;
  a->operand_precision = std::move(precision);
  return Add(rw, lhs->parent(), std::move(inst));
}

absl::StatusOr<Computation*> MakeScalarReducer(Rewriter& rw, Opcode op,
                                               PrimitiveType type) {
  Shape scalar = Shape::Scalar(type);
  scalar.SetDefaultLayout();
  auto c = std::make_unique<Computation>(
      StrCat(OpcodeName(op), ".", PrimitiveTypeName(type), ".reducer"));
  auto p0 = std::make_unique<Instruction>(Opcode::kParameter, scalar);
  p0->set_int_attr(0);
  p0->set_name("lhs");
  auto p1 = std::make_unique<Instruction>(Opcode::kParameter, scalar);
  p1->set_int_attr(1);
  p1->set_name("rhs");
  Instruction* a = c->AddInstruction(std::move(p0));
  Instruction* b = c->AddInstruction(std::move(p1));
  Shape out = scalar;
  if (op == Opcode::kCompare) {
    return absl::InvalidArgumentError("MakeScalarReducer: compare");
  }
  auto body = std::make_unique<Instruction>(op, out);
  body->AppendOperand(a);
  body->AppendOperand(b);
  body->set_name(std::string(OpcodeName(op)));
  Instruction* root = c->AddInstruction(std::move(body));
  c->set_root_instruction(root);
  return rw.AddComputation(std::move(c));
}

absl::StatusOr<Instruction*> MakeReduce(Rewriter& rw, Instruction* x,
                                        Instruction* init,
                                        std::span<const int64_t> dimensions,
                                        Computation* reducer) {
  HLOGYM_RETURN_IF_ERROR(NotNull(x, "MakeReduce"));
  HLOGYM_RETURN_IF_ERROR(NotNull(init, "MakeReduce"));
  const Shape* shapes[] = {&x->shape(), &init->shape()};
  HLOGYM_ASSIGN_OR_RETURN(
      Shape s,
      InferReduceShape(shapes, dimensions, ComputeProgramShape(*reducer)));
  Instruction* ops[] = {x, init};
  auto inst = New(Opcode::kReduce, WithLayoutOf(s, x->shape()), ops);
  inst->set_dimensions(DimVector(dimensions.begin(), dimensions.end()));
  inst->set_called_computations({reducer});
  return Add(rw, x->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> MakeMap(Rewriter& rw,
                                     std::span<Instruction* const> operands,
                                     Computation* to_apply) {
  if (operands.empty()) return absl::InvalidArgumentError("MakeMap: empty");
  std::vector<const Shape*> shapes;
  for (Instruction* o : operands) shapes.push_back(&o->shape());
  HLOGYM_ASSIGN_OR_RETURN(
      Shape s, InferMapShape(shapes, ComputeProgramShape(*to_apply)));
  auto inst =
      New(Opcode::kMap, WithLayoutOf(s, operands[0]->shape()), operands);
  DimVector dims;
  for (int64_t i = 0; i < s.rank(); ++i) dims.push_back(i);
  inst->set_dimensions(dims);
  inst->set_called_computations({to_apply});
  return Add(rw, operands[0]->parent(), std::move(inst));
}

absl::StatusOr<Instruction*> CloneWithNewOperands(
    Rewriter& rw, const Instruction* inst, const Shape& shape,
    std::span<Instruction* const> operands) {
  std::vector<Instruction*> ops(operands.begin(), operands.end());
  std::unique_ptr<Instruction> clone = inst->CloneWithNewOperands(ops);
  *clone->mutable_shape() = shape;
  clone->set_name("");
  clone->set_unique_id(-1);
  return rw.AddInstruction(inst->parent(), std::move(clone));
}

}  // namespace hlogym
