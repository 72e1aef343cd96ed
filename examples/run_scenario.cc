// Run a scenario from C++ and read its results: load a scenario file (every [vary]
// combination is one run), simulate each run, then read goodput, per-interval throughput,
// probe latency and the BQL / queue series from the report::Run. The same structs are what
// `nicsim run --json` writes (docs/results.md). Usage: run_scenario SCENARIO.toml
// docs/library.md walks through it.
#include <algorithm>
#include <cstdio>
#include <exception>

#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"
#include "nicsim/report/results.h"
#include "nicsim/sim/simulation.h"

using namespace nicsim;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: run_scenario SCENARIO.toml\n");
    return 2;
  }
  config::LoadedScenario loaded;
  try {
    loaded = config::load_scenario_file(argv[1]);
  } catch (const config::ConfigError& e) {  // one line: file:line:column, key, what is wrong
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  for (const config::Run& run : loaded.runs) {
    sim::Simulation simulation(run);
    const report::Run r = simulation.run();
    std::printf("run '%s': %.3f s simulated, goodput a->b %.2f Mbit/s, %zu intervals\n",
                r.label.c_str(), r.duration_s, r.goodput_bps[report::Direction::kAtoB] / 1e6,
                r.intervals.size());
    for (const auto& [probe, latency] : r.latency_ms) {
      std::printf("  probe %-8s rtt mean %.3f ms\n", probe.c_str(), latency.rtt.mean);
    }
    for (const auto& [where, series] : r.queues) {
      uint64_t bql_max = 0;
      for (uint64_t limit : series.bql_limit_bytes) {
        bql_max = std::max(bql_max, limit);
      }
      std::printf("  queue %-4s %zu samples, largest BQL limit %llu bytes\n", where.c_str(),
                  series.time_s.size(), static_cast<unsigned long long>(bql_max));
    }
  }
  return loaded.runs.empty() ? 1 : 0;
}
