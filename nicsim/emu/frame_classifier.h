#pragma once
// Frame classification — what the host kernel's stack would have put in the sk_buff of a
// frame the emulator read from a host: skb->priority (from the IPv4 TOS, rt_tos2priority, as
// the IPv4 stack sets it for sockets without SO_PRIORITY), the TOS byte (DSCP + ECN) and a
// flow hash over the addresses, protocol and ports (the flow dissector's inputs; fq_codel and
// multi-queue selection classify on it). Non-IPv4 frames (ARP, IPv6) get priority 0, TOS 0 and
// a hash of the MAC addresses and EtherType.
//
// And the reverse: when an emulated qdisc marks a packet CE (CoDel/fq_codel ECN), the mark is
// written into the frame's IPv4 header (TOS byte + incremental header checksum, RFC 1624) so
// the receiving kernel sees it.
//
// The bytes come from programs in the hosts: untrusted, any length. Nothing here reads past
// the frame (frame_classifier_fuzz checks it).

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <span>

#include "nicsim/algo/gro.h"
#include "nicsim/algo/rss.h"
#include "nicsim/core/packet.h"

namespace nicsim::emu {

struct FrameInfo {
  bool ipv4 = false;
  uint8_t tos = 0;
  uint8_t protocol = 0;  // IPv4 protocol (1 ICMP, 6 TCP, 17 UDP), 0 if not IPv4
  uint32_t flow_hash = 0;
  size_t ip_offset = 0;  // offset of the IPv4 header in the frame (after Ethernet/VLAN)
  in_addr dst{};         // IPv4 destination address (network order), 0 if not IPv4
};

// Parses Ethernet (+ one 802.1Q tag) and IPv4 headers of `frame`.
FrameInfo classify_frame(std::span<const uint8_t> frame);

// Sets p.tos, p.priority and p.flow_hash (and p.flow_id = the hash) from p.payload's bytes;
// returns what it parsed.
FrameInfo classify(Packet& p);

// What a NIC's RSS hashes for this frame (algo::Rss): IPv4 source and destination and, for TCP
// and UDP outside non-first fragments, the ports; not IPv4 (ARP, IPv6): all zero, proto other
// (a real NIC puts those on the queue of table entry 0, as a zero hash does).
algo::Rss::Flow rss_flow_of(std::span<const uint8_t> frame);

// GRO's view of an IPv4/TCP frame (algo::GroHeader: what tcp4_gro_receive compares; Linux
// net/ipv4/tcp_offload.c), for a receiving NIC model with `gro` on. A TSO super-frame
// (`--io tap-gso`: several MSS of payload behind one header) stands for the segments
// tcp_gso_segment cuts from it; the models carry them without bytes (core/gso.h), so what they
// share is parsed once into a TcpGroBase and gro_segment() gives segment i's header: sequence
// number advanced by i x mss, FIN and PSH on the last segment only, CWR on the first only.
struct TcpGroBase {
  algo::GroHeader first;       // segment 0 (or the whole frame), flags as the bytes have them
  uint32_t total_payload = 0;  // TCP payload bytes of the whole (super-)frame
  uint32_t mss = 0;            // payload bytes per segment; 0: one segment
  uint32_t segments() const;
};
// nullopt: not IPv4/TCP, a fragment, or headers cut short. `segment_bytes` is a full
// segment's frame bytes, headers included (Packet::gso_size of a super-frame, core/gso.h), 0
// for an MTU frame. The flow is the 4-tuple, mixed into 64 bits; the options words are the TCP
// option bytes, mixed, and the data offset with the window (either flushes GRO when it changes).
std::optional<TcpGroBase> tcp_gro_base(std::span<const uint8_t> frame, uint32_t segment_bytes = 0);
algo::GroHeader gro_segment(const TcpGroBase& base, uint32_t index);

// Writes p's ECN codepoint into its IPv4 header if they differ (a qdisc marked CE). Returns
// whether the bytes changed. Frames that are not IPv4 are left alone.
bool write_ecn(Packet& p);

}  // namespace nicsim::emu
