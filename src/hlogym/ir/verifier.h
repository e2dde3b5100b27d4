// Structural and shape checks of a module, following XLA's shape inference.
#ifndef HLOGYM_IR_VERIFIER_H_
#define HLOGYM_IR_VERIFIER_H_

#include <string>

#include "absl/status/status.h"
#include "hlogym/ir/module.h"

namespace hlogym {

struct VerifierOptions {
  // Compare layouts of operands/results where XLA's layout-sensitive mode
  // would. Off by default, as in XLA's default verifier.
  bool layout_sensitive = false;
  // Accept mixed float precision (bf16 operand into an f32 add) as XLA's
  // verifier does by default for some backends.
  bool allow_mixed_precision = true;
  // Accept unbounded dynamic dimensions ('?'). XLA's verifier rejects them
  // unless told otherwise; real JAX exports use them, so HloGym accepts them
  // by default.
  bool allow_unbounded_dynamism = true;
};

// Returns OK or an error naming the instruction (and its text location when
// known) and the rule that is broken, e.g.
//   "model.hlo:12:3: instruction 'add.5': binary op operands must have the
//    same dimensions, got f32[2] and f32[3]".
// `file` prefixes the location; empty means no prefix.
absl::Status VerifyModule(const Module& module,
                          const VerifierOptions& options = {},
                          const std::string& file = "");

}  // namespace hlogym

#endif  // HLOGYM_IR_VERIFIER_H_
