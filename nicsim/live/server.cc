#include "nicsim/live/server.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "nicsim/live/auth.h"
#include "nicsim/live/live_clock.h"
#include "nicsim/live/probe.h"
#include "nicsim/live/protocol.h"

namespace nicsim::live {

namespace {
constexpr uint64_t kListenToken = 0;
constexpr uint64_t kStopToken = 1;
constexpr size_t kMaxOutQueue = 1024;  // pending control bytes per connection
constexpr size_t kBufferBytes = kMaxDataPayload;
// Data frames a source writes: small enough that Stats frames, which go between Data frames,
// are not held back long at low rates (16 KiB at 1 Mbit/s: 131 ms); 6 bytes of framing each.
constexpr size_t kSourceFrame = 16 * 1024;
// Accept back-off when the process is out of descriptors or memory: first pause, and the most.
constexpr int64_t kAcceptPauseNs = 100'000'000;
constexpr int64_t kAcceptPauseMaxNs = 1'000'000'000;

std::string address_of(const sockaddr_in& a) {
  char text[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return text;
}
}  // namespace

// kAuth: the Challenge is sent, the client's Auth is awaited (servers with a secret only).
// kUdpSink / kUdpSource: a flood's receiver / sender; kTransfer: a response being written.
enum class ConnState {
  kAuth,
  kRequest,
  kSink,
  kSource,
  kEcho,
  kUdpSink,
  kUdpSource,
  kTransfer,
  kDraining
};

namespace {
bool awaiting_request(ConnState s) { return s == ConnState::kAuth || s == ConnState::kRequest; }
// States that write Data frames (a timed source, a sized transfer).
bool writes_data(ConnState s) { return s == ConnState::kSource || s == ConnState::kTransfer; }
// Datagrams a udp source sends per wake-up at most when it is behind its schedule.
constexpr size_t kFloodBurst = 64;
}  // namespace

struct Server::Conn {
  uint64_t id = 0;
  Fd fd;
  Fd udp;
  sockaddr_in peer{};
  std::string name;  // "peer 1.2.3.4:5678"
  ConnState state = ConnState::kRequest;
  FrameReader reader{false};
  Request req;
  Challenge challenge;       // sent on accept when the server has a secret
  uint16_t echo_port = 0;    // the client's registered UDP port (echo; 0 = not yet known)
  std::vector<uint8_t> out;  // pending control bytes (bounded by kMaxOutQueue)
  size_t out_off = 0;
  size_t data_left = 0;  // payload bytes of the current Data frame still to write
  int64_t accepted_ns = 0;
  int64_t started_ns = 0;
  int64_t end_ns = 0;       // the flow's end (duration)
  int64_t deadline_ns = 0;  // hard close
  int64_t next_stats_ns = INT64_MAX;
  uint64_t bytes = 0;    // sink: received; source: written payload and framing
  uint64_t payload = 0;  // transfer: payload written
  // udp sink: arrivals not yet reported, and how many were counted without a report
  std::vector<Arrival> arrivals;
  uint64_t flood_count = 0;           // udp sink: datagrams received; udp source: sent
  int64_t next_flood_ns = INT64_MAX;  // udp source: the next datagram's time
  bool end_queued = false;
  bool shut = false;
  uint32_t events = 0;
};

Server::Server(const ServerParams& params, Log log)
    : params_(params),
      log_(std::move(log)),
      buffer_(kBufferBytes, 0),
      log_limiter_(params.log_limits) {
  listen_ = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listen_.valid()) {
    throw_errno("socket");
  }
  const int one = 1;
  ::setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listen_.get(), reinterpret_cast<const sockaddr*>(&params_.listen),
             sizeof params_.listen) != 0) {
    throw_errno("bind " + to_string(params_.listen));
  }
  if (::listen(listen_.get(), params_.backlog) != 0) {
    throw_errno("listen");
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.sin_port);
  epoll_ = Fd(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) {
    throw_errno("epoll_create1");
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenToken;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listen_.get(), &ev) != 0) {
    throw_errno("epoll_ctl");
  }
}

Server::~Server() = default;

