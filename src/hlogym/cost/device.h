// GPU device descriptions for the analytical cost model.
//
// A device is described by a JSON file (data/devices/*.json; the built-in
// ones are compiled into the library). docs/cost-model.md lists the fields.
#ifndef HLOGYM_COST_DEVICE_H_
#define HLOGYM_COST_DEVICE_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/ir/opcode.h"
#include "hlogym/ir/primitive_type.h"

namespace hlogym {

// Measured clock cycles per element of elementwise opcodes, per element
// type. Pairs that were not measured cost kDefaultCycles.
class OpProfile {
 public:
  static constexpr int64_t kDefaultCycles = 3;

  int64_t CyclesPerElement(Opcode op, PrimitiveType type) const {
    int32_t c = cycles_[static_cast<size_t>(op)][static_cast<size_t>(type)];
    return c > 0 ? c : kDefaultCycles;
  }
  void Set(Opcode op, PrimitiveType type, int32_t cycles) {
    cycles_[static_cast<size_t>(op)][static_cast<size_t>(type)] = cycles;
  }
  // Number of measured (opcode, type) pairs.
  int64_t size() const;

 private:
  std::array<std::array<int32_t, static_cast<size_t>(PrimitiveType::kNumTypes)>,
             kNumOpcodes>
      cycles_{};
};

// Peak matrix-unit (library gemm / convolution) rates in flop/s by operand
// element type. 0 = not given (the f32 rate is used).
struct MatrixRates {
  double f64 = 0;
  double f32 = 0;
  double f16 = 0;
  double bf16 = 0;
  double f8 = 0;
  double s8 = 0;
  // The rate for a dot or convolution whose inputs have type `t`.
  double ForType(PrimitiveType t) const;
};

struct GpuDevice {
  std::string name;         // short name ("h100")
  std::string description;  // marketing name ("NVIDIA H100 SXM 80GB")
  std::string source;       // where the numbers come from
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int64_t core_count = 0;  // streaming multiprocessors
  int64_t fpus_per_core = 0;
  double clock_rate_ghz = 0;
  double memory_bandwidth = 0;  // bytes per second (DRAM)
  int64_t l2_cache_size = 0;    // bytes
  int64_t shared_memory_per_block = 48 * 1024;
  int64_t shared_memory_per_block_optin = 0;
  int64_t shared_memory_per_core = 0;
  int64_t threads_per_block_limit = 1024;
  int64_t threads_per_warp = 32;
  int64_t threads_per_core_limit = 2048;
  int64_t block_dim_limit_x = 2147483647;
  int64_t block_dim_limit_y = 65535;
  // Constants of the performance model (defaults for CUDA devices).
  int64_t l1_cache_size_per_core = 2 * 1024;
  int64_t dram_to_l2_transaction_size_bytes = 64;
  int64_t memory_transactions_per_clock = 32;
  // Elementwise cost table ("sm_90", ...). Devices without a measured table
  // use the "sm_86" one, as the model this follows does.
  std::string op_profile_name;
  OpProfile op_profile;
  MatrixRates matrix_rates;
  double kernel_launch_overhead_seconds = 1e-6;
  double collective_launch_overhead_seconds = 5e-6;

  // Peak rate of the elementwise (CUDA core) model in flop/ns:
  // cores * fpus * trunc(2 * clock).
  int64_t FlopPerNsPerFpu() const;
};

// Parses a device description. `origin` names the text in error messages.
absl::StatusOr<GpuDevice> ParseDevice(std::string_view json,
                                      std::string_view origin);

// A built-in device by name ("h100", "a100-40gb", ...; case-insensitive,
// with a few aliases: "a100" = a100-40gb, "h100-sxm" = h100), or a path to
// a JSON file (anything containing '/' or ending in ".json").
absl::StatusOr<GpuDevice> LoadDevice(std::string_view name_or_path);

// Names of the built-in devices, sorted.
std::vector<std::string> BuiltinDeviceNames();

// The measured elementwise tables by name ("sm_70", "sm_75", "sm_80",
// "sm_86", "sm_90"); nullptr for other names.
const OpProfile* FindOpProfile(std::string_view name);

// A file compiled into the library from data/devices (generated source).
struct EmbeddedDeviceFile {
  const char* name;  // file name without ".json"
  const char* text;
};
extern const EmbeddedDeviceFile kEmbeddedDeviceFiles[];
extern const int kNumEmbeddedDeviceFiles;

}  // namespace hlogym

#endif  // HLOGYM_COST_DEVICE_H_
