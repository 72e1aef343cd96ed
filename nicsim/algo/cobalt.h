#pragma once
// COBALT — CoDel and BLUE run side by side on one queue, the AQM of CAKE.
//
// Behaviour ported (no code copied) from Linux net/sched/sch_cake.c (torvalds/linux, stored
// snapshot at commit 0280f429dc21, the cobalt_* functions) and described in Høiland-Jørgensen,
// Täht, Morton, "Piece of CAKE", LANMAN 2018, §III-C. docs/algorithms/cake.md has the model.
//
// CoDel part (cobalt_should_drop): a packet whose sojourn exceeds `target` (and the
// serialisation time of 4 MTUs, and of 2 MTUs per bulk flow in ingress mode) puts the queue
// in the dropping state; the first signal comes one `interval` later, then every
// interval / sqrt(count). Unlike reference CoDel, COBALT keeps `count` when it leaves the
// dropping state and lets it decay (one step per due signal time while below target, and in
// cobalt_queue_empty), and uses a 16-entry cache of exact 1/sqrt(count) for small counts.
// A signal is an ECN CE mark when the packet is ECN-capable, otherwise a drop.
// BLUE part: p_drop (Q0.32 probability) rises by p_inc when the queue overflows
// (cobalt_queue_full) and falls by p_dec when it is found empty (cobalt_queue_empty), at most
// once per `target`; every dequeued packet is dropped with probability p_drop (never marked:
// BLUE targets unresponsive flows).
//
// Units: times are nanoseconds (ktime_t); rec_inv_sqrt is Q0.32; p_drop is Q0.32.

#include <array>
#include <cstdint>

#include "nicsim/core/packet.h"

