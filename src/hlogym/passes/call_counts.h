// Who calls each computation, counted in one scan of a module.
#ifndef HLOGYM_PASSES_CALL_COUNTS_H_
#define HLOGYM_PASSES_CALL_COUNTS_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/instruction.h"
#include "hlogym/ir/module.h"

namespace hlogym {

// The calls of one computation: how many (an instruction that names it
// twice counts twice) and the first caller in module order.
struct CallsOf {
  Instruction* first = nullptr;
  int64_t count = 0;
};

// Every called computation's calls. Passes that only ask whether a fusion
// is its body's sole caller use this rather than Module::Callers, which
// keeps a list per computation.
absl::flat_hash_map<const Computation*, CallsOf> CountCalls(
    const Module& module);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CALL_COUNTS_H_
