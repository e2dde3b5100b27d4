#include "hlogym/cost/cost_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "hlogym/ir/str_util.h"
#include "nlohmann/json.hpp"

namespace hlogym {
namespace {

// Opcodes the generic rules count as transcendentals.
bool IsGenericTranscendental(Opcode op) {
  switch (op) {
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kLog:
    case Opcode::kLogistic:
    case Opcode::kPower:
    case Opcode::kSqrt:
    case Opcode::kCbrt:
    case Opcode::kRsqrt:
    case Opcode::kTanh:
    case Opcode::kSin:
    case Opcode::kCosine:
    case Opcode::kExpm1:
    case Opcode::kLog1p:
    case Opcode::kAtan2:
    case Opcode::kTan:
      return true;
    default:
      return false;
  }
}

// Ops whose emitted code starts new basic blocks (they loop or branch).
bool InvalidatesEmitterCache(Opcode op) {
  switch (op) {
    case Opcode::kConcatenate:
    case Opcode::kDot:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kPad:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      return true;
    default:
      return false;
  }
}

double Size(const Shape& s) { return static_cast<double>(ShapeSizeBytes(s)); }

double Elems(const Shape& s) {
  return s.IsArray() ? static_cast<double>(s.ElementsIn()) : 0.0;
}

const Shape& FirstLeaf(const Shape& s) {
  const Shape* p = &s;
  while (p->IsTuple() && p->tuple_shapes_size() > 0) p = &p->tuple_shapes(0);
  return *p;
}

double LeafBytes(const Shape& s) {
  if (!s.IsTuple()) return Size(s);
  double total = 0;
  for (const Shape& e : s.tuple_shapes()) total += LeafBytes(e);
  return total;
}

absl::Status OperandCountError(const Instruction& inst, int64_t want) {
  return absl::InvalidArgumentError(StrCat(
      "instruction '", inst.name(), "' (", OpcodeName(inst.opcode()),
      ") needs at least ", want, " operands, has ", inst.operand_count()));
}

// Sorted-set insert on a small vector.
void InsertSorted(absl::InlinedVector<int32_t, 2>* set, int32_t v) {
  auto it = std::lower_bound(set->begin(), set->end(), v);
  if (it == set->end() || *it != v) set->insert(it, v);
}

// Number of (output position, window tap) pairs of one spatial dimension
// whose input position is in bounds.
int64_t ValidConvPositions(const WindowDimension& w, int64_t input_size,
                           int64_t output_size) {
  if (w.stride <= 0 || w.base_dilation <= 0 || input_size <= 0 ||
      output_size <= 0) {
    return 0;
  }
  auto floor_div = [](int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  };
  int64_t count = 0;
  for (int64_t k = 0; k < w.size; ++k) {
    // Input position of output o: o * stride + c.
    const int64_t c = k * w.window_dilation - w.padding_low;
    if (w.base_dilation == 1) {
      // 0 <= o * stride + c < input_size, 0 <= o < output_size.
      const int64_t lo = std::max<int64_t>(0, -floor_div(c, w.stride));
      const int64_t hi =
          std::min(output_size - 1, floor_div(input_size - 1 - c, w.stride));
      count += std::max<int64_t>(0, hi - lo + 1);
      continue;
    }
    for (int64_t o = 0; o < output_size; ++o) {
      const int64_t idx = o * w.stride + c;
      if (idx < 0 || idx % w.base_dilation != 0) continue;
      if (idx / w.base_dilation < input_size) ++count;
    }
  }
  return count;
}

// Generic read bytes of a fused parameter: the users decide how much of it
// is read.
double GenericParameterReadBytes(const Instruction& param) {
  const double size = Size(param.shape());
  double bytes = 0;
  bool shared_read = false;
  for (const Instruction* user : param.users()) {
    switch (user->opcode()) {
      case Opcode::kSlice:
        bytes += Size(user->shape());
        break;
      case Opcode::kDynamicSlice:
        if (user->operand(0) == &param) {
          bytes += Size(user->shape());
        } else {
          shared_read = true;
        }
        break;
      case Opcode::kDynamicUpdateSlice:
        if (user->operand(0) != &param) shared_read = true;
        break;
      case Opcode::kBroadcast:
      case Opcode::kReshape:
        bytes += size;
        break;
      default:
        shared_read = true;
        break;
    }
  }
  return bytes + (shared_read ? size : 0);
}

}  // namespace

// The minor-most dimension of size > 1 in the physical layout; -1 if none.
int64_t MinorMostNonTrivialDimension(const Shape& s) {
  if (!s.IsArray()) return -1;
  if (s.has_layout() &&
      static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank()) {
    for (int64_t d : s.layout().minor_to_major) {
      if (d >= 0 && d < s.rank() && s.dimensions(d) > 1) return d;
    }
    return -1;
  }
  for (int64_t d = s.rank() - 1; d >= 0; --d) {
    if (s.dimensions(d) > 1) return d;
  }
  return -1;
}

// Physical dimension order (minor to major) of an array shape.
DimVector PhysicalMinorToMajor(const Shape& s) {
  if (s.has_layout() &&
      static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank()) {
    return s.layout().minor_to_major;
  }
  DimVector order;
  for (int64_t d = s.rank() - 1; d >= 0; --d) order.push_back(d);
  return order;
}

namespace {
absl::Status MarkUnknown(CostProperties* p) {
  p->unknown = true;
  p->flops = -1;
  p->bytes_accessed = -1;
  p->output_bytes = -1;
  for (double& b : p->operand_bytes) b = -1;
  return absl::OkStatus();
}
}  // namespace

int64_t ShapeSizeBytes(const Shape& shape) {
  if (shape.IsTuple()) return 8 * shape.tuple_shapes_size();
  if (!shape.IsArray() || !shape.has_layout()) return 0;
  const int64_t elems = shape.ElementsIn();
  int64_t bytes;
  const int64_t bits = shape.layout().tail().element_size_in_bits;
  if (bits > 0 && bits < 8) {
    bytes = (elems / 8) * bits + ((elems % 8) * bits + 7) / 8;
  } else if (__builtin_mul_overflow(elems, ByteWidth(shape.element_type()),
                                    &bytes)) {
    bytes = std::numeric_limits<int64_t>::max() / 2;
  }
  if (shape.is_dynamic()) bytes += 4 * shape.rank();
  return bytes;
}

int64_t ElementsInRecursive(const Shape& shape) {
  if (shape.IsArray()) return shape.ElementsIn();
  int64_t n = 0;
  for (const Shape& e : shape.tuple_shapes()) n += ElementsInRecursive(e);
  return n;
}

bool IsElementwiseForCost(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kCopy) return true;
  if (op == Opcode::kBitcastConvert) {
    return inst.operand_count() == 1 &&
           BitWidth(inst.shape().element_type()) ==
               BitWidth(inst.operand(0)->shape().element_type());
  }
  return IsElementwise(op);
}

