#pragma once
// PfifoFast — Linux's default qdisc: three strict-priority FIFO bands with tail drop.
//
// Behaviour follows Linux net/sched/sch_generic.c (pfifo_fast) as described in
// docs/mechanisms/qdisc-basics.md §9.4:
//   - band = priomap[skb->priority & 15] (TC_PRIO_MAX = 15), default priomap
//     {1,2,2,2,1,2,0,0, 1,1,1,1,1,1,1,1} (prio2band): priority 6,7 -> band 0;
//     0,4,8..15 -> band 1; 1,2,3,5 -> band 2;
//   - dequeue serves band 0, then 1, then 2 strictly; FIFO inside a band;
//   - length txqueuelen (DEFAULT_TX_QUEUE_LEN 1000), tail drop when full. Since the 4.16
//     lockless rewrite each band is its own ring of txqueuelen entries (per_band_limit = true,
//     up to 3 x limit in total); the older list-based version (the 2014 stmmac seed era)
//     capped the TOTAL at txqueuelen (per_band_limit = false).
// Work-conserving: next_ready is `now` whenever a packet is queued. TCQ_F_CAN_BYPASS is set
// (§10): when the qdisc is empty and the driver queue is not stopped, the stack hands the
// packet straight to the driver; kCanBypass tells the model layer so (the element itself
// never bypasses — enqueue followed by dequeue gives the same counters as Linux's bypass
// path, which also updates the qdisc's byte/packet statistics).
//
// Also provides rt_tos2priority(): the IPv4 stack's TOS byte -> skb->priority mapping
// (Linux net/ipv4/route.c ip_tos2prio[16], include/net/route.h rt_tos2priority).
//
// Units: bytes are skb->len. Deviations: none in queueing behaviour; the per-CPU statistics and
// lockless ring details of the modern kernel are not modelled (docs/algorithms/pfifo_fast.md).

#include <array>
#include <cstdint>
#include <optional>

#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"

namespace nicsim::algo {

// TC_PRIO_* (include/uapi/linux/pkt_sched.h).
inline constexpr uint8_t kTcPrioBesteffort = 0;
inline constexpr uint8_t kTcPrioFiller = 1;
inline constexpr uint8_t kTcPrioBulk = 2;
inline constexpr uint8_t kTcPrioInteractiveBulk = 4;
inline constexpr uint8_t kTcPrioInteractive = 6;
inline constexpr uint8_t kTcPrioControl = 7;
inline constexpr uint8_t kTcPrioMax = 15;

// IPTOS_TOS_MASK (include/uapi/linux/ip.h): the four RFC 1349 TOS bits of the TOS byte
// (0x10 low delay, 0x08 throughput, 0x04 reliability, 0x02 min cost — now ECN's ECT(0) bit).
inline constexpr uint8_t kIpTosTosMask = 0x1E;

// ip_tos2prio[16] of Linux net/ipv4/route.c, indexed by (tos & IPTOS_TOS_MASK) >> 1. The
// values are those of kernels since at least 3.6 (checked in copies of route.c from 3.6, a
// 4.11+ tree and a current 6.x tree): each odd entry (the "ECN_OR_COST" slot, tos bit 0x02)
// equals its even neighbour. Older 2.6 kernels mapped entry 1 (tos 0x02 alone) to
// TC_PRIO_FILLER (band 2) instead of TC_PRIO_BESTEFFORT; that variant is not modelled.
// clang-format off
inline constexpr std::array<uint8_t, 16> kIpTos2Prio = {
    kTcPrioBesteffort,      kTcPrioBesteffort,       // index 0-1:   tos bits 0
    kTcPrioBesteffort,      kTcPrioBesteffort,       // index 2-3:   0x04 reliability
    kTcPrioBulk,            kTcPrioBulk,             // index 4-5:   0x08 throughput
    kTcPrioBulk,            kTcPrioBulk,             // index 6-7:   0x08|0x04
    kTcPrioInteractive,     kTcPrioInteractive,      // index 8-9:   0x10 low delay
    kTcPrioInteractive,     kTcPrioInteractive,      // index 10-11: 0x10|0x04
    kTcPrioInteractiveBulk, kTcPrioInteractiveBulk,  // index 12-13: 0x10|0x08
    kTcPrioInteractiveBulk, kTcPrioInteractiveBulk,  // index 14-15: 0x10|0x08|0x04
};
// clang-format on

// skb->priority the IPv4 stack derives from a TOS byte (rt_tos2priority): used for
// IP_TOS-marked sockets (setsockopt IP_TOS sets sk_priority this way) and forwarded packets.
constexpr uint8_t rt_tos2priority(uint8_t tos) {
  return kIpTos2Prio[static_cast<size_t>((tos & kIpTosTosMask) >> 1)];
}

class PfifoFast {
 public:
  static constexpr int kBands = 3;          // PFIFO_FAST_BANDS
  static constexpr bool kCanBypass = true;  // TCQ_F_CAN_BYPASS (docs/mechanisms/trade-offs.md §10)

  struct Params {
    // txqueuelen: DEFAULT_TX_QUEUE_LEN = 1000 for Ethernet (include/linux/netdevice.h,
    // ether_setup). pfifo_fast_init rejects a zero-length ring.
    int64_t limit = 1000;
    // true: each band holds `limit` packets (ptr_ring per band, Linux >= 4.16);
    // false: all bands together hold `limit` packets (skb lists, Linux < 4.16).
    bool per_band_limit = true;
    // prio2band (sch_generic.c), indexed by skb->priority & 15; each entry 0..2.
    std::array<int32_t, 16> priomap = {1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    Validation validate() const;
  };
  using Stats = QueueStats;

  PfifoFast() : PfifoFast(Params{}) {}
  explicit PfifoFast(const Params& params);

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now) {
    for (int b = 0; b < kBands; ++b) {
      if (!bands_[b].empty()) {
        return dequeue_from(b, now);
      }
    }
    return std::nullopt;
  }
  const Packet* peek(Time /*now*/) const {
    for (const PacketFifo& band : bands_) {
      if (!band.empty()) {
        return &band.front();
      }
    }
    return nullptr;
  }
  std::optional<Time> next_ready(Time now) const {
    return backlog_packets_ == 0 ? std::nullopt : std::optional<Time>(now);
  }

  // The band a packet with this skb->priority goes to.
  int band_of(uint8_t priority) const { return band_of_[priority & kTcPrioMax]; }

  uint64_t backlog_packets() const { return backlog_packets_; }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  uint64_t band_backlog_packets(int band) const { return bands_[band].size(); }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o) { observer_ = o; }

 private:
  std::optional<Packet> dequeue_from(int band, Time now) {
    Packet p = bands_[band].pop_front();
    --backlog_packets_;
    backlog_bytes_ -= p.len;
    ++stats_.dequeued_packets;
    stats_.dequeued_bytes += p.len;
    if (observer_ != nullptr) {
      observer_->on_dequeue(now, p);
    }
    return p;
  }

  Params params_;
  std::array<uint8_t, 16> band_of_{};  // priomap narrowed once, for the hot path
  uint64_t limit_ = 0;
  std::array<PacketFifo, kBands> bands_;
  uint64_t backlog_packets_ = 0;
  uint64_t backlog_bytes_ = 0;
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<PfifoFast>);

}  // namespace nicsim::algo
