#include "hlogym/eval/interpreter.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

Literal F32(std::vector<float> values, DimVector dims = {}) {
  if (dims.empty() && values.size() != 1) {
    dims = {static_cast<int64_t>(values.size())};
  }
  Literal l(Shape(PrimitiveType::kF32, dims));
  for (size_t i = 0; i < values.size(); ++i) l.SetFromDouble(i, values[i]);
  return l;
}

Literal S32(std::vector<int64_t> values, DimVector dims = {}) {
  if (dims.empty() && values.size() != 1) {
    dims = {static_cast<int64_t>(values.size())};
  }
  Literal l(Shape(PrimitiveType::kS32, dims));
  for (size_t i = 0; i < values.size(); ++i) l.SetFromInt64(i, values[i]);
  return l;
}

std::vector<double> Doubles(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

absl::StatusOr<Literal> RunText(const std::string& text,
                                std::vector<Literal> args,
                                InterpreterOptions options = {}) {
  auto m = Parse(text);
  if (m == nullptr) return absl::InvalidArgumentError("parse failed");
  Interpreter interp(std::move(options));
  return interp.Run(*m, args);
}

TEST(Interpreter, FusionCallTupleAndGetTupleElement) {
  const char* text = R"(
HloModule m
fused {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  s = f32[3] add(a, b)
  ROOT m = f32[3] multiply(s, b)
}
callee {
  x = f32[3] parameter(0)
  ROOT t = (f32[3], f32[3]) tuple(x, x)
}
ENTRY e {
  p0 = f32[3] parameter(0)
  p1 = f32[3] parameter(1)
  f = f32[3] fusion(p0, p1), kind=kLoop, calls=fused
  c = (f32[3], f32[3]) call(f), to_apply=callee
  g = f32[3] get-tuple-element(c), index=1
  ROOT r = (f32[3], f32[3]) tuple(g, p0)
}
)";
  auto out = RunText(text, {F32({1, 2, 3}), F32({10, 20, 30})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->shape().IsTuple());
  EXPECT_EQ(Doubles(out->tuple_elements()[0]),
            (std::vector<double>{110, 440, 990}));
  EXPECT_EQ(Doubles(out->tuple_elements()[1]), (std::vector<double>{1, 2, 3}));
}

TEST(Interpreter, WhileLoopSumsCounter) {
  // sum = 0; for (i = 0; i < n; ++i) sum += i
  const char* text = R"(
HloModule m
cond {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  sum = s32[] get-tuple-element(s), index=1
  n = s32[] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  sum1 = s32[] add(sum, i)
  ROOT t = (s32[], s32[], s32[]) tuple(i1, sum1, n)
}
ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[], s32[]) tuple(zero, zero, n)
  w = (s32[], s32[], s32[]) while(init), condition=cond, body=body
  ROOT sum = s32[] get-tuple-element(w), index=1
}
)";
  auto out = RunText(text, {S32({10})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->GetAsInt64(0), 45);

  InterpreterOptions limited;
  limited.max_while_iterations = 5;
  auto too_long = RunText(text, {S32({10})}, limited);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("more than 5 iterations"),
            std::string::npos)
      << too_long.status();
}

TEST(Interpreter, ConditionalPredicateAndIndexForms) {
  const char* pred_text = R"(
HloModule m
on_true {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
on_false {
  y = f32[] parameter(0)
  ROOT a = f32[] add(y, y)
}
ENTRY e {
  p = pred[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(p, x, x), true_computation=on_true, false_computation=on_false
}
)";
  Literal t(Shape(PrimitiveType::kPred, {}));
  t.SetFromInt64(0, 1);
  Literal f(Shape(PrimitiveType::kPred, {}));
  auto r1 = RunText(pred_text, {t, F32({3})});
  ASSERT_TRUE(r1.ok()) << r1.status();
  EXPECT_EQ(r1->GetAsDouble(0), -3);
  auto r2 = RunText(pred_text, {f, F32({3})});
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(r2->GetAsDouble(0), 6);

  const char* index_text = R"(
HloModule m
b0 {
  x = s32[] parameter(0)
  ROOT r = s32[] constant(100)
}
b1 {
  x = s32[] parameter(0)
  ROOT r = s32[] constant(101)
}
b2 {
  x = s32[] parameter(0)
  ROOT r = s32[] constant(102)
}
ENTRY e {
  i = s32[] parameter(0)
  ROOT c = s32[] conditional(i, i, i, i), branch_computations={b0, b1, b2}
}
)";
  for (auto [index, expected] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 100}, {1, 101}, {2, 102}, {7, 102}, {-1, 102}}) {
    auto r = RunText(index_text, {S32({index})});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->GetAsInt64(0), expected) << "index " << index;
  }
}

