#include "nicsim/config/topology.h"

#include <sstream>
#include <string>
#include <vector>

#include "nicsim/config/qdisc_internal.h"
#include "nicsim/config/units.h"

namespace nicsim::config {
namespace {

// The `key = value` lines of a qdisc's own table (its dump up to the first sub-table).
std::vector<std::string> own_lines(const QdiscConfig& q) {
  std::istringstream in(detail::dump_qdisc(q, "q"));
  std::vector<std::string> out;
  std::string line;
  std::getline(in, line);  // [q]
  while (std::getline(in, line) && !line.empty() && line.front() != '[') {
    out.push_back(line);
  }
  return out;
}

const std::string& cpu_of(const Scenario& s, const Network::Node& node) {
  for (const HostConfig& h : s.hosts) {
    if (h.name == node.name) {
      return h.cpu_preset;
    }
  }
  for (const RouterConfig& r : s.routers) {
    if (r.name == node.name) {
      return r.cpu_preset;
    }
  }
  static const std::string kNone;
  return kNone;
}

std::string wire_text(const WireConfig& w) {
  std::string out = "rate " + format_rate(w.rate) + ", delay " + format_duration(w.delay);
  out += ", loss " + format_percent_ppb(w.loss_ppb) + ", jitter " + format_duration(w.jitter);
  return out;
}

// A DOT string literal: quotes and backslashes escaped, line breaks as DOT's \n (centred).
std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out + "\"";
}

// The interface's name on its node: a router's as written, a host's is the host's own.
const std::string& iface_name(const Network& n, int i) { return n.interfaces()[i].name; }

}  // namespace

std::string describe_qdisc(const QdiscConfig& q) {
  const std::vector<std::string> mine = own_lines(q);
  const std::vector<std::string> defaults = own_lines(QdiscConfig::of_kind(q.kind()));
  std::string out = q.kind();
  std::string sep = " ";
  for (const std::string& line : mine) {
    if (line.rfind("kind = ", 0) == 0) {
      continue;
    }
    bool is_default = false;
    for (const std::string& d : defaults) {
      is_default = is_default || d == line;
    }
    if (!is_default) {
      out += sep + line;
      sep = ", ";
    }
  }
  if (q.kind() == "htb") {
    out += sep + std::to_string(q.params<HtbConfig>().classes.size()) + " classes";
  }
  return out;
}

std::string topology_text(const Scenario& s, const Network& n) {
  std::string out = "network " + s.name + ": " + std::to_string(n.host_count()) + " hosts, " +
                    std::to_string(n.nodes().size() - n.host_count()) + " routers, " +
                    std::to_string(n.links().size()) + " links\n";
  out += "\nnodes\n";
  for (const Network::Node& node : n.nodes()) {
    out += "  " + std::string(node.router ? "router " : "host ") + node.name + "  cpu " +
           cpu_of(s, node) + "\n";
    for (int i : node.interfaces) {
      const Network::Interface& f = n.interfaces()[i];
      out += "    " + n.interface_label(i) + "  nic " + f.nic->preset + "  qdisc " +
             describe_qdisc(*f.qdisc) + "\n";
    }
  }
  out += "\nlinks\n";
  for (size_t k = 0; k < n.links().size(); ++k) {
    const Network::Link& l = n.links()[k];
    const std::string a = n.interface_label(l.iface[0]);
    const std::string b = n.interface_label(l.iface[1]);
    out += "  " + std::to_string(k) + ": " + a + " <-> " + b + "\n";
    out += "    " + a + " -> " + b + "  " + wire_text(*l.wire[0]) + "\n";
    out += "    " + b + " -> " + a + "  " + wire_text(*l.wire[1]) + "\n";
  }
  out += "\nroutes (node: to host via interface)\n";
  for (size_t at = 0; at < n.nodes().size(); ++at) {
    std::string line;
    for (size_t to = 0; to < n.host_count(); ++to) {
      const int e = n.egress(static_cast<int>(at), static_cast<int>(to));
      if (e == Network::kNone) {
        continue;
      }
      line += (line.empty() ? "" : ", ") + n.nodes()[to].name + " via " + iface_name(n, e);
    }
    out += "  " + n.nodes()[at].name + ": " + (line.empty() ? "-" : line) + "\n";
  }
  return out;
}

std::string topology_dot(const Scenario& s, const Network& n) {
  std::string out = "graph " + dot_quote(s.name) + " {\n";
  out +=
      "  graph [rankdir=LR];\n  node [fontname=\"Helvetica\"];\n"
      "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  for (const Network::Node& node : n.nodes()) {
    out += "  " + dot_quote(node.name) + " [shape=" + (node.router ? "ellipse" : "box") +
           ", label=" + dot_quote(node.name + "\n" + cpu_of(s, node)) + "];\n";
  }
  for (const Network::Link& l : n.links()) {
    const auto end = [&](int side) {
      const Network::Interface& f = n.interfaces()[l.iface[side]];
      return f.name + "\n" + f.nic->preset + "\n" + describe_qdisc(*f.qdisc);
    };
    const auto dir = [&](int d) {
      const WireConfig& w = *l.wire[d];
      std::string t = format_rate(w.rate) + " " + format_duration(w.delay);
      if (w.loss_ppb != 0) {
        t += " loss " + format_percent_ppb(w.loss_ppb);
      }
      if (w.jitter != Duration::zero()) {
        t += " jitter " + format_duration(w.jitter);
      }
      return t;
    };
    const std::string a = n.nodes()[n.interfaces()[l.iface[0]].node].name;
    const std::string b = n.nodes()[n.interfaces()[l.iface[1]].node].name;
    const std::string label = *l.wire[0] == *l.wire[1] ? dir(0)
                                                       : a + " > " + b + ": " + dir(0) + "\n" + b +
                                                             " > " + a + ": " + dir(1);
    out += "  " + dot_quote(a) + " -- " + dot_quote(b) + " [label=" + dot_quote(label) +
           ", taillabel=" + dot_quote(end(0)) + ", headlabel=" + dot_quote(end(1)) + "];\n";
  }
  return out + "}\n";
}

}  // namespace nicsim::config
