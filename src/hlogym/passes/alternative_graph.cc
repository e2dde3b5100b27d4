#include "hlogym/passes/alternative_graph.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/call_counts.h"
#include "hlogym/passes/fusion_ops.h"

namespace hlogym {

std::vector<Computation*> ObservationComputationOrder(const Module& module) {
  std::vector<Computation*> order = module.MakeComputationPostOrder();
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<Instruction*> ObservationOrder(const Module& module) {
  std::vector<Instruction*> out;
  out.reserve(module.instruction_count());
  for (Computation* c : ObservationComputationOrder(module)) {
    const std::vector<Instruction*>& po = c->InstructionPostOrder();
    out.insert(out.end(), po.begin(), po.end());
  }
  return out;
}

std::vector<Instruction*> AlternativeNodes(const Module& module) {
  std::vector<Instruction*> out;
  for (Computation* c : ObservationComputationOrder(module)) {
    bool any = false;
    c->ForEachInstruction(
        [&](Instruction* i) { any |= i->opcode() == Opcode::kAlternatives; });
    if (!any) continue;
    for (Instruction* i : c->InstructionPostOrder()) {
      if (i->opcode() == Opcode::kAlternatives) out.push_back(i);
    }
  }
  return out;
}

bool HasAlternativeNodes(const Module& module) {
  bool any = false;
  for (const auto& c : module.computations()) {
    c->ForEachInstruction(
        [&](Instruction* i) { any |= i->opcode() == Opcode::kAlternatives; });
    if (any) return true;
  }
  return false;
}

namespace {

// Computations reachable from the entry through called computations.
absl::flat_hash_set<const Computation*> Reachable(const Module& module) {
  absl::flat_hash_set<const Computation*> seen;
  std::vector<const Computation*> stack;
  if (module.entry_computation() != nullptr) {
    stack.push_back(module.entry_computation());
    seen.insert(module.entry_computation());
  }
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    c->ForEachInstruction([&](const Instruction* i) {
      for (const Computation* callee : i->called_computations()) {
        if (seen.insert(callee).second) stack.push_back(callee);
      }
    });
  }
  return seen;
}

// Removable once it has no users.
bool RemovableWhenUnused(const Instruction* i) {
  return i != i->parent()->root_instruction() &&
         i->opcode() != Opcode::kParameter && !HasSideEffectDeep(*i) &&
         i->control_predecessors().empty() && i->control_successors().empty();
}

bool Removable(const Instruction* i) {
  return i->user_count() == 0 && RemovableWhenUnused(i);
}

// Removes `start` if dead, then operands left without users (iterative).
// `gone` collects what was removed, across calls: a later start may have
// been removed already (it is never dereferenced then; nothing is
// allocated while pruning, so addresses are not reused).
absl::Status RemoveDeadCone(Instruction* start, int64_t* removed,
                            absl::flat_hash_set<Instruction*>& gone) {
  if (gone.contains(start)) return absl::OkStatus();
  Computation* c = start->parent();
  std::vector<Instruction*> stack = {start};
  while (!stack.empty()) {
    Instruction* i = stack.back();
    stack.pop_back();
    if (gone.contains(i) || !Removable(i)) continue;
    InstructionVector operands = i->operands();
    HLOGYM_RETURN_IF_ERROR(c->RemoveInstruction(i));
    gone.insert(i);
    ++*removed;
    for (Instruction* op : operands) {
      if (op->parent() == c && !gone.contains(op)) stack.push_back(op);
    }
  }
  return absl::OkStatus();
}

// Drops parameters of a fused computation that nothing reads, and the
// matching operands of its (single) fusion instruction.
absl::Status PruneFusionParameters(Module* module, ApplyStats* stats,
                                   absl::flat_hash_set<Instruction*>& gone) {
  // Pruning a parameter only removes instructions of the fusion's caller,
  // so without an unused parameter to begin with there is nothing to do
  // (the common case: counting callers costs a scan of the module).
  if (!HasUnusedFusionParameters(*module)) return absl::OkStatus();
  const auto callers = CountCalls(*module);
  for (const auto& comp : module->computations()) {
    Computation* fc = comp.get();
    if (!fc->IsFusionComputation()) continue;
    auto it = callers.find(fc);
    if (it == callers.end() || it->second.count != 1) continue;
    Instruction* fusion = it->second.first;
    // The counts predate this loop: a fusion removed with a pruned
    // operand's dead cone is skipped (and not dereferenced).
    if (gone.contains(fusion) || fusion->opcode() != Opcode::kFusion) continue;
    HLOGYM_ASSIGN_OR_RETURN(std::vector<Instruction*> dropped,
                            RemoveUnusedFusionParameters(fusion));
    stats->removed_fusion_parameters += static_cast<int64_t>(dropped.size());
    for (Instruction* operand : dropped) {
      if (operand->user_count() == 0) {
        HLOGYM_RETURN_IF_ERROR(
            RemoveDeadCone(operand, &stats->removed_instructions, gone));
      }
    }
  }
  return absl::OkStatus();
}

// Builds the pending bodies (see fusion_ops.h) of the candidates that
// survive the decisions just rerouted: every pending fusion outside the
// dead cone that pruning from `nodes` will remove. The cone is worked out
// here as RemoveDeadCone walks it, without removing anything, because a
// body is built from its members and pruning may remove them (a consumer
// fused into its own user dies once that fusion is taken). Later pruning of
// fusion parameters can only remove more, so no pending body survives.
// The walk keeps its counts in the scratch slots of `touched` (the
// computations holding the nodes and the pending fusions; operands in
// other computations are not followed): a dry run over a whole graph puts
// most of it in the cone, where hash maps cost more than the walk.
// `cone` receives the dead cone in an order RemoveInstruction accepts
// (users first), so pruning need not walk it again.
absl::Status BuildSurvivingBodies(
    std::span<Instruction* const> nodes,
    const std::vector<Instruction*>& pending,
    const absl::flat_hash_set<Computation*>& touched,
    std::vector<Instruction*>* cone) {
  // scratch: kUnseen, kDead, or the users not yet removed.
  constexpr int64_t kUnseen = -1, kDead = -2;
  for (Computation* c : touched) {
    c->ForEachInstruction([](Instruction* i) { i->scratch = kUnseen; });
  }
  auto left = [](Instruction* i) -> int64_t& {
    if (i->scratch == kUnseen) i->scratch = i->user_count();
    return i->scratch;
  };
  std::vector<Instruction*> stack(nodes.begin(), nodes.end());
  absl::InlinedVector<Instruction*, 4> ops;
  while (!stack.empty()) {
    Instruction* i = stack.back();
    stack.pop_back();
    if (i->scratch == kDead || left(i) != 0 || !RemovableWhenUnused(i)) {
      continue;
    }
    i->scratch = kDead;
    cone->push_back(i);
    // Removing `i` takes it off each distinct operand's user list once.
    ops.assign(i->operands().begin(), i->operands().end());
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    for (Instruction* op : ops) {
      if (op->parent() != i->parent()) continue;
      --left(op);
      stack.push_back(op);
    }
  }
  // Decided before building: building clones members, which may use the
  // scratch slots.
  std::vector<Instruction*> survivors;
  for (Instruction* f : pending) {
    if (f->scratch != kDead) survivors.push_back(f);
  }
  return BuildPendingFusionBodies(survivors);
}

}  // namespace

bool IsUnusedParameter(const Computation& body, const Instruction* param) {
  return param != nullptr && param->user_count() == 0 &&
         param != body.root_instruction();
}

bool HasUnusedFusionParameters(const Module& module) {
  for (const auto& c : module.computations()) {
    if (!c->IsFusionComputation()) continue;
    for (const Instruction* p : c->parameter_instructions()) {
      if (IsUnusedParameter(*c, p)) return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<Instruction*>> RemoveUnusedFusionParameters(
    Instruction* fusion) {
  std::vector<Instruction*> dropped;
  Computation* body = fusion->fused_computation();
  if (body == nullptr || body->num_parameters() != fusion->operand_count()) {
    return dropped;
  }
  for (int64_t p = body->num_parameters() - 1; p >= 0; --p) {
    if (!IsUnusedParameter(*body, body->parameter_instruction(p))) continue;
    Instruction* operand = fusion->operand(p);
    HLOGYM_RETURN_IF_ERROR(body->RemoveUnusedParameter(p));
    HLOGYM_RETURN_IF_ERROR(fusion->RemoveOperandAt(p));
    dropped.push_back(operand);
  }
  return dropped;
}

namespace {

// PruneAfterApply once the dead cone of the decisions is gone (`gone`
// holds what was removed): unused fusion parameters, then computations no
// longer reachable. `before`: the computations reachable before.
absl::Status PruneRest(Module* module,
                       const absl::flat_hash_set<const Computation*>& before,
                       absl::flat_hash_set<Instruction*>& gone,
                       ApplyStats* stats) {
  HLOGYM_RETURN_IF_ERROR(PruneFusionParameters(module, stats, gone));
  // Computations that were reachable before and no longer are; one that
  // something unreachable still calls (dead code the input already had)
  // stays.
  absl::flat_hash_set<const Computation*> now = Reachable(*module);
  absl::flat_hash_set<const Computation*> dropped;
  for (const Computation* c : before) {
    if (!now.contains(c)) dropped.insert(c);
  }
  // Only computations no longer reachable can call one in `dropped`.
  stats->removed_computations += module->RemoveComputationsIfUncalled(
      dropped, [&](const Computation* c) { return !now.contains(c); });
  return absl::OkStatus();
}

// PruneAfterApply with the dead cone already worked out (users first).
absl::Status PruneCone(Module* module, std::span<Instruction* const> cone,
                       ApplyStats* stats) {
  absl::flat_hash_set<const Computation*> before = Reachable(*module);
  for (Instruction* i : cone) {
    HLOGYM_RETURN_IF_ERROR(i->parent()->RemoveInstruction(i));
  }
  stats->removed_instructions += static_cast<int64_t>(cone.size());
  // Fusion parameter pruning removes more cones; those it tracks itself
  // (the pointers above are freed and never compared again).
  absl::flat_hash_set<Instruction*> gone;
  return PruneRest(module, before, gone, stats);
}

}  // namespace

absl::Status PruneAfterApply(Module* module,
                             std::span<Instruction* const> roots,
                             ApplyStats* stats) {
  absl::flat_hash_set<const Computation*> before = Reachable(*module);
  absl::flat_hash_set<Instruction*> removed;
  for (Instruction* r : roots) {
    HLOGYM_RETURN_IF_ERROR(
        RemoveDeadCone(r, &stats->removed_instructions, removed));
  }
  return PruneRest(module, before, removed, stats);
}

namespace {

// True when `a` and `b` are certainly not structural copies: their own
// attributes differ, or those of operands up to `depth` levels down (the
// same operand on both sides is equal). False means "maybe equal".
bool SurelyDifferent(const Instruction* a, const Instruction* b, int depth) {
  if (a == b) return false;
  if (a->opcode() != b->opcode() || a->operand_count() != b->operand_count() ||
      a->int_attr() != b->int_attr() || a->fusion_kind() != b->fusion_kind() ||
      a->shape() != b->shape()) {
    return true;
  }
  const auto& ca = a->called_computations();
  const auto& cb = b->called_computations();
  if (ca.size() != cb.size()) return true;
  for (size_t i = 0; i < ca.size(); ++i) {
    if (ca[i] != cb[i] &&
        ca[i]->instruction_count() != cb[i]->instruction_count()) {
      return true;
    }
  }
  if (depth == 0) return false;
  for (int64_t k = 0; k < a->operand_count(); ++k) {
    if (SurelyDifferent(a->operand(k), b->operand(k), depth - 1)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<ApplyStats> ApplyDecisions(Module* module,
                                          std::span<const int64_t> decisions) {
  return ApplyDecisions(module, decisions, AlternativeNodes(*module));
}

absl::StatusOr<ApplyStats> ApplyDecisions(Module* module,
                                          std::span<const int64_t> decisions,
                                          std::span<Instruction* const> nodes) {
  if (decisions.size() != nodes.size()) {
    return absl::InvalidArgumentError(
        StrCat("expected ", nodes.size(),
               " decision(s), one per alternatives "
               "node, got ",
               decisions.size()));
  }
  for (size_t j = 0; j < nodes.size(); ++j) {
    if (decisions[j] < 0 || decisions[j] >= nodes[j]->operand_count()) {
      return absl::InvalidArgumentError(StrCat(
          "decision ", j, " for '", nodes[j]->name(), "' is ", decisions[j],
          ", but it has ", nodes[j]->operand_count(), " operand(s) (valid: 0..",
          nodes[j]->operand_count() - 1, ")"));
    }
  }
  ApplyStats stats;
  // Whether the graph changes, as a DagHash comparison with the module
  // before the dry run would tell. The live graph is the original one
  // unless a candidate taken stays alive after pruning (one taken for a
  // user that was itself replaced dies with it) or pruning dropped unused
  // fusion parameters. A live candidate that surely differs from its
  // original (SurelyDifferent) changes the graph; a live look-alike needs
  // the module hashed, as the originals and as decided.
  absl::flat_hash_map<const Instruction*, bool> taken;  // -> look-alike
  bool any_look_alike = false;
  for (size_t j = 0; j < nodes.size(); ++j) {
    if (decisions[j] == 0) continue;
    const Instruction* o = nodes[j]->operand(0);
    const Instruction* c = nodes[j]->operand(decisions[j]);
    const bool alike = !SurelyDifferent(c, o, /*depth=*/3);
    auto [it, inserted] = taken.try_emplace(c, alike);
    if (!inserted) it->second = it->second && alike;
    any_look_alike |= alike;
  }
  std::optional<uint64_t> hash_of_originals;
  if (any_look_alike) {
    std::unique_ptr<Module> originals = module->Clone();
    std::vector<int64_t> zeros(nodes.size(), 0);
    HLOGYM_RETURN_IF_ERROR(ApplyDecisions(originals.get(), zeros).status());
    hash_of_originals = DagHash(*originals);
  }
  absl::flat_hash_set<Computation*> touched;
  for (size_t j = 0; j < nodes.size(); ++j) touched.insert(nodes[j]->parent());
  // Candidates with pending bodies live beside the alternatives nodes.
  // Module order, not the set's: bodies are built (and named) in this
  // order, and names must not depend on addresses.
  std::vector<Instruction*> pending;
  for (const auto& c : module->computations()) {
    if (!touched.contains(c.get())) continue;
    c->ForEachInstruction([&](Instruction* i) {
      if (i->has_pending_body()) pending.push_back(i);
    });
  }
  for (size_t j = 0; j < nodes.size(); ++j) {
    Instruction* a = nodes[j];
    Instruction* chosen = a->operand(decisions[j]);
    HLOGYM_RETURN_IF_ERROR(a->ReplaceAllUsesWith(chosen));
    ++stats.alternatives;
    if (decisions[j] != 0) ++stats.non_original;
  }
  if (!pending.empty()) {
    std::vector<Instruction*> cone;
    HLOGYM_RETURN_IF_ERROR(
        BuildSurvivingBodies(nodes, pending, touched, &cone));
    HLOGYM_RETURN_IF_ERROR(PruneCone(module, cone, &stats));
  } else {
    HLOGYM_RETURN_IF_ERROR(PruneAfterApply(module, nodes, &stats));
  }
  if (!pending.empty()) {
    // A touched computation may itself be gone (a replaced while's body):
    // only live ones are read.
    bool left_pending = false;
    for (const auto& c : module->computations()) {
      if (!touched.contains(c.get())) continue;
      c->ForEachInstruction(
          [&](Instruction* i) { left_pending |= i->has_pending_body(); });
    }
    if (left_pending) {
      return absl::InternalError(
          "a chosen fusion candidate survived pruning without its body");
    }
  }
  // Pruning also drops unused parameters of surviving fusions, originals
  // included: a change too.
  stats.changed = stats.removed_fusion_parameters > 0;
  if (!taken.empty() && !stats.changed) {
    // Pruning frees instructions but allocates none, so a pointer found in
    // the graph is a candidate that survived. A touched computation may
    // itself be gone (a replaced while's body): only live ones are read.
    bool live_unlike = false, live_alike = false;
    for (const auto& c : module->computations()) {
      if (!touched.contains(c.get())) continue;
      c->ForEachInstruction([&](Instruction* i) {
        auto it = taken.find(i);
        if (it == taken.end()) return;
        (it->second ? live_alike : live_unlike) = true;
      });
    }
    stats.changed = live_unlike || (live_alike && hash_of_originals &&
                                    DagHash(*module) != *hash_of_originals);
  }
  return stats;
}

absl::StatusOr<DecisionPolicy> DecisionPolicy::Parse(std::string_view text) {
  if (text == "original") return DecisionPolicy(Kind::kOriginal, 0);
  if (text == "first") return DecisionPolicy(Kind::kFirst, 0);
  if (text == "random") return DecisionPolicy(Kind::kRandom, 0);
  if (text.substr(0, 7) == "random:") {
    std::string seed(text.substr(7));
    char* end = nullptr;
    unsigned long long v = std::strtoull(seed.c_str(), &end, 10);
    if (!seed.empty() && end != nullptr && *end == '\0') {
      return DecisionPolicy(Kind::kRandom, v);
    }
  }
  return absl::InvalidArgumentError(
      StrCat("unknown decision policy '", text,
             "' (use original, first, random or random:SEED)"));
}

std::vector<int64_t> DecisionPolicy::Decide(
    std::span<Instruction* const> nodes) {
  std::vector<int64_t> out;
  out.reserve(nodes.size());
  for (Instruction* n : nodes) {
    switch (kind_) {
      case Kind::kOriginal:
        out.push_back(0);
        break;
      case Kind::kFirst:
        out.push_back(n->operand_count() > 1 ? 1 : 0);
        break;
      case Kind::kRandom:
        out.push_back(static_cast<int64_t>(
            SplitMix64(state_++) % static_cast<uint64_t>(n->operand_count())));
        break;
    }
  }
  return out;
}

std::string DecisionPolicy::ToString() const {
  switch (kind_) {
    case Kind::kOriginal:
      return "original";
    case Kind::kFirst:
      return "first";
    case Kind::kRandom:
      return "random";
  }
  return "";
}

absl::StatusOr<RewriteLoopStats> RewriteLoop(Module* module, Pass& pass,
                                             DecisionPolicy& policy,
                                             int64_t max_iterations) {
  RewriteLoopStats stats;
  const int64_t start_size = module->instruction_count();
  DeferFusionBodies defer(module);  // each dry run is applied at once
  while (stats.iterations < max_iterations) {
    if (GrewTooMuch(start_size, module->instruction_count())) {
      stats.growth_stopped = true;
      return stats;
    }
    HLOGYM_ASSIGN_OR_RETURN(AugmentStats aug, pass.RunDry(module));
    stats.rejected_cyclic += aug.rejected_cyclic;
    std::vector<Instruction*> nodes = AlternativeNodes(*module);
    if (nodes.empty()) {
      stats.converged = true;
      return stats;
    }
    ++stats.iterations;
    stats.alternatives += static_cast<int64_t>(nodes.size());
    std::vector<int64_t> decisions = policy.Decide(nodes);
    HLOGYM_ASSIGN_OR_RETURN(ApplyStats applied,
                            ApplyDecisions(module, decisions));
    stats.non_original_decisions += applied.non_original;
    if (applied.non_original == 0 &&
        policy.kind() != DecisionPolicy::Kind::kRandom) {
      // Nothing taken: the graph is back where it was, and a deterministic
      // policy would decide the same again.
      stats.converged = true;
      return stats;
    }
  }
  return stats;
}

}  // namespace hlogym
