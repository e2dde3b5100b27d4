#include "hlogym/eval/interpreter.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "hlogym/eval/index_util.h"
#include "hlogym/eval/library_calls.h"
#include "hlogym/eval/rng.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

// A runtime value: an array (or token) shared between instructions, or a
// tuple of values. Copying a Value never copies array data, so
// get-tuple-element, tuple, while-loop state and calls are O(1) per leaf.
struct Value {
  std::shared_ptr<const Literal> array;
  std::shared_ptr<const std::vector<Value>> tuple;
  // The result of an async computation whose operands are not all bound
  // yet: it holds zeros until the computation runs.
  bool pending = false;

  bool is_tuple() const { return tuple != nullptr; }
  bool empty() const { return array == nullptr && tuple == nullptr; }
};

Literal ToLiteral(const Value& v) {
  if (v.empty()) return Literal();
  if (!v.is_tuple()) return *v.array;
  std::vector<Shape> shapes;
  std::vector<Literal> elements;
  for (const Value& e : *v.tuple) {
    elements.push_back(ToLiteral(e));
    shapes.push_back(elements.back().shape());
  }
  Literal out(Shape::Tuple(std::move(shapes)));
  *out.mutable_tuple_elements() = std::move(elements);
  return out;
}

// Same element type and dimensions (layouts and dynamic-ness ignored).
bool SameArrayShape(const Shape& a, const Shape& b) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() ||
        a.tuple_shapes_size() != b.tuple_shapes_size()) {
      return false;
    }
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!SameArrayShape(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  return a.element_type() == b.element_type() &&
         a.dimensions() == b.dimensions();
}

std::string Where(const Instruction& inst) {
  std::string s = StrCat("%", inst.name());
  if (inst.source_line() > 0) {
    StrAppend(&s, " (line ", inst.source_line(), ")");
  }
  return s;
}

absl::Status Annotate(const absl::Status& s, const Instruction& inst) {
  if (s.ok()) return s;
  std::string msg(s.message());
  // Only the innermost instruction names itself.
  if (msg.rfind("%", 0) == 0) return s;
  return absl::Status(s.code(), StrCat(Where(inst), ": ", msg));
}

bool IsCommutative(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

}  // namespace

// ---------------------------------------------------------------------------
class Interpreter::Impl : public KernelContext {
 public:
  Impl(const InterpreterOptions& options, Interpreter* owner)
      : options_(options),
        owner_(owner),
        live_bytes_(std::make_shared<int64_t>(0)),
        rng_(options.rng_seed) {}

  absl::StatusOr<Value> EvalComputation(const Computation& c,
                                        std::vector<Value> args);

  // KernelContext.
  absl::StatusOr<ScalarFunction*> GetScalarFunction(
      const Computation* c) override;
  absl::Status Poll() override { return CheckDeadline(); }

  Value MakeArray(Literal lit) {
    int64_t bytes = static_cast<int64_t>(lit.size_bytes());
    *live_bytes_ += bytes;
    if (*live_bytes_ > owner_->peak_live_bytes_) {
      owner_->peak_live_bytes_ = *live_bytes_;
    }
    std::shared_ptr<int64_t> counter = live_bytes_;
    Value v;
    v.array = std::shared_ptr<const Literal>(
        new Literal(std::move(lit)), [counter, bytes](const Literal* p) {
          *counter -= bytes;
          delete p;
        });
    return v;
  }
  Value FromLiteral(Literal lit) {
    if (!lit.shape().IsTuple()) return MakeArray(std::move(lit));
    auto elements = std::make_shared<std::vector<Value>>();
    for (Literal& e : *lit.mutable_tuple_elements()) {
      elements->push_back(FromLiteral(std::move(e)));
    }
    Value v;
    v.tuple = std::move(elements);
    return v;
  }
  // A value that refers to `lit` without copying it; `lit` must outlive the
  // run (arguments and constants do).
  static Value Borrow(const Literal& lit) {
    Value v;
    if (!lit.shape().IsTuple()) {
      v.array = std::shared_ptr<const Literal>(&lit, [](const Literal*) {});
      return v;
    }
    std::vector<Value> elements;
    for (const Literal& e : lit.tuple_elements()) elements.push_back(Borrow(e));
    return MakeTuple(std::move(elements));
  }
  static Value MakeTuple(std::vector<Value> elements) {
    Value v;
    v.tuple = std::make_shared<const std::vector<Value>>(std::move(elements));
    return v;
  }
  // A value of `shape` filled with zeros (tokens included).
  Value Zeros(const Shape& shape) {
    if (shape.IsTuple()) {
      std::vector<Value> elements;
      for (const Shape& s : shape.tuple_shapes()) elements.push_back(Zeros(s));
      return MakeTuple(std::move(elements));
    }
    return MakeArray(Literal(shape));
  }

 private:
  friend class Interpreter;
  friend class CompiledScalarFunction;

  // The evaluation order of a computation, computed once per run.
  struct Plan {
    std::vector<const Instruction*> order;
    std::vector<absl::InlinedVector<int32_t, 3>> operand_pos;
    std::vector<int32_t> uses;  // operand slots reading each position
    std::vector<int32_t> param_pos;
    int32_t root_pos = -1;
  };
  absl::StatusOr<const Plan*> GetPlan(const Computation& c);

