// Emulator tests that need root: namespaces, veth + AF_PACKET and TAP frame I/O, the
// leftover registry, whole sessions with commands. Without root (or without network
// namespaces) every test is skipped with the reason — unless NICSIM_REQUIRE_EMU=1 (CI), where
// that is a failure. Namespace names use the prefix "nicsimtest" so the tests never touch a
// real emulator's namespaces. No timed assertions: frames must arrive intact and in order,
// never "within X µs".
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/emu/datapath.h"
#include "nicsim/emu/event_loop.h"
#include "nicsim/emu/frame_pool.h"
#include "nicsim/emu/netns.h"
#include "nicsim/emu/packet_port.h"
#include "nicsim/emu/process.h"
#include "nicsim/emu/real_clock.h"
#include "nicsim/emu/session.h"
#include "nicsim/emu/tap_port.h"
#include "nicsim/emu/topology.h"
#include "nicsim/emu/wire_only_nic.h"
#include "nicsim/testing/require_emu.h"

namespace nicsim::emu {
namespace {

using namespace nicsim::literals;

constexpr const char* kPrefix = "nicsimtest";

// "" when the emulator can run here, else why not.
std::string why_not() {
  if (std::string p = privilege_problem(); !p.empty()) {
    return p;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::_exit(::unshare(CLONE_NEWNET) == 0 ? 0 : 1);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    return "network namespaces are not available (unshare(CLONE_NEWNET) failed)";
  }
  return "";
}

#define REQUIRE_EMU()                            \
  do {                                           \
    static const std::string reason = why_not(); \
    if (!reason.empty()) {                       \
      NICSIM_SKIP_UNLESS_EMU_REQUIRED(reason);   \
    }                                            \
  } while (0)

bool netns_exists(const std::string& name) {
  struct stat st {};
  return ::stat((std::string(kNetnsDir) + "/" + name).c_str(), &st) == 0;
}

// An AF_PACKET socket on `ifname` inside namespace `netns_fd`: the test's stand-in for a host
// kernel sending and receiving raw frames.
UniqueFd raw_socket(int netns_fd, const std::string& ifname) {
  NetnsGuard in(netns_fd);
  UniqueFd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)));
  EXPECT_TRUE(fd.valid());
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = static_cast<int>(::if_nametoindex(ifname.c_str()));
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&sll), sizeof sll), 0);
  int one = 1;
  ::setsockopt(fd.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  return fd;
}

// An Ethernet frame from a to b with an experimental EtherType (0x88b5, IEEE 802 local
// experimental) and a recognisable payload, so the hosts' stacks ignore it.
std::vector<uint8_t> test_frame(const HostEnd& from, const HostEnd& to, uint8_t seq, size_t len) {
  std::vector<uint8_t> f(len, 0);
  std::memcpy(f.data(), to.mac.data(), 6);
  std::memcpy(f.data() + 6, from.mac.data(), 6);
  f[12] = 0x88;
  f[13] = 0xb5;
  for (size_t i = 14; i < len; ++i) {
    f[i] = static_cast<uint8_t>(seq + i);
  }
  return f;
}

uint32_t ethtool_get(int netns_fd, const std::string& ifname, uint32_t cmd) {
  NetnsGuard in(netns_fd);
  UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ethtool_value v{};
  v.cmd = cmd;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(&v);
  if (::ioctl(s.get(), SIOCETHTOOL, &ifr) != 0) {
    return 0xffffffff;
  }
  return v.data;
}

