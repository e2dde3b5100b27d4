#include "hlogym/passes/hlo_cse.h"

#include <gtest/gtest.h>

#include <memory>

#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;

TEST(HloCseTest, MergesIdenticalConstants) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] constant({1, 2, 3, 4})
  c2 = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, c1)
  ROOT m = f32[4] multiply(a, c2)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kMultiply);
  EXPECT_EQ(root->operand(1), root->operand(0)->operand(1));
  EXPECT_EQ(root->operand(1)->name(), "c1");
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 4);
  EXPECT_EQ(r.dry.alternatives, 1);
}

TEST(HloCseTest, KeepsDifferentConstants) {
  HloCse cse;
  // Different values, different types, -0 against +0.
  ExpectNoRewrite(cse, R"(
HloModule m
ENTRY e {
  c1 = f32[2] constant({1, 2})
  c2 = f32[2] constant({1, 3})
  c3 = f32[] constant(0)
  c4 = f32[] constant(-0)
  c5 = s32[2] constant({1, 2})
  ROOT t = (f32[2], f32[2], f32[], f32[], s32[2]) tuple(c1, c2, c3, c4, c5)
}
)");
}

TEST(HloCseTest, LeavesDeadDuplicatesToDce) {
  HloCse cse;
  // The first copies are dead: nothing merges into them.
  ExpectNoRewrite(cse, R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] constant({1, 2, 3, 4})
  n1 = f32[4] negate(p)
  c2 = f32[4] constant({1, 2, 3, 4})
  n2 = f32[4] negate(p)
  ROOT a = f32[4] add(n2, c2)
}
)");
}

TEST(HloCseTest, MergesCommutedOperandsAndChains) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  a1 = f32[4] add(p, q)
  a2 = f32[4] add(q, p)
  n1 = f32[4] negate(a1)
  n2 = f32[4] negate(a2)
  ROOT t = (f32[4], f32[4]) tuple(n1, n2)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kTuple);
  // Apply mode: the adds merge, and then the negates.
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(root->operand(0)->name(), "n1");
  EXPECT_EQ(root->operand(0)->operand(0)->name(), "a1");
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 5);
  // Dry mode sees the original graph: only the adds are equal.
  EXPECT_EQ(r.dry.alternatives, 1);
}

TEST(HloCseTest, KeepsNonCommutativeSwappedOperands) {
  HloCse cse;
  ExpectNoRewrite(cse, R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  d1 = f32[4] subtract(p, q)
  d2 = f32[4] subtract(q, p)
  ROOT t = (f32[4], f32[4]) tuple(d1, d2)
}
)");
}

TEST(HloCseTest, KeepsDifferentAttributes) {
  HloCse cse;
  ExpectNoRewrite(cse, R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  sl1 = f32[4] slice(p), slice={[0:4]}
  sl2 = f32[4] slice(p), slice={[4:8]}
  c1 = pred[8] compare(p, p), direction=LT
  c2 = pred[8] compare(p, p), direction=GT
  b1 = f32[8,8] broadcast(p), dimensions={0}
  b2 = f32[8,8] broadcast(p), dimensions={1}
  ROOT t = (f32[4], f32[4], pred[8], pred[8], f32[8,8], f32[8,8]) tuple(sl1, sl2, c1, c2, b1, b2)
}
)");
}

TEST(HloCseTest, MergesSliceWithEqualAttributes) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  sl1 = f32[4] slice(p), slice={[2:6]}
  sl2 = f32[4] slice(p), slice={[2:6]}
  ROOT a = f32[4] add(sl1, sl2)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(root->operand(0)->name(), "sl1");
}

TEST(HloCseTest, KeepsSideEffectsControlEdgesAndParameters) {
  HloCse cse;
  ExpectNoRewrite(cse, R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  z = f32[] constant(0)
  o = f32[] constant(1)
  r1 = f32[4] rng(z, o), distribution=rng_uniform
  r2 = f32[4] rng(z, o), distribution=rng_uniform
  c1 = f32[4] custom-call(p), custom_call_target="f", custom_call_has_side_effect=true
  c2 = f32[4] custom-call(p), custom_call_target="f", custom_call_has_side_effect=true
  n1 = f32[4] negate(p)
  n2 = f32[4] negate(p), control-predecessors={r1}
  ROOT t = (f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(p, q, r1, r2, c1, c2, n1, n2)
}
)");
}

