#include "hlogym/ir/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace hlogym {
namespace {

// Restores the default thread count when a test ends.
class ParallelForTest : public ::testing::Test {
 protected:
  void TearDown() override { SetParallelism(0); }
};

TEST_F(ParallelForTest, CallsEveryIndexOnce) {
  SetParallelism(4);
  for (int64_t n : {0, 1, 5, 63, 64, 1000, 100003}) {
    std::vector<std::atomic<int>> calls(n);
    ParallelFor(n, 1, [&](int64_t i) { calls[i].fetch_add(1); });
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(calls[i].load(), 1) << "n=" << n << " i=" << i;
    }
  }
}

TEST_F(ParallelForTest, UsesSeveralThreadsForLargeWork) {
  SetParallelism(4);
  std::mutex mu;
  std::set<std::thread::id> seen;
  std::atomic<int64_t> sum{0};
  ParallelFor(4000, 1, [&](int64_t i) {
    // Slow enough that helpers get chunks before the caller ends.
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    sum.fetch_add(i);
    std::lock_guard<std::mutex> lock(mu);
    seen.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(sum.load(), int64_t{4000} * 3999 / 2);
  EXPECT_GT(seen.size(), 1u);
  EXPECT_LE(seen.size(), 4u);
}

TEST_F(ParallelForTest, SmallWorkAndOneThreadStayOnTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  SetParallelism(4);
  std::vector<std::thread::id> ids(50);
  ParallelFor(50, 64, [&](int64_t i) { ids[i] = std::this_thread::get_id(); });
  for (const std::thread::id& id : ids) EXPECT_EQ(id, caller);
  SetParallelism(1);
  EXPECT_EQ(Parallelism(), 1);
  std::vector<std::thread::id> more(5000);
  ParallelFor(5000, 1,
              [&](int64_t i) { more[i] = std::this_thread::get_id(); });
  for (const std::thread::id& id : more) EXPECT_EQ(id, caller);
}

// A ParallelFor inside another runs on its caller's thread (the pool is
// taken), and still calls every index.
TEST_F(ParallelForTest, NestedCallsRunSerially) {
  SetParallelism(4);
  std::atomic<int64_t> total{0};
  std::atomic<int> nested_off_thread{0};
  ParallelFor(64, 1, [&](int64_t) {
    const std::thread::id outer = std::this_thread::get_id();
    ParallelFor(100, 1, [&](int64_t j) {
      total.fetch_add(j);
      if (std::this_thread::get_id() != outer) nested_off_thread.fetch_add(1);
    });
  });
  EXPECT_EQ(total.load(), int64_t{64} * (99 * 100 / 2));
  EXPECT_EQ(nested_off_thread.load(), 0);
}

TEST(ThreadPoolTest, RunsEachThreadIndexOnceAndJobZeroOnTheCaller) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.size(), 3);
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < 200; ++round) {
    const int64_t n = 1 + round % 3;
    std::vector<std::atomic<int>> calls(3);
    std::vector<std::thread::id> ids(3);
    pool.Run(n, [&](int64_t t) {
      calls[t].fetch_add(1);
      ids[t] = std::this_thread::get_id();
    });
    for (int64_t t = 0; t < 3; ++t) {
      ASSERT_EQ(calls[t].load(), t < n ? 1 : 0) << "round " << round;
    }
    EXPECT_EQ(ids[0], caller);
    for (int64_t t = 1; t < n; ++t) EXPECT_NE(ids[t], caller);
  }
}

TEST(ThreadPoolTest, OneThreadPoolRunsOnTheCaller) {
  ThreadPool pool(1);
  std::thread::id ran;
  pool.Run(4, [&](int64_t t) {
    EXPECT_EQ(t, 0);
    ran = std::this_thread::get_id();
  });
  EXPECT_EQ(ran, std::this_thread::get_id());
}

TEST_F(ParallelForTest, DefaultIsPositive) {
  SetParallelism(0);
  EXPECT_GE(Parallelism(), 1);
  SetParallelism(3);
  EXPECT_EQ(Parallelism(), 3);
}

}  // namespace
}  // namespace hlogym
