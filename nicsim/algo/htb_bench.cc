// Htb: enqueue+dequeue pairs per second with shaping active.
//
// Tree (a typical home-router shape): 1:1 root 100 Gbit/s → inner 1:2 and 1:3 (30 Gbit/s
// each, ceil 100) → leaves 1:4, 1:5 under 1:2 and 1:6, 1:7 under 1:3 (10 Gbit/s each, ceil
// 100, prio 0/1). The clock advances 100 ns per dequeue of a 1000-byte packet (80 Gbit/s
// through a 100 Gbit/s root), and every dequeued packet is replaced by a new one for the same
// leaf, so all leaves stay backlogged (64 packets each) whatever share they get. Every leaf is
// over its rate and borrows, the inner classes are over theirs too: modes change, events fire
// and packets are found at levels 0, 6 and 7 (about 1.5 mode changes and 1 event per
// packet). Classification by the skb->priority rule (priority = leaf id); 8 flows per leaf;
// the sojourn time (~26 us) stays far below CoDel's 5 ms target, so fq_codel does not drop.
// Leaves: fq_codel with its defaults (the sqm-style "htb + fq_codel" setup), and pfifo.
#include <benchmark/benchmark.h>

#include "nicsim/algo/fifo.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/algo/htb.h"

namespace nicsim::algo {
namespace {

constexpr uint32_t kLeaves[] = {4, 5, 6, 7};

// `burst_time` 0: tc's default burst/cburst (1600 B + rate/1e9); otherwise buckets of that
// much time at rate/ceil (sqm-scripts size them for about 1 ms).
template <class MakeLeaf>
Htb make_tree(MakeLeaf make_leaf, bool hysteresis, Duration burst_time) {
  Htb::Params params;
  params.hysteresis = hysteresis;
  Htb h(params);
  auto bytes = [burst_time](Rate r) { return static_cast<int64_t>(r.bytes_in(burst_time)); };
  auto add = [&](uint32_t id, uint32_t parent, Rate rate, Rate ceil, int64_t prio, AnyQueue leaf) {
    h.add_class({.id = id,
                 .parent = parent,
                 .rate = rate,
                 .ceil = ceil,
                 .burst = bytes(rate),
                 .cburst = bytes(ceil),
                 .prio = prio,
                 .leaf = std::move(leaf)});
  };
  add(1, 0, Rate::gbit(100), Rate::gbit(100), 0, AnyQueue());
  add(2, 1, Rate::gbit(30), Rate::gbit(100), 0, AnyQueue());
  add(3, 1, Rate::gbit(30), Rate::gbit(100), 0, AnyQueue());
  for (uint32_t leaf : kLeaves) {
    add(leaf, leaf < 6 ? 2u : 3u, Rate::gbit(10), Rate::gbit(100), leaf % 2, make_leaf());
  }
  return h;
}

template <class MakeLeaf>
void run(benchmark::State& state, MakeLeaf make_leaf, bool hysteresis = false,
         Duration burst_time = Duration::zero()) {
  Htb h = make_tree(make_leaf, hysteresis, burst_time);
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
  // Closed loop: every dequeued packet is replaced by a new one for the same leaf, so each
  // leaf keeps its 64-packet backlog whatever share HTB gives it.
  uint64_t misses = 0;
  for (auto _ : state) {
    std::optional<Packet> out = h.dequeue(now);
    if (out) {
      h.enqueue(packet(out->priority), now);
    } else {
      ++misses;
    }
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

// The same with htb_hysteresis = 1 and 1 ms buckets: classes change mode only when they are
// a whole bucket over (or back), so far fewer mode changes and events per packet.
void BM_HtbTwoLevelsFourFqCodelLeavesHysteresis1ms(benchmark::State& state) {
  run(
      state, [] { return AnyQueue(FqCodel(FqCodel::Params{})); }, true, Duration::ms(1));
}
BENCHMARK(BM_HtbTwoLevelsFourFqCodelLeavesHysteresis1ms);

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
