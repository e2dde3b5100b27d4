// WhileLoopInvariantCodeMotion, after XLA's pass of the same name.
//
// Hoists loop-invariant instructions out of while bodies: an instruction
// whose operands are all constants, already hoisted, or get-tuple-elements
// of the body parameter at indices the body passes through unchanged is
// computed once before the loop and its value is threaded through the loop
// state as a new element (the body reads it from there). As in XLA, loops
// with a trip count of at most 1, side-effecting instructions, parameters,
// after-all, instructions with control edges and bodies with domains are
// left alone, and constants, reshapes, bitcasts, broadcasts, iotas,
// reverses, slices, transposes and tuples are not hoisted on their own
// (only as operands of something worth hoisting).
#ifndef HLOGYM_PASSES_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
#define HLOGYM_PASSES_WHILE_LOOP_INVARIANT_CODE_MOTION_H_

#include <string>
#include <string_view>
#include <vector>

#include "hlogym/passes/pass.h"

namespace hlogym {

struct WhileLoopInvariantCodeMotionOptions {
  bool hoist_constants = false;  // constants alone are worth hoisting
  bool hoist_reshapes = false;   // reshapes alone are worth hoisting
  bool hoist_other = true;       // anything but constants and reshapes
};

class WhileLoopInvariantCodeMotion : public Pass {
 public:
  explicit WhileLoopInvariantCodeMotion(
      WhileLoopInvariantCodeMotionOptions options = {})
      : options_(options) {}
  std::string_view name() const override {
    return "while-loop-invariant-code-motion";
  }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

 private:
  WhileLoopInvariantCodeMotionOptions options_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
