#include "nicsim/emu/datapath.h"

#include <algorithm>
#include <cstring>

#include "nicsim/config/network.h"
#include "nicsim/emu/address_plan.h"
#include "nicsim/emu/frame_classifier.h"
#include "nicsim/model/usb_nic.h"

namespace nicsim::emu {

DatapathLayout DatapathLayout::two_hosts() {
  const AddressPlan plan = two_host_plan();
  DatapathLayout l;
  l.hosts = 2;
  l.links = 1;
  for (size_t h = 0; h < 2; ++h) {
    l.interfaces.push_back(Interface{h, 0, 0, static_cast<int>(h), plan.hosts[h].self.mac});
    l.host_interface.push_back(h);
    l.peer.push_back(1 - h);
    l.host_by_addr[plan.hosts[h].self.addr.s_addr] = static_cast<uint16_t>(h);
  }
  return l;
}

DatapathLayout DatapathLayout::of(const config::Network& net, const AddressPlan& addresses) {
  DatapathLayout l;
  l.hosts = net.host_count();
  l.links = net.links().size();
  l.router_interfaces.resize(net.nodes().size() - l.hosts);
  for (size_t i = 0; i < net.interfaces().size(); ++i) {
    const config::Network::Interface& f = net.interfaces()[i];
    const size_t node = static_cast<size_t>(f.node);
    const auto& on_node = net.nodes()[node].interfaces;
    const int local = static_cast<int>(
        std::find(on_node.begin(), on_node.end(), static_cast<int>(i)) - on_node.begin());
    l.interfaces.push_back(
        Interface{node, local, static_cast<size_t>(f.link), f.side, addresses.interfaces[i].mac});
    l.peer.push_back(static_cast<size_t>(net.peer(static_cast<int>(i))));
  }
  for (size_t n = 0; n < net.nodes().size(); ++n) {
    for (const int i : net.nodes()[n].interfaces) {
      if (n < l.hosts) {
        l.host_interface.push_back(static_cast<size_t>(i));
      } else {
        l.router_interfaces[n - l.hosts].push_back(static_cast<size_t>(i));
      }
    }
  }
  for (size_t h = 0; h < addresses.hosts.size(); ++h) {
    l.host_by_addr[addresses.hosts[h].self.addr.s_addr] = static_cast<uint16_t>(h);
  }
  return l;
}

Datapath::Datapath(std::array<FramePort*, 2> ports, std::array<std::unique_ptr<model::Nic>, 2> nics,
                   std::array<model::Wire::Params, 2> wires, std::array<model::Cpu*, 2> cpus)
    : Datapath(DatapathLayout::two_hosts(), {ports[0], ports[1]},
               [&] {
                 std::vector<std::unique_ptr<model::Nic>> v;
                 v.push_back(std::move(nics[0]));
                 v.push_back(std::move(nics[1]));
                 return v;
               }(),
               {}, {wires}, {cpus[0], cpus[1]}) {}

Datapath::Datapath(DatapathLayout layout, std::vector<FramePort*> ports,
                   std::vector<std::unique_ptr<model::Nic>> host_nics,
                   std::vector<std::unique_ptr<model::Router>> routers,
                   std::vector<std::array<model::Wire::Params, 2>> wires,
                   std::vector<model::Cpu*> host_cpus)
    : layout_(std::move(layout)), hosts_(layout_.hosts), routers_(std::move(routers)) {
  if (ports.size() != layout_.hosts || host_nics.size() != layout_.hosts ||
      routers_.size() != layout_.router_interfaces.size() || wires.size() != layout_.links) {
    throw std::invalid_argument("Datapath: ports, NICs, routers or wires do not match the layout");
  }
  for (size_t h = 0; h < hosts_.size(); ++h) {
    Host& host = hosts_[h];
    const DatapathLayout::Interface& f = layout_.interfaces[layout_.host_interface[h]];
    host.port = ports[h];
    host.nic = std::move(host_nics[h]);
    host.sink = std::make_unique<Sink>(this, h);
    host.cpu = h < host_cpus.size() && host_cpus[h] != nullptr ? host_cpus[h] : &host.own_cpu;
    host.out_wire = f.link * 2 + static_cast<size_t>(f.side);
    host.in_wire = f.link * 2 + 1 - static_cast<size_t>(f.side);
    host.rx.resize(kRxBudget);
    host.rx_rt.resize(kRxBudget);
    host.rx_at.resize(kRxBudget);
    host.due.reserve(1024);
  }
  arrivals_.reserve(kRxBudget * hosts_.size());
  time_ordered_ = !routers_.empty() || std::any_of(hosts_.begin(), hosts_.end(), [](const Host& h) {
    return dynamic_cast<const model::UsbNic*>(h.nic.get()) != nullptr;
  });
  dir_.resize(layout_.links * 2);
  attach_all(std::move(wires));
}

Datapath::~Datapath() = default;

void Datapath::attach_all(std::vector<std::array<model::Wire::Params, 2>> wires) {
  for (const auto& link : wires) {
    for (const model::Wire::Params& p : link) {
      wires_.push_back(std::make_unique<model::Wire>(p));
    }
  }
  wire_observers_.resize(wires_.size());
  for (Host& h : hosts_) {
    h.nic->attach(wires_[h.out_wire].get(), wires_[h.in_wire].get(), h.cpu, h.sink.get());
  }
  for (size_t r = 0; r < routers_.size(); ++r) {
    for (const size_t i : layout_.router_interfaces[r]) {
      const DatapathLayout::Interface& f = layout_.interfaces[i];
      const size_t out = f.link * 2 + static_cast<size_t>(f.side);
      const size_t in = f.link * 2 + 1 - static_cast<size_t>(f.side);
      routers_[r]->attach(f.local, wires_[out].get(), wires_[in].get());
    }
    next_hops_.push_back(std::make_unique<NextHop>(&layout_, r));
    routers_[r]->set_observer(next_hops_.back().get());
  }
}

void Datapath::set_wire_tap(WireTap* tap) {
  for (size_t d = 0; d < wires_.size(); ++d) {
    wire_observers_[d] = tap != nullptr ? std::make_unique<WireObserver>(tap, d) : nullptr;
    wires_[d]->set_observer(wire_observers_[d].get());
  }
}

void Datapath::stamp_input_times(Host& h, size_t n, Time now,
                                 int64_t realtime_minus_time_ns) const {
  Time prev = model_time_;
  for (size_t i = 0; i < n; ++i) {
    Time t = now;
    if (h.rx_rt[i] != 0) {
      t = Time::from_ns(h.rx_rt[i] - realtime_minus_time_ns);
    }
    t = min(max(t, prev), now);  // never before the models' time or the previous frame
    h.rx_at[i] = t;
    prev = t;
  }
}

size_t Datapath::receive(const std::vector<bool>& ready, Time now, int64_t realtime_minus_time_ns) {
  arrivals_.clear();
  for (size_t h = 0; h < hosts_.size() && h < ready.size(); ++h) {
    Host& host = hosts_[h];
    if (!ready[h] || host.port->pulls()) {
      continue;
    }
    const size_t n = host.port->receive(host.rx.data(), host.rx_rt.data(), kRxBudget);
    stamp_input_times(host, n, now, realtime_minus_time_ns);
    for (size_t k = 0; k < n; ++k) {
      arrivals_.push_back(
          Arrival{host.rx_at[k], static_cast<uint32_t>(h), static_cast<uint32_t>(k)});
    }
  }
  // Merge the hosts' frames by input time (lower host index first on ties; each host's own
  // frames are already in order).
  std::sort(arrivals_.begin(), arrivals_.end(), [](const Arrival& x, const Arrival& y) {
    return x.at != y.at ? x.at < y.at : (x.host != y.host ? x.host < y.host : x.k < y.k);
  });
  for (const Arrival& a : arrivals_) {
    advance(a.at);
    Packet& p = hosts_[a.host].rx[a.k];
    send_from_host(a.host, p, a.at);
    p = Packet();  // reset the scratch slot (a refused packet's buffer returns to the pool)
  }
  return arrivals_.size();
}

bool Datapath::has_room(size_t host) const {
  const Host& h = hosts_[host];
  return h.port->pulls() && h.nic->queue_sample().qdisc_packets == 0;
}

bool Datapath::wants_pull() const {
  for (size_t h = 0; h < hosts_.size(); ++h) {
    if (has_room(h)) {
      return true;
    }
  }
  return false;
}

size_t Datapath::pull(Time now) {
  size_t total = 0;
  for (size_t h = 0; h < hosts_.size(); ++h) {
    Host& host = hosts_[h];
    if (!host.port->pulls()) {
      continue;
    }
    size_t from_host = 0;
    // The models first reach `now`: a completion due by now frees room before we look.
    advance(now);
    while (from_host < kRxBudget && has_room(h)) {
      const size_t n = host.port->receive(host.rx.data(), host.rx_rt.data(), kPullBatch);
      for (size_t k = 0; k < n; ++k) {
        send_from_host(h, host.rx[k], now);
        host.rx[k] = Packet();
      }
      from_host += n;
      if (n < kPullBatch) {
        break;  // the host has nothing more for now
      }
      advance(now);
    }
    total += from_host;
  }
  return total;
}

void Datapath::send_from_host(size_t host, Packet& p, Time t) {
  Host& h = hosts_[host];
  DirectionStats& d = dir_[h.out_wire];
  ++d.frames_in;
  d.bytes_in += p.len;
  p.id = ++next_id_;
  const FrameInfo info = classify(p);
  if (p.gso_segs > 1 && p.payload) {
    const size_t n = std::min<size_t>(p.payload->bytes.size(), p.len);
    const std::span<const uint8_t> bytes(p.payload->bytes.data(), n);
    if (const auto base = tcp_gro_base(bytes, p.gso_size)) {
      if (super_frames_.size() >= kMaxSuperFrames) {
        super_frames_.clear();
      }
      super_frames_[p.id] = SuperFrame{*base, rss_flow_of(bytes)};
    }
  }
  const auto to = layout_.host_by_addr.find(info.dst.s_addr);
  p.dst_host = info.ipv4 && to != layout_.host_by_addr.end() ? to->second : kUnknownHost;
  p.src_host = static_cast<uint16_t>(host);  // hosts are the network's first nodes (CAKE's hosts)
  p.stamp(Stage::kCreated, t);
  if (input_tap_ != nullptr) {
    input_tap_->on_input(host, t, p);
  }
  if (h.nic->send(std::move(p), t) == Verdict::kDropped) {
    ++d.nic_drops;
  }
}

algo::Rss::Flow Datapath::Sink::rss_flow(const Packet& frame) const {
  const auto super = dp_->super_frames_.find(frame.id);
  if (super != dp_->super_frames_.end()) {
    return super->second.rss;
  }
  if (!frame.payload) {
    return host_rss_flow(frame);
  }
  const size_t n = std::min<size_t>(frame.len, frame.payload->bytes.size());
  return rss_flow_of(std::span<const uint8_t>(frame.payload->bytes.data(), n));
}

algo::GroHeader Datapath::Sink::gro_header(const Packet& frame) const {
  algo::GroHeader h;
  const auto super = dp_->super_frames_.find(frame.id);
  if (super != dp_->super_frames_.end()) {
    h = gro_segment(super->second.gro, frame.gso_index);
  } else if (frame.payload) {
    const size_t n = std::min<size_t>(frame.len, frame.payload->bytes.size());
    if (const auto base = tcp_gro_base(std::span<const uint8_t>(frame.payload->bytes.data(), n))) {
      h = base->first;
    }
  }
  h.tos = frame.tos;  // as it arrived: a qdisc's CE mark differs
  return h;
}

void Datapath::Sink::deliver(Packet&& frame, Time scheduled) {
  Datapath& dp = *dp_;
  if (frame.gso_index > 0) {  // only a super-frame's later segments can be its last
    const auto super = dp.super_frames_.find(frame.id);
    if (super != dp.super_frames_.end() && frame.gso_index + 1u >= super->second.gro.segments()) {
      dp.super_frames_.erase(super);  // its last segment: the super-frame has arrived
    }
  }
  Host& h = dp.hosts_[host_];
  DirectionStats& d = dp.dir_[h.in_wire];
  ++d.frames_out;
  d.bytes_out += frame.len;
  if (write_ecn(frame)) {
    ++d.ce_marked;
  }
  h.due.push_back(scheduled);
  h.port->send(std::move(frame));
}

void Datapath::Sink::tx_released(const model::TxRelease&, Time) {
  ++dp_->dir_[dp_->hosts_[host_].out_wire].tx_released;
}

void Datapath::NextHop::on_forward(Time, const Packet& p, int, int out) {
  if (!p.payload || p.payload->bytes.size() < 12) {
    return;
  }
  const size_t egress = layout_->router_interfaces[router_][static_cast<size_t>(out)];
  const MacAddress& next = layout_->interfaces[layout_->peer[egress]].mac;
  const MacAddress& self = layout_->interfaces[egress].mac;
  uint8_t* eth = p.payload->bytes.data();
  std::memcpy(eth, next.data(), next.size());
  std::memcpy(eth + 6, self.data(), self.size());
}

void Datapath::advance(Time t) {
  while (sampler_ && sample_period_ > Duration::zero() && next_sample_ <= t) {
    run_due(next_sample_);
    sampler_(next_sample_);
    next_sample_ += sample_period_;
  }
  run_due(t);
}

// With routers or USB NICs (time_ordered_), events due before `t` run at their own times,
// earliest first across every model, as the simulator's engine orders its nodes: a router's
// forwarding job hands its frame to the egress NIC, a USB NIC's bus and device stages run, and
// frames reach the next model, at the times they are due, however late the loop calls; then
// the pass at `t`. Without this a late loop let a router forward at the loop's time (its queue
// series differed from the simulator's replay of the same input in 93-289 of 301 samples; with
// it, none) and an SMSC LAN95xx's queues differed in 52 of 301 (none with it): docs/emu.md
// "Replay". Two platform NICs keep the single pass: they schedule from their own times (their
// replays matched sample for sample either way), and stepping costs 2-3x the models' time per
// frame (BM_DatapathForwardModels 0.43 -> 1.0 us of CPU per frame).
void Datapath::run_due(Time t) {
  const Time target = max(model_time_, t);
  for (int step = 0; time_ordered_ && step < 1'000'000; ++step) {
    const std::optional<Time> e = next_event();
    if (!e || *e >= target) {
      break;
    }
    const Time at = max(*e, model_time_);
    run_passes(at);
    const std::optional<Time> after = next_event();
    if (after && *after <= at) {
      break;  // a model keeps an event at `at`: leave it to the pass at `target`
    }
  }
  run_passes(target);
}

void Datapath::run_passes(Time t) {
  model_time_ = max(model_time_, t);
  // A model processes everything due at or before `t` in one advance(); passes repeat while
  // one model's output made another due (zero-delay wire, a router's forwarding job), with a
  // guard against a model that keeps scheduling at the same instant.
  for (int pass = 0; pass < 64; ++pass) {
    bool ran = false;
    for (Host& h : hosts_) {
      const std::optional<Time> e = h.nic->next_event();
      if (e && *e <= model_time_) {
        h.nic->advance(model_time_);
        ran = true;
      }
    }
    for (auto& r : routers_) {
      const std::optional<Time> e = r->next_event();
      if (e && *e <= model_time_) {
        r->advance(model_time_);
        ran = true;
      }
    }
    if (!ran) {
      break;
    }
  }
}

void Datapath::flush(Time now) {
  for (Host& h : hosts_) {
    h.port->flush();
    for (const Time scheduled : h.due) {
      lateness_.add(now - scheduled);
    }
    h.due.clear();
  }
}

std::optional<Time> Datapath::next_event() const {
  std::optional<Time> t;
  auto consider = [&t](std::optional<Time> e) {
    if (e) {
      t = t ? min(*t, *e) : *e;
    }
  };
  for (const Host& h : hosts_) {
    consider(h.nic->next_event());
  }
  for (const auto& r : routers_) {
    consider(r->next_event());
  }
  return t;
}

DirectionStats Datapath::stats(size_t direction) const {
  DirectionStats d = dir_[direction];
  d.wire_lost = wires_[direction]->stats().lost;
  const size_t link = direction / 2;
  const int side = static_cast<int>(direction % 2);
  for (size_t i = 0; i < layout_.interfaces.size(); ++i) {
    const DatapathLayout::Interface& f = layout_.interfaces[i];
    if (f.link != link || f.node < layout_.hosts) {
      continue;
    }
    const model::Router& r = *routers_[f.node - layout_.hosts];
    if (f.side == side) {  // the router sends on this direction
      const model::Router::InterfaceStats& s = r.interface_stats(f.local);
      d.frames_in = s.forwarded_out + s.egress_refused;
      d.nic_drops = s.egress_refused;
    } else {  // the router receives from it
      const model::NicCounters c = r.nic(f.local).counters();
      d.frames_out = c.rx_packets;
      d.bytes_out = c.rx_bytes;
    }
  }
  return d;
}

const model::Nic& Datapath::nic(size_t iface) const {
  const DatapathLayout::Interface& f = layout_.interfaces[iface];
  if (f.node < layout_.hosts) {
    return *hosts_[f.node].nic;
  }
  return routers_[f.node - layout_.hosts]->nic(f.local);
}

const model::Cpu& Datapath::cpu(size_t iface) const {
  const DatapathLayout::Interface& f = layout_.interfaces[iface];
  if (f.node < layout_.hosts) {
    return *hosts_[f.node].cpu;
  }
  return routers_[f.node - layout_.hosts]->cpu();
}

}  // namespace nicsim::emu