  absl::StatusOr<Value> EvalInstruction(const Instruction& inst,
                                        std::vector<Value>& operands);
  absl::StatusOr<Value> EvalCollective(const Instruction& inst,
                                       std::vector<Value>& operands);
  absl::StatusOr<Value> EvalWhile(const Instruction& inst, Value init);
  absl::StatusOr<Value> EvalConditional(const Instruction& inst,
                                        std::vector<Value>& operands);
  absl::StatusOr<Value> EvalMap(const Instruction& inst,
                                std::vector<Value>& operands);
  absl::StatusOr<Value> EvalRng(const Instruction& inst,
                                std::vector<Value>& operands);
  absl::StatusOr<Value> EvalCustomCall(const Instruction& inst,
                                       std::vector<Value>& operands);
  absl::StatusOr<Value> EvalAsyncStart(const Instruction& inst,
                                       std::vector<Value>& operands);
  absl::StatusOr<Value> AdvanceAsync(const Instruction& inst,
                                     std::vector<Value>& operands);
  absl::StatusOr<Value> EvalScan(const Instruction& inst,
                                 std::vector<Value>& operands);
  absl::StatusOr<Value> EvalScaledDot(const Instruction& inst,
                                      std::vector<Value>& operands);
  absl::Status CheckBudget(const Instruction& inst) {
    int64_t need = inst.shape().ArrayBytes();
    if (need > options_.max_live_bytes - *live_bytes_) {
      return absl::ResourceExhaustedError(StrCat(
          Where(inst), ": evaluating it needs ", need, " bytes on top of ",
          *live_bytes_, " live bytes, over the interpreter's limit of ",
          options_.max_live_bytes, " (InterpreterOptions::max_live_bytes)"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckDeadline() {
    if (options_.time_limit_seconds <= 0) return absl::OkStatus();
    if (std::chrono::steady_clock::now() < deadline_) return absl::OkStatus();
    return absl::DeadlineExceededError(
        StrCat("the run exceeded its time limit of ",
               options_.time_limit_seconds, " s"));
  }

  const InterpreterOptions& options_;
  Interpreter* owner_;
  std::chrono::steady_clock::time_point deadline_ =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(options_.time_limit_seconds));
  std::shared_ptr<int64_t> live_bytes_;
  CounterRng rng_;
  int depth_ = 0;
  absl::flat_hash_map<const Computation*, std::unique_ptr<Plan>> plans_;
  absl::flat_hash_map<const Computation*, std::unique_ptr<ScalarFunction>>
      scalar_functions_;
};

// ---------------------------------------------------------------------------
// Scalar computations (reducers, comparators, combiners) are compiled into a
// straight-line program over fixed 16-byte slots, so calling one per element
// allocates nothing. Computations using anything but parameters, constants
// and elementwise ops fall back to the general evaluator.
class CompiledScalarFunction : public ScalarFunction {
 public:
  static std::unique_ptr<CompiledScalarFunction> TryCompile(
      const Computation& c) {
    auto f = std::make_unique<CompiledScalarFunction>();
    std::vector<Instruction*> order = c.MakeInstructionPostOrder();
    absl::flat_hash_map<const Instruction*, int32_t> slot;
    for (Instruction* inst : order) {
      Opcode op = inst->opcode();
      bool scalar = inst->shape().IsScalar();
      if (op == Opcode::kTuple && inst == c.root_instruction()) {
        for (const Instruction* o : inst->operands()) {
          if (!slot.contains(o)) return nullptr;
          f->results_.push_back(
              {slot[o], ByteWidth(o->shape().element_type())});
        }
        continue;
      }
      if (!scalar) return nullptr;
      int32_t s = static_cast<int32_t>(f->slots_.size());
      f->slots_.emplace_back();
      slot[inst] = s;
      if (op == Opcode::kParameter) {
        int64_t n = inst->parameter_number();
        if (n < 0 || n >= c.num_parameters()) return nullptr;
        if (static_cast<int64_t>(f->params_.size()) <= n) {
          f->params_.resize(n + 1, {-1, 0});
        }
        f->params_[n] = {s, ByteWidth(inst->shape().element_type())};
      } else if (op == Opcode::kConstant) {
        if (!inst->has_literal() || inst->literal().is_unknown() ||
            inst->literal().size_bytes() > sizeof(Slot)) {
          return nullptr;
        }
        std::memcpy(f->slots_[s].bytes, inst->literal().data(),
                    inst->literal().size_bytes());
      } else if (IsElementwiseOpcode(op) || op == Opcode::kCopy ||
                 op == Opcode::kBitcast || op == Opcode::kReshape ||
                 op == Opcode::kBroadcast) {
        Step step;
        step.inst = inst;
        step.out = s;
        step.copy = !IsElementwiseOpcode(op);
        for (const Instruction* o : inst->operands()) {
          if (!slot.contains(o)) return nullptr;
          step.in.push_back(slot[o]);
        }
        if (step.copy && step.in.size() != 1) return nullptr;
        step.width = ByteWidth(inst->shape().element_type());
        if (!step.copy) step.fast = ChooseFast(*inst);
        f->steps_.push_back(std::move(step));
      } else {
        return nullptr;
      }
    }
    const Instruction* root = c.root_instruction();
    if (root->opcode() != Opcode::kTuple) {
      f->results_.push_back(
          {slot[root], ByteWidth(root->shape().element_type())});
    }
    for (const auto& p : f->params_) {
      if (p.first < 0) return nullptr;
    }
    // op(p0, p1) on one type: reducers with a vectorisable fast path.
    if (f->steps_.size() == 1 && f->params_.size() == 2 &&
        root->operand_count() == 2 && !f->steps_[0].copy &&
        root->opcode() != Opcode::kCompare) {
      const Instruction* a = root->operand(0);
      const Instruction* b = root->operand(1);
      PrimitiveType t = root->shape().element_type();
      bool same_type =
          a->shape().element_type() == t && b->shape().element_type() == t;
      bool params = a->opcode() == Opcode::kParameter &&
                    b->opcode() == Opcode::kParameter;
      if (same_type && params) {
        if (a->parameter_number() == 0 && b->parameter_number() == 1) {
          f->binary_ = root->opcode();
        } else if (a->parameter_number() == 1 && b->parameter_number() == 0 &&
                   IsCommutative(root->opcode())) {
          f->binary_ = root->opcode();
        }
      }
    }
    return f;
  }

  absl::Status Call(const uint8_t* const* args,
                    uint8_t* const* results) override {
    for (size_t i = 0; i < params_.size(); ++i) {
      std::memcpy(slots_[params_[i].first].bytes, args[i], params_[i].second);
    }
    for (const Step& step : steps_) {
      if (step.copy) {
        std::memcpy(slots_[step.out].bytes, slots_[step.in[0]].bytes,
                    step.width);
        continue;
      }
      if (step.fast != FastOp::kNone) {
        RunFast(step);
        continue;
      }
      absl::InlinedVector<const uint8_t*, 3> in;
      for (int32_t s : step.in) in.push_back(slots_[s].bytes);
      static constexpr int64_t kStrides[3] = {1, 1, 1};
      absl::Status st = ElementwiseKernel(
          *step.inst, in, absl::MakeConstSpan(kStrides, in.size()),
          slots_[step.out].bytes, 1);
      if (!st.ok()) return st;
    }
    for (size_t j = 0; j < results_.size(); ++j) {
      std::memcpy(results[j], slots_[results_[j].first].bytes,
                  results_[j].second);
    }
    return absl::OkStatus();
  }
  std::optional<Opcode> binary_opcode() const override { return binary_; }

 private:
  struct Slot {
    alignas(16) uint8_t bytes[16] = {};
  };
  // The scalar ops comparators and reducers use most, run without the
  // general kernel's dispatch and checks. Each is exact for the types it is
  // chosen for (see ChooseFast); everything else takes ElementwiseKernel.
  enum class FastOp : uint8_t {
    kNone,
    kCompareS32,
    kCompareU32,
    kCompareF32,
    kSelect,  // pred, then two operands of `width` bytes
    kAndPred,
    kOrPred,
    kNotPred,
  };
  struct Step {
    const Instruction* inst = nullptr;
    int32_t out = 0;
    bool copy = false;
    int width = 0;
    FastOp fast = FastOp::kNone;
    absl::InlinedVector<int32_t, 3> in;
  };
  static FastOp ChooseFast(const Instruction& inst) {
    const PrimitiveType rt = inst.shape().element_type();
    auto type_of = [&](int64_t i) {
      return inst.operand(i)->shape().element_type();
    };
    switch (inst.opcode()) {
      case Opcode::kCompare: {
        if (inst.operand_count() != 2 || type_of(0) != type_of(1)) break;
        const ComparisonType ct = inst.comparison_type();
        switch (type_of(0)) {
          case PrimitiveType::kS32:
            if (ct == ComparisonType::kDefault || ct == ComparisonType::kSigned)
              return FastOp::kCompareS32;
            break;
          case PrimitiveType::kU32:
            if (ct == ComparisonType::kDefault ||
                ct == ComparisonType::kUnsigned)
              return FastOp::kCompareU32;
            break;
          case PrimitiveType::kF32:
            if (ct == ComparisonType::kDefault || ct == ComparisonType::kFloat)
              return FastOp::kCompareF32;
            break;
          default:
            break;
        }
        break;
      }
      case Opcode::kSelect:
        if (inst.operand_count() == 3 && type_of(0) == PrimitiveType::kPred &&
            type_of(1) == rt && type_of(2) == rt) {
          return FastOp::kSelect;
        }
        break;
      case Opcode::kAnd:
      case Opcode::kOr:
        if (rt == PrimitiveType::kPred && inst.operand_count() == 2 &&
            type_of(0) == rt && type_of(1) == rt) {
          return inst.opcode() == Opcode::kAnd ? FastOp::kAndPred
                                               : FastOp::kOrPred;
        }
        break;
      case Opcode::kNot:
        if (rt == PrimitiveType::kPred && inst.operand_count() == 1 &&
            type_of(0) == rt) {
          return FastOp::kNotPred;
        }
        break;
      default:
        break;
    }
    return FastOp::kNone;
  }
  template <typename T>
  static bool CompareValues(ComparisonDirection d, T a, T b) {
    switch (d) {
      case ComparisonDirection::kEq:
        return a == b;
      case ComparisonDirection::kNe:
        return a != b;
      case ComparisonDirection::kLt:
        return a < b;
      case ComparisonDirection::kLe:
        return a <= b;
      case ComparisonDirection::kGt:
        return a > b;
      case ComparisonDirection::kGe:
        return a >= b;
    }
    return false;
  }
  template <typename T>
  T Load(int32_t slot) const {
    T v;
    std::memcpy(&v, slots_[slot].bytes, sizeof(T));
    return v;
  }
  void RunFast(const Step& step) {
    uint8_t* out = slots_[step.out].bytes;
    const ComparisonDirection d = step.inst->comparison_direction();
    switch (step.fast) {
      case FastOp::kCompareS32:
        out[0] = CompareValues(d, Load<int32_t>(step.in[0]),
                               Load<int32_t>(step.in[1]));
        break;
      case FastOp::kCompareU32:
        out[0] = CompareValues(d, Load<uint32_t>(step.in[0]),
                               Load<uint32_t>(step.in[1]));
        break;
      case FastOp::kCompareF32:
        // IEEE comparisons: NaN is unordered (only NE is true).
        out[0] =
            CompareValues(d, Load<float>(step.in[0]), Load<float>(step.in[1]));
        break;
      case FastOp::kSelect:
        std::memmove(out,
                     slots_[step.in[slots_[step.in[0]].bytes[0] ? 1 : 2]].bytes,
                     step.width);
        break;
      case FastOp::kAndPred:
        out[0] = (slots_[step.in[0]].bytes[0] != 0) &&
                 (slots_[step.in[1]].bytes[0] != 0);
        break;
      case FastOp::kOrPred:
        out[0] = (slots_[step.in[0]].bytes[0] != 0) ||
                 (slots_[step.in[1]].bytes[0] != 0);
        break;
      case FastOp::kNotPred:
        out[0] = slots_[step.in[0]].bytes[0] == 0;
        break;
      case FastOp::kNone:
        break;
    }
  }
  std::vector<Slot> slots_;
  std::vector<std::pair<int32_t, int>> params_;   // slot, byte width
  std::vector<std::pair<int32_t, int>> results_;  // slot, byte width
  std::vector<Step> steps_;
  std::optional<Opcode> binary_;
};

// The general path: scalars through the full evaluator.
class GenericScalarFunction : public ScalarFunction {
 public:
  GenericScalarFunction(Interpreter::Impl* impl, const Computation& c)
      : impl_(impl), c_(c) {}
  absl::Status Call(const uint8_t* const* args,
                    uint8_t* const* results) override;
  std::optional<Opcode> binary_opcode() const override { return std::nullopt; }

 private:
  Interpreter::Impl* impl_;
  const Computation& c_;
};

absl::Status GenericScalarFunction::Call(const uint8_t* const* args,
                                         uint8_t* const* results) {
  std::vector<Value> values;
  for (int64_t i = 0; i < c_.num_parameters(); ++i) {
    const Shape& s = c_.parameter_instruction(i)->shape();
    Literal lit(s);
    if (lit.size_bytes() > 0) {
      std::memcpy(lit.mutable_data(), args[i], lit.size_bytes());
    }
    values.push_back(impl_->MakeArray(std::move(lit)));
  }
  absl::StatusOr<Value> out = impl_->EvalComputation(c_, std::move(values));
  if (!out.ok()) return out.status();
  auto write = [&](const Value& v, int64_t j) -> absl::Status {
    if (v.is_tuple()) {
      return absl::InvalidArgumentError(
          StrCat("computation ", c_.name(), " returns a nested tuple"));
    }
    if (v.array->size_bytes() > 0) {
      std::memcpy(results[j], v.array->data(), v.array->size_bytes());
    }
    return absl::OkStatus();
  };
  if (out->is_tuple()) {
    for (size_t j = 0; j < out->tuple->size(); ++j) {
      absl::Status st = write((*out->tuple)[j], static_cast<int64_t>(j));
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
  return write(*out, 0);
}

absl::StatusOr<ScalarFunction*> Interpreter::Impl::GetScalarFunction(
    const Computation* c) {
  auto it = scalar_functions_.find(c);
  if (it != scalar_functions_.end()) return it->second.get();
  for (const Instruction* p : c->parameter_instructions()) {
    if (!p->shape().IsScalar()) {
      return absl::InvalidArgumentError(
          StrCat("computation ", c->name(), " is applied to elements but ",
                 "parameter ", p->name(), " is not a scalar"));
    }
  }
  std::unique_ptr<ScalarFunction> f = CompiledScalarFunction::TryCompile(*c);
  if (f == nullptr) f = std::make_unique<GenericScalarFunction>(this, *c);
  ScalarFunction* raw = f.get();
  scalar_functions_[c] = std::move(f);
  return raw;
}

absl::StatusOr<const Interpreter::Impl::Plan*> Interpreter::Impl::GetPlan(
    const Computation& c) {
  auto it = plans_.find(&c);
  if (it != plans_.end()) return it->second.get();
  auto plan = std::make_unique<Plan>();
  std::vector<Instruction*> order = c.MakeInstructionPostOrder();
  absl::flat_hash_map<const Instruction*, int32_t> pos;
  pos.reserve(order.size());
  for (Instruction* inst : order) {
    int32_t p = static_cast<int32_t>(plan->order.size());
    pos[inst] = p;
    plan->order.push_back(inst);
    plan->uses.push_back(0);
    absl::InlinedVector<int32_t, 3> ops;
    for (const Instruction* o : inst->operands()) {
      auto oit = pos.find(o);
      if (oit == pos.end()) {
        return absl::InternalError(StrCat(Where(*inst), ": operand ", o->name(),
                                          " is not evaluated before it"));
      }
      ops.push_back(oit->second);
      ++plan->uses[oit->second];
    }
    plan->operand_pos.push_back(std::move(ops));
  }
  if (c.root_instruction() == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("computation ", c.name(), " has no root"));
  }
  plan->root_pos = pos[c.root_instruction()];
  ++plan->uses[plan->root_pos];
  plan->param_pos.assign(c.num_parameters(), -1);
  for (int64_t i = 0; i < c.num_parameters(); ++i) {
    auto pit = pos.find(c.parameter_instruction(i));
    if (pit != pos.end()) plan->param_pos[i] = pit->second;
  }
  const Plan* raw = plan.get();
  plans_[&c] = std::move(plan);
  return raw;
}

absl::StatusOr<Value> Interpreter::Impl::EvalComputation(
    const Computation& c, std::vector<Value> args) {
  if (depth_ > 200) {
    return absl::ResourceExhaustedError(
        StrCat("computation ", c.name(), ": call depth over 200"));
  }
  absl::StatusOr<const Plan*> plan_or = GetPlan(c);
  if (!plan_or.ok()) return plan_or.status();
  const Plan& plan = **plan_or;
  if (static_cast<int64_t>(args.size()) != c.num_parameters()) {
    return absl::InvalidArgumentError(StrCat("computation ", c.name(),
                                             " takes ", c.num_parameters(),
                                             " arguments, got ", args.size()));
  }
  ++depth_;
  std::vector<Value> values(plan.order.size());
  std::vector<int32_t> remaining = plan.uses;
  std::vector<Value> operands;
  for (size_t i = 0; i < plan.order.size(); ++i) {
    const Instruction& inst = *plan.order[i];
    if (inst.opcode() == Opcode::kParameter) {
      int64_t n = inst.parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(args.size())) {
        --depth_;
        return absl::InvalidArgumentError(
            StrCat(Where(inst), ": no argument for parameter ", n));
      }
      values[i] = std::move(args[n]);
    } else {
      operands.clear();
      for (int32_t p : plan.operand_pos[i]) {
        operands.push_back(values[p]);
        // The last reader takes the value, so kernels and in-place updates
        // can see that nobody else holds it.
        if (--remaining[p] == 0) values[p] = Value();
      }
      absl::Status deadline = CheckDeadline();
      absl::StatusOr<Value> v = deadline.ok() ? EvalInstruction(inst, operands)
                                              : absl::StatusOr<Value>(deadline);
      operands.clear();
      if (!v.ok()) {
        --depth_;
        return Annotate(v.status(), inst);
      }
      values[i] = std::move(*v);
      ++owner_->instructions_evaluated_;
    }
    if (remaining[i] == 0) values[i] = Value();  // dead value
  }
  --depth_;
  return std::move(values[plan.root_pos]);
}

// ---------------------------------------------------------------------------
namespace {

absl::Status ExpectOperands(const std::vector<Value>& operands, size_t n) {
  if (operands.size() != n) {
    return absl::InvalidArgumentError(
        StrCat("expects ", n, " operands, has ", operands.size()));
  }
  return absl::OkStatus();
}

absl::Status ExpectArrays(const std::vector<Value>& operands) {
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].is_tuple()) {
      return absl::InvalidArgumentError(
          StrCat("operand ", i, " is a tuple where an array is expected"));
    }
  }
  return absl::OkStatus();
}

bool IsDataMovementOpcode(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kCopy:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kIota:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kDynamicReshape:
      return true;
    default:
      return false;
  }
}

