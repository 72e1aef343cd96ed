// gnuplot jobs for `nicsim plot` (plot_gnuplot.h). gnuplot 5.4 commands only (Debian 12
// gnuplot-nox): pngcairo / svg / pdfcairo / epscairo terminals, `set datafile missing`, `with
// labels`, y2 axis.

#include "nicsim/report/plot_gnuplot.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/report/export_csv.h"
#include "nicsim/report/export_flent.h"
#include "nicsim/report/run_summary.h"

namespace nicsim::report {

namespace {

std::string terminal(const PlotStyle& style, size_t series) {
  return gnuplot_terminal(style, series);
}
std::string title_line(const PlotStyle& style, const std::string& kind_title) {
  return gnuplot_title(style, kind_title);
}

}  // namespace

std::string gnuplot_terminal(const PlotStyle& style, size_t series) {
  const bool paper = style.format == PlotFormat::kPdf || style.format == PlotFormat::kEps;
  const std::string size = style.size.empty() ? (paper ? "5in,3in" : "1000,600") : style.size;
  const std::string font = gnuplot_quote(style.font.empty() ? "sans,10" : style.font);
  std::string s;
  switch (style.format) {
    case PlotFormat::kPng:
      s = "set terminal pngcairo size " + size + " noenhanced font " + font + "\n";
      break;
    case PlotFormat::kSvg:
      s = "set terminal svg size " + size + " dynamic noenhanced font " + font + "\n";
      break;
    case PlotFormat::kPdf:
      s = "set terminal pdfcairo size " + size + " noenhanced color font " + font + "\n";
      break;
    case PlotFormat::kEps:
      s = "set terminal epscairo size " + size + " noenhanced color font " + font + "\n";
      break;
  }
  const std::vector<std::string> colours = series_colours(std::min<size_t>(series, 12));
  for (size_t i = 0; i < colours.size(); ++i) {
    s += "set linetype " + std::to_string(i + 1) + " lc rgb '" + colours[i] + "'\n";
  }
  return s + "set linetype cycle " + std::to_string(colours.size()) + "\n";
}

std::string gnuplot_title(const PlotStyle& style, const std::string& kind_title) {
  return "set title " + gnuplot_quote(style.title.empty() ? kind_title : style.title) + "\n";
}

namespace {

std::string num(double v) { return csv_number(v); }

std::string run_title(const PlotRun& pr) {
  const Run& r = *pr.run;
  return pr.file + ": " + r.backend + (r.label.empty() ? "" : " " + r.label);
}

std::string path_in(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

// Dashed vertical lines at the phase boundaries (rrul: idle / load / idle), each phase's
// name at the top of its span.
std::string phase_marks(const Run& run) {
  std::string s;
  for (const Phase& p : run.phases) {
    s += "set arrow from " + num(p.start_s) + ", graph 0 to " + num(p.start_s) +
         ", graph 1 nohead dashtype 2 lc rgb 'gray40'\n";
    s += "set label " + gnuplot_quote(p.name) + " at " + num((p.start_s + p.end_s) / 2) +
         ", graph 0.97 center textcolor rgb 'gray30'\n";
  }
  if (!run.phases.empty()) {
    const double end = run.phases.back().end_s;
    s += "set arrow from " + num(end) + ", graph 0 to " + num(end) +
         ", graph 1 nohead dashtype 2 lc rgb 'gray40'\n";
  }
  return s;
}

GnuplotJob totals_job(const PlotRun& pr, const PlotStyle& style, const std::string& output,
                      const std::string& dir) {
  const Run& r = *pr.run;
  if (r.intervals.empty()) {
    throw ExportError("run '" + r.label + "' has no intervals: nothing to plot over time");
  }
  // One row per interval at its start, drawn `with steps` so each value spans its interval;
  // a last row at the end of the last interval closes the final step.
  std::string data = "# start_s a->b_Mbit/s b->a_Mbit/s mean_latency_ms\n";
  bool any_latency = false;
  double max_mbit = 0;
  double max_ms = 0;
  const auto row = [&](double t, const Interval& iv) {
    double sum = 0;
    for (const auto& entry : iv.latency_ms) {
      sum += entry.second;
    }
    const bool has = !iv.latency_ms.empty();
    any_latency = any_latency || has;
    if (has) {
      max_ms = std::max(max_ms, sum / static_cast<double>(iv.latency_ms.size()));
    }
    for (Direction d : busy_directions(r)) {
      max_mbit = std::max(max_mbit, iv.directions[d].bits_per_second / 1e6);
    }
    data += num(t) + " " + num(iv.directions.a_to_b.bits_per_second / 1e6) + " " +
            num(iv.directions.b_to_a.bits_per_second / 1e6) + " " +
            (has ? num(sum / static_cast<double>(iv.latency_ms.size())) : "?") + "\n";
  };
  for (const Interval& iv : r.intervals) {
    row(iv.start_s, iv);
  }
  row(r.intervals.back().end_s, r.intervals.back());
  const std::string file = gnuplot_quote(path_in(dir, "totals.dat"));
  std::string s = terminal(style, busy_directions(r).size() + (any_latency ? 1 : 0));
  s += "set output " + gnuplot_quote(output) + "\n";
  s += "set datafile missing '?'\n";
  s += title_line(style, "Throughput and latency over time - " + run_title(pr));
  s += "set xlabel 'time (s)'\nset ylabel 'throughput (Mbit/s)'\n";
  s += "set xrange [" + num(r.intervals.front().start_s) + ":" + num(r.intervals.back().end_s) +
       "]\n";
  // 10 % headroom so a line at the maximum does not run along the frame.
  s += max_mbit > 0 ? "set yrange [0:" + num(max_mbit * 1.1) + "]\n" : "set yrange [0:*]\n";
  s += "set grid\nset key outside bottom center horizontal\n";
  s += phase_marks(r);
  std::string plot;
  for (Direction d : busy_directions(r)) {
    plot += std::string(plot.empty() ? "plot " : ", ") + file +
            " using 1:" + (d == Direction::kAtoB ? "2" : "3") + " with steps lw 2 title " +
            gnuplot_quote(direction_title(d));
  }
  if (any_latency) {
    s += "set y2label 'latency (ms)'\n";
    s += max_ms > 0 ? "set y2range [0:" + num(max_ms * 1.1) + "]\n" : "set y2range [0:*]\n";
    s += "set y2tics\nset ytics nomirror\n";
    plot += std::string(plot.empty() ? "plot " : ", ") + file +
            " using 1:4 axes x1y2 with steps lw 1.5 title 'latency: mean of the probes (ms)'";
  }
  if (plot.empty()) {
    throw ExportError("run '" + r.label + "' has neither traffic nor probes: nothing to plot");
  }
  s += plot + "\n";
  return {s, {{"totals.dat", data}}};
}

// The RTTs of every received sample (lost ones have none).
std::vector<double> probe_samples(const ProbeLatency& p) {
  std::vector<double> out;
  for (const std::optional<double>& v : p.series.rtt_ms) {
    if (v) {
      out.push_back(*v);
    }
  }
  return out;
}

GnuplotJob cdf_job(const PlotRun& pr, const PlotStyle& style, const std::string& output,
                   const std::string& dir) {
  const Run& r = *pr.run;
  GnuplotJob job;
  std::string plot;
  size_t k = 0;
  for (const auto& [name, p] : r.latency_ms) {
    std::vector<double> v = probe_samples(p);
    if (v.empty()) {
      continue;
    }
    std::sort(v.begin(), v.end());
    // Empirical CDF: 0 below the smallest sample, (i+1)/n from the i-th sorted sample on;
    // drawn `with steps`, so each sample is a vertical jump.
    std::string data = "# rtt_ms fraction_at_or_below\n" + num(v.front()) + " 0\n";
    const double n = static_cast<double>(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      data += num(v[i]) + " " + num(static_cast<double>(i + 1) / n) + "\n";
    }
    const std::string fname = "cdf" + std::to_string(k++) + ".dat";
    job.data_files.push_back({fname, data});
    plot += std::string(plot.empty() ? "plot " : ", ") + gnuplot_quote(path_in(dir, fname)) +
            " using 1:2 with steps lw 2 title " +
            gnuplot_quote(name + " (" + p.kind + ", n=" + std::to_string(v.size()) + ")");
  }
  if (plot.empty()) {
    throw ExportError("run '" + r.label +
                      "' has no latency samples (probe series): nothing to draw a CDF from");
  }
  std::string s = terminal(style, k);
  s += "set output " + gnuplot_quote(output) + "\n";
  s += title_line(style, "Latency CDF (RTT) - " + run_title(pr));
  s += "set xlabel 'round-trip time (ms)'\nset ylabel 'fraction of samples'\n";
  // The legend below the plot, outside the data (a CDF fills its lower right corner).
  s += "set yrange [0:1]\nset offsets graph 0.03, graph 0.03, 0, 0\nset grid\n"
       "set key outside bottom center horizontal\n";
  job.script = s + plot + "\n";
  return job;
}

GnuplotJob compare_job(const std::vector<PlotRun>& runs, const PlotStyle& style,
                       const std::string& output, const std::string& dir) {
  std::vector<RunSummary> sums;
  bool induced = true;
  std::vector<Direction> dirs;
  for (const PlotRun& pr : runs) {
    sums.push_back(summarize(*pr.run));
    induced = induced && sums.back().induced_latency_ms.has_value();
    for (Direction d : busy_directions(*pr.run)) {
      if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) {
        dirs.push_back(d);
      }
    }
  }
  std::sort(dirs.begin(), dirs.end());
  // One row per run (row i = run i); each run is one colour, each direction one point type.
  std::string data = "# latency_ms a->b_Mbit/s b->a_Mbit/s\n";
  std::string plot;
  const bool several_files = std::any_of(runs.begin(), runs.end(),
                                         [&](const PlotRun& p) { return p.file != runs[0].file; });
  size_t row = 0;
  bool negative = false;  // induced latency can be < 0 (loaded faster than idle, e.g. loopback)
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunSummary& s = sums[i];
    const std::optional<double> x = induced ? s.induced_latency_ms : s.p99_ms;
    if (!x) {
      continue;
    }
    negative = negative || *x < 0;
    data += num(*x) + " " + num(s.goodput_bps.a_to_b / 1e6) + " " +
            num(s.goodput_bps.b_to_a / 1e6) + "\n";
    const std::string name = (several_files ? runs[i].file + " " : std::string()) + s.backend +
                             (s.label.empty() ? "" : " " + s.label);
    for (Direction d : dirs) {
      plot += std::string(plot.empty() ? "plot " : ", ") +
              gnuplot_quote(path_in(dir, "compare.dat")) + " every ::" + std::to_string(row) +
              "::" + std::to_string(row) + " using 1:" + (d == Direction::kAtoB ? "2" : "3") +
              " with points pt " + (d == Direction::kAtoB ? "7" : "5") + " ps 1.8 lc " +
              std::to_string(i + 1) + " title " +
              gnuplot_quote(name + (d == Direction::kAtoB ? " a->b" : " b->a"));
    }
    ++row;
  }
  if (row == 0) {
    throw ExportError("no run has probe latency: nothing to compare");
  }
  if (plot.empty()) {
    throw ExportError("no run carried traffic: no goodput to compare");
  }
  std::string s = terminal(style, row);
  s += "set output " + gnuplot_quote(output) + "\n";
  s += title_line(style, std::string("Goodput vs ") +
                             (induced ? "induced latency" : "p99 RTT of the main probe") +
                             " per run (circle: a->b upload, square: b->a download)");
  s += std::string("set xlabel '") +
       (induced ? "induced latency (ms)" : "p99 round-trip time (ms)") + "'\n";
  s += negative ? "set xrange [*:*]\nset yzeroaxis\n" : "set xrange [0:*]\n";
  // Margins so points do not sit on the frame (none below an axis that starts at 0).
  s += std::string("set ylabel 'goodput (Mbit/s)'\nset yrange [0:*]\nset offsets ") +
       (negative ? "graph 0.05" : "0") +
       ", graph 0.1, graph 0.1, 0\nset grid\nset key outside right top\n";
  s += plot + "\n";
  return {s, {{"compare.dat", data}}};
}

}  // namespace

