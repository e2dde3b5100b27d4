#include "hlogym/passes/general_fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "hlogym/cost/evaluator.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/hlo_cse.h"
#include "hlogym/passes/hlo_dce.h"
#include "hlogym/passes/pass_test_util.h"
#include "hlogym/passes/pipelines.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

using test::ExpectSameOutputs;
using test::ParseAndVerify;
using test::ReadExample;
using test::Text;

int64_t CountOpcode(const Computation& c, Opcode op) {
  int64_t n = 0;
  c.ForEachInstruction([&](const Instruction* i) { n += i->opcode() == op; });
  return n;
}

// Dry run: returns the augmented module and its statistics.
using Options = std::vector<std::pair<std::string, std::string>>;

std::pair<std::unique_ptr<Module>, AugmentStats> Augment(
    std::string_view text, const Options& options = {}) {
  auto m = ParseAndVerify(text);
  GeneralFusion pass;
  for (const auto& [k, v] : options) EXPECT_TRUE(pass.SetOption(k, v).ok());
  absl::StatusOr<AugmentStats> stats = pass.RunDry(m.get());
  EXPECT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m) << Text(*m);
  return {std::move(m), stats.value_or(AugmentStats{})};
}

TEST(GeneralFusion, ChainOffersTheOneFusion) {
  constexpr std::string_view kText = R"(
HloModule chain
ENTRY main {
  p0 = f32[64] parameter(0)
  p1 = f32[64] parameter(1)
  e = f32[64] exponential(p0)
  ROOT a = f32[64] add(e, p1)
}
)";
  test::RewriteResult r;
  GeneralFusion pass;
  r = test::ExpectRewrite(pass, kText);
  EXPECT_EQ(r.dry.alternatives, 1);
  EXPECT_EQ(r.dry.candidates, 1);
  const Instruction* root = test::Root(*r.applied);
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(root->fused_computation()->root_instruction()->opcode(),
            Opcode::kAdd);
}

// e read by a and n: producer-consumer and sibling candidates.
constexpr std::string_view kShared = R"(
HloModule shared
ENTRY main {
  p0 = f32[64] parameter(0)
  p1 = f32[64] parameter(1)
  e = f32[64] exponential(p0)
  a = f32[64] add(e, p1)
  n = f32[64] negate(e)
  ROOT t = (f32[64], f32[64]) tuple(a, n)
}
)";

TEST(GeneralFusion, SharedProducerGivesMultiOutputCandidates) {
  // Producer-consumer candidates only (the GeneralFusionSiblings tests
  // adds the sibling fusion of a and n).
  auto [m, stats] = Augment(kShared, {{"siblings", "false"}});
  // (e into a): a's use by t and e's use by n; (e into n): the other two.
  EXPECT_EQ(stats.alternatives, 4);
  EXPECT_EQ(stats.candidates, 4);
  EXPECT_EQ(stats.rejected_cyclic, 0);
  // Both candidates are multi-output fusions (no duplication).
  int64_t mof = 0;
  for (const auto& c : m->computations()) {
    c->ForEachInstruction([&](const Instruction* i) {
      if (i->opcode() == Opcode::kFusion) {
        EXPECT_EQ(i->shape().tuple_shapes_size(), 2) << i->name();
        ++mof;
      }
    });
  }
  EXPECT_EQ(mof, 2);
  // Pick-first computes the same outputs.
  auto original = ParseAndVerify(kShared);
  std::vector<int64_t> first(AlternativeNodes(*m).size(), 1);
  ASSERT_TRUE(ApplyDecisions(m.get(), first).ok());
  ASSERT_TRUE(VerifyModule(*m).ok()) << Text(*m);
  ExpectSameOutputs(*original, *m);
}

// e keeps another reader (n) and has r's shape, so fusing e into r would
// be a multi-output fusion; a reverse cannot be a multi-output root, so the
// reference pass offers nothing for the pair (it does not duplicate e).
constexpr std::string_view kReverseReader = R"(
HloModule reverse_reader
ENTRY main {
  p0 = f32[64] parameter(0)
  e = f32[64] exponential(p0)
  r = f32[64] reverse(e), dimensions={0}
  n = f32[64] negate(e)
  ROOT t = (f32[64], f32[64]) tuple(r, n)
}
)";

