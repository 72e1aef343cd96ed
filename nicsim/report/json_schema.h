#pragma once
// The results document's field tables (json.cc) as data, so that json_schema_test.cc can check
// them against docs/results.schema.json field by field: every object's keys, which of them are
// required, and each property's schema. The tables drive the writer and the strict reader, so
// the schema, the writer and the reader cannot drift apart.

#include <string>
#include <vector>

namespace nicsim::report {

struct JsonFieldSpec {
  std::vector<std::string> keys;  // one key; several for statistics flattened into the object
  bool required = true;           // the reader needs it; in the schema's "required"
  std::string schema;             // the property's schema (JSON text); for flattened
                                  // statistics the "$ref" of the object
};

struct JsonObjectSpec {
  std::string pointer;  // JSON pointer of the object's schema in docs/results.schema.json
  std::vector<JsonFieldSpec> fields;
};

std::vector<JsonObjectSpec> results_json_objects();

}  // namespace nicsim::report
