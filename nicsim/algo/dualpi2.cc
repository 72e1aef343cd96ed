#include "nicsim/algo/dualpi2.h"

#include <algorithm>
#include <string>

namespace nicsim::algo {
namespace {

constexpr int64_t kU32Max = int64_t{UINT32_MAX};
constexpr int64_t kAlphaBetaMax = (int64_t{1} << 31) - 1;  // ALPHA_BETA_MAX
constexpr Duration kMaxU32Us = Duration::us(kU32Max);

std::string ns_string(Duration d) { return std::to_string(d.count_ns()) + " ns"; }

Validation check_range(const char* key, int64_t v, int64_t lo, int64_t hi, const char* unit) {
  if (v < lo || v > hi) {
    return ParamError{key, "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + unit +
                               ", got " + std::to_string(v)};
  }
  return std::nullopt;
}

}  // namespace

uint32_t dualpi2_pi_update(uint32_t prob, uint64_t qdelay, uint64_t last_qdelay, uint64_t target,
                           uint32_t alpha, uint32_t beta, uint32_t cap) {
  // RFC 9332 §2.4 / Appendix A: p' += alpha (qdelay - target) + beta (qdelay - qdelay_old),
  // in ns times MAX_PROB per 64 ns, then / 64.
  int64_t delta = (static_cast<int64_t>(qdelay) - static_cast<int64_t>(target)) * alpha;
  delta += (static_cast<int64_t>(qdelay) - static_cast<int64_t>(last_qdelay)) * beta;
  uint32_t next = 0;
  if (delta > 0) {
    // The kernel adds in 64 bits and stores the sum in a u32; a wrap below p' saturates.
    next = static_cast<uint32_t>((static_cast<uint64_t>(delta) >> kDualPi2Granularity) + prob);
    if (next < prob) {
      next = kDualPi2MaxProb;
    }
  } else {
    const uint64_t down = (~static_cast<uint64_t>(delta) + 1) >> kDualPi2Granularity;
    next = static_cast<uint32_t>(static_cast<int64_t>(prob) - static_cast<int64_t>(down));
    if (next > prob) {
      next = 0;
    }
  }
  return std::min(next, cap);
}

Validation DualPi2::Params::validate() const {
  if (auto e = check_range("limit", limit, 1, kU32Max, " packets")) {
    return e;
  }
  if (auto e = check_range("memory_limit", memory_limit, 0, kU32Max, " bytes (0 = derived)")) {
    return e;
  }
  if (target < Duration::zero() || target > kMaxU32Us) {
    return ParamError{"target", "must be in [0, 4294.967295 s], got " + ns_string(target)};
  }
  if (tupdate < 1_us || tupdate > kMaxU32Us) {
    return ParamError{"tupdate", "must be in [1 us, 4294.967295 s], got " + ns_string(tupdate)};
  }
  if (auto e = check_range("alpha", alpha, 1, kAlphaBetaMax, " (1/256 Hz)")) {
    return e;
  }
  if (auto e = check_range("beta", beta, 1, kAlphaBetaMax, " (1/256 Hz)")) {
    return e;
  }
  if (step_thresh < Duration::zero() || step_thresh > kMaxU32Us) {
    return ParamError{"step_thresh",
                      "must be in [0, 4294.967295 s], got " + ns_string(step_thresh)};
  }
  if (auto e = check_range("step_packets", step_packets, 0, kU32Max, " packets")) {
    return e;
  }
  if (auto e = check_range("min_qlen_step", min_qlen_step, 0, kU32Max, " packets")) {
    return e;
  }
  if (auto e = check_range("coupling_factor", coupling_factor, 1, 255, "")) {
    return e;
  }
  if (auto e = check_range("c_protection", c_protection, 0, kDualPi2MaxWc, " percent")) {
    return e;
  }
  if (auto e = check_range("ecn_mask", ecn_mask, 1, 3, " (1 = L4S ECT, 2 = classic, 3 = any)")) {
    return e;
  }
  if (auto e = check_range("mtu", mtu, 1, 65535, " bytes")) {
    return e;
  }
  return check_range("truesize_overhead", truesize_overhead, 0, kU32Max, " bytes");
}

DualPi2::DualPi2(const Params& params)
    : params_(require_valid(params)),
      alpha_(dualpi2_scale_alpha_beta(static_cast<uint32_t>(params.alpha))),
      beta_(dualpi2_scale_alpha_beta(static_cast<uint32_t>(params.beta))),
      target_ns_(static_cast<uint64_t>(params.target.count_ns())),
      prob_cap_(params.drop_overload
                    ? kDualPi2MaxProb
                    : kDualPi2MaxProb / static_cast<uint32_t>(params.coupling_factor)),
      // get_memory_limit: limit * 2 * mtu ("doubling the packet length" for the overhead).
      memory_limit_(params.memory_limit > 0
                        ? static_cast<uint64_t>(params.memory_limit)
                        : std::min<uint64_t>(static_cast<uint64_t>(params.limit) * 2 *
                                                 static_cast<uint64_t>(params.mtu),
                                             UINT32_MAX)),
      truesize_overhead_(static_cast<uint64_t>(params.truesize_overhead)),
      ecn_mask_(static_cast<uint8_t>(params.ecn_mask)),
      // dualpi2_calculate_c_protection: the credit starts at mtu * (wc - wl), so with wl > wc
      // the L-queue goes first.
      credit_init_(static_cast<int32_t>(params.mtu * (2 * params.c_protection - kDualPi2MaxWc))),
      wc_(static_cast<int32_t>(params.c_protection)),
      wl_(static_cast<int32_t>(kDualPi2MaxWc - params.c_protection)),
      credit_(credit_init_),
      rng_(params.seed) {}

void DualPi2::catch_up_timer(Time now) {
  // hrtimer_start(next_pi2_timeout) at init: the first update one tupdate after creation.
  timer_.run(now, params_.tupdate, params_.tupdate, [this](Time t) {
    const uint64_t qdelay = static_cast<uint64_t>(std::max(l_delay(t), c_delay(t)).count_ns());
    const uint32_t prob_before = prob_;
    const uint64_t last_before = last_qdelay_;
    prob_ = dualpi2_pi_update(prob_, qdelay, last_qdelay_, target_ns_, alpha_, beta_, prob_cap_);
    last_qdelay_ = qdelay;
    // Only empty queues are a fixed point (a head's sojourn grows with time).
    return prob_ != prob_before || last_qdelay_ != last_before || !lq_.empty() || !cq_.empty();
  });
}

void DualPi2::mark(Packet& p, Time now) {
  if (p.set_ce()) {
    ++stats_.ecn_mark;
    ++stats_.ecn_marked;
    if (observer_ != nullptr) {
      observer_->on_mark(now, p);
    }
  }
}

bool DualPi2::must_drop(Packet& p, bool l4s, Time now) {
  // Never with a standing queue under 2 MTU.
  if (backlog_bytes_ < 2 * static_cast<uint64_t>(params_.mtu)) {
    return false;
  }
  const uint64_t local_l_prob = uint64_t{prob_} * static_cast<uint64_t>(params_.coupling_factor);
  const bool overload = local_l_prob > kDualPi2MaxProb;
  if (!l4s) {
    // Classic: p_C = p'^2 by two independent draws (RFC 9332 §2.4); drop Not-ECT (and
    // everything on overload), mark ECT.
    if (roll(prob_) && roll(prob_)) {
      if (overload || !p.ecn_capable()) {
        return true;
      }
      mark(p, now);
    }
    return false;
  }
  if (overload) {
    // p_CL would exceed 1: the classic drop first (drop_overload), then mark everything.
    if (params_.drop_overload && roll(prob_) && roll(prob_)) {
      return true;
    }
    mark(p, now);
    return false;
  }
  // Scalable: p_CL = k p'.
  if (roll(static_cast<uint32_t>(local_l_prob))) {
    if (!p.ecn_capable()) {
      return true;
    }
    mark(p, now);
  }
  return false;
}

void DualPi2::drop(const Packet& p, Time now, DropReason why) {
  ++stats_.dropped_packets;
  stats_.dropped_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_drop(now, p, why);
  }
}

