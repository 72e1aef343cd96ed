#include "nicsim/report/results.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nicsim/report/sample_results.h"

namespace nicsim::report {
namespace {

TEST(Results, Iso8601Utc) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso8601_utc(1'714'564'800), "2024-05-01T12:00:00Z");
  EXPECT_EQ(iso8601_utc(951'782'400), "2000-02-29T00:00:00Z");  // leap day
  EXPECT_EQ(iso8601_utc(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(iso8601_utc(4'102'444'799), "2099-12-31T23:59:59Z");
}

TEST(Results, RelativeErrorAndBitsPerSecond) {
  EXPECT_DOUBLE_EQ(*relative_error(62.8, 59.66), -0.05);
  EXPECT_EQ(relative_error(0.0, 1.0), std::nullopt);
  EXPECT_DOUBLE_EQ(bits_per_second(7'623'148, 1.0), 60'985'184.0);
  EXPECT_EQ(bits_per_second(100, 0.0), 0.0);
  EXPECT_EQ(iperf3_stream_id(0), 5);
  EXPECT_EQ(iperf3_stream_id(3), 11);
}

TEST(Results, DeriveTotalsFromTransfer) {
  report::Run r;
  r.transfer.a_to_b.receiver.bits_per_second = 22.8e6;
  r.transfer.a_to_b.sender.retransmits = 413;
  r.transfer.b_to_a.receiver.bits_per_second = 1e3;
  r.transfer.b_to_a.sender.retransmits = 2;
  derive_totals(r);
  EXPECT_EQ(r.goodput_bps.a_to_b, 22.8e6);
  EXPECT_EQ(r.goodput_bps[Direction::kBtoA], 1e3);
  EXPECT_EQ(r.retransmits, 415u);
}

// Two flows a->b with different windows: bytes and retransmits add up, the window spans both,
// the rates are over the window; b->a (no flows) keeps what it had; goodput and retransmits
// follow (derive_totals).
TEST(Results, SumFlowsFillsDirectionTotals) {
  report::Run run;
  FlowTransfer f1;
  f1.sender = {.start_s = 1, .end_s = 5, .bytes = 1000, .bits_per_second = 0, .retransmits = 2};
  f1.receiver = {.start_s = 1, .end_s = 5, .bytes = 900, .bits_per_second = 0};
  FlowTransfer f2;
  f2.sender = {.start_s = 2, .end_s = 9, .bytes = 3000, .bits_per_second = 0, .retransmits = 1};
  f2.receiver = {.start_s = 2, .end_s = 9, .bytes = 3100, .bits_per_second = 0};
  run.transfer[Direction::kAtoB].flows = {f1, f2};
  run.transfer[Direction::kBtoA].receiver.bits_per_second = 7;
  sum_flows(run);
  const DirectionTransfer& d = run.transfer[Direction::kAtoB];
  EXPECT_EQ(d.sender.bytes, 4000u);
  EXPECT_EQ(d.sender.retransmits, 3u);
  EXPECT_EQ(d.receiver.bytes, 4000u);
  EXPECT_DOUBLE_EQ(d.sender.start_s, 1);
  EXPECT_DOUBLE_EQ(d.receiver.end_s, 9);
  EXPECT_DOUBLE_EQ(d.receiver.bits_per_second, 4000 * 8 / 8.0);
  EXPECT_DOUBLE_EQ(run.goodput_bps[Direction::kAtoB], 4000.0);
  EXPECT_DOUBLE_EQ(run.goodput_bps[Direction::kBtoA], 7);
  EXPECT_EQ(run.retransmits, 3u);
  sum_flows(run);  // idempotent: totals are recomputed, not added to
  EXPECT_EQ(run.transfer[Direction::kAtoB].sender.bytes, 4000u);
}

// A network's flows name their hosts: sum_flows adds per-"from->to" totals; without names
// (the two-host form) there are none.
TEST(Results, SumFlowsFillsPairTotals) {
  report::Run run;
  const auto flow = [](const char* from, const char* to, uint64_t bytes) {
    FlowTransfer f;
    f.from = from;
    f.to = to;
    f.sender = {.start_s = 0, .end_s = 4, .bytes = bytes, .bits_per_second = 0, .retransmits = 1};
    f.receiver = {.start_s = 0, .end_s = 4, .bytes = bytes, .bits_per_second = 0};
    return f;
  };
  run.transfer[Direction::kAtoB].flows = {flow("s1", "d1", 1000), flow("s2", "d1", 500),
                                          flow("s1", "d1", 3000)};
  run.transfer[Direction::kBtoA].flows = {flow("d2", "s1", 100)};
  sum_flows(run);
  ASSERT_EQ(run.pairs.size(), 3u);
  EXPECT_EQ(run.pairs.at("s1->d1").receiver.bytes, 4000u);
  EXPECT_EQ(run.pairs.at("s1->d1").sender.retransmits, 2u);
  EXPECT_DOUBLE_EQ(run.pairs.at("s1->d1").receiver.bits_per_second, 4000 * 8 / 4.0);
  EXPECT_EQ(run.pairs.at("s2->d1").sender.bytes, 500u);
  EXPECT_EQ(run.pairs.at("d2->s1").receiver.bytes, 100u);
  EXPECT_EQ(run.transfer[Direction::kAtoB].receiver.bytes, 4500u);
  for (Direction d : kDirections) {
    for (FlowTransfer& f : run.transfer[d].flows) {
      f.from.clear();
    }
  }
  sum_flows(run);
  EXPECT_TRUE(run.pairs.empty());
}

// Jain's index over every flow of the run, both directions, from each flow's own goodput.
TEST(Results, FlowFairnessOverEveryFlow) {
  report::Run run;
  EXPECT_EQ(flow_fairness(run), 0.0);  // no flows
  const auto flow = [](double bps) {
    FlowTransfer f;
    f.receiver.bits_per_second = bps;
    return f;
  };
  run.transfer[Direction::kAtoB].flows = {flow(5e6), flow(5e6)};
  run.transfer[Direction::kBtoA].flows = {flow(5e6)};
  EXPECT_DOUBLE_EQ(flow_fairness(run), 1.0);  // equal flows
  run.transfer[Direction::kAtoB].flows = {flow(9e6), flow(0), flow(0)};
  run.transfer[Direction::kBtoA].flows = {flow(0)};
  EXPECT_DOUBLE_EQ(flow_fairness(run), 0.25);  // one of n = 4 gets everything: 1/n
  run.transfer[Direction::kAtoB].flows = {flow(1e6), flow(2e6)};
  run.transfer[Direction::kBtoA].flows = {};
  EXPECT_DOUBLE_EQ(flow_fairness(run), 0.9);  // 9 / (2 * 5)
}

TEST(Results, DirectionKeys) {
  EXPECT_EQ(direction_key(Direction::kAtoB), "a->b");
  EXPECT_EQ(direction_key(Direction::kBtoA), "b->a");
  EXPECT_EQ(sender_host(Direction::kBtoA), "b");
}

TEST(Results, SamplesAreConsistent) {
  EXPECT_EQ(check_results(samples::full_sample_results()), std::vector<std::string>{});
  EXPECT_EQ(check_results(samples::minimal_sample_results()), std::vector<std::string>{});
}

TEST(Results, CheckFindsStructuralProblems) {
  Results r = samples::full_sample_results();
  r.runs[0].backend = "ns3";
  r.runs[0].queues["a"].ring_bytes.pop_back();
  r.runs[1].intervals[1].start_s = 0.5;  // overlaps interval 0 (0..1)
  r.runs[1].duration_s = NAN;
  r.runs[1].latency_ms["ping"].rtt.p90 = 100;  // above max
  const std::vector<std::string> problems = check_results(r);
  ASSERT_EQ(problems.size(), 5u);
  EXPECT_EQ(problems[0], "runs[0].backend: must be \"sim\", \"emu\" or \"live\", got \"ns3\"");
  EXPECT_EQ(problems[1], "runs[0].queues.a.ring_bytes: 2 samples, time_s has 3");
  EXPECT_EQ(problems[2], "runs[1].duration_s: not a finite number");
  EXPECT_EQ(problems[3], "runs[1].latency_ms.ping: expected min <= p50 <= p90 <= p99 <= max");
  EXPECT_EQ(problems[4], "runs[1].intervals[1]: intervals overlap or are out of order");
  EXPECT_EQ(check_results(Results{}), std::vector<std::string>{"runs: no run"});
}

TEST(Results, CheckFindsRrulProblems) {
  Results r = samples::full_sample_results();
  report::Run& run = r.runs[1];
  run.latency_ms["ping"].series.rtt_ms.pop_back();
  run.latency_ms["udp_ef"].series.one_way_a_to_b_ms.push_back(1.0);
  run.latency_ms["udp_ef"].series.time_s = {0.0, 0.7, 0.5};
  run.latency_ms["udp_ef"].dscp = 64;
  run.transfer.a_to_b.flows[1].dscp = 255;
  run.phases[2].start_s = 1.0;  // overlaps "load" (0.5..1.5)
  run.phases[0].end_s = 0.0;
  run.latency_under_load->grade = "E";
  run.latency_under_load->fairness.b_to_a = 1.5;
  run.latency_under_load->rpm = INFINITY;
  const std::vector<std::string> problems = check_results(r);
  const std::vector<std::string> expected = {
      "runs[1].transfer.a->b.flows[1].dscp: DSCP must be 0..63, got 255",
      "runs[1].latency_ms.ping.series.rtt_ms: 5 samples, time_s has 6",
      "runs[1].latency_ms.udp_ef.dscp: DSCP must be 0..63, got 64",
      "runs[1].latency_ms.udp_ef.series.one_way_a_to_b_ms: 4 samples, time_s has 3",
      "runs[1].latency_ms.udp_ef.series.time_s: not finite or not in time order at sample 2",
      "runs[1].phases[0]: end_s must be greater than start_s",
      "runs[1].phases[2]: phases overlap or are out of order",
      "runs[1].latency_under_load.grade: must be A+, A, B, C, D or F, got \"E\"",
      "runs[1].latency_under_load.rpm: not a finite number",
      "runs[1].latency_under_load.fairness.b->a: Jain's index must lie in [0, 1]",
  };
  EXPECT_EQ(problems, expected);
}

TEST(Results, DscpNames) {
  EXPECT_EQ(dscp_name(0), "BE");
  EXPECT_EQ(dscp_name(8), "CS1");
  EXPECT_EQ(dscp_name(40), "CS5");
  EXPECT_EQ(dscp_name(46), "EF");
  EXPECT_EQ(dscp_name(44), "VA");
  EXPECT_EQ(dscp_name(10), "AF11");
  EXPECT_EQ(dscp_name(38), "AF43");
  EXPECT_EQ(dscp_name(56), "CS7");
  EXPECT_EQ(dscp_name(1), "1");
  EXPECT_EQ(dscp_name(47), "47");
}

}  // namespace
}  // namespace nicsim::report
