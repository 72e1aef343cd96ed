// UsbNic: USB 2.0 Ethernet adapter + host driver (issue 3; docs/mechanisms §4, §5, §6, §10).
//
// Fixture: a minimal sender pushes frames onto the incoming Wire whenever it is free (so it
// honours PAUSE), the UsbNic receives them, transmits onto its outgoing Wire, and a recording
// sink collects deliveries and TX releases. A manual clock: the loop runs every source at its
// own next event time.
#include "nicsim/model/usb_nic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <set>
#include <vector>

#include "nicsim/algo/fifo.h"
#include "nicsim/algo/tbf.h"
#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/recording_observer.h"

namespace nicsim::model {
namespace {

using algo::UsbRxAggregator;
using testing::PacketFactory;

Time at_ns(int64_t ns) { return Time::from_ns(ns); }
Time at_us(int64_t us) { return Time::zero() + Duration::us(us); }

struct Sink final : NicSink {
  struct Delivery {
    Time at;
    uint64_t id;
    uint32_t len;
    Time wire_end;
    std::vector<uint8_t> bytes;
  };
  struct Release {
    Time at;
    TxRelease r;
  };
  void deliver(Packet&& frame, Time now) override {
    Delivery d{now, frame.id, frame.len, frame.stamp_at(Stage::kWireEnd), {}};
    EXPECT_EQ(frame.stamp_at(Stage::kRxDeliver), now);
    if (frame.payload) {
      d.bytes = frame.payload->bytes;
    }
    delivered.push_back(std::move(d));
  }
  void tx_released(const TxRelease& r, Time now) override { released.push_back({now, r}); }
  size_t delivered_in(Time from, Time to) const {  // [from, to)
    return static_cast<size_t>(std::count_if(delivered.begin(), delivered.end(),
                                             [&](auto& d) { return d.at >= from && d.at < to; }));
  }
  std::vector<Delivery> delivered;
  std::vector<Release> released;
};

Packet with_payload(Packet p, std::mt19937_64& rng) {
  auto* buf = new PayloadBuffer;
  buf->bytes.resize(p.len);
  for (auto& b : buf->bytes) {
    b = static_cast<uint8_t>(rng());
  }
  p.payload = Payload(buf);
  return p;
}

CpuCosts zero_costs() { return CpuCosts{}; }

class Harness {
 public:
  Harness(const UsbNic::Params& params, const CpuCosts& costs, Rate in_rate = Rate::mbit(100),
          Rate out_rate = Rate::mbit(100), AnyQueue qdisc = AnyQueue::make<algo::Fifo>())
      : in_({.rate = in_rate}), out_({.rate = out_rate}), nic_(params, std::move(qdisc), costs) {
    nic_.attach(&out_, &in_, &cpu_, &sink_);
  }

  // A frame offered to the incoming wire at `at` (sent once the wire is free).
  void offer(Packet p, Time at) { offers_.push_back({at, std::move(p)}); }
  // Back-to-back frames of `len` bytes on the incoming wire during [from, until).
  void saturate(uint32_t len, Time from, Time until) {
    sat_len_ = len;
    sat_from_ = from;
    sat_until_ = until;
  }

  void run_until(Time end) {
    while (true) {
      std::optional<Time> t = nic_.next_event();
      auto take = [&t](std::optional<Time> x) {
        if (x && (!t || *x < *t)) {
          t = x;
        }
      };
      take(sender_next());
      take(out_.next_ready());
      if (!t || *t > end) {
        break;
      }
      now_ = max(now_, *t);
      sender_run(now_);
      nic_.advance(now_);
      while (std::optional<Packet> p = out_.pop_arrived(now_)) {
        sent.push_back(std::move(*p));
      }
    }
    now_ = max(now_, end);
    nic_.advance(now_);
  }
  Verdict send(Packet p, Time at) {
    run_until(at);
    return nic_.send(std::move(p), at);
  }

  UsbNic& nic() { return nic_; }
  Sink& sink() { return sink_; }
  Wire& in() { return in_; }
  Wire& out() { return out_; }
  Cpu& cpu() { return cpu_; }
  PacketFactory& factory() { return f_; }
  std::vector<Packet> sent;  // frames that arrived at the far end of the outgoing wire
  uint64_t offered_rx = 0;

