#include "hlogym/passes/zero_sized_hlo_elimination.h"

#include <gtest/gtest.h>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;

TEST(ZeroSizedHloEliminationTest, ReplacesEmptyArraysByConstants) {
  ZeroSizedHloElimination pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[3,0] parameter(0)
  q = f32[3,0] parameter(1)
  a = f32[3,0] add(p, q)
  ROOT n = f32[3,0] negate(a)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kConstant);
  EXPECT_EQ(root->shape().ToString(false), "f32[3,0]");
  EXPECT_EQ(root->literal().element_count(), 0);
  // Only the parameters and the constant are left.
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 3);
}

TEST(ZeroSizedHloEliminationTest, KeepsConstantsParametersTuplesAndEffects) {
  ZeroSizedHloElimination pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[0] parameter(0)
  c = f32[0] constant({})
  q = f32[2] parameter(1)
  n = f32[2] negate(q)
  t = (f32[0], f32[0]) tuple(p, c)
  z = f32[] constant(0)
  o = f32[] constant(1)
  r = f32[0] rng(z, o), distribution=rng_uniform
  k = f32[0] custom-call(q), custom_call_target="f", custom_call_has_side_effect=true
  ROOT out = ((f32[0], f32[0]), f32[2], f32[0], f32[0]) tuple(t, n, r, k)
}
)");
}

TEST(ZeroSizedHloEliminationTest, KeepsInstructionsWithControlEdges) {
  ZeroSizedHloElimination pass;
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[0] parameter(0)
  q = f32[2] parameter(1)
  n = f32[2] negate(q)
  a = f32[0] negate(p), control-predecessors={n}
  ROOT t = (f32[0], f32[2]) tuple(a, n)
}
)");
}

}  // namespace
}  // namespace hlogym
