#pragma once
// `nicsim compare A.json B.json ...`: side-by-side table of every run of every file.

#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_compare(CLI::App& app, const cli::Invocation& inv);
}  // namespace nicsim::tools
