// Data movement kernels: every opcode here only rearranges elements, so they
// are written once, type-agnostically, on top of one strided copy engine
// that moves whole elements of 1, 2, 4, 8 or 16 bytes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "hlogym/eval/index_util.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/eval/move_util.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace move_internal {

namespace {

struct CopyPlan {
  DimVector dims;
  DimVector src;
  DimVector dst;
};

// Drops size-1 dimensions and merges neighbours that are contiguous in both
// source and destination, so most copies become a few long runs. Returns
// false when there is nothing to copy.
bool Simplify(const DimVector& dims, const DimVector& src, const DimVector& dst,
              CopyPlan* p) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0) return false;
    if (dims[i] == 1) continue;
    if (!p->dims.empty()) {
      size_t j = p->dims.size() - 1;
      if (p->src[j] == src[i] * dims[i] && p->dst[j] == dst[i] * dims[i]) {
        p->dims[j] *= dims[i];
        p->src[j] = src[i];
        p->dst[j] = dst[i];
        continue;
      }
    }
    p->dims.push_back(dims[i]);
    p->src.push_back(src[i]);
    p->dst.push_back(dst[i]);
  }
  return true;
}

template <int W>
inline void CopyElem(const uint8_t* s, uint8_t* d) {
  std::memcpy(d, s, W);
}

// One row: n elements, strides in elements.
template <int W>
void CopyRow(const uint8_t* s, uint8_t* d, int64_t n, int64_t ss, int64_t ds) {
  if (ss == 1 && ds == 1) {
    if (n > 0) std::memcpy(d, s, static_cast<size_t>(n) * W);
  } else if (ss == 0) {
    for (int64_t i = 0; i < n; ++i) CopyElem<W>(s, d + i * ds * W);
  } else {
    for (int64_t i = 0; i < n; ++i) CopyElem<W>(s + i * ss * W, d + i * ds * W);
  }
}

// Transposing block: dimension a is contiguous in the source, dimension b
// in the destination. Square tiles keep both sides in cache.
template <int W>
void CopyTile(const uint8_t* s, uint8_t* d, int64_t na, int64_t nb, int64_t sb,
              int64_t da) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < na; i0 += kTile) {
    const int64_t ie = std::min(na, i0 + kTile);
    for (int64_t j0 = 0; j0 < nb; j0 += kTile) {
      const int64_t je = std::min(nb, j0 + kTile);
      for (int64_t i = i0; i < ie; ++i) {
        uint8_t* drow = d + i * da * W;
        const uint8_t* scol = s + i * W;
        for (int64_t j = j0; j < je; ++j) {
          CopyElem<W>(scol + j * sb * W, drow + j * W);
        }
      }
    }
  }
}

template <int W>
void RunPlan(const uint8_t* src, uint8_t* dst, const CopyPlan& p) {
  const int64_t r = static_cast<int64_t>(p.dims.size());
  if (r == 0) {
    CopyElem<W>(src, dst);
    return;
  }
  const int64_t in = r - 1;
  const int64_t n = p.dims[in], ss = p.src[in], ds = p.dst[in];
  int64_t k = -1;  // source-contiguous dimension for a tiled transpose
  if (ds == 1 && ss != 1 && ss != 0) {
    for (int64_t j = 0; j < in; ++j) {
      if (p.src[j] == 1) {
        k = j;
        break;
      }
    }
  }
  DimVector odims, osrc, odst;
  for (int64_t j = 0; j < in; ++j) {
    if (j == k) continue;
    odims.push_back(p.dims[j]);
    osrc.push_back(p.src[j]);
    odst.push_back(p.dst[j]);
  }
  int64_t outer = 1;
  for (int64_t d : odims) outer *= d;
  DimVector idx(odims.size(), 0);
  int64_t so = 0, dof = 0;
  const int64_t no = static_cast<int64_t>(odims.size());
  for (int64_t it = 0; it < outer; ++it) {
    if (k >= 0) {
      CopyTile<W>(src + so * W, dst + dof * W, p.dims[k], n, ss, p.dst[k]);
    } else {
      CopyRow<W>(src + so * W, dst + dof * W, n, ss, ds);
    }
    for (int64_t j = no - 1; j >= 0; --j) {
      so += osrc[j];
      dof += odst[j];
      if (++idx[j] < odims[j]) break;
      so -= osrc[j] * odims[j];
      dof -= odst[j] * odims[j];
      idx[j] = 0;
    }
  }
}

}  // namespace

