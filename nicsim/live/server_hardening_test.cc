// `nicsim server` against strangers (issue 16 item 5), on 127.0.0.1 in one process: the shared
// secret, the per-peer limit, the echo reflector's registered port, the rate-limited log and
// the accept back-off at the descriptor limit. Each test reproduces an attack that worked
// before (docs/security.md). No timing assertions: waits are bounded loops, and the one count
// that depends on time (accept errors in 500 ms) is bounded three orders of magnitude away
// from the busy loop it guards against.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "nicsim/live/auth.h"
#include "nicsim/live/probe.h"
#include "nicsim/live/protocol.h"
#include "nicsim/live/server.h"
#include "nicsim/live/server_thread_testing.h"
#include "nicsim/live/socket_util.h"
#include "nicsim/live/traffic.h"

namespace nicsim::live {
namespace {

sockaddr_in address(const char* ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

Fd connect_from(const char* source, uint16_t port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_in src = address(source, 0);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&src), sizeof src), 0);
  const sockaddr_in to = address("127.0.0.1", port);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to), 0);
  timeval tv{5, 0};  // a broken server must not hang the test
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// The next frame from the server (nullopt when it closed or stayed silent for 5 s).
// One byte per recv, so that nothing after a complete frame is lost: the server may send two
// frames in one segment (a udp sink's Arrivals and End), and the reader takes one frame at a
// time.
std::optional<Message> next_frame(int fd, FrameReader& r) {
  for (;;) {
    if (auto m = r.next()) {
      return m;
    }
    if (r.failed()) {
      return std::nullopt;
    }
    uint8_t byte = 0;
    if (::recv(fd, &byte, 1, 0) != 1) {
      return std::nullopt;
    }
    r.feed(std::span<const uint8_t>(&byte, 1));
  }
}

std::string reject_reason(int fd, FrameReader& r) {
  while (auto m = next_frame(fd, r)) {
    if (const auto* rej = std::get_if<Reject>(&*m)) {
      return rej->reason;
    }
  }
  return "";
}

void send_all(int fd, const std::vector<uint8_t>& bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
}

Request echo_request(uint16_t udp_port) {
  Request r;
  r.kind = FlowKind::kEcho;
  r.duration_ms = 5000;
  r.udp_port = udp_port;
  return r;
}

TrafficPlan short_plan() {
  return up_down_probe_plan(Duration::ms(600), Duration::ms(300), Duration::ms(300),
                            Duration::ms(20), Duration::ms(100));
}

std::string run_error(uint16_t port, const std::string& secret) {
  ClientOptions opt;
  opt.server = address("127.0.0.1", port);
  opt.secret = secret;
  try {
    run_traffic(short_plan(), report::RunInfo{}, opt);
  } catch (const LiveError& e) {
    return e.what();
  }
  return "";
}

// Before: anyone who could reach the port was served.
TEST(ServerHardening, ASharedSecretAdmitsOnlyClientsThatProveIt) {
  ServerParams p;
  p.secret = "correct horse battery staple";
  ServerThread server(p, "0.0.0.0");
  ClientOptions opt;
  opt.server = address("127.0.0.1", server.port());
  opt.secret = p.secret;
  const report::Run r = run_traffic(short_plan(), report::RunInfo{}, opt);
  EXPECT_GT(r.transfer.a_to_b.flows.at(0).receiver.bytes, 0u);
  EXPECT_GT(r.transfer.b_to_a.flows.at(0).receiver.bytes, 0u);
  EXPECT_GT(r.latency_ms.at("udp").rtt.count, 0u);
  EXPECT_EQ(server.stats().requests, 3u);
  EXPECT_EQ(server.stats().auth_failures, 0u);

  EXPECT_NE(run_error(server.port(), "")
                .find("requires a shared secret: give it with "
                      "--secret-file"),
            std::string::npos);
  EXPECT_NE(run_error(server.port(), "wrong").find("auth: wrong shared secret"), std::string::npos);
  // A raw client that skips the challenge is refused without its request being served.
  Fd c = connect_from("127.0.0.1", server.port());
  FrameReader reader(false);
  ASSERT_TRUE(std::holds_alternative<Challenge>(next_frame(c.get(), reader).value()));
  std::vector<uint8_t> req;
  encode(echo_request(0), req);
  send_all(c.get(), req);
  EXPECT_EQ(reject_reason(c.get(), reader),
            "auth: this server requires a shared secret (--secret-file)");
  // A recorded answer is worth nothing on another connection (a fresh nonce each time).
  Fd d = connect_from("127.0.0.1", server.port());
  FrameReader reader_d(false);
  const Challenge first = std::get<Challenge>(next_frame(d.get(), reader_d).value());
  Fd e = connect_from("127.0.0.1", server.port());
  FrameReader reader_e(false);
  ASSERT_TRUE(std::holds_alternative<Challenge>(next_frame(e.get(), reader_e).value()));
  std::vector<uint8_t> replay;
  encode(answer_challenge(p.secret, first), replay);
  send_all(e.get(), replay);
  EXPECT_EQ(reject_reason(e.get(), reader_e), "auth: wrong shared secret");
  server.stop();
  EXPECT_GE(server.stats().auth_failures, 3u);
}

