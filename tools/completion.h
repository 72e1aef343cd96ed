#pragma once
// The bash completion of nicsim, generated from the commands' own option definitions
// (tools/commands.cc): subcommands; each subcommand's options; file names for arguments and
// options whose values are files (a type name like OUT.json, FILE or SCENARIO.toml),
// directories for DIR, and the choices of options like --kind totals|cdf|compare.

#include <string>

#include "tools/cli.h"

namespace nicsim::tools::cli {

// The completion script for bash: defines _nicsim and registers it with `complete`.
std::string bash_completion_script();

// `nicsim completion [bash]`.
Action define_completion(CLI::App& app, const Invocation& inv);

}  // namespace nicsim::tools::cli