// Side effects inside called bodies count too: two calls of a body with an
// rng stay apart, while the pure calls beside them merge, also when one of
// them comes after the impure ones.
TEST(HloCseTest, KeepsCallsWithSideEffectsInTheirBodies) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, R"(
HloModule m
noisy {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  o = f32[] constant(1)
  r = f32[4] rng(z, o), distribution=rng_uniform
  ROOT s = f32[4] add(a, r)
}
quiet {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
ENTRY e {
  p = f32[4] parameter(0)
  n1 = f32[4] call(p), to_apply=noisy
  n2 = f32[4] call(p), to_apply=noisy
  q1 = f32[4] call(p), to_apply=quiet
  q2 = f32[4] call(p), to_apply=quiet
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(n1, n2, q1, q2)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->operand_count(), 4);
  EXPECT_NE(root->operand(0), root->operand(1));
  EXPECT_EQ(root->operand(2), root->operand(3));
  EXPECT_EQ(root->operand(2)->to_apply()->name(), "quiet");
}

TEST(HloCseTest, KeepsAsyncPairs) {
  HloCse cse;
  // Each start must keep its own done.
  ExpectNoRewrite(cse, R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  st1 = f32[4] all-reduce-start(p), replica_groups={}, to_apply=sum
  d1 = f32[4] all-reduce-done(st1)
  st2 = f32[4] all-reduce-start(p), replica_groups={}, to_apply=sum
  d2 = f32[4] all-reduce-done(st2)
  ROOT t = (f32[4], f32[4]) tuple(d1, d2)
}
)");
}

constexpr char kTwoReduces[] = R"(
HloModule m
sum1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sum2 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT t = f32[] OP(x, y)
}
ENTRY e {
  p = f32[4,8] parameter(0)
  z = f32[] constant(0)
  r1 = f32[4] reduce(p, z), dimensions={1}, to_apply=sum1
  r2 = f32[4] reduce(p, z), dimensions={1}, to_apply=sum2
  ROOT d = f32[4] subtract(r1, r2)
}
)";

std::string WithOp(const char* op) {
  const std::string text = kTwoReduces;
  const size_t pos = text.find("OP");
  return text.substr(0, pos) + op + text.substr(pos + 2);
}

TEST(HloCseTest, ComparesCalledComputationsStructurally) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, WithOp("add"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kSubtract);
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(root->operand(0)->to_apply()->name(), "sum1");
}

TEST(HloCseTest, KeepsReducesWithDifferentReducers) {
  HloCse cse;
  ExpectNoRewrite(cse, WithOp("maximum"));
}

TEST(HloCseTest, MergesIotasButNotDifferentOnes) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, R"(
HloModule m
ENTRY e {
  i1 = s32[4,8] iota(), iota_dimension=1
  i2 = s32[4,8] iota(), iota_dimension=1
  i3 = s32[4,8] iota(), iota_dimension=0
  a = s32[4,8] add(i1, i2)
  ROOT m = s32[4,8] multiply(a, i3)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  const Instruction* add = root->operand(0);
  EXPECT_EQ(add->operand(0), add->operand(1));
  EXPECT_EQ(add->operand(0)->name(), "i1");
  EXPECT_EQ(root->operand(1)->name(), "i3");
}

TEST(HloCseTest, MergesInsideFusionComputations) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  e1 = f32[4] exponential(p0)
  e2 = f32[4] exponential(p0)
  ROOT a = f32[4] add(e1, e2)
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT f = f32[4] fusion(p), kind=kLoop, calls=fused
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* a =
      test::Root(*r.applied)->fused_computation()->root_instruction();
  EXPECT_EQ(a->operand(0), a->operand(1));
}

