// Codel: pins the CoDel algorithm of include/net/codel*.h and sch_codel.c as described in
// docs/mechanisms/codel.md §8.1–8.4, on a manual clock.
//
// Most scenarios step time on a grid of 1000 CoDel units (1000 * 1024 ns = 1.024 ms) so that
// every time converts to CoDel time exactly; `at(u)` is the Time of CoDel unit u.
#include "nicsim/algo/codel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"
#include "nicsim/testing/recording_observer.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;
using testing::RecordingObserver;
using Event = RecordingObserver::Event;

constexpr uint8_t kEct0 = 0x02;
constexpr uint8_t kNotEct = 0x00;

Time at(int64_t units) { return Time::from_ns(units * 1024); }

// The fixed-point rec_inv_sqrt after counting up from a reset (count 1, 0xFFFF) with one
// Newton step per increment, as the dropping state does (§8.2, §8.4 step 3b).
std::vector<uint16_t> rec_inv_sqrt_series(uint32_t n) {
  std::vector<uint16_t> out;
  CodelVars v;
  v.count = 1;
  v.rec_inv_sqrt = kRecInvSqrtOne;
  out.push_back(v.rec_inv_sqrt);
  for (uint32_t c = 2; c <= n; ++c) {
    v.count = c;
    codel_newton_step(v);
    out.push_back(v.rec_inv_sqrt);
  }
  return out;
}

// docs/mechanisms/codel.md §8.1: defaults and the 1024 ns time unit.
TEST(Codel, DefaultsAndTimeBase) {
  const Codel::Params p;
  EXPECT_EQ(p.limit, 1000);
  EXPECT_EQ(p.target, 5_ms);
  EXPECT_EQ(p.interval, 100_ms);
  EXPECT_EQ(p.mtu, 1514);
  EXPECT_FALSE(p.ecn);
  EXPECT_FALSE(p.ce_threshold.has_value());
  const Codel q;
  EXPECT_EQ(q.config().target, 4882u);     // 5'000'000 >> 10
  EXPECT_EQ(q.config().interval, 97656u);  // 100'000'000 >> 10
  EXPECT_EQ(q.config().mtu, 1514u);
  EXPECT_FALSE(q.config().ecn);
  EXPECT_FALSE(q.config().ce_threshold_enabled);

  EXPECT_EQ(codel_time(Time::from_ns(1023)), 0u);
  EXPECT_EQ(codel_time(Time::from_ns(1024)), 1u);
  EXPECT_EQ(codel_time(Time::from_ns((int64_t{1} << 42) + 2048)), 2u);  // u32 wrap-around
  // Signed comparisons survive the wrap.
  EXPECT_TRUE(codel_time_after(5u, 0xFFFFFFF0u));
  EXPECT_TRUE(codel_time_before(0xFFFFFFF0u, 5u));
  EXPECT_FALSE(codel_time_after(7u, 7u));
  EXPECT_TRUE(codel_time_after_eq(7u, 7u));
}

// docs/mechanisms/codel.md §8.2: the Newton step against double precision 1/sqrt(count), counting
// up from a reset. Observed (and pinned here): the fixed point is never above 1/sqrt(count);
// it is exact to 1.5e-5 at count 1, 29.3 % low at count 2 (one step from x = 1 for count 2
// gives x = 0.5), 2.6 % low at 3, 2.5 % at 4, < 1.3 % from 5, < 0.6 % from 8 and < 0.5 % for
// every count from 16 to 100000 (the remaining error is the 16-bit quantisation).
TEST(Codel, InvSqrtNewtonStepMatchesDouble) {
  const std::vector<uint16_t> rec = rec_inv_sqrt_series(100'000);
  const std::vector<uint16_t> first = {65535, 32769, 36864, 31968, 28935, 26481, 24588, 23037};
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(rec[i], first[i]) << "count " << i + 1;
  }
  for (uint32_t c = 1; c <= rec.size(); ++c) {
    const double ideal = 1.0 / std::sqrt(static_cast<double>(c));
    const double got = rec[c - 1] / 65536.0;
    const double rel = (ideal - got) / ideal;
    ASSERT_GE(rel, 0.0) << "count " << c << " above 1/sqrt";
    double tol = 0.005;
    if (c == 2) {
      tol = 0.293;
    } else if (c < 5) {
      tol = 0.026;
    } else if (c < 8) {
      tol = 0.013;
    } else if (c < 16) {
      tol = 0.006;
    }
    ASSERT_LT(rel, tol) << "count " << c;
  }
  // The wrap of (3 << 32) - count * x^2 is kept (unsigned 64-bit, as the kernel): a count far
  // ahead of rec_inv_sqrt gives this value, not a saturated one.
  EXPECT_EQ(codel_newton(10, 0xFFFF), 0x800Du);
  EXPECT_EQ(codel_newton(3, 0xFFFF), 0x0002u);  // 3 - 3 * x^2 just below 0 wraps to ~0
}

