#include "nicsim/report/json.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nicsim::report {

namespace {

using J = nlohmann::ordered_json;

// --- writing ---------------------------------------------------------------------------------

J per_direction(auto&& f) {
  J o = J::object();
  for (Direction d : kDirections) {
    o[std::string(direction_key(d))] = f(d);
  }
  return o;
}

J stats_json(const LatencyStats& s) {
  J o = J::object();
  const auto v = [&](double x) { return s.count == 0 ? J(nullptr) : J(x); };
  o["min"] = v(s.min);
  o["mean"] = v(s.mean);
  o["p50"] = v(s.p50);
  o["p90"] = v(s.p90);
  o["p99"] = v(s.p99);
  o["max"] = v(s.max);
  o["mdev"] = v(s.mdev);
  o["count"] = s.count;
  o["lost"] = s.lost;
  return o;
}

J optional_numbers(const std::vector<std::optional<double>>& v) {
  J a = J::array();
  for (const std::optional<double>& x : v) {
    a.push_back(x ? J(*x) : J(nullptr));
  }
  return a;
}

J series_json(const ProbeSeries& s) {
  J o = J::object();
  o["time_s"] = s.time_s;
  o["rtt_ms"] = optional_numbers(s.rtt_ms);
  if (!s.one_way_a_to_b_ms.empty()) {
    o["one_way_a_to_b_ms"] = optional_numbers(s.one_way_a_to_b_ms);
  }
  if (!s.one_way_b_to_a_ms.empty()) {
    o["one_way_b_to_a_ms"] = optional_numbers(s.one_way_b_to_a_ms);
  }
  return o;
}

J probe_json(const ProbeLatency& p) {
  J o = J::object();
  o["kind"] = p.kind;
  const J rtt = stats_json(p.rtt);  // a named object: items() must not outlive it
  for (const auto& [k, v] : rtt.items()) {
    o[k] = v;
  }
  if (p.one_way) {
    o["one_way"] = per_direction([&](Direction d) { return stats_json((*p.one_way)[d]); });
  }
  o["dscp"] = p.dscp;
  o["series"] = series_json(p.series);
  return o;
}

J sender_json(const SenderTotals& s) {
  return J{{"start_s", s.start_s},
           {"end_s", s.end_s},
           {"bytes", s.bytes},
           {"bits_per_second", s.bits_per_second},
           {"retransmits", s.retransmits}};
}

J receiver_json(const ReceiverTotals& r) {
  return J{{"start_s", r.start_s},
           {"end_s", r.end_s},
           {"bytes", r.bytes},
           {"bits_per_second", r.bits_per_second}};
}

J transfer_json(const DirectionTransfer& t) {
  J flows = J::array();
  for (const FlowTransfer& f : t.flows) {
    flows.push_back(J{{"id", f.id},
                      {"name", f.name},
                      {"dscp", f.dscp},
                      {"sender", sender_json(f.sender)},
                      {"receiver", receiver_json(f.receiver)}});
  }
  return J{{"sender", sender_json(t.sender)},
           {"receiver", receiver_json(t.receiver)},
           {"flows", std::move(flows)}};
}

J interval_json(const Interval& iv) {
  J o = J::object();
  o["start_s"] = iv.start_s;
  o["end_s"] = iv.end_s;
  o["directions"] = per_direction([&](Direction d) {
    const DirectionInterval& di = iv.directions[d];
    J flows = J::array();
    for (const FlowInterval& f : di.flows) {
      J fj = J{{"id", f.id},
               {"bytes", f.bytes},
               {"bits_per_second", f.bits_per_second},
               {"retransmits", f.retransmits},
               {"cwnd_bytes", f.cwnd_bytes}};
      if (f.srtt_ms) {
        fj["srtt_ms"] = *f.srtt_ms;
      }
      flows.push_back(std::move(fj));
    }
    return J{{"bytes", di.bytes},
             {"bits_per_second", di.bits_per_second},
             {"retransmits", di.retransmits},
             {"cwnd_bytes", di.cwnd_bytes},
             {"flows", std::move(flows)}};
  });
  J lat = J::object();
  for (const auto& [name, v] : iv.latency_ms) {
    lat[name] = v;
  }
  o["latency_ms"] = std::move(lat);
  return o;
}

J queue_json(const QueueSeries& q) {
  J o = J::object();
  o["time_s"] = q.time_s;
  const auto column = [&](const char* name, const std::vector<uint64_t>& c) {
    if (!c.empty()) {
      o[name] = c;
    }
  };
  column("qdisc_bytes", q.qdisc_bytes);
  column("qdisc_packets", q.qdisc_packets);
  column("ring_bytes", q.ring_bytes);
  column("ring_packets", q.ring_packets);
  column("bql_limit_bytes", q.bql_limit_bytes);
  column("bql_inflight_bytes", q.bql_inflight_bytes);
  column("device_fifo_bytes", q.device_fifo_bytes);
  return o;
}

J optional_number(const std::optional<double>& v) { return v ? J(*v) : J(nullptr); }

J stats_map_json(const std::map<std::string, LatencyStats>& m) {
  J o = J::object();
  for (const auto& [key, s] : m) {
    o[key] = stats_json(s);
  }
  return o;
}

J latency_under_load_json(const LatencyUnderLoad& l) {
  J o = J::object();
  o["idle_rtt"] = stats_json(l.idle_rtt);
  o["loaded_rtt"] = stats_json(l.loaded_rtt);
  if (l.idle_one_way) {
    o["idle_one_way"] =
        per_direction([&](Direction d) { return stats_json((*l.idle_one_way)[d]); });
  }
  if (l.loaded_one_way) {
    o["loaded_one_way"] =
        per_direction([&](Direction d) { return stats_json((*l.loaded_one_way)[d]); });
  }
  o["induced_latency_ms"] = l.induced_latency_ms;
  o["grade"] = l.grade;
  o["rpm"] = l.rpm;
  o["rpm_foreign_ms"] = l.rpm_foreign_ms;
  o["rpm_self_ms"] = optional_number(l.rpm_self_ms);
  o["fairness"] = per_direction([&](Direction d) { return J(l.fairness[d]); });
  o["fairness_all"] = l.fairness_all;
  o["per_dscp"] = stats_map_json(l.per_dscp);
  o["per_dscp_flow_srtt"] = stats_map_json(l.per_dscp_flow_srtt);
  o["goodput_bps"] = per_direction([&](Direction d) { return J(l.goodput_bps[d]); });
  return o;
}

J run_json(const Run& r) {
  J o = J::object();
  o["label"] = r.label;
  J params = J::object();
  for (const RunParam& p : r.params) {
    params[p.key] = std::visit([](const auto& v) { return J(v); }, p.value);
  }
  o["params"] = std::move(params);
  o["backend"] = r.backend;
  o["seed"] = r.seed;
  o["duration_s"] = r.duration_s;
  o["goodput_bps"] = per_direction([&](Direction d) { return J(r.goodput_bps[d]); });
  o["retransmits"] = r.retransmits;
  J lat = J::object();
  for (const auto& [name, p] : r.latency_ms) {
    lat[name] = probe_json(p);
  }
  o["latency_ms"] = std::move(lat);
  o["transfer"] = per_direction([&](Direction d) { return transfer_json(r.transfer[d]); });
  o["stages"] = per_direction([&](Direction d) {
    J a = J::array();
    for (const StageTime& s : r.stages[d]) {
      a.push_back(J{{"stage", s.stage}, {"mean_ms", s.mean_ms}, {"packets", s.packets}});
    }
    return a;
  });
  J cmp = J::array();
  for (const Comparison& c : r.comparison) {
    cmp.push_back(J{{"metric", c.metric},
                    {"published", c.published},
                    {"simulated", optional_number(c.simulated)},
                    {"relative_error", optional_number(c.relative_error)},
                    {"source", c.source}});
  }
  o["comparison"] = std::move(cmp);
  J intervals = J::array();
  for (const Interval& iv : r.intervals) {
    intervals.push_back(interval_json(iv));
  }
  o["intervals"] = std::move(intervals);
  J queues = J::object();
  for (const auto& [host, q] : r.queues) {
    queues[host] = queue_json(q);
  }
  o["queues"] = std::move(queues);
  J phases = J::array();
  for (const Phase& p : r.phases) {
    phases.push_back(J{{"name", p.name}, {"start_s", p.start_s}, {"end_s", p.end_s}});
  }
  o["phases"] = std::move(phases);
  if (r.latency_under_load) {
    o["latency_under_load"] = latency_under_load_json(*r.latency_under_load);
  }
  o["config_toml"] = r.config_toml;
  return o;
}

J meta_json(const Meta& m) {
  J o = J::object();
  o["nicsim_version"] = m.nicsim_version;
  o["git_commit"] = m.git_commit ? J(*m.git_commit) : J(nullptr);
  o["start_time"] = m.start_time;
  o["wall_s"] = m.wall_s;
  o["host"] = m.host;
  o["events"] = m.events;
  o["events_per_s"] = m.events_per_s;
  o["command_line"] = m.command_line;
  J runs = J::array();
  for (const RunMeta& r : m.runs) {
    runs.push_back(J{{"label", r.label},
                     {"wall_s", r.wall_s},
                     {"events", r.events},
                     {"events_per_s", r.events_per_s}});
  }
  o["runs"] = std::move(runs);
  return o;
}

bool is_container(const J& v) { return v.is_object() || v.is_array(); }

// Fixed layout: two-space indentation, scalar arrays on one line.
void emit(std::string& out, const J& v, int indent, std::string& path) {
  const auto newline = [&](int n) {
    out += '\n';
    out.append(static_cast<size_t>(n), ' ');
  };
  switch (v.type()) {
    case J::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        out += first ? "" : ",";
        first = false;
        newline(indent + 2);
        out += J(key).dump(-1, ' ', false, J::error_handler_t::replace);
        out += ": ";
        const size_t mark = path.size();
        path += "." + key;
        emit(out, value, indent + 2, path);
        path.resize(mark);
      }
      newline(indent);
      out += '}';
      return;
    }
    case J::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      bool scalars = true;
      for (const J& e : v) {
        scalars = scalars && !is_container(e);
      }
      out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        out += i == 0 ? "" : (scalars ? ", " : ",");
        if (!scalars) {
          newline(indent + 2);
        }
        const size_t mark = path.size();
        path += "[" + std::to_string(i) + "]";
        emit(out, v[i], indent + 2, path);
        path.resize(mark);
      }
      if (!scalars) {
        newline(indent);
      }
      out += ']';
      return;
    }
    case J::value_t::number_float: {
      const double d = v.get<double>();
      if (!std::isfinite(d)) {
        throw JsonError("to_json: " + path.substr(1) + ": not a finite number");
      }
      out += d == 0 ? "0.0" : v.dump();
      return;
    }
    default:
      out += v.dump(-1, ' ', false, J::error_handler_t::replace);
      return;
  }
}

