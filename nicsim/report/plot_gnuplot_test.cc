#include "nicsim/report/plot_gnuplot.h"

#include <gtest/gtest.h>

#include <string>

#include "nicsim/report/export_flent.h"
#include "nicsim/report/sample_results.h"

namespace nicsim::report {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Gnuplot, QuoteDoublesSingleQuotes) {
  EXPECT_EQ(gnuplot_quote("it's"), "'it''s'");
  EXPECT_EQ(gnuplot_quote("a\nb"), "'a b'");
}

TEST(Gnuplot, TotalsScriptAndData) {
  const Results res = samples::full_sample_results();
  const GnuplotJob job = gnuplot_job(PlotKind::kTotals, {{"r.json", &res.runs[0]}},
                                     PlotFormat::kPng, "/o/t.png", "/d");
  EXPECT_TRUE(contains(job.script, "set terminal pngcairo"));
  EXPECT_TRUE(contains(job.script, "set output '/o/t.png'"));
  EXPECT_TRUE(contains(job.script, "'/d/totals.dat' using 1:2 with lines"));
  EXPECT_TRUE(contains(job.script, "using 1:4 axes x1y2"));
  ASSERT_EQ(job.data_files.size(), 1u);
  EXPECT_EQ(job.data_files[0].first, "totals.dat");
  // mid time, a->b Mbit/s, b->a Mbit/s, mean of the probes' interval means (ping only at k=0)
  EXPECT_TRUE(contains(job.data_files[0].second, "\n0.5 8.000008 8.000008 0.1\n"))
      << job.data_files[0].second;
  EXPECT_TRUE(contains(job.data_files[0].second,
                       "\n1.5 8.016008 8.016008 " + std::to_string(0).substr(0, 0)));
}

TEST(Gnuplot, SvgTerminalAndCompareUsesP99WithoutRrulSummary) {
  const Results res = samples::full_sample_results();
  const GnuplotJob job =
      gnuplot_job(PlotKind::kCompare, {{"a.json", &res.runs[0]}, {"a.json", &res.runs[1]}},
                  PlotFormat::kSvg, "c.svg", "");
  EXPECT_TRUE(contains(job.script, "set terminal svg"));
  EXPECT_TRUE(contains(job.script, "p99 round-trip time (ms)"));
  ASSERT_EQ(job.data_files.size(), 1u);
  const std::string p99 = std::to_string(res.runs[0].latency_ms.at("ping").rtt.p99);
  EXPECT_TRUE(contains(job.data_files[0].second, "\"sim bql=false rate=1Gbit\" 0.55"))
      << job.data_files[0].second;
}

TEST(Gnuplot, CdfNeedsProbeSamples) {
  const Results res = samples::full_sample_results();
  EXPECT_THROW((void)gnuplot_job(PlotKind::kCdf, {{"r.json", &res.runs[0]}}, PlotFormat::kPng,
                                 "x.png", ""),
               ExportError);
}

}  // namespace
}  // namespace nicsim::report
