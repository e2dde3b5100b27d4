#include "hlogym/passes/hlo_dce.h"

#include <gtest/gtest.h>

#include <memory>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ParseAndVerify;

// Runs DCE in apply mode on `text` and checks the result verifies and
// computes the same outputs. A dry run must leave the module as it was.
std::unique_ptr<Module> RunDce(std::string_view text, bool expect_change,
                               bool check_outputs = true) {
  std::unique_ptr<Module> original = ParseAndVerify(text);
  if (original == nullptr) return nullptr;
  HloDce dce;
  // Dry mode: nothing to offer.
  {
    std::unique_ptr<Module> dry = original->Clone();
    const uint64_t hash = DagHash(*dry);
    absl::StatusOr<AugmentStats> stats = dce.RunDry(dry.get());
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (stats.ok()) {
      EXPECT_EQ(stats->alternatives, 0);
    }
    EXPECT_EQ(DagHash(*dry), hash);
  }
  std::unique_ptr<Module> m = original->Clone();
  absl::StatusOr<bool> changed = dce.Run(m.get());
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (changed.ok()) {
    EXPECT_EQ(*changed, expect_change);
  }
  absl::Status v = VerifyModule(*m);
  EXPECT_TRUE(v.ok()) << v << "\n" << test::Text(*m);
  if (check_outputs && v.ok()) {
    test::ExpectSameOutputs(*original, *m);
  }
  if (!expect_change) {
    EXPECT_EQ(DagHash(*m), DagHash(*original));
  }
  return m;
}

TEST(HloDceTest, RemovesDeadChain) {
  auto m = RunDce(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  b = f32[4] negate(a)
  ROOT r = f32[4] add(p, p)
}
)",
                  true);
  ASSERT_NE(m, nullptr);
  const Computation* c = m->entry_computation();
  EXPECT_EQ(c->instruction_count(), 2);
  EXPECT_EQ(c->FindInstruction("a"), nullptr);
  EXPECT_EQ(c->FindInstruction("b"), nullptr);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kAdd);
}

TEST(HloDceTest, KeepsParametersAndLiveInstructions) {
  RunDce(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  a = f32[4] exponential(p)
  ROOT r = f32[4] add(a, p)
}
)",
         false);
}

TEST(HloDceTest, KeepsSideEffects) {
  auto m = RunDce(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  o = f32[] constant(1)
  r = f32[4] rng(z, o), distribution=rng_uniform
  c = f32[4] custom-call(p), custom_call_target="foo", custom_call_has_side_effect=true
  d = f32[4] custom-call(p), custom_call_target="bar", custom_call_has_side_effect=true, frontend_attributes={xla_allow_dce_side_effecting_op="true"}
  ROOT n = f32[4] negate(p)
}
)",
                  true, /*check_outputs=*/false);
  ASSERT_NE(m, nullptr);
  const Computation* c = m->entry_computation();
  EXPECT_NE(c->FindInstruction("r"), nullptr);
  EXPECT_NE(c->FindInstruction("z"), nullptr);
  EXPECT_NE(c->FindInstruction("c"), nullptr);
  // Opted in to removal.
  EXPECT_EQ(c->FindInstruction("d"), nullptr);
}

TEST(HloDceTest, KeepsInstructionsWithControlEdges) {
  RunDce(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  ROOT n = f32[4] negate(p), control-predecessors={a}
}
)",
         false);
}

constexpr char kDeadWhile[] = R"(
HloModule m
cond {
  cp = (s32[], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(3)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[4]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bv = f32[4] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  ni = s32[] add(bi, one)
  nv = f32[4] exponential(bv)
  ROOT bt = (s32[], f32[4]) tuple(ni, nv)
}
ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  g = f32[4] get-tuple-element(w), index=1
  ROOT n = f32[4] negate(p)
}
)";

TEST(HloDceTest, RemovesSideEffectFreeWhileAndItsComputations) {
  auto m = RunDce(kDeadWhile, true);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 2);
  EXPECT_EQ(m->computation_count(), 1);
}

TEST(HloDceTest, KeepsWhileWithSideEffectInBody) {
  const std::string dead_while = kDeadWhile;
  const std::string from = "exponential(bv)";
  const size_t pos = dead_while.find(from);
  const std::string text = dead_while.substr(0, pos) +
                           "custom-call(bv), custom_call_target=\"t\", "
                           "custom_call_has_side_effect=true" +
                           dead_while.substr(pos + from.size());
  // The dead get-tuple-element goes; the loop and its computations stay.
  auto m = RunDce(text, true, /*check_outputs=*/false);
  ASSERT_NE(m, nullptr);
  const Computation* c = m->entry_computation();
  EXPECT_EQ(c->FindInstruction("g"), nullptr);
  ASSERT_NE(c->FindInstruction("w"), nullptr);
  EXPECT_EQ(c->FindInstruction("w")->user_count(), 0);
  EXPECT_EQ(m->computation_count(), 3);
}

