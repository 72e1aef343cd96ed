#include "nicsim/config/error.h"

#include <string>
#include <utility>

namespace nicsim::config {
namespace {

// A hostile or generated file can hold a 1 MB key or value; an error message echoes at most
// this much of each (a key path, a message with the offending value in it).
constexpr size_t kMaxEchoedKey = 200;
constexpr size_t kMaxEchoedMessage = 1000;

std::string cut_echo(std::string text, size_t limit) {
  if (text.size() <= limit) {
    return text;
  }
  const size_t cut = text.size() - limit;
  text.resize(limit);
  return text + "... (" + std::to_string(cut) + " more bytes)";
}

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
    : ConfigError(std::move(where), cut_echo(std::move(key), kMaxEchoedKey),
                  cut_echo(std::move(message), kMaxEchoedMessage), 0) {}

ConfigError::ConfigError(Location where, std::string key, std::string message, int /*cut*/)
    : std::runtime_error(render(where, key, message)),
      where_(std::move(where)),
      key_(std::move(key)),
      message_(std::move(message)) {}

}  // namespace nicsim::config
