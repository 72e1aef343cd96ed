#pragma once
namespace nicsim::tools {
// `nicsim plot RESULT.json... -o FILE.png|svg [--kind totals|cdf|compare] [--run LABEL]`.
int plot_command(int argc, char** argv);
}  // namespace nicsim::tools
