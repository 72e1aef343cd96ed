// The HTML report (html_report.h). The page's markup and data are built here; its script
// (html_report.js) and style (html_report.css) and dygraphs 2.2 (Debian libjs-dygraphs) are
// embedded at build time by cmake/NicsimEmbed.cmake into html_report_assets.cc.
#include "nicsim/report/html_report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "nicsim/report/export_flent.h"
#include "nicsim/report/plot_campaign.h"
#include "nicsim/report/plot_gnuplot.h"
#include "nicsim/report/plot_knee.h"
#include "nicsim/report/run_statistics.h"
#include "nicsim/report/run_summary.h"

namespace nicsim::report {

// Embedded at build time (html_report_assets.cc, generated).
namespace html_assets {
extern const std::string_view kDygraphJs;
extern const std::string_view kDygraphCss;
extern const std::string_view kPageJs;
extern const std::string_view kPageCss;
}  // namespace html_assets

namespace {

using nlohmann::json;

// A chart as the page script draws it: a dygraphs data table (x first, one column per series,
// null where a series has no value) and what to call things. `points` counts the non-null
// series values: what the page must draw.
struct Chart {
  std::string id;     // unique in the page: "goodput", "queue-0", ...
  std::string kind;   // "step" | "line" | "cdf" | "bars" | "points"
  std::string title;  // as text (the page escapes it)
  std::string xlabel, ylabel;
  std::vector<std::string> labels;  // x, then the series
  json rows = json::array();
  json extra = json::object();  // kind-specific: "ticks" (bars), "info" (points), "sync"
};

json chart_json(const Chart& c) {
  size_t points = 0;
  for (const json& row : c.rows) {
    for (size_t i = 1; i < row.size(); ++i) {
      points += row[i].is_null() ? 0 : 1;
    }
  }
  json j = {
      {"id", c.id},         {"kind", c.kind},     {"title", c.title},
      {"xlabel", c.xlabel}, {"ylabel", c.ylabel}, {"labels", c.labels},
      {"rows", c.rows},     {"points", points},   {"colors", series_colours(c.labels.size() - 1)}};
  j.update(c.extra);
  return j;
}

// Indexes of at most `max` of n items, evenly spread, first and last kept.
std::vector<size_t> thinned(size_t n, size_t max) {
  std::vector<size_t> out;
  if (n <= max || max < 2) {
    for (size_t i = 0; i < n && (max >= 2 || i < max); ++i) {
      out.push_back(i);
    }
    return out;
  }
  for (size_t k = 0; k < max; ++k) {
    out.push_back(k * (n - 1) / (max - 1));
  }
  return out;
}

// Goodput per direction over time, one step per interval (the value spans its interval; a last
// row at the end of the last interval closes the final step), as `nicsim plot` totals.
std::optional<Chart> goodput_chart(const Run& r) {
  const std::vector<Direction> dirs = busy_directions(r);
  if (r.intervals.empty() || dirs.empty()) {
    return std::nullopt;
  }
  Chart c{"goodput", "step", "Goodput over time", "time (s)", "goodput (Mbit/s)", {"time (s)"}};
  for (Direction d : dirs) {
    c.labels.push_back(direction_title(d));
  }
  const auto row = [&](double t, const Interval& iv) {
    json j = json::array({t});
    for (Direction d : dirs) {
      j.push_back(iv.directions[d].bits_per_second / 1e6);
    }
    c.rows.push_back(std::move(j));
  };
  for (const Interval& iv : r.intervals) {
    row(iv.start_s, iv);
  }
  row(r.intervals.back().end_s, r.intervals.back());
  c.extra["sync"] = "time";
  return c;
}

// Latency over time: every received RTT sample of every probe (thinned), or, for a run whose
// probes kept statistics only, each interval's mean per probe.
std::optional<Chart> latency_chart(const Run& r, size_t max_points) {
  Chart c{"latency",   "line", "Latency over time (RTT)", "time (s)", "round-trip time (ms)",
          {"time (s)"}};
  std::vector<std::tuple<double, size_t, double>> samples;  // time, probe column, ms
  for (const auto& [name, p] : r.latency_ms) {
    std::vector<std::pair<double, double>> got;
    for (size_t i = 0; i < p.series.rtt_ms.size() && i < p.series.time_s.size(); ++i) {
      if (p.series.rtt_ms[i]) {
        got.emplace_back(p.series.time_s[i], *p.series.rtt_ms[i]);
      }
    }
    if (got.empty()) {
      continue;
    }
    c.labels.push_back(name + " (" + p.kind + ")");
    for (size_t i : thinned(got.size(), max_points)) {
      samples.emplace_back(got[i].first, c.labels.size() - 1, got[i].second);
    }
  }
  if (!samples.empty()) {
    std::stable_sort(samples.begin(), samples.end(),
                     [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    for (const auto& [t, column, ms] : samples) {
      json row = json::array({t});
      for (size_t k = 1; k < c.labels.size(); ++k) {
        row.push_back(k == column ? json(ms) : json(nullptr));
      }
      c.rows.push_back(std::move(row));
    }
    c.extra["sync"] = "time";
    return c;
  }
  // Interval means (a probe absent from an interval has no value there).
  std::vector<std::string> probes;
  for (const Interval& iv : r.intervals) {
    for (const auto& [name, ms] : iv.latency_ms) {
      if (std::find(probes.begin(), probes.end(), name) == probes.end()) {
        probes.push_back(name);
      }
    }
  }
  if (probes.empty()) {
    return std::nullopt;
  }
  c.title = "Latency over time (RTT, mean per interval)";
  for (const std::string& p : probes) {
    c.labels.push_back(p);
  }
  for (const Interval& iv : r.intervals) {
    json row = json::array({iv.start_s});
    for (const std::string& p : probes) {
      const auto it = iv.latency_ms.find(p);
      row.push_back(it == iv.latency_ms.end() ? json(nullptr) : json(it->second));
    }
    c.rows.push_back(std::move(row));
  }
  c.extra["sync"] = "time";
  return c;
}

// Empirical CDF of each probe's RTT samples: (i+1)/n at the i-th sorted sample (thinned).
std::optional<Chart> cdf_chart(const Run& r, size_t max_points) {
  Chart c{"cdf",
          "cdf",
          "Latency CDF (RTT)",
          "round-trip time (ms)",
          "fraction of samples",
          {"round-trip time (ms)"}};
  std::vector<std::tuple<double, size_t, double>> points;  // ms, probe column, fraction
  for (const auto& [name, p] : r.latency_ms) {
    std::vector<double> v;
    for (const std::optional<double>& s : p.series.rtt_ms) {
      if (s) {
        v.push_back(*s);
      }
    }
    if (v.empty()) {
      continue;
    }
    std::sort(v.begin(), v.end());
    c.labels.push_back(name + " (" + p.kind + ", n=" + std::to_string(v.size()) + ")");
    const double n = static_cast<double>(v.size());
    for (size_t i : thinned(v.size(), max_points)) {
      points.emplace_back(v[i], c.labels.size() - 1, static_cast<double>(i + 1) / n);
    }
  }
  if (points.empty()) {
    return std::nullopt;
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto& [ms, column, f] : points) {
    json row = json::array({ms});
    for (size_t k = 1; k < c.labels.size(); ++k) {
      row.push_back(k == column ? json(f) : json(nullptr));
    }
    c.rows.push_back(std::move(row));
  }
  return c;
}

// Mean time in each stage of the path per direction, as bars (stages in path order as the
// back-end wrote them, a->b's first).
std::optional<Chart> stages_chart(const Run& r) {
  std::vector<std::string> stages;
  for (Direction d : kDirections) {
    for (const StageTime& s : r.stages[d]) {
      if (std::find(stages.begin(), stages.end(), s.stage) == stages.end()) {
        stages.push_back(s.stage);
      }
    }
  }
  if (stages.empty()) {
    return std::nullopt;
  }
  Chart c{"stages", "bars", "Mean waiting per stage", "stage", "mean time in stage (ms)",
          {"stage"}};
  std::vector<Direction> dirs;
  for (Direction d : kDirections) {
    if (!r.stages[d].empty()) {
      dirs.push_back(d);
      c.labels.push_back(direction_title(d));
    }
  }
  for (size_t i = 0; i < stages.size(); ++i) {
    json row = json::array({static_cast<double>(i)});
    for (Direction d : dirs) {
      const auto& v = r.stages[d];
      const auto it = std::find_if(v.begin(), v.end(),
                                   [&](const StageTime& s) { return s.stage == stages[i]; });
      row.push_back(it == v.end() ? json(nullptr) : json(it->mean_ms));
    }
    c.rows.push_back(std::move(row));
  }
  c.extra["ticks"] = stages;
  return c;
}

// One chart per queue (a host, or a network's interface): its byte columns over time.
std::vector<Chart> queue_charts(const Run& r, size_t max_points) {
  std::vector<Chart> out;
  for (const auto& [name, q] : r.queues) {
    const std::pair<const char*, const std::vector<uint64_t>*> columns[] = {
        {"qdisc", &q.qdisc_bytes},
        {"TX ring", &q.ring_bytes},
        {"BQL limit", &q.bql_limit_bytes},
        {"BQL in flight", &q.bql_inflight_bytes},
        {"device FIFO", &q.device_fifo_bytes}};
    Chart c{"queue-" + std::to_string(out.size()),
            "step",
            "Queues of " + name,
            "time (s)",
            "bytes",
            {"time (s)"}};
    std::vector<const std::vector<uint64_t>*> used;
    for (const auto& [label, column] : columns) {
      if (!column->empty() && column->size() == q.time_s.size()) {
        c.labels.push_back(label);
        used.push_back(column);
      }
    }
    if (used.empty() || q.time_s.empty()) {
      continue;
    }
    for (size_t i : thinned(q.time_s.size(), max_points)) {
      json row = json::array({q.time_s[i]});
      for (const auto* column : used) {
        row.push_back(static_cast<double>((*column)[i]));
      }
      c.rows.push_back(std::move(row));
    }
    c.extra["sync"] = "time";
    out.push_back(std::move(c));
  }
  return out;
}

json params_json(const std::vector<RunParam>& params) {
  json out = json::array();
  for (const RunParam& p : params) {
    out.push_back({p.key, param_value_text(p.value)});
  }
  return out;
}

json run_json(const Run& r, size_t max_points) {
  json charts = json::array();
  json missing = json::array();
  const auto add = [&](std::optional<Chart> c, const char* what) {
    if (c) {
      charts.push_back(chart_json(*c));
    } else {
      missing.push_back(what);
    }
  };
  add(goodput_chart(r), "goodput over time (no intervals with TCP traffic)");
  add(latency_chart(r, max_points), "latency over time (no probe samples)");
  add(cdf_chart(r, max_points), "latency CDF (no probe samples)");
  add(stages_chart(r), "waiting per stage (no stage times)");
  std::vector<Chart> queues = queue_charts(r, max_points);
  for (const Chart& c : queues) {
    charts.push_back(chart_json(c));
  }
  if (queues.empty()) {
    missing.push_back("queues (no queue series)");
  }
  json phases = json::array();
  for (const Phase& p : r.phases) {
    phases.push_back({p.name, p.start_s, p.end_s});
  }
  return {{"label", r.label}, {"backend", r.backend}, {"params", params_json(r.params)},
          {"phases", phases}, {"charts", charts},     {"missing", missing}};
}

// Goodput against latency per [vary] combination (plot_campaign.h's tradeoff: the same
// statistics and x metric); each row's run, parameters and intervals for the hover text.
std::optional<Chart> tradeoff_chart(const Results& results) {
  const std::vector<RunStatistics> stats = combination_statistics(results);
  const std::string x_metric = tradeoff_latency_metric(stats);
  if (stats.size() < 2 || x_metric.empty()) {
    return std::nullopt;
  }
  Chart c{"tradeoff",         "points",           "Goodput vs " + x_metric + " per run",
          x_metric + " (ms)", "goodput (Mbit/s)", {x_metric}};
  const char* const keys[] = {"goodput_mbit.a->b", "goodput_mbit.b->a"};
  std::vector<const char*> used;
  for (size_t k = 0; k < 2; ++k) {
    if (std::any_of(stats.begin(), stats.end(),
                    [&](const RunStatistics& s) { return s.metrics.contains(keys[k]); })) {
      used.push_back(keys[k]);
      c.labels.push_back(direction_title(k == 0 ? Direction::kAtoB : Direction::kBtoA));
    }
  }
  if (used.empty()) {
    return std::nullopt;
  }
  std::vector<std::pair<double, size_t>> order;  // x, combination
  for (size_t i = 0; i < stats.size(); ++i) {
    if (const auto x = stats[i].metrics.find(x_metric); x != stats[i].metrics.end()) {
      order.emplace_back(metric_point(x->second).centre, i);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  json info = json::array();
  for (const auto& [x, i] : order) {
    const RunStatistics& s = stats[i];
    json row = json::array({x});
    json values = json::array();
    for (const char* key : used) {
      const auto m = s.metrics.find(key);
      if (m == s.metrics.end()) {
        row.push_back(nullptr);
        continue;
      }
      const MetricPoint p = metric_point(m->second);
      row.push_back(p.centre);
      values.push_back({key, p.centre, p.low, p.high});
    }
    const MetricPoint px = metric_point(s.metrics.at(x_metric));
    values.push_back({x_metric, px.centre, px.low, px.high});
    c.rows.push_back(std::move(row));
    info.push_back({{"label", s.label},
                    {"params", params_json(s.params)},
                    {"repetitions", s.repetitions},
                    {"values", values}});
  }
  c.extra["info"] = info;
  return c;
}

// The run table: one row per run, the numbers of `nicsim compare` (run_summary.h).
std::string run_table(const Results& results) {
  std::string t =
      "<table id=\"run-table\"><thead><tr><th>#</th><th>run</th><th>backend</th>"
      "<th>goodput a-&gt;b<br>Mbit/s</th><th>goodput b-&gt;a<br>Mbit/s</th><th>probe</th>"
      "<th>p50<br>ms</th><th>p99<br>ms</th><th>induced latency<br>ms</th><th>grade</th>"
      "<th>RPM</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const RunSummary s = summarize(results.runs[i]);
    const std::string n = std::to_string(i);
    t += "<tr data-run=\"" + n + "\"><td><a href=\"#run=" + n + "\">" + n + "</a></td><td>" +
         html_escape(s.label.empty() ? "(single)" : s.label) + "</td><td>" +
         html_escape(s.backend) + "</td><td class=\"num\">" +
         format_summary_value(s.goodput_bps.a_to_b / 1e6, "%.2f") + "</td><td class=\"num\">" +
         format_summary_value(s.goodput_bps.b_to_a / 1e6, "%.2f") + "</td><td>" +
         html_escape(s.probe.empty() ? "-" : s.probe) + "</td><td class=\"num\">" +
         format_summary_value(s.p50_ms, "%.3f") + "</td><td class=\"num\">" +
         format_summary_value(s.p99_ms, "%.3f") + "</td><td class=\"num\">" +
         format_summary_value(s.induced_latency_ms, "%.3f") + "</td><td>" +
         html_escape(s.grade.value_or("-")) + "</td><td class=\"num\">" +
         format_summary_value(s.rpm, "%.0f") + "</td></tr>\n";
  }
  return t + "</tbody></table>\n";
}

std::string run_options(const Results& results) {
  std::string out;
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    out += "<option value=\"" + std::to_string(i) + "\">" + std::to_string(i) + ": " +
           html_escape(r.label.empty() ? "(single)" : r.label) + "</option>";
  }
  return out;
}

// dump() that never throws on bad UTF-8 (the reader checked it; a library user may not have).
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The Content-Security-Policy of the page: inline script and style only, images only as data
// (dygraphs draws on canvases), nothing fetched, no forms, no frames, no base URL.
constexpr std::string_view kPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string script_safe_json(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += ch;
    }
  }
  return out;
}
// The receive batching knee (plot_knee.h, as `nicsim plot --kind knee`): the receiving host's
// core time per frame against the latency its receive path added, one column per mode; only
// when every run has the knee's fields and there are two runs or more.
std::optional<Chart> knee_chart(const Results& results) {
  std::vector<PlotRun> runs;
  for (const Run& r : results.runs) {
    runs.push_back({"", &r});
  }
  std::vector<KneePoint> points;
  try {
    points = knee_points(runs, {});
  } catch (const ExportError&) {
    return std::nullopt;  // not a knee sweep
  }
  if (points.size() < 2) {
    return std::nullopt;
  }
  Chart c{"knee",
          "points",
          "Receive batching: latency added vs CPU per frame, one point per run",
          "receiving core busy time per received frame (ns)",
          knee_y_title({}),
          {"cpu_ns_per_frame"}};
  std::vector<std::string> series;
  for (const KneePoint& k : points) {
    if (std::find(series.begin(), series.end(), k.series) == series.end()) {
      series.push_back(k.series);
    }
  }
  c.labels.insert(c.labels.end(), series.begin(), series.end());
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return points[a].cpu_ns_per_frame < points[b].cpu_ns_per_frame;
  });
  json info = json::array();
  for (size_t i : order) {
    const KneePoint& k = points[i];
    json row = json::array({k.cpu_ns_per_frame});
    for (const std::string& s : series) {
      row.push_back(s == k.series ? json(k.y) : json(nullptr));
    }
    c.rows.push_back(std::move(row));
    const auto value = [](const char* name, double v) { return json::array({name, v, v, v}); };
    info.push_back({{"label", results.runs[i].label},
                    {"params", params_json(results.runs[i].params)},
                    {"repetitions", 1},
                    {"values", json::array({value("rx latency mean (us)", k.y),
                                            value("cpu_ns_per_frame", k.cpu_ns_per_frame),
                                            value("irqs_per_s", k.irqs_per_s),
                                            value("frames_per_packet", k.frames_per_packet),
                                            value("goodput (Mbit/s)", k.goodput_mbit)})}});
  }
  c.extra["info"] = info;
  c.extra["uniform"] = true;   // many series: one point size
  c.extra["logscale"] = true;  // y: microseconds (no coalescing) to a full ring's milliseconds
  return c;
}

