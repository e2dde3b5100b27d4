#ifndef HLOGYM_IR_PARALLEL_H_
#define HLOGYM_IR_PARALLEL_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace hlogym {

// Threads that run one job at a time. The threads live as long as the
// pool: a thread started per job would begin with cold allocator caches
// (a search's rollouts ran about a third slower per step on them).
class ThreadPool {
 public:
  // `size - 1` threads of its own; the caller's thread is the last one.
  explicit ThreadPool(int64_t size);
  ~ThreadPool();  // joins the threads
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int64_t size() const { return static_cast<int64_t>(threads_.size()) + 1; }

  // Calls job(t) for t in [0, n), n at most size(), and returns when every
  // call has returned; job(0) runs on the calling thread. One Run at a
  // time.
  void Run(int64_t n, absl::FunctionRef<void(int64_t)> job);

 private:
  void Loop(int64_t t);

  std::mutex mu_;
  std::condition_variable start_;
  std::condition_variable done_;
  const absl::FunctionRef<void(int64_t)>* job_ = nullptr;
  int64_t helpers_ = 0;
  int64_t pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// The most threads ParallelFor uses, the caller's included: the
// HLOGYM_THREADS environment variable when set to a positive number, else
// the hardware's thread count (at most 64).
int64_t Parallelism();

// Overrides Parallelism() for the whole process (1: everything serial;
// 0 or less: back to the default).
void SetParallelism(int64_t threads);

// Calls fn(i) once for every i in [0, n), spread over up to Parallelism()
// threads (the caller's and a shared pool's) in chunks taken as threads
// free up. Returns when every call has returned. Callers must make their
// results independent of which thread runs which i.
//
// Runs everything on the caller's thread when n < min_parallel, when
// Parallelism() is 1, or when another ParallelFor holds the pool (a call
// from inside fn, or from search workers that already keep the cores
// busy): the pool is never oversubscribed.
void ParallelFor(int64_t n, int64_t min_parallel,
                 absl::FunctionRef<void(int64_t)> fn);

}  // namespace hlogym

#endif  // HLOGYM_IR_PARALLEL_H_
