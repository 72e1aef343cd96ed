// Pie: pins the PIE controller of Linux net/sched/sch_pie.c and include/net/pie.h
// (torvalds/linux, sch_pie.c at 00ac0dc347dc, pie.h at 105e808c1da2) and RFC 8033 on a
// manual clock. Expected numbers are worked out from the kernel's integer arithmetic (psched
// ticks of 64 ns, MAX_PROB = 2^56 - 1, alpha/beta in 1/16) and written as literals.
#include "nicsim/algo/pie.h"

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
using Event = RecordingObserver::Event;

constexpr uint64_t kMax = kPieMaxProb;
constexpr uint8_t kEct0 = 0x02;
constexpr uint8_t kNotEct = 0x00;

Time at_ms(int64_t ms) { return Time::zero() + Duration::ms(ms); }

// pie.h pie_params_init / pie_vars_init; psched time is ns >> 6.
TEST(Pie, DefaultsAndUnits) {
  const Pie::Params p;
  EXPECT_EQ(p.limit, 1000);
  EXPECT_EQ(p.target, 15_ms);
  EXPECT_EQ(p.tupdate, 15_ms);
  EXPECT_EQ(p.alpha, 2);
  EXPECT_EQ(p.beta, 20);
  EXPECT_FALSE(p.ecn);
  EXPECT_FALSE(p.bytemode);
  EXPECT_FALSE(p.dq_rate_estimator);
  const Pie q;
  EXPECT_EQ(q.config().target, 234375u);  // 15'000'000 >> 6
  EXPECT_EQ(kMax, 72057594037927935u);
  EXPECT_EQ(kPschedTicksPerSec, 15'625'000u);
  const PieVars v;
  EXPECT_EQ(v.burst_time, 2343750u);  // 150 ms
  EXPECT_EQ(v.dq_tstamp, kPieDtimeInvalid);
  EXPECT_EQ(v.dq_count, kPieDqCountInvalid);
  EXPECT_EQ(v.prob, 0u);
}

// pie_calculate_probability's alpha/beta: gain * (MAX_PROB / PSCHED_TICKS_PER_SEC) >> 4, halved
// below p = 10 %, then divided by 4 per decade below 1 %, down to p < 1e-6 (RFC 8033 §5.2's
// table: /2, /8, /32, /128, /512, /2048).
TEST(Pie, AlphaBetaAutoTuningByProbability) {
  EXPECT_EQ(pie_scaled_gain(2, kMax / 10), 576460752u);  // 2 * 4611686018 >> 4
  EXPECT_EQ(pie_scaled_gain(20, kMax / 10), 5764607522u);
  EXPECT_EQ(pie_scaled_gain(2, kMax), 576460752u);
  EXPECT_EQ(pie_scaled_gain(2, kMax / 10 - 1), 576460752u >> 1);
  EXPECT_EQ(pie_scaled_gain(2, kMax / 100), 576460752u >> 1);
  EXPECT_EQ(pie_scaled_gain(2, kMax / 100 - 1), 576460752u >> 3);
  EXPECT_EQ(pie_scaled_gain(2, kMax / 1000 - 1), 576460752u >> 5);
  EXPECT_EQ(pie_scaled_gain(2, kMax / 10000 - 1), 576460752u >> 7);
  EXPECT_EQ(pie_scaled_gain(2, kMax / 100000 - 1), 576460752u >> 9);
  EXPECT_EQ(pie_scaled_gain(2, kMax / 1000000 - 1), 576460752u >> 11);
  EXPECT_EQ(pie_scaled_gain(2, 0), 281474u);
  EXPECT_EQ(pie_scaled_gain(20, 0), 2814749u);
  EXPECT_EQ(pie_scaled_gain(0, 0), 0u);
}

