// reduce, reduce-window and select-and-scatter.
//
// Accumulation order follows XLA's evaluator: each output starts from the
// initial value and combines the reduced elements in row-major order of
// the reduced dimensions (reduce) or of the window (reduce-window), as
// reducer(accumulators..., values...). Window positions that fall into
// padding or into base-dilation holes are skipped, not combined.
//
// When the reducer is a single add/multiply/maximum/minimum/and/or/xor of a
// native type, typed loops replace the per-element calls. f16 and bf16 are
// computed in float and rounded back after every step, as XLA evaluates
// those types.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "hlogym/eval/index_util.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/eval/math_util.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

using math_internal::Error;

using math_internal::ShapeText;

// ---------------------------------------------------------------------------
// 16-bit floats (round to nearest even; NaN becomes the canonical quiet NaN
// with its sign, as the literal encoder does).

// ---------------------------------------------------------------------------
// Element traits: storage type S, compute type C, conversions.

template <typename T>
struct Native {
  using S = T;
  using C = T;
  static C Load(S s) { return s; }
  static S Store(C c) { return c; }
  static C Round(C c) { return c; }
};

struct Bf16 {
  using S = uint16_t;
  using C = float;
  static C Load(S s) { return Bf16ToFloat(s); }
  static S Store(C c) { return FloatToBf16(c); }
  static C Round(C c) { return Bf16ToFloat(FloatToBf16(c)); }
};

struct F16 {
  using S = uint16_t;
  using C = float;
  static C Load(S s) { return F16ToFloat(s); }
  static S Store(C c) { return FloatToF16(c); }
  static C Round(C c) { return F16ToFloat(FloatToF16(c)); }
};

// Binary ops with XLA's evaluator semantics: integers wrap, maximum and
// minimum propagate NaN (the first NaN operand wins).
template <Opcode kOp, typename C>
inline C Apply(C a, C b) {
  if constexpr (kOp == Opcode::kAdd || kOp == Opcode::kMultiply) {
    if constexpr (std::is_integral_v<C>) {
      using U = std::conditional_t<(sizeof(C) < 4), uint32_t,
                                   std::make_unsigned_t<C>>;
      const U x = static_cast<U>(a), y = static_cast<U>(b);
      return static_cast<C>(kOp == Opcode::kAdd ? U(x + y) : U(x * y));
    } else {
      return kOp == Opcode::kAdd ? a + b : a * b;
    }
  } else if constexpr (kOp == Opcode::kMaximum) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    return a < b ? b : a;
  } else if constexpr (kOp == Opcode::kMinimum) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    return b < a ? b : a;
  } else if constexpr (kOp == Opcode::kAnd) {
    return static_cast<C>(a & b);
  } else if constexpr (kOp == Opcode::kOr) {
    return static_cast<C>(a | b);
  } else {
    return static_cast<C>(a ^ b);
  }
}

// Calls fn(Traits{}, std::integral_constant<Opcode, op>{}) for a supported
// (type, op) pair; returns false otherwise.
template <typename Fn>
bool DispatchFast(PrimitiveType t, Opcode op, Fn&& fn) {
  auto with_op = [&](auto traits) -> bool {
    using Tr = decltype(traits);
    using C = typename Tr::C;
    constexpr bool kBits =
        std::is_integral_v<C>;  // and/or/xor need integers or pred
    switch (op) {
      case Opcode::kAdd:
        fn(traits, std::integral_constant<Opcode, Opcode::kAdd>{});
        return true;
      case Opcode::kMultiply:
        fn(traits, std::integral_constant<Opcode, Opcode::kMultiply>{});
        return true;
      case Opcode::kMaximum:
        fn(traits, std::integral_constant<Opcode, Opcode::kMaximum>{});
        return true;
      case Opcode::kMinimum:
        fn(traits, std::integral_constant<Opcode, Opcode::kMinimum>{});
        return true;
      case Opcode::kAnd:
        if constexpr (kBits) {
          fn(traits, std::integral_constant<Opcode, Opcode::kAnd>{});
          return true;
        }
        return false;
      case Opcode::kOr:
        if constexpr (kBits) {
          fn(traits, std::integral_constant<Opcode, Opcode::kOr>{});
          return true;
        }
        return false;
      case Opcode::kXor:
        if constexpr (kBits) {
          fn(traits, std::integral_constant<Opcode, Opcode::kXor>{});
          return true;
        }
        return false;
      default:
        return false;
    }
  };
  switch (t) {
    case PrimitiveType::kF32:
      return with_op(Native<float>{});
    case PrimitiveType::kF64:
      return with_op(Native<double>{});
    case PrimitiveType::kBF16:
      return with_op(Bf16{});
    case PrimitiveType::kF16:
      return with_op(F16{});
    case PrimitiveType::kS8:
      return with_op(Native<int8_t>{});
    case PrimitiveType::kS16:
      return with_op(Native<int16_t>{});
    case PrimitiveType::kS32:
      return with_op(Native<int32_t>{});
    case PrimitiveType::kS64:
      return with_op(Native<int64_t>{});
    case PrimitiveType::kU8:
      return with_op(Native<uint8_t>{});
    case PrimitiveType::kU16:
      return with_op(Native<uint16_t>{});
    case PrimitiveType::kU32:
      return with_op(Native<uint32_t>{});
    case PrimitiveType::kU64:
      return with_op(Native<uint64_t>{});
    case PrimitiveType::kPred:
      // Only the bitwise ops: they keep pred values 0 or 1.
      if (op != Opcode::kAnd && op != Opcode::kOr && op != Opcode::kXor) {
        return false;
      }
      return with_op(Native<uint8_t>{});
    default:
      return false;
  }
}

