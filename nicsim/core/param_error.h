#pragma once
// Parameter validation. Every algorithm's Params has `std::optional<ParamError> validate()`
// naming the offending key (as written in scenario files, e.g. "quantum") and what is wrong.
// Constructors call `require_valid`, which throws InvalidParams — once, at configuration time,
// never on the packet path — so a bad value becomes a clear message, not a crash. The config
// layer adds file and line.

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace nicsim {

struct ParamError {
  std::string key;
  std::string message;
  std::string to_string() const { return key + ": " + message; }
};

using Validation = std::optional<ParamError>;

class InvalidParams : public std::invalid_argument {
 public:
  explicit InvalidParams(ParamError e)
      : std::invalid_argument(e.to_string()), error_(std::move(e)) {}
  const ParamError& error() const { return error_; }

 private:
  ParamError error_;
};

template <class P>
const P& require_valid(const P& params) {
  if (auto err = params.validate()) {
    throw InvalidParams(std::move(*err));
  }
  return params;
}

}  // namespace nicsim