TEST(Interpreter, MapAppliesScalarComputation) {
  const char* text = R"(
HloModule m
sq1 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  xx = f32[] multiply(x, x)
  ROOT r = f32[] subtract(xx, y)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT m = f32[4] map(a, b), dimensions={0}, to_apply=sq1
}
)";
  auto out = RunText(text, {F32({1, 2, 3, 4}), F32({1, 1, 2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{0, 3, 7, 14}));
}

TEST(Interpreter, AlternativesEvaluateOperandZeroUnlessChosen) {
  const char* text = R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  n = f32[2] negate(p)
  d = f32[2] add(p, p)
  ROOT alt = f32[2] alternatives(p, n, d)
}
)";
  auto r0 = RunText(text, {F32({1, 2})});
  ASSERT_TRUE(r0.ok()) << r0.status();
  EXPECT_EQ(Doubles(*r0), (std::vector<double>{1, 2}));
  InterpreterOptions opts;
  opts.alternative_choices["alt"] = 2;
  auto r2 = RunText(text, {F32({1, 2})}, opts);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(Doubles(*r2), (std::vector<double>{2, 4}));
  opts.alternative_choices["alt"] = 3;
  auto bad = RunText(text, {F32({1, 2})}, opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("%alt"), std::string::npos)
      << bad.status();
}

TEST(Interpreter, CustomCallNeedsHandler) {
  const char* text = R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(p), custom_call_target="my_double"
}
)";
  auto missing = RunText(text, {F32({1, 2})});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(missing.status().message().find("\"my_double\" has no handler"),
            std::string::npos)
      << missing.status();

  CustomCallRegistry registry;
  registry.Register(
      "my_double",
      [](const Instruction& inst, Operands ops) -> absl::StatusOr<Literal> {
        Literal out(inst.shape());
        for (int64_t i = 0; i < out.element_count(); ++i) {
          out.SetFromDouble(i, 2 * ops[0]->GetAsDouble(i));
        }
        return out;
      });
  InterpreterOptions opts;
  opts.custom_calls = &registry;
  auto out = RunText(text, {F32({1, 2})}, opts);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{2, 4}));
}

TEST(Interpreter, CollectivesOnOneDevice) {
  const char* text = R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[2] parameter(0)
  ar = f32[2] all-reduce(p), replica_groups={}, to_apply=sum
  ag = f32[2] all-gather(ar), replica_groups={{0}}, dimensions={0}
  cp = f32[2] collective-permute(ag), source_target_pairs={{0,0}}
  id = u32[] replica-id()
  ROOT t = (f32[2], u32[]) tuple(cp, id)
}
)";
  auto out = RunText(text, {F32({1.5, -2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->tuple_elements()[0]), (std::vector<double>{1.5, -2}));
  EXPECT_EQ(out->tuple_elements()[1].GetAsInt64(0), 0);

  const char* no_source = R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT cp = f32[2] collective-permute(p), source_target_pairs={}
}
)";
  auto zeros = RunText(no_source, {F32({1, 2})});
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  EXPECT_EQ(Doubles(*zeros), (std::vector<double>{0, 0}));

  const char* two = R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[2] parameter(0)
  ROOT ar = f32[2] all-reduce(p), replica_groups={{0,1}}, to_apply=sum
}
)";
  auto multi = RunText(two, {F32({1, 2})});
  ASSERT_FALSE(multi.ok());
  EXPECT_NE(multi.status().message().find("2 participants"), std::string::npos)
      << multi.status();
}

