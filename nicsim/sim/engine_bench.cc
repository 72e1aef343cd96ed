// Engine: events per second with a realistic pending-set size (1000 self-rescheduling
// processes, like hosts, NICs, timers and flows in a simulation), and the simulation's own
// pattern: a few hosts, each a Wakeup re-set from its own event.
#include <benchmark/benchmark.h>

#include <memory>
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

// A host: its Wakeup fires and is set again to its next time (sometimes the same instant),
// and now and then it moves its peer's wakeup earlier (a frame put on the wire).
struct Host : Process {
  std::unique_ptr<Engine::Wakeup> w;
  Host* peer = nullptr;
  uint64_t state = 1;
  void on_event(Time now, uint64_t) override {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t gap = static_cast<int64_t>(state >> 54);  // 0..1023 ns
    w->set(now + Duration::ns(gap));
    if ((state >> 20) % 4 == 0 && peer->w->when() && *peer->w->when() > now + Duration::ns(5)) {
      peer->w->set(now + Duration::ns(5));
    }
  }
};

void BM_EngineWakeups(benchmark::State& state) {
  Engine e;
  std::vector<Host> hosts(static_cast<size_t>(state.range(0)));
  for (size_t i = 0; i < hosts.size(); ++i) {
    hosts[i].w = std::make_unique<Engine::Wakeup>(e, &hosts[i], i);
    hosts[i].peer = &hosts[(i + 1) % hosts.size()];
    hosts[i].state = i + 1;
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    hosts[i].w->set(Time::from_ns(static_cast<int64_t>(i)));
  }
  for (auto _ : state) {
    e.step(Time::max());
  }
  // Events delivered (an engine with lazy deletion also steps over superseded entries).
  state.SetItemsProcessed(static_cast<int64_t>(e.stats().executed));
}
BENCHMARK(BM_EngineWakeups)->Arg(2)->Arg(64);

}  // namespace
}  // namespace nicsim::sim