std::string gnuplot_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c == '\'' ? "''" : std::string(1, c);
    }
  }
  return out + "'";
}

std::string gnuplot_data_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c != '"' && c != '\n' && c != '\r') {
      out += c;
    }
  }
  return out + "\"";
}

std::vector<Direction> busy_directions(const Run& r) {
  std::vector<Direction> out;
  for (Direction d : kDirections) {
    if (!r.transfer[d].flows.empty()) {
      out.push_back(d);
    }
  }
  return out;
}

std::string direction_title(Direction d) {
  return d == Direction::kAtoB ? "a->b (upload)" : "b->a (download)";
}

std::vector<std::string> series_colours(size_t n) {
  // Tol's discrete rainbow: 29 colours, and which of them (1-based) to use for n series.
  static constexpr const char* kRainbow[29] = {
      "#E8ECFB", "#D9CCE3", "#D1BBD7", "#CAACCB", "#BA8DB4", "#AE76A3", "#AA6F9E", "#994F88",
      "#882E72", "#1965B0", "#437DBF", "#5289C7", "#6195CF", "#7BAFDE", "#4EB265", "#90C987",
      "#CAE0AB", "#F7F056", "#F7CB45", "#F6C141", "#F4A736", "#F1932D", "#EE8026", "#E8601C",
      "#E65518", "#DC050C", "#A5170E", "#72190E", "#42150A"};
  static const std::vector<std::vector<int>> kSubsets = {
      {10},
      {10, 26},
      {10, 18, 26},
      {10, 15, 18, 26},
      {10, 14, 15, 18, 26},
      {10, 14, 15, 17, 18, 26},
      {9, 10, 14, 15, 17, 18, 26},
      {9, 10, 14, 15, 17, 18, 23, 26},
      {9, 10, 14, 15, 17, 18, 23, 26, 28},
      {9, 10, 14, 15, 17, 18, 21, 24, 26, 28},
      {9, 10, 12, 14, 15, 17, 18, 21, 24, 26, 28},
      {3, 6, 9, 10, 12, 14, 15, 17, 18, 21, 24, 26}};
  std::vector<std::string> out;
  if (n == 0) {
    return out;
  }
  const std::vector<int>& subset = kSubsets[std::min<size_t>(n, kSubsets.size()) - 1];
  for (size_t i = 0; i < n; ++i) {
    out.emplace_back(kRainbow[subset[i % subset.size()] - 1]);
  }
  return out;
}

GnuplotJob gnuplot_job(PlotKind kind, const std::vector<PlotRun>& runs, const PlotStyle& style,
                       const std::string& output, const std::string& data_dir) {
  if (runs.empty()) {
    throw ExportError("no run to plot");
  }
  switch (kind) {
    case PlotKind::kTotals:
      return totals_job(runs.front(), style, output, data_dir);
    case PlotKind::kCdf:
      return cdf_job(runs.front(), style, output, data_dir);
    case PlotKind::kCompare:
      return compare_job(runs, style, output, data_dir);
  }
  throw ExportError("unknown plot kind");
}

GnuplotJob gnuplot_job(PlotKind kind, const std::vector<PlotRun>& runs, PlotFormat format,
                       const std::string& output, const std::string& data_dir) {
  return gnuplot_job(kind, runs, PlotStyle{format, "", "", ""}, output, data_dir);
}

}  // namespace nicsim::report