// Two fusions whose bodies have the same size, parameters and root opcode
// and differ only below the root: bucketed together, never merged.
constexpr char kTwoFusions[] = R"(
HloModule m
fused1 {
  p0 = f32[4] parameter(0)
  e = f32[4] exponential(p0)
  ROOT a = f32[4] add(e, p0)
}
fused2 {
  q0 = f32[4] parameter(0)
  l = f32[4] OP(q0)
  ROOT b = f32[4] add(l, q0)
}
ENTRY e {
  p = f32[4] parameter(0)
  f1 = f32[4] fusion(p), kind=kLoop, calls=fused1
  f2 = f32[4] fusion(p), kind=kLoop, calls=fused2
  ROOT d = f32[4] subtract(f1, f2)
}
)";

TEST(HloCseTest, KeepsFusionsThatDifferBelowTheRoot) {
  HloCse cse;
  std::string text = kTwoFusions;
  text.replace(text.find("OP"), 2, "log");
  ExpectNoRewrite(cse, text);
}

// CSE merges fusion f2 into f1, both read by the root.
void ExpectF2MergedIntoF1(const std::string& text) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, text);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(root->operand(0)->name(), "f1");
}

TEST(HloCseTest, MergesFusionsWithEqualBodies) {
  std::string text = kTwoFusions;
  text.replace(text.find("OP"), 2, "exponential");
  ExpectF2MergedIntoF1(text);
}

// Two fusions of the same values whose bodies list the same graph in
// different orders (a parameter declared after its first reader): equal,
// as XLA compares computations from the root through operands. `SWAP`
// becomes the operand order of the second body's `and`.
constexpr char kReorderedBodies[] = R"(
HloModule m
fused1 {
  a0 = pred[4] parameter(0)
  a1 = pred[4] parameter(1)
  n = pred[4] not(a0)
  ROOT r = pred[4] and(n, a1)
}
fused2 {
  b0 = pred[4] parameter(0)
  m = pred[4] not(b0)
  b1 = pred[4] parameter(1)
  ROOT r = pred[4] and(SWAP)
}
ENTRY e {
  p = pred[4] parameter(0)
  q = pred[4] parameter(1)
  f1 = pred[4] fusion(p, q), kind=kLoop, calls=fused1
  f2 = pred[4] fusion(p, q), kind=kLoop, calls=fused2
  ROOT o = pred[4] xor(f1, f2)
}
)";

TEST(HloCseTest, MergesFusionsWhoseBodiesListInstructionsInAnotherOrder) {
  std::string text = kReorderedBodies;
  text.replace(text.find("SWAP"), 4, "m, b1");
  ExpectF2MergedIntoF1(text);
}

TEST(HloCseTest, KeepsFusionsWhoseBodiesReadParametersDifferently) {
  HloCse cse;
  // and(not(p0), p1) against and(p1, not(p0)): `and` commutes, but XLA's
  // comparison of computations pairs operands in order, and so does this.
  std::string text = kReorderedBodies;
  text.replace(text.find("SWAP"), 4, "b1, m");
  ExpectNoRewrite(cse, text);
  // and(not(p0), p1) against and(not(p0), p0): different parameters.
  text = kReorderedBodies;
  text.replace(text.find("SWAP"), 4, "m, b0");
  ExpectNoRewrite(cse, text);
}

// A multi-output fusion whose root lists `e` twice (positions 0 and 2).
// `USERS` becomes the entry's readers of its outputs.
constexpr char kRepeatedOutputs[] = R"(
HloModule m
fused {
  p0 = f32[4] parameter(0)
  e = f32[4] exponential(p0)
  n = f32[4] negate(p0)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(e, n, e)
}
ENTRY e {
  p = f32[4] parameter(0)
  f = (f32[4], f32[4], f32[4]) fusion(p), kind=kLoop, calls=fused
  USERS
}
)";

std::string WithUsers(std::string_view users) {
  std::string text = kRepeatedOutputs;
  text.replace(text.find("USERS"), 5, users);
  return text;
}

