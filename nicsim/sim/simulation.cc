#include "nicsim/sim/simulation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/config/host_nic.h"
#include "nicsim/config/traffic_plan.h"
#include "nicsim/core/gso.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/nic.h"
#include "nicsim/model/platform_nic.h"
#include "nicsim/model/usb_nic.h"
#include "nicsim/model/wire.h"
#include "nicsim/report/run_recorder.h"
#include "nicsim/sim/engine.h"
#include "nicsim/sim/index_set.h"
#include "nicsim/sim/meta_table.h"
#include "nicsim/sim/tcp/params.h"
#include "nicsim/sim/tcp/receiver.h"
#include "nicsim/sim/tcp/sender.h"

namespace nicsim::sim {
namespace {

using report::Direction;

constexpr uint32_t kEthIpBytes = 14 + 20;  // Ethernet + IPv4 headers
constexpr uint32_t kIcmpHeader = 8;
constexpr uint32_t kUdpHeader = 8;

// The ECN field carried by the packet and the priority the IPv4 stack derives from the TOS.
uint8_t tos_of(uint8_t dscp, Ecn ecn) {
  return static_cast<uint8_t>((dscp << 2) | static_cast<uint8_t>(ecn));
}

// A flow-dissector-like hash of (flow, direction): well mixed, deterministic.
uint32_t flow_hash(uint32_t flow, uint32_t salt) {
  uint64_t x = (static_cast<uint64_t>(flow) << 32) ^ salt ^ 0x9E3779B97F4A7C15ull;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

// The sender's TCP settings with the flow's congestion control (config::FlowPlan::cc).
tcp::Params tcp_params(const config::TcpConfig& c, const std::string& cc) {
  tcp::Params p;
  p.cc = tcp::cc_from_name(cc).value_or(tcp::CcAlgorithm::kCubic);
  p.mss = c.mss;
  p.rmem_max = c.rmem;
  p.wmem = c.wmem;
  p.limit_output_bytes = c.tsq_limit;
  p.pacing = c.pacing;
  p.pacing_ss_ratio = c.pacing_ss_ratio;
  p.pacing_ca_ratio = c.pacing_ca_ratio;
  p.ecn = c.ecn;
  p.initial_cwnd = c.init_cwnd;
  require_valid(p);
  return p;
}

// Accumulates the mean time spent between two stage stamps.
struct StageAcc {
  Duration total;
  uint64_t packets = 0;
  void add(Time from, Time to) {
    if (to >= from) {
      total += to - from;
      ++packets;
    }
  }
  report::StageTime result(const char* name) const {
    return report::StageTime{
        name, packets > 0 ? (total / static_cast<int64_t>(packets)).to_ms() : 0.0, packets};
  }
};

}  // namespace

struct Simulation::World {
  struct Host;

  struct TcpFlow {
    uint32_t index = 0;
    int from = 0;
    int to = 1;
    uint8_t dscp = 0;
    Time start;
    Time stop;
    bool started = false;
    tcp::TcpSender sender;
    tcp::TcpReceiver receiver;
    uint32_t hash_data = 0;
    uint32_t hash_ack = 0;
    uint32_t sender_ep = 0;    // the sender's endpoint index on host `from` (Host::due)
    uint32_t receiver_ep = 0;  // the receiver's endpoint index on host `to`
    TcpFlow(const tcp::Params& p) : sender(p), receiver(p) {}
    uint64_t received() const { return receiver.stats().bytes_received; }
  };

  struct Probe {
    bool icmp = true;
    int from = 0;
    int to = 1;
    uint32_t index = 0;
    Duration interval;
    uint32_t frame_len = 0;
    uint8_t dscp = 0;
    Time next_send;
    Time stop;
    uint32_t hash = 0;
  };