// --- reading ---------------------------------------------------------------------------------

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw JsonError("results JSON: " + (path.empty() ? std::string("(document)") : path) + ": " +
                  message);
}

std::string type_name(const J& v) { return v.type_name(); }

// An object being read: every key must be consumed (unknown keys are errors).
class Obj {
 public:
  Obj(const J& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) {
      fail(path_, "expected an object, got " + type_name(j_));
    }
  }
  Obj(const Obj&) = delete;
  Obj& operator=(const Obj&) = delete;

  const J& at(const std::string& key) {
    const auto it = j_.find(key);
    if (it == j_.end()) {
      fail(path_, "missing key \"" + key + "\"");
    }
    ++used_;
    return *it;
  }
  const J* find(const std::string& key) {
    const auto it = j_.find(key);
    if (it == j_.end()) {
      return nullptr;
    }
    ++used_;
    return &*it;
  }
  std::string path(const std::string& key) const { return join(path_, key); }
  // Call after reading: reports the first key that was not read.
  void done() const {
    if (used_ == j_.size()) {
      return;
    }
    for (const auto& [key, value] : j_.items()) {
      (void)value;
      if (!known(key)) {
        fail(path_, "unknown key \"" + key + "\"");
      }
    }
  }
  void expect(std::initializer_list<std::string_view> keys) { keys_.assign(keys); }
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  bool known(const std::string& key) const {
    for (std::string_view k : keys_) {
      if (key == k) {
        return true;
      }
    }
    return false;
  }
  const J& j_;
  std::string path_;
  size_t used_ = 0;
  std::vector<std::string_view> keys_;  // the keys this object may have
};

