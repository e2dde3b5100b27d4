// gather and scatter with XLA's full dimension numbers (batching dimensions
// included). Both walk the index array once; each index vector selects a
// window that is copied (gather) or combined into the result (scatter).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "hlogym/eval/index_util.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/eval/move_util.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

using move_internal::StridedCopy;

using move_internal::CheckArray;
using move_internal::Error;

absl::StatusOr<Literal> MakeArray(const Instruction& inst, const Shape& s) {
  if (!s.IsArray()) return Error(inst, "result is not an array");
  for (int64_t d : s.dimensions()) {
    if (d < 0) return Error(inst, "result has no static size");
  }
  int64_t bytes = 0;
  if (s.ElementsIn() == std::numeric_limits<int64_t>::max() ||
      __builtin_mul_overflow(s.ElementsIn(), ByteWidth(s.element_type()),
                             &bytes)) {
    return Error(inst, "result is too large");
  }
  return Literal(s);
}

// Reads one index element; unsigned values beyond int64 saturate (every
// use clamps or bounds-checks).
using IndexReader = int64_t (*)(const uint8_t*);

template <typename T>
int64_t ReadIndex(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::is_same_v<T, uint64_t>) {
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(v);
  }
  return static_cast<int64_t>(v);
}

// Sub-byte integers take a byte each; only the low `Bits` bits count.
template <int Bits, bool Signed>
int64_t ReadSubByte(const uint8_t* p) {
  const uint32_t mask = (1u << Bits) - 1;
  int64_t v = *p & mask;
  if (Signed && (v >> (Bits - 1)) & 1) v -= int64_t{1} << Bits;
  return v;
}

IndexReader GetIndexReader(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kS8:
      return ReadIndex<int8_t>;
    case PrimitiveType::kS16:
      return ReadIndex<int16_t>;
    case PrimitiveType::kS32:
      return ReadIndex<int32_t>;
    case PrimitiveType::kS64:
      return ReadIndex<int64_t>;
    case PrimitiveType::kU8:
      return ReadIndex<uint8_t>;
    case PrimitiveType::kU16:
      return ReadIndex<uint16_t>;
    case PrimitiveType::kU32:
      return ReadIndex<uint32_t>;
    case PrimitiveType::kU64:
      return ReadIndex<uint64_t>;
    case PrimitiveType::kS4:
      return ReadSubByte<4, true>;
    case PrimitiveType::kS2:
      return ReadSubByte<2, true>;
    case PrimitiveType::kS1:
      return ReadSubByte<1, true>;
    case PrimitiveType::kU4:
      return ReadSubByte<4, false>;
    case PrimitiveType::kU2:
      return ReadSubByte<2, false>;
    case PrimitiveType::kU1:
      return ReadSubByte<1, false>;
    default:
      return nullptr;
  }
}

// Checks a list of dimension numbers: each in [0, rank), no repeats.
bool ValidDims(const std::vector<int64_t>& dims, int64_t rank,
               std::vector<bool>* used) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || (*used)[d]) return false;
    (*used)[d] = true;
  }
  return true;
}

// The index array seen as a batch of index vectors: the dimensions other
// than index_vector_dim, and where each vector's components are.
struct IndexBatch {
  DimVector dims;     // sizes of the batch dimensions
  DimVector strides;  // element strides of those in the index array
  std::vector<int64_t> index_dims;  // the index array's dimension numbers
  int64_t vector_size = 1;
  int64_t vector_stride = 0;
};

absl::StatusOr<IndexBatch> MakeIndexBatch(const Instruction& inst,
                                          const Shape& indices,
                                          int64_t index_vector_dim) {
  const int64_t r = indices.rank();
  if (index_vector_dim < 0 || index_vector_dim > r) {
    return Error(inst, StrCat("index_vector_dim ", index_vector_dim,
                              " is out of range for indices of rank ", r));
  }
  IndexBatch b;
  DimVector strides = RowMajorStrides(indices.dimensions());
  for (int64_t d = 0; d < r; ++d) {
    if (d == index_vector_dim) {
      b.vector_size = indices.dimensions(d);
      b.vector_stride = strides[d];
      continue;
    }
    b.dims.push_back(indices.dimensions(d));
    b.strides.push_back(strides[d]);
    b.index_dims.push_back(d);
  }
  return b;
}