template <typename Tr>
std::vector<typename Tr::C> LoadAll(const Literal& lit) {
  using S = typename Tr::S;
  const int64_t n = lit.element_count();
  std::vector<typename Tr::C> out(n);
  const uint8_t* p = lit.data();
  for (int64_t i = 0; i < n; ++i) {
    S s;
    std::memcpy(&s, p + i * sizeof(S), sizeof(S));
    out[i] = Tr::Load(s);
  }
  return out;
}

template <typename Tr>
void StoreAll(const std::vector<typename Tr::C>& v, Literal* lit) {
  using S = typename Tr::S;
  uint8_t* p = lit->mutable_data();
  for (size_t i = 0; i < v.size(); ++i) {
    S s = Tr::Store(v[i]);
    std::memcpy(p + i * sizeof(S), &s, sizeof(S));
  }
}

template <typename Tr>
typename Tr::C LoadScalar(const Literal& lit) {
  typename Tr::S s;
  std::memcpy(&s, lit.data(), sizeof(s));
  return Tr::Load(s);
}

// Packs results into inst.shape(): one array, or a tuple of arrays.
Literal PackResults(const Shape& shape, std::vector<Literal> parts) {
  if (!shape.IsTuple()) return std::move(parts[0]);
  Literal out(shape);
  for (size_t i = 0; i < parts.size(); ++i) {
    (*out.mutable_tuple_elements())[i] = std::move(parts[i]);
  }
  return out;
}

// Validates N inputs + N scalar inits against the result shape (an array
// for N == 1, else a tuple of N arrays) whose dims must equal `dims`.
absl::Status CheckVariadic(const Instruction& inst, Operands operands,
                           int64_t* n_out) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return Error(inst, "expects N inputs and N initial values, got ",
                 static_cast<int64_t>(operands.size()), " operands");
  }
  const int64_t n = static_cast<int64_t>(operands.size()) / 2;
  for (int64_t i = 0; i < 2 * n; ++i) {
    const Literal* l = operands[i];
    if (l == nullptr || !l->shape().IsArray()) {
      return Error(inst, "operand ", i, " must be an array");
    }
    if (l->is_unknown()) {
      return Error(inst, "operand ", i, " has unknown contents");
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!operands[i]->shape().SameDimensions(operands[0]->shape())) {
      return Error(inst, "inputs ", ShapeText(operands[0]->shape()), " and ",
                   ShapeText(operands[i]->shape()),
                   " must have the same dimensions");
    }
    if (!operands[n + i]->shape().IsScalar()) {
      return Error(inst, "initial value ", i, " must be a scalar, got ",
                   ShapeText(operands[n + i]->shape()));
    }
  }
  const Shape& s = inst.shape();
  if (n == 1 && !s.IsArray() && !(s.IsTuple() && s.tuple_shapes_size() == 1)) {
    return Error(inst, "result ", ShapeText(s), " must be an array");
  }
  if (n > 1 && (!s.IsTuple() || s.tuple_shapes_size() != n)) {
    return Error(inst, "result ", ShapeText(s), " must be a tuple of ", n,
                 " arrays");
  }
  for (int64_t i = 0; i < n; ++i) {
    const Shape& r = s.IsTuple() ? s.tuple_shapes(i) : s;
    if (!r.IsArray() ||
        r.element_type() != operands[n + i]->shape().element_type()) {
      return Error(inst, "result ", ShapeText(r),
                   " must have the element type of initial value ",
                   ShapeText(operands[n + i]->shape()));
    }
  }
  *n_out = n;
  return absl::OkStatus();
}

