// report_schema_sample <kind>: prints a sample results document (JSON) for the schema check
// (validate_results.py). Valid kinds: full, minimal, legacy (a
// document written before issue 6), network (issue 10). Invalid kinds (the schema must reject
// them): bad-pair, bad-backend, bad-direction, stats-null-with-count, missing-meta, extra-key,
// bad-grade, bad-dscp, bad-fairness, series-string, phase-extra-key.

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
  } else if (kind == "network") {
    doc = to_json(samples::network_sample_results());
  } else if (kind == "bad-pair") {
    doc = to_json(samples::network_sample_results());
    ok = replace(doc, "\"s1->d1\": {", "\"s1-d1\": {");
  } else if (kind == "minimal") {
    doc = to_json(samples::minimal_sample_results());
  } else if (kind == "legacy") {
    doc = samples::legacy_sample_json();
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
  } else if (kind == "bad-grade") {
    doc = to_json(samples::full_sample_results());
    ok = replace(doc, "\"grade\": \"A+\"", "\"grade\": \"E\"");
  } else if (kind == "bad-dscp") {
    doc = to_json(samples::full_sample_results());
    ok = replace(doc, "\"dscp\": 46", "\"dscp\": 64");
  } else if (kind == "bad-fairness") {
    doc = to_json(samples::full_sample_results());
    ok = replace(doc, "\"fairness_all\": 0.75", "\"fairness_all\": 1.5");
  } else if (kind == "series-string") {
    doc = to_json(samples::full_sample_results());
    ok = replace(doc, "\"rtt_ms\": [1.0, null, null]", "\"rtt_ms\": [1.0, \"lost\", null]");
  } else if (kind == "phase-extra-key") {
    doc = to_json(samples::full_sample_results());
    ok = replace(doc, "\"name\": \"load\",", "\"name\": \"load\", \"rate\": 1,");
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
