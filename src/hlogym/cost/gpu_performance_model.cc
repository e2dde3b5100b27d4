#include "hlogym/cost/gpu_performance_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

double Size(const Shape& s) { return static_cast<double>(ShapeSizeBytes(s)); }

const Shape& FirstLeaf(const Shape& s) {
  const Shape* p = &s;
  while (p->IsTuple() && p->tuple_shapes_size() > 0) p = &p->tuple_shapes(0);
  return *p;
}

int64_t OperandIndex(const Instruction& user, const Instruction* operand) {
  for (int64_t i = 0; i < user.operand_count(); ++i) {
    if (user.operand(i) == operand) return i;
  }
  return -1;
}

// Roots of a kernel: the fused root (or the elements of a root tuple), or
// the instruction itself.
absl::InlinedVector<const Instruction*, 2> KernelRoots(
    const Instruction& inst) {
  absl::InlinedVector<const Instruction*, 2> roots;
  const Computation* c = inst.fused_computation();
  if (c == nullptr || c->root_instruction() == nullptr) {
    roots.push_back(&inst);
    return roots;
  }
  const Instruction* root = c->root_instruction();
  if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* o : root->operands()) roots.push_back(o);
  } else {
    roots.push_back(root);
  }
  return roots;
}

// Inside a fused computation (the body of a kernel). An instruction
// outside one is a kernel of its own: its operands are other kernels'
// results.
bool InFusedComputation(const Instruction& inst) {
  return inst.parent() != nullptr && inst.parent()->IsFusionComputation();
}

// Walks up from a root through ops that only relabel or map elements one
// to one (with a single user) to the op that defines the iteration space.
// The walk stays inside the kernel, as XLA's hero analysis stays inside
// its fusion adaptor: it ends at fused parameters, and an unfused
// instruction is its own hero.
const Instruction* FindHero(const Instruction* root) {
  if (!InFusedComputation(*root)) return root;
  const Instruction* h = root;
  while (true) {
    const Opcode op = h->opcode();
    const bool trivial = h->operand_count() == 1 &&
                         (op == Opcode::kBitcast || op == Opcode::kReshape ||
                          (IsElementwiseForCost(*h) && op != Opcode::kCopy));
    if (!trivial) return h;
    const Instruction* o = h->operand(0);
    if (o->opcode() == Opcode::kParameter || o->user_count() != 1) return h;
    h = o;
  }
}

bool IsTiledTranspose(const Instruction& hero) {
  if (!TransposesMinorDimension(hero)) return false;
  const Shape& out = hero.shape();
  const Shape& in = hero.operand(0)->shape();
  const int64_t s = out.dimensions(MinorMostNonTrivialDimension(out));
  const int64_t t = in.dimensions(MinorMostNonTrivialDimension(in));
  return (s >= 16 && t >= 16) || (s >= 8 && t >= 8 && s * t >= 64 * 128);
}

// Loops that run slower when unrolled (or cannot be).
bool MayDegradeWhenUnrolled(const Instruction& inst) {
  auto bad = [](const Instruction& i) {
    switch (i.opcode()) {
      case Opcode::kSort:
      case Opcode::kDot:
        return true;
      case Opcode::kConcatenate:
        return i.operand_count() > 10;
      case Opcode::kReduce:
        return i.operand_count() > 2;
      case Opcode::kReduceWindow: {
        int64_t w = 1;
        if (i.attrs().window) {
          for (const WindowDimension& d : i.attrs().window->dimensions) {
            w *= d.size;
          }
        }
        return w > 8;
      }
      default:
        return false;
    }
  };
  const Computation* c = inst.fused_computation();
  if (c == nullptr) return bad(inst);
  bool found = false;
  c->ForEachInstruction(
      [&](const Instruction* i) { found = found || bad(*i); });
  return found;
}

// Smallest bit width among the kernel's inputs and outputs (8 for none).
int SmallestBits(const Instruction& inst) {
  int bits = 64;
  auto visit = [&](const Shape& s, auto& self) -> void {
    if (s.IsTuple()) {
      for (const Shape& e : s.tuple_shapes()) self(e, self);
    } else if (s.IsArray()) {
      bits = std::min(bits, BitWidth(s.element_type()));
    }
  };
  visit(inst.shape(), visit);
  for (const Instruction* o : inst.operands()) visit(o->shape(), visit);
  return bits;
}

// `i`, a value inside the kernel, is a broadcast or iota seen through
// bitcasts and unary elementwise ops computed in the same kernel.
bool IsBroadcastChain(const Instruction* i) {
  while (true) {
    if (i->opcode() == Opcode::kBroadcast || i->opcode() == Opcode::kIota) {
      return true;
    }
    if (i->operand_count() != 1) return false;
    if (i->opcode() != Opcode::kBitcast && !IsElementwiseForCost(*i)) {
      return false;
    }
    // The operand of an unfused instruction is another kernel's result.
    if (!InFusedComputation(*i)) return false;
    i = i->operand(0);
  }
}

