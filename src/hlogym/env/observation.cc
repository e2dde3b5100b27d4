#include "hlogym/env/observation.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string_view>

#include "absl/status/status.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/alternative_graph.h"

namespace hlogym {
namespace {

constexpr int kSlots = EdgeFeatures::kSlots;
constexpr int kMaxDims = 6;    // dimensions encoded per attribute list
constexpr int kNoDim = 6;      // one-hot position meaning "none"
constexpr int kDimOneHot = 7;  // width of a dimension one-hot
constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kPrefetchDistance = 4;

int64_t SatMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return kMax64;
  return r;
}
int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return kMax64;
  return r;
}
// |v| for a product of slots; |INT64_MIN| (an unbounded dimension)
// saturates.
int64_t AbsSat(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min()) return kMax64;
  return v < 0 ? -v : v;
}
int32_t Clamp32(int64_t v) {
  return static_cast<int32_t>(
      std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max()));
}

// ---- Per-opcode attribute vectors.

void OneHot(std::vector<int32_t>* out, int64_t item, int width) {
  const size_t base = out->size();
  out->resize(base + width, 0);
  if (item < 0 || item >= width) item = width - 1;
  (*out)[base + item] = 1;
}

// A dimension index: 0..5, or 6 for "none" and for indices that do not fit.
void DimOneHot(std::vector<int32_t>* out, int64_t d) {
  OneHot(out, (d < 0 || d > kNoDim) ? kNoDim : d, kDimOneHot);
}

template <typename Range>
void DimList(std::vector<int32_t>* out, const Range& dims) {
  int n = 0;
  for (int64_t d : dims) {
    if (n == kMaxDims) break;
    DimOneHot(out, d);
    ++n;
  }
  for (; n < kMaxDims; ++n) DimOneHot(out, kNoDim);
}

// `count` integers from `values` (truncated), -1 padded.
template <typename Range>
void IntList(std::vector<int32_t>* out, const Range& values, int count) {
  int n = 0;
  for (int64_t v : values) {
    if (n == count) break;
    out->push_back(Clamp32(v));
    ++n;
  }
  for (; n < count; ++n) out->push_back(-1);
}

// XLA's Comparison::Direction order: EQ NE GE GT LE LT.
int DirectionNumber(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq:
      return 0;
    case ComparisonDirection::kNe:
      return 1;
    case ComparisonDirection::kGe:
      return 2;
    case ComparisonDirection::kGt:
      return 3;
    case ComparisonDirection::kLe:
      return 4;
    case ComparisonDirection::kLt:
      return 5;
  }
  return 0;
}

// XLA's Comparison::Type order: FLOAT TOTALORDER SIGNED UNSIGNED. An
// unwritten type is the default of the operands' element type.
int ComparisonTypeNumber(const Instruction& inst) {
  switch (inst.comparison_type()) {
    case ComparisonType::kFloat:
      return 0;
    case ComparisonType::kTotalOrder:
      return 1;
    case ComparisonType::kSigned:
      return 2;
    case ComparisonType::kUnsigned:
      return 3;
    case ComparisonType::kDefault:
      break;
  }
  if (inst.operand_count() == 0) return 0;
  const PrimitiveType t = inst.operand(0)->shape().element_type();
  if (IsSignedIntegralType(t)) return 2;
  if (IsUnsignedIntegralType(t) || t == PrimitiveType::kPred) return 3;
  return 0;
}

int CustomCallTargetNumber(std::string_view target) {
  static constexpr std::array<std::string_view, 12> kTargets = {
      "__cublas$gemm",
      "__cublas$triangularSolve",
      "__cudnn$convBackwardFilter",
      "__cudnn$convBackwardInput",
      "__cudnn$convBiasActivationForward",
      "__cudnn$convForward",
      "cublas_trsm_batched",
      "cuda_lu_pivots_to_permutation",
      "cuda_threefry2x32",
      "cusolver_getrf",
      "cusolver_potrf",
      "cusolver_syevd",
  };
  for (size_t i = 0; i < kTargets.size(); ++i) {
    if (kTargets[i] == target) return static_cast<int>(i);
  }
  return static_cast<int>(kTargets.size());  // unknown
}

