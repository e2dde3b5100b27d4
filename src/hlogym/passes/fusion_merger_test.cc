#include "hlogym/passes/fusion_merger.h"

#include <gtest/gtest.h>

#include <string>

#include "hlogym/ir/str_util.h"
#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ExpectNoRewrite;
using test::ExpectRewrite;
using test::ParseAndVerify;
using test::Root;

int64_t CountOpcode(const Computation& c, Opcode op) {
  int64_t n = 0;
  c.ForEachInstruction([&](const Instruction* i) { n += i->opcode() == op; });
  return n;
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

// Why `producer` in `text` is not merged ("" when it is).
std::string Refusal(std::string_view text, std::string_view producer) {
  auto m = ParseAndVerify(text);
  if (m == nullptr) return "unparsable";
  const Instruction* p = m->entry_computation()->FindInstruction(producer);
  if (p == nullptr) return "no producer";
  auto device = LoadDevice("h100");
  if (!device.ok()) return "no device";
  GpuPerformanceModel model(*device);
  return FusionMerger::ShouldMerge(*p, model).reason;
}

void ExpectFusion(const Instruction* inst, FusionKind kind, Opcode root,
                  int64_t operands) {
  ASSERT_NE(inst, nullptr);
  ASSERT_EQ(inst->opcode(), Opcode::kFusion) << inst->name();
  EXPECT_EQ(inst->fusion_kind(), kind);
  EXPECT_EQ(inst->fused_computation()->root_instruction()->opcode(), root);
  EXPECT_EQ(inst->operand_count(), operands);
}

constexpr std::string_view kTwoUsers = R"(
HloModule m
f {
  q = f32[8] parameter(0)
  ROOT e = f32[8] exponential(q)
}
g {
  r0 = f32[8] parameter(0)
  r1 = f32[8] parameter(1)
  ROOT m = f32[8] multiply(r0, r1)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  x = f32[8] fusion(p0), kind=kLoop, calls=f
  a = f32[8] add(x, p1)
  y = f32[8] fusion(x, p1), kind=kLoop, calls=g
  ROOT t = (f32[8], f32[8]) tuple(a, y)
}
)";

TEST(FusionMerger, MergesALoopFusionIntoAllItsUsers) {
  FusionMerger pass;
  auto r = ExpectRewrite(pass, kTwoUsers);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  // The plain user becomes a fusion; the fusion user takes the body.
  ExpectFusion(root->operand(0), FusionKind::kLoop, Opcode::kAdd, 2);
  ExpectFusion(root->operand(1), FusionKind::kLoop, Opcode::kMultiply, 2);
  EXPECT_EQ(CountOpcode(*root->operand(0)->fused_computation(), Opcode::kExp),
            1);
  EXPECT_EQ(CountOpcode(*root->operand(1)->fused_computation(), Opcode::kExp),
            1);
  // The producer is gone: only parameters, the two fusions and the tuple.
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 5);
  // Dry: one alternative per user.
  EXPECT_EQ(r.dry.alternatives, 2);
  EXPECT_EQ(r.dry.candidates, 2);
}

TEST(FusionMerger, NothingIsMergedWhenOneUserCannotTakeIt) {
  // The tuple cannot take the producer, so no user gets it.
  const std::string text = ReplaceAll(kTwoUsers, "tuple(a, y)", "tuple(a, x)");
  FusionMerger pass;
  ExpectNoRewrite(pass, text);
  EXPECT_EQ(Refusal(text, "x"),
            "the consumer is not input-fusible and not loop-fusible");
}

