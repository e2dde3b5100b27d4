// The graph observation of a module, with HloEnv's HloGraph schema.
//
// Nodes are every instruction of every computation, in ObservationOrder
// (alternative_graph.h): computations in reverse post-order (entry first,
// gid = position, entry = 0), instructions of each in post-order. Decisions
// name `alternatives` nodes by this order, so `alternative_indices` can be
// used as-is. Edges: in-edges are the unique operands of each node (a
// repeated operand counts once, in order of first use), out-edges its users;
// both are CSR lists (offsets N+1 long), and each edge-feature list follows
// its CSR order (in-edges grouped by destination, out-edges by source).
// Without inlining, edges never cross computations.
//
// Node features (N entries unless noted):
//   uids (int32)            instruction unique id (truncated to 32 bits)
//   names                   instruction names
//   gids (uint64)           computation position (entry = 0)
//   fused_comp_ids (uint64) fusion nodes: gid of their fused computation;
//                           0 for every other node (HloEnv declared this
//                           field but never filled it)
//   num_users, num_operands (int32)  CSR out- and in-degree
//   opcodes (int32)         opcode number in the chosen numbering
//   opcode_attrs (int32)    concatenated per-node attribute vectors (below)
//   num_opcode_attrs (int32, 2N)  (int count, one-hot width) per node
//   is_alternative, is_in_fusion (uint8)
//   in_tensor_sizes (int64) sum of the tensor sizes of the in-edges
//   out_tensor_sizes (int64) the node's own tensor size (see
//                           ObservationOptions::hloenv_out_tensor_sizes)
//   has_max_in_tensor, has_max_out_tensor (uint8) equal to the maximum
//   normalized_num_group_inst (float) 1 / instructions of the computation,
//                           0 in the entry
// Edge features (per edge; dims, layouts, lehmercodes 8 per edge):
//   uids (int64)   (src uid << 32) | dst uid (32 bits each)
//   srcs, dsts (int32)  node indices, producer -> consumer
//   dims           producer dimensions, -1 padded (tuples, tokens: all -1;
//                  ranks above 8 truncated)
//   layouts        producer minor_to_major, -1 padded (default layout when
//                  the shape has none)
//   lehmercodes    slot k: #{l < k : minor_to_major[l] > minor_to_major[k]}
//   types (uint8)  0: both ends in the entry; 1: same non-entry computation;
//                  2: different computations (only with inlining)
//   dtypes (int32) XLA PrimitiveType number of the producer (opcode_tables.h)
// The tensor size of an edge is |product of its 8 dims slots| (1 for
// scalars, tuples and tokens; saturates at INT64_MAX).
//
// Per-opcode attribute vectors (dimension one-hots have 7 entries: index
// 0..5, and 6 for "none" or an index above 5; at most 6 dimensions are
// encoded, extra ones are dropped; "(ints, one-hot width)"):
//   broadcast, concatenate, reduce, reverse, transpose (0, 42): dimensions.
//   compare (0, 10): direction 1h(6) in XLA order EQ NE GE GT LE LT; type
//     1h(4) FLOAT TOTALORDER SIGNED UNSIGNED (unwritten: the element type's
//     default, as XLA resolves it).
//   convolution (16, 168): for a 2-D window, per dimension (size, stride,
//     pad_lo, pad_hi, base_dilation, window_dilation, reversal), else 14
//     zeros; feature_group_count, batch_group_count; one-hots of input
//     batch, input feature, 6 input spatial, kernel input feature, kernel
//     output feature, 6 kernel spatial, output batch, output feature, 6
//     output spatial.
//   dot (0, 171): lhs batch, lhs contracting, rhs batch, rhs contracting
//     (6 one-hots each); operand 0's precision 1h(3) DEFAULT HIGH HIGHEST
//     (packed-nibble counts as DEFAULT).
//   dynamic-slice (6, 0): slice sizes, -1 padded.
//   gather (7, 128): index_vector_dim, 6 slice sizes (-1 padded);
//     offset_dims, collapsed_slice_dims, start_index_map; indices_are_sorted
//     1h(2).
//   get-tuple-element (1, 0): tuple index.
//   iota (0, 7): iota dimension.
//   pad (18, 0), slice (18, 0): (low, high, interior) / (start, limit,
//     stride) per dimension, -1 padded.
//   scatter (1, 130): index_vector_dim; update_window_dims,
//     inserted_window_dims, scatter_dims_to_operand_dims; indices_are_sorted
//     1h(2); unique_indices 1h(2).
//   sort (0, 9): sort dimension, is_stable 1h(2).
//   triangular-solve (0, 10): left_side, lower, unit_diagonal 1h(2) each;
//     transpose_a 1h(4) in XLA order INVALID NO_TRANSPOSE TRANSPOSE ADJOINT.
//   custom-call (0, 13): target 1h(13): __cublas$gemm,
//     __cublas$triangularSolve, __cudnn$convBackwardFilter,
//     __cudnn$convBackwardInput, __cudnn$convBiasActivationForward,
//     __cudnn$convForward, cublas_trsm_batched,
//     cuda_lu_pivots_to_permutation, cuda_threefry2x32, cusolver_getrf,
//     cusolver_potrf, cusolver_syevd, anything else.
//   every other opcode (0, 0).
// `opcode_attr_counts` lists these pairs per opcode number (see
// OpcodeAttrCountTable for the set-dimension-size quirk).
//
// Building uses the scratch slots of instructions and computations (as
// post-orders do): do not observe the same module from two threads at once.
#ifndef HLOGYM_ENV_OBSERVATION_H_
#define HLOGYM_ENV_OBSERVATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/env/opcode_tables.h"
#include "hlogym/ir/module.h"

