// FqCodel: pins sch_fq_codel.c behaviour as described in docs/mechanisms/fq-codel.md §8.5 (with the
// per-flow CoDel of §8.1–8.4), on a manual clock. Unless a test says otherwise, everything
// happens at one instant, so sojourn times are 0 and CoDel never acts; `at(u)` is the Time of
// CoDel unit u (1024 ns).
#include "nicsim/algo/fq_codel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"
#include "nicsim/testing/recording_observer.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;
using testing::RecordingObserver;
using Event = RecordingObserver::Event;
using FlowList = FqCodel::FlowList;

constexpr uint8_t kEct0 = 0x02;

Time at(int64_t units) { return Time::from_ns(units * 1024); }

// The smallest 32-bit hash that classifies into bucket `idx` of `flows`.
uint32_t hash_for(uint32_t idx, uint32_t flows = 1024) {
  return static_cast<uint32_t>(((static_cast<uint64_t>(idx) << 32) + flows - 1) / flows);
}

std::vector<uint64_t> ids_of(const std::vector<std::optional<Packet>>& ps) {
  std::vector<uint64_t> out;
  for (const auto& p : ps) {
    out.push_back(p ? p->id : 0);
  }
  return out;
}

// docs/mechanisms/fq-codel.md §8.5: fq_codel_init defaults.
TEST(FqCodel, Defaults) {
  const FqCodel::Params p;
  EXPECT_EQ(p.limit, 10240);
  EXPECT_EQ(p.flows, 1024);
  EXPECT_EQ(p.memory_limit, 32 << 20);
  EXPECT_EQ(p.drop_batch, 64);
  EXPECT_EQ(p.quantum, 1514);
  EXPECT_EQ(p.target, 5_ms);
  EXPECT_EQ(p.interval, 100_ms);
  EXPECT_EQ(p.mtu, 1514);
  EXPECT_TRUE(p.ecn);
  EXPECT_FALSE(p.ce_threshold.has_value());
  const FqCodel q;
  EXPECT_EQ(q.config().target, 4882u);
  EXPECT_EQ(q.config().interval, 97656u);
  EXPECT_TRUE(q.config().ecn);
  EXPECT_EQ(q.quantum(), 1514);
  EXPECT_EQ(q.memory_limit(), 32u << 20);
  // The modelled truesize: SKB_DATA_ALIGN(len) + 576.
  EXPECT_EQ(q.truesize(1514), 1536u + 576u);
  EXPECT_EQ(q.truesize(64), 64u + 576u);
  EXPECT_EQ(q.truesize(65), 128u + 576u);
}

// docs/mechanisms §8.5 classification: idx = (hash * flows) >> 32; colliding hashes share
// one queue.
TEST(FqCodel, HashToIndex) {
  const FqCodel q;
  EXPECT_EQ(q.classify(0), 0u);
  EXPECT_EQ(q.classify(0x003FFFFF), 0u);
  EXPECT_EQ(q.classify(0x00400000), 1u);
  EXPECT_EQ(q.classify(0x80000000), 512u);
  EXPECT_EQ(q.classify(0xFFFFFFFF), 1023u);
  const FqCodel q1000(FqCodel::Params{.flows = 1000});
  EXPECT_EQ(q1000.classify(4294967), 0u);  // 4294967000 < 2^32
  EXPECT_EQ(q1000.classify(4294968), 1u);  // 4294968000 >= 2^32
  EXPECT_EQ(q1000.classify(0x80000000), 500u);
  EXPECT_EQ(q1000.classify(0xFFFFFFFF), 999u);
  for (uint32_t i : {0u, 1u, 499u, 998u, 999u}) {
    EXPECT_EQ(q1000.classify(hash_for(i, 1000)), i);
  }

  FqCodel c;
  PacketFactory f;
  c.enqueue(f.make(100, 0x00000001), at(0));
  c.enqueue(f.make(100, 0x00300000), at(0));  // collides with the first in bucket 0
  c.enqueue(f.make(100, 0x00400000), at(0));
  EXPECT_EQ(c.flow_backlog_packets(0), 2u);
  EXPECT_EQ(c.flow_backlog_bytes(0), 200u);
  EXPECT_EQ(c.flow_backlog_packets(1), 1u);
  EXPECT_EQ(c.stats().new_flow_count, 2u);
}

