// TCP endpoint model throughput: segments processed per second through the loopback harness
// (TcpSender + TcpReceiver work per data segment and per ACK, plus the harness's own drop-tail
// queue and delay lines). items = data frames + ACKs handled.
#include <benchmark/benchmark.h>

#include "nicsim/sim/tcp/loopback_harness.h"

namespace nicsim::sim::tcp {
namespace {

using testing::LinkConfig;
using testing::Loopback;

void run(benchmark::State& state, Rate rate, int flows, bool gso, double loss) {
  uint64_t items = 0;
  for (auto _ : state) {
    LinkConfig l;
    l.rate = rate;
    l.delay = Duration::ms(5);
    l.queue_limit_bytes = rate.bytes_in(Duration::ms(10));
    l.loss = loss;
    Params p;
    p.gso = gso;
    Loopback lb(l, std::vector<Params>(static_cast<size_t>(flows), p), Params{});
    lb.run_until(Time::zero() + Duration::s(2));
    for (int i = 0; i < flows; ++i) {
      items += lb.receiver(static_cast<size_t>(i)).stats().segments_received +
               lb.sender(static_cast<size_t>(i)).stats().acks_received;
    }
    benchmark::DoNotOptimize(lb.trace_hash());
  }
  state.SetItemsProcessed(static_cast<int64_t>(items));
}

void BM_Loopback100MbitOneFlow(benchmark::State& s) { run(s, Rate::mbit(100), 1, true, 0); }
void BM_Loopback100MbitFourFlows(benchmark::State& s) { run(s, Rate::mbit(100), 4, true, 0); }
void BM_Loopback1GbitOneFlow(benchmark::State& s) { run(s, Rate::gbit(1), 1, true, 0); }
void BM_Loopback1GbitOneFlowNoGso(benchmark::State& s) { run(s, Rate::gbit(1), 1, false, 0); }
void BM_Loopback100MbitLoss1pct(benchmark::State& s) { run(s, Rate::mbit(100), 1, true, 0.01); }
// The endpoints alone: every unit is segmented and handed straight to the receiver, every ACK
// straight back, TSQ bytes released at once, 1 µs of virtual time per wire segment (no loss,
// no queue). items = data segments + ACKs; measures the model's own per-segment cost.
void BM_EndpointsDirect(benchmark::State& state) {
  Params p;
  TcpSender snd(p);
  TcpReceiver rcv(p);
  Time now = Time::zero();
  snd.connect(now);
  uint64_t items = 0;
  std::vector<Segment> acks;
  acks.reserve(64);
  for (auto _ : state) {
    for (int k = 0; k < 1000; ++k) {
      now += Duration::us(1);
      while (snd.has_output()) {
        const Segment unit = snd.pop_output();
        for (uint16_t i = 0; i < unit.gso_segs; ++i) {
          rcv.on_segment(gso_segment(unit, i), now);
          ++items;
        }
        if (unit.truesize > 0) {
          snd.on_tx_released(unit.truesize, now);
        }
        while (rcv.has_output()) {
          acks.push_back(rcv.pop_output());
        }
      }
      if (auto t = rcv.next_event(); t && *t <= now) {
        rcv.advance(now);
        while (rcv.has_output()) acks.push_back(rcv.pop_output());
      }
      for (const Segment& a : acks) {
        snd.on_segment(a, now);
        ++items;
      }
      acks.clear();
      if (auto t = snd.next_event(); t && *t <= now) {
        snd.advance(now);
      }
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(items));
  state.counters["retr"] = static_cast<double>(snd.stats().retransmits);
}
BENCHMARK(BM_EndpointsDirect);

BENCHMARK(BM_Loopback100MbitOneFlow)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Loopback100MbitFourFlows)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Loopback1GbitOneFlow)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Loopback1GbitOneFlowNoGso)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Loopback100MbitLoss1pct)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nicsim::sim::tcp