TEST(HloDceTest, DropsUnusedMultiOutputFusionOutputs) {
  auto m = RunDce(R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  e = f32[4] exponential(p0)
  n = f32[4] negate(p0)
  s = f32[4] sine(p0)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(e, n, s)
}
ENTRY e {
  p = f32[4] parameter(0)
  f = (f32[4], f32[4], f32[4]) fusion(p), kind=kLoop, calls=fused
  g1 = f32[4] get-tuple-element(f), index=1
  g2 = f32[4] get-tuple-element(f), index=2
  ROOT r = f32[4] add(g1, g2)
}
)",
                  true);
  ASSERT_NE(m, nullptr);
  // The fusion was the body's only caller: both changed in place, so the
  // names stay and no computation is left over.
  EXPECT_EQ(m->computation_count(), 2);
  ASSERT_NE(m->FindComputation("fused"), nullptr);
  const Instruction* root = test::Root(*m);
  ASSERT_EQ(root->opcode(), Opcode::kAdd);
  const Instruction* g1 = root->operand(0);
  const Instruction* g2 = root->operand(1);
  ASSERT_EQ(g1->opcode(), Opcode::kGetTupleElement);
  ASSERT_EQ(g2->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(g1->tuple_index(), 0);
  EXPECT_EQ(g2->tuple_index(), 1);
  const Instruction* fusion = g1->operand(0);
  ASSERT_EQ(fusion, g2->operand(0));
  ASSERT_EQ(fusion->opcode(), Opcode::kFusion);
  EXPECT_EQ(fusion->shape().tuple_shapes_size(), 2);
  const Computation* fc = fusion->fused_computation();
  ASSERT_TRUE(fc->IsFusionComputation());
  const Instruction* froot = fc->root_instruction();
  ASSERT_EQ(froot->opcode(), Opcode::kTuple);
  ASSERT_EQ(froot->operand_count(), 2);
  EXPECT_EQ(froot->operand(0)->opcode(), Opcode::kNegate);
  EXPECT_EQ(froot->operand(1)->opcode(), Opcode::kSin);
  // The exponential went with its output.
  EXPECT_EQ(fc->instruction_count(), 4);
  EXPECT_EQ(fc, m->FindComputation("fused"));
  EXPECT_EQ(fusion->name(), "f");
  EXPECT_EQ(froot->name(), "t");
  // The fusion and its get-tuple-elements moved last, with new ids, where
  // a rebuilt fusion would stand (proposal order depends on it).
  const std::vector<Instruction*> order =
      m->entry_computation()->instructions();
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[0]->name(), "p");
  EXPECT_EQ(order[1], root);
  EXPECT_EQ(order[2], fusion);
  EXPECT_EQ(order[3], g1);
  EXPECT_EQ(order[4], g2);
  EXPECT_GT(fusion->unique_id(), root->unique_id());
  EXPECT_GT(g1->unique_id(), fusion->unique_id());
  EXPECT_GT(g2->unique_id(), g1->unique_id());
}

TEST(HloDceTest, DropsParametersOnlyADeadOutputRead) {
  // Output 0 is unused and is the only reader of parameter 1: the
  // parameter and the fusion's operand go, and the operand's producer
  // (read by nothing else) with them. Parameter 2 was unused to begin
  // with and goes too; numbers close up.
  auto m = RunDce(R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  p2 = f32[4] parameter(2)
  p3 = f32[4] parameter(3)
  e = f32[4] exponential(p1)
  n = f32[4] add(p0, p3)
  ROOT t = (f32[4], f32[4]) tuple(e, n)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] sine(b)
  d = f32[4] cosine(a)
  f = (f32[4], f32[4]) fusion(a, c, d, b), kind=kLoop, calls=fused
  g1 = f32[4] get-tuple-element(f), index=1
  ROOT r = f32[4] negate(g1)
}
)",
                  true);
  ASSERT_NE(m, nullptr);
  const Instruction* f = test::Root(*m)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  // One output left: plain, with the two operands its body reads.
  EXPECT_EQ(f->shape().ToString(), "f32[4]{0}");
  ASSERT_EQ(f->operand_count(), 2);
  EXPECT_EQ(f->operand(0)->name(), "a");
  EXPECT_EQ(f->operand(1)->name(), "b");
  const Computation* fc = f->fused_computation();
  ASSERT_EQ(fc->num_parameters(), 2);
  EXPECT_EQ(fc->parameter_instruction(0)->name(), "p0");
  EXPECT_EQ(fc->parameter_instruction(1)->name(), "p3");
  EXPECT_EQ(fc->parameter_instruction(1)->int_attr(), 1);
  EXPECT_EQ(fc->instruction_count(), 3);  // p0, p3, n
  // sine and cosine lost their only reader.
  EXPECT_EQ(m->entry_computation()->instruction_count(), 4);
  EXPECT_EQ(m->entry_computation()->FindInstruction("c"), nullptr);
  EXPECT_EQ(m->entry_computation()->FindInstruction("d"), nullptr);
  // A second run finds nothing left to do.
  HloDce again;
  absl::StatusOr<bool> changed = again.Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(HloDceTest, KeepsUnusedParametersOfASharedBody) {
  // Two fusions call one body: dropping a parameter would change the
  // other call too, so both keep every operand.
  auto m = RunDce(R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT n = f32[4] negate(p0)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  f1 = f32[4] fusion(a, b), kind=kLoop, calls=fused
  f2 = f32[4] fusion(b, a), kind=kLoop, calls=fused
  ROOT r = f32[4] add(f1, f2)
}
)",
                  false);
  ASSERT_NE(m, nullptr);
  const Instruction* root = test::Root(*m);
  EXPECT_EQ(root->operand(0)->operand_count(), 2);
  EXPECT_EQ(root->operand(1)->operand_count(), 2);
}