 private:
  std::optional<Time> sender_next() const {
    std::optional<Time> t;
    if (!offers_.empty()) {
      t = in_.free_at(max(offers_.front().at, now_));
    }
    if (sat_len_ > 0) {
      const Time s = in_.free_at(max(sat_from_, now_));
      if (s < sat_until_ && (!t || s < *t)) {
        t = s;
      }
    }
    return t;
  }
  void sender_run(Time now) {
    while (!offers_.empty() && offers_.front().at <= now && in_.free_at(now) <= now) {
      in_.transmit(std::move(offers_.front().p), now);
      offers_.pop_front();
      ++offered_rx;
    }
    while (sat_len_ > 0 && now >= sat_from_ && now < sat_until_ && in_.free_at(now) <= now) {
      in_.transmit(f_.make(sat_len_), now);
      ++offered_rx;
    }
  }
  struct Offer {
    Time at;
    Packet p;
  };
  Wire in_;
  Wire out_;
  Cpu cpu_;
  Sink sink_;
  UsbNic nic_;
  PacketFactory f_;
  std::deque<Offer> offers_;
  uint32_t sat_len_ = 0;
  Time sat_from_;
  Time sat_until_;
  Time now_;
};

void expect_identities(Harness& h) {
  const UsbNic& n = h.nic();
  const UsbNic::Stats& s = n.stats();
  const QueueStats& q = n.qdisc().stats();
  EXPECT_EQ(s.tx_offered, q.enqueued_packets);
  EXPECT_EQ(q.enqueued_packets,
            q.dequeued_packets + q.dropped_packets + n.qdisc().backlog_packets());
  EXPECT_EQ(s.tx_segments, s.tx_malformed_drops + n.tx_frames_held() + s.tx_wire_frames);
  EXPECT_EQ(s.tx_wire_frames, h.out().stats().frames);
  EXPECT_EQ(s.rx_frames_in,
            s.rx_fifo_drops + n.rx_frames_held() + s.rx_malformed_drops + s.rx_delivered);
  EXPECT_EQ(s.rx_delivered, h.sink().delivered.size());
  EXPECT_EQ(s.tx_released + s.tx_malformed_drops, h.sink().released.size());
  EXPECT_EQ(n.counters().rx_packets, s.rx_delivered);
  EXPECT_EQ(n.counters().tx_packets, s.tx_wire_frames);
  EXPECT_EQ(n.counters().tx_qdisc_drops, q.dropped_packets);
  EXPECT_EQ(s.rx_frames_in, h.in().stats().delivered);
}

// Costs used by the exact-timing tests.
CpuCosts exact_costs() {
  CpuCosts c;
  c.per_interrupt = Duration::us(5);
  c.per_usb_transfer = Duration::us(10);
  c.per_rx_frame = Duration::us(3);
  c.per_tx_frame = Duration::us(1);
  c.per_tx_clean = Duration::us(2);
  c.per_gso_segment = Duration::us(4);
  c.copy_ps_per_byte = 1000;  // 1 ns per byte: visible if a driver copies
  return c;
}

// --- RX: SMSC turbo mode -------------------------------------------------------------------

// docs/mechanisms §4.2 (bulk-in delay), §6.1 (bus slots, EHCI threshold), §6.2 (usbnet):
// a lone 98-byte ping frame with turbo on waits for BULK_IN_DLY, crosses the bus in one short
// packet, is seen at the next 125 µs boundary, and is delivered after the handler's costs.
TEST(UsbNic, TurboLoneFrameWaitsForBulkInDelayExactly) {
  UsbNic::Params p = UsbNic::linux_smsc95xx(true);
  p.irq_latency = Duration::us(2);
  Harness h(p, exact_costs());
  h.offer(h.factory().make(98), at_us(1000));
  h.run_until(at_us(3000));
  ASSERT_EQ(h.sink().delivered.size(), 1u);
  // Wire: 8 + 98 + 4 + 12 = 122 byte times at 100 Mbit/s = 9,760 ns.
  const int64_t arrival = 1'000'000 + 9'760;
  EXPECT_EQ(h.sink().delivered[0].wire_end, at_ns(arrival));
  EXPECT_EQ(h.nic().rx_usb_len(98), 112u);  // 4 + 2 + 98 + 4 + 2 = 110, padded to 4
  // Bulk-in delay 136,533 ns, then one 112-byte packet in a 125000/13 = 9,615 ns slot.
  const int64_t completed = arrival + 136'533 + 9'615;  // 1,155,908
  EXPECT_EQ(completed, 1'155'908);
  // Next 125 µs boundary 1,250,000 + irq latency 2 µs + (5 + 10 + 3) µs of CPU, no copy
  // (Linux smsc95xx clones).
  EXPECT_EQ(h.sink().delivered[0].at, at_ns(1'250'000 + 2'000 + 18'000));
  const UsbNic::Stats& s = h.nic().stats();
  EXPECT_EQ(s.rx_transfers, 1u);
  EXPECT_EQ(s.interrupts, 1u);
  EXPECT_EQ(s.completion_delay_max, Duration::ns(1'252'000 - completed));
  EXPECT_EQ(s.cpu_time, Duration::us(18));
  EXPECT_EQ(h.nic().rx_device().stats().hold_expiries, 1u);
  expect_identities(h);
}

// §4.2: two frames 50 µs apart share one bulk-IN transfer (the second does not restart the
// delay); one interrupt, one per_usb_transfer, two per_rx_frame.
TEST(UsbNic, TurboTwoFramesFiftyMicrosApartShareOneTransfer) {
  UsbNic::Params p = UsbNic::linux_smsc95xx(true);
  p.irq_latency = Duration::us(2);
  Harness h(p, exact_costs());
  h.offer(h.factory().make(98), at_us(1000));
  h.offer(h.factory().make(98), at_us(1050));
  h.run_until(at_us(3000));
  ASSERT_EQ(h.sink().delivered.size(), 2u);
  for (const auto& d : h.sink().delivered) {
    EXPECT_EQ(d.at, at_ns(1'250'000 + 2'000 + 5'000 + 10'000 + 2 * 3'000));
  }
  EXPECT_EQ(h.nic().stats().rx_transfers, 1u);
  EXPECT_EQ(h.nic().stats().rx_frames_per_transfer[2], 1u);
  EXPECT_EQ(h.nic().stats().rx_usb_bytes, 224u);
  expect_identities(h);
}

// §4.1 SEF (turbo off): each frame is its own transfer, sent at once; both complete before
// the same 125 µs boundary, so one interrupt runs two completion jobs back to back.
TEST(UsbNic, TurboOffEachFrameIsItsOwnTransfer) {
  UsbNic::Params p = UsbNic::linux_smsc95xx(false);
  EXPECT_EQ(p.rx_transfers, 44);  // 91080 / 2048
  p.irq_latency = Duration::us(2);
  Harness h(p, exact_costs());
  h.offer(h.factory().make(98), at_us(1000));
  h.offer(h.factory().make(98), at_us(1050));
  h.run_until(at_us(3000));
  ASSERT_EQ(h.sink().delivered.size(), 2u);
  // Frame 1 arrives at 1,009,760, its packet ends 9,615 ns later; frame 2 50 µs after.
  // Boundary 1,125,000 + 2 µs; job 1: 5 + 10 + 3 µs; job 2: 10 + 3 µs.
  EXPECT_EQ(h.sink().delivered[0].at, at_ns(1'127'000 + 18'000));
  EXPECT_EQ(h.sink().delivered[1].at, at_ns(1'127'000 + 18'000 + 13'000));
  EXPECT_EQ(h.nic().stats().rx_transfers, 2u);
  EXPECT_EQ(h.nic().stats().rx_frames_per_transfer[1], 2u);
  EXPECT_EQ(h.nic().stats().interrupts, 1u);
  EXPECT_EQ(h.nic().rx_device().stats().hold_expiries, 0u);
  expect_identities(h);
}

// §6.1: with the EHCI hardware default threshold (8 microframes, log2 3) the completion is
// seen at the next 1 ms boundary.
TEST(UsbNic, EhciThresholdOneMillisecond) {
  UsbNic::Params p = UsbNic::linux_smsc95xx(false);
  p.log2_irq_thresh = 3;
  Harness h(p, zero_costs());
  h.offer(h.factory().make(98), at_us(1000));
  h.run_until(at_us(5000));
  ASSERT_EQ(h.sink().delivered.size(), 1u);
  EXPECT_EQ(h.sink().delivered[0].at, at_us(2000));
}

// §4.6 / §6.3: FreeBSD keeps ONE bulk-IN transfer and re-posts it after the callback. With a
// 500 µs per-transfer cost and turbo off, a cycle is: 3 packets (1528 B) = 28.845 µs, wait
// for the next 125 µs boundary, 500 µs of callback, re-post on a boundary again: exactly
// 625 µs per frame = 1,600 frames/s (19.4 Mbit/s of 1514-byte frames) against 8,127 offered.
// Turbo on with the same cost carries up to 12 frames per transfer and keeps up.
TEST(UsbNic, FreeBsdSingleTransferTurboOffCapsFrameRate) {
  CpuCosts c;
  c.per_usb_transfer = Duration::us(500);
  auto run = [&](bool turbo, bool flow_control) {
    UsbNic::Params p = UsbNic::freebsd_smsc95xx(turbo);  // FreeBSD: no PAUSE negotiated
    if (flow_control) {  // as if it were (Linux smsc95xx enables AFC when autoneg resolves it)
      p.rx_aggregation.pause_high_bytes = 0xF8 * 64;
      p.rx_aggregation.pause_low_bytes = 0x30 * 64;
    }
    auto h = std::make_unique<Harness>(p, c);
    h->saturate(1514, Time::zero(), at_us(2'000'000));
    h->run_until(at_us(2'000'000));
    return h;
  };
  {
    auto h = run(false, true);
    // First frame arrives at 123.04 µs, completes at 151.885 µs, boundary 250 µs, re-post
    // and delivery at 750 µs; then every 625 µs.
    EXPECT_EQ(h->sink().delivered.front().at, at_us(750));
    EXPECT_EQ(h->sink().delivered[1].at, at_us(750 + 625));
    EXPECT_EQ(h->sink().delivered_in(at_us(750), at_us(1'000'750)), 1600u);
    EXPECT_EQ(h->nic().stats().rx_fifo_drops, 0u);  // AFC PAUSE held the sender instead
    EXPECT_GT(h->nic().stats().pause_frames, 0u);
    EXPECT_GT(h->nic().stats().pause_time, Duration::ms(1000));
    EXPECT_LE(h->nic().rx_device().stats().max_fifo_bytes, 20u * 1024);
    // The single transfer is idle during each 500 µs callback (plus the boundary wait).
    EXPECT_GT(h->nic().stats().rx_idle_time, Duration::ms(1500));
    expect_identities(*h);
  }
  {
    auto h = run(false, false);  // no flow control: the 20 KB FIFO overflows
    EXPECT_EQ(h->sink().delivered_in(at_us(750), at_us(1'000'750)), 1600u);
    EXPECT_GT(h->nic().stats().rx_fifo_drops, 10'000u);
    EXPECT_EQ(h->nic().stats().pause_frames, 0u);
    expect_identities(*h);
  }
  {
    auto h = run(true, true);
    const size_t n = h->sink().delivered_in(at_us(500'000), at_us(1'500'000));
    EXPECT_GE(n, 8000u);  // line rate: 1e6 / 123.04 = 8,127 frames/s
    EXPECT_LE(n, 8128u);
    EXPECT_EQ(h->nic().stats().rx_fifo_drops, 0u);
    EXPECT_GT(h->nic().stats().mean_rx_frames_per_transfer(), 5.0);
    expect_identities(*h);
  }
}

// §6.2 vs §6.3 (§10 "number of outstanding RX transfers"): with a 1 ms EHCI threshold and no
// CPU cost, FreeBSD's one transfer completes one SEF frame per millisecond (1,000 frames/s);
// Linux keeps 44 transfers posted so the device keeps sending while completions wait for the
// interrupt, and the endpoint never idles.
TEST(UsbNic, SeveralOutstandingTransfersKeepTheEndpointBusy) {
  auto run = [](UsbNic::Params p) {
    p.log2_irq_thresh = 3;
    p.rx_aggregation.pause_high_bytes = 0;
    p.rx_aggregation.pause_low_bytes = 0;
    auto h = std::make_unique<Harness>(p, zero_costs());
    h->saturate(1514, Time::zero(), at_us(2'000'000));
    h->run_until(at_us(2'000'000));
    return h;
  };
  auto bsd = run(UsbNic::freebsd_smsc95xx(false));
  EXPECT_EQ(bsd->sink().delivered_in(at_us(1'000'000), at_us(2'000'000)), 1000u);
  EXPECT_GT(bsd->nic().stats().rx_idle_time, Duration::ms(1900));
  EXPECT_GT(bsd->nic().stats().rx_fifo_drops, 0u);
  expect_identities(*bsd);

  auto lnx = run(UsbNic::linux_smsc95xx(false));
  const size_t n = lnx->sink().delivered_in(at_us(1'000'000), at_us(2'000'000));
  EXPECT_GE(n, 8120u);
  EXPECT_LE(n, 8135u);
  EXPECT_EQ(lnx->nic().stats().rx_fifo_drops, 0u);
  EXPECT_EQ(lnx->nic().stats().rx_idle_time, Duration::zero());
  EXPECT_GT(lnx->nic().stats().completions, lnx->nic().stats().interrupts * 7);
  expect_identities(*lnx);
}

// §5.1, §5.4: ASIX MFB with one outstanding transfer and a ≈290 µs per-transfer host cost,
// under saturating gigabit input (AX88178). 2K: each transfer carries one 1518-byte frame;
// cycle = 3 packets (28.8 µs) + wait for the boundary (0..125 µs) + 290 µs → 2,252..3,137
// frames/s. 16K: ten frames (10 × 1518 = 15,180 <= 16,384 < 11 × 1518); cycle = 30 packets
// (288.5 µs) + 0..125 + 290 µs → 14,200..17,300 frames/s. S2 reports 4.4× (50 → 220 Mbit/s).
TEST(UsbNic, AsixBurstSizeSetsFramesPerTransferAndThroughput) {
  CpuCosts c;
  c.per_usb_transfer = Duration::us(290);
  auto run = [&](int64_t mfb) {
    UsbNic::Params p = UsbNic::freebsd_axe(mfb);
    auto h = std::make_unique<Harness>(p, c, Rate::gbit(1), Rate::gbit(1));
    h->saturate(1514, Time::zero(), at_us(1'200'000));
    h->run_until(at_us(1'200'000));
    return h;
  };
  auto k2 = run(2048);
  const UsbNic::Stats& s2 = k2->nic().stats();
  EXPECT_EQ(k2->nic().rx_usb_len(1514), 1518u);
  EXPECT_EQ(s2.rx_frames_per_transfer[1], s2.rx_transfers);
  const size_t r2 = k2->sink().delivered_in(at_us(100'000), at_us(1'100'000));
  EXPECT_GE(r2, 2252u);
  EXPECT_LE(r2, 3137u);
  expect_identities(*k2);

  auto k16 = run(16'384);
  const UsbNic::Stats& s16 = k16->nic().stats();
  EXPECT_EQ(s16.rx_frames_per_transfer[10], s16.rx_transfers);
  const size_t r16 = k16->sink().delivered_in(at_us(100'000), at_us(1'100'000));
  EXPECT_GE(r16, 14'200u);
  EXPECT_LE(r16, 17'300u);
  EXPECT_GT(static_cast<double>(r16) / static_cast<double>(r2), 4.0);
  expect_identities(*k16);
}

// §10: FreeBSD (and Linux asix) copy every received frame; Linux smsc95xx does not.
TEST(UsbNic, CopyCostOnlyForCopyingDrivers) {
  CpuCosts c;
  c.copy_ps_per_byte = 1000;  // 1 ns per byte
  auto cpu_for = [&](UsbNic::Params p) {
    Harness h(p, c);
    h.offer(h.factory().make(1000), at_us(100));
    h.run_until(at_us(2000));
    EXPECT_EQ(h.sink().delivered.size(), 1u);
    return h.nic().stats().cpu_time;
  };
  EXPECT_EQ(cpu_for(UsbNic::linux_smsc95xx(true)), Duration::zero());
  EXPECT_EQ(cpu_for(UsbNic::freebsd_smsc95xx(true)), Duration::ns(1000));
  EXPECT_EQ(cpu_for(UsbNic::linux_asix(2048)), Duration::ns(1000));
  EXPECT_EQ(cpu_for(UsbNic::freebsd_axe(16'384)), Duration::ns(1000));
}

// --- TX ------------------------------------------------------------------------------------

// §4.5, §6.1, §6.2: one 1514-byte frame: 1 µs of xmit, 1522 bulk-OUT bytes = 3 packets,
// the device starts it on the wire when complete (store and forward); the URB completion is
// seen at the 125 µs boundary and its job (5 + 10 + 2 µs) releases the socket bytes — before
// the frame has left the wire.
TEST(UsbNic, TxUrbCompletionReleasesSocketBytesExactly) {
  UsbNic::Params p = UsbNic::linux_smsc95xx(true);
  p.irq_latency = Duration::us(2);
  Harness h(p, exact_costs());
  EXPECT_EQ(h.send(h.factory().make(1514), Time::zero()), Verdict::kQueued);
  h.run_until(at_us(1000));
  ASSERT_EQ(h.sent.size(), 1u);
  EXPECT_EQ(h.nic().tx_usb_len(1514), 1522u);
  EXPECT_EQ(h.sent[0].stamp_at(Stage::kQdiscIn), Time::zero());
  EXPECT_EQ(h.sent[0].stamp_at(Stage::kRingIn), Time::zero());
  EXPECT_EQ(h.sent[0].stamp_at(Stage::kWireStart), at_ns(1000 + 3 * 9'615));
  EXPECT_EQ(h.sent[0].stamp_at(Stage::kWireEnd), at_ns(1000 + 3 * 9'615 + 123'040));
  ASSERT_EQ(h.sink().released.size(), 1u);
  EXPECT_EQ(h.sink().released[0].at, at_ns(125'000 + 2'000 + 17'000));
  EXPECT_EQ(h.sink().released[0].r.bytes, 1514u);
  EXPECT_TRUE(h.sink().released[0].r.last_segment);
  EXPECT_EQ(h.nic().stats().tx_usb_packets, 3u);
  EXPECT_EQ(h.nic().stats().tx_usb_bytes, 1522u);
  EXPECT_EQ(h.nic().tx_fifo_used(), 0u);
  expect_identities(h);
}

// §6.2: a transfer that is a multiple of 512 bytes ends with a ZLP (smsc95xx FLAG_SEND_ZLP):
// the frame is in the FIFO after 2 packets, the URB completes after the third (the ZLP).
// §5.3: ASIX appends a dummy header instead (508 + 4 = 512 → 516 bytes, 2 packets).
TEST(UsbNic, TxZlpForSmscAndDummyHeaderForAsix) {
  {
    Harness h(UsbNic::linux_smsc95xx(true), exact_costs());
    h.send(h.factory().make(1016), Time::zero());  // 1016 + 8 = 1024
    h.run_until(at_us(1000));
    ASSERT_EQ(h.sent.size(), 1u);
    EXPECT_EQ(h.sent[0].stamp_at(Stage::kWireStart), at_ns(1000 + 2 * 9'615));
    EXPECT_EQ(h.nic().stats().tx_usb_packets, 3u);
    EXPECT_EQ(h.nic().stats().completion_delay_max, Duration::ns(125'000 - 1000 - 3 * 9'615));
  }
  {
    Harness h(UsbNic::linux_asix(2048), exact_costs());
    EXPECT_EQ(h.nic().tx_usb_len(508), 516u);
    h.send(h.factory().make(508), Time::zero());
    h.run_until(at_us(1000));
    ASSERT_EQ(h.sent.size(), 1u);
    EXPECT_EQ(h.sent[0].stamp_at(Stage::kWireStart), at_ns(1000 + 2 * 9'615));
    EXPECT_EQ(h.nic().stats().tx_usb_packets, 2u);
    EXPECT_EQ(h.nic().stats().tx_usb_bytes, 516u);
  }
}

// §6.2: usbnet stops the netdev queue when txq.qlen reaches tx_qlen after a submit and wakes
// it from the completion bottom half; the rest waits in the qdisc.
TEST(UsbNic, LinuxStopsQueueAtTxQlenAndWakes) {
  UsbNic::Params p = UsbNic::linux_smsc95xx(true);
  p.tx_qlen = 4;
  Harness h(p, exact_costs());
  for (int i = 0; i < 10; ++i) {
    h.send(h.factory().make(1514), Time::zero());
  }
  EXPECT_EQ(h.nic().tx_urbs_in_flight(), 4u);
  EXPECT_TRUE(h.nic().tx_queue_stopped());
  EXPECT_EQ(h.nic().stats().tx_queue_stops, 1u);
  NicQueueSample q = h.nic().queue_sample();
  EXPECT_EQ(q.qdisc_packets, 6u);
  EXPECT_EQ(q.ring_packets, 4u);
  EXPECT_EQ(q.ring_bytes, 4u * 1514);
  EXPECT_EQ(q.bql_limit, 0u);
  h.run_until(at_us(10'000));
  EXPECT_EQ(h.sent.size(), 10u);
  EXPECT_EQ(h.sink().released.size(), 10u);
  // Each of the 6 later frames is dequeued by a wake and stops the queue again.
  EXPECT_EQ(h.nic().stats().tx_queue_stops, 7u);
  EXPECT_EQ(h.nic().stats().tx_queue_wakes, 7u);
  EXPECT_FALSE(h.nic().tx_queue_stopped());
  EXPECT_EQ(h.nic().stats().tx_frames_per_transfer[1], 10u);
  for (size_t i = 0; i < h.sent.size(); ++i) {
    EXPECT_EQ(h.sent[i].id, i + 1);  // order kept
  }
  expect_identities(h);
}

// §6.3: FreeBSD: one bulk-OUT transfer at a time; the callback drains up to 16 frames. The
// first send finds the transfer idle and goes alone; the rest are packed 16, 16, 7.
TEST(UsbNic, FreeBsdPacksUpToSixteenFramesPerTransfer) {
  Harness h(UsbNic::freebsd_smsc95xx(true), exact_costs());
  for (int i = 0; i < 40; ++i) {
    h.send(h.factory().make(1514), Time::zero());
  }
  EXPECT_TRUE(h.nic().tx_queue_stopped());
  EXPECT_EQ(h.nic().tx_urbs_in_flight(), 1u);
  h.run_until(at_us(20'000));
  const UsbNic::Stats& s = h.nic().stats();
  EXPECT_EQ(s.tx_transfers, 4u);
  EXPECT_EQ(s.tx_frames_per_transfer[1], 1u);
  EXPECT_EQ(s.tx_frames_per_transfer[16], 2u);
  EXPECT_EQ(s.tx_frames_per_transfer[7], 1u);
  EXPECT_EQ(h.sent.size(), 40u);
  EXPECT_EQ(h.sink().released.size(), 40u);
  // FreeBSD copies each frame into the transfer buffer: 1 ns/byte here.
  EXPECT_EQ(s.cpu_time, Duration::us(40 * 1) + Duration::ns(40 * 1514) +
                            Duration::us(4 * 10 + 40 * 2) + Duration::us(5) * s.interrupts);
  expect_identities(h);
}

// §5.3: FreeBSD axe packs the frames of a transfer back to back; a dummy header goes where a
// frame would end on a 512-byte boundary of the transfer.
TEST(UsbNic, FreeBsdAxePacksFramesIntoOneStream) {
  Harness h(UsbNic::freebsd_axe(16'384), exact_costs());
  h.send(h.factory().make(100), Time::zero());  // alone: 104 bytes
  h.send(h.factory().make(400), Time::zero());  // 404
  h.send(h.factory().make(104), Time::zero());  // 404 + 108 = 512 -> + dummy 4
  h.send(h.factory().make(60), Time::zero());   // 64
  h.run_until(at_us(5000));
  EXPECT_EQ(h.sent.size(), 4u);
  EXPECT_EQ(h.nic().stats().tx_usb_bytes, 104u + 404 + 112 + 64);
  EXPECT_EQ(h.nic().stats().tx_usb_packets, 1u + 2);  // 104 | 512 + 68
  expect_identities(h);
}

// §10 device FIFOs: bulk-OUT (≈53 MB/s) outruns a 100 Mbit/s PHY; the 8 KB TX FIFO fills and
// the device NAKs; the wire stays busy back to back.
TEST(UsbNic, TxFifoFullNaksBulkOutAndWireRunsBackToBack) {
  UsbNic::Params p = UsbNic::linux_smsc95xx(true);
  p.tx_qlen = 60;
  Harness h(p, zero_costs());
  for (int i = 0; i < 60; ++i) {
    h.send(h.factory().make(1514), Time::zero());
  }
  h.run_until(at_us(20'000));
  ASSERT_EQ(h.sent.size(), 60u);
  EXPECT_GT(h.nic().stats().tx_fifo_stalls, 0u);
  EXPECT_LE(h.nic().stats().max_tx_fifo_bytes, 8192u);
  EXPECT_GT(h.nic().stats().max_tx_fifo_bytes, 8192u - 512);
  const Time first = h.sent.front().stamp_at(Stage::kWireStart);
  EXPECT_EQ(first, at_ns(3 * 9'615));
  EXPECT_EQ(h.sent.back().stamp_at(Stage::kWireEnd), first + Duration::ns(60 * 123'040));
  expect_identities(h);
}

// §10: the device honours PAUSE from its link partner: nothing starts before the pause ends.
TEST(UsbNic, TxHonoursPauseFromThePeer) {
  Harness h(UsbNic::linux_smsc95xx(true), zero_costs());
  h.out().pause_until(at_us(500));
  h.send(h.factory().make(1514), Time::zero());
  h.send(h.factory().make(1514), Time::zero());
  h.run_until(at_us(200));
  h.out().pause_until(at_us(900));  // extended while the device waits
  h.run_until(at_us(5000));
  ASSERT_EQ(h.sent.size(), 2u);
  EXPECT_EQ(h.sent[0].stamp_at(Stage::kWireStart), at_us(900));
  EXPECT_EQ(h.sent[1].stamp_at(Stage::kWireStart), at_us(900) + Duration::ns(123'040));
  // The URBs completed long before: bytes released while the frames sat in the FIFO.
  ASSERT_EQ(h.sink().released.size(), 2u);
  EXPECT_LT(h.sink().released[1].at, at_us(500));
}

// Software GSO (no TSO on these chips): a 3-segment packet becomes three frames, the socket
// sees three releases, only the last marked last_segment; per_gso_segment is charged.
TEST(UsbNic, GsoPacketIsSegmentedInSoftware) {
  Harness h(UsbNic::linux_smsc95xx(true), exact_costs());
  Packet gso = h.factory().make(4542);
  gso.gso_segs = 3;
  gso.gso_size = 1514;  // frame bytes per full segment (core/gso.h)
  h.send(std::move(gso), Time::zero());
  h.run_until(at_us(5000));
  ASSERT_EQ(h.sent.size(), 3u);
  for (const Packet& s : h.sent) {
    EXPECT_EQ(s.len, 1514u);
    EXPECT_EQ(s.id, 1u);
  }
  ASSERT_EQ(h.sink().released.size(), 3u);
  EXPECT_FALSE(h.sink().released[0].r.last_segment);
  EXPECT_FALSE(h.sink().released[1].r.last_segment);
  EXPECT_TRUE(h.sink().released[2].r.last_segment);
  EXPECT_EQ(h.nic().stats().tx_segments, 3u);
  // The first xmit pays 3 × per_gso_segment: its URB is ready at 1 + 12 µs.
  EXPECT_EQ(h.sent[0].stamp_at(Stage::kWireStart), at_ns(13'000 + 3 * 9'615));
  expect_identities(h);
}

// smsc95xx TX_CMD_A buffer size is 11 bits: a frame above 2047 bytes cannot be sent; the
// driver drops it and frees the skb (the socket gets its bytes back).
TEST(UsbNic, TxFrameTooLargeForTheChipIsDropped) {
  Harness h(UsbNic::linux_smsc95xx(true), exact_costs());
  testing::RecordingObserver obs;
  h.nic().set_observer(&obs);
  h.send(h.factory().make(2048), Time::zero());
  h.send(h.factory().make(2047), Time::zero());
  h.run_until(at_us(5000));
  EXPECT_EQ(h.nic().stats().tx_malformed_drops, 1u);
  EXPECT_EQ(obs.count(testing::RecordingObserver::Event::kDrop), 1u);
  ASSERT_EQ(h.sent.size(), 1u);
  EXPECT_EQ(h.sent[0].len, 2047u);
  EXPECT_EQ(h.sink().released.size(), 2u);
  expect_identities(h);
}

// A non-work-conserving qdisc (TBF) releases packets later: its watchdog runs the queue.
TEST(UsbNic, QdiscWatchdogRunsTbf) {
  algo::Tbf::Params tp;
  tp.rate = Rate::mbit(10);
  tp.burst = 1514;
  tp.limit = 100'000;
  Harness h(UsbNic::linux_smsc95xx(true), zero_costs(), Rate::mbit(100), Rate::mbit(100),
            AnyQueue::make<algo::Tbf>(tp));
  for (int i = 0; i < 5; ++i) {
    h.send(h.factory().make(1514), Time::zero());
  }
  h.run_until(at_us(10'000));
  ASSERT_EQ(h.sent.size(), 5u);
  // 1514 bytes at 10 Mbit/s = 1,211.2 µs between TBF releases.
  const Duration gap = h.sent[4].stamp_at(Stage::kRingIn) - h.sent[3].stamp_at(Stage::kRingIn);
  EXPECT_GE(gap, Duration::ns(1'211'000));
  EXPECT_LE(gap, Duration::ns(1'212'000));
  expect_identities(h);
}

// --- Real bytes ----------------------------------------------------------------------------

// Emulator case: frames with payload cross the chip's framing both ways (encode + decode) and
// come out byte-identical, for every chip/driver pair.
TEST(UsbNic, PayloadBytesSurviveFramingBothWays) {
  for (const UsbNic::Params& p :
       {UsbNic::linux_smsc95xx(true), UsbNic::linux_smsc95xx(false), UsbNic::freebsd_smsc95xx(true),
        UsbNic::linux_asix(2048), UsbNic::freebsd_axe(16'384)}) {
    Harness h(p, zero_costs());
    std::mt19937_64 rng(7);
    std::vector<std::vector<uint8_t>> rx_bytes;
    std::vector<std::vector<uint8_t>> tx_bytes;
    for (int i = 0; i < 40; ++i) {
      const uint32_t len = 60 + static_cast<uint32_t>(rng() % 1455);
      Packet f = with_payload(h.factory().make(len), rng);
      rx_bytes.push_back(f.payload->bytes);
      h.offer(std::move(f), at_us(10 * i));
    }
    for (int i = 0; i < 40; ++i) {
      const uint32_t len = 60 + static_cast<uint32_t>(rng() % 1455);
      Packet f = with_payload(h.factory().make(len), rng);
      tx_bytes.push_back(f.payload->bytes);
      h.send(std::move(f), at_us(5 * i));
    }
    h.run_until(at_us(50'000));
    ASSERT_EQ(h.sink().delivered.size(), 40u) << h.nic().describe();
    for (size_t i = 0; i < 40; ++i) {
      EXPECT_EQ(h.sink().delivered[i].bytes, rx_bytes[i]) << h.nic().describe() << " rx " << i;
    }
    ASSERT_EQ(h.sent.size(), 40u);
    for (size_t i = 0; i < 40; ++i) {
      ASSERT_TRUE(h.sent[i].payload);
      EXPECT_EQ(h.sent[i].payload->bytes, tx_bytes[i]) << h.nic().describe() << " tx " << i;
    }
    EXPECT_EQ(h.nic().stats().rx_malformed_drops, 0u);
    expect_identities(h);
  }
}

// §4.4 / §10: Linux smsc95xx aborts the rest of a URB at a frame longer than 1514 + 12 (FL
// counts FCS + COE); FreeBSD accepts up to 2046. Three frames sharing one turbo transfer:
// [98, 1600, 98].
TEST(UsbNic, MalformedTransferHandledAsTheDriverDoes) {
  auto run = [](UsbNic::Params p) {
    auto h = std::make_unique<Harness>(p, zero_costs());
    std::mt19937_64 rng(3);
    h->offer(with_payload(h->factory().make(98), rng), at_us(100));
    h->offer(with_payload(h->factory().make(1600), rng), at_us(100));
    h->offer(with_payload(h->factory().make(98), rng), at_us(100));
    h->run_until(at_us(5000));
    expect_identities(*h);
    return h;
  };
  auto lnx = run(UsbNic::linux_smsc95xx(true));
  EXPECT_EQ(lnx->nic().stats().rx_transfers, 1u);
  ASSERT_EQ(lnx->sink().delivered.size(), 1u);
  EXPECT_EQ(lnx->sink().delivered[0].id, 1u);
  EXPECT_EQ(lnx->nic().stats().rx_malformed_drops, 2u);
  EXPECT_EQ(lnx->nic().counters().rx_drops, 2u);
  auto bsd = run(UsbNic::freebsd_smsc95xx(true));
  EXPECT_EQ(bsd->sink().delivered.size(), 3u);
  EXPECT_EQ(bsd->nic().stats().rx_malformed_drops, 0u);
  // Linux asix: a frame above mtu + 18 = 1518 is a "Bad RX Length" and drops the rest of the
  // URB. ASIX ends a transfer as soon as no complete frame waits (no hold time): the first
  // frame goes alone; the third arrives (9.76 µs after the jumbo) while the jumbo's 1604
  // bytes are still crossing the bus (4 packets, 38.5 µs) and joins its transfer.
  auto ax = run(UsbNic::linux_asix(4096));
  EXPECT_EQ(ax->nic().stats().rx_transfers, 2u);
  EXPECT_EQ(ax->nic().stats().rx_frames_per_transfer[2], 1u);
  ASSERT_EQ(ax->sink().delivered.size(), 1u);
  EXPECT_EQ(ax->sink().delivered[0].id, 1u);
  EXPECT_EQ(ax->nic().stats().rx_malformed_drops, 2u);
}

// --- Conservation --------------------------------------------------------------------------

// Random seeded traffic both ways (sizes 60..2100, GSO packets, a small qdisc, AFC on/off):
// every frame offered is delivered, dropped and counted, or still held; after a quiet period
// everything has drained. Checked at checkpoints and at the end, for several configurations.
TEST(UsbNic, ConservationUnderRandomTraffic) {
  std::vector<UsbNic::Params> configs = {
      UsbNic::linux_smsc95xx(true),   UsbNic::linux_smsc95xx(false),
      UsbNic::freebsd_smsc95xx(true), UsbNic::freebsd_smsc95xx(false),
      UsbNic::linux_asix(2048),       UsbNic::freebsd_axe(16'384)};
  configs[3].rx_aggregation.pause_high_bytes = 0;
  configs[3].rx_aggregation.pause_low_bytes = 0;
  configs[1].log2_irq_thresh = 3;
  configs[1].irq_latency = Duration::us(7);
  CpuCosts c = exact_costs();
  c.per_usb_transfer = Duration::us(150);
  for (uint64_t seed : {1u, 2u, 3u}) {
    for (const UsbNic::Params& p : configs) {
      Harness h(p, c, Rate::mbit(100), Rate::mbit(100),
                AnyQueue::make<algo::Fifo>(algo::Fifo::Params{.limit_packets = 30}));
      std::mt19937_64 rng(seed);
      Time t = Time::zero();
      uint64_t sent_packets = 0;
      for (int i = 0; i < 3000; ++i) {
        t += Duration::ns(static_cast<int64_t>(rng() % 60'000));
        const uint32_t len = 60 + static_cast<uint32_t>(rng() % 2041);
        if (rng() % 2 == 0) {
          h.offer(rng() % 4 == 0 ? with_payload(h.factory().make(len > 1514 ? 1514 : len), rng)
                                 : h.factory().make(len > 1514 ? 1514 : len),
                  t);
        } else {
          Packet pk = h.factory().make(len);
          if (rng() % 8 == 0) {
            pk.gso_segs = static_cast<uint16_t>(2 + rng() % 3);
            pk.len = 1514u * pk.gso_segs;
            pk.gso_size = 1514;
          }
          h.send(std::move(pk), t);
          ++sent_packets;
        }
        if (i % 500 == 0) {
          expect_identities(h);
        }
      }
      h.run_until(t + Duration::s(1));
      SCOPED_TRACE(h.nic().describe());
      expect_identities(h);
      const UsbNic::Stats& s = h.nic().stats();
      EXPECT_EQ(s.tx_offered, sent_packets);
      EXPECT_EQ(h.nic().tx_frames_held(), 0u);
      EXPECT_EQ(h.nic().rx_frames_held(), 0u);
      EXPECT_EQ(h.nic().queue_sample().qdisc_packets, 0u);
      EXPECT_EQ(h.nic().tx_urbs_in_flight(), 0u);
      EXPECT_EQ(s.tx_released + s.tx_malformed_drops, s.tx_segments);
      EXPECT_EQ(s.rx_frames_in, h.offered_rx);
      EXPECT_EQ(s.cpu_time, h.cpu().stats().busy);
      std::set<uint64_t> ids;
      for (const auto& d : h.sink().delivered) {
        EXPECT_TRUE(ids.insert(d.id).second);
      }
    }
  }
}

// Deterministic: the same inputs give the same outputs.
TEST(UsbNic, Deterministic) {
  auto run = [] {
    Harness h(UsbNic::freebsd_smsc95xx(false), exact_costs());
    h.saturate(1514, Time::zero(), at_us(100'000));
    for (int i = 0; i < 50; ++i) {
      h.send(h.factory().make(1000), at_us(i * 1000));
    }
    h.run_until(at_us(200'000));
    std::vector<int64_t> v;
    for (const auto& d : h.sink().delivered) {
      v.push_back(d.at.ns_since_epoch());
    }
    for (const auto& r : h.sink().released) {
      v.push_back(r.at.ns_since_epoch());
    }
    return v;
  };
  EXPECT_EQ(run(), run());
}

// --- Parameters ----------------------------------------------------------------------------

TEST(UsbNic, DefaultsFollowTheDrivers) {
  const UsbNic::Params d;
  EXPECT_EQ(d.rx_transfers, 4);  // 91080 / 18944
  EXPECT_EQ(d.tx_qlen, 59);      // 91080 / 1526
  EXPECT_EQ(UsbNic::linux_asix(2048).tx_qlen, 60);
  EXPECT_EQ(UsbNic::linux_asix(2048).rx_transfers, 44);
  EXPECT_EQ(d.rx_aggregation.pause_high_bytes, 15'872);
  EXPECT_EQ(d.rx_aggregation.pause_low_bytes, 3072);
  // FreeBSD uether never negotiates PAUSE (mii_attach without MIIF_DOPAUSE; smsc_miibus_statchg
  // clears AFC_CFG's flow-control bits): the AFC watermarks are inactive.
  EXPECT_EQ(UsbNic::freebsd_smsc95xx(true).rx_aggregation.pause_high_bytes, 0);
  EXPECT_EQ(UsbNic::freebsd_smsc95xx(false).rx_aggregation.pause_low_bytes, 0);
  EXPECT_EQ(UsbNic::linux_smsc95xx(false).rx_aggregation.pause_high_bytes, 15'872);
  EXPECT_EQ(UsbNic::freebsd_smsc95xx(true).tx_frames_per_transfer, 16);
  EXPECT_EQ(UsbNic::freebsd_axe(16'384).rx_transfers, 1);
  Harness h(d, zero_costs());
  const std::string s = h.nic().describe();
  EXPECT_NE(s.find("smsc95xx"), std::string::npos);
  EXPECT_NE(s.find("linux_usbnet"), std::string::npos);
  EXPECT_EQ(parse_usb_chip("asix"), UsbNic::Chip::kAsix);
  EXPECT_EQ(parse_usb_driver("freebsd"), UsbNic::Driver::kFreeBsd);
  EXPECT_FALSE(parse_usb_driver("netbsd"));
}

TEST(UsbNic, BadParamsRejectedWithKey) {
  auto key_of = [](const UsbNic::Params& p, const CpuCosts& c = CpuCosts{}) -> std::string {
    try {
      UsbNic n(p, AnyQueue::make<algo::Fifo>(), c);
    } catch (const InvalidParams& e) {
      return e.error().key;
    }
    return "";
  };
  auto with = [](auto f) {
    UsbNic::Params p;
    f(p);
    return p;
  };
  EXPECT_EQ(key_of(with([](auto& p) { p.rx_transfers = 0; })), "rx_transfers");
  EXPECT_EQ(key_of(with([](auto& p) { p.tx_qlen = 0; })), "tx_qlen");
  EXPECT_EQ(key_of(with([](auto& p) { p.tx_frames_per_transfer = 16; })),
            "tx_frames_per_transfer");  // Linux: one URB per skb
  EXPECT_EQ(key_of(with([](auto& p) { p.log2_irq_thresh = 7; })), "log2_irq_thresh");
  EXPECT_EQ(key_of(with([](auto& p) { p.log2_irq_thresh = -1; })), "log2_irq_thresh");
  EXPECT_EQ(key_of(with([](auto& p) { p.irq_latency = Duration::ns(-1); })), "irq_latency");
  EXPECT_EQ(key_of(with([](auto& p) { p.bulk_out_packets_per_microframe = 14; })),
            "bulk_out_packets_per_microframe");
  EXPECT_EQ(key_of(with([](auto& p) { p.tx_fifo_bytes = 1000; })), "tx_fifo");
  EXPECT_EQ(key_of(with([](auto& p) { p.rx_urb_bytes = 1000; })), "rx_urb_size");
  EXPECT_EQ(key_of(with([](auto& p) { p.pause_time = Duration::zero(); })), "pause_time");
  EXPECT_EQ(key_of(with([](auto& p) { p.rx_aggregation.fifo_bytes = 0; })), "rx_fifo");
  EXPECT_EQ(key_of(with([](auto& p) { p.rx_aggregation.burst_cap_bytes = 1024; })), "burst_cap");
  EXPECT_EQ(key_of(with([](auto& p) { p.chip = static_cast<UsbNic::Chip>(9); })), "chip");
  EXPECT_EQ(key_of(with([](auto& p) { p.driver = static_cast<UsbNic::Driver>(9); })), "driver");
  CpuCosts bad;
  bad.per_usb_transfer = Duration::ns(-1);
  EXPECT_EQ(key_of(UsbNic::Params{}, bad), "per_usb_transfer");
  try {
    UsbNic n(UsbNic::Params{}, AnyQueue{}, CpuCosts{});
    ADD_FAILURE() << "no qdisc accepted";
  } catch (const InvalidParams& e) {
    EXPECT_EQ(e.error().key, "qdisc");
  }
  UsbNic::Params ok = with([](auto& p) { p.rx_transfers = 0; });
  EXPECT_THROW(UsbNic(ok, AnyQueue::make<algo::Fifo>(), CpuCosts{}), InvalidParams);
}

}  // namespace
}  // namespace nicsim::model
