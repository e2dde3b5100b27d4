// An HLO module: computations, one of which is the entry, plus config.
#ifndef HLOGYM_IR_MODULE_H_
#define HLOGYM_IR_MODULE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "hlogym/ir/computation.h"

namespace hlogym {

// entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}}
struct ComputationLayout {
  std::vector<Shape> parameters;
  Shape result;
  bool operator==(const ComputationLayout&) const = default;
};

// input_output_alias={ {0}: (0, {}, may-alias) }
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter = 0;
  ShapeIndex parameter_index;
  enum class Kind : uint8_t { kUnspecified, kMayAlias, kMustAlias };
  Kind kind = Kind::kUnspecified;
  bool operator==(const InputOutputAlias&) const = default;
};

// buffer_donor={ (0, {}) }
struct BufferDonor {
  int64_t parameter = 0;
  ShapeIndex index;
  bool operator==(const BufferDonor&) const = default;
};

struct ModuleConfig {
  std::optional<bool> is_scheduled;
  std::optional<int64_t> replica_count;
  std::optional<int64_t> num_partitions;
  std::optional<ComputationLayout> entry_computation_layout;
  std::optional<std::vector<InputOutputAlias>> input_output_alias;
  std::optional<std::vector<BufferDonor>> buffer_donor;
  std::optional<bool> alias_passthrough_params;
  std::optional<FrontendAttributes> frontend_attributes;
  std::optional<std::vector<bool>>
      allow_spmd_sharding_propagation_to_parameters;
  std::optional<std::vector<bool>> allow_spmd_sharding_propagation_to_output;
  // Kept as normalized text: rarely used, and only printed back.
  std::string origin_recovery_table;
  std::string debug_attributes;
  std::string stack_frames;  // the FileNames ... StackFrames block
};

class Module {
 public:
  explicit Module(std::string name);
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const ModuleConfig& config() const { return config_; }
  ModuleConfig* mutable_config() { return &config_; }

  // Takes ownership. Callees must be added before their callers.
  Computation* AddComputation(std::unique_ptr<Computation> c, bool is_entry);
  // Removes a computation no instruction calls.
  absl::Status RemoveComputation(Computation* c);
  // Removes computations unreachable from the entry through calls.
  int64_t RemoveUnusedComputations();
  // Removes those of `candidates` that no instruction calls, then those
  // that only removed ones called, and so on (one scan of the module
  // however many candidates). Returns the number removed.
  int64_t RemoveComputationsIfUncalled(
      const absl::flat_hash_set<const Computation*>& candidates);
  // The same, scanning only the computations `may_call` accepts: the
  // caller vouches that no other one calls a candidate (computations still
  // reachable from the entry cannot call unreachable ones).
  int64_t RemoveComputationsIfUncalled(
      const absl::flat_hash_set<const Computation*>& candidates,
      absl::FunctionRef<bool(const Computation*)> may_call);

  Computation* entry_computation() const { return entry_; }
  void set_entry_computation(Computation* c) {
    entry_ = c;
    ++computations_epoch_;
  }
  // In insertion (text) order.
  const std::vector<std::unique_ptr<Computation>>& computations() const {
    return computations_;
  }
  int64_t computation_count() const {
    return static_cast<int64_t>(computations_.size());
  }
  Computation* FindComputation(std::string_view name) const;

  // Callees before callers, starting from the entry; computations not
  // reachable from the entry are included (before the reachable ones that
  // follow them in text order). Kept until a computation is added or
  // removed, the entry changes or a computation's version() changes: every
  // pass asks for it, and most runs change nothing. Not thread-safe (it
  // uses the computations' scratch slots).
  std::vector<Computation*> MakeComputationPostOrder() const;

  int64_t instruction_count() const;

  // Fresh id for a new instruction.
  int64_t NextUniqueId() { return next_unique_id_++; }

  // A name not yet used by any instruction of the module, derived from
  // `base` ("add" -> "add", "add.1", ...). Names are never reused, and a
  // suffix is always past the largest one in use for its stem (no search
  // for gaps): the table is a few counters, cheap to build and to copy.
  std::string UniqueInstructionName(std::string_view base);
  std::string UniqueComputationName(std::string_view base);

  // Deep copy. Literal, metadata and attribute blocks are shared (they are
  // immutable and copied on write).
  std::unique_ptr<Module> Clone() const;

  // Set by owners that build the bodies of chosen dry-run candidates before
  // anything else reads the module (decision loops, the environment):
  // fusion passes may then leave candidate bodies pending (see
  // Instruction::has_pending_body). Off by default; not copied by Clone().
  bool defer_fusion_bodies() const { return defer_fusion_bodies_; }
  void set_defer_fusion_bodies(bool on) { defer_fusion_bodies_ = on; }

  // The instructions that call each computation (recomputed each call).
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> Callers()
      const;

 private:
  std::string name_;
  ModuleConfig config_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  // Counts changes of computations_ and entry_: MakeComputationPostOrder's
  // kept answer holds while this, and each computation's version (by
  // position), are as they were. Clone copies a valid one.
  uint64_t computations_epoch_ = 0;
  struct ComputationOrderMemo {
    uint64_t epoch = ~uint64_t{0};
    std::vector<Computation*> order;
    std::vector<uint64_t> versions;
  };
  bool ComputationOrderMemoValid() const;
  mutable ComputationOrderMemo computation_order_memo_;
  int64_t next_unique_id_ = 0;
  bool defer_fusion_bodies_ = false;
  // Lazily built for UniqueInstructionName: per stem ("add" of "add.7"),
  // one past the largest numeric suffix in use, and whether the bare stem
  // is in use. Copied by Clone().
  struct StemUse {
    int64_t next = 0;
    bool bare = false;
  };
  using InstructionNames = absl::flat_hash_map<std::string, StemUse>;
  std::unique_ptr<InstructionNames> used_names_;
  // Recent stems and their entries in `used_names_`: naming the
  // clones of fused bodies asks for the same stems again and again.
  // Emptied when a stem is added, which may move the entries.
  struct StemCacheEntry {
    std::string stem;
    StemUse* use = nullptr;
  };
  std::array<StemCacheEntry, 64> stem_cache_;
  // The same for UniqueComputationName (not copied by Clone()).
  std::unique_ptr<InstructionNames> used_computation_names_;
};

// Turns Module::defer_fusion_bodies on for a scope.
class DeferFusionBodies {
 public:
  explicit DeferFusionBodies(Module* module)
      : module_(module), was_(module->defer_fusion_bodies()) {
    module_->set_defer_fusion_bodies(true);
  }
  ~DeferFusionBodies() { module_->set_defer_fusion_bodies(was_); }
  DeferFusionBodies(const DeferFusionBodies&) = delete;
  DeferFusionBodies& operator=(const DeferFusionBodies&) = delete;

 private:
  Module* module_;
  bool was_;
};

}  // namespace hlogym

#endif  // HLOGYM_IR_MODULE_H_
