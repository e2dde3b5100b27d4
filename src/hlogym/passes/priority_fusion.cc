#include "hlogym/passes/priority_fusion.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "hlogym/cost/device.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/fusion_ops.h"

namespace hlogym {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool HasSubByteType(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (HasSubByteType(e)) return true;
    }
    return false;
  }
  return s.IsArray() && BitWidth(s.element_type()) < 8;
}

bool HasControlDependencies(const Instruction& inst) {
  return !inst.control_predecessors().empty() ||
         !inst.control_successors().empty();
}

// Clones `inst` (a fusion's body, or the instruction itself) into
// `scratch` reading `operands`; returns the value it produces.
Instruction* CloneInto(Computation& scratch, const Instruction& inst,
                       const std::vector<Instruction*>& operands) {
  const Computation* body =
      inst.opcode() == Opcode::kFusion ? inst.fused_computation() : nullptr;
  if (body == nullptr || body->root_instruction() == nullptr) {
    return scratch.AddInstruction(inst.CloneWithNewOperands(operands));
  }
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (int64_t p = 0; p < body->num_parameters(); ++p) {
    if (p < static_cast<int64_t>(operands.size())) {
      map[body->parameter_instruction(p)] = operands[p];
    }
  }
  for (const Instruction* i : body->MakeInstructionPostOrder()) {
    if (i->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> ops;
    ops.reserve(i->operand_count());
    for (const Instruction* o : i->operands()) {
      auto it = map.find(o);
      if (it == map.end()) return nullptr;
      ops.push_back(it->second);
    }
    map[i] = scratch.AddInstruction(i->CloneWithNewOperands(ops));
  }
  auto it = map.find(body->root_instruction());
  return it == map.end() ? nullptr : it->second;
}

// The fused computation a fusion of `producer` into `consumer` would have,
// built outside the module, so that the emitter analysis can look at it
// before anything is fused (XLA analyses a producer-consumer adaptor).
std::unique_ptr<Computation> BuildFusedComputation(
    const Instruction& producer, const Instruction& consumer) {
  auto scratch = std::make_unique<Computation>("fused_computation");
  scratch->set_is_fusion_computation(true);
  absl::flat_hash_map<const Instruction*, Instruction*> params;
  auto param = [&](const Instruction* external) {
    auto [it, inserted] = params.emplace(external, nullptr);
    if (inserted) {
      auto p =
          std::make_unique<Instruction>(Opcode::kParameter, external->shape());
      p->set_int_attr(static_cast<int64_t>(params.size()) - 1);
      it->second = scratch->AddInstruction(std::move(p));
    }
    return it->second;
  };
  std::vector<Instruction*> ops;
  for (const Instruction* o : producer.operands()) ops.push_back(param(o));
  Instruction* value = CloneInto(*scratch, producer, ops);
  if (value == nullptr) return nullptr;
  ops.clear();
  for (const Instruction* o : consumer.operands()) {
    ops.push_back(o == &producer ? value : param(o));
  }
  Instruction* root = CloneInto(*scratch, consumer, ops);
  if (root == nullptr) return nullptr;
  scratch->set_root_instruction(root);
  return scratch;
}

// A reduce, transpose, copy, scatter or concatenate (the ops a fused
// computation's emitter can be built around) in `inst` or its body.
bool HasHeroOp(const Instruction& inst) {
  auto special = [](const Instruction& i) {
    switch (i.opcode()) {
      case Opcode::kReduce:
      case Opcode::kTranspose:
      case Opcode::kCopy:
      case Opcode::kScatter:
      case Opcode::kConcatenate:
        return true;
      default:
        return false;
    }
  };
  bool found = special(inst);
  if (const Computation* body = inst.opcode() == Opcode::kFusion
                                    ? inst.fused_computation()
                                    : nullptr) {
    body->ForEachInstruction(
        [&](const Instruction* i) { found = found || special(*i); });
  }
  return found;
}

// A fusion's body parameters have the shapes of the operands they stand
// for (as in the fused computation BuildFusedComputation makes, whose
// parameters take the operands' shapes).
bool BodyParametersMatchOperands(const Instruction& inst) {
  const Computation* body = inst.fused_computation();
  if (body == nullptr || body->root_instruction() == nullptr ||
      body->num_parameters() != inst.operand_count()) {
    return false;
  }
  for (int64_t p = 0; p < body->num_parameters(); ++p) {
    const Instruction* param = body->parameter_instruction(p);
    if (param == nullptr || !(param->shape() == inst.operand(p)->shape())) {
      return false;
    }
  }
  return true;
}

// FusionKindForComputation(BuildFusedComputation(producer, consumer)) ==
// kLoop, read off the two instructions without building anything, for an
// array-shaped consumer (one root). The fused computation's kind depends on
// its root, the hero reached from the root through intermediate ops (each
// with at most one user), and sub-byte types among the root and parameter
// shapes; the walk crosses from the consumer into the producer where the
// consumer reads it. Empty where the built computation could differ in
// shape from the originals (parameters whose shapes are not their
// operands'), or the instructions are malformed: the caller builds then.
std::optional<bool> FusedIsLoopWithoutBuilding(const Instruction& producer,
                                               const Instruction& consumer) {
  if (!consumer.shape().IsArray() || !producer.shape().IsArray()) {
    return std::nullopt;
  }
  const bool producer_fused = producer.opcode() == Opcode::kFusion;
  const bool consumer_fused = consumer.opcode() == Opcode::kFusion;
  if ((producer_fused && !BodyParametersMatchOperands(producer)) ||
      (consumer_fused && !BodyParametersMatchOperands(consumer))) {
    return std::nullopt;
  }
  const Computation* pbody =
      producer_fused ? producer.fused_computation() : nullptr;
  const Computation* cbody =
      consumer_fused ? consumer.fused_computation() : nullptr;
  // The producer's value inside the fused computation.
  const Instruction* value =
      producer_fused ? pbody->root_instruction() : &producer;
  const Instruction* root =
      consumer_fused ? cbody->root_instruction() : &consumer;
  if (root->shape().IsTuple() || value->opcode() == Opcode::kParameter) {
    return std::nullopt;
  }
  // The consumer's reads of the producer: body parameters (fusion), else
  // the consumer itself. Their uses become uses of `value`.
  absl::InlinedVector<const Instruction*, 2> reads;
  bool reads_producer = false;
  for (int64_t k = 0; k < consumer.operand_count(); ++k) {
    if (consumer.operand(k) != &producer) continue;
    reads_producer = true;
    if (consumer_fused) {
      const Instruction* param = cbody->parameter_instruction(k);
      if (!(param->shape() == value->shape())) return std::nullopt;
      reads.push_back(param);
    }
  }
  if (!reads_producer) return std::nullopt;
  auto users_in_fused = [&](const Instruction* i) -> int64_t {
    if (i == root && !consumer_fused) return 0;
    if (i != value) return i->user_count();
    if (!consumer_fused) return (producer_fused ? value->user_count() : 0) + 1;
    absl::InlinedVector<const Instruction*, 4> users;
    for (const Instruction* param : reads) {
      for (const Instruction* u : param->users()) {
        if (std::find(users.begin(), users.end(), u) == users.end()) {
          users.push_back(u);
        }
      }
    }
    return (producer_fused ? value->user_count() : 0) +
           static_cast<int64_t>(users.size());
  };
  // WalkToHero over the fused computation.
  const Instruction* hero = root;
  while (users_in_fused(hero) <= 1 && IsIntermediateIgnoringUsers(*hero, 1)) {
    const Instruction* o = hero->operand(0);
    const bool in_consumer =
        hero != value && (hero == &consumer || hero->parent() == cbody);
    if (in_consumer && consumer_fused && o->opcode() == Opcode::kParameter) {
      if (std::find(reads.begin(), reads.end(), o) == reads.end()) break;
      o = value;
    } else if (in_consumer && !consumer_fused) {
      if (o != &producer) break;
      o = value;
    } else if (!in_consumer && (!producer_fused || hero->parent() != pbody ||
                                o->opcode() == Opcode::kParameter)) {
      break;  // the producer's operands are parameters
    }
    hero = o;
  }
  bool sub_byte = HasSubByteType(root->shape());
  for (const Instruction* o : producer.operands()) {
    sub_byte = sub_byte || HasSubByteType(o->shape());
  }
  for (const Instruction* o : consumer.operands()) {
    if (o != &producer) sub_byte = sub_byte || HasSubByteType(o->shape());
  }
  if (sub_byte) return true;
  const bool input =
      IsRealReductionHero(*root, *hero) || IsTiledTranspose(*hero) ||
      root->opcode() == Opcode::kScatter ||
      (hero->opcode() == Opcode::kConcatenate && hero->operand_count() <= 4);
  return !input;
}

// The fusion of `producer` into `consumer` would use the loop emitter. A
// consumer without hero ops whose root has other than one operand is its
// own hero (the producer cannot lend it one), which spares the walk.
bool FusedIsLoop(const Instruction& producer, const Instruction& consumer) {
  if (consumer.shape().IsArray() && !HasHeroOp(consumer)) {
    const Computation* body = consumer.opcode() == Opcode::kFusion
                                  ? consumer.fused_computation()
                                  : nullptr;
    const Instruction* root =
        body != nullptr ? body->root_instruction() : &consumer;
    if (root != nullptr && root->operand_count() != 1) return true;
  }
  if (std::optional<bool> loop =
          FusedIsLoopWithoutBuilding(producer, consumer)) {
    return *loop;
  }
  return PriorityFusion::FusedKind(producer, consumer) == FusionKind::kLoop;
}

// The producer is emitted by the reduction emitter on its own.
bool IsReductionEmitter(const Instruction& inst) {
  if (!inst.shape().IsArray() || HasSubByteType(inst.shape())) return false;
  for (const Instruction* o : inst.operands()) {
    if (HasSubByteType(o->shape())) return false;
  }
  if (inst.opcode() == Opcode::kFusion) {
    const Computation* c = inst.fused_computation();
    return c != nullptr && c->root_instruction() != nullptr &&
           FusionKindForComputation(*c) == FusionKind::kInput &&
           IsInputFusibleReduction(inst);
  }
  return inst.opcode() == Opcode::kReduce && IsRealReduction(inst);
}

// XLA keeps broadcasts out of bitcasts unless the bitcast only feeds
// transposes (the broadcast then folds into the transposed read).
bool IsBroadcastIntoTransposingBitcast(const Instruction& producer,
                                       const Instruction& consumer) {
  if (producer.opcode() != Opcode::kBroadcast || consumer.user_count() == 0) {
    return false;
  }
  return std::all_of(
      consumer.users().begin(), consumer.users().end(),
      [](const Instruction* u) { return u->opcode() == Opcode::kTranspose; });
}

// The fusion operations refuse instructions with control dependencies or
// side effects (XLA's fusion keeps control edges on the fusion, which the
// rewrite API does not model).
bool FusionOpsAccept(const Instruction& inst) {
  return !HasControlDependencies(inst) && !HasSideEffectDeep(inst);
}

// A consumer nobody reads (and not the root) has no result a fusion could
// output; DCE removes it.
bool IsDead(const Instruction& inst) {
  return inst.user_count() == 0 && !inst.IsRoot();
}

// What the rules need to know about one instruction that takes a walk over
// a fusion body. None of it depends on the rest of the graph.
struct RuleMetrics {
  bool significant_reduce = false;
  bool reduction_emitter = false;
  int64_t shared_memory = 0;
  int64_t unnested_reductions = 0;
  int64_t fused_instructions = 1;
};

RuleMetrics ComputeRuleMetrics(const Instruction& inst) {
  RuleMetrics m;
  m.significant_reduce = ContainsSignificantReduce(inst);
  m.reduction_emitter = IsReductionEmitter(inst);
  m.shared_memory = SharedMemoryUsage(inst);
  m.unnested_reductions = CountUnnestedReductions(inst);
  if (const Computation* body = inst.opcode() == Opcode::kFusion
                                    ? inst.fused_computation()
                                    : nullptr) {
    m.fused_instructions = 0;
    body->ForEachInstruction([&](const Instruction* i) {
      m.fused_instructions += i->opcode() != Opcode::kParameter;
    });
  }
  return m;
}

// RuleMetrics memoised by unique id (instructions never change in place).
class RuleCache {
 public:
  RuleMetrics Get(const Instruction& inst) {
    auto [it, inserted] = metrics_.try_emplace(inst.unique_id());
    if (inserted) it->second = ComputeRuleMetrics(inst);
    return it->second;
  }

 private:
  absl::flat_hash_map<int64_t, RuleMetrics> metrics_;
};

// Rules 1 and 3-9 of CanFuse (see the header). `cache` (optional) spares
// walking fusion bodies again; budget and size limits fall back to the
// shared checks whenever the quick sums do not settle them, so the
// decisions and reasons are those of gpu_fusible.
FusionDecision CanFuseRules(const Instruction& producer,
                            const Instruction& consumer,
                            RuleCache* cache = nullptr) {
  // 1. The root's value is the computation's result: it stays a kernel of
  // its own even if other instructions read it.
  if (producer.IsRoot()) {
    return FusionDecision::Forbid(
        "not fusing into the output of the root instruction");
  }
  if (!IsFusible(producer)) {
    return FusionDecision::Forbid("the producer is not fusible");
  }
  if (!IsFusible(consumer)) {
    return FusionDecision::Forbid("the consumer is not fusible");
  }
  // 3.
  if (!producer.shape().IsArray() || !consumer.shape().IsArray()) {
    return FusionDecision::Forbid("not fusing tuple-shaped instructions");
  }
  if (consumer.opcode() == Opcode::kBitcast &&
      !IsBroadcastIntoTransposingBitcast(producer, consumer)) {
    return FusionDecision::Forbid(
        "not fusing into a single bitcast as consumer");
  }
  // 4. Scatter has no elemental emitter.
  if (FusionDecision d = CheckScatterLegality(producer, consumer); !d) {
    return d;
  }
  const RuleMetrics pm =
      cache != nullptr ? cache->Get(producer) : ComputeRuleMetrics(producer);
  const RuleMetrics cm =
      cache != nullptr ? cache->Get(consumer) : ComputeRuleMetrics(consumer);
  // 5. The cost model does not understand reduce-into-reduce (no tiling
  // analysis).
  const bool consumer_reduces = cm.significant_reduce;
  if (consumer_reduces && pm.significant_reduce) {
    return FusionDecision::Forbid(
        "both the producer and the consumer contain a reduce");
  }
  if (consumer_reduces && FindHero(producer).opcode() == Opcode::kTranspose) {
    return FusionDecision::Forbid(
        "not fusing a transpose into a significant reduce");
  }
  // 6. Epilogue fusion must keep the reduction emitter.
  if (pm.reduction_emitter && FusedIsLoop(producer, consumer)) {
    return FusionDecision::Forbid(
        "fusion into output of a reduce fusion would create a loop fusion");
  }
  // 7. Both sides are arrays: one output buffer each.
  const bool fits =
      pm.shared_memory + cm.shared_memory <= kSharedMemoryPerBlockBytes &&
      pm.unnested_reductions + cm.unnested_reductions <=
          kMaxUnnestedReductionsPerFusion &&
      producer.operand_count() + consumer.operand_count() - 1 + 2 <=
          kMaxOperandsAndOutputsPerFusion;
  if (!fits) {
    if (FusionDecision d = FusionFitsInBudget(consumer, producer,
                                              /*is_consumer_producer_fusion=*/
                                              true);
        !d) {
      return d;
    }
  }
  // 8.
  if (pm.fused_instructions + cm.fused_instructions > kMaxFusedInstructions) {
    if (FusionDecision d = ProducerConsumerMergedTooLarge(producer, consumer);
        !d) {
      return d;
    }
  }
  // 9.
  if (FusionDecision d = ShouldFuseInPlaceOp(producer, consumer); !d) {
    return d;
  }
  return FusionDecision::Allow();
}

// Model estimates and CanFuse results, cached by unique id. Instructions
// are never changed in place (fusing makes new ones), so an id's entries
// stay valid while the instruction lives.
class PriorityCalculator {
 public:
  explicit PriorityCalculator(const GpuPerformanceModel& model)
      : model_(model), launch_(model.device().kernel_launch_overhead_seconds) {}

  // exec time of one kernel; NaN when the model cannot estimate it.
  double Exec(const Instruction& inst) {
    auto [it, inserted] = exec_.try_emplace(inst.unique_id(), 0.0);
    if (inserted) {
      absl::StatusOr<RunTimeData> d =
          model_.EstimateRunTime(inst, Analysis(inst));
      it->second = d.ok() ? d->exec_time : std::nan("");
    }
    return it->second;
  }

  // GpuPerformanceModel::EstimateFusedRunTime(...).exec_time; NaN when
  // the model cannot estimate the pair.
  double FusedExec(const Instruction& producer, const Instruction& consumer) {
    auto [it, inserted] = fused_.try_emplace(
        std::make_pair(producer.unique_id(), consumer.unique_id()), 0.0);
    if (inserted) {
      // Two references into the map: the first must survive the second
      // lookup's insertion, hence the boxes.
      const KernelAnalysis& pa = Analysis(producer);
      const KernelAnalysis& ca = Analysis(consumer);
      absl::StatusOr<RunTimeData> d =
          model_.EstimateFusedRunTime(producer, consumer, pa, ca);
      it->second = d.ok() ? d->exec_time : std::nan("");
    }
    return it->second;
  }

  bool CanFuse(const Instruction& producer, const Instruction& consumer) {
    auto [it, inserted] = can_fuse_.try_emplace(
        std::make_pair(producer.unique_id(), consumer.unique_id()), false);
    if (inserted) {
      it->second =
          static_cast<bool>(CanFuseRules(producer, consumer, &rules_)) &&
          Accepted(producer) && Accepted(consumer) && !IsDead(consumer);
    }
    return it->second;
  }

  // Priority as described in the header (-inf when not worth queueing).
  double Priority(const Instruction& producer) {
    if (producer.opcode() == Opcode::kBitcast) return kInf;
    if (producer.opcode() == Opcode::kConstant) return -kInf;
    bool has_non_bitcast_user = false;
    for (const Instruction* u : producer.users()) {
      if (u->opcode() == Opcode::kBitcast) continue;
      has_non_bitcast_user = true;
      if (!CanFuse(producer, *u)) return -kInf;
    }
    if (!has_non_bitcast_user) return -kInf;
    // time_unfused - time_fused = launch + exec(P) + sum over consumers of
    // (exec(C) - exec(P fused into C)).
    double priority = launch_ + Exec(producer);
    for (const Instruction* u : producer.users()) {
      if (u->opcode() == Opcode::kBitcast) continue;
      priority += Exec(*u) - FusedExec(producer, *u);
    }
    return std::isnan(priority) ? -kInf : priority;
  }

 private:
  // The model's analysis of an instruction as a kernel. It depends on the
  // instruction alone, and instructions are never changed in place.
  const KernelAnalysis& Analysis(const Instruction& inst) {
    std::unique_ptr<KernelAnalysis>& slot = analyses_[inst.unique_id()];
    if (slot == nullptr) {
      slot = std::make_unique<KernelAnalysis>(model_.AnalyzeKernel(inst));
    }
    return *slot;
  }

  // FusionOpsAccept, cached (fusion bodies are walked).
  bool Accepted(const Instruction& inst) {
    auto [it, inserted] = accepted_.try_emplace(inst.unique_id(), false);
    if (inserted) it->second = FusionOpsAccept(inst);
    return it->second;
  }

  const GpuPerformanceModel& model_;
  const double launch_;
  absl::flat_hash_map<int64_t, bool> accepted_;
  RuleCache rules_;
  absl::flat_hash_map<int64_t, std::unique_ptr<KernelAnalysis>> analyses_;
  absl::flat_hash_map<int64_t, double> exec_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, double> fused_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, bool> can_fuse_;
};

bool IsCandidate(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return false;
    default:
      return inst.user_count() > 0 && IsFusible(inst);
  }
}

