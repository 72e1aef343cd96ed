// COBALT: pins the cobalt_* functions of Linux net/sched/sch_cake.c (torvalds/linux commit
// 0280f429dc21) on a manual clock: the inverse-square-root cache, the CoDel schedule with its
// decay, ECN marking, and BLUE's probability updates. docs/algorithms/cake.md.
#include "nicsim/algo/cobalt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace nicsim::algo {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr uint8_t kEct0 = 0x02;

Packet packet(uint8_t tos = 0) {
  Packet p;
  p.len = 1514;
  p.tos = tos;
  return p;
}

// A random source that must not be consulted (p_drop == 0).
uint32_t no_random() {
  ADD_FAILURE() << "BLUE drew a random number while p_drop was 0";
  return 0;
}

// Runs should_drop for a packet that waited `sojourn_ms` at `now_ms`.
bool should_drop(CobaltVars& v, const CobaltParams& p, int64_t now_ms, int64_t sojourn_ms,
                 uint8_t tos = 0, uint32_t bulk = 0) {
  Packet skb = packet(tos);
  return cobalt_should_drop(v, p, now_ms * kMs, (now_ms - sojourn_ms) * kMs, skb, bulk, no_random);
}

TEST(Cobalt, InvSqrtCacheIsExactForSmallCounts) {
  const auto& c = cobalt_inv_sqrt_cache();
  // Entries 0 and 1 are as close to 1.0 as Q0.32 gets (the comment in cobalt_should_drop).
  EXPECT_EQ(c[0], 0xFFFFFFFFu);
  EXPECT_EQ(c[1], 0xFFFFFFFFu);
  for (uint32_t n = 2; n < kCobaltInvSqrtCache; ++n) {
    const double exact = 4294967296.0 / std::sqrt(static_cast<double>(n));
    // The kernel's truncating fixed point leaves ~6e-4 of error (count 2: 0.99944 / sqrt 2).
    EXPECT_NEAR(c[n], exact, exact * 1e-3) << "count " << n;
  }
  // Above the cache one Newton step from the previous value is used.
  CobaltVars v;
  v.count = 16;
  v.rec_inv_sqrt = c[15];
  cobalt_invsqrt(v);
  EXPECT_NEAR(v.rec_inv_sqrt, 4294967296.0 / 4.0, 4294967296.0 / 4.0 * 2e-3);
}

