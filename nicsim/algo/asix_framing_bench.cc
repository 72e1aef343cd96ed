// Asix framing: encode and decode throughput for full-size (1514-byte) frames: Linux reassembly
// of a stream cut into 2,048-byte URBs (MFB_2048, frames straddle transfers), FreeBSD parsing of
// 16 KiB bursts (10 whole frames), and TX.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "nicsim/algo/asix_framing.h"

namespace nicsim::algo {
namespace {

constexpr size_t kFrameLen = 1514;

std::vector<uint8_t> frame_bytes() {
  std::vector<uint8_t> f(kFrameLen);
  for (size_t i = 0; i < f.size(); ++i) {
    f[i] = static_cast<uint8_t>(i * 7);
  }
  return f;
}

void BM_AsixRxDecodeLinux2K(benchmark::State& state) {
  // 128 frames = 194,304 bytes = 94.875 URBs of 2,048 bytes; the stream ends on a frame
  // boundary, so the reassembly state is clean at the start of every iteration.
  constexpr size_t kFrames = 128;
  AsixRx rx;
  const auto f = frame_bytes();
  std::vector<uint8_t> stream;
  for (size_t i = 0; i < kFrames; ++i) {
    rx.encode_frame(f, stream);
  }
  std::vector<std::span<const uint8_t>> urbs;
  for (size_t pos = 0; pos < stream.size(); pos += 2048) {
    urbs.emplace_back(stream.data() + pos, std::min<size_t>(2048, stream.size() - pos));
  }
  uint64_t delivered = 0;
  for (auto _ : state) {
    for (const auto& u : urbs) {
      const auto r = rx.decode(u, [&delivered](std::span<const uint8_t> d) { delivered += d[0]; });
      benchmark::DoNotOptimize(r);
    }
  }
  benchmark::DoNotOptimize(delivered);
  if (rx.stats().frames != state.iterations() * kFrames || rx.stats().rx_errors != 0) {
    state.SkipWithError("frames lost");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kFrames));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
}
BENCHMARK(BM_AsixRxDecodeLinux2K);

void BM_AsixRxDecodeFreeBsd16K(benchmark::State& state) {
  constexpr size_t kFrames = 10;  // 15,180 bytes of a 16,384-byte burst
  AsixRx rx({.driver = UsbNetDriver::kFreeBsd});
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
}
BENCHMARK(BM_AsixRxDecodeFreeBsd16K);

void BM_AsixRxEncode(benchmark::State& state) {
  constexpr size_t kFrames = 10;
  AsixRx rx;
  const auto f = frame_bytes();
  std::vector<uint8_t> t;
  t.reserve(kFrames * 1518);
  for (auto _ : state) {
    t.clear();
    for (size_t i = 0; i < kFrames; ++i) {
      rx.encode_frame(f, t);
    }
    benchmark::DoNotOptimize(t.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kFrames));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * t.size()));
}
BENCHMARK(BM_AsixRxEncode);

void BM_AsixTxEncode(benchmark::State& state) {
  constexpr size_t kFrames = 16;  // FreeBSD packs up to 16 frames per transfer
  AsixTx tx;
  const auto f = frame_bytes();
  std::vector<uint8_t> t;
  t.reserve(kFrames * 1522);
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
BENCHMARK(BM_AsixTxEncode);

void BM_AsixTxDecode(benchmark::State& state) {
  constexpr size_t kFrames = 16;
  AsixTx tx;
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
BENCHMARK(BM_AsixTxDecode);

}  // namespace
}  // namespace nicsim::algo
