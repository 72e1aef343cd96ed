// PfifoFast: pins sch_generic.c pfifo_fast behaviour (docs/mechanisms §9.4): prio2band map,
// strict priority between bands, FIFO within a band, per-band vs total txqueuelen tail drop,
// and the ip_tos2prio TOS -> priority mapping.
#include "nicsim/algo/pfifo_fast.h"

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

// Dequeues everything at `t` and returns the ids in order.
std::vector<uint64_t> drain_ids(PfifoFast& q, Time t) {
  std::vector<uint64_t> ids;
  while (auto p = q.dequeue(t)) {
    ids.push_back(p->id);
  }
  return ids;
}

// docs/mechanisms §9.4: txqueuelen 1000, prio2band {1,2,2,2,1,2,0,0,1,...}, per-band rings.
TEST(PfifoFast, DefaultsAreLinux) {
  const PfifoFast::Params p;
  EXPECT_EQ(p.limit, 1000);
  EXPECT_TRUE(p.per_band_limit);
  const std::array<int32_t, 16> linux_map = {1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(p.priomap, linux_map);
  EXPECT_FALSE(p.validate());
}

// docs/mechanisms/qdisc-basics.md §9.4: band = prio2band[priority & 15]; priority 6,7 -> band 0;
// 0,4,8..15 -> band 1; 1,2,3,5 -> band 2. Checked by actually enqueueing one packet per
// priority and looking at which band holds it.
TEST(PfifoFast, PriomapForAllSixteenPriorities) {
  const int expected_band[16] = {1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  for (int prio = 0; prio < 16; ++prio) {
    PfifoFast q;
    PacketFactory f;
    ASSERT_EQ(q.enqueue(f.make(100, 0, static_cast<uint8_t>(prio)), Time::zero()),
              Verdict::kQueued);
    EXPECT_EQ(q.band_of(static_cast<uint8_t>(prio)), expected_band[prio]) << "priority " << prio;
    for (int b = 0; b < PfifoFast::kBands; ++b) {
      EXPECT_EQ(q.band_backlog_packets(b), b == expected_band[prio] ? 1u : 0u)
          << "priority " << prio << " band " << b;
    }
  }
  // skb->priority & TC_PRIO_MAX: priority 22 = 16 + 6 behaves as 6 (band 0); 0x25 as 5 (band 2).
  PfifoFast q;
  EXPECT_EQ(q.band_of(22), 0);
  EXPECT_EQ(q.band_of(0x25), 2);
}

// docs/mechanisms/qdisc-basics.md §9.4: dequeue strictly serves band 0, then 1, then 2.
TEST(PfifoFast, StrictPriorityBetweenBands) {
  PfifoFast q;
  PacketFactory f;
  const Time t = Time::zero();
  q.enqueue(f.make(100, 0, 1), t);  // id 1, band 2
  q.enqueue(f.make(100, 0, 0), t);  // id 2, band 1
  q.enqueue(f.make(100, 0, 6), t);  // id 3, band 0
  q.enqueue(f.make(100, 0, 2), t);  // id 4, band 2
  q.enqueue(f.make(100, 0, 4), t);  // id 5, band 1
  q.enqueue(f.make(100, 0, 7), t);  // id 6, band 0
  ASSERT_NE(q.peek(t), nullptr);
  EXPECT_EQ(q.peek(t)->id, 3u);
  auto first = q.dequeue(t);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->id, 3u);
  // A band-0 packet arriving now goes ahead of everything still queued in bands 1 and 2.
  q.enqueue(f.make(100, 0, 6), t);  // id 7, band 0
  EXPECT_EQ(drain_ids(q, t), (std::vector<uint64_t>{6, 7, 2, 5, 1, 4}));
  EXPECT_EQ(q.next_ready(t), std::nullopt);
  testing::expect_stats_identities(q);
}

// docs/mechanisms §9.4: FIFO inside a band, whatever the priority values mapping to it.
TEST(PfifoFast, FifoWithinBand) {
  PfifoFast q;
  PacketFactory f;
  // Priorities 0, 4, 8, 15, 0 all map to band 1: order must be arrival order.
  for (uint8_t prio : {0, 4, 8, 15, 0}) {
    q.enqueue(f.make(60 + prio, 0, prio), Time::from_ns(prio));
  }
  EXPECT_EQ(q.band_backlog_packets(1), 5u);
  auto a = q.dequeue(Time::from_ns(100));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->id, 1u);
  EXPECT_EQ(a->enqueue_ts, Time::from_ns(0));
  EXPECT_EQ(drain_ids(q, Time::from_ns(100)), (std::vector<uint64_t>{2, 3, 4, 5}));
}

