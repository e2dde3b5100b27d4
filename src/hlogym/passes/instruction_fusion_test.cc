#include "hlogym/passes/instruction_fusion.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "hlogym/cost/evaluator.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/fusion_merger.h"
#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::ExpectSameOutputs;
using test::ParseAndVerify;
using test::ReadExample;
using test::Root;
using test::Text;

GpuInstructionFusion MakePass(bool may_duplicate = true) {
  GpuInstructionFusionOptions o;
  o.may_duplicate = may_duplicate;
  return GpuInstructionFusion(o);
}

// `text` with every `from` replaced by `to`.
std::string ReplaceAll(std::string_view text, std::string_view from,
                       std::string_view to) {
  std::string out;
  size_t start = 0;
  for (size_t at = text.find(from); at != std::string_view::npos;
       at = text.find(from, start)) {
    out.append(text.substr(start, at - start));
    out.append(to);
    start = at + from.size();
  }
  out.append(text.substr(start));
  return out;
}

int64_t CountOpcode(const Computation& c, Opcode op) {
  int64_t n = 0;
  c.ForEachInstruction([&](const Instruction* i) { n += i->opcode() == op; });
  return n;
}

// Why ShouldFuse refuses operand `operand` of `consumer` in `text` ("" when
// it accepts).
std::string Refusal(std::string_view text, std::string_view consumer,
                    int64_t operand, bool may_duplicate = true) {
  auto m = ParseAndVerify(text);
  if (m == nullptr) return "unparsable";
  const Instruction* c = m->entry_computation()->FindInstruction(consumer);
  if (c == nullptr) return "no consumer";
  return MakePass(may_duplicate).ShouldFuse(*c, operand).reason;
}

// Expects `inst` to be a fusion of `kind` whose fused root has `root`
// opcode and which takes `operands` operands.
void ExpectFusion(const Instruction* inst, FusionKind kind, Opcode root,
                  int64_t operands) {
  ASSERT_NE(inst, nullptr);
  ASSERT_EQ(inst->opcode(), Opcode::kFusion) << inst->name();
  EXPECT_EQ(inst->fusion_kind(), kind);
  EXPECT_EQ(inst->fused_computation()->root_instruction()->opcode(), root);
  EXPECT_EQ(inst->operand_count(), operands);
}

// ---- The basic walk.

TEST(InstructionFusion, FusesAChainIntoOneLoopFusion) {
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  e = f32[8] exponential(p0)
  a = f32[8] add(e, p1)
  ROOT n = f32[8] negate(a)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root, FusionKind::kLoop, Opcode::kNegate, 2);
  // p0, p1, exp, add, negate: everything in one kernel.
  EXPECT_EQ(root->fused_computation()->instruction_count(), 5);
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 3);
  // Dry: add into negate, exp into add (one use each).
  EXPECT_EQ(r.dry.alternatives, 2);
  EXPECT_EQ(r.dry.candidates, 2);
}

TEST(InstructionFusion, LatestOperandFirstAvoidsDuplicateClones) {
  // C reads A directly and through B. Fusing B first makes A single-use,
  // so A is cloned once.
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[8] parameter(0)
  a = f32[8] negate(p0)
  b = f32[8] exponential(a)
  ROOT c = f32[8] add(a, b)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root, FusionKind::kLoop, Opcode::kAdd, 1);
  EXPECT_EQ(CountOpcode(*root->fused_computation(), Opcode::kNegate), 1);
  EXPECT_EQ(root->fused_computation()->instruction_count(), 4);
}

// ---- Duplication (expensive producers, may_duplicate, always duplicable).

constexpr std::string_view kTwoUsersOfExp = R"(
HloModule m
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  e = f32[8] exponential(p0)
  a = f32[8] add(e, p1)
  m = f32[8] multiply(e, p1)
  ROOT t = (f32[8], f32[8]) tuple(a, m)
}
)";

TEST(InstructionFusion, CheapExpIsDuplicatedIntoBothUsers) {
  // exp is cheap on GPUs for f32.
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, kTwoUsersOfExp);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root->operand(0), FusionKind::kLoop, Opcode::kAdd, 2);
  ExpectFusion(root->operand(1), FusionKind::kLoop, Opcode::kMultiply, 2);
  EXPECT_EQ(CountOpcode(*root->operand(0)->fused_computation(), Opcode::kExp),
            1);
  EXPECT_EQ(CountOpcode(*root->operand(1)->fused_computation(), Opcode::kExp),
            1);
  // The original exponential is gone.
  EXPECT_EQ(CountOpcode(*r.applied->entry_computation(), Opcode::kExp), 0);
  EXPECT_EQ(r.dry.alternatives, 2);
}

