#pragma once
// CongestionControl — the sender's window increase and decrease rules behind one small
// interface (the shape of Linux's tcp_congestion_ops: cong_avoid, ssthresh, pkts_acked,
// set_state), selected by Params::cc with a switch (no virtual call):
//
//  * NewReno (RFC 5681 §3.1, Linux tcp_reno_cong_avoid): slow start cwnd += acked segments up
//    to ssthresh (Linux counts every segment an ACK covers, RFC 3465 ABC without the L limit),
//    congestion avoidance +1 segment per cwnd segments acked (tcp_cong_avoid_ai with
//    snd_cwnd_cnt), ssthresh = max(cwnd/2, 2) (Linux uses cwnd for FlightSize).
//  * CUBIC as Linux tcp_cubic.c implements RFC 9438: W_cubic(t) = C·(t − K)³ + W_max,
//    K = ∛((W_max − cwnd_epoch)/C) (§4.2). Per segment acked cwnd grows by the largest of
//    (W_cubic(t + delay_min) − cwnd)/cwnd (bictcp_update: Linux adds delay_min, not SRTT, to
//    t), 1/20 while W_max is unknown (bictcp_update: last_max_cwnd == 0, cnt <= 20, "increase
//    cwnd 5% per RTT": from the start or an RTO until the first loss, so also after a HyStart
//    exit) and the Reno-friendly (⌊W_est⌋ − cwnd)/cwnd with W_est += α·acked/cwnd,
//    α = 3(1−β)/(1+β) for the whole epoch (tcp_friendliness: Linux has no RFC §4.3 switch to
//    α = 1 at cwnd_prior), at most 1/2 (cnt >= 2); ssthresh = max(β·cwnd, 2) with W_max from
//    fast convergence (§4.6, §4.7; bictcp_recalc_ssthresh); after an RTO or a loss-free
//    slow-start exit the next epoch uses K = 0 and W_max = cwnd_epoch (§4.8, §4.10).
//    Slow start: HyStart as in Linux tcp_cubic.c (optional, Params::hystart): ACK-train
//    detection (ACKs ≤ hystart_ack_delta apart spanning more than delay_min/2 of the round,
//    delay_min without pacing) and delay increase (min of the first 8 RTT samples of a round >
//    delay_min + clamp(delay_min/8, 4 ms, 16 ms)); either sets ssthresh = cwnd. Only from
//    cwnd >= hystart_low_window; delay samples within 1 s of an epoch start are ignored.
//
// Units: cwnd and ssthresh are in segments (Linux snd_cwnd / snd_ssthresh), time in Time.
// Deviations: CUBIC in floating point (Linux uses fixed-point cube roots, a 1024-based β and
// an integer beta_scale: α = 8/15 there, 0.529 here); the growth rate is recomputed on every
// ACK (Linux: at most once per jiffy and not within HZ/32 while cwnd is unchanged); no
// idle-restart epoch shift (bulk senders).

#include <cstdint>
#include <limits>

#include "nicsim/core/time.h"
#include "nicsim/sim/tcp/params.h"

namespace nicsim::sim::tcp {

inline constexpr uint32_t kInfiniteSsthresh = 0x7fffffff;  // TCP_INFINITE_SSTHRESH

// Linux inet_connection_sock icsk_ca_state (ordered as in the kernel).
enum class CaState : uint8_t { kOpen, kDisorder, kCwr, kRecovery, kLoss };

// The window state congestion control reads and writes (tcp_sock fields).
struct Window {
  uint32_t cwnd = 10;                     // snd_cwnd, segments
  uint32_t ssthresh = kInfiniteSsthresh;  // snd_ssthresh, segments
  uint32_t cwnd_cnt = 0;                  // snd_cwnd_cnt: NewReno CA accumulator
  bool in_slow_start() const { return cwnd < ssthresh; }
};

class CongestionControl {
 public:
  explicit CongestionControl(const Params& p);

  CcAlgorithm algorithm() const { return algo_; }

  // Connection start (tcp_init_congestion_control): resets HyStart's round.
  void init(Time now, uint64_t snd_nxt);
  // Window increase on an ACK that newly delivered `acked` segments while the sender was
  // cwnd-limited (tcp_cong_avoid). `ack` is the cumulative ACK, `snd_nxt` the next new byte.
  void cong_avoid(Window& w, uint32_t acked, Time now, uint64_t ack, uint64_t snd_nxt,
                  Duration srtt);
  // ssthresh after a congestion event (loss, ECN echo, local drop); updates CUBIC's W_max,
  // cwnd_prior and ends the epoch (tcp_congestion_ops.ssthresh).
  uint32_t ssthresh(const Window& w);
  // An RTT sample from an ACK (pkts_acked): delay_min and HyStart.
  void on_rtt_sample(Window& w, Duration rtt, Time now);
  // Entering the Loss state after an RTO (bictcp_state(TCP_CA_Loss)).
  void on_loss_state(Time now, uint64_t snd_nxt);

  // --- CUBIC introspection (tests, traces) ---
  double w_max() const { return w_max_; }
  double k_seconds() const { return k_; }
  double w_est() const { return w_est_; }
  bool w_max_known() const { return w_max_known_; }
  double alpha() const { return alpha_; }
  bool epoch_started() const { return epoch_started_; }
  Time epoch_start() const { return t_epoch_; }
  // W_cubic(t) of the current epoch, t in seconds since the epoch start (RFC 9438 Figure 1).
  double w_cubic(double t) const;
  bool hystart_found() const { return hystart_found_; }
  Duration delay_min() const { return delay_min_; }
  uint64_t hystart_exits() const { return hystart_exits_; }

 private:
  static uint32_t slow_start(Window& w, uint32_t acked);
  static void cong_avoid_ai(Window& w, uint32_t step, uint32_t acked);
  void cubic_update(Window& w, uint32_t acked, Time now);
  void hystart_reset(Time now, uint64_t snd_nxt);

  CcAlgorithm algo_;
  double beta_;
  double c_;
  double alpha_;  // Reno-friendly additive increase per window, 3(1−β)/(1+β)
  bool fast_convergence_;
  bool tcp_friendliness_;
  bool hystart_;
  uint32_t hystart_low_window_;
  Duration hystart_ack_delta_;
  bool pacing_;

  // CUBIC (RFC 9438 §4.1.2 names)
  double w_max_ = 0.0;
  double k_ = 0.0;
  double w_est_ = 0.0;
  bool w_max_known_ = false;  // Linux last_max_cwnd != 0: a loss since the start or last RTO
  double cwnd_epoch_ = 0.0;
  double acc_ = 0.0;  // fractional cwnd increase not yet applied
  Time t_epoch_;
  bool epoch_started_ = false;

  // HyStart (tcp_cubic.c names)
  bool hystart_found_ = false;
  Time round_start_;
  Time last_ack_;
  uint64_t end_seq_ = 0;
  Duration curr_rtt_ = Duration::max();
  uint32_t sample_cnt_ = 0;
  Duration delay_min_;  // zero = no sample yet
  uint64_t hystart_exits_ = 0;
};

}  // namespace nicsim::sim::tcp
