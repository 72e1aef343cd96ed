#pragma once
// Packet: the small, move-only value that every element holds, moves and releases.
//
// Fields mirror what the kernel keeps in an sk_buff and what the models need for latency
// attribution: `len` is skb->len (Ethernet header + payload, no FCS, no preamble/IFG — the
// wire adds those); `priority` is skb->priority (0..15, used by pfifo_fast's priomap);
// `tos` holds DSCP (upper 6 bits) and ECN (lower 2 bits) as in the IP header. The simulator
// carries no payload; the emulator attaches the real frame bytes through `payload`.
// Move-only: a packet exists in exactly one place, which is what the property tests check.

#include <array>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "nicsim/core/time.h"

namespace nicsim {

// ECN codepoints (RFC 3168), the low two bits of the TOS / traffic-class byte.
enum class Ecn : uint8_t { kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3 };

// Where a packet was when a timestamp was taken; used to attribute latency per stage.
enum class Stage : uint8_t {
  kCreated = 0,  // handed to the stack by the application / traffic source
  kQdiscIn,      // entered the qdisc
  kRingIn,       // entered the driver TX ring
  kWireStart,    // first bit on the wire (or USB bulk-OUT)
  kWireEnd,      // last bit arrived at the receiving NIC
  kRxDeliver,    // the receiving driver handed it to the stack (after USB/coalescing/NAPI)
  kStackIn,      // the receiving stack/socket consumed it
  kCount
};
inline constexpr size_t kStageCount = static_cast<size_t>(Stage::kCount);

// Frame bytes owned by a back-end (emulator). The deleter lets a back-end return buffers to
// its own pool; with no release function the buffer is simply deleted.
struct PayloadBuffer {
  std::vector<uint8_t> bytes;
};
struct PayloadDeleter {
  void (*release)(PayloadBuffer*) = nullptr;
  void operator()(PayloadBuffer* p) const noexcept {
    if (release != nullptr) {
      release(p);
    } else {
      delete p;
    }
  }
};
using Payload = std::unique_ptr<PayloadBuffer, PayloadDeleter>;

// Everything of a packet but its payload: plain values, so a packet's move is one block copy
// of these 112 bytes plus the payload pointer. (A member-by-member move costs ~2x the
// instructions, and packets are moved at every queue: docs/benchmarks.md, issue 11 item 5.)
struct PacketFields {
  uint64_t id = 0;         // unique per packet within a run (tracing, property tests)
  uint32_t len = 0;        // bytes, as skb->len (L2 header + payload, no FCS)
  uint32_t flow_hash = 0;  // flow-dissector hash (skb_get_hash); fq_codel classifies on it
  uint32_t flow_id = 0;    // the traffic source's flow (reports)
  uint16_t gso_segs = 1;   // segments in a GSO super-packet (1 = ordinary packet)
  // GSO: bytes (skb->len) of every segment but the last; the last gets the rest of `len`.
  // 0 = split `len` into near-equal parts. (Linux's gso_size counts payload only; here the
  // sender states the frame size so segmentation is exact without a header length.)
  uint16_t gso_size = 0;
  uint16_t gso_index = 0;  // which segment of its GSO parent this frame is (set by segmentation)
  uint8_t priority = 0;    // skb->priority, 0..15
  uint8_t tos = 0;         // DSCP << 2 | ECN
  uint16_t dst_host = 0;   // destination host (config::Network node index): routers route on it
  uint16_t src_host = 0;   // source host (config::Network node index); CAKE's host isolation
  uint32_t meta = 0;       // back-end handle to protocol metadata (TCP/ICMP/UDP); 0 = none
  // Earliest Departure Time (skb->tstamp on the transmit path, Linux 4.20+ EDT model): the
  // sender's wish that the packet not leave before this time; zero = "now" (no wish). Only
  // `fq` enforces it (docs/algorithms/fq.md); a forwarding hop clears it as ip_forward does.
  Time tstamp;
  Time enqueue_ts;  // set by the queue currently holding the packet (sojourn time)
  std::array<Time, kStageCount> stage_ts{};  // per-stage timestamps, zero = not reached
};
static_assert(std::is_trivially_copyable_v<PacketFields>);

struct Packet : PacketFields {
  Packet() = default;
  Packet(const Packet&) = delete;
  Packet& operator=(const Packet&) = delete;
  Packet(Packet&& o) noexcept : PacketFields(o), payload(std::move(o.payload)) {}
  Packet& operator=(Packet&& o) noexcept {
    static_cast<PacketFields&>(*this) = o;
    payload = std::move(o.payload);
    return *this;
  }
  ~Packet() = default;

  Payload payload;  // real frame bytes (emulator only)

  uint8_t dscp() const { return static_cast<uint8_t>(tos >> 2); }
  Ecn ecn() const { return static_cast<Ecn>(tos & 0x3); }
  bool ecn_capable() const { return ecn() != Ecn::kNotEct; }
  // Sets CE if the packet is ECN-capable (as INET_ECN_set_ce); returns whether it is now CE.
  bool set_ce() {
    if (!ecn_capable()) {
      return false;
    }
    tos = static_cast<uint8_t>(tos | 0x3);
    return true;
  }
  void stamp(Stage s, Time t) { stage_ts[static_cast<size_t>(s)] = t; }
  Time stamp_at(Stage s) const { return stage_ts[static_cast<size_t>(s)]; }
};

}  // namespace nicsim
