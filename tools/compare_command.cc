// `nicsim compare`: one table row per run of each results file (report/run_summary.h).
// Exit status: 0 ok, 2 usage error or an unreadable results file (one line naming it).
#include "tools/compare_command.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/report/json_reader.h"
#include "nicsim/report/run_summary.h"
#include "nicsim/report/text.h"

namespace nicsim::tools {
namespace {

constexpr const char* kCompareUsage =
    "usage: nicsim compare A.json [B.json ...]\n"
    "\n"
    "Prints one row per run of each results file (nicsim run or nicsim rrul --json), side\n"
    "by side, e.g. the simulation of a scenario and a measurement of the real link:\n"
    "  file, run label, backend (sim/emu/live), goodput a->b and b->a (Mbit/s),\n"
    "  the main probe (the first ICMP probe, else the first by name) and its p50/p99 RTT (ms),\n"
    "  and for rrul runs the induced latency (ms), bufferbloat grade and RPM.\n"
    "'-' marks a value the run does not have. Exit status 2 on an unreadable file.\n";

}  // namespace

int compare_command(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kCompareUsage, stdout);
      return 0;
    }
    if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "nicsim compare: unknown option '%s'\n%s", argv[i], kCompareUsage);
      return 2;
    }
    files.emplace_back(arg);
  }
  if (files.empty()) {
    std::fprintf(stderr, "nicsim compare: missing the results files\n%s", kCompareUsage);
    return 2;
  }
  std::vector<report::CompareRow> rows;
  for (const std::string& f : files) {
    report::Results results;
    try {
      results = report::read_results_file(f);
    } catch (const report::ResultsFileError& e) {
      std::fprintf(stderr, "nicsim: %s\n", e.what());
      return 2;
    }
    for (const report::Run& r : results.runs) {
      rows.push_back({f, report::summarize(r)});
    }
  }
  report::print(stdout, report::format_compare_table(rows));
  return 0;
}

}  // namespace nicsim::tools
