#pragma once
// MultiQueueNic — a PCIe NIC with several queue pairs, as Linux runs one with `ethtool -L DEV
// combined N`: each pair is a PlatformNic of its own (TX: its own child qdisc under `mq`, its
// own TX ring, BQL limit and doorbell; RX: its own RX ring, interrupt vector with coalescing,
// NAPI context and GRO), and each pair's interrupt is served by its own core. The pairs share
// the MAC: one outgoing wire, onto which their DMA engines put frames in the order they are
// ready, and one incoming wire, from which the NIC steers every frame to an RX queue by RSS.
//
// Behaviour follows:
//  * RX steering: algo::Rss (Toeplitz hash of the frame's addresses and ports under the key,
//    the indirection table's entry at the hash's low bits; docs/algorithms/rss.md). The frame's
//    addresses and ports come from the host (NicSink::rss_flow).
//  * TX queue: Linux netdev_core_pick_tx through algo::TxQueuePick without XPS — the
//    simulated senders run on no particular CPU — so skb_tx_hash's reciprocal_scale of the
//    flow hash (Packet::flow_hash) over the TX queues; a flow stays on one queue.
//  * per TX queue qdisc: the `mq` root qdisc (net/sched/sch_mq.c) Linux attaches to a
//    multi-queue device gives each TX queue its own instance of the default qdisc; here each
//    queue pair gets its own instance of the interface's qdisc.
//  * BQL per TX queue (netdev_queue.dql): each PlatformNic has its own Dql.
//  * one core per queue: the IRQ of queue i is affine to CPU i (drivers spread their vectors
//    over the online CPUs; irqbalance or `set_irq_affinity` scripts do the same). Queue 0 runs on
//    the host's core given to attach(); queues 1..N-1 on cores this NIC owns, with the same
//    costs.
//
// Not modelled: XPS maps and the socket queue cache (see above), RPS/RFS, flow director (ATR),
// per-queue interrupt moderation settings (all pairs share the preset's), the MAC's own TX
// arbitration policy beyond "first ready first on the wire", and 802.3x PAUSE (PlatformNic has
// none).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/algo/rss.h"
#include "nicsim/algo/tx_queue_pick.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/nic.h"
#include "nicsim/model/platform_nic.h"

namespace nicsim::model {

class MultiQueueNic final : public Nic {
 public:
  struct Params {
    algo::Rss::Params rss;  // rss.queues must equal the number of queue pairs
  };

  // `pairs`: one PlatformNic per queue pair, each built with its own qdisc. Throws
  // InvalidParams when rss.queues differs from pairs.size() or there is no pair.
  MultiQueueNic(const Params& params, std::vector<std::unique_ptr<PlatformNic>> pairs);

  // Nic contract.
  void attach(Wire* out, Wire* in, Cpu* cpu, NicSink* sink) override;
  Verdict send(Packet&& p, Time now) override;
  std::optional<Time> next_event() const override;
  void advance(Time now) override;
  NicCounters counters() const override;
  NicQueueSample queue_sample() const override;
  std::string describe() const override;
  // Queue 0's qdisc (`tc -s qdisc` of one mq child); the others through pair(i).
  AnyQueue* qdisc_queue() override { return pairs_.front()->qdisc_queue(); }

  size_t queue_count() const { return pairs_.size(); }
  const PlatformNic& pair(size_t i) const { return *pairs_.at(i); }
  PlatformNic& pair(size_t i) { return *pairs_.at(i); }
  // The core serving queue i (queue 0: the host's core).
  const Cpu& queue_cpu(size_t i) const { return *cpus_.at(i); }
  const algo::Rss& rss() const { return rss_; }
  const algo::TxQueuePick& tx_pick() const { return tx_pick_; }
  // RX ring drops of every pair are reported here.
  void set_observer(Observer* o);

 private:
  void steer_arrivals(Time now);

  std::vector<std::unique_ptr<PlatformNic>> pairs_;
  algo::Rss rss_;
  algo::TxQueuePick tx_pick_;
  std::vector<std::unique_ptr<Cpu>> own_cpus_;  // cores of queues 1..N-1
  std::vector<Cpu*> cpus_;                      // the core of each queue
  Wire* in_ = nullptr;
  NicSink* sink_ = nullptr;
};

}  // namespace nicsim::model
