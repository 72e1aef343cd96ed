#pragma once
// Cake — Common Applications Kept Enhanced: a deficit-mode shaper, Diffserv tins, per-tin
// flow queueing with host isolation (DRR++ over 8-way set-associative queues) and COBALT per
// flow queue. Høiland-Jørgensen, Täht, Morton, "Piece of CAKE: A Comprehensive Queue
// Management Solution for Home Gateways", LANMAN 2018; behaviour ported (no code copied) from
// Linux net/sched/sch_cake.c, torvalds/linux commit 0280f429dc21 (a v5.x tree: prandom_u32).
// docs/algorithms/cake.md has the model, the parameters and the deviations.
//
//   enqueue: tin from the DSCP (wash clears it afterwards); queue = set-associative lookup of
//            the flow hash (flow/host parts per isolation mode) among 8 ways of 1024; a GSO
//            packet is split into its segments (split_gso); an empty queue joins new_flows
//            with a deficit scaled down by its hosts' bulk flow counts; the ACK filter may drop
//            a queued ACK it makes redundant; over the memory limit the longest queue of any
//            tin is head-dropped (and its COBALT BLUE probability raised).
//   dequeue: the global shaper (time_next_packet, and a 1.5x failsafe) holds packets until
//            due; a tin is chosen (shaped: the highest-priority tin under its threshold, else
//            the earliest scheduled; unshaped: tin DRR by quantum); within it DRR++ over
//            decaying (first pick only), new and old flow lists; COBALT drops or marks; the
//            packet's overhead-adjusted length is charged to the flow, the tin and the shaper.
//
// Units: bytes are Packet::len (skb->len); rates bytes/s internally (tc's rate / 8); times ns.
// Memory is the modelled skb->truesize (as fq_codel: align64(len) + truesize_overhead).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/algo/cake_ack_filter.h"
#include "nicsim/algo/cake_overhead.h"
#include "nicsim/algo/cake_tins.h"
#include "nicsim/algo/cobalt.h"
#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/rate.h"

namespace nicsim::algo {

class Cake {
 public:
  // The kernel's CAKE_FLOW_* values: bit 0 source host, bit 1 destination host, bit 2 flows.
  enum class FlowMode : uint8_t {
    kFlowblind = 0,
    kSrcHost = 1,
    kDstHost = 2,
    kHosts = 3,
    kFlows = 4,
    kDualSrcHost = 5,
    kDualDstHost = 6,
    kTripleIsolate = 7,
  };

  struct Params {
    Rate bandwidth;  // shaper rate; 0 = unlimited (cake_init: rate_bps = 0)
    CakeDiffserv diffserv = CakeDiffserv::kDiffserv3;  // cake_init: CAKE_DIFFSERV_DIFFSERV3
    FlowMode flow_mode = FlowMode::kTripleIsolate;     // cake_init: CAKE_FLOW_TRIPLE
    Duration rtt = 100_ms;                             // COBALT interval (cake_init: 100 ms)
    // COBALT target; unset = rtt / 20 (tc's rule; 5 ms for the default rtt).
    std::optional<Duration> target = std::nullopt;
    int64_t overhead = 0;  // bytes added per packet (tc `overhead`), -64..256
    bool raw = true;       // no overhead compensation (tc `raw`, the default); false = the MAC
                           // header is replaced by `overhead` (tc `overhead N`, even N = 0)
    int64_t mpu = 0;       // minimum packet unit after overhead, bytes 0..256
    CakeAtm atm = CakeAtm::kNone;  // ATM cell / PTM 64b65b framing compensation
    bool ingress = false;          // count dropped packets against the shaper (tc `ingress`)
    bool wash = false;             // clear DSCP after tin selection (tc `wash`)
    bool split_gso = true;         // cake_init: CAKE_FLAG_SPLIT_GSO
    CakeAckFilterMode ack_filter = CakeAckFilterMode::kNone;
    int64_t memlimit = 0;             // bytes of truesize; 0 = automatic (cake_reconfigure)
    bool nat = false;                 // not modelled (needs conntrack): validate() rejects true
    bool autorate_ingress = false;    // not modelled: validate() rejects true
    int64_t limit = 10240;            // sch->limit, packets (only caps the memory limit)
    int64_t mtu = 1514;               // psched_mtu(dev)
    int64_t truesize_overhead = 576;  // nicsim model: truesize = align64(len) + this
    uint64_t seed = 1;                // the deterministic stand-in for prandom_u32
    Validation validate() const;
    Duration effective_target() const;
  };

