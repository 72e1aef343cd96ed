#include "nicsim/live/log_limiter.h"

#include <gtest/gtest.h>

namespace nicsim::live {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(LogLimiter, AdmitsABurstThenTheSteadyRate) {
  LogLimiter l({.burst = 20, .per_second = 5, .summary_period_ns = 10'000 * kMs});
  int admitted = 0;
  // 13,000 refusals in one second from one attacker (the rate measured before the limiter).
  for (int i = 0; i < 13'000; ++i) {
    admitted += l.admit("10.0.0.7", i * 1000 * kMs / 13'000) ? 1 : 0;
  }
  EXPECT_GE(admitted, 20);
  EXPECT_LE(admitted, 26);  // the burst plus ~5 more in that second
  EXPECT_EQ(l.stats().admitted + l.stats().suppressed, 13'000u);
}

TEST(LogLimiter, SummarisesWhatItHeldBackOncePerPeriodNamingTheTopPeer) {
  LogLimiter l({.burst = 1, .per_second = 0.001, .summary_period_ns = 10'000 * kMs});
  EXPECT_TRUE(l.admit("10.0.0.1", 0));
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(l.admit("10.0.0.2", kMs));
  }
  EXPECT_FALSE(l.admit("10.0.0.3", 2 * kMs));
  EXPECT_EQ(l.next_summary_ns(), kMs + 10'000 * kMs);
  EXPECT_FALSE(l.summary(5'000 * kMs).has_value());  // not due yet
  const auto s = l.summary(10'001 * kMs);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(*s, "4 log lines held back in the last 10 s; most about 10.0.0.2 (3)");
  EXPECT_FALSE(l.summary(30'000 * kMs).has_value());  // nothing held back since
  EXPECT_EQ(l.next_summary_ns(), INT64_MAX);
}

TEST(LogLimiter, RefillsAfterQuiet) {
  LogLimiter l({.burst = 2, .per_second = 1, .summary_period_ns = 10'000 * kMs});
  EXPECT_TRUE(l.admit("a", 0));
  EXPECT_TRUE(l.admit("a", 0));
  EXPECT_FALSE(l.admit("a", 0));
  EXPECT_TRUE(l.admit("a", 1'000 * kMs));
}

}  // namespace
}  // namespace nicsim::live
