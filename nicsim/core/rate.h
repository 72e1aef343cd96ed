#pragma once
// Rate (bits per second) and byte counts, with exact byte <-> time conversion.
//
// Why integers: a link or shaper keeps a cumulative byte count and derives its busy-until time
// as t0 + ceil(bytes_total * 8e9 / rate) in 128-bit arithmetic (DPDK lib/sched "time in
// bytes"), so rounding never accumulates over a long run. A 64-byte frame at 100 Gbit/s lasts
// 5.12 ns; with ceil it is charged 6 ns, and the cumulative form keeps the long-run rate exact.

#include <compare>
#include <cstdint>

#include "nicsim/core/time.h"

namespace nicsim {

// Byte counts are plain unsigned 64-bit integers; the literals make sizes readable.
using Bytes = uint64_t;

inline namespace literals {
constexpr Bytes operator""_B(unsigned long long v) { return v; }
constexpr Bytes operator""_KiB(unsigned long long v) { return v * 1024; }
constexpr Bytes operator""_MiB(unsigned long long v) { return v * 1024 * 1024; }
}  // namespace literals

class Rate {
 public:
  constexpr Rate() = default;

  static constexpr Rate bps(uint64_t v) { return Rate(v); }
  static constexpr Rate kbit(uint64_t v) { return Rate(v * 1'000); }
  static constexpr Rate mbit(uint64_t v) { return Rate(v * 1'000'000); }
  static constexpr Rate gbit(uint64_t v) { return Rate(v * 1'000'000'000); }
  // Bytes per second (tc's "bps" unit means bytes/s; ours is explicit).
  static constexpr Rate bytes_per_sec(uint64_t v) { return Rate(v * 8); }

  constexpr uint64_t bits_per_sec() const { return bps_; }
  constexpr uint64_t bytes_per_sec() const { return bps_ / 8; }
  constexpr bool is_zero() const { return bps_ == 0; }

  // Time to serialise `bytes` at this rate, rounded up to the next nanosecond.
  // Precondition: rate is non-zero (a zero rate is rejected by every Params::validate()).
  constexpr Duration transmit_time(Bytes bytes) const {
    const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * kBitNsPerByteSecond;
    const unsigned __int128 q = (num + bps_ - 1) / bps_;
    return Duration::ns(static_cast<int64_t>(q));
  }

  // Whole bytes this rate carries in `d` (rounded down). Negative durations give 0.
  constexpr Bytes bytes_in(Duration d) const {
    if (d.count_ns() <= 0) {
      return 0;
    }
    const unsigned __int128 num = static_cast<unsigned __int128>(d.count_ns()) * bps_;
    return static_cast<Bytes>(num / kBitNsPerByteSecond);
  }

  friend constexpr auto operator<=>(Rate, Rate) = default;

 private:
  // 8 bits per byte x 1e9 ns per second, as a 128-bit constant (8e9 overflows 32 bits).
  static constexpr unsigned __int128 kBitNsPerByteSecond = 8'000'000'000ull;
  explicit constexpr Rate(uint64_t v) : bps_(v) {}
  uint64_t bps_ = 0;
};

inline namespace literals {
constexpr Rate operator""_kbit(unsigned long long v) { return Rate::kbit(v); }
constexpr Rate operator""_mbit(unsigned long long v) { return Rate::mbit(v); }
constexpr Rate operator""_gbit(unsigned long long v) { return Rate::gbit(v); }
}  // namespace literals

}  // namespace nicsim
