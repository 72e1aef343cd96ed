// TcpSender: handshake, slow start, fast retransmit, RFC 6675 recovery, RTO/Karn, receive
// window, TSQ, GSO autosizing, pacing, local drops, ECN, finite transfers — on a manual clock
// with hand-made ACKs. Sections cited: RFC 5681, 6298, 6582, 6675, 6928, 6937, 3168 and
// docs/mechanisms §2.7/§7.1/§10 (TSQ).
#include "nicsim/sim/tcp/sender.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <set>
#include <vector>

#include "nicsim/core/gso.h"

namespace nicsim::sim::tcp {
namespace {

constexpr uint32_t kMss = 1448;
constexpr uint32_t kBigWnd = 1u << 24;
uint64_t S(uint64_t n) { return 1 + n * kMss; }  // first byte of data segment n

Params base() {
  Params p;
  p.cc = CcAlgorithm::kNewReno;
  p.gso = false;
  p.tsq = false;
  p.timestamps = false;
  p.hystart = false;
  return p;
}

Segment syn_ack(uint32_t wnd = kBigWnd, bool sack = true, bool ts = false, bool ece = false) {
  Segment s;
  s.seq = 0;
  s.ack = 1;
  s.flags = kSyn | kAck | (ece ? kEce : 0);
  s.options = kOptMss | kOptWindowScale | (sack ? kOptSackPermitted : 0) | (ts ? kOptTimestamp : 0);
  s.wnd = wnd;
  return s;
}

Segment ack(uint64_t cum, std::vector<SackBlock> sacks = {}, uint32_t wnd = kBigWnd,
            uint8_t extra_flags = 0) {
  Segment s;
  s.seq = 1;
  s.ack = cum;
  s.flags = kAck | extra_flags;
  s.wnd = wnd;
  s.num_sacks = static_cast<uint8_t>(sacks.size());
  for (size_t i = 0; i < sacks.size(); ++i) {
    s.sacks[i] = sacks[i];
  }
  return s;
}

struct Driver {
  explicit Driver(const Params& p) : snd(p) {}
  TcpSender snd;
  Time now = Time::zero() + Duration::s(1);
  std::vector<Segment> out;

  std::vector<Segment> take() {
    std::vector<Segment> v;
    while (snd.has_output()) {
      v.push_back(snd.pop_output());
    }
    return v;
  }
  std::vector<Segment> data(const std::vector<Segment>& v) {
    std::vector<Segment> d;
    for (const Segment& s : v) {
      if (s.len > 0) {
        d.push_back(s);
      }
    }
    return d;
  }
  // connect + SYN-ACK after `rtt`; returns the data segments of the initial window.
  std::vector<Segment> establish(Duration rtt, const Segment& sa = syn_ack()) {
    snd.connect(now);
    take();
    now += rtt;
    snd.on_segment(sa, now);
    return data(take());
  }
  std::vector<Segment> on(const Segment& a) {
    snd.on_segment(a, now);
    return take();
  }
};

TEST(TcpSender, HandshakeSamplesRttAndSendsInitialWindow) {
  // RFC 6298 (2.2) first sample from the SYN/SYN-ACK; RFC 6928 IW = 10 segments.
  Driver d(base());
  d.snd.connect(d.now);
  auto syn = d.take();
  ASSERT_EQ(syn.size(), 1u);
  EXPECT_TRUE(syn[0].has(kSyn));
  EXPECT_EQ(syn[0].seq, 0u);
  EXPECT_EQ(tcp_options_bytes(syn[0]), 12u);              // MSS 4 + NOP,NOP,SACK_PERM 4 + NOP,WS 4
  EXPECT_EQ(d.snd.next_event(), d.now + Duration::s(1));  // RFC 6298 (2.1)
  d.now += Duration::ms(10);
  d.snd.on_segment(syn_ack(), d.now);
  auto v = d.take();
  ASSERT_EQ(v.size(), 11u);
  EXPECT_EQ(v[0].len, 0u);  // the handshake's ACK
  EXPECT_EQ(v[0].seq, 1u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(v[i + 1].seq, S(i));
    EXPECT_EQ(v[i + 1].len, kMss);
    EXPECT_EQ(v[i + 1].gso_segs, 1u);
  }
  EXPECT_EQ(d.snd.rtt().srtt(), Duration::ms(10));
  EXPECT_EQ(d.snd.cwnd(), 10u);
  EXPECT_EQ(d.snd.scoreboard().packets_out(), 10u);
  // Linux RTO = SRTT + max(4·RTTVAR, 200 ms) = 10 + 200 ms, armed at the first data segment.
  EXPECT_EQ(d.snd.rto_deadline(), d.now + Duration::ms(210));
}

TEST(TcpSender, SynRetransmissionBacksOffAndStartsWithOneSegment) {
  // RFC 6298 (5.5) doubling; Karn: no sample; RFC 5681 §3.1: IW = 1 after a lost SYN;
  // RFC 6298 (5.7): RTO 3 s once data flows.
  Driver d(base());
  d.snd.connect(d.now);
  d.take();
  d.now += Duration::s(1);
  d.snd.advance(d.now);
  auto v = d.take();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].has(kSyn));
  EXPECT_EQ(d.snd.next_event(), d.now + Duration::s(2));
  d.now += Duration::s(2);
  d.snd.advance(d.now);
  EXPECT_EQ(d.take().size(), 1u);
  EXPECT_EQ(d.snd.stats().syn_retransmits, 2u);
  d.now += Duration::ms(10);
  d.snd.on_segment(syn_ack(), d.now);
  auto data = d.data(d.take());
  EXPECT_EQ(data.size(), 1u);
  EXPECT_EQ(d.snd.rtt().samples(), 0u);
  EXPECT_EQ(d.snd.rtt().rto(), Duration::s(3));
}