const Shape& ResultShape(const Shape& s, int64_t i) {
  return s.IsTuple() ? s.tuple_shapes(i) : s;
}

// Results filled with their initial values.
std::vector<Literal> InitResults(const Instruction& inst, Operands operands,
                                 int64_t n) {
  std::vector<Literal> out;
  for (int64_t i = 0; i < n; ++i) {
    Literal r(ResultShape(inst.shape(), i));
    const int w = ByteWidth(r.shape().element_type());
    const uint8_t* init = operands[n + i]->data();
    uint8_t* p = r.mutable_data();
    for (int64_t e = 0; e < r.element_count(); ++e) {
      std::memcpy(p + e * w, init, w);
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Calls `f` on (accumulators, values) and stores the results into the
// accumulators. `acc[i]` and `val[i]` point at single elements.
class Combiner {
 public:
  Combiner(ScalarFunction* f, const Instruction& inst, int64_t n,
           const std::vector<int>& widths)
      : f_(f), inst_(inst), n_(n), widths_(widths) {
    args_.resize(2 * n);
    tmp_.resize(n * 16);
    res_.resize(n);
    for (int64_t i = 0; i < n; ++i) res_[i] = tmp_.data() + 16 * i;
  }
  absl::Status Combine(uint8_t* const* acc, const uint8_t* const* val) {
    for (int64_t i = 0; i < n_; ++i) {
      args_[i] = acc[i];
      args_[n_ + i] = val[i];
    }
    absl::Status st = f_->Call(args_.data(), res_.data());
    if (!st.ok()) {
      return absl::Status(st.code(), StrCat("instruction '", inst_.name(),
                                            "': ", st.message()));
    }
    for (int64_t i = 0; i < n_; ++i) std::memcpy(acc[i], res_[i], widths_[i]);
    return absl::OkStatus();
  }

 private:
  ScalarFunction* f_;
  const Instruction& inst_;
  int64_t n_;
  std::vector<int> widths_;
  std::vector<const uint8_t*> args_;
  std::vector<uint8_t> tmp_;
  std::vector<uint8_t*> res_;
};

// ---------------------------------------------------------------------------
// reduce

// The input as runs of reduced or kept dimensions (size-1 dimensions
// dropped, neighbours of the same kind merged).
struct Segment {
  int64_t size;
  bool reduced;
  int64_t in_stride = 0;
  int64_t out_stride = 0;
};

std::vector<Segment> Segments(const DimVector& dims,
                              const std::vector<bool>& reduced) {
  std::vector<Segment> segs;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!segs.empty() && segs.back().reduced == reduced[d]) {
      segs.back().size *= dims[d];
    } else {
      segs.push_back({dims[d], static_cast<bool>(reduced[d])});
    }
  }
  if (segs.empty()) segs.push_back({1, false});
  int64_t in = 1, out = 1;
  for (int64_t i = static_cast<int64_t>(segs.size()) - 1; i >= 0; --i) {
    segs[i].in_stride = in;
    in *= segs[i].size;
    if (!segs[i].reduced) {
      segs[i].out_stride = out;
      out *= segs[i].size;
    }
  }
  return segs;
}

// Calls body(in_offset, out_offset) for every run of the innermost segment,
// in row-major order.
template <typename Body>
void ForEachRun(const std::vector<Segment>& segs, Body&& body) {
  const size_t outer = segs.size() - 1;
  DimVector sizes, idx(outer, 0);
  for (size_t i = 0; i < outer; ++i) sizes.push_back(segs[i].size);
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  do {
    int64_t in = 0, out = 0;
    for (size_t i = 0; i < outer; ++i) {
      in += idx[i] * segs[i].in_stride;
      out += idx[i] * segs[i].out_stride;
    }
    body(in, out);
  } while (NextIndex(sizes, &idx));
}

template <typename Tr, Opcode kOp>
void FastReduce(const Literal& input, const Literal& init,
                const std::vector<Segment>& segs, Literal* result) {
  using C = typename Tr::C;
  using S = typename Tr::S;
  std::vector<C> out(result->element_count(), LoadScalar<Tr>(init));
  const S* in = reinterpret_cast<const S*>(input.data());
  const Segment& inner = segs.back();
  const int64_t len = inner.size;
  if (len > 0 && input.element_count() > 0) {
    C* o = out.data();
    if (inner.reduced) {
      ForEachRun(segs, [&](int64_t ioff, int64_t ooff) {
        C acc = o[ooff];
        const S* x = in + ioff;
        for (int64_t j = 0; j < len; ++j) {
          acc = Tr::Round(Apply<kOp, C>(acc, Tr::Load(x[j])));
        }
        o[ooff] = acc;
      });
    } else {
      ForEachRun(segs, [&](int64_t ioff, int64_t ooff) {
        C* acc = o + ooff;
        const S* x = in + ioff;
        for (int64_t j = 0; j < len; ++j) {
          acc[j] = Tr::Round(Apply<kOp, C>(acc[j], Tr::Load(x[j])));
        }
      });
    }
  }
  StoreAll<Tr>(out, result);
}

// ---------------------------------------------------------------------------
// Windows (reduce-window, select-and-scatter)

// The input positions one output position reads along one dimension: an
// arithmetic progression of row-major offsets (index * stride), in window
// order; padding and base-dilation holes are left out.
struct WindowRun {
  int64_t first = 0;  // offset of the first position read
  int64_t step = 0;   // offset increment
  int64_t count = 0;  // positions read
};

struct WindowPlan {
  DimVector out_dims;
  DimVector window;
  // runs[d][o]: the positions output position o reads along dimension d.
  // O(outputs) memory: a window may span the whole input.
  std::vector<std::vector<WindowRun>> runs;
};

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

absl::StatusOr<WindowPlan> PlanWindow(const Instruction& inst,
                                      const DimVector& in_dims) {
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  std::vector<WindowDimension> win;
  if (inst.attrs().window.has_value()) win = inst.attrs().window->dimensions;
  if (win.empty() && rank > 0) win.resize(rank);
  if (static_cast<int64_t>(win.size()) != rank) {
    return Error(inst, "window has ", static_cast<int64_t>(win.size()),
                 " dimensions but the input has rank ", rank);
  }
  WindowPlan p;
  const DimVector strides = RowMajorStrides(in_dims);
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = win[d];
    if (w.size < 0 || w.stride < 1 || w.base_dilation < 1 ||
        w.window_dilation < 1) {
      return Error(inst, "window dimension ", d,
                   " needs a non-negative size and positive stride and "
                   "dilations");
    }
    if (w.window_reversal) {
      return Error(inst, "window reversal is not allowed here");
    }
    const int64_t in = in_dims[d];
    const int64_t dilated_in = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
    const int64_t padded = dilated_in + w.padding_low + w.padding_high;
    const int64_t dilated_w =
        w.size == 0 ? 0 : (w.size - 1) * w.window_dilation + 1;
    const int64_t o = (padded < dilated_w || padded < 0)
                          ? 0
                          : (padded - dilated_w) / w.stride + 1;
    p.out_dims.push_back(o);
    p.window.push_back(w.size);
    // Window position wi reads dilated position
    // pos = oi * stride + wi * window_dilation - padding_low, an input
    // element when pos is a multiple of base_dilation within the input.
    // The wi that hit multiples recur every bd / gcd(wd, bd) positions.
    const int64_t bd = w.base_dilation, wd = w.window_dilation;
    const int64_t period = bd / std::gcd(wd, bd);
    std::vector<WindowRun> runs(o);
    for (int64_t oi = 0; oi < o; ++oi) {
      const int64_t start = oi * w.stride - w.padding_low;
      int64_t wi0 = -1;
      for (int64_t wi = 0; wi < std::min(w.size, period); ++wi) {
        if (((start + wi * wd) % bd + bd) % bd == 0) {
          wi0 = wi;
          break;
        }
      }
      if (wi0 < 0) continue;
      // u(k) = (start + (wi0 + k * period) * wd) / bd for k = 0.. while
      // wi0 + k * period < size, kept where 0 <= u < in.
      const int64_t u0 = (start + wi0 * wd) / bd;
      const int64_t du = period * wd / bd;
      const int64_t kmax = (w.size - 1 - wi0) / period;  // inclusive
      const int64_t klo = u0 >= 0 ? 0 : FloorDiv(-u0 + du - 1, du);
      const int64_t khi = std::min(kmax, FloorDiv(in - 1 - u0, du));
      if (khi < klo) continue;
      runs[oi] = {(u0 + klo * du) * strides[d], du * strides[d], khi - klo + 1};
    }
    p.runs.push_back(std::move(runs));
  }
  return p;
}