// One update from p = 0: qdelay 30 ms (468750 ticks), qdelay_old 0, target 15 ms:
// delta = 281474 * 234375 + 2814749 * 468750 = 1385384062500 (p ~ 1.92e-5).
TEST(Pie, UpdateFromZeroProbability) {
  const PieConfig c;
  PieVars v;
  v.qdelay = 468750;
  pie_calculate_probability(c, v, 100'000);
  EXPECT_EQ(v.prob, 1385384062500u);
  EXPECT_EQ(v.qdelay, 468750u);
  EXPECT_EQ(v.qdelay_old, 468750u);  // timestamp mode keeps this update's delay
  EXPECT_EQ(v.backlog_old, 100'000u);
  EXPECT_EQ(v.burst_time, 2343750u);  // no restart: the delay is high
}

// At p >= 10 % an update raises p by at most 2 %; above 250 ms another 2 % is added.
TEST(Pie, StepCapAndHighDelayBoost) {
  const PieConfig c;
  PieVars v;
  v.prob = kMax / 10;
  v.qdelay = psched_time(1000_ms);
  v.qdelay_old = 0;
  pie_calculate_probability(c, v, 1'000'000);
  EXPECT_EQ(v.prob, 7205759403792793u + 1441151880758558u + 1441151880758558u);
  // Below 10 % the PI terms are not capped (only scaled by /2).
  PieVars low;
  low.prob = kMax / 10 - 1;
  low.qdelay = psched_time(200_ms);
  low.qdelay_old = psched_time(200_ms);
  pie_calculate_probability(c, low, 1'000'000);
  EXPECT_EQ(low.prob, kMax / 10 - 1 + (576460752ull >> 1) * (3125000ull - 234375ull));
}

// The only cap on p is the u64 overflow guard: p may exceed MAX_PROB (p > 1) and is clamped
// to MAX_PROB only when the addition wraps; that update skips the idle decay.
TEST(Pie, ProbabilityOverflowClampsToMaxProb) {
  const PieConfig c;
  PieVars v;
  v.prob = UINT64_MAX - 10;
  v.qdelay = psched_time(300_ms);
  v.qdelay_old = psched_time(300_ms);
  pie_calculate_probability(c, v, 1'000'000);
  EXPECT_EQ(v.prob, kMax);
  PieVars over;
  over.prob = kMax;
  over.qdelay = psched_time(300_ms);
  over.qdelay_old = psched_time(300_ms);
  pie_calculate_probability(c, over, 1'000'000);
  EXPECT_GT(over.prob, kMax);  // no cap without a wrap
}

// Delay 0 twice: p falls by alpha * target, then by 1/64 (RFC 8033 §4.3 decay).
TEST(Pie, IdleDecayAndUnderflow) {
  const PieConfig c;
  PieVars v;
  v.prob = kMax / 10;
  pie_calculate_probability(c, v, 0);
  // 7205759403792793 - 576460752 * 234375 = 7070651415042793; minus 1/64.
  EXPECT_EQ(v.prob, 6960172486682750u);
  // A small p underflows to 0, and with both delays under target/2 the measurement restarts.
  PieVars small;
  small.prob = 1000;
  small.burst_time = 0;
  small.accu_prob = 77;
  pie_calculate_probability(c, small, 0);
  EXPECT_EQ(small.prob, 0u);
  EXPECT_EQ(small.burst_time, 2343750u);  // pie_vars_init
  EXPECT_EQ(small.accu_prob, 0u);
}

// A backlog whose delay measures 0 does not decay p.
TEST(Pie, ZeroDelayWithBacklogKeepsProbability) {
  const PieConfig c;
  PieVars v;
  v.prob = kMax / 2;
  pie_calculate_probability(c, v, 3000);
  EXPECT_EQ(v.prob, kMax / 2 - 576460752ull * 234375ull);  // the PI term only, no 1/64
}

TEST(Pie, DropEarlyGates) {
  const PieConfig c;
  AqmRandom rng(1);
  PieVars v;
  v.prob = kMax;  // p = 1
  v.qdelay = psched_time(100_ms);
  EXPECT_FALSE(pie_drop_early(c, v, 100'000, 1500, rng)) << "burst allowance left";
  v.burst_time = 0;
  EXPECT_FALSE(pie_drop_early(c, v, 3027, 1500, rng)) << "backlog < 2 * mtu";
  EXPECT_TRUE(pie_drop_early(c, v, 3028, 1500, rng));
  // Low delay (< target / 2) with p < 20 %: no drop.
  PieVars low;
  low.burst_time = 0;
  low.prob = kMax / 5 - 1;
  low.qdelay = c.target / 2 - 1;
  EXPECT_FALSE(pie_drop_early(c, low, 100'000, 1500, rng));
  EXPECT_EQ(low.accu_prob, 0u);
  low.prob = kMax / 5;             // at 20 % the delay no longer gates
  low.accu_prob = kMax / 10 * 84;  // 8.4 + 0.2: past the always-drop mark
  EXPECT_TRUE(pie_drop_early(c, low, 100'000, 1500, rng));
}

// RFC 8033 §5.1 derandomisation as sch_pie does it: below an accumulated 0.85 never, from 8.5
// always (accu_prob is then reset by the caller's drop path, not here).
TEST(Pie, DerandomisedAccumulation) {
  const PieConfig c;
  AqmRandom rng(7);
  PieVars v;
  v.burst_time = 0;
  v.qdelay = psched_time(20_ms);
  v.prob = kMax / 100 * 40;  // 0.4
  EXPECT_FALSE(pie_drop_early(c, v, 100'000, 1500, rng));
  EXPECT_FALSE(pie_drop_early(c, v, 100'000, 1500, rng));
  EXPECT_EQ(v.accu_prob, 2 * (kMax / 100 * 40));
  v.accu_prob = kMax / 10 * 84;  // 8.4 + 0.4 >= 8.5
  EXPECT_TRUE(pie_drop_early(c, v, 100'000, 1500, rng));
  EXPECT_EQ(v.accu_prob, kMax / 10 * 84 + kMax / 100 * 40);
  // p > 1 drops on the first draw past 0.85 and resets the accumulator.
  PieVars hot;
  hot.burst_time = 0;
  hot.prob = kMax * 4;
  EXPECT_TRUE(pie_drop_early(c, hot, 100'000, 1500, rng));
  EXPECT_EQ(hot.accu_prob, 0u);
  // p = 0 resets the accumulator.
  PieVars zero;
  zero.burst_time = 0;
  zero.qdelay = psched_time(20_ms);
  zero.accu_prob = 12345;
  EXPECT_FALSE(pie_drop_early(c, zero, 100'000, 1500, rng));
  EXPECT_EQ(zero.accu_prob, 0u);
}

// Bytemode: a packet of size s <= mtu counts s * (p / mtu).
TEST(Pie, BytemodeScalesByPacketSize) {
  PieConfig c;
  c.bytemode = true;
  AqmRandom rng(3);
  PieVars v;
  v.burst_time = 0;
  v.qdelay = psched_time(20_ms);
  v.prob = kMax / 2;
  EXPECT_FALSE(pie_drop_early(c, v, 100'000, 757, rng));
  EXPECT_EQ(v.accu_prob, 18014398509481857u);  // 757 * (36028797018963967 / 1514)
  PieVars big;                                 // larger than mtu: the full p
  big.burst_time = 0;
  big.qdelay = psched_time(20_ms);
  big.prob = kMax / 2;
  EXPECT_FALSE(pie_drop_early(c, big, 100'000, 9000, rng));
  EXPECT_EQ(big.accu_prob, kMax / 2);
}

// Timestamp mode: qdelay is the head's sojourn (0 when the queue empties); the burst allowance
// runs down by the time between dequeues, from the second dequeue on.
TEST(Pie, ProcessDequeueTimestampMode) {
  const PieConfig c;
  PieVars v;
  pie_process_dequeue(c, v, psched_time(at_ms(40)), psched_time(at_ms(10)), 1500, 3000);
  EXPECT_EQ(v.qdelay, psched_time(30_ms));
  EXPECT_EQ(v.dq_tstamp, psched_time(at_ms(40)));
  EXPECT_EQ(v.burst_time, 2343750u);  // first dequeue: dtime 0
  pie_process_dequeue(c, v, psched_time(at_ms(140)), psched_time(at_ms(50)), 1500, 1500);
  EXPECT_EQ(v.qdelay, psched_time(90_ms));
  EXPECT_EQ(v.burst_time, 2343750u - 1562500u);  // 150 ms - 100 ms
  pie_process_dequeue(c, v, psched_time(at_ms(240)), psched_time(at_ms(150)), 1500, 0);
  EXPECT_EQ(v.qdelay, 0u);  // the queue is empty now
  EXPECT_EQ(v.burst_time, 0u);
}

// Estimator mode (RFC 8033 §4.2): a cycle starts when >= 16384 B are queued and ends after
// 16384 B have left: rate = (bytes << 8) / ticks, then EWMA 1/8; qdelay = backlog / rate.
TEST(Pie, DrainRateEstimator) {
  PieConfig c;
  c.dq_rate_estimator = true;
  PieVars v;
  pie_process_dequeue(c, v, psched_time(at_ms(0)), 0, 1024, 40'000);  // starts the cycle
  EXPECT_EQ(v.dq_count, 1024u);
  for (int i = 1; i < 15; ++i) {
    pie_process_dequeue(c, v, psched_time(at_ms(0)), 0, 1024, 40'000);
  }
  EXPECT_EQ(v.avg_dq_rate, 0u);
  pie_process_dequeue(c, v, psched_time(at_ms(1)), 0, 1024, 40'000);  // 16384 B in 1 ms
  EXPECT_EQ(v.avg_dq_rate, 268u);                                     // (16384 << 8) / 15625
  EXPECT_EQ(v.dq_count, 0u);
  EXPECT_EQ(v.burst_time, 2343750u - 15625u);
  for (int i = 0; i < 16; ++i) {  // the next 16384 B in 2 ms: rate 134, EWMA 268 - 33 + 16
    pie_process_dequeue(c, v, psched_time(at_ms(3)), 0, 1024, 10'000);
  }
  EXPECT_EQ(v.avg_dq_rate, 251u);
  EXPECT_EQ(v.dq_count, kPieDqCountInvalid);  // backlog fell under 16384: hold the rate
  PieVars w = v;
  pie_calculate_probability(c, w, 32768);
  EXPECT_EQ(w.qdelay, 33420u);  // (32768 << 8) / 251 ticks = 2.14 ms
}

TEST(Pie, TailDropAtLimitCountsAsDropped) {
  Pie q(Pie::Params{.limit = 2});
  PacketFactory pf;
  RecordingObserver obs;
  q.set_observer(&obs);
  EXPECT_EQ(q.enqueue(pf.make(1000), at_ms(0)), Verdict::kQueued);
  EXPECT_EQ(q.enqueue(pf.make(1000), at_ms(0)), Verdict::kQueued);
  EXPECT_EQ(q.enqueue(pf.make(1000), at_ms(0)), Verdict::kDropped);
  EXPECT_EQ(q.stats().pie.overlimit, 1u);
  EXPECT_EQ(q.stats().pie.dropped, 1u);  // sch_pie counts overlimit drops in `dropped` too
  EXPECT_EQ(q.stats().pie.packets_in, 2u);
  EXPECT_EQ(q.stats().pie.maxq, 1u);  // qlen before the second arrival joined
  ASSERT_EQ(obs.events.size(), 3u);
  EXPECT_EQ(obs.events[2].reason, DropReason::kQueueFull);
  testing::expect_stats_identities(q);
}

// The timer: first firing HZ/2 after creation (the first call), then every tupdate; the
// controller sees the backlog and delay as they were at each firing.
TEST(Pie, TimerFirstAfterHalfASecondThenEveryTupdate) {
  Pie q;
  PacketFactory pf;
  EXPECT_FALSE(q.next_update().has_value());
  for (int i = 0; i < 20; ++i) {
    q.enqueue(pf.make(1500), at_ms(0));
  }
  EXPECT_EQ(q.next_update(), at_ms(500));
  ASSERT_TRUE(q.dequeue(at_ms(30)));  // sojourn 30 ms
  EXPECT_EQ(q.vars().qdelay, 468750u);
  EXPECT_EQ(q.vars().prob, 0u);
  ASSERT_TRUE(q.peek(at_ms(499)));  // runs the dequeue logic for the next head now
  EXPECT_EQ(q.vars().prob, 0u);
  EXPECT_EQ(q.vars().qdelay, psched_time(499_ms));
  ASSERT_TRUE(q.dequeue(at_ms(500)));  // the stashed head; the timer fires first
  EXPECT_EQ(q.next_update(), at_ms(515));
  // One update from p = 0 with qdelay 499 ms and qdelay_old 0 (only updates set it):
  // 281474 * (7796875 - 234375) + 2814749 * 7796875 + 2 % (above 250 ms).
  const uint64_t expected = 281474ull * (7796875 - 234375) + 2814749ull * 7796875 + kMax / 50;
  EXPECT_EQ(q.vars().prob, expected);
  ASSERT_TRUE(q.dequeue(at_ms(545)));  // three more firings: 515, 530 and 545
  EXPECT_EQ(q.next_update(), at_ms(560));
}

// An idle hour: the timer settles in a few firings and the rest are skipped, landing on the
// tupdate grid.
TEST(Pie, IdleTimerSkipsToTheGrid) {
  Pie q;
  PacketFactory pf;
  q.enqueue(pf.make(1500), at_ms(0));
  ASSERT_TRUE(q.dequeue(at_ms(1)));
  q.enqueue(pf.make(1500), at_ms(3'600'000));
  EXPECT_EQ(q.next_update(), at_ms(500 + 15 * ((3'600'000 - 500) / 15 + 1)));
  EXPECT_EQ(q.vars().prob, 0u);
  EXPECT_EQ(q.vars().burst_time, 2343750u);
}

// ECN: while p <= 10 % an ECN-capable packet chosen for drop is CE-marked and queued; above
// 10 % it is dropped; a Not-ECT packet is always dropped.
TEST(Pie, EcnMarksUpToTenPercent) {
  Pie q(Pie::Params{.limit = 10'000, .tupdate = 15_ms, .ecn = true});
  PacketFactory pf;
  // Build a standing queue of ~1 s so p climbs quickly.
  for (int i = 0; i < 2000; ++i) {
    q.enqueue(pf.make(1500, 1, 0, kEct0), at_ms(0));
  }
  Time now = at_ms(0);
  uint64_t marks = 0;
  uint64_t drops_ect = 0;
  uint64_t drops_not_ect = 0;
  for (int step = 0; step < 4000; ++step) {
    now += 1_ms;
    q.dequeue(now);
    const double p = pie_prob_to_double(q.vars().prob);
    const uint64_t marks_before = q.stats().pie.ecn_mark;
    const Verdict ect = q.enqueue(pf.make(1500, 1, 0, kEct0), now);
    if (q.stats().pie.ecn_mark > marks_before) {
      EXPECT_LE(p, 0.1 + 1e-12);
      EXPECT_EQ(ect, Verdict::kQueued);
      ++marks;
    } else if (ect == Verdict::kDropped) {
      EXPECT_GT(p, 0.1);
      ++drops_ect;
    }
    const Verdict plain = q.enqueue(pf.make(1500, 2, 0, kNotEct), now);
    if (plain == Verdict::kDropped) {
      ++drops_not_ect;
    }
  }
  EXPECT_GT(marks, 0u);
  EXPECT_GT(drops_ect, 0u);
  EXPECT_GT(drops_not_ect, 0u);
  EXPECT_EQ(q.stats().ecn_marked, q.stats().pie.ecn_mark);
  testing::expect_stats_identities(q);
}

// RFC 8033's goal: under a persistent overload (arrivals at twice the service rate, no
// congestion control) PIE drops about half the arrivals and holds the queue delay near the
// target instead of letting it grow to the limit.
TEST(Pie, HoldsDelayNearTargetUnderOverload) {
  for (bool estimator : {false, true}) {
    SCOPED_TRACE(estimator ? "dq_rate_estimator" : "timestamps");
    Pie q(Pie::Params{.limit = 100'000, .dq_rate_estimator = estimator});
    PacketFactory pf;
    Time now = Time::zero();
    std::vector<double> late_sojourn_ms;
    // Service: one 1500 B packet per 120 us (100 Mbit/s); arrivals: two per 120 us.
    for (int step = 0; step < 200'000; ++step) {
      now += 120_us;
      q.enqueue(pf.make(1500), now);
      q.enqueue(pf.make(1500), now);
      std::optional<Packet> p = q.dequeue(now);
      if (p && step > 100'000) {
        late_sojourn_ms.push_back((now - p->enqueue_ts).to_ms());
      }
    }
    double sum = 0;
    for (double s : late_sojourn_ms) {
      sum += s;
    }
    const double mean = sum / static_cast<double>(late_sojourn_ms.size());
    EXPECT_GT(mean, 5.0);
    EXPECT_LT(mean, 30.0);
    EXPECT_GT(q.stats().pie.dropped, 150'000u);
    EXPECT_EQ(q.stats().pie.overlimit, 0u);
  }
}

TEST(Pie, Validation) {
  EXPECT_EQ(Pie::Params{.limit = 0}.validate()->key, "limit");
  EXPECT_EQ(Pie::Params{.target = 0_ms}.validate()->key, "target");
  EXPECT_EQ(Pie::Params{.tupdate = 0_ms}.validate()->key, "tupdate");
  EXPECT_EQ(Pie::Params{.alpha = 33}.validate()->key, "alpha");
  EXPECT_EQ(Pie::Params{.beta = -1}.validate()->key, "beta");
  EXPECT_EQ(Pie::Params{.mtu = 0}.validate()->key, "mtu");
  EXPECT_FALSE(Pie::Params{}.validate().has_value());
  EXPECT_THROW(Pie(Pie::Params{.limit = 0}), InvalidParams);
}

TEST(Pie, Properties) {
  for (uint64_t seed : {1, 2, 3}) {
    // A short target and tupdate so early drops and marks happen within the run.
    Pie q(Pie::Params{.limit = 60,
                      .target = 200_us,
                      .tupdate = 300_us,
                      .ecn = seed == 2,
                      .bytemode = seed == 3,
                      .dq_rate_estimator = seed == 3,
                      .seed = seed});
    testing::check_queue_properties(
        q, {.seed = seed, .max_step = 100_us, .enqueue_weight = 6, .dequeue_weight = 3});
    EXPECT_GT(q.stats().dropped_packets, 0u);
  }
}

}  // namespace
}  // namespace nicsim::algo
