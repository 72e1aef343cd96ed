#include "nicsim/config/scenario.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/config/flent_tests.h"
#include "nicsim/config/flow_sizes.h"
#include "nicsim/config/presets_internal.h"
#include "nicsim/config/qdisc_internal.h"
#include "nicsim/config/text_file.h"
#include "nicsim/config/toml_util.h"
#include "nicsim/config/units.h"
#include "nicsim/report/emodel.h"

namespace nicsim::config {

using detail::Entry;
using detail::fail;
using detail::in_source_order;
using detail::join_key;
using detail::quote;
using detail::render;
using detail::TableReader;

namespace {

uint8_t parse_dscp(const toml::node& n, const Location& at, const std::string& key) {
  if (const auto* i = n.as_integer()) {
    if (i->get() < 0 || i->get() > 63) {
      fail(at, key, "a DSCP value must be 0..63, got " + std::to_string(i->get()));
    }
    return static_cast<uint8_t>(i->get());
  }
  if (const auto* s = n.as_string()) {
    if (auto v = detail::dscp_from_name(s->get())) {
      return *v;
    }
  }
  fail(at, key,
       "expected a DSCP name (BE, LE, CS0..CS7, AF11..AF43, EF, VA) or 0..63, got " + render(n));
}

// --- Reading helpers -------------------------------------------------------------------------

struct Ctx {
  std::string file;
  const PresetSearch* search = nullptr;
  detail::PresetCache* cache = nullptr;
};

// A preset reference written as "name" or as a table { preset = "name", <overrides> }.
struct PresetUse {
  detail::PresetRef ref;
  detail::Overrides overrides;
};

PresetUse preset_use(const toml::node& n, const Location& at, const std::string& path,
                     const std::string& file) {
  PresetUse u;
  u.overrides.file = file;
  u.overrides.path = path;
  u.overrides.reserved = {"preset"};
  if (const auto* s = n.as_string()) {
    u.ref = detail::PresetRef{s->get(), at, path};
    return u;
  }
  if (const auto* t = n.as_table()) {
    const toml::node* p = t->get("preset");
    if (p == nullptr) {
      fail(detail::where(*t, file), join_key(path, "preset"), "required (the preset name)");
    }
    const Location pat = detail::key_location(*t, "preset", file);
    u.ref = detail::PresetRef{detail::to_string(*p, pat, join_key(path, "preset")), pat,
                              join_key(path, "preset")};
    u.overrides.table = t;
    return u;
  }
  fail(at, path, "expected a preset name or a table with preset = \"...\", got " + render(n));
}

// `cc`: the simulator's congestion controls (docs/sim/tcp.md).
std::optional<std::string> read_cc(TableReader& r) {
  auto cc = r.opt_string("cc");
  if (cc && *cc != "cubic" && *cc != "reno" && *cc != "bbr" && *cc != "dctcp" && *cc != "prague") {
    fail(r.key_location("cc"), r.key_path("cc"),
         "expected one of cubic, reno, bbr, dctcp, prague, got " + quote(*cc));
  }
  return cc;
}

// A flow's `ecn`: "off", "classic" (RFC 3168, ECT(0)) or "l4s" (RFC 9331, ECT(1)); dctcp and
// prague need ECN, and ECT(1) is for scalable congestion controls only (RFC 9331 §4.3).
std::optional<std::string> read_flow_ecn(TableReader& r, const std::string& cc) {
  auto ecn = r.opt_string("ecn");
  if (!ecn) {
    return ecn;
  }
  if (*ecn != "off" && *ecn != "classic" && *ecn != "l4s") {
    fail(r.key_location("ecn"), r.key_path("ecn"),
         "expected one of off, classic, l4s, got " + quote(*ecn));
  }
  const bool scalable = cc == "dctcp" || cc == "prague";
  if (*ecn == "off" && scalable) {
    fail(r.key_location("ecn"), r.key_path("ecn"), cc + " needs ECN");
  }
  if (*ecn == "l4s" && !scalable) {
    fail(r.key_location("ecn"), r.key_path("ecn"),
         "\"l4s\" (ECT(1)) needs a scalable congestion control (dctcp, prague), got " + cc);
  }
  if (*ecn == "classic" && cc == "prague") {
    fail(r.key_location("ecn"), r.key_path("ecn"), "prague sends ECT(1) only (\"l4s\")");
  }
  return ecn;
}

TcpConfig read_tcp(TableReader& r) {
  TcpConfig t;
  if (auto cc = read_cc(r)) {
    t.cc = *cc;
  }
  const auto bytes_at_least = [&](std::string_view key, int64_t min, int64_t& out) {
    if (auto v = r.opt_bytes(key)) {
      if (*v < min) {
        fail(r.key_location(key), r.key_path(key),
             "must be at least " + format_bytes(min) + ", got " + format_bytes(*v));
      }
      out = *v;
    }
  };
  bytes_at_least("mss", 88, t.mss);  // TCP_MIN_MSS
  bytes_at_least("rmem", 4096, t.rmem);
  bytes_at_least("wmem", 4096, t.wmem);
  bytes_at_least("tsq_limit", 0, t.tsq_limit);
  if (t.mss > 65'495) {
    fail(r.key_location("mss"), r.key_path("mss"),
         "must be at most 65495B (64 KiB IP packet), got " + format_bytes(t.mss));
  }
  if (auto v = r.opt_bool("pacing")) {
    t.pacing = *v;
  }
  if (auto v = r.opt_bool("ecn")) {
    t.ecn = *v;
  }
  for (const auto& [key, out] :
       {std::pair<std::string_view, int64_t*>{"pacing_ss_ratio", &t.pacing_ss_ratio},
        std::pair<std::string_view, int64_t*>{"pacing_ca_ratio", &t.pacing_ca_ratio}}) {
    if (auto v = r.opt_int(key)) {
      if (*v < 1 || *v > 1000) {  // the sysctls accept 0..1000 (percent); 0 would stall TCP
        fail(r.key_location(key), r.key_path(key),
             "must be 1..1000 (percent), got " + std::to_string(*v));
      }
      *out = *v;
    }
  }
  if (auto v = r.opt_int("init_cwnd")) {
    if (*v < 1 || *v > 1000) {
      fail(r.key_location("init_cwnd"), r.key_path("init_cwnd"),
           "must be 1..1000 segments, got " + std::to_string(*v));
    }
    t.init_cwnd = *v;
  }
  r.finish();
  return t;
}

// A host forwards and shapes nothing for others: per_forward and per_qdisc_op are charged on
// routers only (docs/presets.md, "Router costs"). Set on a host they would change nothing, and
// the host's effective configuration leaves them out, so they are refused rather than ignored.
void refuse_router_costs(const detail::Overrides& overrides, const std::string& file) {
  if (overrides.table == nullptr) {
    return;
  }
  for (const char* key : {"per_forward", "per_qdisc_op"}) {
    if (const toml::node* v = overrides.table->get(key)) {
      fail(detail::where(*v, file), join_key(overrides.path, key),
           "is a router's cost (docs/presets.md, \"Router costs\"); a host does not use it: "
           "set it on a [routers.<name>] cpu");
    }
  }
}

// `cpu` of a host or router: a preset name or { preset = ..., <CpuCosts overrides> }.
void read_cpu(TableReader& r, const Ctx& ctx, bool router, std::string& preset,
              model::CpuCosts& cpu) {
  const toml::node* n = r.take("cpu");
  if (n == nullptr) {
    r.missing("cpu");
  }
  PresetUse cu = preset_use(*n, r.key_location("cpu"), r.key_path("cpu"), ctx.file);
  if (!router) {
    refuse_router_costs(cu.overrides, ctx.file);
  }
  preset = cu.ref.name;
  cpu = detail::load_cpu(*ctx.search, *ctx.cache, cu.ref, cu.overrides);
}

// `nic` and `qdisc` of a host or a router's interface (one NIC with its egress qdisc).
void read_nic_and_qdisc(TableReader& r, const Ctx& ctx, NicConfig& nic, QdiscConfig& qdisc) {
  const toml::node* n = r.take("nic");
  if (n == nullptr) {
    r.missing("nic");
  }
  PresetUse nu = preset_use(*n, r.key_location("nic"), r.key_path("nic"), ctx.file);
  nic = detail::load_nic(*ctx.search, *ctx.cache, nu.ref, nu.overrides);
  if (const toml::node* q = r.take("qdisc")) {
    qdisc = detail::parse_qdisc(*q, r.key_location("qdisc"), r.key_path("qdisc"), ctx.file,
                                /*is_leaf=*/false);
  }
  nic.platform.qdisc_bypass = qdisc.can_bypass();
}

HostConfig read_host(const std::string& name, const toml::table& t, const Ctx& ctx) {
  TableReader r(t, join_key("hosts", name), ctx.file);
  HostConfig h;
  h.name = name;
  read_cpu(r, ctx, /*router=*/false, h.cpu_preset, h.cpu);
  read_nic_and_qdisc(r, ctx, h.nic, h.qdisc);
  if (const toml::table* tcp = r.opt_table("tcp")) {
    TableReader tr(*tcp, r.key_path("tcp"), ctx.file);
    h.tcp = read_tcp(tr);
  }
  r.finish();
  return h;
}

// [routers.<r>]: cpu, then [routers.<r>.interfaces.<i>] (nic, qdisc) in the order written.
RouterConfig read_router(const std::string& name, const toml::table& t, const Ctx& ctx) {
  TableReader r(t, join_key("routers", name), ctx.file);
  RouterConfig rc;
  rc.name = name;
  read_cpu(r, ctx, /*router=*/true, rc.cpu_preset, rc.cpu);
  const toml::table* ifaces = r.opt_table("interfaces");
  // None at all is network_of()'s error (a router needs an interface), reported at the router.
  for (const Entry& e : ifaces != nullptr ? in_source_order(*ifaces) : std::vector<Entry>{}) {
    RouterInterfaceConfig ic;
    ic.name = std::string(e.key->str());
    const std::string path = join_key(r.key_path("interfaces"), ic.name);
    TableReader ir(detail::to_table(*e.node, detail::where(*e.key, *e.node, ctx.file), path), path,
                   ctx.file);
    read_nic_and_qdisc(ir, ctx, ic.nic, ic.qdisc);
    ir.finish();
    rc.interfaces.push_back(std::move(ic));
  }
  r.finish();
  return rc;
}

// start / stop / interval checks shared by the traffic kinds.
struct Window {
  Duration start;
  std::optional<Duration> stop;
};

Window read_window(TableReader& r, Duration duration) {
  Window w;
  if (auto s = r.opt_duration("start")) {
    w.start = *s;
  }
  if (w.start >= duration) {
    fail(r.key_location("start"), r.key_path("start"),
         "must be before the end of the scenario (duration " + format_duration(duration) +
             "), got " + format_duration(w.start));
  }
  w.stop = r.opt_duration("stop");
  if (w.stop && *w.stop <= w.start) {
    fail(r.key_location("stop"), r.key_path("stop"),
         "must be after start (" + format_duration(w.start) + "), got " + format_duration(*w.stop));
  }
  if (w.stop && *w.stop > duration) {
    fail(r.key_location("stop"), r.key_path("stop"),
         "must be at most the scenario duration (" + format_duration(duration) + "), got " +
             format_duration(*w.stop));
  }
  return w;
}

std::pair<std::string, std::string> read_endpoints(TableReader& r,
                                                   const std::vector<HostConfig>& hosts,
                                                   const std::vector<RouterConfig>& routers) {
  std::string names;
  for (const auto& h : hosts) {
    names += (names.empty() ? "" : ", ") + h.name;
  }
  const auto host = [&](std::string_view key) {
    const std::string v = r.required(r.opt_string(key), key);
    const bool known =
        std::any_of(hosts.begin(), hosts.end(), [&](const HostConfig& h) { return h.name == v; });
    if (!known) {
      const bool router = std::any_of(routers.begin(), routers.end(),
                                      [&](const RouterConfig& x) { return x.name == v; });
      fail(r.key_location(key), r.key_path(key),
           (router ? quote(v) + " is a router; traffic starts and ends at hosts"
                   : "unknown host " + quote(v)) +
               " (hosts: " + names + ")");
    }
    return v;
  };
  std::string from = host("from");
  std::string to = host("to");
  if (from == to) {
    fail(r.key_location("to"), r.key_path("to"), "must differ from `from` (" + quote(from) + ")");
  }
  return {from, to};
}

Duration positive_duration(TableReader& r, std::string_view key, Duration def) {
  const Duration d = r.opt_duration(key).value_or(def);
  if (d <= Duration::zero()) {
    fail(r.key_location(key), r.key_path(key), "must be > 0");
  }
  return d;
}

int64_t payload_size(TableReader& r, std::string_view key, int64_t def) {
  const int64_t v = r.opt_bytes(key).value_or(def);
  if (v > 65'507) {
    fail(r.key_location(key), r.key_path(key),
         "must be at most 65507B (largest IPv4 datagram payload), got " + format_bytes(v));
  }
  return v;
}

uint8_t read_dscp(TableReader& r) {
  if (const toml::node* n = r.take("dscp")) {
    return parse_dscp(*n, r.key_location("dscp"), r.key_path("dscp"));
  }
  return 0;
}

// A [vary] value, as written into run labels.
constexpr size_t kMaxVaryValueBytes = 128;

// Bounds that keep a scenario's cost finite (docs/scenarios.md "Limits"): each traffic entry
// costs state in both back-ends (200,000 entries took ~1 GB), and every probe is an event and a
// stored sample (a ping every nanosecond exhausted memory).
constexpr size_t kMaxTrafficEntries = 4096;
constexpr Duration kMinProbeInterval = Duration::us(100);
constexpr int64_t kMaxProbesPerRun = 10'000'000;
// udp_flood: each datagram is an event in the simulator and a send() in live; one-way delays are
// kept in a LatencyRecorder (bounded memory), so the bound is on events: 50 million is ~10 min
// of a 1 Gbit/s flood of 1470-byte datagrams.
constexpr int64_t kMaxFloodPacketsPerRun = 50'000'000;
constexpr Rate kMaxFloodRate = Rate::gbit(100);
constexpr int64_t kMinFloodSize = 32;    // room for the live header (sequence, send time)
constexpr int64_t kMaxFloodSize = 1472;  // one IPv4 datagram in a 1500-byte MTU (no fragments)
// [[traffic.flent]]'s test parameters (flent -t): markings (rrul_var), rate (udp_flood, bursts),
// size (udp_flood); each only for the tests that take it.
void read_flent_parameters(TableReader& r, RrulConfig& p) {
  const auto only = [&](std::string_view key, bool takes) {
    if (!takes) {
      fail(r.key_location(key), r.key_path(key),
           quote(p.test) + " has no " + std::string(key) + " parameter");
    }
  };
  if (const std::optional<std::string> m = r.opt_string("markings")) {
    only("markings", p.test == "rrul_var");
    try {
      p.markings = parse_flent_markings(*m);
    } catch (const std::invalid_argument& e) {
      fail(r.key_location("markings"), r.key_path("markings"), e.what());
    }
  }
  if (const std::optional<Rate> rate = r.opt_rate("rate")) {
    only("rate", p.test == "udp_flood" || p.test == "bursts");
    if (rate->is_zero() || *rate > kMaxFloodRate) {
      fail(r.key_location("rate"), r.key_path("rate"),
           "must be > 0 and at most " + format_rate(kMaxFloodRate) + ", got " + format_rate(*rate));
    }
    p.rate = *rate;
  }
  if (const std::optional<int64_t> size = r.opt_bytes("size")) {
    only("size", p.test == "udp_flood");
    if (*size < kMinFloodSize || *size > kMaxFloodSize) {
      fail(r.key_location("size"), r.key_path("size"),
           "must be " + format_bytes(kMinFloodSize) + ".." + format_bytes(kMaxFloodSize) +
               ", got " + format_bytes(*size));
    }
    p.size = *size;
  }
}

// transfers: each is a TCP connection's state in both back-ends (a few KB each).
constexpr int64_t kMaxTransfersPerRun = 100'000;
constexpr int64_t kMaxTransferSize = int64_t{1} << 30;  // 1 GiB

// Counts the probes (ping, udp_probe) a run will send and refuses the entry that takes the
// total over kMaxProbesPerRun, naming its interval.
class ProbeBudget {
 public:
  explicit ProbeBudget(Duration duration) : duration_(duration) {}