bool IsBitcastTranspose(const Instruction& inst) {
  if (inst.operand_count() != 1) return false;
  const Shape& out = inst.shape();
  const Shape& in = inst.operand(0)->shape();
  if (!out.IsArray() || !in.IsArray() || out.rank() != in.rank() ||
      out.element_type() != in.element_type()) {
    return false;
  }
  DimVector perm;
  if (inst.opcode() == Opcode::kTranspose) {
    perm = inst.dimensions();
  } else if (inst.opcode() == Opcode::kCopy) {
    for (int64_t i = 0; i < out.rank(); ++i) perm.push_back(i);
  } else {
    return false;
  }
  if (static_cast<int64_t>(perm.size()) != out.rank()) return false;
  // Physical order of the input dims as the output walks its memory,
  // compared with the input's own physical order (size-1 dims ignored).
  DimVector from_out, from_in;
  for (int64_t d : PhysicalMinorToMajor(out)) {
    if (d < 0 || d >= out.rank() || perm[d] < 0 || perm[d] >= in.rank()) {
      return false;
    }
    if (out.dimensions(d) > 1) from_out.push_back(perm[d]);
  }
  for (int64_t d : PhysicalMinorToMajor(in)) {
    if (d < 0 || d >= in.rank()) return false;
    if (in.dimensions(d) > 1) from_in.push_back(d);
  }
  return from_out == from_in;
}

double FusionInfo::CommonElementwiseUtilization(int64_t param_a,
                                                int64_t param_b) const {
  if (param_a < 0 || param_b < 0 ||
      param_a >= static_cast<int64_t>(parameter_roots.size()) ||
      param_b >= static_cast<int64_t>(parameter_roots.size())) {
    return 0;
  }
  const auto& a = parameter_roots[param_a];
  const auto& b = parameter_roots[param_b];
  double total = 0;
  for (int32_t r : a) {
    if (std::binary_search(b.begin(), b.end(), r)) total += root_utilization[r];
  }
  return total;
}

double FusionInfo::CommonUtilizationWithRoot(int64_t param) const {
  if (param < 0 || param >= static_cast<int64_t>(parameter_roots.size())) {
    return 0;
  }
  const auto& a = parameter_roots[param];
  return std::binary_search(a.begin(), a.end(), root_id)
             ? root_utilization[root_id]
             : 0;
}

CostAnalysisOptions CostAnalysisOptions::Gpu(
    const GpuDevice& device, bool count_multiple_input_accesses) {
  CostAnalysisOptions o;
  o.op_profile = &device.op_profile;
  o.count_multiple_input_accesses = count_multiple_input_accesses;
  o.immediate_constant_max_elements = 8;
  return o;
}

CostAnalysis::CostAnalysis(CostAnalysisOptions options)
    : options_(std::move(options)) {}

int64_t CostAnalysis::DotFlops(const Shape& lhs, const Shape& result,
                               const std::vector<int64_t>& lhs_contracting) {
  int64_t reduction = 1;
  for (int64_t d : lhs_contracting) {
    if (d >= 0 && d < lhs.rank()) reduction *= lhs.dimensions(d);
  }
  return kFmaFlops * ElementsInRecursive(result) * reduction;
}

