#include "hlogym/cost/evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "hlogym/cost/trip_count.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/str_util.h"
#include "nlohmann/json.hpp"

namespace hlogym {
namespace {

// ---------------------------------------------------------------------------
// Structural keys. A 64x64->128 multiply folded to 64 bits mixes each word;
// any change to a hashed field changes the key with high probability.

__extension__ using U128 = unsigned __int128;
constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kKernelSeed = 0x2d358dccaa6c78a5ull;
constexpr uint64_t kComputationSeed = 0x8bb84b93962eacc9ull;

inline uint64_t Mix(uint64_t h, uint64_t v) {
  U128 r = static_cast<U128>(h ^ v) * static_cast<U128>(kMul ^ (h >> 7));
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

template <typename Range>
uint64_t MixRange(uint64_t h, const Range& r) {
  h = Mix(h, static_cast<uint64_t>(r.size()));
  for (const auto& v : r) h = Mix(h, static_cast<uint64_t>(v));
  return h;
}

uint64_t MixString(uint64_t h, const std::string& s) {
  h = Mix(h, s.size());
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = Mix(h, w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  return Mix(h, tail);
}

uint64_t MixShape(uint64_t h, const Shape& s) {
  if (s.IsTuple()) {
    h = Mix(h, static_cast<uint64_t>(s.element_type()) |
                   static_cast<uint64_t>(s.tuple_shapes_size()) << 8);
    for (const Shape& e : s.tuple_shapes()) h = MixShape(h, e);
    return h;
  }
  if (!s.IsArray()) return Mix(h, static_cast<uint64_t>(s.element_type()));
  // One word for type, rank and layout kind, then two dimensions per word
  // (dimensions below 2^32; larger ones take a word each).
  const int64_t rank = s.rank();
  uint64_t layout_kind = 0;  // 0: none, 1: default (major to minor), 2: other
  bool dynamic = false;
  if (s.has_layout()) {
    const Layout& l = s.layout();
    layout_kind = 1;
    // Packed sub-byte elements change the byte size; nothing else in the
    // layout tail affects cost (and reading it costs cache misses).
    if (static_cast<int64_t>(l.minor_to_major.size()) != rank ||
        (BitWidth(s.element_type()) < 8 &&
         l.tail().element_size_in_bits != 0)) {
      layout_kind = 2;
    } else {
      for (int64_t i = 0; i < rank; ++i) {
        if (l.minor_to_major[i] != rank - 1 - i) layout_kind = 2;
      }
    }
  }
  for (int64_t i = 0; i < rank && i < 64; ++i) {
    dynamic = dynamic || s.is_dynamic_dimension(i);
  }
  h = Mix(h, static_cast<uint64_t>(s.element_type()) |
                 static_cast<uint64_t>(rank) << 8 | layout_kind << 40 |
                 (dynamic ? uint64_t{1} << 44 : 0));
  const DimVector& d = s.dimensions();
  int64_t i = 0;
  for (; i + 1 < rank; i += 2) {
    const uint64_t a = static_cast<uint64_t>(d[i]);
    const uint64_t b = static_cast<uint64_t>(d[i + 1]);
    if ((a | b) >> 32) {
      h = Mix(Mix(h, a), b);
    } else {
      h = Mix(h, a | b << 32);
    }
  }
  if (i < rank) h = Mix(h, static_cast<uint64_t>(d[i]));
  if (layout_kind == 2) {
    h = MixRange(h, s.layout().minor_to_major);
    if (BitWidth(s.element_type()) < 8) {
      h = Mix(h, static_cast<uint64_t>(s.layout().tail().element_size_in_bits));
    }
  }
  if (dynamic) {
    uint64_t mask = 0;
    for (int64_t k = 0; k < rank && k < 64; ++k) {
      if (s.is_dynamic_dimension(k)) mask |= uint64_t{1} << k;
    }
    h = Mix(h, mask);
  }
  return h;
}

// The attributes that change an instruction's cost.
uint64_t MixAttrs(uint64_t h, const InstructionAttrs& a) {
  for (const SliceDimension& d : a.slice) {
    h = Mix(Mix(Mix(h, d.start), d.limit), d.stride);
  }
  h = MixRange(h, a.dynamic_slice_sizes);
  for (const PaddingDimension& d : a.padding) {
    h = Mix(Mix(Mix(h, d.low), d.high), d.interior);
  }
  if (a.window) {
    for (const WindowDimension& w : a.window->dimensions) {
      h = Mix(h, w.size);
      h = Mix(h, w.stride);
      h = Mix(h, w.padding_low);
      h = Mix(h, w.padding_high);
      h = Mix(h, w.window_dilation);
      h = Mix(h, w.base_dilation);
    }
    h = Mix(h, a.window->dimensions.size());
  }
  if (a.conv_dnums) {
    const ConvolutionDimensionNumbers& c = *a.conv_dnums;
    h = Mix(h, c.input_batch_dimension);
    h = Mix(h, c.input_feature_dimension);
    h = MixRange(h, c.input_spatial_dimensions);
    h = Mix(h, c.kernel_input_feature_dimension);
    h = Mix(h, c.kernel_output_feature_dimension);
    h = MixRange(h, c.kernel_spatial_dimensions);
    h = Mix(h, c.output_batch_dimension);
    h = Mix(h, c.output_feature_dimension);
    h = MixRange(h, c.output_spatial_dimensions);
  }
  h = Mix(h, a.feature_group_count);
  h = Mix(h, a.batch_group_count);
  if (a.dot_dnums) {
    h = MixRange(h, a.dot_dnums->lhs_batch_dimensions);
    h = MixRange(h, a.dot_dnums->lhs_contracting_dimensions);
    h = MixRange(h, a.dot_dnums->rhs_batch_dimensions);
    h = MixRange(h, a.dot_dnums->rhs_contracting_dimensions);
  }
  if (a.gather_dnums) {
    h = MixRange(h, a.gather_dnums->offset_dims);
    h = MixRange(h, a.gather_dnums->collapsed_slice_dims);
    h = MixRange(h, a.gather_dnums->start_index_map);
    h = Mix(h, a.gather_dnums->index_vector_dim);
  }
  h = MixRange(h, a.gather_slice_sizes);
  if (a.scatter_dnums) {
    h = MixRange(h, a.scatter_dnums->update_window_dims);
    h = MixRange(h, a.scatter_dnums->inserted_window_dims);
    h = Mix(h, a.scatter_dnums->index_vector_dim);
  }
  if (a.has_custom_call_target) h = MixString(h, a.custom_call_target);
  h = MixRange(h, a.fft_length);
  return h;
}

// Opcodes whose cost depends on their attribute block.
bool HasCostAttributes(Opcode op) {
  switch (op) {
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kPad:
    case Opcode::kConvolution:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kDot:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot:
    case Opcode::kGather:
    case Opcode::kScatter:
    case Opcode::kCustomCall:
    case Opcode::kFft:
      return true;
    default:
      return false;
  }
}

// Mixes in, for each operand that repeats an earlier one, both positions.
uint64_t MixRepeats(uint64_t h, const InstructionVector& ops) {
  const size_t n = ops.size();
  if (n <= 16) {
    for (size_t i = 1; i < n; ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (ops[j] == ops[i]) {
          h = Mix(h, i << 32 | j);
          break;
        }
      }
    }
    return h;
  }
  absl::flat_hash_map<const Instruction*, size_t> first;
  for (size_t i = 0; i < n; ++i) {
    auto [it, fresh] = first.try_emplace(ops[i], i);
    if (!fresh) h = Mix(h, i << 32 | it->second);
  }
  return h;
}

// Everything about one instruction except its called computations.
uint64_t LocalKey(const Instruction& inst) {
  const Opcode op = inst.opcode();
  const int64_t n = inst.operand_count();
  // Parameter numbers and tuple indices route values inside fusions; other
  // integer attributes (iota dimension) do not change cost.
  const uint64_t int_attr =
      op == Opcode::kParameter || op == Opcode::kGetTupleElement
          ? static_cast<uint64_t>(inst.int_attr())
          : 0;
  const uint64_t head = static_cast<uint64_t>(op) |
                        static_cast<uint64_t>(n) << 8 |
                        static_cast<uint64_t>(inst.fusion_kind()) << 40 |
                        (inst.has_dimensions() ? uint64_t{1} << 48 : 0);
  // Independent chains for the shapes, so they hash in parallel.
  const uint64_t out = MixShape(kKernelSeed, inst.shape());
  const uint64_t in0 =
      n > 0 ? MixShape(kKernelSeed, inst.operand(0)->shape()) : 0;
  const uint64_t in1 =
      n > 1 ? MixShape(kKernelSeed, inst.operand(1)->shape()) : 0;
  uint64_t h = Mix(Mix(Mix(Mix(kKernelSeed, head), int_attr), out), in0);
  h = Mix(h, in1);
  for (int64_t i = 2; i < n; ++i) h = MixShape(h, inst.operand(i)->shape());
  // Only these opcodes' dimensions= change their cost (broadcast's do not,
  // and skipping them saves a cache line per broadcast).
  if (inst.has_dimensions() &&
      (op == Opcode::kReduce || op == Opcode::kTranspose ||
       op == Opcode::kConcatenate)) {
    h = MixRange(h, inst.dimensions());
  }
  if (HasCostAttributes(op)) h = MixAttrs(h, inst.attrs());
  if (op == Opcode::kCustomCall) h = MixString(h, inst.backend_config());
  // Which operands are the same value: the model prices an operand by the
  // first position holding it, so fusion(a, a) and fusion(a, b) of the
  // same shapes can cost differently.
  if (n > 1) h = MixRepeats(h, inst.operands());
  return h;
}

// Opcodes that can call computations (the others' called-computation list,
// a cache line of its own, is not read).
bool MayCall(Opcode op) {
  switch (op) {
    case Opcode::kFusion:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kReduceScatter:
    case Opcode::kMap:
    case Opcode::kScatter:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kScan:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCustomCall:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

// Opcodes that never launch work of their own.
bool IsFreeOpcode(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kBitcast:
      return true;
    default:
      return false;
  }
}

// Instructions that launch no work of their own.
bool IsFree(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kBitcast:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAlternatives:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kCopyDone:
    case Opcode::kGetDimensionSize:
      return true;
    case Opcode::kTranspose:
      return IsBitcastTranspose(inst);
    case Opcode::kReshape: {
      // A reshape between row-major layouts keeps the element order: it is
      // a bitcast once layouts are assigned.
      if (inst.operand_count() != 1) return false;
      const Shape& a = inst.shape();
      const Shape& b = inst.operand(0)->shape();
      auto row_major = [](const Shape& s) {
        if (!s.IsArray()) return false;
        const DimVector m2m = PhysicalMinorToMajor(s);
        for (int64_t i = 0; i < s.rank(); ++i) {
          if (m2m[i] != s.rank() - 1 - i) return false;
        }
        return true;
      };
      return row_major(a) && row_major(b) &&
             a.element_type() == b.element_type();
    }
    default:
      return false;
  }
}

bool IsHostTransfer(Opcode op) {
  switch (op) {
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      return true;
    default:
      return false;
  }
}

bool IsCollectiveKernel(Opcode op) {
  return IsCollective(op) || op == Opcode::kCollectivePermuteStart ||
         op == Opcode::kAllGatherStart || op == Opcode::kAllReduceStart;
}

constexpr int kMaxCallDepth = 64;

// The cache lines of a shape that keys read: type and dimensions, and the
// layout's minor-to-major order.
inline void PrefetchShape(const Shape& s) {
  __builtin_prefetch(&s);
  __builtin_prefetch(&s.dimensions());
  __builtin_prefetch(&s.layout().minor_to_major);
  __builtin_prefetch(reinterpret_cast<const char*>(&s.layout()) + 48);
}

}  // namespace

// ---------------------------------------------------------------------------

struct ModelEvaluator::Accounting {
  // Seconds in fixed point (units of 2^-80 s) so that the total does not
  // depend on the order kernels are visited: two modules with the same
  // DagHash price the same to the last bit. Terms are clamped to
  // [0, 2^40 s] so the conversion cannot overflow.
  static constexpr double kUnitsPerSecond = 0x1p80;
  __int128 seconds_fixed = 0;
  void AddSeconds(double s) {
    const double clamped = s > 0 ? std::min(s, 0x1p40) : 0.0;
    seconds_fixed += static_cast<__int128>(clamped * kUnitsPerSecond);
  }
  double seconds() const {
    return static_cast<double>(seconds_fixed) / kUnitsPerSecond;
  }
  double flops = 0;
  double transcendentals = 0;
  double bytes = 0;
  int64_t kernels = 0;
  double launches = 0;
  std::vector<KernelCost> breakdown;
  std::vector<std::string> flags;
  bool per_kernel = true;