TEST(Interpreter, AsyncStartDoneRunsWrappedComputation) {
  const char* text = R"(
HloModule m
wrapped {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
ENTRY e {
  p = f32[2] parameter(0)
  s = ((f32[2]), f32[2], s32[]) async-start(p), calls=wrapped
  u = ((f32[2]), f32[2], s32[]) async-update(s)
  ROOT d = f32[2] async-done(u)
}
)";
  auto out = RunText(text, {F32({1, -4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{-1, 4}));
}

TEST(Interpreter, ScanStacksOutputsAndCarries) {
  // Running sum over rows: carry += x[i]; out[i] = carry.
  const char* text = R"(
HloModule m
body {
  x = f32[2] parameter(0)
  c = f32[2] parameter(1)
  s = f32[2] add(x, c)
  ROOT t = (f32[2], f32[2]) tuple(s, s)
}
ENTRY e {
  xs = f32[3,2] parameter(0)
  init = f32[2] constant({0, 0})
  ROOT scan = (f32[3,2], f32[2]) scan(xs, init), dimensions={0}, num_carries=1, to_apply=body
}
)";
  auto out = RunText(text, {F32({1, 2, 3, 4, 5, 6}, {3, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->tuple_elements()[0]),
            (std::vector<double>{1, 2, 4, 6, 9, 12}));
  EXPECT_EQ(Doubles(out->tuple_elements()[1]), (std::vector<double>{9, 12}));
}

TEST(Interpreter, RngIsDeterministicPerSeed) {
  const char* text = R"(
HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  u = f32[1000] rng(lo, hi), distribution=rng_uniform
  state = u64[2] parameter(0)
  g = (u64[2], u32[8]) rng-bit-generator(state), algorithm=rng_default
  ROOT t = (f32[1000], (u64[2], u32[8])) tuple(u, g)
}
)";
  Literal state(Shape(PrimitiveType::kU64, {2}));
  state.SetFromInt64(0, 7);
  InterpreterOptions seed1;
  seed1.rng_seed = 1;
  auto a = RunText(text, {state}, seed1);
  auto b = RunText(text, {state}, seed1);
  InterpreterOptions seed2;
  seed2.rng_seed = 2;
  auto c = RunText(text, {state}, seed2);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status();
  EXPECT_EQ(*a, *b);
  EXPECT_NE(a->tuple_elements()[0], c->tuple_elements()[0]);
  // rng-bit-generator depends only on its state operand.
  EXPECT_EQ(a->tuple_elements()[1], c->tuple_elements()[1]);
  EXPECT_EQ(a->tuple_elements()[1].tuple_elements()[0].GetAsInt64(0), 7 + 8);
  double sum = 0;
  for (double v : Doubles(a->tuple_elements()[0])) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 1);
    sum += v;
  }
  EXPECT_NEAR(sum / 1000, 0.5, 0.05);
}

TEST(Interpreter, ErrorsAreReportedNotCrashes) {
  const char* text = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)";
  auto wrong_count = RunText(text, {});
  ASSERT_FALSE(wrong_count.ok());
  EXPECT_NE(wrong_count.status().message().find("takes 1 arguments, got 0"),
            std::string::npos)
      << wrong_count.status();
  auto wrong_shape = RunText(text, {F32({1, 2})});
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_NE(wrong_shape.status().message().find("expects f32[4]"),
            std::string::npos)
      << wrong_shape.status();

  InterpreterOptions tiny;
  tiny.max_live_bytes = 10;  // arguments are borrowed, not counted
  auto budget = RunText(text, {F32({1, 2, 3, 4})}, tiny);
  ASSERT_FALSE(budget.ok());
  EXPECT_EQ(budget.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(budget.status().message().find("%n"), std::string::npos);

  const char* unknown = R"(
HloModule m
ENTRY e {
  ROOT c = f32[2] constant({...})
}
)";
  auto u = RunText(unknown, {});
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("not in the text"), std::string::npos);
  InterpreterOptions zeros;
  zeros.unknown_constants_as_zero = true;
  auto z = RunText(unknown, {}, zeros);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(Doubles(*z), (std::vector<double>{0, 0}));

  const char* device = R"(
HloModule m
ENTRY e {
  t = token[] after-all()
  ROOT r = (f32[2], u32[], token[]) recv(t), channel_id=1
}
)";
  auto inf = RunText(device, {});
  ASSERT_FALSE(inf.ok()) << "recv has no device to receive from";
  EXPECT_NE(inf.status().message().find("needs a device"), std::string::npos)
      << inf.status();
}

