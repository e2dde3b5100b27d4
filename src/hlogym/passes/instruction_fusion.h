// XLA's legacy GPU instruction fusion (InstructionFusion with the GPU
// subclass), the vertical fusion pass that ran before priority fusion.
//
// Each fusible computation is walked in reverse post-order (consumers
// first). For a consumer, its operands are tried latest-defined first; the
// first operand that passes ShouldFuse is fused into the consumer (the
// producer is duplicated when it has other users), the new fusion is
// queued again and the walk continues with it. In dry mode every fusion
// the pass would start from the original graph is proposed once, as a
// single step, and no fusion is built on top of another.
#ifndef HLOGYM_PASSES_INSTRUCTION_FUSION_H_
#define HLOGYM_PASSES_INSTRUCTION_FUSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/instruction.h"
#include "hlogym/passes/gpu_fusible.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// How many times the elemental emitter would emit each instruction of a
// fusion: an instruction is emitted once per distinct index it is read
// with. Transposes and ops whose operand has the same shape (ignoring the
// element type) pass their index on; any other op computes a new index.
// Fused parameters are tracked as the fusion's operands.
class FusionNodeIndexingEvaluation {
 public:
  // `fusion` must be a fusion instruction; `root_usage_count` is how many
  // times its root is emitted (1 for a kernel of its own; more when the
  // fusion is merged into a consumer reading it at several indices).
  explicit FusionNodeIndexingEvaluation(const Instruction& fusion,
                                        int64_t root_usage_count = 1);

  // Fusing `producer` (an operand of the fusion) would emit it more than
  // kAllowedCodeDuplication times, or an op that splits the emitter's basic
  // blocks (concatenate, dot, dynamic-update-slice, pad, reduce,
  // reduce-window) would be emitted more than once or has several users.
  bool CodeDuplicationTooHigh(const Instruction& producer) const;
  // The same test over every instruction of the fusion.
  bool MaxCodeDuplicationTooHigh() const;
  // Times `producer` (an operand of the fusion) would be emitted once fused.
  int64_t EvaluateEmittedInstructions(const Instruction& producer) const;

 private:
  void Propagate(const Instruction* inst);

  const Instruction& fusion_;
  absl::flat_hash_map<const Instruction*,
                      absl::flat_hash_set<const Instruction*>>
      indexing_users_;
  absl::flat_hash_map<const Instruction*, int64_t> index_usage_count_;
};

// FusedIrEmitter::IsFusedIrEmitterInefficient: merging `producer` into the
// fusion `consumer` would duplicate code too much (false when `consumer`
// is not a fusion).
bool IsFusedIrEmitterInefficient(const Instruction& consumer,
                                 const Instruction& producer);

// HloInstruction::ReusesOperandElements: `consumer` reads some element of
// operand `operand_index` more than once (broadcast, dot, reduce-window,
// pad value, ...); through the fused computation for fusions.
bool ReusesOperandElements(const Instruction& consumer, int64_t operand_index);

// A producer duplicated into consumers even without may_duplicate: a
// widening convert or a broadcast.
bool IsAlwaysDuplicable(const Instruction& inst);

// At most one operand is "large": operands that are broadcasts, iotas or
// scalar constants, and operands of a smaller true rank than the output,
// do not count.
bool EffectivelyAtMostUnary(const Instruction& inst);

struct GpuInstructionFusionOptions {
  // Allow duplicating a producer into one of several consumers (the legacy
  // pipeline runs the pass first without, then with duplication).
  bool may_duplicate = true;
};

class GpuInstructionFusion : public Pass {
 public:
  explicit GpuInstructionFusion(GpuInstructionFusionOptions options = {})
      : options_(options) {}
  std::string_view name() const override { return "instruction-fusion"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

  const GpuInstructionFusionOptions& options() const { return options_; }

  // The GPU ShouldFuse decision for operand `operand_index` of `consumer`
  // (everything but the global "do not duplicate" analysis), with the
  // reason of a refusal. Exposed for tests.
  FusionDecision ShouldFuse(const Instruction& consumer,
                            int64_t operand_index) const;

 private:
  // Facts about a consumer that ShouldFuse asks for each of its operands,
  // computed once per consumer. Keyed by unique id: each fusion the pass
  // builds is a new instruction, and removed ones are freed.
  struct ConsumerFacts {
    bool side_effect = false;
    // Operand numbers whose elements the consumer reads more than once.
    std::vector<bool> reused_operands;
    // Fusion consumers only, built when first needed.
    std::unique_ptr<FusionNodeIndexingEvaluation> evaluation;
  };
  ConsumerFacts& Facts(const Instruction& consumer) const;

  GpuInstructionFusionOptions options_;
  mutable absl::flat_hash_map<int64_t, ConsumerFacts> facts_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_INSTRUCTION_FUSION_H_