bool IsSmallConstant(const Instruction& inst) {
  return inst.opcode() == Opcode::kConstant && inst.shape().IsArray() &&
         inst.shape().ElementsIn() <= 1;
}

// One computation's run.
class FusionQueue {
 public:
  FusionQueue(const GpuPerformanceModel& model, Rewriter& rw,
              Computation* computation, PriorityFusionStats* stats)
      : calc_(model), rw_(rw), computation_(computation), stats_(stats) {}

  absl::StatusOr<bool> RunApply() {
    for (Instruction* inst : computation_->MakeInstructionPostOrder()) {
      if (IsCandidate(*inst)) SetPriority(inst);
    }
    bool changed = false;
    while (Instruction* producer = Pop()) {
      const int64_t producer_id = producer->unique_id();
      std::vector<Instruction*> consumers;
      bool stale = false;
      for (Instruction* u : producer->users()) {
        const bool ok = calc_.CanFuse(*producer, *u);
        if (producer->opcode() == Opcode::kBitcast) {
          if (ok) consumers.push_back(u);
          continue;
        }
        if (u->opcode() == Opcode::kBitcast) continue;
        // The priority was computed when every consumer could fuse; the
        // check guards against a user that changed since.
        if (!ok) stale = true;
        consumers.push_back(u);
      }
      if (stale) {
        SetPriority(producer);
        continue;
      }
      if (consumers.empty()) continue;
      ++stats_->producers_fused;
      stats_->order.push_back(producer->name());
      std::vector<Instruction*> fusions;
      for (Instruction* consumer : consumers) {
        if (consumer->opcode() == Opcode::kBitcast) continue;
        const int64_t consumer_id = consumer->unique_id();
        HLOGYM_ASSIGN_OR_RETURN(Instruction * fusion, Fuse(producer, consumer));
        nodes_.erase(consumer_id);
        fusions.push_back(fusion);
        ++stats_->fusions;
        changed = true;
      }
      // The fusion operation removed the producer with its last user.
      if (rw_.IsRemoved(producer_id)) nodes_.erase(producer_id);
      UpdateAfterFusion(producer_id, fusions);
    }
    HLOGYM_ASSIGN_OR_RETURN(bool constants, FuseSmallConstants());
    return changed || constants;
  }

