#pragma once
// Fq — the Fair Queue packet scheduler with per-flow pacing (Linux net/sched/sch_fq.c, read at
// torvalds/linux commit 01857fc712f6: the 6.8+ version with three priority bands and the
// 6.13+ offload horizon). Behaviour ported, no kernel code copied; docs/algorithms/fq.md.
//
//   classify: a flow is a socket. Packet::flow_hash stands for skb->sk (every socket's
//             packets carry their own hash); with Params::orphan (a router's forwarded
//             traffic, skb->sk == NULL) the flow is flow_hash & orphan_mask. Flows live in
//             `buckets` hash buckets (the kernel's rb-trees); an unknown flow is created
//             detached with credit = initial_quantum. While looking a flow up, detached flows
//             of the same bucket idle for more than 3 s are freed (fq_gc).
//   enqueue:  band = priomap[priority]; drop if that band already holds `limit` packets.
//             time_to_send = Packet::tstamp (EDT) or now; beyond now + horizon: drop
//             (horizon_drop) or cap to now + horizon. Fast path (fq_fastpath_check): a packet
//             due now goes to the internal FIFO when the qdisc is empty, or when no flow is
//             eligible, the internal queue holds < 8 and no throttled flow is due, and no
//             maxrate is set. Otherwise: drop at flow_limit packets; a detached flow joins its
//             band's new-flows list (credit raised to quantum if it was idle > refill_delay);
//             the packet is inserted by time_to_send (FIFO when non-decreasing).
//   dequeue:  the internal FIFO first; then unthrottle flows whose time has come; weighted
//             round robin over the bands (credit per band, weights 9:3:1 x 64 KiB), and in a
//             band DRR over new then old flows with per-flow credit (quantum). A flow whose
//             head is not due (max(time_to_send, time_next_packet) > now + offload_horizon)
//             is throttled (kept in a time-ordered set). An empty flow taken from new_flows
//             moves to old_flows; from old_flows it becomes detached. ce_threshold marks CE
//             when the packet leaves more than ce_threshold after its due time. With pacing
//             on (rate_enable): packets without EDT use credit and `maxrate` (credit zeroed at
//             or below low_rate_threshold); with maxrate each packet delays the flow's next
//             one by len / maxrate (at most 1 s: pkts_too_long), less up to half of the lateness.
//
// Non-work-conserving: next_ready(now) is exact — the earliest time a packet is due, i.e. when
// the kernel's watchdog would fire (without its timer_slack).
//
// Units: bytes are Packet::len (qdisc_pkt_len); rates are bit/s (Rate); the kernel's are
// bytes/s, so maxrate and low_rate_threshold are compared in bytes/s.
//
// Deviations: no skb->sk_pacing_rate for packets without EDT (a Packet carries no socket
// rate; TCP uses EDT, Linux 4.20+); fq_gc frees every old detached flow of the bucket, not only
// those on the rb-tree search path; flows are never re-keyed (no sk_hash reuse check);
// allocation never fails (no allocation_errors); times in ns, not jiffies (refill_delay, gc
// age); limit and flow_limit must be >= 1 (Linux accepts 0, which drops everything).

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/rate.h"

namespace nicsim::algo {

class Fq {
 public:
  static constexpr int kBands = 3;  // FQ_BANDS
  struct Params {
    int64_t limit = 10000;       // packets per band (sch->limit vs band_pkt_count); fq_init
    int64_t flow_limit = 100;    // packets per flow (flow_plimit); fq_init
    int64_t quantum = 2 * 1514;  // bytes; 2 * psched_mtu(dev)
    int64_t initial_quantum = 10 * 1514;  // bytes; 10 * psched_mtu(dev)
    Rate maxrate = Rate();                // per-flow cap; 0 = none (flow_max_rate = ~0UL)
    int64_t buckets = 1024;               // hash buckets, a power of two (fq_trees_log = 10)
    Duration refill_delay = 40_ms;        // flow_refill_delay = msecs_to_jiffies(40)
    int64_t orphan_mask = 1023;           // orphan_mask = 1024 - 1
    Rate low_rate_threshold = Rate::bytes_per_sec(550000 / 8);  // 550 kbit/s
    std::optional<Duration> ce_threshold = std::nullopt;        // unset = 4294 s (~0U us), i.e. off
    Duration horizon = 10_s;                                    // horizon = 10 s
    bool horizon_drop = true;  // drop (true) or cap (false) packets beyond the horizon
    bool pacing = true;        // rate_enable = 1 ("pacing" / "nopacing")
    Duration offload_horizon = Duration::zero();  // 0: no pacing offload to the NIC
    // sch_default_prio2band (sch_generic.c): band per skb->priority 0..15.
    std::array<int32_t, 16> priomap = {1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    std::array<int32_t, kBands> weights = {9 << 16, 3 << 16, 1 << 16};  // band quanta
    bool orphan = false;  // nicsim: packets have no socket (forwarded): flow = hash & mask
    Validation validate() const;
  };
  struct Stats : QueueStats {
    uint64_t gc_flows = 0;          // flows freed by fq_gc
    uint64_t fastpath_packets = 0;  // packets through the internal FIFO
    uint64_t throttled = 0;         // times a flow was throttled (stat_throttled)
    uint64_t flows_plimit = 0;      // drops at flow_limit
    uint64_t pkts_too_long = 0;     // pacing delays clamped to 1 s
    uint64_t ce_mark = 0;           // CE marks from ce_threshold
    uint64_t horizon_drops = 0;
    uint64_t horizon_caps = 0;
    std::array<uint64_t, kBands> band_drops{};  // drops at the band limit
  };
  // Where a flow is (the kernel tells them apart by f->next / f->age tricks).
  enum class FlowState : uint8_t { kDetached, kNew, kOld, kThrottled };

