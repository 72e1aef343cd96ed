#include "nicsim/config/flent_tests.h"

#include <algorithm>
#include <stdexcept>

namespace nicsim::config {
namespace {

constexpr uint8_t kCs1 = 8;
constexpr uint8_t kCs6 = 48;

const std::vector<FlentTestInfo> kTests = {
    {"rrul", "4 up + 4 down TCP marked BE, BK, CS5, EF; UDP EF, BK, BE and ICMP pings", false},
    {"rrul_be", "4 up + 4 down TCP, all best effort; 3 UDP BE and ICMP pings", false},
    {"tcp_nup", "N TCP uploads (--streams) with ICMP ping; Jain's index over the streams", true},
    {"tcp_ndown", "N TCP downloads (--streams) with ICMP ping; Jain's index", true},
    {"tcp_bidirectional", "one TCP upload and one download with ICMP ping", false},
    {"cubic_bbr", "Cubic vs BBR, BE and CS1, both directions; UDP BE/CS1/CS6 and ICMP", false},
    {"cubic_reno", "Cubic vs Reno, BE and CS1, both directions; UDP BE/CS1/CS6 and ICMP", false},
    {"cubic_dctcp", "Cubic vs DCTCP, BE and CS1, both directions; UDP BE/CS1/CS6 and ICMP", false},
};

struct Ctx {
  TrafficPlan& plan;
  const FlentTestPlan& t;
  void flow(bool upload, const std::string& name, uint8_t dscp, const std::string& cc = "") {
    FlowPlan f;
    f.from = upload ? t.client : t.server;
    f.to = upload ? t.server : t.client;
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
    p.to = t.server;
    p.interval = t.probe_interval;
    p.size = icmp ? PingConfig{}.size : UdpProbeConfig{}.size;
    p.start = t.start;
    p.stop = t.end;
    p.dscp = dscp;
    plan.probes.push_back(std::move(p));
  }
};

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
  }
  plan.phases.push_back(PhasePlan{"idle_before", t.start, t.load_start});
  plan.phases.push_back(PhasePlan{"load", t.load_start, t.load_end});
  plan.phases.push_back(PhasePlan{"idle_after", t.load_end, t.end});
}

}  // namespace nicsim::config
