// flent data-file export (export_flent.h). Format learnt from flent 2.1's own code (Debian
// flent 2.1.1): flent/resultset.py (version 4 layout, metadata keys, time format
// "%Y-%m-%dT%H:%M:%S.%fZ", raw_values "t" in Unix seconds), flent/runners.py (the raw value
// keys of the netperf_demo runner {"t","val","dur"} and of the irtt runner {"t","val","seq",
// "owd_up","owd_down"} or {"t","seq","lost","lost_dir"}; SERIES_META "MEAN_VALUE"), and
// flent/tests/rrul.conf, rrul_be_nflows.conf (series names, TEST_PARAMETERS).

#include "nicsim/report/export_flent.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace nicsim::report {

namespace {

using Json = nlohmann::json;  // sorted keys, as flent writes (json.dumps(sort_keys=True))

constexpr double kMbit = 1e6;

// --- time ------------------------------------------------------------------------------------

// "YYYY-MM-DDThh:mm:ss[.fff]Z" -> Unix seconds; 0 (the epoch) when unparsable or empty.
double unix_seconds(const std::string& iso) {
  std::tm tm{};
  int year = 0;
  int mon = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &year, &mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6) {
    return 0;
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  const time_t t = timegm(&tm);
  return t < 0 ? 0 : static_cast<double>(t);
}

// flent's serialised time (flent/util.py format_date(utc=True)).
std::string flent_time(double unix_s) {
  const time_t t = static_cast<time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000000Z", &tm);
  return buf;
}

// --- series names ----------------------------------------------------------------------------

std::string flow_name(const FlowTransfer& f) { return f.name; }
int probe_dscp(const ProbeLatency& p) { return p.dscp; }

const std::set<std::string>& rrul_flow_names() {
  static const std::set<std::string> names = {
      "TCP upload BE",   "TCP upload BK",   "TCP upload CS5",   "TCP upload EF",
      "TCP download BE", "TCP download BK", "TCP download CS5", "TCP download EF"};
  return names;
}

// rrul's latency series for a probe, or "" if it has none.
std::string rrul_probe_name(const ProbeLatency& p) {
  if (p.kind == "icmp") {
    return "Ping (ms) ICMP";
  }
  switch (probe_dscp(p)) {
    case 0:
      return "Ping (ms) UDP BE";
    case 8:
      return "Ping (ms) UDP BK";
    case 46:
      return "Ping (ms) UDP EF";
    default:
      return "";
  }
}

struct FlowRef {
  Direction dir;
  const FlowTransfer* flow;
  std::string series;
};
struct ProbeRef {
  std::string probe;  // nicsim's probe name
  const ProbeLatency* latency;
  std::string series;
};
struct Naming {
  std::string test;
  std::vector<FlowRef> flows;
  std::vector<ProbeRef> probes;
};

std::optional<Naming> rrul_naming(const Run& run) {
  Naming n{"rrul", {}, {}};
  std::set<std::string> used;
  for (Direction d : kDirections) {
    for (const FlowTransfer& f : run.transfer[d].flows) {
      const std::string name = flow_name(f);
      if (rrul_flow_names().count(name) == 0 || !used.insert(name).second) {
        return std::nullopt;
      }
      n.flows.push_back({d, &f, name});
    }
  }
  for (const auto& [name, p] : run.latency_ms) {
    const std::string s = rrul_probe_name(p);
    if (s.empty() || !used.insert(s).second) {
      return std::nullopt;
    }
    n.probes.push_back({name, &p, s});
  }
  if (n.flows.empty()) {
    return std::nullopt;
  }
  return n;
}

// flent/tests/rrul_be_nflows.conf: "TCP upload BE::k" (k = 1..upload_streams), "TCP download
// BE::k", "Ping (ms) ICMP", "Ping (ms) UDP BE". Host a is flent's client: a->b is "upload".
// Probes beyond one ICMP and one UDP probe keep their nicsim name: "Ping (ms) <name>".
Naming nflows_naming(const Run& run) {
  Naming n{"rrul_be_nflows", {}, {}};
  for (Direction d : kDirections) {
    const std::string prefix = d == Direction::kAtoB ? "TCP upload BE::" : "TCP download BE::";
    size_t k = 0;
    for (const FlowTransfer& f : run.transfer[d].flows) {
      n.flows.push_back({d, &f, prefix + std::to_string(++k)});
    }
  }
  bool icmp = false;
  bool udp = false;
  for (const auto& [name, p] : run.latency_ms) {
    std::string s = "Ping (ms) " + name;
    if (p.kind == "icmp" && !icmp) {
      s = "Ping (ms) ICMP";
      icmp = true;
    } else if (p.kind == "udp" && !udp) {
      s = "Ping (ms) UDP BE";
      udp = true;
    }
    n.probes.push_back({name, &p, s});
  }
  return n;
}

// A run of one of flent's tests (Run::flent_test, config/flent_tests.h): the flows carry
// flent's series names; the probes are named "ping" (-> "Ping (ms) ICMP") and "udp_<class>"
// (-> "Ping (ms) UDP <CLASS>", e.g. udp_cs1 -> "Ping (ms) UDP CS1", udp_be2 -> "UDP BE2").
Naming flent_test_naming(const Run& run) {
  Naming n{run.flent_test, {}, {}};
  for (Direction d : kDirections) {
    for (const FlowTransfer& f : run.transfer[d].flows) {
      n.flows.push_back({d, &f, f.name});
    }
  }
  for (const auto& [name, p] : run.latency_ms) {
    std::string s = "Ping (ms) " + name;
    if (name.rfind("Ping (ms)", 0) == 0) {
      s = name;  // already flent's series name (rrul_var, rtt_fair)
    } else if (p.kind == "icmp" && name == "ping") {
      s = "Ping (ms) ICMP";
    } else if (p.kind == "udp" && name.rfind("udp_", 0) == 0) {
      std::string cls = name.substr(4);
      for (char& c : cls) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
      s = "Ping (ms) UDP " + cls;
    }
    n.probes.push_back({name, &p, s});
  }
  return n;
}

Naming naming(const Run& run) {
  if (!run.flent_test.empty()) {
    return flent_test_naming(run);
  }
  if (std::optional<Naming> n = rrul_naming(run)) {
    return *n;
  }
  return nflows_naming(run);
}

// --- values ----------------------------------------------------------------------------------

Json number_or_null(std::optional<double> v) {
  return v && std::isfinite(*v) ? Json(*v) : Json(nullptr);
}

// The flow's rate (bit/s) in interval iv, or nullopt when the interval lies outside the flow's
// life (flent has no netperf sample there either) or the back-end kept no per-flow sample.
std::optional<double> flow_rate(const Run& run, const FlowRef& ref, const Interval& iv) {
  const FlowTransfer& f = *ref.flow;
  const double life_end = std::max(f.sender.end_s, f.receiver.end_s);
  const double life_start = std::min(f.sender.start_s, f.receiver.start_s);
  if (iv.end_s <= life_start || iv.start_s >= life_end) {
    return std::nullopt;
  }
  const DirectionInterval& di = iv.directions[ref.dir];
  for (const FlowInterval& fi : di.flows) {
    if (fi.id == f.id) {
      return fi.bits_per_second;
    }
  }
  if (di.flows.empty() && run.transfer[ref.dir].flows.size() == 1) {
    return di.bits_per_second;  // one flow: the direction's sum is the flow
  }
  return std::nullopt;
}

double phase_length(const Run& run, const std::string& name) {
  for (const Phase& p : run.phases) {
    if (p.name == name) {
      return p.end_s - p.start_s;
    }
  }
  return 0;
}

// Every sample of a probe as flent's irtt runner stores it (flent/runners.py IrttRunner):
// received {"t": receive time, "val": RTT ms, "seq", "owd_up", "owd_down"}, lost {"t": send
// time, "seq", "lost": true, "lost_dir": "up" | "down" | null}. Host a is the client, so "up"
// is a->b. ICMP samples have the same keys without the one-way ones.
Json probe_raw_values(const ProbeSeries& s, double t0) {
  Json out = Json::array();
  const auto at = [](const std::vector<std::optional<double>>& c,
                     size_t i) -> std::optional<double> {
    return i < c.size() ? c[i] : std::nullopt;
  };
  for (size_t i = 0; i < s.time_s.size(); ++i) {
    Json dp = Json::object();
    dp["seq"] = i;
    if (const std::optional<double> rtt = at(s.rtt_ms, i)) {
      dp["t"] = t0 + s.time_s[i] + *rtt / 1000.0;
      dp["val"] = *rtt;
      if (const auto up = at(s.one_way_a_to_b_ms, i)) {
        dp["owd_up"] = *up;
      }
      if (const auto down = at(s.one_way_b_to_a_ms, i)) {
        dp["owd_down"] = *down;
      }
    } else {
      dp["t"] = t0 + s.time_s[i];
      dp["lost"] = true;
      Json dir = nullptr;
      if (!s.one_way_a_to_b_ms.empty()) {
        dir = at(s.one_way_a_to_b_ms, i) ? "down" : "up";
      }
      dp["lost_dir"] = dir;
    }
    out.push_back(std::move(dp));
  }
  return out;
}

// One column per interval of a flood's FloodInterval value (null where it has none), with the
// raw samples flent's runners would have stored ({"t", "val"}).
void add_flood_column(const Run& run, const std::string& flood, const std::string& series,
                      const std::function<std::optional<double>(const FloodInterval&)>& value,
                      double t0, Json& res, Json& raw) {
  Json col = Json::array();
  Json raws = Json::array();
  for (const Interval& iv : run.intervals) {
    const auto it = iv.floods.find(flood);
    const std::optional<double> v = it == iv.floods.end() ? std::nullopt : value(it->second);
    col.push_back(number_or_null(v));
    if (v && std::isfinite(*v)) {
      raws.push_back(Json{{"t", t0 + iv.end_s}, {"val", *v}});
    }
  }
  res[series] = std::move(col);
  raw[series] = std::move(raws);
}

// A flent test's floods: udp_flood.conf's 'UDP upload' (iperf's receiver throughput, Mbits/s)
// and voip.inc's 'VoIP::delay' (one-way, ms), 'VoIP::jitter' (|IPDV|, ms), 'VoIP::loss'
// (packets lost per sample), 'VoIP::bitrate' (Kbits/s). bursts.conf's 'Burst i' are silent in
// flent (runner silent_process): not written. Runs of no flent test keep their floods out.
void add_flood_series(const Run& run, double t0, Json& res, Json& raw, Json& meta) {
  if (run.flent_test.empty()) {
    return;
  }
  for (const auto& [name, f] : run.udp_flood) {
    if (name.rfind("Burst ", 0) == 0) {
      continue;
    }
    add_flood_column(
        run, name, name, [](const FloodInterval& x) { return x.bits_per_second / kMbit; }, t0, res,
        raw);
    meta[name] = Json{{"UNITS", "Mbits/s"},
                      {"MEAN_VALUE", f.received_bps / kMbit},
                      {"PACKETS_SENT", f.sent},
                      {"PACKETS_RECEIVED", f.received},
                      {"PACKET_LOSS_RATE", f.loss_pct / 100.0},
                      {"DATA_TOS", f.dscp << 2}};
  }
  for (const auto& [name, v] : run.voip) {
    add_flood_column(
        run, name, name + "::delay", [](const FloodInterval& x) { return x.one_way_ms; }, t0, res,
        raw);
    add_flood_column(
        run, name, name + "::jitter", [](const FloodInterval& x) { return x.ipdv_ms; }, t0, res,
        raw);
    add_flood_column(
        run, name, name + "::loss",
        [](const FloodInterval& x) { return std::optional<double>(static_cast<double>(x.lost)); },
        t0, res, raw);
    add_flood_column(
        run, name, name + "::bitrate",
        [](const FloodInterval& x) { return std::optional<double>(x.bits_per_second / 1e3); }, t0,
        res, raw);
    meta[name + "::delay"] = Json{{"UNITS", "ms"}, {"MEAN_VALUE", v.one_way.mean}};
    meta[name + "::jitter"] = Json{{"UNITS", "ms"}, {"MEAN_VALUE", v.ipdv_mean_abs_ms}};
    meta[name + "::loss"] = Json{{"UNITS", "count"}};
    meta[name + "::bitrate"] = Json{{"UNITS", "Kbits/s"}};
    meta[name] = Json{{"UNITS", "ms"},
                      {"MEAN_VALUE", v.one_way.mean},
                      {"PACKETS_SENT", v.sent},
                      {"PACKETS_RECEIVED", v.received},
                      {"PACKET_LOSS_RATE", v.loss_pct / 100.0},
                      {"NICSIM_MOS", v.mos},
                      {"DATA_TOS", v.dscp << 2}};
  }
}

// flent's LENGTH, TOTAL_LENGTH and DELAY are whole seconds on its command line, and tests use
// them as integers (bursts.conf: range(LENGTH // (DELAY + burst_length))): whole values are
// written as integers.
Json flent_seconds(double s) {
  const double whole = std::round(s);
  return std::abs(s - whole) < 1e-9 ? Json(static_cast<int64_t>(whole)) : Json(s);
}

// flent's HOSTS: rtt_fair's servers in the order of their pings ("Ping (ms) ICMP<i> <host>",
// rtt_fair.inc: the series are named after HOSTS[i], and flent re-reads the test with them);
// else host b.
Json flent_hosts(const Run& run) {
  Json hosts = Json::array();
  if (run.flent_test == "rtt_fair") {
    const std::string prefix = "Ping (ms) ICMP";
    for (const auto& [name, p] : run.latency_ms) {
      (void)p;
      const size_t space = name.find(' ', prefix.size());
      if (name.rfind(prefix, 0) == 0 && space != std::string::npos) {
        hosts.push_back(name.substr(space + 1));
      }
    }
  }
  if (hosts.empty()) {
    hosts.push_back("b");
  }
  return hosts;
}

}  // namespace