TEST(GeneralFusion, MultiOutputCandidatesNeedAMultiOutputRoot) {
  auto [m, stats] = Augment(kReverseReader, {{"siblings", "false"}});
  // Only (e into n): n's use by t and e's use by r.
  EXPECT_EQ(stats.alternatives, 2);
  EXPECT_EQ(stats.candidates, 2);
  const Instruction* r = m->entry_computation()->FindInstruction("r");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->operand(0)->opcode(), Opcode::kAlternatives);
  EXPECT_EQ(r->users()[0]->opcode(), Opcode::kTuple);  // no candidate for r
  // The pair itself is legal: without the other reader, e fuses into r.
  auto single = ParseAndVerify(R"(
HloModule reverse_only
ENTRY main {
  p0 = f32[64] parameter(0)
  e = f32[64] exponential(p0)
  ROOT r = f32[64] reverse(e), dimensions={0}
}
)");
  EXPECT_TRUE(
      GeneralFusion::Legal(*single->entry_computation()->FindInstruction("e"),
                           *single->entry_computation()->FindInstruction("r")));
  GeneralFusion pass;
  absl::StatusOr<AugmentStats> one = pass.RunDry(single.get());
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->alternatives, 1);
  EXPECT_EQ(one->candidates, 1);
}

// The same with a copy producer: a copy may not become an extra output
// (it transposes physically), while n may be a multi-output root.
TEST(GeneralFusion, PhysicallyTransposingProducersAreNotExtraOutputs) {
  constexpr std::string_view kText = R"(
HloModule copy_producer
ENTRY main {
  p0 = f32[8,8]{1,0} parameter(0)
  c = f32[8,8]{0,1} copy(p0)
  n = f32[8,8]{0,1} negate(c)
  m = f32[8,8]{0,1} exponential(c)
  ROOT t = (f32[8,8]{0,1}, f32[8,8]{0,1}) tuple(n, m)
}
)";
  auto [m, stats] = Augment(kText, {{"siblings", "false"}});
  EXPECT_EQ(stats.alternatives, 0);
  EXPECT_EQ(stats.candidates, 0);
}

TEST(GeneralFusion, NoCandidateThatWouldCloseACycle) {
  constexpr std::string_view kText = R"(
HloModule cycle
ENTRY main {
  p0 = f32[64] parameter(0)
  e = f32[64] exponential(p0)
  n = f32[64] negate(e)
  ROOT a = f32[64] add(e, n)
}
)";
  auto [m, stats] = Augment(kText);
  // (n into a) at a's root use; (e into n) as multi-output: n's use by a and
  // e's use by a. (e into a) is not offered: e reaches n, a's other operand.
  EXPECT_EQ(stats.alternatives, 3);
  EXPECT_EQ(stats.candidates, 3);
  EXPECT_EQ(stats.rejected_cyclic, 0);
}

TEST(GeneralFusion, NeverFusesParametersCustomCallsOrSideEffects) {
  constexpr std::string_view kText = R"(
HloModule illegal
ENTRY main {
  p0 = f32[64] parameter(0)
  c = f32[64] custom-call(p0), custom_call_target="my_kernel"
  e = f32[64] exponential(c)
  z = f32[] constant(0)
  o = f32[] constant(1)
  r = f32[64] rng(z, o), distribution=rng_uniform
  n = f32[64] negate(r)
  ROOT a = (f32[64], f32[64]) tuple(e, n)
}
)";
  auto [m, stats] = Augment(kText);
  EXPECT_EQ(stats.alternatives, 0);
  EXPECT_FALSE(
      GeneralFusion::Legal(*m->entry_computation()->FindInstruction("c"),
                           *m->entry_computation()->FindInstruction("e")));
}

