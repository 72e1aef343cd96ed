#pragma once
// LatencyRecorder — accumulates latency samples (Duration, exact integer nanoseconds) and losses
// and produces LatencyStats (min, mean, p50, p90, p99, max, mdev, count, lost) in milliseconds.
//
// Percentile definition: linear interpolation between order statistics, i.e. numpy.percentile's
// default ("linear", Hyndman & Fan type 7): with the n samples sorted x[0] <= ... <= x[n-1] and
// h = (n - 1) * q / 100, P(q) = x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]).
// Why: flent computes its statistics with numpy (median, percentile), and irtt's median is the
// mean of the two middle samples for even n, which is exactly type 7 at q = 50; ping prints no
// percentiles. P(0) = min, P(100) = max, and one sample gives that sample for every q.
//
// mean and mdev are exact (integer sums of nanoseconds and their squares in 128 bits). mdev is
// the population standard deviation sqrt(E[x^2] - E[x]^2), which is what Linux ping calls
// "mdev" and FreeBSD ping "stddev".
//
// Memory bound: the first `exact_limit` samples (default 65536, 512 KiB) are kept and
// percentiles are exact. Beyond that the recorder switches for good to a log-linear histogram of
// nanoseconds: values below 2048 ns each have a bucket of width 1 ns (exact); a value in
// [2^e, 2^(e+1)), e >= 11, falls in one of 1024 equal buckets of width 2^(e-10), so a bucket's
// width is at most 1/1024 of its lower edge. A percentile is computed from bucket midpoints,
// so its relative error is at most 1/2048 (< 0.05 %, within the required 0.1 %) — also for
// interpolated percentiles, which are convex combinations of two midpoints. Histogram memory
// grows with the largest magnitude seen: 8 bytes x (2048 + 1024 x (floor(log2 max) - 10)) per
// sign, e.g. 168 KiB for latencies up to 1 s, at most 440 KiB for any int64. min, max, mean,
// mdev, count and lost stay exact in both modes.
//
// Mergeable: merge(other) gives the same statistics as recording both sample streams into one
// recorder, in any order (the mode depends only on the total count: exact while
// count <= exact_limit). Negative samples (a one-way delay under a skewed clock) are recorded
// in a mirrored histogram; samples must satisfy |x| < 2^63 ns.
//
// Performance: add() is O(1) amortised (a push_back, or an index computation and an increment);
// stats() sorts a copy of the exact samples (O(n log n), n <= exact_limit) or walks the buckets.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nicsim/core/time.h"
#include "nicsim/report/results.h"

namespace nicsim::report {

class LatencyRecorder {
 public:
  static constexpr size_t kDefaultExactLimit = 65536;
  // Histogram geometry (see above).
  static constexpr int kSubBucketBits = 10;  // 1024 buckets per octave
  static constexpr uint64_t kLinearLimit = uint64_t{2} << kSubBucketBits;  // 2048 ns

  LatencyRecorder() : LatencyRecorder(kDefaultExactLimit) {}
  explicit LatencyRecorder(size_t exact_limit) : exact_limit_(exact_limit) {}

  void add(Duration sample);
  void add_loss(uint64_t n = 1) { lost_ += n; }
  // Adds other's samples and losses. Equivalent to having recorded them here.
  void merge(const LatencyRecorder& other);
  void clear();

  uint64_t count() const { return count_; }
  uint64_t lost() const { return lost_; }
  bool exact() const { return !histogram_; }
  size_t exact_limit() const { return exact_limit_; }
  Duration min() const { return Duration::ns(min_ns_); }  // Duration::zero() when empty
  Duration max() const { return Duration::ns(max_ns_); }
  double mean_ns() const;
  double mdev_ns() const;
  // Percentile q in [0, 100], in nanoseconds (type 7, see above). 0 when empty.
  double percentile_ns(double q) const;
  LatencyStats stats() const;
  // Bytes of sample and bucket storage currently allocated.
  size_t memory_bytes() const;

  // Histogram bucket of magnitude v (exposed for tests): index, lower edge, width in ns.
  static size_t bucket_index(uint64_t v);
  static uint64_t bucket_lower(size_t index);
  static uint64_t bucket_width(size_t index);

 private:
  void to_histogram();
  void add_to_histogram(int64_t v, uint64_t count);
  // The k-th smallest sample (0-based); in histogram mode its bucket's midpoint.
  double order_statistic(uint64_t k, const std::vector<int64_t>* sorted) const;

  size_t exact_limit_;
  bool histogram_ = false;
  std::vector<int64_t> samples_;    // exact mode
  std::vector<uint64_t> positive_;  // histogram mode: counts by bucket of v >= 0
  std::vector<uint64_t> negative_;  // histogram mode: counts by bucket of -v, v < 0
  uint64_t count_ = 0;
  uint64_t lost_ = 0;
  int64_t min_ns_ = 0;
  int64_t max_ns_ = 0;
  __int128 sum_ns_ = 0;
  unsigned __int128 sum_sq_ns_ = 0;
};

// Nanoseconds -> milliseconds as the correctly rounded quotient (ns / 1e6), so 432000 ns gives
// exactly the double nearest 0.432 (multiplying by 1e-6 would not).
constexpr double ns_to_ms(double ns) { return ns / 1e6; }

}  // namespace nicsim::report