TEST(Interpreter, IntermediatesAreFreedEarly) {
  // A chain of 20 ops over 1 MiB arrays keeps at most a few alive.
  std::string text =
      "HloModule m\nENTRY e {\n  v0 = f32[262144] parameter(0)\n";
  for (int i = 1; i <= 20; ++i) {
    text += "  v" + std::to_string(i) + " = f32[262144] negate(v" +
            std::to_string(i - 1) + ")\n";
  }
  text += "  ROOT r = f32[262144] copy(v20)\n}\n";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  Interpreter interp;
  std::vector<Literal> args;
  args.emplace_back(Shape(PrimitiveType::kF32, {262144}));
  auto out = interp.Run(*m, args);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(interp.instructions_evaluated(), 21);
  EXPECT_LE(interp.peak_live_bytes(), 3 * 262144 * 4);
}

TEST(Interpreter, ConstantTrueConditionIsReportedAtOnce) {
  const char* text = R"(
HloModule m
cond {
  p = f32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
ENTRY e {
  x = f32[] parameter(0)
  ROOT w = f32[] while(x), condition=cond, body=body
}
)";
  auto out = RunText(text, {F32({1})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("is the constant true"),
            std::string::npos)
      << out.status();
}

TEST(Interpreter, AsyncOperandsBoundLateRunAtDone) {
  // async-start binds a, async-update binds b; the sum is computed once
  // both are there.
  const char* text = R"(
HloModule m
wrapped {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT s = f32[2] add(a, b)
}
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  start = ((f32[2]), f32[2], s32[]) async-start(a), calls=wrapped
  update = ((f32[2], f32[2]), f32[2], s32[]) async-update(start, b)
  ROOT done = f32[2] async-done(update)
}
)";
  auto out = RunText(text, {F32({1, 2}), F32({10, 20})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{11, 22}));
}

TEST(Interpreter, MixedPrecisionOperandsAreConvertedToTheResultType) {
  const char* text = R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT s = bf16[2] add(a, b)
}
)";
  Literal b(Shape(PrimitiveType::kBF16, {2}));
  b.SetFromDouble(0, 1);
  b.SetFromDouble(1, 256);
  // 1.00390625 rounds to 1 in bf16 before the add: 1 + 1 = 2; 1 + 256 = 257
  // rounds to 256 (bf16 has 8 significant bits).
  auto out = RunText(text, {F32({1.00390625f, 1}), std::move(b)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{2, 256}));
}

TEST(Interpreter, ScalarComparisonsInCalledComputations) {
  // map runs the computation per element through the compiled scalar
  // program: compares of s32/u32/f32, select and pred logic.
  const char* text = R"(
HloModule m
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  u = u32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  ne = pred[] compare(a, b), direction=NE
  zero = s32[] constant(0)
  neg = pred[] compare(i, zero), direction=LT
  big = u32[] constant(2147483648)
  ubig = pred[] compare(u, big), direction=GE
  both = pred[] and(lt, neg)
  either = pred[] or(both, ubig)
  nb = pred[] not(ne)
  pick = pred[] select(nb, nb, either)
  one = f32[] constant(1)
  two = f32[] constant(2)
  ROOT r = f32[] select(pick, one, two)
}
ENTRY e {
  a = f32[5] parameter(0)
  b = f32[5] parameter(1)
  i = s32[5] parameter(2)
  u = u32[5] parameter(3)
  ROOT m = f32[5] map(a, b, i, u), dimensions={0}, to_apply=f
}
)";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Literal u(Shape(PrimitiveType::kU32, {5}));
  for (int64_t k = 0; k < 5; ++k) u.SetFromInt64(k, 1);
  u.SetFromInt64(3, int64_t{3000000000});  // >= 2^31 unsigned, < 0 signed
  // k=0: a==b -> nb true -> 1.
  // k=1: 1<2 and -1<0 -> either -> 1.
  // k=2: 1<2 but 5 >= 0, u small -> 2.
  // k=3: NaN: LT false, NE true -> nb false; u >= 2^31 -> 1.
  // k=4: NaN, u small -> 2.
  auto out = RunText(text, {F32({3, 1, 1, nan, nan}), F32({3, 2, 2, 0, 0}),
                            S32({0, -1, 5, 0, 0}), std::move(u)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{1, 1, 2, 1, 2}));
}

}  // namespace
}  // namespace hlogym
