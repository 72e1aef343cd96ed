#pragma once
// DualPi2 — the DualQ Coupled AQM (RFC 9332) as Linux's sch_dualpi2: an L-queue for L4S
// traffic (ECT(1) and CE) and a C-queue for Classic traffic, one PI controller whose base
// probability p' is coupled to both queues, a step threshold for L4S marking and a WRR
// scheduler that gives the L-queue priority while protecting the C-queue from starvation.
//
// Behaviour follows Linux net/sched/sch_dualpi2.c as merged for v6.17/v6.18 (read in
// MyWRT/linux-6.18.y at ba2cadd65fc0, a 6.18.y tree; the first torvalds/linux commit
// 320d031ad6e4 carries the same PI, defaults and scaling). Behaviour ported, no code copied.
//
//   classify: ECN & ecn_mask (default ECT(1)'s bit: ECT(1) and CE) -> L-queue, else C-queue.
//   enqueue:  drop at `limit` packets or when memory (modelled truesize) would exceed
//             memory_limit; with drop_early the AQM decision (must_drop) runs here; the packet
//             is timestamped and L packets note whether the step applies (L qlen >= min_qlen_step).
//   dequeue:  WRR by credit: L when C is empty or credit <= 0 (credit += wc * len if C waits),
//             else C (credit -= wl * len if L waits); both empty resets the credit. Then, unless
//             drop_early, must_drop; then for L packets the step AQM (sojourn > step_thresh, or
//             L qlen > step_thresh packets: CE-mark, drop Not-ECT); a drop retries the next.
//   must_drop: nothing while the qdisc holds < 2 MTU bytes. With p' the PI probability and
//             k the coupling factor: C packets are hit with p' squared (two independent
//             draws, RFC 9332 §2.4 p_C = (p'/... )^2 with p' = p_CL / k), dropped if Not-ECT,
//             else CE-marked; L packets are marked with p_CL = k p'; on overload (k p' > 1)
//             L packets see the classic p'^2 drop (drop_overload) or are marked (overflow).
//   timer:    every tupdate, qdelay = max of both heads' sojourn;
//             p' += alpha (qdelay - target) + beta (qdelay - last qdelay), bounded to [0, 1]
//             (to 1/k without drop_overload). Run lazily at each call as in pie.h.
//
// Units: probabilities are u32 fractions of MAX_PROB = 2^32 - 1; alpha/beta are given in
// 1/256 Hz (tc's units) and kept scaled to MAX_PROB per 64 ns of delay error; times are ns;
// memory is truesize = SKB_DATA_ALIGN(len) + truesize_overhead (as fq_codel.h models it).
//
// Deviations (docs/algorithms/dualpi2.md): no tc filters or skb->priority classification
// (so no LLLL class); GSO packets are not split (split_gso off); random numbers from a
// seeded splitmix64; the queues' head timestamps come from the packets (the kernel keeps
// them with 0 = empty, which a clock starting at 0 could not).

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "nicsim/algo/pie.h"
#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"

namespace nicsim::algo {

inline constexpr uint32_t kDualPi2MaxProb = UINT32_MAX;  // MAX_PROB: p = 1
inline constexpr int kDualPi2AlphaBetaScaling = 2;       // ALPHA_BETA_SHIFT 8 - granularity 6
inline constexpr int kDualPi2Granularity = 6;            // ALPHA_BETA_GRANULARITY: 64 ns
inline constexpr int kDualPi2MaxWc = 100;                // MAX_WC (percent)

// tc's alpha/beta (1/256 Hz) -> probability per 64 ns of delay error (dualpi2_scale_alpha_beta).
constexpr uint32_t dualpi2_scale_alpha_beta(uint32_t param) {
  return static_cast<uint32_t>(((uint64_t{param} * kDualPi2MaxProb) >> kDualPi2AlphaBetaScaling) /
                               1'000'000'000ull);
}

// One PI update (calculate_probability): the new p' from the old one, the queue delay now and
// at the last update (ns). `cap` is MAX_PROB, or MAX_PROB / k without drop_overload.
uint32_t dualpi2_pi_update(uint32_t prob, uint64_t qdelay, uint64_t last_qdelay, uint64_t target,
                           uint32_t alpha, uint32_t beta, uint32_t cap);

class DualPi2 {
 public:
  struct Params {
    int64_t limit = 10000;            // packets; dualpi2_reset_default ("125 ms at 1 Gbps")
    int64_t memory_limit = 0;         // bytes of truesize; 0 = limit * 2 * mtu (get_memory_limit)
    Duration target = 15_ms;          // pi2_target
    Duration tupdate = 16_ms;         // pi2_tupdate
    int64_t alpha = 41;               // 1/256 Hz: ~0.16 Hz
    int64_t beta = 819;               // 1/256 Hz: ~3.2 Hz
    Duration step_thresh = 1_ms;      // L4S step marking threshold (sojourn)
    int64_t step_packets = 0;         // > 0: the step threshold in L-queue packets instead
    int64_t min_qlen_step = 0;        // apply the step only from this L-queue length
    int64_t coupling_factor = 2;      // k
    bool drop_overload = true;        // overload: drop (true) or keep marking L (false)
    bool drop_early = false;          // AQM at enqueue (true) or dequeue (false)
    int64_t c_protection = 10;        // wc, percent of the WRR for the C-queue (0..100)
    int64_t ecn_mask = 1;             // 1 = L4S ECT (ECT(1), CE), 2 = classic ECT, 3 = any ECT
    int64_t mtu = 1514;               // psched_mtu(dev)
    int64_t truesize_overhead = 576;  // nicsim model: truesize = align64(len) + this
    uint64_t seed = 1;                // nicsim: seed of the random draws
    Validation validate() const;
  };
  // tc_dualpi2_xstats, 64-bit, plus nicsim's per-queue sojourn sums.
  struct Stats : QueueStats {
    uint64_t packets_in_c = 0;
    uint64_t packets_in_l = 0;
    uint64_t maxq = 0;        // largest qlen seen by an accepted arrival (before it)
    uint64_t ecn_mark = 0;    // CE marks: PI (both queues) and step
    uint64_t step_marks = 0;  // of those, by the step threshold
    uint64_t max_memory_used = 0;
    uint64_t drop_overlimit = 0;  // arrivals over limit or memory_limit
    uint64_t drop_aqm = 0;        // PI drops (must_drop)
    uint64_t drop_step = 0;       // Not-ECT packets over the step in the L-queue
    uint64_t dequeued_l = 0;      // packets delivered from each queue
    uint64_t dequeued_c = 0;
    uint64_t sojourn_l_ns = 0;  // their summed sojourn times
    uint64_t sojourn_c_ns = 0;
  };

  DualPi2() : DualPi2(Params{}) {}
  explicit DualPi2(const Params& params);

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now);
  // The returned pointer is valid until the next enqueue or dequeue.
  const Packet* peek(Time now);
  std::optional<Time> next_ready(Time now) const {
    return qlen() > 0 ? std::optional<Time>(now) : std::nullopt;
  }

  uint64_t backlog_packets() const { return qlen(); }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o) { observer_ = o; }

