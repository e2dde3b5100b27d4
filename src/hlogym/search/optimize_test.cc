#include "hlogym/search/optimize.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hlogym/env/test_modules.h"
#include "hlogym/text/parser.h"
#include "nlohmann/json.hpp"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

// The report carries f-MCTS's own statistics, in the text and the JSON,
// equal to what the search counted.
TEST(OptimizeReport, CarriesTheFmctsStatistics) {
  std::unique_ptr<Module> m = Parse(test::kSoftmaxRow);
  ASSERT_NE(m, nullptr);
  OptimizeOptions o;
  o.agent = "fmcts";
  o.agent_options.budget = 8;
  o.agent_options.mcts_min_budget = 4;
  o.agent_options.threads = 1;
  absl::StatusOr<OptimizeReport> r = Optimize(*m, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->fmcts.has_value());
  const FmctsStats& f = *r->fmcts;
  ASSERT_FALSE(f.simulations_per_step.empty());
  EXPECT_EQ(f.simulations_per_step[0], 8);
  for (size_t k = 1; k < f.simulations_per_step.size(); ++k) {
    EXPECT_EQ(f.simulations_per_step[k], 4);
  }
  // Five rollouts per expanded leaf, each at least one step.
  EXPECT_GT(f.rollouts, 0);
  EXPECT_EQ(f.rollouts % 5, 0);
  EXPECT_GE(f.rollout_steps, f.rollouts);
  EXPECT_EQ(f.tree_states, r->states_visited);
  EXPECT_GT(f.committed_seconds, 0);

  const nlohmann::json j = nlohmann::json::parse(r->ToJson());
  ASSERT_TRUE(j.contains("fmcts"));
  const nlohmann::json& jf = j["fmcts"];
  EXPECT_EQ(jf["commits"].get<int64_t>(),
            static_cast<int64_t>(f.simulations_per_step.size()));
  EXPECT_EQ(jf["simulations_per_commit"].get<std::vector<int64_t>>(),
            f.simulations_per_step);
  EXPECT_EQ(jf["rollouts"].get<int64_t>(), f.rollouts);
  EXPECT_EQ(jf["rollout_steps"].get<int64_t>(), f.rollout_steps);
  EXPECT_EQ(jf["tree_states"].get<int64_t>(), f.tree_states);
  EXPECT_EQ(jf["merged_edges"].get<int64_t>(), f.merged_edges);
  EXPECT_EQ(jf["commit_returns"].get<int64_t>(), f.commit_returns);
  EXPECT_EQ(jf["commit_cycles"].get<int64_t>(), f.commit_cycles);
  EXPECT_EQ(jf["committed_seconds"].get<double>(), f.committed_seconds);

  const std::string text = r->ToText();
  int64_t simulations = 0;
  for (int64_t n : f.simulations_per_step) simulations += n;
  const std::string line =
      "f-MCTS:      " + std::to_string(f.simulations_per_step.size()) +
      " commits, " + std::to_string(simulations) + " simulations, " +
      std::to_string(f.rollouts) + " rollouts (" +
      std::to_string(f.rollout_steps) + " steps), ";
  EXPECT_NE(text.find(line), std::string::npos) << text;
}

TEST(OptimizeReport, OtherAgentsHaveNoFmctsStatistics) {
  std::unique_ptr<Module> m = Parse(test::kSoftmaxRow);
  ASSERT_NE(m, nullptr);
  OptimizeOptions o;
  o.agent = "pick-first";
  absl::StatusOr<OptimizeReport> r = Optimize(*m, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->fmcts.has_value());
  EXPECT_FALSE(nlohmann::json::parse(r->ToJson()).contains("fmcts"));
  EXPECT_EQ(r->ToText().find("f-MCTS:"), std::string::npos);
}

}  // namespace
}  // namespace hlogym
