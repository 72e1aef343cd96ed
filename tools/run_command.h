#pragma once

namespace nicsim::tools {
// `nicsim run FILE [--json OUT] [--seed N] [--quiet]`; returns the exit status.
int run_command(int argc, char** argv);
}  // namespace nicsim::tools
