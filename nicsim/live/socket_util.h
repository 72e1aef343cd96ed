#pragma once
// Socket helpers of the live layer: an owning descriptor, IPv4 addresses, per-socket options
// (IP_TOS for DSCP, TCP_CONGESTION), TCP_INFO, and moving the calling thread into a network
// namespace. Errors in setup throw LiveError with what failed and strerror.

#include <netinet/in.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

namespace nicsim::live {

class LiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Throws LiveError("what: strerror(errno)").
[[noreturn]] void throw_errno(const std::string& what);

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset(std::exchange(o.fd_, -1));
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// The most TCP payload one connection reads or writes per event-loop wake-up. The server and
// the client each serve every socket from one thread with level-triggered epoll; a socket
// that never blocks (a fast local peer that drains as quickly as it is fed) would otherwise
// hold the loop: in a 2-s rrul between two namespaces one server connection moved 0.4-3.0 GB
// in a single wake-up, its stale clock kept the flow from ending, and the echo reflectors
// went unanswered meanwhile (a probe held past the run's end counts as lost). 256 KiB is
// 0.2 ms at 10 Gbit/s; the socket is still readable or writable after it, so the next
// wake-up continues at once.
inline constexpr size_t kMaxBytesPerWakeup = 256 * 1024;

// "198.18.0.2:5270".
std::string to_string(const sockaddr_in& a);
// Parses "ADDR" or "ADDR:PORT" (IPv4 dotted quad or a host name resolved to IPv4). Returns an
// error message, "" on success.
std::string parse_endpoint(const std::string& text, uint16_t default_port, sockaddr_in& out);

void set_nonblocking(int fd);
// IP_TOS = dscp << 2 (ECN bits zero).
void set_dscp(int fd, uint8_t dscp);
// TCP_CONGESTION; returns what went wrong ("" on success): for a name the kernel does not
// have, "not available in this kernel (available: ...)" from tcp_available_congestion_control.
std::string set_congestion_control(int fd, const std::string& cc);
std::string congestion_control(int fd);

struct TcpSample {
  uint64_t bytes_acked = 0;  // tcpi_bytes_acked (Linux 4.1+)
  uint64_t bytes_sent = 0;   // tcpi_bytes_sent (Linux 4.19+), retransmissions included
  uint32_t retransmits = 0;  // tcpi_total_retrans
  uint32_t cwnd_bytes = 0;   // tcpi_snd_cwnd * tcpi_snd_mss
  uint32_t rtt_us = 0;       // tcpi_rtt (smoothed)
};
// TCP_INFO of a connected socket; zeros when it cannot be read.
TcpSample tcp_sample(int fd);

// Moves the calling thread into the network namespace `netns_fd` (setns). Throws LiveError.
void enter_netns(int netns_fd);

// One datagram read with recvmsg: its length, sender, kernel receive time (SO_TIMESTAMPNS on
// CLOCK_MONOTONIC, live_clock.h) and whether it was cut to `buf` (MSG_TRUNC). nullopt when
// nothing is waiting (EAGAIN) or on error.
struct Datagram {
  size_t size = 0;
  sockaddr_in from{};
  int64_t recv_ns = 0;
  bool truncated = false;
};
std::optional<Datagram> recv_datagram(int fd, std::span<uint8_t> buf);
// A flood receiver's socket buffer: 4 MiB (SO_RCVBUFFORCE with CAP_NET_ADMIN, else
// SO_RCVBUF up to net.core.rmem_max), so that a receiving thread descheduled for a moment
// does not turn into datagrams lost at the receiver: best effort, errors ignored.
void set_flood_receive_buffer(int fd);
// The error of a non-blocking connect() that has completed (SO_ERROR): "" when it connected.
std::string connect_error(int fd);

}  // namespace nicsim::live