// Appends `inst`'s attribute vector; returns its widths.
OpcodeAttrWidths AppendOpcodeAttrs(const Instruction& inst,
                                   std::vector<int32_t>* out) {
  const OpcodeAttrWidths widths = OpcodeAttrWidthsOf(inst.opcode());
  if (widths.ints == 0 && widths.one_hot == 0) return widths;
  const InstructionAttrs& a = inst.attrs();
  switch (inst.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kReduce:
    case Opcode::kReverse:
    case Opcode::kTranspose:
      DimList(out, inst.dimensions());
      break;
    case Opcode::kCompare:
      OneHot(out, DirectionNumber(inst.comparison_direction()), 6);
      OneHot(out, ComparisonTypeNumber(inst), 4);
      break;
    case Opcode::kConvolution: {
      if (a.window.has_value() && a.window->dimensions.size() == 2) {
        for (const WindowDimension& w : a.window->dimensions) {
          out->push_back(Clamp32(w.size));
          out->push_back(Clamp32(w.stride));
          out->push_back(Clamp32(w.padding_low));
          out->push_back(Clamp32(w.padding_high));
          out->push_back(Clamp32(w.base_dilation));
          out->push_back(Clamp32(w.window_dilation));
          out->push_back(w.window_reversal ? 1 : 0);
        }
      } else {
        out->resize(out->size() + 14, 0);
      }
      out->push_back(Clamp32(a.feature_group_count));
      out->push_back(Clamp32(a.batch_group_count));
      const ConvolutionDimensionNumbers dn =
          a.conv_dnums.value_or(ConvolutionDimensionNumbers{
              kNoDim, kNoDim, {}, kNoDim, kNoDim, {}, kNoDim, kNoDim, {}});
      DimOneHot(out, dn.input_batch_dimension);
      DimOneHot(out, dn.input_feature_dimension);
      DimList(out, dn.input_spatial_dimensions);
      DimOneHot(out, dn.kernel_input_feature_dimension);
      DimOneHot(out, dn.kernel_output_feature_dimension);
      DimList(out, dn.kernel_spatial_dimensions);
      DimOneHot(out, dn.output_batch_dimension);
      DimOneHot(out, dn.output_feature_dimension);
      DimList(out, dn.output_spatial_dimensions);
      break;
    }
    case Opcode::kDot: {
      const DotDimensionNumbers dn =
          a.dot_dnums.value_or(DotDimensionNumbers{});
      DimList(out, dn.lhs_batch_dimensions);
      DimList(out, dn.lhs_contracting_dimensions);
      DimList(out, dn.rhs_batch_dimensions);
      DimList(out, dn.rhs_contracting_dimensions);
      int precision = 0;
      if (!a.operand_precision.empty() &&
          a.operand_precision[0] != Precision::kPackedNibble) {
        precision = static_cast<int>(a.operand_precision[0]);
      }
      OneHot(out, precision, 3);
      break;
    }
    case Opcode::kDynamicSlice:
      IntList(out, a.dynamic_slice_sizes, 6);
      break;
    case Opcode::kGather: {
      const GatherDimensionNumbers dn =
          a.gather_dnums.value_or(GatherDimensionNumbers{});
      out->push_back(Clamp32(dn.index_vector_dim));
      IntList(out, a.gather_slice_sizes, 6);
      DimList(out, dn.offset_dims);
      DimList(out, dn.collapsed_slice_dims);
      DimList(out, dn.start_index_map);
      OneHot(out, a.indices_are_sorted ? 1 : 0, 2);
      break;
    }
    case Opcode::kGetTupleElement:
      out->push_back(Clamp32(inst.tuple_index()));
      break;
    case Opcode::kIota:
      DimOneHot(out, std::min<int64_t>(kNoDim, inst.iota_dimension()));
      break;
    case Opcode::kPad: {
      int n = 0;
      for (const PaddingDimension& p : a.padding) {
        if (n == kMaxDims) break;
        out->push_back(Clamp32(p.low));
        out->push_back(Clamp32(p.high));
        out->push_back(Clamp32(p.interior));
        ++n;
      }
      out->resize(out->size() + 3 * (kMaxDims - n), -1);
      break;
    }
    case Opcode::kScatter: {
      const ScatterDimensionNumbers dn =
          a.scatter_dnums.value_or(ScatterDimensionNumbers{});
      out->push_back(Clamp32(dn.index_vector_dim));
      DimList(out, dn.update_window_dims);
      DimList(out, dn.inserted_window_dims);
      DimList(out, dn.scatter_dims_to_operand_dims);
      OneHot(out, a.indices_are_sorted ? 1 : 0, 2);
      OneHot(out, a.unique_indices ? 1 : 0, 2);
      break;
    }
    case Opcode::kSlice: {
      int n = 0;
      for (const SliceDimension& s : a.slice) {
        if (n == kMaxDims) break;
        out->push_back(Clamp32(s.start));
        out->push_back(Clamp32(s.limit));
        out->push_back(Clamp32(s.stride));
        ++n;
      }
      out->resize(out->size() + 3 * (kMaxDims - n), -1);
      break;
    }
    case Opcode::kSort:
      DimOneHot(out, inst.dimensions().empty() ? 0 : inst.dimensions(0));
      OneHot(out, a.is_stable ? 1 : 0, 2);
      break;
    case Opcode::kTriangularSolve:
      OneHot(out, a.left_side ? 1 : 0, 2);
      OneHot(out, a.lower ? 1 : 0, 2);
      OneHot(out, a.unit_diagonal ? 1 : 0, 2);
      // XLA numbers TRANSPOSE_INVALID as 0, so ours shift by one.
      OneHot(out, static_cast<int>(a.transpose_a) + 1, 4);
      break;
    case Opcode::kCustomCall:
      OneHot(out, CustomCallTargetNumber(a.custom_call_target), 13);
      break;
    default:
      break;
  }
  return widths;
}