  // One tin's tc -s column (cake_dump_stats, TCA_CAKE_TIN_STATS_*).
  struct TinStats {
    uint64_t threshold_rate = 0;  // bytes/s ("thresh")
    uint64_t target_us = 0;
    uint64_t interval_us = 0;
    uint64_t peak_delay_us = 0;  // "pk_delay"
    uint64_t avg_delay_us = 0;   // "av_delay"
    uint64_t base_delay_us = 0;  // "sp_delay"
    uint64_t backlog_bytes = 0;
    uint64_t sent_packets = 0;  // "pkts": every packet enqueued to the tin (as the kernel)
    uint64_t sent_bytes = 0;    // "bytes"
    uint64_t way_indirect_hits = 0;
    uint64_t way_misses = 0;
    uint64_t way_collisions = 0;
    uint64_t dropped = 0;
    uint64_t ecn_marked = 0;
    uint64_t ack_drops = 0;
    uint64_t sparse_flows = 0;  // sparse + decaying
    uint64_t bulk_flows = 0;
    uint64_t unresponsive_flows = 0;
    uint64_t max_skblen = 0;
    uint64_t flow_quantum = 0;
  };

  struct Stats : QueueStats {
    uint64_t drop_overlimit = 0;  // packets dropped over the memory limit (cake_drop)
    uint64_t cobalt_drops = 0;    // COBALT (CoDel or BLUE) drops at dequeue
    uint64_t ack_drops = 0;       // ACKs dropped by the ACK filter
  };

  static constexpr uint32_t kQueues = 1024;  // CAKE_QUEUES
  static constexpr uint32_t kSetWays = 8;    // CAKE_SET_WAYS

  Cake() : Cake(Params{}) {}
  explicit Cake(const Params& params);

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now);
  // The returned pointer is valid until the next enqueue or dequeue.
  const Packet* peek(Time now);
  std::optional<Time> next_ready(Time now) const;

