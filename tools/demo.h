#pragma once

namespace nicsim::tools {
// Runs the library demonstration and prints its tables; returns the exit status.
int run_demo();
}  // namespace nicsim::tools
