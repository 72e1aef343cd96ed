#include "nicsim/sim/tcp/congestion_control.h"

#include <algorithm>
#include <cmath>

namespace nicsim::sim::tcp {

namespace {
constexpr uint32_t kHystartMinSamples = 8;                  // HYSTART_MIN_SAMPLES
constexpr Duration kHystartDelayMin = Duration::ms(4);      // HYSTART_DELAY_MIN
constexpr Duration kHystartDelayMax = Duration::ms(16);     // HYSTART_DELAY_MAX
constexpr Duration kHystartSampleHoldoff = Duration::s(1);  // bictcp_acked: epoch_start + HZ
// bictcp_update: "increase cwnd 5% per RTT" (cnt <= 20) while last_max_cwnd == 0.
constexpr double kUnknownWmaxMinRate = 1.0 / 20.0;
// bictcp_update: cnt >= 2, "cwnd grows at 1.5x per RTT" at most.
constexpr double kMaxRate = 1.0 / 2.0;
}  // namespace

CongestionControl::CongestionControl(const Params& p)
    : algo_(p.cc),
      beta_(p.cubic_beta),
      c_(p.cubic_c),
      alpha_(3.0 * (1.0 - p.cubic_beta) / (1.0 + p.cubic_beta)),
      fast_convergence_(p.cubic_fast_convergence),
      tcp_friendliness_(p.cubic_tcp_friendliness),
      hystart_(p.hystart && p.cc == CcAlgorithm::kCubic),
      hystart_low_window_(static_cast<uint32_t>(p.hystart_low_window)),
      hystart_ack_delta_(p.hystart_ack_delta),
      pacing_(p.pacing) {}

void CongestionControl::init(Time now, uint64_t snd_nxt) {
  if (hystart_) {
    hystart_reset(now, snd_nxt);
  }
}

// tcp_slow_start: cwnd += acked up to ssthresh; returns the acked segments left over.
uint32_t CongestionControl::slow_start(Window& w, uint32_t acked) {
  const uint32_t cwnd = std::min(w.cwnd + acked, w.ssthresh);
  acked -= cwnd - w.cwnd;
  w.cwnd = cwnd;
  return acked;
}

// tcp_cong_avoid_ai: one segment per `step` segments acked.
void CongestionControl::cong_avoid_ai(Window& w, uint32_t step, uint32_t acked) {
  if (w.cwnd_cnt >= step) {
    w.cwnd_cnt = 0;
    ++w.cwnd;
  }
  w.cwnd_cnt += acked;
  if (w.cwnd_cnt >= step) {
    const uint32_t delta = w.cwnd_cnt / step;
    w.cwnd_cnt -= delta * step;
    w.cwnd += delta;
  }
}

void CongestionControl::cong_avoid(Window& w, uint32_t acked, Time now, uint64_t ack,
                                   uint64_t snd_nxt, Duration /*srtt*/) {
  if (acked == 0) {
    return;
  }
  if (w.in_slow_start()) {
    if (hystart_ && ack > end_seq_) {
      hystart_reset(now, snd_nxt);
    }
    acked = slow_start(w, acked);
    if (acked == 0) {
      return;
    }
  }
  if (algo_ == CcAlgorithm::kNewReno) {
    cong_avoid_ai(w, w.cwnd, acked);
  } else {
    cubic_update(w, acked, now);
  }
}

double CongestionControl::w_cubic(double t) const {
  const double d = t - k_;
  return c_ * d * d * d + w_max_;
}

// tcp_cubic.c bictcp_update + tcp_cong_avoid_ai: the window grows by `rate` segments per
// segment acked (Linux: one segment per ca->cnt acked, rate = 1/cnt), the largest of
//  * the cubic curve's: (W_cubic(t + delay_min) − cwnd)/cwnd, or 1/(100·cwnd) at or above it;
//  * while W_max is unknown (no loss since the connection or the last RTO: last_max_cwnd == 0,
//    e.g. after a HyStart exit), at least 1/20: "increase cwnd 5% per RTT" (cnt <= 20);
//  * the Reno-friendly estimate's: (⌊W_est⌋ − cwnd)/cwnd, W_est += α·acked/cwnd (tcp_cwnd,
//    ack_cnt, beta_scale);
// and at most 1/2 (cnt >= 2: cwnd grows at most 1.5x per RTT).
void CongestionControl::cubic_update(Window& w, uint32_t acked, Time now) {
  const double cwnd = static_cast<double>(w.cwnd);
  if (!epoch_started_) {
    // RFC 9438 §4.2: a new congestion-avoidance stage starts.
    epoch_started_ = true;
    t_epoch_ = now;
    cwnd_epoch_ = cwnd;
    if (w_max_ <= cwnd) {
      // No loss yet, or after an RTO (§4.8, §4.10): K = 0, W_max = cwnd_epoch.
      k_ = 0.0;
      w_max_ = cwnd;
    } else {
      k_ = std::cbrt((w_max_ - cwnd_epoch_) / c_);
    }
    w_est_ = cwnd_epoch_;  // "syn with cubic"
    acc_ = 0.0;
  }
  const double t = (now - t_epoch_).to_seconds() + delay_min_.to_seconds();
  const double target = w_cubic(t);
  double rate = target > cwnd ? (target - cwnd) / cwnd : 1.0 / (100.0 * cwnd);
  if (!w_max_known_) {
    rate = std::max(rate, kUnknownWmaxMinRate);
  }
  if (tcp_friendliness_) {
    w_est_ += alpha_ * static_cast<double>(acked) / cwnd;
    const double est = std::floor(w_est_ + 1e-9);
    if (est > cwnd) {
      rate = std::max(rate, (est - cwnd) / cwnd);
    }
  }
  rate = std::min(rate, kMaxRate);
  acc_ += rate * static_cast<double>(acked);
  if (acc_ >= 1.0) {
    const double inc = std::floor(acc_);
    acc_ -= inc;
    w.cwnd += static_cast<uint32_t>(inc);
  }
}

uint32_t CongestionControl::ssthresh(const Window& w) {
  const double cwnd = static_cast<double>(w.cwnd);
  if (algo_ == CcAlgorithm::kNewReno) {
    return std::max<uint32_t>(w.cwnd >> 1, 2);  // tcp_reno_ssthresh
  }
  // RFC 9438 §4.6 / §4.7.
  epoch_started_ = false;
  if (fast_convergence_ && w_max_known_ && cwnd < w_max_) {
    w_max_ = cwnd * (1.0 + beta_) / 2.0;
  } else {
    w_max_ = cwnd;
  }
  w_max_known_ = true;                                // last_max_cwnd != 0
  const double ss = std::floor(cwnd * beta_ + 1e-9);  // 90 × 0.7 must give 63, not 62
  return std::max<uint32_t>(static_cast<uint32_t>(ss), 2);
}

void CongestionControl::on_loss_state(Time now, uint64_t snd_nxt) {
  if (algo_ != CcAlgorithm::kCubic) {
    return;
  }
  // bictcp_reset: the next epoch starts from scratch (K = 0, W_max = cwnd_epoch, §4.8).
  epoch_started_ = false;
  w_max_ = 0.0;
  w_max_known_ = false;
  k_ = 0.0;
  delay_min_ = Duration::zero();  // bictcp_reset clears delay_min too: re-learned after the RTO
  hystart_found_ = false;
  if (hystart_) {
    hystart_reset(now, snd_nxt);
  }
}

void CongestionControl::hystart_reset(Time now, uint64_t snd_nxt) {
  round_start_ = now;
  last_ack_ = now;
  end_seq_ = snd_nxt;
  curr_rtt_ = Duration::max();
  sample_cnt_ = 0;
}

void CongestionControl::on_rtt_sample(Window& w, Duration rtt, Time now) {
  if (algo_ != CcAlgorithm::kCubic) {
    return;
  }
  // bictcp_acked: discard delay samples right after a congestion event.
  if (epoch_started_ && now - t_epoch_ < kHystartSampleHoldoff) {
    return;
  }
  if (delay_min_ == Duration::zero() || rtt < delay_min_) {
    delay_min_ = rtt;
  }
  if (!hystart_ || hystart_found_ || !w.in_slow_start() || w.cwnd < hystart_low_window_) {
    return;
  }
  // ACK-train detection.
  if (now - last_ack_ <= hystart_ack_delta_) {
    last_ack_ = now;
    const Duration threshold = pacing_ ? delay_min_ : delay_min_ / 2;
    if (now - round_start_ > threshold) {
      hystart_found_ = true;
    }
  }
  // Delay-increase detection.
  if (!hystart_found_) {
    if (curr_rtt_ > rtt) {
      curr_rtt_ = rtt;
    }
    if (sample_cnt_ < kHystartMinSamples) {
      ++sample_cnt_;
    } else if (curr_rtt_ >
               delay_min_ + std::clamp(delay_min_ / 8, kHystartDelayMin, kHystartDelayMax)) {
      hystart_found_ = true;
    }
  }
  if (hystart_found_) {
    w.ssthresh = w.cwnd;
    ++hystart_exits_;
  }
}

}  // namespace nicsim::sim::tcp