// Position of index-array dimension `d` among the batch dimensions.
int64_t BatchPosition(const IndexBatch& b, int64_t d) {
  auto it = std::find(b.index_dims.begin(), b.index_dims.end(), d);
  return it == b.index_dims.end() ? -1 : it - b.index_dims.begin();
}

}  // namespace

// ---------------------------------------------------------------------------
// gather

absl::StatusOr<Literal> EvalGather(const Instruction& inst, Operands ops) {
  if (ops.size() != 2) {
    return Error(inst, StrCat("expects 2 operands, got ", ops.size()));
  }
  for (int64_t i = 0; i < 2; ++i) {
    if (absl::Status s = CheckArray(inst, ops[i], i); !s.ok()) return s;
  }
  const auto& dn_opt = inst.attrs().gather_dnums;
  if (!dn_opt.has_value()) return Error(inst, "has no dimension numbers");
  const GatherDimensionNumbers& dn = *dn_opt;
  const std::vector<int64_t>& slice = inst.attrs().gather_slice_sizes;
  const Literal& operand = *ops[0];
  const Literal& indices = *ops[1];
  const Shape& os = operand.shape();
  const Shape& rs = inst.shape();
  const int64_t orank = os.rank();
  IndexReader read = GetIndexReader(indices.shape().element_type());
  if (read == nullptr) return Error(inst, "start indices must be integers");
  if (rs.element_type() != os.element_type() || !rs.IsArray()) {
    return Error(inst, "result type differs from the operand type");
  }
  auto batch_or = MakeIndexBatch(inst, indices.shape(), dn.index_vector_dim);
  if (!batch_or.ok()) return batch_or.status();
  const IndexBatch& batch = *batch_or;
  if (static_cast<int64_t>(dn.start_index_map.size()) != batch.vector_size) {
    return Error(
        inst, StrCat("start_index_map has ", dn.start_index_map.size(),
                     " entries for index vectors of size ", batch.vector_size));
  }
  if (static_cast<int64_t>(slice.size()) != orank) {
    return Error(inst, "slice_sizes does not match the operand rank");
  }
  for (int64_t d = 0; d < orank; ++d) {
    if (slice[d] < 0 || slice[d] > os.dimensions(d)) {
      return Error(inst, StrCat("slice size ", slice[d], " of dimension ", d,
                                " exceeds the operand"));
    }
  }
  std::vector<bool> removed(orank, false);
  if (!ValidDims(dn.collapsed_slice_dims, orank, &removed) ||
      !ValidDims(dn.operand_batching_dims, orank, &removed)) {
    return Error(inst, "collapsed_slice_dims/operand_batching_dims invalid");
  }
  for (int64_t d : dn.collapsed_slice_dims) {
    if (slice[d] > 1) return Error(inst, "collapsed dimension has size > 1");
  }
  for (int64_t d : dn.operand_batching_dims) {
    if (slice[d] != 1) return Error(inst, "batching dimension has size != 1");
  }
  {
    std::vector<bool> used(orank, false);
    if (!ValidDims(dn.start_index_map, orank, &used)) {
      return Error(inst, "start_index_map is invalid");
    }
    for (int64_t d : dn.operand_batching_dims) {
      if (used[d]) return Error(inst, "start_index_map names a batching dim");
    }
  }
  if (dn.start_indices_batching_dims.size() !=
      dn.operand_batching_dims.size()) {
    return Error(inst, "batching dimension lists differ in length");
  }
  std::vector<int64_t> batch_pos;  // per operand batching dim
  for (size_t j = 0; j < dn.start_indices_batching_dims.size(); ++j) {
    int64_t p = BatchPosition(batch, dn.start_indices_batching_dims[j]);
    if (p < 0 || os.dimensions(dn.operand_batching_dims[j]) != batch.dims[p]) {
      return Error(inst, "start_indices_batching_dims is invalid");
    }
    batch_pos.push_back(p);
  }
  // Offset dimensions of the result take the operand's kept dimensions in
  // order; the other result dimensions are the batch dimensions.
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < orank; ++d) {
    if (!removed[d]) kept.push_back(d);
  }
  const int64_t rrank = rs.rank();
  if (dn.offset_dims.size() != kept.size() ||
      rrank != static_cast<int64_t>(kept.size() + batch.dims.size())) {
    return Error(inst, "result rank does not match the dimension numbers");
  }
  std::vector<bool> is_offset(rrank, false);
  for (size_t k = 0; k < dn.offset_dims.size(); ++k) {
    const int64_t d = dn.offset_dims[k];
    if (d < 0 || d >= rrank || is_offset[d] ||
        (k > 0 && d <= dn.offset_dims[k - 1])) {
      return Error(inst, "offset_dims is invalid");
    }
    is_offset[d] = true;
  }
  const DimVector ostr = RowMajorStrides(os.dimensions());
  const DimVector rstr = RowMajorStrides(rs.dimensions());
  DimVector win_dims, win_src, win_dst;
  for (size_t k = 0; k < kept.size(); ++k) {
    const int64_t rd = dn.offset_dims[k];
    if (rs.dimensions(rd) != slice[kept[k]]) {
      return Error(
          inst, StrCat("result dimension ", rd, " should be ", slice[kept[k]]));
    }
    win_dims.push_back(slice[kept[k]]);
    win_src.push_back(ostr[kept[k]]);
    win_dst.push_back(rstr[rd]);
  }
  DimVector batch_dst;  // result strides of the batch dimensions
  {
    size_t j = 0;
    for (int64_t d = 0; d < rrank; ++d) {
      if (is_offset[d]) continue;
      if (rs.dimensions(d) != batch.dims[j]) {
        return Error(
            inst, StrCat("result dimension ", d, " should be ", batch.dims[j]));
      }
      batch_dst.push_back(rstr[d]);
      ++j;
    }
  }

  auto out = MakeArray(inst, rs);
  if (!out.ok()) return out.status();
  if (out->element_count() == 0) return out;
  // An empty slice (a collapsed dimension of size 0) reads nothing: the
  // result stays zero rather than reading outside the operand.
  for (int64_t d = 0; d < orank; ++d) {
    if (slice[d] == 0) return out;
  }
  const int w = ByteWidth(os.element_type());
  const int iw = ByteWidth(indices.shape().element_type());
  int64_t window_elems = 1;
  for (int64_t d : win_dims) window_elems *= d;
  const uint8_t* in = operand.data();
  const uint8_t* idx = indices.data();
  uint8_t* res = out->mutable_data();
  DimVector g(batch.dims.size(), 0);
  DimVector start(orank, 0);
  do {
    const int64_t ioff = LinearIndex(batch.strides, g);
    for (size_t k = 0; k < dn.start_index_map.size(); ++k) {
      const int64_t d = dn.start_index_map[k];
      const int64_t v = read(idx + (ioff + k * batch.vector_stride) * iw);
      start[d] = std::clamp<int64_t>(v, 0, os.dimensions(d) - slice[d]);
    }
    for (size_t j = 0; j < batch_pos.size(); ++j) {
      start[dn.operand_batching_dims[j]] = g[batch_pos[j]];
    }
    const uint8_t* src = in + LinearIndex(ostr, start) * w;
    uint8_t* dst = res + LinearIndex(batch_dst, g) * w;
    if (window_elems == 1) {
      std::memcpy(dst, src, w);
    } else {
      StridedCopy(w, src, dst, win_dims, win_src, win_dst);
    }
  } while (NextIndex(batch.dims, &g));
  return out;
}

