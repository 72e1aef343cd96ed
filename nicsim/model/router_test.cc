// Router: routing on dst_host, the forwarding cost on the shared core, TTL handling (RFC 1624),
// drops and per-interface counters (docs/models/router.md). A two-interface router between
// hand-driven wires: the test transmits into the wire the router's interface 0 reads and
// collects what interface 1 puts on its outgoing wire.
#include "nicsim/model/router.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/model/platform_nic.h"
#include "nicsim/testing/packet_factory.h"

namespace nicsim::model {
namespace {

using testing::PacketFactory;

// Every cost zero but the forwarding job's.
CpuCosts forwarding(Duration per_forward) {
  CpuCosts c;
  c.per_forward = per_forward;
  return c;
}

AnyQueue pfifo(int64_t limit = 1000) {
  return AnyQueue(algo::PfifoFast(algo::PfifoFast::Params{.limit = limit}));
}

struct Harness {
  explicit Harness(const CpuCosts& cpu, Duration qdisc_cost = Duration::zero(),
                   int64_t egress_limit = 1000, Rate egress_rate = Rate::gbit(1))
      : in0(Wire::Params{.rate = Rate::gbit(1)}),
        out0(Wire::Params{.rate = Rate::gbit(1)}),
        in1(Wire::Params{.rate = Rate::gbit(1)}),
        out1(Wire::Params{.rate = egress_rate}),
        router(params(cpu, qdisc_cost), nics(egress_limit)) {
    router.attach(0, &out0, &in0);
    router.attach(1, &out1, &in1);
  }
  static Router::Params params(const CpuCosts& cpu, Duration qdisc_cost) {
    Router::Params p;
    p.cpu = cpu;
    p.interfaces = {{}, {.qdisc_cost = qdisc_cost}};
    p.routes = {0, 1};  // host 0 behind interface 0, host 1 behind interface 1
    return p;
  }
  static std::vector<std::unique_ptr<Nic>> nics(int64_t egress_limit) {
    std::vector<std::unique_ptr<Nic>> n;
    n.push_back(std::make_unique<PlatformNic>(PlatformNic::Params{}, pfifo(), CpuCosts{}));
    n.push_back(
        std::make_unique<PlatformNic>(PlatformNic::Params{}, pfifo(egress_limit), CpuCosts{}));
    return n;
  }
  // Puts `p` on the wire into interface 0 at `at`.
  void offer(Packet&& p, Time at) { in0.transmit(std::move(p), at); }
  // Runs until nothing is left to do (or `until`), collecting interface 1's output.
  void run(Time until = Time::zero() + Duration::s(10)) {
    while (true) {
      std::optional<Time> t = router.next_event();
      if (const auto w = out1.next_ready(); w && (!t || *w < *t)) {
        t = w;
      }
      if (!t || *t > until) {
        return;
      }
      router.advance(*t);
      while (std::optional<Packet> p = out1.pop_arrived(*t)) {
        arrivals.push_back(*t);
        ids.push_back(p->id);
        ttl.push_back(p->payload ? p->payload->bytes[22] : 0);
      }
      max_in_flight = std::max(max_in_flight, router.in_flight());
    }
  }
  Wire in0, out0, in1, out1;
  Router router;
  std::vector<Time> arrivals;
  std::vector<uint64_t> ids;
  std::vector<uint8_t> ttl;
  size_t max_in_flight = 0;
};

Packet to_host(PacketFactory& f, uint16_t host, uint32_t len = 1514) {
  Packet p = f.make(len);
  p.dst_host = host;
  return p;
}

// An Ethernet + IPv4 header (20 bytes, no options) with a valid header checksum.
std::vector<uint8_t> ipv4_frame(uint8_t ttl) {
  std::vector<uint8_t> b(14 + 20 + 26, 0);
  b[12] = 0x08;
  b[13] = 0x00;
  const uint8_t ip[20] = {0x45, 0x00, 0x00, 0x2e, 0x12, 0x34, 0x40, 0x00, ttl, 17,
                          0x00, 0x00, 10,   0,    0,    1,    10,   0,    1,   2};
  std::copy(ip, ip + 20, b.begin() + 14);
  uint32_t sum = 0;
  for (size_t i = 0; i < 20; i += 2) {
    sum += static_cast<uint32_t>((b[14 + i] << 8) | b[14 + i + 1]);
  }
  while (sum >> 16) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  const auto csum = static_cast<uint16_t>(~sum);
  b[24] = static_cast<uint8_t>(csum >> 8);
  b[25] = static_cast<uint8_t>(csum & 0xff);
  return b;
}

// The ones' complement sum over the IPv4 header is 0xffff exactly when its checksum is right.
bool ipv4_checksum_ok(const std::vector<uint8_t>& b) {
  uint32_t sum = 0;
  for (size_t i = 0; i < 20; i += 2) {
    sum += static_cast<uint32_t>((b[14 + i] << 8) | b[14 + i + 1]);
  }
  while (sum >> 16) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return sum == 0xffff;
}

TEST(DecrementTtl, Ipv4TtlAndChecksumAgreeWithAFullRecompute) {
  for (const uint8_t ttl : {2, 64, 128, 255}) {
    PayloadBuffer f{ipv4_frame(ttl)};
    ASSERT_TRUE(ipv4_checksum_ok(f.bytes));
    EXPECT_TRUE(decrement_ttl(f));
    EXPECT_EQ(f.bytes[22], ttl - 1);
    EXPECT_TRUE(ipv4_checksum_ok(f.bytes)) << "ttl " << int(ttl);
    EXPECT_EQ(f.bytes, PayloadBuffer{ipv4_frame(static_cast<uint8_t>(ttl - 1))}.bytes);
  }
}

TEST(DecrementTtl, ExpiredIpv4AndIpv6AreRefusedUntouchedOtherFramesPass) {
  for (const uint8_t ttl : {0, 1}) {
    PayloadBuffer f{ipv4_frame(ttl)};
    const std::vector<uint8_t> before = f.bytes;
    EXPECT_FALSE(decrement_ttl(f));
    EXPECT_EQ(f.bytes, before);
  }
  PayloadBuffer v6{std::vector<uint8_t>(14 + 40, 0)};
  v6.bytes[12] = 0x86;
  v6.bytes[13] = 0xDD;
  v6.bytes[21] = 2;  // hop limit
  EXPECT_TRUE(decrement_ttl(v6));
  EXPECT_EQ(v6.bytes[21], 1);
  EXPECT_FALSE(decrement_ttl(v6));
  PayloadBuffer arp{std::vector<uint8_t>(42, 0)};
  arp.bytes[12] = 0x08;
  arp.bytes[13] = 0x06;
  const std::vector<uint8_t> before = arp.bytes;
  EXPECT_TRUE(decrement_ttl(arp));
  EXPECT_EQ(arp.bytes, before);
}

TEST(Router, ForwardsOnDstHostAndCountsPerInterface) {
  Harness h(forwarding(2_us));
  PacketFactory f;
  for (int i = 0; i < 5; ++i) {
    h.offer(to_host(f, 1), Time::zero());
  }
  h.run();
  EXPECT_EQ(h.arrivals.size(), 5u);
  EXPECT_EQ(h.router.stats().forwarded, 5u);
  EXPECT_EQ(h.router.interface_stats(0).received, 5u);
  EXPECT_EQ(h.router.interface_stats(1).forwarded_out, 5u);
  EXPECT_EQ(h.router.interface_stats(0).forwarded_out, 0u);
  EXPECT_EQ(h.router.cpu().stats().busy, 5 * 2_us);
  EXPECT_EQ(h.router.nic(1).counters().tx_packets, 5u);
}

TEST(Router, ForwardingAndQdiscCostDelayAnIsolatedFrameByExactlyTheirSum) {
  PacketFactory f;
  Harness free(CpuCosts{});
  free.offer(to_host(f, 1), Time::zero());
  free.run();
  Harness costly(forwarding(7_us), 3_us);
  costly.offer(to_host(f, 1), Time::zero());
  costly.run();
  ASSERT_EQ(free.arrivals.size(), 1u);
  ASSERT_EQ(costly.arrivals.size(), 1u);
  EXPECT_EQ(costly.arrivals[0] - free.arrivals[0], 10_us);
}

TEST(Router, NoRouteAndUnknownHostAreDroppedAndCounted) {
  Harness h(forwarding(1_us));
  PacketFactory f;
  h.offer(to_host(f, 7), Time::zero());  // beyond the table
  h.run();
  EXPECT_TRUE(h.arrivals.empty());
  EXPECT_EQ(h.router.stats().no_route, 1u);
  EXPECT_EQ(h.router.stats().forwarded, 0u);
  EXPECT_EQ(h.router.cpu().stats().busy, 1_us);  // the lookup ran
}

TEST(Router, RealFramesLoseOneTtlAndExpiredOnesAreDropped) {
  Harness h(CpuCosts{});
  PacketFactory f;
  for (const uint8_t ttl : {64, 1, 2}) {
    Packet p = to_host(f, 1, 60);
    p.payload = Payload(new PayloadBuffer{ipv4_frame(ttl)});
    h.offer(std::move(p), Time::zero());
  }
  h.run();
  EXPECT_EQ(h.router.stats().ttl_expired, 1u);
  EXPECT_EQ(h.router.stats().forwarded, 2u);
  EXPECT_EQ(h.ttl, (std::vector<uint8_t>{63, 1}));
}

TEST(Router, EgressQdiscRefusalsAreCountedOnTheEgressInterface) {
  // A 1 Gbit/s burst into a 10 Mbit/s egress with a 10-packet qdisc and a 256-frame ring.
  Harness h(CpuCosts{}, Duration::zero(), 10, Rate::mbit(10));
  PacketFactory f;
  for (int i = 0; i < 400; ++i) {
    h.offer(to_host(f, 1), Time::zero());
  }
  h.run(Time::zero() + Duration::ms(1));
  const Router::InterfaceStats& s = h.router.interface_stats(1);
  EXPECT_GT(s.egress_refused, 0u);
  EXPECT_EQ(s.egress_refused + s.forwarded_out, h.router.interface_stats(0).received);
  EXPECT_EQ(h.router.stats().egress_refused, s.egress_refused);
}

// A core slower than the line rate caps forwarding at 1 / per_forward; the excess stays in
// the RX ring (NAPI runs on the same core, so the forwarding backlog stays bounded) and
// overflows there, as on an overloaded router.
TEST(Router, ASlowCoreCapsTheForwardingRateAndOverflowsTheRxRing) {
  Harness h(forwarding(20_us));
  PacketFactory f;
  const Duration frame_time = Duration::ns(12'304);  // 1514 B at 1 Gbit/s with overhead
  const int frames = 5000;
  for (int i = 0; i < frames; ++i) {
    h.offer(to_host(f, 1), Time::zero() + frame_time * i);
  }
  h.run();
  const uint64_t forwarded = h.router.stats().forwarded;
  const uint64_t rx_drops = h.router.nic(0).counters().rx_drops;
  EXPECT_EQ(forwarded + rx_drops, static_cast<uint64_t>(frames));
  EXPECT_GT(rx_drops, 0u);
  // While overloaded, consecutive departures are exactly one forwarding job apart.
  ASSERT_GT(h.arrivals.size(), 1000u);
  EXPECT_EQ(h.arrivals[1000] - h.arrivals[999], 20_us);
  EXPECT_LE(h.max_in_flight, 256u);
}

TEST(Router, InvalidParamsAreRefused) {
  Router::Params p = Harness::params(CpuCosts{}, Duration::zero());
  p.routes = {0, 2};
  EXPECT_THROW(Router(p, Harness::nics(10)), InvalidParams);
  p = Harness::params(CpuCosts{}, Duration::zero());
  EXPECT_THROW(Router(p, {}), std::invalid_argument);
  p.cpu.per_forward = Duration::ns(-1);
  EXPECT_THROW(Router(p, Harness::nics(10)), InvalidParams);
}

}  // namespace
}  // namespace nicsim::model