std::string html_report(const Results& results, const HtmlReportOptions& options) {
  if (results.runs.empty()) {
    throw ExportError("no runs: nothing to report");
  }
  json runs = json::array();
  for (const Run& r : results.runs) {
    runs.push_back(run_json(r, options.max_points_per_series));
  }
  const std::optional<Chart> tradeoff = tradeoff_chart(results);
  const std::optional<Chart> knee = knee_chart(results);
  const json data = {{"source", options.source},
                     {"nicsim_version", results.meta.nicsim_version},
                     {"runs", runs},
                     {"tradeoff", tradeoff ? chart_json(*tradeoff) : json(nullptr)},
                     {"knee", knee ? chart_json(*knee) : json(nullptr)}};
  const std::string title = "nicsim report: " + options.source;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + std::string(kPolicy) + "\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<meta name=\"generator\" content=\"nicsim " + html_escape(results.meta.nicsim_version) +
       "\">\n";
  h += "<title>" + html_escape(title) + "</title>\n";
  // First: errors anywhere in the page (also in the library) are counted for the browser test.
  h += "<script>window.nicsimErrors = [];\n"
       "window.addEventListener('error', function (e) { nicsimErrors.push(String(e.message)); });\n"
       "</script>\n";
  h += "<style>\n" + std::string(html_assets::kDygraphCss) + "\n" +
       std::string(html_assets::kPageCss) + "</style>\n</head>\n<body>\n";
  h +=
      "<header><h1>" + html_escape(title) + "</h1>\n<p>" + std::to_string(results.runs.size()) +
      (results.runs.size() == 1 ? " run" : " runs") + ", nicsim " +
      html_escape(results.meta.nicsim_version) +
      (results.meta.start_time.empty() ? "" : ", started " + html_escape(results.meta.start_time)) +
      ". Charts: drag to zoom, shift-drag to pan, double-click to zoom out.</p></header>\n";
  h += "<section id=\"runs\"><h2>Runs</h2>\n" + run_table(results) + "</section>\n";
  if (!results.statistics.empty()) {
    // The same text as `nicsim run --repeat` prints (report/run_statistics.h).
    h += "<section id=\"statistics\"><h2>Repetitions</h2>\n<pre>" +
         html_escape(format_statistics_table(results.statistics)) + "</pre></section>\n";
  }
  if (tradeoff) {
    h += "<section id=\"tradeoff-section\"><h2>Trade-off</h2>\n<p>One point per run";
    h += results.statistics.empty() ? "" : " (the centre over its repetitions)";
    h += "; hover for its parameters.</p>\n<div id=\"tradeoff-charts\"></div></section>\n";
  }
  if (knee) {
    h += "<section id=\"knee-section\"><h2>Receive batching knee</h2>\n<p>One point per run: "
         "the latency the receiving host's receive path added per frame against its core's "
         "time per frame (docs/rx-batching.md); hover for its parameters.</p>\n"
         "<div id=\"knee-charts\"></div></section>\n";
  }
  h += "<section id=\"run-section\"><h2>Run <select id=\"run-select\">" + run_options(results) +
       "</select></h2>\n<div id=\"run-params\"></div>\n<div id=\"run-charts\"></div>\n"
       "<p id=\"run-missing\"></p></section>\n";
  h += "<script type=\"application/json\" id=\"nicsim-data\">" + script_safe_json(dump(data)) +
       "</script>\n";
  h += "<script>\n" + std::string(html_assets::kDygraphJs) + "\n</script>\n";
  h += "<script>\n" + std::string(html_assets::kPageJs) + "\n</script>\n";
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace nicsim::report
