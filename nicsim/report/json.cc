#include "nicsim/report/json.h"

#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nicsim/report/json_schema.h"

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
  void expect(const std::vector<std::string_view>& keys) { keys_ = keys; }
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

// --- one field table per object --------------------------------------------------------------
//
// Each object of the document is one table of fields, in output order. A field's entry drives
// the writer (write), the strict reader (read, the expected keys, required or not) and is
// checked against docs/results.schema.json (its `schema` must equal the schema's property and
// its presence the schema's "required"; json_schema_test.cc), so a field is spelled once.

// kRequired: always written; a reader needs it; in the schema's "required".
// kOptional: always written; a reader accepts documents without it (written before it existed).
// kOmitEmpty: written only when it has a value (a non-empty column, a set optional); optional.
enum class Presence { kRequired, kOptional, kOmitEmpty };

template <class T>
struct Codec {
  std::function<J(const T&)> write;
  std::function<T(const J&, const std::string&)> read;
};

template <class S>
struct Field {
  std::vector<std::string> keys;  // one key; the stats keys for statistics flattened in
  Presence presence = Presence::kRequired;
  std::string schema;  // the property's schema as in docs/results.schema.json (JSON text)
  std::function<void(const S&, J&)> write;
  std::function<void(Obj&, S&)> read;
};

template <class S>
using Table = std::vector<Field<S>>;

template <class T>
bool has_no_value(const T& v) {
  if constexpr (requires { v.empty(); }) {
    return v.empty();
  } else {
    return false;
  }
}

// A member written with codec `c`.
template <class S, class T>
Field<S> field(std::string key, T S::*m, Codec<T> c, std::string schema,
               Presence p = Presence::kRequired) {
  Field<S> f{{key}, p, std::move(schema), {}, {}};
  f.write = [key, m, c, p](const S& s, J& o) {
    if (p != Presence::kOmitEmpty || !has_no_value(s.*m)) {
      o[key] = c.write(s.*m);
    }
  };
  f.read = [key, m, c, p](Obj& o, S& s) {
    if (p == Presence::kRequired) {
      s.*m = c.read(o.at(key), o.path(key));
    } else if (const J* j = o.find(key)) {
      s.*m = c.read(*j, o.path(key));
    }
  };
  return f;
}

// An optional member, written only when set.
template <class S, class T>
Field<S> optional_field(std::string key, std::optional<T> S::*m, Codec<T> c, std::string schema) {
  Field<S> f{{key}, Presence::kOmitEmpty, std::move(schema), {}, {}};
  f.write = [key, m, c](const S& s, J& o) {
    if (s.*m) {
      o[key] = c.write(*(s.*m));
    }
  };
  f.read = [key, m, c](Obj& o, S& s) {
    if (const J* j = o.find(key)) {
      s.*m = c.read(*j, o.path(key));
    }
  };
  return f;
}

const std::vector<std::string>& stats_keys() {
  static const std::vector<std::string> kKeys = {"min", "mean", "p50",   "p90", "p99",
                                                 "max", "mdev", "count", "lost"};
  return kKeys;
}

// LatencyStats written into the enclosing object (a probe's round-trip statistics).
template <class S>
Field<S> flattened_stats(LatencyStats S::*m, std::string schema) {
  Field<S> f{stats_keys(), Presence::kRequired, std::move(schema), {}, {}};
  f.write = [m](const S& s, J& o) {
    const J stats = stats_json(s.*m);  // a named object: items() must not outlive it
    for (const auto& [k, v] : stats.items()) {
      o[k] = v;
    }
  };
  f.read = [m](Obj& o, S& s) { s.*m = read_stats(o); };
  return f;
}

template <class S>
J write_object(const Table<S>& table, const S& s) {
  J o = J::object();
  for (const Field<S>& f : table) {
    f.write(s, o);
  }
  return o;
}

template <class S>
S read_object(const Table<S>& table, const J& v, const std::string& path) {
  Obj o(v, path);
  std::vector<std::string_view> keys;
  for (const Field<S>& f : table) {
    keys.insert(keys.end(), f.keys.begin(), f.keys.end());
  }
  o.expect(keys);
  S s;
  for (const Field<S>& f : table) {
    f.read(o, s);
  }
  o.done();
  return s;
}

// --- codecs ----------------------------------------------------------------------------------

const Codec<double> kNumber{[](const double& x) { return J(x); }, get_double};
const Codec<uint64_t> kCount{[](const uint64_t& x) { return J(x); }, get_u64};
const Codec<int64_t> kInteger{[](const int64_t& x) { return J(x); }, get_i64};
const Codec<std::string> kString{[](const std::string& x) { return J(x); }, get_string};
const Codec<bool> kBool{[](const bool& x) { return J(x); },
                        [](const J& v, const std::string& path) {
                          if (!v.is_boolean()) {
                            fail(path, "expected a boolean, got " + type_name(v));
                          }
                          return v.get<bool>();
                        }};
