// udp_flood, voip and transfers on real sockets (issue 12): the live traffic engine against a
// nicsim server on 127.0.0.1 in one process (no privileges), with one clock (as under
// `nicsim emulate`) and without (as across a real network: one-way delays relative to the
// smallest); the server's udp sink, udp source and transfer answers spoken to directly; a
// server that predates them. Bounded: about 1.5 s of traffic per test. Nothing asserts on
// timing: counts, sequence numbers, bytes and the relations between results.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "nicsim/live/probe.h"
#include "nicsim/live/protocol.h"
#include "nicsim/live/server.h"
#include "nicsim/live/server_thread_testing.h"
#include "nicsim/live/socket_util.h"
#include "nicsim/live/traffic.h"
#include "nicsim/report/emodel.h"

namespace nicsim::live {
namespace {

config::FloodPlan flood(std::string name, size_t from, size_t to, Rate rate, int64_t size,
                        std::string codec = "") {
  config::FloodPlan f;
  f.name = std::move(name);
  f.from = from;
  f.to = to;
  f.rate = rate;
  f.size = size;
  f.start = Duration::ms(100);
  f.stop = Duration::ms(400);  // ends > 1 s before the run's end: every datagram is judged
  f.codec = std::move(codec);
  return f;
}

TrafficPlan flood_plan() {
  TrafficPlan plan;
  plan.duration = Duration::ms(1500);
  plan.hosts = {"a", "b"};
  // 2 Mbit/s of 1000 B: one datagram every 4 ms, 75 in 300 ms (slow enough that a receiving
  // thread descheduled for a few hundred ms on a loaded machine loses none).
  plan.floods.push_back(flood("udp_flood", 0, 1, Rate::mbit(2), 1000));
  plan.floods.push_back(flood("udp_flood-2", 1, 0, Rate::mbit(2), 1000));
  // G.711: 172 B every 20 ms (rate exact, as config::plan makes it): 15 in 300 ms.
  plan.floods.push_back(flood("voip", 0, 1, Rate::bps(68'800), 172, "g711"));
  plan.floods.push_back(flood("voip-2", 1, 0, Rate::bps(68'800), 172, "g711"));
  return plan;
}

report::Run run_floods(bool shared_clock, ServerThread& server) {
  ClientOptions opt;
  opt.server = loopback(server.port());
  opt.shared_clock = shared_clock;
  return run_traffic(flood_plan(), report::RunInfo{}, opt);
}

// A congestion control the kernel lacks is named with the ones it has (issue 12 item 4).
TEST(LiveSockets, UnknownCongestionControlNamesTheAvailableOnes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(set_congestion_control(fd, "reno"), "");  // built into every kernel
  const std::string err = set_congestion_control(fd, "no_such_cc");
  EXPECT_NE(err.find("not available in this kernel"), std::string::npos) << err;
  EXPECT_NE(err.find("reno"), std::string::npos) << err;
  ::close(fd);
}

TEST(LiveFloods, BothDirectionsAndVoipOverLoopback) {
  ServerThread server(ServerParams{});
  const report::Run r = run_floods(true, server);
  server.stop();
  ASSERT_EQ(r.udp_flood.size(), 2u);
  ASSERT_EQ(r.voip.size(), 2u);
  const report::FloodResult& up = r.udp_flood.at("udp_flood");
  const report::FloodResult& down = r.udp_flood.at("udp_flood-2");
  EXPECT_EQ(up.direction, "a->b");
  EXPECT_EQ(down.direction, "b->a");
  for (const report::FloodResult* f : {&up, &down}) {
    // The schedule's slots of [100, 400) ms (an upload skips none: its sink is ready long
    // before; a download starts when the server has its request, and keeps the count).
    EXPECT_GE(f->sent, 60u);
    EXPECT_LE(f->sent, 76u);
    EXPECT_EQ(f->size, 1000);
    // Loopback loses nothing at 2 Mbit/s (the sockets' buffers hold far more than a burst).
    EXPECT_EQ(f->received, f->sent);
    EXPECT_EQ(f->lost, 0u);
    EXPECT_EQ(f->one_way.count, f->received);
    EXPECT_GT(f->one_way.min, 0.0);  // one clock: the real (tiny, positive) delay
  }
  const ServerStats s = server.stats();
  EXPECT_EQ(s.flood_in, up.received + r.voip.at("voip").received);
  EXPECT_EQ(s.flood_out, down.sent + r.voip.at("voip-2").sent);
  EXPECT_EQ(s.rejected, 0u);
  EXPECT_EQ(s.active, 0);
  for (const char* name : {"voip", "voip-2"}) {
    const report::VoipResult& v = r.voip.at(name);
    EXPECT_EQ(v.codec, "g711");
    EXPECT_EQ(v.size, 172);
    EXPECT_GE(v.sent, 14u);
    EXPECT_LE(v.sent, 16u);
    EXPECT_EQ(v.received, v.sent);
    EXPECT_EQ(v.lost, 0u);
    EXPECT_EQ(v.loss_bursts, 0u);
    EXPECT_DOUBLE_EQ(v.burst_ratio, 1.0);
    // The recorder's E-model, on what was measured.
    EXPECT_DOUBLE_EQ(v.mos, report::emodel_mos(v.r_factor));
  }
  EXPECT_TRUE(server.logged("udp sink for"));
  EXPECT_TRUE(server.logged("udp source for 300 ms, dscp 0, 2000000 bit/s of 1000 B"));
}

// Two clocks (a real network): every one-way delay is relative to the smallest, which is 0.
TEST(LiveFloods, WithoutASharedClockDelaysAreRelativeToTheSmallest) {
  ServerThread server(ServerParams{});
  const report::Run r = run_floods(false, server);
  server.stop();
  for (const auto& [name, f] : r.udp_flood) {
    EXPECT_EQ(f.received, f.sent) << name;
    EXPECT_DOUBLE_EQ(f.one_way.min, 0.0) << name;
    EXPECT_GE(f.one_way.max, f.one_way.min) << name;
  }
  for (const auto& [name, v] : r.voip) {
    EXPECT_DOUBLE_EQ(v.one_way.min, 0.0) << name;
  }
}

TEST(LiveTransfers, EverySizeCompletesWithItsBytes) {
  ServerThread server(ServerParams{});
  TrafficPlan plan;
  plan.duration = Duration::ms(1500);
  plan.hosts = {"a", "b"};
  config::TransferSetPlan set;
  set.name = "transfers";
  set.client = 0;
  set.server = 1;
  set.cc = "reno";
  plan.transfer_sets.push_back(set);
  const int64_t sizes[] = {1000, 50'000, 500'000, 2'000'000, 16 * 1024, 16 * 1024 + 1};
  for (size_t i = 0; i < std::size(sizes); ++i) {
    plan.transfers.push_back(config::TransferPlan{0, Duration::ms(20 * int64_t(i)), sizes[i]});
  }
  ClientOptions opt;
  opt.server = loopback(server.port());
  opt.shared_clock = true;
  const report::Run r = run_traffic(plan, report::RunInfo{}, opt);
  server.stop();
  const report::TransfersResult& t = r.transfers.at("transfers");
  EXPECT_EQ(t.direction, "b->a");
  EXPECT_EQ(t.started, std::size(sizes));
  EXPECT_EQ(t.completed, std::size(sizes));
  uint64_t total = 0;
  for (int64_t s : sizes) total += static_cast<uint64_t>(s);
  EXPECT_EQ(t.bytes, total);
  EXPECT_EQ(t.fct_ms.count, std::size(sizes));
  EXPECT_EQ(t.buckets.at("<10KB").count, 1u);
  EXPECT_EQ(t.buckets.at("10KB-100KB").count, 3u);
  EXPECT_EQ(t.buckets.at("100KB-1MB").count, 1u);
  EXPECT_EQ(t.buckets.at(">=1MB").count, 1u);
  const ServerStats s = server.stats();
  EXPECT_EQ(s.requests, std::size(sizes));
  EXPECT_EQ(s.active, 0);
  EXPECT_EQ(s.transfers, std::size(sizes));
  // Only the first transfer from an address is logged (they come many per second).
  EXPECT_TRUE(server.logged("transfer for 2500 ms, dscp 0, cc reno, 1000 B (further transfers"));
  EXPECT_FALSE(server.logged("cc reno, 2000000 B"));
}

TEST(LiveTransfers, AClientAfterItsServerIsRefusedByName) {
  TrafficPlan plan;
  plan.duration = Duration::s(1);
  plan.hosts = {"a", "b"};
  config::TransferSetPlan set;
  set.name = "transfers";
  set.client = 1;
  set.server = 0;
  plan.transfer_sets.push_back(set);
  ClientOptions opt;
  opt.server = loopback(1);
  try {
    run_traffic(plan, report::RunInfo{}, opt);
    ADD_FAILURE() << "accepted";
  } catch (const LiveError& e) {
    EXPECT_NE(std::string(e.what()).find("traffic.transfers[0]: from = \"b\" is written after to = "
                                         "\"a\" among the hosts"),
              std::string::npos)
        << e.what();
  }
}

TEST(LiveFloods, ADatagramSizeBelowTheHeaderIsRefused) {
  TrafficPlan plan;
  plan.duration = Duration::s(1);
  plan.floods.push_back(flood("udp_flood", 0, 1, Rate::mbit(1), 16));
  ClientOptions opt;
  opt.server = loopback(1);
  EXPECT_THROW(run_traffic(plan, report::RunInfo{}, opt), LiveError);
}

// The udp sink spoken to directly: it counts only the registered port's flood datagrams and
// reports each one (Arrivals), then End with the count once the client shuts down.
TEST(LiveServerFlood, SinkCountsOnlyTheRegisteredPortAndReportsEachArrival) {
  ServerThread server(ServerParams{});
  Fd control(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_in to = loopback(server.port());
  ASSERT_EQ(::connect(control.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to), 0);
  timeval tv{5, 0};
  ::setsockopt(control.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  Fd mine(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  Fd other(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const sockaddr_in any = loopback(0);
  ASSERT_EQ(::bind(mine.get(), reinterpret_cast<const sockaddr*>(&any), sizeof any), 0);
  ASSERT_EQ(::bind(other.get(), reinterpret_cast<const sockaddr*>(&any), sizeof any), 0);
  sockaddr_in local{};
  socklen_t len = sizeof local;
  ::getsockname(mine.get(), reinterpret_cast<sockaddr*>(&local), &len);
  Request r;
  r.kind = FlowKind::kUdpSink;
  r.duration_ms = 5000;
  r.udp_port = ntohs(local.sin_port);
  r.rate_bps = 1'000'000;
  r.size = 100;
  std::vector<uint8_t> req;
  encode(r, req);
  ASSERT_EQ(::send(control.get(), req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  FrameReader reader(false);
  std::vector<Message> got;
  uint8_t buf[4096];
  const auto read_until = [&](auto done) {
    while (!done()) {
      const ssize_t n = ::recv(control.get(), buf, sizeof buf, 0);
      if (n <= 0) return;
      size_t off = 0;
      while (off < static_cast<size_t>(n) && !reader.failed()) {
        off += reader.feed(std::span<const uint8_t>(buf + off, static_cast<size_t>(n) - off));
        while (auto m = reader.next()) got.push_back(*m);
      }
    }
  };
  read_until([&] { return !got.empty(); });
  ASSERT_FALSE(got.empty());
  const auto* accept = std::get_if<Accept>(&got[0]);
  ASSERT_NE(accept, nullptr);
  sockaddr_in sink = loopback(accept->udp_port);
  uint8_t d[100] = {};
  for (uint32_t seq : {0u, 1u, 2u}) {
    encode_flood(FloodPacket{seq, 1, 0}, std::span<uint8_t>(d, sizeof d));
    // From another port: ignored; from the registered one: counted.
    ::sendto(other.get(), d, sizeof d, 0, reinterpret_cast<const sockaddr*>(&sink), sizeof sink);
    ::sendto(mine.get(), d, sizeof d, 0, reinterpret_cast<const sockaddr*>(&sink), sizeof sink);
  }
  // Not a flood datagram (no magic): ignored.
  uint8_t junk[100] = {1, 2, 3};
  ::sendto(mine.get(), junk, sizeof junk, 0, reinterpret_cast<const sockaddr*>(&sink), sizeof sink);
  // Every datagram seen before the end (the sink stops counting at the client's EOF).
  for (int i = 0; i < 500 && server.stats().flood_in + server.stats().ignored < 7; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::shutdown(control.get(), SHUT_WR);
  read_until([&] { return std::holds_alternative<End>(got.back()); });
  server.stop();
  std::vector<uint32_t> seqs;
  for (const Message& m : got) {
    if (const auto* a = std::get_if<Arrivals>(&m)) {
      for (const Arrival& x : a->arrivals) seqs.push_back(x.seq);
    }
  }
  EXPECT_EQ(seqs, (std::vector<uint32_t>{0, 1, 2}));
  ASSERT_TRUE(std::holds_alternative<End>(got.back()));
  EXPECT_EQ(std::get<End>(got.back()).stats.bytes, 3u);
  EXPECT_EQ(server.stats().flood_in, 3u);
  EXPECT_EQ(server.stats().ignored, 4u);
}

// A udp source faster than the server allows is refused with the limit.
TEST(LiveServerFlood, SourceAboveTheRateLimitIsRefused) {
  ServerParams p;
  p.max_udp_rate_bps = 1'000'000;
  ServerThread server(p);
  TrafficPlan plan;
  plan.duration = Duration::ms(500);
  plan.floods.push_back(flood("udp_flood", 1, 0, Rate::mbit(2), 1000));
  ClientOptions opt;
  opt.server = loopback(server.port());
  try {
    run_traffic(plan, report::RunInfo{}, opt);
    ADD_FAILURE() << "accepted";
  } catch (const LiveError& e) {
    EXPECT_NE(std::string(e.what()).find("refused udp_flood: request.rate_bps: 2000000 above "
                                         "this server's limit of 1000000 bit/s"),
              std::string::npos)
        << e.what();
  }
  server.stop();
  EXPECT_EQ(server.stats().flood_out, 0u);
}

// A server that predates udp sinks refuses the kind with its old reason: the client says why.
TEST(LiveFloods, AnOlderServerIsNamedAsSuch) {
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a = loopback(0);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  socklen_t len = sizeof a;
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len);
  std::thread old([&] {
    Fd c(::accept(listener.get(), nullptr, nullptr));
    uint8_t buf[256];
    [[maybe_unused]] const ssize_t n = ::recv(c.get(), buf, sizeof buf, 0);
    std::vector<uint8_t> rej;
    encode(Reject{"request.kind: 4 is not 1 (sink), 2 (source) or 3 (echo)"}, rej);
    [[maybe_unused]] const ssize_t w = ::send(c.get(), rej.data(), rej.size(), MSG_NOSIGNAL);
  });
  TrafficPlan plan;
  plan.duration = Duration::ms(500);
  plan.floods.push_back(flood("udp_flood", 0, 1, Rate::mbit(1), 100));
  ClientOptions opt;
  opt.server = a;
  std::string what;
  try {
    run_traffic(plan, report::RunInfo{}, opt);
  } catch (const LiveError& e) {
    what = e.what();
  }
  old.join();
  EXPECT_NE(what.find("the server is older than this client"), std::string::npos) << what;
}

}  // namespace
}  // namespace nicsim::live
