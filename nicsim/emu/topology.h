#pragma once
// Topology — the emulated hosts as Linux network namespaces and the links the emulator uses to
// carry their frames. The two-host form (below) is what it has built since wave 1; a network
// has one namespace per host (roles h0, h1, ...), each with one interface addressed as
// address_plan.h says, and a default route through its router's interface when its link ends
// at a router. Routers have no namespace: they are in the emulator's data path (datapath.h).
//
//   packet mode (default, --io packet):
//     netns <prefix>-<pid>-a : nsim0 (198.18.0.1/24) ─veth─ a0 ┐ netns <prefix>-<pid>-sw:
//     netns <prefix>-<pid>-b : nsim0 (198.18.0.2/24) ─veth─ b0 ┘ AF_PACKET sockets on a0, b0
//   tap mode (--io tap):
//     netns <prefix>-<pid>-a : TAP nsim0 (198.18.0.1/24), fd held by the emulator
//     netns <prefix>-<pid>-b : TAP nsim0 (198.18.0.2/24), fd held by the emulator
//
// The frame-I/O ends live in a namespace of their own ("sw"), so nothing is created in the
// caller's namespace: removing the namespaces removes every link. Addresses come from
// 198.18.0.0/15, the range RFC 2544 / RFC 5735 reserve for benchmarking network devices,
// and never leave the namespaces. MAC addresses are fixed, locally administered
// (02:6e:73:00:00:0a for a, ...:0b for b), and each host has a permanent neighbour entry
// for the other, so no ARP exchange delays the first packet of a test. IPv6 is off. TX
// checksum, scatter-gather, TSO, GSO and GRO are off on every emulated interface, so the
// emulator sees exactly the MTU-sized frames a NIC would put on the wire (GSO/GRO are
// modelled by the NIC models, not by the kernel). lo is up in both hosts.

#include <netinet/in.h>

#include <memory>
#include <string>
#include <vector>

#include "nicsim/emu/address_plan.h"
#include "nicsim/emu/netlink.h"
#include "nicsim/emu/netns.h"
#include "nicsim/emu/sys.h"

namespace nicsim::emu {

enum class FrameIo { kPacket, kTap, kTapGso };  // kTapGso: TAP with super-frames (tap_port.h)
const char* to_string(FrameIo io);

struct TopologyOptions {
  FrameIo io = FrameIo::kPacket;
  std::string prefix = kDefaultPrefix;  // namespace names: <prefix>-<pid>-<role>
  uint32_t mtu = 1500;
  // Back pressure (BusyPollPort, docs/emu.md): the hosts' interfaces get a real root qdisc
  // (pfifo_fast, the kernel's default for a device with a queue) instead of veth's noqueue,
  // which cannot hold a packet when the TX queue stops.
  bool host_qdisc = false;
  // The hosts' addresses (address_plan.h); empty: the two-host form (two_host_plan()).
  std::vector<HostAddress> hosts;
};

// One emulated host.
struct HostEnd {
  std::string role;   // "a" or "b" (two-host form), "h<i>" (network)
  std::string name;   // the scenario's host name
  std::string netns;  // namespace name under /run/netns
  UniqueFd netns_fd;
  std::string ifname;  // the host's interface ("nsim0")
  in_addr addr{};      // its IPv4 address
  int prefix_len = 24;
  MacAddress mac{};
  in_addr peer_addr{};  // the other end of its link (its gateway when `gateway`)
  bool gateway = false;
  std::string port_ifname;  // packet mode: the veth end in the sw namespace ("a0", "b0")
  UniqueFd tap_fd;          // tap mode: the TAP fd (moved into the TapPort)
  std::string addr_string() const;
};

class Topology {
 public:
  // Builds everything; on failure removes what was created and throws SysError.
  static std::unique_ptr<Topology> create(const TopologyOptions& options);
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  ~Topology();

  // Removes the namespaces (and with them every link), killing any process left inside.
  // Idempotent, never throws.
  void remove() noexcept;

  size_t host_count() const { return hosts_.size(); }
  HostEnd& host(size_t i) { return hosts_[i]; }
  const HostEnd& host(size_t i) const { return hosts_[i]; }
  FrameIo io() const { return options_.io; }
  int switch_netns_fd() const { return sw_fd_.get(); }
  // Every namespace this topology created (for the crash handler and reports).
  const std::vector<std::string>& namespaces() const { return created_; }

 private:
  explicit Topology(const TopologyOptions& options) : options_(options) {}
  void build();

  TopologyOptions options_;
  std::vector<HostEnd> hosts_;
  std::string sw_name_;
  UniqueFd sw_fd_;
  std::vector<std::string> created_;
  bool removed_ = false;
};

}  // namespace nicsim::emu
