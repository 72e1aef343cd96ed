#include "nicsim/config/error.h"

#include <string>
#include <utility>

namespace nicsim::config {
namespace {

std::string render(const Location& where, const std::string& key, const std::string& message) {
  std::string s = where.to_string();
  s += ": ";
  if (!key.empty()) {
    s += key;
    s += ": ";
  }
  s += message;
  return s;
}

}  // namespace

std::string Location::to_string() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (known()) {
    s += ":" + std::to_string(line) + ":" + std::to_string(column);
  }
  return s;
}

ConfigError::ConfigError(Location where, std::string key, std::string message)
    : std::runtime_error(render(where, key, message)),
      where_(std::move(where)),
      key_(std::move(key)),
      message_(std::move(message)) {}

}  // namespace nicsim::config
