// TcpReceiver: handshake, quick/delayed ACK policy, SACK generation, window management, ECN
// echo, timestamps, FIN, autotuning — Linux tcp_input.c rules worked by hand.
#include "nicsim/sim/tcp/receiver.h"

#include <gtest/gtest.h>

#include <vector>

namespace nicsim::sim::tcp {
namespace {

constexpr uint32_t kMss = 1448;
uint64_t S(uint64_t n) { return 1 + n * kMss; }

Params base() {
  Params p;
  p.timestamps = false;
  p.moderate_rcvbuf = false;
  return p;
}

Segment syn(bool ts = false, bool ecn = false) {
  Segment s;
  s.seq = 0;
  s.flags = kSyn | (ecn ? kEce | kCwr : 0);
  s.options = kOptMss | kOptWindowScale | kOptSackPermitted | (ts ? kOptTimestamp : 0);
  s.tsval = 100;
  s.wnd = 65535;
  return s;
}

Segment data(uint64_t n, uint32_t len = kMss) {
  Segment s;
  s.seq = S(n);
  s.ack = 1;
  s.len = len;
  s.flags = kAck;
  return s;
}

struct Driver {
  explicit Driver(const Params& p) : rcv(p) {}
  TcpReceiver rcv;
  Time now = Time::zero() + Duration::s(1);
  std::vector<Segment> take() {
    std::vector<Segment> v;
    while (rcv.has_output()) v.push_back(rcv.pop_output());
    return v;
  }
  void handshake() {
    rcv.on_segment(syn(), now);
    take();
    Segment a;
    a.seq = 1;
    a.ack = 1;
    a.flags = kAck;
    rcv.on_segment(a, now);
    take();
  }
  std::vector<Segment> feed(const Segment& s) {
    now += Duration::us(100);
    rcv.on_segment(s, now);
    return take();
  }
};

TEST(TcpReceiver, SynAckMirrorsOptionsWithTheInitialWindow) {
  // tcp_select_initial_window: min(space, 10 · mss) = 14480 (tcp_rmem[1] 131072 → 65536).
  Params p = base();
  p.timestamps = true;
  Driver d(p);
  d.rcv.on_segment(syn(/*ts=*/true, /*ecn=*/true), d.now);
  auto v = d.take();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].has(kSyn) && v[0].has(kAck));
  EXPECT_TRUE(v[0].has(kEce));  // ECN accepted (tcp_ecn = 2)
  EXPECT_EQ(v[0].ack, 1u);
  EXPECT_EQ(v[0].wnd, 14480u);
  EXPECT_EQ(v[0].tsecr, 100u);
  EXPECT_EQ(tcp_options_bytes(v[0]), 20u);  // MSS 4 + SACK_PERM/TS 12 + WS 4
  // Repeated after 1 s, then 2 s, until the handshake completes.
  EXPECT_EQ(d.rcv.next_event(), d.now + Duration::s(1));
  d.now += Duration::s(1);
  d.rcv.advance(d.now);
  EXPECT_EQ(d.take().size(), 1u);
  EXPECT_EQ(d.rcv.next_event(), d.now + Duration::s(2));
  d.feed(data(0));  // data with ACK completes the handshake
  EXPECT_EQ(d.rcv.state(), TcpReceiver::State::kEstablished);
  EXPECT_EQ(d.rcv.stats().syn_acks_sent, 2u);
}

TEST(TcpReceiver, QuickAcksWhileTheWindowGrowsThenEverySecondSegment) {
  // tcp_incr_quickack: 14480 / (2 · 1448) = 5 quick ACKs at the first data; tcp_grow_window
  // raises rcv_ssthresh by 2 · 1448 per segment (14480 → 65536 after 18 segments) and asks
  // for a quick ACK each time; the remaining 4 quick ACKs follow. From then on
  // __tcp_ack_snd_check ACKs when more than one full segment is unacknowledged.
  Driver d(base());
  d.handshake();
  int acked = 0;
  for (uint64_t n = 0; n < 22; ++n) {
    auto v = d.feed(data(n));
    ASSERT_EQ(v.size(), 1u) << "segment " << n;
    EXPECT_EQ(v[0].ack, S(n + 1));
    ++acked;
  }
  EXPECT_EQ(d.rcv.rcv_ssthresh(), 65536u);
  EXPECT_EQ(d.rcv.quick_acks_left(), 0u);
  for (uint64_t n = 22; n < 40; n += 2) {
    auto v = d.feed(data(n));
    EXPECT_TRUE(v.empty()) << "segment " << n;
    EXPECT_EQ(d.rcv.delack_deadline(), d.now + Duration::ms(40)) << "segment " << n;
    v = d.feed(data(n + 1));
    ASSERT_EQ(v.size(), 1u) << "segment " << n + 1;
    EXPECT_EQ(v[0].ack, S(n + 2));
    EXPECT_FALSE(d.rcv.delack_deadline());
  }
  EXPECT_EQ(d.rcv.stats().acks_sent, 1u + 22 + 9);
}

