#pragma once
// TcpSender — the sending half of a TCP connection carrying a bulk transfer (iperf3 client):
// an infinite or N-byte source, congestion control, SACK loss recovery, RTO, TCP Small Queues,
// GSO autosizing and optional pacing. A deterministic state machine over `Time now`: no clock,
// no I/O, no randomness.
//
// Behaviour follows the RFCs named below and Linux's tcp_output.c / tcp_input.c /
// tcp_timer.c where the two differ in ways that shape throughput and queueing:
//  * Handshake: connect() sends a SYN (1 s initial RTO, RFC 6298 (2.1), doubled per retry);
//    the SYN-ACK gives the first RTT sample unless the SYN was retransmitted (Karn), in which
//    case the initial window is 1 segment (RFC 5681 §3.1) and the RTO falls back to 3 s
//    (RFC 6298 (5.7)). The handshake's final ACK is sent, then data.
//  * Congestion control: CongestionControl (NewReno or CUBIC), IW 10 (RFC 6928). cwnd grows
//    only on ACKs that advance snd_una while the flow is cwnd-limited (Linux
//    tcp_is_cwnd_limited: cwnd-limited in the last window, or in slow start cwnd < 2 ×
//    max_packets_out), so TSQ-, window- or application-limited flows do not inflate cwnd.
//  * Loss recovery (Linux tcp_fastretrans_alert states Open/Disorder/CWR/Recovery/Loss):
//    with SACK, RFC 6675 IsLost marks (DupThresh = Params::reordering), pipe =
//    Scoreboard::in_flight(), retransmissions first (NextSeg rule 1), then new data; recovery
//    is entered when a segment is lost (equivalently ≥ DupThresh SACKed) and ends when
//    snd_una ≥ the recovery point, cwnd = ssthresh. cwnd during recovery follows PRR-SSRB
//    (RFC 6937, Linux since 3.2) or, with prr = false, RFC 6675 (cwnd = ssthresh at entry,
//    the first retransmission forced). Without SACK: duplicate ACKs are counted as Linux's
//    emulated sacked_out, fast retransmit after DupThresh dupacks, RFC 6582 partial ACKs
//    retransmit the next hole. Retransmissions of consecutive lost segments go out as one GSO
//    unit (Linux __tcp_retransmit_skb). iperf3's "Retr" is Stats::retransmits (segments,
//    tcpi_total_retrans).
//  * RTO (RFC 6298 via RttEstimator, Karn's rule; RTT from the oldest newly acked
//    never-retransmitted segment, else from newly SACKed ones, else from the timestamp echo —
//    Linux tcp_ack_update_rtt): restarted on every ACK of new data, on expiry (tcp_enter_loss)
//    ssthresh is reduced once per episode, every un-SACKed segment is marked lost, cwnd = 1,
//    the timer backs off, and lost segments are resent in slow start.
//  * ECN (RFC 3168, optional): ECT(0) (or ECT(1), Params::ect1) on new data, ECE → CWR state
//    (cwnd reduction once per window, CWR flag on the next new segment). DCTCP (dctcp.h)
//    sizes that reduction by its alpha; Prague (prague.h) asks for AccECN in the SYN and
//    counts the CE marks each ACK reports. A qdisc drop or congestion notification of our
//    own packet (on_local_drop / on_local_congestion) also enters CWR (Linux tcp_transmit_skb
//    → tcp_enter_cwr on NET_XMIT_DROP/NET_XMIT_CN); a dropped unit is un-sent (it stays at
//    the head of the unsent data, as when tcp_write_xmit stops at a failed transmit).
//  * TCP Small Queues (tcp_small_queue_check, docs/mechanisms §2.7, §7.1, §10): bytes handed
//    to the host and not yet released by TX completion (on_tx_released) are "below the
//    socket"; nothing more is handed down while they exceed
//      limit = min(limit_output_bytes, max(2 × truesize of the unit to send,
//                                          pacing_rate >> pacing_shift)),
//    doubled for retransmissions. truesize ≈ payload + skb_truesize_overhead.
//  * GSO/TSO autosizing (tcp_tso_autosize): a unit carries up to
//      max(min(pacing_rate >> pacing_shift, gso_max_size − 1 − MAX_TCP_HEADER) / mss,
//          min_tso_segs) segments, at most gso_max_segs (1 with gso off), further limited by
//    cwnd, the peer's window and the data left. No TSO deferral (tcp_tso_should_defer).
//  * Pacing rate (tcp_update_pacing_rate) = ratio × mss × max(cwnd, packets_out) / SRTT with
//    ratio pacing_ss_ratio% while cwnd < ssthresh/2, else pacing_ca_ratio%; used by TSQ and
//    autosizing always, and to space units when Params::pacing (internal pacing, EDT: each
//    unit's skb_len at the pacing rate; the first 10 data segments unpaced).
//  * Send buffer: at most wmem payload bytes unacknowledged. Peer window: only whole segments
//    that fit are sent; with nothing in flight and no room, a zero-window probe (seq =
//    snd_una − 1) is sent on the persist timer (RTO-based, backed off).
//
// Host contract. After every call (connect, on_segment, on_tx_released, on_local_drop,
// advance) drain the output (has_output / pop_output) and re-read next_event(); call
// advance(now) when now >= next_event(). Hand each popped segment to the NIC at once; if the
// qdisc refuses it, call on_local_drop(seg, now) before popping the next one (that returns
// the segment's truesize; do not also release it). For every other data segment the host
// must eventually return seg.truesize through on_tx_released(bytes, now) — when the NIC's TX
// completion frees it, and also when anything below the socket drops it (kfree_skb runs the
// same destructor); a GSO unit may be returned in per-segment shares (gso_segment() splits
// truesize). A Packet can point at its Segment through Packet::meta; the receiving host
// rebuilds each frame's segment as gso_segment(unit, packet.gso_index).
//
// Deviations (docs/sim/tcp.md): 64-bit sequence numbers starting at 0; no Nagle, TSO
// deferral, TLP, RACK, F-RTO, D-SACK or undo; no slow-start-after-idle / cwnd validation
// decay; one connection direction (the peer sends only ACKs); send buffer counted in payload.