Verdict DualPi2::enqueue(Packet&& p, Time now) {
  run_timer(now);
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += p.len;
  const bool l4s = is_l4s(p);
  const uint64_t size = truesize(p.len);
  const bool over_memory = memory_used_ + size > memory_limit_;
  if (qlen() >= static_cast<uint64_t>(params_.limit) || over_memory) {
    ++stats_.drop_overlimit;
    drop(p, now, over_memory ? DropReason::kOvermemory : DropReason::kQueueFull);
    return Verdict::kDropped;
  }
  if (params_.drop_early && must_drop(p, l4s, now)) {
    ++stats_.drop_aqm;
    drop(p, now, DropReason::kAqm);
    return Verdict::kDropped;
  }
  p.enqueue_ts = now;
  memory_used_ += size;
  stats_.max_memory_used = std::max(stats_.max_memory_used, memory_used_);
  stats_.maxq = std::max(stats_.maxq, qlen());
  backlog_bytes_ += p.len;
  if (observer_ != nullptr) {
    observer_->on_enqueue(now, p);
  }
  if (l4s) {
    if (params_.min_qlen_step > 0) {
      l_apply_step_.push_back(lq_.size() >= static_cast<uint64_t>(params_.min_qlen_step));
    }
    ++stats_.packets_in_l;
    lq_.push_back(std::move(p));
  } else {
    ++stats_.packets_in_c;
    cq_.push_back(std::move(p));
  }
  return Verdict::kQueued;
}