// Calls fn(linear input index) for each in-bounds window position of the
// output position `opos`, in row-major window order.
template <typename Fn>
absl::Status ForEachWindowElement(const WindowPlan& p, const DimVector& opos,
                                  DimVector* idx, Fn&& fn) {
  const size_t rank = p.window.size();
  if (rank == 0) return fn(int64_t{0});
  absl::InlinedVector<const WindowRun*, 6> runs(rank);
  DimVector sizes(rank - 1);
  for (size_t d = 0; d < rank; ++d) {
    runs[d] = &p.runs[d][opos[d]];
    if (runs[d]->count == 0) return absl::OkStatus();
    if (d + 1 < rank) sizes[d] = runs[d]->count;
  }
  idx->assign(rank - 1, 0);
  const WindowRun& inner = *runs[rank - 1];
  do {
    int64_t base = 0;
    for (size_t d = 0; d + 1 < rank; ++d) {
      base += runs[d]->first + (*idx)[d] * runs[d]->step;
    }
    int64_t off = base + inner.first;
    for (int64_t k = 0; k < inner.count; ++k, off += inner.step) {
      absl::Status st = fn(off);
      if (!st.ok()) return st;
    }
  } while (NextIndex(sizes, idx));
  return absl::OkStatus();
}

// Output elements between two time-limit checks of a reduce-window (one
// output element can read the whole input).
constexpr int64_t kPollEvery = 64;