  Duration interval(TableReader& r, Duration def) const {
    const Duration d = positive_duration(r, "interval", def);
    if (d < kMinProbeInterval) {
      fail(
          r.key_location("interval"), r.key_path("interval"),
          "must be at least " + format_duration(kMinProbeInterval) + ", got " + format_duration(d));
    }
    return d;
  }

  void spend(TableReader& r, Duration interval, Duration start, std::optional<Duration> stop) {
    total_ += (stop.value_or(duration_) - start) / interval + 1;
    if (total_ > kMaxProbesPerRun) {
      fail(r.key_location("interval"), r.key_path("interval"),
           "the probes of this scenario would exceed " + std::to_string(kMaxProbesPerRun) +
               " per run (" + std::to_string(total_) + " so far): use a longer interval");
    }
  }

 private:
  Duration duration_;
  int64_t total_ = 0;
};

template <class F>
void for_each_element(TableReader& traffic, std::string_view kind, const Ctx& ctx, F&& f) {
  const toml::array* a = traffic.opt_array(kind);
  if (a == nullptr) {
    return;
  }
  const Location arr_at = traffic.key_location(kind);
  if (a->size() > kMaxTrafficEntries) {
    fail(arr_at, traffic.key_path(kind),
         "at most " + std::to_string(kMaxTrafficEntries) + " entries, got " +
             std::to_string(a->size()));
  }
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& e = *a->get(i);
    const std::string path = traffic.key_path(kind) + "[" + std::to_string(i) + "]";
    const Location at = e.source().begin ? detail::where(e, ctx.file) : arr_at;
    TableReader r(detail::to_table(e, at, path), path, ctx.file);
    f(r);
    r.finish();
  }
}

const TcpConfig& host_tcp(const std::vector<HostConfig>& hosts, const std::string& name) {
  return std::find_if(hosts.begin(), hosts.end(),
                      [&](const HostConfig& h) { return h.name == name; })
      ->tcp;  // read_endpoints checked that the host exists
}

// [[traffic.replay]]: the file (relative to the scenario's directory) is read and parsed here,
// so a missing, unreadable or corrupt recording is an error at its `file` key, and back-ends
// get frames, never paths. Every recorded host must be a host of the scenario.
ReplayConfig read_replay(TableReader& r, const std::vector<HostConfig>& hosts, const Ctx& ctx) {
  ReplayConfig c;
  const std::string written = r.required(r.opt_string("file"), "file");
  const Location at = r.key_location("file");
  const std::string key = r.key_path("file");
  std::filesystem::path p(written);
  if (p.is_relative()) {
    p = std::filesystem::path(ctx.file).parent_path() / p;
  }
  // Absolute, so the effective configuration (dump, results' config_toml) names the same file
  // from anywhere.
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(p, ec);
  c.file = (ec ? p : abs).lexically_normal().string();
  std::string bytes;
  try {
    bytes = read_config_text(c.file, kMaxReplayBytes);
  } catch (const ConfigError& e) {
    fail(at, key, c.file + ": " + e.message());
  }
  try {
    c.recording = std::make_shared<const ReplayRecording>(parse_replay(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
  } catch (const ReplayFileError& e) {
    fail(at, key, c.file + ": " + e.what());
  }
  const auto is_host = [&](const std::string& name) {
    return std::any_of(hosts.begin(), hosts.end(),
                       [&](const HostConfig& h) { return h.name == name; });
  };
  for (const std::string& h : c.recording->hosts) {
    if (!is_host(h)) {
      fail(at, key, c.file + ": recorded host " + quote(h) + " is not a host of this scenario");
    }
  }
  if (std::optional<std::string> from = r.opt_string("from")) {
    const auto& rh = c.recording->hosts;
    if (std::find(rh.begin(), rh.end(), *from) == rh.end()) {
      fail(r.key_location("from"), r.key_path("from"), quote(*from) + " sent nothing in " + c.file);
    }
    c.from = std::move(from);
  }
  return c;
}

TrafficConfig read_traffic(TableReader& t, const std::vector<HostConfig>& hosts,
                           const std::vector<RouterConfig>& routers, Duration duration,
                           const Ctx& ctx) {
  TrafficConfig out;
  ProbeBudget probes(duration);
  for_each_element(t, "tcp", ctx, [&](TableReader& r) {
    TcpFlowConfig f;
    std::tie(f.from, f.to) = read_endpoints(r, hosts, routers);
    f.streams = r.opt_int("streams").value_or(1);
    if (f.streams < 1 || f.streams > 10'000) {
      fail(r.key_location("streams"), r.key_path("streams"),
           "must be 1..10000, got " + std::to_string(f.streams));
    }
    const Window w = read_window(r, duration);
    f.start = w.start;
    f.stop = w.stop;
    f.dscp = read_dscp(r);
    f.cc = read_cc(r);
    f.ecn = read_flow_ecn(r, f.cc.value_or(host_tcp(hosts, f.from).cc));
    out.tcp.push_back(std::move(f));
  });
  for_each_element(t, "ping", ctx, [&](TableReader& r) {
    PingConfig p;
    std::tie(p.from, p.to) = read_endpoints(r, hosts, routers);
    p.interval = probes.interval(r, p.interval);
    p.size = payload_size(r, "size", p.size);
    const Window w = read_window(r, duration);
    p.start = w.start;
    p.stop = w.stop;
    probes.spend(r, p.interval, p.start, p.stop);
    p.dscp = read_dscp(r);
    out.ping.push_back(std::move(p));
  });
  for_each_element(t, "udp_probe", ctx, [&](TableReader& r) {
    UdpProbeConfig p;
    std::tie(p.from, p.to) = read_endpoints(r, hosts, routers);
    p.interval = probes.interval(r, p.interval);
    p.size = payload_size(r, "size", p.size);
    const Window w = read_window(r, duration);
    p.start = w.start;
    p.stop = w.stop;
    probes.spend(r, p.interval, p.start, p.stop);
    p.dscp = read_dscp(r);
    out.udp_probe.push_back(std::move(p));
  });
  int64_t flood_packets = 0;
  for_each_element(t, "udp_flood", ctx, [&](TableReader& r) {
    UdpFloodConfig f;
    std::tie(f.from, f.to) = read_endpoints(r, hosts, routers);
    f.rate = r.opt_rate("rate").value_or(f.rate);
    if (f.rate.is_zero() || f.rate > kMaxFloodRate) {
      fail(
          r.key_location("rate"), r.key_path("rate"),
          "must be > 0 and at most " + format_rate(kMaxFloodRate) + ", got " + format_rate(f.rate));
    }
    f.size = r.opt_bytes("size").value_or(f.size);
    if (f.size < kMinFloodSize || f.size > kMaxFloodSize) {
      fail(r.key_location("size"), r.key_path("size"),
           "must be " + format_bytes(kMinFloodSize) + ".." + format_bytes(kMaxFloodSize) +
               " (UDP payload in one 1500-byte MTU datagram), got " + format_bytes(f.size));
    }
    const Window w = read_window(r, duration);
    f.start = w.start;
    f.stop = w.stop;
    f.dscp = read_dscp(r);
    const Duration span = f.stop.value_or(duration) - f.start;
    const Bytes payload = f.rate.bytes_in(span);
    flood_packets += static_cast<int64_t>(payload / static_cast<Bytes>(f.size)) + 1;
    if (flood_packets > kMaxFloodPacketsPerRun) {
      fail(r.key_location("rate"), r.key_path("rate"),
           "the udp_flood datagrams of this scenario would exceed " +
               std::to_string(kMaxFloodPacketsPerRun) + " per run (" +
               std::to_string(flood_packets) + " so far): lower the rate or raise the size");
    }
    out.udp_flood.push_back(std::move(f));
  });
  int64_t voip_packets = 0;
  for_each_element(t, "voip", ctx, [&](TableReader& r) {
    VoipConfig v;
    std::tie(v.from, v.to) = read_endpoints(r, hosts, routers);
    v.codec = r.opt_string("codec").value_or(v.codec);
    const report::VoipCodec* codec = report::voip_codec(v.codec);
    if (codec == nullptr) {
      fail(r.key_location("codec"), r.key_path("codec"),
           "unknown codec " + quote(v.codec) +
               " (codecs: " + std::string(report::voip_codec_names()) + ")");
    }
    const Window w = read_window(r, duration);
    v.start = w.start;
    v.stop = w.stop;
    if (const toml::node* n = r.take("dscp")) {
      v.dscp = parse_dscp(*n, r.key_location("dscp"), r.key_path("dscp"));
    }
    // Every voice packet's delay is kept (IPDV and loss bursts need the sequence).
    voip_packets += (v.stop.value_or(duration) - v.start) / codec->interval + 1;
    if (voip_packets > kMaxProbesPerRun) {
      fail(r.key_location("codec"), r.key_path("codec"),
           "the voip packets of this scenario would exceed " + std::to_string(kMaxProbesPerRun) +
               " per run (" + std::to_string(voip_packets) + " so far)");
    }
    out.voip.push_back(std::move(v));
  });
  int64_t transfers = 0;
  for_each_element(t, "transfers", ctx, [&](TableReader& r) {
    TransfersConfig c;
    std::tie(c.from, c.to) = read_endpoints(r, hosts, routers);
    c.sizes = r.opt_string("sizes").value_or(c.sizes);
    if (!known_size_distribution(c.sizes)) {
      fail(r.key_location("sizes"), r.key_path("sizes"),
           "unknown distribution " + quote(c.sizes) + " (fixed, exponential, websearch)");
    }
    if (const std::optional<int64_t> b = r.opt_bytes("size")) {
      if (c.sizes == "websearch") {
        fail(r.key_location("size"), r.key_path("size"),
             "websearch sizes come from their distribution: remove `size`");
      }
      c.size = *b;
    }
    if (c.size < 1 || c.size > kMaxTransferSize) {
      fail(r.key_location("size"), r.key_path("size"),
           "must be 1B..1GiB, got " + format_bytes(c.size));
    }
    c.interval = positive_duration(r, "interval", c.interval);
    const Window w = read_window(r, duration);
    c.start = w.start;
    c.stop = w.stop;
    c.dscp = read_dscp(r);
    c.cc = read_cc(r);
    transfers += (c.stop.value_or(duration) - c.start) / c.interval + 1;
    if (transfers > kMaxTransfersPerRun) {
      fail(r.key_location("interval"), r.key_path("interval"),
           "the transfers of this scenario would exceed " + std::to_string(kMaxTransfersPerRun) +
               " per run on average (" + std::to_string(transfers) +
               " so far): use a longer interval");
    }
    out.transfers.push_back(std::move(c));
  });
  for_each_element(t, "replay", ctx,
                   [&](TableReader& r) { out.replay.push_back(read_replay(r, hosts, ctx)); });
  // [[traffic.rrul]] and [[traffic.flent]] (rrul or another of flent's tests): one per
  // scenario (its phases are the run's).
  for (const char* kind : {"rrul", "flent"}) {
    for_each_element(t, kind, ctx, [&](TableReader& r) {
      if (!out.rrul.empty()) {
        fail(r.location(),
             std::string("traffic.") + kind + "[" +
                 std::to_string(std::string_view(kind) == "rrul" ? out.rrul.size() : 0) + "]",
             std::string_view(kind) == "rrul"
                 ? "at most one rrul per scenario (its phases are the run's)"
                 : "at most one rrul or flent test per scenario (its phases are the run's)");
      }
      RrulConfig p;
      std::tie(p.from, p.to) = read_endpoints(r, hosts, routers);
      if (std::string_view(kind) == "flent") {
        p.test = r.required(r.opt_string("test"), "test");
        const FlentTestInfo* info = find_flent_test(p.test);
        if (info == nullptr) {
          std::string names;
          for (const FlentTestInfo& ft : flent_tests()) {
            names += (names.empty() ? "" : ", ") + std::string(ft.name);
          }
          fail(r.key_location("test"), r.key_path("test"),
               "unknown flent test " + quote(p.test) + " (presets: " + names + ")");
        }
        if (const std::optional<int64_t> n = r.opt_int("streams")) {
          if (!info->streams) {
            fail(r.key_location("streams"), r.key_path("streams"),
                 quote(p.test) + " has no streams parameter");
          }
          if (*n < 1 || *n > 64) {
            fail(r.key_location("streams"), r.key_path("streams"),
                 "must be 1..64, got " + std::to_string(*n));
          }
          p.streams = *n;
        }
        read_flent_parameters(r, p);
      }
      std::string_view last_written;  // the timing key an overlong rrul points at ("" = table)
      if (auto s = r.opt_duration("start")) {
        p.start = *s;
        last_written = "start";
      }
      const auto at_least = [&](std::string_view key, Duration def, Duration min, const char* why) {
        const std::optional<Duration> v = r.opt_duration(key);
        const Duration d = v.value_or(def);
        if (v && (key == "idle" || key == "load")) {
          last_written = key;
        }
        if (d < min) {
          fail(r.key_location(key), r.key_path(key),
               "must be at least " + format_duration(min) + why + ", got " + format_duration(d));
        }
        return d;
      };
      p.idle = at_least("idle", p.idle, Duration::ms(1), "");
      p.load = at_least("load", p.load, Duration::ms(1), "");
      p.probe_interval = at_least("probe_interval", p.probe_interval, Duration::ms(1), "");
      p.bin = at_least("bin", p.bin, Duration::ms(10), " (throughput bins)");
      if (p.end() > duration) {
        const std::string table =
            std::string("traffic.") + kind + "[" + std::to_string(out.rrul.size()) + "]";
        fail(last_written.empty() ? r.location() : r.key_location(last_written),
             last_written.empty() ? table : r.key_path(last_written),
             p.test + " needs start + idle + load + idle = " + format_duration(p.end()) +
                 ", more than the scenario duration " + format_duration(duration));
      }
      if (p.rate) {  // the floods of udp_flood / bursts: the same event budget as udp_flood's
        const Duration span = p.test == "bursts"
                                  ? kFlentBurstLength * (p.load / (p.idle + kFlentBurstLength))
                                  : p.load;
        const int64_t size = p.test == "bursts" ? kFlentBurstSize : p.size.value_or(1470);
        if (static_cast<int64_t>(p.rate->bytes_in(span) / static_cast<Bytes>(size)) >
            kMaxFloodPacketsPerRun) {
          fail(r.key_location("rate"), r.key_path("rate"),
               p.test + "'s datagrams would exceed " + std::to_string(kMaxFloodPacketsPerRun) +
                   " per run; lower the rate or the load");
        }
      }
      out.rrul.push_back(std::move(p));
    });
  }
  t.finish();
  return out;
}

// --- [vary] ----------------------------------------------------------------------------------

struct PathPart {
  std::string key;
  std::optional<size_t> index;  // "tcp[0]"
};

std::optional<std::vector<PathPart>> split_path(std::string_view s) {
  std::vector<PathPart> parts;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t dot = s.find('.', pos);
    std::string_view c = s.substr(pos, dot == std::string_view::npos ? s.npos : dot - pos);
    PathPart p;
    const size_t br = c.find('[');
    if (br != std::string_view::npos) {
      if (c.back() != ']' || br + 2 > c.size() - 1) {
        return std::nullopt;
      }
      const std::string_view num = c.substr(br + 1, c.size() - br - 2);
      size_t idx = 0;
      auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), idx);
      if (ec != std::errc() || ptr != num.data() + num.size()) {
        return std::nullopt;
      }
      p.index = idx;
      c = c.substr(0, br);
    }
    if (c.empty() || !std::all_of(c.begin(), c.end(), [](char ch) {
          return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '-';
        })) {
      return std::nullopt;
    }
    p.key = std::string(c);
    parts.push_back(std::move(p));
    if (dot == std::string_view::npos) {
      break;
    }
    pos = dot + 1;
  }
  return parts;
}

