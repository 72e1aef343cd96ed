#include "nicsim/report/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "nicsim/report/latency_under_load.h"

namespace nicsim::report {

std::optional<double> relative_error(double published, double simulated) {
  if (published == 0) {
    return std::nullopt;
  }
  return (simulated - published) / published;
}

void derive_totals(Run& run) {
  run.retransmits = 0;
  for (Direction d : kDirections) {
    run.goodput_bps[d] = run.transfer[d].receiver.bits_per_second;
    run.retransmits += run.transfer[d].sender.retransmits;
  }
}

namespace {

// Sender and receiver totals of `flows` (non-empty): bytes and retransmits summed, the window
// from the earliest start to the latest end, the rates over that window.
template <class Totals>
void sum_into(Totals& out, const std::vector<const FlowTransfer*>& flows) {
  double start_s = flows.front()->sender.start_s;
  double end_s = flows.front()->sender.end_s;
  out.sender.bytes = out.sender.retransmits = out.receiver.bytes = 0;
  for (const FlowTransfer* ft : flows) {
    start_s = std::min(start_s, ft->sender.start_s);
    end_s = std::max(end_s, ft->sender.end_s);
    out.sender.bytes += ft->sender.bytes;
    out.sender.retransmits += ft->sender.retransmits;
    out.receiver.bytes += ft->receiver.bytes;
  }
  out.sender.start_s = out.receiver.start_s = start_s;
  out.sender.end_s = out.receiver.end_s = end_s;
  out.sender.bits_per_second = bits_per_second(out.sender.bytes, end_s - start_s);
  out.receiver.bits_per_second = bits_per_second(out.receiver.bytes, end_s - start_s);
}

}  // namespace

void sum_flows(Run& run) {
  std::map<std::string, std::vector<const FlowTransfer*>> by_pair;
  for (Direction dir : kDirections) {
    DirectionTransfer& d = run.transfer[dir];
    std::vector<const FlowTransfer*> flows;
    for (const FlowTransfer& ft : d.flows) {
      flows.push_back(&ft);
      if (!ft.from.empty()) {
        by_pair[ft.from + "->" + ft.to].push_back(&ft);
      }
    }
    if (!flows.empty()) {
      sum_into(d, flows);
    }
  }
  run.pairs.clear();
  for (const auto& [pair, flows] : by_pair) {
    sum_into(run.pairs[pair], flows);
  }
  derive_totals(run);
}

double flow_fairness(const Run& run) {
  std::vector<double> goodput;
  for (Direction d : kDirections) {
    for (const FlowTransfer& ft : run.transfer[d].flows) {
      goodput.push_back(ft.receiver.bits_per_second);
    }
  }
  return jain_fairness(goodput);
}

double bits_per_second(uint64_t bytes, double seconds) {
  if (seconds <= 0) {
    return 0;
  }
  return static_cast<double>(bytes) * 8.0 / seconds;
}

std::string iso8601_utc(int64_t unix_seconds) {
  // Civil-from-days (H. Hinnant's algorithm): no dependence on the C library's time zone state.
  int64_t days = unix_seconds / 86400;
  int64_t secs = unix_seconds % 86400;
  if (secs < 0) {
    secs += 86400;
    days -= 1;
  }
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
                static_cast<long long>(year), static_cast<long long>(month),
                static_cast<long long>(day), static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  return buf;
}

std::string dscp_name(uint8_t dscp) {
  // Names of RFC 2474 (class selectors), RFC 2597 (AF), RFC 3246 (EF), RFC 5865 (VOICE-ADMIT),
  // spelled as flent's markings and tc do; CS0 is written "BE".
  if (dscp == 0) {
    return "BE";
  }
  if (dscp == 46) {
    return "EF";
  }
  if (dscp == 44) {
    return "VA";
  }
  if (dscp % 8 == 0 && dscp < 64) {
    return "CS" + std::to_string(dscp / 8);
  }
  const int cls = dscp / 8;
  const int drop = (dscp % 8) / 2;
  if (cls >= 1 && cls <= 4 && dscp % 2 == 0 && drop >= 1 && drop <= 3) {
    return "AF" + std::to_string(cls) + std::to_string(drop);
  }
  return std::to_string(dscp);
}

namespace {

class Checker {
 public:
  void finite(double v, const std::string& path) {
    if (!std::isfinite(v)) {
      problems_.push_back(path + ": not a finite number");
    }
  }
  void column(size_t n, size_t expected, const std::string& path) {
    if (n != 0 && n != expected) {
      problems_.push_back(path + ": " + std::to_string(n) + " samples, time_s has " +
                          std::to_string(expected));
    }
  }
  void fail(const std::string& message) { problems_.push_back(message); }
  std::vector<std::string> take() { return std::move(problems_); }

