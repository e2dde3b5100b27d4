// HloDCE: removes dead instructions, unused outputs of multi-output fusions
// (one with a single output left becomes a plain fusion), fusion parameters
// nothing reads (with their operands, where the body has one caller) and
// computations left uncalled.
#ifndef HLOGYM_PASSES_HLO_DCE_H_
#define HLOGYM_PASSES_HLO_DCE_H_

#include <cstdint>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// Computations wrapped by async ops (async-start/update/done, and the
// wrappers the parser builds for `op-start` shorthand). They hold one
// instruction besides their parameters, so passes leave them alone.
absl::flat_hash_set<const Computation*> AsyncComputations(const Module& module);

// Instructions that may carry the value of an async-start or -update on
// its way to the matching update or done (through tuples, copies, barriers,
// annotations and while loops). The verifier traces such values through
// these but not through an alternatives node, so dry runs leave them alone.
absl::flat_hash_set<const Instruction*> AsyncCarriers(const Module& module);

// The computations some instruction of `module` calls.
absl::flat_hash_set<const Computation*> CalledComputations(
    const Module& module);

// Removes the computations of `module` that were in `called_before` and
// that no instruction calls any more (repeatedly: removing one may leave
// its callees uncalled). Computations that were uncalled before stay: they
// are part of the input. Returns whether any was removed.
absl::StatusOr<bool> RemoveNewlyUncalledComputations(
    Module* module,
    const absl::flat_hash_set<const Computation*>& called_before);

// Deletion has no alternative form, so a dry run proposes nothing.
// A computation where a run removed nothing is marked (kPassMemoDce) and
// passed by while it and everything it calls are unchanged.
class HloDce : public Pass {
 public:
  std::string_view name() const override { return "hlo-dce"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  // Computations passed by because of a memo, over this object's runs.
  int64_t computations_skipped() const { return computations_skipped_; }

 private:
  int64_t computations_skipped_ = 0;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_HLO_DCE_H_
