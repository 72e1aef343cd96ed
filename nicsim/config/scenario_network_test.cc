// Scenario files with a network (network.h, docs/scenarios.md "Networks"): [routers.<r>],
// [[links]] with per-direction overrides, [[routes]]; [vary] on their keys; the dump round trip;
// and every error the loader reports for a network, at file:line:column and the key path.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nicsim/config/network.h"
#include "nicsim/config/scenario.h"
#include "nicsim/config/traffic_plan.h"

namespace nicsim::config {
namespace {

LoadOptions test_options() {
  LoadOptions o;
  o.preset_dirs = {NICSIM_TEST_PRESETS_DIR};
  o.standard_presets = false;
  return o;
}

LoadedScenario load(const std::string& text) {
  return load_scenario_text(text, "scenarios/n.toml", test_options());
}

std::string error_of(const std::string& text) {
  try {
    load(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A dumbbell: s1, s2 -> r1 -> (bottleneck) -> r2 -> d1, d2. Line numbers matter to the error
// tests: each line of kDumbbell is one line of the file.
const std::vector<std::string> kDumbbell = {
    "[scenario]",                                             // 1
    "name = \"dumbbell\"",                                    // 2
    "duration = \"10s\"",                                     // 3
    "[hosts.s1]",                                             // 4
    "cpu = \"x86-desktop\"",                                  // 5
    "nic = \"generic-1g\"",                                   // 6
    "[hosts.s2]",                                             // 7
    "cpu = \"x86-desktop\"",                                  // 8
    "nic = \"generic-1g\"",                                   // 9
    "[hosts.d1]",                                             // 10
    "cpu = \"x86-desktop\"",                                  // 11
    "nic = \"generic-1g\"",                                   // 12
    "[hosts.d2]",                                             // 13
    "cpu = \"x86-desktop\"",                                  // 14
    "nic = \"generic-1g\"",                                   // 15
    "[routers.r1]",                                           // 16
    "cpu = \"arm-cortex-a5\"",                                // 17
    "[routers.r1.interfaces.s1]",                             // 18
    "nic = \"generic-1g\"",                                   // 19
    "[routers.r1.interfaces.s2]",                             // 20
    "nic = \"generic-1g\"",                                   // 21
    "[routers.r1.interfaces.wan]",                            // 22
    "nic = \"generic-1g\"",                                   // 23
    "qdisc = { kind = \"pfifo\", limit = 100 }",              // 24
    "[routers.r2]",                                           // 25
    "cpu = \"x86-desktop\"",                                  // 26
    "[routers.r2.interfaces.wan]",                            // 27
    "nic = { preset = \"generic-1g\", tx_ring_size = 128 }",  // 28
    "[routers.r2.interfaces.d1]",                             // 29
    "nic = \"generic-1g\"",                                   // 30
    "[routers.r2.interfaces.d2]",                             // 31
    "nic = \"generic-1g\"",                                   // 32
    "[[links]]",                                              // 33
    "ends = [\"s1\", \"r1.s1\"]",                             // 34
    "rate = \"1Gbit\"",                                       // 35
    "delay = \"1ms\"",                                        // 36
    "[[links]]",                                              // 37
    "ends = [\"s2\", \"r1.s2\"]",                             // 38
    "rate = \"1Gbit\"",                                       // 39
    "delay = \"20ms\"",                                       // 40
    "[[links]]",                                              // 41
    "ends = [\"r1.wan\", \"r2.wan\"]",                        // 42
    "rate = \"100Mbit\"",                                     // 43
    "delay = \"5ms\"",                                        // 44
    "reverse = { rate = \"10Mbit\", loss = \"1%\" }",         // 45
    "[[links]]",                                              // 46
    "ends = [\"r2.d1\", \"d1\"]",                             // 47
    "rate = \"1Gbit\"",                                       // 48
    "delay = \"1ms\"",                                        // 49
    "[[links]]",                                              // 50
    "ends = [\"r2.d2\", \"d2\"]",                             // 51
    "rate = \"1Gbit\"",                                       // 52
    "delay = \"1ms\"",                                        // 53
    "[[traffic.tcp]]",                                        // 54
    "from = \"s1\"",                                          // 55
    "to = \"d1\"",                                            // 56
    "[[traffic.tcp]]",                                        // 57
    "from = \"s2\"",                                          // 58
    "to = \"d2\"",                                            // 59
};

// kDumbbell with line `n` (1-based) replaced by `with` (may span lines), plus `tail`.
std::string dumbbell(int n = 0, const std::string& with = "", const std::string& tail = "") {
  std::string out;
  for (size_t i = 0; i < kDumbbell.size(); ++i) {
    out += (static_cast<int>(i) + 1 == n ? with : kDumbbell[i]) + "\n";
  }
  return out + tail;
}

TEST(ScenarioNetwork, ParsesRoutersLinksAndRoutes) {
  const Scenario s =
      load(dumbbell(0, "", "[[routes]]\nnode = \"r1\"\nto = \"d2\"\nvia = \"wan\"\n"))
          .runs.at(0)
          .scenario;
  ASSERT_EQ(s.hosts.size(), 4u);
  ASSERT_EQ(s.routers.size(), 2u);
  EXPECT_EQ(s.routers[0].name, "r1");
  EXPECT_EQ(s.routers[0].cpu_preset, "arm-cortex-a5");
  ASSERT_EQ(s.routers[0].interfaces.size(), 3u);
  // In the order written, not sorted.
  EXPECT_EQ(s.routers[1].interfaces[0].name, "wan");
  EXPECT_EQ(s.routers[1].interfaces[1].name, "d1");
  EXPECT_EQ(s.routers[0].interfaces[2].qdisc.kind(), "pfifo");
  EXPECT_EQ(s.routers[1].interfaces[0].nic.preset, "generic-1g");
  ASSERT_EQ(s.links.size(), 5u);
  EXPECT_EQ(s.links[2].ends[0], "r1.wan");
  EXPECT_EQ(s.links[2].forward.rate, Rate::mbit(100));
  EXPECT_EQ(s.links[2].reverse.rate, Rate::mbit(10));
  EXPECT_EQ(s.links[2].forward.loss_ppb, 0);
  EXPECT_EQ(s.links[2].reverse.loss_ppb, 10'000'000);
  EXPECT_EQ(s.links[2].reverse.delay, Duration::ms(5));  // the shared key
  ASSERT_EQ(s.routes.size(), 1u);
  EXPECT_EQ(s.routes[0], (RouteConfig{"r1", "d2", "wan"}));
}

TEST(ScenarioNetwork, DumpRoundTripsANetwork) {
  const Scenario s =
      load(dumbbell(0, "", "[[routes]]\nnode = \"r1\"\nto = \"d2\"\nvia = \"wan\"\n"))
          .runs.at(0)
          .scenario;
  const std::string text = dump(s);
  EXPECT_EQ(text.find("[wire]"), std::string::npos);
  const Scenario back = load(text).runs.at(0).scenario;
  EXPECT_EQ(back, s);
  EXPECT_EQ(dump(back), text);
}

// A router's cpu takes the router-only costs a host refuses, and its dump keeps them.
TEST(ScenarioNetwork, ARouterCpuTakesTheRouterCosts) {
  const Scenario s = load(dumbbell(17,
                                   "cpu = { preset = \"arm-cortex-a5\", per_forward = \"7us\", "
                                   "per_qdisc_op = \"3us\" }"))
                         .runs.at(0)
                         .scenario;
  EXPECT_EQ(s.routers[0].cpu.per_forward, Duration::us(7));
  EXPECT_EQ(s.routers[0].cpu.per_qdisc_op, Duration::us(3));
  EXPECT_EQ(load(dump(s)).runs.at(0).scenario, s);
}

TEST(ScenarioNetwork, EqualityNoticesRoutersLinksAndRoutes) {
  const Scenario s = load(dumbbell()).runs.at(0).scenario;
  Scenario t = s;
  t.routers[0].interfaces[2].qdisc = QdiscConfig::of_kind("bfifo");
  EXPECT_FALSE(t == s);
  t = s;
  t.links[2].reverse.jitter = Duration::ms(1);
  EXPECT_FALSE(t == s);
  t = s;
  t.routes.push_back(RouteConfig{"r1", "d1", "s1"});
  EXPECT_FALSE(t == s);
}

TEST(ScenarioNetwork, VaryReachesLinkAndRouterKeys) {
  const LoadedScenario l =
      load(dumbbell(0, "",
                    "[vary]\n\"links[2].reverse.rate\" = [\"5Mbit\", \"20Mbit\"]\n"
                    "\"routers.r1.interfaces.wan.qdisc.limit\" = [10, 1000]\n"
                    "\"routers.r2.interfaces.wan.nic\" = [\"generic-10g\"]\n"));
  ASSERT_EQ(l.runs.size(), 4u);
  EXPECT_EQ(l.runs[0].label, "rate=5Mbit limit=10 nic=generic-10g");
  const Scenario& s = l.runs[3].scenario;
  EXPECT_EQ(s.links[2].reverse.rate, Rate::mbit(20));
  EXPECT_EQ(s.links[2].forward.rate, Rate::mbit(100));
  EXPECT_EQ(s.routers[0].interfaces[2].qdisc.kind(), "pfifo");
  EXPECT_EQ(s.routers[1].interfaces[0].nic.preset, "generic-10g");
  EXPECT_EQ(s.routers[1].interfaces[0].nic.platform.tx_ring_size, 128);  // the override stays
  EXPECT_EQ(load(dump(s)).runs.at(0).scenario, s);
}

// A brace group sets several keys to one value per run: both ends of a bottleneck get the same
// qdisc (scenarios/qdiscs/rrul-by-qdisc.toml).
TEST(ScenarioNetwork, VaryBraceGroupSetsEveryKeyItNames) {
  const LoadedScenario l =
      load(dumbbell(0, "",
                    "[vary]\n\"routers.{r1,r2}.interfaces.wan.qdisc\" = [\"fq_codel\", \"pie\"]\n"
                    "\"links[{0,1}].delay\" = [\"2ms\"]\n"));
  ASSERT_EQ(l.runs.size(), 2u);
  EXPECT_EQ(l.scenario.vary[0].short_name, "qdisc");
  EXPECT_EQ(l.runs[1].label, "qdisc=pie delay=2ms");
  for (const config::Run& r : l.runs) {
    const Scenario& s = r.scenario;
    EXPECT_EQ(s.routers[0].interfaces[2].qdisc.kind(), s.routers[1].interfaces[0].qdisc.kind());
    EXPECT_EQ(s.links[0].forward.delay, Duration::ms(2));
    EXPECT_EQ(s.links[1].forward.delay, Duration::ms(2));
    EXPECT_EQ(s.links[2].forward.delay, Duration::ms(5));
  }
  EXPECT_EQ(l.runs[1].scenario.routers[0].interfaces[2].qdisc.kind(), "pie");
  EXPECT_EQ(l.runs[1].params[0].first, "routers.{r1,r2}.interfaces.wan.qdisc");
  EXPECT_EQ(load(dump(l.scenario)).scenario.vary, l.scenario.vary);  // the key stays quoted
}

// Traffic between any two hosts of a network: plan() by host index, recorder_layout() with the
// hosts' names and a->b for a sender written before its receiver; rrul with any client/server.
TEST(ScenarioNetwork, PlansTrafficBetweenAnyHosts) {
  const Scenario s = load(dumbbell(0, "",
                                   "[[traffic.rrul]]\nfrom = \"d2\"\nto = \"s1\"\nidle = \"1s\"\n"
                                   "load = \"2s\"\n"))
                         .runs.at(0)
                         .scenario;
  const TrafficPlan p = plan(s);
  EXPECT_TRUE(p.network);
  EXPECT_EQ(p.hosts, (std::vector<std::string>{"s1", "s2", "d1", "d2"}));
  ASSERT_EQ(p.flows.size(), 2u + 8u);
  EXPECT_EQ(p.flows[0].from, 0u);  // s1 -> d1
  EXPECT_EQ(p.flows[0].to, 2u);
  EXPECT_EQ(p.flows[1].from, 1u);  // s2 -> d2
  EXPECT_EQ(p.flows[1].to, 3u);
  EXPECT_EQ(p.flows[2].name, "TCP upload BE");  // rrul: uploads client d2 -> server s1
  EXPECT_EQ(p.flows[2].from, 3u);
  EXPECT_EQ(p.flows[2].to, 0u);
  EXPECT_EQ(p.flows[6].from, 0u);  // downloads s1 -> d2
  const report::RunLayout l = recorder_layout(p, report::kDefaultInterval);
  EXPECT_TRUE(l.network);
  EXPECT_EQ(l.flows[0].dir, report::Direction::kAtoB);
  EXPECT_EQ(l.flows[0].from, "s1");
  EXPECT_EQ(l.flows[0].to, "d1");
  EXPECT_EQ(l.flows[2].dir, report::Direction::kBtoA);  // d2 was written after s1
  EXPECT_EQ(l.flows[2].from, "d2");
  ASSERT_EQ(l.probes.size(), 4u);  // rrul's probes: client d2 -> server s1
  EXPECT_EQ(l.probes.front().from, "d2");
  EXPECT_EQ(l.probes.front().to, "s1");
  EXPECT_EQ(l.probes.front().dir, report::Direction::kBtoA);
}

// The two-host form's layout names no hosts: its results keep the fields they had.
TEST(ScenarioNetwork, TwoHostLayoutNamesNoHosts) {
  const Scenario s = load(
                         "[scenario]\nname = \"t\"\nduration = \"1s\"\n[hosts.a]\ncpu = "
                         "\"x86-desktop\"\nnic = \"generic-1g\"\n[hosts.b]\ncpu = "
                         "\"x86-desktop\"\nnic = \"generic-1g\"\n[wire]\nrate = \"1Gbit\"\n"
                         "delay = \"1ms\"\n[[traffic.tcp]]\nfrom = \"b\"\nto = \"a\"\n")
                         .runs.at(0)
                         .scenario;
  const report::RunLayout l = recorder_layout(plan(s), report::kDefaultInterval);
  EXPECT_FALSE(l.network);
  ASSERT_EQ(l.flows.size(), 1u);
  EXPECT_EQ(l.flows[0].dir, report::Direction::kBtoA);
  EXPECT_EQ(l.flows[0].from, "");
}

// docs/scenarios.md's dumbbell (the block after the "network example" marker) is the testdata
// file's network.
TEST(ScenarioNetwork, TheDocumentedDumbbellLoads) {
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string doc = read(NICSIM_TEST_DOCS_DIR "/scenarios.md");
  const size_t marker = doc.find("<!-- network example:");
  ASSERT_NE(marker, std::string::npos);
  const size_t begin = doc.find("```toml\n", marker);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```\n", begin + 8);
  ASSERT_NE(end, std::string::npos);
  Scenario documented = load(doc.substr(begin + 8, end - begin - 8)).scenario;
  const Scenario file =
      load(read(std::string(NICSIM_TEST_SCENARIOS_DIR) + "/dumbbell.toml")).scenario;
  documented.description = file.description;
  EXPECT_EQ(documented, file);
  EXPECT_EQ(file.links.size(), 5u);
}

TEST(ScenarioNetworkErrors, Sections) {
  EXPECT_EQ(error_of(dumbbell(0, "", "[wire]\nrate = \"1Gbit\"\ndelay = \"1ms\"\n")),
            "scenarios/n.toml:60:2: wire: [wire] is the two-host form's link; with [[links]] set "
            "rate, delay, loss and jitter on each link");
  EXPECT_EQ(error_of(dumbbell(0, "",
                              "[routers.d1]\ncpu = \"x86-desktop\"\n[routers.d1.interfaces.x]\n"
                              "nic = \"generic-1g\"\n")),
            "scenarios/n.toml:60:10: routers.d1: the name 'd1' is used by another host or router");
  EXPECT_EQ(error_of(dumbbell(0, "", "[routers.r3]\ncpu = \"x86-desktop\"\n")),
            "scenarios/n.toml:60:10: routers.r3: a router needs at least one interface");
  EXPECT_EQ(error_of(dumbbell(19, "nic = \"generic-1g\"\nqdisk = \"pfifo\"")),
            "scenarios/n.toml:20:1: routers.r1.interfaces.s1.qdisk: unknown key (did you mean "
            "'qdisc'?)");
  EXPECT_EQ(error_of(dumbbell(17, "")), "scenarios/n.toml:16:1: routers.r1.cpu: required");
  EXPECT_EQ(error_of(dumbbell(34, "ends = [\"s1\"]")),
            "scenarios/n.toml:34:1: links[0].ends: expected two ends [\"host\" or "
            "\"router.interface\", ...], got an array");
  EXPECT_EQ(error_of(dumbbell(35, "")), "scenarios/n.toml:33:1: links[0].rate: required");
  EXPECT_EQ(error_of(dumbbell(45, "reverse = { rat = \"10Mbit\" }")),
            "scenarios/n.toml:45:13: links[2].reverse.rat: unknown key (did you mean 'rate'?)");
  EXPECT_EQ(error_of(dumbbell(45, "reverse = { rate = \"10Gbit\" }")),
            "scenarios/n.toml:45:13: links[2].reverse.rate: 10Gbit is faster than router r1's "
            "interface wan's nic (generic-1g links at up to 1Gbit)");
  EXPECT_EQ(error_of(dumbbell(0, "", "[[routes]]\nnode = \"r1\"\nto = \"d2\"\n")),
            "scenarios/n.toml:60:1: routes[0].via: required");
}

// network_of()'s errors, mapped to the key that is wrong.
TEST(ScenarioNetworkErrors, Structure) {
  EXPECT_EQ(error_of(dumbbell(34, "ends = [\"s9\", \"r1.s1\"]")),
            "scenarios/n.toml:34:9: links[0].ends[0]: no host or router named 's9'");
  EXPECT_EQ(error_of(dumbbell(34, "ends = [\"s1\", \"r1.lan\"]")),
            "scenarios/n.toml:34:15: links[0].ends[1]: router 'r1' has no interface 'lan'");
  EXPECT_EQ(error_of(dumbbell(34, "ends = [\"r1\", \"s1\"]")),
            "scenarios/n.toml:34:9: links[0].ends[0]: 'r1' is a router: name its interface "
            "('r1.<interface>')");
  EXPECT_EQ(error_of(dumbbell(38, "ends = [\"s1\", \"r1.s2\"]")),
            "scenarios/n.toml:38:9: links[1].ends[0]: 's1' is already on links[0]");
  EXPECT_EQ(error_of(dumbbell(0, "", "[routers.r1.interfaces.spare]\nnic = \"generic-1g\"\n")),
            "scenarios/n.toml:60:24: routers.r1.interfaces.spare: not on any [[links]] entry");
  EXPECT_EQ(error_of(dumbbell(34, "ends = [\"r1.s1\", \"r1.s2\"]")),
            "scenarios/n.toml:34:18: links[0].ends[1]: a link must join two different nodes");
}

TEST(ScenarioNetworkErrors, Routes) {
  const auto route = [](const char* node, const char* to, const char* via) {
    return dumbbell(0, "",
                    std::string("[[routes]]\nnode = \"") + node + "\"\nto = \"" + to +
                        "\"\nvia = \"" + via + "\"\n");
  };
  EXPECT_EQ(error_of(route("r9", "d1", "wan")),
            "scenarios/n.toml:61:1: routes[0].node: no host or router named 'r9'");
  EXPECT_EQ(error_of(route("r1", "r2", "wan")),
            "scenarios/n.toml:62:1: routes[0].to: no host named 'r2'");
  EXPECT_EQ(error_of(route("r1", "d1", "lan")),
            "scenarios/n.toml:63:1: routes[0].via: 'r1' has no interface 'lan'");
  // r1 sends d1's packets back to s1: s1 -> d1 loops.
  EXPECT_EQ(error_of(route("r1", "d1", "s1")),
            "scenarios/n.toml:54:1: traffic.tcp[0]: the routes from 's1' to 'd1' loop at 's1': s1 "
            "and d1 must reach each other");
  // r2 sends d1's packets back over the bottleneck: r1 <-> r2 loop.
  EXPECT_EQ(error_of(route("r2", "d1", "wan")),
            "scenarios/n.toml:54:1: traffic.tcp[0]: the routes from 's1' to 'd1' loop at 'r1': s1 "
            "and d1 must reach each other");
  // A part of the network that reaches no other: e behind r3.
  EXPECT_EQ(error_of(dumbbell(0, "",
                              "[hosts.e]\ncpu = \"x86-desktop\"\nnic = \"generic-1g\"\n"
                              "[routers.r3]\ncpu = \"x86-desktop\"\n"
                              "[routers.r3.interfaces.e]\nnic = \"generic-1g\"\n"
                              "[[links]]\nends = [\"e\", \"r3.e\"]\nrate = \"1Gbit\"\n"
                              "delay = \"1ms\"\n[[traffic.ping]]\nfrom = \"d1\"\nto = \"e\"\n")),
            "scenarios/n.toml:71:1: traffic.ping[0]: no route from 'd1' to 'e' (at 'd1'): d1 and e "
            "must reach each other");
}

TEST(ScenarioNetworkErrors, TrafficEndsAtHosts) {
  EXPECT_EQ(error_of(dumbbell(56, "to = \"r2\"")),
            "scenarios/n.toml:56:1: traffic.tcp[0].to: \"r2\" is a router; traffic starts and "
            "ends at hosts (hosts: s1, s2, d1, d2)");
  // Without [[links]], today's form: exactly two hosts.
  EXPECT_EQ(error_of("[scenario]\nname = \"t\"\nduration = \"1s\"\n[hosts.a]\ncpu = "
                     "\"x86-desktop\"\nnic = \"generic-1g\"\n[wire]\nrate = \"1Gbit\"\ndelay = "
                     "\"1ms\"\n"),
            "scenarios/n.toml:4:2: hosts: a scenario with routers or more than two hosts needs "
            "[[links]]");
}

TEST(ScenarioNetworkErrors, VaryKeysMustNameExistingRoutersAndLinks) {
  EXPECT_EQ(error_of(dumbbell(0, "", "[vary]\n\"routers.r9.cpu\" = [\"x86-desktop\"]\n")),
            "scenarios/n.toml:61:1: vary.\"routers.r9.cpu\": no router \"r9\" in [routers]");
  EXPECT_EQ(
      error_of(dumbbell(0, "", "[vary]\n\"routers.r1.interfaces.lan.qdisc\" = [\"pfifo\"]\n")),
      "scenarios/n.toml:61:1: vary.\"routers.r1.interfaces.lan.qdisc\": no interface \"lan\" on "
      "router \"r1\"");
  EXPECT_EQ(error_of(dumbbell(0, "", "[vary]\n\"links[7].rate\" = [\"1Mbit\"]\n")),
            "scenarios/n.toml:61:1: vary.\"links[7].rate\": no links[7] in the scenario");
  EXPECT_EQ(error_of(dumbbell(0, "", "[vary]\n\"routers.{r1,r9}.cpu\" = [\"x86-desktop\"]\n")),
            "scenarios/n.toml:61:1: vary.\"routers.{r1,r9}.cpu\": no router \"r9\" in [routers]");
  EXPECT_EQ(error_of(dumbbell(0, "", "[vary]\n\"routers.{r1}.cpu\" = [\"x86-desktop\"]\n")),
            "scenarios/n.toml:61:1: vary.\"routers.{r1}.cpu\": a brace group lists two or more "
            "different names, once per key: \"routers.r.interfaces.{lan,wan}.qdisc\"");
  EXPECT_EQ(error_of(dumbbell(0, "",
                              "[vary]\n\"links[{0,1}].rate\" = [\"1Mbit\"]\n"
                              "\"links[1].rate\" = [\"2Mbit\"]\n")),
            "scenarios/n.toml:62:1: vary.\"links[1].rate\": links[1].rate is varied twice");
  EXPECT_EQ(error_of(dumbbell(0, "", "[vary]\n\"wire.rate\" = [\"1Mbit\"]\n")),
            "scenarios/n.toml:61:1: vary.\"wire.rate\": there is no [wire] with [[links]]; vary a "
            "link's key (links[0].rate)");
}

}  // namespace
}  // namespace nicsim::config