// Ops whose operands may legally differ in floating-point precision from
// their result (the verifier allows mixed precision), and which XLA computes
// in the result type. Conversions, comparisons and the like are excluded:
// their operand types differ from the result by definition.
bool ComputesInResultType(Opcode op) {
  switch (op) {
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kBitcast:
    case Opcode::kReducePrecision:
    case Opcode::kStochasticConvert:
    case Opcode::kCompare:
    case Opcode::kIsFinite:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kComplex:
      return false;
    default:
      return IsElementwiseOpcode(op) || IsDataMovementOpcode(op);
  }
}

// `lit` rounded to floating type `t` (nearest even; one rounding from the
// exact value).
Literal ConvertFloat(const Literal& lit, PrimitiveType t) {
  Shape shape = lit.shape();
  shape.set_element_type(t);
  Literal out(shape);
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    out.SetFromDouble(i, lit.GetAsDouble(i));
  }
  return out;
}

}  // namespace

absl::StatusOr<Value> Interpreter::Impl::EvalInstruction(
    const Instruction& inst, std::vector<Value>& operands) {
  const Opcode op = inst.opcode();
  auto arrays = [&]() {
    absl::InlinedVector<const Literal*, 4> lits;
    for (const Value& v : operands) lits.push_back(v.array.get());
    return lits;
  };
  auto wrap = [&](absl::StatusOr<Literal> lit) -> absl::StatusOr<Value> {
    if (!lit.ok()) return lit.status();
    if (!SameArrayShape(lit->shape(), inst.shape())) {
      return absl::InternalError(
          StrCat("kernel produced ", lit->shape().ToString(false),
                 " for a result of shape ", inst.shape().ToString(false)));
    }
    return FromLiteral(std::move(*lit));
  };
  auto array_kernel = [&](auto&& kernel) -> absl::StatusOr<Value> {
    if (absl::Status s = ExpectArrays(operands); !s.ok()) return s;
    if (absl::Status s = CheckBudget(inst); !s.ok()) return s;
    auto lits = arrays();
    return wrap(kernel(absl::MakeConstSpan(lits)));
  };

  // Mixed precision: convert floating operands to the result's type.
  const PrimitiveType rt = inst.shape().element_type();
  if (IsFloatingPointType(rt) && ComputesInResultType(op)) {
    for (Value& v : operands) {
      if (v.is_tuple() || v.array == nullptr) continue;
      PrimitiveType ot = v.array->shape().element_type();
      if (ot != rt && IsFloatingPointType(ot)) {
        v = MakeArray(ConvertFloat(*v.array, rt));
      }
    }
  }

  if (IsElementwiseOpcode(op)) {
    return array_kernel(
        [&](Operands ops) { return EvalElementwise(inst, ops); });
  }
  if (IsDataMovementOpcode(op)) {
    if (op == Opcode::kCopy && !operands.empty() && operands[0].is_tuple()) {
      return operands[0];  // copy of a tuple: values are immutable
    }
    return array_kernel(
        [&](Operands ops) { return EvalDataMovement(inst, ops); });
  }

  switch (op) {
    case Opcode::kConstant: {
      if (!inst.has_literal()) {
        return absl::InvalidArgumentError("constant without a literal");
      }
      const Literal& lit = inst.literal();
      if (lit.is_unknown()) {
        if (!options_.unknown_constants_as_zero) {
          return absl::InvalidArgumentError(
              "constant's values are not in the text ({...}); set "
              "InterpreterOptions::unknown_constants_as_zero to run it with "
              "zeros");
        }
        return Zeros(inst.shape());
      }
      // The module outlives the run: share the literal without copying.
      return Borrow(lit);
    }
    case Opcode::kTuple:
      return MakeTuple(operands);
    case Opcode::kGetTupleElement: {
      if (operands.size() != 1 || !operands[0].is_tuple()) {
        return absl::InvalidArgumentError("operand is not a tuple");
      }
      int64_t i = inst.tuple_index();
      if (i < 0 || i >= static_cast<int64_t>(operands[0].tuple->size())) {
        return absl::InvalidArgumentError(
            StrCat("tuple index ", i, " out of range"));
      }
      if ((*operands[0].tuple)[i].pending) {
        return absl::UnimplementedError(
            "reads the result of an async computation before its -done");
      }
      return (*operands[0].tuple)[i];
    }
    case Opcode::kCall:
    case Opcode::kFusion: {
      const Computation* callee = inst.called_computations().empty()
                                      ? nullptr
                                      : inst.called_computations()[0];
      if (callee == nullptr) {
        return absl::InvalidArgumentError("no called computation");
      }
      return EvalComputation(*callee, std::move(operands));
    }
    case Opcode::kWhile: {
      if (absl::Status s = ExpectOperands(operands, 1); !s.ok()) {
        return s;
      }
      return EvalWhile(inst, std::move(operands[0]));
    }
    case Opcode::kConditional:
      return EvalConditional(inst, operands);
    case Opcode::kMap:
      return EvalMap(inst, operands);
    case Opcode::kAlternatives: {
      if (operands.empty()) {
        return absl::InvalidArgumentError("alternatives without operands");
      }
      int64_t choice = 0;
      auto it = options_.alternative_choices.find(inst.name());
      if (it != options_.alternative_choices.end()) choice = it->second;
      if (choice < 0 || choice >= static_cast<int64_t>(operands.size())) {
        return absl::InvalidArgumentError(StrCat("chosen operand ", choice,
                                                 " out of range [0, ",
                                                 operands.size(), ")"));
      }
      return operands[choice];
    }
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kAddDependency:
    case Opcode::kCopyDone:
    case Opcode::kAsyncUpdate:
      if (op == Opcode::kAsyncUpdate) return AdvanceAsync(inst, operands);
      if (operands.empty()) {
        return absl::InvalidArgumentError("expects an operand");
      }
      if (op == Opcode::kCopyDone) {
        if (!operands[0].is_tuple() || operands[0].tuple->empty()) {
          return absl::InvalidArgumentError("operand is not a copy-start");
        }
        return (*operands[0].tuple)[0];
      }
      return operands[0];
    case Opcode::kCopyStart: {
      if (absl::Status s = ExpectOperands(operands, 1); !s.ok()) {
        return s;
      }
      if (!inst.shape().IsTuple() || inst.shape().tuple_shapes_size() < 2) {
        return absl::InvalidArgumentError("copy-start shape is not a tuple");
      }
      std::vector<Value> elements = {operands[0], operands[0]};
      for (int64_t i = 2; i < inst.shape().tuple_shapes_size(); ++i) {
        elements.push_back(Zeros(inst.shape().tuple_shapes(i)));
      }
      return MakeTuple(std::move(elements));
    }
    case Opcode::kAfterAll:
    case Opcode::kOutfeed:  // the host side is absent: data is dropped
      return Zeros(Shape::Token());
    case Opcode::kInfeed:  // no host pushes data: it reads zeros
      return Zeros(inst.shape());
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      return Zeros(inst.shape());
    case Opcode::kAsyncStart:
      return EvalAsyncStart(inst, operands);
    case Opcode::kAsyncDone: {
      absl::StatusOr<Value> state = AdvanceAsync(inst, operands);
      if (!state.ok()) return state.status();
      const Value& result = (*state->tuple)[1];
      if (result.pending) {
        return absl::InvalidArgumentError(
            "the async computation's operands were never all bound");
      }
      return result;
    }
    case Opcode::kGather:
      return array_kernel([&](Operands ops) { return EvalGather(inst, ops); });
    case Opcode::kScatter:
      return array_kernel(
          [&](Operands ops) { return EvalScatter(inst, ops, *this); });
    case Opcode::kSort:
      return array_kernel(
          [&](Operands ops) { return EvalSort(inst, ops, *this); });
    case Opcode::kTopK:
      return array_kernel(
          [&](Operands ops) { return EvalTopK(inst, ops, *this); });
    case Opcode::kDot:
      return array_kernel([&](Operands ops) { return EvalDot(inst, ops); });
    case Opcode::kConvolution:
      return array_kernel(
          [&](Operands ops) { return EvalConvolution(inst, ops); });
    case Opcode::kScaledDot:
      return EvalScaledDot(inst, operands);
    case Opcode::kRaggedDot:
      return array_kernel(
          [&](Operands ops) { return EvalRaggedDot(inst, ops); });
    case Opcode::kReduce:
      return array_kernel(
          [&](Operands ops) { return EvalReduce(inst, ops, *this); });
    case Opcode::kReduceWindow:
      return array_kernel(
          [&](Operands ops) { return EvalReduceWindow(inst, ops, *this); });
    case Opcode::kSelectAndScatter:
      return array_kernel(
          [&](Operands ops) { return EvalSelectAndScatter(inst, ops, *this); });
    case Opcode::kCholesky:
    case Opcode::kTriangularSolve:
    case Opcode::kFft:
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return array_kernel([&](Operands ops) { return EvalLinalg(inst, ops); });
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
      return EvalRng(inst, operands);
    case Opcode::kCustomCall:
      return EvalCustomCall(inst, operands);
    case Opcode::kScan:
      return EvalScan(inst, operands);
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kCollectiveBroadcast:
      return EvalCollective(inst, operands);
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kRaggedAllToAll:
      return absl::UnimplementedError(
          StrCat(OpcodeName(op),
                 " needs a device or other replicas; the interpreter runs "
                 "one device without host transfers"));
    default:
      return absl::UnimplementedError(
          StrCat("the interpreter does not evaluate ", OpcodeName(op)));
  }
}

