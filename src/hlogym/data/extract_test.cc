#include "hlogym/data/extract.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  absl::Status v = VerifyModule(**m);
  EXPECT_TRUE(v.ok()) << v;
  return std::move(*m);
}

// The entry as "%1=negate(P0) %2=exponential(%1) ROOT=%2": parameters are
// P<number>, the others numbered in post-order.
std::string Listing(const Module& m) {
  absl::flat_hash_map<const Instruction*, std::string> label;
  std::string out;
  int64_t k = 0;
  for (const Instruction* i :
       m.entry_computation()->MakeInstructionPostOrder()) {
    if (i->opcode() == Opcode::kParameter) {
      label[i] = StrCat("P", i->parameter_number());
      continue;
    }
    label[i] = StrCat("%", ++k);
    StrAppend(&out, label[i], "=", OpcodeName(i->opcode()), "(");
    for (int64_t j = 0; j < i->operand_count(); ++j) {
      StrAppend(&out, j ? "," : "", label.at(i->operand(j)));
    }
    out += ") ";
  }
  StrAppend(&out, "ROOT=", label.at(m.entry_computation()->root_instruction()));
  return out;
}

std::set<std::string> Listings(const std::vector<ExtractedSubgraph>& subs) {
  std::set<std::string> out;
  for (const ExtractedSubgraph& s : subs) out.insert(Listing(*s.module));
  return out;
}

ExtractOptions Sizes(int64_t lo, int64_t hi) {
  ExtractOptions o;
  o.min_instructions = lo;
  o.max_instructions = hi;
  o.per_module_limit = 0;  // every seed once
  return o;
}

std::vector<ExtractedSubgraph> Extract(const Module& m, const ExtractOptions& o,
                                       ExtractStats* stats = nullptr) {
  absl::StatusOr<std::vector<ExtractedSubgraph>> r =
      ExtractSubgraphs(m, o, stats);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  for (const ExtractedSubgraph& s : *r) {
    EXPECT_TRUE(VerifyModule(*s.module).ok()) << PrintModule(*s.module);
    EXPECT_EQ(s.instruction_count, SubgraphInstructionCount(*s.module));
    EXPECT_GE(s.instruction_count, o.min_instructions);
    EXPECT_LE(s.instruction_count, o.max_instructions);
  }
  return std::move(*r);
}

constexpr char kChain[] = R"(
HloModule chain
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] exponential(a)
  c = f32[4] sqrt(b)
  ROOT d = f32[4] abs(c)
}
)";

TEST(ExtractTest, ChainPairsHaveOneParameterAndOneOutput) {
  auto m = Parse(kChain);
  ASSERT_NE(m, nullptr);
  ExtractStats stats;
  std::vector<ExtractedSubgraph> subs = Extract(*m, Sizes(2, 2), &stats);
  // Seed a can only pair with b, seed d only with c; b and c pick a side.
  std::set<std::string> got = Listings(subs);
  EXPECT_TRUE(got.count("%1=negate(P0) %2=exponential(%1) ROOT=%2"));
  EXPECT_TRUE(got.count("%1=sqrt(P0) %2=abs(%1) ROOT=%2"));
  for (const std::string& l : got) {
    EXPECT_TRUE(l == "%1=negate(P0) %2=exponential(%1) ROOT=%2" ||
                l == "%1=exponential(P0) %2=sqrt(%1) ROOT=%2" ||
                l == "%1=sqrt(P0) %2=abs(%1) ROOT=%2")
        << l;
  }
  for (const ExtractedSubgraph& s : subs) {
    EXPECT_EQ(s.parameter_count, 1);
    EXPECT_EQ(s.output_count, 1);
    EXPECT_EQ(s.source_computation, "e");
    const Instruction* p0 =
        s.module->entry_computation()->parameter_instruction(0);
    EXPECT_EQ(p0->shape().ToString(false), "f32[4]");
  }
  EXPECT_EQ(stats.attempts, 4);
  EXPECT_EQ(stats.extracted + stats.duplicates, 4);
  EXPECT_EQ(stats.rejected(), 0);
}

