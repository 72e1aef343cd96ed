#pragma once
// `nicsim report RESULT.json -o report.html`: a results file as one self-contained HTML page
// (report/html_report.h, docs/report.md).

#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_report(CLI::App& app, const cli::Invocation& inv);
}  // namespace nicsim::tools