// docs/mechanisms/fq-codel.md §8.5 DRR++ with quantum 1514: flow A (bucket 1) sends 1500 B packets,
// flow B (bucket 2) 500 B packets, both backlogged. By hand:
//   A deficit 1514: A1 (14), A2 (-1486); A <= 0: +1514 = 28, to old_flows.
//   B 1514: B1 (1014) B2 (514) B3 (14) B4 (-486); B: 1028, to old. A 28: A3 (-1472);
//   A: 42, to tail; B 1028: B5 (528) B6 (28) B7 (-472); B: 1042; A 42: A4 (-1458); ...
// so the order starts AABBBBABBBABBBAB... and bytes served stay within 3000 of each other.
TEST(FqCodel, DrrByteFairnessAndQuantumAccounting) {
  FqCodel q;
  PacketFactory f;
  for (int i = 0; i < 200; ++i) {
    q.enqueue(f.make(1500, hash_for(1)), at(0));
  }
  for (int i = 0; i < 600; ++i) {
    q.enqueue(f.make(500, hash_for(2)), at(0));
  }
  struct Step {
    char flow;
    int32_t deficit_a;
    int32_t deficit_b;
  };
  const std::vector<Step> expected = {{'A', 14, 1514},    {'A', -1486, 1514}, {'B', 28, 1014},
                                      {'B', 28, 514},     {'B', 28, 14},      {'B', 28, -486},
                                      {'A', -1472, 1028}, {'B', 42, 528},     {'B', 42, 28},
                                      {'B', 42, -472},    {'A', -1458, 1042}, {'B', 56, 542}};
  std::string order;
  uint64_t bytes_a = 0;
  uint64_t bytes_b = 0;
  uint64_t worst = 0;
  for (int n = 0; n < 600; ++n) {
    auto p = q.dequeue(at(0));
    ASSERT_TRUE(p);
    const char flow = p->len == 1500 ? 'A' : 'B';
    order.push_back(flow);
    (flow == 'A' ? bytes_a : bytes_b) += p->len;
    worst = std::max<uint64_t>(worst, bytes_a > bytes_b ? bytes_a - bytes_b : bytes_b - bytes_a);
    if (n < static_cast<int>(expected.size())) {
      EXPECT_EQ(flow, expected[n].flow) << "dequeue " << n;
      EXPECT_EQ(q.flow_deficit(1), expected[n].deficit_a) << "dequeue " << n;
      EXPECT_EQ(q.flow_deficit(2), expected[n].deficit_b) << "dequeue " << n;
    }
  }
  EXPECT_EQ(order.substr(0, 20), "AABBBBABBBABBBABBBAB");
  EXPECT_EQ(worst, 3000u);  // A1 + A2 before B's first turn
  EXPECT_EQ(bytes_a, 226'500u);
  EXPECT_EQ(bytes_b, 224'500u);
  EXPECT_EQ(q.stats().dropped_packets, 0u);
}

// docs/mechanisms §8.5: a quantum below 256 is raised to 256 (fq_codel_change); a flow that
// becomes active starts with deficit = quantum.
TEST(FqCodel, QuantumClampTo256) {
  FqCodel q(FqCodel::Params{.quantum = 100});
  EXPECT_EQ(q.quantum(), 256);
  EXPECT_EQ(FqCodel(FqCodel::Params{.quantum = 255}).quantum(), 256);
  EXPECT_EQ(FqCodel(FqCodel::Params{.quantum = 256}).quantum(), 256);
  EXPECT_EQ(FqCodel(FqCodel::Params{.quantum = 1 << 20}).quantum(), 1 << 20);
  PacketFactory f;
  q.enqueue(f.make(200, hash_for(7)), at(0));
  q.enqueue(f.make(200, hash_for(7)), at(0));
  q.enqueue(f.make(200, hash_for(7)), at(0));
  EXPECT_EQ(q.flow_deficit(7), 256);
  ASSERT_TRUE(q.dequeue(at(0)));
  EXPECT_EQ(q.flow_deficit(7), 56);
  ASSERT_TRUE(q.dequeue(at(0)));
  EXPECT_EQ(q.flow_deficit(7), -144);
  ASSERT_TRUE(q.dequeue(at(0)));  // -144 + 256 = 112, to old_flows, then 112 - 200
  EXPECT_EQ(q.flow_deficit(7), -88);
  EXPECT_EQ(q.flow_list(7), FlowList::kOld);
}

// docs/mechanisms §8.5 dequeue step 2: the turn ends at deficit <= 0, including exactly 0.
// Two flows of 757 B packets (2 x 757 = 1514 = quantum): A A B B A A B B ...
TEST(FqCodel, DeficitExactlyZeroEndsTheTurn) {
  FqCodel q;
  PacketFactory f;
  for (int i = 0; i < 6; ++i) {
    q.enqueue(f.make(757, hash_for(1)), at(0));  // ids 1..6
  }
  for (int i = 0; i < 6; ++i) {
    q.enqueue(f.make(757, hash_for(2)), at(0));  // ids 7..12
  }
  std::vector<std::optional<Packet>> out;
  for (int i = 0; i < 8; ++i) {
    out.push_back(q.dequeue(at(0)));
  }
  EXPECT_EQ(ids_of(out), (std::vector<uint64_t>{1, 2, 7, 8, 3, 4, 9, 10}));
  EXPECT_EQ(q.flow_deficit(1), 1514);  // 0 at the end of its turn, refilled by the next visit
  EXPECT_EQ(q.flow_deficit(2), 0);     // B10 left it at exactly 0; its turn is over
}

// Bulk flows A (bucket 1) and B (bucket 2), twenty 300 B packets each (ids 1..20, 21..40),
// served until both are in old_flows: A1..A6 (deficit 1514 -> -286), B1..B6, A7 (A: 928,
// B: 1228; old_flows = [A, B]).
void make_two_bulk_flows_old(FqCodel& q, PacketFactory& f) {
  for (int i = 0; i < 20; ++i) {
    q.enqueue(f.make(300, hash_for(1)), at(0));
  }
  for (int i = 0; i < 20; ++i) {
    q.enqueue(f.make(300, hash_for(2)), at(0));
  }
  std::vector<std::optional<Packet>> out;
  for (int i = 0; i < 13; ++i) {
    out.push_back(q.dequeue(at(0)));
  }
  ASSERT_EQ(ids_of(out), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 21, 22, 23, 24, 25, 26, 7}));
  ASSERT_EQ(q.old_flows(), (std::vector<uint32_t>{1, 2}));
  ASSERT_TRUE(q.new_flows().empty());
  ASSERT_EQ(q.flow_deficit(1), 928);
  ASSERT_EQ(q.flow_deficit(2), 1228);
}