namespace nicsim::algo {

// The kernel's cobalt_params.
struct CobaltParams {
  uint64_t interval = 100'000'000;  // ns: CoDel's initial signalling interval
  uint64_t target = 5'000'000;      // ns: acceptable standing sojourn; BLUE's update period
  uint64_t mtu_time = 0;            // ns: serialisation time of one MTU at the shaped rate
  uint32_t p_inc = 1u << 24;        // BLUE increment, 1/256 (cake_set_rate)
  uint32_t p_dec = 1u << 20;        // BLUE decrement, 1/4096 (cake_set_rate)
};

// The kernel's cobalt_vars; zero-initialised like cobalt_vars_init.
struct CobaltVars {
  uint32_t count = 0;         // CoDel signalling frequency
  uint32_t rec_inv_sqrt = 0;  // ~1/sqrt(count), Q0.32
  int64_t drop_next = 0;      // ns: next signal time (or when the last one was sent)
  int64_t blue_timer = 0;     // ns: last BLUE update
  uint32_t p_drop = 0;        // BLUE drop probability, Q0.32
  bool dropping = false;      // CoDel's dropping state
  bool ecn_marked = false;    // the last signal was a CE mark
};

// 1/sqrt(count) in Q0.32 for count 0..15: four Newton steps each from ~1.0 (the kernel's
// cobalt_rec_inv_sqrt_cache; entries 0 and 1 are 0xFFFFFFFF).
inline constexpr int kCobaltInvSqrtCache = 16;
const std::array<uint32_t, kCobaltInvSqrtCache>& cobalt_inv_sqrt_cache();

// One Newton-Raphson step of x' = x/2 * (3 - count * x^2) in Q0.32 with the kernel's integer
// truncations.
constexpr uint32_t cobalt_newton(uint32_t count, uint32_t rec_inv_sqrt) {
  const uint64_t invsqrt = rec_inv_sqrt;
  const uint32_t invsqrt2 = static_cast<uint32_t>((invsqrt * invsqrt) >> 32);
  uint64_t val = (uint64_t{3} << 32) - static_cast<uint64_t>(count) * invsqrt2;
  val >>= 2;  // keeps the next multiply within 64 bits
  val = (val * invsqrt) >> (32 - 2 + 1);
  return static_cast<uint32_t>(val);
}

// cobalt_invsqrt: the cache below 16, one Newton step from the previous value above.
inline void cobalt_invsqrt(CobaltVars& v) {
  v.rec_inv_sqrt = v.count < kCobaltInvSqrtCache ? cobalt_inv_sqrt_cache()[v.count]
                                                 : cobalt_newton(v.count, v.rec_inv_sqrt);
}

// t + interval / sqrt(count): reciprocal_scale(interval, rec_inv_sqrt), whose 32-bit operand
// truncates interval to its low 32 bits as the kernel does.
constexpr int64_t cobalt_control(int64_t t, uint64_t interval, uint32_t rec_inv_sqrt) {
  const uint64_t scaled =
      (static_cast<uint64_t>(static_cast<uint32_t>(interval)) * rec_inv_sqrt) >> 32;
  return t + static_cast<int64_t>(scaled);
}

// The queue overflowed (CAKE dropped from this queue to make room). Raises p_drop at most
// once per target and arms CoDel's schedule. Returns true if BLUE went from quiescent to
// active (CAKE counts the flow as unresponsive).
bool cobalt_queue_full(CobaltVars& v, const CobaltParams& p, int64_t now);

// The queue was serviced but empty. Lowers p_drop at most once per target, leaves the
// dropping state and decays count one step if a signal was due. Returns true if BLUE went
// from active to quiescent.
bool cobalt_queue_empty(CobaltVars& v, const CobaltParams& p, int64_t now);

// A freshly dequeued packet `skb` (enqueued at `enqueue_ns`): returns true to drop it, false
// to deliver it (it may have been CE-marked: v.ecn_marked). `bulk_flows` is CAKE's bulk flow
// count in ingress mode, 0 otherwise. `random()` -> uint32_t is drawn only while p_drop > 0
// (prandom_u32 in the kernel).
template <class Random>
bool cobalt_should_drop(CobaltVars& v, const CobaltParams& p, int64_t now, int64_t enqueue_ns,
                        Packet& skb, uint32_t bulk_flows, Random&& random) {
  const uint64_t sojourn = static_cast<uint64_t>(now - enqueue_ns);
  // `schedule`'s sign says whether now is past drop_next; next_due keeps its first value.
  int64_t schedule = now - v.drop_next;
  const bool over_target =
      sojourn > p.target && sojourn > p.mtu_time * bulk_flows * 2 && sojourn > p.mtu_time * 4;
  bool next_due = v.count != 0 && schedule >= 0;
  bool drop = false;
  v.ecn_marked = false;

  if (over_target) {
    if (!v.dropping) {
      v.dropping = true;
      v.drop_next = cobalt_control(now, p.interval, v.rec_inv_sqrt);
    }
    if (v.count == 0) {
      v.count = 1;
    }
  } else if (v.dropping) {
    v.dropping = false;
  }

  if (next_due && v.dropping) {
    v.ecn_marked = skb.set_ce();  // mark if ECN-capable, otherwise drop
    drop = !v.ecn_marked;
    if (++v.count == 0) {
      --v.count;  // saturate
    }
    cobalt_invsqrt(v);
    v.drop_next = cobalt_control(v.drop_next, p.interval, v.rec_inv_sqrt);
    schedule = now - v.drop_next;
  } else {
    // Below target: every signal time that passed lowers count one step.
    while (next_due) {
      --v.count;
      cobalt_invsqrt(v);
      v.drop_next = cobalt_control(v.drop_next, p.interval, v.rec_inv_sqrt);
      schedule = now - v.drop_next;
      next_due = v.count != 0 && schedule >= 0;
    }
  }

  // BLUE; never an ECN mark (deliberately, as in the kernel).
  if (v.p_drop != 0) {
    drop |= random() < v.p_drop;
  }

  // drop_next doubles as an activity timeout while count is 0.
  if (v.count == 0) {
    v.drop_next = now + static_cast<int64_t>(p.interval);
  } else if (schedule > 0 && !drop) {
    v.drop_next = now;
  }
  return drop;
}

}  // namespace nicsim::algo
