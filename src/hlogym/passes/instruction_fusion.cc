#include "hlogym/passes/instruction_fusion.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "hlogym/cost/cost_analysis.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/passes/fusion_ops.h"

namespace hlogym {
namespace {

// Emission counts grow geometrically in diamond-shaped fusions; saturate
// instead of overflowing (anything this large is far over the limit).
constexpr int64_t kCountCap = int64_t{1} << 40;

int64_t SaturatingAdd(int64_t a, int64_t b) {
  return std::min(kCountCap, a + b);
}

// HloInstruction::IsFusible: may be part of a fusion at all.
bool IsFusibleAtAll(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kDomain:
    case Opcode::kParameter:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kAlternatives:
      return false;
    case Opcode::kFusion:
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      return true;
    case Opcode::kRng:
      return inst.user_count() <= 1;
    default:
      return !inst.HasSideEffect();
  }
}

// HloInstruction::IsElementwise for the opcodes that reach it below.
bool IsElementwiseInstruction(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kCopy) return true;
  if (op == Opcode::kBitcastConvert) {
    return inst.operand_count() == 1 && inst.shape().IsArray() &&
           inst.operand(0)->shape().IsArray() &&
           BitWidth(inst.shape().element_type()) ==
               BitWidth(inst.operand(0)->shape().element_type());
  }
  if (op == Opcode::kMap) {
    const DimVector& d = inst.dimensions();
    if (!inst.shape().IsArray()) return false;
    if (d.empty()) return true;
    if (static_cast<int64_t>(d.size()) != inst.shape().rank()) return false;
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  }
  return IsElementwise(op);
}

bool OpInvalidatesCache(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kConcatenate:
    case Opcode::kDot:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kPad:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      return true;
    default:
      return false;
  }
}

// Users of `inst`, counting the readers of the matching fused parameter for
// a fusion user.
int64_t RealUserCount(const Instruction& inst) {
  int64_t count = 0;
  for (const Instruction* user : inst.users()) {
    const Computation* body =
        user->opcode() == Opcode::kFusion ? user->fused_computation() : nullptr;
    if (body == nullptr) {
      ++count;
      continue;
    }
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) != &inst) continue;
      if (i < body->num_parameters()) {
        count += body->parameter_instruction(i)->user_count();
      }
      break;
    }
  }
  return count;
}

bool SameShapeIgnoringElementType(const Shape& a, const Shape& b) {
  if (a.IsTuple() || b.IsTuple()) return a == b;
  if (!a.IsArray() || !b.IsArray()) return false;
  return a.dimensions() == b.dimensions() &&
         PhysicalMinorToMajor(a) == PhysicalMinorToMajor(b);
}

enum class UseKind : uint8_t { kNoUse, kUse, kUsePermutingElements, kReuse };

std::vector<bool> ReusedFusionParameters(const Computation& body);

// HloInstruction::OperandElementUse.
UseKind OperandElementUse(const Instruction& inst, int64_t i) {
  switch (inst.opcode()) {
    case Opcode::kBitcast:
    case Opcode::kConcatenate:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
      return UseKind::kUsePermutingElements;
    case Opcode::kPad:
      // The padding value is read for every padded element.
      return i > 0 ? UseKind::kReuse : UseKind::kUsePermutingElements;
    case Opcode::kReduce:
      // Init values are read once per output element.
      return i >= inst.operand_count() / 2 ? UseKind::kReuse
                                           : UseKind::kUsePermutingElements;
    case Opcode::kFusion: {
      const Computation* body = inst.fused_computation();
      if (body == nullptr || body->root_instruction() == nullptr) {
        return UseKind::kReuse;
      }
      std::vector<bool> reused = ReusedFusionParameters(*body);
      return i < static_cast<int64_t>(reused.size()) && reused[i]
                 ? UseKind::kReuse
                 : UseKind::kUse;
    }
    case Opcode::kDot:
      // Matrix-vector products read the matrix once.
      if (inst.shape().IsArray() && inst.shape().rank() <= 1 &&
          inst.operand_count() == 2) {
        const int64_t other = i == 0 ? 1 : 0;
        if (inst.operand(other)->shape().IsArray() &&
            inst.operand(other)->shape().rank() <= 1) {
          return UseKind::kUse;
        }
      }
      return UseKind::kReuse;
    case Opcode::kDynamicUpdateSlice:
      return i <= 1 ? UseKind::kUse : UseKind::kReuse;
    case Opcode::kGather:
      return i == 1 ? UseKind::kUse : UseKind::kUsePermutingElements;
    default:
      return IsElementwiseInstruction(inst) ? UseKind::kUse : UseKind::kReuse;
  }
}