// As XLA: only effectively scalar constants fuse, and only into fusions.
TEST(GeneralFusion, ConstantsFuseOnlyAsScalarsIntoFusions) {
  constexpr std::string_view kText = R"(
HloModule constants
fused {
  q0 = f32[4] parameter(0)
  q1 = f32[] parameter(1)
  qb = f32[4] broadcast(q1), dimensions={}
  ROOT qa = f32[4] add(q0, qb)
}
ENTRY main {
  p0 = f32[4] parameter(0)
  big = f32[4] constant({1, 2, 3, 4})
  s = f32[] constant(2)
  m = f32[4] multiply(p0, big)
  b = f32[4] broadcast(s), dimensions={}
  f = f32[4] fusion(m, s), kind=kLoop, calls=fused
  ROOT t = (f32[4], f32[4]) tuple(f, b)
}
)";
  auto m = ParseAndVerify(kText);
  const Computation& e = *m->entry_computation();
  EXPECT_FALSE(
      GeneralFusion::Legal(*e.FindInstruction("big"), *e.FindInstruction("m")));
  EXPECT_FALSE(
      GeneralFusion::Legal(*e.FindInstruction("s"), *e.FindInstruction("b")));
  EXPECT_TRUE(
      GeneralFusion::Legal(*e.FindInstruction("s"), *e.FindInstruction("f")));
}

// A consumer with 60 distinct operands and a producer with 40 more: over the
// 96 operands-and-outputs budget.
TEST(GeneralFusion, RespectsTheOperandBudget) {
  std::ostringstream text;
  text << "HloModule budget\nENTRY main {\n";
  for (int i = 0; i < 100; ++i) {
    text << "  p" << i << " = f32[8] parameter(" << i << ")\n";
  }
  // Producer: sum of p60..p99 as one concatenate.
  text << "  prod = f32[320] concatenate(";
  for (int i = 60; i < 100; ++i) text << (i > 60 ? ", " : "") << "p" << i;
  text << "), dimensions={0}\n";
  text << "  cons = f32[800] concatenate(";
  for (int i = 0; i < 60; ++i) text << (i > 0 ? ", " : "") << "p" << i;
  text << ", prod), dimensions={0}\n";
  text << "  ROOT n = f32[800] negate(cons)\n}\n";
  auto m = ParseAndVerify(text.str());
  const Computation& e = *m->entry_computation();
  EXPECT_FALSE(GeneralFusion::Legal(*e.FindInstruction("prod"),
                                    *e.FindInstruction("cons")));
  EXPECT_TRUE(GeneralFusion::Legal(*e.FindInstruction("cons"),
                                   *e.FindInstruction("n")));
  GeneralFusion pass;
  absl::StatusOr<AugmentStats> stats = pass.RunDry(m.get());
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->alternatives, 1);  // cons into n only
}

// A computation nothing calls is dead: no candidate is offered in it (it
// would never be pruned, and each round would grow it), and the decision
// loop converges with it left as it is.
TEST(GeneralFusion, DeadComputationsAreLeftAlone) {
  constexpr std::string_view kText = R"(
HloModule dead_computation
unused {
  q0 = f32[64] parameter(0)
  q1 = f32[64] parameter(1)
  x = f32[64] exponential(q0)
  y = f32[64] multiply(x, q1)
  ROOT z = f32[64] add(y, x)
}
ENTRY main {
  p = f32[64] parameter(0)
  n = f32[64] negate(p)
  ROOT s = f32[64] sqrt(n)
}
)";
  auto [m, stats] = Augment(kText);
  EXPECT_EQ(stats.alternatives, 1);  // n into s, in the entry only
  const Computation* unused = m->FindComputation("unused");
  ASSERT_NE(unused, nullptr);
  EXPECT_EQ(CountOpcode(*unused, Opcode::kAlternatives), 0);
  EXPECT_EQ(unused->instruction_count(), 5);

  auto loop = ParseAndVerify(kText);
  GeneralFusion gf;
  int64_t rounds = 0;
  for (; rounds < 10; ++rounds) {
    absl::StatusOr<AugmentStats> s = gf.RunDry(loop.get());
    ASSERT_TRUE(s.ok()) << s.status();
    if (s->alternatives == 0) break;
    std::vector<int64_t> first(AlternativeNodes(*loop).size(), 1);
    ASSERT_TRUE(ApplyDecisions(loop.get(), first).ok());
  }
  EXPECT_EQ(rounds, 1);
  EXPECT_EQ(loop->FindComputation("unused")->instruction_count(), 5);
}

