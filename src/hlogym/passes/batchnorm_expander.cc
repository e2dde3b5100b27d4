#include "hlogym/passes/batchnorm_expander.h"

#include <vector>

#include "hlogym/ir/shape_inference.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"

namespace hlogym {
namespace {

// Builds the expansion of one batch-norm instruction.
class Expander {
 public:
  Expander(Rewriter& rw, Instruction* bn) : rw_(rw), bn_(bn) {}

  absl::StatusOr<bool> Run() {
    if (!Checked()) return false;
    switch (bn_->opcode()) {
      case Opcode::kBatchNormTraining:
        return Training();
      case Opcode::kBatchNormInference:
        return Inference();
      case Opcode::kBatchNormGrad:
        return Grad();
      default:
        return false;
    }
  }

 private:
  bool Checked() {
    const int64_t want = bn_->opcode() == Opcode::kBatchNormTraining ? 3 : 5;
    if (bn_->operand_count() != want) return false;
    const Shape& x = bn_->operand(0)->shape();
    feature_ = bn_->attrs().feature_index;
    if (!x.IsArray() || x.is_dynamic() ||
        !IsFloatingPointType(x.element_type()) || feature_ < 0 ||
        feature_ >= x.rank()) {
      return false;
    }
    for (const Instruction* op : bn_->operands()) {
      if (!op->shape().IsArray() || op->shape().is_dynamic()) return false;
    }
    absl::StatusOr<Shape> s = absl::InternalError("unchecked");
    const auto& o = bn_->operands();
    if (bn_->opcode() == Opcode::kBatchNormTraining) {
      s = InferBatchNormTrainingShape(o[0]->shape(), o[1]->shape(),
                                      o[2]->shape(), feature_);
    } else if (bn_->opcode() == Opcode::kBatchNormInference) {
      s = InferBatchNormInferenceShape(o[0]->shape(), o[1]->shape(),
                                       o[2]->shape(), o[3]->shape(),
                                       o[4]->shape(), feature_);
    } else {
      s = InferBatchNormGradShape(o[0]->shape(), o[1]->shape(), o[2]->shape(),
                                  o[3]->shape(), o[4]->shape(), feature_);
    }
    if (!s.ok()) return false;
    type_ = x.element_type();
    dims_.assign(x.dimensions().begin(), x.dimensions().end());
    elements_ = 1;
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (i != feature_) {
        reduce_dims_.push_back(i);
        elements_ *= x.dimensions(i);
      }
    }
    return true;
  }

  absl::StatusOr<Instruction*> Scalar(double v) {
    return MakeScalarConstant(rw_, bn_->parent(), type_, v);
  }
  // A feature vector broadcast along the feature dimension.
  absl::StatusOr<Instruction*> FeatureBroadcast(Instruction* v) {
    const int64_t dims[] = {feature_};
    return MakeBroadcast(rw_, v, dims_, dims);
  }
  absl::StatusOr<Instruction*> Fill(Instruction* scalar,
                                    const std::vector<int64_t>& dims) {
    return MakeBroadcast(rw_, scalar, dims, {});
  }
  absl::StatusOr<Instruction*> Bin(Opcode op, Instruction* a, Instruction* b) {
    return MakeBinary(rw_, op, a, b);
  }
  absl::StatusOr<Instruction*> Sum(Instruction* x) {
    if (add_ == nullptr) {
      HLOGYM_ASSIGN_OR_RETURN(add_,
                              MakeScalarReducer(rw_, Opcode::kAdd, type_));
    }
    HLOGYM_ASSIGN_OR_RETURN(Instruction * zero, Scalar(0));
    return MakeReduce(rw_, x, zero, reduce_dims_, add_);
  }
  // x / (elements per feature), for x of any shape.
  absl::StatusOr<Instruction*> Mean(Instruction* count, Instruction* x) {
    const DimVector& d = x->shape().dimensions();
    HLOGYM_ASSIGN_OR_RETURN(
        Instruction * n, Fill(count, std::vector<int64_t>(d.begin(), d.end())));
    return Bin(Opcode::kDivide, x, n);
  }
  std::vector<int64_t> FeatureDims() const { return {dims_[feature_]}; }