TEST(FusionMerger, BitcastUsersBlockTheMerge) {
  FusionMerger pass;
  constexpr std::string_view kText = R"(
HloModule m
f {
  q = f32[8] parameter(0)
  ROOT e = f32[8] exponential(q)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  x = f32[8] fusion(p0), kind=kLoop, calls=f
  b = f32[2,4] bitcast(x)
  n = f32[8] negate(x)
  ROOT t = (f32[2,4], f32[8]) tuple(b, n)
}
)";
  ExpectNoRewrite(pass, kText);
  EXPECT_EQ(Refusal(kText, "x"), "not fusing bitcast ops");
  // A reshape user is fine.
  const std::string text = ReplaceAll(kText, "bitcast(x)", "reshape(x)");
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  ExpectFusion(Root(*r.applied)->operand(0), FusionKind::kLoop,
               Opcode::kReshape, 1);
  ExpectFusion(Root(*r.applied)->operand(1), FusionKind::kLoop, Opcode::kNegate,
               1);
}

TEST(FusionMerger, OnlyLoopFusionsAreMerged) {
  FusionMerger pass;
  ExpectNoRewrite(pass, R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  q = f32[8,64] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[8] reduce(q, c), dimensions={1}, to_apply=add
}
ENTRY main {
  p0 = f32[8,64] parameter(0)
  x = f32[8] fusion(p0), kind=kInput, calls=f
  ROOT n = f32[8] negate(x)
}
)");
}

TEST(FusionMerger, DeadAndRootFusionsAreNotMerged) {
  FusionMerger pass;
  ExpectNoRewrite(pass, R"(
HloModule m
f {
  q = f32[8] parameter(0)
  ROOT e = f32[8] exponential(q)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  dead = f32[8] fusion(p0), kind=kLoop, calls=f
  ROOT x = f32[8] fusion(p0), kind=kLoop, calls=f
  n = f32[8] negate(x)
}
)");
}

TEST(FusionMerger, MergedUserIsVisitedAgainAsAProducer) {
  // x merges into y; the merged y then merges into the add.
  FusionMerger pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
f {
  q = f32[8] parameter(0)
  ROOT e = f32[8] exponential(q)
}
g {
  r = f32[8] parameter(0)
  ROOT n = f32[8] negate(r)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  x = f32[8] fusion(p0), kind=kLoop, calls=f
  y = f32[8] fusion(x), kind=kLoop, calls=g
  ROOT a = f32[8] add(y, p1)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root, FusionKind::kLoop, Opcode::kAdd, 2);
  EXPECT_EQ(CountOpcode(*root->fused_computation(), Opcode::kExp), 1);
  EXPECT_EQ(CountOpcode(*root->fused_computation(), Opcode::kNegate), 1);
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 3);
  // Dry, on the original graph: x into y, y into the add.
  EXPECT_EQ(r.dry.alternatives, 2);
}

TEST(FusionMerger, TwoProducersMergeIntoTheSameUser) {
  // x1 and x2 merge into y in turn; the twice-merged y then merges into
  // the negate.
  FusionMerger pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
f {
  q = f32[8] parameter(0)
  ROOT e = f32[8] exponential(q)
}
h {
  q = f32[8] parameter(0)
  ROOT a = f32[8] abs(q)
}
g {
  r0 = f32[8] parameter(0)
  r1 = f32[8] parameter(1)
  ROOT m = f32[8] multiply(r0, r1)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  x1 = f32[8] fusion(p0), kind=kLoop, calls=f
  x2 = f32[8] fusion(p1), kind=kLoop, calls=h
  y = f32[8] fusion(x1, x2), kind=kLoop, calls=g
  ROOT n = f32[8] negate(y)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root, FusionKind::kLoop, Opcode::kNegate, 2);
  const Computation& body = *root->fused_computation();
  EXPECT_EQ(CountOpcode(body, Opcode::kExp), 1);
  EXPECT_EQ(CountOpcode(body, Opcode::kAbs), 1);
  EXPECT_EQ(CountOpcode(body, Opcode::kMultiply), 1);
  EXPECT_EQ(r.applied->entry_computation()->instruction_count(), 3);
  // Dry: y's use gets two candidates (x1 or x2 merged), the root one.
  EXPECT_EQ(r.dry.alternatives, 2);
  EXPECT_EQ(r.dry.candidates, 3);
}