TEST(ServerHardening, AClientWithASecretIsToldWhenTheServerHasNone) {
  ServerParams p;
  p.request_timeout = Duration::ms(300);
  ServerThread server(p, "0.0.0.0");
  EXPECT_NE(run_error(server.port(), "s3cret").find("the server sent no challenge"),
            std::string::npos);
  Fd c = connect_from("127.0.0.1", server.port());
  std::vector<uint8_t> auth;
  encode(Auth{}, auth);
  send_all(c.get(), auth);
  FrameReader reader(false);
  EXPECT_EQ(reject_reason(c.get(), reader),
            "auth: this server has no shared secret; connect without one");
}

// Before: 64 idle connections from one address locked every other client out.
TEST(ServerHardening, OneAddressCannotTakeEverySlot) {
  ServerParams p;
  p.max_per_peer = 2;
  ServerThread server(p, "0.0.0.0");
  Fd a1 = connect_from("127.0.0.1", server.port());
  Fd a2 = connect_from("127.0.0.1", server.port());
  Fd a3 = connect_from("127.0.0.1", server.port());
  FrameReader r3(false);
  EXPECT_EQ(reject_reason(a3.get(), r3), "too many connections from 127.0.0.1 (at most 2)");
  // Another address is still served.
  Fd b = connect_from("127.0.0.2", server.port());
  std::vector<uint8_t> req;
  encode(echo_request(0), req);
  send_all(b.get(), req);
  FrameReader rb(false);
  const auto m = next_frame(b.get(), rb);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(std::holds_alternative<Accept>(*m));
  // When one of the address's connections closes, it may open another.
  a1.reset();
  for (int i = 0; i < 100 && server.stats().active > 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Fd a4 = connect_from("127.0.0.1", server.port());
  send_all(a4.get(), req);
  FrameReader r4(false);
  const auto m4 = next_frame(a4.get(), r4);
  ASSERT_TRUE(m4.has_value());
  EXPECT_TRUE(std::holds_alternative<Accept>(*m4));
  server.stop();
  EXPECT_EQ(server.stats().per_peer_refused, 1u);
}

Fd udp_socket() {
  Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const sockaddr_in any = address("127.0.0.1", 0);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&any), sizeof any), 0);
  return fd;
}

