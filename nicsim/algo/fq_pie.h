#pragma once
// FqPie — Flow Queue PIE (Linux sch_fq_pie.c, v5.6+): flows hashed into `flows` queues as in
// fq_codel, served by DRR with a new-flows list, each flow with its own PIE controller
// (nicsim/algo/pie.h: per-flow PieVars, one PieConfig) deciding at enqueue on the flow's own
// backlog and delay. Drops happen at enqueue only.
//
// Behaviour follows net/sched/sch_fq_pie.c (torvalds/linux at 0a9e86dc1f0f) — ported, no code
// copied:
//   classify: idx = reciprocal_scale(flow_hash, flows).
//   enqueue:  drop at `limit` packets (overlimit); memory_usage > memory_limit + truesize only
//             counts `overmemory` (the kernel does not drop for it); pie_drop_early on the
//             flow's vars and backlog; a packet chosen for drop is CE-marked and queued when
//             `ecn` is on, the flow's p <= ecn_prob % and it is ECN-capable. A flow off both
//             lists joins new_flows with deficit = quantum.
//   dequeue:  DRR++ exactly as fq_codel (a flow with deficit <= 0 gets a quantum and moves to
//             old_flows; an empty flow from new_flows moves to old_flows if that list is not
//             empty, else leaves); pie_process_dequeue on the flow's vars and backlog.
//   timer:    every tupdate (first HZ/2 after creation) pie_calculate_probability for every
//             flow with its backlog; run lazily at each call as in pie.h.
//
// Units as pie.h; memory is truesize = SKB_DATA_ALIGN(len) + truesize_overhead (as
// fq_codel.h models it). Deviations (docs/algorithms/fq_pie.md): with more than 2048 flows the
// kernel spreads one round of updates over consecutive jiffies; here a firing updates all.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "nicsim/algo/pie.h"
#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"

namespace nicsim::algo {

class FqPie {
 public:
  struct Params {
    int64_t limit = 10240;            // packets; fq_pie_init: 10 * 1024
    int64_t flows = 1024;             // fq_pie_init; 1..65536
    int64_t memory_limit = 32 << 20;  // bytes of truesize; SZ_32M
    int64_t quantum = 1514;           // psched_mtu(dev); tc range 1..1 MiB
    int64_t ecn_prob = 10;            // percent: mark (not drop) while p <= this
    Duration target = 15_ms;          // pie_params_init
    Duration tupdate = 15_ms;         // pie_params_init
    int64_t alpha = 2;                // 1/16 units
    int64_t beta = 20;                // 1/16 units
    bool ecn = false;
    bool bytemode = false;
    bool dq_rate_estimator = false;
    int64_t mtu = 1514;               // psched_mtu(dev)
    int64_t truesize_overhead = 576;  // nicsim model: truesize = align64(len) + this
    uint64_t seed = 1;
    Validation validate() const;
  };
  struct Stats : QueueStats {
    PieStats pie;                 // pkts_in, dropped, overlimit, ecn_mark (maxq unused)
    uint64_t overmemory = 0;      // arrivals that found memory_usage > memory_limit + truesize
    uint64_t new_flow_count = 0;  // times a flow joined new_flows
  };
  enum class FlowList : uint8_t { kNone, kNew, kOld };

  FqPie() : FqPie(Params{}) {}
  explicit FqPie(const Params& params);

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now);
  // The returned pointer is valid until the next enqueue or dequeue.
  const Packet* peek(Time now);
  std::optional<Time> next_ready(Time now) const {
    return qlen_ > 0 ? std::optional<Time>(now) : std::nullopt;
  }

  uint64_t backlog_packets() const { return qlen_; }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  const PieConfig& config() const { return config_; }
  void set_observer(Observer* o) { observer_ = o; }

  // Introspection (tests, counters).
  uint32_t classify(uint32_t flow_hash) const {
    return static_cast<uint32_t>((static_cast<uint64_t>(flow_hash) * flows_.size()) >> 32);
  }
  uint64_t truesize(uint32_t len) const {
    return ((uint64_t{len} + 63) & ~uint64_t{63}) + truesize_overhead_;
  }
  uint64_t memory_usage() const { return memory_usage_; }
  const PieVars& flow_vars(uint32_t idx) const { return flows_[idx].vars; }
  uint32_t flow_backlog(uint32_t idx) const { return flows_[idx].backlog; }
  int32_t flow_deficit(uint32_t idx) const { return flows_[idx].deficit; }
  FlowList flow_list(uint32_t idx) const { return flows_[idx].list; }
  uint64_t new_flows_len() const { return list_length(new_flows_); }
  uint64_t old_flows_len() const { return list_length(old_flows_); }
  std::optional<Time> next_update() const { return timer_.next(); }

 private:
  static constexpr uint32_t kNil = PacketPool::kNil;

  struct Flow {
    PieVars vars;
    PacketList queue;
    uint32_t backlog = 0;  // bytes (u32 like the kernel's)
    int32_t deficit = 0;
    uint32_t next = kNil;  // link in new_flows_ / old_flows_
    FlowList list = FlowList::kNone;
  };
  struct FlowQueue {
    uint32_t head = kNil;
    uint32_t tail = kNil;
  };

  void push_tail(FlowQueue& l, uint32_t idx, FlowList which);
  void pop_head(FlowQueue& l);
  uint64_t list_length(const FlowQueue& l) const;
  void run_timer(Time now) {
    if (timer_.due(now)) {
      catch_up_timer(now);
    }
  }
  void catch_up_timer(Time now);
  // DRR; the pool node of the packet to deliver (out of its flow and qlen_), or kNil.
  uint32_t dequeue_drr(Time now);

  Params params_;
  PieConfig config_;
  int32_t quantum_;
  uint64_t limit_;
  uint64_t memory_limit_;
  uint64_t ecn_prob_limit_;  // (MAX_PROB / 100) * ecn_prob
  uint64_t truesize_overhead_;
  std::vector<Flow> flows_;
  PacketPool pool_;
  FlowQueue new_flows_;
  FlowQueue old_flows_;
  AqmRandom rng_;
  uint64_t qlen_ = 0;           // packets in flows + stash (sch->q.qlen)
  uint64_t backlog_bytes_ = 0;  // the same in bytes (sch->qstats.backlog)
  uint64_t memory_usage_ = 0;   // truesize of packets in flows
  uint32_t stash_ = kNil;       // node taken by peek(), returned by the next dequeue()
  AqmTimer timer_;
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<FqPie>);

}  // namespace nicsim::algo
