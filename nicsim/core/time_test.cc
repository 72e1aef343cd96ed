#include "nicsim/core/time.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace nicsim {
namespace {

// No implicit conversion from integers (the ns-3 `Time t{100000000}` pitfall).
static_assert(!std::is_convertible_v<int64_t, Duration>);
static_assert(!std::is_convertible_v<int64_t, Time>);
static_assert(!std::is_constructible_v<Duration, int64_t>);
static_assert(!std::is_constructible_v<Time, int64_t>);
static_assert(sizeof(Time) == 8 && sizeof(Duration) == 8);

TEST(Time, LiteralsAndFactories) {
  EXPECT_EQ((5_ms).count_ns(), 5'000'000);
  EXPECT_EQ((136_us).count_ns(), 136'000);
  EXPECT_EQ((2_s).count_ns(), 2'000'000'000);
  EXPECT_EQ((7_ns).count_ns(), 7);
  EXPECT_EQ(Duration::ms(3), 3000_us);
  EXPECT_DOUBLE_EQ((1500_us).to_ms(), 1.5);
}

TEST(Time, Arithmetic) {
  const Time t0 = Time::zero();
  const Time t1 = t0 + 10_ms;
  EXPECT_EQ(t1 - t0, 10_ms);
  EXPECT_EQ(t1 - 4_ms, t0 + 6_ms);
  EXPECT_LT(t0, t1);
  EXPECT_EQ((10_ms) / (3_ms), 3);
  EXPECT_EQ((10_ms) % (3_ms), 1_ms);
  EXPECT_EQ((10_ms) * 3, 30_ms);
  EXPECT_EQ(3 * (10_ms), 30_ms);
  EXPECT_EQ((10_ms) / 4, 2500_us);
  EXPECT_EQ(-(1_ms) + 2_ms, 1_ms);
  EXPECT_EQ(min(t0, t1), t0);
  EXPECT_EQ(max(1_ms, 2_ms), 2_ms);
  Time t = t0;
  t += 1_s;
  t -= 500_ms;
  EXPECT_EQ(t.ns_since_epoch(), 500'000'000);
}

}  // namespace
}  // namespace nicsim
