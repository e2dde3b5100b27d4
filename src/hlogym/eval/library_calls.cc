#include "hlogym/eval/library_calls.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "hlogym/ir/primitive_type.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

using nlohmann::json;

template <typename... Args>
absl::Status Invalid(const Instruction& inst, const Args&... args) {
  return absl::InvalidArgumentError(StrCat("custom-call %", inst.name(), " (",
                                           inst.attrs().custom_call_target,
                                           "): ", args...));
}

template <typename... Args>
absl::Status Unsupported(const Instruction& inst, const Args&... args) {
  return absl::UnimplementedError(StrCat("custom-call %", inst.name(), " (",
                                         inst.attrs().custom_call_target,
                                         "): ", args...));
}

// ---- JSON helpers. Protobuf's JSON writes 64-bit integers as strings and
// non-finite doubles as "NaN"/"Infinity"; both forms are accepted.

std::optional<double> JsonDouble(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return d;
}

std::optional<int64_t> JsonInt(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return static_cast<int64_t>(x);
}

// `key` of `obj` as a double; `fallback` when absent.
absl::StatusOr<double> ReadDouble(const Instruction& inst, const json& obj,
                                  const char* key, double fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  std::optional<double> d = JsonDouble(*it);
  if (!d) {
    return Invalid(inst, "backend_config field '", key,
                   "' is not a number: ", it->dump());
  }
  return *d;
}

absl::StatusOr<std::vector<int64_t>> ReadIntList(const Instruction& inst,
                                                 const json& obj,
                                                 const char* key) {
  std::vector<int64_t> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (!it->is_array()) {
    return Invalid(inst, "backend_config field '", key,
                   "' is not an array: ", it->dump());
  }
  for (const json& v : *it) {
    std::optional<int64_t> x = JsonInt(v);
    if (!x) {
      return Invalid(inst, "backend_config field '", key,
                     "' holds a non-integer: ", v.dump());
    }
    out.push_back(*x);
  }
  return out;
}

// The object under `wrapper` in the backend config (or the config itself
// when it has `marker` at the top level). nullopt for an empty config.
absl::StatusOr<std::optional<json>> ConfigObject(const Instruction& inst,
                                                 const char* wrapper,
                                                 const char* marker) {
  const std::string& text = inst.backend_config();
  if (text.empty()) return std::optional<json>();
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Invalid(inst, "backend_config is not a JSON object: ", text);
  }
  auto it = j.find(wrapper);
  if (it != j.end()) {
    if (!it->is_object()) {
      return Invalid(inst, "backend_config field '", wrapper,
                     "' is not an object");
    }
    return std::optional<json>(*it);
  }
  if (j.contains(marker)) return std::optional<json>(std::move(j));
  return std::optional<json>();
}

// ---- Results.

// The value shape: element 0 of a tuple result, or the result itself.
absl::StatusOr<Shape> ValueShape(const Instruction& inst) {
  const Shape& s = inst.shape();
  if (s.IsTuple()) {
    if (s.tuple_shapes_size() < 1 || !s.tuple_shapes(0).IsArray()) {
      return Invalid(inst, "result tuple must start with an array, got ",
                     s.ToString(false));
    }
    for (int64_t i = 1; i < s.tuple_shapes_size(); ++i) {
      if (!s.tuple_shapes(i).IsArray()) {
        return Invalid(inst, "workspace element ", i, " is not an array");
      }
    }
    return s.tuple_shapes(0);
  }
  if (!s.IsArray()) {
    return Invalid(inst, "result must be an array or a tuple, got ",
                   s.ToString(false));
  }
  return s;
}

// Wraps the value as the instruction's result (zero workspace elements).
Literal WrapResult(const Instruction& inst, Literal value) {
  if (!inst.shape().IsTuple()) return value;
  Literal out(inst.shape());
  (*out.mutable_tuple_elements())[0] = std::move(value);
  return out;
}

absl::Status CheckArray(const Instruction& inst, const Literal* lit,
                        int64_t index) {
  if (lit == nullptr || !lit->shape().IsArray()) {
    return Invalid(inst, "operand ", index, " must be an array");
  }
  if (lit->is_unknown()) {
    return Invalid(inst, "operand ", index, " has unknown contents");
  }
  return absl::OkStatus();
}

