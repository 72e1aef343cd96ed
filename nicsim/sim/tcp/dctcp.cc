#include "nicsim/sim/tcp/dctcp.h"

#include <algorithm>

namespace nicsim::sim::tcp {

Dctcp::Dctcp(const Params& p) : params_(p), alpha_(std::min(p.alpha_on_init, kMaxAlpha)) {}

void Dctcp::new_window(uint64_t snd_nxt, uint64_t delivered, uint64_t delivered_ce) {
  next_seq_ = snd_nxt;  // dctcp_reset
  old_delivered_ = delivered;
  old_delivered_ce_ = delivered_ce;
}

void Dctcp::init(uint64_t snd_nxt, uint64_t delivered, uint64_t delivered_ce) {
  alpha_ = std::min(params_.alpha_on_init, kMaxAlpha);
  new_window(snd_nxt, delivered, delivered_ce);
}

void Dctcp::on_ack(uint64_t snd_una, uint64_t snd_nxt, uint64_t delivered, uint64_t delivered_ce) {
  if (snd_una < next_seq_) {
    return;  // the observation window (one RTT of data) is still open
  }
  const uint64_t d = delivered - old_delivered_;
  uint64_t d_ce = delivered_ce - old_delivered_ce_;
  // alpha = (1 − g)·alpha + g·F; min_not_zero lets a small alpha decay all the way to 0.
  const uint32_t decay = alpha_ >> params_.shift_g;
  alpha_ -= decay != 0 ? decay : alpha_;
  if (d_ce != 0) {
    d_ce <<= (10 - params_.shift_g);
    d_ce /= std::max<uint64_t>(d, 1);
    alpha_ = static_cast<uint32_t>(std::min<uint64_t>(alpha_ + d_ce, kMaxAlpha));
  }
  ++windows_;
  new_window(snd_nxt, delivered, delivered_ce);
}

uint32_t Dctcp::ssthresh(uint32_t cwnd) const {
  const uint64_t cut = (static_cast<uint64_t>(cwnd) * alpha_) >> 11;
  return std::max<uint32_t>(cwnd - static_cast<uint32_t>(cut), 2);
}

uint32_t Dctcp::loss_ssthresh(uint32_t cwnd) { return std::max<uint32_t>(cwnd >> 1, 2); }

void Dctcp::on_loss_state() {
  if (params_.clamp_alpha_on_loss) {
    alpha_ = kMaxAlpha;
  }
}

}  // namespace nicsim::sim::tcp
