#include "hlogym/ir/parallel.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

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

// The pool ParallelFor uses, started when first needed and kept for the
// process's life. One ParallelFor holds it at a time.
struct SharedPool {
  std::mutex busy;
  std::unique_ptr<ThreadPool> pool;  // grown while `busy` is held
};

// Never destroyed, so that no thread outlives its pool during exit.
SharedPool& GetSharedPool() {
  static SharedPool* shared = new SharedPool();
  return *shared;
}

}  // namespace

ThreadPool::ThreadPool(int64_t size) {
  for (int64_t t = 1; t < size; ++t) {
    threads_.emplace_back([this, t] { Loop(t); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::Run(int64_t n, absl::FunctionRef<void(int64_t)> job) {
  const int64_t helpers =
      std::clamp<int64_t>(n - 1, 0, static_cast<int64_t>(threads_.size()));
  if (helpers == 0) {
    job(0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &job;
    helpers_ = helpers;
    pending_ = helpers;
    ++generation_;
  }
  start_.notify_all();
  job(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::Loop(int64_t t) {
  uint64_t seen = 0;
  while (true) {
    const absl::FunctionRef<void(int64_t)>* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (t <= helpers_) job = job_;
    }
    if (job == nullptr) continue;
    (*job)(t);
    std::lock_guard<std::mutex> lock(mu_);
    if (--pending_ == 0) done_.notify_one();
  }
}

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
  SharedPool& shared = GetSharedPool();
  if (threads <= 1 || n < min_parallel || !shared.busy.try_lock()) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::lock_guard<std::mutex> hold(shared.busy, std::adopt_lock);
  if (shared.pool == nullptr || shared.pool->size() < threads) {
    shared.pool = std::make_unique<ThreadPool>(threads);
  }
  // A few chunks per thread, so that uneven items even out.
  const int64_t chunk = std::max<int64_t>(1, n / (threads * 8));
  std::atomic<int64_t> next{0};
  shared.pool->Run(threads, [&](int64_t) {
    while (true) {
      const int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= n) return;
      const int64_t end = std::min(n, begin + chunk);
      for (int64_t i = begin; i < end; ++i) fn(i);
    }
  });
}

}  // namespace hlogym
