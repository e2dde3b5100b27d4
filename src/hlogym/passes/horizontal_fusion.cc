#include "hlogym/passes/horizontal_fusion.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/cost/cost_analysis.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/fusion_ops.h"
#include "hlogym/passes/gpu_fusible.h"

namespace hlogym {
namespace {

// Plain (loop) mode: each thread may handle several elements, so larger
// outputs and kernels still profit.
constexpr int64_t kLoopElementsThreshold = 8192 * 8192;
constexpr int64_t kLoopInstructionThreshold = 128;
// Sliced mode (and concatenate input fusions): one element per thread.
constexpr int64_t kSlicedElementsThreshold = 128 * 2048;
constexpr int64_t kSlicedInstructionThreshold = 30;
constexpr int64_t kMaxFusionBatch = 32;
constexpr int64_t kMaxElementwiseLoopBatch = 64;
// Kernel parameter space (bytes) and bytes per pointer parameter.
constexpr int64_t kMaxCudaParamSize = 4000;
constexpr int64_t kParamBytes = 8;

bool HasControlEdges(const Instruction& inst) {
  return !inst.control_predecessors().empty() ||
         !inst.control_successors().empty();
}

bool IsFusion(const Instruction& inst) {
  return inst.opcode() == Opcode::kFusion &&
         inst.fused_computation() != nullptr &&
         inst.fused_computation()->root_instruction() != nullptr;
}

bool IsLoopFusion(const Instruction& inst) {
  return IsFusion(inst) && inst.fusion_kind() == FusionKind::kLoop;
}

bool IsConcatenateInputFusion(const Instruction& inst) {
  return IsFusion(inst) && inst.fusion_kind() == FusionKind::kInput &&
         inst.fused_computation()->root_instruction()->opcode() ==
             Opcode::kConcatenate;
}

// XLA's IsElementwise for unfused instructions: elementwise opcodes
// (copy included), width-keeping bitcast-converts, maps over all
// dimensions in order.
bool IsElementwiseOp(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kCopy:
      return true;
    case Opcode::kBitcastConvert:
      return inst.operand_count() == 1 && inst.shape().IsArray() &&
             inst.operand(0)->shape().IsArray() &&
             BitWidth(inst.shape().element_type()) ==
                 BitWidth(inst.operand(0)->shape().element_type());
    case Opcode::kMap: {
      if (!inst.shape().IsArray()) return false;
      const DimVector& d = inst.dimensions();
      for (size_t i = 0; i < d.size(); ++i) {
        if (d[i] != static_cast<int64_t>(i)) return false;
      }
      return d.empty() || static_cast<int64_t>(d.size()) == inst.shape().rank();
    }
    default:
      return IsElementwise(inst.opcode());
  }
}

int64_t InstructionCount(const Instruction& inst) {
  return IsFusion(inst) ? inst.fused_computation()->instruction_count() : 1;
}

// The producer behind an operand, through get-tuple-elements.
Instruction* LatestNonGteAncestor(Instruction* inst) {
  while (inst->opcode() == Opcode::kGetTupleElement &&
         inst->operand_count() == 1) {
    inst = inst->operand(0);
  }
  return inst;
}

// Every user of `inst` (through get-tuple-elements) is `consumer` or the
// computation's root. A root that feeds other instructions is not
// accepted: it could link two members through a path.
bool IsConsumerTheOnlyNonRootUser(const Instruction& inst,
                                  const Instruction& consumer) {
  return std::all_of(
      inst.users().begin(), inst.users().end(), [&](const Instruction* u) {
        if (u->opcode() == Opcode::kGetTupleElement) {
          return IsConsumerTheOnlyNonRootUser(*u, consumer);
        }
        return u == &consumer || (u->IsRoot() && u->user_count() == 0);
      });
}

bool SameShapeIgnoringElementType(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray()) return false;
  return a.SameDimensions(b) &&
         PhysicalMinorToMajor(a) == PhysicalMinorToMajor(b);
}

// One horizontal loop fusion candidate and the facts the sort needs.
struct Candidate {
  Instruction* inst;
  FusionRoots outputs;
  PrimitiveType type;
  int64_t instruction_count;
};

