#pragma once
// Network — a scenario's topology, resolved: nodes (hosts and routers), their interfaces (each a
// NIC with a qdisc), the full-duplex links between interfaces (per-direction rate, delay, loss,
// jitter) and the static routes. Both back-ends build their networks from it: the simulator
// (sim::Simulation) and the emulator (emu), so a scenario is the same network in each.
//
// Scenario syntax (docs/scenarios.md, "Networks"):
//
//   [hosts.a]                     # a host: a traffic end point with ONE interface (its nic/qdisc)
//   nic = "generic-1g"
//   [hosts.b]
//   nic = "generic-1g"
//
//   [routers.r]                   # a router: forwards only; no traffic starts or ends here
//   cpu = "arm-cortex-a5"         # every interface's NIC work and each forwarded packet run on it
//   [routers.r.interfaces.lan]    # interfaces in the order written; names unique per router
//   nic = "stmmac"
//   qdisc = "pfifo_fast"          # the interface's egress qdisc (as hosts.<h>.qdisc)
//   [routers.r.interfaces.wan]
//   nic = { preset = "generic-1g", tx_ring = 256 }
//   qdisc = { kind = "htb", ... }
//
//   [[links]]                     # full duplex between two interfaces: "host" or "router.iface"
//   ends = ["a", "r.lan"]
//   rate = "1Gbit"                # rate, delay, loss, jitter: both directions (as [wire])
//   delay = "1ms"
//   [[links]]
//   ends = ["r.wan", "b"]
//   rate = "120Mbit"
//   delay = "5ms"
//   reverse = { rate = "12Mbit" } # per-direction overrides: forward = ends[0] -> ends[1],
//                                 # reverse = ends[1] -> ends[0]; keys as above
//
//   [[routes]]                    # optional overrides of the computed routes
//   node = "r"                    # at this node (host or router),
//   to = "b"                      # packets for this host
//   via = "wan"                   # leave on this interface (a host's only interface: its name)
//
// A file without [routers] and [[links]] is the two-host form used since wave 1: its two hosts
// joined by one link with [wire] in both directions, and network_of() builds exactly that. A
// file with [[links]] must not have [wire]. Every interface is on exactly one link.
//
// Routes: for every node and every destination host, the egress interface on a shortest path
// by hop count; ties go to the interface written first. [[routes]] replace single entries. A
// traffic end point that cannot reach its peer (following the routes, without a loop) is an
// error at the traffic entry, as are unknown nodes or interfaces, dangling or doubly-used
// interfaces, and links from an interface to its own node: ConfigError file:line:col: key.
//
// Indexes: nodes are the hosts in the order written (so a host's node index equals its index
// in Scenario::hosts and in config::TrafficPlan), then the routers in the order written.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/config/presets.h"
#include "nicsim/config/qdisc.h"
#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/wire.h"

namespace nicsim::config {

struct Scenario;
class NetworkBuilder;

// One direction of a link; [wire] (two-host form) and a link's shared keys apply to both.
struct WireConfig {
  Rate rate;
  Duration delay;        // one way
  int64_t loss_ppb = 0;  // loss probability in parts per billion ("0.1%" = 1,000,000)
  Duration jitter;       // extra delay, uniform in [0, jitter]
  // model::Wire::Params for one direction (loss as a probability; seed from the scenario).
  model::Wire::Params params(uint64_t seed) const;
  bool operator==(const WireConfig&) const = default;
};

// [routers.<r>.interfaces.<i>]
struct RouterInterfaceConfig {
  std::string name;
  NicConfig nic;
  QdiscConfig qdisc;
  bool operator==(const RouterInterfaceConfig& o) const;
};

// [routers.<r>]
struct RouterConfig {
  std::string name;
  std::string cpu_preset;
  model::CpuCosts cpu;
  std::vector<RouterInterfaceConfig> interfaces;  // in the order written; at least one
  bool operator==(const RouterConfig& o) const;
};

// [[links]]: ends as written ("a", "r.lan").
struct LinkConfig {
  std::string ends[2];
  WireConfig forward;  // ends[0] -> ends[1]: the shared keys, then `forward` overrides
  WireConfig reverse;  // ends[1] -> ends[0]: the shared keys, then `reverse` overrides
  bool operator==(const LinkConfig&) const = default;
};

// [[routes]]
struct RouteConfig {
  std::string node;
  std::string to;
  std::string via;  // interface name
  bool operator==(const RouteConfig&) const = default;
};

// A network the loader must refuse, with the key path that is wrong ("links[1].ends[0]",
// "routes[0].via", "routers.r.interfaces.wan"); the loader turns it into file:line:col.
class NetworkError : public std::invalid_argument {
 public:
  NetworkError(std::string key, const std::string& message)
      : std::invalid_argument(key + ": " + message), key_(std::move(key)), message_(message) {}
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  std::string key_;
  std::string message_;
};

class Network {
 public:
  static constexpr int kNone = -1;

  struct Interface {
    int node = kNone;  // owning node
    std::string name;  // a host's interface is named after the host; a router's as written
    int link = kNone;  // the link it is on
    int side = 0;      // 0: ends[0] of that link, 1: ends[1]
    const NicConfig* nic = nullptr;      // points into the Scenario (hosts / routers)
    const QdiscConfig* qdisc = nullptr;  // idem
  };
  struct Node {
    std::string name;
    bool router = false;
    const model::CpuCosts* cpu = nullptr;  // into the Scenario
    std::vector<int> interfaces;           // indexes into interfaces(), in the order written
  };
  struct Link {
    int iface[2] = {kNone, kNone};                   // interfaces at ends[0] and ends[1]
    const WireConfig* wire[2] = {nullptr, nullptr};  // [0]: ends[0] -> ends[1]; [1]: reverse
  };

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Interface>& interfaces() const { return interfaces_; }
  const std::vector<Link>& links() const { return links_; }
  size_t host_count() const { return hosts_; }  // nodes [0, host_count()) are the hosts

  // The interface node `at` sends packets for host `to` on (kNone: `at` is `to`, or no route).
  int egress(int at, int to) const {
    return egress_[static_cast<size_t>(at) * hosts_ + static_cast<size_t>(to)];
  }
  // The interface at the other end of `iface`'s link.
  int peer(int iface) const;
  // The interfaces a packet from host `from` to host `to` leaves on, hop by hop (empty when
  // from == to; throws std::invalid_argument when the routes do not lead there without a loop).
  std::vector<int> path(int from, int to) const;
  // "a", "r.lan": how interfaces are named in messages and results.
  std::string interface_label(int iface) const;

 private:
  friend class NetworkBuilder;
  std::vector<Node> nodes_;
  std::vector<Interface> interfaces_;
  std::vector<Link> links_;
  size_t hosts_ = 0;
  std::vector<int> egress_;  // [node * host_count + host]
};

// The scenario's network (the two-host form included). The Network points into `s`, which must
// outlive it. Throws NetworkError for a network the loader must refuse (unknown or doubly-used
// interface, an interface on no link, a link to the same node, a bad route); reachability of
// traffic end points is checked by the caller with path().
Network network_of(const Scenario& s);

}  // namespace nicsim::config
