// Campaign plots: the data blocks gnuplot draws (sweep: one block per group, rows in x order,
// centre and interval; tradeoff: latency and goodput crosses per run) and the axis labels.
#include "nicsim/report/plot_campaign.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "nicsim/report/export_flent.h"
#include "nicsim/report/run_statistics.h"

namespace nicsim::report {
namespace {

PlotStyle style_of(PlotFormat f) {
  PlotStyle s;
  s.format = f;
  return s;
}

report::Run rep(bool bql, const std::string& rate, uint64_t r, double goodput, double rtt) {
  report::Run run;
  run.params = {{"hosts.board.nic.bql", bql}, {"wire.rate", rate}};
  run.label = std::string("bql=") + (bql ? "true" : "false") + " rate=" + rate +
              " rep=" + std::to_string(r);
  run.repetition = r;
  run.transfer.a_to_b.flows.push_back(FlowTransfer{});
  run.goodput_bps.a_to_b = goodput * 1e6;
  run.latency_ms["ping"].rtt.count = 10;
  run.latency_ms["ping"].rtt.mean = rtt;
  return run;
}

Results campaign() {
  Results res;
  for (bool bql : {false, true}) {
    for (const char* rate : {"100Mbit", "1Gbit"}) {
      const double base = bql ? 3 : 10;
      res.runs.push_back(rep(bql, rate, 0, 90, base - 1));
      res.runs.push_back(rep(bql, rate, 1, 92, base + 1));
    }
  }
  res.statistics = run_statistics(res.runs);
  return res;
}

TEST(SweepPlot, OneBlockPerGroupWithMeanAndInterval) {
  const GnuplotJob job = sweep_job(campaign(), {"rate", "ping.rtt_mean_ms", "bql"},
                                   style_of(PlotFormat::kPng), "/o.png", "/d");
  ASSERT_EQ(job.data_files.size(), 1u);
  const std::string& data = job.data_files[0].second;
  // bql=false: mean 10, t interval 10 ± 12.706 * sqrt(2) / sqrt(2) = ± 12.706 (10 - 12.706 is
  // -2.7059999999999995 in binary floating point).
  EXPECT_NE(
      data.find("# group hosts.board.nic.bql=false\n0 100Mbit 10 -2.7059999999999995 22.706 2\n"
                "1 1Gbit 10 -2.7059999999999995 22.706 2\n"),
      std::string::npos)
      << data;
  EXPECT_NE(data.find("# group hosts.board.nic.bql=true\n0 100Mbit 3 -9.706 15.706 2\n"),
            std::string::npos)
      << data;
  // Two groups on categories: drawn side by side, 0.04 of a category apart.
  EXPECT_NE(job.script.find("index 0 using ($1-0.02):3:4:5 with yerrorlines"), std::string::npos)
      << job.script;
  EXPECT_NE(job.script.find("index 1 using ($1+0.02):3:4:5 with yerrorlines"), std::string::npos)
      << job.script;
  EXPECT_NE(job.script.find("set ylabel 'ping.rtt_mean_ms (ms)'"), std::string::npos);
  EXPECT_NE(job.script.find("set xtics ('100Mbit' 0, '1Gbit' 1)"), std::string::npos) << job.script;
  EXPECT_NE(job.script.find("set xlabel 'wire.rate (as written in the scenario)'"),
            std::string::npos);
}

TEST(SweepPlot, NamesWhatTheFileHas) {
  EXPECT_THROW(
      sweep_job(campaign(), {"ring", "ping.rtt_mean_ms", ""}, style_of(PlotFormat::kSvg), "o", ""),
      ExportError);
  try {
    sweep_job(campaign(), {"rate", "nope", ""}, style_of(PlotFormat::kSvg), "o", "");
    FAIL();
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("goodput_mbit.a->b"), std::string::npos);
  }
}

TEST(TradeoffPlot, CrossesOfLatencyAndGoodputPerCombination) {
  const GnuplotJob job = tradeoff_job(campaign(), style_of(PlotFormat::kSvg), "/o.svg", "");
  const std::string& data = job.data_files.at(0).second;
  // bql=true rate=1Gbit: latency 3 ± 12.706, goodput 91 ± 12.706.
  EXPECT_NE(data.find("3 -9.706 15.706 91 78.294 103.706 \"bql=true rate=1Gbit\"\n"),
            std::string::npos)
      << data;
  EXPECT_NE(job.script.find("with xyerrorbars"), std::string::npos);
  // Rows by latency, labels alternating above and below, so close points stay readable.
  std::vector<double> xs;  // the first block's latencies, in file order
  std::istringstream lines(data);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() && !xs.empty()) {
      break;  // the end of the first block
    }
    if (!line.empty() && line[0] != '#') {
      xs.push_back(std::stod(line));
    }
  }
  EXPECT_GE(xs.size(), 2u) << data;
  EXPECT_TRUE(std::is_sorted(xs.begin(), xs.end())) << data;
  EXPECT_NE(job.script.find("every 2 using 1:4:7 with labels offset 1,1"), std::string::npos);
  EXPECT_NE(job.script.find("every 2::1 using 1:4:7 with labels offset 1,-1"), std::string::npos);
  EXPECT_NE(job.script.find("set xlabel 'ping.rtt_mean_ms (ms)'"), std::string::npos);
  EXPECT_NE(job.script.find("set ylabel 'goodput (Mbit/s)'"), std::string::npos);
}

TEST(CombinationStatistics, RunsWithoutRepetitionsArePointsWithoutIntervals) {
  Results res = campaign();
  res.statistics.clear();
  for (report::Run& r : res.runs) {
    r.repetition.reset();
  }
  const std::vector<RunStatistics> s = combination_statistics(res);
  ASSERT_EQ(s.size(), res.runs.size());
  EXPECT_FALSE(s[0].metrics.at("ping.rtt_mean_ms").ci);
}

}  // namespace
}  // namespace nicsim::report