double get_double(const J& v, const std::string& path) {
  if (!v.is_number()) {
    fail(path, "expected a number, got " + type_name(v));
  }
  return v.get<double>();
}

uint64_t get_u64(const J& v, const std::string& path) {
  if (v.is_number_unsigned()) {
    return v.get<uint64_t>();
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(v.get<int64_t>());
  }
  fail(path, "expected a non-negative integer, got " + (v.is_number() ? v.dump() : type_name(v)));
}

int64_t get_i64(const J& v, const std::string& path) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(path, "integer out of range");
    }
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_number_integer()) {
    return v.get<int64_t>();
  }
  fail(path, "expected an integer, got " + (v.is_number() ? v.dump() : type_name(v)));
}

std::string get_string(const J& v, const std::string& path) {
  if (!v.is_string()) {
    fail(path, "expected a string, got " + type_name(v));
  }
  return v.get<std::string>();
}

std::optional<double> get_optional_double(const J& v, const std::string& path) {
  if (v.is_null()) {
    return std::nullopt;
  }
  return get_double(v, path);
}

template <typename T, typename F>
PerDirection<T> read_per_direction(const J& v, const std::string& path, F&& f) {
  Obj o(v, path);
  o.expect({"a->b", "b->a"});
  PerDirection<T> out;
  for (Direction d : kDirections) {
    const std::string key(direction_key(d));
    out[d] = f(o.at(key), o.path(key));
  }
  o.done();
  return out;
}

