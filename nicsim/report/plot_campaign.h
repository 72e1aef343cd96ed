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

// The latency a tradeoff puts on its x axis: "induced_latency_ms" when every combination has it
// (rrul runs), else the first "<probe>.rtt_mean_ms" metric of the first; "" when none.
std::string tradeoff_latency_metric(const std::vector<RunStatistics>& stats);

// A metric's centre and 95 % interval: the mean and its t interval, or the median and its
// order-statistic interval (percentile metrics); without an interval, the value itself.
struct MetricPoint {
  double centre, low, high;
};
MetricPoint metric_point(const MetricStatistics& m);

// A varied value as the scenario writes it: true, 1000000, 0.5, "1Gbit" (unquoted).
std::string param_value_text(const ParamValue& v);

// Throw ExportError when the file lacks the key or metric (naming what it has).
GnuplotJob sweep_job(const Results& results, const SweepSpec& spec, const PlotStyle& style,
                     const std::string& output, const std::string& data_dir);
GnuplotJob tradeoff_job(const Results& results, const PlotStyle& style, const std::string& output,
                        const std::string& data_dir);

}  // namespace nicsim::report
