// Doorbell: on_sent+on_completed pairs per second (items = pairs).
#include <benchmark/benchmark.h>

#include "nicsim/algo/doorbell.h"

namespace nicsim::algo {
namespace {

// One packet per stack batch (xmit_more false), completed right away; BQL on. Steady
// backlog of 64 packets so the DQL slack path runs on every completion.
void BM_DoorbellSentCompletedBql(benchmark::State& state) {
  Doorbell db(Doorbell::Params{.dql = Dql::Params{.min_limit = 1'000'000}});
  Time now = Time::zero();
  for (int i = 0; i < 64; ++i) {
    db.on_sent(1514, true);
  }
  db.on_completed(1, 1514, now);
  for (auto _ : state) {
    benchmark::DoNotOptimize(db.on_sent(1514, false));
    benchmark::DoNotOptimize(db.on_completed(1, 1514, now));
    now += Duration::ns(1200);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DoorbellSentCompletedBql);

// Batches of 8 (xmit_more on 7), one completion per packet; BQL on.
void BM_DoorbellBatch8Bql(benchmark::State& state) {
  Doorbell db(Doorbell::Params{.dql = Dql::Params{.min_limit = 1'000'000}});
  Time now = Time::zero();
  for (int i = 0; i < 64; ++i) {
    db.on_sent(1514, true);
  }
  db.on_completed(1, 1514, now);
  uint32_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(db.on_sent(1514, (++k & 7) != 0));
    benchmark::DoNotOptimize(db.on_completed(1, 1514, now));
    now += Duration::ns(1200);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DoorbellBatch8Bql);

// No BQL: the doorbell decision alone.
void BM_DoorbellSentCompletedNoBql(benchmark::State& state) {
  Doorbell db(Doorbell::Params{.bql = false});
  Time now = Time::zero();
  uint32_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(db.on_sent(1514, (++k & 7) != 0));
    benchmark::DoNotOptimize(db.on_completed(1, 1514, now));
    now += Duration::ns(1200);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DoorbellSentCompletedNoBql);

}  // namespace
}  // namespace nicsim::algo
