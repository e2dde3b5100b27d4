#include "hlogym/passes/call_counts.h"

namespace hlogym {

absl::flat_hash_map<const Computation*, CallsOf> CountCalls(
    const Module& module) {
  absl::flat_hash_map<const Computation*, CallsOf> calls;
  for (const auto& c : module.computations()) {
    c->ForEachInstruction([&](Instruction* i) {
      for (const Computation* callee : i->called_computations()) {
        CallsOf& of = calls[callee];
        if (of.count++ == 0) of.first = i;
      }
    });
  }
  return calls;
}

}  // namespace hlogym
