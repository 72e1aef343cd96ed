// Loopback: TcpSender/TcpReceiver pairs through a drop-tail bottleneck (loopback_harness.h).
// Checks end-to-end properties the unit tests cannot: utilisation, fairness, loss recovery,
// determinism. Bands, not exact values (the exact rules are pinned in the unit tests).
#include <gtest/gtest.h>

#include <cmath>

#include "nicsim/sim/tcp/loopback_harness.h"

namespace nicsim::sim::tcp {
namespace {

using testing::LinkConfig;
using testing::Loopback;

[[maybe_unused]] double max_goodput_bps(Rate r, uint32_t mss) {
  // Frame = 66 bytes of headers (Ethernet, IP, TCP with timestamps) + mss payload.
  return static_cast<double>(r.bits_per_sec()) * mss / (mss + 66.0);
}

TEST(Loopback, SmokeSingleFlow) {
  LinkConfig link{.rate = Rate::mbit(10), .delay = Duration::ms(10), .queue_limit_bytes = 30'000};
  Loopback lb(link, {Params{}}, Params{});
  lb.run_until(Time::zero() + Duration::s(5));
  const auto& st = lb.receiver(0).stats();
  std::printf("bytes=%lu drops=%lu cwnd=%u retr=%lu rto=%lu fr=%lu events=%lu\n",
              static_cast<unsigned long>(st.bytes_received),
              static_cast<unsigned long>(lb.queue_drops()), lb.sender(0).cwnd(),
              static_cast<unsigned long>(lb.sender(0).stats().retransmits),
              static_cast<unsigned long>(lb.sender(0).stats().rto_count),
              static_cast<unsigned long>(lb.sender(0).stats().fast_recoveries),
              static_cast<unsigned long>(lb.events()));
  EXPECT_GT(st.bytes_received, 0u);
}

}  // namespace
}  // namespace nicsim::sim::tcp