TEST(HloDceTest, CopiesAFusionBodyThatAnotherFusionCalls) {
  // Both fusions call `fused`; only the first reads just output 1. It
  // becomes a plain fusion on a trimmed copy, and the second keeps the
  // original body.
  auto m = RunDce(R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  e = f32[4] exponential(p0)
  n = f32[4] negate(p0)
  ROOT t = (f32[4], f32[4]) tuple(e, n)
}
ENTRY e {
  p = f32[4] parameter(0)
  f = (f32[4], f32[4]) fusion(p), kind=kLoop, calls=fused
  g = (f32[4], f32[4]) fusion(p), kind=kLoop, calls=fused
  f1 = f32[4] get-tuple-element(f), index=1
  g0 = f32[4] get-tuple-element(g), index=0
  g1 = f32[4] get-tuple-element(g), index=1
  a = f32[4] add(f1, g0)
  ROOT r = f32[4] add(a, g1)
}
)",
                  true);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->computation_count(), 3);
  const Computation* shared = m->FindComputation("fused");
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->root_instruction()->operand_count(), 2);
  EXPECT_EQ(shared->instruction_count(), 4);
  const Instruction* a = test::Root(*m)->operand(0);
  ASSERT_EQ(a->opcode(), Opcode::kAdd);
  const Instruction* f = a->operand(0);
  const Instruction* g0 = a->operand(1);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  ASSERT_EQ(g0->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(g0->tuple_index(), 0);
  const Instruction* g = g0->operand(0);
  EXPECT_EQ(g->fused_computation(), shared);
  ASSERT_NE(f->fused_computation(), shared);
  EXPECT_FALSE(f->shape().IsTuple());
  EXPECT_EQ(f->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(f->fused_computation()->root_instruction()->opcode(),
            Opcode::kNegate);
  EXPECT_EQ(f->fused_computation()->instruction_count(), 2);
}

TEST(HloDceTest, TrimsARootTupleThatTheBodyAlsoReads) {
  // A dead get-tuple-element in the body reads the root tuple: the trimmed
  // body's root is the one output left, and the old root goes with its
  // reader.
  auto m = RunDce(R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  e = f32[4] exponential(p0)
  n = f32[4] negate(p0)
  s = f32[4] sine(p0)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(e, n, s)
  x = f32[4] get-tuple-element(t), index=0
}
ENTRY e {
  p = f32[4] parameter(0)
  f = (f32[4], f32[4], f32[4]) fusion(p), kind=kLoop, calls=fused
  ROOT g2 = f32[4] get-tuple-element(f), index=2
}
)",
                  true);
  ASSERT_NE(m, nullptr);
  const Instruction* f = test::Root(*m);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_FALSE(f->shape().IsTuple());
  const Computation* fc = f->fused_computation();
  EXPECT_EQ(fc->root_instruction()->opcode(), Opcode::kSin);
  // p0 and sine.
  EXPECT_EQ(fc->instruction_count(), 2);
}