// The decision loop with pick-first, CSE and DCE between rounds, until no
// alternative is left or a round ends where it began (as the pipeline's
// decision loop stops): equal outputs, fewer kernels, a modelled time no
// worse than unfused.
TEST(GeneralFusion, LoopConvergesOnTheTransformerLayer) {
  std::string text = ReadExample("transformer_encoder.hlo");
  ASSERT_FALSE(text.empty());
  auto original = ParseAndVerify(text);
  auto m = original->Clone();
  GeneralFusion gf;
  HloCse cse;
  HloDce dce;
  int64_t rounds = 0;
  int64_t unchanged_rounds = 0;
  bool converged = false;
  while (rounds < 100) {
    const uint64_t start = DagHash(*m);
    absl::StatusOr<AugmentStats> stats = gf.RunDry(m.get());
    ASSERT_TRUE(stats.ok()) << stats.status();
    if (stats->alternatives == 0) {
      converged = true;
      break;
    }
    ++rounds;
    std::vector<int64_t> first(AlternativeNodes(*m).size(), 1);
    ASSERT_TRUE(ApplyDecisions(m.get(), first).ok());
    ASSERT_TRUE(cse.Run(m.get()).ok());
    ASSERT_TRUE(dce.Run(m.get()).ok());
    ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m) << Text(*m);
    if (DagHash(*m) == start) {
      ++unchanged_rounds;
      break;
    }
  }
  // Pick-first converges in 12 rounds. (When CSE compared fused bodies in
  // the order they list their instructions, equal fusions built in
  // different rounds stayed apart, and the run ended after 13 rounds with
  // one that undid itself.)
  EXPECT_TRUE(converged);
  EXPECT_EQ(unchanged_rounds, 0);
  EXPECT_EQ(rounds, 12);
  ExpectSameOutputs(*original, *m);
  auto eval = CreateEvaluator("model:h100");
  ASSERT_TRUE(eval.ok());
  auto before = (*eval)->Evaluate(*original);
  auto after = (*eval)->Evaluate(*m);
  ASSERT_TRUE(before.ok() && after.ok());
  std::cout << "transformer layer: " << rounds << " rounds, kernels "
            << before->kernel_count << " -> " << after->kernel_count
            << ", modelled " << before->total_seconds * 1e6 << " us -> "
            << after->total_seconds * 1e6 << " us\n";
  EXPECT_LT(after->kernel_count, before->kernel_count / 2);
  EXPECT_LT(after->total_seconds, before->total_seconds);
  EXPECT_GT(CountOpcode(*m->entry_computation(), Opcode::kFusion), 0);
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

// True if the computation holds a concatenate read directly by a slice.
bool ConcatenateFeedsSlice(const Computation& c) {
  bool found = false;
  c.ForEachInstruction([&](const Instruction* i) {
    if (i->opcode() != Opcode::kConcatenate) return;
    for (const Instruction* u : i->users()) {
      if (u->opcode() == Opcode::kSlice) found = true;
    }
  });
  return found;
}

// The cart-pole scan of the fusion case study: under the legacy stack the
// multi-user concatenate that rebuilds the state is a kernel boundary (one
// kernel writes it, another reads it back); GeneralFusion offers the
// fusions that put it in the same kernel as the slices that read it.
TEST(GeneralFusion, CartPoleConcatenateBoundary) {
  std::string text = ReadExample("cartpole_scan.hlo");
  ASSERT_FALSE(text.empty());
  auto legacy = ParseAndVerify(text);
  ASSERT_TRUE(RunNamedPipeline(legacy.get(), "xla-gpu-legacy").ok());
  const Instruction* loop = nullptr;
  legacy->entry_computation()->ForEachInstruction([&](const Instruction* i) {
    if (i->opcode() == Opcode::kWhile) loop = i;
  });
  ASSERT_NE(loop, nullptr);
  const Computation* body = loop->while_body();
  // The kernel that writes the concatenate, and the one that reads it.
  const Instruction* writer = nullptr;
  body->ForEachInstruction([&](const Instruction* i) {
    if (i->opcode() != Opcode::kFusion) return;
    const Instruction* root = i->fused_computation()->root_instruction();
    for (const Instruction* o : root->operands()) {
      if (o->opcode() == Opcode::kConcatenate) writer = i;
    }
    if (root->opcode() == Opcode::kConcatenate) writer = i;
  });
  ASSERT_NE(writer, nullptr) << Text(*legacy);
  int64_t kernel_readers = 0;
  for (const Instruction* u : writer->users()) {
    for (const Instruction* w : u->users()) {
      kernel_readers += w->opcode() == Opcode::kFusion;
    }
    kernel_readers += u->opcode() == Opcode::kFusion;
  }
  EXPECT_GE(kernel_readers, 1) << "the concatenate is not a kernel boundary";
  // No legacy fusion has the concatenate next to the slices reading it.
  for (const auto& c : legacy->computations()) {
    if (c->IsFusionComputation()) {
      EXPECT_FALSE(ConcatenateFeedsSlice(*c));
    }
  }

  auto dry = ParseAndVerify(text);
  GeneralFusion pass;
  absl::StatusOr<AugmentStats> stats = pass.RunDry(dry.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  int64_t removing = 0;
  for (const Instruction* alt : AlternativeNodes(*dry)) {
    for (int64_t k = 1; k < alt->operand_count(); ++k) {
      const Instruction* cand = alt->operand(k);
      if (cand->opcode() == Opcode::kGetTupleElement) cand = cand->operand(0);
      if (cand->opcode() == Opcode::kFusion &&
          ConcatenateFeedsSlice(*cand->fused_computation())) {
        ++removing;
      }
    }
  }
  EXPECT_GE(removing, 2);
  std::cout << "cart-pole: " << removing
            << " candidates fuse the concatenate with a slice reading it\n";
}

}  // namespace
}  // namespace hlogym

