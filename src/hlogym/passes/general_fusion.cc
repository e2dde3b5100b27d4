#include "hlogym/passes/general_fusion.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
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
  absl::InlinedVector<const Instruction*, 8> others;
  for (const Instruction* o : consumer.operands()) {
    if (o == &producer) continue;
    if (o->opcode() == Opcode::kGetTupleElement && o->operand(0) == &producer) {
      continue;
    }
    others.push_back(o);
  }
  return !others.empty() && reach.ReachesAny(&producer, others);
}

bool ByUniqueId(const Instruction* a, const Instruction* b) {
  return a->unique_id() < b->unique_id();
}

// A user of a shared value that may join a sibling multi-output fusion.
bool SiblingCandidate(const Instruction& inst) {
  if (NeverFused(inst) || (inst.user_count() == 0 && !inst.IsRoot()) ||
      !IsFusibleAsMultiOutputFusionRoot(inst) ||
      RootIsDynamicUpdateSlice(inst) || IsNestableVariadicReduction(inst)) {
    return false;
  }
  // Users of a multi-output fusion must read it through get-tuple-elements.
  if (!inst.shape().IsTuple()) return true;
  for (const Instruction* u : inst.users()) {
    if (u->opcode() != Opcode::kGetTupleElement) return false;
  }
  return !inst.IsRoot();
}

// LegalSiblings for two instructions that are both SiblingCandidates.
// What the legality tests read of one instruction, worked out once per
// instruction and dry run: each is tested against many partners, reading
// it walks fused bodies (heroes, reductions, shared memory), and a dry run
// leaves the graph unchanged. Budget figures: shared memory, unnested
// reductions, output buffers.
class LegalityMemo {
 public:
  struct Use {
    int64_t shared_memory = 0;
    int64_t unnested_reductions = 0;
    int64_t outputs = 0;  // nodes of the shape tree
  };
  const Use& Of(const Instruction& inst) {
    auto [it, fresh] = uses_.try_emplace(&inst);
    if (fresh) {
      it->second = {SharedMemoryUsage(inst), CountUnnestedReductions(inst),
                    SubshapeCount(inst.shape())};
    }
    return it->second;
  }
  const MultiOutputFacts& MultiOutput(const Instruction& inst) {
    auto [it, fresh] = multi_output_.try_emplace(&inst);
    if (fresh) it->second = GetMultiOutputFacts(inst);
    return it->second;
  }

 private:
  absl::flat_hash_map<const Instruction*, Use> uses_;
  absl::flat_hash_map<const Instruction*, MultiOutputFacts> multi_output_;
};

// ShapesCompatibleForMultiOutputFusion, from the memo when there is one.
FusionDecision MultiOutputShapesCompatible(const Instruction& a,
                                           const Instruction& b,
                                           LegalityMemo* memo) {
  if (memo == nullptr) return ShapesCompatibleForMultiOutputFusion(a, b);
  // A copy: looking up `b` may grow the map and move `a`'s entry.
  const MultiOutputFacts fa = memo->MultiOutput(a);
  return ShapesCompatibleForMultiOutputFusion(a, b, fa, memo->MultiOutput(b));
}

// FusionFitsInBudget(a, b, consumer_producer). With a memo, a pair whose
// memoized figures pass the test's first, sufficient bound is accepted
// without it (the same answer); every other pair takes the exact test.
FusionDecision FitsInBudget(const Instruction& a, const Instruction& b,
                            bool consumer_producer, LegalityMemo* memo) {
  if (memo != nullptr) {
    // A copy: looking up `b` may grow the map and move `a`'s entry.
    const LegalityMemo::Use ua = memo->Of(a);
    const LegalityMemo::Use& ub = memo->Of(b);
    if (ua.shared_memory + ub.shared_memory <= kSharedMemoryPerBlockBytes &&
        ua.unnested_reductions + ub.unnested_reductions <=
            kMaxUnnestedReductionsPerFusion &&
        a.operand_count() + b.operand_count() - 1 + ua.outputs + ub.outputs <=
            kMaxOperandsAndOutputsPerFusion) {
      return FusionDecision::Allow();
    }
  }
  return FusionFitsInBudget(a, b, consumer_producer);
}

