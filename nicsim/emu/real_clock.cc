#include "nicsim/emu/real_clock.h"

namespace nicsim::emu {
namespace {

int64_t read_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
int64_t monotonic_ns() { return read_ns(CLOCK_MONOTONIC); }

}  // namespace

RealClock::RealClock() : epoch_ns_(monotonic_ns()) {}

Time RealClock::now() const { return Time::from_ns(monotonic_ns() - epoch_ns_); }

int64_t RealClock::realtime_minus_time_ns() const {
  const int64_t rt = read_ns(CLOCK_REALTIME);
  const int64_t mono = monotonic_ns();
  return rt - (mono - epoch_ns_);
}

timespec RealClock::to_monotonic(Time t) const {
  const int64_t ns = epoch_ns_ + t.ns_since_epoch();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return ts;
}

}  // namespace nicsim::emu
