#include "hlogym/text/printer.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

// Text order, unless some instruction comes before an operand (rewrites
// append new instructions at the end): then a topological order that keeps
// text order wherever it can (Kahn's algorithm, smallest position first),
// so that the text parses back.
std::vector<Instruction*> PrintableOrder(const Computation& c) {
  std::vector<Instruction*> order = c.instructions();
  for (size_t k = 0; k < order.size(); ++k) {
    order[k]->scratch = static_cast<int64_t>(k);
  }
  bool valid = true;
  for (Instruction* i : order) {
    for (const Instruction* op : i->operands()) {
      if (op->parent() == &c && op->scratch >= i->scratch) valid = false;
    }
    for (const Instruction* op : i->control_predecessors()) {
      if (op->scratch >= i->scratch) valid = false;
    }
    if (!valid) break;
  }
  if (valid) return order;
  std::vector<int64_t> pending(order.size(), 0);
  for (Instruction* i : order) {
    absl::flat_hash_map<const Instruction*, bool> seen;
    for (const Instruction* op : i->operands()) {
      if (op->parent() == &c && seen.emplace(op, true).second) {
        ++pending[i->scratch];
      }
    }
    for (const Instruction* op : i->control_predecessors()) {
      if (seen.emplace(op, true).second) ++pending[i->scratch];
    }
  }
  std::vector<int64_t> heap;
  for (size_t k = 0; k < order.size(); ++k) {
    if (pending[k] == 0) heap.push_back(static_cast<int64_t>(k));
  }
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
  std::vector<Instruction*> out;
  out.reserve(order.size());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    int64_t k = heap.back();
    heap.pop_back();
    Instruction* i = order[k];
    out.push_back(i);
    auto release = [&](const Instruction* u) {
      if (u->parent() != &c) return;
      if (--pending[u->scratch] == 0) {
        heap.push_back(u->scratch);
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
      }
    };
    for (const Instruction* u : i->users()) release(u);
    for (const Instruction* u : i->control_successors()) release(u);
  }
  // A cycle cannot be printed in order; print the rest as it is.
  if (out.size() != order.size()) return order;
  return out;
}

void AppendInts(std::string* out, const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->push_back(',');
    StrAppend(out, v[i]);
  }
}
template <typename V>
void AppendIntList(std::string* out, const V& v) {
  out->push_back('{');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->push_back(',');
    StrAppend(out, v[i]);
  }
  out->push_back('}');
}

void AppendShapeIndex(std::string* out, const ShapeIndex& idx) {
  AppendIntList(out, idx);
}

void AppendQuoted(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\'':
        out->append("\\'");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 ||
            static_cast<unsigned char>(c) >= 0x7f) {
          static constexpr char kOct[] = "01234567";
          unsigned char u = static_cast<unsigned char>(c);
          out->push_back('\\');
          out->push_back(kOct[(u >> 6) & 7]);
          out->push_back(kOct[(u >> 3) & 7]);
          out->push_back(kOct[u & 7]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// True if `s` is a balanced {...} block (strings respected), which the
// parser accepts raw: such backend configs print unquoted, as XLA does.
bool IsRawBraceBlock(std::string_view s) {
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\') ++i;
      }
      if (i >= s.size()) return false;
      continue;
    }
    if (c == '\0' || c == '\n' || c == '\r') return false;
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0 && i + 1 != s.size()) return false;
  }
  return depth == 0;
}

void AppendShapeWithIndex(std::string* out, const Shape& s, bool annotate,
                          bool layout = true) {
  if (!annotate || !s.IsTuple()) {
    s.AppendTo(out, layout);
    return;
  }
  out->push_back('(');
  for (int64_t i = 0; i < s.tuple_shapes_size(); ++i) {
    if (i) out->append(", ");
    if (i > 0 && i % 5 == 0) StrAppend(out, "/*index=", i, "*/");
    AppendShapeWithIndex(out, s.tuple_shapes(i), annotate, layout);
  }
  out->push_back(')');
}

void AppendWindow(std::string* out, const Window& w) {
  out->push_back('{');
  const auto& d = w.dimensions;
  auto dxd = [&](auto field) {
    for (size_t i = 0; i < d.size(); ++i) {
      if (i) out->push_back('x');
      StrAppend(out, field(d[i]));
    }
  };
  out->append("size=");
  dxd([](const WindowDimension& x) { return x.size; });
  auto any = [&](auto pred) { return std::any_of(d.begin(), d.end(), pred); };
  if (any([](const WindowDimension& x) { return x.stride != 1; })) {
    out->append(" stride=");
    dxd([](const WindowDimension& x) { return x.stride; });
  }
  if (any([](const WindowDimension& x) {
        return x.padding_low != 0 || x.padding_high != 0;
      })) {
    out->append(" pad=");
    for (size_t i = 0; i < d.size(); ++i) {
      if (i) out->push_back('x');
      StrAppend(out, d[i].padding_low, "_", d[i].padding_high);
    }
  }
  if (any([](const WindowDimension& x) { return x.base_dilation != 1; })) {
    out->append(" lhs_dilate=");
    dxd([](const WindowDimension& x) { return x.base_dilation; });
  }
  if (any([](const WindowDimension& x) { return x.window_dilation != 1; })) {
    out->append(" rhs_dilate=");
    dxd([](const WindowDimension& x) { return x.window_dilation; });
  }
  if (any([](const WindowDimension& x) { return x.window_reversal; })) {
    out->append(" rhs_reversal=");
    dxd([](const WindowDimension& x) { return x.window_reversal ? 1 : 0; });
  }
  out->push_back('}');
}