bool IsFusibleCandidate(const Instruction& inst) {
  if (HasControlEdges(inst) || IsNestableVariadicReduction(inst)) return false;
  if (inst.opcode() != Opcode::kFusion) {
    return IsElementwiseOp(inst) && inst.operand_count() > 0 &&
           inst.shape().IsArray() && !inst.HasSideEffect();
  }
  if (!IsLoopFusion(inst) && !IsConcatenateInputFusion(inst)) return false;
  // The concatenate the sliced mode inserts needs one element type.
  const FusionRoots outputs = GetKernelRoots(inst);
  if (outputs.empty()) return false;
  for (const Instruction* o : outputs) {
    if (!o->shape().IsArray() ||
        o->shape().element_type() != outputs[0]->shape().element_type()) {
      return false;
    }
  }
  return true;
}

// Launch-bound kernels only: small outputs and few instructions.
bool IsProfitableCandidate(const Instruction& inst, bool sliced) {
  const int64_t max_elements = sliced || IsConcatenateInputFusion(inst)
                                   ? kSlicedElementsThreshold
                                   : kLoopElementsThreshold;
  const int64_t max_instructions =
      sliced ? kSlicedInstructionThreshold : kLoopInstructionThreshold;
  const Instruction* root =
      IsFusion(inst) ? inst.fused_computation()->root_instruction() : &inst;
  const Shape& shape =
      root->opcode() == Opcode::kTuple && root->operand_count() > 0
          ? root->operand(0)->shape()
          : root->shape();
  if (!shape.IsArray() || shape.ElementsIn() > max_elements) return false;
  return !IsFusion(inst) || InstructionCount(inst) <= max_instructions;
}

// Sliced mode cannot alias an output with a parameter that the inserted
// concatenate reads together with another member's data.
bool SharesParameterWithOtherCandidate(
    const Instruction& inst,
    const absl::flat_hash_set<const Instruction*>& candidates) {
  for (const Instruction* o : inst.operands()) {
    if (o->opcode() != Opcode::kParameter) continue;
    for (const Instruction* u : o->users()) {
      if (u != &inst && candidates.contains(u)) return true;
    }
  }
  return false;
}

class LoopFusionImpl {
 public:
  LoopFusionImpl(Rewriter& rw, bool loop_mode, bool sliced_mode)
      : rw_(rw), loop_mode_(loop_mode), sliced_mode_(sliced_mode) {}

  absl::StatusOr<bool> Run(Computation* computation) {
    std::vector<std::pair<int64_t, Instruction*>> stack;
    for (Instruction* i : computation->MakeInstructionPostOrder()) {
      stack.push_back({i->unique_id(), i});
    }
    bool changed = false;
    // Uses before defs: the reshapes placed after a sliced fusion would
    // otherwise hide later opportunities.
    while (!stack.empty()) {
      auto [id, consumer] = stack.back();
      stack.pop_back();
      if (rw_.IsRemoved(id) || consumer->operand_count() < 2) continue;
      if (loop_mode_) {
        HLOGYM_ASSIGN_OR_RETURN(bool fused,
                                FuseConsumerOperands(consumer, false, stack));
        changed |= fused;
      }
      if (sliced_mode_) {
        HLOGYM_ASSIGN_OR_RETURN(bool fused,
                                FuseConsumerOperands(consumer, true, stack));
        changed |= fused;
      }
    }
    return changed;
  }

