#pragma once
// The campaign's one real clock: wall seconds for a run's meta (wall_s, events_per_s) and the
// progress line's ETA. Nothing a run computes depends on it (results are the same at any
// speed); the lint (nicsim/emu/lint_clock.sh) allows real clock reads only here,
// nicsim/emu/real_clock.cc and nicsim/live/live_clock.cc (docs/ARCHITECTURE.md).

namespace nicsim::campaign {

// Seconds of CLOCK_MONOTONIC (an arbitrary origin: only differences mean anything).
double wall_seconds();

}  // namespace nicsim::campaign
