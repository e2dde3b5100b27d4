#include "hlogym/passes/flatten_call_graph.h"

#include <gtest/gtest.h>

#include <string_view>
#include <utility>
#include <vector>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;

using test::ExpectRewrite;

// Every computation called by a call, while or conditional has exactly
// one such call site.
void ExpectFlat(const Module& m) {
  auto callers = m.Callers();
  for (const auto& [callee, list] : callers) {
    int64_t sequential = 0;
    for (const Instruction* i : list) {
      for (const Computation* c : i->called_computations()) {
        if (c == callee && IsSequentialCallOpcode(i->opcode())) ++sequential;
      }
    }
    EXPECT_LE(sequential, 1) << callee->name();
  }
}

TEST(FlattenCallGraphTest, ClonesCalleeOfSecondCall) {
  FlattenCallGraph pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
f {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=f
  c2 = f32[4] call(c1), to_apply=f
  ROOT n = f32[4] exponential(c2)
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.applied->computation_count(), 3);
  const Instruction* c2 = test::Root(*r.applied)->operand(0);
  const Instruction* c1 = c2->operand(0);
  ASSERT_EQ(c1->opcode(), Opcode::kCall);
  ASSERT_EQ(c2->opcode(), Opcode::kCall);
  EXPECT_EQ(c1->to_apply()->name(), "f");
  EXPECT_NE(c2->to_apply(), c1->to_apply());
  EXPECT_EQ(DagHash(*c2->to_apply()), DagHash(*c1->to_apply()));
  ExpectFlat(*r.applied);
  EXPECT_EQ(r.dry.alternatives, 1);
}

constexpr char kSharedLoopBody[] = R"(
HloModule m
inner {
  a = f32[4] parameter(0)
  ROOT b = f32[4] exponential(a)
}
cond {
  cp = (s32[], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(2)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[4]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bv = f32[4] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  ni = s32[] add(bi, one)
  nv = f32[4] call(bv), to_apply=inner
  ROOT bt = (s32[], f32[4]) tuple(ni, nv)
}
ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w1 = (s32[], f32[4]) while(init), condition=cond, body=body
  w2 = (s32[], f32[4]) while(w1), condition=cond, body=body
  ROOT g = f32[4] get-tuple-element(w2), index=1
}
)";

TEST(FlattenCallGraphTest, ClonesLoopComputationsAndTheirCallees) {
  FlattenCallGraph pass;
  test::RewriteResult r = ExpectRewrite(pass, kSharedLoopBody);
  ASSERT_NE(r.applied, nullptr);
  ExpectFlat(*r.applied);
  // cond, body and inner once more for the second loop.
  EXPECT_EQ(r.applied->computation_count(), 7);
  const Instruction* w2 = test::Root(*r.applied)->operand(0);
  const Instruction* w1 = w2->operand(0);
  ASSERT_EQ(w1->opcode(), Opcode::kWhile);
  ASSERT_EQ(w2->opcode(), Opcode::kWhile);
  EXPECT_EQ(w1->while_body()->name(), "body");
  EXPECT_EQ(w1->while_condition()->name(), "cond");
  EXPECT_NE(w2->while_body(), w1->while_body());
  EXPECT_NE(w2->while_condition(), w1->while_condition());
  const Instruction* call1 = w1->while_body()->root_instruction()->operand(1);
  const Instruction* call2 = w2->while_body()->root_instruction()->operand(1);
  ASSERT_EQ(call2->opcode(), Opcode::kCall);
  EXPECT_NE(call1->to_apply(), call2->to_apply());
}

TEST(FlattenCallGraphTest, ClonesEverySequentialSiteOfAnEmbeddedCallee) {
  FlattenCallGraph pass;
  test::RewriteResult r = ExpectRewrite(pass, R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=sum
  ROOT c = f32[] call(r, z), to_apply=sum
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* call = test::Root(*r.applied);
  ASSERT_EQ(call->opcode(), Opcode::kCall);
  EXPECT_NE(call->to_apply()->name(), "sum");
  EXPECT_EQ(call->operand(0)->to_apply()->name(), "sum");
}

TEST(FlattenCallGraphTest, LeavesFlatAndEmbeddedOnlyGraphs) {
  FlattenCallGraph pass;
  // One call site each; reducers shared by reduces are embedded calls.
  ExpectNoRewrite(pass, R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
fused {
  fp = f32[4] parameter(0)
  ROOT fe = f32[4] exponential(fp)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  c = f32[4] call(p), to_apply=f
  f1 = f32[4] fusion(c), kind=kLoop, calls=fused
  f2 = f32[4] fusion(f1), kind=kLoop, calls=fused
  r1 = f32[] reduce(f2, z), dimensions={0}, to_apply=sum
  r2 = f32[] reduce(p, z), dimensions={0}, to_apply=sum
  ROOT t = (f32[], f32[]) tuple(r1, r2)
}
)");
}

TEST(FlattenCallGraphTest, KeepsCallSitesWithControlEdges) {
  FlattenCallGraph pass;
  ExpectNoRewrite(pass, R"(
HloModule m
f {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=f
  c2 = f32[4] call(p), to_apply=f, control-predecessors={c1}
  ROOT t = (f32[4], f32[4]) tuple(c1, c2)
}
)");
}

}  // namespace
}  // namespace hlogym
