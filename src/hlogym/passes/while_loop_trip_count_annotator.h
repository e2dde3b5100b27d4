// Records the trip count of while loops whose count can be derived (an
// induction variable compared with a constant) in the loop's backend config
// ({"known_trip_count":{"n":"N"}}), as XLA's GPU pipeline does before
// fusion: once the condition is fused the pattern is no longer visible, and
// the cost model reads the annotation.
#ifndef HLOGYM_PASSES_WHILE_LOOP_TRIP_COUNT_ANNOTATOR_H_
#define HLOGYM_PASSES_WHILE_LOOP_TRIP_COUNT_ANNOTATOR_H_

#include <string_view>

#include "hlogym/passes/pass.h"

namespace hlogym {

class WhileLoopTripCountAnnotator : public Pass {
 public:
  std::string_view name() const override {
    return "while-loop-trip-count-annotator";
  }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_TRIP_COUNT_ANNOTATOR_H_
