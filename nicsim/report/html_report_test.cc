// The HTML report's page (html_report.h): escaping of everything from the results file, the
// JSON data block (parsed back here), each chart's data and counted points, the trade-off
// only for several runs, the self-contained page (dygraphs inlined, a policy that fetches
// nothing). That the page draws in a browser: tests/report/html_report_test.py.
#include "nicsim/report/html_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "nicsim/report/export_flent.h"
#include "nicsim/report/sample_results.h"

namespace nicsim::report {
namespace {

using nlohmann::json;

// The JSON block's text, parsed.
json data_of(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"nicsim-data\">";
  const size_t begin = page.find(open);
  EXPECT_NE(begin, std::string::npos);
  const size_t from = begin + open.size();
  const size_t end = page.find("</script>", from);
  EXPECT_NE(end, std::string::npos);
  return json::parse(page.substr(from, end - from));
}

const json* chart(const json& charts, const std::string& id) {
  for (const json& c : charts) {
    if (c["id"] == id) {
      return &c;
    }
  }
  return nullptr;
}

size_t non_null(const json& rows) {
  size_t n = 0;
  for (const json& row : rows) {
    for (size_t i = 1; i < row.size(); ++i) {
      n += row[i].is_null() ? 0 : 1;
    }
  }
  return n;
}

TEST(HtmlEscape, EscapesMarkupCharacters) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(script_safe_json(R"({"l":"</script><!--&"})"),
            R"({"l":"\u003c/script\u003e\u003c!--\u0026"})");
}

TEST(HtmlReport, HostileLabelsStayText) {
  Results r = samples::full_sample_results();
  const std::string evil = "</script><script>alert(1)</script><img src=x onerror=alert(2)>";
  r.runs[0].label = evil;
  r.runs[0].params[0].key = evil;
  const ProbeLatency probe = r.runs[0].latency_ms.begin()->second;
  r.runs[0].latency_ms[evil] = probe;
  const std::string page = html_report(r, {"x\"<b>.json"});
  // Only the page's own script elements: the json block, the error counter, dygraphs, the page.
  size_t scripts = 0;
  for (size_t at = page.find("<script"); at != std::string::npos;
       at = page.find("<script", at + 1)) {
    ++scripts;
  }
  EXPECT_EQ(scripts, 4u);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("x\"<b>"), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);  // table
  // The JSON block reads back with the label intact.
  const json data = data_of(page);
  EXPECT_EQ(data["runs"][0]["label"], evil);
  EXPECT_EQ(data["source"], "x\"<b>.json");
}

