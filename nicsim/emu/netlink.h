#pragma once
// A minimal rtnetlink client (RFC 3549; linux/rtnetlink.h) for the emulator's topology: veth
// pairs, link state, MAC and IPv4 addresses, permanent neighbour entries, default routes, link
// deletion.
// Written against the kernel's documented message layout (no libnl/libmnl dependency and no
// shelling out to `ip`): a handful of request types, each acknowledged (NLM_F_ACK) and
// checked, so a failure names the operation and the errno.
//
// A netlink socket belongs to the network namespace of the thread that created it, so a
// Netlink object created inside a namespace (NetnsGuard, netns.h) configures that namespace
// for its whole life. Setup only; nothing here is on the packet path.

#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nicsim/emu/sys.h"

namespace nicsim::emu {

using MacAddress = std::array<uint8_t, 6>;
std::string format_mac(const MacAddress& mac);  // "02:6e:73:00:00:0a"

class Netlink {
 public:
  // Opens a NETLINK_ROUTE socket in the calling thread's network namespace. Throws SysError.
  Netlink();

  // Creates a veth pair: `name` here, `peer` in the namespace `peer_netns_fd` (-1: here).
  void create_veth(const std::string& name, const MacAddress& mac, const std::string& peer,
                   const MacAddress& peer_mac, int peer_netns_fd);
  // Index of a link in this namespace; throws SysError(ENODEV) if there is none.
  int link_index(const std::string& name);
  void set_up(const std::string& name);
  void set_mac(const std::string& name, const MacAddress& mac);
  void set_mtu(const std::string& name, uint32_t mtu);
  void add_ipv4(const std::string& name, in_addr addr, int prefix_len);
  // A permanent neighbour (ARP) entry: `addr` is at `mac` behind link `name`.
  void add_neighbor(const std::string& name, in_addr addr, const MacAddress& mac);
  // The default route: everything not on a connected subnet goes to `gateway` (on `name`'s
  // subnet) through link `name`.
  void add_default_route(const std::string& name, in_addr gateway);
  void delete_link(const std::string& name);
  // Replaces the root qdisc of `name` with a parameterless one of `kind` ("pfifo_fast": the
  // kernel's default for a device with a queue; veth otherwise has noqueue). RTM_NEWQDISC with
  // TCA_KIND only, as `tc qdisc replace dev NAME root KIND` sends.
  void set_root_qdisc(const std::string& name, const std::string& kind);

 private:
  class Request;
  void transact(Request& req, const std::string& what);
  UniqueFd fd_;
  uint32_t seq_ = 1;
};

// Ethernet offload control through the SIOCETHTOOL ioctl (linux/ethtool.h legacy commands,
// which current kernels map onto netdev features). A socket created in a namespace addresses
// that namespace's links.
class Ethtool {
 public:
  Ethtool();  // an AF_INET datagram socket in the calling thread's namespace
  // Turns off TX checksum offload, scatter-gather, TSO, GSO and GRO on `ifname`, so every frame
  // crossing the emulator is one complete MTU-sized frame with a valid checksum. Features
  // a device cannot change are skipped. Throws SysError for other failures.
  void disable_offloads(const std::string& ifname);

 private:
  UniqueFd fd_;
};

}  // namespace nicsim::emu
