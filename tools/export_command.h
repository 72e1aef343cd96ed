#pragma once
#include <optional>
#include <string>

#include "nicsim/report/results.h"
#include "tools/cli.h"

namespace nicsim::tools {

// `nicsim export RESULT.json --csv DIR | --flent OUT.flent.gz [--run K=V,...]`.
cli::Action define_export(CLI::App& app, const cli::Invocation& inv);

// Writes the CSV tables into csv_dir (created if missing) and/or the flent file(s); prints
// what it wrote to stderr prefixed by `who`. Returns 0, or 1 when a file cannot be written
// (message printed), or 2 when the results cannot be exported (e.g. no intervals for flent).
// `run`: only the runs it selects (report/run_selector.h) (flent), else every run (one flent file
// per run).
int write_exports(const report::Results& results, const std::optional<std::string>& csv_dir,
                  const std::optional<std::string>& flent_out,
                  const std::optional<std::string>& run, const char* who);

}  // namespace nicsim::tools
