#pragma once
// What `nicsim emulate` emulates, decided before anything is created: which [vary] runs
// (selected by label, report/run_selector.h), with which overrides, and whether the scenario's
// own traffic is the workload. The rules (docs/emu.md):
//   - with a command (-- CMD) or --pcap, exactly one run must be selected: the command and the
//     capture belong to one emulation;
//   - without a command, the scenario's [[traffic.*]] is measured on every selected run in
//     turn; --json/--csv/--flent need that traffic;
//   - --seed and --duration override every selected run's scenario.
// Then one run at a time: session.h runs it, session_summary.h reports on it.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/core/time.h"
#include "nicsim/emu/event_loop.h"
#include "nicsim/report/run_selector.h"

namespace nicsim::emu {

// A request that cannot be emulated as asked (a usage error; the message is one line).
class EmulationRequestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EmulationRequest {
  std::string scenario_file;  // for messages
  report::RunSelector runs;   // --run
  bool command = false;       // -- CMD given
  bool pcap = false;          // --pcap given
  bool outputs = false;       // --json/--csv/--flent given
  std::optional<uint64_t> seed;
  std::optional<Duration> duration;
};

struct EmulationPlan {
  std::vector<config::Run> runs;  // overrides applied, in the scenario's order
  bool own_traffic = false;       // the scenario's [[traffic.*]] is the workload
};

// Whether the scenario has traffic of its own ([[traffic.tcp|ping|udp_probe|rrul]]).
bool has_traffic(const config::Scenario& s);

// The runs to emulate. Throws EmulationRequestError naming the file, the selector and the
// runs there are.
EmulationPlan plan_emulation(const config::LoadedScenario& loaded, const EmulationRequest& req);

// --busy-poll never sleeps: under SCHED_FIFO the kernel's RT throttling would stall it, so
// it runs under the normal scheduler unless a priority was asked for explicitly.
void resolve_busy_poll(LoopOptions& loop, bool rt_priority_given);

}  // namespace nicsim::emu
