#pragma once
// CAKE's ACK filter: when a pure TCP ACK is queued behind older ACKs of the same connection
// that it makes redundant, the oldest such ACK is dropped (cake_ack_filter, cake_tcph_may_drop,
// cake_tcph_sack_compare in Linux net/sched/sch_cake.c, torvalds/linux commit 0280f429dc21;
// the paper's §III-E). Behaviour ported, no code copied.
//
// The filter needs TCP headers. The simulator's packets carry metadata only and the
// emulator's carry frame bytes, so the algorithm reads headers through a small interface,
// CakeTcpReader, that fills a CakeTcpHeader (the fields the filter looks at).
// CakeFrameTcpReader reads them from Packet::payload (Ethernet II + IPv4 / IPv6 / 6in4 + TCP),
// which is what emulated frames carry; a back-end without bytes supplies its own reader.

#include <array>
#include <cstdint>

#include "nicsim/core/packet.h"

namespace nicsim::algo {

enum class CakeAckFilterMode : uint8_t { kNone, kFilter, kAggressive };  // CAKE_ACK_*

// TCP flag bits as the low 12 bits of header bytes 12..13 (tcp_flag_word >> 16): the three
// reserved bits, NS, CWR, ECE, URG, ACK, PSH, RST, SYN, FIN.
inline constexpr uint16_t kTcpFin = 0x001;
inline constexpr uint16_t kTcpSyn = 0x002;
inline constexpr uint16_t kTcpAck = 0x010;
inline constexpr uint16_t kTcpEce = 0x040;
inline constexpr uint16_t kTcpCwr = 0x080;

struct CakeTcpHeader {
  struct SackBlock {
    uint32_t start = 0;
    uint32_t end = 0;
  };
  uint8_t ip_version = 4;           // 4 or 6 (6in4 reads as 6)
  std::array<uint8_t, 16> saddr{};  // IPv4 addresses in the first 4 bytes
  std::array<uint8_t, 16> daddr{};
  uint16_t sport = 0;
  uint16_t dport = 0;
  uint32_t ack_seq = 0;
  uint16_t flags = 0;        // as the kTcp* bits
  uint32_t payload_len = 0;  // segment data bytes (IP payload - TCP header)
  bool has_timestamp = false;
  uint32_t tsval = 0;
  uint32_t tsecr = 0;
  uint8_t sack_count = 0;  // SACK blocks (up to 4)
  std::array<SackBlock, 4> sack{};
  // Some option forbids dropping this ACK (cake_tcph_may_drop): MSS, window scale,
  // SACK-permitted, Fast Open, experimental or unknown options, or a malformed SACK or
  // timestamp option. MD5 signatures, NOP/EOL, SACK and timestamps are allowed.
  bool unsafe_options = false;
};

class CakeTcpReader {
 public:
  virtual ~CakeTcpReader() = default;
  // Fills `out` and returns true if `p` is a TCP segment this reader can see.
  virtual bool read(const Packet& p, CakeTcpHeader& out) const = 0;
};

// Reads the headers from the frame bytes (Packet::payload); false for packets without bytes.
class CakeFrameTcpReader final : public CakeTcpReader {
 public:
  bool read(const Packet& p, CakeTcpHeader& out) const override;
  static const CakeFrameTcpReader& instance();
};

constexpr bool tcp_seq_before(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }
constexpr bool tcp_seq_after(uint32_t a, uint32_t b) { return tcp_seq_before(b, a); }

// Same addresses and ports (the filter's "matching 5-tuple": the protocol is TCP for both).
bool cake_same_connection(const CakeTcpHeader& a, const CakeTcpHeader& b);

// cake_tcph_may_drop: `check` is a pure ACK (ACK set; no other flag but ECE/CWR) whose options
// allow dropping and whose timestamps are not newer than the triggering ACK's.
bool cake_ack_may_drop(const CakeTcpHeader& check, uint32_t tsval_new, uint32_t tsecr_new);

// cake_tcph_sack_compare: -1 if `a` SACKs something `b` does not (or carries a D-SACK),
// 1 if `b` SACKs strictly more bytes covering all of `a`'s, 0 if equal.
int cake_sack_compare(const CakeTcpHeader& a, const CakeTcpHeader& b);

}  // namespace nicsim::algo
