#include "hlogym/search/search_util.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

// All-original steps end a decision loop at once; a pipeline pauses only
// at its finitely many dry passes, each loop at most its iteration limit.
// This bound only guards against a pipeline that never ends.
constexpr int64_t kMaxFinishSteps = 100000;

}  // namespace

absl::Status CheckSearchStart(const Env& start, std::string_view agent) {
  if (start.paused() || start.done()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      StrCat(agent,
             ": the environment has no started pipeline (call "
             "StartPipeline first)"));
}

absl::StatusOr<std::unique_ptr<Env>> StepFork(
    const Env& env, std::span<const int64_t> decision) {
  std::unique_ptr<Env> child = env.Fork();
  HLOGYM_RETURN_IF_ERROR(child->Step(decision).status());
  return child;
}

SearchContext::SearchContext(const AgentOptions& options, int64_t budget)
    : options_(options),
      budget_(budget),
      start_(std::chrono::steady_clock::now()) {}

absl::StatusOr<double> SearchContext::Evaluate(Env& env) {
  ++evaluations_;
  HLOGYM_ASSIGN_OR_RETURN(double s, env.StopSeconds());
  if (evaluations_ % kReportEvery == 0) Report();
  return s;
}

double SearchContext::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start_)
      .count();
}

bool SearchContext::TimeUp() {
  if (options_.time_limit_seconds > 0 &&
      Elapsed() >= options_.time_limit_seconds) {
    timed_out_ = true;
  }
  return timed_out_;
}

void SearchContext::Report() const {
  if (!options_.progress) return;
  SearchProgress p;
  p.evaluations = evaluations_;
  p.elapsed_seconds = Elapsed();
  p.best_seconds = best_seconds_;
  p.steps = steps_;
  options_.progress(p);
}

void SearchContext::Finish(SearchResult& result) const {
  result.evaluations = evaluations_;
  result.search_seconds = Elapsed();
  result.timed_out = timed_out_;
}

namespace {

template <typename Policy>
absl::Status FinishWith(Env& env, std::vector<JointDecision>* trajectory,
                        std::string_view what, Policy policy) {
  for (int64_t i = 0; env.paused(); ++i) {
    if (i == kMaxFinishSteps) {
      return absl::InternalError(StrCat("the pipeline '", env.pipeline_name(),
                                        "' did not end after ", kMaxFinishSteps,
                                        " ", what, " steps"));
    }
    JointDecision d = policy(env.ChoiceCounts());
    HLOGYM_RETURN_IF_ERROR(env.Step(d).status());
    if (trajectory != nullptr) trajectory->push_back(std::move(d));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status FinishWithOriginals(Env& env,
                                 std::vector<JointDecision>* trajectory) {
  return FinishWith(
      env, trajectory, "all-original",
      [](const std::vector<int64_t>& c) { return AllOriginal(c); });
}

absl::Status FinishWithPickFirst(Env& env,
                                 std::vector<JointDecision>* trajectory) {
  return FinishWith(env, trajectory, "pick-first",
                    [](const std::vector<int64_t>& c) { return AllFirst(c); });
}

SearchRng::SearchRng(uint64_t seed) : key_(SplitMix64(seed)) {}

uint64_t SearchRng::Next() { return SplitMix64(key_ + counter_++); }

int64_t SearchRng::Uniform(int64_t n) {
  const uint64_t un = static_cast<uint64_t>(n);
  // Values below 2^64 mod n would make the low residues more likely.
  const uint64_t threshold = (0 - un) % un;
  while (true) {
    uint64_t x = Next();
    if (x >= threshold) return static_cast<int64_t>(x % un);
  }
}

int64_t ChoiceProduct(std::span<const int64_t> counts, int64_t cap) {
  int64_t p = 1;
  for (int64_t c : counts) {
    if (c <= 0) return 0;
    if (p > cap / c) return cap + 1;
    p *= c;
  }
  return p > cap ? cap + 1 : p;
}

JointDecision AllOriginal(std::span<const int64_t> counts) {
  return JointDecision(counts.size(), 0);
}

JointDecision AllFirst(std::span<const int64_t> counts) {
  JointDecision d(counts.size());
  for (size_t j = 0; j < counts.size(); ++j) d[j] = counts[j] > 1 ? 1 : 0;
  return d;
}

JointDecision RandomDecision(std::span<const int64_t> counts, SearchRng& rng) {
  JointDecision d(counts.size());
  for (size_t j = 0; j < counts.size(); ++j) d[j] = rng.Uniform(counts[j]);
  return d;
}

absl::StatusOr<std::vector<JointDecision>> EnumerateJointDecisions(
    std::span<const int64_t> counts, int64_t limit) {
  const int64_t total = ChoiceProduct(counts, limit);
  if (total > limit) {
    return absl::InvalidArgumentError(
        StrCat("the state has more than ", limit, " joint decisions (",
               counts.size(), " alternatives nodes)"));
  }
  std::vector<JointDecision> out;
  out.reserve(total);
  JointDecision d(counts.size(), 0);
  for (int64_t k = 0; k < total; ++k) {
    out.push_back(d);
    // Odometer increment, last node fastest.
    for (size_t j = counts.size(); j-- > 0;) {
      if (++d[j] < counts[j]) break;
      d[j] = 0;
    }
  }
  return out;
}

std::vector<JointDecision> GreedyCandidates(std::span<const int64_t> counts) {
  std::vector<JointDecision> out;
  absl::flat_hash_set<JointDecision> seen;
  auto add = [&](JointDecision d) {
    if (seen.insert(d).second) out.push_back(std::move(d));
  };
  add(AllOriginal(counts));
  add(AllFirst(counts));
  for (size_t j = 0; j < counts.size(); ++j) {
    for (int64_t c = 1; c < counts[j]; ++c) {
      JointDecision d = AllOriginal(counts);
      d[j] = c;
      add(std::move(d));
    }
  }
  return out;
}

std::vector<JointDecision> SampleJointDecisions(std::span<const int64_t> counts,
                                                int64_t n, uint64_t seed) {
  std::vector<JointDecision> out;
  if (n <= 0) return out;
  absl::flat_hash_set<JointDecision> seen;
  auto add = [&](JointDecision d) {
    if (static_cast<int64_t>(out.size()) < n && seen.insert(d).second) {
      out.push_back(std::move(d));
    }
  };
  const JointDecision first = AllFirst(counts);
  add(first);
  add(AllOriginal(counts));
  for (size_t j = 0; j < counts.size(); ++j) {
    for (int64_t c = 0; c < counts[j]; ++c) {
      if (static_cast<int64_t>(out.size()) >= n) return out;
      if (c == first[j]) continue;
      JointDecision d = first;
      d[j] = c;
      add(std::move(d));
    }
  }
  // Random draws: the space is larger than n (or this is not reached), so
  // duplicates are rare; the attempt bound only keeps tiny spaces finite.
  const int64_t space = ChoiceProduct(counts, n);
  const int64_t want = std::min(n, space);
  SearchRng rng(seed);
  for (int64_t attempts = 0;
       static_cast<int64_t>(out.size()) < want && attempts < 8 * n + 64;
       ++attempts) {
    add(RandomDecision(counts, rng));
  }
  return out;
}

}  // namespace hlogym
