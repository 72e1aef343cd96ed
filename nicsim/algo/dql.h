#pragma once
// Dql — dynamic queue limits (the algorithm behind Byte Queue Limits, BQL).
//
// What it is: a byte limit on the data a driver may have outstanding in its hardware TX ring,
// adapted at every TX completion. It grows fast (by a whole interval's worth of bytes) when the
// hardware may have run dry while the stack was held back by the limit, and shrinks slowly (at
// most once per hold time, by the smallest slack seen in that period) when the queue stayed
// busy with room to spare. The driver reports every enqueue (queued) and every completion
// (completed); the stack stops handing packets to the driver while avail() < 0.
//
// Reference: behaviour follows Linux lib/dynamic_queue_limits.c and
// include/linux/dynamic_queue_limits.h as described in docs/mechanisms/bql.md §2 (state §2.1,
// reset §2.2, enqueue §2.3, dql_completed step by step §2.5). Variable names follow the
// kernel's (num_queued, adj_limit, prev_ovlimit, lowest_slack, slack_start_time...).
//
// Units: bytes (skb->len as reported by the driver). All state is unsigned 32-bit and wraps
// around exactly like the kernel's: comparisons use the signed 32-bit difference (POSDIFF,
// AFTER_EQ), so the counters may wrap past 2^32 without changing behaviour. Time base is
// jiffies: `now` is converted with Params::hz (jiffies = floor(now_ns * hz / 1e9), kept as a
// wrapping 32-bit counter); the hold-time test is strict ("after"), as time_after() is.
//
// Deviations (docs/algorithms/dql.md):
//  - completed(count) with count > inflight: the kernel BUG_ON()s; here the call changes
//    nothing and counts Stats::completion_errors.
//  - queued(bytes) with bytes > DQL_MAX_OBJECT: the kernel BUG_ON()s; here the call changes
//    nothing and counts Stats::oversize_errors.
//  - completed(0) changes nothing (netdev_tx_completed_queue returns before dql_completed for
//    0 bytes, §2.4 step 1, and that is the only kernel caller); a raw dql_completed(0) could
//    still run the growth branch.
//  - jiffies and slack_start_time are 32-bit here (as on 32-bit kernels); on 64-bit kernels
//    they are unsigned long. This only matters if no starvation/shrink event happens for 2^31
//    jiffies (~99 days at HZ=250).
//  - The 6.9+ stall detector (stall_thrs/stall_cnt/stall_max) is not modelled: it does not
//    change the limit.
//  - reset() sets limit = min_limit (upstream 3a17f23f7c36, 2025, backported to stable);
//    older kernels set limit = 0. Identical with the default min_limit = 0.

#include <cstdint>
#include <limits>

#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"

namespace nicsim::algo {

// DQL_MAX_OBJECT = UINT_MAX / 16: the largest single enqueue (§2.1).
inline constexpr uint32_t kDqlMaxObject = std::numeric_limits<uint32_t>::max() / 16;
// DQL_MAX_LIMIT = UINT_MAX / 2 - DQL_MAX_OBJECT = 1,879,048,192 bytes: the default (and the
// largest allowed) max_limit (§2.1).
inline constexpr uint32_t kDqlMaxLimit = std::numeric_limits<uint32_t>::max() / 2 - kDqlMaxObject;

// Converts a Time to kernel jiffies at `hz` ticks per second: floor(ns * hz / 1e9), modulo 2^32.
constexpr uint32_t to_jiffies(Time t, int64_t hz) {
  constexpr int64_t kNsPerSec = 1'000'000'000;
  int64_t sec = t.ns_since_epoch() / kNsPerSec;
  int64_t rem = t.ns_since_epoch() % kNsPerSec;
  if (rem < 0) {  // floor for times before the epoch
    rem += kNsPerSec;
    --sec;
  }
  const uint64_t j = static_cast<uint64_t>(sec) * static_cast<uint64_t>(hz) +
                     static_cast<uint64_t>(rem * hz / kNsPerSec);
  return static_cast<uint32_t>(j);
}

class Dql {
 public:
  struct Params {
    // limit_min (sysfs byte_queue_limits/limit_min); dql_init sets 0.
    int64_t min_limit = 0;
    // limit_max (sysfs byte_queue_limits/limit_max); dql_init sets DQL_MAX_LIMIT.
    int64_t max_limit = kDqlMaxLimit;
    // hold_time (sysfs byte_queue_limits/hold_time, in ms there): netdev_init_one_queue calls
    // dql_init(&queue->dql, HZ), i.e. 1 second. Converted to jiffies rounding up, like the
    // sysfs store's msecs_to_jiffies().
    Duration hold_time = Duration::s(1);
    // CONFIG_HZ of the modelled kernel. 250 = Debian's kernel config (debian/config/config in
    // the Debian kernel packaging: CONFIG_HZ_250=y), which is also kernel/Kconfig.hz's default.
    int64_t hz = 250;