void warm_up(Driver& d, uint64_t& next) {
  d.handshake();
  for (; next < 22; ++next) d.feed(data(next));
}

// Plays a well-behaved sender against a slow reader: sends in-order segments up to the
// advertised right edge, waits for the receiver's timers when it may not send, and stops once a
// zero window is advertised. Checks that the right edge never moves left.
struct WindowPlay {
  uint64_t n = 0;
  uint64_t edge = 0;
  bool saw_zero = false;
  void absorb(const std::vector<Segment>& acks) {
    for (const Segment& a : acks) {
      EXPECT_GE(a.ack + a.wnd, edge) << "right edge moved left";
      edge = std::max(edge, a.ack + a.wnd);
      saw_zero |= a.wnd == 0;
    }
  }
  void fill(Driver& d) {
    for (int round = 0; round < 100 && !saw_zero; ++round) {
      while (S(n + 1) <= edge && !saw_zero) {
        absorb(d.feed(data(n++)));
      }
      if (saw_zero) break;
      auto t = d.rcv.next_event();
      ASSERT_TRUE(t);
      d.now = *t;
      d.rcv.advance(d.now);
      absorb(d.take());
    }
  }
};

TEST(TcpReceiver, DelayedAckTimerAcksALoneSegment) {
  // TCP_DELACK_MIN = 40 ms (tcp_send_delayed_ack keeps an earlier deadline).
  Driver d(base());
  uint64_t n = 0;
  warm_up(d, n);
  EXPECT_TRUE(d.feed(data(n)).empty());
  const Time due = d.now + Duration::ms(40);
  EXPECT_EQ(d.rcv.next_event(), due);
  d.now = due - Duration::ns(1);
  d.rcv.advance(d.now);
  EXPECT_TRUE(d.take().empty());
  d.now = due;
  d.rcv.advance(d.now);
  auto v = d.take();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].ack, S(n + 1));
  EXPECT_EQ(d.rcv.stats().delayed_acks, 1u);
}

TEST(TcpReceiver, OutOfOrderDataIsAckedAtOnceWithSackAndTheFilledHoleToo) {
  // RFC 5681 §4.2: immediate ACK for out-of-order data and when the hole is filled;
  // RFC 2018: the first block holds the most recent arrival.
  Driver d(base());
  uint64_t n = 0;
  warm_up(d, n);  // next expected: segment 22
  auto v = d.feed(data(23));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].ack, S(22));
  ASSERT_EQ(v[0].num_sacks, 1u);
  EXPECT_EQ(v[0].sacks[0], (SackBlock{S(23), S(24)}));
  v = d.feed(data(25));
  ASSERT_EQ(v.size(), 1u);
  ASSERT_EQ(v[0].num_sacks, 2u);
  EXPECT_EQ(v[0].sacks[0], (SackBlock{S(25), S(26)}));
  EXPECT_EQ(v[0].sacks[1], (SackBlock{S(23), S(24)}));
  v = d.feed(data(24));  // joins both blocks: one block, first
  ASSERT_EQ(v[0].num_sacks, 1u);
  EXPECT_EQ(v[0].sacks[0], (SackBlock{S(23), S(26)}));
  v = d.feed(data(22));  // fills the hole
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].ack, S(26));
  EXPECT_EQ(v[0].num_sacks, 0u);
  EXPECT_EQ(d.rcv.ooo_bytes(), 0u);
  EXPECT_EQ(d.rcv.stats().bytes_received, 26u * kMss);
}

