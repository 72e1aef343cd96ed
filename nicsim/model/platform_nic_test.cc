// PlatformNic: qdisc → TX ring + BQL + doorbell → wire; RX ring + coalescing + NAPI (issue 3).
// Two NICs back to back over two Wires, driven by a tiny event loop on a manual clock.
#include "nicsim/model/platform_nic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "nicsim/algo/codel.h"
#include "nicsim/algo/fifo.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/algo/tbf.h"
#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/recording_observer.h"

namespace nicsim::model {
namespace {

using testing::PacketFactory;

Time at_ns(int64_t ns) { return Time::zero() + Duration::ns(ns); }

// Round numbers so that times can be worked out by hand.
CpuCosts test_costs() {
  return CpuCosts{.per_interrupt = 2_us,
                  .per_poll = 1_us,
                  .per_rx_frame = 3_us,
                  .per_tx_frame = 1_us,
                  .per_tx_clean = 200_ns,
                  .per_gso_segment = 500_ns,
                  .per_usb_transfer = Duration::zero(),
                  .per_kick = 100_ns};
}
CpuCosts zero_costs() { return CpuCosts{}; }

AnyQueue pfifo(int64_t limit = 1000) {
  return AnyQueue(algo::PfifoFast(algo::PfifoFast::Params{.limit = limit}));
}

struct Sink final : NicSink {
  struct Delivery {
    uint64_t id;
    uint32_t len;
    Time at;
    Time wire_start;
  };
  void deliver(Packet&& f, Time now) override {
    delivered.push_back({f.id, f.len, now, f.stamp_at(Stage::kWireStart)});
  }
  void tx_released(const TxRelease& r, Time now) override {
    releases.push_back(r);
    release_times.push_back(now);
    if (on_release) {
      on_release(r, now);
    }
  }
  std::vector<Delivery> delivered;
  std::vector<TxRelease> releases;
  std::vector<Time> release_times;
  std::function<void(const TxRelease&, Time)> on_release;
};

// Host A and host B, each with a CPU and a PlatformNic, joined by two 1 Gbit/s wires.
struct Link {
  Link(const PlatformNic::Params& pa, const PlatformNic::Params& pb, const CpuCosts& ca,
       const CpuCosts& cb, AnyQueue qa = pfifo(), AnyQueue qb = pfifo(),
       Wire::Params wire = Wire::Params{.rate = Rate::gbit(1)})
      : ab(wire), ba(wire), a(pa, std::move(qa), ca), b(pb, std::move(qb), cb) {
    a.attach(&ab, &ba, &cpu_a, &sink_a);
    b.attach(&ba, &ab, &cpu_b, &sink_b);
  }
  std::optional<Time> next() const {
    std::optional<Time> ta = a.next_event();
    std::optional<Time> tb = b.next_event();
    if (!ta) {
      return tb;
    }
    if (!tb) {
      return ta;
    }
    return min(*ta, *tb);
  }
  // Runs every event up to and including `end`; `after` runs after each event time.
  void run_until(Time end, const std::function<void(Time)>& after = {}) {
    for (;;) {
      std::optional<Time> t = next();
      if (!t || *t > end) {
        break;
      }
      now = max(now, *t);
      a.advance(now);
      b.advance(now);
      if (after) {
        after(now);
      }
    }
    now = max(now, end);
  }
  // Runs until `pred` holds (checked after each event time) or nothing is left to do.
  bool run_while_not(const std::function<bool()>& pred, Time limit) {
    for (;;) {
      if (pred()) {
        return true;
      }
      std::optional<Time> t = next();
      if (!t || *t > limit) {
        return pred();
      }
      now = max(now, *t);
      a.advance(now);
      b.advance(now);
    }
  }
  Wire ab;
  Wire ba;
  Cpu cpu_a;
  Cpu cpu_b;
  Sink sink_a;
  Sink sink_b;
  PlatformNic a;
  PlatformNic b;
  Time now;
};

// Conservation identities of one NIC (PlatformNic::Stats comment).
void expect_identities(const PlatformNic& n, const Wire& out) {
  const PlatformNic::Stats& s = n.stats();
  const QueueStats& q = n.qdisc().stats();
  EXPECT_EQ(s.sent_packets, s.bypassed_packets + q.enqueued_packets);
  EXPECT_EQ(s.sent_bytes, q.dropped_bytes + n.qdisc().backlog_bytes() + n.requeued_bytes() +
                              n.tx_unsent_bytes() + s.tx_bytes)
      << "every byte sent is dropped by the qdisc, queued, in the ring or on the wire";
  EXPECT_EQ(s.rx_arrived, s.rx_delivered + s.rx_missed + n.rx_ring_frames());
  EXPECT_EQ(s.tx_frames, out.stats().frames);
  EXPECT_EQ(s.tx_bytes, out.stats().bytes);
  EXPECT_LE(s.tx_cleaned, s.tx_completions);
  EXPECT_EQ(n.doorbell().stats().packets, s.xmits);
  EXPECT_EQ(n.doorbell().stats().kicks, s.kicks);
}

Packet gso_packet(PacketFactory& f, uint16_t segs, uint32_t seg_len = 1514) {
  Packet p = f.make(segs * seg_len);
  p.gso_segs = segs;
  p.gso_size = static_cast<uint16_t>(seg_len);  // frame bytes per full segment (core/gso.h)
  return p;
}

// ---------------------------------------------------------------------------------------------

TEST(TxCompletionNames, RoundTrip) {
  for (TxCompletion m :
       {TxCompletion::kIrq, TxCompletion::kStmmac2014, TxCompletion::kStmmacModern}) {
    EXPECT_EQ(tx_completion_from_string(to_string(m)), m);
  }
  EXPECT_EQ(std::string(to_string(TxCompletion::kStmmac2014)), "stmmac_2014");
  EXPECT_FALSE(tx_completion_from_string("napi"));
}

TEST(GsoSegmentLen, CeilThenRemainder) {
  EXPECT_EQ(gso_segment_len(4542, 3, 0, 0), 1514u);  // 3 x 1514
  EXPECT_EQ(gso_segment_len(4542, 3, 0, 2), 1514u);
  EXPECT_EQ(gso_segment_len(3182, 3, 0, 0), 1061u);  // near-equal: 1061, 1061, 1060
  EXPECT_EQ(gso_segment_len(3182, 3, 0, 2), 1060u);
  EXPECT_EQ(gso_segment_len(9, 4, 0, 0), 3u);
  EXPECT_EQ(gso_segment_len(9, 4, 0, 3), 2u);
  // With the sender's segment size: full segments then the rest (a short last segment).
  EXPECT_EQ(gso_segment_len(3128, 3, 1514, 0), 1514u);
  EXPECT_EQ(gso_segment_len(3128, 3, 1514, 2), 100u);
  // A segment size that cannot fit falls back to the near-equal split.
  EXPECT_EQ(gso_segment_len(3000, 3, 1514, 0), 1000u);
}

// §3.2 + §3.3: with BQL the qdisc hands a bulk-dequeued list to the driver with xmit_more on
// all but the last packet, and the driver (uses_xmit_more) rings the doorbell once for it.
TEST(PlatformNic, BulkDequeueWithXmitMoreRingsTheDoorbellOnce) {
  PlatformNic::Params p;
  p.doorbell.dql.min_limit = 100'000;  // a limit large enough for the whole burst
  Link l(p, p, test_costs(), test_costs());
  PacketFactory f;
  // p0 bypasses the empty qdisc; BQL's adj_limit is still 0, so STACK_XOFF stops the queue
  // after it (docs/mechanisms §2.3: the packet that crosses the limit is accepted).
  l.a.send(f.make(1514), Time::zero());
  EXPECT_TRUE(l.a.doorbell().stack_stopped());
  EXPECT_EQ(l.a.stats().bypassed_packets, 1u);
  for (int i = 0; i < 10; ++i) {
    l.a.send(f.make(1514), Time::zero());
  }
  EXPECT_EQ(l.a.qdisc().backlog_packets(), 10u);  // nothing dequeued while stopped
  EXPECT_EQ(l.a.stats().kicks, 1u);
  // p0 is on the wire from 2.1 µs (1 µs xmit + 0.1 µs kick + 1 µs doorbell latency) to
  // 14.404 µs; TX IRQ, NAPI: 2 µs + 1 µs + 0.2 µs clean → BQL completion at 17.604 µs, avail =
  // 100,000 ≥ 0 clears STACK_XOFF and the qdisc runs: one dequeue + 9 bulk (bytelimit =
  // 100,000 − 1514 never reaches 0), one doorbell for the list.
  l.run_until(at_ns(17'603));
  EXPECT_EQ(l.a.stats().kicks, 1u);
  l.run_until(at_ns(17'604));
  EXPECT_EQ(l.a.stats().bql_wakes, 1u);
  EXPECT_EQ(l.a.stats().bulk_dequeues, 1u);
  EXPECT_EQ(l.a.stats().bulk_extra_packets, 9u);
  EXPECT_EQ(l.a.stats().xmits, 11u);
  EXPECT_EQ(l.a.stats().xmit_more, 9u);
  EXPECT_EQ(l.a.stats().kicks, 2u);
  EXPECT_EQ(l.a.stats().batched_kicks, 1u);
  EXPECT_EQ(l.a.stats().largest_kick_batch, 10u);
  l.run_until(at_ns(10'000'000));
  EXPECT_EQ(l.sink_b.delivered.size(), 11u);
  expect_identities(l.a, l.ab);
}

// §3.1 (a) + §3.3: a TSO-less NIC receives a GSO packet's segments as one list: one doorbell.
TEST(PlatformNic, SoftwareGsoListRingsTheDoorbellOnce) {
  PlatformNic::Params p;  // BQL on, uses_xmit_more, tso off
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  l.a.send(gso_packet(f, 10), Time::zero());
  EXPECT_EQ(l.a.stats().gso_segmented, 1u);
  EXPECT_EQ(l.a.stats().gso_segments, 10u);
  EXPECT_EQ(l.a.stats().xmits, 10u);
  EXPECT_EQ(l.a.stats().xmit_more, 9u);
  EXPECT_EQ(l.a.stats().kicks, 1u);
  EXPECT_EQ(l.a.tx_ring_entries(), 10u);
  // BQL decides only at the batch's last packet (§3.3): the list was not cut.
  EXPECT_EQ(l.a.requeued_packets(), 0u);
  EXPECT_TRUE(l.a.doorbell().stack_stopped());
  l.run_until(at_ns(1'000'000));
  EXPECT_EQ(l.sink_b.delivered.size(), 10u);
  expect_identities(l.a, l.ab);
}

// §3.4: stmmac writes its tail pointer for every packet, xmit_more or not.
TEST(PlatformNic, WithoutXmitMoreEveryPacketRingsTheDoorbell) {
  PlatformNic::Params p;
  p.doorbell.bql = false;
  p.doorbell.uses_xmit_more = false;
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  l.a.send(gso_packet(f, 10), Time::zero());
  EXPECT_EQ(l.a.stats().xmits, 10u);
  EXPECT_EQ(l.a.stats().xmit_more, 9u);  // the stack still says "more"
  EXPECT_EQ(l.a.stats().kicks, 10u);
  EXPECT_EQ(l.a.stats().batched_kicks, 0u);

  // The bulk-dequeue scenario of the first test: 11 packets, 11 doorbells.
  PlatformNic::Params q;
  q.doorbell.dql.min_limit = 100'000;
  q.doorbell.uses_xmit_more = false;
  Link m(q, q, test_costs(), test_costs());
  for (int i = 0; i < 11; ++i) {
    m.a.send(f.make(1514), Time::zero());
  }
  m.run_until(at_ns(10'000'000));
  EXPECT_EQ(m.a.stats().bulk_dequeues, 1u);
  EXPECT_EQ(m.a.stats().kicks, 11u);
  EXPECT_EQ(m.sink_b.delivered.size(), 11u);
}

// §2.6: the driver stops the queue when free descriptors <= tx_stop_free after a post; the
// qdisc dequeues nothing while stopped; TX clean wakes it when free > tx_wake_free.
TEST(PlatformNic, FullRingStopsTheQdiscAndTheWakeThresholdRestartsIt) {
  PlatformNic::Params p;
  p.tx_ring_size = 32;
  p.tx_stop_free = 4;
  p.tx_wake_free = 8;
  p.doorbell.bql = false;
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  for (int i = 0; i < 40; ++i) {
    l.a.send(f.make(1514), Time::zero());
  }
  // 28 posts leave 4 free: stopped. The other 12 wait in the qdisc.
  EXPECT_EQ(l.a.stats().bypassed_packets, 28u);
  EXPECT_EQ(l.a.tx_ring_entries(), 28u);
  EXPECT_EQ(l.a.tx_free_descs(), 4);
  EXPECT_TRUE(l.a.doorbell().driver_stopped());
  EXPECT_EQ(l.a.stats().ring_stops, 1u);
  EXPECT_EQ(l.a.qdisc().backlog_packets(), 12u);
  EXPECT_EQ(l.a.qdisc().stats().dequeued_packets, 0u);
  // Frames complete one by one (12.304 µs apart at 1 Gbit/s); with no coalescing and zero
  // CPU costs each is cleaned alone: free 5, 6, 7, 8 — still stopped — then 9 > 8 wakes.
  ASSERT_TRUE(l.run_while_not([&] { return l.a.stats().tx_cleaned == 4; }, at_ns(1'000'000)));
  EXPECT_EQ(l.a.stats().ring_wakes, 0u);
  EXPECT_EQ(l.a.qdisc().stats().dequeued_packets, 0u);
  ASSERT_TRUE(l.run_while_not([&] { return l.a.stats().ring_wakes == 1; }, at_ns(1'000'000)));
  EXPECT_EQ(l.a.stats().tx_cleaned, 5u);
  // The wake ran the qdisc: 5 posts bring free from 9 back to 4, stopped again.
  EXPECT_EQ(l.a.qdisc().stats().dequeued_packets, 5u);
  EXPECT_EQ(l.a.qdisc().backlog_packets(), 7u);
  EXPECT_EQ(l.a.stats().ring_stops, 2u);
  EXPECT_EQ(l.a.tx_free_descs(), 4);
  l.run_until(at_ns(10'000'000));
  EXPECT_EQ(l.a.stats().ring_wakes, 3u);  // 5 + 5 + 2
  EXPECT_EQ(l.a.stats().ring_stops, 3u);
  EXPECT_EQ(l.sink_b.delivered.size(), 40u);
  for (size_t i = 0; i < l.sink_b.delivered.size(); ++i) {
    EXPECT_EQ(l.sink_b.delivered[i].id, i + 1);  // in order
  }
  expect_identities(l.a, l.ab);
}

// Saturating TX-only load with TX interrupts every `tx_usecs` (tx-frames 0): returns the BQL
// limit after 2.5 s and the mean bytes per TX clean pass.
struct BqlRun {
  uint64_t limit;
  uint64_t high_water;
  double bytes_per_clean;
};
BqlRun run_saturated_bql(Duration tx_usecs) {
  PlatformNic::Params p;
  p.tx_ring_size = 4096;
  p.tx_wake_free = 1024;
  p.tx_coalesce = {.usecs = tx_usecs, .frames = 0};
  Link l(p, p, test_costs(), test_costs());
  PacketFactory f;
  auto top_up = [&](Time now) {
    while (l.a.qdisc().backlog_packets() < 64) {
      l.a.send(f.make(1514), now);
    }
  };
  top_up(Time::zero());
  l.run_until(at_ns(2'500'000'000), top_up);
  expect_identities(l.a, l.ab);
  const auto& s = l.a.stats();
  return {l.a.queue_sample().bql_limit, s.bql_limit_high_water,
          1514.0 * static_cast<double>(s.tx_cleaned) / static_cast<double>(s.tx_clean_passes)};
}

// §2.5 consequences + §7.1: under saturation the BQL limit converges to about the bytes the
// device completes per completion interval, so a coarser TX coalescing timer inflates it.
// The interval is tx-usecs from the first completion after the previous interrupt (on average
// half a frame time, 6.152 µs, after it) plus 3.2 µs of IRQ, poll and clean. DQL grows the limit
// whenever the ring ran dry (step 6), so it ends at least one interval's worth; it shrinks only
// by the slack limit − 2 × completed (step 7), so up to two intervals' worth is stable.
TEST(PlatformNic, BqlLimitTracksTheTxCompletionInterval) {
  auto interval_bytes = [](Duration tx_usecs) {
    return 1e9 / 8 * (tx_usecs + 3'200_ns + 6'152_ns).to_seconds();
  };
  const BqlRun fine = run_saturated_bql(100_us);
  const double fine_interval = interval_bytes(100_us);  // 13.7 kB: 9 frames
  EXPECT_NEAR(fine.bytes_per_clean, fine_interval, 0.05 * fine_interval);
  EXPECT_GE(static_cast<double>(fine.limit), fine_interval);
  EXPECT_LE(static_cast<double>(fine.limit), 2.25 * fine_interval);

  const BqlRun coarse = run_saturated_bql(400_us);
  const double coarse_interval = interval_bytes(400_us);  // 51.2 kB: 34 frames
  EXPECT_NEAR(coarse.bytes_per_clean, coarse_interval, 0.05 * coarse_interval);
  EXPECT_GE(static_cast<double>(coarse.limit), coarse_interval);
  EXPECT_LE(static_cast<double>(coarse.limit), 2.25 * coarse_interval);
  EXPECT_GT(coarse.limit, 3 * fine.limit);
  EXPECT_GE(coarse.high_water, coarse.limit);
}

// §3.1 (a): without TSO the stack segments a GSO packet: one descriptor, one ndo_start_xmit
// and one socket release per segment. With TSO the NIC takes the packet whole and segments
// it on the wire; the socket gets its bytes back in one release.
TEST(PlatformNic, GsoWithoutTsoUsesOneDescriptorPerSegmentTsoTakesThePacketWhole) {
  PacketFactory f;
  {
    PlatformNic::Params p;
    Link l(p, p, test_costs(), test_costs());
    l.a.send(gso_packet(f, 3), Time::zero());  // id 1, 4542 bytes
    EXPECT_EQ(l.a.tx_ring_entries(), 3u);
    EXPECT_EQ(l.a.tx_free_descs(), 256 - 3);
    EXPECT_EQ(l.a.stats().xmits, 3u);
    // Per-segment CPU: 3 × (1 µs xmit + 0.5 µs segment) + 0.1 µs kick.
    EXPECT_EQ(l.cpu_a.busy_until(), at_ns(4'600));
    l.run_until(at_ns(1'000'000));
    ASSERT_EQ(l.sink_a.releases.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(l.sink_a.releases[i].packet_id, 1u);
      EXPECT_EQ(l.sink_a.releases[i].bytes, 1514u);
      EXPECT_EQ(l.sink_a.releases[i].last_segment, i == 2);
    }
    EXPECT_EQ(l.a.stats().tx_frames, 3u);
    ASSERT_EQ(l.sink_b.delivered.size(), 3u);
    EXPECT_EQ(l.sink_b.delivered[2].len, 1514u);
    expect_identities(l.a, l.ab);
  }
  {
    PlatformNic::Params p;
    p.tso = true;
    Link l(p, p, test_costs(), test_costs());
    l.a.send(gso_packet(f, 3), Time::zero());  // id 2
    EXPECT_EQ(l.a.tx_ring_entries(), 1u);
    EXPECT_EQ(l.a.tx_free_descs(), 255);
    EXPECT_EQ(l.a.stats().xmits, 1u);
    EXPECT_EQ(l.a.stats().gso_segmented, 0u);
    EXPECT_EQ(l.cpu_a.busy_until(), at_ns(1'100));
    // Three back-to-back frames on the wire from 2.1 µs; the descriptor completes at the last
    // bit of the third: 2.1 + 3 × 12.304 µs.
    l.run_until(at_ns(1'000'000));
    EXPECT_EQ(l.a.stats().tx_frames, 3u);
    EXPECT_EQ(l.a.stats().tx_completions, 1u);
    ASSERT_EQ(l.sink_a.releases.size(), 1u);
    EXPECT_EQ(l.sink_a.releases[0].packet_id, 2u);
    EXPECT_EQ(l.sink_a.releases[0].bytes, 4542u);
    EXPECT_TRUE(l.sink_a.releases[0].last_segment);
    // Released after IRQ (2 µs), poll (1 µs) and clean (0.2 µs).
    EXPECT_EQ(l.sink_a.release_times[0], at_ns(2'100 + 3 * 12'304 + 3'200));
    ASSERT_EQ(l.sink_b.delivered.size(), 3u);
    EXPECT_EQ(l.sink_b.delivered[1].wire_start, at_ns(2'100 + 12'304));
    expect_identities(l.a, l.ab);
  }
}

// §7.2 + §11: a CPU too slow for the packet rate lets the RX ring overflow; frames that find
// no free descriptor are dropped and counted. The same burst on a fast CPU loses nothing.
TEST(PlatformNic, SlowCpuOverflowsTheRxRingFastCpuDoesNot) {
  auto run = [](Duration per_rx_frame) {
    PlatformNic::Params p;
    CpuCosts slow = test_costs();
    slow.per_rx_frame = per_rx_frame;
    Link l(p, p, test_costs(), slow);
    testing::RecordingObserver obs;
    l.b.set_observer(&obs);
    PacketFactory f;
    for (int i = 0; i < 1000; ++i) {
      l.a.send(f.make(1514), Time::zero());
    }
    l.run_until(at_ns(5'000'000'000));
    const auto& s = l.b.stats();
    EXPECT_EQ(s.rx_arrived, 1000u);
    EXPECT_EQ(s.rx_arrived, s.rx_delivered + s.rx_missed);
    EXPECT_EQ(l.b.counters().rx_drops, s.rx_missed);
    EXPECT_EQ(obs.count(testing::RecordingObserver::Event::kDrop), s.rx_missed);
    EXPECT_EQ(l.sink_b.delivered.size(), s.rx_delivered);
    expect_identities(l.a, l.ab);
    expect_identities(l.b, l.ba);
    return s;
  };
  const PlatformNic::Stats slow = run(1_ms);
  // Arrivals every 12.304 µs fill the 256 descriptors in ~3.2 ms while the CPU frees one per
  // ms: a handful get through, ~740 are lost.
  EXPECT_GT(slow.rx_missed, 700u);
  EXPECT_LE(slow.max_rx_ring, 256u);
  const PlatformNic::Stats fast = run(100_ns);
  EXPECT_EQ(fast.rx_missed, 0u);
  EXPECT_EQ(fast.rx_delivered, 1000u);
}

// §7.1: an isolated packet waits rx-usecs before the CPU sees it; delivery follows after the
// interrupt, the poll and the frame's own processing.
TEST(PlatformNic, RxUsecsDelaysAnIsolatedFrameByExactlyRxUsecsPlusCpuCosts) {
  PlatformNic::Params p;
  PlatformNic::Params pb = p;
  pb.rx_coalesce = {.usecs = 50_us, .frames = 0};
  CpuCosts cb = test_costs();
  cb.copy_ps_per_byte = 500;  // 1514 B × 0.5 ns = 757 ns
  Link l(p, pb, test_costs(), cb);
  PacketFactory f;
  l.a.send(f.make(1514), Time::zero());
  l.run_until(at_ns(1'000'000));
  ASSERT_EQ(l.sink_b.delivered.size(), 1u);
  // Last bit at 2.1 + 12.304 = 14.404 µs; + rx-usecs 50 µs; + IRQ 2 µs + poll 1 µs + frame
  // 3 µs + copy 0.757 µs.
  const Time arrival = at_ns(14'404);
  EXPECT_EQ(l.sink_b.delivered[0].at, arrival + 50_us + 2_us + 1_us + 3_us + 757_ns);

  // Without coalescing the same frame is delivered 50 µs earlier.
  Link m(p, p, test_costs(), cb);
  m.a.send(f.make(1514), Time::zero());
  m.run_until(at_ns(1'000'000));
  ASSERT_EQ(m.sink_b.delivered.size(), 1u);
  EXPECT_EQ(m.sink_b.delivered[0].at, arrival + 6_us + 757_ns);
}

// §7.2: a poll processes at most napi_budget (64) frames; a larger burst needs more polls,
// without new interrupts in between.
TEST(PlatformNic, NapiBudgetSplitsABurstIntoSeveralPolls) {
  PlatformNic::Params p;
  PlatformNic::Params pb = p;
  pb.rx_coalesce = {.usecs = 10_ms, .frames = 0};  // the whole burst is in the ring first
  Link l(p, pb, zero_costs(), test_costs());
  PacketFactory f;
  for (int i = 0; i < 150; ++i) {
    l.a.send(f.make(1514), Time::zero());
  }
  l.run_until(at_ns(100'000'000));
  const auto& s = l.b.stats();
  EXPECT_EQ(s.rx_delivered, 150u);
  EXPECT_EQ(s.rx_irqs, 1u);
  EXPECT_EQ(s.polls, 3u);  // 64 + 64 + 22
  EXPECT_EQ(s.budget_exhausted, 2u);
  EXPECT_EQ(s.max_rx_ring, 150u);
  // First frame: last bit at 1 µs + 12.304 µs (zero costs on A); IRQ 10 ms later; 2 µs IRQ,
  // 1 µs poll, 3 µs frame. Each re-poll adds another per_poll (1 µs).
  const Time irq = at_ns(13'304) + 10_ms;
  EXPECT_EQ(l.sink_b.delivered[0].at, irq + 6_us);
  EXPECT_EQ(l.sink_b.delivered[63].at, irq + 3_us + 64 * 3_us);
  EXPECT_EQ(l.sink_b.delivered[64].at, irq + 3_us + 64 * 3_us + 1_us + 3_us);
  EXPECT_EQ(l.sink_b.delivered[149].at, irq + 3_us + 150 * 3_us + 2 * 1_us);
}

// Event-driven DMA engine: a PAUSE (§10) holds the next frame even if it is extended after
// the frame became visible to the hardware.
TEST(PlatformNic, PauseHoldsTheTxEngine) {
  PlatformNic::Params p;
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  l.a.send(f.make(1514), Time::zero());  // on the wire 1 µs .. 13.304 µs
  l.run_until(at_ns(5'000));
  l.ab.pause_until(at_ns(100'000));
  l.a.send(f.make(1514), at_ns(5'000));  // visible at 6 µs, waits for the pause
  l.run_until(at_ns(50'000));
  EXPECT_EQ(l.a.stats().tx_frames, 1u);
  l.ab.pause_until(at_ns(200'000));  // extended while the engine waits
  l.run_until(at_ns(1'000'000));
  ASSERT_EQ(l.sink_b.delivered.size(), 2u);
  EXPECT_EQ(l.sink_b.delivered[1].wire_start, at_ns(200'000));
}

// §7.3, 2014 stmmac: IC on every 64th frame; below that the 40 ms timer is pushed out by every
// xmit, so the tail of a burst is cleaned only 40 ms after the last transmit.
TEST(PlatformNic, Stmmac2014SetsIcEvery64FramesAndCleansTheRestOnTheTimer) {
  PlatformNic::Params p;
  p.tx_completion = TxCompletion::kStmmac2014;
  p.doorbell.bql = false;
  p.doorbell.uses_xmit_more = false;
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  for (int i = 0; i < 100; ++i) {
    l.a.send(f.make(1514), Time::zero());
  }
  EXPECT_EQ(l.a.stats().ic_descriptors, 1u);
  // Frame 64 (IC) completes at 1 µs + 64 × 12.304 µs: the interrupt cleans all 64.
  const Time ic_done = at_ns(1'000 + 64 * 12'304);
  l.run_until(ic_done);
  EXPECT_EQ(l.a.stats().tx_irqs, 1u);
  EXPECT_EQ(l.a.stats().tx_cleaned, 64u);
  EXPECT_EQ(l.sink_a.release_times[63], ic_done);
  l.run_until(at_ns(39'999'999));
  EXPECT_EQ(l.a.stats().tx_cleaned, 64u);  // frames 65..100 are done but not cleaned
  EXPECT_EQ(l.a.stats().tx_completions, 100u);
  l.run_until(at_ns(40'000'000));
  EXPECT_EQ(l.a.stats().tx_timer_fires, 1u);
  EXPECT_EQ(l.a.stats().tx_cleaned, 100u);
  EXPECT_EQ(l.sink_a.release_times[99], at_ns(40'000'000));

  // A transmit at 30 ms pushes the timer out to 70 ms.
  l.a.send(f.make(1514), at_ns(40'000'000));
  l.run_until(at_ns(79'999'999));
  EXPECT_EQ(l.a.stats().tx_cleaned, 100u);
  l.run_until(at_ns(80'000'000));
  EXPECT_EQ(l.a.stats().tx_cleaned, 101u);
}

// §7.3, 2014 stmmac: one NAPI for RX and TX, so an RX interrupt (an incoming ACK) cleans the
// TX ring long before the 40 ms timer.
TEST(PlatformNic, RxInterruptCleansTxWhenCleanTxInRxPoll) {
  PlatformNic::Params p;
  p.tx_completion = TxCompletion::kStmmac2014;
  p.clean_tx_in_rx_poll = true;
  p.doorbell.bql = false;
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  for (int i = 0; i < 10; ++i) {
    l.a.send(f.make(1514), Time::zero());
  }
  l.run_until(at_ns(1'000'000));
  EXPECT_EQ(l.a.stats().tx_cleaned, 0u);
  l.b.send(f.make(66), at_ns(1'000'000));  // the "ACK": 1 µs doorbell + 90 B at 1 Gbit/s
  l.run_until(at_ns(2'000'000));
  EXPECT_EQ(l.a.stats().rx_irqs, 1u);
  EXPECT_EQ(l.a.stats().tx_cleaned, 10u);
  ASSERT_EQ(l.sink_a.release_times.size(), 10u);
  EXPECT_EQ(l.sink_a.release_times[9], at_ns(1'000'000 + 1'000 + 720));

  // With separate NAPI contexts the ACK does not clean TX.
  p.clean_tx_in_rx_poll = false;
  Link m(p, p, zero_costs(), zero_costs());
  for (int i = 0; i < 10; ++i) {
    m.a.send(f.make(1514), Time::zero());
  }
  m.b.send(f.make(66), at_ns(1'000'000));
  m.run_until(at_ns(2'000'000));
  EXPECT_EQ(m.a.stats().rx_irqs, 1u);
  EXPECT_EQ(m.a.stats().tx_cleaned, 0u);
}

// §7.3, current stmmac: IC when (count mod tx_coal_frames) < descriptors; the hrtimer is armed
// by xmits without IC and again after a TX poll that left descriptors pending.
TEST(PlatformNic, StmmacModernIcRuleAndTimerRearmAfterPoll) {
  PlatformNic::Params p;
  p.tx_completion = TxCompletion::kStmmacModern;
  p.tx_coal_frames = 25;
  p.tx_coal_timer = 1_ms;
  p.clean_tx_in_rx_poll = false;
  p.doorbell.bql = false;
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  for (int i = 0; i < 30; ++i) {
    l.a.send(f.make(1514), Time::zero());
  }
  EXPECT_EQ(l.a.stats().ic_descriptors, 1u);  // the 25th
  // Frame 25 completes at 1 µs + 25 × 12.304 µs: TX NAPI cleans 25; 5 still pending, so the
  // timer is armed for 1 ms later (pushing out the 1 ms timer armed at t = 0).
  const Time ic_done = at_ns(1'000 + 25 * 12'304);
  l.run_until(ic_done);
  EXPECT_EQ(l.a.stats().tx_cleaned, 25u);
  l.run_until(ic_done + 1_ms - 1_ns);
  EXPECT_EQ(l.a.stats().tx_cleaned, 25u);
  EXPECT_EQ(l.a.stats().tx_timer_fires, 0u);
  l.run_until(ic_done + 1_ms);
  EXPECT_EQ(l.a.stats().tx_timer_fires, 1u);
  EXPECT_EQ(l.a.stats().tx_cleaned, 30u);
  EXPECT_EQ(l.sink_a.release_times[29], ic_done + 1_ms);
  // Nothing pending after that poll: no further timer.
  l.run_until(at_ns(100'000'000));
  EXPECT_EQ(l.a.stats().tx_timer_fires, 1u);
}

// §7.1: with tx-frames = 8 and no timer, completions are signalled in groups of 8.
TEST(PlatformNic, TxFramesCoalescesCompletionInterrupts) {
  PlatformNic::Params p;
  p.tx_coalesce = {.usecs = Duration::zero(), .frames = 8};
  p.doorbell.bql = false;
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  for (int i = 0; i < 32; ++i) {
    l.a.send(f.make(1514), Time::zero());
  }
  l.run_until(at_ns(10'000'000));
  EXPECT_EQ(l.a.stats().tx_irqs, 4u);
  EXPECT_EQ(l.a.stats().tx_clean_passes, 4u);
  EXPECT_EQ(l.a.stats().max_tx_clean_batch, 8u);
  EXPECT_EQ(l.a.counters().interrupts, 4u + l.a.stats().rx_irqs);
}

// §2.7, §7.2: __qdisc_run hands over dev_tx_weight packets, then yields; the rest goes in a
// NET_TX softirq run once the CPU is free.
TEST(PlatformNic, QdiscRunYieldsToNetTxAfterDevTxWeight) {
  PlatformNic::Params p;
  p.doorbell.bql = false;
  p.bulk_dequeue = false;
  p.dev_tx_weight = 4;
  p.tx_ring_size = 8;
  p.tx_stop_free = 0;
  p.tx_wake_free = 7;  // wake only when the ring is empty
  Link l(p, p, test_costs(), test_costs());
  PacketFactory f;
  for (int i = 0; i < 20; ++i) {
    l.a.send(f.make(1514), Time::zero());
  }
  EXPECT_EQ(l.a.stats().xmits, 8u);  // 8 bypasses fill the ring
  EXPECT_EQ(l.a.qdisc().backlog_packets(), 12u);
  EXPECT_EQ(l.a.stats().qdisc_reschedules, 0u);
  ASSERT_TRUE(l.run_while_not([&] { return l.a.stats().ring_wakes == 1; }, at_ns(10'000'000)));
  // The wake's run: 4 packets (quota), then a NET_TX run after their 4 × 1.1 µs of CPU.
  EXPECT_EQ(l.a.stats().xmits, 12u);
  EXPECT_EQ(l.a.stats().qdisc_reschedules, 1u);
  EXPECT_EQ(l.a.qdisc().backlog_packets(), 8u);
  const Time woke = l.now;
  l.run_until(woke + 4'399_ns);
  EXPECT_EQ(l.a.stats().xmits, 12u);
  l.run_until(woke + 4'400_ns);
  EXPECT_EQ(l.a.stats().xmits, 16u);  // 4 more fill the ring again
  EXPECT_TRUE(l.a.doorbell().driver_stopped());
  EXPECT_EQ(l.a.qdisc().backlog_packets(), 4u);
  l.run_until(at_ns(10'000'000));
  ASSERT_EQ(l.sink_b.delivered.size(), 20u);
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(l.sink_b.delivered[i].id, i + 1);
  }
  expect_identities(l.a, l.ab);
}

// §9.4, §10: a non-empty qdisc is not bypassed, and with qdisc_bypass off nothing is.
TEST(PlatformNic, BypassOnlyWhenTheQdiscIsEmpty) {
  PlatformNic::Params p;
  p.doorbell.bql = false;
  p.qdisc_bypass = false;
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  l.a.send(f.make(1514), Time::zero());
  EXPECT_EQ(l.a.stats().bypassed_packets, 0u);
  EXPECT_EQ(l.a.qdisc().stats().enqueued_packets, 1u);
  EXPECT_EQ(l.a.qdisc().stats().dequeued_packets, 1u);
  EXPECT_EQ(l.a.stats().xmits, 1u);
}

// A non-work-conserving qdisc (TBF, which does not set TCQ_F_CAN_BYPASS) is run again at its
// next_ready, like the qdisc watchdog: a 10 Mbit/s TBF spaces frames by 1.2112 ms.
TEST(PlatformNic, ThrottledQdiscIsRunAgainAtItsNextReady) {
  PlatformNic::Params p;
  p.qdisc_bypass = false;
  algo::Tbf::Params tbf{.rate = Rate::mbit(10), .burst = 1514, .limit = 100'000};
  Link l(p, p, zero_costs(), zero_costs(), AnyQueue(algo::Tbf(tbf)), pfifo());
  PacketFactory f;
  for (int i = 0; i < 10; ++i) {
    l.a.send(f.make(1514), Time::zero());
  }
  l.run_until(at_ns(100'000'000));
  ASSERT_EQ(l.sink_b.delivered.size(), 10u);
  for (int64_t k = 0; k < 10; ++k) {
    EXPECT_EQ(l.sink_b.delivered[static_cast<size_t>(k)].wire_start, at_ns(1'000 + k * 1'211'200));
  }
  EXPECT_EQ(l.a.stats().qdisc_watchdogs, 9u);
  expect_identities(l.a, l.ab);
}

// Every frame sent is on the wire, dropped, or still queued; every frame that arrived is
// delivered, dropped or in the RX ring — after random seeded two-way traffic with GSO, small
// rings, a short qdisc, slow CPUs and each completion mode.
TEST(PlatformNic, ConservationUnderRandomTraffic) {
  uint64_t fq_codel_drops = 0;
  uint64_t pfifo_drops = 0;
  uint64_t rx_missed = 0;
  uint64_t requeues = 0;
  uint64_t bql_stops = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    PlatformNic::Params p;
    p.tx_ring_size = pick(24, 128);
    p.descs_per_frame = pick(1, 2);
    p.tx_stop_free = pick(p.descs_per_frame, 8);
    p.tx_wake_free = pick(p.tx_stop_free, p.tx_ring_size / 2);
    p.tso = pick(0, 1) == 1;
    p.doorbell.bql = pick(0, 3) != 0;
    p.doorbell.uses_xmit_more = pick(0, 1) == 1;
    p.bulk_dequeue = pick(0, 1) == 1;
    p.qdisc_bypass = pick(0, 1) == 1;
    p.dev_tx_weight = pick(1, 64);
    p.tx_completion = static_cast<TxCompletion>(pick(0, 2));
    p.tx_coalesce = {.usecs = Duration::us(pick(0, 200)), .frames = pick(1, 16)};
    p.tx_coal_frames = pick(1, 64);
    p.tx_coal_timer = Duration::us(pick(100, 5000));
    p.clean_tx_in_rx_poll = pick(0, 1) == 1;
    p.rx_ring_size = pick(16, 256);
    p.rx_coalesce = {.usecs = Duration::us(pick(0, 100)), .frames = pick(0, 8)};
    p.napi_budget = pick(4, 64);
    CpuCosts costs = test_costs();
    costs.per_rx_frame = Duration::ns(pick(100, 30'000));
    costs.copy_ps_per_byte = pick(0, 1000);
    // Odd seeds: fq_codel with a small packet limit (overlimit drops from the fattest flow,
    // CoDel drops at dequeue); even seeds: a short pfifo_fast (tail drops).
    AnyQueue qdisc_a = seed % 2 == 1 ? AnyQueue(algo::FqCodel(algo::FqCodel::Params{
                                           .limit = pick(20, 200), .target = 500_us}))
                                     : pfifo(pick(20, 200));
    Link l(p, p, costs, test_costs(), std::move(qdisc_a), pfifo(1000),
           Wire::Params{.rate = Rate::mbit(static_cast<uint64_t>(pick(100, 1000))),
                        .delay = Duration::us(pick(0, 50))});
    testing::RecordingObserver qdisc_drops;
    l.a.qdisc().set_observer(&qdisc_drops);
    PacketFactory f;
    std::map<uint64_t, uint64_t> sent_bytes;  // id -> bytes, packets A sent
    Time t = Time::zero();
    for (int i = 0; i < 3000; ++i) {
      t += Duration::ns(pick(0, 40'000));
      l.run_until(t);
      Packet pk = f.make(static_cast<uint32_t>(pick(60, 1514)), static_cast<uint32_t>(pick(0, 7)),
                         static_cast<uint8_t>(pick(0, 7)));
      if (pick(0, 9) == 0) {
        pk = gso_packet(f, static_cast<uint16_t>(pick(2, 20)));
      }
      sent_bytes[pk.id] = pk.len;
      if (pick(0, 1) == 0) {
        l.a.send(std::move(pk), t);
      } else {
        l.b.send(std::move(pk), t);  // B's traffic makes A's RX (and TX clean) busy
        sent_bytes.erase(f.last_id());
      }
      if (i % 500 == 0) {
        expect_identities(l.a, l.ab);
        expect_identities(l.b, l.ba);
      }
    }
    l.run_until(t + 10_s);  // drain
    expect_identities(l.a, l.ab);
    expect_identities(l.b, l.ba);
    EXPECT_EQ(l.a.qdisc().backlog_packets(), 0u);
    EXPECT_EQ(l.a.tx_ring_entries(), 0u);
    EXPECT_EQ(l.b.rx_ring_frames(), 0u);
    EXPECT_EQ(l.a.stats().sent_bytes, l.a.qdisc().stats().dropped_bytes + l.a.stats().tx_bytes);
    // By identity: each of A's packets was dropped by the qdisc, or all its bytes reached the
    // wire, and every wire byte was delivered to B or dropped in B's RX ring.
    std::map<uint64_t, uint64_t> delivered;
    for (const auto& d : l.sink_b.delivered) {
      delivered[d.id] += d.len;
    }
    uint64_t missing_bytes = 0;
    for (uint64_t id : qdisc_drops.ids(testing::RecordingObserver::Event::kDrop)) {
      EXPECT_TRUE(sent_bytes.count(id));
      EXPECT_EQ(delivered.count(id), 0u);
      sent_bytes.erase(id);
    }
    for (const auto& [id, bytes] : sent_bytes) {
      EXPECT_LE(delivered[id], bytes);
      missing_bytes += bytes - delivered[id];
    }
    uint64_t b_dropped_bytes = l.ab.stats().bytes - l.b.stats().rx_bytes;
    EXPECT_EQ(missing_bytes, b_dropped_bytes);
    EXPECT_EQ(l.b.stats().rx_arrived, l.ab.stats().frames);
    // Released bytes equal transmitted bytes (BQL and TSQ see every frame exactly once).
    uint64_t released = 0;
    for (const TxRelease& r : l.sink_a.releases) {
      released += r.bytes;
    }
    EXPECT_EQ(released, l.a.stats().tx_bytes);
    if (const algo::Dql* dql = l.a.doorbell().dql()) {
      EXPECT_EQ(dql->inflight(), 0u);
    }
    (seed % 2 == 1 ? fq_codel_drops : pfifo_drops) += l.a.qdisc().stats().dropped_packets;
    rx_missed += l.a.stats().rx_missed + l.b.stats().rx_missed;
    requeues += l.a.stats().requeues;
    bql_stops += l.a.stats().bql_stops;
  }
  // The random runs do exercise the drop, requeue and stop paths.
  EXPECT_GT(fq_codel_drops, 0u);
  EXPECT_GT(pfifo_drops, 0u);
  EXPECT_GT(rx_missed, 0u);
  EXPECT_GT(requeues, 0u);
  EXPECT_GT(bql_stops, 0u);
}

TEST(PlatformNic, CountersSampleAndDescribe) {
  PlatformNic::Params p;
  p.doorbell.bql = false;
  p.tx_ring_size = 32;
  p.tx_stop_free = 4;
  p.tx_wake_free = 8;
  Link l(p, p, zero_costs(), zero_costs());
  PacketFactory f;
  for (int i = 0; i < 40; ++i) {
    l.a.send(f.make(1000), Time::zero());
  }
  const NicQueueSample s = l.a.queue_sample();
  EXPECT_EQ(s.qdisc_packets, 12u);
  EXPECT_EQ(s.qdisc_bytes, 12'000u);
  EXPECT_EQ(s.ring_packets, 28u);
  EXPECT_EQ(s.ring_bytes, 28'000u);
  EXPECT_EQ(s.bql_limit, 0u);
  l.run_until(at_ns(10'000'000));
  const NicCounters c = l.a.counters();
  EXPECT_EQ(c.tx_packets, 40u);
  EXPECT_EQ(c.tx_bytes, 40'000u);
  EXPECT_EQ(c.doorbells, 40u);
  EXPECT_EQ(l.b.counters().rx_packets, 40u);
  EXPECT_EQ(l.b.counters().rx_bytes, 40'000u);
  const std::string d = l.a.describe();
  EXPECT_NE(d.find("tx_ring=32"), std::string::npos) << d;
  EXPECT_NE(d.find("tx_completion=irq"), std::string::npos) << d;
  EXPECT_NE(d.find("bql=off"), std::string::npos) << d;
  PlatformNic::Params q;
  q.tx_completion = TxCompletion::kStmmacModern;
  q.tx_coal_frames = 25;
  q.tx_coal_timer = 5_ms;
  q.rx_coalesce = {.usecs = 327'680_ns, .frames = 0};
  const std::string e = PlatformNic(q, pfifo(), zero_costs()).describe();
  EXPECT_NE(e.find("tx_completion=stmmac_modern(tx_coal_frames=25 tx_coal_timer=5ms)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("rx-usecs=327.68us rx-frames=0"), std::string::npos) << e;
}

// Params::validate names the offending key (scenario-file names).
TEST(PlatformNic, RejectsBadParams) {
  auto key_of = [](const PlatformNic::Params& p) {
    auto e = p.validate();
    return e ? e->key : std::string("<valid>");
  };
  PlatformNic::Params ok;
  EXPECT_EQ(key_of(ok), "<valid>");
  auto with = [&ok](auto change) {
    PlatformNic::Params p = ok;
    change(p);
    return p;
  };
  EXPECT_EQ(key_of(with([](auto& p) { p.tx_ring_size = 0; })), "tx_ring_size");
  EXPECT_EQ(key_of(with([](auto& p) { p.descs_per_frame = 0; })), "descs_per_frame");
  EXPECT_EQ(key_of(with([](auto& p) { p.descs_per_frame = 20; })), "tx_stop_free");
  EXPECT_EQ(key_of(with([](auto& p) { p.tx_stop_free = 256; })), "tx_stop_free");
  EXPECT_EQ(key_of(with([](auto& p) { p.tx_wake_free = 10; })), "tx_wake_free");
  EXPECT_EQ(key_of(with([](auto& p) { p.tx_wake_free = 256; })), "tx_wake_free");
  EXPECT_EQ(key_of(with([](auto& p) { p.doorbell.dql.hold_time = Duration::zero() - 1_ms; })),
            "doorbell.dql.hold_time");
  EXPECT_EQ(key_of(with([](auto& p) { p.doorbell_latency = -(1_us); })), "doorbell_latency");
  EXPECT_EQ(key_of(with([](auto& p) { p.dev_tx_weight = 0; })), "dev_tx_weight");
  EXPECT_EQ(key_of(with([](auto& p) { p.tx_coalesce = {.usecs = Duration::zero(), .frames = 0}; })),
            "tx_coalesce.frames");
  EXPECT_EQ(key_of(with([](auto& p) { p.tx_coal_frames = -1; })), "tx_coal_frames");
  EXPECT_EQ(key_of(with([](auto& p) {
              p.tx_completion = TxCompletion::kStmmac2014;
              p.tx_coal_timer = Duration::zero();
            })),
            "tx_coal_timer");
  EXPECT_EQ(key_of(with([](auto& p) {
              p.tx_completion = TxCompletion::kStmmacModern;
              p.tx_coal_frames = 0;
              p.tx_coal_timer = Duration::zero();
            })),
            "tx_coal_timer");
  EXPECT_EQ(key_of(with([](auto& p) { p.rx_ring_size = -5; })), "rx_ring_size");
  EXPECT_EQ(key_of(with([](auto& p) { p.rx_coalesce.usecs = -(1_us); })), "rx_coalesce.usecs");
  EXPECT_EQ(key_of(with([](auto& p) { p.napi_budget = 0; })), "napi_budget");

  PlatformNic::Params bad = ok;
  bad.napi_budget = 0;
  try {
    PlatformNic nic(bad, pfifo(), zero_costs());
    FAIL() << "expected InvalidParams";
  } catch (const InvalidParams& e) {
    EXPECT_EQ(e.error().key, "napi_budget");
  }
  CpuCosts bad_costs;
  bad_costs.per_poll = -(1_us);
  EXPECT_THROW(PlatformNic(ok, pfifo(), bad_costs), InvalidParams);
  EXPECT_THROW(PlatformNic(ok, AnyQueue(), zero_costs()), InvalidParams);
}

// Works with any qdisc: an AQM (CoDel) drops at dequeue inside the NIC's qdisc run and the
// identities still hold.
TEST(PlatformNic, WorksWithCodelAndFifo) {
  PlatformNic::Params p;
  p.tx_ring_size = 64;
  p.tx_wake_free = 32;
  Wire::Params slow{.rate = Rate::mbit(10)};
  Link l(p, p, test_costs(), test_costs(), AnyQueue(algo::Codel(algo::Codel::Params{})),
         AnyQueue(algo::Fifo()), slow);
  PacketFactory f;
  auto top_up = [&](Time now) {
    while (l.a.qdisc().backlog_packets() < 200) {
      l.a.send(f.make(1514), now);
    }
  };
  top_up(Time::zero());
  l.run_until(at_ns(2'000'000'000), top_up);
  EXPECT_GT(l.a.qdisc().stats().dropped_packets, 0u);
  expect_identities(l.a, l.ab);
}

// ---- GRO (napi_gro_receive in the poll, napi_gro_flush at its end) ----------------------

// A receiving NIC alone: frames are put on its incoming wire by the test; the sink answers
// gro_header from a table and records what reaches the stack, merged packets as groups.
struct GroRx {
  static constexpr uint32_t kMss = 1448;
  static constexpr uint32_t kHeaders = 52;  // IPv4 20 + TCP 20 + timestamps 12

  struct GroSink final : NicSink {
    void deliver(Packet&& f, Time now) override { groups.push_back({{f.id}, now}); }
    void deliver_merged(std::vector<Packet>& frames, Time now) override {
      Group g{{}, now};
      for (const Packet& f : frames) {
        g.ids.push_back(f.id);
      }
      groups.push_back(g);
    }
    void tx_released(const TxRelease&, Time) override {}
    algo::GroHeader gro_header(const Packet& f) const override { return headers.at(f.id); }
    struct Group {
      std::vector<uint64_t> ids;
      Time at;
    };
    std::vector<Group> groups;
    std::map<uint64_t, algo::GroHeader> headers;
  };

  explicit GroRx(bool gro, const CpuCosts& costs = gro_costs(), bool adaptive_rx = false)
      : in(Wire::Params{.rate = Rate::gbit(1)}),
        out(Wire::Params{.rate = Rate::gbit(1)}),
        nic(params(gro, adaptive_rx), pfifo(), costs) {
    nic.attach(&out, &in, &cpu, &sink);
  }
  explicit GroRx(const PlatformNic::Params& p, const CpuCosts& costs = gro_costs())
      : in(Wire::Params{.rate = Rate::gbit(1)}),
        out(Wire::Params{.rate = Rate::gbit(1)}),
        nic(p, pfifo(), costs) {
    nic.attach(&out, &in, &cpu, &sink);
  }
  static PlatformNic::Params params(bool gro, bool adaptive_rx) {
    PlatformNic::Params p;
    p.rx_coalesce = {.usecs = 100_us, .frames = 0};  // a 5-frame burst (60 us) fits one poll
    p.gro = gro;
    p.adaptive_rx = adaptive_rx;
    return p;
  }
  static CpuCosts gro_costs() {
    CpuCosts c = test_costs();
    c.per_rx_packet = 1_us;  // of per_rx_frame's 3 us
    return c;
  }
  // Data segment number n of flow 1 (payload 0: a pure ACK), sent on the wire at `t`.
  void frame(uint64_t n, Time t, uint32_t payload = kMss, uint8_t tos = 0) {
    Packet p;
    p.id = ++next_id;
    p.flow_hash = 7;
    p.tos = tos;
    p.len = 14 + kHeaders + payload;
    algo::GroHeader h;
    h.tcp = true;
    h.flow = 1;
    h.seq = 1 + n * kMss;
    h.ack = 1;
    h.payload = payload;
    h.headers = kHeaders;
    h.flags = algo::kGroAck;
    h.tos = tos;
    sink.headers[p.id] = h;
    in.transmit(std::move(p), t);
  }
  void run_until(Time end) {
    for (;;) {
      std::optional<Time> t = nic.next_event();
      if (!t || *t > end) {
        return;
      }
      nic.advance(*t);
    }
  }
  std::vector<size_t> sizes() const {
    std::vector<size_t> s;
    for (const auto& g : sink.groups) {
      s.push_back(g.ids.size());
    }
    return s;
  }
  Wire in;
  Wire out;
  Cpu cpu;
  GroSink sink;
  PlatformNic nic;
  uint64_t next_id = 0;
};

TEST(PlatformNicGro, MergesWithinAPollNeverAcrossPolls) {
  // Two bursts of five in-order segments, 1 ms apart, one sequence: each burst is one poll, so
  // two packets of five frames — never one of ten (GRO is flushed at napi_complete_done).
  GroRx r(true);
  for (uint64_t n = 0; n < 5; ++n) {
    r.frame(n, at_ns(0));
  }
  for (uint64_t n = 5; n < 10; ++n) {
    r.frame(n, at_ns(1'000'000));
  }
  r.run_until(at_ns(5'000'000));
  EXPECT_EQ(r.sizes(), (std::vector<size_t>{5, 5}));
  EXPECT_EQ(r.sink.groups[0].ids, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_LT(r.sink.groups[0].at, at_ns(1'000'000));  // delivered in the first poll
  const PlatformNic::Stats& s = r.nic.stats();
  EXPECT_EQ(s.polls, 2u);
  EXPECT_EQ(s.rx_delivered, 10u);
  EXPECT_EQ(s.rx_stack_packets, 2u);
  EXPECT_EQ(r.nic.gro().stats().by_poll, 2u);
  EXPECT_EQ(r.nic.gro().holding(), 0u);
}

TEST(PlatformNicGro, OffDeliversEveryFrameAlone) {
  GroRx r(false);
  for (uint64_t n = 0; n < 5; ++n) {
    r.frame(n, at_ns(0));
  }
  r.run_until(at_ns(5'000'000));
  EXPECT_EQ(r.sizes(), (std::vector<size_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(r.nic.stats().rx_stack_packets, 0u);  // not counted without GRO
}

TEST(PlatformNicGro, PureAcksPassAlone) {
  GroRx r(true);
  for (uint64_t n = 0; n < 4; ++n) {
    r.frame(0, at_ns(0), 0);  // pure ACKs (no payload)
  }
  r.run_until(at_ns(5'000'000));
  EXPECT_EQ(r.sizes(), (std::vector<size_t>{1, 1, 1, 1}));
  EXPECT_EQ(r.nic.stats().rx_stack_packets, 4u);
  EXPECT_EQ(r.nic.gro().stats().normal, 4u);
}

TEST(PlatformNicGro, CeMarkedFrameFlushes) {
  // Frame 3 carries CE (TOS ECN bits 11): it cannot join the packet before it, nor can the
  // not-CE frame after it join its packet.
  GroRx r(true);
  for (uint64_t n = 0; n < 6; ++n) {
    r.frame(n, at_ns(0), GroRx::kMss, n == 3 ? 0x03 : 0x02);
  }
  r.run_until(at_ns(5'000'000));
  EXPECT_EQ(r.sizes(), (std::vector<size_t>{3, 1, 2}));
  EXPECT_EQ(r.nic.gro().stats().by_mismatch, 2u);
}

TEST(PlatformNicGro, StackCostIsPaidPerMergedPacket) {
  // Five frames in one poll: GRO off costs 5 x per_rx_frame (3 us); on, 5 x (3 - 1) us for
  // the driver + GRO and 1 x per_rx_packet (1 us) for the one merged packet.
  GroRx off(false);
  GroRx on(true);
  for (GroRx* r : {&off, &on}) {
    for (uint64_t n = 0; n < 5; ++n) {
      r->frame(n, at_ns(0));
    }
    r->run_until(at_ns(5'000'000));
  }
  EXPECT_EQ(off.nic.stats().rx_cpu, 15_us);
  EXPECT_EQ(on.nic.stats().rx_cpu, 11_us);
  // The core's busy time: IRQ 2 + poll 1 + the receive work (no TX here).
  EXPECT_EQ(off.cpu.stats().busy, 18_us);
  EXPECT_EQ(on.cpu.stats().busy, 14_us);
  // Nothing merges when every frame ends its packet (PSH): then GRO costs what no GRO costs.
  GroRx psh(true);
  for (uint64_t n = 0; n < 5; ++n) {
    psh.frame(n, at_ns(0));
    psh.sink.headers[psh.next_id].flags |= algo::kGroPsh;
  }
  psh.run_until(at_ns(5'000'000));
  EXPECT_EQ(psh.sizes(), (std::vector<size_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(psh.nic.stats().rx_cpu, 15_us);
}

TEST(PlatformNicGro, GroMaxSizeIsValidated) {
  PlatformNic::Params p;
  p.gro = true;
  p.gro_max_size = 0;
  Validation v = p.validate();
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->key, "gro_max_size");
  p.gro_max_size = 65537;
  EXPECT_TRUE(p.validate().has_value());
  p.gro_max_size = 65536;
  EXPECT_FALSE(p.validate().has_value());
  CpuCosts c = test_costs();
  c.per_rx_packet = 4_us;  // more than per_rx_frame
  Validation cv = c.validate();
  ASSERT_TRUE(cv.has_value());
  EXPECT_EQ(cv->key, "per_rx_packet");
}

// ---- adaptive-rx (net_dim) ----------------------------------------------------------------

TEST(PlatformNicDim, AdaptiveRxStartsAtTheDefaultProfileAndFollowsNetDim) {
  // A steady 1 Gbit/s stream of full frames: every RX interrupt feeds net_dim's 64-event
  // window; its decisions reprogram the RX moderation.
  GroRx r(false, GroRx::gro_costs(), true);
  EXPECT_EQ(r.nic.rx_dim().default_profile(), (algo::NetDim::Profile{8, 256}));
  for (uint64_t n = 0; n < 4000; ++n) {
    r.frame(n, at_ns(0));  // back to back on the wire: 12.3 us apart
  }
  r.run_until(at_ns(100'000'000));
  const algo::NetDim& dim = r.nic.rx_dim();
  EXPECT_GT(dim.stats().windows, 0u);
  EXPECT_GT(r.nic.stats().dim_changes, 0u);
  EXPECT_EQ(r.nic.stats().dim_changes, dim.stats().changes);
  // Every frame was delivered whatever the profile (the ring never overflows here).
  EXPECT_EQ(r.nic.stats().rx_delivered, 4000u);
  EXPECT_EQ(r.nic.stats().rx_missed, 0u);
  // With a fixed moderation nothing changes.
  GroRx f(false, GroRx::gro_costs(), false);
  for (uint64_t n = 0; n < 400; ++n) {
    f.frame(n, at_ns(0));
  }
  f.run_until(at_ns(100'000'000));
  EXPECT_EQ(f.nic.stats().dim_changes, 0u);
  EXPECT_EQ(f.nic.rx_dim().stats().windows, 0u);
}

// ---- deferred IRQs, threaded NAPI, busy polling, Intel ITR (docs/rx-batching.md) ----------

// One receiving NIC fed from a 1 Gbit/s wire: a 1514-byte frame put on it at t arrives 12.304 us
// later. test_costs(): IRQ 2 us, poll 1 us, frame 3 us.
struct PollRx {
  static constexpr Duration kWire = Duration::ns(12'304);
  explicit PollRx(const PlatformNic::Params& p, const CpuCosts& c = test_costs())
      : in(Wire::Params{.rate = Rate::gbit(1)}),
        out(Wire::Params{.rate = Rate::gbit(1)}),
        nic(p, pfifo(), c) {
    nic.attach(&out, &in, &cpu, &sink);
  }
  static PlatformNic::Params irq_per_frame() {
    PlatformNic::Params p;
    p.rx_coalesce = {.usecs = Duration::zero(), .frames = 1};
    return p;
  }
  void frame(Time t) {
    Packet f;
    f.id = ++next_id;
    f.len = 1514;
    in.transmit(std::move(f), t);
  }
  void run_until(Time end) {
    for (;;) {
      std::optional<Time> t = nic.next_event();
      if (!t || *t > end) {
        return;
      }
      nic.advance(*t);
    }
  }
  Time at(size_t i) const { return sink.delivered.at(i).at; }
  Wire in;
  Wire out;
  Cpu cpu;
  Sink sink;
  PlatformNic nic;
  uint64_t next_id = 0;
};

TEST(PlatformNicDefer, DeferHardIrqsKeepsTheIrqMaskedForTheCountThenReenablesIt) {
  // napi_defer_hard_irqs 2, gro_flush_timeout 100 us: the poll that did work reloads the count
  // (2) and uses one: IRQ masked, timer. Two empty timer polls use the rest; the second one
  // re-enables the IRQ without arming the timer.
  PlatformNic::Params p = PollRx::irq_per_frame();
  p.napi_defer_hard_irqs = 2;
  p.gro_flush_timeout = 100_us;
  PollRx r(p);
  r.frame(Time::zero());
  r.run_until(at_ns(900'000));
  const Time a = Time::zero() + PollRx::kWire;
  ASSERT_EQ(r.sink.delivered.size(), 1u);
  EXPECT_EQ(r.at(0), a + 6_us);  // IRQ 2 + poll 1 + frame 3: unchanged for the first frame
  const PlatformNic::Stats& s = r.nic.stats();
  EXPECT_EQ(s.rx_irqs, 1u);
  EXPECT_EQ(s.napi_timer_fires, 2u);
  EXPECT_EQ(s.napi_timer_polls, 2u);
  EXPECT_EQ(s.polls, 3u);
  EXPECT_EQ(s.deferred_completions, 2u);  // the first poll and the first timer poll
  // Timer polls cost the hrtimer interrupt and a poll: 2 x (2 + 1) us on top of the 6 us.
  EXPECT_EQ(r.cpu.stats().busy, 12_us);
  // The IRQ is live again: a frame 1 ms later raises one.
  r.frame(at_ns(1'000'000));
  r.run_until(at_ns(2'000'000));
  EXPECT_EQ(s.rx_irqs, 2u);
}

TEST(PlatformNicDefer, AFrameArrivingWhileDeferredWaitsForTheTimer) {
  PlatformNic::Params p = PollRx::irq_per_frame();
  p.napi_defer_hard_irqs = 2;
  p.gro_flush_timeout = 100_us;
  PollRx r(p);
  r.frame(Time::zero());
  r.frame(at_ns(20'000));  // arrives 20 us after the first, IRQ masked by then
  r.run_until(at_ns(900'000));
  const Time a = Time::zero() + PollRx::kWire;
  ASSERT_EQ(r.sink.delivered.size(), 2u);
  // First poll ends at a + 6 us; timer 100 us later; hrtimer IRQ 2 + poll 1 + frame 3.
  EXPECT_EQ(r.at(1), a + 6_us + 100_us + 6_us);
  EXPECT_EQ(r.nic.stats().rx_irqs, 1u);
  // Without deferral it had its own interrupt and was delivered 6 us after arriving.
  PollRx plain(PollRx::irq_per_frame());
  plain.frame(Time::zero());
  plain.frame(at_ns(20'000));
  plain.run_until(at_ns(900'000));
  EXPECT_EQ(plain.at(1), at_ns(20'000) + PollRx::kWire + 6_us);
  EXPECT_EQ(plain.nic.stats().rx_irqs, 2u);
}

TEST(PlatformNicDefer, DeferWithoutTimeoutDoesNothing) {
  // napi_complete_done keeps the IRQ masked only if gro_flush_timeout is set.
  PlatformNic::Params p = PollRx::irq_per_frame();
  p.napi_defer_hard_irqs = 5;
  PollRx r(p);
  r.frame(Time::zero());
  r.frame(at_ns(20'000));
  r.run_until(at_ns(900'000));
  EXPECT_EQ(r.nic.stats().rx_irqs, 2u);
  EXPECT_EQ(r.nic.stats().deferred_completions, 0u);
  EXPECT_EQ(r.nic.stats().napi_timer_fires, 0u);
}

TEST(PlatformNicDefer, GroFlushTimeoutHoldsGroPacketsAcrossPolls) {
  // Two 5-segment bursts of one flow, 200 us apart: without gro_flush_timeout each poll's
  // packet is flushed at napi_complete_done ({5, 5}); with it (1 ms, defer 0) only packets
  // older than the current jiffy are, so the second burst joins the held packet and the
  // timer's empty poll (no work: no timeout) flushes one packet of ten.
  auto run = [](Duration timeout) {
    PlatformNic::Params p = GroRx::params(true, false);
    p.gro_flush_timeout = timeout;
    GroRx r(p);
    for (uint64_t n = 0; n < 5; ++n) {
      r.frame(n, at_ns(0));
    }
    for (uint64_t n = 5; n < 10; ++n) {
      r.frame(n, at_ns(200'000));
    }
    r.run_until(at_ns(3'000'000));
    return std::make_pair(r.sizes(), r.nic.stats());
  };
  const auto [plain, ps] = run(Duration::zero());
  EXPECT_EQ(plain, (std::vector<size_t>{5, 5}));
  const auto [held, hs] = run(1_ms);
  EXPECT_EQ(held, (std::vector<size_t>{10}));
  EXPECT_EQ(hs.rx_irqs, 2u);  // defer 0: the IRQ was re-enabled after each poll
  EXPECT_EQ(hs.napi_timer_polls, 1u);
  EXPECT_EQ(hs.deferred_completions, 0u);
}

TEST(PlatformNicThreaded, EveryNapiScheduleWakesTheKthread) {
  PlatformNic::Params p = PollRx::irq_per_frame();
  p.threaded = true;
  p.threaded_wakeup = 2_us;
  PollRx r(p);
  r.frame(Time::zero());
  r.run_until(at_ns(900'000));
  EXPECT_EQ(r.at(0), Time::zero() + PollRx::kWire + 2_us + 2_us + 1_us + 3_us);
  EXPECT_EQ(r.nic.stats().threaded_wakeups, 1u);
  EXPECT_EQ(r.cpu.stats().busy, 8_us);
}

TEST(PlatformNicBusyPoll, TheSpinningApplicationPollsTheFrameWithoutAnInterrupt) {
  // rx-usecs 50: the interrupt path waits 50 us. The application spinning in recv()
  // (busy_read 1 ms) takes the NAPI when the frame lands: poll 1 + frame 3 us, then
  // busy_poll_stop's poll (1 us) re-enables the IRQ with nothing pending.
  PlatformNic::Params p;
  p.rx_coalesce = {.usecs = 50_us, .frames = 0};
  p.busy_read = 1_ms;
  PollRx r(p);
  r.frame(Time::zero());
  r.run_until(at_ns(5'000'000));
  const Time a = Time::zero() + PollRx::kWire;
  ASSERT_EQ(r.sink.delivered.size(), 1u);
  EXPECT_EQ(r.at(0), a + 1_us + 3_us);
  const PlatformNic::Stats& s = r.nic.stats();
  EXPECT_EQ(s.rx_irqs, 0u);
  EXPECT_EQ(s.busy_poll_sessions, 1u);
  EXPECT_EQ(s.busy_poll_frames, 1u);
  EXPECT_EQ(s.polls, 2u);  // napi_busy_loop's poll + busy_poll_stop's
  // Spin: from 0 to the arrival, then busy_read again after the session (5 us of work):
  // the core is busy for all of it.
  EXPECT_EQ(s.busy_spin, (a - Time::zero()) + 1_ms);
  EXPECT_EQ(r.cpu.stats().spin, s.busy_spin);
  EXPECT_EQ(r.cpu.stats().busy, s.busy_spin + 5_us);
  // The interrupt path: 50 us later and 1 us more (IRQ 2 us instead of the second poll).
  PlatformNic::Params q = p;
  q.busy_read = Duration::zero();
  PollRx irq(q);
  irq.frame(Time::zero());
  irq.run_until(at_ns(5'000'000));
  EXPECT_EQ(irq.at(0), a + 50_us + 6_us);
  EXPECT_EQ(irq.cpu.stats().busy, 6_us);
}

TEST(PlatformNicBusyPoll, AnIrqWhileTheAppOwnsTheNapiIsMissedAndCostsItsHandler) {
  // rx-frames 1: the interrupt fires as the frame lands, after the spinner took the NAPI:
  // napi_schedule_prep fails (MISSED), the handler's 2 us run before the application's poll.
  PlatformNic::Params p = PollRx::irq_per_frame();
  p.busy_read = 1_ms;
  PollRx r(p);
  r.frame(Time::zero());
  r.run_until(at_ns(100'000));
  const PlatformNic::Stats& s = r.nic.stats();
  EXPECT_EQ(s.rx_irqs, 1u);
  EXPECT_EQ(s.busy_poll_irqs, 1u);
  EXPECT_EQ(s.busy_poll_sessions, 1u);
  EXPECT_EQ(s.polls, 2u);  // no softirq poll: busy_poll_stop cleared MISSED
  EXPECT_EQ(r.at(0), Time::zero() + PollRx::kWire + 2_us + 1_us + 3_us);
}

TEST(PlatformNicBusyPoll, PreferBusyPollKeepsTheIrqOffWhileTheAppPolls) {
  // Frames every 100 us, the app spinning between them. Plain busy polling: the IRQ is live
  // between sessions, so every frame also raises one. Preferred busy polling with
  // napi_defer_hard_irqs 2 and gro_flush_timeout 500 us: busy_poll_stop arms the timer and
  // leaves the IRQ masked; only the first frame (IRQ live at start) raises one.
  auto run = [](bool prefer) {
    PlatformNic::Params p = PollRx::irq_per_frame();
    p.busy_read = 1_ms;
    p.prefer_busy_poll = prefer;
    p.napi_defer_hard_irqs = 2;
    p.gro_flush_timeout = 500_us;
    PollRx r(p);
    for (int i = 0; i < 20; ++i) {
      r.frame(at_ns(i * 100'000));
    }
    r.run_until(at_ns(10'000'000));
    EXPECT_EQ(r.sink.delivered.size(), 20u);
    EXPECT_EQ(r.nic.stats().busy_poll_sessions, 20u);
    return r.nic.stats();
  };
  const PlatformNic::Stats plain = run(false);
  const PlatformNic::Stats prefer = run(true);
  EXPECT_EQ(plain.rx_irqs, 20u);
  EXPECT_EQ(plain.busy_poll_irqs, 20u);
  EXPECT_EQ(prefer.rx_irqs, 1u);
  EXPECT_EQ(prefer.busy_poll_irqs, 1u);
  // After the last frame the app's spin runs out and the timer's polls re-enable the IRQ.
  EXPECT_GE(prefer.napi_timer_polls, 2u);
}

TEST(PlatformNicItr, IgbConservativeStartsAtIgbStartItrThenTwentyThousand) {
  // igb_set_itr after the first completed poll: one small packet → lowest_latency, which
  // conservative mode turns into low_latency: 49 us. The first frame waited IGB_START_ITR.
  PlatformNic::Params p;
  p.itr = ItrMode::kIgbConservative;
  p.itr_link_mbps = 1000;
  PollRx r(p);
  EXPECT_EQ(r.nic.intel_itr().interval(), 162_us);
  r.frame(Time::zero());
  r.frame(at_ns(1'000'000));
  r.run_until(at_ns(3'000'000));
  ASSERT_EQ(r.sink.delivered.size(), 2u);
  EXPECT_EQ(r.at(0), Time::zero() + PollRx::kWire + 162_us + 6_us);
  EXPECT_EQ(r.at(1), at_ns(1'000'000) + PollRx::kWire + 49_us + 6_us);
  EXPECT_EQ(r.nic.stats().itr_changes, 1u);
  EXPECT_EQ(r.nic.intel_itr().state().rx_range, algo::IntelItr::Latency::kLow);
}

TEST(PlatformNicItr, IxgbeStartsAtTwentyThousandAndSizesBySmallPackets) {
  PlatformNic::Params p;
  p.itr = ItrMode::kIxgbe;
  p.itr_link_mbps = 10000;
  PollRx r(p);
  EXPECT_EQ(r.nic.intel_itr().interval(), 50_us);
  r.frame(Time::zero());
  r.run_until(at_ns(1'000'000));
  // One 1514-byte packet: latency mode, sized 1514*5 + 22420 = 29990, halved 14995,
  // ceil(/512) x 2 = 60 us (| latency: 188); the TX ring, no packets: current 50 + 2 us, its
  // start flag kept (| latency: 180). The vector takes the smaller raw value: 52 us.
  EXPECT_EQ(r.nic.intel_itr().state().rx_itr, algo::IntelItr::kIxgbeLatency | 60u);
  EXPECT_EQ(r.nic.intel_itr().interval(), 52_us);
}

TEST(PlatformNicPollKeys, RejectsBadCombinations) {
  PlatformNic::Params p;
  p.adaptive_rx = true;
  p.itr = ItrMode::kIxgbe;
  EXPECT_EQ(p.validate()->key, "itr");
  PlatformNic::Params q;
  q.prefer_busy_poll = true;
  EXPECT_EQ(q.validate()->key, "prefer_busy_poll");
  PlatformNic::Params r;
  r.napi_defer_hard_irqs = -1;
  EXPECT_EQ(r.validate()->key, "napi_defer_hard_irqs");
  PlatformNic::Params b;
  b.busy_poll_budget = 0;
  EXPECT_EQ(b.validate()->key, "busy_poll_budget");
}

}  // namespace
}  // namespace nicsim::model
