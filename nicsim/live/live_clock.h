#pragma once
// The live layer's clock: CLOCK_MONOTONIC in nanoseconds, plus the offset that converts the
// kernel's socket receive timestamps (SO_TIMESTAMPNS, CLOCK_REALTIME) to it. Besides
// nicsim/emu/real_clock.cc this is the only file under nicsim/ that reads a real clock
// (emu_lint allows exactly these two): real sockets run in real time.

#include <sys/socket.h>

#include <cstdint>

namespace nicsim::live {

// CLOCK_MONOTONIC now, nanoseconds.
int64_t mono_ns();
// CLOCK_REALTIME - CLOCK_MONOTONIC now, nanoseconds.
int64_t realtime_minus_mono_ns();
// The SO_TIMESTAMPNS stamp of a received message converted to CLOCK_MONOTONIC, or mono_ns()
// when the message carries none.
int64_t receive_time_ns(const msghdr& msg);

}  // namespace nicsim::live
