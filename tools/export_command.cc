// `nicsim export`: a results file (nicsim run or nicsim rrul --json) to CSV tables and flent's
// .flent.gz (docs/exports.md). Exit status: 0 ok, 2 usage error or unreadable results file
// (one line naming the file and the JSON path), 1 an output cannot be written.
#include "tools/export_command.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/report/export_csv.h"
#include "nicsim/report/export_flent.h"
#include "nicsim/report/results_file.h"
#include "nicsim/report/run_selector.h"
#include "tools/results_output.h"

namespace nicsim::tools {
namespace {}  // namespace

int write_exports(const report::Results& results, const std::optional<std::string>& csv_dir,
                  const std::optional<std::string>& flent_out,
                  const std::optional<std::string>& run, const char* who) {
  if (csv_dir) {
    if (::mkdir(csv_dir->c_str(), 0777) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "%s: cannot create %s: %s\n", who, csv_dir->c_str(),
                   std::strerror(errno));
      return 1;
    }
    for (const report::CsvTable& t : report::csv_tables(results)) {
      const std::string path = *csv_dir + "/" + t.file_name;
      if (const std::string why = write_file(path, t.text); !why.empty()) {
        std::fprintf(stderr, "%s: cannot write %s: %s\n", who, path.c_str(), why.c_str());
        return 1;
      }
    }
    std::fprintf(stderr, "%s: CSV tables written to %s/\n", who, csv_dir->c_str());
  }
  if (flent_out) {
    const report::RunSelector selector(run.value_or(""));
    std::vector<size_t> picked;
    std::vector<std::string> labels;
    for (size_t i = 0; i < results.runs.size(); ++i) {
      labels.push_back(results.runs[i].label);
      if (selector.matches(results.runs[i].label)) {
        picked.push_back(i);
      }
    }
    if (picked.empty()) {
      std::fprintf(stderr, "%s: no run labelled '%s' (runs: %s)\n", who, run->c_str(),
                   report::quoted_labels(labels).c_str());
      return 2;
    }
    for (size_t i : picked) {
      const std::string path =
          report::flent_file_name(*flent_out, i, picked.size(), results.runs[i].label);
      std::string gz;
      try {
        gz = report::gzip_compress(report::flent_json(results, i));
      } catch (const report::ExportError& e) {
        std::fprintf(stderr, "%s: flent export: %s\n", who, e.what());
        return 2;
      }
      if (const std::string why = write_file(path, gz); !why.empty()) {
        std::fprintf(stderr, "%s: cannot write %s: %s\n", who, path.c_str(), why.c_str());
        return 1;
      }
      std::fprintf(stderr, "%s: flent data file written to %s\n", who, path.c_str());
    }
  }
  return 0;
}

cli::Action define_export(CLI::App& app, const cli::Invocation&) {
  struct Args {
    std::vector<std::string> input;  // exactly one
    std::optional<std::string> csv, flent, run;
  };
  auto a = std::make_shared<Args>();
  app.description(
      "Converts a results file (nicsim run, emulate or rrul --json) for other tools.\n"
      "At least one of --csv and --flent.");
  app.footer(
      "Exit status 2 on a bad command line or an unreadable results file, 1 when an output\n"
      "cannot be written.");
  app.add_option("RESULT", a->input, "a results file (docs/results.md)")->type_name("RESULT.json");
  app.add_option("--csv", a->csv,
                 "tidy CSV tables in DIR (created if missing): runs.csv, intervals.csv,\n"
                 "flows.csv, flow_intervals.csv, interval_latency.csv, probes.csv,\n"
                 "probe_samples.csv, phases.csv, queues.csv\n"
                 "(columns: docs/exports.md)")
      ->type_name(cli::kDirType);
  app.add_option("--flent", a->flent,
                 "flent's data file (gzipped JSON, format version 4): flent -i OUT -f stats,\n"
                 "flent -i OUT -p totals -o plot.png. One file per run: with several runs\n"
                 "OUT-<n>-<label>.flent.gz unless --run picks one")
      ->type_name("OUT.flent.gz");
  app.add_option("--run", a->run,
                 "export only the runs whose labels have these values, e.g. bql=true,rate=1Gbit\n"
                 "or the whole label (flent; CSV always has every run)")
      ->type_name("K=V[,K=V]");
  return [a] {
    cli::the_one(a->input, "the results file");
    if (!a->csv && !a->flent) {
      throw cli::UsageError("nothing to do: give --csv or --flent");
    }
    if (const std::string problem = output_problem(OutputOptions{std::nullopt, a->csv, a->flent});
        !problem.empty()) {
      std::fprintf(stderr, "nicsim export: %s\n", problem.c_str());
      return 2;
    }
    report::Results results;
    try {
      results = report::load_results_file(a->input[0]);
    } catch (const report::ResultsFileError& e) {
      std::fprintf(stderr, "nicsim: %s\n", e.what());
      return 2;
    }
    return write_exports(results, a->csv, a->flent, a->run, "nicsim export");
  };
}

}  // namespace nicsim::tools
