// DocsisPie: pins DOCSIS-PIE (RFC 8034) as CableLabs' reference model implements it
// (cablelabs/docsis-ns3 model/dual-queue-coupled-aqm.cc at 02aa2423569e: CalculateDropProb,
// DropEarly; cm-net-device.cc ExpectedDelay) on a manual clock. Expected values are worked out
// by hand from the update rule and written as literals.
#include "nicsim/algo/docsis_pie.h"

#include <gtest/gtest.h>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;
using State = DocsisPie::BurstState;

Time at_ms(int64_t ms) { return Time::zero() + Duration::ms(ms); }

TEST(DocsisPie, DefaultsAndBufferSize) {
  const DocsisPie::Params p;
  EXPECT_EQ(p.target, 10_ms);
  EXPECT_EQ(p.interval, 16_ms);
  EXPECT_DOUBLE_EQ(p.alpha, 0.25);
  EXPECT_DOUBLE_EQ(p.beta, 2.5);
  EXPECT_EQ(p.max_burst, 142_ms);
  EXPECT_EQ(p.burst_reset_timeout, 1_s);
  EXPECT_EQ(p.mean_packet_size, 1024);
  // BUFFER_SIZE: 100 ms at the service flow's rate (20 Mbit/s: 250 000 B), else 1000 frames.
  EXPECT_EQ(DocsisPie(DocsisPie::Params{.rate = Rate::mbit(20)}).buffer_bytes(), 250'000);
  EXPECT_EQ(DocsisPie(DocsisPie::Params{.rate = Rate::kbit(100)}).buffer_bytes(), 3036);
  EXPECT_EQ(DocsisPie().buffer_bytes(), 1'514'000);
  EXPECT_EQ(DocsisPie(DocsisPie::Params{.limit = 64'000}).buffer_bytes(), 64'000);
}

TEST(DocsisPie, RejectsBadParams) {
  EXPECT_EQ(DocsisPie::Params{.limit = 100}.validate()->key, "limit");
  EXPECT_EQ(DocsisPie::Params{.target = Duration::zero()}.validate()->key, "target");
  EXPECT_EQ(DocsisPie::Params{.interval = Duration::zero()}.validate()->key, "interval");
  EXPECT_EQ(DocsisPie::Params{.alpha = -1}.validate()->key, "alpha");
  EXPECT_EQ(DocsisPie::Params{.burst_reset_timeout = 1_ms}.validate()->key, "burst_reset_timeout");
  EXPECT_EQ(DocsisPie::Params{.mean_packet_size = 10}.validate()->key, "mean_packet_size");
  EXPECT_FALSE(DocsisPie::Params{}.validate());
}

// The auto-tuning table, one row each side of every threshold.
TEST(DocsisPie, AutoTuningTable) {
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 0), 1.0 / 2048);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 1e-6), 1.0 / 512);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 1e-5), 1.0 / 128);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 1e-4), 1.0 / 32);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 1e-3), 1.0 / 8);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 1e-2), 1.0 / 2);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 0.1), 2.0);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 0.999), 2.0);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 1), 8.0);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(1.0, 10), 32.0);
  EXPECT_DOUBLE_EQ(docsis_pie_tuned_step(-0.5, 0.05), -0.25);
}

// One update from p = 0: 0.25 x (30 - 10) ms + 2.5 x (30 - 0) ms = 0.08, divided by 2048.
TEST(DocsisPie, PiUpdateFromZero) {
  DocsisPie q;
  q.update(30_ms);
  EXPECT_DOUBLE_EQ(q.drop_prob(), 0.08 / 2048);
  EXPECT_EQ(q.qdelay(), 30_ms);
  // Next: 0.25 x 0.02 + 2.5 x 0 = 0.005; p = 3.9e-5 < 1e-4: divided by 128.
  q.update(30_ms);
  EXPECT_DOUBLE_EQ(q.drop_prob(), 0.08 / 2048 + 0.005 / 128);
}

// Above 10 % the step is at most 2 %; above LATENCY_HIGH (200 ms) 2 % more; the cap is
// PROB_LOW x MEAN_PKTSIZE / MIN_PKTSIZE = 13.6.
TEST(DocsisPie, StepCapHighDelayBoostAndCeiling) {
  DocsisPie q;
  for (int i = 0; i < 2000 && q.drop_prob() < 0.1; ++i) {
    q.update(150_ms);
  }
  ASSERT_GE(q.drop_prob(), 0.1);
  double before = q.drop_prob();
  q.update(150_ms);  // 0.25 x 0.14 = 0.035 x 2 = 0.07 > 0.02: capped
  EXPECT_DOUBLE_EQ(q.drop_prob(), before + 0.02);
  before = q.drop_prob();
  q.update(250_ms);  // capped step + the 200 ms boost
  EXPECT_DOUBLE_EQ(q.drop_prob(), before + 0.02 + 0.02);
  for (int i = 0; i < 2000; ++i) {
    q.update(250_ms);
  }
  EXPECT_DOUBLE_EQ(q.drop_prob(), 0.85 * 1024 / 64);
}

