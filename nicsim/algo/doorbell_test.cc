// Doorbell: pins __netdev_tx_sent_queue / netdev_tx_completed_queue / netdev_tx_reset_queue
// behaviour as described in docs/mechanisms §2.3, §2.4, §2.6 and §3.1–§3.4.
#include "nicsim/algo/doorbell.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace nicsim::algo {
namespace {

constexpr uint32_t kMtu = 1514;

Time ms(int64_t v) { return Time::zero() + Duration::ms(v); }

void expect_identities(const Doorbell& db) {
  const Doorbell::Stats& s = db.stats();
  EXPECT_LE(s.kicks, s.packets);
  EXPECT_EQ(s.packets, s.kicked_packets + s.reset_unkicked_packets + db.pending_packets())
      << "packets != kicked + reset_unkicked + pending";
  EXPECT_EQ(db.stopped(), db.driver_stopped() || db.stack_stopped());
}

// Sends one stack batch of `n` packets: xmit_more on all but the last. Returns the kicks.
std::vector<bool> send_batch(Doorbell& db, int n, uint32_t bytes = kMtu) {
  std::vector<bool> kicks;
  for (int i = 0; i < n; ++i) {
    kicks.push_back(db.on_sent(bytes, /*xmit_more=*/i + 1 < n));
  }
  return kicks;
}

// A BQL queue whose DQL limit is 1514 and that is open: the §2.5 worked example
// (limit 0, send 1514 -> STACK_XOFF, complete 1514 -> limit 1514, avail 1514, woken).
Doorbell open_queue_with_limit_1514(const Doorbell::Params& p = {}) {
  Doorbell db(p, ms(0));
  EXPECT_TRUE(db.on_sent(kMtu, false));
  EXPECT_TRUE(db.stack_stopped());  // limit 0: the first packet crosses it (§2.3 step 4)
  EXPECT_TRUE(db.on_completed(1, kMtu, ms(1)));
  EXPECT_FALSE(db.stopped());
  EXPECT_EQ(db.dql()->limit(), 1514u);
  EXPECT_EQ(db.bql_avail(), 1514);
  return db;
}

TEST(Doorbell, Defaults) {
  const Doorbell::Params p;
  EXPECT_TRUE(p.bql);
  EXPECT_TRUE(p.uses_xmit_more);
  EXPECT_EQ(p.kick_cost, Duration::zero());
  EXPECT_EQ(p.dql.hold_time, Duration::s(1));
  Doorbell db;
  EXPECT_FALSE(db.stopped());
  EXPECT_NE(db.dql(), nullptr);
  EXPECT_EQ(db.bql_avail(), 0);  // fresh DQL: adj_limit 0, num_queued 0
}

TEST(Doorbell, BurstRingsTheDoorbellOnce) {
  // §3.3: xmit_more on all but the last packet -> one doorbell write for the batch.
  for (bool bql : {true, false}) {
    Doorbell db(Doorbell::Params{.bql = bql});
    const std::vector<bool> kicks = send_batch(db, 8);
    for (int i = 0; i < 7; ++i) {
      EXPECT_FALSE(kicks[i]) << "packet " << i << " bql " << bql;
    }
    EXPECT_TRUE(kicks[7]);
    EXPECT_EQ(db.stats().kicks, 1u);
    EXPECT_EQ(db.stats().batches, 1u);
    EXPECT_EQ(db.stats().largest_batch, 8u);
    EXPECT_EQ(db.pending_packets(), 0u);
    EXPECT_EQ(db.stats().packets, 8u);
    EXPECT_EQ(db.stats().bytes, 8u * kMtu);
    if (bql) {
      EXPECT_EQ(db.dql()->inflight(), 8u * kMtu);  // every packet is accounted (dql_queued)
    }
    // A second, shorter batch.
    send_batch(db, 3);
    EXPECT_EQ(db.stats().kicks, 2u);
    EXPECT_EQ(db.stats().largest_batch, 8u);
    expect_identities(db);
  }
}

TEST(Doorbell, PendingPacketsUntilTheLastOfABatch) {
  Doorbell db;
  db.on_sent(100, true);
  db.on_sent(100, true);
  EXPECT_EQ(db.pending_packets(), 2u);
  expect_identities(db);
  db.on_sent(100, false);
  EXPECT_EQ(db.pending_packets(), 0u);
  EXPECT_EQ(db.stats().kicked_packets, 3u);
}

TEST(Doorbell, BqlStopDecisionOnlyAtTheLastPacketOfABatch) {
  // §3.3: with xmit_more only dql_queued runs — no limit check, no STACK_XOFF — even after
  // the limit is crossed; netdev_tx_sent_queue at the last packet sets STACK_XOFF (§2.3).
  Doorbell db = open_queue_with_limit_1514();
  ASSERT_EQ(db.stats().stack_xoff_events, 1u);
  db.on_sent(1000, true);
  EXPECT_EQ(db.bql_avail(), 514);
  db.on_sent(1000, true);  // avail -486: crossed, but xmit_more
  EXPECT_EQ(db.bql_avail(), -486);
  EXPECT_FALSE(db.stack_stopped());
  db.on_sent(1000, true);
  EXPECT_FALSE(db.stack_stopped());
  EXPECT_TRUE(db.on_sent(1000, false));  // last packet: avail -2486 -> STACK_XOFF
  EXPECT_TRUE(db.stack_stopped());
  EXPECT_TRUE(db.stopped());
  EXPECT_EQ(db.bql_avail(), -2486);
  EXPECT_EQ(db.stats().stack_xoff_events, 2u);
  expect_identities(db);
}

TEST(Doorbell, LastPacketUnderTheLimitKeepsTheQueueOpen) {
  Doorbell db = open_queue_with_limit_1514();
  db.on_sent(500, true);
  db.on_sent(1014, false);  // avail exactly 0: not < 0 -> stays open (§2.3 step 3)
  EXPECT_EQ(db.bql_avail(), 0);
  EXPECT_FALSE(db.stopped());
}

TEST(Doorbell, DriverStopMidBatchKicksImmediately) {
  // §3.3: with xmit_more the kick is returned iff DRV_XOFF is set — no later packet will
  // come to ring the doorbell. Same rule without BQL (open-coded pre-4.20 form).
  for (bool bql : {true, false}) {
    Doorbell db(Doorbell::Params{.bql = bql});
    EXPECT_FALSE(db.on_sent(kMtu, true));
    EXPECT_FALSE(db.on_sent(kMtu, true));
    EXPECT_FALSE(db.set_driver_stopped(true));  // ring nearly full (netif_tx_stop_queue)
    EXPECT_TRUE(db.on_sent(kMtu, true));        // xmit_more, but the driver stopped the queue
    EXPECT_EQ(db.stats().drv_stopped_kicks, 1u);
    EXPECT_EQ(db.stats().kicks, 1u);
    EXPECT_EQ(db.stats().largest_batch, 3u);
    EXPECT_EQ(db.stats().driver_stops, 1u);
    EXPECT_TRUE(db.stopped());
    EXPECT_FALSE(db.stack_stopped());
    EXPECT_EQ(db.stats().sent_while_stack_stopped, 0u);  // DRV_XOFF set in-xmit is legal
    // Waking the driver queue reschedules the qdisc (netif_tx_wake_queue).
    EXPECT_TRUE(db.set_driver_stopped(false));
    EXPECT_FALSE(db.set_driver_stopped(false));  // already awake
    EXPECT_FALSE(db.stopped());
    expect_identities(db);
  }
}

TEST(Doorbell, DriverThatIgnoresXmitMoreKicksEveryPacket) {
  // §3.4: stmmac writes the tail pointer for every packet, with full netdev_tx_sent_queue.
  Doorbell db(Doorbell::Params{.uses_xmit_more = false});
  const std::vector<bool> kicks = send_batch(db, 5);
  for (bool k : kicks) {
    EXPECT_TRUE(k);
  }
  EXPECT_EQ(db.stats().kicks, 5u);
  EXPECT_EQ(db.stats().largest_batch, 1u);
  EXPECT_EQ(db.stats().batches, 1u);  // still one batch from the stack's point of view
  // Full BQL accounting on every packet: limit 0 -> the first packet set STACK_XOFF even
  // though the stack said xmit_more.
  EXPECT_EQ(db.stats().stack_xoff_events, 1u);
  EXPECT_TRUE(db.stack_stopped());
  // Contract breach bookkeeping: packets 2..5 were sent while STACK_XOFF was set (a real
  // stack would have stopped the batch, §3.1).
  EXPECT_EQ(db.stats().sent_while_stack_stopped, 4u);

  Doorbell nobql(Doorbell::Params{.bql = false, .uses_xmit_more = false});
  send_batch(nobql, 5);
  EXPECT_EQ(nobql.stats().kicks, 5u);
  EXPECT_FALSE(nobql.stopped());
  expect_identities(db);
  expect_identities(nobql);
}

TEST(Doorbell, CompletionWakesOnlyWhenAvailIsNonNegative) {
  // §2.4 steps 3-4. Limit 1514, nq = nc = 1514, adj_limit 3028.
  Doorbell db = open_queue_with_limit_1514();
  send_batch(db, 3);  // nq 6056, avail 3028 - 6056 = -3028 -> STACK_XOFF
  ASSERT_TRUE(db.stack_stopped());
  // Complete 1514: prev_inprogress 0 -> limit unchanged, adj_limit 1514 + 3028 = 4542,
  // avail 4542 - 6056 = -1514 < 0: stays stopped.
  EXPECT_FALSE(db.on_completed(1, kMtu, ms(2)));
  EXPECT_EQ(db.bql_avail(), -1514);
  EXPECT_TRUE(db.stack_stopped());
  // Complete 1514 more: busy interval, slack 1514, no shrink yet; adj_limit 1514 + 4542 =
  // 6056 -> avail exactly 0 >= 0: STACK_XOFF cleared and the qdisc rescheduled.
  EXPECT_TRUE(db.on_completed(1, kMtu, ms(3)));
  EXPECT_EQ(db.bql_avail(), 0);
  EXPECT_FALSE(db.stopped());
  EXPECT_EQ(db.stats().wakes, 2u);  // one in open_queue_with_limit_1514
  // A further completion with STACK_XOFF clear does not report a wake.
  EXPECT_FALSE(db.on_completed(1, kMtu, ms(4)));
  EXPECT_EQ(db.stats().wakes, 2u);
  EXPECT_EQ(db.stats().completed_packets, 4u);
  EXPECT_EQ(db.stats().completed_bytes, 4u * kMtu);
  expect_identities(db);
}

TEST(Doorbell, CompletionDoesNotRescheduleWhileTheDriverHoldsTheQueue) {
  // netif_schedule_queue reschedules only if neither XOFF bit is set; STACK_XOFF is still
  // cleared. The driver's own wake then reschedules (netif_tx_wake_queue).
  Doorbell db = open_queue_with_limit_1514();
  send_batch(db, 2);  // avail 3028 - 4542 = -1514 -> STACK_XOFF
  db.set_driver_stopped(true);
  ASSERT_TRUE(db.stack_stopped());
  EXPECT_FALSE(db.on_completed(2, 2 * kMtu, ms(2)));
  EXPECT_FALSE(db.stack_stopped());
  EXPECT_TRUE(db.driver_stopped());
  EXPECT_TRUE(db.set_driver_stopped(false));
  EXPECT_FALSE(db.stopped());
}

TEST(Doorbell, CompletionOfZeroBytesDoesNothing) {
  // §2.4 step 1: no DQL recalculation, no wake.
  Doorbell db = open_queue_with_limit_1514();
  send_batch(db, 3);
  ASSERT_TRUE(db.stack_stopped());
  const Dql::State dql_before = db.dql()->state();
  const Doorbell::Stats before = db.stats();
  EXPECT_FALSE(db.on_completed(0, 0, ms(5000)));
  EXPECT_FALSE(db.on_completed(3, 0, ms(5000)));
  EXPECT_TRUE(db.stack_stopped());
  EXPECT_EQ(db.dql()->state(), dql_before);
  EXPECT_EQ(db.stats().completions, before.completions);
  EXPECT_EQ(db.stats().completed_packets, before.completed_packets);
  EXPECT_EQ(db.stats().empty_completions, 2u);
}

TEST(Doorbell, ResetClearsStackXoffAndResetsDql) {
  // §2.2 / §2.6: netdev_tx_reset_queue clears STACK_XOFF and calls dql_reset; DRV_XOFF is
  // the driver's and stays.
  Doorbell db = open_queue_with_limit_1514();
  db.on_sent(kMtu, true);  // pending, not kicked
  db.on_sent(kMtu, true);
  db.on_sent(kMtu, false);
  db.on_sent(kMtu, true);
  ASSERT_TRUE(db.stack_stopped());
  db.set_driver_stopped(true);
  db.reset(ms(100));
  EXPECT_FALSE(db.stack_stopped());
  EXPECT_TRUE(db.driver_stopped());
  EXPECT_EQ(db.dql()->limit(), 0u);
  EXPECT_EQ(db.dql()->inflight(), 0u);
  EXPECT_EQ(db.dql()->stats().resets, 1u);
  EXPECT_EQ(db.pending_packets(), 0u);
  EXPECT_EQ(db.stats().reset_unkicked_packets, 1u);
  EXPECT_EQ(db.stats().resets, 1u);
  expect_identities(db);
}

TEST(Doorbell, WithoutBqlNoStackStopAndNoBulkDequeue) {
  // §3.2: qdisc_avail_bulklimit = dql_avail = 0 without BQL -> bytelimit < 0, no bulk.
  Doorbell db(Doorbell::Params{.bql = false});
  EXPECT_EQ(db.dql(), nullptr);
  for (int i = 0; i < 100; ++i) {
    db.on_sent(65'000, false);
  }
  EXPECT_EQ(db.bql_avail(), 0);
  EXPECT_FALSE(db.stopped());
  EXPECT_EQ(db.stats().stack_xoff_events, 0u);
  EXPECT_FALSE(db.on_completed(100, 6'500'000, ms(1)));
  EXPECT_EQ(db.stats().completions, 1u);
  EXPECT_EQ(db.stats().kicks, 100u);
  expect_identities(db);
}

TEST(Doorbell, BulkLimitFollowsBqlHeadroom) {
  // §3.2: a BQL queue offers dql_avail bytes of headroom to qdisc bulk dequeue.
  Doorbell db = open_queue_with_limit_1514();
  EXPECT_EQ(db.bql_avail(), 1514);
  db.on_sent(514, false);
  EXPECT_EQ(db.bql_avail(), 1000);
}

TEST(Doorbell, RejectsBadParams) {
  auto key_of = [](const Doorbell::Params& p) {
    auto e = p.validate();
    return e ? e->key : std::string("<valid>");
  };
  EXPECT_EQ(key_of(Doorbell::Params{}), "<valid>");
  EXPECT_EQ(key_of(Doorbell::Params{.kick_cost = -Duration::ns(1)}), "kick_cost");
  EXPECT_EQ(key_of(Doorbell::Params{.kick_cost = Duration::ns(300)}), "<valid>");
  EXPECT_EQ(key_of(Doorbell::Params{.dql = Dql::Params{.hz = 123}}), "dql.hz");
  EXPECT_EQ(key_of(Doorbell::Params{.dql = Dql::Params{.min_limit = -5}}), "dql.min_limit");
  EXPECT_EQ(key_of(Doorbell::Params{.bql = false, .dql = Dql::Params{.max_limit = -1}}),
            "dql.max_limit");
  EXPECT_THROW(Doorbell(Doorbell::Params{.kick_cost = -Duration::us(1)}), InvalidParams);
  EXPECT_THROW(Doorbell(Doorbell::Params{.dql = Dql::Params{.hold_time = Duration::zero()}}),
               InvalidParams);
}

TEST(Doorbell, RandomSequencesKeepTheContract) {
  // Property test: a stack that obeys the contract (§2.6: no packets while stopped; batches
  // end early when the driver stops the queue, §3.1) and a driver that stops at a ring
  // threshold. Invariants after every step:
  //  - the last packet of a stack batch always kicks; a mid-batch packet kicks iff DRV_XOFF;
  //  - with BQL, STACK_XOFF is only ever set by the last packet of a batch, and after it
  //    STACK_XOFF == (avail < 0) whenever it was clear before;
  //  - after a completion with avail >= 0, STACK_XOFF is clear;
  //  - identities of expect_identities().
  for (bool bql : {true, false}) {
    for (bool uses_more : {true, false}) {
      for (uint64_t seed = 1; seed <= 5; ++seed) {
        std::mt19937_64 rng(seed);
        // Odd seeds: a min_limit above the ring's capacity, so the ring (not BQL) is what
        // fills up and DRV_XOFF gets exercised together with BQL.
        const int64_t min_limit = seed % 2 == 1 ? 200'000 : 0;
        Doorbell db(Doorbell::Params{
            .bql = bql,
            .dql = Dql::Params{.min_limit = min_limit, .hold_time = Duration::ms(20), .hz = 1000},
            .uses_xmit_more = uses_more});
        const uint32_t ring = seed % 2 == 1 ? 64 : 16;
        std::vector<uint32_t> ring_bytes;  // packets in the ring, oldest first
        size_t ring_head = 0;
        Time now = ms(0);
        for (int step = 0; step < 5000; ++step) {
          if (rng() % 2 == 0 && !db.stopped()) {
            const int n = 1 + static_cast<int>(rng() % 12);  // the stack's batch
            for (int i = 0; i < n && !db.stopped(); ++i) {
              const uint32_t len = 60 + static_cast<uint32_t>(rng() % 1455);
              const bool more = i + 1 < n;
              ring_bytes.push_back(len);
              if (ring_bytes.size() - ring_head >= ring - 4) {
                db.set_driver_stopped(true);  // ring nearly full
              }
              const bool xoff_before = db.stack_stopped();
              const bool kick = db.on_sent(len, more);
              if (!more || !uses_more) {
                ASSERT_TRUE(kick);
              } else {
                ASSERT_EQ(kick, db.driver_stopped());
                if (bql) {
                  ASSERT_EQ(db.stack_stopped(), xoff_before);  // no STACK_XOFF mid-batch
                }
              }
              if (bql && (!more || !uses_more) && !xoff_before) {
                ASSERT_EQ(db.stack_stopped(), db.bql_avail() < 0);
              }
              if (!bql) {
                ASSERT_FALSE(db.stack_stopped());
              }
            }
          } else {
            now += Duration::us(static_cast<int64_t>(rng() % 3000));
            const size_t in_ring = ring_bytes.size() - ring_head;
            const size_t n = in_ring == 0 ? 0 : rng() % (in_ring + 1);
            uint32_t bytes = 0;
            for (size_t i = 0; i < n; ++i) {
              bytes += ring_bytes[ring_head++];
            }
            const bool was_stack_xoff = db.stack_stopped();
            const bool resched = db.on_completed(static_cast<uint32_t>(n), bytes, now);
            if (bql && bytes > 0 && db.bql_avail() >= 0) {
              ASSERT_FALSE(db.stack_stopped());
            }
            ASSERT_EQ(resched, was_stack_xoff && !db.stack_stopped() && !db.driver_stopped());
            if (db.driver_stopped() && ring_bytes.size() - ring_head <= ring / 4) {
              db.set_driver_stopped(false);  // wake at ring/4 (stmmac threshold, §2.6)
            }
          }
          if (bql) {
            ASSERT_EQ(db.dql()->inflight(), [&] {
              uint32_t s = 0;
              for (size_t i = ring_head; i < ring_bytes.size(); ++i) {
                s += ring_bytes[i];
              }
              return s;
            }());
          }
          ASSERT_EQ(db.stats().sent_while_stack_stopped, 0u);
          expect_identities(db);
        }
        EXPECT_GT(db.stats().kicks, 100u);
        if (uses_more) {
          EXPECT_LT(db.stats().kicks, db.stats().packets);
        } else {
          EXPECT_EQ(db.stats().kicks, db.stats().packets);
        }
        if (bql) {
          EXPECT_GT(db.stats().stack_xoff_events, 0u);
          EXPECT_GT(db.stats().wakes, 0u);
        }
        EXPECT_GT(db.stats().driver_stops, 0u);
      }
    }
  }
}

}  // namespace
}  // namespace nicsim::algo
