// Runs the interpreter over every module of the shared corpus it can run.
//
// Eligible modules are the valid ones that use neither custom-call nor
// multi-device collectives (replica or partition counts above one, replica
// groups or permutations over several devices, send/recv) and whose arrays
// fit the size cap below. Each runs on inputs from GenerateInputs(seed 0),
// with `{...}` constants as zeros. The others are listed, with a category and
// a reason each, in tests/eval_known_failures.tsv; a listed module that
// starts to run is reported so the list stays true. At least 97% of the
// eligible modules that can end must run: modules whose while condition is
// the constant true ([nonterminating], checked) are counted apart. Modules
// listed as [slow] run under a short time limit, and must reach it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "tests/corpus_util.h"

namespace hlogym {
namespace {

// The size cap: modules with an array over 16 MiB, or a dot, convolution or
// window reduction of more than 2^30 multiply-adds or reducer calls, are not
// run, and a run fails when its
// live values would exceed 1 GiB.
constexpr int64_t kMaxArrayBytes = int64_t{16} << 20;
constexpr int64_t kMaxMultiplyAdds = int64_t{1} << 30;
constexpr int64_t kMaxLiveBytes = int64_t{1} << 30;
constexpr int64_t kMaxWhileIterations = 200000;
// Only a guard against hangs: no listed result depends on timing. Wall
// time, so generous: CI runs other tests beside this one on its 2 cores,
// and 60 s failed a module there.
constexpr double kTimeLimitSeconds = 300;
// Listed [slow] modules would spend the whole guard (three of them took 15
// of the test's 25 CPU minutes); they only need to show they still reach a
// limit.
constexpr double kListedSlowSeconds = 10;
// Sanitized and unoptimised builds run several times slower: there a run
// that reaches the time limit is reported, not failed (make check-full).
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
constexpr bool kTimingMeaningful = false;
#else
constexpr bool kTimingMeaningful = true;
#endif

int64_t ArrayBytes(const Shape& s) {
  if (s.IsTuple()) {
    int64_t m = 0;
    for (const Shape& e : s.tuple_shapes()) m = std::max(m, ArrayBytes(e));
    return m;
  }
  if (!s.IsArray()) return 0;
  return s.ElementsIn() * ByteWidth(s.element_type());
}

// Multiply-adds of a dot or convolution, or reducer calls of a window
// reduction (0 for other instructions).
int64_t MultiplyAdds(const Instruction& inst) {
  if (inst.operand_count() < 2) return 0;
  const Shape& rhs = inst.operand(1)->shape();
  if (inst.opcode() == Opcode::kDot && inst.attrs().dot_dnums.has_value()) {
    int64_t k = 1;
    for (int64_t d : inst.attrs().dot_dnums->rhs_contracting_dimensions) {
      if (d >= 0 && d < rhs.rank()) k *= rhs.dimensions(d);
    }
    return inst.shape().IsArray() ? inst.shape().ElementsIn() * k : 0;
  }
  if (inst.opcode() == Opcode::kConvolution &&
      inst.attrs().conv_dnums.has_value()) {
    int64_t out_features = 1;
    int64_t d = inst.attrs().conv_dnums->kernel_output_feature_dimension;
    if (d >= 0 && d < rhs.rank()) out_features = rhs.dimensions(d);
    if (!inst.shape().IsArray() || !rhs.IsArray()) return 0;
    return inst.shape().ElementsIn() *
           (rhs.ElementsIn() / std::max<int64_t>(out_features, 1));
  }
  if ((inst.opcode() == Opcode::kReduceWindow ||
       inst.opcode() == Opcode::kSelectAndScatter) &&
      inst.attrs().window.has_value()) {
    int64_t window = 1;
    for (const WindowDimension& d : inst.attrs().window->dimensions) {
      window *= std::max<int64_t>(d.size, 1);
    }
    const Shape& out =
        inst.shape().IsTuple() && inst.shape().tuple_shapes_size()
            ? inst.shape().tuple_shapes(0)
            : inst.shape();
    const Shape& in = inst.operand(0)->shape();
    return std::max(out.IsArray() ? out.ElementsIn() : 0,
                    in.IsArray() ? in.ElementsIn() : 0) *
           window;
  }
  return 0;
}

// A gathering or scattering collective whose result differs in shape from
// its operand: it exchanges data with other participants.
bool ChangesShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
      break;
    default:
      return false;
  }
  const Shape& r = inst.shape();
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& o = inst.operand(i)->shape();
    const Shape* leaf = &r;
    if (r.IsTuple()) {
      // all-gather-start: (operands, results); variadic: one per operand.
      const Shape& results =
          inst.opcode() == Opcode::kAllGatherStart && r.tuple_shapes_size() == 2
              ? r.tuple_shapes(1)
              : r;
      if (results.IsTuple()) {
        if (i >= results.tuple_shapes_size()) return false;
        leaf = &results.tuple_shapes(i);
      } else {
        leaf = &results;
      }
    }
    if (o.IsArray() && leaf->IsArray() &&
        o.dimensions() != leaf->dimensions()) {
      return true;
    }
  }
  return false;
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
      // A collective that changes its operand's shape gathers from or
      // scatters to other participants.
      if (ChangesShape(*inst)) {
        why = "multi-device";
        return;
      }
      const auto& groups = inst->attrs().replica_groups;
      if (groups.has_value() && groups->LargestGroupSize() != 1) {
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
  int eligible = 0, ran = 0, nonterminating = 0;
  std::vector<std::string> unexpected, stale;
  std::vector<std::pair<double, std::string>> slowest;
  std::vector<std::pair<std::string, CorpusEntry>> entries;
  for (const char* folder : {"hloenv", "models", "xla"}) {
    for (const CorpusEntry& e : LoadManifest(shared, folder)) {
      if (!e.expect_error) entries.emplace_back(folder, e);
    }
  }
  // Modules are independent: two workers share the list (CI has 2 cores).
  std::mutex mu;
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < entries.size(); i = next++) {
      const auto& [folder, e] = entries[i];
      auto m = ParseModuleFile(e.path);
      if (!m.ok() || !VerifyModule(**m, {}, e.path).ok()) {
        std::lock_guard<std::mutex> lock(mu);
        ++skipped["invalid"];
        continue;
      }
      std::string why = Ineligible(**m);
      if (!why.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        ++skipped[why];
        continue;
      }
      const std::string key = folder + "/" + e.file;
      const auto it = known.find(key);
      const bool listed = it != known.end();
      auto listed_as = [&](std::string_view category) {
        return listed && it->second.rfind(category, 0) == 0;
      };
      const bool listed_slow = listed_as("[slow]");
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
        options.time_limit_seconds =
            listed_slow ? kListedSlowSeconds : kTimeLimitSeconds;
        Interpreter interp(options);
        status = interp.Run(**m, *inputs).status();
      }
      double secs = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
      std::lock_guard<std::mutex> lock(mu);
      ++eligible;
      slowest.emplace_back(secs, key);
      const std::string message(status.message());
      if (status.ok()) {
        ++ran;
        if (listed) stale.push_back(key);
      } else if (!listed) {
        if (!kTimingMeaningful &&
            message.find("exceeded its time limit") != std::string::npos) {
          std::printf("SLOW (sanitized or unoptimised build) %s: %s\n",
                      key.c_str(), message.c_str());
        } else {
          unexpected.push_back(key + ": " + message);
        }
      } else if (verbose) {
        std::printf("LISTED %s: %s\n", key.c_str(), message.c_str());
      }
      // Categories are checked, not just claimed.
      if (!status.ok() && listed_slow &&
          message.find("exceeded its time limit") == std::string::npos) {
        unexpected.push_back(key + " is listed as slow but: " + message);
      }
      if (!status.ok() && listed_as("[nonterminating]")) {
        if (message.find("the loop never ends") == std::string::npos) {
          unexpected.push_back(key +
                               " is listed as non-terminating but: " + message);
        }
        ++nonterminating;
      }
    }
  };
  std::thread helper(worker);
  worker();
  helper.join();
  std::sort(unexpected.begin(), unexpected.end());
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
  const int terminating = eligible - nonterminating;
  const double share_terminating =
      terminating ? static_cast<double>(ran) / terminating : 1.0;
  std::printf(
      "interpreter corpus: %d eligible, %d ran (%.2f%%); %d never end (a "
      "while condition that is the constant true); %d of %d that can end "
      "ran (%.2f%%); %zu listed failures\n%sslowest:\n%s",
      eligible, ran, 100.0 * share, nonterminating, ran, terminating,
      100.0 * share_terminating, known.size(), skip_text.c_str(),
      slow_text.c_str());
  for (const std::string& u : unexpected) std::printf("FAILED %s\n", u.c_str());
  for (size_t i = 0; i < unexpected.size() && i < 80; ++i) {
    ADD_FAILURE() << "unlisted failure: " << unexpected[i];
  }
  EXPECT_TRUE(unexpected.empty()) << unexpected.size() << " unlisted failures";
  for (const std::string& s : stale) {
    ADD_FAILURE() << "listed in eval_known_failures.tsv but runs now: " << s;
  }
  // Modules that can never finish are not held against the interpreter;
  // the plain share is printed above.
  EXPECT_GE(share_terminating, 0.97)
      << ran << " of " << terminating << " eligible modules that can end ran";
}

}  // namespace
}  // namespace hlogym
