#include "hlogym/passes/fusion_ops.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "hlogym/ir/parallel.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/builders.h"

namespace hlogym {

int64_t LeafCount(const Instruction& inst) {
  return inst.shape().IsTuple() ? inst.shape().tuple_shapes_size() : 1;
}

namespace {

constexpr int64_t kWhole = -1;

// A map keyed by instruction for the handful of members and parameters a
// fusion usually has: a linear scan while small (no hashing, no
// allocation up to 8 entries), an index once large (horizontal fusions
// have hundreds of members).
template <typename V>
class SmallMap {
 public:
  V* Find(const Instruction* key) {
    if (index_ != nullptr) {
      auto it = index_->find(key);
      return it == index_->end() ? nullptr : &items_[it->second].second;
    }
    for (auto& [k, v] : items_) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  bool Contains(const Instruction* key) { return Find(key) != nullptr; }
  size_t size() const { return items_.size(); }
  // Inserts (key, value) unless the key is there; returns the value stored
  // and whether it was inserted.
  std::pair<V*, bool> Insert(const Instruction* key, V value) {
    if (V* v = Find(key)) return {v, false};
    items_.emplace_back(key, std::move(value));
    if (index_ != nullptr) {
      index_->emplace(key, items_.size() - 1);
    } else if (items_.size() > kLinearLimit) {
      index_ =
          std::make_unique<absl::flat_hash_map<const Instruction*, size_t>>();
      for (size_t i = 0; i < items_.size(); ++i) {
        index_->emplace(items_[i].first, i);
      }
    }
    return {&items_.back().second, true};
  }

 private:
  static constexpr size_t kLinearLimit = 16;
  absl::InlinedVector<std::pair<const Instruction*, V>, 8> items_;
  std::unique_ptr<absl::flat_hash_map<const Instruction*, size_t>> index_;
};

// Where a member's operand comes from: another member (a leaf of it, or
// the whole value) or outside the set.
struct Source {
  Instruction* member = nullptr;  // nullptr: external
  int64_t leaf = kWhole;
};

// One use outside the set of a member's leaf (or of the whole member).
struct ExternalUse {
  Instruction* value;  // the member, or its get-tuple-element
  Instruction* user;   // nullptr: the root role
};

// A few uses each, as a rule: inline storage (every candidate of a dry run
// collects them).
using UseList = absl::InlinedVector<ExternalUse, 2>;

struct MemberInfo {
  Instruction* inst = nullptr;
  bool sink = true;  // no user inside the set
  // Per leaf: outside uses through get-tuple-elements (tuple members) or
  // directly (array members, leaf 0).
  absl::InlinedVector<UseList, 1> leaf_uses;
  // Outside uses of a tuple-shaped member as a whole (and its root role).
  UseList whole_uses;
  // Inside the fused computation.
  Instruction* whole = nullptr;
  std::vector<Instruction*> leaves;
};

// The recipe of a candidate's body (see PendingFusionBody): the members in
// the order they are cloned (operands first), each member's operands as the
// dry run saw them (decisions reroute them before the body is built), and
// the outputs as (member position, leaf). Inline storage for the usual two
// members: a dry run makes one plan per candidate, and frees most of them.
class PendingFusionPlan final : public PendingFusionBody {
 public:
  using OperandLists = absl::InlinedVector<InstructionVector, 2>;
  absl::InlinedVector<Instruction*, 2> members;
  OperandLists member_operands;
  absl::InlinedVector<std::pair<int64_t, int64_t>, 2> outputs;

  std::unique_ptr<PendingFusionBody> CloneWith(
      const std::vector<Instruction*>& clone_by_slot) const override {
    auto p = std::make_unique<PendingFusionPlan>();
    auto map = [&](const Instruction* i) { return clone_by_slot[SlotOf(*i)]; };
    p->members.reserve(members.size());
    for (const Instruction* m : members) p->members.push_back(map(m));
    p->member_operands.resize(member_operands.size());
    for (size_t i = 0; i < member_operands.size(); ++i) {
      for (const Instruction* o : member_operands[i]) {
        p->member_operands[i].push_back(map(o));
      }
    }
    p->outputs = outputs;
    return p;
  }
};

// Removes what the body's root does not need, and the parameters left
// unused with their `operands`.
absl::Status PruneBody(Computation& fused,
                       absl::InlinedVector<Instruction*, 8>& operands) {
  fused.RemoveDeadInstructions();
  for (int64_t p = fused.num_parameters() - 1; p >= 0; --p) {
    if (fused.parameter_instruction(p)->user_count() == 0) {
      HLOGYM_RETURN_IF_ERROR(fused.RemoveUnusedParameter(p));
      operands.erase(operands.begin() + p);
    }
  }
  return absl::OkStatus();
}

// Each instruction of `body` holds its post-order position in its scratch
// slot: CloneMembers indexes an inlined body's clones by it.
void IndexBodyPositions(const Computation& body) {
  const std::vector<Instruction*>& order = body.InstructionPostOrder();
  for (size_t k = 0; k < order.size(); ++k) {
    order[k]->scratch = static_cast<int64_t>(k);
  }
}

// A pending body under construction: its computation, not yet in the
// module, and the fusion operands its parameters stand for.
struct PendingBuild {
  std::unique_ptr<Computation> fused;
  absl::InlinedVector<Instruction*, 8> operands;
};

constexpr std::string_view kFusedComputationStem = "fused_computation";

class FusionBuilder {
 public:
  FusionBuilder(Rewriter& rw, std::span<Instruction* const> members)
      : rw_(&rw), module_(rw.module()) {
    members_.reserve(members.size());
    for (Instruction* m : members) members_.push_back(m);
  }
  // Builds the pending body of `fusion` from its plan.
  FusionBuilder(Instruction* fusion, const PendingFusionPlan& plan)
      : rw_(nullptr),
        module_(fusion->parent()->parent()),
        computation_(fusion->parent()),
        members_(plan.members.begin(), plan.members.end()),
        snapshot_(&plan.member_operands) {
    for (size_t i = 0; i < members_.size(); ++i) {
      index_.Insert(members_[i], static_cast<int64_t>(i));
    }
    infos_.resize(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) infos_[i].inst = members_[i];
    outputs_.assign(plan.outputs.begin(), plan.outputs.end());
  }