// For each parameter of a fused computation: some element is read more
// than once, i.e. a path from the parameter to the root passes through an
// operand edge that reuses elements.
std::vector<bool> ReusedFusionParameters(const Computation& body) {
  std::vector<bool> result(body.num_parameters(), false);
  // 0: not reached from the root, 1: reached, 2: reached with reuse.
  absl::flat_hash_map<const Instruction*, int> state;
  std::vector<Instruction*> order = body.MakeInstructionPostOrder();
  state[body.root_instruction()] = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* inst = *it;
    auto found = state.find(inst);
    if (found == state.end()) continue;
    const bool reuse_above = found->second == 2;
    for (int64_t k = 0; k < inst->operand_count(); ++k) {
      const UseKind use = OperandElementUse(*inst, k);
      if (use == UseKind::kNoUse) continue;
      int& s = state[inst->operand(k)];
      s = std::max(s, (reuse_above || use == UseKind::kReuse) ? 2 : 1);
    }
  }
  for (int64_t p = 0; p < body.num_parameters(); ++p) {
    auto it = state.find(body.parameter_instruction(p));
    result[p] = it != state.end() && it->second == 2;
  }
  return result;
}

int64_t TrueRank(const Shape& s) {
  if (!s.IsArray()) return 0;
  int64_t r = 0;
  for (int64_t d : s.dimensions()) r += d != 1 ? 1 : 0;
  return r;
}

// Elements over every array leaf.
int64_t TotalElements(const Shape& s) {
  if (s.IsTuple()) {
    int64_t n = 0;
    for (const Shape& t : s.tuple_shapes()) n += TotalElements(t);
    return n;
  }
  return s.IsArray() ? s.ElementsIn() : 0;
}

int64_t MaxTrueRank(const Shape& s) {
  if (s.IsTuple()) {
    int64_t r = 0;
    for (const Shape& t : s.tuple_shapes()) r = std::max(r, MaxTrueRank(t));
    return r;
  }
  return TrueRank(s);
}

// The producer has users other than `consumer`.
bool FusionWouldDuplicate(const Instruction& producer,
                          const Instruction& consumer) {
  return !(producer.user_count() == 1 && consumer.IsUserOf(&producer));
}

bool HasControlEdges(const Instruction& inst) {
  return !inst.control_predecessors().empty() ||
         !inst.control_successors().empty();
}

// Operands the fusion operations can take in as members (side effects
// are checked separately).
bool CanBeMember(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kAlternatives:
      return false;
    default:
      break;
  }
  if (inst.is_detached() || HasControlEdges(inst)) return false;
  return inst.opcode() != Opcode::kFusion ||
         inst.fused_computation() != nullptr;
}

// The global "do not duplicate" analysis (ComputeGloballyUnfusible): a
// producer whose duplication would increase memory traffic (more than one
// large operand, and more operand elements than output elements) is only
// duplicated when it can be fused into all its users along all paths.
class GloballyUnfusible {
 public:
  GloballyUnfusible(const GpuInstructionFusion& pass,
                    const Computation& computation)
      : pass_(pass), reachability_(computation) {}