 private:
  std::vector<std::string> problems_;
};

void check_dscp(Checker& c, uint8_t dscp, const std::string& path) {
  if (dscp > 63) {
    c.fail(path + ": DSCP must be 0..63, got " + std::to_string(dscp));
  }
}

// A column of optional samples: empty or as long as time_s (n); rtt_ms must be exactly n long.
void check_optional_column(Checker& c, const std::vector<std::optional<double>>& v, size_t n,
                           const std::string& path, bool required) {
  if (required ? v.size() != n : (!v.empty() && v.size() != n)) {
    c.fail(path + ": " + std::to_string(v.size()) + " samples, time_s has " + std::to_string(n));
  }
  for (const std::optional<double>& x : v) {
    if (x && !std::isfinite(*x)) {
      c.fail(path + ": not a finite number");
      return;
    }
  }
}

void check_series(Checker& c, const ProbeSeries& s, const std::string& path) {
  const size_t n = s.time_s.size();
  check_optional_column(c, s.rtt_ms, n, path + ".rtt_ms", true);
  check_optional_column(c, s.one_way_a_to_b_ms, n, path + ".one_way_a_to_b_ms", false);
  check_optional_column(c, s.one_way_b_to_a_ms, n, path + ".one_way_b_to_a_ms", false);
  for (size_t k = 0; k < n; ++k) {
    if (!std::isfinite(s.time_s[k]) || (k > 0 && s.time_s[k] < s.time_s[k - 1])) {
      c.fail(path + ".time_s: not finite or not in time order at sample " + std::to_string(k));
      break;
    }
  }
}

void check_stats(Checker& c, const LatencyStats& s, const std::string& path) {
  for (double v : {s.min, s.mean, s.p50, s.p90, s.p99, s.max, s.mdev}) {
    c.finite(v, path);
  }
  if (s.count > 0 && !(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.max)) {
    c.fail(path + ": expected min <= p50 <= p90 <= p99 <= max");
  }
}

void check_stats_per_direction(Checker& c, const std::optional<PerDirection<LatencyStats>>& s,
                               const std::string& path) {
  if (s) {
    for (Direction d : kDirections) {
      check_stats(c, (*s)[d], path + "." + std::string(direction_key(d)));
    }
  }
}

void check_fairness(Checker& c, double v, const std::string& path) {
  c.finite(v, path);
  if (!(v >= 0 && v <= 1)) {  // Jain's index lies in [1/n, 1]; 0 = no flow
    c.fail(path + ": Jain's index must lie in [0, 1]");
  }
}

void check_latency_under_load(Checker& c, const LatencyUnderLoad& l, const std::string& path) {
  check_stats(c, l.idle_rtt, path + ".idle_rtt");
  check_stats(c, l.loaded_rtt, path + ".loaded_rtt");
  check_stats_per_direction(c, l.idle_one_way, path + ".idle_one_way");
  check_stats_per_direction(c, l.loaded_one_way, path + ".loaded_one_way");
  c.finite(l.induced_latency_ms, path + ".induced_latency_ms");
  static const char* const kGrades[] = {"A+", "A", "B", "C", "D", "F"};
  bool known = false;
  for (const char* g : kGrades) {
    known = known || l.grade == g;
  }
  if (!known) {
    c.fail(path + ".grade: must be A+, A, B, C, D or F, got \"" + l.grade + "\"");
  }
  c.finite(l.rpm, path + ".rpm");
  c.finite(l.rpm_foreign_ms, path + ".rpm_foreign_ms");
  if (l.rpm_self_ms) {
    c.finite(*l.rpm_self_ms, path + ".rpm_self_ms");
  }
  for (Direction d : kDirections) {
    const std::string dk(direction_key(d));
    check_fairness(c, l.fairness[d], path + ".fairness." + dk);
    c.finite(l.goodput_bps[d], path + ".goodput_bps." + dk);
  }
  check_fairness(c, l.fairness_all, path + ".fairness_all");
  for (const auto& [key, s] : l.per_dscp) {
    check_stats(c, s, path + ".per_dscp." + key);
  }
  for (const auto& [key, s] : l.per_dscp_flow_srtt) {
    check_stats(c, s, path + ".per_dscp_flow_srtt." + key);
  }
}

void check_phases(Checker& c, const std::vector<Phase>& phases, const std::string& path) {
  double prev_end = -INFINITY;
  for (size_t k = 0; k < phases.size(); ++k) {
    const Phase& p = phases[k];
    const std::string pp = path + "[" + std::to_string(k) + "]";
    c.finite(p.start_s, pp + ".start_s");
    c.finite(p.end_s, pp + ".end_s");
    if (p.name.empty()) {
      c.fail(pp + ".name: empty");
    }
    if (!(p.end_s > p.start_s)) {
      c.fail(pp + ": end_s must be greater than start_s");
    }
    if (p.start_s < prev_end) {
      c.fail(pp + ": phases overlap or are out of order");
    }
    prev_end = p.end_s;
  }
}

}  // namespace

std::vector<std::string> check_results(const Results& results) {
  Checker c;
  if (results.runs.empty()) {
    c.fail("runs: no run");
  }
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const Run& r = results.runs[i];
    const std::string at = "runs[" + std::to_string(i) + "]";
    if (r.backend != "sim" && r.backend != "emu" && r.backend != "live") {
      c.fail(at + ".backend: must be \"sim\", \"emu\" or \"live\", got \"" + r.backend + "\"");
    }
    c.finite(r.duration_s, at + ".duration_s");
    for (Direction d : kDirections) {
      const std::string dk(direction_key(d));
      c.finite(r.goodput_bps[d], at + ".goodput_bps." + dk);
      c.finite(r.transfer[d].sender.bits_per_second, at + ".transfer." + dk);
      c.finite(r.transfer[d].receiver.bits_per_second, at + ".transfer." + dk);
      for (const StageTime& s : r.stages[d]) {
        c.finite(s.mean_ms, at + ".stages." + dk + "." + s.stage);
      }
      for (size_t k = 0; k < r.transfer[d].flows.size(); ++k) {
        check_dscp(c, r.transfer[d].flows[k].dscp,
                   at + ".transfer." + dk + ".flows[" + std::to_string(k) + "].dscp");
      }
    }
    for (const auto& [name, p] : r.latency_ms) {
      check_stats(c, p.rtt, at + ".latency_ms." + name);
      if (p.one_way) {
        for (Direction d : kDirections) {
          check_stats(c, (*p.one_way)[d],
                      at + ".latency_ms." + name + ".one_way." + std::string(direction_key(d)));
        }
      }
      check_dscp(c, p.dscp, at + ".latency_ms." + name + ".dscp");
      check_series(c, p.series, at + ".latency_ms." + name + ".series");
    }
    double prev_end = -INFINITY;
    for (size_t k = 0; k < r.intervals.size(); ++k) {
      const Interval& iv = r.intervals[k];
      const std::string ip = at + ".intervals[" + std::to_string(k) + "]";
      c.finite(iv.start_s, ip + ".start_s");
      c.finite(iv.end_s, ip + ".end_s");
      if (!(iv.end_s > iv.start_s)) {
        c.fail(ip + ": end_s must be greater than start_s");
      }
      if (iv.start_s < prev_end) {
        c.fail(ip + ": intervals overlap or are out of order");
      }
      prev_end = iv.end_s;
      for (const auto& [name, v] : iv.latency_ms) {
        c.finite(v, ip + ".latency_ms." + name);
      }
      for (Direction d : kDirections) {
        for (const FlowInterval& f : iv.directions[d].flows) {
          if (f.srtt_ms) {
            c.finite(*f.srtt_ms,
                     ip + ".directions." + std::string(direction_key(d)) + ".flows.srtt_ms");
          }
        }
      }
    }
    for (const auto& [host, q] : r.queues) {
      const std::string qp = at + ".queues." + host;
      const size_t n = q.time_s.size();
      c.column(q.qdisc_bytes.size(), n, qp + ".qdisc_bytes");
      c.column(q.qdisc_packets.size(), n, qp + ".qdisc_packets");
      c.column(q.ring_bytes.size(), n, qp + ".ring_bytes");
      c.column(q.ring_packets.size(), n, qp + ".ring_packets");
      c.column(q.bql_limit_bytes.size(), n, qp + ".bql_limit_bytes");
      c.column(q.bql_inflight_bytes.size(), n, qp + ".bql_inflight_bytes");
      c.column(q.device_fifo_bytes.size(), n, qp + ".device_fifo_bytes");
      for (size_t k = 1; k < n; ++k) {
        if (q.time_s[k] < q.time_s[k - 1]) {
          c.fail(qp + ".time_s: not in time order at sample " + std::to_string(k));
          break;
        }
      }
    }
    check_phases(c, r.phases, at + ".phases");
    if (r.latency_under_load) {
      check_latency_under_load(c, *r.latency_under_load, at + ".latency_under_load");
    }
  }
  return c.take();
}

}  // namespace nicsim::report
