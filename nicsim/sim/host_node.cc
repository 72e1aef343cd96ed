#include "nicsim/sim/host_node.h"

#include <algorithm>
#include <stdexcept>

#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/core/gso.h"

namespace nicsim::sim {
namespace {

// The ECN field carried by the packet and the priority the IPv4 stack derives from the TOS.
uint8_t tos_of(uint8_t dscp, Ecn ecn) {
  return static_cast<uint8_t>((dscp << 2) | static_cast<uint8_t>(ecn));
}

}  // namespace

HostNode::HostNode(SimContext& ctx, int index, std::string name, std::unique_ptr<model::Nic> nic)
    : Node(ctx.engine), ctx_(ctx), index_(index), name_(std::move(name)), nic_(std::move(nic)) {}

void HostNode::add_endpoints() {
  for (auto& f : ctx_.endpoints.flows()) {
    if (f->from == index_) {
      f->sender_ep = static_cast<uint32_t>(sending_.size());
      sending_.push_back(f.get());
    }
  }
  for (auto& f : ctx_.endpoints.flows()) {
    if (f->to == index_) {
      receiving_.push_back(f.get());
    }
  }
  for (size_t k = 0; k < receiving_.size(); ++k) {
    receiving_[k]->receiver_ep = static_cast<uint32_t>(sending_.size() + k);
  }
  for (auto& p : ctx_.endpoints.probes()) {
    if (p->from == index_) {
      probing_.push_back(p.get());
    }
  }
  for (auto& f : ctx_.endpoints.floods()) {
    if (f->from == index_) {
      flooding_.push_back(f.get());
    }
  }
  for (auto& r : ctx_.endpoints.replays()) {
    if (r->from == index_) {
      replaying_.push_back(r.get());
    }
  }
  const size_t endpoints =
      sending_.size() + receiving_.size() + probing_.size() + flooding_.size() + replaying_.size();
  due_.assign(endpoints, Time::max());
  retime_.resize(endpoints);
  may_output_.resize(endpoints);
  for (size_t e = 0; e < endpoints; ++e) {
    retime_.insert(e);
  }
}

// ---- packets ---------------------------------------------------------------------------

Packet HostNode::make_packet(uint32_t len, uint32_t hash, uint32_t flow_id, uint8_t tos,
                             uint32_t handle, int dst, Time now) {
  Packet p;
  p.id = ++ctx_.next_packet_id;
  p.len = len;
  p.flow_hash = hash;
  p.flow_id = flow_id;
  p.tos = tos;
  p.priority = algo::rt_tos2priority(tos);
  p.dst_host = static_cast<uint16_t>(dst);
  p.src_host = static_cast<uint16_t>(index_);  // CAKE isolates hosts by it
  p.meta = handle;
  p.stamp(Stage::kCreated, now);
  return p;
}

// Hands a TCP segment to the NIC; reports a local drop to the sender.
void HostNode::send_segment(TcpFlow& flow, const tcp::Segment& seg, bool from_sender, Time now) {
  PacketMeta m;
  m.kind = from_sender ? PacketMeta::Kind::kTcpData : PacketMeta::Kind::kTcpAck;
  m.flow = flow.index;
  m.seg = seg;
  const uint32_t segs = std::max<uint32_t>(seg.gso_segs, 1);
  const uint32_t handle = ctx_.meta.alloc(m, 2 * segs);
  Packet p =
      make_packet(static_cast<uint32_t>(tcp::gso_frame_bytes(seg)),
                  from_sender ? flow.hash_data : flow.hash_ack, flow.index,
                  tos_of(flow.dscp, seg.ecn), handle, from_sender ? flow.to : flow.from, now);
  p.gso_segs = static_cast<uint16_t>(segs);
  p.gso_size = static_cast<uint16_t>(tcp::gso_frame_size(seg));
  p.tstamp = seg.tstamp;  // EDT (set only when the host paces through fq)
  const Verdict v = nic_->send(std::move(p), now);
  if (v == Verdict::kDropped) {
    ctx_.meta.unref(handle, 2 * segs);
    if (from_sender) {
      flow.sender.on_local_drop(seg, now);
      retime_.insert(flow.sender_ep);
    }
  } else if (v == Verdict::kCongested && from_sender) {
    flow.sender.on_local_congestion(now);
    retime_.insert(flow.sender_ep);
  }
}

void HostNode::send_probe_packet(Probe& probe, PacketMeta::Kind kind, uint64_t seq, Time sent,
                                 Time forward_arrival, Time now) {
  PacketMeta m;
  m.kind = kind;
  m.flow = probe.index;
  m.probe_seq = seq;
  m.sent = sent;
  m.forward_arrival = forward_arrival;
  const uint32_t handle = ctx_.meta.alloc(m, 2);
  const bool request =
      kind == PacketMeta::Kind::kEchoRequest || kind == PacketMeta::Kind::kProbeRequest;
  Packet p =
      make_packet(probe.frame_len, probe.hash, kProbeFlowBase + probe.index,
                  tos_of(probe.dscp, Ecn::kNotEct), handle, request ? probe.to : probe.from, now);
  if (nic_->send(std::move(p), now) == Verdict::kDropped) {
    ctx_.meta.unref(handle, 2);
  }
}

// The client asks for transfer `f`: one request frame to the server, whose arrival opens the
// connection (on_delivered). A request the local qdisc refuses is not repeated: the transfer
// stays incomplete (a real client would retransmit its SYN after 1 s).
void HostNode::send_transfer_request(TcpFlow& f, Time now) {
  f.requested = true;
  f.transfer = ctx_.recorder.transfer_started(f.set, static_cast<int64_t>(f.size), now);
  PacketMeta m;
  m.kind = PacketMeta::Kind::kTransferRequest;
  m.flow = f.index;
  m.sent = now;
  const uint32_t handle = ctx_.meta.alloc(m, 2);
  Packet p = make_packet(kTransferRequestFrame, f.hash_ack, f.index, tos_of(f.dscp, Ecn::kNotEct),
                         handle, f.from, now);
  if (nic_->send(std::move(p), now) == Verdict::kDropped) {
    ctx_.meta.unref(handle, 2);
  }
}

void HostNode::send_flood_packet(Flood& flood, uint64_t seq, Time sent, Time now) {
  PacketMeta m;
  m.kind = PacketMeta::Kind::kFlood;
  m.flow = flood.index;
  m.probe_seq = seq;
  m.sent = sent;
  const uint32_t handle = ctx_.meta.alloc(m, 2);
  Packet p = make_packet(flood.frame_len, flood.hash, kFloodFlowBase + flood.index,
                         tos_of(flood.dscp, Ecn::kNotEct), handle, flood.to, now);
  if (nic_->send(std::move(p), now) == Verdict::kDropped) {
    ctx_.meta.unref(handle, 2);
  }
}

// The replayed frames due by `now`, as the emulator handed them to this host's NIC
// (emu::Datapath::send_from_host: its classification, a run-unique id, the creation stamp).
// A frame the qdisc refuses is lost, as in the emulation.
void HostNode::send_replayed(ReplaySource& r, Time now) {
  for (; r.next < r.frames.size() && r.next_send() <= now; ++r.next) {
    const config::ReplayFrame& f = r.frames[r.next];
    Packet p = make_packet(f.len, f.flow_hash, f.flow_hash, f.tos, 0, f.to, now);
    p.priority = f.priority;  // as recorded (rt_tos2priority of the TOS for IPv4 frames)
    p.gso_segs = f.gso_segs;
    p.gso_size = f.gso_size;
    nic_->send(std::move(p), now);
  }
}

// Every call into a TCP endpoint is followed by one of these, so the host re-reads its next
// time and drains its output.
void HostNode::touch_sender(TcpFlow& f) {
  retime_.insert(f.sender_ep);
  may_output_.insert(f.sender_ep);
}
void HostNode::touch_receiver(TcpFlow& f) {
  retime_.insert(f.receiver_ep);
  may_output_.insert(f.receiver_ep);
}

// Drains every TCP endpoint output into the NIC: senders in order, then receivers (only
// endpoints touched since the last drain can have output).
void HostNode::drain_outputs(Time now) {
  const size_t senders = sending_.size();
  may_output_.drain([&](size_t e) {
    if (e < senders) {
      TcpFlow& f = *sending_[e];
      while (f.sender.has_output()) {
        send_segment(f, f.sender.pop_output(), true, now);
      }
    } else {
      TcpFlow& f = *receiving_[e - senders];
      while (f.receiver.has_output()) {
        send_segment(f, f.receiver.pop_output(), false, now);
      }
    }
  });
}

void HostNode::record_rx_latency(const Packet& frame) {
  const Time wire_end = frame.stamp_at(Stage::kWireEnd);
  const Time delivered = frame.stamp_at(Stage::kRxDeliver);
  if (delivered >= wire_end) {
    rx_latency_.add(delivered - wire_end);
  }
}

void HostNode::on_delivered(Packet&& frame, Time now) {
  if (frame.meta == 0) {
    return;  // not ours (cannot happen: every packet is built by make_packet)
  }
  const uint32_t handle = frame.meta;
  PacketMeta& m = ctx_.meta.get(handle);
  ctx_.stages.delivered(frame, ctx_.direction_of(m));
  record_rx_latency(frame);
  switch (m.kind) {
    case PacketMeta::Kind::kTcpData: {
      tcp::Segment seg = tcp::gso_segment(m.seg, frame.gso_index);
      seg.ecn = frame.ecn();
      TcpFlow& f = *ctx_.endpoints.flows()[m.flow];
      f.receiver.on_segment(seg, now);
      touch_receiver(f);
      if (f.is_transfer && !f.completed && f.received() >= f.size) {
        f.completed = true;  // the response's last byte reached the client's application
        ctx_.recorder.transfer_completed(f.transfer, now);
      }
      break;
    }
    case PacketMeta::Kind::kTcpAck: {
      tcp::Segment seg = tcp::gso_segment(m.seg, frame.gso_index);
      seg.ecn = frame.ecn();
      TcpFlow& f = *ctx_.endpoints.flows()[m.flow];
      f.sender.on_segment(seg, now);
      touch_sender(f);
      break;
    }
    case PacketMeta::Kind::kEchoRequest:
    case PacketMeta::Kind::kProbeRequest: {
      // The peer's stack answers at once (icmp_echo / an irtt server).
      Probe& probe = *ctx_.endpoints.probes()[m.flow];
      const PacketMeta::Kind reply = m.kind == PacketMeta::Kind::kEchoRequest
                                         ? PacketMeta::Kind::kEchoReply
                                         : PacketMeta::Kind::kProbeReply;
      const uint64_t seq = m.probe_seq;
      const Time sent = m.sent;
      if (reply == PacketMeta::Kind::kProbeReply) {
        ctx_.recorder.probe_forward(probe.index, seq, now - sent);  // the request's one-way delay
      }
      ctx_.meta.unref(handle, 1);
      send_probe_packet(probe, reply, seq, sent, now, now);
      return;
    }
    case PacketMeta::Kind::kTransferRequest: {
      // The server accepts and answers at once: its connection starts now.
      TcpFlow& f = *ctx_.endpoints.flows()[m.flow];
      if (f.start == Time::max()) {
        f.start = now;
        retime_.insert(f.sender_ep);
      }
      break;
    }
    case PacketMeta::Kind::kFlood:
      ctx_.recorder.flood_received(m.flow, m.probe_seq, m.sent, now - m.sent);
      break;
    case PacketMeta::Kind::kEchoReply:
    case PacketMeta::Kind::kProbeReply: {
      const std::optional<Duration> back = m.kind == PacketMeta::Kind::kProbeReply
                                               ? std::optional<Duration>(now - m.forward_arrival)
                                               : std::nullopt;
      ctx_.recorder.probe_answered(ctx_.endpoints.probes()[m.flow]->index, m.probe_seq,
                                   now - m.sent, back);
      break;
    }
  }
  ctx_.meta.unref(handle, 1);
}

// ---- GRO -----------------------------------------------------------------------------

algo::GroHeader HostNode::gro_header(const Packet& frame) const {
  algo::GroHeader h;
  if (frame.meta == 0) {
    return h;
  }
  const PacketMeta& m = ctx_.meta.get(frame.meta);
  if (m.kind != PacketMeta::Kind::kTcpData && m.kind != PacketMeta::Kind::kTcpAck) {
    return h;  // ICMP / UDP probes: delivered alone
  }
  const tcp::Segment seg = tcp::gso_segment(m.seg, frame.gso_index);
  h.tcp = true;
  // Data and ACKs of one flow travel in opposite directions: two different 4-tuples.
  h.flow = (static_cast<uint64_t>(m.flow) << 1) | (m.kind == PacketMeta::Kind::kTcpAck ? 1 : 0);
  h.seq = seg.seq;
  h.ack = seg.has(tcp::kAck) ? seg.ack : 0;
  h.payload = seg.len;
  h.headers = tcp::frame_header_bytes(seg) - tcp::kEthernetHeaderBytes;
  uint8_t f = 0;
  f |= seg.has(tcp::kFin) ? algo::kGroFin : 0;
  f |= seg.has(tcp::kSyn) ? algo::kGroSyn : 0;
  f |= seg.has(tcp::kPsh) ? algo::kGroPsh : 0;
  f |= seg.has(tcp::kAck) ? algo::kGroAck : 0;
  f |= seg.has(tcp::kEce) ? algo::kGroEce : 0;
  f |= seg.has(tcp::kCwr) ? algo::kGroCwr : 0;
  h.flags = f;
  h.tos = frame.tos;  // the ECN field as it arrived (a CE mark differs)
  // tcp_gro_receive compares the option bytes and the 32-bit word holding the header length,
  // flags and window: TSval/TSecr, then the SACK blocks, option length and window, packed.
  h.options[0] = (static_cast<uint64_t>(seg.tsval) << 32) | seg.tsecr;
  uint64_t rest = (static_cast<uint64_t>(seg.wnd) << 32) ^ (uint64_t{seg.num_sacks} << 24) ^
                  tcp::tcp_options_bytes(seg);
  for (uint8_t i = 0; i < seg.num_sacks; ++i) {
    rest = rest * 1099511628211ull ^ seg.sacks[i].start;
    rest = rest * 1099511628211ull ^ seg.sacks[i].end;
  }
  h.options[1] = rest;
  return h;
}

// ---- RSS -----------------------------------------------------------------------------

// The simulated flows have no sockets, so their ports follow one convention (docs/scenarios.md,
// `queues`): the side that opened the flow (TCP data sender, probe or flood source, transfer
// client) uses ephemeral port 32768 + 2 x flow index inside Linux's default
// ip_local_port_range 32768-60999 — connect() tries ports of one parity stepping by 2 from a
// per-destination offset (net/ipv4/inet_hashtables.c, __inet_hash_connect), so a client's
// consecutive connections to one server get ports 2 apart — and the other side 5201 (iperf3's
// port). Echo requests and replies are ICMP: addresses only.
algo::Rss::Flow HostNode::rss_flow(const Packet& frame) const {
  algo::Rss::Flow f = host_rss_flow(frame);
  if (frame.meta == 0) {
    return f;
  }
  const PacketMeta& m = ctx_.meta.get(frame.meta);
  const auto ephemeral = static_cast<uint16_t>(32768 + (2 * m.flow) % 28232);
  constexpr uint16_t kServer = 5201;
  using K = PacketMeta::Kind;
  switch (m.kind) {
    case K::kTcpData:
    case K::kTransferRequest:
      return {f.src_ip, f.dst_ip, ephemeral, kServer, algo::Rss::Proto::kTcp};
    case K::kTcpAck:
      return {f.src_ip, f.dst_ip, kServer, ephemeral, algo::Rss::Proto::kTcp};
    case K::kProbeRequest:
    case K::kFlood:
      return {f.src_ip, f.dst_ip, ephemeral, kServer, algo::Rss::Proto::kUdp};
    case K::kProbeReply:
      return {f.src_ip, f.dst_ip, kServer, ephemeral, algo::Rss::Proto::kUdp};
    case K::kEchoRequest:
    case K::kEchoReply:
      return f;
  }
  return f;
}

void HostNode::deliver_merged(std::vector<Packet>& frames, Time now) {
  const uint32_t n = static_cast<uint32_t>(frames.size());
  for (uint32_t i = 0; i < n; ++i) {
    delivered_.push_back(Delivered{std::move(frames[i]), now, i == 0 ? n : 0});
  }
}

// A GRO packet: its frames' segments become one segment (the first's headers, all payload,
// FIN/PSH of the last) that TCP receives once, as tcp_v4_rcv does with the merged skb.
void HostNode::on_delivered_merged(Delivered* frames, uint32_t n, Time now) {
  const PacketMeta& first = ctx_.meta.get(frames[0].frame.meta);
  tcp::Segment merged = tcp::gso_segment(first.seg, frames[0].frame.gso_index);
  merged.ecn = frames[0].frame.ecn();
  const uint32_t mss = merged.len;
  const uint32_t flow = first.flow;
  const bool data = first.kind == PacketMeta::Kind::kTcpData;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& f = frames[i].frame;
    const PacketMeta& m = ctx_.meta.get(f.meta);
    ctx_.stages.delivered(f, ctx_.direction_of(m));
    record_rx_latency(f);
    if (i > 0) {
      const tcp::Segment seg = tcp::gso_segment(m.seg, f.gso_index);
      merged.len += seg.len;
      merged.flags = static_cast<uint8_t>(merged.flags | (seg.flags & (tcp::kFin | tcp::kPsh)));
    }
    ctx_.meta.unref(f.meta, 1);
  }
  // skb_shinfo(skb)->gso_size / gso_segs of the GRO packet (tcp_measure_rcv_mss reads it).
  merged.gso_segs = static_cast<uint16_t>(n);
  merged.gso_size = static_cast<uint16_t>(mss);
  TcpFlow& f = *ctx_.endpoints.flows()[flow];
  if (data) {
    f.receiver.on_segment(merged, now);
    touch_receiver(f);
  } else {
    f.sender.on_segment(merged, now);  // cannot happen: pure ACKs are never merged
    touch_sender(f);
  }
}

