// FqPie: enqueue+dequeue pairs per second.
//  - BM_FqPieEnqueueDequeue/N: N flows (hashes spread over the 1024 buckets), 4 packets of
//    1514 B standing per flow, round-robin arrivals, 100 ns per pair: DRR over N flows with
//    per-flow PIE gates below target.
//  - BM_FqPieDropping: one flow offered twice the service rate (target 20 us, tupdate 100 us):
//    its controller holds p near 50 % and drops at enqueue.
#include <benchmark/benchmark.h>

#include "nicsim/algo/fq_pie.h"

namespace nicsim::algo {
namespace {

Packet make_packet(uint64_t id, uint32_t flow) {
  Packet p;
  p.id = id;
  p.len = 1514;
  p.flow_hash = (flow + 1) * 0x9E3779B1u;
  return p;
}

void BM_FqPieEnqueueDequeue(benchmark::State& state) {
  const auto flows = static_cast<uint32_t>(state.range(0));
  FqPie q;
  Time now = Time::zero();
  uint64_t id = 0;
  for (uint32_t f = 0; f < flows; ++f) {
    for (int i = 0; i < 4; ++i) {
      q.enqueue(make_packet(++id, f), now);
    }
  }
  uint32_t next_flow = 0;
  for (auto _ : state) {
    q.enqueue(make_packet(++id, next_flow), now);
    next_flow = next_flow + 1 == flows ? 0 : next_flow + 1;
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::ns(100);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FqPieEnqueueDequeue)->Arg(1)->Arg(64)->Arg(1024);

void BM_FqPieDropping(benchmark::State& state) {
  FqPie q(FqPie::Params{.limit = 100'000, .target = 20_us, .tupdate = 100_us});
  Time now = Time::zero();
  uint64_t id = 0;
  auto pair = [&] {
    q.enqueue(make_packet(++id, 0), now);
    q.enqueue(make_packet(++id, 0), now);
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::us(1);
  };
  // Past the 150 ms burst allowance (and the first update at 500 ms) before timing.
  for (int i = 0; i < 700'000; ++i) {
    pair();
  }
  const uint64_t dropped_before = q.stats().pie.dropped;
  for (auto _ : state) {
    pair();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["drop_ratio"] = static_cast<double>(q.stats().pie.dropped - dropped_before) /
                                 static_cast<double>(2 * state.iterations());
}
BENCHMARK(BM_FqPieDropping);

}  // namespace
}  // namespace nicsim::algo