TEST(HtmlReport, SelfContained) {
  const std::string page = html_report(samples::full_sample_results(), {"r.json"});
  EXPECT_NE(page.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  EXPECT_NE(page.find("Dygraph"), std::string::npos);  // the library, inlined
  EXPECT_EQ(page.find("sourceMappingURL"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
}

TEST(HtmlReport, RunTableHasEveryRun) {
  const Results r = samples::full_sample_results();
  const std::string page = html_report(r, {"r.json"});
  for (size_t i = 0; i < r.runs.size(); ++i) {
    EXPECT_NE(page.find("<tr data-run=\"" + std::to_string(i) + "\">"), std::string::npos);
    EXPECT_NE(page.find(html_escape(r.runs[i].label)), std::string::npos);
  }
}

TEST(HtmlReport, ChartsCarryTheirDataAndCounts) {
  const Results r = samples::full_sample_results();
  const json data = data_of(html_report(r, {"r.json"}));
  const report::Run& run = r.runs[0];
  const json& charts = data["runs"][0]["charts"];
  for (const json& c : charts) {
    EXPECT_EQ(c["points"].get<size_t>(), non_null(c["rows"])) << c["id"];
    EXPECT_EQ(c["labels"].size(), c["colors"].size() + 1) << c["id"];
    for (const json& row : c["rows"]) {
      EXPECT_EQ(row.size(), c["labels"].size()) << c["id"];
    }
  }
  const json* goodput = chart(charts, "goodput");
  ASSERT_NE(goodput, nullptr);
  EXPECT_EQ((*goodput)["rows"].size(), run.intervals.size() + 1);  // + the closing step
  EXPECT_EQ((*goodput)["rows"][0][0], run.intervals[0].start_s);
  ASSERT_NE(chart(charts, "latency"), nullptr);
  const json* cdf = chart(charts, "cdf");
  ASSERT_NE(cdf, nullptr);
  size_t samples = 0;
  for (const auto& [name, p] : run.latency_ms) {
    for (const auto& v : p.series.rtt_ms) {
      samples += v ? 1 : 0;
    }
  }
  EXPECT_EQ((*cdf)["points"].get<size_t>(), samples);
  const json* stages = chart(charts, "stages");
  ASSERT_NE(stages, nullptr);
  EXPECT_EQ((*stages)["ticks"].size(), (*stages)["rows"].size());
  EXPECT_NE(chart(charts, "queue-0"), nullptr);
}

TEST(HtmlReport, MissingDataIsNamedNotDrawn) {
  const json data = data_of(html_report(samples::minimal_sample_results(), {"m.json"}));
  EXPECT_TRUE(data["runs"][0]["charts"].empty());
  EXPECT_EQ(data["runs"][0]["missing"].size(), 5u);
  EXPECT_TRUE(data["tradeoff"].is_null());
}

TEST(HtmlReport, LongSeriesAreThinned) {
  Results r = samples::full_sample_results();
  ProbeLatency& p = r.runs[0].latency_ms.begin()->second;
  p.series = {};
  for (int i = 0; i < 10000; ++i) {
    p.series.time_s.push_back(i * 0.001);
    p.series.rtt_ms.push_back(1.0 + i % 7);
  }
  HtmlReportOptions o{"r.json"};
  o.max_points_per_series = 500;
  const json data = data_of(html_report(r, o));
  const json* cdf = chart(data["runs"][0]["charts"], "cdf");
  ASSERT_NE(cdf, nullptr);
  EXPECT_LE((*cdf)["points"].get<size_t>(), 500u * r.runs[0].latency_ms.size());
  EXPECT_GE((*cdf)["points"].get<size_t>(), 500u);
}

TEST(HtmlReport, TradeoffForSeveralRuns) {
  const Results r = samples::full_sample_results();
  ASSERT_GE(r.runs.size(), 2u);
  const json data = data_of(html_report(r, {"r.json"}));
  const json& t = data["tradeoff"];
  ASSERT_FALSE(t.is_null());
  EXPECT_EQ(t["rows"].size(), r.runs.size());
  EXPECT_EQ(t["info"].size(), t["rows"].size());
  EXPECT_FALSE(t["info"][0]["params"].empty());
  for (size_t i = 1; i < t["rows"].size(); ++i) {  // dygraphs wants x in order
    EXPECT_LE(t["rows"][i - 1][0].get<double>(), t["rows"][i][0].get<double>());
  }
  Results one = r;
  one.runs.resize(1);
  one.statistics.clear();
  EXPECT_TRUE(data_of(html_report(one, {"r.json"}))["tradeoff"].is_null());
}

// The knee (plot_knee.h): one point per run of a sweep whose runs have rx_batching.
TEST(HtmlReport, KneeForARxBatchingSweep) {
  Results r = samples::full_sample_results();
  ASSERT_GE(r.runs.size(), 2u);
  EXPECT_TRUE(data_of(html_report(r, {"r.json"}))["knee"].is_null()) << "no rx_batching";
  for (size_t i = 0; i < r.runs.size(); ++i) {
    RxBatching b;
    b.gro = i == 0;
    b.frames = 1000;
    b.packets = i == 0 ? 100 : 1000;
    b.cpu_ns_per_frame = 2000.0 - 500.0 * static_cast<double>(i);
    b.rx_latency_ms.count = 1000;
    b.rx_latency_ms.mean = 0.01 * static_cast<double>(i + 1);
    r.runs[i].rx_batching["b"] = b;
  }
  const std::string page = html_report(r, {"r.json"});
  const json k = data_of(page)["knee"];
  ASSERT_FALSE(k.is_null());
  EXPECT_EQ(k["rows"].size(), r.runs.size());
  EXPECT_EQ(k["points"].get<size_t>(), r.runs.size());
  EXPECT_EQ(k["info"].size(), r.runs.size());
  // The last run has the least CPU per frame: first, with its own label and y (10 us x n).
  EXPECT_EQ(k["info"][0]["label"], r.runs.back().label);
  EXPECT_EQ(k["labels"].size(), 3u) << "x, GRO on and GRO off series";
  EXPECT_EQ(k["logscale"], true);
  EXPECT_NE(page.find("id=\"knee-section\""), std::string::npos);
}

TEST(HtmlReport, RepetitionStatisticsShown) {
  Results r = samples::full_sample_results();
  EXPECT_EQ(html_report(r, {"r.json"}).find("id=\"statistics\""), std::string::npos);
  RunStatistics s;
  s.label = "<rate>";
  s.repetitions = 3;
  s.metrics["goodput_mbit.a->b"] = MetricStatistics{"Mbit/s", 90, 1, 90, 89, 91, std::nullopt};
  r.statistics.push_back(s);
  const std::string page = html_report(r, {"r.json"});
  EXPECT_NE(page.find("id=\"statistics\""), std::string::npos);
  EXPECT_NE(page.find("run &lt;rate&gt;: 3 repetitions"), std::string::npos);
}

TEST(HtmlReport, NoRunsIsAnError) {
  Results r = samples::minimal_sample_results();
  r.runs.clear();
  EXPECT_THROW(html_report(r, {"e.json"}), ExportError);
}

}  // namespace
}  // namespace nicsim::report
