// libFuzzer target: arbitrary bytes as a results file (json_reader.h) must never crash, hang
// or trip a sanitizer; errors are ResultsFileError naming the file. Whatever the reader
// accepts must survive the round trip to_json -> read -> an equal Results, and feed the
// exports (CSV, flent), the plots and the HTML report without crashing. Run with scripts/fuzz.sh
// (seed corpus: nicsim/report/fuzz_corpus/results/).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "nicsim/report/export_csv.h"
#include "nicsim/report/export_flent.h"
#include "nicsim/report/html_report.h"
#include "nicsim/report/json.h"
#include "nicsim/report/json_reader.h"
#include "nicsim/report/plot_gnuplot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nicsim::report::Results;
  using nicsim::report::ResultsFileError;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Results results;
  try {
    results = nicsim::report::read_results_text(text, "fuzz.json");
  } catch (const ResultsFileError& e) {
    if (std::string_view(e.what()).substr(0, 11) != "fuzz.json: ") {
      std::fprintf(stderr, "error does not name the file: %s\n", e.what());
      std::abort();
    }
    return 0;
  }
  const std::string written = nicsim::report::to_json(results);
  try {
    if (!(nicsim::report::read_results_text(written, "again.json") == results)) {
      std::fprintf(stderr, "round trip changed the results:\n%s\n", written.c_str());
      std::abort();
    }
  } catch (const ResultsFileError& e) {
    std::fprintf(stderr, "the writer's text of accepted results is rejected: %s\n%s\n", e.what(),
                 written.c_str());
    std::abort();
  }
  (void)nicsim::report::csv_tables(results);
  for (size_t i = 0; i < results.runs.size(); ++i) {
    try {
      (void)nicsim::report::flent_json(results, i);
      const nicsim::report::PlotRun pr{"fuzz.json", &results.runs[i]};
      for (auto kind : {nicsim::report::PlotKind::kTotals, nicsim::report::PlotKind::kCdf,
                        nicsim::report::PlotKind::kCompare}) {
        try {
          (void)nicsim::report::gnuplot_job(kind, {pr}, nicsim::report::PlotFormat::kSvg, "out.svg",
                                            "/tmp");
        } catch (const nicsim::report::ExportError&) {
        }
      }
    } catch (const nicsim::report::ExportError&) {
    }
  }
  // The HTML report: any accepted document gives a page (only "no runs" is an error), and
  // nothing from it ends the data block early.
  try {
    const std::string page = nicsim::report::html_report(results, {"fuzz.json"});
    const size_t data = page.find("id=\"nicsim-data\">");
    if (data == std::string::npos ||
        page.find("</script>", data) != page.find("</script>\n<script>\n", data)) {
      std::fprintf(stderr, "the HTML report's data block is cut short\n");
      std::abort();
    }
  } catch (const nicsim::report::ExportError&) {
    if (!results.runs.empty()) {
      std::abort();
    }
  }
  return 0;
}
