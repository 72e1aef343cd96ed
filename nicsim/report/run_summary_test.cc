#include "nicsim/report/run_summary.h"

#include <gtest/gtest.h>

#include "nicsim/report/sample_results.h"

namespace nicsim::report {
namespace {

TEST(RunSummary, MainProbePrefersIcmpThenFirstName) {
  report::Run r = samples::full_sample_results().runs[0];
  ASSERT_NE(main_probe(r), nullptr);
  EXPECT_EQ(main_probe(r)->first, "ping");
  r.latency_ms.erase("ping");
  EXPECT_EQ(main_probe(r)->first, "udp_bk");  // first in name order
  r.latency_ms.clear();
  EXPECT_EQ(main_probe(r), nullptr);
}

TEST(RunSummary, SummaryTakesGoodputAndMainProbePercentiles) {
  const report::Run r = samples::full_sample_results().runs[1];
  const RunSummary s = summarize(r);
  EXPECT_EQ(s.label, "bql=true rate=1Gbit");
  EXPECT_EQ(s.goodput_bps, r.goodput_bps);
  EXPECT_EQ(s.probe, "ping");
  EXPECT_EQ(s.p50_ms, r.latency_ms.at("ping").rtt.p50);
  EXPECT_EQ(s.p99_ms, r.latency_ms.at("ping").rtt.p99);
}

TEST(RunSummary, RrulSummaryFieldsComeFromLatencyUnderLoad) {
  report::Run r = samples::full_sample_results().runs[1];
  RunSummary s = summarize(r);
  EXPECT_EQ(s.induced_latency_ms, r.latency_under_load->induced_latency_ms);
  EXPECT_EQ(s.grade, "A+");
  EXPECT_EQ(s.rpm, 100000.0);
  r.latency_under_load.reset();
  s = summarize(r);
  EXPECT_FALSE(s.induced_latency_ms || s.grade || s.rpm);
}

TEST(RunSummary, CompareTableAlignsColumns) {
  const Results res = samples::full_sample_results();
  report::Run plain = res.runs[0];
  plain.latency_under_load.reset();
  const std::string t = format_compare_table(
      {{"a.json", summarize(plain)}, {"long-name.json", summarize(res.runs[1])}});
  const std::string want =
      "file            run                   backend  a->b Mbit/s  b->a Mbit/s  probe  p50 ms  "
      "p99 ms  induced ms  grade     RPM\n"
      "a.json          bql=false rate=1Gbit  sim             7.95        23.86  ping    0.401   "
      "0.553           -  -           -\n"
      "long-name.json  bql=true rate=1Gbit   sim             7.95        23.86  ping    0.401   "
      "0.553       0.226  A+     100000\n";
  EXPECT_EQ(t, want);
}

}  // namespace
}  // namespace nicsim::report
