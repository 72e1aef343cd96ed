#pragma once
// `nicsim run SCENARIO.toml`: simulate a scenario (tools/run_command.cc).

#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_run(CLI::App& app, const cli::Invocation& inv);
}  // namespace nicsim::tools
