// NetDim: samples per second through net_dim (most polls only count events).
#include <benchmark/benchmark.h>

#include "nicsim/algo/net_dim.h"

namespace nicsim::algo {
namespace {

void BM_NetDimSamples(benchmark::State& state) {
  NetDim dim;
  NetDim::Sample s;
  uint64_t i = 0;
  for (auto _ : state) {
    ++s.events;
    s.time += Duration::us(20);
    s.packets += 32;
    s.bytes += 32 * 1514 + static_cast<uint32_t>((i++ * 7919) % 20000);  // varying rates
    if (dim.on_interrupt(s)) {
      dim.profile_applied();
    }
    benchmark::DoNotOptimize(dim.state().profile_ix);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["changes"] = static_cast<double>(dim.stats().changes);
}
BENCHMARK(BM_NetDimSamples);

}  // namespace
}  // namespace nicsim::algo
