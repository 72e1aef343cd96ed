#pragma once
// Doorbell — xmit_more doorbell deferral and the BQL stop/wake logic of one driver TX queue.
//
// What it is: the state a driver TX queue shares with the stack — the DRV_XOFF bit (the
// driver stopped the queue, e.g. its ring is nearly full), the STACK_XOFF bit (BQL stopped it)
// and the queue's Dql — plus the decision, per packet handed to ndo_start_xmit, whether the
// driver writes the doorbell (ring tail register, one MMIO write) now or defers it because the
// stack promised another packet (xmit_more). The qdisc may only hand packets over while
// neither bit is set (stopped() == false).
//
// Reference: behaviour follows Linux include/linux/netdevice.h __netdev_tx_sent_queue (4.20+,
// commit 3e59020abf0f), netdev_tx_sent_queue, netdev_tx_completed_queue,
// netdev_tx_reset_queue, net/core/dev.c netif_schedule_queue / netif_tx_wake_queue, as
// described in docs/mechanisms §2.3, §2.4, §2.6, §3.1–§3.4:
//  - on_sent(bytes, xmit_more), BQL on, driver uses xmit_more (ice/igb/ixgbe pattern):
//    xmit_more -> dql.queued(bytes) only (no limit check, STACK_XOFF unchanged), kick only if
//    DRV_XOFF is set; last packet of a batch -> netdev_tx_sent_queue (dql.queued, STACK_XOFF
//    if avail < 0) and kick. So BQL stop decisions are taken at the last packet of a batch.
//  - uses_xmit_more == false (stmmac, §3.4): netdev_tx_sent_queue (if BQL) and a kick for
//    every packet, whatever the stack's xmit_more says.
//  - BQL off (no Dql): the pre-4.20 open-coded rule "kick if !xmit_more || queue stopped";
//    without BQL only DRV_XOFF can stop the queue.
//  - on_completed(pkts, bytes, now): 0 bytes -> nothing; dql.completed(bytes); if avail >= 0
//    and STACK_XOFF was set, clear it; the qdisc is rescheduled (return true) only if the
//    queue is then not stopped at all (netif_schedule_queue tests both bits).
//  - set_driver_stopped(false) clears DRV_XOFF and reschedules (netif_tx_wake_queue).
// Units: bytes = skb->len. No clock is read; `now` is an argument where Dql needs it.
//
// Deviations (docs/algorithms/doorbell.md): the memory barriers and the re-check of avail in
// netdev_tx_sent_queue (a concurrent completion) have no effect in a single-threaded model;
// pre-4.20 BQL drivers (netdev_tx_sent_queue on every packet plus the open-coded kick rule)
// are not a separate mode — use uses_xmit_more = true with bql = false, or bql = true.

#include <cstdint>

#include "nicsim/algo/dql.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"

namespace nicsim::algo {

class Doorbell {
 public:
  struct Params {
    // The driver calls the BQL hooks (netdev_tx_sent_queue / _completed_queue). True for the
    // PCIe NIC drivers of §3.3 (igb, ixgbe, ice) and for stmmac since 2014 (S3, §2.6).
    bool bql = true;
    // The queue's DQL (limits and hold time; used when bql is true). Kernel defaults.
    Dql::Params dql{};
    // The driver defers its doorbell while netdev_xmit_more() (§3.3). stmmac does not: it
    // writes the tail pointer for every packet (§3.4).
    bool uses_xmit_more = true;
    // CPU time per doorbell (MMIO) write, charged by the model layer, not here. Default 0:
    // no source gives a number (§3.4 only infers "sub-microsecond"); presets set it.
    Duration kick_cost = Duration::zero();

    Validation validate() const;
  };

  // Monotonic counters. Identities (asserted in tests):
  //   kicks <= packets
  //   packets == kicked_packets + reset_unkicked_packets + pending_packets()
  struct Stats {
    uint64_t packets = 0;  // on_sent calls
    uint64_t bytes = 0;
    uint64_t kicks = 0;              // doorbell writes
    uint64_t kicked_packets = 0;     // packets covered by a doorbell write
    uint64_t batches = 0;            // stack batches ended: on_sent with xmit_more == false
    uint64_t largest_batch = 0;      // most packets covered by one doorbell write
    uint64_t stack_xoff_events = 0;  // STACK_XOFF set by BQL (0 -> 1)
    uint64_t drv_stopped_kicks = 0;  // kicks forced mid-batch because DRV_XOFF was set
    uint64_t wakes = 0;              // STACK_XOFF cleared by a completion
    uint64_t reschedules = 0;        // on_completed / set_driver_stopped returned true
    uint64_t driver_stops = 0;       // DRV_XOFF set (0 -> 1)
    // on_sent while STACK_XOFF was set: the stack broke the contract (§2.6). (DRV_XOFF may
    // legitimately be set: the driver stops the queue inside ndo_start_xmit, before
    // __netdev_tx_sent_queue, for the packet that fills the ring.)
    uint64_t sent_while_stack_stopped = 0;
    uint64_t completions = 0;  // on_completed calls with bytes > 0
    uint64_t completed_packets = 0;
    uint64_t completed_bytes = 0;
    uint64_t empty_completions = 0;  // on_completed with bytes == 0: ignored (§2.4 step 1)
    uint64_t resets = 0;
    uint64_t reset_unkicked_packets = 0;  // packets pending at reset(), never kicked
  };

