#include "nicsim/live/traffic.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>

#include "nicsim/live/auth.h"
#include "nicsim/live/live_clock.h"
#include "nicsim/live/probe.h"
#include "nicsim/live/protocol.h"
#include "nicsim/live/socket_util.h"
#include "nicsim/report/latency_recorder.h"
#include "nicsim/report/latency_under_load.h"

namespace nicsim::live {

using report::Direction;

namespace {

constexpr size_t kWriteChunk = 128 * 1024;  // iperf3's default TCP write size
uint16_t icmp_checksum(const uint8_t* p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) {
    sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  }
  if (n % 2 == 1) {
    sum += static_cast<uint32_t>(p[n - 1] << 8);
  }
  while (sum >> 16) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return static_cast<uint16_t>(~sum);
}

// ---- the engine ------------------------------------------------------------------------------

enum class FlowPhase { kPending, kConnecting, kRunning, kStopping, kDone };

// A connection's opening (protocol.h): without a secret the request goes out at once; with one
// it waits for the server's Challenge and goes out behind the Auth that answers it.
class Handshake {
 public:
  // Sets the request; returns the bytes to send now.
  std::vector<uint8_t> begin(const Request& r, const std::string& secret) {
    secret_ = secret;
    std::vector<uint8_t> bytes;
    encode(r, secret.empty() ? bytes : pending_);
    return bytes;
  }
  bool waiting() const { return !pending_.empty(); }
  // The bytes that answer `c` (Auth, then the request). Throws LiveError without a secret.
  std::vector<uint8_t> answer(const Challenge& c, const std::string& server) {
    if (secret_.empty()) {
      throw LiveError("server " + server +
                      " requires a shared secret: give it with --secret-file (docs/security.md)");
    }
    if (pending_.empty()) {
      throw LiveError("server " + server + ": a second challenge on one connection");
    }
    std::vector<uint8_t> bytes;
    encode(answer_challenge(secret_, c), bytes);
    bytes.insert(bytes.end(), pending_.begin(), pending_.end());
    pending_.clear();
    return bytes;
  }
  // A hint for a refusal: a client with a secret that a server without one never challenged.
  std::string hint() const {
    return waiting() ? " (this client has a shared secret; the server sent no challenge: was it "
                       "started with --secret-file?)"
                     : "";
  }

 private:
  std::string secret_;
  std::vector<uint8_t> pending_;  // the request, held until the challenge is answered
};

struct Flow {
  FlowPlan plan;
  Direction dir = Direction::kAtoB;
  int64_t stream_id = 0;
  bool upload = true;  // the client (host a) sends
  Fd fd;
  FlowPhase phase = FlowPhase::kPending;
  FrameReader reader{false};
  std::vector<uint8_t> request;
  size_t request_off = 0;
  size_t request_len = 0;
  Handshake handshake;
  bool accepted = false;
  uint64_t written = 0;          // upload: payload bytes written (after the request)
  uint64_t read = 0;             // download: bytes read
  std::optional<Stats> server;   // latest Stats (or End) from the server
  bool ended = false;            // End received
  TcpSample local;               // upload: latest TCP_INFO
  int64_t deadline = INT64_MAX;  // give up waiting for the server's End
  // Receiver bytes at the flow's stop time. Data still queued then (socket buffers, the
  // path) keeps arriving afterwards and is not goodput of [start, stop): iperf3 too counts
  // the receiver's bytes up to the end of the test.
  std::optional<uint64_t> at_stop;
  uint32_t events = 0;
};

struct Probe {
  ProbePlan plan;
  uint32_t index = 0;
  Fd fd;                 // UDP socket or ICMP socket
  Fd control;            // UDP: the TCP connection holding the server's reflector
  bool raw = false;      // ICMP: raw socket (IP header in front of replies)
  uint16_t echo_id = 0;  // ICMP identifier (raw sockets; ping sockets get theirs from the kernel)
  bool ready = false;    // UDP: the reflector's port is known
  FrameReader reader{false};
  std::vector<uint8_t> request;
  size_t request_off = 0;
  Handshake handshake;
  bool connecting = false;
  sockaddr_in target{};
  int64_t next_send = 0;
  int64_t stop = 0;
};

// A [[traffic.udp_flood]] or [[traffic.voip]]: datagrams on a UDP socket of their own, and a
// TCP connection to the server's udp sink (upload: this client sends) or udp source
// (download: the server sends). Every datagram's send time and arrival are kept and handed to
// the recorder at the end (record_flood), when the one-way delays can be put on one clock.
struct Flood {
  config::FloodPlan plan;
  size_t index = 0;
  bool upload = true;  // the client sends (from is the lower-indexed host of the pair)
  Fd udp;
  Fd control;
  FrameReader reader{false};
  std::vector<uint8_t> request;
  size_t request_off = 0;
  Handshake handshake;
  bool opened = false;      // the control connection was started
  bool connecting = false;  // its connect() is in progress
  bool ready = false;       // the server's UDP port is known
  bool shut = false;        // upload: the control's write side is shut (the flood is over)
  bool ended = false;       // End received (or the connection closed)
  uint64_t token = 0;
  double gap_ns = 0;  // one datagram every gap_ns (size x 8 / rate)
  int64_t start_ns = 0;
  int64_t stop_ns = 0;
  // upload: the schedule's next slot (k) and its time; each sent datagram's send time
  int64_t slot = 0;
  int64_t next_send = INT64_MAX;
  std::vector<int64_t> sent_ns;
  struct Arrived {
    uint32_t seq = 0;
    int64_t sent_ns = 0;  // download: the server's stamp (its clock)
    int64_t recv_ns = 0;  // the receiver's clock
  };
  std::vector<Arrived> arrived;
  std::optional<uint64_t> server_count;  // End: datagrams the server received / sent
};

// One request/response of [[traffic.transfers]]: a new TCP connection from the client to the
// server's nicsim server, which answers `size` bytes of Data frames and End.
struct Xfer {
  const config::TransferPlan* plan = nullptr;
  uint64_t id = 0;  // the recorder's
  Fd fd;
  FrameReader reader{true};
  std::vector<uint8_t> request;
  size_t request_off = 0;
  Handshake handshake;
  bool connecting = false;
  uint64_t payload = 0;  // Data payload announced so far
};

// What the recorder is told about a plan run here: a UDP probe's request always leaves the
// client in host a (the server only reflects), whatever the probe's configured direction, and
// its one-way delays are known only with a shared clock.
report::RunLayout live_layout(const TrafficPlan& plan, bool shared_clock) {
  report::RunLayout l = config::recorder_layout(plan, report::kDefaultInterval);
  for (report::ProbeSpec& p : l.probes) {
    if (!p.icmp) {
      p.dir = Direction::kAtoB;
      p.one_way = shared_clock;
    }
  }
  return l;
}

class Engine {
 public:
  Engine(const TrafficPlan& plan, report::RunInfo info, const ClientOptions& opt)
      : plan_(plan),
        opt_(opt),
        recorder_(std::move(info), live_layout(plan, opt.shared_clock)),
        interval_(recorder_.layout().interval) {
    epoll_ = Fd(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_.valid()) {
      throw_errno("epoll_create1");
    }
    int64_t same_dir[2] = {0, 0};
    for (const FlowPlan& fp : plan.flows) {
      auto f = std::make_unique<Flow>();
      f->plan = fp;
      f->upload = flow_sockets(fp).upload;
      f->dir = f->upload ? Direction::kAtoB : Direction::kBtoA;
      f->reader = FrameReader(!f->upload);
      f->stream_id = report::iperf3_stream_id(same_dir[static_cast<int>(f->dir)]++);
      flows_.push_back(std::move(f));
    }
    for (const ProbePlan& pp : plan.probes) {
      auto p = std::make_unique<Probe>();
      p->plan = pp;
      p->index = static_cast<uint32_t>(probes_.size());
      probes_.push_back(std::move(p));
    }
    token_seed_ = static_cast<uint64_t>(mono_ns()) ^ (static_cast<uint64_t>(::getpid()) << 32);
    write_buf_.assign(kWriteChunk, 0);
    for (size_t i = 0; i < plan.floods.size(); ++i) {
      auto f = std::make_unique<Flood>();
      f->plan = plan.floods[i];
      f->index = i;
      f->upload = f->plan.from < f->plan.to;
      f->token = token_seed_ * 0x9E3779B97F4A7C15ull + i;
      f->gap_ns = static_cast<double>(f->plan.size) * 8e9 /
                  static_cast<double>(f->plan.rate.bits_per_sec());
      floods_.push_back(std::move(f));
    }
    for (const config::TransferPlan& t : plan.transfers) {
      auto x = std::make_unique<Xfer>();
      x->plan = &t;
      xfers_.push_back(std::move(x));
    }
    // Arrival order across sets (the plan lists each set's in order, sets one after another).
    std::stable_sort(xfers_.begin(), xfers_.end(),
                     [](const std::unique_ptr<Xfer>& a, const std::unique_ptr<Xfer>& b) {
                       return a->plan->at < b->plan->at;
                     });
  }