// docs/mechanisms §8.5 consequences: a sparse flow arriving at an empty flow queue joins
// new_flows and is served before the backlogged flows in old_flows.
TEST(FqCodel, SparseFlowServedBeforeBulkFlows) {
  FqCodel q;
  PacketFactory f;
  make_two_bulk_flows_old(q, f);
  q.enqueue(f.make(100, hash_for(3)), at(0));  // id 41
  EXPECT_EQ(q.flow_list(3), FlowList::kNew);
  EXPECT_EQ(q.flow_deficit(3), 1514);
  EXPECT_EQ(q.stats().new_flow_count, 3u);
  auto p = q.dequeue(at(0));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 41u);
  EXPECT_EQ(q.flow_deficit(3), 1414);
}

// docs/mechanisms/fq-codel.md §8.5 dequeue step 4: when the sparse flow empties while it heads
// new_flows and old_flows is non-empty, it moves to the tail of old_flows instead of leaving
// the lists; its next packet then waits its DRR turn behind A and B (A8..A11 with A's
// remaining 628 bytes, then B7..B11 with 1228 bytes) — no second new-flow priority.
TEST(FqCodel, EmptiedNewFlowMovesToOldFlows) {
  FqCodel q;
  PacketFactory f;
  make_two_bulk_flows_old(q, f);
  q.enqueue(f.make(100, hash_for(3)), at(0));  // id 41
  ASSERT_EQ(q.dequeue(at(0))->id, 41u);
  auto p = q.dequeue(at(0));  // S is empty: moved to old_flows, then A8 from old_flows
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 8u);
  EXPECT_EQ(q.flow_list(3), FlowList::kOld);
  EXPECT_EQ(q.old_flows(), (std::vector<uint32_t>{1, 2, 3}));

  q.enqueue(f.make(100, hash_for(3)), at(0));  // id 42: S is still listed, not new again
  EXPECT_EQ(q.stats().new_flow_count, 3u);
  EXPECT_EQ(q.flow_list(3), FlowList::kOld);
  std::vector<std::optional<Packet>> out;
  do {
    out.push_back(q.dequeue(at(0)));
  } while (out.back() && out.back()->id != 42 && out.size() < 30);
  EXPECT_EQ(ids_of(out), (std::vector<uint64_t>{9, 10, 11, 27, 28, 29, 30, 31, 42}));
}

