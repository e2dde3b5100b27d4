#include "hlogym/passes/fusion_merger.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlogym/cost/device.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/fusion_ops.h"
#include "hlogym/passes/instruction_fusion.h"

namespace hlogym {
namespace {

// Elements over every array leaf.
double ElementsRecursive(const Shape& s) {
  if (s.IsTuple()) {
    double n = 0;
    for (const Shape& t : s.tuple_shapes()) n += ElementsRecursive(t);
    return n;
  }
  return s.IsArray() ? static_cast<double>(s.ElementsIn()) : 0;
}

bool HasControlEdges(const Instruction& inst) {
  return !inst.control_predecessors().empty() ||
         !inst.control_successors().empty();
}

// An instruction the fusion operations can take as a merge target.
bool CanBeConsumer(const Instruction& inst) {
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
  if (inst.opcode() == Opcode::kFusion && inst.fused_computation() == nullptr) {
    return false;
  }
  return !HasSideEffectDeep(inst);
}

}  // namespace

bool TransposesMostData(const Instruction& fusion) {
  const Computation* body =
      fusion.opcode() == Opcode::kFusion ? fusion.fused_computation() : nullptr;
  if (body == nullptr) return false;
  const double total = ElementsRecursive(fusion.shape());
  if (total <= 0) return false;
  double score = 0;
  bool most = false;
  body->ForEachInstruction([&](const Instruction* inst) {
    if (most || inst->opcode() == Opcode::kParameter) return;
    if (IsPhysicallyTransposing(*inst)) {
      score += ElementsRecursive(inst->shape()) / total;
      most = score >= 0.5;
    }
  });
  return most;
}

FusionDecision FusionMerger::ShouldMerge(const Instruction& producer,
                                         const GpuPerformanceModel& model) {
  if (producer.opcode() != Opcode::kFusion) {
    return FusionDecision::Forbid("not a fusion");
  }
  if (producer.users().empty()) {
    return FusionDecision::Forbid("fusion has no users");
  }
  // Input fusions are organised around their hero and custom fusions match
  // library patterns: neither is merged further.
  if (producer.fusion_kind() != FusionKind::kLoop) {
    return FusionDecision::Forbid("not a loop fusion");
  }
  if (producer.shape().IsTuple()) {
    return FusionDecision::Forbid("the producer has several outputs");
  }
  // The result must stay materialised for the root role.
  if (producer.IsRoot()) {
    return FusionDecision::Forbid("the producer is the computation root");
  }
  if (HasControlEdges(producer) || HasSideEffectDeep(producer)) {
    return FusionDecision::Forbid("the producer cannot be moved");
  }
  bool has_reduction_user = false;
  for (const Instruction* user : producer.users()) {
    if (user->opcode() == Opcode::kBitcast) {
      return FusionDecision::Forbid("not fusing bitcast ops");
    }
    if (user->opcode() == Opcode::kFusion &&
        user->fusion_kind() == FusionKind::kCustom) {
      return FusionDecision::Forbid("not fusing custom fusions");
    }
    if (FusionDecision d = IsProducerConsumerFusible(producer, *user); !d) {
      return d;
    }
    if (!CanBeConsumer(*user) || user->parent() != producer.parent()) {
      return FusionDecision::Forbid(
          StrCat("cannot merge into '", user->name(), "'"));
    }
    has_reduction_user = has_reduction_user || IsInputFusibleReduction(*user);
  }
  // Transposed reads would ruin a reduction's coalesced access pattern.
  if (has_reduction_user && TransposesMostData(producer)) {
    return FusionDecision::Forbid("would read mostly uncoalesced");
  }
  for (const Instruction* user : producer.users()) {
    if (FusionDecision d =
            FusionFitsInBudget(*user, producer,
                               /*is_consumer_producer_fusion=*/true);
        !d) {
      return d;
    }
  }
  for (const Instruction* user : producer.users()) {
    if (FusionDecision d = ProducerConsumerMergedTooLarge(producer, *user);
        !d) {
      return d;
    }
    // The emitter's code duplication limit (the merged body would be
    // emitted at too many indices, or a concatenate, pad, reduce... more
    // than once).
    if (IsFusedIrEmitterInefficient(*user, producer)) {
      return FusionDecision::Forbid(StrCat("merging into '", user->name(),
                                           "' would duplicate code too much"));
    }
  }
  std::vector<const Instruction*> users(producer.users().begin(),
                                        producer.users().end());
  absl::StatusOr<GpuPerformanceModel::RunTimes> t =
      model.EstimateRunTimes(producer, users);
  if (!t.ok()) {
    return FusionDecision::Forbid(
        StrCat("no run-time estimate: ", t.status().message()));
  }
  if (t->time_fused > t->time_unfused) {
    return FusionDecision::Forbid("will execute slower if fused");
  }
  return FusionDecision::Allow();
}

absl::Status FusionMerger::SetOption(std::string_view key,
                                     std::string_view value) {
  if (key != "device") return Pass::SetOption(key, value);
  if (value.empty()) {
    return absl::InvalidArgumentError("option 'device' needs a value");
  }
  options_.device = std::string(value);
  return absl::OkStatus();
}

std::vector<std::string> FusionMerger::OptionNames() const {
  return {"device"};
}

absl::StatusOr<bool> FusionMerger::RunWith(Module* module, Rewriter& rw) {
  HLOGYM_ASSIGN_OR_RETURN(GpuDevice device, LoadDevice(options_.device));
  auto model = std::make_unique<GpuPerformanceModel>(std::move(device));
  bool changed = false;
  for (Computation* computation : GetFusibleComputations(*module)) {
    struct Entry {
      Instruction* inst;
      int64_t id;
    };
    std::vector<Entry> order;
    for (Instruction* inst : computation->MakeInstructionPostOrder()) {
      if (inst->opcode() == Opcode::kFusion) {
        order.push_back({inst, inst->unique_id()});
      }
    }
    // Apply mode: a fusion user that was merged into is replaced by a new
    // fusion; it is visited at the old one's place (XLA merges into the
    // user in place). Keyed by unique id: removed instructions are freed.
    absl::flat_hash_map<int64_t, Entry> replaced_by;
    for (const Entry& entry : order) {
      Instruction* producer = entry.inst;
      int64_t id = entry.id;
      while (rw.IsRemoved(id)) {
        auto it = replaced_by.find(id);
        if (it == replaced_by.end()) {
          producer = nullptr;
          break;
        }
        producer = it->second.inst;
        id = it->second.id;
      }
      if (producer == nullptr) continue;
      if (!ShouldMerge(*producer, *model)) continue;

      std::vector<Instruction*> users(producer->users().begin(),
                                      producer->users().end());
      // (unique id, is a fusion) of each user: merged users are freed.
      std::vector<std::pair<int64_t, bool>> user_ids;
      for (const Instruction* user : users) {
        user_ids.push_back(
            {user->unique_id(), user->opcode() == Opcode::kFusion});
      }
      // A user that is not a fusion becomes one of the kind the legacy
      // passes choose for the pair; fusion users keep their kind.
      bool one_kind = true;
      FusionKind kind = FusionKind::kLoop;
      bool kind_set = false;
      for (const Instruction* user : users) {
        if (user->opcode() == Opcode::kFusion) continue;
        const FusionKind k = ChooseFusionKind(*producer, *user);
        if (kind_set && k != kind) one_kind = false;
        kind = k;
        kind_set = true;
      }
      std::vector<Instruction*> merged;
      if (one_kind) {
        HLOGYM_ASSIGN_OR_RETURN(merged, MergeIntoUsers(rw, producer, kind));
      } else {
        for (Instruction* user : users) {
          const FusionKind k = user->opcode() == Opcode::kFusion
                                   ? user->fusion_kind()
                                   : ChooseFusionKind(*producer, *user);
          HLOGYM_ASSIGN_OR_RETURN(
              Instruction * f,
              FuseProducerIntoConsumer(rw, producer, user, k,
                                       ExternalUses::kDuplicate));
          merged.push_back(f);
        }
      }
      changed = true;
      if (rw.dry()) continue;
      // Only merged fusion users are visited later: a plain user wrapped
      // into a new fusion is a new instruction, which XLA does not visit.
      for (size_t k = 0; k < user_ids.size() && k < merged.size(); ++k) {
        if (user_ids[k].second) {
          replaced_by[user_ids[k].first] = {merged[k], merged[k]->unique_id()};
        }
      }
    }
  }
  return changed;
}

}  // namespace hlogym
