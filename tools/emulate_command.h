#pragma once

namespace nicsim::tools {
// `nicsim emulate FILE [options] [-- CMD [ARGS...]]`; returns the exit status.
int emulate_command(int argc, char** argv);
}  // namespace nicsim::tools