std::optional<VaryValue> scalar(const toml::node& n) {
  if (const auto* b = n.as_boolean()) {
    return VaryValue(b->get());
  }
  if (const auto* i = n.as_integer()) {
    return VaryValue(i->get());
  }
  if (const auto* f = n.as_floating_point()) {
    return VaryValue(f->get());
  }
  if (const auto* s = n.as_string()) {
    return VaryValue(s->get());
  }
  return std::nullopt;
}

struct VaryRead {
  std::vector<VaryAxis> axes;
  std::vector<std::vector<std::vector<PathPart>>> paths;  // per axis: the key paths it sets
  std::vector<std::vector<PathPart>> names;  // per axis: the key as parts, for short names
  std::vector<Location> at;
};

// One brace group in a [vary] key sets several keys to the same value:
// "routers.r.interfaces.{lan,wan}.qdisc" is routers.r.interfaces.lan.qdisc and ...wan.qdisc.
// Returns the keys (the key itself without braces), or nullopt for a malformed group.
std::optional<std::vector<std::string>> expand_braces(const std::string& key) {
  const size_t open = key.find('{');
  const size_t close = key.find('}');
  if (open == std::string::npos && close == std::string::npos) {
    return std::vector<std::string>{key};
  }
  if (open == std::string::npos || close == std::string::npos || close < open ||
      key.find_first_of("{}", close + 1) != std::string::npos || key.find('{', open + 1) < close) {
    return std::nullopt;
  }
  std::vector<std::string> out;
  const std::string group = key.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos <= group.size()) {
    const size_t comma = group.find(',', pos);
    const std::string one =
        key.substr(0, open) + group.substr(pos, comma - pos) + key.substr(close + 1);
    if (comma == pos || pos == group.size() ||
        std::find(out.begin(), out.end(), one) != out.end()) {
      return std::nullopt;  // an empty or repeated alternative
    }
    out.push_back(one);
    if (comma == std::string::npos) {
      break;
    }
    pos = comma + 1;
  }
  return out.size() >= 2 ? std::optional(out) : std::nullopt;
}

