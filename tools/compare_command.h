#pragma once
namespace nicsim::tools {
// `nicsim compare A.json B.json ...`: side-by-side table of every run of every file.
int compare_command(int argc, char** argv);
}  // namespace nicsim::tools
