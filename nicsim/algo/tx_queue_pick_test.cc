// TxQueuePick: pins Linux's transmit-queue choice (net/core/dev.c netdev_pick_tx,
// get_xps_queue, skb_tx_hash): the socket's cached queue kept until ooo_okay, XPS by
// receive queue before CPU, one-queue and several-queue map entries, the flow-hash fallback,
// forwarded packets on their RX queue's index, and parameter errors.
#include "nicsim/algo/tx_queue_pick.h"

#include <gtest/gtest.h>

#include <set>

namespace nicsim::algo {
namespace {

TxQueuePick::Params queues(uint32_t n) {
  TxQueuePick::Params p;
  p.tx_queues = n;
  return p;
}

TEST(TxQueuePick, OneQueueIsAlwaysQueueZero) {
  TxQueuePick pick;
  TxQueuePick::Packet p;
  p.hash = 0xffffffff;
  p.from_socket = true;
  auto c = pick.pick(p);
  EXPECT_EQ(c.queue, 0u);
  EXPECT_FALSE(c.cache);
}

TEST(TxQueuePick, ReciprocalScaleIsHashTimesQueuesOverTwoToThe32) {
  EXPECT_EQ(TxQueuePick::reciprocal_scale(0, 8), 0u);
  EXPECT_EQ(TxQueuePick::reciprocal_scale(0x20000000, 8), 1u);
  EXPECT_EQ(TxQueuePick::reciprocal_scale(0xffffffff, 8), 7u);
  EXPECT_EQ(TxQueuePick::reciprocal_scale(0x80000000, 3), 1u);  // not hash % 3 (= 2)
}

TEST(TxQueuePick, WithoutXpsTheFlowHashPicksAndTheSocketCachesIt) {
  TxQueuePick pick(queues(4));
  TxQueuePick::Packet p;
  p.hash = 0xC0000000;  // reciprocal_scale -> 3
  p.from_socket = true;
  auto c = pick.pick(p);
  EXPECT_EQ(c.queue, 3u);
  ASSERT_TRUE(c.cache);
  EXPECT_EQ(*c.cache, 3u);
  EXPECT_EQ(pick.stats().hash, 1u);
}

TEST(TxQueuePick, CachedQueueKeptUntilOooOkay) {
  TxQueuePick::Params prm = queues(4);
  prm.xps_cpus = TxQueuePick::one_queue_per_cpu(4, 4);
  TxQueuePick pick(prm);
  TxQueuePick::Packet p;
  p.from_socket = true;
  p.socket_queue = 1;
  p.sender_cpu = 2;  // the application moved to CPU 2
  auto c = pick.pick(p);
  EXPECT_EQ(c.queue, 1u);  // packets in flight on queue 1: no reordering
  EXPECT_FALSE(c.cache);
  p.ooo_okay = true;  // nothing in flight: free to follow the CPU
  c = pick.pick(p);
  EXPECT_EQ(c.queue, 2u);
  ASSERT_TRUE(c.cache);
  EXPECT_EQ(*c.cache, 2u);
  EXPECT_EQ(pick.stats().kept, 1u);
  EXPECT_EQ(pick.stats().xps, 1u);
}

TEST(TxQueuePick, CachedQueueBeyondTheDeviceIsRecomputed) {
  TxQueuePick pick(queues(2));
  TxQueuePick::Packet p;
  p.from_socket = true;
  p.socket_queue = 5;  // the device was reconfigured to fewer queues
  p.hash = 0;
  auto c = pick.pick(p);
  EXPECT_EQ(c.queue, 0u);
  EXPECT_EQ(*c.cache, 0u);
}

TEST(TxQueuePick, XpsByReceiveQueueComesBeforeXpsByCpu) {
  TxQueuePick::Params prm = queues(4);
  prm.xps_cpus = TxQueuePick::one_queue_per_cpu(4, 4);
  prm.xps_rxqs = {{3}, {2}};
  TxQueuePick pick(prm);
  TxQueuePick::Packet p;
  p.from_socket = true;
  p.sender_cpu = 0;
  p.socket_rxq = 1;
  EXPECT_EQ(pick.pick(p).queue, 2u);
  p.socket_rxq = 3;  // no rxqs entry for RX queue 3: the CPU map decides
  EXPECT_EQ(pick.pick(p).queue, 0u);
}

TEST(TxQueuePick, XpsEntryWithSeveralQueuesSpreadsByHash) {
  TxQueuePick::Params prm = queues(8);
  prm.xps_cpus = {{4, 5, 6, 7}};
  TxQueuePick pick(prm);
  std::set<uint32_t> seen;
  for (uint32_t h = 0; h < 64; ++h) {
    TxQueuePick::Packet p;
    p.sender_cpu = 0;
    p.hash = h * 0x04000000u;
    uint32_t q = pick.pick(p).queue;
    EXPECT_EQ(q, 4 + TxQueuePick::reciprocal_scale(p.hash, 4));
    seen.insert(q);
  }
  EXPECT_EQ(seen, (std::set<uint32_t>{4, 5, 6, 7}));
}

TEST(TxQueuePick, CpuWithoutXpsEntryFallsBackToHash) {
  TxQueuePick::Params prm = queues(4);
  prm.xps_cpus = TxQueuePick::one_queue_per_cpu(2, 4);  // CPUs 0, 1 only
  TxQueuePick pick(prm);
  TxQueuePick::Packet p;
  p.sender_cpu = 3;
  p.hash = 0x40000000;  // -> 1
  EXPECT_EQ(pick.pick(p).queue, 1u);
  EXPECT_EQ(pick.stats().hash, 1u);
}

TEST(TxQueuePick, ForwardedPacketKeepsItsReceiveQueueIndex) {
  TxQueuePick pick(queues(3));
  TxQueuePick::Packet p;  // no socket: routed
  p.recorded_rxq = 1;
  p.hash = 0xffffffff;
  EXPECT_EQ(pick.pick(p).queue, 1u);
  p.recorded_rxq = 7;  // 7 - 3 - 3
  EXPECT_EQ(pick.pick(p).queue, 1u);
  EXPECT_FALSE(pick.pick(p).cache);  // nothing to cache without a socket
  EXPECT_EQ(pick.stats().rxq, 3u);
}

TEST(TxQueuePick, OneQueuePerCpuStopsAtTheSmallerCount) {
  auto m = TxQueuePick::one_queue_per_cpu(4, 2);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0], (std::vector<uint32_t>{0}));
  EXPECT_EQ(m[1], (std::vector<uint32_t>{1}));
  EXPECT_TRUE(m[2].empty());
}

TEST(TxQueuePick, BadParamsNameTheKey) {
  TxQueuePick::Params p;
  p.tx_queues = 0;
  EXPECT_EQ(p.validate()->key, "tx_queues");
  p.tx_queues = 2;
  p.xps_cpus = {{0}, {2}};
  EXPECT_EQ(p.validate()->key, "xps_cpus");
  p.xps_cpus.clear();
  p.xps_rxqs = {{9}};
  EXPECT_EQ(p.validate()->key, "xps_rxqs");
  EXPECT_THROW(TxQueuePick{p}, InvalidParams);
}

}  // namespace
}  // namespace nicsim::algo
