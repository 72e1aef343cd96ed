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
enum class PlotFormat { kPng, kSvg };

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
GnuplotJob gnuplot_job(PlotKind kind, const std::vector<PlotRun>& runs, PlotFormat format,
                       const std::string& output, const std::string& data_dir);

// gnuplot string literal: single-quoted, ' doubled.
std::string gnuplot_quote(const std::string& s);

}  // namespace nicsim::report
