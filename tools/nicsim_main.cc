// nicsim command-line tool (thin: parse, wire, run, write). The subcommands and their options
// are defined once (tools/commands.cc, tools/cli.h); the help texts and the bash completion
// are generated from those definitions.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "tools/cli.h"
#include "tools/man_page.h"

namespace {

std::string version() {
  std::string v = std::string("nicsim ") + NICSIM_VERSION;
  if (std::string_view(NICSIM_GIT_COMMIT).size() > 0) {
    v += std::string(" (git ") + NICSIM_GIT_COMMIT + ")";
  }
  return v;
}

std::string usage() {
  std::string out =
      "usage: nicsim <command> [options]\n"
      "       nicsim --version\n"
      "\n"
      "commands:\n";
  for (const nicsim::tools::cli::Command& c : nicsim::tools::cli::commands()) {
    std::string summary = c.summary;
    for (size_t at = summary.find('\n'); at != std::string::npos; at = summary.find('\n', at + 1)) {
      summary.insert(at + 1, 14, ' ');
    }
    char name[16];
    std::snprintf(name, sizeof name, "  %-11s ", c.name);
    out += name + summary + "\n";
  }
  out +=
      "  help [CMD]  this help, or CMD's (same as nicsim CMD --help); help --man: the manual\n"
      "              page nicsim(1) in roff\n"
      "\n"
      "Every command explains its options with --help. Scenario format: docs/scenarios.md.\n"
      "Results format: docs/results.md. Exports and plots: docs/exports.md.\n";
  return out;
}

// Every command prints through stdio: a failed write (a full disk, /dev/full, a closed pipe
// reader when SIGPIPE is ignored) shows in the stream's error flag or in the final flush, and
// turns a success into exit status 1 with a message.
int check_stdout(int status) {
  const bool flush_failed = std::fflush(stdout) != 0;
  const int err = errno;
  if (flush_failed || std::ferror(stdout)) {
    std::fprintf(stderr, "nicsim: cannot write to standard output%s%s\n", flush_failed ? ": " : "",
                 flush_failed ? std::strerror(err) : "");
    return status == 0 ? 1 : status;
  }
  return status;
}

int dispatch(int argc, char** argv) {
  namespace cli = nicsim::tools::cli;
  if (argc < 2) {
    std::fputs(usage().c_str(), stderr);
    return 2;
  }
  const std::string_view first = argv[1];
  if (first == "--version" || first == "-V" || first == "version") {
    std::printf("%s\n", version().c_str());
    return 0;
  }
  if (first == "help" || first == "--help" || first == "-h") {
    if (argc == 3 && std::string_view(argv[2]) == "--man") {  // the manual page nicsim(1)
      std::fputs(cli::man_page(version()).c_str(), stdout);
      return 0;
    }
    if (argc > 2) {
      if (const cli::Command* c = cli::find_command(argv[2])) {
        char help[] = "--help";
        char* args[] = {argv[0], argv[2], help};
        return cli::run(*c, 3, args);
      }
      std::fprintf(stderr, "nicsim: unknown command '%s' (try 'nicsim help')\n", argv[2]);
      return 2;
    }
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  if (const cli::Command* c = cli::find_command(first)) {
    return cli::run(*c, argc, argv);
  }
  std::fprintf(stderr, "nicsim: unknown command '%s' (try 'nicsim help')\n", argv[1]);
  return 2;
}

}  // namespace

int main(int argc, char** argv) { return check_stdout(dispatch(argc, argv)); }