TEST(InstructionFusion, ExpensiveProducerWithTwoUsersIsNotDuplicated) {
  GpuInstructionFusion pass = MakePass();
  ExpectNoRewrite(pass, ReplaceAll(kTwoUsersOfExp, "exponential", "log"));
  // bf16 exponential is expensive too (only f32 and f16 are cheap).
  ExpectNoRewrite(pass, ReplaceAll(kTwoUsersOfExp, "f32", "bf16"));
  EXPECT_EQ(Refusal(ReplaceAll(kTwoUsersOfExp, "f32", "bf16"), "a", 0),
            "expensive producer would be duplicated");
}

TEST(InstructionFusion, WithoutMayDuplicateNothingIsDuplicated) {
  GpuInstructionFusion pass = MakePass(/*may_duplicate=*/false);
  ExpectNoRewrite(pass, kTwoUsersOfExp);
}

TEST(InstructionFusion, BroadcastAndWideningConvertAreAlwaysDuplicable) {
  GpuInstructionFusion pass = MakePass(/*may_duplicate=*/false);
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[] parameter(0)
  h = f16[8] parameter(1)
  b = f32[8] broadcast(p0), dimensions={}
  c = f32[8] convert(h)
  a = f32[8] add(b, c)
  m = f32[8] multiply(b, c)
  ROOT t = (f32[8], f32[8]) tuple(a, m)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root->operand(0), FusionKind::kLoop, Opcode::kAdd, 2);
  ExpectFusion(root->operand(1), FusionKind::kLoop, Opcode::kMultiply, 2);
  EXPECT_EQ(root->operand(0)->operand(0)->opcode(), Opcode::kParameter);
  // Dry: broadcast and convert into add, and into multiply.
  EXPECT_EQ(r.dry.alternatives, 2);
  EXPECT_EQ(r.dry.candidates, 4);
}

TEST(InstructionFusion, NarrowingConvertIsNotAlwaysDuplicable) {
  GpuInstructionFusion pass = MakePass(/*may_duplicate=*/false);
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f16[8] parameter(1)
  c = f16[8] convert(p0)
  a = f16[8] add(c, p1)
  m = f16[8] multiply(c, p1)
  ROOT t = (f16[8], f16[8]) tuple(a, m)
}
)");
}

// ---- The global "do not duplicate" analysis.

TEST(InstructionFusion, BinaryProducerFusesOnlyIfItFusesIntoAllUsers) {
  // add reads two full-size inputs: duplicating it into `n` while the
  // tuple still needs it would read both inputs twice.
  GpuInstructionFusion pass = MakePass();
  ExpectNoRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] add(p0, p1)
  n = f32[8] negate(a)
  ROOT t = (f32[8], f32[8]) tuple(n, a)
}
)");
  // Both users fusible: duplicated into each.
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] add(p0, p1)
  n = f32[8] negate(a)
  b = f32[8] abs(a)
  ROOT t = (f32[8], f32[8]) tuple(n, b)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root->operand(0), FusionKind::kLoop, Opcode::kNegate, 2);
  ExpectFusion(root->operand(1), FusionKind::kLoop, Opcode::kAbs, 2);
  EXPECT_EQ(r.dry.alternatives, 2);
}

TEST(InstructionFusion, UnaryProducerIsDuplicatedNextToAnUnfusibleUser) {
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[8] parameter(0)
  a = f32[8] exponential(p0)
  n = f32[8] negate(a)
  ROOT t = (f32[8], f32[8]) tuple(n, a)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root->operand(0), FusionKind::kLoop, Opcode::kNegate, 1);
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kExp);
  EXPECT_EQ(r.dry.alternatives, 1);
}

// ---- The root, fusion producers, custom fusions.