  absl::Status Validate() {
    if (members_.empty()) {
      return absl::InvalidArgumentError("fusion needs at least one member");
    }
    computation_ = members_[0]->parent();
    if (computation_ == nullptr || computation_->IsFusionComputation()) {
      return absl::InvalidArgumentError(
          "fusion members must be in a non-fusion computation");
    }
    for (size_t i = 0; i < members_.size(); ++i) {
      Instruction* m = members_[i];
      if (m->parent() != computation_) {
        return absl::InvalidArgumentError(
            StrCat("fusion members '", members_[0]->name(), "' and '",
                   m->name(), "' are in different computations"));
      }
      if (m->is_detached()) {
        return absl::InvalidArgumentError(
            StrCat("cannot fuse '", m->name(), "': it is not in the graph"));
      }
      switch (m->opcode()) {
        case Opcode::kParameter:
        case Opcode::kTuple:
        case Opcode::kGetTupleElement:
        case Opcode::kAlternatives:
          return absl::InvalidArgumentError(
              StrCat("cannot fuse '", m->name(), "': ", OpcodeName(m->opcode()),
                     " instructions are not fused"));
        default:
          break;
      }
      if (rw_->HasSideEffectDeepCached(*m)) {
        return absl::InvalidArgumentError(
            StrCat("cannot fuse '", m->name(), "': it has side effects"));
      }
      if (!m->control_predecessors().empty() ||
          !m->control_successors().empty()) {
        return absl::InvalidArgumentError(StrCat(
            "cannot fuse '", m->name(), "': it has control dependencies"));
      }
      if (m->opcode() == Opcode::kFusion && m->fused_computation() == nullptr) {
        return absl::InvalidArgumentError(
            StrCat("fusion '", m->name(), "' has no fused computation"));
      }
      if (!index_.Insert(m, static_cast<int64_t>(i)).second) {
        return absl::InvalidArgumentError(
            StrCat("'", m->name(), "' appears twice among fusion members"));
      }
    }
    return absl::OkStatus();
  }

  Source Resolve(Instruction* operand) {
    if (index_.Contains(operand)) return {operand, kWhole};
    if (operand->opcode() == Opcode::kGetTupleElement &&
        index_.Contains(operand->operand(0))) {
      return {operand->operand(0), operand->tuple_index()};
    }
    return {};
  }

  // Members ordered so that operands come first.
  absl::Status SortMembers() {
    absl::InlinedVector<Instruction*, 4> order;
    // 0 unvisited, 1 on stack, 2 done.
    SmallMap<int> state;
    auto state_of = [&](Instruction* i) -> int& {
      return *state.Insert(i, 0).first;
    };
    std::vector<std::pair<Instruction*, int64_t>> stack;
    for (Instruction* root : members_) {
      if (state_of(root) == 2) continue;
      stack.push_back({root, 0});
      state_of(root) = 1;
      while (!stack.empty()) {
        auto& [inst, next] = stack.back();
        if (next < inst->operand_count()) {
          Source s = Resolve(inst->operand(next++));
          if (s.member == nullptr) continue;
          int& st = state_of(s.member);
          if (st == 1) {
            return absl::InvalidArgumentError(
                "fusion members depend on each other in a cycle");
          }
          if (st == 0) {
            st = 1;
            stack.push_back({s.member, 0});
          }
          continue;
        }
        state_of(inst) = 2;
        order.push_back(inst);
        stack.pop_back();
      }
    }
    members_ = std::move(order);
    return absl::OkStatus();
  }

  void CollectUses(ExternalUses policy) {
    infos_.resize(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) {
      Instruction* m = members_[i];
      MemberInfo& info = infos_[i];
      info.inst = m;
      const bool tuple = m->shape().IsTuple();
      info.leaf_uses.resize(LeafCount(*m));
      for (Instruction* u : m->users()) {
        if (index_.Contains(u)) {
          info.sink = false;
          continue;
        }
        if (tuple && u->opcode() == Opcode::kGetTupleElement) {
          const int64_t leaf = u->tuple_index();
          for (Instruction* w : u->users()) {
            if (index_.Contains(w)) {
              info.sink = false;
            } else {
              info.leaf_uses[leaf].push_back({u, w});
            }
          }
          if (u->IsRoot()) info.leaf_uses[leaf].push_back({u, nullptr});
          continue;
        }
        if (tuple) {
          info.whole_uses.push_back({m, u});
        } else {
          info.leaf_uses[0].push_back({m, u});
        }
      }
      if (m->IsRoot()) {
        if (tuple) {
          info.whole_uses.push_back({m, nullptr});
        } else {
          info.leaf_uses[0].push_back({m, nullptr});
        }
      }
    }
    // Outputs: sinks always; the others only in multi-output mode.
    for (MemberInfo& info : infos_) {
      if (!info.sink && policy == ExternalUses::kDuplicate) {
        for (auto& uses : info.leaf_uses) uses.clear();
        info.whole_uses.clear();
      }
    }
  }

  Instruction* Add(std::unique_ptr<Instruction> inst) {
    if (inst->name().empty()) {
      inst->set_name(NameFrom(OpcodeName(inst->opcode())));
    }
    return fused_->AddInstruction(std::move(inst));
  }

  // A unique name from `stem`; `stem` itself while names are deferred.
  std::string NameFrom(std::string_view stem) {
    return defer_names_ ? std::string(stem)
                        : module_->UniqueInstructionName(stem);
  }

  Instruction* Param(Instruction* external) {
    auto [slot, inserted] = params_.Insert(external, nullptr);
    if (!inserted) return *slot;
    const int64_t number = static_cast<int64_t>(operands_.size());
    auto p =
        std::make_unique<Instruction>(Opcode::kParameter, external->shape());
    p->set_int_attr(number);
    p->set_name(NameFrom(StrCat("param_", number)));
    operands_.push_back(external);
    *slot = Add(std::move(p));
    return *slot;
  }