// docs/mechanisms §9.4: since 4.16 each band is its own ring of txqueuelen entries, so a full
// band drops (tail drop) while the other bands still accept: up to 3 x limit in total.
TEST(PfifoFast, PerBandLimitTailDrops) {
  PfifoFast q(PfifoFast::Params{.limit = 3, .per_band_limit = true});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  const Time t = Time::from_ns(5);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(q.enqueue(f.make(1000, 0, 0), t), Verdict::kQueued);  // band 1: ids 1..3
  }
  EXPECT_EQ(q.enqueue(f.make(700, 0, 0), t), Verdict::kDropped);  // id 4: band 1 full
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(q.enqueue(f.make(100, 0, 6), t), Verdict::kQueued);  // band 0: ids 5, 7, 9
    EXPECT_EQ(q.enqueue(f.make(200, 0, 1), t), Verdict::kQueued);  // band 2: ids 6, 8, 10
  }
  EXPECT_EQ(q.backlog_packets(), 9u);  // 3 x limit
  EXPECT_EQ(q.backlog_bytes(), 3u * 1000 + 3 * 100 + 3 * 200);
  EXPECT_EQ(q.enqueue(f.make(100, 0, 7), t), Verdict::kDropped);  // id 11: band 0 full too
  EXPECT_EQ(q.stats().dropped_packets, 2u);
  EXPECT_EQ(q.stats().dropped_bytes, 800u);
  ASSERT_EQ(obs.ids(RecordingObserver::Event::kDrop), (std::vector<uint64_t>{4, 11}));
  for (const auto& e : obs.events) {
    if (e.kind == RecordingObserver::Event::kDrop) {
      EXPECT_EQ(e.reason, DropReason::kQueueFull);
      EXPECT_EQ(e.at, t);
    }
  }
  EXPECT_EQ(obs.count(RecordingObserver::Event::kEnqueue), 9u);
  // Freeing one slot of band 0 lets one more band-0 packet in.
  ASSERT_TRUE(q.dequeue(t));
  EXPECT_EQ(q.enqueue(f.make(100, 0, 6), t), Verdict::kQueued);
  testing::expect_stats_identities(q);
}

// docs/mechanisms §9.4: before 4.16 the TOTAL was capped at txqueuelen: once `limit` packets
// are queued in any bands, even a band-0 packet is tail-dropped (no push-out of lower bands).
TEST(PfifoFast, TotalLimitTailDrops) {
  PfifoFast q(PfifoFast::Params{.limit = 3, .per_band_limit = false});
  PacketFactory f;
  const Time t = Time::zero();
  EXPECT_EQ(q.enqueue(f.make(500, 0, 1), t), Verdict::kQueued);  // band 2
  EXPECT_EQ(q.enqueue(f.make(500, 0, 0), t), Verdict::kQueued);  // band 1
  EXPECT_EQ(q.enqueue(f.make(500, 0, 2), t), Verdict::kQueued);  // band 2
  EXPECT_EQ(q.enqueue(f.make(64, 0, 6), t), Verdict::kDropped);  // band 0, but total is 3
  EXPECT_EQ(q.backlog_packets(), 3u);
  EXPECT_EQ(q.band_backlog_packets(0), 0u);
  EXPECT_EQ(q.stats().dropped_packets, 1u);
  EXPECT_EQ(q.stats().dropped_bytes, 64u);
  auto p = q.dequeue(t);  // band 1 first
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 2u);
  EXPECT_EQ(q.enqueue(f.make(64, 0, 6), t), Verdict::kQueued);  // room for exactly one
  EXPECT_EQ(q.enqueue(f.make(64, 0, 6), t), Verdict::kDropped);
  EXPECT_EQ(drain_ids(q, t), (std::vector<uint64_t>{5, 1, 3}));
  testing::expect_stats_identities(q);
}

// A configured priomap (tc qdisc ... prio priomap ...-style) is honoured.
TEST(PfifoFast, CustomPriomap) {
  PfifoFast::Params params;
  params.priomap.fill(2);
  params.priomap[3] = 0;
  PfifoFast q(params);
  PacketFactory f;
  q.enqueue(f.make(100, 0, 6), Time::zero());  // band 2 under this map
  q.enqueue(f.make(100, 0, 3), Time::zero());  // band 0
  EXPECT_EQ(drain_ids(q, Time::zero()), (std::vector<uint64_t>{2, 1}));
}

