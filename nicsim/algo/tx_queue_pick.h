#pragma once
// TxQueuePick — how Linux picks the transmit queue of a multi-queue device for a packet:
// the socket's cached queue while its packets may not be reordered, else XPS (a per-CPU or
// per-RX-queue list of TX queues), else the flow hash scaled onto the queues; a forwarded
// packet keeps the index of the RX queue it arrived on.
//
// Behaviour follows Linux net/core/dev.c (netdev_core_pick_tx, netdev_pick_tx, get_xps_queue,
// __get_xps_queue_idx, skb_tx_hash, netdev_cap_txqueue) and include/linux/kernel.h
// (reciprocal_scale); Documentation/networking/scaling.rst ("XPS: Transmit Packet Steering").
// Ported behaviour, not code:
//  * one TX queue: queue 0, nothing cached;
//  * netdev_pick_tx: a socket whose cached queue (sk_tx_queue_get) is valid keeps it unless the
//    packet is `ooo_okay` (TCP sets skb->ooo_okay when the socket has nothing in flight below
//    it, so moving to another queue cannot reorder its packets); otherwise the queue is
//    get_xps_queue(), or skb_tx_hash() when XPS names none, and it is cached in the socket;
//  * get_xps_queue: the receive-queue map (xps_rxqs) first, for a socket that recorded the RX
//    queue its packets arrive on, then the CPU map (xps_cpus) of the sending CPU; a map entry
//    with one queue gives it, with several the flow hash picks one (reciprocal_scale); a queue
//    beyond the device's queues gives none;
//  * skb_tx_hash: a packet that recorded its RX queue (forwarding: skb_rx_queue_recorded) goes to
//    that index, reduced below the queue count by subtraction; else reciprocal_scale(hash, n).
// Traffic classes (mqprio, num_tc) and drivers' own ndo_select_queue are not modelled.
//
// Units: queue and CPU indices; `hash` is skb_get_hash (the flow hash the models carry).

#include <cstdint>
#include <optional>
#include <vector>

#include "nicsim/core/param_error.h"

namespace nicsim::algo {

class TxQueuePick {
 public:
  struct Params {
    uint32_t tx_queues = 1;  // real_num_tx_queues
    // xps_cpus: for each CPU, the TX queues it may use (empty outer or inner list: none).
    // Drivers such as ixgbe (with ATR) and mlx5 set CPU i -> queue i at start-up.
    std::vector<std::vector<uint32_t>> xps_cpus;
    // xps_rxqs: for each RX queue, the TX queues its sockets may use.
    std::vector<std::vector<uint32_t>> xps_rxqs;
    Validation validate() const;
  };

  // What the stack knows about a packet when it picks the queue.
  struct Packet {
    uint32_t hash = 0;                     // skb_get_hash
    std::optional<uint32_t> sender_cpu;    // the CPU transmitting it (skb->sender_cpu - 1)
    std::optional<uint32_t> recorded_rxq;  // skb_rx_queue_recorded: a forwarded packet
    bool from_socket = false;              // skb->sk is a full socket with a cached route
    std::optional<uint32_t> socket_queue;  // sk_tx_queue_get
    std::optional<uint32_t> socket_rxq;    // sk_rx_queue_get (for xps_rxqs)
    bool ooo_okay = false;                 // skb->ooo_okay
  };

  struct Choice {
    uint32_t queue = 0;
    std::optional<uint32_t> cache;  // the value to store as the socket's queue (if it changed)
  };

  struct Stats {
    uint64_t kept = 0;  // the socket's cached queue was used
    uint64_t xps = 0;   // an XPS map chose
    uint64_t hash = 0;  // skb_tx_hash chose by flow hash
    uint64_t rxq = 0;   // skb_tx_hash chose by recorded RX queue
  };

  TxQueuePick() : TxQueuePick(Params{}) {}
  explicit TxQueuePick(const Params& params);

  // The default maps drivers like ixgbe and mlx5 install: CPU i -> TX queue i (for i below
  // both counts).
  static std::vector<std::vector<uint32_t>> one_queue_per_cpu(uint32_t cpus, uint32_t queues);
  // reciprocal_scale(val, n): val * n / 2^32, a multiply instead of a modulo.
  static uint32_t reciprocal_scale(uint32_t val, uint32_t n) {
    return static_cast<uint32_t>((static_cast<uint64_t>(val) * n) >> 32);
  }

  // netdev_core_pick_tx for one packet.
  Choice pick(const Packet& p);

  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  std::optional<uint32_t> xps_queue(const Packet& p) const;
  static std::optional<uint32_t> from_map(const std::vector<std::vector<uint32_t>>& map,
                                          uint32_t index, uint32_t hash, uint32_t queues);
  uint32_t tx_hash(const Packet& p);

  Params params_;
  Stats stats_;
};

}  // namespace nicsim::algo