TEST(InstructionFusion, RootProducerIsNotFused) {
  GpuInstructionFusion pass = MakePass();
  constexpr std::string_view kText = R"(
HloModule m
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  ROOT a = f32[8] add(p0, p1)
  n = f32[8] negate(a)
}
)";
  ExpectNoRewrite(pass, kText);
  EXPECT_EQ(Refusal(kText, "n", 0),
            "not fusing into the output of the root instruction");
  std::string not_root = ReplaceAll(kText, "ROOT a", "a");
  not_root = ReplaceAll(not_root, "  n = ", "  ROOT n = ");
  auto r = ExpectRewrite(pass, not_root);
  ASSERT_NE(r.applied, nullptr);
  ExpectFusion(Root(*r.applied), FusionKind::kLoop, Opcode::kNegate, 2);
}

TEST(InstructionFusion, FusionProducersAndCustomConsumersAreLeftAlone) {
  GpuInstructionFusion pass = MakePass();
  ExpectNoRewrite(pass, R"(
HloModule m
f {
  q = f32[8] parameter(0)
  ROOT e = f32[8] exponential(q)
}
g {
  r = f32[8] parameter(0)
  ROOT a = f32[8] abs(r)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  x = f32[8] fusion(p0), kind=kLoop, calls=f
  n = f32[8] negate(x)
  c = f32[8] fusion(n), kind=kCustom, calls=g
  ROOT t = (f32[8], f32[8]) tuple(n, c)
}
)");
}

// ---- Expensive producer and a consumer that reuses elements.

TEST(InstructionFusion, ExpensiveProducerIsNotFusedIntoBroadcast) {
  GpuInstructionFusion pass = MakePass();
  constexpr std::string_view kText = R"(
HloModule m
ENTRY main {
  p0 = f32[4] parameter(0)
  l = f32[4] log(p0)
  ROOT b = f32[8,4] broadcast(l), dimensions={1}
}
)";
  ExpectNoRewrite(pass, kText);
  EXPECT_EQ(Refusal(kText, "b", 0),
            "the producer is expensive, and the consumer reuses inputs");
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[4] parameter(0)
  l = f32[4] negate(p0)
  ROOT b = f32[8,4] broadcast(l), dimensions={1}
}
)");
  ASSERT_NE(r.applied, nullptr);
  ExpectFusion(Root(*r.applied), FusionKind::kLoop, Opcode::kBroadcast, 1);
  EXPECT_EQ(r.dry.alternatives, 1);
}

// ---- Reductions: epilogues, transposes.

TEST(InstructionFusion, ReduceIsNotFusedIntoABinaryConsumer) {
  GpuInstructionFusion pass = MakePass();
  constexpr std::string_view kText = R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p0 = f32[8,64] parameter(0)
  p1 = f32[8] parameter(1)
  c = f32[] constant(0)
  r = f32[8] reduce(p0, c), dimensions={1}, to_apply=add
  ROOT a = f32[8] add(r, p1)
}
)";
  ExpectNoRewrite(pass, kText);
  EXPECT_EQ(Refusal(kText, "a", 0),
            "reduction epilogue must consist of intermediate ops");
}

TEST(InstructionFusion, ReduceEpilogueOfOneUnaryOpIsFused) {
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p0 = f32[8,64] parameter(0)
  c = f32[] constant(0)
  r = f32[8] reduce(p0, c), dimensions={1}, to_apply=add
  ROOT n = f32[8] negate(r)
}
)");
  ASSERT_NE(r.applied, nullptr);
  // The reduce, then its scalar init constant.
  ExpectFusion(Root(*r.applied), FusionKind::kInput, Opcode::kNegate, 1);
  EXPECT_EQ(r.dry.alternatives, 1);
}

constexpr std::string_view kIntoReduction = R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p0 = f32[64,8] parameter(0)
  c = f32[] constant(0)
  t = f32[8,64] transpose(p0), dimensions={1,0}
  ROOT r = f32[8] reduce(t, c), dimensions={1}, to_apply=add
}
)";

TEST(InstructionFusion, TransposeIsNotFusedIntoAReduction) {
  GpuInstructionFusion pass = MakePass();
  ExpectNoRewrite(pass, kIntoReduction);
  EXPECT_EQ(Refusal(kIntoReduction, "r", 0),
            "fusing the producer would break read coalescing");
}

