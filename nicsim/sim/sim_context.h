#pragma once
// SimContext — what the nodes of one simulation share: the engine and the run's end, the
// traffic endpoints and the metadata of packets in flight, what is recorded (report::
// RunRecorder, per-path stage times), and the hosts by index (a flow's two ends live on two
// hosts). Owned by sim::Simulation; nodes hold a reference.

#include <cstdint>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/config/traffic_plan.h"
#include "nicsim/report/run_recorder.h"
#include "nicsim/sim/endpoints.h"
#include "nicsim/sim/engine.h"
#include "nicsim/sim/meta_table.h"
#include "nicsim/sim/simulation.h"
#include "nicsim/sim/stage_times.h"

namespace nicsim::sim {

class HostNode;

struct SimContext {
  SimContext(const config::Run& r, SimOptions o, bool with_routers)
      : run_cfg(r),
        options(o),
        end(Time::zero() + run_cfg.scenario.duration),
        plan(config::plan(run_cfg.scenario)),
        recorder(config::run_info(run_cfg, "sim"), config::recorder_layout(plan, options.interval)),
        endpoints(run_cfg.scenario, plan),
        stages(with_routers) {}

  // The host that sent a packet with this metadata (data: the flow's sender; ACK: its receiver;
  // probe request: the probe's source; reply: its target).
  int source_host(const PacketMeta& m) const {
    switch (m.kind) {
      case PacketMeta::Kind::kTcpData:
        return endpoints.flows()[m.flow]->from;
      case PacketMeta::Kind::kTcpAck:
        return endpoints.flows()[m.flow]->to;
      case PacketMeta::Kind::kEchoRequest:
      case PacketMeta::Kind::kProbeRequest:
        return endpoints.probes()[m.flow]->from;
      case PacketMeta::Kind::kEchoReply:
      case PacketMeta::Kind::kProbeReply:
        return endpoints.probes()[m.flow]->to;
      case PacketMeta::Kind::kFlood:
        return endpoints.floods()[m.flow]->from;
      case PacketMeta::Kind::kTransferRequest:
        return endpoints.flows()[m.flow]->to;  // the client (the flow's receiver)
    }
    return 0;
  }
  // Directions as the report names them: sent by the first host "a->b", else "b->a".
  report::Direction direction_of(const PacketMeta& m) const {
    return source_host(m) == 0 ? report::Direction::kAtoB : report::Direction::kBtoA;
  }

  config::Run run_cfg;
  SimOptions options;
  Engine engine;
  Time end;
  config::TrafficPlan plan;
  report::RunRecorder recorder;
  Endpoints endpoints;
  MetaTable meta;
  StageTimes stages;
  std::vector<HostNode*> hosts;  // by host index (= node index)
  uint64_t next_packet_id = 0;
};

}  // namespace nicsim::sim
