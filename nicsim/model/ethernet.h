#pragma once
// Ethernet physical-layer framing overheads (IEEE 802.3), used to charge wire time.
//
// A frame of skb->len bytes (destination MAC .. payload, no FCS) occupies on the wire:
//   preamble + SFD (8) + max(len + FCS (4), 64 minimum frame) + inter-frame gap (12)
// so a 1514-byte frame costs 1538 byte times: 123.04 µs at 100 Mbit/s, 12.304 µs at 1 Gbit/s.
// Frames shorter than the 60-byte minimum (without FCS) are padded by the MAC.

#include <algorithm>
#include <cstdint>

namespace nicsim::model {

struct EthernetOverhead {
  uint32_t preamble_sfd = 8;
  uint32_t fcs = 4;
  uint32_t inter_frame_gap = 12;
  uint32_t min_frame = 64;  // including FCS

  // Byte times a frame of `len` bytes (without FCS) occupies on the wire.
  constexpr uint32_t wire_bytes(uint32_t len) const {
    return preamble_sfd + std::max(len + fcs, min_frame) + inter_frame_gap;
  }
};

// Ethernet MTU 1500 + 14-byte header: the largest ordinary frame (psched_mtu on Ethernet).
inline constexpr uint32_t kEthernetMaxFrame = 1514;
inline constexpr uint32_t kEthernetHeader = 14;

}  // namespace nicsim::model
