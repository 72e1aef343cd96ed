// The steps of one emulation that run without privileges: which runs `nicsim emulate`
// emulates (emulation.h), the process control of a session with fake processes and a fake
// clock (session_control.h), and the end-of-run summary (session_summary.h).
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/emu/emulation.h"
#include "nicsim/emu/session_control.h"
#include "nicsim/emu/session_summary.h"

namespace nicsim::emu {
namespace {

config::LoadedScenario load(const std::string& traffic) {
  config::LoadOptions opts;
  opts.preset_dirs = {std::string(NICSIM_TEST_SOURCE_DIR) + "/presets"};
  opts.standard_presets = false;
  return config::load_scenario_text(
      "[scenario]\nname = \"t\"\nduration = \"2s\"\nseed = 3\n"
      "[hosts.a]\ncpu = \"x86-desktop\"\nnic = \"generic-1g\"\n"
      "[hosts.b]\ncpu = \"x86-desktop\"\nnic = \"generic-1g\"\n"
      "[wire]\nrate = \"100Mbit\"\ndelay = \"1ms\"\n" +
          traffic +
          "[vary]\n\"hosts.b.nic.bql\" = [false, true]\n\"wire.rate\" = [\"100Mbit\", "
          "\"1Gbit\"]\n",
      "t.toml", opts);
}

const std::string kPing = "[[traffic.ping]]\nfrom = \"a\"\nto = \"b\"\n";

std::vector<std::string> labels(const EmulationPlan& p) {
  std::vector<std::string> out;
  for (const config::Run& r : p.runs) {
    out.push_back(r.label);
  }
  return out;
}

TEST(PlanEmulation, OwnTrafficEmulatesEverySelectedRun) {
  EmulationRequest req;
  req.scenario_file = "t.toml";
  req.runs = report::RunSelector("bql=true");
  const EmulationPlan p = plan_emulation(load(kPing), req);
  EXPECT_TRUE(p.own_traffic);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"bql=true rate=100Mbit", "bql=true rate=1Gbit"}));
}

TEST(PlanEmulation, SelectorAcceptsCommasSpacesAndTheWholeLabel) {
  EmulationRequest req;
  req.command = true;
  for (const char* sel : {"bql=false,rate=1Gbit", "rate=1Gbit bql=false", "bql=false rate=1Gbit"}) {
    req.runs = report::RunSelector(sel);
    EXPECT_EQ(labels(plan_emulation(load(kPing), req)),
              (std::vector<std::string>{"bql=false rate=1Gbit"}))
        << sel;
  }
}

