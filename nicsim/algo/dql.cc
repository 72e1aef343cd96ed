#include "nicsim/algo/dql.h"

#include <string>

namespace nicsim::algo {
namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;
// The kernel's slack_hold_time is compared through a signed 32-bit difference, so it must stay
// below 2^31 jiffies.
constexpr int64_t kMaxHoldJiffies = std::numeric_limits<int32_t>::max();

// ceil(d * hz / 1 s) without overflow for any Duration >= 0 and hz <= 1000.
int64_t ceil_jiffies(Duration d, int64_t hz) {
  const int64_t sec = d.count_ns() / kNsPerSec;
  const int64_t rem = d.count_ns() % kNsPerSec;
  return sec * hz + (rem * hz + kNsPerSec - 1) / kNsPerSec;
}

}  // namespace

Validation Dql::Params::validate() const {
  if (hz != 100 && hz != 250 && hz != 300 && hz != 1000) {
    return ParamError{"hz",
                      "must be one of the kernel's CONFIG_HZ choices 100, 250, 300, 1000, got " +
                          std::to_string(hz)};
  }
  if (min_limit < 0) {
    return ParamError{"min_limit", "must be >= 0, got " + std::to_string(min_limit)};
  }
  if (max_limit > static_cast<int64_t>(kDqlMaxLimit)) {
    return ParamError{"max_limit", "must be <= DQL_MAX_LIMIT (" + std::to_string(kDqlMaxLimit) +
                                       "), got " + std::to_string(max_limit)};
  }
  if (max_limit < min_limit) {
    return ParamError{"max_limit", "must be >= min_limit (" + std::to_string(min_limit) +
                                       "), got " + std::to_string(max_limit)};
  }
  if (hold_time <= Duration::zero()) {
    return ParamError{"hold_time",
                      "must be > 0, got " + std::to_string(hold_time.count_ns()) + " ns"};
  }
  // hold_time < 2^31 jiffies; checked on whole seconds first so the conversion cannot overflow.
  if (hold_time.count_ns() / kNsPerSec >= kMaxHoldJiffies / hz ||
      ceil_jiffies(hold_time, hz) > kMaxHoldJiffies) {
    return ParamError{"hold_time", "must be < 2^31 jiffies (" +
                                       std::to_string(kMaxHoldJiffies / hz) +
                                       " s at HZ=" + std::to_string(hz) + ")"};
  }
  return std::nullopt;
}

uint32_t Dql::Params::hold_time_jiffies() const {
  return static_cast<uint32_t>(ceil_jiffies(hold_time, hz));
}

Dql::Dql(const Params& params, Time now) : Dql(params, now, 0) {}

Dql::Dql(const Params& params, Time now, uint32_t counter_base) : params_(require_valid(params)) {
  // dql_init: configuration, then dql_reset. The struct starts zeroed (adj_limit = 0).
  s_.max_limit = static_cast<uint32_t>(params_.max_limit);
  s_.min_limit = static_cast<uint32_t>(params_.min_limit);
  s_.slack_hold_time = params_.hold_time_jiffies();
  s_.adj_limit = counter_base;
  reset(now);
  stats_.resets = 0;  // construction is not a reset the caller asked for
  s_.num_queued = counter_base;
  s_.num_completed = counter_base;
  s_.prev_num_queued = counter_base;
}

void Dql::reset(Time now) {
  ++stats_.resets;
  stats_.reset_discarded_bytes += inflight();
  s_.limit = s_.min_limit;
  s_.num_queued = 0;
  s_.num_completed = 0;
  s_.last_obj_cnt = 0;
  s_.prev_num_queued = 0;
  s_.prev_last_obj_cnt = 0;
  s_.prev_ovlimit = 0;
  s_.lowest_slack = std::numeric_limits<uint32_t>::max();
  s_.slack_start_time = jiffies(now);
  if (s_.limit > stats_.limit_high_water) {
    stats_.limit_high_water = s_.limit;
  }
}

}  // namespace nicsim::algo
