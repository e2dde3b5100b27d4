#include "hlogym/passes/conditional_simplifier.h"

#include <functional>
#include <map>
#include <vector>

#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/while_loop_simplifier.h"

namespace hlogym {
namespace {

using control_flow::AddFn;
using control_flow::AddGte;
using control_flow::AddTuple;
using control_flow::InstructionMap;
using control_flow::LeafRule;
using control_flow::NewComputation;

int64_t BranchCount(const Instruction* c) {
  return static_cast<int64_t>(c->called_computations().size());
}

bool WellFormed(const Instruction* c) {
  const int64_t n = BranchCount(c);
  if (n < 1 || c->operand_count() != n + 1) return false;
  for (const Computation* b : c->called_computations()) {
    if (b == nullptr || b->num_parameters() != 1 ||
        b->parameter_instruction(0) == nullptr ||
        b->root_instruction() == nullptr ||
        !b->root_instruction()->shape().Compatible(c->shape())) {
      return false;
    }
  }
  return true;
}

bool AllUsersAreGtes(const Instruction* inst) {
  for (const Instruction* u : inst->users()) {
    if (u->opcode() != Opcode::kGetTupleElement) return false;
  }
  return true;
}

// Branch b's instructions cloned next to the conditional, its parameter
// bound to the branch operand. Returns the value of its root.
absl::StatusOr<Instruction*> InlineBranch(Rewriter& rw, Instruction* c,
                                          int64_t b) {
  Computation* branch = c->called_computations()[b];
  InstructionMap map;
  map[branch->parameter_instruction(0)] = c->operand(1 + b);
  const Instruction* root = branch->root_instruction();
  const Instruction* needed[] = {root};
  HLOGYM_RETURN_IF_ERROR(control_flow::CloneNeededInstructions(
      *branch, needed, map, control_flow::RewriterAdder(rw, c->parent())));
  return map.at(root);
}

bool IsExpensive(const Instruction* i) {
  switch (i->opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kDynamicSlice:
    case Opcode::kGetTupleElement:
    case Opcode::kReduce:
    case Opcode::kReshape:
    case Opcode::kPad:
    case Opcode::kParameter:
    case Opcode::kSlice:
    case Opcode::kTuple:
      return false;
    default:
      return !IsElementwise(i->opcode());
  }
}

// Only parameters, tuples and get-tuple-elements, with an array somewhere
// in the result: cheaper to run than a select.
bool IsEmptyWithArrayRoot(const Computation& c) {
  bool empty = true;
  c.ForEachInstruction([&](Instruction* i) {
    empty &= i->opcode() == Opcode::kTuple ||
             i->opcode() == Opcode::kGetTupleElement ||
             i->opcode() == Opcode::kParameter;
  });
  std::function<bool(const Shape&)> has_array = [&](const Shape& s) {
    if (s.IsArray()) return true;
    if (!s.IsTuple()) return false;
    for (const Shape& e : s.tuple_shapes()) {
      if (has_array(e)) return true;
    }
    return false;
  };
  return empty && has_array(c.root_instruction()->shape());
}

Instruction* Element(const AddFn& add, Instruction* x, int64_t i) {
  return x->opcode() == Opcode::kTuple ? x->operand(i) : AddGte(add, x, i);
}

absl::StatusOr<Instruction*> Select(Rewriter& rw, const AddFn& add,
                                    Instruction* pred, Instruction* t,
                                    Instruction* f) {
  const Shape& s = f->shape();
  if (s.IsToken()) {
    auto a = std::make_unique<Instruction>(Opcode::kAfterAll, s);
    a->AppendOperand(t);
    a->AppendOperand(f);
    return add(std::move(a));
  }
  if (s.IsArray()) {
    Instruction* p = pred;
    if (!s.IsScalar()) {
      HLOGYM_ASSIGN_OR_RETURN(
          p, MakeBroadcast(rw, pred,
                           std::span<const int64_t>(s.dimensions().data(),
                                                    s.dimensions().size()),
                           {}));
    }
    return MakeTernary(rw, Opcode::kSelect, p, t, f);
  }
  if (!s.IsTuple()) {
    return absl::InvalidArgumentError("select of an opaque value");
  }
  std::vector<Instruction*> elems;
  for (int64_t i = 0; i < s.tuple_shapes_size(); ++i) {
    HLOGYM_ASSIGN_OR_RETURN(
        Instruction * e,
        Select(rw, add, pred, Element(add, t, i), Element(add, f, i)));
    elems.push_back(e);
  }
  return AddTuple(add, elems);
}

bool SelectableShape(const Shape& s) {
  if (s.IsArray() || s.IsToken()) return true;
  if (!s.IsTuple()) return false;
  for (const Shape& e : s.tuple_shapes()) {
    if (!SelectableShape(e)) return false;
  }
  return true;
}

// Constant predicate or single branch: inline; cheap branches: select.
absl::StatusOr<bool> TryRemoveConditional(Instruction* c, Rewriter& rw) {
  if (HasSideEffectDeep(*c) || !c->control_successors().empty()) {
    return false;
  }
  const int64_t n = BranchCount(c);
  Instruction* pred = c->operand(0);
  std::optional<int64_t> branch;
  if (n == 1) {
    branch = 0;
  } else if (pred->opcode() == Opcode::kConstant && pred->shape().IsScalar() &&
             pred->has_literal() && !pred->literal().is_unknown()) {
    const int64_t v = pred->literal().GetAsInt64(0);
    if (pred->shape().element_type() == PrimitiveType::kPred) {
      branch = v != 0 ? 0 : 1;
    } else {
      branch = (v < 0 || v >= n) ? n - 1 : v;
    }
  }
  if (branch) {
    HLOGYM_ASSIGN_OR_RETURN(Instruction * value, InlineBranch(rw, c, *branch));
    return rw.ReplaceInstruction(c, value);
  }
  if (n != 2 || !pred->shape().IsScalar() ||
      pred->shape().element_type() != PrimitiveType::kPred ||
      !SelectableShape(c->shape())) {
    return false;
  }
  for (const Computation* b : c->called_computations()) {
    bool expensive = false;
    b->ForEachInstruction([&](Instruction* i) { expensive |= IsExpensive(i); });
    if (expensive || IsEmptyWithArrayRoot(*b)) return false;
  }
  HLOGYM_ASSIGN_OR_RETURN(Instruction * t, InlineBranch(rw, c, 0));
  HLOGYM_ASSIGN_OR_RETURN(Instruction * f, InlineBranch(rw, c, 1));
  AddFn add = control_flow::RewriterAdder(rw, c->parent());
  HLOGYM_ASSIGN_OR_RETURN(Instruction * s, Select(rw, add, pred, t, f));
  return rw.ReplaceInstruction(c, s);
}

bool OutputRewritable(const Instruction* c) {
  return c->user_count() > 0 && c != c->parent()->root_instruction() &&
         c->shape().IsTuple() && AllUsersAreGtes(c);
}

// Output elements that every branch computes from the same instruction:
// readers of the later index read the first.
absl::StatusOr<bool> MergeDuplicateTupleElements(Instruction* c, Rewriter& rw) {
  if (!OutputRewritable(c)) return false;
  for (const Computation* b : c->called_computations()) {
    if (b->root_instruction()->opcode() != Opcode::kTuple) return false;
  }
  std::map<std::vector<const Instruction*>, int64_t> first;
  std::vector<int64_t> same_as(c->shape().tuple_shapes_size(), -1);
  for (int64_t i = 0; i < c->shape().tuple_shapes_size(); ++i) {
    std::vector<const Instruction*> key;
    for (const Computation* b : c->called_computations()) {
      key.push_back(b->root_instruction()->operand(i));
    }
    auto [it, inserted] = first.emplace(key, i);
    if (!inserted) same_as[i] = it->second;
  }
  bool changed = false;
  std::vector<Instruction*> users(c->users().begin(), c->users().end());
  for (Instruction* u : users) {
    const int64_t j = u->tuple_index();
    if (same_as[j] < 0) continue;
    HLOGYM_ASSIGN_OR_RETURN(Instruction * g,
                            MakeGetTupleElement(rw, c, same_as[j]));
    HLOGYM_ASSIGN_OR_RETURN(bool done, rw.ReplaceInstruction(u, g));
    changed |= done;
  }
  return changed;
}

// Output elements nobody reads: a conditional with a smaller output.
absl::StatusOr<bool> RemoveUnusedTupleElements(Instruction* c, Rewriter& rw) {
  if (!OutputRewritable(c)) return false;
  const int64_t n = c->shape().tuple_shapes_size();
  std::vector<int64_t> new_index(n, -1);
  for (const Instruction* u : c->users()) new_index[u->tuple_index()] = 0;
  std::vector<int64_t> kept;
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < n; ++i) {
    if (new_index[i] < 0) continue;
    new_index[i] = static_cast<int64_t>(kept.size());
    kept.push_back(i);
    shapes.push_back(c->shape().tuple_shapes(i));
  }
  if (static_cast<int64_t>(kept.size()) == n) return false;
  const Shape new_shape = Shape::Tuple(shapes);
  Module* module = c->parent()->parent();
  std::vector<Computation*> branches;
  for (Computation* b : c->called_computations()) {
    NewComputation nc(module, b->name());
    const Instruction* old_param = b->parameter_instruction(0);
    InstructionMap map;
    map[old_param] = nc.AddParameter(0, old_param->shape(), old_param->name());
    const Instruction* root = b->root_instruction();
    std::vector<const Instruction*> needed;
    if (root->opcode() == Opcode::kTuple) {
      for (int64_t i : kept) needed.push_back(root->operand(i));
    } else {
      needed.push_back(root);
    }
    HLOGYM_RETURN_IF_ERROR(
        control_flow::CloneNeededInstructions(*b, needed, map, nc.adder()));
    std::vector<Instruction*> elems;
    for (size_t k = 0; k < kept.size(); ++k) {
      elems.push_back(root->opcode() == Opcode::kTuple
                          ? map.at(needed[k])
                          : AddGte(nc.adder(), map.at(root), kept[k]));
    }
    branches.push_back(nc.Finish(rw, AddTuple(nc.adder(), elems)));
  }
  std::vector<Instruction*> ops(c->operands().begin(), c->operands().end());
  HLOGYM_ASSIGN_OR_RETURN(Instruction * smaller,
                          CloneWithNewOperands(rw, c, new_shape, ops));
  smaller->set_called_computations(branches);
  // Origin and sharding annotations describe the old output's structure.
  if (!smaller->attrs().origin_text.empty() ||
      smaller->attrs().sharding.has_value()) {
    smaller->mutable_attrs()->origin_text.clear();
    smaller->mutable_attrs()->sharding.reset();
  }
  bool changed = false;
  std::vector<Instruction*> users(c->users().begin(), c->users().end());
  for (Instruction* u : users) {
    HLOGYM_ASSIGN_OR_RETURN(
        Instruction * g,
        MakeGetTupleElement(rw, smaller, new_index[u->tuple_index()]));
    HLOGYM_ASSIGN_OR_RETURN(bool done, rw.ReplaceInstruction(u, g));
    changed |= done;
  }
  return changed;
}

// Branch parameter elements a branch never reads: it takes a smaller tuple.
absl::StatusOr<bool> RemoveUnusedOperands(Instruction* c, Rewriter& rw) {
  Module* module = c->parent()->parent();
  AddFn add = control_flow::RewriterAdder(rw, c->parent());
  std::vector<Instruction*> ops(c->operands().begin(), c->operands().end());
  std::vector<Computation*> branches = c->called_computations();
  bool any = false;
  for (int64_t b = 0; b < BranchCount(c); ++b) {
    Computation* branch = branches[b];
    const Instruction* param = branch->parameter_instruction(0);
    if (param == branch->root_instruction() || !param->shape().IsTuple() ||
        !AllUsersAreGtes(param)) {
      continue;
    }
    const int64_t n = param->shape().tuple_shapes_size();
    std::vector<int64_t> new_index(n, -1);
    for (const Instruction* u : param->users()) new_index[u->tuple_index()] = 0;
    std::vector<int64_t> kept;
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < n; ++i) {
      if (new_index[i] < 0) continue;
      new_index[i] = static_cast<int64_t>(kept.size());
      kept.push_back(i);
      shapes.push_back(param->shape().tuple_shapes(i));
    }
    if (static_cast<int64_t>(kept.size()) == n) continue;
    NewComputation nc(module, branch->name());
    Instruction* p = nc.AddParameter(0, Shape::Tuple(shapes), param->name());
    InstructionMap map;
    map[param] = p;
    LeafRule rule;
    rule.is_leaf = [&](const Instruction* i) {
      return i->opcode() == Opcode::kGetTupleElement && i->operand(0) == param;
    };
    rule.make = [&](const Instruction* i) {
      return AddGte(nc.adder(), p, new_index[i->tuple_index()]);
    };
    const Instruction* root = branch->root_instruction();
    const Instruction* needed[] = {root};
    HLOGYM_RETURN_IF_ERROR(control_flow::CloneNeededInstructions(
        *branch, needed, map, nc.adder(), &rule));
    branches[b] = nc.Finish(rw, map.at(root));
    std::vector<Instruction*> elems;
    for (int64_t i : kept) elems.push_back(Element(add, ops[1 + b], i));
    ops[1 + b] = AddTuple(add, elems);
    any = true;
  }
  if (!any) return false;
  HLOGYM_ASSIGN_OR_RETURN(Instruction * narrower,
                          CloneWithNewOperands(rw, c, c->shape(), ops));
  narrower->set_called_computations(branches);
  return rw.ReplaceInstruction(c, narrower);
}

}  // namespace

absl::StatusOr<bool> ConditionalSimplifier::RunWith(Module* module,
                                                    Rewriter& rw) {
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* c) -> absl::StatusOr<bool> {
        if (c->opcode() != Opcode::kConditional || !WellFormed(c) ||
            c->attrs().sharding.has_value()) {
          return false;
        }
        bool changed = false;
        for (auto* attempt :
             {&TryRemoveConditional, &MergeDuplicateTupleElements,
              &RemoveUnusedTupleElements, &RemoveUnusedOperands}) {
          HLOGYM_ASSIGN_OR_RETURN(bool done, attempt(c, rw));
          changed |= done;
          // Apply mode: the conditional may be gone; dry mode offers all.
          if (done && !rw.dry()) return true;
        }
        return changed;
      });
}

}  // namespace hlogym
