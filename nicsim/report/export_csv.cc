// CSV export (export_csv.h). Tidy-data layout (Wickham, "Tidy Data", J. Stat. Softw. 59(10),
// 2014): each table holds one kind of observation, so pandas / R / a spreadsheet can filter
// and group it without reshaping. RFC 4180 for quoting.

#include "nicsim/report/export_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "nicsim/report/run_summary.h"

namespace nicsim::report {

namespace {

class Table {
 public:
  Table(std::string name, std::initializer_list<const char*> columns) : name_(std::move(name)) {
    std::vector<std::string> h(columns.begin(), columns.end());
    header(h);
  }
  Table(std::string name, const std::vector<std::string>& columns) : name_(std::move(name)) {
    header(columns);
  }
  Table& operator<<(const std::string& s) { return field(csv_field(s)); }
  Table& operator<<(const char* s) { return field(csv_field(s)); }
  Table& operator<<(double v) { return field(csv_number(v)); }
  Table& operator<<(uint64_t v) { return field(std::to_string(v)); }
  Table& operator<<(int64_t v) { return field(std::to_string(v)); }
  Table& operator<<(std::optional<double> v) { return field(v ? csv_number(*v) : ""); }
  // Throws std::logic_error when the row's field count differs from the header's (a bug in
  // this file: the columns would shift under their names).
  void end_row() {
    if (columns_ == 0) {
      columns_ = fields_;
    } else if (fields_ != columns_) {
      throw std::logic_error(name_ + ": a row of " + std::to_string(fields_) + " fields under " +
                             std::to_string(columns_) + " columns");
    }
    text_ += '\n';
    first_ = true;
    fields_ = 0;
  }
  CsvTable take() { return {name_, std::move(text_)}; }

 private:
  void header(const std::vector<std::string>& columns) {
    for (const std::string& c : columns) {
      field(csv_field(c));
    }
    end_row();
  }
  Table& field(const std::string& f) {
    text_ += first_ ? "" : ",";
    text_ += f;
    first_ = false;
    ++fields_;
    return *this;
  }
  std::string name_;
  std::string text_;
  bool first_ = true;
  size_t fields_ = 0;   // in the current row
  size_t columns_ = 0;  // in the header
};

std::string param_text(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else if constexpr (std::is_same_v<T, double>) {
          return csv_number(x);
        } else {
          return std::to_string(x);
        }
      },
      v);
}

// The varied keys of all runs, in order of first appearance.
std::vector<std::string> param_keys(const Results& results) {
  std::vector<std::string> keys;
  for (const Run& r : results.runs) {
    for (const RunParam& p : r.params) {
      if (std::find(keys.begin(), keys.end(), p.key) == keys.end()) {
        keys.push_back(p.key);
      }
    }
  }
  return keys;
}

CsvTable runs_table(const Results& results) {
  const std::vector<std::string> keys = param_keys(results);
  std::vector<std::string> columns = {"run",
                                      "label",
                                      "backend",
                                      "seed",
                                      "duration_s",
                                      "goodput_a_to_b_bps",
                                      "goodput_b_to_a_bps",
                                      "retransmits",
                                      "main_probe",
                                      "main_p50_ms",
                                      "main_p99_ms",
                                      "induced_latency_ms",
                                      "grade",
                                      "rpm",
                                      "idle_rtt_p50_ms",
                                      "loaded_rtt_p50_ms",
                                      "loaded_rtt_p99_ms",
                                      "fairness_all",
                                      "load_goodput_a_to_b_bps",
                                      "load_goodput_b_to_a_bps"};
  for (const std::string& k : keys) {
    columns.push_back("param:" + k);
  }
  Table t("runs.csv", columns);
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    const RunSummary s = summarize(r);
    t << i << r.label << r.backend << r.seed << r.duration_s << r.goodput_bps.a_to_b
      << r.goodput_bps.b_to_a << r.retransmits << s.probe << s.p50_ms << s.p99_ms
      << s.induced_latency_ms << s.grade.value_or("") << s.rpm;
    if (const std::optional<LatencyUnderLoad>& l = r.latency_under_load) {
      const auto v = [](const LatencyStats& st, double x) {
        return st.count == 0 ? std::nullopt : std::optional<double>(x);
      };
      t << v(l->idle_rtt, l->idle_rtt.p50) << v(l->loaded_rtt, l->loaded_rtt.p50)
        << v(l->loaded_rtt, l->loaded_rtt.p99) << l->fairness_all << l->goodput_bps.a_to_b
        << l->goodput_bps.b_to_a;
    } else {
      t << ""
        << ""
        << ""
        << ""
        << ""
        << "";
    }
    for (const std::string& k : keys) {
      std::string v;
      for (const RunParam& p : r.params) {
        if (p.key == k) {
          v = param_text(p.value);
        }
      }
      t << v;
    }
    t.end_row();
  }
  return t.take();
}

