// DocsisPie: enqueue+dequeue pairs per second on one queue.
//  - BM_DocsisPieEnqueueDequeue: steady backlog of 64 packets of 1514 B at a 1 Gbit/s rate
//    estimate (0.8 ms, far below target), 100 ns per pair: the gates and the timer check only.
//  - BM_DocsisPieDropping: arrivals at twice the service rate (two enqueues per dequeue, 1 us
//    per pair, 10 Gbit/s estimate, target 20 us, interval 100 us): the controller drops at
//    enqueue as under a persistent overload.
#include <benchmark/benchmark.h>

#include "nicsim/algo/docsis_pie.h"

namespace nicsim::algo {
namespace {

Packet make_packet(uint64_t id) {
  Packet p;
  p.id = id;
  p.len = 1514;
  return p;
}

void BM_DocsisPieEnqueueDequeue(benchmark::State& state) {
  DocsisPie q(DocsisPie::Params{.rate = Rate::gbit(1)});
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
BENCHMARK(BM_DocsisPieEnqueueDequeue);

void BM_DocsisPieDropping(benchmark::State& state) {
  DocsisPie q(DocsisPie::Params{.rate = Rate::gbit(10),
                                .limit = 10'000'000,
                                .target = 20_us,
                                .interval = 100_us,
                                .max_burst = 200_us,
                                .burst_reset_timeout = 1_ms});
  Time now = Time::zero();
  uint64_t id = 0;
  auto pair = [&] {
    q.enqueue(make_packet(++id), now);
    q.enqueue(make_packet(++id), now);
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::us(1);
  };
  for (int i = 0; i < 200'000; ++i) {  // past the first burst before timing
    pair();
  }
  const uint64_t dropped_before = q.stats().early_drops;
  for (auto _ : state) {
    pair();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["drop_ratio"] = static_cast<double>(q.stats().early_drops - dropped_before) /
                                 static_cast<double>(2 * state.iterations());
}
BENCHMARK(BM_DocsisPieDropping);

}  // namespace
}  // namespace nicsim::algo