TEST(InstructionFusion, ElementwiseProducerIsFusedIntoAReduction) {
  std::string text =
      ReplaceAll(kIntoReduction, "f32[64,8] parameter", "f32[8,64] parameter");
  text = ReplaceAll(text, "transpose(p0), dimensions={1,0}", "negate(p0)");
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  // negate, then the init constant (a scalar, into a fusion).
  ExpectFusion(Root(*r.applied), FusionKind::kInput, Opcode::kReduce, 1);
  EXPECT_EQ(r.dry.alternatives, 1);
}

// ---- The code duplication limit (15 emissions).

// A concatenate of `n` one-element slices of negate(p0): fusing the slices
// one by one leaves a fusion that reads the negate at n distinct indices.
std::string SlicesOfNegate(int n) {
  std::string text = StrCat("HloModule m\nENTRY main {\n  p0 = f32[", n,
                            "] parameter(0)\n  g = f32[", n, "] negate(p0)\n");
  std::string operands;
  for (int i = 0; i < n; ++i) {
    StrAppend(&text, "  sl", i, " = f32[1] slice(g), slice={[", i, ":", i + 1,
              "]}\n");
    StrAppend(&operands, i ? ", " : "", "sl", i);
  }
  StrAppend(&text, "  ROOT c = f32[", n, "] concatenate(", operands,
            "), dimensions={0}\n}\n");
  return text;
}

TEST(InstructionFusion, ProducerEmittedFifteenTimesIsFused) {
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, SlicesOfNegate(15));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root, FusionKind::kLoop, Opcode::kConcatenate, 1);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kParameter);
  EXPECT_EQ(CountOpcode(*root->fused_computation(), Opcode::kNegate), 1);
}

TEST(InstructionFusion, ProducerEmittedSixteenTimesIsNotFused) {
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, SlicesOfNegate(16));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root, FusionKind::kLoop, Opcode::kConcatenate, 1);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kNegate);
  EXPECT_EQ(root->fused_computation()->num_parameters(), 1);
  EXPECT_EQ(root->fused_computation()->parameter_instruction(0)->user_count(),
            16);
  EXPECT_EQ(MakePass().ShouldFuse(*root, 0).reason,
            "the fusion would result in an overly large code duplication");
  // Dry, on the original graph: the 16 slices into the concatenate (one
  // use, 16 candidates) and the negate into each slice (no code
  // duplication check outside fusions).
  EXPECT_EQ(r.dry.alternatives, 17);
  EXPECT_EQ(r.dry.candidates, 32);
}

TEST(InstructionFusion, MultiUserConcatenateIsNotFusedIntoFusions) {
  // A concatenate invalidates the emitter's cache: it may be emitted only
  // once and for a single user.
  constexpr std::string_view kText = R"(
HloModule m
f {
  q = f32[8] parameter(0)
  ROOT n = f32[8] negate(q)
}
g {
  r = f32[8] parameter(0)
  ROOT a = f32[8] abs(r)
}
ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c = f32[8] concatenate(p0, p1), dimensions={0}
  x = f32[8] fusion(c), kind=kLoop, calls=f
  y = f32[8] fusion(c), kind=kLoop, calls=g
  ROOT t = (f32[8], f32[8]) tuple(x, y)
}
)";
  GpuInstructionFusion pass = MakePass();
  ExpectNoRewrite(pass, kText);
  EXPECT_EQ(Refusal(kText, "x", 0),
            "the fusion would result in an overly large code duplication");
  auto r = ExpectRewrite(pass, R"(
HloModule m
f {
  q = f32[8] parameter(0)
  ROOT n = f32[8] negate(q)
}
ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c = f32[8] concatenate(p0, p1), dimensions={0}
  ROOT x = f32[8] fusion(c), kind=kLoop, calls=f
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root, FusionKind::kLoop, Opcode::kNegate, 2);
  EXPECT_EQ(CountOpcode(*root->fused_computation(), Opcode::kConcatenate), 1);
}

// ---- The operand budget (96 operands and outputs).

// concat(a, q1..q{n-1}) with a = add(x, y): fusing `a` gives the
// concatenate n + 1 operands.
std::string ConcatWithAdd(int n) {
  std::string text =
      "HloModule m\nENTRY main {\n  x = f32[2] parameter(0)\n"
      "  y = f32[2] parameter(1)\n";
  std::string operands = "a";
  for (int i = 1; i < n; ++i) {
    StrAppend(&text, "  q", i, " = f32[2] parameter(", i + 1, ")\n");
    StrAppend(&operands, ", q", i);
  }
  StrAppend(&text, "  a = f32[2] add(x, y)\n  ROOT c = f32[", 2 * n,
            "] concatenate(", operands, "), dimensions={0}\n}\n");
  return text;
}

