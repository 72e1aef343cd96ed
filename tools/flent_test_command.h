#pragma once
// `nicsim flent-test NAME SCENARIO.toml` / `nicsim flent-test --list`: flent's named tests
// (config/flent_tests.h) over a scenario's network, in the simulator.

#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_flent_test(CLI::App& app, const cli::Invocation& inv);
}  // namespace nicsim::tools
