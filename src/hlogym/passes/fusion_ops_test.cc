#include "hlogym/passes/fusion_ops.h"

#include <gtest/gtest.h>

#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectSameOutputs;
using test::ParseAndVerify;
using test::Text;

Instruction* Find(const Module& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    if (Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

// Applies `fuse` in apply mode on a copy and checks verification and
// outputs; then in dry mode: the graph is untouched, choosing the
// originals restores the DagHash and choosing the candidates gives the
// apply-mode result's outputs.
template <typename F>
std::unique_ptr<Module> CheckBothModes(std::string_view text, F fuse,
                                       int64_t expected_alternatives) {
  auto original = ParseAndVerify(text);
  auto applied = original->Clone();
  {
    Rewriter rw(applied.get(), RewriteMode::kApply);
    absl::StatusOr<Instruction*> f = fuse(rw, *applied);
    EXPECT_TRUE(f.ok()) << f.status();
    EXPECT_TRUE(rw.Finish().ok());
  }
  EXPECT_TRUE(VerifyModule(*applied).ok())
      << VerifyModule(*applied) << Text(*applied);
  ExpectSameOutputs(*original, *applied);

  auto dry = original->Clone();
  const uint64_t before = DagHash(*dry);
  Rewriter rw(dry.get(), RewriteMode::kDry);
  absl::StatusOr<Instruction*> f = fuse(rw, *dry);
  EXPECT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(DagHash(*dry), before);
  absl::StatusOr<AugmentStats> stats = rw.Finish();
  EXPECT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->alternatives, expected_alternatives) << Text(*dry);
  EXPECT_TRUE(VerifyModule(*dry).ok()) << VerifyModule(*dry);
  {
    auto keep = dry->Clone();
    std::vector<int64_t> zeros(AlternativeNodes(*keep).size(), 0);
    EXPECT_TRUE(ApplyDecisions(keep.get(), zeros).ok());
    EXPECT_EQ(DagHash(*keep), before) << Text(*keep);
  }
  std::vector<int64_t> ones(AlternativeNodes(*dry).size(), 1);
  EXPECT_TRUE(ApplyDecisions(dry.get(), ones).ok());
  EXPECT_TRUE(VerifyModule(*dry).ok()) << VerifyModule(*dry) << Text(*dry);
  EXPECT_EQ(DagHash(*dry), DagHash(*applied)) << Text(*dry) << Text(*applied);
  return applied;
}

constexpr std::string_view kChain = R"(
HloModule chain
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  e = f32[8] exponential(p0)
  ROOT a = f32[8] add(e, p1)
}
)";

TEST(FusionOps, ProducerIntoSingleUserConsumer) {
  auto m = CheckBothModes(
      kChain,
      [](Rewriter& rw, Module& mod) {
        return FuseProducerIntoConsumer(rw, Find(mod, "e"), Find(mod, "a"),
                                        FusionKind::kLoop);
      },
      1);
  const Instruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->fusion_kind(), FusionKind::kLoop);
  // Operands: the consumer's outside operand first, then the producer's.
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->operand(0)->name(), "p0");
  EXPECT_EQ(root->operand(1)->name(), "p1");
  const Computation* body = root->fused_computation();
  EXPECT_TRUE(body->IsFusionComputation());
  EXPECT_EQ(body->instruction_count(), 4);  // 2 parameters, exp, add
  EXPECT_EQ(body->root_instruction()->opcode(), Opcode::kAdd);
  EXPECT_EQ(body->root_instruction()->operand(0)->opcode(), Opcode::kExp);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 3);
}

constexpr std::string_view kShared = R"(
HloModule shared
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  e = f32[8] exponential(p0)
  a = f32[8] add(e, p1)
  n = f32[8] negate(e)
  ROOT t = (f32[8], f32[8]) tuple(a, n)
}
)";

