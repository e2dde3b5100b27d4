// cholesky, triangular-solve, fft and the batch-norm family.
//
// These opcodes are defined in XLA by expansions into simpler HLO; the
// kernels compute what those expansions compute:
// - cholesky: the unblocked Cholesky-Banachiewicz loop (column j of L is
//   (A - L*L^H)[:, j] / sqrt((A - L*L^H)[j, j])), reading only the lower
//   triangle (or, for lower=false, the transposed problem on the upper
//   triangle). The other triangle of the result is zero. When a diagonal
//   square root is NaN (not positive definite), the whole matrix is NaN.
// - triangular-solve: forward/back substitution in the element type.
// - fft: DFTs accumulated in double.
// - batch-norm-*: the elementwise formulas of XLA's batch-norm expansion,
//   each step rounded to the element type.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numbers>
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

absl::Status CheckOperands(const Instruction& inst, Operands operands,
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
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Element access in a compute type T (float, double or std::complex).

// Rounds a computed value to the precision of element type `t` (f16, bf16
// and the f8 family are computed in float and rounded after every step).
template <typename T>
struct Rounder {
  PrimitiveType t;
  bool exact;  // t is float/double/c64/c128: nothing to round
  explicit Rounder(PrimitiveType type)
      : t(type),
        exact(type == PrimitiveType::kF32 || type == PrimitiveType::kF64 ||
              IsComplexType(type)) {}
  T operator()(T v) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (exact) return v;
      uint64_t bits = 0;
      FloatToBits(t, v, &bits);
      return static_cast<T>(BitsToFloat(t, bits));
    } else {
      return v;
    }
  }
};

template <typename T>
std::vector<T> Load(const Literal& lit) {
  const int64_t n = lit.element_count();
  std::vector<T> out(n);
  const PrimitiveType t = lit.shape().element_type();
  if constexpr (std::is_floating_point_v<T>) {
    if (t == PrimitiveType::kF32) {
      for (int64_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, lit.data() + 4 * i, 4);
        out[i] = static_cast<T>(v);
      }
    } else if (t == PrimitiveType::kF64) {
      for (int64_t i = 0; i < n; ++i) {
        double v;
        std::memcpy(&v, lit.data() + 8 * i, 8);
        out[i] = static_cast<T>(v);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        out[i] = static_cast<T>(lit.GetAsDouble(i));
      }
    }
  } else {
    using R = typename T::value_type;
    for (int64_t i = 0; i < n; ++i) {
      std::complex<double> c = lit.GetComplex(i);
      out[i] = T(static_cast<R>(c.real()), static_cast<R>(c.imag()));
    }
  }
  return out;
}

template <typename T>
void Store(const std::vector<T>& v, Literal* lit) {
  const PrimitiveType t = lit->shape().element_type();
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i);
    if constexpr (std::is_floating_point_v<T>) {
      if (t == PrimitiveType::kF32) {
        float f = static_cast<float>(v[i]);
        std::memcpy(lit->mutable_data() + 4 * k, &f, 4);
      } else {
        lit->SetFromDouble(k, static_cast<double>(v[i]));
      }
    } else {
      lit->SetComplex(k, {static_cast<double>(v[i].real()),
                          static_cast<double>(v[i].imag())});
    }
  }
}

template <typename T>
struct RealOf {
  using type = T;
};
template <typename R>
struct RealOf<std::complex<R>> {
  using type = R;
};

template <typename T>
T Conj(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v;
  } else {
    return std::conj(v);
  }
}

template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return std::isnan(v.real()) || std::isnan(v.imag());
  }
}

// Calls fn(Tag<T>) with T the compute type of element type `t`.
template <typename T>
struct Tag {
  using type = T;
};

template <typename Fn>
absl::StatusOr<Literal> DispatchCompute(const Instruction& inst,
                                        PrimitiveType t, bool allow_complex,
                                        Fn&& fn) {
  switch (t) {
    case PrimitiveType::kF64:
      return fn(Tag<double>{});
    case PrimitiveType::kC64:
      if (allow_complex) return fn(Tag<std::complex<float>>{});
      break;
    case PrimitiveType::kC128:
      if (allow_complex) return fn(Tag<std::complex<double>>{});
      break;
    default:
      if (IsFloatingPointType(t)) return fn(Tag<float>{});
      break;
  }
  return Error(inst, "unsupported element type ", PrimitiveTypeName(t));
}