  void Flag(std::string f) {
    if (std::find(flags.begin(), flags.end(), f) == flags.end()) {
      flags.push_back(std::move(f));
    }
  }
  void Merge(Accounting&& o) {
    seconds_fixed += o.seconds_fixed;
    flops += o.flops;
    transcendentals += o.transcendentals;
    bytes += o.bytes;
    kernels += o.kernels;
    launches += o.launches;
    for (KernelCost& k : o.breakdown) breakdown.push_back(std::move(k));
    for (std::string& f : o.flags) Flag(std::move(f));
  }
};

ModelEvaluator::ModelEvaluator(GpuDevice device, EvaluatorOptions options)
    : model_(std::move(device)), options_(options) {}

std::string ModelEvaluator::name() const {
  return StrCat("model:", model_.device().name);
}

uint64_t ModelEvaluator::ComputationKey(const Computation& c) {
  // Small computations (reduction regions) are cheaper to hash again than
  // to look up, and are numbered without writing to their instructions.
  constexpr int64_t kSmall = 16;
  const int64_t size = c.instruction_count();
  if (size > kSmall) {
    auto it = computation_keys_.find(&c);
    if (it != computation_keys_.end()) return it->second;
  }
  const Instruction* small[kSmall];
  int64_t next = 0;
  if (size <= kSmall) {
    c.ForEachInstruction([&](const Instruction* inst) {
      if (next < kSmall) small[next++] = inst;
    });
  } else {
    c.ForEachInstruction(
        [&](const Instruction* inst) { inst->scratch = next++; });
  }
  // Instructions are numbered in slot order (the key depends on the order
  // of the text, which at worst costs a cache hit).
  auto number = [&](const Instruction* inst) -> uint64_t {
    if (inst == nullptr || inst->parent() != &c) return ~uint64_t{0};
    if (size > kSmall) return static_cast<uint64_t>(inst->scratch);
    for (int64_t i = 0; i < next; ++i) {
      if (small[i] == inst) return static_cast<uint64_t>(i);
    }
    return ~uint64_t{0};
  };
  uint64_t h = Mix(kComputationSeed, static_cast<uint64_t>(next));
  bool calls = false;
  c.ForEachInstruction([&](const Instruction* inst) {
    h = Mix(h, LocalKey(*inst));
    for (const Instruction* o : inst->operands()) h = Mix(h, number(o));
    calls = calls ||
            (MayCall(inst->opcode()) && !inst->called_computations().empty());
  });
  h = Mix(h, number(c.root_instruction()));
  // Called computations once this one's numbers are no longer needed
  // (they renumber their own instructions only).
  if (calls) {
    c.ForEachInstruction([&](const Instruction* inst) {
      if (!MayCall(inst->opcode())) return;
      for (const Computation* called : inst->called_computations()) {
        h = Mix(h, called == &c ? 0 : ComputationKey(*called));
      }
    });
  }
  if (size > kSmall) computation_keys_[&c] = h;
  return h;
}

uint64_t ModelEvaluator::KernelKey(const Instruction& inst) {
  uint64_t h = LocalKey(inst);
  if (!MayCall(inst.opcode())) return h;
  for (const Computation* c : inst.called_computations()) {
    h = Mix(h, ComputationKey(*c));
  }
  return h;
}

absl::StatusOr<const ModelEvaluator::CachedKernel*> ModelEvaluator::Kernel(
    const Instruction& inst) {
  const uint64_t key = KernelKey(inst);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    ++cache_hits_;
    return &it->second;
  }
  ++cache_misses_;
  absl::StatusOr<RunTimeData> d = model_.EstimateRunTime(inst);
  if (!d.ok()) return d.status();
  CachedKernel k;
  k.flops = d->flops;
  k.transcendentals = d->transcendentals;
  k.bytes = d->bytes_read + d->bytes_written;
  k.compute_seconds = d->compute_time;
  k.memory_seconds = d->memory_time();
  k.exec_seconds = d->exec_time;
  k.emitter = d->launch.kind;
  k.unknown_custom_call = d->unknown_cost;
  const GpuDevice& dev = model_.device();
  k.launch_seconds = IsCollectiveKernel(inst.opcode())
                         ? dev.collective_launch_overhead_seconds
                         : dev.kernel_launch_overhead_seconds;
  return &cache_.emplace(key, k).first->second;
}

absl::Status ModelEvaluator::AccountComputation(const Computation& computation,
                                                double launches, int depth,
                                                Accounting* acc) {
  if (depth > kMaxCallDepth) {
    return absl::InvalidArgumentError(
        StrCat("computation '", computation.name(), "' is nested more than ",
               kMaxCallDepth, " calls deep (recursive calls?)"));
  }
  // The walk is bound by memory latency on large modules, so it prefetches
  // in stages: an instruction's first line and operand list; then, for a
  // kernel, its shape, its operands' shapes and its called-computation
  // list; then those computations; then their instructions.
  // One reusable list of instructions per call depth.
  if (static_cast<int>(walk_buffers_.size()) <= depth) {
    walk_buffers_.resize(depth + 1);
  }
  std::vector<const Instruction*>& instructions = walk_buffers_[depth];
  instructions.clear();
  computation.ForEachInstruction(
      [&](const Instruction* inst) { instructions.push_back(inst); });
  const size_t count = instructions.size();
  constexpr size_t kStage = 6;
  for (size_t index = 0; index < count; ++index) {
    if (index + 4 * kStage < count) {
      const Instruction* p = instructions[index + 4 * kStage];
      __builtin_prefetch(p);
      __builtin_prefetch(&p->operands());
    }
    if (index + 3 * kStage < count) {
      const Instruction* p = instructions[index + 3 * kStage];
      if (!IsFreeOpcode(p->opcode())) {
        PrefetchShape(p->shape());
        for (const Instruction* o : p->operands()) PrefetchShape(o->shape());
        if (MayCall(p->opcode())) __builtin_prefetch(&p->called_computations());
      }
    }
    if (index + 2 * kStage < count) {
      const Instruction* p = instructions[index + 2 * kStage];
      if (MayCall(p->opcode())) {
        for (const Computation* c : p->called_computations()) {
          __builtin_prefetch(c);
        }
      }
    }
    if (index + kStage < count) {
      const Instruction* p = instructions[index + kStage];
      if (MayCall(p->opcode())) {
        for (const Computation* c : p->called_computations()) {
          if (c->instruction_count() > 8) continue;
          c->ForEachInstruction([](const Instruction* i) {
            __builtin_prefetch(i);
            PrefetchShape(i->shape());
            __builtin_prefetch(&i->operands());
          });
        }
      }
    }
    absl::Status s = AccountInstruction(computation, *instructions[index],
                                        launches, depth, acc);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ModelEvaluator::AccountInstruction(const Computation& computation,
                                                const Instruction& inst,
                                                double launches, int depth,
                                                Accounting* acc) {
  if (IsFree(inst)) return absl::OkStatus();
  const Opcode op = inst.opcode();
  switch (op) {
    case Opcode::kWhile: {
      const Computation* cond = inst.while_condition();
      const Computation* body = inst.while_body();
      if (cond == nullptr || body == nullptr) {
        return absl::InvalidArgumentError(
            StrCat("while '", inst.name(), "' needs a condition and a body"));
      }
      std::optional<int64_t> trips = ComputeWhileTripCount(inst);
      if (!trips) {
        acc->Flag(StrCat("while '", inst.name(),
                         "': trip count unknown, counted as 1"));
      }
      const double n = launches * static_cast<double>(trips.value_or(1));
      absl::Status s = AccountComputation(*cond, n, depth + 1, acc);
      if (!s.ok()) return s;
      return AccountComputation(*body, n, depth + 1, acc);
    }
    case Opcode::kConditional: {
      // The most expensive branch.
      Accounting best;
      bool have = false;
      for (const Computation* branch : inst.called_computations()) {
        Accounting a;
        a.per_kernel = acc->per_kernel;
        absl::Status s = AccountComputation(*branch, launches, depth + 1, &a);
        if (!s.ok()) return s;
        if (!have || a.seconds_fixed > best.seconds_fixed) {
          best = std::move(a);
          have = true;
        }
      }
      acc->Merge(std::move(best));
      return absl::OkStatus();
    }
    case Opcode::kCall:
      for (const Computation* c : inst.called_computations()) {
        absl::Status s = AccountComputation(*c, launches, depth + 1, acc);
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    case Opcode::kAsyncStart:
      // The wrapped computation; the shorthand forms some modules use can
      // leave it without usable operands, which is flagged, not fatal.
      for (const Computation* c : inst.called_computations()) {
        Accounting a;
        a.per_kernel = acc->per_kernel;
        absl::Status s = AccountComputation(*c, launches, depth + 1, &a);
        if (s.ok()) {
          acc->Merge(std::move(a));
        } else {
          acc->Flag(StrCat("async-start '", inst.name(), "': not costed (",
                           s.message(), ")"));
        }
      }
      return absl::OkStatus();
    default:
      break;
  }
  if (IsHostTransfer(op)) {
    acc->Flag(StrCat(OpcodeName(op), " '", inst.name(),
                     "': host transfers are not modelled"));
    return absl::OkStatus();
  }
  absl::StatusOr<const CachedKernel*> k = Kernel(inst);
  if (!k.ok()) return k.status();
  const CachedKernel& c = **k;
  const double per_launch = c.launch_seconds + c.exec_seconds;
  acc->AddSeconds(launches * per_launch);
  acc->flops += launches * c.flops;
  acc->transcendentals += launches * c.transcendentals;
  acc->bytes += launches * c.bytes;
  acc->kernels += 1;
  acc->launches += launches;
  const bool collective = IsCollectiveKernel(op);
  if (collective) {
    acc->Flag(
        "collectives are modelled as local memory traffic plus a longer "
        "launch; communication is not modelled");
  }
  if (c.unknown_custom_call) {
    if (op == Opcode::kCustomCall) {
      acc->Flag(StrCat("custom-call '", inst.name(), "' (",
                       inst.attrs().custom_call_target,
                       "): unknown cost, modelled as reading its operands "
                       "and writing its result"));
    } else {
      acc->Flag(StrCat(OpcodeName(op), " '", inst.name(),
                       "': contains custom calls of unknown cost (no flops "
                       "counted for them)"));
    }
  }
  if (acc->per_kernel) {
    KernelCost kc;
    kc.name = inst.name();
    kc.computation = computation.name();
    kc.opcode = OpcodeName(op);
    kc.kind = collective ? std::string_view("collective")
              : c.unknown_custom_call && op == Opcode::kCustomCall
                  ? std::string_view("custom-call")
                  : EmitterKindName(c.emitter);
    kc.launches = static_cast<int64_t>(std::llround(launches));
    kc.seconds = launches * per_launch;
    kc.flops = launches * c.flops;
    kc.transcendentals = launches * c.transcendentals;
    kc.bytes = launches * c.bytes;
    kc.compute_seconds = c.compute_seconds;
    kc.memory_seconds = c.memory_seconds;
    kc.launch_seconds = c.launch_seconds;
    kc.bound = c.launch_seconds >= std::max(c.compute_seconds, c.memory_seconds)
                   ? "launch"
               : c.compute_seconds >= c.memory_seconds ? "compute"
                                                       : "memory";
    acc->breakdown.push_back(std::move(kc));
  }
  return absl::OkStatus();
}

absl::StatusOr<EvaluationResult> ModelEvaluator::Evaluate(
    const Module& module) {
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("module '", module.name(), "' has no entry computation"));
  }
  computation_keys_.clear();
  Accounting acc;
  acc.per_kernel = options_.per_kernel;
  if (acc.per_kernel) acc.breakdown.reserve(entry->instruction_count());
  absl::Status s = AccountComputation(*entry, 1.0, 0, &acc);
  computation_keys_.clear();
  if (!s.ok()) return s;
  EvaluationResult r;
  r.module = module.name();
  r.backend = name();
  r.device = model_.device().name;
  r.total_seconds = acc.seconds();
  r.flops = acc.flops;
  r.transcendentals = acc.transcendentals;
  r.bytes_accessed = acc.bytes;
  r.kernel_count = acc.kernels;
  r.kernel_launches = static_cast<int64_t>(std::llround(acc.launches));
  r.kernels = std::move(acc.breakdown);
  r.flags = std::move(acc.flags);
  return r;
}

// ---------------------------------------------------------------------------

namespace {

class InterpreterEvaluator : public Evaluator {
 public:
  explicit InterpreterEvaluator(EvaluatorOptions options) : options_(options) {}
  std::string name() const override { return "interpreter"; }

  absl::StatusOr<EvaluationResult> Evaluate(const Module& module) override {
    const Computation* entry = module.entry_computation();
    if (entry == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("module '", module.name(), "' has no entry computation"));
    }
    absl::StatusOr<std::vector<Literal>> inputs =
        GenerateInputs(ParameterShapes(*entry), options_.seed);
    if (!inputs.ok()) return inputs.status();
    Interpreter interpreter;
    absl::StatusOr<Literal> out = interpreter.Run(module, *inputs);
    if (!out.ok()) return out.status();
    EvaluationResult r;
    r.module = module.name();
    r.backend = name();
    r.device = "host";
    Flatten(std::move(*out), &r.outputs);
    return r;
  }

 private:
  static void Flatten(Literal l, std::vector<Literal>* out) {
    if (!l.shape().IsTuple()) {
      out->push_back(std::move(l));
      return;
    }
    for (Literal& e : *l.mutable_tuple_elements()) Flatten(std::move(e), out);
  }

  EvaluatorOptions options_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Evaluator>> CreateEvaluator(
    std::string_view spec, EvaluatorOptions options) {
  if (spec == "interpreter") {
    return std::unique_ptr<Evaluator>(new InterpreterEvaluator(options));
  }
  constexpr std::string_view kModel = "model:";
  if (spec.substr(0, kModel.size()) == kModel) {
    absl::StatusOr<GpuDevice> device = LoadDevice(spec.substr(kModel.size()));
    if (!device.ok()) return device.status();
    return std::unique_ptr<Evaluator>(
        new ModelEvaluator(std::move(*device), options));
  }
  return absl::InvalidArgumentError(
      StrCat("unknown evaluator backend '", spec,
             "' (known: model:<device>, interpreter)"));
}

std::string EvaluationResultToJson(const EvaluationResult& r, bool per_kernel,
                                   int indent) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["module"] = r.module;
  j["backend"] = r.backend;
  j["device"] = r.device;
  j["total_seconds"] = r.total_seconds;
  j["kernel_count"] = r.kernel_count;
  j["kernel_launches"] = r.kernel_launches;
  j["flops"] = r.flops;
  j["transcendentals"] = r.transcendentals;
  j["bytes_accessed"] = r.bytes_accessed;
  j["flags"] = r.flags;
  Json kernels = Json::array();
  if (per_kernel) {
    for (const KernelCost& k : r.kernels) {
      Json e;
      e["name"] = k.name;
      e["computation"] = k.computation;
      e["opcode"] = std::string(k.opcode);
      e["kind"] = std::string(k.kind);
      e["launches"] = k.launches;
      e["seconds"] = k.seconds;
      e["flops"] = k.flops;
      e["transcendentals"] = k.transcendentals;
      e["bytes"] = k.bytes;
      e["bound"] = std::string(k.bound);
      e["compute_seconds"] = k.compute_seconds;
      e["memory_seconds"] = k.memory_seconds;
      e["launch_seconds"] = k.launch_seconds;
      kernels.push_back(std::move(e));
    }
  }
  j["kernels"] = std::move(kernels);
  if (!r.durations_ns.empty()) j["durations_ns"] = r.durations_ns;
  if (!r.compute_durations_ns.empty()) {
    j["compute_durations_ns"] = r.compute_durations_ns;
  }
  if (!r.full_durations_ns.empty()) {
    j["full_durations_ns"] = r.full_durations_ns;
  }
  if (!r.outputs.empty()) {
    Json outs = Json::array();
    for (const Literal& l : r.outputs) {
      Json o;
      o["shape"] = l.shape().ToString();
      o["value"] = l.ToString();
      outs.push_back(std::move(o));
    }
    j["outputs"] = std::move(outs);
  }
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace hlogym
