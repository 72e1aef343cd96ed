// FqCodel: enqueue+dequeue pairs per second with every one of the 1024 flow queues active.
//  - BM_FqCodel1024Flows: 1514 B packets whose hashes map one-to-one onto the 1024 buckets,
//    1, 2, 4 or 8 packets per flow standing (the argument; 4 = 4096 packets in total); each
//    iteration enqueues to the next flow (round robin) and dequeues once; time advances
//    100 ns per pair, so sojourn (<= 0.8 ms) stays below target and every dequeue runs DRR +
//    should_drop without drops. The pool nodes (120 B each) of 4 packets per flow already
//    exceed a 512 KB L2, so the larger backlogs measure cache misses on packet metadata.
//  - BM_FqCodel1024FlowsRandomHash: the same with pseudo-random 32-bit hashes (collisions,
//    uneven buckets, as a real flow mix gives).
//  - BM_FqCodelOverload: the worst case of the overload path: packet limit 1024, random
//    hashes over 1024 flows (about one packet per flow) and 4 arrivals per dequeue, so about
//    every arrival triggers the 1024-flow scan and drops only one or two packets. Items are
//    arrivals.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "nicsim/algo/fq_codel.h"

namespace nicsim::algo {
namespace {

constexpr uint32_t kFlows = 1024;

Packet make_packet(uint64_t id, uint32_t hash) {
  Packet p;
  p.id = id;
  p.len = 1514;
  p.flow_hash = hash;
  return p;
}

Packet next_packet(uint64_t& id, uint32_t (*hash)(uint64_t)) {
  ++id;
  return make_packet(id, hash(id));
}

// Bucket i of 1024 gets hash i << 22 (spread over the whole 32-bit range).
uint32_t bucket_hash(uint64_t n) { return static_cast<uint32_t>(n % kFlows) << 22; }

uint32_t mixed_hash(uint64_t n) {
  uint64_t x = n * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return static_cast<uint32_t>(x >> 32);
}

template <uint32_t (*Hash)(uint64_t)>
void run_pairs(benchmark::State& state) {
  FqCodel q;
  Time now = Time::zero();
  uint64_t id = 0;
  const int64_t per_flow = state.range(0);
  for (int64_t i = 0; i < per_flow * kFlows; ++i) {
    q.enqueue(next_packet(id, Hash), now);
  }
  for (int i = 0; i < 100'000; ++i) {  // warm up the pool and the DRR lists
    q.enqueue(next_packet(id, Hash), now);
    benchmark::DoNotOptimize(q.dequeue(now));
    now += Duration::ns(100);
  }
  for (auto _ : state) {
    q.enqueue(next_packet(id, Hash), now);
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::ns(100);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["backlog"] = static_cast<double>(q.backlog_packets());
  state.counters["drops"] = static_cast<double>(q.stats().dropped_packets);
}

void BM_FqCodel1024Flows(benchmark::State& state) { run_pairs<bucket_hash>(state); }
BENCHMARK(BM_FqCodel1024Flows)->ArgName("pkts_per_flow")->Arg(1)->Arg(2)->Arg(4)->Arg(8);

void BM_FqCodel1024FlowsRandomHash(benchmark::State& state) { run_pairs<mixed_hash>(state); }
BENCHMARK(BM_FqCodel1024FlowsRandomHash)->ArgName("pkts_per_flow")->Arg(4);

void BM_FqCodelOverload(benchmark::State& state) {
  FqCodel q(FqCodel::Params{.limit = 1024});
  Time now = Time::zero();
  uint64_t id = 0;
  for (auto _ : state) {
    for (int i = 0; i < 4; ++i) {
      q.enqueue(next_packet(id, mixed_hash), now);
    }
    auto out = q.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::ns(100);
  }
  state.SetItemsProcessed(state.iterations() * 4);
  state.counters["drop_overlimit"] = static_cast<double>(q.stats().drop_overlimit);
}
BENCHMARK(BM_FqCodelOverload);

}  // namespace
}  // namespace nicsim::algo
