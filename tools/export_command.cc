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
#include "nicsim/report/json_reader.h"

namespace nicsim::tools {
namespace {

constexpr const char* kExportUsage =
    "usage: nicsim export RESULT.json [--csv DIR] [--flent OUT.flent.gz] [--run LABEL]\n"
    "\n"
    "Converts a results file (nicsim run or nicsim rrul --json) for other tools.\n"
    "At least one of:\n"
    "  --csv DIR     tidy CSV tables in DIR (created if missing): runs.csv, intervals.csv,\n"
    "                flow_intervals.csv, interval_latency.csv, probes.csv,\n"
    "                probe_samples.csv, phases.csv, queues.csv\n"
    "                (columns: docs/exports.md)\n"
    "  --flent OUT   flent's data file (gzipped JSON, format version 4): flent -i OUT -f stats,\n"
    "                flent -i OUT -p totals -o plot.png. One file per run: with several runs\n"
    "                OUT-<n>-<label>.flent.gz unless --run picks one\n"
    "  --run LABEL   export only the run with this label (flent; CSV always has every run)\n"
    "\n"
    "Exit status 2 on a bad command line or an unreadable results file, 1 when an output\n"
    "cannot be written.\n";

bool write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
  f.close();
  return static_cast<bool>(f);
}

}  // namespace

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
      if (!write_file(path, t.text)) {
        std::fprintf(stderr, "%s: cannot write %s\n", who, path.c_str());
        return 1;
      }
    }
    std::fprintf(stderr, "%s: CSV tables written to %s/\n", who, csv_dir->c_str());
  }
  if (flent_out) {
    std::vector<size_t> picked;
    for (size_t i = 0; i < results.runs.size(); ++i) {
      if (!run || results.runs[i].label == *run) {
        picked.push_back(i);
      }
    }
    if (picked.empty()) {
      std::string labels;
      for (const report::Run& r : results.runs) {
        labels += (labels.empty() ? "'" : ", '") + r.label + "'";
      }
      std::fprintf(stderr, "%s: no run labelled '%s' (runs: %s)\n", who, run->c_str(),
                   labels.c_str());
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
      if (!write_file(path, gz)) {
        std::fprintf(stderr, "%s: cannot write %s\n", who, path.c_str());
        return 1;
      }
      std::fprintf(stderr, "%s: flent data file written to %s\n", who, path.c_str());
    }
  }
  return 0;
}

int export_command(int argc, char** argv) {
  std::string input;
  std::optional<std::string> csv, flent, run;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&](std::optional<std::string>& out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nicsim export: %s needs a value\n%s", argv[i], kExportUsage);
        return false;
      }
      out = argv[++i];
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kExportUsage, stdout);
      return 0;
    } else if (arg == "--csv") {
      if (!value(csv)) return 2;
    } else if (arg == "--flent") {
      if (!value(flent)) return 2;
    } else if (arg == "--run") {
      if (!value(run)) return 2;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "nicsim export: unknown option '%s'\n%s", argv[i], kExportUsage);
      return 2;
    } else if (input.empty()) {
      input = arg;
    } else {
      std::fprintf(stderr, "nicsim export: only one results file, got '%s' and '%s'\n",
                   input.c_str(), argv[i]);
      return 2;
    }
  }
  if (input.empty() || (!csv && !flent)) {
    std::fprintf(
        stderr, "nicsim export: %s\n%s",
        input.empty() ? "missing the results file" : "nothing to do: give --csv or --flent",
        kExportUsage);
    return 2;
  }
  report::Results results;
  try {
    results = report::read_results_file(input);
  } catch (const report::ResultsFileError& e) {
    std::fprintf(stderr, "nicsim: %s\n", e.what());
    return 2;
  }
  return write_exports(results, csv, flent, run, "nicsim export");
}

}  // namespace nicsim::tools
