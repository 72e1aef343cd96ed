#include "nicsim/report/plot_gnuplot.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "nicsim/report/export_csv.h"
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
  EXPECT_TRUE(
      contains(job.script, "'/d/totals.dat' using 1:2 with steps lw 2 title 'a->b (upload)'"));
  EXPECT_TRUE(
      contains(job.script, "'/d/totals.dat' using 1:3 with steps lw 2 title 'b->a (download)'"));
  EXPECT_TRUE(contains(job.script, "set xrange [0:2]"));
  EXPECT_TRUE(contains(job.script, "using 1:4 axes x1y2"));
  ASSERT_EQ(job.data_files.size(), 1u);
  EXPECT_EQ(job.data_files[0].first, "totals.dat");
  // interval start, a->b Mbit/s, b->a Mbit/s, mean of the probes' interval means; the last
  // interval repeated at its end closes the step. Interval 0 has ping only (0.1 ms); interval 1
  // has ping (0.1 + 1/3) and udp_ef (1/3).
  const std::string mean1 = csv_number((0.1 + 1 / 3.0 + 1 / 3.0) / 2);
  EXPECT_EQ(job.data_files[0].second,
            "# start_s a->b_Mbit/s b->a_Mbit/s mean_latency_ms\n"
            "0 8.000008 8.000008 0.1\n"
            "1 8.016008 8.016008 " +
                mean1 +
                "\n"
                "2 8.016008 8.016008 " +
                mean1 + "\n");
}

TEST(Gnuplot, TotalsMarksPhases) {
  const Results res = samples::full_sample_results();
  const GnuplotJob job =
      gnuplot_job(PlotKind::kTotals, {{"r.json", &res.runs[0]}}, PlotFormat::kSvg, "t.svg", "");
  EXPECT_TRUE(contains(job.script, "set arrow from 0.5, graph 0 to 0.5, graph 1 nohead"));
  EXPECT_TRUE(contains(job.script, "set arrow from 2, graph 0 to 2, graph 1 nohead"));
  EXPECT_TRUE(contains(job.script, "set label 'load' at 1, graph 0.97 center"));
}

TEST(Gnuplot, CompareUsesInducedLatencyOfRrulRuns) {
  const Results res = samples::full_sample_results();
  const GnuplotJob job =
      gnuplot_job(PlotKind::kCompare, {{"a.json", &res.runs[0]}}, PlotFormat::kPng, "c.png", "");
  EXPECT_TRUE(contains(job.script, "set xlabel 'induced latency (ms)'"));
  EXPECT_TRUE(contains(job.data_files[0].second, "\n0.226 7.95223880597015 23.856716417910448\n"))
      << job.data_files[0].second;
}

TEST(Gnuplot, SvgTerminalAndCompareUsesP99WithoutRrulSummary) {
  Results res = samples::full_sample_results();
  res.runs[0].latency_under_load.reset();  // one run without: p99 for all
  const GnuplotJob job =
      gnuplot_job(PlotKind::kCompare, {{"a.json", &res.runs[0]}, {"a.json", &res.runs[1]}},
                  PlotFormat::kSvg, "c.svg", "");
  EXPECT_TRUE(contains(job.script, "set terminal svg"));
  EXPECT_TRUE(contains(job.script, "p99 round-trip time (ms)"));
  ASSERT_EQ(job.data_files.size(), 1u);
  // one row per run: p99 of the main probe (ping), goodput a->b and b->a in Mbit/s
  const report::Run& r0 = res.runs[0];
  const std::string row0 = csv_number(r0.latency_ms.at("ping").rtt.p99) + " " +
                           csv_number(r0.goodput_bps.a_to_b / 1e6) + " " +
                           csv_number(r0.goodput_bps.b_to_a / 1e6) + "\n";
  EXPECT_TRUE(contains(job.data_files[0].second, "\n" + row0)) << job.data_files[0].second;
  EXPECT_TRUE(contains(job.script,
                       "every ::1::1 using 1:3 with points pt 5 ps 1.8 lc 2 title "
                       "'sim bql=true rate=1Gbit b->a'"))
      << job.script;
}

