#pragma once
// Router — the forwarding element both back-ends use (docs/models/router.md).
//
// A router owns one Nic per interface, all attached to the router's one Cpu, so per-frame NIC
// work (RX ring, NAPI, TX, completion) and forwarding share a core, as on a small router SoC
// where one core runs the whole data path. A frame an interface's NIC delivers to the stack is
// routed on Packet::dst_host through a static table (destination host -> egress interface,
// config::Network::egress), costs the Cpu `per_forward` (ip_rcv + FIB lookup + ip_forward +
// neighbour output, net/ipv4/ip_forward.c) plus the egress interface's `qdisc_cost` (the
// per-packet work of a shaping qdisc beyond the FIFO already in per_tx_frame), and once that
// job completes it is handed to the egress NIC's send(): its qdisc, ring, BQL and wire apply
// and it charges its own per_tx_frame / per_tx_clean.
//
// Frames with no route are dropped (no_route). A frame carrying real bytes (Packet::payload,
// the emulator) has its IPv4 TTL decremented with an incremental checksum update (RFC 1624) or
// its IPv6 hop limit decremented; a frame that arrives with TTL/hop limit <= 1 is dropped
// (ttl_expired). No ICMP time exceeded is sent back (Linux sends one; a simulated or emulated
// network of static routes without loops never needs it). Frames of other EtherTypes (ARP) are
// forwarded unchanged: answering neighbours is the back-end's business. The simulator's packets
// carry no bytes, so there is no TTL to decrement (its routes have no loops).
//
// No clock, no I/O: like the NICs, next_event() / advance(now); the back-end calls advance(now)
// whenever now >= next_event() and after every input (a frame arriving on a wire the router's
// NICs read) re-reads next_event().
//
// Speed: the router caches each NIC's next_event(), because a NIC's next event changes only when
// the router calls it (advance, send) or when one of its wires changes from the other end — a
// frame put on its incoming wire (Wire::stats().frames moves) or a PAUSE on its outgoing wire
// (Wire::paused_until() moves; UsbNic's MAC waits for it). Both are checked on every look, so
// the cache is exact; it saves the NICs' own next_event() computation, which dominated a
// router's cost (docs/benchmarks.md, 2026-12-02). Callers must not change a NIC through nic().

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "nicsim/core/packet.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/nic.h"
#include "nicsim/model/wire.h"

namespace nicsim::model {

// Told about every routing decision (the simulator attributes per-hop stage times here; the
// emulator may capture). Calls happen synchronously while the router holds the packet.
class RouterObserver {
 public:
  virtual ~RouterObserver() = default;
  // `p` leaves through interface `out` now (before the egress NIC's send()); it arrived on `in`.
  // Its stage stamps are still those of the hop it completed.
  virtual void on_forward(Time /*now*/, const Packet& /*p*/, int /*in*/, int /*out*/) {}
  // `p`, received on `in`, was dropped by the router itself. (A frame the egress qdisc refuses
  // is counted in InterfaceStats::egress_refused; the qdisc's own Observer sees it.)
  enum class Drop : uint8_t { kNoRoute, kTtlExpired };
  virtual void on_drop(Time /*now*/, const Packet& /*p*/, int /*in*/, Drop /*why*/) {}
};

class Router {
 public:
  static constexpr int kNoRoute = -1;

  struct InterfaceParams {
    // Extra CPU work per packet leaving here, on top of per_forward: the shaping qdisc's own
    // enqueue/dequeue work (HTB class lookup + token accounting + the leaf's flow queueing),
    // which the host presets' per_tx_frame (a FIFO qdisc) does not contain. Zero for a FIFO.
    Duration qdisc_cost;
  };
  struct Params {
    CpuCosts cpu;  // per_forward is the router's own; the rest the NICs'
    std::vector<InterfaceParams> interfaces;
    // routes[h]: the interface packets for host h leave on (kNoRoute: dropped).
    std::vector<int> routes;
    Validation validate() const;
  };
  struct InterfaceStats {
    uint64_t received = 0;        // frames the interface's NIC delivered to the router
    uint64_t forwarded_out = 0;   // frames handed to this interface's NIC (accepted)
    uint64_t egress_refused = 0;  // frames this interface's qdisc refused at send()
  };
  struct Stats {
    uint64_t forwarded = 0;       // frames accepted by an egress NIC
    uint64_t no_route = 0;        // dropped: no route for Packet::dst_host
    uint64_t ttl_expired = 0;     // dropped: IPv4 TTL / IPv6 hop limit <= 1 on arrival
    uint64_t egress_refused = 0;  // refused by the egress qdisc (sum over the interfaces)
  };

