#include "hlogym/passes/hlo_dce.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/call_counts.h"
#include "hlogym/passes/flatten_call_graph.h"

namespace hlogym {

absl::flat_hash_set<const Computation*> AsyncComputations(
    const Module& module) {
  absl::flat_hash_set<const Computation*> async;
  for (const auto& c : module.computations()) {
    if (c->IsAsyncWrapper()) async.insert(c.get());
    c->ForEachInstruction([&](const Instruction* i) {
      if (i->opcode() == Opcode::kAsyncStart ||
          i->opcode() == Opcode::kAsyncUpdate ||
          i->opcode() == Opcode::kAsyncDone) {
        for (const Computation* callee : i->called_computations()) {
          async.insert(callee);
        }
      }
    });
  }
  return async;
}

absl::flat_hash_set<const Instruction*> AsyncCarriers(const Module& module) {
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<const Instruction*> stack;
  auto push = [&](const Instruction* i) {
    if (seen.insert(i).second) stack.push_back(i);
  };
  for (const auto& c : module.computations()) {
    c->ForEachInstruction([&](const Instruction* i) {
      if (i->opcode() == Opcode::kAsyncStart ||
          i->opcode() == Opcode::kAsyncUpdate) {
        push(i);
      }
    });
  }
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    for (const Instruction* u : i->users()) {
      switch (u->opcode()) {
        case Opcode::kGetTupleElement:
        case Opcode::kTuple:
        case Opcode::kCopy:
        case Opcode::kOptimizationBarrier:
        case Opcode::kCustomCall:
          push(u);
          break;
        case Opcode::kWhile:
          push(u);
          for (const Computation* callee : u->called_computations()) {
            if (callee != nullptr && callee->num_parameters() > 0) {
              push(callee->parameter_instruction(0));
            }
          }
          break;
        default:
          break;
      }
    }
  }
  return seen;
}

absl::flat_hash_set<const Computation*> CalledComputations(
    const Module& module) {
  absl::flat_hash_set<const Computation*> called;
  for (const auto& c : module.computations()) {
    c->ForEachInstruction([&](const Instruction* i) {
      for (const Computation* callee : i->called_computations()) {
        called.insert(callee);
      }
    });
  }
  return called;
}

absl::StatusOr<bool> RemoveNewlyUncalledComputations(
    Module* module,
    const absl::flat_hash_set<const Computation*>& called_before) {
  // Those called before and not now, then their callees left uncalled.
  return module->RemoveComputationsIfUncalled(called_before) > 0;
}

