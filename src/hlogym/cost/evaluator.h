// The evaluation API: one interface, named backends.
//
//   model:<device>  the analytical GPU model (deterministic, any machine);
//                   <device> is a built-in name (h100, a100-40gb, ...) or a
//                   path to a device JSON file
//   interpreter     runs the module on generated inputs; outputs only
//
// Measured backends (cpu, gpu) fill `durations_ns` and plug in here later.
#ifndef HLOGYM_COST_EVALUATOR_H_
#define HLOGYM_COST_EVALUATOR_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlogym/cost/gpu_performance_model.h"
#include "hlogym/ir/literal.h"
#include "hlogym/ir/module.h"

namespace hlogym {

// One kernel of a module: a fusion or an unfused instruction that launches
// work. Totals are over all its launches (a kernel in a loop body runs
// trip-count times).
struct KernelCost {
  std::string name;         // the instruction's name
  std::string computation;  // the computation it belongs to
  // The fields below view static strings.
  std::string_view opcode;  // "fusion", "add", "dot", ...
  // The emitter (loop, reduction, transpose, scatter, concatenate,
  // library), or "collective" / "custom-call".
  std::string_view kind;
  int64_t launches = 1;
  double seconds = 0;  // launches * (launch overhead + execution)
  double flops = 0;
  double transcendentals = 0;
  double bytes = 0;  // read + written
  // What dominates one launch: "compute", "memory" or "launch" (the launch
  // overhead is longer than both).
  std::string_view bound;
  // One launch.
  double compute_seconds = 0;
  double memory_seconds = 0;
  double launch_seconds = 0;
};

struct EvaluationResult {
  std::string module;   // the module's name
  std::string backend;  // "model:h100", "interpreter"
  std::string device;   // device name ("h100"; "host" for the interpreter)
  // Sum of the kernels' seconds (0 for backends that only give outputs).
  double total_seconds = 0;
  // Empty unless EvaluatorOptions::per_kernel is set.
  std::vector<KernelCost> kernels;
  double flops = 0;
  double transcendentals = 0;
  double bytes_accessed = 0;
  int64_t kernel_count = 0;     // kernels (a loop body's kernel counts once)
  int64_t kernel_launches = 0;  // launches (trip counts applied)
  // Approximations the result depends on, one sentence each (unknown trip
  // counts, unknown custom calls, ...).
  std::vector<std::string> flags;
  // Measured backends: one entry per timed run, in nanoseconds.
  std::vector<int64_t> durations_ns;
  std::vector<int64_t> compute_durations_ns;
  std::vector<int64_t> full_durations_ns;
  // Backends that execute the module: the result, one literal per leaf of
  // the entry's root (a non-tuple root gives one).
  std::vector<Literal> outputs;
};

struct EvaluatorOptions {
  // Fill EvaluationResult::kernels. Off by default: search loops want the
  // totals, and the breakdown copies a name per kernel (on a 100k-instruction
  // module it takes evaluation from about 9 to 14 ms).
  bool per_kernel = false;
  // Seed of the generated inputs (interpreter).
  uint64_t seed = 0;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // The backend spec this evaluator was created from ("model:h100").
  virtual std::string name() const = 0;
  virtual absl::StatusOr<EvaluationResult> Evaluate(const Module& module) = 0;
};

// "model:<device>" or "interpreter".
absl::StatusOr<std::unique_ptr<Evaluator>> CreateEvaluator(
    std::string_view spec, EvaluatorOptions options = {});

// The analytical model over a whole module. Per-kernel estimates are
// cached by a structural hash of the kernel (its opcode, shapes, the
// attributes that affect cost and, for fusions and reductions, the called
// computation), so after a local rewrite only the changed kernels are
// estimated again. Not thread-safe (it uses Instruction::scratch).
class ModelEvaluator : public Evaluator {
 public:
  ModelEvaluator(GpuDevice device, EvaluatorOptions options = {});

  std::string name() const override;
  absl::StatusOr<EvaluationResult> Evaluate(const Module& module) override;

  const GpuPerformanceModel& model() const { return model_; }
  int64_t cache_hits() const { return cache_hits_; }
  int64_t cache_misses() const { return cache_misses_; }
  int64_t cache_size() const { return static_cast<int64_t>(cache_.size()); }
  void ClearCache() { cache_.clear(); }

  // The structural hash the cache uses (exposed for tests).
  uint64_t KernelKey(const Instruction& inst);

 private:
  struct CachedKernel {
    double flops = 0;
    double transcendentals = 0;
    double bytes = 0;
    double compute_seconds = 0;
    double memory_seconds = 0;
    double exec_seconds = 0;
    double launch_seconds = 0;
    EmitterKind emitter = EmitterKind::kLoop;
    bool unknown_custom_call = false;
  };
  struct Accounting;

  absl::Status AccountComputation(const Computation& computation,
                                  double launches, int depth, Accounting* acc);
  absl::Status AccountInstruction(const Computation& computation,
                                  const Instruction& inst, double launches,
                                  int depth, Accounting* acc);
  absl::StatusOr<const CachedKernel*> Kernel(const Instruction& inst);
  uint64_t ComputationKey(const Computation& computation);

  GpuPerformanceModel model_;
  EvaluatorOptions options_;
  absl::flat_hash_map<uint64_t, CachedKernel> cache_;
  // Structural keys of called computations, for one Evaluate call.
  absl::flat_hash_map<const Computation*, uint64_t> computation_keys_;
  // The instructions of the computation walked at each call depth (a deque:
  // growing it keeps the deeper walks' lists in place).
  std::deque<std::vector<const Instruction*>> walk_buffers_;
  int64_t cache_hits_ = 0;
  int64_t cache_misses_ = 0;
};

// JSON of a result: module, device, backend, total_seconds, kernel_count,
// kernel_launches, flops, transcendentals, bytes_accessed, flags, kernels
// (when `per_kernel`), durations when measured, and outputs when present
// (as their text).
std::string EvaluationResultToJson(const EvaluationResult& result,
                                   bool per_kernel, int indent = 2);

}  // namespace hlogym

#endif  // HLOGYM_COST_EVALUATOR_H_
