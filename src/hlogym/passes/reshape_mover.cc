#include "hlogym/passes/reshape_mover.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"

namespace hlogym {
namespace {

bool IsRearrange(const Instruction* i) {
  return (i->opcode() == Opcode::kReshape && i->operand_count() == 1) ||
         (i->opcode() == Opcode::kTranspose && i->operand_count() == 1 &&
          static_cast<int64_t>(i->dimensions().size()) == i->shape().rank());
}

bool IsIdentity(const DimVector& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

DimVector Inverse(const DimVector& perm) {
  DimVector inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = i;
  return inv;
}

bool AreEquivalentRearranges(const Instruction* a, const Instruction* b) {
  if (a->opcode() != b->opcode() || !a->shape().SameDimensions(b->shape())) {
    return false;
  }
  if (a->opcode() == Opcode::kTranspose) {
    return a->dimensions() == b->dimensions();
  }
  return a->operand(0)->shape().SameDimensions(b->operand(0)->shape());
}

// Pairs (from_dim, to_dim) that a reshape from `from` to `to` leaves as
// they are: same size, at the same place in the row-major order.
std::vector<std::pair<int64_t, int64_t>> UnmodifiedDimensions(
    const DimVector& from, const DimVector& to) {
  std::vector<std::pair<int64_t, int64_t>> out;
  size_t i = 0, j = 0;
  int64_t pa = 1, pb = 1;
  while (i < from.size() && j < to.size()) {
    if (pa == pb && from[i] == to[j]) {
      out.push_back({static_cast<int64_t>(i), static_cast<int64_t>(j)});
      pa *= from[i++];
      pb *= to[j++];
    } else if (pa <= pb) {
      pa *= from[i++];
    } else {
      pb *= to[j++];
    }
  }
  return out;
}

bool HasZeroDimension(const Shape& s) {
  for (int64_t d : s.dimensions()) {
    if (d <= 0) return true;
  }
  return false;
}

class Mover {
 public:
  Mover(const ReshapeMoverOptions& o, Rewriter& rw) : o_(o), rw_(rw) {}

  bool CanTriviallyRearrange(const Instruction* inst,
                             const Instruction* rearrange) const {
    if (rearrange->opcode() == Opcode::kReshape &&
        rearrange->shape().EqualIgnoringLayout(
            rearrange->operand(0)->shape())) {
      return true;
    }
    if (rearrange->opcode() == Opcode::kTranspose &&
        IsIdentity(rearrange->dimensions())) {
      return true;
    }
    if (inst->opcode() == Opcode::kConstant) return true;
    if (inst->opcode() == Opcode::kRng && inst->user_count() == 1) return true;
    if (inst->opcode() == Opcode::kBroadcast && inst->operand_count() == 1) {
      const DimVector& dims = inst->dimensions();
      if (!std::is_sorted(dims.begin(), dims.end())) return false;
      const Shape& operand = inst->operand(0)->shape();
      if (rearrange->opcode() == Opcode::kReshape) {
        if (operand.IsScalar()) return true;
        if (!o_.reshape_of_1d_broadcast_is_cheap) return false;
        int64_t true_rank = 0;
        for (int64_t d : operand.dimensions()) true_rank += d != 1;
        if (true_rank <= 1) return true;
        if (HasZeroDimension(rearrange->shape())) return false;
        auto pairs =
            UnmodifiedDimensions(rearrange->shape().dimensions(),
                                 rearrange->operand(0)->shape().dimensions());
        for (int64_t d : dims) {
          bool kept = false;
          for (auto [f, t] : pairs) kept |= f == d;
          if (!kept) return false;
        }
        return true;
      }
      // Transpose: the broadcast dimensions, seen before the transpose.
      DimVector inv = Inverse(rearrange->dimensions());
      DimVector moved;
      for (int64_t d : dims) moved.push_back(inv[d]);
      return std::is_sorted(moved.begin(), moved.end());
    }
    return false;
  }

  const Instruction* FirstNontrivialRearrange(const Instruction* inst) const {
    for (const Instruction* op : inst->operands()) {
      if (IsRearrange(op) && !CanTriviallyRearrange(op->operand(0), op)) {
        return op;
      }
    }
    return nullptr;
  }

  bool IsCandidate(const Instruction* inst) const {
    if (!IsElementwise(inst->opcode()) || inst->operand_count() == 0 ||
        !inst->shape().IsArray() ||
        (inst->user_count() == 0 && !inst->IsRoot())) {
      return false;
    }
    const Instruction* rearrange = FirstNontrivialRearrange(inst);
    if (rearrange == nullptr) return false;
    for (const Instruction* op : inst->operands()) {
      // Scalar operands (clamp bounds) would need a broadcast: not moved.
      if (!op->shape().IsArray() ||
          !op->shape().SameDimensions(inst->shape())) {
        return false;
      }
      const bool ok = IsRearrange(op) ? AreEquivalentRearranges(op, rearrange)
                                      : CanTriviallyRearrange(op, rearrange);
      if (!ok) return false;
    }
    return true;
  }

  absl::StatusOr<Instruction*> InverseRearrange(const Instruction* rearrange,
                                                Instruction* operand) {
    if (IsRearrange(operand) && AreEquivalentRearranges(operand, rearrange)) {
      return operand->operand(0);
    }
    if (rearrange->opcode() == Opcode::kReshape) {
      const DimVector& d = rearrange->operand(0)->shape().dimensions();
      if (operand->shape().dimensions() == d) return operand;
      return MakeReshape(rw_, operand,
                         std::span<const int64_t>(d.data(), d.size()));
    }
    if (IsIdentity(rearrange->dimensions())) return operand;
    DimVector inv = Inverse(rearrange->dimensions());
    return MakeTranspose(rw_, operand,
                         std::span<const int64_t>(inv.data(), inv.size()));
  }

  absl::StatusOr<bool> Sink(Instruction* inst) {
    const Instruction* rearrange = FirstNontrivialRearrange(inst);
    std::vector<Instruction*> ops;
    for (Instruction* op : inst->operands()) {
      HLOGYM_ASSIGN_OR_RETURN(Instruction * v, InverseRearrange(rearrange, op));
      ops.push_back(v);
    }
    Shape shape = WithElementType(rearrange->operand(0)->shape(),
                                  inst->shape().element_type());
    HLOGYM_ASSIGN_OR_RETURN(Instruction * moved,
                            CloneWithNewOperands(rw_, inst, shape, ops));
    if (moved->attrs().sharding.has_value()) {
      moved->mutable_attrs()->sharding.reset();
    }
    Instruction* result = nullptr;
    if (rearrange->opcode() == Opcode::kReshape) {
      const DimVector& d = inst->shape().dimensions();
      HLOGYM_ASSIGN_OR_RETURN(
          result, MakeReshape(rw_, moved,
                              std::span<const int64_t>(d.data(), d.size())));
    } else {
      const DimVector& perm = rearrange->dimensions();
      HLOGYM_ASSIGN_OR_RETURN(
          result,
          MakeTranspose(rw_, moved,
                        std::span<const int64_t>(perm.data(), perm.size())));
    }
    return rw_.ReplaceInstruction(inst, result);
  }

  absl::StatusOr<bool> Run(Computation* c) {
    absl::flat_hash_set<const Instruction*> candidates;
    std::vector<Instruction*> order;
    for (Instruction* i : c->MakeInstructionPostOrder()) {
      if (IsCandidate(i)) {
        candidates.insert(i);
        order.push_back(i);
      }
    }
    // Drop candidates whose rearrange operands feed other instructions.
    bool removed = true;
    while (!candidates.empty() && removed) {
      removed = false;
      absl::flat_hash_set<const Instruction*> rearranges;
      for (const Instruction* i : candidates) {
        for (const Instruction* op : i->operands()) {
          if (IsRearrange(op)) rearranges.insert(op);
        }
      }
      for (const Instruction* r : rearranges) {
        bool outside = r->IsRoot();
        for (const Instruction* u : r->users()) {
          outside |= !candidates.contains(u);
        }
        if (!outside) continue;
        for (const Instruction* u : r->users()) {
          removed |= candidates.erase(u) > 0;
        }
      }
    }
    bool changed = false;
    for (Instruction* i : order) {
      if (!candidates.contains(i)) continue;
      HLOGYM_ASSIGN_OR_RETURN(bool done, Sink(i));
      changed |= done;
    }
    return changed;
  }

 private:
  const ReshapeMoverOptions& o_;
  Rewriter& rw_;
};

}  // namespace

absl::StatusOr<bool> ReshapeMover::RunWith(Module* module, Rewriter& rw) {
  Mover mover(options_, rw);
  bool changed = false;
  for (Computation* c : module->MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    HLOGYM_ASSIGN_OR_RETURN(bool done, mover.Run(c));
    changed |= done;
  }
  return changed;
}

absl::Status ReshapeMover::SetOption(std::string_view key,
                                     std::string_view value) {
  if (key != "reshape_of_1d_broadcast_is_cheap") {
    return Pass::SetOption(key, value);
  }
  HLOGYM_ASSIGN_OR_RETURN(options_.reshape_of_1d_broadcast_is_cheap,
                          ParseBoolOption(key, value));
  return absl::OkStatus();
}

std::vector<std::string> ReshapeMover::OptionNames() const {
  return {"reshape_of_1d_broadcast_is_cheap"};
}

}  // namespace hlogym
