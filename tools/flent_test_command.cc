// `nicsim flent-test`: runs one of flent's tests (config/flent_tests.h) between the scenario's
// first two hosts (rtt_fair: the first host against every other, at most four), over the
// scenario's network (hosts, NICs, qdiscs, wire or links); the scenario's own [[traffic.*]] is
// replaced by the test. Every [vary] run is simulated, or with --emulate emulated (`nicsim
// emulate`'s own-traffic path, root). The results are those of `nicsim run` / `nicsim emulate`
// with [[traffic.flent]] test = NAME; --flent writes the file under flent's test name.
// Exit status: 0 ok, 2 usage or scenario error, 1 when writing (or the emulation) fails.
#include "tools/flent_test_command.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/flent_tests.h"
#include "nicsim/config/scenario.h"
#include "nicsim/config/traffic_plan.h"
#include "nicsim/config/units.h"
#include "nicsim/report/text.h"
#include "nicsim/sim/simulation.h"
#include "tools/emulate_command.h"
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
  FlentParams params;                 // flent's -t test parameters
  bool emulate = false;
  bool quiet = false;
  std::optional<uint64_t> seed;
  OutputOptions out;
};

int run_test(const FlentTestArgs& a, const cli::Invocation& inv) {
  if (a.name.empty() || a.scenario.empty()) {
    throw cli::UsageError("expected NAME SCENARIO.toml (or --list)");
  }
  const std::string& name = a.name;
  const std::string& file = a.scenario;
  const config::FlentTestInfo* info = &flent_test_or_usage(name);
  if (const std::string problem = output_problem(a.out); !problem.empty()) {
    std::fprintf(stderr, "nicsim flent-test: %s\n", problem.c_str());
    return 2;
  }
  const std::optional<config::LoadedScenario> maybe_loaded = load_scenario_or_report(file);
  if (!maybe_loaded) {
    return 2;
  }
  config::LoadedScenario loaded = *maybe_loaded;
  config::RrulConfig t;
  t.test = name;
  t.idle = a.delay;
  t.load = a.length;
  t.probe_interval = a.step;
  t.bin = a.step;
  t.streams = info->streams ? a.params.streams : 1;
  t.rate = a.params.rate;
  t.size = a.params.size;
  t.markings = markings_or_usage(a.params.markings);
  const auto with_test = [&](config::Scenario& s) {
    t.from = s.hosts.at(0).name;
    t.to = s.hosts.at(1).name;
    s.traffic = config::TrafficConfig{};
    s.traffic.rrul.push_back(t);
    s.duration = config::flent_total_length(name, t.start + t.load, t.idle);
    if (a.seed) {
      s.seed = *a.seed;
    }
  };
  with_test(loaded.scenario);
  for (config::Run& run : loaded.runs) {
    with_test(run.scenario);
    try {
      config::plan(run.scenario);  // a test the network cannot carry (rtt_fair's servers)
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "nicsim: %s: %s\n", file.c_str(), e.what());
      return 2;
    }
  }
  if (a.emulate) {
    return emulate_own_traffic(loaded, file, a.out, a.quiet, inv);
  }
  std::FILE* const text = text_stream(a.out);
  report::Results results = new_results(inv.argc, inv.argv);
  for (const config::Run& run : loaded.runs) {
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

int print_flent_tests() {
  for (const config::FlentTestInfo& t : config::flent_tests()) {
    std::printf("%-18s %s\n", std::string(t.name).c_str(), std::string(t.description).c_str());
  }
  return 0;
}

const config::FlentTestInfo& flent_test_or_usage(const std::string& name) {
  const config::FlentTestInfo* info = config::find_flent_test(name);
  if (info == nullptr) {
    std::string names;
    for (const config::FlentTestInfo& t : config::flent_tests()) {
      names += (names.empty() ? "" : ", ") + std::string(t.name);
    }
    throw cli::UsageError("unknown flent test '" + name + "' (presets: " + names + ")");
  }
  return *info;
}

std::vector<uint8_t> markings_or_usage(const std::string& list) {
  if (list.empty()) {
    return {};
  }
  try {
    return config::parse_flent_markings(list);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(std::string("--markings: ") + e.what());
  }
}

void add_flent_params(CLI::App& app, FlentParams& p) {
  app.add_option("--streams", p.streams, "streams of tcp_nup / tcp_ndown / rrul_var (default 4)")
      ->type_name("N")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  app.add_option("--markings", p.markings,
                 "rrul_var: each stream's DSCP, e.g. CS0,CS1,EF (flent -t markings; default CS0)")
      ->type_name("LIST");
  app.add_option_function<std::string>(
         "--rate",
         [&p](const std::string& v) {
           const config::Parsed<Rate> r = config::parse_rate(v);
           if (!r || r.value().is_zero()) {
             throw CLI::ValidationError("--rate", r ? "must be > 0" : r.error());
           }
           p.rate = r.value();
         },
         "udp_flood: the flood's rate (flent -t udp_bandwidth; default 1Mbit, iperf's);\n"
         "bursts: the bursts' rate (default 100Mbit)")
      ->type_name("RATE");
  app.add_option("--size", p.size,
                 "udp_flood: UDP payload bytes (flent -t udp_pktsize; default 1470, iperf's)")
      ->type_name("BYTES")
      ->check(CLI::Range(int64_t{32}, int64_t{1472}));
}

cli::Action define_flent_test(CLI::App& app, const cli::Invocation& inv) {
  auto a = std::make_shared<FlentTestArgs>();
  app.description(
      "Runs one of flent's named tests in the simulator (or with --emulate in the emulator)\n"
      "over the scenario's network, between its first two hosts (flent's client and HOST;\n"
      "rtt_fair: the first host against every other, at most four, at different RTTs); the\n"
      "scenario's own traffic is replaced. Timing as flent's: --delay idle, --length load,\n"
      "--delay idle (voip and bursts: --length only); probes every --step. --flent writes a\n"
      ".flent.gz under the test's name, so flent's own plots open it. --list prints the\n"
      "presets.");
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
  add_flent_params(app, a->params);
  app.add_flag("--emulate", a->emulate,
               "run it in the emulator (`nicsim emulate`'s own traffic: real sockets across\n"
               "the emulated network; needs root)");
  app.add_flag("--quiet", a->quiet, "--emulate: no notices or summary on stderr");
  cli::add_seed(app, a->seed, "override the scenario's seed");
  add_output_options(app, a->out);
  return [a, inv] { return a->list ? print_flent_tests() : run_test(*a, inv); };
}

}  // namespace nicsim::tools