const Codec<uint8_t> kDscp{[](const uint8_t& x) { return J(x); }, get_dscp};
const Codec<std::optional<double>> kNullableNumber{
    [](const std::optional<double>& x) { return x ? J(*x) : J(nullptr); }, get_optional_double};
const Codec<std::optional<std::string>> kNullableString{
    [](const std::optional<std::string>& x) { return x ? J(*x) : J(nullptr); },
    [](const J& v, const std::string& path) -> std::optional<std::string> {
      if (v.is_null()) {
        return std::nullopt;
      }
      return get_string(v, path);
    }};
const Codec<LatencyStats> kStats{stats_json, read_stats_object};

template <class T>
Codec<std::vector<T>> array_of(Codec<T> c) {
  return {[c](const std::vector<T>& xs) {
            J a = J::array();
            for (const T& x : xs) {
              a.push_back(c.write(x));
            }
            return a;
          },
          [c](const J& v, const std::string& path) {
            std::vector<T> out;
            read_array(v, path,
                       [&](const J& e, const std::string& p) { out.push_back(c.read(e, p)); });
            return out;
          }};
}

template <class T>
Codec<PerDirection<T>> per_direction_of(Codec<T> c) {
  return {
      [c](const PerDirection<T>& x) {
        return per_direction([&](Direction d) { return c.write(x[d]); });
      },
      [c](const J& v, const std::string& path) { return read_per_direction<T>(v, path, c.read); }};
}

// A map written as an object (keys sorted: std::map order).
template <class T>
Codec<std::map<std::string, T>> map_of(Codec<T> c) {
  return {[c](const std::map<std::string, T>& m) {
            J o = J::object();
            for (const auto& [k, x] : m) {
              o[k] = c.write(x);
            }
            return o;
          },
          [c](const J& v, const std::string& path) {
            if (!v.is_object()) {
              fail(path, "expected an object, got " + type_name(v));
            }
            std::map<std::string, T> out;
            for (const auto& [k, x] : v.items()) {
              out[k] = c.read(x, Obj::join(path, k));
            }
            return out;
          }};
}

