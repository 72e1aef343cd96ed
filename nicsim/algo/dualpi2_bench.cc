// DualPi2: enqueue+dequeue pairs per second.
//  - BM_DualPi2EnqueueDequeue: a standing backlog of 64 packets of 1514 B, half L4S (ECT(1)),
//    half Classic, 100 ns per pair: the WRR alternates queues, the AQM rolls at dequeue, the
//    step never fires (sojourn 6.4 us).
//  - BM_DualPi2Marking: the same mix with 1 us per pair and target 10 us: p' climbs, Classic
//    packets are dropped with p'^2 and L4S packets marked with 2 p' and by the step.
#include <benchmark/benchmark.h>

#include "nicsim/algo/dualpi2.h"

namespace nicsim::algo {
namespace {

Packet make_packet(uint64_t id) {
  Packet p;
  p.id = id;
  p.len = 1514;
  p.tos = (id & 1) != 0 ? 0x01 : 0x00;  // ECT(1) or Not-ECT
  return p;
}

void run(benchmark::State& state, DualPi2& q, Duration step) {
  Time now = Time::zero();
  uint64_t id = 0;
  for (int i = 0; i < 64; ++i) {
    q.enqueue(make_packet(++id), now);
  }
  for (auto _ : state) {
    while (q.backlog_packets() < 65) {
      q.enqueue(make_packet(++id), now);
    }
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += step;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["drops"] = static_cast<double>(q.stats().dropped_packets);
  state.counters["marks"] = static_cast<double>(q.stats().ecn_mark);
}

void BM_DualPi2EnqueueDequeue(benchmark::State& state) {
  DualPi2 q;
  run(state, q, Duration::ns(100));
}
BENCHMARK(BM_DualPi2EnqueueDequeue);

void BM_DualPi2Marking(benchmark::State& state) {
  DualPi2 q(DualPi2::Params{.target = 10_us, .tupdate = 100_us, .step_thresh = 20_us});
  run(state, q, Duration::us(1));
}
BENCHMARK(BM_DualPi2Marking);

}  // namespace
}  // namespace nicsim::algo
