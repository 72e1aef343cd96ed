#pragma once
// Endpoints — the traffic of a run as the simulator's hosts run it: TCP flows (a sender on one
// host, a receiver on another), latency probes (ICMP echo or irtt-style UDP) and constant-rate
// UDP floods, built from
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
  // Transfers ([[traffic.transfers]]): the sender is the server, the receiver the client, who
  // sends a request at `request_at`; its arrival at the server starts the connection (`start`
  // stays Time::max() until then). `transfer` is the recorder's id once requested.
  bool is_transfer = false;
  Time request_at = Time::max();
  bool requested = false;
  bool completed = false;
  uint64_t transfer = 0;
  uint64_t size = 0;
  size_t set = 0;
  bool request_pending() const { return is_transfer && !requested; }
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

inline constexpr uint32_t kFloodFlowBase = 2'000'000;
// A transfer's request: a SYN-sized frame (Ethernet + IPv4 + TCP with the usual SYN options).
inline constexpr uint32_t kTransferRequestFrame =
    14 + 20 + 40;  // Packet::flow_id of flood i: base + i

// A udp_flood or a voip stream: datagram k leaves at start + rate.transmit_time(k * size), exactly
// (the time is computed from the cumulative payload, so rounding never accumulates), while before
// `stop`.
struct Flood {
  int from = 0;
  int to = 1;
  uint32_t index = 0;
  Rate rate;
  uint32_t size = 0;  // UDP payload bytes
  uint32_t frame_len = 0;
  uint8_t dscp = 0;
  Time start;
  Time stop;
  uint64_t sent = 0;  // datagrams sent so far
  uint32_t hash = 0;
  std::string codec;  // "" udp_flood; a voip codec (config::FloodPlan::codec)
  Time next_send() const { return start + rate.transmit_time(sent * size); }
};

// A [[traffic.replay]]'s frames sent by one host (config/replay_file.h): each enters the host's
// NIC at its recorded time with the recorded length, priority, TOS, flow hash and GSO shape,
// open loop (nobody answers; the receiving host ignores it). `to` is already the scenario's
// host index (config::kReplayNoHost: no host, which no router routes).
struct ReplaySource {
  int from = 0;
  std::vector<config::ReplayFrame> frames;  // in time order
  size_t next = 0;
  Time next_send() const {
    return next < frames.size() ? Time::from_ns(frames[next].time_ns) : Time::max();
  }
};

class Endpoints {
 public:
  // Throws InvalidParams for TCP settings the model refuses.
  Endpoints(const config::Scenario& s, const config::TrafficPlan& plan);

  std::vector<std::unique_ptr<TcpFlow>>& flows() { return flows_; }
  const std::vector<std::unique_ptr<TcpFlow>>& flows() const { return flows_; }
  std::vector<std::unique_ptr<Probe>>& probes() { return probes_; }
  const std::vector<std::unique_ptr<Probe>>& probes() const { return probes_; }
  std::vector<std::unique_ptr<Flood>>& floods() { return floods_; }
  const std::vector<std::unique_ptr<Flood>>& floods() const { return floods_; }
  std::vector<std::unique_ptr<ReplaySource>>& replays() { return replays_; }

  // Every flow's counters now / at the end, in plan order (report::RunRecorder).
  std::vector<report::FlowCounters> flow_counters() const;
  std::vector<report::FlowTotals> flow_totals() const;
  // The traffic as built, in config::TrafficPlan's terms (Simulation::traffic); before the run.
  config::TrafficPlan traffic(Time end, const report::RunLayout& layout) const;

 private:
  std::vector<std::unique_ptr<TcpFlow>> flows_;
  std::vector<std::unique_ptr<Probe>> probes_;
  std::vector<std::unique_ptr<Flood>> floods_;
  std::vector<std::unique_ptr<ReplaySource>> replays_;
  size_t bulk_flows_ = 0;  // flows_[0, bulk_flows_) are the plan's flows; then the transfers
  std::vector<config::TransferSetPlan> transfer_sets_;
};

}  // namespace nicsim::sim