template <class S>
Codec<S> object_of(const Table<S>& (*table)()) {
  return {[table](const S& s) { return write_object(table(), s); },
          [table](const J& v, const std::string& path) { return read_object(table(), v, path); }};
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

// Run params: an object in [vary] order.
const Codec<std::vector<RunParam>> kParams{
    [](const std::vector<RunParam>& ps) {
      J o = J::object();
      for (const RunParam& p : ps) {
        o[p.key] = std::visit([](const auto& v) { return J(v); }, p.value);
      }
      return o;
    },
    [](const J& v, const std::string& path) {
      if (!v.is_object()) {
        fail(path, "expected an object, got " + type_name(v));
      }
      std::vector<RunParam> out;
      for (const auto& [key, value] : v.items()) {
        out.push_back({key, read_param(value, Obj::join(path, key))});
      }
      return out;
    }};

// --- schema spellings ------------------------------------------------------------------------

std::string ref(std::string_view def) {
  return R"({"$ref": "#/$defs/)" + std::string(def) + R"("})";
}
std::string type(std::string_view t) { return R"({"type": )" + std::string(t) + "}"; }
std::string per_direction_schema(const std::string& inner) {
  return R"({"type": "object", "required": ["a->b", "b->a"], "additionalProperties": false,
             "properties": {"a->b": )" +
         inner + R"(, "b->a": )" + inner + "}}";
}
std::string array_schema(const std::string& items) {
  return R"({"type": "array", "items": )" + items + "}";
}
std::string map_schema(const std::string& values) {
  return R"({"type": "object", "additionalProperties": )" + values + "}";
}

// --- the tables --------------------------------------------------------------------------------

using P = Presence;

const Table<ProbeSeries>& series_table() {
  using S = ProbeSeries;
  static const Table<S> t = {
      field("time_s", &S::time_s, array_of(kNumber), array_schema(ref("seconds"))),
      field("rtt_ms", &S::rtt_ms, array_of(kNullableNumber), ref("optional_ms")),
      field("one_way_a_to_b_ms", &S::one_way_a_to_b_ms, array_of(kNullableNumber),
            ref("optional_ms"), P::kOmitEmpty),
      field("one_way_b_to_a_ms", &S::one_way_b_to_a_ms, array_of(kNullableNumber),
            ref("optional_ms"), P::kOmitEmpty)};
  return t;
}

const Table<ProbeLatency>& probe_table() {
  using S = ProbeLatency;
  static const Table<S> t = {
      field("kind", &S::kind, kString, R"({"enum": ["icmp", "udp"]})"),
      flattened_stats(&S::rtt, "#/$defs/stats_fields"),
      optional_field("one_way", &S::one_way, per_direction_of(kStats), ref("direction_stats")),
      // dscp and series arrived with rrul (issue 6); documents written before have neither.
      field("dscp", &S::dscp, kDscp, ref("dscp"), P::kOptional),
      field("series", &S::series, object_of(series_table), ref("probe_series"), P::kOptional),
      // from / to: a network's probes name their hosts (issue 10)
      field("from", &S::from, kString, ref("host_name"), P::kOmitEmpty),
      field("to", &S::to, kString, ref("host_name"), P::kOmitEmpty)};
  return t;
}

const Table<SenderTotals>& sender_table() {
  using S = SenderTotals;
  static const Table<S> t = {
      field("start_s", &S::start_s, kNumber, ref("seconds")),
      field("end_s", &S::end_s, kNumber, ref("seconds")),
      field("bytes", &S::bytes, kCount, ref("count")),
      field("bits_per_second", &S::bits_per_second, kNumber, ref("nonnegative")),
      field("retransmits", &S::retransmits, kCount, ref("count"))};
  return t;
}

const Table<ReceiverTotals>& receiver_table() {
  using S = ReceiverTotals;
  static const Table<S> t = {
      field("start_s", &S::start_s, kNumber, ref("seconds")),
      field("end_s", &S::end_s, kNumber, ref("seconds")),
      field("bytes", &S::bytes, kCount, ref("count")),
      field("bits_per_second", &S::bits_per_second, kNumber, ref("nonnegative"))};
  return t;
}

const Table<FlowEcn>& flow_ecn_table() {
  using S = FlowEcn;
  static const Table<S> t = {
      field("codepoint", &S::codepoint, kString, R"({"enum": ["ect0", "ect1"]})"),
      field("ce_marked", &S::ce_marked, kCount, ref("count")),
      field("ce_echoed", &S::ce_echoed, kCount, ref("count")),
      field("cwnd_reductions", &S::cwnd_reductions, kCount, ref("count"))};
  return t;
}

const Table<FlowTransfer>& flow_transfer_table() {
  using S = FlowTransfer;
  static const Table<S> t = {
      field("id", &S::id, kInteger, type(R"("integer")")),
      // name and dscp: optional for documents written before rrul (issue 6)
      field("name", &S::name, kString, type(R"("string")"), P::kOptional),
      field("dscp", &S::dscp, kDscp, ref("dscp"), P::kOptional),
      // from / to: a network's flows name their hosts (issue 10)
      field("from", &S::from, kString, ref("host_name"), P::kOmitEmpty),
      field("to", &S::to, kString, ref("host_name"), P::kOmitEmpty),
      field("sender", &S::sender, object_of(sender_table), ref("sender")),
      field("receiver", &S::receiver, object_of(receiver_table), ref("receiver")),
      // ecn: flows that negotiated ECN (issue 12)
      optional_field("ecn", &S::ecn, object_of(flow_ecn_table), ref("flow_ecn"))};
  return t;
}

const Table<FloodResult>& flood_table() {
  using S = FloodResult;
  static const Table<S> t = {
      field("direction", &S::direction, kString, R"({"enum": ["a->b", "b->a"]})"),
      field("dscp", &S::dscp, kDscp, ref("dscp")),
      field("rate_bps", &S::rate_bps, kNumber, ref("nonnegative")),
      field("size", &S::size, kInteger, ref("count")),
      field("sent", &S::sent, kCount, ref("count")),
      field("received", &S::received, kCount, ref("count")),
      field("lost", &S::lost, kCount, ref("count")),
      field("loss_pct", &S::loss_pct, kNumber,
            R"({"type": "number", "minimum": 0, "maximum": 100})"),
      field("received_bps", &S::received_bps, kNumber, ref("nonnegative")),
      field("one_way", &S::one_way, kStats, ref("stats")),
      field("from", &S::from, kString, ref("host_name"), P::kOmitEmpty),
      field("to", &S::to, kString, ref("host_name"), P::kOmitEmpty)};
  return t;
}

const Table<VoipResult>& voip_table() {
  using S = VoipResult;
  static const Table<S> t = {
      field("direction", &S::direction, kString, R"({"enum": ["a->b", "b->a"]})"),
      field("dscp", &S::dscp, kDscp, ref("dscp")),
      field("codec", &S::codec, kString, type(R"("string")")),
      field("interval_ms", &S::interval_ms, kNumber, ref("nonnegative")),
      field("size", &S::size, kInteger, ref("count")),
      field("sent", &S::sent, kCount, ref("count")),
      field("received", &S::received, kCount, ref("count")),
      field("lost", &S::lost, kCount, ref("count")),
      field("loss_pct", &S::loss_pct, kNumber,
            R"({"type": "number", "minimum": 0, "maximum": 100})"),
      field("one_way", &S::one_way, kStats, ref("stats")),
      field("ipdv_mean_abs_ms", &S::ipdv_mean_abs_ms, kNumber, ref("nonnegative")),
      field("ipdv_p99_ms", &S::ipdv_p99_ms, kNumber, ref("nonnegative")),
      field("loss_bursts", &S::loss_bursts, kCount, ref("count")),
      field("longest_burst", &S::longest_burst, kCount, ref("count")),
      field("burst_ratio", &S::burst_ratio, kNumber, ref("nonnegative")),
      field("mouth_to_ear_ms", &S::mouth_to_ear_ms, kNumber, type(R"("number")")),
      field("r_factor", &S::r_factor, kNumber, type(R"("number")")),
      field("mos", &S::mos, kNumber, R"({"type": "number", "minimum": 1, "maximum": 4.5})"),
      field("from", &S::from, kString, ref("host_name"), P::kOmitEmpty),
      field("to", &S::to, kString, ref("host_name"), P::kOmitEmpty)};
  return t;
}

const Table<TransfersResult>& transfers_table() {
  using S = TransfersResult;
  static const Table<S> t = {
      field("direction", &S::direction, kString, R"({"enum": ["a->b", "b->a"]})"),
      field("dscp", &S::dscp, kDscp, ref("dscp")),
      field("started", &S::started, kCount, ref("count")),
      field("completed", &S::completed, kCount, ref("count")),
      field("bytes", &S::bytes, kCount, ref("count")),
      field("fct_ms", &S::fct_ms, kStats, ref("stats")),
      field("buckets", &S::buckets, map_of(kStats), map_schema(ref("stats"))),
      field("from", &S::from, kString, ref("host_name"), P::kOmitEmpty),
      field("to", &S::to, kString, ref("host_name"), P::kOmitEmpty)};
  return t;
}

const Table<PairTransfer>& pair_transfer_table() {
  using S = PairTransfer;
  static const Table<S> t = {
      field("sender", &S::sender, object_of(sender_table), ref("sender")),
      field("receiver", &S::receiver, object_of(receiver_table), ref("receiver"))};
  return t;
}

const Table<DirectionTransfer>& transfer_table() {
  using S = DirectionTransfer;
  static const Table<S> t = {
      field("sender", &S::sender, object_of(sender_table), ref("sender")),
      field("receiver", &S::receiver, object_of(receiver_table), ref("receiver")),
      field("flows", &S::flows, array_of(object_of(flow_transfer_table)), R"({"type": "array"})")};
  return t;
}

const Table<FlowInterval>& flow_interval_table() {
  using S = FlowInterval;
  static const Table<S> t = {
      field("id", &S::id, kInteger, type(R"("integer")")),
      field("bytes", &S::bytes, kCount, ref("count")),
      field("bits_per_second", &S::bits_per_second, kNumber, ref("nonnegative")),
      field("retransmits", &S::retransmits, kCount, ref("count")),
      field("cwnd_bytes", &S::cwnd_bytes, kCount, ref("count")),
      optional_field("srtt_ms", &S::srtt_ms, kNumber, ref("nonnegative"))};
  return t;
}

const Table<DirectionInterval>& direction_interval_table() {
  using S = DirectionInterval;
  static const Table<S> t = {
      field("bytes", &S::bytes, kCount, ref("count")),
      field("bits_per_second", &S::bits_per_second, kNumber, ref("nonnegative")),
      field("retransmits", &S::retransmits, kCount, ref("count")),
      field("cwnd_bytes", &S::cwnd_bytes, kCount, ref("count")),
      field("flows", &S::flows, array_of(object_of(flow_interval_table)),
            array_schema(ref("interval_flow")))};
  return t;
}

const Table<FloodInterval>& flood_interval_table() {
  using S = FloodInterval;
  static const Table<S> t = {
      field("bits_per_second", &S::bits_per_second, kNumber, ref("nonnegative")),
      field("sent", &S::sent, kCount, ref("count")),
      field("received", &S::received, kCount, ref("count")),
      field("lost", &S::lost, kCount, ref("count")),
      optional_field("one_way_ms", &S::one_way_ms, kNumber, ref("nonnegative")),
      optional_field("ipdv_ms", &S::ipdv_ms, kNumber, ref("nonnegative"))};
  return t;
}

const Table<Interval>& interval_table() {
  using S = Interval;
  static const Table<S> t = {
      field("start_s", &S::start_s, kNumber, ref("seconds")),
      field("end_s", &S::end_s, kNumber, ref("seconds")),
      field("directions", &S::directions, per_direction_of(object_of(direction_interval_table)),
            per_direction_schema(ref("direction_interval"))),
      field("latency_ms", &S::latency_ms, map_of(kNumber), map_schema(type(R"("number")"))),
      field("floods", &S::floods, map_of(object_of(flood_interval_table)),
            map_schema(ref("interval_flood")), P::kOmitEmpty)};
  return t;
}

const Table<QueueSeries>& queue_table() {
  using S = QueueSeries;
  const auto column = [](std::string key, std::vector<uint64_t> S::*m) {
    return field(std::move(key), m, array_of(kCount), ref("counts"), P::kOmitEmpty);
  };
  static const Table<S> t = {
      field("time_s", &S::time_s, array_of(kNumber), array_schema(ref("seconds"))),
      column("qdisc_bytes", &S::qdisc_bytes),
      column("qdisc_packets", &S::qdisc_packets),
      column("ring_bytes", &S::ring_bytes),
      column("ring_packets", &S::ring_packets),
      column("bql_limit_bytes", &S::bql_limit_bytes),
      column("bql_inflight_bytes", &S::bql_inflight_bytes),
      column("device_fifo_bytes", &S::device_fifo_bytes)};
  return t;
}

const Table<StageTime>& stage_table() {
  using S = StageTime;
  static const Table<S> t = {
      field("stage", &S::stage, kString, R"({"type": "string", "pattern": "^[a-z][a-z0-9_]*$"})"),
      field("mean_ms", &S::mean_ms, kNumber, ref("nonnegative")),
      field("packets", &S::packets, kCount, ref("count"))};
  return t;
}

const Table<Comparison>& comparison_table() {
  using S = Comparison;
  static const Table<S> t = {
      field("metric", &S::metric, kString, R"({"type": "string", "pattern": "^[a-z0-9_]+$"})"),
      field("published", &S::published, kNumber, type(R"("number")")),
      field("simulated", &S::simulated, kNullableNumber, type(R"(["number", "null"])")),
      field("relative_error", &S::relative_error, kNullableNumber, type(R"(["number", "null"])")),
      field("source", &S::source, kString, type(R"("string")"))};
  return t;
}

const Table<Phase>& phase_table() {
  using S = Phase;
  static const Table<S> t = {
      field("name", &S::name, kString, R"({"type": "string", "pattern": "^[a-z][a-z0-9_]*$"})"),
      field("start_s", &S::start_s, kNumber, ref("seconds")),
      field("end_s", &S::end_s, kNumber, ref("seconds"))};
  return t;
}

const Table<LatencyUnderLoad>& latency_under_load_table() {
  using S = LatencyUnderLoad;
  static const Table<S> t = {
      field("idle_rtt", &S::idle_rtt, kStats, ref("stats")),
      field("loaded_rtt", &S::loaded_rtt, kStats, ref("stats")),
      optional_field("idle_one_way", &S::idle_one_way, per_direction_of(kStats),
                     ref("direction_stats")),
      optional_field("loaded_one_way", &S::loaded_one_way, per_direction_of(kStats),
                     ref("direction_stats")),
      field("induced_latency_ms", &S::induced_latency_ms, kNumber, type(R"("number")")),
      field("grade", &S::grade, kString, R"({"enum": ["A+", "A", "B", "C", "D", "F"]})"),
      field("rpm", &S::rpm, kNumber, ref("nonnegative")),
      field("rpm_foreign_ms", &S::rpm_foreign_ms, kNumber, ref("nonnegative")),
      field("rpm_self_ms", &S::rpm_self_ms, kNullableNumber,
            R"({"type": ["number", "null"], "minimum": 0})"),
      field("fairness", &S::fairness, per_direction_of(kNumber),
            per_direction_schema(ref("fairness"))),
      field("fairness_all", &S::fairness_all, kNumber, ref("fairness")),
      field("per_dscp", &S::per_dscp, map_of(kStats), map_schema(ref("stats"))),
      field("per_dscp_flow_srtt", &S::per_dscp_flow_srtt, map_of(kStats), map_schema(ref("stats"))),
      field("goodput_bps", &S::goodput_bps, per_direction_of(kNumber),
            per_direction_schema(ref("nonnegative")))};
  return t;
}

const Table<InterfaceResult>& interface_table() {
  using S = InterfaceResult;
  static const Table<S> t = {field("node", &S::node, kString, type(R"("string")")),
                             field("tx_packets", &S::tx_packets, kCount, ref("count")),
                             field("tx_bytes", &S::tx_bytes, kCount, ref("count")),
                             field("rx_packets", &S::rx_packets, kCount, ref("count")),
                             field("rx_bytes", &S::rx_bytes, kCount, ref("count")),
                             field("qdisc_drops", &S::qdisc_drops, kCount, ref("count")),
                             field("rx_drops", &S::rx_drops, kCount, ref("count")),
                             field("forwarded_out", &S::forwarded_out, kCount, ref("count")),
                             field("qdisc", &S::qdisc, map_of(kCount), map_schema(ref("count")))};
  return t;
}

const Table<NodeResult>& node_table() {
  using S = NodeResult;
  static const Table<S> t = {
      field("router", &S::router, kBool, type(R"("boolean")")),
      field("cpu_busy_s", &S::cpu_busy_s, kNumber, ref("seconds")),
      field("cpu_utilization", &S::cpu_utilization, kNumber, ref("nonnegative")),
      field("forwarded", &S::forwarded, kCount, ref("count")),
      field("no_route", &S::no_route, kCount, ref("count")),
      field("ttl_expired", &S::ttl_expired, kCount, ref("count"))};
  return t;
}

const Table<RxBatching>& rx_batching_table() {
  using S = RxBatching;
  static const Table<S> t = {
      field("gro", &S::gro, kBool, type(R"("boolean")")),
      field("frames", &S::frames, kCount, ref("count")),
      field("packets", &S::packets, kCount, ref("count")),
      field("frames_per_packet", &S::frames_per_packet, kNumber, ref("nonnegative")),
      field("largest", &S::largest, kCount, ref("count")),
      field("rx_cpu_s", &S::rx_cpu_s, kNumber, ref("seconds")),
      field("rx_cpu_ns_per_byte", &S::rx_cpu_ns_per_byte, kNumber, ref("nonnegative")),
      field("cpu_busy_s", &S::cpu_busy_s, kNumber, ref("seconds")),
      // the knee (issue 17 item 5): optional, absent from documents written before
      field("adaptive_rx", &S::adaptive_rx, kBool, type(R"("boolean")"), P::kOptional),
      field("rx_irqs", &S::rx_irqs, kCount, ref("count"), P::kOptional),
      field("tx_irqs", &S::tx_irqs, kCount, ref("count"), P::kOptional),
      field("polls", &S::polls, kCount, ref("count"), P::kOptional),
      field("irqs_per_s", &S::irqs_per_s, kNumber, ref("nonnegative"), P::kOptional),
      field("cpu_ns_per_frame", &S::cpu_ns_per_frame, kNumber, ref("nonnegative"), P::kOptional),
      field("rx_latency_ms", &S::rx_latency_ms, kStats, ref("stats"), P::kOptional),
      field("napi_timer_polls", &S::napi_timer_polls, kCount, ref("count"), P::kOptional),
      field("busy_poll_sessions", &S::busy_poll_sessions, kCount, ref("count"), P::kOptional),
      field("busy_spin_s", &S::busy_spin_s, kNumber, ref("seconds"), P::kOptional),
      field("queue_frames", &S::queue_frames, array_of(kCount), array_schema(ref("count")),
            Presence::kOmitEmpty),
      field("queue_cpu_busy_s", &S::queue_cpu_busy_s, array_of(kNumber),
            array_schema(ref("seconds")), Presence::kOmitEmpty)};
  return t;
}

const Table<Run>& run_table() {
  using S = Run;
  static const Table<S> t = {
      field("label", &S::label, kString, type(R"("string")")),
      field(
          "params", &S::params, kParams,
          R"({"description": "Each varied key, as written in the scenario's [vary] table, to its value in this run, in [vary] order.",
                "type": "object", "additionalProperties": {"type": ["string", "boolean", "number"]}})"),
      field("backend", &S::backend, kString, R"({"enum": ["sim", "emu", "live"]})"),
      field("seed", &S::seed, kCount, ref("count")),
      field("duration_s", &S::duration_s, kNumber, ref("seconds")),
      field("goodput_bps", &S::goodput_bps, per_direction_of(kNumber),
            per_direction_schema(ref("nonnegative"))),
      field("retransmits", &S::retransmits, kCount, ref("count")),
      field("latency_ms", &S::latency_ms, map_of(object_of(probe_table)), map_schema(ref("probe"))),
      field("transfer", &S::transfer, per_direction_of(object_of(transfer_table)),
            per_direction_schema(ref("direction_transfer"))),
      // pairs and fairness: a network's runs (issue 10); absent in the two-host form
      field(
          "pairs", &S::pairs, map_of(object_of(pair_transfer_table)),
          R"({"description": "A network's transfer totals per host pair, keyed \"from->to\" (host names).",
                "type": "object", "propertyNames": {"pattern": "^.+->.+$"},
                "additionalProperties": {"$ref": "#/$defs/pair_transfer"}})",
          P::kOmitEmpty),
      optional_field("fairness", &S::fairness, kNumber, ref("fairness")),
      field("stages", &S::stages, per_direction_of(array_of(object_of(stage_table))),
            per_direction_schema(ref("stage_list"))),
      field("comparison", &S::comparison, array_of(object_of(comparison_table)),
            array_schema(ref("comparison"))),
      field("intervals", &S::intervals, array_of(object_of(interval_table)),
            array_schema(ref("interval"))),
      field(
          "queues", &S::queues, map_of(object_of(queue_table)),
          R"({"description": "Two-host form: a, b (the first / second host); networks: per interface, the host's name or router.iface.",
                "type": "object", "additionalProperties": {"$ref": "#/$defs/queue_series"}})"),
      // phases and latency_under_load arrived with rrul (issue 6): optional for older documents
      field(
          "phases", &S::phases, array_of(object_of(phase_table)),
          R"({"description": "Phases of the run in time order (rrul: idle_before, load, idle_after); [] without phases. Optional: documents written before issue 6 lack it.",
                "type": "array", "items": {"$ref": "#/$defs/phase"}})",
          P::kOptional),
      optional_field("latency_under_load", &S::latency_under_load,
                     object_of(latency_under_load_table), ref("latency_under_load")),
      field("config_toml", &S::config_toml, kString, type(R"("string")")),
      // networks only (issue 10): absent in the two-host form
      field("interfaces", &S::interfaces, map_of(object_of(interface_table)),
            map_schema(ref("interface")), P::kOmitEmpty),
      field("nodes", &S::nodes, map_of(object_of(node_table)), map_schema(ref("node")),
            P::kOmitEmpty),
      // receive batching (issue 17): hosts with GRO, or every host of a run varying `gro`
      field("rx_batching", &S::rx_batching, map_of(object_of(rx_batching_table)),
            map_schema(ref("rx_batching")), P::kOmitEmpty),
      // campaigns with repetitions (issue 14): absent otherwise
      optional_field("repetition", &S::repetition, kCount, ref("count")),
      // [[traffic.udp_flood]] (issue 12): absent without floods
      field("udp_flood", &S::udp_flood, map_of(object_of(flood_table)),
            map_schema(ref("udp_flood")), P::kOmitEmpty),
      field("voip", &S::voip, map_of(object_of(voip_table)), map_schema(ref("voip")),
            P::kOmitEmpty),
      field("transfers", &S::transfers, map_of(object_of(transfers_table)),
            map_schema(ref("transfers")), P::kOmitEmpty),
      field("flent_test", &S::flent_test, kString, type(R"("string")"), P::kOmitEmpty)};
  return t;
}

