// Wire: serialisation with Ethernet overhead, propagation delay, loss, jitter, PAUSE
// (issue 3 item 6; docs/mechanisms/trade-offs.md §10 for PAUSE).
#include "nicsim/model/wire.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "nicsim/testing/packet_factory.h"

namespace nicsim::model {
namespace {

using testing::PacketFactory;

TEST(Wire, FullFrameAt100MbitTakes123us) {
  Wire w({.rate = Rate::mbit(100), .delay = 5_ms});
  PacketFactory f;
  auto t = w.transmit(f.make(1514), Time::zero());
  EXPECT_EQ(t.first_bit, Time::zero());
  EXPECT_EQ(t.last_bit, Time::zero() + Duration::ns(123'040));  // 1538 byte times
  EXPECT_EQ(w.next_ready(), Time::zero() + Duration::ns(123'040) + 5_ms);
  EXPECT_FALSE(w.pop_arrived(Time::zero() + 5_ms));
  auto p = w.pop_arrived(Time::zero() + 6_ms);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->stamp_at(Stage::kWireEnd), Time::zero() + Duration::ns(123'040) + 5_ms);
}

TEST(Wire, BackToBackFramesQueueAndMinimumFrameIsPadded) {
  Wire w({.rate = Rate::gbit(1)});
  PacketFactory f;
  auto a = w.transmit(f.make(42), Time::zero());  // ARP-sized: padded to 64 + 20 = 84 bytes
  EXPECT_EQ(a.last_bit, Time::zero() + Duration::ns(672));
  auto b = w.transmit(f.make(1514), Time::zero());  // waits for the first
  EXPECT_EQ(b.first_bit, a.last_bit);
  EXPECT_EQ(b.last_bit, Time::zero() + Duration::ns(672 + 12'304));
}

TEST(Wire, CumulativeChargingDoesNotDrift) {
  // 64-byte frames at 10 Gbit/s: 84 byte times = 67.2 ns each; per-frame rounding would add
  // 0.8 ns per frame, the cumulative count adds nothing.
  Wire w({.rate = Rate::gbit(10)});
  PacketFactory f;
  Wire::TxTiming t{};
  for (int i = 0; i < 1000; ++i) {
    t = w.transmit(f.make(60), Time::zero());
  }
  EXPECT_EQ(t.last_bit, Time::zero() + Duration::ns(67'200));
  EXPECT_EQ(w.stats().wire_bytes, 84'000u);
}

TEST(Wire, LossIsSeededAndCounted) {
  auto run = [](uint64_t seed) {
    Wire w({.rate = Rate::gbit(1), .loss = 0.1, .seed = seed});
    PacketFactory f;
    for (int i = 0; i < 10'000; ++i) {
      w.transmit(f.make(1514), Time::zero());
    }
    return w.stats().lost;
  };
  const uint64_t lost = run(7);
  EXPECT_EQ(lost, run(7));  // reproducible
  EXPECT_GT(lost, 900u);
  EXPECT_LT(lost, 1100u);
}

TEST(Wire, JitterNeverReorders) {
  Wire w({.rate = Rate::gbit(1), .delay = 1_ms, .jitter = 500_us, .seed = 3});
  PacketFactory f;
  for (int i = 0; i < 1000; ++i) {
    w.transmit(f.make(1514), Time::zero() + Duration::us(i));
  }
  uint64_t last_id = 0;
  Time last = Time::zero();
  while (auto t = w.next_ready()) {
    EXPECT_GE(*t, last);
    last = *t;
    auto p = w.pop_arrived(*t);
    ASSERT_TRUE(p);
    EXPECT_GT(p->id, last_id);
    last_id = p->id;
  }
  EXPECT_EQ(w.stats().delivered, 1000u);
}

TEST(Wire, PauseHoldsTheNextFrame) {
  Wire w({.rate = Rate::mbit(100)});
  PacketFactory f;
  w.transmit(f.make(1514), Time::zero());
  w.pause_until(Time::zero() + 1_ms);
  auto t = w.transmit(f.make(1514), Time::zero());
  EXPECT_EQ(t.first_bit, Time::zero() + 1_ms);
  EXPECT_EQ(w.stats().paused, 1_ms - Duration::ns(123'040));
}

// The observer sees every frame entering the wire at its first bit (the emulator's pcap
// export), lost frames too, and each loss at the lost frame's last bit.
TEST(Wire, ObserverSeesFramesAtTheirFirstBit) {
  struct Seen final : Observer {
    std::vector<std::pair<uint64_t, Time>> entered;
    std::vector<Time> lost;
    void on_enqueue(Time now, const Packet& p) override { entered.emplace_back(p.id, now); }
    void on_drop(Time now, const Packet&, DropReason why) override {
      EXPECT_EQ(why, DropReason::kWireLoss);
      lost.push_back(now);
    }
  } seen;
  Wire w({.rate = Rate::gbit(1), .loss = 0.5, .seed = 3});
  w.set_observer(&seen);
  PacketFactory f;
  for (int i = 0; i < 20; ++i) {
    w.transmit(f.make(42), Time::zero());  // 672 ns each, back to back
  }
  ASSERT_EQ(seen.entered.size(), 20u);
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(seen.entered[i].second, Time::zero() + Duration::ns(672 * static_cast<int64_t>(i)));
  }
  EXPECT_EQ(seen.lost.size(), w.stats().lost);
  EXPECT_GT(seen.lost.size(), 0u);
  EXPECT_EQ(w.in_flight() + w.stats().lost, 20u);
}

TEST(Wire, RejectsBadParams) {
  EXPECT_THROW(Wire({.rate = Rate::bps(0)}), InvalidParams);
  EXPECT_THROW(Wire({.loss = 1.0}), InvalidParams);
  EXPECT_THROW(Wire({.delay = -(1_ms)}), InvalidParams);
  auto e = Wire::Params{.jitter = -(1_us)}.validate();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->key, "jitter");
}

}  // namespace
}  // namespace nicsim::model
