#include "nicsim/model/platform_nic.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace nicsim::model {

namespace {

// Largest TX ring accepted: keeps a clean pass's byte sum (entries × 64 KiB) inside 32 bits.
constexpr int64_t kMaxRingSize = 32768;

std::string format_duration(Duration d) {
  const int64_t ns = d.count_ns();
  if (ns % 1'000'000 == 0 && ns != 0) {
    return std::to_string(ns / 1'000'000) + "ms";
  }
  if (ns % 1'000 == 0) {
    return std::to_string(ns / 1'000) + "us";
  }
  if (ns > 1'000) {  // e.g. 327.68us
    std::string frac = std::to_string(1'000 + ns % 1'000).substr(1);
    while (frac.back() == '0') {
      frac.pop_back();
    }
    return std::to_string(ns / 1'000) + "." + frac + "us";
  }
  return std::to_string(ns) + "ns";
}

std::string format_coalesce(const char* dir, const algo::IrqCoalescer::Params& p) {
  return std::string(dir) + "-usecs=" + format_duration(p.usecs) + " " + dir +
         "-frames=" + std::to_string(p.frames);
}

const char* on_off(bool b) { return b ? "on" : "off"; }

algo::Gro::Params gro_params(const PlatformNic::Params& p) {
  algo::Gro::Params g;
  g.max_size = static_cast<uint32_t>(std::clamp<int64_t>(p.gro_max_size, 1, 65536));
  return g;
}

algo::IrqCoalescer::Params moderation_of(const algo::NetDim::Profile& p) {
  return algo::IrqCoalescer::Params{.usecs = Duration::us(p.usecs), .frames = p.frames};
}

algo::IntelItr::Params itr_params(const PlatformNic::Params& p) {
  algo::IntelItr::Params i;
  i.mode = p.itr == ItrMode::kIxgbe ? algo::IntelItr::Mode::kIxgbe
           : p.itr == ItrMode::kIgb ? algo::IntelItr::Mode::kIgb
                                    : algo::IntelItr::Mode::kIgbConservative;
  i.link_mbps = std::max<int64_t>(p.itr_link_mbps, 1);
  i.hz = p.doorbell.dql.hz;  // the host's CONFIG_HZ, as the presets give it for DQL
  return i;
}

// An ITR interval as the coalescer's timer: no frame threshold (the EITR has none).
algo::IrqCoalescer::Params itr_moderation(Duration interval) {
  return algo::IrqCoalescer::Params{.usecs = interval, .frames = 0};
}

algo::IrqCoalescer::Params rx_irq_params(const PlatformNic::Params& p) {
  if (p.adaptive_rx) {  // the driver starts with net_dim_get_def_rx_moderation
    return moderation_of(algo::NetDim().default_profile());
  }
  if (p.itr != ItrMode::kFixed) {  // IGB_START_ITR / IXGBE_20K_ITR
    return itr_moderation(algo::IntelItr(itr_params(p)).interval());
  }
  return p.rx_coalesce;
}

algo::IrqCoalescer::Params tx_irq_params(const PlatformNic::Params& p) {
  if (p.tx_completion == TxCompletion::kIrq) {
    if (p.itr != ItrMode::kFixed && p.clean_tx_in_rx_poll) {
      return rx_irq_params(p);  // one vector, one EITR
    }
    return p.tx_coalesce;
  }
  // stmmac: every completed descriptor with the IC bit raises the DMA TX interrupt.
  return algo::IrqCoalescer::Params{.usecs = Duration::zero(), .frames = 1};
}

}  // namespace

const char* to_string(TxCompletion mode) {
  switch (mode) {
    case TxCompletion::kIrq:
      return "irq";
    case TxCompletion::kStmmac2014:
      return "stmmac_2014";
    case TxCompletion::kStmmacModern:
      return "stmmac_modern";
  }
  return "?";
}

const char* to_string(ItrMode mode) {
  switch (mode) {
    case ItrMode::kFixed:
      return "fixed";
    case ItrMode::kIgb:
      return "igb";
    case ItrMode::kIgbConservative:
      return "igb_conservative";
    case ItrMode::kIxgbe:
      return "ixgbe";
  }
  return "?";
}

std::optional<TxCompletion> tx_completion_from_string(std::string_view name) {
  for (TxCompletion m :
       {TxCompletion::kIrq, TxCompletion::kStmmac2014, TxCompletion::kStmmacModern}) {
    if (name == to_string(m)) {
      return m;
    }
  }
  return std::nullopt;
}

Validation PlatformNic::Params::validate() const {
  if (tx_ring_size < 1 || tx_ring_size > kMaxRingSize) {
    return ParamError{"tx_ring_size", "must be in [1, " + std::to_string(kMaxRingSize) + "], got " +
                                          std::to_string(tx_ring_size)};
  }
  if (descs_per_frame < 1 || descs_per_frame > tx_ring_size) {
    return ParamError{"descs_per_frame",
                      "must be in [1, tx_ring_size], got " + std::to_string(descs_per_frame)};
  }
  if (tx_stop_free < descs_per_frame - 1) {
    return ParamError{"tx_stop_free",
                      "must be >= descs_per_frame - 1 (an open queue must have room for a "
                      "frame), got " +
                          std::to_string(tx_stop_free)};
  }
  if (tx_stop_free >= tx_ring_size) {
    return ParamError{"tx_stop_free",
                      "must be < tx_ring_size, got " + std::to_string(tx_stop_free)};
  }
  if (tx_wake_free < tx_stop_free) {
    return ParamError{"tx_wake_free",
                      "must be >= tx_stop_free, got " + std::to_string(tx_wake_free)};
  }
  if (tx_wake_free >= tx_ring_size) {
    return ParamError{"tx_wake_free", "must be < tx_ring_size (else the queue never wakes), got " +
                                          std::to_string(tx_wake_free)};
  }
  if (auto err = doorbell.validate()) {
    return ParamError{"doorbell." + err->key, err->message};
  }
  if (doorbell_latency < Duration::zero()) {
    return ParamError{"doorbell_latency", "must be >= 0"};
  }
  if (dev_tx_weight < 1) {
    return ParamError{"dev_tx_weight", "must be >= 1, got " + std::to_string(dev_tx_weight)};
  }
  if (auto err = tx_coalesce.validate()) {
    return ParamError{"tx_coalesce." + err->key, err->message};
  }
  if (tx_coal_frames < 0) {
    return ParamError{"tx_coal_frames", "must be >= 0, got " + std::to_string(tx_coal_frames)};
  }
  if (tx_coal_timer < Duration::zero()) {
    return ParamError{"tx_coal_timer", "must be >= 0"};
  }
  if (tx_completion == TxCompletion::kStmmac2014 && tx_coal_timer == Duration::zero()) {
    return ParamError{"tx_coal_timer",
                      "must be > 0 for stmmac_2014 (the 2014 driver always "
                      "armed its TX timer)"};
  }
  if (tx_completion == TxCompletion::kStmmacModern && tx_coal_frames == 0 &&
      tx_coal_timer == Duration::zero()) {
    return ParamError{"tx_coal_timer",
                      "tx_coal_frames and tx_coal_timer are both 0: no TX completion would "
                      "ever be signalled"};
  }
  if (rx_ring_size < 1) {
    return ParamError{"rx_ring_size", "must be >= 1, got " + std::to_string(rx_ring_size)};
  }
  if (auto err = rx_coalesce.validate()) {
    return ParamError{"rx_coalesce." + err->key, err->message};
  }
  if (napi_budget < 1) {
    return ParamError{"napi_budget", "must be >= 1, got " + std::to_string(napi_budget)};
  }
  if (adaptive_rx && itr != ItrMode::kFixed) {
    return ParamError{"itr", "adaptive_rx (net_dim) and an Intel ITR mode are exclusive"};
  }
  if (itr_link_mbps < 1) {
    return ParamError{"itr_link_mbps", "must be >= 1, got " + std::to_string(itr_link_mbps)};
  }
  if (napi_defer_hard_irqs < 0 || napi_defer_hard_irqs > INT32_MAX) {
    return ParamError{"napi_defer_hard_irqs",
                      "must be in [0, 2147483647], got " + std::to_string(napi_defer_hard_irqs)};
  }
  if (gro_flush_timeout < Duration::zero()) {
    return ParamError{"gro_flush_timeout", "must be >= 0"};
  }
  if (threaded_wakeup < Duration::zero()) {
    return ParamError{"threaded_wakeup", "must be >= 0"};
  }
  if (busy_read < Duration::zero()) {
    return ParamError{"busy_read", "must be >= 0"};
  }
  if (prefer_busy_poll && busy_read == Duration::zero()) {
    return ParamError{"prefer_busy_poll", "needs busy_read > 0 (no application busy-polls)"};
  }
  if (busy_poll_budget < 1 || busy_poll_budget > 65535) {
    return ParamError{"busy_poll_budget",
                      "must be in [1, 65535], got " + std::to_string(busy_poll_budget)};
  }
  if (gro_max_size < 1 || gro_max_size > 65536) {
    return ParamError{"gro_max_size",
                      "must be in [1 B, 64 KiB] (GRO_LEGACY_MAX_SIZE: IPv4 without BIG TCP), got " +
                          std::to_string(gro_max_size) + " B"};
  }
  return std::nullopt;
}

void PlatformNic::EntryFifo::push_back(XmitEntry&& e) {
  if (size_ == slots_.size()) {
    const size_t cap = slots_.empty() ? 16 : slots_.size() * 2;
    std::vector<XmitEntry> next(cap);
    for (size_t i = 0; i < size_; ++i) {
      next[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    }
    slots_ = std::move(next);
    head_ = 0;
  }
  slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(e);
  ++size_;
}

PlatformNic::XmitEntry PlatformNic::EntryFifo::pop_front() {
  XmitEntry e = std::move(slots_[head_]);
  head_ = (head_ + 1) & (slots_.size() - 1);
  --size_;
  return e;
}

PlatformNic::PlatformNic(const Params& params, AnyQueue qdisc, const CpuCosts& costs)
    : params_(require_valid(params)),
      costs_(require_valid(costs)),
      qdisc_(std::move(qdisc)),
      doorbell_(params_.doorbell),
      tx_irq_(tx_irq_params(params_)),
      rx_irq_(rx_irq_params(params_)),
      gro_(gro_params(params_)),
      itr_(itr_params(params_)) {
  if (!qdisc_) {
    throw InvalidParams(ParamError{"qdisc", "no qdisc given"});
  }
  size_t cap = 1;
  while (cap < static_cast<size_t>(params_.tx_ring_size)) {
    cap <<= 1;
  }
  tx_ring_.resize(cap);
  tx_ring_mask_ = cap - 1;
  tx_free_descs_ = params_.tx_ring_size;
  releases_.reserve(cap);
  xmit_list_.reserve(64);
  napi_[0].rx = true;
  rx_ctx_ = 0;
  if (params_.clean_tx_in_rx_poll) {
    napi_[0].tx = true;
    tx_ctx_ = 0;
  } else {
    napi_[1].tx = true;
    tx_ctx_ = 1;
  }
}

void PlatformNic::attach(Wire* out, Wire* in, Cpu* cpu, NicSink* sink) {
  if (out == nullptr || cpu == nullptr || sink == nullptr) {
    throw std::invalid_argument("PlatformNic::attach: out, cpu and sink are required");
  }
  out_ = out;
  in_ = in;
  cpu_ = cpu;
  sink_ = sink;
  qdisc_drops_.set_sink(sink);
  qdisc_.set_observer(&qdisc_drops_);
  start_spin(Time::zero());  // busy_read: the application starts in recv()
}

// ---------------------------------------------------------------------------------------------
// Stack → qdisc → driver.

Verdict PlatformNic::send(Packet&& p, Time now) {
  if (params_.busy_read != Duration::zero() && (spin_until_ == kNever || spin_until_ <= now)) {
    // busy_read: a request/response application sends, then waits in recv() for the answer.
    start_spin(now);
  }
  ++stats_.sent_packets;
  stats_.sent_bytes += p.len;
  p.stamp(Stage::kQdiscIn, now);
  // __dev_xmit_skb: TCQ_F_CAN_BYPASS and an empty qdisc (§10; q->q.qlen counts gso_skb too).
  if (params_.qdisc_bypass && !in_qdisc_run_ && !doorbell_.stopped() && !qdisc_has_backlog()) {
    ++stats_.bypassed_packets;
    xmit_list_.clear();
    validate_into_list(std::move(p));
    in_qdisc_run_ = true;  // qdisc_run_begin
    direct_xmit(now);
    in_qdisc_run_ = false;
    return Verdict::kQueued;
  }
  qdisc_drops_.begin_enqueue(p.id);
  const Verdict v = qdisc_.enqueue(std::move(p), now);
  qdisc_drops_.end_enqueue();
  qdisc_run(now);
  return v;
}

void PlatformNic::qdisc_run(Time now) {
  if (in_qdisc_run_) {
    return;
  }
  in_qdisc_run_ = true;
  ++stats_.qdisc_runs;
  qdisc_watchdog_ = kNever;
  int64_t quota = params_.dev_tx_weight;
  Time cursor = now;
  bool throttled = false;
  // qdisc_restart loop; dequeue_skb refuses to dequeue while the queue is stopped.
  while (!doorbell_.stopped()) {
    int64_t packets = 0;
    if (!dequeue_list(now, packets)) {
      throttled = qdisc_.backlog_packets() > 0;
      break;
    }
    cursor = direct_xmit(cursor);
    quota -= packets;
    if (quota <= 0) {
      // __netif_schedule: continue in the NET_TX softirq once the CPU is free.
      if (qdisc_has_backlog() && !qdisc_run_pending_) {
        qdisc_run_pending_ = true;
        ++stats_.qdisc_reschedules;
        schedule(cursor, Action{ActionKind::kQdiscRun, kNoCtx, 0});
      }
      break;
    }
  }
  if (throttled) {
    // A non-work-conserving qdisc (TBF, HTB) holds packets: its watchdog reschedules it.
    if (auto at = qdisc_.next_ready(now); at && *at > now) {
      qdisc_watchdog_ = *at;
    }
  }
  in_qdisc_run_ = false;
}

bool PlatformNic::dequeue_list(Time now, int64_t& packets) {
  xmit_list_.clear();
  if (!requeue_.empty()) {
    // dequeue_skb: a requeued packet goes first, alone (already validated).
    XmitEntry e = requeue_.pop_front();
    requeue_bytes_ -= e.p.len;
    xmit_list_.push_back(std::move(e));
    packets = 1;
    return true;
  }
  std::optional<Packet> p = qdisc_.dequeue(now);
  if (!p) {
    return false;
  }
  packets = 1;
  // try_bulk_dequeue_skb (§3.2): bytelimit = qdisc_avail_bulklimit − first skb's len.
  int64_t bytelimit =
      params_.bulk_dequeue ? static_cast<int64_t>(doorbell_.bql_avail()) - p->len : 0;
  validate_into_list(std::move(*p));
  while (bytelimit > 0) {
    std::optional<Packet> next = qdisc_.dequeue(now);
    if (!next) {
      break;
    }
    bytelimit -= next->len;
    ++packets;
    validate_into_list(std::move(*next));
  }
  if (packets > 1) {
    ++stats_.bulk_dequeues;
    stats_.bulk_extra_packets += static_cast<uint64_t>(packets - 1);
  }
  return true;
}

void PlatformNic::validate_into_list(Packet&& p) {
  const uint32_t segs = p.gso_segs;
  if (params_.tso || segs <= 1 || segs > p.len) {
    xmit_list_.push_back(XmitEntry{std::move(p), true, false});
    return;
  }
  // validate_xmit_skb → skb_gso_segment: the NIC cannot take the super-packet (§3.1).
  ++stats_.gso_segmented;
  stats_.gso_segments += segs;
  for (uint32_t i = 0; i + 1 < segs; ++i) {
    xmit_list_.push_back(XmitEntry{make_gso_segment(p, i), false, true});
  }
  p.len = gso_segment_len(p, segs - 1);
  p.gso_index = static_cast<uint16_t>(segs - 1);
  p.gso_segs = 1;
  p.gso_size = 0;
  xmit_list_.push_back(XmitEntry{std::move(p), true, true});
}

Time PlatformNic::direct_xmit(Time cursor) {
  // dev_hard_start_xmit: xmit_more on all but the last; stop early if the driver stopped the
  // queue (netif_tx_queue_stopped: DRV_XOFF only, 4.20+) while packets remain.
  const size_t n = xmit_list_.size();
  size_t i = 0;
  for (; i < n; ++i) {
    if (tx_free_descs_ < params_.descs_per_frame) [[unlikely]] {
      // NETDEV_TX_BUSY (unreachable with validated stop thresholds): requeue from here.
      ++stats_.tx_busy;
      if (!doorbell_.driver_stopped()) {
        doorbell_.set_driver_stopped(true);
        ++stats_.ring_stops;
      }
      break;
    }
    const bool more = i + 1 < n;
    cursor = xmit_one(xmit_list_[i], more, cursor);
    if (more && doorbell_.driver_stopped()) {
      ++i;
      break;
    }
  }
  for (; i < n; ++i) {  // dev_requeue_skb: the rest waits in q->gso_skb
    ++stats_.requeues;
    requeue_bytes_ += xmit_list_[i].p.len;
    requeue_.push_back(std::move(xmit_list_[i]));
  }
  xmit_list_.clear();
  return cursor;
}

Time PlatformNic::xmit_one(XmitEntry& e, bool more, Time cursor) {
  Packet& p = e.p;
  Duration cost = costs_.per_tx_frame;
  if (e.sw_segment) {
    cost += costs_.per_gso_segment;
  }
  cursor = cpu_->run(cursor, cost);
  ++stats_.xmits;
  if (more) {
    ++stats_.xmit_more;
  }
  const uint32_t descs = static_cast<uint32_t>(params_.descs_per_frame);
  const uint32_t bytes = p.len;
  TxSlot& s = slot(tx_posted_);
  s.release = release_of(p, e.last_segment);
  s.descs = descs;
  s.segs = (params_.tso && p.gso_segs > 1 && p.gso_segs <= p.len) ? p.gso_segs : 1;
  s.segs_sent = 0;
  p.stamp(Stage::kRingIn, cursor);
  s.frame = std::move(p);
  ++tx_posted_;
  tx_free_descs_ -= descs;
  tx_ring_bytes_ += bytes;
  tx_unsent_bytes_ += bytes;
  s.ic = stmmac_mitigation(descs, cursor);
  if (s.ic) {
    ++stats_.ic_descriptors;
  }
  // Ring nearly full: netif_tx_stop_queue before __netdev_tx_sent_queue, so a deferred batch
  // is kicked at once (§2.6, §3.3).
  if (tx_free_descs_ <= params_.tx_stop_free && !doorbell_.driver_stopped()) {
    doorbell_.set_driver_stopped(true);
    ++stats_.ring_stops;
  }
  const bool stack_was_stopped = doorbell_.stack_stopped();
  ++xmits_since_kick_;
  const bool kick = doorbell_.on_sent(bytes, more);
  if (!stack_was_stopped && doorbell_.stack_stopped()) {
    ++stats_.bql_stops;
  }
  if (kick) {
    cursor = cpu_->run(cursor, costs_.per_kick + params_.doorbell.kick_cost);
    ++stats_.kicks;
    if (xmits_since_kick_ > 1) {
      ++stats_.batched_kicks;
    }
    stats_.largest_kick_batch = std::max(stats_.largest_kick_batch, xmits_since_kick_);
    xmits_since_kick_ = 0;
    schedule(cursor + params_.doorbell_latency, Action{ActionKind::kDoorbell, kNoCtx, tx_posted_});
  }
  return cursor;
}

bool PlatformNic::stmmac_mitigation(uint32_t descs, Time t) {
  switch (params_.tx_completion) {
    case TxCompletion::kIrq:
      return false;
    case TxCompletion::kStmmac2014:
      // §7.3, 2014: below tx_coal_frames mod_timer (pushed out), else IC and reset the count.
      tx_count_frames_ += descs;
      if (params_.tx_coal_frames > tx_count_frames_) {
        tx_timer_at_ = t + params_.tx_coal_timer;
        return false;
      }
      tx_count_frames_ = 0;
      return true;
    case TxCompletion::kStmmacModern: {
      // §7.3, current IC decision; tx_packets = descriptors of this skb.
      tx_count_frames_ += descs;
      const int64_t frames = params_.tx_coal_frames;
      const int64_t tx_packets = descs;
      bool set_ic = false;
      if (frames == 0) {
        set_ic = false;
      } else if (tx_packets > frames) {
        set_ic = true;
      } else if (tx_count_frames_ % frames < tx_packets) {
        set_ic = true;
      }
      if (set_ic) {
        tx_count_frames_ = 0;
        return true;
      }
      arm_tx_timer(t);
      return false;
    }
  }
  return false;
}

void PlatformNic::arm_tx_timer(Time t) {
  // stmmac_tx_timer_arm (2023+): hrtimer_start restarts a pending timer, unless the TX NAPI is
  // scheduled, in which case the timer is cancelled (it is armed again after the poll).
  if (params_.tx_coal_timer == Duration::zero()) {
    return;
  }
  if (napi_[tx_ctx_].scheduled) {
    tx_timer_at_ = kNever;
  } else {
    tx_timer_at_ = t + params_.tx_coal_timer;
  }
}

// ---------------------------------------------------------------------------------------------
// Hardware TX engine.

void PlatformNic::tx_engine_start(Time t) {
  if (tx_engine_busy_ || tx_engine_waiting_ || tx_hw_next_ >= tx_visible_) {
    return;
  }
  const Time free = out_->free_at(t);
  if (free > t) {  // PAUSE: look again when it ends (it may be extended meanwhile)
    tx_engine_waiting_ = true;
    schedule(free, Action{ActionKind::kTxEngine, kNoCtx, 0});
    return;
  }
  TxSlot& s = slot(tx_hw_next_);
  Packet frame;
  if (s.segs == 1) {
    frame = std::move(s.frame);
  } else {  // TSO: the hardware cuts the super-packet into gso_segs frames
    if (s.segs_sent + 1 < s.segs) {
      frame = make_gso_segment(s.frame, s.segs_sent);
    } else {
      const uint32_t len = gso_segment_len(s.frame, s.segs_sent);
      frame = std::move(s.frame);
      frame.len = len;
      frame.gso_index = static_cast<uint16_t>(s.segs_sent);
      frame.gso_segs = 1;
      frame.gso_size = 0;
    }
  }
  ++s.segs_sent;
  tx_unsent_bytes_ -= frame.len;
  ++stats_.tx_frames;
  stats_.tx_bytes += frame.len;
  const Wire::TxTiming timing = out_->transmit(std::move(frame), t);
  tx_engine_busy_ = true;
  schedule(timing.last_bit, Action{ActionKind::kTxDone, kNoCtx, 0});
}

void PlatformNic::on_tx_done(Time t) {
  tx_engine_busy_ = false;
  TxSlot& s = slot(tx_hw_next_);
  if (s.segs_sent == s.segs) {
    ++tx_hw_next_;
    ++tx_done_;
    ++stats_.tx_completions;
    on_descriptor_completed(s, t);
  }
  tx_engine_start(t);
}

void PlatformNic::on_descriptor_completed(const TxSlot& s, Time t) {
  if (params_.tx_completion != TxCompletion::kIrq) {
    if (!s.ic) {
      return;
    }
    ++ic_done_unclaimed_;
  }
  const bool fire = tx_irq_.on_event(t);
  tx_irq_at_ = timer_of(tx_irq_);
  if (fire) {
    raise_irq(tx_ctx_, IrqCause::kTx, t);
  }
}

// ---------------------------------------------------------------------------------------------
// TX completion processing.

uint64_t PlatformNic::claim_tx_done() {
  const uint64_t n = tx_done_ - tx_claimed_;
  if (params_.tx_completion != TxCompletion::kIrq) {
    for (uint64_t i = tx_claimed_; i < tx_done_; ++i) {
      if (slot(i).ic) {
        --ic_done_unclaimed_;
      }
    }
  }
  tx_claimed_ = tx_done_;
  return n;
}

void PlatformNic::finish_tx_clean(uint64_t n, Time t) {
  if (n == 0) {
    return;
  }
  releases_.clear();
  uint64_t bytes = 0;
  for (uint64_t k = 0; k < n; ++k) {
    const TxSlot& s = slot(tx_cleaned_);
    tx_free_descs_ += s.descs;
    tx_ring_bytes_ -= s.release.bytes;
    bytes += s.release.bytes;
    ++itr_sample_.tx.packets;
    itr_sample_.tx.bytes += static_cast<uint32_t>(s.release.bytes);
    releases_.push_back(s.release);
    ++tx_cleaned_;
  }
  ++stats_.tx_clean_passes;
  stats_.tx_cleaned += n;
  stats_.max_tx_clean_batch = std::max(stats_.max_tx_clean_batch, n);
  // netdev_tx_completed_queue once per pass (§2.4, §2.6), then the driver's own wake check.
  const bool stack_was_stopped = doorbell_.stack_stopped();
  bool reschedule =
      doorbell_.on_completed(static_cast<uint32_t>(n), static_cast<uint32_t>(bytes), t);
  if (stack_was_stopped && !doorbell_.stack_stopped()) {
    ++stats_.bql_wakes;
  }
  if (const algo::Dql* dql = doorbell_.dql()) {
    stats_.bql_limit_high_water = std::max<uint64_t>(stats_.bql_limit_high_water, dql->limit());
  }
  if (doorbell_.driver_stopped() && tx_free_descs_ > params_.tx_wake_free) {
    reschedule |= doorbell_.set_driver_stopped(false);
    ++stats_.ring_wakes;
  }
  if (!doorbell_.stopped() && (reschedule || qdisc_has_backlog())) {
    qdisc_run(t);
  }
  // TSQ: the skb destructors run after the clean (their tasklet after NET_TX).
  for (const TxRelease& r : releases_) {
    sink_->tx_released(r, t);
  }
}

void PlatformNic::tx_timer_fire(Time t) {
  tx_timer_at_ = kNever;
  ++stats_.tx_timer_fires;
  if (params_.tx_completion == TxCompletion::kStmmac2014) {
    // stmmac_tx_timer → stmmac_tx_clean directly, in timer context.
    const uint64_t k = claim_tx_done();
    const Time done =
        cpu_->run(t, costs_.per_interrupt + costs_.per_tx_clean * static_cast<int64_t>(k));
    if (k > 0) {
      schedule(done, Action{ActionKind::kTxCleanDone, kNoCtx, k});
    }
    return;
  }
  // stmmac_modern: napi_schedule_prep on the TX NAPI (disables the DMA TX interrupt).
  if (!napi_[tx_ctx_].scheduled) {
    raise_irq(tx_ctx_, IrqCause::kTimer, t);
  }
}

// ---------------------------------------------------------------------------------------------
// RX and NAPI.

void PlatformNic::rx_arrival(Time t) {
  std::optional<Packet> f = in_->pop_arrived(t);
  next_arrival_ = kNever;
  receive(std::move(*f), t);
}

void PlatformNic::receive(Packet&& frame, Time t) {
  ++stats_.rx_arrived;
  if (rx_ring_.size() >= static_cast<size_t>(params_.rx_ring_size)) {
    ++stats_.rx_missed;  // no free descriptor: the MAC drops it (rx_missed / overflow)
    if (observer_ != nullptr) {
      observer_->on_drop(t, frame, DropReason::kRingFull);
    }
    return;
  }
  rx_ring_.push_back(std::move(frame));
  stats_.max_rx_ring = std::max<uint64_t>(stats_.max_rx_ring, rx_ring_.size());
  Napi& rx = napi_[rx_ctx_];
  if (spinning(t) && !rx.scheduled) {
    // napi_busy_loop: the spinning application sees the descriptor and takes the NAPI
    // (NAPIF_STATE_SCHED | NAPIF_STATE_IN_BUSY_POLL) before any interrupt could; if the
    // softirq owns it, the spinner waits for the data instead.
    end_spin(t);
    rx.scheduled = true;
    rx.owner = Owner::kBusyLoop;
    ++stats_.busy_poll_sessions;
    schedule(t, Action{ActionKind::kNapiPoll, rx_ctx_, 0});
  }
  const bool fire = rx_irq_.on_event(t);
  rx_irq_at_ = timer_of(rx_irq_);
  if (fire) {
    raise_irq(rx_ctx_, IrqCause::kRx, t);
  }
}

void PlatformNic::raise_irq(uint8_t ctx, IrqCause cause, Time t) {
  if (cause == IrqCause::kRx) {
    ++stats_.rx_irqs;
  } else if (cause == IrqCause::kTx) {
    ++stats_.tx_irqs;
  }
  Napi& n = napi_[ctx];
  if (n.scheduled) {
    if (n.owner != Owner::kSoftirq) {
      // The application owns the NAPI: the handler runs and masks the vector, and
      // napi_schedule_prep fails, setting NAPI_STATE_MISSED (busy_poll_stop clears it).
      ++stats_.busy_poll_irqs;
      n.missed = true;
      rx_irq_.mask();
      if (n.tx) {
        tx_irq_.mask();
      }
      sync_irq_timers();
      cpu_->run(t, costs_.per_interrupt);
    }
    return;
  }
  if (n.rx) {
    ++rx_dim_events_;  // u16, wraps as the drivers' event counters do
  }
  // Hard IRQ: mask the device's interrupt(s) and schedule NAPI (§7.2).
  napi_schedule(ctx, t, costs_.per_interrupt);
}

// NAPI_STATE_SCHED is taken: mask the context's interrupts and run its poll — in the NET_RX
// softirq, or in its kthread (threaded NAPI: wake_up_process and a context switch first).
void PlatformNic::napi_schedule(uint8_t ctx, Time t, Duration cost) {
  Napi& n = napi_[ctx];
  n.scheduled = true;
  n.owner = Owner::kSoftirq;
  if (n.rx) {
    rx_irq_.mask();
  }
  if (n.tx) {
    tx_irq_.mask();
  }
  sync_irq_timers();
  if (params_.threaded) {
    cost += params_.threaded_wakeup;
    ++stats_.threaded_wakeups;
  }
  const Time t1 = cpu_->run(t, cost);
  schedule(t1, Action{ActionKind::kNapiPoll, ctx, 0});
}

// napi_watchdog: the gro_flush_timeout hrtimer schedules the NAPI unless it is already
// scheduled (relaxed napi_schedule_prep: no MISSED, it is not a device interrupt). The hrtimer
// interrupt costs per_interrupt.
void PlatformNic::napi_timer_fire(Time t) {
  napi_timer_at_ = kNever;
  ++stats_.napi_timer_fires;
  if (napi_[rx_ctx_].scheduled) {
    return;
  }
  ++stats_.napi_timer_polls;
  napi_schedule(rx_ctx_, t, costs_.per_interrupt);
}

void PlatformNic::napi_poll(uint8_t ctx, Time t) {
  Napi& n = napi_[ctx];
  ++stats_.polls;
  n.work = 0;
  n.budget = n.owner == Owner::kSoftirq ? params_.napi_budget : params_.busy_poll_budget;
  const Time t1 = cpu_->run(t, costs_.per_poll);
  if (n.tx) {
    // TX clean first (stmmac_poll / igb_poll order); it does not consume the budget.
    const uint64_t k = claim_tx_done();
    if (k > 0) {
      const Time t2 = cpu_->run(t1, costs_.per_tx_clean * static_cast<int64_t>(k));
      schedule(t2, Action{ActionKind::kTxCleanDone, ctx, k});
      return;
    }
  }
  schedule(t1, Action{ActionKind::kNapiRx, ctx, 0});
}

void PlatformNic::rx_next(uint8_t ctx, Time t) {
  Napi& n = napi_[ctx];
  if (n.rx && n.work < n.budget && !rx_ring_.empty()) {
    const Packet& f = rx_ring_.front();
    // With GRO the frame pays the driver's and dev_gro_receive's share; the stack's share
    // (per_rx_packet) is paid per packet GRO hands up (gro_charge).
    const Duration per_frame =
        params_.gro ? costs_.per_rx_frame - costs_.per_rx_packet : costs_.per_rx_frame;
    const Duration cost = per_frame + costs_.copy(f.len);
    stats_.rx_cpu += cost;
    const Time done = cpu_->run(t, cost);
    schedule(done, Action{ActionKind::kRxFrameDone, ctx, 0});
    return;
  }
  poll_end(ctx, t);
}

void PlatformNic::rx_frame_done(uint8_t ctx, Time t) {
  Napi& n = napi_[ctx];
  Packet f = rx_ring_.pop_front();  // the descriptor is refilled
  ++n.work;
  ++stats_.rx_delivered;
  stats_.rx_bytes += f.len;
  ++itr_sample_.rx.packets;  // the ring container's total_packets / total_bytes
  itr_sample_.rx.bytes += f.len;
  if (n.owner != Owner::kSoftirq) {
    ++stats_.busy_poll_frames;
  }
  if (params_.gro) {
    // napi_gro_receive: the frame joins a held packet, is held, or completes packets.
    const algo::GroHeader h = sink_->gro_header(f);
    gro_.receive(std::move(f), h, t);
    if (gro_charge(ctx, t, 0)) {
      return;  // the stack runs first; gro_deliver continues the poll
    }
    rx_next(ctx, t);
    return;
  }
  f.stamp(Stage::kRxDeliver, t);
  sink_->deliver(std::move(f), t);
  rx_next(ctx, t);
}

// GRO's completed packets go up the stack (netif_receive_skb → ip_rcv → tcp_v4_rcv): each
// costs per_rx_packet on the CPU; they are delivered when that work ends. Returns false when
// nothing was completed.
bool PlatformNic::gro_charge(uint8_t ctx, Time t, uint64_t then_end_poll) {
  const uint64_t k = gro_.completed_count();
  if (k == 0) {
    return false;
  }
  const Duration cost = costs_.per_rx_packet * static_cast<int64_t>(k);
  stats_.rx_cpu += cost;
  const Time done = cpu_->run(t, cost);
  schedule(done, Action{ActionKind::kGroDeliver, ctx, then_end_poll});
  return true;
}

void PlatformNic::gro_deliver(uint8_t ctx, Time t, uint64_t then_end_poll) {
  while (gro_.has_completed()) {
    algo::GroPacket p = gro_.pop_completed();
    ++stats_.rx_stack_packets;
    for (Packet& f : p.frames) {
      f.stamp(Stage::kRxDeliver, t);
    }
    if (p.frames.size() == 1) {
      sink_->deliver(std::move(p.frames.front()), t);
    } else {
      sink_->deliver_merged(p.frames, t);
    }
    gro_.recycle(std::move(p));
  }
  if (then_end_poll != 0) {
    poll_end(ctx, t);
  } else {
    rx_next(ctx, t);
  }
}

void PlatformNic::poll_end(uint8_t ctx, Time t) {
  Napi& n = napi_[ctx];
  const bool exhausted = n.rx && n.work >= n.budget;
  const bool busy_loop = n.owner == Owner::kBusyLoop;
  if (n.rx && !exhausted && !busy_loop && !n.decided) {
    decide_completion(n);  // before the flush: gro_flush_timeout keeps recent packets
  }
  if (n.rx && params_.gro && !busy_loop && !n.flushed && gro_.holding() > 0) {
    // napi_complete_done → napi_gro_flush(n, !!timeout): with a timeout only packets older
    // than the current jiffy; otherwise (and in __napi_poll with the budget used up at
    // HZ < 1000) everything. The application's own polls flush nothing: napi_complete_done
    // returns at once while NAPI_STATE_IN_BUSY_POLL is set; busy_poll_stop's poll flushes.
    n.flushed = true;
    gro_.flush(t, !exhausted && n.timeout > Duration::zero());
    if (gro_charge(ctx, t, 1)) {
      return;  // gro_deliver comes back here
    }
  }
  n.flushed = false;
  if (busy_loop) {
    busy_poll_stop(ctx, t);  // the socket has data: sk_busy_loop_end ends the loop
    return;
  }
  if (n.owner == Owner::kBusyStop) {
    n.owner = Owner::kSoftirq;
    start_spin(t);  // the application has its data and calls recv() again
    if (exhausted) {
      // __busy_poll_stop: more work. Without the timer, __napi_schedule hands it to the
      // softirq; with it (prefer busy poll) the NAPI is released, the IRQ stays masked.
      if (!n.skip_schedule) {
        schedule(t, Action{ActionKind::kNapiPoll, ctx, 0});
        return;
      }
      n.scheduled = false;
      start_spin(t);
      return;
    }
    // The driver's napi_complete_done, as after any poll.
  }
  const bool modern = params_.tx_completion == TxCompletion::kStmmacModern;
  if (exhausted) {
    // Budget used up: stay scheduled (interrupt still masked) and poll again.
    ++stats_.budget_exhausted;
    if (n.tx && modern && tx_posted_ != tx_cleaned_) {
      arm_tx_timer(t);  // NAPI still scheduled: cancels the timer
    }
    schedule(t, Action{ActionKind::kNapiPoll, ctx, 0});
    return;
  }
  complete_poll(ctx, t);
}

// napi_complete_done's deferral (net/core/dev.c, Linux 5.7+ "net: napi: add hard irqs
// deferral feature"; per-NAPI values since 6.13): a poll that did work reloads the defer count
// and, with GRO, takes gro_flush_timeout as its timeout; while the count lasts, each completion
// uses it up by one and — with a timeout — keeps the IRQ masked (ret false).
void PlatformNic::decide_completion(Napi& n) {
  n.decided = true;
  n.timeout = Duration::zero();
  n.unmask = true;
  if (n.work > 0) {
    if (params_.gro) {
      n.timeout = params_.gro_flush_timeout;
    }
    n.defer_count = params_.napi_defer_hard_irqs;
  }
  if (n.defer_count > 0) {
    --n.defer_count;
    n.timeout = params_.gro_flush_timeout;
    if (n.timeout > Duration::zero()) {
      n.unmask = false;
    }
  }
}

// napi_complete_done + the driver's IRQ re-enable (igb_poll, ixgbe_poll: only when it returned
// true). A completion with work wakes the application, which calls recv() again (busy_read).
void PlatformNic::complete_poll(uint8_t ctx, Time t) {
  Napi& n = napi_[ctx];
  n.scheduled = false;
  if (n.rx) {
    if (!n.decided) {
      decide_completion(n);
    }
    n.decided = false;
    if (n.timeout > Duration::zero()) {
      napi_timer_at_ = t + n.timeout;  // hrtimer_start: restarts a pending timer
    }
    if (n.work > 0) {
      start_spin(t);  // the softirq delivered: the woken application calls recv() again
    }
    if (!n.unmask) {
      ++stats_.deferred_completions;  // the IRQ stays masked; the timer polls next
      return;
    }
  }
  reenable_irqs(ctx, t);
}

void PlatformNic::reenable_irqs(uint8_t ctx, Time t) {
  Napi& n = napi_[ctx];
  const bool modern = params_.tx_completion == TxCompletion::kStmmacModern;
  if (n.rx && params_.adaptive_rx) {
    // net_dim with the queue's running counters, as mlx5/bnxt do after napi_complete_done; the
    // new profile is applied at once (Linux: from a work item, microseconds later).
    const algo::NetDim::Sample sample{.time = t,
                                      .packets = static_cast<uint32_t>(stats_.rx_delivered),
                                      .bytes = static_cast<uint32_t>(stats_.rx_bytes),
                                      .events = rx_dim_events_};
    if (rx_dim_.on_interrupt(sample)) {
      rx_irq_.set_params(moderation_of(rx_dim_.profile()));
      rx_dim_.profile_applied();
      ++stats_.dim_changes;
    }
  }
  if (n.rx && params_.itr != ItrMode::kFixed) {
    update_itr(t);
  }
  bool fire_rx = false;
  bool fire_tx = false;
  if (n.rx) {
    const uint64_t left = rx_ring_.size();
    if (rx_irq_.pending() > left) {
      rx_irq_.consumed(rx_irq_.pending() - left);
    }
    fire_rx = rx_irq_.unmask(t);
  }
  if (n.tx) {
    const uint64_t left =
        params_.tx_completion == TxCompletion::kIrq ? tx_done_ - tx_claimed_ : ic_done_unclaimed_;
    if (tx_irq_.pending() > left) {
      tx_irq_.consumed(tx_irq_.pending() - left);
    }
    fire_tx = tx_irq_.unmask(t);
    if (modern && tx_posted_ != tx_cleaned_) {
      arm_tx_timer(t);  // stmmac_napi_poll_tx: pending packets re-arm the timer
    }
  }
  sync_irq_timers();
  if (fire_rx || fire_tx) {
    raise_irq(ctx, fire_rx ? IrqCause::kRx : IrqCause::kTx, t);
  }
}

// igb_set_itr / ixgbe_set_itr with the ring totals since the last update; the new interval is
// written to the vector's EITR (both coalescers when one vector serves RX and TX).
void PlatformNic::update_itr(Time t) {
  itr_sample_.time = t;
  const bool changed = itr_.update(itr_sample_);
  itr_sample_ = algo::IntelItr::Sample{};
  if (!changed) {
    return;
  }
  ++stats_.itr_changes;
  const algo::IrqCoalescer::Params p = itr_moderation(itr_.interval());
  rx_irq_.set_params(p);
  if (params_.clean_tx_in_rx_poll && params_.tx_completion == TxCompletion::kIrq) {
    tx_irq_.set_params(p);
  }
}

// busy_poll_stop (net/core/dev.c): MISSED and IN_BUSY_POLL are cleared; with
// SO_PREFER_BUSY_POLL and both napi_defer_hard_irqs and gro_flush_timeout set, the defer count
// is reloaded and the hrtimer armed (skip_schedule); then napi->poll runs once more.
void PlatformNic::busy_poll_stop(uint8_t ctx, Time t) {
  Napi& n = napi_[ctx];
  n.missed = false;
  n.skip_schedule = false;
  if (params_.prefer_busy_poll) {
    n.defer_count = params_.napi_defer_hard_irqs;
    if (n.defer_count > 0 && params_.gro_flush_timeout > Duration::zero()) {
      napi_timer_at_ = t + params_.gro_flush_timeout;
      n.skip_schedule = true;
    }
  }
  n.owner = Owner::kBusyStop;
  schedule(t, Action{ActionKind::kNapiPoll, ctx, 0});
}

// The application is back in recv() with an empty socket: it spins for busy_read.
void PlatformNic::start_spin(Time t) {
  if (params_.busy_read == Duration::zero() || cpu_ == nullptr) {
    return;
  }
  end_spin(t);
  spin_from_ = t;
  spin_until_ = t + params_.busy_read;
  spin_cpu0_ = cpu_->stats().busy;
}

// The spin ends (data arrived, or busy_read ran out: the application sleeps). The core was busy
// for the whole window: what it did not spend on modelled work it spent spinning.
void PlatformNic::end_spin(Time t) {
  if (spin_until_ == kNever) {
    return;
  }
  const Time end = min(max(t, spin_from_), spin_until_);
  const Duration work = cpu_->stats().busy - spin_cpu0_;
  const Duration spin = max(end - spin_from_ - work, Duration::zero());
  cpu_->add_spin(spin);
  stats_.busy_spin += spin;
  spin_until_ = kNever;
}

// ---------------------------------------------------------------------------------------------
// Event loop.

void PlatformNic::dispatch(Time t, const Action& a) {
  switch (a.kind) {
    case ActionKind::kDoorbell:
      tx_visible_ = std::max(tx_visible_, a.value);
      tx_engine_start(t);
      break;
    case ActionKind::kTxEngine:
      tx_engine_waiting_ = false;
      tx_engine_start(t);
      break;
    case ActionKind::kTxDone:
      on_tx_done(t);
      break;
    case ActionKind::kNapiPoll:
      napi_poll(a.ctx, t);
      break;
    case ActionKind::kNapiRx:
      rx_next(a.ctx, t);
      break;
    case ActionKind::kTxCleanDone:
      finish_tx_clean(a.value, t);
      if (a.ctx != kNoCtx) {
        rx_next(a.ctx, t);  // ends the poll if this context has no RX work
      }
      break;
    case ActionKind::kRxFrameDone:
      rx_frame_done(a.ctx, t);
      break;
    case ActionKind::kQdiscRun:
      qdisc_run_pending_ = false;
      qdisc_run(t);
      break;
    case ActionKind::kGroDeliver:
      gro_deliver(a.ctx, t, a.value);
      break;
  }
}

std::optional<Time> PlatformNic::next_event() const {
  Time best = min(min(rx_irq_at_, tx_irq_at_), min(tx_timer_at_, qdisc_watchdog_));
  best = min(best, min(agenda_next_, min(napi_timer_at_, spin_until_)));
  if (in_ != nullptr) {
    best = min(best, next_arrival());
  }
  if (best == kNever) {
    return std::nullopt;
  }
  return best;
}

void PlatformNic::advance(Time now) {
  enum Source {
    kArrival,
    kRxTimer,
    kTxTimer,
    kStmmacTimer,
    kWatchdog,
    kAgenda,
    kNapiTimer,
    kSpinEnd
  };
  for (;;) {
    // The earliest event due by `now`; ties go to the first source in this order.
    Time best = next_arrival();
    Source src = kArrival;
    auto pick = [&](Time at, Source s) {
      if (at < best) {
        best = at;
        src = s;
      }
    };
    pick(rx_irq_at_, kRxTimer);
    pick(tx_irq_at_, kTxTimer);
    pick(tx_timer_at_, kStmmacTimer);
    pick(qdisc_watchdog_, kWatchdog);
    pick(agenda_next_, kAgenda);
    pick(napi_timer_at_, kNapiTimer);
    pick(spin_until_, kSpinEnd);
    if (best > now) {
      return;
    }
    switch (src) {
      case kArrival:
        rx_arrival(best);
        break;
      case kRxTimer: {
        const bool fire = rx_irq_.expire(best);
        rx_irq_at_ = timer_of(rx_irq_);
        if (fire) {
          raise_irq(rx_ctx_, IrqCause::kRx, best);
        }
        break;
      }
      case kTxTimer: {
        const bool fire = tx_irq_.expire(best);
        tx_irq_at_ = timer_of(tx_irq_);
        if (fire) {
          raise_irq(tx_ctx_, IrqCause::kTx, best);
        }
        break;
      }
      case kStmmacTimer:
        tx_timer_fire(best);
        break;
      case kWatchdog:
        qdisc_watchdog_ = kNever;
        ++stats_.qdisc_watchdogs;
        qdisc_run(best);
        break;
      case kAgenda: {
        auto due = agenda_.pop_due(best);
        agenda_next_ = agenda_.next_time().value_or(kNever);
        dispatch(due->first, due->second);
        break;
      }
      case kNapiTimer:
        napi_timer_fire(best);
        break;
      case kSpinEnd:
        end_spin(best);  // busy_read ran out: the application sleeps until woken
        break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Observability.

NicCounters PlatformNic::counters() const {
  NicCounters c;
  c.tx_packets = stats_.tx_frames;
  c.tx_bytes = stats_.tx_bytes;
  c.tx_qdisc_drops = qdisc_.stats().dropped_packets;
  c.rx_packets = stats_.rx_delivered;
  c.rx_bytes = stats_.rx_bytes;
  c.rx_drops = stats_.rx_missed;
  c.interrupts = stats_.rx_irqs + stats_.tx_irqs;
  c.doorbells = stats_.kicks;
  return c;
}

NicQueueSample PlatformNic::queue_sample() const {
  NicQueueSample s;
  s.qdisc_packets = qdisc_.backlog_packets() + requeue_.size();
  s.qdisc_bytes = qdisc_.backlog_bytes() + requeue_bytes_;
  s.ring_packets = tx_posted_ - tx_cleaned_;
  s.ring_bytes = tx_ring_bytes_;
  const algo::Dql* dql = doorbell_.dql();
  s.bql_limit = dql != nullptr ? dql->limit() : 0;
  return s;
}

std::string PlatformNic::describe() const {
  const Params& p = params_;
  std::string s = "platform_nic tx_ring=" + std::to_string(p.tx_ring_size) +
                  " (stop<=" + std::to_string(p.tx_stop_free) + " wake>" +
                  std::to_string(p.tx_wake_free) + ")";
  if (p.descs_per_frame != 1) {
    s += " descs_per_frame=" + std::to_string(p.descs_per_frame);
  }
  s += " rx_ring=" + std::to_string(p.rx_ring_size);
  s += std::string(" tso=") + on_off(p.tso);
  s += std::string(" bql=") + on_off(p.doorbell.bql);
  s += std::string(" xmit_more=") + on_off(p.doorbell.uses_xmit_more);
  s += " doorbell_latency=" + format_duration(p.doorbell_latency);
  s += std::string(" tx_completion=") + to_string(p.tx_completion);
  if (p.tx_completion == TxCompletion::kIrq) {
    s += "(" + format_coalesce("tx", p.tx_coalesce) + ")";
  } else {
    s += "(tx_coal_frames=" + std::to_string(p.tx_coal_frames) +
         " tx_coal_timer=" + format_duration(p.tx_coal_timer) + ")";
  }
  s += std::string(" clean_tx_in_rx_poll=") + on_off(p.clean_tx_in_rx_poll);
  s += " " + (p.adaptive_rx ? std::string("adaptive-rx=on(net_dim)")
                            : format_coalesce("rx", p.rx_coalesce));
  s += " napi_budget=" + std::to_string(p.napi_budget);
  if (p.gro) {
    s += " gro=on gro_max_size=" + std::to_string(p.gro_max_size);
  }
  if (p.itr != ItrMode::kFixed) {
    s += std::string(" itr=") + to_string(p.itr);
  }
  if (p.napi_defer_hard_irqs != 0 || p.gro_flush_timeout != Duration::zero()) {
    s += " napi_defer_hard_irqs=" + std::to_string(p.napi_defer_hard_irqs) +
         " gro_flush_timeout=" + format_duration(p.gro_flush_timeout);
  }
  if (p.threaded) {
    s += " threaded=on";
  }
  if (p.busy_read != Duration::zero()) {
    s += " busy_read=" + format_duration(p.busy_read) +
         " busy_poll_budget=" + std::to_string(p.busy_poll_budget) +
         " prefer_busy_poll=" + on_off(p.prefer_busy_poll);
  }
  s += std::string(" bypass=") + on_off(p.qdisc_bypass);
  s += std::string(" bulk_dequeue=") + on_off(p.bulk_dequeue);
  s += " dev_tx_weight=" + std::to_string(p.dev_tx_weight);
  return s;
}

}  // namespace nicsim::model
