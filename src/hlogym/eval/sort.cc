// sort and topk. Every slice is sorted as a permutation of positions that is
// then applied to all operands.
//
// sort always uses std::stable_sort: a stable order is also a valid result
// of an unstable sort, and merge sort stays within bounds (and terminates)
// even for comparators that are not strict weak orders, which std::sort
// does not guarantee.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "hlogym/eval/index_util.h"
#include "hlogym/eval/kernels.h"
#include "hlogym/eval/move_util.h"
#include "hlogym/ir/computation.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

using move_internal::CheckArray;
using move_internal::Error;

// ---- Sort keys: element values mapped to numbers whose built-in order is
// the comparison's order.

enum class KeyKind { kFloat, kTotalOrder, kSigned, kUnsigned };

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

uint64_t LoadBits(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, bytes);
  return v;
}

// Values as doubles (exact for every real floating type); NaN stays NaN so
// that < and > behave as the partial-order compare does.
void FloatKeys(PrimitiveType t, const uint8_t* p, int64_t stride, int64_t n,
               double* out) {
  if (t == PrimitiveType::kF32) {
    for (int64_t j = 0; j < n; ++j) out[j] = Load<float>(p + j * stride);
  } else if (t == PrimitiveType::kF64) {
    for (int64_t j = 0; j < n; ++j) out[j] = Load<double>(p + j * stride);
  } else {
    const int bytes = ByteWidth(t);
    for (int64_t j = 0; j < n; ++j) {
      out[j] = BitsToFloat(t, LoadBits(p + j * stride, bytes));
    }
  }
}

// The total order -NaN < -inf < ... < -0 < +0 < ... < inf < NaN: the sign
// and magnitude bits read as a signed number, negatives mirrored.
void TotalOrderKeys(PrimitiveType t, const uint8_t* p, int64_t stride,
                    int64_t n, int64_t* out) {
  const int bits = BitWidth(t);
  const int bytes = ByteWidth(t);
  auto f = SmallFloatFormat(t);
  const bool has_sign = !f.has_value() || f->has_sign;
  const uint64_t mag_mask =
      bits >= 64 ? ~uint64_t{0} >> 1 : (uint64_t{1} << (bits - 1)) - 1;
  for (int64_t j = 0; j < n; ++j) {
    const uint64_t b = LoadBits(p + j * stride, bytes);
    if (!has_sign) {
      out[j] = static_cast<int64_t>(b);
      continue;
    }
    const int64_t mag = static_cast<int64_t>(b & mag_mask);
    out[j] = ((b >> (bits - 1)) & 1) ? -mag - 1 : mag;
  }
}

void SignedKeys(PrimitiveType t, const uint8_t* p, int64_t stride, int64_t n,
                int64_t* out) {
  switch (t) {
    case PrimitiveType::kS8:
      for (int64_t j = 0; j < n; ++j) out[j] = Load<int8_t>(p + j * stride);
      return;
    case PrimitiveType::kS16:
      for (int64_t j = 0; j < n; ++j) out[j] = Load<int16_t>(p + j * stride);
      return;
    case PrimitiveType::kS32:
      for (int64_t j = 0; j < n; ++j) out[j] = Load<int32_t>(p + j * stride);
      return;
    case PrimitiveType::kS64:
      for (int64_t j = 0; j < n; ++j) out[j] = Load<int64_t>(p + j * stride);
      return;
    default: {  // sub-byte: the low bits of a byte
      const int bits = BitWidth(t);
      const int64_t mask = (int64_t{1} << bits) - 1;
      for (int64_t j = 0; j < n; ++j) {
        int64_t v = p[j * stride] & mask;
        if ((v >> (bits - 1)) & 1) v -= int64_t{1} << bits;
        out[j] = v;
      }
    }
  }
}

void UnsignedKeys(PrimitiveType t, const uint8_t* p, int64_t stride, int64_t n,
                  uint64_t* out) {
  const int bits = BitWidth(t);
  const int bytes = ByteWidth(t);
  if (t == PrimitiveType::kPred) {
    for (int64_t j = 0; j < n; ++j) out[j] = p[j * stride] != 0;
    return;
  }
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  for (int64_t j = 0; j < n; ++j) {
    out[j] = LoadBits(p + j * stride, bytes) & mask;
  }
}

// The key kind for comparing `t` with comparison type `ct`, if one exists.
std::optional<KeyKind> KeyKindFor(PrimitiveType t, ComparisonType ct) {
  if (IsFloatingPointType(t)) {
    if (ct == ComparisonType::kDefault || ct == ComparisonType::kFloat) {
      return KeyKind::kFloat;
    }
    if (ct == ComparisonType::kTotalOrder) return KeyKind::kTotalOrder;
    return std::nullopt;
  }
  if (IsSignedIntegralType(t)) {
    if (ct == ComparisonType::kDefault || ct == ComparisonType::kSigned) {
      return KeyKind::kSigned;
    }
    return std::nullopt;
  }
  if (IsUnsignedIntegralType(t) || t == PrimitiveType::kPred) {
    if (ct == ComparisonType::kDefault || ct == ComparisonType::kUnsigned) {
      return KeyKind::kUnsigned;
    }
  }
  return std::nullopt;
}

