// The simulator and the live engine (nicsim emulate, nicsim rrul) run the same traffic for every
// shipped scenario: the same flows (direction, DSCP, times, names), the same probes and the
// same congestion control on each flow's sending socket — the sender's own tcp.cc unless the
// flow names one (config/traffic_plan.h; issue 9 found rrul downloads using host a's in live).
// New scenarios under scenarios/ are picked up without editing this test.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/config/traffic_plan.h"
#include "nicsim/live/traffic.h"
#include "nicsim/sim/simulation.h"

namespace nicsim {
namespace {

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(NICSIM_TEST_SCENARIOS_DIR)) {
    if (e.is_regular_file() && e.path().extension() == ".toml") {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// What each flow's sender runs, from the scenario itself (not from the plan).
std::string expected_cc(const config::Scenario& s, const config::FlowPlan& f) {
  for (const config::TcpFlowConfig& c : s.traffic.tcp) {
    if (c.from == s.hosts[f.from].name && c.to == s.hosts[f.to].name && c.dscp == f.dscp &&
        c.start == f.start && c.cc) {
      return *c.cc;
    }
  }
  return s.hosts[f.from].tcp.cc;
}

TEST(BackendPlan, SimulatorAndLiveRunTheSameTrafficForEveryShippedScenario) {
  const std::vector<std::string> files = shipped_scenarios();
  ASSERT_GE(files.size(), 5u) << NICSIM_TEST_SCENARIOS_DIR;
  size_t rrul_runs = 0;
  for (const std::string& file : files) {
    const config::LoadedScenario loaded = config::load_scenario_file(file);
    for (const config::Run& run : loaded.runs) {
      SCOPED_TRACE(file + " " + run.label);
      const config::Scenario& s = run.scenario;
      rrul_runs += s.traffic.rrul.empty() ? 0 : 1;
      const config::TrafficPlan sim = sim::Simulation(run).traffic();
      const live::TrafficPlan live = config::plan(s);  // what emulate hands the live engine
      ASSERT_EQ(sim.flows.size(), live.flows.size());
      for (size_t i = 0; i < sim.flows.size(); ++i) {
        const config::FlowPlan& a = sim.flows[i];
        const config::FlowPlan& b = live.flows[i];
        const live::FlowSockets sockets = live::flow_sockets(b);
        // Live: the client runs in the lower-indexed host of the pair (host 0 in a two-host
        // file) and sends the uploads; the server in the other host sends the downloads.
        const size_t client = std::min(b.from, b.to);
        const size_t server = std::max(b.from, b.to);
        EXPECT_EQ(a.from, sockets.upload ? client : server) << "flow " << i;
        EXPECT_EQ(a.to, sockets.upload ? server : client) << "flow " << i;
        EXPECT_EQ(a.dscp, b.dscp) << "flow " << i;
        EXPECT_EQ(a.start, b.start) << "flow " << i;
        EXPECT_EQ(a.stop, b.stop) << "flow " << i;
        EXPECT_EQ(a.name, b.name) << "flow " << i;
        EXPECT_EQ(a.ecn, b.ecn) << "flow " << i;
        // The congestion control each back-end sets on the sending socket, and the scenario's.
        const std::string live_cc = sockets.upload ? sockets.client_cc : sockets.server_cc;
        EXPECT_EQ(a.cc, live_cc) << "flow " << i;
        EXPECT_EQ(a.cc, expected_cc(s, a)) << "flow " << i;
        EXPECT_EQ(sockets.upload ? sockets.server_cc : sockets.client_cc, "")
            << "flow " << i << ": only the sender sets TCP_CONGESTION";
      }
      ASSERT_EQ(sim.probes.size(), live.probes.size());
      for (size_t i = 0; i < sim.probes.size(); ++i) {
        const config::ProbePlan& a = sim.probes[i];
        const config::ProbePlan& b = live.probes[i];
        EXPECT_EQ(a.name, b.name) << "probe " << i;
        EXPECT_EQ(a.icmp, b.icmp) << a.name;
        EXPECT_EQ(a.from, b.from) << a.name;
        EXPECT_EQ(a.to, b.to) << a.name;
        EXPECT_EQ(a.dscp, b.dscp) << a.name;
        EXPECT_EQ(a.interval, b.interval) << a.name;
        EXPECT_EQ(a.size, b.size) << a.name;
        EXPECT_EQ(a.start, b.start) << a.name;
        EXPECT_EQ(a.stop, b.stop) << a.name;
      }
      EXPECT_EQ(sim.phases, live.phases);
      EXPECT_EQ(sim.floods, live.floods);
      EXPECT_EQ(sim.transfer_sets, live.transfer_sets);
      EXPECT_EQ(sim.transfers, live.transfers);
      EXPECT_EQ(sim.interval, live.interval.value_or(Duration::s(1)));
    }
  }
  EXPECT_GT(rrul_runs, 0u) << "no shipped rrul scenario: the rrul expansion is untested here";
}

// rrul's client may be the second host (scenarios/examples/rrul.toml's board is the first; the
// reverse must plan too): uploads go client -> server, downloads the other way, each with its
// sender's congestion control, probes in flent's order.
TEST(BackendPlan, RrulFromTheSecondHostUsesEachSendersCongestionControl) {
  config::Scenario s;
  s.duration = Duration::s(10);
  s.hosts.resize(2);
  s.hosts[0].name = "pc";
  s.hosts[0].tcp.cc = "cubic";
  s.hosts[1].name = "board";
  s.hosts[1].tcp.cc = "reno";
  config::RrulConfig r;
  r.from = "board";
  r.to = "pc";
  r.idle = Duration::s(1);
  r.load = Duration::s(3);
  s.traffic.rrul.push_back(r);
  const config::TrafficPlan p = config::plan(s);
  ASSERT_EQ(p.flows.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const bool upload = i < 4;
    EXPECT_EQ(p.flows[i].from, upload ? 1u : 0u);
    EXPECT_EQ(p.flows[i].cc, upload ? "reno" : "cubic") << p.flows[i].name;
    EXPECT_EQ(live::flow_sockets(p.flows[i]).upload, !upload);
  }
  std::vector<std::string> names;
  for (const auto& probe : p.probes) {
    names.push_back(probe.name);
    EXPECT_EQ(probe.from, 1u);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"udp_ef", "udp_bk", "udp_be", "ping"}));
}

}  // namespace
}  // namespace nicsim
