#include "nicsim/emu/busy_poll_port.h"

// Sources: Documentation/networking/napi.rst ("Busy polling", "Preferred busy polling",
// napi_defer_hard_irqs, gro_flush_timeout); drivers/net/veth.c (veth_xmit, veth_poll,
// veth_xdp_rcv, rx_notify_masked; the TX queue stop of commit "veth: apply qdisc
// backpressure on full ptr_ring to reduce TX drops", Linux 6.16);
// net/core/dev.c (napi_busy_loop, busy_poll_stop); net/ipv4/udp.c (__skb_recv_udp busy polls
// an empty socket, __udp_queue_rcv_skb marks the socket's NAPI id); include/uapi/linux/bpf.h.

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "nicsim/emu/netlink.h"
#include "nicsim/emu/netns.h"

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

namespace nicsim::emu {
namespace {

constexpr int kBusyPollUsecs = 1;  // sk_ll_usec: non-zero enables busy polling on the socket
constexpr uint16_t kKickPort = 9;  // discard
// The kick socket's address: a link-local /30 of its own per interface (RFC 3927),
// 169.254.<ifindex / 64>.<(ifindex % 64) * 4 + 2>; the priming datagram comes from ... + 1.
// Every host's port lives in the same namespace, so each needs its own.
uint32_t kick_addr(unsigned ifindex) {
  return 0xa9fe0000u | ((ifindex / 64) & 0xff) << 8 | ((ifindex % 64) * 4 + 2);
}

long bpf(int cmd, bpf_attr& attr) { return ::syscall(__NR_bpf, cmd, &attr, sizeof attr); }

// `return XDP_PASS;` — only to put the veth in NAPI mode (veth_xdp_set enables its NAPI and
// ptr_ring); every frame continues to the stack, unchanged and never merged.
int load_pass_program() {
  std::array<bpf_insn, 2> insns{};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
  insns[0].dst_reg = BPF_REG_0;
  insns[0].imm = XDP_PASS;
  insns[1].code = BPF_JMP | BPF_EXIT;
  static const char kLicense[] = "GPL";
  bpf_attr a{};
  a.prog_type = BPF_PROG_TYPE_XDP;
  a.insn_cnt = static_cast<uint32_t>(insns.size());
  a.insns = reinterpret_cast<uint64_t>(insns.data());
  a.license = reinterpret_cast<uint64_t>(kLicense);
  a.expected_attach_type = BPF_XDP;
  std::memcpy(a.prog_name, "nicsim_napi", 12);
  const long fd = bpf(BPF_PROG_LOAD, a);
  if (fd < 0) {
    throw_errno("bpf(BPF_PROG_LOAD xdp pass)");
  }
  return static_cast<int>(fd);
}

// Native (driver) XDP through a BPF link: closing the link's fd detaches the program.
int attach_native(int prog_fd, unsigned ifindex) {
  bpf_attr a{};
  a.link_create.prog_fd = static_cast<uint32_t>(prog_fd);
  a.link_create.target_ifindex = ifindex;
  a.link_create.attach_type = BPF_XDP;
  a.link_create.flags = XDP_FLAGS_DRV_MODE;
  const long fd = bpf(BPF_LINK_CREATE, a);
  if (fd < 0) {
    throw_errno("bpf(BPF_LINK_CREATE xdp native)");
  }
  return static_cast<int>(fd);
}

// Writes /sys/class/net/IFNAME/KNOB inside namespace `netns_fd`: sysfs shows the devices of
// the namespace that mounted it, so a child process mounts its own (in a private mount
// namespace) and writes there.
void write_netdev_knob(int netns_fd, const std::string& ifname, const char* knob, uint32_t v) {
  const std::string path = "/sys/class/net/" + ifname + "/" + knob;
  const std::string value = std::to_string(v);
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw_errno("fork");
  }
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount("", "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0 ||
        ::setns(netns_fd, CLONE_NEWNET) != 0 ||
        ::mount("sysfs", "/sys", "sysfs", 0, nullptr) != 0) {
      ::_exit(2);
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    const bool ok =
        fd >= 0 && ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw SysError("cannot write " + path + " = " + value, EIO);
  }
}

void set_sockopt(int fd, int level, int opt, int value, const char* what) {
  if (::setsockopt(fd, level, opt, &value, sizeof value) != 0) {
    throw_errno(std::string("setsockopt ") + what);
  }
}

MacAddress mac_of(const std::string& ifname) {
  UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq r{};
  std::strncpy(r.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  if (!s.valid() || ::ioctl(s.get(), SIOCGIFHWADDR, &r) != 0) {
    throw_errno("SIOCGIFHWADDR " + ifname);
  }
  MacAddress m{};
  std::memcpy(m.data(), r.ifr_hwaddr.sa_data, m.size());
  return m;
}

uint16_t ipv4_checksum(const uint8_t* h, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) {
    sum += static_cast<uint32_t>(h[i] << 8 | h[i + 1]);
  }
  while ((sum >> 16) != 0) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return static_cast<uint16_t>(~sum);
}

// One UDP datagram kick address - 1 -> kick address, port 9 (UDP checksum 0: none, RFC 768), padded
// to the 60-byte Ethernet minimum.
std::array<uint8_t, 60> priming_frame(const MacAddress& dst, const MacAddress& src, uint32_t to) {
  std::array<uint8_t, 60> f{};
  std::memcpy(f.data(), dst.data(), 6);
  std::memcpy(f.data() + 6, src.data(), 6);
  f[12] = 0x08;  // IPv4
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  ip[3] = 20 + 8 + 4;  // total length
  ip[8] = 64;          // TTL
  ip[9] = IPPROTO_UDP;
  const uint32_t s = htonl(to - 1);
  const uint32_t d = htonl(to);
  std::memcpy(ip + 12, &s, 4);
  std::memcpy(ip + 16, &d, 4);
  const uint16_t c = ipv4_checksum(ip, 20);
  ip[10] = static_cast<uint8_t>(c >> 8);
  ip[11] = static_cast<uint8_t>(c & 0xff);
  uint8_t* udp = ip + 20;
  udp[1] = kKickPort;
  udp[3] = kKickPort;
  udp[5] = 8 + 4;
  return f;
}

void send_raw(int host_netns_fd, const std::string& host_ifname, const uint8_t* frame, size_t n) {
  NetnsGuard in(host_netns_fd);
  UniqueFd s(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
  if (!s.valid()) {
    throw_errno("AF_PACKET socket (priming)");
  }
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = static_cast<int>(::if_nametoindex(host_ifname.c_str()));
  to.sll_halen = 6;
  std::memcpy(to.sll_addr, frame, 6);
  if (to.sll_ifindex == 0 ||
      ::sendto(s.get(), frame, n, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) < 0) {
    throw_errno("priming frame on " + host_ifname);
  }
}

}  // namespace

BusyPollPort::BusyPollPort(int netns_fd, const std::string& ifname, int host_netns_fd,
                           const std::string& host_ifname, FramePool& pool)
    : ifname_(ifname) {
  write_netdev_knob(netns_fd, ifname, "napi_defer_hard_irqs", kDeferRounds);
  write_netdev_knob(netns_fd, ifname, "gro_flush_timeout", kSafetyNetNs);
  prime(netns_fd, ifname, host_netns_fd, host_ifname);
  // Opened after priming, so the priming datagram is not read as a host's frame.
  io_.emplace(netns_fd, ifname, pool);
  set_sockopt(kick_.get(), SOL_SOCKET, SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL");
  set_sockopt(kick_.get(), SOL_SOCKET, SO_BUSY_POLL, kBusyPollUsecs, "SO_BUSY_POLL");
  set_budget(1);
}

BusyPollPort::~BusyPollPort() = default;

void BusyPollPort::prime(int netns_fd, const std::string& ifname, int host_netns_fd,
                         const std::string& host_ifname) {
  MacAddress ours{};
  uint32_t kick = 0;
  {
    NetnsGuard in(netns_fd);
    const unsigned ifindex = ::if_nametoindex(ifname.c_str());
    if (ifindex == 0) {
      throw_errno("busy-poll port: interface " + ifname);
    }
    prog_.reset(load_pass_program());
    link_.reset(attach_native(prog_.get(), ifindex));
    Netlink nl;
    kick = kick_addr(ifindex);
    in_addr a{};
    a.s_addr = htonl(kick);
    nl.add_ipv4(ifname, a, 30);
    kick_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!kick_.valid()) {
      throw_errno("kick socket");
    }
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_port = htons(kKickPort);
    local.sin_addr = a;
    if (::bind(kick_.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      throw_errno("kick socket bind");
    }
    ours = mac_of(ifname);
  }
  MacAddress theirs{};
  {
    NetnsGuard in(host_netns_fd);
    theirs = mac_of(host_ifname);
  }
  const std::array<uint8_t, 60> f = priming_frame(ours, theirs, kick);
  send_raw(host_netns_fd, host_ifname, f.data(), f.size());
  pollfd p{kick_.get(), POLLIN, 0};
  if (::poll(&p, 1, 2000) != 1) {
    throw SysError("busy-poll port: the priming datagram did not arrive on " + ifname, ETIMEDOUT);
  }
  std::array<uint8_t, 64> buf{};
  ::recv(kick_.get(), buf.data(), buf.size(), MSG_DONTWAIT);
  int id = 0;
  socklen_t len = sizeof id;
  if (::getsockopt(kick_.get(), SOL_SOCKET, SO_INCOMING_NAPI_ID, &id, &len) != 0 || id == 0) {
    throw SysError("busy-poll port: no NAPI id on " + ifname, ENOTSUP);
  }
  napi_id_ = static_cast<unsigned>(id);
}

void BusyPollPort::set_budget(int budget) {
  if (budget == budget_) {
    return;
  }
  set_sockopt(kick_.get(), SOL_SOCKET, SO_BUSY_POLL_BUDGET, budget, "SO_BUSY_POLL_BUDGET");
  budget_ = budget;
}

size_t BusyPollPort::receive(Packet* out, int64_t* rx_realtime_ns, size_t max) {
  max = std::min(max, kMaxPull);
  size_t n = io_->receive(out, rx_realtime_ns, max);
  bstats_.found_waiting += n;
  if (n < max) {
    // One kick polls the NAPI twice (napi_busy_loop, then busy_poll_stop): ≤ 2 × budget.
    set_budget(static_cast<int>((max - n + 1) / 2));
    ++bstats_.kicks;
    std::array<uint8_t, 64> buf{};
    ::recv(kick_.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    const size_t more = io_->receive(out + n, rx_realtime_ns + n, max - n);
    bstats_.pulled_by_kick += more;
    n += more;
  }
  return n;
}

std::string BusyPollPort::describe() const {
  return "AF_PACKET on veth " + ifname_ + ", pulled by preferred busy polling of its NAPI (id " +
         std::to_string(napi_id_) + ")";
}

}  // namespace nicsim::emu
