#pragma once
// The scenario file of a command, loaded, or its error printed as every command prints it
// (`nicsim: FILE:LINE:COL: key: problem`, one line): the caller then exits with status 2.

#include <cstdio>
#include <optional>
#include <string>

#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"

namespace nicsim::tools {

inline std::optional<config::LoadedScenario> load_scenario_or_report(const std::string& file) {
  try {
    return config::load_scenario_file(file);
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "nicsim: %s\n", e.what());
    return std::nullopt;
  }
}

}  // namespace nicsim::tools
