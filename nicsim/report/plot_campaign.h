#pragma once
// Plots of a campaign (many runs, often with repetitions; docs/campaigns.md), as gnuplot jobs
// like plot_gnuplot.h:
//   sweep     a metric against a varied key, mean (or median, for percentile metrics) with its
//             95 % interval as error bars, one line per value of a second varied key
//   tradeoff  goodput against latency (induced latency for rrul runs, else the main probe's
//             mean RTT), one point per run with its intervals as a cross (flent's box_combine
//             idea: the batching trade-off in one picture)
// Runs without repetitions are points without bars.

#include <string>
#include <vector>

#include "nicsim/report/plot_gnuplot.h"
#include "nicsim/report/results.h"

namespace nicsim::report {

struct SweepSpec {
  std::string x;      // a varied key: as written ("wire.rate") or its last part ("rate")
  std::string y;      // a metric name (run_statistics.h), e.g. "ping.rtt_mean_ms"
  std::string group;  // "" or another varied key: one line per value
};

// Each [vary] combination's statistics: the file's own (repetitions) or, without repetitions,
// one value per run (no interval).
std::vector<RunStatistics> combination_statistics(const Results& results);

// Throw ExportError when the file lacks the key or metric (naming what it has).
GnuplotJob sweep_job(const Results& results, const SweepSpec& spec, const PlotStyle& style,
                     const std::string& output, const std::string& data_dir);
GnuplotJob tradeoff_job(const Results& results, const PlotStyle& style, const std::string& output,
                        const std::string& data_dir);

}  // namespace nicsim::report