// ---------------------------------------------------------------------------
// scatter

namespace {

// A window walked as runs along its innermost (merged) dimension.
struct WindowPlan {
  DimVector dims;
  DimVector a;  // strides in the operand/result
  DimVector b;  // strides in the updates
};

WindowPlan SimplifyWindow(const DimVector& dims, const DimVector& a,
                          const DimVector& b) {
  WindowPlan p;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!p.dims.empty()) {
      size_t j = p.dims.size() - 1;
      if (p.a[j] == a[i] * dims[i] && p.b[j] == b[i] * dims[i]) {
        p.dims[j] *= dims[i];
        p.a[j] = a[i];
        p.b[j] = b[i];
        continue;
      }
    }
    p.dims.push_back(dims[i]);
    p.a.push_back(a[i]);
    p.b.push_back(b[i]);
  }
  if (p.dims.empty()) {
    p.dims.push_back(1);
    p.a.push_back(1);
    p.b.push_back(1);
  }
  return p;
}

// Calls f(a_offset, b_offset, run_length, a_stride, b_stride) for each run,
// in row-major order of the window.
template <typename F>
absl::Status ForEachRun(const WindowPlan& p, int64_t a0, int64_t b0, F&& f) {
  const int64_t r = static_cast<int64_t>(p.dims.size());
  const int64_t in = r - 1;
  DimVector idx(r, 0);
  int64_t ao = a0, bo = b0;
  while (true) {
    if (absl::Status s = f(ao, bo, p.dims[in], p.a[in], p.b[in]); !s.ok()) {
      return s;
    }
    int64_t j = in - 1;
    for (; j >= 0; --j) {
      ao += p.a[j];
      bo += p.b[j];
      if (++idx[j] < p.dims[j]) break;
      ao -= p.a[j] * p.dims[j];
      bo -= p.b[j] * p.dims[j];
      idx[j] = 0;
    }
    if (j < 0) return absl::OkStatus();
  }
}

