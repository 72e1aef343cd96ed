// `nicsim compare`: one table row per run of each results file (report/run_summary.h).
// Exit status: 0 ok, 2 usage error or an unreadable results file (one line naming it).
#include "tools/compare_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/report/results_file.h"
#include "nicsim/report/run_summary.h"
#include "nicsim/report/text.h"

namespace nicsim::tools {
cli::Action define_compare(CLI::App& app, const cli::Invocation&) {
  auto files = std::make_shared<std::vector<std::string>>();
  app.description(
      "Prints one row per run of each results file (nicsim run, emulate or rrul --json), side\n"
      "by side, e.g. the simulation of a scenario and a measurement of the real link:\n"
      "  file, run label, backend (sim/emu/live), goodput a->b and b->a (Mbit/s),\n"
      "  the main probe (the first ICMP probe, else the first by name) and its p50/p99 RTT (ms),\n"
      "  and for rrul runs the induced latency (ms), bufferbloat grade and RPM.\n"
      "'-' marks a value the run does not have.");
  app.footer("Exit status 2 on an unreadable file or one that is not a results file.");
  app.add_option("RESULT", *files, "results files (docs/results.md)")->type_name("RESULT.json");
  return [files] {
    if (files->empty()) {
      throw cli::UsageError("missing the results files");
    }
    std::vector<report::CompareRow> rows;
    for (const std::string& f : *files) {
      report::Results results;
      try {
        results = report::load_results_file(f);
      } catch (const report::ResultsFileError& e) {
        std::fprintf(stderr, "nicsim compare: %s\n", e.what());
        return 2;
      }
      for (const report::Run& r : results.runs) {
        rows.push_back({f, report::summarize(r)});
      }
    }
    report::print(stdout, report::format_compare_table(rows));
    return 0;
  };
}

}  // namespace nicsim::tools
