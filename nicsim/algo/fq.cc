#include "nicsim/algo/fq.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <string>

namespace nicsim::algo {

namespace {

constexpr uint64_t kNoRate = ~uint64_t{0};  // flow_max_rate = ~0UL: no cap

ParamError err(std::string key, std::string msg) {
  return ParamError{std::move(key), std::move(msg)};
}

}  // namespace

Validation Fq::Params::validate() const {
  if (limit < 1 || limit > int64_t{UINT32_MAX}) {
    return err("limit", "must be in 1..4294967295 packets, got " + std::to_string(limit));
  }
  if (flow_limit < 1 || flow_limit > int64_t{UINT32_MAX}) {
    return err("flow_limit", "must be in 1..4294967295 packets, got " + std::to_string(flow_limit));
  }
  if (quantum < 1 || quantum > kMaxQuantum) {  // fq_change: "invalid quantum"
    return err("quantum", "must be in 1..1048576 bytes, got " + std::to_string(quantum));
  }
  if (initial_quantum < 0 || initial_quantum > INT32_MAX) {  // iq_range: 0..INT_MAX
    return err("initial_quantum",
               "must be in 0..2147483647 bytes, got " + std::to_string(initial_quantum));
  }
  // fq_change: buckets_log 1..ilog2(256 * 1024); tc takes the bucket count.
  if (buckets < 2 || buckets > (1 << 18) || !std::has_single_bit(static_cast<uint64_t>(buckets))) {
    return err("buckets", "must be a power of two in 2..262144, got " + std::to_string(buckets));
  }
  if (refill_delay < Duration::zero()) {
    return err("refill_delay", "must be >= 0");
  }
  if (orphan_mask < 0 || orphan_mask > int64_t{UINT32_MAX}) {
    return err("orphan_mask", "must be in 0..4294967295, got " + std::to_string(orphan_mask));
  }
  if (ce_threshold && *ce_threshold < Duration::zero()) {
    return err("ce_threshold", "must be >= 0");
  }
  if (horizon < Duration::zero()) {
    return err("horizon", "must be >= 0");
  }
  if (offload_horizon < Duration::zero()) {
    return err("offload_horizon", "must be >= 0");
  }
  for (size_t i = 0; i < priomap.size(); ++i) {  // fq_load_priomap
    if (priomap[i] < 0 || priomap[i] >= kBands) {
      return err("priomap", "entry " + std::to_string(i) + " must be a band 0..2, got " +
                                std::to_string(priomap[i]));
    }
  }
  for (size_t i = 0; i < weights.size(); ++i) {  // fq_load_weights
    if (weights[i] < kMinWeight) {
      return err("weights", "entry " + std::to_string(i) +
                                " must be >= 16384 (FQ_MIN_WEIGHT), got " +
                                std::to_string(weights[i]));
    }
  }
  return std::nullopt;
}

Fq::Fq(const Params& params)
    : params_(require_valid(params)),
      quantum_(static_cast<int32_t>(params.quantum)),
      initial_quantum_(static_cast<int32_t>(params.initial_quantum)),
      limit_(static_cast<uint64_t>(params.limit)),
      flow_limit_(static_cast<uint32_t>(params.flow_limit)),
      maxrate_bytes_(params.maxrate.is_zero() ? kNoRate : params.maxrate.bytes_per_sec()),
      low_rate_bytes_(params.low_rate_threshold.bytes_per_sec()),
      orphan_mask_(static_cast<uint64_t>(params.orphan_mask)),
      buckets_log_(static_cast<uint32_t>(std::countr_zero(static_cast<uint64_t>(params.buckets)))),
      buckets_(static_cast<size_t>(params.buckets)) {
  for (size_t i = 0; i < prio2band_.size(); ++i) {
    prio2band_[i] = static_cast<uint8_t>(params.priomap[i]);
  }
  for (size_t b = 0; b < bands_.size(); ++b) {
    bands_[b].quantum = params.weights[b];
    bands_[b].credit = 0;  // kzalloc'ed private data; refilled on first visit
  }
  pool_.reserve(1024);
  cb_.reserve(1024);
}

// ---------------------------------------------------------------------------------------------
// Flows
//
// The packet path's helpers are `inline` (used in this file only): called once or twice per
// packet, their calls cost more than their bodies (docs/benchmarks.md, issue 11 item 5).

uint32_t Fq::lookup(uint64_t key) const {
  for (uint32_t idx : buckets_[bucket_of(key)]) {
    if (flow_slots_[idx].key == key) {
      return idx;
    }
  }
  return kNil;
}

// fq_gc on the bucket (detached flows idle for kGcAge go) and, in the same pass, the lookup
// of `keep_key` (never collected): returns its flow or kNil.
inline uint32_t Fq::gc_and_find(uint32_t bucket, uint64_t keep_key, Time now) {
  std::vector<uint32_t>& b = buckets_[bucket];
  uint32_t found = kNil;
  for (size_t i = 0; i < b.size();) {
    Flow& f = flow_slots_[b[i]];
    if (f.key == keep_key) {
      found = b[i];
      ++i;
      continue;
    }
    const bool candidate = f.state == FlowState::kDetached && now > f.age + kGcAge;
    if (!candidate) {
      ++i;
      continue;
    }
    f.in_use = false;
    f.tree.reset();
    free_slots_.push_back(b[i]);
    b[i] = b.back();
    b.pop_back();
    --flows_count_;
    --inactive_flows_;
    ++stats_.gc_flows;
  }
  return found;
}

inline uint32_t Fq::classify(uint64_t key, Time now) {
  const uint32_t bucket = bucket_of(key);
  const uint32_t found = gc_and_find(bucket, key, now);
  if (found != kNil) {
    return found;
  }
  uint32_t idx;
  if (!free_slots_.empty()) {
    idx = free_slots_.back();
    free_slots_.pop_back();
  } else {
    idx = static_cast<uint32_t>(flow_slots_.size());
    flow_slots_.emplace_back();
  }
  Flow& f = flow_slots_[idx];
  f = Flow{};
  f.in_use = true;
  f.key = key;
  f.state = FlowState::kDetached;
  f.age = now;
  f.credit = initial_quantum_;
  buckets_[bucket].push_back(idx);
  ++flows_count_;
  ++inactive_flows_;
  return idx;
}

inline void Fq::add_tail(uint32_t idx, bool new_list) {
  Flow& f = flow_slots_[idx];
  FlowList& l = new_list ? bands_[f.band].new_flows : bands_[f.band].old_flows;
  f.next = kNil;
  f.state = new_list ? FlowState::kNew : FlowState::kOld;
  if (l.head == kNil) {
    l.head = idx;
  } else {
    flow_slots_[l.tail].next = idx;
  }
  l.tail = idx;
}

void Fq::set_throttled(uint32_t idx) {
  Flow& f = flow_slots_[idx];
  f.state = FlowState::kThrottled;
  f.next = kNil;
  delayed_.push_back(Delayed{f.time_next_packet, delayed_seq_++, idx});
  std::push_heap(delayed_.begin(), delayed_.end(), std::greater<>{});
  ++stats_.throttled;
}

inline void Fq::check_throttled(Time now) {
  const Time due = now + params_.offload_horizon;
  while (!delayed_.empty() && delayed_.front().at <= due) {
    const uint32_t idx = delayed_.front().flow;
    std::pop_heap(delayed_.begin(), delayed_.end(), std::greater<>{});
    delayed_.pop_back();
    add_tail(idx, false);  // fq_flow_unset_throttled: to the tail of old_flows
  }
}

// fq_peek: the out-of-order tree's first packet if strictly earlier than the list head.
inline uint32_t Fq::flow_peek(const Flow& f) const {
  const uint32_t head = f.queue.head;
  if (!f.tree || f.tree->empty()) {
    return head;
  }
  const uint32_t first = f.tree->begin()->second;
  if (head == kNil || cb_time(first) < cb_time(head)) {
    return first;
  }
  return head;
}

inline void Fq::flow_erase(Flow& f, uint32_t node) {
  if (node == f.queue.head) {
    f.queue.head = pool_.next(node);
    if (f.queue.head == kNil) {
      f.queue.tail = kNil;
    }
    --f.queue.size;
  } else {
    f.tree->erase(f.tree->begin());
  }
}

// flow_queue_add: append when not earlier than the tail, else into the time-ordered tree
// (after packets of the same time, as the rb-tree's ">=" goes right).
inline void Fq::flow_add(Flow& f, uint32_t node) {
  pool_.next(node) = kNil;
  if (f.queue.head == kNil || cb_time(node) >= cb_time(f.queue.tail)) {
    if (f.queue.head == kNil) {
      f.queue.head = node;
    } else {
      pool_.next(f.queue.tail) = node;
    }
    f.queue.tail = node;
    ++f.queue.size;
    return;
  }
  if (!f.tree) {
    f.tree = std::make_unique<std::multimap<Time, uint32_t>>();
  }
  f.tree->emplace(cb_time(node), node);
}

// ---------------------------------------------------------------------------------------------
// Enqueue

inline bool Fq::fastpath_ok(Time tts, Time now) const {
  const Time due = now + params_.offload_horizon;
  if (tts > due) {
    return false;
  }
  if (qlen_ != 0) {
    const uint32_t eligible = flows_count_ - inactive_flows_ - throttled_flows();
    if (eligible != 0 || internal_.qlen >= kFastpathMax) {
      return false;
    }
    if (!delayed_.empty() && delayed_.front().at <= due) {
      return false;
    }
  }
  return maxrate_bytes_ == kNoRate;
}

Verdict Fq::drop_arrival(Packet&& p, Time now) {
  ++stats_.dropped_packets;
  stats_.dropped_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_drop(now, p, DropReason::kQueueFull);
  }
  return Verdict::kDropped;
}