TEST(FusionOps, DuplicateKeepsProducerForOtherUsers) {
  auto m = CheckBothModes(
      kShared,
      [](Rewriter& rw, Module& mod) {
        return FuseProducerIntoConsumer(rw, Find(mod, "e"), Find(mod, "a"),
                                        FusionKind::kLoop,
                                        ExternalUses::kDuplicate);
      },
      1);
  const Instruction* root = m->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->operand(0)->shape().ToString(), "f32[8]{0}");
  // The producer stays for negate.
  EXPECT_EQ(root->operand(1)->operand(0)->name(), "e");
}

TEST(FusionOps, MultiOutputGivesProducerAnOutput) {
  auto m = CheckBothModes(
      kShared,
      [](Rewriter& rw, Module& mod) {
        return FuseProducerIntoConsumer(rw, Find(mod, "e"), Find(mod, "a"),
                                        FusionKind::kLoop,
                                        ExternalUses::kMultiOutput);
      },
      2);
  const Instruction* root = m->entry_computation()->root_instruction();
  const Instruction* a = root->operand(0);
  const Instruction* neg_in = root->operand(1)->operand(0);
  ASSERT_EQ(a->opcode(), Opcode::kGetTupleElement);
  ASSERT_EQ(neg_in->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(a->tuple_index(), 1);  // members in operand order: e, then a
  EXPECT_EQ(neg_in->tuple_index(), 0);
  EXPECT_EQ(a->operand(0), neg_in->operand(0));
  EXPECT_EQ(a->operand(0)->shape().ToString(), "(f32[8]{0}, f32[8]{0})");
  EXPECT_EQ(Find(*m, "e"), nullptr);
}

constexpr std::string_view kFusions = R"(
HloModule fusions
f1 {
  q0 = f32[8] parameter(0)
  q1 = f32[8] parameter(1)
  ROOT m1 = f32[8] multiply(q0, q1)
}
f2 {
  r0 = f32[8] parameter(0)
  r1 = f32[8] parameter(1)
  r2 = f32[8] parameter(2)
  s = f32[8] subtract(r0, r1)
  ROOT m2 = f32[8] maximum(s, r2)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] fusion(p0, p1), kind=kLoop, calls=f1
  ROOT b = f32[8] fusion(p1, a, p0), kind=kLoop, calls=f2
}
)";

TEST(FusionOps, FusionIntoFusionInlinesBothBodies) {
  auto m = CheckBothModes(
      kFusions,
      [](Rewriter& rw, Module& mod) {
        return FuseProducerIntoConsumer(rw, Find(mod, "a"), Find(mod, "b"),
                                        FusionKind::kLoop);
      },
      1);
  const Instruction* root = m->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  // p1 and p0 (deduplicated: the producer also reads them).
  EXPECT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->fused_computation()->instruction_count(), 5);
  // The old fused computations are no longer shared or called.
  EXPECT_NE(root->fused_computation()->name(), "f2");
}

