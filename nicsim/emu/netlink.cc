#include "nicsim/emu/netlink.h"

#include <linux/ethtool.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <linux/veth.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>

namespace nicsim::emu {
namespace {

// The netlink.h macros use C casts (-Wold-style-cast); these are the same computations.
constexpr size_t kNlAlign = 4;
constexpr size_t nl_align(size_t len) { return (len + kNlAlign - 1) & ~(kNlAlign - 1); }
constexpr size_t kNlHdrLen = nl_align(sizeof(nlmsghdr));

template <class T>
const T* nl_data(const nlmsghdr* h) {
  return reinterpret_cast<const T*>(reinterpret_cast<const char*>(h) + kNlHdrLen);
}

// Calls f(const nlmsghdr*) for each complete message in buf[0..len).
template <class F>
void for_each_message(const char* buf, size_t len, F&& f) {
  size_t off = 0;
  while (off + sizeof(nlmsghdr) <= len) {
    const auto* h = reinterpret_cast<const nlmsghdr*>(buf + off);
    if (h->nlmsg_len < sizeof(nlmsghdr) || off + h->nlmsg_len > len) {
      return;
    }
    f(h);
    off += nl_align(h->nlmsg_len);
  }
}

}  // namespace

std::string format_mac(const MacAddress& m) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
                m[5]);
  return buf;
}

// One netlink request: header, family struct, attributes (with nesting), 4-byte aligned.
class Netlink::Request {
 public:
  Request(uint16_t type, uint16_t flags) {
    buf_.resize(kNlHdrLen);
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = static_cast<uint16_t>(flags | NLM_F_REQUEST | NLM_F_ACK);
    std::memcpy(buf_.data(), &h, sizeof h);
  }
  template <class T>
  void put_struct(const T& s) {
    append(&s, sizeof s);
  }
  void put_attr(uint16_t type, const void* data, size_t len) {
    rtattr a{};
    a.rta_type = type;
    a.rta_len = static_cast<unsigned short>(sizeof(rtattr) + len);
    append(&a, sizeof a);
    append(data, len);
  }
  void put_string(uint16_t type, const std::string& s) { put_attr(type, s.c_str(), s.size() + 1); }
  void put_u32(uint16_t type, uint32_t v) { put_attr(type, &v, sizeof v); }
  // Opens a nested attribute; returns its offset for end_nest().
  size_t begin_nest(uint16_t type) {
    const size_t at = buf_.size();
    put_attr(type, nullptr, 0);
    return at;
  }
  void end_nest(size_t at) {
    rtattr a{};
    std::memcpy(&a, buf_.data() + at, sizeof a);
    a.rta_len = static_cast<unsigned short>(buf_.size() - at);
    std::memcpy(buf_.data() + at, &a, sizeof a);
  }
  nlmsghdr* finish(uint32_t seq) {
    auto* h = reinterpret_cast<nlmsghdr*>(buf_.data());
    h->nlmsg_len = static_cast<uint32_t>(buf_.size());
    h->nlmsg_seq = seq;
    return h;
  }
  size_t size() const { return buf_.size(); }

 private:
  void append(const void* data, size_t len) {
    const size_t at = buf_.size();
    buf_.resize(at + nl_align(len), 0);
    if (len > 0) {
      std::memcpy(buf_.data() + at, data, len);
    }
  }
  std::vector<uint8_t> buf_;
};

Netlink::Netlink() {
  fd_.reset(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!fd_.valid()) {
    throw_errno("netlink socket");
  }
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    throw_errno("netlink bind");
  }
}

void Netlink::transact(Request& req, const std::string& what) {
  const uint32_t seq = seq_++;
  nlmsghdr* h = req.finish(seq);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd_.get(), h, req.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) <
      0) {
    throw_errno(what);
  }
  alignas(nlmsghdr) char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw_errno(what);
    }
    int error = 0;
    bool acked = false;
    for_each_message(buf, static_cast<size_t>(n), [&](const nlmsghdr* r) {
      if (r->nlmsg_seq == seq && r->nlmsg_type == NLMSG_ERROR) {
        error = nl_data<nlmsgerr>(r)->error;
        acked = true;
      }
    });
    if (acked) {
      if (error != 0) {
        throw SysError(what, -error);
      }
      return;
    }
  }
}

void Netlink::create_veth(const std::string& name, const MacAddress& mac, const std::string& peer,
                          const MacAddress& peer_mac, int peer_netns_fd) {
  Request req(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  req.put_struct(ifi);
  req.put_string(IFLA_IFNAME, name);
  req.put_attr(IFLA_ADDRESS, mac.data(), mac.size());
  const size_t linkinfo = req.begin_nest(IFLA_LINKINFO);
  req.put_string(IFLA_INFO_KIND, "veth");
  const size_t data = req.begin_nest(IFLA_INFO_DATA);
  const size_t peer_info = req.begin_nest(VETH_INFO_PEER);
  req.put_struct(ifi);  // the peer's ifinfomsg, then its attributes
  req.put_string(IFLA_IFNAME, peer);
  req.put_attr(IFLA_ADDRESS, peer_mac.data(), peer_mac.size());
  if (peer_netns_fd >= 0) {
    req.put_u32(IFLA_NET_NS_FD, static_cast<uint32_t>(peer_netns_fd));
  }
  req.end_nest(peer_info);
  req.end_nest(data);
  req.end_nest(linkinfo);
  transact(req, "create veth " + name + " <-> " + peer);
}

int Netlink::link_index(const std::string& name) {
  const uint32_t seq = seq_++;
  Request req(RTM_GETLINK, 0);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  req.put_struct(ifi);
  req.put_string(IFLA_IFNAME, name);
  nlmsghdr* h = req.finish(seq);
  h->nlmsg_flags = NLM_F_REQUEST;
  if (::send(fd_.get(), h, req.size(), 0) < 0) {
    throw_errno("get link " + name);
  }
  alignas(nlmsghdr) char buf[32768];
  for (;;) {
    const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw_errno("get link " + name);
    }
    int error = 0;
    int index = -1;
    bool answered = false;
    for_each_message(buf, static_cast<size_t>(n), [&](const nlmsghdr* r) {
      if (r->nlmsg_seq != seq) {
        return;
      }
      if (r->nlmsg_type == NLMSG_ERROR) {
        error = nl_data<nlmsgerr>(r)->error;
        answered = true;
      } else if (r->nlmsg_type == RTM_NEWLINK) {
        index = nl_data<ifinfomsg>(r)->ifi_index;
        answered = true;
      }
    });
    if (index >= 0) {
      return index;
    }
    if (answered) {
      throw SysError("get link " + name, error != 0 ? -error : ENODEV);
    }
  }
}

