#pragma once
// Export of one run to flent's data file (`.flent.gz`), so flent (tohojo/flent, Debian's
// flent 2.1) plots, summarises and compares nicsim results unchanged:
//   flent -i run.flent.gz -p totals -o totals.png     flent -i run.flent.gz -f stats
//
// The format is flent's file format version 4 (flent/resultset.py, FILEFORMAT_VERSION = 4):
// gzipped JSON {"version": 4, "metadata": {...}, "x_values": [...], "results": {series: [...]},
// "raw_values": {series: [{"t": unix s, "val": ...}, ...]}}. nicsim writes the series flent's
// test definitions name (flent/tests/rrul.conf, rrul_be_nflows.conf) so flent's plots find
// them; docs/exports.md lists the mapping (which series, units, raw keys, what is left to
// flent to compute).

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/report/results.h"

namespace nicsim::report {

class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kFlentFileFormatVersion = 4;

// flent's name for the test the run corresponds to: "rrul" when the run's flows and probes
// are rrul's (named as in flent/tests/rrul.conf), else "rrul_be_nflows" (any number of flows
// per direction and an ICMP / UDP probe).
std::string flent_test_name(const Run& run);

// The (uncompressed) JSON text of the flent data file for results.runs[run_index].
// Throws ExportError when the run has no intervals (flent needs a time axis).
std::string flent_json(const Results& results, size_t run_index);

// gzip (RFC 1952) of `data` with zlib, header time 0 (same input -> same bytes).
std::string gzip_compress(std::string_view data);

// The file name for run i of n when `out` names the file for a single run: `out` itself when
// n == 1, else "<out without .flent.gz>-<i+1>-<label made filename-safe>.flent.gz".
std::string flent_file_name(const std::string& out, size_t run_index, size_t run_count,
                            const std::string& label);

}  // namespace nicsim::report