// `t` transposes the minor-most dimension of something other than a
// broadcast computed in its kernel. For an unfused `t`, `fused_producer`
// (when not null) is the producer fused into it, the one operand that is
// computed in the same kernel.
bool IsBadTranspose(const Instruction& t, const Instruction* fused_producer) {
  if (!TransposesMinorDimension(t)) return false;
  const Instruction* o = t.operand(0);
  if (!InFusedComputation(t)) {
    if (o != fused_producer) return true;
    if (const Computation* c = o->fused_computation();
        c != nullptr && c->root_instruction() != nullptr) {
      o = c->root_instruction();
    }
  }
  return !IsBroadcastChain(o);
}

// Which operands `inst` reads through a bad transpose: the fused
// parameters such a transpose depends on (or, unfused, the operand of a
// bad transpose). Reads of the other operands follow the kernel's
// iteration order, as XLA's indexing-based coalescing analysis finds them
// per operand. Returns whether the kernel has a bad transpose at all.
bool FindTransposedOperands(const Instruction& inst,
                            absl::InlinedVector<bool, 4>* transposed) {
  transposed->assign(inst.operand_count(), false);
  const Computation* c = inst.fused_computation();
  if (c == nullptr) {
    if (!IsBadTranspose(inst, nullptr)) return false;
    transposed->assign(inst.operand_count(), true);
    return true;
  }
  std::vector<const Instruction*> stack;
  c->ForEachInstruction([&](const Instruction* i) {
    if (IsBadTranspose(*i, nullptr)) stack.push_back(i->operand(0));
  });
  const bool found = !stack.empty();
  absl::flat_hash_set<const Instruction*> seen;
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (!seen.insert(i).second) continue;
    if (i->opcode() == Opcode::kParameter) {
      const int64_t k = i->parameter_number();
      if (k >= 0 && k < inst.operand_count()) (*transposed)[k] = true;
      continue;
    }
    for (const Instruction* o : i->operands()) stack.push_back(o);
  }
  return found;
}

bool IsInputFusibleReduction(const Instruction& inst) {
  for (const Instruction* r : KernelRoots(inst)) {
    const Instruction* h = FindHero(r);
    if (h->opcode() == Opcode::kReduce && IsRealReduction(*h)) return true;
  }
  return false;
}

// The producer is fused into the consumer: same operand, or a
// get-tuple-element of it.
// Up to this many operands of a producer-consumer pair, fused operands are
// matched by a linear scan rather than a hash map.
constexpr int64_t kLinearOperandLimit = 16;

bool ReadsProducer(const Instruction* operand, const Instruction& producer) {
  return operand == &producer ||
         (operand->opcode() == Opcode::kGetTupleElement &&
          operand->operand_count() == 1 && operand->operand(0) == &producer);
}

// True if the consumer's root reaches `producer` only through ops that map
// elements one to one (the producer's hero then defines the kernel).
bool ConsumerRootReadsProducer(const Instruction& consumer,
                               const Instruction& producer) {
  const Computation* c = consumer.fused_computation();
  const Instruction* h;
  if (c == nullptr) {
    h = &consumer;
  } else {
    if (c->root_instruction() == nullptr) return false;
    h = c->root_instruction();
  }
  while (true) {
    if (c != nullptr && h->opcode() == Opcode::kParameter) {
      const int64_t k = h->parameter_number();
      return k >= 0 && k < consumer.operand_count() &&
             consumer.operand(k) == &producer;
    }
    const Opcode op = h->opcode();
    const bool trivial = h->operand_count() == 1 &&
                         (op == Opcode::kBitcast || op == Opcode::kReshape ||
                          IsElementwiseForCost(*h));
    if (!trivial) return false;
    if (c == nullptr) return h->operand(0) == &producer;
    h = h->operand(0);
  }
}

PrimitiveType LibraryInputType(const Instruction& inst) {
  auto first_operand_type = [](const Instruction& i) {
    return i.operand_count() > 0 && i.operand(0)->shape().IsArray()
               ? i.operand(0)->shape().element_type()
               : PrimitiveType::kF32;
  };
  const Computation* c = inst.fused_computation();
  if (c == nullptr) return first_operand_type(inst);
  PrimitiveType t = PrimitiveType::kInvalid;
  c->ForEachInstruction([&](const Instruction* i) {
    if (t == PrimitiveType::kInvalid &&
        (i->opcode() == Opcode::kDot || i->opcode() == Opcode::kConvolution ||
         i->opcode() == Opcode::kRaggedDot ||
         i->opcode() == Opcode::kScaledDot)) {
      t = first_operand_type(*i);
    }
  });
  return t == PrimitiveType::kInvalid ? PrimitiveType::kF32 : t;
}

bool IsLibraryTarget(const Instruction& inst) {
  if (inst.opcode() != Opcode::kCustomCall) return false;
  const std::string& t = inst.attrs().custom_call_target;
  return t == "__cublas$gemm" || t == "__cublas$lt$matmul" ||
         t == "__cublas$lt$matmul$f8" || t.rfind("__cudnn$conv", 0) == 0;
}

}  // namespace

