#pragma once
// Dctcp — Data Center TCP's congestion estimate and window reduction (RFC 8257), as Linux
// net/ipv4/tcp_dctcp.c implements them (behaviour ported, no code copied; read at torvalds/linux
// v6.1, the Debian 12 kernel). DCTCP is a classic tcp_congestion_ops module: window increase is
// Reno's (tcp_reno_cong_avoid, CongestionControl with NewReno) and the sender's CWR / Recovery
// machinery applies the reductions (PRR); this class holds what tcp_dctcp.c adds:
//
//  * alpha (dctcp_update_alpha, RFC 8257 §3.3): at the end of each observation window (the
//    first ACK with snd_una >= next_seq, next_seq = snd_nxt at the window's start)
//      alpha = alpha − alpha·g + g·F,   F = delivered_ce / delivered over the window,
//    in units of 1/1024 (DCTCP_MAX_ALPHA), g = 2^−shift_g = 1/16 (dctcp_shift_g = 4); the
//    decay is `alpha −= min_not_zero(alpha, alpha >> g)`, so a small alpha still decays to 0.
//    delivered / delivered_ce are tp->delivered and tp->delivered_ce: segments delivered, and
//    those delivered by ACKs carrying ECE (tcp_count_delivered). Initial alpha:
//    dctcp_alpha_on_init = 1024.
//  * ECE → CWR once per window (tcp_enter_cwr, done by the sender) with
//      ssthresh = max(cwnd − cwnd·alpha/2048, 2)        (dctcp_ssthresh, RFC 8257 §3.3)
//    i.e. cwnd × (1 − alpha/2).
//  * Loss (RFC 8257 §3.5, Linux ≥ 5.1 dctcp_react_to_loss, commit aecfde23108b "tcp: Ensure
//    DCTCP reacts to losses"): entering Recovery, or an RTO (CA_EVENT_LOSS), sets
//    ssthresh = max(cwnd/2, 2) like Reno. Before 5.1 a loss used dctcp_ssthresh and the
//    module parameter dctcp_clamp_alpha_on_loss (default 0) set alpha to 1 on entering Loss;
//    Params::clamp_alpha_on_loss keeps that option.
//
// Not modelled: dctcp_cwnd_undo (no undo in the sender), dctcp_get_info, the fallback to Reno
// when ECN was not negotiated (tcp::Params refuses dctcp without ECN instead). The receiver's
// half (dctcp_ece_ack_update: ECE mirrors CE, an ACK at each change) is TcpReceiver's
// EcnFeedback::kDctcp.

#include <cstdint>

namespace nicsim::sim::tcp {

class Dctcp {
 public:
  static constexpr uint32_t kMaxAlpha = 1024;  // DCTCP_MAX_ALPHA: alpha = 1

  struct Params {
    uint32_t shift_g = 4;                // dctcp_shift_g: g = 1/16
    uint32_t alpha_on_init = kMaxAlpha;  // dctcp_alpha_on_init
    bool clamp_alpha_on_loss = false;    // dctcp_clamp_alpha_on_loss (Linux < 5.1)
  };

  Dctcp() : Dctcp(Params{}) {}
  explicit Dctcp(const Params& p);

  // dctcp_init: a new observation window from now (snd_nxt and the delivery counters).
  void init(uint64_t snd_nxt, uint64_t delivered, uint64_t delivered_ce);
  // dctcp_update_alpha, on every ACK after the delivery counters were updated.
  void on_ack(uint64_t snd_una, uint64_t snd_nxt, uint64_t delivered, uint64_t delivered_ce);
  // dctcp_ssthresh: the ECN reduction, cwnd × (1 − alpha/2), at least 2.
  uint32_t ssthresh(uint32_t cwnd) const;
  // dctcp_react_to_loss (Recovery entry, RTO): cwnd/2, at least 2.
  static uint32_t loss_ssthresh(uint32_t cwnd);
  // Entering the Loss state (RTO): the pre-5.1 alpha clamp, when enabled.
  void on_loss_state();

  uint32_t alpha() const { return alpha_; }      // 1/1024 units
  uint64_t windows() const { return windows_; }  // observation windows closed

 private:
  void new_window(uint64_t snd_nxt, uint64_t delivered, uint64_t delivered_ce);

  Params params_;
  uint32_t alpha_;
  uint64_t next_seq_ = 0;
  uint64_t old_delivered_ = 0;
  uint64_t old_delivered_ce_ = 0;
  uint64_t windows_ = 0;
};

}  // namespace nicsim::sim::tcp