// The other branch of step 4: with old_flows empty the emptied flow leaves the lists, and its
// next packet makes it a new flow again (new_flow_count 2, deficit reset to quantum).
TEST(FqCodel, EmptiedNewFlowLeavesListsWhenOldFlowsEmpty) {
  FqCodel q;
  PacketFactory f;
  q.enqueue(f.make(100, hash_for(3)), at(0));
  ASSERT_EQ(q.dequeue(at(0))->id, 1u);
  EXPECT_EQ(q.flow_list(3), FlowList::kNew);  // still heads new_flows until the next dequeue
  EXPECT_FALSE(q.dequeue(at(0)));
  EXPECT_EQ(q.flow_list(3), FlowList::kNone);
  q.enqueue(f.make(100, hash_for(3)), at(0));
  EXPECT_EQ(q.flow_list(3), FlowList::kNew);
  EXPECT_EQ(q.flow_deficit(3), 1514);
  EXPECT_EQ(q.stats().new_flow_count, 2u);
  EXPECT_EQ(q.dequeue(at(0))->id, 2u);
}

// docs/mechanisms/fq-codel.md §8.5 enqueue step 5: over the packet limit, the fattest flow (first
// strictly largest backlog) loses packets from its head until half its bytes or drop_batch
// packets are gone. limit 10: A (bucket 1) 6 x 1000 B, B (bucket 2) 4 x 1000 B, then C
// arrives: qlen 11 > 10; A is fattest (6000), threshold 3000 -> A's ids 1, 2, 3 dropped
// (1000, 2000, 3000 >= 3000). C is not A: kQueued. A's CoDel count += 3.
TEST(FqCodel, OverlimitDropsBatchFromFattestFlowHead) {
  FqCodel q(FqCodel::Params{.limit = 10});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(q.enqueue(f.make(1000, hash_for(1)), at(0)), Verdict::kQueued);
  }
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(q.enqueue(f.make(1000, hash_for(2)), at(0)), Verdict::kQueued);
  }
  EXPECT_EQ(q.enqueue(f.make(1000, hash_for(3)), at(0)), Verdict::kQueued);
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{1, 2, 3}));
  for (const Event& e : obs.events) {
    if (e.kind == Event::kDrop) {
      EXPECT_EQ(e.reason, DropReason::kOverlimit);
    }
  }
  EXPECT_EQ(q.flow_vars(1).count, 3u);  // "increase signal strength"
  EXPECT_EQ(q.flow_vars(2).count, 0u);
  EXPECT_EQ(q.flow_backlog_bytes(1), 3000u);
  EXPECT_EQ(q.backlog_packets(), 8u);
  EXPECT_EQ(q.stats().drop_overlimit, 3u);
  EXPECT_EQ(q.stats().drop_overmemory, 0u);
  EXPECT_EQ(q.memory_usage(), 8 * q.truesize(1000));
  testing::expect_stats_identities(q);
}

