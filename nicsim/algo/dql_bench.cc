// Dql: queued+completed call pairs per second (items = pairs; the "calls" counter = 2 x pairs).
#include <benchmark/benchmark.h>

#include "nicsim/algo/dql.h"

namespace nicsim::algo {
namespace {

// Empty queue: each pair enqueues one packet and completes it (no backlog: the cheap path).
void BM_DqlQueuedCompletedIdle(benchmark::State& state) {
  Dql d(Dql::Params{});
  Time now = Time::zero();
  for (auto _ : state) {
    d.queued(1514);
    d.completed(1514, now);
    benchmark::DoNotOptimize(d.avail());
    now += Duration::ns(1200);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["calls"] = benchmark::Counter(2.0 * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DqlQueuedCompletedIdle);

// Steady backlog of 64 packets: every completion runs the slack branch (§2.5 step 7) and
// converts `now` to jiffies — the realistic busy-queue path.
void BM_DqlQueuedCompletedBusy(benchmark::State& state) {
  Dql d(Dql::Params{});
  Time now = Time::zero();
  for (int i = 0; i < 64; ++i) {
    d.queued(1514);
  }
  d.completed(1514, now);
  for (auto _ : state) {
    d.queued(1514);
    d.completed(1514, now);
    benchmark::DoNotOptimize(d.avail());
    now += Duration::ns(1200);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["calls"] = benchmark::Counter(2.0 * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DqlQueuedCompletedBusy);

// Batched completions: 16 enqueues then one completion of all 16 (a NAPI clean pass).
void BM_DqlBatch16(benchmark::State& state) {
  Dql d(Dql::Params{});
  Time now = Time::zero();
  for (int i = 0; i < 32; ++i) {
    d.queued(1514);
  }
  for (auto _ : state) {
    for (int i = 0; i < 16; ++i) {
      d.queued(1514);
    }
    d.completed(16 * 1514, now);
    benchmark::DoNotOptimize(d.avail());
    now += Duration::us(20);
  }
  state.SetItemsProcessed(state.iterations() * 16);  // packets
  state.counters["calls"] = benchmark::Counter(17.0 * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DqlBatch16);

}  // namespace
}  // namespace nicsim::algo
