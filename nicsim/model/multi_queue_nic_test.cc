// MultiQueueNic: RSS spreads flows over queue pairs and keeps each flow on one (in order), each
// pair's receive work runs on its own core (so a CPU-bound receiver scales with queues), TX
// picks a pair per flow by skb_tx_hash, and the counters add up.
#include "nicsim/model/multi_queue_nic.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/testing/packet_factory.h"

namespace nicsim::model {
namespace {

using testing::PacketFactory;

AnyQueue pfifo() { return AnyQueue(algo::PfifoFast(algo::PfifoFast::Params{.limit = 1000})); }

// A receiver whose frames carry their flow in flow_id: client port 40000 + flow, server 5201.
struct Sink final : NicSink {
  void deliver(Packet&& f, Time now) override {
    per_flow[f.flow_id].push_back(f.id);
    ++delivered;
    last = now;
  }
  void tx_released(const TxRelease&, Time) override {}
  algo::Rss::Flow rss_flow(const Packet& f) const override {
    return {0xC6120001u, 0xC6120002u, static_cast<uint16_t>(40000 + f.flow_id), 5201,
            algo::Rss::Proto::kTcp};
  }
  std::map<uint32_t, std::vector<uint64_t>> per_flow;
  uint64_t delivered = 0;
  Time last;
};

// Slow receive path: 40 us per frame, so one core takes 25,000 frames/s of the 81,000 a
// 1 Gbit/s wire carries.
CpuCosts slow_rx() {
  CpuCosts c;
  c.per_interrupt = Duration::us(2);
  c.per_poll = Duration::us(1);
  c.per_rx_frame = Duration::us(40);
  c.per_tx_frame = Duration::us(1);
  c.per_tx_clean = Duration::ns(200);
  return c;
}

std::unique_ptr<MultiQueueNic> make_mq(uint32_t queues, const CpuCosts& costs) {
  std::vector<std::unique_ptr<PlatformNic>> pairs;
  for (uint32_t i = 0; i < queues; ++i) {
    pairs.push_back(std::make_unique<PlatformNic>(PlatformNic::Params{}, pfifo(), costs));
  }
  MultiQueueNic::Params p;
  p.rss.queues = queues;
  return std::make_unique<MultiQueueNic>(p, std::move(pairs));
}

// Frames of `flows` flows arriving back to back on a 1 Gbit/s wire for `duration`, received by
// a MultiQueueNic of `queues` pairs; returns the receiver's sink and NIC after draining.
struct RxRun {
  Sink sink;
  std::unique_ptr<MultiQueueNic> nic;
  Wire in{Wire::Params{.rate = Rate::gbit(1)}};
  Wire out{Wire::Params{.rate = Rate::gbit(1)}};
  Cpu cpu;
  RxRun(uint32_t queues, uint32_t flows, Duration duration) : nic(make_mq(queues, slow_rx())) {
    nic->attach(&out, &in, &cpu, &sink);
    PacketFactory f;
    Time t;
    const Time end = Time::zero() + duration;
    for (uint64_t i = 0; t < end; ++i) {
      Packet p = f.make(1514, static_cast<uint32_t>(i % flows));
      in.transmit(std::move(p), t);
      t = in.free_at(t);
      run_until(t);
    }
    run_until(end + Duration::ms(100));
  }
  void run_until(Time limit) {
    for (std::optional<Time> next = nic->next_event(); next && *next <= limit;
         next = nic->next_event()) {
      nic->advance(*next);
    }
  }
};

TEST(MultiQueueNic, EachFlowStaysOnOneQueueInOrder) {
  RxRun r(4, 8, Duration::ms(5));
  ASSERT_EQ(r.sink.per_flow.size(), 8u);
  for (const auto& [flow, ids] : r.sink.per_flow) {
    for (size_t i = 1; i < ids.size(); ++i) {
      ASSERT_LT(ids[i - 1], ids[i]) << "flow " << flow << " reordered";
    }
  }
  // The queue RSS names for each flow received all of that flow's frames.
  uint64_t steered = 0;
  for (uint64_t n : r.nic->rss().stats().per_queue) {
    steered += n;
  }
  EXPECT_EQ(steered, r.nic->counters().rx_packets + r.nic->counters().rx_drops);
}

TEST(MultiQueueNic, FlowsSpreadOverQueuesAndEachQueueUsesItsOwnCore) {
  RxRun r(4, 16, Duration::ms(5));
  std::set<size_t> used;
  for (size_t q = 0; q < r.nic->queue_count(); ++q) {
    const uint64_t frames = r.nic->rss().stats().per_queue[q];
    if (frames > 0) {
      used.insert(q);
      EXPECT_GT(r.nic->queue_cpu(q).stats().busy, Duration::zero()) << "queue " << q;
      EXPECT_GT(r.nic->pair(q).stats().rx_delivered, 0u);
    } else {
      EXPECT_EQ(r.nic->queue_cpu(q).stats().busy, Duration::zero());
    }
  }
  EXPECT_GE(used.size(), 3u);  // 16 flows under Microsoft's key: all four queues in practice
  EXPECT_EQ(&r.nic->queue_cpu(0), &r.cpu);  // queue 0 runs on the host's core
}

TEST(MultiQueueNic, CpuBoundReceiverScalesWithQueues) {
  // One core takes ~25 k frames/s; the wire brings ~81 k: with one queue the RX ring overflows
  // and ~1/3 gets through; with four the flows spread over four cores (~100 k frames/s).
  RxRun one(1, 16, Duration::ms(20));
  RxRun four(4, 16, Duration::ms(20));
  EXPECT_GT(one.nic->counters().rx_drops, 0u);
  EXPECT_GT(four.sink.delivered, one.sink.delivered * 2);
  EXPECT_LT(four.nic->counters().rx_drops, one.nic->counters().rx_drops);
}

TEST(MultiQueueNic, TxPicksAPairPerFlowAndSharesTheWire) {
  Sink sink;
  auto nic = make_mq(4, slow_rx());
  Wire out(Wire::Params{.rate = Rate::gbit(1)});
  Wire in(Wire::Params{.rate = Rate::gbit(1)});
  Cpu cpu;
  nic->attach(&out, &in, &cpu, &sink);
  PacketFactory f;
  // flow_hash 0, 1<<30, 2<<30, 3<<30: reciprocal_scale over 4 queues -> 0, 1, 2, 3.
  for (int round = 0; round < 10; ++round) {
    for (uint32_t k = 0; k < 4; ++k) {
      nic->send(f.make(1514, k << 30), Time::zero());
    }
  }
  for (std::optional<Time> t = nic->next_event(); t; t = nic->next_event()) {
    nic->advance(*t);
  }
  for (size_t q = 0; q < 4; ++q) {
    EXPECT_EQ(nic->pair(q).stats().tx_frames, 10u) << "queue " << q;
  }
  EXPECT_EQ(out.stats().frames, 40u);
  EXPECT_EQ(nic->counters().tx_packets, 40u);
  // 40 frames on a 1 Gbit/s wire one after another: serialisation never overlaps.
  EXPECT_GE(out.stats().busy, Duration::ns(40 * 12'304));
}

TEST(MultiQueueNic, QueueCountMustMatchRss) {
  std::vector<std::unique_ptr<PlatformNic>> pairs;
  pairs.push_back(std::make_unique<PlatformNic>(PlatformNic::Params{}, pfifo(), slow_rx()));
  MultiQueueNic::Params p;
  p.rss.queues = 2;
  EXPECT_THROW(MultiQueueNic(p, std::move(pairs)), InvalidParams);
}

}  // namespace
}  // namespace nicsim::model
