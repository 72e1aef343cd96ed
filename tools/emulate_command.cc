// `nicsim emulate`: run a scenario's link in real time between two network namespaces, with
// an optional command in host a (and a server in host b). Thin: parse, call emu::run_session,
// print. Exit status: the command's; 2 on usage, scenario or privilege problems (one line);
// 1 when the emulation cannot be set up.
#include "tools/emulate_command.h"
#include "tools/export_command.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"
#include "nicsim/config/units.h"
#include "nicsim/core/param_error.h"
#include "nicsim/emu/netns.h"
#include "nicsim/emu/session.h"
#include "nicsim/emu/sys.h"
#include "nicsim/live/netns_traffic.h"
#include "nicsim/live/traffic.h"
#include "nicsim/report/json.h"
#include "nicsim/report/text.h"
#include "tools/results_output.h"

#ifndef NICSIM_VERSION
#define NICSIM_VERSION "0.0.0"
#endif
#ifndef NICSIM_GIT_COMMIT
#define NICSIM_GIT_COMMIT ""
#endif

namespace nicsim::tools {
namespace {

constexpr const char* kEmulateUsage =
    "usage: nicsim emulate SCENARIO.toml [options] [-- CMD [ARGS...]]\n"
    "       nicsim emulate --cleanup\n"
    "\n"
    "Runs the scenario's NICs and wire in real time on real Ethernet frames between two\n"
    "network namespaces (host a = the scenario's first host, 198.18.0.1; host b = 198.18.0.2),\n"
    "so real kernel TCP, ping or iperf3 cross them: a frame host a sends goes through a's NIC\n"
    "model (qdisc, TX ring, BQL, doorbell, USB bulk-OUT with the chip's framing), the wire\n"
    "(rate, delay, loss, jitter) and b's NIC model (RX coalescing, NAPI, USB aggregation), and\n"
    "is then handed to b's kernel. The emulated CPUs are the presets' (modelled delays). Needs\n"
    "root.\n"
    "\n"
    "Without CMD, nicsim runs the scenario's own traffic ([[traffic.tcp]], ping, udp_probe,\n"
    "rrul) on real sockets across the emulated link — a nicsim server in host b, the client\n"
    "in host a — and prints the same iperf3/ping tables as `nicsim run` (backend \"emu\");\n"
    "every [vary] combination is emulated in turn.\n"
    "\n"
    "  --json OUT      without CMD: also write the runs as one JSON document (docs/results.md)\n"
    "  --csv DIR, --flent OUT\n"
    "                  without CMD: also write CSV tables / flent data files (docs/exports.md)\n"
    "  -- CMD ARGS     run CMD in host a; the emulation lasts until CMD exits and nicsim exits\n"
    "                  with CMD's status. CMD finds host b's address in $NICSIM_PEER (also\n"
    "                  NICSIM_LOCAL, NICSIM_HOST, NICSIM_NETNS)\n"
    "  --server CMD    run CMD (one string, through /bin/sh -c) in host b before CMD; CMD starts\n"
    "                  once the server listens (or after --server-wait)\n"
    "  --server-wait D how long to wait for the server to listen (default 5s)\n"
    "  --duration D    without CMD: how long to run (default: the scenario's duration)\n"
    "  --io packet|tap frame I/O: veth + AF_PACKET with recvmmsg/sendmmsg (default), or TAP\n"
    "  --spin D        poll instead of sleeping up to this close to each deadline (default\n"
    "                  2ms; the lead adapts to how late sleeps wake, within --spin-budget;\n"
    "                  0us = always sleep)\n"
    "  --spin-budget F fraction of each 10 ms the loop may spend spinning (default 0.5)\n"
    "  --busy-poll     never sleep (one core at 100 %; implies --rt-priority 0)\n"
    "  --rt-priority N SCHED_FIFO priority of the emulator loop (default 50; 0 = normal\n"
    "                  scheduling). Commands always run under the normal scheduler\n"
    "  --seed N        override the scenario's seed (wire loss and jitter)\n"
    "  --run K=V[,K=V] with [vary]: emulate only the combinations whose labels have these\n"
    "                  values (e.g. --run bql=true,rate=100Mbit); with CMD (or --pcap) exactly\n"
    "                  one must match\n"
    "  --pcap FILE     write every frame entering the emulated wire (both directions, stamped\n"
    "                  with its first bit's wall-clock time, ns) to FILE (pcap)\n"
    "  --nic fifo      replace both NIC models by a txqueuelen-1000 drop-tail FIFO (diagnostics)\n"
    "  --quiet         no notices or summary on stderr\n"
    "  --cleanup       remove namespaces left by emulators that died, then exit\n"
    "\n"
    "Examples: nicsim emulate scenarios/examples/100mbit-5ms.toml \\\n"
    "            --server 'iperf3 -s -1' -- sh -c 'iperf3 -c $NICSIM_PEER -t 5'\n"
    "          nicsim emulate scenarios/seeds/stmmac-bql.toml --run bql=false,rate=100Mbit \\\n"
    "            --pcap out.pcap -- sh -c 'ping -c 5 $NICSIM_PEER'\n"
    "Notices and the summary (frames, throughput, timer error) go to stderr. docs/emu.md.\n";

struct EmulateArgs {
  std::string scenario;
  emu::SessionOptions session;
  std::optional<uint64_t> seed;
  std::string run_filter;  // --run
  std::optional<std::string> json;
  std::optional<std::string> csv, flent;  // exports (docs/exports.md)
  bool quiet = false;
  bool cleanup = false;
};

std::optional<EmulateArgs> parse(int argc, char** argv, std::string& error) {
  EmulateArgs a;
  a.session.loop.rt_priority = 50;
  a.session.loop.spin = Duration::ms(2);
  bool rt_given = false;
  int i = 2;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](const char* name) -> std::optional<std::string> {
      if (i + 1 >= argc) {
        error = std::string(name) + " needs a value";
        return std::nullopt;
      }
      return std::string(argv[++i]);
    };
    auto duration = [&](const char* name) -> std::optional<Duration> {
      auto v = value(name);
      if (!v) {
        return std::nullopt;
      }
      const auto d = config::parse_duration(*v);
      if (!d) {
        error = std::string(name) + ": " + d.error();
        return std::nullopt;
      }
      return d.value();
    };
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--server") {
      auto v = value("--server");
      if (!v) return std::nullopt;
      a.session.server = {"/bin/sh", "-c", *v};
    } else if (arg == "--server-wait") {
      auto d = duration("--server-wait");
      if (!d) return std::nullopt;
      a.session.server_wait = *d;
    } else if (arg == "--duration") {
      auto d = duration("--duration");
      if (!d) return std::nullopt;
      a.session.duration = *d;
    } else if (arg == "--spin") {
      auto d = duration("--spin");
      if (!d) return std::nullopt;
      a.session.loop.spin = *d;
    } else if (arg == "--rt-priority") {
      auto v = value("--rt-priority");
      if (!v) return std::nullopt;
      char* endp = nullptr;
      const long p = std::strtol(v->c_str(), &endp, 10);
      if (v->empty() || *endp != '\0' || p < 0 || p > 99) {
        error = "--rt-priority: expected 0..99, got '" + *v + "'";
        return std::nullopt;
      }
      a.session.loop.rt_priority = static_cast<int>(p);
      rt_given = true;
    } else if (arg == "--spin-budget") {
      auto v = value("--spin-budget");
      if (!v) return std::nullopt;
      char* endp = nullptr;
      const double f = std::strtod(v->c_str(), &endp);
      if (v->empty() || *endp != '\0' || !(f >= 0 && f <= 1)) {
        error = "--spin-budget: expected a fraction in [0, 1], got '" + *v + "'";
        return std::nullopt;
      }
      a.session.loop.spin_budget = f;
    } else if (arg == "--busy-poll") {
      a.session.loop.busy_poll = true;
    } else if (arg == "--io") {
      auto v = value("--io");
      if (!v) return std::nullopt;
      if (*v == "packet") {
        a.session.io = emu::FrameIo::kPacket;
      } else if (*v == "tap") {
        a.session.io = emu::FrameIo::kTap;
      } else {
        error = "--io: expected 'packet' or 'tap', got '" + *v + "'";
        return std::nullopt;
      }
    } else if (arg == "--seed") {
      auto v = value("--seed");
      if (!v) return std::nullopt;
      char* endp = nullptr;
      const unsigned long long s = std::strtoull(v->c_str(), &endp, 10);
      if (v->empty() || *endp != '\0' || (*v)[0] == '-') {
        error = "--seed: expected a non-negative integer, got '" + *v + "'";
        return std::nullopt;
      }
      a.seed = s;
    } else if (arg == "--run") {
      auto v = value("--run");
      if (!v) return std::nullopt;
      a.run_filter = *v;
    } else if (arg == "--pcap") {
      auto v = value("--pcap");
      if (!v) return std::nullopt;
      if (v->empty()) {
        error = "--pcap: empty file name";
        return std::nullopt;
      }
      a.session.pcap = *v;
    } else if (arg == "--nic") {
      auto v = value("--nic");
      if (!v) return std::nullopt;
      if (*v == "fifo") {
        a.session.nic_models = false;
      } else if (*v == "model") {
        a.session.nic_models = true;
      } else {
        error = "--nic: expected 'model' or 'fifo', got '" + *v + "'";
        return std::nullopt;
      }
    } else if (arg == "--json") {
      auto v = value("--json");
      if (!v) return std::nullopt;
      a.json = *v;
    } else if (arg == "--csv" || arg == "--flent") {
      auto v = value(arg == "--csv" ? "--csv" : "--flent");
      if (!v) return std::nullopt;
      (arg == "--csv" ? a.csv : a.flent) = *v;
    } else if (arg == "--quiet") {
      a.quiet = true;
    } else if (arg == "--cleanup") {
      a.cleanup = true;
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kEmulateUsage, stdout);
      std::exit(0);
    } else if (!arg.empty() && arg[0] == '-') {
      error = "unknown option '" + std::string(arg) + "'";
      return std::nullopt;
    } else if (a.scenario.empty()) {
      a.scenario = std::string(arg);
    } else {
      error = "only one scenario file, got '" + a.scenario + "' and '" + std::string(arg) +
              "' (put the command after --)";
      return std::nullopt;
    }
  }
  for (; i < argc; ++i) {
    a.session.command.emplace_back(argv[i]);
  }
  if (a.session.loop.busy_poll && !rt_given) {
    a.session.loop.rt_priority = 0;  // a SCHED_FIFO busy loop would be throttled (docs/emu.md)
  }
  if ((a.json || a.csv || a.flent) && !a.session.command.empty()) {
    error = "--json/--csv/--flent report the scenario's own traffic: not with -- CMD";
    return std::nullopt;
  }
  if (a.scenario.empty() && !a.cleanup) {
    error = "missing the scenario file";
    return std::nullopt;
  }
  return a;
}

