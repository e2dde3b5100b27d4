// dot, convolution and ragged-dot.
//
// Operands are first converted to the result's element type (as XLA's
// evaluator does) and widened to an accumulation type: float for f32 and
// narrower floats, double for f64, wrapping 64-bit integers for integers,
// bool for pred and std::complex for complex results. Sums run in the
// order of XLA's evaluator: starting from zero, adding products in
// row-major order of the contracting dimensions (dot) or of the window
// positions, then input features (convolution).
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "hlogym/eval/index_util.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/eval/math_util.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

using math_internal::Error;

using math_internal::Unimplemented;

using math_internal::ShapeText;

// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Decoding operand elements.

// All elements as doubles (the real part of complex values).
void DecodeDoubles(const Literal& lit, std::vector<double>* out) {
  const int64_t n = lit.element_count();
  out->resize(n);
  double* o = out->data();
  const uint8_t* p = lit.data();
  switch (lit.shape().element_type()) {
    case PrimitiveType::kF32:
      for (int64_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, p + 4 * i, 4);
        o[i] = v;
      }
      return;
    case PrimitiveType::kF64:
      std::memcpy(o, p, n * sizeof(double));
      return;
    case PrimitiveType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        o[i] = Bf16ToFloat(h);
      }
      return;
    case PrimitiveType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        o[i] = F16ToFloat(h);
      }
      return;
    default:
      for (int64_t i = 0; i < n; ++i) o[i] = lit.GetAsDouble(i);
      return;
  }
}

// Integer elements as int64 (unsigned 64-bit values keep their bits).
void DecodeInts(const Literal& lit, std::vector<int64_t>* out) {
  const int64_t n = lit.element_count();
  out->resize(n);
  int64_t* o = out->data();
  const uint8_t* p = lit.data();
  switch (lit.shape().element_type()) {
    case PrimitiveType::kS8:
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<int8_t>(p[i]);
      return;
    case PrimitiveType::kU8:
      for (int64_t i = 0; i < n; ++i) o[i] = p[i];
      return;
    case PrimitiveType::kS32:
      for (int64_t i = 0; i < n; ++i) {
        int32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        o[i] = v;
      }
      return;
    case PrimitiveType::kS64:
    case PrimitiveType::kU64:
      if (n > 0) std::memcpy(o, p, n * 8);
      return;
    default:  // narrower types and pred; unsigned values are zero-extended
      for (int64_t i = 0; i < n; ++i) o[i] = lit.GetAsInt64(i);
      return;
  }
}

// Two's-complement wrap of v to the width of integer type `t`, sign- or
// zero-extended back to 64 bits.
inline uint64_t WrapToType(PrimitiveType t, uint64_t v) {
  const int bits = BitWidth(t);
  if (bits >= 64) return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (IsSignedIntegralType(t) && ((v >> (bits - 1)) & 1u)) v |= ~mask;
  return v;
}

int64_t IntTypeMin(PrimitiveType t) {
  if (!IsSignedIntegralType(t)) return 0;
  const int bits = BitWidth(t);
  return bits >= 64 ? std::numeric_limits<int64_t>::min()
                    : -(int64_t{1} << (bits - 1));
}

uint64_t IntTypeMax(PrimitiveType t) {
  const int bits = BitWidth(t);
  if (IsSignedIntegralType(t)) {
    return bits >= 64
               ? static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               : (uint64_t{1} << (bits - 1)) - 1;
  }
  return bits >= 64 ? std::numeric_limits<uint64_t>::max()
                    : (uint64_t{1} << bits) - 1;
}

// A float value converted to integer type `t` as XLA's convert does: NaN is
// 0, out-of-range values saturate, others truncate toward zero.
uint64_t FloatToIntType(PrimitiveType t, double d) {
  if (std::isnan(d)) return 0;
  if (IsSignedIntegralType(t)) {
    const double lo = static_cast<double>(IntTypeMin(t));
    const double hi = static_cast<double>(static_cast<int64_t>(IntTypeMax(t)));
    if (d <= lo) return static_cast<uint64_t>(IntTypeMin(t));
    if (d >= hi) return IntTypeMax(t);
    return static_cast<uint64_t>(static_cast<int64_t>(d));
  }
  if (d <= 0) return 0;
  if (d >= static_cast<double>(IntTypeMax(t))) return IntTypeMax(t);
  return static_cast<uint64_t>(d);
}

// Rounds a double to floating type `t` (f32 or narrower) and widens it.
inline float RoundToFloatType(PrimitiveType t, double d) {
  if (t == PrimitiveType::kF32) return static_cast<float>(d);
  uint64_t bits = 0;
  FloatToBits(t, d, &bits);
  return static_cast<float>(BitsToFloat(t, bits));
}

// The accumulation type for a result element type.
enum class AccKind { kFloat, kDouble, kInt, kPred, kC64, kC128, kNone };

AccKind AccKindOf(PrimitiveType t) {
  if (t == PrimitiveType::kF64) return AccKind::kDouble;
  if (IsFloatingPointType(t)) return AccKind::kFloat;
  if (IsIntegralType(t)) return AccKind::kInt;
  if (t == PrimitiveType::kPred) return AccKind::kPred;
  if (t == PrimitiveType::kC64) return AccKind::kC64;
  if (t == PrimitiveType::kC128) return AccKind::kC128;
  return AccKind::kNone;
}

template <typename T>
struct Tag {
  using type = T;
};

template <typename Fn>
auto DispatchAcc(AccKind k, Fn&& fn) {
  switch (k) {
    case AccKind::kDouble:
      return fn(Tag<double>{});
    case AccKind::kInt:
      return fn(Tag<uint64_t>{});
    case AccKind::kPred:
      return fn(Tag<uint8_t>{});  // pred: 0/1, OR of ANDs
    case AccKind::kC64:
      return fn(Tag<std::complex<float>>{});
    case AccKind::kC128:
      return fn(Tag<std::complex<double>>{});
    case AccKind::kFloat:
    case AccKind::kNone:
      break;
  }
  return fn(Tag<float>{});
}

