// Typed opcode-specific attributes of HLO instructions.
#ifndef HLOGYM_IR_ATTRIBUTES_H_
#define HLOGYM_IR_ATTRIBUTES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hlogym/ir/literal.h"
#include "hlogym/ir/opcode.h"
#include "hlogym/ir/shape.h"

namespace hlogym {

using ShapeIndex = std::vector<int64_t>;

// window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=2x2
// rhs_reversal=0x1}
struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;  // rhs_dilate
  int64_t base_dilation = 1;    // lhs_dilate
  bool window_reversal = false;
  bool operator==(const WindowDimension&) const = default;
};
struct Window {
  std::vector<WindowDimension> dimensions;
  bool operator==(const Window&) const = default;
};

// dim_labels=b01f_01io->b01f. A dimension index of -1 is unused ('?').
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  // Ranks of the three label strings (they may contain '?' positions).
  int64_t input_rank = 0, kernel_rank = 0, output_rank = 0;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};

// ragged-dot adds lhs_ragged_dims and rhs_group_dims.
struct RaggedDotDimensionNumbers {
  std::vector<int64_t> lhs_ragged_dimensions;
  std::vector<int64_t> rhs_group_dimensions;
  bool operator==(const RaggedDotDimensionNumbers&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDimension&) const = default;
};
using PaddingConfig = std::vector<PaddingDimension>;

struct SliceDimension {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDimension&) const = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
enum class ComparisonType : uint8_t {
  kDefault,  // not written: the default for the element type
  kFloat,
  kTotalOrder,
  kSigned,
  kUnsigned
};
std::string_view ComparisonDirectionName(ComparisonDirection d);
std::string_view ComparisonTypeName(ComparisonType t);

enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
std::string_view FusionKindName(FusionKind k);

enum class Precision : uint8_t { kDefault, kHigh, kHighest, kPackedNibble };
std::string_view PrecisionName(Precision p);

// replica_groups: explicit {{0,1},{2,3}}, iota [G,S]<=[dims]T(perm), or the
// mesh form kept as text.
struct ReplicaGroups {
  enum class Form : uint8_t { kExplicit, kIota, kMesh };
  Form form = Form::kExplicit;
  std::vector<std::vector<int64_t>> groups;  // explicit
  int64_t num_groups = 0, group_size = 0;    // iota
  std::vector<int64_t> iota_reshape_dims;
  std::vector<int64_t> iota_transpose_perm;
  std::string mesh_text;  // mesh
  // Expands to explicit groups (iota form included). Empty for mesh.
  std::vector<std::vector<int64_t>> Expand() const;
  // Participants of the largest group (at least 1); -1 for the mesh form,
  // whose groups are not modelled.
  int64_t LargestGroupSize() const;
  bool operator==(const ReplicaGroups&) const = default;
};

struct OpMetadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int32_t source_line = 0;
  int32_t source_end_line = 0;
  int32_t source_column = 0;
  int32_t source_end_column = 0;
  std::vector<int64_t> profile_type;
  std::string deduplicated_name;
  bool preserve_layout = false;
  int32_t stack_frame_id = 0;
  std::string scheduling_name;
  std::string metadata_payload;
  bool empty() const { return *this == OpMetadata(); }
  bool operator==(const OpMetadata&) const = default;
};

// frontend_attributes={k="v", k2={raw}}. Kept sorted by key, as XLA does.
struct FrontendAttribute {
  std::string key;
  std::string value;
  bool raw = false;  // value was a brace block, printed unquoted
  bool operator==(const FrontendAttribute&) const = default;
};
using FrontendAttributes = std::vector<FrontendAttribute>;

// sharding={...}. Tile-based (HloSharding V1/V2) forms are typed; named
// (mesh) shardings are kept as normalized text in `text`.
struct Sharding {
  enum class Kind : uint8_t {
    kReplicated,
    kMaximal,
    kManual,
    kUnknown,
    kUnreduced,
    kTiled,
    kTuple,
    kNamed,  // mesh / maximal_mesh forms, kept as text
  };
  Kind kind = Kind::kReplicated;
  int64_t device = -1;             // maximal
  std::vector<int64_t> tile_dims;  // devices=[...]
  std::vector<int64_t> devices;    // explicit device list
  bool iota = false;               // devices given as <=[..]T(..)
  std::vector<int64_t> iota_reshape_dims;
  std::vector<int64_t> iota_transpose_perm;
  bool last_tile_dim_replicate = false;
  std::vector<std::string> last_tile_dims;  // manual, replicated, ...
  int64_t shard_as = -1;
  int64_t shard_like = -1;
  std::string metadata_text;  // metadata=... kept as text
  std::vector<Sharding> tuple_elements;
  std::string text;  // kNamed
  bool operator==(const Sharding&) const = default;
};

