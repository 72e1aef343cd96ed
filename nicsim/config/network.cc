// config::Network: nodes, interfaces and links from a scenario, and the static routes
// (shortest path by hop count; hosts do not forward). network.h documents the rules.
#include "nicsim/config/network.h"

#include <deque>
#include <limits>
#include <map>

#include "nicsim/config/scenario.h"

namespace nicsim::config {

bool RouterInterfaceConfig::operator==(const RouterInterfaceConfig& o) const {
  return name == o.name && nic == o.nic &&
         nic.platform.qdisc_bypass == o.nic.platform.qdisc_bypass && qdisc == o.qdisc;
}

bool RouterConfig::operator==(const RouterConfig& o) const {
  return name == o.name && cpu_preset == o.cpu_preset && cpu_costs_equal(cpu, o.cpu) &&
         interfaces == o.interfaces;
}

namespace {

std::string link_key(size_t link, size_t side) {
  return "links[" + std::to_string(link) + "].ends[" + std::to_string(side) + "]";
}

std::string route_key(size_t route, const char* field) {
  return "routes[" + std::to_string(route) + "]." + field;
}

}  // namespace

// Builds a Network from a scenario; a friend of Network so that the result's tables are filled
// in place.
class NetworkBuilder {
 public:
  explicit NetworkBuilder(const Scenario& s) : s_(s) {}

  Network build() {
    add_nodes();
    if (s_.links.empty()) {
      add_two_host_link();
    } else {
      add_links();
    }
    compute_routes();
    apply_route_overrides();
    return std::move(n_);
  }

 private:
  void add_interface(int node, std::string name, const NicConfig* nic, const QdiscConfig* qdisc) {
    Network::Interface i;
    i.node = node;
    i.name = std::move(name);
    i.nic = nic;
    i.qdisc = qdisc;
    n_.nodes_[static_cast<size_t>(node)].interfaces.push_back(
        static_cast<int>(n_.interfaces_.size()));
    n_.interfaces_.push_back(std::move(i));
  }

  void add_nodes() {
    for (const HostConfig& h : s_.hosts) {
      add_node(h.name, false, &h.cpu);
      add_interface(static_cast<int>(n_.nodes_.size() - 1), h.name, &h.nic, &h.qdisc);
    }
    n_.hosts_ = s_.hosts.size();
    for (const RouterConfig& r : s_.routers) {
      add_node(r.name, true, &r.cpu);
      if (r.interfaces.empty()) {
        throw NetworkError("routers." + r.name, "a router needs at least one interface");
      }
      for (const RouterInterfaceConfig& i : r.interfaces) {
        add_interface(static_cast<int>(n_.nodes_.size() - 1), i.name, &i.nic, &i.qdisc);
      }
    }
  }

  void add_node(const std::string& name, bool router, const model::CpuCosts* cpu) {
    if (node_index_.count(name) != 0) {
      throw NetworkError(std::string(router ? "routers." : "hosts.") + name,
                         "the name '" + name + "' is used by another host or router");
    }
    node_index_[name] = static_cast<int>(n_.nodes_.size());
    Network::Node node;
    node.name = name;
    node.router = router;
    node.cpu = cpu;
    n_.nodes_.push_back(std::move(node));
  }

  void add_two_host_link() {
    if (s_.hosts.size() != 2 || !s_.routers.empty()) {
      throw NetworkError(s_.routers.empty() ? "hosts" : "routers",
                         "a scenario with routers or more than two hosts needs [[links]]");
    }
    Network::Link l;
    l.iface[0] = 0;
    l.iface[1] = 1;
    l.wire[0] = &s_.wire;
    l.wire[1] = &s_.wire;
    connect(0, 0, 0);
    connect(1, 0, 1);
    n_.links_.push_back(l);
  }

  void connect(int iface, int link, int side) {
    Network::Interface& i = n_.interfaces_[static_cast<size_t>(iface)];
    i.link = link;
    i.side = side;
  }

  // "a" (a host's only interface) or "r.lan" (a router's interface).
  int resolve_end(const std::string& end, const std::string& key) const {
    const size_t dot = end.find('.');
    const std::string node_name = end.substr(0, dot);
    const auto node = node_index_.find(node_name);
    if (node == node_index_.end()) {
      throw NetworkError(key, "no host or router named '" + node_name + "'");
    }
    const Network::Node& n = n_.nodes_[static_cast<size_t>(node->second)];
    if (dot == std::string::npos) {
      if (n.router) {
        throw NetworkError(
            key, "'" + end + "' is a router: name its interface ('" + end + ".<interface>')");
      }
      return n.interfaces.front();
    }
    if (!n.router) {
      throw NetworkError(key, "'" + node_name + "' is a host: a host's interface is named by " +
                                  "the host alone ('" + node_name + "')");
    }
    const int iface = interface_of(node->second, end.substr(dot + 1));
    if (iface == Network::kNone) {
      throw NetworkError(
          key, "router '" + node_name + "' has no interface '" + end.substr(dot + 1) + "'");
    }
    return iface;
  }

  int interface_of(int node, const std::string& name) const {
    for (const int i : n_.nodes_[static_cast<size_t>(node)].interfaces) {
      if (n_.interfaces_[static_cast<size_t>(i)].name == name) {
        return i;
      }
    }
    return Network::kNone;
  }

