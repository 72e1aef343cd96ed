#pragma once
// What the ns-3 comparison programs (stmmac_bql.cc, dumbbell.cc) share: percentiles, the flat
// one-line JSON output and the process CPU clock.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

namespace bench {

inline double percentile(std::vector<double> v, double q) {
  if (v.empty()) {
    return std::nan("");
  }
  std::sort(v.begin(), v.end());
  const size_t idx =
      std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1);
  return v[q <= 0 ? 0 : idx];
}

// One flat JSON object on one line. Numbers print with up to 6 significant digits after the
// point (%.6g would lose precision on event counts, so integers print exactly); NaN prints null.
class Json {
 public:
  void str(const char* key, const std::string& value) { add(key, "\"" + value + "\""); }
  void boolean(const char* key, bool value) { add(key, value ? "true" : "false"); }
  void num(const char* key, uint64_t value) { add(key, std::to_string(value)); }
  void num(const char* key, uint32_t value) { add(key, std::to_string(value)); }
  void num(const char* key, double value) {
    if (std::isnan(value)) {
      add(key, "null");
      return;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f", value);
    std::string text = buf;  // trim trailing zeros: 96.3040 -> 96.304, 30.0000 -> 30
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') {
      text.pop_back();
    }
    add(key, text);
  }
  std::string finish() const { return "{" + body_ + "}"; }

 private:
  void add(const char* key, const std::string& value) {
    if (!body_.empty()) {
      body_ += ",";
    }
    body_ += "\"" + std::string(key) + "\":" + value;
  }
  std::string body_;
};

inline double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace bench
