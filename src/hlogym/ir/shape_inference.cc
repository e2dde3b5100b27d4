#include "hlogym/ir/shape_inference.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

constexpr int64_t kUnbounded = Shape::kUnboundedSize;

template <typename... Args>
absl::Status Error(const Args&... args) {
  return absl::InvalidArgumentError(StrCat(args...));
}

std::string_view TypeName(PrimitiveType t) { return PrimitiveTypeName(t); }

std::string IntList(std::span<const int64_t> v) { return IntListToString(v); }

absl::Status ExpectArray(const Shape& s, std::string_view what) {
  if (!s.IsArray()) {
    return Error("expected an array for ", what, ", got ", ShapeText(s));
  }
  return absl::OkStatus();
}

// Dimension sizes agree; an unbounded size '?' agrees with anything.
bool DimEq(int64_t a, int64_t b) {
  return a == b || a == kUnbounded || b == kUnbounded;
}

bool AllUnique(std::span<const int64_t> v) {
  absl::flat_hash_set<int64_t> seen;
  for (int64_t x : v) {
    if (!seen.insert(x).second) return false;
  }
  return true;
}

bool Contains(std::span<const int64_t> v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool InRange(std::span<const int64_t> v, int64_t rank) {
  for (int64_t x : v) {
    if (x < 0 || x >= rank) return false;
  }
  return true;
}

bool IsPermutation(std::span<const int64_t> v, int64_t rank) {
  if (static_cast<int64_t>(v.size()) != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t x : v) {
    if (x < 0 || x >= rank || seen[x]) return false;
    seen[x] = true;
  }
  return true;
}

Shape ChangeElementType(const Shape& s, PrimitiveType t) {
  Shape r = s;
  r.set_element_type(t);
  // Sub-byte element sizes in a layout belong to the old type. Written only
  // when set, so that shapes without a layout tail do not get one.
  if (r.has_layout() && r.layout().tail().element_size_in_bits != 0) {
    r.mutable_layout()->mutable_tail().element_size_in_bits = 0;
  }
  return r;
}

Shape MakeArray(PrimitiveType t, std::span<const int64_t> dims,
                const std::vector<bool>* dynamic = nullptr) {
  Shape s(t, DimVector(dims.begin(), dims.end()));
  if (dynamic != nullptr) {
    for (size_t i = 0; i < dynamic->size() && i < dims.size(); ++i) {
      if ((*dynamic)[i]) s.set_dynamic_dimension(i, true);
    }
  }
  return s;
}

bool IsSigned(PrimitiveType t) {
  return IsSignedIntegralType(t) || IsFloatingPointType(t);
}

// (exponent bits, significand bits) of a floating-point type.
std::pair<int, int> FloatBits(PrimitiveType t) {
  if (t == PrimitiveType::kF32) return {8, 24};
  if (t == PrimitiveType::kF64) return {11, 53};
  if (auto f = SmallFloatFormat(t)) {
    return {f->exponent_bits, f->mantissa_bits + 1};
  }
  return {0, 0};
}

int64_t DilatedBound(int64_t bound, int64_t dilation) {
  if (bound == 0) return 0;
  return (bound - 1) * dilation + 1;
}

int64_t StridedBound(int64_t bound, int64_t window, int64_t stride) {
  if (window > bound) return 0;
  return (bound - window) / stride + 1;
}

// Checks a reducer computation (reduce, reduce-window, scatter,
// select-and-scatter): 2*inputs scalar parameters, accumulators first, and a
// scalar or tuple-of-scalars result matching the accumulators.
absl::Status VerifyReducerShape(const ProgramShape& reducer,
                                std::span<const Shape* const> init_values,
                                std::span<const PrimitiveType> input_types,
                                int64_t inputs) {
  if (static_cast<int64_t>(reducer.parameters.size()) != inputs * 2) {
    return Error("reduction computation must take ", inputs * 2,
                 " parameters, but takes ", reducer.parameters.size());
  }
  const Shape& acc = reducer.result;
  std::vector<const Shape*> accs;
  if (acc.IsArray()) {
    if (inputs != 1) {
      return Error("reduction computation must produce a tuple with ", inputs,
                   " elements, but produces ", ShapeText(acc));
    }
    accs.push_back(&acc);
  } else if (acc.IsTuple()) {
    if (acc.tuple_shapes_size() != inputs) {
      return Error("reduction computation must produce a tuple with ", inputs,
                   " elements, but produces ", ShapeText(acc));
    }
    for (const Shape& e : acc.tuple_shapes()) accs.push_back(&e);
  } else {
    return Error(
        "reduction computation must produce a scalar or a tuple of scalars, "
        "got ",
        ShapeText(acc));
  }
  for (const Shape* e : accs) {
    if (!e->IsArray() || e->rank() != 0) {
      return Error(
          "reduction computation must return a scalar or a tuple of scalars, "
          "got ",
          ShapeText(acc));
    }
  }
  for (int64_t i = 0; i < inputs; ++i) {
    if (!accs[i]->Compatible(reducer.parameters[i])) {
      return Error("reduction computation parameter ", i, " (",
                   ShapeText(reducer.parameters[i]),
                   ") differs from its result ", ShapeText(*accs[i]));
    }
    if (!accs[i]->CompatibleIgnoringFpPrecision(*init_values[i])) {
      return Error("reduction computation accumulator ", ShapeText(*accs[i]),
                   " differs from init value ", ShapeText(*init_values[i]));
    }
    Shape elem = Shape::Scalar(input_types[i]);
    if (!elem.CompatibleIgnoringFpPrecision(reducer.parameters[inputs + i])) {
      return Error("reduction computation parameter ", inputs + i, " (",
                   ShapeText(reducer.parameters[inputs + i]),
                   ") differs from the input element type ", ShapeText(elem));
    }
    if (!accs[i]->CompatibleIgnoringFpPrecision(
            reducer.parameters[inputs + i])) {
      return Error("reduction computation parameter ", inputs + i, " (",
                   ShapeText(reducer.parameters[inputs + i]),
                   ") must match its result ", ShapeText(*accs[i]));
    }
  }
  return absl::OkStatus();
}

// The result element type of a contraction: the declared one when given.
// (XLA's inference rejects integer narrowing, but its verifier accepts such
// dots in practice, e.g. s64 operands accumulated into s32.)
absl::StatusOr<PrimitiveType> MaybeUpcast(
    PrimitiveType from, std::optional<PrimitiveType> preferred) {
  if (!preferred.has_value()) return from;
  return *preferred;
}

// Checks the dot dimension numbers: in range, unique, and contracting and
// batch dimensions of matching sizes.
absl::Status ValidateDotDims(const Shape& lhs, const Shape& rhs,
                             const DotDimensionNumbers& d) {
  if (!InRange(d.lhs_contracting_dimensions, lhs.rank()) ||
      !InRange(d.lhs_batch_dimensions, lhs.rank()) ||
      !InRange(d.rhs_contracting_dimensions, rhs.rank()) ||
      !InRange(d.rhs_batch_dimensions, rhs.rank())) {
    return Error("a dot dimension number is out of range for ", ShapeText(lhs),
                 " and ", ShapeText(rhs));
  }
  std::vector<int64_t> l = d.lhs_contracting_dimensions;
  l.insert(l.end(), d.lhs_batch_dimensions.begin(),
           d.lhs_batch_dimensions.end());
  std::vector<int64_t> r = d.rhs_contracting_dimensions;
  r.insert(r.end(), d.rhs_batch_dimensions.begin(),
           d.rhs_batch_dimensions.end());
  if (!AllUnique(l) || !AllUnique(r)) {
    return Error("a dot dimension number is repeated");
  }
  if (d.lhs_contracting_dimensions.size() !=
      d.rhs_contracting_dimensions.size()) {
    return Error(
        "dot must have the same number of contracting dimensions for lhs and "
        "rhs, got ",
        IntList(d.lhs_contracting_dimensions), " and ",
        IntList(d.rhs_contracting_dimensions));
  }
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    int64_t a = lhs.dimensions(d.lhs_contracting_dimensions[i]);
    int64_t b = rhs.dimensions(d.rhs_contracting_dimensions[i]);
    if (!DimEq(a, b)) {
      return Error(
          "dot contracting dimension sizes do not match: ", ShapeText(lhs),
          " dimension ", d.lhs_contracting_dimensions[i], " vs ",
          ShapeText(rhs), " dimension ", d.rhs_contracting_dimensions[i]);
    }
  }
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size()) {
    return Error(
        "dot must have the same number of batch dimensions for lhs and rhs, "
        "got ",
        IntList(d.lhs_batch_dimensions), " and ",
        IntList(d.rhs_batch_dimensions));
  }
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    int64_t a = lhs.dimensions(d.lhs_batch_dimensions[i]);
    int64_t b = rhs.dimensions(d.rhs_batch_dimensions[i]);
    if (!DimEq(a, b)) {
      return Error("dot batch dimension sizes do not match: ", ShapeText(lhs),
                   " dimension ", d.lhs_batch_dimensions[i], " vs ",
                   ShapeText(rhs), " dimension ", d.rhs_batch_dimensions[i]);
    }
  }
  return absl::OkStatus();
}

// Result dimensions of a dot: batch, lhs free, rhs free (rhs dimensions in
// `rhs_skip` are dropped as well).
void DotResultDims(const Shape& lhs, const Shape& rhs,
                   const DotDimensionNumbers& d,
                   std::span<const int64_t> rhs_skip, DimVector* dims,
                   std::vector<bool>* dynamic) {
  for (int64_t b : d.lhs_batch_dimensions) {
    dims->push_back(lhs.dimensions(b));
    dynamic->push_back(lhs.is_dynamic_dimension(b));
  }
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (!Contains(d.lhs_contracting_dimensions, i) &&
        !Contains(d.lhs_batch_dimensions, i)) {
      dims->push_back(lhs.dimensions(i));
      dynamic->push_back(lhs.is_dynamic_dimension(i));
    }
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (!Contains(d.rhs_contracting_dimensions, i) &&
        !Contains(d.rhs_batch_dimensions, i) && !Contains(rhs_skip, i)) {
      dims->push_back(rhs.dimensions(i));
      dynamic->push_back(rhs.is_dynamic_dimension(i));
    }
  }
}

absl::Status CheckIndexShapes(std::string_view op, const Shape& operand,
                              std::span<const Shape* const> indices) {
  if (!indices.empty() && indices[0]->IsArray() && indices[0]->rank() == 1) {
    // Legacy form: one rank-1 vector of start indices.
    if (indices.size() != 1) {
      return Error(op, " with a vector of start indices must have exactly ",
                   "one index operand, has ", indices.size());
    }
    if (!IsIntegralType(indices[0]->element_type())) {
      return Error(op, " start indices must be integers, got ",
                   ShapeText(*indices[0]));
    }
    if (indices[0]->dimensions(0) != operand.rank()) {
      return Error(op, " has ", indices[0]->dimensions(0),
                   " start indices but the operand ", ShapeText(operand),
                   " has rank ", operand.rank());
    }
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(indices.size()) != operand.rank()) {
    return Error(op, " has ", indices.size(), " start indices but the operand ",
                 ShapeText(operand), " has rank ", operand.rank());
  }
  for (const Shape* s : indices) {
    if (!s->IsScalar()) {
      return Error(op, " start indices must be scalars, got ", ShapeText(*s));
    }
    if (!IsIntegralType(s->element_type())) {
      return Error(op, " start indices must be integers, got ", ShapeText(*s));
    }
    if (s->element_type() != indices[0]->element_type()) {
      return Error(op, " start indices must all have the same type, got ",
                   ShapeText(*indices[0]), " and ", ShapeText(*s));
    }
  }
  return absl::OkStatus();
}

}  // namespace

