// Tbf: enqueue+dequeue pairs per second on a 10 Gbit/s TBF (burst 64 KiB, limit 64 KiB),
// 1514-byte packets: l2t(1514) = 1'211.2 -> 1'212 ns. Each iteration enqueues one packet,
// calls dequeue once and advances simulated time by a fixed step.
//
// BM_TbfOverloaded: step 1'000 ns, offered load ~1.21x the rate. After the initial burst the
// bucket is empty and the FIFO full: about 1 dequeue in 6 is refused (shaping active,
// overlimits) and about 1 enqueue in 6 is tail-dropped at the inner limit.
// BM_TbfUnderloaded: step 1'300 ns, offered below the rate: every dequeue releases.
// Counters: fraction of iterations whose dequeue released a packet / whose enqueue dropped.
#include <benchmark/benchmark.h>

#include "nicsim/algo/tbf.h"

namespace nicsim::algo {
namespace {

void run(benchmark::State& state, Duration step) {
  Tbf q(Tbf::Params{.rate = 10_gbit, .burst = 65536, .limit = 65536});
  Time now = Time::zero();
  uint64_t id = 0;
  uint64_t released = 0;
  uint64_t dropped = 0;
  for (auto _ : state) {
    Packet p;
    p.id = ++id;
    p.len = 1514;
    dropped += q.enqueue(std::move(p), now) == Verdict::kDropped ? 1 : 0;
    auto out = q.dequeue(now);
    released += out.has_value() ? 1 : 0;
    benchmark::DoNotOptimize(out);
    now += step;
  }
  const auto n = static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations());
  state.counters["released"] = benchmark::Counter(static_cast<double>(released) / n);
  state.counters["dropped"] = benchmark::Counter(static_cast<double>(dropped) / n);
}

void BM_TbfOverloaded(benchmark::State& state) { run(state, Duration::ns(1'000)); }
BENCHMARK(BM_TbfOverloaded);

void BM_TbfUnderloaded(benchmark::State& state) { run(state, Duration::ns(1'300)); }
BENCHMARK(BM_TbfUnderloaded);

}  // namespace
}  // namespace nicsim::algo