  // Leaf `leaf` of an inside value (a tuple's element, else a new
  // get-tuple-element).
  Instruction* Leaf(MemberInfo& info, int64_t leaf) {
    if (leaf == kWhole) return info.whole;
    if (!info.inst->shape().IsTuple()) return info.whole;
    if (info.leaves.empty()) info.leaves.assign(LeafCount(*info.inst), nullptr);
    Instruction*& slot = info.leaves[leaf];
    if (slot == nullptr) {
      if (info.whole->opcode() == Opcode::kTuple) {
        slot = info.whole->operand(leaf);
      } else {
        auto gte = std::make_unique<Instruction>(
            Opcode::kGetTupleElement, info.inst->shape().tuple_shapes(leaf));
        gte->set_int_attr(leaf);
        gte->AppendOperand(info.whole);
        slot = Add(std::move(gte));
      }
    }
    return slot;
  }

  Instruction* Value(Instruction* operand) {
    Source s = Resolve(operand);
    if (s.member == nullptr) return Param(operand);
    return Leaf(infos_[*member_pos_.Find(s.member)], s.leaf);
  }

  absl::Status CloneMembers() {
    fused_ = std::make_unique<Computation>(
        defer_names_ ? std::string(kFusedComputationStem)
                     : module_->UniqueComputationName(kFusedComputationStem));
    fused_->set_is_fusion_computation(true);
    // A fusion runs on its caller's execution thread.
    fused_->set_execution_thread(computation_->execution_thread());
    IndexPositions();
    for (size_t i = 0; i < infos_.size(); ++i) {
      MemberInfo& info = infos_[i];
      Instruction* m = info.inst;
      std::vector<Instruction*> ops;
      ops.reserve(m->operand_count());
      for (Instruction* o : OperandsOf(i)) ops.push_back(Value(o));
      if (m->opcode() != Opcode::kFusion) {
        auto clone = m->CloneWithNewOperands(ops);  // keeps m's name
        if (!defer_names_) {
          clone->set_name(module_->UniqueInstructionName(m->name()));
        }
        info.whole = Add(std::move(clone));
        continue;
      }
      if (CanMoveBody(info)) {
        HLOGYM_RETURN_IF_ERROR(MoveBody(info, ops));
        continue;
      }
      // Inline the member fusion's body. Its instructions' scratch fields
      // (which the post-order overwrites anyway) hold their positions in
      // the post-order, which index their clones (set beforehand when
      // bodies are built in parallel: see IndexBodyPositions).
      const Computation* body = m->fused_computation();
      const std::vector<Instruction*>& order = body->InstructionPostOrder();
      std::vector<Instruction*>& clones = body_clones_;
      clones.assign(order.size(), nullptr);
      if (!positions_indexed_) IndexBodyPositions(*body);
      for (int64_t p = 0;
           p < body->num_parameters() && p < static_cast<int64_t>(ops.size());
           ++p) {
        const Instruction* param = body->parameter_instruction(p);
        if (param != nullptr) clones[param->scratch] = ops[p];
      }
      std::vector<Instruction*> inner_ops;
      for (size_t k = 0; k < order.size(); ++k) {
        Instruction* inner = order[k];
        if (inner->opcode() == Opcode::kParameter) continue;
        inner_ops.clear();
        for (Instruction* o : inner->operands()) {
          Instruction* v = o->parent() == body ? clones[o->scratch] : nullptr;
          if (v == nullptr) {
            return absl::InternalError(
                StrCat("fused computation '", body->name(),
                       "' is malformed at '", inner->name(), "'"));
          }
          inner_ops.push_back(v);
        }
        auto clone = inner->CloneWithNewOperands(inner_ops);
        if (!defer_names_) {
          clone->set_name(module_->UniqueInstructionName(inner->name()));
        }
        clones[k] = Add(std::move(clone));
      }
      const Instruction* root = body->root_instruction();
      if (root == nullptr || root->parent() != body ||
          clones[root->scratch] == nullptr) {
        return absl::InternalError(StrCat("fused computation '", body->name(),
                                          "' has no usable root"));
      }
      info.whole = clones[root->scratch];
    }
    return absl::OkStatus();
  }

  // A member fusion whose body this run made (no other caller) and which
  // the fusion replaces entirely: an array-shaped sink, so all its uses are
  // outputs and Emit removes it. Its body can move into the new fusion
  // instead of being copied. That keeps a consumer that absorbs producers
  // one at a time linear in its size instead of quadratic.
  bool CanMoveBody(const MemberInfo& info) const {
    const Instruction* m = info.inst;
    return rw_ != nullptr && !rw_->dry() && snapshot_ == nullptr && info.sink &&
           m->shape().IsArray() && m->opcode() == Opcode::kFusion &&
           rw_->IsAddedComputation(m->fused_computation());
  }

  // Moves the body of `info`'s fusion (see CanMoveBody) into the fused
  // computation, its parameters replaced by `ops`. The instructions keep
  // their names and unique ids; the emptied body is dropped with the
  // member at Finish.
  absl::Status MoveBody(MemberInfo& info,
                        const std::vector<Instruction*>& ops) {
    Computation* body = info.inst->fused_computation();
    Instruction* root = body->root_instruction();
    if (root == nullptr || root->parent() != body ||
        root->opcode() == Opcode::kParameter) {
      return absl::InternalError(
          StrCat("fused computation '", body->name(), "' has no movable root"));
    }
    for (Instruction* inner : body->MakeInstructionPostOrder()) {
      if (inner->opcode() == Opcode::kParameter) continue;
      for (int64_t k = 0; k < inner->operand_count(); ++k) {
        const Instruction* o = inner->operand(k);
        if (o->opcode() != Opcode::kParameter) continue;
        const int64_t p = o->parameter_number();
        if (o->parent() != body || p < 0 ||
            p >= static_cast<int64_t>(ops.size())) {
          return absl::InternalError(StrCat("fused computation '", body->name(),
                                            "' is malformed at '",
                                            inner->name(), "'"));
        }
        HLOGYM_RETURN_IF_ERROR(inner->ReplaceOperandWith(k, ops[p]));
      }
      HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Instruction> owned,
                              body->ReleaseInstruction(inner));
      fused_->AddInstruction(std::move(owned));
    }
    info.whole = root;
    moved_.push_back(info.inst->unique_id());
    return absl::OkStatus();
  }

