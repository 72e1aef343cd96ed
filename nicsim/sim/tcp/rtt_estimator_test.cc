// RttEstimator: RFC 6298 arithmetic, worked by hand in nanoseconds.
#include "nicsim/sim/tcp/rtt_estimator.h"

#include <gtest/gtest.h>

namespace nicsim::sim::tcp {
namespace {

RttEstimator::Config rfc(Duration rto_min = Duration::ms(200)) {
  return RttEstimator::Config{.rto_initial = Duration::s(1),
                              .rto_min = rto_min,
                              .rto_max = Duration::s(120),
                              .granularity = Duration::ms(1),
                              .style = RtoStyle::kRfc6298};
}

TEST(RttEstimator, InitialRtoIsOneSecond) {
  // RFC 6298 (2.1): RTO = 1 s until the first measurement.
  RttEstimator e;
  EXPECT_FALSE(e.has_sample());
  EXPECT_EQ(e.rto(), Duration::s(1));
}

TEST(RttEstimator, FirstSampleSetsSrttAndHalfRttvar) {
  // RFC 6298 (2.2): SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, K·RTTVAR).
  RttEstimator e(rfc());
  e.sample(Duration::ms(100));
  EXPECT_EQ(e.srtt(), Duration::ms(100));
  EXPECT_EQ(e.rttvar(), Duration::ms(50));
  EXPECT_EQ(e.rto(), Duration::ms(300));  // 100 + 4·50
}

TEST(RttEstimator, SubsequentSamplesUseAlphaBeta) {
  // RFC 6298 (2.3): RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R'| (old SRTT), then SRTT = 7/8·SRTT + R'/8.
  RttEstimator e(rfc());
  e.sample(Duration::ms(10));  // SRTT 10, RTTVAR 5
  e.sample(Duration::ms(20));  // RTTVAR = 3.75 + 2.5 = 6.25; SRTT = 8.75 + 2.5 = 11.25
  EXPECT_EQ(e.rttvar(), Duration::us(6250));
  EXPECT_EQ(e.srtt(), Duration::us(11250));
  e.sample(Duration::ms(4));  // RTTVAR = 4.6875 + 1.8125 = 6.5; SRTT = 9.84375 + 0.5
  EXPECT_EQ(e.rttvar(), Duration::us(6500));
  EXPECT_EQ(e.srtt(), Duration::ns(10'343'750));
  EXPECT_EQ(e.min_rtt(), Duration::ms(4));
}

TEST(RttEstimator, RfcRtoIsBoundedBelowByRtoMin) {
  // RFC 6298 (2.4) with Linux's 200 ms minimum: 10 + 4·5 = 30 ms → 200 ms.
  RttEstimator e(rfc());
  e.sample(Duration::ms(10));
  EXPECT_EQ(e.rto(), Duration::ms(200));
}

TEST(RttEstimator, LinuxRtoAddsTheMinimumToSrtt) {
  // Linux: rttvar term >= rto_min, so RTO = SRTT + max(4·RTTVAR, 200 ms) = 10 + 200 ms.
  RttEstimator e;  // default style kLinux
  e.sample(Duration::ms(10));
  EXPECT_EQ(e.rto(), Duration::ms(210));
  e.sample(Duration::ms(10));  // RTTVAR 3.75 ms, SRTT 10 ms
  EXPECT_EQ(e.rto(), Duration::ms(210));
}

TEST(RttEstimator, ClockGranularityFloorsTheVarianceTerm) {
  // RFC 6298 (2.4): max(G, K·RTTVAR); with R = 100 µs, 4·50 µs = 200 µs < G = 1 ms.
  RttEstimator e(rfc(Duration::us(1)));
  e.sample(Duration::us(100));
  EXPECT_EQ(e.rto(), Duration::us(1100));
}

TEST(RttEstimator, BackoffDoublesUntilAValidSample) {
  // RFC 6298 (5.5) exponential backoff, capped at rto_max; Karn: a new sample clears it.
  auto cfg = rfc();
  cfg.rto_max = Duration::s(1);
  RttEstimator e(cfg);
  e.sample(Duration::ms(100));  // RTO 300 ms
  e.back_off();
  EXPECT_EQ(e.rto(), Duration::ms(600));
  e.back_off();
  EXPECT_EQ(e.rto(), Duration::s(1));  // 1.2 s capped
  e.back_off();
  EXPECT_EQ(e.rto(), Duration::s(1));
  EXPECT_EQ(e.backoff(), 3u);
  e.sample(Duration::ms(100));
  EXPECT_EQ(e.backoff(), 0u);
  EXPECT_EQ(e.rto(), Duration::ms(250));  // SRTT 100, RTTVAR 37.5: 100 + 150
}

}  // namespace
}  // namespace nicsim::sim::tcp
