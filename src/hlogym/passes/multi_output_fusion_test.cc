#include "hlogym/passes/multi_output_fusion.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hlogym/cost/device.h"
#include "hlogym/cost/gpu_performance_model.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/pass_test_util.h"
#include "hlogym/passes/priority_fusion.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::ExpectSameOutputs;
using test::ParseAndVerify;
using test::ReadFile;
using test::Root;
using test::Text;

const Instruction* Find(const Module& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    if (const Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

int64_t CountOpcode(const Computation& c, Opcode op) {
  int64_t n = 0;
  c.ForEachInstruction([&](const Instruction* i) { n += i->opcode() == op; });
  return n;
}

// The pass with all rules leaves `text` alone.
void NoRewrite(std::string_view text) {
  GpuMultiOutputFusion pass;
  ExpectNoRewrite(pass, text);
}

// A pass with only `rule` enabled.
std::unique_ptr<GpuMultiOutputFusion> OnlyRule(std::string_view rule) {
  auto pass = std::make_unique<GpuMultiOutputFusion>();
  for (const RuleInfo& r : pass->rules()) {
    EXPECT_TRUE(pass->SetRuleEnabled(r.name, r.name == rule).ok());
  }
  return pass;
}

// `inst` is get-tuple-element `index` of `fusion`.
void ExpectGte(const Instruction* inst, const Instruction* fusion,
               int64_t index) {
  ASSERT_EQ(inst->opcode(), Opcode::kGetTupleElement) << inst->name();
  EXPECT_EQ(inst->operand(0), fusion);
  EXPECT_EQ(inst->tuple_index(), index);
}

constexpr std::string_view kAdd = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

std::string WithAdd(std::string_view body) {
  return StrCat("HloModule m\n", kAdd, body);
}

// ---- Sibling fusion.

// Two row reductions of the same input: one input fusion, two outputs.
TEST(MultiOutputFusionSibling, RowReductionsOfSameInput) {
  const std::string text = WithAdd(R"(
fused_r1 {
  p = f32[32,64] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[32] reduce(p, c), dimensions={1}, to_apply=add
}
fused_r2 {
  p = f32[32,64] parameter(0)
  e = f32[32,64] exponential(p)
  c = f32[] constant(0)
  ROOT r = f32[32] reduce(e, c), dimensions={1}, to_apply=add
}
ENTRY e {
  p0 = f32[32,64] parameter(0)
  f1 = f32[32] fusion(p0), kind=kInput, calls=fused_r1
  f2 = f32[32] fusion(p0), kind=kInput, calls=fused_r2
  ROOT t = (f32[32], f32[32]) tuple(f1, f2)
}
)");
  GpuMultiOutputFusion pass;
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  // Uses of f1 and f2 by the tuple.
  EXPECT_EQ(r.dry.alternatives, 2);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kInput);
  ASSERT_EQ(f->operand_count(), 1);
  EXPECT_EQ(f->operand(0)->name(), "p0");
  ExpectGte(t->operand(0), f, 0);
  ExpectGte(t->operand(1), f, 1);
  const Instruction* body_root = f->fused_computation()->root_instruction();
  ASSERT_EQ(body_root->opcode(), Opcode::kTuple);
  ASSERT_EQ(body_root->operand_count(), 2);
  EXPECT_EQ(body_root->operand(0)->opcode(), Opcode::kReduce);
  EXPECT_EQ(body_root->operand(1)->opcode(), Opcode::kReduce);
  EXPECT_EQ(body_root->operand(1)->operand(0)->opcode(), Opcode::kExp);
  EXPECT_EQ(CountOpcode(*r.applied->entry_computation(), Opcode::kFusion), 1);
}

// A row and a column reduction have different reduction kernels.
TEST(MultiOutputFusionSibling, RowAndColumnReductionNotFused) {
  NoRewrite(WithAdd(R"(
fused_r1 {
  p = f32[32,64] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[32] reduce(p, c), dimensions={1}, to_apply=add
}
fused_r2 {
  p = f32[32,64] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[64] reduce(p, c), dimensions={0}, to_apply=add
}
ENTRY e {
  p0 = f32[32,64] parameter(0)
  f1 = f32[32] fusion(p0), kind=kInput, calls=fused_r1
  f2 = f32[64] fusion(p0), kind=kInput, calls=fused_r2
  ROOT t = (f32[32], f32[64]) tuple(f1, f2)
}
)"));
}

constexpr std::string_view kLoopSiblings = R"(
HloModule m
fused_a {
  p = f32[256] parameter(0)
  ROOT e = f32[256] exponential(p)
}
fused_b {
  p = f32[256] parameter(0)
  q = f32[256] parameter(1)
  ROOT m = f32[256] multiply(p, q)
}
ENTRY e {
  p0 = f32[256] parameter(0)
  f1 = f32[256] fusion(p0), kind=kLoop, calls=fused_a
  f2 = f32[256] fusion(p0, f1), kind=kLoop, calls=fused_b
  ROOT t = (f32[256], f32[256]) tuple(f1, f2)
}
)";

// f2 reads f1: fusing the siblings would close a cycle.
TEST(MultiOutputFusionSibling, ConnectedSiblingsNotFused) {
  auto pass = OnlyRule(GpuMultiOutputFusion::kSiblingRule);
  ExpectNoRewrite(*pass, kLoopSiblings);
}

// A loop fusion absorbs an unfused reduction of the shared operand: the
// reduction makes it an input fusion.
TEST(MultiOutputFusionSibling, UnfusedReductionJoinsLoopFusion) {
  const std::string text = WithAdd(R"(
fused_a {
  p = f32[32,64] parameter(0)
  ROOT e = f32[32,64] exponential(p)
}
ENTRY e {
  p0 = f32[32,64] parameter(0)
  c = f32[] constant(0)
  f1 = f32[32,64] fusion(p0), kind=kLoop, calls=fused_a
  r = f32[32] reduce(p0, c), dimensions={1}, to_apply=add
  ROOT t = (f32[32], f32[32,64]) tuple(r, f1)
}
)");
  GpuMultiOutputFusion pass;
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 2);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(1)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kInput);
  // The fusion's outputs first, then the reduction's.
  ExpectGte(t->operand(1), f, 0);
  ExpectGte(t->operand(0), f, 1);
  ASSERT_EQ(f->operand_count(), 2);
  EXPECT_EQ(f->operand(0)->name(), "p0");
  EXPECT_EQ(f->operand(1)->name(), "c");
}

