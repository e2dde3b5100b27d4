#include "generate.h"

#include <array>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

// The value shapes the generator moves between. Keeping to a few related
// shapes lets every op find operands of the right shape nearby.
enum ShapeId : int { kMat = 0, kMatT, kRow, kCol, kSquare, kScalar, kNumIds };

// Copied from a named empty vector: moving a `{}` temporary trips a GCC 12
// maybe-uninitialized false positive in absl::InlinedVector.
const DimVector& NoDims() {
  static const DimVector* kNone = new DimVector();
  return *kNone;
}

Shape MakeShape(ShapeId id, PrimitiveType t = PrimitiveType::kF32) {
  switch (id) {
    case kMat:
      return Shape(t, DimVector{64, 128});
    case kMatT:
      return Shape(t, DimVector{128, 64});
    case kRow:
      return Shape(t, DimVector{64});
    case kCol:
      return Shape(t, DimVector{128});
    case kSquare:
      return Shape(t, DimVector{64, 64});
    default:
      return Shape::Scalar(t);
  }
}

class Generator {
 public:
  Generator(int64_t n, uint64_t seed) : target_(n), rng_(seed) {}

  std::unique_ptr<Module> Run() {
    module_ = std::make_unique<Module>("synthetic");
    auto entry = std::make_unique<Computation>("main");
    entry_ = entry.get();
    const std::array<ShapeId, 6> param_shapes = {kMat, kMatT, kSquare,
                                                 kRow, kCol,  kMat};
    for (size_t i = 0; i < param_shapes.size(); ++i) {
      auto p = std::make_unique<Instruction>(Opcode::kParameter,
                                             MakeShape(param_shapes[i]));
      p->set_int_attr(static_cast<int64_t>(i));
      Emit(std::move(p), "Arg_" + std::to_string(i), param_shapes[i]);
    }
    for (int id = 0; id < kNumIds; ++id) {
      if (values_[id].empty()) EmitFill(static_cast<ShapeId>(id));
    }
    while (count_ < target_ - 1) Step();
    // The root gathers a few recent values of different shapes.
    std::vector<Instruction*> outs;
    std::vector<Shape> shapes;
    for (int id : {kMat, kRow, kSquare}) {
      outs.push_back(values_[id].back());
      shapes.push_back(values_[id].back()->shape());
    }
    auto root = Make(Opcode::kTuple, Shape::Tuple(shapes), outs);
    Instruction* r = AddToEntry(std::move(root), "tuple");
    entry_->set_root_instruction(r);
    ComputationLayout layout;
    for (Instruction* p : entry_->parameter_instructions()) {
      layout.parameters.push_back(p->shape());
    }
    layout.result = r->shape();
    module_->mutable_config()->entry_computation_layout = std::move(layout);
    module_->AddComputation(std::move(entry), /*is_entry=*/true);
    return std::move(module_);
  }

 private:
  uint64_t Rand(uint64_t n) { return rng_() % n; }

  // Mostly recent values (as in traced programs), sometimes older ones.
  Instruction* Pick(ShapeId id) {
    const auto& v = values_[id];
    const uint64_t window =
        Rand(8) == 0 ? v.size() : std::min<uint64_t>(v.size(), 16);
    return v[v.size() - 1 - Rand(window)];
  }

  static std::unique_ptr<Instruction> Make(
      Opcode op, Shape shape, const std::vector<Instruction*>& ops) {
    auto inst = std::make_unique<Instruction>(op, std::move(shape));
    for (Instruction* o : ops) inst->AppendOperand(o);
    return inst;
  }

  Instruction* AddToEntry(std::unique_ptr<Instruction> inst,
                          std::string_view base) {
    inst->set_name(StrCat(base, ".", next_id_++));
    OpMetadata md;
    md.op_name = StrCat("jit(synthetic)/jit(main)/", base);
    md.source_file = "/workspace/model.py";
    md.source_line = static_cast<int32_t>(10 + Rand(400));
    inst->set_metadata(std::move(md));
    ++count_;
    return entry_->AddInstruction(std::move(inst));
  }

