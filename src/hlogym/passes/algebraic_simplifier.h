// AlgebraicSimplifier: XLA's algebraic simplification as named rules.
//
// Each rule implements one entry (or part of one) of the rewrite checklist
// of XLA's AlgebraicSimplifier and can be switched off by name. Rules are
// grouped by the opcode of the instruction they visit and tried in
// checklist order; the first rule that rewrites an instruction wins, as in
// XLA's handlers. In apply mode each non-fusion computation is revisited
// while something changed (at most 50 times); in dry mode one sweep
// records every opportunity against the untouched graph.
#ifndef HLOGYM_PASSES_ALGEBRAIC_SIMPLIFIER_H_
#define HLOGYM_PASSES_ALGEBRAIC_SIMPLIFIER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "hlogym/passes/pass.h"

namespace hlogym {

// XLA's AlgebraicSimplifierOptions; defaults are XLA's GPU configuration
// for the pre-layout (layout-insensitive) runs, section 4.2.
struct AlgebraicSimplifierOptions {
  bool is_layout_sensitive = false;
  bool enable_dot_strength_reduction = true;
  bool supports_non_canonical_dots = false;  // GPU: off
  bool enable_dot_to_multiply_rewrite = true;
  bool enable_move_dot_param_to_rhs = false;
  bool enable_conv_simplification = true;
  bool enable_conv_operand_swap = true;
  bool enable_conv_add_multiply_reorder = true;  // GPU: on
  bool enable_scalar_multiply_reduction = false;
  bool enable_floats_are_real = false;
  bool enable_window_reduce_to_reduce_replacement = true;
  bool enable_reduce_of_reshape = true;
  bool enable_negative_padding_replacement = true;
  bool enable_sink_broadcast = true;
  bool unconditionally_simplify_reduce_of_transpose_or_reshape =
      true;  // GPU: on
  int64_t very_small_gather_size = 4;
  bool minmax_propagate_nan = true;
  bool enable_unconditional_reduce_of_concat_replacement = false;  // GPU
  bool executing_on_cpu = false;
  bool use_associative_reordering = false;
  double associative_reordering_threshold = 2.0;
  bool raise_slice_and_reduce_through_dot = false;
  double raise_slice_and_reduce_through_dot_threshold = 2.0;
  bool use_convert_constant_folding = false;
  bool disable_dynamic_slice_to_slice_conversion = false;
  bool enable_fast_math = false;
  bool enable_broadcast_degenerate_dimension = true;
  bool enable_remove_no_op_reduce_precision = false;
  bool enable_onednn_support = false;
  bool rewrite_reshape_transpose_as_slice_concatenate = true;
  bool run_to_fixed_point = true;
  bool rewrite_no_op_bitcast_convert_to_bitcast = false;
  bool enable_conditional_simplification = false;
  bool enable_hoist_transpose_of_reshape = false;
  // GPU dot strength reduction threshold: (lhs_nc + rhs_nc) * contracting.
  int64_t dot_strength_reduction_size_limit = 10'000'000;
};

class AlgebraicSimplifier;

// Which computations async ops call, for the rules that skip async
// computations: one module scan on first use, kept for one pass run (rules
// add no async ops). Without it, every such test scanned the module, and
// modules with thousands of small computations went quadratic.
class AsyncCallers {
 public:
  explicit AsyncCallers(const Module* module) : module_(module) {}
  // Some kAsyncStart, kAsyncUpdate or kAsyncDone calls `c`.
  bool CalledByAsyncOp(const Computation* c);
  // The same, or another async start or done opcode (all-reduce-start,
  // copy-done, ...) calls `c`.
  bool CalledByAnyAsyncOp(const Computation* c);

 private:
  void Scan();
  const Module* module_;
  bool scanned_ = false;
  absl::flat_hash_set<const Computation*> generic_, any_;
};

// What a rule sees: the rewriter, the options, and the async callers.
struct AlgebraicContext {
  Rewriter& rw;
  const AlgebraicSimplifierOptions& options;
  AsyncCallers& async;
};

// A rule returns true if it rewrote `inst` (through ctx.rw), false if it
// did not match. Rules never mutate existing instructions in place: they
// build new ones and replace (that is what makes dry mode work).
using AlgebraicRuleFn = absl::StatusOr<bool> (*)(Instruction* inst,
                                                 AlgebraicContext& ctx);

// The replacement every rule ends with. XLA's "same shape" requirement for
// the mode (layout-sensitive: equal including layout; otherwise compatible)
// is checked and a mismatch refuses the rewrite (false) instead of failing.
// A replacement built by this run first takes the shape (layout included)
// of the instruction it replaces, as XLA's ReplaceWithNewInstruction does.
absl::StatusOr<bool> ReplaceForRule(AlgebraicContext& ctx, Instruction* old,
                                    Instruction* with);

struct AlgebraicRule {
  const char* name;            // kebab-case, unique
  int entry;                   // checklist entry (1..212)
  std::vector<Opcode> visits;  // opcodes of the instructions it is tried on
  const char* summary;
  AlgebraicRuleFn fn;
};

// The rule tables, one per source file (checklist ranges).
void AddAlgebraicRulesPart1(std::vector<AlgebraicRule>* rules);  // 1-63
void AddAlgebraicRulesPart2(std::vector<AlgebraicRule>* rules);  // 64-137
void AddAlgebraicRulesPart3(std::vector<AlgebraicRule>* rules);  // 138-212

// Every rule, sorted by entry (stable within an entry).
const std::vector<AlgebraicRule>& AllAlgebraicRules();

class AlgebraicSimplifier : public Pass {
 public:
  explicit AlgebraicSimplifier(AlgebraicSimplifierOptions options = {},
                               std::string name = "algebraic-simplifier");
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
  absl::Status SetOption(std::string_view key, std::string_view value) override;
  std::vector<std::string> OptionNames() const override;

  const AlgebraicSimplifierOptions& options() const { return options_; }
  AlgebraicSimplifierOptions* mutable_options() { return &options_; }
  // Number of distinct checklist entries with at least one rule.
  static int ImplementedEntryCount();

 private:
  absl::StatusOr<bool> SimplifyComputation(Computation* computation,
                                           Rewriter& rw, AsyncCallers& async);
  AlgebraicSimplifierOptions options_;
  std::string name_;
  // rules by visited opcode: indices into AllAlgebraicRules().
  std::vector<std::vector<int>> by_opcode_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_ALGEBRAIC_SIMPLIFIER_H_
