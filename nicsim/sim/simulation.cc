#include "nicsim/sim/simulation.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/config/host_nic.h"
#include "nicsim/config/network.h"
#include "nicsim/model/multi_queue_nic.h"
#include "nicsim/model/platform_nic.h"
#include "nicsim/model/wire.h"
#include "nicsim/sim/host_node.h"
#include "nicsim/sim/router_node.h"
#include "nicsim/sim/sim_context.h"

namespace nicsim::sim {
namespace {

// One queue pair of a host's platform NIC and the core that serves it: the NIC itself on the
// host's core, or each pair of a multi-queue NIC on its own. Empty for a USB NIC.
struct QueuePair {
  const model::PlatformNic* nic;
  const model::Cpu* cpu;
};

std::vector<QueuePair> queue_pairs(const HostNode& h) {
  if (const auto* p = dynamic_cast<const model::PlatformNic*>(&h.nic())) {
    return {{p, &h.cpu()}};
  }
  std::vector<QueuePair> out;
  if (const auto* m = dynamic_cast<const model::MultiQueueNic*>(&h.nic())) {
    for (size_t i = 0; i < m->queue_count(); ++i) {
      out.push_back({&m->pair(i), &m->queue_cpu(i)});
    }
  }
  return out;
}

// The periodic work of a run: interval table rows, queue series, progress, and each flow's
// application stop.
class Sampler final : public Process {
 public:
  static constexpr uint64_t kTagInterval = 1;
  static constexpr uint64_t kTagQueue = 2;
  static constexpr uint64_t kTagProgress = 3;
  static constexpr uint64_t kTagStopFlow = 1'000'000;  // + flow index: the flow's stop time

  // One queue series: a host's NIC or a router interface's, under its results key.
  struct Queue {
    std::string key;
    const model::Nic* nic;
  };

  Sampler(SimContext& ctx, std::vector<Queue> queues) : ctx_(ctx), queues_(std::move(queues)) {}

  void start(const ProgressFn& progress) {
    progress_ = progress;
    ctx_.engine.schedule(ctx_.recorder.next_boundary(), this, kTagInterval);
    ctx_.engine.schedule(Time::zero(), this, kTagQueue);
    ctx_.engine.schedule(Time::zero(), this, kTagProgress);
    for (const auto& f : ctx_.endpoints.flows()) {
      if (f->stop < ctx_.end) {
        ctx_.engine.schedule(f->stop, this, kTagStopFlow + f->index);
      }
    }
  }

  void on_event(Time now, uint64_t tag) override {
    const Time end = ctx_.end;
    if (tag == kTagInterval) {
      ctx_.recorder.close_interval(now, ctx_.endpoints.flow_counters());
      if (now < end) {
        ctx_.engine.schedule(ctx_.recorder.next_boundary(), this, kTagInterval);
      }
    } else if (tag == kTagQueue) {
      sample_queues(now);
      if (now + ctx_.options.queue_sample <= end) {
        ctx_.engine.schedule(now + ctx_.options.queue_sample, this, kTagQueue);
      }
    } else if (tag >= kTagStopFlow && tag - kTagStopFlow < ctx_.endpoints.flows().size()) {
      // The sending application stops at its `stop` (rrul's load end): no new data.
      TcpFlow& f = *ctx_.endpoints.flows()[tag - kTagStopFlow];
      f.sender.stop_writing(now);
      HostNode& h = *ctx_.hosts[static_cast<size_t>(f.from)];
      h.touch_sender(f);
      h.reschedule();
    } else if (tag == kTagProgress) {
      if (progress_) {
        progress_(Progress{now.to_seconds(), end.to_seconds(), ctx_.engine.stats().executed});
      }
      if (now < end) {
        ctx_.engine.schedule(min(now + ctx_.options.progress_every, end), this, kTagProgress);
      }
    }
  }

  std::map<std::string, report::QueueSeries> take_series() { return std::move(series_); }

 private:
  void sample_queues(Time now) {
    for (const Queue& q : queues_) {
      config::append_queue_sample(series_[q.key], now, q.nic->queue_sample());
    }
  }