TEST(FusionMerger, EachPlainUserGetsItsOwnFusionKind) {
  FusionMerger pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  q = f32[8,64] parameter(0)
  ROOT e = f32[8,64] exponential(q)
}
ENTRY main {
  p0 = f32[8,64] parameter(0)
  c = f32[] constant(0)
  x = f32[8,64] fusion(p0), kind=kLoop, calls=f
  r = f32[8] reduce(x, c), dimensions={1}, to_apply=add
  n = f32[8,64] negate(x)
  ROOT t = (f32[8], f32[8,64]) tuple(r, n)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root->operand(0), FusionKind::kInput, Opcode::kReduce, 2);
  ExpectFusion(root->operand(1), FusionKind::kLoop, Opcode::kNegate, 1);
  EXPECT_EQ(r.dry.alternatives, 2);
}

// ---- Reductions and transposed producers.

constexpr std::string_view kIntoReduce = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  q = f32[64,8] parameter(0)
  ROOT t = f32[8,64] transpose(q), dimensions={1,0}
}
ENTRY main {
  p0 = f32[64,8] parameter(0)
  c = f32[] constant(0)
  x = f32[8,64] fusion(p0), kind=kLoop, calls=f
  ROOT r = f32[8] reduce(x, c), dimensions={1}, to_apply=add
}
)";

TEST(FusionMerger, TransposingProducerIsNotMergedIntoAReduction) {
  FusionMerger pass;
  ExpectNoRewrite(pass, kIntoReduce);
  EXPECT_EQ(Refusal(kIntoReduce, "x"), "would read mostly uncoalesced");
}

TEST(FusionMerger, ElementwiseProducerIsMergedIntoAReduction) {
  std::string text =
      ReplaceAll(kIntoReduce, "f32[64,8] parameter", "f32[8,64] parameter");
  text = ReplaceAll(text, "transpose(q), dimensions={1,0}", "negate(q)");
  FusionMerger pass;
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  // The reduce's init constant and the producer's input.
  ExpectFusion(Root(*r.applied), FusionKind::kInput, Opcode::kReduce, 2);
  EXPECT_EQ(r.dry.alternatives, 1);
}

TEST(FusionMerger, TransposesMostDataIsTheTransposedFraction) {
  auto m = ParseAndVerify(R"(
HloModule m
half {
  q = f32[4,8] parameter(0)
  t = f32[8,4] transpose(q), dimensions={1,0}
  ROOT c = f32[16,4] concatenate(t, t), dimensions={0}
}
quarter {
  q = f32[4,8] parameter(0)
  t = f32[8,4] transpose(q), dimensions={1,0}
  ROOT c = f32[32,4] concatenate(t, t, t, t), dimensions={0}
}
none {
  q = f32[4,8] parameter(0)
  ROOT n = f32[4,8] negate(q)
}
ENTRY main {
  p0 = f32[4,8] parameter(0)
  a = f32[16,4] fusion(p0), kind=kLoop, calls=half
  b = f32[32,4] fusion(p0), kind=kLoop, calls=quarter
  n = f32[4,8] fusion(p0), kind=kLoop, calls=none
  ROOT t = (f32[16,4], f32[32,4], f32[4,8]) tuple(a, b, n)
}
)");
  const Instruction* root = Root(*m);
  EXPECT_TRUE(TransposesMostData(*root->operand(0)));  // exactly 0.5
  EXPECT_FALSE(TransposesMostData(*root->operand(1)));
  EXPECT_FALSE(TransposesMostData(*root->operand(2)));
}

// ---- Budgets.

