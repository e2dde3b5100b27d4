#include "hlogym/ir/computation.h"

#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "hlogym/ir/module.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {

Computation::Computation(std::string name) : name_(std::move(name)) {}

Computation::~Computation() {
  // Instructions refer to each other by raw pointer; nothing to unlink.
}

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> inst) {
  ++version_;
  Instruction* raw = inst.get();
  raw->parent_ = this;
  raw->slot_ = static_cast<int32_t>(slots_.size());
  if (parent_ != nullptr && raw->unique_id_ < 0) {
    raw->unique_id_ = parent_->NextUniqueId();
  }
  if (raw->opcode() == Opcode::kParameter) {
    int64_t n = raw->parameter_number();
    if (n >= 0 && n < (int64_t{1} << 24)) {
      if (static_cast<int64_t>(parameters_.size()) <= n) {
        parameters_.resize(n + 1, nullptr);
      }
      parameters_[n] = raw;
    }
  }
  slots_.push_back(std::move(inst));
  ++live_count_;
  return raw;
}

Instruction* Computation::AddDetachedInstruction(
    std::unique_ptr<Instruction> inst) {
  ++version_;
  Instruction* raw = inst.get();
  raw->parent_ = this;
  raw->slot_ = static_cast<int32_t>(detached_.size());  // index in detached_
  if (parent_ != nullptr && raw->unique_id_ < 0) {
    raw->unique_id_ = parent_->NextUniqueId();
  }
  raw->Detach();
  detached_.push_back(std::move(inst));
  return raw;
}

