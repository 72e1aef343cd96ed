#include "nicsim/algo/codel.h"

#include <algorithm>
#include <string>

namespace nicsim::algo {
namespace {

std::string ns_string(Duration d) { return std::to_string(d.count_ns()) + " ns"; }

bool fits_codel_time(Duration d) {
  return (static_cast<uint64_t>(d.count_ns()) >> kCodelShift) <= uint64_t{INT32_MAX};
}

}  // namespace

Validation validate_codel_params(Duration target, Duration interval, int64_t mtu,
                                 const std::optional<Duration>& ce_threshold) {
  if (target <= Duration::zero()) {
    return ParamError{"target", "must be > 0, got " + ns_string(target)};
  }
  if (!fits_codel_time(target)) {
    return ParamError{"target",
                      "must be <= 2199 s (CoDel's 32-bit 1024 ns clock), got " + ns_string(target)};
  }
  if (interval <= Duration::zero()) {
    return ParamError{"interval", "must be > 0, got " + ns_string(interval)};
  }
  if (!fits_codel_time(interval)) {
    return ParamError{
        "interval", "must be <= 2199 s (CoDel's 32-bit 1024 ns clock), got " + ns_string(interval)};
  }
  if (mtu < 0 || mtu > int64_t{UINT32_MAX}) {
    return ParamError{"mtu", "must be in 0..4294967295 bytes, got " + std::to_string(mtu)};
  }
  if (ce_threshold) {
    if (*ce_threshold < Duration::zero()) {
      return ParamError{"ce_threshold", "must be >= 0, got " + ns_string(*ce_threshold)};
    }
    if (!fits_codel_time(*ce_threshold)) {
      return ParamError{"ce_threshold", "must be <= 2199 s (CoDel's 32-bit 1024 ns clock), got " +
                                            ns_string(*ce_threshold)};
    }
  }
  return std::nullopt;
}

CodelConfig make_codel_config(Duration target, Duration interval, int64_t mtu, bool ecn,
                              const std::optional<Duration>& ce_threshold, uint8_t selector,
                              uint8_t mask) {
  CodelConfig c;
  c.target = codel_time(target);
  c.interval = codel_time(interval);
  c.mtu = static_cast<uint32_t>(mtu);
  c.ecn = ecn;
  c.ce_threshold_enabled = ce_threshold.has_value();
  c.ce_threshold = ce_threshold ? codel_time(*ce_threshold) : 0;
  c.ce_threshold_selector = selector;
  c.ce_threshold_mask = mask;
  return c;
}

Validation Codel::Params::validate() const {
  if (limit < 1) {
    return ParamError{"limit", "must be >= 1 packet, got " + std::to_string(limit)};
  }
  return validate_codel_params(target, interval, mtu, ce_threshold);
}

Codel::Codel(const Params& params)
    : params_(require_valid(params)),
      config_(make_codel_config(params.target, params.interval, params.mtu, params.ecn,
                                params.ce_threshold, params.ce_threshold_selector,
                                params.ce_threshold_mask)) {
  // At most `limit` packets are stored (the stash included); reserve that up front, within
  // reason, so the steady state never allocates.
  pool_.reserve(static_cast<size_t>(std::min<int64_t>(params_.limit, int64_t{1} << 16)));
}

}  // namespace nicsim::algo
