// Comparison of two results (literals), leaf buffer by leaf buffer, with a
// report fit for people and for tests.
//
// Floating elements a (actual) and b (expected) match when
//   |a - b| <= atol + rtol * |b|,
// NaN matches NaN, and an infinity matches only the same infinity. Complex
// elements compare each part that way. Integers and pred must be equal.
#ifndef HLOGYM_EVAL_COMPARE_H_
#define HLOGYM_EVAL_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlogym/ir/literal.h"
#include "hlogym/ir/module.h"

namespace hlogym {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

// Defaults per element type (component type for complex): f64 1e-9, f32
// 1e-5, f16 1e-2, bf16 5e-2, and 2^(1-m) for the f8/f6/f4 types with m
// mantissa bits (f8e4m3fn: 0.25); rtol and atol alike. Integers and pred:
// zero (exact).
Tolerance DefaultTolerance(PrimitiveType type);

struct CompareOptions {
  // When set, replace the per-type default for every floating buffer.
  std::optional<double> rtol;
  std::optional<double> atol;
  // The least precise floating type the computation went through: a
  // floating buffer then uses the looser of its own type's default and
  // this type's. An f32 output computed from bf16 values carries bf16
  // rounding, and a rewrite may legally move where that rounding happens.
  std::optional<PrimitiveType> computed_in;
};

// The floating element type with the fewest mantissa bits among the
// shapes of every instruction of `module` (complex counts as its
// component); nullopt when it has no floating values.
std::optional<PrimitiveType> LeastPreciseFloatType(const Module& module);

// The comparison of one array leaf (or of a structural difference).
struct BufferComparison {
  std::string name;             // out<j>: j-th array leaf of `expected`
  std::vector<int64_t> index;   // tuple index path ({} for an array root)
  Shape a_shape, b_shape;       // layouts ignored
  std::string structure_error;  // set when the two cannot be compared
  bool exact = false;           // integers and pred
  Tolerance tolerance;          // floating buffers
  int64_t elements = 0;
  int64_t mismatches = 0;      // elements (not parts) that differ
  int64_t nan_mismatches = 0;  // NaN on one side only
  int64_t inf_mismatches = 0;  // an infinity not matched by the same one
  // Over pairs of finite values; max_rel_error only where b != 0.
  double max_abs_error = 0;
  double max_rel_error = 0;
  // The first mismatching element in row-major order.
  std::vector<int64_t> first_mismatch;
  std::string first_a, first_b;  // its values as text

  bool ok() const { return structure_error.empty() && mismatches == 0; }
};

struct CompareReport {
  bool ok = true;
  std::vector<BufferComparison> buffers;
  // One line per buffer, then a summary line.
  std::string ToString() const;
};

// Compares `a` with the reference `b`; tuples element by element, tokens
// are equal to tokens.
CompareReport Compare(const Literal& a, const Literal& b,
                      const CompareOptions& options = {});

}  // namespace hlogym

#endif  // HLOGYM_EVAL_COMPARE_H_