const Table<ConfidenceInterval>& confidence_interval_table() {
  using S = ConfidenceInterval;
  static const Table<S> t = {
      field("low", &S::low, kNumber, type(R"("number")")),
      field("high", &S::high, kNumber, type(R"("number")")),
      field("half_width", &S::half_width, kNumber, ref("nonnegative")),
      field("level", &S::level, kNumber, R"({"type": "number", "minimum": 0, "maximum": 1})"),
      field("method", &S::method, kString, R"({"enum": ["student-t", "order-statistic"]})")};
  return t;
}

const Table<MetricStatistics>& metric_statistics_table() {
  using S = MetricStatistics;
  static const Table<S> t = {field("unit", &S::unit, kString, type(R"("string")")),
                             field("mean", &S::mean, kNumber, type(R"("number")")),
                             field("stddev", &S::stddev, kNumber, ref("nonnegative")),
                             field("median", &S::median, kNumber, type(R"("number")")),
                             field("min", &S::min, kNumber, type(R"("number")")),
                             field("max", &S::max, kNumber, type(R"("number")")),
                             optional_field("ci", &S::ci, object_of(confidence_interval_table),
                                            ref("confidence_interval"))};
  return t;
}

const Table<RunStatistics>& run_statistics_table() {
  using S = RunStatistics;
  static const Table<S> t = {
      field("label", &S::label, kString, type(R"("string")")),
      field(
          "params", &S::params, kParams,
          R"({"type": "object", "additionalProperties": {"type": ["string", "boolean", "number"]}})"),
      field("repetitions", &S::repetitions, kCount, ref("count")),
      field("seeds", &S::seeds, array_of(kCount), array_schema(ref("count"))),
      field("metrics", &S::metrics, map_of(object_of(metric_statistics_table)),
            map_schema(ref("metric_statistics")))};
  return t;
}

