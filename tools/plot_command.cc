// `nicsim plot`: renders a results file with gnuplot (report/plot_gnuplot.h builds the
// script, tools/gnuplot_runner.h runs it). Exit status: 0 ok, 2 usage error, unreadable
// results file, a run that lacks what the plot needs, or gnuplot missing; 1 gnuplot failed.
#include "tools/plot_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/report/export_flent.h"
#include "nicsim/report/plot_campaign.h"
#include "nicsim/report/plot_gnuplot.h"
#include "nicsim/report/plot_knee.h"
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
  // Paper output (add_paper_options).
  std::string title;
  std::string size;
  std::string font;
  std::string keep_script;  // a directory: the script and its data files stay there
  // --kind sweep / tradeoff (campaigns, docs/campaigns.md)
  std::string x, y, group;
  std::string host;  // --kind knee
};

int plot(const PlotArgs& a);

// --title, --size, --font, --keep-script: the options for figures in papers.
void add_paper_options(CLI::App& app, PlotArgs& a) {
  app.add_option("--title", a.title, "the plot's title (default: what it shows and the run)")
      ->type_name("TEXT")
      ->group("paper figures");
  app.add_option("--size", a.size,
                 "picture size W,H: pixels for png/svg (default 1000,600), inches or cm\n"
                 "for pdf/eps (default 5in,3in; e.g. 3.5in,2.2in or 9cm,6cm)")
      ->type_name("W,H")
      ->group("paper figures");
  app.add_option("--font", a.font, "font and size in points (default sans,10), e.g. Helvetica,9")
      ->type_name("NAME,POINTS")
      ->group("paper figures");
  app.add_option("--keep-script", a.keep_script,
                 "also keep the gnuplot script (DIR/plot.gp) and its data files in DIR,\n"
                 "to edit by hand and rerun: gnuplot DIR/plot.gp")
      ->type_name(cli::kDirType)
      ->group("paper figures");
}

// The format from -o's extension.
std::optional<report::PlotFormat> format_of(const std::string& output) {
  if (ends_with(output, ".png")) {
    return report::PlotFormat::kPng;
  }
  if (ends_with(output, ".svg")) {
    return report::PlotFormat::kSvg;
  }
  if (ends_with(output, ".pdf")) {
    return report::PlotFormat::kPdf;
  }
  if (ends_with(output, ".eps")) {
    return report::PlotFormat::kEps;
  }
  return std::nullopt;
}

// One --size dimension: a positive number, with "in" or "cm" for pdf/eps (a bare number is
// inches there) and none for png/svg (pixels). Returns it as gnuplot writes it, "" if bad.
std::string size_dimension(const std::string& text, bool paper) {
  std::string number = text;
  std::string unit;
  for (const char* u : {"in", "cm"}) {
    if (ends_with(text, u)) {
      number = text.substr(0, text.size() - 2);
      unit = u;
    }
  }
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || !(v > 0) || v > 100000 || (!paper && !unit.empty())) {
    return "";
  }
  return number + (paper && unit.empty() ? "in" : unit);
}

// The style of the picture from the options; throws UsageError naming the bad option.
report::PlotStyle plot_style(const PlotArgs& a, report::PlotFormat format) {
  const bool paper = format == report::PlotFormat::kPdf || format == report::PlotFormat::kEps;
  report::PlotStyle style{format, a.title, "", a.font};
  if (!a.size.empty()) {
    const size_t comma = a.size.find(',');
    const std::string w =
        comma == std::string::npos ? "" : size_dimension(a.size.substr(0, comma), paper);
    const std::string h =
        comma == std::string::npos ? "" : size_dimension(a.size.substr(comma + 1), paper);
    if (w.empty() || h.empty()) {
      throw cli::UsageError(
          "--size: expected W,H" +
          std::string(paper ? " in inches or cm (5in,3in or 12cm,8cm)" : " in pixels (1000,600)") +
          ", got '" + a.size + "'");
    }
    style.size = w + "," + h;
  }
  if (!a.font.empty() && a.font.find_first_of("'\n") != std::string::npos) {
    throw cli::UsageError("--font: no quotes or line breaks, got '" + a.font + "'");
  }
  return style;
}

