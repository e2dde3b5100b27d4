// The fusion operations of the rewrite API.
//
// Every fusion pass builds fusions through these functions, so each works
// in apply mode and in dry mode alike. A fusion is always a brand-new
// instruction calling a brand-new fused computation: member instructions
// are cloned into it (a member that is itself a fusion has its body
// cloned), fused computations are never shared, and parameters and outputs
// nobody reads are never created. Outside uses of the members are then
// replaced through the Rewriter, so in dry mode each becomes an
// alternative.
#ifndef HLOGYM_PASSES_FUSION_OPS_H_
#define HLOGYM_PASSES_FUSION_OPS_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/module.h"
#include "hlogym/passes/rewriter.h"

namespace hlogym {

// What happens to a member's result that instructions outside the fusion
// still read (the producer of a producer-consumer fusion with other users).
enum class ExternalUses : uint8_t {
  // The outside users keep reading the original instruction: the member is
  // duplicated into the fusion.
  kDuplicate,
  // The fusion also outputs the member's result (a multi-output fusion);
  // the outside users read it through a get-tuple-element.
  kMultiOutput,
};

struct FuseOptions {
  FusionKind kind = FusionKind::kLoop;
  // Applies to members that have users both inside and outside the set.
  // Members without users inside the set (the sinks) are always outputs.
  ExternalUses external_uses = ExternalUses::kDuplicate;
  // Base of the new fusion's name (made unique in the module).
  std::string_view name = "fusion";
};

// Fuses `members` into one new fusion instruction and replaces their
// outside uses. Rules:
//  - all members belong to the same non-fusion computation; none is a
//    parameter, tuple, get-tuple-element, alternatives or side-effecting
//    instruction; no member appears twice;
//  - member operands that are members (directly, or through a
//    get-tuple-element of a multi-output member) are wired inside; every
//    other operand becomes a fusion parameter (one per distinct value);
//  - outputs: one per result leaf read outside the set (or the root role),
//    in member order, then leaf order. A single array output makes the
//    fusion array-shaped; anything else gives a tuple root. Outside readers
//    of a multi-output member's get-tuple-element read the matching new
//    get-tuple-element instead.
//  - the caller guarantees that no path leads from one member to another
//    through a non-member (WouldCreateCycle checks it); in dry mode the
//    Rewriter would also reject such a candidate.
// Apply mode: members left without users are removed. A member fusion
// made earlier in the same run that the new fusion replaces hands its body
// over (moved, ids and names kept) instead of having it copied, so fusing
// producers one at a time into a growing consumer stays linear.
// Returns the fusion.
absl::StatusOr<Instruction*> FuseInstructions(
    Rewriter& rw, std::span<Instruction* const> members,
    const FuseOptions& options);

// Fuses `producer` into its user `consumer` (the consumer reads it directly
// or through get-tuple-elements when the producer is a multi-output
// fusion). With kDuplicate the producer's other users keep it; with
// kMultiOutput they read the fusion's extra output.
absl::StatusOr<Instruction*> FuseProducerIntoConsumer(
    Rewriter& rw, Instruction* producer, Instruction* consumer, FusionKind kind,
    ExternalUses producer_uses = ExternalUses::kDuplicate);

// Fuses two independent instructions (typically siblings reading a common
// operand) into one multi-output fusion: `a`'s outputs first.
absl::StatusOr<Instruction*> FuseSiblings(Rewriter& rw, Instruction* a,
                                          Instruction* b, FusionKind kind);

// ---- Pending bodies. When the Rewriter defers fusion bodies
// (Rewriter::defer_fusion_bodies), FuseInstructions, FuseProducerIntoConsumer
// and FuseSiblings work out the fusion's operands and shape and attach a
// recipe instead of cloning the members: the fusion has no fused
// computation until its body is built. ApplyDecisions builds those of the
// chosen candidates; owners of a paused module build the rest before
// anything reads it.

// Builds `fusion`'s pending body (nothing if it has none). Its members
// must still be in the graph.
absl::Status BuildPendingFusionBody(Instruction* fusion);
// Builds the pending bodies of `fusions` (those that have one), in
// parallel when there are many (see ParallelFor): the result is the same
// as building them one by one in order, names and unique ids included.
absl::Status BuildPendingFusionBodies(std::span<Instruction* const> fusions);
// Builds every pending body in the module.
absl::Status BuildPendingFusionBodies(Module* module);
bool HasPendingFusionBodies(const Module& module);

// FusionMerger's operation: fuses `producer` (usually a loop fusion) into
// every one of its users, which must all be fusible instructions; the
// producer dies in apply mode. Returns the new fusions in user order.
absl::StatusOr<std::vector<Instruction*>> MergeIntoUsers(Rewriter& rw,
                                                         Instruction* producer,
                                                         FusionKind kind);

// Horizontal fusion of independent instructions or fusions into one
// kernel. Plain mode (all outputs of equal shape): a kLoop fusion whose
// tuple root holds every output. Sliced mode: each output is flattened to
// rank 1, the outputs of each index are concatenated, and the users read
// slices of the concatenation (reshaped back): a kInput fusion.
// Members must be independent: one reading another is an error; longer
// paths are the caller's to rule out (WouldCreateCycle).
absl::StatusOr<Instruction*> FuseHorizontally(
    Rewriter& rw, std::span<Instruction* const> members, bool sliced);

// True when a path leads from one member to another through an instruction
// outside the set (fusing them would create a cycle). With `reachability`
// (built on the members' computation) the check is a few index queries;
// without it a DFS over the operands.
bool WouldCreateCycle(std::span<Instruction* const> members,
                      const ReachabilityIndex* reachability = nullptr);

// The leaves of a result: {inst} for an array, the elements of a tuple
// shape otherwise (by index). Used to number outputs.
int64_t LeafCount(const Instruction& inst);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_FUSION_OPS_H_
