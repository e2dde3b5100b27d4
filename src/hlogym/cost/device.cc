#include "hlogym/cost/device.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "absl/status/status.h"
#include "hlogym/ir/str_util.h"
#include "nlohmann/json.hpp"

namespace hlogym {
namespace {

using Json = nlohmann::json;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(c));
  return out;
}

absl::Status FieldError(std::string_view origin, std::string_view field,
                        std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat(origin, ": field '", field, "' ", what));
}

// Reads an optional number field; fails if present with the wrong type or
// not positive (when `positive`).
absl::Status ReadNumber(const Json& j, std::string_view origin,
                        const char* field, bool required, double* out) {
  auto it = j.find(field);
  if (it == j.end()) {
    if (required) return FieldError(origin, field, "is missing");
    return absl::OkStatus();
  }
  if (!it->is_number()) return FieldError(origin, field, "must be a number");
  double v = it->get<double>();
  if (!std::isfinite(v) || v <= 0) {
    return FieldError(origin, field, "must be positive");
  }
  *out = v;
  return absl::OkStatus();
}

absl::Status ReadInt(const Json& j, std::string_view origin, const char* field,
                     bool required, int64_t* out) {
  double v = static_cast<double>(*out);
  if (absl::Status s = ReadNumber(j, origin, field, required, &v); !s.ok()) {
    return s;
  }
  if (v != std::floor(v) || v > 9.0e18) {
    return FieldError(origin, field, "must be a positive integer");
  }
  *out = static_cast<int64_t>(v);
  return absl::OkStatus();
}

absl::Status ReadString(const Json& j, std::string_view origin,
                        const char* field, std::string* out) {
  auto it = j.find(field);
  if (it == j.end()) return absl::OkStatus();
  if (!it->is_string()) return FieldError(origin, field, "must be a string");
  *out = it->get<std::string>();
  return absl::OkStatus();
}

// {"f32": {"exponential": 79, ...}, ...} -> profile.
absl::Status ParseOpProfile(const Json& j, std::string_view origin,
                            OpProfile* profile) {
  if (!j.is_object()) {
    return absl::InvalidArgumentError(
        StrCat(origin, ": an op profile must be an object of element types"));
  }
  for (auto t = j.begin(); t != j.end(); ++t) {
    std::optional<PrimitiveType> type = ParsePrimitiveType(t.key());
    if (!type || !IsArrayType(*type)) {
      return absl::InvalidArgumentError(StrCat(
          origin, ": op profile: '", t.key(), "' is not an element type"));
    }
    if (!t.value().is_object()) {
      return absl::InvalidArgumentError(StrCat(origin, ": op profile entry '",
                                               t.key(), "' must be an object"));
    }
    for (auto o = t.value().begin(); o != t.value().end(); ++o) {
      std::optional<Opcode> op = ParseOpcode(o.key());
      if (!op) {
        return absl::InvalidArgumentError(
            StrCat(origin, ": op profile: '", o.key(), "' is not an opcode"));
      }
      if (!o.value().is_number_integer() || o.value().get<int64_t>() <= 0 ||
          o.value().get<int64_t>() > 1000000000) {
        return absl::InvalidArgumentError(
            StrCat(origin, ": op profile ", t.key(), " ", o.key(),
                   ": cycles must be a positive integer"));
      }
      profile->Set(*op, *type, static_cast<int32_t>(o.value().get<int64_t>()));
    }
  }
  return absl::OkStatus();
}

const EmbeddedDeviceFile* FindEmbedded(std::string_view name) {
  for (int i = 0; i < kNumEmbeddedDeviceFiles; ++i) {
    if (name == kEmbeddedDeviceFiles[i].name) return &kEmbeddedDeviceFiles[i];
  }
  return nullptr;
}

constexpr char kOpProfilesFile[] = "op_profiles";

struct ProfileTable {
  std::map<std::string, std::unique_ptr<OpProfile>, std::less<>> profiles;
  std::string error;
};

const ProfileTable& Profiles() {
  static const ProfileTable* table = [] {
    auto* t = new ProfileTable;
    const EmbeddedDeviceFile* f = FindEmbedded(kOpProfilesFile);
    if (f == nullptr) {
      t->error = "data/devices/op_profiles.json is not compiled in";
      return t;
    }
    Json j = Json::parse(f->text, nullptr, /*allow_exceptions=*/false);
    auto p = j.is_object() ? j.find("profiles") : j.end();
    if (p == j.end() || !p->is_object()) {
      t->error = "op_profiles.json: 'profiles' object missing";
      return t;
    }
    for (auto it = p->begin(); it != p->end(); ++it) {
      auto profile = std::make_unique<OpProfile>();
      absl::Status s =
          ParseOpProfile(it.value(), "op_profiles.json", &*profile);
      if (!s.ok()) {
        t->error = std::string(s.message());
        return t;
      }
      t->profiles[it.key()] = std::move(profile);
    }
    return t;
  }();
  return *table;
}