TEST(InstructionFusion, FusionWithinTheOperandBudget) {
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, ConcatWithAdd(93));
  ASSERT_NE(r.applied, nullptr);
  // 94 operands + 1 output + the producer's output counted = 96.
  ExpectFusion(Root(*r.applied), FusionKind::kLoop, Opcode::kConcatenate, 94);
}

TEST(InstructionFusion, FusionOverTheOperandBudget) {
  GpuInstructionFusion pass = MakePass();
  ExpectNoRewrite(pass, ConcatWithAdd(94));
  EXPECT_EQ(Refusal(ConcatWithAdd(94), "c", 0),
            "number of operands and output buffers 97 is larger than the "
            "budget of 96");
}

// ---- Heavy computations.

constexpr std::string_view kReduceWindowIntoGather = R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p0 = f32[32] parameter(0)
  i = s32[40,1] parameter(1)
  c = f32[] constant(0)
  w = f32[22] reduce-window(p0, c), window={size=11}, to_apply=add
  ROOT g = f32[40] gather(w, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
}
)";

TEST(InstructionFusion, HeavyReduceWindowIsNotFusedIntoAnExpandingGather) {
  GpuInstructionFusion pass = MakePass();
  ExpectNoRewrite(pass, kReduceWindowIntoGather);
  EXPECT_EQ(Refusal(kReduceWindowIntoGather, "g", 0),
            "the fusion would create a heavy computation");
}

TEST(InstructionFusion, SmallReduceWindowIsFusedIntoAnExpandingGather) {
  std::string text = ReplaceAll(kReduceWindowIntoGather, "f32[22]", "f32[23]");
  text = ReplaceAll(text, "size=11", "size=10");
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  // The reduce-window, then its init constant: p0 and the indices remain.
  ExpectFusion(Root(*r.applied), FusionKind::kLoop, Opcode::kGather, 2);
  EXPECT_EQ(r.dry.alternatives, 1);
}

// ---- Scatter and dynamic-update-slice (in-place ops).

TEST(InstructionFusion, ScatterTakesItsUpdatesButNotItsBuffer) {
  constexpr std::string_view kText = R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  idx = s32[2,1] parameter(1)
  p2 = f32[2] parameter(2)
  op = f32[8] negate(p0)
  upd = f32[2] multiply(p2, p2)
  s = f32[8] scatter(op, idx, upd), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = f32[8] abs(s)
}
)";
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, kText);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  // Nothing is fused into the scatter's output.
  EXPECT_EQ(root->opcode(), Opcode::kAbs);
  const Instruction* s = root->operand(0);
  ExpectFusion(s, FusionKind::kInput, Opcode::kScatter, 3);
  // The in-place buffer stays outside (the producer's operand comes
  // first, then the consumer's).
  EXPECT_EQ(s->operand(0)->name(), "p2");
  EXPECT_EQ(s->operand(1)->opcode(), Opcode::kNegate);
  EXPECT_EQ(s->operand(2)->name(), "idx");
  EXPECT_EQ(CountOpcode(*s->fused_computation(), Opcode::kMultiply), 1);
  EXPECT_EQ(r.dry.alternatives, 1);
  EXPECT_EQ(Refusal(kText, "s", 0),
            "do not fuse into the in-place operand of scatter");
  // A scatter is not a loop-fusible producer to begin with.
  EXPECT_EQ(Refusal(kText, "r", 0), "the producer is not loop-fusible");
}

constexpr std::string_view kSliceIntoDus = R"(
HloModule m
ENTRY main {
  p0 = f32[8] parameter(0)
  i = s32[] constant(2)
  s = f32[2] slice(p0), slice={[2:4]}
  ROOT d = f32[8] dynamic-update-slice(p0, s, i)
}
)";