std::string_view EmitterKindName(EmitterKind kind) {
  switch (kind) {
    case EmitterKind::kLoop:
      return "loop";
    case EmitterKind::kReduction:
      return "reduction";
    case EmitterKind::kTranspose:
      return "transpose";
    case EmitterKind::kScatter:
      return "scatter";
    case EmitterKind::kConcatenate:
      return "concatenate";
    case EmitterKind::kLibrary:
      return "library";
  }
  return "loop";
}

std::optional<ReductionDimensions> GetReductionDimensions(
    const Instruction& reduce) {
  if (reduce.opcode() != Opcode::kReduce || reduce.operand_count() < 2) {
    return std::nullopt;
  }
  const Shape& in = reduce.operand(0)->shape();
  if (!in.IsArray()) return std::nullopt;
  // Fusion legality asks this millions of times on large modules: inline
  // storage only, and at most the three segments that any kept pattern
  // below has.
  const int64_t rank = in.rank();
  absl::InlinedVector<char, 8> reduced(rank, 0);
  for (int64_t d : reduce.dimensions()) {
    if (d < 0 || d >= rank) return std::nullopt;
    reduced[d] = 1;
  }
  // Segments of adjacent kept / reduced dims, major to minor.
  struct Segment {
    bool reduced;
    int64_t size;
  };
  std::array<Segment, 3> segment_store;
  size_t segment_count = 0;
  const DimVector m2m = PhysicalMinorToMajor(in);
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it) {
    const int64_t dim = *it;
    if (dim < 0 || dim >= rank) return std::nullopt;
    const int64_t size = in.dimensions(dim);
    // Empty arrays have nothing to reduce (and no tiling).
    if (size <= 0) return std::nullopt;
    if (size == 1) continue;
    const bool is_reduced = reduced[dim] != 0;
    if (segment_count > 0 &&
        segment_store[segment_count - 1].reduced == is_reduced) {
      segment_store[segment_count - 1].size *= size;
    } else if (segment_count == segment_store.size()) {
      // A fourth segment: no pattern below has one. Later dims could only
      // fail the checks above too, which also give nullopt.
      return std::nullopt;
    } else {
      segment_store[segment_count++] = {is_reduced, size};
    }
  }
  const std::span<const Segment> segments(segment_store.data(), segment_count);
  ReductionDimensions r;
  auto kinds = [&](std::initializer_list<bool> want) {
    if (segments.size() != want.size()) return false;
    size_t i = 0;
    for (bool w : want) {
      if (segments[i++].reduced != w) return false;
    }
    return true;
  };
  if (kinds({true})) {
    r.dims[2] = segments[0].size;
  } else if (kinds({false, true})) {
    r.dims[1] = segments[0].size;
    r.dims[2] = segments[1].size;
  } else if (kinds({true, false, true})) {
    r.dims[0] = segments[0].size;
    r.dims[1] = segments[1].size;
    r.dims[2] = segments[2].size;
  } else if (kinds({true, false})) {
    r.is_row_reduction = false;
    r.dims[1] = segments[0].size;
    r.dims[2] = segments[1].size;
  } else if (kinds({false, true, false})) {
    r.is_row_reduction = false;
    r.dims[0] = segments[0].size;
    r.dims[1] = segments[1].size;
    r.dims[2] = segments[2].size;
  } else {
    return std::nullopt;
  }
  return r;
}

bool IsRealReduction(const Instruction& reduce) {
  std::optional<ReductionDimensions> r = GetReductionDimensions(reduce);
  if (!r) return false;
  constexpr int64_t kWarp = 32;
  if (r->is_row_reduction) {
    return r->dims[2] >= kWarp || kWarp % r->dims[2] == 0;
  }
  const int64_t major = r->dims[1], minor = r->dims[2];
  const bool elemental_faster =
      major < kWarp || (major < 2 * kWarp && minor < kWarp) ||
      (major < 4 * kWarp && minor < 8) || (major < 8 * kWarp && minor < 3);
  return !elemental_faster;
}

bool TransposesMinorDimension(const Instruction& inst) {
  if (inst.operand_count() != 1) return false;
  const Shape& out = inst.shape();
  const Shape& in = inst.operand(0)->shape();
  if (!out.IsArray() || !in.IsArray() || out.rank() != in.rank()) return false;
  if (inst.opcode() == Opcode::kTranspose) {
    if (IsBitcastTranspose(inst)) return false;
    const int64_t out_minor = MinorMostNonTrivialDimension(out);
    if (out_minor < 0 ||
        out_minor >= static_cast<int64_t>(inst.dimensions().size())) {
      return false;
    }
    const int64_t in_minor = MinorMostNonTrivialDimension(in);
    return in_minor >= 0 && inst.dimensions(out_minor) != in_minor;
  }
  if (inst.opcode() == Opcode::kCopy) {
    const int64_t out_minor = MinorMostNonTrivialDimension(out);
    const int64_t in_minor = MinorMostNonTrivialDimension(in);
    return out_minor >= 0 && in_minor >= 0 && out_minor != in_minor;
  }
  return false;
}

GpuPerformanceModel::GpuPerformanceModel(GpuDevice device)
    : device_(std::move(device)),
      analysis_(CostAnalysisOptions::Gpu(device_,
                                         /*count_multiple_input_accesses=*/
                                         true)) {}

