// The element contract: AnyQueue wraps any QueueElement and forwards every operation.
#include "nicsim/core/element.h"

#include <gtest/gtest.h>

#include <deque>

namespace nicsim {
namespace {

// A minimal unbounded FIFO used only to exercise the contract in core.
class TinyQueue {
 public:
  Verdict enqueue(Packet&& p, Time now) {
    ++stats_.enqueued_packets;
    stats_.enqueued_bytes += p.len;
    p.enqueue_ts = now;
    bytes_ += p.len;
    q_.push_back(std::move(p));
    return Verdict::kQueued;
  }
  std::optional<Packet> dequeue(Time) {
    if (q_.empty()) {
      return std::nullopt;
    }
    Packet p = std::move(q_.front());
    q_.pop_front();
    bytes_ -= p.len;
    ++stats_.dequeued_packets;
    stats_.dequeued_bytes += p.len;
    return p;
  }
  const Packet* peek(Time) const { return q_.empty() ? nullptr : &q_.front(); }
  std::optional<Time> next_ready(Time now) const {
    return q_.empty() ? std::nullopt : std::optional<Time>(now);
  }
  uint64_t backlog_packets() const { return q_.size(); }
  uint64_t backlog_bytes() const { return bytes_; }
  const QueueStats& stats() const { return stats_; }
  void set_observer(Observer*) {}

 private:
  std::deque<Packet> q_;
  uint64_t bytes_ = 0;
  QueueStats stats_;
};
static_assert(QueueElement<TinyQueue>);

Packet make(uint64_t id, uint32_t len) {
  Packet p;
  p.id = id;
  p.len = len;
  return p;
}

TEST(AnyQueue, ForwardsToTheWrappedElement) {
  AnyQueue q = AnyQueue::make<TinyQueue>();
  ASSERT_TRUE(q);
  EXPECT_EQ(q.enqueue(make(1, 100), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(q.enqueue(make(2, 200), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(q.backlog_packets(), 2u);
  EXPECT_EQ(q.backlog_bytes(), 300u);
  EXPECT_EQ(q.next_ready(Time::from_ns(5)), Time::from_ns(5));
  ASSERT_NE(q.peek(Time::zero()), nullptr);
  EXPECT_EQ(q.peek(Time::zero())->id, 1u);
  EXPECT_NE(q.get<TinyQueue>(), nullptr);
  EXPECT_EQ(q.stats().enqueued_bytes, 300u);
}

TEST(Burst, DequeueAndEnqueueBurst) {
  TinyQueue q;
  std::vector<Packet> in;
  for (uint64_t i = 1; i <= 5; ++i) {
    in.push_back(make(i, 64));
  }
  EXPECT_EQ(enqueue_burst(q, std::span<Packet>(in), Time::zero()), 5u);
  std::vector<Packet> out(3);
  EXPECT_EQ(dequeue_burst(q, std::span<Packet>(out), Time::zero()), 3u);
  EXPECT_EQ(out[2].id, 3u);
  AnyQueue any(std::move(q));
  EXPECT_EQ(any.dequeue_burst(std::span<Packet>(out), Time::zero()), 2u);
  EXPECT_EQ(out[1].id, 5u);
}

}  // namespace
}  // namespace nicsim
