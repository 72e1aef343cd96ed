#include "nicsim/report/run_selector.h"

#include <algorithm>

namespace nicsim::report {
namespace {

std::vector<std::string> tokens(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) {
        out.push_back(cur);
      }
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) {
    out.push_back(cur);
  }
  return out;
}

}  // namespace

RunSelector::RunSelector(std::string_view text) : text_(text), wanted_(tokens(text)) {}

bool RunSelector::matches(std::string_view label) const {
  const std::vector<std::string> have = tokens(label);
  return std::all_of(wanted_.begin(), wanted_.end(), [&](const std::string& want) {
    return std::find(have.begin(), have.end(), want) != have.end();
  });
}

std::string quoted_labels(const std::vector<std::string>& labels) {
  std::string out;
  for (const std::string& l : labels) {
    out += (out.empty() ? "'" : ", '") + (l.empty() ? std::string("(one run)") : l) + "'";
  }
  return out;
}

}  // namespace nicsim::report