// ---------------------------------------------------------------------------
// cholesky

template <typename T>
void CholeskyMatrix(const T* a, int64_t n, bool lower, T* out) {
  using R = typename RealOf<T>::type;
  // m(i, j): the input as a lower-triangular problem.
  auto m = [&](int64_t i, int64_t j) {
    return lower ? a[i * n + j] : a[j * n + i];
  };
  std::vector<T> l(n * n, T(0));
  bool error = false;
  auto sqrt_diag = [&](T t) -> T {
    if constexpr (std::is_floating_point_v<T>) {
      T s = std::sqrt(t);
      error = error || std::isnan(s);
      return s;
    } else {
      R s = std::sqrt(t.real());
      error = error || std::isnan(s);
      return T(s, R(0));
    }
  };
  if (n == 1) {
    l[0] = sqrt_diag(m(0, 0));
  } else {
    std::vector<T> col(n);
    for (int64_t j = 0; j < n; ++j) {
      // (A - L*L^H)[i, j] for i >= j; L has columns 0..j-1 filled.
      for (int64_t i = j; i < n; ++i) {
        T dot(0);
        for (int64_t k = 0; k < j; ++k) {
          dot += l[i * n + k] * Conj(l[j * n + k]);
        }
        col[i] = m(i, j) - dot;
      }
      const T d = sqrt_diag(col[j]);
      for (int64_t i = j; i < n; ++i) l[i * n + j] = col[i] / d + T(0);
    }
  }
  if (error) {
    std::fill(l.begin(), l.end(), T(std::numeric_limits<R>::quiet_NaN()));
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      out[i * n + j] = lower ? l[i * n + j] : l[j * n + i];
    }
  }
}

absl::StatusOr<Literal> EvalCholesky(const Instruction& inst,
                                     Operands operands) {
  if (absl::Status st = CheckOperands(inst, operands, 1); !st.ok()) return st;
  const Literal& a = *operands[0];
  const Shape& s = a.shape();
  if (s.rank() < 2 ||
      s.dimensions(s.rank() - 1) != s.dimensions(s.rank() - 2)) {
    return Error(inst, "operand ", ShapeText(s),
                 " must be square in its two minor dimensions");
  }
  if (!inst.shape().EqualIgnoringLayout(s)) {
    return Error(inst, "result ", ShapeText(inst.shape()),
                 " must equal the operand ", ShapeText(s));
  }
  const bool lower = inst.attrs().lower;
  const int64_t n = s.dimensions(s.rank() - 1);
  return DispatchCompute(
      inst, s.element_type(), true, [&](auto tag) -> absl::StatusOr<Literal> {
        using T = typename decltype(tag)::type;
        std::vector<T> v = Load<T>(a);
        std::vector<T> out(v.size());
        const int64_t mat = n * n;
        for (int64_t b = 0; mat > 0 && b < static_cast<int64_t>(v.size()) / mat;
             ++b) {
          CholeskyMatrix(v.data() + b * mat, n, lower, out.data() + b * mat);
        }
        Literal result(inst.shape());
        Store(out, &result);
        return result;
      });
}

// ---------------------------------------------------------------------------
// triangular-solve

template <typename T>
void SolveMatrix(const T* a, const T* b, int64_t m, int64_t n, bool left_side,
                 bool lower, bool unit, TriangularTranspose tr, T* x) {
  const int64_t k = left_side ? m : n;  // order of a
  // op(a) restricted to the triangle in use, as a dense k x k matrix.
  std::vector<T> op(k * k, T(0));
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      const bool in_triangle = lower ? j <= i : j >= i;
      if (!in_triangle) continue;
      T v = (unit && i == j) ? T(1) : a[i * k + j];
      switch (tr) {
        case TriangularTranspose::kNoTranspose:
          op[i * k + j] = v;
          break;
        case TriangularTranspose::kTranspose:
          op[j * k + i] = v;
          break;
        case TriangularTranspose::kAdjoint:
          op[j * k + i] = Conj(v);
          break;
      }
    }
  }
  const bool op_lower = lower == (tr == TriangularTranspose::kNoTranspose);
  std::copy(b, b + m * n, x);
  if (left_side) {
    // op(a) * x = b, row by row.
    for (int64_t s = 0; s < m; ++s) {
      const int64_t i = op_lower ? s : m - 1 - s;
      T* xi = x + i * n;
      for (int64_t t = 0; t < s; ++t) {
        const int64_t kk = op_lower ? t : m - 1 - t;
        const T c = op[i * k + kk];
        const T* xk = x + kk * n;
        for (int64_t j = 0; j < n; ++j) xi[j] -= c * xk[j];
      }
      if (!unit) {
        const T d = op[i * k + i];
        for (int64_t j = 0; j < n; ++j) xi[j] /= d;
      }
    }
  } else {
    // x * op(a) = b, column by column.
    for (int64_t s = 0; s < n; ++s) {
      const int64_t j = op_lower ? n - 1 - s : s;
      for (int64_t t = 0; t < s; ++t) {
        const int64_t kk = op_lower ? n - 1 - t : t;
        const T c = op[kk * k + j];
        for (int64_t i = 0; i < m; ++i) x[i * n + j] -= x[i * n + kk] * c;
      }
      if (!unit) {
        const T d = op[j * k + j];
        for (int64_t i = 0; i < m; ++i) x[i * n + j] /= d;
      }
    }
  }
}

