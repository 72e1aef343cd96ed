// Unit tests of the emulator that need no privileges: the stand-in NIC and the data path on a
// manual clock with fake ports (exact times worked out by hand from the Wire model, docs/
// models/wire.md: a frame of len bytes occupies 8 + max(len + 4, 64) + 12 byte times), the
// frame pool, namespace names, capability checks, unsupported-setting notices.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "nicsim/config/host_nic.h"
#include "nicsim/config/network.h"
#include "nicsim/config/scenario.h"
#include "nicsim/emu/address_plan.h"
#include "nicsim/emu/datapath.h"
#include "nicsim/emu/frame_classifier.h"
#include "nicsim/emu/frame_pool.h"
#include "nicsim/emu/netns.h"
#include "nicsim/emu/pcap_writer.h"
#include "nicsim/emu/process.h"
#include "nicsim/emu/real_clock.h"
#include "nicsim/emu/session.h"
#include "nicsim/emu/tap_port.h"
#include "nicsim/emu/wire_only_nic.h"
#include "nicsim/model/multi_queue_nic.h"
#include "nicsim/model/platform_nic.h"
#include "nicsim/model/usb_nic.h"
#include "nicsim/testing/packet_factory.h"

namespace nicsim::emu {
namespace {

using namespace nicsim::literals;

// Records what a NIC delivers and releases.
class RecordingSink final : public model::NicSink {
 public:
  struct Delivery {
    uint64_t id;
    Time at;
  };
  void deliver(Packet&& frame, Time now) override { delivered.push_back({frame.id, now}); }
  void tx_released(const model::TxRelease& r, Time now) override {
    released.push_back({r.packet_id, now});
  }
  std::vector<Delivery> delivered;
  std::vector<Delivery> released;
};

model::Wire::Params wire_100mbit_5ms() {
  model::Wire::Params p;
  p.rate = Rate::mbit(100);
  p.delay = 5_ms;
  return p;
}

// A 98-byte frame (ping: 14 + 20 + 8 + 56) is 8 + 102 + 12 = 122 byte times = 9760 ns at
// 100 Mbit/s; it arrives 5 ms later.
TEST(WireOnlyNic, IdleFrameArrivesAfterSerialisationPlusDelay) {
  model::Wire out(wire_100mbit_5ms());
  model::Wire in(wire_100mbit_5ms());
  WireOnlyNic tx({});
  WireOnlyNic rx({});
  RecordingSink tx_sink, rx_sink;
  tx.attach(&out, &in, nullptr, &tx_sink);
  rx.attach(&in, &out, nullptr, &rx_sink);
  testing::PacketFactory f;
  ASSERT_EQ(tx.send(f.make(98), Time::zero()), Verdict::kQueued);
  ASSERT_EQ(tx.next_event(), Time::zero());
  tx.advance(Time::zero());
  ASSERT_EQ(tx_sink.released.size(), 1u);
  EXPECT_EQ(tx_sink.released[0].at, Time::from_ns(9'760));  // TX completion at the last bit
  EXPECT_EQ(tx.next_event(), std::nullopt);
  ASSERT_EQ(rx.next_event(), Time::from_ns(5'009'760));
  rx.advance(Time::from_ns(5'009'759));
  EXPECT_TRUE(rx_sink.delivered.empty());
  rx.advance(Time::from_ns(5'009'760));
  ASSERT_EQ(rx_sink.delivered.size(), 1u);
  EXPECT_EQ(rx_sink.delivered[0].at, Time::from_ns(5'009'760));
}

// Three 1514-byte frames offered at t = 0 take 1538 byte times = 123,040 ns each. The loop
// only gets round to the NIC at t = 1 ms: the frames still start at 0, 123.04 and 246.08 µs
// (the model's own schedule), so a late wake-up costs no link time.
TEST(WireOnlyNic, LateAdvanceKeepsBackToBackSchedule) {
  model::Wire out(wire_100mbit_5ms());
  model::Wire in(wire_100mbit_5ms());
  WireOnlyNic tx({});
  WireOnlyNic rx({});
  RecordingSink tx_sink, rx_sink;
  tx.attach(&out, &in, nullptr, &tx_sink);
  rx.attach(&in, &out, nullptr, &rx_sink);
  testing::PacketFactory f;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(tx.send(f.make(1514), Time::zero()), Verdict::kQueued);
  }
  tx.advance(Time::zero() + 1_ms);
  ASSERT_EQ(tx_sink.released.size(), 3u);
  EXPECT_EQ(tx_sink.released[0].at, Time::from_ns(123'040));
  EXPECT_EQ(tx_sink.released[1].at, Time::from_ns(246'080));
  EXPECT_EQ(tx_sink.released[2].at, Time::from_ns(369'120));
  rx.advance(Time::from_ns(10'000'000));
  ASSERT_EQ(rx_sink.delivered.size(), 3u);
  EXPECT_EQ(rx_sink.delivered[0].at, Time::from_ns(5'123'040));
  EXPECT_EQ(rx_sink.delivered[1].at, Time::from_ns(5'246'080));
  EXPECT_EQ(rx_sink.delivered[2].at, Time::from_ns(5'369'120));
}

// On time, one frame at a time: while a frame is on the wire the next one waits in the FIFO
// and next_event() is the end of the current frame.
TEST(WireOnlyNic, NextEventIsEndOfCurrentFrame) {
  model::Wire out(wire_100mbit_5ms());
  model::Wire in(wire_100mbit_5ms());
  WireOnlyNic tx({});
  RecordingSink sink;
  tx.attach(&out, &in, nullptr, &sink);
  testing::PacketFactory f;
  tx.send(f.make(1514), Time::zero());
  tx.send(f.make(1514), Time::zero());
  tx.advance(Time::zero());
  EXPECT_EQ(tx.backlog(), 1u);
  EXPECT_EQ(tx.next_event(), Time::from_ns(123'040));
  EXPECT_EQ(tx.queue_sample().qdisc_bytes, 1514u);
  tx.advance(Time::from_ns(123'040));
  EXPECT_EQ(tx.backlog(), 0u);
}

TEST(WireOnlyNic, DropTailAtTxqueuelen) {
  model::Wire out(wire_100mbit_5ms());
  model::Wire in(wire_100mbit_5ms());
  WireOnlyNic tx({.txqueuelen = 2});
  RecordingSink sink;
  tx.attach(&out, &in, nullptr, &sink);
  testing::PacketFactory f;
  EXPECT_EQ(tx.send(f.make(100), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(tx.send(f.make(100), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(tx.send(f.make(100), Time::zero()), Verdict::kDropped);
  EXPECT_EQ(tx.stats().dropped, 1u);
  EXPECT_EQ(tx.counters().tx_qdisc_drops, 1u);
  tx.advance(Time::zero());  // the first leaves: room for one more
  EXPECT_EQ(tx.send(f.make(100), Time::zero()), Verdict::kQueued);
}

TEST(WireOnlyNic, RejectsBadTxqueuelen) {
  try {
    WireOnlyNic nic({.txqueuelen = 0});
    FAIL() << "expected InvalidParams";
  } catch (const InvalidParams& e) {
    EXPECT_EQ(e.error().key, "txqueuelen");
  }
}

// A port whose "host" is a test: inject() queues frames to be read, flush() records writes.
class FakePort final : public FramePort {
 public:
  explicit FakePort(FramePool& pool) : pool_(pool) {}
  // Queues a frame of `len` bytes filled with `fill`, with kernel timestamp `rx_realtime_ns`
  // (0 = none); returns its buffer address.
  const uint8_t* inject(uint32_t len, uint8_t fill, int64_t rx_realtime_ns = 0) {
    Packet p;
    p.payload = pool_.get();
    p.payload->bytes.assign(len, fill);
    p.len = len;
    p.id = ++ids_;
    const uint8_t* addr = p.payload->bytes.data();
    pending_.push_back({std::move(p), rx_realtime_ns});
    return addr;
  }
  void inject_packet(Packet&& p, int64_t rx_realtime_ns = 0) {
    pending_.push_back({std::move(p), rx_realtime_ns});
  }
  int fd() const override { return -1; }
  size_t receive(Packet* out, int64_t* rx_realtime_ns, size_t max) override {
    size_t n = 0;
    while (n < max && !pending_.empty()) {
      out[n] = std::move(pending_.front().first);
      rx_realtime_ns[n] = pending_.front().second;
      ++n;
      pending_.pop_front();
      ++stats_.rx_frames;
    }
    return n;
  }
  void send(Packet&& frame) override { queued_.push_back(std::move(frame)); }
  void flush() override {
    for (Packet& p : queued_) {
      written.push_back(std::move(p));
    }
    queued_.clear();
  }
  const PortStats& stats() const override { return stats_; }
  std::string describe() const override { return "fake"; }
  bool pulls() const override { return pull; }
  size_t pending() const { return pending_.size(); }
  std::vector<Packet> written;
  bool pull = false;  // acts as a BusyPollPort: frames stay "in the host" until pulled

 private:
  FramePool& pool_;
  std::deque<std::pair<Packet, int64_t>> pending_;
  uint64_t ids_ = 0;
  std::vector<Packet> queued_;
  PortStats stats_;
};

struct DatapathFixture {
  explicit DatapathFixture(model::Wire::Params wire = wire_100mbit_5ms()) : a(pool), b(pool) {
    std::array<std::unique_ptr<model::Nic>, 2> nics = {
        std::make_unique<WireOnlyNic>(WireOnlyNic::Params{}),
        std::make_unique<WireOnlyNic>(WireOnlyNic::Params{})};
    model::Wire::Params w1 = wire;
    w1.seed = wire.seed + 1;
    dp = std::make_unique<Datapath>(std::array<FramePort*, 2>{&a, &b}, std::move(nics),
                                    std::array<model::Wire::Params, 2>{wire, w1});
  }
  ~DatapathFixture() {
    dp.reset();  // frames held by models return to the pool before it goes
    a.written.clear();
    b.written.clear();
  }
  FramePool pool;
  FakePort a;
  FakePort b;
  std::unique_ptr<Datapath> dp;
};

// The same buffer (same address, same bytes) comes out on the other side: frames move through
// the models without a copy.
TEST(Datapath, FrameCrossesWithoutCopyAtTheScheduledTime) {
  DatapathFixture f;
  const uint8_t* addr = f.a.inject(98, 0xab);
  EXPECT_EQ(f.dp->receive({true, false}, Time::zero()), 1u);
  f.dp->service(Time::zero());
  ASSERT_EQ(f.dp->next_event(), Time::from_ns(5'009'760));
  f.dp->service(Time::from_ns(5'009'759));
  EXPECT_TRUE(f.b.written.empty());
  f.dp->service(Time::from_ns(5'012'760));  // 3 µs late
  ASSERT_EQ(f.b.written.size(), 1u);
  const Packet& p = f.b.written[0];
  EXPECT_EQ(p.payload->bytes.data(), addr);
  EXPECT_EQ(p.len, 98u);
  EXPECT_EQ(p.payload->bytes, std::vector<uint8_t>(98, 0xab));
  EXPECT_TRUE(f.a.written.empty());
  EXPECT_EQ(f.dp->stats(0).frames_in, 1u);
  EXPECT_EQ(f.dp->stats(0).frames_out, 1u);
  EXPECT_EQ(f.dp->release_lateness().count(), 1u);
  EXPECT_EQ(f.dp->release_lateness().max(), 3_us);
  EXPECT_EQ(f.dp->next_event(), std::nullopt);
}

// A frame with a kernel timestamp enters the model when the host sent it, not when the loop
// read it: sent at 1 ms (realtime 1,000,001,000,000 ns with offset 1,000,000,000,000 ns), read
// at 1.2 ms, it arrives at 1 ms + 5,009,760 ns.
TEST(Datapath, KernelTimestampIsTheInputTime) {
  DatapathFixture f;
  constexpr int64_t kOffset = 1'000'000'000'000;
  f.a.inject(98, 0, kOffset + 1'000'000);
  f.dp->receive({true, false}, Time::from_ns(1'200'000), kOffset);
  EXPECT_EQ(f.dp->next_event(), Time::from_ns(1'000'000));
  f.dp->service(Time::from_ns(1'200'000));
  EXPECT_EQ(f.dp->next_event(), Time::from_ns(6'009'760));
}

// Input times are clamped to [models' time, now]: a stamp from before the models' time (or
// from the future) cannot move a model backwards (or forwards past now). Both hosts' frames
// are fed in time order.
TEST(Datapath, InputTimesAreClampedAndMerged) {
  DatapathFixture f;
  f.dp->service(Time::from_ns(2'000'000));  // models at 2 ms
  f.a.inject(98, 0, 1'500'000);             // before the models' time -> 2 ms
  f.b.inject(98, 0, 2'100'000);             // host b sent first...
  f.a.inject(98, 0, 2'300'000);             // ... then host a again
  f.b.inject(98, 0, 9'000'000);             // in the future -> now (2.5 ms)
  f.dp->receive({true, true}, Time::from_ns(2'500'000), 0);
  EXPECT_EQ(f.dp->model_time(), Time::from_ns(2'500'000));
  f.dp->service(Time::from_ns(2'500'000));
  f.dp->service(Time::from_ns(20'000'000));
  ASSERT_EQ(f.b.written.size(), 2u);  // from host a, at 2 ms and 2.3 ms + 5,009,760 ns
  ASSERT_EQ(f.a.written.size(), 2u);  // from host b, at 2.1 ms and 2.5 ms + 5,009,760 ns
  EXPECT_EQ(f.b.written[0].stamp_at(Stage::kWireEnd), Time::from_ns(7'009'760));
  EXPECT_EQ(f.b.written[1].stamp_at(Stage::kWireEnd), Time::from_ns(7'309'760));
  EXPECT_EQ(f.a.written[0].stamp_at(Stage::kWireEnd), Time::from_ns(7'109'760));
  EXPECT_EQ(f.a.written[1].stamp_at(Stage::kWireEnd), Time::from_ns(7'509'760));
}

// b -> a uses the other wire and ends on port a.
TEST(Datapath, BothDirections) {
  DatapathFixture f;
  f.a.inject(1514, 1);
  f.b.inject(66, 2);
  f.dp->receive({true, false}, Time::zero());
  f.dp->receive({false, true}, Time::zero());
  f.dp->service(Time::zero());
  f.dp->service(Time::zero() + 10_ms);
  ASSERT_EQ(f.b.written.size(), 1u);
  ASSERT_EQ(f.a.written.size(), 1u);
  EXPECT_EQ(f.b.written[0].len, 1514u);
  EXPECT_EQ(f.a.written[0].len, 66u);
  EXPECT_EQ(f.dp->stats(1).frames_out, 1u);
  EXPECT_EQ(f.dp->stats(1).bytes_out, 66u);
}

// Back pressure: a pulling port's frames stay in the host while the sending NIC has a frame
// waiting in its qdisc (WireOnlyNic: its FIFO holds what has not started on the wire). Ten
// 1514-byte frames at 100 Mbit/s: pull() takes one batch (two frames: one starts on the wire,
// one waits), then nothing until the wire takes the waiting one; the emulated queue never holds
// more than one batch, the rest wait in the host, and every frame crosses in order.
TEST(Datapath, PullTakesFramesOnlyWhileTheNicHasRoom) {
  DatapathFixture f;
  f.a.pull = true;
  for (uint8_t i = 0; i < 10; ++i) {
    f.a.inject(1514, i);
  }
  EXPECT_TRUE(f.dp->has_room(0));
  EXPECT_FALSE(f.dp->has_room(1));  // host b's port does not pull
  EXPECT_EQ(f.dp->pull(Time::zero()), Datapath::kPullBatch);
  EXPECT_EQ(f.a.pending(), 8u);
  EXPECT_FALSE(f.dp->wants_pull());
  EXPECT_EQ(f.dp->pull(Time::zero()), 0u);  // no room: nothing more leaves the host
  size_t max_queued = 0;
  Time t = Time::zero();
  for (int step = 0; step < 100 && f.a.pending() > 0; ++step) {
    const std::optional<Time> e = f.dp->next_event();
    ASSERT_TRUE(e.has_value());
    t = *e;
    f.dp->service(t);
    f.dp->pull(t);
    max_queued = std::max<size_t>(max_queued, f.dp->nic(0).queue_sample().qdisc_packets);
    EXPECT_LE(f.a.pending() + f.dp->stats(0).frames_in, 10u);
  }
  EXPECT_EQ(f.a.pending(), 0u);
  EXPECT_EQ(max_queued, Datapath::kPullBatch);  // a batch pulled while the wire was busy
  f.dp->service(t + 10_ms);
  ASSERT_EQ(f.b.written.size(), 10u);
  for (uint8_t i = 0; i < 10; ++i) {
    EXPECT_EQ(f.b.written[i].payload->bytes[0], i);
  }
  EXPECT_TRUE(f.dp->wants_pull());  // idle again: the loop keeps looking
}

// receive() never reads a pulling port (its frames leave the host only through pull()), and
// pull() never reads a port that does not pull.
TEST(Datapath, ReceiveAndPullKeepToTheirPorts) {
  DatapathFixture f;
  f.a.pull = true;
  f.a.inject(98, 1);
  f.b.inject(98, 2);
  EXPECT_EQ(f.dp->receive({true, false}, Time::zero()), 0u);
  EXPECT_EQ(f.a.pending(), 1u);
  EXPECT_EQ(f.dp->pull(Time::zero()), 1u);
  EXPECT_EQ(f.b.pending(), 1u);
  EXPECT_EQ(f.dp->receive({false, true}, Time::zero()), 1u);
  f.dp->service(Time::zero() + 10_ms);
  EXPECT_EQ(f.b.written.size(), 1u);
  EXPECT_EQ(f.a.written.size(), 1u);
}

// With loss, every frame read is either written or counted lost on the wire; the buffers of
// lost frames return to the pool.
TEST(Datapath, LossConservesFramesAndBuffers) {
  model::Wire::Params w = wire_100mbit_5ms();
  w.loss = 0.3;
  w.seed = 7;
  DatapathFixture f(w);
  for (int i = 0; i < 200; ++i) {
    f.a.inject(200, 0);
  }
  f.dp->receive({true, false}, Time::zero());
  f.dp->service(Time::zero());
  for (int k = 1; k <= 100 && f.dp->next_event(); ++k) {
    f.dp->service(Time::zero() + 1_ms * k);
  }
  const DirectionStats& s = f.dp->stats(0);
  EXPECT_EQ(s.frames_in, 200u);
  EXPECT_GT(s.wire_lost, 20u);
  EXPECT_EQ(s.frames_out + s.wire_lost, 200u);
  EXPECT_EQ(f.pool.outstanding(), f.b.written.size());
}

TEST(FramePool, ReusesBuffers) {
  FramePool pool(2048, 4);
  EXPECT_EQ(pool.allocated(), 4u);
  {
    std::vector<Payload> held;
    for (int i = 0; i < 6; ++i) {
      held.push_back(pool.get());
      EXPECT_EQ(held.back()->bytes.size(), 2048u);
    }
    EXPECT_EQ(pool.allocated(), 6u);  // grew by two
    EXPECT_EQ(pool.outstanding(), 6u);
  }
  EXPECT_EQ(pool.outstanding(), 0u);
  for (int round = 0; round < 100; ++round) {  // steady state: no new buffers
    Payload p = pool.get();
    p->bytes.resize(60);
  }
  EXPECT_EQ(pool.allocated(), 6u);
  EXPECT_EQ(pool.get()->bytes.size(), 2048u);  // a recycled buffer comes back full size
}

TEST(NetnsNames, RoundTripAndRejects) {
  EXPECT_EQ(netns_name("nicsim", 1234, "a"), "nicsim-1234-a");
  const auto p = parse_netns_name("nicsim", "nicsim-1234-sw");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pid, 1234);
  EXPECT_EQ(p->role, "sw");
  for (const char* bad : {"nicsim-abc-a", "nicsimx-1-a", "nicsim-1-", "nicsim--a", "nicsim-1",
                          "nicsim-0-a", "other-1-a", "nicsim-1-A", "nicsim-12x-a"}) {
    EXPECT_FALSE(parse_netns_name("nicsim", bad)) << bad;
  }
}

TEST(Privileges, MissingCapabilities) {
  EXPECT_EQ(missing_capabilities(0), "CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_NET_RAW");
  EXPECT_EQ(missing_capabilities(~uint64_t{0}), "");
  const uint64_t all_but_net_admin = ~(uint64_t{1} << 12);
  EXPECT_EQ(missing_capabilities(all_but_net_admin), "CAP_NET_ADMIN");
  EXPECT_TRUE(effective_capabilities().has_value());
}

TEST(Process, ShellStatus) {
  EXPECT_EQ(shell_status(3 << 8), 3);     // exited with 3
  EXPECT_EQ(shell_status(15), 128 + 15);  // killed by SIGTERM
}

TEST(RealClock, MapsTimeOntoMonotonic) {
  const RealClock clock;
  const timespec ts = clock.to_monotonic(Time::from_ns(1'500'000'000));
  EXPECT_EQ(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec,
            clock.epoch_ns() + 1'500'000'000);
  const Time t1 = clock.now();
  const Time t2 = clock.now();
  EXPECT_GE(t1, Time::zero());
  EXPECT_GE(t2, t1);
}

TEST(Session, NamesSettingsNotEmulatedYet) {
  config::LoadOptions opts;
  opts.preset_dirs = {std::string(NICSIM_TEST_SOURCE_DIR) + "/presets"};
  opts.standard_presets = false;
  // `extra` is appended to a scenario whose every setting the emulator honours.
  auto unsupported = [&](const std::string& extra) {
    const auto loaded = config::load_scenario_text(R"([scenario]
name = "t"
duration = "1s"
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"
[wire]
rate = "100Mbit"
delay = "5ms"
[[traffic.ping]]
from = "a"
to = "b"
)" + extra,
                                                   "t.toml", opts);
    return unsupported_settings(loaded.runs[0].scenario);
  };
  // The NIC models and qdiscs run in the emulator, the traffic on real sockets (nicsim/live),
  // and default TCP settings need no word: nothing is listed.
  EXPECT_EQ(unsupported(""), std::vector<std::string>{});
  // A TCP setting is not applied to the namespaces' kernels: one line, located in the file.
  const std::vector<std::string> tcp = unsupported("[hosts.b.tcp]\ntsq_limit = \"128KiB\"\n");
  ASSERT_EQ(tcp.size(), 1u);
  EXPECT_EQ(tcp[0],
            "t.toml:16:10: hosts.b.tcp: TCP settings are not applied to the hosts' "
            "kernels yet");
}

// ---- frame classification and ECN ----------------------------------------------------------

uint16_t ip_checksum(const std::vector<uint8_t>& b, size_t off, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i < len; i += 2) {
    sum += static_cast<uint32_t>((b[off + i] << 8) | b[off + i + 1]);
  }
  while (sum >> 16) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return static_cast<uint16_t>(~sum);
}

// An Ethernet + IPv4 + UDP frame of `len` bytes (>= 42) with a valid IPv4 header checksum and a
// pseudo-random payload from `seed`.
std::vector<uint8_t> udp_frame(size_t len, uint8_t tos, uint16_t sport, uint16_t dport,
                               uint32_t seed) {
  std::vector<uint8_t> f(len, 0);
  const uint8_t dst[6] = {0x02, 0x6e, 0x73, 0, 0, 2};
  const uint8_t src[6] = {0x02, 0x6e, 0x73, 0, 0, 1};
  std::copy(dst, dst + 6, f.begin());
  std::copy(src, src + 6, f.begin() + 6);
  f[12] = 0x08;
  f[13] = 0x00;
  const size_t ip = 14;
  const size_t ip_len = len - 14;
  f[ip] = 0x45;
  f[ip + 1] = tos;
  f[ip + 2] = static_cast<uint8_t>(ip_len >> 8);
  f[ip + 3] = static_cast<uint8_t>(ip_len);
  f[ip + 8] = 64;
  f[ip + 9] = 17;
  const uint8_t a[4] = {198, 18, 0, 1};
  const uint8_t b[4] = {198, 18, 0, 2};
  std::copy(a, a + 4, f.begin() + ip + 12);
  std::copy(b, b + 4, f.begin() + ip + 16);
  const uint16_t c = ip_checksum(f, ip, 20);
  f[ip + 10] = static_cast<uint8_t>(c >> 8);
  f[ip + 11] = static_cast<uint8_t>(c);
  f[34] = static_cast<uint8_t>(sport >> 8);
  f[35] = static_cast<uint8_t>(sport);
  f[36] = static_cast<uint8_t>(dport >> 8);
  f[37] = static_cast<uint8_t>(dport);
  std::mt19937 rng(seed);
  for (size_t i = 42; i < len; ++i) {
    f[i] = static_cast<uint8_t>(rng());
  }
  return f;
}

Packet packet_of(FramePool& pool, const std::vector<uint8_t>& bytes) {
  Packet p;
  p.payload = pool.get();
  p.payload->bytes.assign(bytes.begin(), bytes.end());
  p.len = static_cast<uint32_t>(bytes.size());
  return p;
}

// skb->priority follows rt_tos2priority (TOS 0x10 "low delay" -> TC_PRIO_INTERACTIVE = 6,
// 0x08 "throughput" -> TC_PRIO_BULK = 2, 0 -> TC_PRIO_BESTEFFORT = 0); one 5-tuple, one hash.
TEST(FrameClassifier, PriorityTosAndFlowHash) {
  FramePool pool;
  Packet p = packet_of(pool, udp_frame(100, 0x10, 1000, 2000, 1));
  classify(p);
  EXPECT_EQ(p.tos, 0x10);
  EXPECT_EQ(p.priority, 6);
  Packet bulk = packet_of(pool, udp_frame(100, 0x08, 1000, 2000, 2));
  classify(bulk);
  EXPECT_EQ(bulk.priority, 2);
  EXPECT_EQ(bulk.flow_hash, p.flow_hash);  // same addresses, protocol and ports
  Packet other = packet_of(pool, udp_frame(100, 0, 1001, 2000, 1));
  classify(other);
  EXPECT_EQ(other.priority, 0);
  EXPECT_NE(other.flow_hash, p.flow_hash);
  std::vector<uint8_t> arp = udp_frame(60, 0, 0, 0, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  Packet a = packet_of(pool, arp);
  a.tos = 0xff;
  classify(a);
  EXPECT_EQ(a.tos, 0);
  EXPECT_EQ(a.priority, 0);
  EXPECT_FALSE(classify_frame(arp).ipv4);
}

// RSS of a multi-queue NIC hashes what a NIC reads: the IPv4 addresses and, for TCP/UDP outside
// non-first fragments, the ports; anything else hashes as all-zero.
TEST(FrameClassifier, RssFlowFromTheHeaders) {
  std::vector<uint8_t> udp = udp_frame(100, 0, 40000, 5201, 1);
  algo::Rss::Flow f = rss_flow_of(udp);
  EXPECT_EQ(f.src_ip, 0xC6120001u);
  EXPECT_EQ(f.dst_ip, 0xC6120002u);
  EXPECT_EQ(f.src_port, 40000);
  EXPECT_EQ(f.dst_port, 5201);
  EXPECT_EQ(f.proto, algo::Rss::Proto::kUdp);
  std::vector<uint8_t> tcp = udp;
  tcp[14 + 9] = 6;
  EXPECT_EQ(rss_flow_of(tcp).proto, algo::Rss::Proto::kTcp);
  std::vector<uint8_t> fragment = udp;
  fragment[14 + 7] = 0x10;  // fragment offset 16 x 8 bytes: no ports in this one
  f = rss_flow_of(fragment);
  EXPECT_EQ(f.proto, algo::Rss::Proto::kOther);
  EXPECT_EQ(f.src_port, 0);
  EXPECT_EQ(f.src_ip, 0xC6120001u);
  std::vector<uint8_t> arp = udp;
  arp[13] = 0x06;
  f = rss_flow_of(arp);
  EXPECT_EQ(f.src_ip, 0u);
  EXPECT_EQ(f.dst_ip, 0u);
  for (size_t n = 0; n <= udp.size(); ++n) {  // prefixes: never read past the end
    const std::vector<uint8_t> cut(udp.begin(), udp.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(rss_flow_of(cut).dst_port, n >= 38 ? 5201 : 0) << n;
  }
}

// Any prefix of a frame (and garbage) is classified without reading past its end.
TEST(FrameClassifier, TruncatedFramesAreSafe) {
  const std::vector<uint8_t> f = udp_frame(60, 0x10, 1, 2, 3);
  for (size_t n = 0; n <= f.size(); ++n) {
    const std::vector<uint8_t> cut(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n));
    const FrameInfo info = classify_frame(cut);
    EXPECT_EQ(info.ipv4, n >= 34) << n;
  }
}

// A CE mark set by a qdisc reaches the frame's bytes with a still-valid header checksum; a
// frame that is not ECN-capable or already carries the codepoint is left alone.
TEST(FrameClassifier, WritesCeIntoTheIpv4Header) {
  FramePool pool;
  Packet p = packet_of(pool, udp_frame(200, 0x2a /* DSCP 10, ECT(0) */, 5, 6, 7));
  classify(p);
  EXPECT_FALSE(write_ecn(p));  // nothing changed yet
  ASSERT_TRUE(p.set_ce());
  EXPECT_TRUE(write_ecn(p));
  EXPECT_EQ(p.payload->bytes[15], 0x2b);
  EXPECT_EQ(ip_checksum(p.payload->bytes, 14, 20), 0);  // the header still sums to 0xffff
  EXPECT_FALSE(write_ecn(p));
  Packet not_ect = packet_of(pool, udp_frame(200, 0x28, 5, 6, 7));
  classify(not_ect);
  EXPECT_FALSE(not_ect.set_ce());
  EXPECT_FALSE(write_ecn(not_ect));
}

// ---- the scenario's NIC models in the data path ----------------------------------------

config::Run load_run(const std::string& nic_a, const std::string& nic_b, const std::string& extra,
                     const std::string& rate = "100Mbit") {
  config::LoadOptions opts;
  opts.preset_dirs = {std::string(NICSIM_TEST_SOURCE_DIR) + "/presets"};
  opts.standard_presets = false;
  const std::string text =
      "[scenario]\nname = \"t\"\nduration = \"1s\"\n[hosts.a]\ncpu = "
      "\"x86-desktop\"\nnic = \"" +
      nic_a + "\"\n" + extra + "[hosts.b]\ncpu = \"x86-desktop\"\nnic = \"" + nic_b +
      "\"\n[wire]\nrate = \"" + rate + "\"\ndelay = \"1us\"\n";
  return config::load_scenario_text(text, "t.toml", opts).runs.at(0);
}

struct ModelFixture {
  explicit ModelFixture(const config::Run& run) : a(pool), b(pool) {
    const config::Scenario& sc = run.scenario;
    std::array<std::unique_ptr<model::Nic>, 2> nics = {config::make_host_nic(sc.hosts[0]),
                                                       config::make_host_nic(sc.hosts[1])};
    dp = std::make_unique<Datapath>(
        std::array<FramePort*, 2>{&a, &b}, std::move(nics),
        std::array<model::Wire::Params, 2>{sc.wire.params(2), sc.wire.params(3)});
  }
  ~ModelFixture() {
    dp.reset();
    a.written.clear();
    b.written.clear();
  }
  // Feeds `frames[h]` from host h, one frame per host every `gap`, then runs until idle.
  void run(const std::array<std::vector<std::vector<uint8_t>>, 2>& frames, Duration gap) {
    Time t = Time::zero();
    const size_t n = std::max(frames[0].size(), frames[1].size());
    for (size_t i = 0; i < n; ++i) {
      for (size_t h = 0; h < 2; ++h) {
        if (i < frames[h].size()) {
          FakePort& port = h == 0 ? a : b;
          Packet p = packet_of(pool, frames[h][i]);
          port.inject_packet(std::move(p));
        }
      }
      dp->receive({true, true}, t);
      dp->service(t);
      t += gap;
    }
    for (int k = 0; k < 100000 && dp->next_event(); ++k) {
      dp->service(max(t, *dp->next_event()));
    }
  }
  FramePool pool;
  FakePort a;
  FakePort b;
  std::unique_ptr<Datapath> dp;
};

std::vector<std::vector<uint8_t>> mixed_frames(size_t n, uint32_t seed) {
  std::vector<std::vector<uint8_t>> out;
  const size_t sizes[] = {60, 98, 511, 512, 513, 1000, 1024, 1514};
  for (size_t i = 0; i < n; ++i) {
    out.push_back(udp_frame(sizes[i % std::size(sizes)], 0, static_cast<uint16_t>(i), 9,
                            seed + static_cast<uint32_t>(i)));
  }
  return out;
}

void expect_same_frames(const std::vector<std::vector<uint8_t>>& sent,
                        const std::vector<Packet>& got) {
  ASSERT_EQ(got.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    ASSERT_EQ(got[i].len, sent[i].size()) << i;
    const std::vector<uint8_t> bytes(got[i].payload->bytes.begin(),
                                     got[i].payload->bytes.begin() + got[i].len);
    EXPECT_EQ(bytes, sent[i]) << "frame " << i;
  }
}

// SMSC LAN95xx (Linux smsc95xx, turbo mode) on one side, ASIX AX88178 (asix, MFB) on the other:
// each frame is encoded into bulk-OUT transfers by the sender's driver framing, decoded by its
// device, sent, aggregated by the receiving device into bulk-IN transfers with its framing and
// decoded by the receiving driver. Every byte survives, in order, in both directions, and the
// USB byte counts include the chips' framing.
TEST(EmuModels, UsbFramingCarriesRealBytesBothWays) {
  ModelFixture f(load_run("smsc95xx", "ax88178", ""));
  const auto from_a = mixed_frames(300, 1);
  const auto from_b = mixed_frames(300, 1000);
  f.run({from_a, from_b}, 200_us);  // 1514 bytes take 123 us at 100 Mbit/s: no queue builds
  expect_same_frames(from_a, f.b.written);
  expect_same_frames(from_b, f.a.written);
  for (size_t h = 0; h < 2; ++h) {
    const auto& nic = dynamic_cast<const model::UsbNic&>(f.dp->nic(h));
    uint64_t bytes = 0;
    for (const auto& fr : h == 0 ? from_b : from_a) {
      bytes += fr.size();
    }
    EXPECT_EQ(nic.stats().rx_delivered, 300u);
    EXPECT_EQ(nic.stats().rx_malformed_drops, 0u);
    EXPECT_EQ(nic.stats().tx_malformed_drops, 0u);
    EXPECT_GT(nic.stats().rx_usb_bytes, bytes);  // status words / headers on the bus
    EXPECT_GT(nic.stats().tx_usb_bytes, bytes);
    EXPECT_EQ(f.dp->stats(h).frames_in, 300u);
    EXPECT_EQ(f.dp->stats(h).frames_out, 300u);
    EXPECT_EQ(f.dp->stats(h).tx_released, 300u);             // every URB completed
    EXPECT_GT(f.dp->cpu(h).stats().busy, Duration::zero());  // the emulated CPU did the work
  }
  EXPECT_EQ(f.pool.outstanding(), f.a.written.size() + f.b.written.size());
}

// ---- GRO in the receiving NIC model -----------------------------------------------------

// Two generic-10g hosts on a 10 Gbit/s wire; `b_nic_keys` are added to host b's NIC table.
config::Run ten_gig_run(const std::string& b_nic_keys) {
  config::LoadOptions opts;
  opts.preset_dirs = {std::string(NICSIM_TEST_SOURCE_DIR) + "/presets"};
  opts.standard_presets = false;
  const std::string text = R"([scenario]
name = "10g"
duration = "1s"
[hosts.a]
cpu = "x86-desktop"
nic = "generic-10g"
[wire]
rate = "10Gbit"
delay = "1us"
[hosts.b]
cpu = "x86-desktop"
[hosts.b.nic]
preset = "generic-10g"
)" + b_nic_keys;
  return config::load_scenario_text(text, "10g.toml", opts).runs.at(0);
}

// An IPv4 TCP frame (ACK, no options) of `payload` bytes at sequence number `seq`, one flow.
std::vector<uint8_t> tcp_frame(uint32_t seq, size_t payload) {
  std::vector<uint8_t> f = udp_frame(14 + 20 + 20 + payload, 0, 40000, 5201, seq);
  f[14 + 9] = 6;
  const size_t tcp = 34;
  for (int i = 0; i < 4; ++i) {
    f[tcp + 4 + static_cast<size_t>(i)] = static_cast<uint8_t>(seq >> (24 - 8 * i));
    f[tcp + 8 + static_cast<size_t>(i)] = 0;  // ack_seq 0
  }
  f[tcp + 12] = 5 << 4;  // data offset: 20 bytes
  f[tcp + 13] = 0x10;    // ACK
  f[tcp + 14] = 0x01;    // window 256
  f[tcp + 15] = 0x00;
  return f;
}

// A TSO super-frame of `segs` full 1448-byte segments as TapPort hands it over (`--io tap-gso`):
// gso_size is a full segment's frame bytes, len counts every segment's headers (core/gso.h).
Packet super_frame(FramePool& pool, uint32_t segs) {
  constexpr uint32_t kHeader = 14 + 20 + 20;
  Packet p = packet_of(pool, tcp_frame(5000, segs * 1448));
  p.gso_segs = static_cast<uint16_t>(segs);
  p.gso_size = kHeader + 1448;
  p.len = segs * (kHeader + 1448);
  return p;
}

const algo::Gro::Stats& gro_stats(Datapath& dp, size_t nic) {
  return dynamic_cast<const model::PlatformNic&>(dp.nic(nic)).gro().stats();
}

// MTU frames of one flow, back to back at 10 Gbit/s: the receiving NIC's polls merge them, as
// the simulator's do (before, the emulator gave GRO no headers and every frame went up alone).
// Every frame still reaches host b intact and in order.
TEST(EmuModels, GroMergesTheRealTcpFramesOfOneFlow) {
  ModelFixture f(ten_gig_run("gro = true\n"));
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t i = 0; i < 32; ++i) {
    frames.push_back(tcp_frame(1000 + i * 1448, 1448));
  }
  f.run({frames, {}}, 1_us);  // faster than the wire: they queue and go out back to back
  expect_same_frames(frames, f.b.written);
  const algo::Gro::Stats& g = gro_stats(*f.dp, 1);
  EXPECT_EQ(g.frames, 32u);
  EXPECT_GT(g.merged, 16u);
  EXPECT_LT(g.packets, 16u);
  EXPECT_EQ(g.normal, 0u);
}

// A super-frame's segments all reach one RX queue of a multi-queue NIC, the one its 4-tuple
// hashes to, as the real segments would; before, the nine without bytes were hashed by host
// pair alone and split from the last.
TEST(EmuModels, SuperFrameSegmentsShareOneRssQueue) {
  ModelFixture f(ten_gig_run("queues = 8\n"));
  constexpr uint32_t kSegs = 10;
  f.a.inject_packet(super_frame(f.pool, kSegs));
  f.dp->receive({true, false}, Time::zero());
  f.run({}, 1_us);
  ASSERT_EQ(f.b.written.size(), kSegs);
  const auto& nic = dynamic_cast<const model::MultiQueueNic&>(f.dp->nic(1));
  size_t queues_used = 0;
  for (size_t q = 0; q < nic.queue_count(); ++q) {
    const uint64_t frames = nic.pair(q).counters().rx_packets;
    EXPECT_TRUE(frames == 0 || frames == kSegs) << "queue " << q << ": " << frames;
    queues_used += frames > 0 ? 1 : 0;
  }
  EXPECT_EQ(queues_used, 1u);
}

// A TSO super-frame of 10 segments (`--io tap-gso`): the models carry 9 of its segments without
// bytes; each gets the header tcp_gso_segment gives it, so GRO puts all 10 back into one packet.
TEST(EmuModels, GroMergesTheSegmentsOfASuperFrame) {
  ModelFixture f(ten_gig_run("gro = true\n"));
  constexpr uint32_t kSegs = 10;
  f.a.inject_packet(super_frame(f.pool, kSegs));
  f.dp->receive({true, false}, Time::zero());
  f.run({}, 1_us);
  ASSERT_EQ(f.b.written.size(), kSegs);  // the port gets every segment; the last has the bytes
  const algo::Gro::Stats& g = gro_stats(*f.dp, 1);
  EXPECT_EQ(g.frames, kSegs);
  EXPECT_EQ(g.merged, kSegs - 1);
  EXPECT_EQ(g.packets, 1u);
  EXPECT_EQ(g.largest, kSegs);
}

// The stmmac preset with BQL: a burst queues in the qdisc (BQL's limit starts at 0), every
// frame crosses and is completed (cleaned), the limit grows; a TOS-0x10 frame goes to
// pfifo_fast band 0 ahead of the bulk frames still queued.
TEST(EmuModels, PlatformNicRunsTheQdiscAndRing) {
  ModelFixture f(load_run("stmmac", "generic-1g", "qdisc = \"pfifo_fast\"\n"));
  std::vector<std::vector<uint8_t>> burst;
  for (int i = 0; i < 60; ++i) {
    burst.push_back(udp_frame(1514, 0, 1, 2, static_cast<uint32_t>(i)));
  }
  burst.push_back(udp_frame(98, 0x10, 3, 4, 99));  // interactive, last in
  // All at once: a queue builds in the qdisc; the interactive frame overtakes the rest.
  for (const auto& fr : burst) {
    f.a.inject_packet(packet_of(f.pool, fr));
  }
  f.dp->receive({true, false}, Time::zero());
  f.dp->service(Time::zero());
  const model::NicQueueSample q = f.dp->nic(0).queue_sample();
  EXPECT_GT(q.qdisc_packets, 0u);  // BQL starts at limit 0: the ring takes one frame at first
  EXPECT_LE(q.ring_packets, 2u);
  f.run(std::array<std::vector<std::vector<uint8_t>>, 2>{}, 1_ms);
  ASSERT_EQ(f.b.written.size(), burst.size());
  size_t pos = 0;
  for (size_t i = 0; i < f.b.written.size(); ++i) {
    if (f.b.written[i].len == 98) {
      pos = i;
    }
  }
  EXPECT_LT(pos, burst.size() - 1);  // not last: band 0 went ahead of queued band-1 frames
  EXPECT_EQ(f.dp->stats(0).tx_released, burst.size());
  EXPECT_GT(f.dp->nic(0).queue_sample().bql_limit, 0u);  // grown by completions (DQL)
  EXPECT_GT(f.dp->nic(0).counters().doorbells, 0u);
  EXPECT_EQ(f.dp->nic(1).counters().rx_packets, burst.size());
}

// ---- pcap ---------------------------------------------------------------------------------

struct PcapRecord {
  uint32_t sec, nsec, caplen, len;
  std::vector<uint8_t> data;
};

std::vector<PcapRecord> read_pcap(const std::string& path, uint32_t& magic, uint32_t& linktype) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, b.data() + at, 4);
    return v;
  };
  std::vector<PcapRecord> out;
  if (b.size() < 24) {
    return out;
  }
  magic = u32(0);
  linktype = u32(20);
  size_t at = 24;
  while (at + 16 <= b.size()) {
    PcapRecord r{u32(at), u32(at + 4), u32(at + 8), u32(at + 12), {}};
    at += 16;
    r.data.assign(b.begin() + static_cast<std::ptrdiff_t>(at),
                  b.begin() + static_cast<std::ptrdiff_t>(at + r.caplen));
    at += r.caplen;
    out.push_back(std::move(r));
  }
  return out;
}

// Frames entering either wire are recorded with their first bit's time (model time + the
// realtime offset) and their bytes: a 98-byte frame at t = 0 from a, then at t = 1 ms a
// 1514-byte frame from b and a 60-byte one from a.
TEST(Pcap, RecordsFramesEnteringTheWire) {
  const std::string path = ::testing::TempDir() + "/emu_test.pcap";
  DatapathFixture f;
  {
    PcapWriter pcap(path);
    pcap.set_realtime_offset_ns(1'700'000'000'000'000'000);
    f.dp->set_wire_tap(&pcap);
    f.a.inject(98, 0x11);
    f.dp->receive({true, false}, Time::zero());
    f.dp->service(Time::zero());
    f.b.inject(1514, 0x22);
    f.a.inject(60, 0x33);
    f.dp->receive({true, true}, Time::zero() + 1_ms);
    f.dp->service(Time::zero() + 1_ms);
    f.dp->service(Time::zero() + 20_ms);
    EXPECT_EQ(pcap.frames(), 3u);
    EXPECT_EQ(pcap.close(), "");
    f.dp->set_wire_tap(nullptr);
  }
  uint32_t magic = 0;
  uint32_t linktype = 0;
  const auto recs = read_pcap(path, magic, linktype);
  EXPECT_EQ(magic, 0xa1b23c4du);
  EXPECT_EQ(linktype, 1u);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].sec, 1'700'000'000u);
  EXPECT_EQ(recs[0].nsec, 0u);
  EXPECT_EQ(recs[0].len, 98u);
  EXPECT_EQ(recs[0].data, std::vector<uint8_t>(98, 0x11));
  EXPECT_EQ(recs[1].nsec, 1'000'000u);  // host a's frame is merged first on a tie
  EXPECT_EQ(recs[1].len, 60u);
  EXPECT_EQ(recs[2].nsec, 1'000'000u);
  EXPECT_EQ(recs[2].data, std::vector<uint8_t>(1514, 0x22));
  std::remove(path.c_str());
}

TEST(Pcap, UnwritablePathThrowsWithTheName) {
  try {
    PcapWriter w("/nonexistent-dir/x.pcap");
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.pcap"), std::string::npos);
  }
}

// ---- a network: a - r - b with the router in the data path ---------------------------------
//
//   a (198.18.0.1) ─ link 0: 100 Mbit/s, 1 ms ─ r.lan | r | r.wan ─ link 1: 10 Mbit/s, 1 ms ─ b
//                                                                                (198.18.1.2)
// Interfaces: 0 = a, 1 = b, 2 = r.lan, 3 = r.wan (hosts first, as config::Network numbers
// them). Every NIC is a WireOnlyNic (a FIFO ahead of the wire), so the times are the wires'
// plus the router's forwarding cost (per_forward = 5 us on its Cpu).

namespace net3 {

constexpr MacAddress kMacA = {0x02, 0x6e, 0x73, 0, 0, 0x0a};
constexpr MacAddress kMacB = {0x02, 0x6e, 0x73, 0, 0, 0x0b};
constexpr MacAddress kMacLan = {0x02, 0x6e, 0x73, 1, 0, 2};
constexpr MacAddress kMacWan = {0x02, 0x6e, 0x73, 1, 0, 3};
constexpr uint8_t kAddrA[4] = {198, 18, 0, 1};
constexpr uint8_t kAddrB[4] = {198, 18, 1, 2};

in_addr addr(const uint8_t (&a)[4]) {
  in_addr x{};
  std::memcpy(&x, a, 4);
  return x;
}

DatapathLayout layout() {
  DatapathLayout l;
  l.hosts = 2;
  l.links = 2;
  l.interfaces = {
      {0, 0, 0, 0, kMacA}, {1, 0, 1, 1, kMacB}, {2, 0, 0, 1, kMacLan}, {2, 1, 1, 0, kMacWan}};
  l.host_interface = {0, 1};
  l.router_interfaces = {{2, 3}};
  l.peer = {2, 3, 0, 1};
  l.host_by_addr = {{addr(kAddrA).s_addr, 0}, {addr(kAddrB).s_addr, 1}};
  return l;
}

// A UDP frame from `src` to `dst` addressed at link-layer `to` (the host's gateway).
std::vector<uint8_t> frame(size_t len, const uint8_t (&src)[4], const uint8_t (&dst)[4],
                           const MacAddress& from, const MacAddress& to, uint8_t ttl = 64) {
  std::vector<uint8_t> f = udp_frame(len, 0, 4000, 5000, 7);
  std::copy(to.begin(), to.end(), f.begin());
  std::copy(from.begin(), from.end(), f.begin() + 6);
  std::copy(src, src + 4, f.begin() + 14 + 12);
  std::copy(dst, dst + 4, f.begin() + 14 + 16);
  f[14 + 8] = ttl;
  f[14 + 10] = 0;
  f[14 + 11] = 0;
  const uint16_t c = ip_checksum(f, 14, 20);
  f[14 + 10] = static_cast<uint8_t>(c >> 8);
  f[14 + 11] = static_cast<uint8_t>(c);
  return f;
}

struct Fixture {
  Fixture() : a(pool), b(pool) {
    model::Wire::Params fast;
    fast.rate = Rate::mbit(100);
    fast.delay = 1_ms;
    model::Wire::Params slow = fast;
    slow.rate = Rate::mbit(10);
    std::vector<std::unique_ptr<model::Nic>> hosts;
    hosts.push_back(std::make_unique<WireOnlyNic>(WireOnlyNic::Params{}));
    hosts.push_back(std::make_unique<WireOnlyNic>(WireOnlyNic::Params{}));
    model::Router::Params rp;
    rp.cpu.per_forward = 5_us;
    rp.interfaces.resize(2);
    rp.routes = {0, 1};  // a leaves on lan, b on wan
    std::vector<std::unique_ptr<model::Nic>> router_nics;
    router_nics.push_back(std::make_unique<WireOnlyNic>(WireOnlyNic::Params{}));
    router_nics.push_back(std::make_unique<WireOnlyNic>(WireOnlyNic::Params{}));
    std::vector<std::unique_ptr<model::Router>> routers;
    routers.push_back(std::make_unique<model::Router>(rp, std::move(router_nics)));
    dp = std::make_unique<Datapath>(
        layout(), std::vector<FramePort*>{&a, &b}, std::move(hosts), std::move(routers),
        std::vector<std::array<model::Wire::Params, 2>>{{fast, fast}, {slow, slow}});
  }
  ~Fixture() {
    dp.reset();
    a.written.clear();
    b.written.clear();
  }
  void run_until(Time t) {
    while (const std::optional<Time> e = dp->next_event()) {
      if (*e > t) {
        break;
      }
      dp->service(*e);
    }
    dp->service(t);
  }
  FramePool pool;
  FakePort a;
  FakePort b;
  std::unique_ptr<Datapath> dp;
};

MacAddress dst_mac(const Packet& p) {
  MacAddress m{};
  std::copy_n(p.payload->bytes.begin(), 6, m.begin());
  return m;
}
MacAddress src_mac(const Packet& p) {
  MacAddress m{};
  std::copy_n(p.payload->bytes.begin() + 6, 6, m.begin());
  return m;
}

}  // namespace net3

// A 98-byte frame a -> b: 122 byte times on link 0 (9,760 ns at 100 Mbit/s) + 1 ms, the
// router's 5 us, 122 byte times on link 1 (97,600 ns at 10 Mbit/s) + 1 ms = 2,112,360 ns. At b
// it has TTL 63 with a valid header checksum, b's MAC as destination and r.wan's as source;
// everything else is the bytes a sent.
TEST(NetworkDatapath, RouterForwardsWithTtlChecksumAndNextHopMacs) {
  using namespace net3;
  Fixture f;
  const std::vector<uint8_t> sent = frame(98, kAddrA, kAddrB, kMacA, kMacLan);
  f.a.inject_packet(packet_of(f.pool, sent));
  f.dp->receive({true, false}, Time::zero());
  f.run_until(Time::from_ns(2'112'359));
  EXPECT_TRUE(f.b.written.empty());
  f.run_until(Time::from_ns(2'112'360));
  ASSERT_EQ(f.b.written.size(), 1u);
  const Packet& got = f.b.written[0];
  ASSERT_EQ(got.payload->bytes.size(), sent.size());
  EXPECT_EQ(got.dst_host, 1u);
  EXPECT_EQ(dst_mac(got), kMacB);
  EXPECT_EQ(src_mac(got), kMacWan);
  EXPECT_EQ(got.payload->bytes[14 + 8], 63);
  EXPECT_EQ(ip_checksum(got.payload->bytes, 14, 20), 0) << "header checksum invalid";
  std::vector<uint8_t> expect = sent;
  std::copy(kMacB.begin(), kMacB.end(), expect.begin());
  std::copy(kMacWan.begin(), kMacWan.end(), expect.begin() + 6);
  expect[14 + 8] = 63;
  expect[14 + 10] = got.payload->bytes[14 + 10];
  expect[14 + 11] = got.payload->bytes[14 + 11];
  EXPECT_EQ(got.payload->bytes, expect);
  EXPECT_TRUE(f.a.written.empty());
  EXPECT_EQ(f.dp->router(0).stats().forwarded, 1u);
  // Per direction: a->r.lan carried it in and out, r.wan->b too.
  EXPECT_EQ(f.dp->stats(0).frames_in, 1u);
  EXPECT_EQ(f.dp->stats(0).frames_out, 1u);
  EXPECT_EQ(f.dp->stats(2).frames_in, 1u);
  EXPECT_EQ(f.dp->stats(2).frames_out, 1u);
  EXPECT_EQ(f.dp->stats(3).frames_in, 0u);
}

// The routes go both ways: b -> a leaves the router on lan, with a's and r.lan's MACs.
TEST(NetworkDatapath, RoutesTheReverseDirection) {
  using namespace net3;
  Fixture f;
  f.b.inject_packet(packet_of(f.pool, frame(98, kAddrB, kAddrA, kMacB, kMacWan)));
  f.dp->receive({false, true}, Time::zero());
  f.run_until(Time::zero() + 10_ms);
  ASSERT_EQ(f.a.written.size(), 1u);
  EXPECT_EQ(f.a.written[0].dst_host, 0u);
  EXPECT_EQ(dst_mac(f.a.written[0]), kMacA);
  EXPECT_EQ(src_mac(f.a.written[0]), kMacLan);
  EXPECT_TRUE(f.b.written.empty());
}

// A destination no host owns (a router interface's address, or anything else) has no route:
// the router drops it and counts it. So does a frame arriving with TTL 1.
TEST(NetworkDatapath, NoRouteAndExpiredTtlAreDropped) {
  using namespace net3;
  Fixture f;
  const uint8_t elsewhere[4] = {198, 18, 9, 9};
  f.a.inject_packet(packet_of(f.pool, frame(98, kAddrA, elsewhere, kMacA, kMacLan)));
  f.a.inject_packet(packet_of(f.pool, frame(98, kAddrA, kAddrB, kMacA, kMacLan, 1)));
  f.a.inject_packet(packet_of(f.pool, frame(98, kAddrA, kAddrB, kMacA, kMacLan, 2)));
  f.dp->receive({true, false}, Time::zero());
  f.run_until(Time::zero() + 10_ms);
  EXPECT_EQ(f.dp->router(0).stats().no_route, 1u);
  EXPECT_EQ(f.dp->router(0).stats().ttl_expired, 1u);
  ASSERT_EQ(f.b.written.size(), 1u);  // the TTL 2 frame, as TTL 1
  EXPECT_EQ(f.b.written[0].payload->bytes[14 + 8], 1);
  EXPECT_TRUE(f.a.written.empty());
  EXPECT_EQ(f.pool.outstanding(), f.b.written.size()) << "dropped frames return their buffers";
}

// 20 back-to-back 1514-byte frames from a: link 0 brings one every 123,040 ns, link 1 takes
// 1,230,400 ns for each, so the queue builds in r.wan's NIC (the router's egress) and the
// frames reach b one link-1 slot apart.
TEST(NetworkDatapath, QueueBuildsAtTheRoutersEgress) {
  using namespace net3;
  Fixture f;
  for (int i = 0; i < 20; ++i) {
    f.a.inject_packet(packet_of(f.pool, frame(1514, kAddrA, kAddrB, kMacA, kMacLan)));
  }
  f.dp->receive({true, false}, Time::zero());
  f.run_until(Time::zero() + 5_ms);
  const model::NicQueueSample q = f.dp->nic(3).queue_sample();
  EXPECT_GE(q.qdisc_packets, 10u) << "r.wan's queue at 5 ms";
  EXPECT_EQ(f.dp->nic(1).queue_sample().qdisc_packets, 0u);
  f.run_until(Time::zero() + 50_ms);
  ASSERT_EQ(f.b.written.size(), 20u);
  EXPECT_EQ(f.dp->stats(2).frames_out, 20u);
  EXPECT_EQ(f.dp->router(0).stats().forwarded, 20u);
  EXPECT_GT(f.dp->cpu(2).stats().busy, Duration::zero());  // the router's CPU forwarded them
}

// Queue samples (set_queue_sampler) are the models' state at each sample time, however late
// the loop calls: a loop that wakes every 2.5 ms gives the same series of r.wan's queue and b's
// arrivals as one that wakes at every model event. With a router that needs the time-ordered
// steps (the router's forwarding job hands the frame to r.wan when it is done, not at the
// loop's time; docs/emu.md "Replay").
TEST(NetworkDatapath, ALateLoopGivesTheSameQueueSeries) {
  using namespace net3;
  auto series = [](bool late) {
    Fixture f;
    // (sample time, r.wan's queue x 1000 + frames b's NIC delivered by then)
    std::vector<std::pair<int64_t, uint64_t>> out;
    f.dp->set_queue_sampler(1_ms, [&](Time t) {
      out.emplace_back(t.ns_since_epoch(), f.dp->nic(3).queue_sample().qdisc_packets * 1000 +
                                               f.dp->stats(2).frames_out);
    });
    for (int i = 0; i < 20; ++i) {
      f.a.inject_packet(packet_of(f.pool, frame(1514, kAddrA, kAddrB, kMacA, kMacLan)));
    }
    f.dp->receive({true, false}, Time::zero());
    if (late) {
      for (Time t = Time::zero(); t <= Time::zero() + 40_ms; t += 2500_us) {
        f.dp->service(t);
      }
    } else {
      f.run_until(Time::zero() + 40_ms);
    }
    EXPECT_EQ(f.b.written.size(), 20u);
    return out;
  };
  const auto exact = series(false);
  ASSERT_EQ(exact.size(), 41u);  // 0, 1, ..., 40 ms
  EXPECT_GT(exact[5].second / 1000, 0u) << "a queue at r.wan";
  EXPECT_EQ(series(true), exact);
}

// The a - r - b network as the scenario loader would hand it over (hosts a, b; router r with
// interfaces lan, wan; links a - r.lan, r.wan - b).
config::Scenario a_r_b_scenario() {
  config::Scenario s;
  s.hosts.resize(2);
  s.hosts[0].name = "a";
  s.hosts[1].name = "b";
  config::RouterConfig r;
  r.name = "r";
  r.interfaces.resize(2);
  r.interfaces[0].name = "lan";
  r.interfaces[1].name = "wan";
  s.routers.push_back(r);
  config::LinkConfig l0;
  l0.ends[0] = "a";
  l0.ends[1] = "r.lan";
  config::LinkConfig l1;
  l1.ends[0] = "r.wan";
  l1.ends[1] = "b";
  s.links = {l0, l1};
  return s;
}

// The two-host form keeps its addresses, MACs and namespace roles; a network gets one /24 per
// link, .1 for ends[0], default routes through the router's interfaces.
TEST(AddressPlan, TwoHostFormAndNetwork) {
  config::Scenario two;
  two.hosts.resize(2);
  two.hosts[0].name = "board";
  two.hosts[1].name = "pc";
  const AddressPlan p2 = address_plan(config::network_of(two), true);
  const AddressPlan ref = two_host_plan();
  ASSERT_EQ(p2.hosts.size(), 2u);
  for (size_t h = 0; h < 2; ++h) {
    EXPECT_EQ(p2.hosts[h].role, ref.hosts[h].role);
    EXPECT_EQ(format_ipv4(p2.hosts[h].self.addr), format_ipv4(ref.hosts[h].self.addr));
    EXPECT_EQ(p2.hosts[h].self.mac, ref.hosts[h].self.mac);
    EXPECT_EQ(p2.hosts[h].port_mac, ref.hosts[h].port_mac);
    EXPECT_EQ(format_ipv4(p2.hosts[h].peer_addr), format_ipv4(ref.hosts[h].peer_addr));
    EXPECT_FALSE(p2.hosts[h].gateway);
  }
  EXPECT_EQ(ref.hosts[0].role, "a");
  EXPECT_EQ(format_ipv4(ref.hosts[0].self.addr), "198.18.0.1");
  EXPECT_EQ(format_ipv4(ref.hosts[1].self.addr), "198.18.0.2");
  EXPECT_EQ(format_mac(ref.hosts[0].self.mac), "02:6e:73:00:00:0a");
  EXPECT_EQ(format_mac(ref.hosts[1].port_mac), "02:6e:73:00:01:0b");

  const config::Scenario s = a_r_b_scenario();
  const config::Network net = config::network_of(s);
  const AddressPlan p = address_plan(net, false);
  ASSERT_EQ(p.hosts.size(), 2u);
  EXPECT_EQ(p.hosts[0].role, "h0");
  EXPECT_EQ(p.hosts[0].name, "a");
  EXPECT_EQ(format_ipv4(p.hosts[0].self.addr), "198.18.0.1");
  EXPECT_EQ(format_ipv4(p.hosts[0].peer_addr), "198.18.0.2");
  EXPECT_TRUE(p.hosts[0].gateway);
  EXPECT_EQ(format_ipv4(p.hosts[1].self.addr), "198.18.1.2");
  EXPECT_EQ(format_ipv4(p.hosts[1].peer_addr), "198.18.1.1");
  EXPECT_EQ(p.hosts[1].peer_mac, net3::kMacWan);
  EXPECT_EQ(p.host_of(p.hosts[1].self.addr), std::optional<uint16_t>(1));
  EXPECT_EQ(p.host_of(p.hosts[1].peer_addr), std::nullopt);

  // The layout the network test drives by hand is the one the session builds.
  const DatapathLayout l = DatapathLayout::of(net, p);
  const DatapathLayout ref_l = net3::layout();
  ASSERT_EQ(l.interfaces.size(), ref_l.interfaces.size());
  for (size_t i = 0; i < l.interfaces.size(); ++i) {
    EXPECT_EQ(l.interfaces[i].node, ref_l.interfaces[i].node) << i;
    EXPECT_EQ(l.interfaces[i].local, ref_l.interfaces[i].local) << i;
    EXPECT_EQ(l.interfaces[i].link, ref_l.interfaces[i].link) << i;
    EXPECT_EQ(l.interfaces[i].side, ref_l.interfaces[i].side) << i;
    EXPECT_EQ(l.interfaces[i].mac, ref_l.interfaces[i].mac) << i;
  }
  EXPECT_EQ(l.peer, ref_l.peer);
  EXPECT_EQ(l.host_interface, ref_l.host_interface);
  EXPECT_EQ(l.router_interfaces, ref_l.router_interfaces);
  EXPECT_EQ(l.host_by_addr, ref_l.host_by_addr);
}

// /proc/net/dev as Linux 6.18 prints it: two header lines, then "name: 8 rx fields 8 tx".
TEST(ProcNetDev, ReadsOneFieldOfTheNamedInterface) {
  const std::string text =
      "Inter-|   Receive                            ...\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets ...\n"
      "    lo:     120       2    0    0    0     0          0         0      120       2    0"
      "    0    0     0       0          0\n"
      " nsim0:    9000      10    0    1    0     0          0         0   640000   10000    0"
      " 7321    0     0       0          0\n"
      "nsim01:       1       1    0    0    0     0          0         0        1       1    0"
      "   99    0     0       0          0\n";
  EXPECT_EQ(proc_net_dev_field(text, "nsim0", kTxDroppedField), 7321u);
  EXPECT_EQ(proc_net_dev_field(text, "nsim0", 0), 9000u);
  EXPECT_EQ(proc_net_dev_field(text, "nsim01", kTxDroppedField), 99u);
  EXPECT_EQ(proc_net_dev_field(text, "nsim", kTxDroppedField), std::nullopt);
  EXPECT_EQ(proc_net_dev_field(text, "lo", 16), std::nullopt);  // only 16 fields
  EXPECT_EQ(proc_net_dev_field("", "lo", 0), std::nullopt);
}

}  // namespace
}  // namespace nicsim::emu
