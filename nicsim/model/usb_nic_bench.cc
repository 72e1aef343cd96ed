// UsbNic throughput of the model itself: simulated frames per wall-clock second with a
// saturating 100 Mbit/s sender (RX) or a qdisc kept full (TX).
#include <benchmark/benchmark.h>

#include <optional>

#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/model/usb_nic.h"

namespace nicsim::model {
namespace {

struct CountingSink final : NicSink {
  void deliver(Packet&& /*frame*/, Time /*now*/) override { ++delivered; }
  void tx_released(const TxRelease& /*r*/, Time /*now*/) override { ++released; }
  uint64_t delivered = 0;
  uint64_t released = 0;
};

CpuCosts arm_like_costs() {
  CpuCosts c;
  c.per_interrupt = Duration::us(3);
  c.per_usb_transfer = Duration::us(8);
  c.per_rx_frame = Duration::us(2);
  c.per_tx_frame = Duration::us(2);
  c.per_tx_clean = Duration::us(1);
  c.copy_ps_per_byte = 500;
  return c;
}

// A sender that keeps the incoming wire busy with frames of `len` bytes (optionally with a
// payload, the emulator's case), the NIC, and a sink on the outgoing wire.
class Rig {
 public:
  Rig(const UsbNic::Params& p, Rate rate)
      : in_({.rate = rate}),
        out_({.rate = rate}),
        nic_(p, AnyQueue::make<algo::PfifoFast>(), arm_like_costs()) {
    nic_.attach(&out_, &in_, &cpu_, &sink_);
  }

  // Runs the simulation for `span` of simulated time.
  void run(Duration span, uint32_t rx_len, uint32_t tx_len, bool payload) {
    const Time end = now_ + span;
    while (true) {
      if (tx_len > 0) {  // keep the qdisc backlogged (a bulk TCP sender)
        while (nic_.queue_sample().qdisc_packets < 64) {
          Packet p;
          p.id = ++id_;
          p.len = tx_len;
          nic_.send(std::move(p), now_);
        }
      }
      std::optional<Time> t = nic_.next_event();
      auto take = [&t](std::optional<Time> x) {
        if (x && (!t || *x < *t)) {
          t = x;
        }
      };
      if (rx_len > 0) {
        take(in_.free_at(now_));
      }
      take(out_.next_ready());
      if (!t || *t > end) {
        break;
      }
      now_ = max(now_, *t);
      if (rx_len > 0 && in_.free_at(now_) <= now_) {
        Packet p;
        p.id = ++id_;
        p.len = rx_len;
        if (payload) {
          auto* buf = new PayloadBuffer;
          buf->bytes.assign(rx_len, static_cast<uint8_t>(id_));
          p.payload = Payload(buf);
        }
        in_.transmit(std::move(p), now_);
      }
      nic_.advance(now_);
      while (out_.pop_arrived(now_)) {
        ++wire_frames_;
      }
    }
    now_ = end;
  }
  uint64_t delivered() const { return sink_.delivered; }
  uint64_t wire_frames() const { return wire_frames_; }

 private:
  Wire in_;
  Wire out_;
  Cpu cpu_;
  CountingSink sink_;
  UsbNic nic_;
  Time now_;
  uint64_t id_ = 0;
  uint64_t wire_frames_ = 0;
};

void rx_bench(benchmark::State& state, const UsbNic::Params& p, uint32_t len, bool payload) {
  Rig rig(p, Rate::mbit(100));
  for (auto _ : state) {
    rig.run(Duration::ms(10), len, 0, payload);
  }
  state.SetItemsProcessed(static_cast<int64_t>(rig.delivered()));
  state.counters["sim_fps"] =
      static_cast<double>(rig.delivered()) / (static_cast<double>(state.iterations()) * 0.01);
}

void BM_RxLinuxSmscTurboMtu(benchmark::State& state) {
  rx_bench(state, UsbNic::linux_smsc95xx(true), 1514, false);
}
void BM_RxLinuxSmscTurboOffMtu(benchmark::State& state) {
  rx_bench(state, UsbNic::linux_smsc95xx(false), 1514, false);
}
void BM_RxLinuxSmscTurboSmallFrames(benchmark::State& state) {
  rx_bench(state, UsbNic::linux_smsc95xx(true), 60, false);
}
void BM_RxFreeBsdAxe16kMtu(benchmark::State& state) {
  rx_bench(state, UsbNic::freebsd_axe(16'384), 1514, false);
}
void BM_RxLinuxSmscTurboMtuPayload(benchmark::State& state) {
  rx_bench(state, UsbNic::linux_smsc95xx(true), 1514, true);
}

void tx_bench(benchmark::State& state, const UsbNic::Params& p, uint32_t len) {
  Rig rig(p, Rate::mbit(100));
  for (auto _ : state) {
    rig.run(Duration::ms(10), 0, len, false);
  }
  state.SetItemsProcessed(static_cast<int64_t>(rig.wire_frames()));
}

void BM_TxLinuxSmscMtu(benchmark::State& state) {
  tx_bench(state, UsbNic::linux_smsc95xx(true), 1514);
}
void BM_TxFreeBsdSmscMtu(benchmark::State& state) {
  tx_bench(state, UsbNic::freebsd_smsc95xx(true), 1514);
}

BENCHMARK(BM_RxLinuxSmscTurboMtu);
BENCHMARK(BM_RxLinuxSmscTurboOffMtu);
BENCHMARK(BM_RxLinuxSmscTurboSmallFrames);
BENCHMARK(BM_RxFreeBsdAxe16kMtu);
BENCHMARK(BM_RxLinuxSmscTurboMtuPayload);
BENCHMARK(BM_TxLinuxSmscMtu);
BENCHMARK(BM_TxFreeBsdSmscMtu);

}  // namespace
}  // namespace nicsim::model