CsvTable intervals_table(const Results& results) {
  Table t("intervals.csv", {"run", "label", "start_s", "end_s", "direction", "bytes",
                            "bits_per_second", "retransmits", "cwnd_bytes"});
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    for (const Interval& iv : r.intervals) {
      for (Direction d : kDirections) {
        const DirectionInterval& di = iv.directions[d];
        t << i << r.label << iv.start_s << iv.end_s << std::string(direction_key(d)) << di.bytes
          << di.bits_per_second << di.retransmits << di.cwnd_bytes;
        t.end_row();
      }
    }
  }
  return t.take();
}

std::string flow_name(const Run& run, Direction d, int64_t id) {
  for (const FlowTransfer& f : run.transfer[d].flows) {
    if (f.id == id) {
      return f.name;
    }
  }
  return "";
}

CsvTable flow_intervals_table(const Results& results) {
  Table t("flow_intervals.csv",
          {"run", "label", "start_s", "end_s", "direction", "flow_id", "flow_name", "bytes",
           "bits_per_second", "retransmits", "cwnd_bytes", "srtt_ms"});
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    for (const Interval& iv : r.intervals) {
      for (Direction d : kDirections) {
        for (const FlowInterval& f : iv.directions[d].flows) {
          t << i << r.label << iv.start_s << iv.end_s << std::string(direction_key(d)) << f.id
            << flow_name(r, d, f.id) << f.bytes << f.bits_per_second << f.retransmits
            << f.cwnd_bytes << f.srtt_ms;
          t.end_row();
        }
      }
    }
  }
  return t.take();
}

CsvTable interval_latency_table(const Results& results) {
  Table t("interval_latency.csv", {"run", "label", "start_s", "end_s", "probe", "mean_rtt_ms"});
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    for (const Interval& iv : r.intervals) {
      for (const auto& [probe, ms] : iv.latency_ms) {
        t << i << r.label << iv.start_s << iv.end_s << probe << ms;
        t.end_row();
      }
    }
  }
  return t.take();
}

void stats_row(Table& t, size_t i, const Run& r, const std::string& probe, const ProbeLatency& p,
               const std::string& measure, const LatencyStats& s) {
  const auto v = [&](double x) { return s.count == 0 ? std::nullopt : std::optional<double>(x); };
  t << i << r.label << probe << p.kind << static_cast<uint64_t>(p.dscp) << measure << s.count
    << s.lost << v(s.min) << v(s.mean) << v(s.p50) << v(s.p90) << v(s.p99) << v(s.max) << v(s.mdev)
    << p.from << p.to;
  t.end_row();
}

CsvTable flows_table(const Results& results) {
  Table t("flows.csv",
          {"run", "label", "direction", "flow_id", "flow_name", "dscp", "from", "to", "start_s",
           "end_s", "sender_bytes", "receiver_bytes", "bits_per_second", "retransmits"});
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    for (Direction d : kDirections) {
      for (const FlowTransfer& f : r.transfer[d].flows) {
        t << i << r.label << std::string(direction_key(d)) << f.id << f.name
          << static_cast<uint64_t>(f.dscp) << f.from << f.to << f.receiver.start_s
          << f.receiver.end_s << f.sender.bytes << f.receiver.bytes << f.receiver.bits_per_second
          << f.sender.retransmits;
        t.end_row();
      }
    }
  }
  return t.take();
}

