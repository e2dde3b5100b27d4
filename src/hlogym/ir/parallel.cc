#include "hlogym/ir/parallel.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace hlogym {

namespace {

constexpr int64_t kMaxThreads = 64;

std::atomic<int64_t> parallelism_override{0};

int64_t DefaultParallelism() {
  static const int64_t value = [] {
    if (const char* env = std::getenv("HLOGYM_THREADS")) {
      int64_t v = 0;
      const char* end = env + std::strlen(env);
      auto r = std::from_chars(env, end, v);
      if (r.ec == std::errc() && r.ptr == end && v > 0) {
        return std::min(v, kMaxThreads);
      }
    }
    const int64_t hw = std::thread::hardware_concurrency();
    return std::clamp<int64_t>(hw, 1, kMaxThreads);
  }();
  return value;
}

// Helper threads for ParallelFor, started when first needed and kept for
// the process's life: a thread started per call would cost more than the
// work of the small calls, and begins with cold allocator caches. One
// ParallelFor holds the pool at a time.
class Pool {
 public:
  bool TryAcquire() { return busy_.try_lock(); }
  void Release() { busy_.unlock(); }

  // Runs `body` on `helpers` pool threads and on the caller's, and returns
  // when all have returned. Only while the pool is held.
  void Run(int64_t helpers, absl::FunctionRef<void()> body) {
    while (static_cast<int64_t>(threads_.size()) < helpers) {
      const int64_t t = static_cast<int64_t>(threads_.size()) + 1;
      threads_.emplace_back([this, t] { Loop(t); });
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &body;
      helpers_ = helpers;
      pending_ = helpers;
      ++generation_;
    }
    start_.notify_all();
    body();
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void Loop(int64_t t) {
    uint64_t seen = 0;
    while (true) {
      const absl::FunctionRef<void()>* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        start_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (t <= helpers_) job = job_;
      }
      if (job == nullptr) continue;
      (*job)();
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex busy_;
  std::mutex mu_;
  std::condition_variable start_;
  std::condition_variable done_;
  const absl::FunctionRef<void()>* job_ = nullptr;
  int64_t helpers_ = 0;
  int64_t pending_ = 0;
  uint64_t generation_ = 0;
  // Never joined: the pool lives until the process ends (see GetPool).
  std::vector<std::thread> threads_;
};

// Never destroyed, so that no thread outlives its pool during exit.
Pool& GetPool() {
  static Pool* pool = new Pool();
  return *pool;
}

}  // namespace

int64_t Parallelism() {
  const int64_t o = parallelism_override.load(std::memory_order_relaxed);
  return o > 0 ? o : DefaultParallelism();
}

void SetParallelism(int64_t threads) {
  parallelism_override.store(std::min(threads, kMaxThreads),
                             std::memory_order_relaxed);
}

void ParallelFor(int64_t n, int64_t min_parallel,
                 absl::FunctionRef<void(int64_t)> fn) {
  if (n <= 0) return;
  const int64_t threads = std::min(Parallelism(), n);
  if (threads <= 1 || n < min_parallel || !GetPool().TryAcquire()) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // A few chunks per thread, so that uneven items even out.
  const int64_t chunk = std::max<int64_t>(1, n / (threads * 8));
  std::atomic<int64_t> next{0};
  auto body = [&] {
    while (true) {
      const int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= n) return;
      const int64_t end = std::min(n, begin + chunk);
      for (int64_t i = begin; i < end; ++i) fn(i);
    }
  };
  GetPool().Run(threads - 1, body);
  GetPool().Release();
}

}  // namespace hlogym