Verdict Fq::enqueue(Packet&& p, Time now) {
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += p.len;
  const uint8_t band = prio2band_[p.priority & 15];
  if (band_pkt_count_[band] >= limit_) {
    ++stats_.band_drops[band];
    return drop_arrival(std::move(p), now);
  }
  const bool edt = p.tstamp != Time::zero();
  if (edt && p.tstamp > now + params_.horizon) {
    if (params_.horizon_drop) {
      ++stats_.horizon_drops;
      return drop_arrival(std::move(p), now);
    }
    ++stats_.horizon_caps;
    p.tstamp = now + params_.horizon;
  }
  const Time tts = edt ? p.tstamp : now;

  Flow* f = &internal_;
  uint32_t idx = kNil;
  if (fastpath_ok(tts, now)) {
    ++stats_.fastpath_packets;
  } else {
    idx = classify(key_of(p), now);
    f = &flow_slots_[idx];
    if (f->qlen >= flow_limit_) {
      ++stats_.flows_plimit;
      return drop_arrival(std::move(p), now);
    }
    if (f->state == FlowState::kDetached) {
      // Joins the new-flows list of the band its previous packet had (band 0 for a fresh
      // flow): the kernel sets f->band only afterwards.
      const bool idle_long = now > f->age + params_.refill_delay;
      add_tail(idx, true);
      if (idle_long) {
        f->credit = std::max(f->credit, quantum_);
      }
    }
    f->band = band;
    ++band_pkt_count_[band];
    if (f->qlen == 0) {
      --inactive_flows_;
    }
  }
  p.enqueue_ts = now;
  if (observer_ != nullptr) {
    observer_->on_enqueue(now, p);
  }
  const uint32_t len = p.len;
  const uint32_t node = pool_.allocate(std::move(p));
  if (node >= cb_.size()) {
    cb_.resize(node + 1);
  }
  cb_[node] = Cb{tts, band, edt};
  ++f->qlen;
  flow_add(*f, node);
  backlog_bytes_ += len;
  ++qlen_;
  return Verdict::kQueued;
}

