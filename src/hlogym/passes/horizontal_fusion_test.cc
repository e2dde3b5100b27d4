#include "hlogym/passes/horizontal_fusion.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

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

int64_t CountOpcode(const Computation& c, Opcode op) {
  int64_t n = 0;
  c.ForEachInstruction([&](const Instruction* i) { n += i->opcode() == op; });
  return n;
}

void ExpectGte(const Instruction* inst, const Instruction* fusion,
               int64_t index) {
  ASSERT_EQ(inst->opcode(), Opcode::kGetTupleElement) << inst->name();
  EXPECT_EQ(inst->operand(0), fusion);
  EXPECT_EQ(inst->tuple_index(), index);
}

// `inst` is a reshape of get-tuple-element `index` of `fusion` (a sliced
// horizontal fusion's output).
void ExpectSlicedOutput(const Instruction* inst, const Instruction* fusion,
                        int64_t index) {
  ASSERT_EQ(inst->opcode(), Opcode::kReshape) << inst->name();
  ExpectGte(inst->operand(0), fusion, index);
}

void LoopNoRewrite(std::string_view text) {
  HorizontalLoopFusion pass;
  ExpectNoRewrite(pass, text);
}

void InputNoRewrite(std::string_view text) {
  HorizontalInputFusion pass;
  ExpectNoRewrite(pass, text);
}

// `n` independent unary ops on their own parameters feeding the root tuple;
// op i has shape `shape(i)`.
template <typename ShapeFn>
std::string IndependentOps(int n, ShapeFn shape) {
  std::string s = "HloModule m\nENTRY e {\n";
  std::string tuple_shape, tuple_ops;
  for (int i = 0; i < n; ++i) {
    const std::string sh = shape(i);
    StrAppend(&s, "  p", i, " = ", sh, " parameter(", i, ")\n");
    StrAppend(&s, "  x", i, " = ", sh, " negate(p", i, ")\n");
    StrAppend(&tuple_shape, i ? ", " : "", sh);
    StrAppend(&tuple_ops, i ? ", " : "", "x", i);
  }
  StrAppend(&s, "  ROOT t = (", tuple_shape, ") tuple(", tuple_ops, ")\n}\n");
  return s;
}

// ---- HorizontalLoopFusion.

// Three equally shaped elementwise ops: one loop fusion, three outputs.
TEST(HorizontalFusionLoop, SameShapesPlainMode) {
  constexpr std::string_view kText = R"(
HloModule m
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  p2 = f32[16] parameter(2)
  a = f32[16] exponential(p0)
  b = f32[16] negate(p1)
  c = f32[16] abs(p2)
  ROOT t = (f32[16], f32[16], f32[16]) tuple(a, b, c)
}
)";
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, kText);
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 3);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kLoop);
  ASSERT_EQ(f->operand_count(), 3);
  EXPECT_EQ(f->operand(0)->name(), "p0");
  EXPECT_EQ(f->operand(2)->name(), "p2");
  for (int64_t i = 0; i < 3; ++i) ExpectGte(t->operand(i), f, i);
  const Instruction* body_root = f->fused_computation()->root_instruction();
  ASSERT_EQ(body_root->opcode(), Opcode::kTuple);
  EXPECT_EQ(body_root->operand(0)->opcode(), Opcode::kExp);
  EXPECT_EQ(body_root->operand(1)->opcode(), Opcode::kNegate);
  EXPECT_EQ(body_root->operand(2)->opcode(), Opcode::kAbs);
  EXPECT_EQ(CountOpcode(*r.applied->entry_computation(), Opcode::kFusion), 1);
}