  void IndexPositions() {
    if (member_pos_.size() == members_.size()) return;
    for (size_t i = 0; i < members_.size(); ++i)
      member_pos_.Insert(members_[i], i);
  }

  // A member's operands: as the dry run saw them when building a pending
  // body, else as they are.
  const InstructionVector& OperandsOf(size_t i) const {
    return snapshot_ != nullptr ? (*snapshot_)[i] : members_[i]->operands();
  }

  // One output per used leaf; fills `outputs_` with (member index, leaf).
  // Fails when no member result is used outside the set.
  absl::Status ChooseOutputs() {
    for (size_t i = 0; i < infos_.size(); ++i) {
      MemberInfo& info = infos_[i];
      const bool whole = !info.whole_uses.empty();
      for (int64_t leaf = 0; leaf < static_cast<int64_t>(info.leaf_uses.size());
           ++leaf) {
        if (whole || !info.leaf_uses[leaf].empty()) {
          outputs_.push_back({static_cast<int64_t>(i), leaf});
        }
      }
    }
    if (outputs_.empty()) {
      return absl::InvalidArgumentError(
          StrCat("fusing '", members_.back()->name(),
                 "': no member result is used outside the fusion"));
    }
    return absl::OkStatus();
  }

  Instruction* OutputValue(size_t j) {
    auto [i, leaf] = outputs_[j];
    MemberInfo& info = infos_[i];
    return info.inst->shape().IsTuple() ? Leaf(info, leaf) : info.whole;
  }

  // Removes what the outputs do not need, and the parameters left unused.
  absl::Status Prune() { return PruneBody(*fused_, operands_); }

  // Plain root: the single array output itself, else a tuple of outputs.
  // `force_tuple` keeps a tuple even for one output.
  absl::Status BuildRoot(bool force_tuple) {
    if (outputs_.size() == 1 && !force_tuple) {
      Instruction* v = OutputValue(0);
      if (!v->shape().IsTuple()) {
        fused_->set_root_instruction(v);
        return absl::OkStatus();
      }
    }
    std::vector<Shape> shapes;
    auto tuple = std::make_unique<Instruction>(Opcode::kTuple, Shape());
    for (size_t j = 0; j < outputs_.size(); ++j) {
      Instruction* v = OutputValue(j);
      shapes.push_back(v->shape());
      tuple->AppendOperand(v);
    }
    *tuple->mutable_shape() = Shape::Tuple(std::move(shapes));
    fused_->set_root_instruction(Add(std::move(tuple)));
    return absl::OkStatus();
  }

  // Sliced horizontal root: per output index, the outputs flattened to
  // rank 1 and concatenated; the root holds slices of the concatenations.
  // `reshape_back_[j]` records that output j must be reshaped by users.
  absl::Status BuildSlicedRoot() {
    const int64_t per_member = static_cast<int64_t>(outputs_.size()) /
                               static_cast<int64_t>(infos_.size());
    if (per_member * static_cast<int64_t>(infos_.size()) !=
        static_cast<int64_t>(outputs_.size())) {
      return absl::InvalidArgumentError(
          "sliced horizontal fusion needs the same output count per member");
    }
    std::vector<Instruction*> slices(outputs_.size(), nullptr);
    for (int64_t t = 0; t < per_member; ++t) {
      std::vector<Instruction*> flat;
      int64_t total = 0;
      PrimitiveType type = PrimitiveType::kInvalid;
      for (size_t i = 0; i < infos_.size(); ++i) {
        Instruction* v = OutputValue(i * per_member + t);
        if (!v->shape().IsArray()) {
          return absl::InvalidArgumentError(
              "sliced horizontal fusion needs array outputs");
        }
        if (type == PrimitiveType::kInvalid) type = v->shape().element_type();
        if (v->shape().element_type() != type) {
          return absl::InvalidArgumentError(
              "sliced horizontal fusion needs one element type per output");
        }
        const int64_t n = v->shape().ElementsIn();
        Shape s(type, {n});
        if (v->shape().has_layout()) s.SetDefaultLayout();
        auto r = std::make_unique<Instruction>(Opcode::kReshape, s);
        r->AppendOperand(v);
        flat.push_back(Add(std::move(r)));
        total += n;
      }
      Shape cs(type, {total});
      if (flat[0]->shape().has_layout()) cs.SetDefaultLayout();
      auto concat = std::make_unique<Instruction>(Opcode::kConcatenate, cs);
      concat->set_dimensions({0});
      for (Instruction* f : flat) concat->AppendOperand(f);
      Instruction* c = Add(std::move(concat));
      int64_t start = 0;
      for (size_t i = 0; i < infos_.size(); ++i) {
        const int64_t n = flat[i]->shape().dimensions(0);
        auto slice =
            std::make_unique<Instruction>(Opcode::kSlice, flat[i]->shape());
        slice->mutable_attrs()->slice = {{start, start + n, 1}};
        slice->AppendOperand(c);
        slices[i * per_member + t] = Add(std::move(slice));
        start += n;
      }
    }
    std::vector<Shape> shapes;
    auto tuple = std::make_unique<Instruction>(Opcode::kTuple, Shape());
    for (Instruction* s : slices) {
      shapes.push_back(s->shape());
      tuple->AppendOperand(s);
    }
    *tuple->mutable_shape() = Shape::Tuple(std::move(shapes));
    fused_->set_root_instruction(Add(std::move(tuple)));
    reshape_back_ = true;
    return absl::OkStatus();
  }

  // ---- Pending bodies (dry runs that defer them).

  // The shape of output j as the built body will give it: a fusion
  // member's value is its body root's (layouts may differ from the
  // member's own shape).
  const Shape& OutputShape(size_t j) const {
    auto [i, leaf] = outputs_[j];
    const Instruction* m = infos_[i].inst;
    const Instruction* root = m->opcode() == Opcode::kFusion
                                  ? m->fused_computation()->root_instruction()
                                  : nullptr;
    if (!m->shape().IsTuple())
      return root != nullptr ? root->shape() : m->shape();
    if (root != nullptr && root->opcode() == Opcode::kTuple) {
      return root->operand(leaf)->shape();
    }
    return m->shape().tuple_shapes(leaf);
  }

