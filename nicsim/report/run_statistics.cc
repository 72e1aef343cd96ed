#include "nicsim/report/run_statistics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string_view>

namespace nicsim::report {
namespace {

// t(0.975, df) for df = 1..30: NIST/SEMATECH e-Handbook of Statistical Methods, table 1.3.6.7.2
// (upper critical values of Student's t, alpha = 0.025).
constexpr std::array<double, 30> kT975 = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                          2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                          2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                          2.060,  2.056, 2.052, 2.048, 2.045, 2.042};

double median_of_sorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// P(Binomial(n, 1/2) <= k).
double binomial_half_cdf(size_t n, size_t k) {
  double term = std::pow(0.5, static_cast<double>(n));  // C(n, 0) / 2^n
  double sum = term;
  for (size_t i = 1; i <= k; ++i) {
    term *= static_cast<double>(n - i + 1) / static_cast<double>(i);
    sum += term;
  }
  return sum;
}

ConfidenceInterval t_interval(double mean, double stddev, size_t n) {
  const double h = student_t_975(n - 1) * stddev / std::sqrt(static_cast<double>(n));
  return {mean - h, mean + h, h, 0.95, "student-t"};
}

// Conover (1999) §3.2: [X(k), X(n+1-k)] covers the median with probability
// 1 - 2 P(B <= k-1), B ~ Binomial(n, 1/2); the largest k keeping that >= 95 %, at least 1.
ConfidenceInterval median_interval(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  size_t k = 1;
  while (k + 1 <= (n + 1) / 2 && binomial_half_cdf(n, k) <= 0.025) {
    ++k;
  }
  const double low = sorted[k - 1];
  const double high = sorted[n - k];
  return {low, high, (high - low) / 2, 1 - 2 * binomial_half_cdf(n, k - 1), "order-statistic"};
}

std::string_view trim_repetition(std::string_view label) {
  const size_t at = label.rfind("rep=");
  if (at == std::string_view::npos || (at != 0 && label[at - 1] != ' ')) {
    return label;
  }
  return label.substr(0, at == 0 ? 0 : at - 1);
}

}  // namespace

