// The table of nicsim's subcommands: name, one-paragraph summary, synopsis and the function
// that defines its options. `nicsim --help`, the dispatch in nicsim_main.cc and the bash
// completion (completion.cc) all read it.
#include "tools/cli.h"
#include "tools/compare_command.h"
#include "tools/completion.h"
#include "tools/demo.h"
#include "tools/emulate_command.h"
#include "tools/export_command.h"
#include "tools/flent_test_command.h"
#include "tools/live_commands.h"
#include "tools/merge_command.h"
#include "tools/plot_command.h"
#include "tools/report_command.h"
#include "tools/run_command.h"
#include "tools/topology_command.h"

namespace nicsim::tools::cli {
namespace {

Action define_demo(CLI::App& app, const Invocation&) {
  app.description(
      "A short tour of the algorithm library: BQL limits, fq_codel vs FIFO, USB RX\n"
      "aggregation, printed as tables.");
  return [] { return run_demo(); };
}

}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"run", "simulate a scenario (TOML): iperf3/ping-style tables, --json/--csv/--flent results",
       "usage: nicsim run SCENARIO.toml [--json OUT.json] [--csv DIR] [--flent OUT.flent.gz]\n"
       "                  [--seed N] [--quiet] [-j N] [--repeat N] [--until-ci PCT%]\n"
       "                  [--max-repeat N] [--ci-metric NAME] [--shard K/N]",
       false, define_run},
      {"flent-test",
       "run one of flent's named tests (rrul, tcp_nup, cubic_bbr, voip, ...) over a\n"
       "scenario's network in the simulator or the emulator; --flent writes it under flent's\n"
       "test name",
       "usage: nicsim flent-test NAME SCENARIO.toml [--length D] [--delay D] [--step D]\n"
       "                         [--streams N] [--markings LIST] [--rate RATE] [--size BYTES]\n"
       "                         [--emulate] [--quiet] [--seed N] [--json OUT.json]\n"
       "                         [--csv DIR] [--flent OUT.flent.gz]\n"
       "       nicsim flent-test --list",
       false, define_flent_test},
      {"merge", "join the parts of a sharded campaign (run --shard K/N) into one results file",
       "usage: nicsim merge PART.json... -o OUT.json", false, define_merge},
      {"emulate",
       "run the scenario's link in real time between two network namespaces; a command\n"
       "(ping, iperf3, ...) runs in host a, else the scenario's own traffic (needs root)",
       "usage: nicsim emulate SCENARIO.toml [options] [-- CMD [ARGS...]]\n"
       "       nicsim emulate --cleanup",
       true, define_emulate},
      {"topology",
       "print the scenario's network: nodes, CPUs, interfaces (NIC, qdisc), links per\n"
       "direction, route tables; --dot for Graphviz",
       "usage: nicsim topology SCENARIO.toml [--dot]", false, define_topology},
      {"export", "results as CSV tables or flent's data file",
       "usage: nicsim export RESULT.json [--csv DIR] [--flent OUT.flent.gz] [--run K=V[,K=V]]",
       false, define_export},
      {"plot", "draw results with gnuplot (totals over time, latency CDF, runs compared)",
       "usage: nicsim plot RESULT.json [MORE.json ...] -o FILE.png|FILE.svg|FILE.pdf|FILE.eps\n"
       "                   [--kind totals|cdf|compare|sweep|tradeoff] [--run K=V[,K=V]]\n"
       "                   [--x KEY --y METRIC [--group KEY]]",
       false, define_plot},
      {"report",
       "results as one self-contained HTML page: run table, time series with zoom, CDFs,\n"
       "stages, queues, the trade-off of a sweep",
       "usage: nicsim report RESULT.json -o FILE.html", false, define_report},
      {"compare", "side-by-side table of runs: goodput, p50/p99 latency, grade, RPM",
       "usage: nicsim compare A.json [B.json ...]", false, define_compare},
      {"server", "serve `nicsim rrul` clients (TCP sinks/sources, UDP echo) on a real network",
       "usage: nicsim server [--listen ADDR[:PORT]] [--max-clients N] [--max-duration D]\n"
       "                     [--request-timeout D] [--cc NAME] [--quiet]",
       false, define_server},
      {"rrul",
       "flent's rrul test against a `nicsim server` on HOST: throughput, latency under load,\n"
       "per-DSCP latency; --json/--csv/--flent results",
       "usage: nicsim rrul HOST[:PORT] [--duration D] [--idle D] [--probe-interval D]\n"
       "                   [--interval D] [--cc NAME] [--json OUT.json] [--csv DIR]\n"
       "                   [--flent OUT.flent.gz] [--quiet]",
       false, define_rrul},
      {"test",
       "any of flent's named tests (rrul_var, udp_flood, voip, rtt_fair, ...) against a\n"
       "`nicsim server` on HOST; --json/--csv/--flent results",
       "usage: nicsim test NAME HOST[:PORT]... [--duration D] [--idle D] [--probe-interval D]\n"
       "                   [--interval D] [--streams N] [--markings LIST] [--rate RATE]\n"
       "                   [--size BYTES] [--cc NAME] [--json OUT.json] [--csv DIR]\n"
       "                   [--flent OUT.flent.gz] [--quiet]\n"
       "       nicsim test --list",
       false, define_test},
      {"demo",
       "a short tour of the algorithm library (BQL limits, fq_codel vs FIFO, USB RX\n"
       "aggregation)",
       "usage: nicsim demo", false, define_demo},
      {"completion",
       "print the bash completion script (installed as\n"
       "share/bash-completion/completions/nicsim)",
       "usage: nicsim completion [bash]", false, define_completion},
  };
  return kCommands;
}

}  // namespace nicsim::tools::cli
