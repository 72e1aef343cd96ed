#pragma once
// `nicsim server` and `nicsim rrul HOST`: live measurements across a real network
// (nicsim/live, docs/live.md).

namespace nicsim::tools {
int server_command(int argc, char** argv);
int rrul_command(int argc, char** argv);
}  // namespace nicsim::tools
