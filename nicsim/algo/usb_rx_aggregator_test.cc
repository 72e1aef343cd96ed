// UsbRxAggregator: SMSC turbo mode (MEF + BURST_CAP + BULK_IN_DLY, docs/mechanisms §4.2),
// SMSC SEF (turbo off), ASIX maximum frame burst (§5.1), USB 2.0 HS bulk packets (§6.1).
#include "nicsim/algo/usb_rx_aggregator.h"

#include <gtest/gtest.h>

#include <random>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/recording_observer.h"

namespace nicsim::algo {
namespace {

using Mode = UsbRxAggregator::Mode;
using testing::PacketFactory;

constexpr Duration kHold = Duration::ns(136'533);  // 0x2000 × 16.667 ns (§4.2 step 4)
constexpr Duration kSlot = Duration::ns(125'000 / 13);
// SMSC RX framing of a 1514-byte frame: 4 status + 2 offset + 1514 + 4 FCS = 1524 (§4.4).
constexpr uint32_t kSmscFull = 1524;
// ASIX RX framing: 4-byte header + 1514 (§5.2).
constexpr uint32_t kAsixFull = 1518;

Time at_us(int64_t us) { return Time::zero() + Duration::us(us); }

UsbRxAggregator::Params smsc_turbo() { return {}; }
UsbRxAggregator::Params smsc_no_turbo() {
  UsbRxAggregator::Params p;
  p.mode = Mode::kSingleFrame;
  p.burst_cap_bytes = 2048;  // MAX_SINGLE_PACKET_SIZE (§4.2 step 3)
  p.hold_time = Duration::zero();
  return p;
}
UsbRxAggregator::Params asix(int64_t mfb) {
  UsbRxAggregator::Params p;
  p.burst_cap_bytes = mfb;
  p.hold_time = Duration::zero();
  p.fifo_bytes = 64 * 1024;
  return p;
}

// Runs the device until it is idle, collecting completed transfers.
std::vector<UsbRxAggregator::Transfer> drain(UsbRxAggregator& agg, Time until) {
  std::vector<UsbRxAggregator::Transfer> out;
  while (auto t = agg.next_ready()) {
    if (*t > until) {
      break;
    }
    while (auto x = agg.pop_completed(*t)) {
      out.push_back(std::move(*x));
    }
  }
  return out;
}

TEST(UsbRxAggregator, TurboLoneFrameWaitsForBulkInDelay) {
  // §4.2: a lone sub-512-byte frame arriving at an empty FIFO waits for the timer.
  UsbRxAggregator agg(smsc_turbo());
  PacketFactory f;
  agg.post_transfer(Time::zero());
  agg.frame_arrived(f.make(98), 112, Time::zero());  // ping-sized frame
  ASSERT_EQ(agg.next_ready(), Time::zero() + kHold);
  auto xs = drain(agg, at_us(10'000));
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_EQ(xs[0].frames.size(), 1u);
  EXPECT_EQ(xs[0].first_packet, Time::zero() + kHold);
  EXPECT_EQ(xs[0].completed, Time::zero() + kHold + kSlot);  // one short packet
  EXPECT_EQ(xs[0].usb_packets, 1u);
  EXPECT_EQ(agg.stats().hold_expiries, 1u);
  EXPECT_EQ(agg.stats().short_packets, 1u);
}

TEST(UsbRxAggregator, TurboTwoFramesFiftyMicrosApartShareOneTransfer) {
  // §4.2: the second frame arrives before the bulk-in delay expires -> same transfer.
  UsbRxAggregator agg(smsc_turbo());
  PacketFactory f;
  agg.post_transfer(Time::zero());
  agg.post_transfer(Time::zero());
  agg.frame_arrived(f.make(98), 112, Time::zero());
  agg.frame_arrived(f.make(98), 112, at_us(50));
  auto xs = drain(agg, at_us(10'000));
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_EQ(xs[0].frames.size(), 2u);
  // The second small frame does not restart the timer (only a full packet does).
  EXPECT_EQ(xs[0].completed, Time::zero() + kHold + kSlot);
}

TEST(UsbRxAggregator, TurboFullPacketRestartsTheTimer) {
  // §4.2: if data for another full packet arrives, it is sent and the timer restarts.
  UsbRxAggregator agg(smsc_turbo());
  PacketFactory f;
  agg.post_transfer(Time::zero());
  agg.frame_arrived(f.make(1514), kSmscFull, Time::zero());
  // 1524 bytes: two full packets at 0 and one slot later; 500 bytes wait.
  EXPECT_EQ(agg.next_ready(), Time::zero());
  agg.advance(Time::zero() + kSlot);
  EXPECT_EQ(agg.next_ready(), Time::zero() + 2 * kSlot + kHold);
  // A second full frame 122 us later (back-to-back at 100 Mbit/s) keeps the transfer going.
  agg.frame_arrived(f.make(1514), kSmscFull, at_us(122));
  auto xs = drain(agg, at_us(10'000));
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_EQ(xs[0].frames.size(), 2u);
  EXPECT_EQ(xs[0].bytes, 2u * kSmscFull);
  EXPECT_EQ(xs[0].usb_packets, 6u);  // 3048 bytes = 5 full + 1 short
  // After the 5th full packet (sent from t=122us) 488 bytes wait for the delay.
  const Time fifth_end = at_us(122) + 3 * kSlot;
  EXPECT_EQ(xs[0].completed, fifth_end + kHold + kSlot);
}

TEST(UsbRxAggregator, TurboOffEachFrameIsItsOwnTransfer) {
  // §4.1: SEF — one frame per transfer, no delay.
  UsbRxAggregator agg(smsc_no_turbo());
  PacketFactory f;
  for (int i = 0; i < 3; ++i) {
    agg.post_transfer(Time::zero());
  }
  agg.frame_arrived(f.make(98), 112, Time::zero());
  agg.frame_arrived(f.make(98), 112, at_us(50));
  agg.frame_arrived(f.make(1514), kSmscFull, at_us(60));
  auto xs = drain(agg, at_us(10'000));
  ASSERT_EQ(xs.size(), 3u);
  for (const auto& x : xs) {
    EXPECT_EQ(x.frames.size(), 1u);
  }
  EXPECT_EQ(xs[0].completed, Time::zero() + kSlot);  // no bulk-in delay
  EXPECT_EQ(xs[1].completed, at_us(50) + kSlot);
  EXPECT_EQ(xs[2].usb_packets, 3u);  // 1524 = 512 + 512 + 500
  EXPECT_EQ(agg.stats().hold_expiries, 0u);
}

TEST(UsbRxAggregator, SingleFrameOnPacketBoundaryEndsWithZlp) {
  UsbRxAggregator agg(smsc_no_turbo());
  PacketFactory f;
  agg.post_transfer(Time::zero());
  agg.frame_arrived(f.make(1014), 1024, Time::zero());
  auto xs = drain(agg, at_us(1000));
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_TRUE(xs[0].zlp);
  EXPECT_EQ(xs[0].usb_packets, 3u);
  EXPECT_EQ(xs[0].completed, Time::zero() + 3 * kSlot);
}

TEST(UsbRxAggregator, WithoutPostedTransferFramesWait) {
  // The device sends only into a posted transfer (§6.2/§6.3).
  UsbRxAggregator agg(smsc_no_turbo());
  PacketFactory f;
  agg.frame_arrived(f.make(98), 112, Time::zero());
  EXPECT_EQ(agg.next_ready(), std::nullopt);
  agg.post_transfer(at_us(300));
  auto xs = drain(agg, at_us(1000));
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_EQ(xs[0].first_packet, at_us(300));
}

int frames_per_transfer_asix(int64_t mfb) {
  // Full FIFO of MTU frames, one transfer posted (FreeBSD axe keeps one, §6.3).
  UsbRxAggregator agg(asix(mfb));
  PacketFactory f;
  for (int i = 0; i < 20; ++i) {
    agg.frame_arrived(f.make(1514), kAsixFull, Time::zero());
  }
  agg.post_transfer(Time::zero());
  auto xs = drain(agg, at_us(100'000));
  EXPECT_EQ(xs.size(), 1u);
  return xs.empty() ? 0 : static_cast<int>(xs[0].frames.size());
}

TEST(UsbRxAggregator, AsixBurstSizeSetsFramesPerTransfer) {
  // §5.1: MFB 2K carries one MTU frame per transfer; 16K about ten (16384 / 1518 = 10.8).
  EXPECT_EQ(frames_per_transfer_asix(2048), 1);
  EXPECT_EQ(frames_per_transfer_asix(4096), 2);
  EXPECT_EQ(frames_per_transfer_asix(8192), 5);
  EXPECT_EQ(frames_per_transfer_asix(16384), 10);
}

TEST(UsbRxAggregator, AsixEndsAsSoonAsNoFrameWaits) {
  UsbRxAggregator agg(asix(16384));
  PacketFactory f;
  agg.post_transfer(Time::zero());
  agg.frame_arrived(f.make(1514), kAsixFull, Time::zero());
  auto xs = drain(agg, at_us(1000));
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_EQ(xs[0].usb_packets, 3u);  // 1518 = 512 + 512 + 494, no hold
  EXPECT_EQ(xs[0].completed, Time::zero() + 3 * kSlot);
}

TEST(UsbRxAggregator, BurstCapEndsTransferWithoutShortPacket) {
  // BURST_CAP 37 × 512 = 18,944 (§4.2 step 3): a transfer that fills it needs no short packet.
  UsbRxAggregator agg(smsc_turbo());
  PacketFactory f;
  for (int i = 0; i < 37; ++i) {
    agg.frame_arrived(f.make(502), 512, Time::zero());
  }
  agg.frame_arrived(f.make(502), 512, Time::zero());  // 38th: next transfer
  agg.post_transfer(Time::zero());
  auto xs = drain(agg, at_us(10'000));
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_EQ(xs[0].frames.size(), 37u);
  EXPECT_EQ(xs[0].bytes, 18'944u);
  EXPECT_EQ(xs[0].usb_packets, 37u);
  EXPECT_EQ(agg.stats().cap_ends, 1u);
  EXPECT_EQ(agg.fifo_frames(), 1u);
}

TEST(UsbRxAggregator, FifoOverflowDropsAndPause) {
  // §10: device FIFO overflow when the host does not poll; PAUSE above the high watermark.
  UsbRxAggregator::Params p = smsc_turbo();
  p.fifo_bytes = 20 * 1024;
  p.pause_high_bytes = 15'872;
  p.pause_low_bytes = 3'072;
  UsbRxAggregator agg(p);
  testing::RecordingObserver obs;
  agg.set_observer(&obs);
  PacketFactory f;
  int accepted = 0;
  for (int i = 0; i < 20; ++i) {
    accepted += agg.frame_arrived(f.make(1514), kSmscFull, at_us(i * 122)) ? 1 : 0;
  }
  EXPECT_EQ(accepted, 13);  // 13 × 1524 = 19,812 <= 20,480 < 14 × 1524
  EXPECT_EQ(agg.stats().fifo_drops, 7u);
  EXPECT_EQ(obs.count(testing::RecordingObserver::Event::kDrop), 7u);
  EXPECT_TRUE(agg.pause_asserted());
  EXPECT_EQ(agg.stats().pause_on, 1u);
  // The host drains the FIFO: pause is released at the low watermark.
  for (int i = 0; i < 3; ++i) {
    agg.post_transfer(at_us(5'000));
  }
  drain(agg, at_us(100'000));
  EXPECT_FALSE(agg.pause_asserted());
  EXPECT_EQ(agg.fifo_bytes(), 0u);
}

TEST(UsbRxAggregator, RejectsBadParams) {
  UsbRxAggregator::Params p;
  p.burst_cap_bytes = 100;
  EXPECT_THROW(UsbRxAggregator{p}, InvalidParams);
  p = {};
  p.packets_per_microframe = 0;
  EXPECT_THROW(UsbRxAggregator{p}, InvalidParams);
  p = {};
  p.hold_time = -(1_us);
  EXPECT_THROW(UsbRxAggregator{p}, InvalidParams);
  p = {};
  p.pause_high_bytes = 1000;
  p.pause_low_bytes = 2000;
  auto err = p.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->key, "pause_high");
}

TEST(UsbRxAggregator, RandomTrafficConservesFramesInOrder) {
  // Every frame is delivered once, in arrival order, or dropped; transfers never exceed the cap
  // and never end later than the hold time after their last frame could have been sent.
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    UsbRxAggregator::Params p = (seed % 3 == 0) ? smsc_no_turbo()
                                : (seed % 3 == 1) ? smsc_turbo()
                                                  : asix(4096 << (seed % 3));
    p.fifo_bytes = 16 * 1024;
    UsbRxAggregator agg(p);
    PacketFactory f;
    Time now = Time::zero();
    uint64_t next_expected = 1;
    uint64_t out = 0;
    int outstanding_target = 1 + static_cast<int>(seed % 4);
    for (int i = 0; i < 3000; ++i) {
      now += Duration::ns(static_cast<int64_t>(rng() % 200'000));
      while (auto x = agg.pop_completed(now)) {
        ASSERT_LE(x->bytes, static_cast<uint64_t>(p.burst_cap_bytes));
        for (const Packet& fr : x->frames) {
          ASSERT_GE(fr.id, next_expected) << "reordered, seed " << seed;
          next_expected = fr.id + 1;
          ++out;
        }
      }
      while (static_cast<int>(agg.posted_transfers()) < outstanding_target) {
        agg.post_transfer(now);
      }
      const uint32_t len = 60 + static_cast<uint32_t>(rng() % 1455);
      agg.frame_arrived(f.make(len), len + 10, now);
    }
    const auto& s = agg.stats();
    ASSERT_EQ(s.frames_out, out);
    uint64_t in_transfer = 0;
    // Finish: keep posting until everything is out.
    for (int guard = 0; guard < 100'000 && s.frames_out + s.fifo_drops < s.frames_in; ++guard) {
      agg.post_transfer(now);
      auto t = agg.next_ready();
      ASSERT_TRUE(t.has_value());
      now = max(now, *t);
      while (auto x = agg.pop_completed(now)) {
        in_transfer += x->frames.size();
      }
    }
    EXPECT_EQ(s.frames_in, s.frames_out + s.fifo_drops) << "seed " << seed;
    // Every frame counted out was handed over in a completed transfer, once.
    EXPECT_EQ(s.frames_out, out + in_transfer) << "seed " << seed;
    EXPECT_EQ(s.transfers, s.short_packets + s.zlps + s.cap_ends);
  }
}

}  // namespace
}  // namespace nicsim::algo
