#pragma once
// Codel — the Controlled Delay AQM (Nichols & Jacobson; RFC 8289) on one FIFO queue.
//
// Behaviour follows Linux include/net/codel.h, include/net/codel_impl.h and
// net/sched/sch_codel.c as described in docs/mechanisms/codel.md §8.1–8.4 (behaviour ported,
// no kernel code copied). The file has two layers:
//
//  1. The reusable CoDel machinery, split like the kernel's codel_params / codel_vars /
//     codel_stats: CodelConfig (parameters converted to CoDel time), CodelVars (per-queue
//     state: count, lastcount, dropping, rec_inv_sqrt, first_above_time, drop_next, ldelay),
//     CodelStats, the fixed-point helpers codel_newton_step / codel_control_law,
//     codel_should_drop and the function template codel_dequeue(vars, config, stats, now,
//     backlog, dequeue_fn, drop_fn, mark_fn). FqCodel runs the same template per flow with
//     per-flow CodelVars and global config and stats.
//  2. class Codel, a QueueElement like sch_codel: tail drop at `limit` packets on enqueue,
//     CoDel at dequeue. peek(now) runs the dequeue logic once and stashes the packet, like
//     qdisc_peek_dequeued; the stashed packet still counts in the backlog and against the
//     limit, and the following dequeue returns it without running CoDel again. Packets live
//     in a PacketPool; CoDel looks at them in place and a packet is moved out only once,
//     when it is delivered.
//
// Units: CoDel time is 1024 ns per unit (ns >> 10) in a uint32_t that wraps every ~73 min
// and is compared through signed 32-bit differences (§8.1); target, interval and
// ce_threshold are truncated to that unit (5 ms -> 4882, 100 ms -> 97656). Lengths and
// backlogs are bytes of Packet::len (skb->len).
//
// Deviations (docs/algorithms/codel.md): drop_count/drop_len in CodelStats are cumulative
// (the kernel zeroes them after reporting them to the parent qdisc); CoDel drops are
// reported to the Observer and QueueStats immediately. CODEL_MAX_DROPS_PER_DEQUEUE (newest
// kernels, §8.4, implementation not examined) is not modelled: the drop loop is unbounded,
// as in the kernels the design facts describe. ecn_marked in QueueStats counts both
// control-law marks and CE-threshold marks (marking events, as ecn_mark + ce_mark).

#include <cstdint>
#include <optional>
#include <utility>

#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"

