// Cake: enqueue+dequeue pairs per second (issue 11's target: CAKE with 1024 flows and its
// shaper on >= 10 M pairs/s on one core).
//  - BM_Cake1024Flows/<shaped>: 1514 B packets over 1024 flow hashes (one per queue, all
//    backlogged with 4 packets), diffserv3, `flows` isolation; each iteration enqueues
//    to the next flow and dequeues once. Shaped (argument 1): bandwidth 10 Gbit/s and time
//    advancing by one packet time (1211 ns) per pair, so the shaper releases every dequeue;
//    unshaped (0): time advances 100 ns per pair. Sojourn stays below target (no drops).
//  - BM_CakeRandomHash: the same with pseudo-random hashes over 4096 flows (way misses,
//    collisions).
//  - BM_CakeTriple1024Hosts: the default triple-isolate, each flow between its own hosts.
//    (With all 1024 flows between ONE host pair triple-isolate divides the quantum by 1024:
//    ~1.5 bytes per DRR visit, so a packet needs ~1000 rounds — the kernel's cost too.)
#include <benchmark/benchmark.h>

#include <cstdint>

#include "nicsim/algo/cake.h"

namespace nicsim::algo {
namespace {

constexpr uint32_t kFlows = 1024;

uint32_t bucket_hash(uint64_t n) { return static_cast<uint32_t>(n % kFlows); }
uint32_t mixed_hash(uint64_t n) {
  uint64_t x = n * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return static_cast<uint32_t>(x >> 32) % (kFlows * 4);
}

template <uint32_t (*Hash)(uint64_t), Cake::FlowMode kMode>
void run_pairs(benchmark::State& state) {
  Cake::Params p;
  p.flow_mode = kMode;
  const bool shaped = state.range(0) != 0;
  if (shaped) {
    p.bandwidth = Rate::gbit(10);
  }
  Cake q(p);
  Time now = Time::zero();
  const Duration step = Duration::ns(shaped ? 1212 : 100);
  uint64_t id = 0;
  auto next = [&] {
    Packet pk;
    pk.id = ++id;
    pk.len = 1514;
    pk.flow_hash = Hash(id);
    pk.src_host = static_cast<uint16_t>(pk.flow_hash % kFlows);  // one host pair per flow
    pk.dst_host = pk.src_host;
    return pk;
  };
  for (uint32_t i = 0; i < 4 * kFlows; ++i) {
    q.enqueue(next(), now);
  }
  for (int i = 0; i < 100'000; ++i) {
    q.enqueue(next(), now);
    benchmark::DoNotOptimize(q.dequeue(now));
    now += step;
  }
  for (auto _ : state) {
    q.enqueue(next(), now);
    benchmark::DoNotOptimize(q.dequeue(now));
    now += step;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Cake1024Flows(benchmark::State& state) {
  run_pairs<bucket_hash, Cake::FlowMode::kFlows>(state);
}
void BM_CakeRandomHash(benchmark::State& state) {
  run_pairs<mixed_hash, Cake::FlowMode::kFlows>(state);
}
void BM_CakeTriple1024Hosts(benchmark::State& state) {
  run_pairs<bucket_hash, Cake::FlowMode::kTripleIsolate>(state);
}
BENCHMARK(BM_Cake1024Flows)->Arg(0)->Arg(1);
BENCHMARK(BM_CakeRandomHash)->Arg(0)->Arg(1);
BENCHMARK(BM_CakeTriple1024Hosts)->Arg(0)->Arg(1);

}  // namespace
}  // namespace nicsim::algo