TEST(Topology, BuildsAndRemovesNamespacesWithOffloadsOff) {
  REQUIRE_EMU();
  std::vector<std::string> names;
  {
    auto topo =
        Topology::create({.io = FrameIo::kPacket, .prefix = kPrefix, .mtu = 1500, .hosts = {}});
    names = topo->namespaces();
    ASSERT_EQ(names.size(), 3u);
    for (const auto& n : names) {
      EXPECT_TRUE(netns_exists(n)) << n;
      EXPECT_TRUE(parse_netns_name(kPrefix, n)) << n;
    }
    EXPECT_EQ(topo->host(0).addr_string(), "198.18.0.1");
    EXPECT_EQ(topo->host(1).addr_string(), "198.18.0.2");
    for (size_t i = 0; i < 2; ++i) {
      const HostEnd& h = topo->host(i);
      EXPECT_EQ(ethtool_get(h.netns_fd.get(), h.ifname, ETHTOOL_GTXCSUM), 0u);
      EXPECT_EQ(ethtool_get(h.netns_fd.get(), h.ifname, ETHTOOL_GTSO), 0u);
      EXPECT_EQ(ethtool_get(h.netns_fd.get(), h.ifname, ETHTOOL_GGSO), 0u);
      EXPECT_EQ(ethtool_get(h.netns_fd.get(), h.ifname, ETHTOOL_GGRO), 0u);
      EXPECT_EQ(ethtool_get(topo->switch_netns_fd(), h.port_ifname, ETHTOOL_GTXCSUM), 0u);
    }
  }
  for (const auto& n : names) {
    EXPECT_FALSE(netns_exists(n)) << n << " left behind";
  }
}

