// IntelItr: pins igb_update_itr / igb_set_itr and ixgbe_update_itr / ixgbe_set_itr
// (drivers/net/ethernet/intel/{igb/igb_main.c,ixgbe/ixgbe_main.c}) on crafted poll totals.
#include "nicsim/algo/intel_itr.h"

#include <gtest/gtest.h>

namespace nicsim::algo {
namespace {

using L = IntelItr::Latency;
using C = IntelItr::Counts;

TEST(IntelItrIgb, LowestLatencyTransitions) {
  EXPECT_EQ(IntelItr::igb_update(L::kLowest, C{1, 9000}), L::kBulk);  // > 8000 B/packet (TSO)
  EXPECT_EQ(IntelItr::igb_update(L::kLowest, C{4, 513}), L::kLow);    // < 5 packets, > 512 B
  EXPECT_EQ(IntelItr::igb_update(L::kLowest, C{4, 512}), L::kLowest);
  EXPECT_EQ(IntelItr::igb_update(L::kLowest, C{5, 6000}), L::kLowest);
  EXPECT_EQ(IntelItr::igb_update(L::kLowest, C{0, 0}), L::kLowest);  // no packets: unchanged
}

TEST(IntelItrIgb, LowLatencyTransitions) {
  // bytes > 10000: bulk if < 10 packets or > 1200 B/packet; lowest if > 35 packets.
  EXPECT_EQ(IntelItr::igb_update(L::kLow, C{9, 10001}), L::kBulk);
  EXPECT_EQ(IntelItr::igb_update(L::kLow, C{20, 20 * 1201}), L::kBulk);
  EXPECT_EQ(IntelItr::igb_update(L::kLow, C{36, 36 * 300}), L::kLowest);
  EXPECT_EQ(IntelItr::igb_update(L::kLow, C{35, 35 * 300}), L::kLow);
  // bytes <= 10000: bulk above 2000 B/packet; lowest for <= 2 packets under 512 B.
  EXPECT_EQ(IntelItr::igb_update(L::kLow, C{4, 8004}), L::kBulk);
  EXPECT_EQ(IntelItr::igb_update(L::kLow, C{2, 511}), L::kLowest);
  EXPECT_EQ(IntelItr::igb_update(L::kLow, C{3, 300}), L::kLow);
}

TEST(IntelItrIgb, BulkLatencyTransitions) {
  EXPECT_EQ(IntelItr::igb_update(L::kBulk, C{36, 25001}), L::kLow);
  EXPECT_EQ(IntelItr::igb_update(L::kBulk, C{35, 60000}), L::kBulk);
  EXPECT_EQ(IntelItr::igb_update(L::kBulk, C{1, 1499}), L::kLow);
  EXPECT_EQ(IntelItr::igb_update(L::kBulk, C{2, 3000}), L::kBulk);
}

TEST(IntelItrIgb, ConservativeModeNeverRunsAtSeventyThousand) {
  IntelItr dyn({.mode = IntelItr::Mode::kIgb});
  IntelItr cons({.mode = IntelItr::Mode::kIgbConservative});
  EXPECT_EQ(dyn.interval(), Duration::us(162));  // IGB_START_ITR 648 (~6,000 ints/s)
  const IntelItr::Sample small{.time = Time::zero(), .rx = {1, 64}, .tx = {}};
  EXPECT_TRUE(dyn.update(small));
  EXPECT_EQ(dyn.state().rx_range, L::kLowest);
  EXPECT_EQ(dyn.interval(), Duration::us(14));  // IGB_70K_ITR 56
  EXPECT_TRUE(cons.update(small));
  EXPECT_EQ(cons.interval(), Duration::us(49));  // lowest → low: IGB_20K_ITR 196
}

TEST(IntelItrIgb, BulkTrafficGoesToFourThousandAndTxCountsToo) {
  IntelItr itr({.mode = IntelItr::Mode::kIgbConservative});
  // 20 full frames per poll: lowest (start) stays lowest (>= 5 packets, 1514 B each)...
  itr.update({.time = Time::zero(), .rx = {20, 20 * 1514}, .tx = {}});
  EXPECT_EQ(itr.state().rx_range, L::kLowest);
  EXPECT_EQ(itr.interval(), Duration::us(49));  // conservative
  // ...a TSO send (TX ring: 64 KB in one packet) takes the vector to bulk: max(rx, tx).
  itr.update({.time = Time::zero(), .rx = {20, 20 * 1514}, .tx = {1, 65000}});
  EXPECT_EQ(itr.state().tx_range, L::kBulk);
  EXPECT_EQ(itr.interval(), Duration::us(245));  // IGB_4K_ITR 980
}

TEST(IntelItrIgb, NonGigabitLinkIsFixedAtFourThousand) {
  IntelItr itr({.mode = IntelItr::Mode::kIgb, .link_mbps = 100});
  itr.update({.time = Time::zero(), .rx = {1, 64}, .tx = {}});
  EXPECT_EQ(itr.interval(), Duration::us(245));
}

TEST(IntelItrIxgbe, StartsAtTwentyThousandAndRestartsWhenStale) {
  IntelItr itr({.mode = IntelItr::Mode::kIxgbe, .link_mbps = 10000, .hz = 250});
  EXPECT_EQ(itr.interval(), Duration::us(50));  // IXGBE_20K_ITR
  // First update (jiffy 0, next_update 0): not stale. 1 packet of 64 B: latency mode, sized.
  itr.update({.time = Time::zero(), .rx = {1, 64}, .tx = {}});
  // 64 B: 64*40 + 2720 = 5280, halved 2640, /512 rounded up = 6 → 12 us; TX (no packets):
  // current 50 + 2 = 52 | latency. min → 12.
  EXPECT_EQ(itr.state().rx_itr, IntelItr::kIxgbeLatency | 12);
  EXPECT_EQ(itr.interval(), Duration::us(12));
  // Two jiffies later both rings are stale: 10 us, latency.
  itr.update({.time = Time::from_ns(8'000'001), .rx = {100, 100 * 1514}, .tx = {}});
  EXPECT_EQ(itr.state().rx_itr, IntelItr::kIxgbeLatency | 10);
  EXPECT_EQ(itr.interval(), Duration::us(10));
}

TEST(IntelItrIxgbe, PacketCountBands) {
  int64_t next = 5;
  const int64_t q = 40 << 2;                                              // current 40 us
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, q, C{0, 0}, 10000), 42u);  // +2
  EXPECT_EQ(IntelItr::ixgbe_update(0x80, next, 5, q, C{0, 0}, 10000), 0x80u | 42u);
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, q, C{4, 6000}, 10000), 42u);         // 4..47
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, 126 << 2, C{47, 1}, 10000), 126u);   // capped
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, q, C{48, 48 * 1514}, 10000), 40u);   // keep
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, q, C{96, 96 * 1514}, 10000), 20u);   // half
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, 12 << 2, C{200, 200}, 10000), 10u);  // min 10
  // >= 256 packets: bulk, sized: 1514 B → 1514*5 + 22420 = 29990 → ceil(/512) = 59 → 118 us.
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, q, C{256, 256 * 1514}, 10000), 118u);
  // >= 1968 B plateau: 32256 → 63 → 126 us; at 1G capped 8064 → /128 → 63 → 126 us.
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, q, C{300, 300 * 9000}, 10000), 126u);
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, q, C{300, 300 * 9000}, 1000), 126u);
  // 1G, 64-byte frames, bulk: 5280 → 8064 cap not hit → ceil(5280/128) = 42 → 84 us.
  EXPECT_EQ(IntelItr::ixgbe_update(0, next, 5, q, C{300, 300 * 64}, 1000), 84u);
  EXPECT_EQ(next, 6);  // next update within the next jiffy
}

TEST(IntelItrIxgbe, VectorTakesTheSmallerRingAndTwoMicrosecondSteps) {
  IntelItr itr({.mode = IntelItr::Mode::kIxgbe, .link_mbps = 10000, .hz = 1000});
  // 96..255 packets halve the current 50 us: 25 → (25 << 2) = 100 → EITR 2 us steps → 24 us.
  itr.update({.time = Time::zero(), .rx = {100, 100 * 1514}, .tx = {100, 100 * 66}});
  EXPECT_EQ(itr.state().ixgbe_itr, 25 << 2);
  EXPECT_EQ(itr.interval(), Duration::us(24));
  EXPECT_EQ(itr.stats().changes, 1u);
}

TEST(IntelItr, RejectsBadParams) {
  EXPECT_TRUE(IntelItr::Params{.link_mbps = 0}.validate().has_value());
  EXPECT_TRUE(IntelItr::Params{.hz = 0}.validate().has_value());
  EXPECT_FALSE(IntelItr::Params{}.validate().has_value());
}

}  // namespace
}  // namespace nicsim::algo
