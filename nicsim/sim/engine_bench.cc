// Engine: events per second with a realistic pending-set size (1000 self-rescheduling
// processes, like hosts, NICs, timers and flows in a simulation).
#include <benchmark/benchmark.h>

#include <vector>

#include "nicsim/sim/engine.h"

namespace nicsim::sim {
namespace {

struct Ticker : Process {
  Engine* e = nullptr;
  uint64_t state = 1;
  void on_event(Time now, uint64_t) override {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    e->schedule(now + Duration::ns(static_cast<int64_t>(state >> 52) + 1), this, 0);
  }
};

void BM_EngineEvents(benchmark::State& state) {
  Engine e;
  std::vector<Ticker> ts(static_cast<size_t>(state.range(0)));
  for (size_t i = 0; i < ts.size(); ++i) {
    ts[i].e = &e;
    ts[i].state = i + 1;
    e.schedule(Time::from_ns(static_cast<int64_t>(i)), &ts[i], 0);
  }
  for (auto _ : state) {
    e.step(Time::max());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EngineEvents)->Arg(16)->Arg(1000)->Arg(100000);

}  // namespace
}  // namespace nicsim::sim
