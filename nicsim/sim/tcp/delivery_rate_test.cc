// DeliveryRate: tcp_rate.c's sample rules on hand-made sends and ACKs (manual clock).
#include "nicsim/sim/tcp/delivery_rate.h"

#include <gtest/gtest.h>

#include <vector>

namespace nicsim::sim::tcp {
namespace {

Time at_ms(int64_t ms) { return Time::zero() + Duration::ms(ms); }

struct Sent {
  RateTx tx;
  Time at;
  uint64_t end_seq;
};

// Ten segments sent 1 ms apart from an idle connection, delivered one per ACK 10 ms after
// their send: each sample is 1 segment per 1 ms (send and ACK intervals agree).
TEST(DeliveryRate, SteadyFlowGivesTheSendRate) {
  DeliveryRate r;
  std::vector<Sent> sent;
  for (uint32_t i = 0; i < 10; ++i) {
    sent.push_back({r.on_sent(at_ms(100 + i), i), at_ms(100 + i), (i + 1) * 1000ull});
  }
  EXPECT_EQ(sent[0].tx.first_tx, at_ms(100));  // idle: the flight starts at the first send
  EXPECT_EQ(sent[9].tx.first_tx, at_ms(100));
  for (uint32_t i = 0; i < 10; ++i) {
    RateSample rs;
    r.on_delivered(sent[i].tx, sent[i].at, sent[i].end_seq, false, rs);
    r.generate(1, 0, at_ms(110 + i), Duration::ms(10), rs);
    EXPECT_EQ(r.delivered(), i + 1);
    if (i == 0) {
      // The first: delivered 1 over max(send 0 ms, ACK 10 ms since the flight started).
      ASSERT_TRUE(rs.valid());
      EXPECT_EQ(rs.delivered, 1);
      EXPECT_EQ(rs.interval, Duration::ms(10));
      continue;
    }
    ASSERT_TRUE(rs.valid()) << i;
    // Reference = segment i, sent before anything was delivered (prior_delivered 0): the
    // sample counts all i + 1 over the longer of the send interval (i ms since the flight
    // started) and the ACK interval (10 + i ms since the delivery clock started).
    EXPECT_EQ(rs.prior_delivered, 0u);
    EXPECT_EQ(rs.delivered, static_cast<int64_t>(i + 1));
    EXPECT_EQ(rs.snd_interval, Duration::ms(i));
    EXPECT_EQ(rs.rcv_interval, Duration::ms(10 + i));
    EXPECT_EQ(rs.interval, Duration::ms(10 + i));
  }
}

// A segment sent after some data was delivered carries that state: the sample measures only
// what was delivered since.
TEST(DeliveryRate, LaterFlightMeasuresFromItsSnapshot) {
  DeliveryRate r;
  Sent a{r.on_sent(at_ms(0), 0), at_ms(0), 1000};
  Sent b{r.on_sent(at_ms(1), 1), at_ms(1), 2000};
  RateSample rs1;
  r.on_delivered(a.tx, a.at, a.end_seq, false, rs1);
  r.generate(1, 0, at_ms(10), Duration::ms(10), rs1);
  Sent c{r.on_sent(at_ms(10), 1), at_ms(10), 3000};  // sent after 1 delivered at 10 ms
  EXPECT_EQ(c.tx.delivered, 1u);
  EXPECT_EQ(c.tx.delivered_time, at_ms(10));
  RateSample rs2;
  r.on_delivered(b.tx, b.at, b.end_seq, false, rs2);
  r.on_delivered(c.tx, c.at, c.end_seq, false, rs2);  // the most recently sent: reference
  r.generate(2, 0, at_ms(25), Duration::ms(10), rs2);
  EXPECT_EQ(rs2.prior_delivered, 1u);
  EXPECT_EQ(rs2.delivered, 2);
  EXPECT_EQ(rs2.snd_interval, Duration::ms(10));  // c's send time - its flight's start (a's)
  EXPECT_EQ(rs2.rcv_interval, Duration::ms(15));  // 25 - 10
  EXPECT_EQ(rs2.interval, Duration::ms(15));
}

// A SACKed segment is counted once: the later cumulative ACK skips it.
TEST(DeliveryRate, SackedSegmentsAreNotCountedTwice) {
  DeliveryRate r;
  Sent a{r.on_sent(at_ms(0), 0), at_ms(0), 1000};
  Sent b{r.on_sent(at_ms(0), 1), at_ms(0), 2000};
  RateSample rs1;
  r.on_delivered(b.tx, b.at, b.end_seq, false, rs1);
  EXPECT_FALSE(b.tx.pending);
  r.generate(1, 0, at_ms(10), Duration::ms(10), rs1);
  RateSample rs2;
  r.on_delivered(b.tx, b.at, b.end_seq, false, rs2);  // skipped
  EXPECT_FALSE(rs2.has_prior);
  r.on_delivered(a.tx, a.at, a.end_seq, false, rs2);
  EXPECT_TRUE(rs2.has_prior);
  EXPECT_EQ(rs2.last_end_seq, 1000u);
}

// Invalid samples: no reference, or an interval shorter than min_rtt (ACK compression).
TEST(DeliveryRate, InvalidSamples) {
  DeliveryRate r;
  RateSample none;
  r.generate(0, 0, at_ms(5), Duration::ms(10), none);
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(none.delivered, -1);
  Sent a{r.on_sent(at_ms(0), 0), at_ms(0), 1000};
  RateSample fast;
  r.on_delivered(a.tx, a.at, a.end_seq, false, fast);
  r.generate(1, 0, at_ms(5), Duration::ms(10), fast);  // 5 ms < min_rtt 10 ms
  EXPECT_FALSE(fast.valid());
  EXPECT_EQ(fast.delivered, 1);
  EXPECT_EQ(r.delivered(), 1u);
}

// App-limited: samples whose segments were sent in the bubble are marked; the mark clears once
// the bubble (delivered + in flight at the time) has been delivered.
TEST(DeliveryRate, AppLimitedBubble) {
  DeliveryRate r;
  r.check_app_limited(true, 2, 10, 0);
  EXPECT_EQ(r.app_limited(), 2u);  // delivered 0 + in flight 2
  Sent a{r.on_sent(at_ms(0), 0), at_ms(0), 1000};
  EXPECT_TRUE(a.tx.app_limited);
  RateSample rs;
  r.on_delivered(a.tx, a.at, a.end_seq, false, rs);
  r.generate(1, 0, at_ms(20), Duration::ms(10), rs);
  EXPECT_TRUE(rs.app_limited);
  EXPECT_EQ(r.app_limited(), 2u);  // 1 delivered: not past the bubble yet
  RateSample rs2;
  r.generate(2, 0, at_ms(30), Duration::ms(10), rs2);
  EXPECT_EQ(r.app_limited(), 0u);  // 3 > 2
  // cwnd full, or a lost segment waiting: not app-limited.
  r.check_app_limited(true, 10, 10, 0);
  EXPECT_EQ(r.app_limited(), 0u);
  r.check_app_limited(true, 2, 10, 1);
  EXPECT_EQ(r.app_limited(), 0u);
}

}  // namespace
}  // namespace nicsim::sim::tcp