  // Dry mode: single-step proposals on the original graph.
  absl::StatusOr<bool> RunDry() {
    bool proposed = false;
    for (Instruction* producer : computation_->MakeInstructionPostOrder()) {
      if (!IsCandidate(*producer)) continue;
      if (!(calc_.Priority(*producer) >= 0)) continue;
      for (Instruction* u : producer->users()) {
        if (u->opcode() == Opcode::kBitcast) continue;
        if (!calc_.CanFuse(*producer, *u)) continue;
        HLOGYM_RETURN_IF_ERROR(Fuse(producer, u).status());
        ++stats_->fusions;
        proposed = true;
      }
    }
    HLOGYM_ASSIGN_OR_RETURN(bool constants, FuseSmallConstants());
    return proposed || constants;
  }

 private:
  // Fuses `producer` into `consumer` (duplicated for its other users). The
  // kind is that of the emitter the fused computation gets, as XLA derives
  // it from the fusion analysis; it is set on the fusion this run just
  // created (no original instruction changes).
  absl::StatusOr<Instruction*> Fuse(Instruction* producer,
                                    Instruction* consumer) {
    HLOGYM_ASSIGN_OR_RETURN(
        Instruction * fusion,
        FuseProducerIntoConsumer(rw_, producer, consumer, FusionKind::kLoop,
                                 ExternalUses::kDuplicate));
    SetKind(fusion);
    return fusion;
  }
  // Fuses producers (small constants) into their consumer, the last member.
  absl::StatusOr<Instruction*> Fuse(const std::vector<Instruction*>& members) {
    FuseOptions options;
    options.kind = FusionKind::kLoop;
    options.external_uses = ExternalUses::kDuplicate;
    const Instruction* consumer = members.back();
    options.name = consumer->opcode() == Opcode::kFusion
                       ? std::string_view(consumer->name())
                       : std::string_view("fusion");
    HLOGYM_ASSIGN_OR_RETURN(Instruction * fusion,
                            FuseInstructions(rw_, members, options));
    SetKind(fusion);
    return fusion;
  }
  static void SetKind(Instruction* fusion) {
    if (const Computation* body = fusion->fused_computation()) {
      fusion->set_fusion_kind(FusionKindForComputation(*body));
    }
  }

