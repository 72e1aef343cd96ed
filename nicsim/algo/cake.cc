#include "nicsim/algo/cake.h"

#include <algorithm>
#include <limits>
#include <string>

#include "nicsim/core/gso.h"

namespace nicsim::algo {
namespace {

std::string ns_string(Duration d) { return std::to_string(d.count_ns()) + " ns"; }

// EWMA with weight 2^-shift (cake_ewma).
uint64_t ewma(uint64_t avg, uint64_t sample, uint32_t shift) {
  avg -= avg >> shift;
  avg += sample >> shift;
  return avg;
}

// A well-mixed 32-bit identity of a host (the murmur3 finaliser of its node index and a
// per-role salt), standing in for the kernel's flow_hash_from_keys over one address.
uint32_t host_hash(uint16_t host, uint32_t salt) {
  uint32_t h = (uint32_t{host} + 1) * 0x9E3779B1u ^ salt;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}
constexpr uint32_t kSrcSalt = 0x5A17C0DEu;
constexpr uint32_t kDstSalt = 0x0DDBA11u;

constexpr int64_t kNsPerUs = 1000;

}  // namespace

Duration Cake::Params::effective_target() const {
  if (target) {
    return *target;
  }
  return std::max(Duration::ns(rtt.count_ns() / 20), Duration::us(1));
}

Validation Cake::Params::validate() const {
  // rtt and target are microseconds in netlink (u32); 0 becomes 1 us in cake_change.
  const Duration max_us = Duration::us(UINT32_MAX);
  if (rtt <= Duration::zero() || rtt > max_us) {
    return ParamError{"rtt", "must be in 1us..4294s, got " + ns_string(rtt)};
  }
  if (target && (*target <= Duration::zero() || *target > max_us)) {
    return ParamError{"target", "must be in 1us..4294s, got " + ns_string(*target)};
  }
  if (overhead < -64 || overhead > 256) {
    return ParamError{"overhead",
                      "must be in -64..256 bytes (tc-cake), got " + std::to_string(overhead)};
  }
  if (raw && overhead != 0) {
    return ParamError{"raw", "must be false when overhead is set (tc: `overhead N` ends `raw`)"};
  }
  if (mpu < 0 || mpu > 256) {
    return ParamError{"mpu", "must be in 0..256 bytes (tc-cake), got " + std::to_string(mpu)};
  }
  if (memlimit < 0 || memlimit > int64_t{UINT32_MAX}) {
    return ParamError{"memlimit", "must be in 0..4294967295 bytes (0 = automatic), got " +
                                      std::to_string(memlimit)};
  }
  if (nat) {
    return ParamError{"nat",
                      "is not modelled: it needs conntrack's address translations "
                      "(docs/algorithms/cake.md)"};
  }
  if (autorate_ingress) {
    return ParamError{"autorate_ingress", "is not modelled (docs/algorithms/cake.md)"};
  }
  if (limit < 1 || limit > int64_t{UINT32_MAX}) {
    return ParamError{"limit", "must be in 1..4294967295 packets, got " + std::to_string(limit)};
  }
  if (mtu < 64 || mtu > 65535) {
    return ParamError{"mtu", "must be in 64..65535 bytes, got " + std::to_string(mtu)};
  }
  if (truesize_overhead < 0 || truesize_overhead > int64_t{UINT32_MAX}) {
    return ParamError{"truesize_overhead",
                      "must be in 0..4294967295 bytes, got " + std::to_string(truesize_overhead)};
  }
  if (bandwidth.bytes_per_sec() > (uint64_t{1} << 40)) {
    return ParamError{"bandwidth", "must be <= 8.8 Tbit/s"};
  }
  return std::nullopt;
}

Cake::Cake(const Params& params)
    : params_(require_valid(params)),
      layout_(cake_tin_layout(params.diffserv, params.bandwidth.bytes_per_sec())),
      overhead_(!params.raw, static_cast<int32_t>(params.overhead),
                static_cast<uint32_t>(params.mpu), params.atm),
      flow_mode_(static_cast<uint8_t>(params.flow_mode)),
      tins_(static_cast<size_t>(layout_.tin_count)),
      rate_bps_(params.bandwidth.bytes_per_sec()),
      truesize_overhead_(static_cast<uint64_t>(params.truesize_overhead)),
      quantum_div_(kQueues + 1),
      rng_(params.seed * 0x9E3779B97F4A7C15ull + 1) {
  quantum_div_[0] = 0xFFFF;
  for (uint32_t i = 1; i <= kQueues; ++i) {
    quantum_div_[i] = static_cast<uint16_t>(65535 / i);
  }
  for (int i = 0; i < layout_.tin_count; ++i) {
    set_rate(tins_[i], layout_.rate[i]);
    tins_[i].tin_quantum = layout_.quantum[i];
  }
  // The global shaper runs at tin 0's (the base) rate.
  rate_ns_ = tins_[0].tin_rate_ns;
  rate_shft_ = tins_[0].tin_rate_shft;
  // cake_reconfigure: memlimit, else 4 intervals' worth of the rate (at least 4 MiB), else
  // unlimited; capped at max(limit * mtu, memlimit).
  const uint64_t config_limit = static_cast<uint64_t>(params_.memlimit);
  const uint64_t interval_us = static_cast<uint64_t>(params_.rtt.count_ns() / kNsPerUs);
  if (config_limit != 0) {
    buffer_limit_ = config_limit;
  } else if (rate_bps_ != 0) {
    buffer_limit_ = std::max<uint64_t>(rate_bps_ * interval_us / (1'000'000 / 4), 4u << 20);
    buffer_limit_ = std::min<uint64_t>(buffer_limit_, UINT32_MAX);
  } else {
    buffer_limit_ = UINT32_MAX;
  }
  buffer_limit_ = std::min(
      buffer_limit_, std::max(static_cast<uint64_t>(params_.limit * params_.mtu), config_limit));
  pool_.reserve(4096);
}

// cake_set_rate: time per byte in fixed point, the flow quantum, and COBALT's parameters
// auto-tuned to the rate (target at least 1.5 MTU times, interval grown by the same amount).
void Cake::set_rate(Tin& b, uint64_t rate) {
  constexpr uint64_t kMinRate = 64;
  const uint64_t mtu = static_cast<uint64_t>(params_.mtu);
  uint32_t shft = 0;
  uint64_t rate_ns = 0;
  b.flow_quantum = 1514;
  if (rate != 0) {
    b.flow_quantum =
        static_cast<uint32_t>(std::max<uint64_t>(std::min<uint64_t>(rate >> 12, 1514), 300));
    shft = 34;
    rate_ns = (uint64_t{1'000'000'000} << shft) / std::max(kMinRate, rate);
    while ((rate_ns >> 34) != 0) {
      rate_ns >>= 1;
      --shft;
    }
  }
  b.tin_rate_bps = rate;
  b.tin_rate_ns = rate_ns;
  b.tin_rate_shft = shft;
  const uint64_t byte_target_ns = (mtu * rate_ns) >> shft;
  const uint64_t target_ns = static_cast<uint64_t>(params_.effective_target().count_ns());
  const uint64_t rtt_ns = static_cast<uint64_t>(params_.rtt.count_ns());
  // Netlink carries microseconds: the kernel's us_to_ns(q->target), us_to_ns(q->interval).
  const uint64_t target = std::max<uint64_t>(target_ns / kNsPerUs, 1) * kNsPerUs;
  const uint64_t interval = std::max<uint64_t>(rtt_ns / kNsPerUs, 1) * kNsPerUs;
  b.cparams.target = std::max(byte_target_ns * 3 / 2, target);
  b.cparams.interval = std::max(interval + b.cparams.target - target, b.cparams.target * 2);
  b.cparams.mtu_time = byte_target_ns;
  b.cparams.p_inc = 1u << 24;
  b.cparams.p_dec = 1u << 20;
}

uint32_t Cake::random32() {
  // xorshift64*: a deterministic stand-in for prandom_u32.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return static_cast<uint32_t>((rng_ * 0x2545F4914F6CDD1Dull) >> 32);
}

// --- flowchain ----------------------------------------------------------------------------

Cake::FlowChain& Cake::chain_of(Tin& b, Chain c) {
  switch (c) {
    case Chain::kNew:
      return b.new_flows;
    case Chain::kOld:
      return b.old_flows;
    default:
      return b.decaying_flows;
  }
}

void Cake::chain_unlink(Tin& b, uint16_t idx) {
  Flow& f = b.flows[idx];
  if (f.chain == Chain::kNone) {
    return;
  }
  FlowChain& c = chain_of(b, f.chain);
  (f.prev == kNoFlow ? c.head : b.flows[f.prev].next) = f.next;
  (f.next == kNoFlow ? c.tail : b.flows[f.next].prev) = f.prev;
  f.prev = f.next = kNoFlow;
  f.chain = Chain::kNone;
}

void Cake::chain_push_tail(Tin& b, uint16_t idx, Chain which) {
  chain_unlink(b, idx);
  FlowChain& c = chain_of(b, which);
  Flow& f = b.flows[idx];
  f.chain = which;
  f.prev = c.tail;
  f.next = kNoFlow;
  (c.tail == kNoFlow ? c.head : b.flows[c.tail].next) = idx;
  c.tail = idx;
}

// --- classification -----------------------------------------------------------------------

// cake_select_tin: besteffort -> tin 0, otherwise the DSCP table; wash clears the DSCP (ECN
// kept). fwmark and skb->priority overrides are not modelled.
uint32_t Cake::select_tin(Packet& p) const {
  const uint8_t dscp = p.dscp();
  if (params_.wash && dscp != 0) {
    p.tos = static_cast<uint8_t>(p.tos & 0x3);
  }
  if (params_.diffserv == CakeDiffserv::kBesteffort) {
    return 0;
  }
  const uint32_t tin = (*layout_.tin_index)[dscp];
  return tin < static_cast<uint32_t>(layout_.tin_count) ? tin : 0;
}

int Cake::tin_of(const Packet& p) const {
  if (params_.diffserv == CakeDiffserv::kBesteffort) {
    return 0;
  }
  return (*layout_.tin_index)[p.dscp()];
}

// The host table slot of a source or destination host hash: 8-way set-associative, reusing a
// slot with the same tag, else one no bulk flow references.
uint16_t Cake::host_slot(Tin& b, uint32_t hash, bool src) {
  const uint32_t idx = hash % kQueues;
  const uint32_t inner = idx % kSetWays;
  const uint32_t outer = idx - inner;
  uint32_t k = inner;
  for (uint32_t i = 0; i < kSetWays; ++i, k = (k + 1) % kSetWays) {
    const Host& h = b.hosts[outer + k];
    if ((src ? h.srchost_tag : h.dsthost_tag) == hash) {
      return static_cast<uint16_t>(outer + k);
    }
  }
  for (uint32_t i = 0; i < kSetWays; ++i, k = (k + 1) % kSetWays) {
    const Host& h = b.hosts[outer + k];
    if ((src ? h.srchost_bulk_flow_count : h.dsthost_bulk_flow_count) == 0) {
      break;
    }
  }
  (src ? b.hosts[outer + k].srchost_tag : b.hosts[outer + k].dsthost_tag) = hash;
  return static_cast<uint16_t>(outer + k);
}

// cake_hash: the flow and host parts the isolation mode asks for, then the set-associative
// lookup (a direct hit, another way of the set with this tag, a free way, else a collision).
uint16_t Cake::hash_to_queue(Tin& b, const Packet& p) {
  if (flow_mode_ == 0) {
    return 0;  // flowblind: one queue
  }
  const uint32_t srchost_hash = host_hash(p.src_host, kSrcSalt);
  const uint32_t dsthost_hash = host_hash(p.dst_host, kDstSalt);
  uint32_t flow_hash = 0;
  if ((flow_mode_ & 4) != 0) {
    flow_hash = p.flow_hash;
  } else {
    if ((flow_mode_ & 1) != 0) {
      flow_hash ^= srchost_hash;
    }
    if ((flow_mode_ & 2) != 0) {
      flow_hash ^= dsthost_hash;
    }
  }
  uint32_t reduced = flow_hash % kQueues;
  if (b.tags[reduced] == flow_hash && b.flows[reduced].set != Set::kNone) {
    ++b.way_directs;
    return static_cast<uint16_t>(reduced);
  }
  const uint32_t inner = reduced % kSetWays;
  const uint32_t outer = reduced - inner;
  bool allocate = false;
  uint32_t k = inner;
  bool found = false;
  for (uint32_t i = 0; i < kSetWays; ++i, k = (k + 1) % kSetWays) {
    if (b.tags[outer + k] == flow_hash) {
      if (i != 0) {
        ++b.way_hits;
      }
      allocate = b.flows[outer + k].set == Set::kNone;  // host refcounts to take again
      found = true;
      break;
    }
  }
  if (!found) {
    for (uint32_t i = 0; i < kSetWays; ++i, k = (k + 1) % kSetWays) {
      if (b.flows[outer + k].set == Set::kNone) {
        ++b.way_misses;
        found = true;
        break;
      }
    }
    if (!found) {
      // Every way busy: share the original queue; its bulk flow leaves its hosts' counts.
      ++b.way_collisions;
      if (b.flows[outer + k].set == Set::kBulk) {
        --b.hosts[b.flows[reduced].srchost].srchost_bulk_flow_count;
        --b.hosts[b.flows[reduced].dsthost].dsthost_bulk_flow_count;
      }
    }
    allocate = true;
  }
  reduced = outer + k;
  b.tags[reduced] = flow_hash;
  Flow& f = b.flows[reduced];
  if (allocate && dual_src()) {
    f.srchost = host_slot(b, srchost_hash, true);
    if (f.set == Set::kBulk) {
      ++b.hosts[f.srchost].srchost_bulk_flow_count;
    }
  }
  if (allocate && dual_dst()) {
    f.dsthost = host_slot(b, dsthost_hash, false);
    if (f.set == Set::kBulk) {
      ++b.hosts[f.dsthost].dsthost_bulk_flow_count;
    }
  }
  return static_cast<uint16_t>(reduced);
}

// --- shaper -------------------------------------------------------------------------------

uint32_t Cake::cost(const Packet& p) const {
  CakeOverhead o = overhead_;  // a copy: the size statistics are kept at enqueue only
  return o.adjust(p);
}

// cake_advance_shaper: charges the adjusted length to the tin's and the global schedule.
uint32_t Cake::advance_shaper(Tin& b, const Packet& p, int64_t now, bool drop) {
  const uint32_t len = cost(p);
  if (rate_ns_ != 0) {
    const auto tin_dur = static_cast<int64_t>((len * b.tin_rate_ns) >> b.tin_rate_shft);
    const auto global_dur = static_cast<int64_t>((len * rate_ns_) >> rate_shft_);
    const int64_t failsafe_dur = global_dur + (global_dur >> 1);
    if (b.time_next_packet < now) {
      b.time_next_packet += tin_dur;
    } else if (b.time_next_packet < now + tin_dur) {
      b.time_next_packet = now + tin_dur;
    }
    time_next_packet_ += global_dur;
    if (!drop) {
      failsafe_next_packet_ += failsafe_dur;
    }
  }
  return len;
}

// --- enqueue ------------------------------------------------------------------------------

void Cake::report_drop(const Packet& p, Time t, DropReason why) {
  ++stats_.dropped_packets;
  stats_.dropped_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_drop(t, p, why);
  }
}

void Cake::add_to_flow(Tin& b, uint16_t idx, Packet&& p, int64_t now) {
  const uint32_t len = p.len;
  p.enqueue_ts = Time::from_ns(now);  // cobalt_set_enqueue_time
  overhead_.adjust(p);                // the size statistics (the cost is recomputed later)
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += len;
  if (observer_ != nullptr) {
    observer_->on_enqueue(Time::from_ns(now), p);
  }
  b.flows[idx].queue.push_back(pool_, std::move(p));
  ++qlen_;
  ++b.packets;
  b.bytes += len;
  b.backlogs[idx] += len;
  b.tin_backlog += len;
  backlog_bytes_ += len;
  buffer_used_ += truesize(len);
}

// The flowchain part of cake_enqueue: an idle or decaying queue becomes sparse (new_flows)
// with a deficit scaled by its hosts' loads; a sparse-wait queue becomes bulk.
void Cake::account_flowchain_on_enqueue(Tin& b, uint16_t idx) {
  Flow& flow = b.flows[idx];
  Host& src = b.hosts[flow.srchost];
  Host& dst = b.hosts[flow.dsthost];
  if (flow.set == Set::kNone || flow.set == Set::kDecaying) {
    if (flow.set == Set::kDecaying) {
      --b.decaying_flow_count;
    }
    chain_push_tail(b, idx, Chain::kNew);
    flow.set = Set::kSparse;
    ++b.sparse_flow_count;
    uint32_t host_load = 1;
    if (dual_src()) {
      host_load = std::max<uint32_t>(host_load, src.srchost_bulk_flow_count);
    }
    if (dual_dst()) {
      host_load = std::max<uint32_t>(host_load, dst.dsthost_bulk_flow_count);
    }
    flow.deficit = static_cast<int32_t>((b.flow_quantum * quantum_div_[host_load]) >> 16);
  } else if (flow.set == Set::kSparseWait) {
    flow.set = Set::kBulk;
    --b.sparse_flow_count;
    ++b.bulk_flow_count;
    if (dual_src()) {
      ++src.srchost_bulk_flow_count;
    }
    if (dual_dst()) {
      ++dst.dsthost_bulk_flow_count;
    }
  }
}

Verdict Cake::enqueue(Packet&& p, Time t) {
  const int64_t now = t.ns_since_epoch();
  const uint32_t tin = select_tin(p);
  Tin& b = tins_[tin];
  const uint16_t idx = hash_to_queue(b, p);
  last_idx_ = idx;

  // Keep the shaper from bursting after an idle period.
  if (b.tin_backlog == 0) {
    b.time_next_packet = std::max(b.time_next_packet, now);
    if (qlen_ == 0) {
      if (time_next_packet_ < now) {
        failsafe_next_packet_ = now;
        time_next_packet_ = now;
      } else if (time_next_packet_ > now && failsafe_next_packet_ > now) {
        ++stats_.overlimits;
      }
    }
  }
  b.max_skblen = std::max(b.max_skblen, p.len);

  if (p.gso_segs > 1 && params_.split_gso) {
    // skb_gso_segment: every segment is queued on its own, all in this flow.
    const Packet parent = std::move(p);
    for (uint32_t i = 0; i < parent.gso_segs; ++i) {
      Packet s = make_gso_segment(parent, i);
      s.dst_host = parent.dst_host;  // make_gso_segment does not copy the hosts
      s.src_host = parent.src_host;
      s.payload = nullptr;
      add_to_flow(b, idx, std::move(s), now);
    }
  } else {
    add_to_flow(b, idx, std::move(p), now);
    if (params_.ack_filter != CakeAckFilterMode::kNone) {
      drop_redundant_ack(b, idx, now, t);
    }
  }

  account_flowchain_on_enqueue(b, idx);
  buffer_max_used_ = std::max(buffer_max_used_, buffer_used_);
  bool arriving_dropped = false;
  while (buffer_used_ > buffer_limit_) {
    const uint32_t owner = drop_longest(now, t);
    ++b.drop_overlimit;
    ++stats_.drop_overlimit;
    // The arrival itself went if its queue is now empty (it was the head and only packet).
    if (owner == (tin << 16 | idx) && b.flows[idx].queue.empty()) {
      arriving_dropped = true;
    }
  }
  return arriving_dropped ? Verdict::kDropped : Verdict::kQueued;
}

// cake_ack_filter on the queue `idx` whose tail was just added.
void Cake::drop_redundant_ack(Tin& b, uint16_t idx, int64_t now, Time t) {
  Flow& flow = b.flows[idx];
  if (tcp_reader_ == nullptr || flow.queue.head == flow.queue.tail) {
    return;
  }
  CakeTcpHeader trig;
  if (!tcp_reader_->read(pool_.packet(flow.queue.tail), trig) ||
      (trig.flags & (kTcpAck | kTcpSyn)) != kTcpAck) {
    return;
  }
  const bool aggressive = params_.ack_filter == CakeAckFilterMode::kAggressive;
  uint32_t elig = kNil;
  uint32_t elig_prev = kNil;
  uint16_t elig_flags = 0;
  int found = 0;
  uint32_t prev = kNil;
  bool drop = false;
  CakeTcpHeader check;
  for (uint32_t n = flow.queue.head; n != flow.queue.tail; prev = n, n = pool_.next(n)) {
    if (!tcp_reader_->read(pool_.packet(n), check) || !cake_same_connection(check, trig)) {
      continue;
    }
    // A change of ECE/CWR after the eligible ACK would lose information: forget it.
    if (elig != kNil && (check.flags & (kTcpEce | kTcpCwr)) != elig_flags) {
      elig = elig_prev = kNil;
      --found;
    }
    if (!cake_ack_may_drop(check, trig.tsval, trig.tsecr) || check.payload_len != 0 ||
        tcp_seq_after(check.ack_seq, trig.ack_seq)) {
      continue;
    }
    const int sack = cake_sack_compare(check, trig);
    if (sack < 0 || (check.ack_seq == trig.ack_seq && sack == 0)) {
      continue;
    }
    if (elig == kNil) {
      elig = n;
      elig_prev = prev;
      elig_flags = check.flags & (kTcpEce | kTcpCwr);
    }
    if (found++ > 0) {
      drop = true;
      break;
    }
  }
  // One eligible ACK is dropped only in aggressive mode, and only if it sits right before the
  // new one with the same ECN flags.
  if (!drop && elig != kNil && aggressive && pool_.next(elig) == flow.queue.tail &&
      elig_flags == (trig.flags & (kTcpEce | kTcpCwr))) {
    drop = true;
  }
  if (!drop) {
    return;
  }
  // Unlink elig from the queue.
  const uint32_t after = pool_.next(elig);
  if (elig_prev == kNil) {
    flow.queue.head = after;
  } else {
    pool_.next(elig_prev) = after;
  }
  --flow.queue.size;
  Packet ack = pool_.release(elig);
  ++b.ack_drops;
  ++stats_.ack_drops;
  --qlen_;
  b.backlogs[idx] -= ack.len;
  b.tin_backlog -= ack.len;
  backlog_bytes_ -= ack.len;
  buffer_used_ -= truesize(ack.len);
  if (params_.ingress) {
    advance_shaper(b, ack, now, true);
  }
  report_drop(ack, t, DropReason::kOverlimit);
}

// cake_drop: the longest queue of any tin loses its head packet; its BLUE rises.
uint32_t Cake::drop_longest(int64_t now, Time t) {
  uint32_t best_tin = 0;
  uint32_t best_idx = 0;
  uint32_t best = 0;
  for (uint32_t i = 0; i < tins_.size(); ++i) {
    const std::vector<uint32_t>& bl = tins_[i].backlogs;
    for (uint32_t j = 0; j < kQueues; ++j) {
      if (bl[j] > best) {
        best = bl[j];
        best_tin = i;
        best_idx = j;
      }
    }
  }
  if (tins_[best_tin].flows[best_idx].queue.empty()) {
    // Only zero-length packets are queued (every backlog is 0): take the first non-empty queue.
    for (uint32_t i = 0; i < tins_.size(); ++i) {
      for (uint32_t j = 0; j < kQueues; ++j) {
        if (!tins_[i].flows[j].queue.empty()) {
          return drop_head(i, j, now, t);
        }
      }
    }
  }
  return drop_head(best_tin, best_idx, now, t);
}

uint32_t Cake::drop_head(uint32_t tin, uint32_t idx, int64_t now, Time t) {
  Tin& b = tins_[tin];
  Flow& flow = b.flows[idx];
  if (cobalt_queue_full(flow.cvars, b.cparams, now)) {
    ++b.unresponsive_flow_count;
  }
  const uint32_t node = pop_head(b, static_cast<uint16_t>(idx));
  Packet p = pool_.release(node);
  ++flow.dropped;
  ++b.tin_dropped;
  if (params_.ingress) {
    advance_shaper(b, p, now, true);
  }
  report_drop(p, t, DropReason::kOvermemory);
  return tin << 16 | idx;
}

// cake_dequeue_one: unlinks the head of queue idx (the packet stays in the pool).
uint32_t Cake::pop_head(Tin& b, uint16_t idx) {
  PacketList& q = b.flows[idx].queue;
  if (q.empty()) {
    return kNil;
  }
  const uint32_t node = q.head;
  q.head = pool_.next(node);
  if (q.head == kNil) {
    q.tail = kNil;
  }
  --q.size;
  const uint32_t len = pool_.packet(node).len;
  b.backlogs[idx] -= len;
  b.tin_backlog -= len;
  backlog_bytes_ -= len;
  buffer_used_ -= truesize(len);
  --qlen_;
  return node;
}

// --- dequeue ------------------------------------------------------------------------------

// Picks cur_tin_. Unshaped: DRR over tins by tin_quantum. Shaped: the first tin (priority
// order) whose schedule is due, else the earliest scheduled. False if no tin has flows.
bool Cake::choose_tin(int64_t now) {
  const int n = layout_.tin_count;
  if (rate_ns_ == 0) {
    bool wrapped = false;
    bool empty = true;
    Tin* b = &tins_[cur_tin_];
    while (b->tin_deficit < 0 || b->sparse_flow_count + b->bulk_flow_count == 0) {
      if (b->tin_deficit <= 0) {
        b->tin_deficit += b->tin_quantum;
      }
      if (b->sparse_flow_count + b->bulk_flow_count != 0) {
        empty = false;
      }
      if (++cur_tin_ >= n) {
        cur_tin_ = 0;
        if (wrapped) {
          if (empty) {
            return false;
          }
        } else {
          wrapped = true;
        }
      }
      b = &tins_[cur_tin_];
    }
    return true;
  }
  int64_t best_time = std::numeric_limits<int64_t>::max();
  int best_tin = 0;
  for (int tin = 0; tin < n; ++tin) {
    const Tin& b = tins_[tin];
    if (b.sparse_flow_count + b.bulk_flow_count > 0) {
      const int64_t time_to_pkt = b.time_next_packet - now;
      if (time_to_pkt <= 0 || time_to_pkt <= best_time) {
        best_time = time_to_pkt;
        best_tin = tin;
      }
    }
  }
  cur_tin_ = static_cast<uint16_t>(best_tin);
  const Tin& b = tins_[best_tin];
  return b.sparse_flow_count + b.bulk_flow_count > 0;
}

// An empty queue found by DRR: it stays (decaying) while COBALT has state to forget,
// otherwise it leaves the rotation.
void Cake::retire_empty_flow(Tin& b, uint16_t idx, int64_t now) {
  Flow& flow = b.flows[idx];
  Host& src = b.hosts[flow.srchost];
  Host& dst = b.hosts[flow.dsthost];
  if (cobalt_queue_empty(flow.cvars, b.cparams, now)) {
    --b.unresponsive_flow_count;
  }
  const bool bulk = flow.set == Set::kBulk;
  if (bulk) {
    --b.bulk_flow_count;
    if (dual_src()) {
      --src.srchost_bulk_flow_count;
    }
    if (dual_dst()) {
      --dst.dsthost_bulk_flow_count;
    }
  }
  const bool sparse = flow.set == Set::kSparse || flow.set == Set::kSparseWait;
  if (sparse) {
    --b.sparse_flow_count;
  }
  if (flow.cvars.p_drop != 0 || flow.cvars.count != 0 || now < flow.cvars.drop_next) {
    chain_push_tail(b, idx, Chain::kDecaying);
    if (bulk || sparse) {
      ++b.decaying_flow_count;
    }
    flow.set = Set::kDecaying;
  } else {
    chain_unlink(b, idx);
    if (flow.set == Set::kDecaying) {
      --b.decaying_flow_count;
    }
    flow.set = Set::kNone;
  }
}

void Cake::deliver_stats(Tin& b, Flow& flow, const Packet& p, int64_t now) {
  b.tin_ecn_mark += flow.cvars.ecn_marked ? 1 : 0;
  if (flow.cvars.ecn_marked) {
    ++stats_.ecn_marked;
    if (observer_ != nullptr) {
      observer_->on_mark(Time::from_ns(now), p);
    }
  }
  const auto delay = static_cast<uint64_t>(now - p.enqueue_ts.ns_since_epoch());
  b.avge_delay = ewma(b.avge_delay, delay, 8);
  b.peak_delay = ewma(b.peak_delay, delay, delay > b.peak_delay ? 2 : 8);
  b.base_delay = ewma(b.base_delay, delay, delay < b.base_delay ? 2 : 8);
}

uint32_t Cake::dequeue_node(Time t) {
  const int64_t now = t.ns_since_epoch();
  bool first_flow = true;
  for (;;) {  // begin:
    if (qlen_ == 0) {
      return kNil;
    }
    if (time_next_packet_ > now && failsafe_next_packet_ > now) {
      ++stats_.overlimits;  // the global shaper holds the packet back
      return kNil;
    }
    if (!choose_tin(now)) {
      return kNil;
    }
    Tin& b = tins_[cur_tin_];
    for (;;) {  // retry:
      FlowChain* head = &b.decaying_flows;
      if (!first_flow || head->empty()) {
        head = &b.new_flows;
        if (head->empty()) {
          head = &b.old_flows;
          if (head->empty()) {
            head = &b.decaying_flows;
            if (head->empty()) {
              break;  // goto begin
            }
          }
        }
      }
      const uint16_t idx = head->head;
      Flow& flow = b.flows[idx];
      cur_flow_ = idx;
      first_flow = false;

      // DRR++ with host fairness: the quantum is divided among the host's bulk flows.
      if (flow.deficit <= 0) {
        if (flow.set == Set::kSparse) {
          if (!flow.queue.empty()) {
            --b.sparse_flow_count;
            ++b.bulk_flow_count;
            if (dual_src()) {
              ++b.hosts[flow.srchost].srchost_bulk_flow_count;
            }
            if (dual_dst()) {
              ++b.hosts[flow.dsthost].dsthost_bulk_flow_count;
            }
            flow.set = Set::kBulk;
          } else {
            flow.set = Set::kSparseWait;  // in the bulk rotation, still counted sparse
          }
        }
        uint32_t host_load = 1;
        if (dual_src()) {
          host_load = std::max<uint32_t>(host_load, b.hosts[flow.srchost].srchost_bulk_flow_count);
        }
        if (dual_dst()) {
          host_load = std::max<uint32_t>(host_load, b.hosts[flow.dsthost].dsthost_bulk_flow_count);
        }
        host_load = std::min(host_load, kQueues);
        // The random low bits dither the rounding so it does not accumulate.
        flow.deficit += static_cast<int32_t>(
            (b.flow_quantum * quantum_div_[host_load] + (random32() >> 16)) >> 16);
        chain_push_tail(b, idx, Chain::kOld);
        continue;  // retry
      }

      // Retrieve a packet via the AQM.
      uint32_t node = kNil;
      bool restart = false;
      for (;;) {
        node = pop_head(b, idx);
        if (node == kNil) {
          retire_empty_flow(b, idx, now);
          restart = true;  // goto begin
          break;
        }
        Packet& skb = pool_.packet(node);
        const uint32_t bulk = params_.ingress ? b.bulk_flow_count : 0;
        const bool drop =
            cobalt_should_drop(flow.cvars, b.cparams, now, skb.enqueue_ts.ns_since_epoch(), skb,
                               bulk, [this] { return random32(); });
        // The last packet of a queue may be marked but is never dropped.
        if (!drop || flow.queue.empty()) {
          break;
        }
        if (params_.ingress) {
          const uint32_t len = advance_shaper(b, skb, now, true);
          flow.deficit -= static_cast<int32_t>(len);
          b.tin_deficit -= static_cast<int32_t>(len);
        }
        ++flow.dropped;
        ++b.tin_dropped;
        ++stats_.cobalt_drops;
        Packet dropped = pool_.release(node);
        report_drop(dropped, t, DropReason::kCodel);
        if (params_.ingress) {
          node = kNil;
          break;  // goto retry
        }
      }
      if (restart) {
        break;
      }
      if (node == kNil) {
        continue;  // retry (ingress drop)
      }
      const Packet& p = pool_.packet(node);
      deliver_stats(b, flow, p, now);
      const uint32_t len = advance_shaper(b, p, now, false);
      flow.deficit -= static_cast<int32_t>(len);
      b.tin_deficit -= static_cast<int32_t>(len);
      return node;
    }
  }
}

std::optional<Packet> Cake::dequeue(Time now) {
  uint32_t node = stash_;
  if (node != kNil) {
    stash_ = kNil;
    --qlen_;
    backlog_bytes_ -= pool_.packet(node).len;
  } else {
    node = dequeue_node(now);
    if (node == kNil) {
      return std::nullopt;
    }
  }
  const Packet& p = pool_.packet(node);
  ++stats_.dequeued_packets;
  stats_.dequeued_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_dequeue(now, p);
  }
  return pool_.release_optional(node);
}

const Packet* Cake::peek(Time now) {
  if (stash_ == kNil) {
    stash_ = dequeue_node(now);
    if (stash_ == kNil) {
      return nullptr;
    }
    ++qlen_;  // the stash still counts, as qdisc_peek_dequeued re-adds it
    backlog_bytes_ += pool_.packet(stash_).len;
  }
  return &pool_.packet(stash_);
}

std::optional<Time> Cake::next_ready(Time now) const {
  if (qlen_ == 0) {
    return std::nullopt;
  }
  if (stash_ != kNil) {
    return now;
  }
  const int64_t t = now.ns_since_epoch();
  if (time_next_packet_ > t && failsafe_next_packet_ > t) {
    return Time::from_ns(std::min(time_next_packet_, failsafe_next_packet_));
  }
  return now;
}

Cake::TinStats Cake::tin_stats(int display) const {
  const Tin& b = tins_[layout_.order[display]];
  TinStats s;
  s.threshold_rate = b.tin_rate_bps;
  s.target_us = b.cparams.target / 1000;
  s.interval_us = b.cparams.interval / 1000;
  s.peak_delay_us = b.peak_delay / 1000;
  s.avg_delay_us = b.avge_delay / 1000;
  s.base_delay_us = b.base_delay / 1000;
  s.backlog_bytes = b.tin_backlog;
  s.sent_packets = b.packets;
  s.sent_bytes = b.bytes;
  s.way_indirect_hits = b.way_hits;
  s.way_misses = b.way_misses;
  s.way_collisions = b.way_collisions;
  s.dropped = b.tin_dropped;
  s.ecn_marked = b.tin_ecn_mark;
  s.ack_drops = b.ack_drops;
  s.sparse_flows = b.sparse_flow_count + b.decaying_flow_count;
  s.bulk_flows = b.bulk_flow_count;
  s.unresponsive_flows = b.unresponsive_flow_count;
  s.max_skblen = b.max_skblen;
  s.flow_quantum = b.flow_quantum;
  return s;
}

}  // namespace nicsim::algo