// The key as parts for its short name: a brace group stays one literal part ("{lan,wan}").
std::vector<PathPart> name_parts(const std::string& key, std::vector<PathPart> first) {
  const size_t open = key.find('{');
  if (open == std::string::npos) {
    return first;
  }
  const size_t part = static_cast<size_t>(std::count(key.begin(), key.begin() + open, '.'));
  const size_t begin = key.rfind('.', open) == std::string::npos ? 0 : key.rfind('.', open) + 1;
  const size_t end = key.find('.', key.find('}'));
  first[part].key = key.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  first[part].index.reset();
  return first;
}

// routers.<r>.<key> or routers.<r>.interfaces.<i>.<key>: the router and interface must exist.
void check_vary_router_path(const Scenario& s, const std::vector<PathPart>& parts,
                            const Location& at, const std::string& kpath) {
  const std::string& name = parts[1].key;
  const auto r = std::find_if(s.routers.begin(), s.routers.end(),
                              [&](const RouterConfig& x) { return x.name == name; });
  if (r == s.routers.end()) {
    fail(at, kpath, "no router " + quote(name) + " in [routers]");
  }
  if (parts.size() < 3) {
    fail(at, kpath, "names a whole router; vary a key inside it (e.g. routers." + name + ".cpu)");
  }
  if (parts[2].key != "interfaces") {
    return;
  }
  if (parts.size() < 4 ||
      std::none_of(r->interfaces.begin(), r->interfaces.end(),
                   [&](const RouterInterfaceConfig& i) { return i.name == parts[3].key; })) {
    fail(at, kpath,
         "no interface " + (parts.size() < 4 ? std::string("named") : quote(parts[3].key)) +
             " on router " + quote(name));
  }
  if (parts.size() < 5) {
    fail(at, kpath, "names a whole interface; vary a key inside it (nic, qdisc)");
  }
}

