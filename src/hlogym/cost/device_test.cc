#include "hlogym/cost/device.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace hlogym {
namespace {

GpuDevice Load(const std::string& name) {
  absl::StatusOr<GpuDevice> d = LoadDevice(name);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *d : GpuDevice{};
}

TEST(CostDeviceTest, BuiltinDevices) {
  std::vector<std::string> names = BuiltinDeviceNames();
  EXPECT_EQ(names, (std::vector<std::string>{"a100-40gb", "a100-80gb", "h100",
                                             "l4", "t4", "v100"}));
  for (const std::string& n : names) {
    GpuDevice d = Load(n);
    EXPECT_EQ(d.name, n);
    EXPECT_FALSE(d.source.empty()) << n;
    EXPECT_GT(d.op_profile.size(), 0) << n;
  }
}

TEST(CostDeviceTest, A100AndH100SpecFigures) {
  GpuDevice a40 = Load("a100-40gb");
  EXPECT_EQ(a40.core_count, 108);
  EXPECT_EQ(a40.fpus_per_core, 64);
  EXPECT_EQ(a40.clock_rate_ghz, 1.41);
  EXPECT_EQ(a40.memory_bandwidth, 1.5552e12);
  EXPECT_EQ(a40.l2_cache_size, 41943040);
  EXPECT_EQ(a40.shared_memory_per_block, 49152);
  EXPECT_EQ(a40.shared_memory_per_block_optin, 166912);
  EXPECT_EQ(a40.shared_memory_per_core, 167936);
  EXPECT_EQ(a40.threads_per_core_limit, 2048);
  EXPECT_EQ(a40.op_profile_name, "sm_80");

  GpuDevice a80 = Load("a100-80gb");
  EXPECT_EQ(a80.memory_bandwidth, 2.03904e12);
  EXPECT_EQ(a80.l2_cache_size, 41943040);

  GpuDevice h = Load("h100");
  EXPECT_EQ(h.core_count, 132);
  EXPECT_EQ(h.fpus_per_core, 128);
  EXPECT_EQ(h.clock_rate_ghz, 1.98);
  EXPECT_EQ(h.memory_bandwidth, 3.35232e12);
  EXPECT_EQ(h.l2_cache_size, 52428800);
  EXPECT_EQ(h.shared_memory_per_block_optin, 232448);
  EXPECT_EQ(h.shared_memory_per_core, 233472);
  EXPECT_EQ(h.compute_capability_major, 9);
  EXPECT_EQ(h.compute_capability_minor, 0);
  // Model constants for CUDA devices.
  EXPECT_EQ(h.l1_cache_size_per_core, 2048);
  EXPECT_EQ(h.dram_to_l2_transaction_size_bytes, 64);
  EXPECT_EQ(h.memory_transactions_per_clock, 32);
  EXPECT_EQ(h.kernel_launch_overhead_seconds, 1e-6);
  EXPECT_EQ(h.collective_launch_overhead_seconds, 5e-6);
}

TEST(CostDeviceTest, PeakFlopRateTruncatesTheClock) {
  // H100: trunc(2 * 1.98) = 3 -> 132 * 128 * 3 = 50688 flop/ns.
  GpuDevice h = Load("h100");
  EXPECT_EQ(h.FlopPerNsPerFpu(), 3);
  EXPECT_EQ(h.core_count * h.fpus_per_core * h.FlopPerNsPerFpu(), 50688);
  // A100: trunc(2 * 1.41) = 2 -> 108 * 64 * 2 = 13824 flop/ns.
  GpuDevice a = Load("a100-80gb");
  EXPECT_EQ(a.FlopPerNsPerFpu(), 2);
  EXPECT_EQ(a.core_count * a.fpus_per_core * a.FlopPerNsPerFpu(), 13824);
}

TEST(CostDeviceTest, OtherDevices) {
  GpuDevice v = Load("v100");
  EXPECT_EQ(v.core_count, 80);
  EXPECT_EQ(v.fpus_per_core, 64);
  EXPECT_EQ(v.memory_bandwidth, 898048000000.0);
  EXPECT_EQ(v.l2_cache_size, 6291456);
  EXPECT_EQ(v.op_profile.CyclesPerElement(Opcode::kExp, PrimitiveType::kF32),
            79);
  GpuDevice t = Load("t4");
  EXPECT_EQ(t.core_count, 40);
  EXPECT_EQ(t.threads_per_core_limit, 1024);
  EXPECT_EQ(t.op_profile_name, "sm_75");
  GpuDevice l = Load("l4");
  EXPECT_EQ(l.core_count, 58);
  EXPECT_EQ(l.fpus_per_core, 128);
  EXPECT_EQ(l.FlopPerNsPerFpu(), 4);
  // No sm_89 table: the sm_86 one.
  EXPECT_EQ(l.op_profile_name, "sm_86");
  EXPECT_EQ(l.op_profile.CyclesPerElement(Opcode::kExp, PrimitiveType::kF32),
            86);
}

TEST(CostDeviceTest, OpProfiles) {
  const OpProfile* h = FindOpProfile("sm_90");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->size(), 102);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kAdd, PrimitiveType::kF32), 7);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kMultiply, PrimitiveType::kF16), 7);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kExpm1, PrimitiveType::kF32), 190);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kLog, PrimitiveType::kF32), 166);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kLog1p, PrimitiveType::kF32), 229);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kRsqrt, PrimitiveType::kF32), 75);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kTanh, PrimitiveType::kF32), 467);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kSin, PrimitiveType::kF32), 958);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kCosine, PrimitiveType::kF32), 978);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kCbrt, PrimitiveType::kF32), 178);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kExp, PrimitiveType::kF16), 102);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kDivide, PrimitiveType::kF16), 43);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kPower, PrimitiveType::kF16), 526);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kDivide, PrimitiveType::kS32), 297);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kMultiply, PrimitiveType::kS32), 3);
  EXPECT_EQ(h->CyclesPerElement(Opcode::kDivide, PrimitiveType::kS64), 685);
  // Missing pairs cost 3.
  EXPECT_EQ(h->CyclesPerElement(Opcode::kMaximum, PrimitiveType::kF32), 3);
  for (const char* name : {"sm_70", "sm_75", "sm_80", "sm_86"}) {
    EXPECT_NE(FindOpProfile(name), nullptr) << name;
  }
  EXPECT_EQ(FindOpProfile("sm_89"), nullptr);
}