#include <cstdint>
#include <optional>
#include <vector>

#include "nicsim/core/time.h"
#include "nicsim/sim/tcp/bbr.h"
#include "nicsim/sim/tcp/congestion_control.h"
#include "nicsim/sim/tcp/dctcp.h"
#include "nicsim/sim/tcp/delivery_rate.h"
#include "nicsim/sim/tcp/params.h"
#include "nicsim/sim/tcp/prague.h"
#include "nicsim/sim/tcp/rtt_estimator.h"
#include "nicsim/sim/tcp/scoreboard.h"
#include "nicsim/sim/tcp/segment.h"

namespace nicsim::sim::tcp {

class TcpSender {
 public:
  enum class State : uint8_t { kClosed, kSynSent, kEstablished, kDone };

  struct Stats {
    uint64_t units_sent = 0;     // data units handed to the host (GSO super-packets)
    uint64_t segments_sent = 0;  // MSS segments in them, retransmissions included
    uint64_t bytes_sent = 0;     // payload bytes handed down, retransmissions included
    uint64_t retransmits = 0;    // segments retransmitted (iperf3 "Retr")
    uint64_t retransmitted_bytes = 0;
    uint64_t rto_count = 0;  // retransmission timeouts (data)
    uint64_t syn_retransmits = 0;
    uint64_t fast_recoveries = 0;  // entries into Recovery
    uint64_t cwr_events = 0;       // entries into CWR (ECN echo, local drop/congestion)
    uint64_t local_drops = 0;      // units the qdisc refused (on_local_drop)
    uint64_t acks_received = 0;
    uint64_t dupacks = 0;          // duplicate ACKs (RFC 5681 definition)
    uint64_t sacked_segments = 0;  // segments newly SACKed
    uint64_t ece_received = 0;     // ACKs with ECE (RFC 3168 / DCTCP) or a new AccECN CE count
    uint64_t delivered_ce = 0;     // tp->delivered_ce: segments the peer reported CE-marked
    uint64_t rtt_samples = 0;
    uint64_t window_probes = 0;   // zero-window probes sent
    uint64_t tsq_throttles = 0;   // times TSQ stopped the sender
    Duration tsq_throttled_time;  // total time spent throttled by TSQ
  };

