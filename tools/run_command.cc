// `nicsim run`: load a scenario, simulate each of its runs, print iperf3/ping-style tables and
// the comparison with published numbers, optionally write one JSON document.
// Exit status: 0 ok, 2 usage or scenario error (one line naming file:line:col and key),
// 1 runtime failure (e.g. the JSON file cannot be written).
#include "tools/run_command.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "nicsim/campaign/mpi_campaign.h"
#include "nicsim/campaign/progress_meter.h"
#include "nicsim/campaign/runner.h"
#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"
#include "nicsim/core/param_error.h"
#include "nicsim/report/json.h"
#include "nicsim/report/results.h"
#include "nicsim/report/run_statistics.h"
#include "nicsim/report/text.h"
#include "nicsim/sim/simulation.h"
#include "tools/export_command.h"
#include "tools/load_scenario.h"
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
  if (out.empty() && !r.queues.empty()) {  // e.g. a [[traffic.replay]]: open loop, queues only
    out = "largest qdisc backlog";
    for (const auto& [name, q] : r.queues) {
      const uint64_t most = q.qdisc_packets.empty()
                                ? 0
                                : *std::max_element(q.qdisc_packets.begin(), q.qdisc_packets.end());
      out += (out.back() == 'g' ? " " : ", ") + name + " " + std::to_string(most) + " frames";
    }
    return out;
  }
  return out.empty() ? "no traffic" : out;
}

struct RunArgs {
  std::vector<std::string> scenario;  // exactly one
  OutputOptions out;
  std::optional<uint64_t> seed;
  bool quiet = false;
  unsigned jobs = 0;  // 0: the number of cores
  std::optional<uint32_t> repeat;
  std::optional<std::string> until_ci;
  uint32_t max_repeat = 50;
  std::string ci_metric;
  std::optional<std::string> shard;
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
      "block: idle vs loaded latency, induced latency and bufferbloat grade, RPM, fairness.\n"
      "Campaigns (docs/campaigns.md): runs go in parallel (--jobs), repetitions with derived\n"
      "seeds give mean ± 95 % confidence intervals (--repeat, --until-ci), and the runs can be\n"
      "split over machines (mpirun, --shard K/N + nicsim merge) into the same results file.");
  app.footer(
      "Progress is shown on stderr when it is a terminal (not with --quiet). Ctrl-C stops the\n"
      "running runs and writes the results of those that finished (exit status 130).\n"
      "Exit status 2 on a bad scenario or an output that cannot be written (checked before\n"
      "the run), 1 when writing fails.");
  app.add_option("SCENARIO", a->scenario, "the scenario file (TOML, docs/scenarios.md)")
      ->type_name("SCENARIO.toml");
  add_output_options(app, a->out);
  cli::add_seed(app, a->seed, "override the scenario's seed (same seed -> identical results)");
  app.add_flag("--quiet", a->quiet,
               "print one summary line per run and the comparison tables (no interval\n"
               "tables), and no progress");
  app.add_option("-j,--jobs", a->jobs,
                 "runs simulated at once (threads; default: the number of cores); the\n"
                 "results are the same for every N")
      ->type_name("N")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--repeat", a->repeat,
                 "repetitions of every run with seeds derived from the scenario's (overrides\n"
                 "[scenario] repeat); adds mean, sd, median and 95 % intervals per metric")
      ->type_name("N")
      ->check(CLI::Range(1u, 10000u));
  app.add_option("--until-ci", a->until_ci,
                 "repeat each run until the 95 % interval of --ci-metric is within PCT of its\n"
                 "value (e.g. 5%), from --repeat (at least 2) up to --max-repeat repetitions")
      ->type_name("PCT%");
  app.add_option("--max-repeat", a->max_repeat, "the most repetitions --until-ci runs (50)")
      ->type_name("N")
      ->check(CLI::Range(2u, 10000u));
  app.add_option("--ci-metric", a->ci_metric,
                 "the metric --until-ci watches (default: induced_latency_ms, else the first\n"
                 "probe's rtt_mean_ms, else goodput; names in docs/campaigns.md)")
      ->type_name("NAME");
  app.add_option("--shard", a->shard,
                 "run only part K of N (every N-th run, from the K-th) and mark the results\n"
                 "file as that part; join the parts with nicsim merge")
      ->type_name("K/N");
  return [a, inv] {
    cli::the_one(a->scenario, "the scenario file");
    return run_scenario(*a, inv);
  };
}

