#include "nicsim/report/latency_under_load.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

#include "nicsim/core/time.h"
#include "nicsim/report/latency_recorder.h"

namespace nicsim::report {

namespace {

enum class PhaseKind { kOther, kIdle, kLoad };

PhaseKind kind_of(const Phase& p) {
  if (p.name == "load") {
    return PhaseKind::kLoad;
  }
  if (p.name.starts_with("idle")) {
    return PhaseKind::kIdle;
  }
  return PhaseKind::kOther;
}

// The kind of the phase containing time t (phases are half-open [start, end)).
PhaseKind kind_at(const std::vector<Phase>& phases, double t) {
  for (const Phase& p : phases) {
    if (t >= p.start_s && t < p.end_s) {
      return kind_of(p);
    }
  }
  return PhaseKind::kOther;
}

// Seconds of [a, b) that fall in load phases.
double load_overlap(const std::vector<Phase>& phases, double a, double b) {
  double s = 0;
  for (const Phase& p : phases) {
    if (kind_of(p) == PhaseKind::kLoad) {
      s += std::max(0.0, std::min(b, p.end_s) - std::max(a, p.start_s));
    }
  }
  return s;
}

// Whether an interval ending at t (a sample taken at its end) lies in a load phase: (start, end].
bool end_in_load(const std::vector<Phase>& phases, double t) {
  for (const Phase& p : phases) {
    if (kind_of(p) == PhaseKind::kLoad && t > p.start_s && t <= p.end_s) {
      return true;
    }
  }
  return false;
}

// Milliseconds as exact-to-the-nanosecond Durations for LatencyRecorder.
void add_ms(LatencyRecorder& r, const std::optional<double>& ms) {
  if (ms) {
    r.add(Duration::ns(std::llround(*ms * 1e6)));
  } else {
    r.add_loss();
  }
}

struct Recorders {
  LatencyRecorder idle_rtt, loaded_rtt;
  PerDirection<LatencyRecorder> idle_one_way, loaded_one_way;
  bool one_way = false;
  std::map<std::string, LatencyRecorder> per_dscp;
  std::vector<double> foreign;  // loaded RTTs sent in the RPM window
};

void record_probes(const Run& run, double window_start, double window_end, Recorders& rec) {
  for (const auto& [name, probe] : run.latency_ms) {
    const ProbeSeries& s = probe.series;
    const bool has_one_way = !s.one_way_a_to_b_ms.empty() && !s.one_way_b_to_a_ms.empty();
    rec.one_way = rec.one_way || has_one_way;
    LatencyRecorder& dscp = rec.per_dscp[dscp_name(probe.dscp)];
    for (size_t k = 0; k < s.time_s.size() && k < s.rtt_ms.size(); ++k) {
      const double t = s.time_s[k];
      const PhaseKind kind = kind_at(run.phases, t);
      if (kind == PhaseKind::kOther) {
        continue;
      }
      const bool load = kind == PhaseKind::kLoad;
      add_ms(load ? rec.loaded_rtt : rec.idle_rtt, s.rtt_ms[k]);
      if (has_one_way && k < s.one_way_a_to_b_ms.size() && k < s.one_way_b_to_a_ms.size()) {
        PerDirection<LatencyRecorder>& ow = load ? rec.loaded_one_way : rec.idle_one_way;
        add_ms(ow.a_to_b, s.one_way_a_to_b_ms[k]);
        add_ms(ow.b_to_a, s.one_way_b_to_a_ms[k]);
      }
      if (load) {
        add_ms(dscp, s.rtt_ms[k]);
        if (s.rtt_ms[k] && t >= window_start && t < window_end) {
          rec.foreign.push_back(*s.rtt_ms[k]);
        }
      }
    }
  }
  std::erase_if(rec.per_dscp, [](const auto& e) {  // DSCPs without any loaded probe
    return e.second.count() == 0 && e.second.lost() == 0;
  });
}

// Load-phase bytes per flow (pro-rated for intervals straddling a phase edge), per direction
// totals, SRTT samples per DSCP and the self-probe samples of the RPM window.
struct FlowRecords {
  PerDirection<std::map<int64_t, double>> flow_bytes;
  PerDirection<double> direction_bytes;
  std::map<std::string, LatencyRecorder> srtt_per_dscp;
  std::vector<double> self;
};

FlowRecords record_flows(const Run& run, double window_start, double window_end) {
  FlowRecords fr;
  for (Direction d : kDirections) {
    for (const FlowTransfer& f : run.transfer[d].flows) {
      fr.flow_bytes[d][f.id] = 0;  // a flow that delivered nothing still counts in fairness
    }
  }
  for (const Interval& iv : run.intervals) {
    const double len = iv.end_s - iv.start_s;
    const double frac = len > 0 ? load_overlap(run.phases, iv.start_s, iv.end_s) / len : 0;
    const bool sample_in_load = end_in_load(run.phases, iv.end_s);
    const bool sample_in_window = iv.end_s > window_start && iv.end_s <= window_end;
    for (Direction d : kDirections) {
      const DirectionInterval& di = iv.directions[d];
      fr.direction_bytes[d] += static_cast<double>(di.bytes) * frac;
      for (const FlowInterval& f : di.flows) {
        fr.flow_bytes[d][f.id] += static_cast<double>(f.bytes) * frac;
        if (!f.srtt_ms || !sample_in_load) {
          continue;
        }
        uint8_t dscp = 0;
        for (const FlowTransfer& t : run.transfer[d].flows) {
          if (t.id == f.id) {
            dscp = t.dscp;
          }
        }
        add_ms(fr.srtt_per_dscp[dscp_name(dscp)], f.srtt_ms);
        if (sample_in_window) {
          fr.self.push_back(*f.srtt_ms);
        }
      }
    }
  }
  return fr;
}

std::vector<double> values_of(const std::map<int64_t, double>& m) {
  std::vector<double> v;
  for (const auto& [id, x] : m) {
    v.push_back(x);
  }
  return v;
}

}  // namespace

std::string bufferbloat_grade(double induced_latency_ms) {
  // DSLReports FAQ 17930 / Waveform bufferbloat test bands (docs/mechanisms/latency-under-load.md).
  if (induced_latency_ms < 5) {
    return "A+";
  }
  if (induced_latency_ms < 30) {
    return "A";
  }
  if (induced_latency_ms < 60) {
    return "B";
  }
  if (induced_latency_ms < 200) {
    return "C";
  }
  if (induced_latency_ms < 400) {
    return "D";
  }
  return "F";
}

double jain_fairness(const std::vector<double>& x) {
  double sum = 0;
  double sum_sq = 0;
  for (double v : x) {
    sum += v;
    sum_sq += v * v;
  }
  if (x.empty() || sum_sq <= 0) {
    return 0;
  }
  return std::min(1.0, sum * sum / (static_cast<double>(x.size()) * sum_sq));
}

std::optional<double> trimmed_mean(std::vector<double> samples, double keep_percent) {
  if (samples.empty()) {
    return std::nullopt;
  }
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  // ceil with a guard against 0.95 * 20 = 19.000000000000004 style rounding.
  const auto keep = std::clamp<size_t>(
      static_cast<size_t>(std::ceil(n * keep_percent / 100 - 1e-9)), 1, samples.size());
  double sum = 0;
  for (size_t k = 0; k < keep; ++k) {
    sum += samples[k];
  }
  return sum / static_cast<double>(keep);
}

double responsiveness_rpm(double foreign_ms, std::optional<double> self_ms) {
  if (foreign_ms <= 0) {
    return 0;
  }
  const double foreign = 60000.0 / foreign_ms;
  if (!self_ms || *self_ms <= 0) {
    return foreign;
  }
  return (foreign + 60000.0 / *self_ms) / 2;
}

std::optional<LatencyUnderLoad> compute_latency_under_load(const Run& run,
                                                           const LatencyUnderLoadParams& params) {
  double load_seconds = 0;
  const Phase* last_load = nullptr;
  for (const Phase& p : run.phases) {
    if (kind_of(p) == PhaseKind::kLoad) {
      load_seconds += p.end_s - p.start_s;
      last_load = &p;
    }
  }
  if (last_load == nullptr || load_seconds <= 0) {
    return std::nullopt;
  }
  const double window_end = last_load->end_s;
  const double window_start = std::max(last_load->start_s, window_end - params.rpm_window_s);

  Recorders rec;
  record_probes(run, window_start, window_end, rec);
  if (rec.idle_rtt.count() == 0 || rec.loaded_rtt.count() == 0) {
    return std::nullopt;
  }
  const FlowRecords fr = record_flows(run, window_start, window_end);

  LatencyUnderLoad l;
  l.idle_rtt = rec.idle_rtt.stats();
  l.loaded_rtt = rec.loaded_rtt.stats();
  if (rec.one_way) {
    l.idle_one_way = PerDirection<LatencyStats>{rec.idle_one_way.a_to_b.stats(),
                                                rec.idle_one_way.b_to_a.stats()};
    l.loaded_one_way = PerDirection<LatencyStats>{rec.loaded_one_way.a_to_b.stats(),
                                                  rec.loaded_one_way.b_to_a.stats()};
  }
  l.induced_latency_ms = l.loaded_rtt.mean - l.idle_rtt.mean;
  l.grade = bufferbloat_grade(l.induced_latency_ms);
  l.rpm_foreign_ms = trimmed_mean(rec.foreign, params.trimmed_mean_percent).value_or(0);
  l.rpm_self_ms = trimmed_mean(fr.self, params.trimmed_mean_percent);
  l.rpm = responsiveness_rpm(l.rpm_foreign_ms, l.rpm_self_ms);
  std::vector<double> all;
  for (Direction d : kDirections) {
    const std::vector<double> v = values_of(fr.flow_bytes[d]);
    l.fairness[d] = jain_fairness(v);
    all.insert(all.end(), v.begin(), v.end());
    l.goodput_bps[d] = fr.direction_bytes[d] * 8 / load_seconds;
  }
  l.fairness_all = jain_fairness(all);
  for (const auto& [name, r] : rec.per_dscp) {
    l.per_dscp[name] = r.stats();
  }
  for (const auto& [name, r] : fr.srtt_per_dscp) {
    l.per_dscp_flow_srtt[name] = r.stats();
  }
  return l;
}

}  // namespace nicsim::report
