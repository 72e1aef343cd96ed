// Rss: packets steered per second (byte-wise Toeplitz over the IPv4 four-tuple plus the
// indirection table), against the bit-by-bit definition.
#include <benchmark/benchmark.h>

#include <array>

#include "nicsim/algo/rss.h"

namespace nicsim::algo {
namespace {

void BM_RssSteerTcp(benchmark::State& state) {
  Rss::Params p;
  p.queues = 8;
  Rss rss(p);
  Rss::Flow f{0xC6120001u, 0xC6120002u, 40000, 5201, Rss::Proto::kTcp};
  for (auto _ : state) {
    f.src_port = static_cast<uint16_t>(f.src_port + 1);
    benchmark::DoNotOptimize(rss.steer(f));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RssSteerTcp);

void BM_ToeplitzBitwise(benchmark::State& state) {
  std::array<uint8_t, 12> in = {198, 18, 0, 1, 198, 18, 0, 2, 0x9c, 0x40, 0x14, 0x51};
  for (auto _ : state) {
    ++in[9];
    benchmark::DoNotOptimize(Rss::toeplitz(Rss::kVerificationKey, in));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ToeplitzBitwise);

}  // namespace
}  // namespace nicsim::algo
