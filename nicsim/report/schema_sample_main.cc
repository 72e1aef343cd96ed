// report_schema_sample <kind>: prints a sample results document (JSON) for the schema check
// (validate_results.py). Valid kinds: full, minimal. Invalid kinds (the schema must reject
// them): bad-backend, bad-direction, stats-null-with-count, missing-meta, extra-key.

#include <cstdio>
#include <string>
#include <string_view>

#include "nicsim/report/json.h"
#include "nicsim/report/sample_results.h"

namespace {

// Replaces the first occurrence of `from` (which must exist).
bool replace(std::string& s, std::string_view from, std::string_view to) {
  const size_t at = s.find(from);
  if (at == std::string::npos) {
    return false;
  }
  s.replace(at, from.size(), to);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nicsim::report;
  if (argc != 2) {
    std::fprintf(stderr, "usage: report_schema_sample full|minimal|<invalid kind>\n");
    return 2;
  }
  const std::string_view kind = argv[1];
  std::string doc;
  bool ok = true;
  if (kind == "full") {
    doc = to_json(samples::full_sample_results());
  } else if (kind == "minimal") {
    doc = to_json(samples::minimal_sample_results());
  } else if (kind == "bad-backend") {
    doc = to_json(samples::minimal_sample_results());
    ok = replace(doc, "\"backend\": \"sim\"", "\"backend\": \"ns3\"");
  } else if (kind == "bad-direction") {
    doc = to_json(samples::full_sample_results());
    ok = replace(doc, "\"b->a\": ", "\"b-a\": ");
  } else if (kind == "stats-null-with-count") {
    doc = to_json(samples::full_sample_results());
    ok = replace(doc, "\"min\": 0.344", "\"min\": null");
  } else if (kind == "missing-meta") {
    doc = to_json(samples::minimal_sample_results(), {.include_meta = false});
  } else if (kind == "extra-key") {
    doc = to_json(samples::minimal_sample_results());
    ok = replace(doc, "\"seed\": 0,", "\"seed\": 0,\n      \"speed\": 1,");
  } else {
    std::fprintf(stderr, "report_schema_sample: unknown kind %s\n", argv[1]);
    return 2;
  }
  if (!ok) {
    std::fprintf(stderr, "report_schema_sample: %s: pattern not found\n", argv[1]);
    return 1;
  }
  std::fwrite(doc.data(), 1, doc.size(), stdout);
  return 0;
}