// Both delays under LATENCY_LOW (5 ms): p x 0.98 after the PI step.
TEST(DocsisPie, DecaysWhileTheQueueIsShort) {
  DocsisPie q;
  for (int i = 0; i < 2000 && q.drop_prob() < 1; ++i) {
    q.update(60_ms);
  }
  for (int ms = 60; ms >= 4; --ms) {
    q.update(Duration::ms(ms));  // a slow descent: small negative beta terms
  }
  const double p = q.drop_prob();
  ASSERT_GT(p, 0.1);
  q.update(4_ms);  // both < 5 ms: PI step 0.25 x -0.006 = -0.0015 (tuned by p), then x 0.98
  EXPECT_DOUBLE_EQ(q.drop_prob(), (p + docsis_pie_tuned_step(-0.0015, p)) * 0.98);
}

// Packets of 1000 B at 20 Mbit/s (250 000 B buffer), enqueued without dequeues.
void fill(DocsisPie& q, PacketFactory& f, int n, Time now) {
  for (int i = 0; i < n; ++i) {
    q.enqueue(f.make(1000), now);
  }
}

// NO_BURST: no early drop until the queue holds a third of its buffer, whatever p is.
TEST(DocsisPie, NoDropBeforeAThirdOfTheBuffer) {
  DocsisPie q(DocsisPie::Params{.rate = Rate::mbit(20)});
  for (int i = 0; i < 300; ++i) {
    q.update(300_ms);
  }
  ASSERT_GT(q.drop_prob(), 1.0);
  PacketFactory f;
  fill(q, f, 83, Time::zero());  // 83 000 B < 250 000 / 3
  EXPECT_EQ(q.stats().early_drops, 0u);
  EXPECT_EQ(q.burst_state(), State::kNoBurst);
  fill(q, f, 1, Time::zero());  // 84 000 B queued when the next one arrives: IN_BURST
  fill(q, f, 1, Time::zero());
  EXPECT_NE(q.burst_state(), State::kNoBurst);
}

// The first early drop of a burst arms MAX_BURST: no drops for 142 ms (p is held at 0 while
// the allowance lasts), the allowance runs down one INTERVAL per update.
TEST(DocsisPie, FirstDropArmsTheBurstAllowance) {
  DocsisPie q(DocsisPie::Params{.rate = Rate::mbit(20)});
  for (int i = 0; i < 300; ++i) {
    q.update(300_ms);  // p at the 13.6 ceiling: accu_prob reaches PROB_HIGH in 11 packets
  }
  PacketFactory f;
  fill(q, f, 120, Time::zero());
  EXPECT_EQ(q.stats().early_drops, 1u);
  EXPECT_EQ(q.stats().bursts, 1u);
  EXPECT_EQ(q.burst_state(), State::kInBurstProtecting);
  EXPECT_EQ(q.burst_allowance(), 142_ms);
  fill(q, f, 50, Time::zero());
  EXPECT_EQ(q.stats().early_drops, 1u);  // protected
  q.update(60_ms);
  EXPECT_EQ(q.drop_prob(), 0.0);
  EXPECT_EQ(q.burst_allowance(), 126_ms);
  for (int i = 0; i < 8; ++i) {
    q.update(60_ms);
  }
  EXPECT_EQ(q.burst_allowance(), Duration::zero());  // 142 - 9 x 16 < 0: clamped
}