// --keep-script: the job built for DIR and run there; DIR keeps plot.gp and the data files.
GnuplotResult run_gnuplot_kept(const std::string& dir,
                               const std::function<report::GnuplotJob(const std::string&)>& make) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    return {1, "--keep-script " + dir + ": " + std::strerror(errno)};
  }
  GnuplotResult r = run_gnuplot_in(dir, make(dir));
  if (r.signal != 0) {
    reraise(r.signal);
  }
  return r;
}

// Draws the job (kept in --keep-script's directory when given). Exit status: 2 when the
// results lack what the plot needs (the message after `context`, the file, when not ""), else
// gnuplot's; 0 when it drew.
int draw(const PlotArgs& a, const std::string& context,
         const std::function<report::GnuplotJob(const std::string&)>& make) {
  GnuplotResult r;
  try {
    r = a.keep_script.empty() ? run_gnuplot(make) : run_gnuplot_kept(absolute(a.keep_script), make);
  } catch (const report::ExportError& e) {
    std::fprintf(stderr, "nicsim plot: %s%s\n", context.empty() ? "" : (context + ": ").c_str(),
                 e.what());
    return 2;
  }
  if (r.status != 0) {
    std::fprintf(stderr, "nicsim plot: %s\n", r.message.c_str());
  }
  return r.status;
}

// --x, --y, --group: the campaign kinds' options (sweep, tradeoff).
void add_campaign_plot_options(CLI::App& app, PlotArgs& a) {
  app.add_option("--x", a.x, "sweep: the varied key on the x axis (e.g. wire.rate or rate)")
      ->type_name("KEY");
  app.add_option("--y", a.y,
                 "sweep: the metric on the y axis (e.g. ping.rtt_mean_ms,\n"
                 "goodput_mbit.a->b; docs/campaigns.md); knee: mean, p99 or a metric")
      ->type_name("METRIC");
  app.add_option("--group", a.group, "sweep: one line per value of this varied key")
      ->type_name("KEY");
  app.add_option("--host", a.host,
                 "knee: the receiving host (default: per run, the host that received\n"
                 "the most frames)")
      ->type_name("HOST");
}

}  // namespace

cli::Action define_plot(CLI::App& app, const cli::Invocation&) {
  auto a = std::make_shared<PlotArgs>();
  app.description(
      "Draws results (nicsim run, emulate or rrul --json) with gnuplot (Debian: gnuplot-nox);\n"
      "the format follows the extension of -o. Series take Paul Tol's colour-blind-safe\n"
      "colours (none repeats within 12 series); legends sit outside the data.");
  app.footer(
      "Exit status 2 on a bad command line, an unreadable results file, a run without the\n"
      "data the plot needs, or gnuplot missing; 1 when gnuplot fails.");
  app.add_option("RESULT", a->files, "results files (docs/results.md)")->type_name("RESULT.json");
  app.add_option("-o,--output", a->output,
                 "the picture to write: FILE.png or FILE.svg (screens), FILE.pdf or\n"
                 "FILE.eps (papers)")
      ->type_name("FILE.png|FILE.svg|FILE.pdf|FILE.eps");
  cli::add_choice(app, "--kind", a->kind, {"totals", "cdf", "compare", "sweep", "tradeoff", "knee"},
                  "totals (default): throughput per direction (Mbit/s, left axis) and\n"
                  "latency (ms, right axis: mean of the probes' per-interval RTTs) over\n"
                  "time, like flent's 'totals' plot; one run\n"
                  "cdf: latency CDF (RTT) of every probe from its samples; one run\n"
                  "compare: one point per run of every file: goodput per direction vs\n"
                  "induced latency (rrul runs) or the main probe's p99 RTT; e.g. sim vs emu\n"
                  "sweep: --y METRIC against the varied key --x, 95 % interval bars over\n"
                  "repetitions, one line per value of --group; one file\n"
                  "tradeoff: goodput vs induced latency (else the main probe's mean RTT)\n"
                  "per run, 95 % interval crosses; one file\n"
                  "knee: latency the receive path added (--y mean (default), p99, or a\n"
                  "metric such as ping.rtt_p99_ms) vs the receiving core's time per frame,\n"
                  "one point per run, a series per GRO / DIM / fixed-coalescing mode;\n"
                  "every run of every file (docs/rx-batching.md)");
  add_campaign_plot_options(app, *a);
  app.add_option("--run", a->run,
                 "the run to draw (totals, cdf) or the runs to include (compare): the values\n"
                 "its label has, e.g. bql=true,rate=1Gbit, or the whole label; needed for\n"
                 "totals/cdf when a file has several runs ([vary])")
      ->type_name("K=V[,K=V]");
  add_paper_options(app, *a);
  return [a] {
    if (a->files.empty()) {
      throw cli::UsageError("missing the results file");
    }
    if (a->output.empty()) {
      throw cli::UsageError("missing -o FILE.png|FILE.svg|FILE.pdf|FILE.eps");
    }
    return plot(*a);
  };
}