// ---------------------------------------------------------------------------------------------
// Dequeue

inline void Fq::apply_pacing(Flow& f, const Cb& cb, uint32_t len, Time now) {
  if (!params_.pacing) {
    return;
  }
  const uint64_t rate = maxrate_bytes_;
  uint64_t plen = len;
  if (!cb.edt) {
    // No EDT: credit-based pacing (the kernel also takes the socket's sk_pacing_rate here).
    if (rate <= low_rate_bytes_) {
      f.credit = 0;
    } else {
      plen = std::max<uint64_t>(plen, static_cast<uint64_t>(quantum_));
      if (f.credit > 0) {
        return;
      }
    }
  }
  if (rate == kNoRate) {
    return;
  }
  int64_t delay = static_cast<int64_t>(static_cast<unsigned __int128>(plen) * 1'000'000'000u /
                                       rate);  // ns, rounded down
  if (delay > kMaxPacketDelay.count_ns()) {
    delay = kMaxPacketDelay.count_ns();
    ++stats_.pkts_too_long;
  }
  if (f.time_next_packet != Time::zero()) {
    // Timer drift: the flow is late by now - time_next_packet; give back up to half the delay.
    const Duration late = now - f.time_next_packet;
    // (u64 arithmetic in the kernel: a flow served early, possible with an offload horizon,
    // wraps to a huge lateness, so half the delay is given back.)
    const int64_t lateness = late >= Duration::zero() ? late.count_ns() : INT64_MAX;
    delay -= std::min(delay / 2, lateness);
  }
  f.time_next_packet = now + Duration::ns(delay);
}

