// Loopback: TcpSender/TcpReceiver pairs through a drop-tail bottleneck (loopback_harness.h).
// End-to-end properties the unit tests cannot show: utilisation with a BDP-sized buffer,
// fairness between two flows, recovery from random loss, TSQ at the sender's own NIC, exact
// delivery of finite transfers, determinism. Bands, not exact values — the exact rules are
// pinned by the unit tests (sender_test.cc, receiver_test.cc, congestion_control_test.cc).
#include <gtest/gtest.h>

#include <cmath>

#include "nicsim/sim/tcp/loopback_harness.h"

namespace nicsim::sim::tcp {
namespace {

using testing::LinkConfig;
using testing::Loopback;
using testing::max_goodput_bps;

Time at(Duration d) { return Time::zero() + d; }

struct Measure {
  double goodput_bps;
  uint64_t retransmits;
};

// Goodput of flow i between t1 and t2 (receiver side, in-order bytes).
Measure measure(Loopback& lb, size_t i, Duration t1, Duration t2) {
  lb.run_until(at(t1));
  const uint64_t b1 = lb.receiver(i).stats().bytes_received;
  const uint64_t r1 = lb.sender(i).stats().retransmits;
  lb.run_until(at(t2));
  const uint64_t b2 = lb.receiver(i).stats().bytes_received;
  return Measure{static_cast<double>(b2 - b1) * 8 / (t2 - t1).to_seconds(),
                 lb.sender(i).stats().retransmits - r1};
}

LinkConfig bdp_link(Rate rate, Duration rtt) {
  LinkConfig l;
  l.rate = rate;
  l.delay = rtt / 2;
  // One bandwidth-delay product of frame bytes.
  l.queue_limit_bytes = rate.bytes_in(rtt);
  return l;
}

TEST(Loopback, OneFlowFillsTheBottleneckWithABdpBuffer) {
  // 100 Mbit/s, RTT 10 ms, buffer 125 kB: the sawtooth never drains the queue, so the link
  // stays busy: goodput >= 95 % of the payload share of the line rate, for both algorithms.
  for (CcAlgorithm cc : {CcAlgorithm::kCubic, CcAlgorithm::kNewReno}) {
    Params p;
    p.cc = cc;
    Loopback lb(bdp_link(Rate::mbit(100), Duration::ms(10)), {p}, Params{});
    const Measure m = measure(lb, 0, Duration::s(5), Duration::s(25));
    const double ratio = m.goodput_bps / max_goodput_bps(Rate::mbit(100), 1448);
    EXPECT_GE(ratio, 0.95) << to_string(cc);
    EXPECT_LE(ratio, 1.0) << to_string(cc);
    EXPECT_GT(lb.queue_drops(), 0u) << to_string(cc);  // it does probe the buffer
    EXPECT_EQ(lb.sender(0).stats().rto_count, 0u) << to_string(cc);
    std::printf("%s: %.4f of max, retr %lu, drops %lu, cwnd %u\n",
                std::string(to_string(cc)).c_str(), ratio,
                static_cast<unsigned long>(m.retransmits),
                static_cast<unsigned long>(lb.queue_drops()), lb.sender(0).cwnd());
  }
}

double jain(double a, double b) { return (a + b) * (a + b) / (2 * (a * a + b * b)); }

TEST(Loopback, TwoFlowsShareFairly) {
  // Same RTT, the second flow starts 2 s later; Jain's index over 60 s > 0.9.
  for (CcAlgorithm cc : {CcAlgorithm::kCubic, CcAlgorithm::kNewReno}) {
    Params p;
    p.cc = cc;
    Loopback lb(bdp_link(Rate::mbit(20), Duration::ms(20)), {p, p}, Params{},
                {Duration::zero(), Duration::s(2)});
    lb.run_until(at(Duration::s(10)));
    const uint64_t a1 = lb.receiver(0).stats().bytes_received;
    const uint64_t b1 = lb.receiver(1).stats().bytes_received;
    lb.run_until(at(Duration::s(70)));
    const double a = static_cast<double>(lb.receiver(0).stats().bytes_received - a1);
    const double b = static_cast<double>(lb.receiver(1).stats().bytes_received - b1);
    const double j = jain(a, b);
    std::printf("%s: a %.2f b %.2f Mbit/s jain %.4f\n", std::string(to_string(cc)).c_str(),
                a * 8 / 60e6, b * 8 / 60e6, j);
    EXPECT_GT(j, 0.9) << to_string(cc);
    const double total = (a + b) * 8 / 60.0;
    EXPECT_GE(total / max_goodput_bps(Rate::mbit(20), 1448), 0.95) << to_string(cc);
  }
}

TEST(Loopback, RecoversFromRandomLossAndDeliversEveryByte) {
  // 1 % random loss of data frames: recovery by SACK and RTO; a finite 20 MB transfer arrives
  // complete and in order, and the sender finishes.
  for (bool sack : {true, false}) {
    Params p;
    p.bytes_to_send = 20'000'000;
    p.sack = sack;
    LinkConfig l = bdp_link(Rate::mbit(50), Duration::ms(10));
    l.loss = 0.01;
    l.seed = 7;
    Loopback lb(l, {p}, Params{});
    lb.run_until(at(Duration::s(120)));
    EXPECT_TRUE(lb.sender(0).finished()) << "sack " << sack;
    EXPECT_EQ(lb.receiver(0).stats().bytes_received, 20'000'000u) << "sack " << sack;
    EXPECT_TRUE(lb.receiver(0).fin_received());
    EXPECT_GT(lb.wire_losses(), 0u);
    const auto& st = lb.sender(0).stats();
    EXPECT_GE(st.retransmits, lb.wire_losses() / 2);
    EXPECT_GT(st.fast_recoveries, 0u);
    const double secs = (lb.sender(0).completion_time() - Time::zero()).to_seconds();
    std::printf("sack %d: %.2f s, %.2f Mbit/s, losses %lu, retr %lu, fr %lu, rto %lu\n", sack, secs,
                20e6 * 8 / secs / 1e6, static_cast<unsigned long>(lb.wire_losses()),
                static_cast<unsigned long>(st.retransmits),
                static_cast<unsigned long>(st.fast_recoveries),
                static_cast<unsigned long>(st.rto_count));
  }
}

TEST(Loopback, InvariantsHoldUnderRandomLossAcrossSeeds) {
  // Scoreboard and window invariants checked every millisecond while 3 % of data frames are
  // lost, for several seeds, algorithms and SACK on/off; every byte arrives exactly once.
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Params p;
    p.bytes_to_send = 3'000'000;
    p.cc = seed % 2 == 0 ? CcAlgorithm::kNewReno : CcAlgorithm::kCubic;
    p.sack = seed != 3;
    p.gso = seed != 4;
    LinkConfig l = bdp_link(Rate::mbit(20), Duration::ms(8));
    l.loss = 0.03;
    l.seed = seed;
    Loopback lb(l, {p}, Params{});
    for (int ms = 1; ms <= 60'000 && !lb.sender(0).finished(); ++ms) {
      lb.run_until(at(Duration::ms(ms)));
      const TcpSender& s = lb.sender(0);
      const Scoreboard& sb = s.scoreboard();
      ASSERT_LE(s.snd_una(), s.snd_nxt() + 1);
      ASSERT_EQ(
          sb.packets_out(),
          (s.snd_nxt() - std::min(s.snd_una(), s.snd_nxt()) + s.params().mss - 1) / s.params().mss)
          << "seed " << seed << " t " << ms;
      ASSERT_LE(sb.sacked_out() + sb.lost_out(), sb.packets_out()) << "seed " << seed;
      ASSERT_LE(sb.retrans_out(), sb.lost_out()) << "seed " << seed;
      ASSERT_LE(sb.in_flight(), sb.packets_out()) << "seed " << seed;
      const TcpReceiver& r = lb.receiver(0);
      if (r.state() == TcpReceiver::State::kEstablished) {
        ASSERT_EQ(r.rcv_nxt(), 1 + r.stats().bytes_received + (r.fin_received() ? 1 : 0));
      }
    }
    EXPECT_TRUE(lb.sender(0).finished()) << "seed " << seed;
    EXPECT_EQ(lb.receiver(0).stats().bytes_received, 3'000'000u) << "seed " << seed;
    EXPECT_EQ(lb.receiver(0).stats().window_drops, 0u);
    EXPECT_EQ(lb.receiver(0).stats().buffer_drops, 0u);
    EXPECT_GT(lb.wire_losses(), 20u);
    std::printf("seed %lu: losses %lu retr %lu rto %lu done %.3f s\n",
                static_cast<unsigned long>(seed), static_cast<unsigned long>(lb.wire_losses()),
                static_cast<unsigned long>(lb.sender(0).stats().retransmits),
                static_cast<unsigned long>(lb.sender(0).stats().rto_count),
                (lb.sender(0).completion_time() - Time::zero()).to_seconds());
  }
}

TEST(Loopback, TsqAtTheSendersNicBoundsItsQueueButKeepsTheLinkBusy) {
  // docs/mechanisms §2.7/§10: when the bottleneck is the sender's own NIC (TX completion at
  // departure), TSQ keeps only about limit bytes below the socket — the queue stays far below
  // the 1 MB buffer — and the link is still saturated.
  LinkConfig l;
  l.rate = Rate::mbit(100);
  l.delay = Duration::ms(1);
  l.queue_limit_bytes = 1'000'000;
  l.release_at_departure = true;
  Params p;
  Loopback lb(l, {p}, Params{});
  const Measure m = measure(lb, 0, Duration::s(2), Duration::s(10));
  EXPECT_GE(m.goodput_bps / max_goodput_bps(l.rate, 1448), 0.95);
  EXPECT_EQ(lb.queue_drops(), 0u);
  EXPECT_GT(lb.sender(0).stats().tsq_throttles, 0u);
  // 1 ms at ~1.2·cwnd·mss/srtt, or two 2-segment units: a few tens of kB, not the 1 MB buffer.
  EXPECT_LT(lb.max_queue_bytes(), 100'000u);
  std::printf("tsq: max queue %lu B, throttles %lu\n",
              static_cast<unsigned long>(lb.max_queue_bytes()),
              static_cast<unsigned long>(lb.sender(0).stats().tsq_throttles));

  // Without TSQ the same flow fills the NIC queue.
  Params no_tsq = p;
  no_tsq.tsq = false;
  Loopback lb2(l, {no_tsq}, Params{});
  lb2.run_until(at(Duration::s(10)));
  EXPECT_GT(lb2.max_queue_bytes(), 500'000u);
}

TEST(Loopback, SameInputsGiveIdenticalRuns) {
  auto run = [] {
    Params p;
    LinkConfig l = bdp_link(Rate::mbit(20), Duration::ms(10));
    l.loss = 0.005;
    l.seed = 42;
    Loopback lb(l, {p, p}, Params{}, {Duration::zero(), Duration::ms(300)});
    lb.run_until(at(Duration::s(5)));
    return std::make_tuple(lb.trace_hash(), lb.events(), lb.receiver(0).stats().bytes_received,
                           lb.sender(1).stats().retransmits);
  };
  const auto a = run();
  const auto b = run();
  EXPECT_EQ(a, b);
  EXPECT_GT(std::get<1>(a), 1000u);
}

}  // namespace
}  // namespace nicsim::sim::tcp