template <typename F>
void read_array(const J& v, const std::string& path, F&& f) {
  if (!v.is_array()) {
    fail(path, "expected an array, got " + type_name(v));
  }
  for (size_t i = 0; i < v.size(); ++i) {
    f(v[i], path + "[" + std::to_string(i) + "]");
  }
}

LatencyStats read_stats(Obj& o) {
  LatencyStats s;
  s.count = get_u64(o.at("count"), o.path("count"));
  s.lost = get_u64(o.at("lost"), o.path("lost"));
  const auto stat = [&](const char* key, double& field) {
    const J& v = o.at(key);
    if (s.count == 0) {
      if (!v.is_null()) {
        fail(o.path(key), "must be null when count is 0");
      }
      field = 0;
    } else {
      field = get_double(v, o.path(key));
    }
  };
  stat("min", s.min);
  stat("mean", s.mean);
  stat("p50", s.p50);
  stat("p90", s.p90);
  stat("p99", s.p99);
  stat("max", s.max);
  stat("mdev", s.mdev);
  return s;
}

LatencyStats read_stats_object(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"min", "mean", "p50", "p90", "p99", "max", "mdev", "count", "lost"});
  LatencyStats s = read_stats(o);
  o.done();
  return s;
}

uint8_t get_dscp(const J& v, const std::string& path) {
  const uint64_t d = get_u64(v, path);
  if (d > 63) {
    fail(path, "DSCP must be 0..63, got " + std::to_string(d));
  }
  return static_cast<uint8_t>(d);
}

std::vector<double> read_doubles(const J& v, const std::string& path);

std::vector<std::optional<double>> read_optional_doubles(const J& v, const std::string& path) {
  std::vector<std::optional<double>> out;
  read_array(v, path,
             [&](const J& e, const std::string& p) { out.push_back(get_optional_double(e, p)); });
  return out;
}

ProbeSeries read_series(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"time_s", "rtt_ms", "one_way_a_to_b_ms", "one_way_b_to_a_ms"});
  ProbeSeries s;
  s.time_s = read_doubles(o.at("time_s"), o.path("time_s"));
  s.rtt_ms = read_optional_doubles(o.at("rtt_ms"), o.path("rtt_ms"));
  if (const J* j = o.find("one_way_a_to_b_ms")) {
    s.one_way_a_to_b_ms = read_optional_doubles(*j, o.path("one_way_a_to_b_ms"));
  }
  if (const J* j = o.find("one_way_b_to_a_ms")) {
    s.one_way_b_to_a_ms = read_optional_doubles(*j, o.path("one_way_b_to_a_ms"));
  }
  o.done();
  return s;
}