TEST(HloDceTest, TrimmedOutputsTakeTheComputationsOnlyTheyCalled) {
  // Output 0 is a reduction, the only user of `sum`: trimming it in place
  // leaves `sum` uncalled, and it goes too.
  auto m = RunDce(R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p0 = f32[4] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(p0, z), dimensions={0}, to_apply=sum
  n = f32[4] negate(p0)
  ROOT t = (f32[], f32[4]) tuple(r, n)
}
ENTRY e {
  p = f32[4] parameter(0)
  f = (f32[], f32[4]) fusion(p), kind=kInput, calls=fused
  ROOT g1 = f32[4] get-tuple-element(f), index=1
}
)",
                  true);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->FindComputation("sum"), nullptr);
  EXPECT_EQ(m->computation_count(), 2);
  const Computation* fc = m->FindComputation("fused");
  ASSERT_NE(fc, nullptr);
  // p0 and negate, the root. The kind stays, as in HloEnv's DCE.
  EXPECT_EQ(fc->instruction_count(), 2);
  EXPECT_EQ(fc->root_instruction()->opcode(), Opcode::kNegate);
  EXPECT_EQ(test::Root(*m)->opcode(), Opcode::kFusion);
  EXPECT_EQ(test::Root(*m)->fusion_kind(), FusionKind::kInput);
}

TEST(HloDceTest, MakesAOneElementTupleFusionPlain) {
  // Nothing is dead, but a one-element tuple is a multi-output fusion to
  // the fusion rules: it becomes a plain fusion read directly.
  auto m = RunDce(R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  e = f32[4] exponential(p0)
  ROOT t = (f32[4]) tuple(e)
}
ENTRY e {
  p = f32[4] parameter(0)
  f = (f32[4]) fusion(p), kind=kLoop, calls=fused
  g = f32[4] get-tuple-element(f), index=0
  ROOT n = f32[4] negate(g)
}
)",
                  true);
  ASSERT_NE(m, nullptr);
  const Instruction* f = test::Root(*m)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->shape().ToString(), "f32[4]{0}");
  EXPECT_EQ(f->fused_computation()->root_instruction()->opcode(), Opcode::kExp);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 3);
}

TEST(HloDceTest, KeepsFusionOutputsOfRootOrNonGteUsers) {
  // The fusion is the root: all outputs are live.
  RunDce(R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  e = f32[4] exponential(p0)
  n = f32[4] negate(p0)
  ROOT t = (f32[4], f32[4]) tuple(e, n)
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT f = (f32[4], f32[4]) fusion(p), kind=kLoop, calls=fused
}
)",
         false);
  // A tuple user reads the whole value.
  RunDce(R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  e = f32[4] exponential(p0)
  n = f32[4] negate(p0)
  ROOT t = (f32[4], f32[4]) tuple(e, n)
}
ENTRY e {
  p = f32[4] parameter(0)
  f = (f32[4], f32[4]) fusion(p), kind=kLoop, calls=fused
  g = f32[4] get-tuple-element(f), index=0
  ROOT t = ((f32[4], f32[4]), f32[4]) tuple(f, g)
}
)",
         false);
}

TEST(HloDceTest, RemovesOnlyNewlyUncalledComputations) {
  auto m = RunDce(R"(
HloModule m
callee {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
unused {
  u = f32[4] parameter(0)
  ROOT v = f32[4] exponential(u)
}
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] call(p), to_apply=callee
  ROOT r = f32[4] add(p, p)
}
)",
                  true);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->FindComputation("callee"), nullptr);
  // Uncalled in the input: part of its value, kept.
  EXPECT_NE(m->FindComputation("unused"), nullptr);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 2);
}

// A dead call kept for the side effect in its body; the run after finding
// nothing passes both computations by. Once the body loses its side effect
// (only the body changes), the entry runs again and the call goes.
TEST(HloDceTest, MemoSeesCalleesLosingSideEffects) {
  std::unique_ptr<Module> m = ParseAndVerify(R"(
HloModule m
noisy {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  o = f32[] constant(1)
  r = f32[4] rng(z, o), distribution=rng_uniform
  ROOT s = f32[4] add(a, r)
}
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] call(p), to_apply=noisy
  ROOT q = f32[4] negate(p)
}
)");
  ASSERT_NE(m, nullptr);
  HloDce dce;
  ASSERT_FALSE(*dce.Run(m.get()));
  EXPECT_EQ(dce.computations_skipped(), 0);
  ASSERT_FALSE(*dce.Run(m.get()));
  EXPECT_EQ(dce.computations_skipped(), 2);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 3);

  Computation* noisy = m->FindComputation("noisy");
  ASSERT_NE(noisy, nullptr);
  Instruction* s = noisy->root_instruction();
  Instruction* r = s->operand(1);
  ASSERT_TRUE(s->ReplaceOperandWith(1, s->operand(0)).ok());
  ASSERT_TRUE(noisy->RemoveInstruction(r).ok());
  ASSERT_TRUE(*dce.Run(m.get()));
  EXPECT_EQ(dce.computations_skipped(), 2);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 2);
  EXPECT_EQ(m->FindComputation("noisy"), nullptr);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

}  // namespace
}  // namespace hlogym