void AppendDimLabels(std::string* out, const ConvolutionDimensionNumbers& d) {
  auto part = [&](int64_t rank, int64_t a, char ca, int64_t b, char cb,
                  const std::vector<int64_t>& spatial) {
    std::string s(static_cast<size_t>(std::max<int64_t>(rank, 0)), '?');
    if (a >= 0 && a < rank) s[a] = ca;
    if (b >= 0 && b < rank) s[b] = cb;
    for (size_t i = 0; i < spatial.size(); ++i) {
      if (spatial[i] >= 0 && spatial[i] < rank) {
        s[spatial[i]] = static_cast<char>('0' + i);
      }
    }
    out->append(s);
  };
  part(d.input_rank, d.input_batch_dimension, 'b', d.input_feature_dimension,
       'f', d.input_spatial_dimensions);
  out->push_back('_');
  part(d.kernel_rank, d.kernel_input_feature_dimension, 'i',
       d.kernel_output_feature_dimension, 'o', d.kernel_spatial_dimensions);
  out->append("->");
  part(d.output_rank, d.output_batch_dimension, 'b', d.output_feature_dimension,
       'f', d.output_spatial_dimensions);
}

void AppendMetadata(std::string* out, const OpMetadata& m) {
  out->push_back('{');
  bool first = true;
  auto sep = [&]() {
    if (!first) out->push_back(' ');
    first = false;
  };
  auto str = [&](std::string_view k, const std::string& v) {
    if (v.empty()) return;
    sep();
    StrAppend(out, k, "=");
    AppendQuoted(out, v);
  };
  auto num = [&](std::string_view k, int32_t v) {
    if (v == 0) return;
    sep();
    StrAppend(out, k, "=", v);
  };
  str("op_type", m.op_type);
  str("op_name", m.op_name);
  str("source_file", m.source_file);
  num("source_line", m.source_line);
  num("source_end_line", m.source_end_line);
  num("source_column", m.source_column);
  num("source_end_column", m.source_end_column);
  if (!m.profile_type.empty()) {
    sep();
    out->append("profile_type=");
    AppendIntList(out, m.profile_type);
  }
  str("deduplicated_name", m.deduplicated_name);
  if (m.preserve_layout) {
    sep();
    out->append("preserve_layout=true");
  }
  num("stack_frame_id", m.stack_frame_id);
  str("scheduling_name", m.scheduling_name);
  str("metadata_payload", m.metadata_payload);
  out->push_back('}');
}

void AppendFrontendAttributes(std::string* out, const FrontendAttributes& f) {
  out->push_back('{');
  for (size_t i = 0; i < f.size(); ++i) {
    if (i) out->push_back(',');
    StrAppend(out, f[i].key, "=");
    if (f[i].raw) {
      out->append(f[i].value);
    } else {
      AppendQuoted(out, f[i].value);
    }
  }
  out->push_back('}');
}

void AppendSingleSharding(std::string* out, const Sharding& s) {
  if (s.kind == Sharding::Kind::kNamed) {
    out->append(s.text);
    return;
  }
  out->push_back('{');
  switch (s.kind) {
    case Sharding::Kind::kReplicated:
      out->append("replicated");
      break;
    case Sharding::Kind::kManual:
      out->append("manual");
      break;
    case Sharding::Kind::kUnknown:
      out->append("unknown");
      break;
    case Sharding::Kind::kUnreduced:
      out->append("unreduced");
      break;
    case Sharding::Kind::kMaximal:
      StrAppend(out, "maximal device=", s.device);
      break;
    case Sharding::Kind::kTiled: {
      out->append("devices=[");
      AppendInts(out, s.tile_dims);
      out->push_back(']');
      if (s.iota) {
        out->append("<=[");
        AppendInts(out, s.iota_reshape_dims);
        out->push_back(']');
        if (!s.iota_transpose_perm.empty()) {
          out->append("T(");
          AppendInts(out, s.iota_transpose_perm);
          out->push_back(')');
        }
      } else {
        AppendInts(out, s.devices);
      }
      if (s.last_tile_dim_replicate) out->append(" last_tile_dim_replicate");
      if (!s.last_tile_dims.empty()) {
        out->append(" last_tile_dims={");
        for (size_t i = 0; i < s.last_tile_dims.size(); ++i) {
          if (i) out->append(", ");
          out->append(s.last_tile_dims[i]);
        }
        out->push_back('}');
      }
      break;
    }
    default:
      break;
  }
  if (s.shard_as >= 0) StrAppend(out, " shard_as ", s.shard_as);
  if (s.shard_like >= 0) StrAppend(out, " shard_like ", s.shard_like);
  if (!s.metadata_text.empty()) StrAppend(out, " metadata=", s.metadata_text);
  out->push_back('}');
}

void AppendSharding(std::string* out, const Sharding& s) {
  if (s.kind == Sharding::Kind::kTuple) {
    out->push_back('{');
    for (size_t i = 0; i < s.tuple_elements.size(); ++i) {
      if (i) out->append(", ");
      if (i > 0 && i % 5 == 0)
        StrAppend(out, "/*index=", static_cast<int64_t>(i), "*/");
      AppendSingleSharding(out, s.tuple_elements[i]);
    }
    out->push_back('}');
    return;
  }
  AppendSingleSharding(out, s);
}