// Apply mode visits the new fusion as a consumer: its operands a and b
// fuse in turn. Dry mode offers the first step only.
TEST(HorizontalFusionLoop, NewFusionRevisited) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  a = f32[16] exponential(p0)
  b = f32[16] exponential(p1)
  c = f32[16] negate(a)
  d = f32[16] negate(b)
  ROOT t = (f32[16], f32[16]) tuple(c, d)
}
)");
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 2);
  const Instruction* t = Root(*r.applied);
  const Instruction* outer = t->operand(0)->operand(0);
  ASSERT_EQ(outer->opcode(), Opcode::kFusion);
  ExpectGte(t->operand(1), outer, 1);
  ASSERT_EQ(outer->operand_count(), 2);
  const Instruction* inner = outer->operand(0)->operand(0);
  ASSERT_EQ(inner->opcode(), Opcode::kFusion);
  ExpectGte(outer->operand(0), inner, 0);
  ExpectGte(outer->operand(1), inner, 1);
  EXPECT_EQ(CountOpcode(*inner->fused_computation(), Opcode::kExp), 2);
  EXPECT_EQ(CountOpcode(*r.applied->entry_computation(), Opcode::kFusion), 2);
}

// Different shapes: sliced mode (outputs flattened, concatenated and
// sliced back; users read reshapes).
TEST(HorizontalFusionLoop, DifferentShapesSlicedMode) {
  constexpr std::string_view kText = R"(
HloModule m
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[8,4] parameter(1)
  p2 = f32[3] parameter(2)
  a = f32[16] exponential(p0)
  b = f32[8,4] negate(p1)
  c = f32[3] abs(p2)
  ROOT t = (f32[16], f32[8,4], f32[3]) tuple(a, b, c)
}
)";
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, kText);
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 3);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(0)->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kInput);
  // Sorted by element count: c (3), a (16), b (32).
  ExpectSlicedOutput(t->operand(0), f, 1);
  ExpectSlicedOutput(t->operand(1), f, 2);
  ExpectSlicedOutput(t->operand(2), f, 0);
  EXPECT_EQ(t->operand(1)->shape().ToString(false), "f32[8,4]");
  const Instruction* body_root = f->fused_computation()->root_instruction();
  ASSERT_EQ(body_root->opcode(), Opcode::kTuple);
  ASSERT_EQ(body_root->operand_count(), 3);
  for (const Instruction* s : body_root->operands()) {
    ASSERT_EQ(s->opcode(), Opcode::kSlice);
    EXPECT_EQ(s->operand(0)->opcode(), Opcode::kConcatenate);
  }
  EXPECT_EQ(body_root->operand(0)->operand(0)->shape().ToString(false),
            "f32[51]");
}

// The plain attempt takes the equally shaped ops; the sliced one then
// finds a single leftover and stops.
TEST(HorizontalFusionLoop, PlainModeFirst) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, IndependentOps(3, [](int i) {
                           return std::string(i < 2 ? "f32[16]" : "f32[5]");
                         }));
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 2);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kLoop);
  ExpectGte(t->operand(1), f, 1);
  EXPECT_EQ(t->operand(2)->opcode(), Opcode::kNegate);
}

// Spans hold one output element type: f32 and s32 ops fuse separately.
TEST(HorizontalFusionLoop, OneElementTypePerBatch) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, IndependentOps(4, [](int i) {
                           return std::string(i % 2 ? "s32[8]" : "f32[8]");
                         }));
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 4);
  const Instruction* t = Root(*r.applied);
  const Instruction* floats = t->operand(0)->operand(0);
  const Instruction* ints = t->operand(1)->operand(0);
  ASSERT_EQ(floats->opcode(), Opcode::kFusion);
  ASSERT_EQ(ints->opcode(), Opcode::kFusion);
  EXPECT_NE(floats, ints);
  ExpectGte(t->operand(2), floats, 1);
  ExpectGte(t->operand(3), ints, 1);
}

// Only the plain attempt enabled: different shapes stay apart.
TEST(HorizontalFusionLoop, SlicedRuleDisabled) {
  HorizontalLoopFusion pass;
  ASSERT_TRUE(
      pass.SetRuleEnabled(HorizontalLoopFusion::kSlicedRule, false).ok());
  ExpectNoRewrite(pass, IndependentOps(3, [](int i) {
                    return StrCat("f32[", i + 2, "]");
                  }));
}

// A candidate with another user (r) is not independent of the consumer.
TEST(HorizontalFusionLoop, OtherUserBlocks) {
  LoopNoRewrite(R"(
HloModule m
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  a = f32[16] exponential(p0)
  b = f32[16] negate(p1)
  s = f32[16] add(a, b)
  r = f32[16] reverse(a), dimensions={0}
  ROOT t = (f32[16], f32[16]) tuple(s, r)
}
)");
}

