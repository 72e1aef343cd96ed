// nicsim command-line tool (thin: parse, wire, run, write).
#include <cstdio>
#include <cstring>
#include <string_view>

#include "tools/demo.h"

namespace {

constexpr const char* kUsage =
    "usage: nicsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  demo        run a short tour of the algorithm library (BQL limits, fq_codel vs FIFO,\n"
    "              USB RX aggregation) and print the tables\n"
    "  help        show this help\n"
    "\n"
    "The simulator (nicsim run), the emulator (nicsim emulate) and the measurement tools\n"
    "arrive with the next issues; see README.md.\n";

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
  if (cmd == "demo") {
    return nicsim::tools::run_demo();
  }
  std::fprintf(stderr, "nicsim: unknown command '%s' (try 'nicsim help')\n", argv[1]);
  return 2;
}
