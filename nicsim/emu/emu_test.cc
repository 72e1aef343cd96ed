// Unit tests of the emulator that need no privileges: the stand-in NIC and the data path on a
// manual clock with fake ports (exact times worked out by hand from the Wire model, docs/
// models/wire.md: a frame of len bytes occupies 8 + max(len + 4, 64) + 12 byte times), the
// frame pool, namespace names, capability checks, unsupported-setting notices.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <deque>
#include <string>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/emu/datapath.h"
#include "nicsim/emu/frame_pool.h"
#include "nicsim/emu/netns.h"
#include "nicsim/emu/process.h"
#include "nicsim/emu/real_clock.h"
#include "nicsim/emu/session.h"
#include "nicsim/emu/wire_only_nic.h"
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
  std::vector<Packet> written;

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
)",
                                                 "t.toml", opts);
  const auto lines = unsupported_settings(loaded.runs[0].scenario);
  auto has = [&](const std::string& needle) {
    for (const auto& l : lines) {
      if (l.find(needle) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(has("t.toml:6:1: hosts.a.nic: the NIC model (generic-1g) is not emulated yet"));
  EXPECT_TRUE(has("hosts.b.nic"));
  // The scenario's traffic runs on real sockets (nicsim/live), so it is not listed.
  EXPECT_FALSE(has("traffic"));
  EXPECT_FALSE(has("hosts.a.tcp"));  // defaults: nothing to say
}

}  // namespace
}  // namespace nicsim::emu