// The root may read a candidate too.
TEST(HorizontalFusionLoop, RootUserAllowed) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  a = f32[16] exponential(p0)
  b = f32[16] negate(p1)
  s = f32[16] add(a, b)
  ROOT t = (f32[16], f32[16]) tuple(s, a)
}
)");
  ASSERT_NE(r.applied, nullptr);
  // (a, s), (a, t) and (b, s).
  EXPECT_EQ(r.dry.alternatives, 3);
  const Instruction* t = Root(*r.applied);
  const Instruction* s = t->operand(0);
  ASSERT_EQ(s->opcode(), Opcode::kAdd);
  const Instruction* f = s->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  ExpectGte(s->operand(0), f, 0);
  ExpectGte(s->operand(1), f, 1);
  EXPECT_EQ(t->operand(1), s->operand(0));
}

// Sliced mode: candidates sharing a parameter cannot be fused (the loop
// fusion and the elementwise op both read p0).
TEST(HorizontalFusionLoop, SlicedModeSharedParameter) {
  LoopNoRewrite(R"(
HloModule m
fused_b {
  q = f32[16] parameter(0)
  b = f32[4,16] broadcast(q), dimensions={1}
  ROOT n = f32[4,16] negate(b)
}
ENTRY e {
  p0 = f32[16] parameter(0)
  a = f32[16] exponential(p0)
  f = f32[4,16] fusion(p0), kind=kLoop, calls=fused_b
  ROOT t = (f32[16], f32[4,16]) tuple(a, f)
}
)");
}

// The same shape in plain mode shares the parameter without harm.
TEST(HorizontalFusionLoop, PlainModeSharedParameter) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p0 = f32[16] parameter(0)
  a = f32[16] exponential(p0)
  b = f32[16] negate(p0)
  ROOT t = (f32[16], f32[16]) tuple(a, b)
}
)");
  ASSERT_NE(r.applied, nullptr);
  const Instruction* f = Root(*r.applied)->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->operand_count(), 1);
}

// 34 elementwise ops of distinct shapes: sliced batches of 32 and 2.
TEST(HorizontalFusionLoop, SlicedBatchOf32) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, IndependentOps(34, [](int i) {
                           return StrCat("f32[", i + 1, "]");
                         }));
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 34);
  const Instruction* t = Root(*r.applied);
  const Instruction* first = t->operand(0)->operand(0)->operand(0);
  const Instruction* last = t->operand(33)->operand(0)->operand(0);
  ASSERT_EQ(first->opcode(), Opcode::kFusion);
  ASSERT_EQ(last->opcode(), Opcode::kFusion);
  EXPECT_NE(first, last);
  EXPECT_EQ(first->shape().tuple_shapes_size(), 32);
  EXPECT_EQ(last->shape().tuple_shapes_size(), 2);
  ExpectSlicedOutput(t->operand(31), first, 31);
  ExpectSlicedOutput(t->operand(32), last, 0);
  EXPECT_EQ(CountOpcode(*r.applied->entry_computation(), Opcode::kFusion), 2);
}

// 33 of them: the 33rd is left alone (a batch of one is no fusion).
TEST(HorizontalFusionLoop, SlicedBatchLeavesSingle) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, IndependentOps(33, [](int i) {
                           return StrCat("f32[", i + 1, "]");
                         }));
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 32);
  const Instruction* t = Root(*r.applied);
  EXPECT_EQ(t->operand(32)->opcode(), Opcode::kNegate);
  EXPECT_EQ(CountOpcode(*r.applied->entry_computation(), Opcode::kFusion), 1);
}

// Plain mode takes up to 64 unfused elementwise ops at once.
TEST(HorizontalFusionLoop, PlainElementwiseBatchOf64) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(
      pass, IndependentOps(66, [](int) { return std::string("f32[4]"); }));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* t = Root(*r.applied);
  const Instruction* first = t->operand(0)->operand(0);
  const Instruction* last = t->operand(65)->operand(0);
  ASSERT_EQ(first->opcode(), Opcode::kFusion);
  EXPECT_EQ(first->shape().tuple_shapes_size(), 64);
  EXPECT_EQ(last->shape().tuple_shapes_size(), 2);
}

