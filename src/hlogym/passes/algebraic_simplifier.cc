#include "hlogym/passes/algebraic_simplifier.h"

#include <algorithm>
#include <set>

#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {

const std::vector<AlgebraicRule>& AllAlgebraicRules() {
  static const std::vector<AlgebraicRule>* rules = [] {
    auto* r = new std::vector<AlgebraicRule>();
    AddAlgebraicRulesPart1(r);
    AddAlgebraicRulesPart2(r);
    AddAlgebraicRulesPart3(r);
    std::stable_sort(r->begin(), r->end(),
                     [](const AlgebraicRule& a, const AlgebraicRule& b) {
                       return a.entry < b.entry;
                     });
    return r;
  }();
  return *rules;
}

absl::StatusOr<bool> ReplaceForRule(AlgebraicContext& ctx, Instruction* old,
                                    Instruction* with) {
  if (with == nullptr || with == old || old->parent() != with->parent()) {
    return false;
  }
  Shape* shape = with->mutable_shape();
  if (ctx.rw.IsNew(with) && shape->IsArray() && old->shape().IsArray()) {
    if (shape->EqualIgnoringLayout(old->shape())) {
      *shape = old->shape();
    } else if (shape->Compatible(old->shape())) {
      if (old->shape().has_layout()) {
        *shape->mutable_layout() = old->shape().layout();
      } else {
        shape->clear_layout();
      }
    }
  }
  const bool same = ctx.options.is_layout_sensitive
                        ? old->shape() == with->shape()
                        : old->shape().Compatible(with->shape());
  if (!same) return false;
  return ctx.rw.ReplaceInstruction(old, with);
}

int AlgebraicSimplifier::ImplementedEntryCount() {
  std::set<int> entries;
  for (const AlgebraicRule& r : AllAlgebraicRules()) entries.insert(r.entry);
  return static_cast<int>(entries.size());
}

AlgebraicSimplifier::AlgebraicSimplifier(AlgebraicSimplifierOptions options,
                                         std::string name)
    : options_(options), name_(std::move(name)) {
  const std::vector<AlgebraicRule>& all = AllAlgebraicRules();
  std::vector<RuleInfo> infos;
  infos.reserve(all.size());
  by_opcode_.assign(kNumOpcodes, {});
  for (size_t i = 0; i < all.size(); ++i) {
    infos.push_back({all[i].name, all[i].entry, all[i].summary});
    for (Opcode op : all[i].visits) {
      by_opcode_[static_cast<int>(op)].push_back(static_cast<int>(i));
    }
  }
  DeclareRules(std::move(infos));
}

void AsyncCallers::Scan() {
  scanned_ = true;
  for (const auto& c : module_->computations()) {
    c->ForEachInstruction([&](Instruction* i) {
      const Opcode k = i->opcode();
      const bool generic = k == Opcode::kAsyncStart ||
                           k == Opcode::kAsyncUpdate || k == Opcode::kAsyncDone;
      if (!generic && !IsAsyncStartOpcode(k) && !IsAsyncDoneOpcode(k)) return;
      for (const Computation* callee : i->called_computations()) {
        any_.insert(callee);
        if (generic) generic_.insert(callee);
      }
    });
  }
}

bool AsyncCallers::CalledByAsyncOp(const Computation* c) {
  if (!scanned_) Scan();
  return generic_.contains(c);
}

bool AsyncCallers::CalledByAnyAsyncOp(const Computation* c) {
  if (!scanned_) Scan();
  return any_.contains(c);
}

absl::StatusOr<bool> AlgebraicSimplifier::SimplifyComputation(
    Computation* computation, Rewriter& rw, AsyncCallers& async) {
  const std::vector<AlgebraicRule>& all = AllAlgebraicRules();
  AlgebraicContext ctx{rw, options_, async};
  std::vector<std::pair<int64_t, Instruction*>> snapshot;
  for (Instruction* i : computation->MakeInstructionPostOrder()) {
    snapshot.push_back({i->unique_id(), i});
  }
  bool changed = false;
  for (auto [id, inst] : snapshot) {
    if (rw.IsRemoved(id)) continue;
    for (int r : by_opcode_[static_cast<int>(inst->opcode())]) {
      if (!rule_enabled(r)) continue;
      absl::StatusOr<bool> rewrote = all[r].fn(inst, ctx);
      if (!rewrote.ok()) {
        return absl::Status(
            rewrote.status().code(),
            StrCat("algebraic-simplifier rule '", all[r].name, "' on '",
                   inst->name(), "': ", rewrote.status().message()));
      }
      if (*rewrote) {
        changed = true;
        break;
      }
    }
  }
  return changed;
}