// The result dimension a bias vector runs along: the most minor one.
int64_t MinorDimension(const Shape& s) {
  if (s.has_layout() &&
      static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank() &&
      s.rank() > 0) {
    return s.layout().minor_to_major[0];
  }
  return s.rank() - 1;
}

// Row-major strides of `dims`.
std::vector<int64_t> Strides(const DimVector& dims) {
  std::vector<int64_t> st(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    st[i] = st[i + 1] * dims[i + 1];
  }
  return st;
}

// ---- Activations.

enum class Activation {
  kNone,
  kRelu,
  kRelu6,
  kSigmoid,
  kTanh,
  kElu,
  kLeakyRelu,
  kGelu,
  kSilu
};

double Activate(Activation a, double x, double leaky_alpha) {
  switch (a) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      // Keeps NaN, as maximum(x, 0) does.
      return std::isnan(x) ? x : std::max(x, 0.0);
    case Activation::kRelu6:
      return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0);
    case Activation::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case Activation::kTanh:
      return std::tanh(x);
    case Activation::kElu:
      return x > 0 ? x : std::expm1(x);
    case Activation::kLeakyRelu:
      return x > 0 ? x : leaky_alpha * x;
    case Activation::kGelu: {
      const double k = std::sqrt(2.0 / std::numbers::pi);
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case Activation::kSilu:
      return x / (1.0 + std::exp(-x));
  }
  return x;
}

// ---- The epilogue shared by GEMMs and convolutions:
//   out = act(scale * product + c_scale * c + bias[along bias_dim])

struct Epilogue {
  std::complex<double> scale = 1;
  double c_scale = 0;
  const Literal* c = nullptr;     // same dimensions as the product
  const Literal* bias = nullptr;  // rank 1, along bias_dim
  int64_t bias_dim = 0;
  Activation activation = Activation::kNone;
  double leaky_alpha = 0;

  bool trivial() const {
    return scale == std::complex<double>(1, 0) &&
           (c == nullptr || c_scale == 0) && bias == nullptr &&
           activation == Activation::kNone;
  }
};

absl::StatusOr<Literal> ApplyEpilogue(const Instruction& inst, Literal product,
                                      const Epilogue& e) {
  if (e.trivial()) return product;
  const Shape& shape = product.shape();
  const PrimitiveType type = shape.element_type();
  const int64_t n = product.element_count();
  if (e.c != nullptr && e.c->shape().dimensions() != shape.dimensions()) {
    return Invalid(inst, "addend ", e.c->shape().ToString(false),
                   " does not match the result ", shape.ToString(false));
  }
  int64_t bias_stride = 0, bias_size = 0;
  if (e.bias != nullptr) {
    if (e.bias->shape().rank() != 1 || e.bias_dim < 0 ||
        e.bias_dim >= shape.rank() ||
        e.bias->shape().dimensions(0) != shape.dimensions(e.bias_dim)) {
      return Invalid(inst, "bias ", e.bias->shape().ToString(false),
                     " does not match dimension ", e.bias_dim, " of ",
                     shape.ToString(false));
    }
    bias_stride = Strides(shape.dimensions())[e.bias_dim];
    bias_size = shape.dimensions(e.bias_dim);
  }
  auto bias_at = [&](int64_t i) {
    return e.bias->GetAsDouble((i / bias_stride) % bias_size);
  };
  Literal out(shape);
  if (IsComplexType(type)) {
    if (e.bias != nullptr || e.activation != Activation::kNone) {
      return Unsupported(inst,
                         "bias and activation epilogues are not "
                         "defined for complex results");
    }
    for (int64_t i = 0; i < n; ++i) {
      std::complex<double> v = e.scale * product.GetComplex(i);
      if (e.c != nullptr && e.c_scale != 0) v += e.c_scale * e.c->GetComplex(i);
      out.SetComplex(i, v);
    }
    return out;
  }
  if (e.scale.imag() != 0) {
    return Invalid(inst, "a complex scale needs a complex result");
  }
  const double scale = e.scale.real();
  if (IsIntegralType(type)) {
    // cuBLAS integer GEMMs take integral scales only.
    auto integral = [](double x) { return std::trunc(x) == x; };
    if (!integral(scale) || !integral(e.c_scale) || e.bias != nullptr ||
        e.activation != Activation::kNone) {
      return Unsupported(inst,
                         "integer results take integral alpha/beta "
                         "and no bias or activation");
    }
    const int64_t a = static_cast<int64_t>(scale);
    const int64_t b = static_cast<int64_t>(e.c_scale);
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = a * product.GetAsInt64(i);
      if (e.c != nullptr) v += b * e.c->GetAsInt64(i);
      out.SetFromInt64(i, v);
    }
    return out;
  }
  if (!IsFloatingPointType(type)) {
    return Unsupported(inst, "result type ", PrimitiveTypeName(type),
                       " is not supported");
  }
  for (int64_t i = 0; i < n; ++i) {
    double v = scale * product.GetAsDouble(i);
    if (e.c != nullptr && e.c_scale != 0) v += e.c_scale * e.c->GetAsDouble(i);
    if (e.bias != nullptr) v += bias_at(i);
    out.SetFromDouble(i, Activate(e.activation, v, e.leaky_alpha));
  }
  return out;
}

