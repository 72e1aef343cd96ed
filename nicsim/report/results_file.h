#pragma once
// Reading a results file for a command (compare, plot, export) that needs nicsim's results
// JSON (docs/results.md): like read_results_file, but a file that is something else - flent's
// .flent.gz, gzip data, another JSON document, binary data - is named for what it is, with
// what the command reads, instead of a JSON parser's message about byte 0.

#include <string>

#include "nicsim/report/json_reader.h"

namespace nicsim::report {

// What the file looks like when it is plainly not a results document ("a gzip file (flent's
// .flent.gz data file?)", "not JSON (starts with byte 0x7f)"), or "" when it may be one.
std::string foreign_file_kind(const std::string& path);

// read_results_file, with foreign files explained: "PATH: a gzip file (flent's .flent.gz data
// file?), not a nicsim results file (the JSON of nicsim run/emulate/rrul --json)". Throws
// ResultsFileError.
Results load_results_file(const std::string& path);

}  // namespace nicsim::report