  void add_links() {
    for (size_t k = 0; k < s_.links.size(); ++k) {
      const LinkConfig& lc = s_.links[k];
      Network::Link l;
      for (size_t side = 0; side < 2; ++side) {
        const int iface = resolve_end(lc.ends[side], link_key(k, side));
        const Network::Interface& i = n_.interfaces_[static_cast<size_t>(iface)];
        if (i.link != Network::kNone) {
          throw NetworkError(link_key(k, side), "'" + lc.ends[side] + "' is already on links[" +
                                                    std::to_string(i.link) + "]");
        }
        connect(iface, static_cast<int>(k), static_cast<int>(side));
        l.iface[side] = iface;
      }
      if (n_.interfaces_[static_cast<size_t>(l.iface[0])].node ==
          n_.interfaces_[static_cast<size_t>(l.iface[1])].node) {
        throw NetworkError(link_key(k, 1), "a link must join two different nodes");
      }
      l.wire[0] = &lc.forward;
      l.wire[1] = &lc.reverse;
      n_.links_.push_back(l);
    }
    for (size_t i = 0; i < n_.interfaces_.size(); ++i) {
      if (n_.interfaces_[i].link == Network::kNone) {
        throw NetworkError(interface_key(static_cast<int>(i)), "not on any [[links]] entry");
      }
    }
  }

  std::string interface_key(int iface) const {
    const Network::Interface& i = n_.interfaces_[static_cast<size_t>(iface)];
    const Network::Node& node = n_.nodes_[static_cast<size_t>(i.node)];
    return node.router ? "routers." + node.name + ".interfaces." + i.name : "hosts." + node.name;
  }

  // Breadth-first from each destination host over links; only routers (and the destination
  // itself) forward, so a path never crosses another host. A node's egress to the host is its
  // first-written interface whose peer is one hop closer.
  void compute_routes() {
    const size_t nodes = n_.nodes_.size();
    n_.egress_.assign(nodes * n_.hosts_, Network::kNone);
    constexpr int kFar = std::numeric_limits<int>::max();
    for (size_t to = 0; to < n_.hosts_; ++to) {
      std::vector<int> dist(nodes, kFar);
      std::deque<int> queue{static_cast<int>(to)};
      dist[to] = 0;
      while (!queue.empty()) {
        const int at = queue.front();
        queue.pop_front();
        if (at != static_cast<int>(to) && !n_.nodes_[static_cast<size_t>(at)].router) {
          continue;  // hosts do not forward
        }
        for (const int i : n_.nodes_[static_cast<size_t>(at)].interfaces) {
          const int next = n_.interfaces_[static_cast<size_t>(n_.peer(i))].node;
          if (dist[static_cast<size_t>(next)] == kFar) {
            dist[static_cast<size_t>(next)] = dist[static_cast<size_t>(at)] + 1;
            queue.push_back(next);
          }
        }
      }
      for (size_t at = 0; at < nodes; ++at) {
        if (at == to || dist[at] == kFar) {
          continue;
        }
        for (const int i : n_.nodes_[at].interfaces) {
          const int next = n_.interfaces_[static_cast<size_t>(n_.peer(i))].node;
          if (dist[static_cast<size_t>(next)] == dist[at] - 1) {
            n_.egress_[at * n_.hosts_ + to] = i;
            break;
          }
        }
      }
    }
  }

  void apply_route_overrides() {
    for (size_t k = 0; k < s_.routes.size(); ++k) {
      const RouteConfig& r = s_.routes[k];
      const auto node = node_index_.find(r.node);
      if (node == node_index_.end()) {
        throw NetworkError(route_key(k, "node"), "no host or router named '" + r.node + "'");
      }
      const auto to = node_index_.find(r.to);
      if (to == node_index_.end() || n_.nodes_[static_cast<size_t>(to->second)].router) {
        throw NetworkError(route_key(k, "to"), "no host named '" + r.to + "'");
      }
      if (to->second == node->second) {
        throw NetworkError(route_key(k, "to"), "a route from '" + r.node + "' to itself");
      }
      const int iface = interface_of(node->second, r.via);
      if (iface == Network::kNone) {
        throw NetworkError(route_key(k, "via"),
                           "'" + r.node + "' has no interface '" + r.via + "'");
      }
      n_.egress_[static_cast<size_t>(node->second) * n_.hosts_ + static_cast<size_t>(to->second)] =
          iface;
    }
  }

  const Scenario& s_;
  Network n_;
  std::map<std::string, int> node_index_;
};

Network network_of(const Scenario& s) { return NetworkBuilder(s).build(); }

int Network::peer(int iface) const {
  const Interface& i = interfaces_[static_cast<size_t>(iface)];
  return links_[static_cast<size_t>(i.link)].iface[1 - i.side];
}

std::vector<int> Network::path(int from, int to) const {
  std::vector<int> hops;
  std::vector<bool> seen(nodes_.size(), false);
  int at = from;
  while (at != to) {
    if (seen[static_cast<size_t>(at)]) {
      throw std::invalid_argument("the routes from '" + nodes_[static_cast<size_t>(from)].name +
                                  "' to '" + nodes_[static_cast<size_t>(to)].name + "' loop at '" +
                                  nodes_[static_cast<size_t>(at)].name + "'");
    }
    seen[static_cast<size_t>(at)] = true;
    const int out = egress(at, to);
    if (out == kNone || (at != from && !nodes_[static_cast<size_t>(at)].router)) {
      throw std::invalid_argument("no route from '" + nodes_[static_cast<size_t>(from)].name +
                                  "' to '" + nodes_[static_cast<size_t>(to)].name + "' (at '" +
                                  nodes_[static_cast<size_t>(at)].name + "')");
    }
    hops.push_back(out);
    at = interfaces_[static_cast<size_t>(peer(out))].node;
  }
  return hops;
}

std::string Network::interface_label(int iface) const {
  const Interface& i = interfaces_[static_cast<size_t>(iface)];
  const Node& n = nodes_[static_cast<size_t>(i.node)];
  return n.router ? n.name + "." + i.name : n.name;
}

}  // namespace nicsim::config
