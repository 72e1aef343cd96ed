// Codel: enqueue+dequeue pairs per second on one queue.
//  - BM_CodelEnqueueDequeue: steady backlog of 64 packets of 1514 B, 100 ns per pair, so the
//    sojourn (6.4 us) stays below target and CoDel only runs should_drop.
//  - BM_CodelDropping: a standing queue of ~1000 packets, 1 us per pair, target 1 us,
//    interval 100 us: CoDel stays in the dropping state and drops at the control-law rate;
//    dropped packets are refilled so the backlog stays put.
#include <benchmark/benchmark.h>

#include "nicsim/algo/codel.h"

namespace nicsim::algo {
namespace {

Packet make_packet(uint64_t id) {
  Packet p;
  p.id = id;
  p.len = 1514;
  return p;
}

void BM_CodelEnqueueDequeue(benchmark::State& state) {
  Codel q;
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
  state.counters["codel_drops"] = static_cast<double>(q.stats().codel.drop_count);
}
BENCHMARK(BM_CodelEnqueueDequeue);

void BM_CodelDropping(benchmark::State& state) {
  Codel q(Codel::Params{.limit = 2000, .target = 1_us, .interval = 100_us});
  Time now = Time::zero();
  uint64_t id = 0;
  for (int i = 0; i < 1000; ++i) {
    q.enqueue(make_packet(++id), now);
  }
  for (auto _ : state) {
    while (q.backlog_packets() < 1001) {
      q.enqueue(make_packet(++id), now);
    }
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::us(1);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["codel_drops"] = static_cast<double>(q.stats().codel.drop_count);
}
BENCHMARK(BM_CodelDropping);

}  // namespace
}  // namespace nicsim::algo
