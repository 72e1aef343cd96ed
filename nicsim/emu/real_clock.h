#pragma once
// RealClock — the emulator's clock: CLOCK_MONOTONIC mapped onto nicsim::Time once at start-up
// (docs/ARCHITECTURE.md "Where time comes from": Time{0} is when the clock was created).
//
// This file and real_clock.cc are the ONLY place in nicsim that reads a real clock
// (emu_lint_test checks it). Everything else receives `Time now` as an argument.
// CLOCK_MONOTONIC is read through the vDSO (~20 ns); it never jumps with NTP or settimeofday,
// and timerfd (event_loop.h) sleeps on the same clock, so deadlines and readings agree.

#include <ctime>

#include "nicsim/core/time.h"

namespace nicsim::emu {

class RealClock {
 public:
  // Reads CLOCK_MONOTONIC: that reading becomes Time::zero().
  RealClock();

  Time now() const;
  // The CLOCK_MONOTONIC value of `t` (for absolute timerfd deadlines).
  timespec to_monotonic(Time t) const;
  // CLOCK_MONOTONIC nanoseconds at Time::zero().
  int64_t epoch_ns() const { return epoch_ns_; }
  // CLOCK_REALTIME nanoseconds minus Time nanoseconds, read now: converts kernel socket
  // timestamps (which are CLOCK_REALTIME) to Time as t = realtime - offset. Read it again for
  // each batch, so a step of the wall clock only affects frames received across the step.
  int64_t realtime_minus_time_ns() const;

 private:
  int64_t epoch_ns_;
};

}  // namespace nicsim::emu