TEST(InstructionFusion, SliceAtTheUpdateIndicesIsFusedIntoDus) {
  GpuInstructionFusion pass = MakePass();
  auto r = ExpectRewrite(pass, kSliceIntoDus);
  ASSERT_NE(r.applied, nullptr);
  // The slice, then the index constant.
  ExpectFusion(Root(*r.applied), FusionKind::kLoop, Opcode::kDynamicUpdateSlice,
               1);
  EXPECT_EQ(Root(*r.applied)->operand(0)->opcode(), Opcode::kParameter);
  EXPECT_EQ(r.dry.alternatives, 1);
}

TEST(InstructionFusion, SliceAtOtherIndicesIsNotFusedIntoDus) {
  const std::string text = ReplaceAll(kSliceIntoDus, "[2:4]", "[3:5]");
  GpuInstructionFusion pass = MakePass();
  ExpectNoRewrite(pass, text);
  EXPECT_EQ(Refusal(text, "d", 1),
            "slice and dynamic-update-slice indices differ");
}

// ---- Options.

TEST(InstructionFusion, Options) {
  GpuInstructionFusion pass;
  EXPECT_EQ(pass.name(), "instruction-fusion");
  EXPECT_EQ(pass.OptionNames(), std::vector<std::string>{"may_duplicate"});
  EXPECT_TRUE(pass.options().may_duplicate);
  ASSERT_TRUE(pass.SetOption("may_duplicate", "false").ok());
  EXPECT_FALSE(pass.options().may_duplicate);
  ExpectNoRewrite(pass, kTwoUsersOfExp);
  ASSERT_TRUE(pass.SetOption("may_duplicate", "1").ok());
  EXPECT_TRUE(pass.options().may_duplicate);
  EXPECT_FALSE(pass.SetOption("may_duplicate", "maybe").ok());
  EXPECT_FALSE(pass.SetOption("nosuch", "1").ok());
}

TEST(InstructionFusion, ShouldFuseExplainsRefusals) {
  auto m = ParseAndVerify(kTwoUsersOfExp);
  auto expensive =
      ParseAndVerify(ReplaceAll(kTwoUsersOfExp, "exponential", "log"));
  const Instruction* add = expensive->entry_computation()->FindInstruction("a");
  FusionDecision d = MakePass().ShouldFuse(*add, 0);
  EXPECT_FALSE(d);
  EXPECT_EQ(d.reason, "expensive producer would be duplicated");
  d = MakePass(false).ShouldFuse(*m->entry_computation()->FindInstruction("a"),
                                 0);
  EXPECT_EQ(d.reason, "fusion pass cannot duplicate");
  EXPECT_TRUE(
      MakePass().ShouldFuse(*m->entry_computation()->FindInstruction("a"), 0));
  EXPECT_FALSE(MakePass().ShouldFuse(*add, 7));
}

// ---- Indexing evaluation.

TEST(InstructionFusionIndexing, CountsDistinctIndicesPerOperand) {
  auto m = ParseAndVerify(R"(
HloModule m
f {
  q = f32[4] parameter(0)
  sa = f32[2] slice(q), slice={[0:2]}
  sb = f32[2] slice(q), slice={[2:4]}
  n = f32[4] negate(q)
  t = f32[2] add(sa, sb)
  b = f32[4] concatenate(t, t), dimensions={0}
  ROOT r = f32[4] add(b, n)
}
ENTRY main {
  p0 = f32[4] parameter(0)
  ROOT x = f32[4] fusion(p0), kind=kLoop, calls=f
}
)");
  const Instruction* fusion = Root(*m);
  const Instruction* p0 = fusion->operand(0);
  FusionNodeIndexingEvaluation eval(*fusion);
  // sa and sb each index q on their own; negate shares the root's index.
  EXPECT_EQ(eval.EvaluateEmittedInstructions(*p0), 3);
  // Emitted once, the concatenate (which splits basic blocks) is fine.
  EXPECT_FALSE(eval.MaxCodeDuplicationTooHigh());
  FusionNodeIndexingEvaluation twice(*fusion, 2);
  // Emitted twice, the concatenate splits basic blocks twice.
  EXPECT_TRUE(twice.MaxCodeDuplicationTooHigh());
}

// ---- Whole models: the legacy pipeline order.