namespace nicsim::algo {

// ---------------------------------------------------------------------------------------
// CoDel time (§8.1)

using CodelTime = uint32_t;
inline constexpr int kCodelShift = 10;  // CODEL_SHIFT: 1 unit = 1024 ns
// rec_inv_sqrt is kept in 16 bits (REC_INV_SQRT_BITS); the shift turns it into Q0.32.
inline constexpr int kRecInvSqrtShift = 16;
inline constexpr uint16_t kRecInvSqrtOne = 0xFFFF;  // ~1.0, the value when count is reset to 1

constexpr CodelTime codel_time(Time t) {
  return static_cast<CodelTime>(static_cast<uint64_t>(t.ns_since_epoch()) >> kCodelShift);
}
constexpr CodelTime codel_time(Duration d) {
  return static_cast<CodelTime>(static_cast<uint64_t>(d.count_ns()) >> kCodelShift);
}
constexpr bool codel_time_after(CodelTime a, CodelTime b) {
  return static_cast<int32_t>(a - b) > 0;
}
constexpr bool codel_time_after_eq(CodelTime a, CodelTime b) {
  return static_cast<int32_t>(a - b) >= 0;
}
constexpr bool codel_time_before(CodelTime a, CodelTime b) {
  return static_cast<int32_t>(a - b) < 0;
}

// ---------------------------------------------------------------------------------------
// Parameters, state, statistics

// Parameters in CoDel time (the kernel's codel_params), derived from an element's Params.
struct CodelConfig {
  CodelTime target = 4882;     // 5 ms
  CodelTime interval = 97656;  // 100 ms
  uint32_t mtu = 1514;         // backlog <= mtu never drops (psched_mtu)
  bool ecn = false;            // mark ECN-capable packets instead of dropping them
  bool ce_threshold_enabled = false;
  CodelTime ce_threshold = 0;  // CE-mark packets whose sojourn is strictly above this
  uint8_t ce_threshold_selector = 0;
  uint8_t ce_threshold_mask = 0;  // 0: every ECN-capable packet is eligible
};

// Per-queue state (the kernel's codel_vars); zero-initialised like codel_vars_init.
struct CodelVars {
  uint32_t count = 0;              // drops/marks in the current (or last) dropping episode
  uint32_t lastcount = 0;          // count when the dropping state was last entered
  bool dropping = false;           // in the dropping state
  uint16_t rec_inv_sqrt = 0;       // ~1/sqrt(count) in Q0.16
  CodelTime first_above_time = 0;  // when sojourn > target for an interval; 0 = not above
  CodelTime drop_next = 0;         // time of the next scheduled drop (or of the last one)
  CodelTime ldelay = 0;            // sojourn time of the last packet examined
};
static_assert(sizeof(CodelVars) == 24);

// The kernel's codel_stats. drop_count/drop_len are cumulative here (see Deviations).
struct CodelStats {
  uint64_t drop_count = 0;  // packets dropped by the control law
  uint64_t drop_len = 0;    // their bytes
  uint64_t ecn_mark = 0;    // packets CE-marked instead of dropped
  uint64_t ce_mark = 0;     // packets CE-marked by the ce_threshold rule
  uint32_t maxpacket = 0;   // largest packet seen by should_drop
};

// Validates the CoDel part of an element's parameters (keys as in scenario files / tc).
Validation validate_codel_params(Duration target, Duration interval, int64_t mtu,
                                 const std::optional<Duration>& ce_threshold);
CodelConfig make_codel_config(Duration target, Duration interval, int64_t mtu, bool ecn,
                              const std::optional<Duration>& ce_threshold, uint8_t selector,
                              uint8_t mask);

// ---------------------------------------------------------------------------------------
// Control law (§8.2)

// One Newton-Raphson step of x' = x/2 * (3 - count * x^2) in fixed point (x = rec_inv_sqrt
// as Q0.32). Unsigned 64-bit arithmetic wraps exactly as in the kernel, so a count that
// jumped far ahead of rec_inv_sqrt (fq_codel's overload path adds to count) gives the same
// value the kernel computes.
constexpr uint16_t codel_newton(uint32_t count, uint16_t rec_inv_sqrt) {
  const uint32_t invsqrt = static_cast<uint32_t>(rec_inv_sqrt) << kRecInvSqrtShift;
  const uint32_t invsqrt2 = static_cast<uint32_t>((static_cast<uint64_t>(invsqrt) * invsqrt) >> 32);
  uint64_t val = (uint64_t{3} << 32) - static_cast<uint64_t>(count) * invsqrt2;
  val >>= 2;  // keeps the next multiply within 64 bits
  val = (val * invsqrt) >> (32 - 2 + 1);
  return static_cast<uint16_t>(val >> kRecInvSqrtShift);
}
constexpr void codel_newton_step(CodelVars& vars) {
  vars.rec_inv_sqrt = codel_newton(vars.count, vars.rec_inv_sqrt);
}

// t + interval / sqrt(count) = t + ((interval * (rec_inv_sqrt << 16)) >> 32).
constexpr CodelTime codel_control_law(CodelTime t, CodelTime interval, uint16_t rec_inv_sqrt) {
  const uint64_t scale = static_cast<uint64_t>(rec_inv_sqrt) << kRecInvSqrtShift;
  return t + static_cast<CodelTime>((static_cast<uint64_t>(interval) * scale) >> 32);
}

// ---------------------------------------------------------------------------------------
// should_drop and the dequeue state machine (§8.3, §8.4)

// `skb` is the packet just dequeued (nullptr if the queue was empty); `backlog` is the
// qdisc's byte backlog after that dequeue (fq_codel passes the whole qdisc's backlog).
inline bool codel_should_drop(const Packet* skb, CodelVars& vars, const CodelConfig& config,
                              CodelStats& stats, uint64_t backlog, CodelTime now) {
  if (skb == nullptr) {
    vars.first_above_time = 0;
    return false;
  }
  vars.ldelay = now - codel_time(skb->enqueue_ts);
  if (skb->len > stats.maxpacket) {
    stats.maxpacket = skb->len;
  }
  if (codel_time_before(vars.ldelay, config.target) || backlog <= config.mtu) {
    // Went below target: it must stay above for a whole interval before CoDel drops.
    vars.first_above_time = 0;
    return false;
  }
  if (vars.first_above_time == 0) {
    vars.first_above_time = now + config.interval;
    return false;
  }
  return codel_time_after(now, vars.first_above_time);  // strictly after
}

// The CoDel dequeue state machine on one queue. The queue is reached through callbacks, so
// the same code serves sch_codel's single queue and each fq_codel flow:
//   dequeue_fn() -> Packet*: unlinks the queue's head, lowers the byte counter `backlog`
//     refers to, and returns the packet (nullptr when the queue is empty). The packet stays
//     where it is stored; it remains valid until drop_fn or the caller releases it. At most
//     one such packet is outstanding: codel_dequeue drops the current one before it asks
//     for the next.
//   drop_fn(Packet&): accounts, reports and releases a packet CoDel drops;
//   mark_fn(const Packet&): accounts and reports a CE mark.
// Returns the packet to deliver (the caller moves it out and releases its storage), or
// nullptr once the queue is empty.
template <class DequeueFn, class DropFn, class MarkFn>
[[gnu::always_inline]] inline Packet* codel_dequeue(CodelVars& vars, const CodelConfig& config,
                                                    CodelStats& stats, CodelTime now,
                                                    const uint64_t& backlog, DequeueFn&& dequeue_fn,
                                                    DropFn&& drop_fn, MarkFn&& mark_fn) {
  Packet* skb = dequeue_fn();
  if (skb == nullptr) {
    vars.dropping = false;
    return skb;
  }
  const bool drop = codel_should_drop(skb, vars, config, stats, backlog, now);
  if (vars.dropping) {
    if (!drop) {
      vars.dropping = false;  // sojourn went below target: leave the dropping state
    } else {
      // A large backlog can make the next drop due now as well, hence the loop.
      while (vars.dropping && codel_time_after_eq(now, vars.drop_next)) {
        ++vars.count;  // wraps like the kernel's u32; no divide depends on it
        codel_newton_step(vars);
        if (config.ecn && skb->set_ce()) {
          ++stats.ecn_mark;
          mark_fn(*skb);
          vars.drop_next = codel_control_law(vars.drop_next, config.interval, vars.rec_inv_sqrt);
          break;  // deliver the marked packet
        }
        stats.drop_len += skb->len;
        ++stats.drop_count;
        drop_fn(*skb);
        skb = dequeue_fn();
        if (!codel_should_drop(skb, vars, config, stats, backlog, now)) {
          vars.dropping = false;
        } else {
          vars.drop_next = codel_control_law(vars.drop_next, config.interval, vars.rec_inv_sqrt);
        }
      }
    }
  } else if (drop) {
    if (config.ecn && skb->set_ce()) {
      ++stats.ecn_mark;
      mark_fn(*skb);
    } else {
      stats.drop_len += skb->len;
      ++stats.drop_count;
      drop_fn(*skb);
      skb = dequeue_fn();
      // Evaluated for its side effects on first_above_time / ldelay only.
      codel_should_drop(skb, vars, config, stats, backlog, now);
    }
    vars.dropping = true;
    // If we went above target soon after the last episode, its drop rate is a good start.
    const uint32_t delta = vars.count - vars.lastcount;
    if (delta > 1 && codel_time_before(now - vars.drop_next, 16u * config.interval)) {
      vars.count = delta;
      codel_newton_step(vars);  // from the old rec_inv_sqrt; later steps refine it
    } else {
      vars.count = 1;
      vars.rec_inv_sqrt = kRecInvSqrtOne;
    }
    vars.lastcount = vars.count;
    vars.drop_next = codel_control_law(now, config.interval, vars.rec_inv_sqrt);
  }
  if (skb != nullptr && config.ce_threshold_enabled &&
      codel_time_after(vars.ldelay, config.ce_threshold)) {
    const bool eligible = config.ce_threshold_mask == 0 ||
                          (skb->tos & config.ce_threshold_mask) == config.ce_threshold_selector;
    if (eligible && skb->set_ce()) {
      ++stats.ce_mark;
      mark_fn(*skb);
    }
  }
  return skb;
}

// ---------------------------------------------------------------------------------------
// The sch_codel queueing element

class Codel {
 public:
  struct Params {
    int64_t limit = 1000;        // packets; DEFAULT_CODEL_LIMIT in sch_codel.c
    Duration target = 5_ms;      // codel_params_init: MS2TIME(5)
    Duration interval = 100_ms;  // codel_params_init: MS2TIME(100)
    int64_t mtu = 1514;          // psched_mtu(dev): Ethernet MTU 1500 + 14-byte header
    bool ecn = false;            // codel_params_init: ecn = false
    std::optional<Duration> ce_threshold = std::nullopt;  // unset = CODEL_DISABLED_THRESHOLD
    uint8_t ce_threshold_selector = 0;  // with the mask: which DS-field values CE-mark
    uint8_t ce_threshold_mask = 0;      // 0 = every packet is eligible
    Validation validate() const;
  };
  struct Stats : QueueStats {
    uint64_t drop_overlimit = 0;  // arrivals dropped because qlen >= limit (tail drop)
    CodelStats codel;             // control-law drops, ECN/CE marks, maxpacket
  };