namespace {

int plot_campaign(const PlotArgs& a, const report::PlotStyle& style);
int plot_knee(const PlotArgs& a, const report::PlotStyle& style);

int plot(const PlotArgs& a) {
  const std::vector<std::string>& files = a.files;
  const std::string* const output = &a.output;
  const std::string& k = a.kind;
  const std::optional<std::string>& run_label = a.run;
  const auto usage_error = [](const std::string& m) -> int { throw cli::UsageError(m); };
  const std::optional<report::PlotFormat> format = format_of(*output);
  if (!format) {
    return usage_error("-o " + *output + ": the file name must end in .png, .svg, .pdf or .eps");
  }
  if (k == "sweep" || k == "tradeoff") {
    return plot_campaign(a, plot_style(a, *format));
  }
  if (k == "knee") {
    return plot_knee(a, plot_style(a, *format));
  }
  const report::PlotStyle style = plot_style(a, *format);
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
  if (const int status = draw(
          a, files[0],
          [&](const std::string& dir) { return report::gnuplot_job(kind, runs, style, out, dir); });
      status != 0) {
    return status;
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
int plot_campaign(const PlotArgs& a, const report::PlotStyle& style) {
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
  if (const int status = draw(a, a.files[0],
                              [&](const std::string& dir) {
                                return a.kind == "sweep"
                                           ? report::sweep_job(results, {a.x, a.y, a.group}, style,
                                                               out, dir)
                                           : report::tradeoff_job(results, style, out, dir);
                              });
      status != 0) {
    return status;
  }
  std::fprintf(stderr, "nicsim plot: wrote %s\n", a.output.c_str());
  return 0;
}

// Every run of every file as one point of the knee (report/plot_knee.h).
int plot_knee(const PlotArgs& a, const report::PlotStyle& style) {
  std::vector<report::Results> results(a.files.size());
  std::vector<report::PlotRun> runs;
  for (size_t i = 0; i < a.files.size(); ++i) {
    try {
      results[i] = report::load_results_file(a.files[i]);
    } catch (const report::ResultsFileError& e) {
      std::fprintf(stderr, "nicsim: %s\n", e.what());
      return 2;
    }
  }
  for (size_t i = 0; i < a.files.size(); ++i) {
    for (const report::Run& r : results[i].runs) {
      runs.push_back({a.files[i], &r});
    }
  }
  const report::KneeSpec spec{a.host, a.y.empty() ? "mean" : a.y};
  const std::string out = absolute(a.output);
  if (const int status = draw(
          a, "",  // the error names the run's file
          [&](const std::string& dir) { return report::knee_job(runs, spec, style, out, dir); });
      status != 0) {
    return status;
  }
  std::fprintf(stderr, "nicsim plot: wrote %s\n", a.output.c_str());
  return 0;
}

}  // namespace

}  // namespace nicsim::tools
