// PfifoFast: enqueue+dequeue pairs per second at a steady backlog, mixed priorities (all three
// bands in use).
#include <benchmark/benchmark.h>

#include "nicsim/algo/pfifo_fast.h"

namespace nicsim::algo {
namespace {

void BM_PfifoFastEnqueueDequeue(benchmark::State& state) {
  PfifoFast q;
  Time now = Time::zero();
  uint64_t id = 0;
  // A repeating mix of skb->priority values: 0 (band 1), 6 (band 0), 2 (band 2), 4 (band 1).
  constexpr uint8_t kPrios[8] = {0, 6, 2, 0, 4, 1, 0, 7};
  auto make = [&]() {
    Packet p;
    p.id = ++id;
    p.len = 1514;
    p.priority = kPrios[id & 7];
    return p;
  };
  for (int i = 0; i < 64; ++i) {
    q.enqueue(make(), now);
  }
  for (auto _ : state) {
    q.enqueue(make(), now);
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::ns(100);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PfifoFastEnqueueDequeue);

}  // namespace
}  // namespace nicsim::algo