  SimContext& ctx_;
  std::vector<Queue> queues_;
  std::map<std::string, report::QueueSeries> series_;
  ProgressFn progress_;
};

}  // namespace

// The network of the run: one Wire per link direction, a HostNode per host and a RouterNode per
// router (node order: config::Network), and the sampler.
struct Simulation::Impl {
  Impl(const config::Run& run, SimOptions options)
      : ctx(run, options, !run.scenario.routers.empty()),
        net(config::network_of(ctx.run_cfg.scenario)) {
    build_wires();
    build_nodes();
    connect();
    for (const auto& h : hosts) {
      h->add_endpoints();
    }
    sampler = std::make_unique<Sampler>(ctx, queue_keys());
  }

  // Link l's direction d (0: ends[0] -> ends[1]) is wires[2l + d], seeded so that the
  // two-host form keeps its seeds (seed * 2 + d).
  void build_wires() {
    const auto links = static_cast<uint64_t>(net.links().size());
    const uint64_t seed = ctx.run_cfg.scenario.seed;
    for (size_t l = 0; l < net.links().size(); ++l) {
      for (uint64_t d = 0; d < 2; ++d) {
        wires.push_back(std::make_unique<model::Wire>(
            net.links()[l].wire[d]->params(seed * 2 * links + 2 * l + d)));
      }
    }
  }

  void build_nodes() {
    const config::Scenario& s = ctx.run_cfg.scenario;
    for (size_t n = 0; n < net.nodes().size(); ++n) {
      const config::Network::Node& node = net.nodes()[n];
      if (node.router) {
        routers.push_back(std::make_unique<RouterNode>(
            ctx, node.name, config::make_router(net, static_cast<int>(n))));
        nodes.push_back(routers.back().get());
      } else {
        hosts.push_back(std::make_unique<HostNode>(ctx, static_cast<int>(n), node.name,
                                                   config::make_host_nic(s.hosts[n])));
        ctx.hosts.push_back(hosts.back().get());
        nodes.push_back(hosts.back().get());
      }
    }
  }

  model::Wire* out_wire(int iface) {
    const config::Network::Interface& i = net.interfaces()[static_cast<size_t>(iface)];
    return wires[static_cast<size_t>(2 * i.link + i.side)].get();
  }
  model::Wire* in_wire(int iface) {
    const config::Network::Interface& i = net.interfaces()[static_cast<size_t>(iface)];
    return wires[static_cast<size_t>(2 * i.link + 1 - i.side)].get();
  }

  // Attaches every interface's NIC to its wires and tells each node who reads its wires.
  void connect() {
    size_t r = 0;
    for (size_t n = 0; n < net.nodes().size(); ++n) {
      const config::Network::Node& node = net.nodes()[n];
      for (size_t k = 0; k < node.interfaces.size(); ++k) {
        const int iface = node.interfaces[k];
        if (node.router) {
          routers[r]->router().attach(static_cast<int>(k), out_wire(iface), in_wire(iface));
        } else {
          hosts[n]->attach(out_wire(iface), in_wire(iface));
        }
        const int peer = net.interfaces()[static_cast<size_t>(net.peer(iface))].node;
        nodes[n]->add_port(out_wire(iface), nodes[static_cast<size_t>(peer)]);
      }
      r += node.router ? 1 : 0;
    }
  }

  // Queue series keys: "a" / "b" in the two-host form (as directions are named), else the
  // interface's label: the host's name, or "router.iface" (docs/results.md).
  std::vector<Sampler::Queue> queue_keys() const {
    const bool two_host = ctx.run_cfg.scenario.links.empty();
    std::vector<Sampler::Queue> q;
    size_t r = 0;
    for (size_t n = 0; n < net.nodes().size(); ++n) {
      const config::Network::Node& node = net.nodes()[n];
      for (size_t k = 0; k < node.interfaces.size(); ++k) {
        const int iface = node.interfaces[k];
        std::string key = two_host ? (n == 0 ? "a" : "b") : net.interface_label(iface);
        const model::Nic* nic =
            node.router ? &routers[r]->router().nic(static_cast<int>(k)) : &hosts[n]->nic();
        q.push_back(Sampler::Queue{std::move(key), nic});
      }
      r += node.router ? 1 : 0;
    }
    return q;
  }

