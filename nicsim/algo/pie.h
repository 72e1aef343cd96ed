#pragma once
// Pie — Proportional Integral controller Enhanced (RFC 8033) on one FIFO queue, as Linux's
// sch_pie.
//
// Behaviour follows Linux net/sched/sch_pie.c and include/net/pie.h (torvalds/linux, read at
// commit 00ac0dc347dc for sch_pie.c and 105e808c1da2 for pie.h; the PIE core has been stable
// since v5.6 when FQ-PIE split it out). Behaviour ported, no kernel code copied. Two layers:
//
//  1. The reusable PIE machinery, split like the kernel's pie_params / pie_vars / pie_stats:
//     PieConfig (parameters in psched time), PieVars (per-queue controller state), PieStats,
//     and the three functions FQ-PIE runs per flow: pie_drop_early (enqueue),
//     pie_process_dequeue (dequeue: queue delay or drain-rate measurement, burst allowance)
//     and pie_calculate_probability (the tupdate timer: the PI controller).
//  2. class Pie, a QueueElement like sch_pie: tail drop at `limit` packets, the early drop
//     (or ECN mark) decision at enqueue, FIFO dequeue.
//
// The timer. Linux runs pie_calculate_probability from a timer every `tupdate`, the first
// time HZ/2 (500 ms) after the qdisc is created. An element reads no clock, so Pie runs the
// timer's due firings at the start of every call (enqueue, dequeue, peek) with the time of
// each firing: between two calls the backlog and the measured delay do not change, so
// catching up gives the same controller state as a real timer. The qdisc counts as created at
// its first call. When a firing leaves PieVars unchanged (an idle queue settles in a few
// firings) the rest up to `now` are skipped, as they would be no-ops too.
//
// Units: psched time is 64 ns per tick (ns >> PSCHED_SHIFT 6) in a uint64_t; probabilities are
// fractions of MAX_PROB = 2^56 - 1 (U64_MAX >> 8); alpha and beta are in 1/16 units as tc
// gives them; lengths and backlogs are bytes of Packet::len (skb->len), the backlog passed to
// PIE is the kernel's u32 sch->qstats.backlog.
//
// Deviations (docs/algorithms/pie.md): tupdate is a Duration used exactly (Linux rounds it up
// to jiffies: 15 ms is 16 ms at HZ=250); random numbers come from a seeded splitmix64 instead
// of get_random_bytes; stats are 64-bit.

#include <cstdint>
#include <optional>
#include <utility>

#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"

namespace nicsim::algo {

// ---------------------------------------------------------------------------------------
// psched time, probabilities, random numbers

using PschedTime = uint64_t;
inline constexpr int kPschedShift = 6;                              // PSCHED_SHIFT
inline constexpr uint64_t kPschedTicksPerSec = 1'000'000'000 >> 6;  // 15'625'000
inline constexpr uint64_t kPieMaxProb = UINT64_MAX >> 8;            // MAX_PROB: p = 1
inline constexpr PschedTime kPieDtimeInvalid = UINT64_MAX;          // DTIME_INVALID
inline constexpr uint64_t kPieDqCountInvalid = UINT64_MAX;          // DQCOUNT_INVALID (-1)
inline constexpr uint32_t kPieQueueThreshold = 16384;               // QUEUE_THRESHOLD, bytes
inline constexpr int kPieScale = 8;                                 // PIE_SCALE
inline constexpr Duration kPieFirstUpdate = 500_ms;                 // pie_init: HZ / 2

constexpr PschedTime psched_time(Time t) {
  return static_cast<uint64_t>(t.ns_since_epoch()) >> kPschedShift;
}
constexpr PschedTime psched_time(Duration d) {
  return static_cast<uint64_t>(d.count_ns()) >> kPschedShift;
}
// A probability in MAX_PROB units as a double in [0, 1] (above 1 when it overshoots).
constexpr double pie_prob_to_double(uint64_t prob) {
  return static_cast<double>(prob) / static_cast<double>(kPieMaxProb);
}

// Seeded 64-bit generator (splitmix64, S. Vigna, public domain algorithm) standing in for the
// kernel's get_random_bytes / get_random_u32: fast and reproducible per seed.
class AqmRandom {
 public:
  explicit AqmRandom(uint64_t seed) : state_(seed) {}
  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t next_u32() { return static_cast<uint32_t>(next_u64() >> 32); }

