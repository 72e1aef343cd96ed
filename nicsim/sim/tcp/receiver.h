#pragma once
// TcpReceiver — the receiving half of a TCP connection (iperf3 server): reassembly, receive
// buffer and advertised window, ACK generation (delayed ACK, quick ACK, SACK, timestamps,
// ECN echo), drained by an application that reads instantly or at a fixed rate. A
// deterministic state machine over `Time now`.
//
// Behaviour follows Linux tcp_input.c / tcp_output.c:
//  * Handshake: a SYN is answered with a SYN-ACK (options mirrored; ECN accepted when the SYN
//    asks for it, tcp_ecn = 2), repeated after 1 s, 2 s, … until the handshake ACK or the
//    first data segment arrives.
//  * ACK policy (__tcp_ack_snd_check): ACK at once when more than one full-sized segment
//    (rcv_mss) has arrived since the last ACK and the window would not shrink, in quick-ACK
//    mode, while out-of-order data is queued, when a hole is filled (RFC 5681 §4.2), for data
//    below rcv_nxt or outside the window (then quick-ACK mode again, tcp_enter_quickack_mode),
//    on a FIN, and for a CE mark that starts an ECN echo; otherwise the delayed-ACK timer
//    (Params::delayed_ack = TCP_DELACK_MIN 40 ms; the ato adaptation is not modelled).
//    Quick-ACK mode: at the first data segment (tcp_incr_quickack), min(max_quickacks,
//    rcv_wnd / (2·rcv_mss)) ACKs are sent without delay; every ACK uses one. It ends when the
//    buffer is more than half full.
//  * SACK (RFC 2018): up to 3 blocks with timestamps (4 without), the block holding the most
//    recent arrival first, then the others by recency (Linux selective_acks). No D-SACK.
//  * Timestamps (RFC 7323): TS.Recent is updated from segments with SEG.SEQ <= Last.ACK.sent.
//  * ECN: RFC 3168 (CE sets ECE on every ACK until a segment with CWR arrives); DCTCP (RFC 8257
//    §3.2: ECE mirrors the last segment's CE, an ACK at every change of it, the owed delayed
//    ACK first); AccECN when the SYN asks for it (a CE packet count on every ACK, an ACK at
//    every change of CE). Params::ecn_feedback says whether the receiving host runs DCTCP.
//  * Window (__tcp_select_window with window scaling, tcp_select_window): free space =
//    win_from_space(rcvbuf − queued) with win_from_space(x) = x − x/2^adv_win_scale, capped
//    by rcv_ssthresh (starts at init_rcv_wnd·mss, +2·rcv_mss per data segment,
//    tcp_grow_window); zero when the buffer is more than half full and the free space is
//    below one MSS or 1/16 of the buffer; the right edge never moves left.
//  * Autotuning (tcp_rcv_space_adjust, Params::moderate_rcvbuf): once per receiver RTT
//    (timestamp echo, else time to receive one window), if the application read more than in
//    the previous RTT, rcvbuf grows so the window is 2·copied + 16·mss (plus the growth term),
//    at most rmem_max.
//  * Application: reads everything at once (app_read_rate 0) or at app_read_rate; a read that
//    at least doubles the window sends a window update (tcp_cleanup_rbuf).
// Buffer memory is counted in payload bytes (Linux counts skb truesize; adv_win_scale's
// halving stands for that overhead).

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "nicsim/core/time.h"
#include "nicsim/sim/tcp/params.h"
#include "nicsim/sim/tcp/segment.h"

namespace nicsim::sim::tcp {

class TcpReceiver {
 public:
  enum class State : uint8_t { kListen, kSynReceived, kEstablished };

  struct Stats {
    uint64_t segments_received = 0;  // data segments (as handed in by the host)
    uint64_t bytes_received = 0;     // payload bytes accepted in order (goodput)
    uint64_t bytes_read = 0;         // payload bytes the application read
    uint64_t duplicate_bytes = 0;    // payload that arrived again
    uint64_t ooo_segments = 0;       // segments queued out of order
    uint64_t acks_sent = 0;          // all ACKs incl. SYN-ACKs and window updates
    uint64_t delayed_acks = 0;       // ACKs sent by the delayed-ACK timer
    uint64_t quick_acks = 0;         // ACKs sent in quick-ACK mode
    uint64_t window_updates = 0;     // ACKs sent because the application freed space
    uint64_t dupacks_sent = 0;       // ACKs for out-of-order, old or out-of-window data
    uint64_t window_drops = 0;       // segments starting beyond the advertised window
    uint64_t buffer_drops = 0;       // segments that did not fit the receive buffer
    uint64_t ce_received = 0;        // data segments with CE
    uint64_t syn_acks_sent = 0;
    uint64_t rcvbuf_grows = 0;  // autotuning steps
  };

  struct Sample {
    Time at;
    uint64_t bytes_received = 0;
    uint64_t bytes_read = 0;
    uint32_t window = 0;  // last advertised window
    uint64_t rcvbuf = 0;
    uint64_t queued = 0;  // in-order bytes not yet read
    uint64_t ooo_bytes = 0;
  };

  TcpReceiver() : TcpReceiver(Params{}) {}
  explicit TcpReceiver(const Params& params);