  // A cheap snapshot for per-interval reports (iperf3 Interval/Transfer/Bitrate/Retr/Cwnd):
  // cumulative counters, so an interval is the difference of two samples.
  struct Sample {
    Time at;
    uint64_t bytes_acked = 0;     // payload acknowledged (goodput)
    uint64_t bytes_sent_new = 0;  // new payload handed to the host (snd_nxt − 1)
    uint64_t retransmits = 0;
    uint32_t cwnd = 0;  // segments (iperf3 Cwnd = cwnd × mss)
    uint32_t ssthresh = 0;
    uint32_t mss = 0;
    uint32_t packets_out = 0;
    uint32_t in_flight = 0;
    Duration srtt;
    Duration rttvar;
    Duration min_rtt;
    Duration rto;
    uint64_t bytes_below_socket = 0;
    uint64_t pacing_rate_bytes_per_sec = 0;  // 0 = not yet known (no RTT sample)
    Duration tsq_throttled_time;
    CaState ca_state = CaState::kOpen;
    uint64_t cwnd_bytes() const { return static_cast<uint64_t>(cwnd) * mss; }
  };

  TcpSender() : TcpSender(Params{}) {}
  explicit TcpSender(const Params& params);

  // --- inputs ---
  // sends the SYN
  void connect(Time now) {
    do_connect(now);
    refresh();
  }
  // SYN-ACK and ACKs from the peer
  void on_segment(const Segment& seg, Time now) {
    do_segment(seg, now);
    refresh();
  }
  // TSQ: truesize freed below the socket (TX completion, or a drop below the socket)
  void on_tx_released(uint64_t bytes, Time now) {
    do_tx_released(bytes, now);
    refresh();
  }
  // the qdisc refused `seg` (NET_XMIT_DROP)
  void on_local_drop(const Segment& seg, Time now) {
    do_local_drop(seg, now);
    refresh();
  }
  // the qdisc reported NET_XMIT_CN
  void on_local_congestion(Time now) {
    do_local_congestion(now);
    refresh();
  }
  // The application stops writing (the end of iperf3 -t / netperf -l, flent's load phase): no
  // new data after what TCP already sent; data in flight is still delivered, retransmitted and
  // acknowledged. Deviation: a real sender would also flush the unsent part of its socket
  // buffer; here the send buffer is an unacknowledged-bytes limit, not an autotuned sndbuf, so
  // that part is dropped. No FIN: the connection stays open and idle.
  void stop_writing(Time now) {
    do_stop_writing(now);
    refresh();
  }
  // The earliest timer (RTO/SYN, persist, pacing); nullopt when none is armed.
  std::optional<Time> next_event() const { return next_event_; }
  // Runs the timers due at `now`.
  void advance(Time now) {
    do_advance(now);
    refresh();
  }

  // --- output ---
  bool has_output() const { return out_head_ < out_.size(); }
  size_t output_size() const { return out_.size() - out_head_; }
  Segment pop_output() {
    Segment s = out_[out_head_++];
    if (out_head_ == out_.size()) {
      out_.clear();
      out_head_ = 0;
    }
    return s;
  }

