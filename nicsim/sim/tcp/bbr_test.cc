// Bbr: pins tcp_bbr.c (torvalds/linux 02dc96ef6c25) with synthetic rate samples on a manual
// clock — gains, the max-bw filter, STARTUP -> DRAIN -> PROBE_BW, the 8-phase gain cycle,
// PROBE_RTT, packet conservation and the long-term (policer) estimate — then the sender with
// BBR (internal pacing, EDT through fq) and BBR over the loopback bottleneck.
#include "nicsim/sim/tcp/bbr.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "nicsim/sim/tcp/loopback_harness.h"
#include "nicsim/sim/tcp/sender.h"

namespace nicsim::sim::tcp {
namespace {

using Mode = Bbr::Mode;
using testing::LinkConfig;
using testing::Loopback;
using testing::max_goodput_bps;
constexpr uint32_t kUnit = Bbr::kBbrUnit;

// Drives a Bbr with one ACK per packet-timed round: each ACK's reference was sent when all
// previously delivered data had been delivered, so every ACK starts a new round.
struct Driver {
  explicit Driver(uint64_t seed = 1) : bbr(Bbr::Config{.mss = 1000, .seed = seed}) {
    conn.now = Time::zero() + Duration::s(1);
    conn.srtt = Duration::ms(10);
    conn.min_rtt = Duration::ms(10);
    conn.delivered_time = conn.now;
    bbr.init(w, conn);
  }
  // An ACK `dt` after the previous one delivering `n` packets over `interval`, RTT sample
  // `rtt`; `in_flight` after the ACK, `prior_in_flight` before it.
  void ack(uint32_t n, Duration dt, Duration interval, uint32_t in_flight, uint32_t prior_in_flight,
           Duration rtt = Duration::ms(10), uint32_t losses = 0) {
    conn.now += dt;
    RateSample rs;
    rs.has_prior = true;
    rs.prior_delivered = conn.delivered;
    rs.prior_time = conn.delivered_time;
    conn.delivered += n;
    conn.delivered_time = conn.now;
    conn.lost += losses;
    conn.in_flight = in_flight;
    rs.delivered = n;
    rs.interval = interval;
    rs.acked_sacked = n;
    rs.losses = losses;
    rs.prior_in_flight = prior_in_flight;
    rs.rtt = rtt;
    bbr.on_ack(rs, conn, w, rate);
  }
  // A round of `n` packets in 10 ms.
  void round(uint32_t n, uint32_t in_flight = 1000) {
    ack(n, Duration::ms(10), Duration::ms(10), in_flight, in_flight);
  }
  Bbr bbr;
  Window w;
  DeliveryRate rate;
  Bbr::Conn conn;
};

TEST(Bbr, Gains) {
  EXPECT_EQ(Bbr::kHighGain, 739u);  // 2/ln2 = 2.885 x 256, rounded up
  EXPECT_EQ(Bbr::kDrainGain, 88u);  // 1/2.885 x 256
  EXPECT_EQ(Bbr::kCwndGain, 512u);
  EXPECT_EQ(Bbr::kPacingGain, (std::array<uint32_t, 8>{320, 192, 256, 256, 256, 256, 256, 256}));
  EXPECT_EQ(Bbr::kBwRtts, 10u);
  EXPECT_EQ(Bbr::kMinRttWindow, Duration::s(10));
  EXPECT_EQ(Bbr::kProbeRttTime, Duration::ms(200));
  EXPECT_EQ(Bbr::kCwndMinTarget, 4u);
}

// bbr_init: ssthresh infinite, STARTUP gains, pacing = 2.885 x cwnd x mss / srtt x 99 %.
TEST(Bbr, InitPacesAtHighGainOverTheInitialWindow) {
  Driver d;
  EXPECT_EQ(d.w.ssthresh, kInfiniteSsthresh);
  EXPECT_EQ(d.bbr.mode(), Mode::kStartup);
  EXPECT_EQ(d.bbr.pacing_gain(), Bbr::kHighGain);
  EXPECT_EQ(d.bbr.cwnd_gain(), Bbr::kHighGain);
  EXPECT_EQ(d.bbr.min_rtt_us(), 10'000u);
  // 10 x 1000 B / 10 ms = 1 MB/s; x 739/256 x 0.99 = 2.858 MB/s.
  EXPECT_NEAR(static_cast<double>(d.bbr.pacing_rate()), 1e6 * 739.0 / 256 * 0.99, 1e6 * 0.001);
}

// lib/win_minmax.c: a maximum is kept for the window (10 rounds), then the best sample of the
// later sub-windows takes over.
TEST(Bbr, MaxFilterExpiresAfterItsWindow) {
  Bbr::MinMax m;
  m.reset(0, 100);
  EXPECT_EQ(m.running_max(10, 1, 50), 100u);
  EXPECT_EQ(m.running_max(10, 3, 50), 100u);  // a quarter window: 2nd choice
  EXPECT_EQ(m.running_max(10, 6, 45), 100u);  // half a window: 3rd choice
  EXPECT_EQ(m.running_max(10, 10, 40), 100u);
  EXPECT_EQ(m.running_max(10, 11, 40), 50u);  // 100 left the window
  EXPECT_EQ(m.running_max(10, 12, 60), 60u);  // a new maximum resets the filter
}

// STARTUP while bw grows >= 25 % per round; 3 rounds without -> full pipe, DRAIN (ssthresh =
// BDP target) until the packets in flight fall to the BDP target, then PROBE_BW.
TEST(Bbr, StartupDrainProbeBw) {
  Driver d;
  for (uint32_t n : {10u, 20u, 40u, 80u, 100u}) {
    d.round(n);
    EXPECT_EQ(d.bbr.mode(), Mode::kStartup);
    EXPECT_EQ(d.bbr.full_bw_cnt(), 0u) << n;
  }
  EXPECT_EQ(d.bbr.round_count(), 5u);
  d.round(100);
  d.round(100);
  EXPECT_EQ(d.bbr.full_bw_cnt(), 2u);
  EXPECT_FALSE(d.bbr.full_bw_reached());
  d.round(100);
  EXPECT_TRUE(d.bbr.full_bw_reached());
  ASSERT_EQ(d.bbr.mode(), Mode::kDrain);  // 1000 in flight: not drained
  EXPECT_EQ(d.bbr.pacing_gain(), Bbr::kDrainGain);
  EXPECT_EQ(d.bbr.cwnd_gain(), Bbr::kHighGain);
  // 100 packets per 10 ms x 10 ms min_rtt = a BDP of 100 packets.
  EXPECT_EQ(d.bbr.bdp(d.bbr.max_bw(), kUnit), 100u);
  // ssthresh = the BDP target at gain 1 (with the quantization budget of STARTUP's rate).
  EXPECT_GT(d.w.ssthresh, 100u);
  EXPECT_LT(d.w.ssthresh, 100u + 3 * 127 + 2);
  // Pacing: 100 packets / 10 ms x 1000 B x 88/256 x 99 %.
  EXPECT_NEAR(static_cast<double>(d.bbr.pacing_rate()), 1e7 * 88 / 256 * 0.99, 1e7 * 0.001);
  d.round(100, 100);  // in flight at the BDP: drained
  EXPECT_EQ(d.bbr.mode(), Mode::kProbeBw);
  EXPECT_EQ(d.bbr.cwnd_gain(), Bbr::kCwndGain);
  EXPECT_NE(d.bbr.cycle_idx(), 1u);  // never starts in the 3/4 phase
}

// Starting phases over many seeds: every index but 1 (3/4), each with its gain.
TEST(Bbr, ProbeBwStartsAtARandomPhaseOtherThanDrain) {
  std::set<uint32_t> starts;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    Driver d(seed);
    for (uint32_t n : {10u, 20u, 40u, 80u, 100u, 100u, 100u, 100u}) {
      d.round(n);
    }
    d.round(100, 10);
    ASSERT_EQ(d.bbr.mode(), Mode::kProbeBw);
    starts.insert(d.bbr.cycle_idx());
    EXPECT_EQ(d.bbr.pacing_gain(), Bbr::kPacingGain[d.bbr.cycle_idx()]);
  }
  EXPECT_EQ(starts, (std::set<uint32_t>{0, 2, 3, 4, 5, 6, 7}));
}

Driver in_probe_bw(uint64_t seed = 3) {
  Driver d(seed);
  for (uint32_t n : {10u, 20u, 40u, 80u, 100u, 100u, 100u, 100u}) {
    d.round(n);
  }
  d.round(100, 10);
  return d;
}

// The gain cycle: a 1.0 phase lasts one min_rtt; 5/4 lasts at least one min_rtt and until
// inflight reaches 1.25 x BDP (+ budget); 3/4 ends when inflight falls to the BDP target.
TEST(Bbr, GainCycle) {
  Driver d = in_probe_bw();
  const uint32_t target = d.bbr.inflight(d.bbr.max_bw(), kUnit);
  // Walk to the 5/4 phase with ACKs 11 ms apart (> min_rtt).
  while (d.bbr.cycle_idx() != 0) {
    const uint32_t before = d.bbr.cycle_idx();
    d.ack(110, Duration::ms(11), Duration::ms(11), target, target);
    EXPECT_EQ(d.bbr.cycle_idx(), (before + 1) % 8);
  }
  EXPECT_EQ(d.bbr.pacing_gain(), 320u);
  // Full length but inflight below 1.25 BDP: stays.
  d.ack(110, Duration::ms(11), Duration::ms(11), target, target);
  EXPECT_EQ(d.bbr.cycle_idx(), 0u);
  // Inflight reached the 5/4 target (and the phase is older than min_rtt): next phase (3/4).
  const uint32_t probe_target = d.bbr.inflight(d.bbr.max_bw(), 320);
  d.ack(110, Duration::ms(1), Duration::ms(11), probe_target, probe_target);
  EXPECT_EQ(d.bbr.cycle_idx(), 1u);
  EXPECT_EQ(d.bbr.pacing_gain(), 192u);
  // 3/4 ends early (1 ms < min_rtt) once inflight is down to the BDP.
  d.ack(100, Duration::ms(1), Duration::ms(10), 100, 100);
  EXPECT_EQ(d.bbr.cycle_idx(), 2u);
  EXPECT_EQ(d.bbr.pacing_gain(), 256u);
  // cwnd = 2 x BDP + the ACK-aggregation allowance (each ACK here covers 100+ packets) +
  // the quantization budget.
  // (The budget rounds the sum up to even, hence +-1.)
  EXPECT_NEAR(d.w.cwnd, d.bbr.inflight(d.bbr.max_bw(), Bbr::kCwndGain) + d.bbr.extra_acked(), 1);
}

// PROBE_RTT: min_rtt not refreshed for 10 s -> cwnd 4 and pacing gain 1, samples marked
// app-limited; at most 4 in flight for 200 ms and a round; then PROBE_BW with cwnd restored.
TEST(Bbr, ProbeRtt) {
  Driver d = in_probe_bw();
  uint32_t cwnd_before = d.w.cwnd;
  const Time start = d.conn.now;
  while (d.conn.now <= start + Duration::s(10)) {
    cwnd_before = d.w.cwnd;
    d.ack(100, Duration::ms(12), Duration::ms(12), 100, 100, Duration::ms(12));
    if (d.bbr.mode() == Mode::kProbeRtt) {
      break;
    }
  }
  ASSERT_EQ(d.bbr.mode(), Mode::kProbeRtt);
  EXPECT_GT(d.conn.now, start + Duration::s(10) - Duration::ms(12));
  EXPECT_EQ(d.bbr.min_rtt_us(), 12'000u);  // the expired filter took the new sample
  EXPECT_LE(d.w.cwnd, 4u);
  EXPECT_EQ(d.bbr.pacing_gain(), kUnit);
  EXPECT_EQ(d.bbr.prior_cwnd(), cwnd_before);
  EXPECT_NE(d.rate.app_limited(), 0u);
  // Inflight falls to 4: the 200 ms start now.
  d.ack(4, Duration::ms(12), Duration::ms(12), 4, 100, Duration::ms(10));
  const Time armed = d.conn.now;
  d.ack(4, Duration::ms(100), Duration::ms(12), 4, 4, Duration::ms(10));
  EXPECT_EQ(d.bbr.mode(), Mode::kProbeRtt);  // a round done, but < 200 ms
  d.ack(4, armed + Duration::ms(201) - d.conn.now, Duration::ms(12), 4, 4, Duration::ms(10));
  EXPECT_EQ(d.bbr.mode(), Mode::kProbeBw);
  // Restored to the saved cwnd, then capped by the target as usual.
  EXPECT_GT(d.w.cwnd, 4u);
  EXPECT_GE(d.w.cwnd, std::min(cwnd_before, d.bbr.inflight(d.bbr.max_bw(), Bbr::kCwndGain)));
  EXPECT_EQ(d.bbr.min_rtt_us(), 10'000u);
}

// Recovery: the first round conserves packets (cwnd = in flight + acked); leaving it restores
// the cwnd saved on entry.
TEST(Bbr, RecoveryConservesPacketsThenRestores) {
  Driver d = in_probe_bw();
  const uint32_t cwnd = d.w.cwnd;
  d.w.ssthresh = d.bbr.ssthresh(d.w);  // tcp_init_cwnd_reduction on entering Recovery
  EXPECT_EQ(d.bbr.prior_cwnd(), cwnd);
  d.conn.ca_state = CaState::kRecovery;
  d.ack(5, Duration::ms(1), Duration::ms(10), 50, 60, Duration::ms(10), 3);
  EXPECT_TRUE(d.bbr.packet_conservation());
  EXPECT_EQ(d.w.cwnd, 55u);  // in flight 50 + 5 acked
  d.conn.ca_state = CaState::kOpen;
  d.ack(5, Duration::ms(1), Duration::ms(10), 50, 55);
  EXPECT_FALSE(d.bbr.packet_conservation());
  EXPECT_EQ(d.w.cwnd,
            std::min(cwnd, d.bbr.inflight(d.bbr.max_bw(), Bbr::kCwndGain) + d.bbr.extra_acked()));
}

// Long-term sampling: two 4-round intervals with >= 20 % loss and the same delivery rate ->
// a policer: bw = their average, gain 1.
TEST(Bbr, LongTermSamplingDetectsAPolicer) {
  Driver d;
  for (int r = 0; r < 7; ++r) {
    d.ack(100, Duration::ms(10), Duration::ms(10), 1000, 1000, Duration::ms(10), 30);
    EXPECT_FALSE(d.bbr.lt_use_bw()) << r;
  }
  d.ack(100, Duration::ms(10), Duration::ms(10), 1000, 1000, Duration::ms(10), 30);
  EXPECT_TRUE(d.bbr.lt_use_bw());
  EXPECT_EQ(d.bbr.bw(), d.bbr.lt_bw());
  // 100 packets per 10 ms = 0.01 packets/us << 24.
  EXPECT_NEAR(static_cast<double>(d.bbr.lt_bw()), 0.01 * (1 << 24), 2.0);
}

// ---------------------------------------------------------------------------------------------
// The sender with BBR

Params bbr_params() {
  Params p;
  p.cc = CcAlgorithm::kBbr;
  p.gso = false;
  p.tsq = false;
  p.timestamps = false;
  return p;
}

Segment syn_ack() {
  Segment s;
  s.ack = 1;
  s.flags = kSyn | kAck;
  s.options = kOptMss | kOptWindowScale | kOptSackPermitted;
  s.wnd = 1u << 24;
  return s;
}

std::vector<Segment> drain(TcpSender& snd) {
  std::vector<Segment> v;
  while (snd.has_output()) {
    v.push_back(snd.pop_output());
  }
  return v;
}

// BBR needs pacing (SK_PACING_NEEDED): without fq the sender paces itself after the first 10
// segments (internal pacing), at BBR's rate.
TEST(BbrSender, PacesInternallyWithoutFq) {
  Params p = bbr_params();
  p.initial_cwnd = 20;
  TcpSender snd(p);
  Time now = Time::zero() + Duration::s(1);
  snd.connect(now);
  drain(snd);
  now += Duration::ms(10);
  snd.on_segment(syn_ack(), now);
  const std::vector<Segment> out = drain(snd);
  ASSERT_NE(snd.bbr(), nullptr);
  EXPECT_EQ(snd.pacing_rate_bytes_per_sec(), snd.bbr()->pacing_rate());
  // The handshake ACK and 10 unpaced data segments; the 11th waits for its departure time.
  EXPECT_EQ(out.size(), 11u);
  ASSERT_TRUE(snd.next_event().has_value());
  EXPECT_GT(*snd.next_event(), now);
  EXPECT_LT(*snd.next_event(), now + Duration::ms(1));
  for (const Segment& s : out) {
    EXPECT_EQ(s.tstamp, Time::zero());  // no fq: no EDT on the packets
  }
}

// With fq as the host's qdisc (SK_PACING_FQ) the sender does not wait: it stamps every unit
// with its earliest departure time, spaced by len / pacing rate, and fq enforces it.
TEST(BbrSender, StampsEdtForFq) {
  Params p = bbr_params();
  p.initial_cwnd = 20;
  p.fq_pacing = true;
  TcpSender snd(p);
  Time now = Time::zero() + Duration::s(1);
  snd.connect(now);
  drain(snd);
  now += Duration::ms(10);
  snd.on_segment(syn_ack(), now);
  std::vector<Segment> out = drain(snd);
  std::vector<Segment> data;
  for (const Segment& s : out) {
    if (s.len > 0) {
      data.push_back(s);
    }
  }
  ASSERT_EQ(data.size(), 20u);  // the whole window at once
  const Rate rate = Rate::bytes_per_sec(snd.pacing_rate_bytes_per_sec());
  for (size_t i = 0; i < data.size(); ++i) {
    if (i < 10) {
      EXPECT_EQ(data[i].tstamp, now) << i;  // the first 10 segments are not paced
    } else {
      EXPECT_EQ(data[i].tstamp - data[i - 1].tstamp, rate.transmit_time(skb_len(data[i - 1]))) << i;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// BBR over the loopback bottleneck

Time at(Duration d) { return Time::zero() + d; }

LinkConfig link_with_buffer(double bdps) {
  LinkConfig l;
  l.rate = Rate::mbit(100);
  l.delay = Duration::ms(10);  // RTT 20 ms: BDP 250 kB
  l.queue_limit_bytes = static_cast<uint64_t>(bdps * 250'000);
  return l;
}

// Alone, BBR fills the link and keeps the standing queue small (its RTT near the path's),
// where CUBIC fills a large buffer; STARTUP's queue stays below 2.885 - 1 BDPs; PROBE_RTT
// comes after 10 s.
TEST(BbrLoopback, FillsTheLinkWithASmallQueue) {
  Params b;
  b.cc = CcAlgorithm::kBbr;
  Loopback lb(link_with_buffer(4), {b}, Params{});
  lb.run_until(at(Duration::s(2)));
  const uint64_t b1 = lb.receiver(0).stats().bytes_received;
  lb.run_until(at(Duration::s(12)));
  const double goodput = static_cast<double>(lb.receiver(0).stats().bytes_received - b1) * 8 / 10;
  EXPECT_GE(goodput / max_goodput_bps(Rate::mbit(100), 1448), 0.93);
  EXPECT_EQ(lb.sender(0).bbr()->mode() == Bbr::Mode::kStartup, false);
  EXPECT_EQ(lb.queue_drops(), 0u);
  // The bandwidth estimate is the link's payload rate (within 3 %).
  const double bw = static_cast<double>(lb.sender(0).bbr()->bw_bytes_per_sec()) * 8;
  EXPECT_NEAR(bw / max_goodput_bps(Rate::mbit(100), 1448), 1.0, 0.03);
  EXPECT_LT(lb.max_queue_bytes(), 2 * 250'000u + 100'000u);
  EXPECT_LT(lb.sender(0).rtt().srtt(), Duration::ms(26));
  EXPECT_EQ(lb.sender(0).bbr()->min_rtt_us() / 1000, 20u);
  Params c;
  Loopback cubic(link_with_buffer(4), {c}, Params{});
  cubic.run_until(at(Duration::s(12)));
  EXPECT_GT(cubic.sender(0).rtt().srtt(), Duration::ms(40));
}

// BBR against CUBIC through one drop-tail bottleneck (100 Mbit/s, RTT 20 ms, BDP 250 kB):
// BBR's share of the goodput over 10..40 s falls as the buffer deepens — it takes most of the
// link with shallow buffers (CUBIC backs off on every loss, BBR does not) and a minority with
// deep ones (BBR is capped at 2 x BDP in flight while CUBIC fills the buffer): Hock, Bless,
// Zitterbart, ICNP 2017; Ware et al., IMC 2019. Figures: docs/fidelity.md.
TEST(BbrLoopback, ShareAgainstCubicFallsAsTheBufferDeepens) {
  std::vector<double> shares;
  for (double bdps : {0.5, 1.0, 2.0, 4.0, 8.0, 16.0}) {
    Params bbr;
    bbr.cc = CcAlgorithm::kBbr;
    Loopback lb(link_with_buffer(bdps), {Params{}, bbr}, Params{});
    lb.run_until(at(Duration::s(10)));
    const uint64_t c1 = lb.receiver(0).stats().bytes_received;
    const uint64_t b1 = lb.receiver(1).stats().bytes_received;
    lb.run_until(at(Duration::s(40)));
    const double c = static_cast<double>(lb.receiver(0).stats().bytes_received - c1);
    const double b = static_cast<double>(lb.receiver(1).stats().bytes_received - b1);
    EXPECT_GE((b + c) * 8 / 30 / max_goodput_bps(Rate::mbit(100), 1448), 0.97) << bdps;
    shares.push_back(b / (b + c));
  }
  EXPECT_GT(shares.front(), 0.75);  // 0.5 BDP
  EXPECT_LT(shares.back(), 0.25);   // 16 BDP
  for (size_t i = 1; i < shares.size(); ++i) {
    EXPECT_LE(shares[i], shares[i - 1] + 0.02) << i;
  }
}

}  // namespace
}  // namespace nicsim::sim::tcp
