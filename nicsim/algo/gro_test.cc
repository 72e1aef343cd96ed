// Gro: pins the flush rules of Linux net/core/gro.c (dev_gro_receive, skb_gro_receive,
// napi_gro_flush, MAX_GRO_SKBS) and net/ipv4/tcp_offload.c (tcp_gro_receive) on a manual clock.
#include "nicsim/algo/gro.h"

#include <gtest/gtest.h>

#include <vector>

namespace nicsim::algo {
namespace {

constexpr uint32_t kMss = 1448;
constexpr uint32_t kHeaders = 52;  // IPv4 20 + TCP 20 + timestamps 12

Time at_us(int64_t us) { return Time::zero() + Duration::us(us); }

// A full-sized data segment of flow `flow` starting at segment number `n`.
GroHeader data(uint64_t flow, uint64_t n, uint32_t payload = kMss) {
  GroHeader h;
  h.tcp = true;
  h.flow = flow;
  h.seq = 1 + n * kMss;
  h.ack = 1;
  h.payload = payload;
  h.headers = kHeaders;
  h.flags = kGroAck;
  h.options = {7, 0};  // TSval 7
  return h;
}

Packet frame_of(uint64_t id, uint32_t hash) {
  Packet p;
  p.id = id;
  p.flow_hash = hash;
  p.len = 14 + kHeaders + kMss;
  return p;
}

void expect_identities(const Gro& g) {
  const auto& s = g.stats();
  EXPECT_EQ(s.frames, s.merged + s.held + s.normal);
  EXPECT_EQ(s.packets, s.completed + s.normal);
  EXPECT_EQ(s.completed, s.held - g.holding());
  EXPECT_EQ(s.completed, s.by_flags + s.by_mismatch + s.by_out_of_order + s.by_max_size +
                             s.by_evict + s.by_poll);
}

// Frames per completed packet, in completion order (and the packets' frames in order).
std::vector<size_t> drain(Gro& g) {
  std::vector<size_t> sizes;
  while (g.has_completed()) {
    GroPacket p = g.pop_completed();
    for (size_t i = 1; i < p.frames.size(); ++i) {
      EXPECT_LT(p.frames[i - 1].id, p.frames[i].id);
    }
    sizes.push_back(p.frames.size());
    g.recycle(std::move(p));
  }
  return sizes;
}

TEST(Gro, InOrderSegmentsMergeUntilEndOfPoll) {
  Gro g;
  for (uint64_t n = 0; n < 10; ++n) {
    g.receive(frame_of(n + 1, 3), data(1, n), at_us(0));
  }
  EXPECT_FALSE(g.has_completed());  // held until the poll ends
  EXPECT_EQ(g.holding(), 1u);
  g.flush(at_us(5), false);
  EXPECT_EQ(drain(g), std::vector<size_t>{10});
  EXPECT_EQ(g.stats().merged, 9u);
  EXPECT_EQ(g.stats().by_poll, 1u);
  EXPECT_EQ(g.stats().largest, 10u);
  expect_identities(g);
}

TEST(Gro, MergedPacketStaysBelowGroMaxSize) {
  // skb_gro_receive: p->len + len >= gro_max_size refuses. 52 + 45 x 1448 = 65212 < 65536, one
  // more would be 66660: 45 segments per packet (the familiar ~64 KB GRO packet).
  Gro g;
  for (uint64_t n = 0; n < 90; ++n) {
    g.receive(frame_of(n + 1, 3), data(1, n), at_us(0));
  }
  EXPECT_EQ(drain(g), std::vector<size_t>{45});
  EXPECT_EQ(g.stats().by_max_size, 1u);
  g.flush(at_us(0), false);
  EXPECT_EQ(drain(g), std::vector<size_t>{45});
  expect_identities(g);
}

TEST(Gro, SmallerGroMaxSizeMakesSmallerPackets) {
  Gro g({.max_size = 16384});  // 52 + 11 x 1448 = 15980; 12 would reach 17428
  for (uint64_t n = 0; n < 22; ++n) {
    g.receive(frame_of(n + 1, 3), data(1, n), at_us(0));
  }
  g.flush(at_us(0), false);
  EXPECT_EQ(drain(g), (std::vector<size_t>{11, 11}));
}

TEST(Gro, PshMergesThenCompletes) {
  // out_check_final: PSH flushes; the segment itself merged first (flags FIN/PSH may differ).
  Gro g;
  g.receive(frame_of(1, 3), data(1, 0), at_us(0));
  GroHeader psh = data(1, 1);
  psh.flags |= kGroPsh;
  g.receive(frame_of(2, 3), psh, at_us(0));
  EXPECT_EQ(drain(g), std::vector<size_t>{2});
  EXPECT_EQ(g.stats().by_flags, 1u);
  EXPECT_EQ(g.holding(), 0u);
  // A PSH segment with nothing held is delivered alone.
  GroHeader lone = data(1, 2);
  lone.flags |= kGroPsh;
  g.receive(frame_of(3, 3), lone, at_us(0));
  EXPECT_EQ(drain(g), std::vector<size_t>{1});
  EXPECT_EQ(g.stats().normal, 1u);
  expect_identities(g);
}

TEST(Gro, FinSynRstUrgEndThePacket) {
  for (uint8_t flag : {kGroFin}) {
    Gro g;
    g.receive(frame_of(1, 3), data(1, 0), at_us(0));
    GroHeader h = data(1, 1);
    h.flags |= flag;
    g.receive(frame_of(2, 3), h, at_us(0));
    EXPECT_EQ(drain(g), std::vector<size_t>{2}) << int(flag);  // FIN may differ: merge, flush
  }
  for (uint8_t flag : {kGroSyn, kGroRst, kGroUrg}) {
    Gro g;
    g.receive(frame_of(1, 3), data(1, 0), at_us(0));
    GroHeader h = data(1, 1);
    h.flags |= flag;
    g.receive(frame_of(2, 3), h, at_us(0));
    // SYN/RST/URG differ in a flag that must match: the held packet completes, this one goes alone.
    EXPECT_EQ(drain(g), (std::vector<size_t>{1, 1})) << int(flag);
    EXPECT_EQ(g.stats().by_mismatch, 1u);
  }
}

TEST(Gro, ShortSegmentEndsThePacket) {
  Gro g;
  g.receive(frame_of(1, 3), data(1, 0), at_us(0));
  g.receive(frame_of(2, 3), data(1, 1, 500), at_us(0));  // len < mss: merged, then flushed
  EXPECT_EQ(drain(g), std::vector<size_t>{2});
  EXPECT_EQ(g.stats().by_flags, 1u);
}

TEST(Gro, LargerSegmentThanMssDoesNotMerge) {
  // The held packet's mss is its first segment's payload: a bigger one cannot join it.
  Gro g;
  g.receive(frame_of(1, 3), data(1, 0, 1000), at_us(0));
  GroHeader big = data(1, 0, kMss);
  big.seq = 1 + 1000;
  g.receive(frame_of(2, 3), big, at_us(0));
  EXPECT_EQ(drain(g), std::vector<size_t>{1});
  EXPECT_EQ(g.stats().by_mismatch, 1u);
  EXPECT_EQ(g.holding(), 1u);
}

TEST(Gro, FlagAckOptionAndTosMismatchesFlush) {
  auto run = [](auto change) {
    Gro g;
    g.receive(frame_of(1, 3), data(1, 0), at_us(0));
    GroHeader h = data(1, 1);
    change(h);
    g.receive(frame_of(2, 3), h, at_us(0));
    EXPECT_EQ(g.stats().by_mismatch, 1u);
    EXPECT_EQ(drain(g), std::vector<size_t>{1});  // the old one; the new one is held
    EXPECT_EQ(g.holding(), 1u);
  };
  run([](GroHeader& h) { h.flags |= kGroEce; });  // flags other than CWR/FIN/PSH
  run([](GroHeader& h) { h.flags |= kGroCwr; });  // CWR always flushes
  run([](GroHeader& h) { h.ack = 2; });           // ack_seq
  run([](GroHeader& h) { h.options = {8, 0}; });  // a new TSval tick
  run([](GroHeader& h) { h.tos = 3; });           // CE mark (inet_gro_receive: tos)
}

TEST(Gro, PureAcksAndNonTcpAreDeliveredAlone) {
  Gro g;
  GroHeader ack = data(1, 0, 0);
  g.receive(frame_of(1, 3), ack, at_us(0));
  g.receive(frame_of(2, 3), ack, at_us(0));
  GroHeader udp;
  g.receive(frame_of(3, 3), udp, at_us(0));
  EXPECT_EQ(drain(g), (std::vector<size_t>{1, 1, 1}));
  EXPECT_EQ(g.stats().normal, 3u);
  EXPECT_EQ(g.holding(), 0u);
  expect_identities(g);
}

TEST(Gro, OutOfOrderSegmentFlushes) {
  Gro g;
  g.receive(frame_of(1, 3), data(1, 0), at_us(0));
  g.receive(frame_of(2, 3), data(1, 1), at_us(0));
  g.receive(frame_of(3, 3), data(1, 3), at_us(0));  // segment 2 lost
  EXPECT_EQ(drain(g), std::vector<size_t>{2});
  EXPECT_EQ(g.stats().by_out_of_order, 1u);
  g.receive(frame_of(4, 3), data(1, 2), at_us(0));  // the retransmission: before the held one
  EXPECT_EQ(drain(g), std::vector<size_t>{1});
  EXPECT_EQ(g.stats().by_out_of_order, 2u);
  expect_identities(g);
}

TEST(Gro, FlowsInterleaveInTheirOwnPackets) {
  Gro g;
  for (uint64_t n = 0; n < 4; ++n) {
    g.receive(frame_of(2 * n + 1, 1), data(1, n), at_us(0));
    g.receive(frame_of(2 * n + 2, 9), data(2, n), at_us(0));  // same bucket (9 & 7 == 1)
  }
  EXPECT_EQ(g.holding(), 2u);
  g.flush(at_us(0), false);
  EXPECT_EQ(drain(g), (std::vector<size_t>{4, 4}));
}

TEST(Gro, BucketHoldsAtMostEightPacketsOldestCompletedFirst) {
  // MAX_GRO_SKBS = 8 per bucket: the ninth flow hashing there completes the oldest.
  Gro g;
  for (uint64_t f = 0; f < 9; ++f) {
    g.receive(frame_of(f + 1, static_cast<uint32_t>(8 * f + 5)), data(f, 0), at_us(0));
  }
  EXPECT_EQ(g.holding(), 8u);
  EXPECT_EQ(g.stats().by_evict, 1u);
  ASSERT_TRUE(g.has_completed());
  EXPECT_EQ(g.pop_completed().frames[0].id, 1u);  // flow 0, the oldest
  // Other buckets are independent: eight buckets x eight packets.
  for (uint64_t f = 96; f < 160; ++f) {
    if ((f & 7) != 5) {
      g.receive(frame_of(f, static_cast<uint32_t>(f)), data(f, 0), at_us(0));
    }
  }
  EXPECT_EQ(g.holding(), 64u);
  EXPECT_EQ(g.stats().by_evict, 1u);
  expect_identities(g);
}

TEST(Gro, FlushOldOnlyKeepsPacketsOfTheCurrentJiffy) {
  // gro_flush_timeout set: napi_complete_done flushes only packets held before this jiffy.
  Gro g;  // 4 ms jiffies
  g.receive(frame_of(1, 1), data(1, 0), Time::zero() + Duration::ms(1));
  g.receive(frame_of(2, 2), data(2, 0), Time::zero() + Duration::ms(5));
  g.flush(Time::zero() + Duration::ms(6), true);
  EXPECT_EQ(drain(g), std::vector<size_t>{1});  // flow 1, held in jiffy 0
  EXPECT_EQ(g.holding(), 1u);
  g.flush(Time::zero() + Duration::ms(8), true);  // jiffy 2: flow 2 is old now
  EXPECT_EQ(drain(g), std::vector<size_t>{1});
  EXPECT_EQ(g.holding(), 0u);
  expect_identities(g);
}

TEST(Gro, InvalidParamsAreRefused) {
  EXPECT_THROW(Gro({.buckets = 6}), InvalidParams);
  EXPECT_THROW(Gro({.max_per_bucket = 0}), InvalidParams);
  EXPECT_THROW(Gro({.max_size = 0}), InvalidParams);
}

}  // namespace
}  // namespace nicsim::algo
