#pragma once
// DocsisPie — DOCSIS-PIE, the AQM a DOCSIS 3.1 cable modem runs on its upstream service flow
// (RFC 8034, "Active Queue Management (AQM) Based on Proportional Integral Controller Enhanced
// (PIE) for DOCSIS Cable Modems", G. White, R. Pan, 2017; the same algorithm as the DOCSIS 3.1
// MULPI specification's Annex M).
//
// Source of the behaviour: the RFC's text could not be read from this machine (only its
// abstract and header); the algorithm is ported from CableLabs' reference model of it,
// cablelabs/docsis-ns3 model/dual-queue-coupled-aqm.cc (commit 02aa2423569e, its
// non-coupled "DOCSIS PIE" path: CalculateDropProb, DropEarly, ClassicEnqueue) and
// model/cm-net-device.cc (ExpectedDelay, the queue delay estimate) — behaviour ported, no code
// copied. docs/algorithms/docsis_pie.md lists what differs from Linux PIE and from the model.
//
// What makes it DOCSIS-PIE rather than RFC 8033 PIE:
//  - queue delay is *estimated* from the queue's byte length and the service flow's configured
//    rate (upstream grants are bursty, so departure-rate measurements are unreliable);
//  - LATENCY_TARGET 10 ms, INTERVAL (T_UPDATE) 16 ms, alpha 0.25 and beta 2.5 per second;
//  - a different auto-tuning table: p is divided by 2048 / 512 / 128 / 32 / 8 / 2 below
//    1e-6 / 1e-5 / 1e-4 / 1e-3 / 1e-2 / 0.1 and *multiplied* by 2 / 8 / 32 below 1 / 10 / above,
//    since DOCSIS-PIE's drop probability is per MEAN_PKTSIZE (1024 B) packet and may exceed 1;
//  - the drop probability is scaled by packet size (p × size / 1024, at most PROB_LOW = 0.85)
//    and capped at PROB_LOW × MEAN_PKTSIZE / MIN_PKTSIZE = 13.6; decay × 0.98 per update while
//    both delays are below LATENCY_LOW (5 ms); +2 % above LATENCY_HIGH (200 ms);
//  - the burst allowance (MAX_BURST 142 ms) is armed by the first early drop of a burst, and a
//    three-state burst detector (NO_BURST, IN_BURST, IN_BURST_PROTECTING) leaves the queue
//    alone until it holds a third of its buffer, and returns to NO_BURST after
//    BURST_RESET_TIMEOUT (1 s) of quiet updates;
//  - derandomisation with accu_prob thresholds PROB_LOW (0.85) and PROB_HIGH (8.5).
//
// The INTERVAL timer runs lazily at the element's calls (AqmTimer, nicsim/algo/pie.h), the
// first firing one INTERVAL after the first call. Probabilities are doubles, as in the model.

#include <cstdint>
#include <optional>
#include <utility>

#include "nicsim/algo/pie.h"
#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/rate.h"

namespace nicsim::algo {

// RFC 8034's auto-tuning of the PI step `p` by the current drop probability: divided by 2048,
// 512, 128, 32, 8, 2 below 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1; multiplied by 2 below 1, by 8
// below 10 and by 32 beyond (p counts drops per MEAN_PKTSIZE packet and may exceed 1).
double docsis_pie_tuned_step(double p, double drop_prob);

class DocsisPie {
 public:
  struct Params {
    // The service flow's max sustained rate: queue delay = backlog / rate. Unset (0): nicsim's
    // extension for a queue without a configured rate: the head packet's sojourn time.
    Rate rate{};
    // BUFFER_SIZE in bytes; 0 = the DOCSIS default target buffer, 100 ms at `rate` (at least
    // 2 x 1518 B), or 1000 x 1514 B without a rate (Linux's txqueuelen of full frames).
    int64_t limit = 0;
    Duration target = 10_ms;             // LATENCY_TARGET
    Duration interval = 16_ms;           // INTERVAL (T_UPDATE)
    double alpha = 0.25;                 // A, per second of delay error
    double beta = 2.5;                   // B
    Duration max_burst = 142_ms;         // MAX_BURST
    Duration burst_reset_timeout = 1_s;  // BURST_RESET_TIMEOUT
    int64_t mean_packet_size = 1024;     // MEAN_PKTSIZE, bytes
    uint64_t seed = 1;                   // nicsim: seed of the random draws
    Validation validate() const;
  };
  enum class BurstState : uint8_t { kNoBurst, kInBurst, kInBurstProtecting };
  struct Stats : QueueStats {
    uint64_t packets_in = 0;   // accepted
    uint64_t early_drops = 0;  // drop_early
    uint64_t overlimit = 0;    // tail drops at the buffer size
    uint64_t bursts = 0;       // times the burst allowance was armed
  };

  // RFC 8034's constants that are not parameters.
  static constexpr double kProbLow = 0.85;                  // PROB_LOW
  static constexpr double kProbHigh = 8.5;                  // PROB_HIGH
  static constexpr int64_t kMinPacketSize = 64;             // MIN_PKTSIZE, bytes
  static constexpr Duration kLatencyLow = 5_ms;             // LATENCY_LOW
  static constexpr Duration kLatencyHigh = 200_ms;          // LATENCY_HIGH
  static constexpr Duration kDefaultTargetBuffer = 100_ms;  // buffer = this x rate

  DocsisPie() : DocsisPie(Params{}) {}
  explicit DocsisPie(const Params& params);

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now);
  const Packet* peek(Time now);
  std::optional<Time> next_ready(Time now) const {
    return fifo_.size() > 0 ? std::optional<Time>(now) : std::nullopt;
  }

  uint64_t backlog_packets() const { return fifo_.size(); }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o) { observer_ = o; }

  // Controller state (tc -s style counters and tests).
  double drop_prob() const { return drop_prob_; }
  Duration qdelay() const { return qdelay_old_; }  // the delay of the last update
  Duration burst_allowance() const { return burst_allowance_; }
  BurstState burst_state() const { return burst_state_; }
  int64_t buffer_bytes() const { return buffer_bytes_; }
  std::optional<Time> next_update() const { return timer_.next(); }

  // One INTERVAL update with queue delay `qdelay` (public for tests: RFC 8034's
  // calculate_drop_prob, run by the timer).
  void update(Duration qdelay);
  // The estimated queue delay now (the rate estimate, or the head's sojourn).
  Duration estimated_delay(Time now) const;

 private:
  bool drop_early(uint32_t packet_size);
  // update(), and whether it changed the controller (false at an idle fixed point: the timer
  // then skips the firings up to now, which would change nothing either).
  bool update_changed_state(Duration qdelay);
  void run_timer(Time now) {
    if (timer_.due(now)) {
      timer_.run(now, params_.interval, params_.interval,
                 [this](Time t) { return update_changed_state(estimated_delay(t)); });
    }
  }

  Params params_;
  int64_t buffer_bytes_;
  AqmRandom rng_;
  PacketFifo fifo_;
  uint64_t backlog_bytes_ = 0;
  double drop_prob_ = 0;
  double accu_prob_ = 0;
  Duration qdelay_old_ = Duration::zero();
  Duration burst_allowance_ = Duration::zero();
  BurstState burst_state_ = BurstState::kNoBurst;
  int64_t burst_reset_ = 0;  // quiet updates counted in IN_BURST
  AqmTimer timer_;
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<DocsisPie>);

}  // namespace nicsim::algo
