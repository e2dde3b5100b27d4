// WhileLoopConstantSinking, after XLA's pass of the same name.
//
// A loop-state element that the body passes through unchanged and whose
// init is a constant holds that constant in every iteration: its uses in
// the body (other than passing it through) and in the condition read a
// copy of the constant instead, which later passes can fold. The loop
// state keeps the element (removing it is the while-loop-simplifier's
// job). The body and condition are rewritten in place, so they must be
// called by this loop only. Options as XLA's: sink broadcasts of constants
// too, or only scalar constants.
#ifndef HLOGYM_PASSES_WHILE_LOOP_CONSTANT_SINKING_H_
#define HLOGYM_PASSES_WHILE_LOOP_CONSTANT_SINKING_H_

#include <string>
#include <string_view>
#include <vector>

#include "hlogym/passes/pass.h"

namespace hlogym {

struct WhileLoopConstantSinkingOptions {
  bool sink_broadcast_of_constants = false;
  bool sink_only_scalar_constants = false;
};

class WhileLoopConstantSinking : public Pass {
 public:
  explicit WhileLoopConstantSinking(
      WhileLoopConstantSinkingOptions options = {})
      : options_(options) {}
  std::string_view name() const override {
    return "while-loop-constant-sinking";
  }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

 private:
  WhileLoopConstantSinkingOptions options_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_CONSTANT_SINKING_H_
