// Fifo: enqueue+dequeue pairs per second at a steady backlog of 64 packets.
#include <benchmark/benchmark.h>

#include "nicsim/algo/fifo.h"

namespace nicsim::algo {
namespace {

void BM_FifoEnqueueDequeue(benchmark::State& state) {
  Fifo q(Fifo::Params{.limit_packets = 1000});
  Time now = Time::zero();
  uint64_t id = 0;
  for (int i = 0; i < 64; ++i) {
    Packet p;
    p.id = ++id;
    p.len = 1514;
    q.enqueue(std::move(p), now);
  }
  for (auto _ : state) {
    Packet p;
    p.id = ++id;
    p.len = 1514;
    q.enqueue(std::move(p), now);
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::ns(100);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FifoEnqueueDequeue);

}  // namespace
}  // namespace nicsim::algo
