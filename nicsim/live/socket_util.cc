#include "nicsim/live/socket_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <netdb.h>
#include <netinet/ip.h>
#include <sched.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "nicsim/live/live_clock.h"

namespace nicsim::live {

void throw_errno(const std::string& what) { throw LiveError(what + ": " + std::strerror(errno)); }

std::string to_string(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return std::string(buf) + ":" + std::to_string(ntohs(a.sin_port));
}

std::string parse_endpoint(const std::string& text, uint16_t default_port, sockaddr_in& out) {
  std::string host = text;
  uint16_t port = default_port;
  if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    host = text.substr(0, colon);
    const std::string p = text.substr(colon + 1);
    char* end = nullptr;
    const long v = std::strtol(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || v < 0 || v > 65535) {
      return "'" + text + "': port '" + p + "' is not 0..65535";
    }
    port = static_cast<uint16_t>(v);
  }
  if (host.empty()) {
    return "'" + text + "': missing the address";
  }
  out = sockaddr_in{};
  out.sin_family = AF_INET;
  out.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &out.sin_addr) == 1) {
    return "";
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    return "'" + host + "': " + ::gai_strerror(rc);
  }
  sockaddr_in found{};
  std::memcpy(&found, res->ai_addr, sizeof found);
  ::freeaddrinfo(res);
  out.sin_addr = found.sin_addr;
  return "";
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw_errno("fcntl O_NONBLOCK");
  }
}

void set_dscp(int fd, uint8_t dscp) {
  const int tos = dscp << 2;
  if (::setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos) != 0) {
    throw_errno("setsockopt IP_TOS");
  }
}

std::string set_congestion_control(int fd, const std::string& cc) {
  if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc.data(), static_cast<socklen_t>(cc.size())) !=
      0) {
    const int err = errno;
    if (err != ENOENT) {
      return std::strerror(err);
    }
    // ENOENT: no such algorithm registered (tcp_ca_find); name the ones the kernel has.
    std::ifstream in("/proc/sys/net/ipv4/tcp_available_congestion_control");
    std::string available;
    std::getline(in, available);
    return "not available in this kernel" +
           (available.empty() ? std::string() : " (available: " + available + ")");
  }
  return "";
}

std::string congestion_control(int fd) {
  char buf[16] = {};
  socklen_t len = sizeof buf;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, buf, &len) != 0) {
    return "";
  }
  return std::string(buf, strnlen(buf, len));
}

TcpSample tcp_sample(int fd) {
  tcp_info ti{};
  socklen_t len = sizeof ti;
  TcpSample s;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) {
    return s;
  }
  s.bytes_acked = ti.tcpi_bytes_acked;
  s.bytes_sent = ti.tcpi_bytes_sent;
  s.retransmits = ti.tcpi_total_retrans;
  s.cwnd_bytes = ti.tcpi_snd_cwnd * ti.tcpi_snd_mss;
  s.rtt_us = ti.tcpi_rtt;
  return s;
}

void enter_netns(int netns_fd) {
  if (::setns(netns_fd, CLONE_NEWNET) != 0) {
    throw_errno("setns");
  }
}

std::optional<Datagram> recv_datagram(int fd, std::span<uint8_t> buf) {
  alignas(8) char control[128];
  Datagram d;
  iovec iov{buf.data(), buf.size()};
  msghdr msg{};
  msg.msg_name = &d.from;
  msg.msg_namelen = sizeof d.from;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &msg, 0);
  if (n < 0) {
    return std::nullopt;
  }
  d.size = static_cast<size_t>(n);
  d.recv_ns = receive_time_ns(msg);
  d.truncated = (msg.msg_flags & MSG_TRUNC) != 0;
  return d;
}

void set_flood_receive_buffer(int fd) {
  const int bytes = 4 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  }
}

std::string connect_error(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err == 0 ? std::string() : std::string(std::strerror(err));
}

}  // namespace nicsim::live