void HostNode::on_released(const model::TxRelease& r, Time now) {
  if (r.meta == 0) {
    return;
  }
  PacketMeta& m = ctx_.meta.get(r.meta);
  if (m.kind == PacketMeta::Kind::kTcpData) {
    TcpFlow& f = *ctx_.endpoints.flows()[m.flow];
    uint64_t bytes = 0;
    if (r.segs >= std::max<uint16_t>(m.seg.gso_segs, 1)) {
      bytes = m.seg.truesize;
    } else {
      for (uint16_t i = 0; i < r.segs; ++i) {
        bytes += tcp::gso_segment(m.seg, static_cast<uint16_t>(r.gso_index + i)).truesize;
      }
    }
    f.sender.on_tx_released(bytes, now);
    touch_sender(f);
  }
  ctx_.meta.unref(r.meta, r.segs);
}

// ---- scheduling ------------------------------------------------------------------------

// Endpoint e's next time (due_), read from the endpoint itself.
Time HostNode::endpoint_time(size_t e) const {
  const size_t senders = sending_.size();
  const size_t tcp = senders + receiving_.size();
  if (e < senders) {
    const TcpFlow& f = *sending_[e];
    return f.started ? f.sender.next_event().value_or(Time::max()) : f.start;
  }
  if (e < tcp) {
    const TcpFlow& f = *receiving_[e - senders];
    if (f.request_pending()) {
      return f.request_at;  // the client asks for a transfer
    }
    return f.started ? f.receiver.next_event().value_or(Time::max()) : Time::max();
  }
  if (e < tcp + probing_.size()) {
    const Probe& p = *probing_[e - tcp];
    return p.next_send < p.stop ? p.next_send : Time::max();
  }
  const size_t floods = tcp + probing_.size() + flooding_.size();
  if (e >= floods) {
    return replaying_[e - floods]->next_send();
  }
  const Flood& f = *flooding_[e - tcp - probing_.size()];
  const Time next = f.next_send();
  return next < f.stop ? next : Time::max();
}