const Table<RunMeta>& run_meta_table() {
  using S = RunMeta;
  static const Table<S> t = {field("label", &S::label, kString, type(R"("string")")),
                             field("wall_s", &S::wall_s, kNumber, ref("seconds")),
                             field("events", &S::events, kCount, ref("count")),
                             field("events_per_s", &S::events_per_s, kNumber, ref("nonnegative"))};
  return t;
}

const Table<Meta::Shard>& shard_table() {
  using S = Meta::Shard;
  static const Table<S> t = {
      field("index", &S::index, kCount, R"({"type": "integer", "minimum": 1})"),
      field("count", &S::count, kCount, R"({"type": "integer", "minimum": 1})"),
      field("total_runs", &S::total_runs, kCount, ref("count")),
      field("run_indexes", &S::run_indexes, array_of(kCount), array_schema(ref("count")))};
  return t;
}

const Table<Meta>& meta_table() {
  using S = Meta;
  static const Table<S> t = {
      field("nicsim_version", &S::nicsim_version, kString, R"({"type": "string", "minLength": 1})"),
      field("git_commit", &S::git_commit, kNullableString, type(R"(["string", "null"])")),
      field("start_time", &S::start_time, kString,
            R"({"type": "string", "format": "date-time",
                "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$"})"),
      field("wall_s", &S::wall_s, kNumber, ref("seconds")),
      field("host", &S::host, kString, type(R"("string")")),
      field("events", &S::events, kCount, ref("count")),
      field("events_per_s", &S::events_per_s, kNumber, ref("nonnegative")),
      field("command_line", &S::command_line, array_of(kString), array_schema(type(R"("string")"))),
      field("runs", &S::runs, array_of(object_of(run_meta_table)), R"({"type": "array"})"),
      // a part written by run --shard K/N (issue 14): absent otherwise
      optional_field("shard", &S::shard, object_of(shard_table), ref("shard"))};
  return t;
}

