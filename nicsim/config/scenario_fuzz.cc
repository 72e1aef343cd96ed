// libFuzzer target: arbitrary bytes as a scenario file (with the shipped presets) must never
// crash, hang or trip a sanitizer. Anything the loader accepts must also survive the dump round
// trip: dump() -> load -> an equal Scenario (docs/scenarios.md). Errors are ConfigError.
// Run with scripts/fuzz.sh (seed corpus: nicsim/config/fuzz_corpus/scenario/).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nicsim::config::ConfigError;
  using nicsim::config::LoadedScenario;
  using nicsim::config::LoadOptions;
  LoadOptions options;
  options.preset_dirs = {NICSIM_FUZZ_PRESETS_DIR};
  options.standard_presets = false;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  LoadedScenario loaded;
  try {
    loaded = nicsim::config::load_scenario_text(text, "fuzz.toml", options);
  } catch (const ConfigError&) {
    return 0;  // rejected with a message: fine
  }
  const std::string dumped = nicsim::config::dump(loaded.scenario);
  try {
    const LoadedScenario again = nicsim::config::load_scenario_text(dumped, "fuzz.toml", options);
    if (!(again.scenario == loaded.scenario) || again.runs.size() != loaded.runs.size()) {
      std::fprintf(stderr, "round trip changed the scenario:\n%s\n", dumped.c_str());
      std::abort();
    }
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "the dump of an accepted scenario is rejected: %s\n%s\n", e.what(),
                 dumped.c_str());
    std::abort();
  }
  return 0;
}