// Only fusions absorb siblings: two unfused reductions stay apart.
TEST(MultiOutputFusionSibling, UnfusedSiblingsNotFused) {
  NoRewrite(WithAdd(R"(
ENTRY e {
  p0 = f32[32,64] parameter(0)
  c = f32[] constant(0)
  r1 = f32[32] reduce(p0, c), dimensions={1}, to_apply=add
  e = f32[32,64] exponential(p0)
  r2 = f32[32] reduce(e, c), dimensions={1}, to_apply=add
  ROOT t = (f32[32], f32[32]) tuple(r1, r2)
}
)"));
}

constexpr std::string_view kTwoLoopFusions = R"(
fused_a {
  p = $S parameter(0)
  ROOT e = $S exponential(p)
}
fused_b {
  p = $S parameter(0)
  ROOT n = $S negate(p)
}
ENTRY e {
  p0 = $S parameter(0)
  f1 = $S fusion(p0), kind=kLoop, calls=fused_a
  f2 = $S fusion(p0), kind=kLoop, calls=fused_b
  ROOT t = ($S, $S) tuple(f1, f2)
}
)";

std::string TwoLoopFusions(std::string_view shape) {
  std::string body(kTwoLoopFusions);
  std::string out = "HloModule m\n";
  for (size_t i = 0; i < body.size(); ++i) {
    if (body.compare(i, 2, "$S") == 0) {
      out += shape;
      ++i;
    } else {
      out += body[i];
    }
  }
  return out;
}

TEST(MultiOutputFusionSibling, LoopFusionsOfSharedOperand) {
  GpuMultiOutputFusion pass;
  auto r = ExpectRewrite(pass, TwoLoopFusions("f32[4,8]"));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* f = Root(*r.applied)->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kLoop);
  ExpectGte(Root(*r.applied)->operand(1), f, 1);
}

