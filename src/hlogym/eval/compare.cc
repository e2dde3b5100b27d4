#include "hlogym/eval/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

std::string IndexText(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i) s += ",";
    StrAppend(&s, index[i]);
  }
  return s + "]";
}

void RecordFirst(const Literal& a, const Literal& b, int64_t flat,
                 BufferComparison* r) {
  if (r->mismatches != 1) return;  // called after counting the mismatch
  const DimVector& dims = b.shape().dimensions();
  r->first_mismatch.assign(dims.size(), 0);
  int64_t rest = flat;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    r->first_mismatch[d] = dims[d] == 0 ? 0 : rest % dims[d];
    rest = dims[d] == 0 ? 0 : rest / dims[d];
  }
  a.AppendElement(flat, &r->first_a);
  b.AppendElement(flat, &r->first_b);
}

// Compares `parts` reals per element; get(lit, k) reads real number k.
template <typename Get>
void CompareFloats(const Literal& a, const Literal& b, int parts, Get get,
                   BufferComparison* r) {
  const double rtol = r->tolerance.rtol, atol = r->tolerance.atol;
  const int64_t n = b.element_count();
  for (int64_t e = 0; e < n; ++e) {
    bool bad = false, nan_bad = false, inf_bad = false;
    for (int p = 0; p < parts; ++p) {
      const double x = get(a, e * parts + p), y = get(b, e * parts + p);
      if (std::isnan(x) || std::isnan(y)) {
        if (!(std::isnan(x) && std::isnan(y))) nan_bad = true;
        continue;
      }
      if (std::isinf(x) || std::isinf(y)) {
        if (x != y) inf_bad = true;
        continue;
      }
      const double d = std::fabs(x - y);
      if (d > r->max_abs_error) r->max_abs_error = d;
      if (y != 0) {
        const double rel = d / std::fabs(y);
        if (rel > r->max_rel_error) r->max_rel_error = rel;
      }
      if (!(d <= atol + rtol * std::fabs(y))) bad = true;
    }
    if (bad || nan_bad || inf_bad) {
      ++r->mismatches;
      if (nan_bad) ++r->nan_mismatches;
      if (inf_bad) ++r->inf_mismatches;
      RecordFirst(a, b, e, r);
    }
  }
}

void CompareExact(const Literal& a, const Literal& b, BufferComparison* r) {
  const PrimitiveType t = b.shape().element_type();
  const int64_t n = b.element_count();
  const int w = ByteWidth(t);
  const bool is_signed = IsSignedIntegralType(t);
  const bool is_int = IsIntegralType(t);
  for (int64_t e = 0; e < n; ++e) {
    if (std::memcmp(a.data() + e * w, b.data() + e * w, w) == 0) continue;
    double d = 0, y = 0;
    if (t == PrimitiveType::kPred) {
      // Non-canonical pred bytes (not 0/1) are still equal as booleans.
      if ((a.data()[e] != 0) == (b.data()[e] != 0)) continue;
      d = 1;
      y = b.data()[e] != 0;
    } else if (is_signed) {
      const int64_t x = a.GetAsInt64(e), v = b.GetAsInt64(e);
      if (x == v) continue;
      d = std::fabs(static_cast<double>(x) - static_cast<double>(v));
      y = static_cast<double>(v);
    } else if (is_int) {
      const uint64_t x = a.GetAsUint64(e), v = b.GetAsUint64(e);
      if (x == v) continue;
      d = x > v ? static_cast<double>(x - v) : static_cast<double>(v - x);
      y = static_cast<double>(v);
    }
    if (d > r->max_abs_error) r->max_abs_error = d;
    if (y != 0 && d / std::fabs(y) > r->max_rel_error) {
      r->max_rel_error = d / std::fabs(y);
    }
    ++r->mismatches;
    RecordFirst(a, b, e, r);
  }
}

void CompareArrays(const Literal& a, const Literal& b,
                   const CompareOptions& options, BufferComparison* r) {
  const PrimitiveType t = b.shape().element_type();
  r->elements = b.element_count();
  if (t == PrimitiveType::kPred || IsIntegralType(t)) {
    r->exact = true;
    CompareExact(a, b, r);
    return;
  }
  Tolerance tol = DefaultTolerance(t);
  if (options.computed_in) {
    const Tolerance c = DefaultTolerance(*options.computed_in);
    tol.rtol = std::max(tol.rtol, c.rtol);
    tol.atol = std::max(tol.atol, c.atol);
  }
  if (options.rtol) tol.rtol = *options.rtol;
  if (options.atol) tol.atol = *options.atol;
  r->tolerance = tol;
  switch (t) {
    case PrimitiveType::kF32:
    case PrimitiveType::kC64:
      CompareFloats(
          a, b, t == PrimitiveType::kC64 ? 2 : 1,
          [](const Literal& l, int64_t k) {
            float f;
            std::memcpy(&f, l.data() + k * 4, 4);
            return static_cast<double>(f);
          },
          r);
      return;
    case PrimitiveType::kF64:
    case PrimitiveType::kC128:
      CompareFloats(
          a, b, t == PrimitiveType::kC128 ? 2 : 1,
          [](const Literal& l, int64_t k) {
            double f;
            std::memcpy(&f, l.data() + k * 8, 8);
            return f;
          },
          r);
      return;
    default:
      CompareFloats(
          a, b, 1, [](const Literal& l, int64_t k) { return l.GetAsDouble(k); },
          r);
  }
}

struct Walker {
  const CompareOptions& options;
  CompareReport* report;
  int64_t next_leaf = 0;