// Leftovers of a creator that is gone are removed (and processes inside them killed); the
// namespaces of a live creator are not.
TEST(Registry, RemovesLeftoversOfDeadCreatorsOnly) {
  REQUIRE_EMU();
  const pid_t dead = ::fork();
  if (dead == 0) {
    ::_exit(0);
  }
  ::waitpid(dead, nullptr, 0);
  const std::string stale = netns_name(kPrefix, dead, "a");
  UniqueFd stale_fd = create_named_netns(stale);
  // A process living inside the stale namespace.
  const pid_t sleeper = spawn_in_netns({{"sleep", "30"}, stale_fd.get(), {}});
  stale_fd.reset();
  // Until the child has called setns it is still in our namespace: wait for it to be inside.
  const auto stale_inode = netns_inode(std::string(kNetnsDir) + "/" + stale);
  ASSERT_TRUE(stale_inode);
  for (int i = 0; i < 500; ++i) {
    const auto in = netns_inode("/proc/" + std::to_string(sleeper) + "/ns/net");
    if (in == stale_inode) {
      break;
    }
    ::usleep(10'000);
  }
  // Our own, alive (we hold its fd).
  const std::string mine = netns_name(kPrefix, ::getpid(), "x");
  UniqueFd mine_fd = create_named_netns(mine);

  // Only what this test created is compared: a killed earlier run may have left namespaces of
  // its own dead creator, which are rightly removed too.
  const auto removed = remove_stale_namespaces(kPrefix);
  EXPECT_EQ(std::count(removed.begin(), removed.end(), stale), 1)
      << ::testing::PrintToString(removed);
  EXPECT_EQ(std::count(removed.begin(), removed.end(), mine), 0)
      << ::testing::PrintToString(removed);
  for (const std::string& n : removed) {
    const auto parsed = parse_netns_name(kPrefix, n);
    ASSERT_TRUE(parsed) << n;
    EXPECT_NE(::kill(parsed->pid, 0), 0) << n << ": its creator is alive";
  }
  EXPECT_FALSE(netns_exists(stale));
  EXPECT_TRUE(netns_exists(mine));
  int st = 0;
  ASSERT_EQ(::waitpid(sleeper, &st, 0), sleeper);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

  mine_fd.reset();
  EXPECT_TRUE(remove_named_netns(mine));
  EXPECT_FALSE(netns_exists(mine));
}

// Raw frames sent by "host a" cross the emulated wire and arrive at "host b" byte for byte,
// in order, through both frame-I/O implementations.
class FrameIoTest : public ::testing::TestWithParam<FrameIo> {};

TEST_P(FrameIoTest, FramesCrossIntactAndInOrder) {
  REQUIRE_EMU();
  auto topo = Topology::create({.io = GetParam(), .prefix = kPrefix, .mtu = 1500, .hosts = {}});
  FramePool pool;
  std::array<std::unique_ptr<FramePort>, 2> ports;
  for (size_t i = 0; i < 2; ++i) {
    HostEnd& h = topo->host(i);
    if (GetParam() == FrameIo::kPacket) {
      ports[i] = std::make_unique<PacketPort>(topo->switch_netns_fd(), h.port_ifname, pool);
    } else {
      ports[i] = std::make_unique<TapPort>(std::move(h.tap_fd), h.ifname, pool);
    }
  }
  model::Wire::Params w;
  w.rate = Rate::mbit(100);
  w.delay = 1_ms;
  std::array<std::unique_ptr<model::Nic>, 2> nics = {
      std::make_unique<WireOnlyNic>(WireOnlyNic::Params{}),
      std::make_unique<WireOnlyNic>(WireOnlyNic::Params{})};
  Datapath dp({ports[0].get(), ports[1].get()}, std::move(nics), {w, w});

  UniqueFd tx = raw_socket(topo->host(0).netns_fd.get(), topo->host(0).ifname);
  UniqueFd rx = raw_socket(topo->host(1).netns_fd.get(), topo->host(1).ifname);
  constexpr int kFrames = 50;
  std::vector<std::vector<uint8_t>> sent;
  for (int i = 0; i < kFrames; ++i) {
    sent.push_back(test_frame(topo->host(0), topo->host(1), static_cast<uint8_t>(i),
                              60 + static_cast<size_t>(i) * 29));
    ASSERT_EQ(::send(tx.get(), sent.back().data(), sent.back().size(), 0),
              static_cast<ssize_t>(sent.back().size()));
  }
  RealClock clock;
  EventLoop loop(clock, {});
  loop.add(ports[0]->fd(), 0);
  loop.add(ports[1]->fd(), 1);
  loop.add(rx.get(), 7);
  std::vector<std::vector<uint8_t>> got;
  const Time give_up = clock.now() + 5_s;  // a bound on a failing test, not an assertion
  while (got.size() < sent.size() && clock.now() < give_up) {
    std::optional<Time> deadline = dp.next_event();
    const Time tick = clock.now() + 100_ms;
    if (!deadline || *deadline > tick) {
      deadline = tick;
    }
    std::vector<bool> ready{false, false};
    for (uint32_t token : loop.wait(deadline)) {
      if (token < 2) {
        ready[token] = true;
      }
    }
    dp.receive(ready, clock.now(), clock.realtime_minus_time_ns());
    dp.service(clock.now());
    uint8_t buf[2048];
    for (;;) {
      const ssize_t n = ::recv(rx.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) {
        break;
      }
      if (n >= 14 && buf[12] == 0x88 && buf[13] == 0xb5) {
        got.emplace_back(buf, buf + n);
      }
    }
  }
  ASSERT_EQ(got.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(got[i], sent[i]) << "frame " << i;
  }
  EXPECT_EQ(dp.stats(0).frames_out, static_cast<uint64_t>(kFrames));
  EXPECT_EQ(dp.release_lateness().count(), static_cast<uint64_t>(kFrames));
}

// Frames the host sends while the emulator does not read are not lost silently: the port's
// queue (AF_PACKET socket buffer, 8 MiB; the TAP device's 500-frame queue) overflows, and the
// kernel's count of what it dropped reaches the port's stats as rx_dropped.
TEST_P(FrameIoTest, FramesDroppedBeforeTheyWereReadAreCounted) {
  REQUIRE_EMU();
  auto topo = Topology::create({.io = GetParam(), .prefix = kPrefix, .mtu = 1500, .hosts = {}});
  FramePool pool;
  HostEnd& a = topo->host(0);
  std::unique_ptr<FramePort> port;
  if (GetParam() == FrameIo::kPacket) {
    port = std::make_unique<PacketPort>(topo->switch_netns_fd(), a.port_ifname, pool);
  } else {
    port = std::make_unique<TapPort>(std::move(a.tap_fd), a.ifname, pool,
                                     TapPort::Params{.netns_fd = a.netns_fd.get()});
  }
  UniqueFd tx = raw_socket(a.netns_fd.get(), a.ifname);
  // ~11 k small frames fill 8 MiB of socket buffer (each is charged its skb's truesize).
  constexpr uint64_t kFrames = 40000;
  const std::vector<uint8_t> frame = test_frame(a, topo->host(1), 1, 60);
  for (uint64_t i = 0; i < kFrames; ++i) {
    ASSERT_EQ(::send(tx.get(), frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size()));
  }
  std::array<Packet, 64> got;
  std::array<int64_t, 64> stamps{};
  uint64_t read = 0;
  while (size_t n = port->receive(got.data(), stamps.data(), got.size())) {
    read += n;
  }
  port->update_kernel_counters();
  const uint64_t dropped = port->stats().rx_dropped;
  EXPECT_GT(dropped, 0u) << "read " << read;
  EXPECT_LT(read, kFrames);
  // Every frame sent was either read or counted (the host may add its own, e.g. IPv6 MLD).
  EXPECT_GE(read + dropped, kFrames);
  EXPECT_LE(dropped, kFrames);
  port->update_kernel_counters();  // PACKET_STATISTICS resets: the count must not double
  EXPECT_EQ(port->stats().rx_dropped, dropped);
}

INSTANTIATE_TEST_SUITE_P(Io, FrameIoTest, ::testing::Values(FrameIo::kPacket, FrameIo::kTap),
                         [](const auto& p) { return std::string(to_string(p.param)); });

config::Run scenario_run() {
  config::LoadOptions opts;
  opts.preset_dirs = {std::string(NICSIM_TEST_SOURCE_DIR) + "/presets"};
  opts.standard_presets = false;
  return config::load_scenario_text(R"([scenario]
name = "t"
duration = "200ms"
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"
[wire]
rate = "100Mbit"
delay = "1ms"
)",
                                    "t.toml", opts)
      .runs[0];
}

