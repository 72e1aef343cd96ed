#pragma once
// EventLoop — the emulator's real-time loop: epoll over the frame ports (and the session's
// signalfd), a timerfd armed at the absolute CLOCK_MONOTONIC deadline of the next model event,
// and optionally busy polling. It is the only thing in nicsim that sleeps, and (through
// RealClock) the only one that reads a real clock.
//
// Waiting strategies (LoopOptions):
//   sleep   (default) epoll_wait blocks until a port is readable or the timerfd expires at the
//           deadline. The thread's timer slack is set to 1 ns (prctl PR_SET_TIMERSLACK; the
//           default 50 µs would delay every wake-up by up to 50 µs).
//   spin    sleep until a lead before the deadline, then poll (epoll_wait with timeout 0)
//           until the deadline: trades CPU for precision near deadlines (within spin_budget).
//           The lead adapts to how late this machine wakes sleepers: twice the largest
//           overshoot of the last 32 timer sleeps plus 20 µs, at most `spin`. (A VM with idle
//           vCPUs wakes a sleeper 0.1–5 ms late; the same VM under load, 30–100 µs.)
//   busy    never sleep: poll continuously (one core at 100 %).
// On a loaded machine the wake-up itself is what is late (a CFS thread waits for its turn
// behind compilers and the like): rt_priority puts the loop under SCHED_FIFO so a wake-up
// preempts normal tasks at once.
//
// Timer error: each time the loop waited for a deadline (it was in the future when the wait
// started and no port woke the loop first), wake-up time minus deadline is recorded. The
// lag policy is best effort (ns-3's SYNC_BEST_EFFORT): a late loop runs every event that is
// due at once; models schedule from their own times (WireOnlyNic), so lateness does not
// accumulate into lost link time.

#include <sys/epoll.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "nicsim/core/time.h"
#include "nicsim/emu/real_clock.h"
#include "nicsim/emu/sys.h"
#include "nicsim/report/latency_recorder.h"

namespace nicsim::emu {

struct LoopOptions {
  Duration spin = Duration::zero();  // poll instead of sleeping up to this close to a deadline
  bool adaptive_spin = true;         // adapt the lead (≤ spin) to measured sleep overshoots
  // Spinning may use at most this fraction of each 10 ms window; past it the loop sleeps
  // until the window ends. Under SCHED_FIFO a loop that spins nearly all the time would starve
  // normal tasks and be throttled by the kernel in 50 ms blocks (sched_rt_runtime_us / the
  // fair server), which is far worse than a late wake-up.
  double spin_budget = 0.5;
  bool busy_poll = false;  // never sleep
  // SCHED_FIFO priority of the loop thread (1..99; 0 = leave the normal scheduler). With
  // SCHED_RESET_ON_FORK, so commands started by the session run under the normal scheduler.
  // The kernel's RT throttling (sched_rt_runtime_us, 95 %) still bounds a busy-polling loop.
  int rt_priority = 0;
};

struct LoopStats {
  uint64_t waits = 0;          // wait() calls
  uint64_t sleeps = 0;         // blocking epoll_wait calls
  uint64_t timer_wakeups = 0;  // waits that ended at their deadline (timer error samples)
  uint64_t fd_wakeups = 0;     // waits that ended because an fd became readable
  uint64_t polls = 0;          // non-blocking epoll_wait calls (spin / busy / overdue)
  uint64_t overdue = 0;        // waits whose deadline had already passed (the loop was late)
  uint64_t spins = 0;          // waits that spun before their deadline
  uint64_t spin_denied = 0;    // waits that would have spun but the spin budget was used up
  Duration spin_time;          // total time spent spinning
  Duration spin_lead;          // the spin lead at the end (adaptive)
  Duration max_overshoot;      // the largest sleep overshoot seen (timer expiry - armed time)
};

class EventLoop {
 public:
  static constexpr size_t kMaxEvents = 16;

  EventLoop(const RealClock& clock, const LoopOptions& options);
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;
  ~EventLoop();  // restores the thread's scheduling policy

  // Watches fd for EPOLLIN (level-triggered); wait() reports `token` when it is readable.
  void add(int fd, uint32_t token);
  // Returns when a watched fd is readable (their tokens) or at `deadline` (empty span; nullopt
  // = no deadline). Never returns before the deadline without a readable fd.
  std::span<const uint32_t> wait(std::optional<Time> deadline);

  const report::LatencyRecorder& timer_error() const { return timer_error_; }
  const LoopStats& stats() const { return stats_; }
  const RealClock& clock() const { return clock_; }
  // Why rt_priority could not be applied ("" when it was, or was not asked for).
  const std::string& rt_error() const { return rt_error_; }

 private:
  int poll_fds(int timeout_ms);  // epoll_wait; fills ready_, returns the count of port tokens
  void arm(std::optional<Time> at);
  bool spin_allowed(Time now);
  void record_overshoot(Duration d);
  void account_spin(Time from, Time to);

  const RealClock& clock_;
  LoopOptions options_;
  UniqueFd epoll_;
  UniqueFd timer_;
  std::optional<Time> armed_;
  bool timer_fired_ = false;
  std::array<epoll_event, kMaxEvents> events_{};
  std::array<uint32_t, kMaxEvents> ready_{};
  report::LatencyRecorder timer_error_;
  LoopStats stats_;
  std::string rt_error_;
  Time window_start_;
  Duration lead_;
  std::array<Duration, 32> overshoots_{};
  size_t overshoot_next_ = 0;
  Duration window_spin_;
  bool rt_applied_ = false;
  int old_policy_ = 0;
  int old_priority_ = 0;
};

}  // namespace nicsim::emu
