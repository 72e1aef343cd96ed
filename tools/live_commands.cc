// `nicsim server` and `nicsim rrul HOST`: thin — parse, call nicsim/live, print, write.
// Exit status: 0; 2 on usage errors (one line); 1 when the measurement cannot run.
#include "tools/live_commands.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "nicsim/config/units.h"
#include "nicsim/live/protocol.h"
#include "nicsim/live/server.h"
#include "nicsim/live/socket_util.h"
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

constexpr const char* kServerUsage =
    "usage: nicsim server [--listen ADDR[:PORT]] [--max-clients N] [--max-duration D]\n"
    "                     [--request-timeout D] [--cc NAME] [--quiet]\n"
    "\n"
    "The peer of `nicsim rrul HOST`: serves TCP sinks, TCP sources (with the congestion\n"
    "control and DSCP each client asks for) and UDP echo reflectors to many clients at once,\n"
    "until SIGINT or SIGTERM. Control protocol: docs/live.md.\n"
    "\n"
    "  --listen ADDR[:PORT]  address to listen on (default 0.0.0.0:5270)\n"
    "  --max-clients N       connections served at once (default 64); one more is refused\n"
    "  --max-duration D      longest flow served (default 300s); longer requests are cut\n"
    "  --request-timeout D   a connection must send its request within D (default 5s)\n"
    "  --cc NAME             congestion control of sources whose client asks for none\n"
    "  --quiet               log only refusals and errors\n"
    "\n"
    "Each accepted request and each refusal (malformed, oversize, too slow, busy) is logged\n"
    "on stderr with the peer's address and the reason.\n";

constexpr const char* kRrulUsage =
    "usage: nicsim rrul HOST[:PORT] [--duration D] [--idle D] [--probe-interval D]\n"
    "                   [--interval D] [--cc NAME] [--json OUT] [--quiet]\n"
    "\n"
    "flent's rrul test against a `nicsim server` on HOST (port 5270 by default): idle, then 4\n"
    "TCP uploads + 4 downloads marked BE, BK (CS1), CS5 and EF with three UDP latency probes\n"
    "(EF, BK, BE) and an ICMP ping, then idle again. Prints the iperf3/ping tables of\n"
    "`nicsim run` and writes the same JSON (backend \"live\").\n"
    "\n"
    "  --duration D        load phase (default 60s)\n"
    "  --idle D            idle phase before and after the load (default 5s)\n"
    "  --probe-interval D  latency probe interval (default 200ms, down to 1ms)\n"
    "  --interval D        throughput bins (default 200ms, down to 10ms)\n"
    "  --cc NAME           congestion control of all eight flows (default: each sender's)\n"
    "  --json OUT          also write the run as a results document (docs/results.md)\n"
    "  --quiet             no notices on stderr\n"
    "\n"
    "Latency: RTT only. One-way delays need the two machines' clocks synchronised, which\n"
    "nicsim cannot check, so they are not reported (under `nicsim emulate` they are, exactly).\n"
    "ICMP needs root (raw socket) or net.ipv4.ping_group_range; without either the ping\n"
    "probe is left out with a notice. SIGINT stops early and reports what was measured.\n";

// Blocks SIGINT/SIGTERM and returns a signalfd that becomes readable when one arrives.
live::Fd stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return live::Fd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

bool parse_duration_arg(const char* name, const std::string& v, Duration& out, std::string& error) {
  const auto d = config::parse_duration(v);
  if (!d) {
    error = std::string(name) + ": " + d.error();
    return false;
  }
  if (d.value() <= Duration::zero()) {
    error = std::string(name) + ": must be positive, got '" + v + "'";
    return false;
  }
  out = d.value();
  return true;
}

}  // namespace

int server_command(int argc, char** argv) {
  live::ServerParams p;
  p.listen.sin_family = AF_INET;
  p.listen.sin_port = htons(live::kDefaultPort);
  bool quiet = false;
  std::string error;
  for (int i = 2; i < argc && error.empty(); ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) {
        error = std::string(arg) + " needs a value";
        return std::nullopt;
      }
      return std::string(argv[++i]);
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kServerUsage, stdout);
      return 0;
    } else if (arg == "--listen") {
      if (auto v = value()) {
        if (std::string e = live::parse_endpoint(*v, live::kDefaultPort, p.listen); !e.empty()) {
          error = "--listen: " + e;
        }
      }
    } else if (arg == "--max-clients") {
      if (auto v = value()) {
        char* end = nullptr;
        const long n = std::strtol(v->c_str(), &end, 10);
        if (v->empty() || *end != '\0' || n < 1 || n > 10000) {
          error = "--max-clients: expected 1..10000, got '" + *v + "'";
        }
        p.max_clients = static_cast<int>(n);
      }
    } else if (arg == "--max-duration") {
      if (auto v = value()) parse_duration_arg("--max-duration", *v, p.max_duration, error);
    } else if (arg == "--request-timeout") {
      if (auto v = value()) parse_duration_arg("--request-timeout", *v, p.request_timeout, error);
    } else if (arg == "--cc") {
      if (auto v = value()) {
        if (!live::valid_cc_name(*v)) {
          error = "--cc: '" + *v + "' is not a congestion control name";
        }
        p.default_cc = *v;
      }
    } else if (arg == "--quiet") {
      quiet = true;
    } else {
      error = "unknown argument '" + std::string(arg) + "'";
    }
  }
  if (!error.empty()) {
    std::fprintf(stderr, "nicsim server: %s\n%s", error.c_str(), kServerUsage);
    return 2;
  }
  live::Fd stop = stop_signals();
  try {
    live::Server server(p, [quiet](const std::string& line) {
      const bool refusal = line.find(": rejected: ") != std::string::npos ||
                           line.find("no complete request") != std::string::npos;
      if (!quiet || refusal) {
        std::fprintf(stderr, "nicsim server: %s\n", line.c_str());
      }
    });
    sockaddr_in bound = p.listen;
    bound.sin_port = htons(server.port());
    std::fprintf(stderr, "nicsim server: listening on %s (protocol %d, at most %d clients)\n",
                 live::to_string(bound).c_str(), live::kProtocolVersion, p.max_clients);
    server.run(stop.get());
    const live::ServerStats s = server.stats();
    std::fprintf(
        stderr,
        "nicsim server: stopped: %llu connections, %llu requests served, %llu refused, "
        "%llu timed out\n",
        static_cast<unsigned long long>(s.accepted), static_cast<unsigned long long>(s.requests),
        static_cast<unsigned long long>(s.rejected), static_cast<unsigned long long>(s.timeouts));
  } catch (const live::LiveError& e) {
    std::fprintf(stderr, "nicsim server: %s\n", e.what());
    return 1;
  }
  return 0;
}