uint16_t port_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// Whether a probe sent from `from` to the reflector comes back within 300 ms.
bool echoed(int from, uint16_t reflector) {
  uint8_t probe[kProbeHeader] = {};
  encode_probe(ProbePacket{0, 1, 0, 0, 0, 0}, probe);
  const sockaddr_in to = address("127.0.0.1", reflector);
  ::sendto(from, probe, sizeof probe, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  pollfd pfd{from, POLLIN, 0};
  if (::poll(&pfd, 1, 300) != 1) {
    return false;
  }
  return ::recv(from, probe, sizeof probe, 0) == static_cast<ssize_t>(sizeof probe);
}

// Before: the reflector answered any port of the client's address, so a datagram with a
// spoofed source port was reflected onto another socket of that host.
TEST(ServerHardening, TheEchoAnswersOnlyTheRegisteredPort) {
  ServerThread server(ServerParams{}, "0.0.0.0");
  Fd registered = udp_socket();
  Fd other = udp_socket();
  Fd c = connect_from("127.0.0.1", server.port());
  std::vector<uint8_t> req;
  encode(echo_request(port_of(registered.get())), req);
  send_all(c.get(), req);
  FrameReader reader(false);
  const Accept a = std::get<Accept>(next_frame(c.get(), reader).value());
  EXPECT_FALSE(echoed(other.get(), a.udp_port));
  EXPECT_TRUE(echoed(registered.get(), a.udp_port));
  server.stop();
  EXPECT_EQ(server.stats().echoed, 1u);
  EXPECT_EQ(server.stats().ignored, 1u);
}

// An older client registers no port: its first valid probe does.
TEST(ServerHardening, AnUnregisteredEchoLatchesTheFirstProbesPort) {
  ServerThread server(ServerParams{}, "0.0.0.0");
  Fd first = udp_socket();
  Fd second = udp_socket();
  Fd c = connect_from("127.0.0.1", server.port());
  std::vector<uint8_t> req;
  encode(echo_request(0), req);
  send_all(c.get(), req);
  FrameReader reader(false);
  const Accept a = std::get<Accept>(next_frame(c.get(), reader).value());
  EXPECT_TRUE(echoed(first.get(), a.udp_port));
  EXPECT_FALSE(echoed(second.get(), a.udp_port));
  EXPECT_TRUE(echoed(first.get(), a.udp_port));
}

// A udp sink counts the registering client's address and port only: the same port number
// from another address of the host (127.0.0.2) is a stranger (issue 12).
TEST(ServerHardening, AUdpSinkCountsOnlyItsClientsAddressAndPort) {
  ServerThread server(ServerParams{}, "0.0.0.0");
  Fd mine = udp_socket();
  Fd stranger(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const sockaddr_in other_ip = address("127.0.0.2", port_of(mine.get()));
  ASSERT_EQ(::bind(stranger.get(), reinterpret_cast<const sockaddr*>(&other_ip), sizeof other_ip),
            0);
  Fd c = connect_from("127.0.0.1", server.port());
  Request r;
  r.kind = FlowKind::kUdpSink;
  r.duration_ms = 5000;
  r.udp_port = port_of(mine.get());
  r.rate_bps = 1'000'000;
  r.size = 64;
  std::vector<uint8_t> req;
  encode(r, req);
  send_all(c.get(), req);
  FrameReader reader(false);
  const Accept a = std::get<Accept>(next_frame(c.get(), reader).value());
  const sockaddr_in sink = address("127.0.0.1", a.udp_port);
  uint8_t d[64] = {};
  encode_flood(FloodPacket{0, 1, 0}, d);
  ::sendto(stranger.get(), d, sizeof d, 0, reinterpret_cast<const sockaddr*>(&sink), sizeof sink);
  ::sendto(mine.get(), d, sizeof d, 0, reinterpret_cast<const sockaddr*>(&sink), sizeof sink);
  // Both datagrams seen before the end (the sink stops counting at the client's EOF).
  for (int i = 0; i < 500 && server.stats().flood_in + server.stats().ignored < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::shutdown(c.get(), SHUT_WR);
  std::optional<Message> m;
  uint64_t counted = UINT64_MAX;
  while ((m = next_frame(c.get(), reader))) {
    if (const auto* e = std::get_if<End>(&*m)) counted = e->stats.bytes;
  }
  server.stop();
  EXPECT_EQ(counted, 1u);
  EXPECT_EQ(server.stats().flood_in, 1u);
  EXPECT_EQ(server.stats().ignored, 1u);
}

// A transfer or udp source client that writes after its request is cut off with the reason
// (the server expects nothing more from it).
TEST(ServerHardening, DataAfterATransferOrUdpSourceRequestClosesTheConnection) {
  ServerThread server(ServerParams{}, "0.0.0.0");
  Request x;
  x.kind = FlowKind::kTransfer;
  x.duration_ms = 5000;
  x.bytes = 1'000'000'000;  // far more than is read before the cut
  Request u;
  u.kind = FlowKind::kUdpSource;
  u.duration_ms = 5000;
  u.udp_port = 9;  // discard: nothing listens
  u.rate_bps = 100'000;
  u.size = 100;
  for (const Request& r : {x, u}) {
    Fd c = connect_from("127.0.0.1", server.port());
    std::vector<uint8_t> req;
    encode(r, req);
    req.insert(req.end(), 100, 'x');
    send_all(c.get(), req);
    uint8_t buf[65536];
    ssize_t n = 0;
    while ((n = ::recv(c.get(), buf, sizeof buf, 0)) > 0) {
    }
    EXPECT_TRUE(n == 0 || errno == ECONNRESET) << std::strerror(errno);  // closed, not timed out
  }
  server.stop();
  EXPECT_TRUE(server.logged("data after a transfer request"));
  EXPECT_TRUE(server.logged("data after a udp source request"));
}

// Before: every refusal was logged, 13,000 lines per second from one attacker.
TEST(ServerHardening, AFloodOfRefusalsIsLoggedAsABurstAndASummary) {
  ServerParams p;
  p.log_limits = LogLimiterParams{.burst = 10, .per_second = 1, .summary_period_ns = 300'000'000};
  ServerThread server(p, "0.0.0.0");
  for (int i = 0; i < 200; ++i) {
    Fd c = connect_from("127.0.0.1", server.port());
    const uint8_t garbage[] = {'G', 'E', 'T', ' '};
    ::send(c.get(), garbage, sizeof garbage, 0);
    FrameReader r(false);
    reject_reason(c.get(), r);
  }
  for (int i = 0; i < 300 && !server.logged("held back"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  server.stop();
  EXPECT_EQ(server.stats().rejected, 200u);
  EXPECT_LE(server.log().size(), 30u);
  EXPECT_GE(server.stats().log_held_back, 150u);
  EXPECT_TRUE(server.logged("log lines held back in the last "));
  EXPECT_TRUE(server.logged(" s; most about 127.0.0.1 ("));
}

// Before: at the descriptor limit accept(2) failed in a tight loop at ~100 % CPU.
TEST(ServerHardening, AtTheDescriptorLimitAcceptBacksOff) {
  ServerThread server(ServerParams{}, "0.0.0.0");
  {
    // A first round trip, so that the server thread is running before descriptors run out (a
    // sanitizer's own checks at thread start need a descriptor too).
    Fd warm = connect_from("127.0.0.1", server.port());
    const uint8_t garbage[] = {'G', 'E', 'T', ' '};
    ::send(warm.get(), garbage, sizeof garbage, 0);
    FrameReader r(false);
    ASSERT_FALSE(reject_reason(warm.get(), r).empty());
  }
  for (int i = 0; i < 300 && server.stats().active > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Fd pending(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  // Descriptors are allocated lowest first: with the soft limit at the lowest free number,
  // the server's next accept4 fails with EMFILE.
  const int lowest_free = ::eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  const sockaddr_in to = address("127.0.0.1", server.port());
  const int rc = ::connect(pending.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const ServerStats during = server.stats();
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_EQ(rc, 0);  // the kernel completed the handshake; the connection waits in the backlog
  // A busy loop makes millions of attempts in 500 ms; back-off from 100 ms, at most a few.
  EXPECT_GE(during.accept_errors, 1u);
  EXPECT_LE(during.accept_errors, 20u);
  EXPECT_EQ(during.accepted, 1u);  // the warm-up connection only
  // With descriptors back, the pending connection is accepted (bounded wait).
  for (int i = 0; i < 300 && server.stats().accepted < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  server.stop();
  EXPECT_EQ(server.stats().accepted, 2u);
  EXPECT_TRUE(server.logged("accept: Too many open files"));
}

}  // namespace
}  // namespace nicsim::live