double GpuPerformanceModel::ComputeTime(double flops,
                                        const LaunchDimensions& dims) const {
  const int64_t fpus = std::min(dims.threads_per_block, device_.fpus_per_core);
  const int64_t cores = std::min(dims.num_blocks, device_.core_count);
  const double per_ns = static_cast<double>(device_.FlopPerNsPerFpu()) *
                        static_cast<double>(std::max<int64_t>(1, cores)) *
                        static_cast<double>(std::max<int64_t>(1, fpus));
  return flops / per_ns * 1e-9;
}

double GpuPerformanceModel::AdjustBandwidth(double bandwidth,
                                            int64_t num_blocks) const {
  const double max_bw =
      static_cast<double>(num_blocks) * device_.clock_rate_ghz * 1e9 *
      static_cast<double>(device_.memory_transactions_per_clock);
  return std::min(bandwidth, max_bw);
}

double GpuPerformanceModel::ReadTime(int64_t num_blocks, double net,
                                     double total) const {
  double bw = device_.memory_bandwidth;
  if (net < static_cast<double>(device_.l2_cache_size)) {
    bw *= kL2CacheSpeedup;
    if (net < static_cast<double>(device_.l1_cache_size_per_core *
                                  device_.core_count)) {
      bw *= kL1CacheSpeedup;
    }
  }
  bw = AdjustBandwidth(bw, num_blocks);
  return bw > 0 ? total / bw : 0;
}

double GpuPerformanceModel::ReadTimeWithDramHeuristic(
    int64_t num_blocks, double net, double total,
    double coalescing_rate) const {
  const double bw = device_.memory_bandwidth;
  const double dram_bw = AdjustBandwidth(bw * coalescing_rate, num_blocks);
  double rest_bw = bw;
  if (net < static_cast<double>(device_.l2_cache_size)) {
    rest_bw *= kL2CacheSpeedup;
    if (net < static_cast<double>(device_.l1_cache_size_per_core *
                                  device_.core_count)) {
      rest_bw *= kL1CacheSpeedup;
    }
  } else {
    rest_bw *= coalescing_rate;
  }
  rest_bw = AdjustBandwidth(rest_bw, num_blocks);
  const double dram_bytes = std::min(net, total);
  const double cache_bytes = total - dram_bytes;
  double t = 0;
  if (dram_bytes > 0 && dram_bw > 0) t += dram_bytes / dram_bw;
  if (cache_bytes > 0 && rest_bw > 0) t += cache_bytes / rest_bw;
  return t;
}

double GpuPerformanceModel::WriteTime(double bytes) const {
  return bytes / device_.memory_bandwidth;
}

double GpuPerformanceModel::CoalescingRate(PrimitiveType type,
                                           bool coalesced) const {
  if (coalesced) return 1.0;
  const double bytes = IsArrayType(type) ? ByteWidth(type) : 4;
  return bytes / static_cast<double>(device_.dram_to_l2_transaction_size_bytes);
}

double GpuPerformanceModel::CombineComputeAndMemory(double compute,
                                                    double memory) {
  return compute + memory -
         kMemoryComputeParallelism * std::min(compute, memory);
}

bool GpuPerformanceModel::IsLibraryCall(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kDot:
    case Opcode::kConvolution:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot:
      return true;
    case Opcode::kCustomCall:
      return IsLibraryTarget(inst);
    case Opcode::kFusion: {
      const Computation* c = inst.fused_computation();
      if (c == nullptr) return false;
      bool found = false;
      c->ForEachInstruction([&](const Instruction* i) {
        found = found || i->opcode() == Opcode::kDot ||
                i->opcode() == Opcode::kConvolution ||
                i->opcode() == Opcode::kRaggedDot ||
                i->opcode() == Opcode::kScaledDot || IsLibraryTarget(*i);
      });
      return found;
    }
    default:
      return false;
  }
}

LaunchDimensions GpuPerformanceModel::LoopLaunch(int64_t elements,
                                                 bool may_degrade,
                                                 int min_output_bits) const {
  int64_t unroll = 1;
  if (!may_degrade &&
      elements >= device_.threads_per_core_limit * device_.core_count) {
    if (elements % 4 == 0) {
      unroll = 4;
    } else if (elements % 2 == 0) {
      unroll = 2;
    }
  }
  if (min_output_bits > 0 && min_output_bits < 8) {
    unroll = std::max<int64_t>(unroll, CeilDiv(8, min_output_bits));
  }
  const int64_t n = CeilDiv(std::max<int64_t>(elements, 0), unroll);
  LaunchDimensions d;
  d.threads_per_block =
      std::max<int64_t>(1, std::min(device_.threads_per_warp * 4, n));
  d.num_blocks = std::max<int64_t>(1, CeilDiv(n, d.threads_per_block));
  return d;
}

