#include "nicsim/config/host_nic.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "nicsim/model/multi_queue_nic.h"
#include "nicsim/model/platform_nic.h"
#include "nicsim/model/usb_nic.h"

namespace nicsim::config {

std::unique_ptr<model::Nic> make_interface_nic(const NicConfig& nic, const QdiscConfig& qdisc,
                                               const model::CpuCosts& cpu) {
  if (nic.model == NicModel::kPlatform) {
    model::PlatformNic::Params p = nic.platform;
    p.qdisc_bypass = qdisc.can_bypass();
    if (!nic.max_link_rate.is_zero()) {  // what the Intel ITR heuristics read as link_speed
      p.itr_link_mbps =
          std::max<int64_t>(1, static_cast<int64_t>(nic.max_link_rate.bits_per_sec() / 1000000));
    }
    if (nic.queues <= 1) {
      return std::make_unique<model::PlatformNic>(p, qdisc.build(), cpu);
    }
    // mq: every TX queue gets its own instance of the interface's qdisc.
    std::vector<std::unique_ptr<model::PlatformNic>> pairs;
    for (int64_t i = 0; i < nic.queues; ++i) {
      pairs.push_back(std::make_unique<model::PlatformNic>(p, qdisc.build(), cpu));
    }
    model::MultiQueueNic::Params mq;
    mq.rss.queues = static_cast<uint32_t>(nic.queues);
    mq.rss.fill = nic.rss_fill;
    mq.rss.hash_udp_ports = nic.rss_udp_ports;
    if (nic.rss_key_seed != 0) {
      mq.rss.key = algo::Rss::key_from_seed(static_cast<uint64_t>(nic.rss_key_seed));
    }
    return std::make_unique<model::MultiQueueNic>(mq, std::move(pairs));
  }
  return std::make_unique<model::UsbNic>(nic.usb, qdisc.build(), cpu);
}

std::unique_ptr<model::Nic> make_host_nic(const HostConfig& h) {
  return make_interface_nic(h.nic, h.qdisc, h.cpu);
}

int shaping_operations(const QdiscConfig& qdisc) {
  const std::string& kind = qdisc.kind();
  if (kind == "pfifo" || kind == "bfifo" || kind == "pfifo_fast") {
    return 0;
  }
  if (kind != "htb") {
    return 1;
  }
  int leaf = 0;  // a class without a leaf qdisc gets pfifo (0)
  for (const HtbClassConfig& c : qdisc.params<HtbConfig>().classes) {
    for (const QdiscConfig& l : c.leaf) {
      leaf = std::max(leaf, shaping_operations(l));
    }
  }
  return 1 + leaf;
}

std::unique_ptr<model::Router> make_router(const Network& net, int node) {
  const Network::Node& n = net.nodes().at(static_cast<size_t>(node));
  if (!n.router || n.cpu == nullptr) {
    throw std::invalid_argument("make_router: node '" + n.name + "' is not a router");
  }
  model::Router::Params p;
  p.cpu = *n.cpu;
  std::vector<std::unique_ptr<model::Nic>> nics;
  for (const int i : n.interfaces) {
    const Network::Interface& iface = net.interfaces()[static_cast<size_t>(i)];
    nics.push_back(make_interface_nic(*iface.nic, *iface.qdisc, *n.cpu));
    p.interfaces.push_back({.qdisc_cost = n.cpu->per_qdisc_op * shaping_operations(*iface.qdisc)});
  }
  for (size_t h = 0; h < net.host_count(); ++h) {
    const int egress = net.egress(node, static_cast<int>(h));
    const auto local = std::find(n.interfaces.begin(), n.interfaces.end(), egress);
    p.routes.push_back(local == n.interfaces.end()
                           ? model::Router::kNoRoute
                           : static_cast<int>(local - n.interfaces.begin()));
  }
  return std::make_unique<model::Router>(p, std::move(nics));
}

void append_queue_sample(report::QueueSeries& s, Time t, const model::NicQueueSample& n) {
  s.time_s.push_back(t.to_seconds());
  s.qdisc_bytes.push_back(n.qdisc_bytes);
  s.qdisc_packets.push_back(n.qdisc_packets);
  s.ring_bytes.push_back(n.ring_bytes);
  s.ring_packets.push_back(n.ring_packets);
  s.bql_limit_bytes.push_back(n.bql_limit);
  s.device_fifo_bytes.push_back(n.device_fifo_bytes);
}

}  // namespace nicsim::config