template <typename Tr, Opcode kOp>
absl::Status FastReduceWindow(const Literal& input, const Literal& init,
                              const WindowPlan& p, Literal* result,
                              KernelContext& ctx) {
  using C = typename Tr::C;
  using S = typename Tr::S;
  const S* in = reinterpret_cast<const S*>(input.data());
  const C init_v = LoadScalar<Tr>(init);
  std::vector<C> out(result->element_count(), init_v);
  const size_t rank = p.window.size();
  DimVector opos(rank, 0), wpos;
  if (result->element_count() > 0) {
    int64_t o = 0;
    do {
      C acc = init_v;
      (void)ForEachWindowElement(p, opos, &wpos, [&](int64_t off) {
        acc = Tr::Round(Apply<kOp, C>(acc, Tr::Load(in[off])));
        return absl::OkStatus();
      });
      out[o++] = acc;
      if (o % kPollEvery == 0) {
        if (absl::Status st = ctx.Poll(); !st.ok()) return st;
      }
    } while (NextIndex(p.out_dims, &opos));
  }
  StoreAll<Tr>(out, result);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalReduce(const Instruction& inst, Operands operands,
                                   KernelContext& ctx) {
  int64_t n = 0;
  if (absl::Status st = CheckVariadic(inst, operands, &n); !st.ok()) return st;
  const Shape& in_shape = operands[0]->shape();
  const int64_t rank = in_shape.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t d : inst.dimensions()) {
    if (d < 0 || d >= rank) {
      return Error(inst, "reduced dimension ", d, " is out of range for ",
                   ShapeText(in_shape));
    }
    if (reduced[d]) return Error(inst, "dimension ", d, " is reduced twice");
    reduced[d] = true;
  }
  DimVector out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) out_dims.push_back(in_shape.dimensions(d));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (ResultShape(inst.shape(), i).dimensions() != out_dims) {
      return Error(inst, "result ", ShapeText(ResultShape(inst.shape(), i)),
                   " does not match the reduced input ", ShapeText(in_shape));
    }
  }
  if (inst.to_apply() == nullptr) return Error(inst, "has no reducer");
  absl::StatusOr<ScalarFunction*> fn = ctx.GetScalarFunction(inst.to_apply());
  if (!fn.ok()) return fn.status();

  std::vector<Literal> results = InitResults(inst, operands, n);
  const std::vector<Segment> segs = Segments(in_shape.dimensions(), reduced);
  const PrimitiveType t = in_shape.element_type();
  if (n == 1 && (*fn)->binary_opcode().has_value() &&
      operands[1]->shape().element_type() == t) {
    const bool done =
        DispatchFast(t, *(*fn)->binary_opcode(), [&](auto tr, auto op) {
          FastReduce<decltype(tr), decltype(op)::value>(
              *operands[0], *operands[1], segs, &results[0]);
        });
    if (done) return PackResults(inst.shape(), std::move(results));
  }

  // General path: one call per input element, in row-major input order
  // (which visits each output's reduced elements in row-major order).
  std::vector<int> in_w(n), acc_w(n);
  for (int64_t i = 0; i < n; ++i) {
    in_w[i] = ByteWidth(operands[i]->shape().element_type());
    acc_w[i] = ByteWidth(results[i].shape().element_type());
  }
  Combiner comb(*fn, inst, n, acc_w);
  std::vector<uint8_t*> acc(n);
  std::vector<const uint8_t*> val(n);
  if (operands[0]->element_count() == 0) {
    return PackResults(inst.shape(), std::move(results));
  }
  const int64_t len = segs.back().size;
  absl::Status status;
  ForEachRun(segs, [&](int64_t ioff, int64_t ooff) {
    for (int64_t j = 0; j < len && status.ok(); ++j) {
      const int64_t o = segs.back().reduced ? ooff : ooff + j;
      for (int64_t i = 0; i < n; ++i) {
        acc[i] = results[i].mutable_data() + o * acc_w[i];
        val[i] = operands[i]->data() + (ioff + j) * in_w[i];
      }
      status = comb.Combine(acc.data(), val.data());
    }
  });
  if (!status.ok()) return status;
  return PackResults(inst.shape(), std::move(results));
}