// drop_batch caps the batch: the same case with drop_batch 2 drops ids 1 and 2 only.
TEST(FqCodel, DropBatchCapsTheBatch) {
  FqCodel q(FqCodel::Params{.limit = 10, .drop_batch = 2});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  for (int i = 0; i < 6; ++i) {
    q.enqueue(f.make(1000, hash_for(1)), at(0));
  }
  for (int i = 0; i < 4; ++i) {
    q.enqueue(f.make(1000, hash_for(2)), at(0));
  }
  q.enqueue(f.make(1000, hash_for(3)), at(0));
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(q.flow_vars(1).count, 2u);
}

// Byte threshold with uneven sizes: A holds 200, 200, 200, 5000 (5600 B), threshold 2800:
// the batch stops only after the 5000 B packet (600 < 2800, 5600 >= 2800): 4 drops.
// Ties: bucket 5 and bucket 2 both hold 5600 B — the scan finds bucket 2 first, so it is the
// victim even though bucket 5 filled first.
TEST(FqCodel, FattestFlowByBytesFirstStrictlyLargestWins) {
  FqCodel q(FqCodel::Params{.limit = 8});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  for (uint32_t bucket : {5u, 2u}) {
    for (uint32_t len : {200u, 200u, 200u, 5000u}) {
      q.enqueue(f.make(len, hash_for(bucket)), at(0));
    }
  }
  EXPECT_EQ(q.enqueue(f.make(100, hash_for(9)), at(0)), Verdict::kQueued);
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{5, 6, 7, 8}));
  EXPECT_EQ(q.flow_backlog_packets(2), 0u);
  EXPECT_EQ(q.flow_backlog_packets(5), 4u);
  EXPECT_EQ(q.flow_vars(2).count, 4u);
}

// docs/mechanisms/fq-codel.md §8.5: if the victim flow is the arriving packet's flow, NET_XMIT_CN
// (kCongested); the arrival itself is kept (head drop). limit 4, A has 4 x 1000 B, a 5th
// arrives: A (5000 B) is fattest, threshold 2500: ids 1, 2, 3 dropped; 4 and 5 remain.
TEST(FqCodel, CongestedWhenOwnFlowIsVictim) {
  FqCodel q(FqCodel::Params{.limit = 4});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  for (int i = 0; i < 4; ++i) {
    q.enqueue(f.make(1000, hash_for(1)), at(0));
  }
  EXPECT_EQ(q.enqueue(f.make(1000, hash_for(1)), at(0)), Verdict::kCongested);
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(q.dequeue(at(0))->id, 4u);
  EXPECT_EQ(q.dequeue(at(0))->id, 5u);
  testing::expect_stats_identities(q);
}

// Deviation (documented): when the batch takes the arriving packet itself — it is the only
// packet of the fattest flow — the verdict is kDropped (Linux returns NET_XMIT_CN).
// limit 1: A holds 100 B; B's 1000 B arrival makes B the fattest flow with one packet.
TEST(FqCodel, DroppedWhenTheArrivalItselfIsHeadDropped) {
  FqCodel q(FqCodel::Params{.limit = 1});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  q.enqueue(f.make(100, hash_for(1)), at(0));
  EXPECT_EQ(q.enqueue(f.make(1000, hash_for(2)), at(0)), Verdict::kDropped);
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{2}));
  EXPECT_EQ(q.backlog_packets(), 1u);
  testing::expect_stats_identities(q);
}

