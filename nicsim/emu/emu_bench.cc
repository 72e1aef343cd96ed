// Emulator benchmarks.
//  - BM_DatapathForward, BM_FramePoolGetRelease: the data path's own cost without system
//    calls (two WireOnlyNics and two Wires between in-memory ports; the frame pool).
//  - BM_DatapathForwardModels: the same with the scenario NIC models (generic-10g PlatformNic
//    on both sides, x86-desktop CPU costs, pfifo_fast): what running the models costs per frame.
//  - BM_ForwardRealFrames/<io>/<frame bytes> (root only, else skipped): real frames through
//    the real emulator — a thread in host a blasts raw Ethernet frames (AF_PACKET sendmmsg,
//    EtherType 0x88b5) at its interface; the emulator loop (this thread) forwards them through
//    a 100 Gbit/s, zero-delay wire into host b for 2 s. Reports frames/s and Gbit/s written into
//    host b: the forwarding capacity of the frame I/O + loop, without TCP in the way.
// docs/emu.md records the results.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "nicsim/config/host_nic.h"
#include "nicsim/config/scenario.h"
#include "nicsim/emu/datapath.h"
#include "nicsim/emu/event_loop.h"
#include "nicsim/emu/frame_pool.h"
#include "nicsim/emu/netns.h"
#include "nicsim/emu/packet_port.h"
#include "nicsim/emu/real_clock.h"
#include "nicsim/emu/tap_port.h"
#include "nicsim/emu/topology.h"
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
  size_t receive(Packet* out, int64_t* rx_realtime_ns, size_t max) override {
    max = std::min(max, burst_);
    for (size_t i = 0; i < max; ++i) {
      rx_realtime_ns[i] = 0;
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
    dp.receive({true, false}, now);  // `burst` frames from port a into NIC a
    dp.service(now);
    now += frame_time * static_cast<int64_t>(burst);
    benchmark::DoNotOptimize(b.written);
  }
  state.SetItemsProcessed(static_cast<int64_t>(b.written));
  state.counters["frames_out"] = static_cast<double>(b.written);
}

void BM_DatapathForwardModels(benchmark::State& state) {
  config::LoadOptions opts;
  opts.preset_dirs = {std::string(NICSIM_SOURCE_DIR) + "/presets"};
  opts.standard_presets = false;
  const config::Run run = config::load_scenario_text(R"([scenario]
name = "bench"
duration = "1s"
[hosts.a]
cpu = "x86-desktop"
nic = "generic-10g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-10g"
[wire]
rate = "10Gbit"
delay = "100us"
)",
                                                     "bench.toml", opts)
                              .runs.at(0);
  FramePool pool;
  const size_t burst = static_cast<size_t>(state.range(0));
  LoopbackPort a(pool, 1514, burst);
  LoopbackPort b(pool, 1514, 0);
  const config::Scenario& sc = run.scenario;
  std::array<std::unique_ptr<model::Nic>, 2> nics = {config::make_host_nic(sc.hosts[0]),
                                                     config::make_host_nic(sc.hosts[1])};
  Datapath dp({&a, &b}, std::move(nics), {sc.wire.params(2), sc.wire.params(3)});
  const Duration frame_time = Rate::gbit(10).transmit_time(1538);
  Time now;
  for (auto _ : state) {
    dp.receive({true, false}, now);
    dp.service(now);
    now += frame_time * static_cast<int64_t>(burst);
    benchmark::DoNotOptimize(b.written);
  }
  state.SetItemsProcessed(static_cast<int64_t>(b.written));
  state.counters["frames_out"] = static_cast<double>(b.written);
  state.counters["nic_drops"] = static_cast<double>(dp.stats(0).nic_drops);
}
BENCHMARK(BM_DatapathForwardModels)->Arg(1)->Arg(32);

