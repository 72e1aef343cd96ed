#pragma once
// Simulation — one run of a scenario: two hosts with TCP, ping and UDP probes, their NICs
// (PlatformNic or UsbNic from the presets), their CPUs and the wire both ways, driven by a
// discrete-event Engine. Deterministic: the same run and seed give the same report::Run.
//
// Each host is one Engine process with one Wakeup at the earliest of its NIC's next event, its
// TCP endpoints' timers and its probes' next sends (each endpoint's time cached and re-read
// only after a call into it, so a wake-up costs O(touched endpoints), not O(all)). The NICs read
// their incoming Wire themselves, so after a host runs both hosts are rescheduled. NIC callbacks
// (deliver, tx_released) are queued and handled after the NIC call returns, so nothing re-enters a
// model.
//
// What a host does with packets (docs/ARCHITECTURE.md "The simulator in one paragraph"):
//  * TCP: segments from the TCP model become Packets (sizes per tcp/segment.h, GSO units as
//    one packet the NIC segments); frames are mapped back to segments with gso_index. A qdisc
//    refusal goes back as on_local_drop, a congestion verdict as on_local_congestion; TX
//    releases return each segment's truesize share (TCP Small Queues).
//  * ICMP echo (ping): 98-byte requests (56 payload), replies sent at once by the peer; RTT.
//  * UDP probes (irtt-style): a request and an immediate reflection, giving the RTT and both
//    one-way delays exactly (the hosts share the simulation clock).
// Priority (skb->priority, pfifo_fast bands) follows the packet's TOS as the IPv4 stack does.

#include <cstdint>
#include <functional>
#include <memory>

#include "nicsim/config/scenario.h"
#include "nicsim/config/traffic_plan.h"
#include "nicsim/core/time.h"
#include "nicsim/report/results.h"
#include "nicsim/report/run_recorder.h"

namespace nicsim::sim {

struct SimOptions {
  Duration interval = report::kDefaultInterval;  // iperf3-style interval table
  Duration queue_sample = Duration::ms(10);      // queue / BQL time series
  Duration progress_every = Duration::ms(500);   // simulated time between progress callbacks
  // Tests: recompute each host's wake-up by a full scan of its endpoints too, and check that no
  // endpoint kept output after its host ran; throw std::logic_error otherwise.
  bool check_wakeups = false;
};

struct Progress {
  double simulated_s = 0;
  double duration_s = 0;
  uint64_t events = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

class Simulation {
 public:
  // Builds the hosts, NICs and traffic of `run` (throws nicsim::InvalidParams or
  // std::invalid_argument for a configuration the simulator cannot honour).
  explicit Simulation(const config::Run& run, SimOptions options = {});
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Runs the whole duration and returns the results (label, params and the effective
  // configuration included). Call once.
  report::Run run(const ProgressFn& progress = {});
  uint64_t events() const;
  // The traffic as built (flows with the congestion control their senders run, probes with
  // their frame sizes), in config::TrafficPlan's terms: for tests that compare back-ends.
  // Call before run() (probe start times are read from the probes' next send times).
  config::TrafficPlan traffic() const;

 private:
  struct World;
  std::unique_ptr<World> world_;
};

}  // namespace nicsim::sim