// ip_tos2prio (net/ipv4/route.c), indexed by (tos & IPTOS_TOS_MASK) >> 1; together with the
// §9.4 priomap this decides the band of an IP_TOS-marked packet.
TEST(PfifoFast, IpTos2PrioTable) {
  // Index -> TC_PRIO_*: 0..3 best effort (0), 4..7 bulk (2), 8..11 interactive (6),
  // 12..15 interactive bulk (4).
  const uint8_t expected[16] = {0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4};
  for (int idx = 0; idx < 16; ++idx) {
    EXPECT_EQ(rt_tos2priority(static_cast<uint8_t>(idx << 1)), expected[idx]) << "index " << idx;
  }
  // Worked examples (DSCP << 2 | ECN):
  EXPECT_EQ(rt_tos2priority(0x10), 6);  // IPTOS_LOWDELAY -> interactive
  EXPECT_EQ(rt_tos2priority(0x08), 2);  // IPTOS_THROUGHPUT -> bulk
  EXPECT_EQ(rt_tos2priority(0xB8), 4);  // EF (DSCP 46): 0xB8 & 0x1E = 0x18 -> index 12
  EXPECT_EQ(rt_tos2priority(0x20), 0);  // CS1 (DSCP 8): TOS bits 0 -> best effort
  EXPECT_EQ(rt_tos2priority(0x28), 2);  // AF11 (DSCP 10): 0x08 set -> bulk
  EXPECT_EQ(rt_tos2priority(0x12), 6);  // low delay + ECT(0): the ECN bit does not matter
  EXPECT_EQ(rt_tos2priority(0x01), 0);  // ECT(1) alone: bit 0 is outside the mask
  EXPECT_EQ(rt_tos2priority(0x02), 0);  // ECT(0) alone: best effort (modern kernels)
  EXPECT_EQ(rt_tos2priority(0x03), 0);  // CE alone
  // Bands under the default priomap: low delay -> 0, best effort -> 1, bulk -> 2, EF -> 1.
  PfifoFast q;
  EXPECT_EQ(q.band_of(rt_tos2priority(0x10)), 0);
  EXPECT_EQ(q.band_of(rt_tos2priority(0x00)), 1);
  EXPECT_EQ(q.band_of(rt_tos2priority(0x08)), 2);
  EXPECT_EQ(q.band_of(rt_tos2priority(0xB8)), 1);
}

TEST(PfifoFast, NextReadyIsNowWhenBackloggedElseNullopt) {
  PfifoFast q;
  PacketFactory f;
  EXPECT_EQ(q.next_ready(Time::from_ns(7)), std::nullopt);
  EXPECT_EQ(q.peek(Time::from_ns(7)), nullptr);
  q.enqueue(f.make(100), Time::from_ns(7));
  EXPECT_EQ(q.next_ready(Time::from_ns(9)), Time::from_ns(9));
  EXPECT_TRUE(PfifoFast::kCanBypass);
}

TEST(PfifoFast, RejectsBadParams) {
  EXPECT_THROW(PfifoFast(PfifoFast::Params{.limit = 0}), InvalidParams);
  auto err = PfifoFast::Params{.limit = -5}.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->key, "limit");

  PfifoFast::Params too_high;
  too_high.priomap[9] = 3;
  err = too_high.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->key, "priomap");
  EXPECT_NE(err->message.find("entry 9"), std::string::npos) << err->message;
  EXPECT_THROW(PfifoFast{too_high}, InvalidParams);

  PfifoFast::Params negative;
  negative.priomap[0] = -1;
  err = negative.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->key, "priomap");

  EXPECT_FALSE(PfifoFast::Params{.limit = 1}.validate());
}

TEST(PfifoFast, Properties) {
  const PfifoFast::Params sets[] = {
      {.limit = 5, .per_band_limit = true},
      {.limit = 5, .per_band_limit = false},
      {.limit = 1, .per_band_limit = false},
      {.limit = 1000, .per_band_limit = true},
  };
  for (const auto& params : sets) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      SCOPED_TRACE("limit " + std::to_string(params.limit) + " per_band " +
                   std::to_string(params.per_band_limit));
      PfifoFast q(params);
      testing::check_queue_properties(q, {.seed = seed});
    }
  }
}

}  // namespace
}  // namespace nicsim::algo
