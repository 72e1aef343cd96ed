// Cake: pins the behaviour of Linux net/sched/sch_cake.c (torvalds/linux commit 0280f429dc21)
// and of "Piece of CAKE" (Høiland-Jørgensen, Täht, Morton, LANMAN 2018) on a manual clock:
// parameter derivation (cake_set_rate, cake_reconfigure), the Diffserv tables, the
// set-associative hash, DRR++ with sparse flows and host isolation, the shaper with overhead
// compensation and ingress mode, split GSO, wash, the memory limit, the ACK filter, and the
// element contract (property tests). docs/algorithms/cake.md.
#include "nicsim/algo/cake.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"
#include "nicsim/testing/recording_observer.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;

constexpr uint8_t kEf = 46 << 2;
constexpr uint8_t kCs1 = 8 << 2;
constexpr uint8_t kAf41 = 34 << 2;

Cake::Params shaped(Rate r) {
  Cake::Params p;
  p.bandwidth = r;
  return p;
}

Packet pkt(PacketFactory& f, uint32_t hash, uint32_t len = 1514, uint8_t tos = 0, uint16_t src = 0,
           uint16_t dst = 1) {
  Packet p = f.make(len, hash, 0, tos);
  p.src_host = src;
  p.dst_host = dst;
  return p;
}

TEST(Cake, DefaultsAreCakeInit) {
  const Cake::Params p;
  EXPECT_TRUE(p.bandwidth.is_zero());
  EXPECT_EQ(p.diffserv, CakeDiffserv::kDiffserv3);
  EXPECT_EQ(p.flow_mode, Cake::FlowMode::kTripleIsolate);
  EXPECT_EQ(p.rtt, 100_ms);
  EXPECT_EQ(p.effective_target(), 5_ms);
  EXPECT_TRUE(p.split_gso);
  const Cake q;
  ASSERT_EQ(q.tin_count(), 3);
  EXPECT_EQ(q.flow_quantum(0), 1514u);
  EXPECT_EQ(q.cobalt_params(0).target, 5'000'000u);
  EXPECT_EQ(q.cobalt_params(0).interval, 100'000'000u);
  EXPECT_EQ(q.cobalt_params(0).mtu_time, 0u);
  // Unlimited: no rate-based limit, so limit * mtu = 10240 * 1514.
  EXPECT_EQ(q.memory_limit(), 10240u * 1514u);
  // tc's display order puts Bulk first.
  EXPECT_STREQ(q.tin_name(0), "Bulk");
  EXPECT_STREQ(q.tin_name(1), "Best Effort");
  EXPECT_STREQ(q.tin_name(2), "Voice");
}

