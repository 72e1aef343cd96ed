#pragma once
// Configuration errors: every problem in a scenario or preset file is reported as
//   <file>:<line>:<column>: <key.path>: <message>
// e.g. "scenarios/x.toml:12:1: hosts.a.nic.bql: expected a boolean, got "yes"". The config
// layer throws ConfigError and nothing else (TOML syntax errors, unknown keys, missing units,
// wrong types, unknown presets, Params::validate() failures mapped back to the key that set
// the value) — never a crash, never a silently ignored key.

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nicsim::config {

// A position in a configuration file (1-based line and column; 0 = unknown).
struct Location {
  std::string file;
  int64_t line = 0;
  int64_t column = 0;

  bool known() const { return line > 0; }
  // "file:line:column", or "file" when the position is unknown.
  std::string to_string() const;
  bool operator==(const Location&) const = default;
};

class ConfigError : public std::runtime_error {
 public:
  // `key` and `message` are echoed up to 200 and 1000 bytes, then cut with "... (N more
  // bytes)": an error names what is wrong without repeating a megabyte of input.
  ConfigError(Location where, std::string key, std::string message);

  const Location& where() const { return where_; }
  const std::string& key() const { return key_; }  // full key path; may be empty
  const std::string& message() const { return message_; }

 private:
  // The delegated-to constructor: key and message already cut to their echo limits.
  ConfigError(Location where, std::string key, std::string message, int cut);

  Location where_;
  std::string key_;
  std::string message_;
};

}  // namespace nicsim::config