// docs/mechanisms §8.2: control-law spacing at interval 100 ms for count 1..8. Exact values
// of the fixed-point computation (CoDel units, 1024 ns), compared with interval/sqrt(count):
// ideal 100, 70.7, 57.7, 50, 44.7, 40.8, 37.8, 35.4 ms; fixed point 99.998, 50.001, 56.249,
// 48.778, 44.151, 40.406, 37.517, 35.151 ms (count 2 is the 29 % outlier of the test above).
TEST(Codel, ControlLawSpacing) {
  const CodelTime interval = 97656;
  const std::vector<uint16_t> rec = rec_inv_sqrt_series(8);
  const std::vector<CodelTime> expected = {97654, 48829, 54931, 47635, 43116, 39459, 36638, 34327};
  for (uint32_t c = 1; c <= 8; ++c) {
    const CodelTime spacing = codel_control_law(1000, interval, rec[c - 1]) - 1000;
    EXPECT_EQ(spacing, expected[c - 1]) << "count " << c;
    const double ideal = interval / std::sqrt(static_cast<double>(c));
    const double tol = c == 1 ? 0.0001 : (c == 2 ? 0.293 : 0.026);
    EXPECT_NEAR(spacing, ideal, ideal * tol) << "count " << c;
  }
  EXPECT_NEAR(expected[0] * 1024 / 1e6, 100.0, 0.01);  // ms
  EXPECT_NEAR(expected[7] * 1024 / 1e6, 35.15, 0.01);
  // The sum wraps in CoDel time.
  EXPECT_EQ(codel_control_law(0xFFFFFFF0u, interval, kRecInvSqrtOne), 97654u - 16u);
}

