// Pie: enqueue+dequeue pairs per second on one queue.
//  - BM_PieEnqueueDequeue: steady backlog of 64 packets of 1514 B, 100 ns per pair: the
//    delay (6.4 us) stays far below target, so PIE runs its gates and the timer check only.
//  - BM_PieDropping: arrivals at twice the service rate (two enqueues per dequeue, 1 us per
//    pair, target 20 us, tupdate 100 us): the controller holds p near 50 % and drops at
//    enqueue, as under a persistent overload.
#include <benchmark/benchmark.h>

#include "nicsim/algo/pie.h"

namespace nicsim::algo {
namespace {

Packet make_packet(uint64_t id) {
  Packet p;
  p.id = id;
  p.len = 1514;
  return p;
}

void BM_PieEnqueueDequeue(benchmark::State& state) {
  Pie q(Pie::Params{.dq_rate_estimator = state.range(0) != 0});
  Time now = Time::zero();
  uint64_t id = 0;
  for (int i = 0; i < 64; ++i) {
    q.enqueue(make_packet(++id), now);
  }
  for (auto _ : state) {
    q.enqueue(make_packet(++id), now);
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::ns(100);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PieEnqueueDequeue)->Arg(0)->Arg(1);

void BM_PieDropping(benchmark::State& state) {
  Pie q(Pie::Params{.limit = 100'000, .target = 20_us, .tupdate = 100_us});
  Time now = Time::zero();
  uint64_t id = 0;
  auto pair = [&] {
    q.enqueue(make_packet(++id), now);
    q.enqueue(make_packet(++id), now);
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::us(1);
  };
  // Past the 150 ms burst allowance (and the first update at 500 ms) before timing.
  for (int i = 0; i < 700'000; ++i) {
    pair();
  }
  const uint64_t dropped_before = q.stats().pie.dropped;
  for (auto _ : state) {
    pair();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["drop_ratio"] = static_cast<double>(q.stats().pie.dropped - dropped_before) /
                                 static_cast<double>(2 * state.iterations());
}
BENCHMARK(BM_PieDropping);

}  // namespace
}  // namespace nicsim::algo
