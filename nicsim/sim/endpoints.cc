#include "nicsim/sim/endpoints.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace nicsim::sim {
namespace {

// The sender's TCP settings with the flow's congestion control and ECN mode
// (config::FlowPlan::cc, ::ecn). Both ends of a flow use them: the receiver gives DCTCP's
// feedback for a dctcp flow (as a receiving host running dctcp does) and AccECN when asked.
tcp::Params tcp_params(const config::TcpConfig& c, const std::string& cc, const std::string& ecn) {
  tcp::Params p;
  p.cc = tcp::cc_from_name(cc).value_or(tcp::CcAlgorithm::kCubic);
  p.mss = c.mss;
  p.rmem_max = c.rmem;
  p.wmem = c.wmem;
  p.limit_output_bytes = c.tsq_limit;
  p.pacing = c.pacing;
  p.pacing_ss_ratio = c.pacing_ss_ratio;
  p.pacing_ca_ratio = c.pacing_ca_ratio;
  p.ecn = ecn != "off";
  p.ect1 = ecn == "l4s";
  p.ecn_feedback = p.cc == tcp::CcAlgorithm::kPrague  ? tcp::EcnFeedback::kAccurate
                   : p.cc == tcp::CcAlgorithm::kDctcp ? tcp::EcnFeedback::kDctcp
                                                      : tcp::EcnFeedback::kClassic;
  p.initial_cwnd = c.init_cwnd;
  require_valid(p);
  return p;
}

// config::FlowPlan::ecn of a flow's sender settings (tcp_params' inverse).
std::string ecn_mode(const tcp::Params& p) { return !p.ecn ? "off" : p.ect1 ? "l4s" : "classic"; }

std::unique_ptr<TcpFlow> make_flow(const config::Scenario& s, const config::FlowPlan& fp,
                                   uint32_t index) {
  tcp::Params tp = tcp_params(s.hosts[fp.from].tcp, fp.cc, fp.ecn);
  tp.fq_pacing = s.hosts[fp.from].qdisc.kind() == "fq";  // SK_PACING_FQ: EDT through fq
  tp.seed = flow_hash(index, 4);
  auto flow = std::make_unique<TcpFlow>(tp);
  flow->index = index;
  flow->from = static_cast<int>(fp.from);
  flow->to = static_cast<int>(fp.to);
  flow->dscp = fp.dscp;
  flow->start = Time::zero() + fp.start;
  flow->stop = Time::zero() + fp.stop;
  flow->hash_data = flow_hash(index, 1);
  flow->hash_ack = flow_hash(index, 2);
  return flow;
}

std::unique_ptr<Probe> make_probe(const config::ProbePlan& pp, uint32_t index) {
  auto p = std::make_unique<Probe>();
  p->icmp = pp.icmp;
  p->from = static_cast<int>(pp.from);
  p->to = static_cast<int>(pp.to);
  p->index = index;
  p->interval = pp.interval;
  p->frame_len =
      kEthIpBytes + (pp.icmp ? kIcmpHeader : kUdpHeader) + static_cast<uint32_t>(pp.size);
  p->dscp = pp.dscp;
  p->next_send = Time::zero() + pp.start;
  p->stop = Time::zero() + pp.stop;
  p->hash = flow_hash(kProbeFlowBase + index, 3);
  return p;
}

// A transfer: a new connection from the server (the sender) to the client, `size` bytes.
std::unique_ptr<TcpFlow> make_transfer(const config::Scenario& s,
                                       const config::TransferSetPlan& set,
                                       const config::TransferPlan& tp, uint32_t index) {
  tcp::Params p = tcp_params(s.hosts[set.server].tcp, set.cc, set.ecn);
  p.fq_pacing = s.hosts[set.server].qdisc.kind() == "fq";
  p.seed = flow_hash(index, 4);
  p.bytes_to_send = tp.size;
  auto flow = std::make_unique<TcpFlow>(p);
  flow->index = index;
  flow->from = static_cast<int>(set.server);
  flow->to = static_cast<int>(set.client);
  flow->dscp = set.dscp;
  flow->start = Time::max();
  flow->stop = Time::max();
  flow->hash_data = flow_hash(index, 1);
  flow->hash_ack = flow_hash(index, 2);
  flow->is_transfer = true;
  flow->request_at = Time::zero() + tp.at;
  flow->size = static_cast<uint64_t>(tp.size);
  flow->set = tp.set;
  return flow;
}

std::unique_ptr<Flood> make_flood(const config::FloodPlan& fp, uint32_t index) {
  auto f = std::make_unique<Flood>();
  f->from = static_cast<int>(fp.from);
  f->to = static_cast<int>(fp.to);
  f->index = index;
  f->rate = fp.rate;
  f->size = static_cast<uint32_t>(fp.size);
  f->frame_len = kEthIpBytes + kUdpHeader + f->size;
  f->dscp = fp.dscp;
  f->start = Time::zero() + fp.start;
  f->stop = Time::zero() + fp.stop;
  f->hash = flow_hash(kFloodFlowBase + index, 5);
  f->codec = fp.codec;
  return f;
}

// One source per (replay entry, recorded host that sent frames), in entry then host order;
// recorded host indexes are mapped to the scenario's by name (the loader checked the names).
void add_replays(const config::Scenario& s, std::vector<std::unique_ptr<ReplaySource>>& out) {
  const auto host_index = [&s](const std::string& name) {
    for (size_t i = 0; i < s.hosts.size(); ++i) {
      if (s.hosts[i].name == name) {
        return static_cast<int>(i);
      }
    }
    throw std::invalid_argument("replay: recorded host '" + name + "' is not in the scenario");
  };
  for (const config::ReplayConfig& r : s.traffic.replay) {
    const config::ReplayRecording& rec = *r.recording;
    std::vector<int> map;
    for (const std::string& h : rec.hosts) {
      map.push_back(host_index(h));
    }
    for (size_t h = 0; h < rec.hosts.size(); ++h) {
      if (r.from && *r.from != rec.hosts[h]) {
        continue;
      }
      auto src = std::make_unique<ReplaySource>();
      src->from = map[h];
      for (config::ReplayFrame f : rec.frames) {
        if (f.host != h) {
          continue;
        }
        f.time_ns = std::max<int64_t>(f.time_ns, 0);
        f.to = f.to == config::kReplayNoHost ? config::kReplayNoHost
                                             : static_cast<uint16_t>(map[f.to]);
        src->frames.push_back(f);
      }
      if (!src->frames.empty()) {
        out.push_back(std::move(src));
      }
    }
  }
}

}  // namespace