// Re-reads the marked endpoints' next times.
void HostNode::refresh_due() {
  if (retime_.empty()) {
    return;
  }
  retime_.drain([this](size_t e) { due_[e] = endpoint_time(e); });
  Time m = Time::max();
  for (const Time d : due_) {
    m = min(m, d);
  }
  due_min_ = m;
}

// The next wake-up: the earliest of the NIC's next event and the endpoints' next times, none
// after the end of the run.
std::optional<Time> HostNode::next_time() {
  refresh_due();
  const Time t = min(nic_->next_event().value_or(Time::max()), due_min_);
  std::optional<Time> result = t > ctx_.end ? std::nullopt : std::optional<Time>(t);
  if (ctx_.options.check_wakeups && result != scan_next_time()) {
    throw std::logic_error("simulation: cached wake-up of host '" + name_ +
                           "' differs from a full scan (an endpoint call without touch?)");
  }
  return result;
}

// SimOptions::check_wakeups: no endpoint may be left with output after the host ran.
void HostNode::check_drained() const {
  for (const TcpFlow* f : sending_) {
    if (f->sender.has_output()) {
      throw std::logic_error("simulation: a sender on host '" + name_ +
                             "' kept output after service (an endpoint call without touch?)");
    }
  }
  for (const TcpFlow* f : receiving_) {
    if (f->receiver.has_output()) {
      throw std::logic_error("simulation: a receiver on host '" + name_ +
                             "' kept output after service (an endpoint call without touch?)");
    }
  }
}

