// PlatformNic hot path: frames per second (wall clock) through two back-to-back NICs on a
// 10 Gbit/s wire with a saturating sender (qdisc kept at 256 packets). Items = frames delivered
// to the receiving host's stack. Arg(0): frame length; Arg(1): 1 = interrupt coalescing
// (tx-usecs 64, rx-usecs 32) and TSO with 64 KB GSO packets, 0 = no coalescing, 1 frame each.
#include <benchmark/benchmark.h>

#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/model/platform_nic.h"

namespace nicsim::model {
namespace {

struct CountingSink final : NicSink {
  void deliver(Packet&& /*frame*/, Time /*now*/) override { ++delivered; }
  void tx_released(const TxRelease& /*r*/, Time /*now*/) override {}
  uint64_t delivered = 0;
};

// A desktop-class core: small per-operation costs, so the 10 Gbit/s wire is the bottleneck.
CpuCosts fast_core() {
  return CpuCosts{.per_interrupt = 1_us,
                  .per_poll = 200_ns,
                  .per_rx_frame = 200_ns,
                  .per_tx_frame = 200_ns,
                  .per_tx_clean = 50_ns,
                  .per_gso_segment = 100_ns,
                  .per_usb_transfer = Duration::zero(),
                  .per_kick = 100_ns};
}

void BM_PlatformNicBackToBack10G(benchmark::State& state) {
  const auto len = static_cast<uint32_t>(state.range(0));
  const bool batching = state.range(1) != 0;
  PlatformNic::Params p;
  p.tx_ring_size = 1024;
  p.tx_wake_free = 256;
  p.rx_ring_size = 1024;
  if (batching) {
    p.tso = true;
    p.tx_coalesce = {.usecs = 64_us, .frames = 0};
    p.rx_coalesce = {.usecs = 32_us, .frames = 0};
  }
  const Wire::Params wire{.rate = Rate::gbit(10)};
  Wire ab(wire);
  Wire ba(wire);
  Cpu cpu_a;
  Cpu cpu_b;
  CountingSink sink_a;
  CountingSink sink_b;
  auto pfifo = [] { return AnyQueue(algo::PfifoFast(algo::PfifoFast::Params{.limit = 1000})); };
  PlatformNic a(p, pfifo(), fast_core());
  PlatformNic b(p, pfifo(), fast_core());
  a.attach(&ab, &ba, &cpu_a, &sink_a);
  b.attach(&ba, &ab, &cpu_b, &sink_b);
  uint64_t id = 0;
  const uint16_t segs = batching ? static_cast<uint16_t>(std::max<uint32_t>(1, 65'000 / len)) : 1;
  auto top_up = [&](Time now) {
    while (a.qdisc().backlog_packets() < 256) {
      Packet pk;
      pk.id = ++id;
      pk.len = len * segs;
      pk.flow_hash = static_cast<uint32_t>(id & 7);
      pk.gso_segs = segs;
      a.send(std::move(pk), now);
    }
  };
  Time now = Time::zero();
  top_up(now);
  for (auto _ : state) {
    std::optional<Time> ta = a.next_event();
    std::optional<Time> tb = b.next_event();
    now = ta && tb ? min(*ta, *tb) : (ta ? *ta : *tb);
    a.advance(now);
    b.advance(now);
    top_up(now);
  }
  state.SetItemsProcessed(static_cast<int64_t>(sink_b.delivered));
  state.counters["sim_gbit_per_s"] =
      static_cast<double>(b.stats().rx_bytes) * 8 / now.to_seconds() / 1e9;
  state.counters["sim_seconds"] = now.to_seconds();
}
BENCHMARK(BM_PlatformNicBackToBack10G)
    ->Args({1514, 0})
    ->Args({1514, 1})
    ->Args({60, 0})
    ->ArgNames({"len", "batching"});

}  // namespace
}  // namespace nicsim::model
