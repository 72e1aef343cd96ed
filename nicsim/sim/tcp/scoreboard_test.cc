// Scoreboard: RFC 6675 pipe / IsLost / NextSeg bookkeeping on hand-made SACK blocks.
#include "nicsim/sim/tcp/scoreboard.h"

#include <gtest/gtest.h>

namespace nicsim::sim::tcp {
namespace {

constexpr uint32_t kMss = 1000;
constexpr uint64_t kBase = 1;
uint64_t S(uint64_t n) { return kBase + n * kMss; }  // first byte of segment n

Scoreboard make(int segments) {
  Scoreboard sb;
  sb.reset(kBase, kMss, 16);
  for (int i = 0; i < segments; ++i) {
    sb.push(Time::zero() + Duration::ms(i), kMss);
  }
  return sb;
}

TEST(Scoreboard, CumulativeAckRemovesWholeSegments) {
  Scoreboard sb = make(10);
  EXPECT_EQ(sb.packets_out(), 10u);
  auto r = sb.ack_to(S(3));
  EXPECT_EQ(r.acked, 3u);
  EXPECT_TRUE(r.has_first_sent);
  EXPECT_EQ(r.first_sent, Time::zero());  // oldest acked segment's send time
  EXPECT_EQ(sb.head(), 3u);
  r = sb.ack_to(S(3) + 500);  // a partial segment is not acknowledged
  EXPECT_EQ(r.acked, 0u);
  EXPECT_EQ(sb.packets_out(), 7u);
}

TEST(Scoreboard, SackMarksOnlyWholeSegmentsAndCountsOnce) {
  Scoreboard sb = make(10);
  Scoreboard::SackResult r;
  sb.sack(SackBlock{S(2) + 1, S(5)}, r);  // segment 2 only partly covered
  EXPECT_EQ(r.newly_sacked, 2u);          // 3 and 4
  EXPECT_EQ(sb.sacked_out(), 2u);
  EXPECT_EQ(sb.highest_sacked_end(), 5u);
  Scoreboard::SackResult again;
  sb.sack(SackBlock{S(3), S(5)}, again);
  EXPECT_EQ(again.newly_sacked, 0u);
  // pipe = packets_out − sacked − lost + retrans (RFC 6675 SetPipe / tcp_packets_in_flight).
  EXPECT_EQ(sb.in_flight(), 8u);
}

TEST(Scoreboard, IsLostNeedsDupThreshSackedAbove) {
  // RFC 6675 IsLost(SeqNum): DupThresh (3) SACKed segments above it.
  Scoreboard sb = make(10);
  Scoreboard::SackResult r;
  sb.sack(SackBlock{S(3), S(5)}, r);  // 3, 4
  EXPECT_EQ(sb.mark_lost_rfc6675(3), 0u);
  sb.sack(SackBlock{S(6), S(7)}, r);  // 6: segments 0,1,2 now have 3 SACKed above; 5 has 1
  EXPECT_EQ(sb.mark_lost_rfc6675(3), 3u);
  EXPECT_EQ(sb.lost_out(), 3u);
  EXPECT_EQ(sb.in_flight(), 10u - 3 - 3);
  EXPECT_EQ(sb.mark_lost_rfc6675(3), 0u);  // incremental: nothing new
  sb.sack(SackBlock{S(7), S(9)}, r);       // 7, 8: now 5 has 6, 7, 8 above
  EXPECT_EQ(sb.mark_lost_rfc6675(3), 1u);
  EXPECT_EQ(sb.lost_out(), 4u);
}

TEST(Scoreboard, NextSegReturnsLostSegmentsInOrderAndRuns) {
  Scoreboard sb = make(10);
  Scoreboard::SackResult r;
  sb.sack(SackBlock{S(4), S(7)}, r);  // 4, 5, 6 → 0..3 lost
  sb.mark_lost_rfc6675(3);
  EXPECT_EQ(sb.pending_retransmits(), 4u);
  auto n = sb.next_retransmit();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0u);
  EXPECT_EQ(sb.retransmit_run(*n, 64), 4u);
  EXPECT_EQ(sb.retransmit_run(*n, 2), 2u);
  sb.mark_retransmitted(0, Time::zero() + Duration::ms(50));
  sb.mark_retransmitted(1, Time::zero() + Duration::ms(50));
  EXPECT_EQ(sb.retrans_out(), 2u);
  EXPECT_EQ(sb.in_flight(), 10u - 3 - 4 + 2);
  n = sb.next_retransmit();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 2u);
  // Karn: acknowledging a retransmitted segment gives no RTT sample.
  const auto a = sb.ack_to(S(2));
  EXPECT_TRUE(a.retrans_acked);
  EXPECT_EQ(sb.retrans_out(), 0u);
  EXPECT_EQ(sb.lost_out(), 2u);
}

