// Emulator data-path costs without system calls: frames through Datapath (two WireOnlyNics
// and two Wires) with in-memory ports, and the frame pool. What a frame costs the emulator
// besides the kernel's recvmmsg/sendmmsg (docs/emu.md has the end-to-end numbers).
#include <benchmark/benchmark.h>

#include <algorithm>

#include "nicsim/emu/datapath.h"
#include "nicsim/emu/frame_pool.h"
#include "nicsim/emu/wire_only_nic.h"

namespace nicsim::emu {
namespace {

using namespace nicsim::literals;

// A port that hands out `burst` frames per receive() and recycles written frames.
class LoopbackPort final : public FramePort {
 public:
  LoopbackPort(FramePool& pool, uint32_t len, size_t burst)
      : pool_(pool), len_(len), burst_(burst) {}
  int fd() const override { return -1; }
  size_t receive(Packet* out, size_t max) override {
    max = std::min(max, burst_);
    for (size_t i = 0; i < max; ++i) {
      out[i].payload = pool_.get();
      out[i].payload->bytes.resize(len_);
      out[i].len = len_;
    }
    return max;
  }
  void send(Packet&& frame) override {
    ++written;
    Packet drop = std::move(frame);
  }
  void flush() override {}
  const PortStats& stats() const override { return stats_; }
  std::string describe() const override { return "loopback"; }
  uint64_t written = 0;

 private:
  FramePool& pool_;
  uint32_t len_;
  size_t burst_;
  PortStats stats_;
};

// Frames per second through the whole model path (a→b), 1514-byte frames on a 10 Gbit/s wire
// with 100 µs delay, 32 frames per receive, time advancing by exactly the wire time.
void BM_DatapathForward(benchmark::State& state) {
  FramePool pool;
  const size_t burst = static_cast<size_t>(state.range(0));
  LoopbackPort a(pool, 1514, burst);
  LoopbackPort b(pool, 1514, 0);
  model::Wire::Params w;
  w.rate = Rate::gbit(10);
  w.delay = 100_us;
  std::array<std::unique_ptr<model::Nic>, 2> nics = {
      std::make_unique<WireOnlyNic>(WireOnlyNic::Params{}),
      std::make_unique<WireOnlyNic>(WireOnlyNic::Params{})};
  Datapath dp({&a, &b}, std::move(nics), {w, w});
  const Duration frame_time = w.rate.transmit_time(1538);
  Time now;
  for (auto _ : state) {
    dp.receive(0, now);  // `burst` frames from port a into NIC a
    dp.service(now);
    now += frame_time * static_cast<int64_t>(burst);
    benchmark::DoNotOptimize(b.written);
  }
  state.SetItemsProcessed(static_cast<int64_t>(b.written));
  state.counters["frames_out"] = static_cast<double>(b.written);
}

void BM_FramePoolGetRelease(benchmark::State& state) {
  FramePool pool;
  for (auto _ : state) {
    Payload p = pool.get();
    p->bytes.resize(1514);
    benchmark::DoNotOptimize(p->bytes.data());
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace
}  // namespace nicsim::emu

BENCHMARK(nicsim::emu::BM_DatapathForward)->Arg(32);
BENCHMARK(nicsim::emu::BM_FramePoolGetRelease);
