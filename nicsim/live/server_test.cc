// A nicsim server and the live traffic engine on 127.0.0.1 in one process (no privileges):
// a short plan with an upload, a download and a UDP probe, and hostile clients (garbage,
// oversize length, slowloris, one client too many). Bounded: about 1.5 s of traffic; nothing
// here asserts on timing, only on what arrived and what the server answered.
#include "nicsim/live/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "nicsim/live/netns_traffic.h"
#include "nicsim/live/protocol.h"
#include "nicsim/live/server_thread_testing.h"
#include "nicsim/live/socket_util.h"
#include "nicsim/live/traffic.h"
#include "nicsim/testing/require_emu.h"

namespace nicsim::live {
namespace {

Fd connect_to(uint16_t port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_in a = loopback(port);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  timeval tv{5, 0};  // a broken server must not hang the test
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// Reads frames until the server closes; returns the Reject reason ("" if none).
std::string reject_reason(int fd) {
  FrameReader r(false);
  uint8_t buf[512];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      return "";
    }
    r.feed(std::span<const uint8_t>(buf, static_cast<size_t>(n)));
    if (auto m = r.next()) {
      if (const auto* rej = std::get_if<Reject>(&*m)) {
        return rej->reason;
      }
    }
  }
}

TEST(LiveServer, UploadDownloadAndProbeOverLoopback) {
  ServerThread server(ServerParams{});
  TrafficPlan plan;
  plan.duration = Duration::ms(1500);
  plan.interval = Duration::ms(500);
  plan.flows.push_back(FlowPlan{0, 1, 46, "reno", Duration::zero(), Duration::s(1), "up"});
  plan.flows.push_back(FlowPlan{1, 0, 8, "cubic", Duration::zero(), Duration::s(1), "down"});
  ProbePlan udp;
  udp.name = "udp";
  udp.interval = Duration::ms(10);
  udp.size = 64;
  udp.stop = Duration::ms(400);  // ends > 1 s before the end: every probe counts
  plan.probes.push_back(udp);
  ClientOptions opt;
  opt.server = loopback(server.port());
  opt.shared_clock = true;
  const report::Run r = run_traffic(plan, report::RunInfo{}, opt);
  server.stop();

  ASSERT_EQ(r.transfer.a_to_b.flows.size(), 1u);
  ASSERT_EQ(r.transfer.b_to_a.flows.size(), 1u);
  const auto& up = r.transfer.a_to_b.flows[0];
  const auto& down = r.transfer.b_to_a.flows[0];
  EXPECT_EQ(up.id, 5);
  EXPECT_EQ(down.id, 5);
  // Receiver bytes are those delivered by the flow's stop; what was still queued then is not
  // counted (it is in the sender's count).
  EXPECT_GT(up.receiver.bytes, 0u);
  EXPECT_LE(up.receiver.bytes, up.sender.bytes);
  EXPECT_GT(down.receiver.bytes, 0u);
  EXPECT_LE(down.receiver.bytes, down.sender.bytes);
  // The interval rows add up to the totals.
  uint64_t up_sum = 0;
  uint64_t down_sum = 0;
  for (const auto& iv : r.intervals) {
    up_sum += iv.directions.a_to_b.bytes;
    down_sum += iv.directions.b_to_a.bytes;
  }
  EXPECT_EQ(up_sum, up.receiver.bytes);
  EXPECT_EQ(down_sum, down.receiver.bytes);
  EXPECT_EQ(r.goodput_bps.a_to_b, up.receiver.bits_per_second);
  EXPECT_DOUBLE_EQ(r.duration_s, 1.5);
  ASSERT_EQ(r.intervals.size(), 3u);
  EXPECT_DOUBLE_EQ(r.intervals.back().end_s, 1.5);
  const auto& p = r.latency_ms.at("udp");
  EXPECT_EQ(p.kind, "udp");
  EXPECT_GT(p.rtt.count, 0u);
  EXPECT_EQ(p.rtt.lost, 0u);
  ASSERT_TRUE(p.one_way.has_value());
  EXPECT_EQ(p.one_way->a_to_b.count, p.rtt.count);
  // The series has every sample in send order, with both one-way columns (shared clock).
  ASSERT_EQ(p.series.time_s.size(), p.rtt.count);
  EXPECT_EQ(p.series.rtt_ms.size(), p.rtt.count);
  EXPECT_EQ(p.series.one_way_a_to_b_ms.size(), p.rtt.count);
  EXPECT_TRUE(std::is_sorted(p.series.time_s.begin(), p.series.time_s.end()));
  EXPECT_EQ(up.name, "up");
  EXPECT_EQ(up.dscp, 46);
  EXPECT_EQ(down.dscp, 8);
  EXPECT_TRUE(r.phases.empty());
  EXPECT_FALSE(r.latency_under_load.has_value());
  const ServerStats s = server.stats();
  EXPECT_EQ(s.requests, 3u);
  EXPECT_EQ(s.rejected, 0u);
  EXPECT_EQ(s.echoed, p.rtt.count);
  EXPECT_EQ(s.active, 0);
  EXPECT_TRUE(server.logged("source for 1000 ms, dscp 8, cc cubic"));
}

// A flow whose socket never blocks (loopback, a client that reads and writes flat out) must
// not hold the server's loop: each wake-up moves at most kMaxBytesPerWakeup per connection
// (plus the read or write that crossed it), and the echo beside the flows answers every probe.
// Before the bound one connection moved gigabytes in one wake-up and probes were lost.
TEST(LiveServer, ABusyFlowCannotHoldTheLoop) {
  ServerThread server(ServerParams{});
  // The probe ends > 1 s before the end: every probe counts.
  const TrafficPlan plan = up_down_probe_plan(Duration::ms(1500), Duration::ms(500), Duration::s(1),
                                              Duration::ms(10), Duration::ms(450));
  ClientOptions opt;
  opt.server = loopback(server.port());
  const report::Run r = run_traffic(plan, report::RunInfo{}, opt);
  server.stop();
  const ServerStats s = server.stats();
  EXPECT_GT(s.bytes_in, kMaxBytesPerWakeup);  // the flows did reach the bound
  EXPECT_GT(s.bytes_out, kMaxBytesPerWakeup);
  EXPECT_GT(s.max_burst_bytes, 0u);
  EXPECT_LE(s.max_burst_bytes, kMaxBytesPerWakeup + kMaxDataPayload);
  const auto& p = r.latency_ms.at("udp");
  EXPECT_GT(p.rtt.count, 0u);
  EXPECT_EQ(p.rtt.lost, 0u);
  EXPECT_EQ(s.echoed, p.rtt.count);
}

TEST(LiveServer, RejectsGarbageAndOversizeLengthsWithAReason) {
  ServerThread server(ServerParams{});
  {
    Fd c = connect_to(server.port());
    const uint8_t garbage[] = {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P'};
    ASSERT_EQ(::send(c.get(), garbage, sizeof garbage, 0), 10);
    EXPECT_EQ(reject_reason(c.get()),
              "frame.length: 1195725856 exceeds the largest frame (131074)");
  }
  {
    Fd c = connect_to(server.port());
    const uint8_t big[] = {0, 0, 0x10, 0};  // 4096: larger than any control frame
    ASSERT_EQ(::send(c.get(), big, sizeof big, 0), 4);
    EXPECT_EQ(reject_reason(c.get()), "frame.length: 4096 exceeds the largest control frame (252)");
  }
  {
    Fd c = connect_to(server.port());
    std::vector<uint8_t> msg;
    encode(Request{FlowKind::kSource, 0, 1000, 100, "nosuchcc"}, msg);
    ASSERT_EQ(::send(c.get(), msg.data(), msg.size(), 0), static_cast<ssize_t>(msg.size()));
    EXPECT_EQ(reject_reason(c.get()).rfind("request.cc: 'nosuchcc' is not available here", 0), 0u);
  }
  {
    Fd c = connect_to(server.port());
    std::vector<uint8_t> msg;
    encode(Stats{}, msg);
    ASSERT_EQ(::send(c.get(), msg.data(), msg.size(), 0), static_cast<ssize_t>(msg.size()));
    EXPECT_EQ(reject_reason(c.get()), "frame.type: expected a request first");
  }
  server.stop();
  EXPECT_EQ(server.stats().rejected, 4u);
  EXPECT_EQ(server.stats().active, 0);
  EXPECT_TRUE(server.logged(": rejected: frame.length: 4096 exceeds"));
}

TEST(LiveServer, SlowlorisIsCutAfterTheRequestTimeout) {
  ServerParams p;
  p.request_timeout = Duration::ms(200);
  ServerThread server(p);
  Fd c = connect_to(server.port());
  const uint8_t part[] = {0, 0, 0};  // three bytes of a length, then nothing
  ASSERT_EQ(::send(c.get(), part, sizeof part, 0), 3);
  EXPECT_EQ(reject_reason(c.get()), "no complete request within 200 ms");
  server.stop();
  EXPECT_EQ(server.stats().timeouts, 1u);
}

// A client that asks for a source and never reads: the server's writes block, so the flow
// cannot end normally; the connection is closed `grace` after the flow's end all the same.
TEST(LiveServer, AClientThatNeverReadsIsClosedAfterTheGrace) {
  ServerParams p;
  p.grace = Duration::ms(200);
  ServerThread server(p);
  Fd c = connect_to(server.port());
  int small = 4096;  // a small receive window, so the server's send buffer fills at once
  ::setsockopt(c.get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  std::vector<uint8_t> msg;
  encode(Request{FlowKind::kSource, 0, 100, 1000, ""}, msg);
  ASSERT_EQ(::send(c.get(), msg.data(), msg.size(), 0), static_cast<ssize_t>(msg.size()));
  // Wait (bounded) for the server to give up on it; nothing is read meanwhile.
  for (int i = 0; i < 200 && !server.logged("still open"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  server.stop();
  EXPECT_EQ(server.stats().timeouts, 1u);
  EXPECT_TRUE(server.logged(": still open 200 ms after the flow's end"));
}

TEST(LiveServer, OneClientTooManyIsTurnedAway) {
  ServerParams p;
  p.max_clients = 1;
  ServerThread server(p);
  Fd first = connect_to(server.port());
  // The first connection is accepted (it holds the only slot while it sends nothing).
  Fd second = connect_to(server.port());
  EXPECT_EQ(reject_reason(second.get()), "server busy: 1 clients");
  server.stop();
  EXPECT_EQ(server.stats().rejected, 1u);
}

// NetnsTraffic's two threads (server "in host b", client "in host a") with both "hosts" being
// this process's own namespace and 127.0.0.1: setns into one's own namespace needs
// CAP_SYS_ADMIN, so this runs as root (CI) and is skipped otherwise (a failure under
// NICSIM_REQUIRE_EMU=1, nicsim/testing/require_emu.h). An ICMP probe from b
// exercises the peer-namespace socket path.
TEST(LiveNetnsTraffic, ServerAndClientThreadsInTheirNamespaces) {
  Fd self(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(self.valid());
  if (::setns(self.get(), CLONE_NEWNET) != 0) {
    NICSIM_SKIP_UNLESS_EMU_REQUIRED("setns into a network namespace needs CAP_SYS_ADMIN");
  }
  TrafficPlan plan;
  plan.duration = Duration::ms(1200);
  plan.interval = Duration::ms(400);
  plan.flows.push_back(FlowPlan{0, 1, 0, "", Duration::zero(), Duration::ms(800), "up"});
  ProbePlan ping;
  ping.name = "ping";
  ping.icmp = true;
  ping.from = 1;
  ping.to = 0;
  ping.interval = Duration::ms(20);
  ping.stop = Duration::ms(200);
  plan.probes.push_back(ping);
  NetnsHosts hosts;
  hosts.netns_a = self.get();
  hosts.netns_b = self.get();
  hosts.addr_a.s_addr = htonl(INADDR_LOOPBACK);
  hosts.addr_b.s_addr = htonl(INADDR_LOOPBACK);
  NetnsTraffic traffic(plan, report::RunInfo{}, nullptr);
  traffic.start(hosts);
  pollfd pfd{traffic.done_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 20'000), 1);  // a bound, not a timing assertion
  const report::Run r = traffic.finish();
  ASSERT_EQ(r.transfer.a_to_b.flows.size(), 1u);
  EXPECT_GT(r.transfer.a_to_b.flows[0].receiver.bytes, 0u);
  const auto& p = r.latency_ms.at("ping");
  EXPECT_EQ(p.kind, "icmp");
  EXPECT_GT(p.rtt.count, 0u);
  EXPECT_EQ(p.rtt.lost, 0u);
}

}  // namespace
}  // namespace nicsim::live