// The elements of `lit` converted to element type `to` and widened to Acc.
template <typename Acc>
void LoadAs(const Literal& lit, PrimitiveType to, std::vector<Acc>* out) {
  const PrimitiveType from = lit.shape().element_type();
  const int64_t n = lit.element_count();
  out->resize(n);
  Acc* o = out->data();
  const uint8_t* p = lit.data();
  if constexpr (std::is_same_v<Acc, float>) {
    if (from == PrimitiveType::kF32 && to == PrimitiveType::kF32) {
      if (n > 0) std::memcpy(o, p, n * 4);
      return;
    }
    if ((from == PrimitiveType::kBF16 || from == PrimitiveType::kF16) &&
        (to == from || to == PrimitiveType::kF32)) {
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        o[i] = from == PrimitiveType::kBF16 ? Bf16ToFloat(h) : F16ToFloat(h);
      }
      return;
    }
    if (IsIntegralType(from)) {
      std::vector<int64_t> v;
      DecodeInts(lit, &v);
      const bool is_unsigned = IsUnsignedIntegralType(from);
      for (int64_t i = 0; i < n; ++i) {
        if (to == PrimitiveType::kF32) {
          o[i] = is_unsigned ? static_cast<float>(static_cast<uint64_t>(v[i]))
                             : static_cast<float>(v[i]);
        } else {
          o[i] = RoundToFloatType(
              to, is_unsigned ? static_cast<double>(static_cast<uint64_t>(v[i]))
                              : static_cast<double>(v[i]));
        }
      }
      return;
    }
    std::vector<double> d;
    DecodeDoubles(lit, &d);
    for (int64_t i = 0; i < n; ++i) {
      o[i] =
          (from == to) ? static_cast<float>(d[i]) : RoundToFloatType(to, d[i]);
    }
  } else if constexpr (std::is_same_v<Acc, double>) {
    if (IsIntegralType(from)) {
      std::vector<int64_t> v;
      DecodeInts(lit, &v);
      const bool is_unsigned = IsUnsignedIntegralType(from);
      for (int64_t i = 0; i < n; ++i) {
        o[i] = is_unsigned ? static_cast<double>(static_cast<uint64_t>(v[i]))
                           : static_cast<double>(v[i]);
      }
      return;
    }
    std::vector<double> d;
    DecodeDoubles(lit, &d);
    std::memcpy(o, d.data(), n * sizeof(double));
  } else if constexpr (std::is_same_v<Acc, uint64_t>) {
    if (IsIntegralType(from) || from == PrimitiveType::kPred) {
      std::vector<int64_t> v;
      DecodeInts(lit, &v);
      for (int64_t i = 0; i < n; ++i) {
        o[i] = WrapToType(to, static_cast<uint64_t>(v[i]));
      }
      return;
    }
    std::vector<double> d;
    DecodeDoubles(lit, &d);
    for (int64_t i = 0; i < n; ++i) o[i] = FloatToIntType(to, d[i]);
  } else if constexpr (std::is_same_v<Acc, uint8_t>) {
    if (IsComplexType(from)) {
      for (int64_t i = 0; i < n; ++i) {
        o[i] = lit.GetComplex(i) != std::complex<double>(0, 0);
      }
      return;
    }
    if (IsFloatingPointType(from)) {
      std::vector<double> d;
      DecodeDoubles(lit, &d);
      for (int64_t i = 0; i < n; ++i) o[i] = d[i] != 0;
      return;
    }
    std::vector<int64_t> v;
    DecodeInts(lit, &v);
    for (int64_t i = 0; i < n; ++i) o[i] = v[i] != 0;
  } else {
    using R = typename Acc::value_type;
    if (IsComplexType(from)) {
      for (int64_t i = 0; i < n; ++i) {
        std::complex<double> c = lit.GetComplex(i);
        o[i] = Acc(static_cast<R>(c.real()), static_cast<R>(c.imag()));
      }
      return;
    }
    if (IsIntegralType(from) || from == PrimitiveType::kPred) {
      std::vector<int64_t> v;
      DecodeInts(lit, &v);
      const bool is_unsigned = IsUnsignedIntegralType(from);
      for (int64_t i = 0; i < n; ++i) {
        o[i] = Acc(is_unsigned ? static_cast<R>(static_cast<uint64_t>(v[i]))
                               : static_cast<R>(v[i]),
                   R(0));
      }
      return;
    }
    std::vector<double> d;
    DecodeDoubles(lit, &d);
    for (int64_t i = 0; i < n; ++i) o[i] = Acc(static_cast<R>(d[i]), R(0));
  }
}