LaunchDimensions GpuPerformanceModel::ReductionLaunch(
    const ReductionDimensions& r) const {
  const int64_t warp = device_.threads_per_warp;
  const int64_t d0 = r.dims[0], d1 = r.dims[1], d2 = r.dims[2];
  LaunchDimensions out;
  if (!r.is_row_reduction) {
    // 32x32 threads; each thread reduces 128 rows of one column.
    out.threads_per_block = warp * warp;
    out.num_blocks = d0 * CeilDiv(d1, 128 * warp) * CeilDiv(d2, warp);
    out.num_blocks = std::max<int64_t>(1, out.num_blocks);
    return out;
  }
  const int64_t tile0 = std::min<int64_t>(d0, 8);
  const int64_t tile2 = 16;
  const int64_t rows_per_warp = (d2 < warp && warp % d2 == 0) ? warp / d2 : 1;
  int64_t tx =
      rows_per_warp > 1
          ? d2
          : std::min<int64_t>(1024, CeilDiv(CeilDiv(d2, tile2), warp) * warp);
  int64_t ty = 1;
  constexpr int64_t kThreadsPerBlockTarget = 256;
  if (tx * 2 <= kThreadsPerBlockTarget) {
    if (d1 * tx <= kThreadsPerBlockTarget) {
      ty = d1;
      while ((tx * ty) % warp != 0) ++ty;
    } else {
      ty = kThreadsPerBlockTarget / tx;
    }
  }
  int64_t vector = 1;
  if (d2 % 2 == 0 && tx > warp) {
    if (device_.compute_capability_major >= 7) {
      vector = 2;
    } else if (device_.compute_capability_major == 6 &&
               d2 % (tile2 * tx) == 0) {
      vector = 2;
    }
  }
  const int64_t per_thread2 = rows_per_warp > 1 ? 1 : tile2 / vector;
  out.threads_per_block = tx * ty;
  out.num_blocks = CeilDiv(d0, tile0) * CeilDiv(d1, ty) *
                   CeilDiv(d2 / vector, per_thread2 * tx);
  out.num_blocks = std::max<int64_t>(1, out.num_blocks);
  return out;
}

KernelLaunch GpuPerformanceModel::EstimateLaunch(
    const Instruction& inst) const {
  return Launch(inst, MayDegradeWhenUnrolled(inst), SmallestBits(inst));
}

KernelLaunch GpuPerformanceModel::Launch(const Instruction& inst,
                                         bool may_degrade, int min_bits) const {
  KernelLaunch k;
  if (IsLibraryCall(inst)) {
    k.kind = EmitterKind::kLibrary;
    k.dims.num_blocks = device_.core_count;
    k.dims.threads_per_block = device_.threads_per_warp * 4;
    return k;
  }
  const auto roots = KernelRoots(inst);
  if (min_bits >= 8) {
    for (const Instruction* r : roots) {
      const Instruction* h = FindHero(r);
      if (h->opcode() == Opcode::kReduce) {
        std::optional<ReductionDimensions> rd = GetReductionDimensions(*h);
        if (rd && IsRealReduction(*h)) {
          k.kind = EmitterKind::kReduction;
          k.dims = ReductionLaunch(*rd);
          return k;
        }
      }
    }
    for (const Instruction* r : roots) {
      const Instruction* h = FindHero(r);
      if ((h->opcode() == Opcode::kTranspose || h->opcode() == Opcode::kCopy) &&
          IsTiledTranspose(*h)) {
        const Shape& out = h->shape();
        const Shape& in = h->operand(0)->shape();
        const int64_t s = out.dimensions(MinorMostNonTrivialDimension(out));
        const int64_t t = in.dimensions(MinorMostNonTrivialDimension(in));
        k.kind = EmitterKind::kTranspose;
        k.dims.threads_per_block = device_.threads_per_warp * 4;
        k.dims.num_blocks = std::max<int64_t>(
            1, out.ElementsIn() / (s * t) * CeilDiv(s, 32) * CeilDiv(t, 32));
        return k;
      }
    }
    if (roots.size() == 1) {
      const Instruction* r = roots[0];
      if (r->opcode() == Opcode::kScatter && r->operand_count() >= 3) {
        k.kind = EmitterKind::kScatter;
        k.dims =
            LoopLaunch(ElementsInRecursive(
                           r->operand(r->operand_count() / 2 + 1)->shape()),
                       /*may_degrade=*/true, min_bits);
        return k;
      }
      const Instruction* h = FindHero(r);
      if (h->opcode() == Opcode::kConcatenate && h->operand_count() <= 4 &&
          inst.shape().IsArray()) {
        int64_t largest = 0;
        for (const Instruction* o : h->operands()) {
          largest = std::max(largest, ElementsInRecursive(o->shape()));
        }
        k.kind = EmitterKind::kConcatenate;
        k.dims = LoopLaunch(largest, may_degrade, min_bits);
        return k;
      }
    }
  }
  k.kind = EmitterKind::kLoop;
  // The loop runs over the roots' shape. Fusions that XLA's rules allow
  // have compatible roots; a multi-output fusion that does not (one from
  // GeneralFusion's relaxed rules) needs threads for its largest output.
  int64_t elements = 1;
  for (const Instruction* r : roots) {
    const Shape& loop_shape = FirstLeaf(r->shape());
    if (loop_shape.IsArray()) {
      elements = std::max(elements, loop_shape.ElementsIn());
    }
  }
  k.dims = LoopLaunch(elements, may_degrade, min_bits);
  return k;
}

