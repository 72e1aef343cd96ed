#include "nicsim/config/units.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace nicsim::config {
namespace {

using u128 = unsigned __int128;

struct Unit {
  std::string_view suffix;
  uint64_t scale;  // multiples of the result's base unit
};

// A decimal number followed by a unit suffix: "1.5ms" -> {"1", "5", "ms"}.
struct Decimal {
  std::string_view int_digits;
  std::string_view frac_digits;
  std::string_view unit;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<Decimal> split_decimal(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_digit(s[i])) {
    ++i;
  }
  if (i == 0) {
    return std::nullopt;
  }
  Decimal d;
  d.int_digits = s.substr(0, i);
  if (i < s.size() && s[i] == '.') {
    const size_t start = ++i;
    while (i < s.size() && is_digit(s[i])) {
      ++i;
    }
    if (i == start) {
      return std::nullopt;  // "1." is not a number
    }
    d.frac_digits = s.substr(start, i - start);
  }
  d.unit = s.substr(i);
  if (d.unit.empty()) {
    return std::nullopt;  // a unit is required
  }
  return d;
}

enum class ScaleError { kNone, kTooFine, kTooLarge };

// value = int_digits.frac_digits x scale, exactly. Fails if the result is not a whole number
// or exceeds `max`.
ScaleError scale_exact(const Decimal& d, uint64_t scale, uint64_t max, uint64_t& out) {
  // Leading zeros are harmless; bound the significant digits so u128 cannot overflow:
  // int < 10^20 and scale <= 10^12 keep the product below 10^32 < 2^128.
  std::string_view int_digits = d.int_digits;
  while (int_digits.size() > 1 && int_digits.front() == '0') {
    int_digits.remove_prefix(1);
  }
  std::string_view frac = d.frac_digits;
  while (!frac.empty() && frac.back() == '0') {
    frac.remove_suffix(1);  // "1.500ms" == "1.5ms"
  }
  if (int_digits.size() > 20) {
    return ScaleError::kTooLarge;
  }
  if (frac.size() > 18) {
    return ScaleError::kTooFine;  // more than 18 significant decimals is finer than any unit
  }
  u128 integer = 0;
  for (char c : int_digits) {
    integer = integer * 10 + static_cast<unsigned>(c - '0');
  }
  u128 fraction = 0;
  u128 denom = 1;
  for (char c : frac) {
    fraction = fraction * 10 + static_cast<unsigned>(c - '0');
    denom *= 10;
  }
  const u128 frac_scaled = fraction * scale;
  if (frac_scaled % denom != 0) {
    return ScaleError::kTooFine;
  }
  const u128 total = integer * scale + frac_scaled / denom;
  if (total > max) {
    return ScaleError::kTooLarge;
  }
  out = static_cast<uint64_t>(total);
  return ScaleError::kNone;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const char x = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    const char y = (b[i] >= 'A' && b[i] <= 'Z') ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) {
      return false;
    }
  }
  return true;
}

enum class Case : uint8_t { kSensitive, kInsensitive };

const Unit* find_unit(std::string_view suffix, const Unit* units, size_t n,
                      Case c = Case::kSensitive) {
  for (size_t i = 0; i < n; ++i) {
    if (c == Case::kSensitive ? units[i].suffix == suffix : iequals(units[i].suffix, suffix)) {
      return &units[i];
    }
  }
  return nullptr;
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// A hint when the suffix is a known unit in the wrong case ("mbit", "kb").
std::string case_hint(std::string_view suffix, const Unit* units, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (iequals(units[i].suffix, suffix)) {
      return " (units are case-sensitive: write '" + std::string(units[i].suffix) + "')";
    }
  }
  return "";
}