  void Walk(const Literal& a, const Literal& b, std::vector<int64_t>* index) {
    const Shape& sa = a.shape();
    const Shape& sb = b.shape();
    if (sa.IsToken() && sb.IsToken()) return;
    if (sa.IsTuple() && sb.IsTuple() &&
        a.tuple_elements().size() == b.tuple_elements().size()) {
      for (size_t i = 0; i < b.tuple_elements().size(); ++i) {
        index->push_back(static_cast<int64_t>(i));
        Walk(a.tuple_elements()[i], b.tuple_elements()[i], index);
        index->pop_back();
      }
      return;
    }
    BufferComparison r;
    r.name = sb.IsArray() ? StrCat("out", next_leaf++) : "";
    r.index = *index;
    r.a_shape = sa;
    r.b_shape = sb;
    r.a_shape.clear_layout();
    r.b_shape.clear_layout();
    if (!sa.IsArray() || !sb.IsArray()) {
      r.structure_error = StrCat("structure differs: a is ", sa.ToString(false),
                                 ", b is ", sb.ToString(false));
    } else if (sa.element_type() != sb.element_type()) {
      r.structure_error =
          StrCat("element types differ: a is ", sa.ToString(false), ", b is ",
                 sb.ToString(false));
    } else if (sa.dimensions() != sb.dimensions()) {
      r.structure_error = StrCat("dimensions differ: a is ", sa.ToString(false),
                                 ", b is ", sb.ToString(false));
    } else if (a.is_unknown() || b.is_unknown()) {
      r.structure_error = "contents unknown ({...})";
    } else {
      CompareArrays(a, b, options, &r);
    }
    if (!r.ok()) report->ok = false;
    report->buffers.push_back(std::move(r));
  }
};

}  // namespace

namespace {

int MantissaBits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF64:
      return 52;
    case PrimitiveType::kF32:
      return 23;
    default: {
      std::optional<FloatFormat> f = SmallFloatFormat(t);
      return f ? f->mantissa_bits : 64;
    }
  }
}

void LeastPrecise(const Shape& shape, std::optional<PrimitiveType>* least) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) LeastPrecise(s, least);
    return;
  }
  const PrimitiveType t = ComplexComponentType(shape.element_type());
  if (!IsFloatingPointType(t)) return;
  if (!*least || MantissaBits(t) < MantissaBits(**least)) *least = t;
}

}  // namespace

std::optional<PrimitiveType> LeastPreciseFloatType(const Module& module) {
  std::optional<PrimitiveType> least;
  for (const auto& c : module.computations()) {
    c->ForEachInstruction(
        [&](const Instruction* i) { LeastPrecise(i->shape(), &least); });
  }
  return least;
}

Tolerance DefaultTolerance(PrimitiveType type) {
  const PrimitiveType t = ComplexComponentType(type);
  switch (t) {
    case PrimitiveType::kF64:
      return {1e-9, 1e-9};
    case PrimitiveType::kF32:
      return {1e-5, 1e-5};
    case PrimitiveType::kF16:
      return {1e-2, 1e-2};
    case PrimitiveType::kBF16:
      return {5e-2, 5e-2};
    default:
      break;
  }
  if (IsFloatingPointType(t)) {
    const double tol = std::ldexp(1.0, 1 - SmallFloatFormat(t)->mantissa_bits);
    return {tol, tol};
  }
  return {0, 0};
}

CompareReport Compare(const Literal& a, const Literal& b,
                      const CompareOptions& options) {
  CompareReport report;
  Walker w{options, &report};
  std::vector<int64_t> index;
  w.Walk(a, b, &index);
  return report;
}

std::string CompareReport::ToString() const {
  std::string s;
  int64_t bad = 0;
  for (const BufferComparison& r : buffers) {
    if (!r.ok()) ++bad;
    std::string label = r.name.empty() ? "value" : r.name;
    if (!r.index.empty()) {
      label += " {";
      for (size_t i = 0; i < r.index.size(); ++i) {
        if (i) label += ",";
        StrAppend(&label, r.index[i]);
      }
      label += "}";
    }
    s += label;
    if (!r.structure_error.empty()) {
      StrAppend(&s, ": MISMATCH, ", r.structure_error, "\n");
      continue;
    }
    StrAppend(&s, " ", r.b_shape.ToString(false), ": ",
              r.ok() ? "ok" : "MISMATCH");
    if (r.mismatches > 0) {
      StrAppend(&s, ", ", r.mismatches, " of ", r.elements, " elements differ");
      if (r.nan_mismatches > 0) {
        StrAppend(&s, " (", r.nan_mismatches, " NaN vs number)");
      }
      if (r.inf_mismatches > 0) {
        StrAppend(&s, " (", r.inf_mismatches, " infinity mismatches)");
      }
      StrAppend(&s, ", first at ", IndexText(r.first_mismatch),
                ": a=", r.first_a, " b=", r.first_b);
    } else {
      StrAppend(&s, " (", r.elements, " elements)");
    }
    if (r.exact) {
      if (r.mismatches > 0) {
        StrAppend(&s, "; max abs error ", Num(r.max_abs_error));
      }
      s += "; exact\n";
    } else {
      StrAppend(&s, "; max abs error ", Num(r.max_abs_error),
                ", max rel error ", Num(r.max_rel_error), "; rtol ",
                Num(r.tolerance.rtol), ", atol ", Num(r.tolerance.atol), "\n");
    }
  }
  StrAppend(&s, ok ? "MATCH" : "MISMATCH", ": ",
            static_cast<int64_t>(buffers.size()), " buffers, ", bad,
            " mismatching\n");
  return s;
}

}  // namespace hlogym
