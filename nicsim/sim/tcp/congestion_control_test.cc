// CongestionControl: NewReno (RFC 5681, Linux tcp_reno_*) and CUBIC (RFC 9438), worked
// examples on a manual clock.
#include "nicsim/sim/tcp/congestion_control.h"

#include <gtest/gtest.h>

#include <cmath>

namespace nicsim::sim::tcp {
namespace {

const Time t0 = Time::zero() + Duration::s(10);

Params reno() {
  Params p;
  p.cc = CcAlgorithm::kNewReno;
  return p;
}
Params cubic(bool friendliness = true) {
  Params p;
  p.cc = CcAlgorithm::kCubic;
  p.hystart = false;
  p.cubic_tcp_friendliness = friendliness;
  return p;
}

TEST(NewReno, SlowStartAddsEverySegmentAcked) {
  // RFC 5681 §3.1 / Linux tcp_slow_start: cwnd += acked (ABC without the L=2 cap).
  CongestionControl cc(reno());
  Window w{.cwnd = 10};
  cc.cong_avoid(w, 2, t0, 0, 0, Duration::ms(10));
  EXPECT_EQ(w.cwnd, 12u);
  cc.cong_avoid(w, 1, t0, 0, 0, Duration::ms(10));
  EXPECT_EQ(w.cwnd, 13u);
}

TEST(NewReno, SlowStartStopsAtSsthreshAndCarriesTheRest) {
  // tcp_slow_start caps at ssthresh; the leftover acked segments count towards CA.
  CongestionControl cc(reno());
  Window w{.cwnd = 10, .ssthresh = 15};
  cc.cong_avoid(w, 10, t0, 0, 0, Duration::ms(10));
  EXPECT_EQ(w.cwnd, 15u);
  EXPECT_EQ(w.cwnd_cnt, 5u);  // 5 of the 15 needed for the next +1
}

TEST(NewReno, CongestionAvoidanceAddsOneSegmentPerWindow) {
  // RFC 5681 §3.1 (3): +1 SMSS per RTT; Linux tcp_cong_avoid_ai(w = cwnd).
  CongestionControl cc(reno());
  Window w{.cwnd = 20, .ssthresh = 10};
  for (int i = 0; i < 19; ++i) {
    cc.cong_avoid(w, 1, t0, 0, 0, Duration::ms(10));
  }
  EXPECT_EQ(w.cwnd, 20u);
  cc.cong_avoid(w, 1, t0, 0, 0, Duration::ms(10));
  EXPECT_EQ(w.cwnd, 21u);
  for (int i = 0; i < 21; ++i) {
    cc.cong_avoid(w, 1, t0, 0, 0, Duration::ms(10));
  }
  EXPECT_EQ(w.cwnd, 22u);
  // Delayed ACKs (2 segments each) give the same +1 per window.
  for (int i = 0; i < 11; ++i) {
    cc.cong_avoid(w, 2, t0, 0, 0, Duration::ms(10));
  }
  EXPECT_EQ(w.cwnd, 23u);
}

TEST(NewReno, SsthreshIsHalfTheWindowAtLeastTwo) {
  // RFC 5681 (4): ssthresh = max(FlightSize/2, 2·SMSS); Linux uses cwnd.
  CongestionControl cc(reno());
  EXPECT_EQ(cc.ssthresh(Window{.cwnd = 20}), 10u);
  EXPECT_EQ(cc.ssthresh(Window{.cwnd = 21}), 10u);
  EXPECT_EQ(cc.ssthresh(Window{.cwnd = 3}), 2u);
}

TEST(Cubic, MultiplicativeDecreaseAndK) {
  // RFC 9438 §4.6: ssthresh = β·cwnd = 70, W_max = 100; §4.2: K = ∛((W_max − cwnd_epoch)/C).
  CongestionControl cc(cubic());
  Window w{.cwnd = 100};
  w.ssthresh = cc.ssthresh(w);
  EXPECT_EQ(w.ssthresh, 70u);
  EXPECT_DOUBLE_EQ(cc.w_max(), 100.0);
  EXPECT_TRUE(cc.w_max_known());
  EXPECT_NEAR(cc.alpha(), 3 * 0.3 / 1.7, 1e-12);
  w.cwnd = 70;
  cc.cong_avoid(w, 1, t0, 0, 0, Duration::ms(100));  // starts the epoch
  EXPECT_TRUE(cc.epoch_started());
  EXPECT_NEAR(cc.k_seconds(), std::cbrt(30.0 / 0.4), 1e-12);  // 4.2172 s
  // W_cubic(t) = 0.4·(t − K)³ + 100 at several t; W_cubic(0) = cwnd_epoch.
  const double k = std::cbrt(75.0);
  EXPECT_NEAR(cc.w_cubic(0.0), 70.0, 1e-9);
  EXPECT_NEAR(cc.w_cubic(k), 100.0, 1e-9);
  for (double t : {1.0, 2.5, 4.0, 6.0, 8.0}) {
    EXPECT_NEAR(cc.w_cubic(t), 0.4 * std::pow(t - k, 3) + 100.0, 1e-9) << "t=" << t;
  }
  EXPECT_NEAR(cc.w_cubic(2 * k), 130.0, 1e-9);
}

TEST(Cubic, WindowFollowsWCubicOfTPlusDelayMin) {
  // tcp_cubic.c bictcp_update: target = W_cubic(t + delay_min), growth at most 1.5x per RTT
  // (cnt >= 2); acking a whole window moves cwnd to the target (within the one-segment
  // rounding). Reno-friendliness off to isolate the cubic curve.
  CongestionControl cc(cubic(/*friendliness=*/false));
  Window w{.cwnd = 100};
  const Duration rtt = Duration::ms(100);
  cc.on_rtt_sample(w, rtt, t0 - Duration::s(2));  // delay_min = 100 ms
  w.ssthresh = cc.ssthresh(w);
  w.cwnd = w.ssthresh;
  const double k = std::cbrt(75.0);
  auto wc = [k](double t) { return 0.4 * std::pow(t - k, 3) + 100.0; };
  for (int i = 0; i <= 80; ++i) {
    const Time now = t0 + rtt * i;
    const uint32_t before = w.cwnd;
    cc.cong_avoid(w, w.cwnd, now, 0, 0, rtt);
    const double t = (rtt * i).to_seconds();
    const double target = std::clamp(wc(t + 0.1), static_cast<double>(before), 1.5 * before);
    if (i % 10 == 0) {
      EXPECT_NEAR(static_cast<double>(w.cwnd), target, 1.0) << "t=" << t;
    }
  }
  // After 8 s: W_cubic(8.1) = 0.4·(8.1 − 4.217)³ + 100 ≈ 123.4.
  EXPECT_NEAR(static_cast<double>(w.cwnd), wc(8.1), 1.0);
}

TEST(Cubic, WindowUsesDelayMinNotSrtt) {
  // Linux adds delay_min to t, whatever the SRTT: a bloated SRTT of 500 ms does not look
  // further up the curve than delay_min = 1 ms does.
  Window w1{.cwnd = 100}, w2{.cwnd = 100};
  CongestionControl a(cubic(false)), b(cubic(false));
  a.on_rtt_sample(w1, Duration::ms(1), t0 - Duration::s(2));
  b.on_rtt_sample(w2, Duration::ms(1), t0 - Duration::s(2));
  w1.ssthresh = a.ssthresh(w1);
  w2.ssthresh = b.ssthresh(w2);
  w1.cwnd = w2.cwnd = 70;
  for (int i = 0; i < 50; ++i) {
    a.cong_avoid(w1, w1.cwnd, t0 + Duration::ms(100) * i, 0, 0, Duration::ms(1));
    b.cong_avoid(w2, w2.cwnd, t0 + Duration::ms(100) * i, 0, 0, Duration::ms(500));
  }
  EXPECT_EQ(w1.cwnd, w2.cwnd);
}

TEST(Cubic, RenoFriendlyRegionAtShortRtt) {
  // tcp_friendliness with RTT 1 ms: W_cubic stays near 70 for 100 ms while W_est grows by
  // α = 3(1 − β)/(1 + β) per window for the whole epoch (Linux has no switch to α = 1 at the
  // pre-loss window): W_est(100 windows) = 70 + 100·0.52941 = 122.94 → cwnd 122.
  CongestionControl cc(cubic());
  Window w{.cwnd = 100};
  w.ssthresh = cc.ssthresh(w);
  w.cwnd = w.ssthresh;
  for (int i = 0; i < 100; ++i) {
    cc.cong_avoid(w, w.cwnd, t0 + Duration::ms(1) * i, 0, 0, Duration::ms(1));
  }
  EXPECT_NEAR(cc.alpha(), 0.9 / 1.7, 1e-12);
  EXPECT_NEAR(cc.w_est(), 70.0 + 100 * (0.9 / 1.7), 1e-9);
  EXPECT_EQ(w.cwnd, 122u);
  EXPECT_LT(cc.w_cubic(0.1), cc.w_est());
}

TEST(Cubic, UnknownWmaxGrowsFivePercentPerRtt) {
  // bictcp_update: while last_max_cwnd == 0 (no loss since the start, e.g. after a HyStart
  // exit), cnt <= 20: at least 5 % per RTT, far above the cubic curve from K = 0
  // (0.4·t³) and the Reno-friendly α per RTT at cwnd 100.
  CongestionControl cc(cubic());
  Window w{.cwnd = 100, .ssthresh = 100};
  const Duration rtt = Duration::ms(100);
  cc.on_rtt_sample(w, rtt, t0 - Duration::s(2));
  double expected = 100.0;
  for (int i = 0; i < 10; ++i) {
    cc.cong_avoid(w, w.cwnd, t0 + rtt * i, 0, 0, rtt);
    expected *= 1.05;
  }
  EXPECT_FALSE(cc.w_max_known());
  EXPECT_NEAR(static_cast<double>(w.cwnd), expected, 2.0);  // 100·1.05¹⁰ = 162.9
  // A loss makes W_max known: the floor is gone, growth follows the curve from then on.
  w.ssthresh = cc.ssthresh(w);
  EXPECT_TRUE(cc.w_max_known());
  w.cwnd = w.ssthresh;
  const uint32_t after_loss = w.cwnd;
  cc.cong_avoid(w, w.cwnd, t0 + Duration::s(2), 0, 0, rtt);
  EXPECT_LT(w.cwnd, after_loss + 4);  // the curve gives ~3; 5 % would give 5
  // An RTO forgets it again, and delay_min with it (bictcp_reset).
  cc.on_loss_state(t0 + Duration::s(3), 0);
  EXPECT_FALSE(cc.w_max_known());
  EXPECT_EQ(cc.delay_min(), Duration::zero());
}

TEST(Cubic, FastConvergenceLowersWmax) {
  // RFC 9438 §4.7: a loss below the previous W_max sets W_max = cwnd·(1 + β)/2.
  CongestionControl cc(cubic());
  Window w{.cwnd = 100};
  cc.ssthresh(w);
  w.cwnd = 90;
  EXPECT_EQ(cc.ssthresh(w), 63u);
  EXPECT_DOUBLE_EQ(cc.w_max(), 90 * 1.7 / 2);

  Params p = cubic();
  p.cubic_fast_convergence = false;
  CongestionControl slow(p);
  w.cwnd = 100;
  slow.ssthresh(w);
  w.cwnd = 90;
  slow.ssthresh(w);
  EXPECT_DOUBLE_EQ(slow.w_max(), 90.0);
}

TEST(Cubic, AfterTimeoutKIsZeroAndWmaxIsTheEpochWindow) {
  // RFC 9438 §4.8: first CA stage after an RTO: K = 0, W_max = cwnd at its start.
  CongestionControl cc(cubic());
  Window w{.cwnd = 100};
  w.ssthresh = cc.ssthresh(w);  // 70
  cc.on_loss_state(t0, 0);
  w.cwnd = 80;  // slow start brought it past ssthresh
  cc.cong_avoid(w, 1, t0 + Duration::s(1), 0, 0, Duration::ms(10));
  EXPECT_EQ(cc.k_seconds(), 0.0);
  EXPECT_DOUBLE_EQ(cc.w_max(), 80.0);
  EXPECT_NEAR(cc.w_cubic(1.0), 80.4, 1e-9);  // convex from the start: 0.4·t³ + 80
}

TEST(Cubic, BetaReductionHasFloorOfTwo) {
  CongestionControl cc(cubic());
  EXPECT_EQ(cc.ssthresh(Window{.cwnd = 2}), 2u);
  EXPECT_EQ(cc.ssthresh(Window{.cwnd = 10}), 7u);
}

TEST(HyStart, DelayIncreaseEndsSlowStart) {
  // tcp_cubic.c hystart_update, HYSTART_DELAY: after 8 samples of a round, the round's
  // minimum RTT above delay_min + clamp(delay_min/8, 4 ms, 16 ms) sets ssthresh = cwnd.
  Params p = cubic();
  p.hystart = true;
  CongestionControl cc(p);
  Window w{.cwnd = 20};
  cc.init(t0, 1000);
  Time now = t0;
  for (int i = 0; i < 8; ++i) {  // round 1: 10 ms (ACKs 3 ms apart: no ACK train)
    now += Duration::ms(3);
    cc.on_rtt_sample(w, Duration::ms(10), now);
  }
  EXPECT_EQ(cc.delay_min(), Duration::ms(10));
  cc.cong_avoid(w, 1, now, 2000, 3000, Duration::ms(10));  // ack > end_seq: new round
  EXPECT_EQ(w.cwnd, 21u);
  for (int i = 0; i < 8; ++i) {  // round 2: the first 8 samples only set the round minimum
    now += Duration::ms(3);
    cc.on_rtt_sample(w, Duration::ms(15), now);
  }
  EXPECT_FALSE(cc.hystart_found());
  now += Duration::ms(3);
  cc.on_rtt_sample(w, Duration::ms(15), now);  // 9th sample: 15 > 14
  EXPECT_TRUE(cc.hystart_found());
  EXPECT_EQ(w.ssthresh, 21u);
  EXPECT_FALSE(w.in_slow_start());
}

TEST(HyStart, AckTrainEndsSlowStart) {
  // HYSTART_ACK_TRAIN: ACKs at most 2 ms apart spanning more than delay_min/2 of the round.
  Params p = cubic();
  p.hystart = true;
  CongestionControl cc(p);
  Window w{.cwnd = 16};
  cc.init(t0, 1000);
  for (int i = 1; i <= 5; ++i) {
    cc.on_rtt_sample(w, Duration::ms(10), t0 + Duration::ms(1) * i);
  }
  EXPECT_FALSE(cc.hystart_found());  // 5 ms is not more than 10/2
  cc.on_rtt_sample(w, Duration::ms(10), t0 + Duration::ms(6));
  EXPECT_TRUE(cc.hystart_found());
  EXPECT_EQ(w.ssthresh, 16u);
}

TEST(HyStart, NotBelowLowWindow) {
  Params p = cubic();
  p.hystart = true;
  CongestionControl cc(p);
  Window w{.cwnd = 15};
  cc.init(t0, 1000);
  for (int i = 1; i <= 20; ++i) {
    cc.on_rtt_sample(w, Duration::ms(10), t0 + Duration::ms(1) * i);
  }
  EXPECT_FALSE(cc.hystart_found());
}

}  // namespace
}  // namespace nicsim::sim::tcp