// concat(x, q1..q{n-1}) with x = fusion(a, b): merging gives the
// concatenate n + 1 operands.
std::string ConcatOfFusion(int n) {
  std::string text =
      "HloModule m\nf {\n  u = f32[2] parameter(0)\n  v = f32[2] "
      "parameter(1)\n  ROOT s = f32[2] add(u, v)\n}\nENTRY main {\n"
      "  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n";
  std::string operands = "x";
  for (int i = 1; i < n; ++i) {
    StrAppend(&text, "  q", i, " = f32[2] parameter(", i + 1, ")\n");
    StrAppend(&operands, ", q", i);
  }
  StrAppend(&text, "  x = f32[2] fusion(a, b), kind=kLoop, calls=f\n",
            "  ROOT c = f32[", 2 * n, "] concatenate(", operands,
            "), dimensions={0}\n}\n");
  return text;
}

TEST(FusionMerger, MergeWithinTheOperandBudget) {
  FusionMerger pass;
  auto r = ExpectRewrite(pass, ConcatOfFusion(93));
  ASSERT_NE(r.applied, nullptr);
  ExpectFusion(Root(*r.applied), FusionKind::kLoop, Opcode::kConcatenate, 94);
}

TEST(FusionMerger, MergeOverTheOperandBudget) {
  FusionMerger pass;
  ExpectNoRewrite(pass, ConcatOfFusion(94));
  EXPECT_EQ(Refusal(ConcatOfFusion(94), "x"),
            "number of operands and output buffers 97 is larger than the "
            "budget of 96");
}

// A producer of `p` negates merged into a consumer of `c` negates.
std::string NegateChains(int p, int c) {
  std::string text = "HloModule m\nf {\n  q = f32[2] parameter(0)\n";
  std::string last = "q";
  for (int i = 0; i < p; ++i) {
    StrAppend(&text, "  ", i + 1 == p ? "ROOT " : "", "pn", i,
              " = f32[2] negate(", last, ")\n");
    last = StrCat("pn", i);
  }
  StrAppend(&text, "}\ng {\n  r = f32[2] parameter(0)\n");
  last = "r";
  for (int i = 0; i < c; ++i) {
    StrAppend(&text, "  ", i + 1 == c ? "ROOT " : "", "cn", i,
              " = f32[2] negate(", last, ")\n");
    last = StrCat("cn", i);
  }
  StrAppend(&text,
            "}\nENTRY main {\n  p0 = f32[2] parameter(0)\n"
            "  x = f32[2] fusion(p0), kind=kLoop, calls=f\n"
            "  ROOT y = f32[2] fusion(x), kind=kLoop, calls=g\n}\n");
  return text;
}

TEST(FusionMerger, MergeUpToAThousandInstructions) {
  FusionMerger pass;
  auto r = ExpectRewrite(pass, NegateChains(500, 500));
  ASSERT_NE(r.applied, nullptr);
  ExpectFusion(Root(*r.applied), FusionKind::kLoop, Opcode::kNegate, 1);
  EXPECT_EQ(
      CountOpcode(*Root(*r.applied)->fused_computation(), Opcode::kNegate),
      1000);
}

TEST(FusionMerger, MergeOverAThousandInstructionsIsRefused) {
  FusionMerger pass;
  ExpectNoRewrite(pass, NegateChains(501, 500));
  EXPECT_EQ(Refusal(NegateChains(501, 500), "x"),
            "the fusion would have 1001 instructions, over the limit of 1000");
}

// ---- Code duplication: a concatenate read at several indices.

TEST(FusionMerger, MultiUserConcatenateReadTwiceIsNotMerged) {
  // The slicing user would emit the concatenate twice, and a concatenate
  // splits the emitter's basic blocks: no merge into any user.
  constexpr std::string_view kText = R"(
HloModule m
f {
  q0 = f32[4] parameter(0)
  q1 = f32[4] parameter(1)
  ROOT c = f32[8] concatenate(q0, q1), dimensions={0}
}
g {
  r = f32[8] parameter(0)
  sa = f32[4] slice(r), slice={[0:4]}
  sb = f32[4] slice(r), slice={[4:8]}
  ROOT a = f32[4] add(sa, sb)
}
ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  x = f32[8] fusion(p0, p1), kind=kLoop, calls=f
  u = f32[4] fusion(x), kind=kLoop, calls=g
  v = f32[8] negate(x)
  ROOT t = (f32[4], f32[8]) tuple(u, v)
}
)";
  FusionMerger pass;
  ExpectNoRewrite(pass, kText);
  EXPECT_EQ(Refusal(kText, "x"),
            "merging into 'u' would duplicate code too much");
}