// Delivers every data segment of a round, ACKing every second one (delayed ACK); returns the
// data segments sent in response (the next round).
std::vector<Segment> ack_round_in_pairs(Driver& d, const std::vector<Segment>& round,
                                        Duration rtt) {
  d.now += rtt;
  std::vector<Segment> next;
  for (size_t i = 1; i < round.size(); i += 2) {
    auto v = d.data(d.on(ack(round[i].seq + round[i].len)));
    next.insert(next.end(), v.begin(), v.end());
  }
  return next;
}

TEST(TcpSender, SlowStartDoublesCwndPerRoundTrip) {
  // RFC 5681 §3.1 + Linux ABC: every ACK covering 2 segments adds 2, so cwnd doubles per RTT
  // from IW 10 (RFC 6928) even with delayed ACKs.
  for (CcAlgorithm cc : {CcAlgorithm::kNewReno, CcAlgorithm::kCubic}) {
    Params p = base();
    p.cc = cc;
    Driver d(p);
    auto round = d.establish(Duration::ms(10));
    EXPECT_EQ(round.size(), 10u);
    for (uint32_t expect : {20u, 40u, 80u, 160u}) {
      round = ack_round_in_pairs(d, round, Duration::ms(10));
      EXPECT_EQ(d.snd.cwnd(), expect) << to_string(cc);
      EXPECT_EQ(round.size(), expect) << to_string(cc);
    }
  }
}

TEST(TcpSender, CwndDoesNotGrowWhenTheReceiveWindowLimits) {
  // Linux tcp_is_cwnd_limited: in slow start cwnd grows only while cwnd < 2·max_packets_out.
  Driver d(base());
  auto round = d.establish(Duration::ms(10), syn_ack(4 * kMss));
  EXPECT_EQ(round.size(), 4u);
  for (int r = 0; r < 20; ++r) {
    d.now += Duration::ms(10);
    std::vector<Segment> next;
    for (const Segment& s : round) {
      auto v = d.data(d.on(ack(s.seq + s.len, {}, 4 * kMss)));
      next.insert(next.end(), v.begin(), v.end());
    }
    round = next;
    EXPECT_EQ(round.size(), 4u);
  }
  EXPECT_EQ(d.snd.cwnd(), 10u);
}

TEST(TcpSender, FastRetransmitAfterThreeDupacksWithoutSack) {
  // RFC 5681 §3.2: the third duplicate ACK triggers the retransmission of the first
  // unacknowledged segment; ssthresh = max(FlightSize/2, 2) (Linux: cwnd/2).
  Params p = base();
  p.sack = false;
  Driver d(p);
  d.establish(Duration::ms(10), syn_ack(kBigWnd, false));
  d.now += Duration::ms(10);
  // Segment 0 lost; 1, 2, 3 arrive: three duplicate ACKs for sequence 1.
  for (int i = 0; i < 2; ++i) {
    auto v = d.on(ack(S(0)));
    for (const Segment& s : v) {
      EXPECT_FALSE(s.has(kRetransmit));
    }
  }
  EXPECT_EQ(d.snd.ca_state(), CaState::kDisorder);
  auto v = d.on(ack(S(0)));
  ASSERT_FALSE(v.empty());
  EXPECT_TRUE(v[0].has(kRetransmit));
  EXPECT_EQ(v[0].seq, S(0));
  EXPECT_EQ(v[0].len, kMss);
  EXPECT_EQ(d.snd.ca_state(), CaState::kRecovery);
  EXPECT_EQ(d.snd.ssthresh(), 5u);
  EXPECT_EQ(d.snd.stats().fast_recoveries, 1u);
  EXPECT_EQ(d.snd.stats().dupacks, 3u);
  EXPECT_EQ(d.snd.stats().retransmits, 1u);
}

