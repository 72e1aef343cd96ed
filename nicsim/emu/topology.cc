#include "nicsim/emu/topology.h"

#include <unistd.h>

#include "nicsim/emu/tap_port.h"

namespace nicsim::emu {

const char* to_string(FrameIo io) {
  switch (io) {
    case FrameIo::kPacket:
      return "packet";
    case FrameIo::kTap:
      return "tap";
    case FrameIo::kTapGso:
      return "tap-gso";
  }
  return "?";
}

std::string HostEnd::addr_string() const { return format_ipv4(addr); }

std::unique_ptr<Topology> Topology::create(const TopologyOptions& options) {
  std::unique_ptr<Topology> t(new Topology(options));
  try {
    t->build();
  } catch (...) {
    t->remove();
    throw;
  }
  return t;
}

Topology::~Topology() { remove(); }

void Topology::build() {
  const pid_t pid = ::getpid();
  const std::vector<HostAddress> plan =
      options_.hosts.empty() ? two_host_plan().hosts : options_.hosts;
  hosts_.resize(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    HostEnd& h = hosts_[i];
    h.role = plan[i].role;
    h.name = plan[i].name;
    h.netns = netns_name(options_.prefix, pid, h.role);
    h.netns_fd = create_named_netns(h.netns);
    created_.push_back(h.netns);
    h.ifname = "nsim0";
    h.addr = plan[i].self.addr;
    h.prefix_len = plan[i].self.prefix_len;
    h.mac = plan[i].self.mac;
    h.peer_addr = plan[i].peer_addr;
    h.gateway = plan[i].gateway;
  }
  if (options_.io == FrameIo::kPacket) {
    sw_name_ = netns_name(options_.prefix, pid, "sw");
    sw_fd_ = create_named_netns(sw_name_);
    created_.push_back(sw_name_);
    NetnsGuard in(sw_fd_.get());
    Netlink nl;
    Ethtool et;
    for (size_t i = 0; i < plan.size(); ++i) {
      HostEnd& h = hosts_[i];
      h.port_ifname = h.role + "0";
      nl.create_veth(h.port_ifname, plan[i].port_mac, h.ifname, h.mac, h.netns_fd.get());
      nl.set_mtu(h.port_ifname, options_.mtu);
      et.disable_offloads(h.port_ifname);
      nl.set_up(h.port_ifname);
    }
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    HostEnd& h = hosts_[i];
    NetnsGuard in(h.netns_fd.get());
    Netlink nl;
    Ethtool et;
    if (options_.io == FrameIo::kTap || options_.io == FrameIo::kTapGso) {
      h.tap_fd = TapPort::create_tap(h.ifname, options_.io == FrameIo::kTapGso);
      nl.set_mac(h.ifname, h.mac);
    }
    nl.set_mtu(h.ifname, options_.mtu);
    if (options_.io != FrameIo::kTapGso) {  // tap-gso: keep the TSO/checksum offloads it asked for
      et.disable_offloads(h.ifname);
    }
    nl.add_ipv4(h.ifname, h.addr, h.prefix_len);
    if (options_.host_qdisc) {
      nl.set_root_qdisc(h.ifname, "pfifo_fast");
    }
    nl.set_up(h.ifname);
    nl.set_up("lo");
    nl.add_neighbor(h.ifname, plan[i].peer_addr, plan[i].peer_mac);
    if (plan[i].gateway) {
      nl.add_default_route(h.ifname, plan[i].peer_addr);
    }
  }
}

void Topology::remove() noexcept {
  if (removed_) {
    return;
  }
  removed_ = true;
  for (HostEnd& h : hosts_) {
    h.tap_fd.reset();
    h.netns_fd.reset();
  }
  sw_fd_.reset();
  for (const std::string& name : created_) {
    remove_named_netns(name);
  }
}

}  // namespace nicsim::emu
