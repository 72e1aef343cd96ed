#include "nicsim/emu/emulation.h"

namespace nicsim::emu {
namespace {

std::string run_labels(const config::LoadedScenario& loaded) {
  std::string labels;
  for (const config::Run& r : loaded.runs) {
    labels += (labels.empty() ? "" : "; ") + (r.label.empty() ? std::string("(one run)") : r.label);
  }
  return labels;
}

}  // namespace

bool has_traffic(const config::Scenario& s) {
  const config::TrafficConfig& t = s.traffic;
  return !t.tcp.empty() || !t.ping.empty() || !t.udp_probe.empty() || !t.rrul.empty() ||
         !t.udp_flood.empty() || !t.voip.empty() || !t.transfers.empty();
}

EmulationPlan plan_emulation(const config::LoadedScenario& loaded, const EmulationRequest& req) {
  EmulationPlan plan;
  plan.own_traffic = !req.command && has_traffic(loaded.scenario);
  for (const config::Run& r : loaded.runs) {
    if (req.runs.matches(r.label)) {
      plan.runs.push_back(r);
    }
  }
  const size_t n = plan.runs.size();
  if (n == 0) {
    throw EmulationRequestError("--run " + req.runs.text() + " matches none of the runs of " +
                                req.scenario_file + ": " + run_labels(loaded));
  }
  if (n > 1 && !plan.own_traffic) {
    throw EmulationRequestError(req.scenario_file + " has " + std::to_string(n) +
                                " runs ([vary]) that match; with a command (or without "
                                "traffic) choose one with --run K=V,... (runs: " +
                                run_labels(loaded) + ")");
  }
  if (n > 1 && req.pcap) {
    throw EmulationRequestError("--pcap records one emulation: choose one of the " +
                                std::to_string(n) +
                                " runs with --run K=V,... (runs: " + run_labels(loaded) + ")");
  }
  if (req.outputs && !plan.own_traffic) {
    throw EmulationRequestError("--json/--csv/--flent: " + req.scenario_file +
                                " has no [[traffic.*]] to measure");
  }
  for (config::Run& r : plan.runs) {
    if (req.seed) {
      r.scenario.seed = *req.seed;
    }
    if (req.duration) {
      r.scenario.duration = *req.duration;
    }
  }
  return plan;
}

void resolve_busy_poll(LoopOptions& loop, bool rt_priority_given) {
  if (loop.busy_poll && !rt_priority_given) {
    loop.rt_priority = 0;
  }
}

}  // namespace nicsim::emu