// After the allowance, quiet updates (delays under target/2, p = 0) end the protection, and
// more than BURST_RESET_TIMEOUT / INTERVAL = 62 of them in a row end the burst.
TEST(DocsisPie, QuietUpdatesReturnToNoBurst) {
  DocsisPie q(DocsisPie::Params{.rate = Rate::mbit(20)});
  for (int i = 0; i < 300; ++i) {
    q.update(300_ms);
  }
  PacketFactory f;
  fill(q, f, 120, Time::zero());
  ASSERT_EQ(q.burst_state(), State::kInBurstProtecting);
  for (int i = 0; i < 8; ++i) {
    q.update(1_ms);  // 142 - 8 x 16 = 14 ms of allowance left (p held at 0)
  }
  EXPECT_EQ(q.burst_state(), State::kInBurstProtecting);
  q.update(1_ms);  // allowance 0, p 0, both delays 1 ms: quiet
  EXPECT_EQ(q.burst_state(), State::kInBurst);
  for (int i = 0; i < 62; ++i) {
    q.update(1_ms);
  }
  EXPECT_EQ(q.burst_state(), State::kInBurst);  // 62 quiet updates: not more than 62
  q.update(9_ms);                               // not quiet (>= target / 2): the count starts again
  q.update(1_ms);                               // the previous delay was 9 ms: not quiet either
  for (int i = 0; i < 62; ++i) {
    q.update(1_ms);
  }
  EXPECT_EQ(q.burst_state(), State::kInBurst);
  q.update(1_ms);  // the 63rd
  EXPECT_EQ(q.burst_state(), State::kNoBurst);
}

// Queue delay: byte length / MSR; without a rate the head's sojourn.
TEST(DocsisPie, DelayEstimate) {
  DocsisPie q(DocsisPie::Params{.rate = Rate::mbit(8)});
  PacketFactory f;
  fill(q, f, 10, at_ms(0));  // 10 000 B at 1 MB/s
  EXPECT_EQ(q.estimated_delay(at_ms(3)), 10_ms);
  DocsisPie s;
  fill(s, f, 2, at_ms(2));
  EXPECT_EQ(s.estimated_delay(at_ms(9)), 7_ms);
  EXPECT_EQ(DocsisPie().estimated_delay(at_ms(9)), Duration::zero());
}

// The timer: first update one INTERVAL after the first call, then every INTERVAL, each with
// the delay estimated at its own time.
TEST(DocsisPie, TimerUpdatesEveryInterval) {
  DocsisPie q(DocsisPie::Params{.rate = Rate::mbit(8)});
  PacketFactory f;
  fill(q, f, 30, at_ms(0));  // 30 ms of queue at 8 Mbit/s
  EXPECT_EQ(q.next_update(), at_ms(16));
  q.peek(at_ms(15));
  EXPECT_EQ(q.drop_prob(), 0.0);
  q.peek(at_ms(16));
  EXPECT_DOUBLE_EQ(q.drop_prob(), 0.08 / 2048);  // as PiUpdateFromZero
  q.peek(at_ms(48));                             // two more firings
  EXPECT_EQ(q.next_update(), at_ms(64));
}

// Under a sustained 2x overload at 10 Mbit/s the estimated delay settles near the 10 ms target
// (after the initial burst), and the drops are early drops.
TEST(DocsisPie, HoldsTheTargetUnderOverload) {
  DocsisPie q(DocsisPie::Params{.rate = Rate::mbit(10), .seed = 7});
  PacketFactory f;
  const Duration service = Rate::mbit(10).transmit_time(1500);  // 1.2 ms
  Time now = Time::zero();
  double sum_ms = 0;
  int samples = 0;
  uint64_t overlimit_at_12s = 0;
  for (int i = 0; i < 20'000; ++i) {  // 24 s
    q.enqueue(f.make(1500), now);
    q.enqueue(f.make(1500), now + service / 2);
    now += service;
    q.dequeue(now);
    if (now <= at_ms(12'000)) {
      overlimit_at_12s = q.stats().overlimit;
    } else {
      sum_ms += q.estimated_delay(now).to_seconds() * 1000;
      ++samples;
    }
  }
  const double mean_ms = sum_ms / samples;
  EXPECT_GT(mean_ms, 5.0);
  EXPECT_LT(mean_ms, 20.0);
  // The first burst overflows the 100 ms buffer during the 142 ms allowance; afterwards the
  // AQM alone drops.
  EXPECT_EQ(q.stats().overlimit, overlimit_at_12s);
  EXPECT_GT(q.stats().early_drops, 5000u);
}

TEST(DocsisPie, Properties) {
  for (uint64_t seed : {1, 2, 3}) {
    DocsisPie q(DocsisPie::Params{.rate = seed == 2 ? Rate{} : Rate::mbit(50),
                                  .limit = 40'000,
                                  .target = 200_us,
                                  .interval = 300_us,
                                  .max_burst = 1_ms,
                                  .burst_reset_timeout = 3_ms,
                                  .seed = seed});
    testing::check_queue_properties(
        q, {.seed = seed, .max_step = 100_us, .enqueue_weight = 6, .dequeue_weight = 3});
    EXPECT_GT(q.stats().dropped_packets, 0u);
  }
}

}  // namespace
}  // namespace nicsim::algo