namespace {

std::atomic<bool> g_interrupted{false};  // set by SIGINT (lock-free: async-signal-safe)

extern "C" void on_sigint(int) { g_interrupted.store(true); }

// Ctrl-C stops the campaign instead of killing the process; a second Ctrl-C kills it.
struct InterruptGuard {
  struct sigaction old {};
  InterruptGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
  }
  ~InterruptGuard() { sigaction(SIGINT, &old, nullptr); }
};

// "5%" or "0.05" -> 0.05.
std::optional<double> parse_fraction(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) {
    return std::nullopt;
  }
  if (*end == '%') {
    v /= 100;
    ++end;
  }
  if (*end != '\0' || !(v > 0) || v >= 1) {
    return std::nullopt;
  }
  return v;
}

campaign::CampaignParams campaign_params(const RunArgs& a, const config::LoadedScenario& loaded) {
  campaign::CampaignParams p;
  p.jobs = a.jobs != 0 ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  p.plan.repeat = a.repeat.value_or(loaded.scenario.repeat);
  p.plan.seed = a.seed;
  p.max_repeat = a.max_repeat;
  p.ci_metric = a.ci_metric;
  if (a.until_ci) {
    p.until_ci = parse_fraction(*a.until_ci);
    if (!p.until_ci) {
      throw cli::UsageError("--until-ci " + *a.until_ci + ": expected a percentage, e.g. 5%");
    }
    if (p.plan.repeat > p.max_repeat) {
      throw cli::UsageError("--until-ci: --repeat " + std::to_string(p.plan.repeat) +
                            " exceeds --max-repeat " + std::to_string(p.max_repeat));
    }
  } else if (!a.ci_metric.empty()) {
    throw cli::UsageError("--ci-metric needs --until-ci");
  }
  p.plan.repeated = p.plan.repeat > 1 || p.until_ci.has_value();
  if (a.shard) {
    p.shard = campaign::parse_shard(*a.shard);
    if (!p.shard) {
      throw cli::UsageError("--shard " + *a.shard + ": expected K/N with 1 <= K <= N");
    }
    if (p.until_ci) {
      throw cli::UsageError(
          "--shard and --until-ci exclude each other (a part cannot see the "
          "other parts' intervals)");
    }
  }
  return p;
}

// Prints one run as it arrives: the full report, or one line (--quiet, and each repetition of
// a campaign with repetitions: their statistics follow at the end).
void print_run(std::FILE* text, const report::Run& result, bool one_line) {
  if (one_line) {
    report::print(text, "run " + (result.label.empty() ? std::string("(single)") : result.label) +
                            ": " + quiet_summary(result) + "\n");
    report::print(text, report::format_comparison_table(result.comparison));
  } else {
    report::print(text, report::format_run_report(result));
  }
  std::fflush(text);
}

// Writes --json from the spool (standard output for "-") and the exports from the kept runs.
int write_campaign_outputs(const campaign::ResultsSpool& spool, const report::Meta& meta,
                           const OutputOptions& out) {
  if (out.json) {
    std::FILE* f = out.json_to_stdout() ? stdout : std::fopen(out.json->c_str(), "w");
    std::string why = f == nullptr ? std::strerror(errno) : spool.write(f, meta);
    if (f != nullptr && f != stdout && std::fclose(f) != 0 && why.empty()) {
      why = std::strerror(errno);
    }
    if (!why.empty()) {
      std::fprintf(stderr, "nicsim run: cannot write %s: %s\n",
                   out.json_to_stdout() ? "the JSON to standard output" : out.json->c_str(),
                   why.c_str());
      return 1;
    }
  }
  if (out.csv || out.flent) {
    report::Results results;
    results.meta = meta;
    results.runs = spool.kept();
    return write_exports(results, out.csv, out.flent, std::nullopt, "nicsim run");
  }
  return 0;
}