// ---- Shape slots of an edge's producer.

struct ShapeSlots {
  int64_t dims[kSlots];
  int64_t layouts[kSlots];
  int64_t lehmer[kSlots];
};

int64_t SlotRank(const Shape& s) {
  return s.IsArray() ? std::min<int64_t>(s.rank(), kSlots) : 0;
}

// |product of the 8 dims slots|: padding slots are -1, so only the sizes
// count.
int64_t ShapeTensorSize(const Shape& s) {
  const int64_t r = SlotRank(s);
  int64_t p = 1;
  for (int64_t k = 0; k < r; ++k) p = SatMul(p, AbsSat(s.dimensions(k)));
  return p;
}

void FillSlots(const Shape& s, ShapeSlots* out) {
  const int64_t r = SlotRank(s);
  const int64_t rank = s.IsArray() ? s.rank() : 0;
  const bool own_layout =
      s.has_layout() &&
      static_cast<int64_t>(s.layout().minor_to_major.size()) == rank;
  for (int64_t k = 0; k < r; ++k) {
    out->dims[k] = s.dimensions(k);
    out->layouts[k] = own_layout ? s.layout().minor_to_major[k] : rank - 1 - k;
  }
  for (int64_t k = 0; k < r; ++k) {
    int64_t lehmer = 0;
    for (int64_t l = 0; l < k; ++l) {
      lehmer += out->layouts[l] > out->layouts[k] ? 1 : 0;
    }
    out->lehmer[k] = lehmer;
  }
  for (int64_t k = r; k < kSlots; ++k) {
    out->dims[k] = -1;
    out->layouts[k] = -1;
    out->lehmer[k] = 0;
  }
}

// Opcode numbers of every opcode in `numbering`, -1 when absent.
const std::array<int32_t, kNumOpcodes>& NumberTable(OpcodeNumbering numbering) {
  static const auto make = [](OpcodeNumbering n) {
    std::array<int32_t, kNumOpcodes> t;
    for (int i = 0; i < kNumOpcodes; ++i) {
      absl::StatusOr<int32_t> v = OpcodeNumber(static_cast<Opcode>(i), n);
      t[i] = v.ok() ? *v : -1;
    }
    return t;
  };
  static const std::array<int32_t, kNumOpcodes> kHloGymTable =
      make(OpcodeNumbering::kHloGym);
  static const std::array<int32_t, kNumOpcodes> kHloEnvTable =
      make(OpcodeNumbering::kHloEnv);
  return numbering == OpcodeNumbering::kHloGym ? kHloGymTable : kHloEnvTable;
}