void Server::run(int stop_fd) {
  if (stop_fd >= 0) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kStopToken;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, stop_fd, &ev) != 0) {
      throw_errno("epoll_ctl stop");
    }
  }
  epoll_event events[64];
  for (;;) {
    const int64_t deadline = next_deadline();
    // Nanosecond timeouts (epoll_pwait2): a udp source's schedule needs better than 1 ms.
    const int64_t wait = std::min<int64_t>(
        60'000'000'000,
        deadline == INT64_MAX ? 60'000'000'000 : std::max<int64_t>(0, deadline - mono_ns()));
    const timespec ts{static_cast<time_t>(wait / 1'000'000'000),
                      static_cast<long>(wait % 1'000'000'000)};
    const int n = ::epoll_pwait2(epoll_.get(), events, 64, &ts, nullptr);
    if (n < 0 && errno != EINTR) {
      throw_errno("epoll_pwait2");
    }
    const int64_t now = mono_ns();
    for (int i = 0; i < n; ++i) {
      const uint64_t token = events[i].data.u64;
      if (token == kStopToken) {
        for (auto& [id, c] : conns_) {
          close(*c, "");
        }
        conns_.clear();
        return;
      }
      if (token == kListenToken) {
        accept_all(now);
        continue;
      }
      auto it = conns_.find(token >> 1);
      if (it == conns_.end() || !it->second->fd.valid()) {
        continue;
      }
      // A failure on one connection (a socket option the kernel refuses, ...) closes that
      // connection with the reason; it never stops the server.
      try {
        if ((token & 1) != 0) {
          on_udp(*it->second, now);
        } else {
          on_tcp(*it->second, events[i].events, now);
        }
      } catch (const LiveError& e) {
        close(*it->second, e.what());
      }
    }
    timers(mono_ns());
    if (std::optional<std::string> held = log_limiter_.summary(mono_ns()); held && log_) {
      log_(*held);
    }
    for (uint64_t id : closing_) {
      conns_.erase(id);
    }
    closing_.clear();
  }
}

void Server::accept_all(int64_t now) {
  for (;;) {
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_.get(), reinterpret_cast<sockaddr*>(&peer), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        pause_accepting(now, errno);
      }
      return;  // EAGAIN, or a transient error (ECONNABORTED): try on the next event
    }
    accept_backoff_ns_ = 0;
    ++stats_.accepted;
    auto c = std::make_unique<Conn>();
    c->id = next_id_++;
    c->fd = Fd(fd);
    c->peer = peer;
    c->name = "peer " + to_string(peer);
    c->accepted_ns = now;
    c->deadline_ns = now + params_.request_timeout.count_ns();
    if (!admit_peer(fd, peer, c->name)) {
      continue;  // refused with a reason; c closes the socket
    }
    ++stats_.active;
    ++per_peer_[peer.sin_addr.s_addr];
    if (!params_.secret.empty()) {
      c->challenge = make_challenge();
      encode(c->challenge, c->out);
      c->state = ConnState::kAuth;
    }
    const uint64_t id = c->id;
    Conn& conn = *(conns_[id] = std::move(c));
    update_events(conn);
    pump(conn, now);
  }
}

// Whether a new connection fits the limits: all clients, then one address's share. A refused
// one gets Reject(reason), best effort and non-blocking (a fresh socket's buffer takes it).
bool Server::admit_peer(int fd, const sockaddr_in& peer, const std::string& name) {
  std::string why;
  if (stats_.active >= params_.max_clients) {
    why = "server busy: " + std::to_string(params_.max_clients) + " clients";
  } else if (const auto it = per_peer_.find(peer.sin_addr.s_addr);
             it != per_peer_.end() && it->second >= params_.max_per_peer) {
    why = "too many connections from " + address_of(peer) + " (at most " +
          std::to_string(params_.max_per_peer) + ")";
    ++stats_.per_peer_refused;
  } else {
    return true;
  }
  std::vector<uint8_t> msg;
  encode(Reject{why}, msg);
  [[maybe_unused]] const ssize_t w = ::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
  ++stats_.rejected;
  log(peer, name + ": rejected: " + why);
  return false;
}

// Out of descriptors or memory: the pending connection stays in the backlog and the listening
// socket stays readable, so accepting again at once would spin. Stop listening for a while.
void Server::pause_accepting(int64_t now, int err) {
  ++stats_.accept_errors;
  accept_backoff_ns_ = accept_backoff_ns_ == 0
                           ? kAcceptPauseNs
                           : std::min(2 * accept_backoff_ns_, kAcceptPauseMaxNs);
  accept_resume_ns_ = now + accept_backoff_ns_;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, listen_.get(), nullptr);
  log(sockaddr_in{}, std::string("accept: ") + std::strerror(err) + " (" +
                         std::to_string(stats_.active) + " connections open); not accepting for " +
                         std::to_string(accept_backoff_ns_ / 1'000'000) + " ms");
}

