// nicsim command-line tool (thin: parse, wire, run, write).
#include <cstdio>
#include <cstring>
#include <string_view>

#include "tools/compare_command.h"
#include "tools/demo.h"
#include "tools/emulate_command.h"
#include "tools/export_command.h"
#include "tools/live_commands.h"
#include "tools/plot_command.h"
#include "tools/run_command.h"

namespace {

constexpr const char* kUsage =
    "usage: nicsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE    simulate a scenario (TOML): iperf3/ping-style tables, --json results\n"
    "              (nicsim run --help for options)\n"
    "  emulate FILE [-- CMD]\n"
    "              run the scenario's link in real time between two network namespaces;\n"
    "              CMD (ping, iperf3, ...) runs in host a (nicsim emulate --help; needs root)\n"
    "  export RESULT.json --csv DIR | --flent OUT.flent.gz\n"
    "              results as CSV tables or flent's data file (nicsim export --help)\n"
    "  plot RESULT.json -o FILE.png|svg [--kind totals|cdf|compare]\n"
    "              draw results with gnuplot (nicsim plot --help)\n"
    "  compare A.json B.json ...\n"
    "              side-by-side table of runs: goodput, p50/p99 latency, grade, RPM\n"
    "  server      serve `nicsim rrul` clients (TCP sinks/sources, UDP echo) on a real network\n"
    "  rrul HOST   flent's rrul test against a `nicsim server` on HOST: throughput, latency\n"
    "              under load, per-DSCP latency (nicsim rrul --help)\n"
    "  demo        a short tour of the algorithm library (BQL limits, fq_codel vs FIFO,\n"
    "              USB RX aggregation)\n"
    "  help        show this help\n"
    "\n"
    "Scenario format: docs/scenarios.md. Results format: docs/results.md. Exports and\n"
    "plots: docs/exports.md.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string_view cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "run") {
    return nicsim::tools::run_command(argc, argv);
  }
  if (cmd == "emulate") {
    return nicsim::tools::emulate_command(argc, argv);
  }
  if (cmd == "export") {
    return nicsim::tools::export_command(argc, argv);
  }
  if (cmd == "plot") {
    return nicsim::tools::plot_command(argc, argv);
  }
  if (cmd == "compare") {
    return nicsim::tools::compare_command(argc, argv);
  }
  if (cmd == "server") {
    return nicsim::tools::server_command(argc, argv);
  }
  if (cmd == "rrul") {
    return nicsim::tools::rrul_command(argc, argv);
  }
  if (cmd == "demo") {
    return nicsim::tools::run_demo();
  }
  std::fprintf(stderr, "nicsim: unknown command '%s' (try 'nicsim help')\n", argv[1]);
  return 2;
}