TEST(TcpSender, FastRetransmitWhenDupThreshSegmentsAreSacked) {
  // RFC 6675 §5: IsLost(HighACK + 1) once DupThresh = 3 segments above it are SACKed.
  Driver d(base());
  d.establish(Duration::ms(10));
  d.now += Duration::ms(10);
  auto v1 = d.on(ack(S(0), {{S(1), S(2)}}));
  auto v2 = d.on(ack(S(0), {{S(1), S(3)}}));
  for (const auto& v : {v1, v2}) {
    for (const Segment& s : v) {
      EXPECT_FALSE(s.has(kRetransmit));  // new data only (pipe fell by one per SACK)
    }
  }
  auto v3 = d.on(ack(S(0), {{S(1), S(4)}}));
  ASSERT_FALSE(v3.empty());
  EXPECT_TRUE(v3[0].has(kRetransmit));
  EXPECT_EQ(v3[0].seq, S(0));
  EXPECT_EQ(d.snd.scoreboard().lost_out(), 1u);
  EXPECT_EQ(d.snd.stats().fast_recoveries, 1u);
}

// A receiver oracle: ACK per segment with RFC 2018 SACK blocks (most recent first).
struct Oracle {
  std::set<uint64_t> have;  // segment numbers received
  std::deque<uint64_t> recent;
  Segment on_data(const Segment& s) {
    for (uint64_t n = (s.seq - 1) / kMss; n < (s.seq - 1 + s.len) / kMss; ++n) {
      have.insert(n);
    }
    uint64_t cum = 0;
    while (have.count(cum)) {
      ++cum;
    }
    recent.push_front((s.seq - 1) / kMss);
    std::vector<SackBlock> blocks;
    for (uint64_t r : recent) {
      if (r < cum || blocks.size() == 4) {
        continue;
      }
      uint64_t lo = r, hi = r + 1;
      while (lo > cum && have.count(lo - 1)) --lo;
      while (have.count(hi)) ++hi;
      const SackBlock b{S(lo), S(hi)};
      if (std::find(blocks.begin(), blocks.end(), b) == blocks.end()) {
        blocks.push_back(b);
      }
    }
    return ack(S(cum), blocks);
  }
};

struct LossRun {
  std::vector<uint64_t> retransmitted;                // sequence numbers, in order
  std::vector<std::pair<uint64_t, uint64_t>> rtx_at;  // (segment delivered, rtx seg)
  uint32_t ssthresh_in_recovery = 0;
  uint32_t cwnd_after = 0;
  uint32_t ssthresh_after = 0;
  uint32_t max_excess = 0;  // max(in_flight − cwnd) after any ACK during recovery
};

// IW 10 at RTT 10 ms, first transmissions of `lost` segments dropped, ACK per segment.
LossRun run_with_losses(Params p, const std::set<uint64_t>& lost) {
  Driver d(p);
  std::deque<Segment> net;
  for (const Segment& s : d.establish(Duration::ms(10))) net.push_back(s);
  Oracle o;
  LossRun r;
  std::set<uint64_t> dropped;
  bool was_in_recovery = false;
  while (!net.empty() && d.snd.snd_una() < S(40)) {
    const Segment s = net.front();
    net.pop_front();
    d.now += Duration::us(100);
    const uint64_t n = (s.seq - 1) / kMss;
    if (lost.count(n) && !dropped.count(n)) {
      dropped.insert(n);
      continue;
    }
    for (const Segment& out : d.data(d.on(o.on_data(s)))) {
      if (out.has(kRetransmit)) {
        r.retransmitted.push_back(out.seq);
        r.rtx_at.emplace_back(n, (out.seq - 1) / kMss);
      }
      net.push_back(out);
    }
    if (d.snd.ca_state() == CaState::kRecovery) {
      was_in_recovery = true;
      r.ssthresh_in_recovery = d.snd.ssthresh();
      const uint32_t fl = d.snd.scoreboard().in_flight();
      if (fl > d.snd.cwnd()) r.max_excess = std::max(r.max_excess, fl - d.snd.cwnd());
    } else if (was_in_recovery && r.cwnd_after == 0) {
      r.cwnd_after = d.snd.cwnd();
      r.ssthresh_after = d.snd.ssthresh();
    }
  }
  EXPECT_EQ(d.snd.stats().fast_recoveries, 1u);
  EXPECT_EQ(d.snd.stats().rto_count, 0u);
  return r;
}

