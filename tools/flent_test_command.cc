// `nicsim flent-test`: runs one of flent's tests (config/flent_tests.h) between the scenario's
// first two hosts, over the scenario's network (hosts, NICs, qdiscs, wire or links); the
// scenario's own [[traffic.*]] is replaced by the test. Every [vary] run is simulated. The
// results are those of `nicsim run` with [[traffic.flent]] test = NAME; --flent writes the
// file under flent's test name.
// Exit status: 0 ok, 2 usage or scenario error, 1 when writing fails.
#include "tools/flent_test_command.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/flent_tests.h"
#include "nicsim/config/scenario.h"
#include "nicsim/report/text.h"
#include "nicsim/sim/simulation.h"
#include "tools/load_scenario.h"
#include "tools/results_output.h"

namespace nicsim::tools {
namespace {

struct FlentTestArgs {
  std::string name;      // the test
  std::string scenario;  // the scenario file
  bool list = false;
  Duration length = Duration::s(60);  // flent -l
  Duration delay = Duration::s(5);    // flent --delay
  Duration step = Duration::ms(200);  // flent -s
  int64_t streams = 4;                // -t upload_streams / download_streams
  std::optional<uint64_t> seed;
  OutputOptions out;
};

int list_tests() {
  for (const config::FlentTestInfo& t : config::flent_tests()) {
    std::printf("%-18s %s\n", std::string(t.name).c_str(), std::string(t.description).c_str());
  }
  return 0;
}

int run_test(const FlentTestArgs& a, const cli::Invocation& inv) {
  if (a.name.empty() || a.scenario.empty()) {
    throw cli::UsageError("expected NAME SCENARIO.toml (or --list)");
  }
  const std::string& name = a.name;
  const std::string& file = a.scenario;
  const config::FlentTestInfo* info = config::find_flent_test(name);
  if (info == nullptr) {
    std::string names;
    for (const config::FlentTestInfo& t : config::flent_tests()) {
      names += (names.empty() ? "" : ", ") + std::string(t.name);
    }
    throw cli::UsageError("unknown flent test '" + name + "' (presets: " + names + ")");
  }
  if (const std::string problem = output_problem(a.out); !problem.empty()) {
    std::fprintf(stderr, "nicsim flent-test: %s\n", problem.c_str());
    return 2;
  }
  const std::optional<config::LoadedScenario> maybe_loaded = load_scenario_or_report(file);
  if (!maybe_loaded) {
    return 2;
  }
  const config::LoadedScenario& loaded = *maybe_loaded;
  std::FILE* const text = text_stream(a.out);
  report::Results results = new_results(inv.argc, inv.argv);
  for (config::Run run : loaded.runs) {
    config::Scenario& s = run.scenario;
    config::RrulConfig t;
    t.test = name;
    t.from = s.hosts.at(0).name;
    t.to = s.hosts.at(1).name;
    t.idle = a.delay;
    t.load = a.length;
    t.probe_interval = a.step;
    t.bin = a.step;
    t.streams = info->streams ? a.streams : 1;
    s.traffic = config::TrafficConfig{};
    s.traffic.rrul.push_back(t);
    s.duration = t.end();
    if (a.seed) {
      s.seed = *a.seed;
    }
    try {
      report::Run r = sim::Simulation(run).run();
      report::print(text, report::format_run_report(r));
      results.runs.push_back(std::move(r));
    } catch (const std::exception& e) {  // InvalidParams, a plan the network cannot carry
      std::fprintf(stderr, "nicsim: %s: %s\n", file.c_str(), e.what());
      return 2;
    }
  }
  return write_outputs(results, a.out, "flent-test");
}

}  // namespace

cli::Action define_flent_test(CLI::App& app, const cli::Invocation& inv) {
  auto a = std::make_shared<FlentTestArgs>();
  app.description(
      "Runs one of flent's named tests in the simulator over the scenario's network, between\n"
      "its first two hosts (flent's client and HOST); the scenario's own traffic is replaced.\n"
      "Timing as flent's: --delay idle, --length load, --delay idle; probes every --step.\n"
      "--flent writes a .flent.gz under the test's name, so flent's own plots open it.\n"
      "--list prints the presets.");
  app.footer("Exit status 2 on a bad scenario or test name, 1 when writing fails.");
  app.add_option("NAME", a->name, "the test (see --list)")->type_name("NAME");
  app.add_option("SCENARIO", a->scenario, "the scenario file (TOML, docs/scenarios.md)")
      ->type_name("SCENARIO.toml");
  app.add_flag("--list", a->list, "list the tests and exit");
  cli::add_duration(app, "--length", a->length, "the load phase (flent -l; default 60s)",
                    Duration::ms(1));
  cli::add_duration(app, "--delay", a->delay, "idle before and after (flent --delay; default 5s)",
                    Duration::ms(1));
  cli::add_duration(app, "--step", a->step, "probe interval and bins (flent -s; default 200ms)",
                    Duration::ms(10));
  app.add_option("--streams", a->streams, "streams of tcp_nup / tcp_ndown (default 4)")
      ->type_name("N")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  cli::add_seed(app, a->seed, "override the scenario's seed");
  add_output_options(app, a->out);
  return [a, inv] { return a->list ? list_tests() : run_test(*a, inv); };
}

}  // namespace nicsim::tools
