#include "cost_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "hlogym/cost/evaluator.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

struct CostArgs {
  std::string file;
  std::string device = "h100";
  bool per_kernel = false;
  bool json = false;
  bool list_devices = false;
};

// "12.3 us", "4.56 ms", "789 ns".
std::string Seconds(double s) {
  char buf[32];
  if (s >= 1) {
    std::snprintf(buf, sizeof(buf), "%.3f s", s);
  } else if (s >= 1e-3) {
    std::snprintf(buf, sizeof(buf), "%.3f ms", s * 1e3);
  } else if (s >= 1e-6) {
    std::snprintf(buf, sizeof(buf), "%.3f us", s * 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f ns", s * 1e9);
  }
  return buf;
}

// 1.23e9 -> "1.23 G".
std::string Count(double v) {
  char buf[32];
  const char* unit = "";
  double scaled = v;
  for (const char* u : {"k", "M", "G", "T", "P"}) {
    if (scaled < 1000) break;
    scaled /= 1000;
    unit = u;
  }
  if (unit[0]) {
    std::snprintf(buf, sizeof(buf), "%.2f %s", scaled, unit);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f", scaled);
  }
  return buf;
}

// "504 B", "2.56 MB".
std::string Bytes(double v) {
  std::string c = Count(v);
  return c.find(' ') == std::string::npos ? c + " B" : c + "B";
}

void PrintText(const EvaluationResult& r, const GpuDevice& device,
               const CostArgs& args) {
  std::printf("module:   %s\n", r.module.c_str());
  std::printf("device:   %s (%s)\n", device.name.c_str(),
              device.description.c_str());
  std::printf("time:     %s\n", Seconds(r.total_seconds).c_str());
  std::printf("kernels:  %lld (%lld launches)\n",
              static_cast<long long>(r.kernel_count),
              static_cast<long long>(r.kernel_launches));
  std::printf("flops:    %s\n", Count(r.flops).c_str());
  std::printf("bytes:    %s\n", Bytes(r.bytes_accessed).c_str());
  if (r.flags.empty()) {
    std::printf("flags:    none\n");
  } else {
    std::printf("flags:\n");
    for (const std::string& f : r.flags) std::printf("  %s\n", f.c_str());
  }
  if (!args.per_kernel) return;
  // Most expensive first.
  std::vector<const KernelCost*> order;
  for (const KernelCost& k : r.kernels) order.push_back(&k);
  std::stable_sort(order.begin(), order.end(),
                   [](const KernelCost* a, const KernelCost* b) {
                     return a->seconds > b->seconds;
                   });
  std::printf("\n%-40s %-12s %8s %12s %7s %10s %11s %-7s\n", "kernel", "kind",
              "launches", "time", "share", "flops", "bytes", "bound");
  for (const KernelCost* k : order) {
    const double share =
        r.total_seconds > 0 ? 100.0 * k->seconds / r.total_seconds : 0;
    std::printf("%-40s %-12s %8lld %12s %6.1f%% %10s %11s %-7s\n",
                k->name.c_str(), std::string(k->kind).c_str(),
                static_cast<long long>(k->launches),
                Seconds(k->seconds).c_str(), share, Count(k->flops).c_str(),
                Bytes(k->bytes).c_str(), std::string(k->bound).c_str());
  }
}

int RunCost(const CostArgs& args) {
  if (args.list_devices) {
    for (const std::string& name : BuiltinDeviceNames()) {
      absl::StatusOr<GpuDevice> d = LoadDevice(name);
      if (d.ok()) {
        std::printf("%-10s %s\n", name.c_str(), d->description.c_str());
      }
    }
    return 0;
  }
  if (args.file.empty()) {
    std::cerr << "cost: a FILE is required\n";
    return 1;
  }
  absl::StatusOr<GpuDevice> device = LoadDevice(args.device);
  if (!device.ok()) {
    std::cerr << device.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModuleFile(args.file);
  if (!m.ok()) {
    std::cerr << m.status().message() << "\n";
    return 1;
  }
  if (absl::Status s = VerifyModule(**m, {}, args.file); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  // The JSON always lists the kernels.
  const bool per_kernel = args.per_kernel || args.json;
  const GpuDevice description = *device;
  ModelEvaluator evaluator(std::move(*device), {.per_kernel = per_kernel});
  absl::StatusOr<EvaluationResult> r = evaluator.Evaluate(**m);
  if (!r.ok()) {
    std::cerr << args.file << ": " << r.status().message() << "\n";
    return 1;
  }
  if (args.json) {
    std::cout << EvaluationResultToJson(*r, per_kernel) << "\n";
  } else {
    PrintText(*r, description, args);
  }
  return 0;
}

}  // namespace

void AddCostCommand(CLI::App& app) {
  auto args = std::make_shared<CostArgs>();
  CLI::App* cost = app.add_subcommand(
      "cost",
      "Estimate a module's run time with the analytical GPU model "
      "(docs/cost-model.md)");
  cost->add_option("FILE", args->file, "HLO file");
  cost->add_option("--device", args->device,
                   "Built-in device (h100, a100-40gb, a100-80gb, v100, t4, "
                   "l4) or a device JSON file")
      ->capture_default_str();
  cost->add_flag("--per-kernel", args->per_kernel,
                 "List every kernel, most expensive first");
  cost->add_flag("--json", args->json,
                 "Print the result as JSON (with every kernel)");
  cost->add_flag("--list-devices", args->list_devices,
                 "List the built-in devices and exit");
  cost->callback([args] {
    const int rc = RunCost(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace hlogym