TEST(PlanEmulation, CommandNeedsExactlyOneRun) {
  EmulationRequest req;
  req.scenario_file = "t.toml";
  req.command = true;
  req.runs = report::RunSelector("bql=true");
  try {
    plan_emulation(load(kPing), req);
    FAIL() << "two runs accepted with a command";
  } catch (const EmulationRequestError& e) {
    EXPECT_NE(std::string(e.what()).find("t.toml has 2 runs ([vary]) that match"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("bql=false rate=100Mbit; bql=false rate=1Gbit"),
              std::string::npos)
        << e.what();
  }
}

TEST(PlanEmulation, RefusesWhatCannotBeDone) {
  EmulationRequest req;
  req.scenario_file = "t.toml";
  req.runs = report::RunSelector("bql=maybe");
  EXPECT_THROW(plan_emulation(load(kPing), req), EmulationRequestError);
  req.runs = report::RunSelector();
  req.pcap = true;  // a capture is one emulation
  EXPECT_THROW(plan_emulation(load(kPing), req), EmulationRequestError);
  req.pcap = false;
  req.outputs = true;  // --json without traffic to measure
  EXPECT_THROW(plan_emulation(load(""), req), EmulationRequestError);
}

// udp_flood, voip and transfers run in the live traffic engine too (issue 12): emulate plans
// them with and without a command of its own.
TEST(PlanEmulation, FloodVoipAndTransfersArePlanned) {
  EmulationRequest req;
  req.scenario_file = "t.toml";
  for (const char* kind : {"udp_flood", "voip", "transfers"}) {
    const config::LoadedScenario s =
        load(std::string("[[traffic.") + kind + "]]\nfrom = \"a\"\nto = \"b\"\n");
    req.command = false;
    EXPECT_NO_THROW(plan_emulation(s, req)) << kind;
    req.command = true;
    req.runs = report::RunSelector("bql=true,rate=1Gbit");
    EXPECT_NO_THROW(plan_emulation(s, req)) << kind;
    req.runs = report::RunSelector();
  }
}

TEST(PlanEmulation, AppliesSeedAndDurationToEveryRun) {
  EmulationRequest req;
  req.seed = 99;
  req.duration = Duration::ms(500);
  for (const config::Run& r : plan_emulation(load(kPing), req).runs) {
    EXPECT_EQ(r.scenario.seed, 99u);
    EXPECT_EQ(r.scenario.duration, Duration::ms(500));
  }
}

TEST(PlanEmulation, BusyPollLeavesRealTimeUnlessAsked) {
  LoopOptions loop;
  loop.rt_priority = 50;
  loop.busy_poll = true;
  resolve_busy_poll(loop, true);
  EXPECT_EQ(loop.rt_priority, 50);
  resolve_busy_poll(loop, false);
  EXPECT_EQ(loop.rt_priority, 0);
}

// ---- SessionControl with fake processes ----------------------------------------------------

class FakeProcesses : public SessionProcesses {
 public:
  pid_t start_command() override {
    started.push_back("command");
    return 100;
  }
  pid_t start_server() override {
    started.push_back("server");
    return 200;
  }
  void signal(pid_t pid, int sig) override { signals.emplace_back(pid, sig); }
  bool server_listening(pid_t) override { return listening; }

  std::vector<std::string> started;
  std::vector<std::pair<pid_t, int>> signals;
  bool listening = false;
};

Time at_ms(int64_t ms) { return Time::zero() + Duration::ms(ms); }

TEST(SessionControl, CommandStartsOnceTheServerListens) {
  FakeProcesses p;
  SessionControlParams params;
  params.command = params.server = true;
  std::vector<std::string> notices;
  SessionControl c(params, p, [&](const std::string& s) { notices.push_back(s); });
  c.start(at_ms(0));
  c.tick(at_ms(0));
  EXPECT_EQ(p.started, std::vector<std::string>{"server"});
  EXPECT_EQ(c.next_deadline(), at_ms(5));  // polls the server every tick
  p.listening = true;
  c.tick(at_ms(5));
  EXPECT_EQ(p.started, (std::vector<std::string>{"server", "command"}));
  // The command exits 3: the server gets SIGTERM, then the session ends with status 3.
  c.child_exited(100, 3);
  c.tick(at_ms(50));
  EXPECT_EQ(p.signals, (std::vector<std::pair<pid_t, int>>{{200, SIGTERM}}));
  EXPECT_FALSE(c.done());
  c.child_exited(200, 128 + SIGTERM);
  c.tick(at_ms(51));
  EXPECT_TRUE(c.done());
  EXPECT_EQ(c.exit_status(), 3);
  EXPECT_TRUE(notices.empty());
}

TEST(SessionControl, ServerThatNeverListensStillGetsItsCommandAfterTheWait) {
  FakeProcesses p;
  SessionControlParams params;
  params.command = params.server = true;
  params.server_wait = Duration::ms(100);
  std::vector<std::string> notices;
  SessionControl c(params, p, [&](const std::string& s) { notices.push_back(s); });
  c.start(at_ms(0));
  for (int t = 0; t < 100; t += 5) {
    c.tick(at_ms(t));
  }
  EXPECT_EQ(p.started, std::vector<std::string>{"server"});
  c.tick(at_ms(100));
  EXPECT_EQ(p.started, (std::vector<std::string>{"server", "command"}));
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("not listening after 100 ms"), std::string::npos);
}

TEST(SessionControl, ServerExitingEarlyFailsWithoutStartingTheCommand) {
  FakeProcesses p;
  SessionControlParams params;
  params.command = params.server = true;
  SessionControl c(params, p, [](const std::string&) {});
  c.start(at_ms(0));
  c.child_exited(200, 1);
  c.tick(at_ms(0));
  EXPECT_TRUE(c.done());
  EXPECT_EQ(p.started, std::vector<std::string>{"server"});
  EXPECT_EQ(c.exit_status(), 1);
}

