// Smsc95xx framing: encode and decode throughput for turbo-mode transfers of full-size frames
// (12 x 1514-byte frames = 18,334 bytes with COE, as one 18,944-byte BURST_CAP transfer holds).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "nicsim/algo/smsc95xx_framing.h"

namespace nicsim::algo {
namespace {

constexpr size_t kFrames = 12;
constexpr size_t kFrameLen = 1514;

std::vector<uint8_t> frame_bytes() {
  std::vector<uint8_t> f(kFrameLen);
  for (size_t i = 0; i < f.size(); ++i) {
    f[i] = static_cast<uint8_t>(i * 7);
  }
  return f;
}

void BM_Smsc95xxRxDecode(benchmark::State& state) {
  Smsc95xxRx rx({.driver = state.range(0) == 0 ? UsbNetDriver::kLinux : UsbNetDriver::kFreeBsd});
  const auto f = frame_bytes();
  std::vector<uint8_t> t;
  for (size_t i = 0; i < kFrames; ++i) {
    rx.encode_frame(f, t);
  }
  uint64_t delivered = 0;
  for (auto _ : state) {
    const auto r = rx.decode(t, [&delivered](std::span<const uint8_t> d) { delivered += d[0]; });
    benchmark::DoNotOptimize(r);
  }
  benchmark::DoNotOptimize(delivered);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kFrames));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * t.size()));
  state.SetLabel(state.range(0) == 0 ? "linux" : "freebsd");
}
BENCHMARK(BM_Smsc95xxRxDecode)->Arg(0)->Arg(1);

void BM_Smsc95xxRxEncode(benchmark::State& state) {
  Smsc95xxRx rx({.compute_fcs = state.range(0) != 0});
  const auto f = frame_bytes();
  std::vector<uint8_t> t;
  t.reserve(kFrames * 1528);
  for (auto _ : state) {
    t.clear();
    for (size_t i = 0; i < kFrames; ++i) {
      rx.encode_frame(f, t);
    }
    benchmark::DoNotOptimize(t.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kFrames));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * t.size()));
  state.SetLabel(state.range(0) != 0 ? "with FCS (CRC-32)" : "zero FCS");
}
BENCHMARK(BM_Smsc95xxRxEncode)->Arg(1)->Arg(0);

void BM_Smsc95xxTxEncode(benchmark::State& state) {
  Smsc95xxTx tx;
  const auto f = frame_bytes();
  std::vector<uint8_t> t;
  t.reserve(kFrames * 1524);
  for (auto _ : state) {
    t.clear();
    for (size_t i = 0; i < kFrames; ++i) {
      tx.encode_frame(f, t);
    }
    benchmark::DoNotOptimize(t.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kFrames));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * t.size()));
}
BENCHMARK(BM_Smsc95xxTxEncode);

void BM_Smsc95xxTxDecode(benchmark::State& state) {
  Smsc95xxTx tx;
  const auto f = frame_bytes();
  std::vector<uint8_t> t;
  for (size_t i = 0; i < kFrames; ++i) {
    tx.encode_frame(f, t);
  }
  uint64_t delivered = 0;
  for (auto _ : state) {
    const auto r = tx.decode(t, [&delivered](std::span<const uint8_t> d) { delivered += d[0]; });
    benchmark::DoNotOptimize(r);
  }
  benchmark::DoNotOptimize(delivered);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kFrames));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * t.size()));
}
BENCHMARK(BM_Smsc95xxTxDecode);

void BM_EthernetCrc32(benchmark::State& state) {
  const auto f = frame_bytes();
  for (auto _ : state) {
    benchmark::DoNotOptimize(ethernet_crc32(f));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.size()));
}
BENCHMARK(BM_EthernetCrc32);

}  // namespace
}  // namespace nicsim::algo
