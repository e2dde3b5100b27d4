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

}  // namespace hlogym::test

#endif  // HLOGYM_ENV_TEST_MODULES_H_