  // --- state ---
  State state() const { return state_; }
  bool finished() const { return state_ == State::kDone; }
  CaState ca_state() const { return ca_state_; }
  uint64_t snd_una() const { return snd_una_; }
  uint64_t snd_nxt() const { return snd_nxt_; }
  uint32_t snd_wnd() const { return snd_wnd_; }
  uint32_t cwnd() const { return win_.cwnd; }
  uint32_t ssthresh() const { return win_.ssthresh; }
  uint64_t high_seq() const { return high_seq_; }
  uint64_t bytes_below_socket() const { return bytes_below_; }
  bool tsq_throttled() const { return tsq_throttled_; }
  uint64_t pacing_rate_bytes_per_sec() const {
    return pacing_rate_ == kUnlimited ? 0 : pacing_rate_;
  }
  uint32_t tso_segs_goal() const;
  uint64_t tsq_limit(uint32_t truesize, bool retransmit) const;
  bool is_cwnd_limited() const;
  const Scoreboard& scoreboard() const { return sb_; }
  const RttEstimator& rtt() const { return rtt_; }
  const CongestionControl& congestion_control() const { return cc_; }
  const Bbr* bbr() const { return bbr_ ? &*bbr_ : nullptr; }              // nullptr unless cc = bbr
  const Dctcp* dctcp() const { return dctcp_ ? &*dctcp_ : nullptr; }      // cc = dctcp
  const Prague* prague() const { return prague_ ? &*prague_ : nullptr; }  // cc = prague
  bool ecn_ok() const { return ecn_ok_; }                                 // ECN negotiated
  bool accecn_ok() const { return accecn_ok_; }      // ... with AccECN feedback
  uint64_t delivered() const { return delivered_; }  // tp->delivered (segments)
  const DeliveryRate& delivery_rate() const { return rate_; }
  uint64_t lost_total() const { return lost_total_; }  // tp->lost: segments ever marked lost
  // The earliest departure time of the next unit (tcp_wstamp_ns) when pacing.
  Time next_send_time() const { return next_send_time_; }
  const Params& params() const { return params_; }
  const Stats& stats() const { return stats_; }
  Sample sample(Time now) const;
  std::optional<Time> rto_deadline() const { return rto_deadline_; }
  Time completion_time() const { return completed_at_; }

 private:
  static constexpr uint64_t kUnlimited = ~0ull;

  void do_connect(Time now);
  void do_segment(const Segment& seg, Time now);
  void do_tx_released(uint64_t bytes, Time now);
  void do_local_drop(const Segment& seg, Time now);
  void do_local_congestion(Time now);
  void do_advance(Time now);
  void do_stop_writing(Time now);
  std::optional<Time> compute_next_event() const;
  void refresh() { next_event_ = compute_next_event(); }
  void on_syn_ack(const Segment& seg, Time now);
  void on_ack(const Segment& seg, Time now);
  void update_ca_state(bool advanced, bool ece, Time now);
  void enter_recovery(Time now);
  void enter_cwr(Time now);
  void init_cwnd_reduction();
  void cwnd_reduction(uint32_t delivered);
  void end_cwnd_reduction();
  void on_rto(Time now);
  void on_probe_timer(Time now);
  void write_xmit(Time now);
  void emit_retransmit(uint64_t first, uint32_t segs, Time now);
  void emit_new(uint32_t len, uint32_t segs, bool fin, Time now);
  void emit_control(uint8_t flags, uint64_t seq, Time now);
  void send_window_probe(Time now);
  void advance_pacing(Segment& s, Time now);
  // Internal pacing (tcp_needs_internal_pacing: SK_PACING_NEEDED, i.e. tcp.pacing or BBR,
  // and the host's qdisc is not fq).
  bool internal_pacing() const { return (params_.pacing || bbr_ || prague_) && !params_.fq_pacing; }
  // Departure times are tracked (sk_pacing_status != SK_PACING_NONE).
  bool paced() const { return params_.pacing || bbr_ || prague_ || params_.fq_pacing; }
  // A cong_control module (BBR, Prague) sets cwnd itself: no PRR, no cwnd = ssthresh at the
  // end of a reduction.
  bool cong_control() const { return bbr_ || prague_; }
  // tcp_congestion_ops.ssthresh of the flow's congestion control.
  uint32_t ca_ssthresh();
  // The ECN feedback of one ACK: CE marks newly reported (AccECN) or the ECE flag.
  bool ecn_echo(const Segment& seg, uint32_t& ce_delta);
  Prague::Ack prague_ack(uint32_t acked_sacked, uint32_t ce_delta) const;
  Bbr::Conn bbr_conn(Time now) const;
  RateTx rate_on_sent(Time now) { return bbr_ ? rate_.on_sent(now, sb_.packets_out()) : RateTx{}; }
  void cwnd_validate(bool is_cwnd_limited);
  void update_pacing_rate();
  void unsend_new_data(uint64_t from_seq);
  uint32_t truesize_of(uint32_t payload) const {
    return payload + static_cast<uint32_t>(params_.skb_truesize_overhead);
  }
  uint32_t ts_now(Time now) const {
    return static_cast<uint32_t>(now.ns_since_epoch() / 1'000'000) + 1;
  }
  Segment make_segment(Time now) const;
  void push_output(const Segment& s) { out_.push_back(s); }
  bool has_data_to_send() const { return snd_nxt_ < write_seq_; }
  bool sack_ok() const { return sack_ok_; }

