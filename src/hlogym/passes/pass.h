// Passes, their named rules and options, and the pass registry.
#ifndef HLOGYM_PASSES_PASS_H_
#define HLOGYM_PASSES_PASS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlogym/ir/module.h"
#include "hlogym/passes/rewriter.h"

namespace hlogym {

// Bits of Computation::RecordPassMemo, one per pass that keeps such memos.
inline constexpr uint32_t kPassMemoCse = 1u << 0;
inline constexpr uint32_t kPassMemoDce = 1u << 1;

// One named rewrite of a pass; rules can be switched off one by one.
struct RuleInfo {
  std::string name;     // kebab-case, unique within the pass
  int entry = 0;        // checklist entry it implements (0: none)
  std::string summary;  // one line: the pattern and its guard
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;

  // Runs the pass once over `module`, mutating it only through `rw`.
  // Returns whether it changed (apply mode) or proposed (dry mode)
  // anything. Callers own rw.Finish().
  virtual absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) = 0;

  // Convenience: an apply-mode run.
  absl::StatusOr<bool> Run(Module* module);
  // Convenience: a dry run followed by materialisation of the alternatives.
  absl::StatusOr<AugmentStats> RunDry(Module* module);

  // ---- Named rules (empty for passes that are one rewrite).
  const std::vector<RuleInfo>& rules() const { return rules_; }
  absl::Status SetRuleEnabled(std::string_view rule, bool enabled);
  bool rule_enabled(int index) const { return enabled_[index]; }

  // ---- Options by name, for the CLI and pipelines ("key" or "key=value";
  // booleans accept true/false/1/0). Unknown names are errors.
  virtual absl::Status SetOption(std::string_view key, std::string_view value);
  virtual std::vector<std::string> OptionNames() const { return {}; }

 protected:
  // Declares the rules; index i is rules()[i].
  void DeclareRules(std::vector<RuleInfo> rules);

 private:
  std::vector<RuleInfo> rules_;
  std::vector<bool> enabled_;
};

// Parses "true"/"false"/"1"/"0"/"" (empty = true) for boolean options.
absl::StatusOr<bool> ParseBoolOption(std::string_view key,
                                     std::string_view value);

// Named pass factories. Registration happens in pass_registry.cc.
class PassRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Pass>()>;
  static PassRegistry& Global();

  void Register(std::string name, std::string description, Factory factory);
  absl::StatusOr<std::unique_ptr<Pass>> Create(std::string_view name) const;
  bool Contains(std::string_view name) const;
  struct Entry {
    std::string name;
    std::string description;
    Factory factory;
  };
  // Sorted by name.
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  PassRegistry();
  std::vector<Entry> entries_;
};

// Visits the instructions of every non-fusion computation (callees first),
// each computation in post-order, skipping instructions removed during the
// visit and instructions created by the run. `fn` returns whether it rewrote.
absl::StatusOr<bool> VisitInstructionsPostOrder(
    Module* module, Rewriter& rw,
    const std::function<absl::StatusOr<bool>(Instruction*)>& fn,
    bool include_fusion_computations = false);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_PASS_H_