// next_time by a full scan of every endpoint (SimOptions::check_wakeups).
std::optional<Time> HostNode::scan_next_time() const {
  std::optional<Time> t = nic_->next_event();
  auto take = [&t](std::optional<Time> c) {
    if (c && (!t || *c < *t)) {
      t = c;
    }
  };
  for (const TcpFlow* f : sending_) {
    take(f->started ? f->sender.next_event() : std::optional<Time>(f->start));
  }
  for (const TcpFlow* f : receiving_) {
    if (f->request_pending()) {
      take(f->request_at);
    } else if (f->started) {
      take(f->receiver.next_event());
    }
  }
  for (const Probe* p : probing_) {
    if (p->next_send < p->stop) {
      take(p->next_send);
    }
  }
  for (const Flood* f : flooding_) {
    if (f->next_send() < f->stop) {
      take(f->next_send());
    }
  }
  for (const ReplaySource* r : replaying_) {
    if (r->next < r->frames.size()) {
      take(r->next_send());
    }
  }
  if (t && *t > ctx_.end) {
    return std::nullopt;  // nothing after the end of the run matters
  }
  return t;
}

void HostNode::reschedule() { set_wakeup(next_time()); }

// Runs endpoint e, due at `now`.
void HostNode::run_endpoint(size_t e, Time now) {
  const size_t senders = sending_.size();
  const size_t tcp = senders + receiving_.size();
  if (e < senders) {
    TcpFlow& f = *sending_[e];
    if (!f.started) {
      f.started = true;
      f.sender.connect(now);
      // The receiver's next time now counts on its host.
      ctx_.hosts[static_cast<size_t>(f.to)]->retime(f.receiver_ep);
    } else {
      f.sender.advance(now);
    }
    touch_sender(f);
  } else if (e < tcp) {
    TcpFlow& f = *receiving_[e - senders];
    if (f.request_pending()) {
      send_transfer_request(f, now);
      retime_.insert(e);
      return;
    }
    f.receiver.advance(now);
    touch_receiver(f);
  } else if (e >= tcp + probing_.size() + flooding_.size()) {
    send_replayed(*replaying_[e - tcp - probing_.size() - flooding_.size()], now);
    retime_.insert(e);
  } else if (e >= tcp + probing_.size()) {
    Flood& f = *flooding_[e - tcp - probing_.size()];
    for (Time t = f.next_send(); t <= now && t < f.stop; t = f.next_send()) {
      const uint64_t seq = ctx_.recorder.flood_sent(f.index, t);
      send_flood_packet(f, seq, t, now);
      ++f.sent;
    }
    retime_.insert(e);
  } else {
    Probe& p = *probing_[e - tcp];
    while (p.next_send <= now && p.next_send < p.stop) {
      const uint64_t sample = ctx_.recorder.probe_sent(p.index, p.next_send);
      send_probe_packet(p,
                        p.icmp ? PacketMeta::Kind::kEchoRequest : PacketMeta::Kind::kProbeRequest,
                        sample, p.next_send, Time::zero(), now);
      p.next_send += p.interval;
    }
    retime_.insert(e);
  }
}