FusionDecision LegalSiblingPair(const Instruction& a, const Instruction& b,
                                LegalityMemo* memo) {
  // Loop fusions grow into bigger loop fusions and input fusions into
  // fusions with several reductions; a reduction does not join a loop.
  const bool a_fusion = a.opcode() == Opcode::kFusion;
  const bool b_fusion = b.opcode() == Opcode::kFusion;
  if (a_fusion && b_fusion && a.fusion_kind() != b.fusion_kind()) {
    return FusionDecision::Forbid("the fusion kinds differ");
  }
  if ((!a_fusion && IsInputFusibleReduction(a) && b_fusion &&
       b.fusion_kind() == FusionKind::kLoop) ||
      (!b_fusion && IsInputFusibleReduction(b) && a_fusion &&
       a.fusion_kind() == FusionKind::kLoop)) {
    return FusionDecision::Forbid("a reduction does not join a loop fusion");
  }
  if (FusionDecision d = MultiOutputShapesCompatible(a, b, memo); !d) {
    return d;
  }
  return FitsInBudget(a, b, /*consumer_producer=*/false, memo);
}

FusionDecision LegalPair(const Instruction& producer,
                         const Instruction& consumer, LegalityMemo* memo);

// The reference pass tests a producer that keeps other users, and whose
// shapes are multi-output compatible with the consumer's, with XLA's
// producer-consumer multi-output test instead of the plain one: the
// consumer must be able to be a multi-output root, and the producer must
// be loop-fusible, update nothing in place and (this XLA's form of the
// reference's layout rule) not transpose physically. Relaxed as there: the
// producer may already be a multi-output fusion.
bool MultiOutputPairFusible(const Instruction& producer,
                            const Instruction& consumer) {
  return IsFusibleAsMultiOutputFusionRoot(consumer) &&
         IsProducerMultiOutputFusible(producer, /*allow_multi_output=*/true);
}

// Proposes sibling fusions: two readers of one value that do not reach
// each other become one multi-output fusion (the reference pass's sibling
// step; it runs after the producer-consumer step, so those candidates come
// first at a use). Readers are taken in unique-id order, and each is paired
// with at most `partners` of the later readers it may fuse with (0: all of
// them). Every pair is offered once, whichever values the two share.
// Sibling sets from this size on may have their pairs answered by one
// ReachabilityIndex::Among sweep (see below), unless it would take more
// words than the cap.
constexpr size_t kMatrixReaders = 8;
constexpr int64_t kMatrixMaxWords = int64_t{1} << 22;