TEST(TcpSender, Rfc6675RecoveryRetransmitsExactlyTheLostSegments) {
  // RFC 6675 with prr off: two losses (segments 2 and 5) in one window. Worked by hand:
  // ACKs of 0, 1 grow cwnd to 12 (segments up to 13 sent); SACKs of 3, 4 let segments 14, 15
  // out (pipe 11 < 12); the SACK of 6 makes 2 lost (3 SACKed above) → Recovery, ssthresh 6,
  // cwnd 6, pipe 14 − 3 − 1 = 10, forced retransmission of 2. The SACK of 8 makes 5 lost
  // (6, 7, 8 above); pipe falls by one per SACKed segment: 14 − 6 − 2 + 1 = 7 after 9, 6
  // after 10, 5 after 11 → segment 5 is retransmitted on the ACK of segment 11. Recovery ends
  // when the cumulative ACK reaches the recovery point; cwnd = ssthresh.
  Params p = base();
  p.prr = false;
  const LossRun r = run_with_losses(p, {2, 5});
  ASSERT_EQ(r.retransmitted.size(), 2u);
  EXPECT_EQ(r.retransmitted[0], S(2));
  EXPECT_EQ(r.retransmitted[1], S(5));
  EXPECT_EQ(r.rtx_at[0].first, 6u);   // triggered by segment 6's SACK
  EXPECT_EQ(r.rtx_at[1].first, 11u);  // triggered by segment 11's SACK
  EXPECT_EQ(r.ssthresh_in_recovery, 6u);
  EXPECT_EQ(r.cwnd_after, 6u);
  EXPECT_EQ(r.ssthresh_after, 6u);
  EXPECT_LE(r.max_excess, 5u);  // pipe only exceeds cwnd by what was in flight at entry
}

TEST(TcpSender, PrrRecoveryRetransmitsTheSameSegmentsAndEndsAtSsthresh) {
  // RFC 6937 PRR-SSRB (the default, as Linux): same retransmissions, same exit cwnd.
  const LossRun r = run_with_losses(base(), {2, 5});
  ASSERT_EQ(r.retransmitted.size(), 2u);
  EXPECT_EQ(r.retransmitted[0], S(2));
  EXPECT_EQ(r.retransmitted[1], S(5));
  EXPECT_EQ(r.rtx_at[0].first, 6u);  // PRR sends at least one segment at entry
  EXPECT_EQ(r.cwnd_after, 6u);
  EXPECT_EQ(r.ssthresh_after, 6u);
}

TEST(TcpSender, NewRenoPartialAckRetransmitsTheNextHole) {
  // RFC 6582 §3.2 step 3: without SACK, a partial ACK retransmits the first unacknowledged
  // segment at once.
  Params p = base();
  p.sack = false;
  Driver d(p);
  d.establish(Duration::ms(10), syn_ack(kBigWnd, false));
  d.now += Duration::ms(10);
  // 0 and 1 arrive, 2 lost, 3 and 4 arrive, 5 lost, 6..9 arrive.
  d.on(ack(S(1)));
  d.on(ack(S(2)));
  std::vector<uint64_t> rtx;
  for (int i = 0; i < 6; ++i) {  // dupacks for segments 3, 4, 6, 7, 8, 9
    for (const Segment& s : d.on(ack(S(2)))) {
      if (s.has(kRetransmit)) rtx.push_back(s.seq);
    }
  }
  ASSERT_EQ(rtx.size(), 1u);
  EXPECT_EQ(rtx[0], S(2));
  // The retransmission of 2 arrives: the ACK covers 2, 3, 4 but not 5 — a partial ACK.
  auto v = d.on(ack(S(5)));
  ASSERT_FALSE(v.empty());
  EXPECT_TRUE(v[0].has(kRetransmit));
  EXPECT_EQ(v[0].seq, S(5));
  EXPECT_EQ(d.snd.ca_state(), CaState::kRecovery);
}

