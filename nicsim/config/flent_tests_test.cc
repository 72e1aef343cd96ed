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
  EXPECT_THROW(add_flent_test(x, test_plan("voipx")), std::invalid_argument);
  EXPECT_EQ(find_flent_test("udp_floods"), nullptr);
  EXPECT_TRUE(find_flent_test("tcp_nup")->streams);
}

std::vector<std::string> probe_names(const TrafficPlan& p) {
  std::vector<std::string> n;
  for (const ProbePlan& q : p.probes) {
    n.push_back(q.name);
  }
  return n;
}

// udp_flood.conf: 'UDP upload' for LENGTH after DELAY at udp_bandwidth; ICMP over TOTAL_LENGTH.
TEST(FlentTests, UdpFloodIsOneFloodAndAPing) {
  TrafficPlan p;
  FlentTestPlan t = test_plan("udp_flood");
  t.udp_rate = Rate::mbit(20);
  add_flent_test(p, t);
  ASSERT_EQ(p.floods.size(), 1u);
  EXPECT_EQ(p.floods[0].name, "UDP upload");
  EXPECT_EQ(p.floods[0].rate, Rate::mbit(20));
  EXPECT_EQ(p.floods[0].size, 1470);  // iperf 2's -l
  EXPECT_EQ(p.floods[0].start, Duration::s(5));
  EXPECT_EQ(p.floods[0].stop, Duration::s(65));
  EXPECT_EQ(p.floods[0].from, 0u);
  EXPECT_TRUE(p.flows.empty());
  EXPECT_EQ(probe_names(p), (std::vector<std::string>{"ping"}));
  EXPECT_EQ(p.phases.size(), 3u);
  EXPECT_EQ(flent_total_length("udp_flood", Duration::s(60), Duration::s(5)), Duration::s(70));
}

