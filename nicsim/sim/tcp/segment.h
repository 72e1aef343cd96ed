#pragma once
// Segment — the TCP header fields the endpoint models exchange, and the frame-size helpers the
// host uses to map a Segment onto a Packet.
//
// Sequence numbers are 64-bit byte offsets (no wrap-around, so no PAWS): the initial sequence
// number of every connection is 0, the SYN occupies sequence 0 and data starts at 1. Windows
// are carried in bytes, already scaled (window scaling is implicit and exact). Timestamps
// (RFC 7323) are millisecond ticks of the sending endpoint's clock, as Linux's tcp_time_stamp.
//
// A data Segment with gso_segs > 1 is a GSO super-packet (Linux: one skb of gso_segs × gso_size
// bytes handed to the qdisc/driver as a unit); the NIC segments it in software or hardware.
// gso_segment(unit, i) gives the i-th MSS-sized wire segment: FIN and PSH only on the last, CWR
// only on the first (as tcp_gso_segment), the TSQ charge split over the segments.
//
// Frame size on an Ethernet link (skb->len, without FCS): 14 (Ethernet) + 20 (IPv4) + 20 (TCP)
// + options + payload. Options as Linux lays them out: timestamps NOP,NOP,TS = 12 bytes on
// every segment; SACK NOP,NOP,kind,len + 8 per block = 4 + 8n; SYN: MSS 4 + SACK_PERM/TS 12
// (or 4 without timestamps) + NOP,WS 4. With timestamps at most 3 SACK blocks fit in the 40
// option bytes, without them 4.

#include <array>
#include <cstdint>

#include "nicsim/core/packet.h"
#include "nicsim/core/time.h"

namespace nicsim::sim::tcp {

inline constexpr uint32_t kEthernetHeaderBytes = 14;
inline constexpr uint32_t kIpv4HeaderBytes = 20;
inline constexpr uint32_t kTcpHeaderBytes = 20;
inline constexpr uint32_t kTimestampOptionBytes = 12;  // NOP, NOP, kind 8, len 10
inline constexpr uint32_t kSackOptionBaseBytes = 4;    // NOP, NOP, kind 5, len
inline constexpr uint32_t kSackBlockBytes = 8;
inline constexpr uint32_t kMaxSackBlocks = 4;  // 40 option bytes without timestamps
inline constexpr uint32_t kMaxSackBlocksWithTimestamps = 3;

// [start, end) in sequence space.
struct SackBlock {
  uint64_t start = 0;
  uint64_t end = 0;
  friend constexpr bool operator==(const SackBlock&, const SackBlock&) = default;
};

// TCP header flags, plus model-only bits (kRetransmit: informational for tracing/hosts).
enum SegmentFlag : uint8_t {
  kFin = 1 << 0,
  kSyn = 1 << 1,
  kAck = 1 << 2,
  kEce = 1 << 3,
  kCwr = 1 << 4,
  kRetransmit = 1 << 5,  // model-only: this unit repeats data sent before
  kAe = 1 << 6,          // AE (formerly NS): with CWR and ECE on a SYN, asks for AccECN
  kPsh = 1 << 7,         // PSH: tcp_push marks the last skb of a write, or a forced push
};

// Which options the segment carries (they only change its size; values are in the fields).
enum SegmentOption : uint8_t {
  kOptTimestamp = 1 << 0,
  kOptSackPermitted = 1 << 1,  // SYN / SYN-ACK only
  kOptMss = 1 << 2,            // SYN / SYN-ACK only
  kOptWindowScale = 1 << 3,    // SYN / SYN-ACK only
};

struct Segment {
  uint64_t seq = 0;        // sequence number of the first byte (or of the SYN/FIN)
  uint64_t ack = 0;        // cumulative acknowledgment (with kAck)
  uint32_t len = 0;        // payload bytes (a GSO unit: the total over its segments)
  uint32_t wnd = 0;        // advertised receive window, bytes
  uint32_t tsval = 0;      // RFC 7323 TSval (ms ticks), with kOptTimestamp
  uint32_t tsecr = 0;      // RFC 7323 TSecr
  uint32_t truesize = 0;   // TSQ charge; the host returns it through on_tx_released()
  uint16_t gso_segs = 1;   // wire segments in this unit (1 = ordinary segment)
  uint16_t gso_size = 0;   // payload bytes per wire segment (the MSS) when gso_segs > 1
  uint8_t flags = 0;       // SegmentFlag bits
  uint8_t options = 0;     // SegmentOption bits
  Ecn ecn = Ecn::kNotEct;  // IP ECN field: set by the sender, CE set by the network
  // AccECN feedback on ACKs: CE-marked data packets received (r.cep). Deviation: the full
  // counter, where the header's ACE field carries its 3 low bits (plus the AccECN option's byte
  // counters); no size cost.
  uint32_t ce_packets = 0;
  uint8_t num_sacks = 0;  // valid entries in sacks
  Time tstamp;            // EDT (skb->tstamp) when the host paces through fq; zero = none
  std::array<SackBlock, kMaxSackBlocks> sacks{};