  report::Run execute(const ProgressFn& progress) {
    for (Node* n : nodes) {
      n->reschedule();
    }
    sampler->start(progress);
    ctx.engine.run_until(ctx.end);
    report::Run out =
        ctx.recorder.finish(ctx.end, ctx.endpoints.flow_counters(), ctx.endpoints.flow_totals());
    out.queues = sampler->take_series();
    for (report::Direction dir : report::kDirections) {
      out.stages[dir] = ctx.stages.result(dir);
    }
    if (!ctx.run_cfg.scenario.links.empty()) {
      record_network(out);
    }
    record_rx_batching(out);
    return out;
  }

  // A key of the receive batching trade-off (docs/rx-batching.md): GRO, adaptive moderation,
  // fixed RX coalescing (also in a brace group: "{rx_coalesce,tx_coalesce}.usecs"), deferred
  // IRQs, threaded NAPI, busy polling, Intel ITR, queue pairs.
  static bool is_rx_batching_key(const std::string& key) {
    if (key.find("rx_coalesce") != std::string::npos) {
      return true;
    }
    for (const char* k : {"gro", "adaptive_rx", "napi_defer_hard_irqs", "gro_flush_timeout",
                          "threaded", "busy_read", "prefer_busy_poll", "itr", "queues"}) {
      if (key == k || key.ends_with(std::string(".") + k)) {
        return true;
      }
    }
    return false;
  }
  // A NIC that batches receive work beyond fixed coalescing.
  static bool batches_rx(const model::PlatformNic::Params& p) {
    return p.gro || p.adaptive_rx || p.napi_defer_hard_irqs != 0 ||
           p.gro_flush_timeout != Duration::zero() || p.threaded ||
           p.busy_read != Duration::zero() || p.itr != model::ItrMode::kFixed;
  }

  // Hosts whose NIC batches receive work (batches_rx) or has several queue pairs; every
  // platform-NIC host when the run varies one of those keys, so that the runs of a sweep can be
  // compared (report::RxBatching). A multi-queue NIC's pairs are summed, each core listed.
  void record_rx_batching(report::Run& out) {
    bool varies = false;
    for (const auto& [key, value] : ctx.run_cfg.params) {
      (void)value;
      varies |= is_rx_batching_key(key);
    }
    for (const auto& h : hosts) {
      const std::vector<QueuePair> pairs = queue_pairs(*h);
      if (pairs.empty()) {
        continue;
      }
      const model::PlatformNic::Params& params = pairs.front().nic->params();
      if (!(batches_rx(params) || pairs.size() > 1 || varies)) {
        continue;
      }
      report::RxBatching& b = out.rx_batching[h->name()];
      b.gro = params.gro;
      b.adaptive_rx = params.adaptive_rx;
      uint64_t rx_bytes = 0;
      Duration rx_cpu;
      Duration spin;
      for (const QueuePair& q : pairs) {
        const model::PlatformNic::Stats& s = q.nic->stats();
        b.frames += s.rx_delivered;
        b.packets += b.gro ? s.rx_stack_packets : s.rx_delivered;
        b.largest = std::max<uint64_t>(
            b.largest, b.gro ? q.nic->gro().stats().largest : (s.rx_delivered > 0 ? 1 : 0));
        rx_cpu += s.rx_cpu;
        rx_bytes += s.rx_bytes;
        b.cpu_busy_s += q.cpu->stats().busy.to_seconds();
        b.rx_irqs += s.rx_irqs;
        b.tx_irqs += s.tx_irqs;
        b.polls += s.polls;
        b.napi_timer_polls += s.napi_timer_polls;
        b.busy_poll_sessions += s.busy_poll_sessions;
        spin += s.busy_spin;
        if (pairs.size() > 1) {
          b.queue_frames.push_back(s.rx_delivered);
          b.queue_cpu_busy_s.push_back(q.cpu->stats().busy.to_seconds());
        }
      }
      b.frames_per_packet =
          b.packets > 0 ? static_cast<double>(b.frames) / static_cast<double>(b.packets) : 0;
      b.rx_cpu_s = rx_cpu.to_seconds();
      b.rx_cpu_ns_per_byte = rx_bytes > 0 ? b.rx_cpu_s * 1e9 / static_cast<double>(rx_bytes) : 0;
      const double seconds = ctx.end.to_seconds();
      b.irqs_per_s = seconds > 0 ? static_cast<double>(b.rx_irqs + b.tx_irqs) / seconds : 0;
      b.cpu_ns_per_frame = b.frames > 0 ? b.cpu_busy_s * 1e9 / static_cast<double>(b.frames) : 0;
      b.rx_latency_ms = h->rx_latency().stats();
      b.busy_spin_s = spin.to_seconds();
    }
  }

