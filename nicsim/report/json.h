#pragma once
// Results <-> JSON (docs/results.md documents every field; docs/results.schema.json checks it).
//
// Deterministic output: object keys are written in a fixed order (struct order; maps sorted by
// key; run params in [vary] order), numbers by nlohmann-json's shortest round-trip algorithm
// (Grisu2, no locale, no printf), -0.0 is written as 0.0, and the layout is fixed: two-space
// indentation, arrays of numbers or strings on one line. So the same Results always give the
// same bytes, and two runs with the same seed give byte-identical documents outside "meta".
// A non-finite number (NaN, infinity) is a bug in the producer: to_json throws JsonError naming
// the field instead of writing null.
//
// Reading (results_from_json) is strict: wrong types, missing keys, unknown keys and a format
// or version other than this writer's throw JsonError with the JSON path of the problem.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/report/results.h"

namespace nicsim::report {

inline constexpr std::string_view kResultsFormat = "nicsim-results";
inline constexpr int kResultsVersion = 1;

class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct JsonOptions {
  // false: leave out the "meta" object (the deterministic part only, e.g. for result hashes).
  bool include_meta = true;
};

// The whole document, ending with a newline.
std::string to_json(const Results& results, const JsonOptions& options = {});
Results results_from_json(std::string_view text);

// The same document in parts, for writers that stream runs as they finish (a campaign):
// json_head(meta or nullptr) + json_run_element(run_i, i) for i = 0.. + json_tail(n, stats)
// equals to_json of those runs and statistics, byte for byte.
std::string json_head(const Meta* meta);
std::string json_run_element(const Run& run, size_t index);
std::string json_tail(size_t runs, const std::vector<RunStatistics>& statistics);

}  // namespace nicsim::report
