// Tbf: pins sch_tbf.c behaviour (docs/mechanisms §9.1, §9.2) on a manual clock: tokens in ns
// of transmission time, bucket depth l2t(burst), optional peak bucket l2t_peak(mtu), exact
// watchdog time (next_ready), max_size drops, inner bfifo limit, no reordering.
//
// Worked numbers used below (l2t = bytes * 8 / rate, rounded up to ns):
//   100 Mbit/s: l2t(1514) = 121'120 ns, l2t(3028) = 242'240 ns, l2t(64) = 5'120 ns.
//   10 Mbit/s:  l2t(1514) = 1'211'200 ns, l2t(15140) = 12'112'000 ns, l2t(1250) = 1'000'000 ns,
//               l2t(3028) = 2'422'400 ns.
//   3 Mbit/s:   l2t(1000) = ceil(2'666'666.67) = 2'666'667 ns, l2t(1514) = 4'037'334 ns.
#include "nicsim/algo/tbf.h"

#include <gtest/gtest.h>

#include <vector>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"
#include "nicsim/testing/recording_observer.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;
using testing::RecordingObserver;

Time at(int64_t ns) { return Time::from_ns(ns); }

// Drains the element the way a back-end does (dequeue; if nothing, sleep until next_ready) and
// returns the release time of every packet.
std::vector<Time> drain_times(Tbf& q, Time now) {
  std::vector<Time> times;
  while (q.backlog_packets() > 0) {
    if (auto p = q.dequeue(now)) {
      times.push_back(now);
      continue;
    }
    const std::optional<Time> ready = q.next_ready(now);
    EXPECT_TRUE(ready.has_value());
    EXPECT_GT(*ready, now);
    if (!ready || *ready <= now) {
      break;
    }
    now = *ready;
  }
  return times;
}

