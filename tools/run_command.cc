// `nicsim run`: load a scenario, simulate each of its runs, print iperf3/ping-style tables and
// the comparison with published numbers, optionally write one JSON document.
// Exit status: 0 ok, 2 usage or scenario error (one line naming file:line:col and key),
// 1 runtime failure (e.g. the JSON file cannot be written).
#include "tools/run_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"
#include "nicsim/core/param_error.h"
#include "nicsim/report/json.h"
#include "nicsim/report/results.h"
#include "nicsim/report/text.h"
#include "nicsim/sim/simulation.h"
#include "tools/export_command.h"
#include "tools/results_output.h"

namespace nicsim::tools {
namespace {

// --quiet: one line per run - goodput per direction that carried TCP, retransmits, each
// probe's mean RTT and, for rrul, induced latency, grade and RPM - so runs without published
// numbers (e.g. S2's 4 KiB and 8 KiB bursts) show their result too.
std::string quiet_summary(const report::Run& r) {
  char buf[128];
  std::string out;
  for (report::Direction d : report::kDirections) {
    if (r.transfer[d].flows.empty()) {
      continue;
    }
    std::snprintf(buf, sizeof buf, "%sgoodput %s %.4g Mbit/s", out.empty() ? "" : ", ",
                  d == report::Direction::kAtoB ? "a->b" : "b->a", r.goodput_bps[d] / 1e6);
    out += buf;
  }
  if (!out.empty()) {
    out += ", retransmits " + std::to_string(r.retransmits);
  }
  for (const auto& [name, p] : r.latency_ms) {
    std::snprintf(buf, sizeof buf, "%s%s mean %.4g ms", out.empty() ? "" : ", ", name.c_str(),
                  p.rtt.mean);
    out += buf;
  }
  if (const auto& l = r.latency_under_load) {  // rrul: grade and RPM (docs/rrul.md)
    std::snprintf(buf, sizeof buf, "%sinduced latency %.4g ms, grade %s, %.0f RPM",
                  out.empty() ? "" : ", ", l->induced_latency_ms, l->grade.c_str(), l->rpm);
    out += buf;
  }
  return out.empty() ? "no traffic" : out;
}

struct RunArgs {
  std::vector<std::string> scenario;  // exactly one
  OutputOptions out;
  std::optional<uint64_t> seed;
  bool quiet = false;
};

int run_scenario(const RunArgs& args, const cli::Invocation& inv);

}  // namespace

cli::Action define_run(CLI::App& app, const cli::Invocation& inv) {
  auto a = std::make_shared<RunArgs>();
  app.description(
      "Simulates every run of the scenario (one per [vary] combination) and prints, per run,\n"
      "an iperf3-style interval table, ping-style summaries, per-probe latency, per-stage\n"
      "latency and, when the scenario has [published] numbers, simulated vs published.\n"
      "A scenario with [[traffic.rrul]] (flent's rrul, docs/rrul.md) adds a latency-under-load\n"
      "block: idle vs loaded latency, induced latency and bufferbloat grade, RPM, fairness.");
  app.footer(
      "Progress is shown on stderr when it is a terminal. Exit status 2 on a bad scenario or\n"
      "an output that cannot be written (checked before the run), 1 when writing fails.");
  app.add_option("SCENARIO", a->scenario, "the scenario file (TOML, docs/scenarios.md)")
      ->type_name("SCENARIO.toml");
  add_output_options(app, a->out);
  cli::add_seed(app, a->seed, "override the scenario's seed (same seed -> identical results)");
  app.add_flag("--quiet", a->quiet,
               "print one summary line per run and the comparison tables (no interval\n"
               "tables)");
  return [a, inv] {
    cli::the_one(a->scenario, "the scenario file");
    return run_scenario(*a, inv);
  };
}

namespace {

int run_scenario(const RunArgs& a, const cli::Invocation& inv) {
  const RunArgs* args = &a;
  const std::string& scenario = a.scenario[0];
  config::LoadedScenario loaded;
  try {
    loaded = config::load_scenario_file(scenario);
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "nicsim: %s\n", e.what());
    return 2;
  }

  if (const std::string problem = output_problem(args->out); !problem.empty()) {
    std::fprintf(stderr, "nicsim run: %s\n", problem.c_str());
    return 2;
  }
  std::FILE* const text = text_stream(args->out);
  const auto wall_start = std::chrono::steady_clock::now();
  const bool tty = isatty(STDERR_FILENO) != 0;
  report::Results results = new_results(inv.argc, inv.argv);

  const size_t n = loaded.runs.size();
  for (size_t i = 0; i < n; ++i) {
    config::Run run = loaded.runs[i];
    if (args->seed) {
      run.scenario.seed = *args->seed;
    }
    const auto run_start = std::chrono::steady_clock::now();
    report::Run result;
    uint64_t events = 0;
    try {
      sim::Simulation simulation(run);
      sim::ProgressFn progress;
      if (tty) {
        progress = [&](const sim::Progress& p) {
          const double wall =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
          const double speed = wall > 0 ? p.simulated_s / wall : 0.0;
          std::fprintf(
              stderr, "\r%s\033[K",
              report::format_progress(i + 1, n, run.label, p.simulated_s, p.duration_s, speed)
                  .c_str());
          std::fflush(stderr);
        };
      }
      result = simulation.run(progress);
      events = simulation.events();
    } catch (const InvalidParams& e) {
      std::fprintf(stderr, "%snicsim: %s: run '%s': %s\n", tty ? "\r\033[K" : "", scenario.c_str(),
                   run.label.c_str(), e.what());
      return 2;
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "%snicsim: %s: run '%s': %s\n", tty ? "\r\033[K" : "", scenario.c_str(),
                   run.label.c_str(), e.what());
      return 2;
    }
    if (tty) {
      std::fputs("\r\033[K", stderr);
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    results.meta.runs.push_back(report::RunMeta{result.label, wall, events,
                                                wall > 0 ? static_cast<double>(events) / wall : 0});
    results.meta.events += events;
    if (args->quiet) {
      report::print(text, "run " + (result.label.empty() ? std::string("(single)") : result.label) +
                              ": " + quiet_summary(result) + "\n");
      report::print(text, report::format_comparison_table(result.comparison));
    } else {
      report::print(text, report::format_run_report(result));
    }
    std::fflush(text);
    results.runs.push_back(std::move(result));
  }
  if (const std::string summary = report::format_latency_under_load_summary(results.runs);
      !summary.empty()) {
    report::print(text, "\n" + summary);  // rrul in several runs: one comparison table
  }
  results.meta.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  results.meta.events_per_s =
      results.meta.wall_s > 0 ? static_cast<double>(results.meta.events) / results.meta.wall_s : 0;
  return write_outputs(results, args->out, "nicsim run");
}

}  // namespace

}  // namespace nicsim::tools