absl::StatusOr<Literal> EvalReduceWindow(const Instruction& inst,
                                         Operands operands,
                                         KernelContext& ctx) {
  int64_t n = 0;
  if (absl::Status st = CheckVariadic(inst, operands, &n); !st.ok()) return st;
  const Shape& in_shape = operands[0]->shape();
  absl::StatusOr<WindowPlan> plan = PlanWindow(inst, in_shape.dimensions());
  if (!plan.ok()) return plan.status();
  for (int64_t i = 0; i < n; ++i) {
    if (ResultShape(inst.shape(), i).dimensions() != plan->out_dims) {
      return Error(inst, "result ", ShapeText(ResultShape(inst.shape(), i)),
                   " does not match the window applied to ",
                   ShapeText(in_shape));
    }
  }
  if (inst.to_apply() == nullptr) return Error(inst, "has no reducer");
  absl::StatusOr<ScalarFunction*> fn = ctx.GetScalarFunction(inst.to_apply());
  if (!fn.ok()) return fn.status();
  std::vector<Literal> results = InitResults(inst, operands, n);
  const PrimitiveType t = in_shape.element_type();
  if (n == 1 && (*fn)->binary_opcode().has_value() &&
      operands[1]->shape().element_type() == t) {
    absl::Status st;
    const bool done =
        DispatchFast(t, *(*fn)->binary_opcode(), [&](auto tr, auto op) {
          st = FastReduceWindow<decltype(tr), decltype(op)::value>(
              *operands[0], *operands[1], *plan, &results[0], ctx);
        });
    if (!st.ok()) return st;
    if (done) return PackResults(inst.shape(), std::move(results));
  }

  std::vector<int> in_w(n), acc_w(n);
  for (int64_t i = 0; i < n; ++i) {
    in_w[i] = ByteWidth(operands[i]->shape().element_type());
    acc_w[i] = ByteWidth(results[i].shape().element_type());
  }
  Combiner comb(*fn, inst, n, acc_w);
  std::vector<uint8_t*> acc(n);
  std::vector<const uint8_t*> val(n);
  const size_t rank = plan->window.size();
  DimVector opos(rank, 0), wpos;
  if (results[0].element_count() == 0) {
    return PackResults(inst.shape(), std::move(results));
  }
  int64_t o = 0;
  do {
    for (int64_t i = 0; i < n; ++i) {
      acc[i] = results[i].mutable_data() + o * acc_w[i];
    }
    absl::Status st =
        ForEachWindowElement(*plan, opos, &wpos, [&](int64_t off) {
          for (int64_t i = 0; i < n; ++i) {
            val[i] = operands[i]->data() + off * in_w[i];
          }
          return comb.Combine(acc.data(), val.data());
        });
    if (!st.ok()) return st;
    ++o;
    if (o % kPollEvery == 0) {
      if (absl::Status p = ctx.Poll(); !p.ok()) return p;
    }
  } while (NextIndex(plan->out_dims, &opos));
  return PackResults(inst.shape(), std::move(results));
}

