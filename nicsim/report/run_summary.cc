#include "nicsim/report/run_summary.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace nicsim::report {

namespace {

void add_latency_under_load(const Run& run, RunSummary& s) {
  if (const std::optional<LatencyUnderLoad>& l = run.latency_under_load) {
    s.induced_latency_ms = l->induced_latency_ms;
    s.grade = l->grade;
    s.rpm = l->rpm;
  }
}

}  // namespace

std::string format_summary_value(std::optional<double> v, const char* format) {
  if (!v) {
    return "-";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

const std::pair<const std::string, ProbeLatency>* main_probe(const Run& run) {
  for (const auto& entry : run.latency_ms) {
    if (entry.second.kind == "icmp") {
      return &entry;
    }
  }
  return run.latency_ms.empty() ? nullptr : &*run.latency_ms.begin();
}

RunSummary summarize(const Run& run) {
  RunSummary s;
  s.label = run.label;
  s.backend = run.backend;
  s.goodput_bps = run.goodput_bps;
  if (const auto* p = main_probe(run)) {
    s.probe = p->first;
    if (p->second.rtt.count > 0) {
      s.p50_ms = p->second.rtt.p50;
      s.p99_ms = p->second.rtt.p99;
    }
  }
  add_latency_under_load(run, s);
  return s;
}

std::string format_compare_table(const std::vector<CompareRow>& rows) {
  const std::vector<std::string> header = {"file",        "run",   "backend", "a->b Mbit/s",
                                           "b->a Mbit/s", "probe", "p50 ms",  "p99 ms",
                                           "induced ms",  "grade", "RPM"};
  std::vector<std::vector<std::string>> cells;
  cells.push_back(header);
  for (const CompareRow& r : rows) {
    const RunSummary& s = r.summary;
    cells.push_back({r.file, s.label.empty() ? "(single)" : s.label, s.backend,
                     format_summary_value(s.goodput_bps.a_to_b / 1e6, "%.2f"),
                     format_summary_value(s.goodput_bps.b_to_a / 1e6, "%.2f"),
                     s.probe.empty() ? "-" : s.probe, format_summary_value(s.p50_ms, "%.3f"),
                     format_summary_value(s.p99_ms, "%.3f"),
                     format_summary_value(s.induced_latency_ms, "%.3f"), s.grade.value_or("-"),
                     format_summary_value(s.rpm, "%.0f")});
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  // Text columns left-aligned, numbers right-aligned.
  const auto numeric = [](size_t col) { return col >= 3 && col != 5 && col != 9; };
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      line += (i == 0 ? "" : "  ") + (numeric(i) ? pad + row[i] : row[i] + pad);
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace nicsim::report
