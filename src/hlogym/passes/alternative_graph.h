// The alternative graph: decisions over `alternatives` instructions.
//
// A dry run leaves `alternatives` instructions in the module (see
// rewriter.h). Agents address them by position in the observation order of
// HloEnv: computations in reverse post-order (entry first, then callees),
// instructions of each computation in post-order. Apply picks one operand
// per node, reroutes its users, and prunes what became dead.
#ifndef HLOGYM_PASSES_ALTERNATIVE_GRAPH_H_
#define HLOGYM_PASSES_ALTERNATIVE_GRAPH_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/ir/module.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// Computations in observation order: reverse post-order (entry first).
std::vector<Computation*> ObservationComputationOrder(const Module& module);
// Every instruction in observation order (the node order of the graph
// observation).
std::vector<Instruction*> ObservationOrder(const Module& module);
// The `alternatives` instructions in observation order.
std::vector<Instruction*> AlternativeNodes(const Module& module);
// True if the module has any alternatives node (a scan, no ordering).
bool HasAlternativeNodes(const Module& module);

struct ApplyStats {
  int64_t alternatives = 0;  // nodes decided
  int64_t non_original = 0;  // decisions other than operand 0
  int64_t removed_instructions = 0;
  int64_t removed_fusion_parameters = 0;
  int64_t removed_computations = 0;
  // The graph changed: some decision took a candidate that is not a
  // structural copy of its original (exact: when a candidate looks like
  // its original, the module is hashed before and after).
  bool changed = false;
};

// decisions[j] is the operand chosen for AlternativeNodes(module)[j]. The
// number of decisions must equal the number of nodes, and each must be an
// operand index of its node. On error the module is unchanged.
absl::StatusOr<ApplyStats> ApplyDecisions(Module* module,
                                          std::span<const int64_t> decisions);
// The same with the nodes given: they must be AlternativeNodes(*module)
// (callers that keep that list skip ordering the graph again).
absl::StatusOr<ApplyStats> ApplyDecisions(Module* module,
                                          std::span<const int64_t> decisions,
                                          std::span<Instruction* const> nodes);

// Removes what decisions left dead: instructions that became unused
// (`roots` and, recursively, operands left without users), unused fusion
// parameters with the matching fusion operands, and computations that are
// no longer called. Instructions that were already dead before stay.
absl::Status PruneAfterApply(Module* module,
                             std::span<Instruction* const> roots,
                             ApplyStats* stats);

// True when a fused computation has a parameter nothing reads (and that
// is not its root): the first ApplyDecisions, even one keeping every
// original, would prune it.
bool HasUnusedFusionParameters(const Module& module);

// A parameter of `body` that nothing reads and that is not its root: what
// pruning drops from a fused computation.
bool IsUnusedParameter(const Computation& body, const Instruction* param);

// Drops the parameters of `fusion`'s body that nothing reads (and that are
// not its root), with the matching operands of `fusion`, highest first so
// lower numbers stay valid. Returns the operands dropped, in that order:
// their values may now be dead. The caller makes sure `fusion` is its
// body's only caller. Used by the pruning after decisions and by DCE.
absl::StatusOr<std::vector<Instruction*>> RemoveUnusedFusionParameters(
    Instruction* fusion);

// How decisions are made by the CLI and the rewrite loop.
class DecisionPolicy {
 public:
  enum class Kind { kOriginal, kFirst, kRandom };
  // "original" (operand 0), "first" (operand 1, the first candidate),
  // "random" or "random:SEED" (uniform over all operands).
  static absl::StatusOr<DecisionPolicy> Parse(std::string_view text);
  static DecisionPolicy First() { return DecisionPolicy(Kind::kFirst, 0); }
  std::vector<int64_t> Decide(std::span<Instruction* const> nodes);
  Kind kind() const { return kind_; }
  std::string ToString() const;

 private:
  DecisionPolicy(Kind kind, uint64_t seed) : kind_(kind), state_(seed) {}
  Kind kind_;
  uint64_t state_;
};

// Rewrite loops (RewriteLoop, and pipelines that repeat) stop once the
// module holds more than kMaxLoopGrowth times the instructions it held when
// the loop started, plus kLoopGrowthSlack. Some decision sequences
// duplicate without end (General Fusion under random choices on a
// Fibonacci-like chain grows 2.5x per round); the module stays valid, the
// loop just ends there.
inline constexpr int64_t kMaxLoopGrowth = 64;
inline constexpr int64_t kLoopGrowthSlack = 100000;
inline bool GrewTooMuch(int64_t start_size, int64_t size) {
  return size > kMaxLoopGrowth * start_size + kLoopGrowthSlack;
}

// HloEnv's Algorithm 1: augment (dry run of `pass`), decide, apply, until a
// dry run offers no alternatives or `max_iterations` is reached.
struct RewriteLoopStats {
  int64_t iterations = 0;  // dry runs that offered alternatives
  int64_t alternatives = 0;
  int64_t rejected_cyclic = 0;
  int64_t non_original_decisions = 0;
  bool converged = false;
  bool growth_stopped = false;  // see GrewTooMuch
};
absl::StatusOr<RewriteLoopStats> RewriteLoop(Module* module, Pass& pass,
                                             DecisionPolicy& policy,
                                             int64_t max_iterations = 1000);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_ALTERNATIVE_GRAPH_H_