double student_t_975(size_t df) {
  if (df == 0) {
    throw std::invalid_argument("student_t_975: df must be >= 1");
  }
  if (df <= kT975.size()) {
    return kT975[df - 1];
  }
  // Cornish-Fisher expansion about the normal quantile (Abramowitz & Stegun 26.7.5); within
  // 1e-4 of the tables from df = 30 on.
  const double z = 1.959963984540054;
  const double v = static_cast<double>(df);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, z9 = z7 * z * z;
  const double g1 = (z3 + z) / 4;
  const double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
  const double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
  const double g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
  return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

MetricStatistics describe(std::vector<double> values, const std::string& unit, bool median_ci) {
  if (values.empty()) {
    throw std::invalid_argument("describe: no values");
  }
  const size_t n = values.size();
  std::sort(values.begin(), values.end());
  MetricStatistics m;
  m.unit = unit;
  m.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(n);
  double ss = 0;
  for (double x : values) {
    ss += (x - m.mean) * (x - m.mean);
  }
  m.stddev = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
  if (values.front() == values.back()) {  // identical repetitions: no rounding noise
    m.mean = values.front();
    m.stddev = 0;
  }
  m.median = median_of_sorted(values);
  m.min = values.front();
  m.max = values.back();
  if (n >= 2) {
    m.ci = median_ci ? median_interval(values) : t_interval(m.mean, m.stddev, n);
  }
  return m;
}

std::vector<MetricValue> run_metrics(const Run& run) {
  std::vector<MetricValue> out;
  for (Direction d : kDirections) {
    if (!run.transfer[d].flows.empty()) {
      out.push_back({"goodput_mbit." + std::string(direction_key(d)), "Mbit/s",
                     run.goodput_bps[d] / 1e6, false});
    }
  }
  if (!out.empty()) {
    out.push_back({"retransmits", "count", static_cast<double>(run.retransmits), false});
  }
  for (const auto& [name, p] : run.latency_ms) {
    if (p.rtt.count == 0) {
      continue;
    }
    out.push_back({name + ".rtt_mean_ms", "ms", p.rtt.mean, false});
    out.push_back({name + ".rtt_p50_ms", "ms", p.rtt.p50, true});
    out.push_back({name + ".rtt_p99_ms", "ms", p.rtt.p99, true});
  }
  if (const auto& l = run.latency_under_load) {
    out.push_back({"induced_latency_ms", "ms", l->induced_latency_ms, false});
    out.push_back({"rpm", "RPM", l->rpm, false});
  }
  return out;
}

std::string combination_label(const Run& run) {
  return run.repetition ? std::string(trim_repetition(run.label)) : run.label;
}

void StatisticsBuilder::add(const Run& run) {
  if (!run.repetition) {
    return;
  }
  const std::string label = combination_label(run);
  if (open_ && (pending_.head.label != label || pending_.head.params != run.params)) {
    close();
  }
  if (!open_) {
    pending_ = Pending{};
    pending_.head.label = label;
    pending_.head.params = run.params;
    open_ = true;
  }
  ++pending_.head.repetitions;
  pending_.head.seeds.push_back(run.seed);
  for (const MetricValue& m : run_metrics(run)) {
    const auto it = std::find(pending_.order.begin(), pending_.order.end(), m.name);
    if (it == pending_.order.end()) {
      pending_.order.push_back(m.name);
      pending_.values.push_back({m.value});
      pending_.kinds.push_back(m);
    } else {
      pending_.values[static_cast<size_t>(it - pending_.order.begin())].push_back(m.value);
    }
  }
}

void StatisticsBuilder::close() {
  if (!open_) {
    return;
  }
  for (size_t i = 0; i < pending_.order.size(); ++i) {
    pending_.head.metrics[pending_.order[i]] =
        describe(pending_.values[i], pending_.kinds[i].unit, pending_.kinds[i].percentile);
  }
  done_.push_back(std::move(pending_.head));
  open_ = false;
}

std::vector<RunStatistics> StatisticsBuilder::finish() {
  close();
  return std::move(done_);
}

std::vector<RunStatistics> run_statistics(const std::vector<Run>& runs) {
  StatisticsBuilder b;
  for (const Run& r : runs) {
    b.add(r);
  }
  return b.finish();
}

double relative_half_width(const MetricStatistics& m) {
  if (!m.ci) {
    return -1;
  }
  const double centre = m.ci->method == "student-t" ? m.mean : m.median;
  if (centre == 0) {
    return m.ci->half_width == 0 ? 0.0 : -1;
  }
  return m.ci->half_width / std::fabs(centre);
}

namespace {

// True when several repetitions gave the same value of every metric: nothing in the run drew
// random numbers (docs/campaigns.md "Repetitions and statistics"), so its intervals have zero
// width.
bool repetitions_identical(const RunStatistics& s) {
  if (s.repetitions < 2) {
    return false;
  }
  return std::all_of(s.metrics.begin(), s.metrics.end(),
                     [](const auto& entry) { return entry.second.min == entry.second.max; });
}

}  // namespace

std::string format_statistics_table(const std::vector<RunStatistics>& statistics) {
  std::string out;
  char buf[256];
  for (const RunStatistics& s : statistics) {
    std::snprintf(buf, sizeof buf, "\nrun %s: %llu repetitions (95 %% confidence intervals)\n",
                  s.label.empty() ? "(single)" : s.label.c_str(),
                  static_cast<unsigned long long>(s.repetitions));
    out += buf;
    for (const auto& [name, m] : s.metrics) {
      if (m.ci && m.ci->method == "order-statistic") {  // not symmetric about the median
        std::snprintf(buf, sizeof buf,
                      "  %-28s median %10.4g in [%.4g, %.4g] %s (%.1f %%, order statistics)\n",
                      name.c_str(), m.median, m.ci->low, m.ci->high, m.unit.c_str(),
                      100 * m.ci->level);
      } else {
        std::snprintf(buf, sizeof buf, "  %-28s mean   %10.4g ± %-9.3g %-7s (sd %.3g%s)\n",
                      name.c_str(), m.mean, m.ci ? m.ci->half_width : 0.0, m.unit.c_str(), m.stddev,
                      m.ci ? ", Student t" : ", one repetition");
      }
      out += buf;
    }
    if (repetitions_identical(s)) {
      out +=
          "  (every repetition gave the same values: nothing in this run draws random numbers;\n"
          "   add wire loss or jitter to see spread, docs/campaigns.md \"Repetitions and "
          "statistics\")\n";
    }
  }
  return out;
}

}  // namespace nicsim::report