  // Works out, without cloning anything, the operands and the shape the
  // built and pruned body will have: which leaves of each member the
  // outputs and the later members read, hence which operand slots are
  // live (all of a plain member's; a fusion member's those whose parameter
  // its body reads from the needed part of its root). Operands keep the
  // order of first use over all slots, as CloneMembers creates parameters.
  // False when a member's body is malformed (the eager path reports it).
  bool Plan() {
    IndexPositions();
    for (const MemberInfo& info : infos_) {
      const Instruction* m = info.inst;
      if (m->opcode() != Opcode::kFusion) continue;
      const Computation* body = m->fused_computation();
      if (body->num_parameters() != m->operand_count() ||
          body->root_instruction() == nullptr) {
        return false;
      }
      for (int64_t p = 0; p < body->num_parameters(); ++p) {
        if (body->parameter_instruction(p) == nullptr) return false;
      }
    }
    struct Need {
      bool any = false;
      bool whole = false;
      absl::InlinedVector<bool, 4> leaves;
    };
    // Inline storage throughout: every candidate of a dry run is planned.
    absl::InlinedVector<Need, 8> need(infos_.size());
    auto need_leaf = [&](size_t i, int64_t leaf) {
      Need& n = need[i];
      n.any = true;
      if (leaf == kWhole || !infos_[i].inst->shape().IsTuple()) {
        n.whole = true;
        return;
      }
      if (n.leaves.empty()) n.leaves.assign(LeafCount(*infos_[i].inst), false);
      n.leaves[leaf] = true;
    };
    for (auto [i, leaf] : outputs_) need_leaf(static_cast<size_t>(i), leaf);
    // Outside values some live slot reads, with repeats: inline storage,
    // not maps, since every candidate of a dry run is planned and most
    // have a dozen or two such values.
    absl::InlinedVector<const Instruction*, 16> live_external;
    absl::InlinedVector<const Instruction*, 16> stack;
    for (size_t i = infos_.size(); i-- > 0;) {
      if (!need[i].any) continue;  // only read by dead parts of a body
      Instruction* m = infos_[i].inst;
      const InstructionVector& ops = m->operands();
      const Computation* body =
          m->opcode() == Opcode::kFusion ? m->fused_computation() : nullptr;
      if (body != nullptr) {
        body->ForEachInstruction([](Instruction* x) { x->scratch = 0; });
        const Instruction* root = body->root_instruction();
        stack.clear();
        if (!need[i].whole && root->opcode() == Opcode::kTuple &&
            m->shape().IsTuple()) {
          for (size_t leaf = 0; leaf < need[i].leaves.size(); ++leaf) {
            if (need[i].leaves[leaf]) stack.push_back(root->operand(leaf));
          }
        } else {
          stack.push_back(root);
        }
        for (const Instruction* x : stack) x->scratch = 1;
        while (!stack.empty()) {
          const Instruction* x = stack.back();
          stack.pop_back();
          for (const Instruction* o : x->operands()) {
            if (o->parent() == body && o->scratch == 0) {
              o->scratch = 1;
              stack.push_back(o);
            }
          }
        }
      }
      for (size_t k = 0; k < ops.size(); ++k) {
        if (body != nullptr &&
            body->parameter_instruction(static_cast<int64_t>(k))->scratch ==
                0) {
          continue;
        }
        Source src = Resolve(ops[k]);
        if (src.member != nullptr) {
          need_leaf(*member_pos_.Find(src.member), src.leaf);
        } else {
          live_external.push_back(ops[k]);
        }
      }
    }
    // In order of first use over all slots (liveness is per value, so the
    // first use of a live value is its first use at all). The flag says
    // whether the value was emitted.
    SmallMap<bool> live;
    for (const Instruction* v : live_external) live.Insert(v, false);
    size_t pending = live.size();
    for (size_t i = 0; i < infos_.size() && pending > 0; ++i) {
      for (Instruction* o : infos_[i].inst->operands()) {
        bool* emitted = live.Find(o);
        if (emitted == nullptr || *emitted) continue;
        // Only values no member produces were collected.
        *emitted = true;
        --pending;
        operands_.push_back(o);
      }
    }
    return true;
  }

  // Dry mode: the fusion with a pending body, and its uses replaced.
  absl::StatusOr<Instruction*> EmitPending(const FuseOptions& options) {
    Shape root_shape;
    if (outputs_.size() == 1 && !OutputShape(0).IsTuple()) {
      root_shape = OutputShape(0);
    } else {
      std::vector<Shape> shapes;
      shapes.reserve(outputs_.size());
      for (size_t j = 0; j < outputs_.size(); ++j) {
        shapes.push_back(OutputShape(j));
      }
      root_shape = Shape::Tuple(std::move(shapes));
    }
    auto plan = std::make_unique<PendingFusionPlan>();
    plan->members.assign(members_.begin(), members_.end());
    plan->member_operands.reserve(members_.size());
    for (Instruction* m : members_)
      plan->member_operands.push_back(m->operands());
    plan->outputs.assign(outputs_.begin(), outputs_.end());
    return AddFusion(root_shape, options, nullptr, std::move(plan));
  }

  // The unpruned body of the fusion this builder was made from the plan
  // of. With `parallel`, it touches nothing another thread building
  // another body does: names stay stems (NamePendingBody names them) and
  // inlined bodies' positions must be indexed (IndexBodyPositions).
  absl::StatusOr<PendingBuild> ClonePending(bool parallel) {
    defer_names_ = parallel;
    positions_indexed_ = parallel;
    HLOGYM_RETURN_IF_ERROR(CloneMembers());
    HLOGYM_RETURN_IF_ERROR(BuildRoot(/*force_tuple=*/false));
    return PendingBuild{std::move(fused_), operands_};
  }