  struct Node {
    Instruction* inst = nullptr;
    uint64_t version = 0;
    bool queued = false;
  };
  struct Entry {
    double priority;
    int64_t id;
    uint64_t version;
    bool operator<(const Entry& o) const {
      return priority != o.priority ? priority < o.priority : id < o.id;
    }
  };

  void SetPriority(Instruction* inst) {
    const double priority = calc_.Priority(*inst);
    Node& node = nodes_[inst->unique_id()];
    node.inst = inst;
    ++node.version;
    node.queued = priority >= 0;
    if (node.queued) queue_.push({priority, inst->unique_id(), node.version});
  }

  // The queued instruction with the highest (priority, id); stale entries
  // (re-prioritised or removed instructions) are skipped.
  Instruction* Pop() {
    while (!queue_.empty()) {
      const Entry e = queue_.top();
      queue_.pop();
      auto it = nodes_.find(e.id);
      if (it == nodes_.end() || it->second.version != e.version ||
          !it->second.queued || rw_.IsRemoved(e.id)) {
        continue;
      }
      it->second.queued = false;
      return it->second.inst;
    }
    return nullptr;
  }

  // New fusions and their fusible operands (not the producer, constants or
  // get-tuple-elements) get their priorities recomputed; per-pair terms of
  // unchanged pairs come from the caches.
  void UpdateAfterFusion(int64_t producer_id,
                         const std::vector<Instruction*>& fusions) {
    // The new fusions are not members of later fusions of the same
    // producer (they no longer read it), so all are alive here.
    std::vector<Instruction*> update;
    absl::flat_hash_set<int64_t> seen;
    for (Instruction* f : fusions) {
      if (seen.insert(f->unique_id()).second) update.push_back(f);
    }
    for (Instruction* f : fusions) {
      for (Instruction* o : f->operands()) {
        if (o->unique_id() == producer_id || o->opcode() == Opcode::kConstant ||
            o->opcode() == Opcode::kGetTupleElement || !IsCandidate(*o)) {
          continue;
        }
        if (seen.insert(o->unique_id()).second) update.push_back(o);
      }
    }
    for (Instruction* inst : update) SetPriority(inst);
  }

