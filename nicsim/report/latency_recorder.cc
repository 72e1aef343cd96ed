#include "nicsim/report/latency_recorder.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace nicsim::report {

namespace {

uint64_t magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

}  // namespace

size_t LatencyRecorder::bucket_index(uint64_t v) {
  if (v < kLinearLimit) {
    return static_cast<size_t>(v);
  }
  const int e = 63 - std::countl_zero(v);  // >= 11
  const uint64_t sub = (v >> (e - kSubBucketBits)) & ((uint64_t{1} << kSubBucketBits) - 1);
  return static_cast<size_t>(kLinearLimit + (static_cast<uint64_t>(e) - 11) * 1024 + sub);
}

uint64_t LatencyRecorder::bucket_lower(size_t index) {
  if (index < kLinearLimit) {
    return index;
  }
  const uint64_t k = index - kLinearLimit;
  const int e = 11 + static_cast<int>(k / 1024);
  const uint64_t sub = k % 1024;
  return (uint64_t{1024} + sub) << (e - kSubBucketBits);
}

uint64_t LatencyRecorder::bucket_width(size_t index) {
  if (index < kLinearLimit) {
    return 1;
  }
  const int e = 11 + static_cast<int>((index - kLinearLimit) / 1024);
  return uint64_t{1} << (e - kSubBucketBits);
}

void LatencyRecorder::add(Duration sample) {
  const int64_t v = sample.count_ns();
  if (count_ == 0) {
    min_ns_ = max_ns_ = v;
  } else {
    min_ns_ = std::min(min_ns_, v);
    max_ns_ = std::max(max_ns_, v);
  }
  ++count_;
  sum_ns_ += v;
  const unsigned __int128 m = magnitude(v);
  sum_sq_ns_ += m * m;
  if (!histogram_ && samples_.size() >= exact_limit_) {
    to_histogram();
  }
  if (histogram_) {
    add_to_histogram(v, 1);
  } else {
    samples_.push_back(v);
  }
}

void LatencyRecorder::add_to_histogram(int64_t v, uint64_t count) {
  std::vector<uint64_t>& buckets = v < 0 ? negative_ : positive_;
  const size_t i = bucket_index(magnitude(v));
  if (i >= buckets.size()) {
    // Grow to the end of the octave so that repeated growth stays rare.
    const size_t n =
        i < kLinearLimit ? kLinearLimit : (i - kLinearLimit) / 1024 * 1024 + 1024 + kLinearLimit;
    buckets.reserve(n);  // exactly n: resize alone may double the capacity
    buckets.resize(n);
  }
  buckets[i] += count;
}

void LatencyRecorder::to_histogram() {
  histogram_ = true;
  for (int64_t v : samples_) {
    add_to_histogram(v, 1);
  }
  samples_.clear();
  samples_.shrink_to_fit();
}

void LatencyRecorder::merge(const LatencyRecorder& other) {
  if (&other == this) {
    const LatencyRecorder copy = other;
    merge(copy);
    return;
  }
  if (other.count_ > 0) {
    if (count_ == 0) {
      min_ns_ = other.min_ns_;
      max_ns_ = other.max_ns_;
    } else {
      min_ns_ = std::min(min_ns_, other.min_ns_);
      max_ns_ = std::max(max_ns_, other.max_ns_);
    }
  }
  count_ += other.count_;
  lost_ += other.lost_;
  sum_ns_ += other.sum_ns_;
  sum_sq_ns_ += other.sum_sq_ns_;
  if (!histogram_ && !other.histogram_ && count_ <= exact_limit_) {
    samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
    return;
  }
  if (!histogram_) {
    to_histogram();
  }
  if (other.histogram_) {
    if (other.positive_.size() > positive_.size()) {
      positive_.resize(other.positive_.size());
    }
    if (other.negative_.size() > negative_.size()) {
      negative_.resize(other.negative_.size());
    }
    for (size_t i = 0; i < other.positive_.size(); ++i) {
      positive_[i] += other.positive_[i];
    }
    for (size_t i = 0; i < other.negative_.size(); ++i) {
      negative_[i] += other.negative_[i];
    }
  } else {
    for (int64_t v : other.samples_) {
      add_to_histogram(v, 1);
    }
  }
}

