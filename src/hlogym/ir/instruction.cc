#include "hlogym/ir/instruction.h"

#include <algorithm>
#include <iterator>

#include "hlogym/ir/computation.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

const InstructionAttrs& EmptyAttrs() {
  static const InstructionAttrs* kEmpty = new InstructionAttrs();
  return *kEmpty;
}

}  // namespace

Instruction::Instruction(Opcode opcode, const Shape& shape)
    : opcode_(opcode), shape_(shape) {}
Instruction::Instruction(Opcode opcode, Shape&& shape)
    : opcode_(opcode), shape_(std::move(shape)) {}

void Instruction::Touch() {
  if (parent_ != nullptr) ++parent_->version_;
}

bool Instruction::IsUserOf(const Instruction* producer) const {
  return std::find(operands_.begin(), operands_.end(), producer) !=
         operands_.end();
}

void Instruction::AddUser(Instruction* user) {
  Touch();
  // A user appears once even if it uses this instruction several times.
  if (std::find(users_.begin(), users_.end(), user) == users_.end()) {
    users_.push_back(user);
  }
}

void Instruction::RemoveUser(Instruction* user) {
  Touch();
  // From the back: the user removed is most often the one added last (a
  // dry-mode candidate detaching itself from an operand read by thousands).
  auto it = std::find(users_.rbegin(), users_.rend(), user);
  if (it != users_.rend()) users_.erase(std::next(it).base());
}

void Instruction::AppendOperand(Instruction* operand) {
  Touch();
  operand->Touch();
  // Edges are mirrored: this is already among the operand's users exactly
  // when the operand is already among this instruction's operands, so the
  // scan of a long user list is not needed.
  const bool repeated =
      std::find(operands_.begin(), operands_.end(), operand) != operands_.end();
  operands_.push_back(operand);
  if (!repeated && (!detached_ || operand->detached_)) {
    operand->users_.push_back(this);
  }
}

void Instruction::Detach() {
  Touch();
  if (detached_) return;
  detached_ = true;
  for (Instruction* op : operands_) {
    if (!op->detached_) op->RemoveUser(this);
  }
}

void Instruction::Attach() {
  Touch();
  if (!detached_) return;
  detached_ = false;
  for (Instruction* op : operands_) op->AddUser(this);
}

absl::Status Instruction::ReplaceOperandWith(int64_t i,
                                             Instruction* new_operand) {
  if (i < 0 || i >= operand_count()) {
    return absl::OutOfRangeError(
        StrCat("operand index ", i, " out of range for '", name_, "'"));
  }
  Instruction* old = operands_[i];
  if (old == new_operand) return absl::OkStatus();
  Touch();
  operands_[i] = new_operand;
  if (!IsUserOf(old)) old->RemoveUser(this);
  if (!detached_ || new_operand->detached_) new_operand->AddUser(this);
  return absl::OkStatus();
}

absl::Status Instruction::ReplaceUseWith(Instruction* user,
                                         Instruction* new_producer) {
  if (!user->IsUserOf(this)) {
    return absl::InvalidArgumentError(
        StrCat("'", user->name(), "' is not a user of '", name_, "'"));
  }
  user->Touch();
  for (auto& op : user->operands_) {
    if (op == this) op = new_producer;
  }
  RemoveUser(user);
  if (!user->detached_ || new_producer->detached_) new_producer->AddUser(user);
  return absl::OkStatus();
}

absl::Status Instruction::ReplaceAllUsesWith(Instruction* new_producer) {
  if (new_producer == this) return absl::OkStatus();
  if (!shape_.Compatible(new_producer->shape())) {
    return absl::InvalidArgumentError(
        StrCat("cannot replace '", name_, "' (", shape_.ToString(), ") with '",
               new_producer->name(), "' (", new_producer->shape().ToString(),
               "): incompatible shapes"));
  }
  Touch();
  InstructionVector users = users_;
  for (Instruction* u : users) {
    if (u == new_producer) continue;  // do not create a self-loop
    u->Touch();
    for (auto& op : u->operands_) {
      if (op == this) op = new_producer;
    }
    RemoveUser(u);
    if (!u->detached_ || new_producer->detached_) new_producer->AddUser(u);
  }
  if (parent_ && parent_->root_instruction() == this) {
    parent_->set_root_instruction(new_producer);
  }
  return absl::OkStatus();
}