// Number of FP32 units per SM by compute capability (for descriptions
// that leave fpus_per_core out).
int64_t DefaultFpusPerCore(int major, int minor) {
  if (major == 3) return 192;
  if ((major == 6 && minor == 0) || major == 7 || (major == 8 && minor == 0)) {
    return 64;
  }
  return 128;
}

}  // namespace

int64_t OpProfile::size() const {
  int64_t n = 0;
  for (const auto& row : cycles_) {
    for (int32_t c : row) n += c > 0;
  }
  return n;
}

double MatrixRates::ForType(PrimitiveType t) const {
  double r = 0;
  switch (t) {
    case PrimitiveType::kF64:
    case PrimitiveType::kC128:
      r = f64;
      break;
    case PrimitiveType::kF16:
      r = f16;
      break;
    case PrimitiveType::kBF16:
      r = bf16;
      break;
    case PrimitiveType::kS8:
    case PrimitiveType::kU8:
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
      r = s8;
      break;
    default:
      if (IsFloatingPointType(t) && BitWidth(t) <= 8) r = f8 > 0 ? f8 : f16;
      break;
  }
  return r > 0 ? r : f32;
}

int64_t GpuDevice::FlopPerNsPerFpu() const {
  // Truncation on purpose: the model this follows truncates 2 * clock to an
  // integer (H100: 3.96 -> 3).
  return static_cast<int64_t>(clock_rate_ghz * 2);
}

absl::StatusOr<GpuDevice> ParseDevice(std::string_view json,
                                      std::string_view origin) {
  Json j = Json::parse(json.begin(), json.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(StrCat(origin, ": not valid JSON"));
  }
  if (!j.is_object()) {
    return absl::InvalidArgumentError(
        StrCat(origin, ": a device description must be a JSON object"));
  }
  GpuDevice d;
  absl::Status s;
  auto check = [&](absl::Status st) {
    if (s.ok() && !st.ok()) s = std::move(st);
  };
  check(ReadString(j, origin, "name", &d.name));
  if (s.ok() && d.name.empty()) check(FieldError(origin, "name", "is missing"));
  check(ReadString(j, origin, "description", &d.description));
  check(ReadString(j, origin, "source", &d.source));
  std::string cc;
  check(ReadString(j, origin, "compute_capability", &cc));
  if (s.ok() && !cc.empty()) {
    int major = 0, minor = 0;
    char dot = 0;
    std::istringstream in(cc);
    if (!(in >> major >> dot >> minor) || dot != '.' || major <= 0 ||
        minor < 0 || !in.eof()) {
      check(FieldError(origin, "compute_capability", "must look like \"9.0\""));
    }
    d.compute_capability_major = major;
    d.compute_capability_minor = minor;
  }
  check(ReadInt(j, origin, "core_count", true, &d.core_count));
  d.fpus_per_core = DefaultFpusPerCore(d.compute_capability_major,
                                       d.compute_capability_minor);
  check(ReadInt(j, origin, "fpus_per_core", false, &d.fpus_per_core));
  check(ReadNumber(j, origin, "clock_rate_ghz", true, &d.clock_rate_ghz));
  check(ReadNumber(j, origin, "memory_bandwidth", true, &d.memory_bandwidth));
  check(ReadInt(j, origin, "l2_cache_size", true, &d.l2_cache_size));
  check(ReadInt(j, origin, "shared_memory_per_block", false,
                &d.shared_memory_per_block));
  d.shared_memory_per_block_optin = d.shared_memory_per_block;
  check(ReadInt(j, origin, "shared_memory_per_block_optin", false,
                &d.shared_memory_per_block_optin));
  d.shared_memory_per_core = d.shared_memory_per_block_optin;
  check(ReadInt(j, origin, "shared_memory_per_core", false,
                &d.shared_memory_per_core));
  check(ReadInt(j, origin, "threads_per_block_limit", false,
                &d.threads_per_block_limit));
  check(ReadInt(j, origin, "threads_per_warp", false, &d.threads_per_warp));
  check(ReadInt(j, origin, "threads_per_core_limit", false,
                &d.threads_per_core_limit));
  check(ReadInt(j, origin, "block_dim_limit_x", false, &d.block_dim_limit_x));
  check(ReadInt(j, origin, "block_dim_limit_y", false, &d.block_dim_limit_y));
  check(ReadInt(j, origin, "l1_cache_size_per_core", false,
                &d.l1_cache_size_per_core));
  check(ReadInt(j, origin, "dram_to_l2_transaction_size_bytes", false,
                &d.dram_to_l2_transaction_size_bytes));
  check(ReadInt(j, origin, "memory_transactions_per_clock", false,
                &d.memory_transactions_per_clock));
  check(ReadNumber(j, origin, "kernel_launch_overhead_seconds", false,
                   &d.kernel_launch_overhead_seconds));
  check(ReadNumber(j, origin, "collective_launch_overhead_seconds", false,
                   &d.collective_launch_overhead_seconds));
  if (!s.ok()) return s;
  if (d.FlopPerNsPerFpu() < 1) {
    return FieldError(origin, "clock_rate_ghz", "must be at least 0.5");
  }

  // Matrix rates: a missing entry falls back (see MatrixRates::ForType), but
  // f32 must be there.
  auto m = j.find("matrix_flops_per_second");
  if (m == j.end() || !m->is_object()) {
    return FieldError(origin, "matrix_flops_per_second",
                      "must be an object with at least \"f32\"");
  }
  struct {
    const char* key;
    double* field;
  } rates[] = {{"f64", &d.matrix_rates.f64}, {"f32", &d.matrix_rates.f32},
               {"f16", &d.matrix_rates.f16}, {"bf16", &d.matrix_rates.bf16},
               {"f8", &d.matrix_rates.f8},   {"s8", &d.matrix_rates.s8}};
  for (auto it = m->begin(); it != m->end(); ++it) {
    bool known = false;
    for (auto& r : rates) {
      if (it.key() != r.key) continue;
      known = true;
      if (!it.value().is_number() || it.value().get<double>() < 0 ||
          !std::isfinite(it.value().get<double>())) {
        return FieldError(origin, StrCat("matrix_flops_per_second.", it.key()),
                          "must be a non-negative number");
      }
      *r.field = it.value().get<double>();
    }
    if (!known) {
      return FieldError(origin, StrCat("matrix_flops_per_second.", it.key()),
                        "is not one of f64, f32, f16, bf16, f8, s8");
    }
  }
  if (d.matrix_rates.f32 <= 0) {
    return FieldError(origin, "matrix_flops_per_second.f32",
                      "must be positive");
  }

  // Op profile: a table name or an inline table; default sm_86.
  auto p = j.find("op_profile");
  if (p != j.end() && p->is_object()) {
    d.op_profile_name = "inline";
    if (absl::Status st = ParseOpProfile(*p, origin, &d.op_profile); !st.ok()) {
      return st;
    }
  } else {
    d.op_profile_name = "sm_86";
    if (p != j.end()) {
      if (!p->is_string()) {
        return FieldError(origin, "op_profile",
                          "must be a table name or an object");
      }
      d.op_profile_name = p->get<std::string>();
    }
    const OpProfile* table = FindOpProfile(d.op_profile_name);
    if (table == nullptr) {
      std::string why = Profiles().error;
      return FieldError(
          origin, "op_profile",
          StrCat("names an unknown table '", d.op_profile_name, "'",
                 why.empty() ? "" : " (", why, why.empty() ? "" : ")"));
    }
    d.op_profile = *table;
  }
  return d;
}