  absl::flat_hash_set<int64_t> Compute(
      const std::vector<Instruction*>& post_order) {
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
      Instruction* producer = *it;
      if (EffectivelyAtMostUnary(*producer)) continue;
      absl::flat_hash_set<const Instruction*> seen;
      int64_t operand_elements = 0;
      for (const Instruction* o : producer->operands()) {
        if (seen.insert(o).second)
          operand_elements += TotalElements(o->shape());
      }
      if (operand_elements <= TotalElements(producer->shape())) continue;
      if (IsFusibleAtAll(*producer) &&
          std::all_of(producer->users().begin(), producer->users().end(),
                      [&](const Instruction* user) {
                        return CanFuseOnAllPaths(*producer, *user);
                      })) {
        continue;
      }
      do_not_duplicate_.insert(producer->unique_id());
    }
    return std::move(do_not_duplicate_);
  }

 private:
  bool CanFuseOnAllPaths(const Instruction& producer,
                         const Instruction& consumer) {
    if (&consumer == &producer) return true;
    if (!IsFusibleAtAll(consumer)) return false;
    const std::pair<int64_t, int64_t> key(producer.unique_id(),
                                          consumer.unique_id());
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    bool result = true;
    for (int64_t i = 0; i < consumer.operand_count() && result; ++i) {
      const Instruction* operand = consumer.operand(i);
      // Operands off the paths from the producer do not matter.
      if (!reachability_.IsReachable(&producer, operand)) continue;
      if (do_not_duplicate_.contains(operand->unique_id()) ||
          !pass_.ShouldFuse(consumer, i) ||
          !CanFuseOnAllPaths(producer, *operand)) {
        result = false;
      }
    }
    cache_.emplace(key, result);
    return result;
  }

  const GpuInstructionFusion& pass_;
  ReachabilityIndex reachability_;
  absl::flat_hash_set<int64_t> do_not_duplicate_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, bool> cache_;
};

// Operand indices of `consumer` whose operand passes `keep`, latest-defined
// operand first by `position` (ties in index order). An operand read at
// several indices is tried at each: whether the consumer reuses its
// elements depends on the index.
template <typename Position, typename Keep>
std::vector<int64_t> SortedOperandNumbers(const Instruction& consumer,
                                          Position position, Keep keep) {
  std::vector<std::pair<int64_t, int64_t>> order;  // (position, index)
  for (int64_t i = 0; i < consumer.operand_count(); ++i) {
    const Instruction* o = consumer.operand(i);
    if (!keep(*o)) continue;
    order.push_back({position(*o), i});
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  std::vector<int64_t> result;
  result.reserve(order.size());
  for (const auto& p : order) result.push_back(p.second);
  return result;
}

}  // namespace

// ---------------------------------------------------------------------------
// FusionNodeIndexingEvaluation.

FusionNodeIndexingEvaluation::FusionNodeIndexingEvaluation(
    const Instruction& fusion, int64_t root_usage_count)
    : fusion_(fusion) {
  const Computation* body = fusion.fused_computation();
  if (body == nullptr || body->root_instruction() == nullptr) return;
  // The fusion itself is the root's only indexing user.
  indexing_users_[body->root_instruction()].insert(&fusion);
  index_usage_count_[&fusion] = root_usage_count;
  std::vector<Instruction*> order = body->MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if ((*it)->opcode() == Opcode::kParameter) continue;
    Propagate(*it);
  }
}

void FusionNodeIndexingEvaluation::Propagate(const Instruction* inst) {
  int64_t total = 0;
  // Copy: inserting into the map below may move the set.
  const absl::flat_hash_set<const Instruction*> users = indexing_users_[inst];
  for (const Instruction* u : users) {
    auto it = index_usage_count_.find(u);
    if (it != index_usage_count_.end())
      total = SaturatingAdd(total, it->second);
  }
  index_usage_count_[inst] = total;
  for (const Instruction* operand : inst->operands()) {
    // Parameters are tracked as the fusion operands they stand for.
    if (operand->opcode() == Opcode::kParameter &&
        operand->parameter_number() >= 0 &&
        operand->parameter_number() < fusion_.operand_count()) {
      operand = fusion_.operand(operand->parameter_number());
    }
    // A transpose, or an op of the operand's shape, reads its operand at
    // the indices it is read at; anything else computes new indices.
    if (inst->opcode() == Opcode::kTranspose ||
        SameShapeIgnoringElementType(operand->shape(), inst->shape())) {
      indexing_users_[operand].insert(users.begin(), users.end());
    } else {
      indexing_users_[operand].insert(inst);
    }
  }
}

int64_t FusionNodeIndexingEvaluation::EvaluateEmittedInstructions(
    const Instruction& producer) const {
  auto it = indexing_users_.find(&producer);
  if (it == indexing_users_.end()) return 0;
  int64_t total = 0;
  for (const Instruction* u : it->second) {
    auto c = index_usage_count_.find(u);
    if (c != index_usage_count_.end()) total = SaturatingAdd(total, c->second);
  }
  return total;
}

