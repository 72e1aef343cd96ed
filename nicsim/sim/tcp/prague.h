#pragma once
// Prague — TCP Prague, the scalable congestion control of L4S (RFC 9331 §4,
// draft-briscoe-iccrg-prague-congestion-control), as the L4S team's net/ipv4/tcp_prague.c
// implements it (github.com/L4STeam/linux; read in the copy google/bbr carries at commit
// 23cbf7e1bc8b, module version 0.6). Behaviour ported, no code copied. Like BBR it is a
// `cong_control` module: on every ACK it sets cwnd and the pacing rate itself (no PRR, no
// tcp_update_pacing_rate; tcp_end_cwnd_reduction leaves cwnd alone; ssthresh() returns the
// current ssthresh).
//
//  * Feedback: AccECN — `ce_delta`, the CE-marked packets newly reported by the ACK
//    (rs->ece_delta); tp->delivered_ce grows by it. ECT(1) on data (TCP_ECN_ECT_1), internal
//    pacing (SK_PACING_NEEDED).
//  * alpha (prague_update_alpha): once per round (snd_una >= next_seq) and only once a CE mark
//    was seen (saw_ce), upscaled_alpha = a − a/16 + 2^20·F with F = CE / delivered over the
//    round (PRAGUE_ALPHA_BITS 20, g = 1/16, stored ×16 so the remainder carries); alpha starts
//    at 1.
//  * cwnd is kept in 2^−20 fractions (cwnd_cnt carry, CWND_UNIT): per ACK (prague_update_cwnd)
//    the segments not CE-marked (acked − ce_delta) grow it — slow start while cwnd < ssthresh,
//    else +acked/cwnd (1 segment per RTT) — unless in loss recovery or not cwnd-limited; the
//    carry moves cwnd by at most one segment per ACK (a decrease also sets ssthresh = cwnd;
//    cwnd ≥ 2). Entering CWR (an ACK reporting CE, once per round, prague_enter_cwr) takes
//    cwnd·alpha/2 (rounded half up) off the carry; entering Recovery or an RTO
//    (prague_enter_loss) takes cwnd/2 + carry/2 and stops growth until the state is Open.
//  * Pacing (prague_update_pacing_rate): mtu × max(cwnd, in flight) / SRTT per second, doubled
//    while cwnd < ssthresh/2 (100 % in congestion avoidance, 200 % in slow start); the GSO
//    burst (prague_tso_segs) is the pacing rate's packets per 2^−12 s (≈ 250 µs), at least
//    min_tso_segs.
//
// Left out (docs/sim/tcp.md "Prague"): RTT independence (prague_rtt_scaling; the module's
// default RTT_CONTROL_RATE scales the additive increase by (RTT/25 ms)² for RTTs below 25 ms
// after 500 rounds — the model behaves as RTT_CONTROL_NONE), classic-ECN-AQM detection and
// fallback (prague_ecn_fallback, off by default), cwnd undo, the fallback to Reno without
// AccECN (tcp::Params refuses prague without ECN).

#include <cstdint>

#include "nicsim/core/time.h"
#include "nicsim/sim/tcp/congestion_control.h"

namespace nicsim::sim::tcp {

class Prague {
 public:
  static constexpr uint32_t kAlphaBits = 20;                 // PRAGUE_ALPHA_BITS
  static constexpr uint64_t kMaxAlpha = 1ull << kAlphaBits;  // alpha = 1
  static constexpr uint32_t kShiftG = 4;                     // PRAGUE_SHIFT_G: g = 1/16
  static constexpr uint32_t kCwndUnit = 20;                  // CWND_UNIT
  static constexpr int64_t kOneCwnd = int64_t{1} << kCwndUnit;
  static constexpr uint32_t kMinCwnd = 2;      // MIN_CWND
  static constexpr uint32_t kBurstShift = 12;  // prague_burst_shift: 1/4096 s

  struct Config {
    uint32_t mtu = 1500;        // tcp_mss_to_mtu(mss): the pacing rate counts whole packets
    uint32_t min_tso_segs = 2;  // tcp_min_tso_segs
  };

  // What one ACK tells the module (rate_sample and tcp_sock fields).
  struct Ack {
    uint32_t acked_sacked = 0;  // segments newly delivered (rs->acked_sacked)
    uint32_t ce_delta = 0;      // of those, reported CE-marked (rs->ece_delta)
    bool cwnd_limited = false;  // tcp_is_cwnd_limited
    uint64_t snd_una = 0;
    uint64_t snd_nxt = 0;
    uint64_t delivered = 0;     // tp->delivered
    uint64_t delivered_ce = 0;  // tp->delivered_ce
    uint32_t in_flight = 0;     // tcp_packets_in_flight
    Duration srtt;              // zero = no sample yet
  };

  Prague() : Prague(Config{}) {}
  explicit Prague(const Config& c) : cfg_(c) {}

  // prague_init (at connection establishment).
  void init(const Window& w, const Ack& now_state);
  // prague_cong_control: cwnd, then alpha once per round, then the pacing rate.
  void on_ack(const Ack& a, Window& w);
  // prague_state
  void enter_cwr(const Window& w);      // -> TCP_CA_CWR
  void enter_loss(const Window& w);     // -> TCP_CA_Recovery, and CA_EVENT_LOSS (RTO)
  void ca_open() { in_loss_ = false; }  // -> TCP_CA_Open
  // prague_ssthresh: ssthresh is left where prague_update_cwnd put it.
  uint32_t ssthresh(const Window& w) const { return w.ssthresh; }

  uint64_t pacing_rate() const { return pacing_rate_; }          // bytes per second; 0 = unknown
  uint32_t tso_segs() const;                                     // prague_tso_segs
  uint64_t alpha() const { return upscaled_alpha_ >> kShiftG; }  // 2^−20 units
  int64_t cwnd_cnt() const { return cwnd_cnt_; }
  bool saw_ce() const { return saw_ce_; }
  bool in_loss() const { return in_loss_; }
  uint64_t rounds() const { return rounds_; }

 private:
  void update_cwnd(const Ack& a, Window& w);
  void update_alpha(const Ack& a);
  void new_round(const Ack& a);
  void update_pacing_rate(const Window& w, const Ack& a);

  Config cfg_;
  uint64_t upscaled_alpha_ = kMaxAlpha << kShiftG;
  int64_t cwnd_cnt_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t old_delivered_ = 0;
  uint64_t old_delivered_ce_ = 0;
  uint64_t rounds_ = 0;
  bool saw_ce_ = false;
  bool in_loss_ = false;
  uint64_t pacing_rate_ = 0;
  uint32_t max_tso_burst_ = 1;
};

}  // namespace nicsim::sim::tcp