// One optional carries the packet from its queue to the caller: a Packet moves once on the way
// out (docs/benchmarks.md, issue 11 item 5).
std::optional<Packet> DualPi2::dequeue_aqm(Time now) {
  std::optional<Packet> out;
  for (;;) {
    // dequeue_packet: the WRR credit picks the queue.
    const bool c_waits = !cq_.empty();
    const bool from_l = !lq_.empty() && (!c_waits || credit_ <= 0);
    int64_t credit_change = 0;
    bool apply_step = true;
    if (from_l) {
      lq_.pop_front_into(out);
      if (params_.min_qlen_step > 0) {
        apply_step = l_apply_step_.front();
        l_apply_step_.pop_front();
      }
      credit_change = c_waits ? wc_ : 0;
    } else if (c_waits) {
      cq_.pop_front_into(out);
      credit_change = lq_.empty() ? 0 : -wl_;
    } else {
      credit_ = credit_init_;
      out.reset();
      return out;
    }
    Packet& p = *out;
    credit_change *= p.len;
    memory_used_ -= truesize(p.len);
    backlog_bytes_ -= p.len;
    if (!params_.drop_early && must_drop(p, from_l, now)) {
      ++stats_.drop_aqm;
      drop(p, now, DropReason::kAqm);
      continue;
    }
    if (from_l) {
      // do_step_aqm: the L4S step (RFC 9332 §2.5.1.2) on the sojourn or the L-queue length.
      const uint64_t over = params_.step_packets > 0
                                ? lq_.size()
                                : static_cast<uint64_t>((now - p.enqueue_ts).count_ns());
      const uint64_t thresh = params_.step_packets > 0
                                  ? static_cast<uint64_t>(params_.step_packets)
                                  : static_cast<uint64_t>(params_.step_thresh.count_ns());
      if (apply_step && over > thresh) {
        if (!p.ecn_capable()) {
          ++stats_.drop_step;
          drop(p, now, DropReason::kAqm);
          continue;
        }
        const uint64_t marks_before = stats_.ecn_mark;
        mark(p, now);
        stats_.step_marks += stats_.ecn_mark - marks_before;
      }
    }
    credit_ += static_cast<int32_t>(credit_change);
    stash_from_l_ = from_l;
    return out;
  }
}

std::optional<Packet> DualPi2::take_stash() {
  std::optional<Packet> p = std::move(stash_);
  stash_.reset();
  backlog_bytes_ -= p->len;  // peek had put it back in the backlog
  return p;
}

std::optional<Packet> DualPi2::dequeue(Time now) {
  run_timer(now);
  std::optional<Packet> p = stash_ ? take_stash() : dequeue_aqm(now);
  if (!p) {
    return p;
  }
  const uint64_t sojourn = static_cast<uint64_t>((now - p->enqueue_ts).count_ns());
  if (stash_from_l_) {
    ++stats_.dequeued_l;
    stats_.sojourn_l_ns += sojourn;
  } else {
    ++stats_.dequeued_c;
    stats_.sojourn_c_ns += sojourn;
  }
  ++stats_.dequeued_packets;
  stats_.dequeued_bytes += p->len;
  if (observer_ != nullptr) {
    observer_->on_dequeue(now, *p);
  }
  return p;
}

const Packet* DualPi2::peek(Time now) {
  run_timer(now);
  if (!stash_) {
    stash_ = dequeue_aqm(now);
    if (!stash_) {
      return nullptr;
    }
    backlog_bytes_ += stash_->len;  // still part of the qdisc (dualpi2_peek)
  }
  return &*stash_;
}

}  // namespace nicsim::algo