absl::StatusOr<Literal> EvalTriangularSolve(const Instruction& inst,
                                            Operands operands) {
  if (absl::Status st = CheckOperands(inst, operands, 2); !st.ok()) return st;
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const InstructionAttrs& at = inst.attrs();
  const int64_t r = as.rank();
  if (r < 2 || bs.rank() != r || as.dimensions(r - 1) != as.dimensions(r - 2) ||
      as.element_type() != bs.element_type()) {
    return Error(inst, "operands ", ShapeText(as), " and ", ShapeText(bs),
                 " must be square matrices and matrices of one rank and type");
  }
  for (int64_t d = 0; d + 2 < r; ++d) {
    if (as.dimensions(d) != bs.dimensions(d)) {
      return Error(inst, "batch dimensions of ", ShapeText(as), " and ",
                   ShapeText(bs), " differ");
    }
  }
  const int64_t m = bs.dimensions(r - 2);
  const int64_t n = bs.dimensions(r - 1);
  if (as.dimensions(r - 1) != (at.left_side ? m : n)) {
    return Error(inst, "a ", ShapeText(as), " does not match b ", ShapeText(bs),
                 at.left_side ? " on the left" : " on the right");
  }
  if (!inst.shape().EqualIgnoringLayout(bs)) {
    return Error(inst, "result ", ShapeText(inst.shape()), " must equal b ",
                 ShapeText(bs));
  }
  return DispatchCompute(
      inst, as.element_type(), true, [&](auto tag) -> absl::StatusOr<Literal> {
        using T = typename decltype(tag)::type;
        std::vector<T> av = Load<T>(a);
        std::vector<T> bv = Load<T>(b);
        std::vector<T> x(bv.size());
        const int64_t k = as.dimensions(r - 1);
        const int64_t batches = (m * n == 0) ? 0 : bv.size() / (m * n);
        for (int64_t i = 0; i < batches; ++i) {
          SolveMatrix(av.data() + i * k * k, bv.data() + i * m * n, m, n,
                      at.left_side, at.lower, at.unit_diagonal, at.transpose_a,
                      x.data() + i * m * n);
        }
        Literal result(inst.shape());
        Store(x, &result);
        return result;
      });
}

// ---------------------------------------------------------------------------
// fft

using Cd = std::complex<double>;

// In-place DFT of `n` values spaced `stride` apart: forward uses e^{-2πi},
// inverse e^{+2πi} and divides by n.
class Dft {
 public:
  explicit Dft(int64_t n) : n_(n), tw_(n), buf_(n), tmp_(n) {
    for (int64_t k = 0; k < n; ++k) {
      // Quarter turns are exact, so small transforms of integers are too.
      if ((4 * k) % n == 0) {
        static const Cd kQuarter[4] = {{1, 0}, {0, -1}, {-1, 0}, {0, 1}};
        tw_[k] = kQuarter[(4 * k) / n];
        continue;
      }
      const double ang = -2.0 * std::numbers::pi * static_cast<double>(k) /
                         static_cast<double>(n);
      tw_[k] = Cd(std::cos(ang), std::sin(ang));
    }
    pow2_ = n > 0 && (n & (n - 1)) == 0;
  }