 private:
  uint64_t state_;
};

// The controller timer of PIE, FQ-PIE and DualPI2, run lazily at the element's calls (see
// "The timer" above). run() fires `fire(t)` for every firing due at or before `now`, at its
// time t; `fire` returns whether it changed the controller's state (false at a fixed point,
// after which the firings up to `now` are skipped). The first call arms the timer.
class AqmTimer {
 public:
  bool due(Time now) const { return !started_ || next_ <= now; }
  template <class Fire>
  void run(Time now, Duration first_delay, Duration period, Fire&& fire) {
    if (!started_) {
      started_ = true;
      next_ = now + first_delay;
      return;
    }
    while (next_ <= now) {
      const bool changed = fire(next_);
      next_ += period;
      if (!changed && next_ <= now) {
        next_ += period * ((now - next_) / period + 1);
      }
    }
  }
  std::optional<Time> next() const { return started_ ? std::optional<Time>(next_) : std::nullopt; }

 private:
  bool started_ = false;
  Time next_;
};

// ---------------------------------------------------------------------------------------
// Parameters, state, statistics

// The kernel's pie_params (limit lives in the element; mtu is psched_mtu(dev)).
struct PieConfig {
  PschedTime target = 234375;  // 15 ms
  uint32_t alpha = 2;          // 1/16 units: 0.125
  uint32_t beta = 20;          // 1/16 units: 1.25
  bool ecn = false;
  bool bytemode = false;
  bool dq_rate_estimator = false;
  uint32_t mtu = 1514;
};

// The kernel's pie_vars; PieVars{} is kzalloc followed by pie_vars_init.
struct PieVars {
  PschedTime qdelay = 0;                        // current queue delay
  PschedTime qdelay_old = 0;                    // at the previous update
  PschedTime burst_time = psched_time(150_ms);  // burst allowance left
  PschedTime dq_tstamp = kPieDtimeInvalid;      // last dequeue / start of measurement
  uint64_t prob = 0;                            // drop probability, MAX_PROB units
  uint64_t accu_prob = 0;                       // accumulated since the last drop
  uint64_t dq_count = kPieDqCountInvalid;       // bytes dequeued in this measurement
  uint32_t avg_dq_rate = 0;  // bytes per psched tick << PIE_SCALE (estimator mode)
  uint32_t backlog_old = 0;
  bool operator==(const PieVars&) const = default;
};

// pie_vars_init: restart the measurement cycle and the burst allowance (prob and the delays
// are kept).
void pie_vars_init(PieVars& vars);

// The kernel's pie_stats (tc -s: pkts_in, dropped, overlimit, ecn_mark, maxq).
struct PieStats {
  uint64_t packets_in = 0;  // packets accepted
  uint64_t dropped = 0;     // early drops AND overlimit drops (both go through `out:`)
  uint64_t overlimit = 0;   // tail drops at `limit`
  uint64_t ecn_mark = 0;    // CE marks instead of early drops
  uint64_t maxq = 0;        // largest qlen seen by an accepted arrival (before it joined)
};

Validation validate_pie_params(Duration target, Duration tupdate, int64_t alpha, int64_t beta,
                               int64_t mtu);
PieConfig make_pie_config(Duration target, int64_t alpha, int64_t beta, bool ecn, bool bytemode,
                          bool dq_rate_estimator, int64_t mtu);

// ---------------------------------------------------------------------------------------
// The three PIE functions (RFC 8033 §4.1-4.4 as Linux implements them)

// Enqueue: whether to drop (or mark) an arriving packet of `packet_size` bytes, with `backlog`
// bytes already queued. Derandomised as in the kernel: no drop while the accumulated
// probability is below 0.85, always one at 8.5, a random draw in between.
bool pie_drop_early(const PieConfig& config, PieVars& vars, uint32_t backlog, uint32_t packet_size,
                    AqmRandom& rng);

// Dequeue of a packet of `len` bytes enqueued at `enqueued`; `backlog` is what is left after
// it. Timestamp mode measures qdelay from the packet; estimator mode measures the drain rate
// over QUEUE_THRESHOLD-byte cycles. Both spend the burst allowance by the time elapsed.
void pie_process_dequeue(const PieConfig& config, PieVars& vars, PschedTime now,
                         PschedTime enqueued, uint32_t len, uint32_t backlog);

// The tupdate timer: the PI controller with Linux's auto-tuned alpha/beta, the 2 % step cap,
// the 250 ms boost, the decay on an idle queue, and the measurement restart.
void pie_calculate_probability(const PieConfig& config, PieVars& vars, uint32_t backlog);

// alpha (or beta) in MAX_PROB per psched tick, scaled down by the drop probability as RFC 8033
// §5.2 tunes it (by 2 below 10 %, then by 4 more per decade down to 1e-6).
uint64_t pie_scaled_gain(uint32_t gain_sixteenths, uint64_t prob);

// ---------------------------------------------------------------------------------------
// The sch_pie queueing element

class Pie {
 public:
  struct Params {
    int64_t limit = 1000;      // packets; pie_params_init
    Duration target = 15_ms;   // pie_params_init: 15 ms
    Duration tupdate = 15_ms;  // pie_params_init: 15 ms (in jiffies there)
    int64_t alpha = 2;         // 1/16 units (0.125); pie_params_init; tc: 0..32
    int64_t beta = 20;         // 1/16 units (1.25); pie_params_init; tc: 0..32
    bool ecn = false;
    bool bytemode = false;
    bool dq_rate_estimator = false;  // false: queue delay from packet timestamps
    int64_t mtu = 1514;              // psched_mtu(dev)
    uint64_t seed = 1;               // nicsim: seed of the early-drop random draws
    Validation validate() const;
  };
  struct Stats : QueueStats {
    PieStats pie;
  };

