// Fq: pins net/sched/sch_fq.c behaviour (torvalds/linux 01857fc712f6; docs/algorithms/fq.md)
// on a manual clock: fq_init defaults, the fast path, DRR with initial_quantum/quantum, the
// band quirk and weights, EDT and maxrate pacing with exact next_ready, horizon, limits,
// ce_threshold and the gc of detached flows; then the property tests.
#include "nicsim/algo/fq.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;
using FlowState = Fq::FlowState;

constexpr uint32_t kA = 0x1111;
constexpr uint32_t kB = 0x2222;
constexpr uint32_t kFiller = 0xF00D;
constexpr uint8_t kPrioBand0 = 6;  // TC_PRIO_INTERACTIVE -> band 0
constexpr uint8_t kPrioBand1 = 0;  // TC_PRIO_BESTEFFORT -> band 1
constexpr uint8_t kPrioBand2 = 1;  // TC_PRIO_FILLER -> band 2

Time at_us(int64_t us) { return Time::zero() + Duration::us(us); }

Packet pkt(PacketFactory& f, uint32_t hash, uint32_t len = 1514, uint8_t prio = kPrioBand1,
           Time tstamp = Time::zero()) {
  Packet p = f.make(len, hash, prio);
  p.tstamp = tstamp;
  return p;
}

// fq_fastpath_check sends packets to the internal FIFO while no flow is eligible and it holds
// fewer than 8; filling it first makes the next packets go to their flows.
void fill_fastpath(Fq& q, PacketFactory& f, Time now) {
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(q.enqueue(pkt(f, kFiller), now), Verdict::kQueued);
  }
  ASSERT_EQ(q.internal_packets(), 8u);
}

std::vector<uint32_t> drain_hashes(Fq& q, Time now) {
  std::vector<uint32_t> out;
  while (auto p = q.dequeue(now)) {
    out.push_back(p->flow_hash);
  }
  return out;
}