absl::Status Instruction::RemoveOperandAt(int64_t i) {
  if (i < 0 || i >= operand_count()) {
    return absl::OutOfRangeError(
        StrCat("operand index ", i, " out of range for '", name_, "'"));
  }
  Instruction* old = operands_[i];
  Touch();
  operands_.erase(operands_.begin() + i);
  if (!IsUserOf(old)) old->RemoveUser(this);
  return absl::OkStatus();
}

void Instruction::DetachOperands() {
  Touch();
  for (Instruction* op : operands_) op->RemoveUser(this);
  operands_.clear();
}

absl::Status Instruction::AddControlDependencyTo(Instruction* successor) {
  if (successor->parent_ != parent_) {
    return absl::InvalidArgumentError(
        StrCat("control dependency between '", name_, "' and '",
               successor->name(), "' crosses computations"));
  }
  Touch();
  successor->Touch();
  const auto& succs = control_successors();
  if (std::find(succs.begin(), succs.end(), successor) == succs.end()) {
    control().successors.push_back(successor);
    successor->control().predecessors.push_back(this);
  }
  return absl::OkStatus();
}

absl::Status Instruction::RemoveControlDependencyTo(Instruction* successor) {
  if (!control_) {
    return absl::NotFoundError(StrCat("no control edge from '", name_, "' to '",
                                      successor->name(), "'"));
  }
  auto& succs = control_->successors;
  auto it = std::find(succs.begin(), succs.end(), successor);
  if (it == succs.end()) {
    return absl::NotFoundError(StrCat("no control edge from '", name_, "' to '",
                                      successor->name(), "'"));
  }
  Touch();
  successor->Touch();
  succs.erase(it);
  auto& preds = successor->control().predecessors;
  preds.erase(std::find(preds.begin(), preds.end(), this));
  return absl::OkStatus();
}

void Instruction::DropAllControlDeps() {
  Touch();
  if (!control_) return;
  for (Instruction* p : control_->predecessors) {
    auto& s = p->control().successors;
    s.erase(std::find(s.begin(), s.end(), this));
  }
  for (Instruction* s : control_->successors) {
    auto& p = s->control().predecessors;
    p.erase(std::find(p.begin(), p.end(), this));
  }
  control_.reset();
}

const std::vector<Instruction*>& Instruction::EmptyEdges() {
  static const std::vector<Instruction*>* kEmpty =
      new std::vector<Instruction*>();
  return *kEmpty;
}

void Instruction::ReplaceCalledComputation(Computation* old_c,
                                           Computation* new_c) {
  Touch();
  for (auto& c : called_computations_) {
    if (c == old_c) c = new_c;
  }
}

Computation* Instruction::to_apply() const {
  return called_computations_.empty() ? nullptr : called_computations_[0];
}
Computation* Instruction::while_condition() const {
  return opcode_ == Opcode::kWhile && called_computations_.size() == 2
             ? called_computations_[0]
             : nullptr;
}
Computation* Instruction::while_body() const {
  return opcode_ == Opcode::kWhile && called_computations_.size() == 2
             ? called_computations_[1]
             : nullptr;
}

int64_t PendingFusionBody::SlotOf(const Instruction& inst) {
  return inst.slot_;
}

Computation* Instruction::fused_computation() const {
  return opcode_ == Opcode::kFusion && !called_computations_.empty()
             ? called_computations_[0]
             : nullptr;
}

const Literal& Instruction::literal() const {
  static const Literal* kEmpty = new Literal();
  return literal_ ? *literal_ : *kEmpty;
}

