#include "nicsim/report/run_statistics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nicsim/report/json.h"

namespace nicsim::report {
namespace {

TEST(StudentT, TableAndExpansionAgree) {
  EXPECT_DOUBLE_EQ(student_t_975(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t_975(9), 2.262);
  EXPECT_NEAR(student_t_975(31), 2.0395, 2e-4);  // NIST table 1.3.6.7.2: df 30 = 2.042
  EXPECT_NEAR(student_t_975(60), 2.000, 1e-3);   // ... df 60 = 2.000
  EXPECT_NEAR(student_t_975(100), 1.984, 1e-3);  // ... df 100 = 1.984
  EXPECT_NEAR(student_t_975(100000), 1.960, 1e-3);
}

TEST(Describe, MeanStddevMedianAndTInterval) {
  const MetricStatistics m = describe({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "ms", false);
  EXPECT_DOUBLE_EQ(m.mean, 5.5);
  EXPECT_NEAR(m.stddev, 3.0276503540974917, 1e-12);
  EXPECT_DOUBLE_EQ(m.median, 5.5);
  ASSERT_TRUE(m.ci);
  EXPECT_EQ(m.ci->method, "student-t");
  EXPECT_NEAR(m.ci->half_width, 2.262 * 3.0276503540974917 / std::sqrt(10.0), 1e-12);
  EXPECT_NEAR(m.ci->low + m.ci->half_width, 5.5, 1e-12);
}

TEST(Describe, MedianIntervalUsesOrderStatistics) {
  // n = 10: P(B <= 1) = 11/1024 = 0.0107 <= 0.025 < P(B <= 2) = 56/1024, so k = 2:
  // [X(2), X(9)] with coverage 1 - 2 * 11/1024.
  const MetricStatistics m = describe({10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, "ms", true);
  ASSERT_TRUE(m.ci);
  EXPECT_EQ(m.ci->method, "order-statistic");
  EXPECT_DOUBLE_EQ(m.ci->low, 2);
  EXPECT_DOUBLE_EQ(m.ci->high, 9);
  EXPECT_NEAR(m.ci->level, 1 - 22.0 / 1024, 1e-12);
  // n = 5: no pair reaches 95 %: [min, max], coverage 1 - 2^-4.
  const MetricStatistics few = describe({3, 1, 2, 5, 4}, "ms", true);
  EXPECT_DOUBLE_EQ(few.ci->low, 1);
  EXPECT_DOUBLE_EQ(few.ci->high, 5);
  EXPECT_NEAR(few.ci->level, 1 - 1.0 / 16, 1e-12);
}

TEST(Describe, OneValueHasNoInterval) {
  const MetricStatistics m = describe({4}, "ms", false);
  EXPECT_FALSE(m.ci);
  EXPECT_EQ(m.stddev, 0);
  EXPECT_LT(relative_half_width(m), 0);
}

Run repetition(const std::string& label, uint64_t rep, double goodput, double rtt) {
  Run r;
  r.label = label.empty() ? "rep=" + std::to_string(rep) : label + " rep=" + std::to_string(rep);
  r.repetition = rep;
  r.seed = 100 + rep;
  r.transfer.a_to_b.flows.push_back(FlowTransfer{});
  r.goodput_bps.a_to_b = goodput * 1e6;
  r.latency_ms["ping"].rtt.count = 10;
  r.latency_ms["ping"].rtt.mean = rtt;
  r.latency_ms["ping"].rtt.p99 = rtt * 2;
  return r;
}

TEST(RunStatistics, GroupsConsecutiveRepetitionsOfACombination) {
  std::vector<report::Run> runs = {repetition("bql=true", 0, 90, 1),
                                   repetition("bql=true", 1, 94, 3),
                                   repetition("bql=false", 0, 95, 10)};
  runs[0].params = runs[1].params = {{"bql", true}};
  runs[2].params = {{"bql", false}};
  const std::vector<RunStatistics> s = run_statistics(runs);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].label, "bql=true");
  EXPECT_EQ(s[0].repetitions, 2u);
  EXPECT_EQ(s[0].seeds, (std::vector<uint64_t>{100, 101}));
  EXPECT_DOUBLE_EQ(s[0].metrics.at("goodput_mbit.a->b").mean, 92);
  EXPECT_DOUBLE_EQ(s[0].metrics.at("ping.rtt_mean_ms").mean, 2);
  EXPECT_EQ(s[0].metrics.at("ping.rtt_p99_ms").ci->method, "order-statistic");
  EXPECT_EQ(s[1].label, "bql=false");
  EXPECT_FALSE(s[1].metrics.at("ping.rtt_mean_ms").ci);
  EXPECT_NE(format_statistics_table(s).find("92 ±"), std::string::npos);
  // Repetitions that differ are not called identical; one repetition says nothing either.
  EXPECT_EQ(format_statistics_table(s).find("every repetition gave the same"), std::string::npos);
}

TEST(RunStatistics, IdenticalRepetitionsAreNamedInTheTable) {
  const std::vector<report::Run> runs = {repetition("bql=true", 0, 94, 2),
                                         repetition("bql=true", 1, 94, 2)};
  const std::string table = format_statistics_table(run_statistics(runs));
  EXPECT_NE(table.find("94 ± 0"), std::string::npos) << table;
  EXPECT_NE(table.find("every repetition gave the same values"), std::string::npos) << table;
}

TEST(RunStatistics, RunsWithoutRepetitionHaveNone) {
  report::Run r = repetition("", 0, 90, 1);
  r.repetition.reset();
  EXPECT_TRUE(run_statistics({r}).empty());
  EXPECT_EQ(combination_label(repetition("", 3, 1, 1)), "");
}

TEST(JsonStream, PartsEqualTheWholeDocumentAndReadBack) {
  Results res;
  res.meta.nicsim_version = "0";
  res.runs = {repetition("x=1", 0, 90, 1), repetition("x=1", 1, 91, 2)};
  res.statistics = run_statistics(res.runs);
  std::string parts = json_head(&res.meta);
  for (size_t i = 0; i < res.runs.size(); ++i) {
    parts += json_run_element(res.runs[i], i);
  }
  parts += json_tail(res.runs.size(), res.statistics);
  EXPECT_EQ(parts, to_json(res));
  const Results back = results_from_json(parts);
  EXPECT_EQ(back.runs, res.runs);
  EXPECT_EQ(back.statistics, res.statistics);
  EXPECT_EQ(to_json(back), parts);
}

}  // namespace
}  // namespace nicsim::report