const std::vector<int32_t>& CachedAttrCountTable(OpcodeNumbering numbering) {
  static const std::vector<int32_t> kHloGymTable =
      OpcodeAttrCountTable(OpcodeNumbering::kHloGym);
  static const std::vector<int32_t> kHloEnvTable =
      OpcodeAttrCountTable(OpcodeNumbering::kHloEnv);
  return numbering == OpcodeNumbering::kHloGym ? kHloGymTable : kHloEnvTable;
}

// (src uid << 32) | dst uid, 32 bits each (uids are read from the node
// features: the instructions themselves are scattered in memory).
int64_t EdgeUid(int64_t src_uid, int64_t dst_uid) {
  const uint64_t hi = static_cast<uint32_t>(src_uid);
  const uint64_t lo = static_cast<uint32_t>(dst_uid);
  return static_cast<int64_t>((hi << 32) | lo);
}

void ClearEdges(EdgeFeatures* e) {
  e->uids.clear();
  e->srcs.clear();
  e->dsts.clear();
  e->dims.clear();
  e->layouts.clear();
  e->lehmercodes.clear();
  e->types.clear();
  e->dtypes.clear();
}

void ReserveEdges(EdgeFeatures* e, size_t n) {
  e->uids.reserve(n);
  e->srcs.reserve(n);
  e->dsts.reserve(n);
  e->dims.reserve(n * kSlots);
  e->layouts.reserve(n * kSlots);
  e->lehmercodes.reserve(n * kSlots);
  e->types.reserve(n);
  e->dtypes.reserve(n);
}

void AppendIds(EdgeFeatures* e, int64_t uid, int64_t src, int64_t dst,
               uint8_t type) {
  e->uids.push_back(uid);
  e->srcs.push_back(static_cast<int32_t>(src));
  e->dsts.push_back(static_cast<int32_t>(dst));
  e->types.push_back(type);
}

// Appends the 8 slots at `src` (a fixed-size copy the compiler inlines).
void Append8(std::vector<int64_t>* v, const int64_t* src) {
  const size_t at = v->size();
  v->resize(at + kSlots);
  std::memcpy(v->data() + at, src, kSlots * sizeof(int64_t));
}

// An edge whose producer is described by `s`.
void AppendEdge(EdgeFeatures* e, int64_t uid, int64_t src, int64_t dst,
                const ShapeSlots& s, uint8_t type, int32_t dtype) {
  AppendIds(e, uid, src, dst, type);
  Append8(&e->dims, s.dims);
  Append8(&e->layouts, s.layouts);
  Append8(&e->lehmercodes, s.lehmer);
  e->dtypes.push_back(dtype);
}

// An edge with the same producer as edge `k` of `from`.
void AppendEdge(EdgeFeatures* e, int64_t uid, int64_t src, int64_t dst,
                const EdgeFeatures& from, size_t k, uint8_t type) {
  AppendIds(e, uid, src, dst, type);
  const size_t at = k * kSlots;
  Append8(&e->dims, from.dims.data() + at);
  Append8(&e->layouts, from.layouts.data() + at);
  Append8(&e->lehmercodes, from.lehmercodes.data() + at);
  e->dtypes.push_back(from.dtypes[k]);
}

absl::Status UnknownOpcodeError(Opcode op) {
  return OpcodeNumber(op, OpcodeNumbering::kHloEnv).status();
}

}  // namespace

int64_t EdgeFeatures::TensorSize(int64_t edge) const {
  int64_t p = 1;
  for (int k = 0; k < kSlots; ++k)
    p = SatMul(p, AbsSat(dims[edge * kSlots + k]));
  return p;
}

