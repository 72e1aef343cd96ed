#pragma once
// `nicsim server` and `nicsim rrul HOST`: live measurements across a real network (nicsim/live,
// docs/live.md).

#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_server(CLI::App& app, const cli::Invocation& inv);
cli::Action define_rrul(CLI::App& app, const cli::Invocation& inv);
}  // namespace nicsim::tools