// Readers of position 2 read position 0 instead, so their users merge.
TEST(HloCseTest, RepeatedFusionOutputsAreReadFromTheFirstPosition) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, WithUsers(R"(
  g0 = f32[4] get-tuple-element(f), index=0
  g1 = f32[4] get-tuple-element(f), index=1
  g2 = f32[4] get-tuple-element(f), index=2
  a = f32[4] sqrt(g0)
  b = f32[4] sqrt(g2)
  s = f32[4] add(a, b)
  ROOT o = (f32[4], f32[4]) tuple(s, g1))"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* s = test::Root(*r.applied)->operand(0);
  ASSERT_EQ(s->opcode(), Opcode::kAdd);
  EXPECT_EQ(s->operand(0), s->operand(1));
  EXPECT_EQ(s->operand(0)->name(), "a");
  EXPECT_EQ(s->operand(0)->operand(0)->name(), "g0");
  // Nothing reads position 2 any more (DCE drops it).
  const Instruction* f = s->operand(0)->operand(0)->operand(0);
  ASSERT_EQ(f->name(), "f");
  for (const Instruction* u : f->users()) {
    EXPECT_NE(u->tuple_index(), 2) << u->name();
  }
  EXPECT_EQ(f->user_count(), 2);
}

// Position 0 has no reader yet: one is made.
TEST(HloCseTest, RepeatedFusionOutputGetsAReaderOfTheFirstPosition) {
  HloCse cse;
  test::RewriteResult r = ExpectRewrite(cse, WithUsers(R"(
  g1 = f32[4] get-tuple-element(f), index=1
  g2 = f32[4] get-tuple-element(f), index=2
  ROOT o = (f32[4], f32[4]) tuple(g2, g1))"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(root->operand(0)->tuple_index(), 0);
  EXPECT_EQ(root->operand(0)->operand(0)->name(), "f");
  EXPECT_EQ(root->operand(1)->name(), "g1");
}

// Equal instructions at two positions: the same run merges them in the
// body (called computations come first), then their readers.
TEST(HloCseTest, EqualFusionOutputsMergeInOneRun) {
  HloCse cse;
  std::string text = WithUsers(R"(
  g0 = f32[4] get-tuple-element(f), index=0
  g2 = f32[4] get-tuple-element(f), index=2
  ROOT o = f32[4] subtract(g0, g2))");
  const std::string old_root =
      "ROOT t = (f32[4], f32[4], f32[4]) tuple(e, n, e)";
  text.replace(text.find(old_root), old_root.size(),
               "e2 = f32[4] exponential(p0)\n"
               "  ROOT t = (f32[4], f32[4], f32[4]) tuple(e, n, e2)");
  test::RewriteResult r = ExpectRewrite(cse, text);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = test::Root(*r.applied);
  EXPECT_EQ(root->operand(0), root->operand(1));
}

// A fusion that is its computation's root keeps its outputs (they are the
// computation's result).
TEST(HloCseTest, RootFusionKeepsRepeatedOutputs) {
  HloCse cse;
  std::string text = WithUsers("");
  text.replace(text.find("  f = "), 6, "  ROOT f = ");
  ExpectNoRewrite(cse, text);
}

// Fusions whose bodies reduce with reducers that differ (the entry calls
// them two levels deep).
constexpr char kNestedReducers[] = R"(
HloModule m
sum1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sum2 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT t = f32[] maximum(x, y)
}
fused1 {
  p0 = f32[4,8] parameter(0)
  z0 = f32[] constant(0)
  ROOT r = f32[4] reduce(p0, z0), dimensions={1}, to_apply=sum1
}
fused2 {
  q0 = f32[4,8] parameter(0)
  z1 = f32[] constant(0)
  ROOT r = f32[4] reduce(q0, z1), dimensions={1}, to_apply=sum2
}
ENTRY e {
  p = f32[4,8] parameter(0)
  f1 = f32[4] fusion(p), kind=kInput, calls=fused1
  f2 = f32[4] fusion(p), kind=kInput, calls=fused2
  ROOT d = f32[4] subtract(f1, f2)
}
)";

// Makes sum2 an add, like sum1: only sum2 changes.
void MakeSum2AnAdd(Module* m) {
  Computation* sum2 = m->FindComputation("sum2");
  ASSERT_NE(sum2, nullptr);
  Instruction* old = sum2->root_instruction();
  auto add = std::make_unique<Instruction>(Opcode::kAdd, Shape(old->shape()));
  add->AppendOperand(old->operand(0));
  add->AppendOperand(old->operand(1));
  add->set_name("t2");
  sum2->set_root_instruction(sum2->AddInstruction(std::move(add)));
  ASSERT_TRUE(sum2->RemoveInstruction(old).ok());
}