TEST(Scoreboard, SackOfRetransmittedSegmentClearsLostAndRetrans) {
  Scoreboard sb = make(6);
  Scoreboard::SackResult r;
  sb.sack(SackBlock{S(1), S(4)}, r);
  sb.mark_lost_rfc6675(3);  // 0 lost
  sb.mark_retransmitted(0, Time::zero());
  Scoreboard::SackResult r2;
  sb.sack(SackBlock{S(0), S(1)}, r2);
  EXPECT_EQ(r2.newly_sacked_retrans, 1u);
  EXPECT_FALSE(r2.has_first_sent);  // ever retransmitted: no SACK RTT sample
  EXPECT_EQ(sb.lost_out(), 0u);
  EXPECT_EQ(sb.retrans_out(), 0u);
  EXPECT_EQ(sb.sacked_out(), 4u);
}

TEST(Scoreboard, RtoMarksEverythingUnsackedLost) {
  Scoreboard sb = make(8);
  Scoreboard::SackResult r;
  sb.sack(SackBlock{S(5), S(6)}, r);
  sb.mark_retransmitted(0, Time::zero());  // (not lost-marked: forgotten anyway)
  EXPECT_EQ(sb.mark_all_lost(), 7u);
  EXPECT_EQ(sb.retrans_out(), 0u);
  EXPECT_EQ(sb.in_flight(), 0u);
  EXPECT_EQ(*sb.next_retransmit(), 0u);
  EXPECT_EQ(sb.retransmit_run(0, 64), 5u);  // stops at the SACKed segment 5
}

TEST(Scoreboard, RepeatedSackBlocksAreSkipped) {
  Scoreboard sb = make(20);
  Scoreboard::SackResult r;
  const SackBlock b1{S(2), S(4)};
  sb.sack(b1, r);
  sb.set_sack_cache(&b1, 1);
  // The same block grown at its end: only the new part is scanned and counted.
  const SackBlock b2{S(2), S(6)};
  Scoreboard::SackResult r2;
  sb.sack(b2, r2);
  EXPECT_EQ(r2.newly_sacked, 2u);
  EXPECT_EQ(sb.sacked_out(), 4u);
}

TEST(Scoreboard, RenoDupacksEmulateSackedOut) {
  // Linux tcp_add_reno_sack / tcp_remove_reno_sacks.
  Scoreboard sb = make(10);
  sb.reno_add_sack();
  sb.reno_add_sack();
  sb.reno_add_sack();
  EXPECT_EQ(sb.sacked_out(), 3u);
  sb.ack_to(S(2));
  sb.reno_remove_sacks(2);  // one hole filled, one dupack consumed
  EXPECT_EQ(sb.sacked_out(), 2u);
}

TEST(Scoreboard, GrowsBeyondInitialCapacity) {
  Scoreboard sb;
  sb.reset(kBase, kMss, 4);
  for (int i = 0; i < 1000; ++i) {
    sb.push(Time::zero() + Duration::us(i), kMss);
  }
  EXPECT_EQ(sb.packets_out(), 1000u);
  EXPECT_EQ(sb.at(999).sent, Time::zero() + Duration::us(999));
  EXPECT_EQ(sb.ack_to(S(1000)).acked, 1000u);
}

}  // namespace
}  // namespace nicsim::sim::tcp
