#include "hlogym/passes/general_fusion.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/fusion_ops.h"

namespace hlogym {
namespace {

// Instructions that are never members of a fusion.
bool NeverFused(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kAlternatives:
    case Opcode::kCustomCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
      return true;
    case Opcode::kFusion:
      return inst.fusion_kind() == FusionKind::kCustom ||
             inst.fused_computation() == nullptr;
    default:
      break;
  }
  return !inst.control_predecessors().empty() ||
         !inst.control_successors().empty() || HasSideEffectDeep(inst);
}

// The producer behind a consumer's operand: the operand itself, or the
// multi-output instruction a get-tuple-element reads.
Instruction* ProducerOf(Instruction* operand) {
  if (operand->opcode() == Opcode::kGetTupleElement) {
    Instruction* t = operand->operand(0);
    return t->opcode() == Opcode::kFusion ? t : nullptr;
  }
  return operand;
}

// True when the producer has readers besides `consumer` (its
// get-tuple-elements' readers for a multi-output producer, and the root
// role).
bool HasOtherUsers(const Instruction& producer, const Instruction& consumer) {
  if (producer.IsRoot()) return true;
  for (const Instruction* u : producer.users()) {
    if (u == &consumer) continue;
    if (producer.shape().IsTuple() && u->opcode() == Opcode::kGetTupleElement) {
      if (u->IsRoot()) return true;
      for (const Instruction* w : u->users()) {
        if (w != &consumer) return true;
      }
      continue;
    }
    return true;
  }
  return false;
}

// A path from the producer to another operand of the consumer: fusing
// would close a cycle.
bool CreatesCycle(const Instruction& producer, const Instruction& consumer,
                  const ReachabilityIndex& reach) {
  for (const Instruction* o : consumer.operands()) {
    if (o == &producer) continue;
    if (o->opcode() == Opcode::kGetTupleElement && o->operand(0) == &producer) {
      continue;
    }
    if (reach.IsReachable(&producer, o)) return true;
  }
  return false;
}

absl::StatusOr<bool> ProposeFusions(Module* module, Rewriter& rw) {
  bool proposed = false;
  for (Computation* computation : GetFusibleComputations(*module)) {
    if (computation->instruction_count() < 2) continue;
    ReachabilityIndex reach(*computation);
    std::vector<Instruction*> order = computation->MakeInstructionPostOrder();
    // Consumers from the root backwards, as the reference pass walks them.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Instruction* consumer = *it;
      // Dead code is left alone (a fusion of it would have no output).
      if (NeverFused(*consumer) ||
          (consumer->user_count() == 0 && !consumer->IsRoot())) {
        continue;
      }
      absl::flat_hash_set<Instruction*> seen;
      for (Instruction* operand : consumer->operands()) {
        Instruction* producer = ProducerOf(operand);
        if (producer == nullptr || !seen.insert(producer).second) continue;
        if (!GeneralFusion::Legal(*producer, *consumer)) continue;
        if (CreatesCycle(*producer, *consumer, reach)) continue;
        // As the reference pass: a multi-output fusion where the producer
        // has other users and the shapes are multi-output compatible,
        // otherwise the producer is duplicated into the consumer.
        const ExternalUses uses =
            HasOtherUsers(*producer, *consumer) &&
                    ShapesCompatibleForMultiOutputFusion(*producer, *consumer)
                ? ExternalUses::kMultiOutput
                : ExternalUses::kDuplicate;
        HLOGYM_RETURN_IF_ERROR(FuseProducerIntoConsumer(
                                   rw, producer, consumer,
                                   ChooseFusionKind(*producer, *consumer), uses)
                                   .status());
        proposed = true;
      }
    }
  }
  return proposed;
}

}  // namespace

FusionDecision GeneralFusion::Legal(const Instruction& producer,
                                    const Instruction& consumer) {
  if (NeverFused(producer)) {
    return FusionDecision::Forbid(
        StrCat("'", producer.name(), "' is never fused"));
  }
  if (NeverFused(consumer)) {
    return FusionDecision::Forbid(
        StrCat("'", consumer.name(), "' is never fused"));
  }
  FusionDecision d = IsProducerConsumerFusible(producer, consumer);
  if (!d) {
    // Relaxed: a multi-output producer may fuse into its consumer (the
    // multi-output test comes last, so only the in-place rule remains).
    const bool mof_producer =
        producer.opcode() == Opcode::kFusion && producer.shape().IsTuple();
    if (!mof_producer || d.reason != "the producer is a multi-output fusion") {
      return d;
    }
    if (d = ShouldFuseInPlaceOp(producer, consumer); !d) return d;
  }
  if (d = FusionFitsInBudget(consumer, producer,
                             /*is_consumer_producer_fusion=*/true);
      !d) {
    return d;
  }
  return ProducerConsumerMergedTooLarge(producer, consumer);
}

absl::StatusOr<bool> GeneralFusion::RunWith(Module* module, Rewriter& rw) {
  if (rw.dry()) return ProposeFusions(module, rw);
  // Apply mode: every candidate accepted (the first one at each use).
  Rewriter dry(module, RewriteMode::kDry);
  HLOGYM_ASSIGN_OR_RETURN(bool proposed, ProposeFusions(module, dry));
  HLOGYM_ASSIGN_OR_RETURN(AugmentStats stats, dry.Finish());
  if (!proposed || stats.alternatives == 0) return false;
  std::vector<Instruction*> nodes = AlternativeNodes(*module);
  std::vector<int64_t> decisions = DecisionPolicy::First().Decide(nodes);
  HLOGYM_ASSIGN_OR_RETURN(ApplyStats applied,
                          ApplyDecisions(module, decisions));
  return applied.non_original > 0;
}

}  // namespace hlogym
