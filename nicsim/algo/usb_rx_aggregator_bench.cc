// UsbRxAggregator: frames per second through the device model under a saturating TCP-like
// stream (MTU frames back-to-back at 100 Mbit/s, Linux usbnet with 4 posted transfers).
#include <benchmark/benchmark.h>

#include "nicsim/algo/usb_rx_aggregator.h"

namespace nicsim::algo {
namespace {

void BM_UsbRxAggregatorTurbo(benchmark::State& state) {
  UsbRxAggregator agg(UsbRxAggregator::Params{});
  Time now = Time::zero();
  uint64_t id = 0;
  for (int i = 0; i < 4; ++i) {
    agg.post_transfer(now);
  }
  for (auto _ : state) {
    now += Duration::ns(122'000);
    Packet p;
    p.id = ++id;
    p.len = 1514;
    agg.frame_arrived(std::move(p), 1524, now);
    while (auto x = agg.pop_completed(now)) {
      benchmark::DoNotOptimize(x);
      agg.post_transfer(now);
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["transfers"] = static_cast<double>(agg.stats().transfers);
}
BENCHMARK(BM_UsbRxAggregatorTurbo);

}  // namespace
}  // namespace nicsim::algo
