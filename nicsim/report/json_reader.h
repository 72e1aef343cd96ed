#pragma once
// Reading a results file written by `nicsim run --json` or `nicsim rrul --json` back into
// report::Results, strictly: the file must be the JSON document json.h writes (same format
// and version, no unknown, missing or duplicate keys, the right types) and pass
// check_results (equal column lengths, ordered intervals, finite numbers).
//
// Errors are one line naming the file and the JSON path of the problem, e.g.
//   r.json: runs[0].goodput_bps: expected an object, got number
//   r.json: line 3, column 7: syntax error while parsing object key - ...
// so `nicsim export|plot|compare` can print them as they are and exit 2.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "nicsim/report/results.h"

namespace nicsim::report {

class ResultsFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Largest results file read (bytes). A 60 s rrul run with 1 ms probes is ~10 MB; this bound
// only keeps a wrong file (a disk image, /dev/zero) from exhausting memory.
inline constexpr size_t kMaxResultsFileBytes = size_t{1} << 30;

// Parses `text` as a results document; `name` (the file name) prefixes every error message.
// Throws ResultsFileError.
Results read_results_text(std::string_view text, const std::string& name);

// Reads and parses the file at `path`. Throws ResultsFileError ("PATH: cannot open: ...",
// "PATH: not a regular file", or a parse/validation error as above).
Results read_results_file(const std::string& path);

}  // namespace nicsim::report
