// Small predicates passes use to match patterns.
#ifndef HLOGYM_PASSES_PATTERN_UTIL_H_
#define HLOGYM_PASSES_PATTERN_UTIL_H_

#include <cstdint>
#include <optional>

#include "hlogym/ir/module.h"

namespace hlogym {

// The constant a rule may treat as a scalar: a scalar constant, or a
// broadcast of one (XLA's matchers accept both). nullptr otherwise.
const Instruction* ScalarConstantOf(const Instruction* inst);

// Every element of `inst` equals `value` (constants of any rank, and
// broadcasts of scalar constants). Works for integer, pred, float and
// complex (real part equals, imaginary part 0) types. NaN never matches.
bool IsAll(const Instruction* inst, double value);
// Same, for integers that do not fit a double exactly.
bool IsAllInt(const Instruction* inst, int64_t value);

// The value of a scalar-like constant (see ScalarConstantOf) as a double.
std::optional<double> ScalarConstantValue(const Instruction* inst);

// A constant or a broadcast of a constant (any rank).
bool IsConstantOrBroadcastConstant(const Instruction* inst);

// XLA's IsNonNegative (checklist 4.0): x*x, abs, exp, iota, broadcast of a
// non-negative, constants >= 0 that are neither NaN nor -0, min of two
// non-negatives, max with one non-negative, power with a non-negative
// base, select with both branches non-negative.
bool IsNonNegative(const Instruction* inst);

// The computation is a single binary op of its two scalar parameters
// (p0 op p1 or p1 op p0 for commutative ops); returns that opcode.
std::optional<Opcode> ScalarReducerOpcode(const Computation* computation);

// Exactly one user (a user counts once however many operands it takes).
bool HasSingleUser(const Instruction* inst);

// Element types: both shapes are arrays of the same element type.
bool SameElementType(const Instruction* a, const Instruction* b);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_PATTERN_UTIL_H_