TEST(Gnuplot, CdfFromProbeSamples) {
  const Results res = samples::full_sample_results();
  const GnuplotJob job =
      gnuplot_job(PlotKind::kCdf, {{"r.json", &res.runs[0]}}, PlotFormat::kPng, "x.png", "/d");
  // ping: 5 received of 6 (sorted, fraction i/n); udp_ef: 1 received; udp_bk: none (no line)
  ASSERT_EQ(job.data_files.size(), 2u);
  EXPECT_EQ(job.data_files[0].second,
            "# rtt_ms fraction_at_or_below\n0.344 0\n0.344 0.2\n0.399 0.4\n0.401 0.6\n"
            "0.432 0.8\n0.558 1\n");
  EXPECT_EQ(job.data_files[1].second, "# rtt_ms fraction_at_or_below\n1 0\n1 1\n");
  EXPECT_TRUE(contains(job.script,
                       "'/d/cdf0.dat' using 1:2 with steps lw 2 title "
                       "'ping (icmp, n=5)'"));
  EXPECT_TRUE(contains(job.script, "'udp_ef (udp, n=1)'"));
  EXPECT_FALSE(contains(job.script, "udp_bk"));
}

TEST(Gnuplot, CdfNeedsProbeSamples) {
  Results res = samples::full_sample_results();
  for (auto& entry : res.runs[0].latency_ms) {
    entry.second.series = {};
  }
  EXPECT_THROW(
      (void)gnuplot_job(PlotKind::kCdf, {{"r.json", &res.runs[0]}}, PlotFormat::kPng, "x.png", ""),
      ExportError);
}

TEST(Gnuplot, PaperStyleTerminalTitleFontAndSize) {
  const Results res = samples::full_sample_results();
  const PlotRun run{"r.json", &res.runs[0]};
  const GnuplotJob pdf = gnuplot_job(
      PlotKind::kTotals, {run}, PlotStyle{PlotFormat::kPdf, "BQL on", "3.5in,2.2in", "Times,9"},
      "/o/t.pdf", "/d");
  EXPECT_TRUE(contains(pdf.script,
                       "set terminal pdfcairo size 3.5in,2.2in noenhanced color "
                       "font 'Times,9'\n"));
  EXPECT_TRUE(contains(pdf.script, "set title 'BQL on'\n"));
  EXPECT_FALSE(contains(pdf.script, "Throughput and latency over time"));
  const GnuplotJob eps =
      gnuplot_job(PlotKind::kCdf, {run}, PlotStyle{PlotFormat::kEps, "", "", ""}, "/o/c.eps", "");
  EXPECT_TRUE(contains(eps.script,
                       "set terminal epscairo size 5in,3in noenhanced color "
                       "font 'sans,10'\n"));
  EXPECT_TRUE(contains(eps.script, "set title 'Latency CDF (RTT)"));
  EXPECT_TRUE(contains(eps.script, "set key outside"));
}

TEST(Gnuplot, PaletteIsTolsAndDistinctWithinTwelveSeries) {
  for (size_t n = 1; n <= 12; ++n) {
    const std::vector<std::string> c = series_colours(n);
    ASSERT_EQ(c.size(), n);
    EXPECT_EQ(std::set<std::string>(c.begin(), c.end()).size(), n) << n << " series";
  }
  EXPECT_EQ(series_colours(2), (std::vector<std::string>{"#1965B0", "#DC050C"}));
  const std::vector<std::string> c13 = series_colours(13);
  EXPECT_EQ(c13[12], c13[0]);  // the 13th series starts the 12 colours again
  // The script gives line types 1..n those colours and cycles after them.
  const Results res = samples::full_sample_results();
  const GnuplotJob job =
      gnuplot_job(PlotKind::kTotals, {{"r.json", &res.runs[0]}}, PlotFormat::kSvg, "t.svg", "");
  EXPECT_TRUE(contains(job.script, "set linetype 1 lc rgb '#1965B0'\n"));
  EXPECT_TRUE(contains(job.script, "set linetype cycle 3\n"));
}

}  // namespace
}  // namespace nicsim::report