CsvTable probes_table(const Results& results) {
  Table t("probes.csv",
          {"run", "label", "probe", "kind", "dscp", "measure", "count", "lost", "min_ms", "mean_ms",
           "p50_ms", "p90_ms", "p99_ms", "max_ms", "mdev_ms", "from", "to"});
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    for (const auto& [name, p] : r.latency_ms) {
      stats_row(t, i, r, name, p, "rtt", p.rtt);
      if (p.one_way) {
        for (Direction d : kDirections) {
          stats_row(t, i, r, name, p, "one_way " + std::string(direction_key(d)), (*p.one_way)[d]);
        }
      }
    }
  }
  return t.take();
}

CsvTable probe_samples_table(const Results& results) {
  Table t("probe_samples.csv", {"run", "label", "probe", "seq", "send_s", "rtt_ms",
                                "one_way_a_to_b_ms", "one_way_b_to_a_ms"});
  const auto at = [](const std::vector<std::optional<double>>& c, size_t k) {
    return k < c.size() ? c[k] : std::nullopt;
  };
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    for (const auto& [name, p] : r.latency_ms) {
      const ProbeSeries& s = p.series;
      for (size_t k = 0; k < s.time_s.size(); ++k) {
        t << i << r.label << name << static_cast<uint64_t>(k) << s.time_s[k] << at(s.rtt_ms, k)
          << at(s.one_way_a_to_b_ms, k) << at(s.one_way_b_to_a_ms, k);
        t.end_row();
      }
    }
  }
  return t.take();
}

CsvTable phases_table(const Results& results) {
  Table t("phases.csv", {"run", "label", "phase", "start_s", "end_s"});
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    for (const Phase& p : r.phases) {
      t << i << r.label << p.name << p.start_s << p.end_s;
      t.end_row();
    }
  }
  return t.take();
}

CsvTable queues_table(const Results& results) {
  Table t("queues.csv",
          {"run", "label", "host", "time_s", "qdisc_bytes", "qdisc_packets", "ring_bytes",
           "ring_packets", "bql_limit_bytes", "bql_inflight_bytes", "device_fifo_bytes"});
  const auto cell = [](const std::vector<uint64_t>& c, size_t k) {
    return k < c.size() ? std::to_string(c[k]) : std::string();
  };
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    for (const auto& [host, q] : r.queues) {
      for (size_t k = 0; k < q.time_s.size(); ++k) {
        t << i << r.label << host << q.time_s[k] << cell(q.qdisc_bytes, k)
          << cell(q.qdisc_packets, k) << cell(q.ring_bytes, k) << cell(q.ring_packets, k)
          << cell(q.bql_limit_bytes, k) << cell(q.bql_inflight_bytes, k)
          << cell(q.device_fifo_bytes, k);
        t.end_row();
      }
    }
  }
  return t.take();
}

}  // namespace

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) {
    return s;
  }
  std::string out = "\"";
  for (char c : s) {
    out += c == '"' ? "\"\"" : std::string(1, c);
  }
  return out + "\"";
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) {
    return "";
  }
  if (v == 0) {
    return "0";  // also -0.0
  }
  // Plain decimals where they are short enough to read (4000000, not 4e+06); the exponent
  // form only for very small or large magnitudes. Both are the shortest text that reads back
  // to the same double.
  char buf[400];
  const double a = std::fabs(v);
  const auto res = a >= 1e-5 && a < 1e16
                       ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                       : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::vector<CsvTable> csv_tables(const Results& results) {
  return {runs_table(results),           intervals_table(results),        flows_table(results),
          flow_intervals_table(results), interval_latency_table(results), probes_table(results),
          probe_samples_table(results),  phases_table(results),           queues_table(results)};
}

}  // namespace nicsim::report