KernelLaunch GpuPerformanceModel::EstimateFusedLaunch(
    const Instruction& producer, const Instruction& consumer) const {
  return FusedLaunch(producer, consumer,
                     AnalyzeKernel(producer, /*fusion_info=*/false),
                     AnalyzeKernel(consumer, /*fusion_info=*/false));
}

KernelLaunch GpuPerformanceModel::FusedLaunch(
    const Instruction& producer, const Instruction& consumer,
    const KernelAnalysis& producer_analysis,
    const KernelAnalysis& consumer_analysis) const {
  KernelLaunch c = consumer_analysis.launch;
  if (c.kind != EmitterKind::kLoop) return c;
  const KernelLaunch& p = producer_analysis.launch;
  if ((p.kind == EmitterKind::kReduction ||
       p.kind == EmitterKind::kTranspose) &&
      ConsumerRootReadsProducer(consumer, producer)) {
    return p;
  }
  const auto roots = KernelRoots(consumer);
  const Shape& loop_shape = FirstLeaf(roots[0]->shape());
  c.dims = LoopLaunch(loop_shape.IsArray() ? loop_shape.ElementsIn() : 1,
                      consumer_analysis.may_degrade_when_unrolled ||
                          producer_analysis.may_degrade_when_unrolled,
                      std::min(consumer_analysis.smallest_bits,
                               producer_analysis.smallest_bits));
  return c;
}

KernelAnalysis GpuPerformanceModel::AnalyzeKernel(const Instruction& inst,
                                                  bool fusion_info) const {
  KernelAnalysis a;
  a.status =
      analysis_.Analyze(inst, &a.props, fusion_info ? &a.fusion_info : nullptr);
  a.library = IsLibraryCall(inst);
  a.may_degrade_when_unrolled = MayDegradeWhenUnrolled(inst);
  a.smallest_bits = SmallestBits(inst);
  a.launch = Launch(inst, a.may_degrade_when_unrolled, a.smallest_bits);
  a.bad_transpose = FindTransposedOperands(inst, &a.transposed_operands);
  a.input_fusible_reduction = IsInputFusibleReduction(inst);
  a.operand_sizes.reserve(inst.operand_count());
  for (const Instruction* o : inst.operands()) {
    a.operand_sizes.push_back(Size(o->shape()));
  }
  return a;
}

absl::StatusOr<RunTimeData> GpuPerformanceModel::LibraryRunTime(
    const Instruction& inst, const CostProperties& props) const {
  RunTimeData d;
  d.launch = EstimateLaunch(inst);
  d.flops = std::max(0.0, props.flops);
  d.transcendentals = props.transcendentals;
  const double rate = device_.matrix_rates.ForType(LibraryInputType(inst));
  d.compute_time = rate > 0 ? d.flops / rate : 0;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    d.bytes_read += std::max(0.0, props.operand_bytes[i]);
  }
  d.bytes_written = std::max(0.0, props.output_bytes);
  d.read_time = d.bytes_read / device_.memory_bandwidth;
  d.write_time = WriteTime(d.bytes_written);
  d.exec_time = CombineComputeAndMemory(d.compute_time, d.memory_time());
  return d;
}

absl::StatusOr<RunTimeData> GpuPerformanceModel::EstimateRunTime(
    const Instruction& inst) const {
  return EstimateRunTime(inst, AnalyzeKernel(inst, /*fusion_info=*/false));
}

absl::StatusOr<RunTimeData> GpuPerformanceModel::EstimateRunTime(
    const Instruction& inst, const KernelAnalysis& analysis) const {
  if (!analysis.status.ok()) return analysis.status;
  CostProperties props = analysis.props;
  if (props.unknown) {
    // Unknown custom call: no flops, every operand read and the result
    // written once.
    props.flops = 0;
    props.output_bytes = Size(inst.shape());
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      props.operand_bytes[i] = Size(inst.operand(i)->shape());
    }
  }
  const bool unknown = props.unknown || props.contains_unknown;
  if (analysis.library) {
    absl::StatusOr<RunTimeData> d = LibraryRunTime(inst, props);
    if (d.ok()) d->unknown_cost = unknown;
    return d;
  }
  RunTimeData d;
  d.unknown_cost = unknown;
  d.launch = analysis.launch;
  d.flops = props.flops;
  d.transcendentals = props.transcendentals;
  d.bytes_written = props.output_bytes;
  d.compute_time = ComputeTime(d.flops, d.launch.dims);
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Instruction* o = inst.operand(i);
    const double total = props.operand_bytes[OperandIndex(inst, o)];
    const double net = std::min(Size(o->shape()), total);
    // Reads through a transpose of the minor-most dimension are
    // uncoalesced unless the transpose emitter tiles them.
    const bool coalesced = d.launch.kind == EmitterKind::kTranspose ||
                           !analysis.transposed_operands[i];
    d.coalesced = d.coalesced && coalesced;
    d.bytes_read += total;
    d.read_time += ReadTimeWithDramHeuristic(
        d.launch.dims.num_blocks, net, total,
        CoalescingRate(o->shape().element_type(), coalesced));
  }
  d.write_time = WriteTime(d.bytes_written);
  d.exec_time = CombineComputeAndMemory(d.compute_time, d.memory_time());
  return d;
}

