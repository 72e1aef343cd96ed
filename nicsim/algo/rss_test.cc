// Rss: the Toeplitz hash against the Intel 82599 datasheet's RSS verification suite
// (§7.1.2.8.3, Microsoft's example key; the vectors DPDK's app/test/test_thash.c also checks),
// the Linux drivers' default indirection tables (ixgbe/mlx5 modulo, igb blocks), UDP placed by
// addresses unless rx-flow-hash udp4 includes ports, and parameter errors.
#include "nicsim/algo/rss.h"

#include <gtest/gtest.h>

#include <array>
#include <set>

namespace nicsim::algo {
namespace {

constexpr uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return a << 24 | b << 16 | c << 8 | d;
}

// 82599 datasheet §7.1.2.8.3, IPv4: destination address/port, source address/port, the hash
// of the address pair and of the TCP four-tuple.
struct Vector {
  uint32_t dst_ip;
  uint16_t dst_port;
  uint32_t src_ip;
  uint16_t src_port;
  uint32_t hash_ip;
  uint32_t hash_tcp;
};
constexpr std::array<Vector, 5> kVectors = {{
    {ip(161, 142, 100, 80), 1766, ip(66, 9, 149, 187), 2794, 0x323e8fc2, 0x51ccc178},
    {ip(65, 69, 140, 83), 4739, ip(199, 92, 111, 2), 14230, 0xd718262a, 0xc626b0ea},
    {ip(12, 22, 207, 184), 38024, ip(24, 19, 198, 95), 12898, 0xd2d0a5de, 0x5c2b394a},
    {ip(209, 142, 163, 6), 2217, ip(38, 27, 205, 30), 48228, 0x82989176, 0xafc7327f},
    {ip(202, 188, 127, 2), 1303, ip(153, 39, 163, 191), 44251, 0x5d1809c5, 0x10e828a2},
}};

TEST(Rss, VerificationSuiteTcpFourTuple) {
  Rss rss;
  for (const auto& v : kVectors) {
    Rss::Flow f{v.src_ip, v.dst_ip, v.src_port, v.dst_port, Rss::Proto::kTcp};
    EXPECT_EQ(rss.hash(f), v.hash_tcp) << std::hex << v.src_ip;
  }
}

TEST(Rss, VerificationSuiteAddressesOnly) {
  Rss rss;
  for (const auto& v : kVectors) {
    Rss::Flow f{v.src_ip, v.dst_ip, v.src_port, v.dst_port, Rss::Proto::kOther};
    EXPECT_EQ(rss.hash(f), v.hash_ip) << std::hex << v.src_ip;
  }
}

TEST(Rss, BytewiseTableMatchesBitwiseDefinition) {
  // The lookup-table hash equals Microsoft's bit-by-bit pseudocode for any key.
  Rss::Params p;
  p.key = Rss::key_from_seed(42);
  Rss rss(p);
  for (uint32_t i = 0; i < 200; ++i) {
    Rss::Flow f{0xC6120000u + i * 7919u, 0x0A000001u ^ (i << 9), static_cast<uint16_t>(i * 31),
                static_cast<uint16_t>(5201 + i), Rss::Proto::kTcp};
    std::array<uint8_t, 12> in = {
        static_cast<uint8_t>(f.src_ip >> 24),  static_cast<uint8_t>(f.src_ip >> 16),
        static_cast<uint8_t>(f.src_ip >> 8),   static_cast<uint8_t>(f.src_ip),
        static_cast<uint8_t>(f.dst_ip >> 24),  static_cast<uint8_t>(f.dst_ip >> 16),
        static_cast<uint8_t>(f.dst_ip >> 8),   static_cast<uint8_t>(f.dst_ip),
        static_cast<uint8_t>(f.src_port >> 8), static_cast<uint8_t>(f.src_port),
        static_cast<uint8_t>(f.dst_port >> 8), static_cast<uint8_t>(f.dst_port)};
    EXPECT_EQ(rss.hash(f), Rss::toeplitz(p.key, in));
  }
}

TEST(Rss, UdpHashesAddressesUnlessPortsEnabled) {
  const auto& v = kVectors[0];
  Rss::Flow udp{v.src_ip, v.dst_ip, v.src_port, v.dst_port, Rss::Proto::kUdp};
  EXPECT_EQ(Rss().hash(udp), v.hash_ip);  // igb/ixgbe default: no UDP four-tuple
  Rss::Params p;
  p.hash_udp_ports = true;  // ethtool -N rx-flow-hash udp4 sdfn
  EXPECT_EQ(Rss(p).hash(udp), v.hash_tcp);
}

TEST(Rss, DefaultTablesAsTheDriversWriteThem) {
  // ixgbe_setup_reta / mlx5: i mod queues.
  auto mod = Rss::default_table(3, 128, Rss::Fill::kModulo);
  EXPECT_EQ(mod[0], 0u);
  EXPECT_EQ(mod[1], 1u);
  EXPECT_EQ(mod[2], 2u);
  EXPECT_EQ(mod[3], 0u);
  EXPECT_EQ(mod[127], 127u % 3);
  // igb_setup_mrqc: i * queues / 128, contiguous blocks.
  auto blocks = Rss::default_table(3, 128, Rss::Fill::kBlocks);
  EXPECT_EQ(blocks[0], 0u);
  EXPECT_EQ(blocks[42], 0u);
  EXPECT_EQ(blocks[43], 1u);  // 43 * 3 / 128 = 1
  EXPECT_EQ(blocks[86], 2u);  // 86 * 3 / 128 = 2
  EXPECT_EQ(blocks[127], 2u);
}

TEST(Rss, QueueIsTheTableEntryAtTheHashLowBits) {
  Rss::Params p;
  p.queues = 4;
  Rss rss(p);
  for (const auto& v : kVectors) {
    Rss::Flow f{v.src_ip, v.dst_ip, v.src_port, v.dst_port, Rss::Proto::kTcp};
    EXPECT_EQ(rss.steer(f), (v.hash_tcp & 127u) % 4u);
  }
  uint64_t total = 0;
  for (uint64_t n : rss.stats().per_queue) {
    total += n;
  }
  EXPECT_EQ(total, kVectors.size());
}

TEST(Rss, ManyFlowsSpreadOverAllQueues) {
  Rss::Params p;
  p.queues = 8;
  p.key = Rss::key_from_seed(1);
  Rss rss(p);
  for (uint16_t port = 40000; port < 40800; ++port) {
    rss.steer({ip(198, 18, 0, 1), ip(198, 18, 0, 2), port, 5201, Rss::Proto::kTcp});
  }
  for (uint64_t n : rss.stats().per_queue) {
    EXPECT_GT(n, 50u);  // 100 expected per queue; a broken hash puts them on a few
  }
}

TEST(Rss, KeyFromSeedIsReproducibleAndSeedDependent) {
  EXPECT_EQ(Rss::key_from_seed(7), Rss::key_from_seed(7));
  EXPECT_NE(Rss::key_from_seed(7), Rss::key_from_seed(8));
  const Rss::Key key = Rss::key_from_seed(7);
  std::set<uint8_t> distinct(key.begin(), key.end());
  EXPECT_GT(distinct.size(), 20u);
}

TEST(Rss, ExplicitTable) {
  Rss::Params p;
  p.queues = 2;
  p.table_size = 4;
  p.table = {1, 1, 1, 0};
  Rss rss(p);
  EXPECT_EQ(rss.queue_of_hash(0), 1u);
  EXPECT_EQ(rss.queue_of_hash(3), 0u);
  EXPECT_EQ(rss.queue_of_hash(7), 0u);  // 7 & 3
}

TEST(Rss, BadParamsNameTheKey) {
  Rss::Params p;
  p.queues = 0;
  EXPECT_EQ(p.validate()->key, "rx_queues");
  p.queues = 2;
  p.table_size = 100;
  EXPECT_EQ(p.validate()->key, "rss_table_size");
  p.table_size = 4;
  p.table = {0, 1, 2, 0};
  EXPECT_EQ(p.validate()->key, "rss_table");
  p.table = {0, 1};
  EXPECT_EQ(p.validate()->key, "rss_table");
  EXPECT_THROW(Rss{p}, InvalidParams);
}

}  // namespace
}  // namespace nicsim::algo
