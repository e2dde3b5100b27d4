// Test helpers for passes (used by *_test.cc only).
//
// The central check, ExpectRewrite, runs a pass on a module three ways and
// compares them: apply mode (the module must verify and compute the same
// outputs as before on seeded inputs), and dry mode (the original graph
// must stay untouched until materialisation, at least one alternative must
// appear, choosing operand 0 everywhere must give back the original DagHash
// and choosing the first candidate everywhere must verify and compute the
// same outputs).
#ifndef HLOGYM_PASSES_PASS_TEST_UTIL_H_
#define HLOGYM_PASSES_PASS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "hlogym/eval/compare.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/algebraic_simplifier.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym::test {

// The text of a file ("" if missing).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text of a file in the project's examples/ folder ("" if missing).
inline std::string ReadExample(std::string_view name) {
  return ReadFile(std::string(HLOGYM_SOURCE_DIR) + "/examples/" +
                  std::string(name));
}

inline std::unique_ptr<Module> ParseAndVerify(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  absl::Status v = VerifyModule(**m);
  EXPECT_TRUE(v.ok()) << v;
  return std::move(*m);
}

inline std::string Text(const Module& m) {
  PrintOptions o = PrintOptions::Default();
  return PrintModule(m, o);
}

// Runs both modules on the same seeded inputs and expects equal outputs
// (per-type default tolerances; `tolerance` overrides for floats).
inline void ExpectSameOutputs(const Module& before, const Module& after,
                              uint64_t seed = 1,
                              std::optional<double> tolerance = {}) {
  auto inputs =
      GenerateInputs(ParameterShapes(*before.entry_computation()), seed);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  InterpreterOptions io;
  io.max_while_iterations = 10000;
  Interpreter a(io), b(io);
  absl::StatusOr<Literal> ra = a.Run(before, *inputs);
  ASSERT_TRUE(ra.ok()) << ra.status();
  absl::StatusOr<Literal> rb = b.Run(after, *inputs);
  ASSERT_TRUE(rb.ok()) << rb.status() << "\n" << Text(after);
  CompareOptions co;
  co.rtol = tolerance;
  co.atol = tolerance;
  CompareReport report = Compare(*rb, *ra, co);
  EXPECT_TRUE(report.ok) << report.ToString() << "\nbefore:\n"
                         << Text(before) << "\nafter:\n"
                         << Text(after);
}

struct RewriteResult {
  std::unique_ptr<Module> applied;  // after the apply-mode run
  bool changed = false;
  AugmentStats dry;  // the dry run's statistics
};

// Runs `pass` (apply mode, then dry mode on a fresh copy) on `text` and
// checks everything listed in the file comment. Set `check_outputs` false
// for modules the interpreter cannot run (e.g. collectives).
inline RewriteResult ExpectRewrite(Pass& pass, std::string_view text,
                                   bool check_outputs = true,
                                   std::optional<double> tolerance = {}) {
  RewriteResult result;
  std::unique_ptr<Module> original = ParseAndVerify(text);
  if (original == nullptr) return result;
  // Apply mode.
  std::unique_ptr<Module> applied = original->Clone();
  absl::StatusOr<bool> changed = pass.Run(applied.get());
  EXPECT_TRUE(changed.ok()) << changed.status();
  result.changed = changed.ok() && *changed;
  EXPECT_TRUE(result.changed) << "pass did not fire on:\n" << text;
  absl::Status v = VerifyModule(*applied);
  EXPECT_TRUE(v.ok()) << v << "\n" << Text(*applied);
  if (check_outputs && v.ok()) {
    ExpectSameOutputs(*original, *applied, 1, tolerance);
  }
  // Dry mode: the graph stays intact until materialisation.
  std::unique_ptr<Module> dry = original->Clone();
  const uint64_t hash = DagHash(*dry);
  {
    Rewriter rw(dry.get(), RewriteMode::kDry);
    absl::StatusOr<bool> proposed = pass.RunWith(dry.get(), rw);
    EXPECT_TRUE(proposed.ok()) << proposed.status();
    EXPECT_EQ(DagHash(*dry), hash) << "dry run touched the graph";
    absl::StatusOr<AugmentStats> stats = rw.Finish();
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (stats.ok()) result.dry = *stats;
  }
  EXPECT_GT(result.dry.alternatives, 0) << "dry run offered nothing";
  v = VerifyModule(*dry);
  EXPECT_TRUE(v.ok()) << v << "\n" << Text(*dry);
  // Operand 0 everywhere: the original graph.
  {
    std::unique_ptr<Module> keep = dry->Clone();
    std::vector<int64_t> zeros(AlternativeNodes(*keep).size(), 0);
    absl::StatusOr<ApplyStats> s = ApplyDecisions(keep.get(), zeros);
    EXPECT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(DagHash(*keep), hash) << Text(*keep);
  }
  // The first candidate everywhere.
  {
    std::unique_ptr<Module> first = dry->Clone();
    DecisionPolicy policy = DecisionPolicy::First();
    std::vector<int64_t> d = policy.Decide(AlternativeNodes(*first));
    absl::StatusOr<ApplyStats> s = ApplyDecisions(first.get(), d);
    EXPECT_TRUE(s.ok()) << s.status();
    v = VerifyModule(*first);
    EXPECT_TRUE(v.ok()) << v << "\n" << Text(*first);
    if (check_outputs && v.ok()) {
      ExpectSameOutputs(*original, *first, 1, tolerance);
    }
  }
  result.applied = std::move(applied);
  return result;
}

// Expects `pass` to leave `text` alone, in apply and dry mode.
inline void ExpectNoRewrite(Pass& pass, std::string_view text) {
  std::unique_ptr<Module> m = ParseAndVerify(text);
  if (m == nullptr) return;
  const uint64_t hash = DagHash(*m);
  std::unique_ptr<Module> dry = m->Clone();
  absl::StatusOr<bool> changed = pass.Run(m.get());
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(DagHash(*m), hash) << "pass rewrote:\n" << Text(*m);
  absl::StatusOr<AugmentStats> stats = pass.RunDry(dry.get());
  EXPECT_TRUE(stats.ok()) << stats.status();
  if (stats.ok()) {
    EXPECT_EQ(stats->alternatives, 0);
  }
}

// An AlgebraicSimplifier with only `rule` enabled.
inline std::unique_ptr<AlgebraicSimplifier> OnlyRule(
    std::string_view rule, AlgebraicSimplifierOptions options = {}) {
  auto pass = std::make_unique<AlgebraicSimplifier>(options);
  bool found = false;
  for (const RuleInfo& r : pass->rules()) {
    bool on = r.name == rule;
    found |= on;
    EXPECT_TRUE(pass->SetRuleEnabled(r.name, on).ok());
  }
  EXPECT_TRUE(found) << "no rule named " << rule;
  return pass;
}

// The root of the entry computation after a rewrite.
inline const Instruction* Root(const Module& m) {
  return m.entry_computation()->root_instruction();
}

}  // namespace hlogym::test

#endif  // HLOGYM_PASSES_PASS_TEST_UTIL_H_
