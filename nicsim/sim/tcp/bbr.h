#pragma once
// Bbr — BBR v1 congestion control as Linux implements it (net/ipv4/tcp_bbr.c, read at
// torvalds/linux commit 02dc96ef6c25, the 5.x version with ACK-aggregation provisioning;
// Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016).
// Behaviour ported, no kernel code copied; the kernel's fixed-point units are kept so gains
// and rounding match: bandwidth in packets/us << 24 (BW_UNIT), gains in 1/256 (BBR_UNIT),
// min_rtt in us.
//
// On every ACK (cong_control, after tcp_rate_gen's RateSample; no PRR, no ssthresh cut):
//  * model: a packet-timed round ends when the sample's prior_delivered reaches the delivered
//    count at the start of the round; max-bw filter = windowed max of delivered/interval over
//    10 rounds (Kathleen Nichols' 3-sample minmax, lib/win_minmax.c), app-limited samples only
//    when they raise it; min_rtt = windowed min over 10 s.
//  * STARTUP (pacing and cwnd gain 2/ln2 = 2.885) until 3 rounds without 25 % bw growth
//    (full_bw_reached); DRAIN (pacing gain 1/2.885, ssthresh = BDP) until the packets in the
//    network at the next EDT fall to the BDP; PROBE_BW cycles pacing gains 5/4, 3/4, 1 x 6 (one
//    phase per min_rtt; 5/4 until inflight reaches 1.25 BDP or a loss, 3/4 until inflight <=
//    BDP), cwnd gain 2, starting at a random phase other than 3/4; PROBE_RTT when min_rtt is
//    10 s old: cwnd 4 for max(200 ms, one round), then back (cwnd restored).
//  * pacing_rate = gain x bw x mss x 99 % (bytes/s; before the first bw sample and until the
//    pipe is full it only grows); cwnd = gain x BDP + ACK-aggregation allowance + 3 TSO goals,
//    rounded up to even (+2 in the 5/4 phase); slow-start towards it (only cut once the pipe
//    was full); >= 4; packet conservation in the first round of Recovery, cwnd restored on
//    exit.
//  * Long-term (policer) sampling: after a loss, intervals of 4..16 rounds with >= 20 % loss;
//    two consecutive intervals with bw within 1/8 (or 4 kbit/s) -> use their average (lt_bw)
//    at gain 1 for 48 rounds.
//
// Deviations (docs/sim/tcp.md): stamps in ns instead of jiffies; the random start phase comes
// from a per-flow seed (deterministic runs); no idle restart (CA_EVENT_TX_START) and no undo
// (the sender models neither); is_ack_delayed is never set.

#include <algorithm>
#include <array>
#include <cstdint>

#include "nicsim/core/time.h"
#include "nicsim/sim/tcp/congestion_control.h"
#include "nicsim/sim/tcp/delivery_rate.h"

namespace nicsim::sim::tcp {

class Bbr {
 public:
  enum class Mode : uint8_t { kStartup, kDrain, kProbeBw, kProbeRtt };

  static constexpr int kBwScale = 24;
  static constexpr uint64_t kBwUnit = uint64_t{1} << kBwScale;
  static constexpr int kBbrScale = 8;
  static constexpr uint32_t kBbrUnit = 1u << kBbrScale;
  static constexpr uint32_t kHighGain = kBbrUnit * 2885 / 1000 + 1;  // 2/ln(2): 739
  static constexpr uint32_t kDrainGain = kBbrUnit * 1000 / 2885;     // 1/2.885: 88
  static constexpr uint32_t kCwndGain = kBbrUnit * 2;
  static constexpr int kCycleLen = 8;
  static constexpr std::array<uint32_t, kCycleLen> kPacingGain = {
      kBbrUnit * 5 / 4, kBbrUnit * 3 / 4, kBbrUnit, kBbrUnit,
      kBbrUnit,         kBbrUnit,         kBbrUnit, kBbrUnit};
  static constexpr uint32_t kCycleRand = 7;
  static constexpr uint32_t kBwRtts = kCycleLen + 2;  // max-bw filter window, rounds
  static constexpr Duration kMinRttWindow = Duration::s(10);
  static constexpr Duration kProbeRttTime = Duration::ms(200);
  static constexpr uint64_t kMinTsoRateBps = 1'200'000;  // bits/s: below it, 1-segment TSO
  static constexpr uint32_t kPacingMarginPercent = 1;
  static constexpr uint32_t kCwndMinTarget = 4;
  static constexpr uint32_t kFullBwThresh = kBbrUnit * 5 / 4;
  static constexpr uint32_t kFullBwCnt = 3;
  static constexpr uint32_t kLtIntervalMinRtts = 4;
  static constexpr uint32_t kLtLossThresh = 50;  // lost/delivered >= 50/256 (~20 %)
  static constexpr uint32_t kLtBwRatio = kBbrUnit / 8;
  static constexpr uint32_t kLtBwDiff = 4000 / 8;  // bytes/s
  static constexpr uint32_t kLtBwMaxRtts = 48;
  static constexpr uint32_t kExtraAckedGain = kBbrUnit;
  static constexpr uint32_t kExtraAckedWinRtts = 5;
  static constexpr uint32_t kAckEpochAckedResetThresh = 1u << 20;
  static constexpr uint32_t kExtraAckedMaxUs = 100'000;
  static constexpr uint32_t kInitCwnd = 10;  // TCP_INIT_CWND: cwnd cap without an RTT sample
  static constexpr uint32_t kNoMinRtt = ~0u;