// A [vary] key path that names a key the scenario can have (else a one-line error at `at`).
std::vector<PathPart> checked_vary_path(const std::string& key, const Scenario& s,
                                        const Location& at, const std::string& kpath) {
  auto split = split_path(key);
  if (!split) {
    fail(at, kpath, "expected a key path like \"hosts.a.nic.bql\" or \"traffic.tcp[0].streams\"");
  }
  std::vector<PathPart>& parts = *split;
  const std::string& top = parts.front().key;
  static const std::vector<std::string> kTops = {"scenario", "hosts", "wire",  "traffic",
                                                 "routers",  "links", "routes"};
  if (std::find(kTops.begin(), kTops.end(), top) == kTops.end()) {
    fail(at, kpath,
         "can only vary keys under scenario, hosts, wire, traffic, routers, links or routes, "
         "got " +
             quote(top));
  }
  if (top == "scenario" && parts.size() == 2 && parts.back().key == "name") {
    fail(at, kpath, "the scenario name cannot be varied");
  }
  if (parts.size() < 2) {
    fail(at, kpath, "names a whole section; vary a key inside it");
  }
  if (top == "hosts") {
    const std::string& h = parts[1].key;
    if (s.host(h) == nullptr) {
      fail(at, kpath, "no host " + quote(h) + " in [hosts]");
    }
    if (parts.size() < 3) {
      fail(at, kpath, "names a whole host; vary a key inside it (e.g. hosts." + h + ".nic)");
    }
  }
  if (top == "routers") {
    check_vary_router_path(s, parts, at, kpath);
  }
  if (top == "wire" && !s.links.empty()) {
    fail(at, kpath, "there is no [wire] with [[links]]; vary a link's key (links[0].rate)");
  }
  if (parts.back().index) {
    fail(at, kpath, "cannot vary an array element as a whole; vary a key inside it");
  }
  return parts;
}

VaryRead read_vary(const toml::table& v, const Scenario& s, const std::string& file) {
  VaryRead out;
  for (const Entry& e : in_source_order(v)) {
    const std::string key(e.key->str());
    const std::string kpath = join_key("vary", key);
    const Location at = detail::where(*e.key, *e.node, file);
    const auto keys = expand_braces(key);
    if (!keys) {
      fail(at, kpath,
           "a brace group lists two or more different names, once per key: "
           "\"routers.r.interfaces.{lan,wan}.qdisc\"");
    }
    std::vector<std::vector<PathPart>> axis_paths;
    for (const std::string& one : *keys) {
      axis_paths.push_back(checked_vary_path(one, s, at, kpath));
    }
    const toml::array& values = detail::to_array(*e.node, at, kpath);
    if (values.empty()) {
      fail(at, kpath, "needs at least one value");
    }
    VaryAxis axis;
    axis.key = key;
    for (size_t i = 0; i < values.size(); ++i) {
      const toml::node& x = *values.get(i);
      const Location xat = x.source().begin ? detail::where(x, file) : at;
      auto sv = scalar(x);
      if (!sv) {
        fail(xat, kpath, "values must be strings, numbers or booleans, got " + render(x));
      }
      if (i > 0 && x.type() != values.get(0)->type()) {
        fail(xat, kpath,
             "all values must have the same type as the first (" + render(*values.get(0)) +
                 "), got " + render(x));
      }
      if (std::find(axis.values.begin(), axis.values.end(), *sv) != axis.values.end()) {
        fail(xat, kpath, "duplicate value " + render(x));
      }
      // Every value is part of a run label, which exports repeat on each row: bounded here.
      if (const size_t n = format_vary_value(*sv).size(); n > kMaxVaryValueBytes) {
        fail(xat, kpath,
             "a value is at most " + std::to_string(kMaxVaryValueBytes) +
                 " bytes (it names its runs), got " + std::to_string(n));
      }
      axis.values.push_back(std::move(*sv));
    }
    for (const auto& other : out.axes) {
      const std::vector<std::string> other_keys = *expand_braces(other.key);
      for (const std::string& k : other_keys) {
        if (std::find(keys->begin(), keys->end(), k) != keys->end()) {
          fail(at, kpath, other.key == key ? "varied twice" : k + " is varied twice");
        }
      }
    }
    out.names.push_back(name_parts(key, axis_paths.front()));
    out.axes.push_back(std::move(axis));
    out.paths.push_back(std::move(axis_paths));
    out.at.push_back(at);
  }
  // Short names: the shortest suffix of the key path that is unique among the axes.
  for (size_t i = 0; i < out.axes.size(); ++i) {
    const auto& p = out.names[i];
    for (size_t n = 1; n <= p.size(); ++n) {
      std::string suffix;
      for (size_t k = p.size() - n; k < p.size(); ++k) {
        suffix += (suffix.empty() ? "" : ".") + p[k].key +
                  (p[k].index ? "[" + std::to_string(*p[k].index) + "]" : "");
      }
      bool unique = true;
      for (size_t j = 0; j < out.axes.size(); ++j) {
        if (j == i) {
          continue;
        }
        const auto& q = out.names[j];
        if (q.size() >= n) {
          std::string s2;
          for (size_t k = q.size() - n; k < q.size(); ++k) {
            s2 += (s2.empty() ? "" : ".") + q[k].key +
                  (q[k].index ? "[" + std::to_string(*q[k].index) + "]" : "");
          }
          unique = unique && s2 != suffix;
        }
      }
      if (unique || n == p.size()) {
        out.axes[i].short_name = suffix;
        break;
      }
    }
  }
  return out;
}

