// Router hot path: frames forwarded per second (wall clock) by a two-interface router between
// 10 Gbit/s wires, the input wire kept busy. Items = frames leaving the egress interface.
// Arg(0): frame length.
#include <benchmark/benchmark.h>

#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/model/platform_nic.h"
#include "nicsim/model/router.h"

namespace nicsim::model {
namespace {

// A desktop-class core: small costs, so the wires are the bottleneck.
CpuCosts fast_core() {
  CpuCosts c;
  c.per_interrupt = 1_us;
  c.per_poll = 200_ns;
  c.per_rx_frame = 200_ns;
  c.per_tx_frame = 200_ns;
  c.per_tx_clean = 50_ns;
  c.per_kick = 100_ns;
  c.per_forward = 100_ns;
  return c;
}

void BM_RouterForward10G(benchmark::State& state) {
  const auto len = static_cast<uint32_t>(state.range(0));
  const Wire::Params wire{.rate = Rate::gbit(10)};
  Wire in0(wire);
  Wire out0(wire);
  Wire in1(wire);
  Wire out1(wire);
  auto nic = [] {
    return std::make_unique<PlatformNic>(
        PlatformNic::Params{}, AnyQueue(algo::PfifoFast(algo::PfifoFast::Params{.limit = 1000})),
        fast_core());
  };
  std::vector<std::unique_ptr<Nic>> nics;
  nics.push_back(nic());
  nics.push_back(nic());
  Router::Params p;
  p.cpu = fast_core();
  p.interfaces.resize(2);
  p.routes = {0, 1};
  Router router(p, std::move(nics));
  router.attach(0, &out0, &in0);
  router.attach(1, &out1, &in1);
  uint64_t id = 0;
  uint64_t out = 0;
  Time now = Time::zero();
  auto top_up = [&](Time t) {
    while (in0.in_flight() < 64) {
      Packet pk;
      pk.id = ++id;
      pk.len = len;
      pk.dst_host = 1;
      in0.transmit(std::move(pk), t);
    }
  };
  top_up(now);
  for (auto _ : state) {
    std::optional<Time> t = router.next_event();
    if (const auto w = out1.next_ready(); w && (!t || *w < *t)) {
      t = w;
    }
    now = *t;
    router.advance(now);
    while (out1.pop_arrived(now)) {
      ++out;
    }
    top_up(now);
  }
  state.SetItemsProcessed(static_cast<int64_t>(out));
  state.counters["sim_gbit_per_s"] =
      static_cast<double>(router.nic(1).counters().tx_bytes) * 8 / now.to_seconds() / 1e9;
}
BENCHMARK(BM_RouterForward10G)->Arg(1514)->Arg(64)->ArgNames({"len"});

}  // namespace
}  // namespace nicsim::model