// Sibling candidates: two readers of one value that do not reach each
// other, offered as one multi-output fusion.
namespace hlogym {
namespace {

// Tuple-shaped fusions without an exponential inside: in kShared, the
// sibling candidates (the producer-consumer ones fuse the exponential).
std::vector<const Instruction*> SiblingFusions(const Module& m) {
  std::vector<const Instruction*> out;
  m.entry_computation()->ForEachInstruction([&](const Instruction* i) {
    if (i->opcode() != Opcode::kFusion) return;
    bool has_exp = false;
    i->fused_computation()->ForEachInstruction(
        [&](const Instruction* f) { has_exp |= f->opcode() == Opcode::kExp; });
    if (!has_exp && i->shape().IsTuple()) out.push_back(i);
  });
  return out;
}

TEST(GeneralFusionSiblings, ReadersOfASharedValueBecomeOneCandidate) {
  auto [m, stats] = Augment(kShared);
  // Producer-consumer: e into a, e into n (4 candidates, one per use of a,
  // n and e). Sibling: a with n, offered at the root's uses of a and n.
  EXPECT_EQ(stats.alternatives, 4);
  EXPECT_EQ(stats.candidates, 6);
  EXPECT_EQ(stats.rejected_cyclic, 0);
  std::vector<const Instruction*> siblings = SiblingFusions(*m);
  ASSERT_EQ(siblings.size(), 1u) << Text(*m);
  const Instruction* s = siblings[0];
  EXPECT_EQ(s->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(s->shape().tuple_shapes_size(), 2);
  // e stays outside and is read once: the operands are e and p1.
  EXPECT_EQ(s->operand_count(), 2);
  const Instruction* root = s->fused_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), Opcode::kTuple);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kAdd);
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kNegate);

  // Take the sibling fusion at both uses by the root: two kernels remain
  // (the exponential and the sibling fusion), with the original outputs.
  auto original = ParseAndVerify(kShared);
  std::vector<Instruction*> nodes = AlternativeNodes(*m);
  std::vector<int64_t> decisions(nodes.size(), 0);
  int64_t taken = 0;
  for (size_t k = 0; k < nodes.size(); ++k) {
    for (int64_t i = 1; i < nodes[k]->operand_count(); ++i) {
      const Instruction* o = nodes[k]->operand(i);
      if (o->opcode() == Opcode::kGetTupleElement && o->operand(0) == s) {
        decisions[k] = i;
        ++taken;
      }
    }
  }
  EXPECT_EQ(taken, 2);
  ASSERT_TRUE(ApplyDecisions(m.get(), decisions).ok());
  ASSERT_TRUE(VerifyModule(*m).ok()) << Text(*m);
  ExpectSameOutputs(*original, *m);
  auto eval = CreateEvaluator("model:h100");
  ASSERT_TRUE(eval.ok());
  absl::StatusOr<EvaluationResult> before = (*eval)->Evaluate(*original);
  absl::StatusOr<EvaluationResult> after = (*eval)->Evaluate(*m);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(before->kernel_count, 3);
  EXPECT_EQ(after->kernel_count, 2);
}

