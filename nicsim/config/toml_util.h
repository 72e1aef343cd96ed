#pragma once
// Internal to nicsim/config: strict reading of toml++ trees with file:line:column errors.
// Nothing outside nicsim/config includes this header (the public headers do not expose toml++).

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"

namespace nicsim::config::detail {

// Positions. A node or key without source information (made by the config layer itself) gets
// the file with an unknown position.
Location where(const toml::source_region& r, const std::string& file);
Location where(const toml::node& n, const std::string& file);
// The key's position if known, else its value's.
Location where(const toml::key& k, const toml::node& v, const std::string& file);

// "hosts.a" + "nic" -> "hosts.a.nic"; components that are not bare TOML keys are quoted:
// "published" + "bql=false" -> published."bql=false".
std::string join_key(std::string_view prefix, std::string_view key);
// A TOML basic string literal: "a\"b".
std::string quote(std::string_view s);
// Shortest text that reads back as the same double, always with a '.' or exponent: 1.0, 0.432.
std::string format_double(double v);
// The position of `key` in `t` (the key's, else its value's), or the table's own position.
Location key_location(const toml::table& t, std::string_view key, const std::string& file);
// DSCP names: BE, LE, CS0..CS7, AF11..AF43, EF, VA (RFC 2474, 2597, 3246, 5865, 8622).
std::optional<uint8_t> dscp_from_name(std::string_view name);
// The TOML value for a DSCP: its name in quotes ("EF"), or the number.
std::string dscp_to_toml(uint8_t dscp);
// How a value is shown in messages: "yes" (strings in double quotes), 5, 1.5, true, a table...
std::string render(const toml::node& n);

[[noreturn]] void fail(const Location& at, const std::string& key, const std::string& message);

// A table's entries in the order they were written (toml::table itself is sorted by key).
struct Entry {
  const toml::key* key;
  const toml::node* node;
};
std::vector<Entry> in_source_order(const toml::table& t);

// Conversions with errors naming the key path and the expected form.
bool to_bool(const toml::node& n, const Location& at, const std::string& key);
int64_t to_int(const toml::node& n, const Location& at, const std::string& key);
double to_number(const toml::node& n, const Location& at, const std::string& key);
const std::string& to_string(const toml::node& n, const Location& at, const std::string& key);
Duration to_duration(const toml::node& n, const Location& at, const std::string& key);
Rate to_rate(const toml::node& n, const Location& at, const std::string& key);
int64_t to_bytes(const toml::node& n, const Location& at, const std::string& key);
int64_t to_percent_ppb(const toml::node& n, const Location& at, const std::string& key);
const toml::table& to_table(const toml::node& n, const Location& at, const std::string& key);
const toml::array& to_array(const toml::node& n, const Location& at, const std::string& key);

// The closest of `candidates` to `word` (edit distance <= 3), or "" — for "did you mean".
std::string closest(std::string_view word, const std::vector<std::string>& candidates);

// Reads one TOML table strictly: every key present must be taken by the caller; finish()
// reports the first key (in source order) nobody asked for, with a suggestion.
class TableReader {
 public:
  TableReader(const toml::table& t, std::string path, std::string file);

  Location location() const { return where(t_, file_); }
  std::string key_path(std::string_view key) const { return join_key(path_, key); }
  Location key_location(std::string_view key) const;

  // The value under `key` (nullptr if absent); marks the key as known and used.
  const toml::node* take(std::string_view key);

  std::optional<bool> opt_bool(std::string_view key);
  std::optional<int64_t> opt_int(std::string_view key);
  std::optional<std::string> opt_string(std::string_view key);
  std::optional<Duration> opt_duration(std::string_view key);
  std::optional<Rate> opt_rate(std::string_view key);
  std::optional<int64_t> opt_bytes(std::string_view key);
  std::optional<int64_t> opt_percent_ppb(std::string_view key);
  const toml::table* opt_table(std::string_view key);
  const toml::array* opt_array(std::string_view key);

  // Throws "<path>.<key>: required" at the table's position when v is empty.
  template <class T>
  T required(std::optional<T> v, std::string_view key) const {
    if (!v) {
      missing(key);
    }
    return std::move(*v);
  }
  [[noreturn]] void missing(std::string_view key) const;

  void finish() const;

 private:
  const toml::table& t_;
  std::string path_;
  std::string file_;
  std::set<std::string, std::less<>> known_;
  std::set<std::string, std::less<>> used_;
};

}  // namespace nicsim::config::detail
