// LatencyRecorder: cost of add() in the exact and the histogram mode, and of stats().
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "nicsim/report/latency_recorder.h"

namespace nicsim::report {
namespace {

std::vector<Duration> samples(size_t n) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> dist(13.0, 1.0);  // median ~0.44 ms
  std::vector<Duration> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    v.push_back(Duration::ns(static_cast<int64_t>(dist(rng))));
  }
  return v;
}

void BM_AddExact(benchmark::State& state) {
  const std::vector<Duration> v = samples(4096);
  LatencyRecorder r(1 << 30);
  size_t i = 0;
  for (auto _ : state) {
    r.add(v[i++ & 4095]);
    if (r.count() == 1'000'000) {
      r.clear();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AddExact);

void BM_AddHistogram(benchmark::State& state) {
  const std::vector<Duration> v = samples(4096);
  LatencyRecorder r(0);
  size_t i = 0;
  for (auto _ : state) {
    r.add(v[i++ & 4095]);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AddHistogram);

// stats() over n samples (exact up to the default limit of 65536, histogram beyond).
void BM_Stats(benchmark::State& state) {
  LatencyRecorder r;
  for (Duration d : samples(static_cast<size_t>(state.range(0)))) {
    r.add(d);
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(r.stats());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Stats)->Arg(30'000)->Arg(65'536)->Arg(1'000'000);

}  // namespace
}  // namespace nicsim::report
