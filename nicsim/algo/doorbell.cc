#include "nicsim/algo/doorbell.h"

#include <string>

namespace nicsim::algo {

Validation Doorbell::Params::validate() const {
  if (kick_cost < Duration::zero()) {
    return ParamError{"kick_cost",
                      "must be >= 0, got " + std::to_string(kick_cost.count_ns()) + " ns"};
  }
  // The DQL parameters are checked even with bql = false: a scenario that sets them wrongly
  // is wrong whether or not BQL is switched on.
  if (auto err = dql.validate()) {
    return ParamError{"dql." + err->key, err->message};
  }
  return std::nullopt;
}

Doorbell::Doorbell(const Params& params, Time now)
    : params_(require_valid(params)), dql_(params_.dql, now) {}

bool Doorbell::set_driver_stopped(bool stopped) {
  if (stopped) {
    if (!drv_xoff_) {
      drv_xoff_ = true;
      ++stats_.driver_stops;
    }
    return false;
  }
  if (!drv_xoff_) {
    return false;
  }
  drv_xoff_ = false;  // netif_tx_wake_queue: test_and_clear DRV_XOFF, then __netif_schedule
  ++stats_.reschedules;
  return true;
}

void Doorbell::reset(Time now) {
  ++stats_.resets;
  stats_.reset_unkicked_packets += pending_;
  pending_ = 0;
  stack_xoff_ = false;
  dql_.reset(now);
}

}  // namespace nicsim::algo
