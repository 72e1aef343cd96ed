#include "nicsim/sim/tcp/sender.h"

#include <algorithm>

namespace nicsim::sim::tcp {

namespace {

RttEstimator::Config rtt_config(const Params& p) {
  return RttEstimator::Config{.rto_initial = p.rto_initial,
                              .rto_min = p.rto_min,
                              .rto_max = p.rto_max,
                              .granularity = p.clock_granularity,
                              .style = p.rto_style};
}

// DCTCP and Prague grow the window as Reno does (tcp_reno_cong_avoid / tcp_slow_start).
Params window_growth_params(Params p) {
  if (is_scalable(p.cc)) {
    p.cc = CcAlgorithm::kNewReno;
  }
  return p;
}

constexpr Duration kTimeoutFallback = Duration::s(3);  // RFC 6298 (5.7), TCP_TIMEOUT_FALLBACK
constexpr uint64_t kUnpacedSegments = 10;              // tcp_update_skb_after_send
constexpr size_t kInitialScoreboardEntries = 64;       // the ring grows by doubling (scoreboard.h)

}  // namespace

TcpSender::TcpSender(const Params& params)
    : params_(require_valid(params)),
      mss_(static_cast<uint32_t>(params.mss)),
      cc_(window_growth_params(params)),
      rtt_(rtt_config(params)) {
  if (params_.cc == CcAlgorithm::kBbr) {
    bbr_.emplace(Bbr::Config{.mss = mss_,
                             .pacing_shift = static_cast<uint32_t>(params_.pacing_shift),
                             .gso_max_bytes = 65536,
                             .seed = params_.seed});
  } else if (params_.cc == CcAlgorithm::kDctcp) {
    dctcp_.emplace();
  } else if (params_.cc == CcAlgorithm::kPrague) {
    // tcp_mss_to_mtu: the MSS plus the TCP header with options and the IP header.
    prague_.emplace(Prague::Config{.mtu = mss_ + kTcpHeaderBytes +
                                          (params_.timestamps ? kTimestampOptionBytes : 0) +
                                          kIpv4HeaderBytes,
                                   .min_tso_segs = static_cast<uint32_t>(params_.min_tso_segs)});
  }
  win_.cwnd = static_cast<uint32_t>(params_.initial_cwnd);
  win_.ssthresh = kInfiniteSsthresh;
  // Start small and let the ring double as the window grows: sized for a full send buffer up
  // front (4 MiB / 1448 B -> 4096 entries) it cost 64 MiB and 13 % of the CPU of a 256-flow
  // network before a single segment was sent (docs/benchmarks.md, the 64-host ring).
  sb_.reset(1, mss_, kInitialScoreboardEntries);
  out_.reserve(64);
}

// ---------------------------------------------------------------------------------------------
// Segments

Segment TcpSender::make_segment(Time now) const {
  Segment s;
  s.ack = peer_ack_;
  s.wnd = own_wnd_;
  s.flags = kAck;
  if (ts_ok_) {
    s.options = kOptTimestamp;
    s.tsval = ts_now(now);
    s.tsecr = ts_recent_;
  }
  return s;
}

void TcpSender::emit_control(uint8_t flags, uint64_t seq, Time now) {
  Segment s = make_segment(now);
  s.seq = seq;
  s.flags = flags;
  push_output(s);
}

void TcpSender::do_connect(Time now) {
  if (state_ != State::kClosed) {
    return;
  }
  state_ = State::kSynSent;
  Segment s;
  s.seq = 0;
  s.flags = kSyn;
  if (params_.ecn) {
    s.flags |= kEce | kCwr;  // ECN-setup SYN (RFC 3168 §6.1.1)
    if (params_.ecn_feedback == EcnFeedback::kAccurate) {
      s.flags |= kAe;  // AccECN SYN (draft-ietf-tcpm-accurate-ecn §3.1.1)
    }
  }
  s.options = kOptMss | kOptWindowScale;
  if (params_.sack) {
    s.options |= kOptSackPermitted;
  }
  if (params_.timestamps) {
    s.options |= kOptTimestamp;
    s.tsval = ts_now(now);
  }
  s.wnd = own_wnd_;
  push_output(s);
  syn_sent_at_ = now;
  rto_deadline_ = now + rtt_.rto();
}

void TcpSender::do_segment(const Segment& seg, Time now) {
  switch (state_) {
    case State::kClosed:
      return;
    case State::kSynSent:
      if (seg.has(kSyn) && seg.has(kAck) && seg.ack == 1) {
        on_syn_ack(seg, now);
      }
      return;
    case State::kEstablished:
      if (seg.has(kSyn)) {
        // Our handshake ACK was lost and the peer repeated its SYN-ACK.
        emit_control(kAck, snd_nxt_, now);
        return;
      }
      if (seg.has(kAck)) {
        on_ack(seg, now);
      }
      return;
    case State::kDone:
      return;
  }
}

void TcpSender::do_stop_writing(Time now) {
  (void)now;
  if (state_ != State::kEstablished) {
    stop_writing_ = true;
    return;
  }
  write_seq_ = std::min(write_seq_, snd_nxt_);
}

void TcpSender::on_syn_ack(const Segment& seg, Time now) {
  sack_ok_ = params_.sack && (seg.options & kOptSackPermitted) != 0;
  ts_ok_ = params_.timestamps && (seg.options & kOptTimestamp) != 0;
  ecn_ok_ = params_.ecn && seg.has(kEce) && !seg.has(kCwr);
  // AccECN's SYN-ACK to a Not-ECT SYN: (AE, CWR, ECE) = (0, 1, 0).
  accecn_ok_ = params_.ecn && params_.ecn_feedback == EcnFeedback::kAccurate && seg.has(kCwr) &&
               !seg.has(kEce) && !seg.has(kAe);
  ecn_ok_ = ecn_ok_ || accecn_ok_;
  peer_ce_packets_ = seg.ce_packets;
  if (ts_ok_) {
    ts_recent_ = seg.tsval;
  }
  if (!syn_retransmitted_) {
    rtt_.sample(now - syn_sent_at_);
    ++stats_.rtt_samples;
  } else {
    // Karn: no sample. RFC 5681 §3.1: IW = 1 segment after a lost SYN; RFC 6298 (5.7).
    win_.cwnd = 1;
    if (!rtt_.has_sample()) {
      rtt_.fall_back_to(kTimeoutFallback);
    }
    rtt_.reset_backoff();
  }
  rto_deadline_.reset();
  peer_ack_ = seg.seq + 1;
  snd_una_ = 1;
  snd_nxt_ = 1;
  write_seq_ =
      params_.bytes_to_send > 0 ? 1 + static_cast<uint64_t>(params_.bytes_to_send) : kUnlimited;
  if (stop_writing_) {
    write_seq_ = 1;  // the application stopped before the connection was up
  }
  snd_wnd_ = seg.wnd;
  max_window_ = std::max(max_window_, snd_wnd_);
  max_packets_seq_ = snd_nxt_;
  state_ = State::kEstablished;
  cc_.init(now, snd_nxt_);
  if (bbr_) {
    bbr_->init(win_, bbr_conn(now));
  }
  if (dctcp_) {
    dctcp_->init(snd_nxt_, delivered_, delivered_ce_);
  }
  if (prague_) {
    prague_->init(win_, prague_ack(0, 0));
  }
  update_pacing_rate();
  emit_control(kAck, snd_nxt_, now);  // third segment of the handshake
  write_xmit(now);
}

// ---------------------------------------------------------------------------------------------
// ACK processing (tcp_ack + tcp_fastretrans_alert + tcp_cong_control)

void TcpSender::on_ack(const Segment& seg, Time now) {
  ++stats_.acks_received;
  const uint64_t ack = seg.ack;
  const uint64_t max_ack = snd_nxt_ + (fin_sent_ ? 1 : 0);
  if (ack > max_ack || ack < snd_una_) {
    return;  // ACK of unsent data, or an old ACK
  }
  if (ts_ok_ && (seg.options & kOptTimestamp) != 0) {
    ts_recent_ = seg.tsval;
  }
  const uint32_t prior_packets = sb_.packets_out();
  const uint32_t prior_sacked = sb_.sacked_out();
  const uint64_t prior_lost = lost_total_;
  const bool advanced = ack > snd_una_;
  RateSample rs;
  rs.prior_in_flight = sb_.in_flight();
  DeliveryRate* rate = bbr_ ? &rate_ : nullptr;

  // Window update (tcp_may_update_window; the peer's sequence number never changes).
  bool win_update = false;
  if (advanced || seg.wnd > snd_wnd_) {
    win_update = seg.wnd != snd_wnd_;
    snd_wnd_ = seg.wnd;
    max_window_ = std::max(max_window_, snd_wnd_);
    if (snd_wnd_ > 0) {
      probes_out_ = 0;
    }
  }

  Scoreboard::AckResult ar;
  if (advanced) {
    ar = sb_.ack_to(std::min(ack, write_seq_), rate, &rs);
    snd_una_ = ack;
    consecutive_rtos_ = 0;
  }
  Scoreboard::SackResult sr;
  if (sack_ok_) {
    for (uint32_t i = 0; i < seg.num_sacks; ++i) {
      sb_.sack(seg.sacks[i], sr, rate, &rs);
    }
    sb_.set_sack_cache(seg.sacks.data(), seg.num_sacks);
    stats_.sacked_segments += sr.newly_sacked;
  }
  uint32_t ce_delta = 0;
  const bool ece = ecn_echo(seg, ce_delta);
  // RFC 5681 duplicate ACK (Linux: not FLAG_DATA | FLAG_WIN_UPDATE | FLAG_ACKED).
  const bool is_dupack = !advanced && !win_update && seg.len == 0 && prior_packets > 0;
  if (is_dupack) {
    ++stats_.dupacks;
  }

  // RTT sample (Karn; tcp_ack_update_rtt preference order).
  std::optional<Duration> rtt;
  if (ar.has_first_sent && !ar.retrans_acked) {
    rtt = now - ar.first_sent;
  } else if (sr.has_first_sent) {
    rtt = now - sr.first_sent;
  } else if (ts_ok_ && advanced && seg.tsecr != 0) {
    const uint32_t delta = ts_now(now) - seg.tsecr;
    rtt = Duration::ms(std::max<uint32_t>(delta, 1));
  }
  // The congestion control's sample is the most recently sent newly delivered segment's
  // (tcp_ack_update_rtt's ca_rtt_us).
  if (ar.has_first_sent && !ar.retrans_acked) {
    rs.rtt = now - ar.last_sent;
  } else if (sr.has_first_sent) {
    rs.rtt = now - sr.last_sent;
  } else if (rtt) {
    rs.rtt = *rtt;
  }
  if (rtt) {
    rtt_.sample(*rtt);
    cc_.on_rtt_sample(win_, *rtt, now);
    ++stats_.rtt_samples;
  }

  if (!sack_ok_) {
    if (advanced) {
      sb_.reno_remove_sacks(ar.acked);
    }
    if (is_dupack) {
      sb_.reno_add_sack();
    }
  } else {
    lost_total_ += sb_.mark_lost_rfc6675(static_cast<uint32_t>(params_.reordering));
  }
  // DeliveredData in segments (Linux newly_acked_sacked).
  const int64_t delivered_signed = static_cast<int64_t>(prior_packets) - sb_.packets_out() +
                                   static_cast<int64_t>(sb_.sacked_out()) - prior_sacked;
  const uint32_t delivered = static_cast<uint32_t>(std::max<int64_t>(delivered_signed, 0));
  // tcp_count_delivered: with RFC 3168 / DCTCP feedback an ECE ACK's deliveries count as CE;
  // AccECN reports the count itself.
  delivered_ += delivered;
  delivered_ce_ += accecn_ok_ ? ce_delta : (ece ? delivered : 0);
  stats_.delivered_ce = delivered_ce_;
  if (dctcp_) {
    dctcp_->on_ack(snd_una_, snd_nxt_, delivered_, delivered_ce_);  // tcp_in_ack_event
  }

  update_ca_state(advanced, ece, now);

  if (prague_) {
    prague_->on_ack(prague_ack(delivered, ce_delta), win_);  // cong_control
  } else if (bbr_) {
    // tcp_rate_gen + cong_control: BBR sets cwnd and the pacing rate (no PRR, no cong_avoid).
    rate_.generate(delivered, static_cast<uint32_t>(lost_total_ - prior_lost), now, rtt_.min_rtt(),
                   rs);
    bbr_->on_ack(rs, bbr_conn(now), win_, rate_);
  } else if (ca_state_ == CaState::kRecovery || ca_state_ == CaState::kCwr) {
    cwnd_reduction(delivered);
  } else if (advanced && is_cwnd_limited()) {
    cc_.cong_avoid(win_, delivered, now, ack, snd_nxt_, rtt_.srtt());
  }

  // Retransmission timer (RFC 6298 (5.2), (5.3)).
  if (sb_.packets_out() == 0) {
    rto_deadline_.reset();
    if (fin_sent_ && ack == write_seq_ + 1) {
      state_ = State::kDone;
      completed_at_ = now;
      probe_deadline_.reset();
      return;
    }
  } else if (advanced) {
    rto_deadline_ = now + rtt_.rto();
  }
  if (advanced && snd_wnd_ > 0) {
    probe_deadline_.reset();
  }
  update_pacing_rate();
  write_xmit(now);
}

void TcpSender::update_ca_state(bool advanced, bool ece, Time now) {
  // State exit when the recovery point is acknowledged.
  switch (ca_state_) {
    case CaState::kRecovery:
      if (snd_una_ >= high_seq_) {
        if (!sack_ok_) {
          sb_.reno_reset_sacks();
        }
        end_cwnd_reduction();
        ca_state_ = CaState::kOpen;
        if (prague_) prague_->ca_open();
      }
      break;
    case CaState::kCwr:
      if (snd_una_ > high_seq_) {
        end_cwnd_reduction();
        ca_state_ = CaState::kOpen;
        if (prague_) prague_->ca_open();
      }
      break;
    case CaState::kLoss:
      if (snd_una_ >= high_seq_) {
        ca_state_ = CaState::kOpen;
        if (prague_) prague_->ca_open();
      }
      break;
    default:
      break;
  }

  switch (ca_state_) {
    case CaState::kOpen:
    case CaState::kDisorder:
    case CaState::kCwr: {
      const uint32_t dupthresh = static_cast<uint32_t>(params_.reordering);
      const bool time_to_recover = sb_.lost_out() > 0 || sb_.sacked_out() >= dupthresh;
      if (time_to_recover) {
        enter_recovery(now);
      } else if (ece && ca_state_ != CaState::kCwr) {
        enter_cwr(now);
      } else if (ca_state_ != CaState::kCwr) {
        ca_state_ =
            (sb_.sacked_out() > 0 || sb_.lost_out() > 0) ? CaState::kDisorder : CaState::kOpen;
      }
      break;
    }
    case CaState::kRecovery:
      if (!sack_ok_ && advanced) {
        // RFC 6582 partial ACK: the next hole is lost too; retransmit it.
        lost_total_ += sb_.mark_lost(sb_.head()) ? 1 : 0;
      }
      break;
    case CaState::kLoss:
      break;
  }
}

void TcpSender::init_cwnd_reduction() {
  high_seq_ = snd_nxt_;
  win_.cwnd_cnt = 0;
  prior_cwnd_ = win_.cwnd;
  recover_fs_ = std::max<uint32_t>(sb_.packets_out(), 1);
  prr_delivered_ = 0;
  prr_out_ = 0;
  win_.ssthresh = ca_ssthresh();
}

uint32_t TcpSender::ca_ssthresh() {
  if (bbr_) return bbr_->ssthresh(win_);
  if (prague_) return prague_->ssthresh(win_);
  if (dctcp_) return dctcp_->ssthresh(win_.cwnd);
  return cc_.ssthresh(win_);
}

bool TcpSender::ecn_echo(const Segment& seg, uint32_t& ce_delta) {
  if (accecn_ok_) {
    ce_delta = seg.ce_packets - peer_ce_packets_;  // unsigned: a counter that only grows
    if (static_cast<int32_t>(ce_delta) <= 0) {
      ce_delta = 0;  // an older ACK
      return false;
    }
    peer_ce_packets_ = seg.ce_packets;
    ++stats_.ece_received;
    return true;
  }
  const bool ece = ecn_ok_ && seg.has(kEce);
  stats_.ece_received += ece ? 1 : 0;
  return ece;
}

Prague::Ack TcpSender::prague_ack(uint32_t acked_sacked, uint32_t ce_delta) const {
  return Prague::Ack{.acked_sacked = acked_sacked,
                     .ce_delta = ce_delta,
                     .cwnd_limited = is_cwnd_limited(),
                     .snd_una = snd_una_,
                     .snd_nxt = snd_nxt_,
                     .delivered = delivered_,
                     .delivered_ce = delivered_ce_,
                     .in_flight = sb_.in_flight(),
                     .srtt = rtt_.has_sample() ? rtt_.srtt() : Duration::zero()};
}

void TcpSender::enter_recovery(Time now) {
  (void)now;
  ++stats_.fast_recoveries;
  if (!sack_ok_) {
    // fast retransmit of the first unacknowledged segment
    lost_total_ += sb_.mark_lost(sb_.head()) ? 1 : 0;
  }
  if (ca_state_ != CaState::kCwr) {
    init_cwnd_reduction();
  }
  if (dctcp_) {
    win_.ssthresh = Dctcp::loss_ssthresh(win_.cwnd);  // dctcp_state -> dctcp_react_to_loss
  }
  if (prague_) {
    prague_->enter_loss(win_);  // prague_state(TCP_CA_Recovery)
  }
  ca_state_ = CaState::kRecovery;
  if (!params_.prr && !cong_control()) {
    win_.cwnd = win_.ssthresh;  // RFC 6675 §5 (4.2)
  }
  force_retransmit_ = true;  // RFC 6675 §5 (4.3) / PRR's "sndcnt >= 1 when prr_out == 0"
  cwr_pending_ = ecn_ok_ && !accecn_ok_;
}

void TcpSender::enter_cwr(Time now) {
  (void)now;
  if (ca_state_ >= CaState::kCwr) {
    return;
  }
  ++stats_.cwr_events;
  init_cwnd_reduction();
  ca_state_ = CaState::kCwr;
  cwr_pending_ = ecn_ok_ && !accecn_ok_;  // AccECN: CWR is part of the ACE field, not a signal
  if (prague_) {
    prague_->enter_cwr(win_);  // prague_state(TCP_CA_CWR)
  }
  if (!params_.prr && !cong_control()) {
    win_.cwnd = std::min(win_.cwnd, win_.ssthresh);
  }
}

void TcpSender::end_cwnd_reduction() {
  if (!cong_control()) {
    win_.cwnd = win_.ssthresh;  // tcp_end_cwnd_reduction (not with cong_control: BBR)
  }
  win_.cwnd_cnt = 0;
  force_retransmit_ = false;
}

// RFC 6937 PRR with Slow Start Reduction Bound, in segments.
void TcpSender::cwnd_reduction(uint32_t delivered) {
  if (!params_.prr) {
    return;  // RFC 6675: cwnd stays at ssthresh until recovery ends
  }
  if (delivered == 0) {
    return;
  }
  prr_delivered_ += delivered;
  const int64_t pipe = sb_.in_flight();
  const int64_t ssthresh = win_.ssthresh;
  int64_t sndcnt;
  if (pipe > ssthresh) {
    const uint64_t dividend =
        static_cast<uint64_t>(ssthresh) * prr_delivered_ + recover_fs_ - 1;  // CEIL
    sndcnt = static_cast<int64_t>(dividend / recover_fs_) - prr_out_;
  } else {
    const int64_t limit =
        std::max<int64_t>(static_cast<int64_t>(prr_delivered_) - prr_out_, delivered) + 1;
    sndcnt = std::min<int64_t>(ssthresh - pipe, limit);
  }
  sndcnt = std::max<int64_t>(sndcnt, prr_out_ == 0 ? 1 : 0);
  win_.cwnd = static_cast<uint32_t>(pipe + sndcnt);
}

// ---------------------------------------------------------------------------------------------
// Timers

std::optional<Time> TcpSender::compute_next_event() const {
  Time t = Time::max();
  if (rto_deadline_) t = *rto_deadline_;
  if (probe_deadline_ && *probe_deadline_ < t) t = *probe_deadline_;
  if (pacing_blocked_ && next_send_time_ < t) t = next_send_time_;
  return t == Time::max() ? std::nullopt : std::optional<Time>(t);
}

void TcpSender::do_advance(Time now) {
  if (rto_deadline_ && *rto_deadline_ <= now) {
    rto_deadline_.reset();
    on_rto(now);
  }
  if (probe_deadline_ && *probe_deadline_ <= now) {
    probe_deadline_.reset();
    on_probe_timer(now);
  }
  if (pacing_blocked_ && next_send_time_ <= now) {
    pacing_blocked_ = false;
    write_xmit(now);
  }
}

void TcpSender::on_rto(Time now) {
  if (state_ == State::kSynSent) {
    syn_retransmitted_ = true;
    ++stats_.syn_retransmits;
    rtt_.back_off();
    state_ = State::kClosed;
    do_connect(now);  // resend the SYN, timer at the backed-off RTO
    syn_sent_at_ = now;
    return;
  }
  if (state_ != State::kEstablished || sb_.packets_out() == 0) {
    return;
  }
  ++stats_.rto_count;
  // tcp_enter_loss: reduce ssthresh once per congestion episode.
  if (ca_state_ <= CaState::kDisorder || high_seq_ <= snd_una_ ||
      (ca_state_ == CaState::kLoss && consecutive_rtos_ == 0)) {
    win_.ssthresh = ca_ssthresh();
    if (dctcp_) {
      win_.ssthresh = Dctcp::loss_ssthresh(win_.cwnd);  // CA_EVENT_LOSS: dctcp_react_to_loss
    }
    if (prague_) {
      prague_->enter_loss(win_);  // CA_EVENT_LOSS
    }
  }
  cc_.on_loss_state(now, snd_nxt_);
  if (dctcp_) {
    dctcp_->on_loss_state();
  }
  lost_total_ += sb_.mark_all_lost();
  if (!sack_ok_) {
    sb_.reno_reset_sacks();
  }
  win_.cwnd = sb_.in_flight() + 1;
  win_.cwnd_cnt = 0;
  high_seq_ = snd_nxt_;
  ca_state_ = CaState::kLoss;
  force_retransmit_ = false;
  cwr_pending_ = ecn_ok_ && !accecn_ok_;
  if (bbr_) {
    bbr_->on_loss_state(bbr_conn(now));  // tcp_set_ca_state(TCP_CA_Loss)
  }
  rtt_.back_off();  // RFC 6298 (5.5)
  ++consecutive_rtos_;
  rto_deadline_ = now + rtt_.rto();  // (5.6); re-armed again when the head goes out
  update_pacing_rate();
  write_xmit(now);
}

void TcpSender::on_probe_timer(Time now) {
  if (state_ != State::kEstablished || sb_.packets_out() > 0) {
    return;
  }
  write_xmit(now);
  if (sb_.packets_out() == 0 && has_data_to_send() && !tsq_throttled_ && !pacing_blocked_) {
    send_window_probe(now);
  }
}

void TcpSender::send_window_probe(Time now) {
  // tcp_xmit_probe_skb: an old sequence number forces the peer to answer with its window.
  emit_control(kAck, snd_una_ - 1, now);
  ++stats_.window_probes;
  ++probes_out_;
  Duration when = rtt_.rto();  // tcp_probe0_when: rto << backoff (one step per probe sent)
  for (uint32_t i = 0; i < probes_out_ && when < params_.rto_max; ++i) {
    when = when * 2;
  }
  probe_deadline_ = now + min(when, params_.rto_max);
}

// ---------------------------------------------------------------------------------------------
// Transmission (tcp_write_xmit + tcp_xmit_retransmit_queue)

uint32_t TcpSender::tso_segs_goal() const {
  if (!params_.gso) {
    return 1;
  }
  const uint64_t cap = static_cast<uint64_t>(params_.gso_max_size - 1 - kMaxTcpHeader);
  const uint64_t by_rate =
      pacing_rate_ == kUnlimited ? cap : (pacing_rate_ >> params_.pacing_shift);
  const uint64_t bytes = std::min(by_rate, cap);
  const uint64_t min_segs =
      bbr_ ? bbr_->min_tso_segs() : static_cast<uint64_t>(params_.min_tso_segs);
  // tcp_tso_segs: a module's tso_segs hook (Prague's burst) replaces tcp_tso_autosize.
  uint64_t segs = prague_ ? prague_->tso_segs() : std::max<uint64_t>(bytes / mss_, min_segs);
  segs = std::min<uint64_t>(segs, static_cast<uint64_t>(params_.gso_max_segs));
  // A unit must also fit gso_max_size.
  segs = std::min<uint64_t>(segs, std::max<uint64_t>(cap / mss_, 1));
  return static_cast<uint32_t>(segs);
}

uint64_t TcpSender::tsq_limit(uint32_t truesize, bool retransmit) const {
  const uint64_t by_rate =
      pacing_rate_ == kUnlimited ? kUnlimited : (pacing_rate_ >> params_.pacing_shift);
  uint64_t limit = std::max<uint64_t>(2ull * truesize, by_rate);
  limit = std::min<uint64_t>(limit, static_cast<uint64_t>(params_.limit_output_bytes));
  return retransmit ? limit << 1 : limit;
}

bool TcpSender::is_cwnd_limited() const {
  if (is_cwnd_limited_) {
    return true;
  }
  if (win_.in_slow_start()) {
    return win_.cwnd < 2 * max_packets_out_;
  }
  return false;
}

void TcpSender::cwnd_validate(bool is_cwnd_limited) {
  if (snd_una_ >= max_packets_seq_ || sb_.packets_out() > max_packets_out_ || is_cwnd_limited) {
    max_packets_out_ = sb_.packets_out();
    max_packets_seq_ = snd_nxt_;
    is_cwnd_limited_ = is_cwnd_limited;
  }
}

void TcpSender::write_xmit(Time now) {
  if (state_ != State::kEstablished) {
    return;
  }
  const bool was_throttled = tsq_throttled_;
  tsq_throttled_ = false;
  pacing_blocked_ = false;
  const uint32_t tso_segs = tso_segs_goal();
  for (;;) {
    const bool want_retransmit = sb_.pending_retransmits() > 0;
    if (!want_retransmit && !has_data_to_send()) {
      break;
    }
    if (internal_pacing() && data_segs_out_ >= kUnpacedSegments && now < next_send_time_) {
      pacing_blocked_ = true;
      break;
    }
    const uint32_t in_flight = sb_.in_flight();
    uint32_t quota = win_.cwnd > in_flight ? win_.cwnd - in_flight : 0;
    if (quota == 0 && force_retransmit_ && want_retransmit) {
      quota = 1;
    }
    if (quota == 0) {
      break;
    }
    if (want_retransmit) {
      const std::optional<uint64_t> n = sb_.next_retransmit();
      if (n) {
        const uint32_t run = sb_.retransmit_run(*n, std::min(quota, tso_segs));
        uint32_t len = 0;
        for (uint32_t i = 0; i < run; ++i) {
          len += sb_.at(*n + i).len;
        }
        if (params_.tsq && bytes_below_ > tsq_limit(truesize_of(len), true)) {
          tsq_throttled_ = true;
          break;
        }
        emit_retransmit(*n, run, now);
        continue;
      }
    }
    if (!has_data_to_send()) {
      break;
    }
    // New data: whole segments that fit cwnd, the peer's window, the send buffer and the
    // autosized GSO goal.
    const uint64_t avail = write_seq_ - snd_nxt_;
    const uint64_t wnd_end = snd_una_ + snd_wnd_;
    const uint64_t wnd_room = wnd_end > snd_nxt_ ? wnd_end - snd_nxt_ : 0;
    const uint64_t unacked = snd_nxt_ - snd_una_;
    const uint64_t buf_room = static_cast<uint64_t>(params_.wmem) > unacked
                                  ? static_cast<uint64_t>(params_.wmem) - unacked
                                  : 0;
    const uint64_t max_segs = std::min<uint64_t>(quota, tso_segs);
    uint64_t bytes = std::min<uint64_t>(max_segs * mss_, avail);
    // Only whole segments, except the final (short) segment of the stream.
    const uint64_t room = std::min(wnd_room, buf_room);
    if (bytes > room) {
      bytes = (room / mss_) * mss_;
    }
    if (bytes == 0) {
      if (wnd_room < std::min<uint64_t>(mss_, avail) && sb_.packets_out() == 0 &&
          !probe_deadline_) {
        // Zero window with nothing in flight: persist timer (tcp_check_probe_timer).
        Duration when = rtt_.rto();
        probe_deadline_ = now + when;
      }
      break;
    }
    const uint32_t len = static_cast<uint32_t>(bytes);
    if (params_.tsq && bytes_below_ > tsq_limit(truesize_of(len), false)) {
      tsq_throttled_ = true;
      break;
    }
    const uint32_t segs = (len + mss_ - 1) / mss_;
    emit_new(len, segs, snd_nxt_ + len == write_seq_, now);
  }
  if (tsq_throttled_ && !was_throttled) {
    throttled_since_ = now;
    ++stats_.tsq_throttles;
  } else if (!tsq_throttled_ && was_throttled) {
    stats_.tsq_throttled_time += now - throttled_since_;
  }
  cwnd_validate(sb_.in_flight() >= win_.cwnd);
  if (bbr_ && write_seq_ - snd_nxt_ < mss_ && bytes_below_ == 0) {
    // tcp_rate_check_app_limited: the application has nothing more for us.
    rate_.check_app_limited(true, sb_.in_flight(), win_.cwnd, sb_.lost_out());
  }
}

void TcpSender::emit_new(uint32_t len, uint32_t segs, bool fin, Time now) {
  Segment s = make_segment(now);
  s.seq = snd_nxt_;
  s.len = len;
  s.gso_segs = static_cast<uint16_t>(segs);
  s.gso_size = segs > 1 ? static_cast<uint16_t>(mss_) : 0;
  s.truesize = truesize_of(len);
  if (fin) {
    s.flags |= kFin;
    fin_sent_ = true;
  }
  // PSH (net/ipv4/tcp.c): tcp_push marks the last skb of the application's data, and
  // forced_push marks one whenever write_seq passes pushed_seq + max_window / 2. The model has
  // no write boundaries of an unlimited source, so the rule is applied as units are built.
  const uint64_t end = snd_nxt_ + len;
  if (end == write_seq_ || end > pushed_seq_ + max_window_ / 2) {
    s.flags |= kPsh;
    pushed_seq_ = end;
  }
  if (ecn_ok_) {
    s.ecn = params_.ect1 ? Ecn::kEct1 : Ecn::kEct0;
    if (cwr_pending_) {
      s.flags |= kCwr;
      cwr_pending_ = false;
    }
  }
  const bool was_idle = sb_.packets_out() == 0;
  const RateTx tx = rate_on_sent(now);
  uint32_t left = len;
  for (uint32_t i = 0; i < segs; ++i) {
    const uint32_t l = std::min(left, mss_);
    sb_.push(now, l, tx);
    left -= l;
  }
  snd_nxt_ += len;
  bytes_below_ += s.truesize;
  data_segs_out_ += segs;
  if (ca_state_ == CaState::kRecovery || ca_state_ == CaState::kCwr) {
    prr_out_ += segs;
  }
  ++stats_.units_sent;
  stats_.segments_sent += segs;
  stats_.bytes_sent += len;
  if (was_idle || !rto_deadline_) {
    rto_deadline_ = now + rtt_.rto();
  }
  probe_deadline_.reset();
  advance_pacing(s, now);
  push_output(s);
}

void TcpSender::emit_retransmit(uint64_t first, uint32_t segs, Time now) {
  Segment s = make_segment(now);
  s.seq = sb_.seq_of(first);
  uint32_t len = 0;
  const RateTx tx = rate_on_sent(now);
  for (uint32_t i = 0; i < segs; ++i) {
    len += sb_.at(first + i).len;
    sb_.mark_retransmitted(first + i, now, tx);
  }
  s.len = len;
  s.flags |= kRetransmit;
  if (fin_sent_ && s.seq + len == write_seq_) {
    s.flags |= kFin;
  }
  s.gso_segs = static_cast<uint16_t>(segs);
  s.gso_size = segs > 1 ? static_cast<uint16_t>(mss_) : 0;
  s.truesize = truesize_of(len);  // ECN: retransmissions are not ECT (RFC 3168 §6.1.5)
  bytes_below_ += s.truesize;
  if (ca_state_ == CaState::kRecovery || ca_state_ == CaState::kCwr) {
    prr_out_ += segs;
  }
  force_retransmit_ = false;
  ++stats_.units_sent;
  stats_.segments_sent += segs;
  stats_.bytes_sent += len;
  stats_.retransmits += segs;
  stats_.retransmitted_bytes += len;
  if (first == sb_.head() || !rto_deadline_) {
    rto_deadline_ = now + rtt_.rto();
  }
  data_segs_out_ += segs;
  advance_pacing(s, now);
  push_output(s);
}

// tcp_update_skb_after_send (EDT): the next unit may leave skb_len / pacing_rate later; the
// first 10 data segments of a connection are not paced.
void TcpSender::advance_pacing(Segment& s, Time now) {
  if (!paced()) {
    return;
  }
  if (params_.fq_pacing) {
    s.tstamp = max(next_send_time_, now);  // skb->tstamp = tcp_wstamp_ns: fq holds it till then
  }
  if (pacing_rate_ == kUnlimited || pacing_rate_ == 0 || data_segs_out_ < kUnpacedSegments) {
    return;
  }
  const Duration len_ns = Rate::bytes_per_sec(pacing_rate_).transmit_time(skb_len(s));
  next_send_time_ = max(next_send_time_, now) + len_ns;
}

void TcpSender::update_pacing_rate() {
  if (bbr_) {
    pacing_rate_ = bbr_->pacing_rate();  // BBR sets sk_pacing_rate itself
    return;
  }
  if (prague_) {
    // Prague sets sk_pacing_rate itself (unknown = unlimited before the first RTT sample).
    pacing_rate_ = prague_->pacing_rate() != 0 ? prague_->pacing_rate() : kUnlimited;
    return;
  }
  if (!rtt_.has_sample()) {
    pacing_rate_ = kUnlimited;
    return;
  }
  const uint64_t ratio = win_.cwnd < win_.ssthresh / 2
                             ? static_cast<uint64_t>(params_.pacing_ss_ratio)
                             : static_cast<uint64_t>(params_.pacing_ca_ratio);
  const uint64_t segs = std::max<uint64_t>(win_.cwnd, sb_.packets_out());
  const unsigned __int128 num =
      static_cast<unsigned __int128>(mss_) * segs * ratio * 1'000'000'000ull;
  const unsigned __int128 den =
      static_cast<unsigned __int128>(100) * static_cast<uint64_t>(rtt_.srtt().count_ns());
  const unsigned __int128 rate = num / den;
  pacing_rate_ = rate > kUnlimited - 1 ? kUnlimited - 1 : static_cast<uint64_t>(rate);
}

// ---------------------------------------------------------------------------------------------
// Below the socket

void TcpSender::do_tx_released(uint64_t bytes, Time now) {
  bytes_below_ -= std::min(bytes, bytes_below_);
  if (tsq_throttled_) {
    write_xmit(now);  // the TSQ tasklet (tcp_tsq_handler)
  }
}

void TcpSender::unsend_new_data(uint64_t from_seq) {
  // Forget never-transmitted new data from `from_seq` on (it is sent again later).
  while (sb_.tail() > sb_.head() && sb_.seq_of(sb_.tail() - 1) >= from_seq) {
    const uint32_t len = sb_.at(sb_.tail() - 1).len;
    sb_.pop_tail();
    --data_segs_out_;
    --stats_.segments_sent;
    stats_.bytes_sent -= len;
    if ((ca_state_ == CaState::kRecovery || ca_state_ == CaState::kCwr) && prr_out_ > 0) {
      --prr_out_;
    }
  }
  snd_nxt_ = from_seq;
  fin_sent_ = false;
}

void TcpSender::do_local_drop(const Segment& seg, Time now) {
  ++stats_.local_drops;
  bytes_below_ -= std::min<uint64_t>(seg.truesize, bytes_below_);
  if (state_ != State::kEstablished || seg.len == 0) {
    return;  // a control segment: the peer or our timers recover it
  }
  if (seg.has(kRetransmit)) {
    const uint64_t first = sb_.segment_of(seg.seq);
    for (uint64_t n = first; n < first + seg.gso_segs && n < sb_.tail(); ++n) {
      if (n >= sb_.head()) {
        sb_.unmark_retransmitted(n);
      }
    }
    stats_.retransmits -= std::min<uint64_t>(seg.gso_segs, stats_.retransmits);
    stats_.retransmitted_bytes -= std::min<uint64_t>(seg.len, stats_.retransmitted_bytes);
    stats_.segments_sent -= std::min<uint64_t>(seg.gso_segs, stats_.segments_sent);
    stats_.bytes_sent -= std::min<uint64_t>(seg.len, stats_.bytes_sent);
    --stats_.units_sent;
  } else {
    // Units queued after it have not been handed to the host yet: un-send them too.
    size_t keep = out_head_;
    uint64_t handed_end = seg.seq + seg.len;  // end of the new data the host has not sent
    for (size_t i = out_head_; i < out_.size(); ++i) {
      const Segment& q = out_[i];
      const bool later_new_data = q.len > 0 && !q.has(kRetransmit) && q.seq > seg.seq;
      if (later_new_data) {
        bytes_below_ -= std::min<uint64_t>(q.truesize, bytes_below_);
        --stats_.units_sent;
        handed_end = std::max(handed_end, q.seq + q.len);
      } else {
        out_[keep++] = q;
      }
    }
    out_.resize(keep);
    if (out_head_ == out_.size()) {
      out_.clear();
      out_head_ = 0;
    }
    if (handed_end == snd_nxt_ && seg.seq >= snd_una_) {
      unsend_new_data(seg.seq);
      --stats_.units_sent;
    } else {
      // Not the newest data (the host sent later units): treat it as lost.
      const uint64_t first = sb_.segment_of(seg.seq);
      for (uint64_t n = first; n < first + seg.gso_segs && n < sb_.tail(); ++n) {
        lost_total_ += sb_.mark_lost(n) ? 1 : 0;
      }
    }
  }
  enter_cwr(now);
  if (sb_.packets_out() == 0) {
    rto_deadline_.reset();
    if (!probe_deadline_) {
      probe_deadline_ = now + rtt_.rto();  // retry later (tcp_check_probe_timer)
    }
  }
}

void TcpSender::do_local_congestion(Time now) {
  if (state_ == State::kEstablished) {
    enter_cwr(now);
  }
}

Bbr::Conn TcpSender::bbr_conn(Time now) const {
  Bbr::Conn c;
  c.now = now;
  c.wstamp = next_send_time_;
  c.in_flight = sb_.in_flight();
  c.ca_state = ca_state_;
  c.delivered = rate_.delivered();
  c.delivered_time = rate_.delivered_time();
  c.lost = lost_total_;
  c.srtt = rtt_.has_sample() ? rtt_.srtt() : Duration::zero();
  c.min_rtt = rtt_.min_rtt();
  return c;
}

// ---------------------------------------------------------------------------------------------

TcpSender::Sample TcpSender::sample(Time now) const {
  Sample s;
  s.at = now;
  s.bytes_acked = snd_una_ > 1 ? std::min(snd_una_, write_seq_) - 1 : 0;
  s.bytes_sent_new = snd_nxt_ > 1 ? snd_nxt_ - 1 : 0;
  s.retransmits = stats_.retransmits;
  s.cwnd = win_.cwnd;
  s.ssthresh = win_.ssthresh;
  s.mss = mss_;
  s.packets_out = sb_.packets_out();
  s.in_flight = sb_.in_flight();
  s.srtt = rtt_.srtt();
  s.rttvar = rtt_.rttvar();
  s.min_rtt = rtt_.min_rtt();
  s.rto = rtt_.rto();
  s.bytes_below_socket = bytes_below_;
  s.pacing_rate_bytes_per_sec = pacing_rate_bytes_per_sec();
  s.tsq_throttled_time = stats_.tsq_throttled_time;
  if (tsq_throttled_) {
    s.tsq_throttled_time += now - throttled_since_;
  }
  s.ca_state = ca_state_;
  return s;
}

}  // namespace nicsim::sim::tcp