// A sibling that only feeds another sibling, through a parameter that
// sibling's body ignores, dies when that sibling fuses with a third (the
// new fusion drops the dead parameter). The pass must not look at it
// afterwards: it read freed memory (seen under valgrind) before. Not an
// ExpectRewrite case: applying decisions also drops the dead parameter of
// an original, so keeping the originals does not give back the hash.
TEST(MultiOutputFusionSibling, SiblingLeftDeadByAFusionIsSkipped) {
  constexpr char kText[] = R"(
HloModule m
fused_a {
  p = f32[4,8] parameter(0)
  unused = f32[2,8] parameter(1)
  e = f32[4,8] exponential(p)
  ROOT t = (f32[4,8]) tuple(e)
}
fused_b {
  p = f32[4,8] parameter(0)
  ROOT n = f32[2,8] slice(p), slice={[0:2], [0:8]}
}
fused_c {
  p = f32[4,8] parameter(0)
  a = f32[4,8] abs(p)
  ROOT t = (f32[4,8]) tuple(a)
}
ENTRY e {
  p0 = f32[4,8] parameter(0)
  fs = f32[2,8] fusion(p0), kind=kLoop, calls=fused_b
  f1 = (f32[4,8]) fusion(p0, fs), kind=kLoop, calls=fused_a
  f2 = (f32[4,8]) fusion(p0), kind=kLoop, calls=fused_c
  g1 = f32[4,8] get-tuple-element(f1), index=0
  g2 = f32[4,8] get-tuple-element(f2), index=0
  ROOT t = (f32[4,8], f32[4,8]) tuple(g1, g2)
}
)";
  std::unique_ptr<Module> original = ParseAndVerify(kText);
  ASSERT_NE(original, nullptr);
  std::unique_ptr<Module> m = original->Clone();
  GpuMultiOutputFusion pass;
  absl::StatusOr<bool> changed = pass.Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  EXPECT_EQ(Find(*m, "fs"), nullptr);
  // One fusion computes both outputs from p0 alone.
  const Instruction* f = Root(*m)->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->operand_count(), 1);
  ExpectGte(Root(*m)->operand(1), f, 1);
  ExpectSameOutputs(*original, *m);
}

// A shared operand with one element is not worth sharing.
TEST(MultiOutputFusionSibling, EffectiveScalarOperandNotShared) {
  NoRewrite(TwoLoopFusions("f32[1,1]"));
}