namespace {

bool HasControlEdges(const Instruction* inst) {
  return !inst->control_predecessors().empty() ||
         !inst->control_successors().empty();
}

// Async ops and custom calls may opt in to removal despite side effects.
bool AllowsDceDespiteSideEffect(const Instruction* inst) {
  if (inst->opcode() != Opcode::kCustomCall &&
      inst->opcode() != Opcode::kAsyncStart &&
      inst->opcode() != Opcode::kAsyncUpdate &&
      inst->opcode() != Opcode::kAsyncDone) {
    return false;
  }
  for (const FrontendAttribute& a : inst->frontend_attributes()) {
    if (a.key == "xla_allow_dce_side_effecting_op" && a.value == "true") {
      return true;
    }
  }
  return false;
}

// Side-effect-free (or allowed to go) and safely removable. While loops
// count as side-effect free when their body and condition are.
bool MayRemove(const Instruction* inst) {
  if (inst->opcode() == Opcode::kParameter || HasControlEdges(inst)) {
    return false;
  }
  return !HasSideEffectDeep(*inst) || AllowsDceDespiteSideEffect(inst);
}

// Removes the dead instructions of `c`: no users, not the root, removable,
// and (transitively) those whose users are all dead.
// `before_change` runs before the first change.
absl::StatusOr<bool> RemoveDeadInstructions(
    Computation* c, Rewriter& rw, absl::FunctionRef<void()> before_change) {
  // Every dead set holds an instruction without users: without one, there
  // is nothing to do (the common case, cheaper than the post-order).
  bool any_unused = false;
  c->ForEachInstruction([&](const Instruction* i) {
    any_unused = any_unused || (i->user_count() == 0 &&
                                i != c->root_instruction() && MayRemove(i));
  });
  if (!any_unused) return false;
  std::vector<Instruction*> po = c->MakeInstructionPostOrder();
  absl::flat_hash_set<const Instruction*> dead;
  std::vector<Instruction*> dead_order;  // users before operands
  for (auto it = po.rbegin(); it != po.rend(); ++it) {
    Instruction* inst = *it;
    if (inst == c->root_instruction() || !MayRemove(inst)) continue;
    bool users_dead =
        std::all_of(inst->users().begin(), inst->users().end(),
                    [&](const Instruction* u) { return dead.contains(u); });
    if (!users_dead) continue;
    dead.insert(inst);
    dead_order.push_back(inst);
  }
  if (dead_order.empty()) return false;
  // The Rewriter also removes operands that become unused; it would take
  // instructions that must stay (an unused while loop whose body has side
  // effects, an instruction with control predecessors). Where any such
  // operand would lose its last user, remove one instruction at a time.
  bool overshoots = false;
  for (const Instruction* d : dead_order) {
    for (const Instruction* op : d->operands()) {
      if (dead.contains(op) || op->parent() != c ||
          op == c->root_instruction() || op->opcode() == Opcode::kParameter ||
          op->HasSideEffect() || !op->control_successors().empty()) {
        continue;
      }
      bool users_dead =
          std::all_of(op->users().begin(), op->users().end(),
                      [&](const Instruction* u) { return dead.contains(u); });
      if (users_dead) overshoots = true;
    }
  }
  before_change();
  std::vector<std::pair<int64_t, Instruction*>> ordered;
  for (Instruction* d : dead_order) ordered.push_back({d->unique_id(), d});
  for (auto [id, d] : ordered) {
    if (rw.IsRemoved(id)) continue;
    if (d->user_count() != 0) {
      return absl::InternalError("dead instruction still has users");
    }
    if (overshoots) {
      HLOGYM_RETURN_IF_ERROR(c->RemoveInstruction(d));
    } else {
      HLOGYM_RETURN_IF_ERROR(rw.RemoveInstruction(d));
    }
  }
  return true;
}

// Moves `inst` to the end of its computation with a new unique id, and to
// the end of its operands' user lists, as if it had just been added.
absl::Status MoveToEnd(Instruction* inst) {
  Computation* c = inst->parent();
  const bool root = c->root_instruction() == inst;
  const InstructionVector operands = inst->operands();
  inst->DetachOperands();
  for (Instruction* o : operands) inst->AppendOperand(o);
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Instruction> owned,
                          c->ReleaseInstruction(inst));
  owned->set_unique_id(-1);
  c->AddInstruction(std::move(owned));
  if (root) c->set_root_instruction(inst);
  return absl::OkStatus();
}

// How many instructions call each computation, counted on first use.
// Removing instructions only lowers counts, so a count of one stays true
// until Forget(); copying a body (which adds calls to its callees' callees)
// must forget them.
class CallCounts {
 public:
  explicit CallCounts(const Module* module) : module_(module) {}
  bool IsSoleCaller(const Computation* callee) {
    if (!counts_) counts_ = CountCalls(*module_);
    auto it = counts_->find(callee);
    return it != counts_->end() && it->second.count == 1;
  }
  void Forget() { counts_.reset(); }

 private:
  const Module* module_;
  std::optional<absl::flat_hash_map<const Computation*, CallsOf>> counts_;
};

// Makes the tuple of the root operands marked `used` (their shapes in
// `shapes`) the root of `body` (in `module`), and removes what only the
// old root read.
void SetKeptOutputsRoot(Module* module, Computation* body,
                        std::span<const bool> used, std::vector<Shape> shapes) {
  const Instruction* old_root = body->root_instruction();
  auto tuple = std::make_unique<Instruction>(Opcode::kTuple,
                                             Shape::Tuple(std::move(shapes)));
  for (size_t i = 0; i < used.size(); ++i) {
    if (used[i]) tuple->AppendOperand(old_root->operand(i));
  }
  tuple->set_name(module->UniqueInstructionName(old_root->name()));
  body->set_root_instruction(body->AddInstruction(std::move(tuple)));
  body->RemoveDeadInstructions();
}