  absl::StatusOr<bool> Training() {
    Instruction* x = bn_->operand(0);
    Instruction* scale = bn_->operand(1);
    Instruction* offset = bn_->operand(2);
    HLOGYM_ASSIGN_OR_RETURN(Instruction * eps_scalar,
                            Scalar(bn_->attrs().epsilon));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * eps, Fill(eps_scalar, dims_));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * count,
                            Scalar(static_cast<double>(elements_)));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * scale_b, FeatureBroadcast(scale));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * offset_b, FeatureBroadcast(offset));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * x2, Bin(Opcode::kMultiply, x, x));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * sum, Sum(x));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * sum2, Sum(x2));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * mean, Mean(count, sum));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * mean_b, FeatureBroadcast(mean));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * square_mean, Mean(count, sum2));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * mean_square,
                            Bin(Opcode::kMultiply, mean, mean));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * var,
                            Bin(Opcode::kSubtract, square_mean, mean_square));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * var_b, FeatureBroadcast(var));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * var_eps,
                            Bin(Opcode::kAdd, var_b, eps));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * rsqrt,
                            MakeUnary(rw_, Opcode::kRsqrt, var_eps));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * centered,
                            Bin(Opcode::kSubtract, x, mean_b));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * normalized,
                            Bin(Opcode::kMultiply, centered, rsqrt));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * scaled,
                            Bin(Opcode::kMultiply, normalized, scale_b));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * shifted,
                            Bin(Opcode::kAdd, scaled, offset_b));
    Instruction* elems[] = {shifted, mean, var};
    HLOGYM_ASSIGN_OR_RETURN(Instruction * tuple,
                            MakeTuple(rw_, bn_->parent(), elems));
    return rw_.ReplaceInstruction(bn_, tuple);
  }

  absl::StatusOr<bool> Inference() {
    Instruction* x = bn_->operand(0);
    Instruction* scale = bn_->operand(1);
    Instruction* offset = bn_->operand(2);
    Instruction* mean = bn_->operand(3);
    Instruction* var = bn_->operand(4);
    HLOGYM_ASSIGN_OR_RETURN(Instruction * eps_scalar,
                            Scalar(bn_->attrs().epsilon));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * eps, Fill(eps_scalar, FeatureDims()));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * var_eps, Bin(Opcode::kAdd, var, eps));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * rsqrt,
                            MakeUnary(rw_, Opcode::kRsqrt, var_eps));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * true_scale,
                            Bin(Opcode::kMultiply, scale, rsqrt));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * mean_scaled,
                            Bin(Opcode::kMultiply, mean, true_scale));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * true_shift,
                            Bin(Opcode::kSubtract, offset, mean_scaled));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * scale_b,
                            FeatureBroadcast(true_scale));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * scaled,
                            Bin(Opcode::kMultiply, x, scale_b));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * shift_b,
                            FeatureBroadcast(true_shift));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * result,
                            Bin(Opcode::kAdd, scaled, shift_b));
    return rw_.ReplaceInstruction(bn_, result);
  }

  absl::StatusOr<bool> Grad() {
    Instruction* x = bn_->operand(0);
    Instruction* scale = bn_->operand(1);
    Instruction* mean = bn_->operand(2);
    Instruction* var = bn_->operand(3);
    Instruction* dy = bn_->operand(4);
    HLOGYM_ASSIGN_OR_RETURN(Instruction * count,
                            Scalar(static_cast<double>(elements_)));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * eps_scalar,
                            Scalar(bn_->attrs().epsilon));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * eps_x, Fill(eps_scalar, dims_));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * eps_f,
                            Fill(eps_scalar, FeatureDims()));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * scale_b, FeatureBroadcast(scale));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * var_b, FeatureBroadcast(var));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * mean_b, FeatureBroadcast(mean));
    // rsqrt(Var + eps), per element and per feature.
    HLOGYM_ASSIGN_OR_RETURN(Instruction * var_eps_x,
                            Bin(Opcode::kAdd, var_b, eps_x));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * rsqrt_x,
                            MakeUnary(rw_, Opcode::kRsqrt, var_eps_x));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * var_eps_f,
                            Bin(Opcode::kAdd, var, eps_f));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * rsqrt_f,
                            MakeUnary(rw_, Opcode::kRsqrt, var_eps_f));
    // X - E[X] and Grad[Y] * (X - E[X]).
    HLOGYM_ASSIGN_OR_RETURN(Instruction * centered,
                            Bin(Opcode::kSubtract, x, mean_b));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * dy_centered,
                            Bin(Opcode::kMultiply, dy, centered));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * sum_dy_centered, Sum(dy_centered));
    // Grad[offset] = Sum(Grad[Y]); Grad[scale] = Sum(Grad[Y] * (X - E[X]))
    // * rsqrt(Var + eps).
    HLOGYM_ASSIGN_OR_RETURN(Instruction * grad_offset, Sum(dy));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * grad_scale,
                            Bin(Opcode::kMultiply, sum_dy_centered, rsqrt_f));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * i2, FeatureBroadcast(grad_offset));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * i3,
                            FeatureBroadcast(sum_dy_centered));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * i4,
                            Bin(Opcode::kMultiply, i3, centered));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * var_eps_x2,
                            Bin(Opcode::kAdd, var_b, eps_x));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * i5,
                            Bin(Opcode::kDivide, i4, var_eps_x2));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * scale_rsqrt,
                            Bin(Opcode::kMultiply, scale_b, rsqrt_x));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * scale_rsqrt_n,
                            Mean(count, scale_rsqrt));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * count_x, Fill(count, dims_));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * i1,
                            Bin(Opcode::kMultiply, dy, count_x));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * i1_i2,
                            Bin(Opcode::kSubtract, i1, i2));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * i6,
                            Bin(Opcode::kSubtract, i1_i2, i5));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * grad_x,
                            Bin(Opcode::kMultiply, scale_rsqrt_n, i6));
    Instruction* elems[] = {grad_x, grad_scale, grad_offset};
    HLOGYM_ASSIGN_OR_RETURN(Instruction * tuple,
                            MakeTuple(rw_, bn_->parent(), elems));
    return rw_.ReplaceInstruction(bn_, tuple);
  }

  Rewriter& rw_;
  Instruction* bn_;
  int64_t feature_ = 0;
  PrimitiveType type_ = PrimitiveType::kF32;
  std::vector<int64_t> dims_;
  std::vector<int64_t> reduce_dims_;
  int64_t elements_ = 1;
  Computation* add_ = nullptr;
};

}  // namespace

absl::StatusOr<bool> BatchNormExpander::RunWith(Module* module, Rewriter& rw) {
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        const Opcode op = inst->opcode();
        if (op != Opcode::kBatchNormTraining &&
            op != Opcode::kBatchNormInference && op != Opcode::kBatchNormGrad) {
          return false;
        }
        Expander e(rw, inst);
        return e.Run();
      });
}

}  // namespace hlogym