void HostNode::on_event(Time now, uint64_t /*tag*/) {
  note_wires();
  if (auto t = nic_->next_event(); t && *t <= now) {
    nic_->advance(now);
  }
  // Endpoints due now, in endpoint order (running one never changes another's next time: NIC
  // callbacks are queued). A flow started by the peer may have marked a receiver here.
  refresh_due();
  if (due_min_ <= now) {
    for (size_t e = 0; e < due_.size(); ++e) {
      if (due_[e] <= now) {
        run_endpoint(e, now);
      }
    }
  }
  // Queued NIC callbacks and TCP outputs, until nothing is left.
  while (true) {
    drain_outputs(now);
    if (released_.empty() && delivered_.empty()) {
      break;
    }
    released_work_.swap(released_);
    for (const auto& [r, t] : released_work_) {
      on_released(r, max(t, now));
    }
    released_work_.clear();
    delivered_work_.swap(delivered_);
    for (size_t i = 0; i < delivered_work_.size();) {
      Delivered& d = delivered_work_[i];
      const uint32_t n = std::max<uint32_t>(d.merged, 1);
      if (n == 1) {
        on_delivered(std::move(d.frame), max(d.at, now));
      } else {
        on_delivered_merged(&d, n, max(d.at, now));
      }
      i += n;
    }
    delivered_work_.clear();
  }
  if (ctx_.options.check_wakeups) {
    check_drained();
  }
  reschedule();
  wake_peers();
}

}  // namespace nicsim::sim