// docs/mechanisms §8.3: no drop before sojourn >= target for a whole interval, and then only
// strictly after first_above_time; the backlog <= mtu exemption; an empty queue resets.
TEST(Codel, ShouldDropRules) {
  const CodelConfig cfg;  // target 4882, interval 97656, mtu 1514
  CodelVars v;
  CodelStats s;
  PacketFactory f;
  Packet p = f.make(1000);
  p.enqueue_ts = at(0);
  const uint64_t backlog = 5000;

  EXPECT_FALSE(codel_should_drop(&p, v, cfg, s, backlog, 4881));  // sojourn < target
  EXPECT_EQ(v.first_above_time, 0u);
  EXPECT_EQ(v.ldelay, 4881u);
  EXPECT_FALSE(codel_should_drop(&p, v, cfg, s, backlog, 4882));  // == target: above
  EXPECT_EQ(v.first_above_time, 4882u + 97656u);
  EXPECT_FALSE(codel_should_drop(&p, v, cfg, s, backlog, 50'000));
  EXPECT_FALSE(codel_should_drop(&p, v, cfg, s, backlog, 102'538));  // == first_above_time
  EXPECT_TRUE(codel_should_drop(&p, v, cfg, s, backlog, 102'539));   // strictly after
  EXPECT_EQ(s.maxpacket, 1000u);

  // The backlog exemption: backlog (after this dequeue) <= mtu never drops and resets.
  EXPECT_FALSE(codel_should_drop(&p, v, cfg, s, 1514, 102'540));
  EXPECT_EQ(v.first_above_time, 0u);
  EXPECT_FALSE(codel_should_drop(&p, v, cfg, s, 1515, 102'541));  // starts a new interval
  EXPECT_EQ(v.first_above_time, 102'541u + 97656u);

  // One packet below target in between restarts the interval.
  Packet young = f.make(100);
  young.enqueue_ts = at(200'000);
  EXPECT_FALSE(codel_should_drop(&young, v, cfg, s, backlog, 200'100));
  EXPECT_EQ(v.first_above_time, 0u);
  EXPECT_FALSE(codel_should_drop(&p, v, cfg, s, backlog, 200'101));
  EXPECT_EQ(v.first_above_time, 200'101u + 97656u);
  // An empty queue resets too.
  EXPECT_FALSE(codel_should_drop(nullptr, v, cfg, s, 0, 300'000));
  EXPECT_EQ(v.first_above_time, 0u);
}

// Same rule through the element: the first drop happens on the first dequeue strictly after
// first_above_time, not at it.
TEST(Codel, FirstDropStrictlyAfterInterval) {
  Codel q;
  PacketFactory f;
  for (int i = 0; i < 10; ++i) {
    q.enqueue(f.make(1000), at(0));
  }
  ASSERT_TRUE(q.dequeue(at(4882)));  // sojourn == target: first_above_time = 102538
  EXPECT_EQ(q.vars().first_above_time, 102'538u);
  auto p = q.dequeue(at(102'538));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 2u);
  EXPECT_FALSE(q.vars().dropping);
  p = q.dequeue(at(102'539));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 4u);  // id 3 dropped
  EXPECT_TRUE(q.vars().dropping);
  EXPECT_EQ(q.stats().codel.drop_count, 1u);
  EXPECT_EQ(q.stats().dropped_packets, 1u);
  EXPECT_EQ(q.stats().dropped_bytes, 1000u);
  testing::expect_stats_identities(q);
}

// Two 1000-byte packets: after the first dequeue the backlog is 1000 <= mtu, so however old
// they are CoDel never drops (docs/mechanisms/codel.md §8.3 step 3).
TEST(Codel, BacklogAtMostMtuIsNeverDropped) {
  Codel q;
  PacketFactory f;
  q.enqueue(f.make(1000), at(0));
  q.enqueue(f.make(1000), at(0));
  ASSERT_TRUE(q.dequeue(at(500'000)));
  EXPECT_EQ(q.vars().first_above_time, 0u);
  ASSERT_TRUE(q.dequeue(at(900'000)));
  EXPECT_EQ(q.stats().dropped_packets, 0u);
}

// docs/mechanisms/codel.md §8.4: the full drop schedule of a standing queue, by hand.
// 600 packets of 1000 B enqueued at t = 0; one dequeue at each k * 1000 units (k = 1, 2, ...),
// so the head's sojourn is k * 1000 units.
//  - k = 5: sojourn 5000 >= 4882 -> first_above_time = 5000 + 97656 = 102656.
//  - k = 103: 103000 > 102656 -> enter dropping: drop id 103, deliver 104; count = 1
//    (delta = 0), rec_inv_sqrt = 0xFFFF, drop_next = 103000 + 97654 = 200654.
//  - Then each drop happens at the first k with k * 1000 >= drop_next; it increments count,
//    does one Newton step and advances drop_next by the spacing of that count
//    (48829, 54931, 47635, 43116, 39459, 36638, 34327, 32403 — test ControlLawSpacing):
//    drop_next 200654 -> k 201 (count 2) -> 249483 -> k 250 (3) -> 304414 -> k 305 (4)
//    -> 352049 -> k 353 (5) -> 395165 -> k 396 (6) -> 434624 -> k 435 (7) -> 471262
//    -> k 472 (8) -> 505589 -> k 506 (9) -> 537992.
//  - The j-th drop (j from 1) removes id k + j - 1, since each earlier drop shifted ids by one.
TEST(Codel, StandingQueueDropSchedule) {
  Codel q;
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  for (int i = 0; i < 600; ++i) {
    q.enqueue(f.make(1000), at(0));
  }
  for (int64_t k = 1; k <= 520; ++k) {
    ASSERT_TRUE(q.dequeue(at(k * 1000)));
    if (k == 5) {
      EXPECT_EQ(q.vars().first_above_time, 102'656u);
    }
    if (k == 103) {
      EXPECT_EQ(q.vars().count, 1u);
      EXPECT_EQ(q.vars().drop_next, 200'654u);
    }
  }
  struct Drop {
    int64_t k;
    uint64_t id;
  };
  const std::vector<Drop> expected = {{103, 103}, {201, 202}, {250, 252}, {305, 308}, {353, 357},
                                      {396, 401}, {435, 441}, {472, 479}, {506, 514}};
  std::vector<Drop> got;
  for (const Event& e : obs.events) {
    if (e.kind == Event::kDrop) {
      EXPECT_EQ(e.reason, DropReason::kCodel);
      got.push_back({e.at.ns_since_epoch() / 1024 / 1000, e.id});
    }
  }
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(got[i].k, expected[i].k) << "drop " << i;
    EXPECT_EQ(got[i].id, expected[i].id) << "drop " << i;
  }
  EXPECT_EQ(q.vars().count, 9u);
  EXPECT_EQ(q.vars().lastcount, 1u);
  EXPECT_EQ(q.vars().rec_inv_sqrt, 21746u);
  EXPECT_EQ(q.vars().drop_next, 537'992u);
  EXPECT_TRUE(q.vars().dropping);
  EXPECT_EQ(q.stats().codel.drop_count, 9u);
  EXPECT_EQ(q.stats().codel.drop_len, 9000u);
  EXPECT_EQ(q.stats().dropped_packets, 9u);
  EXPECT_EQ(q.stats().dequeued_packets, 520u);
  EXPECT_EQ(q.backlog_packets(), 71u);
  testing::expect_stats_identities(q);
}

// Phase 1 of the count-reset scenarios: the standing queue above up to the 4th drop (k = 305:
// count 4, lastcount 1, rec_inv_sqrt 31968, drop_next 352049), then a drain at k = 306
// (before drop_next, so nothing more is dropped; the dequeue that leaves one packet sees
// backlog 1000 <= mtu and leaves the dropping state).
void run_phase_one(Codel& q, PacketFactory& f) {
  for (int i = 0; i < 600; ++i) {
    q.enqueue(f.make(1000), at(0));
  }
  for (int64_t k = 1; k <= 305; ++k) {
    ASSERT_TRUE(q.dequeue(at(k * 1000)));
  }
  ASSERT_EQ(q.vars().count, 4u);
  ASSERT_EQ(q.vars().lastcount, 1u);
  ASSERT_EQ(q.vars().rec_inv_sqrt, 31968u);
  ASSERT_EQ(q.vars().drop_next, 352'049u);
  while (q.dequeue(at(306'000))) {
  }
  ASSERT_EQ(q.stats().codel.drop_count, 4u);
  ASSERT_FALSE(q.vars().dropping);
}

// Phase 2: 20 packets enqueued at unit e; a dequeue at e + 4882 starts the interval and one at
// e + 4882 + 97656 + 1 re-enters the dropping state. Returns the re-entry time.
int64_t run_phase_two(Codel& q, PacketFactory& f, int64_t e) {
  for (int i = 0; i < 20; ++i) {
    q.enqueue(f.make(1000), at(e));
  }
  EXPECT_TRUE(q.dequeue(at(e + 4882)));
  const int64_t t = e + 4882 + 97656 + 1;
  EXPECT_TRUE(q.dequeue(at(t)));
  EXPECT_TRUE(q.vars().dropping);
  EXPECT_EQ(q.stats().codel.drop_count, 5u);
  return t;
}

// docs/mechanisms/codel.md §8.4 step 4c: re-entering soon after the last episode resumes with
// count = delta = count - lastcount = 4 - 1 = 3 and one Newton step from the old
// rec_inv_sqrt (31968 -> 36542), so the first spacing is 54451 units, not 97654.
TEST(Codel, CountResetResumesDeltaWhenReenteringSoon) {
  Codel q;
  PacketFactory f;
  run_phase_one(q, f);
  const int64_t t = run_phase_two(q, f, 400'000);  // t - drop_next = 150490 < 16 * interval
  EXPECT_EQ(t, 502'539);
  EXPECT_EQ(q.vars().count, 3u);
  EXPECT_EQ(q.vars().lastcount, 3u);
  EXPECT_EQ(q.vars().rec_inv_sqrt, 36542u);
  EXPECT_EQ(q.vars().drop_next, 502'539u + 54'451u);
}

// The boundary, both ways: now - drop_next = 16 * interval - 1 still resumes (count 3), and
// exactly 16 * interval = 1562496 units resets to count 1 (signed "before" is strict).
TEST(Codel, CountResetBoundaryAtSixteenIntervals) {
  {
    Codel q;
    PacketFactory f;
    run_phase_one(q, f);
    const int64_t t = run_phase_two(q, f, 352'049 + 1'562'495 - 102'539);
    EXPECT_EQ(t - 352'049, 1'562'495);
    EXPECT_EQ(q.vars().count, 3u);
    EXPECT_EQ(q.vars().rec_inv_sqrt, 36542u);
  }
  {
    Codel q;
    PacketFactory f;
    run_phase_one(q, f);
    const int64_t t = run_phase_two(q, f, 352'049 + 1'562'496 - 102'539);
    EXPECT_EQ(t - 352'049, 1'562'496);
    EXPECT_EQ(q.vars().count, 1u);
    EXPECT_EQ(q.vars().lastcount, 1u);
    EXPECT_EQ(q.vars().rec_inv_sqrt, kRecInvSqrtOne);
    EXPECT_EQ(q.vars().drop_next, static_cast<CodelTime>(t) + 97'654u);
  }
}

// A long pause (far more than 16 intervals) resets count to 1.
TEST(Codel, CountResetToOneAfterLongPause) {
  Codel q;
  PacketFactory f;
  run_phase_one(q, f);
  const int64_t t = run_phase_two(q, f, 10'000'000);
  EXPECT_EQ(q.vars().count, 1u);
  EXPECT_EQ(q.vars().rec_inv_sqrt, kRecInvSqrtOne);
  EXPECT_EQ(q.vars().drop_next, static_cast<CodelTime>(t) + 97'654u);
}

// docs/mechanisms/codel.md §8.4 (ECN): with ecn on, ECT packets are CE-marked and delivered where
// the control law would drop them; the schedule is the same as StandingQueueDropSchedule
// because marking advances drop_next exactly like a drop.
TEST(Codel, EcnMarksEctPacketsInsteadOfDropping) {
  Codel q(Codel::Params{.ecn = true});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  for (int i = 0; i < 600; ++i) {
    q.enqueue(f.make(1000, 0, 0, kEct0), at(0));
  }
  std::vector<int64_t> marked_at;
  for (int64_t k = 1; k <= 520; ++k) {
    auto p = q.dequeue(at(k * 1000));
    ASSERT_TRUE(p);
    EXPECT_EQ(p->id, static_cast<uint64_t>(k));  // nothing is dropped
    if (p->ecn() == Ecn::kCe) {
      marked_at.push_back(k);
    }
  }
  EXPECT_EQ(marked_at, (std::vector<int64_t>{103, 201, 250, 305, 353, 396, 435, 472, 506}));
  EXPECT_EQ(q.stats().codel.ecn_mark, 9u);
  EXPECT_EQ(q.stats().ecn_marked, 9u);
  EXPECT_EQ(q.stats().dropped_packets, 0u);
  EXPECT_EQ(obs.count(Event::kMark), 9u);
  EXPECT_EQ(q.vars().count, 9u);
  EXPECT_EQ(q.vars().drop_next, 537'992u);
}

// Mixed traffic: odd ids ECT(0), even ids not-ECT. At each scheduled signal the head packet
// is marked if it is ECT, dropped otherwise (then the next one is delivered), so:
// k 103 mark 103, k 201 mark 201, k 250 drop 250, k 305 drop 306, k 353 mark 355,
// k 396 drop 398, k 435 drop 438, k 472 drop 476, k 506 mark 511.
TEST(Codel, EcnDropsNotEctPackets) {
  Codel q(Codel::Params{.ecn = true});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  for (int i = 1; i <= 600; ++i) {
    q.enqueue(f.make(1000, 0, 0, i % 2 == 1 ? kEct0 : kNotEct), at(0));
  }
  for (int64_t k = 1; k <= 520; ++k) {
    ASSERT_TRUE(q.dequeue(at(k * 1000)));
  }
  EXPECT_EQ(obs.ids(Event::kMark), (std::vector<uint64_t>{103, 201, 355, 511}));
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{250, 306, 398, 438, 476}));
  EXPECT_EQ(q.stats().codel.ecn_mark, 4u);
  EXPECT_EQ(q.stats().codel.drop_count, 5u);
  testing::expect_stats_identities(q);
}

// docs/mechanisms/codel.md §8.4 step 3b: when several drops are overdue, one dequeue drops until
// drop_next is in the future (the while loop), but with ECN it marks once and delivers.
// Enter dropping at k = 103 (drop_next 200654), then dequeue at unit 400000: drop_next runs
// 200654 -> 249483 -> 304414 -> 352049 -> 395165 (all <= 400000, five drops, count 2..6)
// -> 434624 (> 400000, stop).
TEST(Codel, OverdueDropsLoopButEcnMarksOnce) {
  for (const bool ecn : {false, true}) {
    SCOPED_TRACE(ecn ? "ecn" : "no ecn");
    Codel q(Codel::Params{.ecn = ecn});
    PacketFactory f;
    for (int i = 0; i < 600; ++i) {
      q.enqueue(f.make(1000, 0, 0, kEct0), at(0));
    }
    for (int64_t k = 1; k <= 103; ++k) {
      ASSERT_TRUE(q.dequeue(at(k * 1000)));
    }
    ASSERT_EQ(q.vars().drop_next, 200'654u);
    auto p = q.dequeue(at(400'000));
    ASSERT_TRUE(p);
    if (ecn) {
      EXPECT_EQ(p->id, 104u);
      EXPECT_EQ(p->ecn(), Ecn::kCe);
      EXPECT_EQ(q.vars().count, 2u);  // the k = 103 signal (count 1) was a mark too
      EXPECT_EQ(q.stats().codel.ecn_mark, 2u);
      EXPECT_EQ(q.vars().drop_next, 249'483u);
    } else {
      EXPECT_EQ(p->id, 110u);  // 105..109 dropped
      EXPECT_EQ(q.vars().count, 6u);
      EXPECT_EQ(q.stats().codel.drop_count, 6u);
      EXPECT_EQ(q.vars().drop_next, 434'624u);
    }
  }
}

// Without ecn, ECT packets are dropped like any other.
TEST(Codel, EcnOffDropsEctPackets) {
  Codel q;
  PacketFactory f;
  for (int i = 0; i < 600; ++i) {
    q.enqueue(f.make(1000, 0, 0, kEct0), at(0));
  }
  for (int64_t k = 1; k <= 103; ++k) {
    auto p = q.dequeue(at(k * 1000));
    ASSERT_TRUE(p);
    EXPECT_NE(p->ecn(), Ecn::kCe);
  }
  EXPECT_EQ(q.stats().codel.drop_count, 1u);
  EXPECT_EQ(q.stats().codel.ecn_mark, 0u);
}

// docs/mechanisms/codel.md §8.4 step 5: CE threshold. Sojourn strictly above ce_threshold marks an
// ECT packet (counted in ce_mark), whether or not CoDel is in the dropping state; not-ECT
// packets are left alone and not counted.
TEST(Codel, CeThresholdMarks) {
  Codel q(Codel::Params{.ce_threshold = Duration::ns(1000 * 1024)});  // 1000 units
  EXPECT_EQ(q.config().ce_threshold, 1000u);
  PacketFactory f;
  q.enqueue(f.make(100, 0, 0, kEct0), at(0));
  q.enqueue(f.make(100, 0, 0, kEct0), at(0));
  q.enqueue(f.make(100, 0, 0, kNotEct), at(0));
  auto a = q.dequeue(at(1000));  // sojourn == threshold: not above
  auto b = q.dequeue(at(1001));
  auto c = q.dequeue(at(1002));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->ecn(), Ecn::kEct0);
  EXPECT_EQ(b->ecn(), Ecn::kCe);
  EXPECT_EQ(c->ecn(), Ecn::kNotEct);
  EXPECT_EQ(q.stats().codel.ce_mark, 1u);
  EXPECT_EQ(q.stats().ecn_marked, 1u);
  EXPECT_EQ(q.stats().dropped_packets, 0u);
}

// The selector/mask form: only packets whose DS field masked equals the selector are marked.
TEST(Codel, CeThresholdSelectorMask) {
  const uint8_t dscp_mask = 0xFC;
  const uint8_t dscp1 = 1 << 2;
  Codel q(Codel::Params{.ce_threshold = Duration::zero(),
                        .ce_threshold_selector = dscp1,
                        .ce_threshold_mask = dscp_mask});
  PacketFactory f;
  q.enqueue(f.make(100, 0, 0, dscp1 | kEct0), at(0));
  q.enqueue(f.make(100, 0, 0, (2 << 2) | kEct0), at(0));
  auto a = q.dequeue(at(10));
  auto b = q.dequeue(at(10));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->ecn(), Ecn::kCe);
  EXPECT_EQ(b->ecn(), Ecn::kEct0);
  EXPECT_EQ(q.stats().codel.ce_mark, 1u);
}

// sch_codel enqueue: tail drop while qlen >= limit; a packet stashed by peek still counts.
TEST(Codel, TailDropAtLimitCountsStash) {
  Codel q(Codel::Params{.limit = 2});
  PacketFactory f;
  RecordingObserver obs;
  q.set_observer(&obs);
  EXPECT_EQ(q.enqueue(f.make(100), at(0)), Verdict::kQueued);
  EXPECT_EQ(q.enqueue(f.make(200), at(0)), Verdict::kQueued);
  ASSERT_NE(q.peek(at(1)), nullptr);
  EXPECT_EQ(q.backlog_packets(), 2u);
  EXPECT_EQ(q.backlog_bytes(), 300u);
  EXPECT_EQ(q.enqueue(f.make(300), at(1)), Verdict::kDropped);
  EXPECT_EQ(q.stats().drop_overlimit, 1u);
  EXPECT_EQ(obs.ids(Event::kDrop), (std::vector<uint64_t>{3}));
  EXPECT_EQ(obs.events.back().reason, DropReason::kQueueFull);
  testing::expect_stats_identities(q);
}

// peek runs the dequeue logic once (CoDel may drop during peek) and the next dequeue returns
// the stashed packet without running CoDel again, even at a later time.
TEST(Codel, PeekStashesTheDequeuedPacket) {
  Codel q;
  PacketFactory f;
  for (int i = 0; i < 10; ++i) {
    q.enqueue(f.make(1000), at(0));
  }
  ASSERT_TRUE(q.dequeue(at(4882)));
  const Packet* p = q.peek(at(102'539));  // drops id 2, stashes id 3
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->id, 3u);
  EXPECT_EQ(q.stats().codel.drop_count, 1u);
  EXPECT_EQ(q.peek(at(102'539))->id, 3u);  // idempotent
  EXPECT_EQ(q.backlog_packets(), 8u);
  auto d = q.dequeue(at(900'000));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, 3u);
  EXPECT_EQ(q.stats().codel.drop_count, 1u);
  testing::expect_stats_identities(q);
}

TEST(Codel, RejectsBadParams) {
  auto key_of = [](const Codel::Params& p) {
    auto err = p.validate();
    return err ? err->key : std::string();
  };
  EXPECT_EQ(key_of(Codel::Params{.limit = 0}), "limit");
  EXPECT_EQ(key_of(Codel::Params{.limit = -3}), "limit");
  EXPECT_EQ(key_of(Codel::Params{.target = Duration::zero()}), "target");
  EXPECT_EQ(key_of(Codel::Params{.target = -5_ms}), "target");
  EXPECT_EQ(key_of(Codel::Params{.interval = Duration::zero()}), "interval");
  EXPECT_EQ(key_of(Codel::Params{.interval = 3000_s}), "interval");  // > 2^31 CoDel units
  EXPECT_EQ(key_of(Codel::Params{.mtu = -1}), "mtu");
  EXPECT_EQ(key_of(Codel::Params{.ce_threshold = -1_ms}), "ce_threshold");
  EXPECT_EQ(key_of(Codel::Params{}), "");
  EXPECT_EQ(key_of(Codel::Params{.interval = 2000_s}), "");
  EXPECT_THROW(Codel(Codel::Params{.limit = 0}), InvalidParams);
  try {
    Codel q(Codel::Params{.target = Duration::zero()});
    FAIL() << "no exception";
  } catch (const InvalidParams& e) {
    EXPECT_EQ(e.error().key, "target");
    EXPECT_NE(std::string(e.what()).find("must be > 0"), std::string::npos);
  }
}

TEST(Codel, Properties) {
  const std::vector<Codel::Params> sets = {
      Codel::Params{},
      Codel::Params{.limit = 20},  // tail drops
      // Tiny target and interval: CoDel drops often (the property driver steps <= 200 us).
      Codel::Params{.limit = 200, .target = 1_us, .interval = 300_us},
      Codel::Params{.limit = 200, .target = 1_us, .interval = 300_us, .ecn = true},
      Codel::Params{.limit = 100,
                    .target = 20_us,
                    .interval = 1_ms,
                    .mtu = 0,
                    .ecn = true,
                    .ce_threshold = 50_us},
  };
  for (size_t i = 0; i < sets.size(); ++i) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE("param set " + std::to_string(i));
      Codel q(sets[i]);
      testing::check_queue_properties(q, {.seed = seed});
      if (i >= 2) {
        EXPECT_GT(q.stats().codel.drop_count + q.stats().codel.ecn_mark, 0u) << "set " << i;
      }
    }
  }
}

}  // namespace
}  // namespace nicsim::algo