std::string SlicedSiblings(int64_t n, int64_t a0, int64_t a1, int64_t b0,
                           int64_t b1) {
  return StrCat(R"(
HloModule m
fused_a {
  p = f32[)",
                n, R"(] parameter(0)
  s = f32[)",
                a1 - a0, R"(] slice(p), slice={[)", a0, ":", a1, R"(]}
  ROOT e = f32[)",
                a1 - a0, R"(] exponential(s)
}
fused_b {
  p = f32[)",
                n, R"(] parameter(0)
  s = f32[)",
                b1 - b0, R"(] slice(p), slice={[)", b0, ":", b1, R"(]}
  ROOT e = f32[)",
                b1 - b0, R"(] negate(s)
}
ENTRY e {
  p0 = f32[)",
                n, R"(] parameter(0)
  f1 = f32[)",
                a1 - a0, R"(] fusion(p0), kind=kLoop, calls=fused_a
  f2 = f32[)",
                b1 - b0, R"(] fusion(p0), kind=kLoop, calls=fused_b
  ROOT t = (f32[)",
                a1 - a0, "], f32[", b1 - b0, R"(]) tuple(f1, f2)
}
)");
}

// Disjoint slices of an operand of 1024 bytes share no memory traffic.
TEST(MultiOutputFusionSibling, DisjointSlicesOfLargeOperandNotFused) {
  NoRewrite(SlicedSiblings(256, 0, 128, 128, 256));
}

TEST(MultiOutputFusionSibling, OverlappingSlicesFused) {
  GpuMultiOutputFusion pass;
  auto r = ExpectRewrite(pass, SlicedSiblings(1024, 0, 512, 256, 768));
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(Root(*r.applied)->operand(0)->opcode(), Opcode::kGetTupleElement);
}

// Under 1024 bytes the operand is small enough to share anyway.
TEST(MultiOutputFusionSibling, DisjointSlicesOfSmallOperandFused) {
  GpuMultiOutputFusion pass;
  auto r = ExpectRewrite(pass, SlicedSiblings(255, 0, 127, 127, 254));
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(Root(*r.applied)->operand(1)->opcode(), Opcode::kGetTupleElement);
}

// The emitter handles an in-place dynamic-update-slice only as a single
// root.
TEST(MultiOutputFusionSibling, DynamicUpdateSliceRootNotFused) {
  NoRewrite(R"(
HloModule m
fused_dus {
  p = f32[64] parameter(0)
  u = f32[8] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[64] dynamic-update-slice(p, u, i)
}
fused_b {
  p = f32[64] parameter(0)
  ROOT n = f32[64] negate(p)
}
ENTRY e {
  p0 = f32[64] parameter(0)
  p1 = f32[8] parameter(1)
  p2 = s32[] parameter(2)
  f1 = f32[64] fusion(p0, p1, p2), kind=kLoop, calls=fused_dus
  f2 = f32[64] fusion(p0), kind=kLoop, calls=fused_b
  ROOT t = (f32[64], f32[64]) tuple(f1, f2)
}
)");
}

// Two fusions with `n` and `m` parameters (sharing p0) each summing them.
std::string ManyOperandSiblings(int n, int m) {
  auto fused = [](std::string_view name, int k) {
    std::string s = StrCat(name, " {\n");
    for (int i = 0; i < k; ++i) {
      StrAppend(&s, "  q", i, " = f32[16] parameter(", i, ")\n");
    }
    std::string prev = "q0";
    for (int i = 1; i < k; ++i) {
      StrAppend(&s, i + 1 == k ? "  ROOT " : "  ", "a", i, " = f32[16] add(",
                prev, ", q", i, ")\n");
      prev = StrCat("a", i);
    }
    return s + "}\n";
  };
  std::string s = "HloModule m\n" + fused("fused_a", n) + fused("fused_b", m);
  s += "ENTRY e {\n  p0 = f32[16] parameter(0)\n";
  std::string a = "p0", b = "p0";
  for (int i = 1; i < n; ++i) {
    StrAppend(&s, "  x", i, " = f32[16] parameter(", i, ")\n");
    StrAppend(&a, ", x", i);
  }
  for (int i = 1; i < m; ++i) {
    StrAppend(&s, "  y", i, " = f32[16] parameter(", n - 1 + i, ")\n");
    StrAppend(&b, ", y", i);
  }
  StrAppend(&s, "  f1 = f32[16] fusion(", a, "), kind=kLoop, calls=fused_a\n");
  StrAppend(&s, "  f2 = f32[16] fusion(", b, "), kind=kLoop, calls=fused_b\n");
  s += "  ROOT t = (f32[16], f32[16]) tuple(f1, f2)\n}\n";
  return s;
}

// 94 distinct operands + 2 outputs = 96: within the budget.
TEST(MultiOutputFusionSibling, OperandBudgetReached) {
  GpuMultiOutputFusion pass;
  auto r = ExpectRewrite(pass, ManyOperandSiblings(50, 45));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* f = Root(*r.applied)->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->operand_count(), 94);
}

// 95 distinct operands + 2 outputs: over the budget of 96.
TEST(MultiOutputFusionSibling, OperandBudgetExceeded) {
  NoRewrite(ManyOperandSiblings(50, 46));
}

// ---- Producer-consumer multi-output fusion.

constexpr std::string_view kSmallProducer = R"(
HloModule m
fused_c {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  ROOT a = f32[1024] add(p, q)
}
ENTRY e {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  x = f32[1024] exponential(p0)
  c = f32[1024] fusion(x, p1), kind=kLoop, calls=fused_c
  ROOT t = (f32[1024], f32[1024]) tuple(c, x)
}
)";