  struct Host final : model::NicSink, Process {
    World* world = nullptr;
    int index = 0;
    std::string name;
    model::Cpu cpu;
    std::unique_ptr<model::Nic> nic;
    std::optional<Engine::Wakeup> wakeup;
    struct Delivered {
      Packet frame;
      Time at;
    };
    std::vector<Delivered> delivered;
    std::vector<std::pair<model::TxRelease, Time>> released;
    // The batches being handled while the NIC queues new callbacks into the two above (swapped,
    // so neither vector gives its buffer back to the allocator).
    std::vector<Delivered> delivered_work;
    std::vector<std::pair<model::TxRelease, Time>> released_work;
    std::vector<TcpFlow*> sending;    // flows whose sender lives here
    std::vector<TcpFlow*> receiving;  // flows whose receiver lives here
    std::vector<Probe*> probing;      // probes sent from here
    // Wake-up bookkeeping (next_time): endpoint e is sending[e]'s sender, then receiving's
    // receivers, then probing's probes. An endpoint's state changes only through calls made
    // while a host runs, and every such call marks it (touch_sender / touch_receiver), so
    // `due` is re-read only for marked endpoints and only they are drained of output.
    std::vector<Time> due;       // each endpoint's next time; Time::max(): none
    Time due_min = Time::max();  // the earliest of `due` (as of the last refresh_due)
    IndexSet retime;             // endpoints whose `due` must be re-read
    IndexSet may_output;         // TCP endpoints that may have segments queued for the NIC

    void deliver(Packet&& frame, Time now) override {
      delivered.push_back(Delivered{std::move(frame), now});
    }
    void tx_released(const model::TxRelease& r, Time now) override {
      released.emplace_back(r, now);
    }
    void on_event(Time now, uint64_t) override { world->service(*this, now); }
  };

  // The periodic sampler: interval table rows, queue series, progress.
  struct Sampler final : Process {
    World* world = nullptr;
    void on_event(Time now, uint64_t tag) override { world->sample(now, tag); }
  };
  static constexpr uint64_t kTagInterval = 1;
  static constexpr uint64_t kTagQueue = 2;
  static constexpr uint64_t kTagProgress = 3;
  static constexpr uint64_t kTagStopFlow = 1'000'000;  // + flow index: the flow's stop time

  config::Run run_cfg;
  SimOptions options;
  Engine engine;
  Time end;
  std::array<std::unique_ptr<model::Wire>, 2> wires;  // [0]: a->b, [1]: b->a
  std::array<Host, 2> hosts;
  std::vector<std::unique_ptr<TcpFlow>> flows;
  std::vector<std::unique_ptr<Probe>> probes;
  MetaTable meta;
  Sampler sampler;
  uint64_t next_packet_id = 0;
  ProgressFn progress;

  // What runs (config::plan) and what is recorded of it (report::RunRecorder); the queue series
  // and stage times are the simulator's own.
  config::TrafficPlan plan;
  report::RunRecorder recorder;
  std::map<std::string, report::QueueSeries> queues;
  std::array<std::array<StageAcc, 4>, 2> stages{};  // [dir][qdisc, ring, wire, rx]

  World(const config::Run& r, SimOptions o)
      : run_cfg(r),
        options(o),
        plan(config::plan(run_cfg.scenario)),
        recorder(config::run_info(run_cfg, "sim"),
                 config::recorder_layout(plan, options.interval)) {
    const config::Scenario& s = run_cfg.scenario;
    end = Time::zero() + s.duration;
    for (int d = 0; d < 2; ++d) {
      wires[static_cast<size_t>(d)] =
          std::make_unique<model::Wire>(s.wire.params(s.seed * 2 + static_cast<uint64_t>(d)));
    }
    for (int i = 0; i < 2; ++i) {
      Host& h = hosts[static_cast<size_t>(i)];
      h.world = this;
      h.index = i;
      h.name = s.hosts[static_cast<size_t>(i)].name;
      h.nic = config::make_host_nic(s.hosts[static_cast<size_t>(i)]);
      h.nic->attach(wires[static_cast<size_t>(i)].get(), wires[static_cast<size_t>(1 - i)].get(),
                    &h.cpu, &h);
      h.wakeup.emplace(engine, &h, 0);
    }
    sampler.world = this;
    build_traffic();
    for (auto& f : flows) {
      hosts[static_cast<size_t>(f->from)].sending.push_back(f.get());
      hosts[static_cast<size_t>(f->to)].receiving.push_back(f.get());
    }
    for (auto& p : probes) {
      hosts[static_cast<size_t>(p->from)].probing.push_back(p.get());
    }
    for (Host& h : hosts) {
      for (size_t k = 0; k < h.sending.size(); ++k) {
        h.sending[k]->sender_ep = static_cast<uint32_t>(k);
      }
      for (size_t k = 0; k < h.receiving.size(); ++k) {
        h.receiving[k]->receiver_ep = static_cast<uint32_t>(h.sending.size() + k);
      }
      const size_t endpoints = h.sending.size() + h.receiving.size() + h.probing.size();
      h.due.assign(endpoints, Time::max());
      h.retime.resize(endpoints);
      h.may_output.resize(endpoints);
      for (size_t e = 0; e < endpoints; ++e) {
        h.retime.insert(e);
      }
    }
  }

