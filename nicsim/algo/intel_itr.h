#pragma once
// IntelItr — the adaptive interrupt throttle rate (ITR) heuristics of Intel's igb (1 GbE) and
// ixgbe (10 GbE) Linux drivers: after each NAPI poll that completes, the driver looks at the
// packets and bytes its RX and TX rings handled since the last update and reprograms the
// vector's interrupt interval (EITR).
//
// Behaviour ported from Linux (not code):
//  * igb — drivers/net/ethernet/intel/igb/igb_main.c, igb_update_itr / igb_set_itr (the
//    single-vector path igb_ring_irq_enable takes when num_q_vectors == 1) and igb.h
//    (IGB_START_ITR 648, IGB_70K_ITR 56, IGB_20K_ITR 196, IGB_4K_ITR 980; itr_val is the EITR
//    interval in 0.25 us steps, the hardware uses bits 2..14 = whole microseconds):
//      - each ring keeps a latency class, lowest_latency / low_latency / bulk_latency, moved by
//        igb_update_itr from the ring's packets and bytes since the last update (no packets:
//        unchanged). From lowest: bytes/packet > 8000 → bulk; packets < 5 and bytes > 512 →
//        low. From low: bytes > 10000 → bulk if bytes/packet > 8000, or packets < 10, or
//        bytes/packet > 1200; else lowest if packets > 35; bytes <= 10000 → bulk if
//        bytes/packet > 2000, lowest if packets <= 2 and bytes < 512. From bulk: bytes > 25000
//        and packets > 35 → low; bytes < 1500 → low.
//      - igb_set_itr: class = max(tx class, rx class); conservative mode (InterruptThrottleRate
//        / rx-usecs = 3, the driver default IGB_DEFAULT_ITR) turns lowest into low; lowest →
//        70,000 ints/s, low → 20,000, bulk → 4,000. A link that is not 1000 Mbit/s gets 4,000
//        fixed. The "bias towards bulk" expression max(new*old / (new + old/4), new) always
//        equals new; ported as written, so the rate changes in one step.
//      - Mode kIgb is rx-usecs = 1 (dynamic, lowest_latency allowed); kIgbConservative is 3.
//  * ixgbe — drivers/net/ethernet/intel/ixgbe/ixgbe_main.c, ixgbe_update_itr / ixgbe_set_itr
//    (the byte/packet heuristic of "ixgbe: Update adaptive ITR algorithm", Linux 4.16) and
//    ixgbe.h (IXGBE_ITR_ADAPTIVE_MIN_INC 2, _MIN_USECS 10, _MAX_USECS 126, _LATENCY 0x80,
//    _BULK 0; IXGBE_20K_ITR 200 = the vector's start):
//      - a ring not updated for more than a jiffy (time_after(jiffies, next_update)) starts
//        over at 10 us in latency mode; no packets: current + 2 us (max 126), keeping the
//        latency flag; packets < 4 and bytes < 9000: latency mode, sized by the average
//        packet; 4..47 packets: current + 2 us (max 126); 48..95: keep; 96..255: half the
//        current (min 10); >= 256: bulk mode sized by the average packet. Sizing: a piecewise
//        linear function of bytes/packet (≈50k ints/s at 60 B down to 8k at >= 1968 B),
//        halved in latency mode, scaled for the link speed (10G: /512 µs, 1G/2.5G: /128 with
//        the value capped at 8064), rounded up to 2 us.
//      - ixgbe_set_itr: the smaller of the RX and TX ring values, latency flag cleared, is the
//        vector's interval (82599/X540 EITR counts in 2 us steps: odd values round down).
//    Called only after napi_complete_done succeeded (ixgbe_poll with rx_itr_setting & 1).
// Units: time is an argument (no clock is read); intervals are Durations; counts are frames
// (packets) and bytes as the drivers count them (skb->len of each cleaned buffer).
// Deviations: igb's multi-vector heuristic (igb_update_ring_itr, average wire size) is not
// ported — this is the single-vector path the brief and the igb comments name; the interval
// is applied as an interrupt delay (IrqCoalescer usecs), not as a minimum gap between
// interrupts (docs/rx-batching.md).

#include <cstdint>

#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"

namespace nicsim::algo {

class IntelItr {
 public:
  enum class Mode : uint8_t { kIgb, kIgbConservative, kIxgbe };
  // igb's enum latency_range.
  enum class Latency : uint8_t { kLowest = 0, kLow = 1, kBulk = 2 };

  static constexpr int64_t kIgbStartItr = 648;  // ~6,000 ints/s (0.25 us steps)
  static constexpr int64_t kIgb70k = 56;
  static constexpr int64_t kIgb20k = 196;
  static constexpr int64_t kIgb4k = 980;
  static constexpr uint32_t kIxgbeMinInc = 2;
  static constexpr uint32_t kIxgbeMinUsecs = 10;
  static constexpr uint32_t kIxgbeMaxUsecs = 126;
  static constexpr uint32_t kIxgbeLatency = 0x80;
  static constexpr int64_t kIxgbe20k = 200;  // q_vector->itr = usecs << 2

  struct Params {
    Mode mode = Mode::kIgbConservative;
    int64_t link_mbps = 1000;  // adapter->link_speed
    int64_t hz = 250;          // CONFIG_HZ: ixgbe's next_update is in jiffies
    Validation validate() const;
  };
  // One ring container's totals since the last update (total_packets, total_bytes).
  struct Counts {
    uint32_t packets = 0;
    uint32_t bytes = 0;
  };
  struct Sample {
    Time time;
    Counts rx;
    Counts tx;
  };
  struct State {
    Latency rx_range = Latency::kLowest;  // igb ring_container->itr (kzalloc: lowest)
    Latency tx_range = Latency::kLowest;
    int64_t igb_itr_val = kIgbStartItr;  // igb q_vector->itr_val
    // ixgbe ring_container->itr (usecs | latency flag); ixgbe_alloc_q_vector (ixgbe_lib.c)
    // starts both at IXGBE_ITR_ADAPTIVE_MAX_USECS | IXGBE_ITR_ADAPTIVE_LATENCY.
    uint32_t rx_itr = kIxgbeMaxUsecs | kIxgbeLatency;
    uint32_t tx_itr = kIxgbeMaxUsecs | kIxgbeLatency;
    int64_t rx_next_update = 0;  // ixgbe, in jiffies
    int64_t tx_next_update = 0;
    int64_t ixgbe_itr = kIxgbe20k;  // ixgbe q_vector->itr (usecs << 2)
  };
  struct Stats {
    uint64_t updates = 0;
    uint64_t changes = 0;
  };

  IntelItr() : IntelItr(Params{}) {}
  explicit IntelItr(const Params& params);

  // The driver's set_itr after a completed poll. Returns true when the interval changed.
  bool update(const Sample& s);
  // The interval the vector runs at now.
  Duration interval() const;
  // The interval before any update (the driver's start value).
  Duration start_interval() const { return IntelItr(params_).interval(); }

  const State& state() const { return state_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

  // The pieces, public for tests.
  static Latency igb_update(Latency current, Counts c);
  static int64_t igb_itr_of(Latency l);
  // ixgbe_update_itr for one ring: returns the ring's new itr; next_update is updated.
  static uint32_t ixgbe_update(uint32_t ring_itr, int64_t& next_update, int64_t jiffies,
                               int64_t q_itr, Counts c, int64_t link_mbps);

 private:
  bool update_igb(const Sample& s);
  bool update_ixgbe(const Sample& s);

  Params params_;
  State state_;
  Stats stats_;
};

const char* to_string(IntelItr::Latency l);

}  // namespace nicsim::algo
