#include "nicsim/algo/irq_coalescer.h"

#include <string>

namespace nicsim::algo {

Validation IrqCoalescer::Params::validate() const {
  if (usecs < Duration::zero()) {
    return ParamError{"usecs", "must be >= 0, got " + std::to_string(usecs.count_ns()) + " ns"};
  }
  if (frames < 0) {
    return ParamError{"frames", "must be >= 0, got " + std::to_string(frames)};
  }
  if (usecs == Duration::zero() && frames == 0) {
    return ParamError{"frames",
                      "usecs and frames are both 0 (illegal in ethtool -C; use frames = 1 for "
                      "no coalescing)"};
  }
  return std::nullopt;
}

IrqCoalescer::IrqCoalescer(const Params& params) : params_(require_valid(params)) {}

void IrqCoalescer::raise(Time now, uint64_t& reason) {
  ++stats_.interrupts;
  ++reason;
  stats_.max_delay = max(stats_.max_delay, now - first_pending_);
  pending_ = 0;
}

bool IrqCoalescer::on_event(Time now, uint32_t count) {
  ++stats_.events;
  stats_.completions += count;
  if (count == 0) {
    return false;
  }
  if (pending_ == 0) {
    first_pending_ = now;
  }
  pending_ += count;
  if (masked_) {
    return false;
  }
  if (frames_reached()) {
    raise(now, stats_.by_frames);
    return true;
  }
  if (timer_expired(now)) {  // only possible with events spaced >= usecs and frames unmet
    raise(now, stats_.by_timer);
    return true;
  }
  return false;
}

std::optional<Time> IrqCoalescer::next_ready() const {
  if (masked_ || pending_ == 0 || params_.usecs == Duration::zero()) {
    return std::nullopt;
  }
  return first_pending_ + params_.usecs;
}

bool IrqCoalescer::expire(Time now) {
  if (masked_ || pending_ == 0 || !timer_expired(now)) {
    return false;
  }
  raise(now, stats_.by_timer);
  return true;
}

void IrqCoalescer::mask() { masked_ = true; }

void IrqCoalescer::consumed(uint64_t count) { pending_ -= count < pending_ ? count : pending_; }

bool IrqCoalescer::unmask(Time now) {
  masked_ = false;
  if (pending_ > 0 && (frames_reached() || timer_expired(now))) {
    raise(now, stats_.on_unmask);
    return true;
  }
  return false;
}

}  // namespace nicsim::algo