bool FusionNodeIndexingEvaluation::CodeDuplicationTooHigh(
    const Instruction& producer) const {
  const int64_t emitted = EvaluateEmittedInstructions(producer);
  return emitted > kAllowedCodeDuplication ||
         (OpInvalidatesCache(producer) &&
          (emitted > 1 || RealUserCount(producer) > 1));
}

bool FusionNodeIndexingEvaluation::MaxCodeDuplicationTooHigh() const {
  for (const auto& [inst, count] : index_usage_count_) {
    if (count > kAllowedCodeDuplication ||
        (OpInvalidatesCache(*inst) &&
         (count > 1 || RealUserCount(*inst) > 1))) {
      return true;
    }
  }
  return false;
}

bool IsFusedIrEmitterInefficient(const Instruction& consumer,
                                 const Instruction& producer) {
  if (consumer.opcode() != Opcode::kFusion) return false;
  FusionNodeIndexingEvaluation eval_consumer(consumer);
  if (producer.opcode() != Opcode::kFusion) {
    return eval_consumer.CodeDuplicationTooHigh(producer);
  }
  // A fusion producer: its root is emitted as often as the consumer reads
  // it; check every instruction of its body under that count.
  FusionNodeIndexingEvaluation eval_producer(
      producer, eval_consumer.EvaluateEmittedInstructions(producer));
  return eval_producer.MaxCodeDuplicationTooHigh();
}

// ---------------------------------------------------------------------------
// Helpers of ShouldFuse.

bool ReusesOperandElements(const Instruction& consumer, int64_t operand_index) {
  if (operand_index < 0 || operand_index >= consumer.operand_count()) {
    return false;
  }
  return OperandElementUse(consumer, operand_index) == UseKind::kReuse;
}

bool IsAlwaysDuplicable(const Instruction& inst) {
  if (inst.opcode() == Opcode::kBroadcast) return true;
  // A widening convert fused into its consumers lets them read the narrow
  // input instead.
  return inst.opcode() == Opcode::kConvert && inst.operand_count() == 1 &&
         inst.shape().IsArray() && inst.operand(0)->shape().IsArray() &&
         inst.operand(0)->shape().ArrayBytes() < inst.shape().ArrayBytes();
}

bool EffectivelyAtMostUnary(const Instruction& inst) {
  const int64_t output_rank = MaxTrueRank(inst.shape());
  int64_t large = 0;
  for (const Instruction* o : inst.operands()) {
    if (o->opcode() == Opcode::kBroadcast || o->opcode() == Opcode::kIota) {
      continue;
    }
    if (o->opcode() == Opcode::kConstant && o->shape().IsArray() &&
        o->shape().ElementsIn() == 1) {
      continue;
    }
    if (TrueRank(o->shape()) >= output_rank) ++large;
  }
  return large <= 1;
}

// ---------------------------------------------------------------------------
// The pass.

absl::Status GpuInstructionFusion::SetOption(std::string_view key,
                                             std::string_view value) {
  if (key != "may_duplicate") return Pass::SetOption(key, value);
  HLOGYM_ASSIGN_OR_RETURN(options_.may_duplicate, ParseBoolOption(key, value));
  return absl::OkStatus();
}

std::vector<std::string> GpuInstructionFusion::OptionNames() const {
  return {"may_duplicate"};
}

GpuInstructionFusion::ConsumerFacts& GpuInstructionFusion::Facts(
    const Instruction& consumer) const {
  auto [it, inserted] = facts_.try_emplace(consumer.unique_id());
  if (!inserted) return it->second;
  ConsumerFacts& facts = it->second;
  facts.side_effect = HasSideEffectDeep(consumer);
  const Computation* body = consumer.opcode() == Opcode::kFusion
                                ? consumer.fused_computation()
                                : nullptr;
  if (body != nullptr && body->root_instruction() != nullptr) {
    facts.reused_operands = ReusedFusionParameters(*body);
  } else if (consumer.opcode() != Opcode::kFusion) {
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      facts.reused_operands.push_back(OperandElementUse(consumer, i) ==
                                      UseKind::kReuse);
    }
  }
  return facts;
}

