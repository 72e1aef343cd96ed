#pragma once
// Choosing runs by label, one syntax for every command (emulate --run, plot --run,
// export --run). A run's label lists its [vary] values, "bql=true rate=1Gbit"; a selector
// lists the values wanted, separated by commas or spaces ("bql=true,rate=1Gbit",
// "rate=1Gbit", or the whole label as printed). A run matches when its label has every
// value of the selector; an empty selector matches every run. docs/scenarios.md ([vary]).

#include <string>
#include <string_view>
#include <vector>

namespace nicsim::report {

class RunSelector {
 public:
  RunSelector() = default;
  explicit RunSelector(std::string_view text);

  bool matches(std::string_view label) const;
  bool empty() const { return wanted_.empty(); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<std::string> wanted_;
};

// The labels as a list for error messages: 'a', 'b' ("(one run)" for an empty label).
std::string quoted_labels(const std::vector<std::string>& labels);

}  // namespace nicsim::report