// ---- GEMMs.

absl::StatusOr<Precision> ParsePrecision(const Instruction& inst,
                                         const json& v) {
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s == "DEFAULT") return Precision::kDefault;
    if (s == "HIGH") return Precision::kHigh;
    if (s == "HIGHEST") return Precision::kHighest;
    if (s == "PACKED_NIBBLE") return Precision::kPackedNibble;
  } else if (v.is_number_integer()) {
    int64_t x = v.get<int64_t>();
    if (x >= 0 && x <= 3) return static_cast<Precision>(x);
  }
  return Invalid(inst, "unknown operand precision ", v.dump());
}

struct GemmConfig {
  DotDimensionNumbers dnums;
  std::vector<Precision> precision;
  std::string algorithm;  // lower case without "alg_", as dots hold it
  std::complex<double> alpha = 1;
  double beta = 0;
  bool bias = false;
  Activation activation = Activation::kNone;
};

absl::StatusOr<GemmConfig> ParseGemmConfig(const Instruction& inst) {
  absl::StatusOr<std::optional<json>> obj =
      ConfigObject(inst, "gemm_backend_config", "dot_dimension_numbers");
  if (!obj.ok()) return obj.status();
  if (!obj->has_value()) {
    return Invalid(inst, "backend_config has no gemm_backend_config");
  }
  const json& cfg = **obj;
  GemmConfig g;
  auto d = cfg.find("dot_dimension_numbers");
  if (d == cfg.end() || !d->is_object()) {
    return Invalid(inst, "gemm_backend_config has no dot_dimension_numbers");
  }
  auto list = [&](const char* key, std::vector<int64_t>* out) -> absl::Status {
    absl::StatusOr<std::vector<int64_t>> v = ReadIntList(inst, *d, key);
    if (!v.ok()) return v.status();
    *out = std::move(*v);
    return absl::OkStatus();
  };
  for (auto [key, out] :
       {std::pair{"lhs_contracting_dimensions",
                  &g.dnums.lhs_contracting_dimensions},
        std::pair{"rhs_contracting_dimensions",
                  &g.dnums.rhs_contracting_dimensions},
        std::pair{"lhs_batch_dimensions", &g.dnums.lhs_batch_dimensions},
        std::pair{"rhs_batch_dimensions", &g.dnums.rhs_batch_dimensions}}) {
    if (absl::Status s = list(key, out); !s.ok()) return s;
  }
  absl::StatusOr<double> ar = ReadDouble(inst, cfg, "alpha_real", 1);
  if (!ar.ok()) return ar.status();
  absl::StatusOr<double> ai = ReadDouble(inst, cfg, "alpha_imag", 0);
  if (!ai.ok()) return ai.status();
  absl::StatusOr<double> beta = ReadDouble(inst, cfg, "beta", 0);
  if (!beta.ok()) return beta.status();
  g.alpha = {*ar, *ai};
  g.beta = *beta;
  auto p = cfg.find("precision_config");
  if (p != cfg.end() && !p->is_null()) {
    if (!p->is_object()) {
      return Invalid(inst, "precision_config is not an object");
    }
    auto op = p->find("operand_precision");
    if (op != p->end() && !op->is_null()) {
      if (!op->is_array()) {
        return Invalid(inst, "operand_precision is not an array");
      }
      for (const json& v : *op) {
        absl::StatusOr<Precision> pr = ParsePrecision(inst, v);
        if (!pr.ok()) return pr.status();
        g.precision.push_back(*pr);
      }
    }
    auto alg = p->find("algorithm");
    if (alg != p->end() && !alg->is_null()) {
      if (!alg->is_string()) {
        return Invalid(inst, "precision_config.algorithm is not a string");
      }
      std::string a = alg->get<std::string>();
      if (a != "ALG_UNSET") {
        if (a.rfind("ALG_", 0) == 0) a = a.substr(4);
        for (char& ch : a) {
          ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        }
        g.algorithm = a;
      }
    }
  }
  auto ep = cfg.find("epilogue");
  if (ep != cfg.end() && !ep->is_null()) {
    if (!ep->is_string()) {
      return Invalid(inst, "epilogue is not a string: ", ep->dump());
    }
    const std::string e = ep->get<std::string>();
    if (e == "DEFAULT") {
    } else if (e == "BIAS") {
      g.bias = true;
    } else if (e == "RELU") {
      g.activation = Activation::kRelu;
    } else if (e == "BIAS_RELU") {
      g.bias = true;
      g.activation = Activation::kRelu;
    } else if (e == "GELU") {
      g.activation = Activation::kGelu;
    } else if (e == "BIAS_GELU") {
      g.bias = true;
      g.activation = Activation::kGelu;
    } else if (e == "SILU") {
      g.activation = Activation::kSilu;
    } else if (e == "BIAS_SILU") {
      g.bias = true;
      g.activation = Activation::kSilu;
    } else {
      return Unsupported(inst, "epilogue ", e, " is not supported");
    }
  }
  return g;
}

