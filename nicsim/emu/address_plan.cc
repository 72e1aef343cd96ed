#include "nicsim/emu/address_plan.h"

#include <arpa/inet.h>

#include "nicsim/config/network.h"
#include "nicsim/core/param_error.h"

namespace nicsim::emu {
namespace {

constexpr uint32_t kBase = 0xc6120000;  // 198.18.0.0

in_addr link_address(size_t link, int side) {
  in_addr a{};
  a.s_addr = htonl(kBase + (static_cast<uint32_t>(link) << 8) + 1 + static_cast<uint32_t>(side));
  return a;
}

MacAddress mac_of(uint8_t kind, uint32_t index) {
  return MacAddress{
      0x02, 0x6e, 0x73, kind, static_cast<uint8_t>(index >> 8), static_cast<uint8_t>(index & 0xff)};
}

MacAddress host_mac(size_t host) { return mac_of(0x00, 0x000a + static_cast<uint32_t>(host)); }
MacAddress port_mac(size_t host) { return mac_of(0x00, 0x010a + static_cast<uint32_t>(host)); }
MacAddress router_mac(size_t iface) { return mac_of(0x01, static_cast<uint32_t>(iface)); }

}  // namespace

std::string format_ipv4(in_addr addr) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr, buf, sizeof buf);
  return buf;
}

std::optional<uint16_t> AddressPlan::host_of(in_addr addr) const {
  for (size_t h = 0; h < hosts.size(); ++h) {
    if (hosts[h].self.addr.s_addr == addr.s_addr) {
      return static_cast<uint16_t>(h);
    }
  }
  return std::nullopt;
}

AddressPlan address_plan(const config::Network& net, bool two_host_form) {
  if (net.links().size() > kMaxEmulatedLinks) {
    throw InvalidParams(
        ParamError{"links", "the emulator addresses at most " + std::to_string(kMaxEmulatedLinks) +
                                " links (198.18.0.0/15 in /24s); this network has " +
                                std::to_string(net.links().size())});
  }
  if (net.host_count() > kMaxEmulatedHosts) {
    throw InvalidParams(
        ParamError{"hosts", "the emulator runs at most " + std::to_string(kMaxEmulatedHosts) +
                                " hosts; this network has " + std::to_string(net.host_count())});
  }
  AddressPlan plan;
  plan.interfaces.resize(net.interfaces().size());
  for (size_t i = 0; i < net.interfaces().size(); ++i) {
    const config::Network::Interface& f = net.interfaces()[i];
    const bool router = net.nodes()[static_cast<size_t>(f.node)].router;
    InterfaceAddress& a = plan.interfaces[i];
    a.addr = link_address(static_cast<size_t>(f.link), f.side);
    a.mac = router ? router_mac(i) : host_mac(static_cast<size_t>(f.node));
  }
  for (size_t h = 0; h < net.host_count(); ++h) {
    const config::Network::Node& node = net.nodes()[h];
    const int iface = node.interfaces.at(0);
    const int peer = net.peer(iface);
    HostAddress host;
    host.role = two_host_form ? std::string(h == 0 ? "a" : "b") : "h" + std::to_string(h);
    host.name = node.name;
    host.self = plan.interfaces[static_cast<size_t>(iface)];
    host.peer_addr = plan.interfaces[static_cast<size_t>(peer)].addr;
    host.peer_mac = plan.interfaces[static_cast<size_t>(peer)].mac;
    host.gateway =
        net.nodes()[static_cast<size_t>(net.interfaces()[static_cast<size_t>(peer)].node)].router;
    host.port_mac = port_mac(h);
    plan.hosts.push_back(host);
  }
  return plan;
}

AddressPlan two_host_plan() {
  AddressPlan plan;
  for (size_t h = 0; h < 2; ++h) {
    plan.interfaces.push_back(
        InterfaceAddress{link_address(0, static_cast<int>(h)), 24, host_mac(h)});
  }
  for (size_t h = 0; h < 2; ++h) {
    HostAddress host;
    host.role = h == 0 ? "a" : "b";
    host.name = host.role;
    host.self = plan.interfaces[h];
    host.peer_addr = plan.interfaces[1 - h].addr;
    host.peer_mac = plan.interfaces[1 - h].mac;
    host.port_mac = port_mac(h);
    plan.hosts.push_back(host);
  }
  return plan;
}

}  // namespace nicsim::emu
