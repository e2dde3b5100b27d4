// Registration of the fusion passes.
#include <memory>

#include "hlogym/passes/general_fusion.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

void RegisterFusionPasses(PassRegistry& registry) {
  registry.Register(
      "general-fusion",
      "offers every legal producer-consumer fusion as an alternative "
      "(multi-output where the producer has other users); no heuristics",
      [] { return std::make_unique<GeneralFusion>(); });
}

}  // namespace hlogym