TEST(CostDeviceTest, MatrixRates) {
  GpuDevice h = Load("h100");
  EXPECT_EQ(h.matrix_rates.ForType(PrimitiveType::kBF16), 989.4e12);
  EXPECT_EQ(h.matrix_rates.ForType(PrimitiveType::kF32), 494.7e12);
  EXPECT_EQ(h.matrix_rates.ForType(PrimitiveType::kF8E4M3FN), 1978.9e12);
  EXPECT_EQ(h.matrix_rates.ForType(PrimitiveType::kS8), 1978.9e12);
  GpuDevice v = Load("v100");
  // No bf16 units: the f32 rate.
  EXPECT_EQ(v.matrix_rates.ForType(PrimitiveType::kBF16), 15.7e12);
  GpuDevice a = Load("a100-40gb");
  // No fp8 units: the f16 rate.
  EXPECT_EQ(a.matrix_rates.ForType(PrimitiveType::kF8E5M2), 312e12);
}

TEST(CostDeviceTest, AliasesAndErrors) {
  EXPECT_EQ(Load("A100").name, "a100-40gb");
  EXPECT_EQ(Load("H100-SXM").name, "h100");
  absl::StatusOr<GpuDevice> bad = LoadDevice("b9000");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown device 'b9000'"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(LoadDevice("op_profiles").ok());
  EXPECT_EQ(LoadDevice("/nonexistent/dev.json").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(CostDeviceTest, UserDeviceFile) {
  const std::string path = testing::TempDir() + "/cost_device_test.json";
  {
    std::ofstream out(path);
    out << R"({"name": "mine", "compute_capability": "8.6", "core_count": 10,
              "clock_rate_ghz": 1.5, "memory_bandwidth": 1e11,
              "l2_cache_size": 1048576,
              "matrix_flops_per_second": {"f32": 1e13},
              "op_profile": {"f32": {"exponential": 50}}})";
  }
  absl::StatusOr<GpuDevice> d = LoadDevice(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->name, "mine");
  EXPECT_EQ(d->fpus_per_core, 128);  // from compute capability 8.6
  EXPECT_EQ(d->op_profile_name, "inline");
  EXPECT_EQ(d->op_profile.CyclesPerElement(Opcode::kExp, PrimitiveType::kF32),
            50);
  EXPECT_EQ(d->matrix_rates.ForType(PrimitiveType::kBF16), 1e13);
  EXPECT_EQ(d->threads_per_core_limit, 2048);
  std::remove(path.c_str());
}

TEST(CostDeviceTest, ParseErrors) {
  auto error = [](const std::string& json) {
    absl::StatusOr<GpuDevice> d = ParseDevice(json, "dev.json");
    EXPECT_FALSE(d.ok()) << json;
    return d.ok() ? std::string() : std::string(d.status().message());
  };
  EXPECT_EQ(error("{"), "dev.json: not valid JSON");
  EXPECT_EQ(error("[1]"),
            "dev.json: a device description must be a JSON object");
  const std::string base =
      R"("name": "x", "clock_rate_ghz": 1.5, "memory_bandwidth": 1e11,
         "l2_cache_size": 1024, "matrix_flops_per_second": {"f32": 1e12})";
  EXPECT_EQ(error("{" + base + "}"), "dev.json: field 'core_count' is missing");
  EXPECT_EQ(error("{" + base + R"(, "core_count": -3})"),
            "dev.json: field 'core_count' must be positive");
  EXPECT_EQ(error("{" + base + R"(, "core_count": 2.5})"),
            "dev.json: field 'core_count' must be a positive integer");
  EXPECT_EQ(error("{" + base + R"(, "core_count": 4, "op_profile": "sm_1"})"),
            "dev.json: field 'op_profile' names an unknown table 'sm_1'");
  EXPECT_EQ(error("{" + base +
                  R"(, "core_count": 4, "op_profile": {"f32": {"nope": 3}}})"),
            "dev.json: op profile: 'nope' is not an opcode");
  EXPECT_EQ(error(R"({"name": "x", "core_count": 4, "clock_rate_ghz": 0.4,
                     "memory_bandwidth": 1e11, "l2_cache_size": 1024,
                     "matrix_flops_per_second": {"f32": 1e12}})"),
            "dev.json: field 'clock_rate_ghz' must be at least 0.5");
  EXPECT_EQ(error(R"({"name": "x", "core_count": 4, "clock_rate_ghz": 1,
                     "memory_bandwidth": 1e11, "l2_cache_size": 1024})"),
            "dev.json: field 'matrix_flops_per_second' must be an object with "
            "at least \"f32\"");
}

}  // namespace
}  // namespace hlogym