  // After the queue: constants of at most one element go into each
  // fusible user. XLA fuses them one constant and one user at a time; the
  // result is the same as fusing all of a user's small constants at once,
  // which clones a large consumer once instead of once per constant.
  absl::StatusOr<bool> FuseSmallConstants() {
    std::vector<std::pair<int64_t, Instruction*>> users;
    for (Instruction* inst : computation_->MakeInstructionPostOrder()) {
      users.push_back({inst->unique_id(), inst});
    }
    bool changed = false;
    std::vector<Instruction*> members;
    for (auto [id, user] : users) {
      if (rw_.IsRemoved(id) || !IsFusible(*user) || IsDead(*user) ||
          !FusionOpsAccept(*user)) {
        continue;
      }
      members.clear();
      for (Instruction* o : user->operands()) {
        if (IsSmallConstant(*o) && CheckScatterLegality(*o, *user) &&
            FusionOpsAccept(*o) &&
            std::find(members.begin(), members.end(), o) == members.end()) {
          members.push_back(o);
        }
      }
      if (members.empty()) continue;
      stats_->constant_fusions += static_cast<int64_t>(members.size());
      members.push_back(user);
      HLOGYM_RETURN_IF_ERROR(Fuse(members).status());
      changed = true;
    }
    return changed;
  }

