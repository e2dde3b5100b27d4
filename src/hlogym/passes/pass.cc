#include "hlogym/passes/pass.h"

#include <algorithm>

#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {

// Registration functions, one per family of passes (each in its own file).
void RegisterAlgebraicSimplifier(PassRegistry& registry);
void RegisterCorePasses(PassRegistry& registry);
void RegisterStructuralPasses(PassRegistry& registry);
void RegisterFusionPasses(PassRegistry& registry);

absl::StatusOr<bool> Pass::Run(Module* module) {
  Rewriter rw(module, RewriteMode::kApply);
  HLOGYM_ASSIGN_OR_RETURN(bool changed, RunWith(module, rw));
  HLOGYM_RETURN_IF_ERROR(rw.Finish().status());
  return changed || rw.changed();
}

absl::StatusOr<AugmentStats> Pass::RunDry(Module* module) {
  Rewriter rw(module, RewriteMode::kDry);
  HLOGYM_RETURN_IF_ERROR(RunWith(module, rw).status());
  return rw.Finish();
}

void Pass::DeclareRules(std::vector<RuleInfo> rules) {
  rules_ = std::move(rules);
  enabled_.assign(rules_.size(), true);
}

absl::Status Pass::SetRuleEnabled(std::string_view rule, bool enabled) {
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i].name == rule) {
      enabled_[i] = enabled;
      return absl::OkStatus();
    }
  }
  if (rules_.empty()) {
    return absl::NotFoundError(StrCat(
        "pass '", name(), "' has no named rules (asked for '", rule, "')"));
  }
  return absl::NotFoundError(StrCat("pass '", name(), "' has no rule '", rule,
                                    "' (see `hlogym passes --rules ", name(),
                                    "`)"));
}

absl::Status Pass::SetOption(std::string_view key, std::string_view) {
  return absl::NotFoundError(
      StrCat("pass '", name(), "' has no option '", key, "'"));
}

absl::StatusOr<bool> ParseBoolOption(std::string_view key,
                                     std::string_view value) {
  if (value.empty() || value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return absl::InvalidArgumentError(
      StrCat("option '", key, "' takes true or false, not '", value, "'"));
}

PassRegistry& PassRegistry::Global() {
  static PassRegistry* registry = new PassRegistry();
  return *registry;
}

PassRegistry::PassRegistry() {
  RegisterAlgebraicSimplifier(*this);
  RegisterCorePasses(*this);
  RegisterStructuralPasses(*this);
  RegisterFusionPasses(*this);
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
}

void PassRegistry::Register(std::string name, std::string description,
                            Factory factory) {
  entries_.push_back(
      {std::move(name), std::move(description), std::move(factory)});
}

bool PassRegistry::Contains(std::string_view name) const {
  for (const Entry& e : entries_) {
    if (e.name == name) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<Pass>> PassRegistry::Create(
    std::string_view name) const {
  for (const Entry& e : entries_) {
    if (e.name == name) return e.factory();
  }
  std::string known;
  for (const Entry& e : entries_) {
    if (!known.empty()) known += ", ";
    known += e.name;
  }
  return absl::NotFoundError(
      StrCat("unknown pass '", name, "'; known passes: ", known));
}

absl::StatusOr<bool> VisitInstructionsPostOrder(
    Module* module, Rewriter& rw,
    const std::function<absl::StatusOr<bool>(Instruction*)>& fn,
    bool include_fusion_computations) {
  bool changed = false;
  std::vector<Computation*> order = module->MakeComputationPostOrder();
  std::vector<std::pair<int64_t, Instruction*>> snapshot;
  for (Computation* c : order) {
    if (c->IsFusionComputation() && !include_fusion_computations) continue;
    snapshot.clear();
    for (Instruction* i : c->MakeInstructionPostOrder()) {
      snapshot.push_back({i->unique_id(), i});
    }
    for (auto [id, inst] : snapshot) {
      if (rw.IsRemoved(id)) continue;
      HLOGYM_ASSIGN_OR_RETURN(bool rewrote, fn(inst));
      changed |= rewrote;
    }
  }
  return changed;
}

}  // namespace hlogym