void AppendReplicaGroups(std::string* out, const ReplicaGroups& g) {
  switch (g.form) {
    case ReplicaGroups::Form::kExplicit:
      out->push_back('{');
      for (size_t i = 0; i < g.groups.size(); ++i) {
        if (i) out->push_back(',');
        AppendIntList(out, g.groups[i]);
      }
      out->push_back('}');
      break;
    case ReplicaGroups::Form::kIota:
      StrAppend(out, "[", g.num_groups, ",", g.group_size, "]<=[");
      AppendInts(out, g.iota_reshape_dims);
      out->push_back(']');
      if (!g.iota_transpose_perm.empty()) {
        out->append("T(");
        AppendInts(out, g.iota_transpose_perm);
        out->push_back(')');
      }
      break;
    case ReplicaGroups::Form::kMesh:
      out->append(g.mesh_text);
      break;
  }
}

void AppendPadding(std::string* out, const PaddingConfig& p) {
  bool interior = std::any_of(p.begin(), p.end(),
                              [](const auto& d) { return d.interior != 0; });
  for (size_t i = 0; i < p.size(); ++i) {
    if (i) out->push_back('x');
    StrAppend(out, p[i].low, "_", p[i].high);
    if (interior) StrAppend(out, "_", p[i].interior);
  }
}

bool IsUniform(const Literal& lit) {
  const size_t w = static_cast<size_t>(ByteWidth(lit.shape().element_type()));
  const uint8_t* d = lit.data();
  for (size_t off = w; off < lit.size_bytes(); off += w) {
    if (std::memcmp(d, d + off, w) != 0) return false;
  }
  return true;
}

// Post-order from the root (operands in order, then control predecessors),
// then anything unreachable in text order: independent of how the text
// ordered the reachable instructions.
std::vector<Instruction*> CanonicalInstructionOrder(const Computation& c) {
  std::vector<Instruction*> order;
  absl::flat_hash_map<const Instruction*, int> state;
  std::vector<std::pair<Instruction*, size_t>> stack;
  auto visit = [&](Instruction* start) {
    if (state[start] != 0) return;
    state[start] = 1;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      const size_t nops = inst->operands().size();
      if (next < nops + inst->control_predecessors().size()) {
        Instruction* dep = next < nops
                               ? inst->operands()[next]
                               : inst->control_predecessors()[next - nops];
        ++next;
        if (state[dep] == 0) {
          state[dep] = 1;
          stack.emplace_back(dep, 0);
        }
        continue;
      }
      order.push_back(inst);
      stack.pop_back();
    }
  };
  if (c.root_instruction()) visit(c.root_instruction());
  for (Instruction* i : c.instructions()) visit(i);
  return order;
}

std::vector<Computation*> CanonicalComputationOrder(const Module& m) {
  std::vector<Computation*> order;
  absl::flat_hash_map<const Computation*, int> state;
  std::function<void(Computation*)> visit = [&](Computation* c) {
    if (state[c] != 0) return;
    state[c] = 1;
    for (Instruction* i : CanonicalInstructionOrder(*c)) {
      for (Computation* callee : i->called_computations()) visit(callee);
    }
    order.push_back(c);
  };
  if (m.entry_computation()) visit(m.entry_computation());
  for (const auto& c : m.computations()) visit(c.get());
  return order;
}

class ModulePrinter {
 public:
  ModulePrinter(const PrintOptions& options, std::string* out)
      : o_(options), out_(out) {}

  void PrintModule(const Module& m);
  void PrintComputation(const Computation& c, bool is_entry);
  void PrintInstruction(const Instruction& inst);

 private:
  void Name(const std::string& n) {
    if (o_.print_percent) out_->push_back('%');
    out_->append(n);
  }
  const std::string& InstName(const Instruction* i) {
    if (!o_.canonical) return i->name();
    auto it = canon_inst_.find(i);
    return it == canon_inst_.end() ? i->name() : it->second;
  }
  const std::string& CompName(const Computation* c) {
    if (!o_.canonical) return c->name();
    auto it = canon_comp_.find(c);
    return it == canon_comp_.end() ? c->name() : it->second;
  }
  void Attr(std::string_view key) { StrAppend(out_, ", ", key, "="); }
  void CompRef(const Computation* c) { Name(CompName(c)); }
  void CompList(const std::vector<Computation*>& cs) {
    out_->push_back('{');
    for (size_t i = 0; i < cs.size(); ++i) {
      if (i) out_->append(", ");
      CompRef(cs[i]);
    }
    out_->push_back('}');
  }
  void OpcodeSpecific(const Instruction& inst);
  void CalledComputations(const Instruction& inst);

  const PrintOptions& o_;
  std::string* out_;
  absl::flat_hash_map<const Instruction*, std::string> canon_inst_;
  absl::flat_hash_map<const Computation*, std::string> canon_comp_;
};