  report::Run run() {
    t0_ = mono_ns();
    end_ = t0_ + plan_.duration.count_ns();
    if (opt_.stop_fd >= 0) {
      add(opt_.stop_fd, EPOLLIN, kStopToken);
    }
    for (auto& p : probes_) {
      p->next_send = t0_ + p->plan.start.count_ns();
      p->stop = t0_ + p->plan.stop.count_ns();
      if (!p->plan.icmp) {
        open_echo(*p);
      } else {
        open_icmp(*p);
      }
    }
    for (auto& f : floods_) {
      f->start_ns = t0_ + f->plan.start.count_ns();
      f->stop_ns = t0_ + f->plan.stop.count_ns();
    }
    if (!opt_.shared_clock && !floods_.empty()) {
      log("udp_flood / voip: the two hosts' clocks are not shared, so one-way delays are "
          "reported relative to the smallest one measured (loss and IPDV are exact)");
    }
    bool stopped = false;
    while (!stopped) {
      int64_t now = mono_ns();
      start_flows(now);
      open_floods(now);
      start_transfers(now);
      send_probes(now);
      send_floods(now);
      stop_flows(now);  // first: a flow stopping now is counted up to its stop in this row
      while (recorder_.last_boundary() < rel(end_) && now >= abs(recorder_.next_boundary())) {
        recorder_.close_interval(recorder_.next_boundary(), flow_counters());
      }
      if (now >= end_) {
        end_floods();
        close_transfers();
        if ((all_flows_done() && all_floods_done()) || now >= end_ + opt_.grace.count_ns()) {
          break;
        }
      }
      stopped = wait(next_deadline(now));
    }
    if (stopped) {
      // Stopped early (a signal): the run ends now, and every total is over what ran.
      const int64_t now = mono_ns();
      if (now < end_) {
        end_ = std::max(now, abs(recorder_.last_boundary()));
        for (auto& f : flows_) {
          if (!f->at_stop && f->phase != FlowPhase::kPending) {
            f->at_stop = received(*f);
          }
        }
      }
    }
    return finish();
  }

 private:
  static constexpr uint64_t kStopToken = 1;

