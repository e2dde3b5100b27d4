// Pending fusion bodies: a dry GeneralFusion run that defers candidate
// bodies must describe exactly the graph the eager run builds, and
// ApplyDecisions must end in exactly the same module.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/parallel.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/fusion_ops.h"
#include "hlogym/passes/general_fusion.h"
#include "hlogym/passes/pass.h"
#include "hlogym/passes/pass_test_util.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

using test::ParseAndVerify;
using test::ReadExample;

int64_t CountPending(const Module& m) {
  int64_t n = 0;
  for (const auto& c : m.computations()) {
    c->ForEachInstruction([&](Instruction* i) { n += i->has_pending_body(); });
  }
  return n;
}

// Runs up to `rounds` rounds of (dry general fusion, decisions, CSE, DCE)
// on two copies, one building candidate bodies at once and one deferring
// them, and checks that they stay the same graph. Decisions: `policy`
// ("first" or "random:SEED"). Returns the number of pending bodies seen.
int64_t CheckRounds(const Module& start, const std::string& policy,
                    int rounds) {
  std::unique_ptr<Module> eager = start.Clone();
  std::unique_ptr<Module> lazy = start.Clone();
  auto decide = DecisionPolicy::Parse(policy);
  EXPECT_TRUE(decide.ok());
  int64_t pending_seen = 0;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE(StrCat("round ", round, ", policy ", policy));
    GeneralFusion pass_a, pass_b;
    absl::StatusOr<AugmentStats> a = pass_a.RunDry(eager.get());
    absl::StatusOr<AugmentStats> b;
    {
      DeferFusionBodies defer(lazy.get());
      b = pass_b.RunDry(lazy.get());
    }
    EXPECT_TRUE(a.ok()) << a.status();
    EXPECT_TRUE(b.ok()) << b.status();
    if (!a.ok() || !b.ok()) return pending_seen;
    EXPECT_EQ(a->alternatives, b->alternatives);
    EXPECT_EQ(a->candidates, b->candidates);
    EXPECT_EQ(a->rejected_cyclic, b->rejected_cyclic);
    EXPECT_EQ(CountPending(*eager), 0);
    const int64_t pending = CountPending(*lazy);
    pending_seen += pending;
    std::vector<Instruction*> nodes_a = AlternativeNodes(*eager);
    std::vector<Instruction*> nodes_b = AlternativeNodes(*lazy);
    EXPECT_EQ(nodes_a.size(), nodes_b.size());
    if (nodes_a.size() != nodes_b.size()) return pending_seen;
    if (nodes_a.empty()) break;

    // A copy of the paused lazy module (pending plans are cloned with it),
    // with every body built: the eager graph, and the same node order.
    std::unique_ptr<Module> built = lazy->Clone();
    EXPECT_EQ(CountPending(*built), pending);
    absl::Status s = BuildPendingFusionBodies(built.get());
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(CountPending(*built), 0);
    EXPECT_EQ(DagHash(*built), DagHash(*eager));
    std::vector<Instruction*> nodes_built = AlternativeNodes(*built);
    EXPECT_EQ(nodes_built.size(), nodes_b.size());
    if (nodes_built.size() != nodes_b.size()) return pending_seen;
    for (size_t j = 0; j < nodes_b.size(); ++j) {
      EXPECT_EQ(nodes_built[j]->name(), nodes_b[j]->name());
      EXPECT_EQ(nodes_a[j]->operand_count(), nodes_b[j]->operand_count());
      // Three levels: the node, its candidates and their operands (whole
      // cones would make the check quadratic).
      EXPECT_EQ(InstructionHash(*nodes_a[j], 3),
                InstructionHash(*nodes_built[j], 3))
          << nodes_a[j]->name();
    }
    EXPECT_TRUE(VerifyModule(*built).ok());

    std::vector<int64_t> decisions = decide->Decide(nodes_a);
    absl::StatusOr<ApplyStats> ra = ApplyDecisions(eager.get(), decisions);
    absl::StatusOr<ApplyStats> rb = ApplyDecisions(lazy.get(), decisions);
    EXPECT_TRUE(ra.ok()) << ra.status();
    EXPECT_TRUE(rb.ok()) << rb.status();
    if (!ra.ok() || !rb.ok()) return pending_seen;
    // (Removed computations differ: unbuilt bodies were never added.)
    EXPECT_EQ(ra->removed_instructions, rb->removed_instructions);
    EXPECT_EQ(ra->removed_fusion_parameters, rb->removed_fusion_parameters);
    EXPECT_EQ(ra->changed, rb->changed);
    EXPECT_EQ(ra->non_original, rb->non_original);
    EXPECT_EQ(CountPending(*lazy), 0);
    EXPECT_EQ(DagHash(*eager), DagHash(*lazy));
    absl::Status v = VerifyModule(*lazy);
    EXPECT_TRUE(v.ok()) << v;
    // The printed module parses back to the same graph.
    absl::StatusOr<std::unique_ptr<Module>> reparsed =
        ParseModule(PrintModule(*lazy));
    EXPECT_TRUE(reparsed.ok()) << reparsed.status();
    if (reparsed.ok()) {
      EXPECT_EQ(DagHash(**reparsed), DagHash(*lazy));
    }
    for (Module* m : {eager.get(), lazy.get()}) {
      for (const char* name : {"hlo-cse", "hlo-dce"}) {
        auto p = PassRegistry::Global().Create(name);
        EXPECT_TRUE(p.ok() && (*p)->Run(m).ok()) << name;
      }
    }
    EXPECT_EQ(DagHash(*eager), DagHash(*lazy));
  }
  return pending_seen;
}

