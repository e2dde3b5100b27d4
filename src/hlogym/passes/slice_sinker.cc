#include "hlogym/passes/slice_sinker.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/builders.h"

namespace hlogym {
namespace {

bool IsSlice(const Instruction* i) {
  return i->opcode() == Opcode::kSlice && i->operand_count() == 1 &&
         i->operand(0)->shape().IsArray() &&
         static_cast<int64_t>(i->attrs().slice.size()) ==
             i->operand(0)->shape().rank();
}

bool SameSliceConfiguration(const Instruction* a, const Instruction* b) {
  return a->attrs().slice == b->attrs().slice;
}

// Every operand is a slice at the same offsets of sources of equal
// dimensions.
bool IsOperationOnSimilarSlices(const Instruction* inst) {
  const Instruction* s0 = inst->operand(0);
  for (const Instruction* s : inst->operands()) {
    if (!IsSlice(s) ||
        !s->operand(0)->shape().SameDimensions(s0->operand(0)->shape()) ||
        !SameSliceConfiguration(s0, s)) {
      return false;
    }
  }
  return true;
}

bool SameOp(const Instruction* a, const Instruction* b) {
  if (a->opcode() != b->opcode() || a->operand_count() != b->operand_count() ||
      a->shape().element_type() != b->shape().element_type()) {
    return false;
  }
  if (a->opcode() == Opcode::kCompare) {
    return a->comparison_direction() == b->comparison_direction() &&
           a->comparison_type() == b->comparison_type();
  }
  if (a->opcode() == Opcode::kReducePrecision) {
    return a->attrs().exponent_bits == b->attrs().exponent_bits &&
           a->attrs().mantissa_bits == b->attrs().mantissa_bits;
  }
  return true;
}

// `candidate` is `op` on other slices: same opcode and result type, operand
// i sliced from op's source i, all at the same offsets.
bool IsSimilarOperation(const Instruction* op, const Instruction* candidate,
                        const absl::flat_hash_set<int64_t>& done) {
  if (done.contains(candidate->unique_id()) || candidate->user_count() == 0 ||
      !SameOp(op, candidate)) {
    return false;
  }
  const Instruction* s0 = candidate->operand(0);
  for (int64_t i = 0; i < candidate->operand_count(); ++i) {
    const Instruction* s = candidate->operand(i);
    if (!IsSlice(s) || s->operand(0) != op->operand(i)->operand(0) ||
        !SameSliceConfiguration(s0, s)) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> SliceSinker::RunWith(Module* module, Rewriter& rw) {
  // Ops already grouped: in dry mode they keep their users, so the group
  // would otherwise be found again from each member.
  absl::flat_hash_set<int64_t> done;
  return VisitInstructionsPostOrder(
      module, rw, [&](Instruction* inst) -> absl::StatusOr<bool> {
        if (!IsElementwise(inst->opcode()) || inst->operand_count() == 0 ||
            inst->user_count() == 0 || done.contains(inst->unique_id()) ||
            !inst->shape().IsArray() || !IsOperationOnSimilarSlices(inst)) {
          return false;
        }
        std::vector<Instruction*> group;
        const Instruction* source0 = inst->operand(0)->operand(0);
        for (const Instruction* slice : source0->users()) {
          if (!IsSlice(slice)) continue;
          for (Instruction* user : slice->users()) {
            if (IsSimilarOperation(inst, user, done) &&
                std::find(group.begin(), group.end(), user) == group.end()) {
              group.push_back(user);
            }
          }
        }
        int64_t covered = 0;
        for (const Instruction* g : group) covered += g->shape().ElementsIn();
        if (group.empty() || covered < source0->shape().ElementsIn()) {
          return false;
        }
        std::vector<Instruction*> sources;
        for (Instruction* s : inst->operands())
          sources.push_back(s->operand(0));
        Shape shape =
            WithElementType(sources[0]->shape(), inst->shape().element_type());
        HLOGYM_ASSIGN_OR_RETURN(Instruction * whole,
                                CloneWithNewOperands(rw, inst, shape, sources));
        // A sharding of the slice's shape does not fit the whole op.
        if (whole->attrs().sharding.has_value()) {
          whole->mutable_attrs()->sharding.reset();
        }
        bool changed = false;
        for (Instruction* g : group) {
          done.insert(g->unique_id());
          Instruction* ops[] = {whole};
          HLOGYM_ASSIGN_OR_RETURN(
              Instruction * part,
              CloneWithNewOperands(rw, g->operand(0), g->shape(), ops));
          HLOGYM_ASSIGN_OR_RETURN(bool replaced,
                                  rw.ReplaceInstruction(g, part));
          changed |= replaced;
        }
        return changed;
      });
}

}  // namespace hlogym