absl::StatusOr<int64_t> CostAnalysis::ConvolutionFlops(const Instruction& conv,
                                                       const Shape& lhs,
                                                       const Shape& rhs,
                                                       const Shape& result) {
  const InstructionAttrs& a = conv.attrs();
  if (!a.conv_dnums || !lhs.IsArray() || !rhs.IsArray() || !result.IsArray()) {
    return absl::InvalidArgumentError(
        StrCat("convolution '", conv.name(),
               "' has no dimension numbers or non-array operands"));
  }
  const ConvolutionDimensionNumbers& dn = *a.conv_dnums;
  auto dim = [](const Shape& s, int64_t d) -> int64_t {
    return d >= 0 && d < s.rank() ? s.dimensions(d) : 1;
  };
  const int64_t batch = dim(lhs, dn.input_batch_dimension);
  const int64_t in_feat = dim(lhs, dn.input_feature_dimension);
  const int64_t out_feat = dim(result, dn.output_feature_dimension);
  const int64_t fgc = std::max<int64_t>(1, a.feature_group_count);
  const int64_t bgc = std::max<int64_t>(1, a.batch_group_count);
  int64_t positions = 1;
  const size_t spatial = dn.input_spatial_dimensions.size();
  if (a.window && !a.window->dimensions.empty()) {
    if (a.window->dimensions.size() != spatial ||
        dn.output_spatial_dimensions.size() != spatial) {
      return absl::InvalidArgumentError(
          StrCat("convolution '", conv.name(),
                 "': window rank does not match the spatial dimensions"));
    }
    for (size_t i = 0; i < spatial; ++i) {
      positions *= ValidConvPositions(
          a.window->dimensions[i], dim(lhs, dn.input_spatial_dimensions[i]),
          dim(result, dn.output_spatial_dimensions[i]));
    }
  }
  (void)rhs;
  return kFmaFlops * (in_feat / fgc) * out_feat * (batch / bgc) * positions;
}

double CostAnalysis::ElementwiseFlops(Opcode op, const Shape& shape) const {
  const double elems = static_cast<double>(ElementsInRecursive(shape));
  const Shape& leaf = FirstLeaf(shape);
  return static_cast<double>(
             options_.op_profile->CyclesPerElement(op, leaf.element_type())) *
         elems;
}

void CostAnalysis::Finish(CostProperties* p) const {
  double t = 0;
  if (options_.flops_per_second > 0) {
    t = std::max(t, p->flops / options_.flops_per_second);
  }
  if (options_.transcendentals_per_second > 0) {
    t = std::max(t, p->transcendentals / options_.transcendentals_per_second);
  }
  if (options_.bytes_per_second > 0) {
    t = std::max(t, p->bytes_accessed / options_.bytes_per_second);
  }
  p->optimal_seconds = t;
}

absl::StatusOr<CostProperties> CostAnalysis::Analyze(
    const Instruction& inst) const {
  CostProperties p;
  if (absl::Status s = Analyze(inst, &p); !s.ok()) return s;
  return p;
}

absl::StatusOr<CostProperties> CostAnalysis::AnalyzeComputation(
    const Computation& computation) const {
  CostProperties total;
  total.ir_size = 0;
  absl::Status status;
  computation.ForEachInstruction([&](const Instruction* inst) {
    if (!status.ok()) return;
    CostProperties p;
    status = Analyze(*inst, &p);
    if (!status.ok()) return;
    total.flops += p.flops;
    total.transcendentals += p.transcendentals;
    total.bytes_accessed += p.bytes_accessed;
    total.output_bytes += p.output_bytes;
    total.ir_size += p.ir_size;
    total.basic_block_splits += p.basic_block_splits;
  });
  if (!status.ok()) return status;
  Finish(&total);
  return total;
}

absl::Status CostAnalysis::HandleCustomCall(const Instruction& inst,
                                            CostProperties* p) const {
  const std::string& target = inst.attrs().custom_call_target;
  const bool gpu = options_.op_profile != nullptr;
  const bool is_gemm = target == "__cublas$gemm" ||
                       target == "__cublas$lt$matmul" ||
                       target == "__cublas$lt$matmul$f8";
  const bool is_conv = target.rfind("__cudnn$conv", 0) == 0;
  if (gpu && is_gemm && inst.operand_count() >= 1) {
    // Dot dimension numbers come from the backend config.
    nlohmann::json j = nlohmann::json::parse(inst.backend_config(), nullptr,
                                             /*allow_exceptions=*/false);
    const nlohmann::json* dnums = nullptr;
    if (j.is_object()) {
      auto g = j.find("gemm_backend_config");
      const nlohmann::json& cfg = g != j.end() ? *g : j;
      if (cfg.is_object()) {
        auto d = cfg.find("dot_dimension_numbers");
        if (d != cfg.end() && d->is_object()) dnums = &*d;
      }
    }
    if (dnums == nullptr) return MarkUnknown(p);
    std::vector<int64_t> contracting;
    auto c = dnums->find("lhs_contracting_dimensions");
    if (c != dnums->end() && c->is_array()) {
      for (const auto& v : *c) {
        if (v.is_number_integer()) {
          contracting.push_back(v.get<int64_t>());
        } else if (v.is_string()) {
          contracting.push_back(std::atoll(v.get<std::string>().c_str()));
        }
      }
    }
    const Shape& out =
        inst.shape().IsTuple() && inst.shape().tuple_shapes_size()
            ? inst.shape().tuple_shapes(0)
            : inst.shape();
    p->flops = static_cast<double>(
        DotFlops(inst.operand(0)->shape(), out, contracting));
    if (inst.shape().IsTuple()) {
      // The other elements are workspace, not output (as for convolutions).
      p->bytes_accessed += Size(out) - p->output_bytes;
      p->output_bytes = Size(out);
      p->output_bytes_by_index.assign(1, Size(out));
    }
    return absl::OkStatus();
  }
  if (gpu && is_conv && inst.operand_count() >= 2) {
    const Shape& out =
        inst.shape().IsTuple() && inst.shape().tuple_shapes_size()
            ? inst.shape().tuple_shapes(0)
            : inst.shape();
    absl::StatusOr<int64_t> flops = ConvolutionFlops(
        inst, inst.operand(0)->shape(), inst.operand(1)->shape(), out);
    // Convolution configs this analysis cannot read cost as unknown.
    if (!flops.ok()) return MarkUnknown(p);
    p->flops = static_cast<double>(*flops);
    if (inst.shape().IsTuple()) {
      // The second element is scratch space, not output.
      p->bytes_accessed += Size(out) - p->output_bytes;
      p->output_bytes = Size(out);
      p->output_bytes_by_index.assign(1, Size(out));
    }
    return absl::OkStatus();
  }
  return MarkUnknown(p);
}