TEST(PendingFusionBodies, ExamplesMatchEagerBodies) {
  for (const char* name :
       {"transformer_encoder.hlo", "cartpole_step.hlo", "cartpole_scan.hlo"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Module> m = ParseAndVerify(ReadExample(name));
    ASSERT_NE(m, nullptr);
    for (const char* policy : {"first", "random:3", "random:11"}) {
      EXPECT_GT(CheckRounds(*m, policy, 8), 0);
    }
  }
}

// Members whose results are only partly used: a multi-output fusion
// producer with a tuple root (only one output read by the consumer), a
// fusion whose body leaves a parameter unread, a tuple-shaped plain
// member (variadic reduce), and a value read twice by one consumer.
TEST(PendingFusionBodies, PartlyUsedMembersMatchEagerBodies) {
  constexpr std::string_view kText = R"(
HloModule partly_used
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add2 {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  sum0 = f32[] add(a0, b0)
  sum1 = f32[] add(a1, b1)
  ROOT t = (f32[], f32[]) tuple(sum0, sum1)
}
mof_body {
  p0 = f32[128] parameter(0)
  p1 = f32[128] parameter(1)
  p2 = f32[128] parameter(2)
  e = f32[128] exponential(p0)
  n = f32[128] negate(p1)
  ROOT t = (f32[128], f32[128]) tuple(e, n)
}
unread_body {
  q0 = f32[128] parameter(0)
  q1 = f32[128] parameter(1)
  ROOT l = f32[128] log(q0)
}
ENTRY main {
  x = f32[128] parameter(0)
  y = f32[128] parameter(1)
  z = f32[128] parameter(2)
  mof = (f32[128], f32[128]) fusion(x, y, z), kind=kLoop, calls=mof_body
  g0 = f32[128] get-tuple-element(mof), index=0
  g1 = f32[128] get-tuple-element(mof), index=1
  m0 = f32[128] multiply(g0, g0)
  un = f32[128] fusion(m0, z), kind=kLoop, calls=unread_body
  c0 = f32[] constant(0)
  r = (f32[], f32[]) reduce(un, g1, c0, c0), dimensions={0}, to_apply=add2
  r0 = f32[] get-tuple-element(r), index=0
  r1 = f32[] get-tuple-element(r), index=1
  b0 = f32[128] broadcast(r0), dimensions={}
  sum = f32[128] add(b0, un)
  t1 = f32[128] tanh(g1)
  out = f32[128] subtract(sum, t1)
  ROOT result = (f32[128], f32[], f32[128]) tuple(out, r1, g1)
}
)";
  std::unique_ptr<Module> m = ParseAndVerify(kText);
  ASSERT_NE(m, nullptr);
  EXPECT_GT(CheckRounds(*m, "first", 6), 0);
  for (int seed = 0; seed < 12; ++seed) {
    EXPECT_GT(CheckRounds(*m, StrCat("random:", seed), 6), 0);
  }
}

// ApplyDecisions builds a taken candidate even when its consumer is
// fused away by another decision of the same round only if the candidate
// survives; either way no pending body is left in the graph.
TEST(PendingFusionBodies, NoPendingBodySurvivesApply) {
  constexpr std::string_view kText = R"(
HloModule chain
ENTRY main {
  p = f32[64] parameter(0)
  a = f32[64] exponential(p)
  b = f32[64] negate(a)
  c = f32[64] tanh(b)
  ROOT d = f32[64] add(c, a)
}
)";
  std::unique_ptr<Module> m = ParseAndVerify(kText);
  ASSERT_NE(m, nullptr);
  for (int seed = 0; seed < 20; ++seed) {
    std::unique_ptr<Module> lazy = m->Clone();
    GeneralFusion pass;
    {
      DeferFusionBodies defer(lazy.get());
      ASSERT_TRUE(pass.RunDry(lazy.get()).ok());
    }
    ASSERT_GT(CountPending(*lazy), 0);
    std::vector<Instruction*> nodes = AlternativeNodes(*lazy);
    auto policy = DecisionPolicy::Parse(StrCat("random:", seed));
    ASSERT_TRUE(policy.ok());
    ASSERT_TRUE(ApplyDecisions(lazy.get(), policy->Decide(nodes)).ok());
    EXPECT_EQ(CountPending(*lazy), 0);
    EXPECT_TRUE(VerifyModule(*lazy).ok());
  }
}