void Netlink::set_up(const std::string& name) {
  Request req(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = link_index(name);
  ifi.ifi_flags = IFF_UP;
  ifi.ifi_change = IFF_UP;
  req.put_struct(ifi);
  transact(req, "set " + name + " up");
}

void Netlink::set_mac(const std::string& name, const MacAddress& mac) {
  Request req(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = link_index(name);
  req.put_struct(ifi);
  req.put_attr(IFLA_ADDRESS, mac.data(), mac.size());
  transact(req, "set " + name + " address " + format_mac(mac));
}

void Netlink::set_root_qdisc(const std::string& name, const std::string& kind) {
  Request req(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE);
  tcmsg tc{};
  tc.tcm_family = AF_UNSPEC;
  tc.tcm_ifindex = link_index(name);
  tc.tcm_parent = TC_H_ROOT;
  req.put_struct(tc);
  req.put_string(TCA_KIND, kind);
  transact(req, "set " + name + " root qdisc " + kind);
}

void Netlink::set_mtu(const std::string& name, uint32_t mtu) {
  Request req(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = link_index(name);
  req.put_struct(ifi);
  req.put_u32(IFLA_MTU, mtu);
  transact(req, "set " + name + " mtu " + std::to_string(mtu));
}

void Netlink::add_ipv4(const std::string& name, in_addr addr, int prefix_len) {
  Request req(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_INET;
  ifa.ifa_prefixlen = static_cast<unsigned char>(prefix_len);
  ifa.ifa_scope = RT_SCOPE_UNIVERSE;
  ifa.ifa_index = static_cast<uint32_t>(link_index(name));
  req.put_struct(ifa);
  req.put_attr(IFA_LOCAL, &addr, sizeof addr);
  req.put_attr(IFA_ADDRESS, &addr, sizeof addr);
  transact(req, "add address to " + name);
}

void Netlink::add_neighbor(const std::string& name, in_addr addr, const MacAddress& mac) {
  Request req(RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
  ndmsg nd{};
  nd.ndm_family = AF_INET;
  nd.ndm_ifindex = link_index(name);
  nd.ndm_state = NUD_PERMANENT;
  req.put_struct(nd);
  req.put_attr(NDA_DST, &addr, sizeof addr);
  req.put_attr(NDA_LLADDR, mac.data(), mac.size());
  transact(req, "add neighbour on " + name);
}

void Netlink::add_default_route(const std::string& name, in_addr gateway) {
  Request req(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE);
  rtmsg rt{};
  rt.rtm_family = AF_INET;
  rt.rtm_dst_len = 0;  // 0.0.0.0/0
  rt.rtm_table = RT_TABLE_MAIN;
  rt.rtm_protocol = RTPROT_STATIC;
  rt.rtm_scope = RT_SCOPE_UNIVERSE;
  rt.rtm_type = RTN_UNICAST;
  req.put_struct(rt);
  req.put_attr(RTA_GATEWAY, &gateway, sizeof gateway);
  req.put_u32(RTA_OIF, static_cast<uint32_t>(link_index(name)));
  transact(req, "add default route on " + name);
}

void Netlink::delete_link(const std::string& name) {
  Request req(RTM_DELLINK, 0);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  req.put_struct(ifi);
  req.put_string(IFLA_IFNAME, name);
  transact(req, "delete link " + name);
}

Ethtool::Ethtool() {
  fd_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd_.valid()) {
    throw_errno("ethtool socket");
  }
}

void Ethtool::disable_offloads(const std::string& ifname) {
  // Order: GRO and GSO first, then TSO, scatter-gather and TX checksumming (the kernel drops
  // TSO by itself once checksumming is off, but clearing it explicitly keeps the intent clear).
  static constexpr uint32_t kCommands[] = {ETHTOOL_SGRO, ETHTOOL_SGSO, ETHTOOL_STSO, ETHTOOL_SSG,
                                           ETHTOOL_STXCSUM};
  for (uint32_t cmd : kCommands) {
    ethtool_value v{};
    v.cmd = cmd;
    v.data = 0;
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
    ifr.ifr_data = reinterpret_cast<char*>(&v);
    if (::ioctl(fd_.get(), SIOCETHTOOL, &ifr) != 0 && errno != EOPNOTSUPP) {
      throw_errno("ethtool: turn off offloads of " + ifname);
    }
  }
}

}  // namespace nicsim::emu