absl::StatusOr<Value> Interpreter::Impl::EvalWhile(const Instruction& inst,
                                                   Value state) {
  const Computation* cond = inst.while_condition();
  const Computation* body = inst.while_body();
  if (cond == nullptr || body == nullptr) {
    return absl::InvalidArgumentError("while without condition or body");
  }
  // A condition that is the constant true never lets the loop end: say so
  // now instead of after max_while_iterations.
  const Instruction* cond_root = cond->root_instruction();
  if (cond_root != nullptr && cond_root->opcode() == Opcode::kConstant &&
      cond_root->has_literal() && !cond_root->literal().is_unknown() &&
      cond_root->literal().element_count() == 1 &&
      cond_root->literal().GetBits(0) != 0) {
    return absl::InvalidArgumentError(
        StrCat("the condition ", cond->name(),
               " is the constant true: the loop never ends"));
  }
  for (int64_t iter = 0;; ++iter) {
    absl::StatusOr<Value> p = EvalComputation(*cond, {state});
    if (!p.ok()) return p.status();
    if (p->is_tuple() || p->array->element_count() != 1) {
      return absl::InvalidArgumentError("condition does not return pred[]");
    }
    if (p->array->GetBits(0) == 0) return state;
    if (iter >= options_.max_while_iterations) {
      return absl::ResourceExhaustedError(
          StrCat("while loop ran more than ", options_.max_while_iterations,
                 " iterations (InterpreterOptions::max_while_iterations)"));
    }
    absl::StatusOr<Value> next = EvalComputation(*body, {std::move(state)});
    if (!next.ok()) return next.status();
    state = std::move(*next);
  }
}