  Instruction* Emit(std::unique_ptr<Instruction> inst, std::string_view base,
                    ShapeId id) {
    Instruction* i = AddToEntry(std::move(inst), base);
    values_[id].push_back(i);
    return i;
  }

  Instruction* Constant(double v) {
    auto c =
        std::make_unique<Instruction>(Opcode::kConstant, MakeShape(kScalar));
    Literal lit(MakeShape(kScalar));
    lit.SetFromDouble(0, v);
    c->set_literal(std::move(lit));
    return Emit(std::move(c), "constant", kScalar);
  }

  // A broadcast of a scalar constant, so that every shape has a value.
  void EmitFill(ShapeId id) {
    Instruction* k = Constant(static_cast<double>(Rand(100)) / 10.0);
    if (id == kScalar) return;
    auto b = Make(Opcode::kBroadcast, MakeShape(id), {k});
    b->set_dimensions(NoDims());
    Emit(std::move(b), "broadcast", id);
  }

  Computation* NewRegion(Opcode op) {
    auto c = std::make_unique<Computation>(
        StrCat("region_", regions_++, ".", next_id_++));
    auto a =
        std::make_unique<Instruction>(Opcode::kParameter, MakeShape(kScalar));
    a->set_name(StrCat("Arg_0.", next_id_++));
    a->set_int_attr(0);
    auto b =
        std::make_unique<Instruction>(Opcode::kParameter, MakeShape(kScalar));
    b->set_name(StrCat("Arg_1.", next_id_++));
    b->set_int_attr(1);
    Instruction* pa = c->AddInstruction(std::move(a));
    Instruction* pb = c->AddInstruction(std::move(b));
    auto r = Make(op, MakeShape(kScalar), {pa, pb});
    r->set_name(StrCat(OpcodeName(op), ".", next_id_++));
    c->set_root_instruction(c->AddInstruction(std::move(r)));
    count_ += 3;
    return module_->AddComputation(std::move(c), false);
  }