FusionDecision GpuInstructionFusion::ShouldFuse(const Instruction& consumer,
                                                int64_t operand_index) const {
  if (operand_index < 0 || operand_index >= consumer.operand_count()) {
    return FusionDecision::Forbid("no such operand");
  }
  const Instruction& producer = *consumer.operand(operand_index);
  // What the fusion operations can build at all.
  if (producer.parent() != consumer.parent() || !CanBeMember(producer) ||
      consumer.opcode() == Opcode::kAlternatives || consumer.is_detached() ||
      HasControlEdges(consumer)) {
    return FusionDecision::Forbid("not a fusible edge");
  }
  // Output fusion (a fusion producer) is not done on GPUs.
  if (producer.opcode() == Opcode::kFusion) {
    return FusionDecision::Forbid("the producer is a fusion");
  }
  if (consumer.opcode() == Opcode::kFusion &&
      consumer.fusion_kind() == FusionKind::kCustom) {
    return FusionDecision::Forbid("the consumer is a custom fusion");
  }
  ConsumerFacts& facts = Facts(consumer);
  if (facts.side_effect) {
    return FusionDecision::Forbid("the consumer has side effects");
  }
  // A fusion without a body reuses everything.
  const bool reuses =
      operand_index >= static_cast<int64_t>(facts.reused_operands.size()) ||
      facts.reused_operands[operand_index];
  if (IsExpensive(producer) && reuses) {
    return FusionDecision::Forbid(
        "the producer is expensive, and the consumer reuses inputs");
  }
  // Transposed reads would break the reduction's coalescing.
  if (IsInputFusibleReduction(consumer) && IsPhysicallyTransposing(producer)) {
    return FusionDecision::Forbid(
        "fusing the producer would break read coalescing");
  }
  if (FusionDecision d = IsProducerConsumerFusible(producer, consumer); !d) {
    return d;
  }
  if (CreatesHeavyComputation(producer, consumer)) {
    return FusionDecision::Forbid(
        "the fusion would create a heavy computation");
  }
  // The generic InstructionFusion::ShouldFuse. "The root" is the producer
  // being its computation's root: its value must stay materialised.
  if (producer.IsRoot()) {
    return FusionDecision::Forbid(
        "not fusing into the output of the root instruction");
  }
  if (FusionWouldDuplicate(producer, consumer) &&
      (!options_.may_duplicate || IsExpensive(producer)) &&
      !IsAlwaysDuplicable(producer)) {
    return FusionDecision::Forbid(options_.may_duplicate
                                      ? "expensive producer would be duplicated"
                                      : "fusion pass cannot duplicate");
  }
  if (FusionDecision d = ShouldFuseInPlaceOp(producer, consumer); !d) return d;
  // GPU checks that cost more.
  if (FusionDecision d =
          FusionFitsInBudget(consumer, producer,
                             /*is_consumer_producer_fusion=*/true);
      !d) {
    return d;
  }
  // Checked last: it walks the computations the producer calls.
  if (HasSideEffectDeep(producer)) {
    return FusionDecision::Forbid("the producer has side effects");
  }
  if (consumer.opcode() != Opcode::kFusion) return FusionDecision::Allow();
  const Computation* body = consumer.fused_computation();
  if (body == nullptr || body->root_instruction() == nullptr) {
    return FusionDecision::Forbid("the consumer has no fused computation");
  }
  if (facts.evaluation == nullptr) {
    facts.evaluation = std::make_unique<FusionNodeIndexingEvaluation>(consumer);
  }
  if (facts.evaluation->CodeDuplicationTooHigh(producer)) {
    return FusionDecision::Forbid(
        "the fusion would result in an overly large code duplication");
  }
  return FusionDecision::Allow();
}