ProbeLatency read_probe(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"kind", "min", "mean", "p50", "p90", "p99", "max", "mdev", "count", "lost", "one_way",
            "dscp", "series"});
  ProbeLatency p;
  p.kind = get_string(o.at("kind"), o.path("kind"));
  p.rtt = read_stats(o);
  if (const J* ow = o.find("one_way")) {
    p.one_way = read_per_direction<LatencyStats>(*ow, o.path("one_way"), read_stats_object);
  }
  // dscp and series arrived with rrul (issue 6); documents written before have neither.
  if (const J* d = o.find("dscp")) {
    p.dscp = get_dscp(*d, o.path("dscp"));
  }
  if (const J* s = o.find("series")) {
    p.series = read_series(*s, o.path("series"));
  }
  o.done();
  return p;
}

SenderTotals read_sender(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"start_s", "end_s", "bytes", "bits_per_second", "retransmits"});
  SenderTotals s;
  s.start_s = get_double(o.at("start_s"), o.path("start_s"));
  s.end_s = get_double(o.at("end_s"), o.path("end_s"));
  s.bytes = get_u64(o.at("bytes"), o.path("bytes"));
  s.bits_per_second = get_double(o.at("bits_per_second"), o.path("bits_per_second"));
  s.retransmits = get_u64(o.at("retransmits"), o.path("retransmits"));
  o.done();
  return s;
}

ReceiverTotals read_receiver(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"start_s", "end_s", "bytes", "bits_per_second"});
  ReceiverTotals r;
  r.start_s = get_double(o.at("start_s"), o.path("start_s"));
  r.end_s = get_double(o.at("end_s"), o.path("end_s"));
  r.bytes = get_u64(o.at("bytes"), o.path("bytes"));
  r.bits_per_second = get_double(o.at("bits_per_second"), o.path("bits_per_second"));
  o.done();
  return r;
}

DirectionTransfer read_transfer(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"sender", "receiver", "flows"});
  DirectionTransfer t;
  t.sender = read_sender(o.at("sender"), o.path("sender"));
  t.receiver = read_receiver(o.at("receiver"), o.path("receiver"));
  read_array(o.at("flows"), o.path("flows"), [&](const J& e, const std::string& p) {
    Obj f(e, p);
    f.expect({"id", "name", "dscp", "sender", "receiver"});
    FlowTransfer ft;
    ft.id = get_i64(f.at("id"), f.path("id"));
    if (const J* n = f.find("name")) {  // name and dscp: optional for older documents
      ft.name = get_string(*n, f.path("name"));
    }
    if (const J* d = f.find("dscp")) {
      ft.dscp = get_dscp(*d, f.path("dscp"));
    }
    ft.sender = read_sender(f.at("sender"), f.path("sender"));
    ft.receiver = read_receiver(f.at("receiver"), f.path("receiver"));
    f.done();
    t.flows.push_back(ft);
  });
  o.done();
  return t;
}

DirectionInterval read_direction_interval(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"bytes", "bits_per_second", "retransmits", "cwnd_bytes", "flows"});
  DirectionInterval di;
  di.bytes = get_u64(o.at("bytes"), o.path("bytes"));
  di.bits_per_second = get_double(o.at("bits_per_second"), o.path("bits_per_second"));
  di.retransmits = get_u64(o.at("retransmits"), o.path("retransmits"));
  di.cwnd_bytes = get_u64(o.at("cwnd_bytes"), o.path("cwnd_bytes"));
  read_array(o.at("flows"), o.path("flows"), [&](const J& e, const std::string& p) {
    Obj f(e, p);
    f.expect({"id", "bytes", "bits_per_second", "retransmits", "cwnd_bytes", "srtt_ms"});
    FlowInterval fi;
    fi.id = get_i64(f.at("id"), f.path("id"));
    fi.bytes = get_u64(f.at("bytes"), f.path("bytes"));
    fi.bits_per_second = get_double(f.at("bits_per_second"), f.path("bits_per_second"));
    fi.retransmits = get_u64(f.at("retransmits"), f.path("retransmits"));
    fi.cwnd_bytes = get_u64(f.at("cwnd_bytes"), f.path("cwnd_bytes"));
    if (const J* rtt = f.find("srtt_ms")) {
      fi.srtt_ms = get_double(*rtt, f.path("srtt_ms"));
    }
    f.done();
    di.flows.push_back(fi);
  });
  o.done();
  return di;
}

