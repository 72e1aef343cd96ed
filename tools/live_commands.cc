// `nicsim server`, `nicsim rrul HOST` and `nicsim test NAME HOST`: thin — parse, call nicsim/live,
// print, write. Exit status: 0; 2 on usage errors (one line); 1 when the measurement cannot run.
#include "tools/live_commands.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/config/flent_tests.h"
#include "nicsim/config/traffic_plan.h"
#include "nicsim/config/units.h"
#include "nicsim/live/auth.h"
#include "nicsim/live/protocol.h"
#include "nicsim/live/server.h"
#include "nicsim/live/socket_util.h"
#include "nicsim/live/traffic.h"
#include "nicsim/report/json.h"
#include "nicsim/report/text.h"
#include "tools/flent_test_command.h"
#include "tools/results_output.h"

namespace nicsim::tools {
namespace {

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

CLI::Option* add_cc_option(CLI::App& app, std::string& out, const std::string& desc) {
  return app
      .add_option_function<std::string>(
          "--cc",
          [&out](const std::string& v) {
            if (!live::valid_cc_name(v)) {
              throw CLI::ValidationError("--cc", "'" + v + "' is not a congestion control name");
            }
            out = v;
          },
          desc)
      ->type_name("NAME");
}

int serve(const std::string& listen, live::ServerParams p, bool quiet);
int rrul(const std::string& host, const live::RrulOptions& o, const std::string& secret,
         const OutputOptions& out, bool quiet, const cli::Invocation& inv);

// The flent test `test` (rrul or a preset of config/flent_tests.h) against the nicsim servers
// `hosts` (rtt_fair: each of them; else exactly one).
struct LiveTest {
  std::string test;
  std::vector<std::string> hosts;
  live::RrulOptions o;
  config::FlentTestPlan params;  // streams, markings, rate, size
};

int measure(const std::string& command, const LiveTest& t, const std::string& secret,
            const OutputOptions& out, bool quiet, const cli::Invocation& inv);

// A whole number 1..10000 (connection limits).
void add_count_option(CLI::App& app, const std::string& name, int& target,
                      const std::string& help) {
  app.add_option_function<std::string>(
         name,
         [&target, name](const std::string& v) {
           char* end = nullptr;
           const long n = std::strtol(v.c_str(), &end, 10);
           if (v.empty() || *end != '\0' || n < 1 || n > 10000) {
             throw CLI::ValidationError(name, "expected 1..10000, got '" + v + "'");
           }
           target = static_cast<int>(n);
         },
         help)
      ->type_name("N");
}

// --secret-file FILE: read when parsed, so a bad file is a usage error before anything runs.
void add_secret_option(CLI::App& app, std::string& target, const std::string& help) {
  app.add_option_function<std::string>(
         "--secret-file",
         [&target](const std::string& path) {
           try {
             target = live::load_secret(path);
           } catch (const live::LiveError& e) {
             throw CLI::ValidationError("--secret-file", e.what());
           }
         },
         help)
      ->type_name("FILE");
}

// The options `nicsim rrul` and `nicsim test` share: timing (flent's -l, --delay, -s), the
// throughput bins, the flows' congestion control, the server's secret, outputs, --quiet.
void add_live_test_options(CLI::App& app, live::RrulOptions& o, std::string& secret,
                           OutputOptions& out, bool& quiet) {
  cli::add_duration(app, "--duration", o.load, "load phase (flent -l; default 60s)",
                    Duration::zero(), true);
  cli::add_duration(app, "--idle", o.idle,
                    "idle phase before and after the load (flent --delay; default 5s)");
  cli::add_duration(app, "--probe-interval", o.probe_interval,
                    "latency probe interval (flent -s; default 200ms, down to 1ms)",
                    Duration::ms(1));
  cli::add_duration(app, "--interval", o.interval, "throughput bins (default 200ms, down to 10ms)",
                    Duration::ms(10));
  add_cc_option(app, o.cc, "congestion control of the flows (default: each sender's)");
  add_secret_option(app, secret, "the server's shared secret (its --secret-file)");
  add_output_options(app, out);
  app.add_flag("--quiet", quiet, "no notices on stderr");
}

}  // namespace

cli::Action define_server(CLI::App& app, const cli::Invocation&) {
  struct Args {
    std::string listen = "0.0.0.0:" + std::to_string(live::kDefaultPort);
    live::ServerParams p;
    bool quiet = false;
  };
  auto a = std::make_shared<Args>();
  app.description(
      "The peer of `nicsim rrul HOST`: serves TCP sinks, TCP sources (with the congestion\n"
      "control and DSCP each client asks for) and UDP echo reflectors to many clients at once,\n"
      "until SIGINT or SIGTERM. Control protocol: docs/live.md.");
  app.footer(
      "Each accepted request and each refusal (malformed, oversize, too slow, busy, wrong\n"
      "secret) is logged on stderr with the peer's address and the reason, at most a burst\n"
      "of 20 lines and 5 per second; what is held back is summarised every 10 s.\n"
      "It listens on every interface by default: on a machine others can reach, give it\n"
      "--secret-file, or --listen on one address behind a firewall (docs/security.md).");
  app.add_option("--listen", a->listen, "address to listen on (default 0.0.0.0:5270)")
      ->type_name("ADDR[:PORT]");
  add_count_option(app, "--max-clients", a->p.max_clients,
                   "connections served at once (default 64); one more is refused");
  add_count_option(app, "--max-per-peer", a->p.max_per_peer,
                   "connections from one IP address at once (default 16; rrul uses 11)");
  add_secret_option(app, a->p.secret,
                    "serve only clients that prove this shared secret (HMAC-SHA256 over a\n"
                    "challenge); FILE holds one line and must be readable by its owner only");
  cli::add_duration(app, "--max-duration", a->p.max_duration,
                    "longest flow served (default 300s); longer requests are cut", Duration::zero(),
                    true);
  cli::add_duration(app, "--request-timeout", a->p.request_timeout,
                    "a connection must send its request within D (default 5s)", Duration::zero(),
                    true);
  add_cc_option(app, a->p.default_cc, "congestion control of sources whose client asks for none");
  app.add_flag("--quiet", a->quiet, "log only refusals and errors");
  return [a] { return serve(a->listen, a->p, a->quiet); };
}

namespace {

int serve(const std::string& listen, live::ServerParams p, bool quiet) {
  p.listen.sin_family = AF_INET;
  if (std::string e = live::parse_endpoint(listen, live::kDefaultPort, p.listen); !e.empty()) {
    throw cli::UsageError("--listen: " + e);
  }
  live::Fd stop = stop_signals();
  try {
    live::Server server(p, [quiet](const std::string& line) {
      const bool refusal = line.find(": rejected: ") != std::string::npos ||
                           line.find("no complete request") != std::string::npos ||
                           line.find(" held back in the last ") != std::string::npos ||
                           line.rfind("accept: ", 0) == 0;
      if (!quiet || refusal) {
        std::fprintf(stderr, "nicsim server: %s\n", line.c_str());
      }
    });
    sockaddr_in bound = p.listen;
    bound.sin_port = htons(server.port());
    std::fprintf(stderr,
                 "nicsim server: listening on %s (protocol %d, at most %d clients, %d per "
                 "address, %s)\n",
                 live::to_string(bound).c_str(), live::kProtocolVersion, p.max_clients,
                 p.max_per_peer, p.secret.empty() ? "no authentication" : "shared secret");
    server.run(stop.get());
    const live::ServerStats s = server.stats();
    std::fprintf(
        stderr,
        "nicsim server: stopped: %llu connections, %llu requests served, %llu refused "
        "(%llu failed authentication, %llu over the per-peer limit), %llu timed out, "
        "%llu accept errors, %llu log lines held back, %llu probes echoed (%llu datagrams "
        "ignored)\n",
        static_cast<unsigned long long>(s.accepted), static_cast<unsigned long long>(s.requests),
        static_cast<unsigned long long>(s.rejected),
        static_cast<unsigned long long>(s.auth_failures),
        static_cast<unsigned long long>(s.per_peer_refused),
        static_cast<unsigned long long>(s.timeouts),
        static_cast<unsigned long long>(s.accept_errors),
        static_cast<unsigned long long>(s.log_held_back), static_cast<unsigned long long>(s.echoed),
        static_cast<unsigned long long>(s.ignored));
  } catch (const live::LiveError& e) {
    std::fprintf(stderr, "nicsim server: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

cli::Action define_rrul(CLI::App& app, const cli::Invocation& inv) {
  struct Args {
    std::vector<std::string> host;  // exactly one
    live::RrulOptions o;
    std::string secret;
    OutputOptions out;
    bool quiet = false;
  };
  auto a = std::make_shared<Args>();
  app.description(
      "flent's rrul test against a `nicsim server` on HOST (port 5270 by default): idle, then 4\n"
      "TCP uploads + 4 downloads marked BE, BK (CS1), CS5 and EF with three UDP latency probes\n"
      "(EF, BK, BE) and an ICMP ping, then idle again. Prints the iperf3/ping tables of\n"
      "`nicsim run` and writes the same JSON (backend \"live\") and exports.");
  app.footer(
      "Latency: RTT only. One-way delays need the two machines' clocks synchronised, which\n"
      "nicsim cannot check, so they are not reported (under `nicsim emulate` they are, exactly).\n"
      "ICMP needs root (raw socket) or net.ipv4.ping_group_range; without either the ping\n"
      "probe is left out with a notice. SIGINT stops early and reports what was measured.");
  app.add_option("HOST", a->host, "the machine running `nicsim server`")->type_name("HOST[:PORT]");
  add_live_test_options(app, a->o, a->secret, a->out, a->quiet);
  return [a, inv] {
    cli::the_one(a->host, "HOST (the machine running `nicsim server`)");
    return rrul(a->host[0], a->o, a->secret, a->out, a->quiet, inv);
  };
}

cli::Action define_test(CLI::App& app, const cli::Invocation& inv) {
  struct Args {
    std::string name;
    std::vector<std::string> hosts;
    bool list = false;
    live::RrulOptions o;
    FlentParams params;
    std::string secret;
    OutputOptions out;
    bool quiet = false;
  };
  auto a = std::make_shared<Args>();
  app.description(
      "One of flent's named tests (`nicsim test --list`; the presets of `nicsim flent-test`)\n"
      "against a `nicsim server` on HOST (port 5270 by default), with flent's series names:\n"
      "--flent writes a .flent.gz flent's own plots open. Timing as `nicsim rrul`: --idle,\n"
      "--duration (the load), --idle (voip and bursts: --duration only). rtt_fair takes 2 to 4\n"
      "HOSTs (flent's HOSTS), each running `nicsim server`; the others exactly one.");
  app.footer(
      "Latency: RTT only (see `nicsim rrul --help`). udp_flood, voip and bursts need the live\n"
      "engine's UDP floods; rtt_fair against several hosts needs root (setns). SIGINT stops\n"
      "early and reports what was measured. docs/live.md.");
  app.add_option("NAME", a->name, "the test (see --list)")->type_name("NAME");
  app.add_option("HOST", a->hosts, "the machine(s) running `nicsim server`")
      ->type_name("HOST[:PORT]");
  app.add_flag("--list", a->list, "list the tests and exit");
  add_flent_params(app, a->params);
  add_live_test_options(app, a->o, a->secret, a->out, a->quiet);
  return [a, inv] {
    if (a->list) {
      return print_flent_tests();
    }
    if (a->name.empty()) {
      throw cli::UsageError("expected NAME HOST (or --list)");
    }
    const config::FlentTestInfo* info = &flent_test_or_usage(a->name);
    if (info->servers) {
      if (a->hosts.size() < 2 || a->hosts.size() > config::kRttFairMaxServers) {
        throw cli::UsageError(a->name + " needs 2 to 4 HOSTs (flent's HOSTS), got " +
                              std::to_string(a->hosts.size()));
      }
    } else {
      cli::the_one(a->hosts, "HOST (the machine running `nicsim server`)");
    }
    LiveTest t{a->name, a->hosts, a->o, {}};
    t.params.streams = info->streams ? a->params.streams : 1;
    t.params.markings = markings_or_usage(a->params.markings);
    if (a->params.rate) {
      t.params.udp_rate = *a->params.rate;
      t.params.burst_rate = *a->params.rate;
    }
    t.params.udp_size = a->params.size.value_or(t.params.udp_size);
    return measure("test", t, a->secret, a->out, a->quiet, inv);
  };
}

namespace {

int rrul(const std::string& host, const live::RrulOptions& o, const std::string& secret,
         const OutputOptions& out, bool quiet, const cli::Invocation& inv) {
  return measure("rrul", LiveTest{"rrul", {host}, o, {}}, secret, out, quiet, inv);
}

// The test's traffic plan: host 0 is this machine, hosts 1.. the servers.
live::TrafficPlan live_plan(const LiveTest& t) {
  if (t.test == "rrul") {
    return live::rrul_plan(t.o);
  }
  live::TrafficPlan plan;
  const Duration end = config::flent_total_length(t.test, t.o.load, t.o.idle);
  plan.duration = end;
  plan.interval = t.o.interval;
  plan.hosts.push_back("local");
  for (const std::string& h : t.hosts) {
    plan.hosts.push_back(h);
  }
  plan.flent_test = t.test;
  config::FlentTestPlan f = t.params;
  f.test = t.test;
  f.client = 0;
  f.server = 1;
  f.start = Duration::zero();
  f.load_start = t.o.idle;
  f.load_end = t.o.idle + t.o.load;
  f.end = end;
  f.probe_interval = t.o.probe_interval;
  f.client_cc = t.o.cc;
  f.server_cc = t.o.cc;
  for (size_t i = 1; i <= t.hosts.size(); ++i) {
    f.servers.push_back(i);
  }
  config::add_flent_test(plan, f);
  return plan;
}

int measure(const std::string& command, const LiveTest& t, const std::string& secret,
            const OutputOptions& out, bool quiet, const cli::Invocation& inv) {
  const std::string prefix = "nicsim " + command + ": ";
  live::ClientOptions opt;
  opt.secret = secret;
  std::vector<sockaddr_in> servers;
  for (const std::string& host : t.hosts) {
    sockaddr_in a{};
    if (std::string e = live::parse_endpoint(host, live::kDefaultPort, a); !e.empty()) {
      throw cli::UsageError(e);
    }
    servers.push_back(a);
  }
  opt.server = servers.at(0);
  if (const std::string problem = output_problem(out); !problem.empty()) {
    std::fprintf(stderr, "%s%s\n", prefix.c_str(), problem.c_str());
    return 2;
  }
  auto notice = [quiet, prefix](const std::string& line) {
    if (!quiet) {
      std::fprintf(stderr, "%s%s\n", prefix.c_str(), line.c_str());
    }
  };
  live::TrafficPlan plan;
  try {
    plan = live_plan(t);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
  // Several servers (rtt_fair): the engine's host list, every host in this namespace.
  live::Fd own_ns;
  if (servers.size() > 1) {
    own_ns = live::Fd(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    opt.hosts.push_back({own_ns.get(), in_addr{}, 0});
    for (const sockaddr_in& a : servers) {
      opt.hosts.push_back({own_ns.get(), a.sin_addr, ntohs(a.sin_port)});
    }
  }
  if (!live::icmp_available()) {
    notice(
        "no ICMP socket (needs root or net.ipv4.ping_group_range): the ping probes are left "
        "out");
    std::erase_if(plan.probes, [](const live::ProbePlan& p) { return p.icmp; });
  }
  live::Fd stop = stop_signals();
  opt.stop_fd = stop.get();
  opt.log = notice;

  report::Results results = new_results(inv.argc, inv.argv);
  std::string against;
  for (const sockaddr_in& a : servers) {
    against += (against.empty() ? "" : ", ") + live::to_string(a);
  }
  notice(t.test + " against " + against + ": " +
         std::to_string(plan.duration.count_ns() / 1'000'000) + " ms in all");
  notice(
      "latency is round-trip only: one-way delays would need the two machines' clocks "
      "synchronised");
  const auto wall_start = std::chrono::steady_clock::now();
  report::Run run;
  try {
    std::string label = t.test;
    for (const std::string& h : t.hosts) {
      label += " " + h;
    }
    run = live::run_traffic(plan, report::RunInfo{label, {}, "live", 0, "", {}}, opt);
  } catch (const live::LiveError& e) {
    std::fprintf(stderr, "%s%s\n", prefix.c_str(), e.what());
    return 1;
  }
  signalfd_siginfo si{};
  const bool interrupted = ::read(stop.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si);
  report::print(text_stream(out), report::format_run_report(run));
  std::fflush(text_stream(out));
  results.meta.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  results.meta.runs.push_back(report::RunMeta{run.label, results.meta.wall_s, 0, 0});
  results.runs.push_back(std::move(run));
  if (const int rc = write_outputs(results, out, ("nicsim " + command).c_str()); rc != 0) {
    return rc;
  }
  return interrupted ? 128 + static_cast<int>(si.ssi_signo) : 0;
}

}  // namespace

}  // namespace nicsim::tools