// Whether a run's label ("bql=true rate=1Gbit") has every K=V of `filter` ("bql=true,rate=1Gbit"
// or space separated). An empty filter matches every run.
bool run_matches(const std::string& label, const std::string& filter) {
  auto tokens = [](const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
      if (c == ',' || c == ' ') {
        if (!cur.empty()) {
          out.push_back(cur);
        }
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) {
      out.push_back(cur);
    }
    return out;
  };
  const std::vector<std::string> have = tokens(label);
  for (const std::string& want : tokens(filter)) {
    bool found = false;
    for (const std::string& h : have) {
      found = found || h == want;
    }
    if (!found) {
      return false;
    }
  }
  return true;
}

std::string us(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", ms * 1000.0);
  return buf;
}

void print_summary(const config::Run& run, const emu::SessionResult& r) {
  std::fprintf(stderr, "--- nicsim emulate summary ---\n");
  std::fprintf(stderr, "%.2f s emulated, frame I/O: %s\n", r.elapsed_s, r.io.c_str());
  static const char* kDir[2] = {"a->b", "b->a"};
  for (size_t d = 0; d < 2; ++d) {
    const emu::DirectionStats& s = r.directions[d];
    const double mbit =
        r.elapsed_s > 0 ? static_cast<double>(s.bytes_out) * 8 / r.elapsed_s / 1e6 : 0.0;
    std::fprintf(stderr,
                 "%s: %llu frames in, %llu out (%.1f Mbit/s of frames), %llu refused by the "
                 "sending NIC, %llu lost on the wire, %llu TX completions, %llu CE marks\n",
                 kDir[d], static_cast<unsigned long long>(s.frames_in),
                 static_cast<unsigned long long>(s.frames_out), mbit,
                 static_cast<unsigned long long>(s.nic_drops),
                 static_cast<unsigned long long>(r.wires[d].lost),
                 static_cast<unsigned long long>(s.tx_released),
                 static_cast<unsigned long long>(s.ce_marked));
  }
  for (size_t h = 0; h < 2; ++h) {
    const model::NicCounters& c = r.nic_counters[h];
    const model::NicQueueSample& q = r.nic_queues[h];
    std::fprintf(stderr, "NIC %s: %s\n", h == 0 ? "a" : "b", r.nics[h].c_str());
    std::fprintf(
        stderr,
        "  tx %llu frames, %llu qdisc drops, %llu doorbells; rx %llu frames, %llu "
        "drops, %llu interrupts; at the end: qdisc %llu frames, ring %llu, BQL limit "
        "%llu B; emulated CPU busy %.2f s\n",
        static_cast<unsigned long long>(c.tx_packets),
        static_cast<unsigned long long>(c.tx_qdisc_drops),
        static_cast<unsigned long long>(c.doorbells), static_cast<unsigned long long>(c.rx_packets),
        static_cast<unsigned long long>(c.rx_drops), static_cast<unsigned long long>(c.interrupts),
        static_cast<unsigned long long>(q.qdisc_packets),
        static_cast<unsigned long long>(q.ring_packets),
        static_cast<unsigned long long>(q.bql_limit), r.cpus[h].busy.to_seconds());
  }
  if (!r.pcap_error.empty()) {
    std::fprintf(stderr, "pcap: %s\n", r.pcap_error.c_str());
  } else if (r.pcap_frames > 0) {
    std::fprintf(stderr, "pcap: %llu frames written\n",
                 static_cast<unsigned long long>(r.pcap_frames));
  }
  const auto& t = r.timer_error;
  std::fprintf(stderr, "timer error (wake-up - deadline): p50 %s, p99 %s, max %s (%llu wake-ups)\n",
               us(t.p50).c_str(), us(t.p99).c_str(), us(t.max).c_str(),
               static_cast<unsigned long long>(t.count));
  const auto& l = r.release_lateness;
  std::fprintf(stderr, "release lateness (frame written - scheduled): p50 %s, p99 %s, max %s\n",
               us(l.p50).c_str(), us(l.p99).c_str(), us(l.max).c_str());
  const auto& w = r.work_time;
  std::fprintf(stderr, "loop work per busy iteration: p50 %s, p99 %s, max %s\n", us(w.p50).c_str(),
               us(w.p99).c_str(), us(w.max).c_str());
  for (size_t h = 0; h < 2; ++h) {
    const emu::PortStats& p = r.ports[h];
    std::fprintf(
        stderr,
        "port %s: read %llu frames in %llu calls, wrote %llu in %llu calls, %llu write "
        "errors, %llu truncated\n",
        h == 0 ? "a" : "b", static_cast<unsigned long long>(p.rx_frames),
        static_cast<unsigned long long>(p.rx_calls), static_cast<unsigned long long>(p.tx_frames),
        static_cast<unsigned long long>(p.tx_calls), static_cast<unsigned long long>(p.tx_errors),
        static_cast<unsigned long long>(p.rx_truncated));
  }
  std::fprintf(stderr, "emulator CPU: user %.2f s, system %.2f s (%.0f %% of one core)\n",
               r.cpu_user_s, r.cpu_sys_s,
               r.elapsed_s > 0 ? 100 * (r.cpu_user_s + r.cpu_sys_s) / r.elapsed_s : 0.0);
  const emu::LoopStats& ls = r.loop;
  std::fprintf(
      stderr,
      "loop: %llu waits, %llu sleeps, %llu spins (%.0f ms, %llu refused by the budget), "
      "%llu overdue; spin lead %.0f us, worst sleep overshoot %.0f us\n",
      static_cast<unsigned long long>(ls.waits), static_cast<unsigned long long>(ls.sleeps),
      static_cast<unsigned long long>(ls.spins), ls.spin_time.to_ms(),
      static_cast<unsigned long long>(ls.spin_denied), static_cast<unsigned long long>(ls.overdue),
      ls.spin_lead.to_us(), ls.max_overshoot.to_us());
  (void)run;
}

