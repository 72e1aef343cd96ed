#pragma once
// What every measuring command (run, emulate, rrul) does with its results: the invocation's
// wall-clock facts in `meta`, and the --json file.

#include <optional>
#include <string>

#include "nicsim/report/results.h"

namespace nicsim::tools {

// Results with meta's version, git commit, start time, host name and command line filled;
// the caller adds runs and timings.
report::Results new_results(int argc, char** argv);

// Writes the results as JSON to `path` when set. Returns 0, or 1 after the one-line error
// "<who>: cannot write <path>" on stderr.
int write_json_file(const report::Results& results, const std::optional<std::string>& path,
                    const char* who);

}  // namespace nicsim::tools