void Instruction::set_literal(Literal literal) {
  TouchHashed();
  literal_ = std::make_shared<const Literal>(std::move(literal));
}

const OpMetadata& Instruction::metadata() const {
  static const OpMetadata* kEmpty = new OpMetadata();
  return metadata_ ? *metadata_ : *kEmpty;
}

void Instruction::set_metadata(OpMetadata m) {
  Touch();
  if (m.empty()) {
    metadata_.reset();
  } else {
    metadata_ = std::make_shared<const OpMetadata>(std::move(m));
  }
}

const std::string& Instruction::backend_config() const {
  static const std::string* kEmpty = new std::string();
  return backend_config_ ? *backend_config_ : *kEmpty;
}

void Instruction::set_backend_config(std::string config) {
  TouchHashed();
  if (config.empty()) {
    backend_config_.reset();
  } else {
    backend_config_ = std::make_shared<const std::string>(std::move(config));
  }
}

const FrontendAttributes& Instruction::frontend_attributes() const {
  static const FrontendAttributes* kEmpty = new FrontendAttributes();
  return frontend_attributes_ ? *frontend_attributes_ : *kEmpty;
}

void Instruction::set_frontend_attributes(FrontendAttributes attrs) {
  TouchHashed();
  if (attrs.empty()) {
    frontend_attributes_.reset();
    return;
  }
  std::stable_sort(attrs.begin(), attrs.end(),
                   [](const auto& a, const auto& b) { return a.key < b.key; });
  frontend_attributes_ =
      std::make_shared<const FrontendAttributes>(std::move(attrs));
}

const InstructionAttrs& Instruction::attrs() const {
  return attrs_ ? *attrs_ : EmptyAttrs();
}

void Instruction::set_attrs(InstructionAttrs attrs) {
  TouchHashed();
  attrs_ = std::make_shared<const InstructionAttrs>(std::move(attrs));
}

InstructionAttrs* Instruction::mutable_attrs() {
  TouchHashed();
  if (!attrs_) {
    attrs_ = std::make_shared<InstructionAttrs>();
  } else if (attrs_.use_count() > 1) {
    attrs_ = std::make_shared<InstructionAttrs>(*attrs_);
  }
  // The block is only shared read-only; this instance is now exclusive.
  return const_cast<InstructionAttrs*>(attrs_.get());
}

bool Instruction::HasSideEffect() const {
  switch (opcode_) {
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState:
      return true;
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllToAll:
    case Opcode::kReduceScatter:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kRaggedAllToAll:
      return attrs().constrain_layout;
    case Opcode::kCustomCall:
      return attrs().custom_call_has_side_effect;
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return false;
    default:
      return false;
  }
}

bool Instruction::IsRoot() const {
  return parent_ != nullptr && parent_->root_instruction() == this;
}

std::unique_ptr<Instruction> Instruction::CloneWithNewOperands(
    const std::vector<Instruction*>& new_operands) const {
  auto c = std::make_unique<Instruction>(opcode_, shape_);
  c->direction_ = direction_;
  c->comparison_type_ = comparison_type_;
  c->fusion_kind_ = fusion_kind_;
  c->has_dimensions_ = has_dimensions_;
  c->source_line_ = source_line_;
  c->source_column_ = source_column_;
  c->int_attr_ = int_attr_;
  c->name_ = name_;
  c->called_computations_ = called_computations_;
  c->dimensions_ = dimensions_;
  c->literal_ = literal_;
  c->metadata_ = metadata_;
  c->attrs_ = attrs_;
  c->backend_config_ = backend_config_;
  c->frontend_attributes_ = frontend_attributes_;
  c->local_hash_memo_ = local_hash_memo_;  // the same hashed fields
  c->operands_.reserve(new_operands.size());
  for (Instruction* op : new_operands) c->AppendOperand(op);
  return c;
}

}  // namespace hlogym
