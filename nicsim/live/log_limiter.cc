#include "nicsim/live/log_limiter.h"

#include <algorithm>
#include <climits>
#include <cstdio>

namespace nicsim::live {

namespace {
// Peers remembered per summary period: an attacker spoofing addresses (UDP) cannot grow the
// map without bound; the rest are counted in the total only.
constexpr size_t kMaxPeers = 1024;
}  // namespace

LogLimiter::LogLimiter(const LogLimiterParams& params) : params_(params), tokens_(params.burst) {}

bool LogLimiter::admit(const std::string& peer, int64_t now_ns) {
  if (!started_) {
    started_ = true;
    last_ns_ = now_ns;
    period_start_ns_ = now_ns;
  }
  const double elapsed_s = static_cast<double>(std::max<int64_t>(0, now_ns - last_ns_)) * 1e-9;
  tokens_ = std::min(params_.burst, tokens_ + elapsed_s * params_.per_second);
  last_ns_ = now_ns;
  if (tokens_ >= 1) {
    tokens_ -= 1;
    ++stats_.admitted;
    return true;
  }
  ++stats_.suppressed;
  if (held_total_ == 0) {
    period_start_ns_ = now_ns;
  }
  ++held_total_;
  if (held_.size() < kMaxPeers || held_.count(peer) != 0) {
    ++held_[peer];
  }
  return false;
}

int64_t LogLimiter::next_summary_ns() const {
  return held_total_ == 0 ? INT64_MAX : period_start_ns_ + params_.summary_period_ns;
}

std::optional<std::string> LogLimiter::summary(int64_t now_ns) {
  if (held_total_ == 0 || now_ns < next_summary_ns()) {
    return std::nullopt;
  }
  const auto top = std::max_element(
      held_.begin(), held_.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const double seconds = static_cast<double>(now_ns - period_start_ns_) * 1e-9;
  char span[32];
  std::snprintf(span, sizeof span, seconds >= 10 ? "%.0f" : "%.1f", seconds);
  std::string line = std::to_string(held_total_) + " log line" + (held_total_ == 1 ? "" : "s") +
                     " held back in the last " + span + " s";
  if (top != held_.end()) {
    line += "; most about " + top->first + " (" + std::to_string(top->second) + ")";
  }
  held_.clear();
  held_total_ = 0;
  return line;
}

}  // namespace nicsim::live
