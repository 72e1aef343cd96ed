// Htb: enqueue+dequeue pairs per second with shaping active.
//
// Tree (as in a typical home-router setup): 1:1 root 100 Gbit/s → inner 1:2 and 1:3
// (30 Gbit/s each, ceil 100) → leaves 1:4, 1:5 under 1:2 and 1:6, 1:7 under 1:3 (10 Gbit/s
// each, ceil 100, prio 0/1). One 1000-byte packet arrives and one leaves every 100 ns
// (80 Gbit/s offered, 20 Gbit/s per leaf): every leaf is over its rate and borrows, the inner
// classes are over theirs too, so modes change, events fire and packets are found at levels
// 0, 6 and 7. Classification by the skb->priority rule (priority = leaf id); 8 flows per leaf.
// All leaves stay backlogged (64 packets each at the start; the sojourn time, ~26 us, stays
// far below CoDel's 5 ms target, so fq_codel leaves do not drop). Leaves: fq_codel with its
// defaults (the sqm-style "htb + fq_codel" setup), and pfifo for comparison.
#include <benchmark/benchmark.h>

#include "nicsim/algo/fifo.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/algo/htb.h"

namespace nicsim::algo {
namespace {

constexpr uint32_t kLeaves[] = {4, 5, 6, 7};

template <class MakeLeaf>
Htb make_tree(MakeLeaf make_leaf) {
  Htb h;
  h.add_class({.id = 1, .rate = Rate::gbit(100)});
  h.add_class({.id = 2, .parent = 1, .rate = Rate::gbit(30), .ceil = Rate::gbit(100)});
  h.add_class({.id = 3, .parent = 1, .rate = Rate::gbit(30), .ceil = Rate::gbit(100)});
  for (uint32_t leaf : kLeaves) {
    h.add_class({.id = leaf,
                 .parent = leaf < 6 ? 2u : 3u,
                 .rate = Rate::gbit(10),
                 .ceil = Rate::gbit(100),
                 .prio = leaf % 2,
                 .leaf = make_leaf()});
  }
  return h;
}

template <class MakeLeaf>
void run(benchmark::State& state, MakeLeaf make_leaf) {
  Htb h = make_tree(make_leaf);
  Time now = Time::zero();
  uint64_t id = 0;
  auto packet = [&](uint32_t leaf) {
    Packet p;
    p.id = ++id;
    p.len = 1000;
    p.priority = static_cast<uint8_t>(leaf);
    p.flow_hash = (leaf * 16 + static_cast<uint32_t>(id % 8)) * 0x9E3779B1u;
    return p;
  };
  for (int i = 0; i < 64; ++i) {
    for (uint32_t leaf : kLeaves) {
      h.enqueue(packet(leaf), now);
    }
  }
  uint64_t misses = 0;
  size_t next_leaf = 0;
  for (auto _ : state) {
    h.enqueue(packet(kLeaves[next_leaf]), now);
    next_leaf = (next_leaf + 1) & 3;
    std::optional<Packet> out = h.dequeue(now);
    misses += out ? 0 : 1;
    benchmark::DoNotOptimize(out);
    now += Duration::ns(100);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["dequeue_misses"] = static_cast<double>(misses);
  state.counters["overlimits"] = static_cast<double>(h.stats().overlimits);
  state.counters["drops"] = static_cast<double>(h.stats().dropped_packets);
  state.counters["root_lends"] = static_cast<double>(h.class_stats(1).lends);
  state.counters["inner_lends"] =
      static_cast<double>(h.class_stats(2).lends + h.class_stats(3).lends);
}

void BM_HtbTwoLevelsFourFqCodelLeaves(benchmark::State& state) {
  run(state, [] { return AnyQueue(FqCodel(FqCodel::Params{})); });
}
BENCHMARK(BM_HtbTwoLevelsFourFqCodelLeaves);

void BM_HtbTwoLevelsFourFifoLeaves(benchmark::State& state) {
  run(state, [] { return AnyQueue(Fifo(Fifo::Params{.limit_packets = 1000})); });
}
BENCHMARK(BM_HtbTwoLevelsFourFifoLeaves);

// One class, no hierarchy: the cost floor of the HTB machinery (tokens charged every packet,
// the class flips between CAN_SEND and CANT_SEND with an event each time).
void BM_HtbSingleClass(benchmark::State& state) {
  Htb h;
  h.add_class({.id = 1, .rate = Rate::gbit(80)});
  Time now = Time::zero();
  uint64_t id = 0;
  for (int i = 0; i < 64; ++i) {
    Packet p;
    p.id = ++id;
    p.len = 1000;
    p.priority = 1;
    h.enqueue(std::move(p), now);
  }
  for (auto _ : state) {
    Packet p;
    p.id = ++id;
    p.len = 1000;
    p.priority = 1;
    h.enqueue(std::move(p), now);
    std::optional<Packet> out = h.dequeue(now);
    benchmark::DoNotOptimize(out);
    now += Duration::ns(100);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["overlimits"] = static_cast<double>(h.stats().overlimits);
}
BENCHMARK(BM_HtbSingleClass);

}  // namespace
}  // namespace nicsim::algo
