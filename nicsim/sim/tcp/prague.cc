#include "nicsim/sim/tcp/prague.h"

#include <algorithm>

namespace nicsim::sim::tcp {

void Prague::init(const Window& w, const Ack& now_state) {
  upscaled_alpha_ = kMaxAlpha << kShiftG;
  cwnd_cnt_ = 0;
  max_tso_burst_ = 1;
  saw_ce_ = now_state.delivered_ce != 0;
  in_loss_ = false;
  new_round(now_state);
  update_pacing_rate(w, now_state);
}

void Prague::new_round(const Ack& a) {
  next_seq_ = a.snd_nxt;
  old_delivered_ = a.delivered;
  old_delivered_ce_ = a.delivered_ce;
  ++rounds_;
}

void Prague::on_ack(const Ack& a, Window& w) {
  update_cwnd(a, w);
  if (a.snd_una >= next_seq_) {  // prague_e2e_rtt_elapsed
    update_alpha(a);
  }
  update_pacing_rate(w, a);
}

void Prague::update_cwnd(const Ack& a, Window& w) {
  int64_t acked = a.acked_sacked;
  if (a.ce_delta != 0) {
    saw_ce_ = true;
    acked -= a.ce_delta;  // only unmarked deliveries grow the window (unsaturated increase)
  }
  if (acked > 0 && !in_loss_ && a.cwnd_limited) {
    if (w.in_slow_start()) {
      // tcp_slow_start: cwnd += acked up to ssthresh; the rest continues below.
      const uint32_t cwnd = static_cast<uint32_t>(
          std::min<uint64_t>(uint64_t{w.cwnd} + static_cast<uint64_t>(acked), w.ssthresh));
      acked -= cwnd - w.cwnd;
      w.cwnd = cwnd;
      if (acked == 0) {
        return;
      }
    }
    // 1 segment per cwnd segments acked, in 2^−20 units, rounded to nearest.
    const uint64_t increase =
        (static_cast<uint64_t>(acked) * static_cast<uint64_t>(kOneCwnd) + (w.cwnd >> 1)) /
        std::max<uint32_t>(w.cwnd, 1);
    cwnd_cnt_ += static_cast<int64_t>(std::max<uint64_t>(static_cast<uint64_t>(acked), increase));
  }
  if (cwnd_cnt_ <= -kOneCwnd) {
    cwnd_cnt_ += kOneCwnd;
    --w.cwnd;
    if (w.cwnd < kMinCwnd) {
      w.cwnd = kMinCwnd;
      cwnd_cnt_ = 0;  // no point in applying further reductions
    }
    w.ssthresh = w.cwnd;
  } else if (cwnd_cnt_ >= kOneCwnd) {
    cwnd_cnt_ -= kOneCwnd;
    ++w.cwnd;
  }
}

void Prague::update_alpha(const Ack& a) {
  if (saw_ce_) {  // no AQM on the path yet: keep alpha at its initial value
    uint64_t f = a.delivered_ce - old_delivered_ce_;
    if (f != 0) {
      f = (f << kAlphaBits) / std::max<uint64_t>(a.delivered - old_delivered_, 1);
    }
    uint64_t alpha = upscaled_alpha_ - (upscaled_alpha_ >> kShiftG) + f;
    upscaled_alpha_ = std::min(alpha, kMaxAlpha << kShiftG);
  }
  new_round(a);
}

void Prague::enter_cwr(const Window& w) {
  // cwnd·alpha/2 with alpha in 2^−20 and the carry in 2^−20: (alpha·cwnd·2^20 + 2^20) >> 21.
  const unsigned __int128 r =
      (static_cast<unsigned __int128>(alpha()) * (static_cast<uint64_t>(w.cwnd) << kCwndUnit) +
       kMaxAlpha) >>
      (kAlphaBits + 1);
  cwnd_cnt_ -= static_cast<int64_t>(r);
}

void Prague::enter_loss(const Window& w) {
  cwnd_cnt_ -= (static_cast<int64_t>(w.cwnd) << (kCwndUnit - 1)) + (cwnd_cnt_ >> 1);
  in_loss_ = true;
}

void Prague::update_pacing_rate(const Window& w, const Ack& a) {
  if (a.srtt <= Duration::zero()) {
    return;
  }
  const uint64_t inflight = std::max<uint64_t>(w.cwnd, a.in_flight);
  uint64_t per_sec = uint64_t{cfg_.mtu} * 1'000'000'000ull;  // bytes·ns per second per packet
  if (w.cwnd < w.ssthresh / 2) {
    per_sec <<= 1;  // 200 % in slow start
  }
  const unsigned __int128 rate =
      static_cast<unsigned __int128>(per_sec) * inflight / static_cast<uint64_t>(a.srtt.count_ns());
  pacing_rate_ = static_cast<uint64_t>(rate);
  const uint64_t burst = pacing_rate_ / cfg_.mtu;  // packets per second
  max_tso_burst_ = static_cast<uint32_t>(std::max<uint64_t>(burst >> kBurstShift, 1));
}

uint32_t Prague::tso_segs() const { return std::max(max_tso_burst_, cfg_.min_tso_segs); }

}  // namespace nicsim::sim::tcp