// Writes accumulated values into `out` (of its element type). Integer
// results wrap, or saturate when `saturate` is set (convolution).
template <typename Acc>
void StoreAll(const Acc* v, int64_t n, Literal* out, bool saturate) {
  const PrimitiveType t = out->shape().element_type();
  uint8_t* p = out->mutable_data();
  if constexpr (std::is_same_v<Acc, float>) {
    switch (t) {
      case PrimitiveType::kF32:
        if (n > 0) std::memcpy(p, v, n * 4);
        return;
      case PrimitiveType::kBF16:
        for (int64_t i = 0; i < n; ++i) {
          uint16_t h = FloatToBf16(v[i]);
          std::memcpy(p + 2 * i, &h, 2);
        }
        return;
      case PrimitiveType::kF16:
        for (int64_t i = 0; i < n; ++i) {
          uint16_t h = FloatToF16(v[i]);
          std::memcpy(p + 2 * i, &h, 2);
        }
        return;
      default:
        for (int64_t i = 0; i < n; ++i) out->SetFromDouble(i, v[i]);
        return;
    }
  } else if constexpr (std::is_same_v<Acc, double>) {
    if (n > 0) std::memcpy(p, v, n * 8);
  } else if constexpr (std::is_same_v<Acc, uint64_t>) {
    const bool is_signed = IsSignedIntegralType(t);
    const int64_t lo = IntTypeMin(t);
    const uint64_t hi = IntTypeMax(t);
    const int width = ByteWidth(t);
    const int bits = BitWidth(t);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t x = v[i];
      if (saturate) {
        if (is_signed) {
          int64_t s = static_cast<int64_t>(x);
          s = std::max(lo, std::min(static_cast<int64_t>(hi), s));
          x = static_cast<uint64_t>(s);
        } else {
          x = std::min(hi, x);
        }
      }
      if (bits < 8) {
        out->SetFromInt64(i, static_cast<int64_t>(x));
      } else {
        std::memcpy(p + static_cast<int64_t>(width) * i, &x, width);
      }
    }
  } else if constexpr (std::is_same_v<Acc, uint8_t>) {
    for (int64_t i = 0; i < n; ++i) p[i] = v[i] ? 1 : 0;
  } else {
    std::memcpy(p, v, n * sizeof(Acc));
  }
}

template <typename Acc>
inline void MulAdd(Acc& acc, Acc a, Acc b) {
  if constexpr (std::is_same_v<Acc, uint8_t>) {
    acc = acc | (a & b);
  } else {
    acc += a * b;
  }
}

// out[j] = src[sum_d idx_d * strides_d] for j enumerating `sizes` in
// row-major order.
template <typename T>
void Gather(const T* src, const DimVector& sizes, const DimVector& strides,
            T* out) {
  int64_t total = 1;
  for (int64_t s : sizes) total *= s;
  if (total == 0) return;
  const int64_t rank = static_cast<int64_t>(sizes.size());
  if (rank == 0) {
    out[0] = src[0];
    return;
  }
  const int64_t inner = sizes[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  DimVector outer_sizes(sizes.begin(), sizes.end() - 1);
  DimVector idx(outer_sizes.size(), 0);
  int64_t o = 0;
  do {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    const T* s = src + off;
    if (inner_stride == 1) {
      std::copy(s, s + inner, out + o);
    } else {
      for (int64_t j = 0; j < inner; ++j) out[o + j] = s[j * inner_stride];
    }
    o += inner;
  } while (NextIndex(outer_sizes, &idx));
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// ---------------------------------------------------------------------------
// dot

struct DotPlan {
  int64_t batch = 1, m = 1, k = 1, n = 1;
  // lhs packed as [batch dims, free dims, contracting dims];
  // rhs packed as [batch dims, contracting dims, free dims].
  DimVector lhs_sizes, lhs_strides, rhs_sizes, rhs_strides;
  DimVector result_dims;
};

absl::Status CheckDims(const Instruction& inst, const char* what,
                       const std::vector<int64_t>& dims, int64_t rank,
                       std::vector<bool>* used) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Error(inst, what, " dimension ", d, " is out of range for rank ",
                   rank);
    }
    if ((*used)[d]) {
      return Error(inst, what, " dimension ", d, " is used twice");
    }
    (*used)[d] = true;
  }
  return absl::OkStatus();
}

// `rhs_skip`: rhs dimensions that are neither batch, contracting nor free
// (ragged-dot's group dimension); they are left out of the packing.
absl::StatusOr<DotPlan> PlanDot(const Instruction& inst, const Shape& lhs,
                                const Shape& rhs, const DotDimensionNumbers& dn,
                                const std::vector<int64_t>& rhs_skip) {
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size()) {
    return Error(inst, "lhs and rhs have different numbers of batch ",
                 "dimensions");
  }
  if (dn.lhs_contracting_dimensions.size() !=
      dn.rhs_contracting_dimensions.size()) {
    return Error(inst, "lhs and rhs have different numbers of contracting ",
                 "dimensions");
  }
  std::vector<bool> lused(lhs.rank(), false), rused(rhs.rank(), false);
  absl::Status st =
      CheckDims(inst, "lhs batch", dn.lhs_batch_dimensions, lhs.rank(), &lused);
  if (st.ok()) {
    st = CheckDims(inst, "lhs contracting", dn.lhs_contracting_dimensions,
                   lhs.rank(), &lused);
  }
  if (st.ok()) {
    st = CheckDims(inst, "rhs batch", dn.rhs_batch_dimensions, rhs.rank(),
                   &rused);
  }
  if (st.ok()) {
    st = CheckDims(inst, "rhs contracting", dn.rhs_contracting_dimensions,
                   rhs.rank(), &rused);
  }
  if (st.ok()) st = CheckDims(inst, "rhs group", rhs_skip, rhs.rank(), &rused);
  if (!st.ok()) return st;

  DotPlan p;
  const DimVector ls = RowMajorStrides(lhs.dimensions());
  const DimVector rs = RowMajorStrides(rhs.dimensions());
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i) {
    const int64_t a = dn.lhs_batch_dimensions[i];
    const int64_t b = dn.rhs_batch_dimensions[i];
    if (lhs.dimensions(a) != rhs.dimensions(b)) {
      return Error(inst, "batch dimension sizes differ: lhs ", ShapeText(lhs),
                   " dimension ", a, " vs rhs ", ShapeText(rhs), " dimension ",
                   b);
    }
    p.batch *= lhs.dimensions(a);
    p.lhs_sizes.push_back(lhs.dimensions(a));
    p.lhs_strides.push_back(ls[a]);
    p.rhs_sizes.push_back(rhs.dimensions(b));
    p.rhs_strides.push_back(rs[b]);
    p.result_dims.push_back(lhs.dimensions(a));
  }
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (lused[i]) continue;
    p.m *= lhs.dimensions(i);
    p.lhs_sizes.push_back(lhs.dimensions(i));
    p.lhs_strides.push_back(ls[i]);
    p.result_dims.push_back(lhs.dimensions(i));
  }
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
    const int64_t a = dn.lhs_contracting_dimensions[i];
    const int64_t b = dn.rhs_contracting_dimensions[i];
    if (lhs.dimensions(a) != rhs.dimensions(b)) {
      return Error(inst, "contracting dimension sizes differ: lhs ",
                   ShapeText(lhs), " dimension ", a, " vs rhs ", ShapeText(rhs),
                   " dimension ", b);
    }
    p.k *= lhs.dimensions(a);
    p.lhs_sizes.push_back(lhs.dimensions(a));
    p.lhs_strides.push_back(ls[a]);
    p.rhs_sizes.push_back(rhs.dimensions(b));
    p.rhs_strides.push_back(rs[b]);
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (rused[i]) continue;
    p.n *= rhs.dimensions(i);
    p.rhs_sizes.push_back(rhs.dimensions(i));
    p.rhs_strides.push_back(rs[i]);
    p.result_dims.push_back(rhs.dimensions(i));
  }
  return p;
}