TEST(SessionControl, SignalIsForwardedThenSurvivorsAreKilledAfterTheGrace) {
  FakeProcesses p;
  SessionControlParams params;
  params.command = true;
  params.kill_grace = Duration::s(2);
  SessionControl c(params, p, [](const std::string&) {});
  c.start(at_ms(0));
  c.interrupted(SIGINT, at_ms(10));
  c.interrupted(SIGTERM, at_ms(11));  // only the first counts
  EXPECT_EQ(p.signals, (std::vector<std::pair<pid_t, int>>{{100, SIGINT}}));
  c.tick(at_ms(1000));
  EXPECT_FALSE(c.done());
  EXPECT_EQ(c.next_deadline(), at_ms(1005));
  c.tick(at_ms(2010));
  EXPECT_TRUE(c.done());
  EXPECT_EQ(p.signals.back(), (std::pair<pid_t, int>{100, SIGKILL}));
  c.child_exited(100, 128 + SIGKILL);
  EXPECT_EQ(c.exit_status(), 128 + SIGINT);
}

TEST(SessionControl, InterruptedCommandThatExitsCleanlyKeepsItsStatus) {
  FakeProcesses p;
  SessionControlParams params;
  params.command = true;
  SessionControl c(params, p, [](const std::string&) {});
  c.start(at_ms(0));
  c.interrupted(SIGTERM, at_ms(1));
  c.child_exited(100, 0);
  c.tick(at_ms(2));
  EXPECT_TRUE(c.done());
  EXPECT_EQ(c.exit_status(), 0);
}

TEST(SessionControl, WithoutCommandRunsForTheDurationOrUntilTheWorkIsDone) {
  FakeProcesses p;
  SessionControlParams params;
  params.run_for = Duration::s(3);
  SessionControl c(params, p, [](const std::string&) {});
  c.start(at_ms(0));
  EXPECT_EQ(c.next_deadline(), at_ms(3000));
  c.tick(at_ms(2999));
  EXPECT_FALSE(c.done());
  c.tick(at_ms(3000));
  EXPECT_TRUE(c.done());
  EXPECT_EQ(c.exit_status(), 0);

  SessionControl early(params, p, [](const std::string&) {});
  early.start(at_ms(0));
  early.work_done();
  early.tick(at_ms(10));
  EXPECT_TRUE(early.done());
  EXPECT_TRUE(p.started.empty());
}

// ---- the summary ---------------------------------------------------------------------------

TEST(SessionSummary, ReportsEveryPartOfTheRun) {
  SessionResult r;
  r.elapsed_s = 2;
  r.io = "veth + AF_PACKET";
  r.interfaces = {"a", "b"};
  r.hosts = {"a", "b"};
  r.direction_labels = {"a->b", "b->a"};
  r.nics = {"stmmac", "generic-1g"};
  r.directions.resize(2);
  r.wires.resize(2);
  r.ports.resize(2);
  r.directions[0].frames_in = 10;
  r.directions[0].bytes_out = 250'000;  // 1 Mbit/s over 2 s
  r.wires[1].lost = 4;
  r.pcap_error = "disk full";
  r.ports[0].rx_dropped = 7;
  algo::Gro::Stats gro;
  gro.frames = 45;
  gro.packets = 2;
  gro.merged = 43;
  gro.largest = 44;
  r.nic_gro = {std::nullopt, gro};
  const std::string s = format_session_summary(r);
  for (const char* want :
       {"--- nicsim emulate summary ---\n", "2.00 s emulated, frame I/O: veth + AF_PACKET\n",
        "a->b: 10 frames in, 0 out (1.0 Mbit/s of frames)", "4 lost on the wire", "NIC a: stmmac\n",
        "NIC b: generic-1g\n", "pcap: disk full\n", "timer error",
        "port b:", "emulator CPU:", "loop: 0 waits", "0 truncated, 7 dropped unread\n",
        "warning: host a sent 7 frames that its kernel dropped before the emulator read them",
        "generic-1g\n  tx 0 frames",
        "  GRO: 45 frames went up the stack as 2 packets (43 merged into another, at most 44 "
        "in one)\n"}) {
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  }
  EXPECT_EQ(s.back(), '\n');
  EXPECT_EQ(s.find("GRO:"), s.rfind("GRO:"));  // only NIC b has GRO on
}

}  // namespace
}  // namespace nicsim::emu
