#include "nicsim/report/latency_under_load.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace nicsim::report {
namespace {

constexpr double kEps = 1e-9;  // ms: the recorder keeps whole nanoseconds

TEST(LatencyUnderLoad, BufferbloatGradeBands) {
  // docs/mechanisms/latency-under-load.md: A+ < 5 ms, A < 30, B < 60, C < 200, D < 400, F >= 400.
  EXPECT_EQ(bufferbloat_grade(-3.0), "A+");
  EXPECT_EQ(bufferbloat_grade(0.0), "A+");
  EXPECT_EQ(bufferbloat_grade(4.999), "A+");
  EXPECT_EQ(bufferbloat_grade(5.0), "A");
  EXPECT_EQ(bufferbloat_grade(29.99), "A");
  EXPECT_EQ(bufferbloat_grade(30.0), "B");
  EXPECT_EQ(bufferbloat_grade(59.99), "B");
  EXPECT_EQ(bufferbloat_grade(60.0), "C");
  EXPECT_EQ(bufferbloat_grade(199.9), "C");
  EXPECT_EQ(bufferbloat_grade(200.0), "D");
  EXPECT_EQ(bufferbloat_grade(399.9), "D");
  EXPECT_EQ(bufferbloat_grade(400.0), "F");
  EXPECT_EQ(bufferbloat_grade(5000.0), "F");
}

TEST(LatencyUnderLoad, JainFairness) {
  EXPECT_DOUBLE_EQ(jain_fairness({1, 1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(jain_fairness({1, 0, 0, 0}), 0.25);  // 1/n: one flow takes everything
  EXPECT_DOUBLE_EQ(jain_fairness({1, 2}), 0.9);         // 9 / (2 * 5)
  EXPECT_DOUBLE_EQ(jain_fairness({7}), 1.0);
  EXPECT_EQ(jain_fairness({}), 0.0);
  EXPECT_EQ(jain_fairness({0, 0}), 0.0);
}

std::vector<double> one_to(int n) {
  std::vector<double> v;
  for (int i = n; i >= 1; --i) {  // unsorted on purpose
    v.push_back(i);
  }
  return v;
}

TEST(LatencyUnderLoad, TrimmedMeanKeepsTheLowest95Percent) {
  EXPECT_EQ(trimmed_mean({}, 95), std::nullopt);
  EXPECT_DOUBLE_EQ(*trimmed_mean({4.0}, 95), 4.0);
  EXPECT_DOUBLE_EQ(*trimmed_mean(one_to(10), 95), 5.5);   // ceil(9.5) = 10 kept
  EXPECT_DOUBLE_EQ(*trimmed_mean(one_to(20), 95), 10.0);  // 19 kept: mean of 1..19
  EXPECT_DOUBLE_EQ(*trimmed_mean(one_to(40), 95), 19.5);  // 38 kept
  EXPECT_DOUBLE_EQ(*trimmed_mean(one_to(4), 50), 1.5);    // 2 kept
  EXPECT_DOUBLE_EQ(*trimmed_mean(one_to(4), 100), 2.5);
}

TEST(LatencyUnderLoad, ResponsivenessFormula) {
  // draft-ietf-ippm-responsiveness: (60000 / foreign + 60000 / self) / 2.
  EXPECT_DOUBLE_EQ(responsiveness_rpm(60.0, 10.0), 3500.0);
  EXPECT_DOUBLE_EQ(responsiveness_rpm(60.0, std::nullopt), 1000.0);
  EXPECT_DOUBLE_EQ(responsiveness_rpm(200.0, 200.0), 300.0);  // the draft's "poor" anchor
  EXPECT_EQ(responsiveness_rpm(0.0, 10.0), 0.0);
}

// A run with idle [0, 1), load [1, 3), idle [3, 4); one UDP EF probe with one-way delays, one
// ICMP ping, two flows a->b (BE, CS5) and one b->a (EF), intervals of 1.5 s, 1 s and 1.5 s that
// straddle the phase edges.
report::Run sample_run() {
  report::Run r;
  r.phases = {{"idle_before", 0, 1}, {"load", 1, 3}, {"idle_after", 3, 4}};
  ProbeLatency udp;
  udp.kind = "udp";
  udp.dscp = 46;
  udp.series.time_s = {0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5};
  udp.series.rtt_ms = {1.0, 1.2, 11.0, std::nullopt, 21.0, 31.0, 1.4, 1.4};
  udp.series.one_way_a_to_b_ms = {0.5, 0.6, 10.0, 10.5, 20.0, 30.0, 0.7, 0.7};
  udp.series.one_way_b_to_a_ms = {0.5, 0.6, 1.0, std::nullopt, 1.0, 1.0, 0.7, 0.7};
  r.latency_ms["udp_ef"] = udp;
  ProbeLatency ping;
  ping.kind = "icmp";
  ping.series.time_s = {0.2, 1.2, 2.2, 3.2, 4.0};  // 4.0: after the last phase, ignored
  ping.series.rtt_ms = {2.0, 40.0, 60.0, 2.0, 100.0};
  r.latency_ms["ping"] = ping;

  r.transfer.a_to_b.flows = {{5, {}, {}, "TCP upload BE", 0}, {7, {}, {}, "TCP upload CS5", 40}};
  r.transfer.b_to_a.flows = {{5, {}, {}, "TCP download EF", 46}};
  struct Row {
    double start, end;
    uint64_t a5, a7, b5;
    std::optional<double> s_a5, s_a7, s_b5;
  };
  const Row rows[] = {{0.0, 1.5, 300, 300, 600, 2.0, 4.0, 3.0},
                      {1.5, 2.5, 1000, 3000, 2000, 10.0, 20.0, 30.0},
                      {2.5, 4.0, 0, 300, 300, std::nullopt, 6.0, 9.0}};
  for (const Row& row : rows) {
    Interval iv;
    iv.start_s = row.start;
    iv.end_s = row.end;
    iv.directions.a_to_b.flows = {{5, row.a5, 0, 0, 0, row.s_a5}, {7, row.a7, 0, 0, 0, row.s_a7}};
    iv.directions.a_to_b.bytes = row.a5 + row.a7;
    iv.directions.b_to_a.flows = {{5, row.b5, 0, 0, 0, row.s_b5}};
    iv.directions.b_to_a.bytes = row.b5;
    r.intervals.push_back(iv);
  }
  return r;
}

TEST(LatencyUnderLoad, IdleAndLoadedLatencyByPhaseOfSending) {
  const std::optional<LatencyUnderLoad> l = compute_latency_under_load(sample_run());
  ASSERT_TRUE(l.has_value());
  // idle: 1.0, 1.2, 1.4, 1.4 (udp) and 2.0, 2.0 (ping): mean 9 / 6.
  EXPECT_EQ(l->idle_rtt.count, 6u);
  EXPECT_EQ(l->idle_rtt.lost, 0u);
  EXPECT_NEAR(l->idle_rtt.mean, 1.5, kEps);
  EXPECT_NEAR(l->idle_rtt.min, 1.0, kEps);
  EXPECT_NEAR(l->idle_rtt.max, 2.0, kEps);
  // loaded: 11, 21, 31 (+1 lost) and 40, 60: mean 163 / 5; median 31.
  EXPECT_EQ(l->loaded_rtt.count, 5u);
  EXPECT_EQ(l->loaded_rtt.lost, 1u);
  EXPECT_NEAR(l->loaded_rtt.mean, 32.6, kEps);
  EXPECT_NEAR(l->loaded_rtt.p50, 31.0, kEps);
  // induced = 32.6 - 1.5 -> B (30 <= x < 60)
  EXPECT_NEAR(l->induced_latency_ms, 31.1, kEps);
  EXPECT_EQ(l->grade, "B");
  // one-way: only the UDP probe measures it.
  ASSERT_TRUE(l->idle_one_way.has_value());
  ASSERT_TRUE(l->loaded_one_way.has_value());
  EXPECT_EQ(l->idle_one_way->a_to_b.count, 4u);
  EXPECT_NEAR(l->idle_one_way->a_to_b.mean, 0.625, kEps);
  EXPECT_EQ(l->loaded_one_way->a_to_b.count, 4u);  // 10, 10.5, 20, 30: the request arrived
  EXPECT_EQ(l->loaded_one_way->a_to_b.lost, 0u);
  EXPECT_NEAR(l->loaded_one_way->a_to_b.mean, 17.625, kEps);
  EXPECT_EQ(l->loaded_one_way->b_to_a.count, 3u);
  EXPECT_EQ(l->loaded_one_way->b_to_a.lost, 1u);
  EXPECT_NEAR(l->loaded_one_way->b_to_a.mean, 1.0, kEps);
  // per DSCP: EF = the UDP probe, BE = ping; no CS1/CS5 probe.
  ASSERT_EQ(l->per_dscp.size(), 2u);
  EXPECT_EQ(l->per_dscp.at("EF").count, 3u);
  EXPECT_EQ(l->per_dscp.at("EF").lost, 1u);
  EXPECT_NEAR(l->per_dscp.at("EF").p50, 21.0, kEps);
  EXPECT_NEAR(l->per_dscp.at("BE").mean, 50.0, kEps);
  EXPECT_NEAR(l->per_dscp.at("BE").p99, 59.8, kEps);  // 40 + 0.99 * 20
}

TEST(LatencyUnderLoad, FairnessAndGoodputFromLoadPhaseBytes) {
  const std::optional<LatencyUnderLoad> l = compute_latency_under_load(sample_run());
  ASSERT_TRUE(l.has_value());
  // Load-phase bytes (intervals pro-rated: 1/3 of [0, 1.5) and of [2.5, 4) are in the load):
  // a->b: flow 5 = 100 + 1000 + 0 = 1100, flow 7 = 100 + 3000 + 100 = 3200; b->a: 2300.
  EXPECT_NEAR(l->fairness.a_to_b, 4300.0 * 4300 / (2 * (1100.0 * 1100 + 3200.0 * 3200)), 1e-12);
  EXPECT_NEAR(l->fairness.a_to_b, 0.8074235807860262, 1e-12);
  EXPECT_DOUBLE_EQ(l->fairness.b_to_a, 1.0);
  EXPECT_NEAR(l->fairness_all, 6600.0 * 6600 / (3 * 16'740'000.0), 1e-12);
  EXPECT_NEAR(l->goodput_bps.a_to_b, 4300.0 * 8 / 2, 1e-6);
  EXPECT_NEAR(l->goodput_bps.b_to_a, 2300.0 * 8 / 2, 1e-6);
  // SRTT samples at interval ends inside the load (1.5 and 2.5), by the flows' DSCP.
  ASSERT_EQ(l->per_dscp_flow_srtt.size(), 3u);
  EXPECT_EQ(l->per_dscp_flow_srtt.at("BE").count, 2u);
  EXPECT_NEAR(l->per_dscp_flow_srtt.at("BE").mean, 6.0, kEps);    // 2, 10
  EXPECT_NEAR(l->per_dscp_flow_srtt.at("CS5").mean, 12.0, kEps);  // 4, 20
  EXPECT_NEAR(l->per_dscp_flow_srtt.at("EF").max, 30.0, kEps);    // 3, 30
}

TEST(LatencyUnderLoad, ResponsivenessOverTheLoadWindow) {
  // Default window 4 s >= the 2 s load: every loaded sample. Foreign: 11, 21, 31, 40, 60
  // (ceil(0.95 * 5) = 5 kept) -> 32.6; self: SRTTs at 1.5 and 2.5: 2, 4, 3, 10, 20, 30
  // (6 kept) -> 11.5.
  const std::optional<LatencyUnderLoad> l = compute_latency_under_load(sample_run());
  ASSERT_TRUE(l.has_value());
  EXPECT_NEAR(l->rpm_foreign_ms, 32.6, 1e-12);
  ASSERT_TRUE(l->rpm_self_ms.has_value());
  EXPECT_NEAR(*l->rpm_self_ms, 11.5, 1e-12);
  EXPECT_NEAR(l->rpm, (60000 / 32.6 + 60000 / 11.5) / 2, 1e-9);
  // A 1 s window: the last second of the load, [2, 3). Foreign: 21, 31 (udp), 60 (ping) ->
  // 112 / 3; self: the SRTTs at 2.5: 10, 20, 30 -> 20.
  const std::optional<LatencyUnderLoad> w =
      compute_latency_under_load(sample_run(), {.rpm_window_s = 1.0});
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->rpm_foreign_ms, 112.0 / 3, 1e-12);
  EXPECT_NEAR(*w->rpm_self_ms, 20.0, 1e-12);
  EXPECT_NEAR(w->rpm, (180000.0 / 112 + 3000) / 2, 1e-9);
  EXPECT_NEAR(w->rpm, 2303.5714285714284, 1e-9);
}

TEST(LatencyUnderLoad, WithoutSelfSamplesRpmIsForeignOnly) {
  report::Run r = sample_run();
  for (Interval& iv : r.intervals) {
    for (Direction d : kDirections) {
      for (FlowInterval& f : iv.directions[d].flows) {
        f.srtt_ms.reset();
      }
    }
  }
  const std::optional<LatencyUnderLoad> l = compute_latency_under_load(r);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->rpm_self_ms, std::nullopt);
  EXPECT_TRUE(l->per_dscp_flow_srtt.empty());
  EXPECT_NEAR(l->rpm, 60000 / 32.6, 1e-9);
}

TEST(LatencyUnderLoad, StarvedFlowCountsInFairness) {
  report::Run r = sample_run();
  r.transfer.b_to_a.flows.push_back({9, {}, {}, "TCP download BK", 8});  // never delivered
  const std::optional<LatencyUnderLoad> l = compute_latency_under_load(r);
  ASSERT_TRUE(l.has_value());
  EXPECT_DOUBLE_EQ(l->fairness.b_to_a, 0.5);
}

TEST(LatencyUnderLoad, UndefinedWithoutPhasesOrSamples) {
  report::Run r = sample_run();
  r.phases.clear();
  EXPECT_EQ(compute_latency_under_load(r), std::nullopt);
  r = sample_run();
  r.phases = {{"load", 0, 4}};  // no idle phase: no idle sample
  EXPECT_EQ(compute_latency_under_load(r), std::nullopt);
  r = sample_run();
  for (auto& [name, p] : r.latency_ms) {
    for (size_t k = 0; k < p.series.time_s.size(); ++k) {
      if (p.series.time_s[k] >= 1 && p.series.time_s[k] < 3) {
        p.series.rtt_ms[k].reset();  // everything sent under load lost
      }
    }
  }
  EXPECT_EQ(compute_latency_under_load(r), std::nullopt);
}

}  // namespace
}  // namespace nicsim::report