// `n` loop fusions each reading the same `k` parameters (f32[4]).
std::string LoopFusionsOfSharedParameters(int n, int k) {
  std::string s = "HloModule m\n";
  for (int f = 0; f < n; ++f) {
    StrAppend(&s, "fused_", f, " {\n");
    for (int i = 0; i < k; ++i) {
      StrAppend(&s, "  q", i, " = f32[4] parameter(", i, ")\n");
    }
    std::string prev = "q0";
    for (int i = 1; i < k; ++i) {
      StrAppend(&s, "  a", i, " = f32[4] add(", prev, ", q", i, ")\n");
      prev = StrCat("a", i);
    }
    StrAppend(&s, "  c = f32[] constant(", f, ")\n");
    s += "  b = f32[4] broadcast(c), dimensions={}\n";
    StrAppend(&s, "  ROOT r = f32[4] multiply(", prev, ", b)\n}\n");
  }
  s += "ENTRY e {\n";
  std::string args;
  for (int i = 0; i < k; ++i) {
    StrAppend(&s, "  p", i, " = f32[4] parameter(", i, ")\n");
    StrAppend(&args, i ? ", " : "", "p", i);
  }
  std::string tuple_shape, tuple_ops;
  for (int f = 0; f < n; ++f) {
    StrAppend(&s, "  f", f, " = f32[4] fusion(", args,
              "), kind=kLoop, calls=fused_", f, "\n");
    StrAppend(&tuple_shape, f ? ", " : "", "f32[4]");
    StrAppend(&tuple_ops, f ? ", " : "", "f", f);
  }
  StrAppend(&s, "  ROOT t = (", tuple_shape, ") tuple(", tuple_ops, ")\n}\n");
  return s;
}

// Kernel parameter space: (49 operands + 1 output) * 8 bytes per member;
// ten members would reach 4000 bytes, so the batch holds nine.
TEST(HorizontalFusionLoop, KernelParameterLimit) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, LoopFusionsOfSharedParameters(12, 49));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* t = Root(*r.applied);
  const Instruction* first = t->operand(0)->operand(0);
  const Instruction* second = t->operand(11)->operand(0);
  ASSERT_EQ(first->opcode(), Opcode::kFusion);
  ASSERT_EQ(second->opcode(), Opcode::kFusion);
  EXPECT_EQ(first->shape().tuple_shapes_size(), 9);
  EXPECT_EQ(first->operand_count(), 49);
  ExpectGte(t->operand(8), first, 8);
  EXPECT_EQ(second->shape().tuple_shapes_size(), 3);
  ExpectGte(t->operand(9), second, 0);
}

// Fewer parameters: all 14 fit.
TEST(HorizontalFusionLoop, KernelParameterLimitNotReached) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, LoopFusionsOfSharedParameters(14, 30));
  ASSERT_NE(r.applied, nullptr);
  const Instruction* first = Root(*r.applied)->operand(0)->operand(0);
  ASSERT_EQ(first->opcode(), Opcode::kFusion);
  EXPECT_EQ(first->shape().tuple_shapes_size(), 14);
}

// Outputs over 8192 * 8192 elements are not launch-bound.
TEST(HorizontalFusionLoop, TooManyElements) {
  LoopNoRewrite(
      IndependentOps(2, [](int) { return std::string("f32[8193,8192]"); }));
}

// Sliced mode: over 128 * 2048 elements.
TEST(HorizontalFusionLoop, TooManyElementsForSlicedMode) {
  LoopNoRewrite(IndependentOps(
      2, [](int i) { return std::string(i == 0 ? "f32[262145]" : "f32[7]"); }));
}

TEST(HorizontalFusionLoop, SlicedModeElementLimitReached) {
  HorizontalLoopFusion pass;
  auto r =
      ExpectRewrite(pass, IndependentOps(2, [](int i) {
                      return std::string(i == 0 ? "f32[262144]" : "f32[7]");
                    }));
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(Root(*r.applied)->operand(0)->opcode(), Opcode::kReshape);
}

