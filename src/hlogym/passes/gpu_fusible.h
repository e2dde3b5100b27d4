// Legality rules shared by the GPU fusion passes: which instructions may
// fuse, into what, and within which budgets (operands, shared memory,
// reductions, code size). docs/fusion.md lists each rule with its source
// in XLA's GPU backend.
#ifndef HLOGYM_PASSES_GPU_FUSIBLE_H_
#define HLOGYM_PASSES_GPU_FUSIBLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "hlogym/cost/gpu_performance_model.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/instruction.h"
#include "hlogym/ir/module.h"

namespace hlogym {

// ---- Limits.
inline constexpr int64_t kMaxOperandsAndOutputsPerFusion = 96;
inline constexpr int64_t kMaxUnnestedReductionsPerFusion = 8;
inline constexpr int64_t kSharedMemoryPerBlockBytes = 48 * 1024;
// Legacy instruction fusion: most times a producer may be emitted.
inline constexpr int64_t kAllowedCodeDuplication = 15;
// Fused instruction count beyond which a fusion counts as too large.
inline constexpr int64_t kMaxFusedInstructions = 1000;

// A decision with the reason for a refusal ("" when allowed), so passes
// and tests can say why two instructions did not fuse.
struct FusionDecision {
  bool ok = true;
  std::string reason;
  static FusionDecision Allow() { return {}; }
  static FusionDecision Forbid(std::string why) {
    return {false, std::move(why)};
  }
  explicit operator bool() const { return ok; }
};

// ---- Classification (section 3.2 of the heuristics reference).
// Elementwise ops (with >= 1 operand), copies that are not tiled
// transposes, loop fusions, width-keeping bitcasts, broadcast, concatenate,
// dynamic-slice, dynamic-update-slice, gather, pad, reduce-window, reshape,
// reverse, slice, transpose.
// An array of one element (any rank).
bool IsEffectiveScalar(const Shape& s);
// A fusion whose root is a dynamic-update-slice (emitted in place; it
// cannot share a kernel with other outputs).
bool RootIsDynamicUpdateSlice(const Instruction& inst);
bool IsUniversallyLoopFusible(const Instruction& inst);
// The above plus iota, constant and non-variadic reduce.
bool IsLoopFusibleAsProducer(const Instruction& inst);
// The above plus any reduce and input fusions that lost their input hero.
bool IsLoopFusibleAsConsumer(const Instruction& inst);
// A contiguous real reduction (or a fusion with such a hero), a scatter
// (or an input fusion rooted at one) or a tiled transpose (or a fusion
// with a tiled-transpose root).
bool IsInputFusible(const Instruction& inst);
bool IsInputFusibleReduction(const Instruction& inst);
bool IsInputFusibleTranspose(const Instruction& inst);
bool IsInputFusibleScatter(const Instruction& inst);
// A copy, or a transpose that is not a bitcast (changes memory order).
bool IsPhysicallyTransposing(const Instruction& inst);
// Fusible at all: loop- or input-fusible (generic fusibility, used by
// GeneralFusion and PriorityFusion's candidate filter).
bool IsFusible(const Instruction& inst);
// An op XLA's GPU backend considers expensive to duplicate.
bool IsExpensive(const Instruction& inst);
// Fusion kind of a new legacy fusion: kInput if either side is
// input-fusible, else kLoop.
FusionKind ChooseFusionKind(const Instruction& producer,
                            const Instruction& consumer);
// The fusion kind matching the emitter a fused computation would use
// (PriorityFusion): reduction, transpose, scatter, concatenate and input
// slices give kInput; everything else kLoop.
FusionKind FusionKindForComputation(const Computation& fused);

// The "hero" of a fusion root or instruction: the op that defines the
// kernel's iteration space (walking up through intermediate ops).
const Instruction& FindHero(const Instruction& root);

// ---- Pairwise legality.
// Producer-consumer fusibility of legacy fusion and FusionMerger (3.2).
FusionDecision IsProducerConsumerFusible(const Instruction& producer,
                                         const Instruction& consumer);
// Never fuse into a scatter's output or the scatter's in-place operand.
FusionDecision CheckScatterLegality(const Instruction& producer,
                                    const Instruction& consumer);
// ShouldFuseInPlaceOp (in-place ops such as dynamic-update-slice).
FusionDecision ShouldFuseInPlaceOp(const Instruction& producer,
                                   const Instruction& consumer);
// FusionFitsInBudget: shared memory, unnested reductions, and the operand
// plus output count (exact count when the quick one fails). With
// `is_consumer_producer_fusion` a result with no more operands than the
// consumer has is always accepted.
FusionDecision FusionFitsInBudget(const Instruction& a, const Instruction& b,
                                  bool is_consumer_producer_fusion = false);
// Shared memory a kernel (an instruction or fusion) needs, in bytes.
int64_t SharedMemoryUsage(const Instruction& inst);
// Unnested (real) reductions in an instruction or fusion.
int64_t CountUnnestedReductions(const Instruction& inst);
// XLA's ShapeUtil::SubshapeCount: every node of the shape tree.
int64_t SubshapeCount(const Shape& s);
// Legacy CreatesHeavyComputation.
bool CreatesHeavyComputation(const Instruction& producer,
                             const Instruction& consumer);
// Fused instruction count of producer + consumer over kMaxFusedInstructions.
FusionDecision ProducerConsumerMergedTooLarge(const Instruction& producer,
                                              const Instruction& consumer);

// ---- Multi-output fusion.
// Eligible as a multi-output root: fusible, not custom, and an
// input-fusible reduction, tiled transpose, loop fusion or elementwise op.
bool IsFusibleAsMultiOutputFusionRoot(const Instruction& inst);
// A producer that may become an extra output: not multi-output already
// (unless `allow_multi_output`, GeneralFusion's relaxation), no in-place
// pairs, loop-fusible as producer, not physically transposing.
bool IsProducerMultiOutputFusible(const Instruction& producer,
                                  bool allow_multi_output = false);
// Real heroes and loop shapes compatible (3.2 "Shapes compatible for MOF").
FusionDecision ShapesCompatibleForMultiOutputFusion(const Instruction& a,
                                                    const Instruction& b);
// What that test reads of one side: the real hero, its kind, its reduction
// dimensions and the loop shape. A caller that tests one instruction
// against many partners works these out once (valid while the graph does
// not change) and passes them to the overload below, which answers the same.
struct MultiOutputFacts {
  const Instruction* hero = nullptr;
  bool reduction = false;  // a real reduction
  bool tiled_transpose = false;
  bool nested_transpose = false;
  std::optional<ReductionDimensions> reduction_dims;  // of a reduction hero
  const Shape* loop_shape = nullptr;
};
MultiOutputFacts GetMultiOutputFacts(const Instruction& inst);
FusionDecision ShapesCompatibleForMultiOutputFusion(const Instruction& a,
                                                    const Instruction& b,
                                                    const MultiOutputFacts& fa,
                                                    const MultiOutputFacts& fb);

// Computations the fusion passes work on: post-order, without fusion
// computations, computations called by non-control-flow ops (reducers,
// comparators, map bodies) and computations the entry does not reach.
std::vector<Computation*> GetFusibleComputations(const Module& module);

// ---- Helpers the rules above are built from (also used by the passes).
// The outputs of a fused computation: the operands of a tuple root, else
// the root. Inline storage: the legality rules ask for them on every
// candidate pair, and most fusions have a handful of outputs.
using FusionRoots = absl::InlinedVector<const Instruction*, 4>;
FusionRoots GetFusionRoots(const Computation& fused);
// GetFusionRoots of a fusion's computation; {&inst} for anything else.
FusionRoots GetKernelRoots(const Instruction& inst);
// A fusion whose root is a tuple.
bool IsMultiOutputFusion(const Instruction& inst);
// An op the hero search walks through: 1..allowed_operand_count operands,
// at most one user, and elementwise (not copy), a bitcast, or a reshape or
// transpose that is a bitcast.
bool IsIntermediate(const Instruction& inst, int allowed_operand_count = 1);
// IsIntermediate without the user count (callers that count users in a
// graph other than the instruction's own).
bool IsIntermediateIgnoringUsers(const Instruction& inst,
                                 int allowed_operand_count);
// A transpose or copy the tiled transpose emitter handles: it moves the
// minor-most dimension and both minor sizes are >= 16 (or >= 8 with a
// product >= 64 * 128).
bool IsTiledTranspose(const Instruction& inst);
// Reduction emitter bounds without atomics: row reduced extent <= 16 *
// 1024 and batch <= 8; column reduced extent <= 32 * 128.
bool IsReductionRaceFree(const ReductionDimensions& dims);
// `hero` (FindHero of `root`) is a real reduction, and race-free unless it
// is the root itself.
bool IsRealReductionHero(const Instruction& root, const Instruction& hero);
// The hero multi-output fusion compares: for a fusion the first root hero
// that is a real reduction or tiled transpose, else the (first) root; the
// instruction itself otherwise.
const Instruction& GetRealHeroForMultiOutputFusion(const Instruction& inst);
// A variadic reduce or reduce-window the reduction emitter does not take
// (or a loop fusion rooted at a variadic reduce).
bool IsNestableVariadicReduction(const Instruction& inst);
// (operand number, output index) pairs whose output reuses the operand's
// buffer: dynamic-update-slice and scatter operand 0 (each scatter input
// of a variadic scatter), custom-call aliasing, and fusions whose root (or
// root tuple element) is one of these on a fused parameter.
std::vector<std::pair<int64_t, ShapeIndex>> InPlaceInputOutputPairs(
    const Instruction& inst);
// A reduce reading >= 16 input elements per output element (in `inst` or
// its fused computation): PriorityFusion's "significant" reduce.
bool ContainsSignificantReduce(const Instruction& inst);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_GPU_FUSIBLE_H_