  Codel() : Codel(Params{}) {}
  explicit Codel(const Params& params);

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now);
  // The returned pointer is valid until the next enqueue or dequeue.
  const Packet* peek(Time now);
  std::optional<Time> next_ready(Time now) const {
    return qlen_ > 0 ? std::optional<Time>(now) : std::nullopt;
  }

  uint64_t backlog_packets() const { return qlen_; }
  uint64_t backlog_bytes() const {
    return backlog_bytes_ + (stash_ != kNil ? pool_.packet(stash_).len : 0);
  }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  const CodelConfig& config() const { return config_; }
  const CodelVars& vars() const { return vars_; }
  void set_observer(Observer* o) { observer_ = o; }

 private:
  static constexpr uint32_t kNil = PacketPool::kNil;

  // Runs codel_dequeue; returns the pool node of the packet to deliver, or kNil.
  uint32_t codel_dequeue_node(Time now);

  Params params_;
  CodelConfig config_;
  CodelVars vars_;
  PacketPool pool_;
  PacketList queue_;
  uint64_t qlen_ = 0;           // packets in queue_ + stash (sch->q.qlen)
  uint64_t backlog_bytes_ = 0;  // bytes in queue_ (sch->qstats.backlog, stash excluded)
  uint32_t cur_ = kNil;         // node of the packet codel_dequeue is looking at
  uint32_t stash_ = kNil;       // node taken by peek(), returned by the next dequeue()
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<Codel>);