  void add(int fd, uint32_t events, uint64_t token) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = token;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      throw_errno("epoll_ctl");
    }
  }
  void mod(int fd, uint32_t events, uint64_t token) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = token;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev);
  }
  void log(const std::string& line) {
    if (opt_.log) {
      opt_.log(line);
    }
  }

  // The server end of the pair {x, y}: the higher-indexed host's server (host 1's in the
  // two-host form, opt_.server).
  sockaddr_in server_of(size_t x, size_t y) const {
    if (opt_.hosts.empty()) {
      return opt_.server;
    }
    const ClientOptions::HostEndpoint& h = opt_.hosts.at(std::max(x, y));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr = h.addr;
    a.sin_port = htons(h.server_port);
    return a;
  }
  // Calls make() in host `host`'s namespace (this thread's when there is no host list) and
  // returns what it made: sockets stay in the namespace they were created in.
  template <class F>
  auto in_host(size_t host, F&& make) {
    if (opt_.hosts.empty()) {
      return make();
    }
    Fd own(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!own.valid()) {
      throw_errno("open /proc/thread-self/ns/net");
    }
    enter_netns(opt_.hosts.at(host).netns_fd);
    auto made = make();
    const int saved = errno;
    enter_netns(own.get());
    errno = saved;
    return made;
  }

  // A TCP connection from the lower-indexed host of {x, y} to the other's server.
  Fd connect_tcp(uint8_t dscp, const std::string& cc, size_t x, size_t y) {
    const sockaddr_in server = server_of(x, y);
    Fd fd = in_host(std::min(x, y), [] {
      return Fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    });
    if (!fd.valid()) {
      throw_errno("socket");
    }
    set_dscp(fd.get(), dscp);
    if (!cc.empty()) {
      if (std::string err = set_congestion_control(fd.get(), cc); !err.empty()) {
        throw LiveError("congestion control '" + cc + "': " + err);
      }
    }
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&server), sizeof server) != 0 &&
        errno != EINPROGRESS) {
      throw_errno("connect " + to_string(server));
    }
    return fd;
  }

  // ---- flows ----

  uint64_t flow_token(size_t i) const { return 10 + i; }

  void start_flows(int64_t now) {
    for (size_t i = 0; i < flows_.size(); ++i) {
      Flow& f = *flows_[i];
      if (f.phase != FlowPhase::kPending || now < t0_ + f.plan.start.count_ns()) {
        continue;
      }
      if (f.plan.stop <= f.plan.start) {
        f.phase = FlowPhase::kDone;
        continue;
      }
      const FlowSockets sockets = flow_sockets(f.plan);
      f.fd = connect_tcp(f.plan.dscp, sockets.client_cc, f.plan.from, f.plan.to);
      Request r;
      r.kind = f.upload ? FlowKind::kSink : FlowKind::kSource;
      r.dscp = f.plan.dscp;
      r.duration_ms = static_cast<uint32_t>((f.plan.stop - f.plan.start).count_ns() / 1'000'000);
      r.duration_ms = std::max<uint32_t>(r.duration_ms, 1);
      r.stats_interval_ms =
          static_cast<uint32_t>(std::max<int64_t>(interval_.count_ns() / 1'000'000, 10));
      r.cc = sockets.server_cc;
      f.request = f.handshake.begin(r, opt_.secret);
      f.request_len = f.request.size();
      f.phase = FlowPhase::kConnecting;
      f.events = EPOLLIN | EPOLLOUT;
      add(f.fd.get(), f.events, flow_token(i));
    }
  }

  void stop_flows(int64_t now) {
    for (auto& fp : flows_) {
      Flow& f = *fp;
      if (!f.at_stop && f.phase != FlowPhase::kPending && now >= t0_ + f.plan.stop.count_ns()) {
        f.at_stop = received(f);
      }
      if (f.upload && (f.phase == FlowPhase::kRunning || f.phase == FlowPhase::kConnecting) &&
          now >= t0_ + f.plan.stop.count_ns()) {
        f.local = tcp_sample(f.fd.get());
        ::shutdown(f.fd.get(), SHUT_WR);
        f.phase = FlowPhase::kStopping;
        f.deadline = now + opt_.grace.count_ns();
        f.events = EPOLLIN;
        mod(f.fd.get(), f.events, flow_token(index_of(f)));
      }
      if (!f.upload && f.phase != FlowPhase::kDone && f.phase != FlowPhase::kPending &&
          f.deadline == INT64_MAX) {
        f.deadline = t0_ + f.plan.stop.count_ns() + opt_.grace.count_ns();
      }
      if (f.phase != FlowPhase::kDone && now >= f.deadline) {
        log("flow " + std::to_string(f.stream_id) + ": no final report from the server within " +
            std::to_string(opt_.grace.count_ns() / 1'000'000) + " ms");
        finish_flow(f);
      }
    }
  }

  size_t index_of(const Flow& f) const {
    for (size_t i = 0; i < flows_.size(); ++i) {
      if (flows_[i].get() == &f) {
        return i;
      }
    }
    return 0;
  }

  void finish_flow(Flow& f) {
    if (f.upload && f.fd.valid() && f.phase != FlowPhase::kStopping) {
      f.local = tcp_sample(f.fd.get());
    }
    f.fd.reset();
    f.phase = FlowPhase::kDone;
  }

  bool all_flows_done() const {
    return std::all_of(flows_.begin(), flows_.end(), [](const std::unique_ptr<Flow>& f) {
      return f->phase == FlowPhase::kDone || f->phase == FlowPhase::kPending;
    });
  }

  void on_flow(Flow& f, uint32_t events) {
    if (f.phase == FlowPhase::kDone) {
      return;
    }
    if (f.phase == FlowPhase::kConnecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
      if (const std::string err = connect_error(f.fd.get()); !err.empty()) {
        throw LiveError("connect " + to_string(opt_.server) + ": " + err);
      }
      f.phase = FlowPhase::kRunning;
      if (!f.upload) {
        f.events = EPOLLIN | (f.request_off < f.request.size() ? EPOLLOUT : 0u);
        mod(f.fd.get(), f.events, flow_token(index_of(f)));
      }
    }
    if ((events & EPOLLOUT) != 0 && f.phase == FlowPhase::kRunning) {
      write_flow(f);
    }
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) != 0 && f.fd.valid()) {
      read_flow(f);
    }
  }

  void write_flow(Flow& f) {
    if (f.handshake.waiting()) {  // nothing may be written before the challenge is answered
      if (f.events & EPOLLOUT) {
        f.events = EPOLLIN;
        mod(f.fd.get(), f.events, flow_token(index_of(f)));
      }
      return;
    }
    while (f.request_off < f.request.size()) {
      const ssize_t w = ::send(f.fd.get(), f.request.data() + f.request_off,
                               f.request.size() - f.request_off, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN) return;
        throw_errno("send request");
      }
      f.request_off += static_cast<size_t>(w);
    }
    if (!f.upload) {
      if (f.events & EPOLLOUT) {
        f.events = EPOLLIN;
        mod(f.fd.get(), f.events, flow_token(index_of(f)));
      }
      return;
    }
    // At most kMaxBytesPerWakeup per wake-up: the socket stays writable and the loop comes
    // back at once, after the probes, the other flows and the stop times had their turn.
    for (uint64_t burst = 0; burst < kMaxBytesPerWakeup;) {
      const ssize_t w = ::send(f.fd.get(), write_buf_.data(), write_buf_.size(), MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN) return;
        if (errno == EPIPE || errno == ECONNRESET) {
          log("flow " + std::to_string(f.stream_id) + ": the server closed the connection");
          finish_flow(f);
          return;
        }
        throw_errno("send");
      }
      f.written += static_cast<uint64_t>(w);
      burst += static_cast<uint64_t>(w);
    }
  }

  void read_flow(Flow& f) {
    for (uint64_t burst = 0; burst < kMaxBytesPerWakeup;) {  // the rest on the next wake-up
      const ssize_t n = ::recv(f.fd.get(), read_buf_, sizeof read_buf_, 0);
      if (n > 0) {
        burst += static_cast<uint64_t>(n);
        if (!f.upload) {
          f.read += static_cast<uint64_t>(n);
        }
        size_t off = 0;
        while (off < static_cast<size_t>(n)) {
          off += f.reader.feed(
              std::span<const uint8_t>(read_buf_ + off, static_cast<size_t>(n) - off));
          if (f.reader.failed()) {
            throw LiveError("server " + to_string(opt_.server) + ": " + f.reader.error());
          }
          while (std::optional<Message> m = f.reader.next()) {
            on_message(f, *m);
            if (f.phase == FlowPhase::kDone) {
              return;
            }
          }
        }
        continue;
      }
      if (n == 0) {
        finish_flow(f);
        return;
      }
      if (errno == EAGAIN) {
        return;
      }
      if (errno == ECONNRESET) {
        finish_flow(f);
        return;
      }
      throw_errno("recv");
    }
  }

  void on_message(Flow& f, const Message& m) {
    if (const auto* rej = std::get_if<Reject>(&m)) {
      throw LiveError("server " + to_string(opt_.server) + " refused flow " +
                      std::to_string(f.stream_id) + ": " + rej->reason + f.handshake.hint());
    }
    // A download's receiver bytes are the Data frames (headers included), as the server
    // counts what it writes: the control frames read in between are taken back out.
    const uint64_t control = std::holds_alternative<Accept>(m)      ? kAcceptFrame
                             : std::holds_alternative<Data>(m)      ? 0
                             : std::holds_alternative<Challenge>(m) ? kChallengeFrame
                                                                    : kStatsFrame;
    if (!f.upload) {
      f.read -= std::min<uint64_t>(f.read, control);
    }
    if (const auto* ch = std::get_if<Challenge>(&m)) {
      f.request = f.handshake.answer(*ch, to_string(opt_.server));
      f.request_off = 0;
      f.request_len = f.request.size();
      f.events = EPOLLIN | EPOLLOUT;
      mod(f.fd.get(), f.events, flow_token(index_of(f)));
    } else if (std::holds_alternative<Accept>(m)) {
      f.accepted = true;
    } else if (const auto* s = std::get_if<Stats>(&m)) {
      f.server = *s;
    } else if (const auto* e = std::get_if<End>(&m)) {
      f.server = e->stats;
      f.ended = true;
      if (f.upload) {
        finish_flow(f);
      }
    }
  }

  // Receiver bytes so far: an upload's acknowledged payload, a download's bytes read.
  uint64_t received(Flow& f) {
    if (f.at_stop) {
      return *f.at_stop;
    }
    if (!f.upload) {
      return f.read;
    }
    if (f.fd.valid() && f.phase != FlowPhase::kStopping) {
      f.local = tcp_sample(f.fd.get());
    }
    return f.local.bytes_acked > f.request_len ? f.local.bytes_acked - f.request_len : 0;
  }

  // ---- probes ----

  uint64_t probe_token(size_t i) const { return 100000 + 2 * i; }

  void open_echo(Probe& p) {
    p.control = connect_tcp(p.plan.dscp, "", p.plan.from, p.plan.to);
    open_udp_socket(p);
    Request r;
    r.udp_port = local_port(p.fd.get());
    r.kind = FlowKind::kEcho;
    r.dscp = p.plan.dscp;
    r.duration_ms = static_cast<uint32_t>(std::max<int64_t>(
        (p.plan.stop - p.plan.start + report::kLossHorizon).count_ns() / 1'000'000 +
            p.plan.start.count_ns() / 1'000'000,
        1));
    p.request = p.handshake.begin(r, opt_.secret);
    p.connecting = true;
    add(p.control.get(), EPOLLIN | EPOLLOUT, probe_token(p.index) + 1);
  }

  // Writes what the socket takes of bytes[off..): a connection's opening frames (a few dozen
  // bytes: a fresh socket takes them). Throws LiveError on a failure other than EAGAIN.
  static void send_pending(int fd, const std::vector<uint8_t>& bytes, size_t& off,
                           const char* what) {
    while (off < bytes.size()) {
      const ssize_t w = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN) return;
        throw_errno(what);
      }
      off += static_cast<size_t>(w);
    }
  }

  // Reads a control connection's frames into on(message) until it would block. Returns false
  // when the peer closed it (or it failed); throws LiveError on a malformed frame.
  template <class OnMessage>
  bool read_frames(int fd, FrameReader& reader, const std::string& server, OnMessage&& on) {
    for (;;) {
      const ssize_t n = ::recv(fd, read_buf_, sizeof read_buf_, 0);
      if (n <= 0) {
        return n < 0 && errno == EAGAIN;
      }
      size_t off = 0;
      while (off < static_cast<size_t>(n)) {
        off += reader.feed(std::span<const uint8_t>(read_buf_ + off, static_cast<size_t>(n) - off));
        if (reader.failed()) {
          throw LiveError("server " + server + ": " + reader.error());
        }
        while (std::optional<Message> m = reader.next()) {
          if (!on(*m)) {
            return true;  // the handler is done with this connection
          }
        }
      }
    }
  }

  // Sends what is left of the echo request (a few dozen bytes: a fresh socket takes them).
  void send_echo_request(Probe& p) {
    send_pending(p.control.get(), p.request, p.request_off, "send echo request");
  }

  void on_echo_control(Probe& p, uint32_t events) {
    if (!p.control.valid()) {
      return;
    }
    if (p.connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
      if (const std::string err = connect_error(p.control.get()); !err.empty()) {
        throw LiveError("connect " + to_string(opt_.server) + ": " + err);
      }
      send_echo_request(p);
      if (p.request_off < p.request.size()) {
        return;
      }
      p.connecting = false;
      mod(p.control.get(), EPOLLIN, probe_token(p.index) + 1);
    }
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) == 0) {
      return;
    }
    const std::string server = to_string(opt_.server);
    const bool open = read_frames(p.control.get(), p.reader, server, [&](const Message& m) {
      if (const auto* rej = std::get_if<Reject>(&m)) {
        throw LiveError("server " + server + " refused probe " + p.plan.name + ": " + rej->reason +
                        p.handshake.hint());
      }
      if (const auto* ch = std::get_if<Challenge>(&m)) {
        p.request = p.handshake.answer(*ch, server);
        p.request_off = 0;
        send_echo_request(p);
      }
      if (const auto* acc = std::get_if<Accept>(&m); acc != nullptr && !p.ready) {
        open_udp(p, acc->udp_port);
      }
      return true;
    });
    if (!open) {
      p.control.reset();  // the reflector is gone; later probes count as lost
    }
  }

  // The probe's UDP socket, bound to a port of its own before the request names it (the
  // server's reflector answers that port only).
  void open_udp_socket(Probe& p) {
    p.fd = in_host(std::min(p.plan.from, p.plan.to), [] {
      return Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    });
    if (!p.fd.valid()) {
      throw_errno("socket udp");
    }
    const int one = 1;
    ::setsockopt(p.fd.get(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    set_dscp(p.fd.get(), p.plan.dscp);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    if (::bind(p.fd.get(), reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0) {
      throw_errno("bind udp");
    }
  }

  static uint16_t local_port(int fd) {
    sockaddr_in local{};
    socklen_t len = sizeof local;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
    return ntohs(local.sin_port);
  }

  void open_udp(Probe& p, uint16_t port) {
    sockaddr_in to = server_of(p.plan.from, p.plan.to);
    to.sin_port = htons(port);
    if (::connect(p.fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
      throw_errno("connect udp " + to_string(to));
    }
    add(p.fd.get(), EPOLLIN, probe_token(p.index));
    p.ready = true;
  }

  void open_icmp(Probe& p) {
    if (!opt_.hosts.empty()) {
      // A network: from the probe's sender to its receiver, whichever hosts they are.
      p.fd = in_host(p.plan.from, [&p] { return icmp_socket(p); });
      p.target = sockaddr_in{};
      p.target.sin_family = AF_INET;
      p.target.sin_addr = opt_.hosts.at(p.plan.to).addr;
      finish_icmp(p);
      return;
    }
    const bool from_peer = p.plan.from == 1;
    if (from_peer && opt_.peer_netns_fd < 0) {
      throw LiveError("probe " + p.plan.name +
                      ": ICMP from the second host needs both hosts on this machine (emulation)");
    }
    Fd own;
    if (from_peer) {
      own = Fd(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
      if (!own.valid()) {
        throw_errno("open /proc/thread-self/ns/net");
      }
      enter_netns(opt_.peer_netns_fd);
    }
    p.fd = icmp_socket(p);
    const int saved = errno;
    if (from_peer) {
      enter_netns(own.get());
    }
    errno = saved;
    p.target = sockaddr_in{};
    p.target.sin_family = AF_INET;
    p.target.sin_addr = from_peer ? opt_.local_addr : opt_.server.sin_addr;
    finish_icmp(p);
  }

  // A raw ICMP socket, or (unprivileged) a ping socket; sets p.raw. Invalid on failure (errno).
  static Fd icmp_socket(Probe& p) {
    p.raw = true;
    Fd fd(::socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP));
    if (!fd.valid()) {
      p.raw = false;  // unprivileged: a ping socket (net.ipv4.ping_group_range)
      fd = Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP));
    }
    return fd;
  }

  void finish_icmp(Probe& p) {
    if (!p.fd.valid()) {
      throw_errno("ICMP socket (needs CAP_NET_RAW or net.ipv4.ping_group_range)");
    }
    const int one = 1;
    ::setsockopt(p.fd.get(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    set_dscp(p.fd.get(), p.plan.dscp);
    p.echo_id = static_cast<uint16_t>((token_seed_ >> 16) + p.index * 7919);
    add(p.fd.get(), EPOLLIN, probe_token(p.index));
    p.ready = true;
  }

  void send_probes(int64_t now) {
    for (auto& pp : probes_) {
      Probe& p = *pp;
      while (now >= p.next_send && p.next_send < p.stop) {
        const int64_t send_ns = mono_ns();
        if (!p.ready || !p.fd.valid()) {
          break;  // the reflector is not set up yet: start the schedule once it is
        }
        send_one(p, recorder_.probe_samples(p.index), send_ns);
        recorder_.probe_sent(p.index, rel(send_ns));  // unanswered (lost) until a reply arrives
        p.next_send += p.plan.interval.count_ns();
        if (p.next_send <= now) {
          // Behind schedule (a stalled thread): skip the missed slots, as an isochronous
          // sender would, rather than bursting.
          const int64_t k = (now - p.next_send) / p.plan.interval.count_ns() + 1;
          p.next_send += k * p.plan.interval.count_ns();
        }
      }
    }
  }

  void send_one(Probe& p, uint64_t seq, int64_t send_ns) {
    uint8_t pkt[kMaxProbeSize] = {};
    if (p.plan.icmp) {
      const size_t payload = static_cast<size_t>(std::clamp<int64_t>(p.plan.size, 0, 1400));
      const size_t n = 8 + payload;
      pkt[0] = ICMP_ECHO;
      pkt[4] = static_cast<uint8_t>(p.echo_id >> 8);
      pkt[5] = static_cast<uint8_t>(p.echo_id);
      pkt[6] = static_cast<uint8_t>(seq >> 8);
      pkt[7] = static_cast<uint8_t>(seq);
      const uint16_t ck = icmp_checksum(pkt, n);
      pkt[2] = static_cast<uint8_t>(ck >> 8);
      pkt[3] = static_cast<uint8_t>(ck);
      ::sendto(p.fd.get(), pkt, n, 0, reinterpret_cast<const sockaddr*>(&p.target),
               sizeof p.target);
      return;
    }
    const size_t n = static_cast<size_t>(
        std::clamp<int64_t>(p.plan.size, int64_t{kProbeHeader}, int64_t{kMaxProbeSize}));
    ProbePacket h;
    h.probe = p.index;
    h.seq = seq;
    h.client_send_ns = send_ns;
    h.token = token_seed_;
    encode_probe(h, std::span<uint8_t>(pkt, n));
    ::send(p.fd.get(), pkt, n, 0);
  }

  void on_probe(Probe& p) {
    uint8_t buf[2048];
    for (;;) {
      const std::optional<Datagram> dg = recv_datagram(p.fd.get(), buf);
      if (!dg) {
        return;
      }
      const sockaddr_in& from = dg->from;
      const int64_t rx = dg->recv_ns;
      const auto n = static_cast<ssize_t>(dg->size);
      if (p.plan.icmp) {
        on_icmp_reply(p, std::span<const uint8_t>(buf, static_cast<size_t>(n)), from, rx);
        continue;
      }
      const std::optional<ProbePacket> h =
          decode_probe(std::span<const uint8_t>(buf, static_cast<size_t>(n)));
      if (!h || h->token != token_seed_ || h->probe != p.index ||
          h->seq >= recorder_.probe_samples(p.index)) {
        continue;
      }
      const int64_t sent = abs(recorder_.probe_sent_at(p.index, h->seq));
      if (recorder_.probe_is_answered(p.index, h->seq) || sent != h->client_send_ns) {
        continue;  // duplicate or forged
      }
      const int64_t held = std::max<int64_t>(0, h->server_send_ns - h->server_recv_ns);
      std::optional<Duration> back;
      if (opt_.shared_clock) {
        recorder_.probe_forward(p.index, h->seq, Duration::ns(h->server_recv_ns - sent));
        back = Duration::ns(rx - h->server_send_ns);
      }
      recorder_.probe_answered(p.index, h->seq, Duration::ns(rx - sent - held), back);
    }
  }

  void on_icmp_reply(Probe& p, std::span<const uint8_t> d, const sockaddr_in& from, int64_t rx) {
    if (p.raw) {
      if (d.size() < 20) return;
      const size_t ihl = static_cast<size_t>(d[0] & 0x0f) * 4;
      if (ihl < 20 || d.size() < ihl + 8) return;
      d = d.subspan(ihl);
      if (from.sin_addr.s_addr != p.target.sin_addr.s_addr) return;
    }
    if (d.size() < 8 || d[0] != ICMP_ECHOREPLY) return;
    const uint16_t id = static_cast<uint16_t>(d[4] << 8 | d[5]);
    if (p.raw && id != p.echo_id) return;
    const uint16_t seq16 = static_cast<uint16_t>(d[6] << 8 | d[7]);
    // The 16-bit sequence wraps: match the most recent probe with these low bits.
    const uint64_t samples = recorder_.probe_samples(p.index);
    if (samples == 0) return;
    uint64_t seq = (samples - 1) & ~uint64_t{0xffff};
    seq |= seq16;
    if (seq >= samples) {
      if (seq < 0x10000) return;
      seq -= 0x10000;
    }
    if (recorder_.probe_is_answered(p.index, seq)) return;
    recorder_.probe_answered(p.index, seq,
                             Duration::ns(rx - abs(recorder_.probe_sent_at(p.index, seq))));
  }

  // ---- floods (udp_flood, voip) ----

  static constexpr uint64_t kFloodToken = 1'000'000'000;  // + 2 i: UDP, + 2 i + 1: control
  static constexpr uint64_t kXferToken = 2'000'000'000;   // + i (arrival order)

  // An upload's control connection opens at the run's start (its sink must be ready at the
  // flood's start); a download's at the flood's start (the server starts sending on request).
  void open_floods(int64_t now) {
    for (auto& fp : floods_) {
      Flood& f = *fp;
      if (f.opened || now < (f.upload ? t0_ : f.start_ns) || f.stop_ns <= f.start_ns) {
        continue;
      }
      f.opened = true;
      f.control = connect_tcp(f.plan.dscp, "", f.plan.from, f.plan.to);
      f.udp = in_host(std::min(f.plan.from, f.plan.to), [] {
        return Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      });
      if (!f.udp.valid()) {
        throw_errno("socket udp");
      }
      const int one = 1;
      ::setsockopt(f.udp.get(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
      if (!f.upload) {
        set_flood_receive_buffer(f.udp.get());
      }
      set_dscp(f.udp.get(), f.plan.dscp);
      sockaddr_in any{};
      any.sin_family = AF_INET;
      if (::bind(f.udp.get(), reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0) {
        throw_errno("bind udp");
      }
      Request r;
      r.kind = f.upload ? FlowKind::kUdpSink : FlowKind::kUdpSource;
      r.dscp = f.plan.dscp;
      const Duration lasts =
          f.upload ? f.plan.stop + report::kLossHorizon : f.plan.stop - f.plan.start;
      r.duration_ms = static_cast<uint32_t>(std::max<int64_t>(lasts.count_ns() / 1'000'000, 1));
      r.udp_port = local_port(f.udp.get());
      r.rate_bps = f.plan.rate.bits_per_sec();
      r.size = static_cast<uint32_t>(f.plan.size);
      f.request = f.handshake.begin(r, opt_.secret);
      f.connecting = true;
      add(f.control.get(), EPOLLIN | EPOLLOUT, kFloodToken + 2 * f.index + 1);
    }
  }

  void send_flood_request(Flood& f) {
    send_pending(f.control.get(), f.request, f.request_off, "send flood request");
  }

  void on_flood_control(Flood& f, uint32_t events) {
    if (!f.control.valid()) {
      return;
    }
    const std::string server = to_string(server_of(f.plan.from, f.plan.to));
    if (f.connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
      if (const std::string err = connect_error(f.control.get()); !err.empty()) {
        throw LiveError("connect " + server + ": " + err);
      }
      send_flood_request(f);
      if (f.request_off < f.request.size()) {
        return;
      }
      f.connecting = false;
      mod(f.control.get(), EPOLLIN, kFloodToken + 2 * f.index + 1);
    }
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) == 0) {
      return;
    }
    const bool open = read_frames(f.control.get(), f.reader, server, [&](const Message& m) {
      on_flood_message(f, m, server);
      return true;
    });
    if (!open) {
      f.control.reset();  // the server is done (or gone): later arrivals are not reported
      f.ended = true;
    }
  }

  void on_flood_message(Flood& f, const Message& m, const std::string& server) {
    if (const auto* rej = std::get_if<Reject>(&m)) {
      throw LiveError("server " + server + " refused " + f.plan.name + ": " + rej->reason +
                      older_server_hint(rej->reason) + f.handshake.hint());
    }
    if (const auto* ch = std::get_if<Challenge>(&m)) {
      f.request = f.handshake.answer(*ch, server);
      f.request_off = 0;
      send_flood_request(f);
    } else if (const auto* a = std::get_if<Accept>(&m); a != nullptr && !f.ready) {
      sockaddr_in to = server_of(f.plan.from, f.plan.to);
      to.sin_port = htons(a->udp_port);
      if (::connect(f.udp.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
        throw_errno("connect udp " + to_string(to));
      }
      f.ready = true;
      if (f.upload) {
        // The schedule's slots from the flood's start; those already past are skipped (the
        // sink was not ready), as a probe's are.
        const int64_t now = mono_ns();
        f.slot =
            now <= f.start_ns
                ? 0
                : static_cast<int64_t>(std::ceil(static_cast<double>(now - f.start_ns) / f.gap_ns));
        f.next_send = slot_time(f, f.slot);
      } else {
        add(f.udp.get(), EPOLLIN, kFloodToken + 2 * f.index);
      }
    } else if (const auto* arr = std::get_if<Arrivals>(&m)) {
      for (const Arrival& x : arr->arrivals) {
        f.arrived.push_back(Flood::Arrived{x.seq, 0, x.recv_ns});
      }
    } else if (const auto* e = std::get_if<End>(&m)) {
      f.server_count = e->stats.bytes;
      f.ended = true;
    }
  }

  int64_t slot_time(const Flood& f, int64_t slot) const {
    return f.start_ns + static_cast<int64_t>(static_cast<double>(slot) * f.gap_ns);
  }

  // The uploads' due datagrams in time order across floods (a voice packet goes out between
  // the flood's datagrams of its time, not before or after a whole late burst), at most 64 per
  // flood at once on average when behind; each one's send time is kept. A datagram the local stack
  // refuses (ENOBUFS, EAGAIN) is sent and lost, as in the simulator.
  void send_floods(int64_t now) {
    uint8_t pkt[kMaxProbeSize] = {};
    for (size_t k = 0; k < 64 * floods_.size(); ++k) {
      Flood* next = nullptr;
      for (auto& fp : floods_) {
        Flood& f = *fp;
        if (f.upload && f.ready && f.next_send <= now && f.next_send < f.stop_ns &&
            (next == nullptr || f.next_send < next->next_send)) {
          next = &f;
        }
      }
      if (next == nullptr) {
        return;
      }
      Flood& f = *next;
      FloodPacket h;
      h.seq = static_cast<uint32_t>(f.sent_ns.size());
      h.send_ns = mono_ns();
      h.token = f.token;
      encode_flood(h, std::span<uint8_t>(pkt, static_cast<size_t>(f.plan.size)));
      [[maybe_unused]] const ssize_t w =
          ::send(f.udp.get(), pkt, static_cast<size_t>(f.plan.size), 0);
      f.sent_ns.push_back(h.send_ns);
      f.next_send = slot_time(f, ++f.slot);
    }
  }

  // A download's datagrams: those with a flood header from the server's port.
  void on_flood_udp(Flood& f) {
    uint8_t buf[2048];
    while (const std::optional<Datagram> dg = recv_datagram(f.udp.get(), buf)) {
      if (const std::optional<FloodPacket> h =
              decode_flood(std::span<const uint8_t>(buf, dg->size))) {
        f.arrived.push_back(Flood::Arrived{h->seq, h->send_ns, dg->recv_ns});
      }
    }
  }

  // At the run's end an upload's flood is over: shutting the control's write side down makes
  // the sink send its last arrivals and End.
  void end_floods() {
    for (auto& f : floods_) {
      if (f->upload && f->control.valid() && !f->shut && !f->connecting) {
        ::shutdown(f->control.get(), SHUT_WR);
        f->shut = true;
      }
    }
  }

  bool all_floods_done() const {
    return std::all_of(floods_.begin(), floods_.end(), [](const std::unique_ptr<Flood>& f) {
      return !f->opened || f->ended || !f->control.valid();
    });
  }

  // Hands a flood's datagrams to the recorder in sequence order, with send times on this
  // client's clock. One clock (emulation): one-way delays are exact. Two clocks (a real
  // network): each delay is taken relative to the smallest, i.e. the server's clock is put on
  // ours so that the fastest datagram took no time; IPDV, loss and bursts need only
  // differences. A download's datagrams that never arrived are placed on the server's
  // schedule (k x gap after the first one that did).
  void record_flood(Flood& f) {
    std::vector<int64_t> raw(f.arrived.size());
    int64_t min_raw = INT64_MAX;
    uint64_t count = f.upload ? f.sent_ns.size() : f.server_count.value_or(0);
    for (size_t k = 0; k < f.arrived.size(); ++k) {
      const Flood::Arrived& a = f.arrived[k];
      if (f.upload && a.seq >= f.sent_ns.size()) {
        continue;
      }
      raw[k] = a.recv_ns - (f.upload ? f.sent_ns[a.seq] : a.sent_ns);
      min_raw = std::min(min_raw, raw[k]);
      if (!f.upload) {
        count = std::max<uint64_t>(count, uint64_t{a.seq} + 1);
      }
    }
    const int64_t offset = opt_.shared_clock || min_raw == INT64_MAX ? 0 : min_raw;
    std::vector<int64_t> sent(f.upload ? f.sent_ns : std::vector<int64_t>(count, INT64_MIN));
    sent.resize(count, INT64_MIN);
    if (!f.upload) {
      std::optional<std::pair<uint32_t, int64_t>> first;  // (seq, send time here)
      for (const Flood::Arrived& a : f.arrived) {
        if (a.seq < count) {
          sent[a.seq] = a.sent_ns + offset;
          if (!first || a.seq < first->first) first.emplace(a.seq, a.sent_ns + offset);
        }
      }
      const int64_t base =
          first ? first->second - static_cast<int64_t>(first->first * f.gap_ns) : f.start_ns;
      for (size_t k = 0; k < count; ++k) {
        if (sent[k] == INT64_MIN) sent[k] = base + static_cast<int64_t>(k * f.gap_ns);
      }
    }
    for (const int64_t t : sent) {
      recorder_.flood_sent(f.index, rel(std::max(t, t0_)));
    }
    std::vector<bool> seen(count, false);
    for (size_t k = 0; k < f.arrived.size(); ++k) {
      const uint32_t seq = f.arrived[k].seq;
      if (seq >= count || seen[seq]) {
        continue;  // a duplicate, or not one of ours
      }
      seen[seq] = true;
      recorder_.flood_received(f.index, seq, rel(std::max(sent[seq], t0_)),
                               Duration::ns(raw[k] - offset));
    }
  }

  // ---- transfers ----

  // Opens every transfer whose arrival has come: open loop, whatever is still in progress.
  void start_transfers(int64_t now) {
    while (next_xfer_ < xfers_.size() && now >= t0_ + xfers_[next_xfer_]->plan->at.count_ns()) {
      const size_t i = next_xfer_++;
      Xfer& x = *xfers_[i];
      const config::TransferPlan& t = *x.plan;
      const config::TransferSetPlan& set = plan_.transfer_sets.at(t.set);
      x.id = recorder_.transfer_started(t.set, t.size, rel(t0_ + t.at.count_ns()));
      x.fd = connect_tcp(set.dscp, "", set.client, set.server);
      Request r;
      r.kind = FlowKind::kTransfer;
      r.dscp = set.dscp;
      r.duration_ms = static_cast<uint32_t>(std::max<int64_t>(
          (plan_.duration - t.at + report::kLossHorizon).count_ns() / 1'000'000, 1));
      r.cc = set.cc;
      r.bytes = static_cast<uint64_t>(t.size);
      x.request = x.handshake.begin(r, opt_.secret);
      x.connecting = true;
      add(x.fd.get(), EPOLLIN | EPOLLOUT, kXferToken + i);
    }
  }

  void on_xfer(Xfer& x, uint32_t events) {
    if (!x.fd.valid()) {
      return;
    }
    const config::TransferSetPlan& set = plan_.transfer_sets.at(x.plan->set);
    const std::string server = to_string(server_of(set.client, set.server));
    if (x.connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
      if (const std::string err = connect_error(x.fd.get()); !err.empty()) {
        throw LiveError("connect " + server + ": " + err);
      }
      send_xfer_request(x);
      if (x.request_off < x.request.size()) {
        return;
      }
      x.connecting = false;
      mod(x.fd.get(), EPOLLIN, kXferToken + index_of(x));
    }
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) == 0) {
      return;
    }
    const bool open = read_frames(x.fd.get(), x.reader, server, [&](const Message& m) {
      on_xfer_message(x, m, server);
      return x.fd.valid();
    });
    if (!open) {
      x.fd.reset();  // closed before End: the transfer stays incomplete
    }
  }

  void send_xfer_request(Xfer& x) {
    send_pending(x.fd.get(), x.request, x.request_off, "send transfer request");
  }

  // The response's last byte is in when End arrives after `size` bytes of Data payload.
  void on_xfer_message(Xfer& x, const Message& m, const std::string& server) {
    if (const auto* rej = std::get_if<Reject>(&m)) {
      if (rej->reason.starts_with("server busy") || rej->reason.starts_with("too many")) {
        if (xfers_refused_++ == 0) {
          log("transfers: the server at " + server + " refused a transfer (" + rej->reason +
              "); refused transfers stay incomplete");
        }
        x.fd.reset();
        return;
      }
      throw LiveError("server " + server + " refused a transfer: " + rej->reason +
                      older_server_hint(rej->reason) + x.handshake.hint());
    }
    if (const auto* ch = std::get_if<Challenge>(&m)) {
      x.request = x.handshake.answer(*ch, server);
      x.request_off = 0;
      send_xfer_request(x);
    } else if (const auto* d = std::get_if<Data>(&m)) {
      x.payload += d->bytes;
    } else if (std::holds_alternative<End>(m)) {
      if (x.payload >= static_cast<uint64_t>(x.plan->size)) {
        recorder_.transfer_completed(x.id, rel(mono_ns()));
      }
      x.fd.reset();
    }
  }

  size_t index_of(const Xfer& x) const {
    for (size_t i = 0; i < xfers_.size(); ++i) {
      if (xfers_[i].get() == &x) return i;
    }
    return 0;
  }

  // At the run's end transfers still in progress are abandoned (the recorder counts those
  // requested at least kLossHorizon before the end as incomplete).
  void close_transfers() {
    for (auto& x : xfers_) {
      x->fd.reset();
    }
    if (xfers_refused_ > 1) {
      log("transfers: " + std::to_string(xfers_refused_) + " refused by a busy server");
      xfers_refused_ = 1;
    }
  }

  // A refusal of a kind this server does not know: it predates udp_flood / voip / transfers.
  static std::string older_server_hint(const std::string& reason) {
    return reason.starts_with("request.kind:") && reason.find("(udp sink)") == std::string::npos
               ? " (the server is older than this client: udp_flood, voip and transfers need a "
                 "nicsim server that knows them; update it)"
               : "";
  }

  // ---- intervals, waiting, results ----

  // The engine's clock (CLOCK_MONOTONIC ns) <-> the run's time (since t0).
  Time rel(int64_t mono) const { return Time::zero() + Duration::ns(mono - t0_); }
  int64_t abs(Time t) const { return t0_ + t.ns_since_epoch(); }

  // Every flow's counters now, in plan order (report::RunRecorder::close_interval).
  std::vector<report::FlowCounters> flow_counters() {
    std::vector<report::FlowCounters> c(flows_.size());
    for (size_t i = 0; i < flows_.size(); ++i) {
      Flow& f = *flows_[i];
      c[i].received_bytes = received(f);
      if (f.upload) {
        c[i].retransmits = f.local.retransmits;
        c[i].cwnd_bytes = f.local.cwnd_bytes;
      } else if (f.server) {
        c[i].retransmits = f.server->retransmits;
        c[i].cwnd_bytes = f.server->cwnd_bytes;
      }
      // The sender's smoothed RTT (tcpi_rtt): the responsiveness metric's self probes.
      const uint32_t srtt_us = f.upload ? f.local.rtt_us : (f.server ? f.server->rtt_us : 0);
      const bool active = f.phase == FlowPhase::kRunning || f.phase == FlowPhase::kStopping;
      if (srtt_us > 0 && active && !f.at_stop) {
        c[i].srtt_ms = srtt_us / 1e3;
      }
    }
    return c;
  }

  int64_t next_deadline(int64_t now) const {
    int64_t d = now < end_ ? abs(recorder_.next_boundary()) : end_ + opt_.grace.count_ns();
    for (const auto& f : flows_) {
      if (f->phase == FlowPhase::kPending) {
        d = std::min(d, t0_ + f->plan.start.count_ns());
      } else if (!f->at_stop) {
        d = std::min(d, t0_ + f->plan.stop.count_ns());
      }
      if (f->phase != FlowPhase::kDone) d = std::min(d, f->deadline);
    }
    for (const auto& p : probes_) {
      if (p->next_send < p->stop) d = std::min(d, p->next_send);
    }
    for (const auto& f : floods_) {
      if (!f->opened) {
        d = std::min(d, f->upload ? t0_ : f->start_ns);
      } else if (f->ready && f->next_send < f->stop_ns) {
        d = std::min(d, f->next_send);
      }
    }
    if (next_xfer_ < xfers_.size()) {
      d = std::min(d, t0_ + xfers_[next_xfer_]->plan->at.count_ns());
    }
    return d;
  }

  // Waits for socket events until `deadline` (ns resolution: epoll_pwait2). True when stopped.
  bool wait(int64_t deadline) {
    const int64_t wait_ns = std::max<int64_t>(0, deadline - mono_ns());
    timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000),
                static_cast<long>(wait_ns % 1'000'000'000)};
    epoll_event events[64];
    const int n = ::epoll_pwait2(epoll_.get(), events, 64, &ts, nullptr);
    if (n < 0) {
      if (errno == EINTR) return false;
      throw_errno("epoll_pwait2");
    }
    for (int i = 0; i < n; ++i) {
      const uint64_t t = events[i].data.u64;
      if (t == kStopToken) {
        log("stopped early");
        return true;
      }
      if (t >= kXferToken) {
        if (t - kXferToken < xfers_.size()) {
          on_xfer(*xfers_[t - kXferToken], events[i].events);
        }
      } else if (t >= kFloodToken) {
        const size_t idx = (t - kFloodToken) / 2;
        if (idx < floods_.size()) {
          if ((t - kFloodToken) % 2 == 0) {
            on_flood_udp(*floods_[idx]);
          } else {
            on_flood_control(*floods_[idx], events[i].events);
          }
        }
      } else if (t >= 100000) {
        const size_t idx = (t - 100000) / 2;
        if (idx < probes_.size()) {
          if ((t - 100000) % 2 == 0) {
            on_probe(*probes_[idx]);
          } else {
            on_echo_control(*probes_[idx], events[i].events);
          }
        }
      } else if (t >= 10 && t - 10 < flows_.size()) {
        on_flow(*flows_[t - 10], events[i].events);
      }
    }
    return false;
  }

  report::Run finish() {
    for (const auto& f : flows_) {
      if (f->phase != FlowPhase::kPending && !f->accepted) {
        log("flow " + std::to_string(f->stream_id) + " (" +
            std::string(report::direction_key(f->dir)) + "): the server at " +
            to_string(opt_.server) + " never accepted it");
      }
    }
    for (const auto& p : probes_) {
      if (!p->ready) {
        log("probe " + p->plan.name + ": the server's echo reflector never answered");
      }
    }
    std::vector<report::FlowTotals> totals(flows_.size());
    for (size_t i = 0; i < flows_.size(); ++i) {
      Flow& f = *flows_[i];
      if (f.upload) {
        totals[i].sender_bytes = f.written;
        totals[i].retransmits = f.local.retransmits;
      } else if (f.server) {
        totals[i].sender_bytes = f.server->bytes;
        totals[i].retransmits = f.server->retransmits;
      }
      totals[i].received_bytes = received(f);
    }
    for (auto& f : floods_) {
      record_flood(*f);
    }
    return recorder_.finish(rel(end_), flow_counters(), totals);
  }

  const TrafficPlan& plan_;
  const ClientOptions& opt_;
  Fd epoll_;
  uint64_t token_seed_ = 0;
  std::vector<std::unique_ptr<Flow>> flows_;
  std::vector<std::unique_ptr<Probe>> probes_;
  std::vector<uint8_t> write_buf_;
  uint8_t read_buf_[128 * 1024] = {};
  std::vector<std::unique_ptr<Flood>> floods_;
  std::vector<std::unique_ptr<Xfer>> xfers_;  // in arrival order
  size_t next_xfer_ = 0;                      // the next to start
  uint64_t xfers_refused_ = 0;                // refused by a busy server (left incomplete)
  int64_t t0_ = 0;
  int64_t end_ = 0;
  report::RunRecorder recorder_;
  Duration interval_;  // interval table bins (the server's Stats period)
};

}  // namespace

FlowSockets flow_sockets(const FlowPlan& f) {
  const bool upload = f.from < f.to;
  return FlowSockets{upload, upload ? f.cc : "", upload ? "" : f.cc};
}

TrafficPlan rrul_plan(const RrulOptions& o) {
  TrafficPlan plan;
  plan.duration = o.idle + o.load + o.idle;
  plan.interval = o.interval;
  config::add_rrul(plan, config::RrulPlan{0, 1, Duration::zero(), o.idle, o.idle + o.load,
                                          plan.duration, o.probe_interval, o.cc, o.cc});
  return plan;
}

bool icmp_available() {
  Fd raw(::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP));
  if (raw.valid()) {
    return true;
  }
  Fd ping(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP));
  return ping.valid();
}

