#pragma once
// `nicsim server` and `nicsim rrul HOST`: live measurements across a real network (nicsim/live,
// docs/live.md).

#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_server(CLI::App& app, const cli::Invocation& inv);
cli::Action define_rrul(CLI::App& app, const cli::Invocation& inv);
// `nicsim test NAME HOST...`: any of flent's named tests (config/flent_tests.h) live.
cli::Action define_test(CLI::App& app, const cli::Invocation& inv);
}  // namespace nicsim::tools