// --- [published] -----------------------------------------------------------------------------

std::vector<PublishedEntry> read_published(const toml::table& t, const std::vector<VaryAxis>& axes,
                                           const std::string& file) {
  std::vector<PublishedEntry> out;
  PublishedEntry all_runs;
  const auto read_metric = [&](PublishedEntry& pe, const std::string& key, const toml::node& n,
                               const Location& at, const std::string& path) {
    if (key == "source") {
      pe.metrics.emplace_back(key, detail::to_string(n, at, path));
      return;
    }
    const bool ident = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!ident) {
      fail(at, path, "metric names are lower-case identifiers like ping_ms or goodput_mbit");
    }
    const double v = detail::to_number(n, at, path);
    if (!std::isfinite(v)) {
      fail(at, path, "must be a finite number");
    }
    pe.metrics.emplace_back(key, v);
  };
  for (const Entry& e : in_source_order(t)) {
    const std::string sel(e.key->str());
    const std::string path = join_key("published", sel);
    const Location at = detail::where(*e.key, *e.node, file);
    const toml::table* sub = e.node->as_table();
    if (sub == nullptr) {
      read_metric(all_runs, sel, *e.node, at, path);
      continue;
    }
    PublishedEntry pe;
    pe.selector = sel;
    size_t pos = 0;
    while (pos <= sel.size()) {
      const size_t comma = sel.find(',', pos);
      std::string item =
          sel.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      const size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        fail(at, path,
             "a run selector is name=value[,name=value...] with the [vary] names, got " +
                 quote(sel));
      }
      std::string name = item.substr(0, eq);
      const std::string value = item.substr(eq + 1);
      const auto axis = std::find_if(axes.begin(), axes.end(), [&](const VaryAxis& a) {
        return a.short_name == name || a.key == name;
      });
      if (axis == axes.end()) {
        std::string names;
        for (const auto& a : axes) {
          names += (names.empty() ? "" : ", ") + a.short_name;
        }
        fail(at, path,
             "no varied key " + quote(name) +
                 (names.empty() ? " (there is no [vary])" : " (varied: " + names + ")"));
      }
      const bool has =
          std::any_of(axis->values.begin(), axis->values.end(),
                      [&](const VaryValue& v) { return format_vary_value(v) == value; });
      if (!has) {
        std::string vals;
        for (const auto& v : axis->values) {
          vals += (vals.empty() ? "" : ", ") + format_vary_value(v);
        }
        fail(at, path, "no run has " + axis->short_name + "=" + value + " (values: " + vals + ")");
      }
      pe.match.emplace_back(axis->short_name, value);
      if (comma == std::string::npos) {
        break;
      }
      pos = comma + 1;
    }
    for (const Entry& m : in_source_order(*sub)) {
      read_metric(pe, std::string(m.key->str()), *m.node, detail::where(*m.key, *m.node, file),
                  join_key(path, m.key->str()));
    }
    out.push_back(std::move(pe));
  }
  if (!all_runs.metrics.empty()) {
    out.insert(out.begin(), std::move(all_runs));
  }
  return out;
}

// --- The whole file --------------------------------------------------------------------------

void record_origins(const toml::table& t, const std::string& path, const std::string& file,
                    std::map<std::string, Location>& out) {
  for (auto&& [k, v] : t) {
    const std::string p = join_key(path, k.str());
    out[p] = detail::where(k, v, file);
    if (const auto* sub = v.as_table()) {
      record_origins(*sub, p, file, out);
    } else if (const auto* arr = v.as_array()) {
      for (size_t i = 0; i < arr->size(); ++i) {
        const toml::node& e = *arr->get(i);
        const std::string ep = p + "[" + std::to_string(i) + "]";
        if (e.source().begin) {
          out[ep] = detail::where(e, file);
        }
        if (const auto* et = e.as_table()) {
          record_origins(*et, ep, file, out);
        }
      }
    }
  }
}

// --- Links ([wire] and [[links]]) ------------------------------------------------------------

// rate, delay, loss and jitter as written in one table ([wire], a link, its forward / reverse).
struct WireKeys {
  std::optional<Rate> rate;
  std::optional<Duration> delay;
  std::optional<int64_t> loss_ppb;
  std::optional<Duration> jitter;
};

WireKeys read_wire_keys(TableReader& w) {
  WireKeys k;
  k.rate = w.opt_rate("rate");
  if (k.rate && k.rate->is_zero()) {
    fail(w.key_location("rate"), w.key_path("rate"), "must be > 0");
  }
  k.delay = w.opt_duration("delay");
  k.loss_ppb = w.opt_percent_ppb("loss");
  if (k.loss_ppb && *k.loss_ppb >= 1'000'000'000) {
    fail(w.key_location("loss"), w.key_path("loss"), "must be below 100%");
  }
  k.jitter = w.opt_duration("jitter");
  return k;
}

// `over` on top of `base` (a link's shared keys under its forward / reverse overrides).
WireKeys overlay(WireKeys base, const WireKeys& over) {
  base.rate = over.rate ? over.rate : base.rate;
  base.delay = over.delay ? over.delay : base.delay;
  base.loss_ppb = over.loss_ppb ? over.loss_ppb : base.loss_ppb;
  base.jitter = over.jitter ? over.jitter : base.jitter;
  return base;
}

// rate and delay are required (reported at `w`'s table), loss and jitter default to 0.
WireConfig complete_wire(const WireKeys& k, const TableReader& w) {
  WireConfig c;
  c.rate = w.required(k.rate, "rate");
  c.delay = w.required(k.delay, "delay");
  c.loss_ppb = k.loss_ppb.value_or(0);
  c.jitter = k.jitter.value_or(Duration::zero());
  return c;
}

// Where a link's direction `d` took its rate from: the override, else the shared key ([wire]'s in
// the two-host form).
std::string rate_key(const Scenario& s, size_t link, int d) {
  if (s.links.empty()) {
    return "wire.rate";
  }
  const std::string base = "links[" + std::to_string(link) + "]";
  const std::string over = base + (d == 0 ? ".forward.rate" : ".reverse.rate");
  return s.origins.count(over) != 0 ? over : base + ".rate";
}

// "host a", "router r's interface wan": whose NIC an interface is, in messages.
std::string owner(const Network& n, int iface) {
  const Network::Interface& i = n.interfaces()[static_cast<size_t>(iface)];
  const Network::Node& node = n.nodes()[static_cast<size_t>(i.node)];
  return node.router ? "router " + node.name + "'s interface " + i.name : "host " + node.name;
}

// Each traffic entry's hosts reach each other along the routes, both ways (data and replies).
template <class Entries>
void check_reachable(const Scenario& s, const Network& n, const char* kind, const Entries& es) {
  const auto index = [&](const std::string& host) {
    for (size_t i = 0; i < s.hosts.size(); ++i) {
      if (s.hosts[i].name == host) {
        return static_cast<int>(i);
      }
    }
    return Network::kNone;  // refused by the traffic reader already
  };
  for (size_t k = 0; k < es.size(); ++k) {
    const std::string key = std::string("traffic.") + kind + "[" + std::to_string(k) + "]";
    const int from = index(es[k].from);
    const int to = index(es[k].to);
    try {
      n.path(from, to);
      n.path(to, from);
    } catch (const std::invalid_argument& e) {
      fail(s.where(key), key,
           std::string(e.what()) + ": " + es[k].from + " and " + es[k].to +
               " must reach each other");
    }
  }
}

