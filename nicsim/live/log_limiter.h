#pragma once
// LogLimiter — keeps a server's log readable under attack: a token bucket admits a burst of
// lines and then a steady rate; the lines it holds back are counted per peer address and
// summarised once per summary period ("412 log lines held back in the last 10 s; most about
// 10.0.0.7 (400)"). One attacker cannot flood the log (13,000 lines/s before this) and
// nothing is lost silently. No clock: the caller passes the time (ns).

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace nicsim::live {

struct LogLimiterParams {
  double burst = 20;                           // lines admitted back to back
  double per_second = 5;                       // lines admitted per second afterwards
  int64_t summary_period_ns = 10'000'000'000;  // how often held-back lines are summarised
};

struct LogLimiterStats {
  uint64_t admitted = 0;
  uint64_t suppressed = 0;
};

class LogLimiter {
 public:
  explicit LogLimiter(const LogLimiterParams& params = {});
  // Whether a line about `peer` (an address, no port) may be logged at `now_ns`.
  bool admit(const std::string& peer, int64_t now_ns);
  // The summary line due at `now_ns`, if lines were held back since the last one.
  std::optional<std::string> summary(int64_t now_ns);
  // When summary() next has something to say (INT64_MAX: nothing held back).
  int64_t next_summary_ns() const;
  LogLimiterStats stats() const { return stats_; }

 private:
  LogLimiterParams params_;
  double tokens_;
  int64_t last_ns_ = 0;
  bool started_ = false;
  int64_t period_start_ns_ = 0;
  std::map<std::string, uint64_t> held_;  // per peer, since the last summary
  uint64_t held_total_ = 0;
  LogLimiterStats stats_;
};

}  // namespace nicsim::live
