// Subgraph extraction: cuts small connected subgraphs out of a module and
// turns each into a standalone module (a dataset of small HLO programs).
//
// What is cut. Any computation that is not a fusion body, an async wrapper
// or an applied computation (reducer, comparator, map/scatter body) is a
// source: the entry, while bodies and conditions, conditional branches and
// call targets. From a seed instruction the subgraph grows by adding random
// neighbours (operands and users) until it reaches a size drawn uniformly
// from [min_instructions, max_instructions].
//
// What may be inside. Parameters are never inside (they are the cut). Not
// allowed either: side-effecting instructions (rng, infeed, send, ...),
// token-producing ones (after-all, add-dependency), collectives and async
// pairs, custom-calls (the reference interpreter cannot run them),
// `alternatives`, tuple instructions, unbounded dynamic shapes, and
// instructions calling a computation that contains any of these. A
// get-tuple-element is inside only together with its tuple operand, so cut
// inputs are the arrays a get-tuple-element produces, not whole tuples.
// Instructions that call computations (reduce, while, sort, call, fusion,
// ...) keep them: the called computations are copied into the new module.
//
// The new module. Operands from outside become parameters, numbered in the
// order they are first used (members in the source's post-order, operands
// in order). Small known constants used by members are copied in instead
// (at most kMaxCopiedConstantElements elements) and are never outputs.
// Outputs are the members whose value is used outside the subgraph, that
// are the source computation's root, or that have no users; several
// outputs are returned as a tuple. Control edges are dropped.
//
// Size. The instruction count of a subgraph is the number of
// non-parameter instructions of the new entry computation: copied
// constants count, and so does the output tuple when there is one;
// instructions of called computations do not (a while loop counts 1).
// SubgraphInstructionCount computes it from a module.
//
// Subgraphs need not be convex: a path leaving and re-entering the
// subgraph is cut like any other edge (its re-entry becomes a parameter).
//
// Checks. Each subgraph must pass VerifyModule and run in the reference
// interpreter on GenerateInputs(seed 0) within the time and cost limits;
// the others are dropped and counted. Subgraphs are deduplicated by DagHash
// over everything one SubgraphExtractor produced.
//
// Determinism. Seeds are visited in an order shuffled by an mt19937_64
// seeded from (options.seed, DagHash of the source module), with
// portable draws (no std distributions), so the same module and seed give
// the same subgraphs on every platform, whatever other modules the
// extractor saw before (only dedup and the total limit depend on those).
#ifndef HLOGYM_DATA_EXTRACT_H_
#define HLOGYM_DATA_EXTRACT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "hlogym/ir/module.h"

namespace hlogym {

inline constexpr int64_t kMaxCopiedConstantElements = 4096;

struct ExtractOptions {
  int64_t min_instructions = 10;
  int64_t max_instructions = 20;
  // Most subgraphs in total (over every module one extractor sees); 0 = no
  // limit.
  int64_t limit = 0;
  // Most subgraphs from one module, so big modules do not dominate; 0 = no
  // limit.
  int64_t per_module_limit = 50;
  uint64_t seed = 0;
  // Seeds tried per module before giving up on it; 0 = 20 per wanted
  // subgraph (at least 1000), or every seed when per_module_limit is 0.
  int64_t max_attempts_per_module = 0;
  // Interpreter check: wall-clock limit of one run, while-loop iteration
  // cap, and live-memory cap.
  double time_limit_seconds = 1.0;
  int64_t max_while_iterations = 10000;
  int64_t max_live_bytes = int64_t{1} << 30;
  // Subgraphs whose cost analysis (one execution of every instruction of
  // the entry) exceeds these are dropped before running them: a single
  // large dot or convolution cannot be interrupted by the time limit.
  double max_flops = 2e8;
  double max_bytes_accessed = 256.0 * (1 << 20);
  // Same for the total elements of the generated inputs.
  int64_t max_input_elements = int64_t{1} << 22;
  // Seed of the generated inputs of the interpreter check.
  uint64_t input_seed = 0;
};

struct ExtractedSubgraph {
  std::unique_ptr<Module> module;
  uint64_t hash = 0;  // DagHash(*module)
  std::string source_computation;
  int64_t instruction_count = 0;  // SubgraphInstructionCount(*module)
  int64_t parameter_count = 0;
  int64_t output_count = 0;
};

struct ExtractStats {
  int64_t modules = 0;
  int64_t attempts = 0;    // seeds tried
  int64_t too_small = 0;   // growth could not reach min_instructions
  int64_t duplicates = 0;  // DagHash already seen (kept or dropped)
  int64_t rejected_verifier = 0;
  int64_t rejected_interpreter = 0;
  // Over max_flops, max_bytes_accessed or max_input_elements.
  int64_t rejected_cost = 0;
  int64_t extracted = 0;
  int64_t rejected() const {
    return rejected_verifier + rejected_interpreter + rejected_cost;
  }
};

// Non-parameter instructions of the entry computation.
int64_t SubgraphInstructionCount(const Module& module);

// Extracts from a sequence of modules, deduplicating across all of them.
class SubgraphExtractor {
 public:
  // Fails on invalid options (min < 1, max < min, negative limits).
  static absl::StatusOr<SubgraphExtractor> Create(
      const ExtractOptions& options);

  // Subgraphs of `module`, in the order they were found. Empty once the
  // total limit is reached.
  std::vector<ExtractedSubgraph> Extract(const Module& module);

  bool LimitReached() const {
    return options_.limit > 0 && stats_.extracted >= options_.limit;
  }
  const ExtractStats& stats() const { return stats_; }
  const ExtractOptions& options() const { return options_; }

 private:
  explicit SubgraphExtractor(const ExtractOptions& options)
      : options_(options) {}

  ExtractOptions options_;
  ExtractStats stats_;
  absl::flat_hash_set<uint64_t> seen_;
};

// One module on its own (a fresh extractor).
absl::StatusOr<std::vector<ExtractedSubgraph>> ExtractSubgraphs(
    const Module& module, const ExtractOptions& options,
    ExtractStats* stats = nullptr);

}  // namespace hlogym

#endif  // HLOGYM_DATA_EXTRACT_H_