// output_to_operand_aliasing={{0}: (1, {})}
struct OutputOperandAlias {
  ShapeIndex output_index;
  int64_t operand = 0;
  ShapeIndex operand_index;
  bool operator==(const OutputOperandAlias&) const = default;
};

enum class CustomCallApiVersion : uint8_t {
  kUnspecified,
  kOriginal,
  kStatusReturning,
  kStatusReturningUnified,
  kTypedFfi,
};
std::string_view CustomCallApiVersionName(CustomCallApiVersion v);

enum class RandomDistribution : uint8_t { kUniform, kNormal };
enum class RandomAlgorithm : uint8_t { kDefault, kThreeFry, kPhilox };
enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };
enum class TriangularTranspose : uint8_t { kNoTranspose, kTranspose, kAdjoint };

// Attributes that few instructions carry. Held behind a shared pointer in
// each instruction and copied on write, so cloning a module shares them.
struct InstructionAttrs {
  // Slicing and padding.
  std::vector<SliceDimension> slice;  // slice={[a:b:c], ...}
  std::vector<int64_t> dynamic_slice_sizes;
  PaddingConfig padding;
  bool has_padding = false;

  // Windows and convolutions.
  std::optional<Window> window;
  std::optional<ConvolutionDimensionNumbers> conv_dnums;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::string convolution_kind;  // fprop|dgrad|wgrad|unset, or empty
  std::string sparsity_config;   // kept as text

  // Dots.
  std::optional<DotDimensionNumbers> dot_dnums;
  std::optional<RaggedDotDimensionNumbers> ragged_dnums;
  std::vector<Precision> operand_precision;
  std::string algorithm;  // dot algorithm or rng algorithm, lower case

  // Gather / scatter.
  std::optional<GatherDimensionNumbers> gather_dnums;
  std::vector<int64_t> gather_slice_sizes;
  std::optional<ScatterDimensionNumbers> scatter_dnums;
  bool indices_are_sorted = false;
  bool unique_indices = false;

  // Custom calls.
  std::string custom_call_target;
  bool has_custom_call_target = false;
  CustomCallApiVersion api_version = CustomCallApiVersion::kUnspecified;
  bool custom_call_has_side_effect = false;
  std::optional<std::vector<Shape>> operand_layout_constraints;
  std::string padding_type;  // PADDING_VALID | PADDING_SAME
  std::string schedule;      // SCHEDULE_*
  std::optional<Literal> custom_call_literal;
  std::vector<OutputOperandAlias> output_to_operand_aliasing;
  bool has_output_to_operand_aliasing = false;

  // Collectives.
  std::optional<ReplicaGroups> replica_groups;
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  bool has_source_target_pairs = false;
  std::vector<std::vector<int64_t>> permute_slice_sizes;
  bool has_dynamic_root = false;
  std::optional<int64_t> cross_program_prefetch_index;
  bool is_host_transfer = false;
  std::string async_execution_thread;  // async ops; empty = default
  // `op-update`/`op-done` shorthand whose operand is not an async op: the
  // opcode written before the suffix.
  std::optional<Opcode> async_wrapped_opcode;

  // Misc opcode-specific.
  float epsilon = 0;
  int64_t feature_index = 0;
  int64_t exponent_bits = 0;
  int64_t mantissa_bits = 0;
  FftType fft_type = FftType::kFft;
  std::vector<int64_t> fft_length;
  bool left_side = false, lower = false, unit_diagonal = false;
  TriangularTranspose transpose_a = TriangularTranspose::kNoTranspose;
  bool has_lower = false;
  RandomDistribution distribution = RandomDistribution::kUniform;
  int64_t delta = 0;  // rng-get-and-update-state
  std::optional<int64_t> inferred_dimension;
  std::string infeed_config;
  std::string outfeed_config;
  std::optional<Shape> outfeed_shape;
  int64_t k = 0;  // topk
  bool largest = true;
  bool is_stable = false;
  int64_t num_carries = 0;  // scan
  bool is_reverse = false;
  std::optional<bool> is_associative;
  bool is_composite = false;
  std::string domain_text;           // domain={kind=... entry=... exit=...}
  std::string result_accuracy_text;  // result_accuracy={...}

  // Generic attributes.
  std::optional<Sharding> sharding;
  std::optional<std::vector<bool>> parameter_replication;
  std::string statistics_text;  // statistics={...}
  std::string origin_text;      // origin={...}

  // Attributes the IR does not model: (key, normalized text), in order.
  std::vector<std::pair<std::string, std::string>> unknown;
};

}  // namespace hlogym

#endif  // HLOGYM_IR_ATTRIBUTES_H_