    Validation validate() const;
    // hold_time in jiffies (ceil(hold_time * hz / 1 s)); valid only if validate() passes.
    uint32_t hold_time_jiffies() const;
  };

  // Kernel struct dql, field for field (all u32, wrap-around).
  struct State {
    // Enqueue side.
    uint32_t num_queued = 0;    // total bytes ever queued
    uint32_t adj_limit = 0;     // limit + num_completed, as of the last completion
    uint32_t last_obj_cnt = 0;  // bytes of the most recent enqueue
    // Completion side.
    uint32_t limit = 0;
    uint32_t num_completed = 0;  // total bytes ever completed
    uint32_t prev_ovlimit = 0;
    uint32_t prev_num_queued = 0;
    uint32_t prev_last_obj_cnt = 0;
    uint32_t lowest_slack = std::numeric_limits<uint32_t>::max();
    uint32_t slack_start_time = 0;  // jiffies
    // Configuration.
    uint32_t max_limit = kDqlMaxLimit;
    uint32_t min_limit = 0;
    uint32_t slack_hold_time = 0;  // jiffies

    friend bool operator==(const State&, const State&) = default;
  };

  // Monotonic counters. Identity (asserted in tests):
  //   queued_bytes == completed_bytes + reset_discarded_bytes + inflight()
  struct Stats {
    uint64_t queued_calls = 0;  // accepted queued() calls
    uint64_t queued_bytes = 0;
    uint64_t completed_calls = 0;  // completed() calls that ran the algorithm (count > 0)
    uint64_t completed_bytes = 0;
    uint64_t empty_completions = 0;  // completed(0): ignored (§2.4 step 1)
    uint64_t starvations = 0;        // §2.5 step 6 ran: the hardware may have run dry
    uint64_t slack_shrinks = 0;      // §2.5 step 7: the hold time expired, limit -= lowest_slack
    uint64_t limit_increases = 0;    // the limit changed upwards (after clamping)
    uint64_t limit_decreases = 0;    // the limit changed downwards (after clamping)
    uint64_t limit_high_water = 0;   // largest limit ever set
    uint64_t resets = 0;
    uint64_t reset_discarded_bytes = 0;  // bytes in flight forgotten by reset()
    uint64_t completion_errors = 0;      // completed(count > inflight): ignored (kernel BUG_ON)
    uint64_t oversize_errors = 0;        // queued(bytes > DQL_MAX_OBJECT): ignored (BUG_ON)
  };

  Dql() : Dql(Params{}) {}
  // dql_init: configuration from params, then dql_reset at `now`. adj_limit starts at 0.
  explicit Dql(const Params& params, Time now = Time::zero());
  // As above, but every byte counter (num_queued, num_completed, prev_num_queued, adj_limit)
  // starts at `counter_base` instead of 0 — the state a queue reaches after counter_base bytes
  // went through it while limit == 0. Lets tests start near the 2^32 wrap.
  Dql(const Params& params, Time now, uint32_t counter_base);

  // dql_reset (§2.2): forget all dynamic values; adj_limit is left untouched, as in the kernel.
  void reset(Time now);

  // dql_queued (§2.3 step 1): record an enqueue of `bytes`.
  void queued(uint32_t bytes) {
    if (bytes > kDqlMaxObject) [[unlikely]] {
      ++stats_.oversize_errors;
      return;
    }
    s_.last_obj_cnt = bytes;
    s_.num_queued += bytes;
    ++stats_.queued_calls;
    stats_.queued_bytes += bytes;
  }