  void add_tcp_flow(const config::FlowPlan& fp) {
    const config::Scenario& s = run_cfg.scenario;
    tcp::Params tp = tcp_params(s.hosts[fp.from].tcp, fp.cc);
    tp.fq_pacing = s.hosts[fp.from].qdisc.kind() == "fq";  // SK_PACING_FQ: EDT through fq
    tp.seed = flow_hash(static_cast<uint32_t>(flows.size()), 4);
    auto flow = std::make_unique<TcpFlow>(tp);
    flow->index = static_cast<uint32_t>(flows.size());
    flow->from = static_cast<int>(fp.from);
    flow->to = static_cast<int>(fp.to);
    flow->dscp = fp.dscp;
    flow->start = Time::zero() + fp.start;
    flow->stop = Time::zero() + fp.stop;
    flow->hash_data = flow_hash(flow->index, 1);
    flow->hash_ack = flow_hash(flow->index, 2);
    flows.push_back(std::move(flow));
  }

  void add_probe(const config::ProbePlan& pp) {
    auto p = std::make_unique<Probe>();
    p->icmp = pp.icmp;
    p->from = static_cast<int>(pp.from);
    p->to = static_cast<int>(pp.to);
    p->index = static_cast<uint32_t>(probes.size());
    p->interval = pp.interval;
    p->frame_len =
        kEthIpBytes + (pp.icmp ? kIcmpHeader : kUdpHeader) + static_cast<uint32_t>(pp.size);
    p->dscp = pp.dscp;
    p->next_send = Time::zero() + pp.start;
    p->stop = Time::zero() + pp.stop;
    p->hash = flow_hash(1'000'000 + p->index, 3);
    probes.push_back(std::move(p));
  }

  // The plan's flows and probes, in its order (the recorder's flow and probe indexes).
  void build_traffic() {
    for (const config::FlowPlan& f : plan.flows) {
      add_tcp_flow(f);
    }
    for (const config::ProbePlan& p : plan.probes) {
      add_probe(p);
    }
  }

  // ---- packets -------------------------------------------------------------------------

  Packet make_packet(uint32_t len, uint32_t hash, uint32_t flow_id, uint8_t tos, uint32_t handle,
                     Time now) {
    Packet p;
    p.id = ++next_packet_id;
    p.len = len;
    p.flow_hash = hash;
    p.flow_id = flow_id;
    p.tos = tos;
    p.priority = algo::rt_tos2priority(tos);
    p.meta = handle;
    p.stamp(Stage::kCreated, now);
    return p;
  }

  // Hands a TCP segment from `host` to its NIC; reports a local drop to the sender.
  void send_segment(Host& host, TcpFlow& flow, const tcp::Segment& seg, bool from_sender,
                    Time now) {
    PacketMeta m;
    m.kind = from_sender ? PacketMeta::Kind::kTcpData : PacketMeta::Kind::kTcpAck;
    m.flow = flow.index;
    m.seg = seg;
    const uint32_t segs = std::max<uint32_t>(seg.gso_segs, 1);
    const uint32_t handle = meta.alloc(m, 2 * segs);
    Packet p = make_packet(static_cast<uint32_t>(tcp::gso_frame_bytes(seg)),
                           from_sender ? flow.hash_data : flow.hash_ack, flow.index,
                           tos_of(flow.dscp, seg.ecn), handle, now);
    p.gso_segs = static_cast<uint16_t>(segs);
    p.gso_size = static_cast<uint16_t>(tcp::gso_frame_size(seg));
    p.tstamp = seg.tstamp;  // EDT (set only when the host paces through fq)
    const Verdict v = host.nic->send(std::move(p), now);
    if (v == Verdict::kDropped) {
      meta.unref(handle, 2 * segs);
      if (from_sender) {
        flow.sender.on_local_drop(seg, now);
        retime_sender(flow);
      }
    } else if (v == Verdict::kCongested && from_sender) {
      flow.sender.on_local_congestion(now);
      retime_sender(flow);
    }
  }

