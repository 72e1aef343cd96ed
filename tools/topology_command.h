#pragma once
// `nicsim topology SCENARIO.toml [--dot]`: the scenario's network as text or Graphviz dot.

#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_topology(CLI::App& app, const cli::Invocation& inv);
}  // namespace nicsim::tools
