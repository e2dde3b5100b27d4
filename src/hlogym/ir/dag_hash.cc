#include "hlogym/ir/dag_hash.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace hlogym {
namespace {

// Every field of these structs must be hashed below. The size checks make
// adding a field without hashing it a compile error (on the platform the
// project builds on): update the matching Hash* function, then the size.
#if defined(__GLIBCXX__) && defined(__x86_64__) && !defined(_GLIBCXX_DEBUG)
static_assert(sizeof(InstructionAttrs) == 2376,
              "InstructionAttrs changed: hash the new field in HashAttrs "
              "(dag_hash.cc), then update this size");
static_assert(sizeof(Sharding) == 256,
              "Sharding changed: hash the new field in HashSharding "
              "(dag_hash.cc), then update this size");
static_assert(sizeof(Layout) == 72,
              "Layout changed: hash the new field in HashLayout "
              "(dag_hash.cc), then update this size");
static_assert(sizeof(Layout::Tail) == 128,
              "Layout::Tail changed: hash the new field in HashLayout "
              "(dag_hash.cc), then update this size");
static_assert(sizeof(ModuleConfig) == 536,
              "ModuleConfig changed: decide whether the new field is "
              "semantic and hash it in HashConfig (dag_hash.cc), then "
              "update this size");
#endif

// Constants from wyhash; any odd 64-bit constants with mixed bits would do.
constexpr uint64_t kP0 = 0xa0761d6478bd642full;
constexpr uint64_t kP1 = 0xe7037ed1a0b428dbull;
constexpr uint64_t kP2 = 0x8ebc6af09c88c6e3ull;

// Tags that keep different kinds of values apart.
constexpr uint64_t kInstructionSeed = 0x1d8e4e27c47d124full;
constexpr uint64_t kComputationSeed = 0x2bd1c4ce1b3f04a5ull;
constexpr uint64_t kModuleSeed = 0x3e0cd3f2b79a4561ull;
constexpr uint64_t kAttrsSeed = 0x5a3f61e6bd4b8d27ull;
constexpr uint64_t kControlTag = 0x6c62272e07bb0142ull;
constexpr uint64_t kTruncatedTag = 0x7f4a7c159e3779b9ull;
constexpr uint64_t kForeignOperand = 0x94d049bb133111ebull;
constexpr uint64_t kCallCycle = 0xbf58476d1ce4e5b9ull;
constexpr uint64_t kNoRoot = 0xc2b2ae3d27d4eb4full;
constexpr uint64_t kAbsent = 0xd6e8feb86659fd93ull;
constexpr uint64_t kNoLayoutTail = 0xe7e4c1f2a8b9d3c5ull;
constexpr uint64_t kDefaultGroup = 0xf1357aea2e62a9c5ull;

// How many instructions ahead ComputationBodyHash prefetches.
constexpr size_t kPrefetchDistance = 4;

__extension__ using U128 = unsigned __int128;

// 64x64->128 multiply folded to 64 bits (the core step of wyhash/XXH3).
inline uint64_t Mum(uint64_t a, uint64_t b) {
  U128 r = static_cast<U128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// Order-dependent combination of a running state with one word.
inline uint64_t Combine(uint64_t h, uint64_t v) {
  return Mum(h ^ kP0, v ^ kP1);
}

// Bijective finalizer (splitmix64); applied to elements of order-independent
// sums so that the sum does not inherit any linearity of the inputs.
inline uint64_t Fmix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// Accumulates words into a running hash.
class Sink {
 public:
  explicit Sink(uint64_t seed) : h_(seed) {}
  void Add(uint64_t v) { h_ = Combine(h_, v); }
  void AddInt(int64_t v) { Add(static_cast<uint64_t>(v)); }
  void AddStr(std::string_view s) {
    Add(s.size());
    if (!s.empty()) Add(XXH3_64bits(s.data(), s.size()));
  }
  template <typename V>
  void AddInts(const V& v) {
    Add(v.size());
    for (auto x : v) AddInt(static_cast<int64_t>(x));
  }
  template <typename T>
  void AddOptInt(const std::optional<T>& v) {
    if (v.has_value()) {
      AddInt(static_cast<int64_t>(*v));
    } else {
      Add(kAbsent);
    }
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_;
};

void HashShape(const Shape& s, Sink& h);

void HashLayout(const Layout& l, Sink& h) {
  h.AddInts(l.minor_to_major);
  if (!l.HasTail()) {
    h.Add(kNoLayoutTail);
    return;
  }
  const Layout::Tail& t = l.tail();
  h.Add(t.dim_level_types.size());
  for (const Layout::DimLevelType& d : t.dim_level_types) {
    h.Add(static_cast<uint64_t>(d.level) | uint64_t{d.not_unique} << 8 |
          uint64_t{d.not_ordered} << 9);
  }
  h.Add(t.tiles.size());
  for (const Tile& tile : t.tiles) h.AddInts(tile.dims);
  h.AddInt(t.tail_padding_alignment_in_elements);
  h.Add(static_cast<uint64_t>(t.index_primitive_type) |
        static_cast<uint64_t>(t.pointer_primitive_type) << 8);
  h.AddInt(t.element_size_in_bits);
  h.AddInt(t.memory_space);
  h.Add(t.split_configs.size());
  for (const SplitConfig& sc : t.split_configs) {
    h.AddInt(sc.dimension);
    h.AddInts(sc.split_indices);
  }
  if (t.physical_shape != nullptr) {
    h.Add(1);
    HashShape(*t.physical_shape, h);
  } else {
    h.Add(0);
  }
  h.AddInt(t.dynamic_shape_metadata_prefix_bytes);
}

// Shapes nest only as deep as their text did (bounded by the parser), so
// recursion over tuple elements is safe here, unlike over the graph.
void HashShape(const Shape& s, Sink& h) {
  const int64_t rank = s.rank();
  uint64_t dynamic_mask = 0;
  for (int64_t i = 0; i < rank && i < 64; ++i) {
    if (s.is_dynamic_dimension(i)) dynamic_mask |= uint64_t{1} << i;
  }
  h.Add(static_cast<uint64_t>(s.element_type()) |
        uint64_t{s.has_layout()} << 8 |
        static_cast<uint64_t>(s.tuple_shapes_size()) << 16);
  h.AddInts(s.dimensions());
  h.Add(dynamic_mask);
  if (s.has_layout()) HashLayout(s.layout(), h);
  for (const Shape& e : s.tuple_shapes()) HashShape(e, h);
}

void HashIntLists(const std::vector<std::vector<int64_t>>& v, Sink& h) {
  h.Add(v.size());
  for (const auto& inner : v) h.AddInts(inner);
}

void HashSharding(const Sharding& s, Sink& h) {
  h.Add(static_cast<uint64_t>(s.kind) | uint64_t{s.iota} << 8 |
        uint64_t{s.last_tile_dim_replicate} << 9);
  h.AddInt(s.device);
  h.AddInts(s.tile_dims);
  h.AddInts(s.devices);
  h.AddInts(s.iota_reshape_dims);
  h.AddInts(s.iota_transpose_perm);
  h.Add(s.last_tile_dims.size());
  for (const std::string& d : s.last_tile_dims) h.AddStr(d);
  h.AddInt(s.shard_as);
  h.AddInt(s.shard_like);
  // s.metadata_text is metadata (where the sharding came from): ignored
  // like instruction metadata.
  h.Add(s.tuple_elements.size());
  for (const Sharding& e : s.tuple_elements) HashSharding(e, h);
  h.AddStr(s.text);
}

void HashFrontendAttributes(const FrontendAttributes& attrs, Sink& h) {
  h.Add(attrs.size());
  for (const FrontendAttribute& a : attrs) {
    h.AddStr(a.key);
    h.AddStr(a.value);
    h.Add(a.raw);
  }
}

void HashWindow(const Window& w, Sink& h) {
  h.Add(w.dimensions.size());
  for (const WindowDimension& d : w.dimensions) {
    h.AddInt(d.size);
    h.AddInt(d.stride);
    h.AddInt(d.padding_low);
    h.AddInt(d.padding_high);
    h.AddInt(d.window_dilation);
    h.AddInt(d.base_dilation);
    h.Add(d.window_reversal);
  }
}

void HashReplicaGroups(const ReplicaGroups& g, Sink& h) {
  h.Add(static_cast<uint64_t>(g.form));
  HashIntLists(g.groups, h);
  h.AddInt(g.num_groups);
  h.AddInt(g.group_size);
  h.AddInts(g.iota_reshape_dims);
  h.AddInts(g.iota_transpose_perm);
  h.AddStr(g.mesh_text);
}

// Most instructions leave most groups of attributes at their defaults, so a
// group that is all defaults adds one tag word instead of its fields.
uint64_t HashAttrs(const InstructionAttrs& a) {
  Sink h(kAttrsSeed);
  // Slicing and padding.
  if (a.slice.empty() && a.dynamic_slice_sizes.empty() && a.padding.empty() &&
      !a.has_padding) {
    h.Add(kDefaultGroup + 0);
  } else {
    h.Add(a.slice.size());
    for (const SliceDimension& d : a.slice) {
      h.AddInt(d.start);
      h.AddInt(d.limit);
      h.AddInt(d.stride);
    }
    h.AddInts(a.dynamic_slice_sizes);
    h.Add(a.padding.size());
    for (const PaddingDimension& d : a.padding) {
      h.AddInt(d.low);
      h.AddInt(d.high);
      h.AddInt(d.interior);
    }
    h.Add(a.has_padding);
  }
  // Windows and convolutions.
  // An empty window and all-default precisions are what no attribute means
  // (printers omit them), so they hash as absent.
  const bool has_window = a.window.has_value() && !a.window->dimensions.empty();
  if (!has_window && !a.conv_dnums.has_value() && a.feature_group_count == 1 &&
      a.batch_group_count == 1 && a.convolution_kind.empty() &&
      a.sparsity_config.empty()) {
    h.Add(kDefaultGroup + 1);
  } else {
    if (has_window) {
      HashWindow(*a.window, h);
    } else {
      h.Add(kAbsent);
    }
    if (a.conv_dnums.has_value()) {
      const ConvolutionDimensionNumbers& c = *a.conv_dnums;
      h.AddInt(c.input_batch_dimension);
      h.AddInt(c.input_feature_dimension);
      h.AddInts(c.input_spatial_dimensions);
      h.AddInt(c.kernel_input_feature_dimension);
      h.AddInt(c.kernel_output_feature_dimension);
      h.AddInts(c.kernel_spatial_dimensions);
      h.AddInt(c.output_batch_dimension);
      h.AddInt(c.output_feature_dimension);
      h.AddInts(c.output_spatial_dimensions);
      h.AddInt(c.input_rank);
      h.AddInt(c.kernel_rank);
      h.AddInt(c.output_rank);
    } else {
      h.Add(kAbsent);
    }
    h.AddInt(a.feature_group_count);
    h.AddInt(a.batch_group_count);
    h.AddStr(a.convolution_kind);
    h.AddStr(a.sparsity_config);
  }
  // Dots.
  const bool default_precision =
      std::all_of(a.operand_precision.begin(), a.operand_precision.end(),
                  [](Precision p) { return p == Precision::kDefault; });
  if (!a.dot_dnums.has_value() && !a.ragged_dnums.has_value() &&
      default_precision && a.algorithm.empty()) {
    h.Add(kDefaultGroup + 2);
  } else {
    if (a.dot_dnums.has_value()) {
      h.AddInts(a.dot_dnums->lhs_batch_dimensions);
      h.AddInts(a.dot_dnums->lhs_contracting_dimensions);
      h.AddInts(a.dot_dnums->rhs_batch_dimensions);
      h.AddInts(a.dot_dnums->rhs_contracting_dimensions);
    } else {
      h.Add(kAbsent);
    }
    if (a.ragged_dnums.has_value()) {
      h.AddInts(a.ragged_dnums->lhs_ragged_dimensions);
      h.AddInts(a.ragged_dnums->rhs_group_dimensions);
    } else {
      h.Add(kAbsent);
    }
    if (default_precision) {
      h.Add(0);
    } else {
      h.AddInts(a.operand_precision);
    }
    h.AddStr(a.algorithm);
  }
  // Gather / scatter.
  if (!a.gather_dnums.has_value() && a.gather_slice_sizes.empty() &&
      !a.scatter_dnums.has_value() && !a.indices_are_sorted &&
      !a.unique_indices) {
    h.Add(kDefaultGroup + 3);
  } else {
    if (a.gather_dnums.has_value()) {
      const GatherDimensionNumbers& g = *a.gather_dnums;
      h.AddInts(g.offset_dims);
      h.AddInts(g.collapsed_slice_dims);
      h.AddInts(g.start_index_map);
      h.AddInts(g.operand_batching_dims);
      h.AddInts(g.start_indices_batching_dims);
      h.AddInt(g.index_vector_dim);
    } else {
      h.Add(kAbsent);
    }
    h.AddInts(a.gather_slice_sizes);
    if (a.scatter_dnums.has_value()) {
      const ScatterDimensionNumbers& s = *a.scatter_dnums;
      h.AddInts(s.update_window_dims);
      h.AddInts(s.inserted_window_dims);
      h.AddInts(s.scatter_dims_to_operand_dims);
      h.AddInts(s.input_batching_dims);
      h.AddInts(s.scatter_indices_batching_dims);
      h.AddInt(s.index_vector_dim);
    } else {
      h.Add(kAbsent);
    }
    h.Add(uint64_t{a.indices_are_sorted} | uint64_t{a.unique_indices} << 1);
  }
  // Custom calls.
  if (a.custom_call_target.empty() && !a.has_custom_call_target &&
      a.api_version == CustomCallApiVersion::kUnspecified &&
      !a.custom_call_has_side_effect &&
      !a.operand_layout_constraints.has_value() && a.padding_type.empty() &&
      a.schedule.empty() && !a.custom_call_literal.has_value() &&
      a.output_to_operand_aliasing.empty() &&
      !a.has_output_to_operand_aliasing) {
    h.Add(kDefaultGroup + 4);
  } else {
    h.AddStr(a.custom_call_target);
    h.Add(uint64_t{a.has_custom_call_target} |
          uint64_t{a.custom_call_has_side_effect} << 1 |
          static_cast<uint64_t>(a.api_version) << 8);
    if (a.operand_layout_constraints.has_value()) {
      h.Add(a.operand_layout_constraints->size());
      for (const Shape& s : *a.operand_layout_constraints) HashShape(s, h);
    } else {
      h.Add(kAbsent);
    }
    h.AddStr(a.padding_type);
    h.AddStr(a.schedule);
    if (a.custom_call_literal.has_value()) {
      h.Add(a.custom_call_literal->Hash());
      HashShape(a.custom_call_literal->shape(), h);
    } else {
      h.Add(kAbsent);
    }
    h.Add(a.output_to_operand_aliasing.size());
    for (const OutputOperandAlias& al : a.output_to_operand_aliasing) {
      h.AddInts(al.output_index);
      h.AddInt(al.operand);
      h.AddInts(al.operand_index);
    }
    h.Add(a.has_output_to_operand_aliasing);
  }
  // Collectives.
  if (!a.replica_groups.has_value() && !a.channel_id.has_value() &&
      !a.use_global_device_ids && !a.constrain_layout &&
      a.source_target_pairs.empty() && !a.has_source_target_pairs &&
      a.permute_slice_sizes.empty() && !a.has_dynamic_root &&
      !a.cross_program_prefetch_index.has_value() && !a.is_host_transfer &&
      a.async_execution_thread.empty()) {
    h.Add(kDefaultGroup + 5);
  } else {
    if (a.replica_groups.has_value()) {
      HashReplicaGroups(*a.replica_groups, h);
    } else {
      h.Add(kAbsent);
    }
    h.AddOptInt(a.channel_id);
    h.Add(
        uint64_t{a.use_global_device_ids} | uint64_t{a.constrain_layout} << 1 |
        uint64_t{a.has_source_target_pairs} << 2 |
        uint64_t{a.has_dynamic_root} << 3 | uint64_t{a.is_host_transfer} << 4);
    h.Add(a.source_target_pairs.size());
    for (const auto& [s, t] : a.source_target_pairs) {
      h.AddInt(s);
      h.AddInt(t);
    }
    HashIntLists(a.permute_slice_sizes, h);
    h.AddOptInt(a.cross_program_prefetch_index);
    h.AddStr(a.async_execution_thread);
  }
  // Misc opcode-specific.
  uint32_t epsilon_bits;
  std::memcpy(&epsilon_bits, &a.epsilon, sizeof(epsilon_bits));
  if (epsilon_bits == 0 && a.feature_index == 0 && a.exponent_bits == 0 &&
      a.mantissa_bits == 0 && a.fft_type == FftType::kFft &&
      a.fft_length.empty() && !a.left_side && !a.lower && !a.unit_diagonal &&
      a.transpose_a == TriangularTranspose::kNoTranspose && !a.has_lower &&
      a.distribution == RandomDistribution::kUniform && a.delta == 0 &&
      !a.inferred_dimension.has_value() && a.infeed_config.empty() &&
      a.outfeed_config.empty() && !a.outfeed_shape.has_value() && a.k == 0 &&
      a.largest && !a.is_stable && a.num_carries == 0 && !a.is_reverse &&
      !a.is_associative.has_value() && !a.is_composite &&
      a.domain_text.empty() && a.result_accuracy_text.empty()) {
    h.Add(kDefaultGroup + 6);
  } else {
    h.Add(epsilon_bits);
    h.AddInt(a.feature_index);
    h.AddInt(a.exponent_bits);
    h.AddInt(a.mantissa_bits);
    h.Add(static_cast<uint64_t>(a.fft_type));
    h.AddInts(a.fft_length);
    h.Add(uint64_t{a.left_side} | uint64_t{a.lower} << 1 |
          uint64_t{a.unit_diagonal} << 2 | uint64_t{a.has_lower} << 3 |
          static_cast<uint64_t>(a.transpose_a) << 8 |
          static_cast<uint64_t>(a.distribution) << 16);
    h.AddInt(a.delta);
    h.AddOptInt(a.inferred_dimension);
    h.AddStr(a.infeed_config);
    h.AddStr(a.outfeed_config);
    if (a.outfeed_shape.has_value()) {
      HashShape(*a.outfeed_shape, h);
    } else {
      h.Add(kAbsent);
    }
    h.AddInt(a.k);
    h.Add(uint64_t{a.largest} | uint64_t{a.is_stable} << 1 |
          uint64_t{a.is_reverse} << 2 | uint64_t{a.is_composite} << 3);
    h.AddInt(a.num_carries);
    h.AddOptInt(a.is_associative);
    h.AddStr(a.domain_text);
    h.AddStr(a.result_accuracy_text);
  }
  // Generic attributes.
  if (!a.sharding.has_value() && !a.parameter_replication.has_value() &&
      a.statistics_text.empty() && a.origin_text.empty() && a.unknown.empty()) {
    h.Add(kDefaultGroup + 7);
  } else {
    if (a.sharding.has_value()) {
      HashSharding(*a.sharding, h);
    } else {
      h.Add(kAbsent);
    }
    if (a.parameter_replication.has_value()) {
      h.AddInts(*a.parameter_replication);
    } else {
      h.Add(kAbsent);
    }
    h.AddStr(a.statistics_text);
    h.AddStr(a.origin_text);
    h.Add(a.unknown.size());
    for (const auto& [key, value] : a.unknown) {
      h.AddStr(key);
      h.AddStr(value);
    }
  }
  return h.value();
}

// The shared empty attribute block that instructions without attributes
// return; recognising it by address skips hashing ~100 default fields.
const InstructionAttrs* EmptyAttrsBlock() {
  static const InstructionAttrs* kBlock =
      &Instruction(Opcode::kAdd, Shape()).attrs();
  return kBlock;
}

uint64_t EmptyAttrsHash() {
  static const uint64_t kHash = HashAttrs(InstructionAttrs());
  return kHash;
}

void HashConfig(const ModuleConfig& c, Sink& h) {
  // is_scheduled is left out: the hash ignores instruction order, and a
  // schedule is only an order. origin_recovery_table, debug_attributes and
  // stack_frames are debug information, like metadata.
  h.AddOptInt(c.replica_count);
  h.AddOptInt(c.num_partitions);
  if (c.entry_computation_layout.has_value()) {
    h.Add(c.entry_computation_layout->parameters.size());
    for (const Shape& s : c.entry_computation_layout->parameters) {
      HashShape(s, h);
    }
    HashShape(c.entry_computation_layout->result, h);
  } else {
    h.Add(kAbsent);
  }
  if (c.input_output_alias.has_value()) {
    h.Add(c.input_output_alias->size());
    for (const InputOutputAlias& a : *c.input_output_alias) {
      h.AddInts(a.output_index);
      h.AddInt(a.parameter);
      h.AddInts(a.parameter_index);
      h.Add(static_cast<uint64_t>(a.kind));
    }
  } else {
    h.Add(kAbsent);
  }
  if (c.buffer_donor.has_value()) {
    h.Add(c.buffer_donor->size());
    for (const BufferDonor& d : *c.buffer_donor) {
      h.AddInt(d.parameter);
      h.AddInts(d.index);
    }
  } else {
    h.Add(kAbsent);
  }
  h.AddOptInt(c.alias_passthrough_params);
  if (c.frontend_attributes.has_value()) {
    HashFrontendAttributes(*c.frontend_attributes, h);
  } else {
    h.Add(kAbsent);
  }
  for (const auto* v : {&c.allow_spmd_sharding_propagation_to_parameters,
                        &c.allow_spmd_sharding_propagation_to_output}) {
    if (v->has_value()) {
      h.AddInts(**v);
    } else {
      h.Add(kAbsent);
    }
  }
}

// Hashes instructions and computations, memoising computations so that each
// callee is hashed once however often it is called.
class DagHasher {
 public:
  // Structural hash of a computation and (transitively) its callees.
  uint64_t ComputationHash(const Computation* c);

  // LocalInstructionHash; hashes the called computations first.
  uint64_t LocalHash(const Instruction& inst) {
    for (const Computation* callee : inst.called_computations()) {
      ComputationHash(callee);
    }
    return LocalHashKnownCallees(inst);
  }

  // Hash of the whole operand/control cone of `inst`.
  uint64_t ConeHash(const Instruction& inst);
  // The same, cut off `hops` levels below `inst`.
  uint64_t HopsHash(const Instruction& inst, int hops);

  // Computations called by any instruction hashed so far.
  const absl::flat_hash_set<const Computation*>& called() const {
    return called_;
  }

 private:
  // Hashes `c`, reading callee hashes from the memo. With `stop_if_missing`,
  // gives up (returns false) at the first callee not hashed yet.
  bool ComputationBodyHash(const Computation& c, bool stop_if_missing,
                           uint64_t* out);
  // The hash `c` had at the last DagHash, if neither it nor (by the hashes
  // already in the memo of this hasher) its callees changed since.
  bool MemoizedHash(const Computation& c, uint64_t* out);
  uint64_t LocalHashKnownCallees(const Instruction& inst);
  // Combines the local hash of `inst` with its operands' and control
  // predecessors' hashes, as given by `dep_hash`.
  template <typename F>
  uint64_t NodeHash(uint64_t local, const Instruction& inst, F&& dep_hash);

  absl::flat_hash_map<const Computation*, uint64_t> computation_hashes_;
  absl::flat_hash_set<const Computation*> called_;
  bool missing_callee_ = false;
  // (callee, hash) as the computation being hashed calls them.
  std::vector<std::pair<const Computation*, uint64_t>> callees_seen_;
  std::vector<const Instruction*> order_;  // a topological order
  std::vector<uint64_t> node_hashes_;      // by position in order_
  std::vector<uint64_t> sorted_;           // alternatives' operand hashes
};

// The local hash with each callee given by `callee_hash`. The parts that
// do not depend on callees are remembered in the instruction (most
// instructions are hashed again unchanged, or are clones of hashed ones).
template <typename F>
uint64_t LocalHashWith(const Instruction& inst, F&& callee_hash) {
  using Memo = Instruction::LocalHashMemo;
  Memo& memo = inst.local_hash_memo();
  const auto operands = static_cast<uint32_t>(inst.operand_count());
  const bool calls = !inst.called_computations().empty();
  const bool known = memo.operands == operands &&
                     memo.kind == (calls ? Memo::kBeforeCallees : Memo::kWhole);
  if (known && !calls) return memo.value;
  Sink h(known ? memo.value : kInstructionSeed);
  if (!known) {
    h.Add(static_cast<uint64_t>(inst.opcode()) |
          static_cast<uint64_t>(inst.comparison_direction()) << 8 |
          static_cast<uint64_t>(inst.comparison_type()) << 16 |
          static_cast<uint64_t>(inst.fusion_kind()) << 24 |
          uint64_t{inst.has_dimensions()} << 32 |
          uint64_t{inst.has_literal()} << 33 |
          static_cast<uint64_t>(inst.called_computations().size()) << 40);
    h.AddInt(inst.int_attr());
    h.Add(static_cast<uint64_t>(inst.operand_count()));
    HashShape(inst.shape(), h);
    h.AddInts(inst.dimensions());
    if (calls) memo = {h.value(), operands, Memo::kBeforeCallees};
  }
  for (const Computation* callee : inst.called_computations()) {
    h.Add(callee_hash(callee));
  }
  if (inst.has_literal()) h.Add(inst.literal().Hash());
  h.AddStr(inst.backend_config());
  HashFrontendAttributes(inst.frontend_attributes(), h);
  const InstructionAttrs& attrs = inst.attrs();
  h.Add(&attrs == EmptyAttrsBlock() ? EmptyAttrsHash() : HashAttrs(attrs));
  if (!calls) memo = {h.value(), operands, Memo::kWhole};
  return h.value();
}

uint64_t DagHasher::LocalHashKnownCallees(const Instruction& inst) {
  return LocalHashWith(inst, [this](const Computation* callee) {
    called_.insert(callee);
    auto it = computation_hashes_.find(callee);
    if (it != computation_hashes_.end()) {
      callees_seen_.emplace_back(callee, it->second);
      return it->second;
    }
    // Not hashed yet, or a call cycle (invalid, but must not hang).
    missing_callee_ = true;
    return kCallCycle;
  });
}

template <typename F>
uint64_t DagHasher::NodeHash(uint64_t local, const Instruction& inst,
                             F&& dep_hash) {
  Sink h(local);
  if (inst.opcode() == Opcode::kAlternatives) {
    // Alternatives are a set of candidates: their order does not matter.
    sorted_.clear();
    for (const Instruction* op : inst.operands()) {
      sorted_.push_back(dep_hash(op));
    }
    std::sort(sorted_.begin(), sorted_.end());
    for (uint64_t v : sorted_) h.Add(v);
  } else {
    for (const Instruction* op : inst.operands()) h.Add(dep_hash(op));
  }
  const auto& preds = inst.control_predecessors();
  if (!preds.empty()) {
    uint64_t sum = 0;
    for (const Instruction* p : preds) sum += Fmix(dep_hash(p));
    h.Add(kControlTag ^ preds.size());
    h.Add(sum);
  }
  return h.value();
}

bool DagHasher::ComputationBodyHash(const Computation& c, bool stop_if_missing,
                                    uint64_t* out) {
  // Instructions are usually stored in a topological order (the parser
  // requires definitions before uses), and walking them in storage order is
  // far more cache-friendly than a DFS. So hash in storage order, and only if
  // some operand comes later fall back to a post-order.
  order_.clear();
  c.ForEachInstruction([&](Instruction* i) {
    i->scratch = static_cast<int64_t>(order_.size());
    order_.push_back(i);
  });
  const size_t n = order_.size();
  node_hashes_.resize(n);
  size_t i = 0;
  bool topological = true;
  auto dep_hash = [&](const Instruction* dep) {
    const auto pos = static_cast<uint64_t>(dep->scratch);
    if (pos < n && order_[pos] == dep) {
      if (pos < i) return node_hashes_[pos];
      topological = false;
      return uint64_t{0};
    }
    return kForeignOperand;  // not in this computation (malformed IR)
  };
  missing_callee_ = false;
  // The multiset of (value, user count) over all instructions makes the hash
  // see sharing (a CSE'd graph differs from its tree expansion) and every
  // instruction, including those the root does not reach.
  uint64_t all = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    all = 0;
    callees_seen_.clear();
    for (i = 0; i < n && topological; ++i) {
      const Instruction* inst = order_[i];
      // Instructions are large and scattered on the heap, so hashing is
      // bound by cache misses: prefetch a few instructions ahead. Each stage
      // reads lines the previous stage fetched a few iterations earlier.
      if (i + 3 * kPrefetchDistance < n) {
        const char* ahead =
            reinterpret_cast<const char*>(order_[i + 3 * kPrefetchDistance]);
        for (size_t off = 0; off < sizeof(Instruction); off += 64) {
          __builtin_prefetch(ahead + off);
        }
        __builtin_prefetch(
            order_[i + 2 * kPrefetchDistance]->operands().data());
        for (const Instruction* op :
             order_[i + kPrefetchDistance]->operands()) {
          __builtin_prefetch(&op->scratch);
        }
      }
      const uint64_t h =
          NodeHash(LocalHashKnownCallees(*inst), *inst, dep_hash);
      if (missing_callee_ && stop_if_missing) return false;
      node_hashes_[i] = h;
      all += Fmix(Combine(
          h ^ kP2, static_cast<uint64_t>(inst->user_count()) |
                       static_cast<uint64_t>(inst->control_successors().size())
                           << 32));
    }
    if (topological) break;
    const std::vector<Instruction*>& post = c.InstructionPostOrder();
    order_.assign(post.begin(), post.end());
    for (size_t j = 0; j < n; ++j) {
      order_[j]->scratch = static_cast<int64_t>(j);
    }
    topological = true;
  }
  Sink h(kComputationSeed);
  const Instruction* root = c.root_instruction();
  const auto root_pos =
      root != nullptr ? static_cast<uint64_t>(root->scratch) : n;
  h.Add(root_pos < n && order_[root_pos] == root ? node_hashes_[root_pos]
                                                 : kNoRoot);
  h.Add(n);
  h.Add(all);
  h.AddStr(c.execution_thread());
  *out = h.value();
  // Remembered for the next DagHash unless a callee was missing (a call
  // cycle, in invalid IR).
  Computation::HashMemo& memo = c.hash_memo();
  if (missing_callee_) {
    memo.version = Computation::HashMemo::kInvalid;
  } else {
    memo.version = c.version();
    memo.hash = *out;
    memo.callees.assign(callees_seen_.begin(), callees_seen_.end());
  }
  return true;
}

bool DagHasher::MemoizedHash(const Computation& c, uint64_t* out) {
  const Computation::HashMemo& memo = c.hash_memo();
  if (memo.version != c.version()) return false;
  // The callees were hashed before (callers come after their callees, or
  // the caller takes the slow path below): each must hash as it did.
  for (const auto& [callee, hash] : memo.callees) {
    auto it = computation_hashes_.find(callee);
    if (it == computation_hashes_.end() || it->second != hash) return false;
  }
  for (const auto& entry : memo.callees) called_.insert(entry.first);
  *out = memo.hash;
  return true;
}

uint64_t DagHasher::ComputationHash(const Computation* c) {
  if (auto it = computation_hashes_.find(c); it != computation_hashes_.end()) {
    return it->second;
  }
  // Unchanged since the last DagHash, callees included: the memo.
  uint64_t hash;
  if (MemoizedHash(*c, &hash)) {
    computation_hashes_[c] = hash;
    return hash;
  }
  // Callees usually come before callers (module order, or already hashed),
  // so first try without looking for callees.
  if (ComputationBodyHash(*c, /*stop_if_missing=*/true, &hash)) {
    computation_hashes_[c] = hash;
    return hash;
  }
  // Iterative DFS over the call graph: callees are hashed before callers.
  struct Frame {
    const Computation* computation;
    std::vector<const Computation*> callees;
    size_t next = 0;
  };
  auto make_frame = [](const Computation* comp) {
    Frame f{comp, {}};
    comp->ForEachInstruction([&](const Instruction* i) {
      for (const Computation* callee : i->called_computations()) {
        f.callees.push_back(callee);
      }
    });
    return f;
  };
  absl::flat_hash_set<const Computation*> open = {c};
  std::vector<Frame> stack;
  stack.push_back(make_frame(c));
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next < top.callees.size()) {
      const Computation* callee = top.callees[top.next++];
      if (callee != nullptr && !computation_hashes_.contains(callee) &&
          open.insert(callee).second) {
        stack.push_back(make_frame(callee));
      }
      continue;
    }
    const Computation* done = top.computation;
    // Callees on a cycle (only in invalid IR) are still missing here; they
    // are hashed as kCallCycle.
    if (!MemoizedHash(*done, &hash)) {
      ComputationBodyHash(*done, /*stop_if_missing=*/false, &hash);
    }
    computation_hashes_[done] = hash;
    open.erase(done);
    stack.pop_back();
  }
  return computation_hashes_[c];
}