  void Run(Cd* data, int64_t stride, bool inverse) {
    if (n_ == 0) return;
    for (int64_t i = 0; i < n_; ++i) buf_[i] = data[i * stride];
    if (pow2_) {
      Radix2(inverse);
    } else {
      for (int64_t k = 0; k < n_; ++k) {
        Cd acc(0, 0);
        for (int64_t j = 0; j < n_; ++j) {
          const Cd w = tw_[(j * k) % n_];
          acc += buf_[j] * (inverse ? std::conj(w) : w);
        }
        tmp_[k] = acc;
      }
      buf_.swap(tmp_);
    }
    const double scale = inverse ? 1.0 / static_cast<double>(n_) : 1.0;
    for (int64_t i = 0; i < n_; ++i) data[i * stride] = buf_[i] * scale;
  }

 private:
  void Radix2(bool inverse) {
    const int64_t n = n_;
    for (int64_t i = 1, j = 0; i < n; ++i) {
      int64_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(buf_[i], buf_[j]);
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
      const int64_t step = n / len;
      for (int64_t i = 0; i < n; i += len) {
        for (int64_t j = 0; j < len / 2; ++j) {
          Cd w = tw_[j * step];
          if (inverse) w = std::conj(w);
          const Cd u = buf_[i + j];
          const Cd v = buf_[i + j + len / 2] * w;
          buf_[i + j] = u + v;
          buf_[i + j + len / 2] = u - v;
        }
      }
    }
  }

  int64_t n_;
  bool pow2_ = false;
  std::vector<Cd> tw_, buf_, tmp_;
};

// Applies a complex DFT along dimension `axis` of `data` (row-major dims).
void DftAlong(std::vector<Cd>* data, const DimVector& dims, int64_t axis,
              bool inverse) {
  const int64_t n = dims[axis];
  if (n == 0) return;
  const DimVector strides = RowMajorStrides(dims);
  const int64_t stride = strides[axis];
  const int64_t total = static_cast<int64_t>(data->size());
  Dft dft(n);
  const int64_t outer_block = stride * n;
  for (int64_t base = 0; base < total; base += outer_block) {
    for (int64_t in = 0; in < stride; ++in) {
      dft.Run(data->data() + base + in, stride, inverse);
    }
  }
}