  void on_segment(const Segment& seg, Time now) {
    do_segment(seg, now);
    refresh();
  }
  // The earliest timer (delayed ACK, SYN-ACK, application read wake-up), nullopt if none.
  std::optional<Time> next_event() const { return next_event_; }
  void advance(Time now) {
    do_advance(now);
    refresh();
  }

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

  State state() const { return state_; }
  uint64_t rcv_nxt() const { return rcv_nxt_; }
  bool fin_received() const { return fin_received_; }
  uint32_t rcv_wnd() const { return rcv_wnd_; }  // last advertised window
  uint64_t rcvbuf() const { return rcvbuf_; }
  uint64_t window_clamp() const { return window_clamp_; }
  uint64_t rcv_ssthresh() const { return rcv_ssthresh_; }
  uint64_t queued() const { return queued_; }
  uint64_t ooo_bytes() const { return ooo_bytes_; }
  const std::vector<SackBlock>& ooo() const { return ooo_; }
  uint32_t quick_acks_left() const { return quick_; }
  std::optional<Time> delack_deadline() const { return delack_deadline_; }
  EcnFeedback ecn_feedback() const { return feedback_; }  // negotiated at the SYN
  // What __tcp_select_window would offer now (before the never-shrink rule).
  uint32_t select_window_raw() const;
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  Sample sample(Time now) const;

 private:
  void do_segment(const Segment& seg, Time now);
  void do_advance(Time now);
  std::optional<Time> compute_next_event() const;
  void refresh() { next_event_ = compute_next_event(); }
  void on_syn(const Segment& seg, Time now);
  void send_syn_ack(Time now);
  void on_data(const Segment& seg, Time now);
  void send_ack(Time now);
  void on_ecn_field(const Segment& seg, Time now);
  void schedule_delack(Time now);
  void incr_quickack(uint32_t max_quickacks);
  void enter_quickack_mode(uint32_t max_quickacks);
  void insert_ooo(uint64_t start, uint64_t end);
  void pull_ooo();
  void sack_remove();
  void grow_window(uint32_t len);
  void deliver_in_order(uint64_t bytes, Time now);
  void read_app(Time now);
  void rcv_space_adjust(Time now);
  void rcv_rtt_update(Duration sample, bool win_dep);
  void rcv_rtt_measure(const Segment& seg, Time now);
  std::optional<Time> read_wakeup() const;
  bool window_update_due() const;
  uint64_t win_from_space(uint64_t space) const;
  uint64_t space_from_win(uint64_t win) const;
  uint64_t free_space() const;
  uint64_t full_space() const;
  uint32_t ts_now(Time now) const {
    return static_cast<uint32_t>(now.ns_since_epoch() / 1'000'000) + 1;
  }

  Params params_;
  uint32_t mss_;
  State state_ = State::kListen;
  bool sack_ok_ = false;
  bool ts_ok_ = false;
  bool ecn_ok_ = false;
  uint32_t max_sacks_ = kMaxSackBlocks;

  uint64_t rcv_nxt_ = 0;
  uint64_t rcv_wup_ = 0;
  uint32_t rcv_wnd_ = 0;
  uint64_t rcvbuf_ = 0;
  uint64_t window_clamp_ = 0;
  uint64_t rcv_ssthresh_ = 0;
  uint32_t rcv_mss_ = 536;  // TCP_MSS_DEFAULT until measured (tcp_measure_rcv_mss)
  bool fin_received_ = false;
  std::optional<uint64_t> fin_seq_;  // sequence number of a FIN received out of order

  std::vector<SackBlock> ooo_;  // sorted, disjoint out-of-order ranges
  uint64_t ooo_bytes_ = 0;
  std::array<SackBlock, kMaxSackBlocks> sacks_{};  // selective_acks, most recent first
  uint32_t num_sacks_ = 0;

  uint64_t queued_ = 0;  // in-order bytes waiting for the application
  Time last_read_;
  Time wake_floor_;
  bool first_data_seen_ = false;
  uint32_t quick_ = 0;
  std::optional<Time> delack_deadline_;
  std::optional<Time> synack_deadline_;
  Duration synack_timeout_;

  uint32_t ts_recent_ = 0;
  bool ece_pending_ = false;  // TCP_ECN_DEMAND_CWR (classic), the CE state (DCTCP)
  EcnFeedback feedback_ = EcnFeedback::kClassic;  // negotiated at the SYN
  bool ce_state_ = false;                         // DCTCP / AccECN: was the last data segment CE?
  bool ce_changed_ = false;                       // ... and did this segment change it (ACK now)
  uint32_t ce_packets_ = 0;                       // AccECN r.cep

  // Receiver RTT (rcv_rtt_est) and autotuning (rcvq_space).
  Duration rcv_rtt_;  // zero = unknown
  uint32_t rcv_rtt_last_tsecr_ = 0;
  uint64_t rtt_est_seq_ = 0;
  Time rtt_est_time_;
  bool rtt_est_started_ = false;
  uint64_t space_ = 0;
  uint64_t space_seq_ = 0;  // bytes_read at the start of the measurement
  Time space_time_;

  std::optional<Time> next_event_;
  Stats stats_;
  std::vector<Segment> out_;
  size_t out_head_ = 0;
};

}  // namespace nicsim::sim::tcp