uint64_t DagHasher::ConeHash(const Instruction& inst) {
  // Iterative post-order DFS; the cone is usually a small part of the
  // computation, so per-call maps are cheaper than resetting scratch slots.
  absl::flat_hash_map<const Instruction*, uint64_t> done;
  absl::flat_hash_set<const Instruction*> open = {&inst};
  const Computation* parent = inst.parent();
  auto dep_hash = [&](const Instruction* dep) {
    if (dep->parent() != parent) return kForeignOperand;
    auto it = done.find(dep);
    return it != done.end() ? it->second : kCallCycle;
  };
  std::vector<std::pair<const Instruction*, size_t>> stack = {{&inst, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const size_t nops = node->operands().size();
    if (next < nops + node->control_predecessors().size()) {
      const Instruction* dep = next < nops
                                   ? node->operand(next)
                                   : node->control_predecessors()[next - nops];
      ++next;
      if (dep->parent() == parent && !done.contains(dep) &&
          open.insert(dep).second) {
        stack.emplace_back(dep, 0);
      }
      continue;
    }
    const Instruction* finished = node;
    stack.pop_back();
    done[finished] = NodeHash(LocalHash(*finished), *finished, dep_hash);
    open.erase(finished);
  }
  return done[&inst];
}

uint64_t DagHasher::HopsHash(const Instruction& inst, int hops) {
  const Computation* parent = inst.parent();
  auto for_each_dep = [&](const Instruction* n, auto&& f) {
    for (const Instruction* op : n->operands()) {
      if (op->parent() == parent) f(op);
    }
    for (const Instruction* p : n->control_predecessors()) {
      if (p->parent() == parent) f(p);
    }
  };
  // levels[d] holds the nodes needed at depth d (with hops - d hops left).
  // Grown level by level, so memory follows the cone's actual height
  // whatever `hops` is.
  std::vector<absl::flat_hash_map<const Instruction*, uint64_t>> levels(1);
  levels[0][&inst] = 0;
  while (static_cast<int>(levels.size()) <= hops) {
    absl::flat_hash_map<const Instruction*, uint64_t> next;
    for (const auto& [n, unused] : levels.back()) {
      for_each_dep(n, [&](const Instruction* d) { next.emplace(d, 0); });
    }
    if (next.empty()) break;
    levels.push_back(std::move(next));
  }
  absl::flat_hash_map<const Instruction*, uint64_t> local;
  for (int d = static_cast<int>(levels.size()) - 1; d >= 0; --d) {
    for (auto& [n, hash] : levels[d]) {
      auto [it, inserted] = local.try_emplace(n, 0);
      if (inserted) it->second = LocalHash(*n);
      const uint64_t l = it->second;
      const bool leaf =
          n->operand_count() == 0 && n->control_predecessors().empty();
      if (d == hops && !leaf) {
        // Cut off: the operands are only counted, so the hash converges to
        // ConeHash once `hops` reaches the cone's height.
        hash = Combine(l ^ kTruncatedTag,
                       static_cast<uint64_t>(n->operand_count()));
        continue;
      }
      // Below the last level there are only foreign operands.
      const auto* below =
          d + 1 < static_cast<int>(levels.size()) ? &levels[d + 1] : nullptr;
      hash = NodeHash(l, *n, [&](const Instruction* dep) {
        if (dep->parent() != parent || below == nullptr) {
          return kForeignOperand;
        }
        return below->find(dep)->second;
      });
    }
  }
  return levels[0][&inst];
}

}  // namespace