  // One NIC per interface (nics.size() == params.interfaces.size()). Throws InvalidParams.
  Router(const Params& params, std::vector<std::unique_ptr<Nic>> nics);
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Connects interface i's NIC to its outgoing and incoming wires. Call once per interface.
  void attach(int iface, Wire* out, Wire* in);
  void set_observer(RouterObserver* o) { observer_ = o; }

  std::optional<Time> next_event() const;
  void advance(Time now);

  int interface_count() const { return static_cast<int>(nics_.size()); }
  Nic& nic(int iface) { return *nics_[static_cast<size_t>(iface)]; }
  const Nic& nic(int iface) const { return *nics_[static_cast<size_t>(iface)]; }
  const Cpu& cpu() const { return cpu_; }
  size_t in_flight() const { return in_flight_.size(); }  // frames whose forwarding job is queued
  const Stats& stats() const { return stats_; }
  const InterfaceStats& interface_stats(int iface) const {
    return ports_[static_cast<size_t>(iface)].stats;
  }
  // The egress interface for host `dst_host` (kNoRoute when none).
  int route(uint32_t dst_host) const {
    return dst_host < params_.routes.size() ? params_.routes[dst_host] : kNoRoute;
  }

 private:
  // The NicSink of one interface: frames it receives enter the router's forwarding path.
  struct Port final : NicSink {
    Router* router = nullptr;
    int index = 0;
    InterfaceStats stats;
    void deliver(Packet&& frame, Time now) override {
      router->receive(index, std::move(frame), now);
    }
    // A forwarded frame was transmitted (or dropped inside the egress queue): nothing waits
    // for it on a router (no socket, no TCP Small Queues).
    void tx_released(const TxRelease& /*r*/, Time /*now*/) override {}
  };
  // The cached next_event() of one interface's NIC (kNever: none) and the state of its wires
  // when it was read; `valid` is cleared when the router calls the NIC.
  struct NextCache {
    Time at;
    uint64_t in_frames = 0;  // in->stats().frames
    Time out_paused;         // out->paused_until()
    bool valid = false;
  };
  struct Wires {
    Wire* out = nullptr;
    Wire* in = nullptr;
  };
  static constexpr Time kNever = Time::max();

  // A frame whose forwarding job is on the Cpu; jobs complete in the order they were queued
  // (the Cpu is one serial server), so a FIFO is their agenda.
  struct InFlight {
    Time done;
    int in;
    int out;
    Packet frame;
  };

  void receive(int in, Packet&& frame, Time now);
  void drop(Time now, const Packet& p, int in, RouterObserver::Drop why);
  // Runs the NICs and the forwarding jobs due at `now` once; returns whether anything ran.
  // `first`: the first pass at `now`, which looks at every NIC.
  bool step(Time now, bool first);
  // NIC `i`'s next_event() (kNever: none), from the cache when its wires have not changed.
  Time nic_next(size_t i) const;

  Params params_;
  std::vector<std::unique_ptr<Nic>> nics_;
  std::vector<Port> ports_;
  std::vector<Wires> wires_;
  mutable std::vector<NextCache> next_;
  Cpu cpu_;
  std::deque<InFlight> in_flight_;
  Stats stats_;
  RouterObserver* observer_ = nullptr;
};

// The IP header's TTL (IPv4) or hop limit (IPv6) of an Ethernet frame, decremented in place
// with the IPv4 header checksum updated incrementally (RFC 1624, eqn. 3). Returns false (and
// leaves the frame alone) when the frame is IP with TTL <= 1: it must be dropped. Frames that
// are not IPv4/IPv6 over Ethernet (ARP, truncated) are left alone and return true.
bool decrement_ttl(PayloadBuffer& frame);

}  // namespace nicsim::model
