#include "nicsim/emu/event_loop.h"

#include <sched.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cstring>

namespace nicsim::emu {
namespace {
constexpr uint32_t kTimerToken = UINT32_MAX;
constexpr Duration kSpinWindow = Duration::ms(10);
constexpr Duration kLeadMargin = Duration::us(20);
}  // namespace

EventLoop::EventLoop(const RealClock& clock, const LoopOptions& options)
    : clock_(clock), options_(options), lead_(options.spin) {
  stats_.spin_lead = lead_;
  // 1 ns timer slack: hrtimers for this thread expire on time instead of up to 50 µs late.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  if (options_.rt_priority > 0) {
    sched_param old{};
    old_policy_ = ::sched_getscheduler(0);
    ::sched_getparam(0, &old);
    old_priority_ = old.sched_priority;
    sched_param sp{};
    sp.sched_priority = options_.rt_priority;
    if (::sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0) {
      rt_applied_ = true;
    } else {
      rt_error_ = std::string("SCHED_FIFO priority ") + std::to_string(options_.rt_priority) +
                  ": " + std::strerror(errno);
    }
  }
  epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) {
    throw_errno("epoll_create1");
  }
  timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!timer_.valid()) {
    throw_errno("timerfd_create");
  }
  add(timer_.get(), kTimerToken);
}

EventLoop::~EventLoop() {
  if (rt_applied_) {
    sched_param sp{};
    sp.sched_priority = old_priority_;
    ::sched_setscheduler(0, old_policy_ & ~SCHED_RESET_ON_FORK, &sp);
  }
}

void EventLoop::add(int fd, uint32_t token) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = token;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    throw_errno("epoll_ctl ADD");
  }
}

void EventLoop::arm(std::optional<Time> at) {
  if (at == armed_) {
    return;
  }
  itimerspec its{};
  if (at) {
    its.it_value = clock_.to_monotonic(*at);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) {
      its.it_value.tv_nsec = 1;  // all-zero would disarm
    }
  }
  if (::timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &its, nullptr) != 0) {
    throw_errno("timerfd_settime");
  }
  armed_ = at;
}

int EventLoop::poll_fds(int timeout_ms) {
  const int n =
      ::epoll_wait(epoll_.get(), events_.data(), static_cast<int>(events_.size()), timeout_ms);
  int k = 0;
  timer_fired_ = false;
  for (int i = 0; i < n; ++i) {
    const uint32_t token = events_[static_cast<size_t>(i)].data.u32;
    if (token == kTimerToken) {
      uint64_t expirations = 0;
      [[maybe_unused]] ssize_t r = ::read(timer_.get(), &expirations, sizeof expirations);
      armed_.reset();  // an expired absolute timer is disarmed
      timer_fired_ = true;
    } else {
      ready_[static_cast<size_t>(k++)] = token;
    }
  }
  return k;
}

bool EventLoop::spin_allowed(Time now) {
  if (now - window_start_ >= kSpinWindow) {
    window_start_ = now;
    window_spin_ = Duration::zero();
  }
  const auto budget = Duration::ns(
      static_cast<int64_t>(static_cast<double>(kSpinWindow.count_ns()) * options_.spin_budget));
  return window_spin_ < budget;
}

void EventLoop::record_overshoot(Duration d) {
  stats_.max_overshoot = max(stats_.max_overshoot, d);
  if (!options_.adaptive_spin) {
    return;
  }
  overshoots_[overshoot_next_] = d;
  overshoot_next_ = (overshoot_next_ + 1) % overshoots_.size();
  Duration worst = Duration::zero();
  for (const Duration o : overshoots_) {
    worst = max(worst, o);
  }
  lead_ = min(options_.spin, worst * 2 + kLeadMargin);
  stats_.spin_lead = lead_;
}

void EventLoop::account_spin(Time from, Time to) {
  window_spin_ += to - from;
  stats_.spin_time += to - from;
}

std::span<const uint32_t> EventLoop::wait(std::optional<Time> deadline) {
  ++stats_.waits;
  Time now = clock_.now();
  if (deadline && *deadline <= now) {
    ++stats_.overdue;
    ++stats_.polls;
    return {ready_.data(), static_cast<size_t>(poll_fds(0))};
  }
  bool spin = options_.busy_poll;
  if (!spin && deadline && options_.spin > Duration::zero()) {
    if (spin_allowed(now)) {
      spin = *deadline - now <= lead_;
    } else {
      ++stats_.spin_denied;
    }
  }
  if (!spin) {
    // Sleep until a port is readable or the timer expires (the lead before the deadline when
    // spinning is allowed, else at the deadline).
    const bool spin_after = options_.spin > Duration::zero() && spin_allowed(now);
    const Duration early = spin_after ? lead_ : Duration::zero();
    const std::optional<Time> wake =
        deadline ? std::optional<Time>(*deadline - early) : std::nullopt;
    arm(wake);
    ++stats_.sleeps;
    const int k = poll_fds(-1);
    if (k > 0) {
      ++stats_.fd_wakeups;
      return {ready_.data(), static_cast<size_t>(k)};
    }
    if (!deadline) {
      return {};  // nothing but the timer (re-armed to nothing): the caller loops
    }
    now = clock_.now();
    if (timer_fired_ && wake) {
      record_overshoot(now - *wake);
    }
    if (now >= *deadline) {
      ++stats_.timer_wakeups;
      timer_error_.add(now - *deadline);
      return {};
    }
    if (early == Duration::zero()) {
      return {};  // woke before the deadline without an event: the caller waits again
    }
  }
  // Spin until a port is readable or the deadline.
  ++stats_.spins;
  const Time spin_start = now;
  for (;;) {
    ++stats_.polls;
    const int k = poll_fds(0);
    now = clock_.now();
    if (k > 0) {
      account_spin(spin_start, now);
      ++stats_.fd_wakeups;
      return {ready_.data(), static_cast<size_t>(k)};
    }
    if (deadline && now >= *deadline) {
      account_spin(spin_start, now);
      ++stats_.timer_wakeups;
      timer_error_.add(now - *deadline);
      return {};
    }
  }
}

}  // namespace nicsim::emu