  struct Config {
    uint32_t mss = 1448;
    uint32_t pacing_shift = 10;      // sk_pacing_shift (TSO goal)
    uint64_t gso_max_bytes = 65536;  // GSO_MAX_SIZE (bbr_tso_segs_goal ignores the driver's)
    uint64_t seed = 0;               // the random start phase of gain cycling
  };
  // What BBR reads of the connection (tcp_sock), taken after the ACK was processed.
  struct Conn {
    Time now;                // tcp_mstamp / tcp_clock_cache
    Time wstamp;             // tcp_wstamp_ns: earliest departure of the next skb
    uint32_t in_flight = 0;  // tcp_packets_in_flight
    CaState ca_state = CaState::kOpen;
    uint64_t delivered = 0;  // tp->delivered
    Time delivered_time;     // tp->delivered_mstamp
    uint64_t lost = 0;       // tp->lost
    Duration srtt;           // zero = no sample
    Duration min_rtt;        // tcp_min_rtt; zero = none
  };
  // The windowed max filter of lib/win_minmax.c (three samples: best, 2nd and 3rd best in
  // successive sub-windows).
  struct MinMax {
    struct Sample {
      uint32_t t = 0;
      uint32_t v = 0;
    };
    std::array<Sample, 3> s{};
    uint32_t get() const { return s[0].v; }
    uint32_t reset(uint32_t t, uint32_t v);
    uint32_t running_max(uint32_t win, uint32_t t, uint32_t v);

   private:
    uint32_t subwin_update(uint32_t win, const Sample& val);
  };

  explicit Bbr(const Config& c);

  // bbr_init: ssthresh = infinite, pacing at high_gain x cwnd / srtt, STARTUP.
  void init(Window& w, const Conn& c);
  // bbr_main (cong_control): update the model from the ACK's sample, set pacing rate and cwnd.
  // In PROBE_RTT it marks the delivery-rate estimator app-limited.
  void on_ack(const RateSample& rs, const Conn& c, Window& w, DeliveryRate& rate);
  // bbr_ssthresh: entering a cwnd reduction (Recovery, CWR, Loss) saves cwnd; ssthresh unchanged.
  uint32_t ssthresh(const Window& w);
  // bbr_set_state(TCP_CA_Loss) after an RTO.
  void on_loss_state(const Conn& c);

  uint64_t pacing_rate() const { return pacing_rate_; }  // bytes/s (sk_pacing_rate)
  uint32_t min_tso_segs() const;                         // bbr_min_tso_segs
  uint32_t tso_segs_goal() const;                        // bbr_tso_segs_goal

  // --- introspection (tests, traces; tcp_bbr_info) ---
  Mode mode() const { return mode_; }
  uint32_t pacing_gain() const { return pacing_gain_; }
  uint32_t cwnd_gain() const { return cwnd_gain_; }
  uint32_t max_bw() const { return bw_.get(); }  // packets/us << 24
  uint32_t bw() const { return lt_use_bw_ ? lt_bw_ : max_bw(); }
  uint64_t bw_bytes_per_sec() const;
  uint32_t min_rtt_us() const { return min_rtt_us_; }
  bool full_bw_reached() const { return full_bw_reached_; }
  uint32_t full_bw_cnt() const { return full_bw_cnt_; }
  uint32_t cycle_idx() const { return cycle_idx_; }
  uint32_t round_count() const { return rtt_cnt_; }
  bool round_start() const { return round_start_; }
  bool lt_use_bw() const { return lt_use_bw_; }
  uint32_t lt_bw() const { return lt_bw_; }
  bool packet_conservation() const { return packet_conservation_; }
  uint32_t prior_cwnd() const { return prior_cwnd_; }
  uint32_t extra_acked() const { return std::max(extra_acked_[0], extra_acked_[1]); }
  // BDP-based inflight target at `gain` (bbr_inflight: bdp + quantization budget).
  uint32_t inflight(uint32_t bw, uint32_t gain) const;
  uint32_t bdp(uint32_t bw, uint32_t gain) const;