// Five elementwise readers of a parameter: no producer-consumer candidate
// (parameters are never fused), only sibling pairs, each offered at the
// root's use of both members.
constexpr std::string_view kFiveReaders = R"(
HloModule five
ENTRY main {
  p0 = f32[64] parameter(0)
  r0 = f32[64] negate(p0)
  r1 = f32[64] exponential(p0)
  r2 = f32[64] abs(p0)
  r3 = f32[64] floor(p0)
  r4 = f32[64] sqrt(p0)
  ROOT t = (f32[64], f32[64], f32[64], f32[64], f32[64]) tuple(r0, r1, r2, r3, r4)
}
)";

TEST(GeneralFusionSiblings, PartnersLimitThePairs) {
  struct Case {
    Options options;
    int64_t pairs;
  };
  const Case cases[] = {
      // Each reader with the next one: (0,1) (1,2) (2,3) (3,4).
      {{}, 4},
      // With the next two: (0,1) (0,2) (1,2) (1,3) (2,3) (2,4) (3,4).
      {{{"sibling_partners", "2"}}, 7},
      {{{"sibling_partners", "0"}}, 10},  // every pair
      {{{"sibling_partners", "0"}, {"siblings", "false"}}, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pairs);
    auto [m, stats] = Augment(kFiveReaders, c.options);
    EXPECT_EQ(stats.candidates, 2 * c.pairs);
    EXPECT_EQ(stats.alternatives, c.pairs > 0 ? 5 : 0);
    int64_t fusions = 0;
    m->entry_computation()->ForEachInstruction([&](const Instruction* i) {
      fusions += i->opcode() == Opcode::kFusion;
    });
    EXPECT_EQ(fusions, c.pairs);
  }
}

TEST(GeneralFusionSiblings, OptionErrors) {
  GeneralFusion pass;
  for (const char* bad : {"-1", "x", ""}) {
    absl::Status s = pass.SetOption("sibling_partners", bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("must be a count"), std::string::npos) << s;
  }
  EXPECT_FALSE(pass.SetOption("siblings", "maybe").ok());
  EXPECT_EQ(pass.OptionNames(),
            (std::vector<std::string>{"siblings", "sibling_partners"}));
}

constexpr std::string_view kLegality = R"(
HloModule legality
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
loop_body {
  q = f32[64,256] parameter(0)
  ROOT n = f32[64,256] negate(q)
}
reduce_body {
  q = f32[64,256] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(q, z), dimensions={1}, to_apply=add_f32
}
ENTRY main {
  p0 = f32[64,256] parameter(0)
  z = f32[] constant(0)
  loop = f32[64,256] fusion(p0), kind=kLoop, calls=loop_body
  input = f32[64] fusion(p0), kind=kInput, calls=reduce_body
  reduce = f32[64] reduce(p0, z), dimensions={1}, to_apply=add_f32
  exp = f32[64,256] exponential(p0)
  less = pred[64,256] compare(p0, p0), direction=LT
  slice = f32[32,256] slice(p0), slice={[0:32], [0:256]}
  after = f32[64,256] add(exp, p0)
  call = f32[64,256] custom-call(p0), custom_call_target="foo"
  ROOT t = (f32[64,256], f32[64], f32[64], f32[64,256], pred[64,256], f32[32,256], f32[64,256], f32[64,256]) tuple(loop, input, reduce, exp, less, slice, after, call)
}
)";

