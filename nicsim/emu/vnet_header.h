#pragma once
// VnetHeader — the virtio-net header a TAP device opened with IFF_VNET_HDR puts before every
// frame it hands to the emulator, and expects before every frame written to it
// (include/uapi/linux/virtio_net.h, struct virtio_net_hdr; drivers/net/tun.c tun_put_user /
// tun_get_user; include/linux/virtio_net.h virtio_net_hdr_from_skb / _to_skb, Linux 6.18).
// With TUNSETOFFLOAD (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) the host's kernel hands over TCP
// super-packets of up to 64 KB (gso_type TCPV4/TCPV6, gso_size = MSS in payload bytes) whose
// transport checksum is left to the "hardware" (flags NEEDS_CSUM, csum_start/csum_offset).
//
// The mapping to a model Packet (docs/emu.md "GSO/GRO through the emulator"): a super-frame of
// H header bytes (Ethernet + IP + TCP, csum_start + the TCP data offset) and P payload bytes
// with MSS M becomes segs = ceil(P / M) frames; the model's gso_size counts a whole segment
// (H + M, core/gso.h) and len counts every segment's headers (segs * H + P), so the segments
// the NIC model cuts are the wire frames a TSO NIC would send, byte for byte.
//
// The header is little-endian (a TAP's default without TUNSETVNETBE; virtio 1.0).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nicsim::emu {

struct VnetHeader {
  // virtio_net_hdr.flags
  static constexpr uint8_t kNeedsCsum = 1;  // VIRTIO_NET_HDR_F_NEEDS_CSUM
  static constexpr uint8_t kDataValid = 2;  // VIRTIO_NET_HDR_F_DATA_VALID
  // virtio_net_hdr.gso_type
  static constexpr uint8_t kGsoNone = 0;    // VIRTIO_NET_HDR_GSO_NONE
  static constexpr uint8_t kGsoTcpV4 = 1;   // VIRTIO_NET_HDR_GSO_TCPV4
  static constexpr uint8_t kGsoUdp = 3;     // VIRTIO_NET_HDR_GSO_UDP
  static constexpr uint8_t kGsoTcpV6 = 4;   // VIRTIO_NET_HDR_GSO_TCPV6
  static constexpr uint8_t kGsoEcn = 0x80;  // VIRTIO_NET_HDR_GSO_ECN (CWR on the first only)
  static constexpr size_t kSize = 10;       // sizeof(struct virtio_net_hdr)

  uint8_t flags = 0;
  uint8_t gso_type = kGsoNone;
  uint16_t hdr_len = 0;   // skb_headlen: a hint, not the header length (virtio_net_hdr_from_skb)
  uint16_t gso_size = 0;  // MSS: payload bytes per segment
  uint16_t csum_start = 0;
  uint16_t csum_offset = 0;

  static VnetHeader decode(const uint8_t* b);  // kSize bytes
  void encode(uint8_t* b) const;               // kSize bytes
  bool is_tcp_gso() const {
    const uint8_t t = gso_type & static_cast<uint8_t>(~kGsoEcn);
    return t == kGsoTcpV4 || t == kGsoTcpV6;
  }
};

// What one frame read with a virtio-net header stands for on the wire.
struct GsoShape {
  uint32_t segs = 1;        // frames on the wire
  uint32_t wire_len = 0;    // their bytes together (skb->len of each, summed)
  uint32_t seg_len = 0;     // bytes of a full segment (headers + MSS); 0 when segs == 1
  uint32_t header_len = 0;  // Ethernet + IP + TCP header bytes (0 when not a TCP super-frame)
};

// The shape of `frame` (Ethernet frame, no virtio header) given its header `h`. A frame that
// is not a well-formed TCP super-frame (bad csum_start, short, gso_size 0) counts as one frame
// of its own length: the kernel would drop or segment it itself; nothing here reads past it.
GsoShape gso_shape(const VnetHeader& h, std::span<const uint8_t> frame);

// Cuts a TCP super-frame into the MTU frames a NIC without GRO would hand the receiving
// kernel (skb_segment + tcp_gso_segment semantics, net/ipv4/tcp_offload.c): every segment gets
// the headers, IPv4 total length and a consecutive IP id (IPv6: payload length), TCP sequence
// advanced by the payload before it, FIN/PSH only on the last, CWR only on the first; the IPv4
// header checksum and the TCP checksum are computed in full (so the frames are written without
// NEEDS_CSUM). Returns {} when `frame` is not a TCP super-frame gso_shape() understands.
std::vector<std::vector<uint8_t>> segment_tcp(const VnetHeader& h, std::span<const uint8_t> frame);

}  // namespace nicsim::emu
