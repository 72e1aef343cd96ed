// `nicsim emulate`: run a scenario's link in real time between two network namespaces, with
// an optional command in host a (and a server in host b). Thin: parse, let emu decide what to
// emulate (emu/emulation.h), run each session (emu/session.h) with the scenario's traffic
// (live/netns_traffic.h) when there is no command, print. Exit status: the command's; 2 on
// usage, scenario or privilege problems (one line); 1 when the emulation cannot be set up.
#include "tools/emulate_command.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"
#include "nicsim/core/param_error.h"
#include "nicsim/emu/emulation.h"
#include "nicsim/emu/netns.h"
#include "nicsim/emu/session.h"
#include "nicsim/emu/session_summary.h"
#include "nicsim/emu/sys.h"
#include "nicsim/live/netns_traffic.h"
#include "nicsim/live/traffic.h"
#include "nicsim/report/text.h"
#include "tools/load_scenario.h"
#include "tools/results_output.h"

namespace nicsim::tools {
namespace {

struct EmulateArgs {
  std::vector<std::string> scenario;  // exactly one (none with --cleanup)
  emu::SessionOptions session;
  std::optional<uint64_t> seed;
  std::string runs;  // --run
  OutputOptions out;
  bool quiet = false;
  bool cleanup = false;
  bool rt_given = false;
  std::string io = "packet";  // --io
  std::string nic = "model";  // --nic
};

// A one-line error (exit 2 or 1), after the usage errors the parser finds.
struct Failure {
  int status;
};

void define_options(CLI::App& app, EmulateArgs& a);
int emulate(EmulateArgs& a, const cli::Invocation& inv);

}  // namespace

cli::Action define_emulate(CLI::App& app, const cli::Invocation& inv) {
  auto a = std::make_shared<EmulateArgs>();
  a->session.loop.rt_priority = 50;
  a->session.loop.spin = Duration::ms(2);
  define_options(app, *a);
  a->session.command = inv.command;
  return [a, inv] {
    if (!a->cleanup || !a->scenario.empty()) {
      cli::the_one(a->scenario, "the scenario file", " (put the command after --)");
    }
    if (a->out.any() && !a->session.command.empty()) {
      throw cli::UsageError(
          "--json/--csv/--flent report the scenario's own traffic: not with -- CMD");
    }
    a->session.io = a->io == "tap"       ? emu::FrameIo::kTap
                    : a->io == "tap-gso" ? emu::FrameIo::kTapGso
                                         : emu::FrameIo::kPacket;
    a->session.backpressure = a->io == "pull";
    a->session.nic_models = a->nic == "model";
    emu::resolve_busy_poll(a->session.loop, a->rt_given);
    try {
      return emulate(*a, inv);
    } catch (const Failure& f) {
      return f.status;
    }
  };
}

namespace {

void define_options(CLI::App& app, EmulateArgs& a) {
  app.description(
      "Runs the scenario's NICs and wire in real time on real Ethernet frames between two\n"
      "network namespaces (host a = the scenario's first host, 198.18.0.1; host b = 198.18.0.2),\n"
      "so real kernel TCP, ping or iperf3 cross them: a frame host a sends goes through a's NIC\n"
      "model (qdisc, TX ring, BQL, doorbell, USB bulk-OUT with the chip's framing), the wire\n"
      "(rate, delay, loss, jitter) and b's NIC model (RX coalescing, NAPI, USB aggregation), and\n"
      "is then handed to b's kernel. The emulated CPUs are the presets' (modelled delays). Needs\n"
      "root.\n"
      "\n"
      "Without CMD, nicsim runs the scenario's own traffic ([[traffic.tcp]], ping, udp_probe,\n"
      "rrul) on real sockets across the emulated link - a nicsim server in host b, the client\n"
      "in host a - and prints the same iperf3/ping tables as `nicsim run` (backend \"emu\");\n"
      "every [vary] combination is emulated in turn.\n"
      "\n"
      "-- CMD ARGS runs CMD in host a; the emulation lasts until CMD exits and nicsim exits\n"
      "with CMD's status. CMD finds host b's address in $NICSIM_PEER (also NICSIM_LOCAL,\n"
      "NICSIM_HOST, NICSIM_NETNS, and NICSIM_HOST_<name> for every host).\n"
      "\n"
      "A network ([routers.*], [[links]]): every host in its own namespace (198.18.<link>.x/24,\n"
      "default route via its router), routers in nicsim's data path (TTL, checksum, next-hop\n"
      "MACs, the interfaces' NIC and qdisc models on the router's emulated CPU); CMD runs in the\n"
      "first host, --server in the second (docs/emu.md \"Networks\").");
  app.footer(
      "Examples: nicsim emulate scenarios/examples/100mbit-5ms.toml \\\n"
      "            --server 'iperf3 -s -1' -- sh -c 'iperf3 -c $NICSIM_PEER -t 5'\n"
      "          nicsim emulate scenarios/seeds/stmmac-bql.toml --run bql=false,rate=100Mbit \\\n"
      "            --pcap out.pcap -- sh -c 'ping -c 5 $NICSIM_PEER'\n"
      "Notices and the summary (frames, throughput, timer error) go to stderr. docs/emu.md.");
  app.add_option("SCENARIO", a.scenario, "the scenario file (TOML, docs/scenarios.md)")
      ->type_name("SCENARIO.toml");
  add_output_options(app, a.out);
  app.get_option("--json")->description(
      "without CMD: also write the runs as one JSON document (docs/results.md);\n"
      "'-' writes it to standard output (the tables then go to stderr)");
  app.add_option_function<std::string>(
         "--server",
         [&a](const std::string& v) {
           a.session.server = {"/bin/sh", "-c", v};
         },
         "run CMD (one string, through /bin/sh -c) in host b before CMD; CMD starts\n"
         "once the server listens (or after --server-wait)")
      ->type_name("CMD");
  cli::add_duration(app, "--server-wait", a.session.server_wait,
                    "how long to wait for the server to listen (default 5s)");
  cli::add_duration(app, "--duration", a.session.duration,
                    "without CMD: how long to run (default: the scenario's duration)");
  cli::add_choice(app, "--io", a.io, {"packet", "tap", "tap-gso", "pull"},
                  "frame I/O: veth + AF_PACKET with recvmmsg/sendmmsg (default), TAP,\n"
                  "tap-gso: TAP with TSO super-frames in and GRO super-frames out, or\n"
                  "pull: veth with back pressure (frames taken from a host only while its\n"
                  "emulated NIC has room; the host's own qdisc and TSQ hold the rest;\n"
                  "experimental, docs/emu.md)");
  cli::add_duration(app, "--spin", a.session.loop.spin,
                    "poll instead of sleeping up to this close to each deadline (default\n"
                    "2ms; the lead adapts to how late sleeps wake, within --spin-budget;\n"
                    "0us = always sleep)");
  app.add_option_function<std::string>(
         "--spin-budget",
         [&a](const std::string& v) {
           char* endp = nullptr;
           const double f = std::strtod(v.c_str(), &endp);
           if (v.empty() || *endp != '\0' || !(f >= 0 && f <= 1)) {
             throw CLI::ValidationError("--spin-budget",
                                        "expected a fraction in [0, 1], got '" + v + "'");
           }
           a.session.loop.spin_budget = f;
         },
         "fraction of each 10 ms the loop may spend spinning (default 0.5)")
      ->type_name("F");
  app.add_flag("--busy-poll", a.session.loop.busy_poll,
               "never sleep (one core at 100 %; implies --rt-priority 0)");
  app.add_option_function<std::string>(
         "--rt-priority",
         [&a](const std::string& v) {
           char* endp = nullptr;
           const long p = std::strtol(v.c_str(), &endp, 10);
           if (v.empty() || *endp != '\0' || p < 0 || p > 99) {
             throw CLI::ValidationError("--rt-priority", "expected 0..99, got '" + v + "'");
           }
           a.session.loop.rt_priority = static_cast<int>(p);
           a.rt_given = true;
         },
         "SCHED_FIFO priority of the emulator loop (default 50; 0 = normal\n"
         "scheduling). Commands always run under the normal scheduler")
      ->type_name("N");
  cli::add_seed(app, a.seed, "override the scenario's seed (wire loss and jitter)");
  app.add_option("--run", a.runs,
                 "with [vary]: emulate only the combinations whose labels have these\n"
                 "values (e.g. --run bql=true,rate=100Mbit); with CMD (or --pcap) exactly\n"
                 "one must match")
      ->type_name("K=V[,K=V]");
  app.add_option_function<std::string>(
         "--pcap",
         [&a](const std::string& v) {
           if (v.empty()) {
             throw CLI::ValidationError("--pcap", "empty file name");
           }
           a.session.pcap = v;
         },
         "write every frame entering the emulated wire (both directions, stamped\n"
         "with its first bit's wall-clock time, ns) to FILE (pcap)")
      ->type_name(cli::kFileType);
  app.add_option_function<std::string>(
         "--record",
         [&a](const std::string& v) {
           if (v.empty()) {
             throw CLI::ValidationError("--record", "empty file name");
           }
           a.session.record = v;
         },
         "record every frame the hosts hand to their emulated NICs (input time, host,\n"
         "length, headers, flow) to FILE (pcapng), for [[traffic.replay]] in nicsim run")
      ->type_name(cli::kFileType);
  cli::add_choice(app, "--nic", a.nic, {"model", "fifo"},
                  "fifo: replace both NIC models by a txqueuelen-1000 drop-tail FIFO\n"
                  "(diagnostics); model (default): the scenario's");
  app.add_flag("--quiet", a.quiet, "no notices or summary on stderr");
  app.add_flag("--cleanup", a.cleanup, "remove namespaces left by emulators that died, then exit");
}

// --cleanup: a usage check, the privilege check, then the removal.
int cleanup() {
  if (const std::string problem = emu::privilege_problem(); !problem.empty()) {
    std::fprintf(stderr, "nicsim emulate: %s\n", problem.c_str());
    return 2;
  }
  for (const std::string& name : emu::remove_stale_namespaces()) {
    std::fprintf(stderr, "nicsim: removed leftover namespace %s\n", name.c_str());
  }
  return 0;
}

config::LoadedScenario load(const std::string& file) {
  std::optional<config::LoadedScenario> loaded = load_scenario_or_report(file);
  if (!loaded) {
    throw Failure{2};
  }
  return std::move(*loaded);
}

// Every problem found before anything is created: the run choice, the outputs, privileges and
// the pcap path (a path that cannot be written is a usage error).
emu::EmulationPlan check_request(const EmulateArgs& a, const config::LoadedScenario& loaded) {
  emu::EmulationRequest req;
  req.scenario_file = a.scenario[0];
  req.runs = report::RunSelector(a.runs);
  req.command = !a.session.command.empty();
  req.pcap = !a.session.pcap.empty();
  req.outputs = a.out.any();
  req.seed = a.seed;
  req.duration = a.session.duration;
  emu::EmulationPlan plan;
  try {
    plan = emu::plan_emulation(loaded, req);
  } catch (const emu::EmulationRequestError& e) {
    std::fprintf(stderr, "nicsim emulate: %s\n", e.what());
    throw Failure{2};
  }
  if (const std::string problem = output_problem(a.out); !problem.empty()) {
    std::fprintf(stderr, "nicsim emulate: %s\n", problem.c_str());
    throw Failure{2};
  }
  if (const std::string problem = emu::privilege_problem(); !problem.empty()) {
    std::fprintf(stderr, "nicsim emulate: %s\n", problem.c_str());
    throw Failure{2};
  }
  if (!a.session.record.empty() && plan.runs.size() > 1) {
    std::fprintf(stderr,
                 "nicsim emulate: --record records one emulation: choose one of the %zu runs "
                 "with --run K=V,...\n",
                 plan.runs.size());
    throw Failure{2};
  }
  for (const auto& [option, path] :
       {std::pair<const char*, const std::string&>{"--pcap", a.session.pcap},
        std::pair<const char*, const std::string&>{"--record", a.session.record}}) {
    if (path.empty()) {
      continue;
    }
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
      std::fprintf(stderr, "nicsim emulate: %s %s: %s\n", option, path.c_str(),
                   std::strerror(errno));
      throw Failure{2};
    }
    std::fclose(f);
  }
  return plan;
}

// One emulation of `run`; with `own_traffic`, the scenario's traffic is measured into `results`.
// Returns the session's result.
emu::SessionResult emulate_run(const config::Run& run, const EmulateArgs& a, bool own_traffic,
                               const emu::SessionOptions& base, report::Results& results) {
  const auto notice = base.notice;
  if (!a.quiet) {
    for (const std::string& line : emu::unsupported_settings(run.scenario)) {
      std::fprintf(stderr, "nicsim: not emulated yet: %s\n", line.c_str());
    }
  }
  emu::SessionOptions session = base;
  std::optional<live::NetnsTraffic> traffic;
  if (own_traffic) {
    live::TrafficPlan plan;
    try {
      plan = config::plan(run.scenario);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "nicsim: %s: %s\n", a.scenario[0].c_str(), e.what());
      throw Failure{2};
    }
    if (const std::string problem = live::plan_problem(plan); !problem.empty()) {
      std::fprintf(stderr, "nicsim emulate: %s: %s\n", a.scenario[0].c_str(), problem.c_str());
      throw Failure{2};
    }
    // Safety cap only: the run ends when the traffic reports done (done_fd).
    session.duration = plan.duration + Duration::s(30);
    traffic.emplace(plan, config::run_info(run, "emu"), notice);
    session.done_fd = traffic->done_fd();
  }
  const bool quiet = a.quiet;
  session.on_ready = [&](const emu::Topology& t) {
    if (!quiet && t.host_count() == 2 && t.host(0).role == "a") {
      std::fprintf(stderr, "nicsim: host a %s (netns %s), host b %s (netns %s)\n",
                   t.host(0).addr_string().c_str(), t.host(0).netns.c_str(),
                   t.host(1).addr_string().c_str(), t.host(1).netns.c_str());
    } else if (!quiet) {
      for (size_t h = 0; h < t.host_count(); ++h) {
        const emu::HostEnd& e = t.host(h);
        std::fprintf(stderr, "nicsim: host %s %s/%d (netns %s)%s%s\n", e.name.c_str(),
                     e.addr_string().c_str(), e.prefix_len, e.netns.c_str(),
                     e.gateway ? ", gateway " : "",
                     e.gateway ? emu::format_ipv4(e.peer_addr).c_str() : "");
      }
    }
    if (traffic) {
      live::NetnsHosts hosts{
          t.host(0).netns_fd.get(), t.host(1).netns_fd.get(), t.host(0).addr, t.host(1).addr, {}};
      if (t.host_count() > 2) {
        for (size_t h = 0; h < t.host_count(); ++h) {
          hosts.all.push_back({t.host(h).netns_fd.get(), t.host(h).addr});
        }
      }
      traffic->start(hosts);
    }
  };
  const auto run_start = std::chrono::steady_clock::now();
  emu::SessionResult result;
  try {
    result = emu::run_session(run, session);
  } catch (const InvalidParams& e) {
    std::fprintf(stderr, "nicsim: %s: %s\n", a.scenario[0].c_str(), e.what());
    throw Failure{2};
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nicsim emulate: %s\n", e.what());
    throw Failure{1};
  }
  if (traffic) {
    report::Run r;
    try {
      r = traffic->finish();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nicsim emulate: %s: traffic: %s\n", a.scenario[0].c_str(), e.what());
      throw Failure{1};
    }
    r.queues = result.queues;  // the emulated NICs' queue series, as the simulator's
    report::print(text_stream(a.out), report::format_run_report(r));
    std::fflush(text_stream(a.out));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    results.meta.runs.push_back(report::RunMeta{r.label, wall, 0, 0});
    results.runs.push_back(std::move(r));
  }
  if (!quiet) {
    std::fputs(emu::format_session_summary(result).c_str(), stderr);
  } else if (!result.pcap_error.empty()) {
    std::fprintf(stderr, "nicsim emulate: pcap: %s\n", result.pcap_error.c_str());
  }
  if (quiet && !result.record_error.empty()) {
    std::fprintf(stderr, "nicsim emulate: record: %s\n", result.record_error.c_str());
  }
  return result;
}