TEST(TcpReceiver, AtMostThreeSackBlocksWithTimestampsFourWithout) {
  for (bool ts : {false, true}) {
    Params p = base();
    p.timestamps = true;
    Driver d(p);
    d.rcv.on_segment(syn(ts), d.now);
    d.take();
    Segment a;
    a.seq = 1;
    a.ack = 1;
    a.flags = kAck;
    d.rcv.on_segment(a, d.now);
    d.feed(data(0));
    Segment last;
    for (uint64_t k = 2; k <= 10; k += 2) {  // holes at 1, 3, 5, 7, 9
      auto v = d.feed(data(k));
      ASSERT_EQ(v.size(), 1u);
      last = v[0];
    }
    EXPECT_EQ(last.num_sacks, ts ? 3u : 4u);
    EXPECT_EQ(last.sacks[0], (SackBlock{S(10), S(11)}));
    EXPECT_EQ(last.sacks[1], (SackBlock{S(8), S(9)}));
    EXPECT_EQ(tcp_options_bytes(last), ts ? 12u + 4 + 24 : 4u + 32);
  }
}

TEST(TcpReceiver, DuplicateDataForcesAnImmediateAckAndQuickAckMode) {
  // tcp_data_queue: a retransmission we already have → tcp_enter_quickack_mode + ACK now.
  Driver d(base());
  uint64_t n = 0;
  warm_up(d, n);
  auto v = d.feed(data(5));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].ack, S(22));
  EXPECT_EQ(d.rcv.stats().duplicate_bytes, kMss);
  // rcv_wnd 65536 / (2 · 1448) = 22 → capped at TCP_MAX_QUICKACKS 16, one used by that ACK.
  EXPECT_EQ(d.rcv.quick_acks_left(), 15u);
}

TEST(TcpReceiver, FinIsAckedImmediately) {
  Driver d(base());
  uint64_t n = 0;
  warm_up(d, n);
  Segment s = data(22, 100);
  s.flags |= kFin;
  auto v = d.feed(s);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].ack, S(22) + 100 + 1);
  EXPECT_TRUE(d.rcv.fin_received());
}

TEST(TcpReceiver, SlowReaderClosesTheWindowWithoutShrinkingItAndReopens) {
  // __tcp_select_window / tcp_select_window: free space shrinks as unread data queues, the
  // right edge never moves left, zero once less than an MSS (or 1/16) is free in a
  // half-full buffer; tcp_cleanup_rbuf sends an update when reading doubles the window.
  Params p = base();
  p.rmem = 32768;                     // full space 16384
  p.app_read_rate = Rate::kbit(100);  // 12.5 kB/s
  Driver d(p);
  d.rcv.on_segment(syn(), d.now);
  WindowPlay w;
  w.absorb(d.take());
  EXPECT_EQ(w.edge, 1u + 14480);
  w.fill(d);
  EXPECT_TRUE(w.saw_zero);
  EXPECT_GT(d.rcv.queued(), 16384u);  // more than half of the buffer unread
  // Reading reopens it: a window update with a non-zero window follows.
  bool reopened = false;
  for (int i = 0; i < 100 && !reopened; ++i) {
    auto t = d.rcv.next_event();
    ASSERT_TRUE(t);
    d.now = *t;
    d.rcv.advance(d.now);
    for (const Segment& a : d.take()) {
      EXPECT_GE(a.ack + a.wnd, w.edge);
      reopened |= a.wnd > 0;
    }
  }
  EXPECT_TRUE(reopened);
  EXPECT_GE(d.rcv.stats().window_updates, 1u);
  EXPECT_EQ(d.rcv.stats().window_drops, 0u);
  EXPECT_EQ(d.rcv.stats().buffer_drops, 0u);
}

