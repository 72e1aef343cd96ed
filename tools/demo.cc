// `nicsim demo`: a short tour of the algorithm library (the main job until the simulator's
// seed comparison lands). Three small experiments on a manual clock, each printing a table:
//   1. BQL: the DQL limit a driver converges to, for several TX completion intervals.
//   2. Where latency comes from: a sparse flow behind 4 bulk flows at a 100 Mbit/s
//      bottleneck, through a 1000-packet FIFO vs fq_codel.
//   3. USB RX aggregation: frames per bulk-IN transfer, SMSC turbo off/on and ASIX bursts.
#include "tools/demo.h"

#include <cstdio>
#include <vector>

#include "nicsim/algo/dql.h"
#include "nicsim/algo/fifo.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/algo/usb_rx_aggregator.h"
#include "nicsim/core/rate.h"

namespace nicsim::tools {
namespace {

using algo::Dql;
using algo::UsbRxAggregator;

// A link at `rate` completing whatever was queued once per `interval` (TX completion
// coalescing), with the stack keeping the queue full up to the BQL limit.
uint32_t converged_bql_limit(Rate rate, Duration interval) {
  Dql dql(Dql::Params{});
  const uint32_t frame = 1514;
  uint64_t on_wire = 0;  // bytes handed to the device, not yet completed
  Time now = Time::zero();
  for (int i = 0; i < 4000; ++i) {  // 4000 intervals: several hold times at every setting
    while (dql.avail() >= 0) {
      dql.queued(frame);
      on_wire += frame;
    }
    now += interval;
    const uint64_t done = std::min<uint64_t>(on_wire, rate.bytes_in(interval));
    on_wire -= done;
    dql.completed(static_cast<uint32_t>(done), now);
  }
  return dql.limit();
}

void bql_table() {
  std::printf("1. BQL (Dql): converged limit vs TX completion interval, 1514-byte frames\n");
  std::printf("   %-10s %-12s %14s %18s\n", "link", "completion", "BQL limit", "queue at limit");
  const Rate rates[] = {Rate::mbit(100), Rate::gbit(1)};
  const Duration intervals[] = {Duration::us(100), Duration::ms(1), Duration::ms(4)};
  for (Rate r : rates) {
    for (Duration iv : intervals) {
      const uint32_t limit = converged_bql_limit(r, iv);
      std::printf("   %-10s %9.1f ms %11u B %15.2f ms\n",
                  r == Rate::mbit(100) ? "100Mbit" : "1Gbit", iv.to_ms(), limit,
                  r.transmit_time(limit).to_ms());
    }
  }
  std::printf("   Coarser completions inflate the limit, hence the bytes queued in hardware.\n\n");
}

// Four bulk flows keep a 100 Mbit/s bottleneck saturated; a sparse flow sends one small
// packet every 10 ms. Returns the sparse flow's mean and max sojourn in ms.
template <class Queue>
std::pair<double, double> sparse_latency(Queue& q) {
  const Rate rate = Rate::mbit(100);
  Time now = Time::zero();
  Time link_free = Time::zero();
  uint64_t id = 0;
  double sum = 0;
  double worst = 0;
  int n = 0;
  Time next_sparse = Time::zero() + Duration::ms(500);
  for (int step = 0; step < 200'000; ++step) {
    now += Duration::us(20);
    // Bulk sources: each offers a 1514-byte packet every 100 us (4 x 121 Mbit/s offered).
    if (step % 5 == 0) {
      for (uint32_t f = 1; f <= 4; ++f) {
        Packet p;
        p.id = ++id;
        p.len = 1514;
        p.flow_hash = f * 0x9E3779B1u;
        q.enqueue(std::move(p), now);
      }
    }
    if (now >= next_sparse) {
      Packet p;
      p.id = ++id;
      p.len = 98;
      p.flow_hash = 77 * 0x9E3779B1u;
      p.flow_id = 77;
      q.enqueue(std::move(p), now);
      next_sparse += Duration::ms(10);
    }
    while (link_free <= now) {
      std::optional<Packet> p = q.dequeue(link_free);
      if (!p) {
        link_free = now + Duration::us(20);
        break;
      }
      link_free += rate.transmit_time(p->len + 24);
      if (p->flow_id == 77) {
        const double ms = (link_free - p->enqueue_ts).to_ms();
        sum += ms;
        worst = std::max(worst, ms);
        ++n;
      }
    }
  }
  return {n > 0 ? sum / n : 0.0, worst};
}

void qdisc_table() {
  std::printf("2. A sparse flow (ping-like) behind 4 bulk flows at a 100 Mbit/s bottleneck\n");
  std::printf("   %-28s %12s %12s\n", "queue", "mean (ms)", "max (ms)");
  algo::Fifo fifo(algo::Fifo::Params{.limit_packets = 1000});
  auto [fm, fx] = sparse_latency(fifo);
  std::printf("   %-28s %12.2f %12.2f\n", "FIFO, 1000 packets", fm, fx);
  algo::FqCodel fq(algo::FqCodel::Params{});
  auto [qm, qx] = sparse_latency(fq);
  std::printf("   %-28s %12.2f %12.2f\n", "fq_codel (Linux defaults)", qm, qx);
  std::printf("   fq_codel serves the sparse flow first and keeps the bulk queues near 5 ms.\n\n");
}

// Frames arrive back-to-back every `gap` (MTU frames at the PHY rate); the host keeps one
// bulk-IN transfer posted and re-posts it 300 us after each completion (a slow host, as in
// FreeBSD's single-transfer drivers). Returns the mean frames per transfer.
double frames_per_transfer(UsbRxAggregator::Params p, uint32_t usb_len, Duration gap) {
  p.fifo_bytes = 64 * 1024;
  UsbRxAggregator agg(p);
  uint64_t id = 0;
  uint64_t frames = 0;
  uint64_t transfers = 0;
  Time next_arrival = Time::zero();
  Time next_post = Time::zero();  // Time::max() = no re-post pending
  const Time end = Time::zero() + Duration::ms(200);
  while (true) {
    Time now = min(next_arrival, next_post);
    if (auto r = agg.next_ready(); r && *r < now) {
      now = *r;
    }
    if (now > end) {
      break;
    }
    if (next_post == now) {
      agg.post_transfer(now);
      next_post = Time::max();
    }
    if (next_arrival == now) {
      Packet f;
      f.id = ++id;
      f.len = 1514;
      agg.frame_arrived(std::move(f), usb_len, now);
      next_arrival += gap;
    }
    while (auto t = agg.pop_completed(now)) {
      frames += t->frames.size();
      ++transfers;
      next_post = t->completed + Duration::us(300);
    }
  }
  return transfers > 0 ? static_cast<double>(frames) / static_cast<double>(transfers) : 0.0;
}

void usb_table() {
  std::printf("3. USB RX aggregation: mean frames per bulk-IN transfer, MTU frames back-to-back,\n");
  std::printf("   one transfer posted, re-posted 300 us after each completion\n");
  UsbRxAggregator::Params off;
  off.mode = UsbRxAggregator::Mode::kSingleFrame;
  off.burst_cap_bytes = 2048;
  off.hold_time = Duration::zero();
  const UsbRxAggregator::Params on;
  const Duration at_100m = Rate::mbit(100).transmit_time(1538);
  const Duration at_1g = Rate::gbit(1).transmit_time(1538);
  std::printf("   %-44s %8.1f\n", "smsc95xx, 100 Mbit/s, turbo off (SEF)",
              frames_per_transfer(off, 1524, at_100m));
  std::printf("   %-44s %8.1f\n", "smsc95xx, 100 Mbit/s, turbo on (MEF, 18944 B)",
              frames_per_transfer(on, 1524, at_100m));
  for (int64_t mfb : {2048, 4096, 8192, 16384}) {
    UsbRxAggregator::Params a;
    a.burst_cap_bytes = mfb;
    a.hold_time = Duration::zero();
    char name[64];
    std::snprintf(name, sizeof name, "ax88178, 1 Gbit/s, RX burst %lld B", static_cast<long long>(mfb));
    std::printf("   %-44s %8.1f\n", name, frames_per_transfer(a, 1518, at_1g));
  }
  std::printf("   Fewer, fuller transfers amortise the per-transfer host cost.\n");
}

}  // namespace

int run_demo() {
  std::printf("nicsim library demo — what batching does to throughput and latency\n\n");
  bql_table();
  qdisc_table();
  usb_table();
  return 0;
}

}  // namespace nicsim::tools