// Two loop fusions of different shapes with a chain of `ops` negates
// (plus a parameter, so ops + 1 instructions each).
std::string TwoChains(int ops) {
  std::string s = "HloModule m\n";
  const char* shapes[] = {"f32[8]", "f32[6]"};
  for (int f = 0; f < 2; ++f) {
    StrAppend(&s, "fused_", f, " {\n  n0 = ", shapes[f], " parameter(0)\n");
    for (int i = 1; i <= ops; ++i) {
      StrAppend(&s, i == ops ? "  ROOT " : "  ", "n", i, " = ", shapes[f],
                " negate(n", i - 1, ")\n");
    }
    s += "}\n";
  }
  StrAppend(&s, "ENTRY e {\n  p0 = f32[8] parameter(0)\n",
            "  p1 = f32[6] parameter(1)\n",
            "  f0 = f32[8] fusion(p0), kind=kLoop, calls=fused_0\n",
            "  f1 = f32[6] fusion(p1), kind=kLoop, calls=fused_1\n",
            "  ROOT t = (f32[8], f32[6]) tuple(f0, f1)\n}\n");
  return s;
}

// Sliced mode takes fusions of at most 30 instructions.
TEST(HorizontalFusionLoop, SlicedModeInstructionLimit) {
  HorizontalLoopFusion pass;
  auto r = ExpectRewrite(pass, TwoChains(29));
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(Root(*r.applied)->operand(0)->opcode(), Opcode::kReshape);
  LoopNoRewrite(TwoChains(30));
}

// ---- HorizontalInputFusion.

constexpr std::string_view kAdd = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(HorizontalFusionInput, ReductionsOfDifferentInputs) {
  const std::string text = StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  p0 = f32[32,64] parameter(0)
  p1 = f32[32,64] parameter(1)
  c = f32[] constant(0)
  r0 = f32[32] reduce(p0, c), dimensions={1}, to_apply=add
  r1 = f32[32] reduce(p1, c), dimensions={1}, to_apply=add
  ROOT t = (f32[32], f32[32]) tuple(r0, r1)
}
)");
  HorizontalInputFusion pass;
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 2);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kInput);
  ExpectGte(t->operand(0), f, 0);
  ExpectGte(t->operand(1), f, 1);
  ASSERT_EQ(f->operand_count(), 3);
  EXPECT_EQ(f->operand(0)->name(), "p0");
  EXPECT_EQ(f->operand(1)->name(), "c");
  EXPECT_EQ(f->operand(2)->name(), "p1");
  EXPECT_EQ(CountOpcode(*f->fused_computation(), Opcode::kReduce), 2);
}

TEST(HorizontalFusionInput, RowAndColumnReductionsNotFused) {
  InputNoRewrite(StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  p0 = f32[32,64] parameter(0)
  p1 = f32[32,64] parameter(1)
  c = f32[] constant(0)
  r0 = f32[32] reduce(p0, c), dimensions={1}, to_apply=add
  r1 = f32[64] reduce(p1, c), dimensions={0}, to_apply=add
  ROOT t = (f32[32], f32[64]) tuple(r0, r1)
}
)"));
}

TEST(HorizontalFusionInput, OtherUserBlocks) {
  InputNoRewrite(StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  p0 = f32[32,64] parameter(0)
  p1 = f32[32,64] parameter(1)
  c = f32[] constant(0)
  r0 = f32[32] reduce(p0, c), dimensions={1}, to_apply=add
  r1 = f32[32] reduce(p1, c), dimensions={1}, to_apply=add
  n = f32[32] negate(r0)
  ROOT t = (f32[32], f32[32], f32[32]) tuple(r0, r1, n)
}
)"));
}