uint32_t flow_hash(uint32_t flow, uint32_t salt) {
  uint64_t x = (static_cast<uint64_t>(flow) << 32) ^ salt ^ 0x9E3779B97F4A7C15ull;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

Endpoints::Endpoints(const config::Scenario& s, const config::TrafficPlan& plan) {
  for (const config::FlowPlan& f : plan.flows) {
    flows_.push_back(make_flow(s, f, static_cast<uint32_t>(flows_.size())));
  }
  bulk_flows_ = flows_.size();
  transfer_sets_ = plan.transfer_sets;
  for (const config::TransferPlan& t : plan.transfers) {
    flows_.push_back(
        make_transfer(s, plan.transfer_sets.at(t.set), t, static_cast<uint32_t>(flows_.size())));
  }
  for (const config::ProbePlan& p : plan.probes) {
    probes_.push_back(make_probe(p, static_cast<uint32_t>(probes_.size())));
  }
  for (const config::FloodPlan& f : plan.floods) {
    floods_.push_back(make_flood(f, static_cast<uint32_t>(floods_.size())));
  }
  add_replays(s, replays_);
}

std::vector<report::FlowCounters> Endpoints::flow_counters() const {
  std::vector<report::FlowCounters> c(bulk_flows_);
  for (size_t i = 0; i < bulk_flows_; ++i) {
    const TcpFlow& f = *flows_[i];
    c[i].received_bytes = f.received();
    c[i].retransmits = f.sender.stats().retransmits;
    c[i].cwnd_bytes = static_cast<uint64_t>(f.sender.cwnd()) * f.sender.params().mss;
    if (f.started && f.sender.rtt().has_sample()) {
      c[i].srtt_ms = f.sender.rtt().srtt().to_ms();
    }
  }
  return c;
}

std::vector<report::FlowTotals> Endpoints::flow_totals() const {
  std::vector<report::FlowTotals> t(bulk_flows_);
  for (size_t i = 0; i < bulk_flows_; ++i) {
    const tcp::TcpSender::Stats& s = flows_[i]->sender.stats();
    t[i].sender_bytes = s.bytes_sent - s.retransmitted_bytes;
    t[i].retransmits = s.retransmits;
    t[i].received_bytes = flows_[i]->received();
    const tcp::TcpSender& snd = flows_[i]->sender;
    if (snd.ecn_ok()) {
      t[i].ecn = report::FlowEcn{.codepoint = snd.params().ect1 ? "ect1" : "ect0",
                                 .ce_marked = flows_[i]->receiver.stats().ce_received,
                                 .ce_echoed = s.delivered_ce,
                                 .cwnd_reductions = s.cwr_events};
    }
  }
  return t;
}

config::TrafficPlan Endpoints::traffic(Time end, const report::RunLayout& layout) const {
  config::TrafficPlan t;
  t.duration = end.since_epoch();
  t.interval = layout.interval;
  for (size_t i = 0; i < bulk_flows_; ++i) {
    const TcpFlow& f = *flows_[i];
    t.flows.push_back(config::FlowPlan{static_cast<size_t>(f.from), static_cast<size_t>(f.to),
                                       f.dscp, std::string(tcp::cc_name(f.sender.params().cc)),
                                       f.start.since_epoch(), f.stop.since_epoch(),
                                       layout.flows[i].name, ecn_mode(f.sender.params())});
  }
  for (size_t i = 0; i < probes_.size(); ++i) {
    const Probe& p = *probes_[i];
    config::ProbePlan pp;
    pp.name = layout.probes[i].name;
    pp.icmp = p.icmp;
    pp.from = static_cast<size_t>(p.from);
    pp.to = static_cast<size_t>(p.to);
    pp.interval = p.interval;
    pp.size = p.frame_len - kEthIpBytes - (p.icmp ? kIcmpHeader : kUdpHeader);
    pp.start = p.next_send.since_epoch();  // before the run
    pp.stop = p.stop.since_epoch();
    pp.dscp = p.dscp;
    t.probes.push_back(std::move(pp));
  }
  for (const report::PhaseSpec& ph : layout.phases) {
    t.phases.push_back(config::PhasePlan{ph.name, ph.start, ph.end});
  }
  t.transfer_sets = transfer_sets_;
  for (size_t i = bulk_flows_; i < flows_.size(); ++i) {
    const TcpFlow& f = *flows_[i];
    config::TransferSetPlan& set = t.transfer_sets.at(f.set);
    // What the flow was built with (the server sends, the client receives).
    set.client = static_cast<size_t>(f.to);
    set.server = static_cast<size_t>(f.from);
    set.dscp = f.dscp;
    set.cc = std::string(tcp::cc_name(f.sender.params().cc));
    set.ecn = ecn_mode(f.sender.params());
    t.transfers.push_back(
        config::TransferPlan{f.set, f.request_at.since_epoch(), static_cast<int64_t>(f.size)});
  }
  for (size_t i = 0; i < floods_.size(); ++i) {
    const Flood& f = *floods_[i];
    t.floods.push_back(config::FloodPlan{
        layout.floods[i].name, static_cast<size_t>(f.from), static_cast<size_t>(f.to), f.rate,
        f.size, f.start.since_epoch(), f.stop.since_epoch(), f.dscp, f.codec});
  }
  return t;
}

}  // namespace nicsim::sim