absl::Status CheckArrayOperands(const Instruction& inst, Operands operands,
                                size_t count) {
  if (operands.size() != count) {
    return Error(inst, "expects ", static_cast<int64_t>(count),
                 " operands, got ", static_cast<int64_t>(operands.size()));
  }
  for (size_t i = 0; i < count; ++i) {
    if (operands[i] == nullptr || !operands[i]->shape().IsArray()) {
      return Error(inst, "operand ", static_cast<int64_t>(i),
                   " must be an array");
    }
    if (operands[i]->is_unknown()) {
      return Error(inst, "operand ", static_cast<int64_t>(i),
                   " has unknown contents");
    }
  }
  if (!inst.shape().IsArray() ||
      AccKindOf(inst.shape().element_type()) == AccKind::kNone) {
    return Error(inst, "result shape ", ShapeText(inst.shape()),
                 " is not a numeric array");
  }
  return absl::OkStatus();
}

absl::Status CheckResultDims(const Instruction& inst, const DimVector& dims) {
  if (inst.shape().dimensions() != dims) {
    Shape expected(inst.shape().element_type(), dims);
    return Error(inst, "result shape ", ShapeText(inst.shape()),
                 " does not match the computed ", ShapeText(expected));
  }
  return absl::OkStatus();
}

absl::Status CheckPrecision(const Instruction& inst) {
  for (Precision p : inst.attrs().operand_precision) {
    if (p == Precision::kPackedNibble) {
      return Unimplemented(inst, "PACKED_NIBBLE precision is not supported");
    }
  }
  return absl::OkStatus();
}

// out[b, i, :] = sum_k a[b, i, k] * bm[b, k, :], k ascending from zero.
template <typename Acc>
void BatchMatMul(const Acc* a, const Acc* bm, Acc* out, int64_t batch,
                 int64_t m, int64_t k, int64_t n) {
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      Acc* o = out + (b * m + i) * n;
      std::fill(o, o + n, Acc{});
      const Acc* arow = a + (b * m + i) * k;
      for (int64_t kk = 0; kk < k; ++kk) {
        const Acc av = arow[kk];
        const Acc* brow = bm + (b * k + kk) * n;
        if constexpr (std::is_same_v<Acc, uint8_t>) {
          if (!av) continue;
          for (int64_t j = 0; j < n; ++j) o[j] |= brow[j];
        } else {
          for (int64_t j = 0; j < n; ++j) o[j] += av * brow[j];
        }
      }
    }
  }
}

template <typename Acc>
Literal ComputeDot(const Instruction& inst, const Literal& lhs,
                   const Literal& rhs, const DotPlan& p) {
  const PrimitiveType rt = inst.shape().element_type();
  std::vector<Acc> lv, rv;
  LoadAs(lhs, rt, &lv);
  LoadAs(rhs, rt, &rv);
  std::vector<Acc> a(p.batch * p.m * p.k), b(p.batch * p.k * p.n);
  Gather(lv.data(), p.lhs_sizes, p.lhs_strides, a.data());
  Gather(rv.data(), p.rhs_sizes, p.rhs_strides, b.data());
  lv = {};
  rv = {};
  std::vector<Acc> out(p.batch * p.m * p.n);
  BatchMatMul(a.data(), b.data(), out.data(), p.batch, p.m, p.k, p.n);
  Literal result(inst.shape());
  StoreAll(out.data(), static_cast<int64_t>(out.size()), &result, false);
  return result;
}

// ---------------------------------------------------------------------------
// convolution

struct ConvPlan {
  int64_t spatial = 0;
  int64_t out_batch = 0, out_features = 0;
  DimVector out_spatial;         // output spatial sizes
  int64_t group_features = 0;    // input features per feature group
  int64_t out_group_size = 1;    // output features per feature group
  int64_t depthwise = 1;         // output features per batch group
  int64_t batch_group_size = 1;  // input batch per batch group
  // Packed lhs: [batch][spatial...][feature]; packed rhs:
  // [spatial...][in feature][out feature], so that one tap updates a run
  // of output features with contiguous loads.
  DimVector lhs_sizes, lhs_strides, rhs_sizes, rhs_strides;
  int64_t lhs_batch_stride = 0;
  // Output strides (row-major in the result's dimension order).
  int64_t out_b_stride = 0, out_f_stride = 0;
  DimVector out_sp_stride;
  // taps[d][o]: for output position o along spatial dimension d, the
  // (packed lhs offset, packed rhs offset) of each window position that
  // reads an input element, in window order. Padding and base-dilation
  // holes are left out; window reversal is folded into the rhs offset.
  std::vector<std::vector<std::vector<std::pair<int64_t, int64_t>>>> taps;
  // Output features in runs of one feature group and one batch group.
  std::vector<std::pair<int64_t, int64_t>> runs;
};