// What a combiner does, when it is simple enough to skip calling it.
enum class Combiner { kGeneral, kAssign, kKeep, kBinary };

Combiner ClassifyCombiner(const Computation& c, int64_t n) {
  const Instruction* root = c.root_instruction();
  if (root == nullptr || c.num_parameters() != 2 * n) {
    return Combiner::kGeneral;
  }
  auto is_param = [](const Instruction* i, int64_t k) {
    return i->opcode() == Opcode::kParameter && i->parameter_number() == k;
  };
  if (n == 1) {
    if (is_param(root, 1)) return Combiner::kAssign;
    if (is_param(root, 0)) return Combiner::kKeep;
    return Combiner::kGeneral;
  }
  if (root->opcode() != Opcode::kTuple || root->operand_count() != n) {
    return Combiner::kGeneral;
  }
  bool assign = true, keep = true;
  for (int64_t i = 0; i < n; ++i) {
    assign = assign && is_param(root->operand(i), n + i);
    keep = keep && is_param(root->operand(i), i);
  }
  return assign ? Combiner::kAssign
                : (keep ? Combiner::kKeep : Combiner::kGeneral);
}

}  // namespace

absl::StatusOr<Literal> EvalScatter(const Instruction& inst, Operands ops,
                                    KernelContext& ctx) {
  if (ops.size() < 3 || ops.size() % 2 == 0) {
    return Error(inst, StrCat("expects 2N+1 operands, got ", ops.size()));
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (absl::Status s = CheckArray(inst, ops[i], i); !s.ok()) return s;
  }
  const int64_t n = static_cast<int64_t>(ops.size() - 1) / 2;
  const auto& dn_opt = inst.attrs().scatter_dnums;
  if (!dn_opt.has_value()) return Error(inst, "has no dimension numbers");
  const ScatterDimensionNumbers& dn = *dn_opt;
  const Computation* combiner = inst.to_apply();
  if (combiner == nullptr) return Error(inst, "has no to_apply computation");
  const Literal& indices = *ops[n];
  const Shape& os = ops[0]->shape();
  const Shape& us = ops[n + 1]->shape();
  for (int64_t i = 0; i < n; ++i) {
    const Shape& oi = ops[i]->shape();
    const Shape& ui = ops[n + 1 + i]->shape();
    if (oi.dimensions() != os.dimensions() ||
        ui.dimensions() != us.dimensions() ||
        oi.element_type() != ui.element_type()) {
      return Error(inst, StrCat("operand/update pair ", i,
                                " does not match the others"));
    }
  }
  // Result shape: an array for one operand, else a tuple of N arrays.
  const Shape& rs = inst.shape();
  std::vector<const Shape*> result_shapes;
  if (rs.IsTuple()) {
    for (const Shape& s : rs.tuple_shapes()) result_shapes.push_back(&s);
  } else {
    result_shapes.push_back(&rs);
  }
  if (static_cast<int64_t>(result_shapes.size()) != n) {
    return Error(inst, "result does not have one array per operand");
  }
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = *result_shapes[i];
    if (!s.IsArray() || s.dimensions() != os.dimensions() ||
        s.element_type() != ops[i]->shape().element_type()) {
      return Error(inst, StrCat("result ", i, " does not match operand ", i));
    }
  }
  IndexReader read = GetIndexReader(indices.shape().element_type());
  if (read == nullptr) return Error(inst, "scatter indices must be integers");
  auto batch_or = MakeIndexBatch(inst, indices.shape(), dn.index_vector_dim);
  if (!batch_or.ok()) return batch_or.status();
  const IndexBatch& batch = *batch_or;
  const int64_t orank = os.rank(), urank = us.rank();
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) !=
      batch.vector_size) {
    return Error(inst,
                 "scatter_dims_to_operand_dims does not match the "
                 "index vector size");
  }
  std::vector<bool> removed(orank, false);
  if (!ValidDims(dn.inserted_window_dims, orank, &removed) ||
      !ValidDims(dn.input_batching_dims, orank, &removed)) {
    return Error(inst, "inserted_window_dims/input_batching_dims invalid");
  }
  {
    std::vector<bool> used(orank, false);
    if (!ValidDims(dn.scatter_dims_to_operand_dims, orank, &used)) {
      return Error(inst, "scatter_dims_to_operand_dims is invalid");
    }
    for (int64_t d : dn.input_batching_dims) {
      if (used[d]) {
        return Error(inst,
                     "scatter_dims_to_operand_dims names a batching "
                     "dimension");
      }
    }
  }
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < orank; ++d) {
    if (!removed[d]) window_operand_dims.push_back(d);
  }
  if (dn.update_window_dims.size() != window_operand_dims.size() ||
      urank != static_cast<int64_t>(dn.update_window_dims.size() +
                                    batch.dims.size())) {
    return Error(inst, "updates rank does not match the dimension numbers");
  }
  std::vector<bool> is_window(urank, false);
  for (size_t k = 0; k < dn.update_window_dims.size(); ++k) {
    const int64_t d = dn.update_window_dims[k];
    if (d < 0 || d >= urank || is_window[d] ||
        (k > 0 && d <= dn.update_window_dims[k - 1])) {
      return Error(inst, "update_window_dims is invalid");
    }
    is_window[d] = true;
  }
  if (dn.scatter_indices_batching_dims.size() !=
      dn.input_batching_dims.size()) {
    return Error(inst, "batching dimension lists differ in length");
  }
  std::vector<int64_t> batch_pos;
  for (size_t j = 0; j < dn.scatter_indices_batching_dims.size(); ++j) {
    int64_t p = BatchPosition(batch, dn.scatter_indices_batching_dims[j]);
    if (p < 0 || os.dimensions(dn.input_batching_dims[j]) != batch.dims[p]) {
      return Error(inst, "scatter_indices_batching_dims is invalid");
    }
    batch_pos.push_back(p);
  }
  const DimVector ostr = RowMajorStrides(os.dimensions());
  const DimVector ustr = RowMajorStrides(us.dimensions());
  DimVector win_dims, win_o, win_u;
  DimVector window_size(orank, 1);  // per operand dimension
  for (size_t k = 0; k < window_operand_dims.size(); ++k) {
    const int64_t od = window_operand_dims[k];
    const int64_t ud = dn.update_window_dims[k];
    if (us.dimensions(ud) > os.dimensions(od)) {
      return Error(inst, StrCat("update window dimension ", ud,
                                " is larger than operand dimension ", od));
    }
    window_size[od] = us.dimensions(ud);
    win_dims.push_back(us.dimensions(ud));
    win_o.push_back(ostr[od]);
    win_u.push_back(ustr[ud]);
  }
  DimVector scatter_u;  // update strides of the scatter (batch) dimensions
  {
    size_t j = 0;
    for (int64_t d = 0; d < urank; ++d) {
      if (is_window[d]) continue;
      if (us.dimensions(d) != batch.dims[j]) {
        return Error(inst, StrCat("updates dimension ", d, " should be ",
                                  batch.dims[j]));
      }
      scatter_u.push_back(ustr[d]);
      ++j;
    }
  }

  // Results start as copies of the operands.
  std::vector<Literal> results;
  results.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    auto r = MakeArray(inst, *result_shapes[i]);
    if (!r.ok()) return r.status();
    if (r->size_bytes() > 0) {
      std::memcpy(r->mutable_data(), ops[i]->data(), r->size_bytes());
    }
    results.push_back(std::move(*r));
  }
  auto finish = [&]() -> Literal {
    if (!rs.IsTuple()) return std::move(results[0]);
    Literal t(rs);
    *t.mutable_tuple_elements() = std::move(results);
    return t;
  };

  Combiner kind = ClassifyCombiner(*combiner, n);
  int64_t window_elems = 1;
  for (int64_t d : win_dims) window_elems *= d;
  int64_t batch_elems = 1;
  for (int64_t d : batch.dims) batch_elems *= d;
  if (kind == Combiner::kKeep || window_elems == 0 || batch_elems == 0) {
    return finish();
  }
  ScalarFunction* fn = nullptr;
  std::optional<Opcode> binary;
  const PrimitiveType type = os.element_type();
  if (kind != Combiner::kAssign) {
    auto f = ctx.GetScalarFunction(combiner);
    if (!f.ok()) return f.status();
    fn = *f;
    if (n == 1 &&
        combiner->root_instruction()->shape().element_type() == type) {
      binary = fn->binary_opcode();
      if (binary.has_value()) kind = Combiner::kBinary;
    }
  }
  const WindowPlan plan = SimplifyWindow(win_dims, win_o, win_u);
  std::vector<int> widths(n);
  std::vector<const uint8_t*> upd(n);
  std::vector<uint8_t*> res(n);
  for (int64_t i = 0; i < n; ++i) {
    widths[i] = ByteWidth(ops[i]->shape().element_type());
    upd[i] = ops[n + 1 + i]->data();
    res[i] = results[i].mutable_data();
  }
  // Scratch for the general path: arguments and results of one call.
  std::vector<const uint8_t*> args(2 * n);
  std::vector<uint8_t*> outs(n);
  std::vector<std::array<uint8_t, 16>> tmp(n);
  for (int64_t i = 0; i < n; ++i) outs[i] = tmp[i].data();

  const int iw = ByteWidth(indices.shape().element_type());
  const uint8_t* idx = indices.data();
  DimVector g(batch.dims.size(), 0);
  DimVector start(orank, 0);
  do {
    const int64_t ioff = LinearIndex(batch.strides, g);
    for (size_t k = 0; k < dn.scatter_dims_to_operand_dims.size(); ++k) {
      start[dn.scatter_dims_to_operand_dims[k]] =
          read(idx + (ioff + k * batch.vector_stride) * iw);
    }
    for (size_t j = 0; j < batch_pos.size(); ++j) {
      start[dn.input_batching_dims[j]] = g[batch_pos[j]];
    }
    // A window that does not fit entirely is skipped.
    bool in_bounds = true;
    for (int64_t d = 0; d < orank; ++d) {
      if (start[d] < 0 || start[d] > os.dimensions(d) - window_size[d]) {
        in_bounds = false;
        break;
      }
    }
    if (!in_bounds) continue;
    const int64_t obase = LinearIndex(ostr, start);
    const int64_t ubase = LinearIndex(scatter_u, g);
    absl::Status st;
    switch (kind) {
      case Combiner::kAssign:
        for (int64_t i = 0; i < n; ++i) {
          const int w = widths[i];
          if (window_elems == 1) {
            std::memcpy(res[i] + obase * w, upd[i] + ubase * w, w);
          } else {
            StridedCopy(w, upd[i] + ubase * w, res[i] + obase * w, win_dims,
                        win_u, win_o);
          }
        }
        break;
      case Combiner::kBinary: {
        const int w = widths[0];
        if (window_elems == 1) {
          uint8_t* r = res[0] + obase * w;
          st = BinaryOpKernel(*binary, type, r, upd[0] + ubase * w, r, 1);
          break;
        }
        st = ForEachRun(
            plan, obase, ubase,
            [&](int64_t ao, int64_t bo, int64_t len, int64_t as,
                int64_t bs) -> absl::Status {
              if (as == 1 && bs == 1) {
                return BinaryOpKernel(*binary, type, res[0] + ao * w,
                                      upd[0] + bo * w, res[0] + ao * w, len);
              }
              for (int64_t e = 0; e < len; ++e) {
                uint8_t* r = res[0] + (ao + e * as) * w;
                absl::Status s = BinaryOpKernel(
                    *binary, type, r, upd[0] + (bo + e * bs) * w, r, 1);
                if (!s.ok()) return s;
              }
              return absl::OkStatus();
            });
        break;
      }
      default:
        st = ForEachRun(
            plan, obase, ubase,
            [&](int64_t ao, int64_t bo, int64_t len, int64_t as,
                int64_t bs) -> absl::Status {
              for (int64_t e = 0; e < len; ++e) {
                const int64_t oo = ao + e * as, uo = bo + e * bs;
                for (int64_t i = 0; i < n; ++i) {
                  args[i] = res[i] + oo * widths[i];
                  args[n + i] = upd[i] + uo * widths[i];
                }
                if (absl::Status s = fn->Call(args.data(), outs.data());
                    !s.ok()) {
                  return s;
                }
                for (int64_t i = 0; i < n; ++i) {
                  std::memcpy(res[i] + oo * widths[i], outs[i], widths[i]);
                }
              }
              return absl::OkStatus();
            });
        break;
    }
    if (!st.ok()) return st;
  } while (NextIndex(batch.dims, &g));
  return finish();
}

}  // namespace hlogym