absl::Status BuildObservationInto(const Module& module,
                                  const ObservationOptions& options,
                                  Observation* obs) {
  if (options.inline_fused_comp) {
    return absl::UnimplementedError(
        "observation: inlining called computations (inline_fused_comp) is "
        "not supported");
  }
  if (module.entry_computation() == nullptr) {
    return absl::InvalidArgumentError(StrCat(
        "observation: module '", module.name(), "' has no entry computation"));
  }
  const std::array<int32_t, kNumOpcodes>& numbers =
      NumberTable(options.numbering);

  // Nodes, in ObservationOrder; computation boundaries give the gids.
  const std::vector<Computation*> comps = ObservationComputationOrder(module);
  std::vector<Instruction*> nodes;
  nodes.reserve(module.instruction_count());
  std::vector<size_t> comp_begin;
  comp_begin.reserve(comps.size() + 1);
  for (Computation* c : comps) {
    comp_begin.push_back(nodes.size());
    // Numbered while the post-order has them in cache. Post-orders of
    // other computations do not touch these instructions' scratch.
    for (Instruction* inst : c->MakeInstructionPostOrder()) {
      inst->scratch = static_cast<int64_t>(nodes.size());
      nodes.push_back(inst);
    }
  }
  comp_begin.push_back(nodes.size());
  const int64_t n = static_cast<int64_t>(nodes.size());
  if (n > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        StrCat("observation: ", n, " nodes exceed the int32 node index"));
  }
  for (size_t g = 0; g < comps.size(); ++g) {
    comps[g]->scratch = static_cast<int64_t>(g);
  }
  auto index_of = [&](const Instruction* x) -> int64_t {
    const int64_t s = x->scratch;
    return (s >= 0 && s < n && nodes[s] == x) ? s : -1;
  };

  // Vectors are resized or cleared, which keeps their capacity: observing
  // similar graphs again with the same `obs` touches no fresh memory.
  NodeFeatures& nf = obs->node_features;
  nf.uids.resize(n);
  nf.names.resize(n);
  nf.gids.resize(n);
  nf.fused_comp_ids.assign(n, 0);
  nf.num_users.resize(n);
  nf.num_operands.resize(n);
  nf.opcodes.resize(n);
  nf.opcode_attrs.clear();
  nf.num_opcode_attrs.resize(2 * n);
  nf.is_alternative.assign(n, 0);
  nf.is_in_fusion.resize(n);
  nf.in_tensor_sizes.resize(n);
  nf.out_tensor_sizes.resize(n);
  nf.has_max_in_tensor.resize(n);
  nf.has_max_out_tensor.resize(n);
  nf.normalized_num_group_inst.resize(n);
  obs->alternative_indices.clear();

  // Per-computation features.
  for (size_t g = 0; g < comps.size(); ++g) {
    const size_t begin = comp_begin[g], end = comp_begin[g + 1];
    const float norm =
        (g > 0 && end > begin) ? 1.0f / static_cast<float>(end - begin) : 0.0f;
    const uint8_t in_fusion = comps[g]->IsFusionComputation() ? 1 : 0;
    for (size_t i = begin; i < end; ++i) {
      nf.gids[i] = g;
      nf.normalized_num_group_inst[i] = norm;
      nf.is_in_fusion[i] = in_fusion;
    }
  }

  // One pass in node order builds the CSR lists, the node features and the
  // edge features. Post-order puts every operand before its users, so an
  // in-edge copies the features its producer wrote on its first out-edge,
  // and each instruction's shape is read once.
  obs->in_edge_offsets.resize(n + 1);
  obs->out_edge_offsets.resize(n + 1);
  obs->in_edge_offsets[0] = 0;
  obs->out_edge_offsets[0] = 0;
  obs->in_edge_indices.clear();
  obs->out_edge_indices.clear();
  EdgeFeatures& in = obs->in_edge_features;
  EdgeFeatures& out = obs->out_edge_features;
  ClearEdges(&in);
  ClearEdges(&out);
  const size_t expected_edges = static_cast<size_t>(n + n / 2);
  obs->in_edge_indices.reserve(expected_edges);
  obs->out_edge_indices.reserve(expected_edges);
  ReserveEdges(&in, expected_edges);
  ReserveEdges(&out, expected_edges);
  std::vector<int32_t> seen_by(n, -1);  // dedups operands: last node seen
  std::vector<int64_t> tensor_size(n);
  ShapeSlots slots;
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* inst = nodes[i];
    const uint64_t gid = nf.gids[i];
    const int64_t uid = inst->unique_id();
    // Users and operands are scattered in memory; fetching those of a node
    // a few steps ahead hides most of the misses on large graphs.
    if (i + kPrefetchDistance < n) {
      const Instruction* ahead = nodes[i + kPrefetchDistance];
      for (const Instruction* u : ahead->users()) __builtin_prefetch(u);
      for (const Instruction* o : ahead->operands()) __builtin_prefetch(o);
    }
    nf.uids[i] = static_cast<int32_t>(uid);
    tensor_size[i] = ShapeTensorSize(inst->shape());

    // In-edges.
    int64_t in_size = 0;
    for (const Instruction* op : inst->operands()) {
      const int64_t j = index_of(op);
      if (j < 0) {
        return absl::InternalError(
            StrCat("observation: operand '", op->name(), "' of '", inst->name(),
                   "' is not an instruction of the graph"));
      }
      if (seen_by[j] == i) continue;
      seen_by[j] = static_cast<int32_t>(i);
      obs->in_edge_indices.push_back(static_cast<uint64_t>(j));
      const uint64_t sgid = nf.gids[j];
      const uint8_t type = sgid == gid ? (gid == 0 ? 0 : 1) : 2;
      if (j < i && obs->out_edge_offsets[j] < obs->out_edge_offsets[j + 1]) {
        const size_t first = obs->out_edge_offsets[j];
        AppendEdge(&in, EdgeUid(nf.uids[j], uid), j, i, out, first, type);
        in_size = SatAdd(in_size, tensor_size[j]);
      } else {
        // Only in graphs whose operand lists disagree with the user lists
        // or the post-order: describe the producer directly.
        FillSlots(op->shape(), &slots);
        AppendEdge(&in, EdgeUid(op->unique_id(), uid), j, i, slots, type,
                   XlaPrimitiveTypeNumber(op->shape().element_type()));
        in_size = SatAdd(in_size, ShapeTensorSize(op->shape()));
      }
    }
    obs->in_edge_offsets[i + 1] = obs->in_edge_indices.size();
    nf.in_tensor_sizes[i] = in_size;

    // Out-edges.
    bool filled = false;
    int32_t dtype = 0;
    for (const Instruction* user : inst->users()) {
      const int64_t j = index_of(user);
      if (j < 0) {
        if (user->is_detached()) continue;
        return absl::InternalError(
            StrCat("observation: user '", user->name(), "' of '", inst->name(),
                   "' is not an instruction of the graph"));
      }
      if (!filled) {
        FillSlots(inst->shape(), &slots);
        dtype = XlaPrimitiveTypeNumber(inst->shape().element_type());
        filled = true;
      }
      obs->out_edge_indices.push_back(static_cast<uint64_t>(j));
      const uint64_t dgid = nf.gids[j];
      const uint8_t type = gid == dgid ? (gid == 0 ? 0 : 1) : 2;
      AppendEdge(&out, EdgeUid(uid, user->unique_id()), i, j, slots, type,
                 dtype);
    }
    obs->out_edge_offsets[i + 1] = obs->out_edge_indices.size();

    const int64_t num_in = static_cast<int64_t>(obs->in_edge_offsets[i + 1] -
                                                obs->in_edge_offsets[i]);
    const int64_t num_out = static_cast<int64_t>(obs->out_edge_offsets[i + 1] -
                                                 obs->out_edge_offsets[i]);
    nf.num_operands[i] = static_cast<int32_t>(num_in);
    nf.num_users[i] = static_cast<int32_t>(num_out);
    nf.out_tensor_sizes[i] = options.hloenv_out_tensor_sizes
                                 ? SatMul(tensor_size[i], num_out)
                                 : tensor_size[i];
    nf.names[i] = inst->name();
    const int32_t number = numbers[static_cast<int>(inst->opcode())];
    if (number < 0) return UnknownOpcodeError(inst->opcode());
    nf.opcodes[i] = number;
    const OpcodeAttrWidths w = AppendOpcodeAttrs(*inst, &nf.opcode_attrs);
    nf.num_opcode_attrs[2 * i] = w.ints;
    nf.num_opcode_attrs[2 * i + 1] = w.one_hot;
    if (inst->opcode() == Opcode::kAlternatives) {
      nf.is_alternative[i] = 1;
      obs->alternative_indices.push_back(static_cast<int32_t>(i));
    }
    if (inst->opcode() == Opcode::kFusion) {
      const Computation* fc = inst->fused_computation();
      if (fc != nullptr) {
        const int64_t g = fc->scratch;
        if (g > 0 && g < static_cast<int64_t>(comps.size()) && comps[g] == fc) {
          nf.fused_comp_ids[i] = static_cast<uint64_t>(g);
        }
      }
    }
  }
  if (n > 0) {
    const int64_t max_in =
        *std::max_element(nf.in_tensor_sizes.begin(), nf.in_tensor_sizes.end());
    const int64_t max_out = *std::max_element(nf.out_tensor_sizes.begin(),
                                              nf.out_tensor_sizes.end());
    for (int64_t i = 0; i < n; ++i) {
      nf.has_max_in_tensor[i] = nf.in_tensor_sizes[i] == max_in ? 1 : 0;
      nf.has_max_out_tensor[i] = nf.out_tensor_sizes[i] == max_out ? 1 : 0;
    }
  }
  obs->opcode_attr_counts = CachedAttrCountTable(options.numbering);
  return absl::OkStatus();
}