absl::Status Computation::AttachInstruction(Instruction* inst) {
  const size_t i = static_cast<size_t>(inst->slot_);
  if (inst->parent_ == this && inst->is_detached() && i < detached_.size() &&
      detached_[i].get() == inst) {
    std::unique_ptr<Instruction> owned = std::move(detached_[i]);
    if (i + 1 != detached_.size()) {
      detached_[i] = std::move(detached_.back());
      detached_[i]->slot_ = static_cast<int32_t>(i);
    }
    detached_.pop_back();
    ++version_;
    owned->Attach();
    AddInstruction(std::move(owned));
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(StrCat(
      "'", inst->name(), "' is not a detached instruction of '", name_, "'"));
}

void Computation::AttachInOrder(
    std::vector<std::unique_ptr<Instruction>> kept) {
  // Usually in order already (held in the order they were made).
  auto by_id = [](const std::unique_ptr<Instruction>& a,
                  const std::unique_ptr<Instruction>& b) {
    return a->unique_id() < b->unique_id();
  };
  if (!std::is_sorted(kept.begin(), kept.end(), by_id)) {
    std::sort(kept.begin(), kept.end(), by_id);
  }
  slots_.reserve(slots_.size() + kept.size());
  for (auto& k : kept) {
    k->Attach();
    AddInstruction(std::move(k));
  }
}

int64_t Computation::DiscardDetachedInstructions() {
  ++version_;
  // Unlink first: detached instructions may use each other.
  for (auto& d : detached_) d->DetachOperands();
  int64_t n = static_cast<int64_t>(detached_.size());
  detached_.clear();
  return n;
}

std::vector<Instruction*> Computation::instructions() const {
  std::vector<Instruction*> out;
  out.reserve(live_count_);
  for (const auto& p : slots_) {
    if (p) out.push_back(p.get());
  }
  return out;
}

Instruction* Computation::FindInstruction(std::string_view name) const {
  for (const auto& p : slots_) {
    if (p && p->name() == name) return p.get();
  }
  return nullptr;
}

absl::Status Computation::RemoveInstruction(Instruction* inst) {
  if (inst->parent_ != this) {
    return absl::InvalidArgumentError(
        StrCat("'", inst->name(), "' is not in computation '", name_, "'"));
  }
  if (inst->is_detached()) {
    return absl::FailedPreconditionError(
        StrCat("cannot remove detached '", inst->name(), "'"));
  }
  if (inst->user_count() != 0) {
    return absl::FailedPreconditionError(
        StrCat("cannot remove '", inst->name(), "': it still has ",
               inst->user_count(), " user(s)"));
  }
  if (inst == root_) {
    return absl::FailedPreconditionError(
        StrCat("cannot remove root '", inst->name(), "'"));
  }
  if (inst->opcode() == Opcode::kParameter) {
    return absl::FailedPreconditionError(
        StrCat("cannot remove parameter '", inst->name(), "'"));
  }
  ++version_;
  inst->DetachOperands();
  inst->DropAllControlDeps();
  slots_[inst->slot_].reset();
  --live_count_;
  CompactIfSparse();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Instruction>> Computation::ReleaseInstruction(
    Instruction* inst) {
  if (inst->parent_ != this || inst->is_detached() ||
      inst->opcode() == Opcode::kParameter) {
    return absl::InvalidArgumentError(
        StrCat("cannot release '", inst->name(), "' from computation '", name_,
               "': it is not one of its non-parameter instructions"));
  }
  ++version_;
  std::unique_ptr<Instruction> owned = std::move(slots_[inst->slot_]);
  owned->parent_ = nullptr;
  owned->slot_ = -1;
  --live_count_;
  if (inst == root_) root_ = nullptr;
  CompactIfSparse();
  return owned;
}

absl::Status Computation::RemoveInstructionAndUnusedOperands(
    Instruction* inst) {
  InstructionVector operands = inst->operands();
  if (absl::Status s = RemoveInstruction(inst); !s.ok()) return s;
  for (Instruction* op : operands) {
    if (op->parent_ == this && op->user_count() == 0 && op != root_ &&
        op->opcode() != Opcode::kParameter && !op->HasSideEffect() &&
        op->control_successors().empty()) {
      if (absl::Status s = RemoveInstructionAndUnusedOperands(op); !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Computation::RemoveUnusedParameter(int64_t number) {
  if (number < 0 || number >= num_parameters() ||
      parameters_[number] == nullptr) {
    return absl::OutOfRangeError(
        StrCat("computation '", name_, "' has no parameter ", number));
  }
  Instruction* p = parameters_[number];
  if (p->user_count() != 0 || p == root_) {
    return absl::FailedPreconditionError(
        StrCat("parameter ", number, " of '", name_, "' is still used"));
  }
  ++version_;
  p->DropAllControlDeps();
  slots_[p->slot_].reset();
  --live_count_;
  parameters_.erase(parameters_.begin() + number);
  for (size_t n = static_cast<size_t>(number); n < parameters_.size(); ++n) {
    if (parameters_[n] != nullptr) {
      parameters_[n]->set_int_attr(static_cast<int64_t>(n));
    }
  }
  CompactIfSparse();
  return absl::OkStatus();
}

int64_t Computation::RemoveDeadInstructions() {
  std::vector<Instruction*> stack;
  for (const auto& p : slots_) {
    if (!p) continue;
    p->scratch = 0;
    if (p.get() == root_ || p->opcode() == Opcode::kParameter ||
        p->HasSideEffect()) {
      stack.push_back(p.get());
    }
  }
  for (Instruction* s : stack) s->scratch = 1;
  while (!stack.empty()) {
    Instruction* i = stack.back();
    stack.pop_back();
    for (Instruction* op : i->operands()) {
      if (op->scratch == 0) {
        op->scratch = 1;
        stack.push_back(op);
      }
    }
    for (Instruction* op : i->control_predecessors()) {
      if (op->scratch == 0) {
        op->scratch = 1;
        stack.push_back(op);
      }
    }
  }
  int64_t removed = 0;
  for (auto& p : slots_) {
    if (p && p->scratch == 0) {
      p->DetachOperands();
      p->DropAllControlDeps();
    }
  }
  for (auto& p : slots_) {
    if (p && p->scratch == 0) {
      p->users_.clear();
      p.reset();
      --live_count_;
      ++removed;
    }
  }
  CompactIfSparse();
  return removed;
}

void Computation::CompactIfSparse() {
  if (slots_.size() < 64 ||
      live_count_ * 2 > static_cast<int64_t>(slots_.size())) {
    return;
  }
  ++version_;
  std::vector<std::unique_ptr<Instruction>> compact;
  compact.reserve(live_count_);
  for (auto& p : slots_) {
    if (p) {
      p->slot_ = static_cast<int32_t>(compact.size());
      compact.push_back(std::move(p));
    }
  }
  slots_ = std::move(compact);
}

std::vector<Instruction*> Computation::MakeInstructionPostOrder() const {
  return InstructionPostOrder();
}

const std::vector<Instruction*>& Computation::InstructionPostOrder() const {
  if (post_order_memo_.version == version_) return post_order_memo_.order;
  std::vector<Instruction*>& order = post_order_memo_.order;
  order.clear();
  order.reserve(live_count_);
  for (const auto& p : slots_) {
    if (p) p->scratch = 0;  // 0 new, 1 on stack, 2 done
  }
  // Inline for the small graphs rollouts walk again after every change.
  absl::InlinedVector<std::pair<Instruction*, size_t>, 32> stack;
  auto visit_root = [&](Instruction* start) {
    if (start->scratch != 0) return;
    start->scratch = 1;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      const size_t nops = inst->operands().size();
      const size_t total = nops + inst->control_predecessors().size();
      if (next < total) {
        Instruction* dep = next < nops
                               ? inst->operands()[next]
                               : inst->control_predecessors()[next - nops];
        ++next;
        if (dep->scratch == 0 && dep->parent_ == this) {
          dep->scratch = 1;
          stack.emplace_back(dep, 0);
        }
        continue;
      }
      inst->scratch = 2;
      order.push_back(inst);
      stack.pop_back();
    }
  };
  for (const auto& p : slots_) {
    if (p && p.get() != root_) visit_root(p.get());
  }
  if (root_) visit_root(root_);
  post_order_memo_.version = version_;
  return order;
}

std::unique_ptr<Computation> Computation::Clone() const {
  auto c = std::make_unique<Computation>(name_);
  c->execution_thread_ = execution_thread_;
  c->is_fusion_computation_ = is_fusion_computation_;
  c->is_async_wrapper_ = is_async_wrapper_;
  c->slots_.reserve(live_count_);
  std::vector<Instruction*> fresh;
  fresh.reserve(slots_.size());
  for (const auto& p : slots_) {
    if (!p) {
      fresh.push_back(nullptr);
      continue;
    }
    auto n = p->CloneWithNewOperands({});
    n->unique_id_ = p->unique_id_;
    fresh.push_back(c->AddInstruction(std::move(n)));
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Instruction* old = slots_[i].get();
    if (!old) continue;
    Instruction* n = fresh[i];
    // Users are rebuilt from operand edges (in slot order) rather than
    // mapped: the old users are far away in memory, the old operands are
    // usually near. A user appears once even if it uses an operand twice;
    // its repeated uses are consecutive here, so checking the back suffices.
    n->operands_.resize(old->operands_.size());
    for (size_t k = 0; k < old->operands_.size(); ++k) {
      Instruction* op = fresh[old->operands_[k]->slot_];
      n->operands_[k] = op;
      if (op->users_.empty() || op->users_.back() != n) op->users_.push_back(n);
    }
    if (old->pending_body_) {
      n->pending_body_ = old->pending_body_->CloneWith(fresh);
    }
    if (old->control_) {
      auto& edges = n->control();
      for (Instruction* x : old->control_->successors) {
        edges.successors.push_back(fresh[x->slot_]);
      }
      for (Instruction* x : old->control_->predecessors) {
        edges.predecessors.push_back(fresh[x->slot_]);
      }
    }
  }
  if (root_) c->root_ = fresh[root_->slot_];
  // Removed slots were skipped; reindex to match the compact vector.
  c->CompactIfSparse();
  // The same content: a valid hash memo holds for the clone too.
  if (hash_memo_.version == version_) {
    c->hash_memo_ = hash_memo_;
    c->hash_memo_.version = c->version_;
  }
  // The callees are unchanged by cloning their caller.
  if (pass_memo_.version == version_) {
    c->pass_memo_ = pass_memo_;
    c->pass_memo_.version = c->version_;
  }
  return c;
}

bool Computation::PassMemoValid() const {
  if (pass_memo_.version != version_) return false;
  // In recorded order: each callee is read only after a caller of it was
  // found unchanged (so still calling it).
  for (const auto& [callee, version] : pass_memo_.callees) {
    if (callee->version_ != version) return false;
  }
  return true;
}

void Computation::RecordPassMemo(uint32_t pass_bit) const {
  if (PassMemoValid()) {
    pass_memo_.passes |= pass_bit;
    return;
  }
  pass_memo_.version = version_;
  pass_memo_.passes = pass_bit;
  auto& callees = pass_memo_.callees;
  callees.clear();
  // Breadth-first: each callee lands after the computation it was found
  // in. Most computations (fused bodies) call nothing, and most others
  // few, so a set is only built for long lists.
  constexpr size_t kLinearSeen = 32;
  absl::flat_hash_set<const Computation*> seen;
  auto add = [&](const Computation* callee) {
    if (callee == nullptr || callee == this) return;
    if (callees.size() < kLinearSeen) {
      for (const auto& [c, v] : callees) {
        if (c == callee) return;
      }
    } else {
      if (seen.empty()) {
        for (const auto& [c, v] : callees) seen.insert(c);
      }
      if (!seen.insert(callee).second) return;
    }
    callees.push_back({callee, callee->version_});
  };
  ForEachInstruction([&](const Instruction* i) {
    for (const Computation* callee : i->called_computations()) add(callee);
  });
  for (size_t k = 0; k < callees.size(); ++k) {
    callees[k].first->ForEachInstruction([&](const Instruction* i) {
      for (const Computation* callee : i->called_computations()) add(callee);
    });
  }
}

ReachabilityIndex::ReachabilityIndex(const Computation& computation)
    : computation_(&computation) {
  const std::vector<Instruction*>& po = computation.InstructionPostOrder();
  int64_t max_slot = 0;
  for (const Instruction* i : po)
    max_slot = std::max<int64_t>(max_slot, i->slot_);
  position_by_slot_.assign(max_slot + 1, -1);
  for (size_t i = 0; i < po.size(); ++i) {
    position_by_slot_[po[i]->slot_] = static_cast<int32_t>(i);
  }
  // low_[p]: the smallest position among the instruction at p and
  // everything it depends on. If `to` depends on `from`, all `from`
  // depends on `to` does too, so low(to) <= low(from): most unrelated
  // pairs fail that test at once, and searches skip every instruction that
  // fails it (on large models most of a position window does).
  // The dependencies' positions are kept as one flat array, so searches
  // walk plain integers instead of the instructions' edge lists.
  low_.resize(po.size());
  edge_start_.resize(po.size() + 1);
  edges_.reserve(po.size() * 2);
  for (size_t i = 0; i < po.size(); ++i) {
    edge_start_[i] = static_cast<int32_t>(edges_.size());
    int64_t low = static_cast<int64_t>(i);
    auto take = [&](const Instruction* dep) {
      const int64_t p = Position(dep);  // -1 outside this computation
      if (p < 0) return;
      low = std::min<int64_t>(low, low_[p]);
      edges_.push_back(static_cast<int32_t>(p));
    };
    for (const Instruction* op : po[i]->operands()) take(op);
    for (const Instruction* op : po[i]->control_predecessors()) take(op);
    low_[i] = static_cast<int32_t>(low);
  }
  edge_start_[po.size()] = static_cast<int32_t>(edges_.size());
  visited_.assign(po.size(), 0);
}

int64_t ReachabilityIndex::Position(const Instruction* inst) const {
  if (inst->parent() != computation_ ||
      inst->slot_ >= static_cast<int64_t>(position_by_slot_.size())) {
    return -1;
  }
  return position_by_slot_[inst->slot_];
}

bool ReachabilityIndex::IsReachable(const Instruction* from,
                                    const Instruction* to) const {
  const Instruction* one[] = {to};
  return ReachesAny(from, one);
}

bool ReachabilityIndex::ReachesAny(
    const Instruction* from, std::span<const Instruction* const> to) const {
  const int64_t lo = Position(from);
  if (lo < 0) {
    for (const Instruction* t : to) {
      if (t == from) return true;
    }
    return false;
  }
  if (++generation_ == 0) {
    std::fill(visited_.begin(), visited_.end(), 0);
    generation_ = 1;
  }
  const int64_t from_low = low_[lo];
  std::vector<int32_t>& stack = stack_;
  stack.clear();
  for (const Instruction* t : to) {
    if (t == from) return true;
    const int64_t hi = Position(t);
    // Operands come first: a target before `from` cannot depend on it.
    if (hi < lo || low_[hi] > from_low || visited_[hi] == generation_) {
      continue;
    }
    visited_[hi] = generation_;
    stack.push_back(static_cast<int32_t>(hi));
  }
  while (!stack.empty()) {
    const int32_t i = stack.back();
    stack.pop_back();
    ++work_;
    for (int32_t e = edge_start_[i]; e < edge_start_[i + 1]; ++e) {
      const int32_t p = edges_[e];
      if (p == lo) return true;
      if (p < lo || low_[p] > from_low || visited_[p] == generation_) {
        continue;
      }
      visited_[p] = generation_;
      stack.push_back(p);
    }
  }
  return false;
}

int64_t ReachabilityIndex::AmongCost(
    std::span<const Instruction* const> nodes) const {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
  for (const Instruction* n : nodes) {
    const int64_t p = Position(n);
    if (p < 0) continue;
    lo = std::min(lo, p);
    hi = std::max(hi, p);
  }
  if (hi < 0) return 0;
  const int64_t words = (static_cast<int64_t>(nodes.size()) + 63) / 64;
  return (hi - lo + 1) * words;
}

ReachabilityIndex::Matrix ReachabilityIndex::Among(
    std::span<const Instruction* const> nodes) const {
  Matrix m;
  const size_t words = (nodes.size() + 63) / 64;
  m.words_ = words;
  m.rows_.assign(nodes.size() * words, 0);
  // Members by position (several members may be one instruction).
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
  std::vector<std::pair<int64_t, size_t>> members;
  members.reserve(nodes.size());
  for (size_t k = 0; k < nodes.size(); ++k) {
    const int64_t p = Position(nodes[k]);
    if (p < 0) {
      // Not indexed: it reaches only itself.
      m.rows_[k * words + k / 64] |= uint64_t{1} << (k % 64);
      continue;
    }
    members.push_back({p, k});
    lo = std::min(lo, p);
    hi = std::max(hi, p);
  }
  if (members.empty()) return m;
  std::sort(members.begin(), members.end());
  // bits[p - lo]: the members the instruction at p depends on (itself
  // included). Positions are topological, so one forward sweep fills them;
  // a row stays empty until a member is reached, and empty rows are
  // skipped.
  const int64_t span = hi - lo + 1;
  std::vector<uint64_t> bits(static_cast<size_t>(span) * words, 0);
  std::vector<char> nonempty(span, 0);
  size_t next = 0;
  for (int64_t p = lo; p <= hi; ++p) {
    uint64_t* row = bits.data() + (p - lo) * words;
    bool any = false;
    for (int32_t e = edge_start_[p]; e < edge_start_[p + 1]; ++e) {
      const int64_t q = edges_[e];
      if (q < lo || q >= p || !nonempty[q - lo]) continue;
      const uint64_t* src = bits.data() + (q - lo) * words;
      for (size_t w = 0; w < words; ++w) row[w] |= src[w];
      any = true;
    }
    for (; next < members.size() && members[next].first == p; ++next) {
      const size_t k = members[next].second;
      row[k / 64] |= uint64_t{1} << (k % 64);
      any = true;
    }
    nonempty[p - lo] = any;
  }
  for (const auto& [p, k] : members) {
    std::copy_n(bits.data() + (p - lo) * words, words,
                m.rows_.data() + k * words);
  }
  return m;
}

}  // namespace hlogym