Interval read_interval(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"start_s", "end_s", "directions", "latency_ms"});
  Interval iv;
  iv.start_s = get_double(o.at("start_s"), o.path("start_s"));
  iv.end_s = get_double(o.at("end_s"), o.path("end_s"));
  iv.directions = read_per_direction<DirectionInterval>(o.at("directions"), o.path("directions"),
                                                        read_direction_interval);
  const J& lat = o.at("latency_ms");
  if (!lat.is_object()) {
    fail(o.path("latency_ms"), "expected an object, got " + type_name(lat));
  }
  for (const auto& [name, value] : lat.items()) {
    iv.latency_ms[name] = get_double(value, Obj::join(o.path("latency_ms"), name));
  }
  o.done();
  return iv;
}

std::vector<double> read_doubles(const J& v, const std::string& path) {
  std::vector<double> out;
  read_array(v, path, [&](const J& e, const std::string& p) { out.push_back(get_double(e, p)); });
  return out;
}

std::vector<uint64_t> read_u64s(const J& v, const std::string& path) {
  std::vector<uint64_t> out;
  read_array(v, path, [&](const J& e, const std::string& p) { out.push_back(get_u64(e, p)); });
  return out;
}

QueueSeries read_queue(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"time_s", "qdisc_bytes", "qdisc_packets", "ring_bytes", "ring_packets",
            "bql_limit_bytes", "bql_inflight_bytes", "device_fifo_bytes"});
  QueueSeries q;
  q.time_s = read_doubles(o.at("time_s"), o.path("time_s"));
  const auto column = [&](const char* key, std::vector<uint64_t>& c) {
    if (const J* j = o.find(key)) {
      c = read_u64s(*j, o.path(key));
    }
  };
  column("qdisc_bytes", q.qdisc_bytes);
  column("qdisc_packets", q.qdisc_packets);
  column("ring_bytes", q.ring_bytes);
  column("ring_packets", q.ring_packets);
  column("bql_limit_bytes", q.bql_limit_bytes);
  column("bql_inflight_bytes", q.bql_inflight_bytes);
  column("device_fifo_bytes", q.device_fifo_bytes);
  o.done();
  return q;
}

std::map<std::string, LatencyStats> read_stats_map(const J& v, const std::string& path) {
  if (!v.is_object()) {
    fail(path, "expected an object, got " + type_name(v));
  }
  std::map<std::string, LatencyStats> out;
  for (const auto& [key, value] : v.items()) {
    out[key] = read_stats_object(value, Obj::join(path, key));
  }
  return out;
}

LatencyUnderLoad read_latency_under_load(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"idle_rtt", "loaded_rtt", "idle_one_way", "loaded_one_way", "induced_latency_ms",
            "grade", "rpm", "rpm_foreign_ms", "rpm_self_ms", "fairness", "fairness_all", "per_dscp",
            "per_dscp_flow_srtt", "goodput_bps"});
  LatencyUnderLoad l;
  l.idle_rtt = read_stats_object(o.at("idle_rtt"), o.path("idle_rtt"));
  l.loaded_rtt = read_stats_object(o.at("loaded_rtt"), o.path("loaded_rtt"));
  if (const J* j = o.find("idle_one_way")) {
    l.idle_one_way =
        read_per_direction<LatencyStats>(*j, o.path("idle_one_way"), read_stats_object);
  }
  if (const J* j = o.find("loaded_one_way")) {
    l.loaded_one_way =
        read_per_direction<LatencyStats>(*j, o.path("loaded_one_way"), read_stats_object);
  }
  l.induced_latency_ms = get_double(o.at("induced_latency_ms"), o.path("induced_latency_ms"));
  l.grade = get_string(o.at("grade"), o.path("grade"));
  l.rpm = get_double(o.at("rpm"), o.path("rpm"));
  l.rpm_foreign_ms = get_double(o.at("rpm_foreign_ms"), o.path("rpm_foreign_ms"));
  l.rpm_self_ms = get_optional_double(o.at("rpm_self_ms"), o.path("rpm_self_ms"));
  l.fairness = read_per_direction<double>(o.at("fairness"), o.path("fairness"), get_double);
  l.fairness_all = get_double(o.at("fairness_all"), o.path("fairness_all"));
  l.per_dscp = read_stats_map(o.at("per_dscp"), o.path("per_dscp"));
  l.per_dscp_flow_srtt = read_stats_map(o.at("per_dscp_flow_srtt"), o.path("per_dscp_flow_srtt"));
  l.goodput_bps =
      read_per_direction<double>(o.at("goodput_bps"), o.path("goodput_bps"), get_double);
  o.done();
  return l;
}