void ModulePrinter::PrintModule(const Module& m) {
  const ModuleConfig& c = m.config();
  out_->append("HloModule ");
  out_->append(o_.canonical ? std::string("m") : m.name());
  if (c.is_scheduled) StrAppend(out_, ", is_scheduled=", *c.is_scheduled);
  if (c.input_output_alias) {
    out_->append(", input_output_alias={ ");
    for (size_t i = 0; i < c.input_output_alias->size(); ++i) {
      const auto& a = (*c.input_output_alias)[i];
      if (i) out_->append(", ");
      AppendShapeIndex(out_, a.output_index);
      StrAppend(out_, ": (", a.parameter, ", ");
      AppendShapeIndex(out_, a.parameter_index);
      if (a.kind == InputOutputAlias::Kind::kMayAlias)
        out_->append(", may-alias");
      if (a.kind == InputOutputAlias::Kind::kMustAlias)
        out_->append(", must-alias");
      out_->push_back(')');
    }
    out_->append(" }");
  }
  if (c.buffer_donor) {
    out_->append(", buffer_donor={ ");
    for (size_t i = 0; i < c.buffer_donor->size(); ++i) {
      const auto& d = (*c.buffer_donor)[i];
      if (i) out_->append(", ");
      StrAppend(out_, "(", d.parameter, ", ");
      AppendShapeIndex(out_, d.index);
      out_->push_back(')');
    }
    out_->append(" }");
  }
  if (c.alias_passthrough_params) {
    StrAppend(out_, ", alias_passthrough_params=", *c.alias_passthrough_params);
  }
  if (c.entry_computation_layout) {
    out_->append(", entry_computation_layout={(");
    const auto& l = *c.entry_computation_layout;
    for (size_t i = 0; i < l.parameters.size(); ++i) {
      if (i) out_->append(", ");
      if (i > 0 && i % 5 == 0 && o_.print_index_annotations) {
        StrAppend(out_, "/*index=", static_cast<int64_t>(i), "*/");
      }
      AppendShapeWithIndex(out_, l.parameters[i], o_.print_index_annotations);
    }
    out_->append(")->");
    AppendShapeWithIndex(out_, l.result, o_.print_index_annotations);
    out_->push_back('}');
  }
  auto bools = [&](std::string_view key, const std::vector<bool>& v) {
    StrAppend(out_, ", ", key, "={");
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out_->push_back(',');
      out_->append(v[i] ? "true" : "false");
    }
    out_->push_back('}');
  };
  if (c.allow_spmd_sharding_propagation_to_parameters) {
    bools("allow_spmd_sharding_propagation_to_parameters",
          *c.allow_spmd_sharding_propagation_to_parameters);
  }
  if (c.allow_spmd_sharding_propagation_to_output) {
    bools("allow_spmd_sharding_propagation_to_output",
          *c.allow_spmd_sharding_propagation_to_output);
  }
  if (c.replica_count) StrAppend(out_, ", replica_count=", *c.replica_count);
  if (c.num_partitions) StrAppend(out_, ", num_partitions=", *c.num_partitions);
  if (c.frontend_attributes) {
    out_->append(", frontend_attributes=");
    AppendFrontendAttributes(out_, *c.frontend_attributes);
  }
  if (!c.origin_recovery_table.empty()) {
    StrAppend(out_, ", origin_recovery_table=", c.origin_recovery_table);
  }
  if (!c.debug_attributes.empty()) {
    StrAppend(out_, ", debug_attributes=", c.debug_attributes);
  }
  out_->append("\n\n");
  if (!c.stack_frames.empty() && !o_.canonical) {
    out_->append(c.stack_frames);
    out_->append("\n\n");
  }
  std::vector<Computation*> order = m.MakeComputationPostOrder();
  if (o_.canonical) order = CanonicalComputationOrder(m);
  if (o_.canonical) {
    int64_t ci = 0;
    for (Computation* comp : order) canon_comp_[comp] = StrCat("comp_", ci++);
  }
  bool first = true;
  for (Computation* comp : order) {
    if (comp->IsAsyncWrapper()) continue;  // printed as op-start shorthand
    if (!first) out_->push_back('\n');
    first = false;
    PrintComputation(*comp, comp == m.entry_computation());
  }
}

void ModulePrinter::PrintComputation(const Computation& c, bool is_entry) {
  std::vector<Instruction*> order;
  if (o_.canonical) {
    order = CanonicalInstructionOrder(c);
    int64_t k = 0;
    for (Instruction* i : order) canon_inst_[i] = StrCat("tmp_", k++);
  } else {
    order = PrintableOrder(c);
  }
  if (is_entry) out_->append("ENTRY ");
  Name(CompName(&c));
  out_->push_back(' ');
  if (o_.print_computation_signature) {
    out_->push_back('(');
    for (int64_t i = 0; i < c.num_parameters(); ++i) {
      const Instruction* p = c.parameter_instruction(i);
      if (i) out_->append(", ");
      if (p == nullptr) continue;
      StrAppend(out_, InstName(p), ": ");
      AppendShapeWithIndex(out_, p->shape(), o_.print_index_annotations,
                           /*layout=*/false);
    }
    out_->append(") -> ");
    if (c.root_instruction()) {
      AppendShapeWithIndex(out_, c.root_instruction()->shape(),
                           o_.print_index_annotations, /*layout=*/false);
    }
    out_->push_back(' ');
  }
  out_->append("{\n");
  for (const Instruction* i : order) {
    out_->append("  ");
    PrintInstruction(*i);
    out_->push_back('\n');
  }
  out_->push_back('}');
  if (!c.execution_thread().empty() && c.execution_thread() != "main") {
    out_->append(", execution_thread=");
    AppendQuoted(out_, c.execution_thread());
  }
  out_->push_back('\n');
}

