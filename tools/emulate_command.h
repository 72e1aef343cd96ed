#pragma once
// `nicsim emulate SCENARIO.toml [-- CMD]`: emulate the link in real time (docs/emu.md).

#include <string>

#include "nicsim/config/scenario.h"
#include "tools/cli.h"
#include "tools/results_output.h"

namespace nicsim::tools {
cli::Action define_emulate(CLI::App& app, const cli::Invocation& inv);

// Emulates every run of `loaded` with its own traffic, as `nicsim emulate FILE` does with the
// default options (packet I/O, the scenario's NIC models, real-time priority 50), and writes
// `out` (`nicsim flent-test --emulate`). Returns the exit status; messages name `command`.
int emulate_own_traffic(const config::LoadedScenario& loaded, const std::string& file,
                        const OutputOptions& out, bool quiet, const cli::Invocation& inv);
}  // namespace nicsim::tools