 private:
  std::vector<Candidate> FindCandidates(Instruction* consumer, bool sliced) {
    absl::flat_hash_set<const Instruction*> fusible;
    std::vector<Instruction*> ordered;
    for (Instruction* operand : consumer->operands()) {
      Instruction* p = LatestNonGteAncestor(operand);
      if (IsFusibleCandidate(*p) && fusible.insert(p).second) {
        ordered.push_back(p);
      }
    }
    std::vector<Candidate> result;
    for (Instruction* p : ordered) {
      // Dry mode: members already offered in plain mode stay out of the
      // sliced attempt, as if they had been fused.
      if (proposed_.contains(p)) continue;
      if (!IsConsumerTheOnlyNonRootUser(*p, *consumer) ||
          !IsProfitableCandidate(*p, sliced) ||
          (sliced && SharesParameterWithOtherCandidate(*p, fusible))) {
        continue;
      }
      Candidate c{p, GetKernelRoots(*p), PrimitiveType::kInvalid,
                  InstructionCount(*p)};
      c.type = c.outputs[0]->shape().element_type();
      result.push_back(std::move(c));
    }
    std::stable_sort(result.begin(), result.end(),
                     [](const Candidate& a, const Candidate& b) {
                       if (a.type != b.type) return a.type < b.type;
                       if (a.outputs.size() != b.outputs.size()) {
                         return a.outputs.size() < b.outputs.size();
                       }
                       if (a.instruction_count != b.instruction_count) {
                         return a.instruction_count < b.instruction_count;
                       }
                       return a.outputs[0]->shape().ElementsIn() <
                              b.outputs[0]->shape().ElementsIn();
                     });
    return result;
  }

  // The next span [left, right) of `c` to fuse: equal output type and
  // count (and first output shape in plain mode), at most `max_batch`
  // outputs in all, and kernel parameters (operands + outputs, 8 bytes
  // each) under 4000 bytes in all.
  static size_t SpanEnd(const std::vector<Candidate>& c, size_t left,
                        bool sliced) {
    const int64_t max_batch =
        sliced || c[left].inst->opcode() == Opcode::kFusion
            ? kMaxFusionBatch
            : kMaxElementwiseLoopBatch;
    const Candidate& first = c[left];
    int64_t outputs = 0;
    int64_t io = 0;
    size_t right = left;
    for (; right < c.size(); ++right) {
      const Candidate& cur = c[right];
      if (cur.type != first.type) break;
      if (cur.outputs.size() != first.outputs.size()) break;
      if (!sliced && !SameShapeIgnoringElementType(first.outputs[0]->shape(),
                                                   cur.outputs[0]->shape())) {
        break;
      }
      const int64_t n = static_cast<int64_t>(cur.outputs.size());
      if (outputs + n > max_batch) break;
      if ((io + cur.inst->operand_count() + n) * kParamBytes >=
          kMaxCudaParamSize) {
        break;
      }
      outputs += n;
      io += cur.inst->operand_count() + n;
    }
    // A first member over a limit on its own makes a span of one.
    return std::max(right, left + 1);
  }

  // The members are independent by construction (the consumer and a root
  // without users are their only readers).
  absl::StatusOr<Instruction*> Fuse(std::span<Instruction* const> members,
                                    bool sliced) {
    return FuseHorizontally(rw_, members, sliced);
  }

  absl::StatusOr<bool> FuseConsumerOperands(
      Instruction* consumer, bool sliced,
      std::vector<std::pair<int64_t, Instruction*>>& stack) {
    std::vector<Candidate> candidates = FindCandidates(consumer, sliced);
    bool changed = false;
    for (size_t left = 0; left < candidates.size();) {
      const size_t right = SpanEnd(candidates, left, sliced);
      if (right - left >= 2) {
        std::vector<Instruction*> members;
        for (size_t k = left; k < right; ++k) {
          members.push_back(candidates[k].inst);
        }
        absl::StatusOr<Instruction*> fusion = Fuse(members, sliced);
        // Refusals (members not independent) are checked before anything
        // is built; skip those spans.
        if (!fusion.ok() && !absl::IsInvalidArgument(fusion.status())) {
          return fusion.status();
        }
        if (fusion.ok()) {
          changed = true;
          if (rw_.dry()) {
            proposed_.insert(members.begin(), members.end());
          } else {
            stack.push_back({(*fusion)->unique_id(), *fusion});
          }
        }
      }
      left = right;
    }
    return changed;
  }

  Rewriter& rw_;
  bool loop_mode_;
  bool sliced_mode_;
  absl::flat_hash_set<const Instruction*> proposed_;
};

