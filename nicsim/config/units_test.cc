// Units: exact integer results, every error case with the message naming what was expected
// (docs/scenarios.md: units are required and written out).

#include "nicsim/config/units.h"

#include <gtest/gtest.h>

#include <string>

namespace nicsim::config {
namespace {

Duration dur(std::string_view s) {
  auto p = parse_duration(s);
  EXPECT_TRUE(p) << s << ": " << (p ? "" : p.error());
  return p ? p.value() : Duration::zero();
}

std::string dur_error(std::string_view s) {
  auto p = parse_duration(s);
  EXPECT_FALSE(p) << s;
  return p ? "" : p.error();
}

TEST(Units, DurationsAreExactNanoseconds) {
  EXPECT_EQ(dur("136us").count_ns(), 136'000);
  EXPECT_EQ(dur("1.5ms").count_ns(), 1'500'000);  // exactly, no float rounding
  EXPECT_EQ(dur("40ms").count_ns(), 40'000'000);
  EXPECT_EQ(dur("1s").count_ns(), 1'000'000'000);
  EXPECT_EQ(dur("250ns").count_ns(), 250);
  EXPECT_EQ(dur("0ms").count_ns(), 0);
  EXPECT_EQ(dur("136.533us").count_ns(), 136'533);     // BULK_IN_DLY 0x2000 x 16.667 ns
  EXPECT_EQ(dur("0.000000001s").count_ns(), 1);        // 1 ns written in seconds
  EXPECT_EQ(dur("1.500000ms").count_ns(), 1'500'000);  // trailing zeros are not precision
  EXPECT_EQ(dur("0.1s").count_ns(), 100'000'000);      // 0.1 is not representable in binary
  EXPECT_EQ(dur("391.7us").count_ns(), 391'700);
  EXPECT_EQ(dur("136\xC2\xB5s").count_ns(), 136'000);  // µs
  EXPECT_EQ(dur("007ms").count_ns(), 7'000'000);
  EXPECT_EQ(dur("9223372036854775807ns").count_ns(), INT64_MAX);
  EXPECT_EQ(dur("9223372036.854775807s").count_ns(), INT64_MAX);
}

TEST(Units, DurationErrorsNameTheExpectedForm) {
  const std::string expected = "expected a duration with a unit (ns, us, ms, s), got ";
  EXPECT_EQ(dur_error("5"), expected + "'5'");
  EXPECT_EQ(dur_error("0"), expected + "'0'");  // zero needs a unit too
  EXPECT_EQ(dur_error(""), expected + "''");
  EXPECT_EQ(dur_error("ms"), expected + "'ms'");
  EXPECT_EQ(dur_error("5 ms"), expected + "'5 ms'");
  EXPECT_EQ(dur_error("-5ms"), expected + "'-5ms'");
  EXPECT_EQ(dur_error("+5ms"), expected + "'+5ms'");
  EXPECT_EQ(dur_error("5min"), expected + "'5min'");
  EXPECT_EQ(dur_error("1e3ms"), expected + "'1e3ms'");
  EXPECT_EQ(dur_error(".5ms"), expected + "'.5ms'");
  EXPECT_EQ(dur_error("5.ms"), expected + "'5.ms'");
  EXPECT_EQ(dur_error("1,5ms"), expected + "'1,5ms'");
  EXPECT_EQ(dur_error("5MS"), expected + "'5MS' (units are case-sensitive: write 'ms')");
  EXPECT_EQ(dur_error("1.5ns"), "'1.5ns' is finer than 1 ns (durations are whole nanoseconds)");
  EXPECT_EQ(dur_error("0.0000000001s"),
            "'0.0000000001s' is finer than 1 ns (durations are whole nanoseconds)");
  EXPECT_EQ(dur_error("9223372036854775808ns"),
            "'9223372036854775808ns' is too large (at most 292 years)");
  EXPECT_EQ(dur_error("100000000000000000000000s"),
            "'100000000000000000000000s' is too large (at most 292 years)");
}

TEST(Units, RatesAreExactBitsPerSecondWithSiMultiples) {
  auto bps = [](std::string_view s) {
    auto p = parse_rate(s);
    EXPECT_TRUE(p) << s << ": " << (p ? "" : p.error());
    return p ? p.value().bits_per_sec() : 0;
  };
  EXPECT_EQ(bps("100Mbit"), 100'000'000u);
  EXPECT_EQ(bps("1Gbit"), 1'000'000'000u);
  EXPECT_EQ(bps("300Mbit"), 300'000'000u);
  EXPECT_EQ(bps("10Gbit"), 10'000'000'000u);
  EXPECT_EQ(bps("64kbit"), 64'000u);
  EXPECT_EQ(bps("100Mbit/s"), 100'000'000u);
  EXPECT_EQ(bps("12bit/s"), 12u);
  EXPECT_EQ(bps("1.5Gbit"), 1'500'000'000u);
  EXPECT_EQ(bps("2.5Tbit"), 2'500'000'000'000u);
  EXPECT_EQ(bps("0bit"), 0u);  // parses; validate() rejects a zero rate where one is needed
}

// Every suffix of iproute2 tc/tc_util.c get_rate, with tc's meaning, in any case (strcasecmp).
TEST(Units, RatesAcceptEveryTcSpellingWithTcsMeaning) {
  auto bps = [](std::string_view s) {
    auto p = parse_rate(s);
    EXPECT_TRUE(p) << s << ": " << (p ? "" : p.error());
    return p ? p.value().bits_per_sec() : 0;
  };
  constexpr uint64_t kKi = 1024;
  // bit units, SI
  EXPECT_EQ(bps("1000bit"), 1'000u);
  EXPECT_EQ(bps("64kbit"), 64'000u);
  EXPECT_EQ(bps("100mbit"), 100'000'000u);
  EXPECT_EQ(bps("1gbit"), 1'000'000'000u);
  EXPECT_EQ(bps("2tbit"), 2'000'000'000'000u);
  // bit units, IEC
  EXPECT_EQ(bps("1kibit"), kKi);
  EXPECT_EQ(bps("1mibit"), kKi * kKi);
  EXPECT_EQ(bps("1gibit"), kKi * kKi * kKi);
  EXPECT_EQ(bps("1tibit"), kKi * kKi * kKi * kKi);
  // bps units: BYTES per second, as in tc
  EXPECT_EQ(bps("1bps"), 8u);
  EXPECT_EQ(bps("1kbps"), 8'000u);
  EXPECT_EQ(bps("12.5mbps"), 100'000'000u);
  EXPECT_EQ(bps("1gbps"), 8'000'000'000u);
  EXPECT_EQ(bps("1tbps"), 8'000'000'000'000u);
  EXPECT_EQ(bps("1kibps"), 8 * kKi);
  EXPECT_EQ(bps("1mibps"), 8 * kKi * kKi);
  EXPECT_EQ(bps("1gibps"), 8 * kKi * kKi * kKi);
  EXPECT_EQ(bps("1tibps"), 8 * kKi * kKi * kKi * kKi);
  // case-insensitive, as tc
  EXPECT_EQ(bps("100MBIT"), 100'000'000u);
  EXPECT_EQ(bps("100Kbit"), 100'000u);
  EXPECT_EQ(bps("1KiBit"), kKi);
  EXPECT_EQ(bps("100Mbps"), 800'000'000u);
  EXPECT_EQ(bps("100MBps"), 800'000'000u);
  EXPECT_EQ(bps("1MiBps"), 8 * kKi * kKi);
  EXPECT_EQ(bps("100mbit/s"), 100'000'000u);
}

TEST(Units, RateErrors) {
  auto err = [](std::string_view s) {
    auto p = parse_rate(s);
    EXPECT_FALSE(p) << s;
    return p ? std::string() : p.error();
  };
  const std::string expected =
      "expected a rate with a unit as tc writes it (bit, kbit, mbit, gbit, tbit, kibit..tibit; "
      "bps, kbps, mbps, gbps, tbps, kibps..tibps = bytes per second), got ";
  EXPECT_EQ(err("100"), expected + "'100'");  // tc reads bit/s; units are required here
  EXPECT_EQ(err("100MB/s"), expected + "'100MB/s'");
  EXPECT_EQ(err("100mbps/s"), expected + "'100mbps/s'");
  EXPECT_EQ(err("100kb"), expected + "'100kb'");
  EXPECT_EQ(err("1e6bit"), expected + "'1e6bit'");
  EXPECT_EQ(err("0.1bps"), "'0.1bps' is finer than 1 bit/s (rates are whole bit/s)");
  EXPECT_EQ(err("1.5bit"), "'1.5bit' is finer than 1 bit/s (rates are whole bit/s)");
  EXPECT_EQ(err("20000000Tbit"), "'20000000Tbit' is too large");
}

TEST(Units, ByteSizesBinaryAndDecimal) {
  auto b = [](std::string_view s) {
    auto p = parse_bytes(s);
    EXPECT_TRUE(p) << s << ": " << (p ? "" : p.error());
    return p ? p.value() : -1;
  };
  EXPECT_EQ(b("16KiB"), 16'384);
  EXPECT_EQ(b("18944B"), 18'944);
  EXPECT_EQ(b("2MiB"), 2'097'152);
  EXPECT_EQ(b("1514B"), 1514);
  EXPECT_EQ(b("1kB"), 1000);
  EXPECT_EQ(b("1MB"), 1'000'000);
  EXPECT_EQ(b("1GB"), 1'000'000'000);
  EXPECT_EQ(b("1GiB"), 1'073'741'824);
  EXPECT_EQ(b("18.5KiB"), 18'944);  // exact: 18.5 x 1024
  EXPECT_EQ(b("0B"), 0);
}

TEST(Units, ByteSizeErrors) {
  auto err = [](std::string_view s) {
    auto p = parse_bytes(s);
    EXPECT_FALSE(p) << s;
    return p ? std::string() : p.error();
  };
  const std::string expected =
      "expected a byte size with a unit (B, kB, MB, GB, KiB, MiB, GiB), got ";
  EXPECT_EQ(err("1514"), expected + "'1514'");
  EXPECT_EQ(err("16KB"),  // ambiguous: neither kB nor KiB
            expected + "'16KB' (units are case-sensitive: 'kB' is 1000 B, 'KiB' is 1024 B)");
  EXPECT_EQ(err("16kib"), expected + "'16kib' (units are case-sensitive: write 'KiB')");
  EXPECT_EQ(err("16 KiB"), expected + "'16 KiB'");
  EXPECT_EQ(err("0.5B"), "'0.5B' is not a whole number of bytes");
  EXPECT_EQ(err("1.0001KiB"), "'1.0001KiB' is not a whole number of bytes");
  EXPECT_EQ(err("9000000000GiB"), "'9000000000GiB' is too large");
}

TEST(Units, PercentagesInPartsPerBillion) {
  auto ppb = [](std::string_view s) {
    auto p = parse_percent_ppb(s);
    EXPECT_TRUE(p) << s << ": " << (p ? "" : p.error());
    return p ? p.value() : -1;
  };
  EXPECT_EQ(ppb("0%"), 0);
  EXPECT_EQ(ppb("0.5%"), 5'000'000);
  EXPECT_EQ(ppb("100%"), 1'000'000'000);
  EXPECT_EQ(ppb("0.0000001%"), 1);
  auto err = [](std::string_view s) {
    auto p = parse_percent_ppb(s);
    EXPECT_FALSE(p) << s;
    return p ? std::string() : p.error();
  };
  EXPECT_EQ(err("0"), "expected a percentage like '0.5%', got '0'");
  EXPECT_EQ(err("0.5"), "expected a percentage like '0.5%', got '0.5'");
  EXPECT_EQ(err("101%"), "'101%' is more than 100%");
  EXPECT_EQ(err("0.00000001%"), "'0.00000001%' is finer than 0.0000001% (one part per billion)");
}

TEST(Units, FormattingIsExactAndRoundTrips) {
  EXPECT_EQ(format_duration(Duration::ns(1'500'000)), "1.5ms");
  EXPECT_EQ(format_duration(Duration::ns(136'533)), "136.533us");
  EXPECT_EQ(format_duration(Duration::ms(40)), "40ms");
  EXPECT_EQ(format_duration(Duration::s(1)), "1s");
  EXPECT_EQ(format_duration(Duration::ns(250)), "250ns");
  EXPECT_EQ(format_duration(Duration::zero()), "0s");
  EXPECT_EQ(format_duration(Duration::ns(1'000'000'001)), "1.000000001s");
  EXPECT_EQ(format_rate(Rate::mbit(100)), "100Mbit");
  EXPECT_EQ(format_rate(Rate::bps(1'500'000'000)), "1.5Gbit");
  EXPECT_EQ(format_rate(Rate::bps(12)), "12bit");
  EXPECT_EQ(format_rate(Rate{}), "0bit");
  EXPECT_EQ(format_bytes(18'944), "18944B");
  EXPECT_EQ(format_bytes(16'384), "16KiB");
  EXPECT_EQ(format_bytes(2 * 1024 * 1024), "2MiB");
  EXPECT_EQ(format_bytes(1514), "1514B");
  EXPECT_EQ(format_bytes(0), "0B");
  EXPECT_EQ(format_percent_ppb(5'000'000), "0.5%");
  EXPECT_EQ(format_percent_ppb(0), "0%");
  EXPECT_EQ(format_percent_ppb(1), "0.0000001%");

  // Negative values (never parsed, only possible in hand-made Params) print without overflow.
  EXPECT_EQ(format_duration(Duration::ns(INT64_MIN)), "-9223372036.854775808s");
  EXPECT_EQ(format_bytes(INT64_MIN), "-9223372036854775808B");

  // parse(format(x)) == x over a spread of values, including awkward ones.
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1'001}, int64_t{123'456'789},
                     int64_t{1'000'000'007}, INT64_MAX}) {
    EXPECT_EQ(dur(format_duration(Duration::ns(ns))).count_ns(), ns) << ns;
  }
  for (uint64_t bps : {uint64_t{0}, uint64_t{7}, uint64_t{64'000}, uint64_t{123'456'789},
                       uint64_t{10'000'000'001}, UINT64_MAX}) {
    auto p = parse_rate(format_rate(Rate::bps(bps)));
    ASSERT_TRUE(p) << bps;
    EXPECT_EQ(p.value().bits_per_sec(), bps);
  }
  for (int64_t bytes : {int64_t{0}, int64_t{1}, int64_t{1023}, int64_t{1024}, int64_t{18'944},
                        int64_t{3 * 1024 * 1024}, INT64_MAX}) {
    auto p = parse_bytes(format_bytes(bytes));
    ASSERT_TRUE(p) << bytes;
    EXPECT_EQ(p.value(), bytes);
  }
}

}  // namespace
}  // namespace nicsim::config
