#pragma once
// Strict parsing and exact formatting of values with units, as written in scenario and preset
// files (docs/scenarios.md: units are required).
//
//   durations  "250ns" "136us" "136µs" "1.5ms" "40ms" "1s"         -> Duration (int64 ns)
//   rates      "64kbit" "100Mbit" "1gbit" "10Gbit" "100Mbit/s"      -> Rate (bit/s, SI: 1000)
//              "1mibit" (IEC: 1024^2 bit/s), "12.5mbps" (tc: BYTES per second = 100Mbit)
//   byte sizes "1514B" "18944B" "16KiB" "2MiB" "1kB" "1MB"          -> int64 bytes
//              (KiB/MiB/GiB are 1024-based, kB/MB/GB 1000-based)
//   percent    "0%" "0.5%" "100%"                                    -> parts per billion
//
// Every value needs its unit: "0" or "5" is an error. Results are exact integers: the decimal
// number is scaled with integer arithmetic, so "1.5ms" is exactly 1,500,000 ns, and a value
// finer than the unit of the result ("1.5ns", "0.5B", "1.5bit") is an error, never rounded.
// No sign, no exponent, no spaces, no digit separators. Negative values do not exist here.
//
// Errors are messages that name what was expected and quote the text, e.g.
//   expected a duration with a unit (ns, us, ms, s), got '5'
// The config layer prefixes them with file:line:column and the key path.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"

namespace nicsim::config {

// A parsed value or the reason it could not be parsed.
template <class T>
class Parsed {
 public:
  static Parsed ok(T v) { return Parsed(std::in_place_index<0>, std::move(v)); }
  static Parsed fail(std::string message) {
    return Parsed(std::in_place_index<1>, std::move(message));
  }

  explicit operator bool() const { return v_.index() == 0; }
  const T& value() const { return std::get<0>(v_); }
  const std::string& error() const { return std::get<1>(v_); }

 private:
  template <size_t I, class U>
  Parsed(std::in_place_index_t<I> i, U&& u) : v_(i, std::forward<U>(u)) {}
  std::variant<T, std::string> v_;
};

// Durations: ns, us (or µs), ms, s. Result in whole nanoseconds.
Parsed<Duration> parse_duration(std::string_view text);
// Rates: every suffix tc accepts (iproute2 tc/tc_util.c get_rate), case-insensitive as in tc:
// bit, kbit, mbit, gbit, tbit (x1000), kibit, mibit, gibit, tibit (x1024), and bps, kbps,
// mbps, gbps, tbps, kibps..tibps, which are BYTES per second as in tc (x8); plus the bit units
// followed by "/s" ("100Mbit/s"). A bare number (tc: bit/s) is refused: units are required.
// Whole bit/s.
Parsed<Rate> parse_rate(std::string_view text);
// Byte sizes: B, kB, MB, GB (x1000), KiB, MiB, GiB (x1024). Whole bytes.
Parsed<int64_t> parse_bytes(std::string_view text);
// Percentages in [0%, 100%], as parts per billion (0.5% = 5,000,000). Whole ppb.
Parsed<int64_t> parse_percent_ppb(std::string_view text);

// Exact, shortest-unit formatting; parse(format(x)) == x for every value >= 0.
//   format_duration: the largest of s/ms/us/ns not larger than the value, with as many decimals
//     as needed ("1.5ms", "136.533us", "40ms", "0s").
//   format_rate: the largest of Tbit/Gbit/Mbit/kbit/bit, decimals as needed ("1.5Gbit").
//   format_bytes: "NMiB" or "NKiB" when exact, else "NB" (no decimals: "18944B", "16KiB").
//   format_percent_ppb: "0.5%".
std::string format_duration(Duration d);
std::string format_rate(Rate r);
std::string format_bytes(int64_t bytes);
std::string format_percent_ppb(int64_t ppb);

}  // namespace nicsim::config
