#include "hlogym/passes/while_loop_invariant_code_motion.h"

#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/while_loop_simplifier.h"

namespace hlogym {
namespace {

using control_flow::AddFn;
using control_flow::AddGte;
using control_flow::AddTuple;
using control_flow::InstructionMap;
using control_flow::LeafRule;
using control_flow::NewComputation;

bool NotWorthHoistingIndividually(
    const Instruction& inst, const WhileLoopInvariantCodeMotionOptions& o) {
  switch (inst.opcode()) {
    case Opcode::kConstant:
      return !o.hoist_constants;
    case Opcode::kReshape:
      return !o.hoist_reshapes;
    case Opcode::kBitcast:
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
    case Opcode::kTuple:
      return true;
    case Opcode::kCustomCall:
      return inst.attrs().custom_call_target == "Sharding";
    default:
      return false;
  }
}

bool AllParamUsersAreGtes(const Computation& c) {
  for (const Instruction* u : c.parameter_instruction(0)->users()) {
    if (u->opcode() != Opcode::kGetTupleElement) return false;
  }
  return true;
}

// Instructions of `c` that its root or a side effect depends on.
absl::flat_hash_set<const Instruction*> LiveInstructions(const Computation& c) {
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> stack;
  auto push = [&](const Instruction* i) {
    if (live.insert(i).second) stack.push_back(i);
  };
  push(c.root_instruction());
  c.ForEachInstruction([&](Instruction* i) {
    if (HasSideEffectDeep(*i)) push(i);
  });
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    for (const Instruction* op : i->operands()) push(op);
  }
  return live;
}

absl::StatusOr<bool> TryHoist(Instruction* w, Rewriter& rw,
                              const WhileLoopInvariantCodeMotionOptions& o) {
  if (w->operand_count() != 1 || w->called_computations().size() != 2 ||
      !w->shape().IsTuple()) {
    return false;
  }
  Computation* cond = w->while_condition();
  Computation* body = w->while_body();
  if (cond == nullptr || body == nullptr || cond->num_parameters() != 1 ||
      body->num_parameters() != 1 ||
      cond->parameter_instruction(0) == nullptr ||
      body->parameter_instruction(0) == nullptr) {
    return false;
  }
  const int64_t n = w->shape().tuple_shapes_size();
  const Instruction* root = body->root_instruction();
  if (root->opcode() != Opcode::kTuple || root->operand_count() != n ||
      !AllParamUsersAreGtes(*body) || !AllParamUsersAreGtes(*cond)) {
    return false;
  }
  if (control_flow::CarriesAsyncOrBuffers(w)) return false;
  if (std::optional<int64_t> trip = control_flow::SmallTripCount(w)) {
    return false;  // at most one trip: nothing to gain
  }
  const Instruction* body_param = body->parameter_instruction(0);
  absl::flat_hash_set<int64_t> invariant_index;
  for (int64_t i : control_flow::PassedThroughIndices(*body)) {
    if (w->shape().tuple_shapes(i).IsArray()) invariant_index.insert(i);
  }
  if (invariant_index.empty() && !o.hoist_constants) return false;
  bool has_domain = false;
  body->ForEachInstruction(
      [&](Instruction* i) { has_domain |= i->opcode() == Opcode::kDomain; });
  if (has_domain) return false;

  // Invariant values that are not worth hoisting alone, and hoisted ones.
  absl::flat_hash_set<const Instruction*> unhoisted;
  for (const Instruction* u : body_param->users()) {
    if (invariant_index.contains(u->tuple_index())) unhoisted.insert(u);
  }
  absl::flat_hash_set<const Instruction*> hoisted;
  std::vector<Instruction*> to_replace;  // worth hoisting, in post-order
  auto is_invariant = [&](const Instruction* op) {
    return op->opcode() == Opcode::kConstant || hoisted.contains(op) ||
           unhoisted.contains(op);
  };
  const absl::flat_hash_set<const Instruction*> live = LiveInstructions(*body);
  for (Instruction* inst : body->MakeInstructionPostOrder()) {
    if (!live.contains(inst) || HasSideEffectDeep(*inst) ||
        inst->opcode() == Opcode::kAfterAll ||
        inst->opcode() == Opcode::kParameter ||
        inst->opcode() == Opcode::kAlternatives ||
        !inst->control_predecessors().empty() ||
        !inst->control_successors().empty() || inst == root) {
      continue;
    }
    if (!o.hoist_other && inst->opcode() != Opcode::kConstant &&
        inst->opcode() != Opcode::kReshape) {
      continue;
    }
    bool all = true;
    for (const Instruction* op : inst->operands()) all &= is_invariant(op);
    if (!all) continue;
    if (NotWorthHoistingIndividually(*inst, o)) {
      if (inst->opcode() != Opcode::kConstant) unhoisted.insert(inst);
      continue;
    }
    // The instruction and the invariant operands it pulls along.
    std::function<void(const Instruction*)> hoist = [&](const Instruction* i) {
      if (hoisted.contains(i) || i->opcode() == Opcode::kConstant) return;
      hoisted.insert(i);
      unhoisted.erase(i);
      if (i->opcode() == Opcode::kGetTupleElement &&
          i->operand(0) == body_param)
        return;
      for (const Instruction* op : i->operands()) hoist(op);
    };
    hoist(inst);
    to_replace.push_back(inst);
  }
  // Only values something left in the loop reads become loop state.
  absl::flat_hash_set<const Instruction*> replaced(to_replace.begin(),
                                                   to_replace.end());
  std::vector<Instruction*> live_in;
  for (Instruction* inst : to_replace) {
    bool read = false;
    for (const Instruction* u : inst->users()) {
      read |= live.contains(u) && !replaced.contains(u);
    }
    if (read) live_in.push_back(inst);
  }
  if (live_in.empty()) return false;

  // Copies before the loop.
  Computation* parent = w->parent();
  Module* module = parent->parent();
  AddFn add = control_flow::RewriterAdder(rw, parent);
  Instruction* init = w->operand(0);
  absl::flat_hash_map<int64_t, Instruction*> init_elems;
  auto init_element = [&](int64_t i) {
    auto it = init_elems.find(i);
    if (it != init_elems.end()) return it->second;
    Instruction* v = init->opcode() == Opcode::kTuple ? init->operand(i)
                                                      : AddGte(add, init, i);
    init_elems[i] = v;
    return v;
  };
  InstructionMap outside;
  std::function<Instruction*(const Instruction*)> copy =
      [&](const Instruction* i) -> Instruction* {
    auto it = outside.find(i);
    if (it != outside.end()) return it->second;
    Instruction* v = nullptr;
    if (i->opcode() == Opcode::kGetTupleElement &&
        i->operand(0) == body_param) {
      v = init_element(i->tuple_index());
    } else {
      std::vector<Instruction*> ops;
      for (const Instruction* op : i->operands()) ops.push_back(copy(op));
      std::unique_ptr<Instruction> c = i->CloneWithNewOperands(ops);
      c->set_unique_id(-1);
      c->set_name(module->UniqueInstructionName(i->name()));
      v = add(std::move(c));
    }
    outside[i] = v;
    return v;
  };
  std::vector<Shape> shapes(w->shape().tuple_shapes());
  std::vector<Instruction*> new_init_elems;
  for (int64_t i = 0; i < n; ++i) new_init_elems.push_back(init_element(i));
  absl::flat_hash_map<const Instruction*, int64_t> live_in_index;
  for (Instruction* inst : live_in) {
    live_in_index[inst] = static_cast<int64_t>(shapes.size());
    shapes.push_back(inst->shape());
    new_init_elems.push_back(copy(inst));
  }
  const Shape new_shape = Shape::Tuple(shapes);

  // The new body reads the hoisted values from the state and passes them
  // through; the new condition only sees a longer state.
  auto build = [&](Computation* old,
                   bool is_body) -> absl::StatusOr<Computation*> {
    NewComputation nc(module, old->name());
    const Instruction* old_param = old->parameter_instruction(0);
    Instruction* p = nc.AddParameter(0, new_shape, old_param->name());
    InstructionMap map;
    map[old_param] = p;
    absl::flat_hash_map<int64_t, Instruction*> reads;
    auto read = [&](int64_t k) {
      auto it = reads.find(k);
      if (it != reads.end()) return it->second;
      return reads[k] = AddGte(nc.adder(), p, k);
    };
    LeafRule rule;
    rule.is_leaf = [&](const Instruction* i) {
      return is_body && live_in_index.contains(i);
    };
    rule.make = [&](const Instruction* i) { return read(live_in_index.at(i)); };
    std::vector<const Instruction*> needed;
    if (is_body) {
      for (const Instruction* op : root->operands()) needed.push_back(op);
    } else {
      needed.push_back(old->root_instruction());
    }
    HLOGYM_RETURN_IF_ERROR(control_flow::CloneNeededInstructions(
        *old, needed, map, nc.adder(), &rule));
    Instruction* new_root = nullptr;
    if (is_body) {
      std::vector<Instruction*> elems;
      for (const Instruction* x : needed) elems.push_back(map.at(x));
      for (int64_t k = n; k < new_shape.tuple_shapes_size(); ++k) {
        elems.push_back(read(k));
      }
      new_root = AddTuple(nc.adder(), elems);
    } else {
      new_root = map.at(old->root_instruction());
    }
    return nc.Finish(rw, new_root);
  };
  HLOGYM_ASSIGN_OR_RETURN(Computation * new_cond, build(cond, false));
  HLOGYM_ASSIGN_OR_RETURN(Computation * new_body, build(body, true));
  Instruction* new_init = AddTuple(add, new_init_elems);
  HLOGYM_ASSIGN_OR_RETURN(
      Instruction * new_while,
      control_flow::MakeWhile(rw, w, new_shape, new_cond, new_body, new_init));
  std::vector<Instruction*> elems;
  for (int64_t i = 0; i < n; ++i) elems.push_back(AddGte(add, new_while, i));
  return rw.ReplaceInstruction(w, AddTuple(add, elems));
}

bool HasFrontendAttribute(const Instruction* inst, std::string_view key) {
  for (const FrontendAttribute& a : inst->frontend_attributes()) {
    if (a.key == key) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> WhileLoopInvariantCodeMotion::RunWith(Module* module,
                                                           Rewriter& rw) {
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* w) -> absl::StatusOr<bool> {
        if (w->opcode() != Opcode::kWhile ||
            !w->control_predecessors().empty() ||
            HasFrontendAttribute(w, "_xla_disable_loop_instr_hoisting")) {
          return false;
        }
        return TryHoist(w, rw, options_);
      });
}

absl::Status WhileLoopInvariantCodeMotion::SetOption(std::string_view key,
                                                     std::string_view value) {
  bool* target = nullptr;
  if (key == "hoist_constants") target = &options_.hoist_constants;
  if (key == "hoist_reshapes") target = &options_.hoist_reshapes;
  if (key == "hoist_other") target = &options_.hoist_other;
  if (target == nullptr) return Pass::SetOption(key, value);
  HLOGYM_ASSIGN_OR_RETURN(*target, ParseBoolOption(key, value));
  return absl::OkStatus();
}

std::vector<std::string> WhileLoopInvariantCodeMotion::OptionNames() const {
  return {"hoist_constants", "hoist_reshapes", "hoist_other"};
}

}  // namespace hlogym