TEST(Cobalt, ControlLawIsIntervalOverSqrtCount) {
  const auto& c = cobalt_inv_sqrt_cache();
  EXPECT_EQ(cobalt_control(0, 100 * kMs, c[1]), 100 * kMs - 1);  // 0xFFFFFFFF/2^32 truncates
  EXPECT_NEAR(static_cast<double>(cobalt_control(0, 100 * kMs, c[4])), 50.0 * kMs, 2);
  EXPECT_EQ(cobalt_control(7, 100 * kMs, 0), 7);  // a fresh queue's rec_inv_sqrt is 0
  // reciprocal_scale's operand is 32 bits: 5 s wraps to 5e9 - 2^32 ns.
  EXPECT_EQ(cobalt_control(0, 5'000'000'000ull, c[1]),
            static_cast<int64_t>(((5'000'000'000ull - (1ull << 32)) * 0xFFFFFFFFull) >> 32));
}

// A queue whose activity timeout has passed when it goes over target is signalled at its
// next packet: the end of should_drop sets drop_next = now when the first schedule was due.
TEST(Cobalt, OverTargetAfterTheActivityTimeoutSignalsAtOnce) {
  CobaltParams p;
  CobaltVars v;
  v.rec_inv_sqrt = 0xFFFFFFFFu;
  EXPECT_FALSE(should_drop(v, p, 1, 1));    // drop_next = 101 ms
  EXPECT_FALSE(should_drop(v, p, 200, 6));  // schedule = 99 ms > 0: drop_next = now
  EXPECT_EQ(v.drop_next, 200 * kMs);
  EXPECT_TRUE(should_drop(v, p, 201, 6));
}

// Below target nothing happens but the activity timeout: drop_next = now + interval.
TEST(Cobalt, BelowTargetArmsTheActivityTimeout) {
  CobaltParams p;
  CobaltVars v;
  EXPECT_FALSE(should_drop(v, p, 10, 4));
  EXPECT_FALSE(v.dropping);
  EXPECT_EQ(v.count, 0u);
  EXPECT_EQ(v.drop_next, 110 * kMs);
}

// A queue that never signalled has rec_inv_sqrt 0, so its first episode schedules the first
// signal at the time it went over target: the second over-target packet is signalled.
TEST(Cobalt, FirstEpisodeOfAFreshQueueSignalsAtTheSecondPacket) {
  CobaltParams p;
  CobaltVars v;
  EXPECT_FALSE(should_drop(v, p, 9, 1));  // below target: drop_next = 109 ms
  EXPECT_FALSE(should_drop(v, p, 10, 6));
  EXPECT_TRUE(v.dropping);
  EXPECT_EQ(v.count, 1u);
  EXPECT_EQ(v.drop_next, 10 * kMs);
  EXPECT_TRUE(should_drop(v, p, 11, 6));  // not ECN-capable: dropped
  EXPECT_EQ(v.count, 2u);
  EXPECT_EQ(v.rec_inv_sqrt, cobalt_inv_sqrt_cache()[2]);
  EXPECT_EQ(v.drop_next, cobalt_control(10 * kMs, p.interval, cobalt_inv_sqrt_cache()[2]));
  // Until that time (~70.7 ms later) nothing more is signalled.
  EXPECT_FALSE(should_drop(v, p, 60, 6));
  EXPECT_FALSE(should_drop(v, p, 80, 6));
  EXPECT_TRUE(should_drop(v, p, 81, 6));
  EXPECT_EQ(v.count, 3u);
}

// Once count has decayed to 0 the cache's entry 0 (~1.0) is in rec_inv_sqrt: a new episode
// waits a whole interval, as CoDel does.
TEST(Cobalt, LaterEpisodesWaitAnInterval) {
  CobaltParams p;
  CobaltVars v;
  v.count = 1;
  v.rec_inv_sqrt = cobalt_inv_sqrt_cache()[1];
  v.drop_next = 0;
  // Below target with a signal due: count decays 1 -> 0 and rec_inv_sqrt becomes cache[0].
  EXPECT_FALSE(should_drop(v, p, 1, 1));
  EXPECT_EQ(v.count, 0u);
  EXPECT_EQ(v.rec_inv_sqrt, 0xFFFFFFFFu);
  EXPECT_FALSE(should_drop(v, p, 199, 1));  // activity timeout: drop_next = 299 ms
  EXPECT_FALSE(should_drop(v, p, 200, 6));  // over target: schedule now + ~interval
  EXPECT_EQ(v.drop_next, 200 * kMs + 100 * kMs - 1);
  EXPECT_FALSE(should_drop(v, p, 299, 6));
  EXPECT_TRUE(should_drop(v, p, 300, 6));
}

TEST(Cobalt, EcnCapablePacketsAreMarkedNotDropped) {
  CobaltParams p;
  CobaltVars v;
  v.count = 3;
  v.rec_inv_sqrt = cobalt_inv_sqrt_cache()[3];
  v.dropping = true;
  v.drop_next = 5 * kMs;
  Packet skb = packet(kEct0);
  EXPECT_FALSE(cobalt_should_drop(v, p, 10 * kMs, 0, skb, 0, no_random));
  EXPECT_TRUE(v.ecn_marked);
  EXPECT_EQ(skb.ecn(), Ecn::kCe);
  EXPECT_EQ(v.count, 4u);
}

// While below target every passed signal time lowers count by one (the schedule keeps
// running at the decreasing rate), unlike CoDel which forgets count.
TEST(Cobalt, CountDecaysWhileBelowTarget) {
  CobaltParams p;
  CobaltVars v;
  v.count = 10;
  v.rec_inv_sqrt = cobalt_inv_sqrt_cache()[10];
  v.dropping = true;
  v.drop_next = 0;
  EXPECT_FALSE(should_drop(v, p, 100, 1));
  EXPECT_FALSE(v.dropping);
  // Each step adds interval/sqrt(count) to drop_next until it is past now (100 ms):
  // 10->9 (+33.3), 9->8 (+35.4), 8->7 (+37.8) passes 100 ms: three steps.
  EXPECT_EQ(v.count, 7u);
  EXPECT_GT(v.drop_next, 100 * kMs);
}

TEST(Cobalt, OverTargetAlsoNeedsFourMtuTimesAndTwoPerBulkFlow) {
  CobaltParams p;
  p.mtu_time = 2 * kMs;  // e.g. 1514 B at ~6 Mbit/s
  CobaltVars v;
  EXPECT_FALSE(should_drop(v, p, 10, 8));  // > target but not > 4 MTU times
  EXPECT_FALSE(v.dropping);
  EXPECT_FALSE(should_drop(v, p, 20, 9, 0, /*bulk=*/3));  // > 4 MTU, not > 2 * 3 MTU
  EXPECT_FALSE(v.dropping);
  EXPECT_FALSE(should_drop(v, p, 30, 13, 0, 3));
  EXPECT_TRUE(v.dropping);
}

TEST(Cobalt, BlueRisesOnOverflowAtMostOncePerTarget) {
  CobaltParams p;
  CobaltVars v;
  EXPECT_TRUE(cobalt_queue_full(v, p, 10 * kMs));  // quiescent -> active
  EXPECT_EQ(v.p_drop, p.p_inc);
  EXPECT_TRUE(v.dropping);
  EXPECT_EQ(v.drop_next, 10 * kMs);
  EXPECT_EQ(v.count, 1u);
  EXPECT_FALSE(cobalt_queue_full(v, p, 15 * kMs));  // exactly target later: no change
  EXPECT_EQ(v.p_drop, p.p_inc);
  EXPECT_FALSE(cobalt_queue_full(v, p, 15 * kMs + 1));
  EXPECT_EQ(v.p_drop, 2 * p.p_inc);
  // Saturates at ~1.0 instead of wrapping.
  v.p_drop = 0xFFFFFFFFu - 5;
  cobalt_queue_full(v, p, 100 * kMs);
  EXPECT_EQ(v.p_drop, 0xFFFFFFFFu);
}

TEST(Cobalt, BlueFallsWhenEmptyAndReportsQuiescence) {
  CobaltParams p;
  CobaltVars v;
  v.p_drop = p.p_dec + 7;
  v.blue_timer = 0;
  v.dropping = true;
  EXPECT_FALSE(cobalt_queue_empty(v, p, 6 * kMs));
  EXPECT_EQ(v.p_drop, 7u);
  EXPECT_FALSE(v.dropping);
  EXPECT_FALSE(cobalt_queue_empty(v, p, 8 * kMs));  // within target of the last update
  EXPECT_EQ(v.p_drop, 7u);
  EXPECT_TRUE(cobalt_queue_empty(v, p, 12 * kMs));  // below p_dec: to 0, now quiescent
  EXPECT_EQ(v.p_drop, 0u);
  // An empty queue with a due schedule also decays count one step.
  v.count = 2;
  v.drop_next = 0;
  cobalt_queue_empty(v, p, 20 * kMs);
  EXPECT_EQ(v.count, 1u);
  EXPECT_EQ(v.rec_inv_sqrt, 0xFFFFFFFFu);
}

TEST(Cobalt, BlueDropsWithProbabilityPDropAndNeverMarks) {
  CobaltParams p;
  CobaltVars v;
  v.p_drop = 1u << 30;  // 1/4
  Packet skb = packet(kEct0);
  EXPECT_TRUE(cobalt_should_drop(v, p, kMs, kMs, skb, 0, [] { return (1u << 30) - 1; }));
  EXPECT_EQ(skb.ecn(), Ecn::kEct0);
  EXPECT_FALSE(cobalt_should_drop(v, p, kMs, kMs, skb, 0, [] { return 1u << 30; }));
}

}  // namespace
}  // namespace nicsim::algo