// When a regular fusion is refused for a producer with other users, XLA's
// GPU backend may fuse the edge as a multi-output fusion instead. That is
// left to the multi-output fusion pass.
//
// Cycle safety: the producer is a direct operand of the consumer and is
// duplicated, never turned into an output. The new fusion reads the
// producer's operands and the consumer's other operands, all of which
// existed before the consumer; the producer's other users keep reading the
// original. A path from the new fusion back to one of its operands would
// already have been a path from the consumer to its own operand, so no
// cycle can appear.
absl::StatusOr<bool> GpuInstructionFusion::RunWith(Module* module,
                                                   Rewriter& rw) {
  bool changed = false;
  for (Computation* computation : GetFusibleComputations(*module)) {
    facts_.clear();
    const std::vector<Instruction*> post_order =
        computation->MakeInstructionPostOrder();
    absl::flat_hash_set<int64_t> do_not_duplicate;
    if (options_.may_duplicate) {
      GloballyUnfusible analysis(*this, *computation);
      do_not_duplicate = analysis.Compute(post_order);
    }
    auto try_operand = [&](const Instruction& consumer, int64_t i) {
      const Instruction* operand = consumer.operand(i);
      return IsFusibleAtAll(*operand) &&
             !do_not_duplicate.contains(operand->unique_id()) &&
             static_cast<bool>(ShouldFuse(consumer, i));
    };
    // Dead code is left alone: a fusion of it would have no output.
    auto consumer_ok = [](const Instruction& c) {
      if (c.user_count() == 0 && !c.IsRoot()) return false;
      return IsFusibleAtAll(c) || c.opcode() == Opcode::kFusion;
    };

    if (rw.dry()) {
      // Every fusion of an original edge, each proposed on its own.
      absl::flat_hash_map<const Instruction*, int64_t> position;
      for (size_t k = 0; k < post_order.size(); ++k) {
        position[post_order[k]] = static_cast<int64_t>(k);
      }
      for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
        Instruction* consumer = *it;
        if (!consumer_ok(*consumer)) continue;
        const std::vector<int64_t> operands = SortedOperandNumbers(
            *consumer,
            [&](const Instruction& o) {
              auto p = position.find(&o);
              return p == position.end() ? int64_t{-1} : p->second;
            },
            [&](const Instruction& o) { return position.contains(&o); });
        absl::flat_hash_set<const Instruction*> proposed;
        for (int64_t i : operands) {
          Instruction* producer = consumer->operand(i);
          if (proposed.contains(producer) || !try_operand(*consumer, i)) {
            continue;
          }
          proposed.insert(producer);
          HLOGYM_RETURN_IF_ERROR(
              FuseProducerIntoConsumer(rw, producer, consumer,
                                       ChooseFusionKind(*producer, *consumer),
                                       ExternalUses::kDuplicate)
                  .status());
          changed = true;
        }
      }
      continue;
    }

    // Apply mode: the reverse post-order queue; a new fusion goes to the
    // back and is visited next. Entries are keyed by unique id: removed
    // instructions are freed and their addresses may be reused.
    struct Entry {
      Instruction* inst;
      int64_t id;
    };
    std::vector<Entry> queue;
    queue.reserve(post_order.size());
    absl::flat_hash_map<int64_t, int64_t> position;
    for (Instruction* inst : post_order) {
      position[inst->unique_id()] = static_cast<int64_t>(queue.size());
      queue.push_back({inst, inst->unique_id()});
    }
    while (!queue.empty()) {
      const Entry entry = queue.back();
      queue.pop_back();
      if (entry.inst == nullptr || rw.IsRemoved(entry.id)) continue;
      position.erase(entry.id);
      Instruction* consumer = entry.inst;
      if (!consumer_ok(*consumer)) continue;
      const std::vector<int64_t> operands = SortedOperandNumbers(
          *consumer,
          [&](const Instruction& o) { return position.at(o.unique_id()); },
          [&](const Instruction& o) {
            return position.contains(o.unique_id());
          });
      for (int64_t i : operands) {
        if (!try_operand(*consumer, i)) continue;
        Instruction* producer = consumer->operand(i);
        const int64_t producer_id = producer->unique_id();
        HLOGYM_ASSIGN_OR_RETURN(
            Instruction * fusion,
            FuseProducerIntoConsumer(rw, producer, consumer,
                                     ChooseFusionKind(*producer, *consumer),
                                     ExternalUses::kDuplicate));
        changed = true;
        facts_.clear();
        if (rw.IsRemoved(producer_id)) {
          auto p = position.find(producer_id);
          if (p != position.end()) {
            queue[p->second].inst = nullptr;
            position.erase(p);
          }
          do_not_duplicate.erase(producer_id);
        }
        position[fusion->unique_id()] = static_cast<int64_t>(queue.size());
        queue.push_back({fusion, fusion->unique_id()});
        break;
      }
    }
  }
  facts_.clear();
  return changed;
}

}  // namespace hlogym