absl::StatusOr<Literal> EvalFft(const Instruction& inst, Operands operands) {
  if (absl::Status st = CheckOperands(inst, operands, 1); !st.ok()) return st;
  const Literal& in = *operands[0];
  const Shape& s = in.shape();
  const InstructionAttrs& at = inst.attrs();
  const std::vector<int64_t>& len = at.fft_length;
  const int64_t fr = static_cast<int64_t>(len.size());
  if (fr < 1 || fr > 3 || s.rank() < fr) {
    return Error(inst, "fft_length ", IntListToString(len),
                 " does not fit operand ", ShapeText(s));
  }
  const int64_t first = s.rank() - fr;
  const PrimitiveType t = s.element_type();
  const FftType type = at.fft_type;
  const bool real_in = type == FftType::kRfft;
  if (real_in ? (t != PrimitiveType::kF32 && t != PrimitiveType::kF64)
              : !IsComplexType(t)) {
    return Error(inst, "operand ", ShapeText(s),
                 " has the wrong element type for this fft type");
  }
  for (int64_t i = 0; i < fr; ++i) {
    const int64_t have = s.dimensions(first + i);
    int64_t want = len[i];
    if (type == FftType::kIrfft && i == fr - 1) want = len[i] / 2 + 1;
    if (have != want) {
      return Error(inst, "operand ", ShapeText(s), " dimension ", first + i,
                   " must be ", want, " for fft_length ", IntListToString(len));
    }
  }
  // Result shape.
  DimVector out_dims = s.dimensions();
  PrimitiveType out_type = t;
  if (type == FftType::kRfft) {
    out_dims.back() = len.back() / 2 + 1;
    out_type =
        t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128;
  } else if (type == FftType::kIrfft) {
    out_dims.back() = len.back();
    out_type = ComplexComponentType(t);
  }
  if (!inst.shape().IsArray() || inst.shape().element_type() != out_type ||
      inst.shape().dimensions() != out_dims) {
    return Error(inst, "result ", ShapeText(inst.shape()), " must be ",
                 ShapeText(Shape(out_type, out_dims)));
  }
  Literal result(inst.shape());
  const bool inverse = type == FftType::kIfft || type == FftType::kIrfft;
  std::vector<Cd> data(in.element_count());
  for (int64_t i = 0; i < in.element_count(); ++i) data[i] = in.GetComplex(i);
  DimVector dims = s.dimensions();
  const int64_t last = s.rank() - 1;
  if (type == FftType::kFft || type == FftType::kIfft) {
    for (int64_t d = last; d >= first; --d) DftAlong(&data, dims, d, inverse);
  } else if (type == FftType::kRfft) {
    // Real DFT along the last dimension, keeping n/2+1 outputs.
    const int64_t n = dims[last];
    const int64_t h = out_dims[last];
    const int64_t rows = n == 0 ? 0 : static_cast<int64_t>(data.size()) / n;
    std::vector<Cd> half(rows * h);
    Dft dft(n);
    std::vector<Cd> line(n);
    for (int64_t r = 0; r < rows; ++r) {
      std::copy(data.begin() + r * n, data.begin() + (r + 1) * n, line.begin());
      dft.Run(line.data(), 1, false);
      std::copy(line.begin(), line.begin() + h, half.begin() + r * h);
    }
    data.swap(half);
    dims = out_dims;
    for (int64_t d = last - 1; d >= first; --d) DftAlong(&data, dims, d, false);
  } else {
    // Inverse over the outer dimensions, then a Hermitian-extended inverse
    // along the last one, keeping the real part.
    for (int64_t d = last - 1; d >= first; --d) DftAlong(&data, dims, d, true);
    const int64_t h = dims[last];
    const int64_t n = out_dims[last];
    const int64_t rows = h == 0 ? 0 : static_cast<int64_t>(data.size()) / h;
    std::vector<Cd> full(rows * n);
    Dft dft(n);
    std::vector<Cd> line(n);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < n; ++k) {
        line[k] = k < h ? data[r * h + k] : std::conj(data[r * h + (n - k)]);
      }
      dft.Run(line.data(), 1, true);
      for (int64_t k = 0; k < n; ++k) full[r * n + k] = Cd(line[k].real(), 0);
    }
    data.swap(full);
  }
  for (int64_t i = 0; i < result.element_count(); ++i) {
    if (IsComplexType(out_type)) {
      result.SetComplex(i, data[i]);
    } else {
      result.SetFromDouble(i, data[i].real());
    }
  }
  return result;
}

// ---------------------------------------------------------------------------
// batch norm

struct BnLayout {
  int64_t features = 0;
  int64_t count = 0;  // elements per feature
  int64_t inner = 1;  // elements after the feature dimension
};

absl::StatusOr<BnLayout> CheckBatchNorm(const Instruction& inst,
                                        Operands operands,
                                        const std::vector<int>& feature_ops) {
  const Shape& s = operands[0]->shape();
  const int64_t fi = inst.attrs().feature_index;
  if (!IsFloatingPointType(s.element_type())) {
    return Error(inst, "operand ", ShapeText(s), " must be floating-point");
  }
  if (fi < 0 || fi >= s.rank()) {
    return Error(inst, "feature_index ", fi, " is out of range for ",
                 ShapeText(s));
  }
  BnLayout l;
  l.features = s.dimensions(fi);
  for (int64_t d = fi + 1; d < s.rank(); ++d) l.inner *= s.dimensions(d);
  l.count = l.features == 0 ? 0 : s.ElementsIn() / l.features;
  for (int i : feature_ops) {
    const Shape& f = operands[i]->shape();
    if (f.rank() != 1 || f.dimensions(0) != l.features ||
        !IsFloatingPointType(f.element_type())) {
      return Error(inst, "operand ", i, " ", ShapeText(f),
                   " must be a floating-point vector of ", l.features,
                   " features");
    }
  }
  return l;
}

// Sum per feature over the other dimensions in row-major order, rounded to
// the element type after every addition (reduce with an add reducer).
template <typename C>
std::vector<C> FeatureSums(const std::vector<C>& x, const BnLayout& l,
                           const Rounder<C>& rnd) {
  std::vector<C> sum(l.features, C(0));
  const int64_t n = static_cast<int64_t>(x.size());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t f = (i / l.inner) % l.features;
    sum[f] = rnd(sum[f] + x[i]);
  }
  return sum;
}

template <typename C>
C Rsqrt(C v) {
  return C(1) / std::sqrt(v);
}

