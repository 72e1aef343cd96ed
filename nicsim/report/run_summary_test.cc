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

TEST(RunSummary, CompareTableAlignsColumns) {
  const Results res = samples::full_sample_results();
  const std::string t = format_compare_table(
      {{"a.json", summarize(res.runs[0])}, {"b.json", summarize(res.runs[1])}});
  const std::string want =
      "file    run                   backend  a->b Mbit/s  b->a Mbit/s  probe  p50 ms  p99 ms  "
      "induced ms  grade  RPM\n"
      "a.json  bql=false rate=1Gbit  sim             7.95        23.86  ping    0.401   0.553  "
      "         -  -        -\n"
      "b.json  bql=true rate=1Gbit   sim             7.95        23.86  ping    0.401   0.553  "
      "         -  -        -\n";
  EXPECT_EQ(t, want);
}

}  // namespace
}  // namespace nicsim::report