uint32_t Fq::dequeue_node(Time now) {
  if (qlen_ == 0) {
    return kNil;
  }
  if (internal_.qlen > 0) {
    const uint32_t node = flow_peek(internal_);
    flow_erase(internal_, node);
    --internal_.qlen;
    return node;
  }
  check_throttled(now);
  const Time due = now + params_.offload_horizon;
  int retry = 0;
  for (;;) {
    Band& band = bands_[band_nr_];
    FlowList* head = nullptr;
    if (band.credit > 0) {
      head = band.new_flows.head != kNil   ? &band.new_flows
             : band.old_flows.head != kNil ? &band.old_flows
                                           : nullptr;
    }
    if (head == nullptr) {
      // Next band with credit left (weighted round robin); give up after every band came up
      // empty in a row.
      bool found = false;
      while (++retry <= kBands) {
        band_nr_ = (band_nr_ + 1) % kBands;
        Band& b = bands_[band_nr_];
        b.credit = std::min(b.credit + b.quantum, b.quantum);
        if (b.credit > 0) {
          found = true;
          break;
        }
        retry = 0;
      }
      if (!found) {
        return kNil;  // the watchdog fires at next_ready()
      }
      continue;
    }
    const uint32_t idx = head->head;
    Flow& f = flow_slots_[idx];
    retry = 0;
    auto pop_head = [&] {
      head->head = f.next;
      if (head->head == kNil) {
        head->tail = kNil;
      }
      f.next = kNil;
    };
    if (f.credit <= 0) {
      f.credit += quantum_;
      pop_head();
      add_tail(idx, false);
      continue;
    }
    const uint32_t node = flow_peek(f);
    if (node == kNil) {
      const bool from_new = head == &band.new_flows;
      pop_head();
      if (from_new) {
        add_tail(idx, false);  // a pass through old_flows, against starvation
      } else {
        f.state = FlowState::kDetached;
        f.age = now;
      }
      continue;
    }
    const Time time_next_packet = max(cb_time(node), f.time_next_packet);
    if (due < time_next_packet) {
      pop_head();
      f.time_next_packet = time_next_packet;
      set_throttled(idx);
      continue;
    }
    flow_erase(f, node);
    Packet& p = pool_.packet(node);
    if (params_.ce_threshold && now - time_next_packet > *params_.ce_threshold) {
      ++stats_.ce_mark;
      if (p.set_ce()) {
        ++stats_.ecn_marked;
        if (observer_ != nullptr) {
          observer_->on_mark(now, p);
        }
      }
    }
    if (--f.qlen == 0) {
      ++inactive_flows_;
    }
    const Cb cb = cb_[node];
    --band_pkt_count_[cb.band];
    f.credit -= static_cast<int32_t>(p.len);
    band.credit -= static_cast<int32_t>(p.len);
    apply_pacing(f, cb, p.len, now);
    return node;
  }
}

std::optional<Packet> Fq::dequeue(Time now) {
  uint32_t node = stash_;
  if (node != kNil) {
    stash_ = kNil;
  } else {
    node = dequeue_node(now);
    if (node == kNil) {
      return std::nullopt;
    }
  }
  --qlen_;
  const Packet& p = pool_.packet(node);
  backlog_bytes_ -= p.len;
  ++stats_.dequeued_packets;
  stats_.dequeued_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_dequeue(now, p);
  }
  return pool_.release_optional(node);
}

const Packet* Fq::peek(Time now) {
  if (stash_ == kNil) {
    stash_ = dequeue_node(now);
    if (stash_ == kNil) {
      return nullptr;
    }
  }
  return &pool_.packet(stash_);
}

std::optional<Time> Fq::next_ready(Time now) const {
  if (qlen_ == 0) {
    return std::nullopt;
  }
  if (stash_ != kNil || internal_.qlen > 0) {
    return now;
  }
  // The earliest due time over the listed flows and the throttled set.
  Time t = Time::max();
  for (const Band& b : bands_) {
    for (const FlowList* l : {&b.new_flows, &b.old_flows}) {
      for (uint32_t i = l->head; i != kNil; i = flow_slots_[i].next) {
        const Flow& f = flow_slots_[i];
        if (f.qlen > 0) {
          t = std::min(t, max(cb_time(flow_peek(f)), f.time_next_packet));
        }
      }
    }
  }
  if (!delayed_.empty()) {
    t = std::min(t, delayed_.front().at);
  }
  return max(now, t - params_.offload_horizon);
}

// ---------------------------------------------------------------------------------------------
// Introspection

std::optional<Fq::FlowState> Fq::flow_state(uint32_t flow_hash) const {
  const uint32_t idx = lookup(uint64_t{flow_hash} << 1);
  return idx == kNil ? std::nullopt : std::optional<FlowState>(flow_slots_[idx].state);
}

std::optional<int32_t> Fq::flow_credit(uint32_t flow_hash) const {
  const uint32_t idx = lookup(uint64_t{flow_hash} << 1);
  return idx == kNil ? std::nullopt : std::optional<int32_t>(flow_slots_[idx].credit);
}

std::optional<Time> Fq::flow_time_next_packet(uint32_t flow_hash) const {
  const uint32_t idx = lookup(uint64_t{flow_hash} << 1);
  return idx == kNil ? std::nullopt : std::optional<Time>(flow_slots_[idx].time_next_packet);
}

}  // namespace nicsim::algo
