// Prague: the L4S team's tcp_prague.c behaviour (alpha in 2^-20 with g = 1/16 kept upscaled,
// fractional cwnd, per-ACK increase of the unmarked deliveries, cwnd·alpha/2 once per round on
// CE, loss halving, pacing at 100 %/200 % and a 250 µs GSO burst), AccECN between the two ends,
// and a Prague flow over the loopback bottleneck with a 1 ms step marking.
#include "nicsim/sim/tcp/prague.h"

#include <gtest/gtest.h>

#include "nicsim/sim/tcp/loopback_harness.h"
#include "nicsim/sim/tcp/receiver.h"
#include "nicsim/sim/tcp/sender.h"

namespace nicsim::sim::tcp {
namespace {

constexpr uint64_t kOne = Prague::kMaxAlpha;  // alpha = 1 in 2^-20 units

// An ACK of `acked` segments, `ce` of them CE, advancing the round by `seq`.
struct Feed {
  Prague pr;
  Window w;
  Prague::Ack a;
  Feed() {
    a.cwnd_limited = true;
    a.snd_una = 1;
    a.snd_nxt = 1;
    a.srtt = Duration::ms(10);
    pr.init(w, a);
  }
  void ack(uint32_t acked, uint32_t ce, bool new_round = false) {
    a.acked_sacked = acked;
    a.ce_delta = ce;
    a.delivered += acked;
    a.delivered_ce += ce;
    a.snd_una += acked;
    if (new_round) {
      a.snd_una = a.snd_nxt;
    }
    a.snd_nxt = a.snd_una + 1000;
    pr.on_ack(a, w);
  }
};

TEST(Prague, AlphaWaitsForTheFirstMarkThenFollowsTheUpscaledEwma) {
  Feed f;
  EXPECT_EQ(f.pr.alpha(), kOne);
  for (int i = 0; i < 5; ++i) {
    f.ack(10, 0, true);  // rounds without marks: no AQM seen yet, alpha stays at 1
  }
  EXPECT_EQ(f.pr.alpha(), kOne);
  EXPECT_FALSE(f.pr.saw_ce());
  // A round with F = 1/4 (10 of 40): upscaled = 16 − 1 + 1/4 (in units of 2^20) -> alpha
  // = 15.25/16.
  f.ack(30, 0);
  f.ack(10, 10, true);
  EXPECT_TRUE(f.pr.saw_ce());
  EXPECT_EQ(f.pr.alpha(), (15 * kOne + kOne / 4) / 16);
}

TEST(Prague, AlphaConvergesToAConstantMarkingFraction) {
  // Upscaled by 16, the remainder carries: the fixed point is F itself, to 2^-20.
  Feed f;
  for (int i = 0; i < 400; ++i) {
    f.ack(30, 0);
    f.ack(10, 10, true);  // F = 1/4
  }
  EXPECT_NEAR(static_cast<double>(f.pr.alpha()) / kOne, 0.25, 1e-5);
  for (int i = 0; i < 400; ++i) {
    f.ack(99, 0);
    f.ack(1, 1, true);  // F = 1/100
  }
  EXPECT_NEAR(static_cast<double>(f.pr.alpha()) / kOne, 0.01, 1e-5);
}

TEST(Prague, UnmarkedDeliveriesGrowCwndByOnePerWindow) {
  Feed f;
  f.w.cwnd = 20;
  f.w.ssthresh = 20;  // congestion avoidance
  for (int i = 0; i < 20; ++i) {
    f.ack(1, 0);
  }
  EXPECT_EQ(f.w.cwnd, 21u);
  // CE-marked deliveries do not count towards the increase (acked − ece_delta).
  for (int i = 0; i < 21; ++i) {
    f.ack(1, 1);
  }
  EXPECT_EQ(f.w.cwnd, 21u);
  // Not cwnd-limited: no growth.
  f.a.cwnd_limited = false;
  for (int i = 0; i < 50; ++i) {
    f.ack(1, 0);
  }
  EXPECT_EQ(f.w.cwnd, 21u);
}

TEST(Prague, SlowStartAddsTheUnmarkedSegments) {
  Feed f;
  f.ack(4, 1);  // 3 unmarked
  EXPECT_EQ(f.w.cwnd, 13u);
}

TEST(Prague, CwrTakesCwndTimesHalfAlphaOneSegmentPerAck) {
  Feed f;
  f.w.cwnd = 100;
  f.w.ssthresh = 100;
  f.pr.enter_cwr(f.w);  // alpha = 1: 50 segments of reduction into the carry
  EXPECT_EQ(f.pr.cwnd_cnt(), -50 * Prague::kOneCwnd);
  f.a.cwnd_limited = false;
  for (int i = 0; i < 10; ++i) {
    f.ack(1, 1);  // at most one segment per ACK
  }
  EXPECT_EQ(f.w.cwnd, 90u);
  EXPECT_EQ(f.w.ssthresh, 90u);  // each decrement sets ssthresh = cwnd
  for (int i = 0; i < 100; ++i) {
    f.ack(1, 1);
  }
  EXPECT_EQ(f.w.cwnd, 50u);
}

TEST(Prague, CwrWithASmallAlphaIsASmallCut) {
  Feed f;
  for (int i = 0; i < 400; ++i) {
    f.ack(99, 0);
    f.ack(1, 1, true);  // alpha -> 1/100
  }
  f.w.cwnd = 200;
  f.w.ssthresh = 200;
  f.pr.enter_cwr(f.w);  // 200 × 0.01 / 2 = 1 segment (rounded half up in 2^-20)
  EXPECT_NEAR(static_cast<double>(-f.pr.cwnd_cnt()) / Prague::kOneCwnd, 1.0, 0.01);
}

TEST(Prague, LossHalvesAndStopsGrowthUntilOpen) {
  Feed f;
  f.w.cwnd = 40;
  f.w.ssthresh = 40;
  f.pr.enter_loss(f.w);
  EXPECT_TRUE(f.pr.in_loss());
  EXPECT_EQ(f.pr.cwnd_cnt(), -20 * Prague::kOneCwnd);
  for (int i = 0; i < 30; ++i) {
    f.ack(1, 0);
  }
  EXPECT_EQ(f.w.cwnd, 20u);  // reduced, and no growth while in loss
  f.pr.ca_open();
  for (int i = 0; i < 20; ++i) {
    f.ack(1, 0);
  }
  EXPECT_EQ(f.w.cwnd, 21u);
}

TEST(Prague, PacingIsMtuTimesCwndPerSrttDoubledInSlowStart) {
  Feed f;
  f.w.cwnd = 100;
  f.w.ssthresh = 100;
  f.ack(0, 0);
  // 1500 B × 100 / 10 ms = 15 MB/s; the GSO burst: 10^4 packets/s >> 12 = 2.
  EXPECT_EQ(f.pr.pacing_rate(), 15'000'000u);
  EXPECT_EQ(f.pr.tso_segs(), 2u);
  f.w.ssthresh = 1000;  // cwnd < ssthresh / 2: 200 %
  f.ack(0, 0);
  EXPECT_EQ(f.pr.pacing_rate(), 30'000'000u);
  f.w.cwnd = 1000;  // 1.5e8 B/s = 10^5 packets/s: 24 packets per 1/4096 s
  f.w.ssthresh = 1000;
  f.ack(0, 0);
  EXPECT_EQ(f.pr.tso_segs(), 24u);
}

// ---- the two ends: AccECN negotiation and CE counting ----

Params prague_params() {
  Params p;
  p.cc = CcAlgorithm::kPrague;
  p.ecn = true;
  p.ect1 = true;
  p.ecn_feedback = EcnFeedback::kAccurate;
  return p;
}

TEST(PragueEndpoints, AccEcnHandshakeEct1DataAndCeCounts) {
  Params p = prague_params();
  p.gso = false;
  p.tsq = false;  // nothing below the socket releases here
  TcpSender s(p);
  TcpReceiver r(Params{});  // any receiver accepts AccECN when the SYN asks for it
  Time now = Time::zero();
  s.connect(now);
  const Segment syn = s.pop_output();
  EXPECT_TRUE(syn.has(kAe) && syn.has(kCwr) && syn.has(kEce));
  r.on_segment(syn, now);
  EXPECT_EQ(r.ecn_feedback(), EcnFeedback::kAccurate);
  const Segment sa = r.pop_output();
  EXPECT_TRUE(sa.has(kCwr) && !sa.has(kEce) && !sa.has(kAe));  // (AE, CWR, ECE) = (0, 1, 0)
  now += Duration::ms(10);
  s.on_segment(sa, now);
  EXPECT_TRUE(s.accecn_ok());
  std::vector<Segment> data;
  while (s.has_output()) {
    const Segment x = s.pop_output();
    if (x.len > 0) {
      EXPECT_EQ(x.ecn, Ecn::kEct1);  // L4S identifier (RFC 9331)
      data.push_back(x);
    } else {
      r.on_segment(x, now);  // the handshake's ACK
    }
  }
  ASSERT_EQ(data.size(), 10u);
  // Marks on segments 2, 3 and 7: the ACKs carry the running count of CE packets.
  for (size_t i : {2u, 3u, 7u}) data[i].ecn = Ecn::kCe;
  uint32_t last_count = 0;
  for (const Segment& d : data) {
    r.on_segment(d, now);
    while (r.has_output()) {
      const Segment a = r.pop_output();
      EXPECT_GE(a.ce_packets, last_count);
      last_count = a.ce_packets;
      s.on_segment(a, now + Duration::ms(10));
    }
  }
  EXPECT_EQ(last_count, 3u);
  EXPECT_EQ(s.stats().delivered_ce, 3u);
  EXPECT_EQ(s.ca_state(), CaState::kCwr);  // one CWR entry for the round
  EXPECT_EQ(s.stats().cwr_events, 1u);
  EXPECT_NE(s.prague(), nullptr);
  EXPECT_TRUE(s.prague()->saw_ce());
}

// Prague through a 100 Mbit/s, 20 ms RTT bottleneck with an L4S step at 1 ms of queue
// (12.5 kB, DualPI2's step_thresh): it keeps the link busy with about a millisecond of queue.
TEST(PragueLoopback, OneMillisecondStepKeepsTheQueueNearOneMillisecondAtFullRate) {
  testing::LinkConfig link;
  link.rate = Rate::mbit(100);
  link.delay = Duration::ms(10);
  link.queue_limit_bytes = 1'000'000;
  link.ce_threshold_bytes = 12'500;
  testing::Loopback lb(link, {prague_params()}, Params{});
  lb.run_until(Time::zero() + Duration::s(5));
  const uint64_t before = lb.receiver(0).stats().bytes_received;
  double sum = 0.0;
  int n = 0;
  for (int ms = 5000; ms < 20000; ++ms) {
    lb.run_until(Time::zero() + Duration::ms(ms));
    sum += static_cast<double>(lb.queue_bytes());
    ++n;
  }
  const double goodput = (lb.receiver(0).stats().bytes_received - before) * 8.0 / 15.0;
  EXPECT_GT(goodput, 0.9 * testing::max_goodput_bps(link.rate, 1448));
  const double mean_queue_ms = sum / n * 8.0 / 100e6 * 1e3;
  EXPECT_LT(mean_queue_ms, 2.0);
  EXPECT_EQ(lb.queue_drops(), 0u);
  EXPECT_GT(lb.sender(0).stats().delivered_ce, 100u);
  EXPECT_LT(lb.sender(0).prague()->alpha(), Prague::kMaxAlpha / 2);
}

}  // namespace
}  // namespace nicsim::sim::tcp