template <class S>
JsonObjectSpec spec(std::string pointer, const Table<S>& table) {
  JsonObjectSpec out{std::move(pointer), {}};
  for (const Field<S>& f : table) {
    out.fields.push_back({f.keys, f.presence == Presence::kRequired, f.schema});
  }
  return out;
}

}  // namespace

std::vector<JsonObjectSpec> results_json_objects() {
  return {spec("/$defs/meta", meta_table()),
          spec("/$defs/meta/properties/runs/items", run_meta_table()),
          spec("/$defs/run", run_table()),
          spec("/$defs/phase", phase_table()),
          spec("/$defs/latency_under_load", latency_under_load_table()),
          spec("/$defs/probe", probe_table()),
          spec("/$defs/probe_series", series_table()),
          spec("/$defs/sender", sender_table()),
          spec("/$defs/receiver", receiver_table()),
          spec("/$defs/direction_transfer", transfer_table()),
          spec("/$defs/direction_transfer/properties/flows/items", flow_transfer_table()),
          spec("/$defs/flow_ecn", flow_ecn_table()),
          spec("/$defs/udp_flood", flood_table()),
          spec("/$defs/voip", voip_table()),
          spec("/$defs/transfers", transfers_table()),
          spec("/$defs/pair_transfer", pair_transfer_table()),
          spec("/$defs/stage_list/items", stage_table()),
          spec("/$defs/comparison", comparison_table()),
          spec("/$defs/interval_flow", flow_interval_table()),
          spec("/$defs/interval_flood", flood_interval_table()),
          spec("/$defs/direction_interval", direction_interval_table()),
          spec("/$defs/interval", interval_table()),
          spec("/$defs/queue_series", queue_table()),
          spec("/$defs/interface", interface_table()),
          spec("/$defs/node", node_table()),
          spec("/$defs/rx_batching", rx_batching_table()),
          spec("/$defs/shard", shard_table()),
          spec("/$defs/run_statistics", run_statistics_table()),
          spec("/$defs/metric_statistics", metric_statistics_table()),
          spec("/$defs/confidence_interval", confidence_interval_table())};
}