absl::StatusOr<Literal> EvalSelectAndScatter(const Instruction& inst,
                                             Operands operands,
                                             KernelContext& ctx) {
  if (operands.size() != 3) {
    return Error(inst, "expects 3 operands (operand, source, init_value), got ",
                 static_cast<int64_t>(operands.size()));
  }
  for (int i = 0; i < 3; ++i) {
    if (operands[i] == nullptr || !operands[i]->shape().IsArray()) {
      return Error(inst, "operand ", i, " must be an array");
    }
    if (operands[i]->is_unknown()) {
      return Error(inst, "operand ", i, " has unknown contents");
    }
  }
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Literal& init = *operands[2];
  if (!init.shape().IsScalar()) {
    return Error(inst, "init_value must be a scalar, got ",
                 ShapeText(init.shape()));
  }
  const Shape& rs = inst.shape();
  if (!rs.IsArray() || !rs.SameDimensions(operand.shape()) ||
      rs.element_type() != init.shape().element_type() ||
      rs.element_type() != source.shape().element_type()) {
    return Error(inst, "result ", ShapeText(rs),
                 " must have the operand's dimensions and the element type "
                 "of the source and init value");
  }
  if (inst.called_computations().size() != 2) {
    return Error(inst, "needs select and scatter computations");
  }
  absl::StatusOr<WindowPlan> plan =
      PlanWindow(inst, operand.shape().dimensions());
  if (!plan.ok()) return plan.status();
  if (source.shape().dimensions() != plan->out_dims) {
    return Error(inst, "source ", ShapeText(source.shape()),
                 " does not match the window applied to ",
                 ShapeText(operand.shape()));
  }
  absl::StatusOr<ScalarFunction*> select =
      ctx.GetScalarFunction(inst.called_computations()[0]);
  if (!select.ok()) return select.status();
  absl::StatusOr<ScalarFunction*> scatter =
      ctx.GetScalarFunction(inst.called_computations()[1]);
  if (!scatter.ok()) return scatter.status();

  Literal result(rs);
  const int w = ByteWidth(rs.element_type());
  const int ow = ByteWidth(operand.shape().element_type());
  for (int64_t e = 0; e < result.element_count(); ++e) {
    std::memcpy(result.mutable_data() + e * w, init.data(), w);
  }
  if (source.element_count() == 0) return result;
  const size_t rank = plan->window.size();
  DimVector spos(rank, 0), wpos;
  uint8_t pred[16] = {};
  uint8_t scattered[16] = {};
  uint8_t* pred_out[] = {pred};
  uint8_t* scatter_out[] = {scattered};
  int64_t s = 0;
  do {
    int64_t selected = -1;
    absl::Status st =
        ForEachWindowElement(*plan, spos, &wpos, [&](int64_t off) {
          if (selected < 0) {
            selected = off;
            return absl::OkStatus();
          }
          // Keep the current selection while select(selected, candidate)
          // holds.
          const uint8_t* args[] = {operand.data() + selected * ow,
                                   operand.data() + off * ow};
          absl::Status cs = (*select)->Call(args, pred_out);
          if (!cs.ok()) return cs;
          if (pred[0] == 0) selected = off;
          return absl::OkStatus();
        });
    if (!st.ok()) return st;
    if (selected >= 0) {
      uint8_t* target = result.mutable_data() + selected * w;
      const uint8_t* args[] = {source.data() + s * w, target};
      absl::Status cs = (*scatter)->Call(args, scatter_out);
      if (!cs.ok()) return cs;
      std::memcpy(target, scattered, w);
    }
    ++s;
  } while (NextIndex(plan->out_dims, &spos));
  return result;
}

}  // namespace hlogym