// A multi-output fusion whose outputs are read only by get-tuple-elements
// loses the outputs nobody reads. When it is the only caller of its fused
// computation (as fusion passes leave every fusion), the body and the
// fusion change in place: nothing is copied or renamed. Otherwise the
// fusion is rebuilt on a trimmed copy of the body.
absl::StatusOr<bool> RemoveDeadFusionOutputs(
    Instruction* fusion, Rewriter& rw, absl::FunctionRef<void()> before_change,
    CallCounts& calls) {
  Computation* c = fusion->parent();
  if (fusion->opcode() != Opcode::kFusion || !fusion->shape().IsTuple() ||
      fusion->fusion_kind() == FusionKind::kCustom ||
      fusion == c->root_instruction() || HasControlEdges(fusion) ||
      fusion->called_computations().size() != 1 ||
      fusion->attrs().has_output_to_operand_aliasing ||
      !fusion->attrs().output_to_operand_aliasing.empty() ||
      fusion->user_count() == 0) {
    return false;
  }
  const Computation* fc = fusion->fused_computation();
  const Instruction* root = fc->root_instruction();
  const int64_t n = fusion->shape().tuple_shapes_size();
  if (root == nullptr || root->opcode() != Opcode::kTuple ||
      root->operand_count() != n) {
    return false;
  }
  // Every DCE run looks at every multi-output fusion, and most keep all
  // their outputs: nothing is allocated until one is found unused.
  absl::InlinedVector<bool, 16> used(n, false);
  int64_t kept = 0;
  for (const Instruction* u : fusion->users()) {
    if (u->opcode() != Opcode::kGetTupleElement || HasControlEdges(u) ||
        u->tuple_index() < 0 || u->tuple_index() >= n) {
      return false;
    }
    if (!used[u->tuple_index()]) ++kept;
    used[u->tuple_index()] = true;
  }
  // One output left: a plain fusion (root and shape no longer tuples), as
  // HloEnv's DCE leaves it; fusion rules treat any tuple-shaped fusion as
  // multi-output.
  const bool plain = kept == 1;
  if (kept == n && !plain) return false;
  absl::InlinedVector<int64_t, 16> new_index(n, -1);
  std::vector<Shape> fusion_shapes, root_shapes;
  fusion_shapes.reserve(kept);
  root_shapes.reserve(kept);
  kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!used[i]) continue;
    new_index[i] = kept++;
    fusion_shapes.push_back(fusion->shape().tuple_shapes(i));
    root_shapes.push_back(root->shape().tuple_shapes(i));
  }
  Module* module = c->parent();

  if (calls.IsSoleCaller(fc)) {
    Computation* body = fusion->fused_computation();
    // Only a body instruction that calls a computation can leave one
    // uncalled when it goes.
    bool calls_any = false;
    body->ForEachInstruction([&](const Instruction* i) {
      calls_any = calls_any || !i->called_computations().empty();
    });
    if (calls_any) before_change();
    Instruction* body_root = body->root_instruction();
    if (plain) {
      Instruction* sole = body_root->operand(
          std::find(used.begin(), used.end(), true) - used.begin());
      body->set_root_instruction(sole);
      body->RemoveDeadInstructions();
      *fusion->mutable_shape() = std::move(fusion_shapes[0]);
      HLOGYM_RETURN_IF_ERROR(MoveToEnd(fusion));
      std::vector<Instruction*> gtes(fusion->users().begin(),
                                     fusion->users().end());
      for (Instruction* gte : gtes) {
        HLOGYM_RETURN_IF_ERROR(rw.ReplaceInstruction(gte, fusion).status());
      }
      return true;
    }
    if (body_root->user_count() == 0) {
      for (int64_t i = n - 1; i >= 0; --i) {
        if (!used[i]) HLOGYM_RETURN_IF_ERROR(body_root->RemoveOperandAt(i));
      }
      *body_root->mutable_shape() = Shape::Tuple(std::move(root_shapes));
      body->RemoveDeadInstructions();
    } else {  // the root tuple is read inside the body too: a new one
      SetKeptOutputsRoot(module, body, used, std::move(root_shapes));
    }
    *fusion->mutable_shape() = Shape::Tuple(std::move(fusion_shapes));
    for (Instruction* gte : fusion->users()) {
      gte->set_int_attr(new_index[gte->tuple_index()]);
    }
    // Fusion passes order their proposals by instruction order and unique
    // id, so the fusion and its get-tuple-elements take the place a rebuilt
    // fusion would: new ids, last in the computation and in their
    // operands' user lists.
    HLOGYM_RETURN_IF_ERROR(MoveToEnd(fusion));
    std::vector<Instruction*> gtes(fusion->users().begin(),
                                   fusion->users().end());
    for (Instruction* gte : gtes) HLOGYM_RETURN_IF_ERROR(MoveToEnd(gte));
    return true;
  }

  // The fused computation without the dropped outputs.
  before_change();
  calls.Forget();
  std::unique_ptr<Computation> clone = CloneForModule(*fc, module);
  if (plain) {
    const int64_t k = std::find(used.begin(), used.end(), true) - used.begin();
    clone->set_root_instruction(clone->root_instruction()->operand(k));
    clone->RemoveDeadInstructions();
  } else {
    SetKeptOutputsRoot(module, clone.get(), used, std::move(root_shapes));
  }
  Computation* new_fc = rw.AddComputation(std::move(clone));

  std::vector<Instruction*> operands(fusion->operands().begin(),
                                     fusion->operands().end());
  std::unique_ptr<Instruction> nf = fusion->CloneWithNewOperands(operands);
  *nf->mutable_shape() = plain ? fusion_shapes[0] : Shape::Tuple(fusion_shapes);
  nf->set_called_computations({new_fc});
  nf->set_name(module->UniqueInstructionName(fusion->name()));
  nf->set_unique_id(-1);
  Instruction* new_fusion = rw.AddInstruction(c, std::move(nf));

  std::vector<Instruction*> users(fusion->users().begin(),
                                  fusion->users().end());
  for (Instruction* gte : users) {
    if (plain) {
      HLOGYM_RETURN_IF_ERROR(rw.ReplaceInstruction(gte, new_fusion).status());
      continue;
    }
    HLOGYM_ASSIGN_OR_RETURN(
        Instruction * g,
        MakeGetTupleElement(rw, new_fusion, new_index[gte->tuple_index()]));
    HLOGYM_RETURN_IF_ERROR(rw.ReplaceInstruction(gte, g).status());
  }
  return true;
}