TEST(GeneralFusionSiblings, LegalityRules) {
  auto m = ParseAndVerify(kLegality);
  auto get = [&](std::string_view name) {
    const Instruction* i = m->entry_computation()->FindInstruction(name);
    EXPECT_NE(i, nullptr) << name;
    return i;
  };
  auto legal = [&](std::string_view a, std::string_view b) {
    return GeneralFusion::LegalSiblings(*get(a), *get(b));
  };
  // Loop shapes equal ignoring the element type.
  EXPECT_TRUE(legal("exp", "less"));
  EXPECT_TRUE(legal("loop", "exp"));
  // A reduction and an elementwise op over its input share the loop.
  EXPECT_TRUE(legal("reduce", "exp")) << legal("reduce", "exp").reason;
  EXPECT_EQ(legal("loop", "input").reason, "the fusion kinds differ");
  EXPECT_EQ(legal("reduce", "loop").reason,
            "a reduction does not join a loop fusion");
  EXPECT_EQ(legal("loop", "reduce").reason,
            "a reduction does not join a loop fusion");
  EXPECT_FALSE(legal("exp", "slice"));  // [64,256] against [32,256]
  EXPECT_FALSE(legal("exp", "call"));   // custom-calls are never fused
  EXPECT_FALSE(legal("t", "exp"));      // nor are tuples

  // The dry run offers exactly the legal pairs of readers of p0 that do not
  // reach each other: `after` reads `exp`, so that pair is left out.
  GeneralFusion pass;
  ASSERT_TRUE(pass.SetOption("sibling_partners", "0").ok());
  absl::StatusOr<AugmentStats> stats = pass.RunDry(m.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(VerifyModule(*m).ok()) << Text(*m);
  std::vector<std::pair<std::string, std::string>> pairs;
  m->entry_computation()->ForEachInstruction([&](const Instruction* i) {
    if (i->opcode() != Opcode::kFusion || !i->shape().IsTuple()) return;
    const Instruction* root = i->fused_computation()->root_instruction();
    if (root->operand_count() != 2) return;
    // The producer-consumer candidate (exp into after) outputs both; its
    // consumer reads its producer inside the fusion.
    if (absl::c_linear_search(root->operand(1)->operands(), root->operand(0))) {
      return;
    }
    pairs.push_back({std::string(OpcodeName(root->operand(0)->opcode())),
                     std::string(OpcodeName(root->operand(1)->opcode()))});
  });
  std::sort(pairs.begin(), pairs.end());
  // Readers of p0 that may be multi-output roots, by unique id: loop,
  // input, reduce, exp, less, after (not the slice, nor the custom-call).
  // Legal pairs that do not reach each other, the lower id's output first:
  // every one but loop+input (kinds), loop+reduce (reduction and loop) and
  // exp+after (after reads exp).
  std::vector<std::pair<std::string, std::string>> expected = {
      {"negate", "exponential"},  {"negate", "compare"},
      {"negate", "add"},          {"reduce", "reduce"},
      {"reduce", "exponential"},  {"reduce", "compare"},
      {"reduce", "add"},          {"reduce", "exponential"},
      {"reduce", "compare"},      {"reduce", "add"},
      {"exponential", "compare"}, {"compare", "add"}};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(pairs, expected);
}

// The sibling step turns two kernels that only share an input into one:
// the producer-consumer pipeline cannot (horizontal fusion does not join
// outputs of different element types).
TEST(GeneralFusionSiblings, PipelineWithAndWithoutSiblings) {
  constexpr std::string_view kText = R"(
HloModule two_readers
ENTRY main {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  f = f32[1024] floor(p0)
  m = f32[1024] multiply(f, p1)
  c = pred[1024] compare(p0, p1), direction=LT
  ROOT t = (f32[1024], pred[1024]) tuple(m, c)
}
)";
  auto eval = CreateEvaluator("model:h100");
  ASSERT_TRUE(eval.ok());
  auto original = ParseAndVerify(kText);
  int64_t kernels[2] = {0, 0};
  const char* names[2] = {"general-fusion", "general-fusion-vertical"};
  for (int k = 0; k < 2; ++k) {
    SCOPED_TRACE(names[k]);
    auto m = ParseAndVerify(kText);
    PipelineRunOptions o;
    o.verify = true;
    absl::StatusOr<PipelineRunStats> stats =
        RunNamedPipeline(m.get(), names[k], o);
    ASSERT_TRUE(stats.ok()) << stats.status();
    ExpectSameOutputs(*original, *m);
    absl::StatusOr<EvaluationResult> r = (*eval)->Evaluate(*m);
    ASSERT_TRUE(r.ok());
    kernels[k] = r->kernel_count;
  }
  EXPECT_EQ(kernels[0], 1);
  EXPECT_EQ(kernels[1], 2);
}

}  // namespace
}  // namespace hlogym