std::string flent_test_name(const Run& run) { return naming(run).test; }

std::string flent_json(const Results& results, size_t run_index) {
  const Run& run = results.runs.at(run_index);
  if (run.intervals.empty()) {
    throw ExportError("run '" + run.label + "' has no intervals: flent needs a time axis");
  }
  const Naming n = naming(run);
  const double t0 = unix_seconds(results.meta.start_time);

  Json x_values = Json::array();
  for (const Interval& iv : run.intervals) {
    x_values.push_back(iv.end_s);  // a bin's value is known at its end, as netperf's samples
  }

  Json res = Json::object();
  Json raw = Json::object();
  Json series_meta = Json::object();
  for (const FlowRef& ref : n.flows) {
    Json col = Json::array();
    Json raws = Json::array();
    for (const Interval& iv : run.intervals) {
      const std::optional<double> bps = flow_rate(run, ref, iv);
      if (!bps) {
        col.push_back(nullptr);
        continue;
      }
      col.push_back(*bps / kMbit);
      raws.push_back(
          Json{{"t", t0 + iv.end_s}, {"dur", iv.end_s - iv.start_s}, {"val", *bps / kMbit}});
    }
    res[ref.series] = std::move(col);
    raw[ref.series] = std::move(raws);
    const FlowTransfer& f = *ref.flow;
    series_meta[ref.series] = Json{{"UNITS", "Mbits/s"},
                                   {"MEAN_VALUE", f.receiver.bits_per_second / kMbit},
                                   {"TCP_RETRANSMIT", f.sender.retransmits},
                                   {"BYTES_SENT", f.sender.bytes},
                                   {"BYTES_RECVD", f.receiver.bytes},
                                   {"NICSIM_FLOW_ID", f.id},
                                   {"DATA_TOS", f.dscp << 2},
                                   {"NICSIM_DIRECTION", std::string(direction_key(ref.dir))}};
  }
  for (const ProbeRef& ref : n.probes) {
    Json col = Json::array();
    for (const Interval& iv : run.intervals) {
      const auto it = iv.latency_ms.find(ref.probe);
      col.push_back(it == iv.latency_ms.end() ? Json(nullptr) : number_or_null(it->second));
    }
    res[ref.series] = std::move(col);
    if (!ref.latency->series.time_s.empty()) {
      raw[ref.series] = probe_raw_values(ref.latency->series, t0);
    }
    Json meta = Json{{"UNITS", "ms"},
                     {"NICSIM_PROBE", ref.probe},
                     {"NICSIM_KIND", ref.latency->kind},
                     {"DATA_TOS", ref.latency->dscp << 2}};
    const LatencyStats& s = ref.latency->rtt;
    meta["PACKETS_SENT"] = s.count + s.lost;
    meta["PACKETS_RECEIVED"] = s.count;
    if (s.count + s.lost > 0) {
      meta["PACKET_LOSS_RATE"] =
          static_cast<double>(s.lost) / static_cast<double>(s.count + s.lost);
    }
    series_meta[ref.series] = std::move(meta);
  }

  add_flood_series(run, t0, res, raw, series_meta);

  Json params = Json::object();
  for (const RunParam& p : run.params) {
    params[p.key] = std::visit([](const auto& v) { return Json(v); }, p.value);
  }
  Json metadata = Json::object();
  metadata["NAME"] = n.test;
  metadata["TITLE"] = "nicsim " + run.backend + (run.label.empty() ? "" : " " + run.label);
  metadata["TIME"] = flent_time(t0);
  metadata["T0"] = flent_time(t0);
  metadata["HOST"] = "b";
  metadata["HOSTS"] = flent_hosts(run);
  metadata["LOCAL_HOST"] = results.meta.host.empty() ? "a" : results.meta.host;
  const double load = phase_length(run, "load");
  metadata["LENGTH"] = flent_seconds(load > 0 ? load : run.duration_s);
  metadata["TOTAL_LENGTH"] = flent_seconds(run.duration_s);
  metadata["DELAY"] = flent_seconds(phase_length(run, "idle_before"));
  metadata["STEP_SIZE"] = run.intervals.front().end_s - run.intervals.front().start_s;
  metadata["IP_VERSION"] = 4;
  Json tp = Json::object();
  if (n.test == "tcp_nup") {
    tp["upload_streams"] = std::to_string(run.transfer.a_to_b.flows.size());
  } else if (n.test == "tcp_ndown") {
    tp["download_streams"] = std::to_string(run.transfer.b_to_a.flows.size());
  }
  if (n.test == "rrul_var") {
    tp["bidir_streams"] = std::to_string(run.transfer.a_to_b.flows.size());
    // flent labels stream i "i (MARK)" from its markings parameter (rrul_var.conf add_stream)
    std::string marks;
    for (const FlowTransfer& f : run.transfer.a_to_b.flows) {
      const std::string m = f.dscp == 46      ? "EF"
                            : f.dscp % 8 == 0 ? "CS" + std::to_string(f.dscp / 8)
                                              : std::to_string(f.dscp);
      marks += (marks.empty() ? "" : ",") + m;
    }
    tp["markings"] = marks;
  } else if (n.test == "rtt_fair") {
    tp["markings"] = "CS0,CS0,CS1,CS1";  // rtt_fair.conf's set_test_parameter
    tp["labels"] = "BE1,BE2,BK1,BK2";
    tp["ping_labels"] = "ICMP1,ICMP2,ICMP3,ICMP4";
  }
  if (n.test == "rrul_be_nflows") {
    tp["upload_streams"] = std::to_string(run.transfer.a_to_b.flows.size());
    tp["download_streams"] = std::to_string(run.transfer.b_to_a.flows.size());
  }
  metadata["TEST_PARAMETERS"] = std::move(tp);
  metadata["SERIES_META"] = std::move(series_meta);
  metadata["FAILED_RUNNERS"] = Json::array();
  metadata["NICSIM"] =
      Json{{"version", results.meta.nicsim_version},
           {"git_commit", results.meta.git_commit ? Json(*results.meta.git_commit) : Json(nullptr)},
           {"backend", run.backend},
           {"seed", run.seed},
           {"label", run.label},
           {"params", std::move(params)},
           {"duration_s", run.duration_s}};

  Json doc = Json::object();
  doc["version"] = kFlentFileFormatVersion;
  doc["metadata"] = std::move(metadata);
  doc["x_values"] = std::move(x_values);
  doc["results"] = std::move(res);
  doc["raw_values"] = std::move(raw);
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string gzip_compress(std::string_view data) {
  z_stream zs{};
  // windowBits 15 + 16: a gzip wrapper (RFC 1952) with zlib's default header (mtime 0).
  if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw ExportError("zlib: deflateInit2 failed");
  }
  std::string out;
  out.resize(deflateBound(&zs, static_cast<uLong>(data.size())) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  const size_t written = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    throw ExportError("zlib: deflate failed");
  }
  out.resize(written);
  return out;
}

std::string flent_file_name(const std::string& out, size_t run_index, size_t run_count,
                            const std::string& label) {
  if (run_count == 1) {
    return out;
  }
  const std::string suffix = ".flent.gz";
  std::string stem = out;
  if (stem.size() >= suffix.size() &&
      stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0) {
    stem.resize(stem.size() - suffix.size());
  }
  // flent's own rule for titles in file names (resultset.py _gen_filename): [^A-Za-z0-9-] -> _
  std::string safe;
  for (char c : label) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    safe += ok ? c : '_';
  }
  return stem + "-" + std::to_string(run_index + 1) + (safe.empty() ? "" : "-" + safe) + suffix;
}

}  // namespace nicsim::report
