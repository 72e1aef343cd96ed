#pragma once
// `nicsim emulate SCENARIO.toml [-- CMD]`: emulate the link in real time (docs/emu.md).

#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_emulate(CLI::App& app, const cli::Invocation& inv);
}  // namespace nicsim::tools