absl::StatusOr<bool> AlgebraicSimplifier::RunWith(Module* module,
                                                  Rewriter& rw) {
  bool changed = false;
  AsyncCallers async(module);
  std::vector<Computation*> order = module->MakeComputationPostOrder();
  for (Computation* c : order) {
    if (c->IsFusionComputation()) continue;
    // XLA revisits a computation while it changes, at most 50 times. A dry
    // run records opportunities against the untouched graph: one sweep.
    int reruns = rw.dry() || !options_.run_to_fixed_point ? 1 : 50;
    for (int i = 0; i < reruns; ++i) {
      HLOGYM_ASSIGN_OR_RETURN(bool c_changed,
                              SimplifyComputation(c, rw, async));
      changed |= c_changed;
      if (!c_changed) break;
    }
  }
  return changed;
}

namespace {

struct OptionRef {
  const char* name;
  bool AlgebraicSimplifierOptions::*flag;
};

constexpr OptionRef kBoolOptions[] = {
    {"is_layout_sensitive", &AlgebraicSimplifierOptions::is_layout_sensitive},
    {"enable_dot_strength_reduction",
     &AlgebraicSimplifierOptions::enable_dot_strength_reduction},
    {"supports_non_canonical_dots",
     &AlgebraicSimplifierOptions::supports_non_canonical_dots},
    {"enable_dot_to_multiply_rewrite",
     &AlgebraicSimplifierOptions::enable_dot_to_multiply_rewrite},
    {"enable_move_dot_param_to_rhs",
     &AlgebraicSimplifierOptions::enable_move_dot_param_to_rhs},
    {"enable_conv_simplification",
     &AlgebraicSimplifierOptions::enable_conv_simplification},
    {"enable_conv_operand_swap",
     &AlgebraicSimplifierOptions::enable_conv_operand_swap},
    {"enable_conv_add_multiply_reorder",
     &AlgebraicSimplifierOptions::enable_conv_add_multiply_reorder},
    {"enable_scalar_multiply_reduction",
     &AlgebraicSimplifierOptions::enable_scalar_multiply_reduction},
    {"enable_floats_are_real",
     &AlgebraicSimplifierOptions::enable_floats_are_real},
    {"enable_window_reduce_to_reduce_replacement",
     &AlgebraicSimplifierOptions::enable_window_reduce_to_reduce_replacement},
    {"enable_reduce_of_reshape",
     &AlgebraicSimplifierOptions::enable_reduce_of_reshape},
    {"enable_negative_padding_replacement",
     &AlgebraicSimplifierOptions::enable_negative_padding_replacement},
    {"enable_sink_broadcast",
     &AlgebraicSimplifierOptions::enable_sink_broadcast},
    {"unconditionally_simplify_reduce_of_transpose_or_reshape",
     &AlgebraicSimplifierOptions::
         unconditionally_simplify_reduce_of_transpose_or_reshape},
    {"minmax_propagate_nan", &AlgebraicSimplifierOptions::minmax_propagate_nan},
    {"enable_unconditional_reduce_of_concat_replacement",
     &AlgebraicSimplifierOptions::
         enable_unconditional_reduce_of_concat_replacement},
    {"executing_on_cpu", &AlgebraicSimplifierOptions::executing_on_cpu},
    {"use_associative_reordering",
     &AlgebraicSimplifierOptions::use_associative_reordering},
    {"raise_slice_and_reduce_through_dot",
     &AlgebraicSimplifierOptions::raise_slice_and_reduce_through_dot},
    {"use_convert_constant_folding",
     &AlgebraicSimplifierOptions::use_convert_constant_folding},
    {"disable_dynamic_slice_to_slice_conversion",
     &AlgebraicSimplifierOptions::disable_dynamic_slice_to_slice_conversion},
    {"enable_fast_math", &AlgebraicSimplifierOptions::enable_fast_math},
    {"enable_broadcast_degenerate_dimension",
     &AlgebraicSimplifierOptions::enable_broadcast_degenerate_dimension},
    {"enable_remove_no_op_reduce_precision",
     &AlgebraicSimplifierOptions::enable_remove_no_op_reduce_precision},
    {"enable_onednn_support",
     &AlgebraicSimplifierOptions::enable_onednn_support},
    {"rewrite_reshape_transpose_as_slice_concatenate",
     &AlgebraicSimplifierOptions::
         rewrite_reshape_transpose_as_slice_concatenate},
    {"run_to_fixed_point", &AlgebraicSimplifierOptions::run_to_fixed_point},
    {"rewrite_no_op_bitcast_convert_to_bitcast",
     &AlgebraicSimplifierOptions::rewrite_no_op_bitcast_convert_to_bitcast},
    {"enable_conditional_simplification",
     &AlgebraicSimplifierOptions::enable_conditional_simplification},
    {"enable_hoist_transpose_of_reshape",
     &AlgebraicSimplifierOptions::enable_hoist_transpose_of_reshape},
};

}  // namespace