ProgramShape ComputeProgramShape(const Computation& computation) {
  ProgramShape p;
  p.parameters.reserve(computation.num_parameters());
  for (const Instruction* param : computation.parameter_instructions()) {
    p.parameters.push_back(param != nullptr ? param->shape() : Shape());
  }
  if (computation.root_instruction() != nullptr) {
    p.result = computation.root_instruction()->shape();
  }
  return p;
}

namespace {
bool HasDefaultLayouts(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (!HasDefaultLayouts(e)) return false;
    }
    return true;
  }
  if (!s.IsArray() || !s.has_layout()) return true;
  Shape d = s;
  d.SetDefaultLayout();
  return d.layout() == s.layout();
}
}  // namespace

// Layouts are shown only when some are not the default, where they matter
// for telling two shapes apart.
std::string ShapeText(const Shape& s) {
  return s.ToString(/*print_layout=*/!HasDefaultLayouts(s));
}

bool SameElementTypeIgnoringFpPrecision(const Shape& a, const Shape& b) {
  if (a.element_type() == b.element_type()) return true;
  return IsFloatingPointType(a.element_type()) &&
         IsFloatingPointType(b.element_type());
}

PrimitiveType HigherPrecisionElementType(PrimitiveType a, PrimitiveType b) {
  if (a == b) return a;
  auto props = [](PrimitiveType t) {
    PrimitiveType c = IsComplexType(t) ? ComplexComponentType(t) : t;
    bool fp = IsFloatingPointType(c);
    auto [exp, sig] = FloatBits(c);
    return std::make_tuple(IsComplexType(t), fp ? exp : -1, fp ? sig : -1,
                           BitWidth(c), IsSignedIntegralType(c));
  };
  return props(a) >= props(b) ? a : b;
}

bool CompatibleIgnoringElementType(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray()) return false;
  Shape b2 = b;
  b2.set_element_type(a.element_type());
  return a.Compatible(b2);
}

bool CompatibleShapes(const Shape& a, const Shape& b, bool ignore_fp) {
  return ignore_fp ? a.CompatibleIgnoringFpPrecision(b) : a.Compatible(b);
}

// ---------------------------------------------------------------------------
// Elementwise operations.

absl::StatusOr<Shape> InferUnaryOpShape(Opcode opcode, const Shape& shape) {
  if (opcode == Opcode::kCopy || opcode == Opcode::kDomain ||
      opcode == Opcode::kOptimizationBarrier) {
    return shape;
  }
  if (absl::Status s = ExpectArray(shape, "the operand of a unary op");
      !s.ok()) {
    return s;
  }
  const PrimitiveType t = shape.element_type();
  auto type_error = [&](std::string_view expected) {
    return Error(OpcodeName(opcode), " expects ", expected, " elements, got ",
                 TypeName(t));
  };
  switch (opcode) {
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kErf:
      if (!IsFloatingPointType(t)) return type_error("floating-point");
      return shape;
    case Opcode::kCosine:
    case Opcode::kSin:
    case Opcode::kTan:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
    case Opcode::kCbrt:
    case Opcode::kTanh:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kCosh:
    case Opcode::kSinh:
      if (!IsFloatingPointType(t) && !IsComplexType(t)) {
        return type_error("floating-point or complex");
      }
      return shape;
    case Opcode::kReal:
    case Opcode::kImag:
      if (IsComplexType(t))
        return ChangeElementType(shape, ComplexComponentType(t));
      if (IsFloatingPointType(t)) return shape;
      return type_error("floating-point or complex");
    case Opcode::kAbs:
      if (IsComplexType(t))
        return ChangeElementType(shape, ComplexComponentType(t));
      if (IsSigned(t)) return shape;
      return type_error("signed, floating-point or complex");
    case Opcode::kCountLeadingZeros:
    case Opcode::kPopulationCount:
      if (!IsIntegralType(t)) return type_error("integer");
      return shape;
    case Opcode::kNegate:
      if (!IsIntegralType(t) && !IsFloatingPointType(t) && !IsComplexType(t)) {
        return type_error("integer, floating-point or complex");
      }
      return shape;
    case Opcode::kSign:
      if (!IsSigned(t) && !IsComplexType(t)) {
        return type_error("signed, floating-point or complex");
      }
      return shape;
    case Opcode::kNot:
      if (t != PrimitiveType::kPred && !IsIntegralType(t)) {
        return type_error("pred or integer");
      }
      return shape;
    case Opcode::kIsFinite:
      if (!IsFloatingPointType(t)) return type_error("floating-point");
      return ChangeElementType(shape, PrimitiveType::kPred);
    default:
      return Error(OpcodeName(opcode), " is not a unary elementwise op");
  }
}

absl::StatusOr<Shape> InferBinaryOpShape(Opcode opcode, const Shape& lhs,
                                         const Shape& rhs) {
  if (absl::Status s = ExpectArray(lhs, "the lhs of a binary op"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(rhs, "the rhs of a binary op"); !s.ok()) {
    return s;
  }
  const PrimitiveType lt = lhs.element_type();
  const PrimitiveType rt = rhs.element_type();
  auto type_error = [&](std::string_view expected) {
    return Error(OpcodeName(opcode), " expects ", expected, " elements, got ",
                 TypeName(lt), " and ", TypeName(rt));
  };
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kCompare:
      break;
    case Opcode::kSubtract:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kPower:
      if (lt == PrimitiveType::kPred || rt == PrimitiveType::kPred) {
        return type_error("arithmetic");
      }
      break;
    case Opcode::kAtan2:
      if ((!IsFloatingPointType(lt) && !IsComplexType(lt)) ||
          (!IsFloatingPointType(rt) && !IsComplexType(rt))) {
        return type_error("floating-point or complex");
      }
      break;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kMulhi:
      if (!IsIntegralType(lt) || !IsIntegralType(rt)) {
        return type_error("integer");
      }
      break;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      if (lt != PrimitiveType::kPred && !IsIntegralType(lt)) {
        return type_error("pred or integer");
      }
      break;
    case Opcode::kComplex:
      if (!IsFloatingPointType(lt)) return type_error("floating-point");
      break;
    default:
      return Error(OpcodeName(opcode), " is not a binary elementwise op");
  }
  if (!SameElementTypeIgnoringFpPrecision(lhs, rhs)) {
    return Error("binary op operands must have the same element type, got ",
                 ShapeText(lhs), " and ", ShapeText(rhs));
  }
  // HLO has no implicit broadcasting: operands agree in every dimension.
  if (!CompatibleIgnoringElementType(lhs, rhs)) {
    return Error("binary op operands must have the same dimensions, got ",
                 ShapeText(lhs), " and ", ShapeText(rhs));
  }
  Shape result = ChangeElementType(lhs, HigherPrecisionElementType(lt, rt));
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (rhs.is_dynamic_dimension(i)) result.set_dynamic_dimension(i, true);
  }
  if (opcode == Opcode::kCompare) {
    return ChangeElementType(result, PrimitiveType::kPred);
  }
  if (opcode == Opcode::kComplex) {
    if (lt == PrimitiveType::kF32 && rt == PrimitiveType::kF32) {
      return ChangeElementType(result, PrimitiveType::kC64);
    }
    if (lt == PrimitiveType::kF64 && rt == PrimitiveType::kF64) {
      return ChangeElementType(result, PrimitiveType::kC128);
    }
    return type_error("two f32 or two f64");
  }
  return result;
}

absl::StatusOr<Shape> InferTernaryOpShape(Opcode opcode, const Shape& a,
                                          const Shape& b, const Shape& c) {
  if (opcode == Opcode::kSelect) {
    if (absl::Status s = ExpectArray(a, "select's predicate"); !s.ok()) {
      return s;
    }
    if (absl::Status s = ExpectArray(b, "select's on-true operand"); !s.ok()) {
      return s;
    }
    if (absl::Status s = ExpectArray(c, "select's on-false operand"); !s.ok()) {
      return s;
    }
    if (!b.CompatibleIgnoringFpPrecision(c)) {
      return Error("select operands must have the same shape, got ",
                   ShapeText(b), " and ", ShapeText(c));
    }
    if (a.element_type() != PrimitiveType::kPred) {
      return Error("select's predicate must have pred elements, got ",
                   ShapeText(a));
    }
    // A scalar predicate selects whole operands.
    if (!a.IsScalar() && !CompatibleIgnoringElementType(a, b)) {
      return Error("select's predicate ", ShapeText(a),
                   " must be a scalar or have the dimensions of its "
                   "operands ",
                   ShapeText(b));
    }
    return ChangeElementType(
        b, HigherPrecisionElementType(b.element_type(), c.element_type()));
  }
  if (opcode == Opcode::kClamp) {
    if (absl::Status s = ExpectArray(a, "clamp's min"); !s.ok()) return s;
    if (absl::Status s = ExpectArray(b, "clamp's operand"); !s.ok()) return s;
    if (absl::Status s = ExpectArray(c, "clamp's max"); !s.ok()) return s;
    if (!SameElementTypeIgnoringFpPrecision(a, b) ||
        !SameElementTypeIgnoringFpPrecision(c, b)) {
      return Error("clamp operands must have the same element type, got ",
                   ShapeText(a), ", ", ShapeText(b), ", ", ShapeText(c));
    }
    // min and max may be scalars (a restricted broadcast).
    if ((!a.IsScalar() && !CompatibleIgnoringElementType(a, b)) ||
        (!c.IsScalar() && !CompatibleIgnoringElementType(c, b))) {
      return Error(
          "clamp bounds must be scalars or have the operand's "
          "shape, got ",
          ShapeText(a), ", ", ShapeText(b), ", ", ShapeText(c));
    }
    return b;
  }
  return Error(OpcodeName(opcode), " is not a ternary op");
}

absl::StatusOr<Shape> InferConvertShape(const Shape& operand,
                                        PrimitiveType new_type) {
  if (!operand.IsArray() || !IsArrayType(new_type)) {
    return Error("convert needs array shapes, cannot convert ",
                 ShapeText(operand), " to ", TypeName(new_type));
  }
  return ChangeElementType(operand, new_type);
}

absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand,
                                               PrimitiveType new_type) {
  const PrimitiveType old_type = operand.element_type();
  if (!operand.IsArray() || !IsArrayType(new_type)) {
    return Error("bitcast-convert needs array shapes, cannot convert ",
                 ShapeText(operand), " to ", TypeName(new_type));
  }
  if (IsComplexType(old_type) != IsComplexType(new_type)) {
    return Error("bitcast-convert cannot convert between complex and real ",
                 "types: ", ShapeText(operand), " to ", TypeName(new_type));
  }
  const int in_bits = BitWidth(old_type);
  const int out_bits = BitWidth(new_type);
  if (in_bits <= 0 || out_bits <= 0 ||
      std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0) {
    return Error("bitcast-convert bit widths must divide each other: ",
                 TypeName(old_type), " to ", TypeName(new_type));
  }
  const int ratio = std::max(in_bits, out_bits) / std::min(in_bits, out_bits);
  Shape result = ChangeElementType(operand, new_type);
  result.clear_layout();
  if (in_bits > out_bits) {
    result.mutable_dimensions()->push_back(ratio);
  } else if (in_bits < out_bits) {
    if (operand.rank() < 1 || operand.dimensions(operand.rank() - 1) != ratio) {
      return Error("bitcast-convert from ", ShapeText(operand), " to ",
                   TypeName(new_type), " needs a last dimension of size ",
                   ratio);
    }
    result.mutable_dimensions()->pop_back();
    result.set_dynamic_dimension(operand.rank() - 1, false);
  }
  return result;
}

absl::StatusOr<Shape> InferStochasticConvertShape(const Shape& operand,
                                                  const Shape& random,
                                                  PrimitiveType new_type) {
  if (absl::Status s = ExpectArray(operand, "stochastic-convert's operand");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(random, "stochastic-convert's random bits");
      !s.ok()) {
    return s;
  }
  // XLA asks for unsigned random bits as wide as the operand; modules in
  // use also pass signed or wider bits, so only integers are required.
  if (!IsIntegralType(random.element_type())) {
    return Error("stochastic-convert random bits must be integers, got ",
                 ShapeText(random));
  }
  if (!IsFloatingPointType(operand.element_type())) {
    return Error("stochastic-convert operand must be floating-point, got ",
                 ShapeText(operand));
  }
  if (!CompatibleIgnoringElementType(operand, random)) {
    return Error("stochastic-convert operand ", ShapeText(operand),
                 " and random bits ", ShapeText(random),
                 " must have the same dimensions");
  }
  return ChangeElementType(operand, new_type);
}

absl::StatusOr<Shape> InferReducePrecisionShape(const Shape& operand,
                                                int64_t exponent_bits,
                                                int64_t mantissa_bits) {
  if (!operand.IsArray() || !IsFloatingPointType(operand.element_type())) {
    return Error("reduce-precision needs a floating-point operand, got ",
                 ShapeText(operand));
  }
  if (exponent_bits < 1) {
    return Error("reduce-precision needs exponent_bits >= 1, got ",
                 exponent_bits);
  }
  if (mantissa_bits < 0) {
    return Error("reduce-precision needs mantissa_bits >= 0, got ",
                 mantissa_bits);
  }
  return operand;
}

// ---------------------------------------------------------------------------
// Data movement.

absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand,
                                          const Shape& output,
                                          std::span<const int64_t> dims) {
  if (absl::Status s = ExpectArray(operand, "broadcast's operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(output, "broadcast's result"); !s.ok()) {
    return s;
  }
  if (operand.element_type() != output.element_type()) {
    return Error("broadcast cannot change the element type: ",
                 ShapeText(operand), " to ", ShapeText(output));
  }
  if (static_cast<int64_t>(dims.size()) != operand.rank()) {
    return Error("broadcast dimensions ", IntList(dims),
                 " must have one entry per operand dimension of ",
                 ShapeText(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t d = dims[i];
    if (d < 0 || d >= output.rank()) {
      return Error("broadcast dimension ", d, " is out of range for ",
                   ShapeText(output));
    }
    if (!DimEq(output.dimensions(d), operand.dimensions(i))) {
      return Error("broadcast maps operand dimension ", i, " of ",
                   ShapeText(operand), " to result dimension ", d, " of ",
                   ShapeText(output), " with a different size");
    }
  }
  return output;
}

absl::StatusOr<Shape> InferReshapeShape(const Shape& operand,
                                        const Shape& output) {
  if (absl::Status s = ExpectArray(operand, "reshape's operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(output, "reshape's result"); !s.ok()) {
    return s;
  }
  if (operand.element_type() != output.element_type()) {
    return Error("reshape cannot change the element type: ", ShapeText(operand),
                 " to ", ShapeText(output));
  }
  if (!operand.is_unbounded_dynamic() && !output.is_unbounded_dynamic() &&
      operand.ElementsIn() != output.ElementsIn()) {
    return Error("reshape must keep the element count: ", ShapeText(operand),
                 " has ", operand.ElementsIn(), ", ", ShapeText(output),
                 " has ", output.ElementsIn());
  }
  return output;
}

absl::StatusOr<Shape> InferTransposeShape(const Shape& operand,
                                          std::span<const int64_t> dims) {
  if (absl::Status s = ExpectArray(operand, "transpose's operand"); !s.ok()) {
    return s;
  }
  if (!IsPermutation(dims, operand.rank())) {
    return Error("transpose dimensions ", IntList(dims),
                 " are not a permutation of the dimensions of ",
                 ShapeText(operand));
  }
  Shape result(operand.element_type(), {});
  for (size_t i = 0; i < dims.size(); ++i) {
    result.mutable_dimensions()->push_back(operand.dimensions(dims[i]));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (operand.is_dynamic_dimension(dims[i])) {
      result.set_dynamic_dimension(i, true);
    }
  }
  return result;
}

absl::StatusOr<Shape> InferReverseShape(const Shape& operand,
                                        std::span<const int64_t> dims) {
  if (absl::Status s = ExpectArray(operand, "reverse's operand"); !s.ok()) {
    return s;
  }
  if (!AllUnique(dims)) {
    return Error("reverse dimensions ", IntList(dims), " repeat a dimension");
  }
  if (!InRange(dims, operand.rank())) {
    return Error("reverse dimensions ", IntList(dims), " are out of range for ",
                 ShapeText(operand));
  }
  return operand;
}

absl::StatusOr<Shape> InferSliceShape(
    const Shape& operand, const std::vector<SliceDimension>& slice) {
  if (absl::Status s = ExpectArray(operand, "slice's operand"); !s.ok()) {
    return s;
  }
  if (static_cast<int64_t>(slice.size()) != operand.rank()) {
    return Error("slice has ", slice.size(), " ranges but the operand ",
                 ShapeText(operand), " has rank ", operand.rank());
  }
  Shape result(operand.element_type(), {});
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const SliceDimension& d = slice[i];
    const int64_t size = operand.dimensions(i);
    if (d.start < 0) {
      return Error("slice start ", d.start, " in dimension ", i,
                   " is negative");
    }
    if (size != kUnbounded && d.limit > size) {
      return Error("slice limit ", d.limit, " in dimension ", i,
                   " exceeds the size of ", ShapeText(operand));
    }
    if (d.start > d.limit) {
      return Error("slice start ", d.start, " exceeds limit ", d.limit,
                   " in dimension ", i);
    }
    if (d.stride <= 0) {
      return Error("slice stride ", d.stride, " in dimension ", i,
                   " must be positive");
    }
    const int64_t n = (d.limit - d.start + d.stride - 1) / d.stride;
    result.mutable_dimensions()->push_back(n);
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (result.dimensions(i) != 1 && operand.is_dynamic_dimension(i)) {
      result.set_dynamic_dimension(i, true);
    }
  }
  return result;
}

absl::StatusOr<Shape> InferDynamicSliceShape(
    const Shape& operand, std::span<const Shape* const> index_shapes,
    std::span<const int64_t> slice_sizes) {
  if (absl::Status s = ExpectArray(operand, "dynamic-slice's operand");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckIndexShapes("dynamic-slice", operand, index_shapes);
      !s.ok()) {
    return s;
  }
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return Error("dynamic-slice has ", slice_sizes.size(),
                 " slice sizes but the operand ", ShapeText(operand),
                 " has rank ", operand.rank());
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = operand.dimensions(i);
    if (slice_sizes[i] < 0) {
      return Error("dynamic-slice size ", slice_sizes[i], " is negative");
    }
    if (size != kUnbounded && slice_sizes[i] > size) {
      return Error("dynamic-slice size ", slice_sizes[i], " in dimension ", i,
                   " exceeds the size of ", ShapeText(operand));
    }
  }
  return MakeArray(operand.element_type(), slice_sizes);
}

absl::StatusOr<Shape> InferDynamicUpdateSliceShape(
    const Shape& operand, const Shape& update,
    std::span<const Shape* const> index_shapes) {
  if (absl::Status s = ExpectArray(operand, "dynamic-update-slice's operand");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(update, "dynamic-update-slice's update");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckIndexShapes("dynamic-update-slice", operand, index_shapes);
      !s.ok()) {
    return s;
  }
  if (update.rank() != operand.rank()) {
    return Error("dynamic-update-slice update ", ShapeText(update),
                 " must have the rank of the operand ", ShapeText(operand));
  }
  if (!SameElementTypeIgnoringFpPrecision(operand, update)) {
    return Error("dynamic-update-slice update ", ShapeText(update),
                 " must have the element type of the operand ",
                 ShapeText(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = operand.dimensions(i);
    const int64_t u = update.dimensions(i);
    if (u != kUnbounded && u < 0) {
      return Error("dynamic-update-slice update size ", u, " is negative");
    }
    if (size != kUnbounded && u != kUnbounded && u > size) {
      return Error("dynamic-update-slice update ", ShapeText(update),
                   " is larger than the operand ", ShapeText(operand),
                   " in dimension ", i);
    }
  }
  Shape result = operand;
  for (int64_t i = 0; i < update.rank(); ++i) {
    if (update.is_dynamic_dimension(i) &&
        update.dimensions(i) == operand.dimensions(i)) {
      result.set_dynamic_dimension(i, true);
    }
  }
  return result;
}

absl::StatusOr<Shape> InferConcatenateShape(
    std::span<const Shape* const> operands, int64_t dimension) {
  if (operands.empty()) {
    return Error("concatenate needs at least one operand");
  }
  for (const Shape* s : operands) {
    if (absl::Status st = ExpectArray(*s, "an operand of concatenate");
        !st.ok()) {
      return st;
    }
  }
  const Shape& first = *operands[0];
  if (dimension < 0 || dimension >= first.rank()) {
    return Error("concatenate dimension ", dimension, " is out of range for ",
                 ShapeText(first));
  }
  PrimitiveType type = first.element_type();
  Shape result = first;
  result.clear_layout();
  for (size_t k = 1; k < operands.size(); ++k) {
    const Shape& s = *operands[k];
    if (s.rank() != first.rank()) {
      return Error("concatenate operands must have the same rank, got ",
                   ShapeText(first), " and ", ShapeText(s));
    }
    if (!SameElementTypeIgnoringFpPrecision(first, s)) {
      return Error("concatenate operands must have the same element type, ",
                   "got ", ShapeText(first), " and ", ShapeText(s));
    }
    for (int64_t i = 0; i < first.rank(); ++i) {
      if (i == dimension) continue;
      if (!DimEq(first.dimensions(i), s.dimensions(i))) {
        return Error("concatenate operands may only differ in dimension ",
                     dimension, ", got ", ShapeText(first), " and ",
                     ShapeText(s));
      }
    }
    type = HigherPrecisionElementType(type, s.element_type());
    const int64_t a = result.dimensions(dimension);
    const int64_t b = s.dimensions(dimension);
    result.set_dimensions(
        dimension, (a == kUnbounded || b == kUnbounded) ? kUnbounded : a + b);
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (s.is_dynamic_dimension(i)) result.set_dynamic_dimension(i, true);
    }
  }
  result.set_element_type(type);
  return result;
}

absl::StatusOr<Shape> InferPadShape(const Shape& operand,
                                    const Shape& padding_value,
                                    const PaddingConfig& padding) {
  if (absl::Status s = ExpectArray(operand, "pad's operand"); !s.ok()) {
    return s;
  }
  if (!padding_value.IsScalar()) {
    return Error("pad's padding value must be a scalar, got ",
                 ShapeText(padding_value));
  }
  if (static_cast<int64_t>(padding.size()) != operand.rank()) {
    return Error("pad has ", padding.size(),
                 " padding dimensions but the operand ", ShapeText(operand),
                 " has rank ", operand.rank());
  }
  if (!SameElementTypeIgnoringFpPrecision(operand, padding_value)) {
    return Error("pad operand ", ShapeText(operand), " and padding value ",
                 ShapeText(padding_value), " must have the same element type");
  }
  Shape result = operand;
  result.clear_layout();
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDimension& p = padding[i];
    if (p.interior < 0) {
      return Error("pad interior padding ", p.interior, " in dimension ", i,
                   " is negative");
    }
    const int64_t d = operand.dimensions(i);
    if (d == kUnbounded) continue;
    const int64_t n =
        d + p.low + p.high + std::max<int64_t>(d - 1, 0) * p.interior;
    if (n < 0) {
      return Error("pad gives dimension ", i, " a negative size ", n);
    }
    result.set_dimensions(i, n);
  }
  result.set_element_type(HigherPrecisionElementType(
      operand.element_type(), padding_value.element_type()));
  return result;
}

absl::StatusOr<Shape> InferGatherShape(const Shape& operand,
                                       const Shape& start_indices,
                                       const GatherDimensionNumbers& d,
                                       std::span<const int64_t> slice_sizes) {
  if (absl::Status s = ExpectArray(operand, "gather's operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(start_indices, "gather's start indices");
      !s.ok()) {
    return s;
  }
  if (!IsIntegralType(start_indices.element_type())) {
    return Error("gather start indices must be integers, got ",
                 ShapeText(start_indices));
  }
  const int64_t ivd = d.index_vector_dim;
  if (ivd < 0 || ivd > start_indices.rank()) {
    return Error("gather index_vector_dim ", ivd,
                 " must be in [0, rank(start_indices)] for ",
                 ShapeText(start_indices));
  }
  std::vector<int64_t> expanded(start_indices.dimensions().begin(),
                                start_indices.dimensions().end());
  std::vector<bool> expanded_dynamic;
  for (int64_t i = 0; i < start_indices.rank(); ++i) {
    expanded_dynamic.push_back(start_indices.is_dynamic_dimension(i));
  }
  if (static_cast<int64_t>(expanded.size()) == ivd) {
    expanded.push_back(1);
    expanded_dynamic.push_back(false);
  }
  const int64_t rank = operand.rank();
  const int64_t out_rank =
      static_cast<int64_t>(d.offset_dims.size() + expanded.size()) - 1;
  if (!std::is_sorted(d.offset_dims.begin(), d.offset_dims.end()) ||
      !AllUnique(d.offset_dims)) {
    return Error("gather offset_dims ", IntList(d.offset_dims),
                 " must be sorted and unique");
  }
  if (!InRange(d.offset_dims, out_rank)) {
    return Error("gather offset_dims ", IntList(d.offset_dims),
                 " must be in [0, ", out_rank, ")");
  }
  if (static_cast<int64_t>(d.start_index_map.size()) != expanded[ivd]) {
    return Error("gather start_index_map ", IntList(d.start_index_map),
                 " must have ", expanded[ivd],
                 " entries (the index vector size)");
  }
  if (!InRange(d.start_index_map, rank) || !AllUnique(d.start_index_map)) {
    return Error("gather start_index_map ", IntList(d.start_index_map),
                 " must be unique operand dimensions of ", ShapeText(operand));
  }
  if (!InRange(d.collapsed_slice_dims, rank) ||
      !std::is_sorted(d.collapsed_slice_dims.begin(),
                      d.collapsed_slice_dims.end()) ||
      !AllUnique(d.collapsed_slice_dims)) {
    return Error("gather collapsed_slice_dims ",
                 IntList(d.collapsed_slice_dims),
                 " must be sorted unique operand dimensions");
  }
  if (!InRange(d.operand_batching_dims, rank) ||
      !std::is_sorted(d.operand_batching_dims.begin(),
                      d.operand_batching_dims.end()) ||
      !AllUnique(d.operand_batching_dims)) {
    return Error("gather operand_batching_dims ",
                 IntList(d.operand_batching_dims),
                 " must be sorted unique operand dimensions");
  }
  for (int64_t b : d.operand_batching_dims) {
    if (Contains(d.collapsed_slice_dims, b)) {
      return Error("gather operand batching dimension ", b,
                   " may not also be collapsed");
    }
  }
  if (d.start_indices_batching_dims.size() != d.operand_batching_dims.size()) {
    return Error(
        "gather needs as many start_indices_batching_dims as "
        "operand_batching_dims");
  }
  for (size_t i = 0; i < d.start_indices_batching_dims.size(); ++i) {
    const int64_t sd = d.start_indices_batching_dims[i];
    if (sd < 0 || sd >= static_cast<int64_t>(expanded.size()) || sd == ivd) {
      return Error("gather start_indices_batching_dims ",
                   IntList(d.start_indices_batching_dims),
                   " are out of range or name index_vector_dim");
    }
  }
  if (!AllUnique(d.start_indices_batching_dims)) {
    return Error("gather start_indices_batching_dims repeat a dimension");
  }
  if (static_cast<int64_t>(slice_sizes.size()) != rank) {
    return Error("gather needs one slice size per operand dimension, got ",
                 IntList(slice_sizes), " for ", ShapeText(operand));
  }
  if (slice_sizes.size() != d.offset_dims.size() +
                                d.collapsed_slice_dims.size() +
                                d.operand_batching_dims.size()) {
    return Error(
        "gather slice dimensions must be offset, collapsed or "
        "batching dimensions: ",
        slice_sizes.size(), " slice sizes, offset_dims ",
        IntList(d.offset_dims), ", collapsed_slice_dims ",
        IntList(d.collapsed_slice_dims));
  }
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t size = operand.dimensions(i);
    if (slice_sizes[i] < 0 || (size != kUnbounded && slice_sizes[i] > size)) {
      return Error("gather slice size ", slice_sizes[i], " in dimension ", i,
                   " is out of range for ", ShapeText(operand));
    }
  }
  for (int64_t c : d.collapsed_slice_dims) {
    if (slice_sizes[c] > 1) {
      return Error(
          "gather can only collapse dimensions of slice size 0 or "
          "1, dimension ",
          c, " has size ", slice_sizes[c]);
    }
  }
  for (int64_t b : d.operand_batching_dims) {
    if (slice_sizes[b] > 1) {
      return Error("gather batching dimension ", b,
                   " must have slice size 0 or 1");
    }
  }
  DimVector out_dims;
  std::vector<bool> out_dynamic;
  int64_t offset_seen = 0;
  int64_t gather_seen = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (Contains(d.offset_dims, i)) {
      while (Contains(d.collapsed_slice_dims, offset_seen) ||
             Contains(d.operand_batching_dims, offset_seen)) {
        ++offset_seen;
      }
      bool dyn = slice_sizes[offset_seen] == operand.dimensions(offset_seen) &&
                 operand.is_dynamic_dimension(offset_seen);
      out_dims.push_back(slice_sizes[offset_seen++]);
      out_dynamic.push_back(dyn);
    } else {
      if (gather_seen == ivd) ++gather_seen;
      out_dynamic.push_back(expanded_dynamic[gather_seen]);
      out_dims.push_back(expanded[gather_seen++]);
    }
  }
  return MakeArray(operand.element_type(), out_dims, &out_dynamic);
}

absl::StatusOr<Shape> InferScatterShape(std::span<const Shape* const> args,
                                        const ProgramShape& to_apply,
                                        const ScatterDimensionNumbers& d) {
  const int64_t n = static_cast<int64_t>(args.size()) / 2;
  if (n < 1 || n * 2 + 1 != static_cast<int64_t>(args.size())) {
    return Error("scatter needs N inputs, the indices and N updates, got ",
                 args.size(), " operands");
  }
  const Shape& indices = *args[n];
  if (absl::Status s = ExpectArray(indices, "scatter's indices"); !s.ok()) {
    return s;
  }
  if (!IsIntegralType(indices.element_type())) {
    return Error("scatter indices must be integers, got ", ShapeText(indices));
  }
  const int64_t ivd = d.index_vector_dim;
  if (ivd < 0 || ivd > indices.rank()) {
    return Error("scatter index_vector_dim ", ivd,
                 " must be in [0, rank(indices)] for ", ShapeText(indices));
  }
  std::vector<int64_t> expanded(indices.dimensions().begin(),
                                indices.dimensions().end());
  if (static_cast<int64_t>(expanded.size()) == ivd) expanded.push_back(1);

  for (int64_t k = 0; k < n; ++k) {
    const Shape& operand = *args[k];
    const Shape& updates = *args[n + 1 + k];
    if (absl::Status s = ExpectArray(operand, "scatter's operand"); !s.ok()) {
      return s;
    }
    if (absl::Status s = ExpectArray(updates, "scatter's updates"); !s.ok()) {
      return s;
    }
    if (k > 0 && !CompatibleIgnoringElementType(*args[0], operand)) {
      return Error("scatter inputs must have the same dimensions, got ",
                   ShapeText(*args[0]), " and ", ShapeText(operand));
    }
    const int64_t rank = operand.rank();
    const int64_t urank = updates.rank();
    const int64_t expected_urank =
        static_cast<int64_t>(expanded.size()) - 1 +
        static_cast<int64_t>(d.update_window_dims.size());
    if (urank != expected_urank) {
      return Error("scatter updates ", ShapeText(updates), " must have rank ",
                   expected_urank);
    }
    if (!AllUnique(d.update_window_dims) ||
        !InRange(d.update_window_dims, urank)) {
      return Error("scatter update_window_dims ", IntList(d.update_window_dims),
                   " must be unique dimensions of the updates");
    }
    if (!std::is_sorted(d.inserted_window_dims.begin(),
                        d.inserted_window_dims.end()) ||
        !AllUnique(d.inserted_window_dims) ||
        !InRange(d.inserted_window_dims, rank)) {
      return Error("scatter inserted_window_dims ",
                   IntList(d.inserted_window_dims),
                   " must be sorted unique operand dimensions");
    }
    if (!std::is_sorted(d.input_batching_dims.begin(),
                        d.input_batching_dims.end()) ||
        !AllUnique(d.input_batching_dims) ||
        !InRange(d.input_batching_dims, rank)) {
      return Error("scatter input_batching_dims ",
                   IntList(d.input_batching_dims),
                   " must be sorted unique operand dimensions");
    }
    for (int64_t b : d.input_batching_dims) {
      if (Contains(d.inserted_window_dims, b)) {
        return Error("scatter input batching dimension ", b,
                     " may not also be inserted");
      }
    }
    const int64_t window = static_cast<int64_t>(d.update_window_dims.size() +
                                                d.inserted_window_dims.size() +
                                                d.input_batching_dims.size());
    if (window != rank) {
      return Error("scatter window has ", window,
                   " dimensions but the operand ", ShapeText(operand),
                   " has rank ", rank);
    }
    if (static_cast<int64_t>(d.scatter_dims_to_operand_dims.size()) !=
        expanded[ivd]) {
      return Error("scatter_dims_to_operand_dims ",
                   IntList(d.scatter_dims_to_operand_dims), " must have ",
                   expanded[ivd], " entries (the index vector size)");
    }
    for (size_t i = 0; i < d.scatter_dims_to_operand_dims.size(); ++i) {
      const int64_t od = d.scatter_dims_to_operand_dims[i];
      if (od < 0 || od >= rank) {
        return Error("Invalid scatter_dims_to_operand_dims mapping: ", i, "->",
                     od, " is out of range for ", ShapeText(operand));
      }
    }
    if (!AllUnique(d.scatter_dims_to_operand_dims)) {
      return Error("scatter_dims_to_operand_dims ",
                   IntList(d.scatter_dims_to_operand_dims),
                   " repeat a dimension");
    }
    if (d.scatter_indices_batching_dims.size() !=
        d.input_batching_dims.size()) {
      return Error(
          "scatter needs as many scatter_indices_batching_dims as "
          "input_batching_dims");
    }
    for (int64_t sd : d.scatter_indices_batching_dims) {
      if (sd < 0 || sd >= static_cast<int64_t>(expanded.size()) || sd == ivd) {
        return Error("scatter_indices_batching_dims ",
                     IntList(d.scatter_indices_batching_dims),
                     " are out of range or name index_vector_dim");
      }
    }
    std::vector<int64_t> max_window;
    for (int64_t i = 0; i < rank; ++i) {
      if (!Contains(d.inserted_window_dims, i) &&
          !Contains(d.input_batching_dims, i)) {
        max_window.push_back(operand.dimensions(i));
      }
    }
    for (size_t i = 0; i < d.update_window_dims.size(); ++i) {
      const int64_t u = updates.dimensions(d.update_window_dims[i]);
      if (u != kUnbounded && max_window[i] != kUnbounded && u > max_window[i]) {
        return Error("scatter update window dimension ",
                     d.update_window_dims[i], " of ", ShapeText(updates),
                     " exceeds the operand ", ShapeText(operand));
      }
    }
    int64_t seen = 0;
    for (int64_t i = 0; i < urank; ++i) {
      if (Contains(d.update_window_dims, i)) continue;
      if (seen == ivd) ++seen;
      if (!DimEq(updates.dimensions(i), expanded[seen])) {
        return Error("scatter dimension ", i, " of the updates ",
                     ShapeText(updates), " must match the indices ",
                     ShapeText(indices));
      }
      ++seen;
    }
  }
  std::vector<Shape> inits;
  std::vector<PrimitiveType> update_types;
  for (int64_t k = 0; k < n; ++k) {
    inits.push_back(Shape::Scalar(args[k]->element_type()));
    update_types.push_back(args[n + 1 + k]->element_type());
  }
  std::vector<const Shape*> init_ptrs;
  for (const Shape& s : inits) init_ptrs.push_back(&s);
  if (absl::Status s = VerifyReducerShape(to_apply, init_ptrs, update_types, n);
      !s.ok()) {
    return s;
  }
  if (n == 1) return *args[0];
  std::vector<Shape> out;
  for (int64_t k = 0; k < n; ++k) out.push_back(*args[k]);
  return Shape::Tuple(std::move(out));
}

absl::StatusOr<Shape> InferGetTupleElementShape(const Shape& tuple,
                                                int64_t index) {
  if (!tuple.IsTuple()) {
    return Error("get-tuple-element needs a tuple operand, got ",
                 ShapeText(tuple));
  }
  if (index < 0 || index >= tuple.tuple_shapes_size()) {
    return Error("get-tuple-element index ", index, " is out of range for ",
                 ShapeText(tuple));
  }
  return tuple.tuple_shapes(index);
}

absl::StatusOr<Shape> InferTupleShape(std::span<const Shape* const> operands) {
  std::vector<Shape> elems;
  elems.reserve(operands.size());
  for (const Shape* s : operands) elems.push_back(*s);
  return Shape::Tuple(std::move(elems));
}

// ---------------------------------------------------------------------------
// Reductions and windows.

absl::StatusOr<Shape> InferReduceShape(std::span<const Shape* const> args,
                                       std::span<const int64_t> dims,
                                       const ProgramShape& to_apply) {
  if (args.empty() || args.size() % 2 != 0) {
    return Error("reduce needs N inputs and N init values, got ", args.size(),
                 " operands");
  }
  const int64_t n = static_cast<int64_t>(args.size()) / 2;
  for (int64_t i = 0; i < n; ++i) {
    if (absl::Status s = ExpectArray(*args[i], "reduce's input"); !s.ok()) {
      return s;
    }
    if (!CompatibleIgnoringElementType(*args[0], *args[i])) {
      return Error("reduce inputs must have the same dimensions, got ",
                   ShapeText(*args[0]), " and ", ShapeText(*args[i]));
    }
  }
  const Shape& arg = *args[0];
  if (!InRange(dims, arg.rank())) {
    return Error("reduce dimensions ", IntList(dims), " are out of range for ",
                 ShapeText(arg));
  }
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) types.push_back(args[i]->element_type());
  if (absl::Status s = VerifyReducerShape(to_apply, args.subspan(n), types, n);
      !s.ok()) {
    return s;
  }
  if (!AllUnique(dims)) {
    return Error("reduce dimensions ", IntList(dims), " repeat a dimension");
  }
  DimVector out;
  std::vector<bool> dyn;
  for (int64_t i = 0; i < arg.rank(); ++i) {
    if (!Contains(dims, i)) {
      out.push_back(arg.dimensions(i));
      dyn.push_back(arg.is_dynamic_dimension(i));
    }
  }
  if (to_apply.result.IsArray()) {
    return MakeArray(to_apply.result.element_type(), out, &dyn);
  }
  std::vector<Shape> elems;
  for (const Shape& e : to_apply.result.tuple_shapes()) {
    elems.push_back(MakeArray(e.element_type(), out, &dyn));
  }
  return Shape::Tuple(std::move(elems));
}

absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base,
                                             const Window& window,
                                             PrimitiveType element_type) {
  if (static_cast<int64_t>(window.dimensions.size()) != base.rank()) {
    return Error("window has ", window.dimensions.size(),
                 " dimensions but the base shape ", ShapeText(base),
                 " has rank ", base.rank());
  }
  DimVector out;
  std::vector<bool> dyn;
  for (int64_t i = 0; i < base.rank(); ++i) {
    const WindowDimension& w = window.dimensions[i];
    if (w.size <= 0) {
      return Error("window has a non-positive size ", w.size, " in dimension ",
                   i);
    }
    if (w.stride <= 0) {
      return Error("window has a non-positive stride ", w.stride,
                   " in dimension ", i);
    }
    if (w.base_dilation < 1) {
      return Error("window has a non-positive base dilation factor ",
                   w.base_dilation, " in dimension ", i);
    }
    if (w.window_dilation < 1) {
      return Error("window has a non-positive window dilation factor ",
                   w.window_dilation, " in dimension ", i);
    }
    const int64_t b = base.dimensions(i);
    if (b == kUnbounded) {
      out.push_back(kUnbounded);
    } else {
      const int64_t padded =
          w.padding_low + DilatedBound(b, w.base_dilation) + w.padding_high;
      out.push_back(StridedBound(std::max<int64_t>(padded, 0),
                                 DilatedBound(w.size, w.window_dilation),
                                 w.stride));
    }
    dyn.push_back(base.is_dynamic_dimension(i));
  }
  return MakeArray(element_type, out, &dyn);
}

absl::StatusOr<Shape> InferReduceWindowShape(std::span<const Shape* const> args,
                                             const Window& window,
                                             const ProgramShape& to_apply) {
  if (args.empty() || args.size() % 2 != 0) {
    return Error("reduce-window needs N inputs and N init values, got ",
                 args.size(), " operands");
  }
  const int64_t n = static_cast<int64_t>(args.size()) / 2;
  for (int64_t i = 0; i < n; ++i) {
    if (absl::Status s = ExpectArray(*args[i], "reduce-window's input");
        !s.ok()) {
      return s;
    }
    if (!CompatibleIgnoringElementType(*args[0], *args[i])) {
      return Error("reduce-window inputs must have the same dimensions, got ",
                   ShapeText(*args[0]), " and ", ShapeText(*args[i]));
    }
  }
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) types.push_back(args[i]->element_type());
  if (absl::Status s = VerifyReducerShape(to_apply, args.subspan(n), types, n);
      !s.ok()) {
    return s;
  }
  std::vector<Shape> outs;
  for (int64_t i = 0; i < n; ++i) {
    auto out =
        InferWindowOutputShape(*args[i], window, args[n + i]->element_type());
    if (!out.ok()) return out.status();
    outs.push_back(*std::move(out));
  }
  if (to_apply.result.IsArray()) return outs[0];
  return Shape::Tuple(std::move(outs));
}

absl::StatusOr<Shape> InferSelectAndScatterShape(
    const Shape& operand, const ProgramShape& select, const Window& window,
    const Shape& source, const Shape& init_value, const ProgramShape& scatter) {
  if (absl::Status s = ExpectArray(operand, "select-and-scatter's operand");
      !s.ok()) {
    return s;
  }
  if (select.parameters.size() != 2) {
    return Error(
        "select-and-scatter's select computation must take 2 "
        "parameters, takes ",
        select.parameters.size());
  }
  if (!select.result.Compatible(Shape::Scalar(PrimitiveType::kPred))) {
    return Error(
        "select-and-scatter's select computation must return "
        "pred[], returns ",
        ShapeText(select.result));
  }
  const Shape elem = Shape::Scalar(operand.element_type());
  for (int i = 0; i < 2; ++i) {
    if (!elem.CompatibleIgnoringFpPrecision(select.parameters[i])) {
      return Error("select-and-scatter's select parameter ", i, " (",
                   ShapeText(select.parameters[i]),
                   ") must match the operand element type ", ShapeText(elem));
    }
  }
  const Shape* init[] = {&init_value};
  const PrimitiveType types[] = {source.element_type()};
  if (absl::Status s = VerifyReducerShape(scatter, init, types, 1); !s.ok()) {
    return s;
  }
  auto windowed =
      InferWindowOutputShape(operand, window, operand.element_type());
  if (!windowed.ok()) return windowed.status();
  if (!CompatibleIgnoringElementType(source, *windowed)) {
    return Error("select-and-scatter source ", ShapeText(source),
                 " does not match the windowed operand ", ShapeText(*windowed));
  }
  return operand;
}