  // dql_avail (§2.3 step 2): bytes that may still be queued; < 0 means "stop the queue".
  int32_t avail() const { return static_cast<int32_t>(s_.adj_limit - s_.num_queued); }

  // dql_completed (§2.5): `bytes` finished transmitting; adapt the limit.
  void completed(uint32_t bytes, Time now);

  uint32_t limit() const { return s_.limit; }
  uint32_t inflight() const { return s_.num_queued - s_.num_completed; }
  const State& state() const { return s_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  static constexpr uint32_t posdiff(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a - b) > 0 ? a - b : 0;
  }
  static constexpr bool after_eq(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a - b) >= 0;
  }
  // time_after(a, b): a is strictly later than b (signed 32-bit difference).
  static constexpr bool time_after(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(b - a) < 0;
  }
  uint32_t jiffies(Time now) const { return to_jiffies(now, params_.hz); }

  State s_;
  Stats stats_;
  Params params_;
};

inline void Dql::completed(uint32_t count, Time now) {
  if (count == 0) {  // §2.4 step 1: no recalculation at all
    ++stats_.empty_completions;
    return;
  }
  const uint32_t num_queued = s_.num_queued;
  if (count > num_queued - s_.num_completed) [[unlikely]] {  // precondition of §2.5
    ++stats_.completion_errors;
    return;
  }
  ++stats_.completed_calls;
  stats_.completed_bytes += count;

  const uint32_t completed = s_.num_completed + count;  // step 1
  uint32_t limit = s_.limit;
  uint32_t ovlimit = posdiff(num_queued - s_.num_completed, limit);         // step 2
  const uint32_t inprogress = num_queued - completed;                       // step 3
  const uint32_t prev_inprogress = s_.prev_num_queued - s_.num_completed;   // step 4
  const bool all_prev_completed = after_eq(completed, s_.prev_num_queued);  // step 5

  if ((ovlimit != 0 && inprogress == 0) || (s_.prev_ovlimit != 0 && all_prev_completed)) {
    // Step 6, starvation: grow by the bytes both queued and completed since the previous
    // completion, plus the previous over-limit amount.
    limit += posdiff(completed, s_.prev_num_queued) + s_.prev_ovlimit;
    s_.slack_start_time = jiffies(now);
    s_.lowest_slack = std::numeric_limits<uint32_t>::max();
    ++stats_.starvations;
  } else if (inprogress != 0 && prev_inprogress != 0 && !all_prev_completed) {
    // Step 7, the queue was busy for the whole interval: track the slack, shrink by the
    // lowest slack once the hold time has (strictly) passed.
    uint32_t slack = posdiff(limit + s_.prev_ovlimit, 2 * (completed - s_.num_completed));
    const uint32_t slack_last_objs =
        s_.prev_ovlimit != 0 ? posdiff(s_.prev_last_obj_cnt, s_.prev_ovlimit) : 0;
    if (slack_last_objs > slack) {
      slack = slack_last_objs;
    }
    if (slack < s_.lowest_slack) {
      s_.lowest_slack = slack;
    }
    const uint32_t now_j = jiffies(now);
    if (time_after(now_j, s_.slack_start_time + s_.slack_hold_time)) {
      limit = posdiff(limit, s_.lowest_slack);
      s_.slack_start_time = now_j;
      s_.lowest_slack = std::numeric_limits<uint32_t>::max();
      ++stats_.slack_shrinks;
    }
  }

  // Step 8: clamp.
  if (limit > s_.max_limit) {
    limit = s_.max_limit;
  }
  if (limit < s_.min_limit) {
    limit = s_.min_limit;
  }
  // Step 9: a limit change forgets this interval's over-limit amount.
  if (limit != s_.limit) {
    if (limit > s_.limit) {
      ++stats_.limit_increases;
      if (limit > stats_.limit_high_water) {
        stats_.limit_high_water = limit;
      }
    } else {
      ++stats_.limit_decreases;
    }
    s_.limit = limit;
    ovlimit = 0;
  }
  // Step 10: commit.
  s_.adj_limit = limit + completed;
  s_.prev_ovlimit = ovlimit;
  s_.prev_last_obj_cnt = s_.last_obj_cnt;
  s_.num_completed = completed;
  s_.prev_num_queued = num_queued;
}

}  // namespace nicsim::algo