// The network as a whole (network.h), once the file is read: its structure and routes
// (network_of(), whose errors name the key), each link's rates against the NICs at both ends,
// and every traffic entry's reachability.
void check_network(const Scenario& s) {
  Network n;
  try {
    n = network_of(s);
  } catch (const NetworkError& e) {
    fail(s.where(e.key()), e.key(), e.message());
  }
  for (size_t k = 0; k < n.links().size(); ++k) {
    const Network::Link& l = n.links()[k];
    for (int d = 0; d < 2; ++d) {
      const Rate rate = l.wire[d]->rate;
      for (int iface : l.iface) {
        const NicConfig& nic = *n.interfaces()[static_cast<size_t>(iface)].nic;
        if (rate > nic.max_link_rate) {
          const std::string key = rate_key(s, k, d);
          fail(s.where(key), key,
               format_rate(rate) + " is faster than " + owner(n, iface) + "'s nic (" + nic.preset +
                   " links at up to " + format_rate(nic.max_link_rate) + ")");
        }
      }
    }
  }
  check_reachable(s, n, "tcp", s.traffic.tcp);
  check_reachable(s, n, "ping", s.traffic.ping);
  check_reachable(s, n, "udp_probe", s.traffic.udp_probe);
  check_reachable(s, n, "rrul", s.traffic.rrul);
  check_reachable(s, n, "udp_flood", s.traffic.udp_flood);
  check_reachable(s, n, "voip", s.traffic.voip);
  check_reachable(s, n, "transfers", s.traffic.transfers);
}

// [[links]] element: ends, the shared wire keys, `forward` / `reverse` overrides.
LinkConfig read_link(TableReader& l, const std::string& file) {
  LinkConfig c;
  const toml::node* ends = l.take("ends");
  if (ends == nullptr) {
    l.missing("ends");
  }
  const Location eat = l.key_location("ends");
  const toml::array& a = detail::to_array(*ends, eat, l.key_path("ends"));
  if (a.size() != 2) {
    fail(eat, l.key_path("ends"),
         "expected two ends [\"host\" or \"router.interface\", ...], got " + render(*ends));
  }
  for (size_t i = 0; i < 2; ++i) {
    c.ends[i] =
        detail::to_string(*a.get(i), eat, l.key_path("ends") + "[" + std::to_string(i) + "]");
  }
  const WireKeys shared = read_wire_keys(l);
  const auto direction = [&](std::string_view key) {
    const toml::table* t = l.opt_table(key);
    if (t == nullptr) {
      return complete_wire(shared, l);
    }
    TableReader d(*t, l.key_path(key), file);
    const WireKeys k = overlay(shared, read_wire_keys(d));
    d.finish();
    // A missing rate or delay is the link's (the shared keys), not the override's.
    return complete_wire(k, l);
  };
  c.forward = direction("forward");
  c.reverse = direction("reverse");
  l.finish();
  return c;
}

Scenario parse_tree(const toml::table& root, const Ctx& ctx, VaryRead* vary_out) {
  TableReader r(root, "", ctx.file);
  Scenario s;
  s.file = ctx.file;

  const toml::table* sc = r.opt_table("scenario");
  if (sc == nullptr) {
    r.missing("scenario");
  }
  {
    TableReader t(*sc, "scenario", ctx.file);
    s.name = t.required(t.opt_string("name"), "name");
    s.description = t.opt_string("description").value_or("");
    s.duration = t.required(t.opt_duration("duration"), "duration");
    if (s.duration <= Duration::zero()) {
      fail(t.key_location("duration"), t.key_path("duration"), "must be > 0");
    }
    const int64_t seed = t.opt_int("seed").value_or(1);
    if (seed < 0) {
      fail(t.key_location("seed"), t.key_path("seed"), "must be >= 0, got " + std::to_string(seed));
    }
    s.seed = static_cast<uint64_t>(seed);
    const int64_t repeat = t.opt_int("repeat").value_or(1);
    if (repeat < 1 || repeat > kMaxRepeat) {
      fail(t.key_location("repeat"), t.key_path("repeat"),
           "must be 1.." + std::to_string(kMaxRepeat) + ", got " + std::to_string(repeat));
    }
    s.repeat = static_cast<uint32_t>(repeat);
    t.finish();
  }

  const toml::table* hosts = r.opt_table("hosts");
  if (hosts == nullptr) {
    r.missing("hosts");
  }
  for (const Entry& e : in_source_order(*hosts)) {
    const std::string name(e.key->str());
    const std::string path = join_key("hosts", name);
    const Location at = detail::where(*e.key, *e.node, ctx.file);
    const toml::table& ht = detail::to_table(*e.node, at, path);
    s.hosts.push_back(read_host(name, ht, ctx));
  }
  if (const toml::table* routers = r.opt_table("routers")) {
    for (const Entry& e : in_source_order(*routers)) {
      const std::string name(e.key->str());
      const std::string path = join_key("routers", name);
      const Location at = detail::where(*e.key, *e.node, ctx.file);
      s.routers.push_back(read_router(name, detail::to_table(*e.node, at, path), ctx));
    }
  }
  if (const toml::array* links = r.opt_array("links")) {
    const Location at = r.key_location("links");
    for (size_t i = 0; i < links->size(); ++i) {
      const toml::node& e = *links->get(i);
      const std::string path = "links[" + std::to_string(i) + "]";
      const Location eat = e.source().begin ? detail::where(e, ctx.file) : at;
      TableReader l(detail::to_table(e, eat, path), path, ctx.file);
      s.links.push_back(read_link(l, ctx.file));
    }
  }
  if (s.links.empty()) {
    // The two-host form. Other host counts or routers without [[links]] are network_of()'s
    // error (after the whole file is read).
    const toml::table* wire = r.opt_table("wire");
    if (wire == nullptr && s.hosts.size() == 2 && s.routers.empty()) {
      r.missing("wire");
    }
    if (wire != nullptr) {
      TableReader w(*wire, "wire", ctx.file);
      s.wire = complete_wire(read_wire_keys(w), w);
      w.finish();
    }
  } else if (r.opt_table("wire") != nullptr) {
    fail(r.key_location("wire"), "wire",
         "[wire] is the two-host form's link; with [[links]] set rate, delay, loss and jitter on "
         "each link");
  }
  if (const toml::array* routes = r.opt_array("routes")) {
    const Location at = r.key_location("routes");
    for (size_t i = 0; i < routes->size(); ++i) {
      const toml::node& e = *routes->get(i);
      const std::string path = "routes[" + std::to_string(i) + "]";
      const Location eat = e.source().begin ? detail::where(e, ctx.file) : at;
      TableReader rr(detail::to_table(e, eat, path), path, ctx.file);
      RouteConfig rc;
      rc.node = rr.required(rr.opt_string("node"), "node");
      rc.to = rr.required(rr.opt_string("to"), "to");
      rc.via = rr.required(rr.opt_string("via"), "via");
      rr.finish();
      s.routes.push_back(std::move(rc));
    }
  }

  if (const toml::table* traffic = r.opt_table("traffic")) {
    TableReader t(*traffic, "traffic", ctx.file);
    s.traffic = read_traffic(t, s.hosts, s.routers, s.duration, ctx);
  }

  VaryRead vr;
  if (const toml::table* v = r.opt_table("vary")) {
    vr = read_vary(*v, s, ctx.file);
    s.vary = vr.axes;
  }
  if (const toml::table* p = r.opt_table("published")) {
    s.published = read_published(*p, s.vary, ctx.file);
  }
  r.finish();
  record_origins(root, "", ctx.file, s.origins);
  check_network(s);
  if (vary_out != nullptr) {
    *vary_out = std::move(vr);
  }
  return s;
}

toml::table parse_text(std::string_view text, const std::string& file) {
  if (text.size() > kMaxConfigBytes) {
    throw ConfigError(Location{file, 0, 0}, "",
                      "larger than " + std::to_string(kMaxConfigBytes) +
                          " bytes, the limit for a configuration file");
  }
  check_toml_depth(text, file);
  try {
    return toml::parse(text, std::string_view(file));
  } catch (const toml::parse_error& e) {
    fail(detail::where(e.source(), file), "", std::string(e.description()));
  }
}

// Whether path[i] is a preset slot: hosts.<h>.cpu / .nic, routers.<r>.cpu,
// routers.<r>.interfaces.<i>.nic (and with `or_qdisc`, the .qdisc next to a nic), written as a
// name or as a table.
bool is_preset_slot(const std::vector<PathPart>& path, size_t i, bool or_qdisc) {
  const std::string& top = path.front().key;
  const std::string& k = path[i].key;
  const bool nic_or_qdisc = k == "nic" || (or_qdisc && k == "qdisc");
  if (top == "hosts") {
    return i == 2 && (k == "cpu" || nic_or_qdisc);
  }
  if (top == "routers") {
    return (i == 2 && k == "cpu") || (i == 4 && path[2].key == "interfaces" && nic_or_qdisc);
  }
  return false;
}

