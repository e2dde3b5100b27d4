// Synthetic HLO modules for benchmarks and fuzzer seeds.
#ifndef HLOGYM_BENCH_GENERATE_H_
#define HLOGYM_BENCH_GENERATE_H_

#include <cstdint>
#include <memory>

#include "hlogym/ir/module.h"

namespace hlogym {

// Builds a valid module of about `n_instructions` instructions (counting
// those of the reduce regions) with a JAX-like mix: parameters, constants,
// elementwise chains, broadcasts, reshapes and transposes, dots, compares
// and selects, reduces each with its own to_apply region, and tuples with
// get-tuple-element. Instructions carry op_name metadata as JAX dumps do.
// The same (n, seed) always gives the same module.
std::unique_ptr<Module> GenerateSyntheticModule(int64_t n_instructions,
                                                uint64_t seed);

}  // namespace hlogym

#endif  // HLOGYM_BENCH_GENERATE_H_