TEST(TcpSender, RtoBacksOffRetransmitsTheHeadAndObeysKarn) {
  // RFC 6298 (5.4)–(5.6): on expiry retransmit the earliest segment, double the RTO, restart
  // the timer; RFC 5681 (4)/(5): ssthresh = max(FlightSize/2, 2), cwnd = 1 (loss window).
  // Karn: the ACK of a retransmitted segment yields no sample and keeps the backoff.
  Driver d(base());
  d.establish(Duration::ms(10));
  const Time t1 = d.now;
  EXPECT_EQ(d.snd.next_event(), t1 + Duration::ms(210));
  d.now = t1 + Duration::ms(210);
  d.snd.advance(d.now);
  auto v = d.take();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].seq, S(0));
  EXPECT_TRUE(v[0].has(kRetransmit));
  EXPECT_EQ(d.snd.cwnd(), 1u);
  EXPECT_EQ(d.snd.ssthresh(), 5u);
  EXPECT_EQ(d.snd.ca_state(), CaState::kLoss);
  EXPECT_EQ(d.snd.stats().rto_count, 1u);
  EXPECT_EQ(d.snd.next_event(), d.now + Duration::ms(420));
  d.now += Duration::ms(420);
  d.snd.advance(d.now);
  v = d.take();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].seq, S(0));
  EXPECT_EQ(d.snd.next_event(), d.now + Duration::ms(840));
  EXPECT_EQ(d.snd.ssthresh(), 5u);  // reduced once per episode
  // The retransmission is acknowledged: no RTT sample (Karn), backoff kept, slow start.
  const uint64_t samples = d.snd.rtt().samples();
  d.now += Duration::ms(10);
  v = d.data(d.on(ack(S(1))));
  EXPECT_EQ(d.snd.rtt().samples(), samples);
  EXPECT_EQ(d.snd.rtt().backoff(), 2u);
  EXPECT_EQ(d.snd.cwnd(), 2u);
  ASSERT_EQ(v.size(), 2u);  // lost segments 1 and 2 go out again (one unit each, gso off)
  EXPECT_EQ(v[0].seq, S(1));
  EXPECT_EQ(v[1].seq, S(2));
  EXPECT_EQ(d.snd.next_event(), d.now + Duration::ms(840));
}

TEST(TcpSender, LossStateEndsWhenTheRecoveryPointIsAcked) {
  Driver d(base());
  d.establish(Duration::ms(10));
  d.now += Duration::ms(210);
  d.snd.advance(d.now);
  d.take();
  d.now += Duration::ms(10);
  d.on(ack(S(10)));  // everything outstanding at the timeout
  EXPECT_EQ(d.snd.ca_state(), CaState::kOpen);
  EXPECT_EQ(d.snd.stats().retransmits, 1u);
}

TEST(TcpSender, ReceiveWindowLimitsAndZeroWindowIsProbed) {
  // RFC 9293 §3.8.6.1: never send beyond SND.UNA + SND.WND; zero window → persist timer probes
  // (Linux tcp_probe_timer sends seq = snd_una − 1).
  Driver d(base());
  auto v = d.establish(Duration::ms(10), syn_ack(5 * kMss));
  EXPECT_EQ(v.size(), 5u);
  d.now += Duration::ms(10);
  v = d.data(d.on(ack(S(5), {}, 0)));
  EXPECT_TRUE(v.empty());
  ASSERT_TRUE(d.snd.next_event());
  const Time probe_at = *d.snd.next_event();
  EXPECT_EQ(probe_at, d.now + d.snd.rtt().rto());
  d.now = probe_at;
  d.snd.advance(d.now);
  v = d.take();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].len, 0u);
  EXPECT_EQ(v[0].seq, S(5) - 1);
  EXPECT_EQ(d.snd.stats().window_probes, 1u);
  // Still zero: the next probe waits twice as long.
  d.now += Duration::ms(10);
  d.on(ack(S(5), {}, 0));
  EXPECT_EQ(d.snd.next_event(), probe_at + d.snd.rtt().rto() * 2);
  // The window opens to 3 segments.
  v = d.data(d.on(ack(S(5), {}, 3 * kMss)));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].seq, S(5));
  EXPECT_EQ(v[2].seq + v[2].len, S(8));
}

