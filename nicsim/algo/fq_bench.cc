// Fq: enqueue+dequeue pairs per second.
//  - BM_Fq1024Flows: 1514 B packets round robin over 1024 sockets, N packets standing per flow
//    (the argument), no pacing limit: flow lookup, DRR and the band round robin.
//  - BM_FqPacedEdt: 1024 sockets whose packets carry EDT timestamps 1 us apart per flow (each
//    flow paced at ~12 Gbit/s, the whole qdisc far faster than the pairs run), time advancing
//    100 ns per pair: flows throttle and unthrottle through the delayed set, as under TCP
//    pacing.
//  - BM_FqMaxrate: 1024 flows with maxrate (credit-based pacing of packets without EDT).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "nicsim/algo/fq.h"

namespace nicsim::algo {
namespace {

constexpr uint32_t kFlows = 1024;

uint32_t socket_hash(uint64_t n) { return static_cast<uint32_t>(((n % kFlows) + 1) * 0x9E3779B1u); }

template <class MakeTstamp>
void run_pairs(benchmark::State& state, const Fq::Params& params, MakeTstamp tstamp) {
  Fq q(params);
  Time now = Time::zero();
  uint64_t id = 0;
  auto next = [&] {
    Packet p;
    p.id = ++id;
    p.len = 1514;
    p.flow_hash = socket_hash(id);
    p.tstamp = tstamp(id, now);
    return p;
  };
  const int64_t per_flow = state.range(0);
  for (int64_t i = 0; i < per_flow * kFlows; ++i) {
    q.enqueue(next(), now);
  }
  auto pair = [&] {
    q.enqueue(next(), now);
    std::optional<Packet> out = q.dequeue(now);
    if (!out) {
      now = q.next_ready(now).value_or(now);
      out = q.dequeue(now);
    }
    benchmark::DoNotOptimize(out);
    now += Duration::ns(100);
  };
  for (int i = 0; i < 100'000; ++i) {
    pair();
  }
  for (auto _ : state) {
    pair();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["backlog"] = static_cast<double>(q.backlog_packets());
  state.counters["throttled"] = static_cast<double>(q.stats().throttled);
  state.counters["drops"] = static_cast<double>(q.stats().dropped_packets);
}

void BM_Fq1024Flows(benchmark::State& state) {
  run_pairs(state, Fq::Params{}, [](uint64_t, Time) { return Time::zero(); });
}
BENCHMARK(BM_Fq1024Flows)->ArgName("pkts_per_flow")->Arg(1)->Arg(4)->Arg(8);

void BM_FqPacedEdt(benchmark::State& state) {
  run_pairs(state, Fq::Params{}, [](uint64_t id, Time now) {
    return now + Duration::ns(static_cast<int64_t>(id / kFlows % 8) * 1000);
  });
}
BENCHMARK(BM_FqPacedEdt)->ArgName("pkts_per_flow")->Arg(4);

void BM_FqMaxrate(benchmark::State& state) {
  run_pairs(state, Fq::Params{.maxrate = 10_gbit}, [](uint64_t, Time) { return Time::zero(); });
}
BENCHMARK(BM_FqMaxrate)->ArgName("pkts_per_flow")->Arg(4);

}  // namespace
}  // namespace nicsim::algo