// The input shape of the hero that decides the emitter.
Shape HeroInputShape(const Instruction& inst) {
  const Instruction& hero = GetRealHeroForMultiOutputFusion(inst);
  if (hero.operand_count() == 0) return Shape();
  return hero.operand(0)->shape();
}

absl::StatusOr<bool> FuseInputsOf(Rewriter& rw, Instruction* consumer) {
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<Instruction*> candidates;
  for (Instruction* operand : consumer->operands()) {
    Instruction* p = LatestNonGteAncestor(operand);
    if (p->opcode() == Opcode::kFusion &&
        p->fusion_kind() == FusionKind::kCustom) {
      continue;
    }
    if (HasControlEdges(*p) || !IsInputFusibleReduction(*p) ||
        !IsConsumerTheOnlyNonRootUser(*p, *consumer)) {
      continue;
    }
    if (seen.insert(p).second) candidates.push_back(p);
  }
  if (candidates.size() <= 1) return false;
  struct Keyed {
    Instruction* inst;
    Shape shape;
    int64_t count;
  };
  std::vector<Keyed> keyed;
  for (Instruction* c : candidates) {
    keyed.push_back({c, HeroInputShape(*c), InstructionCount(*c)});
  }
  // Equal input shapes end up next to each other; then similar sizes.
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    if (a.shape.rank() != b.shape.rank()) {
      return a.shape.rank() < b.shape.rank();
    }
    if (a.shape.dimensions() != b.shape.dimensions()) {
      return std::lexicographical_compare(
          a.shape.dimensions().begin(), a.shape.dimensions().end(),
          b.shape.dimensions().begin(), b.shape.dimensions().end());
    }
    if (a.count != b.count) return a.count < b.count;
    return a.inst->unique_id() < b.inst->unique_id();
  });
  bool changed = false;
  Instruction* anchor = keyed[0].inst;
  for (size_t j = 1; j < keyed.size(); ++j) {
    Instruction* fused = keyed[j].inst;
    if (!ShapesCompatibleForMultiOutputFusion(*anchor, *fused) ||
        !FusionFitsInBudget(*anchor, *fused)) {
      anchor = fused;
      continue;
    }
    absl::StatusOr<Instruction*> fusion =
        FuseSiblings(rw, anchor, fused, FusionKind::kInput);
    // The fusion operations refuse before building anything: move on.
    if (!fusion.ok()) {
      if (!absl::IsInvalidArgument(fusion.status())) return fusion.status();
      anchor = fused;
      continue;
    }
    changed = true;
    // Dry mode offers each merge with the original anchor.
    if (!rw.dry()) anchor = *fusion;
  }
  return changed;
}

}  // namespace

HorizontalLoopFusion::HorizontalLoopFusion() {
  DeclareRules({
      {std::string(kLoopRule), 0,
       "fuse equally shaped small operands of a consumer into one loop "
       "fusion with a tuple of all outputs"},
      {std::string(kSlicedRule), 0,
       "fuse differently shaped small operands of a consumer: outputs "
       "flattened, concatenated and sliced back (input fusion)"},
  });
}

absl::StatusOr<bool> HorizontalLoopFusion::RunWith(Module* module,
                                                   Rewriter& rw) {
  Computation* entry = module->entry_computation();
  if (entry == nullptr) return false;
  LoopFusionImpl impl(rw, rule_enabled(0), rule_enabled(1));
  return impl.Run(entry);
}

absl::StatusOr<bool> HorizontalInputFusion::RunWith(Module* module,
                                                    Rewriter& rw) {
  bool changed = false;
  for (Computation* c : GetFusibleComputations(*module)) {
    std::vector<std::pair<int64_t, Instruction*>> order;
    for (Instruction* i : c->MakeInstructionPostOrder()) {
      order.push_back({i->unique_id(), i});
    }
    // Defs before uses: merging only rewires the consumer's operands.
    for (auto [id, consumer] : order) {
      if (rw.IsRemoved(id) || consumer->operand_count() < 2) continue;
      HLOGYM_ASSIGN_OR_RETURN(bool fused, FuseInputsOf(rw, consumer));
      changed |= fused;
    }
  }
  return changed;
}

}  // namespace hlogym
