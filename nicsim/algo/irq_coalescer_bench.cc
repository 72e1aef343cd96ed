// IrqCoalescer: completion events per second under rx-usecs/rx-frames moderation.
#include <benchmark/benchmark.h>

#include "nicsim/algo/irq_coalescer.h"

namespace nicsim::algo {
namespace {

void BM_IrqCoalescerEvents(benchmark::State& state) {
  IrqCoalescer c({.usecs = 50_us, .frames = 32});
  Time now = Time::zero();
  for (auto _ : state) {
    now += Duration::ns(1200);
    if (auto t = c.next_ready(); t && *t <= now) {
      c.expire(*t);
    }
    benchmark::DoNotOptimize(c.on_event(now));
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["interrupts"] = static_cast<double>(c.stats().interrupts);
}
BENCHMARK(BM_IrqCoalescerEvents);

}  // namespace
}  // namespace nicsim::algo