std::string DagHashHex(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(hash));
  return buf;
}

uint64_t DagHash(const Module& module) {
  DagHasher hasher;
  for (const auto& c : module.computations()) hasher.ComputationHash(c.get());
  const absl::flat_hash_set<const Computation*>& called = hasher.called();
  // Computations nobody calls (other than the entry) are combined as a
  // multiset: everything in the module counts, but not its order.
  uint64_t uncalled = 0;
  for (const auto& c : module.computations()) {
    if (c.get() != module.entry_computation() && !called.contains(c.get())) {
      uncalled += Fmix(hasher.ComputationHash(c.get()) ^ kP2);
    }
  }
  Sink h(kModuleSeed);
  HashConfig(module.config(), h);
  const Computation* entry = module.entry_computation();
  h.Add(entry != nullptr ? hasher.ComputationHash(entry) : kNoRoot);
  h.Add(module.computations().size());
  h.Add(uncalled);
  return h.value();
}

uint64_t DagHash(const Computation& computation) {
  DagHasher hasher;
  return hasher.ComputationHash(&computation);
}

uint64_t InstructionHash(const Instruction& inst, int hops) {
  DagHasher hasher;
  return hops < 0 ? hasher.ConeHash(inst) : hasher.HopsHash(inst, hops);
}

uint64_t ShallowInstructionHash(const Instruction& inst) {
  return LocalHashWith(inst, [](const Computation* callee) {
    const Instruction* root = callee->root_instruction();
    return Fmix(static_cast<uint64_t>(callee->instruction_count()) ^
                static_cast<uint64_t>(callee->num_parameters()) << 32 ^
                (root != nullptr ? static_cast<uint64_t>(root->opcode()) << 48
                                 : kNoRoot));
  });
}

uint64_t LocalInstructionHash(const Instruction& inst) {
  DagHasher hasher;
  return hasher.LocalHash(inst);
}

}  // namespace hlogym