void ModulePrinter::PrintInstruction(const Instruction& inst) {
  if (inst.IsRoot()) out_->append("ROOT ");
  Name(InstName(&inst));
  out_->append(" = ");
  AppendShapeWithIndex(out_, inst.shape(), o_.print_index_annotations);
  out_->push_back(' ');
  // Async shorthand: print `<op>-start` with the wrapped op's attributes.
  const Instruction* wrapped = nullptr;
  const Opcode op = inst.opcode();
  if ((op == Opcode::kAsyncStart || op == Opcode::kAsyncUpdate ||
       op == Opcode::kAsyncDone) &&
      !inst.called_computations().empty() &&
      inst.called_computations()[0]->IsAsyncWrapper()) {
    wrapped = inst.called_computations()[0]->root_instruction();
    out_->append(OpcodeName(wrapped->opcode()));
    out_->append(op == Opcode::kAsyncStart    ? "-start"
                 : op == Opcode::kAsyncUpdate ? "-update"
                                              : "-done");
  } else if (inst.attrs().async_wrapped_opcode) {
    out_->append(OpcodeName(*inst.attrs().async_wrapped_opcode));
    out_->append(op == Opcode::kAsyncUpdate ? "-update" : "-done");
  } else {
    out_->append(OpcodeName(op));
  }
  out_->push_back('(');
  if (op == Opcode::kParameter) {
    StrAppend(out_, inst.parameter_number());
  } else if (op == Opcode::kConstant) {
    const Literal& lit = inst.literal();
    if (!o_.print_large_constants && lit.element_count() > 16) {
      out_->append("{...}");
    } else if (lit.element_count() > 1000 && !lit.is_unknown() &&
               IsUniform(lit)) {
      // A bare scalar means "every element" to the parser; it keeps big
      // splat constants (zeros, ones) short.
      lit.AppendElement(0, out_);
    } else {
      lit.AppendTo(out_);
    }
  } else {
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (i) out_->append(", ");
      if (i > 0 && i % 5 == 0 && o_.print_index_annotations) {
        StrAppend(out_, "/*index=", i, "*/");
      }
      const Instruction* operand = inst.operand(i);
      if (o_.print_operand_shapes) {
        AppendShapeWithIndex(out_, operand->shape(),
                             o_.print_index_annotations);
        out_->push_back(' ');
      }
      Name(InstName(operand));
    }
  }
  out_->push_back(')');
  if (wrapped != nullptr && op == Opcode::kAsyncStart) {
    OpcodeSpecific(*wrapped);
    CalledComputations(*wrapped);
  } else if (wrapped == nullptr) {
    OpcodeSpecific(inst);
    CalledComputations(inst);
  } else {
    OpcodeSpecific(inst);  // update/done: their own aliasing, if any
  }
  const InstructionAttrs& a = inst.attrs();
  if (!a.async_execution_thread.empty()) {
    Attr("async_execution_thread");
    AppendQuoted(out_, a.async_execution_thread);
  }
  if (a.sharding) {
    Attr("sharding");
    AppendSharding(out_, *a.sharding);
  }
  if (!inst.frontend_attributes().empty()) {
    Attr("frontend_attributes");
    AppendFrontendAttributes(out_, inst.frontend_attributes());
  }
  if (!inst.control_predecessors().empty()) {
    std::vector<const Instruction*> preds(inst.control_predecessors().begin(),
                                          inst.control_predecessors().end());
    Attr("control-predecessors");
    out_->push_back('{');
    for (size_t i = 0; i < preds.size(); ++i) {
      if (i) out_->append(", ");
      Name(InstName(preds[i]));
    }
    out_->push_back('}');
  }
  if (!a.statistics_text.empty()) {
    Attr("statistics");
    out_->append(a.statistics_text);
  }
  if (!a.origin_text.empty()) {
    Attr("origin");
    out_->append(a.origin_text);
  }
  if (o_.print_metadata && !o_.canonical && inst.has_metadata()) {
    Attr("metadata");
    AppendMetadata(out_, inst.metadata());
  }
  const Instruction& cfg_holder =
      (wrapped != nullptr && op == Opcode::kAsyncStart) ? *wrapped : inst;
  if (o_.print_backend_config && !cfg_holder.backend_config().empty()) {
    Attr("backend_config");
    const std::string& cfg = cfg_holder.backend_config();
    if (IsRawBraceBlock(cfg)) {
      out_->append(cfg);
    } else {
      AppendQuoted(out_, cfg);
    }
  }
}