absl::Status AlgebraicSimplifier::SetOption(std::string_view key,
                                            std::string_view value) {
  for (const OptionRef& o : kBoolOptions) {
    if (key == o.name) {
      HLOGYM_ASSIGN_OR_RETURN(bool v, ParseBoolOption(key, value));
      options_.*(o.flag) = v;
      return absl::OkStatus();
    }
  }
  auto parse_number = [&](double* out) -> absl::Status {
    std::string s(value);
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end == nullptr || *end != '\0') {
      return absl::InvalidArgumentError(
          StrCat("option '", key, "' takes a number, not '", value, "'"));
    }
    *out = v;
    return absl::OkStatus();
  };
  double v = 0;
  if (key == "very_small_gather_size") {
    HLOGYM_RETURN_IF_ERROR(parse_number(&v));
    options_.very_small_gather_size = static_cast<int64_t>(v);
    return absl::OkStatus();
  }
  if (key == "associative_reordering_threshold") {
    HLOGYM_RETURN_IF_ERROR(parse_number(&v));
    options_.associative_reordering_threshold = v;
    return absl::OkStatus();
  }
  if (key == "raise_slice_and_reduce_through_dot_threshold") {
    HLOGYM_RETURN_IF_ERROR(parse_number(&v));
    options_.raise_slice_and_reduce_through_dot_threshold = v;
    return absl::OkStatus();
  }
  if (key == "dot_strength_reduction_size_limit") {
    HLOGYM_RETURN_IF_ERROR(parse_number(&v));
    options_.dot_strength_reduction_size_limit = static_cast<int64_t>(v);
    return absl::OkStatus();
  }
  return Pass::SetOption(key, value);
}

std::vector<std::string> AlgebraicSimplifier::OptionNames() const {
  std::vector<std::string> names;
  for (const OptionRef& o : kBoolOptions) names.push_back(o.name);
  names.push_back("very_small_gather_size");
  names.push_back("associative_reordering_threshold");
  names.push_back("raise_slice_and_reduce_through_dot_threshold");
  names.push_back("dot_strength_reduction_size_limit");
  return names;
}

void RegisterAlgebraicSimplifier(PassRegistry& registry) {
  registry.Register(
      "algebraic-simplifier",
      "XLA's algebraic simplifications as named rules (GPU options)",
      [] { return std::make_unique<AlgebraicSimplifier>(); });
  registry.Register(
      "algebraic-simplifier-ls",
      "algebraic-simplifier in layout-sensitive mode (post-layout GPU runs)",
      [] {
        AlgebraicSimplifierOptions o;
        o.is_layout_sensitive = true;
        o.enable_conv_operand_swap = false;
        return std::make_unique<AlgebraicSimplifier>(o,
                                                     "algebraic-simplifier-ls");
      });
}

}  // namespace hlogym
