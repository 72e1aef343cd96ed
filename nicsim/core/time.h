#pragma once
// Time and Duration: strong types over int64 nanoseconds.
//
// Why: every element in nicsim takes `Time now` as an argument, and the same element runs
// under simulated time (sim) and under CLOCK_MONOTONIC mapped onto Time (emu). Integer
// nanoseconds never drift (no floating-point time), and neither type converts implicitly from
// an integer, so `Duration d = 100;` does not compile (compare ns-3's `Time t{100000000}`
// pitfall). Construct with the named factories or the literals: `5_ms`, `136500_ns`.
// The simulator starts at Time{} (zero); the range is ±292 years.

#include <compare>
#include <cstdint>
#include <iosfwd>
#include <limits>

namespace nicsim {

class Duration {
 public:
  constexpr Duration() = default;

  static constexpr Duration ns(int64_t v) { return Duration(v); }
  static constexpr Duration us(int64_t v) { return Duration(v * 1'000); }
  static constexpr Duration ms(int64_t v) { return Duration(v * 1'000'000); }
  static constexpr Duration s(int64_t v) { return Duration(v * 1'000'000'000); }
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration max() { return Duration(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t count_ns() const { return ns_; }
  // Division, not multiplication by 1e-9: 0.3 s prints as 0.3, not 0.30000000000000004.
  constexpr double to_seconds() const { return static_cast<double>(ns_) / 1e9; }
  constexpr double to_ms() const { return static_cast<double>(ns_) / 1e6; }
  constexpr double to_us() const { return static_cast<double>(ns_) / 1e3; }

  constexpr Duration operator-() const { return Duration(-ns_); }
  constexpr Duration& operator+=(Duration o) {
    ns_ += o.ns_;
    return *this;
  }
  constexpr Duration& operator-=(Duration o) {
    ns_ -= o.ns_;
    return *this;
  }
  friend constexpr Duration operator+(Duration a, Duration b) { return Duration(a.ns_ + b.ns_); }
  friend constexpr Duration operator-(Duration a, Duration b) { return Duration(a.ns_ - b.ns_); }
  friend constexpr Duration operator*(Duration a, int64_t k) { return Duration(a.ns_ * k); }
  friend constexpr Duration operator*(int64_t k, Duration a) { return Duration(a.ns_ * k); }
  friend constexpr Duration operator/(Duration a, int64_t k) { return Duration(a.ns_ / k); }
  // Ratio of two durations (integer division, truncating toward zero).
  friend constexpr int64_t operator/(Duration a, Duration b) { return a.ns_ / b.ns_; }
  friend constexpr Duration operator%(Duration a, Duration b) { return Duration(a.ns_ % b.ns_); }
  friend constexpr auto operator<=>(Duration, Duration) = default;

 private:
  explicit constexpr Duration(int64_t v) : ns_(v) {}
  int64_t ns_ = 0;
};

// A point in time: nanoseconds since the back-end's epoch (simulation start, or the
// emulator's CLOCK_MONOTONIC reading at start-up).
class Time {
 public:
  constexpr Time() = default;

  static constexpr Time from_ns(int64_t v) { return Time(v); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ns_since_epoch() const { return ns_; }
  constexpr Duration since_epoch() const { return Duration::ns(ns_); }
  constexpr double to_seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr Time& operator+=(Duration d) {
    ns_ += d.count_ns();
    return *this;
  }
  constexpr Time& operator-=(Duration d) {
    ns_ -= d.count_ns();
    return *this;
  }
  friend constexpr Time operator+(Time t, Duration d) { return Time(t.ns_ + d.count_ns()); }
  friend constexpr Time operator+(Duration d, Time t) { return Time(t.ns_ + d.count_ns()); }
  friend constexpr Time operator-(Time t, Duration d) { return Time(t.ns_ - d.count_ns()); }
  friend constexpr Duration operator-(Time a, Time b) { return Duration::ns(a.ns_ - b.ns_); }
  friend constexpr auto operator<=>(Time, Time) = default;

 private:
  explicit constexpr Time(int64_t v) : ns_(v) {}
  int64_t ns_ = 0;
};

// Printing (test failure messages, reports): "1.500ms", "t=2.000000123s".
std::ostream& operator<<(std::ostream& os, Duration d);
std::ostream& operator<<(std::ostream& os, Time t);

constexpr Time min(Time a, Time b) { return a < b ? a : b; }
constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Duration min(Duration a, Duration b) { return a < b ? a : b; }
constexpr Duration max(Duration a, Duration b) { return a < b ? b : a; }

inline namespace literals {
constexpr Duration operator""_ns(unsigned long long v) {
  return Duration::ns(static_cast<int64_t>(v));
}
constexpr Duration operator""_us(unsigned long long v) {
  return Duration::us(static_cast<int64_t>(v));
}
constexpr Duration operator""_ms(unsigned long long v) {
  return Duration::ms(static_cast<int64_t>(v));
}
constexpr Duration operator""_s(unsigned long long v) {
  return Duration::s(static_cast<int64_t>(v));
}
}  // namespace literals

}  // namespace nicsim