  Doorbell() : Doorbell(Params{}) {}
  explicit Doorbell(const Params& params, Time now = Time::zero());

  // A packet of `bytes` was placed in the ring by ndo_start_xmit; `xmit_more` is the stack's
  // netdev_xmit_more(). Returns true if the driver must write the doorbell now.
  bool on_sent(uint32_t bytes, bool xmit_more);

  // TX clean pass: `pkts` packets / `bytes` bytes completed (netdev_tx_completed_queue).
  // Returns true if the qdisc must be rescheduled (STACK_XOFF was cleared and DRV_XOFF is
  // not set).
  bool on_completed(uint32_t pkts, uint32_t bytes, Time now);

  // netif_tx_stop_queue (true) / netif_tx_wake_queue (false). Returns true if the qdisc must
  // be rescheduled: waking a queue the driver had stopped.
  bool set_driver_stopped(bool stopped);

  // netif_xmit_stopped: DRV_XOFF or STACK_XOFF. The qdisc must not hand over packets.
  bool stopped() const { return drv_xoff_ || stack_xoff_; }
  bool driver_stopped() const { return drv_xoff_; }
  bool stack_stopped() const { return stack_xoff_; }

  // qdisc_avail_bulklimit (§3.2): dql_avail with BQL; 0 without (adj_limit = num_queued = 0
  // forever), so bytelimit = avail - first_len < 0 and no bulk dequeue happens.
  int32_t bql_avail() const { return params_.bql ? dql_.avail() : 0; }

  // netdev_tx_reset_queue: clear STACK_XOFF and reset the DQL (DRV_XOFF is the driver's).
  // Packets written but not yet kicked are forgotten (the ring is being flushed).
  void reset(Time now);

  // Packets written since the last doorbell write.
  uint32_t pending_packets() const { return pending_; }
  // The queue's DQL, or nullptr when the driver does not use BQL.
  const Dql* dql() const { return params_.bql ? &dql_ : nullptr; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  // netdev_tx_sent_queue (§2.3): account the bytes and stop the queue if over the limit.
  void sent_queue(uint32_t bytes) {
    dql_.queued(bytes);
    if (dql_.avail() < 0 && !stack_xoff_) {
      stack_xoff_ = true;
      ++stats_.stack_xoff_events;
    }
  }

  Params params_;
  Dql dql_;
  Stats stats_;
  uint32_t pending_ = 0;
  bool drv_xoff_ = false;
  bool stack_xoff_ = false;
};

inline bool Doorbell::on_sent(uint32_t bytes, bool xmit_more) {
  ++stats_.packets;
  stats_.bytes += bytes;
  if (stack_xoff_) [[unlikely]] {
    ++stats_.sent_while_stack_stopped;
  }
  ++pending_;
  if (!xmit_more) {
    ++stats_.batches;
  }
  bool kick;
  if (!params_.uses_xmit_more) {
    // Driver ignores xmit_more: full BQL accounting and a doorbell for every packet.
    if (params_.bql) {
      sent_queue(bytes);
    }
    kick = true;
  } else if (xmit_more) {
    // __netdev_tx_sent_queue with xmit_more: bytes only; kick iff the driver stopped the queue
    // (netif_tx_queue_stopped tests DRV_XOFF only; without BQL STACK_XOFF is never set).
    if (params_.bql) {
      dql_.queued(bytes);
    }
    kick = drv_xoff_;
    if (kick) {
      ++stats_.drv_stopped_kicks;
    }
  } else {
    if (params_.bql) {
      sent_queue(bytes);
    }
    kick = true;
  }
  if (kick) {
    ++stats_.kicks;
    stats_.kicked_packets += pending_;
    if (pending_ > stats_.largest_batch) {
      stats_.largest_batch = pending_;
    }
    pending_ = 0;
  }
  return kick;
}

inline bool Doorbell::on_completed(uint32_t pkts, uint32_t bytes, Time now) {
  if (bytes == 0) {  // §2.4 step 1
    ++stats_.empty_completions;
    return false;
  }
  ++stats_.completions;
  stats_.completed_packets += pkts;
  stats_.completed_bytes += bytes;
  if (!params_.bql) {
    return false;
  }
  dql_.completed(bytes, now);              // §2.4 step 2
  if (dql_.avail() < 0 || !stack_xoff_) {  // step 3; step 4 needs STACK_XOFF set
    return false;
  }
  stack_xoff_ = false;
  ++stats_.wakes;
  if (drv_xoff_) {  // netif_schedule_queue: still stopped by the driver, no reschedule
    return false;
  }
  ++stats_.reschedules;
  return true;
}

}  // namespace nicsim::algo