ParamValue read_param(const J& v, const std::string& path) {
  if (v.is_boolean()) {
    return v.get<bool>();
  }
  if (v.is_number_integer()) {
    return get_i64(v, path);
  }
  if (v.is_number_float()) {
    return v.get<double>();
  }
  if (v.is_string()) {
    return v.get<std::string>();
  }
  fail(path, "expected a string, boolean or number, got " + type_name(v));
}

Run read_run(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"label", "params", "backend", "seed", "duration_s", "goodput_bps", "retransmits",
            "latency_ms", "transfer", "stages", "comparison", "intervals", "queues", "phases",
            "latency_under_load", "config_toml"});
  Run r;
  r.label = get_string(o.at("label"), o.path("label"));
  const J& params = o.at("params");
  if (!params.is_object()) {
    fail(o.path("params"), "expected an object, got " + type_name(params));
  }
  for (const auto& [key, value] : params.items()) {
    r.params.push_back({key, read_param(value, Obj::join(o.path("params"), key))});
  }
  r.backend = get_string(o.at("backend"), o.path("backend"));
  r.seed = get_u64(o.at("seed"), o.path("seed"));
  r.duration_s = get_double(o.at("duration_s"), o.path("duration_s"));
  r.goodput_bps =
      read_per_direction<double>(o.at("goodput_bps"), o.path("goodput_bps"), get_double);
  r.retransmits = get_u64(o.at("retransmits"), o.path("retransmits"));
  const J& lat = o.at("latency_ms");
  if (!lat.is_object()) {
    fail(o.path("latency_ms"), "expected an object, got " + type_name(lat));
  }
  for (const auto& [name, value] : lat.items()) {
    r.latency_ms[name] = read_probe(value, Obj::join(o.path("latency_ms"), name));
  }
  r.transfer =
      read_per_direction<DirectionTransfer>(o.at("transfer"), o.path("transfer"), read_transfer);
  r.stages = read_per_direction<std::vector<StageTime>>(
      o.at("stages"), o.path("stages"), [](const J& a, const std::string& p) {
        std::vector<StageTime> out;
        read_array(a, p, [&](const J& e, const std::string& ep) {
          Obj s(e, ep);
          s.expect({"stage", "mean_ms", "packets"});
          StageTime st;
          st.stage = get_string(s.at("stage"), s.path("stage"));
          st.mean_ms = get_double(s.at("mean_ms"), s.path("mean_ms"));
          st.packets = get_u64(s.at("packets"), s.path("packets"));
          s.done();
          out.push_back(st);
        });
        return out;
      });
  read_array(o.at("comparison"), o.path("comparison"), [&](const J& e, const std::string& p) {
    Obj c(e, p);
    c.expect({"metric", "published", "simulated", "relative_error", "source"});
    Comparison cmp;
    cmp.metric = get_string(c.at("metric"), c.path("metric"));
    cmp.published = get_double(c.at("published"), c.path("published"));
    cmp.simulated = get_optional_double(c.at("simulated"), c.path("simulated"));
    cmp.relative_error = get_optional_double(c.at("relative_error"), c.path("relative_error"));
    cmp.source = get_string(c.at("source"), c.path("source"));
    c.done();
    r.comparison.push_back(cmp);
  });
  read_array(o.at("intervals"), o.path("intervals"),
             [&](const J& e, const std::string& p) { r.intervals.push_back(read_interval(e, p)); });
  const J& queues = o.at("queues");
  if (!queues.is_object()) {
    fail(o.path("queues"), "expected an object, got " + type_name(queues));
  }
  for (const auto& [host, value] : queues.items()) {
    r.queues[host] = read_queue(value, Obj::join(o.path("queues"), host));
  }
  // phases and latency_under_load arrived with rrul (issue 6): optional for older documents.
  if (const J* phases = o.find("phases")) {
    read_array(*phases, o.path("phases"), [&](const J& e, const std::string& p) {
      Obj ph(e, p);
      ph.expect({"name", "start_s", "end_s"});
      Phase phase;
      phase.name = get_string(ph.at("name"), ph.path("name"));
      phase.start_s = get_double(ph.at("start_s"), ph.path("start_s"));
      phase.end_s = get_double(ph.at("end_s"), ph.path("end_s"));
      ph.done();
      r.phases.push_back(phase);
    });
  }
  if (const J* lul = o.find("latency_under_load")) {
    r.latency_under_load = read_latency_under_load(*lul, o.path("latency_under_load"));
  }
  r.config_toml = get_string(o.at("config_toml"), o.path("config_toml"));
  o.done();
  return r;
}