  Params params_;
  uint32_t mss_;
  CongestionControl cc_;
  RttEstimator rtt_;
  Scoreboard sb_;
  Window win_;
  std::optional<Bbr> bbr_;        // cc = bbr (cong_control: it owns cwnd and the pacing rate)
  std::optional<Dctcp> dctcp_;    // cc = dctcp (alpha; Reno increase through cc_)
  std::optional<Prague> prague_;  // cc = prague (cong_control)
  uint64_t delivered_ = 0;        // tp->delivered
  uint64_t delivered_ce_ = 0;     // tp->delivered_ce
  uint32_t peer_ce_packets_ = 0;  // the last AccECN CE count from the peer
  DeliveryRate rate_;             // tcp_rate.c; fed only with BBR (its only reader)
  uint64_t lost_total_ = 0;

  State state_ = State::kClosed;
  CaState ca_state_ = CaState::kOpen;
  bool sack_ok_ = false;
  bool ts_ok_ = false;
  bool ecn_ok_ = false;
  bool accecn_ok_ = false;
  bool cwr_pending_ = false;

  uint64_t snd_una_ = 0;
  uint64_t snd_nxt_ = 0;
  uint64_t write_seq_ = 0;  // one past the last data byte (kUnlimited for an infinite source)
  bool fin_sent_ = false;
  bool stop_writing_ = false;  // stop_writing() before the connection was established
  uint32_t snd_wnd_ = 0;
  uint32_t max_window_ = 0;   // largest window the peer offered (tp->max_window)
  uint64_t pushed_seq_ = 0;   // end of the last unit sent with PSH (tp->pushed_seq)
  uint64_t peer_ack_ = 0;     // what our segments acknowledge (peer ISN + 1)
  uint32_t ts_recent_ = 0;    // peer's last TSval (echoed)
  uint32_t own_wnd_ = 65535;  // window we advertise (the peer sends no data)

  // Loss recovery / cwnd reduction.
  uint64_t high_seq_ = 0;
  uint32_t prior_cwnd_ = 0;
  uint32_t recover_fs_ = 0;
  uint32_t prr_delivered_ = 0;
  uint32_t prr_out_ = 0;
  bool force_retransmit_ = false;
  uint32_t consecutive_rtos_ = 0;

  // tcp_cwnd_validate.
  uint32_t max_packets_out_ = 0;
  uint64_t max_packets_seq_ = 0;
  bool is_cwnd_limited_ = false;

  // Timers.
  std::optional<Time> rto_deadline_;
  std::optional<Time> probe_deadline_;
  uint32_t probes_out_ = 0;
  Time syn_sent_at_;
  bool syn_retransmitted_ = false;

  // Pacing / TSQ.
  uint64_t pacing_rate_ = kUnlimited;  // bytes per second
  Time next_send_time_;
  bool pacing_blocked_ = false;
  uint64_t data_segs_out_ = 0;
  uint64_t bytes_below_ = 0;
  bool tsq_throttled_ = false;
  Time throttled_since_;

  Time completed_at_;
  std::optional<Time> next_event_;
  Stats stats_;
  std::vector<Segment> out_;
  size_t out_head_ = 0;
};

}  // namespace nicsim::sim::tcp