void CheckLegacyPipeline(std::string_view file) {
  std::string text = ReadExample(file);
  ASSERT_FALSE(text.empty()) << file;
  auto original = ParseAndVerify(text);
  ASSERT_NE(original, nullptr);
  auto eval = CreateEvaluator("model:h100");
  ASSERT_TRUE(eval.ok());
  absl::StatusOr<EvaluationResult> before = (*eval)->Evaluate(*original);
  ASSERT_TRUE(before.ok()) << before.status();
  auto m = original->Clone();
  std::string log = StrCat(file, ": kernels ", before->kernel_count);
  for (bool may_duplicate : {false, true}) {
    GpuInstructionFusion pass = MakePass(may_duplicate);
    absl::StatusOr<bool> changed = pass.Run(m.get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m) << Text(*m);
    ExpectSameOutputs(*original, *m);
    absl::StatusOr<EvaluationResult> r = (*eval)->Evaluate(*m);
    ASSERT_TRUE(r.ok()) << r.status();
    StrAppend(&log, " -> ", r->kernel_count, " (instruction-fusion",
              may_duplicate ? "" : ", no duplication", ")");
  }
  const std::unique_ptr<Module> fused = m->Clone();
  FusionMerger merger;
  absl::StatusOr<bool> changed = merger.Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m) << Text(*m);
  ExpectSameOutputs(*original, *m);
  absl::StatusOr<EvaluationResult> after = (*eval)->Evaluate(*m);
  ASSERT_TRUE(after.ok()) << after.status();
  StrAppend(&log, " -> ", after->kernel_count, " (fusion-merger); modelled ",
            before->total_seconds * 1e6, " us -> ", after->total_seconds * 1e6,
            " us");
  std::cout << log << "\n";
  EXPECT_LT(after->kernel_count, before->kernel_count);

  // Dry mode on the original: the first candidate everywhere verifies and
  // computes the same outputs.
  for (bool may_duplicate : {false, true}) {
    auto dry = original->Clone();
    GpuInstructionFusion pass = MakePass(may_duplicate);
    absl::StatusOr<AugmentStats> stats = pass.RunDry(dry.get());
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_GT(stats->alternatives, 0);
    DecisionPolicy policy = DecisionPolicy::First();
    std::vector<int64_t> d = policy.Decide(AlternativeNodes(*dry));
    ASSERT_TRUE(ApplyDecisions(dry.get(), d).ok());
    ASSERT_TRUE(VerifyModule(*dry).ok()) << VerifyModule(*dry);
    ExpectSameOutputs(*original, *dry);
  }
  // The same for fusion-merger after instruction fusion.
  auto dry = fused->Clone();
  absl::StatusOr<AugmentStats> stats = merger.RunDry(dry.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GT(stats->alternatives, 0);
  DecisionPolicy policy = DecisionPolicy::First();
  std::vector<int64_t> d = policy.Decide(AlternativeNodes(*dry));
  ASSERT_TRUE(ApplyDecisions(dry.get(), d).ok());
  ASSERT_TRUE(VerifyModule(*dry).ok()) << VerifyModule(*dry);
  ExpectSameOutputs(*original, *dry);
}

TEST(InstructionFusionModels, TransformerEncoder) {
  CheckLegacyPipeline("transformer_encoder.hlo");
}

TEST(InstructionFusionModels, CartpoleStep) {
  CheckLegacyPipeline("cartpole_step.hlo");
}

// The largest corpus module (skipped without the shared corpus).
TEST(InstructionFusionModels, LargestCorpusModuleIsFast) {
  const std::filesystem::path path =
      std::filesystem::path(HLOGYM_SOURCE_DIR) /
      "../shared/corpus/xla/hlo_mixtral_8x7b_bf16_2x8__0.hlo";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "no corpus at " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(ss.str());
  ASSERT_TRUE(m.ok()) << m.status();
  auto seconds_of = [&](Pass& pass) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = pass.Run(m->get());
    EXPECT_TRUE(changed.ok()) << changed.status();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  GpuInstructionFusion no_dup = MakePass(false);
  GpuInstructionFusion dup = MakePass(true);
  FusionMerger merger;
  const double t0 = seconds_of(no_dup);
  const double t1 = seconds_of(dup);
  const double t2 = seconds_of(merger);
  std::cout << "mixtral: instruction-fusion " << t0 << " s, " << t1
            << " s (may_duplicate), fusion-merger " << t2 << " s\n";
  EXPECT_TRUE(VerifyModule(**m).ok());
  EXPECT_LT(t0 + t1 + t2, 20);
}

}  // namespace
}  // namespace hlogym