absl::Status CostAnalysis::Analyze(const Instruction& inst, CostProperties* p,
                                   FusionInfo* fusion_info) const {
  const Opcode op = inst.opcode();
  const Shape& shape = inst.shape();
  const int64_t n = inst.operand_count();
  const bool gpu = options_.op_profile != nullptr;

  // Defaults: everything is read once and the output written once.
  *p = CostProperties();
  p->output_bytes = Size(shape);
  p->bytes_accessed = p->output_bytes;
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple_shapes()) {
      p->output_bytes_by_index.push_back(LeafBytes(e));
    }
  } else {
    p->output_bytes_by_index.push_back(p->output_bytes);
  }
  p->operand_bytes.resize(n);
  p->operand_utilization.assign(n, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    double b = Size(inst.operand(i)->shape());
    p->operand_bytes[i] = b;
    p->bytes_accessed += b;
  }
  if (gpu) p->basic_block_splits = InvalidatesEmitterCache(op) ? 1 : 0;

  auto zero_all = [&] {
    p->bytes_accessed = 0;
    p->output_bytes = 0;
    for (double& b : p->output_bytes_by_index) b = 0;
    for (double& b : p->operand_bytes) b = 0;
  };
  auto sub_props = [&](const Computation* c) -> absl::StatusOr<CostProperties> {
    if (c == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("instruction '", inst.name(), "' has no called computation"));
    }
    return AnalyzeComputation(*c);
  };

  if (IsElementwise(op)) {
    if (gpu) {
      p->flops = ElementwiseFlops(op, shape);
    } else if (IsGenericTranscendental(op)) {
      p->transcendentals = Elems(shape);
    } else {
      p->flops = Elems(shape);
    }
    Finish(p);
    return absl::OkStatus();
  }

  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
      zero_all();
      return absl::OkStatus();  // no bottleneck time either
    case Opcode::kGetTupleElement:
    case Opcode::kDomain:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kAlternatives:
      zero_all();
      break;
    case Opcode::kBitcast:
      zero_all();
      break;
    case Opcode::kTranspose:
      if (IsBitcastTranspose(inst)) zero_all();
      break;
    case Opcode::kTuple:
      for (double& b : p->operand_bytes) b = 0;
      p->bytes_accessed = p->output_bytes;
      for (double& b : p->output_bytes_by_index) b = 0;
      break;
    case Opcode::kConcatenate:
      if (gpu) {
        double fpe = 6;
        const int64_t dim = inst.dimensions().empty() ? 0 : inst.dimensions(0);
        if (dim > 0 && n > 0 && inst.operand(0)->shape().IsArray() &&
            dim < inst.operand(0)->shape().rank() &&
            (inst.operand(0)->shape().dimensions(dim) & 31) != 0) {
          // Warps straddling two operands run both branches.
          fpe = 400;
        }
        p->flops = fpe * static_cast<double>(ElementsInRecursive(shape));
      }
      break;
    case Opcode::kSlice: {
      if (n < 1) return OperandCountError(inst, 1);
      const double out = Size(shape);
      p->bytes_accessed = 2 * out;
      p->operand_bytes[0] = out;
      const double in = Elems(inst.operand(0)->shape());
      p->operand_utilization[0] = in > 0 ? Elems(shape) / in : 0;
      break;
    }
    case Opcode::kDynamicSlice: {
      if (n < 2) return OperandCountError(inst, 2);
      // Every scalar start index is read (the rule this follows counts
      // only the first one, from when indices were one vector operand).
      const double out = Size(shape);
      p->bytes_accessed = 2 * out;
      for (int64_t i = 1; i < n; ++i) p->bytes_accessed += p->operand_bytes[i];
      p->operand_bytes[0] = out;
      const double in = Elems(inst.operand(0)->shape());
      p->operand_utilization[0] = in > 0 ? Elems(shape) / in : 0;
      break;
    }
    case Opcode::kDynamicUpdateSlice: {
      if (n < 3) return OperandCountError(inst, 3);
      const Shape& update = inst.operand(1)->shape();
      p->bytes_accessed = 2 * Size(update);
      for (int64_t i = 2; i < n; ++i) p->bytes_accessed += p->operand_bytes[i];
      p->output_bytes = Size(update);
      p->output_bytes_by_index.assign(1, Size(update));
      p->operand_bytes[0] = 0;
      const double out = Elems(shape);
      p->operand_utilization[0] = out > 0 ? (out - Elems(update)) / out : 0;
      break;
    }
    case Opcode::kDot:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot: {
      if (n < 2) return OperandCountError(inst, 2);
      // No dimension numbers: nothing contracted (an outer product).
      const InstructionAttrs& a = inst.attrs();
      static const std::vector<int64_t>* const kNone =
          new std::vector<int64_t>();
      p->flops = static_cast<double>(DotFlops(
          inst.operand(0)->shape(), shape,
          a.dot_dnums ? a.dot_dnums->lhs_contracting_dimensions : *kNone));
      break;
    }
    case Opcode::kConvolution: {
      if (n < 2) return OperandCountError(inst, 2);
      absl::StatusOr<int64_t> f = ConvolutionFlops(
          inst, inst.operand(0)->shape(), inst.operand(1)->shape(), shape);
      if (!f.ok()) return f.status();
      p->flops = static_cast<double>(*f);
      break;
    }
    case Opcode::kFft: {
      if (n < 1) return OperandCountError(inst, 1);
      double log_product = 1;
      for (int64_t len : inst.attrs().fft_length) {
        log_product *=
            len > 0 ? std::floor(std::log2(static_cast<double>(len))) : 0;
      }
      p->flops =
          2.0 * 4.0 * log_product *
          static_cast<double>(ElementsInRecursive(inst.operand(0)->shape()));
      break;
    }
    case Opcode::kTriangularSolve: {
      if (n < 2) return OperandCountError(inst, 2);
      const Shape& a = inst.operand(0)->shape();
      const Shape& b = inst.operand(1)->shape();
      const double a_half = Size(a) / 2;
      p->bytes_accessed = Size(shape) + a_half + Size(b);
      p->operand_bytes[0] = a_half;
      const double last = a.IsArray() && a.rank() > 0
                              ? static_cast<double>(a.dimensions(a.rank() - 1))
                              : 0;
      p->flops = kFmaFlops * last * Elems(b);
      break;
    }
    case Opcode::kCholesky: {
      if (n < 1) return OperandCountError(inst, 1);
      const Shape& a = inst.operand(0)->shape();
      p->bytes_accessed = Size(shape) / 2 + Size(a) / 2;
      p->operand_bytes[0] = Size(a) / 2;
      const double last = a.IsArray() && a.rank() > 0
                              ? static_cast<double>(a.dimensions(a.rank() - 1))
                              : 0;
      p->flops = std::floor(last * Elems(a) / 3);
      break;
    }
    case Opcode::kMap: {
      absl::StatusOr<CostProperties> sub = sub_props(inst.to_apply());
      if (!sub.ok()) return sub.status();
      const double e = Elems(shape);
      p->flops = sub->flops * e;
      p->transcendentals = sub->transcendentals * e;
      break;
    }
    case Opcode::kReduce: {
      if (n < 2) return OperandCountError(inst, 2);
      absl::StatusOr<CostProperties> sub = sub_props(inst.to_apply());
      if (!sub.ok()) return sub.status();
      const Shape& out0 = FirstLeaf(shape);
      // Not negative for empty inputs.
      const double count =
          std::max(0.0, Elems(inst.operand(0)->shape()) - Elems(out0));
      p->flops = sub->flops * count;
      p->transcendentals = sub->transcendentals * count;
      if (gpu) {
        // All results are written; each output element reads the inits.
        const int64_t inputs = n / 2;
        const double out_bytes = LeafBytes(shape);
        p->output_bytes = out_bytes;
        double bytes = out_bytes;
        for (int64_t i = 0; i < inputs; ++i) bytes += p->operand_bytes[i];
        const double out_elems = Elems(out0);
        for (int64_t i = inputs; i < n; ++i) {
          const double b = out_elems * Size(inst.operand(i)->shape());
          p->operand_bytes[i] = b;
          p->operand_utilization[i] = out_elems;
          bytes += b;
        }
        p->bytes_accessed = bytes;
      }
      break;
    }
    case Opcode::kReduceWindow: {
      if (n < 2) return OperandCountError(inst, 2);
      absl::StatusOr<CostProperties> sub = sub_props(inst.to_apply());
      if (!sub.ok()) return sub.status();
      const InstructionAttrs& a = inst.attrs();
      const Shape& out0 = FirstLeaf(shape);
      const Shape& in0 = inst.operand(0)->shape();
      const double out_elems = Elems(out0);
      double window_elems = 1;
      if (a.window) {
        for (const WindowDimension& w : a.window->dimensions) {
          window_elems *= static_cast<double>(w.size);
        }
      }
      double count = std::max(0.0, window_elems - 1) * out_elems;
      // A reduce-window that is a reduction along one dimension followed
      // by a broadcast back (a cumulative-sum pattern) is counted as such.
      if (a.window && out0.IsArray() &&
          static_cast<int64_t>(a.window->dimensions.size()) == out0.rank()) {
        int64_t non_unit = -1, padded = -1, non_unit_count = 0,
                padded_count = 0;
        for (size_t d = 0; d < a.window->dimensions.size(); ++d) {
          const WindowDimension& w = a.window->dimensions[d];
          if (w.size != 1) non_unit = static_cast<int64_t>(d), ++non_unit_count;
          if (w.padding_low != 0 || w.padding_high != 0) {
            padded = static_cast<int64_t>(d), ++padded_count;
          }
        }
        if (non_unit_count == 1 && padded_count == 1 && non_unit == padded) {
          const WindowDimension& w = a.window->dimensions[non_unit];
          const int64_t dim = out0.dimensions(non_unit);
          if (w.padding_low == dim - 1 && w.padding_high == dim - 1 &&
              w.size == 2 * (dim - 1) + 1 && dim > 0) {
            count = out_elems / static_cast<double>(dim) +
                    static_cast<double>(dim - 1);
          }
        }
      }
      p->flops = sub->flops * count;
      p->transcendentals = sub->transcendentals * count;
      if (options_.count_multiple_input_accesses) {
        const double in_elems = Elems(in0);
        p->operand_utilization[0] =
            in_elems > 0 ? out_elems * window_elems / in_elems : 0;
        p->operand_bytes[0] =
            out_elems * window_elems *
            ByteWidth(in0.IsArray() ? in0.element_type() : PrimitiveType::kS32);
      }
      break;
    }
    case Opcode::kSelectAndScatter: {
      if (n < 2) return OperandCountError(inst, 2);
      const auto& called = inst.called_computations();
      if (called.size() < 2) {
        return absl::InvalidArgumentError(
            StrCat("select-and-scatter '", inst.name(),
                   "' needs select and scatter computations"));
      }
      absl::StatusOr<CostProperties> sel = sub_props(called[0]);
      if (!sel.ok()) return sel.status();
      absl::StatusOr<CostProperties> sca = sub_props(called[1]);
      if (!sca.ok()) return sca.status();
      double window_elems = 1;
      if (inst.attrs().window) {
        for (const WindowDimension& w : inst.attrs().window->dimensions) {
          window_elems *= static_cast<double>(w.size);
        }
      }
      const double src = Elems(inst.operand(1)->shape());
      p->flops = sel->flops * src * (window_elems - 1) + sca->flops * src;
      p->transcendentals = sel->transcendentals * src * (window_elems - 1) +
                           sca->transcendentals * src;
      break;
    }
    case Opcode::kBroadcast:
      if (options_.count_multiple_input_accesses && n >= 1) {
        p->operand_bytes[0] = Size(shape);
        const double in = Elems(inst.operand(0)->shape());
        p->operand_utilization[0] = in > 0 ? Elems(shape) / in : 0;
      }
      break;
    case Opcode::kGather: {
      if (n < 2) return OperandCountError(inst, 2);
      const double out = Size(shape);
      p->bytes_accessed = 2 * out + Size(inst.operand(1)->shape());
      p->operand_bytes[0] = out;
      const double in = Elems(inst.operand(0)->shape());
      p->operand_utilization[0] = in > 0 ? Elems(shape) / in : 0;
      break;
    }
    case Opcode::kScatter: {
      if (n < 3 || n % 2 == 0) return OperandCountError(inst, 3);
      const int64_t inputs = n / 2;
      absl::StatusOr<CostProperties> sub = sub_props(inst.to_apply());
      if (!sub.ok()) return sub.status();
      double updates = 0;
      for (int64_t i = 0; i < inputs; ++i) {
        const double u = Size(inst.operand(inputs + 1 + i)->shape());
        updates += u;
        p->operand_bytes[i] = u;
      }
      const double indices = Size(inst.operand(inputs)->shape());
      p->bytes_accessed = 3 * updates + indices;
      p->output_bytes = updates;
      p->output_bytes_by_index.assign(p->output_bytes_by_index.size(), 0);
      for (int64_t i = 0;
           i < inputs &&
           i < static_cast<int64_t>(p->output_bytes_by_index.size());
           ++i) {
        p->output_bytes_by_index[i] = p->operand_bytes[i];
      }
      const double count = Elems(inst.operand(inputs + 1)->shape());
      p->flops = sub->flops * count;
      p->transcendentals = sub->transcendentals * count;
      break;
    }
    case Opcode::kSort: {
      if (n < 1) return OperandCountError(inst, 1);
      const int64_t e = inst.operand(0)->shape().IsArray()
                            ? inst.operand(0)->shape().ElementsIn()
                            : 0;
      int64_t log2 = 0;
      while (log2 < 63 && (int64_t{1} << log2) < e) ++log2;
      p->flops = static_cast<double>(e) * static_cast<double>(log2);
      break;
    }
    case Opcode::kRng:
      p->transcendentals = Elems(shape);
      break;
    case Opcode::kRngBitGenerator:
      p->transcendentals = static_cast<double>(ElementsInRecursive(shape));
      break;
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart: {
      double out = LeafBytes(shape);
      if (gpu) {
        const Computation* c = inst.to_apply();
        const Opcode reducer = c != nullptr && c->root_instruction() != nullptr
                                   ? c->root_instruction()->opcode()
                                   : Opcode::kAdd;
        p->flops = static_cast<double>(options_.op_profile->CyclesPerElement(
                       reducer, FirstLeaf(shape).element_type())) *
                   static_cast<double>(ElementsInRecursive(shape));
      } else {
        p->flops = static_cast<double>(ElementsInRecursive(shape));
      }
      p->output_bytes = out;
      double bytes = out;
      for (int64_t i = 0; i < n; ++i) bytes += p->operand_bytes[i];
      p->bytes_accessed = bytes;
      break;
    }
    case Opcode::kAsyncStart:
    case Opcode::kCall: {
      absl::StatusOr<CostProperties> sub = sub_props(inst.to_apply());
      if (!sub.ok()) return sub.status();
      p->flops = sub->flops;
      p->transcendentals = sub->transcendentals;
      p->bytes_accessed = sub->bytes_accessed;
      if (op == Opcode::kCall) return absl::OkStatus();  // no bottleneck
      break;
    }
    case Opcode::kWhile: {
      // One iteration of body and condition.
      absl::StatusOr<CostProperties> body = sub_props(inst.while_body());
      if (!body.ok()) return body.status();
      absl::StatusOr<CostProperties> cond = sub_props(inst.while_condition());
      if (!cond.ok()) return cond.status();
      p->flops = body->flops + cond->flops;
      p->transcendentals = body->transcendentals + cond->transcendentals;
      p->bytes_accessed = body->bytes_accessed + cond->bytes_accessed;
      return absl::OkStatus();
    }
    case Opcode::kConditional: {
      CostProperties worst;
      worst.ir_size = 0;
      for (const Computation* c : inst.called_computations()) {
        absl::StatusOr<CostProperties> b = sub_props(c);
        if (!b.ok()) return b.status();
        worst.flops = std::max(worst.flops, b->flops);
        worst.transcendentals =
            std::max(worst.transcendentals, b->transcendentals);
        worst.bytes_accessed =
            std::max(worst.bytes_accessed, b->bytes_accessed);
      }
      p->flops = worst.flops;
      p->transcendentals = worst.transcendentals;
      p->bytes_accessed = worst.bytes_accessed;
      break;
    }
    case Opcode::kCustomCall:
      if (absl::Status s = HandleCustomCall(inst, p); !s.ok()) return s;
      if (p->unknown) {
        p->optimal_seconds = -1;
        return absl::OkStatus();
      }
      break;
    case Opcode::kFusion:
      if (absl::Status s = AnalyzeFusion(inst, p, fusion_info); !s.ok()) {
        return s;
      }
      break;
    default:
      // iota, reverse, copy, pad, reshape, collectives, ...: the defaults.
      break;
  }
  Finish(p);
  return absl::OkStatus();
}

