#include "nicsim/report/latency_recorder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace nicsim::report {
namespace {

// Type 7 on sorted integer data, in doubles (the reference for the exact mode).
double reference_percentile(const std::vector<int64_t>& v, double q) {
  const double h = static_cast<double>(v.size() - 1) * q / 100.0;
  const auto k = static_cast<size_t>(std::floor(h));
  if (k + 1 >= v.size()) {
    return static_cast<double>(v[k]);
  }
  return static_cast<double>(v[k]) + (h - std::floor(h)) * static_cast<double>(v[k + 1] - v[k]);
}

// Percentile definition on known data: 1..10 ms. numpy.percentile([1..10], [50, 90, 99]) gives
// 5.5, 9.1, 9.91 (type 7, linear interpolation).
TEST(LatencyRecorder, LinearInterpolationPercentilesOnKnownData) {
  LatencyRecorder r;
  for (int64_t ms = 10; ms >= 1; --ms) {  // order of arrival does not matter
    r.add(Duration::ms(ms));
  }
  const LatencyStats s = r.stats();
  EXPECT_EQ(s.count, 10u);
  EXPECT_EQ(s.lost, 0u);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.p50, 5.5);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_DOUBLE_EQ(s.p99, 9.91);
  // Population standard deviation: sqrt(E[x^2] - E[x]^2) = sqrt(38.5 - 30.25).
  EXPECT_DOUBLE_EQ(s.mdev, std::sqrt(8.25));
  EXPECT_DOUBLE_EQ(r.percentile_ns(0), 1e6);
  EXPECT_DOUBLE_EQ(r.percentile_ns(100), 10e6);
  EXPECT_DOUBLE_EQ(r.percentile_ns(25), 3.25e6);  // h = 2.25
}

// The median agrees with irtt's and numpy's: middle sample for odd n, mean of the two middle
// samples for even n.
TEST(LatencyRecorder, MedianOddAndEven) {
  LatencyRecorder odd;
  for (int64_t us : {300, 100, 200}) {
    odd.add(Duration::us(us));
  }
  EXPECT_DOUBLE_EQ(odd.stats().p50, 0.2);
  LatencyRecorder even;
  for (int64_t us : {400, 100, 300, 200}) {
    even.add(Duration::us(us));
  }
  EXPECT_DOUBLE_EQ(even.stats().p50, 0.25);
}