absl::StatusOr<bool> ProposeSiblingFusions(
    const std::vector<Instruction*>& order, const ReachabilityIndex& reach,
    int64_t partners, Rewriter& rw, LegalityMemo& memo) {
  bool proposed = false;
  absl::flat_hash_set<std::pair<int64_t, int64_t>> offered;
  absl::flat_hash_map<const Instruction*, bool> is_candidate;
  std::vector<Instruction*> siblings;
  std::vector<const Instruction*> const_siblings;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    siblings.clear();
    for (Instruction* user : (*it)->users()) {
      if (user->opcode() != Opcode::kGetTupleElement) {
        siblings.push_back(user);
        continue;
      }
      for (Instruction* reader : user->users()) siblings.push_back(reader);
    }
    if (siblings.size() < 2) continue;
    std::sort(siblings.begin(), siblings.end(), ByUniqueId);
    siblings.erase(std::unique(siblings.begin(), siblings.end()),
                   siblings.end());
    // An instruction reads several values: test it once.
    std::erase_if(siblings, [&](const Instruction* s) {
      auto [it, inserted] = is_candidate.try_emplace(s, false);
      if (inserted) it->second = SiblingCandidate(*s);
      return !it->second;
    });
    // Readers of a widely shared value mostly depend on one another (a
    // constant read by every layer), and single searches then each walk
    // much of the graph. Once the searches for this set have visited as
    // many instructions as one sweep over all its pairs costs, the sweep
    // answers the rest: never much worse than either way alone.
    std::optional<ReachabilityIndex::Matrix> among;
    const int64_t work_before = reach.SearchWork();
    int64_t among_cost = -1;  // not computed yet
    auto connected = [&](size_t i, size_t j) {
      if (!among && siblings.size() >= kMatrixReaders) {
        if (among_cost < 0) {
          const_siblings.assign(siblings.begin(), siblings.end());
          among_cost = reach.AmongCost(const_siblings);
        }
        if (among_cost <= kMatrixMaxWords &&
            reach.SearchWork() - work_before >= among_cost) {
          among = reach.Among(const_siblings);
        }
      }
      if (among) return among->Reaches(i, j) || among->Reaches(j, i);
      return reach.IsReachable(siblings[i], siblings[j]) ||
             reach.IsReachable(siblings[j], siblings[i]);
    };
    for (size_t i = 0; i < siblings.size(); ++i) {
      int64_t found = 0;
      for (size_t j = i + 1; j < siblings.size(); ++j) {
        if (partners > 0 && found == partners) break;
        Instruction* a = siblings[i];
        Instruction* b = siblings[j];
        if (offered.contains(std::pair(a->unique_id(), b->unique_id()))) {
          ++found;
          continue;
        }
        if (!LegalSiblingPair(*a, *b, &memo) || connected(i, j)) continue;
        offered.insert(std::pair(a->unique_id(), b->unique_id()));
        ++found;
        const FusionKind kind = IsInputFusible(*a) || IsInputFusible(*b)
                                    ? FusionKind::kInput
                                    : FusionKind::kLoop;
        absl::StatusOr<Instruction*> made = FuseSiblings(rw, a, b, kind);
        // The fusion operations refuse before building anything: skip.
        if (!made.ok()) {
          if (!absl::IsInvalidArgument(made.status())) return made.status();
          continue;
        }
        proposed = true;
      }
    }
  }
  return proposed;
}

absl::StatusOr<bool> ProposeFusions(Module* module, Rewriter& rw, bool siblings,
                                    int64_t partners) {
  bool proposed = false;
  LegalityMemo memo;
  for (Computation* computation : GetFusibleComputations(*module)) {
    if (computation->instruction_count() < 2) continue;
    ReachabilityIndex reach(*computation);
    std::vector<Instruction*> order = computation->MakeInstructionPostOrder();
    std::vector<Instruction*> producers;
    // Consumers from the root backwards, as the reference pass walks them.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Instruction* consumer = *it;
      // Dead code is left alone (a fusion of it would have no output).
      if (NeverFused(*consumer) ||
          (consumer->user_count() == 0 && !consumer->IsRoot())) {
        continue;
      }
      // Each producer once, in unique-id order as the reference pass
      // visits them: with pick-first, that order decides which fusion of a
      // consumer is taken.
      producers.clear();
      for (Instruction* operand : consumer->operands()) {
        Instruction* producer = ProducerOf(operand);
        if (producer != nullptr) producers.push_back(producer);
      }
      std::sort(producers.begin(), producers.end(), ByUniqueId);
      producers.erase(std::unique(producers.begin(), producers.end()),
                      producers.end());
      for (Instruction* producer : producers) {
        if (!LegalPair(*producer, *consumer, &memo)) continue;
        if (CreatesCycle(*producer, *consumer, reach)) continue;
        // As the reference pass: a multi-output fusion where the producer
        // has other users and the shapes are multi-output compatible, if
        // the multi-output test allows it (else no candidate: the
        // reference does not fall back to duplication); otherwise the
        // producer is duplicated into the consumer.
        ExternalUses uses = ExternalUses::kDuplicate;
        if (HasOtherUsers(*producer, *consumer) &&
            MultiOutputShapesCompatible(*producer, *consumer, &memo)) {
          if (!MultiOutputPairFusible(*producer, *consumer)) continue;
          uses = ExternalUses::kMultiOutput;
        }
        HLOGYM_RETURN_IF_ERROR(FuseProducerIntoConsumer(
                                   rw, producer, consumer,
                                   ChooseFusionKind(*producer, *consumer), uses)
                                   .status());
        proposed = true;
      }
    }
    if (siblings) {
      HLOGYM_ASSIGN_OR_RETURN(
          bool more, ProposeSiblingFusions(order, reach, partners, rw, memo));
      proposed |= more;
    }
  }
  return proposed;
}

