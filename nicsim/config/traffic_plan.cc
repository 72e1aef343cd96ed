#include "nicsim/config/traffic_plan.h"

#include <algorithm>

#include "nicsim/config/flent_tests.h"
#include "nicsim/config/flow_sizes.h"
#include "nicsim/report/emodel.h"

namespace nicsim::config {
namespace {

constexpr uint8_t kDscpCs1 = 8;
constexpr uint8_t kDscpCs5 = 40;
constexpr uint8_t kDscpEf = 46;

// Resolves an entry's hosts to indexes; `what` names the entry ("traffic.tcp[0]").
std::pair<size_t, size_t> endpoints(const Scenario& s, const std::string& from,
                                    const std::string& to, const std::string& what) {
  const auto index = [&](const std::string& name) {
    for (size_t i = 0; i < s.hosts.size(); ++i) {
      if (s.hosts[i].name == name) {
        return i;
      }
    }
    throw std::invalid_argument(what + ": unknown host '" + name + "'");
  };
  const size_t f = index(from);
  const size_t t = index(to);
  if (f == t) {
    throw std::invalid_argument(what + ": from and to are the same host");
  }
  return {f, t};
}

Duration stop_of(const std::optional<Duration>& stop, Duration end) {
  return stop ? min(*stop, end) : end;
}

// "ping", "ping-2", ... for the i-th [[traffic.ping]] (0-based).
std::string numbered(const char* base, size_t index) {
  return index == 0 ? std::string(base) : std::string(base) + "-" + std::to_string(index + 1);
}

// `base`, or base-2, base-3, ... when a probe of the plan already has that name.
std::string unique_probe_name(const TrafficPlan& plan, const std::string& base) {
  std::string name = base;
  for (int k = 2;; ++k) {
    const bool taken = std::any_of(plan.probes.begin(), plan.probes.end(),
                                   [&](const ProbePlan& p) { return p.name == name; });
    if (!taken) {
      return name;
    }
    name = base + "-" + std::to_string(k);
  }
}

template <typename ProbeConfig>
ProbePlan probe_of(const Scenario& s, const ProbeConfig& c, std::string name, bool icmp,
                   const std::string& what) {
  ProbePlan p;
  p.name = std::move(name);
  p.icmp = icmp;
  std::tie(p.from, p.to) = endpoints(s, c.from, c.to, what);
  p.interval = c.interval;
  p.size = c.size;
  p.start = c.start;
  p.stop = stop_of(c.stop, s.duration);
  p.dscp = c.dscp;
  return p;
}

std::string entry(const char* kind, size_t i) {
  return std::string("traffic.") + kind + "[" + std::to_string(i) + "]";
}

}  // namespace

std::string flow_ecn(const std::optional<std::string>& ecn, const std::string& cc,
                     const TcpConfig& sender) {
  if (ecn) {
    return *ecn;
  }
  if (cc == "dctcp") {
    return "classic";
  }
  if (cc == "prague") {
    return "l4s";
  }
  return sender.ecn ? "classic" : "off";
}

TrafficPlan plan(const Scenario& s) {
  TrafficPlan plan;
  plan.duration = s.duration;
  for (const HostConfig& h : s.hosts) {
    plan.hosts.push_back(h.name);
  }
  plan.network = !s.links.empty();
  for (size_t i = 0; i < s.traffic.tcp.size(); ++i) {
    const TcpFlowConfig& c = s.traffic.tcp[i];
    const auto [from, to] = endpoints(s, c.from, c.to, entry("tcp", i));
    for (int64_t k = 0; k < c.streams; ++k) {
      const std::string cc = c.cc.value_or(s.hosts[from].tcp.cc);
      plan.flows.push_back(FlowPlan{from, to, c.dscp, cc, c.start, stop_of(c.stop, s.duration), "",
                                    flow_ecn(c.ecn, cc, s.hosts[from].tcp)});
    }
  }
  for (size_t i = 0; i < s.traffic.ping.size(); ++i) {
    plan.probes.push_back(
        probe_of(s, s.traffic.ping[i], numbered("ping", i), true, entry("ping", i)));
  }
  for (size_t i = 0; i < s.traffic.udp_probe.size(); ++i) {
    plan.probes.push_back(
        probe_of(s, s.traffic.udp_probe[i], numbered("udp", i), false, entry("udp_probe", i)));
  }
  for (size_t i = 0; i < s.traffic.udp_flood.size(); ++i) {
    const UdpFloodConfig& c = s.traffic.udp_flood[i];
    FloodPlan f;
    f.name = numbered("udp_flood", i);
    std::tie(f.from, f.to) = endpoints(s, c.from, c.to, entry("udp_flood", i));
    f.rate = c.rate;
    f.size = c.size;
    f.start = c.start;
    f.stop = stop_of(c.stop, s.duration);
    f.dscp = c.dscp;
    plan.floods.push_back(std::move(f));
  }
  for (size_t i = 0; i < s.traffic.voip.size(); ++i) {
    const VoipConfig& c = s.traffic.voip[i];
    const report::VoipCodec* codec = report::voip_codec(c.codec);
    if (codec == nullptr) {
      throw std::invalid_argument(entry("voip", i) + ": unknown codec '" + c.codec + "'");
    }
    FloodPlan f;
    f.name = numbered("voip", i);
    std::tie(f.from, f.to) = endpoints(s, c.from, c.to, entry("voip", i));
    // One packet per interval: payload * 8 bits per interval, in bit/s (exact for 20 ms).
    f.rate = Rate::bps(
        static_cast<uint64_t>(codec->payload * 8 * 1'000'000'000 / codec->interval.count_ns()));
    f.size = codec->payload;
    f.start = c.start;
    f.stop = stop_of(c.stop, s.duration);
    f.dscp = c.dscp;
    f.codec = c.codec;
    plan.floods.push_back(std::move(f));
  }
  for (size_t i = 0; i < s.traffic.transfers.size(); ++i) {
    const TransfersConfig& c = s.traffic.transfers[i];
    TransferSetPlan set;
    set.name = numbered("transfers", i);
    std::tie(set.client, set.server) = endpoints(s, c.from, c.to, entry("transfers", i));
    set.dscp = c.dscp;
    set.cc = c.cc.value_or(s.hosts[set.server].tcp.cc);
    set.ecn = flow_ecn(std::nullopt, set.cc, s.hosts[set.server].tcp);
    const size_t index = plan.transfer_sets.size();
    plan.transfer_sets.push_back(std::move(set));
    // Each entry its own stream of random numbers, from the run's seed.
    const uint64_t seed = s.seed ^ (0x9E3779B97F4A7C15ull * (i + 1));
    for (const TransferDraw& d : draw_transfers(c.sizes, c.size, 1.0 / c.interval.to_seconds(),
                                                c.start, stop_of(c.stop, s.duration), seed)) {
      plan.transfers.push_back(TransferPlan{index, d.at, d.size});
    }
  }
  for (size_t i = 0; i < s.traffic.rrul.size(); ++i) {
    const RrulConfig& c = s.traffic.rrul[i];
    const auto [client, server] = endpoints(s, c.from, c.to, entry("rrul", i));
    const TcpConfig& ct = s.hosts[client].tcp;
    const TcpConfig& st = s.hosts[server].tcp;
    if (c.test == "rrul") {
      add_rrul(plan, RrulPlan{client, server, c.start, c.load_start(), c.load_end(), c.end(),
                              c.probe_interval, ct.cc, st.cc, flow_ecn(std::nullopt, ct.cc, ct),
                              flow_ecn(std::nullopt, st.cc, st)});
    } else {
      FlentTestPlan ft{c.test,  client,           server,    c.start, c.load_start(), c.load_end(),
                       c.end(), c.probe_interval, c.streams, ct.cc,   st.cc,          &ct,
                       &st};
      ft.markings = c.markings;
      if (c.rate) {
        ft.udp_rate = *c.rate;
        ft.burst_rate = *c.rate;
      }
      ft.udp_size = c.size.value_or(ft.udp_size);
      if (c.test == "rtt_fair") {
        // flent's HOSTS: `to` first, then every other host but the client, in scenario order.
        ft.servers.push_back(server);
        for (size_t h = 0; h < s.hosts.size(); ++h) {
          if (h != client && h != server) {
            ft.servers.push_back(h);
          }
        }
      }
      try {
        add_flent_test(plan, ft);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(entry("flent", i) + ": " + e.what());
      }
      plan.flent_test = c.test;
    }
    plan.interval = c.bin;  // rrul's throughput bins are the run's intervals
  }
  return plan;
}

void add_rrul(TrafficPlan& plan, const RrulPlan& r) {
  struct Class {
    const char* name;
    uint8_t dscp;
  };
  // rrul.conf's DATA_SETS order: TCP upload BE, BK, CS5, EF; downloads the same.
  static constexpr Class kFlows[] = {
      {"BE", 0}, {"BK", kDscpCs1}, {"CS5", kDscpCs5}, {"EF", kDscpEf}};
  for (const bool upload : {true, false}) {
    for (const Class& k : kFlows) {
      FlowPlan f;
      f.from = upload ? r.client : r.server;
      f.to = upload ? r.server : r.client;
      f.dscp = k.dscp;
      f.cc = upload ? r.client_cc : r.server_cc;
      f.ecn = upload ? r.client_ecn : r.server_ecn;
      f.start = r.load_start;
      f.stop = r.load_end;
      f.name = std::string(upload ? "TCP upload " : "TCP download ") + k.name;
      plan.flows.push_back(std::move(f));
    }
  }
  // Then 'Ping (ms) UDP EF', 'UDP BK', 'UDP BE' (irtt/netperf UDP_RR) and 'Ping (ms) ICMP', over
  // idle + load + idle, with ping's and irtt's default sizes; named as docs/rrul.md says (the
  // flent export maps them to flent's names).
  static constexpr Class kProbes[] = {{"udp_ef", kDscpEf}, {"udp_bk", kDscpCs1}, {"udp_be", 0}};
  const UdpProbeConfig udp_defaults;
  const PingConfig ping_defaults;
  const auto probe = [&](const char* name, bool icmp, int64_t size, uint8_t dscp) {
    ProbePlan p;
    p.name = unique_probe_name(plan, name);
    p.icmp = icmp;
    p.from = r.client;
    p.to = r.server;
    p.interval = r.probe_interval;
    p.size = size;
    p.start = r.start;
    p.stop = r.end;
    p.dscp = dscp;
    plan.probes.push_back(std::move(p));
  };
  for (const Class& k : kProbes) {
    probe(k.name, false, udp_defaults.size, k.dscp);
  }
  probe("ping", true, ping_defaults.size, 0);
  plan.phases.push_back(PhasePlan{"idle_before", r.start, r.load_start});
  plan.phases.push_back(PhasePlan{"load", r.load_start, r.load_end});
  plan.phases.push_back(PhasePlan{"idle_after", r.load_end, r.end});
}

report::RunInfo run_info(const Run& run, std::string backend) {
  report::RunInfo info;
  info.label = run.label;
  for (const auto& [key, value] : run.params) {
    info.params.push_back(report::RunParam{key, value});
  }
  info.backend = std::move(backend);
  info.seed = run.scenario.seed;
  info.config_toml = dump(run.scenario);
  for (const auto& [metric, value] : run.published) {
    info.published.emplace_back(metric, value);
  }
  return info;
}

report::RunLayout recorder_layout(const TrafficPlan& plan, Duration default_interval) {
  // a->b: the sender was written before the receiver (host 0 -> host 1 with two hosts).
  const auto dir = [](size_t from, size_t to) {
    return from < to ? report::Direction::kAtoB : report::Direction::kBtoA;
  };
  // Host names for a network's results; "" keeps the two-host form's results as they were.
  const auto name = [&](size_t host) { return plan.network ? plan.hosts.at(host) : std::string(); };
  report::RunLayout l;
  l.duration = plan.duration;
  l.interval = plan.interval.value_or(default_interval);
  l.network = plan.network;
  l.flent_test = plan.flent_test;
  for (const FlowPlan& f : plan.flows) {
    l.flows.push_back(report::FlowSpec{dir(f.from, f.to), f.name, f.dscp, f.start, f.stop,
                                       name(f.from), name(f.to)});
  }
  for (const ProbePlan& p : plan.probes) {
    l.probes.push_back(report::ProbeSpec{p.name, p.icmp, dir(p.from, p.to), p.dscp, !p.icmp,
                                         name(p.from), name(p.to)});
  }
  for (const PhasePlan& ph : plan.phases) {
    l.phases.push_back(report::PhaseSpec{ph.name, ph.start, ph.end});
  }
  for (const TransferSetPlan& t : plan.transfer_sets) {
    l.transfer_sets.push_back(report::TransferSetSpec{t.name, dir(t.server, t.client), t.dscp,
                                                      name(t.client), name(t.server)});
  }
  for (const FloodPlan& f : plan.floods) {
    l.floods.push_back(report::FloodSpec{f.name, dir(f.from, f.to), f.dscp,
                                         static_cast<double>(f.rate.bits_per_sec()), f.size,
                                         f.start, f.stop, name(f.from), name(f.to), f.codec});
  }
  return l;
}

}  // namespace nicsim::config