// The command's exit status is the session's; the command sees NICSIM_PEER and runs in host
// a's namespace (its only non-loopback address is 198.18.0.1); nothing is left afterwards.
TEST(Session, CommandStatusEnvironmentAndCleanup) {
  REQUIRE_EMU();
  SessionOptions opt;
  opt.prefix = kPrefix;
  opt.command = {"/bin/sh", "-c",
                 "test \"$NICSIM_PEER\" = 198.18.0.2 && test \"$NICSIM_HOST\" = a && "
                 "grep -q nsim0 /proc/net/dev && exit 3"};
  const SessionResult r = run_session(scenario_run(), opt);
  EXPECT_EQ(r.exit_status, 3);
  EXPECT_EQ(r.signal, 0);
  ASSERT_EQ(r.namespaces.size(), 3u);
  for (const auto& n : r.namespaces) {
    EXPECT_FALSE(netns_exists(n)) << n << " left behind";
  }
}

TEST(Session, MissingCommandExits127) {
  REQUIRE_EMU();
  SessionOptions opt;
  opt.prefix = kPrefix;
  opt.command = {"/nonexistent/nicsim-test-command"};
  EXPECT_EQ(run_session(scenario_run(), opt).exit_status, 127);
}

// Without a command the session lasts the scenario's duration (200 ms), in tap mode too.
TEST(Session, WithoutCommandRunsForTheDuration) {
  REQUIRE_EMU();
  SessionOptions opt;
  opt.prefix = kPrefix;
  opt.io = FrameIo::kTap;
  const SessionResult r = run_session(scenario_run(), opt);
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_GE(r.elapsed_s, 0.2);
  ASSERT_EQ(r.namespaces.size(), 2u);  // TAP: the two hosts, no switch namespace
  for (const auto& n : r.namespaces) {
    EXPECT_FALSE(netns_exists(n)) << n << " left behind";
  }
}