TEST(FusionMerger, MultiUserConcatenateReadOnceIsMerged) {
  FusionMerger pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
f {
  q0 = f32[4] parameter(0)
  q1 = f32[4] parameter(1)
  ROOT c = f32[8] concatenate(q0, q1), dimensions={0}
}
g {
  r = f32[8] parameter(0)
  ROOT n = f32[8] negate(r)
}
ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  x = f32[8] fusion(p0, p1), kind=kLoop, calls=f
  u = f32[8] fusion(x), kind=kLoop, calls=g
  v = f32[8] abs(x)
  ROOT t = (f32[8], f32[8]) tuple(u, v)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  ExpectFusion(root->operand(0), FusionKind::kLoop, Opcode::kNegate, 2);
  ExpectFusion(root->operand(1), FusionKind::kLoop, Opcode::kAbs, 2);
  EXPECT_EQ(r.dry.alternatives, 2);
}

// ---- The run-time estimate.

constexpr std::string_view kTanhUsers = R"(
HloModule m
f {
  q = f32[1024,1024] parameter(0)
  ROOT e = f32[1024,1024] tanh(q)
}
ENTRY main {
  p0 = f32[1024,1024] parameter(0)
  x = f32[1024,1024] fusion(p0), kind=kLoop, calls=f
  a = f32[1024,1024] negate(x)
  b = f32[1024,1024] abs(x)
  c = f32[1024,1024] exponential(x)
  d = f32[1024,1024] sqrt(x)
  ROOT t = (f32[1024,1024], f32[1024,1024], f32[1024,1024], f32[1024,1024]) tuple(a, b, c, d)
}
)";

TEST(FusionMerger, MergeThatIsSlowerIsRefused) {
  // Recomputing a large tanh in four kernels costs more than writing it.
  FusionMerger pass;
  ExpectNoRewrite(pass, kTanhUsers);
  auto m = ParseAndVerify(kTanhUsers);
  auto device = LoadDevice("h100");
  ASSERT_TRUE(device.ok());
  GpuPerformanceModel model(*device);
  const Instruction* x = m->entry_computation()->FindInstruction("x");
  FusionDecision d = FusionMerger::ShouldMerge(*x, model);
  EXPECT_FALSE(d);
  EXPECT_EQ(d.reason, "will execute slower if fused");
}

TEST(FusionMerger, MergeThatIsFasterIsDone) {
  const std::string text = ReplaceAll(kTanhUsers, "1024,1024", "8");
  FusionMerger pass;
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  const Instruction* root = Root(*r.applied);
  for (int64_t i = 0; i < 4; ++i) {
    ASSERT_EQ(root->operand(i)->opcode(), Opcode::kFusion);
    EXPECT_EQ(
        CountOpcode(*root->operand(i)->fused_computation(), Opcode::kTanh), 1);
  }
  EXPECT_EQ(r.dry.alternatives, 4);
}

// ---- Options.

TEST(FusionMerger, Options) {
  FusionMerger pass;
  EXPECT_EQ(pass.name(), "fusion-merger");
  EXPECT_EQ(pass.OptionNames(), std::vector<std::string>{"device"});
  EXPECT_TRUE(pass.SetOption("device", "a100").ok());
  auto m = ParseAndVerify(kTwoUsers);
  absl::StatusOr<bool> changed = pass.Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_FALSE(pass.SetOption("nosuch", "1").ok());
  EXPECT_FALSE(pass.SetOption("device", "").ok());
  EXPECT_TRUE(pass.SetOption("device", "nosuch-gpu").ok());
  EXPECT_FALSE(pass.Run(m.get()).ok());
}

}  // namespace
}  // namespace hlogym
