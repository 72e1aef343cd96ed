// libFuzzer target: arbitrary bytes as a scenario file, and what the loader accepts is briefly
// simulated. The loader's target (nicsim/config/scenario_fuzz.cc) stops at the Scenario; this one
// also builds the hosts, routers, NICs and traffic and runs them, so a configuration the loader
// lets through but the simulator cannot honour must fail cleanly (nicsim::InvalidParams or
// std::invalid_argument, as Simulation's constructor documents) and never crash, hang or trip
// a sanitizer. Bounded cost per input: only scenarios of at most kMaxDuration simulated time,
// kMaxNodes hosts and routers and the first kMaxRuns runs are simulated (the seed corpus
// nicsim/sim/fuzz_corpus/scenario_sim/ has such short files; the dictionary offers "20ms").
// Run with scripts/fuzz.sh.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"
#include "nicsim/sim/simulation.h"

namespace {

constexpr nicsim::Duration kMaxDuration = nicsim::Duration::ms(50);
constexpr size_t kMaxNodes = 12;
constexpr size_t kMaxRuns = 2;

bool cheap_enough(const nicsim::config::Scenario& s) {
  return s.duration <= kMaxDuration && s.hosts.size() + s.routers.size() <= kMaxNodes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nicsim::config::LoadOptions options;
  options.preset_dirs = {NICSIM_FUZZ_PRESETS_DIR};
  options.standard_presets = false;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nicsim::config::LoadedScenario loaded;
  try {
    loaded = nicsim::config::load_scenario_text(text, "fuzz.toml", options);
  } catch (const nicsim::config::ConfigError&) {
    return 0;  // rejected with a message: the loader's target covers it
  }
  for (size_t i = 0; i < loaded.runs.size() && i < kMaxRuns; ++i) {
    const nicsim::config::Run& run = loaded.runs[i];
    if (!cheap_enough(run.scenario)) {
      continue;
    }
    try {
      nicsim::sim::SimOptions sim_options;
      sim_options.check_wakeups = true;  // the engine's own consistency checks, too
      nicsim::sim::Simulation simulation(run, sim_options);
      (void)simulation.run();
    } catch (const std::invalid_argument&) {
      // nicsim::InvalidParams included: refused with a message, as the tools report it
    }
  }
  return 0;
}