// docs/mechanisms §8.5 memory limit: memory_usage (modelled truesize, 1000 B -> 1024 + 576
// = 1600) above memory_limit triggers the same fattest-flow drop, counted as overmemory.
// memory_limit 5000: A holds 3 x 1000 B (4800); B's arrival makes 6400 > 5000: A (3000 B)
// loses 2 packets (1000, 2000 >= 1500); memory 6400 - 3200 = 3200.
TEST(FqCodel, MemoryLimitDropsWithOvermemory) {
  FqCodel q(FqCodel::Params{.memory_limit = 5000});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(q.enqueue(f.make(1000, hash_for(1)), at(0)), Verdict::kQueued);
  }
  EXPECT_EQ(q.memory_usage(), 4800u);
  EXPECT_EQ(q.enqueue(f.make(1000, hash_for(2)), at(0)), Verdict::kQueued);
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(obs.events.back().reason, DropReason::kOvermemory);
  EXPECT_EQ(q.memory_usage(), 3200u);
  EXPECT_EQ(q.stats().drop_overmemory, 2u);
  EXPECT_EQ(q.stats().drop_overlimit, 2u);
  EXPECT_EQ(q.flow_vars(1).count, 2u);
  // Dequeue releases memory; memory_limit above 2^31 is clamped like fq_codel_change.
  ASSERT_TRUE(q.dequeue(at(0)));
  EXPECT_EQ(q.memory_usage(), 1600u);
  EXPECT_EQ(FqCodel(FqCodel::Params{.memory_limit = int64_t{1} << 40}).memory_limit(),
            uint64_t{1} << 31);
  // With truesize_overhead 0 the model is SKB_DATA_ALIGN(len) alone.
  EXPECT_EQ(FqCodel(FqCodel::Params{.truesize_overhead = 0}).truesize(1000), 1024u);
}

