// `nicsim report`: reads a results file, builds the page (report/html_report.h) and writes it
// under a temporary name renamed into place (write_file). Exit status: 0 ok, 2 usage error or
// an unreadable results file (one line naming the file and the JSON path), 1 when the page
// cannot be written.
#include "tools/report_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "nicsim/report/export_flent.h"
#include "nicsim/report/html_report.h"
#include "nicsim/report/results_file.h"
#include "tools/results_output.h"

namespace nicsim::tools {
namespace {

struct ReportArgs {
  std::vector<std::string> input;  // exactly one
  std::string output;
};

// The file's name without its directories (the page's title).
std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int report_page(const ReportArgs& a) {
  report::Results results;
  try {
    results = report::load_results_file(a.input[0]);
  } catch (const report::ResultsFileError& e) {
    std::fprintf(stderr, "nicsim: %s\n", e.what());
    return 2;
  }
  std::string page;
  try {
    page = report::html_report(results, {base_name(a.input[0])});
  } catch (const report::ExportError& e) {
    std::fprintf(stderr, "nicsim report: %s: %s\n", a.input[0].c_str(), e.what());
    return 2;
  }
  if (const std::string why = write_file(a.output, page); !why.empty()) {
    std::fprintf(stderr, "nicsim report: cannot write %s: %s\n", a.output.c_str(), why.c_str());
    return 1;
  }
  std::fprintf(stderr, "nicsim report: wrote %s (%zu runs)\n", a.output.c_str(),
               results.runs.size());
  return 0;
}

}  // namespace

cli::Action define_report(CLI::App& app, const cli::Invocation&) {
  auto a = std::make_shared<ReportArgs>();
  app.description(
      "Writes a results file (nicsim run, emulate or rrul --json) as one self-contained HTML\n"
      "page that opens without network: the run table, goodput and latency over time (zoom),\n"
      "latency CDFs, waiting per stage, queues and, for several runs, goodput against latency\n"
      "per run with its parameters on hover (docs/report.md).");
  app.footer(
      "Exit status 2 on a bad command line or an unreadable results file, 1 when the page\n"
      "cannot be written.");
  app.add_option("RESULT", a->input, "a results file (docs/results.md)")->type_name("RESULT.json");
  app.add_option("-o,--output", a->output, "the page to write")->type_name("FILE.html");
  return [a] {
    cli::the_one(a->input, "the results file");
    if (a->output.empty()) {
      throw cli::UsageError("missing -o FILE.html");
    }
    return report_page(*a);
  };
}

}  // namespace nicsim::tools