constexpr std::array<Unit, 5> kDurationUnits = {
    {{"ns", 1}, {"us", 1'000}, {"\xC2\xB5s", 1'000}, {"ms", 1'000'000}, {"s", 1'000'000'000}}};
// tc's rate suffixes (iproute2 tc/tc_util.c get_rate, matched with strcasecmp): bit units SI
// (kbit = 1000) or IEC (kibit = 1024), and "bps" units that are BYTES per second as in tc
// (mbps = 8,000,000 bit/s). Plus this project's "/s" forms of the bit units ("100Mbit/s").
// Matched case-insensitively, as tc does.
constexpr uint64_t kKi = 1024;
constexpr std::array<Unit, 23> kRateUnits = {{{"bit", 1},
                                              {"kbit", 1'000},
                                              {"Mbit", 1'000'000},
                                              {"Gbit", 1'000'000'000},
                                              {"Tbit", 1'000'000'000'000},
                                              {"Kibit", kKi},
                                              {"Mibit", kKi* kKi},
                                              {"Gibit", kKi* kKi* kKi},
                                              {"Tibit", kKi* kKi* kKi* kKi},
                                              {"Bps", 8},
                                              {"KBps", 8 * 1'000},
                                              {"MBps", 8 * 1'000'000},
                                              {"GBps", 8 * 1'000'000'000ULL},
                                              {"TBps", 8 * 1'000'000'000'000ULL},
                                              {"KiBps", 8 * kKi},
                                              {"MiBps", 8 * kKi* kKi},
                                              {"GiBps", 8 * kKi* kKi* kKi},
                                              {"TiBps", 8 * kKi* kKi* kKi* kKi},
                                              {"bit/s", 1},
                                              {"kbit/s", 1'000},
                                              {"Mbit/s", 1'000'000},
                                              {"Gbit/s", 1'000'000'000},
                                              {"Tbit/s", 1'000'000'000'000}}};
constexpr std::array<Unit, 7> kByteUnits = {{{"B", 1},
                                             {"kB", 1'000},
                                             {"MB", 1'000'000},
                                             {"GB", 1'000'000'000},
                                             {"KiB", 1024},
                                             {"MiB", 1024 * 1024},
                                             {"GiB", 1024 * 1024 * 1024}}};

constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// Formats value / divisor exactly, trailing zeros of the fraction trimmed.
std::string decimal_string(uint64_t value, uint64_t divisor) {
  std::string s = std::to_string(value / divisor);
  uint64_t rem = value % divisor;
  if (rem != 0) {
    std::string frac;
    for (uint64_t d = divisor / 10; d > 0; d /= 10) {
      frac.push_back(static_cast<char>('0' + (rem / d) % 10));
    }
    while (!frac.empty() && frac.back() == '0') {
      frac.pop_back();
    }
    s += "." + frac;
  }
  return s;
}

// Picks the largest unit whose scale is <= value (the smallest unit for 0 uses `zero_unit`).
std::string format_scaled(uint64_t value, const Unit* units_desc, size_t n,
                          std::string_view zero_unit) {
  if (value == 0) {
    return "0" + std::string(zero_unit);
  }
  for (size_t i = 0; i < n; ++i) {
    if (value >= units_desc[i].scale) {
      return decimal_string(value, units_desc[i].scale) + std::string(units_desc[i].suffix);
    }
  }
  return std::to_string(value) + std::string(units_desc[n - 1].suffix);
}

}  // namespace

Parsed<Duration> parse_duration(std::string_view text) {
  const std::string expected =
      "expected a duration with a unit (ns, us, ms, s), got " + quoted(text);
  const auto d = split_decimal(text);
  if (!d) {
    return Parsed<Duration>::fail(expected);
  }
  const Unit* u = find_unit(d->unit, kDurationUnits.data(), kDurationUnits.size());
  if (u == nullptr) {
    return Parsed<Duration>::fail(expected +
                                  case_hint(d->unit, kDurationUnits.data(), kDurationUnits.size()));
  }
  uint64_t ns = 0;
  switch (scale_exact(*d, u->scale, kInt64Max, ns)) {
    case ScaleError::kTooFine:
      return Parsed<Duration>::fail(quoted(text) +
                                    " is finer than 1 ns (durations are whole nanoseconds)");
    case ScaleError::kTooLarge:
      return Parsed<Duration>::fail(quoted(text) + " is too large (at most 292 years)");
    case ScaleError::kNone:
      break;
  }
  return Parsed<Duration>::ok(Duration::ns(static_cast<int64_t>(ns)));
}

Parsed<Rate> parse_rate(std::string_view text) {
  const std::string expected =
      "expected a rate with a unit as tc writes it (bit, kbit, mbit, gbit, tbit, kibit..tibit; "
      "bps, kbps, mbps, gbps, tbps, kibps..tibps = bytes per second), got " +
      quoted(text);
  const auto d = split_decimal(text);
  if (!d) {
    return Parsed<Rate>::fail(expected);
  }
  const Unit* u = find_unit(d->unit, kRateUnits.data(), kRateUnits.size(), Case::kInsensitive);
  if (u == nullptr) {
    return Parsed<Rate>::fail(expected);
  }
  uint64_t bps = 0;
  switch (scale_exact(*d, u->scale, std::numeric_limits<uint64_t>::max(), bps)) {
    case ScaleError::kTooFine:
      return Parsed<Rate>::fail(quoted(text) + " is finer than 1 bit/s (rates are whole bit/s)");
    case ScaleError::kTooLarge:
      return Parsed<Rate>::fail(quoted(text) + " is too large");
    case ScaleError::kNone:
      break;
  }
  return Parsed<Rate>::ok(Rate::bps(bps));
}

Parsed<int64_t> parse_bytes(std::string_view text) {
  const std::string expected =
      "expected a byte size with a unit (B, kB, MB, GB, KiB, MiB, GiB), got " + quoted(text);
  const auto d = split_decimal(text);
  if (!d) {
    return Parsed<int64_t>::fail(expected);
  }
  const Unit* u = find_unit(d->unit, kByteUnits.data(), kByteUnits.size());
  if (u == nullptr) {
    std::string hint;
    if (iequals(d->unit, "kb") || iequals(d->unit, "mb") || iequals(d->unit, "gb")) {
      hint = " (units are case-sensitive: 'kB' is 1000 B, 'KiB' is 1024 B)";
    } else {
      hint = case_hint(d->unit, kByteUnits.data(), kByteUnits.size());
    }
    return Parsed<int64_t>::fail(expected + hint);
  }
  uint64_t bytes = 0;
  switch (scale_exact(*d, u->scale, kInt64Max, bytes)) {
    case ScaleError::kTooFine:
      return Parsed<int64_t>::fail(quoted(text) + " is not a whole number of bytes");
    case ScaleError::kTooLarge:
      return Parsed<int64_t>::fail(quoted(text) + " is too large");
    case ScaleError::kNone:
      break;
  }
  return Parsed<int64_t>::ok(static_cast<int64_t>(bytes));
}

Parsed<int64_t> parse_percent_ppb(std::string_view text) {
  const std::string expected = "expected a percentage like '0.5%', got " + quoted(text);
  const auto d = split_decimal(text);
  if (!d || d->unit != "%") {
    return Parsed<int64_t>::fail(expected);
  }
  uint64_t ppb = 0;
  // 1% = 10^7 parts per billion.
  switch (scale_exact(*d, 10'000'000, kInt64Max, ppb)) {
    case ScaleError::kTooFine:
      return Parsed<int64_t>::fail(quoted(text) +
                                   " is finer than 0.0000001% (one part per billion)");
    case ScaleError::kTooLarge:
      return Parsed<int64_t>::fail(quoted(text) + " is more than 100%");
    case ScaleError::kNone:
      break;
  }
  if (ppb > 1'000'000'000) {
    return Parsed<int64_t>::fail(quoted(text) + " is more than 100%");
  }
  return Parsed<int64_t>::ok(static_cast<int64_t>(ppb));
}

std::string format_duration(Duration d) {
  static constexpr std::array<Unit, 4> kDesc = {
      {{"s", 1'000'000'000}, {"ms", 1'000'000}, {"us", 1'000}, {"ns", 1}}};
  const int64_t ns = d.count_ns();
  if (ns < 0) {  // not parseable; parsed input is never negative
    return "-" + format_scaled(0 - static_cast<uint64_t>(ns), kDesc.data(), kDesc.size(), "s");
  }
  return format_scaled(static_cast<uint64_t>(ns), kDesc.data(), kDesc.size(), "s");
}

std::string format_rate(Rate r) {
  static constexpr std::array<Unit, 5> kDesc = {{{"Tbit", 1'000'000'000'000},
                                                 {"Gbit", 1'000'000'000},
                                                 {"Mbit", 1'000'000},
                                                 {"kbit", 1'000},
                                                 {"bit", 1}}};
  return format_scaled(r.bits_per_sec(), kDesc.data(), kDesc.size(), "bit");
}

std::string format_bytes(int64_t bytes) {
  if (bytes < 0) {  // not parseable; parsed input is never negative
    return "-" + std::to_string(0 - static_cast<uint64_t>(bytes)) + "B";
  }
  const auto b = static_cast<uint64_t>(bytes);
  if (b != 0 && b % (1024 * 1024) == 0) {
    return std::to_string(b / (1024 * 1024)) + "MiB";
  }
  if (b != 0 && b % 1024 == 0) {
    return std::to_string(b / 1024) + "KiB";
  }
  return std::to_string(b) + "B";
}

std::string format_percent_ppb(int64_t ppb) {
  if (ppb < 0) {  // not parseable; parsed input is never negative
    return "-" + decimal_string(0 - static_cast<uint64_t>(ppb), 10'000'000) + "%";
  }
  return decimal_string(static_cast<uint64_t>(ppb), 10'000'000) + "%";
}

}  // namespace nicsim::config