int emulate_loaded(EmulateArgs& a, const config::LoadedScenario& loaded,
                   const cli::Invocation& inv);

int emulate(EmulateArgs& a, const cli::Invocation& inv) {
  if (a.cleanup) {
    return cleanup();
  }
  return emulate_loaded(a, load(a.scenario[0]), inv);
}

int emulate_loaded(EmulateArgs& a, const config::LoadedScenario& loaded,
                   const cli::Invocation& inv) {
  const emu::EmulationPlan plan = check_request(a, loaded);
  const bool quiet = a.quiet;
  auto notice = [quiet](const std::string& line) {
    if (!quiet) {
      std::fprintf(stderr, "nicsim: %s\n", line.c_str());
    }
  };
  a.session.notice = notice;
  if (!a.session.command.empty() && emu::has_traffic(loaded.scenario)) {
    notice("the scenario's [[traffic.*]] entries are not run: the command is the traffic");
  }

  const auto wall_start = std::chrono::steady_clock::now();
  report::Results results = new_results(inv.argc, inv.argv);
  int status = 0;
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const config::Run& run = plan.runs[i];
    if (plan.runs.size() > 1) {
      notice("run " + std::to_string(i + 1) + "/" + std::to_string(plan.runs.size()) + ": " +
             run.label);
    }
    const emu::SessionResult result = emulate_run(run, a, plan.own_traffic, a.session, results);
    if (result.exit_status != 0 || result.signal != 0) {
      status = result.exit_status;
      break;
    }
    if (!result.pcap_error.empty() || !result.record_error.empty()) {
      status = 1;  // frames were lost from the capture: reported above, and not a success
    }
  }
  results.meta.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (const int rc = write_outputs(results, a.out, "nicsim emulate"); rc != 0) {
    return rc;
  }
  return status;
}

}  // namespace

int emulate_own_traffic(const config::LoadedScenario& loaded, const std::string& file,
                        const OutputOptions& out, bool quiet, const cli::Invocation& inv) {
  EmulateArgs a;
  a.scenario = {file};
  a.session.loop.rt_priority = 50;  // define_emulate's defaults
  a.session.loop.spin = Duration::ms(2);
  a.session.io = emu::FrameIo::kPacket;
  a.session.nic_models = true;
  a.out = out;
  a.quiet = quiet;
  emu::resolve_busy_poll(a.session.loop, false);
  try {
    return emulate_loaded(a, loaded, inv);
  } catch (const Failure& f) {
    return f.status;
  }
}

}  // namespace nicsim::tools