absl::StatusOr<RunTimeData> GpuPerformanceModel::EstimateFusedRunTime(
    const Instruction& producer, const Instruction& consumer,
    bool producer_output_kept) const {
  return EstimateFusedRunTime(producer, consumer, AnalyzeKernel(producer),
                              AnalyzeKernel(consumer), producer_output_kept);
}

absl::StatusOr<RunTimeData> GpuPerformanceModel::EstimateFusedRunTime(
    const Instruction& producer, const Instruction& consumer,
    const KernelAnalysis& producer_analysis,
    const KernelAnalysis& consumer_analysis, bool producer_output_kept) const {
  if (producer_analysis.library || consumer_analysis.library) {
    return absl::InvalidArgumentError(
        StrCat("cannot estimate fusing '", producer.name(), "' into '",
               consumer.name(), "': library calls do not fuse"));
  }
  if (std::none_of(
          consumer.operands().begin(), consumer.operands().end(),
          [&](const Instruction* o) { return ReadsProducer(o, producer); })) {
    return absl::InvalidArgumentError(
        StrCat("'", consumer.name(), "' does not use '", producer.name(), "'"));
  }
  if (!producer_analysis.status.ok()) return producer_analysis.status;
  if (!consumer_analysis.status.ok()) return consumer_analysis.status;
  const CostProperties& pp = producer_analysis.props;
  const CostProperties& cp = consumer_analysis.props;
  if (pp.unknown || cp.unknown) {
    return absl::InvalidArgumentError(
        StrCat("cannot estimate fusing '", producer.name(), "' into '",
               consumer.name(), "': unknown custom call"));
  }
  // How much of the producer's output the consumer reads.
  double utilization = 0;
  absl::InlinedVector<int64_t, 2> producer_indices;  // in the consumer
  for (int64_t k = 0; k < consumer.operand_count(); ++k) {
    if (ReadsProducer(consumer.operand(k), producer)) {
      utilization += cp.operand_utilization[k];
      producer_indices.push_back(k);
    }
  }

  RunTimeData d;
  d.launch =
      FusedLaunch(producer, consumer, producer_analysis, consumer_analysis);
  d.flops = pp.flops * utilization + cp.flops;
  d.transcendentals = pp.transcendentals * utilization + cp.transcendentals;
  d.compute_time = ComputeTime(d.flops, d.launch.dims);
  // Reads through a transpose of the minor-most dimension are uncoalesced
  // (per operand, unless the transpose emitter tiles them), and so are all
  // reads when two reductions are fused. The consumer's transposed
  // operands: an unfused consumer may transpose a broadcast producer, now
  // computed in its kernel.
  const bool tiled = d.launch.kind == EmitterKind::kTranspose;
  const bool two_reductions = d.launch.kind == EmitterKind::kReduction &&
                              producer_analysis.input_fusible_reduction &&
                              consumer_analysis.input_fusible_reduction;
  auto consumer_transposes = [&](int64_t index) {
    if (consumer.fused_computation() != nullptr) {
      return consumer_analysis.transposed_operands[index];
    }
    return IsBadTranspose(consumer, &producer);
  };
  // The consumer transposes the producer's result: every producer operand
  // is read transposed.
  bool producer_transposed = false;
  for (int64_t k : producer_indices) {
    producer_transposed = producer_transposed || consumer_transposes(k);
  }

  // Operands of the fused kernel: the producer's, then the consumer's other
  // operands, each once, with the first index at which each side reads it
  // (-1: not read). Most pairs have a handful of operands (a linear
  // scan); fusions may have ~100, hence the map beyond that.
  struct FusedOperand {
    const Instruction* value;
    int64_t producer_index;
    int64_t consumer_index;
  };
  absl::InlinedVector<FusedOperand, 8> operands;
  const bool indexed =
      producer.operand_count() + consumer.operand_count() > kLinearOperandLimit;
  absl::flat_hash_map<const Instruction*, size_t> position;
  if (indexed) {
    position.reserve(producer.operand_count() + consumer.operand_count());
    operands.reserve(producer.operand_count() + consumer.operand_count());
  }
  auto find = [&](const Instruction* o) -> size_t {
    if (indexed) {
      auto [it, inserted] = position.try_emplace(o, operands.size());
      if (inserted) operands.push_back({o, -1, -1});
      return it->second;
    }
    for (size_t k = 0; k < operands.size(); ++k) {
      if (operands[k].value == o) return k;
    }
    operands.push_back({o, -1, -1});
    return operands.size() - 1;
  };
  auto add = [&](const Instruction* o, bool from_producer, int64_t index) {
    if (ReadsProducer(o, producer)) return;
    FusedOperand& f = operands[find(o)];
    int64_t& slot = from_producer ? f.producer_index : f.consumer_index;
    if (slot < 0) slot = index;
  };
  for (int64_t i = 0; i < producer.operand_count(); ++i) {
    add(producer.operand(i), true, i);
  }
  for (int64_t i = 0; i < consumer.operand_count(); ++i) {
    add(consumer.operand(i), false, i);
  }

  const bool producer_elementwise_like =
      IsElementwiseForCost(producer) || producer.opcode() == Opcode::kFusion;
  for (const FusedOperand& f : operands) {
    const Instruction* o = f.value;
    const int64_t pi = f.producer_index;
    const int64_t ci = f.consumer_index;
    const double by_producer = pi >= 0 ? pp.operand_bytes[pi] : 0;
    const double by_consumer = ci >= 0 ? cp.operand_bytes[ci] : 0;
    // Reads of `o` that producer and consumer make in lockstep happen once.
    double common = 0;
    if (pi >= 0 && ci >= 0 && producer_elementwise_like) {
      const bool reads_from_root =
          producer.opcode() != Opcode::kFusion ||
          producer_analysis.fusion_info.CommonUtilizationWithRoot(pi) == 1.0;
      if (reads_from_root) {
        if (consumer.opcode() == Opcode::kFusion) {
          for (int64_t k : producer_indices) {
            common +=
                consumer_analysis.fusion_info.CommonElementwiseUtilization(ci,
                                                                           k);
          }
        } else if (IsElementwiseForCost(consumer)) {
          common = 1;
        }
      }
    }
    // The operand's size, as the kernel analyses recorded it.
    const absl::InlinedVector<double, 4>& sizes =
        pi >= 0 ? producer_analysis.operand_sizes
                : consumer_analysis.operand_sizes;
    const int64_t k = pi >= 0 ? pi : ci;
    const double size =
        k < static_cast<int64_t>(sizes.size()) ? sizes[k] : Size(o->shape());
    const double total =
        static_cast<double>(std::llround(by_producer * utilization)) +
        by_consumer - static_cast<double>(std::llround(size * common));
    const double net = std::min(size, total);
    const bool transposed =
        (pi >= 0 &&
         (producer_transposed || producer_analysis.transposed_operands[pi])) ||
        (ci >= 0 && consumer_transposes(ci));
    const bool coalesced = !two_reductions && (tiled || !transposed);
    d.coalesced = d.coalesced && coalesced;
    d.bytes_read += total;
    d.read_time += ReadTimeWithDramHeuristic(
        d.launch.dims.num_blocks, net, total,
        CoalescingRate(o->shape().element_type(), coalesced));
  }
  d.bytes_written = cp.output_bytes;
  if (producer_output_kept) d.bytes_written += pp.output_bytes;
  d.write_time = WriteTime(d.bytes_written);
  d.exec_time = CombineComputeAndMemory(d.compute_time, d.memory_time());
  return d;
}