  absl::StatusOr<Instruction*> Emit(const FuseOptions& options) {
    HLOGYM_RETURN_IF_ERROR(Prune());
    const Shape root_shape = fused_->root_instruction()->shape();
    Computation* fused = rw_->AddComputation(std::move(fused_));
    HLOGYM_ASSIGN_OR_RETURN(Instruction * fusion,
                            AddFusion(root_shape, options, fused, nullptr));
    if (!rw_->dry()) HLOGYM_RETURN_IF_ERROR(RemoveDeadMembers());
    // CanMoveBody promised these members would go: one left behind would
    // call an emptied body.
    for (int64_t id : moved_) {
      if (!rw_->IsRemoved(id)) {
        return absl::InternalError(
            "a fusion member whose body moved into the new fusion is still "
            "in the graph");
      }
    }
    return fusion;
  }

  // The fusion instruction, calling `fused` or carrying `pending`, and the
  // members' outside uses replaced by its outputs.
  absl::StatusOr<Instruction*> AddFusion(
      const Shape& root_shape, const FuseOptions& options, Computation* fused,
      std::unique_ptr<PendingFusionBody> pending) {
    auto f = std::make_unique<Instruction>(Opcode::kFusion, root_shape);
    f->set_fusion_kind(options.kind);
    if (fused != nullptr) f->set_called_computations({fused});
    f->set_pending_body(std::move(pending));
    f->set_name(module_->UniqueInstructionName(options.name));
    f->mutable_operands_reserve(operands_.size());
    for (Instruction* o : operands_) f->AppendOperand(o);
    Instruction* fusion = rw_->AddInstruction(computation_, std::move(f));
    HLOGYM_RETURN_IF_ERROR(ReplaceUses(fusion, root_shape));
    return fusion;
  }

  // The value users of output j read.
  absl::StatusOr<Instruction*> OutputFor(Instruction* fusion,
                                         const Shape& root_shape, size_t j) {
    if (!root_shape.IsTuple()) return fusion;
    HLOGYM_ASSIGN_OR_RETURN(
        Instruction * gte,
        MakeGetTupleElement(*rw_, fusion, static_cast<int64_t>(j)));
    if (!reshape_back_) return gte;
    Instruction* original = OriginalOf(j);
    auto r = std::make_unique<Instruction>(Opcode::kReshape, original->shape());
    r->AppendOperand(gte);
    return rw_->AddInstruction(computation_, std::move(r));
  }

  Instruction* OriginalOf(size_t j) {
    auto [i, leaf] = outputs_[j];
    const MemberInfo& info = infos_[i];
    if (!info.inst->shape().IsTuple()) return info.inst;
    // Only the shape matters here.
    for (const ExternalUse& u : info.leaf_uses[leaf]) return u.value;
    return info.inst;
  }