  // Introspection (tests, counters).
  bool is_l4s(const Packet& p) const { return (p.tos & ecn_mask_) != 0; }
  uint32_t prob() const { return prob_; }  // p', MAX_PROB units
  uint32_t alpha() const { return alpha_; }
  uint32_t beta() const { return beta_; }
  uint64_t memory_limit() const { return memory_limit_; }
  uint64_t memory_used() const { return memory_used_; }
  int32_t credit() const { return credit_; }
  uint64_t l_packets() const { return lq_.size(); }
  uint64_t c_packets() const { return cq_.size(); }
  // The head sojourn of each queue at `now` (0 when empty): tc's delay_l / delay_c.
  Duration l_delay(Time now) const {
    return lq_.empty() ? Duration::zero() : now - lq_.front().enqueue_ts;
  }
  Duration c_delay(Time now) const {
    return cq_.empty() ? Duration::zero() : now - cq_.front().enqueue_ts;
  }
  std::optional<Time> next_update() const { return timer_.next(); }
  uint64_t truesize(uint32_t len) const {
    return ((uint64_t{len} + 63) & ~uint64_t{63}) + truesize_overhead_;
  }

 private:
  enum class Which : uint8_t { kNone, kL, kC };

  uint64_t qlen() const { return lq_.size() + cq_.size() + (stash_ ? 1 : 0); }
  bool roll(uint32_t prob) { return rng_.next_u32() <= prob; }
  void run_timer(Time now) {
    if (timer_.due(now)) {
      catch_up_timer(now);
    }
  }
  void catch_up_timer(Time now);
  // must_drop: true to drop `p` (may CE-mark it instead and return false).
  bool must_drop(Packet& p, bool l4s, Time now);
  void mark(Packet& p, Time now);
  // dequeue_packet + the AQM: the next packet to deliver, drops done.
  std::optional<Packet> dequeue_aqm(Time now);
  std::optional<Packet> take_stash();  // the packet peek() stashed
  void drop(const Packet& p, Time now, DropReason why);

  Params params_;
  uint32_t alpha_;
  uint32_t beta_;
  uint64_t target_ns_;
  uint32_t prob_cap_;
  uint64_t memory_limit_;
  uint64_t truesize_overhead_;
  uint8_t ecn_mask_;
  int32_t credit_init_;
  int32_t wc_;
  int32_t wl_;

  PacketFifo lq_;
  PacketFifo cq_;
  std::deque<bool> l_apply_step_;  // per L packet, only kept when min_qlen_step > 0
  std::optional<Packet> stash_;    // taken by peek(), returned by the next dequeue()
  bool stash_from_l_ = false;      // the queue the last packet out of dequeue_aqm came from
  uint64_t backlog_bytes_ = 0;     // sch->qstats.backlog (the stash included)
  uint64_t memory_used_ = 0;       // truesize of the queued packets (stash excluded)
  int32_t credit_ = 0;             // c_protection_credit: <= 0 serves L
  uint32_t prob_ = 0;              // pi2_prob: p'
  uint64_t last_qdelay_ = 0;       // ns
  AqmRandom rng_;
  AqmTimer timer_;
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<DualPi2>);

}  // namespace nicsim::algo