  void Step() {
    static constexpr Opcode kUnary[] = {
        Opcode::kExp, Opcode::kTanh,  Opcode::kNegate,   Opcode::kAbs,
        Opcode::kLog, Opcode::kRsqrt, Opcode::kLogistic, Opcode::kSqrt};
    static constexpr Opcode kBinary[] = {Opcode::kAdd,      Opcode::kMultiply,
                                         Opcode::kSubtract, Opcode::kDivide,
                                         Opcode::kMaximum,  Opcode::kMinimum};
    const uint64_t r = Rand(100);
    const ShapeId id = static_cast<ShapeId>(Rand(kNumIds - 1));  // no scalar
    if (r < 25) {
      const Opcode op = kUnary[Rand(std::size(kUnary))];
      Emit(Make(op, MakeShape(id), {Pick(id)}), OpcodeName(op), id);
    } else if (r < 55) {
      const Opcode op = kBinary[Rand(std::size(kBinary))];
      Emit(Make(op, MakeShape(id), {Pick(id), Pick(id)}), OpcodeName(op), id);
    } else if (r < 62) {
      Constant(static_cast<double>(Rand(1000)) / 100.0 - 5.0);
      // A constant is usually broadcast right away.
      auto b =
          Make(Opcode::kBroadcast, MakeShape(id), {values_[kScalar].back()});
      b->set_dimensions(NoDims());
      Emit(std::move(b), "broadcast", id);
    } else if (r < 70) {
      // Row/column vectors broadcast into matrices.
      if (Rand(2) == 0) {
        auto b = Make(Opcode::kBroadcast, MakeShape(kMat), {Pick(kRow)});
        b->set_dimensions({0});
        Emit(std::move(b), "broadcast", kMat);
      } else {
        auto b = Make(Opcode::kBroadcast, MakeShape(kMat), {Pick(kCol)});
        b->set_dimensions({1});
        Emit(std::move(b), "broadcast", kMat);
      }
    } else if (r < 75) {
      if (Rand(2) == 0) {
        Emit(Make(Opcode::kReshape, MakeShape(kMatT), {Pick(kMat)}), "reshape",
             kMatT);
      } else {
        auto t = Make(Opcode::kTranspose, MakeShape(kMat), {Pick(kMatT)});
        t->set_dimensions({1, 0});
        Emit(std::move(t), "transpose", kMat);
      }
    } else if (r < 81) {
      DotDimensionNumbers d;
      d.lhs_contracting_dimensions = {1};
      d.rhs_contracting_dimensions = {0};
      std::unique_ptr<Instruction> dot;
      ShapeId out;
      if (Rand(2) == 0) {
        dot = Make(Opcode::kDot, MakeShape(kSquare), {Pick(kMat), Pick(kMatT)});
        out = kSquare;
      } else {
        dot = Make(Opcode::kDot, MakeShape(kMat), {Pick(kSquare), Pick(kMat)});
        out = kMat;
      }
      InstructionAttrs* a = dot->mutable_attrs();
      a->dot_dnums = std::move(d);
      a->operand_precision = {Precision::kDefault, Precision::kDefault};
      Emit(std::move(dot), "dot", out);
    } else if (r < 87) {
      const bool is_max = Rand(3) == 0;
      Computation* region = NewRegion(is_max ? Opcode::kMaximum : Opcode::kAdd);
      Instruction* init = Constant(is_max ? -1e30 : 0.0);
      const bool rows = Rand(2) == 0;
      const ShapeId in = Rand(2) == 0 ? kMat : kSquare;
      const ShapeId out = in == kSquare || rows ? kRow : kCol;
      auto red = Make(Opcode::kReduce, MakeShape(out), {Pick(in), init});
      red->set_dimensions({in == kSquare || rows ? 1 : 0});
      red->set_called_computations({region});
      Emit(std::move(red), "reduce", out);
    } else if (r < 93) {
      auto cmp = Make(Opcode::kCompare, MakeShape(id, PrimitiveType::kPred),
                      {Pick(id), Pick(id)});
      cmp->set_comparison_direction(Rand(2) == 0 ? ComparisonDirection::kGt
                                                 : ComparisonDirection::kLt);
      Instruction* c = AddToEntry(std::move(cmp), "compare");
      Emit(Make(Opcode::kSelect, MakeShape(id), {c, Pick(id), Pick(id)}),
           "select", id);
    } else {
      // A tuple and one of its elements back out (as loops and calls do).
      Instruction* a = Pick(id);
      Instruction* b = Pick(kRow);
      auto t =
          Make(Opcode::kTuple, Shape::Tuple({a->shape(), b->shape()}), {a, b});
      Instruction* tuple = AddToEntry(std::move(t), "tuple");
      const int64_t index = static_cast<int64_t>(Rand(2));
      auto gte = Make(Opcode::kGetTupleElement,
                      index == 0 ? a->shape() : b->shape(), {tuple});
      gte->set_int_attr(index);
      Emit(std::move(gte), "get-tuple-element", index == 0 ? id : kRow);
    }
  }

  int64_t target_;
  std::mt19937_64 rng_;
  std::unique_ptr<Module> module_;
  Computation* entry_ = nullptr;
  std::array<std::vector<Instruction*>, kNumIds> values_;
  int64_t count_ = 0;
  int64_t next_id_ = 0;
  int64_t regions_ = 0;
};

}  // namespace

std::unique_ptr<Module> GenerateSyntheticModule(int64_t n_instructions,
                                                uint64_t seed) {
  return Generator(n_instructions, seed).Run();
}

}  // namespace hlogym
