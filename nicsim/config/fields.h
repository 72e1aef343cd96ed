#pragma once
// Internal to nicsim/config: one table of fields per Params struct drives parsing, dumping,
// equality and the mapping of Params::validate() keys back to the file position that set them.
// A field has a dotted key relative to its section ("tx_coalesce.usecs"), a kind (which fixes
// the accepted TOML form and units), and an accessor returning a reference into the Params.

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/toml_util.h"
#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"

namespace nicsim::config::detail {

enum class Kind : uint8_t {
  kBool,      // true / false
  kInt,       // integer (counts: descriptors, packets, frames)
  kDuration,  // "136us"
  kRate,      // "100Mbit"
  kBytes,     // "16KiB"
  kPercent,   // "0.5%" (stored as parts per billion)
  kEnum,      // one of a fixed set of strings
  kIntList,   // [1, 2, 2, ...]
};

// monostate = "unset" (an optional value that is disabled); not written by dumps.
using Value =
    std::variant<std::monostate, bool, int64_t, Duration, Rate, std::string, std::vector<int64_t>>;

template <class P>
struct Field {
  std::string key;
  Kind kind;
  std::function<Value(const P&)> get;
  std::function<void(P&, const Value&)> set;
  std::vector<std::string> choices;     // kEnum: the accepted strings
  std::vector<std::string> model_keys;  // keys Params::validate() uses for this field
  // When set, the field exists only for configurations where applies(p) is true (e.g.
  // turbo_mode only for the smsc95xx chip); `applies_note` says so in errors.
  std::function<bool(const P&)> applies;
  std::string applies_note;
  // When set, a value read from a file must pass it: the message of a refused value, reported
  // at the key (e.g. a list of the wrong length).
  std::function<std::optional<std::string>(const Value&)> check;
  bool applies_to(const P& p) const { return !applies || applies(p); }
};

// Value conversions for the member types found in Params structs.
inline Value to_value(bool v) { return v; }
inline Value to_value(int64_t v) { return v; }
inline Value to_value(uint32_t v) { return static_cast<int64_t>(v); }
inline Value to_value(uint8_t v) { return static_cast<int64_t>(v); }
inline Value to_value(Duration v) { return v; }
inline Value to_value(Rate v) { return v; }
inline Value to_value(const std::optional<Duration>& v) {
  return v ? Value(*v) : Value(std::monostate{});
}
template <size_t N>
Value to_value(const std::array<int32_t, N>& a) {
  return std::vector<int64_t>(a.begin(), a.end());
}

inline void from_value(const Value& v, bool& out) { out = std::get<bool>(v); }
inline void from_value(const Value& v, int64_t& out) { out = std::get<int64_t>(v); }
inline void from_value(const Value& v, uint32_t& out) {
  out = static_cast<uint32_t>(std::get<int64_t>(v));
}
inline void from_value(const Value& v, uint8_t& out) {
  out = static_cast<uint8_t>(std::get<int64_t>(v));
}
inline void from_value(const Value& v, Duration& out) { out = std::get<Duration>(v); }
inline void from_value(const Value& v, Rate& out) { out = std::get<Rate>(v); }
inline void from_value(const Value& v, std::optional<Duration>& out) {
  if (std::holds_alternative<std::monostate>(v)) {
    out.reset();
  } else {
    out = std::get<Duration>(v);
  }
}
template <size_t N>
void from_value(const Value& v, std::array<int32_t, N>& out) {
  const auto& l = std::get<std::vector<int64_t>>(v);
  for (size_t i = 0; i < N && i < l.size(); ++i) {
    out[i] = static_cast<int32_t>(l[i]);
  }
}

// A field over a member reached by `ref(P&) -> T&`.
template <class P, class Ref>
Field<P> field(std::string key, Kind kind, Ref ref, std::vector<std::string> model_keys = {}) {
  Field<P> f;
  if (model_keys.empty()) {
    model_keys.push_back(key);
  }
  f.key = std::move(key);
  f.kind = kind;
  f.get = [ref](const P& p) { return to_value(ref(const_cast<P&>(p))); };
  f.set = [ref](P& p, const Value& v) { from_value(v, ref(p)); };
  f.model_keys = std::move(model_keys);
  return f;
}

// An enum field: `names[i].first` is the file spelling of `names[i].second`.
template <class P, class E, class Ref>
Field<P> enum_field(std::string key, std::vector<std::pair<std::string, E>> names, Ref ref,
                    std::vector<std::string> model_keys = {}) {
  Field<P> f;
  if (model_keys.empty()) {
    model_keys.push_back(key);
  }
  f.key = std::move(key);
  f.kind = Kind::kEnum;
  for (const auto& [name, e] : names) {
    f.choices.push_back(name);
  }
  f.get = [ref, names](const P& p) -> Value {
    const E e = ref(const_cast<P&>(p));
    for (const auto& [name, v] : names) {
      if (v == e) {
        return name;
      }
    }
    return std::string("?");
  };
  f.set = [ref, names](P& p, const Value& v) {
    const auto& s = std::get<std::string>(v);
    for (const auto& [name, e] : names) {
      if (name == s) {
        ref(p) = e;
      }
    }
  };
  f.model_keys = std::move(model_keys);
  return f;
}

// Parses a TOML value for a field of `kind` (throws ConfigError at `at` naming `key_path`).
Value parse_value(Kind kind, const std::vector<std::string>& choices, const toml::node& n,
                  const Location& at, const std::string& key_path);
// TOML text of a value: true, 256, "1.5ms", "100Mbit", "16KiB", "0.5%", "irq", [1, 2].
std::string render_value(Kind kind, const Value& v);

// One key = value found in a file for a field.
template <class P>
struct Assignment {
  const Field<P>* field;
  Value value;
  Location at;
  std::string key_path;  // full path for messages, e.g. hosts.a.nic.bql
};

// Reads every key of `t` (recursing into sub-tables whose path prefixes a field key) as a
// field assignment. `reserved` keys at the top level are skipped (handled by the caller).
// Unknown keys -> ConfigError with a suggestion.
// The last assignment of field `key` (overrides come after the preset's), or nullptr.
template <class P>
const Assignment<P>* last_assignment(const std::vector<Assignment<P>>& all, std::string_view key) {
  const Assignment<P>* found = nullptr;
  for (const auto& a : all) {
    if (a.field->key == key) {
      found = &a;
    }
  }
  return found;
}

template <class P>
const Field<P>* find_field(const std::vector<Field<P>>& fields, std::string_view key) {
  for (const auto& f : fields) {
    if (f.key == key) {
      return &f;
    }
  }
  return nullptr;
}

// The field answering for a Params::validate() key (exact model key, or the longest model key
// that prefixes it: "doorbell.dql.max_limit" -> a field listing "doorbell.dql").
template <class P>
const Field<P>* field_for_model_key(const std::vector<Field<P>>& fields, std::string_view mk) {
  const Field<P>* best = nullptr;
  size_t best_len = 0;
  for (const auto& f : fields) {
    for (const auto& k : f.model_keys) {
      const bool exact = k == mk;
      const bool prefix = mk.size() > k.size() && mk.substr(0, k.size()) == k &&
                          (mk[k.size()] == '.' || mk[k.size()] == ' ');
      if ((exact || prefix) && k.size() + (exact ? 1 : 0) > best_len) {
        best = &f;
        best_len = k.size() + (exact ? 1 : 0);
      }
    }
  }
  return best;
}

template <class P>
bool fields_equal(const std::vector<Field<P>>& fields, const P& a, const P& b) {
  for (const auto& f : fields) {
    if (f.applies_to(a) != f.applies_to(b)) {
      return false;
    }
    if (f.applies_to(a) && !(f.get(a) == f.get(b))) {
      return false;
    }
  }
  return true;
}

// "key = value" lines for every field (unset optional values are skipped).
template <class P>
std::string dump_fields(const std::vector<Field<P>>& fields, const P& p) {
  std::string out;
  for (const auto& f : fields) {
    if (!f.applies_to(p)) {
      continue;
    }
    const Value v = f.get(p);
    if (std::holds_alternative<std::monostate>(v)) {
      continue;
    }
    out += f.key + " = " + render_value(f.kind, v) + "\n";
  }
  return out;
}

template <class P>
std::vector<Assignment<P>> read_assignments(const toml::table& t,
                                            const std::vector<Field<P>>& fields,
                                            const std::string& path, const std::string& file,
                                            const std::vector<std::string>& reserved,
                                            const std::string& relative = "") {
  std::vector<Assignment<P>> out;
  for (const Entry& e : in_source_order(t)) {
    const std::string k(e.key->str());
    if (relative.empty() && std::find(reserved.begin(), reserved.end(), k) != reserved.end()) {
      continue;
    }
    const std::string rel = relative.empty() ? k : relative + "." + k;
    const std::string full = join_key(path, k);
    const Location at = where(*e.key, *e.node, file);
    if (const Field<P>* f = find_field(fields, rel)) {
      Value v = parse_value(f->kind, f->choices, *e.node, at, full);
      if (f->check) {
        if (const auto refused = f->check(v)) {
          fail(at, full, *refused);
        }
      }
      out.push_back(Assignment<P>{f, std::move(v), at, full});
      continue;
    }
    const std::string prefix = rel + ".";
    const bool group = std::any_of(fields.begin(), fields.end(), [&](const Field<P>& f) {
      return f.key.compare(0, prefix.size(), prefix) == 0;
    });
    if (group && e.node->is_table()) {
      auto sub = read_assignments(*e.node->as_table(), fields, full, file, reserved, rel);
      out.insert(out.end(), std::make_move_iterator(sub.begin()),
                 std::make_move_iterator(sub.end()));
      continue;
    }
    if (group) {
      fail(at, full, "expected a table, got " + render(*e.node));
    }
    std::vector<std::string> candidates;
    for (const auto& f : fields) {
      candidates.push_back(f.key);
    }
    if (relative.empty()) {
      candidates.insert(candidates.end(), reserved.begin(), reserved.end());
    }
    const std::string guess = closest(rel, candidates);
    fail(at, full,
         "unknown key" + (guess.empty() ? std::string() : " (did you mean '" + guess + "'?)"));
  }
  return out;
}

}  // namespace nicsim::config::detail