absl::StatusOr<Shape> InferMapShape(std::span<const Shape* const> args,
                                    const ProgramShape& to_apply) {
  if (args.empty()) return Error("map needs at least one operand");
  const Shape* arg = args[0];
  for (const Shape* s : args) {
    if (absl::Status st = ExpectArray(*s, "an operand of map"); !st.ok()) {
      return st;
    }
    if (!CompatibleIgnoringElementType(*s, *arg)) {
      return Error("map operands must have the same dimensions, got ",
                   ShapeText(*arg), " and ", ShapeText(*s));
    }
  }
  if (to_apply.parameters.size() != args.size()) {
    return Error("map computation takes ", to_apply.parameters.size(),
                 " parameters but map has ", args.size(), " operands");
  }
  if (!to_apply.result.IsScalar()) {
    return Error("map computation must return a scalar, returns ",
                 ShapeText(to_apply.result));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape& p = to_apply.parameters[i];
    if (!p.IsScalar()) {
      return Error("map computation parameter ", i, " must be a scalar, got ",
                   ShapeText(p));
    }
    if (!SameElementTypeIgnoringFpPrecision(p, *args[i])) {
      return Error("map computation parameter ", i, " (", ShapeText(p),
                   ") does not match the element type of operand ",
                   ShapeText(*args[i]));
    }
  }
  Shape result = ChangeElementType(*arg, to_apply.result.element_type());
  result.clear_layout();
  return result;
}

absl::StatusOr<Shape> InferSortShape(std::span<const Shape* const> operands,
                                     int64_t dimension,
                                     const ProgramShape& compare) {
  if (operands.empty()) return Error("sort needs at least one operand");
  if (!compare.result.Compatible(Shape::Scalar(PrimitiveType::kPred))) {
    return Error("sort's comparator must return pred[], returns ",
                 ShapeText(compare.result));
  }
  if (compare.parameters.size() != operands.size() * 2) {
    return Error("sort's comparator must take ", operands.size() * 2,
                 " parameters, takes ", compare.parameters.size());
  }
  for (size_t i = 0; i < compare.parameters.size(); ++i) {
    const Shape expected = Shape::Scalar(operands[i / 2]->element_type());
    if (!expected.CompatibleIgnoringFpPrecision(compare.parameters[i])) {
      return Error("sort's comparator parameter ", i, " must be ",
                   ShapeText(expected), ", got ",
                   ShapeText(compare.parameters[i]));
    }
  }
  for (const Shape* s : operands) {
    if (absl::Status st = ExpectArray(*s, "an operand of sort"); !st.ok()) {
      return st;
    }
    if (!CompatibleIgnoringElementType(*operands[0], *s)) {
      return Error("sort operands must have the same dimensions, got ",
                   ShapeText(*operands[0]), " and ", ShapeText(*s));
    }
  }
  if (dimension < 0 || dimension >= operands[0]->rank()) {
    return Error("sort dimension ", dimension, " is out of range for ",
                 ShapeText(*operands[0]));
  }
  if (operands.size() == 1) return *operands[0];
  return InferTupleShape(operands);
}

absl::StatusOr<Shape> InferTopKShape(const Shape& operand, int64_t k) {
  if (absl::Status s = ExpectArray(operand, "topk's operand"); !s.ok()) {
    return s;
  }
  if (operand.rank() < 1) {
    return Error("topk needs an operand of rank >= 1, got ",
                 ShapeText(operand));
  }
  const int64_t last = operand.dimensions(operand.rank() - 1);
  if (k < 0 || (last != kUnbounded && k > last)) {
    return Error("topk k=", k, " is out of range for ", ShapeText(operand));
  }
  Shape values = operand;
  values.clear_layout();
  values.set_dimensions(operand.rank() - 1, k);
  Shape indices = ChangeElementType(values, PrimitiveType::kS32);
  return Shape::Tuple({values, indices});
}

// ---------------------------------------------------------------------------
// Contractions.

absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const DotDimensionNumbers& d,
                                    std::optional<PrimitiveType> preferred) {
  if (absl::Status s = ExpectArray(lhs, "dot's lhs"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(rhs, "dot's rhs"); !s.ok()) return s;
  if (absl::Status s = ValidateDotDims(lhs, rhs, d); !s.ok()) return s;
  DimVector dims;
  std::vector<bool> dyn;
  DotResultDims(lhs, rhs, d, {}, &dims, &dyn);
  auto type = MaybeUpcast(
      HigherPrecisionElementType(lhs.element_type(), rhs.element_type()),
      preferred);
  if (!type.ok()) return type.status();
  return MakeArray(*type, dims, &dyn);
}

absl::StatusOr<Shape> InferRaggedDotShape(
    const Shape& lhs, const Shape& rhs, const Shape& group_sizes,
    const DotDimensionNumbers& d, const RaggedDotDimensionNumbers& r,
    std::optional<PrimitiveType> preferred) {
  if (absl::Status s = ExpectArray(lhs, "ragged-dot's lhs"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(rhs, "ragged-dot's rhs"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(group_sizes, "ragged-dot's group sizes");
      !s.ok()) {
    return s;
  }
  if (!IsIntegralType(group_sizes.element_type()) || group_sizes.rank() < 1) {
    return Error("ragged-dot group sizes must be an integer array, got ",
                 ShapeText(group_sizes));
  }
  if (r.lhs_ragged_dimensions.size() != 1) {
    return Error("ragged-dot needs exactly one lhs ragged dimension, got ",
                 IntList(r.lhs_ragged_dimensions));
  }
  const int64_t ragged = r.lhs_ragged_dimensions[0];
  if (ragged < 0 || ragged >= lhs.rank()) {
    return Error("ragged-dot lhs ragged dimension ", ragged,
                 " is out of range for ", ShapeText(lhs));
  }
  if (absl::Status s = ValidateDotDims(lhs, rhs, d); !s.ok()) return s;
  const bool contracting = Contains(d.lhs_contracting_dimensions, ragged);
  const bool batch = Contains(d.lhs_batch_dimensions, ragged);
  const int64_t groups = group_sizes.dimensions(group_sizes.rank() - 1);
  if (!contracting && !batch) {
    if (r.rhs_group_dimensions.size() != 1) {
      return Error(
          "ragged-dot with a non-contracting ragged dimension needs "
          "one rhs group dimension, got ",
          IntList(r.rhs_group_dimensions));
    }
    const int64_t g = r.rhs_group_dimensions[0];
    if (g < 0 || g >= rhs.rank() || Contains(d.rhs_contracting_dimensions, g) ||
        Contains(d.rhs_batch_dimensions, g)) {
      return Error("ragged-dot rhs group dimension ", g,
                   " must be a free dimension of ", ShapeText(rhs));
    }
    if (!DimEq(rhs.dimensions(g), groups)) {
      return Error("ragged-dot group sizes ", ShapeText(group_sizes),
                   " must have one entry per rhs group, ", ShapeText(rhs),
                   " has ", rhs.dimensions(g));
    }
  } else if (!r.rhs_group_dimensions.empty()) {
    return Error(
        "ragged-dot with a contracting or batch ragged dimension "
        "takes no rhs group dimension");
  }
  DimVector dims;
  std::vector<bool> dyn;
  if (contracting) {
    dims.push_back(groups);
    dyn.push_back(false);
  }
  DotResultDims(lhs, rhs, d, r.rhs_group_dimensions, &dims, &dyn);
  auto type = MaybeUpcast(
      HigherPrecisionElementType(lhs.element_type(), rhs.element_type()),
      preferred);
  if (!type.ok()) return type.status();
  return MakeArray(*type, dims, &dyn);
}

absl::StatusOr<Shape> InferScaledDotShape(
    const Shape& lhs, const Shape& rhs, const Shape& lhs_scale,
    const Shape& rhs_scale, const DotDimensionNumbers& d,
    std::optional<PrimitiveType> preferred) {
  const Shape* pairs[2][2] = {{&lhs, &lhs_scale}, {&rhs, &rhs_scale}};
  for (auto& [op, scale] : pairs) {
    if (absl::Status s = ExpectArray(*op, "scaled-dot's operand"); !s.ok()) {
      return s;
    }
    if (absl::Status s = ExpectArray(*scale, "scaled-dot's scale"); !s.ok()) {
      return s;
    }
    if (scale->rank() != op->rank()) {
      return Error("scaled-dot scale ", ShapeText(*scale),
                   " must have the rank of its operand ", ShapeText(*op));
    }
    for (int64_t i = 0; i < op->rank(); ++i) {
      const int64_t a = op->dimensions(i);
      const int64_t b = scale->dimensions(i);
      if (a == kUnbounded || b == kUnbounded) continue;
      if (b <= 0 || a % b != 0) {
        return Error("scaled-dot scale ", ShapeText(*scale),
                     " must evenly divide its operand ", ShapeText(*op));
      }
    }
  }
  return InferDotShape(lhs, rhs, d, preferred);
}

absl::StatusOr<Shape> InferConvolutionShape(
    const Shape& lhs, const Shape& rhs, int64_t feature_group_count,
    int64_t batch_group_count, const Window& window,
    const ConvolutionDimensionNumbers& d,
    std::optional<PrimitiveType> preferred) {
  if (absl::Status s = ExpectArray(lhs, "convolution's lhs"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(rhs, "convolution's rhs"); !s.ok()) {
    return s;
  }
  if (feature_group_count <= 0) {
    return Error("feature_group_count must be positive, got ",
                 feature_group_count);
  }
  if (batch_group_count <= 0) {
    return Error("batch_group_count must be positive, got ", batch_group_count);
  }
  if (batch_group_count > 1 && feature_group_count > 1) {
    return Error("batch_group_count ", batch_group_count,
                 " and feature_group_count ", feature_group_count,
                 " cannot both be greater than 1");
  }
  const size_t spatial = d.input_spatial_dimensions.size();
  if (d.kernel_spatial_dimensions.size() != spatial ||
      d.output_spatial_dimensions.size() != spatial) {
    return Error(
        "convolution dim_labels must have the same number of "
        "spatial dimensions for input, kernel and output");
  }
  if (window.dimensions.size() != spatial) {
    return Error("convolution window has ", window.dimensions.size(),
                 " dimensions but dim_labels have ", spatial,
                 " spatial dimensions");
  }
  const int64_t num_dims = static_cast<int64_t>(spatial) + 2;
  if (lhs.rank() != num_dims) {
    return Error("convolution lhs ", ShapeText(lhs), " must have rank ",
                 num_dims);
  }
  if (rhs.rank() != num_dims) {
    return Error("convolution rhs ", ShapeText(rhs), " must have rank ",
                 num_dims);
  }
  auto labels = [&](int64_t a, int64_t b, const std::vector<int64_t>& sp) {
    std::vector<int64_t> v = {a, b};
    v.insert(v.end(), sp.begin(), sp.end());
    return v;
  };
  if (!IsPermutation(labels(d.input_batch_dimension, d.input_feature_dimension,
                            d.input_spatial_dimensions),
                     num_dims)) {
    return Error(
        "convolution input dimensions must name each dimension "
        "exactly once");
  }
  if (!IsPermutation(labels(d.kernel_input_feature_dimension,
                            d.kernel_output_feature_dimension,
                            d.kernel_spatial_dimensions),
                     num_dims)) {
    return Error(
        "convolution kernel dimensions must name each dimension "
        "exactly once");
  }
  if (!IsPermutation(
          labels(d.output_batch_dimension, d.output_feature_dimension,
                 d.output_spatial_dimensions),
          num_dims)) {
    return Error(
        "convolution output dimensions must name each dimension "
        "exactly once");
  }
  const int64_t in_features = lhs.dimensions(d.input_feature_dimension);
  const int64_t in_batch = lhs.dimensions(d.input_batch_dimension);
  const int64_t k_in = rhs.dimensions(d.kernel_input_feature_dimension);
  const int64_t k_out = rhs.dimensions(d.kernel_output_feature_dimension);
  if (k_out != kUnbounded && k_out % batch_group_count != 0) {
    return Error("convolution output feature size ", k_out,
                 " must be a multiple of batch_group_count ",
                 batch_group_count);
  }
  if (in_features != kUnbounded && k_in != kUnbounded &&
      (in_features % feature_group_count != 0 ||
       in_features / feature_group_count != k_in)) {
    return Error("convolution input feature size ", in_features,
                 " divided by feature_group_count ", feature_group_count,
                 " must equal the kernel input feature size ", k_in);
  }
  if (k_out != kUnbounded && k_out % feature_group_count != 0) {
    return Error("convolution output feature size ", k_out,
                 " must be a multiple of feature_group_count ",
                 feature_group_count);
  }
  if (in_batch != kUnbounded && in_batch % batch_group_count != 0) {
    return Error("convolution input batch size ", in_batch,
                 " must be a multiple of batch_group_count ",
                 batch_group_count);
  }
  DimVector base_dims;
  std::vector<bool> base_dyn;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t kd = rhs.dimensions(d.kernel_spatial_dimensions[i]);
    if (!DimEq(kd, window.dimensions[i].size)) {
      return Error("convolution window size ", window.dimensions[i].size,
                   " does not match kernel spatial size ", kd,
                   " in spatial dimension ", i);
    }
    base_dims.push_back(lhs.dimensions(d.input_spatial_dimensions[i]));
    base_dyn.push_back(lhs.is_dynamic_dimension(d.input_spatial_dimensions[i]));
  }
  auto windowed = InferWindowOutputShape(
      MakeArray(lhs.element_type(), base_dims, &base_dyn), window,
      lhs.element_type());
  if (!windowed.ok()) return windowed.status();
  DimVector dims(num_dims, 0);
  std::vector<bool> dyn(num_dims, false);
  dims[d.output_batch_dimension] =
      in_batch == kUnbounded ? kUnbounded : in_batch / batch_group_count;
  dyn[d.output_batch_dimension] =
      lhs.is_dynamic_dimension(d.input_batch_dimension);
  dims[d.output_feature_dimension] = k_out;
  for (size_t i = 0; i < spatial; ++i) {
    dims[d.output_spatial_dimensions[i]] = windowed->dimensions(i);
    dyn[d.output_spatial_dimensions[i]] = windowed->is_dynamic_dimension(i);
  }
  auto type = MaybeUpcast(
      HigherPrecisionElementType(lhs.element_type(), rhs.element_type()),
      preferred);
  if (!type.ok()) return type.status();
  return MakeArray(*type, dims, &dyn);
}

// ---------------------------------------------------------------------------
// Control flow.

absl::StatusOr<Shape> InferCallShape(std::span<const Shape* const> operands,
                                     const ProgramShape& to_apply) {
  if (operands.size() != to_apply.parameters.size()) {
    return Error("called computation takes ", to_apply.parameters.size(),
                 " parameters but the call passes ", operands.size(),
                 " operands");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]->Compatible(to_apply.parameters[i])) {
      return Error("operand ", i, " shape ", ShapeText(*operands[i]),
                   " does not match parameter ", i, " shape ",
                   ShapeText(to_apply.parameters[i]));
    }
  }
  return to_apply.result;
}

absl::StatusOr<Shape> InferWhileShape(const ProgramShape& condition,
                                      const ProgramShape& body,
                                      const Shape& init) {
  if (condition.parameters.size() != 1) {
    return Error("while condition must take 1 parameter, takes ",
                 condition.parameters.size());
  }
  if (body.parameters.size() != 1) {
    return Error("while body must take 1 parameter, takes ",
                 body.parameters.size());
  }
  if (!condition.result.Compatible(Shape::Scalar(PrimitiveType::kPred))) {
    return Error("while condition must return pred[], returns ",
                 ShapeText(condition.result));
  }
  if (!init.Compatible(body.parameters[0])) {
    return Error("while operand ", ShapeText(init),
                 " does not match the body parameter ",
                 ShapeText(body.parameters[0]));
  }
  if (!init.Compatible(condition.parameters[0])) {
    return Error("while operand ", ShapeText(init),
                 " does not match the condition parameter ",
                 ShapeText(condition.parameters[0]));
  }
  if (!body.result.Compatible(body.parameters[0])) {
    return Error("while body must return its parameter shape ",
                 ShapeText(body.parameters[0]), ", returns ",
                 ShapeText(body.result));
  }
  return body.result;
}

absl::StatusOr<Shape> InferConditionalShape(
    const Shape& branch_index, std::span<const ProgramShape> branches,
    std::span<const Shape* const> branch_operands) {
  if (!branch_index.IsScalar()) {
    return Error("the first operand of conditional must be a scalar, got ",
                 ShapeText(branch_index));
  }
  if (branch_index.element_type() == PrimitiveType::kPred) {
    if (branches.size() != 2) {
      return Error("conditional with a pred index needs 2 branches, has ",
                   branches.size());
    }
  } else if (branch_index.element_type() == PrimitiveType::kS32) {
    if (branches.empty()) return Error("conditional needs a branch");
  } else {
    return Error(
        "the first operand of indexed conditional must be a scalar "
        "of S32 or PRED, got ",
        ShapeText(branch_index));
  }
  if (branch_operands.size() != branches.size()) {
    return Error("conditional has ", branches.size(), " branches but ",
                 branch_operands.size(), " branch operands");
  }
  for (size_t j = 0; j < branches.size(); ++j) {
    if (branches[j].parameters.size() != 1) {
      return Error("branch computation ", j, " must take 1 parameter, takes ",
                   branches[j].parameters.size());
    }
    if (!branch_operands[j]->Compatible(branches[j].parameters[0])) {
      return Error("branch operand ", j, " shape ",
                   ShapeText(*branch_operands[j]),
                   " does not match parameter shape ",
                   ShapeText(branches[j].parameters[0]));
    }
    if (!branches[j].result.Compatible(branches[0].result)) {
      return Error("branch ", j, " returns ", ShapeText(branches[j].result),
                   " but branch 0 returns ", ShapeText(branches[0].result));
    }
  }
  return branches[0].result;
}

// ---------------------------------------------------------------------------
// Collectives.

absl::StatusOr<Shape> InferAllGatherShape(
    std::span<const Shape* const> operands, int64_t dimension,
    int64_t shard_count) {
  if (dimension < 0) return Error("all-gather dimension must be >= 0");
  if (shard_count <= 0) return Error("all-gather shard count must be > 0");
  std::vector<Shape> outs;
  for (const Shape* s : operands) {
    if (absl::Status st = ExpectArray(*s, "an operand of all-gather");
        !st.ok()) {
      return st;
    }
    if (dimension >= s->rank()) {
      return Error("all-gather dimension ", dimension, " is out of range for ",
                   ShapeText(*s));
    }
    Shape out = *s;
    out.clear_layout();
    if (out.dimensions(dimension) != kUnbounded) {
      out.set_dimensions(dimension, shard_count * out.dimensions(dimension));
    }
    outs.push_back(std::move(out));
  }
  if (outs.size() == 1) return outs[0];
  return Shape::Tuple(std::move(outs));
}

absl::StatusOr<Shape> InferAllReduceShape(
    std::span<const Shape* const> operands) {
  for (const Shape* s : operands) {
    if (absl::Status st = ExpectArray(*s, "an operand of all-reduce");
        !st.ok()) {
      return st;
    }
  }
  if (operands.size() == 1) return *operands[0];
  return InferTupleShape(operands);
}

absl::StatusOr<Shape> InferReduceScatterShape(
    std::span<const Shape* const> operands, int64_t dimension,
    int64_t shard_count) {
  if (dimension < 0) return Error("reduce-scatter dimension must be >= 0");
  if (shard_count <= 0) return Error("reduce-scatter shard count must be > 0");
  std::vector<Shape> outs;
  for (const Shape* s : operands) {
    if (absl::Status st = ExpectArray(*s, "an operand of reduce-scatter");
        !st.ok()) {
      return st;
    }
    if (dimension >= s->rank()) {
      return Error("reduce-scatter dimension ", dimension,
                   " is out of range for ", ShapeText(*s));
    }
    Shape out = *s;
    out.clear_layout();
    const int64_t size = s->dimensions(dimension);
    if (size != kUnbounded) {
      if (size % shard_count != 0) {
        return Error("reduce-scatter dimension size ", size,
                     " must be divisible by the shard count ", shard_count);
      }
      out.set_dimensions(dimension, size / shard_count);
    }
    outs.push_back(std::move(out));
  }
  if (outs.size() == 1) return outs[0];
  return Shape::Tuple(std::move(outs));
}

absl::StatusOr<Shape> InferAllToAllShape(const Shape& operand,
                                         int64_t split_dimension,
                                         int64_t concat_dimension,
                                         int64_t split_count) {
  if (absl::Status s = ExpectArray(operand, "all-to-all's operand"); !s.ok()) {
    return s;
  }
  if (split_count <= 0) return Error("all-to-all split count must be > 0");
  if (split_dimension < 0 || split_dimension >= operand.rank()) {
    return Error("all-to-all split dimension ", split_dimension,
                 " is out of range for ", ShapeText(operand));
  }
  if (concat_dimension < 0 || concat_dimension >= operand.rank()) {
    return Error("all-to-all concat dimension ", concat_dimension,
                 " is out of range for ", ShapeText(operand));
  }
  const int64_t size = operand.dimensions(split_dimension);
  if (size != kUnbounded && size % split_count != 0) {
    return Error("all-to-all split dimension size ", size,
                 " must be divisible by the split count ", split_count);
  }
  Shape out = operand;
  out.clear_layout();
  if (size != kUnbounded) {
    out.set_dimensions(split_dimension, size / split_count);
    const int64_t c = out.dimensions(concat_dimension);
    if (c != kUnbounded) out.set_dimensions(concat_dimension, c * split_count);
  }
  return out;
}

absl::StatusOr<Shape> InferAllToAllTupleShape(
    std::span<const Shape* const> operands) {
  if (operands.empty()) return Error("all-to-all needs operands");
  for (const Shape* s : operands) {
    bool same = s->EqualIgnoringLayout(*operands[0]);
    if (same && s->has_layout() && operands[0]->has_layout()) {
      same = s->layout().minor_to_major == operands[0]->layout().minor_to_major;
    }
    if (!same) {
      return Error("HLO all-to-all has operands with different shapes: ",
                   operands[0]->ToString(), " and ", s->ToString());
    }
  }
  return InferTupleShape(operands);
}

absl::StatusOr<Shape> InferCollectivePermuteShape(
    std::span<const Shape* const> operands, bool in_place) {
  if (in_place) {
    if (operands.size() != 4) {
      return Error("in-place collective-permute needs 4 operands, has ",
                   operands.size());
    }
    return *operands[1];
  }
  if (operands.empty()) return Error("collective-permute needs an operand");
  if (operands.size() == 1) return *operands[0];
  return InferTupleShape(operands);
}

// ---------------------------------------------------------------------------
// Linear algebra and misc.

namespace {

absl::Status CheckFeatureOperand(std::string_view op, std::string_view what,
                                 const Shape& s, const Shape& operand,
                                 int64_t feature_count) {
  if (absl::Status st = ExpectArray(s, what); !st.ok()) return st;
  if (s.rank() != 1) {
    return Error(op, " ", what, " must have rank 1, got ", ShapeText(s));
  }
  if (!SameElementTypeIgnoringFpPrecision(s, operand)) {
    return Error(op, " ", what, " ", ShapeText(s),
                 " must have the element type of the operand ",
                 ShapeText(operand));
  }
  if (!DimEq(s.dimensions(0), feature_count)) {
    return Error(op, " ", what, " ", ShapeText(s), " must have ", feature_count,
                 " elements (the feature count)");
  }
  return absl::OkStatus();
}

absl::Status CheckBatchNormOperand(std::string_view op, const Shape& operand,
                                   int64_t feature_index) {
  if (absl::Status st = ExpectArray(operand, "the batch-norm operand");
      !st.ok()) {
    return st;
  }
  if (operand.rank() < 1) {
    return Error(op, " operand must have rank >= 1");
  }
  if (feature_index < 0 || feature_index >= operand.rank()) {
    return Error(op, " feature_index ", feature_index, " is out of range for ",
                 ShapeText(operand));
  }
  if (!IsFloatingPointType(operand.element_type())) {
    return Error(op, " operand must be floating-point, got ",
                 ShapeText(operand));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> InferBatchNormTrainingShape(const Shape& operand,
                                                  const Shape& scale,
                                                  const Shape& offset,
                                                  int64_t feature_index) {
  const std::string_view op = "batch-norm-training";
  if (absl::Status s = CheckBatchNormOperand(op, operand, feature_index);
      !s.ok()) {
    return s;
  }
  const int64_t f = operand.dimensions(feature_index);
  if (absl::Status s = CheckFeatureOperand(op, "scale", scale, operand, f);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckFeatureOperand(op, "offset", offset, operand, f);
      !s.ok()) {
    return s;
  }
  Shape stats(operand.element_type(), {f});
  return Shape::Tuple({operand, stats, stats});
}

absl::StatusOr<Shape> InferBatchNormInferenceShape(
    const Shape& operand, const Shape& scale, const Shape& offset,
    const Shape& mean, const Shape& variance, int64_t feature_index) {
  const std::string_view op = "batch-norm-inference";
  if (absl::Status s = CheckBatchNormOperand(op, operand, feature_index);
      !s.ok()) {
    return s;
  }
  const int64_t f = operand.dimensions(feature_index);
  const std::pair<std::string_view, const Shape*> feats[] = {
      {"scale", &scale},
      {"offset", &offset},
      {"mean", &mean},
      {"variance", &variance}};
  for (const auto& [what, s] : feats) {
    if (absl::Status st = CheckFeatureOperand(op, what, *s, operand, f);
        !st.ok()) {
      return st;
    }
  }
  return operand;
}

absl::StatusOr<Shape> InferBatchNormGradShape(
    const Shape& operand, const Shape& scale, const Shape& mean,
    const Shape& variance, const Shape& output_grad, int64_t feature_index) {
  const std::string_view op = "batch-norm-grad";
  if (absl::Status s = CheckBatchNormOperand(op, operand, feature_index);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(output_grad, "batch-norm-grad's gradient");
      !s.ok()) {
    return s;
  }
  if (!IsFloatingPointType(output_grad.element_type()) ||
      !SameElementTypeIgnoringFpPrecision(output_grad, operand) ||
      !CompatibleIgnoringElementType(output_grad, operand)) {
    return Error("batch-norm-grad output gradient ", ShapeText(output_grad),
                 " must match the operand ", ShapeText(operand));
  }
  const int64_t f = operand.dimensions(feature_index);
  const std::pair<std::string_view, const Shape*> feats[] = {
      {"scale", &scale}, {"mean", &mean}, {"variance", &variance}};
  for (const auto& [what, s] : feats) {
    if (absl::Status st = CheckFeatureOperand(op, what, *s, operand, f);
        !st.ok()) {
      return st;
    }
  }
  Shape stats(operand.element_type(), {f});
  return Shape::Tuple({operand, stats, stats});
}

absl::StatusOr<Shape> InferFftShape(const Shape& in, FftType type,
                                    std::span<const int64_t> fft_length) {
  if (absl::Status s = ExpectArray(in, "fft's operand"); !s.ok()) return s;
  const int64_t fft_rank = static_cast<int64_t>(fft_length.size());
  if (fft_rank < 1 || fft_rank > 3) {
    return Error("fft supports fft_length of 1 to 3 entries, got ",
                 IntList(fft_length));
  }
  if (in.rank() < fft_rank) {
    return Error("fft of rank ", fft_rank, " needs an operand of at least ",
                 "that rank, got ", ShapeText(in));
  }
  const PrimitiveType t = in.element_type();
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft:
      if (!IsComplexType(t)) {
        return Error("FFT and IFFT need a complex operand, got ",
                     ShapeText(in));
      }
      return in;
    case FftType::kRfft: {
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) {
        return Error("RFFT needs an f32 or f64 operand, got ", ShapeText(in));
      }
      for (int64_t i = 0; i < fft_rank; ++i) {
        if (!DimEq(in.dimensions(in.rank() - fft_rank + i), fft_length[i])) {
          return Error("RFFT needs the innermost dimensions of ", ShapeText(in),
                       " to match fft_length ", IntList(fft_length));
        }
      }
      Shape out = ChangeElementType(in, t == PrimitiveType::kF32
                                            ? PrimitiveType::kC64
                                            : PrimitiveType::kC128);
      if (fft_length[fft_rank - 1] != 0) {
        out.set_dimensions(in.rank() - 1, fft_length[fft_rank - 1] / 2 + 1);
      }
      return out;
    }
    case FftType::kIrfft: {
      if (!IsComplexType(t)) {
        return Error("IRFFT needs a complex operand, got ", ShapeText(in));
      }
      for (int64_t i = 0; i + 1 < fft_rank; ++i) {
        if (!DimEq(in.dimensions(in.rank() - fft_rank + i), fft_length[i])) {
          return Error("IRFFT needs the outer fft dimensions of ",
                       ShapeText(in), " to match fft_length ",
                       IntList(fft_length));
        }
      }
      const int64_t last = in.dimensions(in.rank() - 1);
      if ((last != 0 || fft_length[fft_rank - 1] != 0) &&
          !DimEq(last, fft_length[fft_rank - 1] / 2 + 1)) {
        return Error(
            "IRFFT needs the innermost dimension of ", ShapeText(in),
            " to be fft_length/2+1 = ", fft_length[fft_rank - 1] / 2 + 1);
      }
      Shape out = ChangeElementType(in, ComplexComponentType(t));
      out.set_dimensions(in.rank() - 1, fft_length[fft_rank - 1]);
      return out;
    }
  }
  return Error("unknown fft type");
}

absl::StatusOr<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b,
                                                bool left_side) {
  if (absl::Status s = ExpectArray(a, "triangular-solve's a"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(b, "triangular-solve's b"); !s.ok()) {
    return s;
  }
  if ((!IsFloatingPointType(a.element_type()) &&
       !IsComplexType(a.element_type())) ||
      a.element_type() != b.element_type()) {
    return Error("triangular-solve needs identical floating-point or complex ",
                 "element types, got ", ShapeText(a), " and ", ShapeText(b));
  }
  if (a.rank() < 2) {
    return Error("triangular-solve's a must have rank >= 2, got ",
                 ShapeText(a));
  }
  if (b.rank() != a.rank()) {
    return Error("triangular-solve operands must have equal rank, got ",
                 ShapeText(a), " and ", ShapeText(b));
  }
  if (!DimEq(a.dimensions(a.rank() - 2), a.dimensions(a.rank() - 1))) {
    return Error("triangular-solve's a must be square in its two minor ",
                 "dimensions, got ", ShapeText(a));
  }
  if (!DimEq(a.dimensions(a.rank() - 1),
             b.dimensions(b.rank() - (left_side ? 2 : 1)))) {
    return Error("triangular-solve shared dimension of ", ShapeText(a), " and ",
                 ShapeText(b), " does not match");
  }
  for (int64_t i = 0; i + 2 < a.rank(); ++i) {
    if (!DimEq(a.dimensions(i), b.dimensions(i))) {
      return Error("triangular-solve batch dimensions of ", ShapeText(a),
                   " and ", ShapeText(b), " must be equal");
    }
  }
  return b;
}

absl::StatusOr<Shape> InferCholeskyShape(const Shape& a) {
  if (absl::Status s = ExpectArray(a, "cholesky's operand"); !s.ok()) return s;
  if (!IsFloatingPointType(a.element_type()) &&
      !IsComplexType(a.element_type())) {
    return Error("cholesky needs a floating-point or complex operand, got ",
                 ShapeText(a));
  }
  if (a.rank() < 2) {
    return Error("cholesky's operand must have rank >= 2, got ", ShapeText(a));
  }
  if (!DimEq(a.dimensions(a.rank() - 2), a.dimensions(a.rank() - 1))) {
    return Error(
        "cholesky's operand must be square in its two minor "
        "dimensions, got ",
        ShapeText(a));
  }
  return a;
}

absl::StatusOr<Shape> InferGetDimensionSizeShape(const Shape& operand,
                                                 int64_t dimension) {
  if (absl::Status s = ExpectArray(operand, "get-dimension-size's operand");
      !s.ok()) {
    return s;
  }
  if (dimension < 0) {
    return Error("get-dimension-size dimension ", dimension, " is negative");
  }
  return Shape::Scalar(PrimitiveType::kS32);
}

absl::StatusOr<Shape> InferSetDimensionSizeShape(const Shape& operand,
                                                 const Shape& value,
                                                 int64_t dimension) {
  if (absl::Status s = ExpectArray(operand, "set-dimension-size's operand");
      !s.ok()) {
    return s;
  }
  if (dimension < 0 || dimension >= operand.rank()) {
    return Error("set-dimension-size dimension ", dimension,
                 " is out of range for ", ShapeText(operand));
  }
  if (!value.IsScalar() || value.element_type() != PrimitiveType::kS32) {
    return Error("set-dimension-size value must be s32[], got ",
                 ShapeText(value));
  }
  Shape result = operand;
  result.set_dynamic_dimension(dimension, true);
  return result;
}

}  // namespace hlogym