absl::StatusOr<Observation> BuildObservation(
    const Module& module, const ObservationOptions& options) {
  Observation obs;
  HLOGYM_RETURN_IF_ERROR(BuildObservationInto(module, options, &obs));
  return obs;
}

int32_t SummaryFeatureSize(OpcodeNumbering numbering) {
  return NumOpcodes(numbering) + kNumSummaryStats;
}

absl::StatusOr<std::vector<float>> SummaryFeatures(const Module& module,
                                                   OpcodeNumbering numbering) {
  if (module.entry_computation() == nullptr) {
    return absl::InvalidArgumentError(StrCat("summary features: module '",
                                             module.name(),
                                             "' has no entry computation"));
  }
  const std::array<int32_t, kNumOpcodes>& numbers = NumberTable(numbering);
  const int32_t k = NumOpcodes(numbering);
  std::vector<double> stats(kNumSummaryStats, 0.0);
  std::vector<float> out(k + kNumSummaryStats, 0.0f);
  std::vector<const Instruction*> scratch_ops;
  for (const auto& c : module.computations()) {
    stats[kSummaryComputations] += 1;
    if (c->IsFusionComputation()) stats[kSummaryFusionComputations] += 1;
    const bool entry = c.get() == module.entry_computation();
    if (entry) {
      stats[kSummaryEntryNodes] = static_cast<double>(c->instruction_count());
      stats[kSummaryEntryParameters] = static_cast<double>(c->num_parameters());
    }
    absl::Status status;
    c->ForEachInstruction([&](const Instruction* inst) {
      if (!status.ok()) return;
      const int32_t number = numbers[static_cast<int>(inst->opcode())];
      if (number < 0) {
        status = UnknownOpcodeError(inst->opcode());
        return;
      }
      out[number] += 1.0f;
      stats[kSummaryNodes] += 1;
      if (inst->opcode() == Opcode::kAlternatives) {
        stats[kSummaryAlternatives] += 1;
      }
      // Unique operands, as the graph's in-edges count them.
      scratch_ops.assign(inst->operands().begin(), inst->operands().end());
      std::sort(scratch_ops.begin(), scratch_ops.end());
      const int64_t unique =
          std::unique(scratch_ops.begin(), scratch_ops.end()) -
          scratch_ops.begin();
      stats[kSummaryEdges] += static_cast<double>(unique);
      stats[kSummaryMaxOperands] =
          std::max(stats[kSummaryMaxOperands], static_cast<double>(unique));
      int64_t users = 0;
      for (const Instruction* u : inst->users())
        users += u->is_detached() ? 0 : 1;
      stats[kSummaryMaxUsers] =
          std::max(stats[kSummaryMaxUsers], static_cast<double>(users));
      const double size = static_cast<double>(ShapeTensorSize(inst->shape()));
      stats[kSummaryTotalTensorSize] += size;
      stats[kSummaryMaxTensorSize] =
          std::max(stats[kSummaryMaxTensorSize], size);
      const double bytes = static_cast<double>(inst->shape().ArrayBytes());
      stats[kSummaryTotalBytes] += bytes;
      stats[kSummaryMaxBytes] = std::max(stats[kSummaryMaxBytes], bytes);
    });
    if (!status.ok()) return status;
  }
  for (int s = 0; s < kNumSummaryStats; ++s) {
    out[k + s] = static_cast<float>(stats[s]);
  }
  return out;
}

}  // namespace hlogym