TEST(TcpSender, TsqStopsAtTheLimitAndResumesOnRelease) {
  // docs/mechanisms §2.7/§7.1: tcp_small_queue_check. RTT 10 ms, cwnd 10: pacing rate =
  // 2 × 1448 × 10 / 10 ms = 2,896,000 B/s, >> 10 = 2828 B; truesize = 1448 + 768 = 2216;
  // limit = max(2 × 2216, 2828) = 4432. Hand down while below <= 4432: 0, 2216, 4432 → 3
  // segments (6648 below), then stop.
  Params p = base();
  p.tsq = true;
  Driver d(p);
  auto v = d.establish(Duration::ms(10));
  EXPECT_EQ(d.snd.pacing_rate_bytes_per_sec(), 2'896'000u);
  EXPECT_EQ(d.snd.tsq_limit(2216, false), 4432u);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].truesize, 2216u);
  EXPECT_EQ(d.snd.bytes_below_socket(), 6648u);
  EXPECT_TRUE(d.snd.tsq_throttled());
  EXPECT_EQ(d.snd.stats().tsq_throttles, 1u);
  // One TX completion: 4432 below, one more segment goes.
  d.now += Duration::us(500);
  d.snd.on_tx_released(2216, d.now);
  v = d.data(d.take());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].seq, S(3));
  EXPECT_EQ(d.snd.bytes_below_socket(), 6648u);
  // Everything released: three more (cwnd has room for 6).
  d.now += Duration::us(500);
  d.snd.on_tx_released(6648, d.now);
  v = d.data(d.take());
  EXPECT_EQ(v.size(), 3u);
  // Throttled without a break since the handshake (each release unblocks only briefly).
  EXPECT_TRUE(d.snd.tsq_throttled());
  EXPECT_EQ(d.snd.stats().tsq_throttles, 1u);
  EXPECT_EQ(d.snd.sample(d.now).tsq_throttled_time, Duration::ms(1));
  // Retransmissions get twice the limit (tcp_small_queue_check factor 1).
  EXPECT_EQ(d.snd.tsq_limit(2216, true), 8864u);
  // The era's tcp_limit_output_bytes caps it.
  Params old = p;
  old.limit_output_bytes = 4000;
  TcpSender s2(old);
  EXPECT_EQ(s2.tsq_limit(2216, false), 4000u);
}

TEST(TcpSender, GsoAutosizingFollowsThePacingRate) {
  // tcp_tso_autosize: segs = max(min(rate >> 10, 65536 − 1 − 320) / mss, 2), then cwnd.
  Params p = base();
  p.gso = true;
  {
    Driver d(p);  // RTT 10 ms: 2828 B per ms → 1 segment → min_tso_segs 2
    auto v = d.establish(Duration::ms(10));
    EXPECT_EQ(d.snd.tso_segs_goal(), 2u);
    ASSERT_EQ(v.size(), 5u);
    EXPECT_EQ(v[0].gso_segs, 2u);
    EXPECT_EQ(v[0].gso_size, kMss);
    EXPECT_EQ(v[0].len, 2 * kMss);
  }
  {
    Driver d(p);  // RTT 100 µs: 282,812 B per ms → capped at 65215 B → 45 segments
    auto v = d.establish(Duration::us(100));
    EXPECT_EQ(d.snd.tso_segs_goal(), 45u);
    ASSERT_EQ(v.size(), 1u);  // but cwnd allows 10
    const Segment& u = v[0];
    EXPECT_EQ(u.gso_segs, 10u);
    EXPECT_EQ(u.len, 10 * kMss);
    EXPECT_EQ(u.truesize, 10 * kMss + 768);
    EXPECT_EQ(skb_len(u), 54 + 10 * kMss);
    EXPECT_EQ(gso_frame_bytes(u), 10 * (54 + kMss));
    uint64_t truesize = 0;
    for (uint16_t i = 0; i < u.gso_segs; ++i) {
      const Segment s = gso_segment(u, i);
      EXPECT_EQ(s.seq, S(i));
      EXPECT_EQ(s.len, kMss);
      truesize += s.truesize;
      // The NIC models' segmentation (core/gso.h) cuts the same frames.
      EXPECT_EQ(gso_segment_len(static_cast<uint32_t>(gso_frame_bytes(u)), u.gso_segs,
                                gso_frame_size(u), i),
                frame_header_bytes(s) + s.len);
    }
    EXPECT_EQ(truesize, u.truesize);
  }
  p.gso_max_segs = 4;
  Driver d(p);
  d.establish(Duration::us(100));
  EXPECT_EQ(d.snd.tso_segs_goal(), 4u);
}

TEST(TcpSender, PacingSpacesUnitsAtThePacingRate) {
  // tcp_update_pacing_rate + EDT: after the first 10 segments each unit may leave
  // skb_len / pacing_rate after the previous one.
  Params p = base();
  p.pacing = true;
  Driver d(p);
  auto v = d.establish(Duration::ms(10));
  EXPECT_EQ(v.size(), 10u);  // the first 10 segments are not paced
  d.now += Duration::ms(10);
  v = d.data(d.on(ack(S(2))));  // cwnd 12: 4 segments allowed, one at a time
  ASSERT_EQ(v.size(), 1u);
  const uint64_t rate = d.snd.pacing_rate_bytes_per_sec();
  const Duration gap = Rate::bytes_per_sec(rate).transmit_time(54 + kMss);
  EXPECT_EQ(d.snd.next_event(), d.now + gap);
  d.now += gap;
  d.snd.advance(d.now);
  EXPECT_EQ(d.data(d.take()).size(), 1u);
  EXPECT_EQ(d.snd.next_event(), d.now + gap);
}

