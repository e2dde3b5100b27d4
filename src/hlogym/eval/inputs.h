// Deterministic random inputs for running a module without input files.
//
// Values depend only on (seed, leaf, element index), never on a library's
// random engine, so a seed means the same inputs on every platform and in
// every release. `leaf` numbers the array leaves of all parameters,
// depth-first in parameter order with tokens skipped (the param<k> naming of
// npy.h). Per element type:
//   floats    N(0, 1) by Box-Muller, rounded to nearest even to the type;
//             types without a sign bit take |z|; values beyond a narrow
//             type's range become its largest finite value (same sign)
//   complex   real and imaginary parts independent N(0, 1)
//   signed    uniform integers in [-4, 4] (clipped to the type's range)
//   unsigned  uniform integers in [0, 8] (clipped to the type's range)
//   pred      true with probability 1/2
//   token     a token; tuples element by element
// docs/interpreter.md gives the exact formulas.
#ifndef HLOGYM_EVAL_INPUTS_H_
#define HLOGYM_EVAL_INPUTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/literal.h"

namespace hlogym {

// The splitmix64 output function of x.
uint64_t SplitMix64(uint64_t x);
// SplitMix64(SplitMix64(SplitMix64(seed) ^ leaf) ^ counter).
uint64_t InputHash(uint64_t seed, uint64_t leaf, uint64_t counter);
// ((InputHash >> 11) + 1) * 2^-53, in (0, 1].
double InputUniform(uint64_t seed, uint64_t leaf, uint64_t counter);
// sqrt(-2 log(u1)) * cos(2 pi u2) with u1 = InputUniform(.., counter),
// u2 = InputUniform(.., counter + 1).
double InputNormal(uint64_t seed, uint64_t leaf, uint64_t counter);

// One value per parameter shape. Fails for opaque, buffer and unbounded
// dynamic shapes, whose contents cannot be made up.
absl::StatusOr<std::vector<Literal>> GenerateInputs(
    absl::Span<const Shape> parameter_shapes, uint64_t seed);

// An array of `shape` filled as above, as leaf number `leaf`.
absl::StatusOr<Literal> GenerateArray(const Shape& shape, uint64_t seed,
                                      uint64_t leaf);

// The parameter shapes of a computation, in parameter order.
std::vector<Shape> ParameterShapes(const Computation& computation);

}  // namespace hlogym

#endif  // HLOGYM_EVAL_INPUTS_H_