void ModulePrinter::OpcodeSpecific(const Instruction& inst) {
  const InstructionAttrs& a = inst.attrs();
  const Opcode op = inst.opcode();
  switch (op) {
    case Opcode::kGetTupleElement:
      Attr("index");
      StrAppend(out_, inst.tuple_index());
      break;
    case Opcode::kIota:
      Attr("iota_dimension");
      StrAppend(out_, inst.iota_dimension());
      break;
    case Opcode::kCompare:
      Attr("direction");
      out_->append(ComparisonDirectionName(inst.comparison_direction()));
      if (inst.comparison_type() != ComparisonType::kDefault) {
        Attr("type");
        out_->append(ComparisonTypeName(inst.comparison_type()));
      }
      break;
    case Opcode::kFusion:
      Attr("kind");
      out_->append(FusionKindName(inst.fusion_kind()));
      break;
    default:
      break;
  }
  // Collectives print dimensions after their replica groups, as XLA does.
  const bool collective = IsCollective(op);
  if (inst.has_dimensions() && !collective) {
    Attr("dimensions");
    AppendIntList(out_, inst.dimensions());
  }
  if (op == Opcode::kSort && a.is_stable) {
    Attr("is_stable");
    out_->append("true");
  }
  if (op == Opcode::kTopK) {
    Attr("k");
    StrAppend(out_, a.k);
    if (!a.largest) {
      Attr("largest");
      out_->append("false");
    }
    if (a.is_stable) {
      Attr("is_stable");
      out_->append("true");
    }
  }
  if (op == Opcode::kScan) {
    Attr("num_carries");
    StrAppend(out_, a.num_carries);
    if (a.is_reverse) {
      Attr("is_reverse");
      out_->append("true");
    }
    if (a.is_associative) {
      Attr("is_associative");
      out_->append(*a.is_associative ? "true" : "false");
    }
  }
  if (!a.slice.empty() || (op == Opcode::kSlice)) {
    Attr("slice");
    out_->push_back('{');
    for (size_t i = 0; i < a.slice.size(); ++i) {
      if (i) out_->append(", ");
      StrAppend(out_, "[", a.slice[i].start, ":", a.slice[i].limit);
      if (a.slice[i].stride != 1) StrAppend(out_, ":", a.slice[i].stride);
      out_->push_back(']');
    }
    out_->push_back('}');
  }
  if (op == Opcode::kDynamicSlice) {
    Attr("dynamic_slice_sizes");
    AppendIntList(out_, a.dynamic_slice_sizes);
  }
  if (a.has_padding) {
    Attr("padding");
    AppendPadding(out_, a.padding);
  }
  if (op == Opcode::kCustomCall && a.has_custom_call_target) {
    Attr("custom_call_target");
    AppendQuoted(out_, a.custom_call_target);
  }
  if (a.window && !a.window->dimensions.empty()) {
    Attr("window");
    AppendWindow(out_, *a.window);
  }
  if (a.conv_dnums) {
    Attr("dim_labels");
    AppendDimLabels(out_, *a.conv_dnums);
  }
  if (a.feature_group_count != 1) {
    Attr("feature_group_count");
    StrAppend(out_, a.feature_group_count);
  }
  if (a.batch_group_count != 1) {
    Attr("batch_group_count");
    StrAppend(out_, a.batch_group_count);
  }
  if (a.dot_dnums) {
    const auto& d = *a.dot_dnums;
    if (!d.lhs_batch_dimensions.empty()) {
      Attr("lhs_batch_dims");
      AppendIntList(out_, d.lhs_batch_dimensions);
    }
    if (!d.lhs_contracting_dimensions.empty() || op == Opcode::kDot) {
      Attr("lhs_contracting_dims");
      AppendIntList(out_, d.lhs_contracting_dimensions);
    }
    if (!d.rhs_batch_dimensions.empty()) {
      Attr("rhs_batch_dims");
      AppendIntList(out_, d.rhs_batch_dimensions);
    }
    if (!d.rhs_contracting_dimensions.empty() || op == Opcode::kDot) {
      Attr("rhs_contracting_dims");
      AppendIntList(out_, d.rhs_contracting_dimensions);
    }
  }
  if (a.ragged_dnums) {
    Attr("lhs_ragged_dims");
    AppendIntList(out_, a.ragged_dnums->lhs_ragged_dimensions);
    if (!a.ragged_dnums->rhs_group_dimensions.empty()) {
      Attr("rhs_group_dims");
      AppendIntList(out_, a.ragged_dnums->rhs_group_dimensions);
    }
  }
  if (a.gather_dnums) {
    const auto& g = *a.gather_dnums;
    Attr("offset_dims");
    AppendIntList(out_, g.offset_dims);
    Attr("collapsed_slice_dims");
    AppendIntList(out_, g.collapsed_slice_dims);
    Attr("start_index_map");
    AppendIntList(out_, g.start_index_map);
    if (!g.operand_batching_dims.empty()) {
      Attr("operand_batching_dims");
      AppendIntList(out_, g.operand_batching_dims);
    }
    if (!g.start_indices_batching_dims.empty()) {
      Attr("start_indices_batching_dims");
      AppendIntList(out_, g.start_indices_batching_dims);
    }
    Attr("index_vector_dim");
    StrAppend(out_, g.index_vector_dim);
    Attr("slice_sizes");
    AppendIntList(out_, a.gather_slice_sizes);
  }
  if (a.scatter_dnums) {
    const auto& s = *a.scatter_dnums;
    Attr("update_window_dims");
    AppendIntList(out_, s.update_window_dims);
    Attr("inserted_window_dims");
    AppendIntList(out_, s.inserted_window_dims);
    Attr("scatter_dims_to_operand_dims");
    AppendIntList(out_, s.scatter_dims_to_operand_dims);
    if (!s.input_batching_dims.empty()) {
      Attr("input_batching_dims");
      AppendIntList(out_, s.input_batching_dims);
    }
    if (!s.scatter_indices_batching_dims.empty()) {
      Attr("scatter_indices_batching_dims");
      AppendIntList(out_, s.scatter_indices_batching_dims);
    }
    Attr("index_vector_dim");
    StrAppend(out_, s.index_vector_dim);
  }
  if (a.indices_are_sorted) {
    Attr("indices_are_sorted");
    out_->append("true");
  }
  if (a.unique_indices) {
    Attr("unique_indices");
    out_->append("true");
  }
  if (!a.operand_precision.empty() &&
      std::any_of(a.operand_precision.begin(), a.operand_precision.end(),
                  [](Precision p) { return p != Precision::kDefault; })) {
    Attr("operand_precision");
    out_->push_back('{');
    for (size_t i = 0; i < a.operand_precision.size(); ++i) {
      if (i) out_->push_back(',');
      out_->append(PrecisionName(a.operand_precision[i]));
    }
    out_->push_back('}');
  }
  if (!a.algorithm.empty()) {
    Attr("algorithm");
    out_->append(a.algorithm);
  }
  if (!a.convolution_kind.empty()) {
    Attr("convolution_kind");
    out_->append(a.convolution_kind);
  }
  if (!a.sparsity_config.empty()) {
    Attr("sparsity_config");
    out_->append(a.sparsity_config);
  }
  if (a.operand_layout_constraints) {
    Attr("operand_layout_constraints");
    out_->push_back('{');
    for (size_t i = 0; i < a.operand_layout_constraints->size(); ++i) {
      if (i) out_->append(", ");
      AppendShapeWithIndex(out_, (*a.operand_layout_constraints)[i],
                           o_.print_index_annotations);
    }
    out_->push_back('}');
  }
  if (a.custom_call_has_side_effect) {
    Attr("custom_call_has_side_effect");
    out_->append("true");
  }
  if (a.custom_call_literal) {
    Attr("literal");
    const Literal& lit = *a.custom_call_literal;
    if (lit.shape().IsTuple()) {
      out_->append("( ");
      for (size_t i = 0; i < lit.tuple_elements().size(); ++i) {
        if (i) out_->append(", ");
        lit.tuple_elements()[i].shape().AppendTo(out_);
        out_->push_back(' ');
        lit.tuple_elements()[i].AppendTo(out_);
      }
      out_->append(" )");
    } else {
      lit.shape().AppendTo(out_);
      out_->push_back(' ');
      lit.AppendTo(out_);
    }
  }
  if (!a.padding_type.empty()) {
    Attr("padding_type");
    out_->append(a.padding_type);
  }
  if (a.has_output_to_operand_aliasing) {
    Attr("output_to_operand_aliasing");
    out_->push_back('{');
    for (size_t i = 0; i < a.output_to_operand_aliasing.size(); ++i) {
      const auto& e = a.output_to_operand_aliasing[i];
      if (i) out_->append(", ");
      AppendShapeIndex(out_, e.output_index);
      StrAppend(out_, ": (", e.operand, ", ");
      AppendShapeIndex(out_, e.operand_index);
      out_->push_back(')');
    }
    out_->push_back('}');
  }
  if (!a.schedule.empty()) {
    Attr("schedule");
    out_->append(a.schedule);
  }
  if (a.api_version != CustomCallApiVersion::kUnspecified) {
    Attr("api_version");
    out_->append(CustomCallApiVersionName(a.api_version));
  }
  // Collectives.
  if (a.channel_id) {
    Attr("channel_id");
    StrAppend(out_, *a.channel_id);
  }
  if (a.replica_groups) {
    Attr("replica_groups");
    AppendReplicaGroups(out_, *a.replica_groups);
  }
  if (a.constrain_layout) {
    Attr("constrain_layout");
    out_->append("true");
  }
  // reduce-scatter writes use_global_device_ids first, the others last.
  const bool rs = op == Opcode::kReduceScatter;
  if (a.use_global_device_ids && rs) {
    Attr("use_global_device_ids");
    out_->append("true");
  }
  if (inst.has_dimensions() && collective) {
    Attr("dimensions");
    AppendIntList(out_, inst.dimensions());
  }
  if (a.use_global_device_ids && !rs) {
    Attr("use_global_device_ids");
    out_->append("true");
  }
  if (a.has_source_target_pairs) {
    Attr("source_target_pairs");
    out_->push_back('{');
    for (size_t i = 0; i < a.source_target_pairs.size(); ++i) {
      if (i) out_->push_back(',');
      StrAppend(out_, "{", a.source_target_pairs[i].first, ",",
                a.source_target_pairs[i].second, "}");
    }
    out_->push_back('}');
  }
  if (!a.permute_slice_sizes.empty()) {
    Attr("slice_sizes");
    out_->push_back('{');
    for (size_t i = 0; i < a.permute_slice_sizes.size(); ++i) {
      if (i) out_->push_back(',');
      AppendIntList(out_, a.permute_slice_sizes[i]);
    }
    out_->push_back('}');
  }
  if (a.has_dynamic_root) {
    Attr("has_dynamic_root");
    out_->append("true");
  }
  if (a.cross_program_prefetch_index) {
    Attr("cross_program_prefetch_index");
    StrAppend(out_, *a.cross_program_prefetch_index);
  }
  if (a.is_host_transfer) {
    Attr("is_host_transfer");
    out_->append("true");
  }
  switch (op) {
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: {
      Attr("epsilon");
      AppendFloat(PrimitiveType::kF32, std::bit_cast<uint32_t>(a.epsilon),
                  out_);
      Attr("feature_index");
      StrAppend(out_, a.feature_index);
      break;
    }
    case Opcode::kReducePrecision:
      Attr("exponent_bits");
      StrAppend(out_, a.exponent_bits);
      Attr("mantissa_bits");
      StrAppend(out_, a.mantissa_bits);
      break;
    case Opcode::kFft: {
      static constexpr std::string_view kTypes[] = {"FFT", "IFFT", "RFFT",
                                                    "IRFFT"};
      Attr("fft_type");
      out_->append(kTypes[static_cast<int>(a.fft_type)]);
      Attr("fft_length");
      AppendIntList(out_, a.fft_length);
      break;
    }
    case Opcode::kTriangularSolve: {
      static constexpr std::string_view kT[] = {"NO_TRANSPOSE", "TRANSPOSE",
                                                "ADJOINT"};
      if (a.left_side) {
        Attr("left_side");
        out_->append("true");
      }
      if (a.lower) {
        Attr("lower");
        out_->append("true");
      }
      if (a.unit_diagonal) {
        Attr("unit_diagonal");
        out_->append("true");
      }
      Attr("transpose_a");
      out_->append(kT[static_cast<int>(a.transpose_a)]);
      break;
    }
    case Opcode::kCholesky:
      if (a.lower) {
        Attr("lower");
        out_->append("true");
      }
      break;
    case Opcode::kRng:
      Attr("distribution");
      out_->append(a.distribution == RandomDistribution::kUniform
                       ? "rng_uniform"
                       : "rng_normal");
      break;
    case Opcode::kRngGetAndUpdateState:
      Attr("delta");
      StrAppend(out_, a.delta);
      break;
    case Opcode::kReshape:
      if (a.inferred_dimension) {
        Attr("inferred_dimension");
        StrAppend(out_, *a.inferred_dimension);
      }
      break;
    case Opcode::kInfeed:
      if (!a.infeed_config.empty()) {
        Attr("infeed_config");
        AppendQuoted(out_, a.infeed_config);
      }
      break;
    case Opcode::kOutfeed:
      if (a.outfeed_shape) {
        Attr("outfeed_shape");
        AppendShapeWithIndex(out_, *a.outfeed_shape,
                             o_.print_index_annotations);
      }
      if (!a.outfeed_config.empty()) {
        Attr("outfeed_config");
        AppendQuoted(out_, a.outfeed_config);
      }
      break;
    case Opcode::kDomain:
      Attr("domain");
      out_->append(a.domain_text);
      break;
    default:
      break;
  }
  if (!a.result_accuracy_text.empty()) {
    Attr("result_accuracy");
    out_->append(a.result_accuracy_text);
  }
  if (a.parameter_replication) {
    Attr("parameter_replication");
    out_->push_back('{');
    for (size_t i = 0; i < a.parameter_replication->size(); ++i) {
      if (i) out_->push_back(',');
      out_->append((*a.parameter_replication)[i] ? "true" : "false");
    }
    out_->push_back('}');
  }
  for (const auto& [key, value] : a.unknown) {
    Attr(key);
    out_->append(value);
  }
}

