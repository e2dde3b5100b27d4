#include "hlogym/eval/rng.h"

#include <cmath>

#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// A standard normal draw by Box-Muller from two uniforms.
double Normal(uint64_t a, uint64_t b) {
  double u1 = 1.0 - UnitDouble(a);  // (0, 1]: log is finite
  double u2 = UnitDouble(b);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

absl::StatusOr<Literal> EvalRng(const Instruction& inst,
                                const std::vector<const Literal*>& operands,
                                CounterRng& rng) {
  // A third operand (a shape some producers append) does not change the
  // distribution.
  if (operands.size() < 2 || operands[0]->element_count() != 1 ||
      operands[1]->element_count() != 1) {
    return absl::InvalidArgumentError("rng expects two scalar operands");
  }
  const Shape& shape = inst.shape();
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError("rng result is not an array");
  }
  Literal out(shape);
  const PrimitiveType t = shape.element_type();
  const bool normal = inst.attrs().distribution == RandomDistribution::kNormal;
  const int64_t n = out.element_count();
  if (IsFloatingPointType(t)) {
    double a = operands[0]->GetAsDouble(0);
    double b = operands[1]->GetAsDouble(0);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t r1 = rng.Next();
      double v;
      if (normal) {
        v = a + b * Normal(r1, rng.Next());
      } else {
        v = a + (b - a) * UnitDouble(r1);
      }
      out.SetFromDouble(i, v);
      // Rounding may reach the open upper bound: fold it back to a.
      if (!normal && b > a && out.GetAsDouble(i) >= b) out.SetFromDouble(i, a);
    }
    return out;
  }
  if (IsIntegralType(t) && !normal) {
    if (IsUnsignedIntegralType(t)) {
      uint64_t a = operands[0]->GetAsUint64(0);
      uint64_t b = operands[1]->GetAsUint64(0);
      uint64_t range = b > a ? b - a : 0;
      for (int64_t i = 0; i < n; ++i) {
        uint64_t r = rng.Next();
        out.SetFromInt64(i, static_cast<int64_t>(a + (range ? r % range : 0)));
      }
    } else {
      int64_t a = operands[0]->GetAsInt64(0);
      int64_t b = operands[1]->GetAsInt64(0);
      uint64_t range =
          b > a ? static_cast<uint64_t>(b) - static_cast<uint64_t>(a) : 0;
      for (int64_t i = 0; i < n; ++i) {
        uint64_t r = rng.Next();
        out.SetFromInt64(i, static_cast<int64_t>(static_cast<uint64_t>(a) +
                                                 (range ? r % range : 0)));
      }
    }
    return out;
  }
  return absl::InvalidArgumentError(
      StrCat("rng does not produce ", PrimitiveTypeName(t),
             normal ? " with a normal distribution" : ""));
}

absl::StatusOr<Literal> EvalRngBitGenerator(
    const Instruction& inst, const std::vector<const Literal*>& operands) {
  const Shape& shape = inst.shape();
  // The result is (new state, bits), or the bits alone.
  const bool with_state = shape.IsTuple();
  if (operands.size() != 1 || !operands[0]->shape().IsArray() ||
      (with_state &&
       (shape.tuple_shapes_size() != 2 || !shape.tuple_shapes(1).IsArray())) ||
      (!with_state && !shape.IsArray())) {
    return absl::InvalidArgumentError(
        "rng-bit-generator expects a state array and a (state, bits) or bits "
        "result");
  }
  const Literal& state = *operands[0];
  // The key is a hash of every state word's bits: the output is a pure
  // function of the state, so equal states give equal bits.
  uint64_t key = 0x243f6a8885a308d3ull;
  for (int64_t i = 0; i < state.element_count(); ++i) {
    key = SplitMix64(key ^ state.GetBits(i));
  }
  Literal bits(with_state ? shape.tuple_shapes(1) : shape);
  const PrimitiveType bt = bits.shape().element_type();
  const int width = BitWidth(bt);
  const int64_t n = bits.element_count();
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = SplitMix64(key + static_cast<uint64_t>(i));
    if (IsFloatingPointType(bt)) {
      bits.SetFromDouble(i, UnitDouble(r));
    } else {
      if (width < 64) r &= (uint64_t{1} << width) - 1;
      bits.SetBits(i, r);
    }
  }
  if (!with_state) return bits;
  // The new state advances the first word by the number of outputs.
  Literal next = state;
  if (next.element_count() > 0 && IsIntegralType(next.shape().element_type())) {
    uint64_t w0 = next.GetAsUint64(0) + static_cast<uint64_t>(n);
    next.SetFromInt64(0, static_cast<int64_t>(w0));
  }
  Literal out(shape);
  (*out.mutable_tuple_elements())[0] = std::move(next);
  (*out.mutable_tuple_elements())[1] = std::move(bits);
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalRandom(const Instruction& inst,
                                   const std::vector<const Literal*>& operands,
                                   CounterRng& rng) {
  switch (inst.opcode()) {
    case Opcode::kRng:
      return EvalRng(inst, operands, rng);
    case Opcode::kRngBitGenerator:
      return EvalRngBitGenerator(inst, operands);
    case Opcode::kRngGetAndUpdateState: {
      if (!inst.shape().IsArray() || inst.shape().ElementsIn() < 1) {
        return absl::InvalidArgumentError(
            "rng-get-and-update-state result is not an array");
      }
      // {draw counter, 0}: the state a stateful generator would read, then
      // the counter advances by delta.
      Literal out(inst.shape());
      out.SetFromInt64(0, static_cast<int64_t>(rng.counter()));
      rng.Advance(static_cast<uint64_t>(inst.attrs().delta));
      return out;
    }
    default:
      return absl::InvalidArgumentError("not a random-number instruction");
  }
}

}  // namespace hlogym