TEST(LatencyRecorder, SingleSampleAndEmpty) {
  LatencyRecorder one;
  one.add(Duration::ns(432'000));
  const LatencyStats s = one.stats();
  EXPECT_EQ(s.min, 0.432);  // ns / 1e6 is the double nearest 0.432
  EXPECT_EQ(s.p50, 0.432);
  EXPECT_EQ(s.p99, 0.432);
  EXPECT_EQ(s.max, 0.432);
  EXPECT_EQ(s.mean, 0.432);
  EXPECT_EQ(s.mdev, 0.0);

  LatencyRecorder none;
  none.add_loss(3);
  const LatencyStats e = none.stats();
  EXPECT_EQ(e, (LatencyStats{.count = 0, .lost = 3}));
  EXPECT_EQ(none.percentile_ns(50), 0.0);
}

// ping's mdev for microsecond samples 49, 37, 58: sqrt(7134/3 - 48^2) = sqrt(74) µs.
TEST(LatencyRecorder, MdevIsPopulationStandardDeviation) {
  LatencyRecorder r;
  for (int64_t us : {49, 37, 58}) {
    r.add(Duration::us(us));
  }
  r.add_loss();
  const LatencyStats s = r.stats();
  EXPECT_DOUBLE_EQ(s.mean, 0.048);
  EXPECT_NEAR(s.mdev, std::sqrt(74.0) / 1000, 1e-15);
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.lost, 1u);
}

TEST(LatencyRecorder, ExactModeMatchesReferenceOnRandomData) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> dist(0, 50'000'000);
  for (int n : {1, 2, 3, 17, 1000}) {
    LatencyRecorder r;
    std::vector<int64_t> v;
    for (int i = 0; i < n; ++i) {
      v.push_back(dist(rng));
      r.add(Duration::ns(v.back()));
    }
    ASSERT_TRUE(r.exact());
    std::sort(v.begin(), v.end());
    for (double q : {0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
      EXPECT_DOUBLE_EQ(r.percentile_ns(q), reference_percentile(v, q)) << "n=" << n << " q=" << q;
    }
  }
}

// Mergeable: merging gives the same statistics as recording everything in one recorder, in both
// modes, and in any merge order.
TEST(LatencyRecorder, MergeEqualsSingleRecorder) {
  for (size_t limit : {size_t{100000}, size_t{50}}) {
    std::mt19937_64 rng(11);
    std::lognormal_distribution<double> dist(13.0, 1.5);  // ~0.44 ms median, heavy tail
    LatencyRecorder all(limit);
    LatencyRecorder parts[3] = {LatencyRecorder(limit), LatencyRecorder(limit),
                                LatencyRecorder(limit)};
    for (int i = 0; i < 3000; ++i) {
      const auto d = Duration::ns(static_cast<int64_t>(dist(rng)));
      all.add(d);
      parts[i % 3 == 0 ? 0 : (i % 7 == 0 ? 1 : 2)].add(d);
      if (i % 100 == 0) {
        all.add_loss();
        parts[1].add_loss();
      }
    }
    LatencyRecorder ab(limit);
    ab.merge(parts[0]);
    ab.merge(parts[1]);
    ab.merge(parts[2]);
    LatencyRecorder ba(limit);
    ba.merge(parts[2]);
    ba.merge(parts[1]);
    ba.merge(parts[0]);
    EXPECT_EQ(ab.exact(), limit > 3000);
    EXPECT_EQ(ab.stats(), all.stats()) << "limit " << limit;
    EXPECT_EQ(ba.stats(), all.stats()) << "limit " << limit;
    EXPECT_EQ(ab.count(), 3000u);
    EXPECT_EQ(ab.lost(), 30u);
  }
}

TEST(LatencyRecorder, MergeWithItselfDoublesTheSamples) {
  LatencyRecorder r;
  r.add(1_ms);
  r.add(3_ms);
  r.add_loss();
  r.merge(r);
  const LatencyStats s = r.stats();
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.lost, 2u);
  EXPECT_DOUBLE_EQ(s.p50, 2.0);  // 1, 1, 3, 3
}

// The mode depends only on the count: exact up to exact_limit samples, histogram after.
TEST(LatencyRecorder, SwitchesToHistogramAfterExactLimit) {
  LatencyRecorder r(4);
  for (int i = 1; i <= 4; ++i) {
    r.add(Duration::us(i));
  }
  EXPECT_TRUE(r.exact());
  r.add(Duration::us(5));
  EXPECT_FALSE(r.exact());
  r.clear();
  EXPECT_TRUE(r.exact());
  EXPECT_EQ(r.count(), 0u);
}

// Histogram geometry: buckets tile the integers, values below 2048 ns are exact, and a bucket's
// width is at most 1/1024 of its lower edge.
TEST(LatencyRecorder, BucketGeometry) {
  for (size_t i = 0; i + 1 < 40'000; ++i) {
    ASSERT_EQ(LatencyRecorder::bucket_lower(i + 1),
              LatencyRecorder::bucket_lower(i) + LatencyRecorder::bucket_width(i))
        << i;
    if (i >= LatencyRecorder::kLinearLimit) {
      ASSERT_LE(LatencyRecorder::bucket_width(i) * 1024, LatencyRecorder::bucket_lower(i)) << i;
    } else {
      ASSERT_EQ(LatencyRecorder::bucket_width(i), 1u);
    }
  }
  std::mt19937_64 rng(3);
  for (int k = 0; k < 100'000; ++k) {
    const uint64_t v = rng() >> (rng() % 64);
    const size_t i = LatencyRecorder::bucket_index(v);
    ASSERT_LE(LatencyRecorder::bucket_lower(i), v);
    ASSERT_LT(v - LatencyRecorder::bucket_lower(i), LatencyRecorder::bucket_width(i));
  }
  EXPECT_EQ(LatencyRecorder::bucket_index(2047), 2047u);
  EXPECT_EQ(LatencyRecorder::bucket_index(2048), 2048u);
  EXPECT_EQ(LatencyRecorder::bucket_index(2049), 2048u);  // width 2 from 2048
  EXPECT_EQ(LatencyRecorder::bucket_index(4096), 2048u + 1024u);
  EXPECT_EQ(LatencyRecorder::bucket_index(UINT64_MAX), 2048u + 53u * 1024u - 1u);
}

