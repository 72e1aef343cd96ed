// config::Network: the two-host form, shortest-path routes (hosts never forward; ties go to the
// interface written first), [[routes]] overrides, path() with loops and dead ends, and the
// errors network_of() reports with their key paths (network.h). Scenarios are built in code
// from one loaded two-host file, so these tests do not depend on the network TOML syntax.

#include "nicsim/config/network.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nicsim/config/scenario.h"

namespace nicsim::config {
namespace {

Scenario two_hosts() {
  LoadOptions o;
  o.preset_dirs = {NICSIM_TEST_PRESETS_DIR};
  o.standard_presets = false;
  return load_scenario_text(R"([scenario]
name = "t"
duration = "1s"
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
                            "net.toml", o)
      .scenario;
}

RouterConfig router(const Scenario& s, const std::string& name,
                    const std::vector<std::string>& ifaces) {
  RouterConfig r;
  r.name = name;
  r.cpu = s.hosts[0].cpu;
  for (const std::string& i : ifaces) {
    r.interfaces.push_back(RouterInterfaceConfig{i, s.hosts[0].nic, s.hosts[0].qdisc});
  }
  return r;
}

LinkConfig link(const std::string& x, const std::string& y) {
  LinkConfig l;
  l.ends[0] = x;
  l.ends[1] = y;
  l.forward.rate = Rate::mbit(100);
  l.reverse.rate = Rate::mbit(10);
  return l;
}

// a, c -- r1.(a|c) ; r1.core -- r2.core ; r2.(b|d) -- b, d
Scenario dumbbell() {
  Scenario s = two_hosts();
  HostConfig c = s.hosts[0];
  c.name = "c";
  HostConfig d = s.hosts[0];
  d.name = "d";
  s.hosts.push_back(c);
  s.hosts.push_back(d);
  s.routers.push_back(router(s, "r1", {"a", "c", "core"}));
  s.routers.push_back(router(s, "r2", {"core", "b", "d"}));
  s.links = {link("a", "r1.a"), link("c", "r1.c"), link("r1.core", "r2.core"), link("r2.b", "b"),
             link("d", "r2.d")};
  return s;
}

std::string error_key(const Scenario& s) {
  try {
    network_of(s);
  } catch (const NetworkError& e) {
    return e.key();
  }
  return "";
}

TEST(Network, TwoHostFormIsOneLinkWithTheWireBothWays) {
  const Scenario s = two_hosts();
  const Network n = network_of(s);
  ASSERT_EQ(n.nodes().size(), 2u);
  EXPECT_EQ(n.host_count(), 2u);
  ASSERT_EQ(n.links().size(), 1u);
  EXPECT_EQ(n.links()[0].wire[0], &s.wire);
  EXPECT_EQ(n.links()[0].wire[1], &s.wire);
  EXPECT_EQ(n.egress(0, 1), 0);
  EXPECT_EQ(n.egress(1, 0), 1);
  EXPECT_EQ(n.egress(0, 0), Network::kNone);
  EXPECT_EQ(n.path(0, 1), std::vector<int>{0});
  EXPECT_EQ(n.peer(0), 1);
  EXPECT_EQ(n.interface_label(1), "b");
}

TEST(Network, DumbbellRoutesCrossBothRouters) {
  const Scenario s = dumbbell();
  const Network n = network_of(s);
  ASSERT_EQ(n.nodes().size(), 6u);  // a b c d r1 r2
  EXPECT_EQ(n.host_count(), 4u);
  EXPECT_TRUE(n.nodes()[4].router);
  // Interfaces: a=0 b=1 c=2 d=3, r1.a=4 r1.c=5 r1.core=6, r2.core=7 r2.b=8 r2.d=9.
  EXPECT_EQ(n.interface_label(6), "r1.core");
  EXPECT_EQ(n.path(0, 1), (std::vector<int>{0, 6, 8}));
  EXPECT_EQ(n.path(3, 2), (std::vector<int>{3, 7, 5}));
  EXPECT_EQ(n.path(0, 2), (std::vector<int>{0, 5}));  // a -> r1 -> c, not via r2
  // Directions: a -> r1.a is links[0] forward (100 Mbit/s); r2.b -> b is links[3] forward.
  EXPECT_EQ(n.links()[0].wire[0]->rate, Rate::mbit(100));
  EXPECT_EQ(n.links()[0].wire[1]->rate, Rate::mbit(10));
  EXPECT_EQ(n.interfaces()[0].side, 0);
  EXPECT_EQ(n.interfaces()[4].side, 1);
}

TEST(Network, HostsDoNotForward) {
  // b -- a -- r -- c: b reaches nothing but a, because a is a host.
  Scenario s = two_hosts();
  HostConfig c = s.hosts[0];
  c.name = "c";
  s.hosts.push_back(c);
  s.routers.push_back(router(s, "r", {"x", "y"}));
  // a has one interface only, so "b -- a" and "a -- r" cannot both exist: use b -- r -- c and
  // leave a on a second router's link to show that a dead end reports no route.
  s.routers.push_back(router(s, "q", {"x"}));
  s.links = {link("b", "r.x"), link("r.y", "c"), link("a", "q.x")};
  const Network n = network_of(s);
  EXPECT_EQ(n.path(1, 2).size(), 2u);
  EXPECT_EQ(n.egress(0, 1), Network::kNone);
  EXPECT_THROW(n.path(0, 1), std::invalid_argument);
}

TEST(Network, TiesGoToTheInterfaceWrittenFirst) {
  // r has two parallel links to q; q -- b. r -- a.
  Scenario s = two_hosts();
  s.routers.push_back(router(s, "r", {"a", "p1", "p2"}));
  s.routers.push_back(router(s, "q", {"p2", "p1", "b"}));
  s.links = {link("a", "r.a"), link("r.p2", "q.p2"), link("r.p1", "q.p1"), link("q.b", "b")};
  const Network n = network_of(s);
  // r's interfaces: r.a=2, r.p1=3, r.p2=4; q's: q.p2=5, q.p1=6, q.b=7.
  EXPECT_EQ(n.egress(2, 1), 3);
  EXPECT_EQ(n.egress(3, 0), 5);
}

TEST(Network, RoutesOverrideSingleEntries) {
  Scenario s = dumbbell();
  s.routes.push_back(RouteConfig{"r1", "b", "c"});  // send b's packets to host c: a dead end
  const Network n = network_of(s);
  EXPECT_EQ(n.egress(4, 1), 5);
  EXPECT_THROW(n.path(0, 1), std::invalid_argument);
  EXPECT_EQ(n.path(0, 3), (std::vector<int>{0, 6, 9}));  // others unchanged
}

TEST(Network, RouteLoopsAreFound) {
  Scenario s = dumbbell();
  s.routes.push_back(RouteConfig{"r2", "b", "core"});  // r1 -> r2 -> r1 -> ...
  const Network n = network_of(s);
  try {
    n.path(0, 1);
    FAIL() << "no loop reported";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("loop"), std::string::npos) << e.what();
  }
}

TEST(Network, ErrorsNameTheKey) {
  {
    Scenario s = dumbbell();
    s.links[1].ends[1] = "r9.c";
    EXPECT_EQ(error_key(s), "links[1].ends[1]");
  }
  {
    Scenario s = dumbbell();
    s.links[1].ends[1] = "r1.nope";
    EXPECT_EQ(error_key(s), "links[1].ends[1]");
  }
  {
    Scenario s = dumbbell();
    s.links[1].ends[1] = "r1";  // a router needs its interface named
    EXPECT_EQ(error_key(s), "links[1].ends[1]");
  }
  {
    Scenario s = dumbbell();
    s.links[1].ends[0] = "a.x";  // a host's interface is the host
    EXPECT_EQ(error_key(s), "links[1].ends[0]");
  }
  {
    Scenario s = dumbbell();
    s.links[1].ends[0] = "a";  // a is already on links[0]
    EXPECT_EQ(error_key(s), "links[1].ends[0]");
  }
  {
    Scenario s = dumbbell();
    s.links[2].ends[1] = "r1.c";  // r1.core -- r1.c: r1 to itself (r1.c is also doubly used)
    s.links[1].ends[1] = "r2.core";
    EXPECT_EQ(error_key(s), "links[2].ends[1]");
  }
  {
    Scenario s = dumbbell();
    s.links.pop_back();  // d and r2.d on no link
    EXPECT_EQ(error_key(s), "hosts.d");
  }
  {
    Scenario s = dumbbell();
    s.routers[0].interfaces.push_back(RouterInterfaceConfig{"spare", s.hosts[0].nic, {}});
    EXPECT_EQ(error_key(s), "routers.r1.interfaces.spare");
  }
  {
    Scenario s = dumbbell();
    s.routers[1].name = "a";
    EXPECT_EQ(error_key(s), "routers.a");
  }
  {
    Scenario s = dumbbell();
    s.routers[1].interfaces.clear();
    EXPECT_EQ(error_key(s), "routers.r2");
  }
  {
    Scenario s = two_hosts();
    s.routers.push_back(router(s, "r", {"x"}));  // routers without [[links]]
    EXPECT_EQ(error_key(s), "routers");
  }
  {
    Scenario s = dumbbell();
    s.routes.push_back(RouteConfig{"zz", "b", "core"});
    EXPECT_EQ(error_key(s), "routes[0].node");
  }
  {
    Scenario s = dumbbell();
    s.routes.push_back(RouteConfig{"r1", "r2", "core"});  // `to` must be a host
    EXPECT_EQ(error_key(s), "routes[0].to");
  }
  {
    Scenario s = dumbbell();
    s.routes.push_back(RouteConfig{"r1", "b", "wan"});
    EXPECT_EQ(error_key(s), "routes[0].via");
  }
}

}  // namespace
}  // namespace nicsim::config
