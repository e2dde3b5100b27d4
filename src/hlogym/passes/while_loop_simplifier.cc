#include "hlogym/passes/while_loop_simplifier.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/builders.h"

namespace hlogym {
namespace control_flow {

bool HasSideEffect(const Computation& computation) {
  bool found = false;
  computation.ForEachInstruction([&](Instruction* i) {
    if (!found && HasSideEffectDeep(*i)) found = true;
  });
  return found;
}

absl::Status CloneNeededInstructions(const Computation& src,
                                     std::span<const Instruction* const> needed,
                                     InstructionMap& map, const AddFn& add,
                                     const LeafRule* leaves) {
  Module* module = src.parent();
  auto is_leaf = [&](const Instruction* i) {
    return leaves != nullptr && leaves->is_leaf && leaves->is_leaf(i);
  };
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> stack;
  auto push = [&](const Instruction* i) {
    if (live.insert(i).second) stack.push_back(i);
  };
  for (const Instruction* n : needed) push(n);
  src.ForEachInstruction([&](Instruction* i) {
    if (HasSideEffectDeep(*i)) push(i);
  });
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (map.contains(i) || is_leaf(i)) continue;
    for (const Instruction* op : i->operands()) push(op);
  }
  for (Instruction* i : src.MakeInstructionPostOrder()) {
    if (!live.contains(i)) continue;
    auto it = map.find(i);
    if (it != map.end()) {
      if (it->second == nullptr) {
        return absl::InternalError(StrCat("clone of '", src.name(),
                                          "' needs dropped '", i->name(), "'"));
      }
      continue;
    }
    if (is_leaf(i)) {
      Instruction* v = leaves->make(i);
      if (v == nullptr) {
        return absl::InternalError(StrCat("clone of '", src.name(),
                                          "' needs dropped '", i->name(), "'"));
      }
      map[i] = v;
      continue;
    }
    if (i->opcode() == Opcode::kParameter) {
      return absl::InternalError(StrCat(
          "clone of '", src.name(), "': unmapped parameter '", i->name(), "'"));
    }
    std::vector<Instruction*> ops;
    ops.reserve(i->operand_count());
    for (const Instruction* op : i->operands()) {
      auto o = map.find(op);
      if (o == map.end() || o->second == nullptr) {
        return absl::InternalError(StrCat("clone of '", src.name(),
                                          "': operand of '", i->name(),
                                          "' not available"));
      }
      ops.push_back(o->second);
    }
    std::unique_ptr<Instruction> clone = i->CloneWithNewOperands(ops);
    clone->set_unique_id(-1);
    clone->set_name(module->UniqueInstructionName(i->name()));
    map[i] = add(std::move(clone));
  }
  return absl::OkStatus();
}

Instruction* AddGte(const AddFn& add, Instruction* tuple, int64_t index) {
  auto g = std::make_unique<Instruction>(Opcode::kGetTupleElement,
                                         tuple->shape().tuple_shapes(index));
  g->AppendOperand(tuple);
  g->set_int_attr(index);
  return add(std::move(g));
}

Instruction* AddTuple(const AddFn& add, std::span<Instruction* const> elems) {
  std::vector<Shape> shapes;
  shapes.reserve(elems.size());
  for (Instruction* e : elems) shapes.push_back(e->shape());
  auto t = std::make_unique<Instruction>(Opcode::kTuple,
                                         Shape::Tuple(std::move(shapes)));
  for (Instruction* e : elems) t->AppendOperand(e);
  return add(std::move(t));
}

NewComputation::NewComputation(Module* module, std::string_view name)
    : module_(module),
      computation_(std::make_unique<Computation>(std::string(name))) {
  Computation* c = computation_.get();
  add_ = [module, c](std::unique_ptr<Instruction> i) {
    if (i->name().empty()) {
      i->set_name(module->UniqueInstructionName(OpcodeName(i->opcode())));
    }
    return c->AddInstruction(std::move(i));
  };
}

Instruction* NewComputation::AddParameter(int64_t number, const Shape& shape,
                                          std::string_view name) {
  auto p = std::make_unique<Instruction>(Opcode::kParameter, shape);
  p->set_int_attr(number);
  p->set_name(module_->UniqueInstructionName(name));
  return add_(std::move(p));
}

Computation* NewComputation::Finish(Rewriter& rw, Instruction* root) {
  computation_->set_root_instruction(root);
  return rw.AddComputation(std::move(computation_));
}

AddFn RewriterAdder(Rewriter& rw, Computation* computation) {
  return [&rw, computation](std::unique_ptr<Instruction> i) {
    return rw.AddInstruction(computation, std::move(i));
  };
}

absl::StatusOr<Instruction*> MakeWhile(Rewriter& rw,
                                       const Instruction* while_inst,
                                       const Shape& shape, Computation* cond,
                                       Computation* body, Instruction* init) {
  Instruction* ops[] = {init};
  HLOGYM_ASSIGN_OR_RETURN(Instruction * w,
                          CloneWithNewOperands(rw, while_inst, shape, ops));
  w->set_called_computations({cond, body});
  // Origin and sharding annotations describe the old state's structure.
  if (shape != while_inst->shape() &&
      (!w->attrs().origin_text.empty() || w->attrs().sharding.has_value())) {
    w->mutable_attrs()->origin_text.clear();
    w->mutable_attrs()->sharding.reset();
  }
  return w;
}

namespace {

bool IsAsyncOp(Opcode op) {
  return op == Opcode::kAsyncStart || op == Opcode::kAsyncUpdate ||
         op == Opcode::kAsyncDone || IsAsyncStartOpcode(op) ||
         IsAsyncDoneOpcode(op);
}

bool HasBuffer(const Shape& s) {
  if (s.IsBuffer()) return true;
  if (!s.IsTuple()) return false;
  for (const Shape& e : s.tuple_shapes()) {
    if (HasBuffer(e)) return true;
  }
  return false;
}

bool InitHasAsync(const Instruction* x) {
  if (IsAsyncOp(x->opcode())) return true;
  if (x->opcode() != Opcode::kTuple) return false;
  for (const Instruction* op : x->operands()) {
    if (InitHasAsync(op)) return true;
  }
  return false;
}

}  // namespace

bool CarriesAsyncOrBuffers(const Instruction* w) {
  if (HasBuffer(w->shape()) || InitHasAsync(w->operand(0))) return true;
  bool async = false;
  for (const Computation* c : w->called_computations()) {
    if (c == nullptr) continue;
    c->ForEachInstruction(
        [&](Instruction* i) { async |= IsAsyncOp(i->opcode()); });
  }
  return async;
}

namespace {

// A known integer scalar constant (u64 values above int64 max excluded).
std::optional<int64_t> IntScalar(const Instruction* i) {
  if (i->opcode() != Opcode::kConstant || !i->shape().IsScalar() ||
      !i->has_literal() || i->literal().is_unknown()) {
    return std::nullopt;
  }
  PrimitiveType t = i->shape().element_type();
  if (!IsIntegralType(t)) return std::nullopt;
  if (IsUnsignedIntegralType(t)) {
    uint64_t v = i->literal().GetAsUint64(0);
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<int64_t>(v);
  }
  return i->literal().GetAsInt64(0);
}

bool InRange(int64_t v, PrimitiveType t) {
  const int bits = BitWidth(t);
  if (IsSignedIntegralType(t)) {
    if (bits >= 64) return true;
    const int64_t hi = (int64_t{1} << (bits - 1)) - 1;
    return v >= -hi - 1 && v <= hi;
  }
  if (v < 0) return false;
  if (bits >= 63) return true;
  return v <= (int64_t{1} << bits) - 1;
}

bool Holds(ComparisonDirection d, int64_t a, int64_t b) {
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

// -1 for the parameter itself (a scalar state), the tuple index for
// get-tuple-element(param, i); nullopt otherwise.
std::optional<int64_t> StateIndex(const Instruction* x,
                                  const Instruction* param) {
  if (x == param && x->shape().IsArray()) return -1;
  if (x->opcode() == Opcode::kGetTupleElement && x->operand(0) == param) {
    return x->tuple_index();
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> SmallTripCount(const Instruction* w) {
  if (w->opcode() != Opcode::kWhile || w->operand_count() != 1 ||
      w->called_computations().size() != 2) {
    return std::nullopt;
  }
  const Computation* cond = w->while_condition();
  const Computation* body = w->while_body();
  if (cond == nullptr || body == nullptr || cond->num_parameters() != 1 ||
      body->num_parameters() != 1) {
    return std::nullopt;
  }
  const Instruction* croot = cond->root_instruction();
  if (croot->opcode() == Opcode::kConstant && croot->shape().IsScalar() &&
      croot->shape().element_type() == PrimitiveType::kPred &&
      croot->has_literal() && !croot->literal().is_unknown()) {
    if (croot->literal().GetAsInt64(0) == 0) return 0;
    return std::nullopt;
  }
  if (croot->opcode() != Opcode::kCompare || croot->operand_count() != 2) {
    return std::nullopt;
  }
  const Instruction* cparam = cond->parameter_instruction(0);
  int var_side = -1;
  int64_t index = 0, bound = 0;
  for (int side = 0; side < 2 && var_side < 0; ++side) {
    std::optional<int64_t> idx = StateIndex(croot->operand(side), cparam);
    std::optional<int64_t> c = IntScalar(croot->operand(1 - side));
    if (idx && c) {
      var_side = side;
      index = *idx;
      bound = *c;
    }
  }
  if (var_side < 0) return std::nullopt;
  const PrimitiveType t = croot->operand(var_side)->shape().element_type();
  const ComparisonType ct = croot->comparison_type();
  if (!IsIntegralType(t) || !croot->operand(var_side)->shape().IsScalar() ||
      !(ct == ComparisonType::kDefault ||
        (ct == ComparisonType::kSigned && IsSignedIntegralType(t)) ||
        (ct == ComparisonType::kUnsigned && IsUnsignedIntegralType(t)))) {
    return std::nullopt;
  }
  const Instruction* init = w->operand(0);
  std::optional<int64_t> start;
  if (index < 0) {
    start = IntScalar(init);
  } else if (init->opcode() == Opcode::kTuple &&
             index < init->operand_count()) {
    start = IntScalar(init->operand(index));
  }
  if (!start) return std::nullopt;
  const ComparisonDirection dir = croot->comparison_direction();
  auto holds = [&](int64_t v) {
    return var_side == 0 ? Holds(dir, v, bound) : Holds(dir, bound, v);
  };
  if (!holds(*start)) return 0;

  // One iteration: the body must add a constant to the variable.
  const Instruction* broot = body->root_instruction();
  const Instruction* bparam = body->parameter_instruction(0);
  const Instruction* update = nullptr;
  if (index < 0) {
    update = broot;
  } else if (broot->opcode() == Opcode::kTuple &&
             index < broot->operand_count()) {
    update = broot->operand(index);
  }
  if (update == nullptr || update->operand_count() != 2) return std::nullopt;
  std::optional<int64_t> step;
  if (update->opcode() == Opcode::kAdd) {
    for (int s = 0; s < 2 && !step; ++s) {
      if (StateIndex(update->operand(s), bparam) == index) {
        step = IntScalar(update->operand(1 - s));
      }
    }
  } else if (update->opcode() == Opcode::kSubtract &&
             StateIndex(update->operand(0), bparam) == index) {
    std::optional<int64_t> c = IntScalar(update->operand(1));
    if (c && *c != std::numeric_limits<int64_t>::min()) step = -*c;
  }
  if (!step) return std::nullopt;
  int64_t next = 0;
  if (__builtin_add_overflow(*start, *step, &next) || !InRange(next, t)) {
    return std::nullopt;
  }
  if (!holds(next)) return 1;
  return std::nullopt;
}

std::vector<int64_t> PassedThroughIndices(const Computation& body) {
  std::vector<int64_t> out;
  const Instruction* root = body.root_instruction();
  if (body.num_parameters() != 1 || root->opcode() != Opcode::kTuple) {
    return out;
  }
  const Instruction* param = body.parameter_instruction(0);
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    const Instruction* op = root->operand(i);
    if (op->opcode() == Opcode::kGetTupleElement && op->operand(0) == param &&
        op->tuple_index() == i) {
      out.push_back(i);
    }
  }
  return out;
}

}  // namespace control_flow

namespace {

using control_flow::AddFn;
using control_flow::AddGte;
using control_flow::AddTuple;
using control_flow::InstructionMap;
using control_flow::LeafRule;
using control_flow::NewComputation;

bool AllParamUsersAreGtes(const Computation& c) {
  for (const Instruction* u : c.parameter_instruction(0)->users()) {
    if (u->opcode() != Opcode::kGetTupleElement) return false;
  }
  return true;
}

bool HasTrueFrontendAttribute(const Instruction* inst, std::string_view key) {
  for (const FrontendAttribute& a : inst->frontend_attributes()) {
    if (a.key == key && a.value == "true") return true;
  }
  return false;
}

// Trip count 0: the init. Trip count 1: the body, inlined once.
absl::StatusOr<bool> TryRemoveLoop(Instruction* w, Rewriter& rw) {
  Computation* cond = w->while_condition();
  Computation* body = w->while_body();
  if (control_flow::HasSideEffect(*cond)) return false;
  std::optional<int64_t> trip = control_flow::SmallTripCount(w);
  if (!trip) return false;
  if (*trip == 0) return rw.ReplaceInstruction(w, w->operand(0));
  if (HasTrueFrontendAttribute(w, "skip-simplify-while-loops_trip-count-one") ||
      control_flow::HasSideEffect(*body)) {
    return false;
  }
  InstructionMap map;
  map[body->parameter_instruction(0)] = w->operand(0);
  const Instruction* root = body->root_instruction();
  const Instruction* needed[] = {root};
  HLOGYM_RETURN_IF_ERROR(control_flow::CloneNeededInstructions(
      *body, needed, map, control_flow::RewriterAdder(rw, w->parent())));
  return rw.ReplaceInstruction(w, map[root]);
}

// ---- Flattening nested tuples.

void CollectLeafShapes(const Shape& s, std::vector<Shape>* out) {
  if (!s.IsTuple()) {
    out->push_back(s);
    return;
  }
  for (const Shape& e : s.tuple_shapes()) CollectLeafShapes(e, out);
}

int64_t LeafCount(const Shape& s) {
  if (!s.IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& e : s.tuple_shapes()) n += LeafCount(e);
  return n;
}

// The nested value of `shape` whose leaves are flat[first...].
Instruction* Unflatten(const AddFn& add, Instruction* flat, const Shape& shape,
                       int64_t first) {
  if (!shape.IsTuple()) return AddGte(add, flat, first);
  std::vector<Instruction*> elems;
  for (const Shape& e : shape.tuple_shapes()) {
    elems.push_back(Unflatten(add, flat, e, first));
    first += LeafCount(e);
  }
  return AddTuple(add, elems);
}

// The leaves of `x`: operands of tuple instructions where the structure is
// explicit, get-tuple-elements otherwise. `value` maps old instructions to
// their values where `x` lives in a computation being cloned.
void FlattenValue(const AddFn& add, const Instruction* x,
                  const std::function<Instruction*(const Instruction*)>& value,
                  std::vector<Instruction*>* out) {
  if (!x->shape().IsTuple()) {
    out->push_back(value(x));
    return;
  }
  if (x->opcode() == Opcode::kTuple) {
    for (const Instruction* op : x->operands()) {
      FlattenValue(add, op, value, out);
    }
    return;
  }
  std::function<void(Instruction*)> split = [&](Instruction* v) {
    if (!v->shape().IsTuple()) {
      out->push_back(v);
      return;
    }
    for (int64_t i = 0; i < v->shape().tuple_shapes_size(); ++i) {
      split(AddGte(add, v, i));
    }
  };
  split(value(x));
}

// The instructions FlattenValue reads from.
void FlattenSources(const Instruction* x,
                    std::vector<const Instruction*>* out) {
  if (x->shape().IsTuple() && x->opcode() == Opcode::kTuple) {
    for (const Instruction* op : x->operands()) FlattenSources(op, out);
    return;
  }
  out->push_back(x);
}

bool IsNestedTuple(const Shape& s) {
  if (!s.IsTuple()) return false;
  for (const Shape& e : s.tuple_shapes()) {
    if (e.IsTuple()) return true;
  }
  return false;
}

absl::StatusOr<bool> TryFlattenNestedTuples(Instruction* w, Rewriter& rw) {
  Instruction* init = w->operand(0);
  Computation* cond = w->while_condition();
  Computation* body = w->while_body();
  if (init->opcode() != Opcode::kTuple ||
      body->root_instruction()->opcode() != Opcode::kTuple ||
      !IsNestedTuple(w->shape())) {
    return false;
  }
  const Shape& nested_shape = w->shape();
  std::vector<Shape> leaves;
  CollectLeafShapes(nested_shape, &leaves);
  const Shape flat_shape = Shape::Tuple(leaves);
  Module* module = w->parent()->parent();

  // The first flat position of each top-level element.
  std::vector<int64_t> first(nested_shape.tuple_shapes_size(), 0);
  for (int64_t i = 1; i < nested_shape.tuple_shapes_size(); ++i) {
    first[i] = first[i - 1] + LeafCount(nested_shape.tuple_shapes(i - 1));
  }

  auto build = [&](Computation* old,
                   bool is_body) -> absl::StatusOr<Computation*> {
    NewComputation nc(module, old->name());
    const Instruction* old_param = old->parameter_instruction(0);
    Instruction* p = nc.AddParameter(0, flat_shape, old_param->name());
    InstructionMap map;
    if (AllParamUsersAreGtes(*old)) {
      map[old_param] = p;
    } else {
      map[old_param] = Unflatten(nc.adder(), p, nested_shape, 0);
    }
    // get-tuple-element(param, i) reads the flat elements of i directly.
    LeafRule rule;
    rule.is_leaf = [&](const Instruction* i) {
      return i->opcode() == Opcode::kGetTupleElement &&
             i->operand(0) == old_param;
    };
    rule.make = [&](const Instruction* i) {
      int64_t k = i->tuple_index();
      return Unflatten(nc.adder(), p, nested_shape.tuple_shapes(k), first[k]);
    };
    const Instruction* root = old->root_instruction();
    std::vector<const Instruction*> needed;
    if (is_body) {
      FlattenSources(root, &needed);
    } else {
      needed.push_back(root);
    }
    HLOGYM_RETURN_IF_ERROR(control_flow::CloneNeededInstructions(
        *old, needed, map, nc.adder(), &rule));
    Instruction* new_root = map[root];
    if (is_body) {
      std::vector<Instruction*> elems;
      FlattenValue(
          nc.adder(), root, [&](const Instruction* i) { return map.at(i); },
          &elems);
      new_root = AddTuple(nc.adder(), elems);
    }
    return nc.Finish(rw, new_root);
  };
  HLOGYM_ASSIGN_OR_RETURN(Computation * new_cond, build(cond, false));
  HLOGYM_ASSIGN_OR_RETURN(Computation * new_body, build(body, true));

  AddFn add = control_flow::RewriterAdder(rw, w->parent());
  std::vector<Instruction*> init_elems;
  FlattenValue(
      add, init,
      [](const Instruction* i) { return const_cast<Instruction*>(i); },
      &init_elems);
  Instruction* new_init = AddTuple(add, init_elems);
  HLOGYM_ASSIGN_OR_RETURN(
      Instruction * new_while,
      control_flow::MakeWhile(rw, w, flat_shape, new_cond, new_body, new_init));
  Instruction* replacement = Unflatten(add, new_while, nested_shape, 0);
  return rw.ReplaceInstruction(w, replacement);
}

// ---- Dead tuple elements.

class UnionFind {
 public:
  explicit UnionFind(int64_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int64_t Find(int64_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void Merge(int64_t a, int64_t b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int64_t> parent_;
};

// The indices of the loop state that can go (XLA's dead-parameter
// analysis): unused after the loop and reaching neither a side effect, the
// condition nor another element; or groups of connected elements that are
// each unused after the loop or passed through, reaching no side effect or
// the condition.
std::vector<bool> DeadElements(const Instruction* w) {
  const Computation* cond = w->while_condition();
  const Computation* body = w->while_body();
  const Instruction* root = body->root_instruction();
  const int64_t n = w->shape().tuple_shapes_size();
  std::vector<bool> dead(n, false);

  std::vector<bool> used_after(n, false);
  if (w == w->parent()->root_instruction()) used_after.assign(n, true);
  for (const Instruction* u : w->users()) {
    if (u->opcode() != Opcode::kGetTupleElement) {
      used_after.assign(n, true);
      break;
    }
    used_after[u->tuple_index()] = true;
  }
  const Instruction* body_param = body->parameter_instruction(0);
  const Instruction* cond_param = cond->parameter_instruction(0);
  auto passed_through = [&](int64_t i) {
    const Instruction* out = root->operand(i);
    return out->opcode() == Opcode::kGetTupleElement &&
           out->operand(0) == body_param && out->tuple_index() == i;
  };
  std::vector<bool> candidate(n);
  for (int64_t i = 0; i < n; ++i) {
    candidate[i] = !used_after[i] || passed_through(i);
  }

  // Slots over the tracked instructions of both computations.
  auto tracked = [&](const Instruction* i) {
    return i != body_param && i != cond_param && i != root;
  };
  absl::flat_hash_map<const Instruction*, int64_t> slot;
  std::vector<const Instruction*> order;
  for (const Computation* c : {body, cond}) {
    for (const Instruction* i : c->MakeInstructionPostOrder()) {
      if (tracked(i)) {
        slot[i] = static_cast<int64_t>(order.size());
        order.push_back(i);
      }
    }
  }
  const int64_t slots = static_cast<int64_t>(order.size());
  // deps: for each slot, the elements it depends on, as bit rows (loops
  // carry hundreds of elements through bodies of thousands of instructions).
  const size_t words = (static_cast<size_t>(n) + 63) / 64;
  std::vector<uint64_t> deps(static_cast<size_t>(slots) * words, 0);
  auto row = [&](int64_t s) { return deps.data() + s * words; };
  auto bit = [](int64_t k) { return uint64_t{1} << (k % 64); };
  UnionFind sets(slots);
  std::vector<const Instruction*> sinks;
  for (int64_t s = 0; s < slots; ++s) {
    const Instruction* i = order[s];
    const Instruction* param = i->parent() == body ? body_param : cond_param;
    if (i->opcode() == Opcode::kGetTupleElement && i->operand(0) == param) {
      const int64_t k = i->tuple_index();
      row(s)[k / 64] |= bit(k);
      const Instruction* out = root->operand(k);
      if (out != i && tracked(out)) sets.Merge(slot[out], s);
    } else {
      for (const Instruction* op : i->operands()) {
        if (tracked(op) && slot.contains(op)) {
          const int64_t o = slot[op];
          sets.Merge(o, s);
          const uint64_t* from = row(o);
          uint64_t* to = row(s);
          for (size_t w = 0; w < words; ++w) to[w] |= from[w];
        }
      }
    }
    if (HasSideEffectDeep(*i) || i == cond->root_instruction()) {
      sinks.push_back(i);
    }
  }
  std::vector<uint64_t> sink_words(words, 0), other_words(words, 0);
  for (const Instruction* s : sinks) {
    const uint64_t* r = row(slot[s]);
    for (size_t w = 0; w < words; ++w) sink_words[w] |= r[w];
  }
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* out = root->operand(i);
    if (!tracked(out)) continue;
    auto it = slot.find(out);
    if (it == slot.end()) continue;
    const uint64_t* r = row(it->second);
    for (size_t w = 0; w < words; ++w) {
      uint64_t word = r[w];
      // An element that only feeds itself does not count.
      if (candidate[i] && w == static_cast<size_t>(i / 64)) word &= ~bit(i);
      other_words[w] |= word;
    }
  }
  std::vector<bool> reaches_sink(n, false), affects_others(n, false);
  for (int64_t k = 0; k < n; ++k) {
    reaches_sink[k] = (sink_words[k / 64] & bit(k)) != 0;
    affects_others[k] = (other_words[k / 64] & bit(k)) != 0;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!used_after[i] && !affects_others[i] && !reaches_sink[i]) {
      dead[i] = true;
    }
  }
  // Connected groups of elements.
  std::vector<std::pair<int64_t, int64_t>> members;  // (set, index)
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* out = root->operand(i);
    if (slot.contains(out)) members.push_back({sets.Find(slot[out]), i});
  }
  for (const Instruction* param : {body_param, cond_param}) {
    for (const Instruction* g : param->users()) {
      if (slot.contains(g))
        members.push_back({sets.Find(slot[g]), g->tuple_index()});
    }
  }
  std::sort(members.begin(), members.end());
  for (size_t b = 0; b < members.size();) {
    size_t e = b;
    bool blocked = false;
    while (e < members.size() && members[e].first == members[b].first) {
      int64_t k = members[e].second;
      blocked |= !candidate[k] || reaches_sink[k];
      ++e;
    }
    if (!blocked) {
      for (size_t m = b; m < e; ++m) dead[members[m].second] = true;
    }
    b = e;
  }
  return dead;
}

absl::StatusOr<bool> TryRemoveDeadElements(Instruction* w, Rewriter& rw) {
  Instruction* init = w->operand(0);
  Computation* cond = w->while_condition();
  Computation* body = w->while_body();
  const Instruction* root = body->root_instruction();
  if (!w->shape().IsTuple() || root->opcode() != Opcode::kTuple ||
      w->shape().tuple_shapes_size() == 0 ||
      root->operand_count() != w->shape().tuple_shapes_size() ||
      root->user_count() != 0 || !AllParamUsersAreGtes(*cond) ||
      !AllParamUsersAreGtes(*body)) {
    return false;
  }
  const int64_t n = w->shape().tuple_shapes_size();
  std::vector<bool> dead = DeadElements(w);
  std::vector<int64_t> kept;
  std::vector<int64_t> new_index(n, -1);
  std::vector<Shape> kept_shapes;
  for (int64_t i = 0; i < n; ++i) {
    if (dead[i]) continue;
    new_index[i] = static_cast<int64_t>(kept.size());
    kept.push_back(i);
    kept_shapes.push_back(w->shape().tuple_shapes(i));
  }
  if (static_cast<int64_t>(kept.size()) == n) return false;
  const Shape new_shape = Shape::Tuple(kept_shapes);
  Module* module = w->parent()->parent();

  auto build = [&](Computation* old,
                   bool is_body) -> absl::StatusOr<Computation*> {
    NewComputation nc(module, old->name());
    const Instruction* old_param = old->parameter_instruction(0);
    Instruction* p = nc.AddParameter(0, new_shape, old_param->name());
    InstructionMap map;
    map[old_param] = p;
    LeafRule rule;
    rule.is_leaf = [&](const Instruction* i) {
      return i->opcode() == Opcode::kGetTupleElement &&
             i->operand(0) == old_param;
    };
    rule.make = [&](const Instruction* i) -> Instruction* {
      const int64_t k = new_index[i->tuple_index()];
      return k < 0 ? nullptr : AddGte(nc.adder(), p, k);
    };
    std::vector<const Instruction*> needed;
    if (is_body) {
      for (int64_t i : kept) needed.push_back(root->operand(i));
    } else {
      needed.push_back(old->root_instruction());
    }
    HLOGYM_RETURN_IF_ERROR(control_flow::CloneNeededInstructions(
        *old, needed, map, nc.adder(), &rule));
    Instruction* new_root = nullptr;
    if (is_body) {
      std::vector<Instruction*> elems;
      for (const Instruction* x : needed) elems.push_back(map.at(x));
      new_root = AddTuple(nc.adder(), elems);
    } else {
      new_root = map.at(old->root_instruction());
    }
    return nc.Finish(rw, new_root);
  };
  HLOGYM_ASSIGN_OR_RETURN(Computation * new_cond, build(cond, false));
  HLOGYM_ASSIGN_OR_RETURN(Computation * new_body, build(body, true));

  AddFn add = control_flow::RewriterAdder(rw, w->parent());
  auto init_element = [&](int64_t i) {
    return init->opcode() == Opcode::kTuple ? init->operand(i)
                                            : AddGte(add, init, i);
  };
  std::vector<Instruction*> init_elems;
  for (int64_t i : kept) init_elems.push_back(init_element(i));
  Instruction* new_init = AddTuple(add, init_elems);
  HLOGYM_ASSIGN_OR_RETURN(
      Instruction * new_while,
      control_flow::MakeWhile(rw, w, new_shape, new_cond, new_body, new_init));
  std::vector<Instruction*> elems;
  for (int64_t i = 0; i < n; ++i) {
    elems.push_back(new_index[i] >= 0 ? AddGte(add, new_while, new_index[i])
                                      : init_element(i));
  }
  return rw.ReplaceInstruction(w, AddTuple(add, elems));
}

bool WellFormedWhile(const Instruction* w) {
  if (w->operand_count() != 1 || w->called_computations().size() != 2) {
    return false;
  }
  const Computation* cond = w->while_condition();
  const Computation* body = w->while_body();
  return cond != nullptr && body != nullptr && cond->num_parameters() == 1 &&
         body->num_parameters() == 1 &&
         cond->parameter_instruction(0) != nullptr &&
         body->parameter_instruction(0) != nullptr &&
         body->root_instruction() != nullptr &&
         cond->root_instruction() != nullptr &&
         body->root_instruction()->shape().Compatible(w->shape()) &&
         w->operand(0)->shape().Compatible(w->shape());
}

}  // namespace

absl::StatusOr<bool> WhileLoopSimplifier::RunWith(Module* module,
                                                  Rewriter& rw) {
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* w) -> absl::StatusOr<bool> {
        if (w->opcode() != Opcode::kWhile || !WellFormedWhile(w) ||
            control_flow::CarriesAsyncOrBuffers(w) ||
            !w->control_predecessors().empty() ||
            !w->control_successors().empty()) {
          return false;
        }
        bool changed = false;
        for (auto* attempt : {&TryRemoveLoop, &TryFlattenNestedTuples,
                              &TryRemoveDeadElements}) {
          HLOGYM_ASSIGN_OR_RETURN(bool done, attempt(w, rw));
          changed |= done;
          // Apply mode: the loop is gone; dry mode offers every rewrite.
          if (done && !rw.dry()) return true;
        }
        return changed;
      });
}

}  // namespace hlogym
