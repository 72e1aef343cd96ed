#pragma once
// The one command-line layer of `nicsim`: every subcommand defines its options on a CLI11 app
// (Debian libcli11-dev), so parsing, `--help`, usage errors and the bash completion
// (tools/completion.h) come from the same definitions.
//
// Usage errors, whether CLI11 or a command finds them, print one line "nicsim CMD: what" and
// the command's synopsis on stderr and exit 2.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/core/time.h"

namespace nicsim::tools::cli {

// A command line as the user typed it (for results' meta.command_line).
struct Invocation {
  int argc = 0;
  char** argv = nullptr;
  // The words after the first "--" (a command to run: `nicsim emulate FILE -- CMD ARGS`),
  // never parsed as options.
  std::vector<std::string> command;
};

// Runs a parsed command; returns the exit status.
using Action = std::function<int()>;

struct Command {
  const char* name;
  const char* summary;   // nicsim --help: indented lines after the name
  const char* synopsis;  // "usage: nicsim NAME ..." lines, printed on usage errors and --help
  bool takes_command;    // accepts "-- CMD ARGS" (Invocation::command)
  // Defines the options on `app` (text: app.description / app.footer) and returns the action,
  // which owns the variables the options write.
  std::function<Action(CLI::App& app, const Invocation& inv)> define;
};

// Every subcommand, in the order `nicsim --help` lists them (tools/commands.cc).
const std::vector<Command>& commands();
const Command* find_command(std::string_view name);

// A usage error found after parsing (a missing argument, options that exclude each other).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A CLI11 app for `cmd` with nicsim's help layout (synopsis, description, options, footer).
std::unique_ptr<CLI::App> make_app(const Command& cmd);

// Parses argv[2..] for `cmd` and runs it: 0 after --help, 2 on usage errors, else the action's
// status.
int run(const Command& cmd, int argc, char** argv);

// The one positional argument of a command: throws UsageError "missing WHAT" or "only one
// WHAT, got 'x' and 'y'HINT".
const std::string& the_one(const std::vector<std::string>& given, const std::string& what,
                           const std::string& hint = "");

// Typed options. Each parses its text with the project's unit parsers and reports a bad value
// as "--name: why, got 'text'" (a usage error).
CLI::Option* add_duration(CLI::App& app, const std::string& name, Duration& out,
                          const std::string& desc, Duration min = Duration::zero(),
                          bool min_exclusive = false);
CLI::Option* add_duration(CLI::App& app, const std::string& name, std::optional<Duration>& out,
                          const std::string& desc);
CLI::Option* add_seed(CLI::App& app, std::optional<uint64_t>& out, const std::string& desc);
// One of `choices`; the completion offers them (type name "a|b|c").
CLI::Option* add_choice(CLI::App& app, const std::string& name, std::string& out,
                        const std::vector<std::string>& choices, const std::string& desc);

// Type names that tell the completion to offer file or directory names.
inline constexpr const char* kFileType = "FILE";
inline constexpr const char* kDirType = "DIR";

}  // namespace nicsim::tools::cli