Tbf::Params base_params() { return Tbf::Params{.rate = 100_mbit, .burst = 3028, .limit = 100'000}; }

// §9.1/§9.2: buffer = l2t(burst); tokens start full (tbf_change sets tokens = buffer).
TEST(Tbf, DerivedConfiguration) {
  Tbf q(base_params());
  EXPECT_EQ(q.buffer(), 242'240_ns);
  EXPECT_EQ(q.tokens(), 242'240_ns);
  EXPECT_EQ(q.mtu_time(), 0_ns);
  EXPECT_EQ(q.max_size(), 3028u);
  EXPECT_EQ(q.limit_bytes(), 100'000u);
  EXPECT_FALSE(Tbf::kCanBypass);

  Tbf p(Tbf::Params{
      .rate = 10_mbit, .burst = 15140, .limit = 100'000, .peakrate = 100_mbit, .mtu = 1514});
  EXPECT_EQ(p.buffer(), 12'112'000_ns);
  EXPECT_EQ(p.mtu_time(), 121'120_ns);
  EXPECT_EQ(p.ptokens(), 121'120_ns);
  EXPECT_EQ(p.max_size(), 1514u);  // min(burst, mtu)
}

// §9.2 dequeue: a full bucket (burst 2 x 1514) lets two packets leave at once; after that each
// waits exactly l2t(1514) = 121'120 ns, and next_ready names that instant exactly.
TEST(Tbf, InitialBurstThenExactRate) {
  Tbf q(base_params());
  PacketFactory f;
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(q.enqueue(f.make(1514), at(0)), Verdict::kQueued);
  }
  auto a = q.dequeue(at(0));
  auto b = q.dequeue(at(0));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->id, 1u);
  EXPECT_EQ(b->id, 2u);
  EXPECT_EQ(q.tokens(), 0_ns);
  // Bucket empty: toks = 0 - 121'120; the watchdog time is now + 121'120.
  EXPECT_EQ(q.peek(at(0)), nullptr);
  EXPECT_FALSE(q.dequeue(at(0)));
  EXPECT_EQ(q.stats().overlimits, 1u);
  EXPECT_EQ(q.next_ready(at(0)), at(121'120));
  // One ns early is still too early, and next_ready does not move.
  EXPECT_FALSE(q.dequeue(at(121'119)));
  EXPECT_EQ(q.stats().overlimits, 2u);
  EXPECT_EQ(q.next_ready(at(121'119)), at(121'120));
  ASSERT_NE(q.peek(at(121'120)), nullptr);
  EXPECT_EQ(q.peek(at(121'120))->id, 3u);
  EXPECT_EQ(q.next_ready(at(121'120)), at(121'120));
  auto c = q.dequeue(at(121'120));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->id, 3u);
  EXPECT_EQ(c->enqueue_ts, at(0));
  EXPECT_EQ(q.t_c(), at(121'120));
  EXPECT_EQ(q.tokens(), 0_ns);
  // The rest leave at exactly 121'120 ns intervals.
  EXPECT_EQ(drain_times(q, at(121'120)),
            (std::vector<Time>{at(242'240), at(363'360), at(484'480)}));
  EXPECT_EQ(q.next_ready(at(500'000)), std::nullopt);
  EXPECT_EQ(q.stats().overlimits, 5u);  // 2 above + one per drain wait
  testing::expect_stats_identities(q);
}

// §9.2: driven at next_ready with a permanent backlog, packet k leaves at an exact time with no
// accumulated error. 3 Mbit/s, 1000-byte packets: l2t = 2'666'667 ns (rounded up from
// 2'666'666.67), buffer = l2t(1514) = 4'037'334 ns. Packet 0 leaves at 0 with 1'370'667 ns of
// tokens left; packet 1 needs 1'296'000 ns more; afterwards one packet per 2'666'667 ns:
// t_k = 1'296'000 + (k - 1) * 2'666'667 for k >= 1.
TEST(Tbf, LongRunRateHasNoDrift) {
  Tbf q(Tbf::Params{.rate = 3_mbit, .burst = 1514, .limit = 20'000'000});
  PacketFactory f;
  constexpr int kPackets = 10'000;
  for (int i = 0; i < kPackets; ++i) {
    ASSERT_EQ(q.enqueue(f.make(1000), at(0)), Verdict::kQueued);
  }
  const std::vector<Time> times = drain_times(q, at(0));
  ASSERT_EQ(times.size(), static_cast<size_t>(kPackets));
  EXPECT_EQ(times[0], at(0));
  for (int k = 1; k < kPackets; ++k) {
    ASSERT_EQ(times[k], at(1'296'000 + int64_t{k - 1} * 2'666'667)) << "packet " << k;
  }
  // Where l2t is integral the long-run rate is exact: 100 Mbit/s, 1250 B = 100'000 ns, buffer
  // l2t(1514) = 121'120 ns. Packet 0 leaves at 0 leaving 21'120 ns of tokens, packet 1 at
  // 78'880, then exactly one packet per 100 us: t_k = 78'880 + (k - 1) * 100'000, i.e. the
  // 9'999 packets after the first carry 99.99 Mbit in 999.9 ms minus the 21'120 ns head start.
  Tbf r(Tbf::Params{.rate = 100_mbit, .burst = 1514, .limit = 20'000'000});
  for (int i = 0; i < kPackets; ++i) {
    ASSERT_EQ(r.enqueue(f.make(1250), at(0)), Verdict::kQueued);
  }
  const std::vector<Time> times2 = drain_times(r, at(0));
  ASSERT_EQ(times2.size(), static_cast<size_t>(kPackets));
  EXPECT_EQ(times2[0], at(0));
  for (int k = 1; k < kPackets; ++k) {
    ASSERT_EQ(times2[k], at(78'880 + int64_t{k - 1} * 100'000)) << "packet " << k;
  }
}

// §9.2: t_c moves to the release time and leftover tokens are kept, so a dequeuer that polls
// late (every 300 us, not at next_ready) loses nothing while the bucket does not overflow.
// 10 Mbit/s, 1250 B (l2t = 1 ms), burst 3028 (buffer 2'422'400 ns). Tokens before a release are
// at most 1 ms + 1.3 ms < buffer, so the cap never binds and after the poll at t the count is
// exactly floor((2'422'400 + t) / 1'000'000).
TEST(Tbf, CoarsePollingKeepsLongRunRate) {
  Tbf q(Tbf::Params{.rate = 10_mbit, .burst = 3028, .limit = 10'000'000});
  PacketFactory f;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(q.enqueue(f.make(1250), at(0)), Verdict::kQueued);
  }
  int64_t sent = 0;
  for (int64_t j = 0; j <= 3333; ++j) {
    const Time t = at(j * 300'000);
    while (q.dequeue(t)) {
      ++sent;
    }
    ASSERT_EQ(sent, (2'422'400 + j * 300'000) / 1'000'000) << "poll " << j;
  }
  EXPECT_EQ(sent, 1002);  // by t = 999.9 ms: 1000 at rate + 2 from the initial burst, rounded
}

// §9.2 next_ready = now + max(-toks, -ptoks): exact after a partial refill too.
TEST(Tbf, NextReadyExactAfterPartialRefill) {
  Tbf q(base_params());
  PacketFactory f;
  q.enqueue(f.make(1514), at(0));
  q.enqueue(f.make(1514), at(0));
  ASSERT_TRUE(q.dequeue(at(0)));
  ASSERT_TRUE(q.dequeue(at(0)));  // tokens 0, t_c 0
  q.enqueue(f.make(1000), at(50'000));
  // At 50'000: toks = 50'000 - l2t(1000) = 50'000 - 80'000 = -30'000.
  EXPECT_EQ(q.next_ready(at(50'000)), at(80'000));
  EXPECT_EQ(q.next_ready(at(79'999)), at(80'000));
  EXPECT_FALSE(q.dequeue(at(79'999)));
  ASSERT_TRUE(q.dequeue(at(80'000)));
  EXPECT_EQ(q.tokens(), 0_ns);
  EXPECT_EQ(q.next_ready(at(80'000)), std::nullopt);
}

// §9.2 peak bucket: depth l2t_peak(mtu) = 121'120 ns at 100 Mbit/s. Within the 10-packet burst
// (10 Mbit/s, burst 15'140) packets leave back to back only at the peak spacing of 121'120 ns.
// Rate tokens after packet i (sent at i * 121'120): 10'900'800 - i * 1'090'080, so packets
// 0..10 (11 packets: the bucket refills while the peak spaces them) go at peak spacing and
// packet 11 waits for the rate bucket: toks = -1'211'200, released at 2'422'400.
TEST(Tbf, PeakrateSpacesBackToBackPackets) {
  Tbf q(Tbf::Params{
      .rate = 10_mbit, .burst = 15140, .limit = 100'000, .peakrate = 100_mbit, .mtu = 1514});
  PacketFactory f;
  for (int i = 0; i < 12; ++i) {
    ASSERT_EQ(q.enqueue(f.make(1514), at(0)), Verdict::kQueued);
  }
  ASSERT_TRUE(q.dequeue(at(0)));
  EXPECT_EQ(q.ptokens(), 0_ns);
  EXPECT_EQ(q.tokens(), 10'900'800_ns);
  // Rate tokens are plentiful but the peak bucket is empty: ptoks = -121'120 decides.
  EXPECT_FALSE(q.dequeue(at(0)));
  EXPECT_EQ(q.next_ready(at(0)), at(121'120));
  std::vector<Time> expected;
  for (int i = 1; i <= 10; ++i) {
    expected.push_back(at(int64_t{i} * 121'120));
  }
  expected.push_back(at(2'422'400));
  EXPECT_EQ(drain_times(q, at(0)), expected);
  EXPECT_EQ(q.tokens(), 0_ns);
  testing::expect_stats_identities(q);
}

// §9.2: toks = min(elapsed, buffer) + tokens capped at buffer: a long idle period refills the
// bucket to exactly `buffer` (two packets), never more; the peak bucket likewise to mtu_time.
TEST(Tbf, TokensNeverExceedBufferAfterIdle) {
  Tbf q(base_params());
  PacketFactory f;
  q.enqueue(f.make(1514), at(0));
  q.enqueue(f.make(1514), at(0));
  ASSERT_EQ(drain_times(q, at(0)).size(), 2u);
  const Time idle_end = at(1'000'000'000);  // 1 s idle >> buffer (242'240 ns)
  for (int i = 0; i < 4; ++i) {
    q.enqueue(f.make(1514), idle_end);
  }
  ASSERT_TRUE(q.dequeue(idle_end));
  EXPECT_EQ(q.tokens(), 121'120_ns);  // buffer - l2t(1514), not 1 s worth
  ASSERT_TRUE(q.dequeue(idle_end));
  EXPECT_FALSE(q.dequeue(idle_end));
  EXPECT_EQ(q.next_ready(idle_end), idle_end + 121'120_ns);

  Tbf p(Tbf::Params{
      .rate = 10_mbit, .burst = 15140, .limit = 100'000, .peakrate = 100_mbit, .mtu = 1514});
  p.enqueue(f.make(1514), at(0));
  ASSERT_TRUE(p.dequeue(at(0)));
  for (int i = 0; i < 2; ++i) {
    p.enqueue(f.make(1514), idle_end);
  }
  ASSERT_TRUE(p.dequeue(idle_end));
  EXPECT_EQ(p.ptokens(), 0_ns);                         // capped at mtu_time, then charged
  EXPECT_EQ(p.tokens(), 12'112'000_ns - 1'211'200_ns);  // capped at buffer, then charged
  EXPECT_FALSE(p.dequeue(idle_end));
  EXPECT_EQ(p.next_ready(idle_end), idle_end + 121'120_ns);
}

// §9.2 enqueue: len > max_size is dropped (kTooBig) — max_size = burst, or min(burst, mtu)
// with a peak rate. A GSO packet is dropped too (Linux would segment it; documented deviation).
TEST(Tbf, TooBigPacketsAreDropped) {
  Tbf q(base_params());  // max_size 3028
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  EXPECT_EQ(q.enqueue(f.make(3029), at(0)), Verdict::kDropped);  // id 1
  Packet gso = f.make(4542);                                     // id 2: 3 x 1514
  gso.gso_segs = 3;
  gso.gso_size = 1514;
  EXPECT_EQ(q.enqueue(std::move(gso), at(0)), Verdict::kDropped);
  EXPECT_EQ(q.enqueue(f.make(3028), at(0)), Verdict::kQueued);  // id 3: exactly buffer
  auto p = q.dequeue(at(0));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 3u);
  EXPECT_EQ(q.tokens(), 0_ns);
  EXPECT_EQ(q.stats().dropped_too_big, 2u);
  EXPECT_EQ(q.stats().dropped_packets, 2u);
  EXPECT_EQ(q.stats().dropped_bytes, 3029u + 4542u);
  ASSERT_EQ(obs.ids(RecordingObserver::Event::kDrop), (std::vector<uint64_t>{1, 2}));
  for (const auto& e : obs.events) {
    if (e.kind == RecordingObserver::Event::kDrop) {
      EXPECT_EQ(e.reason, DropReason::kTooBig);
    }
  }
  testing::expect_stats_identities(q);

  Tbf pk(Tbf::Params{
      .rate = 10_mbit, .burst = 15140, .limit = 100'000, .peakrate = 100_mbit, .mtu = 1514});
  EXPECT_EQ(pk.enqueue(f.make(1515), at(0)), Verdict::kDropped);  // > mtu though < burst
  EXPECT_EQ(pk.enqueue(f.make(1514), at(0)), Verdict::kQueued);
  EXPECT_EQ(pk.stats().dropped_too_big, 1u);
}

// §9.2: the inner bfifo accepts while backlog + len <= limit (bytes); tail drop otherwise.
TEST(Tbf, InnerByteLimitTailDrops) {
  Tbf q(Tbf::Params{.rate = 100_mbit, .burst = 3028, .limit = 3028});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  EXPECT_EQ(q.enqueue(f.make(1514), at(0)), Verdict::kQueued);
  EXPECT_EQ(q.enqueue(f.make(1514), at(0)), Verdict::kQueued);  // exactly 3028
  EXPECT_EQ(q.enqueue(f.make(1), at(0)), Verdict::kDropped);
  EXPECT_EQ(q.backlog_bytes(), 3028u);
  ASSERT_EQ(obs.ids(RecordingObserver::Event::kDrop), (std::vector<uint64_t>{3}));
  EXPECT_EQ(obs.events.back().reason, DropReason::kQueueFull);
  EXPECT_EQ(q.stats().dropped_too_big, 0u);
  ASSERT_TRUE(q.dequeue(at(0)));  // frees 1514 bytes
  EXPECT_EQ(q.enqueue(f.make(1514), at(0)), Verdict::kQueued);
  EXPECT_EQ(q.enqueue(f.make(60), at(0)), Verdict::kDropped);
  testing::expect_stats_identities(q);
}

// tc q_tbf.c: with only latency, limit = rate * latency + burst (bytes), and with a peak rate
// the smaller of that and peakrate * latency + mtu.
TEST(Tbf, LimitDerivedFromLatency) {
  // 8 Mbit/s = 1'000'000 B/s; 50 ms -> 50'000 B; + burst 10'000.
  const Tbf::Params a{.rate = 8_mbit, .burst = 10'000, .latency = 50_ms};
  EXPECT_EQ(a.effective_limit(), 60'000u);
  // Peak 80 Mbit/s: 500'000 + 1514 is larger, so the rate term wins.
  const Tbf::Params b{
      .rate = 8_mbit, .burst = 10'000, .latency = 50_ms, .peakrate = 80_mbit, .mtu = 1514};
  EXPECT_EQ(b.effective_limit(), 60'000u);
  // Peak 16 Mbit/s, 10 ms: rate term 10'000 + 100'000 = 110'000; peak term 20'000 + 1514.
  const Tbf::Params c{
      .rate = 8_mbit, .burst = 100'000, .latency = 10_ms, .peakrate = 16_mbit, .mtu = 1514};
  EXPECT_EQ(c.effective_limit(), 21'514u);
  Tbf q(c);
  EXPECT_EQ(q.limit_bytes(), 21'514u);
  PacketFactory f;
  for (int i = 0; i < 14; ++i) {
    ASSERT_EQ(q.enqueue(f.make(1514), at(0)), Verdict::kQueued);  // 21'196 bytes
  }
  EXPECT_EQ(q.enqueue(f.make(319), at(0)), Verdict::kDropped);  // 21'515 > 21'514
  EXPECT_EQ(q.enqueue(f.make(318), at(0)), Verdict::kQueued);   // exactly 21'514
  // An explicit limit is used as given.
  EXPECT_EQ((Tbf::Params{.rate = 8_mbit, .burst = 10'000, .limit = 1234}.effective_limit()), 1234u);
}

// §9.2 "Never reorders": a blocked large head holds back a small packet whose tokens would
// already suffice.
TEST(Tbf, NeverReorders) {
  Tbf q(base_params());
  PacketFactory f;
  q.enqueue(f.make(1514), at(0));
  q.enqueue(f.make(1514), at(0));
  ASSERT_EQ(q.dequeue(at(0))->id, 1u);
  ASSERT_EQ(q.dequeue(at(0))->id, 2u);
  q.enqueue(f.make(1514), at(0));  // id 3
  q.enqueue(f.make(64), at(0));    // id 4: l2t 5'120 ns
  // At 60 us there are 60'000 ns of tokens: enough for id 4, not for id 3.
  EXPECT_EQ(q.peek(at(60'000)), nullptr);
  EXPECT_FALSE(q.dequeue(at(60'000)));
  EXPECT_EQ(q.next_ready(at(60'000)), at(121'120));
  auto c = q.dequeue(at(121'120));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->id, 3u);
  EXPECT_EQ(q.next_ready(at(121'120)), at(126'240));
  auto d = q.dequeue(at(126'240));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, 4u);
}

// overlimits counts refused dequeues only (qdisc_qstats_overlimit in tbf_dequeue); peek and
// next_ready are pure, and an empty qdisc is not over its limit.
TEST(Tbf, OverlimitsCountRefusedDequeuesOnly) {
  Tbf q(base_params());
  PacketFactory f;
  EXPECT_FALSE(q.dequeue(at(0)));
  EXPECT_EQ(q.stats().overlimits, 0u);
  for (int i = 0; i < 3; ++i) {
    q.enqueue(f.make(1514), at(0));
  }
  ASSERT_TRUE(q.dequeue(at(0)));
  ASSERT_TRUE(q.dequeue(at(0)));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(q.peek(at(10)), nullptr);
    EXPECT_EQ(q.next_ready(at(10)), at(121'120));
  }
  EXPECT_EQ(q.stats().overlimits, 0u);
  EXPECT_EQ(q.tokens(), 0_ns);
  EXPECT_EQ(q.t_c(), at(0));
  EXPECT_FALSE(q.dequeue(at(10)));
  EXPECT_FALSE(q.dequeue(at(20)));
  EXPECT_EQ(q.stats().overlimits, 2u);
  EXPECT_EQ(q.t_c(), at(0));  // a refused dequeue changes no state but the counter
}

void expect_rejected(const Tbf::Params& p, const std::string& key) {
  SCOPED_TRACE("expected key " + key);
  const Validation err = p.validate();
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->key, key) << err->to_string();
  EXPECT_THROW(Tbf{p}, InvalidParams);
}

TEST(Tbf, RejectsBadParams) {
  const Tbf::Params ok = base_params();
  EXPECT_FALSE(ok.validate());

  Tbf::Params p = ok;
  p.rate = Rate{};
  expect_rejected(p, "rate");
  p.rate = Rate::bps(7);
  expect_rejected(p, "rate");

  p = ok;
  p.burst = 0;
  expect_rejected(p, "burst");
  p.burst = -1;
  expect_rejected(p, "burst");
  p.burst = int64_t{1} << 32;
  expect_rejected(p, "burst");
  p.burst = 1000;  // below dev_mtu 1514: full-size frames could never pass
  expect_rejected(p, "burst");
  p.dev_mtu = 0;  // ... unless the check is disabled (Linux behaviour: warn only)
  EXPECT_FALSE(p.validate());
  p.dev_mtu = -1;
  expect_rejected(p, "dev_mtu");

  p = ok;
  p.limit = -1;
  expect_rejected(p, "limit");
  p.limit = 0;  // neither limit nor latency
  expect_rejected(p, "limit");
  p.latency = -1_ms;
  expect_rejected(p, "latency");
  p.latency = 1_ms;
  EXPECT_FALSE(p.validate());
  p.limit = 5000;  // both
  expect_rejected(p, "latency");

  p = ok;
  p.peakrate = 100_mbit;  // == rate
  p.mtu = 1514;
  expect_rejected(p, "peakrate");
  p.peakrate = 50_mbit;  // < rate
  expect_rejected(p, "peakrate");
  p.peakrate = 200_mbit;
  EXPECT_FALSE(p.validate());
  p.mtu = 0;  // peakrate needs mtu
  expect_rejected(p, "mtu");
  p.mtu = -5;
  expect_rejected(p, "mtu");
  p.mtu = 1000;  // below dev_mtu
  expect_rejected(p, "mtu");
  p.mtu = int64_t{1} << 32;
  expect_rejected(p, "mtu");

  const Validation err = Tbf::Params{.rate = 10_mbit, .burst = 0, .limit = 1}.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->to_string(), "burst: required, must be >= 1 byte, got 0");
}

TEST(Tbf, Properties) {
  const Tbf::Params sets[] = {
      {.rate = 10_mbit, .burst = 3028, .limit = 20'000},
      {.rate = 100_mbit, .burst = 15140, .limit = 30'000, .peakrate = 1_gbit, .mtu = 1514},
      // Burst below the largest packets (check disabled): many kTooBig drops.
      {.rate = 1_mbit, .burst = 1000, .limit = 5000, .dev_mtu = 0},
      {.rate = 50_mbit, .burst = 1514, .latency = 1_ms},
      {.rate = 3_mbit, .burst = 4000, .limit = 9000, .peakrate = 7_mbit, .mtu = 1600},
  };
  for (const auto& params : sets) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE("rate " + std::to_string(params.rate.bits_per_sec()) + " burst " +
                   std::to_string(params.burst));
      Tbf q(params);
      testing::check_queue_properties(q, {.seed = seed});
    }
  }
}

}  // namespace
}  // namespace nicsim::algo
