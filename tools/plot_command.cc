// `nicsim plot`: renders a results file with gnuplot (report/plot_gnuplot.h builds the
// script, tools/gnuplot_runner.h runs it). Exit status: 0 ok, 2 usage error, unreadable
// results file, a run that lacks what the plot needs, or gnuplot missing; 1 gnuplot failed.
#include "tools/plot_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/report/export_flent.h"
#include "nicsim/report/plot_campaign.h"
#include "nicsim/report/plot_gnuplot.h"
#include "nicsim/report/results_file.h"
#include "nicsim/report/run_selector.h"
#include "tools/gnuplot_runner.h"

namespace nicsim::tools {
namespace {

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

struct PlotArgs {
  std::vector<std::string> files;
  std::string output;
  std::string kind = "totals";
  std::optional<std::string> run;
  // --kind sweep / tradeoff (campaigns, docs/campaigns.md)
  std::string x, y, group;
};

int plot(const PlotArgs& a);

// --x, --y, --group: the campaign kinds' options (sweep, tradeoff).
void add_campaign_plot_options(CLI::App& app, PlotArgs& a) {
  app.add_option("--x", a.x, "sweep: the varied key on the x axis (e.g. wire.rate or rate)")
      ->type_name("KEY");
  app.add_option("--y", a.y,
                 "sweep: the metric on the y axis (e.g. ping.rtt_mean_ms,\n"
                 "goodput_mbit.a->b; docs/campaigns.md)")
      ->type_name("METRIC");
  app.add_option("--group", a.group, "sweep: one line per value of this varied key")
      ->type_name("KEY");
}

}  // namespace

cli::Action define_plot(CLI::App& app, const cli::Invocation&) {
  auto a = std::make_shared<PlotArgs>();
  app.description(
      "Draws results (nicsim run, emulate or rrul --json) with gnuplot (Debian: gnuplot-nox);\n"
      "the format follows the extension of -o.");
  app.footer(
      "Exit status 2 on a bad command line, an unreadable results file, a run without the\n"
      "data the plot needs, or gnuplot missing; 1 when gnuplot fails.");
  app.add_option("RESULT", a->files, "results files (docs/results.md)")->type_name("RESULT.json");
  app.add_option("-o,--output", a->output, "the picture to write: FILE.png or FILE.svg")
      ->type_name("FILE.png|FILE.svg");
  cli::add_choice(app, "--kind", a->kind, {"totals", "cdf", "compare", "sweep", "tradeoff"},
                  "totals (default): throughput per direction (Mbit/s, left axis) and\n"
                  "latency (ms, right axis: mean of the probes' per-interval RTTs) over\n"
                  "time, like flent's 'totals' plot; one run\n"
                  "cdf: latency CDF (RTT) of every probe from its samples; one run\n"
                  "compare: one point per run of every file: goodput per direction vs\n"
                  "induced latency (rrul runs) or the main probe's p99 RTT; e.g. sim vs emu\n"
                  "sweep: --y METRIC against the varied key --x, 95 % interval bars over\n"
                  "repetitions, one line per value of --group; one file\n"
                  "tradeoff: goodput vs induced latency (else the main probe's mean RTT)\n"
                  "per run, 95 % interval crosses; one file");
  add_campaign_plot_options(app, *a);
  app.add_option("--run", a->run,
                 "the run to draw (totals, cdf) or the runs to include (compare): the values\n"
                 "its label has, e.g. bql=true,rate=1Gbit, or the whole label; needed for\n"
                 "totals/cdf when a file has several runs ([vary])")
      ->type_name("K=V[,K=V]");
  return [a] {
    if (a->files.empty()) {
      throw cli::UsageError("missing the results file");
    }
    if (a->output.empty()) {
      throw cli::UsageError("missing -o FILE.png|FILE.svg");
    }
    return plot(*a);
  };
}

namespace {

int plot_campaign(const PlotArgs& a, report::PlotFormat format);

int plot(const PlotArgs& a) {
  const std::vector<std::string>& files = a.files;
  const std::string* const output = &a.output;
  const std::string& k = a.kind;
  const std::optional<std::string>& run_label = a.run;
  const auto usage_error = [](const std::string& m) -> int { throw cli::UsageError(m); };
  report::PlotFormat format;
  if (ends_with(*output, ".png")) {
    format = report::PlotFormat::kPng;
  } else if (ends_with(*output, ".svg")) {
    format = report::PlotFormat::kSvg;
  } else {
    return usage_error("-o " + *output + ": the file name must end in .png or .svg");
  }
  if (k == "sweep" || k == "tradeoff") {
    return plot_campaign(a, format);
  }
  const report::PlotKind kind = k == "cdf"       ? report::PlotKind::kCdf
                                : k == "compare" ? report::PlotKind::kCompare
                                                 : report::PlotKind::kTotals;
  if (kind != report::PlotKind::kCompare && files.size() > 1) {
    return usage_error("--kind " + k + " draws one run of one file (use --kind compare)");
  }

  std::vector<report::Results> results(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    try {
      results[i] = report::load_results_file(files[i]);
    } catch (const report::ResultsFileError& e) {
      std::fprintf(stderr, "nicsim: %s\n", e.what());
      return 2;
    }
  }
  const report::RunSelector selector(run_label.value_or(""));
  std::vector<report::PlotRun> runs;
  std::vector<std::string> labels;
  for (size_t i = 0; i < files.size(); ++i) {
    for (const report::Run& r : results[i].runs) {
      labels.push_back(r.label);
      if (selector.matches(r.label)) {
        runs.push_back({files[i], &r});
      }
    }
  }
  if (runs.empty()) {
    std::fprintf(stderr, "nicsim plot: no run labelled '%s' (runs: %s)\n", run_label->c_str(),
                 report::quoted_labels(labels).c_str());
    return 2;
  }
  if (kind != report::PlotKind::kCompare && runs.size() > 1) {
    std::fprintf(stderr, "nicsim plot: %s has %zu runs; pick one with --run K=V,... (runs: %s)\n",
                 files[0].c_str(), runs.size(), report::quoted_labels(labels).c_str());
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

// Draws a file's runs with their repetition statistics (report/plot_campaign.h).
int plot_campaign(const PlotArgs& a, report::PlotFormat format) {
  if (a.files.size() != 1) {
    throw cli::UsageError("--kind " + a.kind + " draws one results file");
  }
  if (a.kind == "sweep" && (a.x.empty() || a.y.empty())) {
    throw cli::UsageError("--kind sweep needs --x KEY and --y METRIC");
  }
  report::Results results;
  try {
    results = report::load_results_file(a.files[0]);
  } catch (const report::ResultsFileError& e) {
    std::fprintf(stderr, "nicsim: %s\n", e.what());
    return 2;
  }
  const std::string out = absolute(a.output);
  GnuplotResult r;
  try {
    r = run_gnuplot([&](const std::string& dir) {
      return a.kind == "sweep" ? report::sweep_job(results, {a.x, a.y, a.group}, format, out, dir)
                               : report::tradeoff_job(results, format, out, dir);
    });
  } catch (const report::ExportError& e) {
    std::fprintf(stderr, "nicsim plot: %s: %s\n", a.files[0].c_str(), e.what());
    return 2;
  }
  if (r.status != 0) {
    std::fprintf(stderr, "nicsim plot: %s\n", r.message.c_str());
    return r.status;
  }
  std::fprintf(stderr, "nicsim plot: wrote %s\n", a.output.c_str());
  return 0;
}

}  // namespace

}  // namespace nicsim::tools