void StridedCopy(int width, const uint8_t* src, uint8_t* dst,
                 const DimVector& dims, const DimVector& src_strides,
                 const DimVector& dst_strides) {
  CopyPlan p;
  if (!Simplify(dims, src_strides, dst_strides, &p)) return;
  switch (width) {
    case 1:
      return RunPlan<1>(src, dst, p);
    case 2:
      return RunPlan<2>(src, dst, p);
    case 4:
      return RunPlan<4>(src, dst, p);
    case 8:
      return RunPlan<8>(src, dst, p);
    case 16:
      return RunPlan<16>(src, dst, p);
    default: {
      // No element type has another width; kept correct regardless.
      DimVector idx(p.dims.size(), 0);
      do {
        std::memcpy(dst + LinearIndex(p.dst, idx) * width,
                    src + LinearIndex(p.src, idx) * width, width);
      } while (NextIndex(p.dims, &idx));
    }
  }
}

}  // namespace move_internal

namespace {

using move_internal::StridedCopy;

absl::Status Error(const Instruction& inst, const std::string& msg) {
  return absl::InvalidArgumentError(
      StrCat("%", inst.name(), ": ", OpcodeName(inst.opcode()), " ", msg));
}

// Operand i must be an array literal whose data matches its shape.
absl::Status CheckArray(const Instruction& inst, Operands ops, int64_t i) {
  if (i >= static_cast<int64_t>(ops.size()) || ops[i] == nullptr) {
    return Error(inst, StrCat("is missing operand ", i));
  }
  const Literal& l = *ops[i];
  if (!l.shape().IsArray()) {
    return Error(inst, StrCat("operand ", i, " is not an array"));
  }
  if (l.is_unknown()) {
    return Error(inst, StrCat("operand ", i, " has unknown contents"));
  }
  for (int64_t d : l.shape().dimensions()) {
    if (d < 0) return Error(inst, StrCat("operand ", i, " has no static size"));
  }
  const int64_t n = l.shape().ElementsIn();
  if (n == std::numeric_limits<int64_t>::max() ||
      l.size_bytes() !=
          static_cast<size_t>(n) * ByteWidth(l.shape().element_type())) {
    return Error(inst,
                 StrCat("operand ", i, "'s data does not match its shape ",
                        l.shape().ToString(false)));
  }
  return absl::OkStatus();
}

absl::Status CheckOperandCount(const Instruction& inst, Operands ops,
                               size_t n) {
  if (ops.size() != n) {
    return Error(inst, StrCat("expects ", n, " operands, got ", ops.size()));
  }
  for (size_t i = 0; i < n; ++i) {
    if (absl::Status s = CheckArray(inst, ops, i); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// A zero-filled result of the instruction's (array) shape.
absl::StatusOr<Literal> MakeResult(const Instruction& inst) {
  const Shape& s = inst.shape();
  if (!s.IsArray()) return Error(inst, "result is not an array");
  for (int64_t d : s.dimensions()) {
    if (d < 0) return Error(inst, "result has no static size");
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(s.ElementsIn(), ByteWidth(s.element_type()),
                             &bytes) ||
      s.ElementsIn() == std::numeric_limits<int64_t>::max()) {
    return Error(inst, "result is too large");
  }
  return Literal(s);
}

absl::Status CheckSameType(const Instruction& inst, const Literal& operand) {
  if (operand.shape().element_type() != inst.shape().element_type()) {
    return Error(inst, StrCat("operand type ", operand.shape().ToString(false),
                              " differs from result type ",
                              inst.shape().ToString(false)));
  }
  return absl::OkStatus();
}

// An integer scalar used as an index; unsigned values beyond int64 saturate
// (every use clamps anyway).
absl::StatusOr<int64_t> ScalarIndex(const Instruction& inst, const Literal& l,
                                    int64_t operand) {
  const PrimitiveType t = l.shape().element_type();
  if (!IsIntegralType(t) || l.element_count() != 1) {
    return Error(inst,
                 StrCat("operand ", operand, " must be an integer scalar, got ",
                        l.shape().ToString(false)));
  }
  if (IsUnsignedIntegralType(t)) {
    uint64_t u = l.GetAsUint64(0);
    return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(u);
  }
  return l.GetAsInt64(0);
}

// Copies a whole array literal into a result of another (same-size) shape.
absl::StatusOr<Literal> CopyData(const Instruction& inst, const Literal& in) {
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  if (out->size_bytes() != in.size_bytes()) {
    return Error(
        inst, StrCat("cannot produce ", inst.shape().ToString(false), " from ",
                     in.shape().ToString(false), ": element counts differ"));
  }
  if (in.size_bytes() > 0) {
    std::memcpy(out->mutable_data(), in.data(), in.size_bytes());
  }
  return out;
}

int Width(const Literal& l) { return ByteWidth(l.shape().element_type()); }

// ---------------------------------------------------------------------------

absl::StatusOr<Literal> Broadcast(const Instruction& inst, Operands ops) {
  if (absl::Status s = CheckOperandCount(inst, ops, 1); !s.ok()) return s;
  const Literal& in = *ops[0];
  if (absl::Status s = CheckSameType(inst, in); !s.ok()) return s;
  const DimVector& od = in.shape().dimensions();
  const DimVector& rd = inst.shape().dimensions();
  const DimVector& map = inst.dimensions();
  if (map.size() != od.size()) {
    return Error(
        inst, StrCat("has ", map.size(), " dimensions for an operand of rank ",
                     od.size()));
  }
  DimVector istrides = RowMajorStrides(od);
  DimVector src(rd.size(), 0);
  std::vector<bool> used(rd.size(), false);
  for (size_t i = 0; i < map.size(); ++i) {
    const int64_t d = map[i];
    if (d < 0 || d >= static_cast<int64_t>(rd.size()) || used[d]) {
      return Error(inst, StrCat("has an invalid dimensions entry ", d));
    }
    used[d] = true;
    if (od[i] != rd[d] && od[i] != 1) {
      return Error(inst, StrCat("operand dimension ", i, " (size ", od[i],
                                ") does not match result dimension ", d,
                                " (size ", rd[d], ")"));
    }
    src[d] = od[i] == 1 ? 0 : istrides[i];
  }
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  StridedCopy(Width(in), in.data(), out->mutable_data(), rd, src,
              RowMajorStrides(rd));
  return out;
}

absl::StatusOr<Literal> Reshape(const Instruction& inst, Operands ops) {
  if (ops.empty()) return Error(inst, "expects an operand");
  if (absl::Status s = CheckArray(inst, ops, 0); !s.ok()) return s;
  if (inst.opcode() == Opcode::kReshape && ops.size() != 1) {
    return Error(inst, StrCat("expects 1 operand, got ", ops.size()));
  }
  if (absl::Status s = CheckSameType(inst, *ops[0]); !s.ok()) return s;
  return CopyData(inst, *ops[0]);
}

// The physical order of a shape's dimensions, most major first. Shapes
// without a layout (or with an empty one) use the default row-major order.
absl::StatusOr<DimVector> MajorToMinor(const Instruction& inst,
                                       const Shape& s) {
  const int64_t r = s.rank();
  DimVector m2m(r);
  for (int64_t i = 0; i < r; ++i) m2m[i] = i;
  if (!s.has_layout() || s.layout().minor_to_major.empty()) return m2m;
  const DimVector& mtm = s.layout().minor_to_major;
  if (static_cast<int64_t>(mtm.size()) != r) {
    return Error(inst,
                 StrCat("layout of ", s.ToString(), " has the wrong rank"));
  }
  std::vector<bool> seen(r, false);
  for (int64_t i = 0; i < r; ++i) {
    const int64_t d = mtm[r - 1 - i];
    if (d < 0 || d >= r || seen[d]) {
      return Error(inst,
                   StrCat("layout of ", s.ToString(), " is not a permutation"));
    }
    seen[d] = true;
    m2m[i] = d;
  }
  return m2m;
}

bool IsIdentity(const DimVector& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Logical array -> its physical buffer order (or back with `to_physical`
// false), for the dimension order `m2m`.
void PhysicalCopy(int width, const uint8_t* src, uint8_t* dst,
                  const DimVector& dims, const DimVector& m2m,
                  bool to_physical) {
  DimVector logical = RowMajorStrides(dims);
  DimVector pdims(dims.size()), pstrides(dims.size());
  for (size_t j = 0; j < dims.size(); ++j) {
    pdims[j] = dims[m2m[j]];
    pstrides[j] = logical[m2m[j]];
  }
  DimVector contiguous = RowMajorStrides(pdims);
  if (to_physical) {
    StridedCopy(width, src, dst, pdims, pstrides, contiguous);
  } else {
    StridedCopy(width, src, dst, pdims, contiguous, pstrides);
  }
}

absl::StatusOr<Literal> Bitcast(const Instruction& inst, Operands ops) {
  if (absl::Status s = CheckOperandCount(inst, ops, 1); !s.ok()) return s;
  const Literal& in = *ops[0];
  const Shape& is = in.shape();
  // A value does not always carry the layout its producer declares (entry
  // arguments, for one); the operand instruction's shape is authoritative.
  const Shape* os = &is;
  if (inst.operand_count() == 1 && inst.operand(0)->shape().IsArray() &&
      inst.operand(0)->shape().dimensions() == is.dimensions()) {
    os = &inst.operand(0)->shape();
  }
  const Shape& rs = inst.shape();
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  const PrimitiveType it = is.element_type(), rt = rs.element_type();
  const int iw = ByteWidth(it), rw = ByteWidth(rt);
  if (in.size_bytes() != out->size_bytes()) {
    return Error(
        inst, StrCat("cannot reinterpret ", is.ToString(false), " (",
                     in.size_bytes(), " bytes) as ", rs.ToString(false), " (",
                     out->size_bytes(), " bytes)"));
  }
  if (iw != rw && (BitWidth(it) < 8 || BitWidth(rt) < 8)) {
    return Error(inst, "cannot reinterpret sub-byte elements as another width");
  }
  auto om = MajorToMinor(inst, *os);
  if (!om.ok()) return om.status();
  auto rm = MajorToMinor(inst, rs);
  if (!rm.ok()) return rm.status();
  const bool in_default = IsIdentity(*om), out_default = IsIdentity(*rm);
  if (in.size_bytes() > 0) {
    // Physical bytes of the operand, then read back in the result's order.
    std::vector<uint8_t> tmp;
    const uint8_t* phys = in.data();
    uint8_t* res = out->mutable_data();
    if (!in_default) {
      uint8_t* target = res;
      if (!out_default) {
        tmp.resize(in.size_bytes());
        target = tmp.data();
      }
      PhysicalCopy(iw, in.data(), target, is.dimensions(), *om, true);
      phys = target;
    }
    if (!out_default) {
      PhysicalCopy(rw, phys, res, rs.dimensions(), *rm, false);
    } else if (phys != res) {
      if (in.size_bytes() > 0) std::memcpy(res, phys, in.size_bytes());
    }
  }
  // Sub-byte integers are kept in whole bytes (signed ones sign-extended):
  // re-encode the bits for the result type.
  if (it != rt && BitWidth(rt) < 8 && IsIntegralType(rt)) {
    const int bits = BitWidth(rt);
    const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
    uint8_t* p = out->mutable_data();
    for (size_t i = 0; i < out->size_bytes(); ++i) {
      uint8_t v = p[i] & mask;
      if (IsSignedIntegralType(rt) && ((v >> (bits - 1)) & 1u)) {
        v = static_cast<uint8_t>(v | ~mask);
      }
      p[i] = v;
    }
  }
  return out;
}

absl::StatusOr<Literal> Transpose(const Instruction& inst, Operands ops) {
  if (absl::Status s = CheckOperandCount(inst, ops, 1); !s.ok()) return s;
  const Literal& in = *ops[0];
  if (absl::Status s = CheckSameType(inst, in); !s.ok()) return s;
  const DimVector& od = in.shape().dimensions();
  const DimVector& rd = inst.shape().dimensions();
  const DimVector& perm = inst.dimensions();
  if (perm.size() != od.size() || rd.size() != od.size()) {
    return Error(inst, "permutation, operand and result ranks differ");
  }
  DimVector istrides = RowMajorStrides(od);
  DimVector src(rd.size());
  std::vector<bool> seen(od.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t p = perm[i];
    if (p < 0 || p >= static_cast<int64_t>(od.size()) || seen[p]) {
      return Error(inst, "dimensions is not a permutation");
    }
    seen[p] = true;
    if (od[p] != rd[i]) {
      return Error(inst,
                   StrCat("result dimension ", i, " has size ", rd[i],
                          ", operand dimension ", p, " has size ", od[p]));
    }
    src[i] = istrides[p];
  }
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  StridedCopy(Width(in), in.data(), out->mutable_data(), rd, src,
              RowMajorStrides(rd));
  return out;
}

absl::StatusOr<Literal> Copy(const Instruction& inst, Operands ops) {
  if (absl::Status s = CheckOperandCount(inst, ops, 1); !s.ok()) return s;
  if (absl::Status s = CheckSameType(inst, *ops[0]); !s.ok()) return s;
  if (ops[0]->shape().dimensions() != inst.shape().dimensions()) {
    return Error(inst, "operand and result dimensions differ");
  }
  return CopyData(inst, *ops[0]);
}

absl::StatusOr<Literal> Slice(const Instruction& inst, Operands ops) {
  if (absl::Status s = CheckOperandCount(inst, ops, 1); !s.ok()) return s;
  const Literal& in = *ops[0];
  if (absl::Status s = CheckSameType(inst, in); !s.ok()) return s;
  const DimVector& od = in.shape().dimensions();
  const DimVector& rd = inst.shape().dimensions();
  const auto& sl = inst.attrs().slice;
  if (sl.size() != od.size() || rd.size() != od.size()) {
    return Error(inst, "slice, operand and result ranks differ");
  }
  DimVector istrides = RowMajorStrides(od);
  DimVector src(od.size());
  int64_t base = 0;
  for (size_t i = 0; i < od.size(); ++i) {
    const SliceDimension& d = sl[i];
    if (d.start < 0 || d.start > d.limit || d.limit > od[i] || d.stride < 1) {
      return Error(
          inst, StrCat("slice [", d.start, ":", d.limit, ":", d.stride,
                       "] is invalid for dimension ", i, " of size ", od[i]));
    }
    const int64_t n = (d.limit - d.start + d.stride - 1) / d.stride;
    if (n != rd[i]) {
      return Error(inst, StrCat("result dimension ", i, " should be ", n));
    }
    base += d.start * istrides[i];
    src[i] = istrides[i] * d.stride;
  }
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  if (out->element_count() == 0) return out;
  const int w = Width(in);
  StridedCopy(w, in.data() + base * w, out->mutable_data(), rd, src,
              RowMajorStrides(rd));
  return out;
}

// Start indices of dynamic-slice / dynamic-update-slice, clamped so that a
// window of `sizes` fits in `dims`. Accepts one scalar per dimension or the
// older single index vector.
absl::StatusOr<DimVector> DynamicStarts(const Instruction& inst, Operands ops,
                                        int64_t first, const DimVector& dims,
                                        const DimVector& sizes) {
  const int64_t r = static_cast<int64_t>(dims.size());
  const int64_t nidx = static_cast<int64_t>(ops.size()) - first;
  DimVector starts(r, 0);
  for (int64_t i = first; i < static_cast<int64_t>(ops.size()); ++i) {
    if (absl::Status s = CheckArray(inst, ops, i); !s.ok()) return s;
  }
  if (nidx == 1 && ops[first]->shape().rank() == 1 &&
      ops[first]->shape().dimensions(0) == r) {
    const Literal& l = *ops[first];
    if (!IsIntegralType(l.shape().element_type())) {
      return Error(inst, "start indices must be integers");
    }
    for (int64_t i = 0; i < r; ++i) {
      if (IsUnsignedIntegralType(l.shape().element_type())) {
        uint64_t u = l.GetAsUint64(i);
        starts[i] = u > static_cast<uint64_t>(dims[i])
                        ? dims[i]
                        : static_cast<int64_t>(u);
      } else {
        starts[i] = l.GetAsInt64(i);
      }
    }
  } else {
    if (nidx != r) {
      return Error(inst, StrCat("expects ", r, " start indices, got ", nidx));
    }
    for (int64_t i = 0; i < r; ++i) {
      auto v = ScalarIndex(inst, *ops[first + i], first + i);
      if (!v.ok()) return v.status();
      starts[i] = *v;
    }
  }
  for (int64_t i = 0; i < r; ++i) {
    if (sizes[i] < 0 || sizes[i] > dims[i]) {
      return Error(
          inst, StrCat("window size ", sizes[i], " does not fit dimension ", i,
                       " of size ", dims[i]));
    }
    starts[i] = std::clamp<int64_t>(starts[i], 0, dims[i] - sizes[i]);
  }
  return starts;
}

absl::StatusOr<Literal> DynamicSlice(const Instruction& inst, Operands ops) {
  if (ops.empty()) return Error(inst, "expects operands");
  if (absl::Status s = CheckArray(inst, ops, 0); !s.ok()) return s;
  const Literal& in = *ops[0];
  if (absl::Status s = CheckSameType(inst, in); !s.ok()) return s;
  const DimVector& od = in.shape().dimensions();
  const DimVector& rd = inst.shape().dimensions();
  DimVector sizes = rd;
  const auto& attr = inst.attrs().dynamic_slice_sizes;
  if (!attr.empty()) {
    if (attr.size() != od.size() ||
        !std::equal(attr.begin(), attr.end(), rd.begin(), rd.end())) {
      return Error(inst, "dynamic_slice_sizes does not match the result");
    }
  }
  if (rd.size() != od.size()) {
    return Error(inst, "operand and result ranks differ");
  }
  auto starts = DynamicStarts(inst, ops, 1, od, sizes);
  if (!starts.ok()) return starts.status();
  DimVector istrides = RowMajorStrides(od);
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  if (out->element_count() == 0) return out;
  const int w = Width(in);
  StridedCopy(w, in.data() + LinearIndex(istrides, *starts) * w,
              out->mutable_data(), rd, istrides, RowMajorStrides(rd));
  return out;
}

absl::StatusOr<Literal> DynamicUpdateSlice(const Instruction& inst,
                                           Operands ops) {
  if (ops.size() < 2) return Error(inst, "expects at least 2 operands");
  if (absl::Status s = CheckArray(inst, ops, 0); !s.ok()) return s;
  if (absl::Status s = CheckArray(inst, ops, 1); !s.ok()) return s;
  const Literal& in = *ops[0];
  const Literal& upd = *ops[1];
  if (absl::Status s = CheckSameType(inst, in); !s.ok()) return s;
  if (absl::Status s = CheckSameType(inst, upd); !s.ok()) return s;
  const DimVector& od = in.shape().dimensions();
  const DimVector& ud = upd.shape().dimensions();
  if (ud.size() != od.size() || inst.shape().dimensions() != od) {
    return Error(inst, "operand, update and result shapes disagree");
  }
  auto starts = DynamicStarts(inst, ops, 2, od, ud);
  if (!starts.ok()) return starts.status();
  auto out = CopyData(inst, in);
  if (!out.ok()) return out.status();
  if (upd.element_count() == 0) return out;
  DimVector ostrides = RowMajorStrides(od);
  const int w = Width(in);
  StridedCopy(w, upd.data(),
              out->mutable_data() + LinearIndex(ostrides, *starts) * w, ud,
              RowMajorStrides(ud), ostrides);
  return out;
}

absl::StatusOr<Literal> Concatenate(const Instruction& inst, Operands ops) {
  if (ops.empty()) return Error(inst, "expects operands");
  if (absl::Status s = CheckOperandCount(inst, ops, ops.size()); !s.ok()) {
    return s;
  }
  if (inst.dimensions().size() != 1) {
    return Error(inst, "expects exactly one dimension");
  }
  const DimVector& rd = inst.shape().dimensions();
  const int64_t cd = inst.dimensions(0);
  if (cd < 0 || cd >= static_cast<int64_t>(rd.size())) {
    return Error(inst, StrCat("dimension ", cd, " is out of range"));
  }
  int64_t total = 0;
  for (const Literal* l : ops) {
    if (absl::Status s = CheckSameType(inst, *l); !s.ok()) return s;
    const DimVector& d = l->shape().dimensions();
    if (d.size() != rd.size()) return Error(inst, "operand ranks differ");
    for (size_t i = 0; i < d.size(); ++i) {
      if (static_cast<int64_t>(i) != cd && d[i] != rd[i]) {
        return Error(inst,
                     StrCat("operand ", l->shape().ToString(false),
                            " does not match the result in dimension ", i));
      }
    }
    total += d[cd];
  }
  if (total != rd[cd]) {
    return Error(inst, "operand sizes do not add up to the result");
  }
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  DimVector ostrides = RowMajorStrides(rd);
  const int w = ByteWidth(inst.shape().element_type());
  int64_t offset = 0;
  for (const Literal* l : ops) {
    const DimVector& d = l->shape().dimensions();
    StridedCopy(w, l->data(), out->mutable_data() + offset * ostrides[cd] * w,
                d, RowMajorStrides(d), ostrides);
    offset += d[cd];
  }
  return out;
}

// Fills every element of `out` with the element at `value`.
void Fill(int w, const uint8_t* value, Literal* out) {
  const int64_t n = out->element_count();
  StridedCopy(w, value, out->mutable_data(), DimVector{n}, DimVector{0},
              DimVector{1});
}

absl::StatusOr<Literal> Pad(const Instruction& inst, Operands ops) {
  if (absl::Status s = CheckOperandCount(inst, ops, 2); !s.ok()) return s;
  const Literal& in = *ops[0];
  const Literal& pv = *ops[1];
  if (absl::Status s = CheckSameType(inst, in); !s.ok()) return s;
  if (absl::Status s = CheckSameType(inst, pv); !s.ok()) return s;
  if (pv.element_count() != 1 || pv.shape().rank() != 0) {
    return Error(inst, "padding value must be a scalar");
  }
  const DimVector& od = in.shape().dimensions();
  const DimVector& rd = inst.shape().dimensions();
  const PaddingConfig& pc = inst.attrs().padding;
  if (pc.size() != od.size() || rd.size() != od.size()) {
    return Error(inst, "padding, operand and result ranks differ");
  }
  DimVector istrides = RowMajorStrides(od), ostrides = RowMajorStrides(rd);
  DimVector counts(od.size()), src(od.size()), dst(od.size());
  int64_t src_base = 0, dst_base = 0;
  bool any = true;
  for (size_t i = 0; i < od.size(); ++i) {
    const PaddingDimension& p = pc[i];
    if (p.interior < 0) return Error(inst, "interior padding is negative");
    const int64_t n = od[i];
    const int64_t step = p.interior + 1;
    const int64_t expect =
        p.low + p.high + (n > 0 ? n + (n - 1) * p.interior : 0);
    if (expect != rd[i]) {
      return Error(inst, StrCat("result dimension ", i, " should be ", expect));
    }
    // Operand elements i land at low + i * step; keep those inside.
    int64_t first = p.low >= 0 ? 0 : (-p.low + step - 1) / step;
    int64_t last = n - 1;  // inclusive
    if (n > 0 && p.low + last * step >= rd[i]) {
      last = rd[i] - 1 - p.low < 0 ? -1 : (rd[i] - 1 - p.low) / step;
    }
    counts[i] = std::max<int64_t>(0, last - first + 1);
    if (counts[i] == 0) any = false;
    src_base += first * istrides[i];
    dst_base += (p.low + first * step) * ostrides[i];
    src[i] = istrides[i];
    dst[i] = ostrides[i] * step;
  }
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  const int w = Width(in);
  Fill(w, pv.data(), &*out);
  if (any) {
    StridedCopy(w, in.data() + src_base * w, out->mutable_data() + dst_base * w,
                counts, src, dst);
  }
  return out;
}

absl::StatusOr<Literal> Reverse(const Instruction& inst, Operands ops) {
  if (absl::Status s = CheckOperandCount(inst, ops, 1); !s.ok()) return s;
  const Literal& in = *ops[0];
  if (absl::Status s = CheckSameType(inst, in); !s.ok()) return s;
  const DimVector& od = in.shape().dimensions();
  if (inst.shape().dimensions() != od) {
    return Error(inst, "operand and result dimensions differ");
  }
  DimVector src = RowMajorStrides(od);
  DimVector dst = src;
  int64_t base = 0;
  std::vector<bool> seen(od.size(), false);
  for (int64_t d : inst.dimensions()) {
    if (d < 0 || d >= static_cast<int64_t>(od.size()) || seen[d]) {
      return Error(inst, StrCat("has an invalid dimension ", d));
    }
    seen[d] = true;
    if (od[d] > 0) base += (od[d] - 1) * src[d];
    src[d] = -src[d];
  }
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  const int w = Width(in);
  if (in.element_count() > 0) {
    StridedCopy(w, in.data() + base * w, out->mutable_data(), od, src, dst);
  }
  return out;
}

absl::StatusOr<Literal> Iota(const Instruction& inst, Operands ops) {
  if (!ops.empty()) return Error(inst, "takes no operands");
  const Shape& s = inst.shape();
  const int64_t d = inst.iota_dimension();
  if (!s.IsArray() || d < 0 || d >= s.rank()) {
    return Error(inst, StrCat("iota_dimension ", d, " is out of range"));
  }
  const PrimitiveType t = s.element_type();
  const int64_t n = s.dimensions(d);
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  Literal row(Shape(t, DimVector{n}));
  for (int64_t i = 0; i < n; ++i) {
    if (IsComplexType(t)) {
      row.SetComplex(i, {static_cast<double>(i), 0.0});
    } else if (IsFloatingPointType(t)) {
      row.SetFromDouble(i, static_cast<double>(i));
    } else {
      row.SetFromInt64(i, i);
    }
  }
  DimVector src(s.rank(), 0);
  src[d] = 1;
  StridedCopy(ByteWidth(t), row.data(), out->mutable_data(), s.dimensions(),
              src, RowMajorStrides(s.dimensions()));
  return out;
}

absl::StatusOr<Literal> GetDimensionSize(const Instruction& inst,
                                         Operands ops) {
  if (ops.size() != 1 || ops[0] == nullptr || !ops[0]->shape().IsArray()) {
    return Error(inst, "expects one array operand");
  }
  if (inst.dimensions().size() != 1) {
    return Error(inst, "expects exactly one dimension");
  }
  const int64_t d = inst.dimensions(0);
  const Shape& os = ops[0]->shape();
  if (d < 0 || d >= os.rank()) {
    return Error(inst, StrCat("dimension ", d, " is out of range"));
  }
  if (!IsIntegralType(inst.shape().element_type()) ||
      inst.shape().rank() != 0) {
    return Error(inst, "result must be an integer scalar");
  }
  auto out = MakeResult(inst);
  if (!out.ok()) return out.status();
  out->SetFromInt64(0, os.dimensions(d));
  return out;
}

absl::StatusOr<Literal> SetDimensionSize(const Instruction& inst,
                                         Operands ops) {
  if (absl::Status s = CheckOperandCount(inst, ops, 2); !s.ok()) return s;
  if (absl::Status s = CheckSameType(inst, *ops[0]); !s.ok()) return s;
  if (ops[0]->shape().dimensions() != inst.shape().dimensions()) {
    return Error(inst, "operand and result bounds differ");
  }
  if (auto v = ScalarIndex(inst, *ops[1], 1); !v.ok()) return v.status();
  return CopyData(inst, *ops[0]);
}

}  // namespace

absl::StatusOr<Literal> EvalDataMovement(const Instruction& inst,
                                         Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kBroadcast:
      return Broadcast(inst, operands);
    case Opcode::kReshape:
    case Opcode::kDynamicReshape:
      return Reshape(inst, operands);
    case Opcode::kBitcast:
      return Bitcast(inst, operands);
    case Opcode::kTranspose:
      return Transpose(inst, operands);
    case Opcode::kCopy:
      return Copy(inst, operands);
    case Opcode::kSlice:
      return Slice(inst, operands);
    case Opcode::kDynamicSlice:
      return DynamicSlice(inst, operands);
    case Opcode::kDynamicUpdateSlice:
      return DynamicUpdateSlice(inst, operands);
    case Opcode::kConcatenate:
      return Concatenate(inst, operands);
    case Opcode::kPad:
      return Pad(inst, operands);
    case Opcode::kReverse:
      return Reverse(inst, operands);
    case Opcode::kIota:
      return Iota(inst, operands);
    case Opcode::kGetDimensionSize:
      return GetDimensionSize(inst, operands);
    case Opcode::kSetDimensionSize:
      return SetDimensionSize(inst, operands);
    default:
      return Error(inst, "is not a data movement opcode");
  }
}

}  // namespace hlogym