// Run 1 finds nothing and marks the five computations; run 2 passes all of
// them by. A change two calls below the entry must make the entry (and
// fused2, between them) run again: the fusions have become equal.
TEST(HloCseTest, MemoPassesUnchangedComputationsButSeesNestedChanges) {
  std::unique_ptr<Module> m = test::ParseAndVerify(kNestedReducers);
  ASSERT_NE(m, nullptr);
  HloCse cse;
  ASSERT_FALSE(*cse.Run(m.get()));
  EXPECT_EQ(cse.computations_skipped(), 0);
  ASSERT_FALSE(*cse.Run(m.get()));
  EXPECT_EQ(cse.computations_skipped(), 5);

  // A fork made now carries the memos.
  std::unique_ptr<Module> fork = m->Clone();

  MakeSum2AnAdd(m.get());
  ASSERT_TRUE(*cse.Run(m.get()));
  EXPECT_EQ(cse.computations_skipped(), 5 + 2);  // sum1 and fused1
  const Instruction* root = test::Root(*m);
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(root->operand(0)->name(), "f1");
  EXPECT_TRUE(VerifyModule(*m).ok());

  // The fork: unchanged, so every memo holds; then the same change.
  HloCse fork_cse;
  ASSERT_FALSE(*fork_cse.Run(fork.get()));
  EXPECT_EQ(fork_cse.computations_skipped(), 5);
  MakeSum2AnAdd(fork.get());
  ASSERT_TRUE(*fork_cse.Run(fork.get()));
  EXPECT_EQ(fork_cse.computations_skipped(), 5 + 2);
  root = test::Root(*fork);
  EXPECT_EQ(root->operand(0), root->operand(1));
}

// A change inside a computation itself (a duplicate reduce added to a
// fused body) is seen too. A dry run passes marked computations by but
// marks none.
TEST(HloCseTest, MemoSeesChangesInTheComputationItself) {
  std::unique_ptr<Module> m = test::ParseAndVerify(kNestedReducers);
  ASSERT_NE(m, nullptr);
  HloCse cse;
  {
    std::unique_ptr<Module> dry = m->Clone();
    Rewriter rw(dry.get(), RewriteMode::kDry);
    ASSERT_FALSE(*cse.RunWith(dry.get(), rw));
    ASSERT_TRUE(rw.Finish().ok());
  }
  ASSERT_FALSE(*cse.Run(m.get()));
  EXPECT_EQ(cse.computations_skipped(), 0);  // the dry run marked nothing

  Computation* fused1 = m->FindComputation("fused1");
  ASSERT_NE(fused1, nullptr);
  Instruction* r = fused1->root_instruction();
  std::unique_ptr<Instruction> dup =
      r->CloneWithNewOperands({r->operand(0), r->operand(1)});
  dup->set_unique_id(-1);
  dup->set_name("r2");
  Instruction* r2 = fused1->AddInstruction(std::move(dup));
  auto sub =
      std::make_unique<Instruction>(Opcode::kSubtract, Shape(r->shape()));
  sub->AppendOperand(r);
  sub->AppendOperand(r2);
  sub->set_name("s2");
  fused1->set_root_instruction(fused1->AddInstruction(std::move(sub)));
  ASSERT_TRUE(VerifyModule(*m).ok());

  {
    std::unique_ptr<Module> dry = m->Clone();
    Rewriter rw(dry.get(), RewriteMode::kDry);
    ASSERT_TRUE(*cse.RunWith(dry.get(), rw));
    absl::StatusOr<AugmentStats> stats = rw.Finish();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->alternatives, 1);
  }
  EXPECT_EQ(cse.computations_skipped(), 3);  // sum1, sum2, fused2
  ASSERT_TRUE(*cse.Run(m.get()));
  EXPECT_EQ(cse.computations_skipped(), 3 + 3);
  const Instruction* s2 = m->FindComputation("fused1")->root_instruction();
  ASSERT_EQ(s2->opcode(), Opcode::kSubtract);
  EXPECT_EQ(s2->operand(0), s2->operand(1));
  EXPECT_TRUE(VerifyModule(*m).ok());
}

}  // namespace
}  // namespace hlogym
