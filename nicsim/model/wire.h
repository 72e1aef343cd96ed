#pragma once
// Wire — one direction of a full-duplex Ethernet link: serialisation at the line rate with the
// Ethernet per-frame overhead, propagation delay, optional random loss and jitter.
//
// Serialisation is charged from the cumulative byte count of the current busy period
// (start + ceil(bytes_total × 8 / rate)), so rounding never accumulates (DPDK "time in bytes",
// lib/sched/rte_sched.c). Jitter is uniform in [0, jitter] and never reorders frames (like
// netem with rate limiting: a frame never arrives before the one sent ahead of it). Loss and
// jitter use the wire's own seeded RNG, so a run is reproducible. 802.3x PAUSE from the
// receiver holds the transmitter: no new frame starts before the pause ends (the frame on the
// wire finishes).
//
// No clock is read: transmit() takes the time the sender offers the frame; arrivals are
// collected with pop_arrived(now) at or after next_ready().
//
// Observer: on_enqueue(first bit, frame) for every frame entering the wire (lost ones too),
// on_drop(last bit, frame, kWireLoss) for a lost one. The emulator's pcap export listens here.

#include <cstdint>
#include <deque>
#include <optional>
#include <random>

#include "nicsim/core/observer.h"
#include "nicsim/core/packet.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"
#include "nicsim/model/ethernet.h"

namespace nicsim::model {

class Wire {
 public:
  struct Params {
    Rate rate = Rate::mbit(100);
    Duration delay = Duration::zero();  // one-way propagation delay
    double loss = 0.0;                  // probability a frame is lost, [0, 1)
    Duration jitter = Duration::zero(); // extra delay, uniform in [0, jitter]
    uint64_t seed = 1;                  // RNG seed for loss and jitter
    EthernetOverhead overhead{};
    Validation validate() const;
  };
  struct Stats {
    uint64_t frames = 0;        // frames transmitted (including lost ones)
    uint64_t bytes = 0;         // their skb->len bytes
    uint64_t wire_bytes = 0;    // byte times used, with preamble, FCS, padding and IFG
    uint64_t lost = 0;
    uint64_t delivered = 0;
    Duration busy;              // total serialisation time
    Duration paused;            // time the transmitter was held by PAUSE
  };
  // What transmit() tells the sender.
  struct TxTiming {
    Time first_bit;  // serialisation start
    Time last_bit;   // serialisation end (the sender's TX completion time)
  };

  explicit Wire(const Params& params);

  // Serialises `frame` starting at the earliest of `now`, the end of the previous frame and the
  // end of a PAUSE. Returns the serialisation interval.
  TxTiming transmit(Packet&& frame, Time now);
  // The receiver asked the transmitter to pause until `until` (802.3x); a later call extends it.
  void pause_until(Time until);
  // When the transmitter could start a frame offered at `now`.
  Time free_at(Time now) const;
  // The end of the latest PAUSE (moves only when pause_until() extends it).
  Time paused_until() const { return paused_until_; }

  std::optional<Time> next_ready() const;
  std::optional<Packet> pop_arrived(Time now);
  uint64_t in_flight() const { return arrivals_.size(); }

  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o) { observer_ = o; }

 private:
  struct Arrival {
    Time at;
    Packet frame;
  };
  Params params_;
  Time busy_start_;       // start of the current back-to-back busy period
  uint64_t busy_bytes_ = 0;  // wire bytes sent in it
  Time busy_until_;
  Time paused_until_;
  Time last_arrival_;
  std::deque<Arrival> arrivals_;
  std::mt19937_64 rng_;
  Stats stats_;
  Observer* observer_ = nullptr;
};

}  // namespace nicsim::model