absl::StatusOr<Value> Interpreter::Impl::EvalConditional(
    const Instruction& inst, std::vector<Value>& operands) {
  const auto& branches = inst.called_computations();
  if (operands.empty() || operands[0].is_tuple() || branches.empty() ||
      operands.size() != branches.size() + 1) {
    return absl::InvalidArgumentError(
        "expects a selector and one operand per branch");
  }
  const Literal& sel = *operands[0].array;
  if (sel.element_count() != 1) {
    return absl::InvalidArgumentError("branch selector is not a scalar");
  }
  int64_t branch;
  if (sel.shape().element_type() == PrimitiveType::kPred) {
    // pred: true runs the first computation, false the second.
    branch = sel.GetBits(0) != 0 ? 0 : 1;
    if (branches.size() != 2) {
      return absl::InvalidArgumentError("pred selector needs two branches");
    }
  } else {
    branch = sel.GetAsInt64(0);
    // Out-of-range indices run the last branch, as XLA defines.
    int64_t n = static_cast<int64_t>(branches.size());
    if (branch < 0 || branch >= n) branch = n - 1;
  }
  return EvalComputation(*branches[branch], {operands[branch + 1]});
}

absl::StatusOr<Value> Interpreter::Impl::EvalMap(const Instruction& inst,
                                                 std::vector<Value>& operands) {
  if (absl::Status s = ExpectArrays(operands); !s.ok()) return s;
  if (absl::Status s = CheckBudget(inst); !s.ok()) return s;
  const Computation* c = inst.to_apply();
  if (c == nullptr) return absl::InvalidArgumentError("map without to_apply");
  absl::StatusOr<ScalarFunction*> f = GetScalarFunction(c);
  if (!f.ok()) return f.status();
  Literal out(inst.shape());
  const int64_t n = out.element_count();
  std::vector<const uint8_t*> args(operands.size());
  std::vector<int> widths(operands.size());
  for (size_t k = 0; k < operands.size(); ++k) {
    if (operands[k].array->element_count() != n) {
      return absl::InvalidArgumentError(
          StrCat("operand ", k, " has ", operands[k].array->element_count(),
                 " elements, the result ", n));
    }
    widths[k] = ByteWidth(operands[k].array->shape().element_type());
  }
  const int w = ByteWidth(inst.shape().element_type());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < operands.size(); ++k) {
      args[k] = operands[k].array->data() + i * widths[k];
    }
    uint8_t* res = out.mutable_data() + i * w;
    if (absl::Status s = (*f)->Call(args.data(), &res); !s.ok()) return s;
  }
  return MakeArray(std::move(out));
}