// cake_set_rate at 1 Mbit/s (125000 B/s): one MTU takes 12.112 ms, so target becomes 1.5 MTU
// times and interval grows by the same amount; the flow quantum is clamped to 300 bytes.
TEST(Cake, LowRatesStretchTargetAndInterval) {
  const Cake q(shaped(1_mbit));
  const CobaltParams& c = q.cobalt_params(0);
  EXPECT_NEAR(static_cast<double>(c.mtu_time), 12'112'000.0, 2'000.0);
  EXPECT_EQ(c.target, c.mtu_time * 3 / 2);
  EXPECT_EQ(c.interval, 100'000'000u + c.target - 5'000'000u);
  EXPECT_EQ(q.flow_quantum(0), 300u);
  // 4 intervals of the rate are 50 kB: the 4 MiB floor applies.
  EXPECT_EQ(q.memory_limit(), 4u << 20);
  // At 100 Mbit/s the quantum is rate >> 12 = 3051 -> clamped to 1514; target stays 5 ms.
  const Cake fast(shaped(100_mbit));
  EXPECT_EQ(fast.flow_quantum(0), 1514u);
  EXPECT_EQ(fast.cobalt_params(0).target, 5'000'000u);
}

TEST(Cake, DiffservTablesAndThresholds) {
  PacketFactory f;
  Cake::Params p = shaped(100_mbit);
  p.diffserv = CakeDiffserv::kDiffserv4;
  const Cake d4(p);
  EXPECT_EQ(d4.tin_of(pkt(f, 1, 100, kEf)), 3);    // Voice
  EXPECT_EQ(d4.tin_of(pkt(f, 1, 100, kCs1)), 1);   // Bulk
  EXPECT_EQ(d4.tin_of(pkt(f, 1, 100, kAf41)), 2);  // Video
  EXPECT_EQ(d4.tin_of(pkt(f, 1, 100, 0)), 0);      // Best Effort
  // Thresholds in display order: Bulk 1/16, Best Effort 1, Video 1/2, Voice 1/4.
  EXPECT_EQ(d4.tin_stats(0).threshold_rate, 12'500'000u >> 4);
  EXPECT_EQ(d4.tin_stats(1).threshold_rate, 12'500'000u);
  EXPECT_EQ(d4.tin_stats(2).threshold_rate, 12'500'000u >> 1);
  EXPECT_EQ(d4.tin_stats(3).threshold_rate, 12'500'000u >> 2);
  p.diffserv = CakeDiffserv::kDiffserv3;
  const Cake d3(p);
  EXPECT_EQ(d3.tin_of(pkt(f, 1, 100, kEf)), 2);
  EXPECT_EQ(d3.tin_of(pkt(f, 1, 100, kAf41)), 0);
  p.diffserv = CakeDiffserv::kDiffserv8;
  const Cake d8(p);
  EXPECT_EQ(d8.tin_of(pkt(f, 1, 100, kEf)), 6);
  EXPECT_EQ(d8.tin_of(pkt(f, 1, 100, 56 << 2)), 7);  // CS7
  EXPECT_EQ(d8.tin_stats(1).threshold_rate, 12'500'000u * 7 / 8);
  p.diffserv = CakeDiffserv::kPrecedence;
  const Cake prec(p);
  EXPECT_EQ(prec.tin_of(pkt(f, 1, 100, kEf)), 5);  // precedence = DSCP >> 3
  p.diffserv = CakeDiffserv::kBesteffort;
  const Cake be(p);
  EXPECT_EQ(be.tin_count(), 1);
  EXPECT_EQ(be.tin_of(pkt(f, 1, 100, kEf)), 0);
}

// The shaper releases packets at the rate of their overhead-adjusted sizes.
TEST(Cake, ShaperSpacesPacketsByAdjustedLength) {
  PacketFactory f;
  auto spacing = [&](Cake::Params p, uint32_t len) {
    Cake q(p);
    for (int i = 0; i < 3; ++i) {
      q.enqueue(pkt(f, 7, len), Time::zero());
    }
    EXPECT_TRUE(q.dequeue(Time::zero()).has_value());
    const std::optional<Time> next = q.next_ready(Time::zero());
    EXPECT_FALSE(q.dequeue(Time::zero()).has_value());
    EXPECT_GE(q.stats().overlimits, 1u);
    return next->ns_since_epoch();
  };
  Cake::Params p = shaped(10_mbit);
  EXPECT_NEAR(spacing(p, 1514), 1'211'200, 2);  // 1514 B at 1.25 MB/s
  p.raw = false;
  p.overhead = 18;  // docsis: the MAC header replaced by 18 bytes
  p.mpu = 64;
  EXPECT_NEAR(spacing(p, 1514), 1'214'400, 2);  // 1500 + 18
  EXPECT_NEAR(spacing(p, 60), 51'200, 2);       // 46 + 18 = 64 = mpu
  p.overhead = 0;
  p.mpu = 0;
  p.atm = CakeAtm::kAtm;
  EXPECT_NEAR(spacing(p, 114), 127'200, 2);  // 100 B -> 3 cells of 53 = 159 B
  p.atm = CakeAtm::kPtm;
  EXPECT_NEAR(spacing(p, 1514), 1'219'200, 2);  // 1500 + 24 = 1524 B
}

TEST(Cake, OverheadStatistics) {
  CakeOverhead o(true, 18, 64, CakeAtm::kNone);
  EXPECT_EQ(o.adjust(1514), 1518u);
  EXPECT_EQ(o.adjust(60), 64u);
  EXPECT_EQ(o.max_netlen(), 1500u);
  EXPECT_EQ(o.min_netlen(), 46u);
  EXPECT_EQ(o.max_adjlen(), 1518u);
  EXPECT_EQ(o.min_adjlen(), 64u);
  // A GSO packet is costed segment by segment.
  Packet g;
  g.len = 3 * 1514;
  g.gso_segs = 3;
  g.gso_size = 1514;
  EXPECT_EQ(o.adjust(g), 3 * 1518u);
}

// Sparse flows first: a new flow's packet overtakes a backlogged bulk flow.
TEST(Cake, NewFlowsArePrioritised) {
  PacketFactory f;
  Cake::Params p;
  p.flow_mode = Cake::FlowMode::kFlows;
  Cake q(p);
  for (int i = 0; i < 20; ++i) {
    q.enqueue(pkt(f, 100), Time::zero());
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(q.dequeue(Time::zero())->flow_hash, 100u);
  }
  q.enqueue(pkt(f, 200, 100), Time::zero());
  EXPECT_EQ(q.dequeue(Time::zero())->flow_hash, 200u);
  EXPECT_EQ(q.bulk_flow_count(0), 1u);
}

// Set-associative hashing: hashes equal modulo 1024 get different ways of one set; the ninth
// flow of a full set collides.
TEST(Cake, SetAssociativeHashing) {
  PacketFactory f;
  Cake::Params p;
  p.flow_mode = Cake::FlowMode::kFlows;
  p.diffserv = CakeDiffserv::kBesteffort;
  Cake q(p);
  std::vector<uint32_t> queues;
  for (uint32_t i = 0; i < 9; ++i) {
    q.enqueue(pkt(f, 16 + i * 1024, 100), Time::zero());
    queues.push_back(q.last_queue());
  }
  for (uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(queues[i] / 8, 2u) << "way " << i;  // set 16..23
  }
  std::vector<uint32_t> first8(queues.begin(), queues.begin() + 8);
  std::sort(first8.begin(), first8.end());
  EXPECT_EQ(std::unique(first8.begin(), first8.end()), first8.end());
  EXPECT_EQ(queues[8], 16u);  // collision: the original queue
  const Cake::TinStats s = q.tin_stats(0);
  EXPECT_EQ(s.way_misses, 8u);  // first packet of each new flow found a free way
  EXPECT_EQ(s.way_collisions, 1u);
  // A second packet of flow 2 finds its tag in another way of the set: an indirect hit.
  q.enqueue(pkt(f, 16 + 2 * 1024, 100), Time::zero());
  EXPECT_EQ(q.last_queue(), queues[2]);
  EXPECT_EQ(q.tin_stats(0).way_indirect_hits, 1u);
}

TEST(Cake, FlowblindIsOneQueue) {
  PacketFactory f;
  Cake::Params p;
  p.flow_mode = Cake::FlowMode::kFlowblind;
  Cake q(p);
  q.enqueue(pkt(f, 1), Time::zero());
  q.enqueue(pkt(f, 2), Time::zero());
  EXPECT_EQ(q.last_queue(), 0u);
  EXPECT_EQ(q.queue_backlog(0, 0), 2u * 1514);
}

// Bytes each host gets through a shaped CAKE when host 1 runs `flows_a` bulk flows and host 2
// runs one, all to host 0 (the upload-from-a-LAN picture of the paper's host isolation).
std::map<uint16_t, uint64_t> host_shares(Cake::FlowMode mode, int flows_a,
                                         bool distinct_dst = false) {
  PacketFactory f;
  Cake::Params p = shaped(10_mbit);
  p.flow_mode = mode;
  p.diffserv = CakeDiffserv::kBesteffort;
  Cake q(p);
  std::map<uint16_t, uint64_t> bytes;
  Time now = Time::zero();
  for (int step = 0; step < 4000; ++step) {
    // Keep every flow backlogged with a few packets.
    for (int i = 0; i < flows_a; ++i) {
      const uint16_t dst = distinct_dst ? static_cast<uint16_t>(10 + i) : 0;
      if (step % 2 == 0) q.enqueue(pkt(f, 1000 + i, 1514, 0, 1, dst), now);
    }
    const uint16_t dst = distinct_dst ? 9 : 0;
    if (step % 2 == 0) q.enqueue(pkt(f, 5000, 1514, 0, 2, dst), now);
    while (auto out = q.dequeue(now)) {
      if (step > 500) bytes[out->src_host] += out->len;
    }
    now = *q.next_ready(now);
  }
  return bytes;
}

TEST(Cake, FlowsModeSharesPerFlow) {
  auto b = host_shares(Cake::FlowMode::kFlows, 4);
  const double share2 = static_cast<double>(b[2]) / (b[1] + b[2]);
  EXPECT_NEAR(share2, 0.2, 0.03);
}

TEST(Cake, DualSrcHostSharesPerSourceHost) {
  auto b = host_shares(Cake::FlowMode::kDualSrcHost, 4);
  const double share2 = static_cast<double>(b[2]) / (b[1] + b[2]);
  EXPECT_NEAR(share2, 0.5, 0.05);
  // Triple isolation divides a flow's quantum by the larger of its source and destination
  // hosts' bulk flow counts: to one common server all five flows share that server fairly...
  auto t = host_shares(Cake::FlowMode::kTripleIsolate, 4);
  EXPECT_NEAR(static_cast<double>(t[2]) / (t[1] + t[2]), 0.2, 0.03);
  // ...to distinct servers the source hosts share fairly.
  auto td = host_shares(Cake::FlowMode::kTripleIsolate, 4, true);
  EXPECT_NEAR(static_cast<double>(td[2]) / (td[1] + td[2]), 0.5, 0.05);
  auto s = host_shares(Cake::FlowMode::kSrcHost, 4);
  EXPECT_NEAR(static_cast<double>(s[2]) / (s[1] + s[2]), 0.5, 0.05);
}

// An unresponsive flow above the shaped rate: COBALT drops, and marks ECN-capable packets.
TEST(Cake, CobaltDropsOrMarksAStandingQueue) {
  PacketFactory f;
  for (uint8_t tos : {uint8_t{0}, uint8_t{2}}) {
    Cake q(shaped(10_mbit));
    Time now = Time::zero();
    for (int i = 0; i < 3000; ++i) {
      q.enqueue(pkt(f, 9, 1514, tos), now);  // 2x the rate
      q.enqueue(pkt(f, 9, 1514, tos), now);
      now += Duration::ns(1'211'200);
      while (q.dequeue(now)) {
      }
    }
    if (tos == 0) {
      EXPECT_GT(q.stats().cobalt_drops, 100u);
      EXPECT_EQ(q.stats().ecn_marked, 0u);
    } else {
      EXPECT_GT(q.stats().ecn_marked, 100u);
      EXPECT_GT(q.tin_stats(1).ecn_marked, 100u);
    }
    testing::expect_stats_identities(q);
  }
}

TEST(Cake, MemoryLimitDropsFromTheLongestQueue) {
  PacketFactory f;
  Cake::Params p;
  p.memlimit = 20 * 2048;  // 20 truesizes of a 1514 B frame (1536 + 576 = 2112) - a bit
  p.flow_mode = Cake::FlowMode::kFlows;
  Cake q(p);
  const Time t = Time::from_ns(1'000'000'000);  // BLUE moves only a target after its timer (0)
  for (int i = 0; i < 30; ++i) {
    q.enqueue(pkt(f, 1), t);
  }
  q.enqueue(pkt(f, 2, 100), t);
  EXPECT_GT(q.stats().drop_overlimit, 0u);
  EXPECT_LE(q.memory_used(), 20u * 2048 + 2112);
  // Flow 2's packet survived: the drops came from the fat flow.
  bool saw2 = false;
  while (auto out = q.dequeue(t)) {
    saw2 |= out->flow_hash == 2;
  }
  EXPECT_TRUE(saw2);
  EXPECT_EQ(q.queue_cobalt(0, 1).p_drop, 1u << 24);  // BLUE rose once (once per target)
  testing::expect_stats_identities(q);
}

TEST(Cake, SplitGsoQueuesSegments) {
  PacketFactory f;
  Packet g = pkt(f, 3, 3 * 1514);
  g.gso_segs = 3;
  g.gso_size = 1514;
  g.dst_host = 4;
  Cake q;
  q.enqueue(std::move(g), Time::zero());
  EXPECT_EQ(q.backlog_packets(), 3u);
  for (int i = 0; i < 3; ++i) {
    auto s = q.dequeue(Time::zero());
    ASSERT_TRUE(s);
    EXPECT_EQ(s->len, 1514u);
    EXPECT_EQ(s->dst_host, 4u);
  }
  Cake::Params p;
  p.split_gso = false;
  Cake whole(p);
  Packet h = pkt(f, 3, 3 * 1514);
  h.gso_segs = 3;
  whole.enqueue(std::move(h), Time::zero());
  EXPECT_EQ(whole.backlog_packets(), 1u);
}

TEST(Cake, WashClearsDscpAfterTinSelection) {
  PacketFactory f;
  Cake::Params p;
  p.wash = true;
  Cake q(p);
  q.enqueue(pkt(f, 1, 100, kEf | 2), Time::zero());
  auto out = q.dequeue(Time::zero());
  EXPECT_EQ(out->tos, 2);                      // ECN kept
  EXPECT_EQ(q.tin_stats(2).sent_packets, 1u);  // Voice
}

// In ingress mode a COBALT drop still spends its time on the shaper (the packet already
// crossed the bottleneck).
TEST(Cake, IngressModeChargesDropsToTheShaper) {
  PacketFactory f;
  auto run = [&](bool ingress) {
    Cake::Params p = shaped(10_mbit);
    p.ingress = ingress;
    Cake q(p);
    Time now = Time::zero();
    uint64_t out = 0;
    for (int i = 0; i < 4000; ++i) {
      q.enqueue(pkt(f, 9), now);
      q.enqueue(pkt(f, 9), now);
      now += Duration::ns(1'211'200);
      while (q.dequeue(now)) ++out;
    }
    return std::pair(out, q.stats().cobalt_drops);
  };
  const auto [out_egress, drops_egress] = run(false);
  const auto [out_ingress, drops_ingress] = run(true);
  EXPECT_GT(drops_ingress, 0u);
  EXPECT_LT(out_ingress + 50, out_egress);  // drops consumed shaper time
}

// "Piece of CAKE" Figure 1: the probability that a new flow meets a hash collision against the
// number of active flows, 1024 queues, plain hashing vs 8-way set-associative. A new flow
// collides in CAKE only when all 8 ways of its set are taken: P = P(Binomial(k, 8/1024) >= 8),
// against 1 - (1 - 1/1024)^k for a plain hash. Measured through the element's way_cols.
double binomial_at_least(int k, double p, int at_least) {
  double below = 0;
  double term = std::pow(1 - p, k);  // P(X = 0)
  for (int i = 0; i < at_least; ++i) {
    below += term;
    term *= (k - i) / static_cast<double>(i + 1) * p / (1 - p);
  }
  return 1 - below;
}

TEST(Cake, CollisionProbabilityIsThePapersFigure1) {
  Cake::Params p;
  p.flow_mode = Cake::FlowMode::kFlows;
  p.diffserv = CakeDiffserv::kBesteffort;
  std::mt19937 rng(42);
  constexpr int kTrials = 600;
  for (int k : {100, 300, 500, 700, 1000}) {
    int collided = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
      Cake q(p);
      PacketFactory f;
      for (int i = 0; i < k; ++i) {
        q.enqueue(pkt(f, static_cast<uint32_t>(rng()), 64), Time::zero());
      }
      const uint64_t before = q.tin_stats(0).way_collisions;
      q.enqueue(pkt(f, static_cast<uint32_t>(rng()), 64), Time::zero());
      collided += q.tin_stats(0).way_collisions > before ? 1 : 0;
    }
    const double measured = static_cast<double>(collided) / kTrials;
    const double set_assoc = binomial_at_least(k, 8.0 / 1024, 8);
    const double plain = 1 - std::pow(1 - 1.0 / 1024, k);
    const double sigma = std::sqrt(set_assoc * (1 - set_assoc) / kTrials);
    EXPECT_NEAR(measured, set_assoc, 4 * sigma + 0.01) << k << " flows";
    EXPECT_LT(measured, plain) << k << " flows";
    std::printf("  %4d flows: set-associative %.4f (analytic %.4f), plain hash %.4f\n", k, measured,
                set_assoc, plain);
  }
}

TEST(Cake, ValidateNamesTheKey) {
  Cake::Params p;
  p.nat = true;
  EXPECT_EQ(p.validate()->key, "nat");
  p = {};
  p.autorate_ingress = true;
  EXPECT_EQ(p.validate()->key, "autorate_ingress");
  p = {};
  p.overhead = 300;
  p.raw = false;
  EXPECT_EQ(p.validate()->key, "overhead");
  p = {};
  p.overhead = 10;
  EXPECT_EQ(p.validate()->key, "raw");
  p = {};
  p.mpu = -1;
  EXPECT_EQ(p.validate()->key, "mpu");
  p = {};
  p.rtt = Duration::zero();
  EXPECT_EQ(p.validate()->key, "rtt");
  EXPECT_FALSE(Cake::Params{}.validate().has_value());
}

TEST(Cake, PropertiesUnshaped) {
  for (auto mode :
       {Cake::FlowMode::kFlows, Cake::FlowMode::kTripleIsolate, Cake::FlowMode::kFlowblind}) {
    Cake::Params p;
    p.flow_mode = mode;
    p.diffserv = CakeDiffserv::kDiffserv4;
    p.memlimit = 64 * 2112;
    Cake q(p);
    testing::PropertyConfig cfg;
    cfg.seed = 11 + static_cast<uint64_t>(mode);
    cfg.flows = 40;
    testing::check_queue_properties(q, cfg);
  }
}

TEST(Cake, PropertiesShaped) {
  for (bool ingress : {false, true}) {
    Cake::Params p = shaped(20_mbit);
    p.ingress = ingress;
    p.diffserv = CakeDiffserv::kDiffserv8;
    p.memlimit = 200 * 2112;
    Cake q(p);
    testing::PropertyConfig cfg;
    cfg.seed = ingress ? 5 : 6;
    cfg.flows = 2000;  // more flows than queues: collisions
    cfg.max_step = 2_ms;
    testing::check_queue_properties(q, cfg);
  }
}

}  // namespace
}  // namespace nicsim::algo
