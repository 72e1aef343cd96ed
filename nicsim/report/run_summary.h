#pragma once
// One line of numbers per run, the same for `nicsim compare`, the CSV runs table and the
// compare plot: goodput per direction, the main probe's p50/p99 RTT and, for runs with a
// latency-under-load summary (rrul), induced latency, grade and RPM.

#include <optional>
#include <string>
#include <vector>

#include "nicsim/report/results.h"

namespace nicsim::report {

// The probe a run's latency is quoted by: the first ICMP probe in name order (ping, as
// flent's "Ping (ms) ICMP" and what users know), else the first probe in name order; nullptr
// when the run has no probe.
const std::pair<const std::string, ProbeLatency>* main_probe(const Run& run);

struct RunSummary {
  std::string label;
  std::string backend;
  PerDirection<double> goodput_bps;
  std::string probe;  // main probe name, "" if none
  std::optional<double> p50_ms, p99_ms;
  std::optional<double> induced_latency_ms;  // rrul runs (latency_under_load)
  std::optional<std::string> grade;
  std::optional<double> rpm;
};

RunSummary summarize(const Run& run);

// A summary number printed with `format` (printf, e.g. "%.2f"), or "-" when the run has none:
// the cells of the compare table and of the HTML report's run table.
std::string format_summary_value(std::optional<double> v, const char* format);

// One table row per (file, run): file, label, backend, goodput per direction (Mbit/s), main
// probe, its p50/p99 (ms), induced latency, grade, RPM. "-" where a run has no value.
struct CompareRow {
  std::string file;
  RunSummary summary;
};
std::string format_compare_table(const std::vector<CompareRow>& rows);

}  // namespace nicsim::report
