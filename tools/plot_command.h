#pragma once
// `nicsim plot RESULT.json... -o FILE.png|svg`: draw results with gnuplot.

#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_plot(CLI::App& app, const cli::Invocation& inv);
}  // namespace nicsim::tools
