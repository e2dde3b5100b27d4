#include "hlogym/search/agent.h"

#include <utility>

#include "hlogym/ir/str_util.h"
#include "hlogym/search/beam_search.h"
#include "hlogym/search/fmcts.h"
#include "hlogym/search/simple_agents.h"

namespace hlogym {

std::vector<std::string> AgentNames() {
  return {"pick-first", "random", "greedy", "beam", "fmcts"};
}

absl::StatusOr<std::unique_ptr<Agent>> CreateAgent(std::string_view name,
                                                   AgentOptions options) {
  if (name == "pick-first") {
    return std::make_unique<PickFirstAgent>(std::move(options));
  }
  if (name == "random") {
    return std::make_unique<RandomAgent>(std::move(options));
  }
  if (name == "greedy") {
    return std::make_unique<GreedyAgent>(std::move(options));
  }
  if (name == "beam") {
    return std::make_unique<BeamSearchAgent>(std::move(options));
  }
  if (name == "fmcts") return MakeFmctsAgent(std::move(options));
  std::string known;
  for (const std::string& n : AgentNames()) {
    StrAppend(&known, known.empty() ? "" : ", ", n);
  }
  return absl::NotFoundError(
      StrCat("unknown agent '", name, "' (agents: ", known, ")"));
}

}  // namespace hlogym
