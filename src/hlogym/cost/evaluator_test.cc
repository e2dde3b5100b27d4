#include "hlogym/cost/evaluator.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/text/parser.h"
#include "nlohmann/json.hpp"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

std::unique_ptr<ModelEvaluator> H100(EvaluatorOptions options = {
                                         .per_kernel = true}) {
  absl::StatusOr<GpuDevice> d = LoadDevice("h100");
  EXPECT_TRUE(d.ok()) << d.status();
  return std::make_unique<ModelEvaluator>(*d, options);
}

const KernelCost* FindKernel(const EvaluationResult& r, std::string_view name) {
  for (const KernelCost& k : r.kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

double SumOfKernels(const EvaluationResult& r) {
  double s = 0;
  for (const KernelCost& k : r.kernels) s += k.seconds;
  return s;
}

constexpr char kLoopModule[] = R"(HloModule m
%cond (s: (s32[], f32[1024])) -> pred[] {
  %s = (s32[], f32[1024]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[1024])) -> (s32[], f32[1024]) {
  %s = (s32[], f32[1024]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %x = f32[1024]{0} get-tuple-element(%s), index=1
  %y = f32[1024]{0} multiply(%x, %x)
  ROOT %t = (s32[], f32[1024]{0}) tuple(%next, %y)
}
ENTRY %e (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[1024]{0}) tuple(%zero, %p)
  %w = (s32[], f32[1024]{0}) while(%init), condition=%cond, body=%body
  %r = f32[1024]{0} get-tuple-element(%w), index=1
  ROOT %out = f32[1024]{0} exponential(%r)
})";

// The same graph written in two instruction orders has one DagHash, and
// must price the same to the last bit (search agents deduplicate states by
// hash and compare their times).
TEST(CostEvaluatorTest, TotalDoesNotDependOnInstructionOrder) {
  std::vector<std::string> lines;
  std::string params, outs, types;
  for (int i = 0; i < 24; ++i) {
    const int n = 1000 + 977 * i;
    const std::string t = "f32[" + std::to_string(n) + "]";
    params += (i ? ", " : "") + std::string("p") + std::to_string(i) + ": " + t;
    lines.push_back("  %p" + std::to_string(i) + " = " + t + " parameter(" +
                    std::to_string(i) + ")");
    lines.push_back("  %e" + std::to_string(i) + " = " + t +
                    (i % 3 == 0   ? " exponential(%p"
                     : i % 3 == 1 ? " sqrt(%p"
                                  : " negate(%p") +
                    std::to_string(i) + ")");
    outs += (i ? ", %e" : "%e") + std::to_string(i);
    types += (i ? ", " : "") + t;
  }
  auto text = [&](bool reversed) {
    std::string body;
    std::vector<std::string> order = lines;
    if (reversed) {
      // Parameters first, then the kernels in the opposite order.
      std::vector<std::string> p, k;
      for (size_t i = 0; i < order.size(); ++i)
        (i % 2 ? k : p).push_back(order[i]);
      std::reverse(k.begin(), k.end());
      order = p;
      order.insert(order.end(), k.begin(), k.end());
    }
    for (const std::string& l : order) body += l + "\n";
    return "HloModule m\nENTRY %e (" + params + ") -> (" + types + ") {\n" +
           body + "  ROOT %t = (" + types + ") tuple(" + outs + ")\n}\n";
  };
  auto a = Parse(text(false));
  auto b = Parse(text(true));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(DagHash(*a), DagHash(*b));
  auto eval = H100();
  absl::StatusOr<EvaluationResult> ra = eval->Evaluate(*a);
  absl::StatusOr<EvaluationResult> rb = H100()->Evaluate(*b);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ(ra->kernel_count, 24);
  EXPECT_EQ(ra->total_seconds, rb->total_seconds);  // bit for bit
  EXPECT_NEAR(ra->total_seconds, SumOfKernels(*ra), 1e-15);
  // Summed in visiting order, the two differ in the last bits: the case
  // the fixed-point total exists for.
  EXPECT_NE(SumOfKernels(*ra), SumOfKernels(*rb));
}

TEST(CostEvaluatorTest, WhileLoopKernelsRunTripCountTimes) {
  auto m = Parse(kLoopModule);
  ASSERT_NE(m, nullptr);
  auto ev = H100();
  absl::StatusOr<EvaluationResult> r = ev->Evaluate(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->backend, "model:h100");
  EXPECT_EQ(r->device, "h100");
  // lt, next, y (10 launches each) and out.
  EXPECT_EQ(r->kernel_count, 4);
  EXPECT_EQ(r->kernel_launches, 31);
  EXPECT_TRUE(r->flags.empty());
  ASSERT_EQ(r->kernels.size(), 4u);
  const KernelCost* y = FindKernel(*r, "y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->launches, 10);
  EXPECT_EQ(y->computation, "body");
  EXPECT_EQ(y->opcode, "multiply");
  EXPECT_EQ(y->kind, "loop");
  EXPECT_EQ(y->flops, 10 * 3 * 1024);  // sm_90 f32 multiply: 3 cycles
  EXPECT_EQ(y->bytes, 10 * 3 * 4096);
  absl::StatusOr<RunTimeData> yd = ev->model().EstimateRunTime(
      *m->FindComputation("body")->FindInstruction("y"));
  ASSERT_TRUE(yd.ok());
  EXPECT_DOUBLE_EQ(y->seconds, 10 * (1e-6 + yd->exec_time));
  EXPECT_EQ(y->bound, "launch");

  // The scalar compare: 1 block of 1 thread: 3 flops at 3 flop/ns, two
  // 4-byte reads at one block's 63.36 GB/s, a 1-byte write.
  const KernelCost* lt = FindKernel(*r, "lt");
  ASSERT_NE(lt, nullptr);
  EXPECT_EQ(lt->launches, 10);
  EXPECT_DOUBLE_EQ(lt->compute_seconds, 1e-9);
  const double memory = 8 / 63.36e9 + 1 / 3.35232e12;
  EXPECT_DOUBLE_EQ(lt->memory_seconds, memory);
  EXPECT_DOUBLE_EQ(lt->seconds, 10 * (1e-6 + 1e-9 + memory - 0.95 * memory));

  const KernelCost* out = FindKernel(*r, "out");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->launches, 1);
  EXPECT_DOUBLE_EQ(r->total_seconds, SumOfKernels(*r));
  EXPECT_DOUBLE_EQ(r->flops, 10 * 3 + 10 * 3 + 10 * 3 * 1024 + 79 * 1024);
}

TEST(CostEvaluatorTest, UnknownTripCountIsFlagged) {
  std::string text = kLoopModule;
  text.replace(text.find("%n = s32[] constant(10)"),
               std::string("%n = s32[] constant(10)").size(),
               "%n = s32[] get-tuple-element(%s), index=0");
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<EvaluationResult> r = H100()->Evaluate(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kernel_launches, 4);
  ASSERT_EQ(r->flags.size(), 1u);
  EXPECT_EQ(r->flags[0], "while 'w': trip count unknown, counted as 1");
}

TEST(CostEvaluatorTest, ConditionalTakesTheCostliestBranchAndCallsTheCallee) {
  auto m = Parse(R"(HloModule m
%cheap (a: f32[4096]) -> f32[4096] {
  %a = f32[4096]{0} parameter(0)
  ROOT %neg = f32[4096]{0} negate(%a)
}
%costly (b: f32[4096]) -> f32[4096] {
  %b = f32[4096]{0} parameter(0)
  %t = f32[4096]{0} tanh(%b)
  ROOT %u = f32[4096]{0} sine(%t)
}
%callee (c: f32[4096]) -> f32[4096] {
  %c = f32[4096]{0} parameter(0)
  ROOT %d = f32[4096]{0} add(%c, %c)
}
ENTRY %e (p: pred[], x: f32[4096]) -> f32[4096] {
  %p = pred[] parameter(0)
  %x = f32[4096]{0} parameter(1)
  %cond = f32[4096]{0} conditional(%p, %x, %x), true_computation=%cheap, false_computation=%costly
  ROOT %call = f32[4096]{0} call(%cond), to_apply=%callee
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<EvaluationResult> r = H100()->Evaluate(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kernel_count, 3);
  EXPECT_NE(FindKernel(*r, "t"), nullptr);
  EXPECT_NE(FindKernel(*r, "u"), nullptr);
  EXPECT_NE(FindKernel(*r, "d"), nullptr);
  EXPECT_EQ(FindKernel(*r, "neg"), nullptr);
  EXPECT_DOUBLE_EQ(r->total_seconds, SumOfKernels(*r));
}

TEST(CostEvaluatorTest, FreeInstructionsLaunchNothing) {
  auto m = Parse(R"(HloModule m
ENTRY %e (p: f32[2,8]) -> (f32[16], f32[8,2], f32[2,8]) {
  %p = f32[2,8]{1,0} parameter(0)
  %b = f32[16]{0} bitcast(%p)
  %r = f32[8,2]{1,0} reshape(%p)
  %c = f32[2,8]{1,0} constant({...})
  %t = (f32[16]{0}, f32[8,2]{1,0}, f32[2,8]{1,0}) tuple(%b, %r, %c)
  %g = f32[16]{0} get-tuple-element(%t), index=0
  ROOT %t2 = (f32[16]{0}, f32[8,2]{1,0}, f32[2,8]{1,0}) tuple(%g, %r, %c)
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<EvaluationResult> r = H100()->Evaluate(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kernel_count, 0);
  EXPECT_EQ(r->total_seconds, 0);
  EXPECT_EQ(r->bytes_accessed, 0);
}

TEST(CostEvaluatorTest, KindsAndFlags) {
  auto m = Parse(R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[2048,2048], y: f32[2048,2048]) -> f32[2048] {
  %x = f32[2048,2048]{1,0} parameter(0)
  %y = f32[2048,2048]{1,0} parameter(1)
  %d = f32[2048,2048]{1,0} dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %cc = f32[2048,2048]{1,0} custom-call(%d), custom_call_target="my_op"
  %ar = f32[2048,2048]{1,0} all-reduce(%cc), replica_groups={}, to_apply=%add
  %zero = f32[] constant(0)
  ROOT %red = f32[2048]{0} reduce(%ar, %zero), dimensions={1}, to_apply=%add
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<EvaluationResult> r = H100()->Evaluate(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(FindKernel(*r, "d")->kind, "library");
  EXPECT_EQ(FindKernel(*r, "d")->bound, "compute");
  EXPECT_EQ(FindKernel(*r, "cc")->kind, "custom-call");
  EXPECT_EQ(FindKernel(*r, "ar")->kind, "collective");
  EXPECT_EQ(FindKernel(*r, "ar")->launch_seconds, 5e-6);
  EXPECT_EQ(FindKernel(*r, "red")->kind, "reduction");
  ASSERT_EQ(r->flags.size(), 2u);
  EXPECT_EQ(r->flags[0],
            "custom-call 'cc' (my_op): unknown cost, modelled as reading its "
            "operands and writing its result");
  EXPECT_EQ(r->flags[1],
            "collectives are modelled as local memory traffic plus a longer "
            "launch; communication is not modelled");
  // 2 * 2048^3 flops at the f32 (tf32) matrix rate.
  EXPECT_DOUBLE_EQ(FindKernel(*r, "d")->compute_seconds,
                   2.0 * 2048 * 2048 * 2048 / 494.7e12);
}

constexpr char kCacheModule[] = R"(HloModule m
%f1 (a: f32[512], b: f32[512]) -> f32[512] {
  %a = f32[512]{0} parameter(0)
  %b = f32[512]{0} parameter(1)
  %m = f32[512]{0} multiply(%a, %b)
  ROOT %e = f32[512]{0} exponential(%m)
}
%f2 (c: f32[512], d: f32[512]) -> f32[512] {
  %c = f32[512]{0} parameter(0)
  %d = f32[512]{0} parameter(1)
  %n = f32[512]{0} multiply(%c, %d)
  ROOT %g = f32[512]{0} exponential(%n)
}
%f3 (c: f32[512], d: f32[512]) -> f32[512] {
  %c = f32[512]{0} parameter(0)
  %d = f32[512]{0} parameter(1)
  %n = f32[512]{0} multiply(%c, %d)
  ROOT %g = f32[512]{0} log(%n)
}
ENTRY %e (x: f32[512], y: f32[512]) -> f32[512] {
  %x = f32[512]{0} parameter(0)
  %y = f32[512]{0} parameter(1)
  %k1 = f32[512]{0} fusion(%x, %y), kind=kLoop, calls=%f1
  %k2 = f32[512]{0} fusion(%k1, %y), kind=kLoop, calls=%f2
  %k3 = f32[512]{0} fusion(%k2, %x), kind=kLoop, calls=%f3
  ROOT %s = f32[512]{0} subtract(%k3, %x)
})";

TEST(CostEvaluatorTest, KernelKeysAreStructural) {
  auto m = Parse(kCacheModule);
  ASSERT_NE(m, nullptr);
  auto ev = H100();
  const Computation* entry = m->entry_computation();
  const uint64_t k1 = ev->KernelKey(*entry->FindInstruction("k1"));
  const uint64_t k2 = ev->KernelKey(*entry->FindInstruction("k2"));
  const uint64_t k3 = ev->KernelKey(*entry->FindInstruction("k3"));
  // Same structure under other names: same key; exp vs log: different.
  EXPECT_EQ(k1, k2);
  EXPECT_NE(k1, k3);
  EXPECT_NE(k1, ev->KernelKey(*entry->FindInstruction("s")));
}

TEST(CostEvaluatorTest, CacheReusesIdenticalAndUnchangedKernels) {
  auto m = Parse(kCacheModule);
  ASSERT_NE(m, nullptr);
  auto ev = H100(EvaluatorOptions{.per_kernel = false});
  absl::StatusOr<EvaluationResult> first = ev->Evaluate(*m);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->kernels.empty());
  EXPECT_EQ(ev->cache_misses(), 3);  // k1 and k2 are the same kernel
  EXPECT_EQ(ev->cache_hits(), 1);
  absl::StatusOr<EvaluationResult> second = ev->Evaluate(*m);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(ev->cache_misses(), 3);
  EXPECT_EQ(ev->cache_hits(), 5);
  EXPECT_EQ(second->total_seconds, first->total_seconds);

  // A local rewrite: s becomes an add. Only that kernel is estimated.
  Computation* entry = m->entry_computation();
  Instruction* s = entry->FindInstruction("s");
  auto add = std::make_unique<Instruction>(Opcode::kAdd, s->shape());
  add->AppendOperand(s->operand(0));
  add->AppendOperand(s->operand(1));
  add->set_name("s_add");
  Instruction* added = entry->AddInstruction(std::move(add));
  ASSERT_TRUE(s->ReplaceAllUsesWith(added).ok());
  ASSERT_TRUE(entry->RemoveInstruction(s).ok());
  absl::StatusOr<EvaluationResult> third = ev->Evaluate(*m);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(ev->cache_misses(), 4);
  EXPECT_EQ(ev->cache_hits(), 8);
  // add and subtract cost the same on sm_90 (7 cycles).
  EXPECT_DOUBLE_EQ(third->total_seconds, first->total_seconds);

  // A fresh evaluator gives the same numbers as the cached one.
  absl::StatusOr<EvaluationResult> fresh = H100()->Evaluate(*m);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->total_seconds, third->total_seconds);
  EXPECT_EQ(fresh->bytes_accessed, third->bytes_accessed);
}

// The same fusion reading one value at two positions, or two values of the
// same shape. The model prices an operand by the first position holding it,
// so the two cost differently: here position 3 (read by two users in the
// body) is priced like position 2 when both hold x. The cache must not hand
// one's cost to the other, whichever it met first. A key blind to repeats
// made f-MCTS results depend on the order states were priced in (and so on
// the number of threads).
constexpr std::string_view kRepeatedOperand = R"(
HloModule repeated
fused {
  q0 = s32[] parameter(0)
  q1 = f32[80,1]{1,0} parameter(1)
  q2 = f32[] parameter(2)
  q3 = f32[] parameter(3)
  c0 = s32[] constant(0)
  c79 = s32[] constant(79)
  sub = s32[] subtract(c79, q0)
  one = f32[1,1]{1,0} constant({ {1} })
  ds = f32[1,1]{1,0} dynamic-slice(q1, sub, c0), dynamic_slice_sizes={1,1}
  d1 = f32[1,1]{1,0} divide(one, ds)
  b1 = f32[1]{0} bitcast(d1)
  c448 = f32[] constant(448)
  d2 = f32[] divide(c448, q2)
  zero = f32[] constant(0)
  gt = pred[] compare(q3, zero), direction=GT
  isf = pred[] is-finite(q3)
  b2 = f32[1]{0} bitcast(d2)
  b3 = pred[1]{0} bitcast(gt)
  b4 = pred[1]{0} bitcast(isf)
  sel1 = f32[1]{0} select(b3, b2, b1)
  sel2 = f32[1]{0} select(b4, sel1, b1)
  ROOT t = (f32[1]{0}) tuple(sel2)
}
ENTRY main {
  i = s32[] parameter(0)
  m = f32[80,1]{1,0} parameter(1)
  x = f32[] parameter(2)
  y = f32[] parameter(3)
  ROOT k = (f32[1]{0}) fusion(i, m, x, OPERAND), kind=kLoop, calls=fused
}
)";

std::string Replace(std::string_view text, std::string_view from,
                    std::string_view to) {
  const size_t pos = text.find(from);
  if (pos == std::string_view::npos) return std::string(text);
  std::string out(text.substr(0, pos));
  out += to;
  out += text.substr(pos + from.size());
  return out;
}

TEST(CostEvaluatorTest, CacheTellsRepeatedOperandsApart) {
  auto twice = Parse(Replace(kRepeatedOperand, "OPERAND", "x"));
  auto two = Parse(Replace(kRepeatedOperand, "OPERAND", "y"));
  ASSERT_NE(twice, nullptr);
  ASSERT_NE(two, nullptr);
  auto key = [](const Module& m) {
    return H100()->KernelKey(*m.entry_computation()->root_instruction());
  };
  EXPECT_NE(key(*twice), key(*two));
  const double fresh_twice = H100()->Evaluate(*twice)->total_seconds;
  const double fresh_two = H100()->Evaluate(*two)->total_seconds;
  EXPECT_LT(fresh_twice, fresh_two);  // 20 bytes read against 24
  for (bool twice_first : {true, false}) {
    auto ev = H100();
    const Module& a = twice_first ? *twice : *two;
    const Module& b = twice_first ? *two : *twice;
    ASSERT_TRUE(ev->Evaluate(a).ok());
    absl::StatusOr<EvaluationResult> r = ev->Evaluate(b);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->total_seconds, twice_first ? fresh_two : fresh_twice);
  }
}

TEST(CostEvaluatorTest, JsonHasTheDocumentedFields) {
  auto m = Parse(kLoopModule);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<EvaluationResult> r = H100()->Evaluate(*m);
  ASSERT_TRUE(r.ok());
  nlohmann::json j =
      nlohmann::json::parse(EvaluationResultToJson(*r, true), nullptr, false);
  ASSERT_TRUE(j.is_object());
  for (const char* key :
       {"backend", "device", "total_seconds", "kernel_count", "flops",
        "transcendentals", "bytes_accessed", "flags", "kernels"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["device"], "h100");
  EXPECT_EQ(j["kernel_count"], 4);
  ASSERT_EQ(j["kernels"].size(), 4u);
  for (const char* key :
       {"name", "kind", "seconds", "flops", "bytes", "bound", "launches"}) {
    EXPECT_TRUE(j["kernels"][0].contains(key)) << key;
  }
  EXPECT_EQ(j["total_seconds"].get<double>(), r->total_seconds);
  nlohmann::json summary =
      nlohmann::json::parse(EvaluationResultToJson(*r, false), nullptr, false);
  EXPECT_TRUE(summary["kernels"].empty());
}

TEST(CostEvaluatorTest, InterpreterBackendGivesOutputs) {
  auto m = Parse(R"(HloModule m
ENTRY %e () -> (f32[2], s32[]) {
  %a = f32[2]{0} constant({1, 2})
  %b = f32[2]{0} constant({2, 3})
  %s = f32[2]{0} add(%a, %b)
  %i = s32[] constant(7)
  ROOT %t = (f32[2]{0}, s32[]) tuple(%s, %i)
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::unique_ptr<Evaluator>> ev =
      CreateEvaluator("interpreter");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ((*ev)->name(), "interpreter");
  absl::StatusOr<EvaluationResult> r = (*ev)->Evaluate(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(r->outputs[0].GetAsDouble(0), 3);
  EXPECT_EQ(r->outputs[0].GetAsDouble(1), 5);
  EXPECT_EQ(r->outputs[1].GetAsInt64(0), 7);
  EXPECT_EQ(r->total_seconds, 0);
  EXPECT_TRUE(r->kernels.empty());
}

TEST(CostEvaluatorTest, InterpreterUsesGeneratedInputs) {
  auto m = Parse(R"(HloModule m
ENTRY %e (p: s32[3]) -> s32[3] {
  %p = s32[3]{0} parameter(0)
  ROOT %n = s32[3]{0} negate(%p)
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::unique_ptr<Evaluator>> ev =
      CreateEvaluator("interpreter", {.seed = 5});
  ASSERT_TRUE(ev.ok());
  absl::StatusOr<EvaluationResult> r = (*ev)->Evaluate(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::vector<Literal>> in =
      GenerateInputs({Shape(PrimitiveType::kS32, {3})}, 5);
  ASSERT_TRUE(in.ok());
  ASSERT_EQ(r->outputs.size(), 1u);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r->outputs[0].GetAsInt64(i), -(*in)[0].GetAsInt64(i));
  }
}

TEST(CostEvaluatorTest, BackendSpecs) {
  absl::StatusOr<std::unique_ptr<Evaluator>> a = CreateEvaluator("model:a100");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->name(), "model:a100-40gb");
  EXPECT_FALSE(CreateEvaluator("model:nope").ok());
  absl::StatusOr<std::unique_ptr<Evaluator>> bad = CreateEvaluator("gpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "unknown evaluator backend 'gpu' (known: model:<device>, "
            "interpreter)");
  const std::string path = testing::TempDir() + "/cost_evaluator_dev.json";
  {
    std::ofstream out(path);
    out << R"({"name": "tiny", "core_count": 2, "fpus_per_core": 32,
              "clock_rate_ghz": 1.0, "memory_bandwidth": 1e10,
              "l2_cache_size": 65536,
              "matrix_flops_per_second": {"f32": 1e11}})";
  }
  absl::StatusOr<std::unique_ptr<Evaluator>> t =
      CreateEvaluator("model:" + path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->name(), "model:tiny");
  std::remove(path.c_str());
}

TEST(CostEvaluatorTest, ErrorsNameTheInstruction) {
  auto m = Parse(R"(HloModule m
%fc (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%a)
}
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %f = f32[4]{0} fusion(%x), kind=kLoop, calls=%fc
})");
  ASSERT_NE(m, nullptr);
  // Break the fusion: one operand more than its computation's parameters.
  Instruction* f = m->entry_computation()->FindInstruction("f");
  f->AppendOperand(m->entry_computation()->FindInstruction("x"));
  absl::StatusOr<EvaluationResult> r = H100()->Evaluate(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "fusion 'f' has 2 operands but its computation 'fc' has 1 "
            "parameters");
}

}  // namespace
}  // namespace hlogym