  // Networks: every interface's counters (the qdisc kind's own included) and every node's CPU
  // and forwarding counters.
  void record_network(report::Run& out) {
    size_t r = 0;
    for (size_t n = 0; n < net.nodes().size(); ++n) {
      const config::Network::Node& node = net.nodes()[n];
      RouterNode* router = node.router ? routers[r++].get() : nullptr;
      report::NodeResult& nr = out.nodes[node.name];
      nr.router = node.router;
      // A host with a multi-queue NIC has one core per queue: busy time summed, utilisation
      // per core on average.
      double cores = 1;
      if (router != nullptr) {
        nr.cpu_busy_s = router->router().cpu().stats().busy.to_seconds();
      } else {
        const std::vector<QueuePair> pairs = queue_pairs(*hosts[n]);
        nr.cpu_busy_s = hosts[n]->cpu().stats().busy.to_seconds();
        for (size_t q = 1; q < pairs.size(); ++q) {
          nr.cpu_busy_s += pairs[q].cpu->stats().busy.to_seconds();
        }
        cores = static_cast<double>(std::max<size_t>(1, pairs.size()));
      }
      nr.cpu_utilization = nr.cpu_busy_s / (ctx.end.to_seconds() * cores);
      if (router != nullptr) {
        const model::Router::Stats& rs = router->router().stats();
        nr.forwarded = rs.forwarded;
        nr.no_route = rs.no_route;
        nr.ttl_expired = rs.ttl_expired;
      }
      for (size_t k = 0; k < node.interfaces.size(); ++k) {
        const int iface = node.interfaces[k];
        model::Nic& nic =
            router != nullptr ? router->router().nic(static_cast<int>(k)) : hosts[n]->nic();
        const model::NicCounters c = nic.counters();
        report::InterfaceResult& ir = out.interfaces[net.interface_label(iface)];
        ir.node = node.name;
        ir.tx_packets = c.tx_packets;
        ir.tx_bytes = c.tx_bytes;
        ir.rx_packets = c.rx_packets;
        ir.rx_bytes = c.rx_bytes;
        ir.qdisc_drops = c.tx_qdisc_drops;
        ir.rx_drops = c.rx_drops;
        if (router != nullptr) {
          ir.forwarded_out = router->router().interface_stats(static_cast<int>(k)).forwarded_out;
        }
        if (AnyQueue* q = nic.qdisc_queue()) {
          for (const config::QdiscCounter& qc :
               net.interfaces()[static_cast<size_t>(iface)].qdisc->counters(*q)) {
            ir.qdisc[qc.name] = qc.value;
          }
        }
      }
    }
  }

  SimContext ctx;
  config::Network net;  // points into ctx.run_cfg.scenario
  std::vector<std::unique_ptr<model::Wire>> wires;
  std::vector<std::unique_ptr<HostNode>> hosts;
  std::vector<std::unique_ptr<RouterNode>> routers;
  std::vector<Node*> nodes;  // by node index
  std::unique_ptr<Sampler> sampler;
};

Simulation::Simulation(const config::Run& run, SimOptions options)
    : impl_(std::make_unique<Impl>(run, options)) {}

Simulation::~Simulation() = default;

report::Run Simulation::run(const ProgressFn& progress) { return impl_->execute(progress); }

uint64_t Simulation::events() const { return impl_->ctx.engine.stats().executed; }

config::TrafficPlan Simulation::traffic() const {
  return impl_->ctx.endpoints.traffic(impl_->ctx.end, impl_->ctx.recorder.layout());
}

}  // namespace nicsim::sim