// Whether path[0..i] names a host, a router or a router's interface (never created by [vary]).
bool names_a_node_or_interface(const std::vector<PathPart>& path, size_t i) {
  const std::string& top = path.front().key;
  return ((top == "hosts" || top == "routers") && i < 2) ||
         (top == "routers" && i < 4 && path.size() > 2 && path[2].key == "interfaces");
}

// Puts the `which`-th value of [vary] key `path` (moved, keeping its source position) at the
// key path in `root`, creating missing tables below hosts.<h> / routers.<r> / wire / scenario /
// traffic / links[i] / routes[i].
void place(toml::table& root, const std::vector<PathPart>& path, size_t which,
           const std::string& vary_key, const Location& at, const std::string& file,
           bool last_use) {
  toml::table* vary = root.get_as<toml::table>("vary");
  toml::array* arr = vary->get_as<toml::array>(vary_key);
  // A brace key places the same value at several paths: copies first, the value itself (with
  // its source position, for errors) last.
  toml::array copies;
  toml::node* value = arr->get(which);
  if (!last_use) {
    copies = *arr;
    value = copies.get(which);
  }
  const std::string kpath = join_key("vary", vary_key);

  toml::table* cur = &root;
  std::string so_far;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const PathPart& p = path[i];
    so_far = so_far.empty() ? p.key : so_far + "." + p.key;
    toml::node* next = cur->get(p.key);
    if (p.index) {
      toml::array* a = next != nullptr ? next->as_array() : nullptr;
      if (a == nullptr || *p.index >= a->size() || !a->get(*p.index)->is_table()) {
        fail(at, kpath, "no " + so_far + "[" + std::to_string(*p.index) + "] in the scenario");
      }
      cur = a->get(*p.index)->as_table();
      so_far += "[" + std::to_string(*p.index) + "]";
      continue;
    }
    if (next == nullptr) {
      if (names_a_node_or_interface(path, i)) {
        fail(at, kpath, "no " + so_far + " in the scenario");
      }
      cur->insert_or_assign(p.key, toml::table{});
      next = cur->get(p.key);
    }
    if (next->is_string() && is_preset_slot(path, i, /*or_qdisc=*/true)) {
      // nic = "name" becomes { preset = "name" } (qdisc: { kind = "..." }) to take a key.
      toml::table t;
      t.insert_or_assign(p.key == "qdisc" ? "kind" : "preset", std::move(*next));
      cur->insert_or_assign(p.key, std::move(t));
      next = cur->get(p.key);
    }
    if (!next->is_table()) {
      fail(at, kpath, so_far + " is " + render(*next) + ", not a table");
    }
    cur = next->as_table();
  }
  const PathPart& last = path.back();
  toml::node* existing = cur->get(last.key);
  const bool preset_slot = is_preset_slot(path, path.size() - 1, /*or_qdisc=*/false);
  if (existing != nullptr && existing->is_table() && preset_slot && value->is_string()) {
    // Varying hosts.a.nic over preset names keeps the overrides written for it.
    // Erase first: a re-used key would keep its old source position, and errors must point at
    // the [vary] value.
    existing->as_table()->erase("preset");
    existing->as_table()->insert_or_assign("preset", std::move(*value));
    return;
  }
  (void)file;
  cur->erase(last.key);
  cur->insert_or_assign(last.key, std::move(*value));
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string format_vary_value(const VaryValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? "true" : "false";
  }
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return std::to_string(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return detail::format_double(*d);
  }
  return std::get<std::string>(v);
}

std::string toml_vary_value(const VaryValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    return quote(*s);
  }
  return format_vary_value(v);
}

bool HostConfig::operator==(const HostConfig& o) const {
  return name == o.name && cpu_preset == o.cpu_preset && cpu_costs_equal(cpu, o.cpu) &&
         nic == o.nic && nic.platform.qdisc_bypass == o.nic.platform.qdisc_bypass &&
         qdisc == o.qdisc && tcp == o.tcp;
}

model::Wire::Params WireConfig::params(uint64_t seed) const {
  model::Wire::Params p;
  p.rate = rate;
  p.delay = delay;
  p.loss = static_cast<double>(loss_ppb) / 1e9;
  p.jitter = jitter;
  p.seed = seed;
  return p;
}

const HostConfig* Scenario::host(std::string_view n) const {
  for (const auto& h : hosts) {
    if (h.name == n) {
      return &h;
    }
  }
  return nullptr;
}

Location Scenario::where(std::string_view key_path) const {
  auto it = origins.find(std::string(key_path));
  if (it != origins.end()) {
    return it->second;
  }
  return Location{file, 0, 0};
}

bool Scenario::operator==(const Scenario& o) const {
  return name == o.name && description == o.description && duration == o.duration &&
         seed == o.seed && repeat == o.repeat && hosts == o.hosts && wire == o.wire &&
         routers == o.routers && links == o.links && routes == o.routes && traffic == o.traffic &&
         vary == o.vary && published == o.published;
}

LoadedScenario load_scenario_text(std::string_view text, const std::string& file_name,
                                  const LoadOptions& options) {
  PresetSearch search =
      options.standard_presets ? PresetSearch::standard(file_name) : PresetSearch::only({});
  if (!options.standard_presets) {
    search.base_dir = std::filesystem::path(file_name).parent_path().string();
  }
  search.dirs.insert(search.dirs.begin(), options.preset_dirs.begin(), options.preset_dirs.end());
  detail::PresetCache cache;
  Ctx ctx{file_name, &search, &cache};

  LoadedScenario out;
  VaryRead vr;
  {
    const toml::table root = parse_text(text, file_name);
    out.scenario = parse_tree(root, ctx, &vr);
  }

  // Runs: the cartesian product of the [vary] values, the first key outermost.
  size_t combinations = 1;
  for (const VaryAxis& a : vr.axes) {
    combinations *= a.values.size();
    if (combinations > 10'000) {
      fail(vr.at.front(), "vary", "more than 10000 combinations");
    }
  }
  std::vector<size_t> idx(vr.axes.size(), 0);
  while (true) {
    Run run;
    toml::table root = parse_text(text, file_name);
    for (size_t a = 0; a < vr.axes.size(); ++a) {
      for (size_t k = 0; k < vr.paths[a].size(); ++k) {
        place(root, vr.paths[a][k], idx[a], vr.axes[a].key, vr.at[a], file_name,
              k + 1 == vr.paths[a].size());
      }
      run.params.emplace_back(vr.axes[a].key, vr.axes[a].values[idx[a]]);
      run.label += (a == 0 ? "" : " ") + vr.axes[a].short_name + "=" +
                   format_vary_value(vr.axes[a].values[idx[a]]);
    }
    root.erase("vary");
    root.erase("published");
    run.scenario = vr.axes.empty() ? out.scenario : parse_tree(root, ctx, nullptr);
    if (vr.axes.empty()) {
      run.scenario.vary.clear();
      run.scenario.published.clear();
    }
    for (const PublishedEntry& pe : out.scenario.published) {
      bool match = true;
      for (const auto& [name, value] : pe.match) {
        for (size_t a = 0; a < vr.axes.size(); ++a) {
          if (vr.axes[a].short_name == name &&
              format_vary_value(vr.axes[a].values[idx[a]]) != value) {
            match = false;
          }
        }
      }
      if (match) {
        run.published.insert(run.published.end(), pe.metrics.begin(), pe.metrics.end());
      }
    }
    out.runs.push_back(std::move(run));
    // Next combination (odometer, last axis fastest).
    size_t a = vr.axes.size();
    while (a > 0) {
      --a;
      if (++idx[a] < vr.axes[a].values.size()) {
        break;
      }
      idx[a] = 0;
      if (a == 0) {
        return out;
      }
    }
    if (vr.axes.empty()) {
      return out;
    }
  }
}

LoadedScenario load_scenario_file(const std::string& path, const LoadOptions& options) {
  return load_scenario_text(read_config_text(path), path, options);
}

}  // namespace nicsim::config