void Server::resume_accepting(int64_t now) {
  if (now < accept_resume_ns_) {
    return;
  }
  accept_resume_ns_ = INT64_MAX;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenToken;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listen_.get(), &ev);
}

// Every line about a peer passes the rate limiter (an unspecified peer: the server's own).
void Server::log(const sockaddr_in& peer, const std::string& line) {
  if (log_ && log_limiter_.admit(address_of(peer), mono_ns())) {
    log_(line);
  }
}

void Server::update_events(Conn& c) {
  uint32_t want = EPOLLIN | EPOLLRDHUP;
  const bool pending = c.out_off < c.out.size();
  if (pending || writes_data(c.state) || (c.state == ConnState::kUdpSink && !c.arrivals.empty())) {
    want |= EPOLLOUT;
  }
  if (want == c.events) {
    return;
  }
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = c.id << 1;
  ::epoll_ctl(epoll_.get(), c.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c.fd.get(), &ev);
  c.events = want;
}

void Server::close(Conn& c, const std::string& why, bool timeout) {
  if (!c.fd.valid()) {
    return;
  }
  if (timeout) {
    ++stats_.timeouts;
  }
  if (!why.empty()) {
    log(c.peer, c.name + ": " + why);
  }
  c.fd.reset();  // closing removes it from the epoll set
  c.udp.reset();
  --stats_.active;
  if (auto it = per_peer_.find(c.peer.sin_addr.s_addr);
      it != per_peer_.end() && --it->second <= 0) {
    per_peer_.erase(it);
  }
  closing_.push_back(c.id);
}

void Server::reject(Conn& c, const std::string& why) {
  std::vector<uint8_t> msg;
  encode(Reject{why}, msg);
  [[maybe_unused]] const ssize_t w = ::send(c.fd.get(), msg.data(), msg.size(), MSG_NOSIGNAL);
  ++stats_.rejected;
  close(c, "rejected: " + why);
}