void BM_FramePoolGetRelease(benchmark::State& state) {
  FramePool pool;
  for (auto _ : state) {
    Payload p = pool.get();
    p->bytes.resize(1514);
    benchmark::DoNotOptimize(p->bytes.data());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ForwardRealFrames(benchmark::State& state) {
  if (const std::string why = privilege_problem(); !why.empty()) {
    state.SkipWithError(("needs root: " + why).c_str());
    return;
  }
  const auto io = static_cast<FrameIo>(state.range(0));
  const auto len = static_cast<size_t>(state.range(1));
  for (auto _ : state) {
    remove_stale_namespaces("nicsimbench");
    auto topo = Topology::create({.io = io, .prefix = "nicsimbench", .mtu = 1500, .hosts = {}});
    FramePool pool(2048, 4096);
    std::array<std::unique_ptr<FramePort>, 2> ports;
    for (size_t i = 0; i < 2; ++i) {
      HostEnd& h = topo->host(i);
      if (io == FrameIo::kPacket) {
        ports[i] = std::make_unique<PacketPort>(topo->switch_netns_fd(), h.port_ifname, pool);
      } else {
        ports[i] = std::make_unique<TapPort>(std::move(h.tap_fd), h.ifname, pool);
      }
    }
    model::Wire::Params w;
    w.rate = Rate::gbit(100);
    std::array<std::unique_ptr<model::Nic>, 2> nics = {
        std::make_unique<WireOnlyNic>(WireOnlyNic::Params{.txqueuelen = 10000}),
        std::make_unique<WireOnlyNic>(WireOnlyNic::Params{.txqueuelen = 10000})};
    Datapath dp({ports[0].get(), ports[1].get()}, std::move(nics), {w, w});

    std::atomic<bool> stop{false};
    std::atomic<uint64_t> sent{0};
    const HostEnd& a = topo->host(0);
    const HostEnd& b = topo->host(1);
    std::thread blaster([&] {
      NetnsGuard in(a.netns_fd.get());
      UniqueFd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
      sockaddr_ll sll{};
      sll.sll_family = AF_PACKET;
      sll.sll_protocol = htons(ETH_P_ALL);
      sll.sll_ifindex = static_cast<int>(::if_nametoindex(a.ifname.c_str()));
      ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sll), sizeof sll);
      std::array<uint8_t, 1514> frame{};
      frame.fill(0x5a);
      std::memcpy(frame.data(), b.mac.data(), 6);
      std::memcpy(frame.data() + 6, a.mac.data(), 6);
      frame[12] = 0x88;
      frame[13] = 0xb5;
      constexpr size_t kBatch = 64;
      std::array<iovec, kBatch> iov{};
      std::array<mmsghdr, kBatch> msg{};
      for (size_t i = 0; i < kBatch; ++i) {
        iov[i] = {frame.data(), std::min(len, frame.size())};
        msg[i].msg_hdr.msg_iov = &iov[i];
        msg[i].msg_hdr.msg_iovlen = 1;
      }
      while (!stop.load(std::memory_order_relaxed)) {
        const int n = ::sendmmsg(fd.get(), msg.data(), kBatch, 0);
        if (n > 0) {
          sent.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
        }
      }
    });
    RealClock clock;
    EventLoop loop(clock, {});
    loop.add(ports[0]->fd(), 0);
    loop.add(ports[1]->fd(), 1);
    const Time warm = clock.now() + 200_ms;
    const Time end = warm + 2_s;
    uint64_t out_at_warm = 0;
    bool warmed = false;
    for (Time now = clock.now(); now < end; now = clock.now()) {
      if (!warmed && now >= warm) {
        out_at_warm = ports[1]->stats().tx_frames;
        warmed = true;
      }
      std::optional<Time> deadline = dp.next_event();
      if (!deadline || *deadline > end) {
        deadline = end;
      }
      std::vector<bool> ready{false, false};
      for (uint32_t token : loop.wait(deadline)) {
        ready[token] = true;
      }
      dp.receive(ready, clock.now(), clock.realtime_minus_time_ns());
      dp.service(clock.now());
    }
    stop = true;
    blaster.join();
    const double frames = static_cast<double>(ports[1]->stats().tx_frames - out_at_warm);
    state.counters["frames_per_s"] = frames / 2.0;
    state.counters["gbit_per_s"] = frames * static_cast<double>(len) * 8 / 2.0 / 1e9;
    state.counters["offered_per_s"] = static_cast<double>(sent.load()) / 2.2;
    state.counters["frames_per_read"] =
        static_cast<double>(ports[0]->stats().rx_frames) /
        static_cast<double>(std::max<uint64_t>(1, ports[0]->stats().rx_calls));
  }
}

}  // namespace
}  // namespace nicsim::emu

BENCHMARK(nicsim::emu::BM_DatapathForward)->Arg(32);
BENCHMARK(nicsim::emu::BM_FramePoolGetRelease);
BENCHMARK(nicsim::emu::BM_ForwardRealFrames)
    ->ArgsProduct({{static_cast<int64_t>(nicsim::emu::FrameIo::kPacket),
                    static_cast<int64_t>(nicsim::emu::FrameIo::kTap)},
                   {60, 1514}})
    ->ArgNames({"io", "bytes"})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