template <typename C>
absl::StatusOr<Literal> BatchNormTraining(const Instruction& inst,
                                          Operands operands,
                                          const BnLayout& l) {
  const Literal& xl = *operands[0];
  const PrimitiveType t = xl.shape().element_type();
  const Rounder<C> rnd(t);
  const std::vector<C> x = Load<C>(xl);
  const std::vector<C> scale = Load<C>(*operands[1]);
  const std::vector<C> offset = Load<C>(*operands[2]);
  const C eps = rnd(static_cast<C>(inst.attrs().epsilon));
  const C count = rnd(static_cast<C>(static_cast<int32_t>(l.count)));
  std::vector<C> sq(x.size());
  for (size_t i = 0; i < x.size(); ++i) sq[i] = rnd(x[i] * x[i]);
  const std::vector<C> sum = FeatureSums(x, l, rnd);
  const std::vector<C> sum_sq = FeatureSums(sq, l, rnd);
  std::vector<C> mean(l.features), var(l.features), rs(l.features);
  for (int64_t f = 0; f < l.features; ++f) {
    mean[f] = rnd(sum[f] / count);
    const C square_mean = rnd(sum_sq[f] / count);
    const C mean_square = rnd(mean[f] * mean[f]);
    var[f] = rnd(square_mean - mean_square);
    rs[f] = rnd(Rsqrt(rnd(var[f] + eps)));
  }
  std::vector<C> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t f = (static_cast<int64_t>(i) / l.inner) % l.features;
    const C normalized = rnd(rnd(x[i] - mean[f]) * rs[f]);
    out[i] = rnd(rnd(normalized * scale[f]) + offset[f]);
  }
  const Shape& rs_shape = inst.shape();
  Literal result(rs_shape);
  Store(out, &(*result.mutable_tuple_elements())[0]);
  Store(mean, &(*result.mutable_tuple_elements())[1]);
  Store(var, &(*result.mutable_tuple_elements())[2]);
  return result;
}

template <typename C>
absl::StatusOr<Literal> BatchNormInference(const Instruction& inst,
                                           Operands operands,
                                           const BnLayout& l) {
  const Literal& xl = *operands[0];
  const Rounder<C> rnd(xl.shape().element_type());
  const std::vector<C> x = Load<C>(xl);
  const std::vector<C> scale = Load<C>(*operands[1]);
  const std::vector<C> offset = Load<C>(*operands[2]);
  const std::vector<C> mean = Load<C>(*operands[3]);
  const std::vector<C> var = Load<C>(*operands[4]);
  const C eps = rnd(static_cast<C>(inst.attrs().epsilon));
  std::vector<C> true_scale(l.features), true_shift(l.features);
  for (int64_t f = 0; f < l.features; ++f) {
    true_scale[f] = rnd(scale[f] * rnd(Rsqrt(rnd(var[f] + eps))));
    true_shift[f] = rnd(offset[f] - rnd(mean[f] * true_scale[f]));
  }
  std::vector<C> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t f = (static_cast<int64_t>(i) / l.inner) % l.features;
    out[i] = rnd(rnd(x[i] * true_scale[f]) + true_shift[f]);
  }
  Literal result(inst.shape());
  Store(out, &result);
  return result;
}