  void send_probe_packet(Host& host, Probe& probe, PacketMeta::Kind kind, uint64_t seq, Time sent,
                         Time forward_arrival, Time now) {
    PacketMeta m;
    m.kind = kind;
    m.flow = probe.index;
    m.probe_seq = seq;
    m.sent = sent;
    m.forward_arrival = forward_arrival;
    const uint32_t handle = meta.alloc(m, 2);
    Packet p = make_packet(probe.frame_len, probe.hash, 1'000'000 + probe.index,
                           tos_of(probe.dscp, Ecn::kNotEct), handle, now);
    if (host.nic->send(std::move(p), now) == Verdict::kDropped) {
      meta.unref(handle, 2);
    }
  }

  // Every call into a TCP endpoint is followed by one of these, so the host re-reads its next
  // time and drains its output (see Host::due).
  void retime_sender(TcpFlow& f) { hosts[static_cast<size_t>(f.from)].retime.insert(f.sender_ep); }
  void touch_sender(TcpFlow& f) {
    Host& h = hosts[static_cast<size_t>(f.from)];
    h.retime.insert(f.sender_ep);
    h.may_output.insert(f.sender_ep);
  }
  void touch_receiver(TcpFlow& f) {
    Host& h = hosts[static_cast<size_t>(f.to)];
    h.retime.insert(f.receiver_ep);
    h.may_output.insert(f.receiver_ep);
  }

  // Drains every TCP endpoint output on `host` into its NIC: senders in order, then receivers
  // (only endpoints touched since the last drain can have output).
  void drain_outputs(Host& host, Time now) {
    const size_t senders = host.sending.size();
    host.may_output.drain([&](size_t e) {
      if (e < senders) {
        TcpFlow& f = *host.sending[e];
        while (f.sender.has_output()) {
          send_segment(host, f, f.sender.pop_output(), true, now);
        }
      } else {
        TcpFlow& f = *host.receiving[e - senders];
        while (f.receiver.has_output()) {
          send_segment(host, f, f.receiver.pop_output(), false, now);
        }
      }
    });
  }

  void record_stages(const Packet& p, Direction dir) {
    auto& acc = stages[static_cast<size_t>(dir)];
    acc[0].add(p.stamp_at(Stage::kQdiscIn), p.stamp_at(Stage::kRingIn));
    acc[1].add(p.stamp_at(Stage::kRingIn), p.stamp_at(Stage::kWireStart));
    acc[2].add(p.stamp_at(Stage::kWireStart), p.stamp_at(Stage::kWireEnd));
    acc[3].add(p.stamp_at(Stage::kWireEnd), p.stamp_at(Stage::kRxDeliver));
  }

  void on_delivered(Host& host, Packet&& frame, Time now) {
    if (frame.meta == 0) {
      return;  // not ours (cannot happen: every packet is built by make_packet)
    }
    record_stages(frame, host.index == 1 ? Direction::kAtoB : Direction::kBtoA);
    PacketMeta& m = meta.get(frame.meta);
    const uint32_t handle = frame.meta;
    switch (m.kind) {
      case PacketMeta::Kind::kTcpData: {
        tcp::Segment seg = tcp::gso_segment(m.seg, frame.gso_index);
        seg.ecn = frame.ecn();
        TcpFlow& f = *flows[m.flow];
        f.receiver.on_segment(seg, now);
        touch_receiver(f);
        break;
      }
      case PacketMeta::Kind::kTcpAck: {
        tcp::Segment seg = tcp::gso_segment(m.seg, frame.gso_index);
        seg.ecn = frame.ecn();
        TcpFlow& f = *flows[m.flow];
        f.sender.on_segment(seg, now);
        touch_sender(f);
        break;
      }
      case PacketMeta::Kind::kEchoRequest:
      case PacketMeta::Kind::kProbeRequest: {
        // The peer's stack answers at once (icmp_echo / an irtt server).
        Probe& probe = *probes[m.flow];
        const PacketMeta::Kind reply = m.kind == PacketMeta::Kind::kEchoRequest
                                           ? PacketMeta::Kind::kEchoReply
                                           : PacketMeta::Kind::kProbeReply;
        const uint64_t seq = m.probe_seq;
        const Time sent = m.sent;
        if (reply == PacketMeta::Kind::kProbeReply) {
          recorder.probe_forward(probe.index, seq, now - sent);  // the request's one-way delay
        }
        meta.unref(handle, 1);
        send_probe_packet(host, probe, reply, seq, sent, now, now);
        return;
      }
      case PacketMeta::Kind::kEchoReply:
      case PacketMeta::Kind::kProbeReply: {
        const std::optional<Duration> back = m.kind == PacketMeta::Kind::kProbeReply
                                                 ? std::optional<Duration>(now - m.forward_arrival)
                                                 : std::nullopt;
        recorder.probe_answered(probes[m.flow]->index, m.probe_seq, now - m.sent, back);
        break;
      }
    }
    meta.unref(handle, 1);
  }

