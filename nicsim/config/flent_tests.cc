#include "nicsim/config/flent_tests.h"

#include <algorithm>
#include <stdexcept>

#include "nicsim/config/toml_util.h"
#include "nicsim/report/emodel.h"

namespace nicsim::config {
namespace {

constexpr uint8_t kCs1 = 8;
constexpr uint8_t kCs6 = 48;
constexpr uint8_t kEf = 46;

const std::vector<FlentTestInfo> kTests = {
    {"rrul", "4 up + 4 down TCP marked BE, BK, CS5, EF; UDP EF, BK, BE and ICMP pings", false},
    {"rrul_be", "4 up + 4 down TCP, all best effort; 3 UDP BE and ICMP pings", false},
    {"tcp_nup", "N TCP uploads (--streams) with ICMP ping; Jain's index over the streams", true},
    {"tcp_ndown", "N TCP downloads (--streams) with ICMP ping; Jain's index", true},
    {"tcp_bidirectional", "one TCP upload and one download with ICMP ping", false},
    {"cubic_bbr", "Cubic vs BBR, BE and CS1, both directions; UDP BE/CS1/CS6 and ICMP", false},
    {"cubic_reno", "Cubic vs Reno, BE and CS1, both directions; UDP BE/CS1/CS6 and ICMP", false},
    {"cubic_dctcp", "Cubic vs DCTCP, BE and CS1, both directions; UDP BE/CS1/CS6 and ICMP", false},
    {"udp_flood", "constant-rate UDP upload (--rate, --size) with ICMP ping"},
    {"voip", "one G.711 VoIP stream (172 B every 20 ms): one-way delay, jitter, loss, MOS", false,
     true},
    {"bursts", "UDP bursts (5 s of 500 B at --rate) every --delay; UDP EF/BK/BE, ICMP", false,
     true},
    {"rrul_var", "N up + N down TCP (--streams) marked by --markings, a UDP probe each, ICMP",
     true},
    {"rtt_fair", "one upload + download + ping per server (2-4 hosts at different RTTs)", false,
     false, true},
};

struct Ctx {
  TrafficPlan& plan;
  const FlentTestPlan& t;
  void flow(bool upload, const std::string& name, uint8_t dscp, const std::string& cc = "") {
    flow_to(t.server, upload, name, dscp, cc);
  }
  void flow_to(size_t server, bool upload, const std::string& name, uint8_t dscp,
               const std::string& cc = "") {
    FlowPlan f;
    f.from = upload ? t.client : server;
    f.to = upload ? server : t.client;
    f.dscp = dscp;
    f.cc = !cc.empty() ? cc : upload ? t.client_cc : t.server_cc;
    const TcpConfig* sender = upload ? t.client_tcp : t.server_tcp;
    f.ecn = sender != nullptr ? flow_ecn(std::nullopt, f.cc, *sender) : "off";
    f.start = t.load_start;
    f.stop = t.load_end;
    f.name = name;
    plan.flows.push_back(std::move(f));
  }
  // `name` is the result key; the flent export turns "udp_cs1" into "Ping (ms) UDP CS1" and
  // the ICMP probe into "Ping (ms) ICMP".
  void probe(const std::string& name, bool icmp, uint8_t dscp) {
    probe_to(t.server, name, icmp, dscp, t.end);
  }
  void probe_to(size_t server, const std::string& name, bool icmp, uint8_t dscp, Duration stop) {
    ProbePlan p;
    p.name = name;
    // Unique among the plan's probes (a scenario's own [[traffic.ping]] is "ping" too).
    for (int k = 2; std::any_of(plan.probes.begin(), plan.probes.end(),
                                [&](const ProbePlan& q) { return q.name == p.name; });
         ++k) {
      p.name = name + "-" + std::to_string(k);
    }
    p.icmp = icmp;
    p.from = t.client;
    p.to = server;
    p.interval = t.probe_interval;
    p.size = icmp ? PingConfig{}.size : UdpProbeConfig{}.size;
    p.start = t.start;
    p.stop = stop;
    p.dscp = dscp;
    plan.probes.push_back(std::move(p));
  }
  void flood(const std::string& name, Rate rate, int64_t size, Duration start, Duration stop,
             uint8_t dscp, const std::string& codec = "") {
    FloodPlan f;
    f.name = name;
    f.from = t.client;
    f.to = t.server;
    f.rate = rate;
    f.size = size;
    f.start = start;
    f.stop = stop;
    f.dscp = dscp;
    f.codec = codec;
    plan.floods.push_back(std::move(f));
  }
  // LENGTH: the tests whose TOTAL_LENGTH is LENGTH (voip, bursts) run [start, start + LENGTH).
  Duration length() const { return t.load_end - t.load_start; }
  Duration delay() const { return t.load_start - t.start; }
};

// "CS1" for the DSCP names flent's markings use, else the number.
std::string marking_name(uint8_t dscp) {
  if (dscp == 0) {
    return "CS0";
  }
  if (dscp % 8 == 0) {
    return "CS" + std::to_string(dscp / 8);
  }
  return dscp == kEf ? "EF" : std::to_string(dscp);
}

// udp_flood.conf: 'UDP upload' (iperf -u) for LENGTH after DELAY; ICMP over TOTAL_LENGTH.
void add_udp_flood(Ctx& c) {
  c.flood("UDP upload", c.t.udp_rate, c.t.udp_size, c.t.load_start, c.t.load_end, 0);
  c.probe("ping", true, 0);
}

// voip.conf + voip.inc: one stream 'VoIP' for LENGTH; flent's VoipRunner sends irtt packets of
// 172 B every 20 ms (G.711), marked voip_marking (none by default).
void add_voip(Ctx& c) {
  const report::VoipCodec* g711 = report::voip_codec("g711");
  const Rate rate = Rate::bps(
      static_cast<uint64_t>(g711->payload * 8 * 1'000'000'000 / g711->interval.count_ns()));
  c.flood("VoIP", rate, g711->payload, c.t.start, c.t.start + c.length(), 0, "g711");
}

// bursts.conf: UDP probes EF, BK, BE and ICMP for LENGTH; burst i at DELAY*(i+1) + 5 s * i.
void add_bursts(Ctx& c) {
  const Duration end = c.t.start + c.length();
  c.probe_to(c.t.server, "udp_ef", false, kEf, end);
  c.probe_to(c.t.server, "udp_bk", false, kCs1, end);
  c.probe_to(c.t.server, "udp_be", false, 0, end);
  c.probe_to(c.t.server, "ping", true, 0, end);
  const Duration period = c.delay() + kFlentBurstLength;
  const int64_t bursts = period > Duration::zero() ? c.length().count_ns() / period.count_ns() : 0;
  for (int64_t i = 0; i < bursts; ++i) {
    const Duration at = c.t.start + c.delay() * (i + 1) + kFlentBurstLength * i;
    c.flood("Burst " + std::to_string(i), c.t.burst_rate, kFlentBurstSize, at,
            at + kFlentBurstLength, 0);
  }
}

// rrul_var.conf: 'Ping (ms)::ICMP', then per stream i 'Ping (ms)::UDP <label>' (udp_rtt with
// the stream's marking), 'TCP upload::<label>', 'TCP download::<label>'; label "i (MARK)".
void add_rrul_var(Ctx& c) {
  c.probe("Ping (ms)::ICMP", true, 0);
  for (int64_t i = 0; i < c.t.streams; ++i) {
    const size_t k = static_cast<size_t>(i);
    const uint8_t dscp = k < c.t.markings.size() ? c.t.markings[k] : 0;
    const std::string label = std::to_string(i) + " (" + marking_name(dscp) + ")";
    c.probe("Ping (ms)::UDP " + label, false, dscp);
    c.flow(true, "TCP upload::" + label, dscp);
    c.flow(false, "TCP download::" + label, dscp);
  }
}

// rtt_fair.conf + rtt_fair.inc: per host HOSTS[i] 'TCP upload <label> <host>', 'TCP download
// <label> <host>' (labels BE1, BE2, BK1, BK2; markings CS0, CS0, CS1, CS1) and 'Ping (ms)
// ICMP<i+1> <host>'.
void add_rtt_fair(Ctx& c) {
  if (c.t.servers.size() < 2) {
    throw std::invalid_argument(
        "rtt_fair needs one client and at least two servers at different RTTs (flent's HOSTS; "
        "scenarios/networks/rtt-fair.toml has four), got " +
        std::to_string(c.t.servers.size()) + " server");
  }
  static constexpr const char* kLabels[] = {"BE1", "BE2", "BK1", "BK2"};
  static constexpr uint8_t kMarks[] = {0, 0, kCs1, kCs1};
  // flent always runs four (min_host_count(4) fills HOSTS up, repeating; a file read back with
  // fewer HOSTS names its series after 'dummy' hosts): fewer servers are repeated in order.
  for (size_t i = 0; i < kRttFairMaxServers; ++i) {
    const size_t s = c.t.servers[i % c.t.servers.size()];
    const std::string host = s < c.plan.hosts.size() ? c.plan.hosts[s] : std::to_string(s);
    c.flow_to(s, true, std::string("TCP upload ") + kLabels[i] + " " + host, kMarks[i]);
    c.flow_to(s, false, std::string("TCP download ") + kLabels[i] + " " + host, kMarks[i]);
    c.probe_to(s, "Ping (ms) ICMP" + std::to_string(i + 1) + " " + host, true, 0, c.t.end);
  }
}

// flent's cc duels: per direction, Cubic and the other marked BE then CS1 (DATA_SETS order:
// Cubic BE, Other BE, Cubic CS1, Other CS1).
void add_duel(Ctx& c, const std::string& label, const std::string& cc) {
  for (const bool upload : {true, false}) {
    const std::string dir = upload ? "TCP upload " : "TCP download ";
    for (const auto& [mark, dscp] : {std::pair<const char*, uint8_t>{"BE", 0}, {"CS1", kCs1}}) {
      c.flow(upload, dir + "Cubic " + mark, dscp, "cubic");
      c.flow(upload, dir + label + " " + mark, dscp, cc);
    }
  }
  c.probe("udp_be", false, 0);
  c.probe("udp_cs1", false, kCs1);
  c.probe("udp_cs6", false, kCs6);
  c.probe("ping", true, 0);
}

}  // namespace

const std::vector<FlentTestInfo>& flent_tests() { return kTests; }

std::vector<uint8_t> parse_flent_markings(std::string_view list) {
  std::vector<uint8_t> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string item(list.substr(pos, comma - pos));
    std::optional<uint8_t> dscp = detail::dscp_from_name(item);
    if (!dscp && !item.empty() && item.size() <= 2 &&
        std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
        std::stoi(item) <= 63) {
      dscp = static_cast<uint8_t>(std::stoi(item));
    }
    if (!dscp) {
      throw std::invalid_argument("markings: '" + item +
                                  "' is neither a DSCP name (CS0..CS7, EF, AF11..AF43, BE) nor "
                                  "0..63");
    }
    out.push_back(*dscp);
    pos = comma + 1;
  }
  return out;
}

std::string format_flent_markings(const std::vector<uint8_t>& dscps) {
  std::string out;
  for (const uint8_t d : dscps) {
    out += (out.empty() ? "" : ",") + marking_name(d);
  }
  return out;
}

Duration flent_total_length(std::string_view name, Duration length, Duration delay) {
  const FlentTestInfo* info = find_flent_test(name);
  return info != nullptr && info->total_is_length ? length : length + delay + delay;
}

const FlentTestInfo* find_flent_test(std::string_view name) {
  for (const FlentTestInfo& t : kTests) {
    if (t.name == name) {
      return &t;
    }
  }
  return nullptr;
}

void add_flent_test(TrafficPlan& plan, const FlentTestPlan& t) {
  if (find_flent_test(t.test) == nullptr) {
    throw std::invalid_argument("unknown flent test '" + t.test + "'");
  }
  if (t.test == "rrul") {
    add_rrul(plan,
             RrulPlan{t.client, t.server, t.start, t.load_start, t.load_end, t.end,
                      t.probe_interval, t.client_cc, t.server_cc,
                      t.client_tcp ? flow_ecn(std::nullopt, t.client_cc, *t.client_tcp) : "off",
                      t.server_tcp ? flow_ecn(std::nullopt, t.server_cc, *t.server_tcp) : "off"});
    return;
  }
  Ctx c{plan, t};
  if (t.test == "rrul_be") {
    for (const bool upload : {true, false}) {
      const std::string dir = upload ? "TCP upload BE" : "TCP download BE";
      c.flow(upload, dir, 0);
      for (int k = 2; k <= 4; ++k) {
        c.flow(upload, dir + std::to_string(k), 0);
      }
    }
    for (int k = 1; k <= 3; ++k) {
      c.probe("udp_be" + std::to_string(k), false, 0);
    }
    c.probe("ping", true, 0);
  } else if (t.test == "tcp_nup" || t.test == "tcp_ndown") {
    const bool upload = t.test == "tcp_nup";
    for (int64_t k = 1; k <= t.streams; ++k) {
      c.flow(upload, std::string(upload ? "TCP upload::" : "TCP download::") + std::to_string(k),
             0);
    }
    c.probe("ping", true, 0);
  } else if (t.test == "tcp_bidirectional") {
    c.flow(false, "TCP download", 0);
    c.flow(true, "TCP upload", 0);
    c.probe("ping", true, 0);
  } else if (t.test == "cubic_bbr") {
    add_duel(c, "BBR", "bbr");
  } else if (t.test == "cubic_reno") {
    add_duel(c, "Reno", "reno");
  } else if (t.test == "cubic_dctcp") {
    add_duel(c, "dctcp", "dctcp");
  } else if (t.test == "udp_flood") {
    add_udp_flood(c);
  } else if (t.test == "rrul_var") {
    add_rrul_var(c);
  } else if (t.test == "rtt_fair") {
    add_rtt_fair(c);
  } else if (t.test == "voip") {
    add_voip(c);
    return;  // no DELAY: no idle phases
  } else if (t.test == "bursts") {
    add_bursts(c);
    return;
  }
  plan.phases.push_back(PhasePlan{"idle_before", t.start, t.load_start});
  plan.phases.push_back(PhasePlan{"load", t.load_start, t.load_end});
  plan.phases.push_back(PhasePlan{"idle_after", t.load_end, t.end});
}

}  // namespace nicsim::config
