// FlattenCallGraph: gives every sequential call site (call, while,
// conditional) its own copy of the computations it calls.
#ifndef HLOGYM_PASSES_FLATTEN_CALL_GRAPH_H_
#define HLOGYM_PASSES_FLATTEN_CALL_GRAPH_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// A deep copy of `computation` ready to be added to `module`: instructions
// get fresh ids (assigned when added) and module-unique names. Called
// computations still point at the originals.
std::unique_ptr<Computation> CloneForModule(const Computation& computation,
                                            Module* module);

// Whether `opcode` calls computations in a sequential (control-flow)
// context, as opposed to an embedded one (fusion, reducers, comparators).
bool IsSequentialCallOpcode(Opcode opcode);

class FlattenCallGraph : public Pass {
 public:
  std::string_view name() const override { return "flatten-call-graph"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_FLATTEN_CALL_GRAPH_H_
