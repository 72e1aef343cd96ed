#include "nicsim/report/plot_knee.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nicsim/report/export_flent.h"
#include "nicsim/report/json.h"
#include "nicsim/report/json_reader.h"

namespace nicsim::report {
namespace {

// A run of a knee sweep: host b received `frames` frames; host a (ACKs) fewer.
Run knee_run(bool gro, bool dim, const std::string& usecs, double cpu_ns, double latency_us) {
  Run r;
  r.params = {{"hosts.b.nic.gro", gro}, {"wire.rate", std::string("1Gbit")}};
  if (!dim) {
    r.params.push_back({"hosts.b.nic.rx_coalesce.usecs", usecs});
  }
  r.label = std::string("gro=") + (gro ? "true" : "false") + " rate=1Gbit" +
            (dim ? "" : " usecs=" + usecs);
  r.goodput_bps[Direction::kAtoB] = 940e6;
  RxBatching b;
  b.gro = gro;
  b.adaptive_rx = dim;
  b.frames = 80000;
  b.packets = gro ? 4000 : 80000;
  b.frames_per_packet = static_cast<double>(b.frames) / static_cast<double>(b.packets);
  b.cpu_busy_s = cpu_ns * 80000 / 1e9;
  b.cpu_ns_per_frame = cpu_ns;
  b.rx_irqs = 1000;
  b.irqs_per_s = 1000;
  b.rx_latency_ms.count = 80000;
  b.rx_latency_ms.mean = latency_us / 1e3;
  b.rx_latency_ms.p99 = 2 * latency_us / 1e3;
  r.rx_batching["b"] = b;
  RxBatching a = b;
  a.frames = 100;  // the ACKs: fewer frames, so b is the receiving host
  r.rx_batching["a"] = a;
  return r;
}

// (Inside a TEST body `Run` names gtest's Test::Run.)
using Runs = std::vector<Run>;

std::vector<PlotRun> plot_runs(const Runs& runs) {
  std::vector<PlotRun> out;
  for (const Run& r : runs) {
    out.push_back({"knee.json", &r});
  }
  return out;
}

// Data rows (not comments, not blank) of a data file.
std::vector<std::string> rows_of(const std::string& data) {
  std::vector<std::string> rows;
  size_t p = 0;
  while (p < data.size()) {
    const size_t e = data.find('\n', p);
    const std::string line = data.substr(p, e - p);
    if (!line.empty() && line[0] != '#') {
      rows.push_back(line);
    }
    p = e == std::string::npos ? data.size() : e + 1;
  }
  return rows;
}

TEST(PlotKnee, OnePointPerRunOneSeriesPerModeInOrderOfCpu) {
  const Runs runs = {
      knee_run(false, false, "8us", 1900, 20),   knee_run(false, false, "50us", 1700, 45),
      knee_run(false, false, "100us", 1650, 90), knee_run(true, false, "8us", 900, 25),
      knee_run(true, false, "50us", 800, 50),    knee_run(false, true, "", 1750, 30)};
  const GnuplotJob job = knee_job(plot_runs(runs), {}, PlotStyle{}, "/o/k.png", "/d");
  ASSERT_EQ(job.data_files.size(), 1u);
  EXPECT_EQ(job.data_files[0].first, "knee.dat");
  const std::string& data = job.data_files[0].second;
  const std::vector<std::string> rows = rows_of(data);
  ASSERT_EQ(rows.size(), runs.size()) << data;
  // Series: GRO off fixed (3 points, by CPU), GRO on fixed (2), GRO off DIM (1).
  EXPECT_NE(data.find("# series GRO off, fixed, rate=1Gbit\n1650 90 "), std::string::npos) << data;
  EXPECT_NE(data.find("# series GRO on, fixed, rate=1Gbit\n800 50 "), std::string::npos);
  EXPECT_NE(data.find("# series GRO off, DIM, rate=1Gbit\n1750 30 "), std::string::npos);
  EXPECT_NE(rows[0].find("\"100us 0.94G\""), std::string::npos) << rows[0];
  EXPECT_NE(rows[5].find("\"DIM 0.94G\""), std::string::npos) << rows[5];
  // Three series, each a curve and its labels, from the data file in data_dir.
  EXPECT_NE(job.script.find("'/d/knee.dat' index 2 using 1:2 with linespoints"), std::string::npos)
      << job.script;
  EXPECT_EQ(job.script.find("index 3"), std::string::npos);
  EXPECT_NE(job.script.find("set output '/o/k.png'"), std::string::npos);
}

TEST(PlotKnee, YChoosesMeanP99OrARunMetric) {
  Runs runs = {knee_run(false, false, "8us", 1900, 20)};
  runs[0].latency_ms["ping"].rtt.count = 10;
  runs[0].latency_ms["ping"].rtt.p99 = 0.75;
  EXPECT_DOUBLE_EQ(knee_points(plot_runs(runs), {"", "mean"})[0].y, 20.0);
  EXPECT_DOUBLE_EQ(knee_points(plot_runs(runs), {"", "p99"})[0].y, 40.0);
  EXPECT_DOUBLE_EQ(knee_points(plot_runs(runs), {"", "ping.rtt_p99_ms"})[0].y, 0.75);
  EXPECT_THROW(knee_points(plot_runs(runs), {"", "nope_ms"}), ExportError);
  // --host a: the ACK receiver's point.
  EXPECT_DOUBLE_EQ(knee_points(plot_runs(runs), {"a", "mean"})[0].y, 20.0);
  EXPECT_THROW(knee_points(plot_runs(runs), {"c", "mean"}), ExportError);
}

TEST(PlotKnee, RunsWithoutTheKneeFieldsAreRefusedByName) {
  Runs runs = {knee_run(false, false, "8us", 1900, 20)};
  runs[0].rx_batching.clear();
  try {
    (void)knee_points(plot_runs(runs), {});
    FAIL() << "no rx_batching must be refused";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("usecs=8us' has no rx_batching"), std::string::npos)
        << e.what();
  }
  runs[0] = knee_run(false, false, "8us", 1900, 20);
  runs[0].rx_batching["b"].rx_latency_ms = {};  // a file written before the knee's fields
  EXPECT_THROW(knee_points(plot_runs(runs), {}), ExportError);
}

// The knee's fields round-trip, and a document written before them still reads (as zeros).
TEST(PlotKnee, KneeFieldsRoundTripAndOldDocumentsRead) {
  Results res;
  res.meta.nicsim_version = "0.1.0";
  res.meta.start_time = "2026-12-02T00:00:00Z";
  res.runs = {knee_run(true, true, "", 900, 25)};
  const std::string text = to_json(res);
  EXPECT_EQ(read_results_text(text, "k.json"), res);
  std::string old = text;
  for (const char* key :
       {"adaptive_rx", "rx_irqs", "tx_irqs", "polls", "irqs_per_s", "cpu_ns_per_frame"}) {
    for (size_t p; (p = old.find(std::string("\"") + key + "\":")) != std::string::npos;) {
      const size_t comma = old.find(',', p);
      old.erase(p, comma + 1 - p);
    }
  }
  for (size_t p; (p = old.find("\"rx_latency_ms\":")) != std::string::npos;) {
    const size_t close = old.find('}', p);
    old.erase(p, close + 1 - p);
    // The member before it now ends in ",": drop that comma.
    const size_t comma = old.rfind(',', p);
    old.erase(comma, 1);
  }
  ASSERT_EQ(old.find("cpu_ns_per_frame"), std::string::npos);
  const Results back = read_results_text(old, "old.json");
  const RxBatching& b = back.runs[0].rx_batching.at("b");
  EXPECT_EQ(b.frames, 80000u);
  EXPECT_EQ(b.rx_irqs, 0u);
  EXPECT_FALSE(b.adaptive_rx);
  EXPECT_EQ(b.rx_latency_ms.count, 0u);
}

}  // namespace
}  // namespace nicsim::report
