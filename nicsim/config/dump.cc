// dump(Scenario): the effective configuration as TOML, every value explicit with its unit, in
// the layout of a scenario file so that it parses back to an equal Scenario.

#include <string>
#include <variant>

#include "nicsim/config/flent_tests.h"
#include "nicsim/config/presets.h"
#include "nicsim/config/qdisc_internal.h"
#include "nicsim/config/scenario.h"
#include "nicsim/config/toml_util.h"
#include "nicsim/config/units.h"

namespace nicsim::config {

using detail::join_key;
using detail::quote;

namespace {

std::string dur(Duration d) { return quote(format_duration(d)); }

void window(std::string& out, Duration start, const std::optional<Duration>& stop) {
  out += "start = " + dur(start) + "\n";
  if (stop) {
    out += "stop = " + dur(*stop) + "\n";
  }
}

// [<path>.cpu]: the preset and every cost the node pays (a router's include per_forward and
// per_qdisc_op).
void cpu(std::string& out, const std::string& path, const std::string& preset,
         const model::CpuCosts& costs, CpuRole role) {
  out += "\n[" + join_key(path, "cpu") + "]\n";
  out += "preset = " + quote(preset) + "\n";
  out += dump_cpu(costs, role);
}

// [<path>.nic] and [<path>.qdisc] of a host or a router's interface.
void nic_and_qdisc(std::string& out, const std::string& path, const NicConfig& nic,
                   const QdiscConfig& qdisc) {
  out += "\n[" + join_key(path, "nic") + "]\n";
  out += "preset = " + quote(nic.preset) + "\n";
  out += dump_nic(nic);
  out += "\n" + detail::dump_qdisc(qdisc, join_key(path, "qdisc"));
}

// rate, delay, loss, jitter of one direction; with `unless`, only the keys that differ from it
// (a link's reverse overrides).
void wire_keys(std::string& out, const WireConfig& w, const WireConfig* unless) {
  if (unless == nullptr || w.rate != unless->rate) {
    out += "rate = " + quote(format_rate(w.rate)) + "\n";
  }
  if (unless == nullptr || w.delay != unless->delay) {
    out += "delay = " + dur(w.delay) + "\n";
  }
  if (unless == nullptr || w.loss_ppb != unless->loss_ppb) {
    out += "loss = " + quote(format_percent_ppb(w.loss_ppb)) + "\n";
  }
  if (unless == nullptr || w.jitter != unless->jitter) {
    out += "jitter = " + dur(w.jitter) + "\n";
  }
}

std::string published_value(const PublishedValue& v) {
  if (const auto* d = std::get_if<double>(&v)) {
    return detail::format_double(*d);
  }
  return quote(std::get<std::string>(v));
}

}  // namespace

std::string dump(const Scenario& s) {
  std::string out = "# Effective configuration (nicsim): every value explicit, with its unit.\n";
  out += "[scenario]\n";
  out += "name = " + quote(s.name) + "\n";
  if (!s.description.empty()) {
    out += "description = " + quote(s.description) + "\n";
  }
  out += "duration = " + dur(s.duration) + "\n";
  out += "seed = " + std::to_string(s.seed) + "\n";
  if (s.repeat != 1) {  // only when set: effective configurations of older files unchanged
    out += "repeat = " + std::to_string(s.repeat) + "\n";
  }

  for (const HostConfig& h : s.hosts) {
    const std::string hp = join_key("hosts", h.name);
    cpu(out, hp, h.cpu_preset, h.cpu, CpuRole::kHost);
    nic_and_qdisc(out, hp, h.nic, h.qdisc);
    out += "\n[" + join_key(hp, "tcp") + "]\n";
    out += "cc = " + quote(h.tcp.cc) + "\n";
    out += "mss = " + quote(format_bytes(h.tcp.mss)) + "\n";
    out += "rmem = " + quote(format_bytes(h.tcp.rmem)) + "\n";
    out += "wmem = " + quote(format_bytes(h.tcp.wmem)) + "\n";
    out += "tsq_limit = " + quote(format_bytes(h.tcp.tsq_limit)) + "\n";
    out += std::string("pacing = ") + (h.tcp.pacing ? "true" : "false") + "\n";
    out += "pacing_ss_ratio = " + std::to_string(h.tcp.pacing_ss_ratio) + "\n";
    out += "pacing_ca_ratio = " + std::to_string(h.tcp.pacing_ca_ratio) + "\n";
    out += std::string("ecn = ") + (h.tcp.ecn ? "true" : "false") + "\n";
    out += "init_cwnd = " + std::to_string(h.tcp.init_cwnd) + "\n";
  }

  if (s.links.empty()) {
    out += "\n[wire]\n";
    wire_keys(out, s.wire, nullptr);
  }
  for (const RouterConfig& r : s.routers) {
    const std::string rp = join_key("routers", r.name);
    cpu(out, rp, r.cpu_preset, r.cpu, CpuRole::kRouter);
    for (const RouterInterfaceConfig& i : r.interfaces) {
      nic_and_qdisc(out, join_key(join_key(rp, "interfaces"), i.name), i.nic, i.qdisc);
    }
  }
  for (const LinkConfig& l : s.links) {
    out += "\n[[links]]\nends = [" + quote(l.ends[0]) + ", " + quote(l.ends[1]) + "]\n";
    wire_keys(out, l.forward, nullptr);
    if (!(l.reverse == l.forward)) {
      std::string rev;
      wire_keys(rev, l.reverse, &l.forward);
      out += "[links.reverse]\n" + rev;
    }
  }
  for (const RouteConfig& r : s.routes) {
    out += "\n[[routes]]\nnode = " + quote(r.node) + "\nto = " + quote(r.to) +
           "\nvia = " + quote(r.via) + "\n";
  }

  for (const TcpFlowConfig& f : s.traffic.tcp) {
    out += "\n[[traffic.tcp]]\nfrom = " + quote(f.from) + "\nto = " + quote(f.to) + "\n";
    out += "streams = " + std::to_string(f.streams) + "\n";
    window(out, f.start, f.stop);
    out += "dscp = " + detail::dscp_to_toml(f.dscp) + "\n";
    if (f.cc) {
      out += "cc = " + quote(*f.cc) + "\n";
    }
    if (f.ecn) {
      out += "ecn = " + quote(*f.ecn) + "\n";
    }
  }
  for (const PingConfig& p : s.traffic.ping) {
    out += "\n[[traffic.ping]]\nfrom = " + quote(p.from) + "\nto = " + quote(p.to) + "\n";
    out += "interval = " + dur(p.interval) + "\n";
    out += "size = " + quote(format_bytes(p.size)) + "\n";
    window(out, p.start, p.stop);
    out += "dscp = " + detail::dscp_to_toml(p.dscp) + "\n";
  }
  for (const UdpProbeConfig& p : s.traffic.udp_probe) {
    out += "\n[[traffic.udp_probe]]\nfrom = " + quote(p.from) + "\nto = " + quote(p.to) + "\n";
    out += "interval = " + dur(p.interval) + "\n";
    out += "size = " + quote(format_bytes(p.size)) + "\n";
    window(out, p.start, p.stop);
    out += "dscp = " + detail::dscp_to_toml(p.dscp) + "\n";
  }
  for (const UdpFloodConfig& f : s.traffic.udp_flood) {
    out += "\n[[traffic.udp_flood]]\nfrom = " + quote(f.from) + "\nto = " + quote(f.to) + "\n";
    out += "rate = " + quote(format_rate(f.rate)) + "\n";
    out += "size = " + quote(format_bytes(f.size)) + "\n";
    window(out, f.start, f.stop);
    out += "dscp = " + detail::dscp_to_toml(f.dscp) + "\n";
  }
  for (const VoipConfig& v : s.traffic.voip) {
    out += "\n[[traffic.voip]]\nfrom = " + quote(v.from) + "\nto = " + quote(v.to) + "\n";
    out += "codec = " + quote(v.codec) + "\n";
    window(out, v.start, v.stop);
    out += "dscp = " + detail::dscp_to_toml(v.dscp) + "\n";
  }
  for (const TransfersConfig& c : s.traffic.transfers) {
    out += "\n[[traffic.transfers]]\nfrom = " + quote(c.from) + "\nto = " + quote(c.to) + "\n";
    out += "sizes = " + quote(c.sizes) + "\n";
    if (c.sizes != "websearch") {
      out += "size = " + quote(format_bytes(c.size)) + "\n";
    }
    out += "interval = " + dur(c.interval) + "\n";
    window(out, c.start, c.stop);
    out += "dscp = " + detail::dscp_to_toml(c.dscp) + "\n";
    if (c.cc) {
      out += "cc = " + quote(*c.cc) + "\n";
    }
  }
  for (const ReplayConfig& c : s.traffic.replay) {
    out += "\n[[traffic.replay]]\nfile = " + quote(c.file) + "\n";
    if (c.from) {
      out += "from = " + quote(*c.from) + "\n";
    }
  }
  for (const RrulConfig& p : s.traffic.rrul) {
    if (p.test == "rrul") {
      out += "\n[[traffic.rrul]]\nfrom = " + quote(p.from) + "\nto = " + quote(p.to) + "\n";
    } else {
      out += "\n[[traffic.flent]]\ntest = " + quote(p.test) + "\nfrom = " + quote(p.from) +
             "\nto = " + quote(p.to) + "\n";
      if (find_flent_test(p.test) != nullptr && find_flent_test(p.test)->streams) {
        out += "streams = " + std::to_string(p.streams) + "\n";
      }
      if (!p.markings.empty()) {
        out += "markings = " + quote(format_flent_markings(p.markings)) + "\n";
      }
      if (p.rate) {
        out += "rate = " + quote(format_rate(*p.rate)) + "\n";
      }
      if (p.size) {
        out += "size = " + quote(std::to_string(*p.size) + "B") + "\n";
      }
    }
    window(out, p.start, std::nullopt);
    out += "idle = " + dur(p.idle) + "\nload = " + dur(p.load) + "\n";
    out += "probe_interval = " + dur(p.probe_interval) + "\nbin = " + dur(p.bin) + "\n";
  }

  if (!s.vary.empty()) {
    out += "\n[vary]\n";
    for (const VaryAxis& a : s.vary) {
      out += quote(a.key) + " = [";
      for (size_t i = 0; i < a.values.size(); ++i) {
        out += (i == 0 ? "" : ", ") + toml_vary_value(a.values[i]);
      }
      out += "]\n";
    }
  }
  if (!s.published.empty()) {
    out += "\n[published]\n";
    for (const PublishedEntry& pe : s.published) {
      if (pe.selector.empty()) {
        for (const auto& [k, v] : pe.metrics) {
          out += join_key("", k) + " = " + published_value(v) + "\n";
        }
      }
    }
    for (const PublishedEntry& pe : s.published) {
      if (!pe.selector.empty()) {
        out += quote(pe.selector) + " = {";
        for (size_t i = 0; i < pe.metrics.size(); ++i) {
          out += (i == 0 ? " " : ", ") + join_key("", pe.metrics[i].first) + " = " +
                 published_value(pe.metrics[i].second);
        }
        out += " }\n";
      }
    }
  }
  return out;
}

}  // namespace nicsim::config