// Element `j` of `src` goes to position `j` of `dst` from position perm[j];
// positions are base + j * stride (in elements).
template <int W>
void PermuteT(const uint8_t* src, uint8_t* dst, const int64_t* perm, int64_t n,
              int64_t base, int64_t stride) {
  for (int64_t j = 0; j < n; ++j) {
    std::memcpy(dst + (base + j * stride) * W,
                src + (base + perm[j] * stride) * W, W);
  }
}

void Permute(int w, const uint8_t* src, uint8_t* dst, const int64_t* perm,
             int64_t n, int64_t base, int64_t stride) {
  switch (w) {
    case 1:
      return PermuteT<1>(src, dst, perm, n, base, stride);
    case 2:
      return PermuteT<2>(src, dst, perm, n, base, stride);
    case 4:
      return PermuteT<4>(src, dst, perm, n, base, stride);
    case 8:
      return PermuteT<8>(src, dst, perm, n, base, stride);
    default:
      for (int64_t j = 0; j < n; ++j) {
        std::memcpy(dst + (base + j * stride) * w,
                    src + (base + perm[j] * stride) * w, w);
      }
  }
}

template <typename Key>
struct Keyed {
  Key key;
  int64_t index;
};

// Reused buffers of the fast path (one set per sort instruction).
struct SortScratch {
  std::vector<double> fkeys;
  std::vector<int64_t> ikeys;
  std::vector<uint64_t> ukeys;
  std::vector<Keyed<double>> fpairs;
  std::vector<Keyed<int64_t>> ipairs;
  std::vector<Keyed<uint64_t>> upairs;
};

// Sorts positions 0..n-1 of one slice (starting at `p`, byte stride
// `stride`) by their keys into `perm`. Key and position travel together so
// the sort touches contiguous memory; since the pairs start in position
// order, a stable sort on keys alone gives the same permutation as a stable
// sort of positions.
template <typename Key, typename Extract>
void SortByKeys(Extract extract, PrimitiveType t, const uint8_t* p,
                int64_t stride, int64_t n, bool descending,
                std::vector<Key>* keys, std::vector<Keyed<Key>>* pairs,
                std::vector<int64_t>* perm) {
  keys->resize(n);
  extract(t, p, stride, n, keys->data());
  pairs->resize(n);
  for (int64_t j = 0; j < n; ++j) (*pairs)[j] = {(*keys)[j], j};
  if (descending) {
    std::stable_sort(
        pairs->begin(), pairs->end(),
        [](const Keyed<Key>& a, const Keyed<Key>& b) { return a.key > b.key; });
  } else {
    std::stable_sort(
        pairs->begin(), pairs->end(),
        [](const Keyed<Key>& a, const Keyed<Key>& b) { return a.key < b.key; });
  }
  for (int64_t j = 0; j < n; ++j) (*perm)[j] = (*pairs)[j].index;
}

// A comparator that is exactly compare(p[2i], p[2i+1]) (either order) with
// direction LT or GT: sorting by operand i's keys.
struct SimpleComparator {
  int64_t operand = 0;
  bool descending = false;
  KeyKind kind = KeyKind::kFloat;
};

std::optional<SimpleComparator> MatchSimpleComparator(const Computation& c,
                                                      Operands ops) {
  const Instruction* root = c.root_instruction();
  if (root == nullptr || root->opcode() != Opcode::kCompare ||
      root->operand_count() != 2) {
    return std::nullopt;
  }
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter) {
    return std::nullopt;
  }
  const int64_t pa = a->parameter_number(), pb = b->parameter_number();
  if (pa / 2 != pb / 2 || pa == pb) return std::nullopt;
  const int64_t i = pa / 2;
  if (i < 0 || i >= static_cast<int64_t>(ops.size())) return std::nullopt;
  const PrimitiveType t = ops[i]->shape().element_type();
  if (!a->shape().IsScalar() || !b->shape().IsScalar() ||
      a->shape().element_type() != t || b->shape().element_type() != t) {
    return std::nullopt;
  }
  const bool swapped = pa % 2 == 1;
  bool descending;
  switch (root->comparison_direction()) {
    case ComparisonDirection::kLt:
      descending = swapped;
      break;
    case ComparisonDirection::kGt:
      descending = !swapped;
      break;
    default:
      return std::nullopt;
  }
  auto kind = KeyKindFor(t, root->comparison_type());
  if (!kind.has_value()) return std::nullopt;
  return SimpleComparator{i, descending, *kind};
}