template <typename C>
absl::StatusOr<Literal> BatchNormGrad(const Instruction& inst,
                                      Operands operands, const BnLayout& l) {
  const Literal& xl = *operands[0];
  const Rounder<C> rnd(xl.shape().element_type());
  const std::vector<C> x = Load<C>(xl);
  const std::vector<C> scale = Load<C>(*operands[1]);
  const std::vector<C> mean = Load<C>(*operands[2]);
  const std::vector<C> var = Load<C>(*operands[3]);
  const std::vector<C> gy = Load<C>(*operands[4]);
  const C eps = rnd(static_cast<C>(inst.attrs().epsilon));
  const C count = rnd(static_cast<C>(static_cast<int32_t>(l.count)));
  const size_t n = x.size();
  std::vector<C> xmm(n), g_xmm(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t f = (static_cast<int64_t>(i) / l.inner) % l.features;
    xmm[i] = rnd(x[i] - mean[f]);
    g_xmm[i] = rnd(gy[i] * xmm[i]);
  }
  const std::vector<C> sum_g_xmm = FeatureSums(g_xmm, l, rnd);
  const std::vector<C> grad_beta = FeatureSums(gy, l, rnd);
  std::vector<C> var_eps(l.features), rs(l.features), grad_scale(l.features),
      st(l.features);
  for (int64_t f = 0; f < l.features; ++f) {
    var_eps[f] = rnd(var[f] + eps);
    rs[f] = rnd(Rsqrt(var_eps[f]));
    grad_scale[f] = rnd(sum_g_xmm[f] * rs[f]);
    st[f] = rnd(rnd(scale[f] * rs[f]) / count);
  }
  std::vector<C> gx(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t f = (static_cast<int64_t>(i) / l.inner) % l.features;
    const C i1 = rnd(gy[i] * count);
    const C i4 = rnd(sum_g_xmm[f] * xmm[i]);
    const C i5 = rnd(i4 / var_eps[f]);
    const C i6 = rnd(rnd(i1 - grad_beta[f]) - i5);
    gx[i] = rnd(st[f] * i6);
  }
  Literal result(inst.shape());
  Store(gx, &(*result.mutable_tuple_elements())[0]);
  Store(grad_scale, &(*result.mutable_tuple_elements())[1]);
  Store(grad_beta, &(*result.mutable_tuple_elements())[2]);
  return result;
}

absl::Status CheckBnTupleResult(const Instruction& inst, const Shape& operand,
                                int64_t features) {
  const Shape& r = inst.shape();
  Shape stats(operand.element_type(), {features});
  if (!r.IsTuple() || r.tuple_shapes_size() != 3 ||
      !r.tuple_shapes(0).EqualIgnoringLayout(operand) ||
      !r.tuple_shapes(1).EqualIgnoringLayout(stats) ||
      !r.tuple_shapes(2).EqualIgnoringLayout(stats)) {
    return Error(inst, "result ", ShapeText(r), " must be (",
                 ShapeText(operand), ", ", ShapeText(stats), ", ",
                 ShapeText(stats), ")");
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvalBatchNorm(const Instruction& inst,
                                      Operands operands) {
  const Opcode op = inst.opcode();
  const size_t count = op == Opcode::kBatchNormTraining ? 3 : 5;
  if (absl::Status st = CheckOperands(inst, operands, count); !st.ok()) {
    return st;
  }
  std::vector<int> feature_ops = {1, 2};
  if (op == Opcode::kBatchNormInference) feature_ops = {1, 2, 3, 4};
  if (op == Opcode::kBatchNormGrad) feature_ops = {1, 2, 3};
  absl::StatusOr<BnLayout> l = CheckBatchNorm(inst, operands, feature_ops);
  if (!l.ok()) return l.status();
  const Shape& xs = operands[0]->shape();
  if (op == Opcode::kBatchNormInference) {
    if (!inst.shape().EqualIgnoringLayout(xs)) {
      return Error(inst, "result ", ShapeText(inst.shape()),
                   " must equal the operand ", ShapeText(xs));
    }
  } else if (absl::Status st = CheckBnTupleResult(inst, xs, l->features);
             !st.ok()) {
    return st;
  }
  if (op == Opcode::kBatchNormGrad &&
      !operands[4]->shape().EqualIgnoringLayout(xs)) {
    return Error(inst, "gradient ", ShapeText(operands[4]->shape()),
                 " must match the operand ", ShapeText(xs));
  }
  return DispatchCompute(inst, xs.element_type(), false,
                         [&](auto tag) -> absl::StatusOr<Literal> {
                           using C = typename decltype(tag)::type;
                           if constexpr (std::is_floating_point_v<C>) {
                             if (op == Opcode::kBatchNormTraining) {
                               return BatchNormTraining<C>(inst, operands, *l);
                             }
                             if (op == Opcode::kBatchNormInference) {
                               return BatchNormInference<C>(inst, operands, *l);
                             }
                             return BatchNormGrad<C>(inst, operands, *l);
                           } else {
                             return Error(inst, "complex batch norm");
                           }
                         });
}

}  // namespace

absl::StatusOr<Literal> EvalLinalg(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kCholesky:
      return EvalCholesky(inst, operands);
    case Opcode::kTriangularSolve:
      return EvalTriangularSolve(inst, operands);
    case Opcode::kFft:
      return EvalFft(inst, operands);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return EvalBatchNorm(inst, operands);
    default:
      return Error(inst, "is not a linear-algebra opcode");
  }
}

}  // namespace hlogym
