#pragma once
// Property-test driver for queueing elements.
//
// Runs a random, seeded sequence of operations (enqueue of random sizes, flows and TOS/
// priority; dequeue; peek followed by dequeue; time advance) against an element and checks
// after every step:
//   - the stats identities (enqueued = dequeued + dropped + backlog, bytes likewise);
//   - peek(now) returns the packet the next dequeue(now) returns;
//   - next_ready(now) == now whenever dequeue(now) returns a packet, and is nullopt when empty;
// and at the end, after draining (advancing time to next_ready), that every packet id offered
// was either dequeued exactly once or dropped exactly once (observer), none appeared twice or
// out of nowhere, and dequeued bytes equal the offered sizes. A failure prints the seed.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>

#include "nicsim/core/element.h"
#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/recording_observer.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::testing {

struct PropertyConfig {
  uint64_t seed = 1;
  int operations = 20'000;
  uint32_t min_len = 60;
  uint32_t max_len = 1514;
  uint32_t flows = 16;             // distinct flow hashes used
  Duration max_step = 200_us;      // largest random time advance
  int enqueue_weight = 5;          // relative operation frequencies
  int dequeue_weight = 4;
  int advance_weight = 2;
  int drain_limit = 10'000'000;    // bound on drain iterations (a hang is a failure)
};

template <QueueElement E>
void check_queue_properties(E& e, const PropertyConfig& cfg) {
  SCOPED_TRACE("property seed " + std::to_string(cfg.seed));
  std::mt19937_64 rng(cfg.seed);
  PacketFactory factory;
  RecordingObserver obs;
  e.set_observer(&obs);
  std::unordered_map<uint64_t, uint32_t> offered;  // id -> len
  std::unordered_map<uint64_t, int> dequeued;
  Time now = Time::zero();
  uint64_t dequeued_bytes = 0;

  auto take = [&](std::optional<Packet>& p) {
    ASSERT_TRUE(offered.count(p->id)) << "dequeued a packet that was never offered";
    ASSERT_EQ(offered[p->id], p->len);
    ASSERT_EQ(++dequeued[p->id], 1) << "packet " << p->id << " dequeued twice";
    dequeued_bytes += p->len;
  };
  auto dequeue_checked = [&]() {
    const std::optional<Time> ready_before = e.next_ready(now);
    if (e.backlog_packets() == 0) {
      ASSERT_FALSE(ready_before.has_value()) << "empty but next_ready has a time";
    } else {
      ASSERT_TRUE(ready_before.has_value()) << "backlog but next_ready is nullopt";
      ASSERT_GE(*ready_before, now) << "next_ready is in the past";
    }
    const Packet* peeked = e.peek(now);
    const uint64_t peek_id = peeked != nullptr ? peeked->id : 0;
    std::optional<Packet> p = e.dequeue(now);
    if (peeked != nullptr) {
      ASSERT_TRUE(p.has_value()) << "peek returned a packet but dequeue did not";
      ASSERT_EQ(p->id, peek_id) << "dequeue returned a different packet than peek";
    }
    if (p) {
      ASSERT_EQ(ready_before, now) << "dequeue released a packet that next_ready said must wait";
      take(p);
    } else if (e.backlog_packets() > 0) {
      // Nothing left now (dequeue-time drops may have emptied the head): it must wait.
      std::optional<Time> ready = e.next_ready(now);
      ASSERT_TRUE(ready.has_value()) << "backlog but next_ready is nullopt";
      ASSERT_GT(*ready, now) << "next_ready says now, but dequeue returned nothing";
    }
  };

  const int total = cfg.enqueue_weight + cfg.dequeue_weight + cfg.advance_weight;
  std::uniform_int_distribution<int> op_dist(0, total - 1);
  std::uniform_int_distribution<uint32_t> len_dist(cfg.min_len, cfg.max_len);
  std::uniform_int_distribution<uint32_t> flow_dist(0, cfg.flows - 1);
  std::uniform_int_distribution<int> prio_dist(0, 15);
  std::uniform_int_distribution<int> tos_dist(0, 255);
  std::uniform_int_distribution<int64_t> step_dist(0, cfg.max_step.count_ns());

  for (int i = 0; i < cfg.operations; ++i) {
    const int op = op_dist(rng);
    if (op < cfg.enqueue_weight) {
      const uint32_t flow = flow_dist(rng);
      // A well-mixed 32-bit hash per flow, as skb_get_hash gives.
      const uint32_t hash = static_cast<uint32_t>((flow + 1) * 0x9E3779B1u);
      Packet p = factory.make(len_dist(rng), hash, static_cast<uint8_t>(prio_dist(rng)),
                              static_cast<uint8_t>(tos_dist(rng)));
      offered[p.id] = p.len;
      e.enqueue(std::move(p), now);
    } else if (op < cfg.enqueue_weight + cfg.dequeue_weight) {
      dequeue_checked();
    } else {
      now += Duration::ns(step_dist(rng));
    }
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    expect_stats_identities(e);
    if (::testing::Test::HasFailure()) {
      return;
    }
  }

  // Drain: dequeue everything, advancing time to next_ready when the element holds back.
  for (int guard = 0; e.backlog_packets() > 0; ++guard) {
    ASSERT_LT(guard, cfg.drain_limit) << "element did not drain";
    std::optional<Packet> p = e.dequeue(now);
    if (p) {
      take(p);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
      continue;
    }
    if (e.backlog_packets() == 0) {
      break;  // dequeue-time drops emptied it
    }
    std::optional<Time> ready = e.next_ready(now);
    ASSERT_TRUE(ready.has_value()) << "backlog " << e.backlog_packets() << " but nothing ready";
    ASSERT_GT(*ready, now) << "next_ready says now, but dequeue returned nothing";
    now = *ready;
  }
  expect_stats_identities(e);

  // Every offered packet is accounted for exactly once.
  std::unordered_map<uint64_t, int> dropped;
  for (uint64_t id : obs.ids(RecordingObserver::Event::kDrop)) {
    ASSERT_TRUE(offered.count(id)) << "dropped a packet that was never offered";
    ASSERT_EQ(++dropped[id], 1) << "packet " << id << " dropped twice";
    ASSERT_EQ(dequeued.count(id), 0u) << "packet " << id << " both dropped and dequeued";
  }
  EXPECT_EQ(dropped.size() + dequeued.size(), offered.size()) << "packets lost";
  const QueueStats& s = e.stats();
  EXPECT_EQ(s.enqueued_packets, offered.size());
  EXPECT_EQ(s.dequeued_packets, dequeued.size());
  EXPECT_EQ(s.dropped_packets, dropped.size());
  EXPECT_EQ(s.dequeued_bytes, dequeued_bytes);
  e.set_observer(nullptr);
}

}  // namespace nicsim::testing
