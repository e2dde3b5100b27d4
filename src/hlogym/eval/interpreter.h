// The reference interpreter: executes an HLO module on the CPU with XLA's
// semantics. It is HloGym's correctness oracle (equal outputs before and
// after a rewrite) and runs inside search loops, so values are shared, not
// copied, and each intermediate is freed as soon as its last user ran.
#ifndef HLOGYM_EVAL_INTERPRETER_H_
#define HLOGYM_EVAL_INTERPRETER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/ir/module.h"

namespace hlogym {

// Executes `custom-call(target)`: operands in, result (of inst.shape()) out.
using CustomCallHandler = std::function<absl::StatusOr<Literal>(
    const Instruction& inst, Operands operands)>;

// Custom-call targets the interpreter can run. Unregistered targets fail
// with an error naming the target.
class CustomCallRegistry {
 public:
  void Register(std::string target, CustomCallHandler handler) {
    handlers_[std::move(target)] = std::move(handler);
  }
  const CustomCallHandler* Find(const std::string& target) const {
    auto it = handlers_.find(target);
    return it == handlers_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, CustomCallHandler> handlers_;
};

struct InterpreterOptions {
  // Evaluation fails (instead of exhausting memory) when the bytes of the
  // values alive at one time would exceed this.
  int64_t max_live_bytes = int64_t{8} << 30;
  // A while loop that runs more iterations than this is reported as an
  // error rather than hanging the caller.
  int64_t max_while_iterations = int64_t{1} << 24;
  // Wall-clock limit of one Run in seconds (0 = none). A run past it stops
  // with DeadlineExceeded instead of holding up a search loop or a corpus
  // sweep.
  double time_limit_seconds = 0;
  // Seed of rng and rng-get-and-update-state (see docs/interpreter.md).
  uint64_t rng_seed = 0;
  // alternatives instructions evaluate operand 0 unless listed here (by
  // instruction name, with the operand index to evaluate).
  absl::flat_hash_map<std::string, int64_t> alternative_choices;
  // A constant printed without its values (`{...}`) is an error unless
  // this is set, in which case it evaluates as zeros.
  bool unknown_constants_as_zero = false;
  // Handlers for custom-call targets; nullptr = none.
  const CustomCallRegistry* custom_calls = nullptr;
};

class Interpreter {
 public:
  explicit Interpreter(InterpreterOptions options = {});
  ~Interpreter();

  // Runs the entry computation. `args` must match the entry's parameter
  // shapes (element type and dimensions). Returns the root's value.
  absl::StatusOr<Literal> Run(const Module& module,
                              absl::Span<const Literal> args);
  // Runs any computation of a module.
  absl::StatusOr<Literal> RunComputation(const Computation& computation,
                                         absl::Span<const Literal* const> args);

  // Statistics of the last Run.
  int64_t instructions_evaluated() const { return instructions_evaluated_; }
  int64_t peak_live_bytes() const { return peak_live_bytes_; }

  class Impl;  // the evaluation state of one run (interpreter.cc)

 private:
  InterpreterOptions options_;
  int64_t instructions_evaluated_ = 0;
  int64_t peak_live_bytes_ = 0;
};

}  // namespace hlogym

#endif  // HLOGYM_EVAL_INTERPRETER_H_