absl::StatusOr<ConvPlan> PlanConvolution(const Instruction& inst,
                                         const Shape& lhs, const Shape& rhs) {
  const InstructionAttrs& at = inst.attrs();
  if (!at.conv_dnums.has_value()) {
    return Error(inst, "has no dim_labels");
  }
  const ConvolutionDimensionNumbers& dn = *at.conv_dnums;
  const int64_t s = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  if (static_cast<int64_t>(dn.kernel_spatial_dimensions.size()) != s ||
      static_cast<int64_t>(dn.output_spatial_dimensions.size()) != s) {
    return Error(inst, "dim_labels have different spatial dimension counts");
  }
  const Shape& out = inst.shape();
  if (lhs.rank() != s + 2 || rhs.rank() != s + 2 || out.rank() != s + 2) {
    return Error(inst, "operands ", ShapeText(lhs), ", ", ShapeText(rhs),
                 " and result ", ShapeText(out), " must have rank ", s + 2);
  }
  std::vector<int64_t> in_dims = dn.input_spatial_dimensions;
  in_dims.push_back(dn.input_batch_dimension);
  in_dims.push_back(dn.input_feature_dimension);
  std::vector<int64_t> k_dims = dn.kernel_spatial_dimensions;
  k_dims.push_back(dn.kernel_input_feature_dimension);
  k_dims.push_back(dn.kernel_output_feature_dimension);
  std::vector<int64_t> o_dims = dn.output_spatial_dimensions;
  o_dims.push_back(dn.output_batch_dimension);
  o_dims.push_back(dn.output_feature_dimension);
  {
    std::vector<bool> u1(s + 2, false), u2(s + 2, false), u3(s + 2, false);
    absl::Status st = CheckDims(inst, "input", in_dims, s + 2, &u1);
    if (st.ok()) st = CheckDims(inst, "kernel", k_dims, s + 2, &u2);
    if (st.ok()) st = CheckDims(inst, "output", o_dims, s + 2, &u3);
    if (!st.ok()) return st;
  }
  std::vector<WindowDimension> win;
  if (at.window.has_value()) win = at.window->dimensions;
  if (win.empty() && s > 0) {
    // No window attribute: size from the kernel, unit stride, no padding.
    for (int64_t d = 0; d < s; ++d) {
      WindowDimension w;
      w.size = rhs.dimensions(dn.kernel_spatial_dimensions[d]);
      win.push_back(w);
    }
  }
  if (static_cast<int64_t>(win.size()) != s) {
    return Error(inst, "window has ", static_cast<int64_t>(win.size()),
                 " dimensions but the convolution has ", s,
                 " spatial dimensions");
  }
  const int64_t fgc = at.feature_group_count;
  const int64_t bgc = at.batch_group_count;
  if (fgc < 1 || bgc < 1) {
    return Error(inst, "feature_group_count and batch_group_count must be ",
                 "positive");
  }
  ConvPlan p;
  p.spatial = s;
  const int64_t in_batch = lhs.dimensions(dn.input_batch_dimension);
  const int64_t in_features = lhs.dimensions(dn.input_feature_dimension);
  const int64_t k_in = rhs.dimensions(dn.kernel_input_feature_dimension);
  const int64_t k_out = rhs.dimensions(dn.kernel_output_feature_dimension);
  if (in_features % fgc != 0 || in_features / fgc != k_in) {
    return Error(inst, "input features (", in_features,
                 ") must equal kernel input features (", k_in,
                 ") times feature_group_count (", fgc, ")");
  }
  if (k_out % fgc != 0 || k_out % bgc != 0) {
    return Error(inst, "kernel output features (", k_out,
                 ") must be divisible by feature_group_count (", fgc,
                 ") and batch_group_count (", bgc, ")");
  }
  if (in_batch % bgc != 0) {
    return Error(inst, "input batch (", in_batch,
                 ") must be divisible by batch_group_count (", bgc, ")");
  }
  p.group_features = k_in;
  p.out_group_size = k_out / fgc;
  p.depthwise = k_out / bgc;
  p.batch_group_size = in_batch / bgc;
  p.out_batch = out.dimensions(dn.output_batch_dimension);
  p.out_features = out.dimensions(dn.output_feature_dimension);
  if (p.out_batch != in_batch / bgc || p.out_features != k_out) {
    return Error(inst, "result ", ShapeText(out), " must have batch ",
                 in_batch / bgc, " and ", k_out, " features");
  }
  // Packing orders and strides.
  const DimVector ls = RowMajorStrides(lhs.dimensions());
  const DimVector rs = RowMajorStrides(rhs.dimensions());
  const DimVector os = RowMajorStrides(out.dimensions());
  p.lhs_sizes.push_back(in_batch);
  p.lhs_strides.push_back(ls[dn.input_batch_dimension]);
  for (int64_t d = 0; d < s; ++d) {
    p.lhs_sizes.push_back(lhs.dimensions(dn.input_spatial_dimensions[d]));
    p.lhs_strides.push_back(ls[dn.input_spatial_dimensions[d]]);
    p.rhs_sizes.push_back(rhs.dimensions(dn.kernel_spatial_dimensions[d]));
    p.rhs_strides.push_back(rs[dn.kernel_spatial_dimensions[d]]);
  }
  p.lhs_sizes.push_back(in_features);
  p.lhs_strides.push_back(ls[dn.input_feature_dimension]);
  p.rhs_sizes.push_back(k_in);
  p.rhs_strides.push_back(rs[dn.kernel_input_feature_dimension]);
  p.rhs_sizes.push_back(k_out);
  p.rhs_strides.push_back(rs[dn.kernel_output_feature_dimension]);
  const DimVector lps = RowMajorStrides(p.lhs_sizes);
  const DimVector rps = RowMajorStrides(p.rhs_sizes);
  p.lhs_batch_stride = lps[0];
  for (int64_t d = 0; d < s; ++d) {
    p.out_sp_stride.push_back(os[dn.output_spatial_dimensions[d]]);
  }
  p.out_b_stride = os[dn.output_batch_dimension];
  p.out_f_stride = os[dn.output_feature_dimension];

  for (int64_t d = 0; d < s; ++d) {
    const WindowDimension& w = win[d];
    const int64_t in = lhs.dimensions(dn.input_spatial_dimensions[d]);
    const int64_t ks = rhs.dimensions(dn.kernel_spatial_dimensions[d]);
    if (w.size != ks) {
      return Error(inst, "window size ", w.size, " in spatial dimension ", d,
                   " does not match the kernel size ", ks);
    }
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return Error(inst, "window stride and dilations must be positive");
    }
    const int64_t dilated_in = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
    const int64_t padded = dilated_in + w.padding_low + w.padding_high;
    const int64_t dilated_w = ks == 0 ? 0 : (ks - 1) * w.window_dilation + 1;
    const int64_t o = (padded < dilated_w || padded < 0)
                          ? 0
                          : (padded - dilated_w) / w.stride + 1;
    const int64_t actual = out.dimensions(dn.output_spatial_dimensions[d]);
    if (actual != o) {
      return Error(inst, "result ", ShapeText(out), " spatial dimension ", d,
                   " has size ", actual, " but the window gives ", o);
    }
    p.out_spatial.push_back(o);
    std::vector<std::vector<std::pair<int64_t, int64_t>>> lists(o);
    for (int64_t oi = 0; oi < o; ++oi) {
      for (int64_t wi = 0; wi < ks; ++wi) {
        int64_t u = oi * w.stride - w.padding_low + wi * w.window_dilation;
        if (w.base_dilation > 1) {
          if (u % w.base_dilation != 0) continue;
          u /= w.base_dilation;
        }
        if (u < 0 || u >= in) continue;
        const int64_t k = w.window_reversal ? ks - 1 - wi : wi;
        lists[oi].emplace_back(u * lps[1 + d], k * rps[d]);
      }
    }
    p.taps.push_back(std::move(lists));
  }
  for (int64_t z0 = 0; z0 < k_out;) {
    const int64_t z1 =
        std::min({k_out, (z0 / p.out_group_size + 1) * p.out_group_size,
                  (z0 / p.depthwise + 1) * p.depthwise});
    p.runs.emplace_back(z0, z1);
    z0 = z1;
  }
  return p;
}

