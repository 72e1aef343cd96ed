#pragma once
// NetnsTraffic — a scenario's traffic between network namespaces of this machine, for
// `nicsim emulate FILE` without a command: a nicsim server (server.h) runs in a thread that
// entered host b's namespace, and the traffic engine (traffic.h) in a thread that entered host
// a's, so every packet crosses the emulated link. In a network of more hosts, each flow's or
// probe's pair of hosts takes those two parts (NetnsHosts::all). Both threads run under the normal
// scheduler (the emulator's loop thread may be SCHED_FIFO; they must not inherit that). Both hosts
// read the same CLOCK_MONOTONIC, so UDP probes report exact one-way delays.
//
// Layering: takes namespace fds and addresses, not emu types (live does not depend on emu).

#include <netinet/in.h>

#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nicsim/live/socket_util.h"
#include "nicsim/live/traffic.h"
#include "nicsim/report/results.h"
#include "nicsim/report/run_recorder.h"

namespace nicsim::live {

struct NetnsHosts {
  int netns_a = -1;  // fds on the namespaces (kept open by the caller while traffic runs)
  int netns_b = -1;
  in_addr addr_a{};
  in_addr addr_b{};
  // A network with more than two hosts: every host's namespace fd and address, by host index
  // (the plan's). Then a nicsim server thread runs in each host that is the higher-indexed end
  // of a flow or UDP probe, and the client thread opens each flow and probe from the
  // lower-indexed end's namespace (ClientOptions::hosts). Empty: hosts a and b above.
  struct Host {
    int netns_fd = -1;
    in_addr addr{};
  };
  std::vector<Host> all;
};

class NetnsTraffic {
 public:
  using Log = std::function<void(const std::string&)>;
  // `info` names the run (report::RunRecorder).
  NetnsTraffic(TrafficPlan plan, report::RunInfo info, Log log);
  NetnsTraffic(const NetnsTraffic&) = delete;
  NetnsTraffic& operator=(const NetnsTraffic&) = delete;
  ~NetnsTraffic();

  // Starts both threads (returns at once). Call once.
  void start(const NetnsHosts& hosts);
  // Becomes readable (eventfd) when the traffic is over (or failed): the emulation may stop.
  int done_fd() const { return done_.get(); }
  // Stops whatever still runs, joins, and returns the results. Throws the client's LiveError
  // (or the server's) if the traffic could not run.
  report::Run finish();

 private:
  void stop_threads();
  void log_line(const std::string& line);

  TrafficPlan plan_;
  report::RunInfo info_;
  Log log_;
  Fd done_;
  Fd stop_;
  // One server thread per host in `at`; `network`: their log lines name the host.
  void start_servers(const std::vector<size_t>& at, const NetnsHosts& hosts, bool network,
                     std::vector<std::shared_ptr<std::promise<uint16_t>>>& ports);
  std::vector<std::thread> servers_;
  std::thread client_;
  std::optional<report::Run> result_;
  std::exception_ptr error_;
};

}  // namespace nicsim::live