  PriorityCalculator calc_;
  Rewriter& rw_;
  Computation* computation_;
  PriorityFusionStats* stats_;
  absl::flat_hash_map<int64_t, Node> nodes_;
  std::priority_queue<Entry> queue_;
};

}  // namespace

PriorityFusion::PriorityFusion(PriorityFusionOptions options)
    : options_(std::move(options)) {}

PriorityFusion::~PriorityFusion() = default;

absl::Status PriorityFusion::SetOption(std::string_view key,
                                       std::string_view value) {
  if (key == "device") {
    if (value.empty()) {
      return absl::InvalidArgumentError("option 'device' needs a value");
    }
    options_.device = std::string(value);
    return absl::OkStatus();
  }
  return Pass::SetOption(key, value);
}

std::vector<std::string> PriorityFusion::OptionNames() const {
  return {"device"};
}

absl::StatusOr<const GpuPerformanceModel*> PriorityFusion::Model() {
  if (model_ == nullptr || model_device_ != options_.device) {
    HLOGYM_ASSIGN_OR_RETURN(GpuDevice device, LoadDevice(options_.device));
    model_ = std::make_unique<GpuPerformanceModel>(std::move(device));
    model_device_ = options_.device;
  }
  return model_.get();
}

absl::StatusOr<double> PriorityFusion::Priority(const Instruction& producer) {
  HLOGYM_ASSIGN_OR_RETURN(const GpuPerformanceModel* model, Model());
  PriorityCalculator calc(*model);
  return calc.Priority(producer);
}

