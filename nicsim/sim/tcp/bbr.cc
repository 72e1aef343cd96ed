#include "nicsim/sim/tcp/bbr.h"

#include <algorithm>
#include <cstdlib>

namespace nicsim::sim::tcp {

namespace {

constexpr uint64_t kUsPerSec = 1'000'000;
constexpr uint32_t kMaxTcpHeaderBytes = 320;  // MAX_TCP_HEADER (params.h kMaxTcpHeader)
constexpr uint32_t kTsoSegsCap = 0x7F;

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// lib/win_minmax.c

uint32_t Bbr::MinMax::reset(uint32_t t, uint32_t v) {
  s[0] = s[1] = s[2] = Sample{t, v};
  return v;
}

uint32_t Bbr::MinMax::subwin_update(uint32_t win, const Sample& val) {
  const uint32_t dt = val.t - s[0].t;
  if (dt > win) {
    // The best sample left the window: promote the 2nd and 3rd (twice if needed).
    s[0] = s[1];
    s[1] = s[2];
    s[2] = val;
    if (val.t - s[0].t > win) {
      s[0] = s[1];
      s[1] = s[2];
      s[2] = val;
    }
  } else if (s[1].t == s[0].t && dt > win / 4) {
    s[2] = s[1] = val;  // a quarter window without a new best: 2nd choice from this quarter
  } else if (s[2].t == s[1].t && dt > win / 2) {
    s[2] = val;  // half a window: 3rd choice from the last half
  }
  return s[0].v;
}

uint32_t Bbr::MinMax::running_max(uint32_t win, uint32_t t, uint32_t v) {
  const Sample val{t, v};
  if (val.v >= s[0].v || val.t - s[2].t > win) {
    return reset(t, v);  // a new maximum, or nothing left in the window
  }
  if (val.v >= s[1].v) {
    s[2] = s[1] = val;
  } else if (val.v >= s[2].v) {
    s[2] = val;
  }
  return subwin_update(win, val);
}

// ---------------------------------------------------------------------------------------------

Bbr::Bbr(const Config& c) : cfg_(c), rng_(c.seed) {}

uint32_t Bbr::us_between(Time later, Time earlier) {
  const int64_t ns = (later - earlier).count_ns();
  return ns > 0 ? static_cast<uint32_t>(ns / 1000) : 0;
}

uint32_t Bbr::random_cycle_offset() {
  return static_cast<uint32_t>(splitmix64(rng_) % kCycleRand);  // prandom_u32_max(7)
}

uint64_t Bbr::rate_bytes_per_sec(uint64_t rate, uint32_t gain) const {
  // bw (packets/us << 24) x mss x gain x 1e6 x 99 %, in the kernel's overflow-safe order.
  rate *= cfg_.mss;
  rate *= gain;
  rate >>= kBbrScale;
  rate *= kUsPerSec / 100 * (100 - kPacingMarginPercent);
  return rate >> kBwScale;
}

uint64_t Bbr::bw_bytes_per_sec() const {
  return (static_cast<uint64_t>(bw()) * cfg_.mss * kUsPerSec) >> kBwScale;
}

void Bbr::init_pacing_rate_from_rtt(const Conn& c, uint32_t cwnd) {
  uint64_t rtt_us = 1000;  // nominal 1 ms without a sample
  if (c.srtt > Duration::zero()) {
    rtt_us = std::max<uint64_t>(static_cast<uint64_t>(c.srtt.count_ns()) / 1000, 1);
    has_seen_rtt_ = true;
  }
  const uint64_t bw = static_cast<uint64_t>(cwnd) * kBwUnit / rtt_us;
  pacing_rate_ = rate_bytes_per_sec(bw, kHighGain);
}

void Bbr::set_pacing_rate(const Conn& c, uint32_t cwnd, uint32_t bw, uint32_t gain) {
  const uint64_t rate = rate_bytes_per_sec(bw, gain);
  if (!has_seen_rtt_ && c.srtt > Duration::zero()) {
    init_pacing_rate_from_rtt(c, cwnd);
  }
  if (full_bw_reached_ || rate > pacing_rate_) {
    pacing_rate_ = rate;
  }
}

uint32_t Bbr::min_tso_segs() const { return pacing_rate_ < (kMinTsoRateBps >> 3) ? 1 : 2; }

uint32_t Bbr::tso_segs_goal() const {
  const uint64_t bytes = std::min<uint64_t>(pacing_rate_ >> cfg_.pacing_shift,
                                            cfg_.gso_max_bytes - 1 - kMaxTcpHeaderBytes);
  const uint32_t segs = std::max(static_cast<uint32_t>(bytes / cfg_.mss), min_tso_segs());
  return std::min(segs, kTsoSegsCap);
}

void Bbr::save_cwnd(uint32_t cwnd) {
  if (prev_ca_state_ < CaState::kRecovery && mode_ != Mode::kProbeRtt) {
    prior_cwnd_ = cwnd;  // a good cwnd
  } else {
    prior_cwnd_ = std::max(prior_cwnd_, cwnd);  // recovery or PROBE_RTT cut it temporarily
  }
}

uint32_t Bbr::bdp(uint32_t bw, uint32_t gain) const {
  if (min_rtt_us_ == kNoMinRtt) {
    return kInitCwnd;  // no RTT sample yet: be safe
  }
  const uint64_t w = static_cast<uint64_t>(bw) * min_rtt_us_;
  // Gain applied, BW_SCALE removed, rounded up (against a negative feedback loop).
  return static_cast<uint32_t>((((w * gain) >> kBbrScale) + kBwUnit - 1) / kBwUnit);
}

uint32_t Bbr::quantization_budget(uint32_t cwnd) const {
  cwnd += 3 * tso_segs_goal();  // one skb in the qdisc, one in TSO, one at the receiver
  cwnd = (cwnd + 1) & ~1u;      // even, against delayed-ACK stalls
  if (mode_ == Mode::kProbeBw && cycle_idx_ == 0) {
    cwnd += 2;  // let the 5/4 phase get inflight above the BDP even for small BDPs
  }
  return cwnd;
}

uint32_t Bbr::inflight(uint32_t bw, uint32_t gain) const {
  return quantization_budget(bdp(bw, gain));
}

uint32_t Bbr::packets_in_net_at_edt(const Conn& c, uint32_t inflight_now) const {
  const Time edt = max(c.wstamp, c.now);
  const uint64_t interval_us = static_cast<uint64_t>((edt - c.now).count_ns()) / 1000;
  const uint64_t interval_delivered = (static_cast<uint64_t>(bw()) * interval_us) >> kBwScale;
  uint64_t inflight_at_edt = inflight_now;
  if (pacing_gain_ > kBbrUnit) {
    inflight_at_edt += tso_segs_goal();  // include the skb departing at the EDT
  }
  if (interval_delivered >= inflight_at_edt) {
    return 0;
  }
  return static_cast<uint32_t>(inflight_at_edt - interval_delivered);
}

uint32_t Bbr::ack_aggregation_cwnd() const {
  if (kExtraAckedGain == 0 || !full_bw_reached_) {
    return 0;
  }
  const uint32_t max_aggr_cwnd =
      static_cast<uint32_t>(static_cast<uint64_t>(bw()) * kExtraAckedMaxUs / kBwUnit);
  const uint32_t aggr_cwnd = (kExtraAckedGain * extra_acked()) >> kBbrScale;
  return std::min(aggr_cwnd, max_aggr_cwnd);
}

bool Bbr::set_cwnd_to_recover_or_restore(const RateSample& rs, const Conn& c, uint32_t acked,
                                         uint32_t cwnd, uint32_t& new_cwnd) {
  const CaState prev_state = prev_ca_state_;
  const CaState state = c.ca_state;
  // An ACK for P packets releases at most 2P: first deduct the losses...
  if (rs.losses > 0) {
    cwnd = static_cast<uint32_t>(std::max<int64_t>(int64_t{cwnd} - rs.losses, 1));
  }
  if (state == CaState::kRecovery && prev_state != CaState::kRecovery) {
    // First round of Recovery: packet conservation, and the round starts now.
    packet_conservation_ = true;
    next_rtt_delivered_ = c.delivered;
    cwnd = c.in_flight + acked;  // cut unused cwnd (app, TSQ, TSO deferral)
  } else if (prev_state >= CaState::kRecovery && state < CaState::kRecovery) {
    cwnd = std::max(cwnd, prior_cwnd_);  // recovery done: restore
    packet_conservation_ = false;
  }
  prev_ca_state_ = state;
  if (packet_conservation_) {
    new_cwnd = std::max(cwnd, c.in_flight + acked);
    return true;
  }
  new_cwnd = cwnd;
  return false;
}

void Bbr::set_cwnd(const RateSample& rs, const Conn& c, uint32_t acked, uint32_t bw, uint32_t gain,
                   Window& w) {
  uint32_t cwnd = w.cwnd;
  if (acked != 0 && !set_cwnd_to_recover_or_restore(rs, c, acked, cwnd, cwnd)) {
    uint32_t target = bdp(bw, gain);
    target += ack_aggregation_cwnd();  // excess ACKed data from aggregation
    target = quantization_budget(target);
    if (full_bw_reached_) {
      cwnd = std::min(cwnd + acked, target);  // only cut cwnd once the pipe was full
    } else if (cwnd < target || c.delivered < kInitCwnd) {
      cwnd = cwnd + acked;  // slow-start towards the target
    }
    cwnd = std::max(cwnd, kCwndMinTarget);
  }
  w.cwnd = cwnd;
  if (mode_ == Mode::kProbeRtt) {
    w.cwnd = std::min(w.cwnd, kCwndMinTarget);  // drain the queue, refresh min_rtt
  }
}

bool Bbr::is_next_cycle_phase(const RateSample& rs, const Conn& c) const {
  const bool is_full_length = us_between(c.delivered_time, cycle_mstamp_) > min_rtt_us_;
  if (pacing_gain_ == kBbrUnit) {
    return is_full_length;  // cruising: wall-clock phases
  }
  const uint32_t inflight_now = packets_in_net_at_edt(c, rs.prior_in_flight);
  const uint32_t bw = max_bw();
  if (pacing_gain_ > kBbrUnit) {
    // Probing: at least one min_rtt, until inflight reaches gain x BDP (or a loss).
    return is_full_length && (rs.losses > 0 || inflight_now >= inflight(bw, pacing_gain_));
  }
  // Draining: until the queue is gone, or one min_rtt.
  return is_full_length || inflight_now <= inflight(bw, kBbrUnit);
}

void Bbr::advance_cycle_phase(const Conn& c) {
  cycle_idx_ = (cycle_idx_ + 1) & (kCycleLen - 1);
  cycle_mstamp_ = c.delivered_time;
}

void Bbr::reset_probe_bw_mode(const Conn& c) {
  mode_ = Mode::kProbeBw;
  cycle_idx_ = kCycleLen - 1 - random_cycle_offset();
  advance_cycle_phase(c);  // never starts in the 3/4 phase
}

void Bbr::reset_mode(const Conn& c) {
  if (!full_bw_reached_) {
    mode_ = Mode::kStartup;
  } else {
    reset_probe_bw_mode(c);
  }
}

void Bbr::reset_lt_bw_sampling_interval(const Conn& c) {
  lt_last_stamp_ = c.delivered_time;
  lt_last_delivered_ = c.delivered;
  lt_last_lost_ = c.lost;
  lt_rtt_cnt_ = 0;
}

void Bbr::reset_lt_bw_sampling(const Conn& c) {
  lt_bw_ = 0;
  lt_use_bw_ = false;
  lt_is_sampling_ = false;
  reset_lt_bw_sampling_interval(c);
}

void Bbr::lt_bw_interval_done(uint32_t bw, const Conn& c) {
  if (lt_bw_ != 0) {
    // Consistent with the previous interval (within 1/8 or 4 kbit/s): we are policed.
    const uint32_t diff = bw > lt_bw_ ? bw - lt_bw_ : lt_bw_ - bw;
    if (static_cast<uint64_t>(diff) * kBbrUnit <= static_cast<uint64_t>(kLtBwRatio) * lt_bw_ ||
        rate_bytes_per_sec(diff, kBbrUnit) <= kLtBwDiff) {
      lt_bw_ = (bw + lt_bw_) >> 1;
      lt_use_bw_ = true;
      pacing_gain_ = kBbrUnit;  // try to avoid drops
      lt_rtt_cnt_ = 0;
      return;
    }
  }
  lt_bw_ = bw;
  reset_lt_bw_sampling_interval(c);
}

void Bbr::lt_bw_sampling(const RateSample& rs, const Conn& c) {
  if (lt_use_bw_) {
    if (mode_ == Mode::kProbeBw && round_start_ && ++lt_rtt_cnt_ >= kLtBwMaxRtts) {
      reset_lt_bw_sampling(c);  // stop using lt_bw
      reset_probe_bw_mode(c);   // restart gain cycling
    }
    return;
  }
  // Start at the first loss, once the policer's tokens are spent.
  if (!lt_is_sampling_) {
    if (rs.losses == 0) {
      return;
    }
    reset_lt_bw_sampling_interval(c);
    lt_is_sampling_ = true;
  }
  if (rs.app_limited) {
    reset_lt_bw_sampling(c);  // out of data: the interval would under-estimate
    return;
  }
  if (round_start_) {
    ++lt_rtt_cnt_;
  }
  if (lt_rtt_cnt_ < kLtIntervalMinRtts) {
    return;
  }
  if (lt_rtt_cnt_ > 4 * kLtIntervalMinRtts) {
    reset_lt_bw_sampling(c);  // too long
    return;
  }
  if (rs.losses == 0) {
    return;  // end intervals at a loss (tokens exhausted)
  }
  const uint64_t lost = c.lost - lt_last_lost_;
  const uint64_t delivered = c.delivered - lt_last_delivered_;
  if (delivered == 0 || (lost << kBbrScale) < kLtLossThresh * delivered) {
    return;  // not lossy enough yet
  }
  const int64_t t_ms =
      c.delivered_time.ns_since_epoch() / 1'000'000 - lt_last_stamp_.ns_since_epoch() / 1'000'000;
  if (t_ms < 1) {
    return;  // less than 1 ms: wait
  }
  const uint64_t bw = delivered * kBwUnit / (static_cast<uint64_t>(t_ms) * 1000);
  lt_bw_interval_done(static_cast<uint32_t>(std::min<uint64_t>(bw, UINT32_MAX)), c);
}

void Bbr::update_bw(const RateSample& rs, const Conn& c) {
  round_start_ = false;
  if (rs.delivered < 0 || rs.interval <= Duration::zero()) {
    return;  // not a valid sample
  }
  if (rs.prior_delivered >= next_rtt_delivered_) {
    // A packet-timed round ended.
    next_rtt_delivered_ = c.delivered;
    ++rtt_cnt_;
    round_start_ = true;
    packet_conservation_ = false;
  }
  lt_bw_sampling(rs, c);
  const uint64_t interval_us = static_cast<uint64_t>(rs.interval.count_ns()) / 1000;
  if (interval_us == 0) {
    return;
  }
  const uint64_t bw = static_cast<uint64_t>(rs.delivered) * kBwUnit / interval_us;
  const uint32_t bw32 = static_cast<uint32_t>(std::min<uint64_t>(bw, UINT32_MAX));
  // App-limited samples only count when they do not lower the estimate.
  if (!rs.app_limited || bw32 >= max_bw()) {
    bw_.running_max(kBwRtts, rtt_cnt_, bw32);
  }
}

void Bbr::update_ack_aggregation(const RateSample& rs, const Conn& c, uint32_t cwnd) {
  if (kExtraAckedGain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 ||
      rs.interval <= Duration::zero()) {
    return;
  }
  if (round_start_) {
    extra_acked_win_rtts_ = std::min<uint32_t>(0x1F, extra_acked_win_rtts_ + 1);
    if (extra_acked_win_rtts_ >= kExtraAckedWinRtts) {
      extra_acked_win_rtts_ = 0;
      extra_acked_win_idx_ = extra_acked_win_idx_ != 0 ? 0 : 1;
      extra_acked_[extra_acked_win_idx_] = 0;
    }
  }
  // Packets expected over the epoch at the estimated bw.
  const uint32_t epoch_us = us_between(c.delivered_time, ack_epoch_mstamp_);
  uint32_t expected_acked = static_cast<uint32_t>(static_cast<uint64_t>(bw()) * epoch_us / kBwUnit);
  // Restart the epoch when ACKs come slower than expected, or after very many.
  if (ack_epoch_acked_ <= expected_acked ||
      ack_epoch_acked_ + rs.acked_sacked >= kAckEpochAckedResetThresh) {
    ack_epoch_acked_ = 0;
    ack_epoch_mstamp_ = c.delivered_time;
    expected_acked = 0;
  }
  ack_epoch_acked_ = std::min<uint32_t>(0xFFFFF, ack_epoch_acked_ + rs.acked_sacked);
  uint32_t extra = ack_epoch_acked_ - expected_acked;
  extra = std::min(extra, cwnd);
  if (extra > extra_acked_[extra_acked_win_idx_]) {
    extra_acked_[extra_acked_win_idx_] = extra;
  }
}

void Bbr::check_full_bw_reached(const RateSample& rs) {
  if (full_bw_reached_ || !round_start_ || rs.app_limited) {
    return;
  }
  const uint32_t bw_thresh =
      static_cast<uint32_t>((static_cast<uint64_t>(full_bw_) * kFullBwThresh) >> kBbrScale);
  if (max_bw() >= bw_thresh) {
    full_bw_ = max_bw();  // still growing by >= 25 % per round
    full_bw_cnt_ = 0;
    return;
  }
  ++full_bw_cnt_;
  full_bw_reached_ = full_bw_cnt_ >= kFullBwCnt;
}

void Bbr::check_drain(const Conn& c, Window& w) {
  if (mode_ == Mode::kStartup && full_bw_reached_) {
    mode_ = Mode::kDrain;
    w.ssthresh = inflight(max_bw(), kBbrUnit);
  }
  if (mode_ == Mode::kDrain &&
      packets_in_net_at_edt(c, c.in_flight) <= inflight(max_bw(), kBbrUnit)) {
    reset_probe_bw_mode(c);  // the queue is drained
  }
}

void Bbr::check_probe_rtt_done(const Conn& c, Window& w) {
  if (!(probe_rtt_done_armed_ && c.now > probe_rtt_done_stamp_)) {
    return;
  }
  min_rtt_stamp_ = c.now;  // the next PROBE_RTT is 10 s away
  w.cwnd = std::max(w.cwnd, prior_cwnd_);
  reset_mode(c);
}

void Bbr::update_min_rtt(const RateSample& rs, const Conn& c, Window& w, DeliveryRate& rate) {
  const bool filter_expired = c.now > min_rtt_stamp_ + kMinRttWindow;
  if (rs.rtt >= Duration::zero()) {
    const uint64_t rtt_us = static_cast<uint64_t>(rs.rtt.count_ns()) / 1000;
    if (rtt_us <= min_rtt_us_ || (filter_expired && !rs.is_ack_delayed)) {
      min_rtt_us_ = static_cast<uint32_t>(std::min<uint64_t>(rtt_us, kNoMinRtt - 1));
      min_rtt_stamp_ = c.now;
    }
  }
  if (filter_expired && !idle_restart_ && mode_ != Mode::kProbeRtt) {
    mode_ = Mode::kProbeRtt;  // dip: drain the queue
    save_cwnd(w.cwnd);
    probe_rtt_done_armed_ = false;
  }
  if (mode_ == Mode::kProbeRtt) {
    rate.mark_app_limited(c.in_flight);  // ignore the low-rate samples of this mode
    // Hold at most 4 packets in flight for max(200 ms, one round).
    if (!probe_rtt_done_armed_ && c.in_flight <= kCwndMinTarget) {
      probe_rtt_done_stamp_ = c.now + kProbeRttTime;
      probe_rtt_done_armed_ = true;
      probe_rtt_round_done_ = false;
      next_rtt_delivered_ = c.delivered;
    } else if (probe_rtt_done_armed_) {
      if (round_start_) {
        probe_rtt_round_done_ = true;
      }
      if (probe_rtt_round_done_) {
        check_probe_rtt_done(c, w);
      }
    }
  }
  if (rs.delivered > 0) {
    idle_restart_ = false;
  }
}

void Bbr::update_gains() {
  switch (mode_) {
    case Mode::kStartup:
      pacing_gain_ = kHighGain;
      cwnd_gain_ = kHighGain;
      break;
    case Mode::kDrain:
      pacing_gain_ = kDrainGain;  // slow, to drain
      cwnd_gain_ = kHighGain;     // keep cwnd
      break;
    case Mode::kProbeBw:
      pacing_gain_ = lt_use_bw_ ? kBbrUnit : kPacingGain[cycle_idx_];
      cwnd_gain_ = kCwndGain;
      break;
    case Mode::kProbeRtt:
      pacing_gain_ = kBbrUnit;
      cwnd_gain_ = kBbrUnit;
      break;
  }
}

void Bbr::init(Window& w, const Conn& c) {
  prior_cwnd_ = 0;
  w.ssthresh = kInfiniteSsthresh;
  rtt_cnt_ = 0;
  next_rtt_delivered_ = 0;
  prev_ca_state_ = CaState::kOpen;
  packet_conservation_ = false;
  probe_rtt_done_armed_ = false;
  probe_rtt_round_done_ = false;
  min_rtt_us_ =
      c.min_rtt > Duration::zero() ? static_cast<uint32_t>(c.min_rtt.count_ns() / 1000) : kNoMinRtt;
  min_rtt_stamp_ = c.now;
  bw_.reset(rtt_cnt_, 0);
  has_seen_rtt_ = false;
  init_pacing_rate_from_rtt(c, w.cwnd);
  round_start_ = false;
  idle_restart_ = false;
  full_bw_reached_ = false;
  full_bw_ = 0;
  full_bw_cnt_ = 0;
  cycle_mstamp_ = Time::zero();
  cycle_idx_ = 0;
  reset_lt_bw_sampling(c);
  mode_ = Mode::kStartup;
  update_gains();
  ack_epoch_mstamp_ = c.now;
  ack_epoch_acked_ = 0;
  extra_acked_win_rtts_ = 0;
  extra_acked_win_idx_ = 0;
  extra_acked_ = {0, 0};
}

void Bbr::on_ack(const RateSample& rs, const Conn& c, Window& w, DeliveryRate& rate) {
  update_bw(rs, c);
  update_ack_aggregation(rs, c, w.cwnd);
  if (mode_ == Mode::kProbeBw && is_next_cycle_phase(rs, c)) {
    advance_cycle_phase(c);
  }
  check_full_bw_reached(rs);
  check_drain(c, w);
  update_min_rtt(rs, c, w, rate);
  update_gains();
  const uint32_t bw_now = bw();
  set_pacing_rate(c, w.cwnd, bw_now, pacing_gain_);
  set_cwnd(rs, c, rs.acked_sacked, bw_now, cwnd_gain_, w);
}

uint32_t Bbr::ssthresh(const Window& w) {
  save_cwnd(w.cwnd);
  return w.ssthresh;
}

void Bbr::on_loss_state(const Conn& c) {
  prev_ca_state_ = CaState::kLoss;
  full_bw_ = 0;
  round_start_ = true;  // an RTO ends the round
  RateSample rs;
  rs.losses = 1;
  lt_bw_sampling(rs, c);
}

}  // namespace nicsim::sim::tcp
