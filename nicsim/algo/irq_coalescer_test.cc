// IrqCoalescer: pins the ethtool -C exit condition (docs/mechanisms §7.1) and NAPI masking
// (§7.2) on a manual clock.
#include "nicsim/algo/irq_coalescer.h"

#include <gtest/gtest.h>

#include <random>

namespace nicsim::algo {
namespace {

Time at_us(int64_t us) { return Time::zero() + Duration::us(us); }

void expect_identity(const IrqCoalescer& c) {
  const auto& s = c.stats();
  EXPECT_EQ(s.interrupts, s.by_frames + s.by_timer + s.on_unmask);
}

TEST(IrqCoalescer, DefaultIsNoCoalescing) {
  // §7.1: "no coalescing" is usecs = 0, frames = 1: every completion interrupts at once.
  IrqCoalescer c;
  EXPECT_TRUE(c.on_event(at_us(0)));
  EXPECT_TRUE(c.on_event(at_us(1)));
  EXPECT_EQ(c.stats().interrupts, 2u);
  EXPECT_EQ(c.next_ready(), std::nullopt);
}

TEST(IrqCoalescer, FrameThreshold) {
  // §7.1: interrupt when completed frames >= frames.
  IrqCoalescer c({.usecs = Duration::zero(), .frames = 4});
  EXPECT_FALSE(c.on_event(at_us(0)));
  EXPECT_FALSE(c.on_event(at_us(10), 2));
  EXPECT_EQ(c.next_ready(), std::nullopt);  // usecs = 0: no timer, wait for frames forever
  EXPECT_FALSE(c.expire(at_us(1'000'000)));
  EXPECT_TRUE(c.on_event(at_us(20)));  // 4th frame
  EXPECT_EQ(c.stats().by_frames, 1u);
  EXPECT_EQ(c.stats().max_delay, 20_us);
  EXPECT_EQ(c.pending(), 0u);
  expect_identity(c);
}

TEST(IrqCoalescer, TimerRunsFromFirstCompletion) {
  // §7.1: time since the FIRST completion >= usecs (not since the last one).
  IrqCoalescer c({.usecs = 100_us, .frames = 64});
  EXPECT_FALSE(c.on_event(at_us(5)));
  EXPECT_EQ(c.next_ready(), at_us(105));
  EXPECT_FALSE(c.on_event(at_us(50)));
  EXPECT_EQ(c.next_ready(), at_us(105));  // later completions do not push the timer out
  EXPECT_FALSE(c.expire(at_us(104)));
  EXPECT_TRUE(c.expire(at_us(105)));  // >= : exactly at the deadline
  EXPECT_EQ(c.stats().by_timer, 1u);
  EXPECT_EQ(c.next_ready(), std::nullopt);
  EXPECT_FALSE(c.expire(at_us(500)));  // nothing pending
  expect_identity(c);
}

TEST(IrqCoalescer, WhicheverComesFirst) {
  IrqCoalescer c({.usecs = 100_us, .frames = 3});
  c.on_event(at_us(0));
  c.on_event(at_us(10));
  EXPECT_TRUE(c.on_event(at_us(20)));  // frames first
  c.on_event(at_us(30));
  EXPECT_TRUE(c.expire(at_us(130)));  // then the timer
  EXPECT_EQ(c.stats().by_frames, 1u);
  EXPECT_EQ(c.stats().by_timer, 1u);
  expect_identity(c);
}

TEST(IrqCoalescer, LateEventFiresWhenTimerAlreadyExpired) {
  // A back-end that did not call expire() in time: the next completion sees the expired timer.
  IrqCoalescer c({.usecs = 100_us, .frames = 0});
  c.on_event(at_us(0));
  EXPECT_TRUE(c.on_event(at_us(150)));
  EXPECT_EQ(c.stats().by_timer, 1u);
}

TEST(IrqCoalescer, NapiMaskingDefersAndUnmaskFires) {
  // §7.2: IRQ -> mask -> poll -> napi_complete_done -> unmask.
  IrqCoalescer c({.usecs = 50_us, .frames = 2});
  c.on_event(at_us(0));
  EXPECT_TRUE(c.on_event(at_us(1)));
  c.mask();
  EXPECT_FALSE(c.on_event(at_us(2)));
  EXPECT_FALSE(c.on_event(at_us(3)));  // threshold met, but masked
  EXPECT_EQ(c.next_ready(), std::nullopt);
  EXPECT_FALSE(c.expire(at_us(100)));
  c.consumed(1);  // the poll took one of the two
  EXPECT_EQ(c.pending(), 1u);
  EXPECT_TRUE(c.unmask(at_us(60)));  // the remaining one has waited 58 us >= 50 us
  EXPECT_EQ(c.stats().on_unmask, 1u);

  c.mask();
  c.on_event(at_us(70));
  c.consumed(5);  // the poll took everything (over-count is clamped)
  EXPECT_FALSE(c.unmask(at_us(80)));
  EXPECT_EQ(c.pending(), 0u);
  expect_identity(c);
}

TEST(IrqCoalescer, RejectsBadParams) {
  EXPECT_THROW(IrqCoalescer({.usecs = Duration::zero(), .frames = 0}), InvalidParams);
  EXPECT_THROW(IrqCoalescer({.usecs = -(1_us), .frames = 1}), InvalidParams);
  auto err = IrqCoalescer::Params{.usecs = 1_us, .frames = -1}.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->key, "frames");
}

TEST(IrqCoalescer, RandomSequencesKeepInvariants) {
  // Every completion is either pending or covered by an interrupt, and no interrupt is ever
  // later than usecs after the first pending completion when expire() is called on time.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    const int64_t usecs = static_cast<int64_t>(rng() % 200);
    const int64_t frames = static_cast<int64_t>(rng() % 10) + (usecs == 0 ? 1 : 0);
    IrqCoalescer c({.usecs = Duration::us(usecs), .frames = frames});
    Time now = Time::zero();
    uint64_t delivered = 0;  // completions covered by interrupts
    uint64_t total = 0;
    for (int i = 0; i < 5000; ++i) {
      const Time next_event = now + Duration::us(static_cast<int64_t>(rng() % 80));
      if (auto t = c.next_ready(); t && *t <= next_event) {
        const uint64_t p = c.pending();
        ASSERT_TRUE(c.expire(*t)) << "seed " << seed;
        delivered += p;
      }
      now = next_event;
      const uint32_t n = static_cast<uint32_t>(rng() % 3);
      total += n;
      const uint64_t before = c.pending();
      if (c.on_event(now, n)) {
        delivered += before + n;
      }
      ASSERT_EQ(delivered + c.pending(), total) << "seed " << seed;
    }
    if (usecs > 0) {
      EXPECT_LE(c.stats().max_delay, Duration::us(usecs)) << "seed " << seed;
    }
    expect_identity(c);
  }
}

}  // namespace
}  // namespace nicsim::algo
