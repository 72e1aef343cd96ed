#pragma once
// Simulation — one run of a scenario over its network (config::Network): hosts with TCP, ping
// and UDP probes (sim::HostNode), routers (sim::RouterNode over model::Router), every
// interface's NIC (PlatformNic or UsbNic from the presets) on its node's CPU, and one Wire per
// link direction, driven by a discrete-event Engine. The two-host form is the two-node network.
// Deterministic: the same run and seed give the same report::Run.
//
// Each node is one Engine process with one Wakeup at its next event (sim/node.h); after a node
// runs, the nodes reading the wires it sent on are rescheduled. What hosts do with packets:
// sim/host_node.h; per-path stage times: sim/stage_times.h.

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
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nicsim::sim