 private:
  uint64_t rate_bytes_per_sec(uint64_t rate, uint32_t gain) const;
  void init_pacing_rate_from_rtt(const Conn& c, uint32_t cwnd);
  void set_pacing_rate(const Conn& c, uint32_t cwnd, uint32_t bw, uint32_t gain);
  void save_cwnd(uint32_t cwnd);
  uint32_t quantization_budget(uint32_t cwnd) const;
  uint32_t packets_in_net_at_edt(const Conn& c, uint32_t inflight_now) const;
  uint32_t ack_aggregation_cwnd() const;
  bool set_cwnd_to_recover_or_restore(const RateSample& rs, const Conn& c, uint32_t acked,
                                      uint32_t cwnd, uint32_t& new_cwnd);
  void set_cwnd(const RateSample& rs, const Conn& c, uint32_t acked, uint32_t bw, uint32_t gain,
                Window& w);
  bool is_next_cycle_phase(const RateSample& rs, const Conn& c) const;
  void advance_cycle_phase(const Conn& c);
  void reset_probe_bw_mode(const Conn& c);
  void reset_mode(const Conn& c);
  void reset_lt_bw_sampling_interval(const Conn& c);
  void reset_lt_bw_sampling(const Conn& c);
  void lt_bw_interval_done(uint32_t bw, const Conn& c);
  void lt_bw_sampling(const RateSample& rs, const Conn& c);
  void update_bw(const RateSample& rs, const Conn& c);
  void update_ack_aggregation(const RateSample& rs, const Conn& c, uint32_t cwnd);
  void check_full_bw_reached(const RateSample& rs);
  void check_drain(const Conn& c, Window& w);
  void check_probe_rtt_done(const Conn& c, Window& w);
  void update_min_rtt(const RateSample& rs, const Conn& c, Window& w, DeliveryRate& rate);
  void update_gains();
  uint32_t random_cycle_offset();
  static uint32_t us_between(Time later, Time earlier);

  Config cfg_;
  uint64_t rng_;
  uint64_t pacing_rate_ = 0;  // bytes/s

  uint32_t min_rtt_us_ = kNoMinRtt;
  Time min_rtt_stamp_;
  Time probe_rtt_done_stamp_;
  bool probe_rtt_done_armed_ = false;
  MinMax bw_;
  uint32_t rtt_cnt_ = 0;
  uint64_t next_rtt_delivered_ = 0;
  Time cycle_mstamp_;
  Mode mode_ = Mode::kStartup;
  CaState prev_ca_state_ = CaState::kOpen;
  bool packet_conservation_ = false;
  bool round_start_ = false;
  bool idle_restart_ = false;
  bool probe_rtt_round_done_ = false;
  bool lt_is_sampling_ = false;
  uint32_t lt_rtt_cnt_ = 0;
  bool lt_use_bw_ = false;
  uint32_t lt_bw_ = 0;
  uint64_t lt_last_delivered_ = 0;
  Time lt_last_stamp_;
  uint64_t lt_last_lost_ = 0;
  uint32_t pacing_gain_ = kHighGain;
  uint32_t cwnd_gain_ = kHighGain;
  bool full_bw_reached_ = false;
  uint32_t full_bw_cnt_ = 0;
  uint32_t cycle_idx_ = 0;
  bool has_seen_rtt_ = false;
  uint32_t prior_cwnd_ = 0;
  uint32_t full_bw_ = 0;
  Time ack_epoch_mstamp_;
  std::array<uint32_t, 2> extra_acked_{};
  uint32_t ack_epoch_acked_ = 0;
  uint32_t extra_acked_win_rtts_ = 0;
  uint32_t extra_acked_win_idx_ = 0;
};

}  // namespace nicsim::sim::tcp