  static constexpr int64_t kMaxQuantum = 1 << 20;
  static constexpr int64_t kMinWeight = 16384;  // FQ_MIN_WEIGHT
  static constexpr Duration kGcAge = 3_s;       // FQ_GC_AGE = 3 * HZ
  static constexpr uint32_t kFastpathMax = 8;   // fq_fastpath_check: internal.qlen < 8
  static constexpr Duration kMaxPacketDelay = 1_s;

  Fq() : Fq(Params{}) {}
  explicit Fq(const Params& params);

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now);
  // qdisc_peek_dequeued: runs dequeue once and keeps the packet (valid until the next call).
  const Packet* peek(Time now);
  std::optional<Time> next_ready(Time now) const;

  uint64_t backlog_packets() const { return qlen_; }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o) { observer_ = o; }

  // tc -s qdisc show gauges and introspection (tests).
  uint32_t flows() const { return flows_count_; }
  uint32_t inactive_flows() const { return inactive_flows_; }
  uint32_t throttled_flows() const { return static_cast<uint32_t>(delayed_.size()); }
  uint32_t band_packets(int band) const { return band_pkt_count_[static_cast<size_t>(band)]; }
  uint32_t internal_packets() const { return internal_.qlen; }
  // The flow of a (non-orphan) socket hash, if it exists.
  std::optional<FlowState> flow_state(uint32_t flow_hash) const;
  std::optional<int32_t> flow_credit(uint32_t flow_hash) const;
  std::optional<Time> flow_time_next_packet(uint32_t flow_hash) const;

 private:
  static constexpr uint32_t kNil = PacketPool::kNil;

  struct Flow {
    PacketList queue;  // packets in non-decreasing time_to_send (head/tail)
    // Packets that arrived out of time order (the kernel's t_root), by time_to_send.
    std::unique_ptr<std::multimap<Time, uint32_t>> tree;
    uint64_t key = 0;
    uint32_t next = kNil;  // link in a new/old list
    uint32_t qlen = 0;
    int32_t credit = 0;
    uint8_t band = 0;
    FlowState state = FlowState::kDetached;
    bool in_use = false;
    Time age;               // when it became detached
    Time time_next_packet;  // zero = never set
  };
  struct FlowList {
    uint32_t head = kNil;
    uint32_t tail = kNil;
  };
  struct Band {
    FlowList new_flows;
    FlowList old_flows;
    int32_t credit = 0;
    int32_t quantum = 0;
  };
  // Per pool node: what the kernel keeps in fq_skb_cb and whether the skb had an EDT.
  struct Cb {
    Time time_to_send;
    uint8_t band = 0;
    bool edt = false;
  };
  // A throttled flow in the `delayed` set, ordered by time then insertion (rb-tree ties go
  // right).
  struct Delayed {
    Time at;
    uint64_t seq;
    uint32_t flow;
    bool operator>(const Delayed& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  uint64_t key_of(const Packet& p) const {
    return params_.orphan ? ((uint64_t{p.flow_hash} & orphan_mask_) << 1) | 1u
                          : uint64_t{p.flow_hash} << 1;
  }
  uint32_t bucket_of(uint64_t key) const {
    // hash_ptr: a multiplicative hash's top bits.
    return static_cast<uint32_t>((key * 0x61C8864680B583EBull) >> (64 - buckets_log_));
  }
  bool fastpath_ok(Time tts, Time now) const;
  uint32_t classify(uint64_t key, Time now);
  uint32_t lookup(uint64_t key) const;
  uint32_t gc_and_find(uint32_t bucket, uint64_t keep_key, Time now);
  void add_tail(uint32_t idx, bool new_list);
  void set_throttled(uint32_t idx);
  void check_throttled(Time now);
  uint32_t flow_peek(const Flow& f) const;  // pool node of the earliest packet
  void flow_erase(Flow& f, uint32_t node);
  void flow_add(Flow& f, uint32_t node);
  Time cb_time(uint32_t node) const { return cb_[node].time_to_send; }
  // The DRR/pacing part of fq_dequeue: the node of the packet to send (out of qlen_), or kNil.
  uint32_t dequeue_node(Time now);
  void apply_pacing(Flow& f, const Cb& cb, uint32_t len, Time now);
  Verdict drop_arrival(Packet&& p, Time now);

  Params params_;
  int32_t quantum_;
  int32_t initial_quantum_;
  uint64_t limit_;
  uint32_t flow_limit_;
  uint64_t maxrate_bytes_;  // ~0 = none
  uint64_t low_rate_bytes_;
  uint64_t orphan_mask_;
  uint32_t buckets_log_;
  std::array<uint8_t, 16> prio2band_{};

  PacketPool pool_;
  std::vector<Cb> cb_;
  std::vector<Flow> flow_slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<std::vector<uint32_t>> buckets_;
  Flow internal_;  // the fast-path FIFO (q->internal)
  std::array<Band, kBands> bands_{};
  size_t band_nr_ = 0;
  std::vector<Delayed> delayed_;  // min-heap (std::push_heap with greater)
  uint64_t delayed_seq_ = 0;
  std::array<uint32_t, kBands> band_pkt_count_{};
  uint32_t flows_count_ = 0;
  uint32_t inactive_flows_ = 0;
  uint64_t qlen_ = 0;
  uint64_t backlog_bytes_ = 0;
  uint32_t stash_ = kNil;
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<Fq>);

}  // namespace nicsim::algo