  Pie() : Pie(Params{}) {}
  explicit Pie(const Params& params);

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now);
  // The returned pointer is valid until the next enqueue or dequeue.
  const Packet* peek(Time now);
  std::optional<Time> next_ready(Time now) const {
    return fifo_.size() > 0 ? std::optional<Time>(now) : std::nullopt;
  }

  uint64_t backlog_packets() const { return fifo_.size(); }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  const PieConfig& config() const { return config_; }
  const PieVars& vars() const { return vars_; }
  // When the tupdate timer fires next (nullopt before the first call).
  std::optional<Time> next_update() const { return timer_.next(); }
  void set_observer(Observer* o) { observer_ = o; }

 private:
  void run_timer(Time now) {
    if (timer_.due(now)) {
      catch_up_timer(now);
    }
  }
  void catch_up_timer(Time now);
  uint32_t pie_backlog() const { return static_cast<uint32_t>(backlog_bytes_); }
  void process_head(Time now);

  Params params_;
  PieConfig config_;
  PieVars vars_;
  AqmRandom rng_;
  PacketFifo fifo_;
  uint64_t backlog_bytes_ = 0;   // sch->qstats.backlog (a peeked packet included)
  bool head_processed_ = false;  // peek ran the dequeue logic on fifo_.front() already
  AqmTimer timer_;
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<Pie>);

inline Verdict Pie::enqueue(Packet&& p, Time now) {
  run_timer(now);
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += p.len;
  DropReason reason = DropReason::kQueueFull;
  bool accept = false;
  if (fifo_.size() >= static_cast<uint64_t>(params_.limit)) {
    ++stats_.pie.overlimit;
  } else if (!pie_drop_early(config_, vars_, pie_backlog(), p.len, rng_)) {
    accept = true;
  } else if (config_.ecn && vars_.prob <= kPieMaxProb / 10 && p.set_ce()) {
    // Mark an ECN-capable packet while the probability is at most 10 %, else drop it.
    ++stats_.pie.ecn_mark;
    ++stats_.ecn_marked;
    if (observer_ != nullptr) {
      observer_->on_mark(now, p);
    }
    accept = true;
  } else {
    reason = DropReason::kAqm;
  }
  if (!accept) {
    ++stats_.pie.dropped;
    vars_.accu_prob = 0;
    ++stats_.dropped_packets;
    stats_.dropped_bytes += p.len;
    if (observer_ != nullptr) {
      observer_->on_drop(now, p, reason);
    }
    return Verdict::kDropped;
  }
  p.enqueue_ts = now;  // pie_set_enqueue_time (only read in timestamp mode)
  ++stats_.pie.packets_in;
  if (fifo_.size() > stats_.pie.maxq) {
    stats_.pie.maxq = fifo_.size();
  }
  backlog_bytes_ += p.len;
  if (observer_ != nullptr) {
    observer_->on_enqueue(now, p);
  }
  fifo_.push_back(std::move(p));
  return Verdict::kQueued;
}

inline void Pie::process_head(Time now) {
  const Packet& head = fifo_.front();
  pie_process_dequeue(config_, vars_, psched_time(now), psched_time(head.enqueue_ts), head.len,
                      static_cast<uint32_t>(backlog_bytes_ - head.len));
}

inline std::optional<Packet> Pie::dequeue(Time now) {
  run_timer(now);
  if (fifo_.size() == 0) {
    return std::nullopt;
  }
  if (!head_processed_) {
    process_head(now);
  }
  head_processed_ = false;
  Packet p = fifo_.pop_front();
  backlog_bytes_ -= p.len;
  ++stats_.dequeued_packets;
  stats_.dequeued_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_dequeue(now, p);
  }
  return std::optional<Packet>(std::move(p));
}

inline const Packet* Pie::peek(Time now) {
  run_timer(now);
  if (fifo_.size() == 0) {
    return nullptr;
  }
  if (!head_processed_) {
    // qdisc_peek_dequeued: the dequeue logic runs now, the packet stays counted in the qdisc.
    process_head(now);
    head_processed_ = true;
  }
  return &fifo_.front();
}

}  // namespace nicsim::algo