  absl::Status Replace(Instruction* value, std::span<const ExternalUse> uses,
                       Instruction* replacement) {
    if (uses.empty()) return absl::OkStatus();
    // Every use outside: one call covers the root role too.
    const int64_t outside_users = static_cast<int64_t>(
        std::count_if(uses.begin(), uses.end(),
                      [](const ExternalUse& u) { return u.user != nullptr; }));
    SmallMap<char> distinct_users;
    for (Instruction* u : value->users()) distinct_users.Insert(u, 0);
    if (outside_users == static_cast<int64_t>(distinct_users.size())) {
      return rw_->ReplaceAllUsesWith(value, replacement).status();
    }
    SmallMap<char> done;
    for (const ExternalUse& u : uses) {
      if (u.user == nullptr) {
        HLOGYM_RETURN_IF_ERROR(
            rw_->SetRoot(computation_, replacement).status());
      } else if (done.Insert(u.user, 0).second) {
        HLOGYM_RETURN_IF_ERROR(
            rw_->ReplaceUseWith(value, u.user, replacement).status());
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReplaceUses(Instruction* fusion, const Shape& root_shape) {
    // Outputs of each member, by leaf.
    absl::InlinedVector<absl::InlinedVector<Instruction*, 2>, 4> out(
        infos_.size());
    for (size_t j = 0; j < outputs_.size(); ++j) {
      auto [i, leaf] = outputs_[j];
      if (out[i].empty()) out[i].assign(infos_[i].leaf_uses.size(), nullptr);
      HLOGYM_ASSIGN_OR_RETURN(out[i][leaf], OutputFor(fusion, root_shape, j));
    }
    for (size_t i = 0; i < infos_.size(); ++i) {
      MemberInfo& info = infos_[i];
      if (out[i].empty()) continue;
      if (!info.inst->shape().IsTuple()) {
        HLOGYM_RETURN_IF_ERROR(
            Replace(info.inst, info.leaf_uses[0], out[i][0]));
        continue;
      }
      absl::InlinedVector<Instruction*, 4> gtes;
      UseList group;
      for (size_t leaf = 0; leaf < info.leaf_uses.size(); ++leaf) {
        // Group the uses by the get-tuple-element they go through, in order
        // of first appearance (a leaf has one or two such elements).
        const UseList& uses = info.leaf_uses[leaf];
        gtes.clear();
        for (const ExternalUse& u : uses) {
          if (std::find(gtes.begin(), gtes.end(), u.value) == gtes.end()) {
            gtes.push_back(u.value);
          }
        }
        for (Instruction* g : gtes) {
          group.clear();
          for (const ExternalUse& u : uses) {
            if (u.value == g) group.push_back(u);
          }
          HLOGYM_RETURN_IF_ERROR(Replace(g, group, out[i][leaf]));
        }
      }
      if (!info.whole_uses.empty()) {
        HLOGYM_ASSIGN_OR_RETURN(Instruction * tuple,
                                MakeTuple(*rw_, computation_,
                                          std::span<Instruction* const>(
                                              out[i].data(), out[i].size())));
        HLOGYM_RETURN_IF_ERROR(Replace(info.inst, info.whole_uses, tuple));
      }
    }
    return absl::OkStatus();
  }

  absl::Status RemoveDeadMembers() {
    std::vector<int64_t> ids;
    for (Instruction* m : members_) ids.push_back(m->unique_id());
    for (int64_t i = static_cast<int64_t>(members_.size()) - 1; i >= 0; --i) {
      if (rw_->IsRemoved(ids[i])) continue;
      Instruction* m = members_[i];
      if (m->shape().IsTuple()) {
        std::vector<Instruction*> dead_gtes;
        for (Instruction* u : m->users()) {
          if (u->opcode() == Opcode::kGetTupleElement && u->user_count() == 0 &&
              !u->IsRoot()) {
            dead_gtes.push_back(u);
          }
        }
        for (Instruction* g : dead_gtes) {
          HLOGYM_RETURN_IF_ERROR(rw_->RemoveInstruction(g));
        }
        if (rw_->IsRemoved(ids[i])) continue;
      }
      if (m->user_count() == 0 && !m->IsRoot()) {
        HLOGYM_RETURN_IF_ERROR(rw_->RemoveInstruction(m));
      }
    }
    return absl::OkStatus();
  }

 private:
  Rewriter* rw_;
  Module* module_;
  Computation* computation_ = nullptr;
  absl::InlinedVector<Instruction*, 4> members_;
  const PendingFusionPlan::OperandLists* snapshot_ = nullptr;
  SmallMap<int64_t> index_;
  SmallMap<size_t> member_pos_;
  std::vector<Instruction*> body_clones_;  // CloneMembers: by body position
  std::vector<int64_t> moved_;  // unique ids of members whose bodies moved
  absl::InlinedVector<MemberInfo, 4> infos_;
  std::unique_ptr<Computation> fused_;
  SmallMap<Instruction*> params_;
  absl::InlinedVector<Instruction*, 8> operands_;
  absl::InlinedVector<std::pair<int64_t, int64_t>, 4> outputs_;
  bool reshape_back_ = false;
  bool defer_names_ = false;        // see ClonePending
  bool positions_indexed_ = false;  // see ClonePending
};

absl::StatusOr<Instruction*> Fuse(Rewriter& rw,
                                  std::span<Instruction* const> members,
                                  const FuseOptions& options, bool force_tuple,
                                  bool sliced) {
  FusionBuilder b(rw, members);
  HLOGYM_RETURN_IF_ERROR(b.Validate());
  HLOGYM_RETURN_IF_ERROR(b.SortMembers());
  b.CollectUses(options.external_uses);
  HLOGYM_RETURN_IF_ERROR(b.ChooseOutputs());
  if (rw.defer_fusion_bodies() && !sliced && !force_tuple && b.Plan()) {
    return b.EmitPending(options);
  }
  HLOGYM_RETURN_IF_ERROR(b.CloneMembers());
  if (sliced) {
    HLOGYM_RETURN_IF_ERROR(b.BuildSlicedRoot());
  } else {
    HLOGYM_RETURN_IF_ERROR(b.BuildRoot(force_tuple));
  }
  return b.Emit(options);
}

}  // namespace

namespace {

const PendingFusionPlan& PlanOf(const Instruction* fusion) {
  return *static_cast<const PendingFusionPlan*>(fusion->pending_body());
}

// Names a body cloned with deferred names: its computation, then its
// instructions in creation order, which is the order in which an
// undeferred build asks for the same names.
void NamePendingBody(Module& module, PendingBuild& build) {
  build.fused->set_name(module.UniqueComputationName(build.fused->name()));
  build.fused->ForEachInstruction([&](Instruction* i) {
    i->set_name(module.UniqueInstructionName(i->name()));
  });
}

// Prunes the body and checks it against what the dry run planned.
absl::Status FinishPendingBody(const Instruction* fusion, PendingBuild& build) {
  HLOGYM_RETURN_IF_ERROR(PruneBody(*build.fused, build.operands));
  bool same =
      build.operands.size() == static_cast<size_t>(fusion->operand_count()) &&
      build.fused->root_instruction()->shape() == fusion->shape();
  for (size_t k = 0; same && k < build.operands.size(); ++k) {
    same = build.operands[k] == fusion->operand(static_cast<int64_t>(k));
  }
  if (!same) {
    return absl::InternalError(
        StrCat("the body built for fusion '", fusion->name(),
               "' does not match the operands and shape planned for it"));
  }
  return absl::OkStatus();
}

void AttachPendingBody(Instruction* fusion, PendingBuild& build) {
  Module* module = fusion->parent()->parent();
  Computation* fused = module->AddComputation(std::move(build.fused), false);
  fusion->set_called_computations({fused});
  fusion->release_pending_body();
}

// From this many bodies on, building them is spread over threads.
constexpr int64_t kParallelBodies = 64;

}  // namespace

absl::Status BuildPendingFusionBody(Instruction* fusion) {
  if (!fusion->has_pending_body()) return absl::OkStatus();
  FusionBuilder b(fusion, PlanOf(fusion));
  HLOGYM_ASSIGN_OR_RETURN(PendingBuild build,
                          b.ClonePending(/*parallel=*/false));
  HLOGYM_RETURN_IF_ERROR(FinishPendingBody(fusion, build));
  AttachPendingBody(fusion, build);
  return absl::OkStatus();
}

absl::Status BuildPendingFusionBodies(std::span<Instruction* const> fusions) {
  std::vector<Instruction*> todo;
  for (Instruction* f : fusions) {
    if (f->has_pending_body()) todo.push_back(f);
  }
  const auto n = static_cast<int64_t>(todo.size());
  if (n < kParallelBodies || Parallelism() == 1) {
    for (Instruction* f : todo) {
      HLOGYM_RETURN_IF_ERROR(BuildPendingFusionBody(f));
    }
    return absl::OkStatus();
  }
  // The threads only read the graph. What building writes to shared state
  // happens here, in order, so that the result does not depend on the
  // threads: inlined bodies' positions before, names and ids after.
  for (const Instruction* f : todo) {
    for (const Instruction* m : PlanOf(f).members) {
      const Computation* body =
          m->opcode() == Opcode::kFusion ? m->fused_computation() : nullptr;
      if (body != nullptr) IndexBodyPositions(*body);
    }
  }
  std::vector<PendingBuild> builds(todo.size());
  std::vector<absl::Status> status(todo.size());
  ParallelFor(n, kParallelBodies, [&](int64_t k) {
    FusionBuilder b(todo[k], PlanOf(todo[k]));
    absl::StatusOr<PendingBuild> built = b.ClonePending(/*parallel=*/true);
    if (built.ok()) {
      builds[k] = std::move(built).value();
    } else {
      status[k] = built.status();
    }
  });
  for (int64_t k = 0; k < n; ++k) {
    HLOGYM_RETURN_IF_ERROR(status[k]);
    NamePendingBody(*todo[k]->parent()->parent(), builds[k]);
  }
  ParallelFor(n, kParallelBodies, [&](int64_t k) {
    status[k] = FinishPendingBody(todo[k], builds[k]);
  });
  for (int64_t k = 0; k < n; ++k) {
    HLOGYM_RETURN_IF_ERROR(status[k]);
    AttachPendingBody(todo[k], builds[k]);
  }
  return absl::OkStatus();
}

bool HasPendingFusionBodies(const Module& module) {
  for (const auto& c : module.computations()) {
    if (c->IsFusionComputation()) continue;
    bool any = false;
    c->ForEachInstruction(
        [&](Instruction* i) { any |= i->has_pending_body(); });
    if (any) return true;
  }
  return false;
}

absl::Status BuildPendingFusionBodies(Module* module) {
  std::vector<Instruction*> pending;
  for (const auto& c : module->computations()) {
    if (c->IsFusionComputation()) continue;
    c->ForEachInstruction([&](Instruction* i) {
      if (i->has_pending_body()) pending.push_back(i);
    });
  }
  return BuildPendingFusionBodies(pending);
}

absl::StatusOr<Instruction*> FuseInstructions(
    Rewriter& rw, std::span<Instruction* const> members,
    const FuseOptions& options) {
  return Fuse(rw, members, options, /*force_tuple=*/false, /*sliced=*/false);
}

absl::StatusOr<Instruction*> FuseProducerIntoConsumer(
    Rewriter& rw, Instruction* producer, Instruction* consumer, FusionKind kind,
    ExternalUses producer_uses) {
  bool reads = false;
  for (Instruction* o : consumer->operands()) {
    if (o == producer || (o->opcode() == Opcode::kGetTupleElement &&
                          o->operand(0) == producer)) {
      reads = true;
    }
  }
  if (!reads) {
    return absl::InvalidArgumentError(StrCat(
        "'", consumer->name(), "' does not read '", producer->name(), "'"));
  }
  Instruction* members[] = {producer, consumer};
  FuseOptions options;
  options.kind = kind;
  options.external_uses = producer_uses;
  options.name = consumer->opcode() == Opcode::kFusion
                     ? std::string_view(consumer->name())
                     : std::string_view("fusion");
  return Fuse(rw, members, options, false, false);
}

absl::StatusOr<Instruction*> FuseSiblings(Rewriter& rw, Instruction* a,
                                          Instruction* b, FusionKind kind) {
  Instruction* members[] = {a, b};
  FuseOptions options;
  options.kind = kind;
  options.name = a->opcode() == Opcode::kFusion ? std::string_view(a->name())
                                                : std::string_view("fusion");
  return Fuse(rw, members, options, false, false);
}

absl::StatusOr<std::vector<Instruction*>> MergeIntoUsers(Rewriter& rw,
                                                         Instruction* producer,
                                                         FusionKind kind) {
  if (producer->shape().IsTuple()) {
    return absl::InvalidArgumentError(
        StrCat("cannot merge '", producer->name(),
               "' into its users: it has several outputs"));
  }
  if (producer->user_count() == 0) {
    return absl::InvalidArgumentError(
        StrCat("cannot merge '", producer->name(), "': it has no users"));
  }
  std::vector<Instruction*> users(producer->users().begin(),
                                  producer->users().end());
  std::vector<Instruction*> fusions;
  for (Instruction* user : users) {
    const FusionKind k =
        user->opcode() == Opcode::kFusion ? user->fusion_kind() : kind;
    HLOGYM_ASSIGN_OR_RETURN(Instruction * f,
                            FuseProducerIntoConsumer(rw, producer, user, k));
    fusions.push_back(f);
  }
  return fusions;
}

absl::StatusOr<Instruction*> FuseHorizontally(
    Rewriter& rw, std::span<Instruction* const> members, bool sliced) {
  if (members.size() < 2) {
    return absl::InvalidArgumentError(
        "horizontal fusion needs at least two instructions");
  }
  // Only direct reads are checked here; as for FuseInstructions, the
  // caller guarantees there is no longer path (WouldCreateCycle), which a
  // search over every ancestor would make quadratic on large graphs.
  for (Instruction* m : members) {
    for (Instruction* o : m->operands()) {
      for (Instruction* other : members) {
        if (o == other || (o->opcode() == Opcode::kGetTupleElement &&
                           o->operand(0) == other)) {
          return absl::InvalidArgumentError(
              StrCat("horizontal fusion members must be independent: '",
                     m->name(), "' reads '", other->name(), "'"));
        }
      }
    }
  }
  FuseOptions options;
  options.kind = sliced ? FusionKind::kInput : FusionKind::kLoop;
  options.name = "horizontal_fusion";
  return Fuse(rw, members, options, /*force_tuple=*/true, sliced);
}

bool WouldCreateCycle(std::span<Instruction* const> members,
                      const ReachabilityIndex* reachability) {
  absl::flat_hash_set<const Instruction*> set(members.begin(), members.end());
  auto is_member_value = [&](const Instruction* o) {
    return set.contains(o) || (o->opcode() == Opcode::kGetTupleElement &&
                               set.contains(o->operand(0)));
  };
  // Outside operands (not members, not their get-tuple-elements).
  std::vector<const Instruction*> outside;
  for (const Instruction* m : members) {
    for (const Instruction* o : m->operands()) {
      if (!is_member_value(o)) outside.push_back(o);
    }
    for (const Instruction* p : m->control_predecessors()) {
      if (!set.contains(p)) outside.push_back(p);
    }
  }
  if (reachability != nullptr) {
    for (const Instruction* o : outside) {
      for (const Instruction* m : members) {
        if (reachability->IsReachable(m, o)) return true;
      }
    }
    return false;
  }
  // DFS from the outside operands towards the operands, looking for a
  // member.
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<const Instruction*> stack(outside.begin(), outside.end());
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (!seen.insert(i).second) continue;
    if (set.contains(i)) return true;
    for (const Instruction* o : i->operands()) stack.push_back(o);
    for (const Instruction* p : i->control_predecessors()) stack.push_back(p);
  }
  return false;
}

}  // namespace hlogym