TEST(TcpSender, LocalDropUnsendsAndEntersCwr) {
  // Linux tcp_transmit_skb: NET_XMIT_DROP → tcp_enter_cwr, the skb stays unsent.
  Params p = base();
  p.gso = true;
  Driver d(p);
  d.snd.connect(d.now);
  d.take();
  d.now += Duration::ms(10);
  d.snd.on_segment(syn_ack(), d.now);
  EXPECT_EQ(d.snd.pop_output().len, 0u);     // handshake ACK
  const Segment first = d.snd.pop_output();  // 2-segment unit at S(0)
  EXPECT_EQ(first.seq, S(0));
  d.snd.on_local_drop(first, d.now);  // refused: it and the 4 queued units are unsent
  EXPECT_FALSE(d.snd.has_output());
  EXPECT_EQ(d.snd.snd_nxt(), S(0));
  EXPECT_EQ(d.snd.ca_state(), CaState::kCwr);
  EXPECT_EQ(d.snd.ssthresh(), 5u);
  EXPECT_EQ(d.snd.bytes_below_socket(), 0u);
  EXPECT_EQ(d.snd.stats().units_sent, 0u);
  // Retried from the probe timer; nothing counts as a retransmission.
  ASSERT_TRUE(d.snd.next_event());
  d.now = *d.snd.next_event();
  d.snd.advance(d.now);
  auto v = d.data(d.take());
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].seq, S(0));
  EXPECT_FALSE(v[0].has(kRetransmit));
  EXPECT_EQ(d.snd.stats().retransmits, 0u);
  EXPECT_EQ(d.snd.stats().local_drops, 1u);
}

TEST(TcpSender, EcnEchoReducesOncePerWindowAndSignalsCwr) {
  // RFC 3168 §6.1.2: on ECE reduce cwnd once per window and set CWR on the next new segment;
  // new data is ECT(0), retransmissions are not ECT (§6.1.5).
  Params p = base();
  p.ecn = true;
  Driver d(p);
  d.snd.connect(d.now);
  auto syn = d.take();
  EXPECT_TRUE(syn[0].has(kEce) && syn[0].has(kCwr));  // ECN-setup SYN
  d.now += Duration::ms(10);
  d.snd.on_segment(syn_ack(kBigWnd, true, false, /*ece=*/true), d.now);
  auto v = d.data(d.take());
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].ecn, Ecn::kEct0);
  d.now += Duration::ms(10);
  v = d.data(d.on(ack(S(2), {}, kBigWnd, kEce)));
  EXPECT_EQ(d.snd.ca_state(), CaState::kCwr);
  EXPECT_EQ(d.snd.ssthresh(), 5u);
  EXPECT_EQ(d.snd.stats().cwr_events, 1u);
  d.on(ack(S(4), {}, kBigWnd, kEce));  // same window: no second reduction
  EXPECT_EQ(d.snd.stats().cwr_events, 1u);
  EXPECT_EQ(d.snd.ssthresh(), 5u);
  // PRR brings cwnd to ssthresh; the first new segment after entering CWR carries CWR.
  bool saw_cwr = false;
  for (const Segment& s : v) saw_cwr |= s.has(kCwr);
  for (int i = 3; i < 12 && !saw_cwr; ++i) {
    for (const Segment& s : d.data(d.on(ack(S(2 * i))))) saw_cwr |= s.has(kCwr);
  }
  EXPECT_TRUE(saw_cwr);
}

TEST(TcpSender, FiniteTransferEndsWithFinAndCompletes) {
  Params p = base();
  p.bytes_to_send = 5000;
  Driver d(p);
  auto v = d.establish(Duration::ms(10));
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[3].seq, S(3));
  EXPECT_EQ(v[3].len, 5000u - 3 * kMss);
  EXPECT_TRUE(v[3].has(kFin));
  EXPECT_FALSE(v[2].has(kFin));
  d.now += Duration::ms(10);
  d.on(ack(5001));  // data acknowledged, FIN not yet
  EXPECT_FALSE(d.snd.finished());
  d.on(ack(5002));
  EXPECT_TRUE(d.snd.finished());
  EXPECT_EQ(d.snd.completion_time(), d.now);
  EXPECT_FALSE(d.snd.next_event());
  EXPECT_EQ(d.snd.sample(d.now).bytes_acked, 5000u);
}