int run_scenario(const RunArgs& a, const cli::Invocation& inv) {
  const RunArgs* args = &a;
  const std::string& scenario = a.scenario[0];
  const std::optional<config::LoadedScenario> maybe_loaded = load_scenario_or_report(scenario);
  if (!maybe_loaded) {
    return 2;
  }
  const config::LoadedScenario& loaded = *maybe_loaded;
  const campaign::CampaignParams params = campaign_params(a, loaded);
  // Under mpirun / srun: MPI ranks share the campaign; rank 0 prints and writes.
  std::optional<campaign::MpiWorld> world;
  if (campaign::launched_by_mpi() && campaign::mpi_available()) {
    world.emplace();
    if (world->size() > 1 && (params.until_ci || params.shard)) {
      if (world->rank() == 0) {
        std::fprintf(stderr, "nicsim run: --until-ci and --shard do not run under MPI (%d ranks)\n",
                     world->size());
      }
      return 2;
    }
    if (world->size() == 1) {
      world.reset();
    }
  }
  const bool rank0 = !world || world->rank() == 0;

  if (const std::string problem = output_problem(args->out); !problem.empty()) {
    std::fprintf(stderr, "nicsim run: %s\n", problem.c_str());
    return 2;
  }
  std::FILE* const text = text_stream(args->out);
  const auto wall_start = std::chrono::steady_clock::now();
  report::Results results = new_results(inv.argc, inv.argv);

  campaign::ResultsSpool spool(args->out.csv.has_value() || args->out.flent.has_value());
  std::optional<campaign::ProgressMeter> meter;
  if (isatty(STDERR_FILENO) != 0 && !args->quiet && rank0) {
    const size_t runs =
        loaded.runs.size() * (params.until_ci ? params.max_repeat : params.plan.repeat);
    meter.emplace(stderr,
                  params.shard ? (runs + params.shard->count - 1) / params.shard->count : runs,
                  loaded.scenario.duration.to_seconds());
  }
  campaign::CampaignCallbacks cb;
  cb.on_run = [&](const report::Run& r) {
    if (meter) {
      meter->clear();
    }
    print_run(text, r, args->quiet || params.plan.repeated);
  };
  if (meter) {
    cb.progress = [&](const campaign::Job& j, const sim::Progress& p) {
      meter->update(j.index, j.run.label, p.simulated_s);
    };
    cb.on_finished = [&](size_t index) { meter->finished(index); };
  }
  g_interrupted = false;
  campaign::CampaignOutcome outcome;
  try {
    InterruptGuard guard;
    outcome = world ? campaign::run_campaign_mpi(loaded, params, spool, cb, g_interrupted, *world)
                    : campaign::run_campaign(loaded, params, spool, cb, g_interrupted);
  } catch (const std::runtime_error& e) {  // the results spool could not be written
    if (meter) {
      meter->clear();
    }
    std::fprintf(stderr, "nicsim: %s\n", e.what());
    if (world) {
      world->abort(1);
    }
    return 1;
  }
  if (meter) {
    meter->clear();
  }
  if (!rank0) {
    return 0;  // its runs went to rank 0
  }
  if (!outcome.error.empty()) {
    std::fprintf(stderr, "nicsim: %s: %s\n", scenario.c_str(), outcome.error.c_str());
    if (world) {
      world->abort(2);  // the other ranks may be waiting to send
    }
    return 2;
  }
  const std::vector<report::RunStatistics>& statistics = spool.finish();
  if (!params.shard) {
    report::print(text, report::format_statistics_table(statistics));
  }
  if (const std::string summary = report::format_latency_under_load_summary(spool.summaries());
      !summary.empty()) {
    report::print(text, "\n" + summary);  // rrul in several runs: one comparison table
  }
  results.meta.runs = spool.run_meta();
  for (const report::RunMeta& m : results.meta.runs) {
    results.meta.events += m.events;
  }
  results.meta.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  results.meta.events_per_s =
      results.meta.wall_s > 0 ? static_cast<double>(results.meta.events) / results.meta.wall_s : 0;
  if (params.shard) {
    results.meta.shard = report::Meta::Shard{params.shard->index, params.shard->count,
                                             outcome.total, outcome.indexes};
  }
  if (outcome.interrupted) {
    std::fprintf(stderr, "nicsim run: interrupted: %zu of %zu runs finished%s\n", outcome.delivered,
                 outcome.planned,
                 outcome.delivered > 0 && args->out.any() ? ", writing their results" : "");
    const int status =
        outcome.delivered > 0 && write_campaign_outputs(spool, results.meta, args->out) != 0 ? 1
                                                                                             : 130;
    if (world) {
      world->abort(status);
    }
    return status;
  }
  return write_campaign_outputs(spool, results.meta, args->out);
}

}  // namespace

}  // namespace nicsim::tools
