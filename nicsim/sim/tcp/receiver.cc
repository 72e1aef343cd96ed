#include "nicsim/sim/tcp/receiver.h"

#include <algorithm>

namespace nicsim::sim::tcp {

namespace {
constexpr uint32_t kQuickAcksOnCe = 2;      // tcp_ecn_check_ce: tcp_enter_quickack_mode(sk, 2)
constexpr uint64_t kInitCwndForSpace = 10;  // tcp_init_buffer_space: TCP_INIT_CWND · advmss
}  // namespace

TcpReceiver::TcpReceiver(const Params& params)
    : params_(require_valid(params)), mss_(static_cast<uint32_t>(params.mss)) {
  rcvbuf_ = static_cast<uint64_t>(params_.rmem);
  window_clamp_ = win_from_space(rcvbuf_);
  rcv_ssthresh_ =
      std::min<uint64_t>(window_clamp_, static_cast<uint64_t>(params_.init_rcv_wnd) * mss_);
  synack_timeout_ = params_.rto_initial;
  ooo_.reserve(16);
  out_.reserve(16);
}

// ---------------------------------------------------------------------------------------------
// Window arithmetic

uint64_t TcpReceiver::win_from_space(uint64_t space) const {
  if (params_.adv_win_scale == 0) {
    return space;
  }
  return space - (space >> params_.adv_win_scale);
}

uint64_t TcpReceiver::space_from_win(uint64_t win) const {
  if (params_.adv_win_scale == 0) {
    return win;
  }
  const uint64_t k = 1ull << params_.adv_win_scale;
  uint64_t s = (win * k + (k - 2)) / (k - 1);
  while (s > 0 && win_from_space(s - 1) >= win) {
    --s;
  }
  while (win_from_space(s) < win) {
    ++s;
  }
  return s;
}

uint64_t TcpReceiver::full_space() const {
  return std::min(window_clamp_, win_from_space(rcvbuf_));
}

uint64_t TcpReceiver::free_space() const {
  const uint64_t used = std::min(queued_ + ooo_bytes_, rcvbuf_);
  return win_from_space(rcvbuf_ - used);
}

uint32_t TcpReceiver::select_window_raw() const {
  const uint64_t allowed = win_from_space(rcvbuf_);
  const uint64_t full = full_space();
  uint64_t free = free_space();
  const uint64_t mss = std::min<uint64_t>(rcv_mss_, full);
  if (free < full / 2) {
    if (free < (allowed >> 4) || free < mss) {
      return 0;
    }
  }
  free = std::min(free, rcv_ssthresh_);
  return static_cast<uint32_t>(std::min<uint64_t>(free, 0xffffffffu));
}

// ---------------------------------------------------------------------------------------------
// Handshake

void TcpReceiver::do_segment(const Segment& seg, Time now) {
  if (seg.has(kSyn) && !seg.has(kAck)) {
    on_syn(seg, now);
    return;
  }
  if (state_ == State::kListen) {
    return;
  }
  if (state_ == State::kSynReceived) {
    if (!seg.has(kAck) || seg.ack != 1) {
      return;
    }
    state_ = State::kEstablished;
    synack_deadline_.reset();
  }
  on_data(seg, now);
}

void TcpReceiver::on_syn(const Segment& seg, Time now) {
  if (state_ == State::kEstablished) {
    send_ack(now);
    return;
  }
  const bool first = state_ == State::kListen;
  state_ = State::kSynReceived;
  rcv_nxt_ = seg.seq + 1;
  rcv_wup_ = rcv_nxt_;
  sack_ok_ = params_.sack && (seg.options & kOptSackPermitted) != 0;
  ts_ok_ = params_.timestamps && (seg.options & kOptTimestamp) != 0;
  max_sacks_ = ts_ok_ ? kMaxSackBlocksWithTimestamps : kMaxSackBlocks;
  ecn_ok_ = seg.has(kEce) && seg.has(kCwr);
  // An AccECN SYN sets AE, CWR and ECE; the receiver accepts it (as the L4S kernels do).
  feedback_ = !ecn_ok_                                      ? EcnFeedback::kClassic
              : seg.has(kAe)                                ? EcnFeedback::kAccurate
              : params_.ecn_feedback == EcnFeedback::kDctcp ? EcnFeedback::kDctcp
                                                            : EcnFeedback::kClassic;
  if (ts_ok_) {
    ts_recent_ = seg.tsval;
  }
  if (first) {
    // tcp_select_initial_window: min(space, init_rcv_wnd · mss), unscaled in the SYN-ACK.
    rcv_wnd_ = static_cast<uint32_t>(std::min<uint64_t>(
        std::min<uint64_t>(full_space(), static_cast<uint64_t>(params_.init_rcv_wnd) * mss_),
        65535));
    rcv_ssthresh_ = rcv_wnd_;
    space_ = std::min<uint64_t>(rcv_wnd_, kInitCwndForSpace * mss_);
    space_time_ = now;
    last_read_ = now;
  }
  send_syn_ack(now);
  synack_deadline_ = now + synack_timeout_;
}

void TcpReceiver::send_syn_ack(Time now) {
  Segment s;
  s.seq = 0;
  s.ack = rcv_nxt_;
  s.flags = kSyn | kAck;
  if (ecn_ok_) {
    // RFC 3168 §6.1.1: ECE; AccECN's answer to a Not-ECT SYN is (AE, CWR, ECE) = (0, 1, 0).
    s.flags |= feedback_ == EcnFeedback::kAccurate ? kCwr : kEce;
  }
  s.options = kOptMss | kOptWindowScale;
  if (sack_ok_) {
    s.options |= kOptSackPermitted;
  }
  if (ts_ok_) {
    s.options |= kOptTimestamp;
    s.tsval = ts_now(now);
    s.tsecr = ts_recent_;
  }
  s.wnd = rcv_wnd_;
  out_.push_back(s);
  ++stats_.syn_acks_sent;
  ++stats_.acks_sent;
}

// ---------------------------------------------------------------------------------------------
// Data (tcp_data_queue, tcp_event_data_recv, __tcp_ack_snd_check)

void TcpReceiver::on_data(const Segment& seg, Time now) {
  read_app(now);
  if (ts_ok_ && (seg.options & kOptTimestamp) != 0 && seg.seq <= rcv_wup_ &&
      static_cast<int32_t>(seg.tsval - ts_recent_) >= 0) {
    ts_recent_ = seg.tsval;  // RFC 7323 §4.3
  }
  bool ack_now = false;
  if (ecn_ok_ && seg.len > 0) {
    on_ecn_field(seg, now);
  }
  const bool fin = seg.has(kFin);
  if (seg.len == 0 && !fin) {
    if (seg.seq < rcv_nxt_) {
      // A window probe (or an old segment): answer with the current window.
      ++stats_.dupacks_sent;
      send_ack(now);
    }
    return;
  }
  const uint64_t s = seg.seq;
  const uint64_t e = seg.seq + seg.len;
  if (seg.len > 0) {
    ++stats_.segments_received;
    const uint32_t len = seg.gso_size > 0 ? seg.gso_size : seg.len;
    if (len >= rcv_mss_) {
      rcv_mss_ = std::min(len, mss_);  // tcp_measure_rcv_mss
    }
    rcv_rtt_measure(seg, now);
  }
  if (e <= rcv_nxt_ && !(fin && e == rcv_nxt_ && !fin_received_)) {
    // Entirely old: a retransmission we already have. Force an immediate ACK.
    stats_.duplicate_bytes += seg.len;
    enter_quickack_mode(static_cast<uint32_t>(params_.max_quickacks));
    ++stats_.dupacks_sent;
    send_ack(now);
    return;
  }
  const uint64_t right_edge = rcv_wup_ + rcv_wnd_;
  const uint64_t receive_window = right_edge > rcv_nxt_ ? right_edge - rcv_nxt_ : 0;
  if (seg.len > 0 && s >= rcv_nxt_ + receive_window) {
    // Starts beyond the advertised window (or the window is zero): drop, ACK.
    ++stats_.window_drops;
    enter_quickack_mode(static_cast<uint32_t>(params_.max_quickacks));
    ++stats_.dupacks_sent;
    send_ack(now);
    return;
  }
  const uint64_t new_bytes = e - std::max(s, rcv_nxt_);
  if (queued_ + ooo_bytes_ + new_bytes > rcvbuf_ && queued_ + ooo_bytes_ > 0) {
    ++stats_.buffer_drops;  // tcp_try_rmem_schedule failed
    return;
  }

  if (s <= rcv_nxt_) {
    const bool had_ooo = !ooo_.empty();
    if (s < rcv_nxt_) {
      stats_.duplicate_bytes += rcv_nxt_ - s;
    }
    const uint64_t bytes = e - rcv_nxt_;
    rcv_nxt_ = e;
    deliver_in_order(bytes, now);
    // tcp_event_data_recv
    if (!first_data_seen_) {
      first_data_seen_ = true;
      incr_quickack(static_cast<uint32_t>(params_.max_quickacks));
    }
    grow_window(seg.len);
    if (fin) {
      fin_seq_ = e;
    }
    if (had_ooo) {
      pull_ooo();
      ack_now = true;  // still out-of-order data, or the hole is filled (RFC 5681 §4.2)
    }
  } else {
    if (fin) {
      fin_seq_ = e;
    }
    insert_ooo(s, e);
    ++stats_.ooo_segments;
    grow_window(seg.len);
    ack_now = true;
  }
  if (fin_seq_ && rcv_nxt_ == *fin_seq_ && !fin_received_) {
    fin_received_ = true;
    rcv_nxt_ += 1;
    ack_now = true;
  }
  sack_remove();
  read_app(now);

  if (free_space() < full_space() / 2) {
    quick_ = 0;  // __tcp_select_window leaves quick-ACK mode when the buffer fills
  }
  if (ce_changed_) {
    ce_changed_ = false;
    ack_now = true;  // ICSK_ACK_NOW
  }
  if (ack_now || !ooo_.empty()) {
    send_ack(now);
  } else if (rcv_nxt_ - rcv_wup_ > rcv_mss_ && select_window_raw() >= rcv_wnd_) {
    send_ack(now);
  } else if (quick_ > 0) {
    ++stats_.quick_acks;
    send_ack(now);
  } else {
    schedule_delack(now);
  }
}

// tcp_ecn_check_ce and its congestion-control variants: how a data segment's IP ECN field
// becomes feedback on the ACKs.
void TcpReceiver::on_ecn_field(const Segment& seg, Time now) {
  const bool ce = seg.ecn == Ecn::kCe;
  if (ce) {
    stats_.ce_received += seg.gso_segs;
  }
  if (feedback_ == EcnFeedback::kClassic) {
    if (seg.has(kCwr)) {
      ece_pending_ = false;  // tcp_ecn_accept_cwr
    }
    if (ce && !ece_pending_) {
      ece_pending_ = true;
      enter_quickack_mode(kQuickAcksOnCe);
    }
    return;
  }
  // DCTCP (RFC 8257 §3.2, Linux dctcp_ece_ack_update) and AccECN's change-triggered ACKs
  // (draft-ietf-tcpm-accurate-ecn §3.2.2.5.1): when the CE state changes, a delayed ACK still
  // owed for the earlier segments goes out first with the old state, then this one is ACKed
  // at once.
  if (ce != ce_state_) {
    if (delack_deadline_) {
      send_ack(now);  // rcv_nxt still excludes this segment: Linux's prior_rcv_nxt
    }
    ce_state_ = ce;
    ce_changed_ = true;
  }
  if (feedback_ == EcnFeedback::kDctcp) {
    ece_pending_ = ce_state_;  // dctcp_ece_ack_cwr: ECE mirrors the last segment's CE
  } else if (ce) {
    ce_packets_ += seg.gso_segs;  // r.cep
  }
}

void TcpReceiver::deliver_in_order(uint64_t bytes, Time now) {
  (void)now;
  queued_ += bytes;
  stats_.bytes_received += bytes;
}

void TcpReceiver::insert_ooo(uint64_t start, uint64_t end) {
  // Merge [start, end) into the sorted, disjoint list.
  auto it = std::lower_bound(ooo_.begin(), ooo_.end(), start,
                             [](const SackBlock& b, uint64_t v) { return b.end < v; });
  SackBlock merged{start, end};
  uint64_t overlap = 0;
  auto first = it;
  while (it != ooo_.end() && it->start <= merged.end) {
    const uint64_t lo = std::max(it->start, start);
    const uint64_t hi = std::min(it->end, end);
    if (hi > lo) {
      overlap += hi - lo;
    }
    merged.start = std::min(merged.start, it->start);
    merged.end = std::max(merged.end, it->end);
    ooo_bytes_ -= it->end - it->start;
    ++it;
  }
  it = ooo_.erase(first, it);
  ooo_.insert(it, merged);
  ooo_bytes_ += merged.end - merged.start;
  stats_.duplicate_bytes += overlap;

  // SACK recency (tcp_sack_new_ofo_skb): the block holding this arrival goes first; blocks it
  // swallowed disappear.
  uint32_t k = 0;
  for (uint32_t i = 0; i < num_sacks_; ++i) {
    const SackBlock& b = sacks_[i];
    if (b.end < merged.start || b.start > merged.end) {
      sacks_[k++] = b;
    }
  }
  num_sacks_ = std::min<uint32_t>(k, kMaxSackBlocks - 1);
  for (uint32_t i = num_sacks_; i > 0; --i) {
    sacks_[i] = sacks_[i - 1];
  }
  sacks_[0] = merged;
  ++num_sacks_;
}

void TcpReceiver::pull_ooo() {
  while (!ooo_.empty() && ooo_.front().start <= rcv_nxt_) {
    const SackBlock b = ooo_.front();
    if (b.end > rcv_nxt_) {
      deliver_in_order(b.end - rcv_nxt_, Time{});
      rcv_nxt_ = b.end;
    }
    ooo_bytes_ -= b.end - b.start;
    ooo_.erase(ooo_.begin());
  }
}

void TcpReceiver::sack_remove() {
  uint32_t k = 0;
  for (uint32_t i = 0; i < num_sacks_; ++i) {
    if (sacks_[i].start > rcv_nxt_) {
      sacks_[k++] = sacks_[i];
    }
  }
  num_sacks_ = k;
}

void TcpReceiver::grow_window(uint32_t len) {
  // tcp_grow_window: open rcv_ssthresh by 2 segments per segment while space allows, and ACK
  // quickly so the sender learns it.
  if (rcv_ssthresh_ < window_clamp_ && rcv_ssthresh_ < free_space()) {
    const uint64_t incr = std::max<uint64_t>(2ull * rcv_mss_, 2ull * len);
    rcv_ssthresh_ = std::min(rcv_ssthresh_ + incr, window_clamp_);
    quick_ |= 1;
  }
}

void TcpReceiver::incr_quickack(uint32_t max_quickacks) {
  uint32_t quickacks = rcv_wnd_ / (2 * rcv_mss_);
  if (quickacks == 0) {
    quickacks = 2;
  }
  quickacks = std::min(quickacks, max_quickacks);
  if (quickacks > quick_) {
    quick_ = quickacks;
  }
}

void TcpReceiver::enter_quickack_mode(uint32_t max_quickacks) { incr_quickack(max_quickacks); }

void TcpReceiver::schedule_delack(Time now) {
  if (!delack_deadline_) {
    delack_deadline_ = now + params_.delayed_ack;
  }
}

void TcpReceiver::send_ack(Time now) {
  Segment a;
  a.seq = 1;
  a.ack = rcv_nxt_;
  a.flags = kAck;
  if (ece_pending_) {
    a.flags |= kEce;
  }
  a.ce_packets = ce_packets_;
  // tcp_select_window: never move the right edge to the left.
  uint64_t new_win = select_window_raw();
  const uint64_t cur_win = rcv_wup_ + rcv_wnd_ > rcv_nxt_ ? rcv_wup_ + rcv_wnd_ - rcv_nxt_ : 0;
  if (new_win < cur_win) {
    new_win = cur_win;
  }
  rcv_wnd_ = static_cast<uint32_t>(new_win);
  rcv_wup_ = rcv_nxt_;
  a.wnd = rcv_wnd_;
  if (ts_ok_) {
    a.options = kOptTimestamp;
    a.tsval = ts_now(now);
    a.tsecr = ts_recent_;
  }
  if (sack_ok_ && num_sacks_ > 0) {
    a.num_sacks = static_cast<uint8_t>(std::min(num_sacks_, max_sacks_));
    for (uint32_t i = 0; i < a.num_sacks; ++i) {
      a.sacks[i] = sacks_[i];
    }
  }
  out_.push_back(a);
  ++stats_.acks_sent;
  delack_deadline_.reset();
  if (quick_ > 0) {
    --quick_;  // tcp_dec_quickack_mode
  }
}

// ---------------------------------------------------------------------------------------------
// Application, autotuning

void TcpReceiver::read_app(Time now) {
  if (queued_ == 0) {
    last_read_ = now;
    return;
  }
  uint64_t n;
  const Rate rate = params_.app_read_rate;
  if (rate.is_zero()) {
    n = queued_;
  } else {
    n = std::min(queued_, rate.bytes_in(now - last_read_));
  }
  if (n == 0) {
    return;
  }
  queued_ -= n;
  stats_.bytes_read += n;
  if (!rate.is_zero()) {
    last_read_ = queued_ == 0 ? now : last_read_ + rate.transmit_time(n);
  }
  rcv_space_adjust(now);
}

void TcpReceiver::rcv_rtt_update(Duration sample, bool win_dep) {
  if (sample < Duration::ns(1)) {
    sample = Duration::ns(1);
  }
  if (rcv_rtt_ == Duration::zero()) {
    rcv_rtt_ = sample;
  } else if (!win_dep) {
    rcv_rtt_ = rcv_rtt_ + (sample - rcv_rtt_) / 8;
  } else {
    rcv_rtt_ = min(rcv_rtt_, sample);
  }
}

void TcpReceiver::rcv_rtt_measure(const Segment& seg, Time now) {
  if (ts_ok_ && (seg.options & kOptTimestamp) != 0) {
    // tcp_rcv_rtt_measure_ts: our own TSval echoed back, once per distinct echo.
    if (seg.tsecr == 0 || seg.tsecr == rcv_rtt_last_tsecr_) {
      return;
    }
    rcv_rtt_last_tsecr_ = seg.tsecr;
    if (seg.len >= rcv_mss_) {
      const uint32_t delta = ts_now(now) - seg.tsecr;
      rcv_rtt_update(Duration::ms(std::max<uint32_t>(delta, 1)), false);
    }
    return;
  }
  // tcp_rcv_rtt_measure: the time to receive one window.
  if (rtt_est_started_) {
    if (rcv_nxt_ < rtt_est_seq_) {
      return;
    }
    rcv_rtt_update(now - rtt_est_time_, true);
  }
  rtt_est_seq_ = rcv_nxt_ + rcv_wnd_;
  rtt_est_time_ = now;
  rtt_est_started_ = true;
}

void TcpReceiver::rcv_space_adjust(Time now) {
  if (rcv_rtt_ == Duration::zero() || now - space_time_ < rcv_rtt_) {
    return;
  }
  const uint64_t copied = stats_.bytes_read - space_seq_;
  if (copied > space_) {
    if (params_.moderate_rcvbuf && space_ > 0) {
      uint64_t rcvwin = 2 * copied + 16ull * mss_;
      const uint64_t grow = rcvwin * (copied - space_) / space_;
      rcvwin += 2 * grow;
      const uint64_t rcvbuf =
          std::min<uint64_t>(space_from_win(rcvwin), static_cast<uint64_t>(params_.rmem_max));
      if (rcvbuf > rcvbuf_) {
        rcvbuf_ = rcvbuf;
        window_clamp_ = win_from_space(rcvbuf_);
        ++stats_.rcvbuf_grows;
      }
    }
    space_ = copied;
  }
  space_seq_ = stats_.bytes_read;
  space_time_ = now;
}

bool TcpReceiver::window_update_due() const {
  // tcp_cleanup_rbuf: "lots" of space freed means the window at least doubles.
  const uint64_t now_win = rcv_wup_ + rcv_wnd_ > rcv_nxt_ ? rcv_wup_ + rcv_wnd_ - rcv_nxt_ : 0;
  if (2 * now_win > window_clamp_) {
    return false;
  }
  const uint64_t new_win = select_window_raw();
  return new_win > 0 && new_win >= 2 * now_win;
}

std::optional<Time> TcpReceiver::read_wakeup() const {
  const Rate rate = params_.app_read_rate;
  if (rate.is_zero() || queued_ == 0 || state_ != State::kEstablished) {
    return std::nullopt;
  }
  const uint64_t now_win = rcv_wup_ + rcv_wnd_ > rcv_nxt_ ? rcv_wup_ + rcv_wnd_ - rcv_nxt_ : 0;
  if (2 * now_win > window_clamp_) {
    return std::nullopt;
  }
  const uint64_t full = full_space();
  const uint64_t allowed = win_from_space(rcvbuf_);
  uint64_t target = std::max<uint64_t>(2 * now_win, 1);
  if (target < full / 2) {
    target = std::max<uint64_t>(
        target, std::max<uint64_t>(std::min<uint64_t>(rcv_mss_, full), allowed >> 4));
  }
  if (target > rcv_ssthresh_) {
    return std::nullopt;  // the window is capped below the target until more data arrives
  }
  const uint64_t need_space = space_from_win(target);
  if (need_space > rcvbuf_) {
    return std::nullopt;
  }
  const uint64_t used = queued_ + ooo_bytes_;
  const uint64_t max_used = rcvbuf_ - need_space;
  if (used <= max_used) {
    return max(last_read_, wake_floor_);  // due already
  }
  const uint64_t to_read = used - max_used;
  if (to_read > queued_) {
    return std::nullopt;
  }
  return max(last_read_ + rate.transmit_time(to_read), wake_floor_);
}

// ---------------------------------------------------------------------------------------------
// Timers

std::optional<Time> TcpReceiver::compute_next_event() const {
  Time t = Time::max();
  if (delack_deadline_) t = *delack_deadline_;
  if (synack_deadline_ && *synack_deadline_ < t) t = *synack_deadline_;
  if (!params_.app_read_rate.is_zero() && queued_ > 0) {
    if (const std::optional<Time> r = read_wakeup(); r && *r < t) t = *r;
  }
  return t == Time::max() ? std::nullopt : std::optional<Time>(t);
}

void TcpReceiver::do_advance(Time now) {
  if (synack_deadline_ && *synack_deadline_ <= now) {
    synack_deadline_.reset();
    if (state_ == State::kSynReceived) {
      send_syn_ack(now);
      synack_timeout_ = min(synack_timeout_ * 2, params_.rto_max);
      synack_deadline_ = now + synack_timeout_;
    }
  }
  if (state_ != State::kEstablished) {
    return;
  }
  if (delack_deadline_ && *delack_deadline_ <= now) {
    delack_deadline_.reset();
    read_app(now);
    ++stats_.delayed_acks;
    send_ack(now);
  }
  if (!params_.app_read_rate.is_zero() && queued_ > 0) {
    read_app(now);
    if (window_update_due()) {
      ++stats_.window_updates;
      send_ack(now);
    }
    wake_floor_ = now + Duration::ns(1);  // never report a wake-up at or before `now` again
  }
}

TcpReceiver::Sample TcpReceiver::sample(Time now) const {
  Sample s;
  s.at = now;
  s.bytes_received = stats_.bytes_received;
  s.bytes_read = stats_.bytes_read;
  s.window = rcv_wnd_;
  s.rcvbuf = rcvbuf_;
  s.queued = queued_;
  s.ooo_bytes = ooo_bytes_;
  return s;
}

}  // namespace nicsim::sim::tcp