template <typename Acc>
Literal ComputeConvolution(const Instruction& inst, const Literal& lhs,
                           const Literal& rhs, const ConvPlan& p) {
  const PrimitiveType rt = inst.shape().element_type();
  std::vector<Acc> lv, rv;
  LoadAs(lhs, rt, &lv);
  LoadAs(rhs, rt, &rv);
  std::vector<Acc> a(lv.size()), b(rv.size());
  Gather(lv.data(), p.lhs_sizes, p.lhs_strides, a.data());
  Gather(rv.data(), p.rhs_sizes, p.rhs_strides, b.data());
  lv = {};
  rv = {};
  const int64_t s = p.spatial;
  std::vector<Acc> out(inst.shape().ElementsIn(), Acc{});
  const int64_t fsize = p.group_features;
  const int64_t nz = p.out_features;
  std::vector<Acc> acc(nz);
  bool any = p.out_batch > 0;
  for (int64_t d = 0; d < s; ++d) any = any && p.out_spatial[d] > 0;
  if (!any || nz == 0) {
    Literal result(inst.shape());
    StoreAll(out.data(), static_cast<int64_t>(out.size()), &result, true);
    return result;
  }
  absl::InlinedVector<const std::vector<std::pair<int64_t, int64_t>>*, 6> lists(
      s);
  DimVector opos(s, 0), tap_sizes(s > 0 ? s - 1 : 0), tap(tap_sizes.size());
  for (int64_t ob = 0; ob < p.out_batch; ++ob) {
    std::fill(opos.begin(), opos.end(), 0);
    do {
      std::fill(acc.begin(), acc.end(), Acc{});
      bool empty = false;
      for (int64_t d = 0; d < s; ++d) {
        lists[d] = &p.taps[d][opos[d]];
        empty = empty || lists[d]->empty();
        if (d + 1 < s) tap_sizes[d] = static_cast<int64_t>(lists[d]->size());
      }
      if (!empty) {
        std::fill(tap.begin(), tap.end(), 0);
        do {
          int64_t lbase = 0, rbase = 0;
          for (int64_t d = 0; d + 1 < s; ++d) {
            lbase += (*lists[d])[tap[d]].first;
            rbase += (*lists[d])[tap[d]].second;
          }
          const int64_t inner_count =
              s == 0 ? 1 : static_cast<int64_t>(lists[s - 1]->size());
          for (int64_t t = 0; t < inner_count; ++t) {
            const int64_t loff =
                lbase + (s == 0 ? 0 : (*lists[s - 1])[t].first);
            const int64_t roff =
                rbase + (s == 0 ? 0 : (*lists[s - 1])[t].second);
            for (const auto& [z0, z1] : p.runs) {
              const int64_t fgi = z0 / p.out_group_size;
              const int64_t bgi = z0 / p.depthwise;
              const Acc* lp =
                  a.data() +
                  (ob + bgi * p.batch_group_size) * p.lhs_batch_stride + loff +
                  fgi * fsize;
              const Acc* rp = b.data() + roff;
              Acc* accp = acc.data();
              for (int64_t f = 0; f < fsize; ++f) {
                const Acc av = lp[f];
                const Acc* r = rp + f * nz;
                for (int64_t z = z0; z < z1; ++z) MulAdd(accp[z], av, r[z]);
              }
            }
          }
        } while (NextIndex(tap_sizes, &tap));
      }
      int64_t out_off = ob * p.out_b_stride;
      for (int64_t d = 0; d < s; ++d) out_off += opos[d] * p.out_sp_stride[d];
      for (int64_t z = 0; z < nz; ++z)
        out[out_off + z * p.out_f_stride] = acc[z];
    } while (NextIndex(p.out_spatial, &opos));
  }
  Literal result(inst.shape());
  StoreAll(out.data(), static_cast<int64_t>(out.size()), &result, true);
  return result;
}

