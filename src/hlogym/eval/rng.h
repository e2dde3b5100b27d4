// Deterministic random numbers for rng, rng-bit-generator and
// rng-get-and-update-state (the algorithm is described in
// docs/interpreter.md). The same seed gives the same values on every
// platform: only integer arithmetic and IEEE double operations are used.
#ifndef HLOGYM_EVAL_RNG_H_
#define HLOGYM_EVAL_RNG_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/ir/instruction.h"
#include "hlogym/ir/literal.h"

namespace hlogym {

// A counter-based generator: value k of stream (seed) is
// SplitMix64(seed_key+k).
class CounterRng {
 public:
  explicit CounterRng(uint64_t seed)
      : key_(SplitMix64(seed ^ 0x5851f42d4c957f2dull)) {}
  uint64_t Next() { return SplitMix64(key_ + counter_++); }
  uint64_t counter() const { return counter_; }
  void Advance(uint64_t n) { counter_ += n; }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

// A double uniform in [0, 1) from the top 53 bits.
inline double UnitDouble(uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Evaluates rng, rng-bit-generator and rng-get-and-update-state, drawing
// from `rng` (rng, rng-get-and-update-state) or from the state operand
// (rng-bit-generator, which is a pure function of its operand).
absl::StatusOr<Literal> EvalRandom(const Instruction& inst,
                                   const std::vector<const Literal*>& operands,
                                   CounterRng& rng);

}  // namespace hlogym

#endif  // HLOGYM_EVAL_RNG_H_