std::vector<uint32_t> repeat(uint32_t h, int n) { return std::vector<uint32_t>(n, h); }
std::vector<uint32_t> cat(std::vector<std::vector<uint32_t>> parts) {
  std::vector<uint32_t> out;
  for (auto& p : parts) {
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

TEST(Fq, DefaultsAreFqInit) {
  const Fq::Params p;
  EXPECT_EQ(p.limit, 10000);
  EXPECT_EQ(p.flow_limit, 100);
  EXPECT_EQ(p.quantum, 3028);
  EXPECT_EQ(p.initial_quantum, 15140);
  EXPECT_TRUE(p.maxrate.is_zero());
  EXPECT_EQ(p.buckets, 1024);
  EXPECT_EQ(p.refill_delay, 40_ms);
  EXPECT_EQ(p.orphan_mask, 1023);
  EXPECT_EQ(p.low_rate_threshold.bits_per_sec(), 550'000u);
  EXPECT_FALSE(p.ce_threshold.has_value());
  EXPECT_EQ(p.horizon, 10_s);
  EXPECT_TRUE(p.horizon_drop);
  EXPECT_TRUE(p.pacing);
  EXPECT_EQ(p.weights, (std::array<int32_t, 3>{589824, 196608, 65536}));
  EXPECT_EQ(p.priomap, (std::array<int32_t, 16>{1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}));
}

TEST(Fq, ValidateNamesTheKey) {
  auto key_of = [](Fq::Params p) { return p.validate().value_or(ParamError{"-", ""}).key; };
  EXPECT_EQ(key_of(Fq::Params{.quantum = 0}), "quantum");
  EXPECT_EQ(key_of(Fq::Params{.quantum = (1 << 20) + 1}), "quantum");
  EXPECT_EQ(key_of(Fq::Params{.buckets = 1000}), "buckets");
  EXPECT_EQ(key_of(Fq::Params{.buckets = 1 << 19}), "buckets");
  EXPECT_EQ(key_of(Fq::Params{.flow_limit = 0}), "flow_limit");
  Fq::Params w;
  w.weights[2] = 16383;
  EXPECT_EQ(key_of(w), "weights");
  Fq::Params m;
  m.priomap[3] = 3;
  EXPECT_EQ(key_of(m), "priomap");
  EXPECT_FALSE(Fq::Params{}.validate().has_value());
}

// fq_fastpath_check: an empty qdisc sends due packets to the internal FIFO, up to 8 while no
// flow is eligible; no flow is created for them.
TEST(Fq, FastPathWhileNoFlowIsEligible) {
  Fq q;
  PacketFactory f;
  for (int i = 0; i < 9; ++i) {
    q.enqueue(pkt(f, kA), Time::zero());
  }
  EXPECT_EQ(q.internal_packets(), 8u);
  EXPECT_EQ(q.stats().fastpath_packets, 8u);
  EXPECT_EQ(q.flows(), 1u);  // the 9th made the flow
  EXPECT_EQ(q.band_packets(1), 1u);
  // A maxrate disables the fast path.
  Fq capped(Fq::Params{.maxrate = 1_gbit});
  capped.enqueue(pkt(f, kA), Time::zero());
  EXPECT_EQ(capped.internal_packets(), 0u);
}

// DRR: a new flow starts with initial_quantum (10 x 1514 B), then quantum (2 x 1514 B) per
// round; an empty flow passes through old_flows once, then is detached — but only while the
// qdisc still holds packets (fq_dequeue returns at once when qlen is 0), so the last flow to
// empty stays on its list.
TEST(Fq, RoundRobinWithInitialQuantum) {
  Fq q;
  PacketFactory f;
  for (int i = 0; i < 20; ++i) {
    q.enqueue(pkt(f, kA), Time::zero());
  }
  for (int i = 0; i < 20; ++i) {
    q.enqueue(pkt(f, kB), Time::zero());
  }
  EXPECT_EQ(q.stats().fastpath_packets, 8u);  // the first 8 of A
  const std::vector<uint32_t> order = drain_hashes(q, Time::zero());
  EXPECT_EQ(order, cat({repeat(kA, 8), repeat(kA, 10), repeat(kB, 10), repeat(kA, 2), repeat(kB, 2),
                        repeat(kB, 2), repeat(kB, 2), repeat(kB, 2), repeat(kB, 2)}));
  EXPECT_EQ(q.flow_state(kA), FlowState::kDetached);
  EXPECT_EQ(q.flow_state(kB), FlowState::kOld);
  EXPECT_EQ(q.flows(), 2u);
  EXPECT_EQ(q.inactive_flows(), 2u);
}

// A detached flow idle for more than refill_delay gets its credit raised to quantum.
TEST(Fq, RefillAfterIdle) {
  // 11 packets: 10 spend initial_quantum, the 11th half of a quantum; then A detaches with
  // 1514 B of credit (B keeps the qdisc busy meanwhile).
  auto detached_with_half_quantum = [](Fq& q, PacketFactory& f) {
    fill_fastpath(q, f, Time::zero());
    for (int i = 0; i < 11; ++i) {
      q.enqueue(pkt(f, kA), Time::zero());
    }
    for (int i = 0; i < 30; ++i) {
      q.enqueue(pkt(f, kB), Time::zero());
    }
    drain_hashes(q, Time::zero());
    ASSERT_EQ(q.flow_state(kA), FlowState::kDetached);
    ASSERT_EQ(q.flow_credit(kA), 1514);
  };
  PacketFactory f;
  Fq soon;
  detached_with_half_quantum(soon, f);
  fill_fastpath(soon, f, at_us(40'000));
  soon.enqueue(pkt(f, kA), at_us(40'000));  // not more than 40 ms idle: no refill
  EXPECT_EQ(soon.flow_credit(kA), 1514);
  Fq late;
  detached_with_half_quantum(late, f);
  fill_fastpath(late, f, at_us(40'001));
  late.enqueue(pkt(f, kA), at_us(40'001));
  EXPECT_EQ(late.flow_credit(kA), 3028);
}

// The kernel adds a detached flow to the new-flows list of f->band before setting f->band
// from the packet, so a fresh flow's first quantum is served in band 0 whatever its priority;
// when that credit is spent the flow moves to the old list of its own band. Then bands share
// by weight: 9 x 64 KiB for band 0 against 1 x 64 KiB for band 2.
TEST(Fq, FreshFlowsStartInBandZeroThenBandsShareByWeight) {
  Fq q(Fq::Params{.flow_limit = 10000});
  PacketFactory f;
  fill_fastpath(q, f, Time::zero());
  for (int i = 0; i < 2000; ++i) {
    q.enqueue(pkt(f, kA, 1000, kPrioBand2), Time::zero());
    q.enqueue(pkt(f, kB, 1000, kPrioBand0), Time::zero());
  }
  EXPECT_EQ(q.band_packets(2), 2000u);
  EXPECT_EQ(q.band_packets(0), 2000u);
  std::vector<uint32_t> order = drain_hashes(q, Time::zero());
  order.erase(order.begin(), order.begin() + 8);  // the filler
  // Both fresh flows in band 0: initial_quantum (15140 B = 16 packets of 1000 B) each.
  EXPECT_EQ(std::vector<uint32_t>(order.begin(), order.begin() + 32),
            cat({repeat(kA, 16), repeat(kB, 16)}));
  // Then band 0 (B) spends the rest of its 589824 B, band 2 (A) gets 65536 B, and so on.
  EXPECT_EQ(std::vector<uint32_t>(order.begin() + 32, order.begin() + 32 + 558 + 66),
            cat({repeat(kB, 558), repeat(kA, 66)}));
  const auto a = std::count(order.begin() + 32, order.begin() + 32 + 1310, kA);
  EXPECT_EQ(a, 132);
}

// EDT: a packet is held until its tstamp; the flow is throttled and next_ready is exact.
TEST(Fq, EdtHoldsPacketsUntilTheirTimestamp) {
  Fq q;
  PacketFactory f;
  ASSERT_EQ(q.enqueue(pkt(f, kA, 1514, kPrioBand1, at_us(100)), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(q.internal_packets(), 0u);  // not due: no fast path
  EXPECT_EQ(q.next_ready(Time::zero()), at_us(100));
  EXPECT_FALSE(q.dequeue(Time::zero()).has_value());
  EXPECT_EQ(q.flow_state(kA), FlowState::kThrottled);
  EXPECT_EQ(q.throttled_flows(), 1u);
  EXPECT_EQ(q.stats().throttled, 1u);
  EXPECT_EQ(q.next_ready(at_us(50)), at_us(100));
  EXPECT_FALSE(q.dequeue(at_us(99)).has_value());
  auto p = q.dequeue(at_us(100));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->tstamp, at_us(100));
  EXPECT_EQ(q.next_ready(at_us(100)), std::nullopt);
}

// Within a flow, packets leave in time_to_send order (the kernel's per-flow rb-tree for
// out-of-order timestamps; equal times keep arrival order).
TEST(Fq, EdtOrdersWithinAFlow) {
  Fq q;
  PacketFactory f;
  q.enqueue(pkt(f, kA, 100, kPrioBand1, at_us(30)), Time::zero());  // id 1
  q.enqueue(pkt(f, kA, 100, kPrioBand1, at_us(10)), Time::zero());  // id 2
  q.enqueue(pkt(f, kA, 100, kPrioBand1, at_us(20)), Time::zero());  // id 3
  q.enqueue(pkt(f, kA, 100, kPrioBand1, at_us(10)), Time::zero());  // id 4
  std::vector<uint64_t> ids;
  Time now = Time::zero();
  while (q.backlog_packets() > 0) {
    if (auto p = q.dequeue(now)) {
      ids.push_back(p->id);
    } else {
      now = *q.next_ready(now);
    }
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{2, 4, 3, 1}));
}

// horizon: beyond now + 10 s a packet is dropped, or capped with horizon_drop off.
TEST(Fq, Horizon) {
  PacketFactory f;
  Fq q;
  EXPECT_EQ(q.enqueue(pkt(f, kA, 1514, kPrioBand1, at_us(10'000'001)), Time::zero()),
            Verdict::kDropped);
  EXPECT_EQ(q.enqueue(pkt(f, kA, 1514, kPrioBand1, at_us(10'000'000)), Time::zero()),
            Verdict::kQueued);
  EXPECT_EQ(q.stats().horizon_drops, 1u);
  Fq cap(Fq::Params{.horizon_drop = false});
  EXPECT_EQ(cap.enqueue(pkt(f, kA, 1514, kPrioBand1, at_us(20'000'000)), Time::zero()),
            Verdict::kQueued);
  EXPECT_EQ(cap.stats().horizon_caps, 1u);
  EXPECT_EQ(cap.next_ready(Time::zero()), at_us(10'000'000));
}

// flow_limit per flow (flows_plimit) and limit per band (band_drops; the fast path does not
// count).
TEST(Fq, Limits) {
  PacketFactory f;
  Fq q;
  for (int i = 0; i < 110; ++i) {
    q.enqueue(pkt(f, kA), Time::zero());
  }
  EXPECT_EQ(q.internal_packets(), 8u);
  EXPECT_EQ(q.band_packets(1), 100u);
  EXPECT_EQ(q.stats().flows_plimit, 2u);
  EXPECT_EQ(q.stats().dropped_packets, 2u);
  Fq b(Fq::Params{.limit = 5});
  for (int i = 0; i < 20; ++i) {
    b.enqueue(pkt(f, kA + static_cast<uint32_t>(i)), Time::zero());
  }
  EXPECT_EQ(b.band_packets(1), 5u);
  EXPECT_EQ(b.stats().band_drops[1], 7u);
  testing::expect_stats_identities(b);
}

// maxrate without EDT: credit lets quantum-sized bursts go; each time the credit runs out the
// flow waits max(len, quantum) / maxrate, less up to half of the time it was served late.
TEST(Fq, MaxratePacing) {
  // 3028 B per ms.
  Fq q(Fq::Params{.maxrate = Rate::bytes_per_sec(3'028'000)});
  PacketFactory f;
  for (int i = 0; i < 20; ++i) {
    q.enqueue(pkt(f, kA), Time::zero());
  }
  EXPECT_EQ(drain_hashes(q, Time::zero()).size(), 10u);  // initial_quantum
  EXPECT_EQ(q.flow_time_next_packet(kA), at_us(1000));
  EXPECT_EQ(q.next_ready(Time::zero()), at_us(1000));
  EXPECT_EQ(q.stats().throttled, 1u);
  EXPECT_EQ(drain_hashes(q, at_us(1000)).size(), 2u);  // one quantum
  EXPECT_EQ(q.flow_time_next_packet(kA), at_us(2000));
  // Served 400 us late: the next gap is 1 ms - 400 us.
  EXPECT_EQ(drain_hashes(q, at_us(2400)).size(), 2u);
  EXPECT_EQ(q.flow_time_next_packet(kA), at_us(3000));
  // Served 700 us late: at most half of the gap is given back.
  EXPECT_EQ(drain_hashes(q, at_us(3700)).size(), 2u);
  EXPECT_EQ(q.flow_time_next_packet(kA), at_us(4200));
}

// At or below low_rate_threshold every packet is paced on its own length (credit zeroed).
TEST(Fq, LowRatePacesEveryPacket) {
  Fq q(Fq::Params{.maxrate = 500_kbit});  // 62500 B/s: 1000 B = 16 ms
  PacketFactory f;
  for (int i = 0; i < 3; ++i) {
    q.enqueue(pkt(f, kA, 1000), Time::zero());
  }
  ASSERT_TRUE(q.dequeue(Time::zero()).has_value());
  EXPECT_EQ(q.flow_credit(kA), 0);
  EXPECT_EQ(q.flow_time_next_packet(kA), at_us(16'000));
  EXPECT_EQ(q.next_ready(Time::zero()), at_us(16'000));
}

// A pacing delay is clamped to 1 s (pkts_too_long).
TEST(Fq, PacketsTooLong) {
  Fq q(Fq::Params{.maxrate = Rate::bps(8000)});  // 1000 B/s
  PacketFactory f;
  q.enqueue(pkt(f, kA, 1514), Time::zero());
  q.enqueue(pkt(f, kA, 1514), Time::zero());
  EXPECT_EQ(drain_hashes(q, Time::zero()).size(), 1u);
  EXPECT_EQ(q.stats().pkts_too_long, 1u);
  EXPECT_EQ(q.next_ready(Time::zero()), at_us(1'000'000));
}

// ce_threshold: CE when a packet leaves more than ce_threshold after it was due.
TEST(Fq, CeThreshold) {
  Fq q(Fq::Params{.ce_threshold = 1_ms});
  PacketFactory f;
  fill_fastpath(q, f, Time::zero());
  q.enqueue(pkt(f, kA, 1514, kPrioBand1), Time::zero());
  Packet ect = pkt(f, kA, 1514, kPrioBand1);
  ect.tos = 0x02;
  q.enqueue(std::move(ect), Time::zero());
  Packet late = pkt(f, kA, 1514, kPrioBand1);
  late.tos = 0x02;
  q.enqueue(std::move(late), Time::zero());
  EXPECT_EQ(drain_hashes(q, at_us(1000)).size(), 11u);  // 1 ms late: not more than 1 ms
  EXPECT_EQ(q.stats().ce_mark, 0u);
  fill_fastpath(q, f, Time::zero());
  Packet p2 = pkt(f, kB, 1514, kPrioBand1);
  p2.tos = 0x02;
  q.enqueue(std::move(p2), Time::zero());
  q.enqueue(pkt(f, kB, 1514, kPrioBand1), Time::zero());  // not ECT: counted, not marked
  std::vector<Packet> out;
  while (auto p = q.dequeue(at_us(1001))) {
    out.push_back(std::move(*p));
  }
  ASSERT_EQ(out.size(), 10u);
  EXPECT_EQ(out[8].ecn(), Ecn::kCe);
  EXPECT_EQ(out[9].ecn(), Ecn::kNotEct);
  EXPECT_EQ(q.stats().ce_mark, 2u);
  EXPECT_EQ(q.stats().ecn_marked, 1u);
}

// fq_gc: detached flows idle for more than 3 s are freed when their bucket is searched.
TEST(Fq, GcFreesOldDetachedFlows) {
  Fq q(Fq::Params{.buckets = 2});
  PacketFactory f;
  fill_fastpath(q, f, Time::zero());
  for (uint32_t h = 1; h <= 16; ++h) {
    q.enqueue(pkt(f, h * 0x10001), Time::zero());
  }
  for (int i = 0; i < 30; ++i) {
    q.enqueue(pkt(f, kB), Time::zero());  // keeps the qdisc busy while the 16 detach
  }
  drain_hashes(q, Time::zero());
  EXPECT_EQ(q.flows(), 17u);
  EXPECT_EQ(q.inactive_flows(), 17u);
  EXPECT_EQ(q.flow_state(0x10001), FlowState::kDetached);
  fill_fastpath(q, f, at_us(2'000'000));
  q.enqueue(pkt(f, 0xABCDEF), at_us(2'000'000));  // 2 s: too young
  EXPECT_EQ(q.stats().gc_flows, 0u);
  drain_hashes(q, at_us(2'000'000));
  fill_fastpath(q, f, at_us(3'000'001));
  q.enqueue(pkt(f, 0x123457), at_us(3'000'001));
  q.enqueue(pkt(f, 0x765433), at_us(3'000'001));
  EXPECT_GT(q.stats().gc_flows, 0u);
  EXPECT_LE(q.stats().gc_flows, 16u);
  EXPECT_EQ(q.flows(), 17u + 1 + 2 - q.stats().gc_flows);
  EXPECT_EQ(q.flows(), q.inactive_flows() + 2);
}

// With Params::orphan (forwarded traffic) flows are flow_hash & orphan_mask.
TEST(Fq, OrphanMaskFoldsHashes) {
  Fq q(Fq::Params{.orphan_mask = 1, .orphan = true});
  PacketFactory f;
  fill_fastpath(q, f, Time::zero());
  for (uint32_t h = 0; h < 10; ++h) {
    q.enqueue(pkt(f, h), Time::zero());
  }
  EXPECT_EQ(q.flows(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Properties

// Fq with random EDT timestamps (0 = none, else up to 3 ms ahead) set at enqueue.
struct EdtFq {
  Fq q;
  uint64_t n = 0;
  Verdict enqueue(Packet&& p, Time now) {
    const uint64_t r = (++n * 0x9E3779B97F4A7C15ull) >> 40;
    p.tstamp = r % 3 == 0 ? Time::zero() : now + Duration::ns(static_cast<int64_t>(r % 3'000'000));
    return q.enqueue(std::move(p), now);
  }
  std::optional<Packet> dequeue(Time now) { return q.dequeue(now); }
  const Packet* peek(Time now) { return q.peek(now); }
  std::optional<Time> next_ready(Time now) const { return q.next_ready(now); }
  uint64_t backlog_packets() const { return q.backlog_packets(); }
  uint64_t backlog_bytes() const { return q.backlog_bytes(); }
  const QueueStats& stats() const { return q.stats(); }
  void set_observer(Observer* o) { q.set_observer(o); }
};

// Runs the property driver on `seeds` fresh elements from make().
template <class Make>
void check_seeds(uint64_t seeds, Make make) {
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    auto q = make();
    testing::check_queue_properties(q, {.seed = seed});
  }
}

TEST(FqProperties, Default) {
  check_seeds(4, [] { return Fq(); });
}

TEST(FqProperties, MaxrateAndSmallLimits) {
  check_seeds(4, [] {
    return Fq(Fq::Params{.limit = 50, .flow_limit = 20, .maxrate = 100_mbit, .buckets = 4});
  });
}

TEST(FqProperties, EdtTimestamps) {
  check_seeds(4, [] { return EdtFq(); });
}

TEST(FqProperties, EdtWithOffloadHorizonAndCeThreshold) {
  check_seeds(2, [] {
    return EdtFq{
        Fq(Fq::Params{.maxrate = 50_mbit, .ce_threshold = 100_us, .offload_horizon = 200_us})};
  });
}

}  // namespace
}  // namespace nicsim::algo