// ---------------------------------------------------------------------------
// ragged-dot

enum class RaggedMode { kNonContracting, kContracting, kBatch };

// Group of every lhs element (row-major), or -1 when its ragged coordinate
// falls in no group. group_sizes is [x..., g] where x... are lhs dimensions
// 0..r-2; element (x..., c) belongs to group j when
// sum(sizes[x..., :j]) <= c < sum(sizes[x..., :j+1]).
absl::StatusOr<std::vector<int32_t>> LhsGroups(const Instruction& inst,
                                               const Shape& lhs,
                                               const Literal& sizes,
                                               int64_t ragged_dim) {
  const Shape& gs = sizes.shape();
  const int64_t r = gs.rank();
  if (r < 1 || !IsIntegralType(gs.element_type())) {
    return Error(inst, "group sizes ", ShapeText(gs),
                 " must be an integer array of rank >= 1");
  }
  if (r - 1 > lhs.rank()) {
    return Error(inst, "group sizes ", ShapeText(gs),
                 " have more leading dimensions than lhs ", ShapeText(lhs));
  }
  for (int64_t d = 0; d + 1 < r; ++d) {
    if (gs.dimensions(d) != lhs.dimensions(d)) {
      return Error(inst, "group sizes ", ShapeText(gs), " dimension ", d,
                   " must match lhs ", ShapeText(lhs));
    }
  }
  const int64_t groups = gs.dimensions(r - 1);
  if (groups > std::numeric_limits<int32_t>::max()) {
    return Error(inst, "too many groups");
  }
  const int64_t rows = groups == 0 ? 0 : gs.ElementsIn() / groups;
  // Inclusive prefix sums per row.
  std::vector<int64_t> cum(gs.ElementsIn());
  for (int64_t row = 0; row < rows; ++row) {
    int64_t acc = 0;
    for (int64_t g = 0; g < groups; ++g) {
      acc += sizes.GetAsInt64(row * groups + g);
      cum[row * groups + g] = acc;
    }
  }
  const int64_t n = lhs.ElementsIn();
  std::vector<int32_t> out(n, -1);
  if (groups == 0) return out;
  int64_t inner = 1;  // elements per group-sizes row
  for (int64_t d = r - 1; d < lhs.rank(); ++d) inner *= lhs.dimensions(d);
  const DimVector strides = RowMajorStrides(lhs.dimensions());
  const int64_t rstride = strides[ragged_dim];
  const int64_t rsize = lhs.dimensions(ragged_dim);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = inner == 0 ? 0 : i / inner;
    const int64_t c = (i / rstride) % rsize;
    const int64_t* cr = cum.data() + row * groups;
    int64_t prev = 0;
    for (int64_t g = 0; g < groups; ++g) {
      if (prev <= c && c < cr[g]) {
        out[i] = static_cast<int32_t>(g);
        break;
      }
      prev = cr[g];
    }
  }
  return out;
}

template <typename Acc>
absl::StatusOr<Literal> ComputeRaggedDot(const Instruction& inst,
                                         const Literal& lhs, const Literal& rhs,
                                         const Literal& sizes, const DotPlan& p,
                                         RaggedMode mode, int64_t ragged_dim,
                                         int64_t rhs_group_dim) {
  const PrimitiveType rt = inst.shape().element_type();
  absl::StatusOr<std::vector<int32_t>> groups_or =
      LhsGroups(inst, lhs.shape(), sizes, ragged_dim);
  if (!groups_or.ok()) return groups_or.status();
  const int64_t num_groups = sizes.shape().dimensions(sizes.shape().rank() - 1);
  std::vector<Acc> lv, rv;
  LoadAs(lhs, rt, &lv);
  LoadAs(rhs, rt, &rv);
  std::vector<Acc> a(p.batch * p.m * p.k);
  std::vector<int32_t> ga(a.size());
  Gather(lv.data(), p.lhs_sizes, p.lhs_strides, a.data());
  Gather(groups_or->data(), p.lhs_sizes, p.lhs_strides, ga.data());
  lv = {};
  // rhs packed as [group][batch][k][n] in mode 1, else [batch][k][n].
  DimVector rsizes = p.rhs_sizes, rstrides = p.rhs_strides;
  int64_t rhs_groups = 1;
  if (mode == RaggedMode::kNonContracting) {
    rhs_groups = rhs.shape().dimensions(rhs_group_dim);
    if (rhs_groups != num_groups) {
      return Error(inst, "rhs ", ShapeText(rhs.shape()), " has ", rhs_groups,
                   " groups but group sizes ", ShapeText(sizes.shape()),
                   " has ", num_groups);
    }
    rsizes.insert(rsizes.begin(), rhs_groups);
    rstrides.insert(rstrides.begin(),
                    RowMajorStrides(rhs.shape().dimensions())[rhs_group_dim]);
  }
  std::vector<Acc> b(rhs_groups * p.batch * p.k * p.n);
  Gather(rv.data(), rsizes, rstrides, b.data());
  rv = {};
  const int64_t out_groups = mode == RaggedMode::kContracting ? num_groups : 1;
  std::vector<Acc> out(out_groups * p.batch * p.m * p.n, Acc{});
  for (int64_t bb = 0; bb < p.batch; ++bb) {
    for (int64_t i = 0; i < p.m; ++i) {
      const int64_t row = bb * p.m + i;
      const Acc* arow = a.data() + row * p.k;
      const int32_t* grow = ga.data() + row * p.k;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const int32_t g = grow[kk];
        if (g < 0) continue;
        const Acc av = arow[kk];
        const Acc* brow;
        Acc* o;
        if (mode == RaggedMode::kNonContracting) {
          brow = b.data() + ((g * p.batch + bb) * p.k + kk) * p.n;
          o = out.data() + row * p.n;
        } else {
          brow = b.data() + (bb * p.k + kk) * p.n;
          o = out.data() + (g * p.batch * p.m + row) * p.n;
        }
        for (int64_t j = 0; j < p.n; ++j) MulAdd(o[j], av, brow[j]);
      }
    }
  }
  Literal result(inst.shape());
  StoreAll(out.data(), static_cast<int64_t>(out.size()), &result, false);
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalDot(const Instruction& inst, Operands operands) {
  if (absl::Status st = CheckArrayOperands(inst, operands, 2); !st.ok()) {
    return st;
  }
  if (absl::Status st = CheckPrecision(inst); !st.ok()) return st;
  DotDimensionNumbers dn;
  if (inst.attrs().dot_dnums.has_value()) dn = *inst.attrs().dot_dnums;
  absl::StatusOr<DotPlan> plan =
      PlanDot(inst, operands[0]->shape(), operands[1]->shape(), dn, {});
  if (!plan.ok()) return plan.status();
  if (absl::Status st = CheckResultDims(inst, plan->result_dims); !st.ok()) {
    return st;
  }
  return DispatchAcc(AccKindOf(inst.shape().element_type()), [&](auto tag) {
    using Acc = typename decltype(tag)::type;
    return ComputeDot<Acc>(inst, *operands[0], *operands[1], *plan);
  });
}

