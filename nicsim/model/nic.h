#pragma once
// Nic — the contract every NIC/driver model offers to the back-ends (sim and emu).
//
// A NIC model is a deterministic state machine over `Time now`: the host hands it packets to
// send (into the qdisc), it reads frames from its incoming Wire, it writes frames to its
// outgoing Wire, and it hands received frames and TX completions to its host through a
// NicSink. It keeps its own Agenda of future actions; the back-end calls advance(now) whenever
// now >= next_event() and after every input re-reads next_event(). Costs of driver work run on
// the host's Cpu (shared with the host's other work).
//
// Two families implement it: PlatformNic (PCIe or SoC MAC: qdisc → TX ring + BQL + doorbell →
// wire; RX ring + interrupt coalescing + NAPI) and UsbNic (usbnet / FreeBSD uether: bulk-OUT
// transfers, device FIFOs, bulk-IN aggregation, host-controller completion latency).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/algo/gro.h"
#include "nicsim/algo/rss.h"
#include "nicsim/core/element.h"
#include "nicsim/core/observer.h"
#include "nicsim/core/packet.h"
#include "nicsim/core/time.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/wire.h"

namespace nicsim::model {

// A transmitted frame whose descriptor was cleaned: the socket's bytes are released (what TCP
// Small Queues waits for, docs/mechanisms §7.1) and the sender learns its timing.
struct TxRelease {
  uint64_t packet_id = 0;  // the id of the packet the stack handed to send()
  uint32_t flow_id = 0;
  uint32_t bytes = 0;        // skb->len of this frame (a GSO segment's own length)
  bool last_segment = true;  // the last frame of a software-segmented GSO packet
  uint32_t meta = 0;         // the packet's metadata handle (Packet::meta)
  uint16_t gso_index = 0;    // which segment of its GSO parent (Packet::gso_index)
  uint16_t segs = 1;         // segments this release covers: a whole GSO/TSO unit has gso_segs
};

// The release record of `p` as it stands (a frame, a segment, or a whole GSO unit).
inline TxRelease release_of(const Packet& p, bool last_segment = true) {
  return TxRelease{p.id, p.flow_id, p.len, last_segment, p.meta, p.gso_index, p.gso_segs};
}

class NicSink {
 public:
  virtual ~NicSink() = default;
  // A received frame reached the host stack.
  virtual void deliver(Packet&& frame, Time now) = 0;
  // A transmitted frame was completed and freed — or a packet the device queue had accepted
  // was dropped inside it (a qdisc's head drop, CoDel, a malformed frame): kfree_skb runs the
  // same destructor, so TCP Small Queues gets the bytes back either way. A packet refused at
  // send() (Verdict::kDropped) is NOT released here: the caller still owns that decision.
  virtual void tx_released(const TxRelease& release, Time now) = 0;
  // GRO (a NIC with gro on): the headers tcp4_gro_receive would read from `frame`. The default
  // says "not TCP", so every frame is delivered alone.
  virtual algo::GroHeader gro_header(const Packet& /*frame*/) const { return {}; }
  // A packet GRO completed: its frames, in sequence order, reach the stack as ONE packet (one
  // pass through ip_rcv / tcp_v4_rcv, so one ACK decision). `frames` may be moved from. The
  // default hands each frame to deliver().
  virtual void deliver_merged(std::vector<Packet>& frames, Time now) {
    for (Packet& f : frames) {
      deliver(std::move(f), now);
    }
  }
  // RSS (a NIC with several RX queues, MultiQueueNic): the addresses, ports and protocol the
  // NIC hashes for `frame`. The default knows only the hosts: the scenario address plan's
  // 198.18.0.(index + 1) for Packet::src_host / dst_host and no ports, so all traffic between
  // two hosts shares a queue; back-ends that know the frame's ports override it.
  virtual algo::Rss::Flow rss_flow(const Packet& frame) const { return host_rss_flow(frame); }
  static algo::Rss::Flow host_rss_flow(const Packet& frame) {
    constexpr uint32_t kPlan = 0xC6120001u;  // 198.18.0.1, host index 0
    return algo::Rss::Flow{.src_ip = kPlan + frame.src_host, .dst_ip = kPlan + frame.dst_host};
  }
};

// Summary counters every NIC reports (more detail in each model's own stats).
struct NicCounters {
  uint64_t tx_packets = 0;  // frames put on the wire
  uint64_t tx_bytes = 0;
  uint64_t tx_qdisc_drops = 0;  // packets the qdisc dropped
  uint64_t rx_packets = 0;      // frames delivered to the stack
  uint64_t rx_bytes = 0;
  uint64_t rx_drops = 0;  // frames lost in the NIC (ring/FIFO overflow, malformed)
  uint64_t interrupts = 0;
  uint64_t doorbells = 0;
  // Sums another device's counters in (a multi-queue NIC's pairs).
  NicCounters& operator+=(const NicCounters& o) {
    tx_packets += o.tx_packets;
    tx_bytes += o.tx_bytes;
    tx_qdisc_drops += o.tx_qdisc_drops;
    rx_packets += o.rx_packets;
    rx_bytes += o.rx_bytes;
    rx_drops += o.rx_drops;
    interrupts += o.interrupts;
    doorbells += o.doorbells;
    return *this;
  }
};

// A sample of the NIC's queues for time series (qdisc, ring, BQL, device FIFO).
struct NicQueueSample {
  uint64_t qdisc_packets = 0;
  uint64_t qdisc_bytes = 0;
  uint64_t ring_packets = 0;  // TX ring (or usbnet TX queue) occupancy
  uint64_t ring_bytes = 0;
  uint64_t bql_limit = 0;  // 0 without BQL
  uint64_t device_fifo_bytes = 0;
  // Sums another queue set's occupancy in (a multi-queue NIC's pairs).
  NicQueueSample& operator+=(const NicQueueSample& o) {
    qdisc_packets += o.qdisc_packets;
    qdisc_bytes += o.qdisc_bytes;
    ring_packets += o.ring_packets;
    ring_bytes += o.ring_bytes;
    bql_limit += o.bql_limit;
    device_fifo_bytes += o.device_fifo_bytes;
    return *this;
  }
};

// Sits between a NIC's qdisc and an optional user Observer: forwards every event, and turns
// the drop of a packet the qdisc had already accepted (fq_codel's fattest-flow head drop,
// CoDel at dequeue, an HTB leaf) into a TxRelease — kfree_skb runs the socket's destructor
// just as TX completion does, so TCP Small Queues must get those bytes back. The packet being
// offered by send() is excluded when the qdisc refuses it: the caller learns that from the
// verdict (Linux: NET_XMIT_DROP to tcp_transmit_skb).
class QdiscDropRelease final : public Observer {
 public:
  void set_sink(NicSink* sink) { sink_ = sink; }
  void set_user(Observer* user) { user_ = user; }
  // Bracket qdisc.enqueue(p) of a packet offered by send().
  void begin_enqueue(uint64_t id) {
    arriving_ = id;
    enqueueing_ = true;
  }
  void end_enqueue() { enqueueing_ = false; }
  uint64_t released_drops() const { return released_drops_; }