TEST(TcpReceiver, ZeroWindowProbeIsAnsweredAndDataBeyondTheWindowDropped) {
  Params p = base();
  p.rmem = 32768;
  p.app_read_rate = Rate::kbit(8);  // 1 kB/s: effectively stalled
  Driver d(p);
  d.rcv.on_segment(syn(), d.now);
  WindowPlay w;
  w.absorb(d.take());
  w.fill(d);
  ASSERT_TRUE(w.saw_zero);
  ASSERT_EQ(d.rcv.rcv_wnd(), 0u);
  // A probe: zero-length, sequence rcv_nxt − 1.
  Segment probe;
  probe.seq = d.rcv.rcv_nxt() - 1;
  probe.ack = 1;
  probe.flags = kAck;
  auto v = d.feed(probe);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].ack, d.rcv.rcv_nxt());
  EXPECT_EQ(v[0].wnd, 0u);
  // Data beyond a zero window is dropped and answered.
  const uint64_t before = d.rcv.stats().bytes_received;
  v = d.feed(data(w.n));
  EXPECT_EQ(d.rcv.stats().window_drops, 1u);
  EXPECT_EQ(d.rcv.stats().bytes_received, before);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].ack, d.rcv.rcv_nxt());
}

TEST(TcpReceiver, EcnEchoRepeatsUntilCwr) {
  // RFC 3168 §6.1.3: ECE on every ACK from the CE mark until a segment with CWR arrives.
  Driver d(base());
  d.rcv.on_segment(syn(false, true), d.now);
  d.take();
  uint64_t n = 0;
  for (; n < 22; ++n) d.feed(data(n));
  Segment ce = data(n++);
  ce.ecn = Ecn::kCe;
  auto v = d.feed(ce);
  ASSERT_EQ(v.size(), 1u);  // CE: quick ACK (tcp_enter_quickack_mode(sk, 2))
  EXPECT_TRUE(v[0].has(kEce));
  v = d.feed(data(n++));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].has(kEce));
  Segment cwr = data(n++);
  cwr.flags |= kCwr;
  d.feed(cwr);
  v = d.feed(data(n++));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_FALSE(v[0].has(kEce));
  EXPECT_EQ(d.rcv.stats().ce_received, 1u);
}

TEST(TcpReceiver, TsRecentOnlyFromSegmentsAtOrBelowLastAckSent) {
  // RFC 7323 §4.3: TS.Recent = SEG.TSval if SEG.SEQ <= Last.ACK.sent.
  Params p = base();
  p.timestamps = true;
  Driver d(p);
  d.rcv.on_segment(syn(true), d.now);
  d.take();
  uint64_t n = 0;
  for (; n < 22; ++n) {
    Segment s = data(n);
    s.options = kOptTimestamp;
    s.tsval = 1000 + static_cast<uint32_t>(n);
    d.feed(s);
  }
  Segment a = data(n);  // first of a delayed pair: seq == Last.ACK.sent → recorded
  a.options = kOptTimestamp;
  a.tsval = 5000;
  d.feed(a);
  Segment b = data(n + 1);  // seq > Last.ACK.sent → not recorded
  b.options = kOptTimestamp;
  b.tsval = 6000;
  auto v = d.feed(b);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].tsecr, 5000u);
}

TEST(TcpReceiver, AutotuningGrowsTheBufferUpToRmemMax) {
  // tcp_rcv_space_adjust: per receiver RTT, rcvbuf follows 2 · copied + 16 · mss.
  Params p;
  p.timestamps = true;
  p.rmem_max = 1 << 20;
  Driver d(p);
  d.rcv.on_segment(syn(true), d.now);
  auto sa = d.take();
  uint64_t n = 0;
  const uint64_t initial = d.rcv.rcvbuf();
  for (int ms = 0; ms < 200; ++ms) {
    for (int k = 0; k < 40; ++k) {  // 40 segments per ms ≈ 463 Mbit/s
      Segment s = data(n++);
      s.options = kOptTimestamp;
      s.tsecr = static_cast<uint32_t>(d.now.ns_since_epoch() / 1'000'000);  // ≈ 1 ms RTT
      d.rcv.on_segment(s, d.now);
      d.take();
    }
    d.now += Duration::ms(1);
  }
  EXPECT_GT(d.rcv.rcvbuf(), initial);
  EXPECT_LE(d.rcv.rcvbuf(), static_cast<uint64_t>(p.rmem_max));
  EXPECT_EQ(d.rcv.rcvbuf(), static_cast<uint64_t>(p.rmem_max));
  EXPECT_EQ(d.rcv.window_clamp(), static_cast<uint64_t>(p.rmem_max) / 2);
  EXPECT_GT(d.rcv.stats().rcvbuf_grows, 0u);
}

}  // namespace
}  // namespace nicsim::sim::tcp