// ---- Convolutions.

struct ConvConfig {
  double scale = 1;
  double side_input_scale = 0;
  Activation activation = Activation::kNone;
  double leaky_alpha = 0;
};

absl::StatusOr<Activation> ParseActivation(const Instruction& inst,
                                           const json& v) {
  // stream_executor's dnn::ActivationMode numbering.
  static constexpr std::pair<const char*, Activation> kModes[] = {
      {"kNone", Activation::kNone},          {"kSigmoid", Activation::kSigmoid},
      {"kRelu", Activation::kRelu},          {"kRelu6", Activation::kRelu6},
      {"kReluX", Activation::kNone},         {"kTanh", Activation::kTanh},
      {"kBandPass", Activation::kNone},      {"kElu", Activation::kElu},
      {"kLeakyRelu", Activation::kLeakyRelu}};
  int64_t index = -1;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    for (int64_t i = 0; i < 9; ++i) {
      if (s == kModes[i].first) index = i;
    }
  } else if (v.is_number_integer()) {
    index = v.get<int64_t>();
  }
  if (index < 0 || index >= 9) {
    return Invalid(inst, "unknown activation_mode ", v.dump());
  }
  if (index == 4 || index == 6) {
    return Unsupported(inst, "activation_mode ", kModes[index].first,
                       " is not supported");
  }
  return kModes[index].second;
}

absl::StatusOr<ConvConfig> ParseConvConfig(const Instruction& inst) {
  absl::StatusOr<std::optional<json>> obj =
      ConfigObject(inst, "cudnn_conv_backend_config", "conv_result_scale");
  if (!obj.ok()) return obj.status();
  ConvConfig c;
  if (!obj->has_value()) return c;
  const json& cfg = **obj;
  absl::StatusOr<double> scale = ReadDouble(inst, cfg, "conv_result_scale", 1);
  if (!scale.ok()) return scale.status();
  absl::StatusOr<double> side = ReadDouble(inst, cfg, "side_input_scale", 0);
  if (!side.ok()) return side.status();
  absl::StatusOr<double> leaky = ReadDouble(inst, cfg, "leakyrelu_alpha", 0);
  if (!leaky.ok()) return leaky.status();
  c.scale = *scale;
  c.side_input_scale = *side;
  c.leaky_alpha = *leaky;
  auto act = cfg.find("activation_mode");
  if (act != cfg.end() && !act->is_null()) {
    absl::StatusOr<Activation> a = ParseActivation(inst, *act);
    if (!a.ok()) return a.status();
    c.activation = *a;
  }
  return c;
}

}  // namespace