// Drops the fusion parameters nothing reads, with their operands, as the
// reference DCE's pruning does for every computation. Without it, removing
// a dead output left its inputs as operands until the next decision
// round's cleanup, so declining every alternative of that round still
// changed the graph and the decision loop went on. Custom fusions and
// aliased outputs name operands by number: left alone.
absl::StatusOr<bool> RemoveUnusedParameters(Instruction* fusion,
                                            CallCounts& calls) {
  if (fusion->fusion_kind() == FusionKind::kCustom ||
      fusion->called_computations().size() != 1 ||
      fusion->attrs().has_output_to_operand_aliasing ||
      !fusion->attrs().output_to_operand_aliasing.empty()) {
    return false;
  }
  const Computation* body = fusion->fused_computation();
  // Checked first: the first IsSoleCaller counts every call in the module.
  const bool any_unused = absl::c_any_of(
      body->parameter_instructions(),
      [&](const Instruction* p) { return IsUnusedParameter(*body, p); });
  if (!any_unused || !calls.IsSoleCaller(body)) return false;
  HLOGYM_ASSIGN_OR_RETURN(std::vector<Instruction*> dropped,
                          RemoveUnusedFusionParameters(fusion));
  return !dropped.empty();
}

}  // namespace

absl::StatusOr<bool> HloDce::RunWith(Module* module, Rewriter& rw) {
  if (rw.dry()) return false;
  // The computations called before the first change, taken just before
  // it: most runs in decision loops change nothing, and then no
  // computation can have become uncalled.
  std::optional<absl::flat_hash_set<const Computation*>> called_before;
  auto before_change = [&] {
    if (!called_before) called_before = CalledComputations(*module);
  };
  bool changed = false;
  // Callers before callees.
  std::vector<Computation*> order = module->MakeComputationPostOrder();
  std::reverse(order.begin(), order.end());
  std::vector<std::pair<int64_t, Instruction*>> fusions;
  CallCounts calls(module);
  for (Computation* c : order) {
    // What is removed here depends on the computation and on what it calls
    // (side effects, fused roots) only: unchanged since a run that found
    // nothing, it has nothing to remove.
    if (c->PassMemoHolds(kPassMemoDce)) {
      ++computations_skipped_;
      continue;
    }
    auto collect_fusions = [&] {
      fusions.clear();
      c->ForEachInstruction([&](Instruction* i) {
        if (i->opcode() == Opcode::kFusion)
          fusions.push_back({i->unique_id(), i});
      });
    };
    // Again while a parameter was dropped: its operand may now be dead,
    // and removing that can leave another fusion's output unused.
    bool changed_here = false;
    for (bool again = true; again;) {
      HLOGYM_ASSIGN_OR_RETURN(bool removed,
                              RemoveDeadInstructions(c, rw, before_change));
      collect_fusions();
      bool pruned_any = false;
      for (auto [id, f] : fusions) {
        if (rw.IsRemoved(id)) continue;
        HLOGYM_ASSIGN_OR_RETURN(
            bool pruned, RemoveDeadFusionOutputs(f, rw, before_change, calls));
        pruned_any |= pruned;
      }
      // Output pruning may have rebuilt fusions: look again.
      if (pruned_any) collect_fusions();
      bool params_dropped = false;
      for (auto [id, f] : fusions) {
        if (rw.IsRemoved(id)) continue;
        HLOGYM_ASSIGN_OR_RETURN(bool dropped, RemoveUnusedParameters(f, calls));
        params_dropped |= dropped;
      }
      changed_here |= removed || pruned_any || params_dropped;
      again = params_dropped;
    }
    changed |= changed_here;
    if (!changed_here) c->RecordPassMemo(kPassMemoDce);
  }
  if (!called_before) return changed;
  HLOGYM_ASSIGN_OR_RETURN(
      bool dropped, RemoveNewlyUncalledComputations(module, *called_before));
  return changed || dropped;
}

}  // namespace hlogym
