// FqPie: pins Linux net/sched/sch_fq_pie.c (torvalds/linux at 0a9e86dc1f0f) on a manual
// clock: flow hashing, DRR with the new-flows list, per-flow PIE on the flow's own backlog
// and delay, the ecn_prob threshold, the memory counter, and the per-flow timer.
#include "nicsim/algo/fq_pie.h"

#include <gtest/gtest.h>

#include <vector>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;

constexpr uint32_t kFlowA = 0x10000000;  // bucket 64 of 1024
constexpr uint32_t kFlowB = 0x90000000;  // bucket 576
constexpr uint8_t kEct0 = 0x02;

Time at_ms(int64_t ms) { return Time::zero() + Duration::ms(ms); }

TEST(FqPie, DefaultsAndClassification) {
  const FqPie::Params p;
  EXPECT_EQ(p.limit, 10240);
  EXPECT_EQ(p.flows, 1024);
  EXPECT_EQ(p.memory_limit, 32 << 20);
  EXPECT_EQ(p.quantum, 1514);
  EXPECT_EQ(p.ecn_prob, 10);
  EXPECT_EQ(p.target, 15_ms);
  EXPECT_EQ(p.tupdate, 15_ms);
  const FqPie q;
  EXPECT_EQ(q.classify(kFlowA), 64u);
  EXPECT_EQ(q.classify(kFlowB), 576u);
  EXPECT_EQ(q.classify(0xFFFFFFFF), 1023u);
  EXPECT_EQ(q.config().target, 234375u);
}

// DRR++ as fq_codel: a new flow gets a quantum and priority; a sparse flow arriving behind a
// backlogged one is served first; deficits follow the packet sizes.
TEST(FqPie, NewFlowPriorityAndDeficits) {
  PacketFactory pf;
  FqPie q;
  for (int i = 0; i < 4; ++i) {
    q.enqueue(pf.make(1000, kFlowA), at_ms(0));
  }
  EXPECT_EQ(q.new_flows_len(), 1u);
  EXPECT_EQ(q.stats().new_flow_count, 1u);
  ASSERT_TRUE(q.dequeue(at_ms(0)));  // A: deficit 1514 - 1000
  EXPECT_EQ(q.flow_deficit(64), 514);
  ASSERT_TRUE(q.dequeue(at_ms(0)));  // A again: 514 - 1000 = -486
  EXPECT_EQ(q.flow_deficit(64), -486);
  q.enqueue(pf.make(100, kFlowB), at_ms(1));
  // A's deficit is spent: it moves to old_flows with +quantum; B (new) goes first.
  std::optional<Packet> p = q.dequeue(at_ms(1));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->flow_hash, kFlowB);
  EXPECT_EQ(q.flow_deficit(64), 1028);
  EXPECT_EQ(q.flow_list(64), FqPie::FlowList::kOld);
  EXPECT_EQ(q.flow_backlog(64), 2000u);
  EXPECT_EQ(q.flow_backlog(576), 0u);
}

