// TxQueuePick: transmit-queue choices per second, XPS one queue per CPU over 8 queues.
#include <benchmark/benchmark.h>

#include "nicsim/algo/tx_queue_pick.h"

namespace nicsim::algo {
namespace {

void BM_TxQueuePickXps(benchmark::State& state) {
  TxQueuePick::Params prm;
  prm.tx_queues = 8;
  prm.xps_cpus = TxQueuePick::one_queue_per_cpu(8, 8);
  TxQueuePick pick(prm);
  TxQueuePick::Packet p;
  p.from_socket = true;
  uint32_t i = 0;
  for (auto _ : state) {
    p.sender_cpu = i & 7;
    p.hash = i * 0x9E3779B1u;
    p.ooo_okay = (i & 15) == 0;
    auto c = pick.pick(p);
    if (c.cache) {
      p.socket_queue = c.cache;
    }
    benchmark::DoNotOptimize(c.queue);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TxQueuePickXps);

}  // namespace
}  // namespace nicsim::algo