absl::StatusOr<GpuPerformanceModel::RunTimes>
GpuPerformanceModel::EstimateRunTimes(
    const Instruction& producer,
    absl::Span<const Instruction* const> consumers) const {
  absl::InlinedVector<const Instruction*, 4> users;
  if (consumers.empty()) {
    for (const Instruction* u : producer.users()) users.push_back(u);
  } else {
    users.assign(consumers.begin(), consumers.end());
  }
  const KernelAnalysis pa = AnalyzeKernel(producer);
  absl::StatusOr<RunTimeData> p = EstimateRunTime(producer, pa);
  if (!p.ok()) return p.status();
  RunTimes t;
  const double n = static_cast<double>(users.size());
  t.time_unfused = LaunchOverhead() * (n + 1) + p->exec_time;
  t.time_fused = LaunchOverhead() * n;
  for (const Instruction* c : users) {
    const KernelAnalysis ca = AnalyzeKernel(*c);
    absl::StatusOr<RunTimeData> cd = EstimateRunTime(*c, ca);
    if (!cd.ok()) return cd.status();
    t.time_unfused += cd->exec_time;
    absl::StatusOr<RunTimeData> fd = EstimateFusedRunTime(producer, *c, pa, ca);
    if (!fd.ok()) return fd.status();
    t.time_fused += fd->exec_time;
  }
  return t;
}

absl::StatusOr<GpuPerformanceModel::RunTimes>
GpuPerformanceModel::EstimateMultiOutputRunTimes(
    const Instruction& producer, const Instruction& consumer) const {
  const KernelAnalysis pa = AnalyzeKernel(producer);
  const KernelAnalysis ca = AnalyzeKernel(consumer);
  absl::StatusOr<RunTimeData> p = EstimateRunTime(producer, pa);
  if (!p.ok()) return p.status();
  absl::StatusOr<RunTimeData> c = EstimateRunTime(consumer, ca);
  if (!c.ok()) return c.status();
  absl::StatusOr<RunTimeData> f = EstimateFusedRunTime(
      producer, consumer, pa, ca, /*producer_output_kept=*/true);
  if (!f.ok()) return f.status();
  RunTimes t;
  t.time_unfused = 2 * LaunchOverhead() + p->exec_time + c->exec_time;
  t.time_fused = LaunchOverhead() + f->exec_time;
  return t;
}

}  // namespace hlogym