void LatencyRecorder::clear() { *this = LatencyRecorder(exact_limit_); }

double LatencyRecorder::mean_ns() const {
  if (count_ == 0) {
    return 0;
  }
  return static_cast<double>(static_cast<long double>(sum_ns_) / static_cast<long double>(count_));
}

double LatencyRecorder::mdev_ns() const {
  if (count_ == 0) {
    return 0;
  }
  const long double n = static_cast<long double>(count_);
  const long double mean = static_cast<long double>(sum_ns_) / n;
  const long double var = static_cast<long double>(sum_sq_ns_) / n - mean * mean;
  return var > 0 ? static_cast<double>(std::sqrt(var)) : 0.0;
}

double LatencyRecorder::order_statistic(uint64_t k, const std::vector<int64_t>* sorted) const {
  if (sorted != nullptr) {
    return static_cast<double>((*sorted)[k]);
  }
  // Negative values first (largest magnitude first), then non-negative ascending.
  uint64_t seen = 0;
  for (size_t i = negative_.size(); i-- > 0;) {
    seen += negative_[i];
    if (seen > k) {
      return -(static_cast<double>(bucket_lower(i)) +
               static_cast<double>(bucket_width(i) - 1) / 2.0);
    }
  }
  for (size_t i = 0; i < positive_.size(); ++i) {
    seen += positive_[i];
    if (seen > k) {
      return static_cast<double>(bucket_lower(i)) + static_cast<double>(bucket_width(i) - 1) / 2.0;
    }
  }
  return static_cast<double>(max_ns_);  // unreachable when k < count_
}

namespace {

double type7(double q, uint64_t n, const auto& x) {
  const double h = static_cast<double>(n - 1) * std::clamp(q, 0.0, 100.0) / 100.0;
  const double lo = std::floor(h);
  const auto k = static_cast<uint64_t>(lo);
  const double a = x(k);
  if (k + 1 >= n || h == lo) {
    return a;
  }
  return a + (h - lo) * (x(k + 1) - a);
}

}  // namespace

double LatencyRecorder::percentile_ns(double q) const {
  if (count_ == 0) {
    return 0;
  }
  if (!histogram_) {
    std::vector<int64_t> sorted = samples_;
    std::sort(sorted.begin(), sorted.end());
    return type7(q, count_, [&](uint64_t k) { return order_statistic(k, &sorted); });
  }
  const double p = type7(q, count_, [&](uint64_t k) { return order_statistic(k, nullptr); });
  // A bucket midpoint may lie outside the exact extremes.
  return std::clamp(p, static_cast<double>(min_ns_), static_cast<double>(max_ns_));
}

LatencyStats LatencyRecorder::stats() const {
  LatencyStats s;
  s.count = count_;
  s.lost = lost_;
  if (count_ == 0) {
    return s;
  }
  s.min = ns_to_ms(static_cast<double>(min_ns_));
  s.max = ns_to_ms(static_cast<double>(max_ns_));
  s.mean = ns_to_ms(mean_ns());
  s.mdev = ns_to_ms(mdev_ns());
  if (!histogram_) {
    std::vector<int64_t> sorted = samples_;
    std::sort(sorted.begin(), sorted.end());
    const auto x = [&](uint64_t k) { return order_statistic(k, &sorted); };
    s.p50 = ns_to_ms(type7(50, count_, x));
    s.p90 = ns_to_ms(type7(90, count_, x));
    s.p99 = ns_to_ms(type7(99, count_, x));
  } else {
    s.p50 = ns_to_ms(percentile_ns(50));
    s.p90 = ns_to_ms(percentile_ns(90));
    s.p99 = ns_to_ms(percentile_ns(99));
  }
  return s;
}

size_t LatencyRecorder::memory_bytes() const {
  return samples_.capacity() * sizeof(int64_t) +
         (positive_.capacity() + negative_.capacity()) * sizeof(uint64_t);
}

}  // namespace nicsim::report