TEST(ExtractTest, WholeChainIsOneSubgraph) {
  auto m = Parse(kChain);
  ASSERT_NE(m, nullptr);
  std::vector<ExtractedSubgraph> subs = Extract(*m, Sizes(4, 4));
  ASSERT_EQ(subs.size(), 1u);
  EXPECT_EQ(Listing(*subs[0].module),
            "%1=negate(P0) %2=exponential(%1) %3=sqrt(%2) %4=abs(%3) ROOT=%4");
  // A computation with fewer instructions than the minimum is not tried.
  ExtractStats stats;
  EXPECT_TRUE(Extract(*m, Sizes(5, 8), &stats).empty());
  EXPECT_EQ(stats.attempts, 0);
}

TEST(ExtractTest, CutValuesUsedOutsideBecomeOutputs) {
  // a feeds b inside and c outside: {a, b} has two outputs (a tuple, which
  // counts), {b, c, d} shares one parameter for a.
  auto m = Parse(R"(
HloModule diamond
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] exponential(a)
  c = f32[4] sqrt(a)
  ROOT d = f32[4] add(b, c)
}
)");
  ASSERT_NE(m, nullptr);
  std::set<std::string> got = Listings(Extract(*m, Sizes(3, 3)));
  const std::set<std::string> allowed = {
      "%1=negate(P0) %2=exponential(%1) %3=tuple(%1,%2) ROOT=%3",
      "%1=negate(P0) %2=sqrt(%1) %3=tuple(%1,%2) ROOT=%3",
      "%1=exponential(P0) %2=sqrt(P0) %3=add(%1,%2) ROOT=%3",
  };
  EXPECT_FALSE(got.empty());
  for (const std::string& l : got) EXPECT_TRUE(allowed.count(l)) << l;
  // With max 2 the two-output pairs no longer fit (2 + tuple = 3).
  for (const std::string& l : Listings(Extract(*m, Sizes(2, 2)))) {
    EXPECT_EQ(l.find("tuple"), std::string::npos) << l;
  }
}

TEST(ExtractTest, ParametersNumberedByFirstUse) {
  auto m = Parse(R"(
HloModule order
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[2,4] parameter(1)
  a = f32[2,4] negate(p1)
  b = f32[4] negate(p0)
  zero = f32[] constant(0)
  r = f32[4] reduce(a, zero), dimensions={0}, to_apply=sum
  s = f32[4] subtract(b, r)
  ROOT t = f32[4] abs(s)
}
)");
  ASSERT_NE(m, nullptr);
  // {s, t}: s uses b then r, so b's value is parameter 0 and r's is 1.
  // {r, s, t} also copies the constant (4 instructions), then r's operand
  // a is parameter 0, since r comes first in post-order.
  // Growth is random: take the union over a few seeds.
  std::set<std::string> got, got4;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    ExtractOptions o = Sizes(2, 2);
    o.seed = seed;
    for (const std::string& l : Listings(Extract(*m, o))) got.insert(l);
    o = Sizes(4, 4);
    o.seed = seed;
    for (const std::string& l : Listings(Extract(*m, o))) got4.insert(l);
  }
  EXPECT_TRUE(got.count("%1=subtract(P0,P1) %2=abs(%1) ROOT=%2"));
  ASSERT_FALSE(got4.empty());
  EXPECT_TRUE(
      got4.count("%1=constant() %2=reduce(P0,%1) %3=subtract(P1,%2) "
                 "%4=abs(%3) ROOT=%4"))
      << *got4.begin();
}