int rrul_command(int argc, char** argv) {
  live::RrulOptions o;
  std::string host;
  std::optional<std::string> json;
  bool quiet = false;
  std::string error;
  for (int i = 2; i < argc && error.empty(); ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) {
        error = std::string(arg) + " needs a value";
        return std::nullopt;
      }
      return std::string(argv[++i]);
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kRrulUsage, stdout);
      return 0;
    } else if (arg == "--duration") {
      if (auto v = value()) parse_duration_arg("--duration", *v, o.load, error);
    } else if (arg == "--idle") {
      if (auto v = value()) {
        const auto d = config::parse_duration(*v);
        if (!d || d.value() < Duration::zero()) {
          error = "--idle: expected a duration >= 0, got '" + *v + "'";
        } else {
          o.idle = d.value();
        }
      }
    } else if (arg == "--probe-interval") {
      if (auto v = value()) {
        if (parse_duration_arg("--probe-interval", *v, o.probe_interval, error) &&
            o.probe_interval < Duration::ms(1)) {
          error = "--probe-interval: at least 1ms, got '" + *v + "'";
        }
      }
    } else if (arg == "--interval") {
      if (auto v = value()) {
        if (parse_duration_arg("--interval", *v, o.interval, error) &&
            o.interval < Duration::ms(10)) {
          error = "--interval: at least 10ms, got '" + *v + "'";
        }
      }
    } else if (arg == "--cc") {
      if (auto v = value()) {
        if (!live::valid_cc_name(*v)) {
          error = "--cc: '" + *v + "' is not a congestion control name";
        }
        o.cc = *v;
      }
    } else if (arg == "--json") {
      if (auto v = value()) json = *v;
    } else if (arg == "--quiet") {
      quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      error = "unknown option '" + std::string(arg) + "'";
    } else if (host.empty()) {
      host = std::string(arg);
    } else {
      error = "only one HOST, got '" + host + "' and '" + std::string(arg) + "'";
    }
  }
  if (error.empty() && host.empty()) {
    error = "missing HOST (the machine running `nicsim server`)";
  }
  live::ClientOptions opt;
  if (error.empty()) {
    if (std::string e = live::parse_endpoint(host, live::kDefaultPort, opt.server); !e.empty()) {
      error = e;
    }
  }
  if (!error.empty()) {
    std::fprintf(stderr, "nicsim rrul: %s\n%s", error.c_str(), kRrulUsage);
    return 2;
  }
  auto notice = [quiet](const std::string& line) {
    if (!quiet) {
      std::fprintf(stderr, "nicsim rrul: %s\n", line.c_str());
    }
  };
  live::TrafficPlan plan = live::rrul_plan(o);
  if (!live::icmp_available()) {
    notice("no ICMP socket (needs root or net.ipv4.ping_group_range): the ping probe is left out");
    std::erase_if(plan.probes, [](const live::ProbePlan& p) { return p.icmp; });
  }
  live::Fd stop = stop_signals();
  opt.stop_fd = stop.get();
  opt.log = notice;

  report::Results results = new_results(argc, argv);
  notice("rrul against " + live::to_string(opt.server) + ": " +
         std::to_string(o.idle.count_ns() / 1'000'000) + " ms idle, " +
         std::to_string(o.load.count_ns() / 1'000'000) + " ms load, " +
         std::to_string(o.idle.count_ns() / 1'000'000) + " ms idle");
  notice("latency is round-trip only: one-way delays would need the two machines' clocks "
         "synchronised");
  const auto wall_start = std::chrono::steady_clock::now();
  report::Run run;
  try {
    run = live::run_traffic(plan, report::RunInfo{"rrul " + host, {}, "live", 0, "", {}}, opt);
  } catch (const live::LiveError& e) {
    std::fprintf(stderr, "nicsim rrul: %s\n", e.what());
    return 1;
  }
  signalfd_siginfo si{};
  const bool interrupted = ::read(stop.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si);
  report::print(stdout, report::format_run_report(run));
  std::fflush(stdout);
  results.meta.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  results.meta.runs.push_back(report::RunMeta{run.label, results.meta.wall_s, 0, 0});
  results.runs.push_back(std::move(run));
  if (write_json_file(results, json, "nicsim rrul") != 0) {
    return 1;
  }
  return interrupted ? 128 + static_cast<int>(si.ssi_signo) : 0;
}

}  // namespace nicsim::tools