void Server::on_tcp(Conn& c, uint32_t events, int64_t now) {
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
    uint64_t burst = 0;  // at most kMaxBytesPerWakeup: the rest waits for the next wake-up
    while (burst < kMaxBytesPerWakeup) {
      const ssize_t n = ::recv(c.fd.get(), buffer_.data(), buffer_.size(), 0);
      if (n > 0) {
        stats_.bytes_in += static_cast<uint64_t>(n);
        burst += static_cast<uint64_t>(n);
        note_burst(burst);
        if (awaiting_request(c.state)) {
          const auto* p = buffer_.data();
          size_t left = static_cast<size_t>(n);
          while (left > 0 && awaiting_request(c.state) && c.fd.valid()) {
            const size_t used = c.reader.feed(std::span<const uint8_t>(p, left));
            p += used;
            left -= used;
            if (c.reader.failed()) {
              reject(c, c.reader.error());
              return;
            }
            if (std::optional<Message> m = c.reader.next()) {
              on_control(c, *m, now);
            }
          }
          if (!c.fd.valid()) {
            return;
          }
          if (c.state == ConnState::kSink) {
            c.bytes += left;  // data that followed the request in the same read
          } else if (left > 0 && !awaiting_request(c.state)) {
            close(c, "protocol: data after a " + std::string(to_string(c.req.kind)) + " request");
            return;
          }
        } else if (c.state == ConnState::kSink) {
          c.bytes += static_cast<uint64_t>(n);
        } else {
          // Sources, echoes and draining connections expect nothing from the client.
          close(c, "protocol: unexpected data after a " + std::string(to_string(c.req.kind)) +
                       " request");
          return;
        }
        continue;
      }
      if (n == 0) {
        if (c.state == ConnState::kUdpSink && !c.end_queued) {
          // The client's flood is over: report what is pending, then End (queue_arrivals).
          c.end_queued = true;
          c.deadline_ns = std::min(c.deadline_ns, now + params_.grace.count_ns());
          queue_arrivals(c);
          pump(c, now);
          if (c.fd.valid()) {
            update_events(c);
          }
          return;
        }
        if (c.state == ConnState::kSink && !c.end_queued) {
          // The client's stream ended: send the final count, then close once it is out.
          Stats s;
          s.elapsed_us = static_cast<uint64_t>((now - c.started_ns) / 1000);
          s.bytes = c.bytes;
          encode(End{s}, c.out);
          c.end_queued = true;
          c.state = ConnState::kDraining;
          c.deadline_ns = std::min(c.deadline_ns, now + params_.grace.count_ns());
          pump(c, now);
          if (c.fd.valid() && c.out_off >= c.out.size()) {
            close(c, "");
          }
          return;
        }
        if (awaiting_request(c.state)) {
          close(c, c.reader.mid_frame() ? "closed inside a request frame" : "");
        } else {
          close(c, "");
        }
        return;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      }
      if (errno == EINTR) {
        continue;
      }
      close(c, std::string("recv: ") + std::strerror(errno));
      return;
    }
  }
  if (c.fd.valid() && (events & EPOLLOUT) != 0) {
    pump(c, now);
  }
  if (c.fd.valid()) {
    update_events(c);
  }
}

// The first frames of a connection: Auth (when the server has a secret), then the Request.
void Server::on_control(Conn& c, const Message& m, int64_t now) {
  if (const auto* a = std::get_if<Auth>(&m)) {
    if (params_.secret.empty()) {
      reject(c, "auth: this server has no shared secret; connect without one");
    } else if (c.state != ConnState::kAuth) {
      reject(c, "auth: sent twice");
    } else if (!auth_valid(params_.secret, c.challenge, *a)) {
      ++stats_.auth_failures;
      reject(c, "auth: wrong shared secret");
    } else {
      c.state = ConnState::kRequest;
    }
    return;
  }
  if (!std::holds_alternative<Request>(m)) {
    reject(c, "frame.type: expected a request first");
    return;
  }
  if (c.state == ConnState::kAuth) {
    ++stats_.auth_failures;
    reject(c, "auth: this server requires a shared secret (--secret-file)");
    return;
  }
  c.req = std::get<Request>(m);
  handle_request(c, now);
}