  uint64_t backlog_packets() const { return qlen_; }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o) { observer_ = o; }
  // The TCP header reader the ACK filter uses; the default reads emulated frames' bytes
  // (CakeFrameTcpReader); nullptr: no packet is a known TCP ACK.
  void set_tcp_reader(const CakeTcpReader* r) { tcp_reader_ = r; }

  // tc -s, per tin in tc's display order, and the global lines.
  int tin_count() const { return layout_.tin_count; }
  const char* tin_name(int display) const { return layout_.name[layout_.order[display]]; }
  TinStats tin_stats(int display) const;
  uint64_t capacity_estimate() const { return rate_bps_; }  // bytes/s (no autorate)
  uint64_t memory_used() const { return buffer_max_used_; }
  uint64_t memory_limit() const { return buffer_limit_; }
  const CakeOverhead& overhead() const { return overhead_; }

  // Introspection (tests).
  int tin_of(const Packet& p) const;  // the tin (kernel numbering) a packet is classified to
  uint32_t flow_quantum(int tin) const { return tins_[tin].flow_quantum; }
  const CobaltParams& cobalt_params(int tin) const { return tins_[tin].cparams; }
  uint32_t queue_backlog(int tin, uint32_t idx) const { return tins_[tin].backlogs[idx]; }
  int32_t queue_deficit(int tin, uint32_t idx) const { return tins_[tin].flows[idx].deficit; }
  const CobaltVars& queue_cobalt(int tin, uint32_t idx) const {
    return tins_[tin].flows[idx].cvars;
  }
  uint32_t last_queue() const { return last_idx_; }  // queue of the last enqueued packet
  uint64_t bulk_flow_count(int tin) const { return tins_[tin].bulk_flow_count; }
  uint64_t sparse_flow_count(int tin) const { return tins_[tin].sparse_flow_count; }
  uint64_t decaying_flow_count(int tin) const { return tins_[tin].decaying_flow_count; }
  Time time_next_packet() const { return Time::from_ns(time_next_packet_); }

 private:
  static constexpr uint32_t kNil = PacketPool::kNil;
  static constexpr uint16_t kNoFlow = 0xFFFF;

  // The kernel's CAKE_SET_*: which rotation a queue is in and how it is counted.
  enum class Set : uint8_t { kNone, kSparse, kSparseWait, kBulk, kDecaying };
  enum class Chain : uint8_t { kNone, kNew, kOld, kDecaying };

  struct Flow {  // cake_flow; the kernel keeps it <= 64 bytes, so does this
    PacketList queue;
    uint16_t prev = kNoFlow;  // flowchain links within the tin
    uint16_t next = kNoFlow;
    int32_t deficit = 0;
    uint32_t dropped = 0;
    uint16_t srchost = 0;  // index into the tin's host table
    uint16_t dsthost = 0;
    Set set = Set::kNone;
    Chain chain = Chain::kNone;
    CobaltVars cvars;
  };
  static_assert(sizeof(Flow) <= 64);

  struct Host {  // cake_host
    uint32_t srchost_tag = 0;
    uint32_t dsthost_tag = 0;
    uint16_t srchost_bulk_flow_count = 0;
    uint16_t dsthost_bulk_flow_count = 0;
  };

  struct FlowChain {
    uint16_t head = kNoFlow;
    uint16_t tail = kNoFlow;
    bool empty() const { return head == kNoFlow; }
  };

  struct Tin {  // cake_tin_data
    std::vector<Flow> flows = std::vector<Flow>(kQueues);
    std::vector<uint32_t> backlogs = std::vector<uint32_t>(kQueues, 0);
    std::vector<uint32_t> tags = std::vector<uint32_t>(kQueues, 0);
    std::vector<Host> hosts = std::vector<Host>(kQueues);
    uint32_t flow_quantum = 1514;
    CobaltParams cparams;
    uint64_t drop_overlimit = 0;
    uint32_t bulk_flow_count = 0;
    uint32_t sparse_flow_count = 0;
    uint32_t decaying_flow_count = 0;
    uint32_t unresponsive_flow_count = 0;
    uint32_t max_skblen = 0;
    FlowChain new_flows, old_flows, decaying_flows;
    int64_t time_next_packet = 0;  // ns
    uint64_t tin_rate_ns = 0;      // ns per byte << tin_rate_shft
    uint64_t tin_rate_bps = 0;     // bytes/s
    uint32_t tin_rate_shft = 0;
    uint16_t tin_quantum = 0;
    int32_t tin_deficit = 0;
    uint64_t tin_backlog = 0;
    uint64_t tin_dropped = 0;
    uint64_t tin_ecn_mark = 0;
    uint64_t packets = 0;
    uint64_t bytes = 0;
    uint64_t ack_drops = 0;
    uint64_t avge_delay = 0, peak_delay = 0, base_delay = 0;  // ns, EWMAs
    uint64_t way_directs = 0, way_hits = 0, way_misses = 0, way_collisions = 0;
  };

  bool dual_src() const { return (flow_mode_ & 5) == 5; }  // cake_dsrc
  bool dual_dst() const { return (flow_mode_ & 6) == 6; }  // cake_ddst

  // Chain operations (list_add_tail / list_move_tail / list_del_init on flowchain).
  void chain_unlink(Tin& b, uint16_t idx);
  void chain_push_tail(Tin& b, uint16_t idx, Chain which);
  FlowChain& chain_of(Tin& b, Chain c);

  void set_rate(Tin& b, uint64_t rate);
  uint32_t select_tin(Packet& p) const;
  uint16_t hash_to_queue(Tin& b, const Packet& p);
  uint16_t host_slot(Tin& b, uint32_t hash, bool src);
  uint64_t truesize(uint32_t len) const {
    return ((uint64_t{len} + 63) & ~uint64_t{63}) + truesize_overhead_;
  }
  uint32_t cost(const Packet& p) const;  // cake_overhead without touching the size stats
  uint32_t advance_shaper(Tin& b, const Packet& p, int64_t now, bool drop);
  void add_to_flow(Tin& b, uint16_t idx, Packet&& p, int64_t now);
  void drop_redundant_ack(Tin& b, uint16_t idx, int64_t now, Time t);
  void account_flowchain_on_enqueue(Tin& b, uint16_t idx);
  // cake_drop: head-drops from the longest queue of any tin; returns the dropped pool node's
  // owner (tin, queue) packed as tin << 16 | idx.
  uint32_t drop_longest(int64_t now, Time t);
  uint32_t drop_head(uint32_t tin, uint32_t idx, int64_t now, Time t);
  uint32_t pop_head(Tin& b, uint16_t idx);  // cake_dequeue_one; kNil if empty
  uint32_t dequeue_node(Time t);            // cake_dequeue; kNil if nothing may leave
  bool choose_tin(int64_t now);
  void retire_empty_flow(Tin& b, uint16_t idx, int64_t now);
  void deliver_stats(Tin& b, Flow& flow, const Packet& p, int64_t now);
  void report_drop(const Packet& p, Time t, DropReason why);
  uint32_t random32();

  Params params_;
  CakeTinLayout layout_;
  CakeOverhead overhead_;
  uint8_t flow_mode_;
  std::vector<Tin> tins_;
  uint64_t rate_bps_ = 0;  // bytes/s
  uint64_t rate_ns_ = 0;
  uint32_t rate_shft_ = 0;
  int64_t time_next_packet_ = 0;      // ns
  int64_t failsafe_next_packet_ = 0;  // ns
  uint64_t buffer_used_ = 0;
  uint64_t buffer_max_used_ = 0;
  uint64_t buffer_limit_ = 0;
  uint64_t truesize_overhead_;
  uint16_t cur_tin_ = 0;
  uint16_t cur_flow_ = 0;
  uint32_t last_idx_ = 0;
  std::vector<uint16_t> quantum_div_;
  PacketPool pool_;
  uint64_t qlen_ = 0;           // packets, stash included (sch->q.qlen)
  uint64_t backlog_bytes_ = 0;  // bytes, stash included
  uint32_t stash_ = kNil;
  uint64_t rng_;
  const CakeTcpReader* tcp_reader_ = &CakeFrameTcpReader::instance();
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<Cake>);

}  // namespace nicsim::algo