bool has_traffic(const config::Scenario& s) {
  const config::TrafficConfig& t = s.traffic;
  return !t.tcp.empty() || !t.ping.empty() || !t.udp_probe.empty() || !t.rrul.empty();
}

}  // namespace

int emulate_command(int argc, char** argv) {
  std::string error;
  std::optional<EmulateArgs> args = parse(argc, argv, error);
  if (!args) {
    std::fprintf(stderr, "nicsim emulate: %s\n%s", error.c_str(), kEmulateUsage);
    return 2;
  }
  config::LoadedScenario loaded;
  if (!args->cleanup) {
    try {
      loaded = config::load_scenario_file(args->scenario);
    } catch (const config::ConfigError& e) {
      std::fprintf(stderr, "nicsim: %s\n", e.what());
      return 2;
    }
  }
  // [vary]: which combinations to emulate (--run; all by default). With a command, exactly one;
  // with the scenario's own traffic, every selected one in turn. Usage errors, found before the
  // privilege check.
  const bool own_traffic =
      !args->cleanup && args->session.command.empty() && has_traffic(loaded.scenario);
  std::vector<const config::Run*> chosen;
  if (!args->cleanup) {
    for (const config::Run& r : loaded.runs) {
      if (run_matches(r.label, args->run_filter)) {
        chosen.push_back(&r);
      }
    }
    std::string labels;
    for (const config::Run& r : loaded.runs) {
      labels +=
          (labels.empty() ? "" : "; ") + (r.label.empty() ? std::string("(one run)") : r.label);
    }
    if (chosen.empty()) {
      std::fprintf(stderr, "nicsim emulate: --run %s matches none of the runs of %s: %s\n",
                   args->run_filter.c_str(), args->scenario.c_str(), labels.c_str());
      return 2;
    }
    if (chosen.size() > 1 && !own_traffic) {
      std::fprintf(stderr,
                   "nicsim emulate: %s has %zu runs ([vary]) that match; with a command (or "
                   "without traffic) choose one with --run K=V,... (runs: %s)\n",
                   args->scenario.c_str(), chosen.size(), labels.c_str());
      return 2;
    }
    if (chosen.size() > 1 && !args->session.pcap.empty()) {
      std::fprintf(stderr,
                   "nicsim emulate: --pcap records one emulation: choose one of the %zu runs "
                   "with --run K=V,... (runs: %s)\n",
                   chosen.size(), labels.c_str());
      return 2;
    }
  }
  if (const std::string problem = emu::privilege_problem(); !problem.empty()) {
    std::fprintf(stderr, "nicsim emulate: %s\n", problem.c_str());
    return 2;
  }
  if (!args->session.pcap.empty()) {
    // A path that cannot be written is a usage error, found before anything is set up.
    std::FILE* f = std::fopen(args->session.pcap.c_str(), "wb");
    if (f == nullptr) {
      std::fprintf(stderr, "nicsim emulate: --pcap %s: %s\n", args->session.pcap.c_str(),
                   std::strerror(errno));
      return 2;
    }
    std::fclose(f);
  }
  if (args->cleanup) {
    for (const std::string& name : emu::remove_stale_namespaces()) {
      std::fprintf(stderr, "nicsim: removed leftover namespace %s\n", name.c_str());
    }
    return 0;
  }
  if ((args->json || args->csv || args->flent) && !own_traffic) {
    std::fprintf(stderr,
                 "nicsim emulate: --json/--csv/--flent: %s has no [[traffic.*]] to measure\n",
                 args->scenario.c_str());
    return 2;
  }
  const bool quiet = args->quiet;
  auto notice = [quiet](const std::string& line) {
    if (!quiet) {
      std::fprintf(stderr, "nicsim: %s\n", line.c_str());
    }
  };
  args->session.notice = notice;
  if (!args->session.command.empty() && has_traffic(loaded.scenario)) {
    notice("the scenario's [[traffic.*]] entries are not run: the command is the traffic");
  }

  const auto wall_start = std::chrono::steady_clock::now();
  report::Results results = new_results(argc, argv);
  int status = 0;
  for (size_t i = 0; i < chosen.size(); ++i) {
    config::Run run = *chosen[i];
    if (args->seed) {
      run.scenario.seed = *args->seed;
    }
    if (args->session.duration) {
      run.scenario.duration = *args->session.duration;
    }
    if (chosen.size() > 1) {
      notice("run " + std::to_string(i + 1) + "/" + std::to_string(chosen.size()) + ": " +
             run.label);
    }
    if (!quiet) {
      for (const std::string& line : emu::unsupported_settings(run.scenario)) {
        std::fprintf(stderr, "nicsim: not emulated yet: %s\n", line.c_str());
      }
    }
    emu::SessionOptions session = args->session;
    std::optional<live::NetnsTraffic> traffic;
    if (own_traffic) {
      live::TrafficPlan plan;
      try {
        plan = config::plan(run.scenario);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "nicsim: %s: %s\n", args->scenario.c_str(), e.what());
        return 2;
      }
      // Safety cap only: the run ends when the traffic reports done (done_fd).
      session.duration = plan.duration + Duration::s(30);
      traffic.emplace(plan, config::run_info(run, "emu"), notice);
      session.done_fd = traffic->done_fd();
    }
    session.on_ready = [&](const emu::Topology& t) {
      if (!quiet) {
        std::fprintf(stderr, "nicsim: host a %s (netns %s), host b %s (netns %s)\n",
                     t.host(0).addr_string().c_str(), t.host(0).netns.c_str(),
                     t.host(1).addr_string().c_str(), t.host(1).netns.c_str());
      }
      if (traffic) {
        traffic->start(live::NetnsHosts{t.host(0).netns_fd.get(), t.host(1).netns_fd.get(),
                                        t.host(0).addr, t.host(1).addr});
      }
    };
    const auto run_start = std::chrono::steady_clock::now();
    emu::SessionResult result;
    try {
      result = emu::run_session(run, session);
    } catch (const InvalidParams& e) {
      std::fprintf(stderr, "nicsim: %s: %s\n", args->scenario.c_str(), e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nicsim emulate: %s\n", e.what());
      return 1;
    }
    if (traffic) {
      report::Run r;
      try {
        r = traffic->finish();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "nicsim emulate: %s: traffic: %s\n", args->scenario.c_str(), e.what());
        return 1;
      }
      report::print(stdout, report::format_run_report(r));
      std::fflush(stdout);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
      results.meta.runs.push_back(report::RunMeta{r.label, wall, 0, 0});
      results.runs.push_back(std::move(r));
    }
    if (!quiet) {
      print_summary(run, result);
    } else if (!result.pcap_error.empty()) {
      std::fprintf(stderr, "nicsim emulate: pcap: %s\n", result.pcap_error.c_str());
    }
    if (result.exit_status != 0 || result.signal != 0) {
      status = result.exit_status;
      break;
    }
  }
  results.meta.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (write_json_file(results, args->json, "nicsim") != 0) {
    return 1;
  }
  if (args->csv || args->flent) {
    const int rc = write_exports(results, args->csv, args->flent, std::nullopt, "nicsim emulate");
    if (rc != 0) {
      return rc;
    }
  }
  return status;
}

}  // namespace nicsim::tools