std::string plan_problem(const TrafficPlan& plan) {
  for (size_t i = 0; i < plan.transfer_sets.size(); ++i) {
    const config::TransferSetPlan& set = plan.transfer_sets[i];
    if (set.client > set.server) {
      const auto host = [&](size_t h) { return h < plan.hosts.size() ? plan.hosts[h] : "?"; };
      return "traffic.transfers[" + std::to_string(i) + "]: from = \"" + host(set.client) +
             "\" is written after to = \"" + host(set.server) +
             "\" among the hosts; the live engine opens (and times) a transfer from the host "
             "written first: write the client's host first, or run it in the simulator";
    }
  }
  for (const config::FloodPlan& f : plan.floods) {
    if (f.size < static_cast<int64_t>(kFloodHeader) ||
        f.size > static_cast<int64_t>(kMaxProbeSize)) {
      return f.name + ": size " + std::to_string(f.size) + " B is not in " +
             std::to_string(kFloodHeader) + ".." + std::to_string(kMaxProbeSize) +
             " B (the live engine's datagram header; one datagram per 1500-byte MTU)";
    }
  }
  return "";
}

report::Run run_traffic(const TrafficPlan& plan, report::RunInfo info,
                        const ClientOptions& options) {
  if (std::string problem = plan_problem(plan); !problem.empty()) {
    throw LiveError(problem);
  }
  Engine engine(plan, std::move(info), options);
  return engine.run();
}

}  // namespace nicsim::live
