// `nicsim plot`: renders a results file with gnuplot (report/plot_gnuplot.h builds the
// script, tools/gnuplot_runner.h runs it). Exit status: 0 ok, 2 usage error, unreadable
// results file, a run that lacks what the plot needs, or gnuplot missing; 1 gnuplot failed.
#include "tools/plot_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/report/export_flent.h"
#include "nicsim/report/json_reader.h"
#include "nicsim/report/plot_gnuplot.h"
#include "tools/gnuplot_runner.h"

namespace nicsim::tools {
namespace {

constexpr const char* kPlotUsage =
    "usage: nicsim plot RESULT.json [MORE.json ...] -o FILE.png|FILE.svg\n"
    "                   [--kind totals|cdf|compare] [--run LABEL]\n"
    "\n"
    "Draws results (nicsim run or nicsim rrul --json) with gnuplot (Debian: gnuplot-nox); the\n"
    "format follows the extension of -o.\n"
    "  --kind totals   (default) throughput per direction (Mbit/s, left axis) and latency\n"
    "                  (ms, right axis: mean of the probes' per-interval RTTs) over time,\n"
    "                  like flent's 'totals' plot; one run\n"
    "  --kind cdf      latency CDF (RTT) of every probe from its samples; one run\n"
    "  --kind compare  one point per run of every file: goodput per direction vs induced\n"
    "                  latency (rrul runs) or the main probe's p99 RTT; e.g. sim vs emu\n"
    "  --run LABEL     the run to draw (totals, cdf) or to include (compare); needed for\n"
    "                  totals/cdf when a file has several runs ([vary])\n"
    "\n"
    "Exit status 2 on a bad command line, an unreadable results file, a run without the\n"
    "data the plot needs, or gnuplot missing; 1 when gnuplot fails.\n";

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') {
    return path;
  }
  char buf[PATH_MAX];
  return ::getcwd(buf, sizeof buf) ? std::string(buf) + "/" + path : path;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int plot_command(int argc, char** argv) {
  std::vector<std::string> files;
  std::optional<std::string> output, kind_name, run_label;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&](std::optional<std::string>& out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nicsim plot: %s needs a value\n%s", argv[i], kPlotUsage);
        return false;
      }
      out = argv[++i];
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kPlotUsage, stdout);
      return 0;
    } else if (arg == "-o" || arg == "--output") {
      if (!value(output)) return 2;
    } else if (arg == "--kind") {
      if (!value(kind_name)) return 2;
    } else if (arg == "--run") {
      if (!value(run_label)) return 2;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "nicsim plot: unknown option '%s'\n%s", argv[i], kPlotUsage);
      return 2;
    } else {
      files.emplace_back(arg);
    }
  }
  const auto usage_error = [](const std::string& m) {
    std::fprintf(stderr, "nicsim plot: %s\n%s", m.c_str(), kPlotUsage);
    return 2;
  };
  if (files.empty()) return usage_error("missing the results file");
  if (!output) return usage_error("missing -o FILE.png|FILE.svg");
  report::PlotFormat format;
  if (ends_with(*output, ".png")) {
    format = report::PlotFormat::kPng;
  } else if (ends_with(*output, ".svg")) {
    format = report::PlotFormat::kSvg;
  } else {
    return usage_error("-o " + *output + ": the file name must end in .png or .svg");
  }
  report::PlotKind kind = report::PlotKind::kTotals;
  const std::string k = kind_name.value_or("totals");
  if (k == "totals") {
    kind = report::PlotKind::kTotals;
  } else if (k == "cdf") {
    kind = report::PlotKind::kCdf;
  } else if (k == "compare") {
    kind = report::PlotKind::kCompare;
  } else {
    return usage_error("--kind: expected totals, cdf or compare, got '" + k + "'");
  }
  if (kind != report::PlotKind::kCompare && files.size() > 1) {
    return usage_error("--kind " + k + " draws one run of one file (use --kind compare)");
  }

  std::vector<report::Results> results(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    try {
      results[i] = report::read_results_file(files[i]);
    } catch (const report::ResultsFileError& e) {
      std::fprintf(stderr, "nicsim: %s\n", e.what());
      return 2;
    }
  }
  std::vector<report::PlotRun> runs;
  std::string labels;
  for (size_t i = 0; i < files.size(); ++i) {
    for (const report::Run& r : results[i].runs) {
      labels += (labels.empty() ? "'" : ", '") + r.label + "'";
      if (!run_label || r.label == *run_label) {
        runs.push_back({files[i], &r});
      }
    }
  }
  if (runs.empty()) {
    std::fprintf(stderr, "nicsim plot: no run labelled '%s' (runs: %s)\n", run_label->c_str(),
                 labels.c_str());
    return 2;
  }
  if (kind != report::PlotKind::kCompare && runs.size() > 1) {
    std::fprintf(stderr, "nicsim plot: %s has %zu runs; pick one with --run LABEL (runs: %s)\n",
                 files[0].c_str(), runs.size(), labels.c_str());
    return 2;
  }
  const std::string out = absolute(*output);
  GnuplotResult r;
  try {
    r = run_gnuplot(
        [&](const std::string& dir) { return report::gnuplot_job(kind, runs, format, out, dir); });
  } catch (const report::ExportError& e) {
    std::fprintf(stderr, "nicsim plot: %s: %s\n", files[0].c_str(), e.what());
    return 2;
  }
  if (r.status != 0) {
    std::fprintf(stderr, "nicsim plot: %s\n", r.message.c_str());
    return r.status;
  }
  struct stat st {};
  if (::stat(out.c_str(), &st) != 0 || st.st_size == 0) {
    std::fprintf(stderr, "nicsim plot: gnuplot exited 0 but wrote nothing to %s\n",
                 output->c_str());
    return 1;
  }
  std::fprintf(stderr, "nicsim plot: wrote %s\n", output->c_str());
  return 0;
}

}  // namespace nicsim::tools
