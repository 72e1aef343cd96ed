// Dql: pins lib/dynamic_queue_limits.c behaviour as described in docs/mechanisms/bql.md §2.
// Every expected value below was computed by hand from the steps of §2.5.
#include "nicsim/algo/dql.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace nicsim::algo {
namespace {

constexpr uint32_t kUMax = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kMtu = 1514;

Time ms(int64_t v) { return Time::zero() + Duration::ms(v); }

void expect_identity(const Dql& d) {
  const Dql::Stats& s = d.stats();
  EXPECT_EQ(s.queued_bytes, s.completed_bytes + s.reset_discarded_bytes + d.inflight())
      << "queued_bytes != completed_bytes + reset_discarded_bytes + inflight";
}

// ---------------------------------------------------------------------------------------------
// Defaults, conversions, validation.

TEST(Dql, DefaultsAreLinuxDefaults) {
  // docs/mechanisms/bql.md §2.1: DQL_MAX_OBJECT = UINT_MAX/16, DQL_MAX_LIMIT = UINT_MAX/2 - that.
  EXPECT_EQ(kDqlMaxObject, 268'435'455u);
  EXPECT_EQ(kDqlMaxLimit, 1'879'048'192u);
  const Dql::Params p;
  EXPECT_EQ(p.min_limit, 0);
  EXPECT_EQ(p.max_limit, 1'879'048'192);
  EXPECT_EQ(p.hold_time, Duration::s(1));  // dql_init(..., HZ)
  EXPECT_EQ(p.hz, 250);                    // Debian CONFIG_HZ_250
  EXPECT_EQ(p.hold_time_jiffies(), 250u);  // = HZ jiffies

  // §2.2: limit 0, lowest_slack UINT_MAX, slack_start_time = now, adj_limit 0.
  Dql d(p, ms(1000));
  EXPECT_EQ(d.limit(), 0u);
  EXPECT_EQ(d.state().lowest_slack, kUMax);
  EXPECT_EQ(d.state().slack_start_time, 250u);
  EXPECT_EQ(d.state().adj_limit, 0u);
  EXPECT_EQ(d.avail(), 0);
  EXPECT_EQ(d.inflight(), 0u);
}

TEST(Dql, JiffiesConversion) {
  // jiffies = floor(now_ns * hz / 1e9), 32-bit wrapping (§2.5: time base is jiffies).
  EXPECT_EQ(to_jiffies(Time::zero(), 250), 0u);
  EXPECT_EQ(to_jiffies(Time::from_ns(3'999'999), 250), 0u);
  EXPECT_EQ(to_jiffies(Time::from_ns(4'000'000), 250), 1u);
  EXPECT_EQ(to_jiffies(ms(1000), 250), 250u);
  EXPECT_EQ(to_jiffies(ms(1000), 1000), 1000u);
  EXPECT_EQ(to_jiffies(ms(10), 300), 3u);
  EXPECT_EQ(to_jiffies(Time::from_ns(-1), 1000), kUMax);  // floor, then mod 2^32
  // 2^32 jiffies at HZ=1000 = 4,294,967.296 s: the counter wraps to 0.
  EXPECT_EQ(to_jiffies(Time::from_ns(4'294'967'296'000'000), 1000), 0u);
  EXPECT_EQ(to_jiffies(Time::from_ns(4'294'967'297'000'000), 1000), 1u);
  // hold_time rounds up to whole jiffies (msecs_to_jiffies).
  EXPECT_EQ((Dql::Params{.hold_time = Duration::ms(10), .hz = 250}).hold_time_jiffies(), 3u);
  EXPECT_EQ((Dql::Params{.hold_time = Duration::ns(1), .hz = 100}).hold_time_jiffies(), 1u);
  EXPECT_EQ((Dql::Params{.hold_time = Duration::ms(1000), .hz = 300}).hold_time_jiffies(), 300u);
}

TEST(Dql, RejectsBadParams) {
  auto key_of = [](const Dql::Params& p) {
    auto e = p.validate();
    return e ? e->key : std::string("<valid>");
  };
  EXPECT_EQ(key_of(Dql::Params{}), "<valid>");
  EXPECT_EQ(key_of(Dql::Params{.min_limit = -1}), "min_limit");
  EXPECT_EQ(key_of(Dql::Params{.min_limit = 5000, .max_limit = 4999}), "max_limit");
  EXPECT_EQ(key_of(Dql::Params{.max_limit = int64_t{kDqlMaxLimit} + 1}), "max_limit");
  EXPECT_EQ(key_of(Dql::Params{.max_limit = 0}), "<valid>");  // min 0 == max 0 is allowed
  EXPECT_EQ(key_of(Dql::Params{.hold_time = Duration::zero()}), "hold_time");
  EXPECT_EQ(key_of(Dql::Params{.hold_time = -Duration::ms(1)}), "hold_time");
  EXPECT_EQ(key_of(Dql::Params{.hold_time = Duration::s(100'000'000)}), "hold_time");
  EXPECT_EQ(key_of(Dql::Params{.hz = 0}), "hz");
  EXPECT_EQ(key_of(Dql::Params{.hz = 200}), "hz");
  for (int64_t hz : {100, 250, 300, 1000}) {
    EXPECT_EQ(key_of(Dql::Params{.hz = hz}), "<valid>") << hz;
  }
  EXPECT_THROW(Dql(Dql::Params{.min_limit = -1}), InvalidParams);
  EXPECT_THROW(Dql(Dql::Params{.hz = 64}), InvalidParams);
  try {
    Dql d(Dql::Params{.hold_time = Duration::zero()});
    FAIL() << "expected InvalidParams";
  } catch (const InvalidParams& e) {
    EXPECT_EQ(e.error().key, "hold_time");
  }
}

// ---------------------------------------------------------------------------------------------
// Enqueue and avail.

TEST(Dql, QueuedAndAvail) {
  // §2.3: last_obj_cnt = bytes, num_queued += bytes, avail = adj_limit - num_queued (signed).
  Dql d;
  d.queued(1000);
  EXPECT_EQ(d.state().last_obj_cnt, 1000u);
  EXPECT_EQ(d.state().num_queued, 1000u);
  EXPECT_EQ(d.avail(), -1000);
  d.queued(60);
  EXPECT_EQ(d.state().last_obj_cnt, 60u);
  EXPECT_EQ(d.avail(), -1060);
  EXPECT_EQ(d.inflight(), 1060u);
  EXPECT_EQ(d.stats().queued_calls, 2u);
  EXPECT_EQ(d.stats().queued_bytes, 1060u);
}

TEST(Dql, OversizeObjectIgnoredAndCounted) {
  // §2.1: DQL_MAX_OBJECT is the largest single enqueue (the kernel BUG_ONs above it).
  Dql d;
  d.queued(kDqlMaxObject);
  EXPECT_EQ(d.inflight(), kDqlMaxObject);
  const Dql::State before = d.state();
  d.queued(kDqlMaxObject + 1);
  EXPECT_EQ(d.state(), before);
  EXPECT_EQ(d.stats().oversize_errors, 1u);
  EXPECT_EQ(d.stats().queued_calls, 1u);
  expect_identity(d);
}

// ---------------------------------------------------------------------------------------------
// dql_completed (§2.5).

TEST(Dql, WorkedExampleFirstCompletion) {
  // §2.5 consequences: limit 0, queue 1514, complete 1514 -> limit 1514.
  // step 2 ovlimit = POSDIFF(1514, 0) = 1514; step 3 inprogress = 0 -> step 6 starvation:
  // limit += POSDIFF(1514, prev_num_queued 0) + prev_ovlimit 0 = 1514.
  Dql d(Dql::Params{}, ms(0));
  d.queued(kMtu);
  EXPECT_EQ(d.avail(), -1514);
  d.completed(kMtu, ms(4));
  EXPECT_EQ(d.limit(), 1514u);
  const Dql::State& s = d.state();
  EXPECT_EQ(s.prev_ovlimit, 0u);  // step 9: the limit changed, ovlimit forgotten
  EXPECT_EQ(s.num_completed, 1514u);
  EXPECT_EQ(s.prev_num_queued, 1514u);
  EXPECT_EQ(s.prev_last_obj_cnt, 1514u);
  EXPECT_EQ(s.adj_limit, 3028u);  // step 10: limit + completed
  EXPECT_EQ(s.slack_start_time, 1u);
  EXPECT_EQ(s.lowest_slack, kUMax);
  EXPECT_EQ(d.avail(), 1514);
  EXPECT_EQ(d.stats().starvations, 1u);
  EXPECT_EQ(d.stats().limit_increases, 1u);
  expect_identity(d);
}

TEST(Dql, GrowthSequenceUsesPosdiffAndPrevOvlimit) {
  // §2.5 step 6 over four completions, hand-computed.
  Dql d(Dql::Params{.hz = 1000}, ms(0));
  // C1: the worked example. limit 1514, nq = nc = prev_nq = 1514, adj 3028.
  d.queued(1514);
  d.completed(1514, ms(1));
  ASSERT_EQ(d.limit(), 1514u);

  // C2: queue 3 x 1000 (nq 4514, avail 3028-4514 = -1486), complete 2000.
  //   completed 3514; ovlimit = POSDIFF(3000, 1514) = 1486; inprogress = 1000;
  //   prev_inprogress = 1514-1514 = 0; all_prev = AFTER_EQ(3514, 1514) = true.
  //   Step 6: (1486 && !1000) no; (prev_ovlimit 0 && ..) no. Step 7: prev_inprogress 0 -> no.
  //   Limit unchanged, so prev_ovlimit := 1486.
  d.queued(1000);
  d.queued(1000);
  d.queued(1000);
  EXPECT_EQ(d.avail(), -1486);
  d.completed(2000, ms(2));
  EXPECT_EQ(d.limit(), 1514u);
  EXPECT_EQ(d.state().prev_ovlimit, 1486u);
  EXPECT_EQ(d.state().prev_num_queued, 4514u);
  EXPECT_EQ(d.state().num_completed, 3514u);
  EXPECT_EQ(d.state().adj_limit, 5028u);
  EXPECT_EQ(d.stats().starvations, 1u);

  // C3: queue 500 (nq 5014), complete 1500 (everything).
  //   completed 5014; ovlimit = POSDIFF(1500, 1514) = 0; inprogress 0;
  //   all_prev = AFTER_EQ(5014, 4514) = true, prev_ovlimit 1486 -> step 6:
  //   limit += POSDIFF(5014, 4514) + 1486 = 500 + 1486 -> 3500.
  d.queued(500);
  d.completed(1500, ms(3));
  EXPECT_EQ(d.limit(), 3500u);
  EXPECT_EQ(d.state().prev_ovlimit, 0u);
  EXPECT_EQ(d.state().adj_limit, 8514u);
  EXPECT_EQ(d.state().slack_start_time, 3u);
  EXPECT_EQ(d.stats().starvations, 2u);

  // C4: queue 4 x 1000 (nq 9014, avail 8514-9014 = -500), complete 4000 (everything).
  //   ovlimit = POSDIFF(4000, 3500) = 500, inprogress 0 -> step 6:
  //   limit += POSDIFF(9014, 5014) + 0 = 4000 -> 7500.
  for (int i = 0; i < 4; ++i) {
    d.queued(1000);
  }
  EXPECT_EQ(d.avail(), -500);
  d.completed(4000, ms(4));
  EXPECT_EQ(d.limit(), 7500u);
  EXPECT_EQ(d.state().prev_ovlimit, 0u);
  EXPECT_EQ(d.state().adj_limit, 16514u);
  EXPECT_EQ(d.avail(), 7500);
  EXPECT_EQ(d.stats().starvations, 3u);
  EXPECT_EQ(d.stats().limit_increases, 3u);
  EXPECT_EQ(d.stats().limit_high_water, 7500u);
  expect_identity(d);
}

// Brings a HZ=1000 Dql to limit 10000 with slack_start_time = 1 jiffy: queue 10000, complete
// it at t = 1 ms (starvation, §2.5 step 6). Then nq = nc = prev_nq = 10000.
Dql busy_queue_at_10000(const Dql::Params& p) {
  Dql d(p, ms(0));
  d.queued(10000);
  d.completed(10000, ms(1));
  EXPECT_EQ(d.limit(), 10000u);
  EXPECT_EQ(d.state().slack_start_time, 1u);
  return d;
}

TEST(Dql, SlackShrinkOnlyStrictlyAfterHoldTime) {
  // §2.5 step 7, HZ = 1000, hold 1 s = 1000 jiffies, slack_start_time = 1.
  Dql d = busy_queue_at_10000(Dql::Params{.hz = 1000});

  // A: queue 3 x 3000 (nq 19000), complete 3000: prev_inprogress = 0 -> neither branch.
  for (int i = 0; i < 3; ++i) {
    d.queued(3000);
  }
  d.completed(3000, ms(2));
  EXPECT_EQ(d.state().lowest_slack, kUMax);

  // B: queue 3000 (nq 22000), complete 3000 -> completed 16000, inprogress 6000,
  //    prev_inprogress 19000-13000 = 6000, all_prev = AFTER_EQ(16000, 19000) = false:
  //    slack = POSDIFF(10000 + 0, 2*3000) = 4000 -> lowest_slack 4000. 2 ms: no shrink.
  d.queued(3000);
  d.completed(3000, ms(3));
  EXPECT_EQ(d.state().lowest_slack, 4000u);

  // C: queue 3000 (nq 25000), complete 4000: slack = POSDIFF(10000, 8000) = 2000 -> lowest.
  d.queued(3000);
  d.completed(4000, ms(4));
  EXPECT_EQ(d.state().lowest_slack, 2000u);

  // D: queue 2000 (nq 27000), complete 2000: slack = POSDIFF(10000, 4000) = 6000; lowest
  //    stays 2000 (the minimum over the hold period).
  d.queued(2000);
  d.completed(2000, ms(5));
  EXPECT_EQ(d.state().lowest_slack, 2000u);
  EXPECT_EQ(d.limit(), 10000u);

  // E: at exactly slack_start_time + hold = 1 + 1000 = 1001 jiffies: time_after is false.
  d.queued(2000);
  d.completed(2000, ms(1001));
  EXPECT_EQ(d.limit(), 10000u);
  EXPECT_EQ(d.state().lowest_slack, 2000u);
  EXPECT_EQ(d.stats().slack_shrinks, 0u);

  // F: one jiffy later: limit = POSDIFF(10000, 2000) = 8000, slack_start_time = 1002,
  //    lowest_slack reset to UINT_MAX.
  d.queued(2000);
  d.completed(2000, ms(1002));
  EXPECT_EQ(d.limit(), 8000u);
  EXPECT_EQ(d.state().slack_start_time, 1002u);
  EXPECT_EQ(d.state().lowest_slack, kUMax);
  EXPECT_EQ(d.state().adj_limit, 8000u + d.state().num_completed);
  EXPECT_EQ(d.stats().slack_shrinks, 1u);
  EXPECT_EQ(d.stats().limit_decreases, 1u);
  expect_identity(d);
}

TEST(Dql, HoldTimeCountsWholeJiffies) {
  // HZ = 250 (4 ms jiffies): start at t = 1 ms -> jiffy 0; hold = 250 jiffies. At
  // t = 1003.999 ms (> 1 s later in ns) the jiffy count is 250: time_after(250, 250) false.
  // At t = 1004 ms jiffy 251: shrink. §2.5 "the hold-time comparison is strict".
  Dql d(Dql::Params{}, ms(0));
  d.queued(10000);
  d.completed(10000, ms(1));
  ASSERT_EQ(d.state().slack_start_time, 0u);
  for (int i = 0; i < 3; ++i) {
    d.queued(3000);
  }
  d.completed(3000, ms(2));  // prev_inprogress 0: no slack yet
  d.queued(3000);
  d.completed(3000, Time::from_ns(1'003'999'999));  // slack 4000, jiffy 250: no shrink
  EXPECT_EQ(d.state().lowest_slack, 4000u);
  EXPECT_EQ(d.limit(), 10000u);
  d.queued(3000);
  d.completed(3000, ms(1004));  // slack 4000 again, jiffy 251: shrink by 4000
  EXPECT_EQ(d.limit(), 6000u);
  EXPECT_EQ(d.state().slack_start_time, 251u);
}

TEST(Dql, SlackLastObjsRule) {
  // §2.5 step 7: slack_last_objs = prev_ovlimit ? POSDIFF(prev_last_obj_cnt, prev_ovlimit) : 0,
  // and slack = max(slack, slack_last_objs).
  Dql d = busy_queue_at_10000(Dql::Params{.hz = 1000});
  // X: queue 6000 + 6000 (nq 22000, last_obj 6000), complete 6000: completed 16000,
  //    ovlimit = POSDIFF(12000, 10000) = 2000, prev_inprogress 0 -> no branch;
  //    limit unchanged so prev_ovlimit = 2000, prev_last_obj_cnt = 6000.
  d.queued(6000);
  d.queued(6000);
  d.completed(6000, ms(2));
  ASSERT_EQ(d.state().prev_ovlimit, 2000u);
  ASSERT_EQ(d.state().prev_last_obj_cnt, 6000u);
  // Y: queue 9000 (nq 31000), complete 5500: completed 21500, ovlimit = POSDIFF(15000, 10000)
  //    = 5000, inprogress 9500, prev_inprogress 22000-16000 = 6000, all_prev false.
  //    slack = POSDIFF(10000 + 2000, 11000) = 1000; slack_last_objs = POSDIFF(6000, 2000)
  //    = 4000 -> slack 4000.
  d.queued(9000);
  d.completed(5500, ms(3));
  EXPECT_EQ(d.state().lowest_slack, 4000u);
  EXPECT_EQ(d.limit(), 10000u);
  EXPECT_EQ(d.state().prev_ovlimit, 5000u);
  EXPECT_EQ(d.state().prev_last_obj_cnt, 9000u);
  // Z: queue nothing, complete 500: completed 22000 >= prev_num_queued 31000? no.
  //    slack = POSDIFF(10000 + 5000, 1000) = 14000; slack_last_objs = POSDIFF(9000, 5000)
  //    = 4000 -> 14000; lowest stays 4000.
  d.completed(500, ms(4));
  EXPECT_EQ(d.state().lowest_slack, 4000u);
}

TEST(Dql, SlackLastObjsIsZeroWithoutPrevOvlimit) {
  // §2.5 step 7 with prev_ovlimit == 0: slack_last_objs = 0, the raw slack is used.
  Dql d = busy_queue_at_10000(Dql::Params{.hz = 1000});
  // Queue 6000 + 4000 (nq 20000): inflight 10000 == limit -> ovlimit 0. Complete 6000
  // (completed 16000): prev_inprogress 0 -> no branch; prev_ovlimit = 0, prev_nq = 20000.
  d.queued(6000);
  d.queued(4000);
  d.completed(6000, ms(2));
  ASSERT_EQ(d.state().prev_ovlimit, 0u);
  // Queue 9000 (nq 29000), complete 3500: completed 19500 < prev_nq 20000 (all_prev false),
  // inprogress 9500, prev_inprogress 4000: slack = POSDIFF(10000 + 0, 7000) = 3000.
  d.queued(9000);
  d.completed(3500, ms(3));
  EXPECT_EQ(d.state().lowest_slack, 3000u);
}

TEST(Dql, LimitChangeForgetsOvlimitButClampedLimitKeepsIt) {
  // §2.5 steps 8-9 with max_limit 1514. First completion: 0 -> 1514, changed -> ovlimit 0.
  Dql d(Dql::Params{.max_limit = 1514, .hz = 1000}, ms(0));
  d.queued(1514);
  d.completed(1514, ms(1));
  ASSERT_EQ(d.limit(), 1514u);
  EXPECT_EQ(d.state().prev_ovlimit, 0u);
  // Queue 3000, complete 3000: ovlimit = POSDIFF(3000, 1514) = 1486, inprogress 0 -> grow
  // to 1514 + 3000 = 4514, clamp to 1514: unchanged, so ovlimit 1486 is kept.
  d.queued(1500);
  d.queued(1500);
  d.completed(3000, ms(2));
  EXPECT_EQ(d.limit(), 1514u);
  EXPECT_EQ(d.state().prev_ovlimit, 1486u);
  EXPECT_EQ(d.stats().starvations, 2u);
  EXPECT_EQ(d.stats().limit_increases, 1u);
}

TEST(Dql, ClampToMinLimit) {
  // §2.5 step 8 and §2.2 (reset sets limit = min_limit in current kernels).
  Dql d(Dql::Params{.min_limit = 5000, .hz = 1000}, ms(0));
  EXPECT_EQ(d.limit(), 5000u);
  EXPECT_EQ(d.avail(), 0);  // adj_limit is 0 until the first completion
  d.queued(1514);
  d.completed(1514, ms(1));  // would grow to 1514; clamped up to 5000 -> unchanged
  EXPECT_EQ(d.limit(), 5000u);
  EXPECT_EQ(d.state().prev_ovlimit, 0u);  // ovlimit = POSDIFF(1514, 5000) = 0
  EXPECT_EQ(d.avail(), 5000);
  // A shrink can never go below min_limit: busy queue with lots of slack for > 1 s.
  Time t = ms(1);
  d.queued(3000);
  d.queued(1000);
  for (int i = 0; i < 2000; ++i) {
    t += Duration::ms(1);
    d.queued(1000);
    d.completed(1000, t);
  }
  EXPECT_GE(d.stats().slack_shrinks, 1u);
  EXPECT_EQ(d.limit(), 5000u);
}

TEST(Dql, ClampToMaxLimit) {
  Dql d(Dql::Params{.max_limit = 2000}, ms(0));
  d.queued(3000);
  d.completed(3000, ms(4));  // would grow to 3000
  EXPECT_EQ(d.limit(), 2000u);
  EXPECT_EQ(d.state().adj_limit, 5000u);
  EXPECT_EQ(d.stats().limit_high_water, 2000u);
}

TEST(Dql, CompletionOfZeroBytesChangesNothing) {
  // §2.4 step 1. Construct a state where a raw dql_completed(0) WOULD change things:
  // prev_ovlimit != 0 and all_prev_completed (nc == prev_nq) -> step 6 would fire.
  Dql d(Dql::Params{.max_limit = 1514, .hz = 1000}, ms(0));
  d.queued(1514);
  d.completed(1514, ms(1));
  d.queued(3000);
  d.completed(3000, ms(2));
  ASSERT_EQ(d.state().prev_ovlimit, 1486u);
  ASSERT_EQ(d.state().num_completed, d.state().prev_num_queued);
  const Dql::State before = d.state();
  const Dql::Stats stats_before = d.stats();
  d.completed(0, ms(5000));
  EXPECT_EQ(d.state(), before);
  EXPECT_EQ(d.stats().starvations, stats_before.starvations);
  EXPECT_EQ(d.stats().completed_calls, stats_before.completed_calls);
  EXPECT_EQ(d.stats().empty_completions, 1u);
}

TEST(Dql, CompletingMoreThanInflightIsRejected) {
  // §2.5 precondition count <= num_queued - num_completed (kernel BUG_ON).
  Dql d;
  d.queued(1000);
  const Dql::State before = d.state();
  d.completed(1001, ms(1));
  EXPECT_EQ(d.state(), before);
  EXPECT_EQ(d.stats().completion_errors, 1u);
  d.completed(1000, ms(1));
  EXPECT_EQ(d.inflight(), 0u);
  d.completed(1, ms(2));
  EXPECT_EQ(d.stats().completion_errors, 2u);
  expect_identity(d);
}

TEST(Dql, ResetForgetsDynamicStateButNotAdjLimit) {
  // §2.2: dql_reset clears counters, limit -> min_limit, slack_start_time = now; adj_limit is
  // not touched, so avail() keeps the old adj_limit until the next completion.
  Dql d(Dql::Params{.hz = 1000}, ms(0));
  d.queued(4000);
  d.completed(4000, ms(1));  // limit 4000, adj_limit 8000
  d.queued(1000);
  d.reset(ms(50));
  const Dql::State& s = d.state();
  EXPECT_EQ(s.limit, 0u);
  EXPECT_EQ(s.num_queued, 0u);
  EXPECT_EQ(s.num_completed, 0u);
  EXPECT_EQ(s.prev_num_queued, 0u);
  EXPECT_EQ(s.last_obj_cnt, 0u);
  EXPECT_EQ(s.prev_last_obj_cnt, 0u);
  EXPECT_EQ(s.prev_ovlimit, 0u);
  EXPECT_EQ(s.lowest_slack, kUMax);
  EXPECT_EQ(s.slack_start_time, 50u);
  EXPECT_EQ(s.adj_limit, 8000u);
  EXPECT_EQ(d.avail(), 8000);
  EXPECT_EQ(d.stats().resets, 1u);
  EXPECT_EQ(d.stats().reset_discarded_bytes, 1000u);
  expect_identity(d);
}

// ---------------------------------------------------------------------------------------------
// 32-bit wrap-around.

struct Op {
  enum Kind { kQueue, kComplete, kAdvance } kind;
  uint32_t value;
};

// A deterministic operation mix that exercises growth, slack tracking and shrinking.
std::vector<Op> mixed_ops(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<Op> ops;
  for (int i = 0; i < n; ++i) {
    const int r = static_cast<int>(rng() % 10);
    if (r < 5) {
      ops.push_back({Op::kQueue, static_cast<uint32_t>(60 + rng() % 9000)});
    } else if (r < 9) {
      ops.push_back({Op::kComplete, static_cast<uint32_t>(rng() % 4)});  // selector
    } else {
      ops.push_back({Op::kAdvance, static_cast<uint32_t>(rng() % 400)});  // ms
    }
  }
  return ops;
}

void apply(Dql& d, const Op& op, Time& t, std::mt19937_64& rng) {
  switch (op.kind) {
    case Op::kQueue:
      d.queued(op.value);
      break;
    case Op::kComplete: {
      const uint32_t in = d.inflight();
      const uint32_t count =
          op.value == 0 ? in : (in == 0 ? 0 : 1 + static_cast<uint32_t>(rng() % in));
      d.completed(count, t);
      break;
    }
    case Op::kAdvance:
      t += Duration::ms(op.value);
      break;
  }
}

TEST(Dql, WrapAroundGivesIdenticalLimitEvolution) {
  // §2.1: all comparisons are on signed 32-bit differences, so starting the byte counters
  // just below 2^32 (they wrap within the first few operations) must not change anything.
  for (uint32_t base : {kUMax - 5000, kUMax, 0x8000'0000u - 3000, 0x7fff'ffffu}) {
    Dql plain(Dql::Params{.hold_time = Duration::ms(200), .hz = 1000}, ms(0), 0);
    Dql wrapped(Dql::Params{.hold_time = Duration::ms(200), .hz = 1000}, ms(0), base);
    Time t1 = ms(0);
    Time t2 = ms(0);
    std::mt19937_64 rng1(7);
    std::mt19937_64 rng2(7);
    const std::vector<Op> ops = mixed_ops(42, 20'000);
    for (size_t i = 0; i < ops.size(); ++i) {
      apply(plain, ops[i], t1, rng1);
      apply(wrapped, ops[i], t2, rng2);
      ASSERT_EQ(plain.limit(), wrapped.limit()) << "op " << i << " base " << base;
      ASSERT_EQ(plain.avail(), wrapped.avail()) << "op " << i;
      ASSERT_EQ(plain.inflight(), wrapped.inflight()) << "op " << i;
      ASSERT_EQ(plain.state().prev_ovlimit, wrapped.state().prev_ovlimit) << "op " << i;
      ASSERT_EQ(plain.state().lowest_slack, wrapped.state().lowest_slack) << "op " << i;
      ASSERT_EQ(plain.state().num_queued + base, wrapped.state().num_queued) << "op " << i;
    }
    // The sequence really grew and shrank the limit, and the counters really wrapped.
    EXPECT_GT(wrapped.stats().starvations, 10u);
    EXPECT_GT(wrapped.stats().slack_shrinks, 5u);
    if (base > kUMax - 10'000) {
      EXPECT_LT(wrapped.state().num_queued, base);  // the byte counters wrapped
    }
  }
}

TEST(Dql, WrapAroundByPushingFourGiBThrough) {
  // Push > 2^32 bytes through in DQL_MAX_OBJECT chunks (the largest allowed enqueue):
  // 17 x (268,435,455 + 1000) = 4,563,419,735 bytes. Counters wrap; inflight, avail and the
  // limit stay right.
  constexpr uint32_t kM = kDqlMaxObject;
  Dql d(Dql::Params{.hz = 1000}, ms(0));
  uint64_t total = 0;
  for (int i = 0; i < 17; ++i) {
    d.queued(kM);
    d.queued(1000);
    total += kM + 1000u;
    EXPECT_EQ(d.inflight(), kM + 1000u);
    d.completed(kM, ms(i + 1));
    EXPECT_EQ(d.inflight(), 1000u);
    if (i == 0) {
      // ovlimit = POSDIFF(M + 1000, 0) = M + 1000, inprogress 1000, prev_inprogress 0:
      // neither branch, the limit stays 0 and prev_ovlimit remembers M + 1000.
      EXPECT_EQ(d.limit(), 0u);
      EXPECT_EQ(d.state().prev_ovlimit, kM + 1000u);
    }
    d.completed(1000, ms(i + 1));
    EXPECT_EQ(d.inflight(), 0u);
    // i == 0: ovlimit 1000, inprogress 0 -> step 6: limit += POSDIFF(M + 1000, M + 1000)
    // + prev_ovlimit (M + 1000). Afterwards inflight never exceeds the limit: no change.
    EXPECT_EQ(d.limit(), kM + 1000u) << i;
    EXPECT_EQ(d.avail(), static_cast<int32_t>(kM + 1000u)) << i;
  }
  EXPECT_EQ(d.state().num_queued, static_cast<uint32_t>(total));
  EXPECT_EQ(d.state().num_queued, 268'452'439u);  // 4,563,419,735 - 2^32: it wrapped
  EXPECT_EQ(d.stats().queued_bytes, total);
  EXPECT_EQ(d.stats().starvations, 1u);
  expect_identity(d);
}

TEST(Dql, JiffiesWrapDoesNotBreakHoldTime) {
  // The jiffies counter wraps at 2^32 (HZ=1000: t = 4,294,967.296 s). A slack period that
  // starts 500 jiffies before the wrap still expires exactly hold_time later.
  const int64_t wrap_ms = 4'294'967'296;
  Dql d(Dql::Params{.hz = 1000}, ms(wrap_ms - 600));
  d.queued(10000);
  d.completed(10000, ms(wrap_ms - 500));  // slack_start_time = 2^32 - 500
  ASSERT_EQ(d.state().slack_start_time, kUMax - 499);
  for (int i = 0; i < 3; ++i) {
    d.queued(3000);
  }
  d.completed(3000, ms(wrap_ms - 499));
  d.queued(3000);
  d.completed(3000, ms(wrap_ms + 500));  // jiffy 500 == start + 1000: not after
  EXPECT_EQ(d.limit(), 10000u);
  d.queued(3000);
  d.completed(3000, ms(wrap_ms + 501));
  EXPECT_EQ(d.limit(), 6000u);  // shrunk by lowest slack 4000
}

// ---------------------------------------------------------------------------------------------
// Convergence.

struct ConvergenceResult {
  uint32_t min_limit = kUMax;
  uint32_t max_limit = 0;
  uint64_t hw_starved_intervals = 0;  // intervals where the device had < B bytes to send
  uint64_t shrinks_after_convergence = 0;
};

// Device completes B bytes at the end of every 250 us interval; right after each completion
// the stack refills the queue with 1514-byte packets until avail() < 0 (the packet crossing
// the limit is accepted, §2.3). Records the limit band over the last 5 of 10 seconds.
ConvergenceResult run_convergence(uint32_t bytes_per_interval) {
  Dql d(Dql::Params{.hz = 1000}, ms(0));
  ConvergenceResult r;
  Time t = ms(0);
  const int kIntervals = 40'000;
  uint64_t shrinks_at_half = 0;
  for (int i = 0; i < kIntervals; ++i) {
    while (d.avail() >= 0) {
      d.queued(kMtu);
    }
    t += Duration::us(250);
    if (i >= kIntervals / 2 && d.inflight() < bytes_per_interval) {
      ++r.hw_starved_intervals;
    }
    d.completed(std::min(d.inflight(), bytes_per_interval), t);
    if (i == kIntervals / 2) {
      shrinks_at_half = d.stats().slack_shrinks;
    }
    if (i >= kIntervals / 2) {
      r.min_limit = std::min(r.min_limit, d.limit());
      r.max_limit = std::max(r.max_limit, d.limit());
    }
  }
  r.shrinks_after_convergence = d.stats().slack_shrinks - shrinks_at_half;
  return r;
}

TEST(Dql, ConvergesToTwiceTheBytesPerCompletion) {
  // Band computed from §2.5 for this arrival pattern (B = bytes per completion, P = 1514):
  //  - while the limit is below ~2B, the bytes outstanding at one completion are all done at
  //    the next one (all_prev_completed) and the queue was over the limit (prev_ovlimit), so
  //    step 6 grows the limit by (2B - (L + ov)) + ov, i.e. to exactly 2B;
  //  - at L = 2B the queue is busy for the whole interval and the slack is ov <= P, so after
  //    each hold time the limit shrinks by at most P and the next completion regrows it.
  // => L oscillates in [2B - P, 2B] (B need not be a multiple of P: the refill overshoots the
  //    limit by at most one packet either way). At most one shrink per hold time (1 s).
  for (uint32_t b : {30'280u /* 20 x 1514 */, 10'000u, 100'000u, 64'000u}) {
    const ConvergenceResult r = run_convergence(b);
    EXPECT_GE(r.min_limit, 2 * b - kMtu) << "B=" << b;
    EXPECT_LE(r.max_limit, 2 * b) << "B=" << b;
    EXPECT_EQ(r.max_limit, 2 * b) << "B=" << b;  // regrowth lands exactly on 2B
    EXPECT_EQ(r.hw_starved_intervals, 0u) << "B=" << b;
    EXPECT_GE(r.shrinks_after_convergence, 4u) << "B=" << b;
    EXPECT_LE(r.shrinks_after_convergence, 5u) << "B=" << b;  // <= one per second
  }
}

// ---------------------------------------------------------------------------------------------
// Differential test against a straightforward 64-bit reference with explicit modulo 2^32.

class RefDql {
 public:
  RefDql(const Dql::Params& p, uint64_t now_ns, uint64_t base)
      : hz_(static_cast<uint64_t>(p.hz)),
        max_limit_(static_cast<uint64_t>(p.max_limit)),
        min_limit_(static_cast<uint64_t>(p.min_limit)),
        hold_(p.hold_time_jiffies()) {
    adj_limit_ = base;
    reset(now_ns);
    num_queued_ = num_completed_ = prev_num_queued_ = base;
  }

  void reset(uint64_t now_ns) {
    limit_ = min_limit_;
    num_queued_ = num_completed_ = last_obj_cnt_ = prev_num_queued_ = 0;
    prev_last_obj_cnt_ = prev_ovlimit_ = 0;
    lowest_slack_ = kMod - 1;
    slack_start_time_ = jiffies(now_ns);
  }

  void queued(uint64_t count) {
    if (count > (kMod - 1) / 16) {
      return;
    }
    last_obj_cnt_ = count;
    num_queued_ = (num_queued_ + count) % kMod;
  }

  int64_t avail() const { return sdiff(adj_limit_, num_queued_); }

  void completed(uint64_t count, uint64_t now_ns) {
    if (count == 0 || count > sub(num_queued_, num_completed_)) {
      return;
    }
    const uint64_t nq = num_queued_;
    const uint64_t completed = (num_completed_ + count) % kMod;
    uint64_t limit = limit_;
    uint64_t ovlimit = posdiff(sub(nq, num_completed_), limit);
    const uint64_t inprogress = sub(nq, completed);
    const uint64_t prev_inprogress = sub(prev_num_queued_, num_completed_);
    const bool all_prev_completed = sdiff(completed, prev_num_queued_) >= 0;
    if ((ovlimit != 0 && inprogress == 0) || (prev_ovlimit_ != 0 && all_prev_completed)) {
      limit = (limit + posdiff(completed, prev_num_queued_) + prev_ovlimit_) % kMod;
      slack_start_time_ = jiffies(now_ns);
      lowest_slack_ = kMod - 1;
    } else if (inprogress != 0 && prev_inprogress != 0 && !all_prev_completed) {
      uint64_t slack =
          posdiff((limit + prev_ovlimit_) % kMod, (2 * sub(completed, num_completed_)) % kMod);
      const uint64_t last_objs =
          prev_ovlimit_ != 0 ? posdiff(prev_last_obj_cnt_, prev_ovlimit_) : 0;
      slack = std::max(slack, last_objs);
      lowest_slack_ = std::min(lowest_slack_, slack);
      const uint64_t now_j = jiffies(now_ns);
      if (sdiff((slack_start_time_ + hold_) % kMod, now_j) < 0) {
        limit = posdiff(limit, lowest_slack_);
        slack_start_time_ = now_j;
        lowest_slack_ = kMod - 1;
      }
    }
    limit = std::min(std::max(limit, min_limit_), max_limit_);
    if (limit != limit_) {
      limit_ = limit;
      ovlimit = 0;
    }
    adj_limit_ = (limit + completed) % kMod;
    prev_ovlimit_ = ovlimit;
    prev_last_obj_cnt_ = last_obj_cnt_;
    num_completed_ = completed;
    prev_num_queued_ = nq;
  }

  Dql::State as_state() const {
    auto u = [](uint64_t v) { return static_cast<uint32_t>(v); };
    Dql::State s;
    s.num_queued = u(num_queued_);
    s.adj_limit = u(adj_limit_);
    s.last_obj_cnt = u(last_obj_cnt_);
    s.limit = u(limit_);
    s.num_completed = u(num_completed_);
    s.prev_ovlimit = u(prev_ovlimit_);
    s.prev_num_queued = u(prev_num_queued_);
    s.prev_last_obj_cnt = u(prev_last_obj_cnt_);
    s.lowest_slack = u(lowest_slack_);
    s.slack_start_time = u(slack_start_time_);
    s.max_limit = u(max_limit_);
    s.min_limit = u(min_limit_);
    s.slack_hold_time = u(hold_);
    return s;
  }

 private:
  static constexpr uint64_t kMod = uint64_t{1} << 32;
  static uint64_t sub(uint64_t a, uint64_t b) { return (a + kMod - b) % kMod; }
  static int64_t sdiff(uint64_t a, uint64_t b) {
    const uint64_t d = sub(a, b);
    return d >= kMod / 2 ? static_cast<int64_t>(d) - static_cast<int64_t>(kMod)
                         : static_cast<int64_t>(d);
  }
  static uint64_t posdiff(uint64_t a, uint64_t b) { return sdiff(a, b) > 0 ? sub(a, b) : 0; }
  uint64_t jiffies(uint64_t now_ns) const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(now_ns) * hz_ / 1'000'000'000) %
           kMod;
  }

  uint64_t hz_, max_limit_, min_limit_, hold_;
  uint64_t num_queued_ = 0, adj_limit_ = 0, last_obj_cnt_ = 0, limit_ = 0, num_completed_ = 0;
  uint64_t prev_ovlimit_ = 0, prev_num_queued_ = 0, prev_last_obj_cnt_ = 0;
  uint64_t lowest_slack_ = 0, slack_start_time_ = 0;
};

TEST(Dql, DifferentialAgainstReferenceWithInvariants) {
  const std::vector<Dql::Params> param_sets = {
      Dql::Params{},
      Dql::Params{.hold_time = Duration::ms(100), .hz = 1000},
      Dql::Params{.min_limit = 3000, .max_limit = 50'000, .hold_time = Duration::ms(7), .hz = 100},
      Dql::Params{.max_limit = 0, .hz = 300},
      Dql::Params{.min_limit = 100'000, .max_limit = 100'000},
      Dql::Params{.hold_time = Duration::ms(30), .hz = 250},
  };
  for (size_t pi = 0; pi < param_sets.size(); ++pi) {
    const Dql::Params& p = param_sets[pi];
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      std::mt19937_64 rng(seed * 1000 + pi);
      const uint32_t base = seed % 2 == 0 ? static_cast<uint32_t>(rng()) : 0;
      int64_t now_ns = static_cast<int64_t>(rng() % 1'000'000'000);
      Dql d(p, Time::from_ns(now_ns), base);
      RefDql ref(p, static_cast<uint64_t>(now_ns), base);
      uint64_t my_inflight = 0;  // tracked independently, 64-bit
      for (int step = 0; step < 20'000; ++step) {
        const int r = static_cast<int>(rng() % 100);
        if (r < 45) {
          uint32_t bytes = static_cast<uint32_t>(1 + rng() % 9000);
          if (r == 0 && my_inflight < (uint64_t{1} << 30)) {
            bytes =
                static_cast<uint32_t>(rng() % (uint64_t{kDqlMaxObject} + 2));  // may be oversize
          }
          d.queued(bytes);
          ref.queued(bytes);
          if (bytes <= kDqlMaxObject) {
            my_inflight += bytes;
          }
        } else if (r < 85) {
          uint64_t count;
          const int how = static_cast<int>(rng() % 8);
          if (how == 0) {
            count = my_inflight;  // drain
          } else if (how == 1) {
            count = my_inflight + 1 + rng() % 100;  // precondition violated: ignored
          } else if (how == 2) {
            count = 0;
          } else {
            count = my_inflight == 0 ? 0 : rng() % (my_inflight + 1);
          }
          const uint32_t c = static_cast<uint32_t>(std::min<uint64_t>(count, kUMax));
          d.completed(c, Time::from_ns(now_ns));
          ref.completed(c, static_cast<uint64_t>(now_ns));
          if (c <= my_inflight) {
            my_inflight -= c;
          }
        } else if (r < 99) {
          const int scale = static_cast<int>(rng() % 3);
          now_ns += static_cast<int64_t>(rng() % (scale == 0   ? 100'000
                                                  : scale == 1 ? 20'000'000
                                                               : 600'000'000));
        } else {
          d.reset(Time::from_ns(now_ns));
          ref.reset(static_cast<uint64_t>(now_ns));
          my_inflight = 0;
        }
        ASSERT_EQ(d.state(), ref.as_state())
            << "params " << pi << " seed " << seed << " step " << step;
        ASSERT_EQ(d.avail(), ref.avail());
        ASSERT_GE(d.limit(), static_cast<uint32_t>(p.min_limit));
        ASSERT_LE(d.limit(), static_cast<uint32_t>(p.max_limit));
        ASSERT_EQ(d.inflight(), my_inflight);
      }
      expect_identity(d);
      EXPECT_GT(d.stats().completed_calls, 1000u);
    }
  }
}

}  // namespace
}  // namespace nicsim::algo