// Sorted by input shape, [32,64] before [64,32]: the two [32,64] rows
// merge; the [64,32] one starts a new anchor alone.
TEST(HorizontalFusionInput, SortedAnchors) {
  const std::string text = StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  p0 = f32[64,32] parameter(0)
  p1 = f32[32,64] parameter(1)
  p2 = f32[32,64] parameter(2)
  c = f32[] constant(0)
  r0 = f32[64] reduce(p0, c), dimensions={1}, to_apply=add
  r1 = f32[32] reduce(p1, c), dimensions={1}, to_apply=add
  r2 = f32[32] reduce(p2, c), dimensions={1}, to_apply=add
  ROOT t = (f32[64], f32[32], f32[32]) tuple(r0, r1, r2)
}
)");
  HorizontalInputFusion pass;
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  EXPECT_EQ(r.dry.alternatives, 2);
  const Instruction* t = Root(*r.applied);
  EXPECT_EQ(t->operand(0)->opcode(), Opcode::kReduce);
  const Instruction* f = t->operand(1)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  ExpectGte(t->operand(1), f, 0);
  ExpectGte(t->operand(2), f, 1);
}

// Three compatible reductions: apply mode chains them into one fusion;
// dry mode offers each merge with the first anchor.
TEST(HorizontalFusionInput, ChainsInApplyMode) {
  const std::string text = StrCat("HloModule m\n", kAdd, R"(
ENTRY e {
  p0 = f32[32,64] parameter(0)
  p1 = f32[32,64] parameter(1)
  p2 = f32[32,64] parameter(2)
  c = f32[] constant(0)
  r0 = f32[32] reduce(p0, c), dimensions={1}, to_apply=add
  r1 = f32[32] reduce(p1, c), dimensions={1}, to_apply=add
  r2 = f32[32] reduce(p2, c), dimensions={1}, to_apply=add
  ROOT t = (f32[32], f32[32], f32[32]) tuple(r0, r1, r2)
}
)");
  HorizontalInputFusion pass;
  auto r = ExpectRewrite(pass, text);
  ASSERT_NE(r.applied, nullptr);
  // (r0, t), (r1, t), (r2, t): r0's use gets two candidates.
  EXPECT_EQ(r.dry.alternatives, 3);
  EXPECT_EQ(r.dry.candidates, 4);
  const Instruction* t = Root(*r.applied);
  const Instruction* f = t->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), Opcode::kFusion);
  for (int64_t i = 0; i < 3; ++i) ExpectGte(t->operand(i), f, i);
  EXPECT_EQ(CountOpcode(*r.applied->entry_computation(), Opcode::kFusion), 1);
}

// ---- Whole models.

void CheckSemantics(Pass& pass, const Module& original, const Module& input) {
  auto m = input.Clone();
  absl::StatusOr<bool> changed = pass.Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  ExpectSameOutputs(original, *m);
  auto dry = input.Clone();
  absl::StatusOr<AugmentStats> stats = pass.RunDry(dry.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(VerifyModule(*dry).ok()) << VerifyModule(*dry);
}

TEST(HorizontalFusion, TransformerEncoderSemantics) {
  const std::string text = ReadFile(std::filesystem::path(HLOGYM_SOURCE_DIR) /
                                    "examples" / "transformer_encoder.hlo");
  ASSERT_FALSE(text.empty());
  auto original = ParseAndVerify(text);
  ASSERT_NE(original, nullptr);
  auto fused = original->Clone();
  PriorityFusion priority;
  ASSERT_TRUE(priority.Run(fused.get()).ok());
  HorizontalLoopFusion loop;
  HorizontalInputFusion input;
  for (Pass* pass : {static_cast<Pass*>(&loop), static_cast<Pass*>(&input)}) {
    CheckSemantics(*pass, *original, *original);
    CheckSemantics(*pass, *original, *fused);
  }
}

// The largest corpus module (skipped without the shared corpus).
TEST(HorizontalFusion, LargestCorpusModuleIsFast) {
  const std::filesystem::path path =
      std::filesystem::path(HLOGYM_SOURCE_DIR) /
      "../shared/corpus/xla/hlo_mixtral_8x7b_bf16_2x8__0.hlo";
  const std::string text = ReadFile(path);
  if (text.empty()) GTEST_SKIP() << "no corpus at " << path;
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  HorizontalLoopFusion loop;
  HorizontalInputFusion input;
  for (Pass* pass : {static_cast<Pass*>(&loop), static_cast<Pass*>(&input)}) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = pass->Run(m->get());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_LT(seconds, 5) << pass->name();
  }
  EXPECT_TRUE(VerifyModule(**m).ok()) << VerifyModule(**m);
}

}  // namespace
}  // namespace hlogym