  void on_enqueue(Time now, const Packet& p) override {
    if (user_ != nullptr) {
      user_->on_enqueue(now, p);
    }
  }
  void on_dequeue(Time now, const Packet& p) override {
    if (user_ != nullptr) {
      user_->on_dequeue(now, p);
    }
  }
  void on_mark(Time now, const Packet& p) override {
    if (user_ != nullptr) {
      user_->on_mark(now, p);
    }
  }
  void on_drop(Time now, const Packet& p, DropReason why) override {
    if (user_ != nullptr) {
      user_->on_drop(now, p, why);
    }
    if (enqueueing_ && p.id == arriving_) {
      return;  // refused at send(): reported through the verdict
    }
    ++released_drops_;
    if (sink_ != nullptr) {
      sink_->tx_released(release_of(p), now);
    }
  }

 private:
  NicSink* sink_ = nullptr;
  Observer* user_ = nullptr;
  uint64_t arriving_ = 0;
  bool enqueueing_ = false;
  uint64_t released_drops_ = 0;
};

class Nic {
 public:
  virtual ~Nic() = default;
  // Connects the NIC to its outgoing and incoming wires and its host. Call once before use.
  virtual void attach(Wire* out, Wire* in, Cpu* cpu, NicSink* sink) = 0;
  // The host stack hands a packet (possibly a GSO super-packet) to the device queue.
  virtual Verdict send(Packet&& p, Time now) = 0;
  virtual std::optional<Time> next_event() const = 0;
  virtual void advance(Time now) = 0;
  virtual NicCounters counters() const = 0;
  virtual NicQueueSample queue_sample() const = 0;
  virtual std::string describe() const = 0;  // one line: model, key settings
  // The device's qdisc (for its kind's own counters, `tc -s qdisc show`); null when the NIC
  // has none of its own.
  virtual AnyQueue* qdisc_queue() { return nullptr; }
};

}  // namespace nicsim::model
