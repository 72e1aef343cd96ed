// IntelItr: updates per second (one per completed NAPI poll in the drivers).
#include <benchmark/benchmark.h>

#include "nicsim/algo/intel_itr.h"

namespace nicsim::algo {
namespace {

void BM_IntelItrUpdates(benchmark::State& state) {
  IntelItr itr({.mode = static_cast<IntelItr::Mode>(state.range(0)), .link_mbps = 10000});
  IntelItr::Sample s;
  uint32_t i = 0;
  for (auto _ : state) {
    s.time += Duration::us(50);
    s.rx.packets = 1 + (i * 7919) % 300;  // varying poll sizes
    s.rx.bytes = s.rx.packets * (64 + (i * 31) % 1450);
    ++i;
    benchmark::DoNotOptimize(itr.update(s));
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["changes"] = static_cast<double>(itr.stats().changes);
}
BENCHMARK(BM_IntelItrUpdates)->Arg(0)->Arg(1)->Arg(2);

}  // namespace
}  // namespace nicsim::algo
