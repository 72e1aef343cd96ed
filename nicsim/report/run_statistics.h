#pragma once
// Statistics over the repetitions of a run (a campaign's [scenario] repeat / --repeat;
// docs/campaigns.md): per metric the mean, sample standard deviation, median, extremes and a
// 95 % confidence interval.
//
// Intervals:
//  * metrics that are means or totals (goodput, retransmits, a probe's mean RTT, induced
//    latency, RPM): Student t interval of the mean over the repetitions,
//    mean ± t(0.975, n-1) s / sqrt(n) (NIST/SEMATECH e-Handbook of Statistical Methods,
//    §7.2.2.1 "Confidence limits for the mean"; t quantiles from its table 1.3.6.7.2);
//  * percentile metrics (a probe's p50 / p99 RTT): the distribution-free order-statistic
//    interval of the median, [X(k), X(n+1-k)] with the largest k such that
//    P(Binomial(n, 1/2) <= k-1) <= 0.025 (Conover, Practical Nonparametric Statistics, 3rd ed.
//    1999, §3.2 "the sign test ... confidence interval for the median"); its coverage is at
//    least 95 % and stated in `level`. Below 6 repetitions no such pair exists and the
//    interval is [min, max] with its coverage 1 - 2^(1-n). Percentiles are not normal (heavy
//    upper tails), so no t interval for them.
//
// Layering: report only (runs in, statistics out).

#include <cstddef>
#include <string>
#include <vector>

#include "nicsim/report/results.h"

namespace nicsim::report {

// t(0.975, df): the two-sided 95 % Student t quantile. df >= 1.
double student_t_975(size_t df);

// Mean, sample standard deviation, median, min, max and a 95 % interval of `values` (at least
// one): Student t (median_interval false) or the order-statistic interval of the median.
MetricStatistics describe(std::vector<double> values, const std::string& unit,
                          bool median_interval);

// A run's metrics by name (docs/campaigns.md "Metrics"): goodput_mbit.a->b / b->a (directions
// with flows), retransmits, <probe>.rtt_mean_ms / rtt_p50_ms / rtt_p99_ms (probes with samples),
// induced_latency_ms and rpm (runs with latency under load).
struct MetricValue {
  std::string name;
  std::string unit;
  double value = 0;
  bool percentile = false;  // interval of the median, not of the mean
};
std::vector<MetricValue> run_metrics(const Run& run);

// The label of a run without its repetition (" rep=N" removed).
std::string combination_label(const Run& run);

// Statistics of consecutive runs with the same combination (runs ordered combination by
// combination, repetitions in order, as a campaign writes them). Runs without `repetition`
// give no statistics.
std::vector<RunStatistics> run_statistics(const std::vector<Run>& runs);

// Accumulates the same statistics one run at a time (a streaming writer keeps only the metric
// values, not the runs).
class StatisticsBuilder {
 public:
  void add(const Run& run);
  std::vector<RunStatistics> finish();

 private:
  struct Pending {
    RunStatistics head;
    std::vector<std::string> order;  // metric names in first-seen order
    std::vector<std::vector<double>> values;
    std::vector<MetricValue> kinds;
  };
  void close();
  std::vector<RunStatistics> done_;
  bool open_ = false;
  Pending pending_;
};

// The chosen metric's interval half-width relative to its centre (mean or median), or a
// negative number when it has no interval yet. For --until-ci.
double relative_half_width(const MetricStatistics& m);

// "mean ± half-width unit" per metric of each combination, one table (text output).
std::string format_statistics_table(const std::vector<RunStatistics>& statistics);

}  // namespace nicsim::report
