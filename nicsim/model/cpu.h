#pragma once
// Cpu — the host core that runs the NIC's interrupt, softirq and driver work, as a serial
// server: each job starts when both it is ready and the core is free, and occupies the core
// for its cost. A slow core therefore delays RX processing (and lets device FIFOs and rings
// overflow) and TX completion — the mechanism by which per-frame costs cap throughput.
// Costs come from a CpuCosts preset (a slow ARM core, a desktop x86 core); per-byte costs are
// in picoseconds per byte because a memcpy of one byte costs well under a nanosecond.
//
// No clock is read: run() takes the ready time and returns the completion time; the caller
// schedules the job's effect at that time.

#include <cstdint>

#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"

namespace nicsim::model {

// Per-operation CPU costs of one host core. Values come from presets (presets/cpu/*.toml).
struct CpuCosts {
  Duration per_interrupt;        // hard IRQ entry/exit + scheduling NAPI / a tasklet
  Duration per_poll;             // one NAPI poll / USB completion callback invocation
  Duration per_rx_frame;         // driver + stack work per received frame (no copy)
  Duration per_tx_frame;         // ndo_start_xmit + qdisc work per transmitted frame
  Duration per_tx_clean;         // freeing one completed TX frame (skb free, TSQ callback)
  Duration per_gso_segment;      // software GSO: building one segment
  Duration per_usb_transfer;     // host per-transfer cost: completion handling + resubmit
  Duration per_kick;             // one doorbell MMIO write
  int64_t copy_ps_per_byte = 0;  // memcpy cost, picoseconds per byte (FreeBSD/asix RX copy)
  // Routers only (model::Router; a host forwards nothing, so its dumps leave these out):
  Duration per_forward =
      Duration::zero();  // ip_rcv + FIB lookup + ip_forward + neighbour output, per packet
  Duration per_qdisc_op =
      Duration::zero();  // one packet through one shaping/scheduling qdisc (HTB, fq_codel,
                         // TBF...) beyond the FIFO work already in per_tx_frame
  // The part of per_rx_frame paid once per packet handed to the stack (netif_receive_skb, IP,
  // TCP, socket queueing, skb free): with GRO a merged packet pays it once, its frames pay
  // per_rx_frame - per_rx_packet each (driver + dev_gro_receive). Only NICs with GRO read it.
  Duration per_rx_packet = Duration::zero();
  Validation validate() const;
  // The cost of copying `bytes` bytes.
  Duration copy(uint64_t bytes) const {
    return Duration::ns(
        static_cast<int64_t>((bytes * static_cast<uint64_t>(copy_ps_per_byte)) / 1000));
  }
};

class Cpu {
 public:
  struct Stats {
    uint64_t jobs = 0;
    Duration busy;      // total time the core was busy
    Duration max_wait;  // longest time a job waited for the core
    Duration spin;      // busy polling: time an application spun on the core (in busy too)
  };

  // Runs a job that becomes ready at `ready` and costs `cost`; returns when it completes.
  Time run(Time ready, Duration cost) {
    const Time start = max(ready, busy_until_);
    stats_.max_wait = max(stats_.max_wait, start - ready);
    busy_until_ = start + cost;
    stats_.busy += cost;
    ++stats_.jobs;
    return busy_until_;
  }
  // An application spinning (busy polling, SO_BUSY_POLL) keeps the core busy without doing
  // modelled work: counted as busy time, but it delays no job (need_resched() ends the spin as
  // soon as anything else wants the core, and the spinner runs the NAPI poll itself).
  void add_spin(Duration d) {
    stats_.busy += d;
    stats_.spin += d;
  }
  Time busy_until() const { return busy_until_; }
  const Stats& stats() const { return stats_; }

 private:
  Time busy_until_;
  Stats stats_;
};

}  // namespace nicsim::model
