#pragma once
// AddressPlan — the addresses of an emulated network (docs/emu.md, "Networks"), decided from
// the scenario's config::Network before anything is created:
//
//   - IPv4: link k is the subnet 198.18.<k>.0/24 counted across 198.18.0.0/15 (link 256 is
//     198.19.0.0/24; at most 512 links); the interface at ends[0] is .1, the one at ends[1] .2.
//     198.18.0.0/15 is reserved for benchmarking network devices (RFC 2544 appendix C, RFC 5735
//     section 4), so nothing here can collide with a real network. The two-host form is link 0:
//     host a 198.18.0.1/24, host b 198.18.0.2/24, as since wave 1.
//   - MAC (locally administered, fixed): host i 02:6e:73:00:00:0a+i (a: ...:0a, b: ...:0b, as
//     since wave 1), router interface j 02:6e:73:01:hi(j):lo(j); the veth ends in the emulator's
//     namespace (packet mode) 02:6e:73:00:01:0a+i. At most 256 hosts.
//   - Each host has a permanent neighbour entry for the other end of its link (no ARP exchange
//     delays the first packet); when that end is a router's interface, it is also the host's
//     default gateway. Routers have no namespace: they live in the emulator's data path, and
//     their interface addresses exist only as the hosts' gateways (nothing answers them).
//   - Namespace roles: "a" and "b" in the two-host form (nicsim-<pid>-a, as since wave 1),
//     "h<i>" for host i of a network.

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/emu/netlink.h"

namespace nicsim::config {
class Network;
}

namespace nicsim::emu {

struct InterfaceAddress {
  in_addr addr{};
  int prefix_len = 24;
  MacAddress mac{};
};

// What one host's namespace gets.
struct HostAddress {
  std::string role;  // namespace role ("a", "b", "h2")
  std::string name;  // the scenario's host name
  InterfaceAddress self;
  in_addr peer_addr{};  // the other end of the host's link
  MacAddress peer_mac{};
  bool gateway = false;   // that end is a router's interface: the default route goes through it
  MacAddress port_mac{};  // packet mode: the veth end the emulator reads (never on the wire)
};

struct AddressPlan {
  std::vector<InterfaceAddress> interfaces;  // by config::Network interface index
  std::vector<HostAddress> hosts;            // by host index
  // Host index of `addr` (a host's own address), or nullopt.
  std::optional<uint16_t> host_of(in_addr addr) const;
};

inline constexpr size_t kMaxEmulatedLinks = 512;  // /24s in 198.18.0.0/15
inline constexpr size_t kMaxEmulatedHosts = 256;

// The plan of a network. `two_host_form`: the scenario has no [[links]] (roles a and b).
// Throws InvalidParams (key "links" or "hosts") for a network larger than the limits above.
AddressPlan address_plan(const config::Network& net, bool two_host_form);
// The two-host form's plan without a Network (what address_plan gives for it).
AddressPlan two_host_plan();

std::string format_ipv4(in_addr addr);

}  // namespace nicsim::emu
