#pragma once
// Endpoints — the traffic of a run as the simulator's hosts run it: TCP flows (a sender on one
// host, a receiver on another) and latency probes (ICMP echo or irtt-style UDP), built from
// config::TrafficPlan in its order (the recorder's flow and probe indexes).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/config/traffic_plan.h"
#include "nicsim/core/time.h"
#include "nicsim/report/run_recorder.h"
#include "nicsim/sim/tcp/params.h"
#include "nicsim/sim/tcp/receiver.h"
#include "nicsim/sim/tcp/sender.h"

namespace nicsim::sim {

inline constexpr uint32_t kEthIpBytes = 14 + 20;  // Ethernet + IPv4 headers
inline constexpr uint32_t kIcmpHeader = 8;
inline constexpr uint32_t kUdpHeader = 8;
inline constexpr uint32_t kProbeFlowBase = 1'000'000;  // Packet::flow_id of probe i: base + i

// A flow-dissector-like hash of (flow, direction): well mixed, deterministic.
uint32_t flow_hash(uint32_t flow, uint32_t salt);

struct TcpFlow {
  uint32_t index = 0;
  int from = 0;  // host (node) indexes
  int to = 1;
  uint8_t dscp = 0;
  Time start;
  Time stop;
  bool started = false;
  tcp::TcpSender sender;
  tcp::TcpReceiver receiver;
  uint32_t hash_data = 0;
  uint32_t hash_ack = 0;
  uint32_t sender_ep = 0;    // the sender's endpoint index on host `from` (HostNode)
  uint32_t receiver_ep = 0;  // the receiver's endpoint index on host `to`
  explicit TcpFlow(const tcp::Params& p) : sender(p), receiver(p) {}
  uint64_t received() const { return receiver.stats().bytes_received; }
};

struct Probe {
  bool icmp = true;
  int from = 0;
  int to = 1;
  uint32_t index = 0;
  Duration interval;
  uint32_t frame_len = 0;
  uint8_t dscp = 0;
  Time next_send;
  Time stop;
  uint32_t hash = 0;
};

class Endpoints {
 public:
  // Throws InvalidParams for TCP settings the model refuses.
  Endpoints(const config::Scenario& s, const config::TrafficPlan& plan);

  std::vector<std::unique_ptr<TcpFlow>>& flows() { return flows_; }
  const std::vector<std::unique_ptr<TcpFlow>>& flows() const { return flows_; }
  std::vector<std::unique_ptr<Probe>>& probes() { return probes_; }
  const std::vector<std::unique_ptr<Probe>>& probes() const { return probes_; }

  // Every flow's counters now / at the end, in plan order (report::RunRecorder).
  std::vector<report::FlowCounters> flow_counters() const;
  std::vector<report::FlowTotals> flow_totals() const;
  // The traffic as built, in config::TrafficPlan's terms (Simulation::traffic); before the run.
  config::TrafficPlan traffic(Time end, const report::RunLayout& layout) const;

 private:
  std::vector<std::unique_ptr<TcpFlow>> flows_;
  std::vector<std::unique_ptr<Probe>> probes_;
};

}  // namespace nicsim::sim
