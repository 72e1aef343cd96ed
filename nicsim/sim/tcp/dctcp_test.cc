// Dctcp: alpha's EWMA and the window reductions of Linux net/ipv4/tcp_dctcp.c (RFC 8257), the
// receiver's DCTCP feedback, and a DCTCP sender over the loopback bottleneck with a step marking
// threshold (RFC 8257 §3.1) or a fixed marking fraction. Expected values are worked by hand from
// the kernel's integer recurrences (stated beside each).
#include "nicsim/sim/tcp/dctcp.h"

#include <gtest/gtest.h>

#include "nicsim/sim/tcp/loopback_harness.h"
#include "nicsim/sim/tcp/receiver.h"
#include "nicsim/sim/tcp/sender.h"

namespace nicsim::sim::tcp {
namespace {

// One observation window of `d` delivered segments, `ce` of them on ECE ACKs.
struct Windows {
  Dctcp dctcp;
  uint64_t seq = 1;
  uint64_t delivered = 0;
  uint64_t delivered_ce = 0;
  explicit Windows(Dctcp::Params p = {}) : dctcp(p) { dctcp.init(seq, 0, 0); }
  void window(uint64_t d, uint64_t ce) {
    seq += 1000;  // snd_una passes next_seq: the window closes on this ACK
    delivered += d;
    delivered_ce += ce;
    dctcp.on_ack(seq, seq, delivered, delivered_ce);
  }
};

TEST(Dctcp, AlphaStartsAtOneAndFollowsTheKernelRecurrence) {
  Windows w;
  EXPECT_EQ(w.dctcp.alpha(), Dctcp::kMaxAlpha);  // dctcp_alpha_on_init = 1024
  // F = 1/4: alpha = alpha − alpha/16 + (ce << 6) / d = 1024 − 64 + 16 = 976.
  w.window(40, 10);
  EXPECT_EQ(w.dctcp.alpha(), 976u);
  w.window(40, 10);  // 976 − 61 + 16
  EXPECT_EQ(w.dctcp.alpha(), 931u);
}

TEST(Dctcp, AlphaConvergesToTheMarkingFraction) {
  // A fixed fraction F = 1/4 of the segments marked: alpha's fixed point is where alpha/16
  // (integer) equals 1024·F/16 = 16, approached from above: 271 (271 − 16 + 16 = 271; 272 − 17 + 16
  // = 271).
  Windows w;
  for (int i = 0; i < 300; ++i) {
    w.window(40, 10);
  }
  EXPECT_EQ(w.dctcp.alpha(), 271u);
  EXPECT_NEAR(w.dctcp.alpha() / 1024.0, 0.25, 1.0 / 16);  // within g of F (RFC 8257 §3.3)
  // F = 1/16 from there: the fixed point of alpha − alpha/16 + 4 = alpha is 79 (79 − 4 + 4).
  for (int i = 0; i < 300; ++i) {
    w.window(64, 4);
  }
  EXPECT_EQ(w.dctcp.alpha(), 79u);
  EXPECT_EQ(w.dctcp.windows(), 600u);
}

TEST(Dctcp, AlphaDecaysToZeroWithoutMarks) {
  // min_not_zero(alpha, alpha >> g): below 16 the whole remainder goes at once.
  Windows w;
  for (int i = 0; i < 200; ++i) {
    w.window(40, 0);
  }
  EXPECT_EQ(w.dctcp.alpha(), 0u);
  EXPECT_EQ(w.dctcp.ssthresh(100), 100u);  // no reduction at alpha 0
}

TEST(Dctcp, AlphaUpdatesOncePerWindow) {
  Dctcp d;
  d.init(/*snd_nxt=*/1001, 0, 0);
  d.on_ack(/*snd_una=*/500, 2000, 5, 5);  // snd_una < next_seq: window still open
  EXPECT_EQ(d.alpha(), 1024u);
  EXPECT_EQ(d.windows(), 0u);
  d.on_ack(1001, 3000, 10, 0);  // closes: F = 0, 1024 − 64
  EXPECT_EQ(d.alpha(), 960u);
  d.on_ack(2000, 3000, 20, 0);  // next_seq is now 3000
  EXPECT_EQ(d.alpha(), 960u);
}

TEST(Dctcp, WindowReductionIsCwndTimesOneMinusHalfAlpha) {
  Windows w;
  // dctcp_ssthresh: cwnd − (cwnd·alpha >> 11), at least 2.
  EXPECT_EQ(w.dctcp.ssthresh(100), 50u);  // alpha 1: halve
  for (int i = 0; i < 300; ++i) {
    w.window(40, 10);  // alpha 271
  }
  EXPECT_EQ(w.dctcp.ssthresh(100), 87u);  // 100 − 27100/2048 = 100 − 13
  EXPECT_EQ(w.dctcp.ssthresh(2), 2u);
  EXPECT_EQ(Dctcp::loss_ssthresh(100), 50u);  // dctcp_react_to_loss
  EXPECT_EQ(Dctcp::loss_ssthresh(3), 2u);
}

TEST(Dctcp, ClampAlphaOnLossIsTheOldModuleOption) {
  Windows off;
  Windows on(Dctcp::Params{.clamp_alpha_on_loss = true});
  for (Windows* w : {&off, &on}) {
    for (int i = 0; i < 50; ++i) {
      w->window(40, 0);
    }
    w->dctcp.on_loss_state();
  }
  EXPECT_LT(off.dctcp.alpha(), 100u);
  EXPECT_EQ(on.dctcp.alpha(), Dctcp::kMaxAlpha);
}

// ---- the receiver's DCTCP feedback (dctcp_ece_ack_update) ----

Segment data(uint64_t seq, Ecn ecn) {
  Segment s;
  s.seq = seq;
  s.ack = 1;
  s.len = 1448;
  s.flags = kAck;
  s.ecn = ecn;
  return s;
}

TEST(DctcpReceiver, EceMirrorsCeAndEveryChangeIsAckedAtOnce) {
  Params p;
  p.timestamps = false;
  p.ecn_feedback = EcnFeedback::kDctcp;
  TcpReceiver r(p);
  Time now = Time::zero();
  Segment syn;
  syn.flags = kSyn | kEce | kCwr;
  syn.options = kOptMss | kOptWindowScale | kOptSackPermitted;
  syn.wnd = 65535;
  r.on_segment(syn, now);
  ASSERT_TRUE(r.pop_output().has(kEce));  // classic ECN negotiation (RFC 3168)
  EXPECT_EQ(r.ecn_feedback(), EcnFeedback::kDctcp);
  Segment hs;
  hs.seq = 1;
  hs.ack = 1;
  hs.flags = kAck;
  r.on_segment(hs, now);
  // Feed unmarked segments one at a time (the delayed-ACK timer acknowledging each) until one is
  // no longer ACKed at once: quick-ACK mode and window growth are over, an ACK is now owed.
  uint64_t seq = 1;
  bool delayed = false;
  for (int i = 0; i < 500 && !delayed; ++i, seq += 1448) {
    r.on_segment(data(seq, Ecn::kEct0), now);
    delayed = !r.has_output();
    while (r.has_output()) r.pop_output();
    if (!delayed) {
      now += Duration::ms(100);
      r.advance(now);
      while (r.has_output()) r.pop_output();
    }
  }
  ASSERT_TRUE(delayed);
  ASSERT_TRUE(r.delack_deadline().has_value());
  r.on_segment(data(seq, Ecn::kCe), now);  // CE: the owed ACK (no ECE), then this one (ECE)
  seq += 1448;
  ASSERT_EQ(r.output_size(), 2u);
  const Segment owed = r.pop_output();
  const Segment now_ack = r.pop_output();
  EXPECT_FALSE(owed.has(kEce));
  EXPECT_EQ(owed.ack, seq - 1448);
  EXPECT_TRUE(now_ack.has(kEce));
  EXPECT_EQ(now_ack.ack, seq);
  r.on_segment(data(seq, Ecn::kCe), now);  // still CE: delayed as usual
  seq += 1448;
  EXPECT_FALSE(r.has_output());
  r.on_segment(data(seq, Ecn::kEct0), now);  // CE ends: owed ACK with ECE, then one without
  seq += 1448;
  ASSERT_EQ(r.output_size(), 2u);
  EXPECT_TRUE(r.pop_output().has(kEce));
  EXPECT_FALSE(r.pop_output().has(kEce));
  EXPECT_EQ(r.stats().ce_received, 2u);
}

// ---- the sender ----

Params dctcp_params() {
  Params p;
  p.cc = CcAlgorithm::kDctcp;
  p.ecn = true;
  p.ecn_feedback = EcnFeedback::kDctcp;
  return p;
}

TEST(DctcpSender, RefusesToRunWithoutEcn) {
  Params p = dctcp_params();
  p.ecn = false;
  ASSERT_TRUE(p.validate().has_value());
  EXPECT_EQ(p.validate()->key, "tcp.ecn");
}

TEST(DctcpSender, EceCutsTheWindowByHalfAlphaOncePerWindow) {
  Params p = dctcp_params();
  p.gso = false;
  p.tsq = false;
  p.timestamps = false;
  TcpSender s(p);
  Time now = Time::zero() + Duration::s(1);
  s.connect(now);
  while (s.has_output()) s.pop_output();
  now += Duration::ms(10);
  Segment sa;
  sa.ack = 1;
  sa.flags = kSyn | kAck | kEce;
  sa.options = kOptMss | kOptWindowScale | kOptSackPermitted;
  sa.wnd = 1u << 24;
  s.on_segment(sa, now);
  ASSERT_TRUE(s.ecn_ok());
  while (s.has_output()) {
    EXPECT_NE(s.pop_output().ecn, Ecn::kEct1);  // RFC 3168 ECT(0) (or the pure handshake ACK)
  }
  ASSERT_NE(s.dctcp(), nullptr);
  // The first ACK closes dctcp_init's window (next_seq = 1): F = 2/2 keeps alpha at 1024; its
  // ECE enters CWR with ssthresh = 10 − 10·1024/2048 = 5.
  now += Duration::ms(10);
  Segment a;
  a.seq = 1;
  a.ack = 1 + 2 * 1448;
  a.flags = kAck | kEce;
  a.wnd = 1u << 24;
  s.on_segment(a, now);
  EXPECT_EQ(s.dctcp()->alpha(), 1024u);
  EXPECT_EQ(s.ca_state(), CaState::kCwr);
  EXPECT_EQ(s.ssthresh(), 5u);
  EXPECT_EQ(s.stats().delivered_ce, 2u);
  a.ack += 2 * 1448;  // same window: no second reduction
  s.on_segment(a, now);
  EXPECT_EQ(s.stats().cwr_events, 1u);
  EXPECT_EQ(s.ssthresh(), 5u);
}

// Runs to `to`, sampling the bottleneck's backlog every millisecond from `from`; its mean, bytes.
double mean_queue(testing::Loopback& lb, Duration from, Duration to) {
  lb.run_until(Time::zero() + from);
  double sum = 0.0;
  int n = 0;
  for (Duration t = from; t < to; t += Duration::ms(1)) {
    lb.run_until(Time::zero() + t);
    sum += static_cast<double>(lb.queue_bytes());
    ++n;
  }
  lb.run_until(Time::zero() + to);
  return sum / n;
}

// A DCTCP flow over a 100 Mbit/s, 10 ms RTT bottleneck that marks above K = 30 kB (~2.4 ms;
// RFC 8257 §3.1's step, a switch's marking threshold) and a 300 kB buffer: full rate, no loss,
// the queue stays near K where CUBIC (no ECN) fills the buffer.
TEST(DctcpLoopback, StepMarkingHoldsTheQueueNearKAtFullRate) {
  testing::LinkConfig link;
  link.rate = Rate::mbit(100);
  link.delay = Duration::ms(5);
  link.queue_limit_bytes = 300'000;
  link.ce_threshold_bytes = 30'000;
  Params rcv;
  rcv.ecn_feedback = EcnFeedback::kDctcp;
  testing::Loopback lb(link, {dctcp_params()}, rcv);
  const double dctcp_queue = mean_queue(lb, Duration::s(3), Duration::s(10));
  const double goodput = lb.receiver(0).stats().bytes_received * 8.0 / 10.0;
  EXPECT_GT(goodput, 0.95 * testing::max_goodput_bps(link.rate, 1448));
  EXPECT_EQ(lb.queue_drops(), 0u);
  EXPECT_EQ(lb.sender(0).stats().retransmits, 0u);
  EXPECT_GT(lb.ce_marks(), 100u);
  EXPECT_LT(dctcp_queue, 60'000.0);  // around K, not the 300 kB buffer
  const uint32_t alpha = lb.sender(0).dctcp()->alpha();
  EXPECT_GT(alpha, 0u);
  EXPECT_LT(alpha, 512u);  // a step AQM marks a small fraction once converged (RFC 8257 §3.3)

  Params cubic;
  testing::Loopback classic(link, {cubic}, Params{});
  EXPECT_GT(mean_queue(classic, Duration::s(3), Duration::s(10)), 100'000.0);
}

// A constant marking fraction p independent of the queue: alpha tracks p (RFC 8257 §3.3's
// estimate of the fraction of marked bytes), within the EWMA's noise, and cwnd settles at 2/p.
TEST(DctcpLoopback, AlphaEstimatesAConstantMarkingFraction) {
  testing::LinkConfig link;
  link.rate = Rate::mbit(100);
  link.delay = Duration::ms(5);
  link.queue_limit_bytes = 1'000'000;
  link.ce_probability = 0.05;
  Params rcv;
  rcv.ecn_feedback = EcnFeedback::kDctcp;
  testing::Loopback lb(link, {dctcp_params()}, rcv);
  double sum = 0.0;
  double cwnd = 0.0;
  int n = 0;
  for (int ms = 2000; ms <= 20000; ms += 100) {
    lb.run_until(Time::zero() + Duration::ms(ms));
    sum += lb.sender(0).dctcp()->alpha() / 1024.0;
    cwnd += lb.sender(0).cwnd();
    ++n;
  }
  EXPECT_NEAR(sum / n, 0.05, 0.015);
  // The window where +1 segment per RTT balances a cut of cwnd·α/2 in every window: 2/p = 40
  // (measured 38.2).
  EXPECT_NEAR(cwnd / n, 2 / 0.05, 6.0);
  // Fed-back CE segments ≈ received CE marks (each ECE ACK covers the segments it acks).
  const double echoed = static_cast<double>(lb.sender(0).stats().delivered_ce);
  const double marked = static_cast<double>(lb.receiver(0).stats().ce_received);
  EXPECT_NEAR(echoed / marked, 1.0, 0.1);
}

}  // namespace
}  // namespace nicsim::sim::tcp