// A launch saved outweighs the little extra work: the producer becomes an
// extra output of its consumer.
TEST(MultiOutputFusionProducerConsumer, AcceptedByCostModel) {
  {
    auto m = ParseAndVerify(kSmallProducer);
    ASSERT_NE(m, nullptr);
    GpuPerformanceModel model(*LoadDevice("h100"));
    auto t = model.EstimateMultiOutputRunTimes(*Find(*m, "x"), *Find(*m, "c"));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_LT(t->time_fused, t->time_unfused - 0.5e-6);
  }
  GpuMultiOutputFusion pass;
  auto r = ExpectRewrite(pass, kSmallProducer);
  ASSERT_NE(r.applied, nullptr);
  // The tuple's uses of x and of c (c's use of x is inside the fusion).
  EXPECT_EQ(r.dry.alternatives, 2);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kLoop);
  // The producer's output first.
  ExpectGte(t->operand(1), f, 0);
  ExpectGte(t->operand(0), f, 1);
  ASSERT_EQ(f->operand_count(), 2);
  EXPECT_EQ(f->operand(0)->name(), "p0");
  EXPECT_EQ(f->operand(1)->name(), "p1");
  const Instruction* body_root = f->fused_computation()->root_instruction();
  ASSERT_EQ(body_root->opcode(), Opcode::kTuple);
  EXPECT_EQ(body_root->operand(0)->opcode(), Opcode::kExp);
  EXPECT_EQ(body_root->operand(1)->opcode(), Opcode::kAdd);
  EXPECT_EQ(body_root->operand(1)->operand(0), body_root->operand(0));
}

constexpr std::string_view kWindowConsumer = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused_c {
  p = f32[4096,4096] parameter(0)
  z = f32[] constant(0)
  ROOT w = f32[4096,4096] reduce-window(p, z), window={size=9x9 pad=4_4x4_4}, to_apply=add
}
ENTRY e {
  p0 = f32[4096,4096] parameter(0)
  x = f32[4096,4096] exponential(p0)
  c = f32[4096,4096] fusion(x), kind=kLoop, calls=fused_c
  ROOT t = (f32[4096,4096], f32[4096,4096]) tuple(c, x)
}
)";

// The consumer reads each producer element 81 times: recomputing it inside
// the window kernel costs far more than the launch it saves.
TEST(MultiOutputFusionProducerConsumer, RejectedByCostModel) {
  {
    auto m = ParseAndVerify(kWindowConsumer);
    ASSERT_NE(m, nullptr);
    GpuPerformanceModel model(*LoadDevice("h100"));
    auto t = model.EstimateMultiOutputRunTimes(*Find(*m, "x"), *Find(*m, "c"));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_GT(t->time_fused, t->time_unfused * 1.2);
  }
  NoRewrite(kWindowConsumer);
}

// The device option changes the model; an unknown device is an error.
TEST(MultiOutputFusionProducerConsumer, DeviceOption) {
  GpuMultiOutputFusion pass;
  EXPECT_TRUE(pass.SetOption("device", "a100").ok());
  auto r = ExpectRewrite(pass, kSmallProducer);
  EXPECT_NE(r.applied, nullptr);
  EXPECT_FALSE(pass.SetOption("device", "no-such-gpu").ok());
  EXPECT_FALSE(pass.SetOption("colour", "blue").ok());
  EXPECT_EQ(pass.OptionNames(), std::vector<std::string>{"device"});
}

// One user that is not a multi-output fusion: left to ordinary fusion.
TEST(MultiOutputFusionProducerConsumer, SingleUserSkipped) {
  NoRewrite(R"(
HloModule m
fused_c {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  ROOT a = f32[1024] add(p, q)
}
ENTRY e {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  x = f32[1024] exponential(p0)
  ROOT c = f32[1024] fusion(x, p1), kind=kLoop, calls=fused_c
}
)");
}

// c also reads r, which reads x: fusing x into c would close a cycle (and
// the reverse is not a multi-output root).
TEST(MultiOutputFusionProducerConsumer, CycleRejected) {
  NoRewrite(R"(
HloModule m
fused_c {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  ROOT a = f32[1024] add(p, q)
}
ENTRY e {
  p0 = f32[1024] parameter(0)
  x = f32[1024] exponential(p0)
  r = f32[1024] reverse(x), dimensions={0}
  ROOT c = f32[1024] fusion(x, r), kind=kLoop, calls=fused_c
}
)");
}

// A physically transposing producer is not multi-output fusible.
TEST(MultiOutputFusionProducerConsumer, TransposingProducerSkipped) {
  NoRewrite(R"(
HloModule m
fused_c {
  p = f32[32,32] parameter(0)
  ROOT n = f32[32,32] negate(p)
}
ENTRY e {
  p0 = f32[32,32] parameter(0)
  x = f32[32,32] transpose(p0), dimensions={1,0}
  c = f32[32,32] fusion(x), kind=kLoop, calls=fused_c
  ROOT t = (f32[32,32], f32[32,32]) tuple(c, x)
}
)");
}