  bool has(SegmentFlag f) const { return (flags & f) != 0; }
  uint64_t end_seq() const {  // sequence space consumed: payload + SYN + FIN
    return seq + len + (has(kSyn) ? 1 : 0) + (has(kFin) ? 1 : 0);
  }
};

// TCP option bytes of this segment (multiple of 4).
constexpr uint32_t tcp_options_bytes(const Segment& s) {
  uint32_t n = 0;
  if ((s.flags & kSyn) != 0) {
    n += (s.options & kOptMss) != 0 ? 4 : 0;
    if ((s.options & kOptTimestamp) != 0) {
      n += kTimestampOptionBytes;  // SACK_PERM shares the timestamp's padding
    } else if ((s.options & kOptSackPermitted) != 0) {
      n += 4;
    }
    n += (s.options & kOptWindowScale) != 0 ? 4 : 0;
    return n;
  }
  n += (s.options & kOptTimestamp) != 0 ? kTimestampOptionBytes : 0;
  if (s.num_sacks > 0) {
    n += kSackOptionBaseBytes + kSackBlockBytes * s.num_sacks;
  }
  return n;
}

// Ethernet + IPv4 + TCP header bytes of one wire frame of this segment.
constexpr uint32_t frame_header_bytes(const Segment& s) {
  return kEthernetHeaderBytes + kIpv4HeaderBytes + kTcpHeaderBytes + tcp_options_bytes(s);
}

// skb->len of the segment as handed to the qdisc: one set of headers plus all payload (for a
// GSO unit this is the super-packet's length; the wire frames are gso_frame_bytes()).
constexpr uint32_t skb_len(const Segment& s) { return frame_header_bytes(s) + s.len; }

// Sum of the wire frame lengths after segmentation (headers repeated per segment).
constexpr uint64_t gso_frame_bytes(const Segment& s) {
  return static_cast<uint64_t>(frame_header_bytes(s)) * s.gso_segs + s.len;
}

// Packet geometry for the host, in nicsim/core/gso.h's convention: Packet::len =
// gso_frame_bytes(unit), Packet::gso_segs = unit.gso_segs, Packet::gso_size =
// gso_frame_size(unit) (skb->len of one full segment, headers included); segment i of the
// packet then has the length of gso_segment(unit, i)'s frame.
constexpr uint32_t gso_frame_size(const Segment& s) {
  return s.gso_segs > 1 ? frame_header_bytes(s) + s.gso_size : 0;
}

// The i-th wire segment of a GSO unit (i < unit.gso_segs). For gso_segs == 1 returns the unit.
inline Segment gso_segment(const Segment& unit, uint16_t i) {
  if (unit.gso_segs <= 1) {
    return unit;
  }
  Segment s = unit;
  const uint32_t off = static_cast<uint32_t>(i) * unit.gso_size;
  const bool last = i + 1 == unit.gso_segs;
  s.seq = unit.seq + off;
  s.len = last ? unit.len - off : unit.gso_size;
  s.gso_segs = 1;
  s.gso_size = 0;
  const uint32_t share = unit.truesize / unit.gso_segs;
  s.truesize = last ? unit.truesize - share * (unit.gso_segs - 1u) : share;
  if (!last) {
    s.flags = static_cast<uint8_t>(s.flags & ~(kFin | kPsh));  // tcp_gso_segment
  }
  if (i != 0) {
    s.flags = static_cast<uint8_t>(s.flags & ~kCwr);
  }
  return s;
}

}  // namespace nicsim::sim::tcp