void Server::handle_request(Conn& c, int64_t now) {
  Request& r = c.req;
  const int64_t max_ms = params_.max_duration.count_ns() / 1'000'000;
  const uint32_t duration_ms =
      static_cast<uint32_t>(std::min<int64_t>(r.duration_ms, std::max<int64_t>(max_ms, 1)));
  c.started_ns = now;
  c.end_ns = now + int64_t{duration_ms} * 1'000'000;
  c.deadline_ns = c.end_ns + params_.grace.count_ns();
  c.next_stats_ns = now + int64_t{r.stats_interval_ms} * 1'000'000;
  try {
    set_dscp(c.fd.get(), r.dscp);
  } catch (const LiveError& e) {
    reject(c, e.what());
    return;
  }
  if (r.kind == FlowKind::kUdpSource && r.rate_bps > params_.max_udp_rate_bps) {
    reject(c, "request.rate_bps: " + std::to_string(r.rate_bps) + " above this server's limit of " +
                  std::to_string(params_.max_udp_rate_bps) + " bit/s");
    return;
  }
  if (r.kind == FlowKind::kTransfer) {
    // The response is written at once, as a web server's: Nagle must not hold its last
    // partial segment back for the client's (possibly delayed) ACK of the first ones.
    const int one = 1;
    ::setsockopt(c.fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  if (r.kind == FlowKind::kSource || r.kind == FlowKind::kTransfer) {
    const std::string cc = r.cc.empty() ? params_.default_cc : r.cc;
    if (!cc.empty()) {
      if (std::string err = set_congestion_control(c.fd.get(), cc); !err.empty()) {
        reject(c, "request.cc: '" + cc + "' is not available here (" + err + ")");
        return;
      }
    }
  }
  Accept a;
  const bool udp =
      r.kind == FlowKind::kEcho || r.kind == FlowKind::kUdpSink || r.kind == FlowKind::kUdpSource;
  if (udp && !open_udp(c, a)) {
    return;
  }
  if (r.kind == FlowKind::kUdpSource) {
    c.next_flood_ns = now;
  }
  if (r.kind != FlowKind::kSink && r.kind != FlowKind::kSource) {
    c.next_stats_ns = INT64_MAX;  // Stats only on TCP bulk flows
  }
  ++stats_.requests;
  encode(a, c.out);
  switch (r.kind) {
    case FlowKind::kSink:
      c.state = ConnState::kSink;
      break;
    case FlowKind::kSource:
      c.state = ConnState::kSource;
      break;
    case FlowKind::kUdpSink:
      c.state = ConnState::kUdpSink;
      break;
    case FlowKind::kUdpSource:
      c.state = ConnState::kUdpSource;
      break;
    case FlowKind::kTransfer:
      c.state = ConnState::kTransfer;
      break;
    case FlowKind::kEcho:
      c.state = ConnState::kEcho;
      break;
  }
  std::string what = std::string(to_string(r.kind)) + " for " + std::to_string(duration_ms) +
                     " ms, dscp " + std::to_string(r.dscp) + (r.cc.empty() ? "" : ", cc " + r.cc);
  if (r.kind == FlowKind::kUdpSink || r.kind == FlowKind::kUdpSource) {
    what += ", " + std::to_string(r.rate_bps) + " bit/s of " + std::to_string(r.size) + " B";
  } else if (r.kind == FlowKind::kTransfer) {
    what += ", " + std::to_string(r.bytes) + " B";
  }
  // Transfers come many per second, one connection each: only the first from an address is
  // logged (ServerStats::transfers counts them all).
  if (r.kind != FlowKind::kTransfer) {
    log(c.peer, c.name + ": " + what);
  } else if (transfer_peers_.insert(c.peer.sin_addr.s_addr).second) {
    if (transfer_peers_.size() > 4096) {
      transfer_peers_.clear();  // bounded memory: an address may be logged once more
    }
    log(c.peer, c.name + ": " + what + " (further transfers from this address are not logged)");
  }
  if (r.kind == FlowKind::kTransfer) {
    ++stats_.transfers;
  }
  pump(c, now);
}

// The UDP socket of an echo, udp sink or udp source, on the address the client connected to:
// an echo and a sink answer / count only the client's address and registered port; a source
// is connected to that address and port (it sends nowhere else). False after a Reject.
bool Server::open_udp(Conn& c, Accept& a) {
  const Request& r = c.req;
  sockaddr_in local{};
  socklen_t len = sizeof local;
  ::getsockname(c.fd.get(), reinterpret_cast<sockaddr*>(&local), &len);
  local.sin_port = 0;
  Fd u(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  const int one = 1;
  if (!u.valid() || ::bind(u.get(), reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
    reject(c, std::string("cannot open the UDP socket: ") + std::strerror(errno));
    return false;
  }
  ::setsockopt(u.get(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
  if (r.kind == FlowKind::kUdpSink) {
    set_flood_receive_buffer(u.get());
  }
  set_dscp(u.get(), r.dscp);
  if (r.kind == FlowKind::kUdpSource) {
    sockaddr_in to = c.peer;
    to.sin_port = htons(r.udp_port);
    if (::connect(u.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
      reject(c, std::string("cannot connect the UDP socket: ") + std::strerror(errno));
      return false;
    }
  }
  len = sizeof local;
  ::getsockname(u.get(), reinterpret_cast<sockaddr*>(&local), &len);
  a.udp_port = ntohs(local.sin_port);
  if (r.kind != FlowKind::kUdpSource) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = (c.id << 1) | 1;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, u.get(), &ev);
  }
  c.udp = std::move(u);
  c.echo_port = r.udp_port;
  return true;
}

// The udp sources' due datagrams (datagram k at k x size x 8 / rate after the request), in
// time order across sources — a voice stream's packet goes out between the flood's datagrams
// of its time, not before or after a whole late burst — at most kFloodBurst per source per
// wake-up. A datagram the local stack refuses (ENOBUFS, EAGAIN) is lost, as iperf -u's.
void Server::send_floods(int64_t now) {
  std::vector<Conn*> due;
  for (auto& [id, cp] : conns_) {
    if (cp->fd.valid() && cp->state == ConnState::kUdpSource && cp->next_flood_ns <= now) {
      due.push_back(cp.get());
    }
  }
  uint8_t data[kMaxProbeSize] = {};
  for (size_t k = 0; k < kFloodBurst * due.size(); ++k) {
    Conn* next = nullptr;
    for (Conn* c : due) {
      if (c->next_flood_ns <= now && c->next_flood_ns < c->end_ns &&
          (next == nullptr || c->next_flood_ns < next->next_flood_ns)) {
        next = c;
      }
    }
    if (next == nullptr) {
      break;
    }
    Conn& c = *next;
    FloodPacket p;
    p.seq = static_cast<uint32_t>(c.flood_count);
    p.send_ns = mono_ns();
    encode_flood(p, std::span<uint8_t>(data, c.req.size));
    [[maybe_unused]] const ssize_t w = ::send(c.udp.get(), data, c.req.size, 0);
    ++c.flood_count;
    ++stats_.flood_out;
    const double ns_per_datagram =
        static_cast<double>(c.req.size) * 8e9 / static_cast<double>(c.req.rate_bps);
    c.next_flood_ns =
        c.started_ns + static_cast<int64_t>(static_cast<double>(c.flood_count) * ns_per_datagram);
  }
}

// A udp source past its end: End with the number of datagrams sent.
void Server::end_flood(Conn& c, int64_t now) {
  if (c.state != ConnState::kUdpSource || now < c.end_ns) {
    return;
  }
  Stats s;
  s.elapsed_us = static_cast<uint64_t>((now - c.started_ns) / 1000);
  s.bytes = c.flood_count;
  encode(End{s}, c.out);
  c.end_queued = true;
  c.state = ConnState::kDraining;
  c.next_flood_ns = INT64_MAX;
  pump(c, now);
}

// A udp sink's pending arrivals into Arrivals frames while the output queue has room; once
// the client has shut its side down and every arrival is out, End (bytes = datagrams counted).
void Server::queue_arrivals(Conn& c) {
  while (!c.arrivals.empty() && c.out.size() + arrivals_frame(kMaxArrivals) <= kMaxOutQueue) {
    const size_t n = std::min(c.arrivals.size(), kMaxArrivals);
    Arrivals m;
    m.arrivals.assign(c.arrivals.begin(), c.arrivals.begin() + static_cast<std::ptrdiff_t>(n));
    encode(m, c.out);
    c.arrivals.erase(c.arrivals.begin(), c.arrivals.begin() + static_cast<std::ptrdiff_t>(n));
  }
  if (c.end_queued && c.arrivals.empty() && c.state == ConnState::kUdpSink) {
    Stats s;
    s.bytes = c.flood_count;
    encode(End{s}, c.out);
    c.state = ConnState::kDraining;
  }
}

// Writes what is due: pending control bytes, then (sources) Stats at interval boundaries,
// Data frames until the end, and End.
void Server::pump(Conn& c, int64_t now) {
  uint64_t burst = 0;  // payload written in this call, at most kMaxBytesPerWakeup
  for (;;) {
    if (c.out_off < c.out.size()) {
      // A Data frame's header goes out with the payload that follows it (MSG_MORE), not as a
      // segment of its own: a transfer's socket has Nagle off.
      const int more = c.data_left > 0 ? MSG_MORE : 0;
      const ssize_t w = ::send(c.fd.get(), c.out.data() + c.out_off, c.out.size() - c.out_off,
                               MSG_NOSIGNAL | more);
      if (w < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          return;
        }
        close(c, std::string("send: ") + std::strerror(errno));
        return;
      }
      stats_.bytes_out += static_cast<uint64_t>(w);
      c.out_off += static_cast<size_t>(w);
      if (c.out_off < c.out.size()) {
        return;
      }
      c.out.clear();
      c.out_off = 0;
      if (c.state == ConnState::kDraining && c.end_queued) {
        if (c.req.kind == FlowKind::kSink || c.req.kind == FlowKind::kUdpSink) {
          close(c, "");
        } else if (!c.shut) {
          ::shutdown(c.fd.get(), SHUT_WR);  // the client reads to EOF, then closes
          c.shut = true;
        }
        return;
      }
    }
    if (c.state == ConnState::kUdpSink) {
      queue_arrivals(c);
      if (c.out_off < c.out.size()) {
        continue;
      }
      return;
    }
    if (!writes_data(c.state)) {
      return;
    }
    if (c.data_left == 0) {
      const bool done = c.state == ConnState::kTransfer ? c.payload >= c.req.bytes : false;
      if (now >= c.end_ns || done) {
        const TcpSample t = tcp_sample(c.fd.get());
        Stats s{static_cast<uint64_t>((now - c.started_ns) / 1000),
                c.bytes,
                t.bytes_acked,
                t.retransmits,
                t.cwnd_bytes,
                t.rtt_us};
        encode(End{s}, c.out);
        c.end_queued = true;
        c.state = ConnState::kDraining;
        continue;
      }
      if (now >= c.next_stats_ns) {
        const TcpSample t = tcp_sample(c.fd.get());
        Stats s{static_cast<uint64_t>((now - c.started_ns) / 1000),
                c.bytes,
                t.bytes_acked,
                t.retransmits,
                t.cwnd_bytes,
                t.rtt_us};
        encode(s, c.out);
        c.next_stats_ns += int64_t{c.req.stats_interval_ms} * 1'000'000;
        if (c.next_stats_ns <= now) {
          c.next_stats_ns = now + int64_t{c.req.stats_interval_ms} * 1'000'000;
        }
        continue;
      }
      // A transfer's frames add up to its size exactly; a source's are all kSourceFrame.
      const size_t frame =
          c.state == ConnState::kTransfer
              ? static_cast<size_t>(std::min<uint64_t>(kSourceFrame, c.req.bytes - c.payload))
              : kSourceFrame;
      encode_data_header(frame, c.out);
      c.bytes += kFrameHeader;
      c.data_left = frame;
      continue;
    }
    const ssize_t w =
        ::send(c.fd.get(), buffer_.data(), std::min(c.data_left, buffer_.size()), MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return;
      }
      close(c, std::string("send: ") + std::strerror(errno));
      return;
    }
    stats_.bytes_out += static_cast<uint64_t>(w);
    c.bytes += static_cast<uint64_t>(w);
    c.payload += static_cast<uint64_t>(w);
    c.data_left -= static_cast<size_t>(w);
    burst += static_cast<uint64_t>(w);
    note_burst(burst);
    if (burst >= kMaxBytesPerWakeup) {
      return;  // still writable: EPOLLOUT (or the timers) call again at once
    }
  }
}

void Server::on_udp(Conn& c, int64_t now) {
  if (c.state == ConnState::kUdpSink) {
    on_flood_datagrams(c);
    pump(c, now);
    if (c.fd.valid()) {
      update_events(c);
    }
    return;
  }
  if (c.state != ConnState::kEcho) {
    // A sink whose client has shut down (draining) reads and drops what still arrives.
    uint8_t drop[16];
    while (::recv(c.udp.get(), drop, sizeof drop, 0) >= 0) {
    }
    return;
  }
  uint8_t data[kMaxProbeSize + 1];
  for (int k = 0; k < 64; ++k) {
    const std::optional<Datagram> dg = recv_datagram(c.udp.get(), data);
    if (!dg) {
      return;
    }
    const sockaddr_in& from = dg->from;
    const int64_t recv_ns = dg->recv_ns;
    const std::span<uint8_t> dgram(data, dg->size);
    const uint16_t port = ntohs(from.sin_port);
    if (from.sin_addr.s_addr != c.peer.sin_addr.s_addr ||
        (c.echo_port != 0 && port != c.echo_port) || dg->truncated || !decode_probe(dgram)) {
      ++stats_.ignored;
      continue;
    }
    // A client that did not register its port (an older nicsim) registers with its first
    // valid probe; every later datagram must come from the same port.
    c.echo_port = port;
    stamp_probe(dgram, recv_ns, mono_ns());
    if (::sendto(c.udp.get(), data, dgram.size(), 0, reinterpret_cast<const sockaddr*>(&from),
                 sizeof from) >= 0) {
      ++stats_.echoed;
    }
  }
}

// A udp sink's datagrams: those from the client's address and registered port with a flood
// header are counted and kept for the next Arrivals frame (at most max_pending_arrivals).
void Server::on_flood_datagrams(Conn& c) {
  uint8_t data[kMaxProbeSize + 1];
  for (int k = 0; k < 256; ++k) {
    const std::optional<Datagram> dg = recv_datagram(c.udp.get(), data);
    if (!dg) {
      return;
    }
    const std::optional<FloodPacket> p = decode_flood(std::span<const uint8_t>(data, dg->size));
    if (dg->from.sin_addr.s_addr != c.peer.sin_addr.s_addr ||
        ntohs(dg->from.sin_port) != c.echo_port || dg->truncated || !p) {
      ++stats_.ignored;
      continue;
    }
    ++c.flood_count;
    ++stats_.flood_in;
    if (c.arrivals.size() < params_.max_pending_arrivals) {
      c.arrivals.push_back(Arrival{p->seq, dg->recv_ns});
    }
  }
}

void Server::timers(int64_t now) {
  resume_accepting(now);
  send_floods(now);
  for (auto& [id, cp] : conns_) {
    Conn& c = *cp;
    if (!c.fd.valid()) {
      continue;
    }
    if (now >= c.deadline_ns) {
      if (awaiting_request(c.state)) {
        reject(c, "no complete request within " +
                      std::to_string(params_.request_timeout.count_ns() / 1'000'000) + " ms");
        ++stats_.timeouts;
      } else if (c.state == ConnState::kEcho || c.state == ConnState::kUdpSink) {
        close(c, "");
      } else {
        close(c,
              "still open " + std::to_string(params_.grace.count_ns() / 1'000'000) +
                  " ms after the flow's end",
              true);
      }
      continue;
    }
    if (c.state == ConnState::kSink && now >= c.next_stats_ns && c.out.empty()) {
      Stats s;
      s.elapsed_us = static_cast<uint64_t>((now - c.started_ns) / 1000);
      s.bytes = c.bytes;
      encode(s, c.out);
      c.next_stats_ns = now + int64_t{c.req.stats_interval_ms} * 1'000'000;
      pump(c, now);
    } else if (c.state == ConnState::kSink && now >= c.next_stats_ns) {
      c.next_stats_ns = now + int64_t{c.req.stats_interval_ms} * 1'000'000;  // still queued
    }
    if (writes_data(c.state) && c.data_left == 0) {
      pump(c, now);
    }
    end_flood(c, now);
    if (c.fd.valid()) {
      if (c.out.size() > kMaxOutQueue) {
        close(c, "client does not read its control messages");
        continue;
      }
      update_events(c);
    }
  }
}

int64_t Server::next_deadline() const {
  int64_t d = std::min(accept_resume_ns_, log_limiter_.next_summary_ns());
  for (const auto& [id, c] : conns_) {
    if (!c->fd.valid()) {
      continue;
    }
    d = std::min(d, c->deadline_ns);
    if (c->state == ConnState::kSink) {
      d = std::min(d, c->next_stats_ns);
    }
    if (c->state == ConnState::kUdpSource) {
      d = std::min(d, std::min(c->next_flood_ns, c->end_ns));
    }
  }
  return d;
}

}  // namespace nicsim::live
