// HLO modules shared by the environment and search tests.
#ifndef HLOGYM_ENV_TEST_MODULES_H_
#define HLOGYM_ENV_TEST_MODULES_H_

#include <string_view>

namespace hlogym::test {

// add(x, broadcast(0)): the algebraic simplifier offers a rewrite at each
// of its runs inside xla-gpu, and keeping the original leaves the module
// unchanged from one pause to the next.
inline constexpr std::string_view kAddZero = R"(
HloModule add_zero
ENTRY main {
  p0 = f32[1024] parameter(0)
  z = f32[] constant(0)
  b = f32[1024] broadcast(z), dimensions={}
  ROOT a = f32[1024] add(p0, b)
}
)";

// One fusion: exp into add.
inline constexpr std::string_view kChain = R"(
HloModule chain
ENTRY main {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  e = f32[1024] exponential(p0)
  ROOT a = f32[1024] add(e, p1)
}
)";

// A softmax-like row: three decision steps for pick-first.
inline constexpr std::string_view kSoftmaxRow = R"(
HloModule reduce
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p0 = f32[64,256] parameter(0)
  e = f32[64,256] exponential(p0)
  z = f32[] constant(0)
  r = f32[64] reduce(e, z), dimensions={1}, to_apply=add_f32
  b = f32[64,256] broadcast(r), dimensions={0}
  d = f32[64,256] divide(e, b)
  ROOT m = f32[64,256] multiply(d, d)
}
)";

// t feeds two users: six alternatives nodes at the start, one of 3.
inline constexpr std::string_view kDiamond = R"(
HloModule diamond
ENTRY main {
  p0 = f32[4096] parameter(0)
  p1 = f32[4096] parameter(1)
  t = f32[4096] tanh(p0)
  l = f32[4096] log(t)
  s = f32[4096] sqrt(t)
  a = f32[4096] add(l, s)
  ROOT m = f32[4096] multiply(a, p1)
}
)";

}  // namespace hlogym::test

#endif  // HLOGYM_ENV_TEST_MODULES_H_
