#pragma once
// GSO segmentation of a super-packet into the frames that reach the wire.
//
// A GSO packet (gso_segs > 1) stands for gso_segs frames: each but the last is gso_size bytes
// (skb->len of a full segment, headers included) and the last carries the rest of `len`; with
// gso_size = 0 the split is near-equal. Each segment keeps the parent's id, flow, marks,
// metadata handle and timestamps, and records its index, so a receiver can tell the segments
// of one packet apart (a TCP receiver derives each segment's sequence number from it).
// Used by software GSO in the driver models and by TSO NICs cutting frames in hardware.

#include <cstdint>

#include "nicsim/core/packet.h"

namespace nicsim {

// Length of segment `index` (0-based) of a packet of `len` bytes in `segs` segments.
constexpr uint32_t gso_segment_len(uint32_t len, uint32_t segs, uint32_t gso_size,
                                   uint32_t index) {
  if (segs <= 1) {
    return len;
  }
  if (gso_size > 0 && static_cast<uint64_t>(gso_size) * (segs - 1) < len) {
    return index + 1 < segs ? gso_size : len - gso_size * (segs - 1);
  }
  const uint32_t base = len / segs;
  const uint32_t extra = len % segs;
  return base + (index < extra ? 1 : 0);
}

inline uint32_t gso_segment_len(const Packet& p, uint32_t index) {
  return gso_segment_len(p.len, p.gso_segs, p.gso_size, index);
}

// Segment `index` of `parent` as its own frame (gso_segs = 1). The payload handle is not
// copied (emulated frames carry real bytes and are segmented by the kernel, not the model).
inline Packet make_gso_segment(const Packet& parent, uint32_t index) {
  Packet s;
  s.id = parent.id;
  s.len = gso_segment_len(parent, index);
  s.flow_hash = parent.flow_hash;
  s.flow_id = parent.flow_id;
  s.gso_segs = 1;
  s.gso_size = 0;
  s.gso_index = static_cast<uint16_t>(index);
  s.priority = parent.priority;
  s.tos = parent.tos;
  s.dst_host = parent.dst_host;
  s.src_host = parent.src_host;
  s.meta = parent.meta;
  s.enqueue_ts = parent.enqueue_ts;
  s.stage_ts = parent.stage_ts;
  return s;
}

}  // namespace nicsim