absl::Status CostAnalysis::AnalyzeFusion(const Instruction& fusion,
                                         CostProperties* p,
                                         FusionInfo* fusion_info) const {
  const Computation* comp = fusion.fused_computation();
  if (comp == nullptr || comp->root_instruction() == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("fusion '", fusion.name(), "' has no fused computation"));
  }
  if (comp->num_parameters() != fusion.operand_count()) {
    return absl::InvalidArgumentError(
        StrCat("fusion '", fusion.name(), "' has ", fusion.operand_count(),
               " operands but its computation '", comp->name(), "' has ",
               comp->num_parameters(), " parameters"));
  }
  const bool gpu = options_.op_profile != nullptr;
  const std::vector<Instruction*> order = comp->MakeInstructionPostOrder();
  const int32_t count = static_cast<int32_t>(order.size());
  // Node ids live in the scratch slots of the fused instructions.
  for (int32_t i = 0; i < count; ++i) order[i]->scratch = i;
  std::vector<CostProperties> node(count);
  bool contains_unknown = false;
  for (int32_t i = 0; i < count; ++i) {
    if (absl::Status s = Analyze(*order[i], &node[i]); !s.ok()) return s;
    if (node[i].unknown || node[i].contains_unknown) {
      // Unknown custom calls inside: no flops from them.
      contains_unknown = true;
      node[i].flops = std::max(0.0, node[i].flops);
    }
  }
  const Instruction* root = comp->root_instruction();
  const int32_t root_id = static_cast<int32_t>(root->scratch);

  std::vector<double> utilization(count, gpu ? 0.0 : 1.0);
  std::vector<absl::InlinedVector<int32_t, 2>> roots;
  std::vector<double> root_utilization;
  p->flops = 0;
  p->transcendentals = 0;
  for (int32_t i = 0; i < count; ++i) {
    p->transcendentals += node[i].transcendentals;
  }
  if (gpu) {
    roots.resize(count);
    root_utilization.assign(count, 0.0);
    std::vector<double> root_ir_size(count, 0.0);
    std::vector<double> ir_size(count, 0.0);
    root_utilization[root_id] = 1.0;
    root_ir_size[root_id] = 1.0;
    roots[root_id].push_back(root_id);
    p->ir_size = 0;
    p->basic_block_splits = 0;
    // Consumers before producers.
    for (int32_t i = count - 1; i >= 0; --i) {
      const Instruction* inst = order[i];
      for (int32_t r : roots[i]) {
        utilization[i] += root_utilization[r];
        ir_size[i] += root_ir_size[r];
      }
      p->flops += utilization[i] * node[i].flops;
      p->ir_size += ir_size[i];
      if (InvalidatesEmitterCache(inst->opcode())) {
        p->basic_block_splits += ir_size[i];
      }
      const bool passes_roots = IsElementwiseForCost(*inst) ||
                                inst->opcode() == Opcode::kTuple ||
                                inst->opcode() == Opcode::kGetTupleElement;
      for (int64_t k = 0; k < inst->operand_count(); ++k) {
        const Instruction* operand = inst->operand(k);
        const int64_t o = operand->scratch;
        if (operand->parent() != comp || o < 0 || o >= count ||
            order[o] != operand) {
          return absl::InvalidArgumentError(StrCat(
              "fusion '", fusion.name(), "': operand '", operand->name(),
              "' of '", inst->name(), "' is not in the fused computation"));
        }
        if (passes_roots) {
          for (int32_t r : roots[i]) InsertSorted(&roots[o], r);
        } else {
          InsertSorted(&roots[o], static_cast<int32_t>(o));
          double u = utilization[i] * node[i].operand_utilization[k];
          const double e =
              static_cast<double>(ElementsInRecursive(operand->shape()));
          u = e == 0 ? 0 : std::ceil(u * e) / e;
          root_utilization[o] += u;
          root_ir_size[o] += ir_size[i];
        }
      }
    }
  } else {
    for (int32_t i = 0; i < count; ++i) p->flops += node[i].flops;
  }

  // Bytes: outputs, then constants read from memory, then parameters.
  // In-place roots (dynamic-update-slice, scatter) write only their
  // updates, as they do unfused; a parameter that is their in-place buffer
  // and has no other use is read as unfused too (not at all for a
  // dynamic-update-slice, the updated part for a scatter).
  const Shape& shape = fusion.shape();
  std::vector<double> in_place_read(comp->num_parameters(), -1.0);
  auto in_place_output = [&](const Instruction* r, double fallback) {
    if (r->opcode() == Opcode::kDynamicUpdateSlice && r->operand_count() > 2) {
      // A chain of updates of one buffer writes every update.
      double updates = 0;
      const Instruction* d = r;
      while (true) {
        updates += Size(d->operand(1)->shape());
        const Instruction* buffer = d->operand(0);
        if (buffer->user_count() != 1) break;
        if (buffer->opcode() == Opcode::kParameter) {
          in_place_read[buffer->parameter_number()] = 0;
          break;
        }
        if (buffer->opcode() != Opcode::kDynamicUpdateSlice ||
            buffer->operand_count() < 3) {
          break;
        }
        d = buffer;
      }
      return updates;
    }
    if (r->opcode() == Opcode::kScatter && r->operand_count() >= 3 &&
        r->operand_count() % 2 == 1) {
      const int64_t inputs = r->operand_count() / 2;
      double updates = 0;
      for (int64_t i = 0; i < inputs; ++i) {
        const double u = Size(r->operand(inputs + 1 + i)->shape());
        updates += u;
        const Instruction* buffer = r->operand(i);
        if (buffer->opcode() == Opcode::kParameter &&
            buffer->user_count() == 1) {
          in_place_read[buffer->parameter_number()] = u;
        }
      }
      return updates;
    }
    return fallback;
  };
  p->output_bytes_by_index.clear();
  if (root->opcode() == Opcode::kTuple && shape.IsTuple() &&
      root->operand_count() == shape.tuple_shapes_size()) {
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      p->output_bytes_by_index.push_back(
          in_place_output(root->operand(i), LeafBytes(shape.tuple_shapes(i))));
    }
  } else if (root->opcode() == Opcode::kDynamicUpdateSlice ||
             root->opcode() == Opcode::kScatter) {
    p->output_bytes_by_index.push_back(in_place_output(root, LeafBytes(shape)));
  } else if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple_shapes()) {
      p->output_bytes_by_index.push_back(LeafBytes(e));
    }
  } else {
    p->output_bytes_by_index.push_back(Size(shape));
  }
  p->output_bytes = 0;
  for (double b : p->output_bytes_by_index) p->output_bytes += b;
  double bytes = p->output_bytes;

  auto capped = [&](double u) {
    return options_.count_multiple_input_accesses ? u : std::min(u, 1.0);
  };
  for (int32_t i = 0; i < count; ++i) {
    const Instruction* inst = order[i];
    if (inst->opcode() == Opcode::kConstant && inst->shape().IsArray() &&
        inst->shape().ElementsIn() > options_.immediate_constant_max_elements) {
      bytes += Size(inst->shape()) * capped(utilization[i]);
    }
  }
  const int64_t params = comp->num_parameters();
  for (int64_t k = 0; k < params; ++k) {
    const Instruction* param = comp->parameter_instruction(k);
    const int64_t id = param->scratch;
    double read;
    if (in_place_read[k] >= 0) {
      read = in_place_read[k];
      p->operand_utilization[k] = gpu ? utilization[id] : 1.0;
    } else if (gpu) {
      read = std::llround(Size(param->shape()) * capped(utilization[id]));
      p->operand_utilization[k] = utilization[id];
    } else {
      read = GenericParameterReadBytes(*param);
      p->operand_utilization[k] = 1.0;
    }
    p->operand_bytes[k] = read;
    bytes += read;
  }
  p->bytes_accessed = bytes;
  p->contains_unknown = contains_unknown;

  if (fusion_info != nullptr) {
    fusion_info->parameter_roots.clear();
    fusion_info->root_utilization.clear();
    fusion_info->root_id = root_id;
    if (gpu) {
      for (int64_t k = 0; k < params; ++k) {
        fusion_info->parameter_roots.push_back(
            roots[comp->parameter_instruction(k)->scratch]);
      }
      fusion_info->root_utilization = std::move(root_utilization);
    }
  }
  return absl::OkStatus();
}

}  // namespace hlogym