absl::StatusOr<Literal> EvalConvolution(const Instruction& inst,
                                        Operands operands) {
  if (absl::Status st = CheckArrayOperands(inst, operands, 2); !st.ok()) {
    return st;
  }
  if (absl::Status st = CheckPrecision(inst); !st.ok()) return st;
  absl::StatusOr<ConvPlan> plan =
      PlanConvolution(inst, operands[0]->shape(), operands[1]->shape());
  if (!plan.ok()) return plan.status();
  return DispatchAcc(AccKindOf(inst.shape().element_type()), [&](auto tag) {
    using Acc = typename decltype(tag)::type;
    return ComputeConvolution<Acc>(inst, *operands[0], *operands[1], *plan);
  });
}

absl::StatusOr<Literal> EvalRaggedDot(const Instruction& inst,
                                      Operands operands) {
  if (absl::Status st = CheckArrayOperands(inst, operands, 3); !st.ok()) {
    return st;
  }
  if (absl::Status st = CheckPrecision(inst); !st.ok()) return st;
  const InstructionAttrs& at = inst.attrs();
  DotDimensionNumbers dn;
  if (at.dot_dnums.has_value()) dn = *at.dot_dnums;
  RaggedDotDimensionNumbers rn;
  if (at.ragged_dnums.has_value()) rn = *at.ragged_dnums;
  const Shape& lhs = operands[0]->shape();
  const Shape& rhs = operands[1]->shape();
  if (rn.lhs_ragged_dimensions.size() != 1) {
    return Error(inst, "needs exactly one lhs ragged dimension, got ",
                 IntListToString(rn.lhs_ragged_dimensions));
  }
  const int64_t ragged = rn.lhs_ragged_dimensions[0];
  if (ragged < 0 || ragged >= lhs.rank()) {
    return Error(inst, "lhs ragged dimension ", ragged, " is out of range for ",
                 ShapeText(lhs));
  }
  RaggedMode mode = RaggedMode::kNonContracting;
  if (Contains(dn.lhs_contracting_dimensions, ragged)) {
    mode = RaggedMode::kContracting;
  } else if (Contains(dn.lhs_batch_dimensions, ragged)) {
    mode = RaggedMode::kBatch;
  }
  int64_t group_dim = -1;
  if (mode == RaggedMode::kNonContracting) {
    if (rn.rhs_group_dimensions.size() != 1) {
      return Error(inst, "a non-contracting ragged dimension needs exactly ",
                   "one rhs group dimension, got ",
                   IntListToString(rn.rhs_group_dimensions));
    }
    group_dim = rn.rhs_group_dimensions[0];
  } else if (!rn.rhs_group_dimensions.empty()) {
    return Error(inst, "a contracting or batch ragged dimension takes no rhs ",
                 "group dimension");
  }
  std::vector<int64_t> skip;
  if (mode == RaggedMode::kNonContracting) skip.push_back(group_dim);
  absl::StatusOr<DotPlan> plan = PlanDot(inst, lhs, rhs, dn, skip);
  if (!plan.ok()) return plan.status();
  const Literal& sizes = *operands[2];
  if (sizes.shape().rank() < 1 ||
      !IsIntegralType(sizes.shape().element_type())) {
    return Error(inst, "group sizes ", ShapeText(sizes.shape()),
                 " must be an integer array of rank >= 1");
  }
  DimVector dims = plan->result_dims;
  if (mode == RaggedMode::kContracting) {
    dims.insert(dims.begin(),
                sizes.shape().dimensions(sizes.shape().rank() - 1));
  }
  if (absl::Status st = CheckResultDims(inst, dims); !st.ok()) return st;
  return DispatchAcc(
      AccKindOf(inst.shape().element_type()),
      [&](auto tag) -> absl::StatusOr<Literal> {
        using Acc = typename decltype(tag)::type;
        if (mode == RaggedMode::kBatch) {
          // A ragged batch dimension leaves the product unchanged: every
          // batch row is computed in full.
          return ComputeDot<Acc>(inst, *operands[0], *operands[1], *plan);
        }
        return ComputeRaggedDot<Acc>(inst, *operands[0], *operands[1], sizes,
                                     *plan, mode, ragged, group_dim);
      });
}

}  // namespace hlogym
