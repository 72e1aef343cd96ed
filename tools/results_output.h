#pragma once
// What every measuring command (run, emulate, rrul) does with its results: the invocation's
// wall-clock facts in `meta`, and the output files (--json, --csv, --flent: one option group,
// checked before the run starts so a bad path never costs a whole run).

#include <cstdio>
#include <optional>
#include <string>

#include "nicsim/report/results.h"
#include "tools/cli.h"

namespace nicsim::tools {

// Results with meta's version, git commit, start time, host name and command line filled;
// the caller adds runs and timings.
report::Results new_results(int argc, char** argv);

// The shared output-options group of run, emulate and rrul.
struct OutputOptions {
  std::optional<std::string> json;   // "-": standard output
  std::optional<std::string> csv;    // a directory
  std::optional<std::string> flent;  // a file name (one file per run when several)
  bool any() const { return json || csv || flent; }
  bool json_to_stdout() const { return json && *json == "-"; }
};

// Adds --json, --csv and --flent to `app` (group "output").
void add_output_options(CLI::App& app, OutputOptions& out);

// Why an output cannot be written ("--json /x/r.json: directory /x: No such file or
// directory"), or "" when each can. Checked before a run; creates nothing.
std::string output_problem(const OutputOptions& out);

// Where the human-readable tables go: standard output, or standard error when the JSON goes
// to standard output (so `--json - | jq` sees only JSON).
std::FILE* text_stream(const OutputOptions& out);

// Writes the JSON (to standard output for "-") and the exports. Returns 0, or 1 after a
// one-line error naming the file and the reason (errno text), or 2 when the results cannot be
// exported (write_exports).
int write_outputs(const report::Results& results, const OutputOptions& out, const char* who);

// Writes `data` to `path`; returns "" or why not (errno text).
std::string write_file(const std::string& path, const std::string& data);

}  // namespace nicsim::tools
