#include "nicsim/report/results_file.h"

#include <cstdio>
#include <fstream>

namespace nicsim::report {

std::string foreign_file_kind(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char head[2] = {0, 0};
  f.read(reinterpret_cast<char*>(head), 2);
  if (f.gcount() == 0) {
    return "";  // unreadable or empty: read_results_file says which
  }
  if (f.gcount() == 2 && head[0] == 0x1f && head[1] == 0x8b) {  // RFC 1952 section 2.3.1
    return "a gzip file (flent's .flent.gz data file?)";
  }
  // JSON text (RFC 8259) starts with optional whitespace, then a value; ours is an object.
  const unsigned char c = head[0];
  if (c == '{' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
    return "";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "not JSON (starts with byte 0x%02x)", c);
  return buf;
}

Results load_results_file(const std::string& path) {
  if (const std::string kind = foreign_file_kind(path); !kind.empty()) {
    throw ResultsFileError(path + ": " + kind +
                           ", not a nicsim results file (the JSON that nicsim run, emulate or "
                           "rrul write with --json; docs/results.md)");
  }
  return read_results_file(path);
}

}  // namespace nicsim::report