// docs/mechanisms §8.3 + §8.5: fq_codel passes the WHOLE qdisc's backlog to should_drop.
// A (bucket 1) holds 2 x 1000 B and B (bucket 2) 5 x 1000 B, all at t = 0. A1 leaves at
// 4882 units: A's own backlog is then 1000 <= mtu, but the qdisc's is 6000, so CoDel starts
// A's interval (first_above_time 102538). A2 at 102539 is dropped (ECN-incapable), A is
// empty, and B1 is delivered. With a per-flow backlog A2 would have been delivered.
TEST(FqCodel, ShouldDropSeesWholeQdiscBacklog) {
  FqCodel q;
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  q.enqueue(f.make(1000, hash_for(1)), at(0));
  q.enqueue(f.make(1000, hash_for(1)), at(0));
  for (int i = 0; i < 5; ++i) {
    q.enqueue(f.make(1000, hash_for(2)), at(0));
  }
  EXPECT_EQ(q.dequeue(at(4882))->id, 1u);
  EXPECT_EQ(q.flow_vars(1).first_above_time, 102'538u);
  auto p = q.dequeue(at(102'539));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 3u);
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{2}));
  EXPECT_EQ(obs.events.back().kind, Event::kDequeue);
  EXPECT_EQ(q.stats().codel.drop_count, 1u);
  // The entering branch set dropping even though the flow is now empty; it stays set until
  // CoDel next runs on this flow (kernel behaviour).
  EXPECT_TRUE(q.flow_vars(1).dropping);
  EXPECT_EQ(q.flow_list(1), FlowList::kNone);  // old_flows was empty: A left the lists
  testing::expect_stats_identities(q);
}

// fq_codel turns ECN on by default: the same case with ECT packets marks A2 and delivers it.
TEST(FqCodel, EcnOnByDefaultMarksInsteadOfDropping) {
  FqCodel q;
  PacketFactory f;
  q.enqueue(f.make(1000, hash_for(1), 0, kEct0), at(0));
  q.enqueue(f.make(1000, hash_for(1), 0, kEct0), at(0));
  for (int i = 0; i < 5; ++i) {
    q.enqueue(f.make(1000, hash_for(2), 0, kEct0), at(0));
  }
  ASSERT_TRUE(q.dequeue(at(4882)));
  auto p = q.dequeue(at(102'539));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 2u);
  EXPECT_EQ(p->ecn(), Ecn::kCe);
  EXPECT_EQ(q.stats().codel.ecn_mark, 1u);
  EXPECT_EQ(q.stats().ecn_marked, 1u);
  EXPECT_EQ(q.stats().dropped_packets, 0u);
}

// The overload path's count += i meets the CoDel state machine (kernel behaviour, pinned):
// a flow that never dropped has rec_inv_sqrt = 0 (codel_vars_init zeroes it). limit 20: 21
// packets of A at t = 0 -> ids 1..11 head-dropped (11000 >= 10500), count 11. Ten more
// (ids 22..31). 12 leaves at 4882; at 102539 CoDel enters dropping with delta = 11 - 0 > 1
// and now - drop_next(0) < 16 intervals, so count = 11 and the Newton step from 0 stays 0:
// the control-law spacing is 0. Id 13 is dropped, 14 delivered; the next dequeue at the same
// instant drops 15..29 in one loop (drop_next never advances) until the backlog after the
// dequeue is <= mtu (only 31 left), and delivers 30.
TEST(FqCodel, OverloadCountBumpThenCodelWithZeroRecInvSqrt) {
  FqCodel q(FqCodel::Params{.limit = 20});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  for (int i = 0; i < 21; ++i) {
    q.enqueue(f.make(1000, hash_for(1)), at(0));
  }
  EXPECT_EQ(q.flow_vars(1).count, 11u);
  EXPECT_EQ(q.flow_vars(1).rec_inv_sqrt, 0u);
  for (int i = 0; i < 10; ++i) {
    q.enqueue(f.make(1000, hash_for(1)), at(0));
  }
  EXPECT_EQ(q.dequeue(at(4882))->id, 12u);
  EXPECT_EQ(q.dequeue(at(102'539))->id, 14u);
  EXPECT_EQ(q.flow_vars(1).count, 11u);
  EXPECT_EQ(q.flow_vars(1).lastcount, 11u);
  EXPECT_EQ(q.flow_vars(1).rec_inv_sqrt, 0u);
  EXPECT_EQ(q.flow_vars(1).drop_next, 102'539u);
  EXPECT_EQ(q.dequeue(at(102'539))->id, 30u);
  EXPECT_EQ(q.flow_vars(1).count, 26u);
  EXPECT_FALSE(q.flow_vars(1).dropping);
  EXPECT_EQ(q.stats().codel.drop_count, 16u);  // 13, 15..29
  EXPECT_EQ(q.stats().drop_overlimit, 11u);
  EXPECT_EQ(q.dequeue(at(102'539))->id, 31u);
  testing::expect_stats_identities(q);
}

// peek runs DRR + CoDel once and stashes the packet; the stash counts against `limit` but no
// longer in its flow (so the overload scan does not see it), as with qdisc_peek_dequeued.
// limit 2: A1, A2 queued; peek stashes A1; A3 arrives: qlen 3 > 2; A's flow holds A2 + A3
// (2000 B), threshold 1000: A2 dropped; kCongested; then A1 (the stash) and A3 leave.
TEST(FqCodel, PeekStashCountsAgainstLimit) {
  FqCodel q(FqCodel::Params{.limit = 2});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  q.enqueue(f.make(1000, hash_for(1)), at(0));
  q.enqueue(f.make(1000, hash_for(1)), at(0));
  ASSERT_EQ(q.peek(at(0))->id, 1u);
  EXPECT_EQ(q.peek(at(0))->id, 1u);
  EXPECT_EQ(q.backlog_packets(), 2u);
  EXPECT_EQ(q.backlog_bytes(), 2000u);
  EXPECT_EQ(q.flow_backlog_bytes(1), 1000u);
  EXPECT_EQ(q.enqueue(f.make(1000, hash_for(1)), at(0)), Verdict::kCongested);
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{2}));
  EXPECT_EQ(q.dequeue(at(0))->id, 1u);
  EXPECT_EQ(q.dequeue(at(0))->id, 3u);
  EXPECT_FALSE(q.dequeue(at(0)));
  EXPECT_EQ(q.next_ready(at(0)), std::nullopt);
  testing::expect_stats_identities(q);
}

TEST(FqCodel, PerFlowStateIsSmallAndFlowsAreIndependent) {
  // sizeof(Flow) <= 64 is a static_assert in fq_codel.h; CodelVars is 24 bytes of it.
  static_assert(sizeof(CodelVars) == 24);
  FqCodel q(FqCodel::Params{.flows = 1});
  PacketFactory f;
  q.enqueue(f.make(100, 0xFFFFFFFF), at(0));
  q.enqueue(f.make(100, 0), at(0));
  EXPECT_EQ(q.flow_backlog_packets(0), 2u);  // one flow: every hash maps to bucket 0
}

TEST(FqCodel, RejectsBadParams) {
  auto key_of = [](const FqCodel::Params& p) {
    auto err = p.validate();
    return err ? err->key : std::string();
  };
  EXPECT_EQ(key_of(FqCodel::Params{}), "");
  EXPECT_EQ(key_of(FqCodel::Params{.limit = 0}), "limit");
  EXPECT_EQ(key_of(FqCodel::Params{.limit = -1}), "limit");
  EXPECT_EQ(key_of(FqCodel::Params{.flows = 0}), "flows");
  EXPECT_EQ(key_of(FqCodel::Params{.flows = 65537}), "flows");
  EXPECT_EQ(key_of(FqCodel::Params{.flows = 65536}), "");
  EXPECT_EQ(key_of(FqCodel::Params{.memory_limit = 0}), "memory_limit");
  EXPECT_EQ(key_of(FqCodel::Params{.drop_batch = 0}), "drop_batch");
  EXPECT_EQ(key_of(FqCodel::Params{.quantum = 0}), "quantum");
  EXPECT_EQ(key_of(FqCodel::Params{.quantum = -1514}), "quantum");
  EXPECT_EQ(key_of(FqCodel::Params{.quantum = (1 << 20) + 1}), "quantum");
  EXPECT_EQ(key_of(FqCodel::Params{.quantum = 1}), "");  // raised to 256
  EXPECT_EQ(key_of(FqCodel::Params{.target = Duration::zero()}), "target");
  EXPECT_EQ(key_of(FqCodel::Params{.interval = -100_ms}), "interval");
  EXPECT_EQ(key_of(FqCodel::Params{.mtu = -1}), "mtu");
  EXPECT_EQ(key_of(FqCodel::Params{.ce_threshold = -1_us}), "ce_threshold");
  EXPECT_EQ(key_of(FqCodel::Params{.truesize_overhead = -1}), "truesize_overhead");
  try {
    FqCodel q(FqCodel::Params{.quantum = 0});
    FAIL() << "no exception";
  } catch (const InvalidParams& e) {
    EXPECT_EQ(e.error().key, "quantum");
    EXPECT_EQ(std::string(e.what()), "quantum: must be >= 1 byte, got 0");
  }
  EXPECT_THROW(FqCodel(FqCodel::Params{.drop_batch = 0}), InvalidParams);
}

TEST(FqCodel, Properties) {
  const std::vector<FqCodel::Params> sets = {
      FqCodel::Params{},
      // Small packet limit and few flows: frequent fattest-flow drops.
      FqCodel::Params{.limit = 30, .flows = 8, .drop_batch = 4},
      // Memory limit below the packet limit.
      FqCodel::Params{.limit = 1000, .flows = 16, .memory_limit = 20'000},
      // Tiny target: CoDel drops (ECN off) ...
      FqCodel::Params{.limit = 200, .flows = 4, .target = 1_us, .interval = 300_us, .ecn = false},
      // ... and marks (ECN on), with a CE threshold and a small quantum.
      FqCodel::Params{.limit = 200,
                      .flows = 4,
                      .quantum = 300,
                      .target = 1_us,
                      .interval = 300_us,
                      .ce_threshold = 20_us},
      FqCodel::Params{
          .limit = 50, .flows = 1, .drop_batch = 1, .target = 10_us, .interval = 1_ms, .mtu = 0},
  };
  for (size_t i = 0; i < sets.size(); ++i) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE("param set " + std::to_string(i));
      FqCodel q(sets[i]);
      testing::check_queue_properties(q, {.seed = seed});
      if (i == 1 || i == 2) {
        EXPECT_GT(q.stats().drop_overlimit, 0u);
      }
      if (i == 2) {
        EXPECT_GT(q.stats().drop_overmemory, 0u);
      }
      if (i == 3) {
        EXPECT_GT(q.stats().codel.drop_count, 0u);
      }
      if (i == 4) {
        EXPECT_GT(q.stats().codel.ecn_mark, 0u);
        EXPECT_GT(q.stats().codel.ce_mark, 0u);
      }
    }
  }
}

}  // namespace
}  // namespace nicsim::algo