namespace hlogym {

struct ObservationOptions {
  OpcodeNumbering numbering = OpcodeNumbering::kHloGym;
  // HloEnv's out_tensor_sizes: the node's tensor size times its number of
  // users (0 for nodes without users, e.g. roots). Off: the node's own
  // tensor size, whatever its users.
  bool hloenv_out_tensor_sizes = false;
  // HloEnv's inlining of called computations into their callers. Not
  // supported: asking for it is an Unimplemented error.
  bool inline_fused_comp = false;
};

struct EdgeFeatures {
  static constexpr int kSlots = 8;
  std::vector<int64_t> uids;
  std::vector<int32_t> srcs;
  std::vector<int32_t> dsts;
  std::vector<int64_t> dims;         // kSlots per edge
  std::vector<int64_t> layouts;      // kSlots per edge
  std::vector<int64_t> lehmercodes;  // kSlots per edge
  std::vector<uint8_t> types;
  std::vector<int32_t> dtypes;

  int64_t size() const { return static_cast<int64_t>(uids.size()); }
  // |product of the 8 dims slots of `edge`|, saturating at INT64_MAX.
  int64_t TensorSize(int64_t edge) const;
};

struct NodeFeatures {
  std::vector<int32_t> uids;
  std::vector<std::string> names;
  std::vector<uint64_t> gids;
  std::vector<uint64_t> fused_comp_ids;
  std::vector<int32_t> num_users;
  std::vector<int32_t> num_operands;
  std::vector<int32_t> opcodes;
  std::vector<int32_t> opcode_attrs;
  std::vector<int32_t> num_opcode_attrs;  // 2 per node
  std::vector<uint8_t> is_alternative;
  std::vector<uint8_t> is_in_fusion;
  std::vector<int64_t> in_tensor_sizes;
  std::vector<int64_t> out_tensor_sizes;
  std::vector<uint8_t> has_max_in_tensor;
  std::vector<uint8_t> has_max_out_tensor;
  std::vector<float> normalized_num_group_inst;
};

struct Observation {
  std::vector<uint64_t> out_edge_offsets;  // N + 1
  std::vector<uint64_t> out_edge_indices;  // user node of each out-edge
  std::vector<uint64_t> in_edge_offsets;   // N + 1
  std::vector<uint64_t> in_edge_indices;   // operand node of each in-edge
  std::vector<int32_t> alternative_indices;
  std::vector<int32_t> opcode_attr_counts;  // 2 * NumOpcodes(numbering)
  NodeFeatures node_features;
  EdgeFeatures in_edge_features;
  EdgeFeatures out_edge_features;

  int64_t num_nodes() const {
    return static_cast<int64_t>(node_features.uids.size());
  }
};

// Builds the observation. Errors: a module without an entry computation, an
// opcode absent from the chosen numbering, inlining requested, or an
// inconsistent graph (an operand or user outside the node set).
absl::StatusOr<Observation> BuildObservation(
    const Module& module, const ObservationOptions& options = {});
// Same, into `obs`, reusing the capacity of its vectors (an agent loop
// observing graphs step after step then allocates nothing new). Every field
// is overwritten; on error `obs` holds partial data.
absl::Status BuildObservationInto(const Module& module,
                                  const ObservationOptions& options,
                                  Observation* obs);

// A fixed-size summary for models that do not read graphs: K =
// NumOpcodes(numbering) entries of opcode counts (entry k: how many nodes
// have opcode number k), then kNumSummaryStats statistics, in this order:
enum SummaryStat : int {
  kSummaryNodes = 0,           // instructions, every computation
  kSummaryEdges,               // in-edges (unique operands), every node
  kSummaryAlternatives,        // `alternatives` nodes
  kSummaryComputations,        // computations
  kSummaryFusionComputations,  // computations called by fusions
  kSummaryEntryNodes,          // instructions of the entry computation
  kSummaryEntryParameters,     // parameters of the entry computation
  kSummaryTotalTensorSize,     // sum of node tensor sizes (as edges count)
  kSummaryMaxTensorSize,       // largest node tensor size
  kSummaryTotalBytes,          // sum of node output bytes (tuples: leaves)
  kSummaryMaxBytes,            // largest node output bytes
  kSummaryMaxOperands,         // largest in-degree
  kSummaryMaxUsers,            // largest out-degree
  kNumSummaryStats,
};
// Values are raw counts as floats (no scaling). Errors as BuildObservation.
absl::StatusOr<std::vector<float>> SummaryFeatures(const Module& module,
                                                   OpcodeNumbering numbering);
// Length of SummaryFeatures' vector.
int32_t SummaryFeatureSize(OpcodeNumbering numbering);

}  // namespace hlogym

#endif  // HLOGYM_ENV_OBSERVATION_H_