absl::StatusOr<Value> Interpreter::Impl::EvalRng(const Instruction& inst,
                                                 std::vector<Value>& operands) {
  if (absl::Status s = ExpectArrays(operands); !s.ok()) return s;
  auto lits = [&]() {
    std::vector<const Literal*> l;
    for (const Value& v : operands) l.push_back(v.array.get());
    return l;
  }();
  absl::StatusOr<Literal> out = EvalRandom(inst, lits, rng_);
  if (!out.ok()) return out.status();
  return FromLiteral(std::move(*out));
}

absl::StatusOr<Value> Interpreter::Impl::EvalCustomCall(
    const Instruction& inst, std::vector<Value>& operands) {
  const std::string& target = inst.attrs().custom_call_target;
  const CustomCallHandler* h =
      options_.custom_calls ? options_.custom_calls->Find(target) : nullptr;
  // GPU library targets (cuBLAS, cuDNN) run without registration.
  if (h == nullptr) h = LibraryCallRegistry().Find(target);
  if (h == nullptr) {
    return absl::UnimplementedError(
        StrCat("custom-call target \"", target,
               "\" has no handler (register one in a CustomCallRegistry)"));
  }
  std::vector<Literal> owned;
  std::vector<const Literal*> lits;
  owned.reserve(operands.size());
  for (const Value& v : operands) {
    if (v.is_tuple()) {
      owned.push_back(ToLiteral(v));
      lits.push_back(&owned.back());
    } else {
      lits.push_back(v.array.get());
    }
  }
  absl::StatusOr<Literal> out = (*h)(inst, lits);
  if (!out.ok()) return out.status();
  if (!SameArrayShape(out->shape(), inst.shape())) {
    return absl::InternalError(
        StrCat("custom-call handler for \"", target, "\" returned ",
               out->shape().ToString(false), ", expected ",
               inst.shape().ToString(false)));
  }
  return FromLiteral(std::move(*out));
}

absl::StatusOr<Value> Interpreter::Impl::EvalAsyncStart(
    const Instruction& inst, std::vector<Value>& operands) {
  if (inst.called_computations().empty()) {
    return absl::InvalidArgumentError("async-start without a computation");
  }
  const Shape& shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() < 2) {
    return absl::InvalidArgumentError("async-start shape is not a tuple");
  }
  // ((operands...), result, context...). Operands may also arrive later,
  // through async-update; until all are bound the result stays pending (an
  // empty Value) and the computation runs when the last one arrives.
  const Computation& callee = *inst.called_computations()[0];
  Value result;
  // A shorthand wrapper may get operands late, which only its -done shows:
  // it runs there.
  if (!callee.IsAsyncWrapper() &&
      static_cast<int64_t>(operands.size()) == callee.num_parameters()) {
    absl::StatusOr<Value> r = EvalComputation(callee, operands);
    if (!r.ok()) return r.status();
    result = std::move(*r);
  }
  if (result.empty()) {
    result = Zeros(shape.tuple_shapes(1));
    result.pending = true;
  }
  std::vector<Value> elements;
  elements.push_back(MakeTuple(operands));
  elements.push_back(std::move(result));
  for (int64_t i = 2; i < shape.tuple_shapes_size(); ++i) {
    elements.push_back(Zeros(shape.tuple_shapes(i)));
  }
  return MakeTuple(std::move(elements));
}