// PIE runs per flow: the flow with the standing queue gets a probability, the sparse flow
// keeps p = 0, and only the fat flow's packets are dropped.
TEST(FqPie, PerFlowControllerIsolatesTheSparseFlow) {
  PacketFactory pf;
  FqPie q(FqPie::Params{.limit = 100'000});
  Time now = Time::zero();
  uint64_t sparse_drops = 0;
  uint64_t fat_drops = 0;
  // Service 1 packet per 120 us; the fat flow offers 2 per 120 us, the sparse one 1 per 10 ms.
  for (int step = 0; step < 100'000; ++step) {
    now += 120_us;
    for (int k = 0; k < 2; ++k) {
      if (q.enqueue(pf.make(1500, kFlowA), now) == Verdict::kDropped) {
        ++fat_drops;
      }
    }
    if (step % 83 == 0 && q.enqueue(pf.make(200, kFlowB), now) == Verdict::kDropped) {
      ++sparse_drops;
    }
    q.dequeue(now);
  }
  EXPECT_GT(fat_drops, 50'000u);
  EXPECT_EQ(sparse_drops, 0u);
  EXPECT_GT(q.flow_vars(64).prob, kPieMaxProb / 4);
  EXPECT_EQ(q.flow_vars(576).prob, 0u);
  testing::expect_stats_identities(q);
}

// The timer updates every flow with its own backlog and delay: first at 500 ms.
TEST(FqPie, TimerUpdatesEachFlow) {
  PacketFactory pf;
  FqPie q;
  for (int i = 0; i < 10; ++i) {
    q.enqueue(pf.make(1514, kFlowA), at_ms(0));  // one quantum each: A yields after one
  }
  q.enqueue(pf.make(1514, kFlowB), at_ms(0));
  EXPECT_EQ(q.next_update(), at_ms(500));
  // Dequeue A's head at 30 ms (sojourn 30 ms), then B's (sojourn 30 ms, B now empty).
  std::optional<Packet> a = q.dequeue(at_ms(30));
  std::optional<Packet> b = q.dequeue(at_ms(30));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->flow_hash, kFlowA);
  EXPECT_EQ(b->flow_hash, kFlowB);
  EXPECT_EQ(q.flow_vars(64).qdelay, 468750u);
  EXPECT_EQ(q.flow_vars(576).qdelay, 0u);        // empty after the dequeue
  q.enqueue(pf.make(1500, kFlowA), at_ms(500));  // the first update runs now
  EXPECT_EQ(q.next_update(), at_ms(515));
  // A: one update from p = 0 with qdelay 30 ms (pie_test: 1385384062500); B: no delay.
  EXPECT_EQ(q.flow_vars(64).prob, 281474ull * (468750 - 234375) + 2814749ull * 468750);
  EXPECT_EQ(q.flow_vars(576).prob, 0u);
}

// ECN marks while the flow's p <= ecn_prob %; memory over the limit is counted, not dropped.
TEST(FqPie, EcnProbThresholdAndMemoryCounter) {
  PacketFactory pf;
  FqPie q(FqPie::Params{.ecn_prob = 0, .ecn = true});
  // ecn_prob 0: marking needs p == 0, which never reaches pie_drop_early's drop path; so every
  // early decision drops even ECN-capable packets.
  Time now = Time::zero();
  for (int step = 0; step < 20'000; ++step) {
    now += 120_us;
    q.enqueue(pf.make(1500, kFlowA, 0, kEct0), now);
    q.enqueue(pf.make(1500, kFlowA, 0, kEct0), now);
    q.dequeue(now);
  }
  EXPECT_EQ(q.stats().pie.ecn_mark, 0u);
  EXPECT_GT(q.stats().pie.dropped, 0u);

  FqPie marking(FqPie::Params{.ecn = true});
  now = Time::zero();
  for (int step = 0; step < 20'000; ++step) {
    now += 120_us;
    marking.enqueue(pf.make(1500, kFlowA, 0, kEct0), now);
    marking.enqueue(pf.make(1500, kFlowA, 0, kEct0), now);
    marking.dequeue(now);
  }
  EXPECT_GT(marking.stats().pie.ecn_mark, 0u);

  FqPie mem(FqPie::Params{.memory_limit = 4000});
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(mem.enqueue(pf.make(1000, kFlowA), at_ms(0)), Verdict::kQueued);
  }
  // truesize 1600 each: only the fifth arrival finds 6400 > 4000 + 1600.
  EXPECT_EQ(mem.stats().overmemory, 1u);
  EXPECT_EQ(mem.memory_usage(), 8000u);
}

TEST(FqPie, TailDropAtLimit) {
  PacketFactory pf;
  FqPie q(FqPie::Params{.limit = 2});
  q.enqueue(pf.make(100, kFlowA), at_ms(0));
  q.enqueue(pf.make(100, kFlowB), at_ms(0));
  EXPECT_EQ(q.enqueue(pf.make(100, kFlowB), at_ms(0)), Verdict::kDropped);
  EXPECT_EQ(q.stats().pie.overlimit, 1u);
  EXPECT_EQ(q.stats().pie.dropped, 1u);
}

TEST(FqPie, Validation) {
  EXPECT_EQ(FqPie::Params{.limit = 0}.validate()->key, "limit");
  EXPECT_EQ(FqPie::Params{.flows = 65537}.validate()->key, "flows");
  EXPECT_EQ(FqPie::Params{.quantum = 0}.validate()->key, "quantum");
  EXPECT_EQ(FqPie::Params{.ecn_prob = 101}.validate()->key, "ecn_prob");
  EXPECT_EQ(FqPie::Params{.alpha = 40}.validate()->key, "alpha");
  EXPECT_FALSE(FqPie::Params{}.validate().has_value());
}

TEST(FqPie, Properties) {
  for (uint64_t seed : {1, 2, 3}) {
    FqPie q(FqPie::Params{.limit = 60,
                          .flows = seed == 3 ? 1 : 16,
                          .quantum = 300,
                          .target = 200_us,
                          .tupdate = 300_us,
                          .ecn = seed == 2,
                          .dq_rate_estimator = seed == 3,
                          .seed = seed});
    testing::check_queue_properties(
        q, {.seed = seed, .max_step = 100_us, .enqueue_weight = 6, .dequeue_weight = 3});
    EXPECT_GT(q.stats().dropped_packets, 0u);
  }
}

}  // namespace
}  // namespace nicsim::algo
