// The results JSON field tables (json.cc, which drive the writer and the strict reader) against
// the checked-in schema docs/results.schema.json, field by field: a field added, renamed or
// re-typed in one place and not the other fails here.

#include "nicsim/report/json_schema.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace nicsim::report {
namespace {

using J = nlohmann::json;

J schema() {
  std::ifstream in(NICSIM_RESULTS_SCHEMA);
  std::stringstream ss;
  ss << in.rdbuf();
  return J::parse(ss.str());
}

std::set<std::string> keys_of(const J& object) {
  std::set<std::string> out;
  for (const auto& [k, v] : object.items()) {
    (void)v;
    out.insert(k);
  }
  return out;
}

TEST(ResultsSchema, EveryTableMatchesTheSchemaFieldByField) {
  const J doc = schema();
  const std::vector<JsonObjectSpec> specs = results_json_objects();
  std::set<std::string> pointers;
  for (const JsonObjectSpec& s : specs) {
    pointers.insert(s.pointer);
  }
  for (const JsonObjectSpec& spec : specs) {
    SCOPED_TRACE(spec.pointer);
    const J& def = doc.at(J::json_pointer(spec.pointer));
    std::set<std::string> properties;
    std::set<std::string> required;
    bool flattened = false;
    for (const JsonFieldSpec& f : spec.fields) {
      if (f.keys.size() > 1) {  // statistics flattened in: the object's "$ref"
        EXPECT_EQ(def.value("$ref", ""), f.schema);
        flattened = true;
        continue;
      }
      const std::string& key = f.keys.front();
      SCOPED_TRACE(key);
      properties.insert(key);
      if (f.required) {
        required.insert(key);
      }
      ASSERT_TRUE(def.contains("properties") && def["properties"].contains(key));
      J actual = def["properties"][key];
      const J expected = J::parse(f.schema);
      if (actual.contains("items") && !expected.contains("items")) {
        // Items spelled inline in the schema are an object checked as a table of their own.
        EXPECT_TRUE(pointers.contains(spec.pointer + "/properties/" + key + "/items"));
        actual.erase("items");
      }
      EXPECT_EQ(expected, actual);
    }
    EXPECT_EQ(keys_of(def["properties"]), properties);
    EXPECT_EQ(def.value("required", J::array()).get<std::set<std::string>>(), required);
    EXPECT_EQ(def.value(flattened ? "unevaluatedProperties" : "additionalProperties", J(true)),
              J(false));
  }
  // Every object of the schema with fixed properties has a table (statistics are written by
  // one function, stats_json, read by read_stats).
  for (const auto& [name, def] : doc["$defs"].items()) {
    if (def.contains("properties") && name != "stats_fields" && name != "direction_stats") {
      EXPECT_TRUE(pointers.contains("/$defs/" + name)) << name;
    }
  }
}

}  // namespace
}  // namespace nicsim::report