// In one apply-mode run, a fusion this run made and then fuses into
// another one hands over its body instead of having it copied: the
// instructions keep their unique ids. The result is the one separate runs
// give, where each body is an input fusion's and is copied.
TEST(FusionOps, ApplyRunMovesBodiesOfItsOwnFusions) {
  constexpr std::string_view kText = R"(
HloModule chain3
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  e = f32[8] exponential(p0)
  n = f32[8] negate(e)
  m = f32[8] multiply(n, p1)
  ROOT a = f32[8] add(m, e)
}
)";
  auto original = ParseAndVerify(kText);
  // Fuses m into a, n into that fusion, then e into the result; `runs`
  // Rewriter runs (1: one run for all three, 3: one run each).
  auto fuse_chain = [&](int runs, std::vector<int64_t>* root_ids) {
    auto mod = original->Clone();
    auto rw = std::make_unique<Rewriter>(mod.get(), RewriteMode::kApply);
    Instruction* consumer = Find(*mod, "a");
    for (std::string_view producer : {"m", "n", "e"}) {
      absl::StatusOr<Instruction*> f = FuseProducerIntoConsumer(
          *rw, Find(*mod, producer), consumer, FusionKind::kLoop);
      EXPECT_TRUE(f.ok()) << f.status();
      if (!f.ok()) return mod;
      consumer = *f;
      root_ids->push_back(
          consumer->fused_computation()->root_instruction()->unique_id());
      if (runs == 3) {
        EXPECT_TRUE(rw->Finish().ok());
        rw = std::make_unique<Rewriter>(mod.get(), RewriteMode::kApply);
      }
    }
    EXPECT_TRUE(rw->Finish().ok());
    return mod;
  };
  std::vector<int64_t> moved_ids, copied_ids;
  auto moved = fuse_chain(1, &moved_ids);
  auto copied = fuse_chain(3, &copied_ids);
  ASSERT_EQ(moved_ids.size(), 3u);
  ASSERT_EQ(copied_ids.size(), 3u);
  // One run: the body's root (the add) is the same instruction throughout.
  EXPECT_EQ(moved_ids[1], moved_ids[0]);
  EXPECT_EQ(moved_ids[2], moved_ids[0]);
  // Separate runs: each fusion copies the body of the one before.
  EXPECT_NE(copied_ids[1], copied_ids[0]);
  EXPECT_NE(copied_ids[2], copied_ids[1]);
  for (const Module* m : {moved.get(), copied.get()}) {
    EXPECT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m) << Text(*m);
    // The entry and the one fused computation: emptied and replaced
    // bodies are gone.
    EXPECT_EQ(m->computations().size(), 2u) << Text(*m);
    const Instruction* root = m->entry_computation()->root_instruction();
    ASSERT_EQ(root->opcode(), Opcode::kFusion);
    EXPECT_EQ(root->operand_count(), 2);
    // e, n, m, a and two parameters.
    EXPECT_EQ(root->fused_computation()->instruction_count(), 6);
    ExpectSameOutputs(*original, *m);
  }
  EXPECT_EQ(DagHash(*moved), DagHash(*copied)) << Text(*moved) << Text(*copied);
}

// A fusion this run made that keeps users outside (the producer of a
// duplicating fusion) keeps its body: it is copied, not moved.
TEST(FusionOps, ApplyRunCopiesBodiesOfFusionsThatStay) {
  constexpr std::string_view kText = R"(
HloModule stay
ENTRY main {
  p0 = f32[8] parameter(0)
  e = f32[8] exponential(p0)
  n = f32[8] negate(e)
  a = f32[8] abs(n)
  s = f32[8] sine(n)
  ROOT t = (f32[8], f32[8]) tuple(a, s)
}
)";
  auto original = ParseAndVerify(kText);
  auto mod = original->Clone();
  Rewriter rw(mod.get(), RewriteMode::kApply);
  absl::StatusOr<Instruction*> f1 = FuseProducerIntoConsumer(
      rw, Find(*mod, "e"), Find(*mod, "n"), FusionKind::kLoop);
  ASSERT_TRUE(f1.ok()) << f1.status();
  const int64_t body_root =
      (*f1)->fused_computation()->root_instruction()->unique_id();
  // f1 feeds a and s: fused into a, it stays for s.
  absl::StatusOr<Instruction*> f2 = FuseProducerIntoConsumer(
      rw, *f1, Find(*mod, "a"), FusionKind::kLoop, ExternalUses::kDuplicate);
  ASSERT_TRUE(f2.ok()) << f2.status();
  EXPECT_EQ((*f1)->fused_computation()->root_instruction()->unique_id(),
            body_root);
  EXPECT_EQ((*f1)->fused_computation()->instruction_count(), 3);
  ASSERT_TRUE(rw.Finish().ok());
  EXPECT_TRUE(VerifyModule(*mod).ok()) << VerifyModule(*mod) << Text(*mod);
  ExpectSameOutputs(*original, *mod);
}

