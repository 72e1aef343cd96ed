// DualPi2: pins the coupled dual-queue AQM of Linux net/sched/sch_dualpi2.c (v6.17/6.18; read in
// MyWRT/linux-6.18.y at ba2cadd65fc0) and RFC 9332 on a manual clock. Expected numbers come
// from the kernel's integer arithmetic (probabilities in 2^32 - 1, alpha/beta scaled to
// probability per 64 ns, the PI sum divided by 64) and are written as literals.
#include "nicsim/algo/dualpi2.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;

constexpr uint8_t kNotEct = 0x00;
constexpr uint8_t kEct1 = 0x01;
constexpr uint8_t kEct0 = 0x02;
constexpr uint8_t kCe = 0x03;
constexpr double kMax = 4294967295.0;

Time at_ms(int64_t ms) { return Time::zero() + Duration::ms(ms); }

// dualpi2_reset_default and the derived values.
TEST(DualPi2, DefaultsAndScaling) {
  const DualPi2::Params p;
  EXPECT_EQ(p.limit, 10000);
  EXPECT_EQ(p.target, 15_ms);
  EXPECT_EQ(p.tupdate, 16_ms);
  EXPECT_EQ(p.alpha, 41);
  EXPECT_EQ(p.beta, 819);
  EXPECT_EQ(p.step_thresh, 1_ms);
  EXPECT_EQ(p.coupling_factor, 2);
  EXPECT_TRUE(p.drop_overload);
  EXPECT_FALSE(p.drop_early);
  EXPECT_EQ(p.c_protection, 10);
  EXPECT_EQ(p.ecn_mask, 1);
  const DualPi2 q;
  EXPECT_EQ(q.alpha(), 44u);  // (41 * (2^32 - 1) >> 2) / 1e9
  EXPECT_EQ(q.beta(), 879u);  // (819 * (2^32 - 1) >> 2) / 1e9
  EXPECT_EQ(dualpi2_scale_alpha_beta(1), 1u);
  EXPECT_EQ(q.memory_limit(), 30'280'000u);  // 10000 * 2 * 1514
  EXPECT_EQ(q.credit(), -121'120);           // 1514 * (10 - 90): the L-queue first
}

// calculate_probability: p' += (alpha (qdelay - target) + beta (qdelay - last)) / 64.
TEST(DualPi2, PiUpdateArithmetic) {
  const uint32_t kMaxP = kDualPi2MaxProb;
  // 20 ms of delay from p' = 0: (5e6 * 44 + 20e6 * 879) / 64 = 278125000 (6.48 %).
  EXPECT_EQ(dualpi2_pi_update(0, 20'000'000, 0, 15'000'000, 44, 879, kMaxP), 278'125'000u);
  // Falling delay: (3e6 * 44 - 2e6 * 879) / 64 = -25406250.
  EXPECT_EQ(dualpi2_pi_update(100'000'000, 18'000'000, 20'000'000, 15'000'000, 44, 879, kMaxP),
            100'000'000u - 25'406'250u);
  // Underflow to 0, saturation at MAX_PROB.
  EXPECT_EQ(dualpi2_pi_update(1000, 0, 0, 15'000'000, 44, 879, kMaxP), 0u);
  EXPECT_EQ(dualpi2_pi_update(kMaxP - 5, 20'000'000, 0, 15'000'000, 44, 879, kMaxP), kMaxP);
  // Without drop_overload p' is capped at MAX_PROB / k so that k p' <= 100 %.
  EXPECT_EQ(dualpi2_pi_update(kMaxP - 5, 20'000'000, 0, 15'000'000, 44, 879, kMaxP / 2), kMaxP / 2);
}

// A DualPi2 whose p' is pinned to 1e9 * beta_ / 64 until t = 2 s: target = tupdate = 1 s and
// one Classic packet enqueued at t = 0, so the first update (t = 1 s) sees qdelay = target
// (no alpha term) and last_qdelay 0.
DualPi2 with_pinned_prob(int64_t beta, DualPi2::Params p, PacketFactory& pf) {
  p.target = 1000_ms;
  p.tupdate = 1000_ms;
  p.alpha = 1;
  p.beta = beta;
  p.step_thresh = 4000_ms;  // no step marking
  DualPi2 q(p);
  q.enqueue(pf.make(1514, 9, 0, kNotEct), at_ms(0));
  EXPECT_TRUE(q.dequeue(at_ms(1000)));  // the update runs first, with that packet at the head
  return q;
}

struct Outcome {
  int offered = 0;
  int dropped = 0;
  int marked = 0;
};

// Tops the queue up to 40 packets of one ECN codepoint and dequeues, `n` times, at t = 1.5 s
// (p' pinned, at least 2 MTU behind every head); counts what happens to the packets taken.
Outcome run_class(DualPi2& q, PacketFactory& pf, uint8_t tos, int n) {
  Outcome o;
  const Time now = at_ms(1500);
  while (o.offered < n) {
    while (q.backlog_packets() < 40) {
      q.enqueue(pf.make(1514, 1, 0, tos), now);
    }
    const uint64_t d0 = q.stats().dropped_packets;
    std::optional<Packet> p = q.dequeue(now);
    const int dropped = static_cast<int>(q.stats().dropped_packets - d0);
    o.dropped += dropped;
    o.offered += dropped + (p ? 1 : 0);
    if (p && (p->tos & 3) == kCe && tos != kCe) {
      ++o.marked;
    }
  }
  return o;
}

// RFC 9332 §2.4: with base probability p', Classic packets are dropped or marked with
// p_C = p'^2 and L4S packets are marked with p_CL = k p' (k = 2). p' = 1078125000 / (2^32-1)
// = 0.2510: p_C = 0.0630, p_L = 0.5020.
TEST(DualPi2, CouplingClassicSquaredL4sTimesK) {
  PacketFactory pf;
  const double pp = 1078125000.0 / kMax;
  {
    DualPi2 q = with_pinned_prob(65, {}, pf);
    ASSERT_EQ(q.prob(), 1'078'125'000u);  // 1e9 * 69 / 64 (beta 65 scales to 69)
    const Outcome c = run_class(q, pf, kNotEct, 40'000);
    EXPECT_NEAR(static_cast<double>(c.dropped) / c.offered, pp * pp, 0.006);
    EXPECT_EQ(c.marked, 0);
  }
  {
    DualPi2 q = with_pinned_prob(65, {}, pf);
    const Outcome c = run_class(q, pf, kEct0, 40'000);  // Classic ECN: marked, not dropped
    EXPECT_EQ(c.dropped, 0);
    EXPECT_NEAR(static_cast<double>(c.marked) / c.offered, pp * pp, 0.006);
  }
  {
    DualPi2 q = with_pinned_prob(65, {}, pf);
    const Outcome l = run_class(q, pf, kEct1, 40'000);
    EXPECT_EQ(l.dropped, 0);
    EXPECT_NEAR(static_cast<double>(l.marked) / l.offered, 2 * pp, 0.01);
    EXPECT_EQ(q.stats().step_marks, 0u);
    EXPECT_EQ(q.stats().packets_in_c, 1u);  // only the pinning packet went to the C-queue
  }
  {
    // k = 3: p_L = 3 p'.
    DualPi2 q = with_pinned_prob(65, {.coupling_factor = 3}, pf);
    const Outcome l = run_class(q, pf, kEct1, 40'000);
    EXPECT_NEAR(static_cast<double>(l.marked) / l.offered, 3 * pp, 0.01);
  }
}

// Overload (k p' > 1): with drop_overload L packets meet the Classic p'^2 drop and every
// survivor is marked; Classic ECT packets are dropped, not marked. Without it p' is capped at
// 1/k and L packets are all marked, never dropped. p' = 2578125000 / (2^32-1) = 0.6003.
TEST(DualPi2, OverloadDropsOrCaps) {
  PacketFactory pf;
  const double pp = 2578125000.0 / kMax;
  {
    DualPi2 q = with_pinned_prob(154, {}, pf);
    ASSERT_EQ(q.prob(), 2'578'125'000u);
    const Outcome l = run_class(q, pf, kEct1, 20'000);
    EXPECT_NEAR(static_cast<double>(l.dropped) / l.offered, pp * pp, 0.015);
    EXPECT_EQ(l.marked + l.dropped, l.offered);
  }
  {
    DualPi2 q = with_pinned_prob(154, {}, pf);
    const Outcome c = run_class(q, pf, kEct0, 20'000);
    EXPECT_NEAR(static_cast<double>(c.dropped) / c.offered, pp * pp, 0.015);
    EXPECT_EQ(c.marked, 0);
  }
  {
    DualPi2 q = with_pinned_prob(154, {.drop_overload = false}, pf);
    EXPECT_EQ(q.prob(), kDualPi2MaxProb / 2);
    const Outcome l = run_class(q, pf, kEct1, 20'000);
    EXPECT_EQ(l.dropped, 0);
    EXPECT_GE(l.marked, l.offered - 1);
  }
}

// Classification: ECN & ecn_mask. Default (L4S ECT): ECT(1) and CE go to the L-queue.
TEST(DualPi2, ClassifiesByEcnMask) {
  PacketFactory pf;
  DualPi2 q;
  for (uint8_t tos : {kNotEct, kEct1, kEct0, kCe, static_cast<uint8_t>(0xb8 | kEct1)}) {
    q.enqueue(pf.make(100, 0, 0, tos), at_ms(0));
  }
  EXPECT_EQ(q.l_packets(), 3u);  // ECT(1), CE, EF + ECT(1)
  EXPECT_EQ(q.c_packets(), 2u);
  DualPi2 any(DualPi2::Params{.ecn_mask = 3});
  for (uint8_t tos : {kNotEct, kEct1, kEct0, kCe}) {
    any.enqueue(pf.make(100, 0, 0, tos), at_ms(0));
  }
  EXPECT_EQ(any.l_packets(), 3u);
  EXPECT_EQ(any.c_packets(), 1u);
}

// The L4S step (RFC 9332 §2.5.1.2): CE-mark L packets whose sojourn is strictly above
// step_thresh (1 ms), independent of p'.
TEST(DualPi2, StepMarksL4sAboveOneMillisecond) {
  PacketFactory pf;
  DualPi2 q;
  q.enqueue(pf.make(1514, 1, 0, kEct1), at_ms(0));
  q.enqueue(pf.make(1514, 1, 0, kEct1), at_ms(0));
  q.enqueue(pf.make(1514, 1, 0, kEct1), at_ms(0));
  std::optional<Packet> a = q.dequeue(Time::zero() + 1_ms);  // sojourn == 1 ms: not above
  ASSERT_TRUE(a);
  EXPECT_EQ(a->tos & 3, kEct1);
  std::optional<Packet> b = q.dequeue(Time::zero() + 1_ms + 1_ns);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->tos & 3, kCe);
  EXPECT_EQ(q.stats().step_marks, 1u);
  EXPECT_EQ(q.stats().ecn_mark, 1u);
  EXPECT_EQ(q.prob(), 0u);
  // Classic packets never see the step.
  q.enqueue(pf.make(1514, 2, 0, kEct0), at_ms(2));
  std::optional<Packet> l = q.dequeue(at_ms(10));  // the remaining L packet first
  std::optional<Packet> c = q.dequeue(at_ms(10));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->tos & 3, kEct0);
}

// Step in packets: mark when the L-queue (after this dequeue) holds more than step_packets;
// min_qlen_step: only packets that arrived to at least that many L packets are eligible.
TEST(DualPi2, StepInPacketsAndMinQlen) {
  PacketFactory pf;
  DualPi2 q(DualPi2::Params{.step_packets = 2});
  for (int i = 0; i < 5; ++i) {
    q.enqueue(pf.make(100, 1, 0, kEct1), at_ms(0));
  }
  std::vector<int> ce;
  while (std::optional<Packet> p = q.dequeue(at_ms(0))) {
    ce.push_back((p->tos & 3) == kCe ? 1 : 0);
  }
  EXPECT_EQ(ce, (std::vector<int>{1, 1, 0, 0, 0}));  // 4 and 3 left behind are > 2
  DualPi2 m(DualPi2::Params{.step_packets = 0, .min_qlen_step = 2});
  for (int i = 0; i < 4; ++i) {
    m.enqueue(pf.make(100, 1, 0, kEct1), at_ms(0));
  }
  ce.clear();
  while (std::optional<Packet> p = m.dequeue(at_ms(5))) {  // all sojourns 5 ms > 1 ms
    ce.push_back((p->tos & 3) == kCe ? 1 : 0);
  }
  EXPECT_EQ(ce, (std::vector<int>{0, 0, 1, 1}));  // the first two arrived to < 2 L packets
}

// The WRR scheduler with c_protection 10 %: the credit starts at 1514 * (10 - 90); an L packet
// with C waiting adds 10 * len, a C packet with L waiting subtracts 90 * len, L goes while the
// credit is <= 0: nine L packets, then one C, repeating (90 % / 10 % by bytes).
TEST(DualPi2, WrrGivesCQueueItsShare) {
  PacketFactory pf;
  DualPi2 q;
  for (int i = 0; i < 40; ++i) {
    q.enqueue(pf.make(1514, 1, 0, kEct1), at_ms(0));
    q.enqueue(pf.make(1514, 2, 0, kNotEct), at_ms(0));
  }
  std::string order;
  for (int i = 0; i < 20; ++i) {
    std::optional<Packet> p = q.dequeue(at_ms(0));
    ASSERT_TRUE(p);
    order += (p->tos & 1) ? 'L' : 'C';
  }
  EXPECT_EQ(order, "LLLLLLLLLCLLLLLLLLLC");
  EXPECT_EQ(q.credit(), -121'120);
  // c_protection 50: alternate.
  DualPi2 even(DualPi2::Params{.c_protection = 50});
  for (int i = 0; i < 4; ++i) {
    even.enqueue(pf.make(1000, 1, 0, kEct1), at_ms(0));
    even.enqueue(pf.make(1000, 2, 0, kNotEct), at_ms(0));
  }
  order.clear();
  while (std::optional<Packet> p = even.dequeue(at_ms(0))) {
    order += (p->tos & 1) ? 'L' : 'C';
  }
  EXPECT_EQ(order, "LCLCLCLC");
}

// The timer: first update tupdate after the first call; qdelay is the larger head sojourn.
TEST(DualPi2, TimerUsesTheLargerHeadDelay) {
  PacketFactory pf;
  DualPi2 q;
  q.enqueue(pf.make(1514, 1, 0, kNotEct), at_ms(0));
  q.enqueue(pf.make(1514, 1, 0, kEct1), at_ms(4));
  EXPECT_EQ(q.next_update(), at_ms(16));
  q.enqueue(pf.make(1514, 1, 0, kEct1), at_ms(20));  // one update at 16 ms: qdelay 16 ms (C)
  // (1e6 * 44 + 16e6 * 879) / 64 = 220437500.
  EXPECT_EQ(q.prob(), 220'437'500u);
  EXPECT_EQ(q.next_update(), at_ms(32));
  // An idle hour settles at p' = 0 and lands on the tupdate grid.
  while (q.dequeue(at_ms(20))) {
  }
  q.enqueue(pf.make(1514, 1, 0, kEct1), at_ms(3'600'000));
  EXPECT_EQ(q.prob(), 0u);
  EXPECT_EQ(q.next_update(), at_ms(3'600'000 + 16 - (3'600'000 % 16)));
}

TEST(DualPi2, LimitAndMemoryLimit) {
  PacketFactory pf;
  DualPi2 q(DualPi2::Params{.limit = 3});
  for (int i = 0; i < 4; ++i) {
    q.enqueue(pf.make(1000), at_ms(0));
  }
  EXPECT_EQ(q.stats().drop_overlimit, 1u);
  EXPECT_EQ(q.backlog_packets(), 3u);
  EXPECT_EQ(q.stats().maxq, 2u);
  // memory_limit: truesize 1024 + 576 = 1600 per 1000-byte packet.
  DualPi2 m(DualPi2::Params{.memory_limit = 3200});
  EXPECT_EQ(m.enqueue(pf.make(1000), at_ms(0)), Verdict::kQueued);
  EXPECT_EQ(m.enqueue(pf.make(1000), at_ms(0)), Verdict::kQueued);
  EXPECT_EQ(m.enqueue(pf.make(1000), at_ms(0)), Verdict::kDropped);
  EXPECT_EQ(m.memory_used(), 3200u);
  EXPECT_EQ(m.stats().max_memory_used, 3200u);
  testing::expect_stats_identities(m);
}

TEST(DualPi2, PerQueueSojourn) {
  PacketFactory pf;
  DualPi2 q;
  q.enqueue(pf.make(100, 1, 0, kEct1), at_ms(0));
  q.enqueue(pf.make(100, 2, 0, kNotEct), at_ms(0));
  ASSERT_TRUE(q.peek(at_ms(1)));  // L first (the credit starts negative)
  ASSERT_TRUE(q.dequeue(at_ms(3)));
  ASSERT_TRUE(q.dequeue(at_ms(5)));
  EXPECT_EQ(q.stats().dequeued_l, 1u);
  EXPECT_EQ(q.stats().sojourn_l_ns, 3'000'000u);
  EXPECT_EQ(q.stats().dequeued_c, 1u);
  EXPECT_EQ(q.stats().sojourn_c_ns, 5'000'000u);
}

// drop_early moves must_drop to enqueue: with p' pinned, Not-ECT Classic arrivals are dropped
// at enqueue with p'^2.
TEST(DualPi2, DropEarlyAtEnqueue) {
  PacketFactory pf;
  DualPi2 q = with_pinned_prob(65, {.drop_early = true}, pf);
  const Time now = at_ms(1500);
  for (int i = 0; i < 4; ++i) {
    q.enqueue(pf.make(1514, 1, 0, kNotEct), now);
  }
  int dropped = 0;
  const int n = 40'000;
  for (int i = 0; i < n; ++i) {
    if (q.enqueue(pf.make(1514, 1, 0, kNotEct), now) == Verdict::kDropped) {
      ++dropped;
    } else {
      q.dequeue(now);
    }
  }
  const double pp = 1078125000.0 / kMax;
  EXPECT_NEAR(static_cast<double>(dropped) / n, pp * pp, 0.006);
  EXPECT_EQ(q.stats().drop_aqm, static_cast<uint64_t>(dropped));
}

TEST(DualPi2, Validation) {
  EXPECT_EQ(DualPi2::Params{.limit = 0}.validate()->key, "limit");
  EXPECT_EQ(DualPi2::Params{.tupdate = 0_ms}.validate()->key, "tupdate");
  EXPECT_EQ(DualPi2::Params{.alpha = 0}.validate()->key, "alpha");
  EXPECT_EQ(DualPi2::Params{.beta = int64_t{1} << 31}.validate()->key, "beta");
  EXPECT_EQ(DualPi2::Params{.coupling_factor = 0}.validate()->key, "coupling_factor");
  EXPECT_EQ(DualPi2::Params{.c_protection = 101}.validate()->key, "c_protection");
  EXPECT_EQ(DualPi2::Params{.ecn_mask = 0}.validate()->key, "ecn_mask");
  EXPECT_FALSE(DualPi2::Params{}.validate().has_value());
  EXPECT_THROW(DualPi2(DualPi2::Params{.limit = 0}), InvalidParams);
}

TEST(DualPi2, Properties) {
  for (uint64_t seed : {1, 2, 3}) {
    // Short target/tupdate so the PI acts; any TOS so both queues, marks and drops occur.
    DualPi2 q(DualPi2::Params{.limit = 60,
                              .target = 200_us,
                              .tupdate = 300_us,
                              .min_qlen_step = seed == 2 ? 3 : 0,
                              .drop_overload = seed != 2,
                              .drop_early = seed == 3,
                              .seed = seed});
    testing::check_queue_properties(
        q, {.seed = seed, .max_step = 100_us, .enqueue_weight = 6, .dequeue_weight = 3});
    EXPECT_GT(q.stats().dropped_packets, 0u);
    EXPECT_GT(q.stats().ecn_mark, 0u);
  }
}

}  // namespace
}  // namespace nicsim::algo