// async-update and async-done: bind the operands after the first (late
// binding) and run the computation once every parameter has a value.
absl::StatusOr<Value> Interpreter::Impl::AdvanceAsync(
    const Instruction& inst, std::vector<Value>& operands) {
  if (operands.empty() || !operands[0].is_tuple() ||
      operands[0].tuple->size() < 2 || !(*operands[0].tuple)[0].is_tuple()) {
    return absl::InvalidArgumentError("operand is not an async-start");
  }
  const Instruction* start = inst.operand(0);
  while (start->opcode() == Opcode::kAsyncUpdate &&
         start->operand_count() > 0) {
    start = start->operand(0);
  }
  if (operands.size() == 1 && !(*operands[0].tuple)[1].pending) {
    return operands[0];
  }
  if (start->opcode() != Opcode::kAsyncStart ||
      start->called_computations().empty()) {
    return absl::InvalidArgumentError(
        "no async-start at the head of the chain");
  }
  std::vector<Value> bound = *(*operands[0].tuple)[0].tuple;
  for (size_t i = 1; i < operands.size(); ++i) bound.push_back(operands[i]);
  std::vector<Value> elements = *operands[0].tuple;
  const Computation& callee = *start->called_computations()[0];
  const int64_t n = static_cast<int64_t>(bound.size());
  if (elements[1].pending) {
    absl::StatusOr<Value> r = absl::StatusOr<Value>(elements[1]);
    if (n == callee.num_parameters() &&
        (!callee.IsAsyncWrapper() || inst.opcode() == Opcode::kAsyncDone)) {
      r = EvalComputation(callee, bound);
    } else if (inst.opcode() == Opcode::kAsyncDone && callee.IsAsyncWrapper() &&
               callee.root_instruction() != nullptr) {
      // An `op-start` shorthand whose operands arrive late: its wrapper
      // only has the operands given to the start, so the wrapped op runs
      // directly on every operand bound by now.
      r = EvalInstruction(*callee.root_instruction(), bound);
    }
    if (!r.ok()) return r.status();
    elements[1] = std::move(*r);
  }
  elements[0] = MakeTuple(std::move(bound));
  return MakeTuple(std::move(elements));
}

absl::StatusOr<Value> Interpreter::Impl::EvalCollective(
    const Instruction& inst, std::vector<Value>& operands) {
  const Opcode op = inst.opcode();
  // -done ops unpack what the matching -start produced.
  if (op == Opcode::kAllReduceDone) {
    if (operands.size() != 1) return absl::InvalidArgumentError("1 operand");
    return operands[0];
  }
  if (op == Opcode::kAllGatherDone || op == Opcode::kCollectivePermuteDone) {
    if (operands.size() != 1 || !operands[0].is_tuple() ||
        operands[0].tuple->size() < 2) {
      return absl::InvalidArgumentError("operand is not the matching -start");
    }
    return (*operands[0].tuple)[1];
  }
  const auto& groups = inst.attrs().replica_groups;
  const int64_t group = groups.has_value() ? groups->LargestGroupSize() : 1;
  if (group != 1) {
    return absl::UnimplementedError(
        StrCat(OpcodeName(op), " over replica groups of ",
               group < 0 ? std::string("several") : StrCat(group),
               " participants needs other replicas; the interpreter runs "
               "one device"));
  }
  // A shape change (all-gather growing, reduce-scatter shrinking a
  // dimension) means several participants even when the groups are left
  // implicit.
  if (op == Opcode::kAllGather || op == Opcode::kReduceScatter ||
      op == Opcode::kAllToAll || op == Opcode::kAllReduce ||
      op == Opcode::kAllReduceStart || op == Opcode::kCollectiveBroadcast) {
    std::vector<const Shape*> results;
    if (operands.size() == 1) {
      if (inst.shape().IsArray()) results.push_back(&inst.shape());
    } else if (inst.shape().IsTuple() &&
               inst.shape().tuple_shapes_size() ==
                   static_cast<int64_t>(operands.size())) {
      for (const Shape& s : inst.shape().tuple_shapes()) results.push_back(&s);
    }
    for (size_t i = 0; i < results.size(); ++i) {
      if (!operands[i].is_tuple() &&
          operands[i].array->shape().dimensions() != results[i]->dimensions()) {
        return absl::UnimplementedError(
            StrCat(OpcodeName(op), " from ",
                   operands[i].array->shape().ToString(false), " to ",
                   results[i]->ToString(false),
                   " needs several participants; the interpreter runs one "
                   "device"));
      }
    }
  }
  // On one participant, all-reduce, all-gather, reduce-scatter, all-to-all
  // and collective-broadcast return their operands unchanged.
  Value result;
  if (op == Opcode::kCollectivePermute ||
      op == Opcode::kCollectivePermuteStart) {
    bool self = false;
    for (const auto& [src, dst] : inst.attrs().source_target_pairs) {
      if (src == 0 && dst == 0) self = true;
      if (src != dst) {
        return absl::UnimplementedError(
            StrCat("collective-permute pair {", src, ",", dst,
                   "} needs other devices; the interpreter runs one device"));
      }
    }
    if (operands.empty()) return absl::InvalidArgumentError("no operand");
    // A device that receives from nobody gets zeros, as XLA defines.
    Shape out_shape = op == Opcode::kCollectivePermuteStart &&
                              inst.shape().IsTuple() &&
                              inst.shape().tuple_shapes_size() >= 2
                          ? inst.shape().tuple_shapes(1)
                          : inst.shape();
    result = self ? operands[0] : Zeros(out_shape);
  } else if (operands.size() == 1) {
    result = operands[0];
  } else {
    result = MakeTuple(operands);
  }
  if (op == Opcode::kAllGatherStart || op == Opcode::kCollectivePermuteStart) {
    std::vector<Value> elements;
    elements.push_back(operands.size() == 1 ? operands[0]
                                            : MakeTuple(operands));
    elements.push_back(std::move(result));
    for (int64_t i = 2; i < inst.shape().tuple_shapes_size(); ++i) {
      elements.push_back(Zeros(inst.shape().tuple_shapes(i)));
    }
    return MakeTuple(std::move(elements));
  }
  return result;
}