TEST(ExtractTest, ReduceKeepsItsReducer) {
  auto m = Parse(R"(
HloModule red
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY e {
  p = f32[8,4] parameter(0)
  a = f32[8,4] exponential(p)
  zero = f32[] constant(0)
  r = f32[8] reduce(a, zero), dimensions={1}, to_apply=sum
  ROOT n = f32[8] negate(r)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<ExtractedSubgraph> subs = Extract(*m, Sizes(4, 4));
  ASSERT_EQ(subs.size(), 1u);
  const Module& s = *subs[0].module;
  EXPECT_EQ(Listing(s),
            "%1=exponential(P0) %2=constant() %3=reduce(%1,%2) %4=negate(%3) "
            "ROOT=%4");
  const Instruction* reduce =
      s.entry_computation()->root_instruction()->operand(0);
  ASSERT_EQ(reduce->opcode(), Opcode::kReduce);
  const Computation* reducer = reduce->to_apply();
  ASSERT_NE(reducer, nullptr);
  // The reducer is a copy owned by the new module, not the original.
  EXPECT_EQ(reducer->parent(), &s);
  EXPECT_EQ(s.FindComputation("sum"), reducer);
  EXPECT_NE(reducer, m->FindComputation("sum"));
  EXPECT_EQ(reducer->root_instruction()->opcode(), Opcode::kAdd);
  EXPECT_EQ(s.computation_count(), 2);
  // The reducer itself is never a source: nothing has its name.
  for (const ExtractedSubgraph& x : Extract(*m, Sizes(1, 1))) {
    EXPECT_NE(x.source_computation, "sum");
  }
}

constexpr char kWhile[] = R"(
HloModule loop
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[4] get-tuple-element(s), index=1
  a = f32[4] negate(x)
  b = f32[4] exponential(a)
  c = f32[4] tanh(b)
  d = f32[4] multiply(c, x)
  ROOT t = (s32[], f32[4]) tuple(j, d)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";

TEST(ExtractTest, WhileBodiesAreSourcesAndCutAtGetTupleElement) {
  auto m = Parse(kWhile);
  ASSERT_NE(m, nullptr);
  std::vector<ExtractedSubgraph> subs = Extract(*m, Sizes(4, 4));
  ASSERT_FALSE(subs.empty());
  bool whole_chain = false;
  for (const ExtractedSubgraph& s : subs) {
    // The entry and the condition have fewer than 4 instructions.
    EXPECT_EQ(s.source_computation, "body");
    for (const Instruction* p :
         s.module->entry_computation()->parameter_instructions()) {
      EXPECT_TRUE(p->shape().IsArray()) << PrintModule(*s.module);
    }
    whole_chain |= Listing(*s.module) ==
                   "%1=negate(P0) %2=exponential(%1) %3=tanh(%2) "
                   "%4=multiply(%3,P0) ROOT=%4";
  }
  EXPECT_TRUE(whole_chain);
}

TEST(ExtractTest, WhileMembersKeepTheirComputations) {
  auto m = Parse(kWhile);
  ASSERT_NE(m, nullptr);
  // The entry without its parameter: z, w, r (init is a tuple: cut).
  std::vector<ExtractedSubgraph> subs = Extract(*m, Sizes(2, 2));
  const ExtractedSubgraph* found = nullptr;
  for (const ExtractedSubgraph& s : subs) {
    if (s.source_computation == "e") found = &s;
  }
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(Listing(*found->module),
            "%1=while(P0) %2=get-tuple-element(%1) ROOT=%2");
  const Instruction* w =
      found->module->entry_computation()->root_instruction()->operand(0);
  EXPECT_EQ(w->while_body(), found->module->FindComputation("body"));
  EXPECT_EQ(w->while_condition(), found->module->FindComputation("cond"));
  EXPECT_EQ(found->module->entry_computation()
                ->parameter_instruction(0)
                ->shape()
                .ToString(false),
            "(s32[], f32[4])");
}

TEST(ExtractTest, SideEffectsAndCustomCallsStayOut) {
  auto m = Parse(R"(
HloModule fx
ENTRY e {
  p = f32[4] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  a = f32[4] negate(p)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  b = f32[4] add(a, r)
  cc = f32[4] custom-call(b), custom_call_target="foo"
  c = f32[4] exponential(cc)
  ROOT d = f32[4] abs(c)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<ExtractedSubgraph> subs = Extract(*m, Sizes(2, 2));
  std::set<std::string> got = Listings(subs);
  EXPECT_EQ(got,
            (std::set<std::string>{"%1=negate(P0) %2=add(%1,P1) ROOT=%2",
                                   "%1=exponential(P0) %2=abs(%1) ROOT=%2"}));
  // Nothing of size 3 exists without them: every seed fails to grow.
  ExtractStats stats;
  EXPECT_TRUE(Extract(*m, Sizes(3, 3), &stats).empty());
  EXPECT_EQ(stats.attempts, 4);
  EXPECT_EQ(stats.too_small, 4);
}

TEST(ExtractTest, DuplicatesAreSkipped) {
  auto m = Parse(R"(
HloModule twins
ENTRY e {
  p = f32[4] parameter(0)
  a1 = f32[4] negate(p)
  b1 = f32[4] exponential(a1)
  a2 = f32[4] negate(p)
  b2 = f32[4] exponential(a2)
  ROOT t = (f32[4], f32[4]) tuple(b1, b2)
}
)");
  ASSERT_NE(m, nullptr);
  ExtractStats stats;
  std::vector<ExtractedSubgraph> subs = Extract(*m, Sizes(2, 2), &stats);
  ASSERT_EQ(subs.size(), 1u);
  EXPECT_EQ(Listing(*subs[0].module),
            "%1=negate(P0) %2=exponential(%1) ROOT=%2");
  EXPECT_EQ(stats.attempts, 4);
  EXPECT_EQ(stats.duplicates, 3);

  // Across modules of one extractor too.
  absl::StatusOr<SubgraphExtractor> ex = SubgraphExtractor::Create(Sizes(2, 2));
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(ex->Extract(*m).size(), 1u);
  EXPECT_TRUE(ex->Extract(*m).empty());
  EXPECT_EQ(ex->stats().duplicates, 7);
  EXPECT_EQ(ex->stats().modules, 2);
}

// A 60-instruction elementwise mesh: many distinct subgraphs.
std::string Mesh() {
  const char* ops[] = {"add", "multiply", "subtract", "maximum"};
  const char* unary[] = {"negate", "exponential", "tanh", "abs", "sine"};
  std::string t = "HloModule mesh\nENTRY e {\n";
  t += "  v0 = f32[8] parameter(0)\n  v1 = f32[8] parameter(1)\n";
  for (int i = 2; i < 62; ++i) {
    if (i % 3 == 0) {
      StrAppend(&t, "  v", i, " = f32[8] ", unary[i % 5], "(v", i - 1, ")\n");
    } else {
      StrAppend(&t, "  v", i, " = f32[8] ", ops[i % 4], "(v", i - 1, ", v",
                (i * 7) % (i - 1), ")\n");
    }
  }
  t += "  ROOT r = f32[8] negate(v61)\n}\n";
  return t;
}

std::vector<uint64_t> Hashes(const Module& m, uint64_t seed,
                             int64_t per_module) {
  ExtractOptions o = Sizes(5, 9);
  o.seed = seed;
  o.per_module_limit = per_module;
  std::vector<uint64_t> out;
  for (const ExtractedSubgraph& s : Extract(m, o)) out.push_back(s.hash);
  return out;
}

TEST(ExtractTest, SameSeedSameSubgraphs) {
  auto m = Parse(Mesh());
  ASSERT_NE(m, nullptr);
  std::vector<uint64_t> a = Hashes(*m, 7, 10);
  EXPECT_EQ(a.size(), 10u);
  EXPECT_EQ(a, Hashes(*m, 7, 10));
  // A re-parsed copy (new pointers, same graph) gives the same too.
  auto copy = Parse(PrintModule(*m));
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(a, Hashes(*copy, 7, 10));
  // Hashes are unique within a run.
  std::set<uint64_t> unique(a.begin(), a.end());
  EXPECT_EQ(unique.size(), a.size());
}

TEST(ExtractTest, DifferentSeedsUsuallyDiffer) {
  auto m = Parse(Mesh());
  ASSERT_NE(m, nullptr);
  std::vector<uint64_t> base = Hashes(*m, 1, 10);
  int differing = 0;
  for (uint64_t seed = 2; seed < 6; ++seed) {
    differing += Hashes(*m, seed, 10) != base;
  }
  EXPECT_GE(differing, 3);
}

TEST(ExtractTest, PerModuleAndTotalLimits) {
  auto m = Parse(Mesh());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Hashes(*m, 0, 3).size(), 3u);
  ExtractOptions o = Sizes(5, 9);
  o.limit = 4;
  o.per_module_limit = 3;
  absl::StatusOr<SubgraphExtractor> ex = SubgraphExtractor::Create(o);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(ex->Extract(*m).size(), 3u);
  auto other = Parse(kChain);
  EXPECT_EQ(ex->Extract(*other).size(), 0u);  // chain has nothing of 5..9
  EXPECT_EQ(ex->Extract(*m).size(), 1u);      // total limit 4 reached
  EXPECT_TRUE(ex->LimitReached());
  EXPECT_TRUE(ex->Extract(*m).empty());
}

TEST(ExtractTest, InterpreterAndCostFailuresAreCounted) {
  auto m = Parse(R"(
HloModule bad
forever {
  s = (f32[4]) parameter(0)
  ROOT t = pred[] constant(true)
}
step {
  s = (f32[4]) parameter(0)
  x = f32[4] get-tuple-element(s), index=0
  n = f32[4] negate(x)
  ROOT t = (f32[4]) tuple(n)
}
ENTRY e {
  p = (f32[4]) parameter(0)
  w = (f32[4]) while(p), condition=forever, body=step
  g = f32[4] get-tuple-element(w), index=0
  x = f32[4] exponential(g)
  q = f32[64,64] parameter(1)
  d = f32[64,64] dot(q, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = f32[64,64] negate(d)
  ROOT t = (f32[4], f32[64,64]) tuple(x, n)
}
)");
  ASSERT_NE(m, nullptr);
  ExtractStats stats;
  ExtractOptions o = Sizes(2, 2);
  o.time_limit_seconds = 5;
  o.max_while_iterations = 100;
  o.max_flops = 1e5;
  EXPECT_TRUE(Extract(*m, o, &stats).empty());
  // {w, g} loops forever; {d, n} is 2 * 64^3 flops.
  EXPECT_GE(stats.rejected_interpreter, 1);
  EXPECT_GE(stats.rejected_cost, 1);
  EXPECT_EQ(stats.rejected_verifier, 0);
  EXPECT_EQ(stats.extracted, 0);
  // The default budget lets the dot through.
  o.max_flops = ExtractOptions().max_flops;
  ExtractStats stats2;
  std::set<std::string> got = Listings(Extract(*m, o, &stats2));
  EXPECT_EQ(got,
            (std::set<std::string>{"%1=dot(P0,P0) %2=negate(%1) ROOT=%2"}));
}

TEST(ExtractTest, InvalidOptions) {
  auto m = Parse(kChain);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(ExtractSubgraphs(*m, Sizes(0, 3)).ok());
  EXPECT_FALSE(ExtractSubgraphs(*m, Sizes(4, 3)).ok());
  ExtractOptions o = Sizes(1, 3);
  o.limit = -1;
  EXPECT_FALSE(ExtractSubgraphs(*m, o).ok());
  EXPECT_TRUE(ExtractSubgraphs(*m, Sizes(3, 3)).ok());
}

}  // namespace
}  // namespace hlogym
