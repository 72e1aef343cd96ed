// flent's tests as presets (flent_tests.h): series names, marks, congestion controls, probe
// order and timing as in flent's tests/*.conf.
#include "nicsim/config/flent_tests.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nicsim::config {
namespace {

FlentTestPlan test_plan(const std::string& name, int64_t streams = 1) {
  static const TcpConfig tcp;
  FlentTestPlan t;
  t.test = name;
  t.start = Duration::zero();
  t.load_start = Duration::s(5);
  t.load_end = Duration::s(65);
  t.end = Duration::s(70);
  t.streams = streams;
  t.client_cc = "cubic";
  t.server_cc = "cubic";
  t.client_tcp = &tcp;
  t.server_tcp = &tcp;
  return t;
}

std::vector<std::string> flow_names(const TrafficPlan& p) {
  std::vector<std::string> n;
  for (const FlowPlan& f : p.flows) {
    n.push_back(f.name);
  }
  return n;
}

TEST(FlentTests, TcpNupHasNUploadsAndAPing) {
  TrafficPlan p;
  add_flent_test(p, test_plan("tcp_nup", 3));
  EXPECT_EQ(flow_names(p),
            (std::vector<std::string>{"TCP upload::1", "TCP upload::2", "TCP upload::3"}));
  for (const FlowPlan& f : p.flows) {
    EXPECT_EQ(f.from, 0u);
    EXPECT_EQ(f.start, Duration::s(5));  // DELAY
    EXPECT_EQ(f.stop, Duration::s(65));  // + LENGTH
  }
  ASSERT_EQ(p.probes.size(), 1u);
  EXPECT_TRUE(p.probes[0].icmp);
  EXPECT_EQ(p.probes[0].stop, Duration::s(70));  // TOTAL_LENGTH
  EXPECT_EQ(p.phases.size(), 3u);
  TrafficPlan d;
  add_flent_test(d, test_plan("tcp_ndown", 2));
  EXPECT_EQ(flow_names(d), (std::vector<std::string>{"TCP download::1", "TCP download::2"}));
  EXPECT_EQ(d.flows[0].from, 1u);
}

TEST(FlentTests, CcDuelsMarkAndNameEachFlow) {
  TrafficPlan p;
  add_flent_test(p, test_plan("cubic_bbr"));
  EXPECT_EQ(flow_names(p), (std::vector<std::string>{
                               "TCP upload Cubic BE", "TCP upload BBR BE", "TCP upload Cubic CS1",
                               "TCP upload BBR CS1", "TCP download Cubic BE", "TCP download BBR BE",
                               "TCP download Cubic CS1", "TCP download BBR CS1"}));
  EXPECT_EQ(p.flows[1].cc, "bbr");
  EXPECT_EQ(p.flows[2].cc, "cubic");
  EXPECT_EQ(p.flows[2].dscp, 8);  // CS1
  std::vector<std::string> probes;
  for (const ProbePlan& q : p.probes) {
    probes.push_back(q.name);
  }
  EXPECT_EQ(probes, (std::vector<std::string>{"udp_be", "udp_cs1", "udp_cs6", "ping"}));
  EXPECT_EQ(p.probes[2].dscp, 48);  // CS6
  TrafficPlan d;
  add_flent_test(d, test_plan("cubic_dctcp"));
  EXPECT_EQ(d.flows[1].cc, "dctcp");
  EXPECT_EQ(d.flows[1].ecn, "classic");  // dctcp asks for ECN (TCP_CONG_NEEDS_ECN)
}

TEST(FlentTests, RrulBeAndUnknownTests) {
  TrafficPlan p;
  add_flent_test(p, test_plan("rrul_be"));
  EXPECT_EQ(p.flows.size(), 8u);
  EXPECT_EQ(p.flows[1].name, "TCP upload BE2");
  EXPECT_EQ(p.flows[4].name, "TCP download BE");
  EXPECT_EQ(p.probes.size(), 4u);
  EXPECT_EQ(p.probes[0].name, "udp_be1");
  TrafficPlan r;
  add_flent_test(r, test_plan("rrul"));
  EXPECT_EQ(r.flows[3].name, "TCP upload EF");
  TrafficPlan x;
  EXPECT_THROW(add_flent_test(x, test_plan("voip")), std::invalid_argument);
  EXPECT_EQ(find_flent_test("udp_flood"), nullptr);
  EXPECT_TRUE(find_flent_test("tcp_nup")->streams);
}

}  // namespace
}  // namespace nicsim::config