absl::StatusOr<Literal> EvalCublasGemm(const Instruction& inst,
                                       Operands operands) {
  absl::StatusOr<GemmConfig> cfg = ParseGemmConfig(inst);
  if (!cfg.ok()) return cfg.status();
  absl::StatusOr<Shape> value_shape = ValueShape(inst);
  if (!value_shape.ok()) return value_shape.status();
  // Operands: a, b, then c (present iff counted), then the bias vector.
  const int64_t n = static_cast<int64_t>(operands.size());
  const int64_t extra = n - 2 - (cfg->bias ? 1 : 0);
  if (extra != 0 && extra != 1) {
    return Invalid(inst, "expects 2", cfg->bias ? " + bias" : "",
                   " operands (+ 1 addend), got ", n);
  }
  for (int64_t i = 0; i < n; ++i) {
    if (absl::Status s = CheckArray(inst, operands[i], i); !s.ok()) return s;
  }
  Instruction dot(Opcode::kDot, *value_shape);
  dot.set_name(inst.name());
  InstructionAttrs attrs;
  attrs.dot_dnums = cfg->dnums;
  attrs.operand_precision = cfg->precision;
  attrs.algorithm = cfg->algorithm;
  dot.set_attrs(std::move(attrs));
  const Literal* ab[] = {operands[0], operands[1]};
  absl::StatusOr<Literal> product = EvalDot(dot, ab);
  if (!product.ok()) return product.status();
  Epilogue e;
  e.scale = cfg->alpha;
  if (extra == 1) {
    e.c = operands[2];
    e.c_scale = cfg->beta;
  }
  if (cfg->bias) {
    e.bias = operands[n - 1];
    e.bias_dim = MinorDimension(*value_shape);
  }
  e.activation = cfg->activation;
  absl::StatusOr<Literal> value = ApplyEpilogue(inst, std::move(*product), e);
  if (!value.ok()) return value.status();
  return WrapResult(inst, std::move(*value));
}

absl::StatusOr<Literal> EvalCudnnConvolution(const Instruction& inst,
                                             Operands operands) {
  const bool fused =
      inst.attrs().custom_call_target == kCudnnConvBiasActivationForwardTarget;
  absl::StatusOr<ConvConfig> cfg = ParseConvConfig(inst);
  if (!cfg.ok()) return cfg.status();
  absl::StatusOr<Shape> value_shape = ValueShape(inst);
  if (!value_shape.ok()) return value_shape.status();
  const int64_t n = static_cast<int64_t>(operands.size());
  if (fused ? (n != 3 && n != 4) : n != 2) {
    return Invalid(inst, "expects ",
                   fused ? "3 or 4 operands (input, filter, bias, side input)"
                         : "2 operands (input, filter)",
                   ", got ", n);
  }
  for (int64_t i = 0; i < n; ++i) {
    if (absl::Status s = CheckArray(inst, operands[i], i); !s.ok()) return s;
  }
  if (!inst.attrs().conv_dnums.has_value()) {
    return Invalid(inst, "has no dim_labels");
  }
  if (!fused && cfg->activation != Activation::kNone) {
    return Invalid(inst, "a plain forward convolution takes no activation");
  }
  // The convolution itself: the custom call's window, dim_labels and group
  // counts on a convolution instruction of the value's shape.
  Instruction conv(Opcode::kConvolution, *value_shape);
  conv.set_name(inst.name());
  conv.set_attrs(inst.attrs());
  const Literal* io[] = {operands[0], operands[1]};
  absl::StatusOr<Literal> product = EvalConvolution(conv, io);
  if (!product.ok()) return product.status();
  Epilogue e;
  e.scale = cfg->scale;
  e.activation = cfg->activation;
  e.leaky_alpha = cfg->leaky_alpha;
  if (fused) {
    e.bias = operands[2];
    e.bias_dim = inst.attrs().conv_dnums->output_feature_dimension;
    if (n == 4) {
      e.c = operands[3];
      e.c_scale = cfg->side_input_scale;
    }
  }
  absl::StatusOr<Literal> value = ApplyEpilogue(inst, std::move(*product), e);
  if (!value.ok()) return value.status();
  return WrapResult(inst, std::move(*value));
}

void RegisterLibraryCalls(CustomCallRegistry* registry) {
  registry->Register(kCublasGemmTarget, EvalCublasGemm);
  registry->Register(kCublasLtMatmulTarget, EvalCublasGemm);
  registry->Register(kCudnnConvForwardTarget, EvalCudnnConvolution);
  registry->Register(kCudnnConvBiasActivationForwardTarget,
                     EvalCudnnConvolution);
}

const CustomCallRegistry& LibraryCallRegistry() {
  static const CustomCallRegistry* registry = [] {
    auto* r = new CustomCallRegistry();
    RegisterLibraryCalls(r);
    return r;
  }();
  return *registry;
}

}  // namespace hlogym