// The document is written in three parts so that a campaign can stream its runs (json.h):
// head (format, version, meta, `"runs": [`), one element per run, tail. to_json is the same
// three parts, so streamed and whole documents are byte-identical.
std::string json_head(const Meta* meta) {
  std::string out = "{\n  \"format\": " + J(kResultsFormat).dump() +
                    ",\n  \"version\": " + J(kResultsVersion).dump();
  if (meta != nullptr) {
    std::string path = ".meta";
    out += ",\n  \"meta\": ";
    emit(out, write_object(meta_table(), *meta), 2, path);
  }
  return out + ",\n  \"runs\": [";
}

std::string json_run_element(const Run& run, size_t index) {
  std::string out = index == 0 ? "\n    " : ",\n    ";
  std::string path = ".runs[" + std::to_string(index) + "]";
  emit(out, write_object(run_table(), run), 4, path);
  return out;
}

std::string json_tail(size_t runs, const std::vector<RunStatistics>& statistics) {
  std::string out = runs == 0 ? "]" : "\n  ]";
  if (!statistics.empty()) {
    std::string path = ".statistics";
    out += ",\n  \"statistics\": ";
    emit(out, array_of(object_of(run_statistics_table)).write(statistics), 2, path);
  }
  return out + "\n}\n";
}

std::string to_json(const Results& results, const JsonOptions& options) {
  std::string out = json_head(options.include_meta ? &results.meta : nullptr);
  for (size_t i = 0; i < results.runs.size(); ++i) {
    out += json_run_element(results.runs[i], i);
  }
  return out + json_tail(results.runs.size(), results.statistics);
}

Results results_from_json(std::string_view text) {
  J doc;
  try {
    doc = J::parse(text.begin(), text.end());
  } catch (const J::parse_error& e) {
    throw JsonError(std::string("results JSON: ") + e.what());
  }
  Obj o(doc, "");
  o.expect({"format", "version", "meta", "runs", "statistics"});
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
    results.meta = read_object(meta_table(), *meta, "meta");
  }
  results.runs = array_of(object_of(run_table)).read(o.at("runs"), "runs");
  if (const J* statistics = o.find("statistics")) {
    results.statistics = array_of(object_of(run_statistics_table)).read(*statistics, "statistics");
  }
  o.done();
  return results;
}

}  // namespace nicsim::report
