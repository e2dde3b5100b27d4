#include "hlogym/cost/trip_count.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

struct Loop {
  std::string init = "0";
  std::string direction = "LT";
  std::string bound = "10";
  bool bound_first = false;  // compare(bound, i)
  std::string update = "add";
  std::string step = "1";
  std::string config;  // backend_config of the while
};

std::string LoopText(const Loop& l) {
  std::string cmp = l.bound_first ? "compare(%n, %i)" : "compare(%i, %n)";
  return StrCat(R"(HloModule m
%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant()",
                l.bound, R"()
  ROOT %c = pred[] )",
                cmp, ", direction=", l.direction, R"(
}
%body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
  %s = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %step = s32[] constant()",
                l.step, R"()
  %next = s32[] )",
                l.update, R"((%i, %step)
  %x = f32[4]{0} get-tuple-element(%s), index=1
  ROOT %t = (s32[], f32[4]{0}) tuple(%next, %x)
}
ENTRY %e (p: f32[4]) -> (s32[], f32[4]) {
  %p = f32[4]{0} parameter(0)
  %start = s32[] constant()",
                l.init, R"()
  %init = (s32[], f32[4]{0}) tuple(%start, %p)
  ROOT %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body)",
                l.config.empty() ? "" : ", backend_config=", l.config, R"(
})");
}

std::optional<int64_t> Trips(const Loop& l) {
  auto m = ParseModule(LoopText(l));
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return -12345;
  const Instruction* w = (*m)->entry_computation()->root_instruction();
  return ComputeWhileTripCount(*w);
}

TEST(CostTripCountTest, CountsUp) {
  EXPECT_EQ(Trips({}), 10);
  EXPECT_EQ(Trips({.init = "3"}), 7);
  EXPECT_EQ(Trips({.step = "3"}), 4);                     // 0 3 6 9
  EXPECT_EQ(Trips({.direction = "LE", .step = "2"}), 6);  // 0 2 4 6 8 10
  EXPECT_EQ(Trips({.init = "12"}), 0);
}

TEST(CostTripCountTest, ReversedCompare) {
  // 10 > i
  EXPECT_EQ(Trips({.direction = "GT", .bound_first = true}), 10);
  // 10 >= i
  EXPECT_EQ(Trips({.direction = "GE", .bound_first = true}), 11);
}

TEST(CostTripCountTest, CountsDown) {
  EXPECT_EQ(Trips({.init = "10",
                   .direction = "GT",
                   .bound = "0",
                   .update = "subtract"}),
            10);
  // 10 7 4 1
  EXPECT_EQ(
      Trips({.init = "10", .direction = "GE", .bound = "0", .step = "-3"}), 4);
}

TEST(CostTripCountTest, NotEqual) {
  EXPECT_EQ(Trips({.direction = "NE", .bound = "12", .step = "3"}), 4);
  // 0 3 6 9 12 ... never equals 10.
  EXPECT_EQ(Trips({.direction = "NE", .step = "3"}), std::nullopt);
}

TEST(CostTripCountTest, UnknownOrInfinite) {
  EXPECT_EQ(Trips({.step = "-1"}), std::nullopt);  // never reaches 10
  EXPECT_EQ(Trips({.step = "0"}), std::nullopt);
  EXPECT_EQ(Trips({.update = "multiply", .step = "2"}), std::nullopt);
  EXPECT_EQ(Trips({.direction = "EQ"}), std::nullopt);
}

TEST(CostTripCountTest, KnownTripCountConfig) {
  EXPECT_EQ(
      Trips({.step = "-1", .config = R"({"known_trip_count":{"n":"7"}})"}), 7);
  EXPECT_EQ(Trips({.config = R"({"known_trip_count":{"n":5}})"}), 5);
  // A malformed config falls back to the induction variable.
  EXPECT_EQ(Trips({.config = R"({"known_trip_count":{"n":"x"}})"}), 10);
}

TEST(CostTripCountTest, BoundFromParameterIsUnknown) {
  auto m = ParseModule(R"(HloModule m
%cond (s: (s32[], s32[])) -> pred[] {
  %s = (s32[], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] get-tuple-element(%s), index=1
  ROOT %c = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], s32[])) -> (s32[], s32[]) {
  %s = (s32[], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %n = s32[] get-tuple-element(%s), index=1
  ROOT %t = (s32[], s32[]) tuple(%next, %n)
}
ENTRY %e (p: s32[]) -> (s32[], s32[]) {
  %p = s32[] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], s32[]) tuple(%zero, %p)
  ROOT %w = (s32[], s32[]) while(%init), condition=%cond, body=%body
})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(
      ComputeWhileTripCount(*(*m)->entry_computation()->root_instruction()),
      std::nullopt);
}

}  // namespace
}  // namespace hlogym
