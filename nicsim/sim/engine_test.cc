// Engine: (time, sequence) ordering, no going back in time, Wakeup re-keying in place, and the
// indexed heap against a reference (a sorted multiset of keys) under random operations.
#include "nicsim/sim/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <tuple>
#include <vector>

namespace nicsim::sim {
namespace {

struct Recorder : Process {
  std::vector<std::pair<int64_t, uint64_t>> seen;
  void on_event(Time now, uint64_t tag) override { seen.emplace_back(now.ns_since_epoch(), tag); }
};

TEST(Engine, OrdersByTimeThenInsertion) {
  Engine e;
  Recorder r;
  e.schedule(Time::from_ns(20), &r, 1);
  e.schedule(Time::from_ns(10), &r, 2);
  e.schedule(Time::from_ns(20), &r, 3);
  e.schedule(Time::from_ns(10), &r, 4);
  e.run_until(Time::max());
  EXPECT_EQ(r.seen,
            (std::vector<std::pair<int64_t, uint64_t>>{{10, 2}, {10, 4}, {20, 1}, {20, 3}}));
  EXPECT_EQ(e.stats().executed, 4u);
}

TEST(Engine, RunUntilStopsAndAdvancesClock) {
  Engine e;
  Recorder r;
  e.schedule(Time::from_ns(5), &r, 1);
  e.schedule(Time::from_ns(50), &r, 2);
  e.run_until(Time::from_ns(30));
  EXPECT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(e.now(), Time::from_ns(30));
  // An event scheduled in the past runs now, never earlier.
  e.schedule(Time::from_ns(1), &r, 3);
  e.run_until(Time::from_ns(40));
  EXPECT_EQ(r.seen.back(), (std::pair<int64_t, uint64_t>{30, 3}));
  e.run_until(Time::max());
  EXPECT_EQ(r.seen.back(), (std::pair<int64_t, uint64_t>{50, 2}));
}

TEST(Engine, WakeupKeepsOnlyTheLatestSetting) {
  Engine e;
  Recorder r;
  Engine::Wakeup w(e, &r, 7);
  w.set(Time::from_ns(100));
  w.set(Time::from_ns(40));  // supersedes 100
  w.set(Time::from_ns(40));  // no-op
  EXPECT_EQ(w.when(), Time::from_ns(40));
  EXPECT_EQ(e.pending(), 1u);  // re-keyed in place, no second entry
  EXPECT_EQ(e.stats().rescheduled, 1u);
  e.run_until(Time::max());
  EXPECT_EQ(r.seen, (std::vector<std::pair<int64_t, uint64_t>>{{40, 7}}));
  EXPECT_EQ(w.when(), std::nullopt);
  EXPECT_TRUE(e.empty());
  w.set(Time::from_ns(60));
  w.set(std::nullopt);  // cancelled
  e.run_until(Time::max());
  EXPECT_EQ(r.seen.size(), 1u);
}

struct SelfRescheduler : Process {
  Engine* e = nullptr;
  int remaining = 0;
  void on_event(Time now, uint64_t tag) override {
    if (--remaining > 0) {
      e->schedule(now + Duration::ns(static_cast<int64_t>(tag % 7) + 1), this, tag * 31 + 1);
    }
  }
};

TEST(Engine, DeterministicAcrossRuns) {
  auto run = [] {
    Engine e;
    std::vector<SelfRescheduler> ps(10);
    for (size_t i = 0; i < ps.size(); ++i) {
      ps[i].e = &e;
      ps[i].remaining = 1000;
      e.schedule(Time::zero(), &ps[i], i);
    }
    e.run_until(Time::max());
    return std::make_pair(e.now(), e.stats().executed);
  };
  EXPECT_EQ(run(), run());
  EXPECT_EQ(run().second, 10'000u);
}

// A Wakeup set again from its own on_event (the host pattern) keeps the (time, sequence)
// order: a setting made later runs after events scheduled earlier for the same time.
struct Refiring : Process {
  Engine* e = nullptr;
  std::unique_ptr<Engine::Wakeup> w;
  std::vector<std::pair<int64_t, uint64_t>>* log = nullptr;
  int remaining = 0;
  void on_event(Time now, uint64_t tag) override {
    log->emplace_back(now.ns_since_epoch(), tag);
    if (--remaining > 0) {
      w->set(now + Duration::ns(remaining % 2 == 0 ? 0 : 10));
    }
  }
};

struct Logger : Process {
  std::vector<std::pair<int64_t, uint64_t>>* out = nullptr;
  void on_event(Time now, uint64_t tag) override { out->emplace_back(now.ns_since_epoch(), tag); }
};

TEST(Engine, WakeupSetFromItsOwnEventRunsAfterEarlierSameTimeEvents) {
  Engine e;
  std::vector<std::pair<int64_t, uint64_t>> log;
  Logger r;
  r.out = &log;
  Refiring f;
  f.e = &e;
  f.log = &log;
  f.remaining = 3;
  f.w = std::make_unique<Engine::Wakeup>(e, &f, 9);
  f.w->set(Time::from_ns(10));
  e.schedule(Time::from_ns(10), &r, 1);  // scheduled after the wakeup's first setting
  e.run_until(Time::max());
  // 10: wakeup (set first), then the plain event; the wakeup re-set to 10 runs after it even
  // though its entry never left the heap; then +10 ns.
  EXPECT_EQ(log, (std::vector<std::pair<int64_t, uint64_t>>{{10, 9}, {10, 1}, {10, 9}, {20, 9}}));
  EXPECT_TRUE(e.empty());
}

TEST(Engine, WakeupCancelledWhileFiringLeavesNoEntry) {
  struct CancelSelf : Process {
    std::unique_ptr<Engine::Wakeup> w;
    int fired = 0;
    void on_event(Time now, uint64_t) override {
      ++fired;
      w->set(now + Duration::ns(5));
      w->set(std::nullopt);
    }
  };
  Engine e;
  CancelSelf c;
  c.w = std::make_unique<Engine::Wakeup>(e, &c, 0);
  c.w->set(Time::from_ns(1));
  e.run_until(Time::max());
  EXPECT_EQ(c.fired, 1);
  EXPECT_TRUE(e.empty());
}

// Random schedules, Wakeup settings and cancellations against a reference model: every event
// must come out in (time, sequence) order, exactly once, and only if still wanted.
TEST(Engine, IndexedHeapMatchesReferenceOrder) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 20; ++round) {
    Engine e;
    std::vector<std::pair<int64_t, uint64_t>> got;
    Logger sink;
    sink.out = &got;
    constexpr size_t kWakeups = 37;
    std::vector<std::unique_ptr<Engine::Wakeup>> ws;
    for (size_t i = 0; i < kWakeups; ++i) {
      ws.push_back(std::make_unique<Engine::Wakeup>(e, &sink, 1'000'000 + i));
    }
    // Reference: (time, seq, tag) of pending entries; a wakeup's entry is replaced on set.
    std::set<std::tuple<int64_t, uint64_t, uint64_t>> ref;
    std::vector<std::optional<std::tuple<int64_t, uint64_t, uint64_t>>> wref(kWakeups);
    uint64_t seq = 0;
    uint64_t tag = 0;
    for (int op = 0; op < 3000; ++op) {
      const int64_t t = static_cast<int64_t>(rng() % 500);
      switch (rng() % 4) {
        case 0:
        case 1:
          e.schedule(Time::from_ns(t), &sink, tag);
          ref.insert({t, seq++, tag++});
          break;
        case 2: {
          const size_t i = rng() % kWakeups;
          if (wref[i] && std::get<0>(*wref[i]) == t) {
            ws[i]->set(Time::from_ns(t));  // same time: no change
            break;
          }
          if (wref[i]) {
            ref.erase(*wref[i]);
          }
          ws[i]->set(Time::from_ns(t));
          wref[i] = std::make_tuple(t, seq++, uint64_t{1'000'000 + i});
          ref.insert(*wref[i]);
          break;
        }
        default: {
          const size_t i = rng() % kWakeups;
          ws[i]->set(std::nullopt);
          if (wref[i]) {
            ref.erase(*wref[i]);
            wref[i].reset();
          }
        }
      }
      ASSERT_EQ(e.pending(), ref.size());
    }
    e.run_until(Time::max());
    std::vector<std::pair<int64_t, uint64_t>> want;
    for (const auto& [t, s, g] : ref) {
      want.emplace_back(t, g);
    }
    EXPECT_EQ(got, want) << "round " << round;
  }
}

}  // namespace
}  // namespace nicsim::sim