Meta read_meta(const J& v, const std::string& path) {
  Obj o(v, path);
  o.expect({"nicsim_version", "git_commit", "start_time", "wall_s", "host", "events",
            "events_per_s", "command_line", "runs"});
  Meta m;
  m.nicsim_version = get_string(o.at("nicsim_version"), o.path("nicsim_version"));
  const J& git = o.at("git_commit");
  if (!git.is_null()) {
    m.git_commit = get_string(git, o.path("git_commit"));
  }
  m.start_time = get_string(o.at("start_time"), o.path("start_time"));
  m.wall_s = get_double(o.at("wall_s"), o.path("wall_s"));
  m.host = get_string(o.at("host"), o.path("host"));
  m.events = get_u64(o.at("events"), o.path("events"));
  m.events_per_s = get_double(o.at("events_per_s"), o.path("events_per_s"));
  read_array(o.at("command_line"), o.path("command_line"),
             [&](const J& e, const std::string& p) { m.command_line.push_back(get_string(e, p)); });
  read_array(o.at("runs"), o.path("runs"), [&](const J& e, const std::string& p) {
    Obj r(e, p);
    r.expect({"label", "wall_s", "events", "events_per_s"});
    RunMeta rm;
    rm.label = get_string(r.at("label"), r.path("label"));
    rm.wall_s = get_double(r.at("wall_s"), r.path("wall_s"));
    rm.events = get_u64(r.at("events"), r.path("events"));
    rm.events_per_s = get_double(r.at("events_per_s"), r.path("events_per_s"));
    r.done();
    m.runs.push_back(rm);
  });
  o.done();
  return m;
}

}  // namespace

std::string to_json(const Results& results, const JsonOptions& options) {
  J doc = J::object();
  doc["format"] = kResultsFormat;
  doc["version"] = kResultsVersion;
  if (options.include_meta) {
    doc["meta"] = meta_json(results.meta);
  }
  J runs = J::array();
  for (const Run& r : results.runs) {
    runs.push_back(run_json(r));
  }
  doc["runs"] = std::move(runs);
  std::string out;
  std::string path;
  emit(out, doc, 0, path);
  out += '\n';
  return out;
}

Results results_from_json(std::string_view text) {
  J doc;
  try {
    doc = J::parse(text.begin(), text.end());
  } catch (const J::parse_error& e) {
    throw JsonError(std::string("results JSON: ") + e.what());
  }
  Obj o(doc, "");
  o.expect({"format", "version", "meta", "runs"});
  const std::string format = get_string(o.at("format"), "format");
  if (format != kResultsFormat) {
    fail("format", "expected \"" + std::string(kResultsFormat) + "\", got \"" + format + "\"");
  }
  const int64_t version = get_i64(o.at("version"), "version");
  if (version != kResultsVersion) {
    fail("version", "this nicsim reads version " + std::to_string(kResultsVersion) + ", got " +
                        std::to_string(version));
  }
  Results results;
  if (const J* meta = o.find("meta")) {
    results.meta = read_meta(*meta, "meta");
  }
  read_array(o.at("runs"), "runs",
             [&](const J& e, const std::string& p) { results.runs.push_back(read_run(e, p)); });
  o.done();
  return results;
}

}  // namespace nicsim::report
