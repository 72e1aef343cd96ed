// Fifo: pins sch_fifo.c behaviour (pfifo packet limit, bfifo byte limit, tail drop).
#include "nicsim/algo/fifo.h"

#include <gtest/gtest.h>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"
#include "nicsim/testing/recording_observer.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;

TEST(Fifo, DefaultLimitIsTxqueuelen) { EXPECT_EQ(Fifo::Params{}.limit_packets, 1000); }

TEST(Fifo, PacketLimitTailDrops) {
  Fifo q(Fifo::Params{.limit_packets = 3, .limit_bytes = 0});
  PacketFactory f;
  const Time t = Time::zero();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(q.enqueue(f.make(1000), t), Verdict::kQueued);
  }
  EXPECT_EQ(q.enqueue(f.make(64), t), Verdict::kDropped);  // qlen == limit: pfifo drops
  EXPECT_EQ(q.backlog_packets(), 3u);
  EXPECT_EQ(q.stats().dropped_packets, 1u);
  EXPECT_EQ(q.stats().dropped_bytes, 64u);
  testing::expect_stats_identities(q);
}

TEST(Fifo, ByteLimitAcceptsExactFit) {
  // bfifo accepts while backlog + len <= limit.
  Fifo q(Fifo::Params{.limit_packets = 0, .limit_bytes = 3000});
  PacketFactory f;
  const Time t = Time::zero();
  EXPECT_EQ(q.enqueue(f.make(1500), t), Verdict::kQueued);
  EXPECT_EQ(q.enqueue(f.make(1500), t), Verdict::kQueued);  // exactly 3000
  EXPECT_EQ(q.enqueue(f.make(1), t), Verdict::kDropped);
  EXPECT_EQ(q.backlog_bytes(), 3000u);
}

TEST(Fifo, FifoOrderAndTimestamps) {
  Fifo q;
  PacketFactory f;
  testing::RecordingObserver obs;
  q.set_observer(&obs);
  q.enqueue(f.make(100), Time::from_ns(10));
  q.enqueue(f.make(200), Time::from_ns(20));
  ASSERT_NE(q.peek(Time::from_ns(30)), nullptr);
  EXPECT_EQ(q.peek(Time::from_ns(30))->id, 1u);
  auto a = q.dequeue(Time::from_ns(30));
  auto b = q.dequeue(Time::from_ns(40));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->id, 1u);
  EXPECT_EQ(a->enqueue_ts, Time::from_ns(10));
  EXPECT_EQ(b->id, 2u);
  EXPECT_FALSE(q.dequeue(Time::from_ns(50)));
  EXPECT_EQ(q.next_ready(Time::from_ns(50)), std::nullopt);
  EXPECT_EQ(obs.count(testing::RecordingObserver::Event::kEnqueue), 2u);
  EXPECT_EQ(obs.count(testing::RecordingObserver::Event::kDequeue), 2u);
}

TEST(Fifo, RejectsBadParams) {
  EXPECT_THROW(Fifo(Fifo::Params{.limit_packets = -1}), InvalidParams);
  EXPECT_THROW(Fifo(Fifo::Params{.limit_packets = 0, .limit_bytes = 0}), InvalidParams);
  auto err = Fifo::Params{.limit_packets = 10, .limit_bytes = -5}.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->key, "limit_bytes");
}

TEST(Fifo, Properties) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    Fifo q(Fifo::Params{.limit_packets = 50, .limit_bytes = 40'000});
    testing::check_queue_properties(q, {.seed = seed});
  }
}

}  // namespace
}  // namespace nicsim::algo