  void on_released(const model::TxRelease& r, Time now) {
    if (r.meta == 0) {
      return;
    }
    PacketMeta& m = meta.get(r.meta);
    if (m.kind == PacketMeta::Kind::kTcpData) {
      TcpFlow& f = *flows[m.flow];
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
    meta.unref(r.meta, r.segs);
  }

  // ---- scheduling ----------------------------------------------------------------------

  // Endpoint e's next time (Host::due), read from the endpoint itself.
  static Time endpoint_time(const Host& h, size_t e) {
    const size_t senders = h.sending.size();
    const size_t tcp = senders + h.receiving.size();
    if (e < senders) {
      const TcpFlow& f = *h.sending[e];
      return f.started ? f.sender.next_event().value_or(Time::max()) : f.start;
    }
    if (e < tcp) {
      const TcpFlow& f = *h.receiving[e - senders];
      return f.started ? f.receiver.next_event().value_or(Time::max()) : Time::max();
    }
    const Probe& p = *h.probing[e - tcp];
    return p.next_send < p.stop ? p.next_send : Time::max();
  }

  // Re-reads the marked endpoints' next times.
  static void refresh_due(Host& h) {
    if (h.retime.empty()) {
      return;
    }
    h.retime.drain([&h](size_t e) { h.due[e] = endpoint_time(h, e); });
    Time m = Time::max();
    for (const Time d : h.due) {
      m = min(m, d);
    }
    h.due_min = m;
  }

  // The host's next wake-up: the earliest of its NIC's next event and its endpoints' next
  // times, none after the end of the run.
  std::optional<Time> next_time(Host& h) {
    refresh_due(h);
    const Time t = min(h.nic->next_event().value_or(Time::max()), h.due_min);
    std::optional<Time> result = t > end ? std::nullopt : std::optional<Time>(t);
    if (options.check_wakeups && result != scan_next_time(h)) {
      throw std::logic_error("simulation: cached wake-up of host '" + h.name +
                             "' differs from a full scan (an endpoint call without touch?)");
    }
    return result;
  }

  // SimOptions::check_wakeups: no endpoint of `h` may be left with output after its service.
  void check_drained(const Host& h) const {
    for (const TcpFlow* f : h.sending) {
      if (f->sender.has_output()) {
        throw std::logic_error("simulation: a sender on host '" + h.name +
                               "' kept output after service (an endpoint call without touch?)");
      }
    }
    for (const TcpFlow* f : h.receiving) {
      if (f->receiver.has_output()) {
        throw std::logic_error("simulation: a receiver on host '" + h.name +
                               "' kept output after service (an endpoint call without touch?)");
      }
    }
  }

  // next_time by a full scan of every endpoint (SimOptions::check_wakeups).
  std::optional<Time> scan_next_time(const Host& h) const {
    std::optional<Time> t = h.nic->next_event();
    auto take = [&t](std::optional<Time> c) {
      if (c && (!t || *c < *t)) {
        t = c;
      }
    };
    for (const TcpFlow* f : h.sending) {
      take(f->started ? f->sender.next_event() : std::optional<Time>(f->start));
    }
    for (const TcpFlow* f : h.receiving) {
      if (f->started) {
        take(f->receiver.next_event());
      }
    }
    for (const Probe* p : h.probing) {
      if (p->next_send < p->stop) {
        take(p->next_send);
      }
    }
    if (t && *t > end) {
      return std::nullopt;  // nothing after the end of the run matters
    }
    return t;
  }

  void reschedule(Host& h) { h.wakeup->set(next_time(h)); }

  // Runs endpoint e of `h`, due at `now`.
  void run_endpoint(Host& h, size_t e, Time now) {
    const size_t senders = h.sending.size();
    const size_t tcp = senders + h.receiving.size();
    if (e < senders) {
      TcpFlow& f = *h.sending[e];
      if (!f.started) {
        f.started = true;
        f.sender.connect(now);
        // The receiver's next time now counts on its host.
        hosts[static_cast<size_t>(f.to)].retime.insert(f.receiver_ep);
      } else {
        f.sender.advance(now);
      }
      touch_sender(f);
    } else if (e < tcp) {
      TcpFlow& f = *h.receiving[e - senders];
      f.receiver.advance(now);
      touch_receiver(f);
    } else {
      Probe& p = *h.probing[e - tcp];
      while (p.next_send <= now && p.next_send < p.stop) {
        const uint64_t sample = recorder.probe_sent(p.index, p.next_send);
        send_probe_packet(h, p,
                          p.icmp ? PacketMeta::Kind::kEchoRequest : PacketMeta::Kind::kProbeRequest,
                          sample, p.next_send, Time::zero(), now);
        p.next_send += p.interval;
      }
      h.retime.insert(e);
    }
  }

  void service(Host& h, Time now) {
    const uint64_t sent_before = wires[static_cast<size_t>(h.index)]->stats().frames;
    if (auto t = h.nic->next_event(); t && *t <= now) {
      h.nic->advance(now);
    }
    // Endpoints due now, in endpoint order (running one never changes another's next time:
    // NIC callbacks are queued). A flow started by the peer may have marked a receiver here.
    refresh_due(h);
    if (h.due_min <= now) {
      for (size_t e = 0; e < h.due.size(); ++e) {
        if (h.due[e] <= now) {
          run_endpoint(h, e, now);
        }
      }
    }
    // Queued NIC callbacks and TCP outputs, until nothing is left.
    while (true) {
      drain_outputs(h, now);
      if (h.released.empty() && h.delivered.empty()) {
        break;
      }
      h.released_work.swap(h.released);
      for (const auto& [r, t] : h.released_work) {
        on_released(r, max(t, now));
      }
      h.released_work.clear();
      h.delivered_work.swap(h.delivered);
      for (auto& d : h.delivered_work) {
        on_delivered(h, std::move(d.frame), max(d.at, now));
      }
      h.delivered_work.clear();
    }
    if (options.check_wakeups) {
      check_drained(h);
    }
    reschedule(h);
    // The peer's NIC reads the wire this host transmits on: only new frames can move its
    // next event earlier.
    if (wires[static_cast<size_t>(h.index)]->stats().frames != sent_before) {
      reschedule(hosts[static_cast<size_t>(1 - h.index)]);
    }
  }

  // ---- sampling ------------------------------------------------------------------------

  void sample(Time now, uint64_t tag) {
    if (tag == kTagInterval) {
      recorder.close_interval(now, flow_counters());
      if (now < end) {
        engine.schedule(recorder.next_boundary(), &sampler, kTagInterval);
      }
    } else if (tag == kTagQueue) {
      sample_queues(now);
      if (now + options.queue_sample <= end) {
        engine.schedule(now + options.queue_sample, &sampler, kTagQueue);
      }
    } else if (tag >= kTagStopFlow && tag - kTagStopFlow < flows.size()) {
      // The sending application stops at its `stop` (rrul's load end): no new data.
      TcpFlow& f = *flows[tag - kTagStopFlow];
      f.sender.stop_writing(now);
      touch_sender(f);
      reschedule(hosts[static_cast<size_t>(f.from)]);
    } else if (tag == kTagProgress) {
      if (progress) {
        progress(Progress{now.to_seconds(), end.to_seconds(), engine.stats().executed});
      }
      if (now < end) {
        engine.schedule(min(now + options.progress_every, end), &sampler, kTagProgress);
      }
    }
  }

  // Every flow's counters now, in plan order (report::RunRecorder::close_interval).
  std::vector<report::FlowCounters> flow_counters() const {
    std::vector<report::FlowCounters> c(flows.size());
    for (size_t i = 0; i < flows.size(); ++i) {
      const TcpFlow& f = *flows[i];
      c[i].received_bytes = f.received();
      c[i].retransmits = f.sender.stats().retransmits;
      c[i].cwnd_bytes = static_cast<uint64_t>(f.sender.cwnd()) * f.sender.params().mss;
      if (f.started && f.sender.rtt().has_sample()) {
        c[i].srtt_ms = f.sender.rtt().srtt().to_ms();
      }
    }
    return c;
  }

  void sample_queues(Time now) {
    for (const Host& h : hosts) {
      const model::NicQueueSample q = h.nic->queue_sample();
      // Keyed "a" / "b" (the first / second host), as directions are (docs/results.md).
      report::QueueSeries& s = queues[h.index == 0 ? "a" : "b"];
      s.time_s.push_back(now.to_seconds());
      s.qdisc_bytes.push_back(q.qdisc_bytes);
      s.qdisc_packets.push_back(q.qdisc_packets);
      s.ring_bytes.push_back(q.ring_bytes);
      s.ring_packets.push_back(q.ring_packets);
      s.bql_limit_bytes.push_back(q.bql_limit);
      s.device_fifo_bytes.push_back(q.device_fifo_bytes);
    }
  }

  // ---- the run -------------------------------------------------------------------------

  report::Run execute(const ProgressFn& fn) {
    progress = fn;
    reschedule(hosts[0]);
    reschedule(hosts[1]);
    engine.schedule(recorder.next_boundary(), &sampler, kTagInterval);
    engine.schedule(Time::zero(), &sampler, kTagQueue);
    engine.schedule(Time::zero(), &sampler, kTagProgress);
    for (const auto& f : flows) {
      if (f->stop < end) {
        engine.schedule(f->stop, &sampler, kTagStopFlow + f->index);
      }
    }
    engine.run_until(end);
    report::Run out = recorder.finish(end, flow_counters(), flow_totals());
    out.queues = std::move(queues);
    static const char* kStageNames[4] = {"qdisc", "ring", "wire", "rx"};
    for (Direction dir : report::kDirections) {
      for (size_t i = 0; i < 4; ++i) {
        out.stages[dir].push_back(stages[static_cast<size_t>(dir)][i].result(kStageNames[i]));
      }
    }
    return out;
  }

  std::vector<report::FlowTotals> flow_totals() const {
    std::vector<report::FlowTotals> t(flows.size());
    for (size_t i = 0; i < flows.size(); ++i) {
      const tcp::TcpSender::Stats& s = flows[i]->sender.stats();
      t[i].sender_bytes = s.bytes_sent - s.retransmitted_bytes;
      t[i].retransmits = s.retransmits;
      t[i].received_bytes = flows[i]->received();
    }
    return t;
  }
};

Simulation::Simulation(const config::Run& run, SimOptions options)
    : world_(std::make_unique<World>(run, options)) {}

Simulation::~Simulation() = default;

report::Run Simulation::run(const ProgressFn& progress) { return world_->execute(progress); }

uint64_t Simulation::events() const { return world_->engine.stats().executed; }

config::TrafficPlan Simulation::traffic() const {
  const World& w = *world_;
  const report::RunLayout& layout = w.recorder.layout();
  config::TrafficPlan t;
  t.duration = w.end.since_epoch();
  t.interval = layout.interval;
  for (size_t i = 0; i < w.flows.size(); ++i) {
    const World::TcpFlow& f = *w.flows[i];
    t.flows.push_back(config::FlowPlan{static_cast<size_t>(f.from), static_cast<size_t>(f.to),
                                       f.dscp, std::string(tcp::cc_name(f.sender.params().cc)),
                                       f.start.since_epoch(),
                                       f.stop.since_epoch(), layout.flows[i].name});
  }
  for (size_t i = 0; i < w.probes.size(); ++i) {
    const World::Probe& p = *w.probes[i];
    config::ProbePlan pp;
    pp.name = layout.probes[i].name;
    pp.icmp = p.icmp;
    pp.from = static_cast<size_t>(p.from);
    pp.to = static_cast<size_t>(p.to);
    pp.interval = p.interval;
    pp.size = p.frame_len - kEthIpBytes - (p.icmp ? kIcmpHeader : kUdpHeader);
    pp.start = p.next_send.since_epoch();  // before the run
    pp.stop = p.stop.since_epoch();
    pp.dscp = p.dscp;
    t.probes.push_back(std::move(pp));
  }
  for (const report::PhaseSpec& ph : layout.phases) {
    t.phases.push_back(config::PhasePlan{ph.name, ph.start, ph.end});
  }
  return t;
}

}  // namespace nicsim::sim
