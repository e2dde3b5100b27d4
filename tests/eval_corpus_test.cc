// Runs the interpreter over every module of the shared corpus it can run.
//
// Eligible modules are the valid ones that use neither custom-call nor
// multi-device collectives (replica or partition counts above one, replica
// groups or permutations over several devices, send/recv) and whose arrays
// fit the size cap below. Each runs on inputs from GenerateInputs(seed 0),
// with `{...}` constants as zeros. At least 97% of the eligible modules must
// run without error; the others are listed, with a reason each, in
// tests/eval_known_failures.tsv, and a listed module that starts to run is
// reported so the list stays true.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "tests/corpus_util.h"

namespace hlogym {
namespace {

// The size cap: modules with an array over 16 MiB, or a dot or convolution
// of more than 2^30 multiply-adds, are not run, and a run fails when its
// live values would exceed 1 GiB.
constexpr int64_t kMaxArrayBytes = int64_t{16} << 20;
constexpr int64_t kMaxMultiplyAdds = int64_t{1} << 30;
constexpr int64_t kMaxLiveBytes = int64_t{1} << 30;
constexpr int64_t kMaxWhileIterations = 20000;
constexpr double kTimeLimitSeconds = 10;

int64_t ArrayBytes(const Shape& s) {
  if (s.IsTuple()) {
    int64_t m = 0;
    for (const Shape& e : s.tuple_shapes()) m = std::max(m, ArrayBytes(e));
    return m;
  }
  if (!s.IsArray()) return 0;
  return s.ElementsIn() * ByteWidth(s.element_type());
}

int64_t LargestGroupSize(const Instruction& inst) {
  const auto& rg = inst.attrs().replica_groups;
  if (!rg.has_value()) return 1;
  if (rg->form == ReplicaGroups::Form::kMesh) return 2;
  int64_t largest = 1;
  for (const auto& g : rg->Expand()) {
    largest = std::max<int64_t>(largest, static_cast<int64_t>(g.size()));
  }
  return largest;
}

// Multiply-adds of a dot or convolution (0 for other instructions).
int64_t MultiplyAdds(const Instruction& inst) {
  if (!inst.shape().IsArray() || inst.operand_count() < 2) return 0;
  const Shape& rhs = inst.operand(1)->shape();
  if (inst.opcode() == Opcode::kDot && inst.attrs().dot_dnums.has_value()) {
    int64_t k = 1;
    for (int64_t d : inst.attrs().dot_dnums->rhs_contracting_dimensions) {
      if (d >= 0 && d < rhs.rank()) k *= rhs.dimensions(d);
    }
    return inst.shape().ElementsIn() * k;
  }
  if (inst.opcode() == Opcode::kConvolution &&
      inst.attrs().conv_dnums.has_value()) {
    int64_t out_features = 1;
    int64_t d = inst.attrs().conv_dnums->kernel_output_feature_dimension;
    if (d >= 0 && d < rhs.rank()) out_features = rhs.dimensions(d);
    return inst.shape().ElementsIn() *
           (rhs.ElementsIn() / std::max<int64_t>(out_features, 1));
  }
  return 0;
}

// Why a module is not eligible, or "" if it is.
std::string Ineligible(const Module& m) {
  if (m.config().replica_count.value_or(1) > 1 ||
      m.config().num_partitions.value_or(1) > 1) {
    return "multi-device";
  }
  std::string why;
  for (const Computation* c : m.MakeComputationPostOrder()) {
    c->ForEachInstruction([&](const Instruction* inst) {
      if (!why.empty()) return;
      switch (inst->opcode()) {
        case Opcode::kCustomCall:
          why = "custom-call";
          return;
        case Opcode::kSend:
        case Opcode::kSendDone:
        case Opcode::kRecv:
        case Opcode::kRecvDone:
        case Opcode::kRaggedAllToAll:
          why = "multi-device";
          return;
        case Opcode::kCollectivePermute:
        case Opcode::kCollectivePermuteStart:
          for (const auto& [s, t] : inst->attrs().source_target_pairs) {
            if (s != t) why = "multi-device";
          }
          return;
        default:
          break;
      }
      if (LargestGroupSize(*inst) > 1) {
        why = "multi-device";
        return;
      }
      if (ArrayBytes(inst->shape()) > kMaxArrayBytes ||
          MultiplyAdds(*inst) > kMaxMultiplyAdds) {
        why = "size cap";
      }
    });
    if (!why.empty()) return why;
  }
  return "";
}

std::map<std::string, std::string> LoadKnownFailures() {
  std::map<std::string, std::string> known;
  std::ifstream in(std::string(HLOGYM_SOURCE_DIR) +
                   "/tests/eval_known_failures.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    known[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return known;
}

TEST(InterpreterCorpus, RunsEligibleModules) {
  const std::string shared = SharedDir();
  if (shared.empty()) {
    GTEST_SKIP() << "../shared not found: interpreter corpus test skipped";
  }
  const auto known = LoadKnownFailures();
  const bool verbose = std::getenv("HLOGYM_VERBOSE") != nullptr;
  std::map<std::string, int> skipped;
  int eligible = 0, ran = 0;
  std::vector<std::string> unexpected, stale;
  std::vector<std::pair<double, std::string>> slowest;
  for (const char* folder : {"hloenv", "models", "xla"}) {
    for (const CorpusEntry& e : LoadManifest(shared, folder)) {
      if (e.expect_error) continue;
      auto m = ParseModuleFile(e.path);
      if (!m.ok() || !VerifyModule(**m, {}, e.path).ok()) {
        ++skipped["invalid"];
        continue;
      }
      std::string why = Ineligible(**m);
      if (!why.empty()) {
        ++skipped[why];
        continue;
      }
      ++eligible;
      const std::string key = std::string(folder) + "/" + e.file;
      if (verbose) std::fprintf(stderr, "run %s\n", key.c_str());
      auto start = std::chrono::steady_clock::now();
      absl::Status status;
      auto inputs =
          GenerateInputs(ParameterShapes(*(*m)->entry_computation()), 0);
      if (!inputs.ok()) {
        status = inputs.status();
      } else {
        InterpreterOptions options;
        options.max_live_bytes = kMaxLiveBytes;
        options.max_while_iterations = kMaxWhileIterations;
        options.unknown_constants_as_zero = true;
        options.time_limit_seconds = kTimeLimitSeconds;
        Interpreter interp(options);
        status = interp.Run(**m, *inputs).status();
      }
      double secs = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
      slowest.emplace_back(secs, key);
      if (secs > 2) std::printf("  slow: %.1f s %s\n", secs, key.c_str());
      const bool listed = known.count(key) > 0;
      if (status.ok()) {
        ++ran;
        if (listed) stale.push_back(key);
      } else if (!listed) {
        unexpected.push_back(key + ": " + std::string(status.message()));
      }
    }
  }
  std::sort(slowest.rbegin(), slowest.rend());
  std::string skip_text;
  for (const auto& [why, n] : skipped) {
    skip_text += "  not eligible (" + why + "): " + std::to_string(n) + "\n";
  }
  std::string slow_text;
  for (size_t i = 0; i < slowest.size() && i < 5; ++i) {
    slow_text += "  " + std::to_string(slowest[i].first) + " s  " +
                 slowest[i].second + "\n";
  }
  const double share = eligible ? static_cast<double>(ran) / eligible : 1.0;
  std::printf(
      "interpreter corpus: %d eligible, %d ran (%.2f%%), %zu listed "
      "failures\n%sslowest:\n%s",
      eligible, ran, 100.0 * share, known.size(), skip_text.c_str(),
      slow_text.c_str());
  for (size_t i = 0; i < unexpected.size() && i < 80; ++i) {
    ADD_FAILURE() << "unlisted failure: " << unexpected[i];
  }
  EXPECT_TRUE(unexpected.empty()) << unexpected.size() << " unlisted failures";
  for (const std::string& s : stale) {
    ADD_FAILURE() << "listed in eval_known_failures.tsv but runs now: " << s;
  }
  EXPECT_GE(share, 0.97) << ran << " of " << eligible
                         << " eligible modules ran";
}

}  // namespace
}  // namespace hlogym