const OpProfile* FindOpProfile(std::string_view name) {
  const ProfileTable& t = Profiles();
  auto it = t.profiles.find(name);
  return it == t.profiles.end() ? nullptr : it->second.get();
}

std::vector<std::string> BuiltinDeviceNames() {
  std::vector<std::string> names;
  for (int i = 0; i < kNumEmbeddedDeviceFiles; ++i) {
    if (std::string_view(kEmbeddedDeviceFiles[i].name) == kOpProfilesFile) {
      continue;
    }
    names.push_back(kEmbeddedDeviceFiles[i].name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<GpuDevice> LoadDevice(std::string_view name_or_path) {
  std::string_view v = name_or_path;
  bool is_path = v.find('/') != std::string_view::npos ||
                 (v.size() > 5 && v.substr(v.size() - 5) == ".json");
  if (is_path) {
    std::ifstream in{std::string(v), std::ios::binary};
    if (!in) {
      return absl::NotFoundError(
          StrCat(v, ": cannot read the device description"));
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return ParseDevice(ss.str(), v);
  }
  std::string name = Lower(v);
  static constexpr std::pair<const char*, const char*> kAliases[] = {
      {"a100", "a100-40gb"}, {"a100-40", "a100-40gb"}, {"a100-80", "a100-80gb"},
      {"h100-sxm", "h100"},  {"h100-80gb", "h100"},    {"v100-16gb", "v100"}};
  for (const auto& [alias, target] : kAliases) {
    if (name == alias) name = target;
  }
  const EmbeddedDeviceFile* f =
      name == kOpProfilesFile ? nullptr : FindEmbedded(name);
  if (f == nullptr) {
    std::string known;
    for (const std::string& n : BuiltinDeviceNames()) {
      StrAppend(&known, known.empty() ? "" : ", ", n);
    }
    return absl::NotFoundError(StrCat("unknown device '", v,
                                      "' (built in: ", known,
                                      "; or give a path to a .json file)"));
  }
  return ParseDevice(f->text, StrCat("data/devices/", f->name, ".json"));
}

}  // namespace hlogym