absl::StatusOr<Value> Interpreter::Impl::EvalScan(
    const Instruction& inst, std::vector<Value>& operands) {
  // scan(inputs..., inits...): the body sees one slice of every input along
  // `dimensions` plus the carries, and returns (outputs..., carries...);
  // the result stacks the outputs along the same dimension and ends with
  // the final carries.
  const Computation* body = inst.to_apply();
  const int64_t carries = inst.attrs().num_carries;
  const int64_t inputs = static_cast<int64_t>(operands.size()) - carries;
  if (body == nullptr || inst.dimensions().size() != 1 || inputs < 0 ||
      !inst.shape().IsTuple()) {
    return absl::InvalidArgumentError(
        "scan expects to_apply, one dimension and a tuple result");
  }
  const int64_t outputs = inst.shape().tuple_shapes_size() - carries;
  if (outputs < 0) {
    return absl::InvalidArgumentError(
        "scan result has fewer elements than carries");
  }
  if (absl::Status s = ExpectArrays(operands); !s.ok()) return s;
  if (absl::Status s = CheckBudget(inst); !s.ok()) return s;
  const int64_t d = inst.dimensions(0);
  int64_t length = -1;
  for (int64_t k = 0; k < inputs; ++k) {
    const Shape& s = operands[k].array->shape();
    if (d < 0 || d >= s.rank() || (length >= 0 && s.dimensions(d) != length)) {
      return absl::InvalidArgumentError(StrCat(
          "scan input ", k, " has no dimension ", d, " of the scan length"));
    }
    length = s.dimensions(d);
  }
  for (int64_t j = 0; j < outputs; ++j) {
    const Shape& s = inst.shape().tuple_shapes(j);
    if (!s.IsArray() || d >= s.rank() ||
        (length >= 0 && s.dimensions(d) != length)) {
      return absl::InvalidArgumentError(StrCat(
          "scan output ", j, " has no dimension ", d, " of the scan length"));
    }
    length = s.dimensions(d);
  }
  if (length < 0) length = 0;
  // Slices along d are `outer` runs of `inner` elements.
  auto split = [&](const Shape& s, int64_t* outer, int64_t* inner) {
    *outer = 1;
    *inner = ByteWidth(s.element_type());
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (i < d) *outer *= s.dimensions(i);
      if (i > d) *inner *= s.dimensions(i);
    }
  };
  std::vector<Literal> stacked;
  for (int64_t j = 0; j < outputs; ++j) {
    stacked.emplace_back(inst.shape().tuple_shapes(j));
  }
  std::vector<Value> carry(operands.begin() + inputs, operands.end());
  for (int64_t step = 0; step < length; ++step) {
    const int64_t i = inst.attrs().is_reverse ? length - 1 - step : step;
    std::vector<Value> args;
    for (int64_t k = 0; k < inputs; ++k) {
      const Literal& in = *operands[k].array;
      DimVector dims = in.shape().dimensions();
      dims.erase(dims.begin() + d);
      Literal slice(Shape(in.shape().element_type(), dims));
      int64_t outer, inner;
      split(in.shape(), &outer, &inner);
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(slice.mutable_data() + o * inner,
                    in.data() + (o * length + i) * inner, inner);
      }
      args.push_back(MakeArray(std::move(slice)));
    }
    for (const Value& c : carry) args.push_back(c);
    absl::StatusOr<Value> out = EvalComputation(*body, std::move(args));
    if (!out.ok()) return out.status();
    if (!out->is_tuple() ||
        static_cast<int64_t>(out->tuple->size()) != outputs + carries) {
      return absl::InvalidArgumentError(
          StrCat("scan body returns ", out->is_tuple() ? out->tuple->size() : 1,
                 " values, expected ", outputs + carries));
    }
    for (int64_t j = 0; j < outputs; ++j) {
      const Value& v = (*out->tuple)[j];
      int64_t outer, inner;
      split(stacked[j].shape(), &outer, &inner);
      if (v.is_tuple() ||
          static_cast<int64_t>(v.array->size_bytes()) != outer * inner) {
        return absl::InvalidArgumentError(
            StrCat("scan body output ", j, " does not match the result slice"));
      }
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(stacked[j].mutable_data() + (o * length + i) * inner,
                    v.array->data() + o * inner, inner);
      }
    }
    carry.assign(out->tuple->begin() + outputs, out->tuple->end());
  }
  std::vector<Value> elements;
  for (Literal& lit : stacked) elements.push_back(MakeArray(std::move(lit)));
  for (Value& c : carry) elements.push_back(std::move(c));
  return MakeTuple(std::move(elements));
}

absl::StatusOr<Value> Interpreter::Impl::EvalScaledDot(
    const Instruction& inst, std::vector<Value>& operands) {
  // scaled-dot(lhs, rhs, lhs_scale, rhs_scale): each operand is multiplied
  // by its scale broadcast over blocks (dimension d of the operand is
  // scale_dim[d] blocks of operand_dim[d] / scale_dim[d] elements), then
  // contracted as a dot into the result type.
  if (operands.size() < 2 || operands.size() > 4) {
    return absl::InvalidArgumentError("scaled-dot expects 2 to 4 operands");
  }
  if (absl::Status s = ExpectArrays(operands); !s.ok()) return s;
  if (absl::Status s = CheckBudget(inst); !s.ok()) return s;
  std::vector<Literal> scaled;
  for (int k = 0; k < 2; ++k) {
    const Literal& x = *operands[k].array;
    const Literal* scale = k + 2 < static_cast<int>(operands.size())
                               ? operands[k + 2].array.get()
                               : nullptr;
    Shape shape = x.shape();
    shape.set_element_type(PrimitiveType::kF32);
    Literal out(shape);
    const DimVector& dims = x.shape().dimensions();
    DimVector block(dims.size(), 1), sstr;
    if (scale != nullptr) {
      if (scale->shape().rank() != x.shape().rank()) {
        return absl::InvalidArgumentError(
            StrCat("scale ", k, " has rank ", scale->shape().rank(),
                   ", its operand ", x.shape().rank()));
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        int64_t sd = scale->shape().dimensions(d);
        if (sd <= 0 || dims[d] % sd != 0) {
          return absl::InvalidArgumentError(
              StrCat("scale ", k, " dimension ", d, " (", sd,
                     ") does not divide the operand's (", dims[d], ")"));
        }
        block[d] = dims[d] / sd;
      }
      sstr = RowMajorStrides(scale->shape().dimensions());
    }
    DimVector idx(dims.size(), 0);
    const int64_t n = x.element_count();
    for (int64_t i = 0; i < n; ++i) {
      double v = x.GetAsDouble(i);
      if (scale != nullptr) {
        int64_t si = 0;
        for (size_t d = 0; d < dims.size(); ++d)
          si += idx[d] / block[d] * sstr[d];
        v *= scale->GetAsDouble(si);
      }
      out.SetFromDouble(i, v);
      NextIndex(dims, &idx);
    }
    scaled.push_back(std::move(out));
  }
  const Literal* ptrs[2] = {&scaled[0], &scaled[1]};
  absl::StatusOr<Literal> r = EvalDot(inst, absl::MakeConstSpan(ptrs, 2));
  if (!r.ok()) return r.status();
  return FromLiteral(std::move(*r));
}

// ---------------------------------------------------------------------------
Interpreter::Interpreter(InterpreterOptions options)
    : options_(std::move(options)) {}
Interpreter::~Interpreter() = default;

absl::StatusOr<Literal> Interpreter::Run(const Module& module,
                                         absl::Span<const Literal> args) {
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("module ", module.name(), " has no entry computation"));
  }
  std::vector<const Literal*> ptrs;
  for (const Literal& a : args) ptrs.push_back(&a);
  return RunComputation(*entry, ptrs);
}

absl::StatusOr<Literal> Interpreter::RunComputation(
    const Computation& computation, absl::Span<const Literal* const> args) {
  instructions_evaluated_ = 0;
  peak_live_bytes_ = 0;
  if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(StrCat(computation.name(), " takes ",
                                             computation.num_parameters(),
                                             " arguments, got ", args.size()));
  }
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const Shape& want = computation.parameter_instruction(i)->shape();
    if (!SameArrayShape(args[i]->shape(), want)) {
      return absl::InvalidArgumentError(StrCat(
          "argument ", i, " has shape ", args[i]->shape().ToString(false),
          ", parameter ", computation.parameter_instruction(i)->name(),
          " expects ", want.ToString(false)));
    }
  }
  Literal result;
  // Kernels allocate their results and scratch with the standard
  // allocator; running out of memory is reported, not fatal.
  try {
    Impl impl(options_, this);
    std::vector<Value> values;
    for (const Literal* a : args) values.push_back(Impl::Borrow(*a));
    absl::StatusOr<Value> out =
        impl.EvalComputation(computation, std::move(values));
    if (!out.ok()) return out.status();
    result = ToLiteral(*out);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        StrCat("out of memory while running ", computation.name()));
  }
  return result;
}

}  // namespace hlogym