TEST(FusionOps, MergeIntoUsersFusesIntoEveryUser) {
  constexpr std::string_view kText = R"(
HloModule merge
f1 {
  q0 = f32[8] parameter(0)
  ROOT e = f32[8] exponential(q0)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] fusion(p0), kind=kLoop, calls=f1
  b = f32[8] add(a, p1)
  c = f32[8] multiply(a, a)
  ROOT t = (f32[8], f32[8]) tuple(b, c)
}
)";
  auto original = ParseAndVerify(kText);
  auto m = original->Clone();
  Rewriter rw(m.get(), RewriteMode::kApply);
  auto fusions = MergeIntoUsers(rw, Find(*m, "a"), FusionKind::kLoop);
  ASSERT_TRUE(fusions.ok()) << fusions.status();
  ASSERT_TRUE(rw.Finish().ok());
  EXPECT_EQ(fusions->size(), 2u);
  EXPECT_EQ(Find(*m, "a"), nullptr);
  EXPECT_EQ(m->FindComputation("f1"), nullptr)
      << "uncalled fused computation left behind";
  ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  ExpectSameOutputs(*original, *m);
  // multiply(a, a) reads the producer twice: one parameter.
  const Instruction* c = m->entry_computation()->root_instruction()->operand(1);
  EXPECT_EQ(c->operand_count(), 1);
}

TEST(FusionOps, MultiOutputProducerThroughGetTupleElements) {
  constexpr std::string_view kText = R"(
HloModule mof
f1 {
  q0 = f32[8] parameter(0)
  e = f32[8] exponential(q0)
  n = f32[8] negate(q0)
  ROOT t = (f32[8], f32[8]) tuple(e, n)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = (f32[8], f32[8]) fusion(p0), kind=kLoop, calls=f1
  g0 = f32[8] get-tuple-element(a), index=0
  g1 = f32[8] get-tuple-element(a), index=1
  b = f32[8] add(g0, p1)
  ROOT t = (f32[8], f32[8]) tuple(b, g1)
}
)";
  auto m = CheckBothModes(
      kText,
      [](Rewriter& rw, Module& mod) {
        return FuseProducerIntoConsumer(rw, Find(mod, "a"), Find(mod, "b"),
                                        FusionKind::kLoop,
                                        ExternalUses::kMultiOutput);
      },
      2);
  const Instruction* root = m->entry_computation()->root_instruction();
  const Instruction* f = root->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->operand(1)->operand(0), f);
  // Outputs: g1's leaf (the producer's), then the consumer's.
  EXPECT_EQ(f->shape().tuple_shapes_size(), 2);
  EXPECT_EQ(root->operand(1)->tuple_index(), 0);
  EXPECT_EQ(root->operand(0)->tuple_index(), 1);
}

TEST(FusionOps, SiblingsShareTheirCommonOperand) {
  constexpr std::string_view kText = R"(
HloModule siblings
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] exponential(p0)
  b = f32[8] add(p0, p1)
  ROOT t = (f32[8], f32[8]) tuple(a, b)
}
)";
  auto m = CheckBothModes(
      kText,
      [](Rewriter& rw, Module& mod) {
        return FuseSiblings(rw, Find(mod, "a"), Find(mod, "b"),
                            FusionKind::kLoop);
      },
      2);
  const Instruction* root = m->entry_computation()->root_instruction();
  const Instruction* f = root->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->operand_count(), 2);  // p0 once, p1
  EXPECT_EQ(root->operand(0)->tuple_index(), 0);
  EXPECT_EQ(root->operand(1)->tuple_index(), 1);
}

constexpr std::string_view kHorizontal = R"(
HloModule horizontal
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  p2 = f32[2,3] parameter(2)
  a = f32[8] exponential(p0)
  b = f32[8] negate(p1)
  c = f32[2,3] sqrt(p2)
  ROOT t = (f32[8], f32[8], f32[2,3]) tuple(a, b, c)
}
)";