constexpr std::string_view kTwoConsumers = R"(
HloModule m
fused_c {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  ROOT a = f32[1024] add(p, q)
}
ENTRY e {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  x = f32[1024] exponential(p0)
  n = f32[1024] negate(x)
  c = f32[1024] fusion(x, p1), kind=kLoop, calls=fused_c
  ROOT t = (f32[1024], f32[1024]) tuple(n, c)
}
)";

// A fusion consumer is preferred over an unfused one.
TEST(MultiOutputFusionProducerConsumer, PrefersFusionConsumer) {
  auto pass = OnlyRule(GpuMultiOutputFusion::kProducerConsumerRule);
  auto r = ExpectRewrite(*pass, kTwoConsumers);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(1)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  ExpectGte(t->operand(1), f, 1);
  // negate stays unfused and reads the producer's output.
  ASSERT_EQ(t->operand(0)->opcode(), Opcode::kNegate);
  ExpectGte(t->operand(0)->operand(0), f, 0);
}

// Both rules: the siblings n and c merge first (at producer x), then x
// joins the multi-output fusion, its only user, and is no output at all.
TEST(MultiOutputFusion, SiblingsThenProducer) {
  GpuMultiOutputFusion pass;
  auto r = ExpectRewrite(pass, kTwoConsumers);
  ASSERT_NE(r.applied, nullptr);
  // Dry: the sibling candidate covers (n, t) and (c, t); the producer
  // candidate (x into c) covers (x, n) and (c, t).
  EXPECT_EQ(r.dry.alternatives, 3);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  ExpectGte(t->operand(0), f, 1);
  ExpectGte(t->operand(1), f, 0);
  ASSERT_EQ(f->operand_count(), 2);
  EXPECT_EQ(f->operand(0)->name(), "p0");
  EXPECT_EQ(f->operand(1)->name(), "p1");
  EXPECT_EQ(f->shape().tuple_shapes_size(), 2);
  EXPECT_EQ(CountOpcode(*f->fused_computation(), Opcode::kExp), 1);
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 6);
}

// ---- Whole models.

void CheckSemantics(Pass& pass, const Module& original, const Module& input) {
  auto m = input.Clone();
  absl::StatusOr<bool> changed = pass.Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  ExpectSameOutputs(original, *m);
  // Dry mode: the first candidate everywhere verifies and agrees too.
  auto dry = input.Clone();
  absl::StatusOr<AugmentStats> stats = pass.RunDry(dry.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(VerifyModule(*dry).ok()) << VerifyModule(*dry);
}

TEST(MultiOutputFusion, TransformerEncoderSemantics) {
  const std::string text = ReadFile(std::filesystem::path(HLOGYM_SOURCE_DIR) /
                                    "examples" / "transformer_encoder.hlo");
  ASSERT_FALSE(text.empty());
  auto original = ParseAndVerify(text);
  ASSERT_NE(original, nullptr);
  GpuMultiOutputFusion pass;
  CheckSemantics(pass, *original, *original);
  // After priority fusion, as in the GPU pipeline.
  auto fused = original->Clone();
  PriorityFusion priority;
  ASSERT_TRUE(priority.Run(fused.get()).ok());
  CheckSemantics(pass, *original, *fused);
}

// The largest corpus module (skipped without the shared corpus).
TEST(MultiOutputFusion, LargestCorpusModuleIsFast) {
  const std::filesystem::path path =
      std::filesystem::path(HLOGYM_SOURCE_DIR) /
      "../shared/corpus/xla/hlo_mixtral_8x7b_bf16_2x8__0.hlo";
  const std::string text = ReadFile(path);
  if (text.empty()) GTEST_SKIP() << "no corpus at " << path;
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  GpuMultiOutputFusion pass;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<bool> changed = pass.Run(m->get());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_LT(seconds, 5);
  EXPECT_TRUE(VerifyModule(**m).ok()) << VerifyModule(**m);
}

}  // namespace
}  // namespace hlogym
