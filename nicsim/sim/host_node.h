#pragma once
// HostNode — a traffic end point: one NIC on the host's core, the TCP senders and receivers and
// the probes that live here, as one Engine process (sim::Node).
//
// Its wake-up is the earliest of its NIC's next event, its TCP endpoints' timers and its probes'
// next sends; each endpoint's time is cached and re-read only after a call into it, so a
// wake-up costs O(touched endpoints), not O(all). NIC callbacks (deliver, tx_released) are
// queued and handled after the NIC call returns, so nothing re-enters a model.
//
// What a host does with packets (docs/ARCHITECTURE.md "The simulator in one paragraph"):
//  * TCP: segments from the TCP model become Packets (sizes per tcp/segment.h, GSO units as
//    one packet the NIC segments); frames are mapped back to segments with gso_index. A qdisc
//    refusal goes back as on_local_drop, a congestion verdict as on_local_congestion; TX
//    releases return each segment's truesize share (TCP Small Queues).
//  * ICMP echo (ping): 98-byte requests (56 payload), replies sent at once by the peer; RTT.
//  * UDP probes (irtt-style): a request and an immediate reflection, giving the RTT and both
//    one-way delays exactly (the hosts share the simulation clock).
//  * Transfers (request/response): the client's request frame (SYN-sized) opens, on arrival,
//    a connection from the server that sends the response (TcpSender with bytes_to_send); the
//    transfer completes when its last byte is delivered to the client's application. The four
//    half round trips before the first response byte arrives (request, server SYN, client
//    SYN-ACK, data) have the directions and timing of a client-opened connection (SYN,
//    SYN-ACK, ACK + request, data); the small frames' sizes differ by a few bytes.
//  * UDP floods (udp_flood): datagrams at a constant rate, never answered; a datagram the local
//    qdisc refuses is lost (the application does not block: iperf -u with ENOBUFS ignored).
//  * Replays ([[traffic.replay]]): a recorded emulation's frames enter the NIC at their recorded
//    times with the recorded sizes, priorities, TOS and flow hashes; no metadata, so the
//    receiving host ignores them (sim::ReplaySource).
// Every packet carries its destination host (Packet::dst_host) for the routers on its path.
// Priority (skb->priority, pfifo_fast bands) follows the packet's TOS as the IPv4 stack does.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/model/cpu.h"
#include "nicsim/model/nic.h"
#include "nicsim/report/latency_recorder.h"
#include "nicsim/sim/index_set.h"
#include "nicsim/sim/node.h"
#include "nicsim/sim/sim_context.h"

namespace nicsim::sim {

class HostNode final : public Node, public model::NicSink {
 public:
  HostNode(SimContext& ctx, int index, std::string name, std::unique_ptr<model::Nic> nic);

  // Attaches the NIC to its wires. Call once, before add_endpoints().
  void attach(model::Wire* out, model::Wire* in) { nic_->attach(out, in, &cpu_, this); }
  // Takes the endpoints that live here from ctx.endpoints (flows sent or received, probes sent).
  void add_endpoints();

  void reschedule() override;
  void on_event(Time now, uint64_t tag) override;
  void deliver(Packet&& frame, Time now) override {
    delivered_.push_back(Delivered{std::move(frame), now});
  }
  void tx_released(const model::TxRelease& r, Time now) override { released_.emplace_back(r, now); }
  // GRO: a frame's TCP headers from its metadata; a merged packet is queued as one delivery.
  algo::GroHeader gro_header(const Packet& frame) const override;
  algo::Rss::Flow rss_flow(const Packet& frame) const override;
  void deliver_merged(std::vector<Packet>& frames, Time now) override;

  // The flow's sender / receiver on this host was called: re-read its time, drain its output.
  void touch_sender(TcpFlow& f);
  void touch_receiver(TcpFlow& f);
  // Endpoint e's time changed without output (a receiver whose flow started elsewhere).
  void retime(uint32_t e) { retime_.insert(e); }

  const std::string& name() const { return name_; }
  const model::Nic& nic() const { return *nic_; }
  model::Nic& nic() { return *nic_; }
  const model::Cpu& cpu() const { return cpu_; }
  // Every frame delivered here: its last bit on the wire to its delivery to the stack (the rx
  // stage: interrupt coalescing, RX ring wait, poll work, GRO hold). report::RxBatching.
  const report::LatencyRecorder& rx_latency() const { return rx_latency_; }

 private:
  struct Delivered {
    Packet frame;
    Time at;
    uint32_t merged = 1;  // GRO: the first frame of a merged packet counts its frames, the rest 0
  };

  Packet make_packet(uint32_t len, uint32_t hash, uint32_t flow_id, uint8_t tos, uint32_t handle,
                     int dst, Time now);
  void send_segment(TcpFlow& flow, const tcp::Segment& seg, bool from_sender, Time now);
  void send_probe_packet(Probe& probe, PacketMeta::Kind kind, uint64_t seq, Time sent,
                         Time forward_arrival, Time now);
  void send_flood_packet(Flood& flood, uint64_t seq, Time sent, Time now);
  void send_transfer_request(TcpFlow& f, Time now);
  void send_replayed(ReplaySource& r, Time now);
  void drain_outputs(Time now);
  void on_delivered(Packet&& frame, Time now);
  void record_rx_latency(const Packet& frame);
  void on_delivered_merged(Delivered* frames, uint32_t n, Time now);
  void on_released(const model::TxRelease& r, Time now);
  Time endpoint_time(size_t e) const;
  void refresh_due();
  std::optional<Time> next_time();
  std::optional<Time> scan_next_time() const;
  void check_drained() const;
  void run_endpoint(size_t e, Time now);

  SimContext& ctx_;
  int index_;
  std::string name_;
  model::Cpu cpu_;
  std::unique_ptr<model::Nic> nic_;
  std::vector<Delivered> delivered_;
  report::LatencyRecorder rx_latency_;
  std::vector<std::pair<model::TxRelease, Time>> released_;
  // The batches being handled while the NIC queues new callbacks into the two above (swapped,
  // so neither vector gives its buffer back to the allocator).
  std::vector<Delivered> delivered_work_;
  std::vector<std::pair<model::TxRelease, Time>> released_work_;
  std::vector<TcpFlow*> sending_;         // flows whose sender lives here
  std::vector<TcpFlow*> receiving_;       // flows whose receiver lives here
  std::vector<Probe*> probing_;           // probes sent from here
  std::vector<Flood*> flooding_;          // floods sent from here
  std::vector<ReplaySource*> replaying_;  // replayed frames sent from here
  // Wake-up bookkeeping (next_time): endpoint e is sending_[e]'s sender, then receiving_'s
  // receivers, then probing_'s probes, then flooding_'s floods, then replaying_'s sources. An
  // endpoint's state changes only through calls made while a host runs, and every such call marks
  // it (touch_sender / touch_receiver), so `due_` is re-read only for marked endpoints and only
  // they are drained of output.
  std::vector<Time> due_;       // each endpoint's next time; Time::max(): none
  Time due_min_ = Time::max();  // the earliest of `due_` (as of the last refresh_due)
  IndexSet retime_;             // endpoints whose `due_` must be re-read
  IndexSet may_output_;         // TCP endpoints that may have segments queued for the NIC
};

}  // namespace nicsim::sim
