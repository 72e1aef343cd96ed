#pragma once
// Plots as gnuplot jobs: a gnuplot script plus the data files it reads. Pure text (no
// process, no file I/O): tools/ writes the files into a scratch directory and runs gnuplot
// (Debian gnuplot-nox). The kinds follow flent's plots (flent/tests/rrul.conf):
//   totals   throughput per direction (left axis, Mbit/s) and latency (right axis, ms, the
//            mean of the probes' per-interval means: flent's "Ping (ms) avg") over time
//   cdf      latency CDF (RTT) per probe, from every sample (flent's "ping_cdf")
//   compare  one point per run: goodput per direction vs induced latency, or the main
//            probe's p99 RTT when the runs have no latency-under-load summary (flent's
//            "box_combine": mean goodput vs mean induced latency)

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/report/results.h"

namespace nicsim::report {

enum class PlotKind { kTotals, kCdf, kCompare };
// png and svg (pngcairo, svg: sizes in pixels) for screens; pdf and eps (pdfcairo, epscairo:
// sizes in inches or cm) for papers.
enum class PlotFormat { kPng, kSvg, kPdf, kEps };

// How the picture looks. Empty strings keep the defaults: the kind's own title, 1000x600
// pixels (png, svg) or 5x3 inches (pdf, eps), font 'sans,10'.
struct PlotStyle {
  PlotFormat format = PlotFormat::kPng;
  std::string title;  // replaces the kind's title; "" keeps it
  std::string size;   // gnuplot's "W,H": "1000,600" (pixels) or "3.5in,2.2in", "9cm,6cm"
  std::string font;   // gnuplot's "NAME,POINTS", e.g. "Helvetica,9"
};

// The colours of a plot's n series, in order: Paul Tol's discrete rainbow scheme, whose
// subset for each n from 1 to 12 keeps the colours distinguishable with the common
// colour-vision deficiencies (P. Tol, "Colour Schemes", SRON/EPS/TN/09-002, and its
// tol_colors.py, https://personal.sron.nl/~pault/). No colour repeats within 12 series; from
// the 13th series on, the 12-colour set starts again. "#RRGGBB" strings.
std::vector<std::string> series_colours(size_t n);

// Directions that carried traffic (a direction without flows would only draw a zero line),
// and a direction's legend title ("a->b (upload)"): shared by the gnuplot plots and the HTML
// report (html_report.h).
std::vector<Direction> busy_directions(const Run& r);
std::string direction_title(Direction d);

struct GnuplotJob {
  std::string script;
  std::vector<std::pair<std::string, std::string>> data_files;  // name in data_dir, contents
};

// A run to plot and the file it came from (for titles and the compare legend).
struct PlotRun {
  std::string file;
  const Run* run = nullptr;
};

// `output` and `data_dir` are written into the script as they are (quoted): pass absolute
// paths when gnuplot runs elsewhere. totals and cdf plot runs[0] only; compare plots all.
// Throws ExportError (export_flent.h) when the runs lack what the kind needs (no intervals,
// no probe samples, no probe latency).
GnuplotJob gnuplot_job(PlotKind kind, const std::vector<PlotRun>& runs, const PlotStyle& style,
                       const std::string& output, const std::string& data_dir);
// The defaults of `format` (PlotStyle{format}).
GnuplotJob gnuplot_job(PlotKind kind, const std::vector<PlotRun>& runs, PlotFormat format,
                       const std::string& output, const std::string& data_dir);

// The terminal line of `style` (gnuplot 5.4's cairo terminals and svg), then the palette of
// `series` series as line types 1..12 (plot commands use line types 1, 2, ... in order).
std::string gnuplot_terminal(const PlotStyle& style, size_t series);
// The title line: the user's (--title) or the kind's own.
std::string gnuplot_title(const PlotStyle& style, const std::string& kind_title);

// gnuplot string literal: single-quoted, ' doubled.
std::string gnuplot_quote(const std::string& s);
// A string column in a gnuplot data file: double quotes (gnuplot splits single-quoted text at
// spaces in data), inner double quotes and line breaks dropped.
std::string gnuplot_data_string(const std::string& s);

}  // namespace nicsim::report