TEST(FusionOps, HorizontalPlainTupleOfOutputs) {
  auto m = CheckBothModes(
      kHorizontal,
      [](Rewriter& rw, Module& mod) {
        Instruction* members[] = {Find(mod, "a"), Find(mod, "b")};
        return FuseHorizontally(rw, members, /*sliced=*/false);
      },
      2);
  const Instruction* f =
      m->entry_computation()->root_instruction()->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(f->shape().ToString(), "(f32[8]{0}, f32[8]{0})");
}

TEST(FusionOps, HorizontalSlicedConcatenatesFlattenedOutputs) {
  auto m = CheckBothModes(
      kHorizontal,
      [](Rewriter& rw, Module& mod) {
        Instruction* members[] = {Find(mod, "a"), Find(mod, "c")};
        return FuseHorizontally(rw, members, /*sliced=*/true);
      },
      2);
  const Instruction* root = m->entry_computation()->root_instruction();
  // Users read reshapes of the slices.
  const Instruction* c = root->operand(2);
  ASSERT_EQ(c->opcode(), Opcode::kReshape);
  EXPECT_EQ(c->shape().ToString(), "f32[2,3]{1,0}");
  const Instruction* f = c->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kInput);
  const Instruction* body_root = f->fused_computation()->root_instruction();
  ASSERT_EQ(body_root->operand_count(), 2);
  EXPECT_EQ(body_root->operand(0)->opcode(), Opcode::kSlice);
  EXPECT_EQ(body_root->operand(0)->operand(0)->opcode(), Opcode::kConcatenate);
  EXPECT_EQ(body_root->operand(0)->operand(0)->shape().ToString(),
            "f32[14]{0}");
}

TEST(FusionOps, RefusesWhatCannotBeFused) {
  auto m = ParseAndVerify(kShared);
  Rewriter rw(m.get(), RewriteMode::kApply);
  Instruction* p0 = Find(*m, "p0");
  Instruction* a = Find(*m, "a");
  Instruction* n = Find(*m, "n");
  Instruction* t = Find(*m, "t");
  Instruction* params[] = {p0, a};
  EXPECT_FALSE(FuseInstructions(rw, params, {}).ok());
  Instruction* tuples[] = {t};
  EXPECT_FALSE(FuseInstructions(rw, tuples, {}).ok());
  Instruction* twice[] = {a, a};
  EXPECT_FALSE(FuseInstructions(rw, twice, {}).ok());
  EXPECT_FALSE(FuseProducerIntoConsumer(rw, n, a, FusionKind::kLoop).ok());
  Instruction* one[] = {a};
  EXPECT_FALSE(FuseHorizontally(rw, one, false).ok());
  ASSERT_TRUE(rw.Finish().ok());
  EXPECT_EQ(DagHash(*m), DagHash(*ParseAndVerify(kShared)));
}

TEST(FusionOps, DetectsCyclesThroughOutsideInstructions) {
  constexpr std::string_view kText = R"(
HloModule cycle
ENTRY main {
  p0 = f32[8] parameter(0)
  e = f32[8] exponential(p0)
  n = f32[8] negate(e)
  ROOT a = f32[8] add(e, n)
}
)";
  auto m = ParseAndVerify(kText);
  Instruction* pair[] = {Find(*m, "e"), Find(*m, "a")};
  EXPECT_TRUE(WouldCreateCycle(pair));
  ReachabilityIndex reach(*m->entry_computation());
  EXPECT_TRUE(WouldCreateCycle(pair, &reach));
  Instruction* ok[] = {Find(*m, "e"), Find(*m, "n")};
  EXPECT_FALSE(WouldCreateCycle(ok));
  EXPECT_FALSE(WouldCreateCycle(ok, &reach));
}

}  // namespace
}  // namespace hlogym