// A server that exits before listening stops the session with status 1 and the command never
// runs.
TEST(Session, ServerThatNeverListens) {
  REQUIRE_EMU();
  SessionOptions opt;
  opt.prefix = kPrefix;
  opt.server = {"/bin/sh", "-c", "exit 0"};
  opt.command = {"/bin/sh", "-c", "exit 5"};
  std::vector<std::string> notices;
  opt.notice = [&](const std::string& s) { notices.push_back(s); };
  const SessionResult r = run_session(scenario_run(), opt);
  EXPECT_EQ(r.exit_status, 1);
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices.back().find("server exited"), std::string::npos);
}

// scenario_run() as a network: a - r - b, router r with interfaces lan and wan (the hosts' NIC,
// qdisc and CPU), both links the same wire. Built in code, as config::network_of takes it.
config::Run network_run() {
  config::Run run = scenario_run();
  config::Scenario& s = run.scenario;
  config::RouterConfig r;
  r.name = "r";
  r.cpu_preset = s.hosts[0].cpu_preset;
  r.cpu = s.hosts[0].cpu;
  for (const char* name : {"lan", "wan"}) {
    config::RouterInterfaceConfig i;
    i.name = name;
    i.nic = s.hosts[0].nic;
    i.qdisc = s.hosts[0].qdisc;
    r.interfaces.push_back(i);
  }
  s.routers = {r};
  config::LinkConfig l0{{"a", "r.lan"}, s.wire, s.wire};
  config::LinkConfig l1{{"r.wan", "b"}, s.wire, s.wire};
  s.links = {l0, l1};
  return run;
}

// Host a's kernel reaches host b's through the router in the data path: a is 198.18.0.1 with a
// default route via r.lan (198.18.0.2), $NICSIM_HOST_b and $NICSIM_PEER are b's 198.18.1.2, all
// five replies come back with TTL 63 (b sent 64; r decremented it), and pings with TTL 1 die at
// r. The router counts 10 forwarded frames and 2 expired; the three namespaces are gone after.
TEST(Session, NetworkRouterForwardsBetweenNamespaces) {
  REQUIRE_EMU();
  if (::access("/usr/bin/ping", X_OK) != 0 && ::access("/bin/ping", X_OK) != 0) {
    GTEST_SKIP() << "ping is not installed";
  }
  SessionOptions opt;
  opt.prefix = kPrefix;
  opt.command = {"/bin/sh", "-c",
                 "ip route show default | grep -q 'via 198.18.0.2' || exit 11; "
                 "test \"$NICSIM_HOST_b\" = 198.18.1.2 && test \"$NICSIM_PEER\" = 198.18.1.2 || "
                 "exit 12; "
                 "n=$(ping -n -c 5 -i 0.05 -W 2 \"$NICSIM_HOST_b\" | grep -c 'ttl=63 '); "
                 "test \"$n\" = 5 || exit 13; "
                 "ping -n -c 2 -i 0.05 -W 1 -t 1 \"$NICSIM_HOST_b\" >/dev/null && exit 14; exit 0"};
  const SessionResult r = run_session(network_run(), opt);
  EXPECT_EQ(r.exit_status, 0) << "11: no default route, 12: environment, 13: TTL or loss, "
                                 "14: TTL 1 answered";
  ASSERT_EQ(r.routers.size(), 1u);
  EXPECT_EQ(r.routers[0].name, "r");
  EXPECT_EQ(r.routers[0].stats.forwarded, 10u);
  EXPECT_EQ(r.routers[0].stats.ttl_expired, 2u);
  EXPECT_EQ(r.routers[0].stats.no_route, 0u);
  ASSERT_EQ(r.direction_labels.size(), 4u);
  EXPECT_EQ(r.direction_labels[0], "a->r.lan");
  ASSERT_EQ(r.namespaces.size(), 3u);
  for (const auto& n : r.namespaces) {
    EXPECT_FALSE(netns_exists(n)) << n << " left behind";
  }
}

}  // namespace
}  // namespace nicsim::emu
