// RunRecorder: interval closing, the loss horizon, probe series and one-way columns, phases,
// transfer totals and the published comparison, driven by hand-made samples.
#include "nicsim/report/run_recorder.h"

#include <gtest/gtest.h>

#include <vector>

namespace nicsim::report {
namespace {

Time at_ms(int64_t ms) { return Time::zero() + Duration::ms(ms); }

RunLayout two_flows(Duration duration, Duration interval) {
  RunLayout l;
  l.duration = duration;
  l.interval = interval;
  l.flows = {FlowSpec{Direction::kAtoB, "up", 0, Duration::zero(), duration},
             FlowSpec{Direction::kBtoA, "down", 46, Duration::zero(), duration}};
  return l;
}

TEST(RunRecorder, BoundariesStepByTheIntervalAndStopAtTheDuration) {
  RunRecorder r(RunInfo{}, two_flows(Duration::ms(1000), Duration::ms(400)));
  const std::vector<FlowCounters> c(2);
  EXPECT_EQ(r.next_boundary(), at_ms(400));
  r.close_interval(r.next_boundary(), c);
  EXPECT_EQ(r.next_boundary(), at_ms(800));
  r.close_interval(r.next_boundary(), c);
  EXPECT_EQ(r.next_boundary(), at_ms(1000));  // the last bin is short
  r.close_interval(r.next_boundary(), c);
  r.close_interval(at_ms(1000), c);  // not after the last boundary: nothing
  r.close_interval(at_ms(900), c);
  const report::Run run = r.finish(at_ms(1000), c, std::vector<FlowTotals>(2));
  ASSERT_EQ(run.intervals.size(), 3u);
  EXPECT_DOUBLE_EQ(run.intervals[2].start_s, 0.8);
  EXPECT_DOUBLE_EQ(run.intervals[2].end_s, 1.0);
}

TEST(RunRecorder, IntervalsHoldTheGrowthOfEachFlowsCounters) {
  RunRecorder r(RunInfo{}, two_flows(Duration::s(2), Duration::s(1)));
  std::vector<FlowCounters> c(2);
  c[0] = FlowCounters{125'000, 2, 30'000, 1.5};
  c[1] = FlowCounters{250'000, 0, 60'000, std::nullopt};
  r.close_interval(at_ms(1000), c);
  c[0] = FlowCounters{375'000, 5, 20'000, 2.5};
  c[1] = FlowCounters{100'000, 1, 10'000, 3.0};  // went back (a restarted source): no growth
  const report::Run run = r.finish(at_ms(2000), c, std::vector<FlowTotals>(2));
  ASSERT_EQ(run.intervals.size(), 2u);  // finish closed the open interval
  const DirectionInterval& up0 = run.intervals[0].directions[Direction::kAtoB];
  ASSERT_EQ(up0.flows.size(), 1u);
  EXPECT_EQ(up0.flows[0].id, 5);
  EXPECT_EQ(up0.bytes, 125'000u);
  EXPECT_DOUBLE_EQ(up0.bits_per_second, 1e6);
  EXPECT_EQ(up0.retransmits, 2u);
  EXPECT_EQ(up0.flows[0].srtt_ms, 1.5);
  const DirectionInterval& up1 = run.intervals[1].directions[Direction::kAtoB];
  EXPECT_EQ(up1.bytes, 250'000u);
  EXPECT_EQ(up1.retransmits, 3u);
  EXPECT_EQ(up1.cwnd_bytes, 20'000u);
  const DirectionInterval& down1 = run.intervals[1].directions[Direction::kBtoA];
  EXPECT_EQ(down1.flows[0].id, 5);  // stream ids count per direction
  EXPECT_EQ(down1.bytes, 0u);
  EXPECT_EQ(down1.flows[0].srtt_ms, 3.0);
}

TEST(RunRecorder, IntervalLatencyIsTheMeanOfTheRoundTripsAnsweredInIt) {
  RunLayout l = two_flows(Duration::s(3), Duration::s(1));
  l.probes = {ProbeSpec{"ping", true, Direction::kAtoB, 0, false}};
  RunRecorder r(RunInfo{}, l);
  const std::vector<FlowCounters> c(2);
  r.probe_answered(0, r.probe_sent(0, at_ms(100)), Duration::ms(2));
  r.probe_answered(0, r.probe_sent(0, at_ms(600)), Duration::ms(5));
  r.close_interval(at_ms(1000), c);
  r.probe_sent(0, at_ms(1100));  // never answered
  r.close_interval(at_ms(2000), c);
  const report::Run run = r.finish(at_ms(3000), c, std::vector<FlowTotals>(2));
  EXPECT_DOUBLE_EQ(run.intervals[0].latency_ms.at("ping"), 3.5);
  EXPECT_EQ(run.intervals[1].latency_ms.count("ping"), 0u);
}

TEST(RunRecorder, UnansweredProbesAreLostOnlyWhenSentALossHorizonBeforeTheEnd) {
  RunLayout l = two_flows(Duration::s(10), Duration::s(1));
  l.probes = {ProbeSpec{"udp", false, Direction::kAtoB, 46, true}};
  RunRecorder r(RunInfo{}, l);
  const Time end = at_ms(10'000);
  const uint64_t answered = r.probe_sent(0, at_ms(1000));
  r.probe_forward(0, answered, Duration::ms(3));
  r.probe_answered(0, answered, Duration::ms(7), Duration::ms(4));
  r.probe_sent(0, at_ms(2000));         // lost
  r.probe_sent(0, end - kLossHorizon);  // lost: exactly the horizon before the end
  const uint64_t late = r.probe_sent(0, end - kLossHorizon + Duration::ns(1));  // on its way
  r.probe_forward(0, late, Duration::ms(1));
  const uint64_t late_answered = r.probe_sent(0, at_ms(9500));
  r.probe_forward(0, late_answered, Duration::ms(2));
  r.probe_answered(0, late_answered, Duration::ms(6), Duration::ms(4));
  const std::vector<FlowCounters> c(2);
  const report::Run run = r.finish(end, c, std::vector<FlowTotals>(2));
  const ProbeLatency& p = run.latency_ms.at("udp");
  EXPECT_EQ(p.kind, "udp");
  EXPECT_EQ(p.dscp, 46);
  EXPECT_EQ(p.rtt.count, 2u);
  EXPECT_EQ(p.rtt.lost, 2u);
  EXPECT_DOUBLE_EQ(p.rtt.mean, 6.5);
  // The series: every probe but the one still on its way, in send order.
  EXPECT_EQ(p.series.time_s, (std::vector<double>{1.0, 2.0, 9.0, 9.5}));
  EXPECT_EQ(p.series.rtt_ms,
            (std::vector<std::optional<double>>{7.0, std::nullopt, std::nullopt, 6.0}));
  ASSERT_TRUE(p.one_way.has_value());
  EXPECT_EQ(p.one_way->a_to_b.count, 2u);  // over the answered round trips
  EXPECT_DOUBLE_EQ(p.one_way->a_to_b.mean, 2.5);
  EXPECT_EQ(p.one_way->a_to_b.lost, 2u);  // losses on the request leg
  EXPECT_EQ(p.one_way->b_to_a.lost, 0u);
  EXPECT_EQ(p.series.one_way_a_to_b_ms.size(), 4u);
  EXPECT_EQ(p.series.one_way_b_to_a_ms[3], 4.0);
}

TEST(RunRecorder, OneWayColumnsFollowTheRequestDirection) {
  RunLayout l = two_flows(Duration::s(5), Duration::s(1));
  l.probes = {ProbeSpec{"udp", false, Direction::kBtoA, 0, true}};
  RunRecorder r(RunInfo{}, l);
  const uint64_t s = r.probe_sent(0, at_ms(100));
  r.probe_forward(0, s, Duration::ms(3));
  r.probe_answered(0, s, Duration::ms(4), Duration::ms(1));
  const report::Run run =
      r.finish(at_ms(5000), std::vector<FlowCounters>(2), std::vector<FlowTotals>(2));
  const ProbeLatency& p = run.latency_ms.at("udp");
  EXPECT_EQ(p.series.one_way_b_to_a_ms, (std::vector<std::optional<double>>{3.0}));
  EXPECT_EQ(p.series.one_way_a_to_b_ms, (std::vector<std::optional<double>>{1.0}));
  EXPECT_DOUBLE_EQ(p.one_way->b_to_a.mean, 3.0);
}

TEST(RunRecorder, PhasesAndFlowWindowsAreCutWhenTheRunStopsEarly) {
  RunLayout l = two_flows(Duration::s(10), Duration::s(1));
  l.flows[0].start = Duration::s(2);
  l.flows[0].stop = Duration::s(8);
  l.phases = {PhaseSpec{"idle_before", Duration::zero(), Duration::s(2)},
              PhaseSpec{"load", Duration::s(2), Duration::s(8)},
              PhaseSpec{"idle_after", Duration::s(8), Duration::s(10)}};
  RunRecorder r(RunInfo{}, l);
  std::vector<FlowTotals> t(2);
  t[0] = FlowTotals{400'000, 3, 375'000};
  const report::Run run = r.finish(at_ms(5000), std::vector<FlowCounters>(2), t);
  ASSERT_EQ(run.phases.size(), 2u);
  EXPECT_EQ(run.phases[1], (Phase{"load", 2.0, 5.0}));
  EXPECT_DOUBLE_EQ(run.duration_s, 5.0);
  const FlowTransfer& up = run.transfer.a_to_b.flows.at(0);
  EXPECT_EQ(up.name, "up");
  EXPECT_DOUBLE_EQ(up.receiver.end_s, 5.0);
  EXPECT_DOUBLE_EQ(up.receiver.bits_per_second, 1e6);  // 375 kB in 3 s
  EXPECT_EQ(run.retransmits, 3u);
  EXPECT_DOUBLE_EQ(run.goodput_bps.a_to_b, 1e6);
}

TEST(RunRecorder, RunInfoAndThePublishedComparisonAreCarriedOver) {
  RunLayout l = two_flows(Duration::s(4), Duration::s(1));
  l.probes = {ProbeSpec{"udp", false, Direction::kAtoB, 0, false},
              ProbeSpec{"ping", true, Direction::kAtoB, 0, false},
              ProbeSpec{"ping-2", true, Direction::kAtoB, 0, false}};
  RunInfo info;
  info.label = "bql=true";
  info.params = {RunParam{"hosts.a.nic.bql", true}};
  info.backend = "emu";
  info.seed = 7;
  info.config_toml = "[scenario]\n";
  info.published = {{"source", std::string("a paper")}, {"ping_ms", 2.0}, {"rpm", 100.0}};
  RunRecorder r(info, l);
  r.probe_answered(1, r.probe_sent(1, at_ms(0)), Duration::ms(3));
  r.probe_answered(2, r.probe_sent(2, at_ms(0)), Duration::ms(9));
  const report::Run run =
      r.finish(at_ms(4000), std::vector<FlowCounters>(2), std::vector<FlowTotals>(2));
  EXPECT_EQ(run.label, "bql=true");
  EXPECT_EQ(run.params, info.params);
  EXPECT_EQ(run.backend, "emu");
  EXPECT_EQ(run.seed, 7u);
  EXPECT_EQ(run.config_toml, "[scenario]\n");
  ASSERT_EQ(run.comparison.size(), 2u);
  EXPECT_EQ(run.comparison[0].metric, "ping_ms");
  EXPECT_EQ(run.comparison[0].simulated, 3.0);  // the first ICMP probe, not ping-2
  EXPECT_EQ(run.comparison[0].relative_error, 0.5);
  EXPECT_EQ(run.comparison[0].source, "a paper");
  EXPECT_FALSE(run.comparison[1].simulated.has_value());  // no rrul: no rpm
}

}  // namespace
}  // namespace nicsim::report

namespace nicsim::report {
namespace {

// udp_flood: counts, the loss horizon in 10 ms steps of send time, one-way statistics, the rate
// that arrived over the flood's window.
TEST(RunRecorder, FloodLossFollowsTheHorizonAndArrivalsAllCount) {
  RunLayout l;
  l.duration = Duration::s(3);
  l.floods = {
      FloodSpec{"udp_flood", Direction::kBtoA, 46, 8000, 100, Duration::zero(), Duration::s(3)}};
  RunRecorder r(RunInfo{}, l);
  // One datagram every 100 ms: 30 in all, sent at 0, 100, ..., 2900 ms.
  for (int64_t k = 0; k < 30; ++k) {
    const Time sent = at_ms(100 * k);
    const uint64_t seq = r.flood_sent(0, sent);
    EXPECT_EQ(seq, static_cast<uint64_t>(k));
    // Every third is lost; the others take 5 ms. Datagram 29 (sent at 2.9 s) is lost too but
    // within the last second, as are 20..28: only losses sent before 2.0 s count.
    if (k % 3 != 0 && k != 29) {
      r.flood_received(0, seq, sent, Duration::ms(5));
    }
  }
  const report::Run run = r.finish(at_ms(3000), {}, {});
  const FloodResult& f = run.udp_flood.at("udp_flood");
  EXPECT_EQ(f.direction, "b->a");
  EXPECT_EQ(f.dscp, 46);
  EXPECT_EQ(f.sent, 30u);
  EXPECT_EQ(f.received, 19u);  // 20 of k % 3 != 0, without 29
  // Judged: sent before 2.0 s (k = 0..19); lost among them: k = 0, 3, ..., 18 (7).
  EXPECT_EQ(f.lost, 7u);
  EXPECT_DOUBLE_EQ(f.loss_pct, 100.0 * 7 / 20);
  EXPECT_EQ(f.one_way.count, 19u);
  EXPECT_EQ(f.one_way.lost, 7u);
  EXPECT_DOUBLE_EQ(f.one_way.p50, 5.0);
  // 19 x 100 bytes over 3 s.
  EXPECT_DOUBLE_EQ(f.received_bps, 19 * 100 * 8 / 3.0);
}

// Interval::floods: each interval holds the datagrams SENT in it (flent's per-sample series of
// iperf -u and irtt), losses judged by the same horizon as the totals.
TEST(RunRecorder, FloodIntervalsCountTheDatagramsSentInEach) {
  RunLayout l;
  l.duration = Duration::s(3);
  l.floods = {
      FloodSpec{"udp_flood", Direction::kAtoB, 0, 8000, 100, Duration::zero(), Duration::s(3)}};
  RunRecorder r(RunInfo{}, l);
  for (int64_t k = 0; k < 30; ++k) {
    const Time sent = at_ms(100 * k);
    const uint64_t seq = r.flood_sent(0, sent);
    if (k % 3 != 0 && k != 29) {
      r.flood_received(0, seq, sent, Duration::ms(5));
    }
    if (k == 9 || k == 19) {
      r.close_interval(at_ms(100 * k + 100), {});
    }
  }
  const report::Run run = r.finish(at_ms(3000), {}, {});
  ASSERT_EQ(run.intervals.size(), 3u);
  const FloodInterval& first = run.intervals[0].floods.at("udp_flood");
  EXPECT_EQ(first.sent, 10u);
  EXPECT_EQ(first.received, 6u);  // k = 1, 2, 4, 5, 7, 8
  EXPECT_EQ(first.lost, 4u);      // k = 0, 3, 6, 9
  EXPECT_DOUBLE_EQ(first.bits_per_second, 6 * 100 * 8 / 1.0);
  EXPECT_DOUBLE_EQ(*first.one_way_ms, 5.0);
  EXPECT_FALSE(first.ipdv_ms);  // udp_flood: no per-packet delays
  const FloodInterval& last = run.intervals[2].floods.at("udp_flood");
  EXPECT_EQ(last.sent, 10u);
  EXPECT_EQ(last.received, 6u);  // 20, 22, 23, 25, 26, 28
  EXPECT_EQ(last.lost, 0u);      // sent within the last second: not judged
}

TEST(RunRecorder, VoipIntervalsHoldDelayJitterAndLoss) {
  RunLayout l;
  l.duration = Duration::s(4);
  l.floods = {FloodSpec{"VoIP", Direction::kAtoB, 0, 68800, 172, Duration::zero(), Duration::s(4),
                        "", "", "g711"}};
  RunRecorder r(RunInfo{}, l);
  // 50 packets per second for 4 s; delays alternate 5 and 7 ms (|IPDV| 2 ms); in the first
  // second packets 10 and 11 are lost.
  for (int64_t k = 0; k < 200; ++k) {
    const Time sent = at_ms(20 * k);
    const uint64_t seq = r.flood_sent(0, sent);
    if (k != 10 && k != 11) {
      r.flood_received(0, seq, sent, Duration::ms(k % 2 == 0 ? 5 : 7));
    }
    if (k % 50 == 49 && k < 199) {
      r.close_interval(at_ms(20 * k + 20), {});
    }
  }
  const report::Run run = r.finish(at_ms(4000), {}, {});
  ASSERT_EQ(run.intervals.size(), 4u);
  const FloodInterval& first = run.intervals[0].floods.at("VoIP");
  EXPECT_EQ(first.sent, 50u);
  EXPECT_EQ(first.received, 48u);
  EXPECT_EQ(first.lost, 2u);
  EXPECT_DOUBLE_EQ(*first.one_way_ms, 6.0);  // 24 x 5 + 24 x 7 over 48
  EXPECT_DOUBLE_EQ(*first.ipdv_ms, 2.0);
  EXPECT_DOUBLE_EQ(first.bits_per_second, 48 * 172 * 8 / 1.0);
  EXPECT_EQ(run.intervals[1].floods.at("VoIP").lost, 0u);
}

}  // namespace
}  // namespace nicsim::report
