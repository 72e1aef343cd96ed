// gnuplot 5.4 (Debian 12 gnuplot-nox): `yerrorlines`, `xyerrorbars`, `xtic()`, `with labels`.
#include "nicsim/report/plot_campaign.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "nicsim/report/export_csv.h"
#include "nicsim/report/export_flent.h"
#include "nicsim/report/run_statistics.h"

namespace nicsim::report {
namespace {

std::string num(double v) { return csv_number(v); }

std::string path_in(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

}  // namespace

std::string param_value_text(const ParamValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? "true" : "false";
  }
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return std::to_string(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return num(*d);
  }
  return std::get<std::string>(v);
}

namespace {

std::string value_text(const ParamValue& v) { return param_value_text(v); }

std::optional<double> value_number(const ParamValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return static_cast<double>(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return *d;
  }
  return std::nullopt;
}

// The param of `key` (the full key, or a key that ends in "." + key).
const RunParam* find_param(const RunStatistics& s, const std::string& key) {
  for (const RunParam& p : s.params) {
    if (p.key == key || (p.key.size() > key.size() && p.key.ends_with("." + key))) {
      return &p;
    }
  }
  return nullptr;
}

std::string keys_of(const std::vector<RunStatistics>& stats) {
  std::string out;
  if (!stats.empty()) {
    for (const RunParam& p : stats.front().params) {
      out += (out.empty() ? "" : ", ") + p.key;
    }
  }
  return out.empty() ? "none: the scenario has no [vary]" : out;
}

std::string metrics_of(const std::vector<RunStatistics>& stats) {
  std::string out;
  if (!stats.empty()) {
    for (const auto& [name, m] : stats.front().metrics) {
      out += (out.empty() ? "" : ", ") + name;
    }
  }
  return out;
}

using Point = MetricPoint;
Point point_of(const MetricStatistics& m) { return metric_point(m); }

std::string axis_label(const std::string& metric, const std::string& unit) {
  return metric + " (" + unit + ")";
}

std::string interval_note(const std::vector<RunStatistics>& stats) {
  for (const RunStatistics& s : stats) {
    if (s.repetitions > 1) {
      return "bars: 95 % interval over " + std::to_string(s.repetitions) + " repetitions";
    }
  }
  return "one run per point (no repetitions: no intervals)";
}

}  // namespace

MetricPoint metric_point(const MetricStatistics& m) {
  const bool median = m.ci && m.ci->method == "order-statistic";
  const double c = median ? m.median : m.mean;
  return m.ci ? MetricPoint{c, m.ci->low, m.ci->high} : MetricPoint{c, c, c};
}

std::string tradeoff_latency_metric(const std::vector<RunStatistics>& stats) {
  const bool induced = !stats.empty() && std::all_of(stats.begin(), stats.end(), [](const auto& s) {
    return s.metrics.contains("induced_latency_ms");
  });
  if (induced) {
    return "induced_latency_ms";
  }
  if (!stats.empty()) {
    for (const auto& [name, m] : stats.front().metrics) {
      if (name.ends_with(".rtt_mean_ms")) {
        return name;
      }
    }
  }
  return "";
}

std::vector<RunStatistics> combination_statistics(const Results& results) {
  if (!results.statistics.empty()) {
    return results.statistics;
  }
  std::vector<RunStatistics> out;
  for (const Run& r : results.runs) {
    RunStatistics s;
    s.label = r.label;
    s.params = r.params;
    s.repetitions = 1;
    s.seeds.push_back(r.seed);
    for (const MetricValue& m : run_metrics(r)) {
      s.metrics[m.name] = describe({m.value}, m.unit, m.percentile);
    }
    out.push_back(std::move(s));
  }
  return out;
}

// Shift between neighbouring groups on a categorical x axis, in categories.
constexpr double kGroupShift = 0.04;

GnuplotJob sweep_job(const Results& results, const SweepSpec& spec, const PlotStyle& style,
                     const std::string& output, const std::string& dir) {
  const std::vector<RunStatistics> stats = combination_statistics(results);
  if (stats.empty()) {
    throw ExportError("no runs to plot");
  }
  // x positions: the values themselves when all are numbers, else 0, 1, ... in first-seen order
  // with the values as tic labels.
  std::vector<std::string> x_values;
  bool numeric = true;
  std::string x_key, group_key, unit;
  for (const RunStatistics& s : stats) {
    const RunParam* x = find_param(s, spec.x);
    if (x == nullptr) {
      throw ExportError("--x " + spec.x + ": not a varied key (varied: " + keys_of(stats) + ")");
    }
    if (!spec.group.empty() && find_param(s, spec.group) == nullptr) {
      throw ExportError("--group " + spec.group + ": not a varied key (varied: " + keys_of(stats) +
                        ")");
    }
    const auto m = s.metrics.find(spec.y);
    if (m == s.metrics.end()) {
      throw ExportError("--y " + spec.y + ": run '" + s.label +
                        "' has no such metric (it has: " + metrics_of(stats) + ")");
    }
    unit = m->second.unit;
    x_key = x->key;
    numeric = numeric && value_number(x->value).has_value();
    const std::string v = value_text(x->value);
    if (std::find(x_values.begin(), x_values.end(), v) == x_values.end()) {
      x_values.push_back(v);
    }
  }
  // One data block per group (in first-seen order), rows in x order.
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::pair<double, std::string>>> rows;
  for (const RunStatistics& s : stats) {
    const RunParam* x = find_param(s, spec.x);
    const RunParam* g = spec.group.empty() ? nullptr : find_param(s, spec.group);
    if (g != nullptr) {
      group_key = g->key;
    }
    const std::string group = g != nullptr ? value_text(g->value) : "";
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) {
      groups.push_back(group);
    }
    const std::string xt = value_text(x->value);
    const double xpos = numeric
                            ? *value_number(x->value)
                            : static_cast<double>(std::find(x_values.begin(), x_values.end(), xt) -
                                                  x_values.begin());
    const Point p = point_of(s.metrics.at(spec.y));
    rows[group].push_back({xpos, num(xpos) + " " + xt + " " + num(p.centre) + " " + num(p.low) +
                                     " " + num(p.high) + " " + std::to_string(s.repetitions)});
  }
  std::string data = "# x x_label " + spec.y + " low high repetitions (one block per group)\n";
  std::string plot;
  for (size_t i = 0; i < groups.size(); ++i) {
    auto& r = rows[groups[i]];
    std::stable_sort(r.begin(), r.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    data += "# group " + (groups[i].empty() ? std::string("(all)") : group_key + "=" + groups[i]) +
            "\n";
    for (const auto& [x, line] : r) {
      data += line + "\n";
    }
    data += "\n\n";  // gnuplot: a new index
    // Categories: groups side by side (a small shift each) so that their bars do not hide one
    // another; numbers keep their true x.
    const double shift =
        numeric || groups.size() < 2
            ? 0.0
            : kGroupShift * (static_cast<double>(i) - static_cast<double>(groups.size() - 1) / 2);
    const std::string x_column =
        shift == 0 ? "1" : "($1" + std::string(shift > 0 ? "+" : "") + num(shift) + ")";
    plot += std::string(plot.empty() ? "plot " : ", ") + gnuplot_quote(path_in(dir, "sweep.dat")) +
            " index " + std::to_string(i) + " using " + x_column + ":3:4:5" +
            " with yerrorlines lw 2 pt 7 title " +
            gnuplot_quote(groups[i].empty() ? spec.y : group_key + "=" + groups[i]);
  }
  std::string s = gnuplot_terminal(style, groups.size());
  s += "set output " + gnuplot_quote(output) + "\n";
  s += gnuplot_title(style, spec.y + " against " + x_key + " - " + interval_note(stats));
  s += "set xlabel " + gnuplot_quote(x_key + (numeric ? "" : " (as written in the scenario)")) +
       "\n";
  s += "set ylabel " + gnuplot_quote(axis_label(spec.y, unit)) + "\n";
  if (!numeric) {  // one tic per category, at its unshifted position
    s += "set xtics (";
    for (size_t i = 0; i < x_values.size(); ++i) {
      s += (i == 0 ? "" : ", ") + gnuplot_quote(x_values[i]) + " " + std::to_string(i);
    }
    s += ")\n";
  }
  s += "set yrange [0:*]\nset offsets graph 0.05, graph 0.05, graph 0.1, 0\nset grid\n"
       "set key outside bottom center horizontal\n";
  return {s + plot + "\n", {{"sweep.dat", data}}};
}

GnuplotJob tradeoff_job(const Results& results, const PlotStyle& style, const std::string& output,
                        const std::string& dir) {
  const std::vector<RunStatistics> stats = combination_statistics(results);
  if (stats.empty()) {
    throw ExportError("no runs to plot");
  }
  // x: induced latency when every run has it (rrul), else the first probe's mean RTT.
  const std::string x_metric = tradeoff_latency_metric(stats);
  if (x_metric.empty()) {
    throw ExportError("the runs have no latency metric (no probe, no rrul): nothing to trade off");
  }
  std::string data = "# latency_ms low high goodput_Mbit/s low high label (" + x_metric +
                     "; one block per direction)\n";
  std::string plot;
  size_t block = 0;
  for (const char* dir_key : {"goodput_mbit.a->b", "goodput_mbit.b->a"}) {
    // Rows in order of latency, so that neighbours on the x axis are neighbours in the file
    // and their labels can alternate above and below the points (close points, e.g. BQL on
    // and off at 1 Gbit/s, would print their labels over each other).
    std::vector<std::pair<double, std::string>> ordered;
    for (const RunStatistics& s : stats) {
      const auto x = s.metrics.find(x_metric);
      const auto y = s.metrics.find(dir_key);
      if (x == s.metrics.end() || y == s.metrics.end()) {
        continue;
      }
      const Point px = point_of(x->second);
      const Point py = point_of(y->second);
      ordered.emplace_back(px.centre,
                           num(px.centre) + " " + num(px.low) + " " + num(px.high) + " " +
                               num(py.centre) + " " + num(py.low) + " " + num(py.high) + " " +
                               gnuplot_data_string(s.label.empty() ? "(single)" : s.label) + "\n");
    }
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string rows;
    for (const auto& [x, row] : ordered) {
      rows += row;
    }
    if (rows.empty()) {
      continue;
    }
    const bool up = std::string(dir_key).ends_with("a->b");
    data += "# " + std::string(dir_key) + "\n" + rows + "\n\n";
    const std::string file = gnuplot_quote(path_in(dir, "tradeoff.dat"));
    const std::string idx = " index " + std::to_string(block++);
    plot += std::string(plot.empty() ? "plot " : ", ") + file + idx +
            " using 1:4:2:3:5:6 with xyerrorbars lw 1.5 pt " + (up ? "7" : "5") + " ps 1.2 title " +
            gnuplot_quote(up ? "a->b (upload)" : "b->a (download)") + ", " + file + idx +
            " every 2 using 1:4:7 with labels offset 1,1 left font ',8' notitle, " + file + idx +
            " every 2::1 using 1:4:7 with labels offset 1,-1 left font ',8' notitle";
  }
  if (plot.empty()) {
    throw ExportError("the runs carried no TCP traffic: no goodput to trade off");
  }
  std::string s = gnuplot_terminal(style, 2);
  s += "set output " + gnuplot_quote(output) + "\n";
  s += gnuplot_title(
      style, "Goodput vs " + x_metric + " per run - " + interval_note(stats) + " (crosses)");
  s += "set xlabel " + gnuplot_quote(axis_label(x_metric, "ms")) + "\n";
  s += "set ylabel 'goodput (Mbit/s)'\nset yrange [0:*]\nset xrange [*:*]\n"
       "set offsets graph 0.1, graph 0.25, graph 0.1, 0\nset grid\nset key outside bottom center "
       "horizontal\n";
  return {s + plot + "\n", {{"tradeoff.dat", data}}};
}

}  // namespace nicsim::report
