#pragma once
// The manual page nicsim(1), generated from the same command table and CLI11 option
// definitions as `nicsim --help` and the bash completion (tools/commands.cc), so the three
// cannot drift apart. `nicsim help --man` prints it; the build installs it as
// share/man/man1/nicsim.1.

#include <string>

namespace nicsim::tools::cli {

// The page in man(7) roff. `version` goes in the title line ("nicsim 0.1.0").
std::string man_page(const std::string& version);

}  // namespace nicsim::tools::cli
