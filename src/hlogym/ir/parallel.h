#ifndef HLOGYM_IR_PARALLEL_H_
#define HLOGYM_IR_PARALLEL_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace hlogym {

// The most threads ParallelFor uses, the caller's included: the
// HLOGYM_THREADS environment variable when set to a positive number, else
// the hardware's thread count (at most 64).
int64_t Parallelism();

// Overrides Parallelism() for the whole process (1: everything serial;
// 0 or less: back to the default).
void SetParallelism(int64_t threads);

// Calls fn(i) once for every i in [0, n), spread over up to Parallelism()
// threads (the caller's and a shared pool's) in chunks taken as threads
// free up. Returns when every call has returned. Callers must make their
// results independent of which thread runs which i.
//
// Runs everything on the caller's thread when n < min_parallel, when
// Parallelism() is 1, or when another ParallelFor holds the pool (a call
// from inside fn, or from search workers that already keep the cores
// busy): the pool is never oversubscribed.
void ParallelFor(int64_t n, int64_t min_parallel,
                 absl::FunctionRef<void(int64_t)> fn);

}  // namespace hlogym

#endif  // HLOGYM_IR_PARALLEL_H_