// Many survivors are built on several threads: the module must come out
// exactly as a one-thread build makes it, names and unique ids included.
// Rounds after the first fuse fusions, whose bodies are inlined.
TEST(PendingFusionBodies, ParallelBuildIsTheSerialBuild) {
  // (Names avoid type names such as c64.)
  std::string text = "HloModule many_chains\nENTRY main {\n";
  std::string root = "  ROOT out = (";
  std::string root_operands;
  constexpr int kChains = 160;
  for (int i = 0; i < kChains; ++i) {
    text += StrCat("  par", i, " = f32[", 64 + i, "] parameter(", i, ")\n");
    text += StrCat("  ex", i, " = f32[", 64 + i, "] exponential(par", i, ")\n");
    text += StrCat("  ng", i, " = f32[", 64 + i, "] negate(ex", i, ")\n");
    text += StrCat("  th", i, " = f32[", 64 + i, "] tanh(ng", i, ")\n");
    text +=
        StrCat("  ad", i, " = f32[", 64 + i, "] add(th", i, ", ex", i, ")\n");
    root += StrCat(i > 0 ? ", " : "", "f32[", 64 + i, "]");
    root_operands += StrCat(i > 0 ? ", " : "", "ad", i);
  }
  text += root + ") tuple(" + root_operands + ")\n}\n";
  std::unique_ptr<Module> m = ParseAndVerify(text);
  ASSERT_NE(m, nullptr);
  for (const char* policy : {"first", "random:5"}) {
    SCOPED_TRACE(policy);
    std::unique_ptr<Module> serial = m->Clone();
    std::unique_ptr<Module> parallel = m->Clone();
    auto decide = DecisionPolicy::Parse(policy);
    ASSERT_TRUE(decide.ok());
    for (int round = 0; round < 3; ++round) {
      SCOPED_TRACE(StrCat("round ", round));
      std::vector<int64_t> decisions;
      for (Module* mod : {serial.get(), parallel.get()}) {
        GeneralFusion pass;
        DeferFusionBodies defer(mod);
        ASSERT_TRUE(pass.RunDry(mod).ok());
        ASSERT_GE(CountPending(*mod), kChains);
        decisions = decide->Decide(AlternativeNodes(*mod));
      }
      ASSERT_EQ(PrintModule(*serial), PrintModule(*parallel));
      SetParallelism(1);
      absl::StatusOr<ApplyStats> a = ApplyDecisions(serial.get(), decisions);
      SetParallelism(4);
      absl::StatusOr<ApplyStats> b = ApplyDecisions(parallel.get(), decisions);
      SetParallelism(0);
      ASSERT_TRUE(a.ok()) << a.status();
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_EQ(CountPending(*parallel), 0);
      int64_t fusions = 0;
      parallel->entry_computation()->ForEachInstruction(
          [&](Instruction* i) { fusions += i->opcode() == Opcode::kFusion; });
      EXPECT_GE(fusions, kChains);  // enough to take the parallel path
      EXPECT_EQ(PrintModule(*serial), PrintModule(*parallel));
      // Unique ids match too.
      std::vector<int64_t> ids[2];
      for (int k = 0; k < 2; ++k) {
        for (const auto& c : (k == 0 ? serial : parallel)->computations()) {
          c->ForEachInstruction(
              [&](Instruction* i) { ids[k].push_back(i->unique_id()); });
        }
      }
      EXPECT_EQ(ids[0], ids[1]);
      for (Module* mod : {serial.get(), parallel.get()}) {
        EXPECT_TRUE(VerifyModule(*mod).ok());
        for (const char* name : {"hlo-cse", "hlo-dce"}) {
          auto p = PassRegistry::Global().Create(name);
          ASSERT_TRUE(p.ok() && (*p)->Run(mod).ok()) << name;
        }
      }
    }
  }
}

// Without the module's consent (the default), a dry run builds bodies.
TEST(PendingFusionBodies, OffUnlessTheModuleAllowsIt) {
  std::unique_ptr<Module> m =
      ParseAndVerify(ReadExample("transformer_encoder.hlo"));
  ASSERT_NE(m, nullptr);
  GeneralFusion pass;
  absl::StatusOr<AugmentStats> s = pass.RunDry(m.get());
  ASSERT_TRUE(s.ok());
  EXPECT_GT(s->alternatives, 0);
  EXPECT_EQ(CountPending(*m), 0);
  EXPECT_FALSE(HasPendingFusionBodies(*m));
}

}  // namespace
}  // namespace hlogym
