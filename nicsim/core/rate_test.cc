#include "nicsim/core/rate.h"

#include <gtest/gtest.h>

namespace nicsim {
namespace {

TEST(Rate, TransmitTimeIsExactOrRoundedUp) {
  // 1500 B at 100 Mbit/s = 12000 bits / 1e8 = 120 us exactly.
  EXPECT_EQ((100_mbit).transmit_time(1500), 120_us);
  // 64 B at 100 Gbit/s = 5.12 ns -> rounded up to 6 ns.
  EXPECT_EQ((100_gbit).transmit_time(64), 6_ns);
  // 1 B at 3 bit/s = 2.666.. s -> 2666666667 ns.
  EXPECT_EQ(Rate::bps(3).transmit_time(1).count_ns(), 2'666'666'667);
  EXPECT_EQ((1_gbit).transmit_time(0), Duration::zero());
}

TEST(Rate, CumulativeBytesNeverDrift) {
  // Charging from the cumulative count keeps the long-run rate exact even when each packet
  // alone would round.
  const Rate r = 100_gbit;
  Bytes total = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    total += 64;
  }
  EXPECT_EQ(r.transmit_time(total), Duration::ns(5'120'000));
}

TEST(Rate, BytesIn) {
  EXPECT_EQ((100_mbit).bytes_in(1_ms), 12'500u);
  EXPECT_EQ((100_mbit).bytes_in(Duration::ns(-5)), 0u);
  EXPECT_EQ(Rate::bytes_per_sec(1000).bits_per_sec(), 8000u);
  EXPECT_EQ((10_gbit).bytes_in(1_s), 1'250'000'000u);
  // Large values do not overflow (128-bit intermediate).
  EXPECT_EQ((400_gbit).bytes_in(1000_s), 50'000'000'000'000u);
}

TEST(Rate, ByteLiterals) {
  EXPECT_EQ(16_KiB, 16384u);
  EXPECT_EQ(32_MiB, 33'554'432u);
}

}  // namespace
}  // namespace nicsim