// voip.conf: TOTAL_LENGTH = LENGTH, no DELAY; irtt's G.711 emulation: 172 B every 20 ms.
TEST(FlentTests, VoipIsOneG711StreamForLength) {
  TrafficPlan p;
  add_flent_test(p, test_plan("voip"));
  ASSERT_EQ(p.floods.size(), 1u);
  EXPECT_EQ(p.floods[0].name, "VoIP");
  EXPECT_EQ(p.floods[0].codec, "g711");
  EXPECT_EQ(p.floods[0].size, 172);
  EXPECT_EQ(p.floods[0].rate, Rate::bps(68'800));  // 172 * 8 / 20 ms
  EXPECT_EQ(p.floods[0].start, Duration::zero());
  EXPECT_EQ(p.floods[0].stop, Duration::s(60));  // LENGTH
  EXPECT_EQ(p.floods[0].dscp, 0);                // voip_marking unset
  EXPECT_TRUE(p.phases.empty());
  EXPECT_EQ(flent_total_length("voip", Duration::s(60), Duration::s(5)), Duration::s(60));
}

// bursts.conf: bursts at DELAY*(i+1) + 5 s * i for i < LENGTH // (DELAY + 5 s); probes EF, BK,
// BE, ICMP over LENGTH.
TEST(FlentTests, BurstsFollowFlentsSchedule) {
  TrafficPlan p;
  add_flent_test(p, test_plan("bursts"));  // DELAY 5 s, LENGTH 60 s: 6 bursts
  ASSERT_EQ(p.floods.size(), 6u);
  EXPECT_EQ(p.floods[0].name, "Burst 0");
  EXPECT_EQ(p.floods[0].start, Duration::s(5));
  EXPECT_EQ(p.floods[0].stop, Duration::s(10));
  EXPECT_EQ(p.floods[1].start, Duration::s(15));  // 5 * 2 + 5 * 1
  EXPECT_EQ(p.floods[5].start, Duration::s(55));
  EXPECT_EQ(p.floods[0].size, 500);
  EXPECT_EQ(probe_names(p), (std::vector<std::string>{"udp_ef", "udp_bk", "udp_be", "ping"}));
  EXPECT_EQ(p.probes[0].dscp, 46);
  EXPECT_EQ(p.probes[1].dscp, 8);
  EXPECT_EQ(p.probes[3].stop, Duration::s(60));  // TOTAL_LENGTH = LENGTH
  EXPECT_TRUE(p.phases.empty());
}

// rrul_var.conf: ICMP, then per stream a UDP probe, an upload and a download labelled "i (MARK)".
TEST(FlentTests, RrulVarLabelsStreamsByMarking) {
  TrafficPlan p;
  FlentTestPlan t = test_plan("rrul_var", 3);
  t.markings = parse_flent_markings("CS1,EF");
  add_flent_test(p, t);
  EXPECT_EQ(flow_names(p),
            (std::vector<std::string>{"TCP upload::0 (CS1)", "TCP download::0 (CS1)",
                                      "TCP upload::1 (EF)", "TCP download::1 (EF)",
                                      "TCP upload::2 (CS0)", "TCP download::2 (CS0)"}));
  EXPECT_EQ(probe_names(p),
            (std::vector<std::string>{"Ping (ms)::ICMP", "Ping (ms)::UDP 0 (CS1)",
                                      "Ping (ms)::UDP 1 (EF)", "Ping (ms)::UDP 2 (CS0)"}));
  EXPECT_EQ(p.flows[2].dscp, 46);
  EXPECT_EQ(p.probes[1].dscp, 8);
  EXPECT_THROW(parse_flent_markings("CS1,XX"), std::invalid_argument);
  EXPECT_EQ(parse_flent_markings("0,63,AF41"), (std::vector<uint8_t>{0, 63, 34}));
  EXPECT_EQ(format_flent_markings({8, 46, 0}), "CS1,EF,CS0");
}

// rtt_fair.conf / rtt_fair.inc: per server an upload, a download and a ping, labelled BE1, BE2,
// BK1, BK2 (CS0, CS0, CS1, CS1) and ICMP1..4 with the host's name; at most four servers.
TEST(FlentTests, RttFairRunsAgainstEachServer) {
  TrafficPlan p;
  p.hosts = {"client", "s1", "s2", "s3", "s4", "s5"};
  FlentTestPlan t = test_plan("rtt_fair");
  t.servers = {1, 2, 3, 4, 5};
  add_flent_test(p, t);
  EXPECT_EQ(flow_names(p), (std::vector<std::string>{"TCP upload BE1 s1", "TCP download BE1 s1",
                                                     "TCP upload BE2 s2", "TCP download BE2 s2",
                                                     "TCP upload BK1 s3", "TCP download BK1 s3",
                                                     "TCP upload BK2 s4", "TCP download BK2 s4"}));
  EXPECT_EQ(p.flows[3].from, 2u);  // download: s2 sends
  EXPECT_EQ(p.flows[4].dscp, 8);
  EXPECT_EQ(probe_names(p), (std::vector<std::string>{"Ping (ms) ICMP1 s1", "Ping (ms) ICMP2 s2",
                                                      "Ping (ms) ICMP3 s3", "Ping (ms) ICMP4 s4"}));
  EXPECT_EQ(p.probes[2].to, 3u);
  TrafficPlan two;
  two.hosts = {"c", "near", "far"};
  FlentTestPlan t2 = test_plan("rtt_fair");
  t2.servers = {1, 2};
  add_flent_test(two, t2);  // repeated up to flent's four HOSTS
  EXPECT_EQ(probe_names(two),
            (std::vector<std::string>{"Ping (ms) ICMP1 near", "Ping (ms) ICMP2 far",
                                      "Ping (ms) ICMP3 near", "Ping (ms) ICMP4 far"}));
  EXPECT_EQ(two.flows[4].name, "TCP upload BK1 near");
  TrafficPlan one;
  FlentTestPlan t1 = test_plan("rtt_fair");
  t1.servers = {1};
  try {
    add_flent_test(one, t1);
    ADD_FAILURE() << "rtt_fair with one server";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at least two servers"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nicsim::config
