#pragma once
// Rss — Receive Side Scaling as a NIC does it: the Toeplitz hash of a received packet's IPv4
// addresses (and, for the enabled protocols, its ports) selects an entry of the indirection
// table (RETA), and that entry names the RX queue, hence the NAPI context and CPU, that takes
// the packet.
//
// Behaviour follows:
//  * the Toeplitz hash as specified by Microsoft's "RSS hashing functions" (NDIS,
//    learn.microsoft.com/windows-hardware/drivers/network/rss-hashing-functions): for each
//    input bit from the most significant bit of input[0], if set, XOR the left-most 32 bits of
//    the 40-byte key into the result, then shift the key left by one bit. Input for IPv4 with
//    TCP: source address, destination address, source port, destination port (12 bytes, in
//    network order); IPv4 only: the two addresses (8 bytes). Checked against the Intel 82599
//    datasheet's RSS verification suite (§7.1.2.8.3; the same vectors DPDK's
//    app/test/test_thash.c uses) with Microsoft's example key, in rss_test.cc;
//  * the indirection table: the low bits of the hash index a table of 2^k entries (82599
//    §7.1.2.8: "the seven LSBs of the hash result" index its 128-entry RETA). Default fills as
//    the Linux drivers write them: `kModulo`, entry i -> i mod queues (ixgbe_setup_reta in
//    drivers/net/ethernet/intel/ixgbe/ixgbe_main.c, mlx5e_rss_params_indir_init_uniform in
//    drivers/net/ethernet/mellanox/mlx5/core/en/rqt.c, ethtool_rxfh_indir_default in
//    include/linux/ethtool.h), or `kBlocks`, entry i -> i * queues / size (igb_setup_mrqc in
//    drivers/net/ethernet/intel/igb/igb_main.c);
//  * which packets hash on their ports: igb and ixgbe enable TCP/IPv4 four-tuple hashing by
//    default and UDP only when asked (`ethtool -N DEV rx-flow-hash udp4 sdfn` sets
//    IGB_FLAG_RSS_FIELD_IPV4_UDP / IXGBE_FLAG2_RSS_FIELD_IPV4_UDP), so by default a UDP flow is
//    placed by its address pair alone (Params::hash_udp_ports = false). Other IPv4 packets
//    (ICMP) use the address pair.
//  * the key: Linux fills it once per boot with random bytes (netdev_rss_key_fill,
//    net/core/ethtool.c), shared by every device; the model takes a key in Params, and
//    key_from_seed() derives a reproducible one from a run's seed.
//
// Units: addresses and ports are host-order integers (198.18.0.1 is 0xC6120001); the hash is
// the 32-bit value a NIC writes to its RX descriptor (skb->hash with L4 set for a four-tuple).
// Not modelled: IPv6 (the models carry IPv4 only), symmetric-hash variants (XOR key
// folding), the RSS context API (several tables, `ethtool -X context`).

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "nicsim/core/param_error.h"

namespace nicsim::algo {

class Rss {
 public:
  static constexpr size_t kKeyBytes = 40;  // NDIS / 82599 / igb: 10 x 32-bit RSSRK registers
  using Key = std::array<uint8_t, kKeyBytes>;
  // Microsoft's example key (the "RSS verification" key of the NDIS documentation and the
  // 82599 datasheet); Linux itself uses a random key per boot.
  static const Key kVerificationKey;

  enum class Proto : uint8_t { kTcp, kUdp, kOther };
  struct Flow {
    uint32_t src_ip = 0;
    uint32_t dst_ip = 0;
    uint16_t src_port = 0;
    uint16_t dst_port = 0;
    Proto proto = Proto::kOther;
  };

  // How the default table spreads its entries over the queues.
  enum class Fill : uint8_t {
    kModulo,  // entry i -> i mod queues (ixgbe, mlx5, ethtool_rxfh_indir_default)
    kBlocks,  // entry i -> i * queues / size (igb)
  };

  struct Params {
    Key key = kVerificationKey;
    uint32_t queues = 1;        // RX queues (ethtool -L combined N)
    uint32_t table_size = 128;  // RETA entries, a power of two (igb, 82599: 128; X550: 512)
    Fill fill = Fill::kModulo;
    // An explicit table (`ethtool -X DEV weight ...` or a hand-written RETA); empty = default.
    std::vector<uint32_t> table;
    bool hash_udp_ports = false;  // rx-flow-hash udp4 sdfn (off by default in igb/ixgbe)
    Validation validate() const;
  };

  struct Stats {
    std::vector<uint64_t> per_queue;  // packets steered to each queue
  };

  Rss() : Rss(Params{}) {}
  explicit Rss(const Params& params);

  // The Toeplitz hash of `input` under `key` (input at most kKeyBytes - 4 bytes long).
  static uint32_t toeplitz(const Key& key, std::span<const uint8_t> input);
  // A reproducible key for a run: the bytes of a SplitMix64 sequence started at `seed`.
  static Key key_from_seed(uint64_t seed);
  // The default table of `size` entries over `queues` queues.
  static std::vector<uint32_t> default_table(uint32_t queues, uint32_t size, Fill fill);

  // The hash the NIC computes for a packet of `flow` (four-tuple or address pair, see above).
  uint32_t hash(const Flow& flow) const;
  // The RX queue of a hash: table[hash & (size - 1)].
  uint32_t queue_of_hash(uint32_t hash) const {
    return table_[hash & (static_cast<uint32_t>(table_.size()) - 1)];
  }
  // hash + queue_of_hash, counted in stats.
  uint32_t steer(const Flow& flow);

  const std::vector<uint32_t>& table() const { return table_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  uint32_t hash_bytes(std::span<const uint8_t> input) const;

  Params params_;
  std::vector<uint32_t> table_;
  // lut_[i][b]: the hash contribution of byte value b at input position i (the standard
  // byte-wise Toeplitz: the XOR of the key windows of b's set bits), 12 positions.
  std::array<std::array<uint32_t, 256>, 12> lut_{};
  Stats stats_;
};

}  // namespace nicsim::algo
