#pragma once
// MetaTable — protocol metadata for packets in flight, addressed by Packet::meta.
//
// The models move Packets (sizes, marks, timestamps) and never look inside them; what the hosts
// need at the other end — the TCP segment a frame belongs to, a probe's sequence number and
// send time — lives here, one entry per packet handed to a NIC (a GSO unit shares one entry
// among its segments). An entry is freed when every frame of the unit has been consumed by the
// receiving host AND every segment has been released by the sending NIC (TX completion or a
// drop inside the qdisc): refs starts at 2 × segments. Frames lost on the wire or dropped on
// the receive side never come back, so their entries stay allocated until the run ends
// (bounded by the number of such losses; reported as `live()`).

#include <cstdint>
#include <vector>

#include "nicsim/core/time.h"
#include "nicsim/sim/tcp/segment.h"

namespace nicsim::sim {

struct PacketMeta {
  enum class Kind : uint8_t {
    kTcpData,
    kTcpAck,
    kEchoRequest,
    kEchoReply,
    kProbeRequest,
    kProbeReply,
    kFlood,           // a udp_flood datagram (flow = flood index, sent = its send time)
    kTransferRequest  // a transfer's request, client -> server (flow = the transfer's flow)
  };
  Kind kind = Kind::kTcpData;
  uint32_t refs = 0;
  uint32_t flow = 0;       // TCP flow index, probe index or flood index
  uint64_t probe_seq = 0;  // probes: sequence number
  Time sent;               // probes, floods: when the datagram left the application
  Time forward_arrival;    // UDP probes: when the request reached the reflector
  tcp::Segment seg;        // TCP: the unit (GSO super-packet or single segment)
};

class MetaTable {
 public:
  // Returns a handle (never 0) to a copy of `m` with `refs` references.
  uint32_t alloc(const PacketMeta& m, uint32_t refs) {
    uint32_t i;
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
    } else {
      i = static_cast<uint32_t>(entries_.size());
      entries_.emplace_back();
    }
    entries_[i] = m;
    entries_[i].refs = refs;
    ++live_;
    return i + 1;
  }
  PacketMeta& get(uint32_t handle) { return entries_[handle - 1]; }
  // Drops `n` references; frees the entry at zero.
  void unref(uint32_t handle, uint32_t n) {
    PacketMeta& m = entries_[handle - 1];
    m.refs = n >= m.refs ? 0 : m.refs - n;
    if (m.refs == 0) {
      free_.push_back(handle - 1);
      --live_;
    }
  }
  uint64_t live() const { return live_; }

 private:
  std::vector<PacketMeta> entries_;
  std::vector<uint32_t> free_;
  uint64_t live_ = 0;
};

}  // namespace nicsim::sim