absl::StatusOr<double> PriorityFusion::FusedExecTime(
    const Instruction& producer, const Instruction& consumer) {
  HLOGYM_ASSIGN_OR_RETURN(const GpuPerformanceModel* model, Model());
  PriorityCalculator calc(*model);
  const double t = calc.FusedExec(producer, consumer);
  if (std::isnan(t)) {
    return absl::InvalidArgumentError(StrCat("no estimate for fusing '",
                                             producer.name(), "' into '",
                                             consumer.name(), "'"));
  }
  return t;
}

bool PriorityFusion::FusedIsLoop(const Instruction& producer,
                                 const Instruction& consumer) {
  return hlogym::FusedIsLoop(producer, consumer);
}

FusionKind PriorityFusion::FusedKind(const Instruction& producer,
                                     const Instruction& consumer) {
  std::unique_ptr<Computation> fused =
      BuildFusedComputation(producer, consumer);
  if (fused == nullptr) return FusionKind::kLoop;
  return FusionKindForComputation(*fused);
}

FusionDecision PriorityFusion::CanFuse(const Instruction& producer,
                                       const Instruction& consumer) {
  if (FusionDecision d = CanFuseRules(producer, consumer); !d) return d;
  if (!FusionOpsAccept(producer) || !FusionOpsAccept(consumer)) {
    return FusionDecision::Forbid(
        "control dependencies or side effects on the producer or consumer");
  }
  if (IsDead(consumer)) return FusionDecision::Forbid("the consumer is dead");
  return FusionDecision::Allow();
}

absl::StatusOr<bool> PriorityFusion::RunWith(Module* module, Rewriter& rw) {
  stats_ = {};
  HLOGYM_ASSIGN_OR_RETURN(const GpuPerformanceModel* model, Model());
  bool changed = false;
  for (Computation* computation : GetFusibleComputations(*module)) {
    FusionQueue queue(*model, rw, computation, &stats_);
    HLOGYM_ASSIGN_OR_RETURN(bool c,
                            rw.dry() ? queue.RunDry() : queue.RunApply());
    changed = changed || c;
  }
  return changed;
}

}  // namespace hlogym