inline Verdict Codel::enqueue(Packet&& p, Time now) {
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += p.len;
  if (qlen_ >= static_cast<uint64_t>(params_.limit)) {
    ++stats_.drop_overlimit;
    ++stats_.dropped_packets;
    stats_.dropped_bytes += p.len;
    if (observer_ != nullptr) {
      observer_->on_drop(now, p, DropReason::kQueueFull);
    }
    return Verdict::kDropped;
  }
  p.enqueue_ts = now;  // codel_set_enqueue_time
  backlog_bytes_ += p.len;
  ++qlen_;
  if (observer_ != nullptr) {
    observer_->on_enqueue(now, p);
  }
  queue_.push_back(pool_, std::move(p));
  return Verdict::kQueued;
}

inline uint32_t Codel::codel_dequeue_node(Time now) {
  Packet* p = codel_dequeue(
      vars_, config_, stats_.codel, codel_time(now), backlog_bytes_,
      [this]() -> Packet* {
        if (queue_.empty()) {
          cur_ = kNil;
          return nullptr;
        }
        // Unlink the head node without moving the packet out of the pool.
        cur_ = queue_.head;
        queue_.head = pool_.next(cur_);
        if (queue_.head == kNil) {
          queue_.tail = kNil;
        }
        --queue_.size;
        --qlen_;
        Packet& skb = pool_.packet(cur_);
        backlog_bytes_ -= skb.len;
        return &skb;
      },
      [this, now](Packet& dropped) {
        ++stats_.dropped_packets;
        stats_.dropped_bytes += dropped.len;
        if (observer_ != nullptr) {
          observer_->on_drop(now, dropped, DropReason::kCodel);
        }
        pool_.release(cur_);
      },
      [this, now](const Packet& marked) {
        ++stats_.ecn_marked;
        if (observer_ != nullptr) {
          observer_->on_mark(now, marked);
        }
      });
  return p != nullptr ? cur_ : kNil;
}

inline std::optional<Packet> Codel::dequeue(Time now) {
  uint32_t node = stash_;
  if (node != kNil) {
    stash_ = kNil;
    --qlen_;
  } else {
    node = codel_dequeue_node(now);  // already out of qlen_
    if (node == kNil) {
      return std::nullopt;
    }
  }
  const Packet& p = pool_.packet(node);
  ++stats_.dequeued_packets;
  stats_.dequeued_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_dequeue(now, p);
  }
  return pool_.release_optional(node);
}

inline const Packet* Codel::peek(Time now) {
  if (stash_ == kNil) {
    stash_ = codel_dequeue_node(now);
    if (stash_ == kNil) {
      return nullptr;
    }
    ++qlen_;  // the stash still counts in qlen, as qdisc_peek_dequeued re-adds it
  }
  return &pool_.packet(stash_);
}

}  // namespace nicsim::algo