void ModulePrinter::CalledComputations(const Instruction& inst) {
  const auto& called = inst.called_computations();
  if (called.empty()) return;
  switch (inst.opcode()) {
    case Opcode::kWhile:
      Attr("condition");
      CompRef(called[0]);
      if (called.size() > 1) {
        Attr("body");
        CompRef(called[1]);
      }
      break;
    case Opcode::kSelectAndScatter:
      Attr("select");
      CompRef(called[0]);
      if (called.size() > 1) {
        Attr("scatter");
        CompRef(called[1]);
      }
      break;
    case Opcode::kConditional:
      if (inst.operand_count() > 0 &&
          inst.operand(0)->shape().element_type() == PrimitiveType::kPred &&
          called.size() == 2) {
        Attr("true_computation");
        CompRef(called[0]);
        Attr("false_computation");
        CompRef(called[1]);
      } else {
        Attr("branch_computations");
        CompList(called);
      }
      break;
    case Opcode::kFusion:
      break;  // kind=... then calls=, below
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      if (inst.opcode() != Opcode::kAsyncStart) {
        // update/done reach the computation through their operand, unless
        // that operand is not an async op (a loop-carried tuple element).
        const Instruction* prev =
            inst.operand_count() > 0 ? inst.operand(0) : nullptr;
        const bool implied = prev != nullptr &&
                             (prev->opcode() == Opcode::kAsyncStart ||
                              prev->opcode() == Opcode::kAsyncUpdate) &&
                             !prev->called_computations().empty() &&
                             prev->called_computations()[0] == called[0];
        if (implied) break;
      }
      Attr("calls");
      CompRef(called[0]);
      break;
    case Opcode::kCustomCall:
      Attr("called_computations");
      CompList(called);
      break;
    default:
      if (called.size() == 1) {
        Attr("to_apply");
        CompRef(called[0]);
      } else {
        Attr("calls");
        CompList(called);
      }
      break;
  }
  if (inst.opcode() == Opcode::kFusion) {
    Attr("calls");
    CompRef(called[0]);
  }
  if (inst.opcode() == Opcode::kCall && inst.attrs().is_composite) {
    Attr("is_composite");
    out_->append("true");
  }
}

}  // namespace