void SortSliceFast(const SimpleComparator& sc, const Literal& key_operand,
                   int64_t base, int64_t stride, int64_t n,
                   std::vector<int64_t>* perm, SortScratch* s) {
  const PrimitiveType t = key_operand.shape().element_type();
  const int w = ByteWidth(t);
  const uint8_t* p = key_operand.data() + base * w;
  const int64_t bs = stride * w;
  switch (sc.kind) {
    case KeyKind::kFloat:
      return SortByKeys<double>(FloatKeys, t, p, bs, n, sc.descending,
                                &s->fkeys, &s->fpairs, perm);
    case KeyKind::kTotalOrder:
      return SortByKeys<int64_t>(TotalOrderKeys, t, p, bs, n, sc.descending,
                                 &s->ikeys, &s->ipairs, perm);
    case KeyKind::kSigned:
      return SortByKeys<int64_t>(SignedKeys, t, p, bs, n, sc.descending,
                                 &s->ikeys, &s->ipairs, perm);
    case KeyKind::kUnsigned:
      return SortByKeys<uint64_t>(UnsignedKeys, t, p, bs, n, sc.descending,
                                  &s->ukeys, &s->upairs, perm);
  }
}

}  // namespace

absl::StatusOr<Literal> EvalSort(const Instruction& inst, Operands ops,
                                 KernelContext& ctx) {
  if (ops.empty()) return Error(inst, "expects at least one operand");
  for (size_t i = 0; i < ops.size(); ++i) {
    if (absl::Status s = CheckArray(inst, ops[i], i); !s.ok()) return s;
  }
  const int64_t nops = static_cast<int64_t>(ops.size());
  const DimVector& dims = ops[0]->shape().dimensions();
  for (const Literal* l : ops) {
    if (l->shape().dimensions() != dims) {
      return Error(inst, "operands have different dimensions");
    }
  }
  const Shape& rs = inst.shape();
  std::vector<const Shape*> result_shapes;
  if (rs.IsTuple()) {
    for (const Shape& s : rs.tuple_shapes()) result_shapes.push_back(&s);
  } else {
    result_shapes.push_back(&rs);
  }
  if (static_cast<int64_t>(result_shapes.size()) != nops) {
    return Error(inst, "result does not have one array per operand");
  }
  for (int64_t i = 0; i < nops; ++i) {
    const Shape& s = *result_shapes[i];
    if (!s.IsArray() || s.dimensions() != dims ||
        s.element_type() != ops[i]->shape().element_type()) {
      return Error(inst, StrCat("result ", i, " does not match operand ", i));
    }
  }
  if (inst.dimensions().size() != 1) {
    return Error(inst, "expects exactly one dimension");
  }
  const int64_t d = inst.dimensions(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (d < 0 || d >= rank) {
    return Error(inst, StrCat("dimension ", d, " is out of range"));
  }
  const Computation* cmp = inst.to_apply();
  if (cmp == nullptr) return Error(inst, "has no comparator");
  if (cmp->num_parameters() != 2 * nops) {
    return Error(inst, StrCat("comparator takes ", cmp->num_parameters(),
                              " parameters, expected ", 2 * nops));
  }
  const Instruction* croot = cmp->root_instruction();
  if (croot == nullptr ||
      croot->shape().element_type() != PrimitiveType::kPred ||
      !croot->shape().IsScalar()) {
    return Error(inst, "comparator must return a pred scalar");
  }

  std::vector<Literal> results;
  for (int64_t i = 0; i < nops; ++i) results.emplace_back(*result_shapes[i]);
  auto finish = [&]() -> Literal {
    if (!rs.IsTuple()) return std::move(results[0]);
    Literal t(rs);
    *t.mutable_tuple_elements() = std::move(results);
    return t;
  };
  const int64_t total = ops[0]->element_count();
  if (total == 0) return finish();

  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= dims[i];
  for (int64_t i = d + 1; i < rank; ++i) inner *= dims[i];
  const int64_t n = dims[d];

  std::optional<SimpleComparator> simple = MatchSimpleComparator(*cmp, ops);
  ScalarFunction* fn = nullptr;
  if (!simple.has_value()) {
    auto f = ctx.GetScalarFunction(cmp);
    if (!f.ok()) return f.status();
    fn = *f;
  }
  std::vector<int> widths(nops);
  for (int64_t i = 0; i < nops; ++i) {
    widths[i] = ByteWidth(ops[i]->shape().element_type());
  }
  std::vector<int64_t> perm(n);
  SortScratch scratch;
  std::vector<const uint8_t*> args(2 * nops);
  absl::Status error;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * n * inner + in;
      std::iota(perm.begin(), perm.end(), 0);
      if (simple.has_value()) {
        SortSliceFast(*simple, *ops[simple->operand], base, inner, n, &perm,
                      &scratch);
      } else {
        // Errors cannot leave std::stable_sort: the first one is kept and
        // every later comparison answers false.
        auto less = [&](int64_t a, int64_t b) -> bool {
          if (!error.ok()) return false;
          for (int64_t i = 0; i < nops; ++i) {
            const uint8_t* data = ops[i]->data();
            args[2 * i] = data + (base + a * inner) * widths[i];
            args[2 * i + 1] = data + (base + b * inner) * widths[i];
          }
          uint8_t r = 0;
          uint8_t* rp = &r;
          error = fn->Call(args.data(), &rp);
          return error.ok() && r != 0;
        };
        std::stable_sort(perm.begin(), perm.end(), less);
        if (!error.ok()) return error;
      }
      for (int64_t i = 0; i < nops; ++i) {
        Permute(widths[i], ops[i]->data(), results[i].mutable_data(),
                perm.data(), n, base, inner);
      }
    }
  }
  return finish();
}