// The application stops writing (rrul's load end): nothing new after snd_nxt, in-flight data
// still acknowledged; before the handshake completes, nothing is sent at all.
TEST(TcpSender, StopWritingSendsNothingNew) {
  Driver d(base());
  auto v = d.establish(Duration::ms(10));
  ASSERT_EQ(v.size(), 10u);  // IW 10
  d.snd.stop_writing(d.now);
  EXPECT_FALSE(d.snd.has_output());
  d.now += Duration::ms(10);
  EXPECT_TRUE(d.data(d.on(ack(S(5)))).empty());  // cwnd grows, but no new data
  EXPECT_EQ(d.snd.snd_nxt(), S(10));
  d.on(ack(S(10)));
  EXPECT_EQ(d.snd.sample(d.now).bytes_acked, 10u * kMss);
  EXPECT_EQ(d.snd.scoreboard().packets_out(), 0u);
  EXPECT_FALSE(d.snd.rto_deadline().has_value());

  Driver early(base());
  early.snd.connect(early.now);
  early.take();
  early.snd.stop_writing(early.now);
  early.now += Duration::ms(10);
  early.snd.on_segment(syn_ack(), early.now);
  EXPECT_TRUE(early.data(early.take()).empty());
  EXPECT_EQ(early.snd.snd_nxt(), 1u);
}

TEST(TcpSender, TimestampsAreEchoedAndGiveRttAfterRetransmission) {
  // RFC 7323 §4: TSval on every segment, TSecr echoes the peer; Linux falls back to the
  // echo for the RTT of retransmitted data.
  Params p = base();
  p.timestamps = true;
  Driver d(p);
  Segment sa = syn_ack(kBigWnd, true, true);
  sa.tsval = 777;
  auto v = d.establish(Duration::ms(10), sa);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].tsecr, 777u);
  EXPECT_EQ(tcp_options_bytes(v[0]), 12u);
  EXPECT_EQ(skb_len(v[0]), 66u + kMss);  // 14 + 20 + 20 + 12 + 1448 = 1514
  d.now += Duration::ms(210);
  d.snd.advance(d.now);  // RTO
  const Segment rtx = d.take()[0];
  const uint64_t samples = d.snd.rtt().samples();
  d.now += Duration::ms(30);
  Segment a = ack(S(1));
  a.options = kOptTimestamp;
  a.tsecr = rtx.tsval;
  d.on(a);
  EXPECT_EQ(d.snd.rtt().samples(), samples + 1);
  EXPECT_EQ(d.snd.rtt().latest(), Duration::ms(30));
  EXPECT_EQ(d.snd.rtt().backoff(), 0u);
}

TEST(TcpSender, SampleReportsIperfColumns) {
  Driver d(base());
  auto v = d.establish(Duration::ms(10));
  d.now += Duration::ms(10);
  d.on(ack(S(4)));
  const auto s = d.snd.sample(d.now);
  EXPECT_EQ(s.bytes_acked, 4u * kMss);
  EXPECT_EQ(s.cwnd, 14u);
  EXPECT_EQ(s.cwnd_bytes(), 14u * kMss);
  EXPECT_EQ(s.retransmits, 0u);
  EXPECT_EQ(s.srtt, d.snd.rtt().srtt());
  EXPECT_EQ(s.ca_state, CaState::kOpen);
}

TEST(TcpSender, RejectsBadParamsNamingTheKey) {
  auto key = [](Params p) {
    auto e = p.validate();
    return e ? e->key : std::string("(none)");
  };
  Params p;
  EXPECT_EQ(key(p), "(none)");
  p.mss = 0;
  EXPECT_EQ(key(p), "tcp.mss");
  EXPECT_THROW(TcpSender{p}, InvalidParams);
  p = Params{};
  p.initial_cwnd = 0;
  EXPECT_EQ(key(p), "tcp.initial_cwnd");
  p = Params{};
  p.cubic_beta = 1.0;
  EXPECT_EQ(key(p), "tcp.cubic_beta");
  p = Params{};
  p.rto_min = Duration::s(200);
  EXPECT_EQ(key(p), "tcp.rto_min");
  p = Params{};
  p.limit_output_bytes = 0;
  EXPECT_EQ(key(p), "tcp.limit_output_bytes");
  p = Params{};
  p.bytes_to_send = -1;
  EXPECT_EQ(key(p), "tcp.bytes");
  p = Params{};
  p.rmem_max = 1000;
  EXPECT_EQ(key(p), "tcp.rmem_max");
  p = Params{};
  p.delayed_ack = Duration::zero();
  EXPECT_EQ(key(p), "tcp.delayed_ack");
  p = Params{};
  p.gso_max_size = 1000;
  EXPECT_EQ(key(p), "tcp.gso_max_size");
  p = Params{};
  p.cc = static_cast<CcAlgorithm>(7);
  EXPECT_EQ(key(p), "tcp.cc");
}

}  // namespace
}  // namespace nicsim::sim::tcp