void AppendModule(const Module& module, const PrintOptions& options,
                  std::string* out) {
  ModulePrinter p(options, out);
  p.PrintModule(module);
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out;
  out.reserve(static_cast<size_t>(module.instruction_count()) * 96);
  AppendModule(module, options, &out);
  return out;
}

std::string PrintComputation(const Computation& computation,
                             const PrintOptions& options) {
  std::string out;
  ModulePrinter p(options, &out);
  p.PrintComputation(
      computation,
      computation.parent() &&
          computation.parent()->entry_computation() == &computation);
  return out;
}

std::string PrintInstruction(const Instruction& inst,
                             const PrintOptions& options) {
  std::string out;
  ModulePrinter p(options, &out);
  p.PrintInstruction(inst);
  return out;
}

std::string ShardingToString(const Sharding& sharding) {
  std::string s;
  AppendSharding(&s, sharding);
  return s;
}
std::string WindowToString(const Window& window) {
  std::string s;
  AppendWindow(&s, window);
  return s;
}
std::string ConvolutionDimensionNumbersToString(
    const ConvolutionDimensionNumbers& dnums) {
  std::string s;
  AppendDimLabels(&s, dnums);
  return s;
}
std::string ReplicaGroupsToString(const ReplicaGroups& groups) {
  std::string s;
  AppendReplicaGroups(&s, groups);
  return s;
}
std::string MetadataToString(const OpMetadata& metadata) {
  std::string s;
  AppendMetadata(&s, metadata);
  return s;
}
std::string PaddingConfigToString(const PaddingConfig& padding) {
  std::string s;
  AppendPadding(&s, padding);
  return s;
}
std::string QuoteString(std::string_view s) {
  std::string out;
  AppendQuoted(&out, s);
  return out;
}

}  // namespace hlogym