absl::StatusOr<Literal> EvalTopK(const Instruction& inst, Operands ops,
                                 KernelContext& ctx) {
  (void)ctx;  // topk's order is fixed by `largest`
  if (ops.size() != 1) {
    return Error(inst, StrCat("expects 1 operand, got ", ops.size()));
  }
  if (absl::Status s = CheckArray(inst, ops[0], 0); !s.ok()) return s;
  const Literal& in = *ops[0];
  const Shape& is = in.shape();
  const PrimitiveType t = is.element_type();
  if (is.rank() < 1) return Error(inst, "operand must have rank >= 1");
  const int64_t k = inst.attrs().k;
  const int64_t n = is.dimensions(is.rank() - 1);
  if (k < 0 || k > n) {
    return Error(inst, StrCat("k=", k,
                              " is out of range for a last dimension "
                              "of size ",
                              n));
  }
  const Shape& rs = inst.shape();
  DimVector rdims = is.dimensions();
  rdims.back() = k;
  if (!rs.IsTuple() || rs.tuple_shapes_size() != 2 ||
      !rs.tuple_shapes(0).IsArray() || !rs.tuple_shapes(1).IsArray() ||
      rs.tuple_shapes(0).dimensions() != rdims ||
      rs.tuple_shapes(1).dimensions() != rdims ||
      rs.tuple_shapes(0).element_type() != t ||
      !IsIntegralType(rs.tuple_shapes(1).element_type())) {
    return Error(inst,
                 "result must be (values, indices) of the operand's "
                 "type and s32 with the last dimension k");
  }
  std::optional<KeyKind> kind;
  if (IsFloatingPointType(t)) {
    kind = KeyKind::kTotalOrder;
  } else {
    kind = KeyKindFor(t, ComparisonType::kDefault);
  }
  if (!kind.has_value()) {
    return Error(
        inst, StrCat("cannot order elements of type ", PrimitiveTypeName(t)));
  }
  Literal values(rs.tuple_shapes(0));
  Literal indices(rs.tuple_shapes(1));
  const int w = ByteWidth(t);
  const int64_t rows = n == 0 ? 0 : in.element_count() / n;
  const bool largest = inst.attrs().largest;
  std::vector<int64_t> perm(n);
  std::vector<int64_t> ikeys;
  std::vector<uint64_t> ukeys;
  // Ties keep the lower index first, as a stable sort would.
  auto select = [&](const auto* keys) {
    auto before = [&](int64_t a, int64_t b) {
      if (keys[a] != keys[b]) {
        return largest ? keys[a] > keys[b] : keys[a] < keys[b];
      }
      return a < b;
    };
    std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), before);
  };
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = in.data() + r * n * w;
    std::iota(perm.begin(), perm.end(), 0);
    switch (*kind) {
      case KeyKind::kTotalOrder:
        ikeys.resize(n);
        TotalOrderKeys(t, row, w, n, ikeys.data());
        select(ikeys.data());
        break;
      case KeyKind::kSigned:
        ikeys.resize(n);
        SignedKeys(t, row, w, n, ikeys.data());
        select(ikeys.data());
        break;
      default:
        ukeys.resize(n);
        UnsignedKeys(t, row, w, n, ukeys.data());
        select(ukeys.data());
        break;
    }
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(values.mutable_data() + (r * k + j) * w, row + perm[j] * w,
                  w);
      indices.SetFromInt64(r * k + j, perm[j]);
    }
  }
  Literal out(rs);
  (*out.mutable_tuple_elements())[0] = std::move(values);
  (*out.mutable_tuple_elements())[1] = std::move(indices);
  return out;
}

}  // namespace hlogym