FusionDecision LegalPair(const Instruction& producer,
                         const Instruction& consumer, LegalityMemo* memo) {
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
  if (d = FitsInBudget(consumer, producer, /*consumer_producer=*/true, memo);
      !d) {
    return d;
  }
  return ProducerConsumerMergedTooLarge(producer, consumer);
}

}  // namespace

FusionDecision GeneralFusion::Legal(const Instruction& producer,
                                    const Instruction& consumer) {
  return LegalPair(producer, consumer, nullptr);
}

FusionDecision GeneralFusion::LegalSiblings(const Instruction& a,
                                            const Instruction& b) {
  for (const Instruction* x : {&a, &b}) {
    if (!SiblingCandidate(*x)) {
      return FusionDecision::Forbid(
          StrCat("'", x->name(), "' cannot be a multi-output fusion root"));
    }
  }
  return LegalSiblingPair(a, b, nullptr);
}

absl::Status GeneralFusion::SetOption(std::string_view key,
                                      std::string_view value) {
  if (key == "siblings") {
    HLOGYM_ASSIGN_OR_RETURN(siblings_, ParseBoolOption(key, value));
    return absl::OkStatus();
  }
  if (key == "sibling_partners") {
    int64_t n = 0;
    if (!absl::SimpleAtoi(absl::string_view(value.data(), value.size()), &n) ||
        n < 0) {
      return absl::InvalidArgumentError(
          StrCat("option 'sibling_partners' of pass 'general-fusion' must be "
                 "a count (0: every pair), not '",
                 value, "'"));
    }
    sibling_partners_ = n;
    return absl::OkStatus();
  }
  return Pass::SetOption(key, value);
}

std::vector<std::string> GeneralFusion::OptionNames() const {
  return {"siblings", "sibling_partners"};
}

absl::StatusOr<bool> GeneralFusion::RunWith(Module* module, Rewriter& rw) {
  // The pass never reads its candidates' bodies: they may stay pending.
  rw.set_defer_fusion_bodies(true);
  if (rw.dry()) return ProposeFusions(module, rw, siblings_, sibling_partners_);
  // Apply mode: every candidate accepted (the first one at each use), and
  // ApplyDecisions builds the chosen bodies at once.
  DeferFusionBodies defer(module);
  Rewriter dry(module, RewriteMode::kDry);
  dry.set_defer_fusion_bodies(true);
  HLOGYM_ASSIGN_OR_RETURN(
      bool proposed, ProposeFusions(module, dry, siblings_, sibling_partners_));
  HLOGYM_ASSIGN_OR_RETURN(AugmentStats stats, dry.Finish());
  if (!proposed || stats.alternatives == 0) return false;
  std::vector<Instruction*> nodes = AlternativeNodes(*module);
  std::vector<int64_t> decisions = DecisionPolicy::First().Decide(nodes);
  HLOGYM_ASSIGN_OR_RETURN(ApplyStats applied,
                          ApplyDecisions(module, decisions));
  return applied.non_original > 0;
}

}  // namespace hlogym
