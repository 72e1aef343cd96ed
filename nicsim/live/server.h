#pragma once
// Server — the peer side of live measurements (`nicsim server`): TCP sinks, TCP sources with a
// requested congestion control and DSCP, UDP echo reflectors, UDP flood sinks and sources
// (udp_flood, voip) and sized TCP responses (transfers), for many clients at once (protocol.h
// describes the messages).
//
// One thread, one epoll set, non-blocking sockets. Bounds, so that no client can exhaust it:
//   - at most `max_clients` connections; one more is answered Reject("server busy") and closed;
//   - memory per connection is fixed (a 256-byte request buffer, a small output queue);
//     payload is read into and written from one shared buffer;
//   - time per connection is bounded: the request must be complete within `request_timeout`
//     (slowloris), the flow ends after min(requested, `max_duration`), and the connection is
//     closed `grace` after that whatever the client does;
//   - malformed or hostile control messages (bad length, version, type, field) are answered
//     with Reject(reason) where possible, logged with the peer's address and the reason, and
//     the connection is closed;
//   - at most `max_per_peer` connections from one IP address (one more is answered Reject and
//     closed), so one host cannot take every slot;
//   - with a shared secret (`secret`, auth.h) a connection must answer the server's Challenge
//     before its request is read: strangers are refused after one small frame;
//   - an echo reflector answers only datagrams from the client's own IP address and its
//     registered UDP port that carry a valid probe header (so a spoofed source port cannot
//     reflect it onto another socket), one answer per datagram;
//   - log lines pass a rate limiter (log_limiter.h): a burst, then a few per second, and a
//     summary of what was held back; an attacker cannot flood the log;
//   - when accept(2) fails for lack of descriptors or memory (EMFILE, ENFILE, ENOBUFS,
//     ENOMEM) the server stops accepting for 100 ms (doubling to 1 s while it lasts) instead of
//     spinning on the still-pending connection; the clients it serves go on;
//   - one connection moves at most kMaxBytesPerWakeup (256 KiB) per wake-up, so a flow whose
//     socket never blocks cannot starve the others or the echo reflectors.
// docs/security.md says what this promises and how it was tested.

#include <netinet/in.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nicsim/core/time.h"
#include "nicsim/live/log_limiter.h"
#include "nicsim/live/protocol.h"
#include "nicsim/live/socket_util.h"

namespace nicsim::live {

struct ServerParams {
  sockaddr_in listen{};  // address and port (port 0: any free port, see Server::port())
  int max_clients = 64;
  Duration max_duration = Duration::s(300);
  Duration request_timeout = Duration::s(5);
  Duration grace = Duration::s(5);
  std::string default_cc;  // "" = the kernel's default
  int backlog = 64;
  int max_per_peer = 16;  // connections from one IP address (rrul needs 4 + 4 + 3)
  std::string secret;     // "" = no authentication
  // A udp source (udp_flood / voip to the client) sends at most this rate; a request for more
  // is refused. It only ever sends to the requesting client's own address (TCP-verified).
  uint64_t max_udp_rate_bps = 1'000'000'000;
  // A udp sink holds at most this many arrivals not yet reported (12 bytes each); beyond them
  // arrivals are counted (End) but not reported one by one: a client that does not read its
  // reports cannot make the server's memory grow.
  size_t max_pending_arrivals = 65'536;
  LogLimiterParams log_limits;
};

struct ServerStats {
  uint64_t accepted = 0;          // connections accepted (busy rejections included)
  uint64_t requests = 0;          // valid requests served
  uint64_t rejected = 0;          // connections refused with a reason (malformed, busy, ...)
  uint64_t timeouts = 0;          // closed for not completing a request, or overstaying
  uint64_t bytes_in = 0;          // TCP payload read
  uint64_t bytes_out = 0;         // TCP bytes written
  uint64_t echoed = 0;            // probe datagrams reflected
  uint64_t flood_in = 0;          // flood datagrams a udp sink counted
  uint64_t flood_out = 0;         // flood datagrams a udp source sent
  uint64_t transfers = 0;         // transfer requests served (the first per address is logged)
  uint64_t ignored = 0;           // datagrams not reflected (foreign source, malformed)
  uint64_t auth_failures = 0;     // connections without a valid answer to the challenge
  uint64_t per_peer_refused = 0;  // connections over max_per_peer
  uint64_t accept_errors = 0;     // accept(2) failures for lack of descriptors or memory
  uint64_t log_held_back = 0;     // log lines the rate limiter held back (summarised)
  // The most TCP payload one connection read or wrote in one wake-up (kMaxBytesPerWakeup
  // bounds it, plus one read or write): how long one busy flow can hold the others back.
  uint64_t max_burst_bytes = 0;
  int active = 0;
};

class Server {
 public:
  using Log = std::function<void(const std::string&)>;
  // Binds and listens (so a client may connect as soon as this returns). Throws LiveError.
  Server(const ServerParams& params, Log log);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  uint16_t port() const { return port_; }
  // Serves until `stop_fd` (an eventfd or pipe) becomes readable; -1 = until killed.
  void run(int stop_fd);
  ServerStats stats() const {
    ServerStats s = stats_;
    s.log_held_back = log_limiter_.stats().suppressed;
    return s;
  }

  struct Conn;

 private:
  void accept_all(int64_t now);
  bool admit_peer(int fd, const sockaddr_in& peer, const std::string& name);
  void pause_accepting(int64_t now, int err);
  void resume_accepting(int64_t now);
  void on_control(Conn& c, const Message& m, int64_t now);
  void log(const sockaddr_in& peer, const std::string& line);
  void on_tcp(Conn& c, uint32_t events, int64_t now);
  void on_udp(Conn& c, int64_t now);
  void on_flood_datagrams(Conn& c);
  bool open_udp(Conn& c, Accept& a);
  void send_floods(int64_t now);
  void end_flood(Conn& c, int64_t now);
  void queue_arrivals(Conn& c);
  void handle_request(Conn& c, int64_t now);
  void pump(Conn& c, int64_t now);
  void note_burst(uint64_t bytes) {
    stats_.max_burst_bytes = std::max(stats_.max_burst_bytes, bytes);
  }
  void timers(int64_t now);
  int64_t next_deadline() const;
  void close(Conn& c, const std::string& why, bool timeout = false);
  void reject(Conn& c, const std::string& why);
  void update_events(Conn& c);

  ServerParams params_;
  Log log_;
  Fd listen_;
  Fd epoll_;
  uint16_t port_ = 0;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Conn>> conns_;
  std::vector<uint64_t> closing_;
  std::vector<uint8_t> buffer_;        // shared payload buffer (reads and data frames)
  std::map<uint32_t, int> per_peer_;   // open connections per IPv4 address (network order)
  std::set<uint32_t> transfer_peers_;  // addresses whose first transfer was logged
  LogLimiter log_limiter_;
  int64_t accept_resume_ns_ = INT64_MAX;  // accepting paused until then (EMFILE back-off)
  int64_t accept_backoff_ns_ = 0;
  ServerStats stats_;
};

}  // namespace nicsim::live