// Bounded memory: a million samples spread over 1 µs .. 10 s stay within the documented memory
// and every percentile is within 1/2048 (0.049 %) of the exact one; min, max, mean, mdev, count
// stay exact.
TEST(LatencyRecorder, HistogramModeErrorBoundAndMemory) {
  constexpr size_t kLimit = 1000;
  LatencyRecorder r(kLimit);
  LatencyRecorder exact(2'000'000);
  std::vector<int64_t> v;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> log10_ns(3.0, 10.0);
  for (int i = 0; i < 1'000'000; ++i) {
    v.push_back(static_cast<int64_t>(std::pow(10.0, log10_ns(rng))));
    r.add(Duration::ns(v.back()));
    exact.add(Duration::ns(v.back()));
  }
  ASSERT_FALSE(r.exact());
  // 10 s < 2^34 ns: buckets up to octave 33 -> 2048 + 23 * 1024 counters of 8 bytes.
  EXPECT_LE(r.memory_bytes(), (2048u + 23u * 1024u) * 8u);
  EXPECT_LE(r.memory_bytes(), 450u * 1024u);
  std::sort(v.begin(), v.end());
  for (double q : {0.0, 0.1, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    const double truth = reference_percentile(v, q);
    const double got = r.percentile_ns(q);
    EXPECT_LE(std::abs(got - truth), truth / 2048.0) << "q=" << q;
  }
  std::uniform_real_distribution<double> any_q(0.0, 100.0);
  for (int k = 0; k < 200; ++k) {
    const double q = any_q(rng);
    const double truth = reference_percentile(v, q);
    ASSERT_LE(std::abs(r.percentile_ns(q) - truth), truth / 2048.0) << "q=" << q;
  }
  const LatencyStats s = r.stats();
  const LatencyStats e = exact.stats();
  EXPECT_EQ(s.min, e.min);
  EXPECT_EQ(s.max, e.max);
  EXPECT_EQ(s.mean, e.mean);
  EXPECT_EQ(s.mdev, e.mdev);
  EXPECT_EQ(s.count, e.count);
  EXPECT_LE(std::abs(s.p99 - e.p99), e.p99 / 2048.0);
}

// Negative samples (one-way delay with an offset clock) in both modes.
TEST(LatencyRecorder, NegativeSamples) {
  for (size_t limit : {size_t{1000}, size_t{0}}) {
    LatencyRecorder r(limit);
    std::vector<int64_t> v;
    for (int64_t x = -50'000; x <= 50'000; x += 1000) {
      v.push_back(x);
      r.add(Duration::ns(x));
    }
    EXPECT_EQ(r.exact(), limit > v.size());
    std::sort(v.begin(), v.end());
    for (double q : {0.0, 10.0, 50.0, 90.0, 100.0}) {
      const double truth = reference_percentile(v, q);
      EXPECT_LE(std::abs(r.percentile_ns(q) - truth), std::abs(truth) / 2048.0)
          << "limit " << limit << " q " << q;
    }
    EXPECT_EQ(r.min(), Duration::ns(-50'000));
    EXPECT_EQ(r.mean_ns(), 0.0);
  }
}

}  // namespace
}  // namespace nicsim::report
